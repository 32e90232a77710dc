"""General scleronomic joints (Si & Guenter): S and Ṡ from T(q), checked against the built-in
joints, finite differences of the kinematics and of the Lagrangian, and energy conservation."""
from __future__ import annotations

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")

from dynamics import models  # noqa: E402
from dynamics.minimal import (  # noqa: E402
    Model,
    TreeModelError,
    aba,
    crba,
    forward_kinematics,
    initial_state,
    kinetic_energy,
    potential_energy,
    rnea,
    simulate,
    spatial,
    total_energy,
)
from dynamics.minimal.general_joint import (  # noqa: E402
    DEFAULT_CONTROL_POINTS,
    GeneralJoint,
    GeneralJointError,
    bezier_chain,
    bezier_chain_spec,
    bezier_curve_joint,
    bezier_point,
    prismatic_joint,
    revolute_joint,
)
from dynamics.spec import WORLD, Body, Joint, MechanismSpec  # noqa: E402

from .minimal_trees import random_spec  # noqa: E402


def _homogeneous(R, p):
    return sympy.Matrix(R).row_join(sympy.Matrix(p)).col_join(sympy.Matrix([[0, 0, 0, 1]]))


def torus_surface_joint(major=0.5, minor=0.2):
    """A 2-DOF joint: a point on a torus surface (angles u, w) with a frame turning with it."""
    def transform(q):
        u, w = q
        p = [(major + minor * sympy.cos(w)) * sympy.cos(u),
             (major + minor * sympy.cos(w)) * sympy.sin(u), minor * sympy.sin(w)]
        Rz = sympy.Matrix([[sympy.cos(u), -sympy.sin(u), 0], [sympy.sin(u), sympy.cos(u), 0],
                           [0, 0, 1]])
        Ry = sympy.Matrix([[sympy.cos(w), 0, sympy.sin(w)], [0, 1, 0],
                           [-sympy.sin(w), 0, sympy.cos(w)]])
        return _homogeneous(Rz * Ry, p)
    return GeneralJoint(transform, 2, name="torus_surface")


def torus_surface_model():
    """A box on the torus-surface joint carrying a pendulum on a revolute joint."""
    box = Body("box", 2.0, np.diag([0.1, 0.2, 0.25]))
    rod = models.rod("rod", 0.8, 0.7)
    joints = (Joint("surf", "cylindrical", WORLD, "box", [0.1, 0.0, 0.3], [0.05, -0.02, 0.0]),
              Joint("hinge", "revolute", "box", "rod", [0.1, 0.1, -0.2], [0.0, 0.0, 0.4],
                    [0.3, 1.0, 0.2]))
    spec = MechanismSpec((box, rod), joints, name="torus_surface")
    return Model(spec, custom_joints={"surf": torus_surface_joint()})


def _general_copy(spec):
    """The model of ``spec`` with every revolute / prismatic joint replaced by its general
    (sympy) equivalent."""
    custom = {j.name: (revolute_joint if j.type == "revolute" else prismatic_joint)(j.axis)
              for j in spec.tree_joints if j.type in ("revolute", "prismatic")}
    return Model(spec, custom_joints=custom), custom


# -- equivalence with the built-in joints --------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 3])
def test_general_revolute_prismatic_reproduce_builtin(seed):
    spec = random_spec(seed, spherical=0.3, max_links=8)
    ref = Model(spec)
    gen, custom = _general_copy(spec)
    assert custom and any(jm.type == "general" for jm in gen.joints)
    assert ref.nq == gen.nq and ref.nv == gen.nv
    q, v = initial_state(ref)
    a = np.random.default_rng(seed).normal(size=ref.nv)
    dr, dg = ref.create_data(), gen.create_data()
    tau = rnea(ref, dr, q, v, a)
    assert np.allclose(rnea(gen, dg, q, v, a), tau, rtol=0, atol=1e-12 * (1 + abs(tau).max()))
    ddq = aba(ref, dr, q, v, tau)
    assert np.allclose(aba(gen, dg, q, v, tau), ddq, rtol=0, atol=1e-11 * (1 + abs(ddq).max()))
    M = crba(ref, dr, q)
    assert np.allclose(crba(gen, dg, q), M, rtol=0, atol=1e-12 * abs(M).max())
    forward_kinematics(ref, dr, q)
    forward_kinematics(gen, dg, q)
    assert np.allclose(dg.T_world_link, dr.T_world_link, atol=1e-13)


@pytest.mark.parametrize("axis", [(1.0, 0.0, 0.0), (0.3, -1.2, 0.7)])
def test_subspace_convention_matches_builtin(axis):
    a = np.asarray(axis) / np.linalg.norm(axis)
    q = [0.7]
    assert np.allclose(revolute_joint(axis).motion_subspace(q)[:, 0], np.r_[a, 0, 0, 0],
                       atol=1e-14)
    assert np.allclose(prismatic_joint(axis).motion_subspace(q)[:, 0], np.r_[0, 0, 0, a],
                       atol=1e-14)
    assert np.allclose(revolute_joint(axis).subspace_rate(q, [2.0]), 0.0, atol=1e-14)


# -- the Bezier example ----------------------------------------------------------------------------
def test_bezier_joint_follows_curve_with_tangent_frame():
    joint = bezier_curve_joint()
    for s in (0.0, 0.2, 0.55, 1.0):
        T = joint.transform_matrix([s])
        c, d = bezier_point(DEFAULT_CONTROL_POINTS, s), bezier_point(DEFAULT_CONTROL_POINTS, s, 1)
        assert np.allclose(T[:3, 3], c, atol=1e-12)
        assert np.allclose(T[:3, 0], d / np.linalg.norm(d), atol=1e-12)
        assert np.allclose(T[:3, 1], [0.0, 1.0, 0.0], atol=1e-12)       # reference e_y
        # body twist of the joint = S s' : the linear part is |c'| along x, the angular part
        # the curvature rotation about y
        S = joint.motion_subspace([s])[:, 0]
        assert np.allclose(S[3:], [np.linalg.norm(d), 0.0, 0.0], atol=1e-12)


def _fd_body_twists(model, q, v, h=1e-6):
    """Link twists (link frame) from central differences of forward kinematics."""
    data = model.create_data()
    poses = []
    for sgn in (-1.0, 1.0):
        forward_kinematics(model, data, q + sgn * h * v)
        poses.append(data.T_world_link.copy())
    forward_kinematics(model, data, q)
    out = []
    for i in range(model.njoints):
        T0 = data.T_world_link[i]
        Tdot = (poses[1][i] - poses[0][i]) / (2 * h)
        W = spatial.inverse(T0) @ Tdot
        out.append(np.r_[W[2, 1], W[0, 2], W[1, 0], W[:3, 3]])
    return np.array(out)


@pytest.mark.parametrize("build", [lambda: bezier_chain(4), torus_surface_model])
def test_subspace_matches_finite_differences_of_kinematics(build):
    model = build()
    rng = np.random.default_rng(5)
    q, v = 0.3 + 0.2 * rng.random(model.nq), rng.normal(size=model.nv)
    data = model.create_data()
    kinetic_energy(model, data, q, v)                 # fills data.V from S(q)
    assert np.allclose(data.V, _fd_body_twists(model, q, v), atol=1e-8)


def _lagrangian_tau(model, q, v, a, h=1e-5):
    """``d/dt ∂L/∂v - ∂L/∂q`` with ``L = ½ vᵀ M(q) v - U(q)``, derivatives of ``M`` (crba) and
    ``U`` by central differences."""
    data = model.create_data()
    n = model.nv
    dM = np.empty((n, n, n))
    dU = np.empty(n)
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        dM[k] = (crba(model, data, q + e) - crba(model, data, q - e)) / (2 * h)
        dU[k] = (potential_energy(model, data, q + e) - potential_energy(model, data, q - e)) \
            / (2 * h)
    M = crba(model, data, q)
    Mdot = np.einsum("kij,k->ij", dM, v)
    dT = 0.5 * np.einsum("kij,i,j->k", dM, v, v)
    return M @ a + Mdot @ v - dT + dU


@pytest.mark.parametrize("build", [lambda: bezier_chain(4), torus_surface_model])
def test_rnea_matches_lagrangian_finite_differences(build):
    model = build()
    data = model.create_data()
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = 0.2 + 0.6 * rng.random(model.nq)
        v, a = rng.normal(size=(2, model.nv))
        tau = rnea(model, data, q, v, a)
        fd = _lagrangian_tau(model, q, v, a)
        assert np.allclose(tau, fd, rtol=1e-6, atol=1e-6 * abs(tau).max())
        # and the velocity terms alone (where Ṡ v matters)
        h = rnea(model, data, q, v, np.zeros(model.nv))
        assert np.allclose(h, _lagrangian_tau(model, q, v, 0 * a), rtol=1e-6,
                           atol=1e-6 * abs(h).max())


@pytest.mark.parametrize("build", [lambda: bezier_chain(5), torus_surface_model])
def test_aba_inverts_rnea_and_crba(build):
    model = build()
    data = model.create_data()
    rng = np.random.default_rng(2)
    q = 0.2 + 0.6 * rng.random(model.nq)
    v, a = rng.normal(size=(2, model.nv))
    tau = rnea(model, data, q, v, a)
    assert np.allclose(aba(model, data, q, v, tau), a, atol=1e-10)
    M = crba(model, data, q)
    assert np.allclose(M, M.T) and np.linalg.eigvalsh(M).min() > 0
    assert np.allclose(M @ a + rnea(model, data, q, v, 0 * a), tau, atol=1e-10)


def test_bezier_chain_conserves_energy_rk4():
    model = bezier_chain(3)
    q0, v0 = initial_state(model)
    assert np.allclose(q0, [0.1, 0.0, 0.0])
    v0 = np.array([0.5, 1.0, -0.5])
    res = simulate(model, q0, v0, 1e-3, 400, method="rk4")
    data = model.create_data()
    e0 = total_energy(model, data, q0, v0)
    drift = abs(res.energy - e0).max()
    assert drift < 1e-7 * (1 + abs(e0))
    assert res.q[-1, 0] > q0[0]               # it slid down the spline


# -- errors --------------------------------------------------------------------------------
def test_bad_transforms_raise():
    c, s = sympy.cos, sympy.sin
    with pytest.raises(GeneralJointError, match="4×4"):
        GeneralJoint(lambda q: sympy.eye(3), 1)
    with pytest.raises(GeneralJointError, match="last row"):
        GeneralJoint(lambda q: [[1, 0, 0, q[0]], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, q[0], 1]], 1)
    with pytest.raises(GeneralJointError, match="not a rotation"):
        GeneralJoint(lambda q: _homogeneous(2 * sympy.eye(3), [q[0], 0, 0]), 1)
    with pytest.raises(GeneralJointError, match="not a rotation"):       # det = -1
        GeneralJoint(lambda q: _homogeneous(sympy.diag(1, 1, -1), [q[0], 0, 0]), 1)
    with pytest.raises(GeneralJointError, match="not only on its"):
        L = sympy.Symbol("L")
        GeneralJoint(lambda q: _homogeneous(sympy.eye(3), [L * q[0], 0, 0]), 1)
    with pytest.raises(GeneralJointError, match="rank"):
        GeneralJoint(lambda q: _homogeneous(sympy.eye(3), [q[0] + q[1], 0, 0]), 2)
    with pytest.raises(GeneralJointError, match="failed"):                # uses q[1], nq = 1
        GeneralJoint(lambda q: _homogeneous([[c(q[1]), -s(q[1]), 0], [s(q[1]), c(q[1]), 0],
                                             [0, 0, 1]], [0, 0, 0]), 1)
    for nq in (0, 7, 1.5, True):
        with pytest.raises(GeneralJointError, match="nq"):
            GeneralJoint(lambda q: sympy.eye(4), nq)
    with pytest.raises(GeneralJointError, match="control_points"):
        bezier_curve_joint([[0, 0, 0]])
    with pytest.raises(GeneralJointError, match="not finite|not a rotation"):
        bezier_curve_joint([[0, 0, 0], [0, 1, 0]])          # tangent along the reference


def test_model_plugging_errors():
    spec, custom = bezier_chain_spec(2)
    with pytest.raises(TreeModelError, match="not joints"):
        Model(spec, custom_joints={"nope": custom["slide"]})
    with pytest.raises(TreeModelError, match="placeholder"):
        Model(spec, custom_joints={"slide": torus_surface_joint()})   # nq 2 vs prismatic 1
    model = Model(spec, custom_joints=custom)
    data = model.create_data()
    with pytest.raises(ValueError, match="model.nq"):
        rnea(model, data, np.zeros(3), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="not finite"):
        aba(model, data, [np.nan, 0.0], np.zeros(2), np.zeros(2))
    with pytest.raises(TypeError, match="general joint"):
        _ = model.joints[0].S
    from dynamics.minimal import tree_kernels
    assert not tree_kernels.supports(model)
    with pytest.raises(ValueError, match="revolute and prismatic"):
        tree_kernels.aba(model, data, [0.1, 0.0], np.zeros(2), np.zeros(2))
