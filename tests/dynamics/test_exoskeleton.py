"""The arm exoskeleton of Brüdigam et al. (2023) Fig. 14 (dynamics.models.arm_exoskeleton): two
closed loops through spring-damper cuffs, simulated in maximal coordinates."""

import numpy as np
import pytest

from dynamics import models
from dynamics import quaternion as quat
from dynamics.maximal import Simulation, pd_controller
from dynamics.maximal.mechanism import MaximalModel
from dynamics.maximal.step_system import StepSystem


def constraint_jacobian(spec) -> np.ndarray:
    """Finite-difference Jacobian of the selected constraint rows with respect to the body
    positions and body-frame rotation vectors at the spec's initial pose."""
    m = MaximalModel(spec)
    x, q, _, _ = m.initial_state()
    rows = np.abs(m.joints.select).sum(axis=-1) > 0

    def g(x, q):
        return m.constraint_residual(x, q)[rows]

    base, h, cols = g(x, q), 1e-7, []
    for b in range(m.n_bodies):
        for i in range(3):
            xp = x.copy()
            xp[b, i] += h
            cols.append((g(xp, q) - base) / h)
        for i in range(3):
            qp = q.copy()
            qp[b] = quat.multiply(q[b], quat.from_rotation_vector(h * np.eye(3)[i]))
            cols.append((g(x, qp) - base) / h)
    return np.array(cols).T


def test_two_loops_and_two_degrees_of_freedom():
    spec = models.arm_exoskeleton()
    assert [j.name for j in spec.loop_joints] == ["cuff_upper", "cuff_fore"]
    assert all(j.type == "planar" and j.dof == 3 and j.spring > 0 and j.damper > 0
               for j in spec.loop_joints)
    J = constraint_jacobian(spec)
    assert J.shape == (34, 36)
    assert np.linalg.matrix_rank(J, tol=1e-6 * np.linalg.norm(J, 2)) == 34


@pytest.mark.parametrize("shoulder", np.linspace(0.0, np.pi / 2, 3))
@pytest.mark.parametrize("elbow", np.linspace(-np.pi / 2, 0.0, 5))
def test_loop_constraints_stay_independent_over_the_task(shoulder, elbow):
    """Algorithm 8's task covers shoulder [0, π/2] and elbow [-π/2, 0], ends included."""
    J = constraint_jacobian(models.arm_exoskeleton(shoulder=shoulder, elbow=elbow))
    s = np.linalg.svd(J, compute_uv=False)
    assert s[-1] > 1e-3 * s[0]


def test_unknown_patient():
    with pytest.raises(ValueError, match="patient"):
        models.arm_exoskeleton("tired")


def test_every_joint_pivots_after_its_bodies_only_where_needed():
    """The exoskeleton's graph order would pivot the human elbow after the upper arm and its
    spherical shoulder (8 constraint rows on one body: singular); its joints are pivoted after
    their bodies. Mechanisms whose graph order is safe keep it (tests/dynamics/
    test_elimination_order.py checks the orders and the singular pivot itself)."""
    assert StepSystem(MaximalModel(models.arm_exoskeleton()), 0.002).joints_deferred
    for spec in (models.fourbar(), models.double_fourbar(), models.segment_chain(3),
                 models.pendulum(3, "spherical")):
        assert not StepSystem(MaximalModel(spec), 0.002).joints_deferred


@pytest.mark.parametrize("patient", sorted(models.PATIENTS))
def test_passive_arm_keeps_its_loops_and_loses_energy(patient):
    """No controller: gravity, the cuff springs and the dampers only. The loops stay closed
    and the total energy (kinetic, gravity, springs) never grows by more than the
    integrator's O(Δt²) fluctuation while the dampers take it away."""
    spec = models.arm_exoskeleton(patient, shoulder=np.pi / 3, elbow=-np.pi / 3,
                                  shoulder_rate=0.5, elbow_rate=-0.5)
    tr = Simulation(spec, 0.002).run(1000, progress=False)
    assert tr.constraint_violation.max() < 1e-9
    e = tr.energy[1:]         # t = 0 has one interval velocity only, not the two-sided mean
    assert e[-1] < e[0] - 0.1                       # dissipated: J
    rise = np.maximum.accumulate(e[::-1])[::-1] - e    # later energy above the current
    assert rise.max() < 1e-3 * (e[0] - e[-1])


def test_the_arm_follows_the_exoskeleton_through_the_cuffs():
    """Under a constant elbow torque the exoskeleton drives the human forearm through the
    cuffs. The joint axes of arm and exoskeleton are aligned, so a motion in the sagittal
    plane is transmitted by the cuffs' constrained directions: both elbows move together
    and the cuff springs stay at rest."""
    spec = models.arm_exoskeleton("healthy")
    sim = Simulation(spec, 0.002)
    tr = sim.run(500, lambda s: {"exo_elbow": [-6.0]}, progress=False)
    names = tr.coordinate_names
    exo, arm = (tr.minimal_coordinates[:, names.index(n)] for n in ("exo_elbow", "elbow"))
    assert exo[-1] < exo[0] - 0.3                    # flexed further by the torque
    assert np.abs(exo - arm).max() < 1e-9
    cuff = [names.index(n) for n in names if n.startswith("cuff")]
    assert np.abs(tr.minimal_coordinates[:, cuff]).max() < 1e-9


def test_pd_controller_desired_rates():
    class FakeSim:
        t = 1.0

        def minimal_coordinates(self):
            return {"j": np.array([0.5])}

        def minimal_velocities(self):
            return {"j": np.array([2.0])}

    plain = pd_controller({"j": 1.0}, kp=10.0, kd=3.0)(FakeSim())
    assert plain["j"][0] == pytest.approx(10.0 * 0.5 - 3.0 * 2.0)
    tracking = pd_controller(lambda t: {"j": t}, 10.0, {"j": 3.0},
                             rates=lambda t: {"j": 4.0 * t})(FakeSim())
    assert tracking["j"][0] == pytest.approx(10.0 * 0.5 + 3.0 * (4.0 - 2.0))
