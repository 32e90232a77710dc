"""Batched factorization: ``factorize_batch`` + refactor + solve of a batch of matrices that
share one ladder's pattern (one numba thread, so the numbers do not depend on the machine's
other load or core count)."""

from __future__ import annotations

import numpy as np

import graphsolve as gs

#: Items in the batch and nodes of the ladder (tests/test_asv_benchmarks.py shrinks them).
BATCH = 100
LADDER_NODES = 200
WORKERS = 1


class Batch:

    def setup(self) -> None:
        A = gs.random_block_matrix(gs.generators.ladder(LADDER_NODES), "spd", block_size=6,
                                   seed=0)
        scale = 1.0 + 0.01 * np.arange(BATCH)
        self.A = A
        self.values = scale[:, None] * A.data[None, :]
        self.values2 = 2.0 * self.values
        self.b = np.random.default_rng(1).standard_normal((BATCH, A.shape[0]))
        self.analysis = gs.analyze(A)
        # warm-up: each timed call once
        self.F = gs.factorize_batch(A, self.values, analysis=self.analysis, workers=WORKERS)
        self.F.refactor(self.values2)
        self.F.solve(self.b)

    def time_factorize_batch(self) -> None:
        """A first batched factorization with a given analysis."""
        gs.factorize_batch(self.A, self.values, analysis=self.analysis, workers=WORKERS)

    def time_refactor_batch(self) -> None:
        self.F.refactor(self.values2)

    def time_solve_batch(self) -> None:
        """One right-hand side per item."""
        self.F.solve(self.b)
