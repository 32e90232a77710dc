"""Loop-closed mechanisms in minimal coordinates (comparisons.constrained_minimal).

Oracles: the parallelogram four-bar is a one-degree-of-freedom pendulum whose equation of motion
follows from its Lagrangian by hand (solved here with scipy's solve_ivp), and the loop geometry
(bar parallel to the ground, equal crank angles).
"""

import numpy as np
import pytest
import scipy.integrate
import scipy.optimize

from comparisons.constrained_minimal import simulate_constrained_pinocchio, tree_part
from comparisons.peer_tree import UnsupportedMechanismError
from dynamics import models
from dynamics.spec import Joint, MechanismSpec

pytest.importorskip("pinocchio")


def fourbar_angle(spec: MechanismSpec, t: np.ndarray, theta0: float) -> np.ndarray:
    """Crank angle of the parallelogram: (2 J_pivot + m_bar l²) θ'' = -(m g l + m_bar g l) sin θ
    (two cranks of mass m and length l about their pivots, a bar that translates)."""
    crank, bar = spec.bodies[0], spec.bodies[1]
    length, g = 1.0, 9.81
    J_pivot = crank.inertia[0, 0] + crank.mass * (length / 2) ** 2
    inertia = 2 * J_pivot + bar.mass * length**2
    torque = (crank.mass * g * length + bar.mass * g * length) / inertia

    def rhs(_, y):
        return [y[1], -torque * np.sin(y[0])]

    sol = scipy.integrate.solve_ivp(rhs, (0.0, t[-1]), [theta0, 0.0], t_eval=t, rtol=1e-12,
                                    atol=1e-12, method="DOP853")
    return sol.y[0]


def test_fourbar_follows_the_one_dof_pendulum_and_keeps_its_shape():
    spec = models.fourbar(initial_angle=np.pi / 3)
    out = simulate_constrained_pinocchio(spec, 1e-3, 2000, integrator="rk4")
    assert out["coordinates"].keys() == {"joint_left", "joint_bar", "joint_right"}
    left = out["coordinates"]["joint_left"][:, 0]
    np.testing.assert_allclose(left, fourbar_angle(spec, out["t"], np.pi / 3), atol=1e-9)
    np.testing.assert_allclose(out["coordinates"]["joint_right"][:, 0], left, atol=1e-9)
    np.testing.assert_allclose(out["coordinates"]["joint_bar"][:, 0], -left, atol=1e-9)
    assert np.ptp(left) > 2.0                                 # it really swings
    assert np.ptp(out["energy"]) < 1e-9 * abs(out["energy"][0])


def skewed_fourbar(ground: float = 0.7) -> MechanismSpec:
    """models.fourbar() with the ground pivots ``ground`` m apart: no longer a parallelogram,
    so the loop is a curve (not a line) in joint space; angles closing the loop by fsolve."""
    base, angle, w = models.fourbar(), np.pi / 4, np.sqrt(2.0) / 2.0

    def gap(x):
        phi, right = x
        return [np.sin(angle) + w * np.cos(phi) - ground - np.sin(right),
                -np.cos(angle) + w * np.sin(phi) + np.cos(right)]

    phi, right = scipy.optimize.fsolve(gap, [0.0, angle], xtol=1e-15)
    joints = [Joint(j.name, j.type, j.parent, j.child,
                    (0.0, ground, 0.0) if j.name == "joint_right" else j.parent_point,
                    j.child_point, j.axis, j.orientation_offset) for j in base.joints]
    return MechanismSpec(base.bodies, joints, initial_positions={
        "joint_left": [angle], "joint_bar": [phi - angle], "joint_right": [right]})


def test_acceleration_level_constraints_drift_without_stabilization():
    out = simulate_constrained_pinocchio(skewed_fourbar(), 0.01, 1000, integrator="rk4")
    c = out["constraint_violation"]
    assert c[0] < 1e-12 and c.shape == (1001,)
    assert 1e-9 < c[-1] < 1e-3                                # drift ...
    assert np.max(c[:100]) < 0.1 * c[-1]                      # ... growing over time
    # the parallelogram's loop is a straight line in joint space that every Runge-Kutta stage
    # stays on: only round-off drifts
    assert simulate_constrained_pinocchio(models.fourbar(), 0.01, 1000)[
        "constraint_violation"].max() < 1e-11


def test_violation_output_is_the_gap_between_the_attachment_points():
    spec = skewed_fourbar()
    out = simulate_constrained_pinocchio(spec, 0.02, 300, integrator="heun", poses=True)
    bar, right = out["body_positions"][:, 1], out["body_positions"][:, 2]
    Rb, Rr = out["body_rotations"][:, 1], out["body_rotations"][:, 2]
    half = np.array([0.0, 0.0, 0.5])
    gap = (right - Rr @ half) - (bar - Rb @ (np.sqrt(2.0) / 2.0 * half))
    np.testing.assert_allclose(out["constraint_violation"], np.abs(gap[:, 1:]).max(axis=1),
                               rtol=1e-6, atol=1e-15)
    assert out["constraint_violation"][-1] > 1e-7            # Heun drifts visibly


def test_initial_velocities_are_projected_onto_the_loop_constraints():
    spec = models.fourbar().with_initial(velocities={"joint_left": [1.0], "joint_bar": [0.3]})
    out = simulate_constrained_pinocchio(spec, 1e-3, 200)
    assert out["constraint_violation"].max() < 1e-10
    v0 = out["v"][0]
    assert abs(v0[2] - v0[0]) < 1e-12 and abs(v0[1] + v0[0]) < 1e-12   # a parallelogram motion


def test_unsupported_loop_joints_are_rejected():
    spec = models.fourbar()
    closure = spec.joint("closure")
    revolute = MechanismSpec(spec.bodies, spec.tree_joints + (Joint(
        "closure", "revolute", closure.parent, closure.child, closure.parent_point,
        closure.child_point, closure.axis),), initial_positions=spec.initial_positions)
    with pytest.raises(UnsupportedMechanismError, match="closure.*constrains rotation"):
        simulate_constrained_pinocchio(revolute, 0.01, 1)
    skew = [Joint(j.name, j.type, j.parent, j.child, j.parent_point, j.child_point,
                  (1.0, 0.0, 0.2) if j.name == "joint_bar" else j.axis, j.orientation_offset)
            for j in spec.joints]
    with pytest.raises(UnsupportedMechanismError, match="planar mechanism.*joint_bar"):
        simulate_constrained_pinocchio(MechanismSpec(spec.bodies, skew), 0.01, 1)
    ball = [Joint(j.name, "spherical" if j.name == "joint_bar" else j.type, j.parent, j.child,
                  j.parent_point, j.child_point, j.axis, j.orientation_offset)
            for j in spec.joints]              # a ball joint turns its parent about any axis
    with pytest.raises(UnsupportedMechanismError, match="planar mechanism.*joint_bar"):
        simulate_constrained_pinocchio(MechanismSpec(spec.bodies, ball), 0.01, 1)
    assert [j.name for j in tree_part(spec).joints] == ["joint_left", "joint_bar", "joint_right"]
    with pytest.raises(ValueError, match="unknown integrator"):
        simulate_constrained_pinocchio(spec, 0.01, 1, integrator="rk45")


def test_controller_inputs_hold_a_five_bar_leg_and_must_be_actuated():
    """A controller holding the motors at their start angles (PD) keeps the leg near rest; the
    inputs are recorded per step; inputs on an unactuated joint are refused."""
    spec = models.five_bar_leg(motor_angles=(0.8, -0.8))

    def hold(t, pos, vel):
        return {j: [5.0 * (a - pos[j][0]) - 0.2 * vel[j][0]]
                for j, a in (("hip_a", 0.8), ("hip_b", -0.8))}

    out = simulate_constrained_pinocchio(spec, 0.001, 300, controller=hold)
    angles = out["coordinates"]
    assert abs(angles["hip_a"][-1, 0] - 0.8) < 0.05 and abs(angles["hip_b"][-1, 0] + 0.8) < 0.05
    assert out["inputs"]["hip_a"].shape == (300, 1)
    free = simulate_constrained_pinocchio(spec, 0.001, 300)
    assert abs(free["coordinates"]["hip_a"][-1, 0] - 0.8) > 0.1      # gravity alone moves it
    with pytest.raises(ValueError, match="not actuated"):
        simulate_constrained_pinocchio(models.five_bar_leg(actuated=False), 0.001, 3,
                                       controller=hold)
