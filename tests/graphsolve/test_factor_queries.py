"""Factor queries (graphsolve.factor_queries): slogdet, inertia, partial and transposed solves,
the permutation matrix; every one against dense NumPy on random graphs, labellings, block sizes
and matrix kinds, on both backends."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphsolve as gs
from graphsolve import generators as gen
from tests.graphsolve.test_factor import kkt_matrix, random_graphs, with_random_sizes

PROPERTY = settings(max_examples=25, deadline=None)
KINDS = ["spd", "unsymmetric", "kkt"]


def _relabelled(G: nx.Graph, rng: np.random.Generator) -> nx.Graph:
    perm = rng.permutation(G.number_of_nodes())
    return nx.relabel_nodes(G, dict(enumerate(perm.tolist())))


def _matrix(G0, kind, rng) -> gs.BlockMatrix:
    if kind == "kkt":
        return kkt_matrix(G0, int(rng.integers(2, 7)), 1, seed=int(rng.integers(2**31)))
    G = with_random_sizes(_relabelled(G0, rng), rng)
    return gs.random_block_matrix(G, kind, seed=int(rng.integers(2**31)))


def _method(kind):
    return "ldu" if kind == "unsymmetric" else "ldlt"


@given(G0=random_graphs(max_n=14, max_extra=4), kind=st.sampled_from(KINDS),
       ordering=st.sampled_from(["auto", "brudigam", "amd", "nd"]),
       seed=st.integers(0, 2**31 - 1))
@PROPERTY
def test_property_slogdet_inertia_and_partial_solves(backend, G0, kind, ordering, seed):
    rng = np.random.default_rng(seed)
    A = _matrix(G0, kind, rng)
    S = A.to_scipy().toarray()
    F = gs.factorize(A, method=_method(kind), ordering=ordering, backend=backend)
    N = S.shape[0]

    sign, logdet = F.slogdet()
    ref_sign, ref_logdet = np.linalg.slogdet(S)
    assert sign == ref_sign
    assert logdet == pytest.approx(ref_logdet, rel=1e-10, abs=1e-9)

    if kind != "unsymmetric":
        lam = np.linalg.eigvalsh(S)
        expected = (int(np.sum(lam > 0)), int(np.sum(lam < 0)), 0)
        assert tuple(F.inertia()) == expected
        if kind == "kkt":
            rows = {r: 0 for r in ("body", "constraint")}
            for v in range(A.n_nodes):
                rows[A.graph.nodes[v]["role"]] += int(A.block_sizes[v])
            assert expected == (rows["body"], rows["constraint"], 0)

    # partial solves against the explicit factors, and their composition
    P = F.P.toarray()
    Ld, Dd, Ud = F.L.toarray(), F.D.toarray(), F.U.toarray()
    np.testing.assert_allclose(P @ S @ P.T, Ld @ Dd @ Ud, atol=1e-9 * max(1, abs(S).max()))
    b = rng.standard_normal(N)
    B = rng.standard_normal((N, 3))
    cases = {("L", "N"): Ld, ("L", "T"): Ld.T, ("Lt", "N"): Ld.T, ("Lt", "T"): Ld,
             ("D", "N"): Dd, ("D", "T"): Dd.T, ("U", "N"): Ud, ("U", "T"): Ud.T,
             ("A", "N"): S, ("A", "T"): S.T}
    for (system, trans), M in cases.items():
        for rhs in (b, B):
            x = F.solve(rhs, system=system, trans=trans)
            assert x.shape == rhs.shape
            np.testing.assert_allclose(M @ x, rhs, atol=1e-8 * np.abs(rhs).max() * max(
                1, np.linalg.cond(M)), err_msg=f"{system} {trans}")
    np.testing.assert_array_equal(F.solve(b, "P"), P @ b)
    np.testing.assert_array_equal(F.solve(b, "Pt"), P.T @ b)
    np.testing.assert_array_equal(F.solve(b, "P", trans="T"), P.T @ b)
    x = F.solve(b, "P")
    for system in ("L", "D", "U", "Pt"):
        x = F.solve(x, system)
    np.testing.assert_allclose(x, F.solve(b), rtol=1e-8, atol=1e-10 * np.abs(F.solve(b)).max())
    op = F.aslinearoperator()
    np.testing.assert_allclose(S.T @ op.rmatvec(b), b, atol=1e-8 * max(1, np.linalg.cond(S)))


def test_slogdet_negative_and_huge_determinants():
    # 400 blocks with |det| ~ 1e4 each: det overflows float64, slogdet does not
    A = gs.random_block_matrix(gen.path(400), "unsymmetric", 3, seed=5)
    F = gs.factorize(A)
    sign, logdet = F.slogdet()
    ref = np.linalg.slogdet(A.to_scipy().toarray())
    assert (sign, pytest.approx(logdet, rel=1e-12)) == ref
    assert logdet > np.log(np.finfo(float).max)
    A2 = A.with_data(A.data.copy())
    A2.block(0, 0)[0] *= -1                              # one row negated: the sign flips
    sign2, logdet2 = gs.factorize(A2).slogdet()
    assert (sign2, pytest.approx(logdet2, rel=1e-12)) == np.linalg.slogdet(
        A2.to_scipy().toarray())


def test_inertia_of_an_indefinite_spd_shift_and_the_zero_tolerance():
    A = gs.random_block_matrix(gen.net(4), "spd", 3, seed=1)
    S = A.to_scipy().toarray()
    shift = float(np.median(np.linalg.eigvalsh(S)))
    A2 = A.with_data(A.data.copy())
    for v in range(A.n_nodes):
        A2.block(v, v)[...] -= shift * np.eye(3)
    S2 = A2.to_scipy().toarray()
    lam = np.linalg.eigvalsh(S2)
    F = gs.factorize(A2, method="ldlt", ordering="amd")
    assert tuple(F.inertia()) == (int(np.sum(lam > 0)), int(np.sum(lam < 0)), 0)
    # with a tolerance above every pivot eigenvalue everything counts as zero
    assert F.inertia(tol=1e300) == gs.factor_queries.Inertia(0, 0, S.shape[0])
    with pytest.raises(ValueError, match="tol"):
        F.inertia(tol=-1.0)


def test_inertia_of_an_ldu_factor_of_a_symmetric_matrix_and_refusal_when_unsymmetric():
    A = gs.random_block_matrix(gen.ladder(6), "spd", 2, seed=3)
    F = gs.factorize(A, method="ldu")
    assert F.inertia() == (A.shape[0], 0, 0)
    U = gs.random_block_matrix(gen.ladder(6), "unsymmetric", 2, seed=3)
    with pytest.raises(gs.GraphSolveError, match="symmetric"):
        gs.factorize(U).inertia()


def test_queries_refuse_a_failed_factorization_and_bad_arguments():
    A = gs.random_block_matrix(gen.path(4), "spd", 2, seed=0)
    F = gs.factorize(A)
    b = np.ones(A.shape[0])
    with pytest.raises(ValueError, match="system"):
        F.solve(b, system="LD")
    with pytest.raises(ValueError, match="trans"):
        F.solve(b, trans="C")
    with pytest.raises(gs.NonFiniteError):
        F.solve(np.full(A.shape[0], np.nan), system="L")
    with pytest.raises(gs.DTypeError):
        F.solve(b + 1j, system="D")
    with pytest.raises(gs.ShapeError):
        F.solve(np.ones(3), system="U")
    bad = A.with_data(A.data.copy())
    bad.block(1, 1)[...] = 0.0
    bad.block(0, 1)[...] = 0.0
    bad.block(1, 0)[...] = 0.0
    bad.block(1, 2)[...] = 0.0
    bad.block(2, 1)[...] = 0.0
    with pytest.raises(gs.SingularBlockError):
        F.refactor(bad)
    for query in (F.slogdet, F.inertia, lambda: F.solve(b, "L"), lambda: F.solve(b, trans="T")):
        with pytest.raises(gs.GraphSolveError, match="not valid"):
            query()


def test_batch_slogdet_and_inertia(backend):
    G = gen.constraint_graph(gen.ladder(4), body_size=3, constraint_size=2)
    A = gs.random_block_matrix(G, "kkt", seed=0)
    rng = np.random.default_rng(0)
    values = np.stack([gs.random_block_matrix(G, "kkt", seed=s).data for s in range(4)])
    values[2] *= -1.0                                        # flips the inertia
    Fb = gs.factorize_batch(A, values, method="ldlt", backend=backend)
    sign, logdet = Fb.slogdet()
    inert = Fb.inertia()
    assert sign.shape == logdet.shape == (4,)
    for k in range(4):
        S = A.with_data(values[k]).to_scipy().toarray()
        assert (sign[k], pytest.approx(logdet[k], rel=1e-10)) == np.linalg.slogdet(S)
        lam = np.linalg.eigvalsh(S)
        assert tuple(inert[k]) == (int(np.sum(lam > 0)), int(np.sum(lam < 0)), 0)
    assert inert[2] == (inert[0].negative, inert[0].positive, 0)
    Fu = gs.factorize_batch(A, values + 0.01 * rng.standard_normal(values.shape), method="ldu",
                            backend=backend)
    with pytest.raises(gs.GraphSolveError, match="ldlt"):
        Fu.inertia()


def test_factor_queries_survive_pickling():
    import pickle

    A = gs.random_block_matrix(gen.net(3), "unsymmetric", 2, seed=0)
    F = gs.factorize(A)
    F2 = pickle.loads(pickle.dumps(F))
    b = np.arange(A.shape[0], dtype=float)
    assert F2.slogdet() == F.slogdet()
    np.testing.assert_array_equal(F2.solve(b, trans="T"), F.solve(b, trans="T"))
