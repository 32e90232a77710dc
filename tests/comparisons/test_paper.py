"""Tests of :mod:`comparisons.paper` (Brüdigam et al. 2023, Fig. 9 b-d as the original ran it).

The ``_julia_*`` helpers are literal transcriptions of the original Julia code into NumPy
(1-based Julia ranges ``a:b`` become ``a-1:b``), kept independent of the module under test:

* ``ladder.jl``, ``net.jl``, ``crystal.jl`` of ``janbruedigam/ConstrainedDynamics.jl``
  (``paper_experiments/loop_complexity/graphs/``): the adjacency matrices;
* ``System{T}(A, dims)`` of ``janbruedigam/GraphBasedSystems.jl`` (``src/system/system.jl``,
  ``src/system/setup_functions.jl``): which off-diagonal blocks get entries.
"""

from __future__ import annotations

import sys

import networkx as nx
import numpy as np
import pytest

import graphsolve as gs
from comparisons.paper import (
    PAPER_SIZES,
    crystal_paper,
    ladder_paper,
    net_paper,
    paper_dense_matrix,
    paper_elimination_order,
    paper_fill_pairs,
    paper_graph,
    paper_matrix,
    paper_vector,
)


# ------------------------------------------------------------------ literal Julia transcriptions
def _jl(a: int, b: int) -> slice:
    """Julia's 1-based inclusive range ``a:b`` as a Python slice."""
    return slice(a - 1, b)


def _julia_ladder(Nlevels: int) -> np.ndarray:
    A0 = np.array([[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]])
    A = np.zeros((Nlevels * 2, Nlevels * 2), dtype=int)
    if Nlevels == 1:
        A[_jl(1, 2), _jl(1, 2)] = [[0, 1], [0, 0]]
    else:
        A[_jl(1, 4), _jl(1, 4)] = A0
    for i in range(3, Nlevels + 1):
        A[_jl((i - 1) * 2 - 1, (i - 1) * 2 + 1), (i - 1) * 2 + 1 - 1] = [1, 0, 0]
        A[_jl((i - 1) * 2 - 0, (i - 1) * 2 + 2), (i - 1) * 2 + 2 - 1] = [1, 1, 0]
    return A + A.T


def _julia_net_A0(Nlevels: int) -> np.ndarray:
    A = np.zeros((350, 350), dtype=int)
    for i in range(1, 351):
        if i + 1 <= 350:
            A[i - 1, i + 1 - 1] = 1
        if i + 10 <= 350:
            A[i - 1, i + 10 - 1] = 1
    nodes = np.concatenate([np.arange(10 * i + 1, 10 * i + Nlevels + 1) for i in range(Nlevels)])
    return A[np.ix_(nodes - 1, nodes - 1)]


def _julia_net(Nlevels: int) -> np.ndarray:
    A = _julia_net_A0(Nlevels)
    return A + A.T


def _julia_crystal(Nlevels: int) -> np.ndarray:
    A0 = _julia_net_A0(Nlevels)
    N2 = Nlevels**2
    A = np.zeros((N2 * Nlevels, N2 * Nlevels), dtype=int)
    A[_jl(1, N2), _jl(1, N2)] = A0
    for i in range(2, Nlevels + 1):
        A[_jl((i - 1) * N2 + 1, i * N2), _jl((i - 1) * N2 + 1, i * N2)] = A0
        for j in range(1, N2 + 1):
            A[N2 * (i - 1) + j - N2 - 1, N2 * (i - 1) + j - 1] = 1
    return A + A.T


def _graph_of(A: np.ndarray) -> nx.Graph:
    """Graphs.jl ``Graph(A)`` of a symmetric 0/1 matrix (vertices shifted to 0-based)."""
    assert np.array_equal(A, A.T) and set(np.unique(A)) <= {0, 1} and not np.any(np.diag(A))
    G = nx.Graph()
    G.add_nodes_from(range(A.shape[0]))
    G.add_edges_from(zip(*np.nonzero(np.triu(A)), strict=True))
    return nx.relabel_nodes(G, int)


def _julia_allocated_pairs(G: nx.Graph) -> set[tuple[int, int]]:
    """Off-diagonal pairs ``{i, j}`` (``i < j``) that ``System`` allocates, transcribed step by
    step: ``split_adjacency``, Graphs.jl ``dfs_tree`` (iterative ``dfs_parents``), the recursive
    ``depth_first_search`` with its closure de-duplication, ``simplecycles`` of the tree plus
    closures, ``cycle_parent_children`` and the acyclic-children loop."""
    adj = {v: sorted(G[v]) for v in G}              # SimpleGraph adjacency lists are sorted
    allocated: set[tuple[int, int]] = set()
    for comp in nx.connected_components(G):
        root = min(comp)
        # Graphs.jl dfs_tree(graph, root): tree edges parent -> child
        tree_parent = {root: root}
        S = [root]
        while S:
            v = S[-1]
            u = next((w for w in adj[v] if w not in tree_parent), None)
            if u is None:
                S.pop()
            else:
                tree_parent[u] = v
                S.append(u)
        dfs_graph = nx.DiGraph()
        dfs_graph.add_nodes_from(comp)
        dfs_graph.add_edges_from((p, c) for c, p in tree_parent.items() if c != root)
        # depth_first_search(graph, root)
        visited: set[int] = set()
        closures: list[list[int]] = []

        def _dfs(v: int, p: int, visited=visited, closures=closures) -> None:
            if v not in visited:
                visited.add(v)
                for node in adj[v]:
                    if node != p and node in visited:
                        closures.append([v, node])
                    _dfs(node, v)

        _dfs(root, -1)
        perm = sorted(range(len(closures)), key=lambda k: (sorted(closures[k]), k))  # stable
        closures = [closures[k] for k in perm[0::2]]
        # matrix entries
        cycle_dfs_graph = dfs_graph.copy()
        cycle_dfs_graph.add_edges_from(tuple(c) for c in closures)
        parents = {v: list(dfs_graph.predecessors(v)) for v in comp}
        acyclic_children = {v: list(dfs_graph.successors(v)) for v in comp}
        for cyclic_members in nx.simple_cycles(cycle_dfs_graph):
            top = -1
            for member in cyclic_members:
                if parents[member] and parents[member][0] in cyclic_members:
                    continue
                top = member
                break
            cyclic_children = [m for m in cyclic_members if m != top]
            acyclic_children[top] = [c for c in acyclic_children[top] if c not in cyclic_children]
            for c in cyclic_children:
                allocated.add((min(top, c), max(top, c)))
                if top not in parents[c]:
                    parents[c].append(top)
        for v in comp:
            for c in acyclic_children[v]:
                allocated.add((min(v, c), max(v, c)))
    return allocated


# ------------------------------------------------------------------ graphs
@pytest.mark.parametrize("rungs", [1, 2, 3, 4, 7, 12])
def test_ladder_is_ladder_graph(rungs):
    assert nx.is_isomorphic(ladder_paper(rungs), nx.ladder_graph(rungs))


@pytest.mark.parametrize("rungs", [1, 2, 3, 5, 20, 151])
def test_ladder_matches_julia(rungs):
    G = ladder_paper(rungs)
    assert sorted(G.nodes) == list(range(2 * rungs))
    assert set(G.edges) == set(_graph_of(_julia_ladder(rungs)).edges)


@pytest.mark.parametrize("N", range(1, 10))
def test_net_small_is_grid(N):
    G = net_paper(N)
    assert sorted(G.nodes) == list(range(N * N))
    assert nx.is_isomorphic(G, nx.grid_2d_graph(N, N))
    assert set(G.edges) == set(gs.generators.net(N).edges)


@pytest.mark.parametrize("N", range(1, 19))
def test_net_matches_julia(N):
    J = _graph_of(_julia_net(N))
    G = net_paper(N)
    assert G.number_of_nodes() == J.number_of_nodes() == N * N
    assert set(G.edges) == set(J.edges)


@pytest.mark.parametrize("N", [10, 12, 18])
def test_net_wraps_for_large_N(N):
    G, J = net_paper(N), _graph_of(_julia_net(N))
    assert (G.number_of_nodes(), G.number_of_edges()) == (J.number_of_nodes(),
                                                          J.number_of_edges())
    assert G.number_of_nodes() == N * N
    assert G.number_of_edges() > 2 * N * (N - 1)       # more than the N x N grid
    assert not nx.is_isomorphic(G, nx.grid_2d_graph(N, N))


def test_net_10_is_grid_plus_row_wraps():
    # Derived by hand from net.jl: for N = 10 the ids 1..100 are all distinct, so the graph is
    # the 10x10 grid plus the base grid's 9 edges (10i+10) - (10i+11), i.e. from vertex 10i+9
    # (last of row i) to 10i+10 (first of row i+1) 0-based: 180 + 9 = 189 edges.
    G = net_paper(10)
    extra = {(10 * i + 9, 10 * i + 10) for i in range(9)}
    assert set(G.edges) == set(gs.generators.net(10).edges) | extra
    assert G.number_of_edges() == 189


def test_net_beyond_base_matrix_raises():
    net_paper(32)
    with pytest.raises(ValueError):
        net_paper(33)
    with pytest.raises(ValueError):
        net_paper(0)
    with pytest.raises(TypeError):
        net_paper(2.0)


@pytest.mark.parametrize("N", range(1, 6))
def test_crystal_small_is_cubic_grid(N):
    G = crystal_paper(N)
    assert sorted(G.nodes) == list(range(N**3))
    assert nx.is_isomorphic(G, nx.grid_graph([N, N, N]))


@pytest.mark.parametrize("N", [1, 2, 3, 6, 11])
def test_crystal_matches_julia(N):
    assert set(crystal_paper(N).edges) == set(_graph_of(_julia_crystal(N)).edges)
    if N <= 6:
        assert set(crystal_paper(N).edges) == set(gs.generators.crystal(N).edges)


def test_paper_sizes():
    assert list(PAPER_SIZES["ladder"]) == list(range(1, 152))
    assert list(PAPER_SIZES["net"]) == list(range(1, 19))
    assert list(PAPER_SIZES["crystal"]) == list(range(1, 7))
    assert paper_graph("net", 4).number_of_nodes() == 16
    with pytest.raises(ValueError):
        paper_graph("tree", 3)


# ------------------------------------------------------------------ fill
_SMALL = [("ladder", r) for r in (1, 2, 3, 6)] + [("net", N) for N in (2, 3, 4, 5, 10, 11)] + [
    ("crystal", N) for N in (2, 3)]


@pytest.mark.parametrize("family,size", _SMALL)
def test_fill_matches_julia_constructor(family, size):
    G = paper_graph(family, size)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * G.number_of_nodes() + 1000))
    try:
        allocated = _julia_allocated_pairs(G)
    finally:
        sys.setrecursionlimit(limit)
    edges = {tuple(sorted(e)) for e in G.edges}
    assert edges <= allocated
    assert allocated - edges == set(paper_fill_pairs(G))


def test_fill_and_order_match_graphsolve_on_paper_graphs():
    graphs = [ladder_paper(r) for r in (1, 2, 9, 50, 151)]
    graphs += [net_paper(N) for N in PAPER_SIZES["net"]]
    graphs += [crystal_paper(N) for N in PAPER_SIZES["crystal"]]
    for G in graphs:
        an = gs.analyze(G, "brudigam")
        assert paper_fill_pairs(G) == tuple(an.fill_blocks)
        assert paper_elimination_order(G) == an.elimination_order


def test_fill_on_disconnected_graph():
    G = nx.disjoint_union(ladder_paper(3), net_paper(3))
    an = gs.analyze(G, "brudigam")
    assert paper_fill_pairs(G) == tuple(an.fill_blocks)
    assert paper_elimination_order(G) == an.elimination_order


# ------------------------------------------------------------------ matrices
def _nonzero_block_pattern(A: gs.BlockMatrix, b: int) -> set[tuple[int, int]]:
    D = A.to_dense()
    n = D.shape[0] // b
    nz = np.abs(D).reshape(n, b, n, b).sum(axis=(1, 3)) != 0
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(nz), strict=True)}


@pytest.mark.parametrize("G", [ladder_paper(5), net_paper(4), crystal_paper(3), net_paper(11)],
                         ids=["ladder5", "net4", "crystal3", "net11"])
def test_paper_matrix_pattern(G):
    n = G.number_of_nodes()
    A = paper_matrix(G, block_size=6, seed=3)
    assert A.shape == (6 * n, 6 * n)
    fill = set(paper_fill_pairs(G))
    pairs = {tuple(sorted(e)) for e in G.edges} | fill
    assert {tuple(sorted(e)) for e in A.graph.edges} == pairs
    expected = {(i, i) for i in range(n)} | pairs | {(j, i) for i, j in pairs}
    assert _nonzero_block_pattern(A, 6) == expected
    assert np.all(A.data != 0)                     # every allocated entry is drawn
    assert not A.is_symmetric()


def test_paper_matrix_without_fill():
    G = net_paper(4)
    A = paper_matrix(G, fill=False, seed=0)
    assert {tuple(sorted(e)) for e in A.graph.edges} == {tuple(sorted(e)) for e in G.edges}


def test_paper_matrix_entries_standard_normal():
    A = paper_matrix(net_paper(12), seed=0)          # ~ 124k entries
    x = A.data
    assert x.size > 100_000
    assert abs(x.mean()) < 0.02
    assert abs(x.std() - 1.0) < 0.02
    assert abs(np.mean(np.abs(x) < 1.0) - 0.6827) < 0.01


def test_paper_matrix_deterministic_per_seed():
    G = crystal_paper(2)
    a, b, c = paper_matrix(G, seed=5), paper_matrix(G, seed=5), paper_matrix(G, seed=6)
    assert np.array_equal(a.data, b.data)
    assert not np.array_equal(a.data, c.data)
    assert np.array_equal(paper_matrix(G, block_size=2, seed=1).to_dense(),
                          paper_matrix(G, block_size=2, seed=1).to_dense())


def test_paper_matrix_factors_in_original_order_without_new_fill():
    G = net_paper(5)
    A = paper_matrix(G, seed=2)
    an = gs.analyze(A, ordering=paper_elimination_order(G))
    assert an.n_fill == 0
    b = paper_vector(A.shape[0], seed=2)
    F = gs.factorize(A, analysis=an)
    x = F.solve(b)
    D = A.to_dense()
    assert np.allclose(D @ x, b, atol=1e-6 * np.linalg.cond(D))


def test_paper_dense_matrix():
    F = paper_dense_matrix(300, seed=1)
    assert F.shape == (300, 300)
    assert F.min() >= 0.0 and F.max() < 1.0          # Julia rand: uniform [0, 1)
    assert abs(F.mean() - 0.5) < 0.01 and abs(F.var() - 1 / 12) < 0.005
    assert np.array_equal(F, paper_dense_matrix(300, seed=1))
    assert not np.array_equal(F, paper_dense_matrix(300, seed=2))
    Z = paper_dense_matrix(300, seed=1, distribution="normal")
    assert abs(Z.mean()) < 0.02 and abs(Z.std() - 1.0) < 0.02
    with pytest.raises(ValueError):
        paper_dense_matrix(3, distribution="cauchy")


def test_paper_vector():
    assert paper_vector(7, seed=0).shape == (7,)
    u = paper_vector(10_000, seed=0, distribution="uniform")
    assert u.min() >= 0.0 and u.max() < 1.0
    assert np.array_equal(paper_vector(5, seed=4), paper_vector(5, seed=4))
