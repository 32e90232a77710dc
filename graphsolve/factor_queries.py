"""What a computed factorization tells besides ``A⁻¹ b``: log-determinant, inertia, and solves
with single factors or with ``Aᵀ``.

A factorization holds ``P A Pᵀ = L D U`` (:class:`~graphsolve.Factorization`): ``L`` unit
block-lower and ``U`` unit block-upper triangular in the elimination order, ``D`` block diagonal,
``P`` the block permutation of the elimination order (``(P x) = x[p]`` with ``p = F.perm``).
Hence

* ``det A = det D = Π_j det D_j`` (``det P`` appears squared and the unit triangles have
  determinant one), computed as a sum of per-block ``log|det D_j|`` so that it neither
  overflows nor underflows on large systems;
* for symmetric ``A`` (an LDLᵀ factor, ``U = Lᵀ``), ``A`` is congruent to ``D``, so by
  Sylvester's law of inertia ``A`` has as many positive, negative and zero eigenvalues as the
  pivot blocks ``D_j`` together: the check a user of Baraff's KKT systems (1996, eq. 8) makes
  that the mass blocks are definite and the constraints independent (``n_bodies`` positive,
  ``n_constraints`` negative eigenvalues);
* ``A x = b`` splits into ``x = Pᵀ U⁻¹ D⁻¹ L⁻¹ P b`` and ``Aᵀ x = b`` into
  ``x = Pᵀ L⁻ᵀ D⁻ᵀ U⁻ᵀ P b``; :func:`partial_solve` applies one factor at a time, in the
  style of CHOLMOD's ``solve`` systems.

The pivot blocks are taken from the factor buffer ``D`` stacked by block size (one
``(count, s, s)`` array per distinct size), so every query is a few batched LAPACK calls
(``numpy.linalg.slogdet`` / ``eigvalsh`` / ``solve``) with no Python loop per block. The
triangular solves use SciPy's compiled ``spsolve_triangular`` on the explicit factors (built
once per factorization): about three times the work of the fused block solve
(:meth:`~graphsolve.Factorization.solve`), which stays the fast path for ``A x = b``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .errors import GraphSolveError

if TYPE_CHECKING:
    from .analysis import Analysis
    from .factor import Factorization

__all__ = ["Inertia", "SYSTEMS", "pivot_blocks", "definite_pivots", "slogdet", "inertia",
           "partial_solve", "permutation", "permutation_matrix"]

#: The systems of :func:`partial_solve` (see :meth:`graphsolve.Factorization.solve`).
SYSTEMS = ("A", "L", "D", "U", "Lt", "P", "Pt")


class Inertia(NamedTuple):
    """Counts of positive, negative and zero eigenvalues of a symmetric matrix."""

    positive: int
    negative: int
    zero: int


def permuted_offsets(an: Analysis) -> np.ndarray:
    """First row of every node's block in the permuted (elimination order) numbering."""
    off = np.zeros(an.n_nodes, dtype=np.int64)
    sizes_in_order = an.block_sizes[an.order]
    off[an.order] = np.concatenate([[0], np.cumsum(sizes_in_order)[:-1]])
    return off


def permutation(an: Analysis) -> np.ndarray:
    """The scalar permutation ``p`` of the elimination order of ``an``: ``A[p][:, p]`` is the
    matrix every factorization on ``an`` factors (``F.perm``; shared by a batch)."""
    shift = an.x_ptr[an.order] - permuted_offsets(an)[an.order]
    return np.repeat(shift, an.block_sizes[an.order]) + np.arange(an.N)


def permutation_matrix(an: Analysis) -> sp.csr_array:
    """:func:`permutation` as a sparse matrix ``P`` (``P[i, p[i]] = 1``, so ``P @ A @ P.T ==
    A[p][:, p]``)."""
    N = an.N
    return sp.csr_array((np.ones(N), (np.arange(N), permutation(an))), shape=(N, N))


def pivot_blocks(an: Analysis, D: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The pivot blocks ``D_j`` of a factor buffer, grouped by block size.

    ``D`` has shape ``(..., n_diag)`` (a leading batch axis is kept). Returns one
    ``(nodes, blocks)`` per distinct block size ``s``: the nodes of that size in increasing id,
    and their blocks as an array of shape ``(..., len(nodes), s, s)``.
    """
    sizes = an.block_sizes
    out = []
    for s in np.unique(sizes):
        nodes = np.flatnonzero(sizes == s)
        idx = an.d_ptr[nodes][:, None] + np.arange(s * s)
        out.append((nodes, D[..., idx].reshape(*D.shape[:-1], nodes.size, s, s)))
    return out


def definite_pivots(an: Analysis, Dlu: np.ndarray) -> np.ndarray:
    """The pivot blocks ``D_j = M Δ Mᵀ`` rebuilt from their definite factors in ``Dlu`` (the
    layout of :func:`graphsolve.kernels.blocks._ldl_inplace`: unit lower ``M`` below the
    diagonal, ``1/Δ`` on it), as a flat buffer laid out like ``Dlu``. For pivots factored in
    place, which are all definite (:func:`graphsolve.kernels.blocks._in_place`)."""
    D = np.empty_like(Dlu)
    for s in np.unique(an.block_sizes):
        nodes = np.flatnonzero(an.block_sizes == s)
        idx = an.d_ptr[nodes][:, None] + np.arange(s * s)
        a = Dlu[idx].reshape(-1, s, s)
        M = np.tril(a, -1) + np.eye(s)
        delta = 1.0 / np.diagonal(a, axis1=1, axis2=2)
        D[idx] = (M * delta[:, None, :] @ np.swapaxes(M, 1, 2)).reshape(-1, s * s)
    return D


def slogdet(an: Analysis, D: np.ndarray
            ) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """``(sign, log|det A|)`` from the pivot blocks, like :func:`numpy.linalg.slogdet`
    (``(0, -inf)`` for a singular matrix); arrays of the batch shape for a batch buffer."""
    sign = np.ones(D.shape[:-1])
    logabs = np.zeros(D.shape[:-1])
    for _, blocks in pivot_blocks(an, D):
        s, la = np.linalg.slogdet(blocks)
        sign = sign * np.prod(s, axis=-1)
        logabs = logabs + np.sum(la, axis=-1)
    logabs = np.where(sign == 0, -np.inf, logabs)
    if sign.ndim == 0:
        return float(sign), float(logabs)
    return sign, logabs


def inertia(an: Analysis, D: np.ndarray, tol: float | None = None) -> Inertia | list[Inertia]:
    """:class:`Inertia` of a symmetric matrix from its LDLᵀ pivot blocks (Sylvester's law).

    An eigenvalue of a pivot block counts as zero when its magnitude is at most ``tol``;
    the default is ``N · eps · max|λ|`` over all pivot blocks. A batch buffer gives a list,
    one :class:`Inertia` per item.
    """
    eig = [np.linalg.eigvalsh(blocks).reshape(*D.shape[:-1], -1)
           for _, blocks in pivot_blocks(an, D)]
    lam = np.concatenate(eig, axis=-1)
    if tol is None:
        scale = np.max(np.abs(lam), axis=-1, keepdims=True) if lam.shape[-1] else 0.0
        tol = an.N * np.finfo(float).eps * scale
    elif not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    pos = np.sum(lam > tol, axis=-1)
    neg = np.sum(lam < -tol, axis=-1)
    zero = lam.shape[-1] - pos - neg
    if lam.ndim == 1:
        return Inertia(int(pos), int(neg), int(zero))
    return [Inertia(int(p), int(n), int(z)) for p, n, z in
            zip(pos.ravel(), neg.ravel(), zero.ravel(), strict=True)]


def _block_diagonal_solve(F: Factorization, y: np.ndarray, transpose: bool) -> np.ndarray:
    """``D⁻¹ y`` (or ``D⁻ᵀ y``) in the permuted numbering, batched by block size."""
    an = F.analysis
    off = F._permuted_offsets()
    x = np.empty_like(y)
    for nodes, blocks in pivot_blocks(an, F._pivots()):
        s = blocks.shape[-1]
        rows = off[nodes][:, None] + np.arange(s)                  # (k, s)
        rhs = y[rows]                                             # (k, s) or (k, s, m)
        if transpose:
            blocks = np.swapaxes(blocks, -1, -2)
        if rhs.ndim == 2:
            x[rows] = np.linalg.solve(blocks, rhs[..., None])[..., 0]
        else:
            x[rows] = np.linalg.solve(blocks, rhs)
    return x


def partial_solve(F: Factorization, b: np.ndarray, system: str, trans: bool) -> np.ndarray:
    """Apply one factor's inverse (or the permutation) to ``b`` (float64, validated by the
    caller); see :meth:`graphsolve.Factorization.solve` for the systems."""
    if system == "Lt":
        system, trans = "L", not trans
    if system == "Pt":
        system, trans = "P", not trans
    if system == "P":
        p = F.perm
        if not trans:
            return b[p].copy()
        x = np.empty_like(b)
        x[p] = b
        return x
    if system == "D":
        return _block_diagonal_solve(F, b, trans)
    if system == "A":                                # Aᵀ x = b: Pᵀ L⁻ᵀ D⁻ᵀ U⁻ᵀ P b
        y = partial_solve(F, b, "P", False)
        y = partial_solve(F, y, "U", True)
        y = _block_diagonal_solve(F, y, True)
        y = partial_solve(F, y, "L", True)
        return partial_solve(F, y, "P", True)
    if system not in ("L", "U"):                     # pragma: no cover - checked by solve
        raise GraphSolveError(f"unknown system {system!r}")
    T = F.L if system == "L" else F.U
    lower = system == "L"
    if trans:
        key = system + "T"
        if key not in F._explicit_cache:          # cleared with the factor on refactor
            F._explicit_cache[key] = T.T.tocsr()
        T, lower = F._explicit_cache[key], not lower
    return spla.spsolve_triangular(T, b, lower=lower, unit_diagonal=True)
