"""Timing discipline for every benchmark in this project.

Warm-up calls are never timed (they include numba compilation and first-touch allocation), the
garbage collector is off while timing, and each measurement reports the best and the median of
``repeats`` runs in one process; the solvers of one case are timed in interleaved rounds
(:func:`bench_case`). Unit tests never time anything.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .blas_threads import limit_blas_threads

__all__ = ["Timing", "time_call", "bench_case", "bench_solver", "run", "machine_metadata",
           "write_results", "write_metadata", "gemm_reference_gflops", "simd_gemm_gflops",
           "CASE_KEY", "CASE_FAILED", "CaseSpec", "CaseCsv", "case_key", "case_specs", "run_case",
           "failed_case_rows", "cpu_model", "worker_info"]


@dataclass(frozen=True)
class Timing:
    """Seconds per call: ``best`` (minimum) and ``median`` over ``repeats`` timed runs."""

    best: float
    median: float
    repeats: int


def time_call(fn: Callable[[], object], repeats: int = 5, warmup: int = 1,
              min_time: float = 0.0, budget: float | None = None) -> Timing:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls.

    With ``min_time`` > 0 each timed run loops ``fn`` until at least that many seconds have
    passed and reports the time per call (for calls much shorter than the clock resolution).
    With ``budget``, repetitions stop once that many seconds have been spent timing (at least
    one run is always timed; ``repeats`` then reports how many were).
    """
    for _ in range(warmup):
        fn()
    samples = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            samples.append(_sample(fn, min_time))
            if budget is not None and sum(samples) * 1.0 >= budget:
                break
    finally:
        if enabled:
            gc.enable()
    return _timing(samples)


def _sample(fn: Callable[[], object], min_time: float = 0.0) -> float:
    """Seconds per call of one timed run (``fn`` looped until ``min_time`` has passed)."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / calls


def _timing(samples: list[float]) -> Timing:
    return Timing(float(np.min(samples)), float(np.median(samples)), len(samples))


def loglog_slope(sizes, times, min_size: float = 0) -> float:
    """Slope of log(time) against log(size) over ``size >= min_size`` (1 = linear complexity;
    NaN with fewer than two points)."""
    pts = [(n, t) for n, t in zip(sizes, times, strict=True) if n >= min_size]
    if len(pts) < 2:
        return float("nan")
    n, t = np.array(pts, dtype=float).T
    return float(np.polyfit(np.log(n), np.log(t), 1)[0])


# ---------------------------------------------------------------------- GEMM reference rate
def _gemm_kernel():
    from numba import njit

    @njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "nsz", "arcp"})
    def gemm_loop(A, B, C, reps):
        """C[b] += A[b] @ B[b] for every 6×6 block b, ``reps`` times."""
        for _ in range(reps):
            for b in range(A.shape[0]):
                for i in range(6):
                    for k in range(6):
                        a = A[b, i, k]
                        for j in range(6):
                            C[b, i, j] += a * B[b, k, j]

    return gemm_loop


def gemm_reference_gflops(nblocks: int = 2000, reps: int = 20, repeats: int = 5) -> float:
    """GFLOP/s of a numba loop of 6×6 block products (``C += A B``) on this machine: the
    ceiling the block kernels are measured against (achieved = analysis flops / time)."""
    return _loop_gflops(_gemm_kernel(), (nblocks, 6, 6), reps, repeats)


def _loop_gflops(loop, shape, reps: int, repeats: int) -> float:
    """GFLOP/s of ``loop(A, B, C, reps)`` over ``shape[0]`` 6×6 block products (random ``A``,
    ``B`` of ``shape``), best of ``repeats``."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, *shape))
    C = np.zeros(shape)
    t = time_call(lambda: loop(A, B, C, reps), repeats, 1)
    return 2 * 6**3 * (A.size // 36) * reps / t.best / 1e9


def _simd_gemm_kernel():
    from numba import njit

    from graphsolve.lowlevel import mm6_sub

    @njit(cache=True, error_model="numpy")
    def simd_loop(A, B, C, reps):
        """C[b] -= A[b] @ B[b] for every 6×6 block b (flat), ``reps`` times."""
        for _ in range(reps):
            for b in range(A.size // 36):
                mm6_sub(C, 36 * b, A, 36 * b, B, 36 * b)

    return simd_loop


def simd_gemm_gflops(nblocks: int = 2000, reps: int = 20, repeats: int = 5) -> float:
    """GFLOP/s of the vectorized 6×6 block product of the kernels
    (:func:`graphsolve.lowlevel.mm6_sub`) in the same loop as
    :func:`gemm_reference_gflops`: the ceiling once the block kernels use vector registers."""
    return _loop_gflops(_simd_gemm_kernel(), (nblocks * 36,), reps, repeats)


# ---------------------------------------------------------------------- suite runner
def machine_metadata() -> dict:
    """Versions, CPU, and BLAS / numba thread settings, for the JSON next to every CSV."""
    import os
    import platform

    from .solvers import package_version

    cpu = cpu_model()
    meta = {
        "python": platform.python_version(), "platform": platform.platform(), "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "packages": {p: package_version(p) for p in (
            "graphsolve", "numpy", "scipy", "numba", "networkx", "scikit-sparse", "qdldl",
            "threadpoolctl")},
    }
    try:
        from threadpoolctl import threadpool_info

        meta["threadpools"] = [{k: d.get(k) for k in ("user_api", "internal_api", "version",
                                                       "num_threads", "filepath")}
                               for d in threadpool_info()]
    except ImportError:
        meta["threadpools"] = "threadpoolctl not installed"
    return meta


def _residual(S, b, x) -> float:
    """Normwise backward error ||S x - b|| / (||S|| ||x|| + ||b||) in the infinity norm."""
    r = S @ x - b
    nrm = abs(S).sum(axis=1).max()
    return float(np.abs(r).max() / (nrm * np.abs(x).max() + np.abs(b).max()))


def bench_solver(solver, case, repeats: int, budget: float = 2.0) -> dict:
    """Time one solver on one case (:func:`bench_case` with one solver)."""
    return bench_case([solver], case, repeats, budget)[0]


def bench_case(solvers, case, repeats: int, budget: float = 2.0, min_case_s: float = 0.0
               ) -> list[dict]:
    """Time each solver on one case: analyze, factor, refactor and solve separately (warm-up
    excluded), then the residual and the solver's stats; one row per solver, in order.
    Failures become a row with ``status="failed"`` and the exception text; unsupported kinds
    ``status="skipped"``.

    Refactor and solve, the times the ratios compare, are measured in interleaved rounds:
    each round times one refactor and one solve of every solver in turn, each timed refactor
    right after an untimed one of the same solver (warm caches, the regime of a refactor loop;
    cold, after the other solvers ran, CHOLMOD and graphsolve were up to 1.5-1.9× slower on
    2000-node trees). A burst of noise on a shared machine (seconds long here, ±50 %) then
    hits every solver's samples alike instead of all repetitions of one solver, and the best
    of the rounds compares the solvers under the same conditions. ``budget`` (seconds) caps
    each solver's timed rounds.

    With ``min_case_s`` > 0 the rounds go on past ``repeats`` until that many seconds have
    passed (within ``budget``): this machine runs in phases from half a second to seconds
    long, in most of which everything is about 1.3× slower (path 100 refactor, best of 20
    every 5 ms for 20 s: 15 µs in 14 % of the samples, 20-22 µs in the rest), so rounds
    spread over a longer time catch a fast phase for each case, and times of different cases
    (a time-vs-size slope) compare. graphsolve's fitted slope from 100 to 2000 nodes, path /
    random tree, over runs: 0.83-0.94 / 0.93-1.12 with 0.5 s per case, 0.929-0.931 /
    0.970-0.991 with 2 s (the ``full`` suite's setting)."""
    rows: list[dict] = []
    active = []
    for solver in solvers:
        row = {"solver": solver.name, "version": solver.version()}
        rows.append(row)
        reason = solver.unsupported(case)
        if reason:
            row.update(status="skipped", reason=reason)
            continue
        try:
            S, b = solver.system(case)
            t_an = time_call(partial(solver.analyze, case), repeats, 1, budget=budget)
            t_f = time_call(partial(solver.factor, case), repeats, 1, budget=budget)
            solver.refactor(case)                       # warm-up, untimed
            solver.solve(b)
        except Exception as exc:  # a peer failing is a result, not a crash
            row.update(_failed(exc))
            continue
        active.append((solver, row, S, b, t_an, t_f, [], []))
    enabled = gc.isenabled()
    gc.disable()
    spent = {id(entry): 0.0 for entry in active}     # timed seconds per solver
    start, rounds = time.perf_counter(), 0
    try:
        while rounds < repeats or time.perf_counter() - start < min_case_s:
            rounds += 1
            timed = False
            for entry in list(active):
                solver, row, _, b, _, _, rf, sv = entry
                if rf and spent[id(entry)] >= budget:
                    continue
                try:
                    solver.refactor(case)               # untimed: warm caches, as in a loop
                    rf.append(_sample(partial(solver.refactor, case)))
                    sv.append(_sample(partial(solver.solve, b), min_time=1e-3))
                    spent[id(entry)] += rf[-1] + sv[-1]
                    timed = True
                except Exception as exc:
                    row.update(_failed(exc))
                    active.remove(entry)
            if not timed:                               # every solver out of budget
                break
    finally:
        if enabled:
            gc.enable()
    for solver, row, S, b, t_an, t_f, rf, sv in active:
        try:
            x = solver.solve(b)
            stats = solver.stats()
        except Exception as exc:
            row.update(_failed(exc))
            continue
        t_rf, t_s = _timing(rf), _timing(sv)
        row.update({
            "status": "ok", "reason": "" if solver.has_analyze
            else "no separate symbolic phase: analyze_s is set-up only",
            "analyze_s": t_an.best, "factor_s": t_f.best, "refactor_s": t_rf.best,
            "refactor_median_s": t_rf.median, "solve_s": t_s.best,
            "solve_median_s": t_s.median, "refactor_solve_s": t_rf.best + t_s.best,
            "repeats": min(t_rf.repeats, t_s.repeats), "residual": _residual(S, b, x),
            **stats, **({"gflops": stats["flops"] / t_rf.best / 1e9} if "flops" in stats
                        else {})})
    return rows


def _failed(exc: Exception) -> dict:
    return {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"[:300]}


# ---------------------------------------------------------------------- cases as tasks
CASE_KEY = ("suite", "family", "size", "kind", "labelling")
"""Columns that identify a case in a results CSV (:func:`case_key`): a case is one system
(suite, graph family, size, matrix kind, node numbering) on which every solver of the run is
timed in the same process, one after the other in interleaved rounds."""

CASE_FAILED = "(case)"
"""``solver`` column of the row that records a case that failed as a whole (its task raised,
or its worker died more often than the retries allow)."""

_WARMED: set[str] = set()          # run ids whose warm-up this process has done


@dataclass(frozen=True)
class CaseSpec:
    """One case of a suite run, the unit of work of :func:`run_case`: one Dask task, or one
    iteration of the in-process loop. ``relabel`` is ``None`` for the generator's numbering
    (``labelling="native"``) or ``r`` for the seeded random numbering ``random-<r>``."""

    suite: object                  # comparisons.suite.Suite
    family: str
    size: int
    kind: str
    relabel: int | None
    solvers: tuple[str, ...]
    repeats: int
    min_case_s: float = 0.0
    warmup_s: float = 0.0
    run_id: str = ""
    blas_threads: int = 1

    @property
    def labelling(self) -> str:
        return "native" if self.relabel is None else f"random-{self.relabel}"

    @property
    def key(self) -> tuple:
        """:func:`case_key` of this case's rows."""
        return (self.suite.name, self.family, int(self.size), self.kind, self.labelling)

    def __str__(self) -> str:
        return "case " + " ".join(map(str, self.key))


def case_key(row: dict) -> tuple:
    """``(suite, family, size, kind, labelling)`` of a result row (size as an int; a missing or
    empty labelling is ``"native"``): the key by which ``run --resume`` recognises the cases a
    CSV already holds."""
    return (row["suite"], row["family"], int(row["size"]), row["kind"],
            row.get("labelling") or "native")


def case_specs(suite, families=None, sizes=None, kinds=None, solvers=None, repeats=None,
               min_case_s=None, relabel: int = 0, warmup_s: float = 0.0, run_id: str = "",
               blas_threads: int = 1) -> list[CaseSpec]:
    """The cases of a run in order: each (family, size, kind) of the suite on its native
    numbering, then on ``relabel`` random numberings (none for a suite whose cases pin
    orderings, ``suite.relabels`` false)."""
    names = tuple(solvers or suite.solvers)
    reps = repeats or suite.repeats
    spread = suite.min_case_s if min_case_s is None else min_case_s
    labels = [None] + (list(range(relabel)) if getattr(suite, "relabels", True) else [])
    return [CaseSpec(suite, family, size, kind, r, names, reps, spread, warmup_s, run_id,
                     blas_threads)
            for family, size, kind in suite.cases(families, sizes, kinds) for r in labels]


def _pinned_threads(blas_threads: int = 1):
    """Context: BLAS / OpenMP pools limited to ``blas_threads`` (threadpoolctl, when installed;
    the peers' own libraries loaded first, :func:`~comparisons.blas_threads.limit_blas_threads`)
    and numba's parallel kernels to one thread; both restored on exit."""
    from contextlib import ExitStack, contextmanager

    @contextmanager
    def numba_one():
        try:
            import numba

            before = numba.get_num_threads()
            numba.set_num_threads(1)
        except (ImportError, ValueError, RuntimeError):
            yield
            return
        try:
            yield
        finally:
            numba.set_num_threads(before)

    stack = ExitStack()
    stack.enter_context(numba_one())           # first: it resets OpenMP's thread count
    stack.enter_context(limit_blas_threads(blas_threads))
    return stack


def cpu_model() -> str:
    """The CPU model of this machine (``/proc/cpuinfo``'s model name, else
    ``platform.processor()``)."""
    import platform

    try:
        with open("/proc/cpuinfo") as fh:
            return next(line.split(":", 1)[1].strip() for line in fh
                        if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def worker_info() -> dict:
    """``host``, ``cpu`` and ``worker`` columns of the rows this process produces: the host
    name, its CPU model and the address of the Dask worker running the task (``"local"``
    outside a worker)."""
    import socket
    import sys

    worker = "local"
    if "distributed" in sys.modules:            # a worker process has imported it
        try:
            from distributed import get_worker

            worker = str(get_worker().address)
        except (ImportError, ValueError):
            pass
    return {"host": socket.gethostname(), "cpu": cpu_model(), "worker": worker}


def run_case(spec: CaseSpec) -> list[dict]:
    """Build one case and time every solver of ``spec`` on it (:func:`bench_case`) with BLAS
    and numba pinned to one thread; one row per solver, with the case's key columns and the
    ``host``, ``cpu``, ``worker`` and ``task`` (an id shared by the rows of this execution)
    columns. The first case a process runs for a run id is benchmarked untimed for
    ``spec.warmup_s`` seconds first (see :func:`run`). The same function runs a case in
    process and in a Dask worker. Exceptions other than a solver's (which
    :func:`bench_case` records as failed rows) propagate."""
    import uuid

    from .solvers import make_solvers
    from .suite import relabel_case, relabelling_seed

    case = spec.suite.make_case(spec.family, spec.size, spec.kind)
    if spec.relabel is not None:
        if case.orderings:                      # pinned orderings: native only
            return []
        case = relabel_case(case, relabelling_seed(spec.family, spec.size, spec.relabel),
                            spec.labelling)
    base = {"suite": spec.suite.name, "family": spec.family, "size": spec.size,
            "kind": spec.kind, "labelling": case.labelling, "nodes": case.nodes, "N": case.N}
    with _pinned_threads(spec.blas_threads):
        if spec.warmup_s > 0 and spec.run_id not in _WARMED:
            _warm_up(case, make_solvers(spec.solvers), spec.warmup_s)
            _WARMED.add(spec.run_id)
        rows = bench_case(make_solvers(spec.solvers), case, spec.repeats,
                          min_case_s=spec.min_case_s)
    extra = {**worker_info(), "task": uuid.uuid4().hex[:12]}
    return [{**base, **row, **extra} for row in rows]


def failed_case_rows(spec: CaseSpec, exc: BaseException) -> list[dict]:
    """The one row recording that ``spec`` failed as a whole (solver :data:`CASE_FAILED`)."""
    return [{"suite": spec.suite.name, "family": spec.family, "size": spec.size,
             "kind": spec.kind, "labelling": spec.labelling, "solver": CASE_FAILED,
             "status": "failed",
             "reason": f"{spec}: {type(exc).__name__}: {exc}"[:500]}]


def run(suite, families=None, sizes=None, kinds=None, solvers=None, repeats=None,
        blas_threads: int = 1, progress: bool = True, warmup_s: float = 1.0,
        min_case_s: float | None = None, relabel: int = 0, out=None, resume: bool = False,
        client=None, retries: int = 2, on_case: Callable | None = None) -> list[dict]:
    """Run a suite (see :mod:`comparisons.suite`) and return one row per case and solver.

    Each case runs on its own numbering (``labelling="native"``) and, with ``relabel`` = K > 0,
    on K random renumberings of its nodes (``"random-0"`` .. ``"random-<K-1>"``, the same
    matrix permuted blockwise: :func:`comparisons.suite.relabelled_cases`); a case with pinned
    orderings (the paper suite) runs native only.

    One case (:class:`CaseSpec`) is one call of :func:`run_case`: every solver of the case is
    timed on the same matrix in the same process, so the ratios between solvers are same-run
    ratios. Without ``client`` the cases run one after the other in this process; with a
    ``distributed.Client`` each case is one Dask task (:func:`comparisons.cluster.map_cases`:
    retried ``retries`` times when it raises or its worker dies). A case that still fails
    becomes one row with ``solver="(case)"``, ``status="failed"`` and the reason; the run goes
    on.

    With ``out`` (a CSV path), each finished case's rows are appended to it at once (a new file
    unless ``resume``; see :class:`CaseCsv`); with ``resume``, the cases whose rows the CSV
    already holds for every solver (by :func:`case_key`) are skipped. ``on_case(spec, rows)``
    is called after each case (after the rows were written). Returns the rows of the cases run
    by this call, in the suite's case order.

    BLAS threads are pinned to ``blas_threads`` (threadpoolctl) and numba's to one around every
    case. Before the first case a process times, it benchmarks that case untimed for
    ``warmup_s`` seconds (all solvers): the first timed case of a fresh process was otherwise
    measured in a colder state than the others (path 100 nodes, refactor + solve, best of 7,
    four fresh processes: SuperLU 415-660 µs cold against 341-523 warmed up; in one of the
    four every solver, graphsolve and CHOLMOD included, was 1.4× slower), which bent the
    fitted time-vs-nodes slopes. ``min_case_s`` (default: the suite's) spreads each case's
    rounds over at least that many seconds (:func:`bench_case`).
    """
    import uuid

    from tqdm import tqdm

    from .solvers import make_solvers

    names = tuple(solvers or suite.solvers)
    make_solvers(names)                                   # fail early on unknown names
    specs = case_specs(suite, families, sizes, kinds, names, repeats, min_case_s, relabel,
                       warmup_s, uuid.uuid4().hex, blas_threads)
    sink = None
    if out is not None:
        sink = CaseCsv(out, resume=resume, cases=specs, solvers=names)
        specs = [s for s in specs if s.key not in sink.done]
    results: dict[int, list[dict]] = {}
    bar = tqdm(total=len(specs), disable=not progress, unit="case",
               desc=f"suite {suite.name}")

    def finish(i: int, rows: list[dict]) -> None:
        results[i] = rows
        if sink is not None:
            sink.append(rows)
        if on_case is not None:
            on_case(specs[i], rows)
        bar.set_postfix_str(" ".join(map(str, specs[i].key[1:])))
        bar.update()

    try:
        if client is None:
            for i, spec in enumerate(specs):
                try:
                    rows = run_case(spec)
                except Exception as exc:        # a broken case is a result, not a crash
                    rows = failed_case_rows(spec, exc)
                finish(i, rows)
        else:
            from .cluster import map_cases

            for i, rows in map_cases(client, specs, retries=retries):
                finish(i, rows)
    finally:
        bar.close()
    return [r for i in sorted(results) for r in results[i]]


def _warm_up(case, solvers, seconds: float) -> None:
    """Benchmark ``case`` with ``solvers`` untimed, repeatedly for ``seconds`` (results
    discarded): loads every solver's code and data paths and lets the machine settle."""
    start = time.perf_counter()
    while True:
        bench_case(solvers, case, 1, budget=seconds)
        if time.perf_counter() - start >= seconds:
            return


COLUMNS = ("suite", "family", "size", "kind", "labelling", "nodes", "N", "solver", "version",
           "status", "reason", "analyze_s", "factor_s", "refactor_s", "refactor_median_s",
           "solve_s", "solve_median_s", "refactor_solve_s", "repeats", "residual", "factor_nnz",
           "fill_pairs", "flops", "gflops", "method", "host", "cpu", "worker", "task")
"""Columns of a suite run's CSV. ``host``, ``cpu`` and ``worker`` say where a case ran (host
name, CPU model, Dask worker address or ``"local"``); ``task`` is an id shared by the rows of
one execution of a case, within which ratios between solvers are computed."""


def write_results(rows: list[dict], path, meta: dict, columns=COLUMNS) -> None:
    """Write ``path`` (CSV with ``columns``; ``None``: every key of the rows, in order of first
    appearance) and ``path`` with suffix ``.json`` (metadata)."""
    import csv
    import json
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if columns is None:
        columns = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2, default=str) + "\n")


def write_metadata(path, meta: dict) -> None:
    """Write the JSON metadata next to the CSV ``path`` (``path`` with suffix ``.json``)."""
    import json
    from pathlib import Path

    path = Path(path).with_suffix(".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(meta, indent=2, default=str) + "\n")


def _one_line(value):
    return value.replace("\r", " ").replace("\n", " ") if isinstance(value, str) else value


class CaseCsv:
    """The CSV of a suite run, written case by case.

    A new file (header only) unless ``resume``. With ``resume`` and an existing file, the
    cases of ``cases`` whose rows the file holds for every solver of ``solvers`` (matched by
    :func:`case_key`) are complete and listed in :attr:`done`; the file is rewritten (through
    a temporary file) without a partly written last line, without the rows of the other cases
    of ``cases`` (incomplete or failed as a whole: they run again, all their solvers in one
    task) and with :data:`COLUMNS` plus any other columns it had; rows of cases not in
    ``cases`` are kept as they are. :meth:`append` writes one case's rows in one write, so an
    interrupted run loses at most the cases in flight."""

    def __init__(self, path, columns=COLUMNS, resume: bool = False, cases=(), solvers=()):
        import csv
        import io
        import os
        from collections import defaultdict
        from pathlib import Path

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.done: set[tuple] = set()
        kept: list[dict] = []
        columns = list(columns)
        if resume and self.path.exists():
            text = self.path.read_text()
            if text and not text.endswith("\n"):           # a partly written last row
                text = text[:text.rfind("\n") + 1]
            reader = csv.DictReader(io.StringIO(text))
            rows = list(reader)
            columns += [c for c in reader.fieldnames or () if c not in columns]
            groups: dict[tuple, list[dict]] = defaultdict(list)
            for r in rows:
                try:
                    groups[case_key(r)].append(r)
                except (KeyError, TypeError, ValueError):   # not a case row: dropped
                    continue
            wanted = {getattr(c, "key", c) for c in cases}
            need = set(solvers)
            for key, rs in groups.items():
                got = {r.get("solver") for r in rs}
                if key not in wanted:
                    kept += rs
                elif CASE_FAILED not in got and need <= got:
                    self.done.add(key)
                    kept += rs
        self.columns = columns
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
            w.writeheader()
            w.writerows(kept)
        os.replace(tmp, self.path)

    def append(self, rows: list[dict]) -> None:
        """Append one case's rows (newlines in text fields become spaces)."""
        import csv
        import io

        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=self.columns, extrasaction="ignore").writerows(
            {k: _one_line(v) for k, v in r.items()} for r in rows)
        with self.path.open("a", newline="") as fh:
            fh.write(buf.getvalue())
