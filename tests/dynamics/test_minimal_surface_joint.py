"""Si & Guenter's surface-surface joints, torus chains (TC) and windmill (WM): contact geometry,
S and Ṡ against finite differences of the transform, ABA against RNEA / CRBA, energy
conservation, and the compiled Method I / Method II against the NumPy ABA and Pinocchio."""
from __future__ import annotations

import math

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dynamics import models  # noqa: E402
from dynamics.minimal import (  # noqa: E402
    Model,
    aba,
    crba,
    forward_kinematics,
    initial_state,
    kinetic_energy,
    potential_energy,
    rnea,
)
from dynamics.minimal.general_compiled import (  # noqa: E402
    CompiledGeneralError,
    MethodI,
    MethodII,
    c_compiler,
)
from dynamics.minimal.general_joint import GeneralJoint, revolute_joint  # noqa: E402
from dynamics.minimal.surface_joint import (  # noqa: E402
    TORUS_CHAIN_DOFS,
    ellipsoid,
    sphere,
    surface_surface_joint,
    torus,
    torus_chain,
    windmill_spec,
)

TOR = torus(0.1, 0.02)
SPH = sphere(0.2, pose=[[0, 0, 1, 0.05], [1, 0, 0, 0.0], [0, 1, 0, -0.1], [0, 0, 0, 1]])
ELL = ellipsoid(0.14, 0.07, 0.05)
_JOINTS: dict = {}


def _joint(name):
    if name not in _JOINTS:
        parent, child, spin = {"torus-torus": (TOR, TOR, 0.5 * math.pi),
                               "sphere-ellipsoid": (SPH, ELL, 0.3)}[name]
        _JOINTS[name] = surface_surface_joint(parent, child, spin, name=name)
    return _JOINTS[name]


_coord = st.floats(-3.0, 3.0, allow_nan=False)
_lat = st.floats(-1.2, 1.2, allow_nan=False)     # away from sphere / ellipsoid poles


# -- contact geometry -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["torus-torus", "sphere-ellipsoid"])
@settings(max_examples=15, deadline=None)
@given(u1=_coord, v1=_lat, u2=_coord, v2=_lat)
def test_surfaces_touch_with_opposite_normals(name, u1, v1, u2, v2):
    """G maps the child's contact point onto the parent's and its normal onto minus the
    parent's normal: the surfaces touch (the joint's defining property)."""
    parent, child = (TOR, TOR) if name == "torus-torus" else (SPH, ELL)
    T = _joint(name).transform_matrix([u1, v1, u2, v2])
    xb = T[:3, :3] @ child.point(u2, v2) + T[:3, 3]
    assert np.allclose(xb, parent.point(u1, v1), atol=1e-12)
    assert np.allclose(T[:3, :3] @ child.normal(u2, v2), -parent.normal(u1, v1), atol=1e-12)


# -- S and Ṡ against finite differences -----------------------------------------------------------
@pytest.mark.parametrize("name", ["torus-torus", "sphere-ellipsoid"])
@settings(max_examples=10, deadline=None)
@given(q=st.lists(_lat, min_size=4, max_size=4), qd=st.lists(_lat, min_size=4, max_size=4))
def test_subspace_and_rate_match_finite_differences(name, q, qd):
    joint = _joint(name)
    q, qd = np.array(q), np.array(qd)
    S = joint.motion_subspace(q)
    assert np.allclose(S, joint._fd_subspace(q), atol=2e-7 * max(1.0, abs(S).max()))
    h = 1e-6
    dS = (joint.motion_subspace(q + h * qd) - joint.motion_subspace(q - h * qd)) / (2 * h)
    rate = joint.subspace_rate(q, qd)
    assert np.allclose(rate, dS @ qd, atol=1e-6 * max(1.0, abs(rate).max()))


def test_closed_form_subspace_is_checked_against_the_transform():
    """A wrong closed-form S (a sign flipped) is rejected by GeneralJoint's validation."""
    def transform(q):
        c, s = sympy.cos(q[0]), sympy.sin(q[0])
        return [[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    GeneralJoint(transform, 1, subspace=lambda q: sympy.Matrix([0, 0, 1, 0, 0, 0]))
    with pytest.raises(ValueError, match="closed-form subspace differs"):
        GeneralJoint(transform, 1, subspace=lambda q: sympy.Matrix([0, 0, -1, 0, 0, 0]))


# -- models ---------------------------------------------------------------------------------------
def test_torus_chain_dofs_match_table1_and_hang_straight():
    assert TORUS_CHAIN_DOFS(10) == 38 and TORUS_CHAIN_DOFS(20) == 78    # Table 1
    model = torus_chain(20)
    assert model.nv == 78 and model.njoints == 20
    q, _ = initial_state(model)
    q[1] = math.pi                       # untilted: the tori hang straight down
    data = model.create_data()
    forward_kinematics(model, data, q)
    centres = data.T_world_link[:, :3, 3]
    assert np.allclose(centres[:, :2], 0.0, atol=1e-12)
    assert np.allclose(np.diff(centres[:, 2]), -2 * (0.1 - 0.02), atol=1e-12)
    axes = data.T_world_link[:, :3, 2]   # torus axes alternate between two horizontals
    assert np.allclose(axes[:, 2], 0.0, atol=1e-12)
    assert np.allclose(np.einsum("ij,ij->i", axes[1:], axes[:-1]), 0.0, atol=1e-12)


@pytest.fixture(scope="module")
def wm():
    spec, custom = windmill_spec()
    return spec, custom, Model(spec, custom_joints=custom)


def test_windmill_has_73_dofs_and_the_papers_connection_types(wm):
    spec, custom, model = wm
    assert spec.dof == 73 and model.nv == 73 and len(spec.tree_joints) == 19
    names = {j.name for j in custom.values()}
    assert {"sphere-sphere", "sphere-ellipsoid", "sphere-torus", "torus-torus",
            "torus-ellipsoid"} <= names
    # at the initial state the arms stick out radially from the hub, in the hub's y-z plane
    data = model.create_data()
    forward_kinematics(model, data, initial_state(model)[0])
    arm_ends = data.T_world_link[[model.joint_names.index(j.name) for j in spec.tree_joints
                                  if j.child.endswith("_3")], :3, 3]
    radial = arm_ends - [0.0, 0.0, 1.0]
    assert np.allclose(radial[:, 0], 0.0, atol=1e-12)
    angles = np.sort(np.mod(np.arctan2(radial[:, 2], radial[:, 1]), 2 * np.pi))
    assert np.allclose(np.diff(angles), np.pi / 3, atol=1e-9)


def test_windmill_aba_consistent_with_rnea_and_crba(wm):
    _, _, model = wm
    data = model.create_data()
    q, v, tau = _random_state(model, 2, spread=0.1)
    ddq = aba(model, data, q, v, tau)
    M = crba(model, data, q)
    h = rnea(model, data, q, v, np.zeros(model.nv))
    assert np.allclose(M @ ddq + h, tau, atol=1e-9 * (1 + abs(tau).max() + abs(h).max()))
    assert np.linalg.eigvalsh(M).min() > 0


def _random_state(model, seed, spread=0.3):
    rng = np.random.default_rng(seed)
    q, _ = initial_state(model)
    return (q + spread * rng.normal(size=model.nq), rng.normal(size=model.nv),
            rng.normal(size=model.nv))


@pytest.mark.parametrize("seed", [0, 1])
def test_torus_chain_aba_consistent_with_rnea_and_crba(seed):
    model = torus_chain(4)
    data = model.create_data()
    q, v, tau = _random_state(model, seed)
    ddq = aba(model, data, q, v, tau)
    M = crba(model, data, q)
    h = rnea(model, data, q, v, np.zeros(model.nv))
    scale = 1.0 + abs(tau).max() + abs(h).max()
    assert np.allclose(M @ ddq + h, tau, atol=1e-9 * scale)
    assert np.allclose(rnea(model, data, q, v, ddq), tau, atol=1e-9 * scale)
    assert np.allclose(M, M.T) and np.linalg.eigvalsh(M).min() > 0


def test_torus_chain_energy_conserved_rk4():
    """TC3 swinging under gravity, RK4 on the NumPy ABA, 0.3 s at Δt = 1e-4: the total
    energy drifts by < 1e-6 of the kinetic energy scale."""
    model = torus_chain(3)
    data = model.create_data()
    q, v = initial_state(model)
    zero = np.zeros(model.nv)

    def energy(q, v):
        return kinetic_energy(model, data, q, v) + potential_energy(model, data, q)

    def f(q, v):
        return v, aba(model, data, q, v, zero)
    e0 = energy(q, v)
    dt, ke_max = 1e-4, 0.0
    for _ in range(3000):
        k1 = f(q, v)
        k2 = f(q + 0.5 * dt * k1[0], v + 0.5 * dt * k1[1])
        k3 = f(q + 0.5 * dt * k2[0], v + 0.5 * dt * k2[1])
        k4 = f(q + dt * k3[0], v + dt * k3[1])
        q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        ke_max = max(ke_max, kinetic_energy(model, data, q, v))
    assert ke_max > 1e-3                 # it really swings (0.3 kg lifted by the tilt)
    assert abs(energy(q, v) - e0) < 1e-6 * ke_max


# -- compiled Method I / Method II ----------------------------------------------------------------
@pytest.fixture(scope="module")
def tc3():
    model = torus_chain(3)
    return model, MethodII(model)


def test_torus_chain_energy_conserved_method_ii_rk4():
    """TC10 (38 DOF) swinging, RK4 on our compiled Method II, 0.2 s at Δt = 1e-4: energy
    drift < 1e-6 of the kinetic energy reached."""
    model = torus_chain(10)
    fd = MethodII(model)
    data = model.create_data()
    q, v = initial_state(model)
    zero = np.zeros(model.nv)

    def energy(q, v):
        return kinetic_energy(model, data, q, v) + potential_energy(model, data, q)
    e0, dt = energy(q, v), 1e-4
    for _ in range(2000):
        k1v, k1a = v, fd(q, v, zero)
        k2v = v + 0.5 * dt * k1a
        k2a = fd(q + 0.5 * dt * k1v, k2v, zero)
        k3v = v + 0.5 * dt * k2a
        k3a = fd(q + 0.5 * dt * k2v, k3v, zero)
        k4v = v + dt * k3a
        k4a = fd(q + dt * k3v, k4v, zero)
        q = q + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        v = v + dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
    ke = kinetic_energy(model, data, q, v)
    assert ke > 1e-3
    assert abs(energy(q, v) - e0) < 1e-6 * ke


@pytest.mark.parametrize("seed", [0, 5])
def test_method_ii_matches_numpy_aba(tc3, seed):
    model, m2 = tc3
    q, v, tau = _random_state(model, seed)
    ref = aba(model, model.create_data(), q, v, tau)
    assert np.allclose(m2(q, v, tau), ref, rtol=0, atol=1e-12 * (1 + abs(ref).max()))


@pytest.mark.skipif(c_compiler() is None, reason="Method I needs a C compiler")
@pytest.mark.parametrize("seed", [0, 5])
def test_method_i_matches_numpy_aba(tc3, seed, tmp_path, monkeypatch):
    import dynamics.minimal.general_compiled as gc
    monkeypatch.setattr(gc, "CACHE_DIR", tmp_path)
    model, _ = tc3
    m1 = MethodI(model)
    assert m1.library_path.parent == tmp_path and m1.statements > 100
    q, v, tau = _random_state(model, seed)
    ref = aba(model, model.create_data(), q, v, tau)
    assert np.allclose(m1(q, v, tau), ref, rtol=0, atol=1e-12 * (1 + abs(ref).max()))
    with pytest.raises(ValueError, match="lengths"):
        m1(q[:-1], v, tau)


@pytest.mark.parametrize("seed", [1, 4])
def test_compiled_methods_on_random_branching_trees(seed):
    """Random URDF trees (branches, fixed joints, arbitrary placements) with every revolute /
    prismatic joint given as a general joint: Method I and II equal the NumPy ABA."""
    from dynamics.minimal.general_joint import prismatic_joint

    from .minimal_trees import random_spec
    spec = random_spec(seed, spherical=0.0, max_links=12)
    custom = {j.name: (revolute_joint if j.type == "revolute" else prismatic_joint)(j.axis)
              for j in spec.tree_joints if j.type in ("revolute", "prismatic")}
    model = Model(spec, custom_joints=custom)
    assert any(len(c) > 1 for c in model.children)           # a real tree
    rng = np.random.default_rng(seed)
    q, v, tau = rng.normal(size=(3, model.nv))
    ref = aba(model, model.create_data(), q, v, tau)
    tol = 1e-11 * (1 + abs(ref).max())
    assert np.allclose(MethodII(model)(q, v, tau), ref, rtol=0, atol=tol)
    if c_compiler() is not None:
        assert np.allclose(MethodI(model)(q, v, tau), ref, rtol=0, atol=tol)


def test_compiled_rejects_builtin_joints():
    with pytest.raises(CompiledGeneralError, match="built-in"):
        MethodII(Model(models.pendulum(2)))


def _euler_zyx_joint():
    """A spherical joint written as ``Rz(a) Ry(b) Rx(c)`` (a general 3-DOF joint)."""
    def transform(q):
        a, b, c = q
        Rz = sympy.Matrix([[sympy.cos(a), -sympy.sin(a), 0], [sympy.sin(a), sympy.cos(a), 0],
                           [0, 0, 1]])
        Ry = sympy.Matrix([[sympy.cos(b), 0, sympy.sin(b)], [0, 1, 0],
                           [-sympy.sin(b), 0, sympy.cos(b)]])
        Rx = sympy.Matrix([[1, 0, 0], [0, sympy.cos(c), -sympy.sin(c)],
                           [0, sympy.sin(c), sympy.cos(c)]])
        return (Rz * Ry * Rx).row_join(sympy.zeros(3, 1)).col_join(
            sympy.Matrix([[0, 0, 0, 1]]))
    return GeneralJoint(transform, 3, name="euler_zyx")


@pytest.mark.parametrize("method", ["numpy", "II", "I"])
def test_general_revolute_and_spherical_match_pinocchio_aba(method):
    """A chain of general joints reproducing revolute and spherical (Euler ZYX) joints: our
    ddq mapped to Pinocchio's velocity coordinates (``S q̈ + Ṡ q̇``, the body angular
    acceleration, for a spherical joint) equals ``pinocchio.aba`` to 1e-10."""
    pin = pytest.importorskip("pinocchio")
    from comparisons.pinocchio_peer import pinocchio_model
    if method == "I" and c_compiler() is None:
        pytest.skip("Method I needs a C compiler")
    spec = models.pendulum(3, "spherical")
    euler = _euler_zyx_joint()
    spec_j = spec.tree_joints
    # joint 2 stays spherical (Euler); joints 1 and 3 become revolutes of the spec: use a
    # spec with revolute joints there
    from dynamics.spec import Joint, MechanismSpec
    joints = []
    for k, j in enumerate(spec_j):
        t = "spherical" if k == 1 else "revolute"
        joints.append(Joint(j.name, t, j.parent, j.child, j.parent_point, j.child_point,
                            [0.3, 1.0, 0.2] if t == "revolute" else [0.0, 0.0, 1.0]))
    spec = MechanismSpec(spec.bodies, tuple(joints), name="rev_sph_rev")
    custom = {j.name: (euler if j.type == "spherical" else revolute_joint(j.axis))
              for j in spec.tree_joints}
    model = Model(spec, custom_joints=custom)
    rng = np.random.default_rng(3)
    q, v, tau = rng.normal(size=(3, model.nv))
    if method == "numpy":
        ddq = aba(model, model.create_data(), q, v, tau)
    elif method == "II":
        ddq = MethodII(model)(q, v, tau)
    else:
        ddq = MethodI(model)(q, v, tau)
    pm, names = pinocchio_model(spec)
    pd = pm.createData()
    qp, vp, taup, ap = [], [], [], []
    for jm in model.joints:
        sl = jm.q_slice
        if jm.nv == 1:
            qp += [q[sl][0]]
            vp += [v[sl][0]]
            taup += [tau[sl][0]]
            ap += [ddq[sl][0]]
        else:
            R = euler.transform_matrix(q[sl])[:3, :3]
            S = euler.motion_subspace(q[sl])[:3]
            qp += list(pin.Quaternion(R).coeffs())
            vp += list(S @ v[sl])
            taup += list(np.linalg.solve(S.T, tau[sl]))       # τ = Sᵀ f: joint torque
            ap += list(S @ ddq[sl] + euler.subspace_rate(q[sl], v[sl])[:3])
    theirs = pin.aba(pm, pd, np.array(qp), np.array(vp), np.array(taup))
    assert np.allclose(theirs, ap, rtol=0, atol=1e-10 * (1 + abs(theirs).max()))
