"""Tests of dynamics.urdf against Pinocchio's URDF parser (the oracle) on random URDF trees.

The spec poses are composed here with scipy rotations from the conventions of dynamics.spec:
``x_child = x_parent + Q(q_parent)(parent_point + t) - Q(q_child) child_point`` and
``q_child = q_parent ∘ q_off ∘ rot(axis, angle)``, with ``t = d Q(q_off) axis`` for a prismatic
joint and ``t`` in the parent frame for a floating one.
"""
from __future__ import annotations

import doctest
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dynamics.urdf
from dynamics.spec import WORLD, Body, Joint, MechanismSpec, SpecError
from dynamics.urdf import UrdfWarning, load_urdf, write_urdf

pin = pytest.importorskip("pinocchio")

SEEDS = range(12)


# -- a small random URDF generator -----------------------------------------------------------
@dataclass
class Link:
    mass: float
    com: np.ndarray             # inertial origin xyz (link frame)
    rot: np.ndarray             # inertial frame in the link frame (3×3)
    inertia: np.ndarray         # in the inertial frame


@dataclass
class RandomUrdf:
    xml: str
    links: dict                 # name -> Link
    parent: dict                # link name -> parent link name
    joint_type: dict            # joint name -> URDF type
    root: str


def _v(a) -> str:
    return " ".join(repr(float(x)) for x in a)


def random_urdf(seed: int, n_links: int | None = None, *, root_mass: bool = False,
                massless: bool = True) -> RandomUrdf:
    """A random URDF tree: 5-20 links, revolute/continuous/prismatic/fixed joints on random axes
    and origins, random inertial origins and rpy; some fixed-joint children are massless."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 21)) if n_links is None else n_links
    names = [f"L{k}" for k in rng.permutation(10 * n)[:n]]       # file order != sorted order
    jnames = [f"J{k}" for k in rng.permutation(10 * n)[:n]]
    links, parent, jtype, link_xml, joint_xml = {}, {}, {}, [], []
    for i, name in enumerate(names):
        kind = None if i == 0 else rng.choice(["revolute", "continuous", "prismatic", "fixed"],
                                               p=[0.3, 0.25, 0.25, 0.2])
        has_mass = (i == 0 and root_mass) or (
            i > 0 and not (massless and kind == "fixed" and rng.random() < 0.5))
        if has_mass:
            m = float(rng.uniform(0.5, 3.0))
            d = rng.uniform(0.1, 1.0, 3)
            inertia = m / 12 * np.diag([d[1]**2 + d[2]**2, d[0]**2 + d[2]**2, d[0]**2 + d[1]**2])
            R = Rotation.random(random_state=rng).as_matrix()
            inertia = R @ inertia @ R.T
            com, rpy = rng.normal(0, 0.3, 3), rng.uniform(-np.pi, np.pi, 3) * [1, 0.5, 1]
            links[name] = Link(m, com, Rotation.from_euler("xyz", rpy).as_matrix(), inertia)
            I = inertia.tolist()
            link_xml.append(
                f'<link name="{name}"><inertial><origin xyz="{_v(com)}" rpy="{_v(rpy)}"/>'
                f'<mass value="{m!r}"/><inertia ixx="{I[0][0]!r}" ixy="{I[0][1]!r}" '
                f'ixz="{I[0][2]!r}" iyy="{I[1][1]!r}" iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/>'
                "</inertial></link>")
        else:
            links[name] = Link(0.0, np.zeros(3), np.eye(3), np.zeros((3, 3)))
            link_xml.append(f'<link name="{name}"/>')
        if i == 0:
            continue
        parent[name] = names[int(rng.integers(0, i))]
        jn = jnames[i]
        jtype[jn] = kind
        if rng.random() < 0.4:
            axis = np.eye(3)[rng.integers(3)] * rng.choice([-1, 1])
        else:
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
        xyz, rpy = rng.normal(0, 0.5, 3), rng.uniform(-np.pi, np.pi, 3) * [1, 0.5, 1]
        limit = ('<limit lower="-3" upper="3" effort="10" velocity="10"/>'
                 if kind in ("revolute", "prismatic") else "")
        joint_xml.append(
            f'<joint name="{jn}" type="{kind}"><parent link="{parent[name]}"/>'
            f'<child link="{name}"/><origin xyz="{_v(xyz)}" rpy="{_v(rpy)}"/>'
            f'<axis xyz="{_v(axis)}"/>{limit}</joint>')
    elems = link_xml + joint_xml
    order = rng.permutation(len(elems))
    xml = '<robot name="random">' + "\n".join(elems[k] for k in order) + "</robot>"
    return RandomUrdf(xml, links, parent, jtype, names[0])


# -- oracles -----------------------------------------------------------------------------------
def _rot(q) -> Rotation:
    """scipy rotation of a scalar-first quaternion."""
    return Rotation.from_quat(np.roll(q, -1))


def spec_poses(spec: MechanismSpec, coords: dict) -> dict:
    """World (position, rotation) of every body's centre of mass from the spec conventions."""
    poses = {WORLD: (np.zeros(3), Rotation.identity())}
    for j in spec.joints:
        x_p, R_p = poses[j.parent]
        R_off = _rot(j.orientation_offset)
        t, R_j = np.zeros(3), Rotation.identity()
        c = coords.get(j.name, np.zeros(j.dof))
        if j.type == "revolute":
            R_j = Rotation.from_rotvec(j.axis * c)
        elif j.type == "prismatic":
            t = c * R_off.apply(np.array(j.axis))
        elif j.type == "floating":
            t, R_j = c[:3], Rotation.from_rotvec(c[3:])
        R_c = R_p * R_off * R_j
        x_c = x_p + R_p.apply(j.parent_point + t) - R_c.apply(np.array(j.child_point))
        poses[j.child] = (x_c, R_c)
    return poses


def random_coords(spec: MechanismSpec, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for j in spec.joints:
        if j.type == "revolute":
            out[j.name] = rng.uniform(-np.pi, np.pi)
        elif j.type == "prismatic":
            out[j.name] = rng.uniform(-1.0, 1.0)
        elif j.type == "floating":
            out[j.name] = np.concatenate([rng.normal(size=3), Rotation.random(
                random_state=rng).as_rotvec()])
    return out


def pin_config(model, coords: dict) -> np.ndarray:
    """Pinocchio configuration of the spec coordinates (continuous joints as cos, sin)."""
    q = pin.neutral(model)
    for i in range(1, model.njoints):
        jm, c = model.joints[i], coords.get(model.names[i], 0.0)
        if jm.nq == 1:
            q[jm.idx_q] = c
        elif jm.nq == 2:
            q[jm.idx_q:jm.idx_q + 2] = np.cos(c), np.sin(c)
        else:
            q[jm.idx_q:jm.idx_q + 7] = np.concatenate(
                [c[:3], Rotation.from_rotvec(c[3:]).as_quat()])
    return q


def pin_placements(model, q) -> dict:
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    pin.updateFramePlacements(model, data)
    return {f.name: data.oMf[k] for k, f in enumerate(model.frames) if f.type == pin.BODY}


def expected_bodies(gen: RandomUrdf, spec: MechanismSpec, oMf: dict) -> dict:
    """Per spec body: world rotation of its link frame, COM and inertia of its merged links."""
    bodies = {b.name for b in spec.bodies}
    members: dict = {b: [] for b in bodies}
    for link in gen.links:
        owner = link
        while owner not in bodies and owner != gen.root:
            owner = gen.parent[owner]
        if owner in bodies:
            members[owner].append(link)
    out = {}
    for b, ls in members.items():
        m = sum(gen.links[k].mass for k in ls)
        x = [oMf[k].translation + oMf[k].rotation @ gen.links[k].com for k in ls]
        com = sum(gen.links[k].mass * xk for k, xk in zip(ls, x, strict=True)) / m
        inertia = np.zeros((3, 3))
        for k, xk in zip(ls, x, strict=True):
            lk = gen.links[k]
            R = oMf[k].rotation @ lk.rot
            d = xk - com
            inertia += R @ lk.inertia @ R.T + lk.mass * (d @ d * np.eye(3) - np.outer(d, d))
        out[b] = (m, com, oMf[b].rotation, inertia)
    return out


def check_against_pinocchio(gen, spec, model, coords):
    oMf = pin_placements(model, pin_config(model, coords))
    poses = spec_poses(spec, coords)
    for b, (m, com, R, inertia) in expected_bodies(gen, spec, oMf).items():
        body = spec.bodies[spec.body_index(b)]
        x, R_spec = poses[b]
        assert body.mass == pytest.approx(m, rel=1e-12)
        np.testing.assert_allclose(x, com, atol=1e-10, err_msg=b)
        np.testing.assert_allclose(R_spec.as_matrix(), R, atol=1e-10, err_msg=b)
        Rm = R_spec.as_matrix()
        np.testing.assert_allclose(Rm @ body.inertia @ Rm.T, inertia, atol=1e-10, err_msg=b)


# -- load_urdf vs Pinocchio --------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_random_tree_matches_pinocchio(seed):
    gen = random_urdf(seed, root_mass=seed % 2 == 1)
    spec = load_urdf(gen.xml)
    model = pin.buildModelFromXML(gen.xml)
    assert [j.name for j in spec.joints if j.type != "fixed"] == list(model.names[1:])
    root_mass = gen.links[gen.root].mass
    pin_mass = sum(model.inertias[i].mass for i in range(model.njoints)) - root_mass
    assert sum(b.mass for b in spec.bodies) == pytest.approx(pin_mass, rel=1e-12)
    assert {b.name for b in spec.bodies} <= set(gen.links) - {gen.root}
    check_against_pinocchio(gen, spec, model, {})
    check_against_pinocchio(gen, spec, model, random_coords(spec, seed))


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_floating_base_matches_pinocchio(seed):
    gen = random_urdf(seed, root_mass=True)
    spec = load_urdf(gen.xml, floating_base=True)
    model = pin.buildModelFromXML(gen.xml, pin.JointModelFreeFlyer())
    assert spec.joints[0].type == "floating" and spec.joints[0].parent == WORLD
    assert [j.name for j in spec.joints if j.type != "fixed"] == list(model.names[1:])
    assert sum(b.mass for b in spec.bodies) == pytest.approx(pin.computeTotalMass(model))
    check_against_pinocchio(gen, spec, model, random_coords(spec, seed))


def test_children_ordered_by_joint_name_like_pinocchio():
    links = "".join(f'<link name="{n}"><inertial><mass value="1"/><inertia ixx="1" ixy="0" '
                    f'ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>' for n in "abc")
    joints = "".join(f'<joint name="{jn}" type="continuous"><parent link="r"/>'
                     f'<child link="{c}"/></joint>' for jn, c in [("z", "a"), ("m", "b"),
                                                                  ("b", "c")])
    xml = f'<robot name="t"><link name="r"/>{links}{joints}</robot>'
    assert [j.name for j in load_urdf(xml).joints] == ["b", "m", "z"]
    assert list(pin.buildModelFromXML(xml).names[1:]) == ["b", "m", "z"]


# -- write_urdf round trip ---------------------------------------------------------------------
@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("seed", SEEDS[:6])
def test_round_trip(seed, floating):
    gen = random_urdf(seed, root_mass=True)
    spec = load_urdf(gen.xml, floating_base=floating)
    text = write_urdf(spec)
    again = load_urdf(text)
    assert [b.name for b in again.bodies] == [b.name for b in spec.bodies]
    for b1, b2 in zip(spec.bodies, again.bodies, strict=True):
        assert b1.mass == b2.mass
        np.testing.assert_allclose(b1.inertia, b2.inertia, rtol=0, atol=1e-15)
    for j1, j2 in zip(spec.joints, again.joints, strict=True):
        assert (j1.name, j1.type, j1.parent, j1.child) == (j2.name, j2.type, j2.parent, j2.child)
        for field in ("parent_point", "child_point", "axis"):
            np.testing.assert_allclose(getattr(j1, field), getattr(j2, field), atol=1e-12)
        qa, qb = j1.orientation_offset, j2.orientation_offset
        assert min(np.abs(qa - qb).max(), np.abs(qa + qb).max()) < 1e-12
    coords = random_coords(spec, seed)
    p1, p2 = spec_poses(spec, coords), spec_poses(again, coords)
    for b in spec.bodies:
        np.testing.assert_allclose(p1[b.name][0], p2[b.name][0], atol=1e-12)
        np.testing.assert_allclose(p1[b.name][1].as_matrix(), p2[b.name][1].as_matrix(),
                                   atol=1e-12)
    # Pinocchio sees the same mechanism: same link frames and the same mass matrix
    m1 = (pin.buildModelFromXML(gen.xml, pin.JointModelFreeFlyer()) if floating
          else pin.buildModelFromXML(gen.xml))
    m2 = pin.buildModelFromXML(text)
    assert list(m1.names) == list(m2.names)
    q1, q2 = pin_config(m1, coords), pin_config(m2, coords)
    f1, f2 = pin_placements(m1, q1), pin_placements(m2, q2)
    for b in spec.bodies:
        np.testing.assert_allclose(f1[b.name].homogeneous, f2[b.name].homogeneous, atol=1e-10)
    M1 = pin.crba(m1, m1.createData(), q1)
    M2 = pin.crba(m2, m2.createData(), q2)
    np.testing.assert_allclose(np.triu(M1), np.triu(M2), atol=1e-9)


def test_write_urdf_rpy_gimbal_lock():
    body = Body("b", 1.0, np.eye(3))
    for pitch in (np.pi / 2, -np.pi / 2):
        q = Rotation.from_euler("xyz", [0.3, pitch, -1.1]).as_quat()
        spec = MechanismSpec([body], [Joint("j", "revolute", WORLD, "b",
                                            orientation_offset=np.roll(q, 1))])
        q2 = load_urdf(write_urdf(spec)).joints[0].orientation_offset
        np.testing.assert_allclose(_rot(q2).as_matrix(), Rotation.from_quat(q).as_matrix(),
                                   atol=1e-9)


# -- hand-written cases ------------------------------------------------------------------------
INERTIAL = ('<inertial><origin xyz="0.1 0 0" rpy="0 0 1.5707963267948966"/><mass value="2"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="2" iyz="0" izz="3"/></inertial>')


def _robot(joints: str, links=("a", "b"), root="r") -> str:
    body = "".join(f'<link name="{n}">{INERTIAL}</link>' for n in links)
    return f'<robot name="t"><link name="{root}"/>{body}{joints}</robot>'


def _joint(name, kind, parent, child, extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{extra}</joint>')


def test_conventions_by_hand(tmp_path):
    xml = _robot(_joint("j1", "planar", "r", "a", '<origin xyz="0 0 1"/><axis xyz="0 0 1"/>'
                        '<dynamics damping="0.5" friction="1"/>')
                 + _joint("j2", "prismatic", "a", "b", '<origin xyz="1 0 0" rpy="0 0 0.5"/>'))
    path = tmp_path / "t.urdf"
    path.write_text(xml)
    spec = load_urdf(path, name="hand")
    assert spec.name == "hand"
    a, b = spec.bodies
    np.testing.assert_allclose(a.inertia, np.diag([2.0, 1.0, 3.0]), atol=1e-15)  # rotated by yaw
    j1, j2 = spec.joints
    assert (j1.type, j1.damper, j1.actuated) == ("planar", 0.5, True)
    np.testing.assert_allclose(j1.parent_point, [0, 0, 1])
    np.testing.assert_allclose(j2.parent_point, [0.9, 0, 0])
    np.testing.assert_allclose(j2.child_point, [-0.1, 0, 0])
    np.testing.assert_allclose(j2.axis, [1, 0, 0])          # URDF default axis
    np.testing.assert_allclose(j2.orientation_offset, [np.cos(0.25), 0, 0, np.sin(0.25)])


def test_massless_fixed_links_are_merged():
    xml = ('<robot name="t"><link name="r"/><link name="tool"/><link name="a">'
           f'{INERTIAL}</link>'
           + _joint("j1", "continuous", "r", "a")
           + _joint("jt", "fixed", "a", "tool", '<origin xyz="0 0 2"/>') + "</robot>")
    spec = load_urdf(xml)
    assert [b.name for b in spec.bodies] == ["a"] and [j.name for j in spec.joints] == ["j1"]


def test_massless_floating_root_takes_its_fixed_child_mass():
    xml = ('<robot name="t"><link name="footprint"/>'
           + "".join(f'<link name="{n}">{INERTIAL}</link>' for n in ("base", "arm"))
           + _joint("jb", "fixed", "footprint", "base", '<origin xyz="0 0 0.3" rpy="0 0 0.7"/>')
           + _joint("ja", "continuous", "base", "arm", '<origin xyz="0.2 0 0" rpy="1 0 0"/>')
           + "</robot>")
    spec = load_urdf(xml, floating_base=True)
    assert [(b.name, b.mass) for b in spec.bodies] == [("footprint", 2.0), ("arm", 2.0)]
    assert [j.name for j in spec.joints] == ["root_joint", "ja"]
    model = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    coords = random_coords(spec, 3)
    poses = spec_poses(spec, coords)
    com = sum(b.mass * poses[b.name][0] for b in spec.bodies) / 4.0
    data = model.createData()
    np.testing.assert_allclose(pin.centerOfMass(model, data, pin_config(model, coords)), com,
                               atol=1e-12)


def test_doctests():
    assert doctest.testmod(dynamics.urdf).failed == 0


# -- one test per failure mode -----------------------------------------------------------------
@pytest.mark.parametrize("xml, match", [
    (_robot(_joint("jx", "screw", "r", "a") + _joint("j2", "fixed", "a", "b")),
     "joint 'jx'.*'screw'"),
    (_robot(_joint("j1", "fixed", "r", "a") + _joint("j2", "fixed", "r", "b")
            + _joint("j3", "continuous", "a", "b")), "loop"),
    (_robot(_joint("j1", "continuous", "r", "a") + _joint("j2", "continuous", "a", "b"),
            links=("a",)).replace("</robot>", '<link name="b"/></robot>'),
     "link 'b' has no mass.*massless"),
    ('<robot name="t"><link name="r"></robot>', "malformed URDF XML"),
    (_robot(_joint("j1", "fixed", "r", "nowhere")), "unknown link 'nowhere'"),
    ('<robot name="t"><link name="a"/><link name="b"/>' + _joint("j1", "fixed", "a", "b")
     + _joint("j2", "fixed", "b", "a") + "</robot>", "one root link.*loop"),
    ("<model/>", "<robot>"),
    (_robot(_joint("j1", "fixed", "r", "a")).replace('value="2"', 'value="-2"'),
     "link 'a': mass must be >= 0"),
])
def test_load_errors(xml, match):
    with pytest.raises(SpecError, match=match):
        load_urdf(xml)


def test_mimic_warns():
    xml = _robot(_joint("j1", "continuous", "r", "a")
                 + _joint("j2", "continuous", "a", "b", '<mimic joint="j1"/>'))
    with pytest.warns(UrdfWarning, match="j2.*mimic"):
        load_urdf(xml)
    with pytest.warns(UrdfWarning, match="j2.*mimic.*independent joint"):
        spec = load_urdf(xml, mimic="independent")
    assert [j.name for j in spec.joints] == ["j1", "j2"]


@pytest.mark.parametrize("attrs, numbers", [
    ('joint="j1"', "multiplier 1, offset 0"),                      # URDF defaults
    ('joint="j1" multiplier="-0.5" offset="0.25"', "multiplier -0.5, offset 0.25"),
])
def test_mimic_error(attrs, numbers):
    xml = _robot(_joint("j1", "continuous", "r", "a")
                 + _joint("j2", "continuous", "a", "b", f"<mimic {attrs}/>"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UrdfWarning)          # no warning before the error
        with pytest.raises(SpecError, match=rf"joint 'j2' mimics joint 'j1' \({numbers}\).*"
                                            r'mimic="independent"'):
            load_urdf(xml, mimic="error")
    # without <mimic> the option changes nothing
    plain = _robot(_joint("j1", "continuous", "r", "a"), links=("a",))
    assert write_urdf(load_urdf(plain, mimic="error")) == write_urdf(load_urdf(plain))
    with pytest.raises(ValueError, match="mimic must be one of"):
        load_urdf(plain, mimic="couple")


def test_write_errors():
    body = Body("b", 1.0, np.eye(3))
    with pytest.raises(SpecError, match="joint 'j'.*'spherical'"):
        write_urdf(MechanismSpec([body], [Joint("j", "spherical", WORLD, "b")]))
    loop = MechanismSpec([body], [Joint("j", "revolute", WORLD, "b"),
                                  Joint("k", "revolute", WORLD, "b")])
    with pytest.raises(SpecError, match="loops"):
        write_urdf(loop)
    sprung = MechanismSpec([body], [Joint("j", "revolute", WORLD, "b", spring=1.0)])
    with pytest.warns(UrdfWarning, match="spring"):
        write_urdf(sprung)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_urdf(MechanismSpec([body], [Joint("j", "revolute", WORLD, "b")]))


# -- issue 24: published-URDF patterns ---------------------------------------------------------
POINT = '<inertial><origin xyz="0 0.1 0"/><mass value="0.5"/><inertia ixx="0" ixy="0" ixz="0" ' \
        'iyy="0" iyz="0" izz="0"/></inertial>'


def _pin_frames_match(xml, spec, seed=0):
    """Every spec frame (one per URDF link) at Pinocchio's BODY frame placement."""
    from dynamics.minimal import Model, frame_poses, random_configuration
    from tests.dynamics.minimal_trees import pin_configuration
    model, pin_model = Model(spec), pin.buildModelFromXML(xml)
    q = random_configuration(model, np.random.default_rng(seed))
    positions, rotations = frame_poses(model, model.create_data(), q)
    data = pin_model.createData()
    pin.framesForwardKinematics(pin_model, data, pin_configuration(model, pin_model, q))
    for k, name in enumerate(model.frame_names):
        oMf = data.oMf[pin_model.getFrameId(name, pin.FrameType.BODY)]
        np.testing.assert_allclose(positions[k], oMf.translation, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(rotations[k], oMf.rotation, atol=1e-12, err_msg=name)


def test_fixed_joint_axis_is_ignored():
    xml = _robot(_joint("j1", "continuous", "r", "a", '<axis xyz="0 0 1"/>')
                 + _joint("jf", "fixed", "a", "b", '<origin xyz="0 0 1"/><axis xyz="0 0 0"/>'))
    spec = load_urdf(xml)
    assert [j.type for j in spec.joints] == ["revolute", "fixed"]
    _pin_frames_match(xml, spec)


@pytest.mark.parametrize("kind", ["revolute", "continuous", "prismatic", "planar"])
def test_zero_axis_of_a_moving_joint_is_an_error(kind):
    xml = _robot(_joint("jz", kind, "r", "a", '<axis xyz="0 0 0"/>'), links=("a",))
    with pytest.raises(SpecError, match=f"joint 'jz' \\({kind}\\).*zero"):
        load_urdf(xml)


def test_massless_link_in_the_middle_of_a_fixed_chain_is_merged():
    """a -fixed- m (massless) -fixed- s (body) and -fixed- p (point mass), and a moving joint
    below m: m and p merge into a; s stays a body welded to a; j2 hangs from a."""
    xml = ('<robot name="t"><link name="r"/><link name="m"/>'
           + "".join(f'<link name="{n}">{INERTIAL}</link>' for n in ("a", "s", "b"))
           + f'<link name="p">{POINT}</link><link name="tip"/>'
           + _joint("j1", "continuous", "r", "a", '<axis xyz="0 0 1"/>')
           + _joint("f1", "fixed", "a", "m", '<origin xyz="0 0 0.5" rpy="0.3 0 1"/>'
                    '<axis xyz="0 0 0"/>')
           + _joint("f2", "fixed", "m", "s", '<origin xyz="0.2 0 0"/>')
           + _joint("f3", "fixed", "m", "p", '<origin xyz="0 0.3 0"/>')
           + _joint("j2", "continuous", "m", "b", '<axis xyz="0 1 0"/>')
           + _joint("f4", "fixed", "b", "tip", '<origin xyz="0 0 0.4"/>') + "</robot>")
    spec = load_urdf(xml)
    assert [(b.name, b.mass) for b in spec.bodies] == [("a", 2.5), ("s", 2.0), ("b", 2.0)]
    assert [(j.name, j.parent) for j in spec.joints] == [("j1", WORLD), ("f2", "a"),
                                                         ("j2", "a")]
    assert {f.name: f.body for f in spec.frames} == {
        "r": WORLD, "a": "a", "m": "a", "s": "s", "p": "a", "b": "b", "tip": "b"}
    _pin_frames_match(xml, spec)


def test_massless_joint_frame_takes_its_fixed_group():
    """A joint's child is a massless frame with the mesh links fixed below it: the whole
    fixed group becomes one body named after the joint frame."""
    xml = ('<robot name="t"><link name="r"/><link name="frame"/>'
           + "".join(f'<link name="{n}">{INERTIAL}</link>' for n in ("mesh", "cover"))
           + _joint("j1", "continuous", "r", "frame")
           + _joint("f1", "fixed", "frame", "mesh", '<origin xyz="0 0 0.2" rpy="0 0 1"/>')
           + _joint("f2", "fixed", "mesh", "cover", '<origin xyz="0.1 0 0"/>') + "</robot>")
    spec = load_urdf(xml)
    assert [(b.name, b.mass) for b in spec.bodies] == [("frame", 4.0)]
    _pin_frames_match(xml, spec)


def test_massless_link_between_moving_joints():
    """Minimal coordinates load it (a singular body); maximal coordinates name it and its
    joints."""
    from dynamics.maximal import Simulation
    xml = _robot(_joint("j1", "continuous", "r", "a", '<axis xyz="0 0 1"/>')
                 + _joint("w1", "continuous", "a", "cross", '<axis xyz="1 0 0"/>')
                 + _joint("w2", "continuous", "cross", "b", '<axis xyz="0 1 0"/>')
                 ).replace("</robot>", '<link name="cross"/></robot>')
    spec = load_urdf(xml)
    cross = spec.bodies[spec.body_index("cross")]
    assert cross.mass == 0.0 and cross.allow_singular and cross.singular
    _pin_frames_match(xml, spec)
    with pytest.raises(SpecError, match=r"body 'cross' has no mass.*\['w1'\].*\['w2'\]"):
        Simulation(spec, dt=1e-3)


def test_singular_articulated_inertia_is_a_clear_minimal_error():
    from dynamics.minimal import Model, TreeModelError
    xml = _robot(_joint("outer", "continuous", "r", "f", '<axis xyz="0 0 1"/>')
                 + _joint("inner", "continuous", "f", "a", '<axis xyz="0 0 1"/>'),
                 links=("a",)).replace("</robot>", '<link name="f"/></robot>')
    with pytest.raises(TreeModelError, match=r"\['outer'\].*singular articulated inertia"):
        Model(load_urdf(xml))


@pytest.mark.parametrize("xml, match", [
    ('<robot name="e"></robot>', "robot 'e' has no <link> elements"),
    (f'<robot name="one"><link name="solo">{INERTIAL}</link></robot>',
     "single link 'solo' and no joints.*floating_base=True"),
    ('<robot name="w"><link name="r"/><link name="s"/>'
     + _joint("f", "fixed", "r", "s") + "</robot>",
     "every link other than the root link 'r' is massless"),
])
def test_robots_without_bodies(xml, match):
    with pytest.raises(SpecError, match=match):
        load_urdf(xml)


def test_single_link_with_a_floating_base():
    xml = f'<robot name="one"><link name="solo">{INERTIAL}</link></robot>'
    spec = load_urdf(xml, floating_base=True)
    assert [(j.name, j.type) for j in spec.joints] == [("root_joint", "floating")]
    assert [f.body for f in spec.frames] == ["solo"]


def test_single_massless_link_with_a_floating_base_is_an_error():
    with pytest.raises(SpecError, match="link 'solo' has no mass.*floating root"):
        load_urdf('<robot name="one"><link name="solo"/></robot>', floating_base=True)


def test_visuals_collisions_and_package_meshes_are_ignored():
    mesh = ('<visual><geometry><mesh filename="package://my_robot/meshes/a.dae"/></geometry>'
            '</visual><collision><geometry><mesh filename="package://my_robot/meshes/a.stl"/>'
            '</geometry></collision>')
    xml = _robot(_joint("j1", "revolute", "r", "a", '<limit lower="-1" upper="1" effort="1" '
                        'velocity="1"/>'), links=("a",)).replace(
        f"{INERTIAL}</link>", f"{INERTIAL}{mesh}</link>").replace(
        "</robot>", '<transmission name="t"><joint name="j1"/></transmission>'
        '<gazebo reference="a"/></robot>')
    plain = load_urdf(_robot(_joint("j1", "revolute", "r", "a"), links=("a",)))
    spec = load_urdf(xml)
    assert spec.bodies[0].mass == plain.bodies[0].mass
    np.testing.assert_array_equal(spec.bodies[0].inertia, plain.bodies[0].inertia)


def test_frame_and_singular_body_validation():
    from dynamics.spec import Frame
    body = Body("b", 1.0, np.eye(3))
    joint = Joint("j", "revolute", WORLD, "b")
    with pytest.raises(SpecError, match="frame 'f' is on unknown body 'x'"):
        MechanismSpec([body], [joint], frames=[Frame("f", "x")])
    with pytest.raises(SpecError, match="duplicate frame names"):
        MechanismSpec([body], [joint], frames=[Frame("f", "b"), Frame("f", WORLD)])
    with pytest.raises(SpecError, match="frame 'f': orientation must be a unit quaternion"):
        Frame("f", "b", orientation=[2.0, 0, 0, 0])
    with pytest.raises(SpecError, match="no frame named 'g'"):
        MechanismSpec([body], [joint], frames=[Frame("f", "b")]).frame("g")
    with pytest.raises(SpecError, match="mass must be positive"):
        Body("m", 0.0, np.zeros((3, 3)))
    with pytest.raises(SpecError, match="not positive semi-definite"):
        Body("m", 1.0, np.diag([1.0, 1.0, -1.0]), allow_singular=True)
    assert Body("m", 0.0, np.zeros((3, 3)), allow_singular=True).singular
    assert not body.singular
