"""Brüdigam et al. (2023) Fig. 9 b-d as the original benchmark ran it.

§5.2 of Brüdigam, Sosnowski, Manchester & Hirche (2023) times the graph-based LDU solver of
GraphBasedSystems.jl against a dense solve on linear systems whose block pattern is a ladder, a
"net" and a "crystal" graph. This module reproduces the graphs, the random matrices and the
sizes of that benchmark so that the paper's figure can be re-run faithfully (the corrected
benchmark, with true grids and well-conditioned matrices, lives in :mod:`comparisons.suite`).

What the original did
---------------------
The benchmark scripts are in the repository ``janbruedigam/ConstrainedDynamics.jl`` (commit
``be308d4f5002b12fb608e36610969eb19f0e765a``), not in GraphBasedSystems.jl itself:

* ``paper_experiments/loop_complexity/graphs/ladder.jl`` (Fig. 9b), ``Nlevels = 1:151`` rungs;
* ``paper_experiments/loop_complexity/graphs/net.jl`` (Fig. 9c), ``Nlevels = 1:18``;
* ``paper_experiments/loop_complexity/graphs/crystal.jl`` (Fig. 9d), ``Nlevels = 1:6``.

Each script builds an upper-triangular 0/1 matrix ``A``, symmetrizes it (``A += A'``) and passes
it with block sizes ``ones(Int, n) * 6`` to ``GraphBasedSystems.System{Float64}(A, dims)``.

*Ladder.* Rung ``i`` (1-based) joins vertices ``2i-1`` and ``2i``; the rails join ``2i-3`` with
``2i-1`` and ``2i-2`` with ``2i``. One rung is the single edge ``1-2``. This is exactly
``networkx.ladder_graph(rungs)`` (vertex ``2i-1`` -> our ``2i-2``, ``2i`` -> ``2i-1``).

*Net.* A base matrix of size 350 x 350 holds the edges ``k -> k+1`` and ``k -> k+10``: a
10-wide grid whose row ends are also linked to the next row's start (id ``10r+10`` to
``10r+11``). The benchmark keeps the ids ``nodes = [10i+1 .. 10i+N for i = 0..N-1]`` and takes
``A[nodes, nodes]``. Vertex ``p`` (1-based position in ``nodes``) is a vertex of its own even
when its id repeats, and two vertices are adjacent iff their ids differ by 1 or 10:

* ``N <= 9``: the ids of a row never reach the row end ``10i+10``, so the result is the
  ``N x N`` grid (``N**2`` vertices, ``2N(N-1)`` edges).
* ``N = 10``: all 100 ids are distinct, but the wrap edges ``10i+10 - 10i+11`` survive: the
  10 x 10 grid plus 9 edges joining the last vertex of row ``i`` to the first of row ``i+1``.
* ``N >= 11``: row ``i`` (ids ``10i+1 .. 10i+N``) overlaps the next ones: id ``x`` appears in
  every row ``i`` with ``10i+1 <= x <= 10i+N``. Each copy is a separate vertex (a "twin" with
  the same neighbourhood as the other copies), adjacent to every copy of ``x±1`` and ``x±10``.
  The graph keeps ``N**2`` vertices but only ``10(N-1)+N`` distinct ids and far more edges
  than the grid (table below).

Vertices / edges of the original net (:func:`net_paper`) against the ``N x N`` grid's
``2N(N-1)`` edges:

====  ========  =====  ==========  ============  ==========
N     vertices  edges  grid edges  distinct ids  max degree
====  ========  =====  ==========  ============  ==========
9     81        144    144         81            4
10    100       189    180         100           4
11    121       260    220         111           6
12    144       352    264         122           7
13    169       456    312         133           8
14    196       572    364         144           8
15    225       700    420         155           8
16    256       840    480         166           8
17    289       992    544         177           8
18    324       1156   612         188           8
====  ========  =====  ==========  ============  ==========

All of them are connected. The counts were derived with :func:`net_paper`; the test suite checks
that function against a second, literal transcription of the Julia indexing (350 x 350 base
matrix, ``A[nodes, nodes]``, ``A += A'``). The original can only go up to ``N = 32`` (largest id
``11N - 10 <= 350``); :func:`net_paper` raises beyond that.

*Crystal.* ``N`` copies ("layers") of the net's ``A0 = A[nodes, nodes]`` on the block diagonal,
and layer ``l`` joined to layer ``l+1`` vertex by vertex (``A[N2*(i-2)+j, N2*(i-1)+j] = 1``,
``N2 = N^2``). For the benchmark's ``N <= 6`` this is the ``N x N x N`` grid; for ``N >= 10``
every layer inherits the net's quirk.

*Matrix entries.* GraphBasedSystems' ``System`` constructor (``src/system/system.jl`` with
``src/system/setup_functions.jl`` of ``janbruedigam/GraphBasedSystems.jl``) allocates a
``6 x 6`` entry for every diagonal block, and, per connected component, runs a depth-first search
from its smallest vertex (Graphs.jl ``dfs_tree`` and a recursive ``depth_first_search`` that
visit neighbours in increasing vertex id) and records the cycle-closing (back) edges. For every
elementary cycle of the DFS tree plus the closing edges it allocates both blocks ``(v, c)`` and
``(c, v)`` between the cycle's top vertex ``v`` (the member whose tree parent is outside the
cycle) and every other member ``c``; tree edges not on a cycle get their two blocks too.
Because a DFS of an undirected graph has only ancestor-descendant back edges, these cycles are
exactly the fundamental cycles (one per back edge ``d -> a``: the tree path from ``a`` down to
``d``), so the allocated off-diagonal pairs are the graph's edges plus the **fill pairs**
``(a, c)`` for every vertex ``c`` on a tree path from ``a`` to a back-edge end ``d`` (see
:func:`paper_fill_pairs`). The timed setup ``init1!`` then overwrites every allocated entry
(``system.matrix_entries.nzval``: diagonal, edge and fill blocks, ``(i, j)`` and ``(j, i)``
independently) and every vector entry with ``GBS.initialize!``, whose default is ``randn``:
i.i.d. standard normal values (``initialize!(entry, init_function = randn)`` in GraphBasedSystems'
``Entry`` code; older versions call it ``randomize!``). The matrix is not made diagonally dominant,
and the LDU runs without pivoting; the ladder and net scripts never check the solution (the
residual line is commented out), the crystal script computes ``norm(F\\f - x)`` once without
asserting anything.

*Fill sets.* Our ``graphsolve.analyze(G, "brudigam")`` also runs the DFS from the smallest node
of each component, visiting neighbours in increasing id, and its symbolic elimination of the DFS
post-order fills exactly the pairs ``(u, w)`` with ``w`` an ancestor of ``u`` reached by a back
edge from the subtree of ``u``, which is the same condition. With the 1-based -> 0-based shift
(order-preserving), the two fill sets coincide, and so do the elimination orders (the original's
``dfs_list`` is the same DFS post-order); the tests check this on every benchmark graph, and check
:func:`paper_fill_pairs` against a literal transcription of the constructor (recursive search,
closure de-duplication, elementary cycles, cycle tops) on small graphs. :func:`paper_matrix` uses
:func:`paper_fill_pairs`, the transcription of the original.

*Dense baseline.* The dense solve is timed on a separate matrix: ``F = full_matrix(system)``
only provides a ``6n x 6n`` buffer, which the benchmark's setup ``init2!`` overwrites with
``rand(size(A)...)`` (and ``f`` with ``rand(6n)``) before every sample, i.e. i.i.d. **uniform
[0, 1)** entries, fully dense, unrelated to the sparse system; then ``F \\ f`` (LU with partial
pivoting, LAPACK ``getrf``/``getrs``) is timed. :func:`paper_dense_matrix` reproduces that
(``distribution="uniform"``; ``"normal"`` is available for a standard normal variant).

*Timing.* Both solvers: BenchmarkTools, ``samples=100``, minimum time reported (§5.2: "the best
result of 100 samples"); the random values are regenerated in ``setup`` before each sample.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

import graphsolve as gs

__all__ = [
    "PAPER_SIZES",
    "NET_BASE_SIZE",
    "NET_BASE_WIDTH",
    "ladder_paper",
    "net_paper",
    "crystal_paper",
    "paper_graph",
    "paper_fill_pairs",
    "paper_elimination_order",
    "paper_matrix",
    "paper_dense_matrix",
    "paper_vector",
]

#: Sizes of the original benchmark loops (``for Nlevels = ...`` in the three scripts): ladder
#: rungs 1..151, net side 1..18, crystal side 1..6.
PAPER_SIZES = {"ladder": range(1, 152), "net": range(1, 19), "crystal": range(1, 7)}

#: Size of the net benchmark's base adjacency matrix (``zeros(Int, 350, 350)``).
NET_BASE_SIZE = 350
#: Row width of the net benchmark's base grid: ids ``k`` and ``k + 10`` are joined.
NET_BASE_WIDTH = 10


def _check_size(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _empty(n: int) -> nx.Graph:
    G = nx.Graph()
    G.add_nodes_from(range(n))
    return G


def ladder_paper(rungs: int) -> nx.Graph:
    """The ladder of ``ladder.jl`` (Fig. 9b): ``rungs`` rungs, ``2 * rungs`` nodes.

    Rung ``i`` (0-based) joins nodes ``2i`` and ``2i + 1``; the rails join ``2i - 2`` with
    ``2i`` and ``2i - 1`` with ``2i + 1`` (the Julia vertices ``2i + 1``, ``2i + 2`` shifted to
    0-based). Isomorphic to ``networkx.ladder_graph(rungs)``; identical to
    ``graphsolve.generators.ladder(2 * rungs)``.

    Parameters
    ----------
    rungs : int
        Number of rungs (the benchmark's ``Nlevels``), ``>= 1``.

    Returns
    -------
    networkx.Graph
        Nodes ``0 .. 2*rungs - 1``, ``3 * rungs - 2`` edges.

    Examples
    --------
    >>> G = ladder_paper(3)
    >>> G.number_of_nodes(), sorted(G.edges)
    (6, [(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (3, 5), (4, 5)])
    """
    rungs = _check_size("rungs", rungs, 1)
    G = _empty(2 * rungs)
    if rungs == 1:
        G.add_edge(0, 1)                          # A[1:2, 1:2] = [0 1; 0 0]
        return G
    G.add_edges_from([(0, 1), (0, 2), (1, 3), (2, 3)])   # the 4-cycle A0
    for i in range(3, rungs + 1):                 # Julia's loop variable, 1-based rung index
        a, b = 2 * i - 1, 2 * i                   # 1-based vertices of rung i
        G.add_edge(a - 2 - 1, a - 1)              # A[2i-3, 2i-1] = 1 (rail)
        G.add_edge(b - 2 - 1, b - 1)              # A[2i-2, 2i]   = 1 (rail)
        G.add_edge(a - 1, b - 1)                  # A[2i-1, 2i]   = 1 (rung)
    return G


def _net_ids(N: int) -> list[int]:
    """The base-grid ids the net benchmark keeps, in vertex order (1-based ids)."""
    if NET_BASE_WIDTH * (N - 1) + N > NET_BASE_SIZE:
        raise ValueError(f"N = {N}: the original indexes a {NET_BASE_SIZE}x{NET_BASE_SIZE} base "
                         f"matrix and would fail (largest id {NET_BASE_WIDTH * (N - 1) + N}); "
                         f"N <= {(NET_BASE_SIZE + NET_BASE_WIDTH) // (NET_BASE_WIDTH + 1)}")
    return [NET_BASE_WIDTH * i + j for i in range(N) for j in range(1, N + 1)]


def _net_edges(N: int) -> list[tuple[int, int]]:
    """Edges ``(p, q)`` between 0-based vertices of the net with ids differing by 1 or 10."""
    ids = _net_ids(N)
    where: dict[int, list[int]] = {}
    for p, x in enumerate(ids):
        where.setdefault(x, []).append(p)
    edges = []
    for p, x in enumerate(ids):
        for d in (1, NET_BASE_WIDTH):
            edges.extend((p, q) for q in where.get(x + d, ()))
    return edges


def net_paper(N: int) -> nx.Graph:
    """The "net" of ``net.jl`` (Fig. 9c), with the original's wrap-around for ``N >= 10``.

    Vertex ``p = i*N + j`` (row ``i``, column ``j``, both 0-based) carries the base-grid id
    ``10*i + j + 1``; two vertices are adjacent iff their ids differ by 1 or 10. For ``N <= 9``
    this is the ``N x N`` grid (isomorphic to ``networkx.grid_2d_graph(N, N)``, identical to
    ``graphsolve.generators.net(N)``). For ``N = 10`` it is the grid plus 9 edges from the end
    of each row to the start of the next; for ``N >= 11`` ids repeat across rows and every copy
    is its own vertex, so there are ``N**2`` vertices with far more edges than a grid (see the
    module docstring for the counts at ``N = 9..18``).

    Parameters
    ----------
    N : int
        The benchmark's ``Nlevels``, ``1 <= N <= 32`` (the original's base matrix is 350 x 350).

    Returns
    -------
    networkx.Graph
        Nodes ``0 .. N**2 - 1``.

    Raises
    ------
    ValueError
        ``N < 1`` or ``N > 32``.

    Examples
    --------
    >>> net_paper(9).number_of_edges(), net_paper(10).number_of_edges()
    (144, 189)
    >>> net_paper(10).has_edge(9, 10)          # row 0's end joined to row 1's start
    True
    """
    N = _check_size("N", N, 1)
    G = _empty(N * N)
    G.add_edges_from(_net_edges(N))
    return G


def crystal_paper(N: int) -> nx.Graph:
    """The "crystal" of ``crystal.jl`` (Fig. 9d): ``N`` stacked nets, ``N**3`` nodes.

    Layer ``l`` (0-based) holds nodes ``l*N**2 .. (l+1)*N**2 - 1`` wired like
    :func:`net_paper` ``(N)``; node ``l*N**2 + p`` is joined to ``(l+1)*N**2 + p``. For the
    benchmark's ``N <= 6`` (indeed ``N <= 9``) this is the ``N x N x N`` grid, isomorphic to
    ``networkx.grid_graph([N, N, N])`` and identical to ``graphsolve.generators.crystal(N)``;
    for ``N >= 10`` every layer carries the net's wrap-around.

    Parameters
    ----------
    N : int
        The benchmark's ``Nlevels``, ``1 <= N <= 32``.

    Returns
    -------
    networkx.Graph
        Nodes ``0 .. N**3 - 1``.

    Examples
    --------
    >>> G = crystal_paper(3)
    >>> G.number_of_nodes(), G.number_of_edges()
    (27, 54)
    """
    N = _check_size("N", N, 1)
    N2 = N * N
    layer = _net_edges(N)
    G = _empty(N2 * N)
    for lvl in range(N):
        off = lvl * N2
        G.add_edges_from((off + p, off + q) for p, q in layer)
        if lvl + 1 < N:
            G.add_edges_from((off + j, off + N2 + j) for j in range(N2))
    return G


_GRAPHS = {"ladder": ladder_paper, "net": net_paper, "crystal": crystal_paper}


def paper_graph(family: str, size: int) -> nx.Graph:
    """The original benchmark's graph of ``family`` (``"ladder"``, ``"net"``, ``"crystal"``)
    at the loop value ``size`` (rungs for the ladder, side ``N`` otherwise)."""
    if family not in _GRAPHS:
        raise ValueError(f"unknown family {family!r}; choose from {sorted(_GRAPHS)}")
    return _GRAPHS[family](size)


def _check_nodes(G: nx.Graph) -> int:
    n = G.number_of_nodes()
    if n == 0 or set(G.nodes) != set(range(n)):
        raise ValueError("the graph must have nodes 0..n-1 (n >= 1)")
    return n


def _paper_dfs(G: nx.Graph) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """Depth-first search of GraphBasedSystems: per component from its smallest node, neighbours
    in increasing id. Returns tree parents (-1 for roots), the post-order (the original's
    ``dfs_list``, leaves first) and the back edges ``(d, a)`` with ``a`` an ancestor of ``d``."""
    n = _check_nodes(G)
    adj = [sorted(G[v]) for v in range(n)]
    parent = [-2] * n                          # -2: unvisited, -1: root
    post: list[int] = []
    back: list[tuple[int, int]] = []
    for root in range(n):                      # smallest node of each new component
        if parent[root] != -2:
            continue
        parent[root] = -1
        on_stack = {root}
        stack = [(root, iter(adj[root]))]
        while stack:
            v, it = stack[-1]
            for u in it:
                if parent[u] == -2:            # tree edge v -> u
                    parent[u] = v
                    on_stack.add(u)
                    stack.append((u, iter(adj[u])))
                    break
                if u != parent[v] and u in on_stack:   # back edge v -> ancestor u
                    back.append((v, u))
            else:
                stack.pop()
                on_stack.discard(v)
                post.append(v)
    return parent, post, back


def paper_elimination_order(G: nx.Graph) -> tuple[int, ...]:
    """The original's elimination order on ``G``: the DFS post-order ``dfs_list``.

    It equals ``graphsolve.analyze(G, "brudigam").elimination_order``. Factor a
    :func:`paper_matrix` with ``gs.analyze(A, ordering=paper_elimination_order(G))``: a fresh
    ``"brudigam"`` analysis of ``A.graph`` would run its DFS on the graph *with* the fill edges,
    which can pick another tree (and more fill) than the original did on ``G``.

    Examples
    --------
    >>> paper_elimination_order(ladder_paper(2))
    (2, 3, 1, 0)
    """
    return tuple(_paper_dfs(G)[1])


def paper_fill_pairs(G: nx.Graph) -> tuple[tuple[int, int], ...]:
    """Fill pairs that GraphBasedSystems' ``System`` constructor allocates for ``G``.

    Per connected component: depth-first search from the smallest node, neighbours in increasing
    id (as ``dfs_tree`` and ``depth_first_search`` do on a Graphs.jl ``SimpleGraph``, whose
    adjacency lists are sorted). For every back edge ``d -> a`` (``a`` an ancestor of ``d``) the
    cycle's top ``a`` gets a block with every node ``c`` on the tree path from ``a`` to ``d``.
    The pairs ``(a, c)`` that are not edges of ``G`` are returned.

    Parameters
    ----------
    G : networkx.Graph
        Nodes ``0..n-1`` (the Julia vertices ``1..n`` shifted by one, which keeps their order).

    Returns
    -------
    tuple of (int, int)
        Sorted pairs ``(i, j)`` with ``i < j``. The same set as
        ``graphsolve.analyze(G, "brudigam").fill_blocks``.

    Examples
    --------
    >>> paper_fill_pairs(ladder_paper(3))      # DFS 0-1-3-2-4-5; back edges 2->0, 5->3
    ((0, 3), (3, 4))
    """
    parent, _, back = _paper_dfs(G)
    pairs: set[tuple[int, int]] = set()
    for d, a in back:
        c = d
        while c != a:
            pairs.add((min(a, c), max(a, c)))
            c = parent[c]
    return tuple(sorted(p for p in pairs if not G.has_edge(*p)))


def paper_matrix(G: nx.Graph, block_size: int = 6, seed=0, fill: bool = True) -> gs.BlockMatrix:
    """The random block matrix the original benchmark factorized on ``G``.

    Every allocated entry of the GraphBasedSystems ``System`` is i.i.d. standard normal: the
    diagonal blocks, both blocks ``(i, j)`` and ``(j, i)`` (independently) of every edge and,
    with ``fill=True`` (the original), of every fill pair of :func:`paper_fill_pairs`. The
    result is generally unsymmetric and not diagonally dominant (as in the original, a block
    pivot may be ill-conditioned).

    Parameters
    ----------
    G : networkx.Graph
        Nodes ``0..n-1``, e.g. from :func:`ladder_paper`, :func:`net_paper`,
        :func:`crystal_paper`.
    block_size : int
        Size of every block (the paper: 6).
    seed : int, None or numpy.random.Generator
        Seed of ``numpy.random.default_rng``; the same seed gives the same matrix.
    fill : bool
        Also allocate and fill the blocks of the fill pairs (the matrix's graph then has them
        as extra edges). ``False`` gives the pattern of ``G`` only.

    Returns
    -------
    graphsolve.BlockMatrix
        Shape ``(block_size * n, block_size * n)``; its graph is ``G`` plus the fill edges.
        Factor it in the original's order, ``gs.analyze(A, ordering=paper_elimination_order(G))``
        (no further fill), see :func:`paper_elimination_order`.

    Examples
    --------
    >>> A = paper_matrix(ladder_paper(3), seed=1)
    >>> A.shape, A.graph.number_of_edges(), A.is_symmetric()
    ((36, 36), 9, False)
    """
    n = _check_nodes(G)
    b = _check_size("block_size", block_size, 1)
    H = _empty(n)
    H.add_edges_from(tuple(sorted(e)) for e in G.edges)
    if fill:
        H.add_edges_from(paper_fill_pairs(G))
    rng = np.random.default_rng(seed)
    diag = rng.standard_normal((n, b, b))
    pairs = sorted(tuple(sorted(e)) for e in H.edges)
    vals = rng.standard_normal((len(pairs), 2, b, b))
    off = {}
    for (i, j), v in zip(pairs, vals, strict=True):
        off[(i, j)] = v[0]
        off[(j, i)] = v[1]
    return gs.BlockMatrix.from_blocks(H, list(diag), off)


def _draw(rng: np.random.Generator, shape, distribution: str) -> np.ndarray:
    if distribution == "uniform":
        return rng.random(shape)
    if distribution == "normal":
        return rng.standard_normal(shape)
    raise ValueError(f'distribution must be "uniform" or "normal", got {distribution!r}')


def paper_dense_matrix(N: int, seed=0, distribution: str = "uniform") -> np.ndarray:
    """The separate dense matrix of the dense baseline (``init2!``: ``rand(6n, 6n)``).

    Parameters
    ----------
    N : int
        Scalar dimension (``6 * n`` for ``n`` nodes of 6 x 6 blocks).
    seed : int, None or numpy.random.Generator
    distribution : {"uniform", "normal"}
        ``"uniform"`` (the original, Julia ``rand``): i.i.d. uniform on [0, 1). ``"normal"``:
        i.i.d. standard normal.

    Returns
    -------
    ndarray of float64, shape (N, N)

    Examples
    --------
    >>> F = paper_dense_matrix(12, seed=0)
    >>> F.shape, bool(F.min() >= 0.0 and F.max() < 1.0)
    ((12, 12), True)
    """
    N = _check_size("N", N, 1)
    return _draw(np.random.default_rng(seed), (N, N), distribution)


def paper_vector(N: int, seed=0, distribution: str = "normal") -> np.ndarray:
    """A right-hand side as the original drew it.

    The graph-based system's vector entries are set by ``initialize!`` (``randn``:
    ``distribution="normal"``, the default); the dense baseline's ``f`` by ``rand(6n)``
    (``distribution="uniform"``).

    Parameters
    ----------
    N : int
        Scalar dimension.
    seed : int, None or numpy.random.Generator
    distribution : {"normal", "uniform"}

    Returns
    -------
    ndarray of float64, shape (N,)
    """
    N = _check_size("N", N, 1)
    return _draw(np.random.default_rng(seed), (N,), distribution)
