"""Shared fixtures and numeric helpers of the graphsolve tests.

Helpers are plain functions, importable as ``from tests.conftest import rel_residual``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import graphsolve as gs

#: Every concrete numeric backend ("auto" only picks one of them). A compiled backend added to
#: ``graphsolve.factor.BACKENDS`` later is picked up by every test that takes ``backend``.
CONCRETE_BACKENDS = [b for b in gs.factor.BACKENDS if b != "auto"]


@pytest.fixture(params=CONCRETE_BACKENDS, scope="session")
def backend(request) -> str:
    """Name of a concrete backend; numeric tests pass it on as ``backend=backend``."""
    return request.param


def _as_sparse(S):
    return S if sp.issparse(S) else sp.csr_array(np.asarray(S, dtype=float))


def matrix_inf_norm(S) -> float:
    """``||S||_inf``: the largest absolute row sum of a sparse or dense matrix."""
    S = _as_sparse(S)
    return float(np.max(np.asarray(abs(S).sum(axis=1)))) if S.shape[0] else 0.0


def rel_residual(S, x, b) -> float:
    """Normwise backward error of ``x`` as a solution of ``S x = b`` (Rigal & Gaches):

        eta = ||S x - b||_inf / (||S||_inf * ||x||_inf + ||b||_inf)

    i.e. the smallest relative perturbation of ``S`` and ``b`` (measured in the infinity norm)
    for which ``x`` is an exact solution. A backward-stable solver gives ``eta`` of the order of
    the unit round-off (~1e-16) whatever the condition number of ``S``; tests accept ``1e-10``.

    ``S`` is a scipy sparse matrix/array or a dense array, ``x`` and ``b`` have shape ``(N,)`` or
    ``(N, k)``; for several right-hand sides the worst column counts. Returns 0 for ``b = 0``,
    ``x = 0``.
    """
    S = _as_sparse(S)
    x = np.asarray(x, dtype=float)
    b = np.asarray(b, dtype=float)
    assert x.shape == b.shape, f"x has shape {x.shape}, b has shape {b.shape}"
    X, B = x.reshape(x.shape[0], -1), b.reshape(b.shape[0], -1)
    nS = matrix_inf_norm(S)
    worst = 0.0
    for j in range(X.shape[1]):
        r = np.max(np.abs(S @ X[:, j] - B[:, j]), initial=0.0)
        denom = nS * np.max(np.abs(X[:, j]), initial=0.0) + np.max(np.abs(B[:, j]), initial=0.0)
        if r == 0.0:
            continue
        worst = max(worst, np.inf if denom == 0.0 else float(r / denom))
    return worst


def oracle_solve(S, b) -> np.ndarray:
    """Reference solution of ``S x = b`` by :func:`scipy.sparse.linalg.spsolve` (SuperLU), with
    the shape of ``b`` kept (spsolve flattens a single column)."""
    S = sp.csc_matrix(_as_sparse(S))
    b = np.asarray(b, dtype=float)
    x = spla.spsolve(S, b)
    return np.asarray(x).reshape(b.shape)


def dense_oracle_solve(S, b) -> np.ndarray:
    """Reference solution by :func:`numpy.linalg.solve` on the dense matrix (LAPACK gesv)."""
    dense = S.toarray() if sp.issparse(S) else np.asarray(S, dtype=float)
    return np.linalg.solve(dense, np.asarray(b, dtype=float))


def rel_error(x, x_ref) -> float:
    """``||x - x_ref||_inf / ||x_ref||_inf`` (absolute when ``x_ref`` is 0)."""
    x, x_ref = np.asarray(x, dtype=float), np.asarray(x_ref, dtype=float)
    assert x.shape == x_ref.shape, f"shapes differ: {x.shape} vs {x_ref.shape}"
    err = np.max(np.abs(x - x_ref), initial=0.0)
    scale = np.max(np.abs(x_ref), initial=0.0)
    return float(err / scale) if scale > 0 else float(err)


def finite_difference_jacobian(fun, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences ``(f(x + eps e_i) - f(x - eps e_i)) / 2 eps``, column by column."""
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        cols.append((fun(x + e) - fun(x - e)) / (2 * eps))
    return np.column_stack(cols)
