"""Simulation.run records states per step and computes the derived Trajectory fields lazily:
the values equal the former eager recording (reproduced here from the model's public methods,
over the whole time axis at once), and ``record=`` selects what is kept."""
from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import Simulation, Trajectory
from dynamics.maximal.simulation import _products, _rotation_rate

DERIVED = ("minimal_coordinates", "minimal_velocities", "coordinate_names", "kinetic_energy",
           "potential_energy", "energy", "constraint_violation", "contact_names",
           "contact_distance", "complementarity")


def _sprung_pendulum():
    spec = models.pendulum(3, damper=0.2)
    joints = tuple(dataclasses.replace(j, spring=3.0, spring_offset=np.array([0.1]))
                   for j in spec.joints)
    return dataclasses.replace(spec, joints=joints)


def _actuated():
    spec = models.pendulum(2, actuated=True)
    return spec, lambda sim: {"joint1": np.array([0.5 * np.sin(sim.t)])}


CASES = {
    "revolute": lambda: (models.pendulum(4), None),
    "spherical": lambda: (models.pendulum(3, "spherical"), None),
    "springs": lambda: (_sprung_pendulum(), None),
    "loop": lambda: (models.fourbar(), None),
    "actuated": _actuated,
    "sphere_chain": lambda: (models.sphere_chain(3), None),
    "box_drop": lambda: (models.box_drop(), None),
    "quadruped": lambda: (models.quadruped(), None),
    "sphere_stack": lambda: (models.sphere_stack(2), None),
}


def _eager(sim: Simulation, traj: Trajectory, comp_steps: list[float]) -> dict:
    """The derived fields as the former ``run`` computed them after the loop."""
    m, js, dt = sim.model, sim.model.joints, sim.dt
    xs, qs, vs, ws = traj.x, traj.q, traj.v, traj.w
    T = len(traj.t)
    wr = _rotation_rate(ws, dt)
    va, wa = vs.copy(), wr.copy()
    va[1:] = 0.5 * (vs[1:] + vs[:-1])
    wa[1:] = 0.5 * (wr[1:] + wr[:-1])
    kin = m.kinetic_energy(va, wa)
    pot = m.potential_energy(xs, qs)
    cs = m.minimal_coordinates(xs, qs)
    cvs = m.joint_velocities(xs, qs, vs, ws)
    cols, names, angle_cols = [], [], []
    for k, name in enumerate(js.names):
        d, t = int(js.dof[k]), int(js.translational_dof[k])
        for i in range(d):
            if i == t and js.rotational_dof[k] == 1:
                angle_cols.append(len(cols))
            cols.append((k, i))
            names.append(name if d == 1 else f"{name}[{i}]")
    idx_k = np.array([c[0] for c in cols], dtype=np.int64)
    idx_i = np.array([c[1] for c in cols], dtype=np.int64)
    mc, mv = cs[:, idx_k, idx_i], cvs[:, idx_k, idx_i]
    for c in angle_cols:
        mc[:, c] = np.unwrap(mc[:, c])
    groups = sim.system.contacts
    return dict(minimal_coordinates=mc, minimal_velocities=mv, coordinate_names=tuple(names),
                kinetic_energy=kin, potential_energy=pot, energy=kin + pot,
                constraint_violation=m.constraint_violation(xs, qs),
                contact_names=tuple(n for g in groups for n in g.names),
                contact_distance=np.concatenate([g.distance(xs, qs) for g in groups]
                                                + [np.zeros((T, 0))], axis=1),
                complementarity=np.array([0.0] + comp_steps))


def _run_with_eager_complementarity(spec, controller, steps, **kwargs):
    """Run, and beside it collect ``sim.complementarity()`` after every step (the former
    per-step recording) through the controller hook."""
    sim = Simulation(spec, dt=0.01)
    comp, start = [], sim.t

    def hook(s):
        if s.t > start + 1e-12:
            comp.append(s.complementarity())
        return controller(s) if controller is not None else None

    traj = sim.run(steps, controller=hook, progress=False, **kwargs)
    comp.append(sim.complementarity())
    return sim, traj, comp


@pytest.mark.parametrize("case", sorted(CASES))
def test_lazy_fields_equal_the_eager_recording(case):
    spec, controller = CASES[case]()
    sim, traj, comp = _run_with_eager_complementarity(spec, controller, 40)
    assert not any(f"_value_{name}" in traj.__dict__ for name in DERIVED)   # nothing computed
    ref = _eager(sim, traj, comp)
    for name in DERIVED:
        got, want = getattr(traj, name), ref[name]
        if isinstance(want, tuple):
            assert got == want, name
        else:
            assert got.shape == want.shape, name
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)
        assert getattr(traj, name) is got                       # cached
    assert traj.t.shape == (41,) and traj.iterations[0] == 0 and len(traj.residual_history) == 40
    if sim.system.contacts:
        assert traj.complementarity[1:].max() > 0


def test_chunked_derived_fields_over_a_long_run():
    """More time points than one chunk (``_CHUNK`` // joints): chunking changes nothing."""
    sim = Simulation(models.pendulum(60), dt=0.01)
    traj = sim.run(150, progress=False)
    ref = _eager(sim, traj, [0.0] * 150)
    for name in ("minimal_coordinates", "minimal_velocities", "potential_energy",
                 "constraint_violation"):
        np.testing.assert_allclose(getattr(traj, name), ref[name], rtol=1e-12, atol=1e-12)


def test_record_states_keeps_only_the_states():
    spec = models.sphere_chain(2)
    full = Simulation(spec, dt=0.01).run(20, progress=False)
    lean = Simulation(spec, dt=0.01).run(20, progress=False, record="states")
    for name in ("t", "x", "q", "v", "w", "iterations"):
        np.testing.assert_array_equal(getattr(lean, name), getattr(full, name))
    for name in DERIVED + ("residual_history",):
        assert getattr(lean, name) is None, name


def test_record_names_keep_those_fields():
    spec = models.sphere_chain(2)
    full = Simulation(spec, dt=0.01).run(20, progress=False)
    traj = Simulation(spec, dt=0.01).run(20, progress=False,
                                         record=("energy", "complementarity"))
    np.testing.assert_array_equal(traj.energy, full.energy)
    np.testing.assert_array_equal(traj.complementarity, full.complementarity)
    assert traj.contact_names == full.contact_names            # the label follows its array
    assert traj.kinetic_energy is None and traj.minimal_coordinates is None
    assert traj.coordinate_names is None and traj.residual_history is None
    one = Simulation(spec, dt=0.01).run(5, progress=False, record="minimal_coordinates")
    assert one.coordinate_names == full.coordinate_names and one.energy is None


@pytest.mark.parametrize("bad", ["everything", ("energy", "energies"), 3, ("x", 1)])
def test_bad_record_names_the_argument(bad):
    sim = Simulation(models.pendulum(1), dt=0.01)
    with pytest.raises(ValueError, match="record must be 'all', 'states' or Trajectory field"):
        sim.run(3, progress=False, record=bad)
    assert sim.t == 0.0                                         # refused before stepping


def test_trajectory_stays_a_frozen_dataclass():
    traj = Simulation(models.box_drop(), dt=0.01).run(10, progress=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        traj.energy = np.zeros(11)
    copy = pickle.loads(pickle.dumps(traj))
    np.testing.assert_array_equal(copy.energy, traj.energy)
    np.testing.assert_array_equal(copy.contact_distance, traj.contact_distance)
    assert "_recording" not in copy.__dict__
    moved = dataclasses.replace(traj, t=traj.t + 1.0)
    np.testing.assert_array_equal(moved.complementarity, traj.complementarity)
    values = [getattr(traj, f.name) for f in dataclasses.fields(Trajectory)]
    again = Trajectory(*values)                                 # positional, as before
    np.testing.assert_array_equal(again.constraint_violation, traj.constraint_violation)
    assert Trajectory(traj.t, traj.x, traj.q, traj.v, traj.w).energy is None


def test_zero_steps_and_products_helper():
    sim = Simulation(models.sphere_chain(1), dt=0.01)
    traj = sim.run(0, progress=False)
    assert traj.x.shape[0] == 1 and traj.residual_history == ()
    np.testing.assert_array_equal(traj.complementarity, [0.0])
    sim.step()
    grp = sim.system.contacts[0]
    want = max(float(np.max(np.abs(p))) for p in _products(grp, sim.contact_variables[0]))
    assert sim.complementarity() == want
