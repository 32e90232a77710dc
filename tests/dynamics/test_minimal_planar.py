"""Planar joints in minimal coordinates (issue 24 class 7, :class:`dynamics.minimal.PlanarJoint`)
against Pinocchio's ``JointModelPlanar`` and against ``dynamics.maximal``.

* Random URDF trees with planar joints (axis ``z``, as Pinocchio reads every planar joint) at
  the root and inside the tree, rotated joint origins: RNEA, ABA, CRBA and all link frames equal
  Pinocchio's within 1e-10 relative; ``integrate`` / ``difference`` equal ``pin.integrate`` /
  ``pin.difference`` (``q = (x, y, θ)`` here, ``(x, y, cos θ, sin θ)`` there, same ``v``).
* A planar joint about a general axis ``a`` is Pinocchio's planar joint in a joint frame
  rotated by ``Q = [u1 u2 a]`` (:func:`~dynamics.minimal.joints.plane_directions`): the
  joint-space dynamics of the rewritten URDF equal Pinocchio's.
* Spec coordinates (parent-frame translation, rates their derivatives) convert to ``(q, v)``
  such that the maximal initial state, the minimal model and Pinocchio put every link frame at
  the same place with the same velocity; a moving planar base simulated in maximal coordinates
  follows the minimal RK4 reference with the first-order error of the corpus tests; the
  minimal semi-implicit Euler trajectory is Pinocchio's step for step.
"""
from __future__ import annotations

import dataclasses
import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dynamics.maximal import Simulation
from dynamics.maximal.joints import basis
from dynamics.minimal import (
    Model,
    TreeModelError,
    aba,
    crba,
    difference,
    frame_poses,
    from_spec_coordinates,
    initial_state,
    integrate,
    joint_forces,
    random_configuration,
    rnea,
    simulate,
    to_spec_coordinates,
)
from dynamics.minimal.integrators import tangent_rate
from dynamics.minimal.joints import plane_directions
from dynamics.minimal.variational import del_jacobian, del_jacobian_fd
from dynamics.urdf import load_urdf
from tests.dynamics.minimal_trees import pin_configuration, random_tree_urdf, rel_error

pin = pytest.importorskip("pinocchio")

TOL = 1e-10
KINDS = ("revolute", "continuous", "prismatic", "fixed", "planar")
P = (0.25, 0.2, 0.2, 0.15, 0.2)


def _planar_tree(seed: int, n_links: int = 8) -> str:
    """A random URDF tree with planar joints, their axes set to ``z`` (Pinocchio's plane)."""
    for s in range(seed, seed + 100):
        xml = random_tree_urdf(s, n_links, kinds=KINDS, p=P)
        if xml.count('type="planar"') >= 2:
            return re.sub(r'(type="planar">[^\n]*?<axis xyz=")[^"]*"', r'\g<1>0 0 1"', xml)
    raise AssertionError("no random tree with two planar joints")


def _pin(xml: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pin.buildModelFromXML(xml)


def _dynamics_errors(model, pin_model, rng, n_states=4):
    data, pd = model.create_data(), pin_model.createData()
    worst = {"rnea": 0.0, "aba": 0.0, "crba": 0.0}
    for _ in range(n_states):
        q = random_configuration(model, rng)
        qp = pin_configuration(model, pin_model, q)
        v, a, tau = rng.normal(size=(3, model.nv))
        M = pin.crba(pin_model, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        errors = {"rnea": rel_error(rnea(model, data, q, v, a),
                                    pin.rnea(pin_model, pd, qp, v, a)),
                  "aba": rel_error(aba(model, data, q, v, tau),
                                   pin.aba(pin_model, pd, qp, v, tau)),
                  "crba": rel_error(crba(model, data, q), M)}
        worst = {k: max(worst[k], errors[k]) for k in worst}
    return worst


@pytest.mark.parametrize("seed", range(4))
def test_planar_tree_matches_pinocchio(seed):
    xml = _planar_tree(seed)
    model, pin_model = Model.from_urdf(xml), _pin(xml)
    assert model.joint_names == list(pin_model.names[1:])
    assert sum(jm.type == "planar" for jm in model.joints) >= 2
    assert [pj.shortname() for pj in pin_model.joints[1:]].count("JointModelPlanar") >= 2
    rng = np.random.default_rng(seed)
    errors = _dynamics_errors(model, pin_model, rng)
    assert max(errors.values()) < TOL, errors
    data, pd = model.create_data(), pin_model.createData()
    for _ in range(3):
        q = random_configuration(model, rng)
        qp = pin_configuration(model, pin_model, q)
        v = rng.normal(size=model.nv)
        positions, rotations = frame_poses(model, data, q)
        pin.framesForwardKinematics(pin_model, pd, qp)
        for k, frame in enumerate(model.frame_names):
            oMf = pd.oMf[pin_model.getFrameId(frame, pin.FrameType.BODY)]
            np.testing.assert_allclose(positions[k], oMf.translation, atol=1e-12)
            np.testing.assert_allclose(rotations[k], oMf.rotation, atol=1e-12)
        q1 = integrate(model, q, v)
        np.testing.assert_allclose(pin_configuration(model, pin_model, q1),
                                   pin.integrate(pin_model, qp, v), atol=1e-12)
        np.testing.assert_allclose(difference(model, q, q1), v, atol=1e-10)
        np.testing.assert_allclose(difference(model, q, q1),
                                   pin.difference(pin_model, qp, pin.integrate(pin_model, qp, v)),
                                   atol=1e-10)


def test_corpus_planar_base_matches_pinocchio_at_many_states():
    """The corpus mobile base (planar root, two revolute joints) at 50 random states."""
    path = "tests/dynamics/urdf_corpus/mobile_base_planar.urdf"
    model = Model.from_urdf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pin_model = pin.buildModelFromUrdf(path)
    assert [jm.type for jm in model.joints] == ["planar", "revolute", "revolute"]
    assert (model.nq, model.nv) == (5, 5) and (pin_model.nq, pin_model.nv) == (7, 5)
    errors = _dynamics_errors(model, pin_model, np.random.default_rng(5), n_states=50)
    assert max(errors.values()) < TOL, errors


def _rotation_rpy(el):
    o = el.find("origin")
    rpy = [0.0, 0.0, 0.0] if o is None or o.get("rpy") is None else \
        [float(t) for t in o.get("rpy").split()]
    return Rotation.from_euler("xyz", rpy).as_matrix()


def _set_origin(el, xyz, R):
    o = el.find("origin")
    if o is None:
        o = ET.SubElement(el, "origin")
    o.set("xyz", " ".join(repr(float(x)) for x in xyz))
    o.set("rpy", " ".join(repr(float(x)) for x in Rotation.from_matrix(R).as_euler("xyz")))


def _xyz(el):
    o = el.find("origin")
    return np.zeros(3) if o is None or o.get("xyz") is None else \
        np.array([float(t) for t in o.get("xyz").split()])


def _general_axes(xml: str, seed: int) -> str:
    """The URDF with every planar joint turned about a random axis ``a``: its origin rotated by
    ``Qᵀ`` (``Q = [u1 u2 a]``) and everything expressed in the child link frame (inertial,
    child joint origins) rotated by ``Q``, so the mechanism is unchanged (link frames turned by
    ``Q``) and the joint's ``q``, ``v`` keep their meaning."""
    rng = np.random.default_rng(seed)
    robot = ET.fromstring(xml)
    links = {el.get("name"): el for el in robot.findall("link")}
    for j in robot.findall("joint"):
        if j.get("type") != "planar":
            continue
        a = rng.normal(size=3)
        a /= np.linalg.norm(a)
        Q = np.column_stack([plane_directions(a), a])
        _set_origin(j, _xyz(j), _rotation_rpy(j) @ Q.T)
        j.find("axis").set("xyz", " ".join(repr(float(x)) for x in a))
        child = j.find("child").get("link")
        inertial = links[child].find("inertial")
        if inertial is not None:
            _set_origin(inertial, Q @ _xyz(inertial), Q @ _rotation_rpy(inertial))
        for k in robot.findall("joint"):
            if k.find("parent").get("link") == child:
                _set_origin(k, Q @ _xyz(k), Q @ _rotation_rpy(k))
    return ET.tostring(robot, encoding="unicode")


@pytest.mark.parametrize("seed", range(3))
def test_general_axis_is_pinocchio_planar_in_a_rotated_frame(seed):
    """Pinocchio ignores the URDF axis of a planar joint; ``dynamics.minimal`` (like the URDF
    specification and ``dynamics.maximal``) moves in the plane normal to it. Rewriting the URDF
    so that the rotated joint frame carries ``z`` to ``a`` gives the same joint-space
    dynamics as Pinocchio's z-planar model of the original file."""
    xml = _planar_tree(10 + seed)
    general = _general_axes(xml, seed)
    model = Model.from_urdf(general)
    axes = [jm.axis for jm in model.joints if jm.type == "planar"]
    assert min(abs(a[2]) for a in axes) < 0.99
    errors = _dynamics_errors(model, _pin(xml), np.random.default_rng(seed))
    assert max(errors.values()) < TOL, errors


def test_plane_directions_are_right_handed():
    rng = np.random.default_rng(0)
    for a in [*np.eye(3), -np.eye(3)[2], *rng.normal(size=(20, 3))]:
        W = plane_directions(a)
        a = a / np.linalg.norm(a)
        np.testing.assert_allclose(W.T @ W, np.eye(2), atol=1e-15)
        np.testing.assert_allclose(np.cross(W[:, 0], W[:, 1]), a, atol=1e-15)
    np.testing.assert_array_equal(plane_directions([0, 0, 1]), np.eye(3)[:, :2])


# -- spec coordinates, maximal coordinates ----------------------------------------------------
ROTATED_BASE = """<robot name="rotated_planar"><link name="odom"/>
  <link name="base"><inertial><origin xyz="0.05 -0.02 0.1" rpy="0.2 0 0.4"/><mass value="8"/>
    <inertia ixx="0.2" ixy="0.01" ixz="0" iyy="0.3" iyz="0" izz="0.4"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="tip"/>
  <joint name="base_planar" type="planar"><parent link="odom"/><child link="base"/>
    <origin xyz="0.3 -0.1 0.2" rpy="0.3 -0.2 0.9"/><axis xyz="AXIS"/>
    <dynamics damping="0.4"/></joint>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0.1 0 0.2" rpy="0 0.1 0"/><axis xyz="0 1 0"/>
    <dynamics damping="0.05"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="arm"/><child link="tip"/>
    <origin xyz="0.4 0 0"/></joint>
</robot>"""
INITIAL_POS = {"base_planar": [0.2, -0.3, 0.7], "shoulder": [0.4]}
INITIAL_VEL = {"base_planar": [0.5, -0.4, 1.2], "shoulder": [-0.8]}


def _rotated_base(axis="0 0 1"):
    return ROTATED_BASE.replace("AXIS", axis)


def test_spec_coordinates_round_trip_and_match_maximal_basis():
    spec = load_urdf(_rotated_base("0.3 -0.5 0.8")).with_initial(INITIAL_POS, INITIAL_VEL)
    model = Model(spec)
    q, v = initial_state(model)
    pos, vel = to_spec_coordinates(model, q, v)
    for name in INITIAL_POS:
        np.testing.assert_allclose(pos[name], INITIAL_POS[name], atol=1e-14)
        np.testing.assert_allclose(vel[name], INITIAL_VEL[name], atol=1e-14)
    # the spec's translation is along dynamics.maximal's parent-frame plane basis
    jm = model.joints[0]
    j = spec.joints[0]
    R_off = Rotation.from_quat(np.roll(j.orientation_offset, -1)).as_matrix()
    C = basis(R_off @ j.axis)[:, :2]
    R, p = jm.transform(q[jm.q_slice])
    np.testing.assert_allclose(C.T @ R_off @ p, INITIAL_POS["base_planar"][:2], atol=1e-14)
    q2, v2 = from_spec_coordinates(model, pos, vel)
    np.testing.assert_allclose(q2, q, atol=1e-14)
    np.testing.assert_allclose(v2, v, atol=1e-14)


def test_rotated_planar_origin_matches_pinocchio_and_maximal():
    """Joint origin with ``rpy``: the maximal initial state, the minimal model and Pinocchio put
    every link frame at the same place with the same velocity."""
    from tests.dynamics.test_urdf_corpus import _check_initial_state_against_pinocchio
    xml = _rotated_base()
    spec = load_urdf(xml).with_initial(INITIAL_POS, INITIAL_VEL)
    _check_initial_state_against_pinocchio(spec, _pin(xml))


def _maximal_errors(spec, dt=1e-3, steps=100):
    model = Model(spec)
    q0, v0 = initial_state(model)
    res = simulate(model, q0, v0, dt, steps, "rk4")
    data = model.create_data()
    ref = np.array([frame_poses(model, data, q)[0] for q in res.q])
    errors = []
    for refine in (1, 2):
        sim = Simulation(spec, dt=dt / refine)
        traj = sim.run(steps * refine, progress=False)
        assert traj.constraint_violation.max() <= 1e-9
        positions, _ = sim.model.frame_poses(traj.x[::refine], traj.q[::refine])
        errors.append(np.abs(positions - ref).max())
    return ref, errors


@pytest.mark.parametrize("axis", ["0 0 1", "0.3 -0.5 0.8"])
def test_moving_planar_base_maximal_follows_minimal(axis):
    """A planar base moving and turning (0.5 m/s, 1.2 rad/s, dampers on) with a swinging arm:
    the maximal simulation follows the minimal RK4 one to the first-order error of the corpus
    tests (below 2e-3 m after 0.1 s at 1 ms, halving with the step)."""
    spec = load_urdf(_rotated_base(axis)).with_initial(INITIAL_POS, INITIAL_VEL)
    ref, errors = _maximal_errors(spec)
    base = spec.frames.index(next(f for f in spec.frames if f.name == "base"))
    assert np.ptp(ref[:, base], axis=0).max() > 0.02          # the base moves (3-4 cm)
    assert errors[0] < 2e-3, errors
    assert 1.8 < errors[0] / errors[1] < 2.2, errors


def test_semi_implicit_euler_is_pinocchios_step_for_step():
    """Minimal semi-implicit Euler with the joint dampers equals the same loop written with
    ``pin.aba`` and ``pin.integrate`` (200 steps of 1 ms, moving rotated base)."""
    xml = _rotated_base()
    spec = load_urdf(xml).with_initial(INITIAL_POS, INITIAL_VEL)
    model, pin_model = Model(spec), _pin(xml)
    q0, v0 = initial_state(model)
    dt, steps = 1e-3, 200
    res = simulate(model, q0, v0, dt, steps, "semi_implicit_euler")
    pd = pin_model.createData()
    damping = np.array([0.4, 0.4, 0.4, 0.05])
    q, v = pin_configuration(model, pin_model, q0), v0.copy()
    for _ in range(steps):
        v = v + dt * pin.aba(pin_model, pd, q, v, -damping * v)
        q = pin.integrate(pin_model, q, dt * v)
    np.testing.assert_allclose(joint_forces(model, q0, v0), -damping * v0, atol=1e-15)
    np.testing.assert_allclose(res.v[-1], v, atol=1e-11)
    np.testing.assert_allclose(pin_configuration(model, pin_model, res.q[-1]), q, atol=1e-11)


def test_rk4_tangent_rate_and_del_jacobian():
    """``tangent_rate`` is the derivative of ``δ`` along ``q_k ⊕ δ(t)`` moving with ``v``
    (the RKMK4 map), and the analytic DEL Jacobian equals finite differences on a planar
    joint (variational integrators)."""
    spec = load_urdf(_rotated_base("0.3 -0.5 0.8")).with_initial(INITIAL_POS, INITIAL_VEL)
    model = Model(spec)
    rng = np.random.default_rng(1)
    q0 = random_configuration(model, rng)
    delta, v = rng.normal(size=(2, model.nv))
    h = 1e-6
    lhs = integrate(model, q0, delta + h * tangent_rate(model, delta, v))
    rhs = integrate(model, integrate(model, q0, delta), h * v)
    np.testing.assert_allclose(lhs, rhs, atol=1e-11)
    data, dt = model.create_data(), 1e-2
    q1 = integrate(model, q0, dt * v)
    p = rng.normal(size=model.nv)
    J = del_jacobian(model, data, q0, p, q1, dt)
    fd = del_jacobian_fd(model, data, q0, p, q1, dt)
    assert np.abs(J - fd).max() < 1e-7 * np.abs(J).max()


def test_planar_spring_is_refused_damper_accepted():
    spec = load_urdf(_rotated_base())
    joints = tuple(dataclasses.replace(j, spring=2.0) if j.type == "planar" else j
                   for j in spec.joints)
    model = Model(dataclasses.replace(spec, joints=joints))
    with pytest.raises(TreeModelError, match="joint 'base_planar': springs on planar joints"):
        joint_forces(model, np.zeros(model.nq), np.zeros(model.nv))
