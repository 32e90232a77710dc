"""Many rollouts of one model (:func:`dynamics.rollouts.rollouts`): in process and on a real Dask
``LocalCluster`` (2 worker processes, one thread each), each equal to its own new
``Simulation`` run by itself. One cluster for the module; short runs, no timing."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import Simulation, pd_controller
from dynamics.rollouts import rollouts, run_one
from dynamics.spec import SpecError

distributed = pytest.importorskip("distributed")

STEPS = 30
REMOTE_RTOL = 1e-11
ARRAYS = ("t", "x", "q", "v", "w", "iterations", "energy", "minimal_coordinates",
          "constraint_violation")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=logging.CRITICAL,
                                  env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def spec():
    return models.pendulum(3)


@pytest.fixture(scope="module")
def cases():
    return [{"positions": {"joint1": [a]}, "velocities": {"joint2": [0.5 * a]}}
            for a in np.linspace(0.1, 1.2, 7)]


def _same(a, b, names=ARRAYS, rtol=1e-14):
    """Equal trajectories (``rtol`` relative to the larger of 1 and the reference's largest
    entry). In one process the runs are bitwise equal; a worker process has its own numba
    thread count and BLAS, whose reductions round differently (measured: 9e-14 after 30 steps),
    so trajectories from the cluster get :data:`REMOTE_RTOL`."""
    for name in names:
        x, y = (np.asarray(getattr(t, name) if not isinstance(t, dict) else t[name])
                for t in (a, b))
        assert x.shape == y.shape, name
        assert np.max(np.abs(x - y), initial=0.0) <= rtol * max(np.max(np.abs(y)), 1.0), name


def test_each_rollout_is_its_own_new_simulation(spec, cases):
    sim = Simulation(spec, dt=0.01)
    before = (sim.x.copy(), sim.t)
    got = rollouts(sim, STEPS, cases)
    assert len(got) == len(cases)
    for case, traj in zip(cases, got, strict=True):
        alone = Simulation(spec.with_initial(case["positions"], case["velocities"]), dt=0.01)
        _same(traj, alone.run(STEPS, progress=False))
    assert np.array_equal(sim.x, before[0]) and sim.t == before[1]   # template untouched
    # (x, q, v, w) states, and None: the template's own state
    states = [(t.x[9], t.q[9], t.v[9], t.w[9]) for t in got[:3]] + [None]
    for state, traj in zip(states, rollouts(sim, STEPS, states), strict=True):
        alone = Simulation(spec, dt=0.01)
        if state is not None:
            alone.set_state(*state)
        _same(traj, alone.run(STEPS, progress=False))


def test_dask_rollouts_equal_in_process(client, spec, cases):
    sim = Simulation(spec, dt=0.01)
    local = rollouts(sim, STEPS, cases)
    for chunk in (None, 3):
        remote = rollouts(sim, STEPS, cases, client=client, chunk=chunk)
        for a, b in zip(remote, local, strict=True):
            _same(a, b, rtol=REMOTE_RTOL)
    some = rollouts(sim, STEPS, cases, fields=("q", "energy"), client=client)
    assert set(some[0]) == {"q", "energy"}
    for a, b in zip(some, local, strict=True):
        _same(a, b, ("q", "energy"), rtol=REMOTE_RTOL)


def test_parameter_sweep_with_setup(client):
    sim = Simulation(models.pendulum(2, actuated=True, damper=0.1), dt=0.01)

    def setup(s, kp):                   # a parameter per rollout: the controller's gain
        return pd_controller({"joint1": 0.0, "joint2": 0.0}, kp=kp, kd=1.0)

    def final_angle(traj):
        return traj.minimal_coordinates[-1].copy()

    gains = [1.0, 10.0, 50.0]
    local = rollouts(sim, STEPS, gains, setup=setup, output=final_angle)
    remote = rollouts(sim, STEPS, gains, setup=setup, output=final_angle, client=client)
    for g, a, b in zip(gains, local, remote, strict=True):
        assert np.allclose(a, b, rtol=REMOTE_RTOL, atol=REMOTE_RTOL)
        alone = Simulation(models.pendulum(2, actuated=True, damper=0.1), dt=0.01)
        ref = alone.run(STEPS, controller=setup(None, g), progress=False)
        assert np.array_equal(a, ref.minimal_coordinates[-1])
    assert not np.allclose(local[0], local[2])            # the gains made a difference


def test_errors(client, spec):
    sim = Simulation(spec, dt=0.01)
    bad = [None, {"positions": {"no such joint": [0.1]}}]
    with pytest.raises(SpecError):
        rollouts(sim, 5, bad)
    with pytest.raises(SpecError):
        rollouts(sim, 5, bad, client=client)
    with pytest.raises(ValueError, match="rollout case"):
        rollouts(sim, 5, ["not a state"])
    with pytest.raises(ValueError, match="fields or output"):
        rollouts(sim, 5, [None], fields="x", output=len)
    with pytest.raises(TypeError, match="Simulation"):
        rollouts(spec, 5, [None])
    assert rollouts(sim, 5, [], client=client) == []


def test_without_dask(monkeypatch, spec):
    monkeypatch.setitem(sys.modules, "distributed", None)      # as if not installed
    sim = Simulation(spec, dt=0.01)
    assert len(rollouts(sim, 3, [None])) == 1                  # in process: no Dask needed
    with pytest.raises(ImportError, match=r"pip install graphsolve\[dask\]"):
        rollouts(sim, 3, [None], client=object())


def test_set_coordinates_is_the_spec_with_initial_coordinates():
    spec = models.fourbar()
    sim = Simulation(spec, dt=0.01)
    pos = {"joint_left": [0.5], "joint_bar": [-0.5], "joint_right": [0.5]}
    sim.set_coordinates(pos)
    assert np.allclose(sim.spec.initial_positions["joint_left"], 0.5)
    alone = Simulation(spec.with_initial(pos), dt=0.01)
    _same(sim.run(10, progress=False), alone.run(10, progress=False))
    with pytest.raises(SpecError, match="loop joints must close"):
        Simulation(spec, dt=0.01).set_coordinates({"joint_left": [0.3]})
    one = run_one(Simulation(spec, dt=0.01), 10, {"positions": pos}, fields="x")
    assert set(one) == {"x"} and one["x"].shape == (11, len(spec.bodies), 3)
