"""Suite runs on a real Dask ``LocalCluster`` (2 worker processes) against the in-process run:
same cases and rows, streamed CSV, ``--resume``, failed cases, a worker killed mid-case. Tiny
cases, no timing assertions."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

from comparisons.__main__ import main  # noqa: E402
from comparisons.cluster import dask_client  # noqa: E402
from comparisons.plot import plot_results, ratio_table, read_results  # noqa: E402
from comparisons.runner import CASE_FAILED, case_key, run  # noqa: E402
from comparisons.suite import SUITES, make_case  # noqa: E402

# the case builders below are pickled by value: the workers need not import this module
cloudpickle.register_pickle_by_value(sys.modules[__name__])

SOLVERS = ["graphsolve-brudigam-compiled", "superlu-natural"]
TINY = dict(families=["path"], sizes=[5], kinds=["spd", "kkt"], solvers=SOLVERS, repeats=1,
            relabel=1, progress=False, warmup_s=0.0)
CLI = ["run", "--suite", "default", "--families", "path", "--sizes", "5", "--kinds", "spd",
       "kkt", "--solvers", *SOLVERS, "--repeats", "1", "--relabel", "1", "--no-progress"]
# columns that do not depend on timing or on where the case ran
STABLE = ("suite", "family", "size", "kind", "labelling", "nodes", "N", "solver", "version",
          "status", "reason", "factor_nnz", "fill_pairs", "flops", "method", "cpu")


@pytest.fixture(scope="module")
def client():
    with dask_client(workers=2, retries=2, dashboard_address=":0") as c:
        yield c


def _stable(rows):
    return sorted(tuple(str(r.get(k, "")) for k in STABLE) for r in rows)


def _keys(rows):
    return {case_key(r) for r in rows}


def test_workers_give_the_same_rows_as_in_process(tmp_path, capsys):
    local, dask = tmp_path / "local.csv", tmp_path / "dask.csv"
    assert main([*CLI, "--out", str(local)]) == 0
    assert main([*CLI, "--out", str(dask), "--workers", "2"]) == 0
    assert "dashboard" in capsys.readouterr().out
    import json

    meta = json.loads(dask.with_suffix(".json").read_text())
    assert meta["mode"] == "LocalCluster, 2 workers" and len(meta["dask"]["workers"]) == 2
    for w in meta["dask"]["workers"].values():        # one thread per worker, every pool
        assert w["nthreads"] == 1 and w["NUMBA_NUM_THREADS"] == "1"
        assert w.get("blas_threads", [1]) == [1]
    a, b = read_results(local), read_results(dask)
    assert len(a) == 4 * len(SOLVERS) and _keys(a) == _keys(b)
    assert _stable(a) == _stable(b)
    assert all(r["status"] == "ok" for r in b)
    assert {r["worker"] for r in a} == {"local"}
    assert all(r["worker"].startswith("tcp://") and r["host"] and r["cpu"] for r in b)
    for rows in (a, b):                 # every solver of a case in one task
        tasks = {}
        for r in rows:
            tasks.setdefault(case_key(r), set()).add(r["task"])
        assert all(len(t) == 1 for t in tasks.values())


@pytest.mark.parametrize("where", ["in-process", "dask"])
def test_rows_are_streamed_case_by_case(tmp_path, where, request):
    client = request.getfixturevalue("client") if where == "dask" else None
    out = tmp_path / "s.csv"
    seen = []

    def hook(spec, rows):
        on_disk = read_results(out)
        assert case_key(rows[0]) == spec.key
        assert set(_stable(rows)) <= set(_stable(on_disk))
        seen.append(len(on_disk))

    rows = run(SUITES["default"], out=out, client=client, on_case=hook, **TINY)
    assert seen == [len(SOLVERS) * k for k in range(1, 5)]     # rows on disk after each case
    assert _stable(read_results(out)) == _stable(rows)


def test_resume_runs_only_the_missing_cases(tmp_path):
    out = tmp_path / "r.csv"
    assert main([*CLI, "--out", str(out)]) == 0
    full, first = out.read_text(), read_results(out)
    ran = []
    run(SUITES["default"], out=out, resume=True, on_case=lambda s, r: ran.append(s.key), **TINY)
    assert ran == [] and out.read_text() == full               # complete: nothing runs
    lines = full.splitlines(keepends=True)                     # header + 4 cases x 2 rows
    # the last case lost, the one before cut in the middle of its second row
    out.write_text("".join(lines[:-3]) + lines[-3][:20])
    assert main([*CLI, "--out", str(out), "--resume"]) == 0
    after = read_results(out)
    assert _stable(after) == _stable(first)
    before = {case_key(r): r["task"] for r in first}
    now = {case_key(r): r["task"] for r in after}
    assert {k for k in before if before[k] != now[k]} == {case_key(first[-1]),
                                                          case_key(first[-3])}


def _raising_case(family, size, kind, bad=7):
    if size == bad:
        raise RuntimeError(f"no matrix for size {size}")
    return make_case(family, size, kind)


@pytest.mark.parametrize("where", ["in-process", "dask"])
def test_a_case_that_raises_becomes_a_failed_row(tmp_path, where, request):
    client = request.getfixturevalue("client") if where == "dask" else None
    suite = replace(SUITES["default"], make_case=_raising_case)
    out = tmp_path / "f.csv"
    rows = run(suite, out=out, client=client, retries=1,
               **{**TINY, "sizes": [5, 7], "kinds": ["spd"], "relabel": 0})
    bad = [r for r in rows if r["status"] == "failed"]
    assert len(bad) == 1 and bad[0]["solver"] == CASE_FAILED
    assert "case default path 7 spd native" in bad[0]["reason"]
    assert "no matrix for size 7" in bad[0]["reason"]
    assert [r["status"] for r in rows if r["size"] == 5] == ["ok"] * len(SOLVERS)
    on_disk = read_results(out)
    assert len(on_disk) == len(SOLVERS) + 1
    # resume reruns the failed case (and only it)
    ran = []
    run(suite, out=out, resume=True, on_case=lambda s, r: ran.append(s.key),
        **{**TINY, "sizes": [5, 7], "kinds": ["spd"], "relabel": 0})
    assert ran == [("default", "path", 7, "spd", "native")]
    assert len(read_results(out)) == len(SOLVERS) + 1


def _dying_case(family, size, kind, marker):
    """Kills its worker process the first time it runs in a worker (``marker`` remembers)."""
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:                  # not in a worker: never exit the test process
        return make_case(family, size, kind)
    if not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os._exit(1)
    return make_case(family, size, kind)


def test_a_killed_worker_is_retried_and_the_run_completes(tmp_path, client):
    marker = tmp_path / "died"
    suite = replace(SUITES["default"], make_case=functools.partial(_dying_case,
                                                                   marker=str(marker)))
    rows = run(suite, client=client, retries=2, **{**TINY, "relabel": 0})
    assert marker.exists()                                  # a worker did die
    assert len(rows) == 2 * len(SOLVERS)
    assert all(r["status"] == "ok" for r in rows), [r["reason"] for r in rows]


def test_plot_warns_on_mixed_cpu_models_and_ratios_stay_within_a_case(tmp_path):
    def row(solver, t, cpu, task):
        return {"suite": "s", "family": "path", "size": "5", "kind": "spd",
                "labelling": "native", "nodes": "5", "N": "30", "solver": solver,
                "version": "1", "status": "ok", "refactor_solve_s": str(t), "cpu": cpu,
                "task": task}

    # one execution per host: on the slow host both solvers are 10x slower
    rows = [row("g", 1.0, "fast cpu", "a"), row("p", 2.0, "fast cpu", "a"),
            row("g", 10.0, "slow cpu", "b"), row("p", 20.0, "slow cpu", "b")]
    pytest.importorskip("matplotlib")
    with pytest.warns(UserWarning, match="2 CPU models"):
        plot_results(rows, tmp_path, stem="mixed")
    table = ratio_table(rows, solver="g")
    assert table.splitlines()[-1].endswith("| 0.50 |")      # not 10/2 or 1/20


def _always_dying_case(family, size, kind):
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        raise RuntimeError("only for workers") from None
    os._exit(1)


def test_a_case_that_kills_every_worker_becomes_a_failed_row(client):
    suite = replace(SUITES["default"], make_case=_always_dying_case)
    rows = run(suite, client=client, retries=1, **{**TINY, "kinds": ["spd"], "relabel": 0})
    assert len(rows) == 1 and rows[0]["solver"] == CASE_FAILED
    assert rows[0]["status"] == "failed" and "KilledWorker" in rows[0]["reason"]
    assert "case default path 5 spd native" in rows[0]["reason"]
    client.wait_for_workers(2, timeout=60)            # the nannies restarted them


def test_resume_after_the_run_was_killed(tmp_path):
    """A real ``python -m comparisons run`` killed (SIGKILL) after some cases: the CSV keeps
    the finished cases, and ``--resume`` runs only the others."""
    import subprocess
    import time

    out = tmp_path / "killed.csv"
    cmd = [sys.executable, "-m", "comparisons", "run", "--suite", "default", "--families",
           "path", "--sizes", "5", "10", "20", "--kinds", "spd", "kkt", "--solvers", *SOLVERS,
           "--repeats", "1", "--min-case-time", "1", "--no-progress", "--out", str(out)]
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and len(read_results(out)) >= 2 * len(SOLVERS):
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.kill()
    finally:
        proc.wait(timeout=60)
    before = read_results(out)
    done = _keys(before)
    assert 2 <= len(done) < 6
    ran = []
    rows = run(SUITES["default"], out=out, resume=True, on_case=lambda s, r: ran.append(s.key),
               **{**TINY, "sizes": [5, 10, 20], "relabel": 0})
    assert set(ran) == _keys(rows) and not set(ran) & done and len(ran) + len(done) == 6
    after = read_results(out)
    assert len(_keys(after)) == 6 and len(after) == 6 * len(SOLVERS)
    assert all(r["status"] == "ok" for r in after)
    kept = {(case_key(r), r["solver"]): r["task"] for r in before}
    assert all(kept[(case_key(r), r["solver"])] == r["task"] for r in after
               if case_key(r) in done)                      # finished cases not rerun
