"""Benchmark: batched factorization against a Python loop of single factorizations.

For each graph, ``B`` matrices with the same pattern (perturbed values) are refactored and
solved (one right-hand side each) by :func:`graphsolve.factorize_batch` with numba's threads,
and by a loop of ``Factorization.refactor`` + ``solve`` over the same matrices. Both reuse one
analysis and exclude compilation. Peers offer no batched interface; the loop is what a user
would write otherwise. A third column splits the loop over a pool of Python threads (one
``Factorization`` per thread; the compiled kernels release the GIL): what a user's own
thread pool (or a threaded Dask worker) gets.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from tqdm import tqdm

import graphsolve as gs

from .runner import time_call
from .suite import make_graph

__all__ = ["run_batch", "BATCH_CASES"]

#: (family, size, batch size)
BATCH_CASES = (("path", 20, 1000), ("path", 200, 100), ("ladder", 50, 200),
               ("ladder", 500, 20), ("net", 6, 200))


def run_batch(cases=BATCH_CASES, repeats: int = 5, seed: int = 0, progress: bool = True
              ) -> list[dict]:
    """One row per case and numba thread count (1 and all)."""
    rows = []
    for family, size, B in tqdm(cases, desc="batch", disable=not progress):
        rows.extend(_bench_case(family, size, B, repeats, seed))
    return rows


def _bench_case(family: str, size: int, B: int, repeats: int, seed: int) -> list[dict]:
    A = gs.random_block_matrix(make_graph(family, size), "unsymmetric", block_size=6, seed=seed)
    rng = np.random.default_rng(seed)
    vals = A.data[None, :] * (1 + 0.05 * rng.standard_normal((B, A.data.size)))
    b = rng.standard_normal((B, A.shape[0]))
    mats = [A.with_data(v) for v in vals]
    an = gs.analyze(A)
    batch = gs.factorize_batch(A, vals, analysis=an, method="ldu")
    single = gs.factorize(A, analysis=an, method="ldu")

    def loop():
        for k in range(B):
            single.refactor(mats[k]).solve(b[k])

    t_loop = time_call(loop, repeats, 1, budget=5.0)
    pool_threads = max(1, numba.config.NUMBA_NUM_THREADS)
    per_thread = [gs.factorize(A, analysis=an, method="ldu") for _ in range(pool_threads)]

    def chunk(t):
        for k in range(t, B, pool_threads):
            per_thread[t].refactor(mats[k]).solve(b[k])

    with ThreadPoolExecutor(pool_threads) as pool:
        t_pool = time_call(lambda: list(pool.map(chunk, range(pool_threads))), repeats, 1,
                           budget=5.0)
    x = batch.refactor(vals).solve(b)
    err = max(np.abs(x[k] - single.refactor(mats[k]).solve(b[k])).max()
              for k in range(0, B, max(1, B // 5)))
    rows = []
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            t_batch = time_call(lambda: batch.refactor(vals).solve(b), repeats, 1, budget=5.0)
            rows.append({"family": family, "size": size, "nodes": A.n_nodes, "N": A.shape[0],
                         "batch": B, "threads": threads, "batch_s": t_batch.best,
                         "loop_s": t_loop.best, "speedup": t_loop.best / t_batch.best,
                         "per_matrix_batch_us": t_batch.best / B * 1e6,
                         "per_matrix_loop_us": t_loop.best / B * 1e6, "max_diff": err,
                         "python_threads": pool_threads, "pool_s": t_pool.best,
                         "pool_speedup": t_loop.best / t_pool.best})
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return rows
