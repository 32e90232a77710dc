"""The block factor (Brüdigam et al. 2023, Alg. 3) compiled with numba, on the flat buffers.

:func:`_factor` runs the elimination for any block sizes, or for uniform ``BS×BS`` blocks when
``BS`` is passed as a literal (fixed trip counts in the inlined block loops; uniform 6×6 blocks
use the vectorized operations of :mod:`graphsolve.kernels.simd`); :func:`_factor_pair` is the
same loop for blocks of exactly two sizes (bodies and joints of a KKT matrix). The generic
:func:`_factor` (``BS = 0``) runs the pivots of :data:`FIXED_PIVOT_SIZES` and the pairs of
:data:`FIXED_PAIR_SIZES` as fixed-size copies (matrices that mix three or more sizes, e.g.
contacts). Both first load the buffers from the matrix's flat values (:func:`_gather`) unless
they are preloaded, and do each pair's scaling with the pair step :func:`_scale_pair_py`.

:func:`_factor` itself only picks one of two kernels made by :func:`_factor_kernel`, the generic
one or the one for uniform sizes, and is inlined into callers whose ``BS`` is a constant: the
choice is made before typing, so a uniform kernel never compiles the generic kernel's
fixed-size copies (numba prunes a branch on a literal *argument* only after typing both sides,
which made the first 6×6 factor compile all of them: minutes of a cold start).
:func:`_factor_sn` is the load followed by the supernodal LDLᵀ kernel
(:mod:`graphsolve.kernels.supernodal`).

These are called from the entry points of :mod:`graphsolve.kernels.specializations` (one per
block-size specialization) and from the batch kernels; the uniform 6×6 LDLᵀ of a tree has its
own kernel, :func:`graphsolve.kernels.tree6._factor_tree6`. Nothing is allocated per block:
the caller passes two ``max_size²`` work buffers. Pivot factors follow the LAPACK ``getrf``
convention and the :data:`~graphsolve.kernels.reference.PIVOT_RTOL` rule
(:func:`graphsolve.kernels.blocks._finish_pivot`).
"""

from __future__ import annotations

from numba import literally, njit

from . import supernodal
from .blocks import (
    NO_REFCOUNT,
    _finish_pivot,
    _ldl_solve_left,
    _lu_solve_left,
    _lu_solve_trans_left,
    _matmul,
    _sub_matmul,
    _swap_rows,
)
from .simd import (
    copy_fixed,
    ldlt_pair6,
    lu_pair_3_6,
    lu_pair_5_6,
    lu_pair_6_3,
    lu_pair_6_5,
    lu_pair_6_6,
    lu_trans_3_6,
    lu_trans_5_6,
    lu_trans_6_3,
    lu_trans_6_5,
    lu_trans_6_6,
    mm6_sub,
    mm6t_sub,
)

__all__: list[str] = []


def _scale_pair_py(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, FI, FC):
    """Alg. 3 lines 18-20 for the pair (i, c1): ``L = T D⁻¹``, ``U = D⁻¹ S``,
    ``D_i -= T D⁻¹ S`` (LDLᵀ: ``S = Tᵀ``). With ``implicit`` (LDU on an acyclic pattern)
    ``T`` is kept: :func:`graphsolve.kernels.solve_kernels._solve_vector` (``implicit``)
    applies ``L = T D⁻¹`` on the fly.

    LDLᵀ with ``keep`` (a pattern with update triples) keeps the unscaled ``T = L D_c`` in the
    otherwise unused ``U`` block: a triple (Alg. 3 line 14, ``T_ic1 -= L_ic2 D_c2 L_c1c2ᵀ``)
    then needs one block product instead of two (:meth:`graphsolve.Analysis.flops` counts it
    so).

    ``FI``, ``FC`` > 0 fix ``si``, ``sc`` (literal sizes: fixed trip counts; ``0``: generic).
    LDU pairs of a 6×6 block with a 6×6, 5×5 or 3×3 one, either way round (bodies and joints),
    form ``U`` and update ``D_i`` in one vectorized step (``simd.lu_pair_6_5`` and the other
    ``lu_pair_*``) and, with an LU child pivot, scale ``T`` with ``simd.lu_trans_*``, bit for
    bit the loops' results; the definite 6×6 LDLᵀ pair runs ``simd.ldlt_pair6``.
    Two compiled forms of this one function:

    - :func:`_scale_pair_inline` (numba IR inlining: the fastest code) at one call site of
      :func:`_factor` (its runtime-size or uniform pairs; and of the tree kernel's indefinite
      branch);
    - :func:`_scale_pair`, compiled once and inlined by LLVM (``forceinline``, the literal
      sizes fold), at the three call sites of :func:`_factor_pair` and at the fixed-size
      pairs of the generic :func:`_factor` (:func:`_scale_pair_sized`).

    numba's IR inlining re-processes the callee and its nested helpers at every call site, so
    it is used at one site per kernel only: at all three sites of every pair kernel the cold
    compilation of the dynamics' kernels would take minutes."""
    if FI > 0:
        si = FI
    if FC > 0:
        sc = FC
    scale_t = symmetric or not implicit
    # a body with a body or a joint of 5 or 3 rows: the vectorized steps of simd.py
    body_pair = ((FI == 6 and (FC == 6 or FC == 5 or FC == 3))
                 or (FC == 6 and (FI == 5 or FI == 3)))
    if keep:                                                # LDLᵀ only
        for q in range(si * sc):
            S[q] = T[q]
    if FI == 6 and FC == 6 and symmetric and piv_c[0] < 0:  # all in registers (simd.py)
        ldlt_pair6(T, 0, T, 0, Di, 0, Di, 0, lu_c, 0)
        return
    if scale_t and body_pair and piv_c[0] >= 0:             # w2 = D⁻ᵀ Tᵀ, LU pivot
        if FI == 6 and FC == 6:
            lu_trans_6_6(w2, 0, T, 0, lu_c, 0)
        elif FI == 6 and FC == 5:
            lu_trans_6_5(w2, 0, T, 0, lu_c, 0)
        elif FI == 5:
            lu_trans_5_6(w2, 0, T, 0, lu_c, 0)
        elif FI == 6:
            lu_trans_6_3(w2, 0, T, 0, lu_c, 0)
        else:
            lu_trans_3_6(w2, 0, T, 0, lu_c, 0)
        for k in range(sc - 1, -1, -1):                     # Pᵀ
            _swap_rows(w2, k, piv_c[k], si)
    elif scale_t:                                           # w2 = (T D⁻¹)ᵀ = D⁻ᵀ Tᵀ
        for r in range(si):
            for c in range(sc):
                w2[c * si + r] = T[r * sc + c]
        if piv_c[0] < 0:                                    # definite LDLᵀ pivot: M Δ Mᵀ
            _ldl_solve_left(lu_c, sc, w2, si)
        else:
            _lu_solve_trans_left(lu_c, piv_c, sc, w2, si)
    if not symmetric and body_pair:
        # U = D⁻¹ S and D_i -= T U in one vectorized step (simd.lu_pair_*), U in registers
        for k in range(sc):
            _swap_rows(S, k, piv_c[k], si)
        if FI == 6 and FC == 6:
            lu_pair_6_6(S, 0, Di, 0, T, 0, lu_c, 0)
        elif FI == 6 and FC == 5:
            lu_pair_6_5(S, 0, Di, 0, T, 0, lu_c, 0)
        elif FI == 5:
            lu_pair_5_6(S, 0, Di, 0, T, 0, lu_c, 0)
        elif FI == 6:
            lu_pair_6_3(S, 0, Di, 0, T, 0, lu_c, 0)
        else:
            lu_pair_3_6(S, 0, Di, 0, T, 0, lu_c, 0)
    else:
        if symmetric:                                       # D⁻¹ S = (T D⁻¹)ᵀ
            V = w2
        else:
            _lu_solve_left(lu_c, piv_c, sc, S, si)          # U = D⁻¹ S
            V = S
        if FI == 6 and FC == 6:                             # D_i -= T D⁻¹ S
            mm6_sub(Di, 0, T, 0, V, 0)
        else:
            _sub_matmul(Di, T, V, si, sc, si, False)
    if scale_t:                                             # L = T D⁻¹
        for r in range(si):
            for c in range(sc):
                T[r * sc + c] = w2[c * si + r]


#: :func:`_scale_pair_py` compiled per literal size pair, inlined by LLVM
_scale_pair = njit(cache=True, nogil=True, error_model="numpy", forceinline=True,
                   **NO_REFCOUNT)(_scale_pair_py)
#: :func:`_scale_pair_py` inlined by numba (one site per kernel)
_scale_pair_inline = njit(error_model="numpy", inline="always")(_scale_pair_py)

#: Pivot sizes that the generic kernel (``BS = 0``) factors as fixed-size code (a copy of the
#: pivot factor with the size as a constant: fixed trip counts, no mispredicted loop exits when
#: the sizes alternate along the elimination order); other sizes run the runtime-size loops.
#: Joints (1-5), bodies (6) and contact groups (2, and ``4 + 2m`` for m = 2, 4 friction
#: directions) of the dynamics' KKT matrices.
FIXED_PIVOT_SIZES = (1, 2, 3, 4, 5, 6, 8, 12)
#: Pairs ``(i, c)`` that the generic kernel scales as fixed-size code: a 6×6 block (a rigid
#: body) with a block of size 1-6, either way round. (Fixed-size copies of the pairs of a 6×6
#: with an 8×8 or 12×12 block were measured slower than the runtime-size loops: the unrolled
#: triangular solves outgrow the registers.)
FIXED_PAIR_SIZES = (1, 2, 3, 4, 5, 6)


def _finish_pivot_py(Di, lu_i, piv_i, si, symmetric, rtol, FS):
    """:func:`~graphsolve.kernels.blocks._finish_pivot` with the size ``FS`` if > 0."""
    if FS > 0:
        si = FS
    return _finish_pivot(Di, lu_i, piv_i, si, symmetric, rtol)


#: :func:`_finish_pivot_py` compiled once, inlined by LLVM (the literal ``FS`` folds)
_finish_pivot_fixed = njit(cache=True, nogil=True, error_model="numpy",
                           forceinline=True)(_finish_pivot_py)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _finish_pivot_sized(Di, lu_i, piv_i, si, symmetric, rtol):
    """:func:`~graphsolve.kernels.blocks._finish_pivot` of an ``si×si`` pivot: a fixed-size
    copy for each size of :data:`FIXED_PIVOT_SIZES`, the runtime-size code otherwise (the
    same operations in the same order either way)."""
    if si == 6:
        return _finish_pivot_fixed(Di, lu_i, piv_i, si, symmetric, rtol, 6)
    if si == 3:
        return _finish_pivot_fixed(Di, lu_i, piv_i, si, symmetric, rtol, 3)
    if si == 12:
        return _finish_pivot_fixed(Di, lu_i, piv_i, si, symmetric, rtol, 12)
    if si == 5:
        return _finish_pivot_fixed(Di, lu_i, piv_i, si, symmetric, rtol, 5)
    if si == 1:
        return _finish_pivot_fixed(Di, lu_i, piv_i, si, symmetric, rtol, 1)
    if si == 2:
        return _finish_pivot_fixed(Di, lu_i, piv_i, si, symmetric, rtol, 2)
    if si == 4:
        return _finish_pivot_fixed(Di, lu_i, piv_i, si, symmetric, rtol, 4)
    if si == 8:
        return _finish_pivot_fixed(Di, lu_i, piv_i, si, symmetric, rtol, 8)
    return _finish_pivot(Di, lu_i, piv_i, si, symmetric, rtol)      # inlined by numba


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _scale_pair_sized(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep):
    """:func:`_scale_pair` of an ``si×sc`` pair: a fixed-size copy for the pairs of
    :data:`FIXED_PAIR_SIZES`, the runtime-size code otherwise."""
    o = sc if si == 6 else (si if sc == 6 else 0)
    if o == 6:
        _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 6, 6)
    elif o == 3:
        if si == 6:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 6, 3)
        else:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 3, 6)
    elif o == 5:
        if si == 6:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 6, 5)
        else:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 5, 6)
    elif o == 1:
        if si == 6:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 6, 1)
        else:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 1, 6)
    elif o == 2:
        if si == 6:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 6, 2)
        else:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 2, 6)
    elif o == 4:
        if si == 6:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 6, 4)
        else:
            _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 4, 6)
    else:                               # the runtime-size code, inlined by numba (one site)
        _scale_pair_inline(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, implicit, keep, 0, 0)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _copy_run(dst, d0, src, s0, n):
    """``dst[d0:d0 + n] = src[s0:s0 + n]``."""
    for q in range(n):
        dst[d0 + q] = src[s0 + q]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _copy_block(dst, d0, src, s0, n):
    """:func:`_copy_run` of one block of :func:`_gather`: for the block sizes of the dynamics'
    KKT matrices (6×6, 6×5, 5×5, 6×3, 3×3) the vector loads and stores of
    :func:`graphsolve.kernels.simd.copy_fixed` (the load of a 100-link chain's Newton matrix
    6.2 → 3.8 µs), a loop of runtime length for other sizes."""
    if n == 36:
        copy_fixed(dst, d0, src, s0, 36)
    elif n == 30:
        copy_fixed(dst, d0, src, s0, 30)
    elif n == 25:
        copy_fixed(dst, d0, src, s0, 25)
    elif n == 18:
        copy_fixed(dst, d0, src, s0, 18)
    elif n == 9:
        copy_fixed(dst, d0, src, s0, 9)
    else:
        _copy_run(dst, d0, src, s0, n)


@njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)
def _gather(sym, D, L, U, symmetric, gat, BS):
    """Load the factor buffers from the matrix's flat ``values`` in one pass of straight copies
    (the diagonal section holds the blocks by node, ``D`` in elimination order at ``d_ptr``;
    each pair's blocks are contiguous runs at ``lsrc``/``usrc``, -1 for fill). LDLᵀ does not
    load ``U``: each upper block is compared with its lower block's transpose instead (as are
    the two triangles of each diagonal block); returns the squared difference (0 for LDU).
    ``BS`` > 0: uniform BS×BS blocks.

    A pass of its own beats loading each block when the elimination first reaches it: these
    loops over raw offsets run near memory speed, while a slice copy per block costs more than
    the whole pass."""
    literally(BS)
    order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, _, _, _ = sym
    values, lsrc, usrc = gat
    sq = 0.0
    src = 0
    for i in range(sizes.size):                 # A's diagonal section: by node
        si = sizes[i] if BS == 0 else BS
        _copy_block(D, d_ptr[i], values, src, si * si)
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
                _copy_block(L, f0, values, ls, ln)
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
                _copy_block(U, f0, values, us, ln)
            else:
                for q in range(ln):
                    U[f0 + q] = 0.0
    return sq


def _factor_kernel(GENERIC: bool):
    """The kernel :func:`_factor` calls: ``GENERIC`` (blocks of any sizes, with the fixed-size
    pivots and pairs of :data:`FIXED_PIVOT_SIZES`, :data:`FIXED_PAIR_SIZES`) or for uniform
    ``BS×BS`` blocks (``BS`` literal), compiled as ``_factor_generic`` or ``_factor_uniform``.

    ``GENERIC`` is a closure constant, so numba prunes the branches it decides *before*
    typing: the uniform kernel never types (and so never compiles) the generic kernel's
    fixed-size dispatch (:func:`_scale_pair_sized`: 11 literal pairs of :func:`_scale_pair`,
    :func:`_finish_pivot_sized`: 8 pivot sizes), and the generic kernel never types the
    uniform 6×6 operations. (A branch on a literal *argument*, ``if BS == 0``, is pruned by
    LLVM only, after both sides have been typed and their callees compiled.)"""
    def kernel(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, BS, implicit, gat):
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
                for t in range(sched_ptr[e], sched_ptr[e + 1]):     # Alg. 3 lines 8-15
                    e_ic2 = sched_ic2[t]
                    e_c1c2 = sched_c1c2[t]
                    c2 = fe_child[e_ic2]
                    s2 = sizes[c2] if BS == 0 else BS
                    Dc2 = D[d_ptr[c2]:d_ptr[c2] + s2 * s2]
                    L_ic2 = L[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]]
                    L_c1c2 = L[fe_ptr[e_c1c2]:fe_ptr[e_c1c2 + 1]]
                    if symmetric and BS == 6:                       # simd.py
                        mm6t_sub(L, fe_ptr[e], U, fe_ptr[e_ic2], L, fe_ptr[e_c1c2])
                    elif symmetric:     # T -= (L_ic2 D_c2) L_c1c2ᵀ, L_ic2 D_c2 kept in U
                        _sub_matmul(T, U[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]], L_c1c2, si, s2, sc,
                                    True)
                    elif BS == 6:
                        _matmul(L_ic2, Dc2, w1, si, s2, s2)
                        mm6_sub(L, fe_ptr[e], w1, 0, U, fe_ptr[e_c1c2])
                        _matmul(L_c1c2, Dc2, w1, sc, s2, s2)
                        mm6_sub(U, fe_ptr[e], w1, 0, U, fe_ptr[e_ic2])
                    else:
                        _matmul(L_ic2, Dc2, w1, si, s2, s2)         # L_ic2 D_c2
                        _sub_matmul(T, w1, U[fe_ptr[e_c1c2]:fe_ptr[e_c1c2 + 1]], si, s2, sc,
                                    False)
                        _matmul(L_c1c2, Dc2, w1, sc, s2, s2)
                        _sub_matmul(S, w1, U[fe_ptr[e_ic2]:fe_ptr[e_ic2 + 1]], sc, s2, si,
                                    False)
                    n_updates += 1
                if GENERIC:
                    _scale_pair_sized(T, S, Di, Dlu[d_ptr[c1]:d_ptr[c1] + sc * sc],
                                      piv[x_ptr[c1]:x_ptr[c1 + 1]], si, sc, symmetric, w2,
                                      implicit, keep)
                else:
                    _scale_pair_inline(T, S, Di, Dlu[d_ptr[c1]:d_ptr[c1] + sc * sc],
                                       piv[x_ptr[c1]:x_ptr[c1 + 1]], si, sc, symmetric, w2,
                                       implicit, keep, BS, BS)
                n_scalings += 1
            if GENERIC:
                ok = _finish_pivot_sized(Di, Dlu[d_ptr[i]:d_ptr[i] + si * si],
                                         piv[x_ptr[i]:x_ptr[i + 1]], si, symmetric, rtol)
            else:
                ok = _finish_pivot(Di, Dlu[d_ptr[i]:d_ptr[i] + si * si],
                                   piv[x_ptr[i]:x_ptr[i + 1]], si, symmetric, rtol)
            if not ok:
                return k, n_scalings, n_updates, sq
        return -1, n_scalings, n_updates, sq
    kernel.__name__ = kernel.__qualname__ = "_factor_generic" if GENERIC else "_factor_uniform"
    return njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)(kernel)


_factor_generic = _factor_kernel(True)
_factor_uniform = _factor_kernel(False)


@njit(nogil=True, error_model="numpy", inline="always")
def _factor(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, BS, implicit, gat):
    """Alg. 3 over the flat buffers; ``sym`` is the tuple of analysis arrays
    (:func:`graphsolve.kernels.specializations._sym`). ``BS`` > 0 says every block is BS×BS:
    compiled as a constant (through the entry points of
    :mod:`~graphsolve.kernels.specializations`), the inlined small loops get fixed trip
    counts; ``BS = 0`` is generic.

    ``gat = (values, lsrc, usrc)``: the kernel first loads the buffers from the matrix's flat
    ``values`` (:func:`_gather`); empty ``values``: the buffers are preloaded.
    Returns ``(status, scalings, updates, squared asymmetry of the loaded values)``.

    Inlined by numba into its caller, whose ``BS`` must be a constant (a closure's integer,
    as in the entry points): the branch below is then pruned before typing and only one of
    the two kernels of :func:`_factor_kernel` is compiled. (Called with a literal argument
    ``BS`` instead, both would be.)"""
    if BS == 0:
        return _factor_generic(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, 0, implicit,
                               gat)
    return _factor_uniform(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, BS, implicit, gat)


@njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)
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


@njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)
def _factor_sn(sym, sn, D, Dlu, piv, L, U, rtol, scratch, gat):
    """:func:`graphsolve.kernels.supernodal.factor_supernodal` after the load of
    :func:`_gather` (``gat`` as for :func:`_factor`); returns ``(status, asymmetry)``."""
    sq = _gather(sym, D, L, U, True, gat, 0) if gat[0].size > 0 else 0.0
    return supernodal.factor_supernodal(sym, sn, D, Dlu, piv, L, rtol, scratch), sq


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"},
      **NO_REFCOUNT)
def _poison(values):
    """The sum of ``v * 0`` over all values: NaN iff some value is NaN or infinite (a
    reduction that vectorizes, unlike a branchy check)."""
    poison = 0.0
    for q in range(values.size):
        poison += values[q] * 0.0
    return poison

