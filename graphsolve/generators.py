"""NetworkX-style generators for the graphs of block-graph matrices.

Every generator returns an undirected :class:`networkx.Graph` whose nodes are exactly the
integers ``0 .. n-1`` (added in increasing order), so that node ``i`` can index block row and
column ``i`` of a block matrix directly. Generated graphs carry no node attributes unless a
function says otherwise.

The families cover the usual test structures of sparse block solvers:

* trees: :func:`path`, :func:`star`, :func:`random_tree`;
* graphs with few, short cycles: :func:`ladder`, :func:`segment_chain`;
* meshes: :func:`net` (2-D grid) and :func:`crystal` (3-D grid);
* random forests with a chosen number of extra cycle-closing edges: :func:`random_graph`;
* the bipartite body/constraint graph of a mechanism: :func:`constraint_graph`.

Invalid arguments (sizes below their minimum, non-integers, booleans) raise
:class:`graphsolve.errors.GraphError`, whose message names the argument and its value.
"""

from __future__ import annotations

import heapq
import numbers
from typing import Any

import networkx as nx
import numpy as np

from graphsolve.errors import GraphError

__all__ = [
    "path",
    "star",
    "random_tree",
    "ladder",
    "net",
    "crystal",
    "segment_chain",
    "random_graph",
    "constraint_graph",
]

SeedLike = int | np.integer | np.random.Generator | None


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _check_int(name: str, value: Any, minimum: int) -> int:
    """Return ``value`` as a Python int, or raise GraphError if it is not an int >= minimum."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise GraphError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if value < minimum:
        raise GraphError(f"{name} must be >= {minimum}, got {value}")
    return value


def _rng(seed: SeedLike) -> np.random.Generator:
    """Turn ``seed`` (None, an int or a Generator) into a numpy Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise GraphError(f"seed must be None, an int or a numpy Generator, got {seed!r}")
    if int(seed) < 0:
        raise GraphError(f"seed must be non-negative, got {int(seed)}")
    return np.random.default_rng(int(seed))


def _empty(n: int) -> nx.Graph:
    """Graph with nodes ``0 .. n-1`` (in order) and no edges."""
    G = nx.Graph()
    G.add_nodes_from(range(n))
    return G


def _grid(k: int, dim: int) -> nx.Graph:
    """The ``k x ... x k`` grid graph in ``dim`` dimensions, point ``(i_1, ..., i_dim)`` as node
    ``(i_1 k + i_2) k + ...`` (row-major): each node is joined to its successor along every
    axis, the last axis (stride 1) first, nodes in increasing id."""
    G = _empty(k**dim)
    strides = [k**d for d in range(dim)]
    for v in range(k**dim):
        for s in strides:
            if (v // s) % k + 1 < k:
                G.add_edge(v, v + s)
    return G


def _prufer_edges(n: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Edges of the labelled tree on ``0 .. n-1`` coded by a uniformly random Prüfer sequence."""
    if n == 1:
        return []
    if n == 2:
        return [(0, 1)]
    sequence = [int(x) for x in rng.integers(0, n, size=n - 2)]
    degree = [1] * n
    for x in sequence:
        degree[x] += 1
    leaves = [v for v in range(n) if degree[v] == 1]
    heapq.heapify(leaves)
    edges = []
    for x in sequence:
        leaf = heapq.heappop(leaves)
        edges.append((leaf, x))
        degree[x] -= 1
        if degree[x] == 1:
            heapq.heappush(leaves, x)
    u = heapq.heappop(leaves)
    v = heapq.heappop(leaves)
    edges.append((u, v))
    return edges


# ---------------------------------------------------------------------------------------------
# trees
# ---------------------------------------------------------------------------------------------


def path(n: int) -> nx.Graph:
    """Path graph ``0 - 1 - … - (n-1)``.

    Parameters
    ----------
    n : int
        Number of nodes, ``n >= 1``.

    Returns
    -------
    networkx.Graph
        The path with edges ``(i, i + 1)`` for ``0 <= i < n - 1``.

    Raises
    ------
    GraphError
        If ``n`` is not an integer or ``n < 1``.

    Examples
    --------
    >>> G = path(4)
    >>> sorted(G.edges)
    [(0, 1), (1, 2), (2, 3)]
    >>> path(1).number_of_nodes(), path(1).number_of_edges()
    (1, 0)
    """
    n = _check_int("n", n, 1)
    G = _empty(n)
    G.add_edges_from((i, i + 1) for i in range(n - 1))
    return G


def star(n: int) -> nx.Graph:
    """Star graph: hub ``0`` joined to every leaf ``1, …, n-1``.

    Parameters
    ----------
    n : int
        Total number of nodes including the hub, ``n >= 1``; ``star(1)`` is a single node.

    Returns
    -------
    networkx.Graph
        The star with edges ``(0, i)`` for ``1 <= i < n``.

    Raises
    ------
    GraphError
        If ``n`` is not an integer or ``n < 1``.

    Examples
    --------
    >>> G = star(4)
    >>> sorted(G.edges)
    [(0, 1), (0, 2), (0, 3)]
    >>> G.degree[0]
    3
    """
    n = _check_int("n", n, 1)
    G = _empty(n)
    G.add_edges_from((0, i) for i in range(1, n))
    return G


def random_tree(n: int, seed: SeedLike = None) -> nx.Graph:
    """Uniformly random labelled tree on ``n`` nodes.

    The tree is decoded from a uniformly random Prüfer sequence, so each of the ``n**(n-2)``
    labelled trees is equally likely.

    Parameters
    ----------
    n : int
        Number of nodes, ``n >= 1``. ``n = 1`` gives a single node and ``n = 2`` one edge.
    seed : int, numpy.random.Generator or None, optional
        Source of randomness. An int seed gives a deterministic tree; a Generator is used (and
        advanced) as is; None draws fresh entropy.

    Returns
    -------
    networkx.Graph
        A tree with nodes ``0 .. n-1``.

    Raises
    ------
    GraphError
        If ``n`` is not an integer, ``n < 1``, or ``seed`` is of an unsupported type.

    Examples
    --------
    >>> T = random_tree(10, seed=1)
    >>> nx.is_tree(T), T.number_of_nodes()
    (True, 10)
    >>> sorted(T.edges) == sorted(random_tree(10, seed=1).edges)
    True
    """
    n = _check_int("n", n, 1)
    rng = _rng(seed)
    G = _empty(n)
    G.add_edges_from(_prufer_edges(n, rng))
    return G


# ---------------------------------------------------------------------------------------------
# cyclic structures
# ---------------------------------------------------------------------------------------------


def ladder(n: int) -> nx.Graph:
    """Ladder graph with ``n`` nodes on two rails (``n // 2`` rungs).

    Rung ``r`` (``0 <= r < n // 2``) joins nodes ``2r`` and ``2r + 1``; the rails are the edges
    ``2r - (2r + 2)`` and ``(2r + 1) - (2r + 3)``. The result is isomorphic to
    ``networkx.ladder_graph(n // 2)``, has ``3n/2 - 2`` edges and ``n/2 - 1`` independent
    cycles.

    Parameters
    ----------
    n : int
        Number of nodes; must be even and ``>= 2``.

    Returns
    -------
    networkx.Graph
        The ladder with nodes ``0 .. n-1``.

    Raises
    ------
    GraphError
        If ``n`` is not an integer, ``n < 2`` or ``n`` is odd.

    Examples
    --------
    >>> G = ladder(6)
    >>> G.number_of_nodes(), G.number_of_edges()
    (6, 7)
    >>> sorted(G[2])
    [0, 3, 4]
    """
    n = _check_int("n", n, 2)
    if n % 2:
        raise GraphError(f"n must be even for a ladder, got {n}")
    G = _empty(n)
    rungs = n // 2
    for r in range(rungs):
        G.add_edge(2 * r, 2 * r + 1)
        if r + 1 < rungs:
            G.add_edge(2 * r, 2 * r + 2)
            G.add_edge(2 * r + 1, 2 * r + 3)
    return G


def net(k: int) -> nx.Graph:
    """Square ``k x k`` grid graph (a 2-D mesh).

    Grid point ``(i, j)`` with ``0 <= i, j < k`` is node ``i * k + j``; points are joined when
    they differ by one in exactly one coordinate. The graph has ``k**2`` nodes and
    ``2k(k - 1)`` edges and is isomorphic to ``networkx.grid_2d_graph(k, k)``.

    Parameters
    ----------
    k : int
        Side length, ``k >= 1``.

    Returns
    -------
    networkx.Graph
        The grid with nodes ``0 .. k**2 - 1``.

    Raises
    ------
    GraphError
        If ``k`` is not an integer or ``k < 1``.

    Examples
    --------
    >>> G = net(3)
    >>> G.number_of_nodes(), G.number_of_edges()
    (9, 12)
    >>> sorted(G[4])
    [1, 3, 5, 7]
    """
    return _grid(_check_int("k", k, 1), 2)


def crystal(k: int) -> nx.Graph:
    """Cubic ``k x k x k`` grid graph (a 3-D mesh).

    Grid point ``(i, j, l)`` with ``0 <= i, j, l < k`` is node ``(i * k + j) * k + l``; points
    are joined when they differ by one in exactly one coordinate. The graph has ``k**3`` nodes
    and ``3 k**2 (k - 1)`` edges and is isomorphic to ``networkx.grid_graph([k, k, k])``.

    Parameters
    ----------
    k : int
        Side length, ``k >= 1``.

    Returns
    -------
    networkx.Graph
        The grid with nodes ``0 .. k**3 - 1``.

    Raises
    ------
    GraphError
        If ``k`` is not an integer or ``k < 1``.

    Examples
    --------
    >>> G = crystal(2)
    >>> G.number_of_nodes(), G.number_of_edges()
    (8, 12)
    >>> sorted(G[0])
    [1, 2, 4]
    """
    return _grid(_check_int("k", k, 1), 3)


def segment_chain(m: int) -> nx.Graph:
    """Chain of ``m`` four-link closed loops, consecutive loops sharing one node.

    Square ``s`` (``0 <= s < m``) uses nodes ``3s, 3s + 1, 3s + 2, 3s + 3`` with the edges
    ``3s - (3s + 1)``, ``(3s + 1) - (3s + 2)``, ``(3s + 2) - (3s + 3)`` and ``(3s + 3) - 3s``.
    Square ``s`` and square ``s + 1`` therefore share node ``3s + 3``. The graph has
    ``3m + 1`` nodes, ``4m`` edges and cycle rank ``m``.

    Parameters
    ----------
    m : int
        Number of squares, ``m >= 1``.

    Returns
    -------
    networkx.Graph
        The chain with nodes ``0 .. 3m``.

    Raises
    ------
    GraphError
        If ``m`` is not an integer or ``m < 1``.

    Examples
    --------
    >>> G = segment_chain(2)
    >>> G.number_of_nodes(), G.number_of_edges()
    (7, 8)
    >>> sorted(G[3])
    [0, 2, 4, 6]
    """
    m = _check_int("m", m, 1)
    G = _empty(3 * m + 1)
    for s in range(m):
        a = 3 * s
        G.add_edges_from([(a, a + 1), (a + 1, a + 2), (a + 2, a + 3), (a + 3, a)])
    return G


# ---------------------------------------------------------------------------------------------
# random graphs
# ---------------------------------------------------------------------------------------------


def random_graph(
    n: int, extra_edges: int = 0, seed: SeedLike = None, components: int = 1
) -> nx.Graph:
    """Random forest of ``components`` trees plus ``extra_edges`` cycle-closing edges.

    The ``n`` nodes are split into ``components`` blocks of consecutive labels whose sizes
    differ by at most one (larger blocks first). Each block receives a uniformly random labelled
    tree (see :func:`random_tree`). Then ``extra_edges`` distinct non-edges, each joining two
    nodes of the same block, are chosen uniformly at random and added. The result has exactly
    ``components`` connected components and cycle rank ``extra_edges``.

    Parameters
    ----------
    n : int
        Number of nodes, ``n >= 1``.
    extra_edges : int, optional
        Number of edges added on top of the forest, ``>= 0``. Default 0 (a forest).
    seed : int, numpy.random.Generator or None, optional
        Source of randomness; an int seed gives a deterministic graph.
    components : int, optional
        Number of connected components, ``1 <= components <= n``. Default 1.

    Returns
    -------
    networkx.Graph
        A graph with nodes ``0 .. n-1``, ``n - components + extra_edges`` edges.

    Raises
    ------
    GraphError
        If an argument is not an integer or out of range, or if the components do not have
        ``extra_edges`` non-edges between them.

    Examples
    --------
    >>> G = random_graph(12, extra_edges=3, seed=0, components=2)
    >>> nx.number_connected_components(G)
    2
    >>> G.number_of_edges() - G.number_of_nodes() + nx.number_connected_components(G)
    3
    >>> nx.is_tree(random_graph(5, seed=1))
    True
    """
    n = _check_int("n", n, 1)
    extra_edges = _check_int("extra_edges", extra_edges, 0)
    components = _check_int("components", components, 1)
    if components > n:
        raise GraphError(f"components must be <= n = {n}, got {components}")
    rng = _rng(seed)

    q, r = divmod(n, components)
    sizes = [q + 1] * r + [q] * (components - r)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(int).tolist()

    G = _empty(n)
    for start, size in zip(starts, sizes, strict=True):
        G.add_edges_from((start + u, start + v) for u, v in _prufer_edges(size, rng))

    pairs = [s * (s - 1) // 2 for s in sizes]
    available = sum(pairs) - (n - components)
    if extra_edges > available:
        raise GraphError(
            f"extra_edges = {extra_edges} exceeds the {available} non-edges available inside "
            f"{components} component(s) of sizes {sorted(set(sizes))} (n = {n})"
        )
    if extra_edges == 0:
        return G

    if 2 * extra_edges <= available:
        # Rejection sampling: a pair chosen uniformly among all intra-block pairs, kept when it
        # is a new non-edge, is uniform over the remaining non-edges. Acceptance >= 1/2.
        weights = np.asarray(pairs, dtype=float) / sum(pairs)
        added = 0
        while added < extra_edges:
            b = int(rng.choice(components, p=weights))
            u, v = (int(x) for x in rng.choice(sizes[b], size=2, replace=False))
            u, v = starts[b] + u, starts[b] + v
            if not G.has_edge(u, v):
                G.add_edge(u, v)
                added += 1
    else:
        # Dense request: enumerate every non-edge (at most 2 * extra_edges of them).
        candidates = [
            (start + u, start + v)
            for start, size in zip(starts, sizes, strict=True)
            for u in range(size)
            for v in range(u + 1, size)
            if not G.has_edge(start + u, start + v)
        ]
        chosen = rng.choice(len(candidates), size=extra_edges, replace=False)
        G.add_edges_from(candidates[int(i)] for i in chosen)
    return G


# ---------------------------------------------------------------------------------------------
# mechanisms
# ---------------------------------------------------------------------------------------------


def constraint_graph(G: nx.Graph, body_size: int = 6, constraint_size: int = 3) -> nx.Graph:
    """Bipartite body/constraint graph of the mechanism whose bodies and joints are ``G``.

    Every node of ``G`` becomes a *body* node and every edge ``(u, v)`` of ``G`` a *constraint*
    node joined to the two body nodes of ``u`` and ``v``. Numbering: body nodes come first,
    ``G``'s nodes in sorted order becoming ``0 .. |V|-1``; constraint nodes follow as
    ``|V| .. |V|+|E|-1`` in the order of ``sorted(tuple(sorted(e)) for e in G.edges)``.

    Node attributes of the result:

    * ``role``: ``"body"`` or ``"constraint"``;
    * ``size``: block size, ``body_size`` for bodies (overridden by the input node's own
      ``size`` attribute when present) and ``constraint_size`` for constraints;
    * ``bodies`` (constraint nodes only): the tuple of the two body node ids, ascending.

    The graph attribute ``"bodies"`` holds the number of bodies ``|V|``. The result is a tree
    exactly when ``G`` is a tree.

    Parameters
    ----------
    G : networkx.Graph
        Undirected graph with at least one node, mutually comparable node labels and no self
        loops. Parallel edges of a multigraph each become their own constraint.
    body_size : int, optional
        Default block size of a body, ``>= 1``. Default 6.
    constraint_size : int, optional
        Block size of every constraint, ``>= 1``. Default 3.

    Returns
    -------
    networkx.Graph
        The bipartite graph with ``|V| + |E|`` nodes and ``2 |E|`` edges.

    Raises
    ------
    GraphError
        If ``G`` has no nodes, is directed, has self loops or unsortable node labels, or if a
        size (argument or node attribute) is not an integer ``>= 1``.

    Examples
    --------
    >>> H = constraint_graph(path(3), body_size=6, constraint_size=3)
    >>> sorted(H.edges)
    [(0, 3), (1, 3), (1, 4), (2, 4)]
    >>> H.nodes[3]
    {'role': 'constraint', 'size': 3, 'bodies': (0, 1)}
    >>> H.nodes[0]["role"], H.nodes[0]["size"], H.graph["bodies"]
    ('body', 6, 3)
    """
    if not isinstance(G, nx.Graph):
        raise GraphError(f"G must be a networkx graph, got {type(G).__name__}")
    if G.number_of_nodes() == 0:
        raise GraphError("G must have at least one node, got an empty graph")
    if G.is_directed():
        raise GraphError(f"G must be undirected, got a directed {type(G).__name__}")
    body_size = _check_int("body_size", body_size, 1)
    constraint_size = _check_int("constraint_size", constraint_size, 1)
    loops = list(nx.selfloop_edges(G))
    if loops:
        raise GraphError(f"G must not have self loops, found one at node {loops[0][0]!r}")
    try:
        nodes = sorted(G.nodes)
        edges = sorted(tuple(sorted(e[:2])) for e in G.edges)
    except TypeError as exc:
        raise GraphError(f"the nodes of G must be mutually comparable: {exc}") from exc

    index = {v: i for i, v in enumerate(nodes)}
    H = nx.Graph()
    H.graph["bodies"] = len(nodes)
    for v in nodes:
        size = G.nodes[v].get("size", body_size)
        size = _check_int(f"size of node {v!r}", size, 1)
        H.add_node(index[v], role="body", size=size)
    for c, (u, v) in enumerate(edges, start=len(nodes)):
        bu, bv = index[u], index[v]
        H.add_node(c, role="constraint", size=constraint_size, bodies=(bu, bv))
        H.add_edge(bu, c)
        H.add_edge(bv, c)
    return H
