"""The uniform 6×6 LDLᵀ tree factor and the prefetching of labelling-dependent addresses.

Six is the block size of a rigid body, so the 6×6 LDLᵀ refactor of a tree (no update triples,
zero fill) is the package's hot path and has a kernel of its own, :func:`_factor_tree6`: the
load of the values is fused into the elimination, each pair step runs in registers
(:func:`graphsolve.kernels.simd.ldlt_pair6`), and the blocks whose address depends on the node
labelling are prefetched :data:`PREFETCH_NODES` nodes ahead (:func:`_prefetch_tree6`; the
one-right-hand-side LDLᵀ solve does the same for ``x``, :func:`_prefetch_x`). The entry point
for uniform 6×6 blocks (:mod:`graphsolve.kernels.specializations`) takes this kernel for an
LDLᵀ refactor of a pattern without update triples, and
:func:`graphsolve.kernels.factor_kernels._factor` otherwise.
"""

from __future__ import annotations

from numba import njit

from .blocks import NO_REFCOUNT, _finish_definite, _finish_lu, _in_place
from .factor_kernels import _scale_pair_inline
from .simd import ldlt_pair6, ldlt_pair6_sym, prefetch

__all__ = ["PREFETCH_NODES"]

#: How many nodes ahead the tree kernels prefetch the blocks whose address depends on the node
#: labelling (:func:`_prefetch_tree6`, :func:`_prefetch_x`).
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


@njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)
def _factor_tree6(sym, D, Dlu, piv, L, U, w2, rtol, gat):
    """:func:`~graphsolve.kernels.factor_kernels._factor` for LDLᵀ of uniform 6×6 blocks
    without update triples (trees, Alg. 1 of Brüdigam et al. 2023: zero fill), with the load
    fused into the elimination.

    Instead of :func:`~graphsolve.kernels.factor_kernels._gather`'s pass of copies, each pair
    step (:func:`.simd.ldlt_pair6`) reads ``T`` and, for a node's first child, ``D_i``
    straight from the matrix's ``values`` and writes ``L`` and the updated ``D_i``: no block
    is copied before it is used. The elimination of a tree is a chain of dependent pivot
    factors, whose latency leaves the load and store units idle, so these loads cost little
    inside it, while a separate pass would be about a fifth of a path's refactor. The
    symmetry of ``values`` is checked as ``_gather`` does, for a pair inside the pair step
    (:func:`.simd.ldlt_pair6_sym`, on the transposed ``T`` it holds in registers, which is
    cheaper than a separate strided loop). A child with an indefinite pivot (LU,
    ``piv >= 0``) takes the generic pair step on copied blocks. Same returns as
    ``_factor``."""
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
        elif _in_place(D, Dlu) or not _finish_lu(D[d0:d0 + 36], Dlu[d0:d0 + 36],
                                                  piv[6 * i:6 * i + 6], 6, rtol):
            return k, n_scalings, 0, sq             # in place: no copy left for LU
    return -1, n_scalings, 0, sq

