"""Factor queries (graphsolve.factor_queries): slogdet, inertia, partial and transposed solves,
the permutation matrix; every one against dense NumPy on random graphs, labellings, block sizes
and matrix kinds, on both backends, for single factorizations and for batches (the batch's
queries and every item ``F[k]`` as a Factorization)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
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


def check_queries(F: gs.Factorization, S: np.ndarray, kind: str, rng: np.random.Generator
                  ) -> None:
    """Every query of ``F`` (a factorization of the dense ``S``) against dense NumPy."""
    N = S.shape[0]
    sign, logdet = F.slogdet()
    ref_sign, ref_logdet = np.linalg.slogdet(S)
    assert sign == ref_sign
    assert logdet == pytest.approx(ref_logdet, rel=1e-10, abs=1e-9)

    if kind != "unsymmetric":
        lam = np.linalg.eigvalsh(S)
        assert tuple(F.inertia()) == (int(np.sum(lam > 0)), int(np.sum(lam < 0)), 0)

    # partial solves against the explicit factors, and their composition
    P = F.P.toarray()
    np.testing.assert_array_equal(P, np.eye(N)[F.perm])
    Ld, Dd, Ud = F.L.toarray(), F.D.toarray(), F.U.toarray()
    np.testing.assert_allclose(P @ S @ P.T, Ld @ Dd @ Ud, atol=1e-9 * max(1, abs(S).max()))
    assert np.allclose(np.tril(Ld), Ld) and np.allclose(np.diag(Ld), 1.0)
    assert np.allclose(np.triu(Ud), Ud) and np.allclose(np.diag(Ud), 1.0)
    b = rng.standard_normal(N)
    B = rng.standard_normal((N, 3))
    for (system, trans), (M, cond) in dense_systems(S, P, Ld, Dd, Ud).items():
        for rhs in (b, B):
            x = F.solve(rhs, system=system, trans=trans)
            assert x.shape == rhs.shape
            assert_solved(M, cond, x, rhs, f"{system} {trans}")
    x = F.solve(b, "P")
    for system in ("L", "D", "U", "Pt"):
        x = F.solve(x, system)
    np.testing.assert_allclose(x, F.solve(b), rtol=1e-8, atol=1e-10 * np.abs(F.solve(b)).max())
    op = F.aslinearoperator()
    np.testing.assert_allclose(S.T @ op.rmatvec(b), b, atol=1e-8 * max(1, np.linalg.cond(S)))


def dense_systems(S, P, Ld, Dd, Ud) -> dict[tuple[str, str], tuple[np.ndarray, float]]:
    """``{(system, trans): (M, cond(M))}``: ``solve(b, system, trans)`` solves ``M x = b``."""
    cond = {id(M): np.linalg.cond(M) for M in (S, Ld, Dd, Ud)} | {id(P): 1.0}
    pairs = {("L", "N"): (Ld, False), ("L", "T"): (Ld, True), ("Lt", "N"): (Ld, True),
             ("Lt", "T"): (Ld, False), ("D", "N"): (Dd, False), ("D", "T"): (Dd, True),
             ("U", "N"): (Ud, False), ("U", "T"): (Ud, True), ("A", "N"): (S, False),
             ("A", "T"): (S, True), ("P", "N"): (P, True), ("P", "T"): (P, False),
             ("Pt", "N"): (P, False), ("Pt", "T"): (P, True)}
    return {key: (M.T if t else M, cond[id(M)]) for key, (M, t) in pairs.items()}


def assert_solved(M: np.ndarray, cond: float, x: np.ndarray, rhs: np.ndarray, msg: str = ""
                  ) -> None:
    np.testing.assert_allclose(M @ x, rhs, atol=1e-8 * np.abs(rhs).max() * max(1, cond),
                               err_msg=msg)


@given(G0=random_graphs(max_n=14, max_extra=4), kind=st.sampled_from(KINDS),
       ordering=st.sampled_from(["auto", "brudigam", "amd", "nd"]),
       seed=st.integers(0, 2**31 - 1))
@PROPERTY
def test_property_slogdet_inertia_and_partial_solves(backend, G0, kind, ordering, seed):
    rng = np.random.default_rng(seed)
    A = _matrix(G0, kind, rng)
    S = A.to_scipy().toarray()
    F = gs.factorize(A, method=_method(kind), ordering=ordering, backend=backend)
    check_queries(F, S, kind, rng)
    b = rng.standard_normal(S.shape[0])
    P = F.P.toarray()
    np.testing.assert_array_equal(F.solve(b, "P"), P @ b)
    np.testing.assert_array_equal(F.solve(b, "Pt"), P.T @ b)
    np.testing.assert_array_equal(F.solve(b, "P", trans="T"), P.T @ b)
    if kind == "kkt":
        rows = {r: 0 for r in ("body", "constraint")}
        for v in range(A.n_nodes):
            rows[A.graph.nodes[v]["role"]] += int(A.block_sizes[v])
        assert tuple(F.inertia()) == (rows["body"], rows["constraint"], 0)


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


def _batch(G0, kind, B, rng) -> tuple[gs.BlockMatrix, np.ndarray]:
    """A template and ``B`` independent random matrices of ``kind`` on its layout (an item
    of a symmetric kind negated at random: other signs and inertias in one batch)."""
    if kind == "kkt":
        G = gen.constraint_graph(G0, body_size=int(rng.integers(2, 7)), constraint_size=1)
    else:
        G = with_random_sizes(_relabelled(G0, rng), rng)
    mats = [gs.random_block_matrix(G, kind, seed=int(rng.integers(2**31))) for _ in range(B)]
    values = np.stack([M.data for M in mats])
    if kind != "unsymmetric":
        values[rng.random(B) < 0.5] *= -1.0
    return mats[0], values


@given(G0=random_graphs(max_n=12, max_extra=4), kind=st.sampled_from(KINDS),
       ordering=st.sampled_from(["auto", "brudigam", "amd", "nd"]), B=st.integers(1, 4),
       seed=st.integers(0, 2**31 - 1))
@PROPERTY
def test_property_batch_queries(backend, G0, kind, ordering, B, seed):
    """BatchFactorization.solve with every system, its items (F[k]) with every query of a
    single factorization, slogdet, inertia and the shared permutation, against dense NumPy
    item by item; each item's factors equal those of factorize on its matrix."""
    rng = np.random.default_rng(seed)
    A, values = _batch(G0, kind, B, rng)
    F = gs.factorize_batch(A, values, method=_method(kind), ordering=ordering, backend=backend)
    assert len(F) == B
    dense = [A.with_data(v).to_scipy().toarray() for v in values]
    N = A.shape[0]
    P = F.P.toarray()
    np.testing.assert_array_equal(P, np.eye(N)[F.perm])
    signs, logdets = F.slogdet()
    inertias = F.inertia() if kind != "unsymmetric" else None
    b2 = rng.standard_normal((B, N))
    b3 = rng.standard_normal((B, N, 2))
    solutions = {(system, trans): (F.solve(b2, system, trans), F.solve(b3, system, trans))
                 for system in gs.factor_queries.SYSTEMS for trans in ("N", "T")}
    for k, (Fk, S) in enumerate(zip(F, dense, strict=True)):
        check_queries(Fk, S, kind, rng)
        np.testing.assert_array_equal(Fk.perm, F.perm)
        assert (signs[k], pytest.approx(logdets[k], rel=1e-10, abs=1e-9)) == \
            np.linalg.slogdet(S)
        if inertias is not None:
            lam = np.linalg.eigvalsh(S)
            assert tuple(inertias[k]) == (int(np.sum(lam > 0)), int(np.sum(lam < 0)), 0)
        Ld, Dd, Ud = Fk.L.toarray(), Fk.D.toarray(), Fk.U.toarray()
        for (system, trans), (M, cond) in dense_systems(S, P, Ld, Dd, Ud).items():
            x2, x3 = solutions[system, trans]
            assert x2.shape == b2.shape and x3.shape == b3.shape
            assert_solved(M, cond, x2[k], b2[k], f"item {k}: {system} {trans}")
            assert_solved(M, cond, x3[k], b3[k], f"item {k}: {system} {trans}")
        single = gs.factorize(A.with_data(values[k]), method=F.method, analysis=F.analysis,
                              backend=backend)
        for name in ("L", "D", "U", "P"):
            got, want = getattr(Fk, name).toarray(), getattr(single, name).toarray()
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * abs(want).max(),
                                       err_msg=name)


def test_batch_items_refuse_bad_indices_stale_views_and_writes(backend):
    A = gs.random_block_matrix(gen.ladder(6), "unsymmetric", 2, seed=0)
    rng = np.random.default_rng(0)
    values = A.data * (1 + 0.1 * rng.standard_normal((3, A.data.size)))
    F = gs.factorize_batch(A, values, backend=backend)
    b = rng.standard_normal(A.shape[0])
    np.testing.assert_array_equal(F[-1].solve(b), F[2].solve(b))
    assert [Fk.slogdet() for Fk in F] == [F.item(k).slogdet() for k in range(3)]
    for k in (3, -4, 10**9):
        with pytest.raises(gs.BatchIndexError, match=f"batch item {k} .* batch of 3 items"):
            F[k]
    for k in (1.0, "0", True, slice(0, 2), None):
        with pytest.raises(IndexError, match="integer"):
            F.item(k)
    assert issubclass(gs.BatchIndexError, gs.GraphSolveError)

    view = F[1]
    with pytest.raises(gs.GraphSolveError, match="read-only"):
        view.refactor(A.with_data(values[1]))
    with pytest.raises(gs.GraphSolveError, match="read-only"):
        view.mark_valid(-1)
    with pytest.raises(gs.GraphSolveError, match="read-only"):
        view.fused_handle(A)
    x1 = view.solve(b, "L")

    # values refused before any work leave the batch and its views as they were
    with pytest.raises(gs.ShapeError):
        F.refactor(values[:, :-1])
    with pytest.raises(gs.NonFiniteError, match="batch item 2"):
        F.refactor(np.where(np.arange(3)[:, None] == 2, np.nan, values))
    np.testing.assert_array_equal(view.solve(b, "L"), x1)

    # a refactor makes earlier views out of date (they read the batch's buffers)
    F.refactor(2 * values)
    for query in (view.slogdet, lambda: view.solve(b), lambda: view.L):
        with pytest.raises(gs.GraphSolveError, match="out of date"):
            query()
    single = gs.factorize(A.with_data(values[1]), method="ldu", analysis=F.analysis,
                          backend=backend)
    np.testing.assert_allclose(F[1].solve(b), 0.5 * single.solve(b), rtol=1e-10)
    np.testing.assert_allclose(F[1].D.toarray(), 2 * single.D.toarray(), rtol=1e-12)

    # a failed refactor (singular pivot) makes the batch and its items unusable, with the
    # single factorization's error
    singular = values.copy()
    singular[1, A.diag_ptr[0]:A.diag_ptr[1]] = 0.0
    singular[1, A.edge_ptr[0]:] = 0.0
    with pytest.raises(gs.SingularBlockError, match="batch item 1"):
        F.refactor(singular)
    for query in (F.slogdet, lambda: F.solve(b[None].repeat(3, 0), "L"), F[0].slogdet,
                  lambda: F[2].solve(b, trans="T"), lambda: F[0].U):
        with pytest.raises(gs.GraphSolveError, match="not valid"):
            query()
    F.refactor(values)
    assert F[0].slogdet() == F.item(0).slogdet()


def test_batch_solve_refuses_bad_right_hand_sides():
    A = gs.random_block_matrix(gen.path(4), "spd", 2, seed=0)
    F = gs.factorize_batch(A, np.stack([A.data, 2 * A.data]))
    b = np.ones((2, A.shape[0]))
    with pytest.raises(ValueError, match="system"):
        F.solve(b, system="LD")
    with pytest.raises(ValueError, match="trans"):
        F.solve(b, trans="H")
    with pytest.raises(gs.DTypeError, match="complex"):
        F.solve(b + 1j)
    with pytest.raises(gs.DTypeError):
        F.solve(b.astype(object), system="L")
    with pytest.raises(gs.ShapeError, match="sparse"):
        F.solve(sp.csr_array(b))
    for bad in (np.ones(A.shape[0]), np.ones((3, A.shape[0])), np.ones((2, 3)),
                np.ones((2, A.shape[0], 1, 1))):
        with pytest.raises(gs.ShapeError):
            F.solve(bad, system="D")
    with pytest.raises(gs.NonFiniteError):
        F.solve(np.full_like(b, np.inf), system="U")
    x = F.solve(b.astype(np.float32), system="Lt", trans="T")
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, F.solve(b, system="L"))


def test_batch_items_pickle_and_copy_as_standalone_factorizations():
    import copy
    import pickle

    A = gs.random_block_matrix(gen.net(3), "spd", 2, seed=0)
    F = gs.factorize_batch(A, np.stack([A.data, 3 * A.data]))
    b = np.arange(A.shape[0], dtype=float)
    for dup in (pickle.loads(pickle.dumps(F[1])), copy.deepcopy(F[1])):
        assert isinstance(dup, gs.Factorization)
        assert dup.slogdet() == F[1].slogdet()
        np.testing.assert_array_equal(dup.solve(b, "D"), F[1].solve(b, "D"))
        F.refactor(np.stack([A.data, 5 * A.data]))      # the copy keeps its values
        assert dup.slogdet()[1] == pytest.approx(F[1].slogdet()[1] - np.log(5 / 3) * A.shape[0])
        assert "batch item 1" in repr(dup)
        F.refactor(np.stack([A.data, 3 * A.data]))
    stale = F[0]
    F.refactor(np.stack([A.data, 3 * A.data]))
    with pytest.raises(gs.GraphSolveError, match="not valid"):
        pickle.loads(pickle.dumps(stale)).solve(b)


def test_factor_queries_survive_pickling():
    import pickle

    A = gs.random_block_matrix(gen.net(3), "unsymmetric", 2, seed=0)
    F = gs.factorize(A)
    F2 = pickle.loads(pickle.dumps(F))
    b = np.arange(A.shape[0], dtype=float)
    assert F2.slogdet() == F.slogdet()
    np.testing.assert_array_equal(F2.solve(b, trans="T"), F.solve(b, trans="T"))
