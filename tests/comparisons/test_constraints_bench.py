"""Smoke test of the constraint benchmark (no timing assertions)."""

import math

from comparisons.constraints_bench import SOLVER_NAMES, crossover, run_constraint_benchmark


def test_constraint_benchmark_rows_and_crossover():
    rows = run_constraint_benchmark(ns=(10,), ks=(0, 2), repeats=1, progress=False)
    assert len(rows) == 2 * len(SOLVER_NAMES)
    for r in rows:
        assert {"n", "k", "solver", "status", "reason", "best_s", "residual"} <= set(r)
        assert r["status"] in ("ok", "failed")
        if r["status"] == "ok":
            assert r["best_s"] > 0 and r["residual"] < 1e-12
        else:
            assert r["reason"] and math.isnan(r["best_s"])
    ours = [r for r in rows if r["solver"] in ("baraff", "graphsolve-brudigam", "superlu")]
    assert all(r["status"] == "ok" for r in ours)
    cross = crossover(rows)
    assert set(cross) == {10} and cross[10] in (None, 0, 2)
    assert set(crossover(rows, against=("superlu",))) == {10}
