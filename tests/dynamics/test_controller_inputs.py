"""A Python controller's inputs to ``Simulation.run``: the mapping ``{joint: inputs}`` and the
``(n_joints, 6)`` array give the same steps, and both refuse inputs on passive joints, beyond
a joint's coordinates and to unknown joints by name."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal.simulation import Simulation
from dynamics.spec import SpecError

K, D = 8.0, 0.5


def _pd_mapping(sim):
    q, v = sim.minimal_coordinates(), sim.minimal_velocities()
    return {name: -K * q[name] - D * v[name] for name in q}


def _pd_array(sim):
    return (-K * sim.minimal_coordinates(as_array=True)
            - D * sim.minimal_velocities(as_array=True))


@pytest.mark.parametrize("make", [lambda: models.pendulum(4, actuated=True),
                                  lambda: models.pendulum(3, "spherical", actuated=True)])
def test_array_controller_takes_the_mapping_controllers_steps(make):
    runs = []
    for controller in (_pd_mapping, _pd_array):
        sim = Simulation(make(), dt=0.01)
        runs.append(sim.run(30, controller=controller, progress=False))
    a, b = runs
    for field in ("x", "q", "v", "w", "iterations"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    # the PD inputs acted: the trajectory differs from the uncontrolled one
    free = Simulation(make(), dt=0.01).run(30, progress=False)
    assert not np.allclose(free.q, a.q)


def test_as_array_holds_the_mapping_padded():
    sim = Simulation(models.pendulum(3, "spherical", actuated=True), dt=0.01)
    sim.run(5, progress=False)
    names, dof = sim.model.joints.names, sim.model.joints.dof
    for array, mapping in ((sim.minimal_coordinates(True), sim.minimal_coordinates()),
                           (sim.minimal_velocities(True), sim.minimal_velocities())):
        assert array.shape == (len(names), 6)
        for k, name in enumerate(names):
            assert np.array_equal(array[k, :dof[k]], mapping[name])
            assert np.all(array[k, dof[k]:] == 0.0)


def test_array_inputs_on_a_passive_joint_are_refused():
    sim = Simulation(models.pendulum(2), dt=0.01)           # passive joints
    u = np.zeros((2, 6))
    u[1, 0] = 1.0
    with pytest.raises(SpecError, match="'joint2' is not actuated"):
        sim.run(1, controller=lambda s: u, progress=False)
    assert sim.t == 0.0
    sim.run(2, controller=lambda s: np.zeros((2, 6)), progress=False)  # zeros are no inputs


def test_array_inputs_beyond_a_joints_coordinates_are_refused():
    sim = Simulation(models.pendulum(2, actuated=True), dt=0.01)
    u = np.zeros((2, 6))
    u[0, 3] = 1.0
    with pytest.raises(ValueError, match="'joint1' takes 1 inputs, got a nonzero input in "
                                         "column 3"):
        sim.run(1, controller=lambda s: u, progress=False)


def test_array_inputs_of_the_wrong_shape_are_refused():
    sim = Simulation(models.pendulum(2, actuated=True), dt=0.01)
    with pytest.raises(ValueError, match=r"do not broadcast to \(n_joints, 6\) = \(2, 6\)"):
        sim.run(1, controller=lambda s: np.zeros((3, 6)), progress=False)


def test_mapping_inputs_name_their_joint():
    sim = Simulation(models.pendulum(2, actuated=True), dt=0.01)
    with pytest.raises(SpecError, match="no joint named 'elbow'"):
        sim.run(1, controller=lambda s: {"elbow": [1.0]}, progress=False)
    with pytest.raises(ValueError, match="'joint2' takes 1 inputs"):
        sim.run(1, controller=lambda s: {"joint2": [1.0, 2.0]}, progress=False)
