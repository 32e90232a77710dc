"""The A1-like quadruped, the gait of Algorithm 6 and the sampling-based learning of Algorithm 7
(Brüdigam et al. 2023 Fig. 13, Appendix E): model numbers, standing still, gait targets, the
learning's acceptance logic on a cheap objective, and rollouts in process vs on Dask."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from dynamics import gait_learning as gl
from dynamics import models
from dynamics import quaternion as quat
from dynamics.maximal import Simulation, pd_controller
from dynamics.rollouts import rollouts


def test_a1_counts_mass_and_feet_on_the_ground():
    spec = models.a1_quadruped()
    assert spec.dof == 18 and len(spec.bodies) == 13 and len(spec.contacts) == 4
    assert sum(j.actuated for j in spec.joints) == 12
    assert sum(b.mass for b in spec.bodies) == pytest.approx(6.0 + 4 * (0.696 + 1.013 + 0.166
                                                                        + 0.06))
    sim = Simulation(spec, 0.001)
    phi = np.concatenate([g.distance(sim.x, sim.q) for g in sim.system.contacts])
    assert np.allclose(phi, 0.0, atol=1e-12)                    # all four feet touch
    assert sim.model.constraint_violation(sim.x, sim.q) < 1e-12
    # the feet sit where the leg geometry puts them: thigh and calf 0.2 m, hips at ±0.1805 m
    feet = models.a1_foot_positions(1.0, -1.5)
    for (leg, (sx, sy)), f in zip(models.A1_LEGS.items(), feet, strict=True):
        calf = sim.spec.body_index(f"{leg}_calf")
        contact = next(c for c in spec.contacts if c.body == f"{leg}_calf")
        world = sim.x[calf] + quat.rotate(sim.q[calf], contact.point)
        trunk = sim.x[0] - np.array([0.0, 0.0041, -0.0005])      # the URDF link origin
        assert np.allclose(world - trunk, f, atol=1e-12), leg
        assert np.sign(f[0]) == sx and np.sign(f[1]) == sy
    assert np.allclose(np.linalg.norm(feet[0, [0, 2]] - [0.1805, 0.0]),
                       np.linalg.norm([0.2 + 0.2 * np.cos(1.5), 0.2 * np.sin(1.5)]))


def test_a1_mirrors_the_legs():
    spec = models.a1_quadruped()
    fr, fl = (spec.bodies[spec.body_index(f"{leg}_thigh")] for leg in ("FR", "FL"))
    s = np.diag([1.0, -1.0, 1.0])
    assert np.allclose(fl.inertia, s @ fr.inertia @ s)
    rr = spec.joint("RR_hip")
    fr_hip = spec.joint("FR_hip")
    assert rr.parent_point[0] == pytest.approx(-fr_hip.parent_point[0])


def test_a1_stands_still_under_pd_hold():
    """0.5 s of PD hold at the standing angles (Algorithm 6's gains): no penetration, joints
    closed, the trunk stays up and level, no walking off."""
    spec = models.a1_quadruped()
    sim = Simulation(spec, 0.001, tol=1e-8)
    ctrl = gl.gait_controller(gl.STANDING)
    tr = sim.run(500, controller=ctrl, progress=False,
                 record=("contact_distance", "constraint_violation"))
    assert tr.contact_distance.min() > -1e-9
    assert tr.constraint_violation.max() < 1e-8
    z = tr.x[:, 0, 2]
    assert z.min() > 0.9 * z[0]
    assert np.abs(tr.x[-1, 0, :2] - tr.x[0, 0, :2]).max() < 5e-3
    assert np.abs(tr.v[-1, 0]).max() < 0.05                       # settled
    assert 1.0 - 2.0 * (tr.q[-1, 0, 1] ** 2 + tr.q[-1, 0, 2] ** 2) > np.cos(np.radians(2.0))


def test_gait_targets_pair_the_diagonal_legs():
    p = np.array([0.3, 0.2, 0.9, -0.3, -1.6])
    b, a1, d1, a2, d2 = p
    for t in (0.0, 0.0417, 0.29, 1.3):
        g = gl.gait_targets(t, p)
        assert set(g) == {f"{leg}_{j}" for leg in models.A1_LEGS
                          for j in ("hip", "thigh", "calf")}
        assert all(g[f"{leg}_hip"] == 0.0 for leg in models.A1_LEGS)
        for joint in ("thigh", "calf"):
            assert g[f"FR_{joint}"] == g[f"RL_{joint}"]
            assert g[f"FL_{joint}"] == g[f"RR_{joint}"]
        w = 20 * np.pi * b * t
        assert g["FR_thigh"] == pytest.approx(a1 * np.cos(w) + d1)
        assert g["FL_thigh"] == pytest.approx(a1 * np.cos(w + np.pi) + d1)
        assert g["FR_calf"] == pytest.approx(a2 * np.cos(w - np.pi / 2) + d2)
        assert g["FL_calf"] == pytest.approx(a2 * np.cos(w + np.pi / 2) + d2)
        # the second pair is the first one half a period (π) later
        later = gl.gait_targets(t + 1.0 / (20 * b), p)
        assert later["FR_thigh"] == pytest.approx(g["FL_thigh"])
        assert later["FR_calf"] == pytest.approx(g["FL_calf"])
    standing = gl.gait_targets(0.7, gl.STANDING)
    assert standing["FR_thigh"] == 1.0 and standing["RR_calf"] == -1.5
    with pytest.raises(ValueError):
        gl.gait_targets(0.0, [1.0, 2.0])


def test_gait_controller_is_algorithm_6s_pd():
    spec = models.a1_quadruped()
    sim = Simulation(spec, 0.001)
    sim.t = 0.0137
    p = [0.3, 0.2, 0.9, -0.3, -1.6]
    u = gl.gait_controller(p)(sim)
    goal = gl.gait_targets(sim.t, p)
    pos = sim.minimal_coordinates()
    for name, (kp, _) in gl.GAINS.items():
        for leg in models.A1_LEGS:
            j = f"{leg}_{name}"
            assert u[j][0] == pytest.approx(kp * (goal[j] - pos[j][0]))   # at rest
    ref = pd_controller(goal, 1.0, 0.0)(sim)
    assert ref.keys() == u.keys()


def _bowl(params_list):
    """A cheap stand-in objective: larger is better, best at ``target``; NaN = a failure."""
    target = np.array([0.4, 0.2, 0.9, -0.3, -1.4])
    out = []
    for p in params_list:
        out.append(np.nan if p[0] < 0 else 5.0 - float(np.sum((p - target) ** 2)) - 4.0)
    return out


def test_sampling_search_acceptance_logic():
    res = gl.sampling_search(_bowl, episodes=60, seed=3)
    again = gl.sampling_search(_bowl, episodes=60, seed=3)
    assert np.array_equal(res.params, again.params)               # reproducible from its seed
    assert [e.distances.tolist() for e in res.episodes] == \
        [e.distances.tolist() for e in again.episodes]
    other = gl.sampling_search(_bowl, episodes=60, seed=4)
    assert not np.array_equal(res.params, other.params)
    best, factor, bias = 0.0, gl.EXPLORE, None
    center = gl.STANDING.copy()
    for e in res.episodes:
        (p,), (d,) = e.params, e.distances
        assert e.biased == (bias is not None)
        if bias is None:
            assert e.explore == pytest.approx(factor)
            assert np.linalg.norm(p - center) < 6 * factor * np.sqrt(5)
        else:                                   # a step along the successful direction
            step = p - center - gl.BIAS_STEP * bias
            assert np.abs(step).max() < 6 * gl.STEP
        assert e.accepted == (np.isfinite(d) and d > best)
        if e.accepted:
            bias = (p - center) / np.linalg.norm(p - center)
            best, center, factor = d, p.copy(), gl.EXPLORE
        else:
            bias, factor = None, factor * gl.DECAY
        assert e.best_distance == best and np.array_equal(e.best_params, center)
    assert res.distance == best and np.array_equal(res.params, center)
    assert np.array_equal(res.best_so_far, np.maximum.accumulate(res.best_so_far))
    assert res.distance > _bowl([gl.STANDING])[0] + 0.1           # it learned something
    assert any(e.biased for e in res.episodes) and not all(e.accepted for e in res.episodes)


def test_sampling_search_samples_per_episode_and_failures():
    calls = []

    def objective(ps):
        calls.append(len(ps))
        return [{"distance": d} for d in _bowl(ps)]

    res = gl.sampling_search(objective, episodes=5, seed=1, samples=3)
    assert calls == [3] * 5
    for e in res.episodes:
        assert e.params.shape == (3, 5) and len(e.info) == 3
        if e.accepted:
            assert e.best_distance == np.nanmax(e.distances)
    res = gl.sampling_search(lambda ps: [None] * len(ps), episodes=4, seed=0)
    assert res.distance == 0.0 and not any(e.accepted for e in res.episodes)
    assert [e.explore for e in res.episodes] == pytest.approx(
        [gl.EXPLORE * gl.DECAY ** k for k in range(4)])
    assert np.array_equal(res.params, gl.STANDING)
    with pytest.raises(ValueError):
        gl.sampling_search(_bowl, episodes=2, samples=0)
    with pytest.raises(ValueError):
        gl.sampling_search(lambda ps: [1.0], episodes=1, samples=2)


def test_walk_reports_falls_without_stopping_the_others():
    out = gl.walk([gl.STANDING, [0.5, 1.0, 1.0, 1.0, -1.5]], 0.4)
    assert out[0]["status"] == "ok" and abs(out[0]["distance"]) < 0.01
    assert out[0]["max_penetration"] < 1e-9 and out[0]["max_violation"] < 1e-8
    assert out[1]["status"] == "fallen" and np.isnan(out[1]["distance"])
    assert 0.0 < out[1]["failed_at"] < 0.4 and "fell" in out[1]["reason"]


def test_rollouts_errors_return():
    sim = Simulation(models.pendulum(1, actuated=True), 0.01)

    def setup(s, case):
        if case == "bad":
            def boom(_):
                raise RuntimeError("boom")
            return boom
        return None

    out = rollouts(sim, 5, ["ok", "bad", "ok"], setup=setup, fields="x", errors="return")
    assert isinstance(out[1], RuntimeError) and out[0]["x"].shape == (6, 1, 3)
    with pytest.raises(RuntimeError, match="boom"):
        rollouts(sim, 5, ["ok", "bad"], setup=setup, fields="x")
    with pytest.raises(ValueError):
        rollouts(sim, 5, ["ok"], errors="ignore")


def test_learning_on_dask_equals_in_process():
    distributed = pytest.importorskip("distributed")
    kw = {"episodes": 3, "duration": 0.05, "seed": 2, "samples": 2}
    local = gl.learn_to_walk(**kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=logging.CRITICAL,
                                  env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
            distributed.Client(cluster) as client:
        remote = gl.learn_to_walk(**kw, client=client, chunk=1)
    assert [e.accepted for e in local.episodes] == [e.accepted for e in remote.episodes]
    for a, b in zip(local.episodes, remote.episodes, strict=True):
        assert np.array_equal(a.params, b.params)
        # another process rounds BLAS reductions differently (tests/dynamics/test_rollouts.py)
        assert np.allclose(a.distances, b.distances, rtol=1e-9, atol=1e-12)
    assert np.allclose(local.distance, remote.distance, rtol=1e-9, atol=1e-12)
