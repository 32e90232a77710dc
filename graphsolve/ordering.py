"""Elimination orderings of a block graph: which node is eliminated when.

Every ordering works on the node graph (one vertex per block, weighted by block size where the
library takes weights) and returns a permutation of the nodes; :func:`graphsolve.analyze`
(:mod:`graphsolve.analysis`) turns it into the symbolic factorization.

* ``"brudigam"`` / ``"dfs"``: Brüdigam et al.'s DFS loop opening (2023, §4.1-4.2), leaves to
  root; ``"brudigam-cm"`` the same search guided by a Cuthill-McKee order (robust to the node
  labelling).
* ``"mindeg"``: graphsolve's own exact minimum degree, also the fallback of ``"amd"``.
* ``"amd"``: SuiteSparse's AMD (Amestoy, Davis & Duff 1996, through CHOLMOD).
* ``"nd"``: METIS nested dissection (Karypis & Kumar 1998), the cheapest of the runs through
  ``pymetis`` and CHOLMOD's METIS and NESDIS interfaces on several numberings, postordered.
* ``"auto"`` (the default of :func:`~graphsolve.analyze`): the cheapest of
  :data:`AUTO_CANDIDATES` by a cheap count of their factor pairs and flops
  (:func:`graphsolve.symbolic.elimination_counts`, O(nnz(L)) without building the factor), so
  that a node labelling no longer decides the fill.

For the DFS orderings the fill is exactly Brüdigam's cyclic-children pattern: a DFS tree of an
undirected graph has only back edges, so ``(u, w)`` becomes fill iff a back edge leaves the
subtree of ``u`` towards the ancestor ``w``, i.e. iff ``u`` lies on a fundamental cycle opened
at ``w`` (2023, §4.2). Zero-diagonal (constraint) nodes are moved after their neighbours where
needed so that their pivots are nonsingular (:func:`named_order`).

``Analysis`` and ``analyze`` lived here before the symbolic phase moved to
:mod:`graphsolve.analysis`; they stay importable from this module (and pickles that name
``graphsolve.ordering.Analysis`` still load).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.sparse import csgraph, csr_array

from .errors import GraphError
from .symbolic import (
    component_roots,
    dfs_orders,
    elimination_counts,
    minimum_degree,
    relabelled_csr,
    weighted_postorder,
)

if TYPE_CHECKING:                       # the names served by __getattr__ below, for checkers
    from .analysis import SUMMARY_COMPARE_LIMIT as SUMMARY_COMPARE_LIMIT
    from .analysis import SUMMARY_FULL_PAIRS as SUMMARY_FULL_PAIRS
    from .analysis import Analysis as Analysis
    from .analysis import analyze as analyze

__all__ = ["ORDERINGS", "AUTO_CANDIDATES", "Analysis", "analyze"]

ORDERINGS = ("auto", "brudigam", "brudigam-cm", "dfs", "natural", "amd", "nd", "mindeg")
#: The orderings ``"auto"`` compares, in order of preference on equal flops.
AUTO_CANDIDATES = ("brudigam", "brudigam-cm", "amd", "nd")
#: ``"auto"`` tries nested dissection only where AMD's factor is dense enough for it to pay
#: (CHOLMOD's own rule for trying METIS after AMD: flops per factor entry >= 500 and factor
#: entries >= 5 x matrix entries, here on scalar counts).
ND_MIN_FLOPS_PER_ENTRY = 500.0
ND_MIN_FILL_RATIO = 5.0
#: METIS's separators depend on its random seed and on the node numbering. When the cheapest
#: run of :func:`_metis_nested_dissection` still needs at least :data:`ND_RESEED_MIN_FLOPS`
#: LDU flops, pymetis runs again with each seed of :data:`ND_SEEDS`. Seeds of one interface
#: and numbering draw alike (crystal 22³, four numberings: the three seeds improved on the
#: five other runs once, by 1 %), so this is kept for factors so large (about 20 s of
#: factorization here) that a run's cost does not matter.
ND_RESEED_MIN_FLOPS = 1e12
ND_SEEDS = (1, 2, 3)
#: A first METIS run whose factor needs at least this many LDU flops (about 30 ms of
#: factorization here) is followed by runs through other interfaces and numberings
#: (:func:`_metis_nested_dissection`), each costing about one METIS call and one elimination
#: count (5 ms at 1728 nodes).
ND_MORE_RUNS_MIN_FLOPS = 2e9
#: ... and only where the factor is 3-D-like: at least this many LDU flops per ``n^1.5``
#: (``n`` nodes). Nested dissection of a planar-like graph needs O(n^1.5) flops, so the
#: ratio is flat over sizes there (2-D grids 100² and 300² under METIS: 8.3e3 and 9.0e3) and
#: a METIS run costs the same share of the factorization at every size, for little spread
#: between runs (2-D grid 100²: 0.71-0.94× CHOLMOD's factor flops over runs and numberings);
#: 3-D meshes need O(n²), the ratio grows (crystal 10³ 4.5e4, 12³ 6.0e4, 16³ 1.0e5) and so
#: does what a lucky run saves.
ND_MORE_RUNS_MIN_DENSITY = 2e4
#: Those runs, with scikit-sparse installed: ``(CHOLMOD ordering, numbering of the graph)``,
#: the numbering ``"node"`` (as given), ``"cuthill-mckee"`` (reverse Cuthill-McKee) or an
#: int, the seed of a random numbering (the analysis stays deterministic). NESDIS is
#: CHOLMOD's own nested dissection (METIS node separators, CAMD-ordered leaves). Measured on
#: 3-D grids under random numberings (6×6 blocks, LDU flops relative to the cheapest of 14
#: runs; 12³ / 16³ / 22³, 16 / 12 / 12 numberings): one run draws the good separators
#: (22³: ~1.95e11 flops against 2.6-3.4e11) with probability ~1/2 at 12³ whatever the
#: interface, at 22³ ~1/6 through pymetis or CHOLMOD's METIS interface and ~1/2 through
#: NESDIS, nearly independently between interfaces and numberings. The cheapest of the first
#: pymetis run and these four was within 1.1× of the best on 15 / 11 / 10 of the numberings
#: (worst 1.34 / 1.11 / 1.12×, mean 1.03 / 1.01 / 1.02×), the former set (pymetis, CHOLMOD's
#: METIS and NESDIS, pymetis on the Cuthill-McKee numbering with heavy-edge and with random
#: matching) on 15 / 10 / 9 (worst 1.20 / 1.41 / 1.44×, mean 1.02 / 1.06 / 1.09×).
ND_CHOLMOD_RUNS: tuple[tuple[str, str | int], ...] = (
    ("metis", "node"), ("nesdis", "node"), ("nesdis", "cuthill-mckee"), ("nesdis", 0))
#: The CHOLMOD orderings among those runs.
ND_CHOLMOD_METHODS = tuple(dict.fromkeys(method for method, _ in ND_CHOLMOD_RUNS))
#: METIS's random matching (``METIS_CTYPE_RM``) for coarsening, instead of heavy-edge.
_METIS_CTYPE_RM = 0

#: Names that moved to :mod:`graphsolve.analysis` and are still served from here.
_MOVED_TO_ANALYSIS = frozenset({"Analysis", "analyze", "SUMMARY_COMPARE_LIMIT",
                                "SUMMARY_FULL_PAIRS"})


def __getattr__(name: str) -> Any:
    """``graphsolve.ordering.Analysis`` / ``analyze`` (their home before
    :mod:`graphsolve.analysis`): read from there on first access, so that the two modules do
    not import each other at load time."""
    if name in _MOVED_TO_ANALYSIS:
        from . import analysis

        return getattr(analysis, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _dfs_roots(n: int, indptr: np.ndarray, indices: np.ndarray, root: int | None,
               zero: frozenset[int]) -> np.ndarray:
    """One DFS root per connected component, components by their smallest node. The paper
    takes an arbitrary root (2023, §4.1); we take the smallest node whose diagonal block is
    nonzero, so that a KKT tree is rooted at a body and no constraint becomes a leaf."""
    nonzero = np.ones(n, np.bool_)
    if zero:
        nonzero[np.fromiter(zero, dtype=np.int64, count=len(zero))] = False
    roots, labels = component_roots(indptr, indices, nonzero)
    if root is not None:
        roots[labels[root]] = root
    return roots


def _dfs_order(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray, preorder: bool
               ) -> np.ndarray:
    pre, post = dfs_orders(indptr, indices, roots)
    if not preorder:
        return post
    # reverse the preorder within each component (components stay in order)
    comp_start = np.flatnonzero(np.isin(pre, roots))
    return np.concatenate([pre[a:b][::-1] for a, b in
                           zip(comp_start, [*comp_start[1:], pre.size], strict=True)])


def _defer_zero_pivots(indptr: np.ndarray, indices: np.ndarray, order: np.ndarray,
                       zero: frozenset[int], always: bool) -> tuple[np.ndarray, list[int]]:
    """Move zero-diagonal nodes after their neighbours.

    A zero-diagonal node eliminated before any of its neighbours has a zero pivot; in a DFS
    order this is exactly a loop-closing constraint that the search left as a leaf. Such a node is
    placed right after the last of its neighbours (Brüdigam & Manchester 2020, §4.3, moves
    loop-closing constraints after their bodies). With ``always`` (used after AMD and nested
    dissection, which know nothing of zero pivots) every zero-diagonal node waits for all of its
    neighbours with a nonzero diagonal, i.e. bodies are eliminated before the constraints acting
    on them, as :func:`graphsolve.symbolic.minimum_degree` does. Nodes moved after the same
    neighbour keep their relative order. Returns the new order and the moved nodes.
    """
    if not zero:
        return order, []
    n = order.size
    pos = np.empty(n, np.int64)
    pos[order] = np.arange(n)
    is_zero = np.zeros(n, bool)
    is_zero[np.fromiter(zero, dtype=np.int64, count=len(zero))] = True
    linked = np.flatnonzero(np.diff(indptr) > 0)
    npos = pos[indices]
    if always:                                  # last neighbour with a nonzero diagonal
        counted = np.where(is_zero[indices], -1, npos)
        target = np.full(n, -1, np.int64)
        target[linked] = np.maximum.reduceat(counted, indptr[linked])
        move = is_zero & (target > pos)
    else:                                       # no neighbour earlier: after the last one
        first = np.full(n, -1, np.int64)
        target = np.full(n, -1, np.int64)
        first[linked] = np.minimum.reduceat(npos, indptr[linked])
        target[linked] = np.maximum.reduceat(npos, indptr[linked])
        move = is_zero & (first > pos)
    if not move.any():
        return order, []
    # sort key: (position of the node, or of the neighbour it waits for; moved after; own pos)
    major = np.where(move, target, pos)[order]
    minor = move[order].astype(np.int64)
    new = order[np.lexsort((np.arange(n), minor, major))]
    deferred = order[move[order]]
    return new, [int(v) for v in deferred]


def _minimum_degree(indptr: np.ndarray, indices: np.ndarray, sizes: np.ndarray,
                    zero: frozenset[int]) -> np.ndarray:
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


def named_order(name: str, n: int, indptr: np.ndarray, indices: np.ndarray, sizes: np.ndarray,
                zero: frozenset[int], root: int | None) -> tuple[np.ndarray, list[int], str]:
    """``(order, deferred, source)`` of a named ordering other than ``"auto"``."""
    deferred: list[int] = []
    if name in ("brudigam", "dfs"):
        roots = _dfs_roots(n, indptr, indices, root, zero)
        order = _dfs_order(indptr, indices, roots, preorder=name == "dfs")
        order, deferred = _defer_zero_pivots(indptr, indices, order, zero, always=False)
        source = "graphsolve DFS (Brüdigam et al. 2023, Alg. 1-4)"
    elif name == "brudigam-cm":
        order = _cuthill_mckee_dfs(n, indptr, indices, root, zero)
        order, deferred = _defer_zero_pivots(indptr, indices, order, zero, always=False)
        source = ("graphsolve DFS (Brüdigam et al. 2023, Alg. 1-4), neighbours in "
                  "Cuthill-McKee order")
    elif name == "natural":
        order, source = np.arange(n, dtype=np.int64), "node ids"
    elif name == "mindeg":
        order = _compiled_minimum_degree(n, indptr, indices, sizes, zero)
        source = "graphsolve minimum degree (exact degrees, block-size weighted)"
    elif name == "amd":
        amd = _suitesparse_amd(n, indptr, indices)
        if amd is None:
            order = _compiled_minimum_degree(n, indptr, indices, sizes, zero)
            source = ("graphsolve minimum degree (fallback: scikit-sparse, which brings "
                      "SuiteSparse's AMD, is not installed)")
        else:
            order, deferred = _defer_zero_pivots(indptr, indices, amd, zero, always=True)
            source = "SuiteSparse AMD through CHOLMOD (scikit-sparse)"
    elif name == "nd":
        order, run = _metis_nested_dissection(n, indptr, indices, sizes)
        order = weighted_postorder(indptr, indices, order)
        order, deferred = _defer_zero_pivots(indptr, indices, order, zero, always=True)
        source = f"METIS nested dissection ({run}), postordered"
    else:                                               # pragma: no cover - checked above
        raise GraphError(f"unknown ordering {name!r}")
    return np.asarray(order, np.int64), deferred, source


def auto_order(n: int, indptr: np.ndarray, indices: np.ndarray, sizes: np.ndarray,
               zero: frozenset[int], root: int | None, n_edges: int
               ) -> tuple[str, np.ndarray, list[int], str, tuple[tuple[str, int, float], ...]]:
    """The cheapest of :data:`AUTO_CANDIDATES` by LDU factor + one-solve flops
    (:func:`~graphsolve.symbolic.elimination_counts`); on equal flops the earlier candidate of
    :data:`AUTO_CANDIDATES` wins.

    On a forest with equal block sizes Brüdigam's ordering has no fill (2023, §4.1), which no
    ordering beats, and is taken without looking further (with mixed sizes the flops of a pair
    depend on which of its nodes is eliminated first, so the others are counted too).
    Otherwise AMD is counted first (its count is O(nnz(L)) of a good ordering), then
    the others, each abandoned as soon as its running count exceeds the best total so far, so
    that a labelling on which DFS loop opening explodes costs no more than the AMD count.
    Nested dissection is tried only where AMD's factor is dense
    (:data:`ND_MIN_FLOPS_PER_ENTRY`, :data:`ND_MIN_FILL_RATIO`).
    """
    sizes = sizes.astype(np.int64)
    forest = n_edges == n - component_roots(indptr, indices, np.ones(n, np.bool_))[0].size
    forest = forest and bool(np.all(sizes == sizes[0]))   # mixed sizes: direction matters
    rank = {name: r for r, name in enumerate(AUTO_CANDIDATES)}
    names = ["brudigam"] if forest else ["amd", *(c for c in AUTO_CANDIDATES if c != "amd")]
    # (cost, rank, name, order, deferred, source, flu, sol) of the cheapest so far
    best: tuple[float, int, str, np.ndarray, list[int], str, float, float] | None = None
    counted = {}
    for name in names:
        if name == "nd" and (best is None
                             or not _dense_factor(n, indptr, indices, sizes, best[6], best[7])):
            continue
        order, deferred, source = named_order(name, n, indptr, indices, sizes, zero, root)
        limit = np.inf if best is None else best[0]
        pairs, flu, _, sol = elimination_counts(indptr, indices, order, sizes, limit)
        counted[name] = (name, int(pairs), float(flu))
        cand = (flu + sol, rank[name], name, order, deferred, source, flu, sol)
        if pairs >= 0 and (best is None or cand[:2] < best[:2]):
            best = cand
    assert best is not None                 # the first candidate is counted without a limit
    _, _, name, order, deferred, source, _, _ = best
    return name, order, deferred, source, tuple(counted[c] for c in AUTO_CANDIDATES
                                                if c in counted)


def _dense_factor(n: int, indptr: np.ndarray, indices: np.ndarray, sizes: np.ndarray,
                  flu: float, sol: float) -> bool:
    """CHOLMOD's test for trying METIS after AMD, on scalar counts: flops per factor entry
    and factor entries per matrix entry (lower triangles with the diagonal) both high."""
    diag = float(np.sum(sizes * sizes))
    src = np.repeat(np.arange(n), np.diff(indptr))
    lower = float(np.sum(sizes[src] * sizes[indices])) / 2
    lnz = diag + (sol - 2 * diag) / 4               # solve flops = 2 D + 4 L
    return flu / lnz >= ND_MIN_FLOPS_PER_ENTRY and lnz / (diag + lower) >= ND_MIN_FILL_RATIO


def _cuthill_mckee_dfs(n: int, indptr: np.ndarray, indices: np.ndarray, root: int | None,
                       zero: frozenset[int]) -> np.ndarray:
    """Brüdigam's DFS post-order with the two choices the paper leaves open (2023, §4.1: the
    root and the order in which a node's neighbours are visited) taken from a Cuthill-McKee
    ordering (SciPy's reverse Cuthill-McKee, reversed) instead of the node ids.

    Why: the fill of a DFS ordering is the tree paths spanned by its back edges. Visiting
    neighbours by id follows whatever the labelling makes smallest; on networkx's
    ``ladder_graph`` (numbered rail by rail) the search runs down one rail and back along the
    other, every rung spans the whole ladder and the fill is quadratic. Cuthill-McKee ranks
    grow with the distance from a peripheral root (breadth-first levels, low degree first), so
    the search prefers neighbours near the front it came from, closes each cycle soon after
    opening it, and gives the same fill under any relabelling (a test checks ladders and grids).
    The DFS roots are the smallest-rank nonzero-diagonal node of each component unless ``root``
    is given, as for ``"brudigam"``.
    """
    pattern = csr_array((np.ones(indices.size), indices, indptr), shape=(n, n))
    cm = np.asarray(csgraph.reverse_cuthill_mckee(pattern, symmetric_mode=True),
                    dtype=np.int64)[::-1]
    rank = np.empty(n, np.int64)
    rank[cm] = np.arange(n)
    r_indptr, r_indices = relabelled_csr(indptr, indices, rank)
    r_zero = frozenset(rank[list(zero)].tolist()) if zero else frozenset()
    roots = _dfs_roots(n, r_indptr, r_indices, None if root is None else int(rank[root]),
                       r_zero)
    return cm[_dfs_order(r_indptr, r_indices, roots, preorder=False)]


def _compiled_minimum_degree(n: int, indptr: np.ndarray, indices: np.ndarray,
                             sizes: np.ndarray, zero: frozenset[int]) -> np.ndarray:
    mask = np.zeros(n, bool)
    mask[list(zero)] = True
    return minimum_degree(indptr, indices, sizes.astype(np.int64), mask)


def _cholmod_order(n: int, indptr: np.ndarray, indices: np.ndarray, method: str
                   ) -> np.ndarray | None:
    """CHOLMOD's fill-reducing ordering ``method`` (``"amd"``, ``"metis"``, ``"nesdis"``) of
    the node graph (scikit-sparse; CHOLMOD postorders it by its elimination tree, which keeps
    the fill); None if scikit-sparse is not installed."""
    try:
        from sksparse import cholmod
    except ImportError:
        return None
    import scipy.sparse as sp

    if indices.size == 0:                       # no edges: any order has no fill
        return np.arange(n, dtype=np.int64)
    # the off-diagonal pattern only: the orderings ignore the diagonal (and adding it with
    # SciPy cost more than the AMD run itself at 10^3 nodes)
    pattern = sp.csc_matrix((np.ones(indices.size), indices, indptr), shape=(n, n))
    factor = cholmod.analyze(pattern, mode="simplicial", ordering_method=method)
    return np.asarray(factor.P(), dtype=np.int64)


def _suitesparse_amd(n: int, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray | None:
    """SuiteSparse's approximate minimum degree (Amestoy, Davis & Duff 1996) of the node graph,
    through CHOLMOD's analysis; None if scikit-sparse is not installed."""
    return _cholmod_order(n, indptr, indices, "amd")


def _metis_nested_dissection(n: int, indptr: np.ndarray, indices: np.ndarray,
                             sizes: np.ndarray) -> tuple[np.ndarray, str]:
    """The cheapest of one or more multilevel nested dissections of the node graph (METIS,
    Karypis & Kumar 1998) by elimination count
    (:func:`~graphsolve.symbolic.elimination_counts`, LDU flops; ties: the earlier run).
    Returns the order and the name of the run it came from.

    1. ``METIS_NodeND`` through ``pymetis``, block sizes as vertex weights; always.
    2. If that factor needs at least :data:`ND_MORE_RUNS_MIN_FLOPS` flops and at least
       :data:`ND_MORE_RUNS_MIN_DENSITY` flops per ``n^1.5`` (3-D-like): with scikit-sparse,
       CHOLMOD's METIS interface and its own nested dissection (NESDIS) on the graph and
       NESDIS on two renumberings of it (:data:`ND_CHOLMOD_RUNS`); without it, pymetis on
       the graph renumbered in Cuthill-McKee order, with METIS's default heavy-edge and with
       random matching in the coarsening.
    3. If the cheapest so far needs at least :data:`ND_RESEED_MIN_FLOPS` flops: pymetis again
       with each seed of :data:`ND_SEEDS`.

    Why several: METIS's separators depend on the node numbering, its random seed and its
    interface, and on 3-D grids the outcome is bimodal (crystal 12³ under random numberings:
    one run's LDU flops are either ~4.4e9 or ~6.7e9; 22³: ~1.95e11 or 2.6-3.4e11). Runs
    through one interface are correlated across seeds; runs through different interfaces and
    numberings draw more independently, and NESDIS draws the good separators most often
    (:data:`ND_CHOLMOD_RUNS` has the measurements). A run costs about one METIS call and one
    elimination count: ~5 ms at 1728 nodes, ~60 ms at 10648, against 70-150 ms and 2-3 s of
    factorization.
    """
    import pymetis

    if indices.size == 0 or n < 3:
        return np.arange(n, dtype=np.int64), "node ids: no separator to find"
    weights = sizes.astype(np.int64)
    graph = pymetis.CSRAdjacency(indptr, indices)

    def run(graph: Any, vweights: np.ndarray, seed: int | None = None,
            ctype: int | None = None) -> np.ndarray:
        options = pymetis.Options()
        if seed is not None:
            options.seed = seed
        if ctype is not None:
            options.ctype = ctype
        perm, _ = pymetis.nested_dissection(graph, vweights=vweights, options=options)
        return np.asarray(perm, dtype=np.int64)

    best, best_run = run(graph, weights), "pymetis"
    best_flops = elimination_counts(indptr, indices, best, weights, np.inf)[1]

    runs = 1

    def consider(order: np.ndarray | None, name: str) -> None:
        nonlocal best, best_flops, best_run, runs
        if order is None:
            return
        runs += 1
        pairs, flops, _, _ = elimination_counts(indptr, indices, order, weights, best_flops)
        if pairs >= 0 and flops < best_flops:
            best, best_flops, best_run = order, flops, name

    if best_flops >= max(ND_MORE_RUNS_MIN_FLOPS, ND_MORE_RUNS_MIN_DENSITY * float(n) ** 1.5):
        if _have_cholmod():
            for method, numbering in ND_CHOLMOD_RUNS:
                perm, name = _numbering(n, indptr, indices, numbering)
                consider(_renumbered_order(n, indptr, indices, perm, method),
                         f"CHOLMOD {method.upper()}, {name}")
        else:                                   # without scikit-sparse: pymetis's runs
            cm, cm_graph = _cuthill_mckee_graph(n, indptr, indices)
            consider(cm[run(cm_graph, weights[cm])], "pymetis, Cuthill-McKee numbering")
            consider(cm[run(cm_graph, weights[cm], ctype=_METIS_CTYPE_RM)],
                     "pymetis, Cuthill-McKee numbering, random matching")
    if best_flops >= ND_RESEED_MIN_FLOPS:
        for seed in ND_SEEDS:
            consider(run(graph, weights, seed=seed), f"pymetis seed {seed}")
    return best, best_run if runs == 1 else f"{best_run}, the cheapest of {runs} runs"


def _numbering(n: int, indptr: np.ndarray, indices: np.ndarray, numbering: str | int
               ) -> tuple[np.ndarray | None, str]:
    """The permutation (new vertex ``k`` is node ``perm[k]``; ``None``: as given) and the name
    of a numbering of :data:`ND_CHOLMOD_RUNS`."""
    if isinstance(numbering, int):
        return np.random.default_rng(numbering).permutation(n), \
            f"random numbering (seed {numbering})"
    perm = _cuthill_mckee(n, indptr, indices) if numbering == "cuthill-mckee" else None
    return perm, f"{numbering} numbering"


def _renumbered_csr(indptr: np.ndarray, indices: np.ndarray, perm: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The node graph renumbered by ``perm`` (new vertex ``k`` is node ``perm[k]``)."""
    rank = np.empty(perm.size, np.int64)
    rank[perm] = np.arange(perm.size)
    return relabelled_csr(indptr, indices, rank)


def _renumbered_order(n: int, indptr: np.ndarray, indices: np.ndarray,
                      numbering: np.ndarray | None, method: str) -> np.ndarray | None:
    """:func:`_cholmod_order` of the node graph renumbered by ``numbering`` (new vertex ``k``
    is node ``numbering[k]``; ``None``: the nodes' own numbering), as nodes."""
    if numbering is None:
        return _cholmod_order(n, indptr, indices, method)
    order = _cholmod_order(n, *_renumbered_csr(indptr, indices, numbering), method)
    return None if order is None else numbering[order]


def _have_cholmod() -> bool:
    """Whether scikit-sparse (CHOLMOD) is installed."""
    try:
        from sksparse import cholmod  # noqa: F401
    except ImportError:
        return False
    return True


def _cuthill_mckee(n: int, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """SciPy's reverse Cuthill-McKee order of the node graph."""
    pattern = csr_array((np.ones(indices.size), indices, indptr), shape=(n, n))
    return np.asarray(csgraph.reverse_cuthill_mckee(pattern, symmetric_mode=True), np.int64)


def _cuthill_mckee_graph(n: int, indptr: np.ndarray, indices: np.ndarray
                         ) -> tuple[np.ndarray, Any]:
    """:func:`_cuthill_mckee`'s order ``cm`` and the graph renumbered by it (new vertex ``k``
    is node ``cm[k]``), as a ``pymetis.CSRAdjacency``."""
    import pymetis

    cm = _cuthill_mckee(n, indptr, indices)
    return cm, pymetis.CSRAdjacency(*_renumbered_csr(indptr, indices, cm))
