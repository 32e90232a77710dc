"""The sphere-chain contact benchmark runs end to end on a tiny configuration: Simulation.run
timed beside the step() loop (no timing asserts)."""
import pytest

from comparisons.contact_bench import run_sphere_chain_benchmark, scaling_summary


def test_tiny_sphere_chain_benchmark():
    rows = run_sphere_chain_benchmark(sizes=(1, 2), steps=4, repeats=2, progress=False)
    assert [r["n"] for r in rows] == [1, 2]
    for r in rows:
        assert r["maximal_status"] == "ok", r["maximal_status"]
        for key in ("maximal_s", "maximal_us_per_step", "maximal_us_per_iteration",
                    "maximal_iterations", "maximal_penetration", "maximal_step_s",
                    "maximal_step_us_per_step"):
            assert key in r, key
        assert r["maximal_step_us_per_step"] == pytest.approx(1e6 * r["maximal_step_s"] / 4)
        assert r["maximal_recording_overhead"] == pytest.approx(
            r["maximal_s"] / r["maximal_step_s"] - 1)
        # the same trajectory both ways: the same interior-point iterations
        assert r["maximal_step_total_iterations"] == r["maximal_total_iterations"]
        assert r["maximal_penetration"] < 1e-8
        assert r["mujoco_status"].startswith(("ok", "skipped", "diverged"))
    summ = scaling_summary(rows, min_size=1)
    assert set(summ["iterations_per_step"]) == {1, 2}
