"""Reference numeric kernels: readable NumPy, one block at a time, following the papers.

The kernels work on flat ``float64`` buffers laid out by :class:`graphsolve.Analysis`:

* ``D`` (``d_ptr``: node ``i``'s block starts at ``d_ptr[i]``, blocks laid out in elimination
  order): on entry the diagonal blocks of ``A``; on exit the pivots ``D_i``.
* ``Dlu``, ``piv`` (``d_ptr``, ``x_ptr``): LU factors of every pivot block with partial pivoting
  inside the block (LAPACK ``getrf`` convention, 0-based row swaps).
* ``L``, ``U`` (``fe_ptr``, by filled edge ``e`` = (parent ``i``, child ``c``)): on entry
  ``A[i, c]`` and ``A[c, i]`` (zero for fill), on exit ``L[i, c]`` and ``U[c, i]``.

so that ``A[p][:, p] = L D U`` with unit block-triangular ``L`` and ``U``. The compiled
backend (:mod:`graphsolve.kernels.compiled`) keeps these signatures. Kernels never raise for
numerical trouble: they return a status, the position in the elimination order of the first
singular pivot (``-1`` if none), and the Python layer turns it into
:class:`~graphsolve.SingularBlockError`.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

__all__ = ["all_finite", "factor", "refactor", "solve", "factor_batch", "solve_batch", "load",
           "max_asymmetry", "pivot_is_singular", "PIVOT_RTOL"]

#: A pivot block ``P`` of size ``s`` counts as singular when the smallest ``|u_kk|`` of its LU
#: factors is at most ``PIVOT_RTOL * s * max|P|`` (or anything is non-finite).
PIVOT_RTOL = 10 * np.finfo(float).eps


def all_finite(x: np.ndarray) -> bool:
    """Whether ``x`` holds no NaN or inf (checked before a solve)."""
    return bool(np.isfinite(x).all())


def pivot_is_singular(P: np.ndarray, lu: np.ndarray, rtol: float = PIVOT_RTOL) -> bool:
    """The singularity rule shared by all kernels (see :data:`PIVOT_RTOL`; ``rtol = 0``
    flags exact zeros and non-finite values only)."""
    if not (np.all(np.isfinite(P)) and np.all(np.isfinite(lu))):
        return True
    scale = np.max(np.abs(P)) if P.size else 0.0
    return bool(np.min(np.abs(np.diag(lu))) <= rtol * P.shape[0] * scale)


def _blk(buf, ptr, k, rows, cols):
    return buf[ptr[k]:ptr[k] + rows * cols].reshape(rows, cols)


def factor(an, D, Dlu, piv, L, U, symmetric: bool, work=None, rtol: float = PIVOT_RTOL
           ) -> tuple[int, dict]:
    """In-place sparse block LDU (or LDLᵀ with ``symmetric``) factorization.

    For every node ``i`` in elimination order (Brüdigam et al. 2023, Alg. 3; Alg. 1 on trees):
    for every child ``c1`` (in elimination order) first subtract the contributions of earlier
    children ``c2`` of both ``i`` and ``c1`` (lines 8-15, empty on trees), then scale
    ``L[i,c1] = T D_c1⁻¹``, ``U[c1,i] = D_c1⁻¹ S`` and update ``D_i -= T D_c1⁻¹ S``
    (lines 18-20); finally factor the pivot ``D_i``. With ``symmetric`` the ``U`` buffer is not
    touched (``U = Lᵀ``). ``work`` is accepted for signature parity with the compiled kernel.

    Returns
    -------
    status : int
        Position of the first singular pivot in the elimination order, or -1.
    counts : dict
        Executed block operations: ``pivots``, ``scalings``, ``updates`` (triples).
    """
    s = an.block_sizes
    order, d_ptr, x_ptr, fe_ptr = an.order, an.d_ptr, an.x_ptr, an.fe_ptr
    fe_child = an.fe_child
    counts = {"pivots": 0, "scalings": 0, "updates": 0}
    for k, i in enumerate(order):
        si = s[i]
        Di = _blk(D, d_ptr, i, si, si)
        for e in range(an.child_ptr[k], an.child_ptr[k + 1]):
            c1 = fe_child[e]
            sc = s[c1]
            T = _blk(L, fe_ptr, e, si, sc)          # A[i,c1] -> L[i,c1] D_c1
            S = None if symmetric else _blk(U, fe_ptr, e, sc, si)
            for t in range(an.sched_ptr[e], an.sched_ptr[e + 1]):
                e_ic2, e_c1c2 = an.sched_ic2[t], an.sched_c1c2[t]
                c2 = fe_child[e_ic2]
                Dc2 = _blk(D, d_ptr, c2, s[c2], s[c2])
                L_ic2 = _blk(L, fe_ptr, e_ic2, si, s[c2])
                L_c1c2 = _blk(L, fe_ptr, e_c1c2, sc, s[c2])
                if symmetric:                        # T -= L_ic2 D_c2 L_c1c2ᵀ
                    T -= L_ic2 @ Dc2 @ L_c1c2.T
                else:                                # lines 14-15
                    T -= L_ic2 @ Dc2 @ _blk(U, fe_ptr, e_c1c2, s[c2], sc)
                    S -= L_c1c2 @ Dc2 @ _blk(U, fe_ptr, e_ic2, s[c2], si)
                counts["updates"] += 1
            lu_c = (_blk(Dlu, d_ptr, c1, sc, sc), piv[x_ptr[c1]:x_ptr[c1 + 1]])
            if symmetric:
                Linv = sla.lu_solve(lu_c, T.T, trans=1, check_finite=False).T  # T D⁻¹ (D = Dᵀ)
                Di -= Linv @ T.T
                T[...] = Linv
            else:
                Uinv = sla.lu_solve(lu_c, S, check_finite=False)          # D⁻¹ S
                Di -= T @ Uinv
                T[...] = sla.lu_solve(lu_c, T.T, trans=1, check_finite=False).T
                S[...] = Uinv  # type: ignore[index]
            counts["scalings"] += 1
        if symmetric:
            Di[...] = 0.5 * (Di + Di.T)
        if np.all(np.isfinite(Di)):
            with warnings.catch_warnings():   # singularity is judged by pivot_is_singular
                warnings.simplefilter("ignore", sla.LinAlgWarning)
                lu, p = sla.lu_factor(Di, check_finite=False)
        else:
            lu, p = np.full_like(Di, np.nan), np.arange(si)
        counts["pivots"] += 1
        if pivot_is_singular(Di, lu, rtol):
            return k, counts
        _blk(Dlu, d_ptr, i, si, si)[...] = lu
        piv[x_ptr[i]:x_ptr[i + 1]] = p
    return -1, counts


def solve(an, Dlu, piv, L, U, x, symmetric: bool) -> bool:
    """In-place block back-substitution (Brüdigam et al. 2023, Alg. 4) on ``x`` of shape
    ``(N,)`` or ``(N, k)`` in node numbering: forward with ``L`` over children, block solves
    with ``D``, and backward with ``U`` (``Lᵀ`` when ``symmetric``) over all parents. Returns
    ``False``, with ``x`` untouched, if ``x`` holds NaN or inf (the caller raises), else
    ``True``."""
    if not all_finite(x):
        return False
    s = an.block_sizes
    order, x_ptr, fe_ptr = an.order, an.x_ptr, an.fe_ptr
    for k, i in enumerate(order):                    # lines 1-6
        xi = x[x_ptr[i]:x_ptr[i + 1]]
        for e in range(an.child_ptr[k], an.child_ptr[k + 1]):
            c = an.fe_child[e]
            xi -= _blk(L, fe_ptr, e, s[i], s[c]) @ x[x_ptr[c]:x_ptr[c + 1]]
    for k in range(len(order) - 1, -1, -1):          # lines 7-12
        i = order[k]
        si = s[i]
        xi = x[x_ptr[i]:x_ptr[i + 1]]
        lu = (_blk(Dlu, an.d_ptr, i, si, si), piv[x_ptr[i]:x_ptr[i + 1]])
        xi[...] = sla.lu_solve(lu, xi, check_finite=False)
        for t in range(an.parent_ptr[k], an.parent_ptr[k + 1]):
            e = an.parent_edges[t]
            p = an.fe_parent[e]
            Uip = (_blk(L, fe_ptr, e, s[p], si).T if symmetric
                   else _blk(U, fe_ptr, e, si, s[p]))
            xi -= Uip @ x[x_ptr[p]:x_ptr[p + 1]]
    return True


def work_buffers(an) -> None:
    """The reference kernels need no scratch (backend protocol)."""
    return None


def factor_batch(an, D, Dlu, piv, L, U, symmetric: bool, work=None,
                 rtol: float = PIVOT_RTOL) -> tuple[np.ndarray, dict]:
    """:func:`factor` (singularity rule ``rtol``) for every matrix of a batch (leading axis of
    every buffer). Returns the status of every matrix and the block operations of the first
    one that factored (of the last one if none did)."""
    status = np.empty(D.shape[0], dtype=np.int64)
    counts: dict = {}
    first: dict | None = None
    for b in range(D.shape[0]):
        status[b], counts = factor(an, D[b], Dlu[b], piv[b], L[b], U[b], symmetric, rtol=rtol)
        if first is None and status[b] < 0:
            first = counts
    return status, counts if first is None else first


def solve_batch(an, Dlu, piv, L, U, x, symmetric: bool) -> None:
    """:func:`solve` for every matrix of a batch; ``x`` of shape ``(B, N, k)``."""
    for b in range(x.shape[0]):
        solve(an, Dlu[b], piv[b], L[b], U[b], x[b], symmetric)


def load(values, gmap, D, L, U) -> bool:
    """Copy a matrix's flat values into the factor buffers following ``gmap``
    (:class:`graphsolve.factor.GatherMap`; fill blocks become zero). Returns whether every
    value is finite."""
    src_l, dst_l, src_u, dst_u = gmap.elements
    D[:] = values[gmap.diag_index]
    L[:] = 0.0
    U[:] = 0.0
    L[dst_l] = values[src_l]
    U[dst_u] = values[src_u]
    return bool(np.all(np.isfinite(values)))


def refactor(an, values, gmap, D, Dlu, piv, L, U, symmetric: bool, work=None,
             rtol: float = PIVOT_RTOL) -> tuple[int, dict, bool, bool]:
    """Load ``values`` (:func:`load`) and :func:`factor` them. Returns ``(status, counts,
    finite, exactly_symmetric)``; the caller raises for non-finite values, applies the
    tolerance of the LDLᵀ symmetry check when the values are not exactly symmetric (only
    computed for ``symmetric``; ``False`` also when the factor failed), then reads the status."""
    if not load(values, gmap, D, L, U):
        return -1, {}, False, False                 # not factored: the caller raises
    exact = bool(symmetric) and max_asymmetry(an, D, L, U)[0] == 0.0
    status, counts = factor(an, D, Dlu, piv, L, U, symmetric, work, rtol)
    return status, counts, True, exact and status < 0


def max_asymmetry(an, D, L, U) -> tuple[float, float]:
    """``(max |A - Aᵀ|, max |A|)`` read from the loaded buffers: each diagonal block against
    its transpose and each ``L`` block ``(i, c)`` against the transpose of ``U`` block
    ``(c, i)``."""
    worst = 0.0
    s = an.block_sizes
    for i in range(an.n_nodes):
        Di = _blk(D, an.d_ptr, i, s[i], s[i])
        worst = max(worst, float(np.max(np.abs(Di - Di.T))))
    for e in range(len(an.fe_child)):
        si, sc = s[an.fe_parent[e]], s[an.fe_child[e]]
        Lb, Ub = _blk(L, an.fe_ptr, e, si, sc), _blk(U, an.fe_ptr, e, sc, si)
        worst = max(worst, float(np.max(np.abs(Lb - Ub.T))))
    scale = max(float(np.max(np.abs(D))), float(np.max(np.abs(L))) if L.size else 0.0)
    return worst, scale
