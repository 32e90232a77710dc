"""Batched factorizations on a Dask cluster: many same-graph systems, chunked over workers.

:func:`graphsolve.factorize_batch` factors a batch of matrices sharing one pattern in one
process. This module splits such a batch along its batch axis into chunks and runs
:func:`~graphsolve.factorize_batch` on each chunk as a Dask task, on a ``distributed`` cluster
(a ``LocalCluster`` on one machine, or any scheduler address):

* :func:`solve_batch_dask` factors and solves in one pass per chunk and returns the solutions
  (NumPy input), or a lazy ``dask.array`` when ``values`` is a ``dask.array`` (its chunks along
  the batch axis are the tasks; the values can be generated on the workers);
* :func:`factorize_batch_dask` keeps the factors on the workers
  (:class:`DaskBatchFactorization`, one :class:`~graphsolve.BatchFactorization` per chunk) for
  several solves, log-determinants or refactors.

The template matrix, the :class:`~graphsolve.Analysis` (computed once, by the caller) and the
method go to every worker once (``client.scatter(..., broadcast=True)``, or one key of the
task graph for a ``dask.array``), and the chunks of values and right-hand sides are scattered
to the workers directly, never through the scheduler. ``method="auto"`` is decided on the whole
batch before chunking, so every chunk uses the same method, analysis and backend as the
in-process call: the results equal those of ``factorize_batch(A, values).solve(b)`` (each item
is factored by itself; tested to 1e-14, bitwise here). Errors keep their type and name the item
by its index in the whole batch.

Each task factors its chunk with ``threads`` numba threads (default 1: one task per worker
thread, as on a cluster whose workers have one thread per core). Needs the ``dask`` extra
(``pip install graphsolve[dask]``: ``dask``, ``distributed``); ``import graphsolve`` does not
import Dask.

Examples
--------
>>> import numpy as np, graphsolve as gs
>>> from distributed import Client                                  # doctest: +SKIP
>>> client = Client(n_workers=2, threads_per_worker=1)              # doctest: +SKIP
>>> A = gs.random_block_matrix(gs.generators.ladder(50), "unsymmetric", block_size=3)
>>> vals = A.data * (1 + 0.1 * np.random.default_rng(0).random((1000, A.data.size)))
>>> b = np.ones((1000, A.shape[0]))
>>> x = gs.distributed.solve_batch_dask(A, vals, b, client=client)  # doctest: +SKIP
>>> F = gs.distributed.factorize_batch_dask(A, vals, client=client)  # doctest: +SKIP
>>> x2 = F.solve(b); sign, logdet = F.slogdet()                     # doctest: +SKIP
>>> F3 = F[3]                       # item 3 as a Factorization, copied here  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import math
import re
import uuid
from collections import defaultdict
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from . import factor_queries as queries
from .analysis import Analysis, analyze
from .batch import (
    OK,
    BatchFactorization,
    batch_method,
    check_batch_values,
    check_errors,
    check_item_index,
    check_thread_count,
    factorize_batch,
)
from .errors import GraphSolveError, ShapeError
from .factor import Factorization, check_pivot_rtol, resolve_backend
from .factor_queries import SYSTEMS
from .kernels.reference import PIVOT_RTOL
from .matrix import BlockMatrix, _as_float64, _check_dtype

if TYPE_CHECKING:
    import dask.array
    from distributed import Client, Future

__all__ = ["DaskBatchFactorization", "factorize_batch_dask", "solve_batch_dask",
           "chunk_bounds"]

#: How to install what this module needs.
INSTALL = "pip install graphsolve[dask]"


def _require_distributed() -> ModuleType:
    try:
        import distributed
    except ImportError as exc:                      # pragma: no cover - the environment's
        raise ImportError(f"graphsolve.distributed needs Dask: {INSTALL} (dask, "
                          "distributed)") from exc
    return distributed


def _resolve_client(client: Client | None) -> Client:
    """``client``, or the current default ``distributed`` client."""
    distributed = _require_distributed()
    if client is not None:
        return client
    try:
        return distributed.get_client()
    except ValueError as exc:
        raise GraphSolveError("no Dask client: pass client= (e.g. distributed.Client() for a "
                              "local cluster, or Client('tcp://host:8786'))") from exc


def chunk_bounds(batch_size: int, chunk: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` of consecutive chunks of ``chunk`` items (the last one may be
    shorter) covering ``range(batch_size)``.

    >>> chunk_bounds(10, 4)
    [(0, 4), (4, 8), (8, 10)]
    """
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise GraphSolveError(f"chunk must be a positive integer, got {chunk!r}")
    return [(s, min(s + int(chunk), batch_size)) for s in range(0, batch_size, int(chunk))]


def _default_chunk(client: Client, batch_size: int) -> int:
    """Four chunks per worker thread (load balance without many small tasks)."""
    threads = max(1, sum(client.nthreads().values()))
    return max(1, math.ceil(batch_size / (4 * threads)))


class _Plan:
    """What every chunk of a batch needs: shipped once per worker, shared by its tasks."""

    def __init__(self, A: BlockMatrix, analysis: Analysis, method: str, backend: str,
                 threads: int | None, pivot_rtol: float = PIVOT_RTOL, errors: str = "raise"):
        self.A, self.analysis, self.method = A, analysis, method
        self.backend, self.threads = backend, threads
        self.pivot_rtol, self.errors = pivot_rtol, errors

    def factor(self, values: np.ndarray, start: int = 0, errors: str | None = None
               ) -> BatchFactorization:
        try:
            return factorize_batch(self.A, values, method=self.method, analysis=self.analysis,
                                   backend=self.backend, workers=self.threads,
                                   pivot_rtol=self.pivot_rtol,
                                   errors=self.errors if errors is None else errors)
        except GraphSolveError as exc:
            raise _shifted(exc, start) from None


def _shifted(exc: GraphSolveError, start: int) -> GraphSolveError:
    """``exc`` with the batch item it names counted from the start of the whole batch."""
    if not start:
        return exc
    msg = re.sub(r"batch item (\d+)", lambda m: f"batch item {int(m.group(1)) + start}",
                 str(exc))
    new = copy.copy(exc)
    new.args = (msg, *exc.args[1:])
    return new


def _prepare(A: BlockMatrix, values: np.ndarray | dask.array.Array, method: str,
             ordering: str | Sequence[int], analysis: Analysis | None, backend: str,
             errors: str = "raise") -> tuple[str, Analysis, str]:
    """The template checked, ``method`` decided on the whole batch, the analysis made once."""
    if not isinstance(A, BlockMatrix):
        raise GraphSolveError(f"expected a BlockMatrix template, got {type(A).__name__}")
    check_batch_values(A, values)
    backend = resolve_backend(backend)
    with np.errstate(invalid="ignore"):
        method = batch_method(A, values, method, errors)
    if analysis is None:
        analysis = analyze(A, ordering)
    return method, analysis, backend


def _check_rhs(b: np.ndarray | dask.array.Array, B: int, N: int) -> None:
    if b.ndim not in (2, 3) or tuple(b.shape[:2]) != (B, N):
        raise ShapeError(f"b has shape {b.shape}; expected ({B}, {N}) or ({B}, {N}, k)")


# ---------------------------------------------------------------------- task functions
def _factor_task(plan: _Plan, values: np.ndarray, start: int, errors: str | None = None
                 ) -> BatchFactorization:
    return plan.factor(values, start, errors)


def _status_task(F: BatchFactorization) -> np.ndarray:
    return F._status


def _solve_task(F: BatchFactorization, b: np.ndarray, system: str = "A", trans: str = "N"
                ) -> np.ndarray:
    return F.solve(b, system, trans)


def _factor_solve_task(plan: _Plan, values: np.ndarray, b: np.ndarray, start: int
                       ) -> np.ndarray:
    return plan.factor(values, start).solve(b)


def _slogdet_task(F: BatchFactorization) -> tuple[np.ndarray, np.ndarray]:
    return F.slogdet()


def _inertia_task(F: BatchFactorization, tol: float | None) -> list[queries.Inertia | None]:
    return F.inertia(tol)


def _item_task(F: BatchFactorization, k: int) -> Factorization:
    """Item ``k`` of a chunk as a standalone copy (its own buffers, not a view of the
    chunk's), whichever scheduler runs the task."""
    return F.item(k)._detached()  # type: ignore[attr-defined]


def _block_task(values: np.ndarray, b: np.ndarray, items: np.ndarray, plan: _Plan
                ) -> np.ndarray:
    """One block of the ``dask.array`` path (``items``: the block's item indices)."""
    return plan.factor(values, int(items[0])).solve(b)


def _locations(client: Client, futures: list[Future]) -> list[str] | None:
    """The worker holding each future's data (None when the scheduler does not say)."""
    try:
        who = client.who_has(futures)
        return [sorted(who[f.key])[0] for f in futures]
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def _scatter_chunks(client: Client, arrays: np.ndarray, bounds: list[tuple[int, int]],
                    workers: list[str] | None = None) -> list[Future]:
    """Futures of ``arrays[start:stop]`` for every chunk, sent to the workers directly (spread
    over them, or chunk ``i`` to ``workers[i]``)."""
    if workers is None:
        return client.scatter([arrays[s:e] for s, e in bounds], hash=False)
    by_worker = defaultdict(list)
    for i, w in enumerate(workers):
        by_worker[w].append(i)
    out: list[Any] = [None] * len(bounds)
    for w, idx in by_worker.items():
        futs = client.scatter([arrays[slice(*bounds[i])] for i in idx], workers=[w],
                              hash=False)
        for i, f in zip(idx, futs, strict=True):
            out[i] = f
    return out


# ---------------------------------------------------------------------- the API
class DaskBatchFactorization:
    """Factors of a batch of same-pattern matrices held on the workers of a Dask cluster.

    Made by :func:`factorize_batch_dask`: one :class:`~graphsolve.BatchFactorization` per
    chunk of the batch axis, each in the memory of the worker that factored it (a Dask
    future). Item ``k`` satisfies the identity of :class:`~graphsolve.Factorization` for
    ``A.with_data(values[k])``, as with :func:`graphsolve.factorize_batch`.

    The queries of :class:`~graphsolve.BatchFactorization` run on the workers, chunk by
    chunk: :meth:`solve` (every ``system`` and ``trans``), :meth:`slogdet`, :meth:`inertia`;
    :attr:`perm` and :attr:`P` are the analysis's. ``F[k]`` (:meth:`item`) copies item ``k``
    here as a :class:`~graphsolve.Factorization` (read-only, e.g. for its ``L``, ``D``,
    ``U``); unlike an item of an in-process batch it is a copy, so it keeps the values of
    the factorization it was taken from after a :meth:`refactor`. Failed items of a batch
    factored with ``errors="mark"`` (:attr:`failed`, :attr:`failed_nodes`) answer as in
    :class:`~graphsolve.BatchFactorization`: NaN rows and log-determinants, ``None`` inertia,
    and ``F[k]`` raises the item's error (naming its index in the whole batch) on any query.

    Attributes
    ----------
    client : distributed.Client
    analysis : Analysis
    method : {"ldu", "ldlt"}
    backend : str
    batch_size : int
    pivot_rtol : float
        As :attr:`graphsolve.BatchFactorization.pivot_rtol` (every chunk's).
    errors : {"raise", "mark"}
        The default of :meth:`refactor` (the ``errors`` of :func:`factorize_batch_dask`).
    bounds : list of (start, stop)
        The chunks of the batch axis, one task each.
    futures : list of distributed.Future
        The chunks' :class:`~graphsolve.BatchFactorization` objects (``gather`` copies them
        here).
    """

    def __init__(self, client: Client, plan: _Plan, plan_future: Future,
                 bounds: Sequence[tuple[int, int]], futures: Sequence[Future]):
        self.client = client
        self._plan = plan
        self._plan_future: Future | None = plan_future
        self.analysis, self.method, self.backend = plan.analysis, plan.method, plan.backend
        self.pivot_rtol, self.errors = plan.pivot_rtol, plan.errors
        self.bounds = list(bounds)
        self.futures = list(futures)
        self.batch_size = self.bounds[-1][1]
        self._failed = False            # the last refactor raised: no factors until one works
        self._status = np.full(self.batch_size, OK, dtype=np.int64)
        if plan.errors == "mark":
            self._gather_status()

    def _gather_status(self) -> None:
        """Every item's status (:attr:`failed`), gathered from the chunks (a small array each)."""
        parts = self.client.gather(self.client.map(_status_task, self.futures, pure=False))
        self._status = np.concatenate(parts)

    @property
    def failed(self) -> np.ndarray:
        """Indices of the failed items in the whole batch (see
        :attr:`graphsolve.BatchFactorization.failed`); raises after a refactor that raised."""
        self._require_factors()
        return np.flatnonzero(self._status != OK)

    @property
    def failed_nodes(self) -> np.ndarray:
        """Per item, the node whose pivot block was singular, or -1 (see
        :attr:`graphsolve.BatchFactorization.failed_nodes`)."""
        self._require_factors()
        return np.where(self._status >= 0, self._status, OK)

    def solve(self, b: np.ndarray, system: str = "A", trans: str = "N") -> np.ndarray:
        """Solve every system: ``b`` of shape ``(B, N)`` or ``(B, N, k)``; returns ``x`` like
        ``b`` with ``x[i]`` the solution of item ``i`` (each chunk of ``b`` is sent to the
        worker holding that chunk's factors). ``system`` and ``trans`` as in
        :meth:`graphsolve.BatchFactorization.solve`, which each chunk runs."""
        if system not in SYSTEMS:
            raise ValueError(f"system must be one of {SYSTEMS}, got {system!r}")
        if trans not in ("N", "T"):
            raise ValueError(f"trans must be 'N' or 'T', got {trans!r}")
        self._require_factors()
        if sp.issparse(b):
            raise ShapeError(f"a batch right-hand side is a dense ({self.batch_size}, "
                             f"{self.analysis.N}) or ({self.batch_size}, {self.analysis.N}, "
                             f"k) array, got a scipy.sparse {type(b).__name__}")
        b = np.asarray(b)
        _check_dtype(b.dtype, "b")
        _check_rhs(b, self.batch_size, self.analysis.N)
        bf = _scatter_chunks(self.client, b, self.bounds, _locations(self.client, self.futures))
        n = len(bf)
        xs = self.client.gather(self.client.map(_solve_task, self.futures, bf, [system] * n,
                                                [trans] * n, pure=False))
        return np.concatenate(xs, axis=0)

    def slogdet(self) -> tuple[np.ndarray, np.ndarray]:
        """Sign and log ``|det|`` of every item, arrays of shape ``(B,)``."""
        self._require_factors()
        parts = self.client.gather(self.client.map(_slogdet_task, self.futures, pure=False))
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))

    def inertia(self, tol: float | None = None) -> list[queries.Inertia | None]:
        """The :class:`~graphsolve.factor_queries.Inertia` of every item (``None`` for a failed
        one; see :meth:`graphsolve.BatchFactorization.inertia`); needs ``method="ldlt"``."""
        self._require_factors()
        if self.method != "ldlt":
            raise GraphSolveError("inertia needs the factors of symmetric matrices: factor the "
                                  "batch with method='ldlt'")
        n = len(self.futures)
        parts = self.client.gather(self.client.map(_inertia_task, self.futures, [tol] * n,
                                                   pure=False))
        return [inertia for part in parts for inertia in part]

    def item(self, k: int) -> Factorization:
        """Item ``k`` (``-B <= k < B``) copied from the worker holding it, as a read-only
        :class:`~graphsolve.Factorization` (see :meth:`graphsolve.BatchFactorization.item`;
        this one is a standalone copy). Also ``F[k]``.

        Raises
        ------
        BatchIndexError
            ``k`` is outside the batch (also an :class:`IndexError`).
        """
        k = check_item_index(k, self.batch_size)
        self._require_factors()
        c = next(i for i, (start, stop) in enumerate(self.bounds) if start <= k < stop)
        Fk = self.client.submit(_item_task, self.futures[c], k - self.bounds[c][0],
                                pure=False).result()
        Fk._item = k  # type: ignore[attr-defined]  # named by its index in the whole batch
        return Fk

    def __getitem__(self, k: int) -> Factorization:
        return self.item(k)

    def __len__(self) -> int:
        return self.batch_size

    @property
    def perm(self) -> np.ndarray:
        """The scalar permutation ``p`` shared by every item (see
        :attr:`graphsolve.Factorization.perm`)."""
        return queries.permutation(self.analysis)

    @property
    def P(self) -> sp.csr_array:
        """:attr:`perm` as a sparse matrix (see :attr:`graphsolve.Factorization.P`)."""
        return queries.permutation_matrix(self.analysis)

    def refactor(self, values: np.ndarray, errors: str | None = None
                 ) -> DaskBatchFactorization:
        """Factor new values of the same batch size, chunk by chunk as before (new tasks; the
        old factors are released), with :attr:`pivot_rtol`. ``errors`` (default: the batch's
        :attr:`errors`) as in :meth:`graphsolve.BatchFactorization.refactor`: with
        ``"raise"`` raises as it does, naming the item by its index in the whole batch; with
        ``"mark"`` failed items are marked (:attr:`failed`). Values refused before any work
        (shape, dtype) leave the factors as they were; a failed factorization (a singular or
        non-finite item, ``errors="raise"``) releases them, and every query raises until a
        refactor succeeds, as for the in-process batch."""
        self._require_plan()
        errors = check_errors(self.errors if errors is None else errors)
        values = _as_float64(values, "values")
        if values.ndim != 2 or values.shape != (self.batch_size, self._plan.A.data.size):
            raise ShapeError(f"values must have shape ({self.batch_size}, "
                             f"{self._plan.A.data.size}), got {values.shape}")
        vf = _scatter_chunks(self.client, values, self.bounds)
        futures = self.client.map(_factor_task, [self._plan_future] * len(vf), vf,
                                  [s for s, _ in self.bounds], [errors] * len(vf), pure=False)
        _require_distributed().wait(futures)
        bad = next((f for f in futures if f.status == "error"), None)
        self._release_factors()
        if bad is not None:
            exc = bad.exception()
            self.client.cancel(futures)
            self._failed = True
            raise exc
        self.futures = futures
        self._failed = False
        if errors == "mark":
            self._gather_status()
        else:
            self._status = np.full(self.batch_size, OK, dtype=np.int64)
        return self

    def gather(self) -> list[BatchFactorization]:
        """The chunks' factorizations, copied to this process (in order of ``bounds``)."""
        self._require_factors()
        return list(self.client.gather(self.futures))

    def release(self) -> None:
        """Free the factors (and the template and analysis) on the workers; the object is
        unusable afterwards."""
        self._release_factors()
        if self._plan_future is not None:
            self._plan_future.release()
            self._plan_future = None

    def _release_factors(self) -> None:
        for f in self.futures:
            f.release()
        self.futures = []

    def _require_plan(self) -> None:
        if self._plan_future is None:
            raise GraphSolveError("the factors were released")

    def _require_factors(self) -> None:
        self._require_plan()
        if self._failed:
            raise GraphSolveError("the batch factorization is not valid: its last refactor "
                                  "failed")
        if not self.futures:
            raise GraphSolveError("the factors were released")

    def __enter__(self) -> DaskBatchFactorization:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return (f"DaskBatchFactorization(batch_size={self.batch_size}, method={self.method!r}, "
                f"chunks={len(self.bounds)}, N={self.analysis.N})")


def factorize_batch_dask(A: BlockMatrix, values: np.ndarray, *, client: Client | None = None,
                         chunk: int | None = None, method: str = "auto",
                         ordering: str | Sequence[int] = "auto",
                         analysis: Analysis | None = None, backend: str = "auto",
                         threads: int | None = 1, pivot_rtol: float = PIVOT_RTOL,
                         errors: str = "raise") -> DaskBatchFactorization:
    """Factor a batch of matrices sharing the pattern of ``A`` on a Dask cluster, the factors
    staying on the workers.

    Parameters
    ----------
    A : BlockMatrix
        The template (its graph and layout; its values are not factored).
    values : ndarray of shape (B, len(A.data))
        The flat data of every matrix on ``A``'s layout.
    client : distributed.Client, optional
        Default: the current client (``distributed.get_client()``).
    chunk : int, optional
        Items per task (default: the batch split into four chunks per worker thread).
    method, ordering, analysis, backend
        As :func:`graphsolve.factorize_batch`; ``"auto"`` is decided on the whole batch, and
        the analysis is made once, here, and sent to every worker once.
    threads : int or None
        numba threads per task (``workers`` of :func:`~graphsolve.factorize_batch`); default
        1, None: the worker's numba default (every core of its host).
    pivot_rtol : float
        As :func:`graphsolve.factorize_batch` (every chunk's items).
    errors : {"raise", "mark"}
        As :func:`graphsolve.factorize_batch`: ``"mark"`` marks failed items
        (:attr:`DaskBatchFactorization.failed`, numbered in the whole batch) instead of
        raising; kept as the default of :meth:`DaskBatchFactorization.refactor`.

    Returns
    -------
    DaskBatchFactorization

    Raises
    ------
    ImportError
        Without ``dask`` / ``distributed`` (``pip install graphsolve[dask]``).
    GraphSolveError
        No client; and the errors of :func:`graphsolve.factorize_batch`, naming the item by
        its index in the whole batch.
    """
    client = _resolve_client(client)
    values = _as_float64(values, "values")
    pivot_rtol, errors = check_pivot_rtol(pivot_rtol), check_errors(errors)
    method, analysis, backend = _prepare(A, values, method, ordering, analysis, backend,
                                         errors)
    plan = _Plan(A, analysis, method, backend, check_thread_count(threads, "threads"),
                 pivot_rtol, errors)
    if chunk is None:
        chunk = _default_chunk(client, values.shape[0])
    bounds = chunk_bounds(values.shape[0], chunk)
    plan_future = client.scatter(plan, broadcast=True, hash=False)
    vf = _scatter_chunks(client, values, bounds)
    futures = client.map(_factor_task, [plan_future] * len(vf), vf, [s for s, _ in bounds],
                         pure=False)
    _require_distributed().wait(futures)
    bad = next((f for f in futures if f.status == "error"), None)
    if bad is not None:
        exc = bad.exception()
        client.cancel(futures)
        plan_future.release()
        raise exc
    return DaskBatchFactorization(client, plan, plan_future, bounds, futures)


def solve_batch_dask(A: BlockMatrix, values: np.ndarray | dask.array.Array,
                     b: np.ndarray | dask.array.Array, *, client: Client | None = None,
                     chunk: int | None = None, method: str = "auto",
                     ordering: str | Sequence[int] = "auto", analysis: Analysis | None = None,
                     backend: str = "auto", threads: int | None = 1,
                     pivot_rtol: float = PIVOT_RTOL, errors: str = "raise"
                     ) -> np.ndarray | dask.array.Array:
    """Factor and solve a batch of same-pattern systems on a Dask cluster, one pass per chunk:
    ``x[k]`` solves ``A.with_data(values[k]) x = b[k]``.

    Parameters
    ----------
    A : BlockMatrix
        The template (its graph and layout).
    values : ndarray or dask.array of shape (B, len(A.data))
    b : ndarray or dask.array of shape (B, N) or (B, N, k)
    client : distributed.Client, optional
        For NumPy input (default: the current client). A ``dask.array`` input returns a lazy
        ``dask.array`` instead, computed by whichever scheduler runs ``.compute()`` (the
        client's, once a ``distributed.Client`` exists); ``client`` is then not used.
    chunk : int, optional
        Items per task for NumPy input (default: four chunks per worker thread); a
        ``dask.array``'s own chunks along the batch axis are its tasks.
    method, ordering, analysis, backend, threads, pivot_rtol
        As :func:`factorize_batch_dask`. With a ``dask.array`` and ``method="auto"`` the
        symmetry check is one extra pass over ``values``: pass ``method`` to avoid it.
    errors : {"raise", "mark"}
        As :func:`graphsolve.factorize_batch`; with ``"mark"`` the rows of the failed items
        (singular, or with NaN/inf values) are NaN.

    Returns
    -------
    ndarray (NumPy input) or dask.array (``dask.array`` input), shaped like ``b``.

    Raises
    ------
    As :func:`factorize_batch_dask`.
    """
    threads = check_thread_count(threads, "threads")
    pivot_rtol, errors = check_pivot_rtol(pivot_rtol), check_errors(errors)
    if hasattr(values, "__dask_graph__") or hasattr(b, "__dask_graph__"):
        return _solve_dask_array(A, values, b, method, ordering, analysis, backend, threads,
                                 pivot_rtol, errors)
    client = _resolve_client(client)
    values = _as_float64(values, "values")
    b = np.asarray(b)
    _check_dtype(b.dtype, "b")
    method, analysis, backend = _prepare(A, values, method, ordering, analysis, backend,
                                         errors)
    _check_rhs(b, values.shape[0], analysis.N)
    plan = _Plan(A, analysis, method, backend, threads, pivot_rtol, errors)
    if chunk is None:
        chunk = _default_chunk(client, values.shape[0])
    bounds = chunk_bounds(values.shape[0], chunk)
    plan_future = client.scatter(plan, broadcast=True, hash=False)
    vf = _scatter_chunks(client, values, bounds)
    bf = _scatter_chunks(client, b, bounds, _locations(client, vf))
    futures = client.map(_factor_solve_task, [plan_future] * len(vf), vf, bf,
                         [s for s, _ in bounds], pure=False)
    try:
        return np.concatenate(client.gather(futures), axis=0)
    finally:
        client.cancel(futures)
        plan_future.release()


def _solve_dask_array(A: BlockMatrix, values: Any, b: Any, method: str,
                      ordering: str | Sequence[int], analysis: Analysis | None, backend: str,
                      threads: int | None, pivot_rtol: float, errors: str
                      ) -> dask.array.Array:
    import dask
    import dask.array as da

    values = da.asarray(values)
    b = da.asarray(b)
    _check_dtype(values.dtype, "values")
    _check_dtype(b.dtype, "b")
    values = values.astype(float)
    method, analysis, backend = _prepare(A, values, method, ordering, analysis, backend,
                                         errors)
    _check_rhs(b, values.shape[0], analysis.N)
    values = values.rechunk({1: -1})
    b = b.rechunk({0: values.chunks[0], **{ax: -1 for ax in range(1, b.ndim)}})
    items = da.arange(values.shape[0], chunks=values.chunks[0])    # a block's first: its start
    plan = dask.delayed(_Plan(A, analysis, method, backend, threads, pivot_rtol, errors),
                        pure=False,
                        name=f"graphsolve-plan-{uuid.uuid4().hex}")
    index = "ijk"[:b.ndim]
    return da.blockwise(_block_task, index, values, "iz", b, index, items, "i", plan, None,
                        dtype=float, concatenate=True, meta=np.empty((0,) * b.ndim))
