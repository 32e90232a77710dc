"""The five-bar leg and the Minitaur-like quadruped of Brüdigam & Manchester 2020 Fig. 7."""

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import Simulation


def test_five_bar_pose_closes_the_loop_and_stretches_at_equal_motor_angles():
    for ta, tb in ((0.8, -0.8), (0.9, -0.5), (0.3, 1.4), (-0.2, 0.1)):
        pa, pb, foot = models.five_bar_pose(ta, tb, 0.1, 0.2)
        for t, p in ((ta, pa), (tb, pb)):
            knee = 0.1 * np.array([np.sin(t), -np.cos(t)])
            end = knee + 0.2 * np.array([np.sin(t + p), -np.cos(t + p)])
            assert np.allclose(end, foot, atol=1e-14)
        assert np.linalg.norm(foot) > 0.1          # the working (lower) assembly mode
    pa, pb, foot = models.five_bar_pose(0.4, 0.4)
    assert pa == pytest.approx(0.0) and pb == pytest.approx(0.0)
    assert np.linalg.norm(foot) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        models.five_bar_pose(0.1, 0.2, 0.2, 0.1)


def test_five_bar_leg_counts_and_closed_loop():
    spec = models.five_bar_leg()
    assert len(spec.bodies) == 4 and [j.name for j in spec.loop_joints] == ["foot"]
    cons = sum(j.n_constraints for j in spec.joints)
    assert 6 * len(spec.bodies) - cons == 2                   # two motors, two DOF
    sim = Simulation(spec, 0.01)
    assert sim.model.constraint_violation(sim.x, sim.q) < 1e-12


def test_minitaur_counts_mass_and_standing_start():
    spec = models.minitaur()
    assert len(spec.bodies) == 17 and len(spec.loop_joints) == 4 and len(spec.contacts) == 4
    cons = sum(j.n_constraints for j in spec.joints)
    assert 6 * len(spec.bodies) - cons == 6 + 4 * 2
    assert sum(b.mass for b in spec.bodies) == pytest.approx(6.0)
    assert sum(j.actuated for j in spec.joints) == 8
    sim = Simulation(spec, 0.001)
    assert sim.model.constraint_violation(sim.x, sim.q) < 1e-12
    phi = np.concatenate([g.distance(sim.x, sim.q) for g in sim.system.contacts])
    assert np.allclose(phi, 0.001, atol=1e-12)                 # all feet just above ground


def test_unpowered_leg_through_its_singular_configuration_conserves_energy():
    """No motors, no damping: the leg swings through the stretched configuration (equal motor
    angles, overlapping links) and its energy stays within a small band, loops closed."""
    spec = models.five_bar_leg(motor_angles=(0.8, -0.8), actuated=False)
    tr = Simulation(spec, 0.005).run(400, progress=False)
    n = tr.coordinate_names
    gap = tr.minimal_coordinates[:, n.index("hip_a")] - tr.minimal_coordinates[:, n.index("hip_b")]
    assert np.count_nonzero(np.diff(np.sign(gap))) >= 4       # passes it repeatedly
    assert tr.constraint_violation.max() < 1e-8
    drift = np.abs(tr.energy - tr.energy[0]).max()
    assert drift < 5e-3 * np.ptp(tr.kinetic_energy)
    late = np.abs(tr.energy[200:] - tr.energy[0]).max()
    assert late < 2 * np.abs(tr.energy[:200] - tr.energy[0]).max() + 1e-12   # no growth


def test_leg_with_hip_springs_conserves_spring_and_gravity_energy():
    spec = models.five_bar_leg(motor_angles=(0.8, -0.8), actuated=False, hip_spring=0.05,
                               hip_rest=(0.0, 0.0))
    tr = Simulation(spec, 0.005).run(200, progress=False)
    assert tr.constraint_violation.max() < 1e-8
    assert np.abs(tr.energy - tr.energy[0]).max() < 5e-3 * np.ptp(tr.kinetic_energy)
