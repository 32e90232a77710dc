"""Tests for graphsolve.dense: dense block LDU (Brüdigam & Manchester 2020, Alg. 1-2), LAPACK LU."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsolve.dense import DenseBlockLDU, DenseLU, dense_block_ldu, dense_solve, lapack_lu
from graphsolve.errors import GraphSolveError, NonFiniteError, ShapeError, SingularBlockError

MIXED_SIZES = [3, 1, 7, 2, 5, 1, 4, 6]


def diag_dominant(n: int, rng: np.random.Generator) -> np.ndarray:
    """Random unsymmetric matrix made strictly row diagonally dominant."""
    A = rng.standard_normal((n, n))
    A += np.diag(np.abs(A).sum(axis=1) + 1.0)
    return A


def block_masks(sizes: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boolean masks (diagonal blocks, strictly block-lower, strictly block-upper)."""
    labels = np.repeat(np.arange(len(sizes)), sizes)
    diag = labels[:, None] == labels[None, :]
    lower = labels[:, None] > labels[None, :]
    upper = labels[:, None] < labels[None, :]
    return diag, lower, upper


def check_factors(f: DenseBlockLDU, A: np.ndarray, sizes: list[int]) -> None:
    n = A.shape[0]
    diag, lower, upper = block_masks(sizes)
    eye = np.eye(n)
    assert f.block_sizes == tuple(sizes)
    assert f.L.shape == f.D.shape == f.U.shape == (n, n)
    # L: identity diagonal blocks, zero strictly-block-upper part.
    np.testing.assert_array_equal(f.L[diag], eye[diag])
    np.testing.assert_array_equal(f.L[upper], 0.0)
    # U: identity diagonal blocks, zero strictly-block-lower part.
    np.testing.assert_array_equal(f.U[diag], eye[diag])
    np.testing.assert_array_equal(f.U[lower], 0.0)
    # D: block diagonal.
    np.testing.assert_array_equal(f.D[~diag], 0.0)
    # Reconstruction to 1e-12 relative.
    rel = np.linalg.norm(f.L @ f.D @ f.U - A) / np.linalg.norm(A)
    assert rel < 1e-12


# ---------------------------------------------------------------------------------------------
# Correctness
# ---------------------------------------------------------------------------------------------


def test_block_ldu_factors_and_solve_vector_and_multi_rhs() -> None:
    rng = np.random.default_rng(0)
    n = sum(MIXED_SIZES)
    A = diag_dominant(n, rng)
    f = dense_block_ldu(A, MIXED_SIZES)
    assert isinstance(f, DenseBlockLDU)
    check_factors(f, A, MIXED_SIZES)

    b = rng.standard_normal(n)
    x = f.solve(b)
    assert x.shape == (n,)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-10, atol=1e-12)

    B = rng.standard_normal((n, 4))
    X = f.solve(B)
    assert X.shape == (n, 4)
    np.testing.assert_allclose(X, np.linalg.solve(A, B), rtol=1e-10, atol=1e-12)

    B1 = rng.standard_normal((n, 1))
    assert f.solve(B1).shape == (n, 1)


def test_single_block_and_scalar_blocks() -> None:
    rng = np.random.default_rng(1)
    A = diag_dominant(6, rng)
    b = rng.standard_normal(6)
    for sizes in ([6], [1] * 6):
        f = dense_block_ldu(A, sizes)
        check_factors(f, A, sizes)
        np.testing.assert_allclose(f.solve(b), np.linalg.solve(A, b), rtol=1e-10)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=8),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    nrhs=st.sampled_from([None, 1, 3]),
)
def test_property_random_block_sizes(sizes: list[int], seed: int, nrhs: int | None) -> None:
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    A = diag_dominant(n, rng)
    f = dense_block_ldu(A, sizes)
    check_factors(f, A, sizes)
    b = rng.standard_normal(n if nrhs is None else (n, nrhs))
    x = f.solve(b)
    assert x.shape == b.shape
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-11)


def kkt_chain(nbodies: int, rng: np.random.Generator) -> tuple[np.ndarray, list[int]]:
    """Symmetric indefinite [[M, J^T], [J, 0]] for a chain, ordered body, body, joint, ...

    Each joint (zero diagonal block) comes after the two bodies it connects.
    """
    body, joint = 6, 5
    order: list[tuple[str, int]] = [("b", 0)]
    for i in range(1, nbodies):
        order += [("b", i), ("j", i - 1)]  # joint i-1 connects bodies i-1 and i
    sizes = [body if kind == "b" else joint for kind, _ in order]
    offs = np.concatenate(([0], np.cumsum(sizes)))
    where = {node: (offs[k], offs[k + 1]) for k, node in enumerate(order)}
    n = int(offs[-1])
    A = np.zeros((n, n))
    for i in range(nbodies):
        lo, hi = where[("b", i)]
        G = rng.standard_normal((body, body))
        A[lo:hi, lo:hi] = G @ G.T + body * np.eye(body)
    for j in range(nbodies - 1):
        jl, jh = where[("j", j)]
        for i in (j, j + 1):
            lo, hi = where[("b", i)]
            Jb = rng.standard_normal((joint, body))
            A[jl:jh, lo:hi] = Jb
            A[lo:hi, jl:jh] = Jb.T
    return A, sizes


def test_kkt_symmetric_indefinite() -> None:
    rng = np.random.default_rng(2)
    A, sizes = kkt_chain(5, rng)
    assert np.allclose(A, A.T)
    eig = np.linalg.eigvalsh(A)
    assert eig.min() < 0 < eig.max()
    f = dense_block_ldu(A, sizes)
    check_factors(f, A, sizes)
    b = rng.standard_normal((A.shape[0], 2))
    np.testing.assert_allclose(f.solve(b), np.linalg.solve(A, b), rtol=1e-9, atol=1e-11)
    # Symmetric A with no pivoting across blocks: U = L^T.
    np.testing.assert_allclose(f.U, f.L.T, atol=1e-10)


def test_sparse_input_and_input_not_modified() -> None:
    rng = np.random.default_rng(3)
    A = diag_dominant(10, rng)
    A_copy = A.copy()
    f = dense_block_ldu(A, [4, 3, 3])
    np.testing.assert_array_equal(A, A_copy)
    lapack_lu(A)
    dense_solve(A, np.ones(10), block_sizes=[4, 3, 3])
    np.testing.assert_array_equal(A, A_copy)

    S = scipy.sparse.csr_matrix(A)
    fs = dense_block_ldu(S, [4, 3, 3])
    np.testing.assert_allclose(fs.D, f.D)
    np.testing.assert_array_equal(S.toarray(), A_copy)
    b = rng.standard_normal(10)
    np.testing.assert_allclose(lapack_lu(S).solve(b), np.linalg.solve(A, b), rtol=1e-10)


def test_dense_solve_dispatch() -> None:
    rng = np.random.default_rng(4)
    A = diag_dominant(9, rng)
    b = rng.standard_normal((9, 2))
    expected = np.linalg.solve(A, b)
    np.testing.assert_allclose(dense_solve(A, b, block_sizes=[2, 7]), expected, rtol=1e-10)
    np.testing.assert_allclose(dense_solve(A, b), expected, rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# LAPACK LU
# ---------------------------------------------------------------------------------------------


def test_lapack_lu_matches_numpy() -> None:
    rng = np.random.default_rng(5)
    A = rng.standard_normal((12, 12))  # needs pivoting in general
    f = lapack_lu(A)
    assert isinstance(f, DenseLU)
    assert f.lu.shape == (12, 12) and f.piv.shape == (12,)
    b = rng.standard_normal(12)
    B = rng.standard_normal((12, 3))
    np.testing.assert_allclose(f.solve(b), np.linalg.solve(A, b), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(f.solve(B), np.linalg.solve(A, B), rtol=1e-9, atol=1e-11)
    assert f.solve(b).shape == (12,)


def test_lapack_lu_singular() -> None:
    A = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [4.0, 5.0, 6.0]])
    with pytest.raises(SingularBlockError, match="singular") as info:
        lapack_lu(A)
    assert info.value.node is None
    with pytest.raises(np.linalg.LinAlgError):
        dense_solve(A, np.ones(3))


def test_lapack_lu_validation() -> None:
    with pytest.raises(ShapeError, match=r"\(2, 3\)"):
        lapack_lu(np.ones((2, 3)))
    with pytest.raises(NonFiniteError):
        lapack_lu(np.array([[1.0, np.nan], [0.0, 1.0]]))
    f = lapack_lu(np.eye(3))
    with pytest.raises(ShapeError, match="expected 3, got 4"):
        f.solve(np.ones(4))
    with pytest.raises(NonFiniteError):
        f.solve(np.array([1.0, np.inf, 0.0]))


# ---------------------------------------------------------------------------------------------
# Failure modes of the block LDU
# ---------------------------------------------------------------------------------------------


def test_zero_first_block_is_singular() -> None:
    rng = np.random.default_rng(6)
    A = diag_dominant(7, rng)
    A[:2, :2] = 0.0
    # The matrix itself is nonsingular (LAPACK pivots across blocks) ...
    lapack_lu(A)
    # ... but the block LDU without cross-block pivoting fails at block 0.
    with pytest.raises(SingularBlockError, match=r"block 0 \(size 2x2") as info:
        dense_block_ldu(A, [2, 5])
    assert info.value.node == 0
    for exc_type in (np.linalg.LinAlgError, ValueError, GraphSolveError):
        with pytest.raises(exc_type):
            dense_block_ldu(A, [2, 5])


def test_singular_later_block_reports_its_index() -> None:
    # A = L D U with exactly representable integer factors and D_1 = 0, so the Schur
    # complement reaching pivot block 1 is exactly zero.
    rng = np.random.default_rng(7)
    sizes = [2, 3, 2]
    diag, lower, upper = block_masks(sizes)
    Lm = np.eye(7) + np.where(lower, rng.integers(-3, 4, (7, 7)), 0)
    Um = np.eye(7) + np.where(upper, rng.integers(-3, 4, (7, 7)), 0)
    Dm = np.eye(7)
    Dm[2:5, 2:5] = 0.0
    A = Lm @ Dm @ Um
    with pytest.raises(SingularBlockError, match=r"block 1 \(size 3x3") as info:
        dense_block_ldu(A, sizes)
    assert info.value.node == 1


def test_overflowing_pivot_is_singular() -> None:
    # Schur complement 1 - 1e200 * 1e200 overflows to -inf: pivot block 1 is not finite.
    A = np.array([[1.0, 1e200], [1e200, 1.0]])
    with pytest.raises(SingularBlockError, match="not finite") as info:
        dense_block_ldu(A, [1, 1])
    assert info.value.node == 1
    # Multipliers 1e300 / 1e-10 overflow while forming block column 0 of L.
    B = np.array([[1e-10, 1.0], [1e300, 1.0]])
    with pytest.raises(SingularBlockError, match="overflowed") as info:
        dense_block_ldu(B, [1, 1])
    assert info.value.node == 0


def test_block_sizes_not_summing_to_n() -> None:
    A = np.eye(5)
    with pytest.raises(ShapeError, match=r"sum to 6 .*N = 5"):
        dense_block_ldu(A, [2, 4])
    with pytest.raises(ShapeError, match="positive int"):
        dense_block_ldu(A, [5, 0])
    with pytest.raises(ShapeError, match="positive int"):
        dense_block_ldu(A, [2.5, 2.5])
    with pytest.raises(ShapeError):
        dense_solve(A, np.ones(5), block_sizes=[1, 1])


def test_non_square_a() -> None:
    with pytest.raises(ShapeError, match=r"\(3, 4\)"):
        dense_block_ldu(np.ones((3, 4)), [3])
    with pytest.raises(ShapeError, match=r"\(4,\)"):
        dense_block_ldu(np.ones(4), [4])


def test_nan_in_a() -> None:
    A = np.eye(4)
    A[2, 1] = np.nan
    with pytest.raises(NonFiniteError, match=r"\(2, 1\)"):
        dense_block_ldu(A, [2, 2])
    with pytest.raises(ValueError):
        dense_solve(A, np.ones(4), block_sizes=[2, 2])


def test_inf_in_b() -> None:
    f = dense_block_ldu(np.eye(4) * 2.0, [1, 3])
    with pytest.raises(NonFiniteError):
        f.solve(np.array([1.0, np.inf, 0.0, 0.0]))
    with pytest.raises(NonFiniteError):
        dense_solve(np.eye(4), np.full((4, 2), -np.inf), block_sizes=[2, 2])


def test_wrong_b_length() -> None:
    f = dense_block_ldu(np.eye(4) * 2.0, [1, 3])
    with pytest.raises(ShapeError, match="expected 4, got 3"):
        f.solve(np.ones(3))
    with pytest.raises(ShapeError, match="expected 4, got 5"):
        f.solve(np.ones((5, 2)))
    with pytest.raises(ShapeError):
        f.solve(np.ones((4, 2, 1)))
