"""Smoke test of comparisons.urdf_bench on two corpus robots, one repeat (no timing
assertions)."""
from __future__ import annotations

import csv
import importlib.util
import json

import numpy as np
import pytest

from comparisons import urdf_bench

ROBOTS = ("mobile_base_planar", "universal_wrist_arm")


def test_corpus_is_found_and_missing_directory_is_named(tmp_path):
    files = urdf_bench.corpus_files()
    assert {p.stem for p in files} >= set(ROBOTS)
    with pytest.raises(FileNotFoundError, match="corpus_dir"):
        urdf_bench.corpus_files(tmp_path / "nowhere")


def test_two_robots_one_repeat(tmp_path):
    out = tmp_path / "urdf.csv"
    rows = urdf_bench.run_urdf_benchmark(out, robots=ROBOTS, number=3, repeats=1)
    by = {r["robot"]: r for r in rows}
    assert set(by) == set(ROBOTS)
    planar = by["mobile_base_planar"]
    assert (planar["dof"], planar["bodies"], planar["base"]) == (5, 3, "fixed")
    assert planar["maximal_step_us"] > 0 and planar["maximal_run_us"] > 0
    assert planar["minimal_step_us"] > 0 and planar["minimal_run_us"] > 0
    assert planar["minimal_riqn_us"] > 0 and planar["riqn_iterations"] >= 1
    assert planar["note"] == ""
    wrist = by["universal_wrist_arm"]                 # massless cross: maximal refuses
    assert np.isnan(wrist["maximal_step_us"]) and "wrist_cross" in wrist["note"]
    assert wrist["minimal_step_us"] > 0
    with out.open() as fh:
        table = list(csv.DictReader(fh))
    assert [r["robot"] for r in table] == [r["robot"] for r in rows]
    assert {"robot", "dof", "bodies", "maximal_step_us", "minimal_step_us",
            "pinocchio_step_us", "maximal_over_pinocchio"} <= set(table[0])
    assert json.loads(out.with_suffix(".json").read_text())["benchmark"] == "urdf"
    text = urdf_bench.markdown_table(rows)
    assert text.count("\n") == 1 + len(rows) and "mobile_base_planar" in text


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_diverging_explicit_loop_is_not_timed():
    """The corpus hand's stiff finger dampers make semi-implicit Euler at 1 ms overflow within
    100 steps (minimal and Pinocchio alike): NaN and the reason instead of a time measured on
    inf / NaN states; the implicit maximal step is timed (RIQN, whose iteration matrix has no
    damper term, does not converge: named too)."""
    (hand,) = urdf_bench.urdf_timings(robots=("hand_16dof",), number=100, repeats=1)
    assert np.isnan(hand["minimal_step_us"]) and np.isnan(hand["minimal_run_us"])
    assert "minimal: semi_implicit_euler diverged: step" in hand["note"]
    assert hand["maximal_run_us"] > 0
    # RIQN's quasi-Newton matrix M(q_k) leaves out the stiff dampers: it does not converge
    assert np.isnan(hand["minimal_riqn_us"]) and "minimal RIQN: step 0" in hand["note"]
    assert np.isnan(hand["pinocchio_step_us"])
    if importlib.util.find_spec("pinocchio") is not None:
        assert "Pinocchio: semi_implicit_euler diverged within 100 steps" in hand["note"]
