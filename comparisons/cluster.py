"""Suite runs on Dask (``python -m comparisons run ... --workers N | --scheduler ADDRESS``).

One case of a suite (:class:`comparisons.runner.CaseSpec`: family, size, kind, numbering) is
one Dask task, :func:`comparisons.runner.run_case`, the same function the in-process run calls:
every solver of the case is timed in the same worker on the same matrix, so the ratios between
solvers are same-run ratios even when the workers sit on different hosts. Every case pins
BLAS (threadpoolctl) and numba to one thread; the workers of :func:`dask_client`'s local
cluster also start with ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS``
(Dask's defaults) and ``NUMBA_NUM_THREADS`` set to 1.

Failures use Dask's own mechanisms: a task that raises is resubmitted up to ``retries`` times
(``Client.submit(..., retries=)``), and a task whose worker dies is rescheduled on another
worker until it has killed more than ``distributed.scheduler.allowed-failures`` workers (set to
``retries`` for the local cluster; an existing scheduler keeps its own setting). A case that
still fails becomes a failed row (:func:`comparisons.runner.failed_case_rows`) and the run goes
on. Needs the ``dask`` extra (``pip install -e ".[dask]"``: ``dask``, ``distributed``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from .runner import CaseSpec, failed_case_rows, run_case

__all__ = ["WORKER_ENV", "dask_client", "describe_client", "map_cases"]

WORKER_ENV = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1"}
"""Environment of the local cluster's worker processes (one thread for every pool)."""


def _require_distributed():
    try:
        import distributed
    except ImportError as exc:              # pragma: no cover - depends on the environment
        raise ImportError("--workers / --scheduler need Dask: pip install -e '.[dask]' "
                          "(dask, distributed)") from exc
    return distributed


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None, retries: int = 2,
                dashboard_address: str | None = ":8787", quiet: bool = True):
    """A ``distributed.Client``: connected to ``scheduler`` (an address such as
    ``tcp://host:8786``) when given, else to a new ``LocalCluster(n_workers=workers,
    threads_per_worker=1, processes=True)`` whose workers run with :data:`WORKER_ENV` and
    whose scheduler gives up on a task after ``retries`` dead workers. Closed (and the local
    cluster shut down) on exit."""
    distributed = _require_distributed()
    import dask

    if scheduler:
        with distributed.Client(scheduler) as client:
            yield client
        return
    if not workers or workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    with dask.config.set({"distributed.scheduler.allowed-failures": int(retries)}):
        cluster = distributed.LocalCluster(
            n_workers=int(workers), threads_per_worker=1, processes=True, env=WORKER_ENV,
            dashboard_address=dashboard_address,
            silence_logs=logging.ERROR if quiet else logging.WARNING)
    with cluster, distributed.Client(cluster) as client:
        yield client


def _thread_settings() -> dict:
    """A worker's thread settings outside a case (each case also pins them itself)."""
    import os

    out = {"NUMBA_NUM_THREADS": os.environ.get("NUMBA_NUM_THREADS", ""),
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "")}
    try:
        from threadpoolctl import threadpool_info

        out["blas_threads"] = sorted({d.get("num_threads") for d in threadpool_info()})
    except ImportError:
        pass
    return out


def describe_client(client) -> dict:
    """Scheduler address, dashboard link and the workers (address: host, threads, thread
    settings) of ``client``, for the printed banner and the JSON metadata."""
    info = client.scheduler_info()
    try:
        threads = client.run(_thread_settings)
    except Exception:                       # a worker that cannot answer is no reason to stop
        threads = {}
    link = client.dashboard_link
    try:
        import bokeh  # noqa: F401  (the dashboard needs it)
    except ImportError:
        link = f"{link} (not served: install bokeh>=3.1 for the dashboard)"
    return {"scheduler": info.get("address", ""), "dashboard": link,
            "workers": {addr: {"host": w.get("host", ""), "nthreads": w.get("nthreads"),
                               **threads.get(addr, {})}
                        for addr, w in info.get("workers", {}).items()}}


def map_cases(client, specs: list[CaseSpec], retries: int = 2
              ) -> Iterator[tuple[int, list[dict]]]:
    """Submit one :func:`~comparisons.runner.run_case` task per case and yield ``(index in
    specs, rows)`` as the tasks complete (``distributed.as_completed``); a task that failed
    for good yields its failed row. Leaving early (an exception, Ctrl-C) cancels the tasks
    still pending."""
    distributed = _require_distributed()

    futures = {}
    for i, spec in enumerate(specs):
        fut = client.submit(run_case, spec, key=f"{spec} [{spec.run_id[:8]}-{i}]",
                            pure=False, retries=retries)
        futures[fut] = i
    try:
        for fut in distributed.as_completed(futures):
            i = futures.pop(fut)
            try:
                rows = fut.result()
            except Exception as exc:          # raised in the task, or KilledWorker
                rows = failed_case_rows(specs[i], exc)
            fut.release()
            yield i, rows
    finally:
        if futures:
            client.cancel(list(futures))
