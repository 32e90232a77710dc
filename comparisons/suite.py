"""Named benchmark suites: graph families × sizes × matrix kinds.

* ``default``: small sizes, every family and kind, a few minutes on 2 cores (``make figures``).
* ``full``: the corrected benchmark at the sizes of the performance targets (path / random tree /
  ladder up to 2000 nodes, net up to 30×30, crystal up to 8³): true grids, the same
  well-conditioned matrix for every solver, residuals checked.
* ``paper``: Brüdigam et al. (2023) Fig. 9 b-d as the original ran it (see
  :mod:`comparisons.paper`): its graphs and numbering, i.i.d. normal blocks including the fill
  blocks, the dense baseline on a separate random matrix (``dense-lapack-lu-separate``), and,
  beyond the paper, LAPACK and SuperLU on the same matrix. The matrices are neither
  well-conditioned nor safe without pivoting; residuals are recorded, not asserted.

A size is the generator's parameter: nodes for path, random tree and ladder; the side ``k`` for
net (k×k) and crystal (k×k×k). Kinds: ``spd`` and ``unsymmetric`` on the graph itself, ``kkt``
on its :func:`~graphsolve.generators.constraint_graph` (bodies 6, constraints 3; crystals are
over-constrained with 3-row constraints, so they have no kkt case).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

import graphsolve as gs

from .solvers import Case

__all__ = ["Suite", "SUITES", "FAMILIES", "KINDS", "make_graph", "make_case", "make_paper_case"]

KINDS = ("spd", "unsymmetric", "kkt", "paper")


def _ladder(n: int) -> nx.Graph:
    return gs.generators.ladder(n + n % 2)


FAMILIES = {
    "path": gs.generators.path,
    "random_tree": lambda n: gs.generators.random_tree(n, seed=n),
    "ladder": _ladder,
    "net": gs.generators.net,
    "crystal": gs.generators.crystal,
}


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
    make_case: Callable[..., Case] = make_case
    min_case_s: float = 0.0

    def cases(self, families=None, sizes=None, kinds=None) -> Iterator[tuple[str, int, str]]:
        """``(family, size, kind)`` triples, optionally restricted."""
        for fam, fam_sizes in self.sizes.items():
            if families and fam not in families:
                continue
            for size in sizes or fam_sizes:
                for kind in kinds or self.kinds:
                    if (fam, kind) not in self.skip:
                        yield fam, size, kind


PEERS = ("cholmod", "qdldl", "superlu-colamd", "superlu-natural", "dense-lapack-lu",
         "dense-block-ldu")
GRAPHSOLVE = ("graphsolve-brudigam-compiled", "graphsolve-amd-compiled",
              "graphsolve-brudigam-reference")
NO_KKT_CRYSTAL = frozenset({("crystal", "kkt")})

SUITES = {
    "default": Suite(
        "default",
        sizes={"path": (100, 500), "random_tree": (100, 500), "ladder": (100, 500),
               "net": (6, 12), "crystal": (3, 5)},
        kinds=("spd", "unsymmetric", "kkt"), solvers=GRAPHSOLVE + PEERS, repeats=3,
        description="small sizes, every family and kind (minutes)", skip=NO_KKT_CRYSTAL),
    "full": Suite(
        "full",
        sizes={"path": (100, 250, 500, 1000, 2000), "random_tree": (100, 250, 500, 1000, 2000),
               "ladder": (100, 250, 500, 1000, 2000), "net": (6, 12, 18, 24, 30),
               "crystal": (3, 4, 6, 8)},
        kinds=("spd", "unsymmetric", "kkt"),
        solvers=GRAPHSOLVE[:2] + ("graphsolve-dfs-compiled", "graphsolve-natural-compiled")
        + PEERS, repeats=7, description="corrected benchmark at the target sizes",
        skip=NO_KKT_CRYSTAL, min_case_s=2.0),
    "paper": Suite(
        "paper",
        sizes={"ladder": tuple(range(1, 152)), "net": tuple(range(1, 19)),
               "crystal": tuple(range(1, 7))},
        kinds=("paper",),
        solvers=("graphsolve-brudigam-compiled", "graphsolve-amd-compiled",
                 "dense-lapack-lu-separate", "dense-lapack-lu", "superlu-colamd"),
        repeats=5, make_case=make_paper_case,
        description="Brüdigam et al. 2023 Fig. 9 b-d as originally run: original graphs "
                    "(net_paper quirk for N >= 10), i.i.d. normal blocks incl. fill, dense "
                    "solve on a separate uniform matrix"),
}
