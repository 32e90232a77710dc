"""Joint constraints and the Newton matrix of the maximal-coordinate integrator against finite
differences, and the numba kernels against the NumPy reference, for every joint of Table B.2."""
import dataclasses

import numpy as np
import pytest

from dynamics import quaternion as quat
from dynamics.maximal import MaximalModel, StepSystem
from dynamics.maximal import joints as jt
from dynamics.maximal.step_system import quaternion_update
from dynamics.models import rod
from dynamics.spec import JOINT_TYPES, WORLD, Joint, MechanismSpec
from tests.conftest import finite_difference_jacobian

ALL_TYPES = sorted(JOINT_TYPES)
#: joint types with at least one coordinate (a damper acts on their rates)
DAMPED_TYPES = sorted(t for t in JOINT_TYPES if t != "fixed")


def two_body(joint_type: str, spring=0.0, damper=0.0, actuated=False) -> MechanismSpec:
    """Body ``a`` on the world by a revolute, body ``b`` on ``a`` by ``joint_type``."""
    rng = np.random.default_rng(abs(hash(joint_type)) % 2**32)
    joints = (
        Joint("j0", "revolute", WORLD, "a", [0.1, 0.0, 0.0], [0.0, 0.0, 0.5], [1, 0, 0]),
        Joint("j1", joint_type, "a", "b", rng.normal(size=3) * 0.3, rng.normal(size=3) * 0.3,
              rng.normal(size=3), quat.normalize(rng.normal(size=4)), spring=spring,
              damper=damper, actuated=actuated),
    )
    return MechanismSpec((rod("a"), rod("b", 0.7, 2.0)), joints)


def random_poses(nb, rng):
    return (rng.normal(size=(nb, 3)), quat.normalize(rng.normal(size=(nb, 4))),
            rng.normal(size=(nb, 3)), rng.normal(size=(nb, 3)))


@pytest.mark.parametrize("joint_type", ALL_TYPES)
def test_constraint_derivatives_match_finite_differences(joint_type):
    js = MaximalModel(two_body(joint_type)).joints
    rng = np.random.default_rng(1)
    x, q, _, _ = random_poses(2, rng)
    ends = [np.array(a) for a in jt.endpoint_states(js, x, q)]
    _, dxa, dqa, dxb, dqb = jt.constraint_terms(js, *ends)
    eps = 1e-6
    for slot, analytic in ((0, dxa), (1, dqa), (2, dxb), (3, dqb)):
        for c in range(ends[slot].shape[1]):
            plus = [a.copy() for a in ends]
            minus = [a.copy() for a in ends]
            plus[slot][:, c] += eps
            minus[slot][:, c] -= eps
            fd = (jt.constraint_terms(js, *plus, jacobians=False)
                  - jt.constraint_terms(js, *minus, jacobians=False)) / (2 * eps)
            np.testing.assert_allclose(analytic[1, :, c], fd[1], atol=1e-8)


@pytest.mark.parametrize("joint_type", ALL_TYPES)
def test_selection_matches_table_b2(joint_type):
    spec = two_body(joint_type)
    js = MaximalModel(spec).joints
    j = spec.joints[1]
    assert js.n_constraints[1] == j.n_constraints == 6 - j.dof
    D = js.select[1, :j.n_constraints]
    C = js.free[1, :j.dof]
    # rows of D and C together span R^6 and are orthonormal within each 3-block
    assert np.linalg.matrix_rank(np.vstack([D, C])) == 6
    np.testing.assert_allclose(D @ C.T, 0.0, atol=1e-14)


@pytest.mark.parametrize("joint_type", ALL_TYPES)
def test_rate_map_is_the_derivative_of_the_minimal_coordinates(joint_type):
    """Joint-coordinate rates from the rate map == finite differences along a motion."""
    m = MaximalModel(two_body(joint_type))
    rng = np.random.default_rng(2)
    x, q, v, w = random_poses(2, rng)
    j = m.spec.joints[1]
    if j.rotational_dof == 1:
        # The angle rate equals axisᵀ ω_rel on the rotational constraint: put b on it and
        # keep it there (relative rotation about the axis only).
        qoff, axis = j.orientation_offset, j.axis
        q[1] = quat.multiply(quat.multiply(q[0], qoff), quat.from_axis_angle(axis, 0.4))
        Qa, Qb = quat.rotation_matrix(q[0]), quat.rotation_matrix(q[1])
        w[1] = Qb.T @ Qa @ (w[0] + quat.rotate(qoff, 0.8 * axis))
    rates = m.joint_velocities(x, q, v, w)
    h = 1e-6

    def coords(s):
        qs = quat.multiply(q, quat.from_rotation_vector(s * w))   # body-frame rotation
        return m.minimal_coordinates(x + s * v, qs)

    fd = (coords(h) - coords(-h)) / (2 * h)
    t = j.translational_dof
    np.testing.assert_allclose(rates[1, :t], fd[1, :t], rtol=1e-6, atol=1e-7)
    if j.rotational_dof == 1:          # for 3 rotational DOF the rate is ω_rel, not d(log)/dt
        np.testing.assert_allclose(rates[1, t], fd[1, t], rtol=1e-5, atol=1e-6)


def _system(spec, kernels, dt=0.01, seed=3, **begin):
    m = MaximalModel(spec)
    S = StepSystem(m, dt, kernels=kernels)
    rng = np.random.default_rng(seed)
    x, q, v, w = random_poses(m.n_bodies, rng)
    S.begin(x, q, v, w, **begin)
    s = S.pack(v, w, rng.normal(size=(len(m.joints), 6))) + 0.1 * rng.normal(size=S.N)
    return S, s


@pytest.mark.parametrize("joint_type", ALL_TYPES)
@pytest.mark.parametrize("projection", [False, True])
def test_newton_matrix_matches_finite_differences(joint_type, projection):
    spec = two_body(joint_type, spring=3.0)
    S, s = _system(spec, "reference", projection=projection)
    F = S.jacobian_reference(s).to_dense()
    fd = finite_difference_jacobian(S.residual_reference, s)
    np.testing.assert_allclose(F, fd, atol=2e-6 * max(1.0, np.abs(F).max()))


@pytest.mark.parametrize("joint_type", ALL_TYPES)
def test_compiled_kernels_match_reference(joint_type):
    spec = two_body(joint_type, spring=2.0, damper=0.7, actuated=True)
    forces = np.random.default_rng(4).normal(size=(2, 6))
    Sr, s = _system(spec, "reference", joint_forces=forces)
    Sc, _ = _system(spec, "compiled", joint_forces=forces)
    np.testing.assert_allclose(Sc.G, Sr.G, atol=1e-13)
    np.testing.assert_allclose(Sc.residual(s), Sr.residual(s), atol=1e-11)
    np.testing.assert_allclose(Sc.jacobian(s).data, Sr.jacobian(s).data, atol=1e-11)


def damped_two_body(joint_type: str, spring=40.0, damper=25.0) -> MechanismSpec:
    """:func:`two_body` with a strong spring and damper on both joints (the world joint too)."""
    spec = two_body(joint_type, spring=spring, damper=damper, actuated=True)
    j0 = dataclasses.replace(spec.joints[0], spring=spring, damper=damper)
    return dataclasses.replace(spec, joints=(j0, spec.joints[1]))


@pytest.mark.parametrize("joint_type", DAMPED_TYPES)
@pytest.mark.parametrize("kernels", ["reference", "compiled"])
def test_newton_matrix_with_springs_and_dampers_matches_finite_differences(joint_type,
                                                                           kernels):
    """The whole Newton matrix, including the damper blocks between the joint's two bodies
    (issue 24 class 5), is the derivative of the residual: central differences of the
    residual (no code of ours in the oracle but the residual itself)."""
    spec = damped_two_body(joint_type)
    forces = np.random.default_rng(6).normal(size=(2, 6))
    S, s = _system(spec, kernels, dt=1e-3, joint_forces=forces)
    F = S.jacobian(s).to_dense()
    fd = finite_difference_jacobian(S.residual, s)
    assert np.abs(F[:6, 6:12]).max() > 1.0          # the damper couples the two bodies
    np.testing.assert_allclose(F, fd, atol=2e-6 * max(1.0, np.abs(F).max()))


def test_damped_projection_step_has_no_damper_blocks():
    """The impulsive velocity projection (``begin(projection=True)``) has no damper; the
    body-body blocks written by the last dynamic step must be cleared."""
    spec = damped_two_body("revolute")
    S, s = _system(spec, "compiled")
    S.begin(S.x1, S.q1, S.v0, S.w0, projection=True)
    F = S.jacobian(s).to_dense()
    np.testing.assert_array_equal(F[:6, 6:12], 0.0)
    np.testing.assert_allclose(F, finite_difference_jacobian(S.residual, s), atol=1e-6)


@pytest.mark.parametrize("joint_type", DAMPED_TYPES)
def test_fused_newton_matches_reference_newton_with_dampers(joint_type):
    """The fused compiled Newton iteration and a NumPy-reference Newton iteration (reference
    residual and Jacobian, graphsolve solve) reach the same step solution, both converging
    quadratically."""
    spec = damped_two_body(joint_type)
    rng = np.random.default_rng(7)
    spec = spec.with_initial({j.name: rng.uniform(-0.5, 0.5, j.dof) for j in spec.joints},
                             {j.name: rng.uniform(-3, 3, j.dof) for j in spec.joints})
    m = MaximalModel(spec)
    x, q, v, w = m.initial_state()            # a state on the constraints, moving
    dt = 1e-3
    x1, q1 = x + dt * v, quaternion_update(q, w, dt)
    Sc = StepSystem(m, dt, kernels="compiled")
    Sr = StepSystem(m, dt, kernels="reference")
    for S in (Sc, Sr):
        S.begin(x1, q1, v, w, joint_forces=np.ones((2, 6)))
    s0 = Sc.pack(v, w, np.zeros((2, 6)))
    assert Sc.fused
    s = s0.copy()
    code, it, _, history = Sc.newton(s, 1e-12, 20, reuse=False)    # full Newton: quadratic
    assert code == 0 and it <= 6, history
    sr = s0.copy()
    f = Sr.residual(sr)
    ref_history = [np.abs(f).max()]
    while ref_history[-1] >= 1e-12 and len(ref_history) < 20:
        sr = sr + Sr.solve_linear(sr, f)
        f = Sr.residual(sr)
        ref_history.append(np.abs(f).max())
    np.testing.assert_allclose(s, sr, atol=1e-10 * max(1.0, np.abs(sr).max()))
    for h in (history, np.array(ref_history)):
        e = h[h > 1e-9]                      # above the rounding floor
        # quadratic: e_{k+1} <= C e_k² with a modest C (linear convergence gives C e_k⁻¹)
        assert np.all(e[1:] <= 1e3 * e[:-1] ** 2 + 1e-9), h


def test_quaternion_update_keeps_unit_norm_and_matches_eq_13():
    rng = np.random.default_rng(5)
    q = quat.normalize(rng.normal(size=(20, 4)))
    w = rng.normal(size=(20, 3)) * 5
    dt = 0.05
    q1 = quaternion_update(q, w, dt)
    np.testing.assert_allclose(np.linalg.norm(q1, axis=1), 1.0, atol=1e-14)
    # eq. (13): ω = (2/Δt) V L(q0)ᵀ q1
    np.testing.assert_allclose(2 / dt * quat.multiply(quat.conjugate(q), q1)[:, 1:], w,
                               atol=1e-12)
