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
from functools import cached_property

import networkx as nx
import numpy as np
from scipy.sparse import csgraph, csr_array

from .errors import GraphError
from .graph import _resolve_block_sizes, block_offsets, check_graph, zero_diagonal_nodes
from .symbolic import (
    csr_adjacency,
    csr_of_sorted_pairs,
    dfs_orders,
    factor_pattern,
    minimum_degree,
    update_schedule,
)

__all__ = ["Analysis", "analyze", "ORDERINGS"]

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
        A frozen copy of the block graph with sorted adjacency (built on first access).
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

    block_sizes: np.ndarray
    ordering: str
    position: np.ndarray
    deferred: tuple[int, ...]
    zero_diagonal: frozenset[int]
    root: int | None
    edges: np.ndarray = field(repr=False)        # (E, 2) sorted undirected edges, u < v
    node_data: dict = field(repr=False)          # node attributes at analysis time
    etree: np.ndarray = field(repr=False)        # elimination-tree parent by node, -1 roots
    acyclic: np.ndarray = field(repr=False)      # (m,) factor pair e is an acyclic child pair
    # ---- layout for the numeric kernels (see graphsolve.kernels.reference) ----
    order: np.ndarray = field(repr=False)        # elimination order as int64 array
    d_ptr: np.ndarray = field(repr=False)        # (n+1,) by node: D block starts (blocks
    #   laid out in elimination order, so the kernels read D and Dlu in sequence); [-1] total
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

    # ------------------------------------------------------------------ views (lazy)
    @cached_property
    def graph(self) -> nx.Graph:
        """The block graph as a frozen networkx graph with sorted adjacency."""
        G = nx.Graph()
        G.add_nodes_from((v, self.node_data.get(v, {})) for v in range(self.n_nodes))
        G.add_edges_from(map(tuple, self.edges.tolist()))
        return nx.freeze(G)

    @cached_property
    def elimination_order(self) -> tuple[int, ...]:
        return tuple(self.order.tolist())

    @cached_property
    def parent(self) -> tuple[int, ...]:
        return tuple(self.etree.tolist())

    @cached_property
    def roots(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.order if self.etree[v] == -1)

    def _by_node(self, ptr, nodes, keep=None) -> tuple[tuple[int, ...], ...]:
        out = [()] * self.n_nodes
        nodes = nodes.tolist()
        keep = None if keep is None else keep.tolist()
        for k, v in enumerate(self.order.tolist()):
            a, b = int(ptr[k]), int(ptr[k + 1])
            out[v] = tuple(nodes[q] for q in range(a, b) if keep is None or keep[q])
        return tuple(out)

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        return self._by_node(self.child_ptr, self.fe_child)

    @cached_property
    def parents(self) -> tuple[tuple[int, ...], ...]:
        return self._by_node(self.parent_ptr, self.fe_parent[self.parent_edges])

    @cached_property
    def acyclic_children(self) -> tuple[tuple[int, ...], ...]:
        return self._by_node(self.child_ptr, self.fe_child, self.acyclic)

    @cached_property
    def cyclic_children(self) -> tuple[tuple[int, ...], ...]:
        return self._by_node(self.child_ptr, self.fe_child, ~self.acyclic)

    @cached_property
    def loop_openers(self) -> tuple[int, ...]:
        has = np.zeros(self.n_nodes, bool)
        has[self.fe_parent[~self.acyclic]] = True
        return tuple(int(v) for v in self.order if has[v])

    @cached_property
    def uniform_block_size(self) -> int:
        """The common block size if all blocks have the same size, else 0."""
        s = self.block_sizes
        return int(s[0]) if bool(np.all(s == s[0])) else 0

    @cached_property
    def size_pair(self) -> tuple[int, int]:
        """``(larger, smaller)`` if the blocks have exactly two sizes, else ``(0, 0)``."""
        sizes = np.unique(self.block_sizes)
        return (int(sizes[1]), int(sizes[0])) if sizes.size == 2 else (0, 0)

    @cached_property
    def edge_keys(self) -> np.ndarray:
        """Sorted keys ``u * n + v`` (``u < v``) of the graph's edges."""
        return self.edges[:, 0] * self.n_nodes + self.edges[:, 1]

    @cached_property
    def fill_blocks(self) -> tuple[tuple[int, int], ...]:
        lo = np.minimum(self.fe_parent, self.fe_child)
        hi = np.maximum(self.fe_parent, self.fe_child)
        keys = np.unique(lo * self.n_nodes + hi)
        fill = keys[~np.isin(keys, self.edge_keys)]
        n = self.n_nodes
        return tuple((int(k // n), int(k % n)) for k in fill)

    def has_edges(self, edges: np.ndarray) -> np.ndarray:
        """Whether each pair ``(u, v)`` of ``edges`` is an edge of the analysed graph."""
        lo, hi = np.minimum(edges[:, 0], edges[:, 1]), np.maximum(edges[:, 0], edges[:, 1])
        keys = lo * self.n_nodes + hi
        k = np.searchsorted(self.edge_keys, keys)
        k = np.minimum(k, max(self.edge_keys.size - 1, 0))
        return (self.edge_keys[k] == keys) if self.edge_keys.size else np.zeros(keys.size, bool)

    # ------------------------------------------------------------------ counts
    @property
    def n_nodes(self) -> int:
        return int(self.order.size)

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
        skips the ``U`` half, factors its (definite) pivots as ``M Δ Mᵀ`` (``s³/3``) and keeps
        ``L_ic2 D_c2`` from the scaling of the pair, so a triple is one block product. Counts
        the compiled kernels' work; computed once per analysis.
        """
        return self._flop_counts[method]

    @cached_property
    def _flop_counts(self) -> dict[str, int]:
        return {m: self._count_flops(m) for m in ("ldu", "ldlt")}

    def _count_flops(self, method: str) -> int:
        s = self.block_sizes
        si, sc = s[self.fe_parent], s[self.fe_child]
        pivots = np.sum((2 if method == "ldu" else 1) * s.astype(float) ** 3 / 3)
        t_i = self.fe_parent[self.sched_ic2]
        t_c2 = self.fe_child[self.sched_ic2]
        t_c1 = self.fe_parent[self.sched_c1c2]
        if method == "ldu":
            edges = np.sum(4.0 * sc * sc * si + 2.0 * si * sc * si)
            triples = np.sum(4.0 * (s[t_i] * s[t_c2] * s[t_c1] + s[t_i] * s[t_c2] ** 2))
        else:
            edges = np.sum(2.0 * sc * sc * si + 2.0 * si * sc * si)
            triples = np.sum(2.0 * s[t_i] * s[t_c2] * s[t_c1])
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
            cols += [analyze(self.graph, o, root=self.root, block_sizes=self.block_sizes,
                             zero_diagonal=self.zero_diagonal)
                     for o in ORDERINGS if o != self.ordering]
        rows = [
            ("ordering", lambda a: a.ordering),
            ("nodes", lambda a: a.n_nodes),
            ("edges", lambda a: len(a.edges)),
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
def _dfs_roots(n, indptr, indices, root, zero) -> np.ndarray:
    """One DFS root per connected component, components by their smallest node. The paper
    takes an arbitrary root (2023, §4.1); we take the smallest node whose diagonal block is
    nonzero, so that a KKT tree is rooted at a body and no constraint becomes a leaf."""
    ncomp, labels = csgraph.connected_components(
        csr_array((np.ones(indices.size), indices, indptr), shape=(n, n)), directed=False)
    nonzero = np.ones(n, bool)
    nonzero[list(zero)] = False
    first = np.unique(labels, return_index=True)[1]         # smallest node per component
    roots = first.copy()                                    # ... unless one has a nonzero
    cand = np.flatnonzero(nonzero)                          # diagonal: the smallest such
    comp, at = np.unique(labels[cand], return_index=True)
    roots[comp] = cand[at]
    if root is not None:
        roots[labels[root]] = root
    return roots[np.argsort(first)]


def _dfs_order(indptr, indices, roots, preorder: bool) -> np.ndarray:
    pre, post = dfs_orders(indptr, indices, roots)
    if not preorder:
        return post
    # reverse the preorder within each component (components stay in order)
    comp_start = np.flatnonzero(np.isin(pre, roots))
    return np.concatenate([pre[a:b][::-1] for a, b in
                           zip(comp_start, [*comp_start[1:], pre.size], strict=True)])


def _defer_zero_pivots(indptr, indices, order, zero: frozenset[int], always: bool
                       ) -> tuple[np.ndarray, list[int]]:
    """Move zero-diagonal nodes after their neighbours.

    A zero-diagonal node eliminated before any of its neighbours has a zero pivot; in a DFS
    order this is exactly a loop-closing constraint that the search left as a leaf. Such a node is
    placed right after the last of its neighbours (Brüdigam & Manchester 2020, §4.3, moves
    loop-closing constraints after their bodies). With ``always`` every zero-diagonal node
    waits for all of its neighbours, i.e. bodies are eliminated before the constraints acting on
    them.
    """
    if not zero:
        return order, []
    pos = np.empty(order.size, np.int64)
    pos[order] = np.arange(order.size)
    z = np.fromiter(zero, dtype=np.int64, count=len(zero))
    z = z[np.diff(indptr)[z] > 0]                       # isolated nodes have nothing to wait for
    if z.size == 0:
        return order, []
    # first / last neighbour position of every node with neighbours (segments of the CSR)
    linked = np.flatnonzero(np.diff(indptr) > 0)
    reduce = np.maximum if always else np.minimum
    extreme = np.zeros(order.size, np.int64)
    extreme[linked] = reduce.reduceat(pos[indices], indptr[linked])
    # always: some neighbour comes later; otherwise: no neighbour comes earlier
    move = z[extreme[z] > pos[z]]
    waiting: dict[int, list[int]] = {}
    deferred = []
    for v in sorted(move.tolist(), key=lambda u: pos[u]):
        nb = indices[indptr[v]:indptr[v + 1]]
        waiting.setdefault(int(nb[np.argmax(pos[nb])]), []).append(int(v))
        deferred.append(int(v))
    if not deferred:
        return order, []
    moved = set(deferred)
    out: list[int] = []

    def place(u: int) -> None:
        out.append(u)
        for w in waiting.get(u, ()):
            place(w)

    for v in order.tolist():
        if v not in moved:
            place(v)
    return np.asarray(out, dtype=np.int64), deferred


def _minimum_degree(indptr, indices, sizes: np.ndarray, zero: frozenset[int]) -> np.ndarray:
    """Greedy minimum (scalar) degree on the block elimination graph, ties by node id.

    Zero-diagonal nodes become eligible only once all their original neighbours with a nonzero
    diagonal are eliminated (two adjacent zero-diagonal nodes waiting for each other would
    never become eligible). The readable reference of
    :func:`graphsolve.symbolic.minimum_degree` (compiled, 25-40× faster, the one ``analyze``
    runs); a test checks that both give the same order.
    """
    n = indptr.size - 1
    adj = {v: set(indices[indptr[v]:indptr[v + 1]].tolist()) for v in range(n)}
    pending = {v: len(adj[v] - zero) for v in zero}
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
        for u in indices[indptr[v]:indptr[v + 1]].tolist() if v not in zero else ():
            if u in pending and u not in done:
                pending[u] -= 1
        for u in nbrs:
            deg[u] = int(sum(sizes[w] for w in adj[u]))
            if pending.get(u, 0) == 0:
                heapq.heappush(heap, (deg[u], u))
    return np.asarray(order, dtype=np.int64)


# ---------------------------------------------------------------------- analysis
def analyze(G_or_A, ordering: str | Sequence[int] = "brudigam", root: int | None = None,
            block_sizes=None, zero_diagonal=None) -> Analysis:
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
    zero_diagonal : iterable of int, optional
        Nodes with a zero diagonal block (default: ``role="constraint"`` nodes, the graph
        attribute ``zero_diagonal``, and for a BlockMatrix its current zero diagonal blocks).

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
        if zero_diagonal is None:                  # current values (roles included)
            zero_diagonal = frozenset(G.graph.get("zero_diagonal", ())) | \
                G_or_A.zero_diagonal()
        directed = G_or_A.edges                     # both directions, sorted: CSR order
        edges = directed[directed[:, 0] < directed[:, 1]]
    else:
        G = G_or_A
        edges = directed = None
    n = check_graph(G)
    sizes = _resolve_block_sizes(G, n, block_sizes)
    zero = frozenset(zero_diagonal_nodes(G) if zero_diagonal is None else zero_diagonal)
    if root is not None and root not in G:
        raise GraphError(f"root {root!r} is not a node of the graph")
    if edges is None:
        edges = np.array(sorted((min(u, v), max(u, v)) for u, v in G.edges),
                         dtype=np.int64).reshape(-1, 2)
    if directed is not None and directed.shape[0] == 2 * edges.shape[0]:
        indptr, indices = csr_of_sorted_pairs(n, directed)
    else:
        indptr, indices = csr_adjacency(n, edges)
    deferred: list[int] = []
    if isinstance(ordering, str):
        name = ordering
        if name in ("brudigam", "dfs"):
            roots = _dfs_roots(n, indptr, indices, root, zero)
            order = _dfs_order(indptr, indices, roots, preorder=name == "dfs")
            order, deferred = _defer_zero_pivots(indptr, indices, order, zero, always=False)
        elif name == "natural":
            order = np.arange(n, dtype=np.int64)
        elif name == "amd":
            mask = np.zeros(n, bool)
            mask[list(zero)] = True
            order = minimum_degree(indptr, indices, sizes.astype(np.int64), mask)
        else:
            raise GraphError(f"unknown ordering {name!r}; expected one of {ORDERINGS} or a "
                             "sequence of nodes")
    else:
        name = "given"
        order = list(ordering)
        bad = [v for v in order if isinstance(v, bool) or not isinstance(v, (int, np.integer))]
        if bad:
            raise GraphError(f"ordering entries must be integer node ids; got {bad[0]!r}")
        order = np.asarray([int(v) for v in order], dtype=np.int64)
        if order.size != n or not np.array_equal(np.sort(order), np.arange(n)):
            raise GraphError(f"ordering must be a permutation of 0..{n - 1}; got {order.size} "
                             "entries" + (" with repeats or unknown nodes"
                                          if order.size == n else ""))
    node_data = {v: dict(d) for v, d in G.nodes(data=True) if d}
    return _symbolic(n, edges, indptr, indices, sizes, name, np.asarray(order, np.int64),
                     deferred, zero, root, node_data)


def _symbolic(n, edges, indptr, indices, sizes, name, order, deferred, zero, root,
              node_data) -> Analysis:
    """Elimination tree, factor pattern, layout and update schedule (compiled kernels of
    :mod:`graphsolve.symbolic`)."""
    etree, pos, child_ptr, fe_child = factor_pattern(indptr, indices, order)
    counts = np.diff(child_ptr)
    fe_parent = np.repeat(order, counts)
    m = fe_child.size
    fe_ptr = block_offsets(sizes[fe_parent] * sizes[fe_child])
    # pairs grouped by child position, parents in elimination order
    parent_edges = np.lexsort((pos[fe_parent], pos[fe_child])).astype(np.int64)
    parent_ptr = block_offsets(np.bincount(pos[fe_child], minlength=n).astype(np.int64))
    sched_ptr, sched_ic2, sched_c1c2 = update_schedule(pos, order, child_ptr, fe_child)
    acyclic = (etree[fe_child] == fe_parent) & (np.diff(sched_ptr) == 0) if m else \
        np.zeros(0, bool)
    return Analysis(
        block_sizes=_readonly(sizes, copy=True), ordering=name, position=_readonly(pos),
        deferred=tuple(deferred), zero_diagonal=frozenset(zero), root=root,
        edges=_readonly(edges, copy=True), node_data=node_data, etree=_readonly(etree),
        acyclic=_readonly(acyclic), order=_readonly(order),
        d_ptr=_readonly(_position_offsets(sizes * sizes, order)),
        x_ptr=_readonly(block_offsets(sizes)),
        fe_parent=_readonly(fe_parent), fe_child=_readonly(fe_child), fe_ptr=_readonly(fe_ptr),
        child_ptr=_readonly(child_ptr), parent_ptr=_readonly(parent_ptr),
        parent_edges=_readonly(parent_edges), sched_ptr=_readonly(sched_ptr),
        sched_ic2=_readonly(sched_ic2), sched_c1c2=_readonly(sched_c1c2),
    )


def _readonly(a: np.ndarray, copy: bool = False) -> np.ndarray:
    """``a`` made read-only; ``copy`` for arrays the caller may share (the others are fresh
    from the kernels: no copy, which was 15 % of a grid analysis)."""
    a = np.array(a, copy=True) if copy else np.asarray(a)
    a.flags.writeable = False
    return a


def _position_offsets(lengths: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Offsets by node of blocks laid out in elimination order; the last entry is the total."""
    ends = np.cumsum(lengths[order])
    off = np.empty(lengths.size + 1, np.int64)
    off[order] = ends - lengths[order]
    off[-1] = ends[-1] if ends.size else 0
    return off
