"""Named benchmark suites: graph families × sizes × matrix kinds.

* ``default``: small sizes, every family and kind (the ``nx-*`` families ``spd`` only), a few
  minutes on 2 cores (``make figures``). ``nx-ladder`` stays at 200 nodes: numbered rail by rail,
  the Brüdigam ordering fills it quadratically, and the reference backend took 25 s per
  factorization at 500 nodes.
* ``full``: the corrected benchmark at the sizes of the performance targets (path / random tree /
  ladder and their networkx twins up to 2000 nodes, net and ``nx-grid2d`` up to 30×30, crystal
  and ``nx-grid3d`` up to 8³): true grids, the same well-conditioned matrix for every solver,
  residuals checked. Both time graphsolve's default ordering (``graphsolve-auto-compiled``, when
  graphsolve has ``"auto"``) first, then the Brüdigam and AMD orderings.
* ``paper``: Brüdigam et al. (2023) Fig. 9 b-d as the original ran it (see
  :mod:`comparisons.paper`): its graphs and numbering, i.i.d. normal blocks including the fill
  blocks, the dense baseline on a separate random matrix (``dense-lapack-lu-separate``), and,
  beyond the paper, LAPACK and SuperLU on the same matrix. The matrices are neither
  well-conditioned nor safe without pivoting; residuals are recorded, not asserted.

A size is the generator's parameter: nodes for path, random tree and ladder (and their networkx
twins ``nx-ladder``, ``nx-tree``); the side ``k`` for net (k×k), crystal (k×k×k), ``nx-grid2d`` and
``nx-grid3d``. The ``nx-*`` families are networkx's own generators in networkx's own numbering
(a ladder rail by rail, grids in ``convert_node_labels_to_integers`` order, a random labelled
tree), so that a result does not depend on this project's generators numbering nodes well.

:func:`relabel_case` gives the same system under a random numbering of the nodes (``run
--relabel K``). Kinds: ``spd`` and ``unsymmetric`` on the graph itself, ``kkt``
on its :func:`~graphsolve.generators.constraint_graph` (bodies 6, constraints 3; crystals are
over-constrained with 3-row constraints, so they have no kkt case).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import networkx as nx
import numpy as np

import graphsolve as gs

from .solvers import SOLVERS, Case

__all__ = ["Suite", "SUITES", "FAMILIES", "KINDS", "SIDE_EXPONENT", "node_count",
           "large_side_cases", "make_graph", "make_case", "make_paper_case", "relabel_case",
           "relabelled_cases", "relabelling_seed", "scalar_permutation"]

KINDS = ("spd", "unsymmetric", "kkt", "paper")


def _ladder(n: int) -> nx.Graph:
    return gs.generators.ladder(n + n % 2)


def _nx_ladder(n: int) -> nx.Graph:
    """``networkx.ladder_graph``: rail ``0..m-1``, then rail ``m..2m-1`` (``m = (n + 1) // 2``
    rungs, so ``n + n % 2`` nodes like :func:`_ladder`)."""
    return nx.ladder_graph((n + 1) // 2)


def _nx_grid2d(k: int) -> nx.Graph:
    """``networkx.grid_2d_graph(k, k)`` numbered by ``convert_node_labels_to_integers``."""
    return nx.convert_node_labels_to_integers(nx.grid_2d_graph(k, k))


def _nx_grid3d(k: int) -> nx.Graph:
    """``networkx.grid_graph(dim=[k, k, k])`` numbered by ``convert_node_labels_to_integers``."""
    return nx.convert_node_labels_to_integers(nx.grid_graph(dim=[k, k, k]))


def _nx_tree(n: int) -> nx.Graph:
    """``networkx.random_labeled_tree(n, seed=n)`` (``random_tree`` before networkx 3.3)."""
    make = getattr(nx, "random_labeled_tree", None) or nx.random_tree
    return make(n, seed=n)


FAMILIES = {
    "path": gs.generators.path,
    "random_tree": lambda n: gs.generators.random_tree(n, seed=n),
    "ladder": _ladder,
    "net": gs.generators.net,
    "crystal": gs.generators.crystal,
    "nx-ladder": _nx_ladder,
    "nx-grid2d": _nx_grid2d,
    "nx-grid3d": _nx_grid3d,
    "nx-tree": _nx_tree,
}


#: The families whose size is a side ``k`` (k² or k³ nodes), with the exponent.
SIDE_EXPONENT = {"net": 2, "nx-grid2d": 2, "crystal": 3, "nx-grid3d": 3}


def node_count(family: str, size: int) -> int:
    """Nodes of the graph of ``family`` at ``size`` without building it: the size itself for
    path, trees and ladders (a ladder rounded up to an even count), ``size²`` or ``size³`` for
    the families of :data:`SIDE_EXPONENT`."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; choose from {sorted(FAMILIES)}")
    if family in SIDE_EXPONENT:
        return int(size) ** SIDE_EXPONENT[family]
    if family in ("ladder", "nx-ladder"):
        return int(size) + int(size) % 2
    return int(size)


def large_side_cases(families, sizes, limit: int = 100_000) -> list[tuple[str, int, int]]:
    """``(family, size, nodes)`` for the families among ``families`` whose size is a side
    (:data:`SIDE_EXPONENT`) and whose graph at one of ``sizes`` has more than ``limit`` nodes:
    ``run --sizes`` applies one list of sizes to every family, and a size meant as a node count
    (``--sizes 2000``) makes a 2000×2000 net of 4·10⁶ nodes."""
    return [(fam, size, node_count(fam, size)) for fam in families if fam in SIDE_EXPONENT
            for size in sizes if node_count(fam, size) > limit]


def make_graph(family: str, size: int) -> nx.Graph:
    """The graph of one family at one size (see the module docstring)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; choose from {sorted(FAMILIES)}")
    return FAMILIES[family](size)


def make_case(family: str, size: int, kind: str, seed: int = 0, block_size: int = 6) -> Case:
    """One benchmark system (corrected benchmark): a well-conditioned random matrix of the
    given kind and a standard normal right-hand side, the same for every solver."""
    G = make_graph(family, size)
    if kind == "kkt":
        G = gs.generators.constraint_graph(G, body_size=block_size, constraint_size=3)
    A = gs.random_block_matrix(G, kind, block_size=block_size, seed=seed)
    b = np.random.default_rng(seed + 1).standard_normal(A.shape[0])
    return Case(family, size, kind, A, b, seed=seed)


def make_paper_case(family: str, size: int, kind: str = "paper", seed: int = 0) -> Case:
    """One system of the original Fig. 9 b-d benchmark: the original graph numbering, i.i.d.
    standard normal 6×6 blocks on edges and fill blocks, a normal right-hand side, and the
    original's DFS order pinned for graphsolve's ``"brudigam"`` ordering."""
    from . import paper

    G = paper.paper_graph(family, size)
    A = paper.paper_matrix(G, block_size=6, seed=seed)
    b = paper.paper_vector(A.shape[0], seed=seed + 1)
    return Case(family, size, "paper", A, b, seed=seed,
                orderings={"brudigam": list(paper.paper_elimination_order(G))})


def relabelling_seed(family: str, size: int, r: int) -> int:
    """Seed of random labelling ``r`` of a case: derived from ``(family, size, r)`` only (CRC-32
    of the family name, not Python's salted ``hash``), so runs and machines agree."""
    ss = np.random.SeedSequence([zlib.crc32(family.encode()), int(size), int(r)])
    return int(ss.generate_state(1, dtype=np.uint64)[0])


def scalar_permutation(block_sizes: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Scalar index map of a block permutation: with ``perm[i]`` the new id of old node ``i``,
    row ``k`` of the permuted matrix is row ``idx[k]`` of the original (``S_new = S[idx][:,
    idx]``, ``b_new = b[idx]``, ``x = x_new[argsort(idx)]``)."""
    sizes = np.asarray(block_sizes, dtype=np.int64)
    old = np.argsort(perm)                        # old node at each new id
    new_sizes = sizes[old]
    old_off = np.concatenate([[0], np.cumsum(sizes)])
    new_off = np.concatenate([[0], np.cumsum(new_sizes)])
    return (np.repeat(old_off[old] - new_off[:-1], new_sizes)
            + np.arange(int(new_off[-1]), dtype=np.int64))


def _relabelled_graph(G: nx.Graph, perm: np.ndarray) -> nx.Graph:
    """``G`` with node ``i`` renamed ``perm[i]`` (node, edge and graph attributes kept; the
    node ids in a constraint's ``bodies`` and in ``zero_diagonal`` renamed too), nodes inserted
    in new-id order and edges sorted by new ids, so that no iteration order of the result
    follows the old numbering."""
    old = np.argsort(perm)
    H = nx.Graph()
    H.graph.update(G.graph)
    if "zero_diagonal" in H.graph:
        H.graph["zero_diagonal"] = sorted(int(perm[v]) for v in H.graph["zero_diagonal"])
    nodes = G.nodes
    for p, i in enumerate(old.tolist()):
        data = dict(nodes[i])
        if "bodies" in data:
            data["bodies"] = tuple(sorted(int(perm[v]) for v in data["bodies"]))
        H.add_node(p, **data)
    edges = list(G.edges(data=True))
    if edges:
        uv = perm[np.array([(u, v) for u, v, _ in edges], dtype=np.int64)]
        lo, hi = uv.min(axis=1), uv.max(axis=1)
        order = np.lexsort((hi, lo))
        H.add_edges_from((int(lo[k]), int(hi[k]), edges[k][2]) for k in order.tolist())
    return H


def relabel_case(case: Case, seed: int, labelling: str | None = None) -> Case:
    """The same system under a random numbering of its nodes.

    ``perm = default_rng(seed).permutation(n)`` gives old node ``i`` the id ``perm[i]``; the
    matrix is permuted blockwise (``P S Pᵀ`` with the scalar permutation of
    :func:`scalar_permutation`), the right-hand side likewise, and the graph renamed with its
    node attributes (``role``, ``size``, ``bodies``), so every solver sees the same matrix as on
    the original case up to the numbering. The new case's ``labelling`` is ``labelling``
    (default ``"seed-<seed>"``) and ``perm`` the node permutation.

    Raises ``ValueError`` for a case with pinned orderings (``case.orderings``: explicit node
    orders of the original numbering, e.g. the paper suite's).
    """
    if case.orderings:
        raise ValueError(f"case {case.family} {case.size} pins orderings "
                         f"{sorted(case.orderings)} to its own numbering: not relabelled")
    A = case.A
    perm = np.random.default_rng(seed).permutation(A.n_nodes)
    idx = scalar_permutation(A.block_sizes, perm)
    S = case.S[idx][:, idx]
    G = _relabelled_graph(A.graph, perm)
    B = gs.BlockMatrix.from_scipy(S, A.block_sizes[np.argsort(perm)], graph=G)
    return replace(case, A=B, b=case.b[idx], labelling=labelling or f"seed-{seed}", perm=perm)


def relabelled_cases(case: Case, k: int) -> list[Case]:
    """``k`` random relabellings of ``case`` (:func:`relabel_case`), labelled ``random-<r>``,
    with the seeds of :func:`relabelling_seed`; none for a case with pinned orderings."""
    if case.orderings:
        return []
    return [relabel_case(case, relabelling_seed(case.family, case.size, r), f"random-{r}")
            for r in range(k)]


@dataclass(frozen=True)
class Suite:
    """Families with their sizes, the kinds to run, the solvers, and repetitions (at least
    ``repeats`` timed rounds per case, spread over at least ``min_case_s`` seconds: see
    :func:`comparisons.runner.bench_case`)."""

    name: str
    sizes: dict[str, tuple[int, ...]]
    kinds: tuple[str, ...]
    solvers: tuple[str, ...]
    repeats: int = 5
    description: str = ""
    skip: frozenset[tuple[str, str]] = field(default_factory=frozenset)  # (family, kind)
    #: why a (family, kind) of ``skip`` is not run (:meth:`skipped` reports it)
    skip_reasons: dict = field(default_factory=dict)
    make_case: Callable[..., Case] = make_case
    min_case_s: float = 0.0
    relabels: bool = True          # False: cases pin orderings, ``run --relabel`` runs native

    def cases(self, families=None, sizes=None, kinds=None) -> Iterator[tuple[str, int, str]]:
        """``(family, size, kind)`` triples, optionally restricted."""
        for fam, fam_sizes in self.sizes.items():
            if families and fam not in families:
                continue
            for size in sizes or fam_sizes:
                for kind in kinds or self.kinds:
                    if (fam, kind) not in self.skip:
                        yield fam, size, kind

    def skipped(self, families=None, sizes=None, kinds=None) -> list[dict]:
        """The ``(family, size, kind)`` combinations that :meth:`cases` leaves out under the
        same restrictions, each with the reason: so that a run reports and counts them
        instead of omitting them silently."""
        out = []
        for fam, fam_sizes in self.sizes.items():
            if families and fam not in families:
                continue
            for size in sizes or fam_sizes:
                for kind in kinds or self.kinds:
                    if (fam, kind) in self.skip:
                        out.append({"family": fam, "size": size, "kind": kind,
                                    "reason": self.skip_reasons.get((fam, kind),
                                                                    "excluded by the suite")})
        return out


PEERS = ("cholmod", "qdldl", "superlu-colamd", "superlu-natural", "dense-lapack-lu",
         "dense-block-ldu")


def _graphsolve(*orderings: str) -> tuple[str, ...]:
    """``graphsolve-<ordering>-compiled`` for the orderings graphsolve has (``"auto"`` is left
    out by a graphsolve without it)."""
    return tuple(f"graphsolve-{o}-compiled" for o in orderings
                 if f"graphsolve-{o}-compiled" in SOLVERS)


GRAPHSOLVE = _graphsolve("auto", "brudigam", "amd") + ("graphsolve-brudigam-reference",)
NX_FAMILIES = ("nx-ladder", "nx-grid2d", "nx-grid3d", "nx-tree")
NO_KKT_CRYSTAL = frozenset({("crystal", "kkt"), ("nx-grid3d", "kkt")})
NX_SPD_ONLY = frozenset((f, k) for f in NX_FAMILIES for k in ("unsymmetric", "kkt"))
SKIP_REASONS = {
    **{key: "a 3-D grid's constraint graph is over-constrained: about 3 joints of 3 rows per "
            "6-DOF body, so J cannot have full row rank and the KKT matrix is singular"
       for key in NO_KKT_CRYSTAL},
    **{key: "networkx-native families run spd only (they test labellings, not kinds)"
       for key in NX_SPD_ONLY if key not in NO_KKT_CRYSTAL},
}

SUITES = {
    "default": Suite(
        "default",
        sizes={"path": (100, 500), "random_tree": (100, 500), "ladder": (100, 500),
               "net": (6, 12), "crystal": (3, 5), "nx-ladder": (200,), "nx-grid2d": (12,),
               "nx-grid3d": (5,), "nx-tree": (500,)},
        kinds=("spd", "unsymmetric", "kkt"), solvers=GRAPHSOLVE + PEERS, repeats=3,
        description="small sizes, every family and kind (nx-* families spd only) (minutes)",
        skip=NO_KKT_CRYSTAL | NX_SPD_ONLY, skip_reasons=SKIP_REASONS),
    "full": Suite(
        "full",
        sizes={"path": (100, 250, 500, 1000, 2000), "random_tree": (100, 250, 500, 1000, 2000),
               "ladder": (100, 250, 500, 1000, 2000), "net": (6, 12, 18, 24, 30),
               "crystal": (3, 4, 6, 8), "nx-ladder": (100, 250, 500, 1000, 2000),
               "nx-grid2d": (6, 12, 18, 24, 30), "nx-grid3d": (3, 4, 6, 8),
               "nx-tree": (100, 250, 500, 1000, 2000)},
        kinds=("spd", "unsymmetric", "kkt"),
        solvers=_graphsolve("auto", "brudigam", "amd", "dfs", "natural") + PEERS, repeats=7,
        description="corrected benchmark at the target sizes",
        skip=NO_KKT_CRYSTAL, skip_reasons=SKIP_REASONS, min_case_s=2.0),
    "paper": Suite(
        "paper",
        sizes={"ladder": tuple(range(1, 152)), "net": tuple(range(1, 19)),
               "crystal": tuple(range(1, 7))},
        kinds=("paper",),
        solvers=("graphsolve-brudigam-compiled", "graphsolve-amd-compiled",
                 "dense-lapack-lu-separate", "dense-lapack-lu", "superlu-colamd"),
        repeats=5, make_case=make_paper_case, relabels=False,
        description="Brüdigam et al. 2023 Fig. 9 b-d as originally run: original graphs "
                    "(net_paper quirk for N >= 10), i.i.d. normal blocks incl. fill, dense "
                    "solve on a separate uniform matrix"),
}
