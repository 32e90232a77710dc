"""The controlled-simulation benchmark (``python -m comparisons control``) on short runs: the
CSV's columns, the peers' PD loops simulating the same controlled chain (their angles close to
ours), and the compiled and Python-called controllers giving the same trajectory (no timing
asserts)."""
from __future__ import annotations

import csv

import numpy as np
import pytest

from comparisons import control_bench as cb
from comparisons.__main__ import main
from dynamics.maximal import MaximalModel, Simulation

pytest.importorskip("mujoco")
pytest.importorskip("pinocchio")


@pytest.fixture(scope="module")
def rows():
    return cb.run_control_benchmark(["revolute chain n=10", "quadruped sway (contacts)"],
                                    steps=40, repeats=1, progress=False)


def test_rows_and_csv(rows, tmp_path, monkeypatch):
    chain, quad = rows
    for r in rows:
        assert r["compiled_us"] > 0 and r["python_us"] > 0 and r["iterations"] >= 1, r
        assert r["python_over_compiled"] == pytest.approx(r["python_us"] / r["compiled_us"])
    assert chain["mujoco_us"] > 0 and chain["pinocchio_us"] > 0
    assert "mujoco_us" not in quad
    # the peers simulate the same controlled chain: angles within O(Δt) over 0.2 s
    assert chain["max_angle_difference"] < 0.02
    monkeypatch.setattr(cb, "run_control_benchmark", lambda *a, **k: rows)
    out = tmp_path / "control.csv"
    assert main(["control", "--quick", "--out", str(out)]) == 0
    with out.open() as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == cb.COLUMNS
        assert len(list(reader)) == 2
    assert "| revolute chain n=10 |" in cb.markdown_table(rows)


def test_the_mujoco_loop_follows_the_same_targets():
    """MuJoCo's PD loop against ours on the chain over 1 s: the same targets and gains give
    angles that agree to O(Δt) and differ from an uncontrolled chain by much more."""
    spec, dt, ctrl = cb._chain(3)
    run, out = cb._mujoco_pd(spec, dt, 200, ctrl)
    run()
    tr = Simulation(spec, dt).run(200, controller=ctrl, progress=False)
    ours = MaximalModel(spec).minimal_coordinates(tr.x, tr.q)[..., 0]
    free = Simulation(spec, dt).run(200, progress=False)
    loose = MaximalModel(spec).minimal_coordinates(free.x, free.q)[..., 0]
    gap = np.max(np.abs(ours - out))
    assert gap < 0.02 and np.max(np.abs(loose - out)) > 10 * gap
