"""Smoke test of the Si & Guenter Table 1 benchmark (tiny sizes)."""
from __future__ import annotations

import pytest

pytest.importorskip("sympy")

from comparisons.general_joints_bench import (  # noqa: E402
    PAPER_TABLE1_MS,
    format_rows,
    general_joints_bench,
)


def test_general_joints_bench_smoke():
    rows = general_joints_bench(revolute=(20,), torus=(2,), windmill=False, number=2,
                                repeats=1, compiled=False)
    assert [r["case"] for r in rows] == ["RC20", "TC2"]
    rc, tc = rows
    assert rc["paper_method_I_ms"] == PAPER_TABLE1_MS["RC20"]["method_I"] == 0.020
    assert rc["numpy_aba_ms"] > 0 and rc["general_aba_ms"] > 0 and rc["method_II_ms"] > 0
    # general revolute, Method I / II (and Pinocchio) agree with the NumPy ABA
    assert rc["max_abs_diff"] < 1e-9
    assert tc["dofs"] == 6 and tc["numpy_aba_ms"] > 0 and tc["paper_case"] is None
    assert tc["method_II_ms"] > 0 and tc["max_abs_diff"] < 1e-9
    assert tc["pinocchio_aba_ms"] is None and tc["compiled_aba_ms"] is None
    assert "RC20" in format_rows(rows) and "TC2" in format_rows(rows)
    assert PAPER_TABLE1_MS["TC20"] == {"dofs": 78, "method_I": 0.115, "featherstone": None,
                                       "sdfast": None, "method_II": 2.2}
