"""Dense O(N³) baselines: block LDU (Brüdigam & Manchester 2020, Alg. 1-2) and LAPACK LU.

These solvers ignore sparsity entirely. They serve as reference implementations and
oracles for the graph-structured solvers in :mod:`graphsolve`:

* :func:`dense_block_ldu` computes the block factorization ``A = L @ D @ U`` without any
  permutation across blocks (the dense Algorithm 1 of the paper, at block level) and returns a
  :class:`DenseBlockLDU` whose :meth:`DenseBlockLDU.solve` is Algorithm 2.
* :func:`lapack_lu` wraps LAPACK ``getrf``/``getrs`` (via :func:`scipy.linalg.lu_factor` and
  :func:`scipy.linalg.lu_solve`) with the same validation and error types.
* :func:`dense_solve` is a one-call convenience over both.

References
----------
J. Brüdigam and Z. Manchester, "Linear-Time Variational Integrators in Maximal Coordinates",
WAFR 2020, §4.1, Alg. 1-2 (dense in-place LDU factorization and back-substitution).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from graphsolve.errors import NonFiniteError, ShapeError, SingularBlockError

__all__ = [
    "DenseBlockLDU",
    "DenseLU",
    "dense_block_ldu",
    "lapack_lu",
    "dense_solve",
]

# Safety factor in the pivot-block singularity test (see ``dense_block_ldu``).
_PIVOT_TOL_FACTOR = 10.0


# ---------------------------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------------------------


def _as_square_matrix(A: ArrayLike, name: str = "A") -> NDArray:
    """Return a finite, square, floating-point *copy* of ``A`` (sparse input is densified)."""
    if scipy.sparse.issparse(A):
        arr = A.toarray()  # type: ignore[union-attr]
    else:
        arr = np.asarray(A)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    dtype = np.result_type(arr.dtype, np.float64)
    arr = np.array(arr, dtype=dtype, copy=True)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ShapeError(f"{name} must be a square 2-D matrix, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ShapeError(f"{name} must be non-empty, got shape {arr.shape}")
    finite = np.isfinite(arr)
    if not finite.all():
        i, j = np.argwhere(~finite)[0]
        raise NonFiniteError(
            f"{name} contains NaN or infinity (first at entry ({i}, {j}): {arr[i, j]})"
        )
    return arr


def _check_block_sizes(block_sizes: Sequence[int], n: int) -> tuple[int, ...]:
    """Validate block sizes (positive ints summing to ``n``) and return them as a tuple."""
    if isinstance(block_sizes, (str, bytes)):
        raise ShapeError(f"block_sizes must be a sequence of positive ints, got {block_sizes!r}")
    sizes: list[int] = []
    for k, s in enumerate(block_sizes):
        if isinstance(s, (bool, np.bool_)):
            raise ShapeError(f"block size {k} must be a positive int, got {s!r}")
        try:
            s_int = operator.index(s)
        except TypeError:
            raise ShapeError(f"block size {k} must be a positive int, got {s!r}") from None
        if s_int <= 0:
            raise ShapeError(f"block size {k} must be a positive int, got {s_int}")
        sizes.append(s_int)
    total = sum(sizes)
    if total != n:
        raise ShapeError(
            f"block sizes sum to {total} but the matrix has N = {n} rows "
            f"({len(sizes)} blocks: {sizes})"
        )
    return tuple(sizes)


def _check_rhs(b: ArrayLike, n: int) -> NDArray:
    """Validate a right-hand side of shape ``(n,)`` or ``(n, k)`` and return it as an array."""
    arr = np.asarray(b)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"b must be numeric, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2):
        raise ShapeError(f"b must have shape (N,) or (N, k) with N = {n}, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ShapeError(
            f"b has the wrong first dimension: expected {n}, got {arr.shape[0]} (shape {arr.shape})"
        )
    if not np.isfinite(arr).all():
        raise NonFiniteError("b contains NaN or infinity")
    return arr


# ---------------------------------------------------------------------------------------------
# Block LDU (Alg. 1-2)
# ---------------------------------------------------------------------------------------------


class DenseBlockLDU:
    """Dense block LDU factorization ``A = L @ D @ U`` as returned by :func:`dense_block_ldu`.

    Parameters
    ----------
    block_sizes : tuple of int
        Sizes of the diagonal blocks, summing to ``N``.
    L : ndarray, shape (N, N)
        Unit block-lower-triangular factor (identity diagonal blocks).
    D : ndarray, shape (N, N)
        Block-diagonal factor (the pivot blocks; zero outside the diagonal blocks).
    U : ndarray, shape (N, N)
        Unit block-upper-triangular factor (identity diagonal blocks).
    pivot_lu : sequence of (ndarray, ndarray)
        For each block ``k``, the :func:`scipy.linalg.lu_factor` pair ``(lu, piv)`` of the
        pivot block ``D_k``.

    Attributes
    ----------
    block_sizes, L, D, U
        As above.
    N : int
        Order of the factored matrix.

    Notes
    -----
    Instances are normally created by :func:`dense_block_ldu`, which guarantees consistency
    of ``pivot_lu`` with ``D``.
    """

    __slots__ = ("block_sizes", "L", "D", "U", "N", "_pivot_lu", "_offsets")

    def __init__(
        self,
        block_sizes: Sequence[int],
        L: NDArray,
        D: NDArray,
        U: NDArray,
        pivot_lu: Sequence[tuple[NDArray, NDArray]],
    ) -> None:
        self.block_sizes = tuple(int(s) for s in block_sizes)
        self.L = L
        self.D = D
        self.U = U
        self.N = int(L.shape[0])
        self._pivot_lu = tuple(pivot_lu)
        self._offsets = np.concatenate(([0], np.cumsum(self.block_sizes))).astype(int)

    def __repr__(self) -> str:
        return f"DenseBlockLDU(N={self.N}, blocks={len(self.block_sizes)})"

    def solve(self, b: ArrayLike) -> NDArray:
        """Solve ``A x = b`` by block back-substitution (Brüdigam & Manchester 2020, Alg. 2).

        The forward pass solves ``L y = b`` block row by block row; the backward pass applies
        ``D_k^{-1}`` (via the stored LU of each pivot block, never an explicit inverse) and
        subtracts the ``U`` couplings, from the last block to the first. Cost O(N²) per
        right-hand side.

        Parameters
        ----------
        b : array_like, shape (N,) or (N, k)
            Right-hand side(s); must be finite.

        Returns
        -------
        x : ndarray
            Solution with the same shape as ``b``.

        Raises
        ------
        ShapeError
            If ``b`` is not 1-D or 2-D or its first dimension is not ``N``.
        NonFiniteError
            If ``b`` contains NaN or infinity.

        References
        ----------
        Brüdigam & Manchester 2020, Alg. 1-2.

        Examples
        --------
        >>> import numpy as np
        >>> from graphsolve.dense import dense_block_ldu
        >>> A = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 2.0, 5.0]])
        >>> x = dense_block_ldu(A, [1, 2]).solve([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
        >>> x.shape
        (3, 2)
        >>> bool(np.allclose(A @ x, [[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]]))
        True
        """
        b_arr = _check_rhs(b, self.N)
        dtype = np.result_type(b_arr.dtype, self.D.dtype, np.float64)
        x = np.array(b_arr, dtype=dtype, copy=True)
        off = self._offsets
        nb = len(self.block_sizes)
        L, U = self.L, self.U
        # Forward substitution with unit block-lower L (Alg. 2, lines 2-4).
        for k in range(1, nb):
            lo, hi = off[k], off[k + 1]
            x[lo:hi] -= L[lo:hi, :lo] @ x[:lo]
        # Block-diagonal solve and backward substitution with unit block-upper U (lines 5-8).
        for k in range(nb - 1, -1, -1):
            lo, hi = off[k], off[k + 1]
            xk = scipy.linalg.lu_solve(self._pivot_lu[k], x[lo:hi], check_finite=False)
            if hi < self.N:
                xk = xk - U[lo:hi, hi:] @ x[hi:]
            x[lo:hi] = xk
        return x


def _pivot_singular(lu: NDArray, dk: NDArray) -> tuple[bool, float, float]:
    """Return ``(singular, min|diag(U_k)|, tol)`` for the LU of pivot block ``dk``."""
    n = dk.shape[0]
    eps = np.finfo(lu.dtype).eps
    tol = n * eps * max(1.0, float(np.max(np.abs(dk)))) * _PIVOT_TOL_FACTOR
    min_diag = float(np.min(np.abs(np.diag(lu))))
    return not (min_diag > tol), min_diag, tol


def dense_block_ldu(A: ArrayLike, block_sizes: Sequence[int]) -> DenseBlockLDU:
    """Dense block LDU factorization ``A = L @ D @ U`` (Brüdigam & Manchester 2020, Alg. 1).

    ``A`` is partitioned into diagonal blocks of the given sizes. The result has a unit
    block-lower-triangular ``L``, a block-diagonal ``D`` and a unit block-upper-triangular
    ``U`` with ``L @ D @ U == A`` up to rounding; no permutation is applied across blocks, so
    every leading block principal submatrix of ``A`` must be nonsingular (e.g. KKT matrices
    whose constraint blocks come after the bodies they couple). Within a pivot block, the
    pivot ``D_k`` is factored with LU with partial pivoting (:func:`scipy.linalg.lu_factor`)
    and ``D_k^{-1}`` is only ever applied through :func:`scipy.linalg.lu_solve`, never formed.

    This is Alg. 1's arithmetic reordered: a right-looking block elimination (for each block
    ``k``: factor the pivot ``D_k``, form block column ``k`` of ``L`` and block row ``k`` of
    ``U``, then update the trailing submatrix with one matrix product) instead of the paper's
    row-wise loops. The flop count is the same, O(N³), with O(number of blocks) Python-level
    iterations.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (N, N)
        Square, finite matrix. Sparse input is densified with ``.toarray()``. ``A`` is not
        modified.
    block_sizes : sequence of int
        Positive block sizes summing to ``N``.

    Returns
    -------
    DenseBlockLDU
        The factors ``L``, ``D``, ``U`` (dense ndarrays) and a :meth:`~DenseBlockLDU.solve`
        method implementing Alg. 2.

    Raises
    ------
    ShapeError
        If ``A`` is not a non-empty square 2-D matrix, or the block sizes are not positive
        ints summing to ``N``.
    NonFiniteError
        If ``A`` contains NaN or infinity.
    SingularBlockError
        If a pivot block ``D_k`` is not finite, or is numerically singular, i.e.
        ``min |diag(U_k)| <= n_k * eps * max(1, max|D_k|) * 10`` where ``P_k L_k U_k = D_k``
        is its partial-pivoting LU and ``n_k`` its size; or if forming the ``L``/``U``
        multipliers of block ``k`` overflows. ``.node`` is the block index ``k``.

    References
    ----------
    Brüdigam & Manchester 2020, Alg. 1-2: J. Brüdigam and Z. Manchester, "Linear-Time
    Variational Integrators in Maximal Coordinates", WAFR 2020, §4.1.

    Examples
    --------
    >>> import numpy as np
    >>> from graphsolve.dense import dense_block_ldu
    >>> A = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 2.0, 5.0]])
    >>> f = dense_block_ldu(A, [1, 2])
    >>> f.block_sizes
    (1, 2)
    >>> bool(np.allclose(f.L @ f.D @ f.U, A))
    True
    >>> f.L[1:, :1]  # block column 0 of L = A[1:, :1] / 4
    array([[0.25],
           [0.  ]])
    >>> x = f.solve([1.0, 2.0, 3.0])
    >>> bool(np.allclose(A @ x, [1.0, 2.0, 3.0]))
    True
    """
    W = _as_square_matrix(A)  # private working copy, overwritten in place as in Alg. 1
    n = W.shape[0]
    sizes = _check_block_sizes(block_sizes, n)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(int)
    pivot_lu: list[tuple[NDArray, NDArray]] = []

    # Overflow/invalid operations are detected explicitly below (finiteness checks).
    with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        for k, nk in enumerate(sizes):
            lo, hi = offsets[k], offsets[k + 1]
            dk = W[lo:hi, lo:hi]
            if not np.isfinite(dk).all():
                raise SingularBlockError(
                    f"pivot block {k} (size {nk}x{nk}, rows {lo}:{hi}) is not finite after "
                    "eliminating the preceding blocks (overflow); the matrix is numerically "
                    "singular in this block ordering",
                    node=k,
                )
            lu_piv = scipy.linalg.lu_factor(dk, check_finite=False)
            singular, min_diag, tol = _pivot_singular(lu_piv[0], dk)
            if singular:
                raise SingularBlockError(
                    f"pivot block {k} (size {nk}x{nk}, rows {lo}:{hi}) is singular: "
                    f"min |diag(U_k)| = {min_diag:.3g} <= tolerance {tol:.3g}",
                    node=k,
                )
            pivot_lu.append(lu_piv)
            if hi == n:
                break
            # Block column k of L:  L[t, k] = W[t, k] D_k^{-1}  <=>  D_k^T L[t, k]^T = W[t, k]^T.
            l_col = scipy.linalg.lu_solve(lu_piv, W[hi:, lo:hi].T, trans=1, check_finite=False).T
            # Block row k of U:  U[k, t] = D_k^{-1} W[k, t].
            u_row = scipy.linalg.lu_solve(lu_piv, W[lo:hi, hi:], check_finite=False)
            if not (np.isfinite(l_col).all() and np.isfinite(u_row).all()):
                raise SingularBlockError(
                    f"pivot block {k} (size {nk}x{nk}, rows {lo}:{hi}) is numerically singular "
                    "relative to its off-diagonal couplings: the L/U multipliers overflowed",
                    node=k,
                )
            # Trailing update (Alg. 1 lines 4 and 9):  W[t, t] -= L[t, k] D_k U[k, t].
            W[hi:, hi:] -= l_col @ W[lo:hi, hi:]
            W[hi:, lo:hi] = l_col
            W[lo:hi, hi:] = u_row

    # Unpack the in-place result into the three factors.
    eye = np.eye(n, dtype=W.dtype)
    L = eye.copy()
    D = np.zeros_like(W)
    U = eye
    for k in range(len(sizes)):
        lo, hi = offsets[k], offsets[k + 1]
        D[lo:hi, lo:hi] = W[lo:hi, lo:hi]
        L[hi:, lo:hi] = W[hi:, lo:hi]
        U[lo:hi, hi:] = W[lo:hi, hi:]
    return DenseBlockLDU(sizes, L, D, U, pivot_lu)


# ---------------------------------------------------------------------------------------------
# LAPACK LU
# ---------------------------------------------------------------------------------------------


class DenseLU:
    """LAPACK LU factorization ``P L U = A`` as returned by :func:`lapack_lu`.

    Parameters
    ----------
    lu : ndarray, shape (N, N)
        Combined ``L`` (unit, strictly lower part) and ``U`` factors from ``getrf``.
    piv : ndarray, shape (N,)
        Pivot indices from ``getrf`` (row ``i`` was interchanged with row ``piv[i]``).

    Attributes
    ----------
    lu, piv
        As above.
    N : int
        Order of the factored matrix.
    """

    __slots__ = ("lu", "piv", "N")

    def __init__(self, lu: NDArray, piv: NDArray) -> None:
        self.lu = lu
        self.piv = piv
        self.N = int(lu.shape[0])

    def __repr__(self) -> str:
        return f"DenseLU(N={self.N})"

    def solve(self, b: ArrayLike) -> NDArray:
        """Solve ``A x = b`` with LAPACK ``getrs`` (:func:`scipy.linalg.lu_solve`).

        Parameters
        ----------
        b : array_like, shape (N,) or (N, k)
            Right-hand side(s); must be finite.

        Returns
        -------
        x : ndarray
            Solution with the same shape as ``b``.

        Raises
        ------
        ShapeError
            If ``b`` is not 1-D or 2-D or its first dimension is not ``N``.
        NonFiniteError
            If ``b`` contains NaN or infinity.

        References
        ----------
        Brüdigam & Manchester 2020, Alg. 1-2 (the dense baseline this replaces with LAPACK).

        Examples
        --------
        >>> import numpy as np
        >>> from graphsolve.dense import lapack_lu
        >>> lapack_lu([[0.0, 2.0], [1.0, 1.0]]).solve([2.0, 3.0])
        array([2., 1.])
        """
        b_arr = _check_rhs(b, self.N)
        dtype = np.result_type(b_arr.dtype, self.lu.dtype, np.float64)
        return scipy.linalg.lu_solve(
            (self.lu, self.piv), b_arr.astype(dtype, copy=False), check_finite=False
        )


def lapack_lu(A: ArrayLike) -> DenseLU:
    """LU factorization with partial pivoting via LAPACK ``getrf`` (:func:`scipy.linalg.lu_factor`).

    A thin baseline wrapper with the same validation and error types as
    :func:`dense_block_ldu`; rows are permuted freely, so no block ordering is required.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (N, N)
        Square, finite matrix. Sparse input is densified with ``.toarray()``. ``A`` is not
        modified.

    Returns
    -------
    DenseLU
        Object exposing ``.lu``, ``.piv`` and :meth:`~DenseLU.solve`.

    Raises
    ------
    ShapeError
        If ``A`` is not a non-empty square 2-D matrix.
    NonFiniteError
        If ``A`` contains NaN or infinity, or the factors overflow.
    SingularBlockError
        If ``A`` is singular (an exactly zero pivot in ``U``, or LAPACK/SciPy reports a
        singular matrix). ``.node`` is ``None``.

    References
    ----------
    Brüdigam & Manchester 2020, Alg. 1-2 (dense LDU baseline; here delegated to LAPACK).

    Examples
    --------
    >>> import numpy as np
    >>> from graphsolve.dense import lapack_lu
    >>> f = lapack_lu(np.array([[0.0, 2.0], [1.0, 1.0]]))
    >>> f.piv.tolist()  # row 0 was swapped with row 1
    [1, 1]
    >>> f.solve(np.array([[2.0], [3.0]]))
    array([[2.],
           [1.]])
    """
    W = _as_square_matrix(A)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            lu, piv = scipy.linalg.lu_factor(W, overwrite_a=True, check_finite=False)
    except (scipy.linalg.LinAlgWarning, np.linalg.LinAlgError) as exc:
        raise SingularBlockError(f"matrix of shape {W.shape} is singular: {exc}") from exc
    diag = np.abs(np.diag(lu))
    if not np.isfinite(lu).all():
        raise NonFiniteError(f"LU factors of the {W.shape} matrix overflowed")
    if np.any(diag == 0.0):
        i = int(np.flatnonzero(diag == 0.0)[0])
        raise SingularBlockError(
            f"matrix of shape {W.shape} is singular: U[{i}, {i}] is exactly zero"
        )
    return DenseLU(lu, piv)


def dense_solve(A: ArrayLike, b: ArrayLike, block_sizes: Sequence[int] | None = None) -> NDArray:
    """Solve ``A x = b`` densely: block LDU if ``block_sizes`` is given, else LAPACK LU.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (N, N)
        Square, finite matrix (not modified).
    b : array_like, shape (N,) or (N, k)
        Finite right-hand side(s).
    block_sizes : sequence of int, optional
        Positive block sizes summing to ``N``. If given, :func:`dense_block_ldu` is used
        (no pivoting across blocks); otherwise :func:`lapack_lu`.

    Returns
    -------
    x : ndarray
        Solution with the same shape as ``b``.

    Raises
    ------
    ShapeError
        On a non-square ``A``, bad block sizes or a ``b`` whose first dimension is not ``N``.
    NonFiniteError
        If ``A`` or ``b`` contains NaN or infinity.
    SingularBlockError
        If a pivot block (block LDU) or the matrix (LAPACK LU) is singular.

    References
    ----------
    Brüdigam & Manchester 2020, Alg. 1-2.

    Examples
    --------
    >>> import numpy as np
    >>> from graphsolve.dense import dense_solve
    >>> A = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> bool(np.allclose(dense_solve(A, [3.0, 4.0], block_sizes=[1, 1]), [1.0, 1.0]))
    True
    >>> bool(np.allclose(dense_solve(A, [3.0, 4.0]), [1.0, 1.0]))
    True
    """
    W = _as_square_matrix(A)
    b_arr = _check_rhs(b, W.shape[0])  # fail fast, before the O(N^3) factorization
    if block_sizes is None:
        return lapack_lu(W).solve(b_arr)
    return dense_block_ldu(W, block_sizes).solve(b_arr)
