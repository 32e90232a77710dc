"""The n-link pendulum benchmark runs end to end on a tiny configuration (no timing asserts)."""
import pytest

from comparisons.__main__ import main
from comparisons.dynamics_bench import (
    PEERS,
    linear_slope,
    plot_pendulum_benchmark,
    ratio_summary,
    run_pendulum_benchmark,
)


def test_tiny_pendulum_benchmark(tmp_path):
    pytest.importorskip("pinocchio")
    pytest.importorskip("mujoco")
    rows = run_pendulum_benchmark(sizes=(1, 2), steps=5, repeats=1, progress=False)
    assert {r["solver"] for r in rows} == {"maximal", *PEERS}
    assert all(r["status"] == "ok" for r in rows), [r["reason"] for r in rows]
    maximal = [r for r in rows if r["solver"] == "maximal"]
    assert all(r["final_constraint_violation"] < 1e-9 for r in maximal)
    assert all(1 <= r["newton_iterations"] <= 4 for r in maximal)
    for r in maximal:                      # Simulation.run timed beside the step() loop
        assert r["run_best_s"] > 0 and r["run_median_s"] >= r["run_best_s"]
        assert r["run_us_per_step"] == pytest.approx(1e6 * r["run_best_s"] / 5)
        assert r["recording_overhead"] == pytest.approx(r["run_best_s"] / r["best_s"] - 1)
    assert all("run_best_s" not in r for r in rows if r["solver"] != "maximal")
    ratios = ratio_summary(rows)
    assert len(ratios) == 4 and all(r["vs_mujoco-euler"] > 0 for r in ratios)
    assert all(r["run_vs_mujoco-euler"] > 0 and "recording_overhead" in r for r in ratios)
    assert linear_slope(rows, "maximal", "revolute") != linear_slope(rows, "x", "revolute")
    png = tmp_path / "p.png"
    plot_pendulum_benchmark(rows, png)
    assert png.stat().st_size > 1000


def test_missing_peer_is_recorded_not_raised(monkeypatch):
    import comparisons.dynamics_bench as bench

    def boom(*args, **kwargs):
        raise ImportError("no module named pinocchio")

    monkeypatch.setattr(bench, "_peer", boom)
    rows = run_pendulum_benchmark(sizes=(1,), joints=("revolute",), steps=2, repeats=1,
                                  solvers=("pinocchio-rk4",), progress=False)
    assert rows[0]["status"] == "skipped" and "pinocchio" in rows[0]["reason"]


def test_command_line(tmp_path):
    pytest.importorskip("pinocchio")
    pytest.importorskip("mujoco")
    out = tmp_path / "pend.csv"
    assert main(["dynamics", "--sizes", "1", "--steps", "3", "--repeats", "1",
                 "--out", str(out)]) == 0
    assert out.exists() and out.with_suffix(".json").exists() and out.with_suffix(".png").exists()
    header = out.read_text().splitlines()[0].split(",")
    assert {"best_s", "us_per_step", "run_us_per_step", "recording_overhead"} <= set(header)
