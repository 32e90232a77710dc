"""Symbolic phase: the factor's structure and layout for an elimination ordering.

:func:`analyze` looks only at the graph (never at values): it takes an elimination order from
:mod:`graphsolve.ordering` (or the caller's sequence) and returns an immutable
:class:`Analysis`: the elimination order, the filled graph (original edges plus fill), the
structure of Brüdigam et al. (2023) Algorithms 3-4 (parents, acyclic and cyclic children,
loop-opening nodes), the flat storage layout of the factors, the update schedule that the numeric
kernels follow, and block and flop counts.

One general block symbolic factorization serves every ordering: eliminating node ``v`` joins all
of its not-yet-eliminated neighbours (Rose, Tarjan & Lueker 1976). The compiled kernels of
:mod:`graphsolve.symbolic` compute the elimination tree, the factor pattern and the update
schedule; this module holds them as an :class:`Analysis`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from .errors import GraphError
from .graph import (
    BlockSizes,
    _resolve_block_sizes,
    block_offsets,
    check_graph,
    zero_diagonal_nodes,
)
from .ordering import ORDERINGS, auto_order, named_order
from .symbolic import (
    csr_adjacency,
    csr_of_sorted_pairs,
    elimination_counts,
    factor_pattern,
    group_by_key,
    update_counts,
    update_lists,
)

if TYPE_CHECKING:
    from .matrix import BlockMatrix

__all__ = ["Analysis", "analyze"]

#: :meth:`Analysis.summary` leaves out a compared ordering whose counted factor + solve flops
#: pass this multiple of the summarized analysis's (it would build a factor that large).
SUMMARY_COMPARE_LIMIT = 50

#: :meth:`Analysis.summary` analyzes a compared ordering in full (update triples, loop openers)
#: up to this many factor pairs, and shows its counts only above.
SUMMARY_FULL_PAIRS = 200_000


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
    ordering_source : str
        Which code computed the order (e.g. SuiteSparse AMD through CHOLMOD, or the fallback
        when a library is missing).
    candidates : tuple of (str, int, float)
        For ``ordering="auto"``: ``(name, factor_pairs, flops_ldu)`` of every candidate it
        counted (``factor_pairs == -1`` for a candidate abandoned once it exceeded the best
        flops so far); empty otherwise.
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
    ordering_source: str = ""
    candidates: tuple = ()
    #: Arrays a backend derives from this analysis once and reuses for every factorization
    #: (the compiled backend's packed index arrays and solve plan); not part of the analysis'
    #: value (excluded from comparison and repr).
    backend_cache: dict = field(default_factory=dict, repr=False, compare=False)

    def share_schedule(self, ic2: np.ndarray, c1c2: np.ndarray) -> None:
        """Keep the update triples as the given arrays (read-only views of a backend's packed
        copy, so that the lists are held once); they must equal :attr:`sched_ic2` and
        :attr:`sched_c1c2`."""
        for v in (ic2, c1c2):
            v.flags.writeable = False
        self.__dict__["_schedule"] = (ic2, c1c2)     # the cached_property's slot

    # ------------------------------------------------------------------ update schedule
    # The triples (i, c1, c2) of the block updates L_ic2 -= L_ic1 D_c1 U_c1c2 are part of the
    # numeric plan, not of the symbolic analysis: the first factorization lists them
    # (O(updates), which on grids and crystals costs more than the ordering and the pattern
    # together), so that analyze stays O(nnz(L)) like CHOLMOD's.
    @cached_property
    def sched_ptr(self) -> np.ndarray:
        """(m+1,) offsets of the updates of each target pair (i, c1): a count pass, O(pairs)
        memory (computed on first use)."""
        return _readonly(update_counts(self.position, self.order, self.child_ptr,
                                       self.fe_child))

    @cached_property
    def n_updates(self) -> int:
        """The number of block updates (Alg. 3 line 14), ``sched_ptr[-1]`` without the count
        pass: each pair of later neighbours of a column is one update, so it is
        ``Σ_j c_j (c_j - 1) / 2`` over the columns' numbers of factor pairs ``c_j``."""
        c = np.diff(self.parent_ptr)
        return int((c * (c - 1) // 2).sum())

    @cached_property
    def _schedule(self) -> tuple[np.ndarray, np.ndarray]:
        ic2, c1c2 = update_lists(self.position, self.order, self.child_ptr, self.fe_child,
                                 self.sched_ptr)
        return _readonly(ic2), _readonly(c1c2)

    @property
    def sched_ic2(self) -> np.ndarray:
        """The pair (i, c2) of each update (listed on first use by the block kernels; the
        supernodal kernel never needs the list, which on large grids would take gigabytes)."""
        return self._schedule[0]

    @property
    def sched_c1c2(self) -> np.ndarray:
        """The pair (c1, c2) of each update."""
        return self._schedule[1]

    @cached_property
    def acyclic(self) -> np.ndarray:
        """(m,) whether factor pair e is an acyclic child pair (its child's elimination-tree
        parent, with no updates)."""
        if not self.fe_child.size:
            return _readonly(np.zeros(0, bool))
        return _readonly((self.etree[self.fe_child] == self.fe_parent)
                         & (np.diff(self.sched_ptr) == 0))

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

    def _by_node(self, ptr: np.ndarray, nodes: np.ndarray, keep: np.ndarray | None = None
                 ) -> tuple[tuple[int, ...], ...]:
        out: list[tuple[int, ...]] = [()] * self.n_nodes
        node_list = nodes.tolist()
        kept = None if keep is None else keep.tolist()
        for k, v in enumerate(self.order.tolist()):
            a, b = int(ptr[k]), int(ptr[k + 1])
            out[v] = tuple(node_list[q] for q in range(a, b) if kept is None or kept[q])
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
                "update_triples": self.n_updates}

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
        """Both methods' flops from one elimination count."""
        indptr, indices = csr_adjacency(self.n_nodes, self.edges)
        _, ldu, ldlt, _ = elimination_counts(indptr, indices, self.order, self.block_sizes,
                                             np.inf)
        return {"ldu": int(ldu), "ldlt": int(ldlt)}

    def _flops_from_schedule(self, method: str) -> int:
        """:meth:`flops` summed over the listed update triples (the readable count that the
        tests hold :func:`~graphsolve.symbolic.elimination_counts` to)."""
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
        auto chose 'brudigam' from brudigam (9 pairs, 90 flops), brudigam-cm (9 pairs, 90
        flops), amd (9 pairs, 90 flops)
        """
        cols = [self._summary_column()]
        abandoned: list[str] = []
        if compare:
            adjacency = csr_adjacency(self.n_nodes, self.edges)
            for o in ORDERINGS:
                if o not in (self.ordering, "auto"):
                    col = self._compared(o, *adjacency)
                    if isinstance(col, dict):
                        cols.append(col)
                    else:
                        abandoned.append(col)
        values = [[str(c[name]) for c in cols] for name in cols[0]]
        width = max(12, *(len(v) + 2 for row in values for v in row))
        lines = [f"{name:<14}" + "".join(f"{v:>{width}}" for v in row)
                 for name, row in zip(cols[0], values, strict=True)]
        if self.candidates:
            lines.append(f"auto chose {self.ordering!r} from "
                         + ", ".join(f"{c} ({'abandoned' if p < 0 else f'{p} pairs'}, "
                                     f"{fl:.3g} flops)" for c, p, fl in self.candidates))
        if any(c["update triples"] == "-" for c in cols):
            lines.append("-: counted without building the factor (factor pairs over "
                         f"{SUMMARY_FULL_PAIRS})")
        if abandoned:
            lines.append(f"not shown (counted flops over {SUMMARY_COMPARE_LIMIT}x this "
                         f"ordering's): {', '.join(abandoned)}")
        return "\n".join(lines)

    def _summary_column(self) -> dict:
        return {"ordering": self.ordering, "nodes": self.n_nodes, "edges": len(self.edges),
                "fill pairs": self.n_fill, "factor pairs": self.block_counts["factor_pairs"],
                "update triples": self.block_counts["update_triples"],
                "loop openers": len(self.loop_openers), "deferred": len(self.deferred),
                "factor scalars": self.factor_nnz, "flops ldu": self.flops("ldu")}

    def _compared(self, name: str, indptr: np.ndarray, indices: np.ndarray) -> dict | str:
        """The :meth:`summary` column of ordering ``name`` on the same graph.

        Its factor is first counted (:func:`~graphsolve.symbolic.elimination_counts`, O(n)
        memory): past :data:`SUMMARY_COMPARE_LIMIT` times this analysis's factor + solve flops
        only the name is returned; past :data:`SUMMARY_FULL_PAIRS` factor pairs the column
        holds the counted values, ``"-"`` for what needs the factor's pattern (on a large grid
        a DFS ordering's factor is nearly dense and need not fit in memory)."""
        n, sizes, zero = self.n_nodes, self.block_sizes, self.zero_diagonal
        order, deferred, source = named_order(name, n, indptr, indices, sizes, zero, self.root)
        own = self.flops("ldu") + self.solve_flops("ldu")
        pairs, flu, _, sol = elimination_counts(indptr, indices, order, sizes.astype(np.int64),
                                                SUMMARY_COMPARE_LIMIT * max(own, 1))
        if pairs < 0:
            return name
        if pairs <= SUMMARY_FULL_PAIRS:
            return _symbolic(n, self.edges, indptr, indices, sizes, name, order, deferred,
                             zero, self.root, self.node_data, source)._summary_column()
        diag = int(np.sum(sizes.astype(np.int64) ** 2))
        lower = (int(sol) - 2 * diag) // 4              # solve flops = 2 D + 4 L
        return {"ordering": name, "nodes": n, "edges": len(self.edges),
                "fill pairs": int(pairs) - len(self.edges), "factor pairs": int(pairs),
                "update triples": "-", "loop openers": "-", "deferred": len(deferred),
                "factor scalars": diag + 2 * lower, "flops ldu": int(flu)}

    def __repr__(self) -> str:
        return (f"Analysis(ordering={self.ordering!r}, nodes={self.n_nodes}, "
                f"fill_pairs={self.n_fill}, loop_openers={len(self.loop_openers)})")



def analyze(G_or_A: nx.Graph | BlockMatrix, ordering: str | Sequence[int] = "auto",
            root: int | None = None, block_sizes: BlockSizes = None,
            zero_diagonal: Iterable[int] | None = None) -> Analysis:
    """Symbolic factorization of a block graph (or of a BlockMatrix's graph).

    Parameters
    ----------
    G_or_A : networkx.Graph or BlockMatrix
    ordering : {"auto", "brudigam", "brudigam-cm", "dfs", "natural", "amd", "nd", "mindeg"} \
            or sequence of int
        ``"auto"`` (default): the cheapest of ``"brudigam"``, ``"brudigam-cm"``, ``"amd"`` and
        ``"nd"`` by a
        count of their factor and solve flops (``Analysis.candidates`` lists them;
        ``Analysis.ordering`` names the one chosen); forests take ``"brudigam"`` at once.
        ``"brudigam-cm"``: the same DFS with root and neighbour order taken from a
        Cuthill-McKee ordering (a variant; robust to the node labelling).
        ``"brudigam"``: DFS post-order, leaves to root, the list of Brüdigam et al. (2023)
        §4.1-4.2 (Alg. 1-4); cyclic children and loop openers follow from the back edges.
        ``"dfs"``: the reverse DFS pre-order from the same root (also leaves to root; same fill,
        other sibling sequence). ``"natural"``: node ids. ``"amd"``: SuiteSparse's approximate
        minimum degree on the node graph through CHOLMOD (scikit-sparse; without it, falls back
        to ``"mindeg"`` and ``Analysis.ordering_source`` says so). ``"nd"``: METIS nested
        dissection on the node graph through pymetis (block sizes as vertex weights); for
        3-D-like factors of at least ``ND_MORE_RUNS_MIN_FLOPS`` flops the cheapest of that
        run and CHOLMOD's METIS and NESDIS orderings on the graph and on renumberings of it
        (``ND_CHOLMOD_RUNS``; without scikit-sparse: METIS on a Cuthill-McKee renumbering;
        :func:`graphsolve.ordering._metis_nested_dissection`), postordered.
        ``"mindeg"``: graphsolve's own exact minimum degree, weighted by block sizes. A
        sequence is used as given. For the named orderings except ``"natural"``,
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
        A = G_or_A
        G = A._graph                              # None: never asked for, no networkx needed
        if G is None and block_sizes is not None:
            G = A.graph
        if zero_diagonal is None:                  # current values (roles included)
            zero_diagonal = frozenset(A._zero_at_build) | A.zero_diagonal()
        if block_sizes is None:
            block_sizes = A.block_sizes
        directed = A.edges                          # both directions, sorted: CSR order
        edges = directed[directed[:, 0] < directed[:, 1]]
        n = A.n_nodes
    else:
        G = G_or_A
        edges = directed = None  # type: ignore[assignment]
        n = check_graph(G)
    if G is None:                                  # a BlockMatrix's own layout, checked
        sizes = np.array(block_sizes, dtype=np.int64)
        zero = frozenset(zero_diagonal or ())         # set above from the matrix
        if root is not None and not (isinstance(root, (int, np.integer))
                                     and not isinstance(root, bool) and 0 <= root < n):
            raise GraphError(f"root {root!r} is not a node of the graph")
    else:
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
    candidates: tuple = ()
    if isinstance(ordering, str):
        if ordering not in ORDERINGS:
            raise GraphError(f"unknown ordering {ordering!r}; expected one of {ORDERINGS} or a "
                             "sequence of nodes")
        if ordering == "auto":
            name, order, deferred, source, candidates = auto_order(
                n, indptr, indices, sizes, zero, root, edges.shape[0])
        else:
            name = ordering
            order, deferred, source = named_order(name, n, indptr, indices, sizes, zero, root)
    else:
        name, source = "given", "given by the caller"
        given = list(ordering)
        bad = [v for v in given if isinstance(v, bool) or not isinstance(v, (int, np.integer))]
        if bad:
            raise GraphError(f"ordering entries must be integer node ids; got {bad[0]!r}")
        order = np.asarray([int(v) for v in given], dtype=np.int64)
        if order.size != n or not np.array_equal(np.sort(order), np.arange(n)):
            raise GraphError(f"ordering must be a permutation of 0..{n - 1}; got {order.size} "
                             "entries" + (" with repeats or unknown nodes"
                                          if order.size == n else ""))
    node_data = {} if G is None else {v: dict(d) for v, d in G.nodes(data=True) if d}
    return _symbolic(n, edges, indptr, indices, sizes, name, np.asarray(order, np.int64),
                     deferred, zero, root, node_data, source, candidates)


def _symbolic(n: int, edges: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
              sizes: np.ndarray, name: str, order: np.ndarray, deferred: Sequence[int],
              zero: frozenset[int], root: int | None, node_data: dict[int, dict[str, Any]],
              source: str = "", candidates: tuple = ()) -> Analysis:
    """Elimination tree, factor pattern and layout (compiled kernels of
    :mod:`graphsolve.symbolic`); the update schedule is listed on first use
    (:attr:`Analysis.sched_ptr`)."""
    etree, pos, child_ptr, fe_child = factor_pattern(indptr, indices, order)
    fe_parent = np.repeat(order, np.diff(child_ptr))
    fe_ptr = block_offsets(sizes[fe_parent] * sizes[fe_child])
    # pairs grouped by child position, parents in elimination order
    parent_ptr, parent_edges = group_by_key(pos[fe_child], n)
    return Analysis(
        block_sizes=_readonly(sizes, copy=True), ordering=name, position=_readonly(pos),
        deferred=tuple(deferred), zero_diagonal=frozenset(zero), root=root,
        edges=_readonly(edges, copy=True), node_data=node_data, etree=_readonly(etree),
        order=_readonly(order),
        d_ptr=_readonly(_position_offsets(sizes * sizes, order)),
        x_ptr=_readonly(block_offsets(sizes)),
        fe_parent=_readonly(fe_parent), fe_child=_readonly(fe_child), fe_ptr=_readonly(fe_ptr),
        child_ptr=_readonly(child_ptr), parent_ptr=_readonly(parent_ptr),
        parent_edges=_readonly(parent_edges),
        ordering_source=source, candidates=tuple(candidates),
    )


def _readonly(a: np.ndarray, copy: bool = False) -> np.ndarray:
    """``a`` made read-only; ``copy`` for arrays the caller may share (the others are fresh
    from the kernels and are not copied)."""
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
