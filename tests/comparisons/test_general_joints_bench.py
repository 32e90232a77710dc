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
    rows = general_joints_bench(revolute=(20,), bezier=(3,), number=2, repeats=1,
                                compiled=False)
    assert [r["case"] for r in rows] == ["RC20", "BC3"]
    rc, bc = rows
    assert rc["paper_method_I_ms"] == PAPER_TABLE1_MS["RC20"]["method_I"] == 0.020
    assert rc["numpy_aba_ms"] > 0 and rc["general_aba_ms"] > 0
    assert rc["max_abs_diff"] < 1e-9                 # general revolute (and Pinocchio) agree
    assert bc["dofs"] == 3 and bc["numpy_aba_ms"] > 0 and bc["paper_case"] is None
    assert "RC20" in format_rows(rows)
    assert PAPER_TABLE1_MS["TC20"] == {"dofs": 78, "method_I": 0.115, "featherstone": None,
                                       "sdfast": None, "method_II": 2.2}
