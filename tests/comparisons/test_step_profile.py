"""The step profile (``python -m comparisons step-profile``) on its quick cases, pendulum(2) and
sphere_chain(1): the CSV's columns, non-negative shares that fit in the step's time, every
reference group seen, and the two paths really taken (no timing asserts beyond that)."""
from __future__ import annotations

import csv

import pytest

from comparisons import step_profile as sp
from comparisons.__main__ import main
from dynamics import models
from dynamics.maximal import Simulation

MEASURED = ("setup", "residual", "assembly", "factor", "solve")


@pytest.fixture(scope="module")
def rows():
    return sp.run_step_profile(sp.QUICK_CASES, steps=10, repeats=1, warm=2, min_time=0.002,
                               progress=False)


def test_quick_rows_and_csv_columns(rows, tmp_path, monkeypatch):
    assert [(r["case"], r["path"]) for r in rows] == [
        (case, path) for case in sp.QUICK_CASES for path in ("reference", "compiled")], rows
    # the CLI writes every column (the run itself stubbed: the fixture's rows)
    monkeypatch.setattr(sp, "run_step_profile", lambda *a, **k: rows)
    out = tmp_path / "sp.csv"
    assert main(["step-profile", "--quick", "--out", str(out)]) == 0
    with out.open() as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == sp.COLUMNS
        assert len(list(reader)) == len(rows)
    assert out.with_suffix(".json").exists()


def test_shares_are_non_negative_and_fit_in_the_step(rows):
    for r in rows:
        total = r["us_per_step"]
        assert total > 0 and r["iterations"] > 0, r
        groups = MEASURED + (("line_search",) if r["path"] == "reference" else ())
        shares = [r[f"{g}_us"] for g in groups]
        assert all(s >= 0 for s in shares), r
        # the reference's groups are fractions of one profile (rest = remainder); the compiled
        # shares are unit costs x calls, estimates: they fit in the step up to timing noise
        tol = 1e-9 if r["path"] == "reference" else 0.5
        assert sum(shares) <= total * (1 + tol), r
        assert sum(shares) + r["rest_us"] == pytest.approx(total)
        # one factorization per Newton iteration, fewer with chord steps (reuse_factorization)
        assert 0 < r["factors_per_step"] <= r["iterations"] * (1 + 1e-9), r
        assert r["residuals_per_step"] >= 1 + r["iterations"] - 1e-9, r
    compiled = [r for r in rows if r["path"] == "compiled"]
    for r in compiled:
        assert r["line_search_us"] is None
        assert all(r[f"unit_{k}_us"] > 0 for k in ("setup", "residual", "jacobian", "factor",
                                                     "solve")), r
        assert r["step_call_us"] > 0 and r["kernel_us"] > 0
        assert r["python_run_us"] == pytest.approx(r["us_per_step"] - r["kernel_us"])
        assert r["call_overhead_us"] == pytest.approx(r["step_call_us"] - r["kernel_us"])
        assert r["kernel_rest_us"] + r["python_run_us"] == pytest.approx(r["rest_us"])


def test_reference_grouping_sees_every_group(rows):
    """sphere_chain(1) exercises every group: the interior point's line search and step
    control, several solves per factorization with iterative refinement."""
    ref = {r["case"]: r for r in rows if r["path"] == "reference"}
    chain = ref["sphere chain n=1"]
    for g in sp.GROUPS:
        assert chain[f"{g}_us"] > 0, (g, chain)
    assert chain["solves_per_step"] > chain["factors_per_step"]
    assert chain["refinements_per_step"] > 0
    pend = ref["pendulum n=2"]
    for g in MEASURED + ("line_search",):
        assert pend[f"{g}_us"] > 0, (g, pend)
    # one solve per Newton iteration; chord steps solve with the last factorization
    assert pend["solves_per_step"] == pytest.approx(pend["iterations"])
    assert pend["factors_per_step"] < pend["solves_per_step"]
    assert pend["refinements_per_step"] == 0
    # the compiled interior point's solve estimate counts the refinement residuals too
    comp = {r["case"]: r for r in rows if r["path"] == "compiled"}
    assert comp["sphere chain n=1"]["unit_refinement_us"] > 0
    assert comp["pendulum n=2"]["unit_refinement_us"] == 0


def test_the_paths_are_the_ones_named():
    ref = sp.reference_simulation(models.pendulum(2))
    assert ref.system.kernels == "reference"
    assert sp.profile_reference(ref, 2)["residuals"] >= 2
    with pytest.raises(RuntimeError, match="reference path"):
        sp.profile_reference(Simulation(models.pendulum(2), dt=0.01), 2)


def test_markdown_table(rows):
    text = sp.markdown_table(rows + [{"case": "broken", "path": "failed", "method": "boom"}])
    lines = text.splitlines()
    assert len(lines) == 2 + len(rows) + 1
    assert all(line.count("|") == lines[0].count("|") for line in lines)
    for case in sp.QUICK_CASES:
        assert f"| {case} | reference |" in text and f"| {case} | compiled |" in text
    assert "failed: boom" in text
