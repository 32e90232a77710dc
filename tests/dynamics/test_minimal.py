"""dynamics.minimal without Pinocchio: internal identities (ABA inverts RNEA, CRBA is the
Jacobian of RNEA in a), physics (energy conservation under RK4, free rigid bodies), the tree
built from a spec, coordinate conversions, and one test per failure mode."""
from __future__ import annotations

import doctest

import numpy as np
import pytest

import dynamics.minimal
from dynamics import models
from dynamics.minimal import (
    Model,
    TreeModelError,
    aba,
    algorithms,
    configuration,
    crba,
    difference,
    forward_kinematics,
    from_spec_coordinates,
    initial_state,
    integrate,
    joints,
    kinetic_energy,
    neutral,
    nonlinear_effects,
    normalize,
    potential_energy,
    random_configuration,
    rnea,
    spatial,
    to_spec_coordinates,
)
from dynamics.minimal import (
    model as model_module,
)
from dynamics.spec import WORLD, Body, Joint, MechanismSpec, SpecError
from tests.dynamics.minimal_trees import random_spec, random_tree_urdf, rel_error


# -- identities on random trees -------------------------------------------------------------
@pytest.mark.parametrize("rotation", ["quaternion", "rotation_vector"])
@pytest.mark.parametrize("seed", range(30))
def test_aba_rnea_crba_identities(seed, rotation):
    spec = random_spec(seed, floating_base=seed % 2 == 0)
    model = Model(spec, rotation=rotation)
    data = model.create_data()
    rng = np.random.default_rng(seed)
    q = random_configuration(model, rng)
    v, a = rng.normal(size=(2, model.nv))
    tau = rnea(model, data, q, v, a)
    assert rel_error(aba(model, data, q, v, tau), a) < 1e-9
    M = crba(model, data, q)
    h = nonlinear_effects(model, data, q, v)
    assert rel_error(M @ a + h, tau) < 1e-12
    np.testing.assert_array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0.0
    assert kinetic_energy(model, data, q, v) == pytest.approx(0.5 * v @ M @ v, rel=1e-12)


def test_models_agree_between_rotation_coordinates():
    spec = random_spec(3, floating_base=True)
    mq, mr = Model(spec), Model(spec, rotation="rotation_vector")
    (qq, v), (qr, _) = initial_state(mq), initial_state(mr)
    dq, dr = mq.create_data(), mr.create_data()
    np.testing.assert_allclose(crba(mq, dq, qq), crba(mr, dr, qr), atol=1e-12)
    np.testing.assert_allclose(aba(mq, dq, qq, v, 0 * v), aba(mr, dr, qr, v, 0 * v), atol=1e-10)
    dv = np.random.default_rng(0).normal(size=mq.nv)
    np.testing.assert_allclose(to_spec_coordinates(mq, integrate(mq, qq, dv))[0]["root_joint"],
                               to_spec_coordinates(mr, integrate(mr, qr, dv))[0]["root_joint"],
                               atol=1e-12)


# -- physics -----------------------------------------------------------------------------------
def _rk4(model, q, v, dt, steps):
    """Classic RK4 on (q, v) (valid for vector-space q); kinetic and total energy per step."""
    data = model.create_data()

    def f(x):
        return np.concatenate([x[model.nq:], aba(model, data, x[:model.nq], x[model.nq:],
                                                  np.zeros(model.nv))])

    def energies(x):
        T = kinetic_energy(model, data, x[:model.nq], x[model.nq:])
        return T, T + potential_energy(model, data, x[:model.nq])

    x = np.concatenate([q, v])
    out = [energies(x)]
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + 0.5 * dt * k1)
        k3 = f(x + 0.5 * dt * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(energies(x))
    return np.array(out).T


@pytest.mark.parametrize("seed", [0, 1])
def test_rk4_conserves_energy(seed):
    """Revolute and prismatic joints (vector-space q), 0.5 s at dt = 1 ms: RK4's energy error is
    O(dt⁴), far below the kinetic-potential exchange."""
    model = Model.from_urdf(random_tree_urdf(seed, 8))
    assert model.nq == model.nv
    rng = np.random.default_rng(seed)
    kinetic, total = _rk4(model, rng.normal(size=model.nq), rng.normal(size=model.nv), 1e-3, 500)
    assert np.ptp(kinetic) > 0.1 * kinetic[0]            # the mechanism really moves
    assert np.abs(total - total[0]).max() < 1e-9 * np.ptp(kinetic)


def test_aba_stays_accurate_on_a_long_chain_of_slender_rods():
    """100 rods of 1 m × 5 cm on ball joints, cond(M) ≈ 1e9: ABA must stay at round-off times
    cond(M) of a Cholesky solve. (Without re-symmetrizing the articulated inertias, rounding
    asymmetry grows along the chain: relative error 6e-3 already at 30 links.)"""
    model = Model(models.pendulum(100, "spherical"))
    data = model.create_data()
    rng = np.random.default_rng(100)
    q = random_configuration(model, rng)
    v, tau = rng.normal(size=(2, model.nv))
    M = crba(model, data, q)
    solve = np.linalg.solve(M, tau - nonlinear_effects(model, data, q, v))
    assert rel_error(aba(model, data, q, v, tau), solve) < 1e-6


def test_free_body_falls_and_spins_like_euler_equations():
    inertia = np.diag([1.0, 2.0, 3.0])
    spec = MechanismSpec([Body("b", 2.0, inertia)], [Joint("free", "floating", WORLD, "b",
                                                           child_point=[0.1, -0.2, 0.3])])
    model = Model(spec)
    data = model.create_data()
    rng = np.random.default_rng(5)
    q = random_configuration(model, rng)
    # centre-of-mass twist (w, v_c) -> link twist: v_link = v_c - w × c with c = -child_point
    w, v_c = rng.normal(size=(2, 3))
    c = -np.array([0.1, -0.2, 0.3])
    v = np.concatenate([v_c - np.cross(w, c), w])
    ddq = aba(model, data, q, v, np.zeros(6))
    dw = ddq[3:]
    np.testing.assert_allclose(dw, np.linalg.solve(inertia, -np.cross(w, inertia @ w)),
                               atol=1e-12)
    # acceleration of the centre of mass (world) is gravity
    forward_kinematics(model, data, q)
    R = data.T_world_link[0, :3, :3]
    a_c = R @ (ddq[:3] + np.cross(dw, c) + np.cross(w, v[:3] + np.cross(w, c)))
    np.testing.assert_allclose(a_c, spec.gravity, atol=1e-12)


def test_fixed_joint_is_folded_into_its_parent():
    """A rod welded to a second one behaves like one rigid body with the combined inertia."""
    a, b = models.rod("a"), models.rod("b", mass=2.0)
    welded = MechanismSpec([a, b], [
        Joint("hinge", "revolute", WORLD, "a", child_point=[0, 0, 0.5]),
        Joint("weld", "fixed", "a", "b", parent_point=[0, 0, -0.5], child_point=[0.5, 0, 0],
              orientation_offset=[np.cos(0.3), 0, np.sin(0.3), 0])])
    model = Model(welded)
    assert model.joint_names == ["hinge"] and model.body_links == (0, 0)
    # combined centre of mass and inertia about the hinge, by hand
    R = spatial.exp_so3([0, 0.6, 0])
    c_a, c_b = np.array([0, 0, -0.5]), np.array([0, 0, -1.0]) - R @ [0.5, 0, 0]
    I_hinge = (a.inertia + 1.0 * (c_a @ c_a * np.eye(3) - np.outer(c_a, c_a))
               + R @ b.inertia @ R.T + 2.0 * (c_b @ c_b * np.eye(3) - np.outer(c_b, c_b)))
    M = crba(model, model.create_data(), [0.7])
    assert M[0, 0] == pytest.approx(I_hinge[0, 0], rel=1e-13)
    np.testing.assert_allclose(model.first_moments[0], 1.0 * c_a + 2.0 * c_b, atol=1e-15)


def test_bodies_welded_to_the_world_take_no_part():
    base = models.rod("base")
    spec = MechanismSpec([base, models.rod("arm")], [
        Joint("bolt", "fixed", WORLD, "base", child_point=[0, 0, 0.5]),
        Joint("j", "revolute", "base", "arm", parent_point=[0, 0, -0.5], child_point=[0, 0, 0.5])])
    model = Model(spec)
    alone = Model(models.pendulum(1, initial_angle=0.0))
    assert model.body_links == (-1, 0)
    data = model.create_data()
    np.testing.assert_allclose(crba(model, data, [0.3]), crba(alone, alone.create_data(), [0.3]))
    np.testing.assert_allclose(aba(model, data, [0.3], [1.0], [0.0]),
                               aba(alone, alone.create_data(), [0.3], [1.0], [0.0]))


# -- configurations ----------------------------------------------------------------------------
@pytest.mark.parametrize("rotation", ["quaternion", "rotation_vector"])
def test_integrate_difference_and_spec_round_trip(rotation):
    spec = random_spec(7, floating_base=True)
    model = Model(spec, rotation=rotation)
    q, v = initial_state(model)
    positions, velocities = to_spec_coordinates(model, q, v)
    for j in spec.tree_joints:
        if j.type == "fixed":
            continue
        x = spec.initial_positions[j.name]
        if j.type in ("spherical", "floating"):      # rotation vectors are unique below π
            r = x[-3:]
            theta = np.linalg.norm(r)
            x = np.concatenate([x[:-3], r * (1 - 2 * np.pi / theta) if theta > np.pi else r])
        np.testing.assert_allclose(positions[j.name], x, atol=1e-12)
        np.testing.assert_allclose(velocities[j.name], spec.initial_velocities[j.name],
                                   atol=1e-12)
    dv = 0.3 * np.random.default_rng(1).normal(size=model.nv)
    np.testing.assert_allclose(difference(model, q, integrate(model, q, dv)), dv, atol=1e-12)
    np.testing.assert_allclose(integrate(model, q, np.zeros(model.nv)), q, atol=1e-15)
    assert neutral(model).shape == (model.nq,)


def test_floating_spec_velocity_is_the_derivative_of_its_coordinates():
    spec = random_spec(2, floating_base=True)
    model = Model(spec)
    q, v = initial_state(model)
    h = 1e-6
    xp = to_spec_coordinates(model, integrate(model, q, h * v))[0]["root_joint"]
    xm = to_spec_coordinates(model, integrate(model, q, -h * v))[0]["root_joint"]
    np.testing.assert_allclose((xp[:3] - xm[:3]) / (2 * h),
                               spec.initial_velocities["root_joint"][:3], rtol=1e-7)


# -- one test per failure mode -----------------------------------------------------------------
@pytest.fixture(scope="module")
def ball_model():
    return Model(models.pendulum(2, "spherical"))


@pytest.mark.parametrize("call, argument, size", [
    (lambda m, d: rnea(m, d, np.zeros(3), np.zeros(6), np.zeros(6)), "q", "model.nq = 8"),
    (lambda m, d: rnea(m, d, neutral(m), np.zeros(5), np.zeros(6)), "v", "model.nv = 6"),
    (lambda m, d: rnea(m, d, neutral(m), np.zeros(6), np.zeros(7)), "a", "model.nv = 6"),
    (lambda m, d: aba(m, d, neutral(m), np.zeros(6), np.zeros((6, 1))), "tau", "model.nv = 6"),
    (lambda m, d: crba(m, d, np.zeros(9)), "q", "model.nq = 8"),
    (lambda m, d: potential_energy(m, d, [1.0]), "q", "model.nq = 8"),
    (lambda m, d: integrate(m, neutral(m), np.zeros(3)), "v", "model.nv = 6"),
])
def test_wrong_lengths(ball_model, call, argument, size):
    with pytest.raises(ValueError, match=f"^{argument} must be a vector of length {size}"):
        call(ball_model, ball_model.create_data())


@pytest.mark.parametrize("fn", [lambda m, d, q: rnea(m, d, q, np.zeros(m.nv), np.zeros(m.nv)),
                                lambda m, d, q: aba(m, d, q, np.zeros(m.nv), np.zeros(m.nv)),
                                lambda m, d, q: crba(m, d, q)])
def test_unnormalized_quaternion_names_the_joint(ball_model, fn):
    q = neutral(ball_model)
    q[4] = 1.0 + 1e-8
    with pytest.raises(ValueError, match=r"joint 'joint2': quaternion q\[4:8\] has norm"):
        fn(ball_model, ball_model.create_data(), q)
    fn(ball_model, ball_model.create_data(), normalize(ball_model, q))


def test_unnormalized_free_flyer_quaternion():
    model = Model.from_urdf(random_tree_urdf(0, 3), floating_base=True)
    q = neutral(model)
    q[3:7] = [0.5, 0.5, 0.5, 0.6]
    with pytest.raises(ValueError, match=r"joint 'root_joint': quaternion q\[3:7\]"):
        forward_kinematics(model, model.create_data(), q)


def test_unknown_joint_type_in_urdf():
    xml = random_tree_urdf(1, 4).replace('type="revolute"', 'type="screw"', 1) \
        .replace('type="continuous"', 'type="screw"', 1).replace('type="prismatic"',
                                                                 'type="screw"', 1)
    with pytest.raises(SpecError, match=r"joint 'J\d+': unsupported URDF joint type 'screw'"):
        Model.from_urdf(xml)


def test_planar_joint_in_urdf_loads():
    """Every URDF joint type loads since planar joints are supported (PlanarJoint; compared
    with Pinocchio in test_minimal_planar)."""
    xml = random_tree_urdf(1, 4).replace('type="fixed"', 'type="planar"', 1) \
        .replace('type="prismatic"', 'type="planar"', 1)
    model = Model.from_urdf(xml)
    assert "planar" in [jm.type for jm in model.joints]


def test_unsupported_joint_type_in_spec():
    spec = MechanismSpec([models.rod("a")], [Joint("slot", "cylindrical", WORLD, "a")])
    with pytest.raises(TreeModelError, match=r"joint 'slot' has type 'cylindrical'"):
        Model(spec)


def test_loops_are_rejected_naming_the_loop_joints():
    with pytest.raises(TreeModelError, match=r"closed by joints \['closure'\]"):
        Model(models.fourbar())


def test_joint_reached_from_its_child():
    spec = MechanismSpec([models.rod("a"), models.rod("b")], [
        Joint("ja", "revolute", WORLD, "a"), Joint("kb", "revolute", "b", "a")])
    with pytest.raises(TreeModelError, match="joint 'kb' is reached from its child 'a'"):
        Model(spec)


def test_data_of_another_model(ball_model):
    other = Model(models.pendulum(1)).create_data()
    with pytest.raises(ValueError, match="data does not belong to this model"):
        crba(ball_model, other, neutral(ball_model))


def test_bad_rotation_and_spec_coordinates(ball_model):
    with pytest.raises(ValueError, match="rotation must be one of"):
        Model(models.pendulum(1), rotation="euler")
    with pytest.raises(ValueError, match=r"positions: 'nope' is not a moving joint"):
        from_spec_coordinates(ball_model, {"nope": [0.0]})
    with pytest.raises(ValueError, match=r"velocities\['joint1'\] must have 3 entries"):
        from_spec_coordinates(ball_model, None, {"joint1": [0.0, 1.0]})


def test_doctests():
    for module in (dynamics.minimal, spatial, joints, model_module, configuration, algorithms):
        assert doctest.testmod(module).failed == 0, module.__name__
