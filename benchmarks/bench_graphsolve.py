"""Core timings of graphsolve: analyze, factorize, refactor and solve per graph family at a
small and a large size, and the peak memory of a factorization.

Every ``setup`` builds its matrix once and then runs each timed call once on that very matrix,
so numba's compilation (or the loading of its on-disk cache) and first-touch allocations are
never part of a timing, even in ``asv run --quick`` (one call per benchmark).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

import graphsolve as gs

#: Block size of every node (the 6×6 blocks of a rigid body).
BLOCK_SIZE = 6

#: The generator's parameter of each family at each size: nodes for path, random tree and
#: ladder; the side ``k`` for net (k×k), crystal (k×k×k) and the networkx grid (k×k).
#: tests/test_asv_benchmarks.py shrinks these to run every benchmark once in a few seconds.
SIZES: dict[str, dict[str, int]] = {
    "path": {"small": 500, "large": 20_000},
    "random_tree": {"small": 500, "large": 20_000},
    "ladder": {"small": 500, "large": 20_000},
    "net": {"small": 12, "large": 60},                     # 144 / 3600 nodes
    "crystal": {"small": 5, "large": 12},                  # 125 / 1728 nodes
    "nx_grid2d_relabelled": {"small": 22, "large": 100},   # 484 / 10000 nodes
}


def nx_grid2d_relabelled(k: int) -> nx.Graph:
    """``networkx.grid_2d_graph(k, k)`` with its nodes numbered ``0..k²-1`` in a random order
    (seeded by ``k``): a networkx-native graph whose numbering helps no ordering."""
    G = nx.grid_2d_graph(k, k)
    perm = np.random.default_rng(k).permutation(G.number_of_nodes())
    return nx.relabel_nodes(G, dict(zip(G.nodes, perm.tolist(), strict=True)))


GENERATORS = {
    "path": gs.generators.path,
    "random_tree": lambda n: gs.generators.random_tree(n, seed=n),
    "ladder": lambda n: gs.generators.ladder(n + n % 2),
    "net": gs.generators.net,
    "crystal": gs.generators.crystal,
    "nx_grid2d_relabelled": nx_grid2d_relabelled,
}


def make_system(family: str, size: str, kind: str, seed: int = 0
                ) -> tuple[gs.BlockMatrix, np.ndarray]:
    """The matrix (well-conditioned, random, of ``kind``) and right-hand side of one case."""
    G = GENERATORS[family](SIZES[family][size])
    A = gs.random_block_matrix(G, kind, block_size=BLOCK_SIZE, seed=seed)
    b = np.random.default_rng(seed + 1).standard_normal(A.shape[0])
    return A, b


class SPD:
    """Symmetric positive definite matrices (LDLᵀ), every family."""

    kind = "spd"
    params = (list(SIZES), ["small", "large"])
    param_names = ("family", "size")

    def setup(self, family: str, size: str) -> None:
        self.A, self.b = make_system(family, size, self.kind)
        self.A2 = self.A.with_data(2.0 * self.A.data)    # new values, same pattern and kind
        # warm-up: each timed call once (JIT compilation or cache load, first allocations)
        self.analysis = gs.analyze(self.A)
        self.F = gs.factorize(self.A, analysis=self.analysis)
        self.F.refactor(self.A2)
        self.F.solve(self.b)

    def time_analyze(self, family: str, size: str) -> None:
        """Symbolic analysis with the default ordering ("auto": ordering choice + fill)."""
        gs.analyze(self.A)

    def time_factorize(self, family: str, size: str) -> None:
        """A first factorization with a given analysis (allocation + numeric factorization)."""
        gs.factorize(self.A, analysis=self.analysis)

    def time_refactor(self, family: str, size: str) -> None:
        """Numeric refactorization of new values into the existing factor."""
        self.F.refactor(self.A2)

    def time_solve(self, family: str, size: str) -> None:
        """One right-hand side."""
        self.F.solve(self.b)

    def peakmem_factorize(self, family: str, size: str) -> None:
        """Peak RSS of the process (setup's matrix and factor included) around a factorize."""
        gs.factorize(self.A, analysis=self.analysis)


class Unsymmetric(SPD):
    """Unsymmetric matrices (LDU) on a tree, a ladder and a net."""

    kind = "unsymmetric"
    params = (["random_tree", "ladder", "net"], ["small", "large"])
