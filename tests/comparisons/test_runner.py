import time

import numpy as np

from comparisons.runner import bench_case, bench_solver, time_call


def test_time_call_counts_warmup_and_repeats():
    calls = []
    t = time_call(lambda: calls.append(1), repeats=4, warmup=2)
    assert len(calls) == 6
    assert t.repeats == 4 and 0 <= t.best <= t.median


def test_time_call_min_time_loops_short_calls():
    calls = []
    t = time_call(lambda: calls.append(1), repeats=2, warmup=0, min_time=0.01)
    assert len(calls) > 2
    assert t.best < 0.01


def test_time_call_measures_sleep():
    t = time_call(lambda: time.sleep(0.002), repeats=2, warmup=0)
    assert t.best >= 0.0015


class FakeSolver:
    """Duck-typed adapter that logs its calls (optionally failing on its ``fail_at``-th
    refactor, or unsupported)."""

    has_analyze = True

    def __init__(self, name, log, fail_at=None, unsupported=None):
        self.name, self.log, self.fail_at, self.reason = name, log, fail_at, unsupported
        self.refactors = self.analyses = self.factors = 0

    def version(self):
        return "0"

    def unsupported(self, case):
        return self.reason

    def system(self, case):
        return np.eye(2), np.ones(2)

    def analyze(self, case):
        self.analyses += 1

    def factor(self, case):
        self.factors += 1

    def refactor(self, case):
        self.refactors += 1
        if self.refactors == self.fail_at:
            raise RuntimeError("boom")
        self.log.append(self.name)

    def solve(self, b):
        return b.copy()

    def stats(self):
        return {"factor_nnz": 2}


def test_bench_case_interleaves_solvers_and_keeps_row_order():
    log = []
    solvers = [FakeSolver("a", log), FakeSolver("skip", log, unsupported="no kkt"),
               FakeSolver("b", log), FakeSolver("bad", log, fail_at=4)]
    rows = bench_case(solvers, case=None, repeats=3, budget=10.0)
    assert [r["solver"] for r in rows] == ["a", "skip", "b", "bad"]
    assert [r["status"] for r in rows] == ["ok", "skipped", "ok", "failed"]
    assert rows[1]["reason"] == "no kkt" and "boom" in rows[3]["reason"]
    assert rows[0]["repeats"] == rows[2]["repeats"] == 3 and rows[0]["residual"] == 0.0
    # after each solver's warm-up: rounds of (untimed, timed) refactor pairs, solver by solver
    # ("bad" fails on its 4th refactor, the untimed one of round 2, and drops out)
    assert log[:3] == ["a", "b", "bad"]
    assert log[3:] == ["a", "a", "b", "b", "bad", "bad"] + ["a", "a", "b", "b"] * 2
    assert solvers[0].analyses == solvers[0].factors == 1 + 3     # warm-up + repeats
    assert solvers[1].analyses == solvers[1].factors == 0         # skipped: never called
    assert bench_solver(FakeSolver("c", []), None, repeats=2)["repeats"] == 2


def test_bench_case_spreads_rounds_over_min_case_time():
    """``min_case_s``: rounds go on past ``repeats`` until that much time has passed, but
    never past a solver's ``budget`` (the timed seconds of its refactor and solve samples)."""
    start = time.perf_counter()
    row = bench_case([FakeSolver("a", [])], None, repeats=2, min_case_s=0.05)[0]
    assert time.perf_counter() - start >= 0.05
    assert row["status"] == "ok" and row["repeats"] > 2

    class Slow(FakeSolver):
        def refactor(self, case):
            time.sleep(0.002)

    start = time.perf_counter()
    capped = bench_case([Slow("s", [])], None, repeats=2, budget=0.01, min_case_s=10.0)[0]
    assert time.perf_counter() - start < 5.0              # stopped by the budget, not 10 s
    assert 2 <= capped["repeats"] <= 6
