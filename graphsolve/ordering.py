"""Symbolic phase: elimination orderings, fill prediction and the factor layout.

:func:`analyze` looks only at the graph (never at values) and returns an immutable
:class:`Analysis`: the elimination order, the filled graph (original edges plus fill), the
structure of Brüdigam et al. (2023) Algorithms 3-4 (parents, acyclic and cyclic children,
loop-opening nodes), the flat storage layout of the factors, the update schedule that the numeric
kernels follow, and block and flop counts.

One general block symbolic factorization serves every ordering: eliminating node ``v`` joins all
of its not-yet-eliminated neighbours (Rose, Tarjan & Lueker 1976). For the DFS orderings the fill
is exactly Brüdigam's cyclic-children pattern: a DFS tree of an undirected graph has only back
edges, so ``(u, w)`` becomes fill iff a back edge leaves the subtree of ``u`` towards the
ancestor ``w``, i.e. iff ``u`` lies on a fundamental cycle opened at ``w`` (2023, §4.2).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from .errors import GraphError
from .graph import block_offsets, check_graph, resolve_block_sizes, zero_diagonal_nodes

__all__ = ["Analysis", "analyze", "canonical_graph", "ORDERINGS"]

ORDERINGS = ("brudigam", "dfs", "natural", "amd")


@dataclass(frozen=True, eq=False)
class Analysis:
    """The symbolic factorization of a block graph (immutable; build with :func:`analyze`).

    Node-indexed tuples are indexed by node id; "children" of ``i`` are the nodes eliminated
    before ``i`` that share a block with ``i`` in the factors (Alg. 3 ``all_children``), and
    "parents" those eliminated after it (Alg. 4 ``all_parents``: direct and loop-opening parents),
    both sorted in elimination order.

    Attributes
    ----------
    graph : networkx.Graph
        A frozen copy of the block graph with sorted adjacency (:func:`canonical_graph`).
    block_sizes : ndarray of int64, shape (n,)
    ordering : str
        ``"brudigam"``, ``"dfs"``, ``"natural"``, ``"amd"`` or ``"given"``.
    elimination_order : tuple of int
        Nodes in the order they are eliminated (leaves first, roots last).
    position : ndarray of int64
        ``position[i]`` is the index of node ``i`` in ``elimination_order``.
    roots : tuple of int
        The last-eliminated node of every connected component.
    parent : tuple of int
        Elimination-tree parent of each node (-1 for roots).
    parents, children, acyclic_children, cyclic_children : tuple of tuple of int
        ``acyclic_children[i]`` are children ``c`` whose only link to the rest of the factor is
        ``i`` (Alg. 3 lines 2-6); ``cyclic_children[i]`` the others (Alg. 3 lines 7-21), which
        need updates from earlier children.
    loop_openers : tuple of int
        Nodes with at least one cyclic child (2023, §4.2).
    fill_blocks : tuple of (int, int)
        Block pairs ``(i, j)``, ``i < j``, zero in the matrix but nonzero in the factors.
    deferred : tuple of int
        Zero-diagonal nodes the ordering moved after their neighbours so that their pivot is
        nonsingular (see :func:`analyze`).
    zero_diagonal : frozenset of int
        Nodes with a structurally zero diagonal block.
    root : int or None
        The DFS root requested from :func:`analyze`.
    """

    graph: nx.Graph
    block_sizes: np.ndarray
    ordering: str
    elimination_order: tuple[int, ...]
    position: np.ndarray
    roots: tuple[int, ...]
    parent: tuple[int, ...]
    parents: tuple[tuple[int, ...], ...]
    children: tuple[tuple[int, ...], ...]
    acyclic_children: tuple[tuple[int, ...], ...]
    cyclic_children: tuple[tuple[int, ...], ...]
    loop_openers: tuple[int, ...]
    fill_blocks: tuple[tuple[int, int], ...]
    deferred: tuple[int, ...]
    zero_diagonal: frozenset[int]
    root: int | None
    # ---- layout for the numeric kernels (see graphsolve.kernels.reference) ----
    order: np.ndarray = field(repr=False)        # elimination order as int64 array
    d_ptr: np.ndarray = field(repr=False)        # (n+1,) diagonal blocks, by node
    x_ptr: np.ndarray = field(repr=False)        # (n+1,) row offsets of the nodes
    fe_parent: np.ndarray = field(repr=False)    # (m,) filled edge e joins parent > child
    fe_child: np.ndarray = field(repr=False)
    fe_ptr: np.ndarray = field(repr=False)       # (m+1,) L block (parent, child) / U block
    child_ptr: np.ndarray = field(repr=False)    # (n+1,) by position: edges with that parent
    parent_ptr: np.ndarray = field(repr=False)   # (n+1,) by position: into parent_edges
    parent_edges: np.ndarray = field(repr=False)  # edges with that child, by parent position
    sched_ptr: np.ndarray = field(repr=False)    # (m+1,) per target edge (i, c1)
    sched_ic2: np.ndarray = field(repr=False)    # edge (i, c2)
    sched_c1c2: np.ndarray = field(repr=False)   # edge (c1, c2)

    # ------------------------------------------------------------------ counts
    @property
    def n_nodes(self) -> int:
        return len(self.elimination_order)

    @property
    def N(self) -> int:
        """Number of scalar rows."""
        return int(self.x_ptr[-1])

    @property
    def n_fill(self) -> int:
        return len(self.fill_blocks)

    @property
    def block_counts(self) -> dict[str, int]:
        """Diagonal blocks, off-diagonal block pairs of the matrix, fill pairs, and pairs in
        the factors (``L`` has one block per pair, ``U`` its mirror)."""
        m = len(self.fe_child)
        return {"diagonal": self.n_nodes, "matrix_pairs": m - self.n_fill,
                "fill_pairs": self.n_fill, "factor_pairs": m,
                "update_triples": len(self.sched_ic2)}

    @property
    def factor_nnz(self) -> int:
        """Stored scalars of ``L + D + U`` (LDU; an LDLᵀ stores ``L`` and ``D``)."""
        return int(self.d_ptr[-1] + 2 * self.fe_ptr[-1])

    def flops(self, method: str = "ldu") -> int:
        """Floating-point operations of the numeric factorization (multiply-adds count 2).

        Pivot LU ``2/3 s³``; per factor pair ``(i, c)`` the two pivot solves and the Schur update
        of ``D_i``; per update triple ``(i, c1, c2)`` the products of Alg. 3 lines 14-15. LDLᵀ
        skips the ``U`` half.
        """
        s = self.block_sizes
        si, sc = s[self.fe_parent], s[self.fe_child]
        pivots = np.sum(2 * s.astype(float) ** 3 / 3)
        t_i = self.fe_parent[self.sched_ic2]
        t_c2 = self.fe_child[self.sched_ic2]
        t_c1 = self.fe_parent[self.sched_c1c2]
        if method == "ldu":
            edges = np.sum(4.0 * sc * sc * si + 2.0 * si * sc * si)
            triples = np.sum(4.0 * (s[t_i] * s[t_c2] * s[t_c1] + s[t_i] * s[t_c2] ** 2))
        else:
            edges = np.sum(2.0 * sc * sc * si + 2.0 * si * sc * si)
            triples = np.sum(2.0 * (s[t_i] * s[t_c2] * s[t_c1] + s[t_i] * s[t_c2] ** 2))
        return int(pivots + edges + triples)

    def solve_flops(self, method: str = "ldu", nrhs: int = 1) -> int:
        """Flops of one solve with ``nrhs`` right-hand sides."""
        s = self.block_sizes.astype(float)
        return int(nrhs * (2 * np.sum(s * s) + 4 * self.fe_ptr[-1]))

    def summary(self, compare: bool = True) -> str:
        """A text table of the analysis; with ``compare`` also every built-in ordering of the
        same graph side by side (fill pairs, factor scalars, flops).

        Examples
        --------
        >>> import graphsolve as gs
        >>> an = gs.analyze(gs.generators.ladder(6))
        >>> print(an.summary(compare=False))  # doctest: +NORMALIZE_WHITESPACE
        ordering      brudigam
        nodes                6
        edges                7
        fill pairs           2
        factor pairs         9
        update triples       4
        loop openers         2
        deferred             0
        factor scalars      24
        flops ldu           90
        """
        cols = [self]
        if compare:
            cols += [analyze(self.graph, o, root=self.root, block_sizes=self.block_sizes)
                     for o in ORDERINGS if o != self.ordering]
        rows = [
            ("ordering", lambda a: a.ordering),
            ("nodes", lambda a: a.n_nodes),
            ("edges", lambda a: a.graph.number_of_edges()),
            ("fill pairs", lambda a: a.n_fill),
            ("factor pairs", lambda a: a.block_counts["factor_pairs"]),
            ("update triples", lambda a: a.block_counts["update_triples"]),
            ("loop openers", lambda a: len(a.loop_openers)),
            ("deferred", lambda a: len(a.deferred)),
            ("factor scalars", lambda a: a.factor_nnz),
            ("flops ldu", lambda a: a.flops("ldu")),
        ]
        width = max(12, *(len(a.ordering) + 2 for a in cols))
        lines = [f"{name:<14}" + "".join(f"{f(a)!s:>{width}}" for a in cols)
                 for name, f in rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"Analysis(ordering={self.ordering!r}, nodes={self.n_nodes}, "
                f"fill_pairs={self.n_fill}, loop_openers={len(self.loop_openers)})")


# ---------------------------------------------------------------------- orderings
def _default_root(G: nx.Graph, component: set[int], zero: frozenset[int]) -> int:
    """The paper takes an arbitrary root (2023, §4.1); we take the smallest node whose diagonal
    block is nonzero, so that a KKT tree is rooted at a body and no constraint becomes a leaf."""
    candidates = [v for v in component if v not in zero]
    return min(candidates) if candidates else min(component)


def canonical_graph(G: nx.Graph) -> nx.Graph:
    """A copy of ``G`` with nodes and edges inserted in sorted order, so every adjacency list
    is sorted and a networkx DFS visits neighbours in increasing node id. Orderings computed on
    it depend only on the structure of ``G``, not on the history of its edits."""
    H = nx.Graph()
    H.graph.update(G.graph)
    H.add_nodes_from((v, G.nodes[v]) for v in sorted(G))
    H.add_edges_from((u, v, G.edges[u, v]) for u, v in sorted(tuple(sorted(e)) for e in G.edges))
    return H


def _dfs_order(G: nx.Graph, root: int | None, zero: frozenset[int], preorder: bool) -> list[int]:
    order: list[int] = []
    for comp in sorted(nx.connected_components(G), key=min):
        r = root if root is not None and root in comp else _default_root(G, comp, zero)
        if preorder:
            order.extend(reversed(list(nx.dfs_preorder_nodes(G, r))))
        else:
            order.extend(nx.dfs_postorder_nodes(G, r))
    return order


def _defer_zero_pivots(G: nx.Graph, order: list[int], zero: frozenset[int],
                       always: bool) -> tuple[list[int], list[int]]:
    """Move zero-diagonal nodes after their neighbours.

    A zero-diagonal node eliminated before any of its neighbours has a zero pivot; in a DFS
    order this is exactly a loop-closing constraint that the search left as a leaf. Such a node is
    placed right after the last of its neighbours (Brüdigam & Manchester 2020, §4.3, moves
    loop-closing constraints after their bodies). With ``always`` (minimum degree) every
    zero-diagonal node waits for all of its neighbours, i.e. bodies are eliminated before the
    constraints acting on them.
    """
    if not zero:
        return order, []
    pos = {v: k for k, v in enumerate(order)}
    waiting: dict[int, list[int]] = {}
    deferred = []
    for v in order:
        if v not in zero or G.degree(v) == 0:
            continue
        earlier = [u for u in G[v] if pos[u] < pos[v]]
        if always and len(earlier) < G.degree(v) or not always and not earlier:
            last = max(G[v], key=pos.__getitem__)
            waiting.setdefault(last, []).append(v)
            deferred.append(v)
    if not deferred:
        return order, []
    moved = set(deferred)
    out: list[int] = []

    def place(u: int) -> None:
        out.append(u)
        for w in waiting.get(u, ()):
            place(w)

    for v in order:
        if v not in moved:
            place(v)
    return out, deferred


def _minimum_degree(G: nx.Graph, sizes: np.ndarray, zero: frozenset[int]) -> list[int]:
    """Greedy minimum (scalar) degree on the block elimination graph, ties by node id.

    Zero-diagonal nodes become eligible only once all their original neighbours are eliminated.
    """
    adj = {v: set(G[v]) for v in G}
    pending = {v: G.degree(v) for v in zero}
    deg = {v: int(sum(sizes[u] for u in adj[v])) for v in adj}
    heap = [(deg[v], v) for v in adj if pending.get(v, 0) == 0]
    heapq.heapify(heap)
    done: set[int] = set()
    order = []
    while heap:
        d, v = heapq.heappop(heap)
        if v in done or d != deg[v] or pending.get(v, 0):
            continue
        done.add(v)
        order.append(v)
        nbrs = adj.pop(v)
        for u in nbrs:
            adj[u].discard(v)
            adj[u] |= nbrs - {u}
        for u in G[v]:
            if u in pending and u not in done:
                pending[u] -= 1
        for u in nbrs:
            deg[u] = int(sum(sizes[w] for w in adj[u]))
            if pending.get(u, 0) == 0:
                heapq.heappush(heap, (deg[u], u))
    return order


# ---------------------------------------------------------------------- analysis
def analyze(G_or_A, ordering: str | Sequence[int] = "brudigam", root: int | None = None,
            block_sizes=None) -> Analysis:
    """Symbolic factorization of a block graph (or of a BlockMatrix's graph).

    Parameters
    ----------
    G_or_A : networkx.Graph or BlockMatrix
    ordering : {"brudigam", "dfs", "natural", "amd"} or sequence of int
        ``"brudigam"``: DFS post-order, leaves to root, the list of Brüdigam et al. (2023)
        §4.1-4.2 (Alg. 1-4); cyclic children and loop openers follow from the back edges.
        ``"dfs"``: the reverse DFS pre-order from the same root (also leaves to root; same fill,
        other sibling sequence). ``"natural"``: node ids. ``"amd"``: minimum degree on the block
        graph. A sequence is used as given. For the named orderings except ``"natural"``,
        zero-diagonal nodes (``role="constraint"`` or a zero diagonal block) are moved after their
        neighbours where needed so their pivots are nonsingular; ``"natural"`` and explicit
        sequences are used verbatim and may meet a zero pivot.
    root : int, optional
        DFS root of its component (default: smallest node with a nonzero diagonal block).
        The DFS visits neighbours in increasing node id, so the result depends only on the
        graph's structure.
    block_sizes : int, sequence or mapping, optional
        Used where nodes have no ``size`` attribute (default: the matrix's sizes, else 1).

    Returns
    -------
    Analysis

    Raises
    ------
    GraphError
        Empty graph, bad node labels, a sequence that is not a permutation of the nodes, an
        unknown ordering name, or a root that is not a node.

    References
    ----------
    Brüdigam, Sosnowski, Manchester, Hirche (2023), §4, Algorithms 1-4; Baraff (1996), §7.1.

    Examples
    --------
    >>> import graphsolve as gs
    >>> an = gs.analyze(gs.generators.path(4))
    >>> an.elimination_order, an.fill_blocks
    ((3, 2, 1, 0), ())
    """
    from .matrix import BlockMatrix

    if isinstance(G_or_A, BlockMatrix):
        G = G_or_A.graph
        if block_sizes is None:
            block_sizes = G_or_A.block_sizes
        zero = zero_diagonal_nodes(G) | G_or_A.zero_diagonal()   # its current values
    else:
        G = G_or_A
        zero = None
    n = check_graph(G)
    sizes = resolve_block_sizes(G, block_sizes)
    G = canonical_graph(G)
    zero = zero_diagonal_nodes(G) if zero is None else zero
    if root is not None and root not in G:
        raise GraphError(f"root {root!r} is not a node of the graph")
    deferred: list[int] = []
    if isinstance(ordering, str):
        name = ordering
        if name in ("brudigam", "dfs"):
            order = _dfs_order(G, root, zero, preorder=name == "dfs")
            order, deferred = _defer_zero_pivots(G, order, zero, always=False)
        elif name == "natural":
            order = list(range(n))
        elif name == "amd":
            order = _minimum_degree(G, sizes, zero)
        else:
            raise GraphError(f"unknown ordering {name!r}; expected one of {ORDERINGS} or a "
                             "sequence of nodes")
    else:
        name = "given"
        order = list(ordering)
        bad = [v for v in order if isinstance(v, bool) or not isinstance(v, (int, np.integer))]
        if bad:
            raise GraphError(f"ordering entries must be integer node ids; got {bad[0]!r}")
        order = [int(v) for v in order]
        if sorted(order) != list(range(n)):
            raise GraphError(f"ordering must be a permutation of 0..{n - 1}; got {len(order)} "
                             "entries" + (" with repeats or unknown nodes"
                                          if len(order) == n else ""))
    return _symbolic(G, sizes, name, order, deferred, zero, root)


def _symbolic(G, sizes, name, order, deferred, zero, root) -> Analysis:
    n = len(order)
    pos = np.empty(n, dtype=np.int64)
    pos[np.asarray(order)] = np.arange(n)
    # ---- filled graph via the elimination tree: struct(v) = higher neighbours of v
    struct: list[set[int]] = [set() for _ in range(n)]
    etree_children: list[list[int]] = [[] for _ in range(n)]
    parent = [-1] * n
    for k, v in enumerate(order):
        s = {u for u in G[v] if pos[u] > k}
        for c in etree_children[v]:
            s |= struct[c]
        s.discard(v)
        struct[v] = s
        if s:
            p = min(s, key=pos.__getitem__)
            parent[v] = p
            etree_children[p].append(v)
    parents = [tuple(sorted(struct[v], key=pos.__getitem__)) for v in range(n)]
    children_l: list[list[int]] = [[] for _ in range(n)]
    for v in order:                       # appending in elimination order keeps them sorted
        for p in struct[v]:
            children_l[p].append(v)
    children = [tuple(c) for c in children_l]
    fill = tuple(sorted((min(v, p), max(v, p)) for v in range(n) for p in struct[v]
                        if not G.has_edge(v, p)))
    # ---- layout: filled edges grouped by parent in elimination order, children in order
    fe_parent = np.array([i for i in order for _ in children[i]], dtype=np.int64)
    fe_child = np.array([c for i in order for c in children[i]], dtype=np.int64)
    m = fe_child.size
    edge_id = {(int(i), int(c)): e
               for e, (i, c) in enumerate(zip(fe_parent, fe_child, strict=True))}
    child_ptr = block_offsets(np.array([len(children[i]) for i in order], dtype=np.int64))
    fe_ptr = block_offsets(sizes[fe_parent] * sizes[fe_child]) if m else np.zeros(1, np.int64)
    parent_edges = np.array([edge_id[(p, v)] for v in order for p in parents[v]], np.int64)
    parent_ptr = block_offsets(np.array([len(parents[v]) for v in order], dtype=np.int64))
    # ---- update schedule (Alg. 3 lines 8-15): c2 in children(i) ∩ children(c1)
    child_sets = [set(c) for c in children]
    sched_ic2, sched_c1c2, counts = [], [], np.zeros(m, dtype=np.int64)
    acyclic, cyclic = [[] for _ in range(n)], [[] for _ in range(n)]
    for e in range(m):
        i, c1 = int(fe_parent[e]), int(fe_child[e])
        common = child_sets[i] & child_sets[c1]
        for c2 in sorted(common, key=pos.__getitem__):
            sched_ic2.append(edge_id[(i, c2)])
            sched_c1c2.append(edge_id[(c1, c2)])
        counts[e] = len(common)
        (acyclic if parent[c1] == i and not common else cyclic)[i].append(c1)
    sched_ptr = block_offsets(counts) if m else np.zeros(1, np.int64)
    roots = tuple(v for v in order if parent[v] == -1)
    frozen = nx.freeze(G)
    return Analysis(
        graph=frozen, block_sizes=_readonly(sizes), ordering=name,
        elimination_order=tuple(int(v) for v in order), position=_readonly(pos), roots=roots,
        parent=tuple(parent), parents=tuple(parents), children=tuple(children),
        acyclic_children=tuple(tuple(a) for a in acyclic),
        cyclic_children=tuple(tuple(c) for c in cyclic),
        loop_openers=tuple(v for v in order if cyclic[v]), fill_blocks=fill,
        deferred=tuple(deferred), zero_diagonal=frozenset(zero), root=root,
        order=_readonly(np.asarray(order, dtype=np.int64)),
        d_ptr=_readonly(block_offsets(sizes * sizes)), x_ptr=_readonly(block_offsets(sizes)),
        fe_parent=_readonly(fe_parent), fe_child=_readonly(fe_child), fe_ptr=_readonly(fe_ptr),
        child_ptr=_readonly(child_ptr), parent_ptr=_readonly(parent_ptr),
        parent_edges=_readonly(parent_edges), sched_ptr=_readonly(sched_ptr),
        sched_ic2=_readonly(np.asarray(sched_ic2, dtype=np.int64)),
        sched_c1c2=_readonly(np.asarray(sched_c1c2, dtype=np.int64)),
    )


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a
