"""Benchmark: batched factorization against a Python loop of single factorizations.

For each graph, ``B`` matrices with the same pattern (perturbed values) are refactored and
solved (one right-hand side each) by :func:`graphsolve.factorize_batch` with numba's threads,
and by a loop of ``Factorization.refactor`` + ``solve`` over the same matrices. Both reuse one
analysis and exclude compilation. Peers offer no batched interface; the loop is what a user
would write otherwise. A third column splits the loop over a pool of Python threads (one
``Factorization`` per thread; the compiled kernels release the GIL): what a user's own
thread pool (or a threaded Dask worker) gets.

With a Dask client (``python -m comparisons batch --workers N | --scheduler ADDRESS``),
:func:`run_batch_dask` times one large batch (default 10⁴ ladder systems) in this process and
across the cluster with :mod:`graphsolve.distributed` (values sent from here, and values
generated on the workers), and :func:`task_overhead` the cost of a tiny Dask task.
:func:`plot_batch` plots both. (This module was ``comparisons.batch``, which still imports,
with a ``DeprecationWarning``.)
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from tqdm import tqdm

import graphsolve as gs

from .runner import time_call
from .suite import make_graph

__all__ = ["run_batch", "BATCH_CASES", "DASK_CASE", "run_batch_dask", "task_overhead",
           "plot_batch"]

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


# ---------------------------------------------------------------------- on a Dask cluster
#: (family, size, block size, batch size) of :func:`run_batch_dask`: one system ~1 ms here.
DASK_CASE = ("ladder", 500, 3, 10_000)


def _best(fn, repeats: int) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls (after none untimed: each call is seconds long and
    its first-call costs are part of what a user waits for; the warm-up is done by the
    caller) and the last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def run_batch_dask(client, family: str = DASK_CASE[0], size: int = DASK_CASE[1],
                   block_size: int = DASK_CASE[2], B: int = DASK_CASE[3], repeats: int = 3,
                   chunk: int | None = None, seed: int = 0) -> list[dict]:
    """Refactor + solve of ``B`` same-graph systems (one right-hand side each), wall time,
    best of ``repeats``; one row per way:

    * ``in-process, 1 thread`` / ``in-process, all threads``: :func:`graphsolve.factorize_batch`
      (``workers=1`` / numba's every thread) on values held here;
    * ``dask, values from here``: :func:`graphsolve.distributed.solve_batch_dask` with the same
      NumPy values (scattered to the workers each call) and the solutions gathered here;
    * ``dask, values on workers``: the same systems' values generated on the workers (a
      ``dask.array`` of seeded random perturbations), solutions gathered here, against
      ``in-process, generate + 1 thread`` (the same generation here, then the batch).

    Columns: ``way``, ``family``, ``size``, ``block_size``, ``nodes``, ``N``, ``batch``,
    ``workers`` (Dask worker threads, 0 in process), ``seconds``, ``per_system_us``,
    ``speedup`` (over ``in-process, 1 thread``), ``max_diff`` (largest difference to the
    in-process solutions). Every way's first call runs untimed (compilation, imports).
    """
    import dask.array as da

    A = gs.random_block_matrix(make_graph(family, size), "unsymmetric", block_size=block_size,
                               seed=seed)
    an = gs.analyze(A)
    rng = np.random.default_rng(seed)
    vals = A.data[None, :] * (1 + 0.05 * rng.standard_normal((B, A.data.size)))
    b = rng.standard_normal((B, A.shape[0]))
    threads = sum(client.nthreads().values())
    chunk = chunk or max(1, -(-B // (4 * threads)))
    base = {"family": family, "size": size, "block_size": block_size, "nodes": A.n_nodes,
            "N": A.shape[0], "batch": B, "chunk": chunk}

    def local(workers):
        return lambda: gs.factorize_batch(A, vals, analysis=an, method="ldu",
                                          workers=workers).solve(b)

    def remote():
        return gs.distributed.solve_batch_dask(A, vals, b, client=client, chunk=chunk,
                                               method="ldu", analysis=an)

    def lazy_values():
        r = da.random.default_rng(seed + 1)
        dv = A.data * (1 + 0.05 * r.standard_normal((B, A.data.size), chunks=(chunk, -1)))
        db = r.standard_normal((B, A.shape[0]), chunks=(chunk, -1))
        return dv, db

    def generated():
        dv, db = lazy_values()
        return client.compute(gs.distributed.solve_batch_dask(A, dv, db, method="ldu",
                                                             analysis=an)).result()

    def generated_here():
        dv, db = lazy_values()
        v, bb = da.compute(dv, db, scheduler="sync")
        return gs.factorize_batch(A, v, analysis=an, method="ldu", workers=1).solve(bb)

    # (way, Dask worker threads, call, values): the first way of each values kind is the
    # reference of the speed-ups and solution differences
    ways = [("in-process, 1 thread", 0, local(1), "given"),
            ("in-process, all threads", 0, local(None), "given"),
            ("dask, values from here", threads, remote, "given"),
            ("in-process, generate + 1 thread", 0, generated_here, "generated"),
            ("dask, values on workers", threads, generated, "generated")]
    rows, ref, ref_t = [], {}, {}
    for way, workers, fn, kind in ways:
        fn()                                                     # untimed first call
        t, x = _best(fn, repeats)
        ref.setdefault(kind, x)
        ref_t.setdefault(kind, t)
        rows.append({"way": way, **base, "workers": workers, "seconds": t,
                     "per_system_us": t / B * 1e6, "speedup": ref_t[kind] / t,
                     "max_diff": float(np.max(np.abs(np.asarray(x) - ref[kind])))})
        del x
    return rows


def _noop(i):
    return i


def task_overhead(client, n: int = 2000, repeats: int = 3) -> list[dict]:
    """Cost of a tiny Dask task on ``client``: ``n`` no-op tasks submitted at once and gathered
    (``seconds`` / ``n`` = throughput cost per task), and one task submitted and awaited at a
    time (round-trip latency), best of ``repeats``."""
    from distributed import wait

    def many():
        futs = client.map(_noop, range(n), pure=False)
        wait(futs)
        client.gather(futs)

    def one_by_one():
        for i in range(50):
            client.submit(_noop, i, pure=False).result()

    many()
    one_by_one()
    t_many, _ = _best(many, repeats)
    t_one, _ = _best(one_by_one, repeats)
    workers = sum(client.nthreads().values())
    return [{"way": f"{n} no-op tasks at once", "workers": workers, "tasks": n,
             "seconds": t_many, "per_task_us": t_many / n * 1e6},
            {"way": "one no-op task at a time (round trip)", "workers": workers, "tasks": 50,
             "seconds": t_one, "per_task_us": t_one / 50 * 1e6}]


# ---------------------------------------------------------------------- plot
def plot_batch(rows: list[dict], path) -> None:
    """Time per matrix of every batch case (batched with 1 / all numba threads, the Python
    loop, the thread pool), and, when the rows hold them, the Dask ways of
    :func:`run_batch_dask` (time per system) beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [r for r in rows if r.get("batch_s") not in (None, "")]
    dask = [r for r in rows if r.get("per_system_us") not in (None, "")]
    fig, axes = plt.subplots(1, bool(cases) + bool(dask), figsize=(
        5.5 * (bool(cases) + bool(dask)) + 0.5, 4.4), squeeze=False)
    panels = iter(axes[0])
    if cases:
        ax = next(panels)
        labels = list(dict.fromkeys(f"{r['family']} {r['size']}\nB={r['batch']}"
                                    for r in cases))
        series: dict[str, dict[str, float]] = {}
        for r in cases:
            label = f"{r['family']} {r['size']}\nB={r['batch']}"
            series.setdefault(f"batch, {r['threads']} thread(s)", {})[label] = float(
                r["per_matrix_batch_us"])
            series.setdefault("loop", {})[label] = float(r["per_matrix_loop_us"])
            series.setdefault(f"{r['python_threads']} Python threads", {})[label] = (
                float(r["pool_s"]) / int(r["batch"]) * 1e6)
        width = 0.8 / max(len(series), 1)
        for i, (name, vals) in enumerate(series.items()):
            ax.bar([k + i * width for k in range(len(labels))],
                   [vals.get(lab, np.nan) for lab in labels], width, label=name)
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(labels))], labels, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("µs per matrix (refactor + solve)")
        ax.set_title("batched vs looped factorization")
        ax.legend(fontsize=7)
    if dask:
        ax = next(panels)
        ax.barh(range(len(dask)), [float(r["per_system_us"]) for r in dask],
                color=["C0" if str(r.get("workers")) == "0" else "C1" for r in dask])
        ax.set_yticks(range(len(dask)), [r["way"] for r in dask], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("µs per system (wall time / batch)")
        r0 = dask[0]
        ax.set_title(f"{r0['batch']} systems, {r0['family']} {r0['size']}: in process (blue) "
                     "vs Dask (orange)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
