"""Compiled numeric kernels: numba ``@njit(cache=True, nogil=True)`` over the flat factor
buffers. The kernels release the GIL, so factorizations of different matrices run in parallel
from Python threads (one :class:`~graphsolve.Factorization` per thread: a factorization's
buffers are not shared safely).

Same Python-level signatures and results as :mod:`graphsolve.kernels.reference` (which reads
like the papers), so a parametrized test fixture runs every numeric test on both. The loops are
the same (Brüdigam et al. 2023, Alg. 3-4, with the update schedule of the analysis); the small
dense block operations (products, LU with partial pivoting, triangular solves;
:mod:`graphsolve.kernels.blocks`) are written out as loops, which beats BLAS calls for blocks of
a few rows. Nothing is allocated per block: the
caller passes two ``max_size²`` work buffers.

Pivot factors use the LAPACK convention (``getrf``: ``P D = L U`` with ``piv`` the 0-based row
swap applied at step ``k``), and the singularity rule is the shared
:data:`~graphsolve.kernels.reference.PIVOT_RTOL` rule. An LDLᵀ pivot block that is definite (all
of them for a quasi-definite matrix) is factored ``M Δ Mᵀ`` without pivoting instead, marked by
``piv = -1`` at the block's first row (:func:`_ldl_inplace`).

Where the speed comes from (``python -m comparisons run``; see the README for numbers): the
values are loaded inside the factor kernel, in one pass of straight copies over raw offsets
(:func:`_gather`), or for an LDLᵀ tree of 6×6 blocks read where they are used
(:func:`_factor_tree6`); uniform 6×6 blocks use the vectorized block operations of
:mod:`graphsolve.kernels.simd`, and products and triangular solves with six columns elsewhere
keep a row of the result in six scalars (:func:`_rows6`, :func:`_sweep_rows6`); kernels are
compiled per block size (3, 6 and the KKT pairs) and, for one right-hand side, per solve shape;
LDLᵀ keeps ``L D`` of each pair so a fill update is one block product.
"""

from __future__ import annotations

import math

import numpy as np
from numba import get_num_threads, get_thread_id, literally, njit, prange

from . import supernodal
from .blocks import (
    _FAST,
    _finish_definite,
    _finish_lu,
    _finish_pivot,
    _ldl_solve_left,
    _ldl_solve_vec,
    _lu_solve_left,
    _lu_solve_trans_left,
    _lu_solve_vec,
    _matmul,
    _matvec_sub,
    _sub_matmul,
)
from .reference import PIVOT_RTOL
from .simd import (
    ldlt_pair6,
    ldlt_pair6_sym,
    matvec6_sub,
    matvec6t_sub,
    mm6_sub,
    mm6t_sub,
    prefetch,
)

__all__ = ["all_finite", "factor", "refactor", "solve", "factor_batch", "solve_batch",
           "work_buffers"]

# ---------------------------------------------------------------------- kernels
def _scale_pair_py(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, FI, FC):
    """Alg. 3 lines 18-20 for the pair (i, c1): ``L = T D⁻¹``, ``U = D⁻¹ S``,
    ``D_i -= T D⁻¹ S`` (LDLᵀ: ``S = Tᵀ``). With ``implicit`` (LDU on an acyclic pattern)
    ``T`` is kept: :func:`_solve_vector` (``implicit``) applies ``L = T D⁻¹`` on the fly.

    LDLᵀ with ``keep`` (a pattern with update triples) keeps the unscaled ``T = L D_c`` in the
    otherwise unused ``U`` block: a triple (Alg. 3 line 14, ``T_ic1 -= L_ic2 D_c2 L_c1c2ᵀ``)
    then needs one block product instead of two (:meth:`graphsolve.Analysis.flops` counts it
    so).

    ``FI``, ``FC`` > 0 fix ``si``, ``sc`` (literal sizes: fixed trip counts; ``0``: generic).
    Two compiled forms of this one function:

    - :func:`_scale_pair_inline` (numba IR inlining; the fastest code, ~15 % faster on a
      path than a call) at the single call site of :func:`_factor`;
    - :func:`_scale_pair`, compiled once per pair of literal sizes and inlined by LLVM
      (``forceinline``), at the three call sites of :func:`_factor_pair`.

    numba's IR inlining re-processes the callee and its nested helpers at every call site;
    inlining it at all three sites of every pair kernel made the cold compilation of the
    dynamics' kernels take minutes."""
    if FI > 0:
        si = FI
    if FC > 0:
        sc = FC
    scale_t = symmetric or not implicit
    if keep:                                                # LDLᵀ only
        for q in range(si * sc):
            S[q] = T[q]
    if FI == 6 and FC == 6 and symmetric and piv_c[0] < 0:  # all in registers (simd.py)
        ldlt_pair6(T, 0, T, 0, Di, 0, Di, 0, lu_c, 0)
        return
    if scale_t:                                             # w2 = (T D⁻¹)ᵀ = D⁻ᵀ Tᵀ
        for r in range(si):
            for c in range(sc):
                w2[c * si + r] = T[r * sc + c]
        if piv_c[0] < 0:                                    # definite LDLᵀ pivot: M Δ Mᵀ
            _ldl_solve_left(lu_c, sc, w2, si)
        else:
            _lu_solve_trans_left(lu_c, piv_c, sc, w2, si)
    if symmetric:                                           # D⁻¹ S = (T D⁻¹)ᵀ
        V = w2
    else:
        _lu_solve_left(lu_c, piv_c, sc, S, si)              # U = D⁻¹ S
        V = S
    if FI == 6 and FC == 6:                                 # D_i -= T D⁻¹ S
        mm6_sub(Di, 0, T, 0, V, 0)
    else:
        _sub_matmul(Di, T, V, si, sc, si, False)
    if scale_t:                                             # L = T D⁻¹
        for r in range(si):
            for c in range(sc):
                T[r * sc + c] = w2[c * si + r]


#: :func:`_scale_pair_py` compiled per literal size pair, inlined by LLVM
_scale_pair = njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST, forceinline=True)(
    _scale_pair_py)
#: :func:`_scale_pair_py` inlined by numba (one site per kernel)
_scale_pair_inline = njit(error_model="numpy", fastmath=_FAST, inline="always")(_scale_pair_py)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _gather(sym, D, L, U, symmetric, gat, BS):
    """Load the factor buffers from the matrix's flat ``values`` in one pass of straight copies
    (the diagonal section holds the blocks by node, ``D`` in elimination order at ``d_ptr``;
    each pair's blocks are contiguous runs at ``lsrc``/``usrc``, -1 for fill). LDLᵀ does not
    load ``U``: each upper block is compared with its lower block's transpose instead (as are
    the two triangles of each diagonal block); returns the squared difference (0 for LDU).
    ``BS`` > 0: uniform BS×BS blocks.

    A pass of its own beats loading each block when the elimination first reaches it: these
    loops over raw offsets run near memory speed, while a slice copy per block cost more than
    the whole pass (path 2000, 6×6 LDLᵀ refactor: 675 → 625 µs; KKT 6/5: -5 %)."""
    literally(BS)
    order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, _, _, _ = sym
    values, lsrc, usrc = gat
    sq = 0.0
    src = 0
    for i in range(sizes.size):                 # A's diagonal section: by node
        si = sizes[i] if BS == 0 else BS
        d0 = d_ptr[i]
        for q in range(si * si):
            D[d0 + q] = values[src + q]
        if symmetric:
            for r in range(si):
                for c in range(r + 1, si):
                    d = values[src + r * si + c] - values[src + c * si + r]
                    sq += d * d
        src += si * si
    for k in range(order.size):
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        for e in range(child_ptr[k], child_ptr[k + 1]):
            f0 = fe_ptr[e]
            ln = fe_ptr[e + 1] - f0 if BS == 0 else BS * BS
            ls = lsrc[e]
            us = usrc[e]
            if ls >= 0:
                for q in range(ln):
                    L[f0 + q] = values[ls + q]
            else:
                for q in range(ln):
                    L[f0 + q] = 0.0
            if symmetric:
                if us >= 0:                 # A_ci (sc × si) against A_icᵀ
                    sc = sizes[fe_child[e]] if BS == 0 else BS
                    for r in range(sc):
                        for q in range(si):
                            d = values[us + r * si + q] - L[f0 + q * sc + r]
                            sq += d * d
            elif us >= 0:
                for q in range(ln):
                    U[f0 + q] = values[us + q]
            else:
                for q in range(ln):
                    U[f0 + q] = 0.0
    return sq


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, BS, implicit, gat):
    """Alg. 3 over the flat buffers; ``sym`` packs the analysis arrays (:func:`_sym`).
    ``BS`` > 0 says every block is BS×BS: compiled as a constant (through the ``_factor_BS``
    entry points), the inlined small loops get fixed trip counts; ``BS = 0`` is generic.

    ``gat = (values, lsrc, usrc)``: the kernel first loads the buffers from the matrix's flat
    ``values`` (:func:`_gather`); empty ``values``: the buffers are preloaded.
    Returns ``(status, scalings, updates, squared asymmetry of the loaded values)``."""
    literally(BS)
    order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, sched_ptr, sched_ic2, \
        sched_c1c2 = sym
    keep = symmetric and sched_ptr[sched_ptr.size - 1] > 0      # see _scale_pair
    n_updates = 0
    n_scalings = 0
    sq = _gather(sym, D, L, U, symmetric, gat, BS) if gat[0].size > 0 else 0.0
    for k in range(order.size):
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        Di = D[d_ptr[i]:d_ptr[i] + si * si]
        for e in range(child_ptr[k], child_ptr[k + 1]):
            c1 = fe_child[e]
            sc = sizes[c1] if BS == 0 else BS
            T = L[fe_ptr[e]:fe_ptr[e + 1]]
            S = U[fe_ptr[e]:fe_ptr[e + 1]]
            for t in range(sched_ptr[e], sched_ptr[e + 1]):         # Alg. 3 lines 8-15
                e_ic2 = sched_ic2[t]
                e_c1c2 = sched_c1c2[t]
                c2 = fe_child[e_ic2]
                s2 = sizes[c2] if BS == 0 else BS
                Dc2 = D[d_ptr[c2]:d_ptr[c2] + s2 * s2]
                L_ic2 = L[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]]
                L_c1c2 = L[fe_ptr[e_c1c2]:fe_ptr[e_c1c2 + 1]]
                if symmetric and BS == 6:                           # simd.py
                    mm6t_sub(L, fe_ptr[e], U, fe_ptr[e_ic2], L, fe_ptr[e_c1c2])
                elif symmetric:         # T -= (L_ic2 D_c2) L_c1c2ᵀ, L_ic2 D_c2 kept in U
                    _sub_matmul(T, U[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]], L_c1c2, si, s2, sc, True)
                elif BS == 6:
                    _matmul(L_ic2, Dc2, w1, si, s2, s2)
                    mm6_sub(L, fe_ptr[e], w1, 0, U, fe_ptr[e_c1c2])
                    _matmul(L_c1c2, Dc2, w1, sc, s2, s2)
                    mm6_sub(U, fe_ptr[e], w1, 0, U, fe_ptr[e_ic2])
                else:
                    _matmul(L_ic2, Dc2, w1, si, s2, s2)             # L_ic2 D_c2
                    _sub_matmul(T, w1, U[fe_ptr[e_c1c2]:fe_ptr[e_c1c2 + 1]], si, s2, sc, False)
                    _matmul(L_c1c2, Dc2, w1, sc, s2, s2)
                    _sub_matmul(S, w1, U[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]], sc, s2, si, False)
                n_updates += 1
            _scale_pair_inline(T, S, Di, Dlu[d_ptr[c1]:d_ptr[c1] + sc * sc],
                               piv[x_ptr[c1]:x_ptr[c1 + 1]], si, sc, symmetric, w2, implicit,
                               keep, BS, BS)
            n_scalings += 1
        if not _finish_pivot(Di, Dlu[d_ptr[i]:d_ptr[i] + si * si], piv[x_ptr[i]:x_ptr[i + 1]], si,
                             symmetric, rtol):
            return k, n_scalings, n_updates, sq
    return -1, n_scalings, n_updates, sq


#: How many nodes ahead the tree kernels prefetch the blocks whose address depends on the node
#: labelling (:func:`_prefetch_tree6`).
PREFETCH_NODES = 4


@njit(error_model="numpy", inline="always")
def _prefetch_tree6(order, fe_child, child_ptr, d_ptr, piv, values, lsrc, usrc, k):
    """Prefetch what :func:`_factor_tree6` reads at position ``k`` by node id: ``A_ii`` and
    the child pairs' value blocks (36 values: five cache lines each), and the child's pivot
    marker and offset. On a random labelling these are cache misses in a chain of dependent
    pivot factors (random tree, 2·10⁵ nodes: about 2.9× the per-node time of 2000 nodes)."""
    a0 = 36 * order[k]
    prefetch(piv, 6 * order[k])
    for q in range(0, 40, 8):
        prefetch(values, a0 + min(q, 35))
    for e in range(child_ptr[k], child_ptr[k + 1]):
        c = fe_child[e]
        prefetch(piv, 6 * c)
        prefetch(d_ptr, c)
        for src in (lsrc[e], usrc[e]):
            if src >= 0:
                for q in range(0, 40, 8):
                    prefetch(values, src + min(q, 35))


@njit(error_model="numpy", inline="always")
def _prefetch_x(order, fe_child, child_ptr, x, BS, k):
    """Prefetch the right-hand side blocks of the node at position ``k`` and its children
    (``x`` is indexed by node id; uniform ``BS``-blocks, one or two cache lines each)."""
    prefetch(x, BS * order[k])
    prefetch(x, BS * order[k] + BS - 1)
    for e in range(child_ptr[k], child_ptr[k + 1]):
        prefetch(x, BS * fe_child[e])
        prefetch(x, BS * fe_child[e] + BS - 1)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor_tree6(sym, D, Dlu, piv, L, U, w2, rtol, gat):
    """:func:`_factor` for LDLᵀ of uniform 6×6 blocks without update triples (trees, Alg. 1
    of Brüdigam et al. 2023: zero fill), with the load fused into the elimination.

    Instead of :func:`_gather`'s pass of copies, each pair step (:func:`.simd.ldlt_pair6`)
    reads ``T`` and, for a node's first child, ``D_i`` straight from the matrix's ``values``
    and writes ``L`` and the updated ``D_i``: no block is copied before it is used. The
    elimination of a tree is a chain of dependent pivot factors, whose latency leaves the
    load and store units idle, so these loads cost little inside it, while the separate pass
    was a fifth of a path's refactor. The symmetry of ``values`` is checked as
    :func:`_gather` does, for a pair inside the pair step (:func:`.simd.ldlt_pair6_sym`,
    on the transposed ``T`` it holds in registers: path 2000 refactor 255 → 216 µs against
    the separate strided loop). A child with an indefinite pivot (LU, ``piv >= 0``) takes
    the generic pair step on copied blocks. Same returns as :func:`_factor`."""
    order, _, d_ptr, _, fe_child, fe_ptr, child_ptr, _, _, _ = sym   # x_ptr[i] = 6 i
    values, lsrc, usrc = gat
    sq = 0.0
    n_scalings = 0
    n = order.size
    for k in range(n):
        if k + PREFETCH_NODES < n:                  # labelling-dependent addresses, ahead
            _prefetch_tree6(order, fe_child, child_ptr, d_ptr, piv, values, lsrc, usrc,
                            k + PREFETCH_NODES)
        i = order[k]
        a0 = 36 * i                                 # A_ii in values: diagonal blocks by node
        d0 = 36 * k                                 # = d_ptr[i]: D in elimination order
        for r in range(6):
            for c in range(r + 1, 6):
                d = values[a0 + r * 6 + c] - values[a0 + c * 6 + r]
                sq += d * d
        src = values                                # where D_i stands before an update
        s0 = a0
        for e in range(child_ptr[k], child_ptr[k + 1]):
            c1 = fe_child[e]
            f0 = fe_ptr[e]
            ls = lsrc[e]
            us = usrc[e]
            definite = ls >= 0 and piv[6 * c1] < 0
            if definite and us >= 0:                # all in registers, the symmetry check too
                sq += ldlt_pair6_sym(values, ls, L, f0, src, s0, D, d0, Dlu, d_ptr[c1],
                                     values, us)
            else:
                if us >= 0:                         # A_ci against A_icᵀ
                    for r in range(6):
                        for q in range(6):
                            t = values[ls + q * 6 + r] if ls >= 0 else 0.0
                            d = values[us + r * 6 + q] - t
                            sq += d * d
                if definite:
                    ldlt_pair6(values, ls, L, f0, src, s0, D, d0, Dlu, d_ptr[c1])
                else:                               # an indefinite child pivot (LU), or T = 0
                    for q in range(36):
                        L[f0 + q] = values[ls + q] if ls >= 0 else 0.0
                        D[d0 + q] = src[s0 + q]
                    _scale_pair_inline(L[f0:f0 + 36], U[f0:f0 + 36], D[d0:d0 + 36],
                                       Dlu[d_ptr[c1]:d_ptr[c1] + 36],
                                       piv[6 * c1:6 * c1 + 6], 6, 6, True, w2, False,
                                       False, 6, 6)
            src = D
            s0 = d0
            n_scalings += 1
        if child_ptr[k] == child_ptr[k + 1]:        # a leaf: D_i = A_ii
            for q in range(36):
                D[d0 + q] = values[a0 + q]
        if _finish_definite(D, Dlu, d0, 6, rtol):   # _finish_pivot, on offsets
            piv[6 * i] = -1
        elif not _finish_lu(D[d0:d0 + 36], Dlu[d0:d0 + 36], piv[6 * i:6 * i + 6], 6,
                            rtol):
            return k, n_scalings, 0, sq
    return -1, n_scalings, 0, sq


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor_pair(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, BS, BS2, implicit, gat):
    """:func:`_factor` for blocks of exactly two sizes ``BS`` > ``BS2`` (bodies and joints of a
    KKT matrix): pivots and body-joint pairs run fixed-size inlined copies, pairs of equal size
    (fill between bodies or between joints) the generic code."""
    literally(BS)
    literally(BS2)
    order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, sched_ptr, sched_ic2, \
        sched_c1c2 = sym
    keep = symmetric and sched_ptr[sched_ptr.size - 1] > 0      # see _scale_pair
    n_updates = 0
    n_scalings = 0
    sq = _gather(sym, D, L, U, symmetric, gat, 0) if gat[0].size > 0 else 0.0
    for k in range(order.size):
        i = order[k]
        si = sizes[i]
        Di = D[d_ptr[i]:d_ptr[i] + si * si]
        for e in range(child_ptr[k], child_ptr[k + 1]):
            c1 = fe_child[e]
            sc = sizes[c1]
            T = L[fe_ptr[e]:fe_ptr[e + 1]]
            S = U[fe_ptr[e]:fe_ptr[e + 1]]
            for t in range(sched_ptr[e], sched_ptr[e + 1]):         # Alg. 3 lines 8-15
                e_ic2 = sched_ic2[t]
                e_c1c2 = sched_c1c2[t]
                c2 = fe_child[e_ic2]
                s2 = sizes[c2]
                Dc2 = D[d_ptr[c2]:d_ptr[c2] + s2 * s2]
                L_ic2 = L[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]]
                L_c1c2 = L[fe_ptr[e_c1c2]:fe_ptr[e_c1c2 + 1]]
                if symmetric:           # T -= (L_ic2 D_c2) L_c1c2ᵀ, L_ic2 D_c2 kept in U
                    _sub_matmul(T, U[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]], L_c1c2, si, s2, sc, True)
                else:
                    _matmul(L_ic2, Dc2, w1, si, s2, s2)             # L_ic2 D_c2
                    _sub_matmul(T, w1, U[fe_ptr[e_c1c2]:fe_ptr[e_c1c2 + 1]], si, s2, sc, False)
                    _matmul(L_c1c2, Dc2, w1, sc, s2, s2)
                    _sub_matmul(S, w1, U[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]], sc, s2, si, False)
                n_updates += 1
            lu_c = Dlu[d_ptr[c1]:d_ptr[c1] + sc * sc]
            piv_c = piv[x_ptr[c1]:x_ptr[c1 + 1]]
            if si == BS and sc == BS2:
                _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, BS,
                            BS2)
            elif si == BS2 and sc == BS:
                _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, BS2,
                            BS)
            else:
                _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 0, 0)
            n_scalings += 1
        lu_i = Dlu[d_ptr[i]:d_ptr[i] + si * si]
        piv_i = piv[x_ptr[i]:x_ptr[i + 1]]
        if si == BS:
            ok = _finish_pivot(Di, lu_i, piv_i, BS, symmetric, rtol)
        else:
            ok = _finish_pivot(Di, lu_i, piv_i, BS2, symmetric, rtol)
        if not ok:
            return k, n_scalings, n_updates, sq
    return -1, n_scalings, n_updates, sq


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _unpack(ints, bounds):
    """The ``sym`` tuple of :func:`_sym` from its packed form (:func:`_pack`)."""
    return (ints[bounds[0]:bounds[1]], ints[bounds[1]:bounds[2]], ints[bounds[2]:bounds[3]],
            ints[bounds[3]:bounds[4]], ints[bounds[4]:bounds[5]], ints[bounds[5]:bounds[6]],
            ints[bounds[6]:bounds[7]], ints[bounds[7]:bounds[8]], ints[bounds[8]:bounds[9]],
            ints[bounds[9]:bounds[10]])


# Entry points called from Python: the analysis arrays arrive packed in one array (one
# argument to unbox instead of a tuple of ten; numba's dispatch costs ~0.1 µs per plain array
# argument and more inside tuples, which is most of a small refactor's fixed cost).
@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor_0(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, implicit, values,
              lsrc, usrc):
    return _factor(_unpack(ints, bounds), D, Dlu, piv, L, U, symmetric, w1, w2, rtol, 0,
                   implicit, (values, lsrc, usrc))


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor_3(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, implicit, values,
              lsrc, usrc):
    return _factor(_unpack(ints, bounds), D, Dlu, piv, L, U, symmetric, w1, w2, rtol, 3,
                   implicit, (values, lsrc, usrc))


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor_6(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, implicit, values,
              lsrc, usrc):
    sym = _unpack(ints, bounds)
    if symmetric and values.size > 0 and sym[7][sym[7].size - 1] == 0:     # no triples
        return _factor_tree6(sym, D, Dlu, piv, L, U, w2, rtol, (values, lsrc, usrc))
    return _factor(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, 6,
                   implicit, (values, lsrc, usrc))


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor_6_3(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, implicit, values,
                lsrc, usrc):
    return _factor_pair(_unpack(ints, bounds), D, Dlu, piv, L, U, symmetric, w1, w2, rtol, 6,
                        3, implicit, (values, lsrc, usrc))


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor_6_5(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, implicit, values,
                lsrc, usrc):
    return _factor_pair(_unpack(ints, bounds), D, Dlu, piv, L, U, symmetric, w1, w2, rtol, 6,
                        5, implicit, (values, lsrc, usrc))


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_bs(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
              parent_edges, Dlu, piv, L, U, x, nrhs, symmetric, BS):
    """Alg. 4 (forward, diagonal and backward sweeps); ``BS`` > 0: every block is BS×BS,
    compiled as a constant (the small loops get fixed trip counts), ``BS = 0`` generic.

    Unlike the reference (and Alg. 4 as written), the pivot solves are a pass of their own and
    the backward sweep *pushes* each finished ``x_i`` to its children (``x_c -= U_ci x_i``)
    instead of pulling from the parents. Both sweeps then read the factor blocks in storage
    order (grouped by parent), and no pivot solve sits on the sweep's chain of dependent
    updates. Solve time, 6×6 LDLᵀ: crystal 8³ (minimum degree) 584 → 438 µs, net 30² 460 →
    372, ladder 2000 -40 %, path / random tree 2000 -11 %. (``parent_ptr`` and
    ``parent_edges`` are then unused; the solve kernels keep one signature.)"""
    literally(BS)
    for k in range(order.size):                                     # Alg. 4 lines 1-6
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xi = x[x_ptr[i] * nrhs:x_ptr[i + 1] * nrhs]
        for e in range(child_ptr[k], child_ptr[k + 1]):
            c = fe_child[e]
            _sub_matmul(xi, L[fe_ptr[e]:fe_ptr[e + 1]], x[x_ptr[c] * nrhs:x_ptr[c + 1] * nrhs],
                        si, sizes[c] if BS == 0 else BS, nrhs, False)
    for k in range(order.size):                                     # D⁻¹, in order
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xi = x[x_ptr[i] * nrhs:x_ptr[i + 1] * nrhs]
        if piv[x_ptr[i]] < 0:                                       # LDLᵀ definite pivot
            _ldl_solve_left(Dlu[d_ptr[i]:d_ptr[i] + si * si], si, xi, nrhs)
        else:
            _lu_solve_left(Dlu[d_ptr[i]:d_ptr[i] + si * si], piv[x_ptr[i]:x_ptr[i + 1]], si, xi,
                           nrhs)
    for k in range(order.size - 1, -1, -1):                         # lines 7-12: x_i is
        i = order[k]                                                # final, push it
        si = sizes[i] if BS == 0 else BS
        xi = x[x_ptr[i] * nrhs:x_ptr[i + 1] * nrhs]
        for e in range(child_ptr[k + 1] - 1, child_ptr[k] - 1, -1):
            c = fe_child[e]
            sc = sizes[c] if BS == 0 else BS
            xc = x[x_ptr[c] * nrhs:x_ptr[c + 1] * nrhs]
            blk = fe_ptr[e]
            if symmetric:                       # U_ci = L_icᵀ, L_ic stored (si × sc)
                for q in range(si):             # rows of L_ic: contiguous inner loops
                    for j in range(nrhs):
                        f = xi[q * nrhs + j]
                        for r in range(sc):
                            xc[r * nrhs + j] -= L[blk + q * sc + r] * f
            else:
                _sub_matmul(xc, U[blk:fe_ptr[e + 1]], xi, sc, si, nrhs, False)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
           parent_edges, Dlu, piv, L, U, x, nrhs, symmetric):
    _solve_bs(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
              parent_edges, Dlu, piv, L, U, x, nrhs, symmetric, 0)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_3(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
             parent_edges, Dlu, piv, L, U, x, nrhs, symmetric):
    _solve_bs(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
              parent_edges, Dlu, piv, L, U, x, nrhs, symmetric, 3)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_6(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
             parent_edges, Dlu, piv, L, U, x, nrhs, symmetric):
    _solve_bs(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
              parent_edges, Dlu, piv, L, U, x, nrhs, symmetric, 6)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST, inline="always")
def _sub_sized(y, M, z, m, n, BS, BS2):
    """``y -= M z`` for an ``m×n`` block, with fixed sizes when (m, n) is the pair (BS, BS2)
    either way round, or BS×BS when ``BS2 = 0`` (uniform sizes; ``BS = 0``: generic)."""
    if BS == 6 and BS2 == 0:
        matvec6_sub(y, 0, M, 0, z, 0)                               # simd.py
    elif BS > 0 and BS2 == 0:
        _matvec_sub(y, M, z, BS, BS)
    elif BS2 > 0 and m == BS and n == BS2:
        _matvec_sub(y, M, z, BS, BS2)
    elif BS2 > 0 and m == BS2 and n == BS:
        _matvec_sub(y, M, z, BS2, BS)
    else:
        _matvec_sub(y, M, z, m, n)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST, inline="always")
def _pivot_solve_sized(lu, pv, s, y, BS, BS2):
    """``y <- D⁻¹ y`` with the pivot's LU, fixed-size for the sizes of the pair (or the
    uniform size BS when ``BS2 = 0``)."""
    if BS > 0 and (BS2 == 0 or s == BS):
        _lu_solve_vec(lu, pv, BS, y)
    elif BS2 > 0 and s == BS2:
        _lu_solve_vec(lu, pv, BS2, y)
    else:
        _lu_solve_vec(lu, pv, s, y)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                  parent_ptr, parent_edges, Dlu, piv, L, U, x, BS, BS2, implicit):
    """:func:`_solve` for one right-hand side of an LDU factor (``symmetric=False``), with the
    block products and pivot solves of a size pair ``BS`` > ``BS2`` (bodies and joints) as
    fixed-size inlined copies (about 1.6× faster on a 100-link chain; ``BS2 = 0``: generic).

    ``implicit``: the factor of an acyclic pattern keeps ``T`` (the matrix's own lower blocks)
    instead of ``L = T D_c⁻¹`` (:func:`refactor_solve` with an implicit handle). The forward
    sweep then turns each finished ``y_c`` into ``z_c = D_c⁻¹ y_c`` at once, so that
    ``y_i -= T z_c`` equals ``y_i -= L y_c`` and the diagonal solve is done; the backward sweep
    is ``x_i = z_i - U x_p``. Same flops as the explicit solve, while the factor skips every
    ``T D⁻¹`` (a third of its work)."""
    literally(BS)
    literally(BS2)
    for k in range(order.size):                                     # Alg. 4 lines 1-6
        i = order[k]
        si = sizes[i]
        xi = x[x_ptr[i]:x_ptr[i + 1]]
        for e in range(child_ptr[k], child_ptr[k + 1]):
            c = fe_child[e]
            _sub_sized(xi, L[fe_ptr[e]:fe_ptr[e + 1]], x[x_ptr[c]:x_ptr[c + 1]], si, sizes[c],
                       BS, BS2)
        if implicit:
            _pivot_solve_sized(Dlu[d_ptr[i]:d_ptr[i] + si * si], piv[x_ptr[i]:x_ptr[i + 1]], si, xi,
                               BS, BS2)
    if not implicit:
        for k in range(order.size):                                 # D⁻¹, in order
            i = order[k]
            si = sizes[i]
            _pivot_solve_sized(Dlu[d_ptr[i]:d_ptr[i] + si * si], piv[x_ptr[i]:x_ptr[i + 1]], si,
                               x[x_ptr[i]:x_ptr[i + 1]], BS, BS2)
    for k in range(order.size - 1, -1, -1):                         # lines 7-12: x_i is
        i = order[k]                                                # final, push it
        xi = x[x_ptr[i]:x_ptr[i + 1]]
        for e in range(child_ptr[k + 1] - 1, child_ptr[k] - 1, -1):
            c = fe_child[e]
            _sub_sized(x[x_ptr[c]:x_ptr[c + 1]], U[fe_ptr[e]:fe_ptr[e + 1]], xi, sizes[c],
                       sizes[i], BS, BS2)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_sym_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                      parent_ptr, parent_edges, Dlu, piv, L, x, BS):
    """:func:`_solve` for one right-hand side of an LDLᵀ factor: ``U_ip = L_piᵀ`` applied as
    row updates (contiguous), the pivot solves by the definite (``M Δ Mᵀ``) or LU form; ``BS``
    > 0: every block is BS×BS (fixed trip counts; the offsets ``x_ptr[i] = BS i`` and
    ``d_ptr[order[k]] = BS² k`` are computed, not looked up: on a large tree in random
    labels each lookup was a cache miss), ``BS = 0`` generic."""
    literally(BS)
    n = order.size
    for k in range(n):                                              # Alg. 4 lines 1-6
        if BS > 0 and k + PREFETCH_NODES < n:    # x by node id: prefetched (random labels)
            _prefetch_x(order, fe_child, child_ptr, x, BS, k + PREFETCH_NODES)
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xo = x_ptr[i] if BS == 0 else BS * i
        for e in range(child_ptr[k], child_ptr[k + 1]):
            c = fe_child[e]
            co = x_ptr[c] if BS == 0 else BS * c
            if BS == 6:                                             # simd.py
                matvec6_sub(x, xo, L, fe_ptr[e], x, co)
            else:
                sc = sizes[c] if BS == 0 else BS
                _matvec_sub(x[xo:xo + si], L[fe_ptr[e]:fe_ptr[e + 1]], x[co:co + sc], si, sc)
    for k in range(n):                                              # D⁻¹, in order
        if BS > 0 and k + PREFETCH_NODES < n:
            prefetch(x, BS * order[k + PREFETCH_NODES])
            prefetch(piv, BS * order[k + PREFETCH_NODES])
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xo = x_ptr[i] if BS == 0 else BS * i
        xi = x[xo:xo + si]
        do = d_ptr[i] if BS == 0 else BS * BS * k
        lu = Dlu[do:do + si * si]
        if piv[xo] < 0:
            _ldl_solve_vec(lu, si, xi)
        else:
            _lu_solve_vec(lu, piv[xo:xo + si], si, xi)
    for k in range(n - 1, -1, -1):                                  # lines 7-12: x_i is
        if BS > 0 and k >= PREFETCH_NODES:                          # final, push it (_solve_bs)
            _prefetch_x(order, fe_child, child_ptr, x, BS, k - PREFETCH_NODES)
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xo = x_ptr[i] if BS == 0 else BS * i
        for e in range(child_ptr[k + 1] - 1, child_ptr[k] - 1, -1):
            c = fe_child[e]
            co = x_ptr[c] if BS == 0 else BS * c
            if BS == 6:                                             # simd.py
                matvec6t_sub(x, co, L, fe_ptr[e], x, xo)
                continue
            sc = sizes[c] if BS == 0 else BS
            blk = fe_ptr[e]
            for q in range(si):                 # x_c -= L_icᵀ x_i, row by row of L_ic
                f = x[xo + q]
                for r in range(sc):
                    x[co + r] -= L[blk + q * sc + r] * f


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_sym_0(ints, bounds, Dlu, piv, L, x):
    if _poison(x) != 0.0:                           # NaN or inf in x: not solved
        return False
    order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr, \
        parent_edges = _unpack(ints, bounds)                       # see _factor_0
    _solve_sym_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                      parent_ptr, parent_edges, Dlu, piv, L, x, 0)
    return True


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_sym_3(ints, bounds, Dlu, piv, L, x):
    if _poison(x) != 0.0:                           # NaN or inf in x: not solved
        return False
    order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr, \
        parent_edges = _unpack(ints, bounds)                       # see _factor_0
    _solve_sym_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                      parent_ptr, parent_edges, Dlu, piv, L, x, 3)
    return True


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_sym_6(ints, bounds, Dlu, piv, L, x):
    if _poison(x) != 0.0:                           # NaN or inf in x: not solved
        return False
    order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr, \
        parent_edges = _unpack(ints, bounds)                       # see _factor_0
    _solve_sym_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                      parent_ptr, parent_edges, Dlu, piv, L, x, 6)
    return True


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_vec_3(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                 parent_ptr, parent_edges, Dlu, piv, L, U, x):
    _solve_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                  parent_ptr, parent_edges, Dlu, piv, L, U, x, 3, 0, False)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_vec_6(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                 parent_ptr, parent_edges, Dlu, piv, L, U, x):
    _solve_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                  parent_ptr, parent_edges, Dlu, piv, L, U, x, 6, 0, False)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_6_5(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
               parent_ptr, parent_edges, Dlu, piv, L, U, x):
    _solve_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                  parent_ptr, parent_edges, Dlu, piv, L, U, x, 6, 5, False)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_6_3(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
               parent_ptr, parent_edges, Dlu, piv, L, U, x):
    _solve_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                  parent_ptr, parent_edges, Dlu, piv, L, U, x, 6, 3, False)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_implicit_0(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                      parent_ptr, parent_edges, Dlu, piv, L, U, x):
    _solve_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                  parent_ptr, parent_edges, Dlu, piv, L, U, x, 0, 0, True)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_implicit_6_5(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                        parent_ptr, parent_edges, Dlu, piv, L, U, x):
    _solve_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                  parent_ptr, parent_edges, Dlu, piv, L, U, x, 6, 5, True)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _solve_implicit_6_3(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                        parent_ptr, parent_edges, Dlu, piv, L, U, x):
    _solve_vector(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                  parent_ptr, parent_edges, Dlu, piv, L, U, x, 6, 3, True)


# ---------------------------------------------------------------------- Python signatures
#: Block sizes that get kernels compiled with the size as a constant (unrolled small loops):
#: uniform sizes, and pairs (body, joint) of KKT matrices of rigid bodies.
SPECIALIZED_SIZES = (3, 6)
SPECIALIZED_PAIRS = ((6, 3), (6, 5))


def specialization(an) -> tuple[int, int]:
    """``(BS, 0)`` if every block is BS×BS and BS is specialized, ``(BS, BS2)`` for a
    specialized pair of sizes, else ``(0, 0)`` (the generic kernel)."""
    size = an.uniform_block_size
    if size:
        return (size, 0) if size in SPECIALIZED_SIZES else (0, 0)
    pair = an.size_pair
    return pair if pair in SPECIALIZED_PAIRS else (0, 0)



def work_buffers(an) -> tuple:
    """Two work buffers of ``max_size²`` for :func:`factor` (allocated once per
    factorization), and a cache for the supernodal plan (:func:`_supernodal_plan`)."""
    m = int(an.block_sizes.max())
    return np.empty(m * m), np.empty(m * m), {}


#: An LDLᵀ factor uses the supernodal kernel (:mod:`graphsolve.kernels.supernodal`) when its
#: analysis counts at least this many flops per node and at least the share
#: ``SUPERNODAL_MIN_WIDE_SHARE`` of its ``R × R`` update work falls in wide supernodes.
SUPERNODAL_MIN_FLOPS_PER_NODE = 25_000
SUPERNODAL_MIN_WIDE_SHARE = 0.3


#: uniform block sizes with a vectorized 6×6 block kernel (:mod:`graphsolve.kernels.simd`),
#: which beats the supernodal kernel until the factor's work is large: they switch only from
#: :data:`SUPERNODAL_VECTORIZED_MIN_FLOPS` LDLᵀ flops on. Measured, refactor, block /
#: supernodal (with the BLAS R × R update), ordering auto (nested dissection): crystal 12³
#: (1.1e9 flops) 60 / 73 ms, 100² grid (2.3e9) 146 / 175, crystal 14³ (3.0e9) 182 / 159,
#: 150² grid (6.9e9) 487 / 449, crystal 16³ 473 / 329, 200² grid 1430 / 1035, crystal 22³
#: 6315 / 2753.
SUPERNODAL_EXCLUDED_SIZES = frozenset({6})
SUPERNODAL_VECTORIZED_MIN_FLOPS = 2.6e9


def use_supernodal(an, work) -> bool:
    """Whether an LDLᵀ factor of ``an`` runs the supernodal kernel: patterns with much fill
    (many flops per node) with wide supernodes, like grids and crystals under minimum degree,
    and, for blocks with a vectorized kernel (:data:`SUPERNODAL_EXCLUDED_SIZES`), only large
    factors (:data:`SUPERNODAL_VECTORIZED_MIN_FLOPS`).

    Measured before the 6×6 kernel was vectorized (6×6 blocks, refactor, supernodal / block
    kernel): crystal 8³ 0.53, crystal 6³ 0.82, net 30² 0.88, net 18² 0.90 under minimum
    degree; but net 12² 1.7, crystal 4³ 1.6 and ladders 3× (too little work per panel), and
    0.9-1.1 under the Brüdigam order (no wide supernodes), which therefore keeps the block
    kernel. With 3×3 blocks it still wins where the rule picks it (crystal 8³: 0.47)."""
    if an.uniform_block_size in SUPERNODAL_EXCLUDED_SIZES and \
            an.flops("ldlt") < SUPERNODAL_VECTORIZED_MIN_FLOPS:
        return False
    if not (an.n_updates > 0
            and an.flops("ldlt") >= SUPERNODAL_MIN_FLOPS_PER_NODE * an.n_nodes):
        return False
    return _supernodal_plan(an, work)[2] >= SUPERNODAL_MIN_WIDE_SHARE


def _kernel_for(an, work, symmetric) -> tuple:
    """``(supernodal?, block kernel, packed analysis arrays, block counts of a complete
    factorization)`` for a refactor, looked up once per factorization and method (cached in
    its work buffers: a small refactor's Python overhead is part of what it costs)."""
    cache = work[2] if len(work) > 2 else {}
    key = ("kernel", bool(symmetric))
    hit = cache.get(key)
    if hit is None:
        sn = bool(symmetric) and use_supernodal(an, work)
        packed = (None, None) if sn else _pack(an)  # the supernodal kernel needs no triples
        hit = cache[key] = (sn, _FACTOR[specialization(an)], *packed, {})
    return hit


def _supernodal_plan(an, work) -> tuple:
    """:func:`graphsolve.kernels.supernodal.plan`, made once per factorization (cached in its
    work buffers)."""
    cache = work[2] if len(work) > 2 else {}
    if "supernodal" not in cache:
        cache["supernodal"] = supernodal.plan(an)
    return cache["supernodal"]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _factor_sn(sym, sn, D, Dlu, piv, L, U, rtol, scratch, gat):
    """:func:`graphsolve.kernels.supernodal.factor_supernodal` after the load of
    :func:`_gather` (``gat`` as for :func:`_factor`); returns ``(status, asymmetry)``."""
    sq = _gather(sym, D, L, U, True, gat, 0) if gat[0].size > 0 else 0.0
    return supernodal.factor_supernodal(sym, sn, D, Dlu, piv, L, rtol, scratch), sq


def _factor_supernodal(an, gat, D, Dlu, piv, L, U, work, rtol) -> tuple:
    """Factor with the supernodal kernel; the block counts are those of the block kernel,
    which does the same pairs and update triples (all of them, or up to a failed pivot)."""
    sn, scratch, _ = _supernodal_plan(an, work)
    none = np.zeros(0, np.int64)                # the update triples are never listed
    sym = (an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_child, an.fe_ptr, an.child_ptr,
           none, none, none)        # the update counts are not needed either (computed lazily)
    status, sq = _factor_sn(sym, sn, D, Dlu, piv, L, U, float(rtol), scratch, gat)
    if status < 0:
        return status, int(an.child_ptr[-1]), an.n_updates, sq
    scalings = int(an.child_ptr[status + 1])
    return status, scalings, int(an.sched_ptr[scalings]), sq


def _sym(an) -> tuple:
    return (an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_child, an.fe_ptr, an.child_ptr,
            an.sched_ptr, an.sched_ic2, an.sched_c1c2)


def _solve_arrays(an) -> tuple:
    return (an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_parent, an.fe_child, an.fe_ptr,
            an.child_ptr, an.parent_ptr, an.parent_edges)


def _pack(an, arrays=_sym) -> tuple[np.ndarray, np.ndarray]:
    """The analysis arrays of ``arrays(an)`` (:func:`_sym` or :func:`_solve_arrays`)
    concatenated (int64) and the bounds of each: the form the kernels' Python entry points
    take (:func:`_unpack`). Made once per analysis and kept in its
    :attr:`~graphsolve.Analysis.backend_cache`."""
    key = "compiled_pack_" + arrays.__name__
    hit = an.backend_cache.get(key)
    if hit is None:
        parts = arrays(an)
        bounds = np.zeros(len(parts) + 1, dtype=np.int64)
        bounds[1:] = np.cumsum([a.size for a in parts])
        hit = an.backend_cache[key] = (
            np.concatenate([np.asarray(a, dtype=np.int64) for a in parts]), bounds)
        if arrays is _sym:                     # the triples, kept once: the analysis' own
            an.share_schedule(*(hit[0][bounds[t]:bounds[t + 1]] for t in (8, 9)))  # lists
    return hit


#: ``(values, lsrc, usrc)`` for buffers loaded beforehand (:func:`_factor`)
_NO_GATHER = (np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64))

_SOLVE_PAIR = {(6, 3): _solve_6_3, (6, 5): _solve_6_5, (3, 0): _solve_vec_3,
               (6, 0): _solve_vec_6}      # LDU, one right-hand side
_SOLVE_UNIFORM = {(3, 0): _solve_3, (6, 0): _solve_6}
_SOLVE_SYM = {(3, 0): _solve_sym_3, (6, 0): _solve_sym_6}
_FACTOR = {(0, 0): _factor_0, (3, 0): _factor_3, (6, 0): _factor_6, (6, 3): _factor_6_3,
           (6, 5): _factor_6_5}


def factor(an, D, Dlu, piv, L, U, symmetric: bool, work=None, rtol: float = PIVOT_RTOL
           ) -> tuple[int, dict]:
    """Compiled :func:`graphsolve.kernels.reference.factor` (same arguments and results)."""
    work = work if work is not None else work_buffers(an)
    if symmetric and use_supernodal(an, work):
        status, scalings, updates, _ = _factor_supernodal(an, _NO_GATHER, D, Dlu, piv, L, U, work,
                                                          rtol)
    else:
        status, scalings, updates, _ = _FACTOR[specialization(an)](
            *_pack(an), D, Dlu, piv, L, U, bool(symmetric), work[0], work[1], float(rtol), False,
            *_NO_GATHER)
    return int(status), _counts(an, status, scalings, updates)


def _counts(an, status, scalings, updates) -> dict:
    pivots = an.n_nodes if status < 0 else int(status) + 1
    return {"pivots": pivots, "scalings": int(scalings), "updates": int(updates)}


def refactor(an, values, gmap, D, Dlu, piv, L, U, symmetric: bool, work=None,
             rtol: float = PIVOT_RTOL) -> tuple[int, dict, bool, bool]:
    """Compiled :func:`graphsolve.kernels.reference.refactor`: the load is part of the factor
    kernel (:func:`_gather`, through ``gat``), so the values are read once. ``finite`` needs no pass
    of its own on success: every value enters some pivot block (LDU: ``D_i -= T D⁻¹ S``;
    LDLᵀ: the upper blocks through the symmetry sum), whose finiteness the factor checks."""
    work = work if work is not None else work_buffers(an)
    supernodal_, kernel, ints, bounds, done = _kernel_for(an, work, symmetric)
    if supernodal_:
        status, scalings, updates, sq = _factor_supernodal(
            an, (values, gmap.lsrc, gmap.usrc), D, Dlu, piv, L, U, work, rtol)
    else:
        status, scalings, updates, sq = kernel(
            ints, bounds, D, Dlu, piv, L, U, bool(symmetric), work[0], work[1], float(rtol),
            False, values, gmap.lsrc, gmap.usrc)
    ok = status < 0
    finite = (ok and math.isfinite(sq)) or _poison(values) == 0.0
    counts = done                               # a complete run: built once, then reused
    if not ok:
        counts = _counts(an, status, scalings, updates)
    elif done.get("scalings") != scalings or done.get("updates") != updates:
        done.update(_counts(an, status, scalings, updates))
    return int(status), counts, bool(finite), bool(ok and sq == 0.0)


def _solve_sym_plan(an) -> tuple:
    """``(kernel, ints, bounds)`` of an LDLᵀ solve with one right-hand side, made once per
    analysis (kept like :func:`_pack`'s arrays)."""
    hit = an.backend_cache.get("compiled_solve_sym")
    if hit is None:
        hit = an.backend_cache["compiled_solve_sym"] = (
            _SOLVE_SYM.get(specialization(an), _solve_sym_0), *_pack(an, _solve_arrays))
    return hit


def solve(an, Dlu, piv, L, U, x, symmetric: bool) -> bool:
    """Compiled :func:`graphsolve.kernels.reference.solve` (same contract); ``x``
    C-contiguous. An LDLᵀ solve with one right-hand side checks ``x`` inside its kernel
    (:func:`_poison`), in the same call as the solve."""
    if not x.flags.c_contiguous:
        raise ValueError("x must be C-contiguous")
    one = x.ndim == 1 or x.shape[1] == 1
    if symmetric and one:
        kernel, ints, bounds = _solve_sym_plan(an)
        return kernel(ints, bounds, Dlu, piv, L, x if x.ndim == 1 else x.reshape(-1))
    spec = specialization(an)
    if not all_finite(x):
        return False
    pair = _SOLVE_PAIR.get(spec) if not symmetric and one else None
    if pair is not None:
        pair(an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_parent, an.fe_child,
             an.fe_ptr, an.child_ptr, an.parent_ptr, an.parent_edges, Dlu, piv, L, U,
             x.reshape(-1))
        return True
    _SOLVE_UNIFORM.get(spec, _solve)(
        an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_parent, an.fe_child, an.fe_ptr,
        an.child_ptr, an.parent_ptr, an.parent_edges, Dlu, piv, L, U, x.reshape(-1),
        1 if one else x.shape[1], bool(symmetric))
    return True


# ---------------------------------------------------------------------- batched kernels
@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def _factor_batch(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, BS,
                  implicit, gat):
    """Items in parallel (numba threads); ``w1``, ``w2`` hold one work row per thread; the
    buffers are preloaded (``gat`` empty). ``implicit`` (False) comes from Python as a runtime
    bool, so the kernels compiled for :func:`factor` are reused."""
    literally(BS)
    for b in prange(D.shape[0]):
        t = get_thread_id()
        st, scalings, updates, _ = _factor(sym, D[b], Dlu[b], piv[b], L[b], U[b], symmetric,
                                           w1[t], w2[t], rtol, BS, implicit, gat)
        status[b] = st
        counts[b, 0] = scalings
        counts[b, 1] = updates


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def _factor_batch_pair(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, BS,
                       BS2, implicit, gat):
    """:func:`_factor_batch` for a pair of block sizes (:func:`_factor_pair`)."""
    literally(BS)
    literally(BS2)
    for b in prange(D.shape[0]):
        t = get_thread_id()
        st, scalings, updates, _ = _factor_pair(sym, D[b], Dlu[b], piv[b], L[b], U[b],
                                                symmetric, w1[t], w2[t], rtol, BS, BS2,
                                                implicit, gat)
        status[b] = st
        counts[b, 0] = scalings
        counts[b, 1] = updates


@njit(cache=True, nogil=True, error_model="numpy")
def _factor_batch_0(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts,
                    implicit, gat):
    _factor_batch(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, 0,
                  implicit, gat)


@njit(cache=True, nogil=True, error_model="numpy")
def _factor_batch_6(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts,
                    implicit, gat):
    _factor_batch(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, 6,
                  implicit, gat)


@njit(cache=True, nogil=True, error_model="numpy")
def _factor_batch_6_3(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts,
                      implicit, gat):
    _factor_batch_pair(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, 6, 3,
                       implicit, gat)


#: Batched variants (each is a parallel compile; other specializations use the generic one).
_FACTOR_BATCH = {(0, 0): _factor_batch_0, (6, 0): _factor_batch_6, (6, 3): _factor_batch_6_3}


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def _solve_batch(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                 parent_ptr, parent_edges, Dlu, piv, L, U, x, nrhs, symmetric):
    for b in prange(x.shape[0]):
        _solve(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
               parent_edges, Dlu[b], piv[b], L[b], U[b], x[b], nrhs, symmetric)


def factor_batch(an, D, Dlu, piv, L, U, symmetric: bool, work=None) -> tuple[np.ndarray, dict]:
    """Factor a batch: every buffer has a leading batch axis; items run in parallel on numba's
    threads (``numba.set_num_threads``). Returns the status of every matrix (-1 or the
    position of its first singular pivot) and the block operations per matrix. ``work`` is
    ignored (one work row per thread is allocated per call)."""
    m = int(an.block_sizes.max())
    threads = get_num_threads()
    w1, w2 = np.empty((threads, m * m)), np.empty((threads, m * m))
    status = np.empty(D.shape[0], dtype=np.int64)
    counts = np.zeros((D.shape[0], 2), dtype=np.int64)
    kernel = _FACTOR_BATCH.get(specialization(an), _factor_batch_0)
    kernel(_sym(an), D, Dlu, piv, L, U, bool(symmetric), w1, w2, PIVOT_RTOL, status, counts,
           False, _NO_GATHER)
    return status, {"pivots": an.n_nodes, "scalings": int(counts[0, 0]),
                    "updates": int(counts[0, 1])}


def solve_batch(an, Dlu, piv, L, U, x, symmetric: bool) -> None:
    """Solve a batch in place; ``x`` C-contiguous ``(B, N, k)``."""
    B, N, k = x.shape
    _solve_batch(an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_parent, an.fe_child,
                 an.fe_ptr, an.child_ptr, an.parent_ptr, an.parent_edges, Dlu, piv, L, U,
                 x.reshape(B, N * k), k, bool(symmetric))


# ---------------------------------------------------------------------- loading values
@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FAST)
def _poison(values):
    """The sum of ``v * 0`` over all values: NaN iff some value is NaN or infinite (a
    reduction that vectorizes, unlike a branchy check)."""
    poison = 0.0
    for q in range(values.size):
        poison += values[q] * 0.0
    return poison


def all_finite(x: np.ndarray) -> bool:
    """:func:`graphsolve.kernels.reference.all_finite`; a compiled reduction for float64
    (:func:`_poison`, a tenth of ``np.isfinite(x).all()``'s time on small vectors)."""
    if x.dtype == np.float64 and x.flags.c_contiguous:
        return bool(_poison(x.reshape(-1)) == 0.0)
    return bool(np.isfinite(x).all())


# ---------------------------------------------------------------------- calls from numba code
def fused_handle(an, gmap, D, Dlu, piv, L, U, work, implicit: bool = False) -> tuple:
    """The ``handle`` (a tuple of arrays) for :func:`refactor_solve`, which numba code can call in a
    loop (e.g. a Newton iteration) without returning to Python. The buffers are shared with
    the :class:`~graphsolve.Factorization` that made them. ``implicit`` (acyclic patterns
    only) keeps the lower blocks unscaled (solved by :func:`_solve_vector` with ``implicit``):
    faster, but the buffers then do not hold the explicit factor."""
    w1, w2 = work[:2]
    solve_sym = (an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_parent, an.fe_child,
                 an.fe_ptr, an.child_ptr, an.parent_ptr, an.parent_edges)
    if implicit and an.n_updates != 0:
        raise ValueError("an implicit-L factor needs an acyclic pattern (no fill updates)")
    bs, bs2 = specialization(an)
    handle = (*_pack(an), gmap.lsrc, gmap.usrc, D, Dlu, piv, L, U, w1, w2, float(PIVOT_RTOL),
              solve_sym, np.int64(_handle_kind(bs, bs2, implicit)))
    return handle


#: The ``kind`` of a :func:`fused_handle`: ``100 · BS + BS2`` for the size specialization
#: ``(BS, BS2)`` of :func:`specialization` (0 generic), plus :data:`KIND_IMPLICIT` for an
#: implicit-L factor.
KIND_PAIR_6_5 = 605
KIND_PAIR_6_3 = 603
KIND_IMPLICIT = 1000


def _handle_kind(bs: int, bs2: int, implicit: bool) -> int:
    return 100 * bs + bs2 + (KIND_IMPLICIT if implicit else 0)


@njit(cache=True, nogil=True, error_model="numpy")
def refactor_solve(handle, values, x):
    """Load ``values`` (a BlockMatrix buffer), factor them (LDU) and solve ``x`` in place.

    Returns -1 on success, -2 if ``values`` holds NaN or inf, else the position in the
    elimination order of the first singular pivot block (``x`` is then unchanged).
    """
    ints, bounds, lsrc, usrc, D, Dlu, piv, L, U, w1, w2, rtol, ssym, kind = handle
    # The load is fused into the factor. Non-finite values need no separate pass: every value
    # block enters some pivot block (D_i -= T D_c⁻¹ S, with NaN/inf propagating), whose
    # finiteness the factor checks; a failed pivot is then told apart from non-finite input.
    implicit = kind >= KIND_IMPLICIT
    pair = kind % KIND_IMPLICIT
    # LDU: False, but as a runtime bool like Factorization's calls pass it; a literal False
    # would make numba compile (and cache) a second copy of every factor kernel
    symmetric = kind < 0
    # the size-specialized kernels (separately compiled and cached), as :func:`factor` picks
    if pair == KIND_PAIR_6_5:
        status, _, _, _ = _factor_6_5(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2,
                                      rtol, implicit, values, lsrc, usrc)
    elif pair == KIND_PAIR_6_3:
        status, _, _, _ = _factor_6_3(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2,
                                      rtol, implicit, values, lsrc, usrc)
    else:
        status, _, _, _ = _factor_0(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2,
                                    rtol, implicit, values, lsrc, usrc)
    if status >= 0:
        return -2 if _poison(values) != 0.0 else status
    order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr, \
        parent_edges = ssym
    if kind == KIND_IMPLICIT + KIND_PAIR_6_5:
        _solve_implicit_6_5(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr,
                            child_ptr, parent_ptr, parent_edges, Dlu, piv, L, U, x)
    elif kind == KIND_IMPLICIT + KIND_PAIR_6_3:
        _solve_implicit_6_3(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr,
                            child_ptr, parent_ptr, parent_edges, Dlu, piv, L, U, x)
    elif implicit:
        _solve_implicit_0(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                          parent_ptr, parent_edges, Dlu, piv, L, U, x)
    elif kind == KIND_PAIR_6_5:
        _solve_6_5(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                   parent_ptr, parent_edges, Dlu, piv, L, U, x)
    elif kind == KIND_PAIR_6_3:
        _solve_6_3(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr,
                   parent_ptr, parent_edges, Dlu, piv, L, U, x)
    else:
        _solve(order, sizes, d_ptr, x_ptr, fe_parent, fe_child, fe_ptr, child_ptr, parent_ptr,
               parent_edges, Dlu, piv, L, U, x, np.int64(1), symmetric)
    return -1
