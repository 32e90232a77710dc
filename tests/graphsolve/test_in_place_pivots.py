"""LDLᵀ of a tree factors its pivot blocks in place (``D`` and ``Dlu`` one buffer, compiled
backend): queries rebuild ``D`` from the definite factors, and anything that needs an LU pivot
(indefinite, singular, non-finite, LDU) makes the factorization take a ``D`` of its own and run
again. Every result against the reference backend (separate buffers) and dense NumPy."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import graphsolve as gs
from graphsolve import generators as gen
from tests.graphsolve.test_factor import kkt_matrix, with_random_sizes


def _tree(n=30, seed=0, sizes=True):
    rng = np.random.default_rng(seed)
    G = gen.random_tree(n, seed=seed)
    return with_random_sizes(G, rng) if sizes else G


def _pair(A, **kw):
    return (gs.factorize(A, backend="compiled", **kw),
            gs.factorize(A, backend="reference", **kw))


def _assert_same_queries(F, R, S):
    b = np.random.default_rng(1).normal(size=S.shape[0])
    np.testing.assert_allclose(F.solve(b), np.linalg.solve(S, b), rtol=1e-9, atol=1e-12)
    scale = abs(R.D).max()
    np.testing.assert_allclose(F.D.toarray(), R.D.toarray(), rtol=0, atol=1e-12 * scale)
    p = F.perm
    np.testing.assert_allclose((F.L @ F.D @ F.U).toarray(), S[p][:, p], rtol=0,
                               atol=1e-11 * abs(S).max())
    np.testing.assert_allclose(F.slogdet(), np.linalg.slogdet(S), rtol=1e-10)
    lam = np.linalg.eigvalsh(S)
    assert F.inertia() == (int((lam > 0).sum()), int((lam < 0).sum()), 0)
    for system in ("D", "L", "Lt"):
        np.testing.assert_allclose(F.solve(b, system=system), R.solve(b, system=system),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sizes", [False, True], ids=["6x6", "mixed"])
def test_spd_tree_pivots_are_factored_in_place(sizes):
    A = gs.random_block_matrix(_tree(sizes=sizes), "spd", seed=3)
    F, R = _pair(A)
    assert F.method == R.method == "ldlt"
    assert F._D is F._Dlu and R._D is not R._Dlu
    _assert_same_queries(F, R, A.to_dense())
    assert F.analysis.n_updates == 0


def test_a_pattern_with_update_triples_keeps_its_own_d():
    A = gs.random_block_matrix(gen.ladder(6), "spd", seed=0)
    F = gs.factorize(A, backend="compiled", ordering="brudigam")
    assert F.analysis.n_updates > 0 and F._D is not F._Dlu


def _leaf(F):
    return int(F.analysis.order[0])             # eliminated first: its pivot is A_ii


def _with_block(A, node, block):
    B = A.copy()
    B.data[36 * node:36 * node + 36] = np.asarray(block, float).ravel()   # diagonal blocks
    return B                                                              # first, by node


def test_quasi_definite_kkt_tree_stays_in_place():
    A = kkt_matrix(gen.random_tree(12, seed=2), seed=4)   # negative definite joint pivots
    F, R = _pair(A, method="ldlt")
    assert F._D is F._Dlu
    _assert_same_queries(F, R, A.to_dense())
    assert F.inertia().negative > 0


def test_indefinite_pivot_takes_its_own_d_and_factors_again():
    A = gs.random_block_matrix(_tree(20, seed=5, sizes=False), "spd", seed=1)
    an = gs.analyze(A)
    B = _with_block(A, int(an.order[0]), np.diag([10.0, -10, 10, 10, 10, 10]))
    F, R = _pair(B, method="ldlt", analysis=an)
    assert F._D is not F._Dlu
    _assert_same_queries(F, R, B.to_dense())


def test_refactor_in_place_then_indefinite_then_definite_again():
    G = _tree(20, seed=5, sizes=False)
    A1 = gs.random_block_matrix(G, "spd", seed=1)
    F = gs.factorize(A1, backend="compiled")
    assert F._D is F._Dlu
    A2 = gs.random_block_matrix(G, "spd", seed=2)
    F.refactor(A2)
    assert F._D is F._Dlu
    _assert_same_queries(F, gs.factorize(A2, backend="reference"), A2.to_dense())
    A3 = _with_block(A2, _leaf(F), np.diag([10.0, -10, 10, 10, 10, 10]))
    F.refactor(A3)
    assert F._D is not F._Dlu                                 # from now on, for good
    _assert_same_queries(F, gs.factorize(A3, backend="reference", method="ldlt",
                                         analysis=F.analysis), A3.to_dense())
    F.refactor(A1)
    assert F._D is not F._Dlu
    _assert_same_queries(F, gs.factorize(A1, backend="reference"), A1.to_dense())


def test_singular_and_non_finite_pivots_raise_as_with_separate_buffers():
    A = gs.random_block_matrix(_tree(15, seed=7, sizes=False), "spd", seed=0)
    an = gs.analyze(A)
    leaf = int(an.order[0])
    S = _with_block(A, leaf, np.zeros((6, 6)))
    for backend in ("compiled", "reference"):
        with pytest.raises(gs.SingularBlockError) as exc:
            gs.factorize(S, analysis=an, backend=backend, method="ldlt")
        assert exc.value.node == leaf
    block = A.data[36 * leaf:36 * leaf + 36].copy()
    block[7] = np.nan
    with pytest.raises(gs.NonFiniteError):
        gs.factorize(_with_block(A, leaf, block), analysis=an, backend="compiled")


def test_unsymmetric_tree_with_auto_method_becomes_ldu():
    A = gs.random_block_matrix(_tree(), "unsymmetric", seed=2)
    F = gs.factorize(A, backend="compiled")
    assert F.method == "ldu" and F._D is not F._Dlu
    b = np.ones(A.shape[0])
    np.testing.assert_allclose(A.to_scipy() @ F.solve(b), b, atol=1e-9)


def test_in_place_factorization_pickles_with_its_aliasing():
    A = gs.random_block_matrix(_tree(), "spd", seed=6)
    F = gs.factorize(A, backend="compiled")
    G = pickle.loads(pickle.dumps(F))
    assert G._D is G._Dlu
    b = np.arange(A.shape[0], dtype=float)
    np.testing.assert_array_equal(G.solve(b), F.solve(b))
    assert G.slogdet() == F.slogdet() and G.inertia() == F.inertia()
    G.refactor(A)
    np.testing.assert_array_equal(G.solve(b), F.solve(b))
