"""Oracles of the symbolic phase that are independent of the library: a symbolic elimination
performed on a networkx copy of the graph, DFS trees and back edges from networkx
(``nx.dfs_tree``), and Brüdigam's cyclic-children pattern built from them (Brüdigam et al.
2023, §4.1-4.2). Shared by ``test_ordering.py`` and ``test_analysis.py``."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np


def pair(u: int, v: int) -> tuple[int, int]:
    return (u, v) if u < v else (v, u)


def symbolic_elimination(G: nx.Graph, order) -> tuple[set[tuple[int, int]], nx.Graph]:
    """Eliminate ``order`` on a copy of ``G`` (joining the remaining neighbours of every
    eliminated node). Returns the fill pairs and the filled graph."""
    H = nx.Graph()
    H.add_nodes_from(G.nodes)
    H.add_edges_from(G.edges)
    filled = H.copy()
    for v in order:
        nbrs = list(H[v])
        for a, b in itertools.combinations(nbrs, 2):
            H.add_edge(a, b)
            filled.add_edge(a, b)
        H.remove_node(v)
    fill = {pair(u, v) for u, v in filled.edges if not G.has_edge(u, v)}
    return fill, filled


def sorted_copy(G: nx.Graph) -> nx.Graph:
    """G with sorted adjacency: the library's DFS visits neighbours in increasing node id."""
    H = nx.Graph()
    H.add_nodes_from(sorted(G))
    H.add_edges_from(sorted(tuple(sorted(e)) for e in G.edges))
    return H


def dfs_structure(G: nx.Graph, roots):
    """DFS forest of G from ``roots`` (networkx, neighbours in increasing id), back edges
    oriented (descendant, ancestor), and the tree parent of every node."""
    G = sorted_copy(G)
    tparent: dict[int, int] = {}
    tree_edges: set[frozenset] = set()
    depth: dict[int, int] = {}
    for r in roots:
        T = nx.dfs_tree(G, r)
        tparent[r] = -1
        depth[r] = 0
        for u, v in nx.bfs_edges(T, r):         # T is directed root -> leaves
            tparent[v] = u
            depth[v] = depth[u] + 1
        tree_edges |= {frozenset(e) for e in T.edges}
    assert set(tparent) == set(G.nodes), "roots must cover every component"
    back = []
    for u, v in G.edges:
        if frozenset((u, v)) in tree_edges:
            continue
        x, a = (u, v) if depth[u] > depth[v] else (v, u)
        back.append((x, a))
    return tparent, back


def tree_path_up(tparent, x, a):
    """Nodes on the tree path from x up to (and excluding) its ancestor a."""
    out = []
    w = x
    while w != a:
        out.append(w)
        w = tparent[w]
        assert w != -1, f"{a} is not an ancestor of {x}"
    return out


def cyclic_children_fill(G: nx.Graph, roots) -> set[tuple[int, int]]:
    """Brüdigam's pattern: every back edge (x, a) links a to every node of the tree path from
    a down to x; fill = those pairs minus graph edges."""
    tparent, back = dfs_structure(G, roots)
    pairs = set()
    for x, a in back:
        for w in tree_path_up(tparent, x, a):
            pairs.add(pair(a, w))
    return {p for p in pairs if not G.has_edge(*p)}


def check_basic_consistency(G: nx.Graph, an) -> None:
    n = G.number_of_nodes()
    order = an.elimination_order
    assert sorted(order) == list(range(n))
    assert len(an.position) == n
    for k, v in enumerate(order):
        assert an.position[v] == k
    # fill blocks: sorted (i < j) pairs, none of them a graph edge
    assert list(an.fill_blocks) == sorted(an.fill_blocks)
    assert all(i < j and not G.has_edge(i, j) for i, j in an.fill_blocks)
    assert len(set(an.fill_blocks)) == len(an.fill_blocks)


def check_against_symbolic(G: nx.Graph, an) -> None:
    """fill, children and parents agree with a symbolic elimination on networkx."""
    fill, filled = symbolic_elimination(G, an.elimination_order)
    assert set(an.fill_blocks) == fill
    pos = {v: k for k, v in enumerate(an.elimination_order)}
    for v in G.nodes:
        earlier = sorted((u for u in filled[v] if pos[u] < pos[v]), key=pos.__getitem__)
        later = sorted((u for u in filled[v] if pos[u] > pos[v]), key=pos.__getitem__)
        assert tuple(an.children[v]) == tuple(earlier), v
        assert tuple(an.parents[v]) == tuple(later), v
        assert an.parent[v] == (later[0] if later else -1), v
    # roots: one per component, the last eliminated node of that component
    comps = list(nx.connected_components(G))
    assert len(an.roots) == len(comps)
    for comp in comps:
        last = max(comp, key=pos.__getitem__)
        assert last in an.roots


def relabelled(G: nx.Graph, seed: int) -> nx.Graph:
    """``G`` with its node ids randomly permuted (a user's own numbering of the same graph)."""
    perm = np.random.default_rng(seed).permutation(G.number_of_nodes())
    return nx.relabel_nodes(G, dict(enumerate(perm.tolist())))
