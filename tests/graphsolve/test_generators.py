"""Tests for graphsolve.generators."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsolve import generators as gen
from graphsolve.errors import GraphError

FAST = settings(max_examples=30, deadline=None)


def assert_labels(G: nx.Graph, n: int) -> None:
    assert isinstance(G, nx.Graph) and not G.is_directed()
    assert sorted(G.nodes) == list(range(n))
    assert list(G.nodes) == list(range(n))
    assert nx.number_of_selfloops(G) == 0


def cycle_rank(G: nx.Graph) -> int:
    return G.number_of_edges() - G.number_of_nodes() + nx.number_connected_components(G)


# ---------------------------------------------------------------------------------------------
# labels and plain structure
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "n"),
    [
        (lambda: gen.path(5), 5),
        (lambda: gen.star(5), 5),
        (lambda: gen.random_tree(9, seed=3), 9),
        (lambda: gen.ladder(8), 8),
        (lambda: gen.net(4), 16),
        (lambda: gen.crystal(3), 27),
        (lambda: gen.segment_chain(4), 13),
        (lambda: gen.random_graph(11, extra_edges=4, seed=2, components=3), 11),
    ],
)
def test_labels_and_no_attributes(make, n):
    G = make()
    assert_labels(G, n)
    assert all(not data for _, data in G.nodes(data=True))


@given(st.integers(1, 30))
@FAST
def test_path_and_star(n):
    P, S = gen.path(n), gen.star(n)
    assert_labels(P, n)
    assert_labels(S, n)
    assert nx.is_isomorphic(P, nx.path_graph(n))
    assert sorted(P.edges) == [(i, i + 1) for i in range(n - 1)]
    assert nx.is_tree(S)
    assert sorted(S.edges) == [(0, i) for i in range(1, n)]


def test_small_cases():
    assert gen.star(1).number_of_nodes() == 1 and gen.star(1).number_of_edges() == 0
    assert gen.random_tree(1, seed=0).number_of_edges() == 0
    assert sorted(gen.random_tree(2, seed=0).edges) == [(0, 1)]
    assert sorted(gen.ladder(2).edges) == [(0, 1)]
    assert gen.net(1).number_of_nodes() == 1 and gen.crystal(1).number_of_edges() == 0


@given(st.integers(1, 12))
@FAST
def test_ladder(rungs):
    n = 2 * rungs
    G = gen.ladder(n)
    assert_labels(G, n)
    assert G.number_of_edges() == 3 * n // 2 - 2
    assert nx.is_isomorphic(G, nx.ladder_graph(rungs))
    for r in range(rungs):
        assert G.has_edge(2 * r, 2 * r + 1)
        if r + 1 < rungs:
            assert G.has_edge(2 * r, 2 * r + 2) and G.has_edge(2 * r + 1, 2 * r + 3)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_net(k):
    G = gen.net(k)
    assert_labels(G, k * k)
    assert G.number_of_edges() == 2 * k * (k - 1)
    assert nx.is_isomorphic(G, nx.grid_2d_graph(k, k))
    grid = nx.grid_2d_graph(k, k)
    expected = {frozenset((i * k + j, a * k + b)) for (i, j), (a, b) in grid.edges}
    assert {frozenset(e) for e in G.edges} == expected


@pytest.mark.parametrize("k", [1, 2, 3])
def test_crystal(k):
    G = gen.crystal(k)
    assert_labels(G, k**3)
    assert G.number_of_edges() == 3 * k * k * (k - 1)
    assert nx.is_isomorphic(G, nx.grid_graph([k, k, k]))
    grid = nx.grid_graph([k, k, k])  # nodes are (l, j, i) tuples in reversed dim order
    mapping = {(a, b, c): (a * k + b) * k + c for a, b, c in grid.nodes}
    expected = {frozenset(e) for e in nx.relabel_nodes(grid, mapping).edges}
    assert {frozenset(e) for e in G.edges} == expected


@given(st.integers(1, 15))
@FAST
def test_segment_chain(m):
    G = gen.segment_chain(m)
    assert_labels(G, 3 * m + 1)
    assert G.number_of_edges() == 4 * m
    assert nx.is_connected(G)
    assert G.number_of_edges() - G.number_of_nodes() + 1 == m
    cycles = nx.cycle_basis(G)
    assert len(cycles) == m and all(len(c) == 4 for c in cycles)
    for s in range(1, m):
        assert G.degree[3 * s] == 4


# ---------------------------------------------------------------------------------------------
# random generators
# ---------------------------------------------------------------------------------------------


@given(st.integers(1, 40), st.integers(0, 2**32 - 1))
@FAST
def test_random_tree_is_tree_and_deterministic(n, seed):
    T = gen.random_tree(n, seed=seed)
    assert_labels(T, n)
    assert nx.is_tree(T)
    assert sorted(T.edges) == sorted(gen.random_tree(n, seed=seed).edges)


def test_random_tree_seeds_and_generator():
    trees = {tuple(sorted(gen.random_tree(20, seed=s).edges)) for s in range(10)}
    assert len(trees) >= 9
    a = gen.random_tree(15, seed=np.random.default_rng(7))
    b = gen.random_tree(15, seed=np.random.default_rng(7))
    assert sorted(a.edges) == sorted(b.edges)
    assert nx.is_tree(gen.random_tree(15))


def test_random_tree_is_roughly_uniform():
    # 4 labelled nodes: 16 trees; each should appear with probability 1/16.
    rng = np.random.default_rng(123)
    counts: dict[tuple, int] = {}
    draws = 3200
    for _ in range(draws):
        key = tuple(sorted(gen.random_tree(4, seed=rng).edges))
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 16
    assert all(120 < c < 280 for c in counts.values())


@given(
    st.integers(1, 30),
    st.integers(1, 5),
    st.integers(0, 15),
    st.integers(0, 2**32 - 1),
)
@FAST
def test_random_graph(n, components, extra, seed):
    components = min(components, n)
    q, r = divmod(n, components)
    sizes = [q + 1] * r + [q] * (components - r)
    available = sum(s * (s - 1) // 2 - (s - 1) for s in sizes)
    if extra > available:
        with pytest.raises(GraphError, match="extra_edges"):
            gen.random_graph(n, extra_edges=extra, seed=seed, components=components)
        return
    G = gen.random_graph(n, extra_edges=extra, seed=seed, components=components)
    assert_labels(G, n)
    assert nx.number_connected_components(G) == components
    assert cycle_rank(G) == extra
    assert G.number_of_edges() == n - components + extra
    # Components are blocks of consecutive labels with sizes as equal as possible.
    comps = sorted((sorted(c) for c in nx.connected_components(G)), key=lambda c: c[0])
    for c in comps:
        assert c == list(range(c[0], c[-1] + 1))
    assert sorted(len(c) for c in comps) == sorted(sizes)
    again = gen.random_graph(n, extra_edges=extra, seed=seed, components=components)
    assert sorted(G.edges) == sorted(again.edges)


def test_random_graph_dense_and_limits():
    K = gen.random_graph(6, extra_edges=10, seed=1)  # 5 tree edges + 10 = K6
    assert K.number_of_edges() == 15
    with pytest.raises(GraphError, match="extra_edges"):
        gen.random_graph(6, extra_edges=11, seed=1)
    with pytest.raises(GraphError, match="components"):
        gen.random_graph(3, components=4)
    with pytest.raises(GraphError, match="extra_edges"):
        gen.random_graph(3, extra_edges=-1)


# ---------------------------------------------------------------------------------------------
# constraint graph
# ---------------------------------------------------------------------------------------------


def check_constraint_graph(G: nx.Graph, body_size: int = 6, constraint_size: int = 3) -> None:
    H = gen.constraint_graph(G, body_size=body_size, constraint_size=constraint_size)
    nv, ne = G.number_of_nodes(), G.number_of_edges()
    assert_labels(H, nv + ne)
    assert H.graph["bodies"] == nv
    assert H.number_of_edges() == 2 * ne
    assert nx.is_bipartite(H)
    nodes = sorted(G.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    for v in nodes:
        data = H.nodes[index[v]]
        assert data["role"] == "body"
        assert data["size"] == G.nodes[v].get("size", body_size)
        assert "bodies" not in data
    edges = sorted(tuple(sorted(e)) for e in G.edges)
    for c, (u, v) in enumerate(edges, start=nv):
        data = H.nodes[c]
        assert data["role"] == "constraint"
        assert data["size"] == constraint_size
        assert data["bodies"] == (index[u], index[v])
        assert H.degree[c] == 2
        assert set(H[c]) == {index[u], index[v]}
    for i in range(nv):
        assert all(H.nodes[j]["role"] == "constraint" for j in H[i])
    assert nx.is_tree(H) == nx.is_tree(G)
    assert nx.number_connected_components(H) == nx.number_connected_components(G)


@given(st.integers(1, 20), st.integers(0, 4), st.integers(0, 2**32 - 1))
@FAST
def test_constraint_graph_random(n, extra, seed):
    extra = min(extra, (n - 1) * (n - 2) // 2)
    check_constraint_graph(gen.random_graph(n, extra_edges=extra, seed=seed))


def test_constraint_graph_examples():
    check_constraint_graph(gen.ladder(6), body_size=2, constraint_size=1)
    check_constraint_graph(gen.segment_chain(3))
    check_constraint_graph(gen.random_graph(10, extra_edges=2, seed=4, components=3))
    check_constraint_graph(nx.empty_graph(1))


def test_constraint_graph_relabels_and_sizes():
    G = nx.Graph()
    G.add_edges_from([("c", "a"), ("b", "a")])
    G.nodes["b"]["size"] = 9
    check_constraint_graph(G, body_size=4, constraint_size=2)
    H = gen.constraint_graph(G, body_size=4, constraint_size=2)
    assert [H.nodes[i]["size"] for i in range(3)] == [4, 9, 4]
    assert H.nodes[3]["bodies"] == (0, 1) and H.nodes[4]["bodies"] == (0, 2)


def test_constraint_graph_bad_inputs():
    with pytest.raises(GraphError, match="node"):
        gen.constraint_graph(nx.Graph())
    with pytest.raises(GraphError, match="body_size"):
        gen.constraint_graph(gen.path(2), body_size=0)
    with pytest.raises(GraphError, match="self loop"):
        gen.constraint_graph(nx.Graph([(0, 0)]))
    G = gen.path(2)
    G.nodes[0]["size"] = 0
    with pytest.raises(GraphError, match="size"):
        gen.constraint_graph(G)


# ---------------------------------------------------------------------------------------------
# argument validation
# ---------------------------------------------------------------------------------------------


def test_ladder_odd():
    with pytest.raises(GraphError, match="n"):
        gen.ladder(3)


def test_net_zero():
    with pytest.raises(GraphError, match=r"k must be >= 1, got 0"):
        gen.net(0)


def test_path_zero():
    with pytest.raises(GraphError, match=r"n must be >= 1, got 0"):
        gen.path(0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: gen.star(0),
        lambda: gen.path(2.0),
        lambda: gen.path(True),
        lambda: gen.ladder(0),
        lambda: gen.crystal(-1),
        lambda: gen.segment_chain(0),
        lambda: gen.random_tree(0),
        lambda: gen.random_tree(3, seed="x"),
        lambda: gen.random_graph(0),
    ],
)
def test_bad_arguments(call):
    with pytest.raises(GraphError):
        call()


def test_numpy_integers_accepted():
    assert gen.path(np.int64(3)).number_of_edges() == 2
    assert gen.ladder(np.int32(4)).number_of_edges() == 4
