"""Smoke test of comparisons.minimal_bench at tiny sizes (no timing assertions)."""
from __future__ import annotations

import numpy as np

from comparisons import minimal_bench
from dynamics.minimal import Model


def test_box_chain_geometry():
    model = Model(minimal_bench.box_chain(3))
    assert model.nv == 3
    np.testing.assert_allclose(model.masses, 1.0)
    # box inertia about its centre: m/12 (0.3² + 1.5²) about x
    np.testing.assert_allclose(model.spec.bodies[0].inertia[0, 0], (0.09 + 2.25) / 12)


def test_quick_bench_runs():
    out = minimal_bench.minimal_bench(quick=True, dofs=(2, 3), steps=20)
    assert {(r["dof"], r["solver"]) for r in out["rows"]} == {
        (d, s) for d in (2, 3) for s in ("newton", "riqn", "broyden")}
    assert all(r["seconds"] > 0 and r["mean_iterations"] >= 0 for r in out["rows"])
    assert set(out["speedup_riqn"]) == {2, 3}
    assert out["paper_speedup"] == {10: 3.8, 100: 53.0}
    assert out["aba"]["ours_s"] > 0
    if out["aba"]["pinocchio_s"] is not None:
        assert out["aba"]["max_abs_diff"] < 1e-8
