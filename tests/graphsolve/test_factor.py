"""Tests for graphsolve.factor: block LDU / LDLᵀ factorizations in the order of a graph.

Oracles are SciPy's SuperLU (``scipy.sparse.linalg.spsolve``) and LAPACK
(``numpy.linalg.solve``), never the library's own output. Every numeric test takes the ``backend``
fixture of ``tests/conftest.py`` so that a compiled backend joins the whole file automatically.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from hypothesis import given, settings
from hypothesis import strategies as st

import graphsolve as gs
from graphsolve import generators as gen
from graphsolve.factor import GatherMap
from tests.conftest import dense_oracle_solve, oracle_solve, rel_error, rel_residual

PROPERTY = settings(max_examples=30, deadline=None)

# The reference kernel's scipy.linalg.lu_factor warns about an exactly singular pivot block before
# the library turns it into SingularBlockError; tests that expect that error expect the warning.
EXPECTS_SINGULAR = pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")

RESIDUAL_TOL = 1e-10
ORACLE_TOL = 1e-9
ORDERINGS = list(gs.ORDERINGS)
# move zero-diagonal nodes after neighbours
PIVOTING_ORDERINGS = [o for o in gs.ORDERINGS if o != "natural"]
# no fill on trees (nested dissection may put a separator before its subtrees' roots)
TREE_ORDERINGS = [o for o in PIVOTING_ORDERINGS if o != "nd"]

FAMILIES = {
    "path9": lambda: gen.path(9),
    "star7": lambda: gen.star(7),
    "random_tree15": lambda: gen.random_tree(15, seed=4),
    "ladder12": lambda: gen.ladder(12),
    "net4": lambda: gen.net(4),
    "crystal3": lambda: gen.crystal(3),
    "segment_chain3": lambda: gen.segment_chain(3),
    "forest14": lambda: gen.random_graph(14, extra_edges=2, seed=5, components=3),
}

MECHANISMS = {
    "random_tree10": lambda: gen.random_tree(10, seed=6),
    "ladder8": lambda: gen.ladder(8),
    "net3": lambda: gen.net(3),
    "segment_chain3": lambda: gen.segment_chain(3),
}


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def rhs(N: int, seed: int = 0, k: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N if k is None else (N, k))


def assert_solves(A: gs.BlockMatrix, x: np.ndarray, b: np.ndarray,
                  residual_tol: float = RESIDUAL_TOL, oracle_tol: float | None = ORACLE_TOL
                  ) -> None:
    """``x`` solves ``A x = b``: small backward error, and agrees with SuperLU."""
    S = A.to_scipy()
    assert x.shape == b.shape
    assert np.all(np.isfinite(x))
    eta = rel_residual(S, x, b)
    assert eta <= residual_tol, f"backward error {eta:.3e} > {residual_tol:.0e}"
    if oracle_tol is not None:
        err = rel_error(x, oracle_solve(S, b))
        assert err <= oracle_tol, f"relative difference to spsolve {err:.3e} > {oracle_tol:.0e}"


def kkt_matrix(G0: nx.Graph, body_size: int = 6, constraint_size: int = 3, seed: int = 0
               ) -> gs.BlockMatrix:
    H = gen.constraint_graph(G0, body_size=body_size, constraint_size=constraint_size)
    return gs.random_block_matrix(H, "kkt", seed=seed)


def with_random_sizes(G: nx.Graph, rng: np.random.Generator, low: int = 1, high: int = 7
                      ) -> nx.Graph:
    G = G.copy()
    for v in G.nodes:
        G.nodes[v]["size"] = int(rng.integers(low, high + 1))
    return G


def kkt_with_random_sizes(G0: nx.Graph, rng: np.random.Generator) -> nx.Graph:
    """Mechanism graph with body sizes in 2..7 and every constraint at most half as large as
    its smaller body, so the Jacobian has full row rank (generically) and the KKT matrix is
    nonsingular."""
    H = gen.constraint_graph(with_random_sizes(G0, rng, 2, 7))
    for _, data in H.nodes(data=True):
        if data["role"] == "constraint":
            smallest = min(H.nodes[u]["size"] for u in data["bodies"])
            data["size"] = int(rng.integers(1, smallest // 2 + 1))
    return H


def block_mask(sizes_in_order: np.ndarray) -> np.ndarray:
    """Boolean N×N mask of the diagonal blocks in the permuted numbering."""
    labels = np.repeat(np.arange(sizes_in_order.size), sizes_in_order)
    return labels[:, None] == labels[None, :]


def accuracy_cases():
    for fam in FAMILIES:
        for kind in ("spd", "unsymmetric"):
            for ordering in ORDERINGS:
                methods = ["auto", "ldu"] + (["ldlt"] if kind == "spd" else [])
                for method in methods:
                    yield pytest.param(fam, kind, ordering, method,
                                       id=f"{fam}-{kind}-{ordering}-{method}")


# ---------------------------------------------------------------------------------------------
# accuracy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("family", "kind", "ordering", "method"), list(accuracy_cases()))
def test_accuracy_grid(backend, family, kind, ordering, method):
    G = FAMILIES[family]()
    A = gs.random_block_matrix(G, kind, seed=11)
    F = gs.factorize(A, method=method, ordering=ordering, backend=backend)
    expected_method = {"auto": "ldlt" if kind == "spd" else "ldu"}.get(method, method)
    assert F.method == expected_method
    b = rhs(A.shape[0], seed=1)
    assert_solves(A, F.solve(b), b)


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
@pytest.mark.parametrize("ordering", PIVOTING_ORDERINGS)
def test_kkt_pivoting_orderings_succeed(backend, mechanism, ordering):
    A = kkt_matrix(MECHANISMS[mechanism](), seed=3)
    F = gs.factorize(A, ordering=ordering, backend=backend)
    b = rhs(A.shape[0], seed=2)
    assert_solves(A, F.solve(b), b)


@EXPECTS_SINGULAR
@pytest.mark.parametrize("mechanism", list(MECHANISMS))
@pytest.mark.parametrize("method", ["auto", "ldu"])
def test_kkt_natural_never_returns_a_wrong_answer(backend, mechanism, method):
    A = kkt_matrix(MECHANISMS[mechanism](), seed=3)
    b = rhs(A.shape[0], seed=2)
    try:
        F = gs.factorize(A, method=method, ordering="natural", backend=backend)
    except gs.SingularBlockError as err:
        assert err.node in A.graph.graph["zero_diagonal"]
        return
    assert_solves(A, F.solve(b), b)


@EXPECTS_SINGULAR
@pytest.mark.parametrize("family", ["ladder", "net", "random"])
@pytest.mark.parametrize("kind", ["spd", "unsymmetric", "kkt"])
@pytest.mark.parametrize("ordering", ORDERINGS)
def test_mixed_block_sizes(backend, family, kind, ordering):
    rng = np.random.default_rng([["ladder", "net", "random"].index(family),
                                 ["spd", "unsymmetric", "kkt"].index(kind)])
    G0 = {"ladder": gen.ladder(10), "net": gen.net(3),
          "random": gen.random_graph(12, extra_edges=3, seed=7, components=2)}[family]
    G = kkt_with_random_sizes(G0, rng) if kind == "kkt" else with_random_sizes(G0, rng)
    A = gs.random_block_matrix(G, kind, seed=9)
    sizes = np.array([G.nodes[v]["size"] for v in range(G.number_of_nodes())])
    assert np.array_equal(A.block_sizes, sizes)
    b = rhs(A.shape[0], seed=3)
    if kind == "kkt" and ordering == "natural":
        try:
            F = gs.factorize(A, ordering=ordering, backend=backend)
        except gs.SingularBlockError:
            return
    else:
        F = gs.factorize(A, ordering=ordering, backend=backend)
    assert_solves(A, F.solve(b), b)


def test_dense_oracle_agrees(backend):
    """The same check against LAPACK (numpy.linalg.solve) instead of SuperLU."""
    A = gs.random_block_matrix(gen.segment_chain(2), "unsymmetric", block_size=3, seed=1)
    b = rhs(A.shape[0], seed=4)
    x = gs.factorize(A, backend=backend).solve(b)
    assert rel_error(x, dense_oracle_solve(A.to_dense(), b)) <= ORACLE_TOL


def test_zero_diagonal_block_handled_by_pivoting_orderings(backend):
    """A zero diagonal block (no kkt role) is moved after its neighbours by the DFS orderings
    and by minimum degree."""
    A = gs.random_block_matrix(gen.path(5), "spd", block_size=2, seed=0)
    data = A.data.copy()
    data[A.diag_ptr[4]:A.diag_ptr[5]] = 0.0  # node 4 is a leaf: DFS from 0 would take it first
    A0 = A.with_data(data)
    b = rhs(A0.shape[0], seed=5)
    for ordering in PIVOTING_ORDERINGS:
        F = gs.factorize(A0, ordering=ordering, backend=backend)
        assert F.analysis.elimination_order[0] != 4
        assert_solves(A0, F.solve(b), b)


@EXPECTS_SINGULAR
def test_zero_diagonal_written_through_block_view_is_deferred(backend):
    """``A.block(i, i)`` is documented as a writable view; a diagonal block zeroed through it
    is a zero diagonal block at factorize time and must be deferred like one built that way."""
    A = gs.random_block_matrix(gen.path(5), "spd", block_size=2, seed=0)
    A.block(4, 4)[...] = 0.0
    b = rhs(A.shape[0], seed=5)
    F = gs.factorize(A, ordering="brudigam", backend=backend)
    assert_solves(A, F.solve(b), b)


# ---------------------------------------------------------------------------------------------
# explicit factors
# ---------------------------------------------------------------------------------------------


REBUILD_MATRICES = {
    "path-spd": lambda: gs.random_block_matrix(gen.path(6), "spd", block_size=3, seed=1),
    "ladder-unsym": lambda: gs.random_block_matrix(gen.ladder(8), "unsymmetric", 3, seed=2),
    "net-spd": lambda: gs.random_block_matrix(gen.net(3), "spd", block_size=2, seed=3),
    "forest-mixed-unsym": lambda: gs.random_block_matrix(
        with_random_sizes(gen.random_graph(10, 3, seed=1, components=2),
                          np.random.default_rng(0)), "unsymmetric", seed=4),
    "segment-kkt": lambda: kkt_matrix(gen.segment_chain(2), 4, 2, seed=5),
}


def rebuild_cases():
    for name in REBUILD_MATRICES:
        for method in ("ldu", "ldlt"):
            if method == "ldlt" and "unsym" in name:
                continue  # ldlt needs a symmetric matrix
            for ordering in ORDERINGS:
                yield pytest.param(name, method, ordering, id=f"{name}-{method}-{ordering}")


@pytest.mark.parametrize(("name", "method", "ordering"), list(rebuild_cases()))
def test_rebuild_identity_and_factor_structure(backend, name, method, ordering):
    A = REBUILD_MATRICES[name]()
    F = gs.factorize(A, method=method, ordering=ordering, backend=backend)
    p = F.perm
    N = A.shape[0]
    assert sorted(p.tolist()) == list(range(N))
    Ad = A.to_dense()
    L, D, U = F.L.toarray(), F.D.toarray(), F.U.toarray()
    rebuilt = L @ D @ U
    scale = np.max(np.abs(Ad))
    assert np.max(np.abs(Ad[p][:, p] - rebuilt)) <= 1e-12 * scale
    # L unit lower triangular, U unit upper triangular
    assert np.array_equal(np.diag(L), np.ones(N))
    assert np.array_equal(np.diag(U), np.ones(N))
    assert not np.any(np.triu(L, 1))
    assert not np.any(np.tril(U, -1))
    # D block diagonal in the permuted numbering
    sizes_in_order = A.block_sizes[np.asarray(F.analysis.elimination_order)]
    assert not np.any(D[~block_mask(sizes_in_order)])
    if method == "ldlt":
        assert np.array_equal(U, L.T)
        assert np.allclose(D, D.T, rtol=0, atol=1e-14 * scale)
    # the permutation is block-wise: node order of the analysis
    expected = np.concatenate([np.arange(A.offsets[i], A.offsets[i + 1])
                               for i in F.analysis.elimination_order])
    assert np.array_equal(p, expected)


def test_trees_have_no_fill_in_the_factors(backend):
    G = gen.random_tree(12, seed=3)
    A = gs.random_block_matrix(G, "unsymmetric", block_size=2, seed=0)
    F = gs.factorize(A, backend=backend)
    assert F.analysis.n_fill == 0
    # pattern of L + U (minus the identity) lies inside the pattern of A
    LU = (abs(F.L) + abs(F.U)).toarray() - 2 * np.eye(A.shape[0])
    p = F.perm
    pattern = A.to_dense()[p][:, p] != 0
    assert not np.any(LU[~pattern])


# ---------------------------------------------------------------------------------------------
# right-hand sides
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["spd", "unsymmetric"])
def test_multiple_right_hand_sides(backend, kind):
    A = gs.random_block_matrix(gen.ladder(10), kind, block_size=3, seed=8)
    F = gs.factorize(A, backend=backend)
    N = A.shape[0]
    B = rhs(N, seed=6, k=3)
    B_copy = B.copy()
    X = F.solve(B)
    assert X.shape == (N, 3)
    assert np.array_equal(B, B_copy)  # b is not modified
    for j in range(3):
        xj = F.solve(B[:, j])
        assert xj.shape == (N,)
        assert rel_error(X[:, j], xj) <= 1e-13
    assert_solves(A, X, B)
    X1 = F.solve(B[:, :1])
    assert X1.shape == (N, 1)
    assert_solves(A, X1, B[:, :1])
    # Fortran-ordered and integer right-hand sides
    assert_solves(A, F.solve(np.asfortranarray(B)), B)
    bi = np.arange(N)
    assert_solves(A, F.solve(bi), bi.astype(float))
    assert F(B[:, 0]).shape == (N,)  # __call__ is solve


def test_solve_does_not_modify_b(backend):
    A = gs.random_block_matrix(gen.star(5), "spd", block_size=2, seed=1)
    F = gs.factorize(A, backend=backend)
    b = rhs(A.shape[0], seed=1)
    b0 = b.copy()
    x = F.solve(b)
    assert np.array_equal(b, b0)
    assert x is not b


# ---------------------------------------------------------------------------------------------
# refactor and analysis reuse
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["spd", "unsymmetric", "kkt"])
@pytest.mark.parametrize("ordering", PIVOTING_ORDERINGS)
def test_refactor_new_values_same_pattern(backend, kind, ordering):
    if kind == "kkt":
        A = kkt_matrix(gen.ladder(6), 4, 2, seed=1)
        A2 = A.with_data(kkt_matrix(gen.ladder(6), 4, 2, seed=2).data.copy())
    else:
        G = gen.net(3)
        A = gs.random_block_matrix(G, kind, block_size=3, seed=1)
        A2 = A.with_data(gs.random_block_matrix(G, kind, block_size=3, seed=2).data.copy())
    a_data, a2_data = A.data.copy(), A2.data.copy()
    F = gs.factorize(A, ordering=ordering, backend=backend)
    assert np.array_equal(A.data, a_data)
    b = rhs(A.shape[0], seed=7)
    x1 = F.solve(b)
    assert F.refactor(A2) is F
    assert np.array_equal(A.data, a_data)
    assert np.array_equal(A2.data, a2_data)
    x2 = F.solve(b)
    assert_solves(A2, x2, b)
    assert rel_error(x1, x2) > 1e-3  # really a different matrix
    # and back again
    F.refactor(A)
    assert_solves(A, F.solve(b), b)


def test_refactor_extra_edge_raises_pattern_error(backend):
    G = gen.ladder(8)
    A = gs.random_block_matrix(G, "spd", block_size=2, seed=1)
    F = gs.factorize(A, backend=backend)
    G2 = G.copy()
    G2.add_edge(0, 7)
    A2 = gs.random_block_matrix(G2, "spd", block_size=2, seed=1)
    with pytest.raises(gs.PatternError):
        F.refactor(A2)


def test_refactor_extra_fill_edge_raises_pattern_error(backend):
    """An edge where the factors have fill is still outside the analysed matrix pattern."""
    G = gen.ladder(8)
    A = gs.random_block_matrix(G, "spd", block_size=2, seed=1)
    F = gs.factorize(A, backend=backend)
    assert F.analysis.fill_blocks
    i, j = F.analysis.fill_blocks[0]
    G2 = G.copy()
    G2.add_edge(i, j)
    with pytest.raises(gs.PatternError):
        F.refactor(gs.random_block_matrix(G2, "spd", block_size=2, seed=1))


@pytest.mark.parametrize("kind", ["spd", "unsymmetric"])
@pytest.mark.parametrize("method", ["auto", "ldu"])
def test_refactor_on_subgraph(backend, kind, method):
    G = gen.net(4)
    A = gs.random_block_matrix(G, kind, block_size=2, seed=1)
    F = gs.factorize(A, method=method, backend=backend)
    sub = G.copy()
    sub.remove_edges_from([(0, 1), (5, 9), (10, 11), (14, 15)])
    A_sub = gs.random_block_matrix(sub, kind, block_size=2, seed=2)
    F.refactor(A_sub)
    b = rhs(A.shape[0], seed=8)
    assert_solves(A_sub, F.solve(b), b)
    # a subgraph matrix with explicit zeros in the removed blocks is the same matrix
    assert_solves(A_sub, gs.factorize(A_sub, backend=backend).solve(b), b)


def test_refactor_with_other_block_sizes_raises_shape_error(backend):
    G = gen.path(4)
    F = gs.factorize(gs.random_block_matrix(G, "spd", block_size=2), backend=backend)
    with pytest.raises(gs.ShapeError):
        F.refactor(gs.random_block_matrix(G, "spd", block_size=3))


def test_explicit_analysis_reuse(backend):
    G = gen.segment_chain(3)
    for v in G.nodes:
        G.nodes[v]["size"] = 1 + v % 4
    an = gs.analyze(G, "amd")
    b = None
    for seed in range(3):
        A = gs.random_block_matrix(G, "unsymmetric", seed=seed)
        F = gs.factorize(A, analysis=an, ordering="natural", backend=backend)
        assert F.analysis is an
        assert F.analysis.ordering == "amd"  # ordering is ignored with an analysis
        b = rhs(A.shape[0], seed=seed) if b is None else b
        assert_solves(A, F.solve(b), b)
    # analysis of a graph without size attributes, sizes passed explicitly, or of the matrix
    G1 = gen.ladder(6)
    A1 = gs.random_block_matrix(G1, "spd", block_size=3, seed=1)
    b1 = rhs(A1.shape[0])
    for an1 in (gs.analyze(G1, block_sizes=3), gs.analyze(A1, "dfs")):
        assert_solves(A1, gs.factorize(A1, analysis=an1, backend=backend).solve(b1), b1)


def test_analysis_of_another_graph_raises_pattern_error(backend):
    an = gs.analyze(gen.path(6), block_sizes=2)
    A = gs.random_block_matrix(gen.star(6), "spd", block_size=2, seed=0)
    with pytest.raises(gs.PatternError):
        gs.factorize(A, analysis=an, backend=backend)


@EXPECTS_SINGULAR
def test_failed_refactor_is_never_silent(backend):
    G = gen.path(6)
    A = gs.random_block_matrix(G, "spd", block_size=2, seed=1)
    F = gs.factorize(A, backend=backend)
    first = F.analysis.elimination_order[0]
    bad_data = A.data.copy()
    A_bad = A.with_data(bad_data)
    A_bad.block(first, first)[...] = 0.0  # first pivot is exactly zero
    with pytest.raises(gs.SingularBlockError) as info:
        F.refactor(A_bad)
    assert info.value.node == first
    b = rhs(A.shape[0])
    with pytest.raises(gs.GraphSolveError):
        F.solve(b)
    for attr in ("L", "D", "U"):
        with pytest.raises(gs.GraphSolveError):
            getattr(F, attr)
    with pytest.raises(gs.GraphSolveError):
        F.aslinearoperator().matvec(b)
    F.refactor(A)  # a successful refactor makes it usable again
    assert_solves(A, F.solve(b), b)


def test_failed_refactor_with_nan_is_never_silent(backend):
    A = gs.random_block_matrix(gen.star(5), "unsymmetric", block_size=2, seed=1)
    F = gs.factorize(A, backend=backend)
    bad = A.data.copy()
    bad[-1] = np.nan
    with pytest.raises(gs.NonFiniteError):
        F.refactor(A.with_data(bad))
    with pytest.raises(gs.GraphSolveError):
        F.solve(np.ones(A.shape[0]))


# ---------------------------------------------------------------------------------------------
# operation counts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [50, 200, 800])
@pytest.mark.parametrize("tree", ["path", "random_tree"])
@pytest.mark.parametrize("ordering", TREE_ORDERINGS)
def test_tree_operation_count_is_linear(backend, n, tree, ordering):
    G = gen.path(n) if tree == "path" else gen.random_tree(n, seed=n)
    A = gs.random_block_matrix(G, "spd", block_size=2, seed=0)
    F = gs.factorize(A, ordering=ordering, backend=backend)
    assert F.stats["block_ops"] == {"pivots": n, "scalings": n - 1, "updates": 0}
    assert F.analysis.n_fill == 0
    F.refactor(A)  # counts describe the last factorization, not a running total
    assert F.stats["block_ops"] == {"pivots": n, "scalings": n - 1, "updates": 0}
    if n == 50:
        b = rhs(A.shape[0])
        assert_solves(A, F.solve(b), b)


def test_cycles_need_updates(backend):
    A = gs.random_block_matrix(gen.ladder(8), "spd", block_size=2, seed=0)
    F = gs.factorize(A, backend=backend)
    ops = F.stats["block_ops"]
    assert ops["pivots"] == 8
    assert ops["scalings"] == len(F.analysis.fe_child)
    assert ops["updates"] == len(F.analysis.sched_ic2) > 0


# ---------------------------------------------------------------------------------------------
# other entry points
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["spd", "unsymmetric"])
def test_aslinearoperator(backend, kind):
    A = gs.random_block_matrix(gen.net(3), kind, block_size=2, seed=3)
    F = gs.factorize(A, backend=backend)
    op = F.aslinearoperator()
    N = A.shape[0]
    assert op.shape == (N, N)
    b = rhs(N, seed=2)
    B = rhs(N, seed=3, k=2)
    np.testing.assert_allclose(op.matvec(b), F.solve(b), rtol=1e-14, atol=0)
    np.testing.assert_allclose(op @ b, F.solve(b), rtol=1e-14, atol=0)
    np.testing.assert_allclose(op.matmat(B), F.solve(B), rtol=1e-14, atol=0)
    assert_solves(A, op.matvec(b), b)
    if F.method == "ldlt":
        np.testing.assert_allclose(op.rmatvec(b), oracle_solve(A.to_scipy().T, b),
                                   rtol=1e-9, atol=0)


@pytest.mark.parametrize("ordering", ORDERINGS)
def test_gs_solve_matches_spsolve(backend, ordering):
    A = gs.random_block_matrix(gen.random_graph(11, 2, seed=3), "unsymmetric", 3, seed=1)
    b = rhs(A.shape[0], seed=9)
    assert_solves(A, gs.solve(A, b, ordering=ordering, backend=backend), b)
    B = rhs(A.shape[0], seed=9, k=2)
    assert_solves(A, gs.solve(A, B, ordering=ordering, backend=backend), B)


def test_factorized_matches_spsolve(backend):
    A = gs.random_block_matrix(gen.ladder(8), "unsymmetric", block_size=3, seed=2)
    S = A.to_scipy()
    b = rhs(S.shape[0], seed=10)
    solve = gs.factorized(S, A.block_sizes, backend=backend)
    assert callable(solve)
    assert_solves(A, solve(b), b)
    assert_solves(A, gs.factorized(S, 3, backend=backend)(b), b)
    assert_solves(A, gs.factorized(S.toarray(), 3, graph=A.graph, backend=backend)(b), b)
    # the scipy docstring example: tridiagonal in 2x2 blocks
    T = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(6, 6))
    bt = np.arange(6.0)
    xt = gs.factorized(T, [2, 2, 2], backend=backend)(bt)
    assert rel_residual(T, xt, bt) <= RESIDUAL_TOL
    assert rel_error(xt, oracle_solve(T, bt)) <= ORACLE_TOL


def test_explicit_root_and_order(backend):
    G = gen.random_tree(9, seed=2)
    A = gs.random_block_matrix(G, "spd", block_size=2, seed=1)
    b = rhs(A.shape[0])
    F = gs.factorize(A, root=5, backend=backend)
    assert F.analysis.roots == (5,)
    assert_solves(A, F.solve(b), b)
    order = list(np.random.default_rng(0).permutation(9))
    F = gs.factorize(A, ordering=order, backend=backend)
    assert list(F.analysis.elimination_order) == order
    assert_solves(A, F.solve(b), b)


def test_stats_describe_the_factorization(backend):
    A = gs.random_block_matrix(gen.net(3), "unsymmetric", block_size=2, seed=0)
    F = gs.factorize(A, ordering="amd", backend=backend)
    assert F.stats["backend"] == backend
    assert F.stats["method"] == "ldu"
    assert F.stats["ordering"] == "amd"
    assert F.stats["N"] == A.shape[0] == 18
    assert F.stats["n_nodes"] == 9


# ---------------------------------------------------------------------------------------------
# property tests
# ---------------------------------------------------------------------------------------------


def _available_extra(n: int, components: int) -> int:
    q, r = divmod(n, components)
    sizes = [q + 1] * r + [q] * (components - r)
    return sum(s * (s - 1) // 2 for s in sizes) - (n - components)


@st.composite
def random_graphs(draw, max_n: int = 25, max_extra: int = 6):
    n = draw(st.integers(1, max_n))
    components = draw(st.integers(1, min(3, n)))
    extra = min(draw(st.integers(0, max_extra)), _available_extra(n, components))
    seed = draw(st.integers(0, 2**31 - 1))
    return gen.random_graph(n, extra_edges=extra, seed=seed, components=components)


@given(G=random_graphs(), sizes_seed=st.integers(0, 2**31 - 1),
       kind=st.sampled_from(["spd", "unsymmetric"]), ordering=st.sampled_from(ORDERINGS),
       method=st.sampled_from(["auto", "ldu"]))
@PROPERTY
def test_property_random_graphs(backend, G, sizes_seed, kind, ordering, method):
    rng = np.random.default_rng(sizes_seed)
    G = with_random_sizes(G, rng)
    A = gs.random_block_matrix(G, kind, seed=int(rng.integers(2**31)))
    F = gs.factorize(A, method=method, ordering=ordering, backend=backend)
    b = rng.standard_normal(A.shape[0])
    assert_solves(A, F.solve(b), b, oracle_tol=None)


@given(G0=random_graphs(max_n=12, max_extra=3), body=st.integers(2, 7),
       data=st.data(), seed=st.integers(0, 2**31 - 1),
       ordering=st.sampled_from(PIVOTING_ORDERINGS))
@PROPERTY
def test_property_kkt(backend, G0, body, data, seed, ordering):
    constraint = data.draw(st.integers(1, body // 2), label="constraint_size")
    A = kkt_matrix(G0, body, constraint, seed=seed)
    F = gs.factorize(A, ordering=ordering, backend=backend)
    b = np.random.default_rng(seed).standard_normal(A.shape[0])
    assert_solves(A, F.solve(b), b, residual_tol=1e-9, oracle_tol=None)


# ---------------------------------------------------------------------------------------------
# failure modes
# ---------------------------------------------------------------------------------------------


@EXPECTS_SINGULAR
def test_zero_pivot_block_names_its_node(backend):
    A = gs.random_block_matrix(gen.path(5), "spd", block_size=2, seed=0)
    A.block(2, 2)[...] = 0.0
    with pytest.raises(gs.SingularBlockError) as info:
        gs.factorize(A, ordering=[2, 0, 1, 3, 4], backend=backend)
    err = info.value
    assert err.node == 2
    assert "node 2" in str(err)
    assert isinstance(err, np.linalg.LinAlgError)
    assert isinstance(err, ValueError)
    assert isinstance(err, gs.GraphSolveError)


@EXPECTS_SINGULAR
def test_singular_nonzero_pivot_block_natural(backend):
    """A rank-deficient (not zero) block on a leaf that "natural" eliminates first."""
    A = gs.random_block_matrix(gen.path(5), "spd", block_size=3, seed=0)
    A.block(0, 0)[...] = np.ones((3, 3))
    with pytest.raises(gs.SingularBlockError) as info:
        gs.factorize(A, ordering="natural", backend=backend)
    assert info.value.node == 0
    assert "node 0" in str(info.value)


@EXPECTS_SINGULAR
@pytest.mark.parametrize("size", [2, 6])
def test_singular_schur_complement_pivot(backend, size):
    """The pivot of node 2 becomes singular (rank one less, not zero) only after the update
    from its child 1: with natural order D0 = I, D1 = 2I - I = I, D2 = diag(2, .., 2, 1) - I
    = diag(1, .., 1, 0). (6×6: the compiled tree kernel.)"""
    eye = np.eye(size)
    A = gs.BlockMatrix.from_blocks(gen.path(3), [eye, 2 * eye, np.diag([2.0] * (size - 1) + [1.0])],
                                   {(0, 1): eye, (1, 2): eye})
    assert np.linalg.matrix_rank(A.to_dense()) == 3 * size - 1
    with pytest.raises(gs.SingularBlockError) as info:
        gs.factorize(A, ordering="natural", backend=backend)
    assert info.value.node == 2
    assert "node 2" in str(info.value)


@pytest.mark.parametrize("shape", [(), (7,), (19, 2), (18, 2, 1), (0,)])
def test_wrong_rhs_shape(backend, shape):
    A = gs.random_block_matrix(gen.net(3), "spd", block_size=2, seed=0)  # N = 18
    F = gs.factorize(A, backend=backend)
    with pytest.raises(gs.ShapeError):
        F.solve(np.ones(shape))


def test_nan_in_matrix(backend):
    A = gs.random_block_matrix(gen.ladder(4), "spd", block_size=2, seed=0)
    A.block(1, 3)[0, 1] = np.nan
    with pytest.raises(gs.NonFiniteError):
        gs.factorize(A, backend=backend)
    A.block(1, 3)[0, 1] = np.inf
    with pytest.raises(gs.NonFiniteError):
        gs.factorize(A, method="ldu", backend=backend)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_every_non_finite_entry_is_caught_by_ldlt(backend, bad):
    """Each entry of an spd matrix made non-finite, alone or with its mirror entry: factorize
    and refactor raise NonFiniteError (the compiled LDLᵀ pivot test skips a finiteness pass on
    definite blocks; this is the test that it needs none)."""
    A = gs.random_block_matrix(gen.ladder(4), "spd", block_size=3, seed=0)
    F = gs.factorize(A, backend=backend)
    t = A.transpose_index()
    for k in range(A.data.size):
        for mirror in (False, True):
            data = A.data.copy()
            data[k] = bad
            if mirror:
                data[t[k]] = bad
            with pytest.raises(gs.NonFiniteError):
                F.refactor(A.with_data(data))
            with pytest.raises(gs.NonFiniteError):
                gs.factorize(A.with_data(data), method="ldlt", backend=backend)
    assert_solves(A, F.refactor(A).solve(np.ones(A.shape[0])), np.ones(A.shape[0]))


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_rhs(backend, bad):
    A = gs.random_block_matrix(gen.ladder(4), "spd", block_size=2, seed=0)
    F = gs.factorize(A, backend=backend)
    b = np.ones(A.shape[0])
    b[3] = bad
    with pytest.raises(gs.NonFiniteError):
        F.solve(b)
    B = np.ones((A.shape[0], 2))
    B[5, 1] = bad
    with pytest.raises(gs.NonFiniteError):
        F.solve(B)


def test_pattern_outside_graph():
    S = np.eye(6)
    S[0, 5] = S[5, 0] = 1.0  # block (0, 2) of 2x2 blocks
    with pytest.raises(gs.PatternError) as info:
        gs.BlockMatrix.from_scipy(sp.csr_array(S), 2, graph=gen.path(3))
    assert set(info.value.block) == {0, 2}
    with pytest.raises(gs.PatternError):
        gs.BlockMatrix.from_blocks(gen.path(3), [np.eye(2)] * 3, {(0, 2): np.ones((2, 2))})


def test_refactor_with_another_pattern(backend):
    A = gs.random_block_matrix(gen.path(6), "unsymmetric", block_size=2, seed=0)
    F = gs.factorize(A, backend=backend)
    other = gs.random_block_matrix(gen.star(6), "unsymmetric", block_size=2, seed=0)
    with pytest.raises(gs.PatternError):
        F.refactor(other)


def test_ldlt_on_unsymmetric_matrix(backend):
    A = gs.random_block_matrix(gen.ladder(6), "unsymmetric", block_size=2, seed=0)
    with pytest.raises(gs.GraphSolveError, match="ldlt") as info:
        gs.factorize(A, method="ldlt", backend=backend)
    assert not isinstance(info.value, gs.SingularBlockError)
    # and a symmetric factorization refactored with an unsymmetric matrix
    S = gs.random_block_matrix(gen.ladder(6), "spd", block_size=2, seed=0)
    F = gs.factorize(S, backend=backend)
    assert F.method == "ldlt"
    with pytest.raises(gs.GraphSolveError, match="ldlt"):
        F.refactor(A)


def _constraint_first(H: nx.Graph) -> tuple[nx.Graph, int]:
    c = next(v for v, r in H.nodes(data="role") if r == "constraint")
    return nx.relabel_nodes(H, {0: c, c: 0}), c


@EXPECTS_SINGULAR
def test_kkt_natural_with_constraint_first(backend):
    H = gen.constraint_graph(gen.path(3), body_size=3, constraint_size=2)
    Hr, _ = _constraint_first(H)
    assert Hr.nodes[0]["role"] == "constraint"
    A = gs.random_block_matrix(Hr, "kkt", seed=0)
    with pytest.raises(gs.SingularBlockError) as info:
        gs.factorize(A, ordering="natural", backend=backend)
    assert info.value.node == 0
    assert "node 0" in str(info.value)
    # the pivoting orderings handle the same matrix
    b = rhs(A.shape[0])
    for ordering in PIVOTING_ORDERINGS:
        assert_solves(A, gs.factorize(A, ordering=ordering, backend=backend).solve(b), b)


@EXPECTS_SINGULAR
def test_kkt_explicit_order_starting_with_constraint(backend):
    H = gen.constraint_graph(gen.path(3), body_size=3, constraint_size=2)  # constraints 3, 4
    A = gs.random_block_matrix(H, "kkt", seed=0)
    with pytest.raises(gs.SingularBlockError) as info:
        gs.factorize(A, ordering=[3, 0, 1, 2, 4], backend=backend)
    assert info.value.node == 3
    assert "node 3" in str(info.value)


def test_empty_graph():
    with pytest.raises(gs.GraphError):
        gs.analyze(nx.Graph())
    with pytest.raises(gs.GraphError):
        gs.BlockMatrix.from_blocks(nx.Graph(), [])
    with pytest.raises(gs.GraphError):
        gs.random_block_matrix(nx.Graph(), "spd")


def test_non_square_block():
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_blocks(gen.path(2), [np.ones((2, 3)), np.eye(2)])
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_blocks(gen.path(2), [np.eye(2), np.eye(3)],
                                   {(0, 1): np.ones((3, 2))})


def test_block_sizes_not_summing_to_n(backend):
    S = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(6, 6))
    for sizes in ([2, 2, 3], [2, 2, 1], 4):
        with pytest.raises(gs.ShapeError):
            gs.BlockMatrix.from_scipy(S, sizes)
        with pytest.raises(gs.ShapeError):
            gs.factorized(S, sizes, backend=backend)
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_scipy(sp.random(4, 5, density=0.5, random_state=0), 1)


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"method": "cholesky"}, "method"),
    ({"backend": "no-such-backend"}, "backend"),
    ({"ordering": "no-such-ordering"}, "ordering"),
])
def test_unknown_options(kwargs, word):
    A = gs.random_block_matrix(gen.path(3), "spd", block_size=2, seed=0)
    with pytest.raises(gs.GraphSolveError, match=word):
        gs.factorize(A, **kwargs)


def test_ordering_not_a_permutation(backend):
    A = gs.random_block_matrix(gen.path(3), "spd", block_size=2, seed=0)
    for order in ([0, 1], [0, 1, 1], [0, 1, 3]):
        with pytest.raises(gs.GraphSolveError):
            gs.factorize(A, ordering=order, backend=backend)


def test_factorize_requires_block_matrix(backend):
    S = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(6, 6))
    with pytest.raises(gs.GraphSolveError, match="BlockMatrix"):
        gs.factorize(S, backend=backend)
    with pytest.raises(gs.GraphSolveError):
        gs.factorize(S.toarray(), backend=backend)


def test_fused_refactor_solve_matches_refactor_and_solve():
    """The numba-callable hook gives the same solution as refactor + solve, and statuses."""
    from graphsolve.kernels.compiled import refactor_solve

    G = gs.generators.ladder(6)
    A = gs.random_block_matrix(G, kind="unsymmetric", block_size=3, seed=1)
    an = gs.analyze(A)
    F = gs.allocate(an, "ldu", "compiled")
    handle = F.fused_handle(A)
    b = np.arange(A.shape[0], dtype=float)
    x = b.copy()
    assert refactor_solve(handle, A.data, x) == -1
    F.mark_valid(-1)
    np.testing.assert_allclose(x, sp.linalg.spsolve(A.to_scipy().tocsc(), b), rtol=1e-10)
    np.testing.assert_allclose(F.solve(b), x, rtol=1e-12)
    bad = A.data.copy()
    bad[5] = np.nan
    assert refactor_solve(handle, bad, b.copy()) == -2
    zero = A.data.copy()
    first = int(an.order[0])
    zero[A.diag_ptr[first]:A.diag_ptr[first + 1]] = 0.0
    assert refactor_solve(handle, zero, b.copy()) == 0        # position 0 of the order
    F.mark_valid(0)
    with pytest.raises(gs.GraphSolveError, match="not valid"):
        F.solve(b)


@pytest.mark.parametrize("pair", [False, True])
def test_fused_refactor_solve_reports_any_non_finite_value(pair):
    """refactor_solve skips a separate finiteness pass: a NaN or inf anywhere (diagonal,
    lower or upper block, on a cyclic graph with fill or on the size-specialized (6, 5) path
    of a mechanism) must still give -2, never a solution or a pivot position."""
    from graphsolve.kernels.compiled import refactor_solve

    if pair:
        G = gs.generators.constraint_graph(gs.generators.path(4), body_size=6,
                                           constraint_size=5)
        A = gs.random_block_matrix(G, kind="kkt", seed=3)
    else:
        A = gs.random_block_matrix(gs.generators.ladder(4), kind="unsymmetric",
                                   block_size=3, seed=2)
    an = gs.analyze(A)
    F = gs.allocate(an, "ldu", "compiled")
    handle = F.fused_handle(A)
    b = np.ones(A.shape[0])
    rng = np.random.default_rng(0)
    for k in range(0, A.data.size, 7):
        bad = A.data.copy()
        bad[k] = np.inf if rng.random() < 0.5 else np.nan
        assert refactor_solve(handle, bad, b.copy()) == -2, k
    assert refactor_solve(handle, A.data, b.copy()) == -1


@pytest.mark.parametrize("case", ["mixed", "pair5", "pair3"])
def test_fused_implicit_factor_solves_trees(case):
    """fused_handle(implicit=True): the factor keeps the lower blocks unscaled and the solve
    applies D⁻¹ on the fly; same solution as spsolve on random trees (generic and the
    size-pair kernels), and Python-level use is refused until a refactor."""
    from graphsolve.kernels.compiled import refactor_solve

    if case == "mixed":
        G = gs.generators.random_tree(25, seed=7)
        for v in G:
            G.nodes[v]["size"] = 1 + v % 6
        A = gs.random_block_matrix(G, kind="unsymmetric", block_size=1, seed=8)
    else:
        G = gs.generators.constraint_graph(gs.generators.random_tree(12, seed=5),
                                           body_size=6, constraint_size=int(case[-1]))
        A = gs.random_block_matrix(G, kind="kkt", seed=4)
    an = gs.analyze(A)
    F = gs.allocate(an, "ldu", "compiled")
    handle = F.fused_handle(A, implicit=True)
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    for _ in range(2):                              # a second call refactors the same buffers
        x = b.copy()
        assert refactor_solve(handle, A.data, x) == -1
        ref = sp.linalg.spsolve(A.to_scipy().tocsc(), b)
        assert np.abs(x - ref).max() <= 1e-10 * np.abs(ref).max()
    F.mark_valid(-1)
    with pytest.raises(gs.GraphSolveError, match="implicit-L"):
        F.solve(b)
    with pytest.raises(gs.GraphSolveError, match="implicit-L"):
        _ = F.L
    F.refactor(A)
    np.testing.assert_allclose(F.solve(b), x, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", ["cyclic", "pair5", "implicit-tree"])
def test_solve_factored_reuses_the_last_fused_factor(case):
    """graphsolve.lowlevel.solve_factored: further right-hand sides with the factor the last
    refactor_solve left (generic kernel with fill, a size pair, an implicit-L tree), equal to
    spsolve, and equal bit for bit to refactor_solve's own solve of the same vector."""
    from graphsolve.lowlevel import refactor_solve, solve_factored

    implicit = case == "implicit-tree"
    if case == "cyclic":
        A = gs.random_block_matrix(gs.generators.ladder(6), kind="unsymmetric", block_size=3,
                                   seed=6)
    else:
        tree = gs.generators.random_tree(9, seed=2)
        A = gs.random_block_matrix(gs.generators.constraint_graph(
            tree, body_size=6, constraint_size=5), kind="kkt", seed=9)
    F = gs.allocate(gs.analyze(A), "ldu", "compiled")
    handle = F.fused_handle(A, implicit=implicit)
    rng = np.random.default_rng(3)
    b1, b2 = rng.standard_normal((2, A.shape[0]))
    x1 = b1.copy()
    assert refactor_solve(handle, A.data, x1) == -1
    x2 = b2.copy()
    solve_factored(handle, x2)
    ref = sp.linalg.spsolve(A.to_scipy().tocsc(), b2)
    assert np.abs(x2 - ref).max() <= 1e-10 * np.abs(ref).max()
    again = b1.copy()
    solve_factored(handle, again)
    np.testing.assert_array_equal(again, x1)


def test_fused_handle_flags_singular_pivots_by_the_factorizations_pivot_rtol():
    """A pivot block tiny against its entries but not zero: singular under the default
    PIVOT_RTOL, factored with pivot_rtol=0 (only exact zeros are singular)."""
    from graphsolve.lowlevel import refactor_solve

    A = gs.random_block_matrix(gs.generators.path(3), kind="unsymmetric", block_size=2, seed=4)
    an = gs.analyze(A)
    first = int(an.order[0])
    lo, hi = A.diag_ptr[first], A.diag_ptr[first + 1]
    A.data[lo:hi] = [1.0, 1.0, 1.0, 1.0 + 2.0 ** -52]        # rank one up to an ulp
    # its couplings scaled by 2⁻²⁶, so the Schur update (~ coupling² / 2⁻⁵²) stays O(1) and the
    # later pivots are far from singular whatever the kernels' rounding
    for j in A.graph.neighbors(first):
        A.block(first, j)[:] *= 2.0 ** -26
        A.block(j, first)[:] *= 2.0 ** -26
    b = np.ones(A.shape[0])
    strict = gs.allocate(an, "ldu", "compiled")
    assert refactor_solve(strict.fused_handle(A), A.data, b.copy()) == 0
    exact = gs.allocate(an, "ldu", "compiled", pivot_rtol=0.0)
    assert refactor_solve(exact.fused_handle(A), A.data, b.copy()) == -1


def test_fused_implicit_factor_refuses_cycles():
    A = gs.random_block_matrix(gs.generators.ladder(4), kind="unsymmetric", block_size=2,
                               seed=1)
    F = gs.allocate(gs.analyze(A), "ldu", "compiled")
    with pytest.raises(gs.GraphSolveError, match="acyclic"):
        F.fused_handle(A, implicit=True)


def test_allocate_and_fused_handle_check_arguments():
    an = gs.analyze(gs.generators.path(3), block_sizes=2)
    with pytest.raises(gs.GraphSolveError, match="method"):
        gs.allocate(an, "lu")
    F = gs.allocate(an, "ldu", "reference")
    A = gs.random_block_matrix(gs.generators.path(3), block_size=2)
    with pytest.raises(gs.GraphSolveError, match="compiled backend"):
        F.fused_handle(A)


# ---------------------------------------------------------------------------------------------
# the fused load (values read inside the factor) and the definite-pivot path of LDLᵀ
# ---------------------------------------------------------------------------------------------


def _every_block(A: gs.BlockMatrix):
    yield from ((i, i) for i in range(A.n_nodes))
    yield from (tuple(int(v) for v in e) for e in A.edges)


@pytest.mark.parametrize(("family", "block_size"), [("ladder", 3), ("tree", 6)])
@pytest.mark.parametrize("method", ["ldlt", "ldu"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_refactor_names_any_non_finite_block(backend, method, bad, family, block_size):
    """Every value enters the factor (or, for LDLᵀ, the symmetry comparison): a NaN or inf
    in any block, diagonal, lower, upper, tree edge or cycle edge, is reported as such.
    (LDLᵀ of 6×6 blocks on a tree: the compiled tree kernel, which reads the values where it
    uses them.)"""
    G = gen.ladder(6) if family == "ladder" else gen.random_tree(9, seed=2)
    A = gs.random_block_matrix(G, "spd", block_size=block_size, seed=1)
    F = gs.factorize(A, method=method, backend=backend)
    for blk in _every_block(A):
        B = A.copy()
        B.block(*blk)[1, 2] = bad
        with pytest.raises(gs.NonFiniteError, match=re_block(blk)):
            F.refactor(B)
        F.refactor(A)                     # and the factorization recovers
        assert rel_residual(A.to_scipy(), F.solve(np.ones(A.shape[0])), np.ones(A.shape[0])) < 1e-12


def re_block(blk) -> str:
    return rf"\({blk[0]}, {blk[1]}\)"


@pytest.mark.parametrize("block_size", [2, 6])
@pytest.mark.parametrize("family", ["path9", "ladder12", "net4"])
def test_ldlt_asymmetry_in_any_off_diagonal_block_is_refused(backend, family, block_size):
    """The fused symmetry check compares every upper block with its lower partner, on tree
    edges and on edges that get fill updates before they are scaled; assembly round-off
    (1e-15 relative) passes. (6×6 blocks on a path: the compiled tree kernel, which checks
    while it eliminates.)"""
    A = gs.random_block_matrix(FAMILIES[family](), "spd", block_size=block_size, seed=3)
    F = gs.factorize(A, method="ldlt", backend=backend)
    for blk in _every_block(A):
        if blk[0] == blk[1]:
            continue
        B = A.copy()
        B.block(*blk)[0, 1] += 1e-3
        with pytest.raises(gs.GraphSolveError, match="ldlt"):
            F.refactor(B)
        B.block(*blk)[0, 1] = A.block(*blk)[0, 1] * (1 + 1e-15)
        F.refactor(B)
    B = A.copy()
    B.block(0, 0)[0, 1] += 1e-3                # and inside a diagonal block
    with pytest.raises(gs.GraphSolveError, match="ldlt"):
        F.refactor(B)


@pytest.mark.parametrize(("family", "size"), [("ladder", 2), ("tree", 6)])
def test_ldlt_indefinite_pivot_blocks_fall_back_to_lu(backend, family, size):
    """Symmetric indefinite (non-quasi-definite) pivot blocks such as [[0, 1], [1, 0]] have no
    LDLᵀ without pivoting: the compiled kernel uses its definite fast path (``piv = -1``) only
    for definite blocks and LU with partial pivoting for the others; both solve exactly.
    (6×6 blocks on a tree: the compiled tree kernel's fallback to the generic pair step.)"""
    G = gen.ladder(8) if family == "ladder" else gen.random_tree(12, seed=4)
    rng = np.random.default_rng(5)
    swap = np.kron(np.array([[0.0, 4.0], [4.0, 0.0]]), np.eye(size // 2))
    diag = {v: swap if v % 2 else 6 * np.eye(size) for v in G}
    off = {e: 0.3 * rng.standard_normal((size, size)) for e in G.edges}
    A = gs.BlockMatrix.from_blocks(G, diag, off)
    ordering = "natural" if family == "ladder" else "brudigam"  # a tree: no fill
    F = gs.factorize(A, method="ldlt", ordering=ordering, backend=backend)
    b = rhs(A.shape[0], 1)
    assert rel_error(F.solve(b), oracle_solve(A.to_scipy(), b)) < ORACLE_TOL
    if backend == "compiled":
        an = F.analysis
        first = F._piv[an.x_ptr[:-1]]
        eig = [np.linalg.eigvalsh(F.D.toarray()[s:s + size, s:s + size])
               for s in F._permuted_offsets()]
        definite = [bool(np.all(w > 0) or np.all(w < 0)) for w in eig]
        assert (first < 0).tolist() == definite
        assert 0 < sum(definite) < an.n_nodes


# ---------------------------------------------------------------------------------------------
# the gather map (compiled kernels.assembly.gather_sources) and method="auto"
# ---------------------------------------------------------------------------------------------


@given(n=st.integers(2, 25), extra=st.integers(0, 30), seed=st.integers(0, 10_000),
       ordering=st.sampled_from(["auto", "brudigam", "amd", "natural"]))
@PROPERTY
def test_gather_map_pairs_match_searchsorted_oracle(n, extra, seed, ordering):
    """Every block of A lands on the factor pair of {i, j} (parent = later eliminated node),
    found here by a sort of the pairs' keys, on relabelled random graphs with fill."""
    rng = np.random.default_rng(seed)
    G = gen.random_graph(n, extra_edges=min(extra, n * (n - 1) // 2 - (n - 1)), seed=seed)
    G = nx.relabel_nodes(G, dict(enumerate(rng.permutation(n).tolist())))
    A = gs.random_block_matrix(G, "unsymmetric", block_size=2, seed=seed)
    an = gs.analyze(A, ordering)
    gm = GatherMap(A, an)
    i, j = A.edges[:, 0], A.edges[:, 1]
    later = an.position[i] > an.position[j]
    par, chi = np.where(later, i, j), np.where(later, j, i)
    keys = an.fe_parent * n + an.fe_child
    e = np.argsort(keys)[np.searchsorted(np.sort(keys), par * n + chi)]
    np.testing.assert_array_equal(an.fe_parent[e], par)
    np.testing.assert_array_equal(an.fe_child[e], chi)
    np.testing.assert_array_equal(gm.dst, an.fe_ptr[e])
    np.testing.assert_array_equal(gm.upper, ~later)
    lsrc, usrc = np.full(an.fe_child.size, -1), np.full(an.fe_child.size, -1)
    lsrc[e[later]], usrc[e[~later]] = A.edge_ptr[:-1][later], A.edge_ptr[:-1][~later]
    np.testing.assert_array_equal(gm.lsrc, lsrc)
    np.testing.assert_array_equal(gm.usrc, usrc)


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_method_auto_picks_ldlt_within_the_symmetry_tolerance(backend):
    """auto runs the LDLᵀ kernel first and keeps it for values symmetric to LDLT_SYMMETRY_RTOL:
    one entry off by one ulp stays LDLᵀ, with numpy's solution to 1e-10; one off by 1e-6 of
    the matrix's scale makes it LDU."""
    A = gs.random_block_matrix(gen.ladder(6), "spd", block_size=3, seed=2)
    F = gs.factorize(A, backend=backend)
    assert F.method == "ldlt"
    k = int(A.edge_ptr[3]) + 1
    b = rhs(A.shape[0])
    for value, method in ((np.nextafter(A.data[k], np.inf), "ldlt"),
                          (A.data[k] + 1e-6 * np.abs(A.data).max(), "ldu")):
        B = A.copy()
        B.data[k] = value
        G = gs.factorize(B, backend=backend)
        assert G.method == method
        np.testing.assert_allclose(G.solve(b), np.linalg.solve(B.to_dense(), b), rtol=1e-10)


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_method_auto_singular_symmetric_and_nan_errors(backend):
    """auto on a symmetric matrix with a singular pivot raises LDLᵀ's SingularBlockError;
    NaN raises NonFiniteError naming the block, in both cases with no factor returned."""
    A = gs.random_block_matrix(gen.path(4), "spd", block_size=2, seed=0)
    S = A.copy()
    S.block(2, 2)[...] = 0.0
    S.block(1, 2)[...] = 0.0
    S.block(2, 1)[...] = 0.0
    S.block(2, 3)[...] = 0.0
    S.block(3, 2)[...] = 0.0
    with pytest.raises(gs.SingularBlockError) as exc:
        gs.factorize(S, backend=backend)
    assert exc.value.node == 2
    N = A.copy()
    N.block(3, 2)[1, 0] = np.nan
    with pytest.raises(gs.NonFiniteError, match=r"\(3, 2\)"):
        gs.factorize(N, backend=backend)


# ---------------------------------------------------------------------------------------------
# pickling and the right-hand side's contract
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["compiled", "reference"])
@pytest.mark.parametrize("kind", ["spd", "unsymmetric"])
def test_pickled_factorization_solves_and_refactors(backend, kind):
    """Matrix, analysis and factorization survive pickle (another process gets them this
    way): the same solution bit for bit, and refactor keeps working on the copy."""
    import pickle

    A = gs.random_block_matrix(gen.ladder(10), kind, block_size=3, seed=4)
    F = gs.factorize(A, backend=backend)
    b = rhs(A.shape[0])
    x = F.solve(b)
    A2, F2 = pickle.loads(pickle.dumps((A, F)))
    np.testing.assert_array_equal(F2.solve(b), x)
    assert not A2.edges.flags.writeable and not A2.block_sizes.flags.writeable
    B = A2.with_data(A2.data * 2.0)
    np.testing.assert_allclose(F2.refactor(B).solve(b), x / 2.0, rtol=1e-12)
    an2 = pickle.loads(pickle.dumps(F.analysis))
    np.testing.assert_array_equal(an2.order, F.analysis.order)


@pytest.mark.parametrize(("kind", "method"),
                         [("spd", "auto"), ("unsymmetric", "auto"), ("unsymmetric", "ldu")])
def test_factor_buffers_in_base_pages_factor_refactor_and_pickle(monkeypatch, kind, method):
    """With every factor buffer an anonymous mapping (the large-factor path of
    ``graphsolve.factor._zeros``: populated up front, or, ``U`` of a factorization begun as
    LDLᵀ, mapped on first write), factor, refactor, solve and pickle agree with SciPy."""
    import mmap
    import pickle

    import graphsolve.factor as factor_module

    monkeypatch.setattr(factor_module, "SMALL_PAGES_BYTES", 0)
    A = gs.random_block_matrix(gen.net(5), kind, block_size=3, seed=7)
    F = gs.factorize(A, method=method)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        assert isinstance(F._L.base.obj, mmap.mmap) and F._L.flags.writeable
    b = rhs(A.shape[0])
    x = spla.spsolve(A.to_scipy().tocsc(), b)
    np.testing.assert_allclose(F.solve(b), x, rtol=1e-9)
    B = A.with_data(A.data * 4.0)
    np.testing.assert_allclose(F.refactor(B).solve(b), x / 4.0, rtol=1e-9)
    F2 = pickle.loads(pickle.dumps(F))
    np.testing.assert_array_equal(F2.solve(b), F.solve(b))


@pytest.mark.parametrize("populate", [False, True])
def test_zeros_large_buffers_are_writable_zeros(monkeypatch, populate):
    """``_zeros`` past ``SMALL_PAGES_BYTES``, populated or not: ``n`` writable float64 zeros
    that keep what is written (its own mapping, not a shared or read-only one)."""
    import graphsolve.factor as factor_module

    monkeypatch.setattr(factor_module, "SMALL_PAGES_BYTES", 0)
    z = factor_module._zeros(1000, populate=populate)
    assert z.shape == (1000,) and z.dtype == np.float64 and not z.any()
    z[::7] = 3.0
    other = factor_module._zeros(1000, populate=populate)
    assert z.sum() == 3.0 * len(range(0, 1000, 7)) and not other.any()


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix
def test_solve_rhs_dtypes():
    """Complex b is refused (DTypeError, not a numba typing error); a sparse b is solved like
    scipy.sparse.linalg.spsolve does (x sparse, same format); lists, np.matrix, float32 and
    integer b are solved in float64."""
    A = gs.random_block_matrix(gen.path(5), "spd", block_size=2, seed=0)
    F = gs.factorize(A)
    b = rhs(A.shape[0])
    with pytest.raises(gs.DTypeError, match="complex"):
        F.solve(b + 1j)
    with pytest.raises(gs.DTypeError, match="complex"):
        F.solve(sp.csc_array(b[:, None] + 1j))
    B = np.stack([b, 2 * b, np.zeros_like(b)], axis=1)
    for fmt in (sp.csr_array, sp.csc_matrix, sp.coo_array):
        X = F.solve(fmt(B))
        assert type(X) is fmt and sp.issparse(X)
        np.testing.assert_allclose(X.toarray(), spla.spsolve(sp.csc_array(A.to_scipy()),
                                                             sp.csc_array(B)).toarray(),
                                   rtol=1e-10)
    with pytest.raises(gs.ShapeError):
        F.solve(sp.csr_array(np.ones((3, 1))))
    np.testing.assert_allclose(F.solve(b.tolist()), F.solve(b), rtol=0)
    xm = F.solve(np.asmatrix(b).T)
    assert type(xm) is np.ndarray and xm.shape == (A.shape[0], 1)
    x32 = F.solve(b.astype(np.float32))
    assert x32.dtype == np.float64
    np.testing.assert_allclose(x32, F.solve(b.astype(np.float32).astype(float)), rtol=0)
    xi = F.solve(np.arange(A.shape[0]))
    np.testing.assert_allclose(A.to_dense() @ xi, np.arange(A.shape[0]), atol=1e-10)


def test_refused_refactor_keeps_the_previous_factorization(backend):
    """A matrix refused before any work (wrong type, pattern, sizes) leaves the factorization
    valid; a failure during the numeric work invalidates it."""
    G = gen.ladder(6)
    A = gs.random_block_matrix(G, "spd", block_size=2, seed=0)
    F = gs.factorize(A, backend=backend)
    b = rhs(A.shape[0])
    x = F.solve(b)
    H = G.copy()
    H.add_edge(0, 5)                                   # a block outside the analysed pattern
    for bad, err in ((gs.random_block_matrix(H, "spd", block_size=2), gs.PatternError),
                     (gs.random_block_matrix(G, "spd", block_size=3), gs.ShapeError),
                     (A.to_scipy(), gs.GraphSolveError)):
        with pytest.raises(err):
            F.refactor(bad)
        np.testing.assert_array_equal(F.solve(b), x)
    nan = A.with_data(A.data.copy())
    nan.data[0] = np.nan
    with pytest.raises(gs.NonFiniteError):
        F.refactor(nan)
    with pytest.raises(gs.GraphSolveError, match="not valid"):
        F.solve(b)


def test_auto_method_takes_ldlt_for_round_off_asymmetry(backend):
    """A symmetric matrix with assembly round-off (1e-14 relative) is factored as LDLᵀ (half
    the work), also in a batch; a larger asymmetry (1e-9) goes to LDU."""
    A = gs.random_block_matrix(gen.net(3), "spd", block_size=3, seed=1)
    rng = np.random.default_rng(0)
    for eps, method in ((1e-14, "ldlt"), (1e-9, "ldu")):
        B = A.with_data(A.data * (1 + eps * rng.standard_normal(A.data.size)))
        assert not B.is_symmetric()
        F = gs.factorize(B, backend=backend)
        assert F.method == method
        b = rhs(A.shape[0])
        assert rel_residual(B.to_scipy(), F.solve(b), b) < 1e-12
        Fb = gs.factorize_batch(A, np.stack([A.data, B.data]), backend=backend)
        assert Fb.method == method


@pytest.mark.parametrize("bad", [-1e-3, float("nan"), float("inf"), "1e-12", True])
def test_pivot_rtol_is_checked_before_any_work(bad):
    """factorize / allocate refuse a pivot_rtol that is not a finite number >= 0 (as the
    batch functions do), naming the argument."""
    A = gs.random_block_matrix(gen.path(4), "spd", 2)
    with pytest.raises(gs.GraphSolveError, match="pivot_rtol"):
        gs.factorize(A, pivot_rtol=bad)
    with pytest.raises(gs.GraphSolveError, match="pivot_rtol"):
        gs.allocate(gs.analyze(A), "ldu", "compiled", pivot_rtol=bad)


@pytest.mark.parametrize(("graph", "kind", "supernodal"),
                         [("path", "spd", False), ("ladder", "spd", False),
                          ("net", "spd", False), ("net", "spd", True),
                          ("ladder", "unsymmetric", False)])
def test_writes_upper_says_whether_the_first_factorization_writes_u(monkeypatch, graph, kind,
                                                                    supernodal):
    """``compiled.writes_upper`` (which decides whether ``U``'s pages are made up front) holds
    to what the kernels do: LDU writes ``U``; LDLᵀ only in the block kernels of a pattern with
    update triples, not on trees and not in the supernodal kernel."""
    from graphsolve.kernels import compiled

    if supernodal:
        for name in ("SUPERNODAL_MIN_FLOPS_PER_NODE", "SUPERNODAL_MIN_WIDE_SHARE",
                     "SUPERNODAL_VECTORIZED_MIN_FLOPS", "SUPERNODAL_FIRST_MIN_FLOPS"):
            monkeypatch.setattr(compiled, name, 0)
    G = {"path": gen.path(12), "ladder": gen.ladder(8), "net": gen.net(5)}[graph]
    A = gs.random_block_matrix(G, kind, block_size=6, seed=3)
    an = gs.analyze(A, ordering="brudigam" if graph != "net" else "amd")
    F = gs.factorize(A, analysis=an)
    expected = compiled.writes_upper(an, F.method == "ldlt", compiled.work_buffers(an))
    assert bool(np.any(F._U)) == expected
    assert expected == (kind == "unsymmetric" or (graph != "path" and not supernodal))
