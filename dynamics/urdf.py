"""URDF import and export for :class:`~dynamics.spec.MechanismSpec`.

:func:`load_urdf` turns a URDF kinematic tree into a spec (body frames at the centres of mass,
joint frames from the URDF joint origins); :func:`write_urdf` writes a tree spec back as URDF, so
the same mechanism can be handed to Pinocchio (``pinocchio.buildModelFromXML``).

Frames (URDF -> spec)
---------------------
A URDF link frame ``L`` carries an ``<inertial>`` at ``origin (xyz = c, rpy)``. The spec body of
the link sits at the centre of mass ``c`` but keeps the *link* orientation, so its inertia is
``I_L = R(rpy) I R(rpy)ᵀ``. A URDF joint with ``origin (xyz, rpy)`` and ``axis`` becomes a spec
joint with ``parent_point = xyz - c_parent``, ``orientation_offset = from_rpy(rpy)``,
``child_point = -c_child`` and the same ``axis`` (the URDF joint frame is the child link frame
at zero joint coordinates, and the axis is given in it). The root link (never a child) is the
fixed world: joints from it get ``parent = "world"`` and ``parent_point = xyz``.

References
----------
URDF XML specification, https://wiki.ros.org/urdf/XML (link, joint, inertial elements).
Pinocchio URDF parser (``pinocchio/parsers/urdf``): joints in depth-first order of the tree,
children of a link ordered by joint name (urdfdom keeps joints in a ``std::map``); fixed joints
are folded into their parent body and kept as frames.
"""
from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from . import quaternion as quat
from .spec import WORLD, Body, Frame, Joint, MechanismSpec, SpecError

__all__ = ["load_urdf", "write_urdf", "UrdfWarning", "URDF_JOINT_TYPES"]

#: URDF joint type -> spec joint type.
URDF_JOINT_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
                    "fixed": "fixed", "floating": "floating", "planar": "planar"}
#: Values of ``load_urdf(..., mimic=...)``.
MIMIC_MODES = ("independent", "error")
#: Name of the floating joint added by ``load_urdf(..., floating_base=True)`` (Pinocchio's name).
ROOT_JOINT = "root_joint"
#: Position (where a joint has no limit), velocity and effort bound written for revolute and
#: prismatic joints (urdfdom needs a ``<limit>``).
_BIG = 1e9


class UrdfWarning(UserWarning):
    """A URDF feature that has no spec (or spec feature without URDF) counterpart was dropped."""


def _floats(text: str | None, n: int, what: str, default: tuple[float, ...]) -> np.ndarray:
    if text is None:
        return np.array(default, dtype=float)
    try:
        a = np.array([float(t) for t in text.split()])
    except ValueError:
        raise SpecError(f"{what}: cannot read numbers from {text!r}") from None
    if a.shape != (n,):
        raise SpecError(f"{what}: expected {n} numbers, got {text!r}")
    return a


def _origin(elem: ET.Element, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``(xyz, q)`` of the ``<origin>`` child of ``elem`` (identity when absent)."""
    o = elem.find("origin")
    if o is None:
        return np.zeros(3), quat.IDENTITY.copy()
    xyz = _floats(o.get("xyz"), 3, f"{what} origin xyz", (0.0, 0.0, 0.0))
    rpy = _floats(o.get("rpy"), 3, f"{what} origin rpy", (0.0, 0.0, 0.0))
    return xyz, quat.from_rpy(rpy)


def _inertial(link: ET.Element) -> tuple[float, np.ndarray, np.ndarray]:
    """``(mass, com, inertia)`` in the link frame; ``(0, 0, 0)`` without ``<inertial>``."""
    name = link.get("name")
    el = link.find("inertial")
    if el is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    c, q = _origin(el, f"link {name!r} inertial")
    m_el, i_el = el.find("mass"), el.find("inertia")
    if m_el is None or i_el is None:
        raise SpecError(f"link {name!r}: <inertial> needs <mass> and <inertia>")
    try:
        m = float(m_el.get("value", ""))
        ixx, ixy, ixz, iyy, iyz, izz = (float(i_el.get(k, "0"))
                                        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    except ValueError:
        raise SpecError(f"link {name!r}: unreadable mass or inertia") from None
    if not m >= 0.0:
        raise SpecError(f"link {name!r}: mass must be >= 0, got {m}")
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    R = quat.rotation_matrix(q)
    return m, c, R @ inertia @ R.T


def _combine(parts):
    """Mass, centre of mass and inertia about it of ``(m, c, I)`` parts in one frame.

    Parts of zero mass still add their rotational inertia ``I``; without mass the centre of
    mass is the frame origin.
    """
    m = sum(p[0] for p in parts)
    c = sum(p[0] * p[1] for p in parts) / m if m > 0.0 else np.zeros(3)
    inertia = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        d = ci - c
        inertia += Ii + mi * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, 0.5 * (inertia + inertia.T)


def _proper(m: float, inertia: np.ndarray) -> bool:
    """Whether ``(m, inertia)`` is a regular rigid body: ``m > 0``, ``inertia`` positive
    definite (the test of :class:`~dynamics.spec.Body`)."""
    return m > 0.0 and bool(np.linalg.eigvalsh(inertia).min() > 0.0)


def _parse(source) -> ET.Element:
    if isinstance(source, ET.Element):
        return source
    text = os.fspath(source)
    try:
        if text.lstrip().startswith("<"):
            root = ET.fromstring(text)
        else:
            with open(text, encoding="utf-8") as f:
                root = ET.parse(f).getroot()
    except ET.ParseError as e:
        raise SpecError(f"malformed URDF XML: {e}") from None
    if root.tag != "robot":
        raise SpecError(f"URDF root element must be <robot>, got <{root.tag}>")
    return root


def load_urdf(path_or_string, *, floating_base: bool = False,
              name: str | None = None, mimic: str = "independent",
              limits: bool = False) -> MechanismSpec:
    """Read a URDF kinematic tree as a :class:`~dynamics.spec.MechanismSpec`.

    Parameters
    ----------
    path_or_string : str, os.PathLike or xml.etree.ElementTree.Element
        A file path, the URDF text itself (anything starting with ``<``) or a parsed
        ``<robot>`` element.
    floating_base : bool
        If true, the root link becomes a body joined to the world by a ``"floating"`` joint
        named ``"root_joint"`` (as ``pinocchio.buildModelFromXML(xml, JointModelFreeFlyer())``);
        its coordinates are the root *link* frame's position and rotation vector. Otherwise the
        root link is the fixed world and its inertia is ignored.
    name : str, optional
        The spec's name (default: the ``<robot name>``).
    mimic : {"independent", "error"}
        Joints with a ``<mimic joint multiplier offset>`` element. ``"independent"`` (default):
        loaded as independent joints (no coupling) with a :class:`UrdfWarning`, as Pinocchio's
        URDF parser does by default. ``"error"``: :class:`SpecError` naming the joint, the
        joint it mimics, the multiplier and the offset (URDF defaults 1 and 0), for callers
        that must not simulate a coupled mechanism as an uncoupled one.
    limits : bool
        If true, the ``<limit lower upper>`` of ``revolute`` and ``prismatic`` joints become
        the spec joints' ``lower`` / ``upper`` (hard stops in ``dynamics.maximal``). A
        revolute range of a whole turn or more, or an empty one (``lower >= upper``, e.g.
        both attributes missing: URDF's default 0), is loaded without limits, with a
        :class:`UrdfWarning`. Default false: the joints are unbounded, as in Pinocchio's
        dynamics, which keeps the limits as data only.

    Returns
    -------
    MechanismSpec
        Joints in Pinocchio's order: depth-first from the root, the children of a link sorted
        by joint name (urdfdom's order, not file order). Bodies in the order of their joints.
        URDF ``continuous`` joints become ``"revolute"``, ``planar`` joints ``"planar"`` (plane
        normal to the axis plus rotation about it), ``floating`` joints ``"floating"``.
        ``<dynamics damping>`` sets ``Joint.damper``; limits are read with ``limits=True``
        (else ignored), friction is ignored; movable
        joints other than floating ones are ``actuated``. The axis of fixed and floating
        joints is ignored (``<axis xyz="0 0 0"/>`` is common there). ``<visual>``,
        ``<collision>`` (``package://`` meshes), ``<transmission>`` and ``<gazebo>`` are not
        read. Gravity is the spec default. ``spec.frames`` holds one
        :class:`~dynamics.spec.Frame` per URDF link (named like the link, in Pinocchio's
        order), on the body the link belongs to or on the world: the poses of merged sensor,
        camera and tool links come from ``dynamics.minimal.frame_poses`` or
        ``dynamics.maximal.MaximalModel.frame_poses`` / ``Simulation.frame_pose``.

    Raises
    ------
    SpecError
        Malformed XML; a robot without links; a fixed-base robot without a body (a single
        link, or only massless links welded to the root); an unknown joint type (naming joint
        and type); a ``<mimic>`` joint with ``mimic="error"``; a zero axis on a revolute,
        continuous, prismatic or planar joint; a link that is the child of two joints (a
        loop) or no single root; a joint naming an unknown link; a massless link with no mass
        moving with it (see Notes); bad numbers.
    ValueError
        An unknown ``mimic`` option.

    Warns
    -----
    UrdfWarning
        For ``<mimic>`` joints with ``mimic="independent"`` (loaded as independent joints, as
        Pinocchio does by default).

    Notes
    -----
    A link is *regular* if it has a positive mass and a positive definite inertia; links
    without ``<inertial>``, with mass 0 or a singular inertia (point masses) are not. Links
    connected by fixed joints form fixed groups, each hanging from a *top* link (the root or
    the child of a moving joint). Irregular links are merged (mass, centre of mass and
    inertia by the parallel-axis theorem) into their nearest regular ancestor in the group,
    links below them hang from that ancestor through the composed fixed joints; when the top
    is irregular (e.g. a joint frame with its mesh link fixed below it) the whole group is
    merged into it, and in the fixed root's group irregular links are welded to the world.
    Regular links attached by fixed joints stay bodies welded by their fixed joint (as
    ``write_urdf`` writes them). A group that is still irregular after merging (a massless
    link between two moving joints, a point mass on a joint) becomes a body with
    ``allow_singular=True`` if links with mass move with it: ``dynamics.minimal`` accepts it
    when every joint's articulated inertia is positive definite (as Pinocchio), while
    ``dynamics.maximal`` refuses it naming the body and its joints, unless asked to
    regularize it (``Simulation(spec, dt, singular_bodies="regularize",
    regularize_ratio=1e-6)``: a stated small mass and inertia, an ``O(ratio)`` modelling
    change, :func:`dynamics.maximal.regularize_singular_bodies`). A massless link with
    nothing massive below it has a zero articulated inertia: :class:`SpecError`. For
    translational coordinates the spec uses the parent frame; Pinocchio's free-flyer and
    planar coordinates use the joint frame (they agree when the joint origin has
    ``rpy = 0``), and Pinocchio's planar joint ignores the URDF axis (plane normal to z),
    while the spec, ``dynamics.maximal`` and :class:`dynamics.minimal.PlanarJoint` move in the
    plane normal to the axis (the URDF specification): a planar joint with ``axis = z`` (the
    usual mobile base) is Pinocchio's ``JointModelPlanar``.

    Examples
    --------
    >>> spec = load_urdf('''<robot name="arm"><link name="base"/>
    ...   <link name="l1"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
    ...     <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial></link>
    ...   <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>
    ...     <origin xyz="0 0 1"/><axis xyz="0 1 0"/></joint></robot>''')
    >>> j = spec.joints[0]
    >>> j.type, j.parent, j.parent_point.tolist(), j.child_point.tolist()
    ('revolute', 'world', [0.0, 0.0, 1.0], [0.0, 0.0, 0.5])
    """
    if mimic not in MIMIC_MODES:
        raise ValueError(f"mimic must be one of {MIMIC_MODES}, got {mimic!r}")
    robot = _parse(path_or_string)
    rname = robot.get("name") or "mechanism"
    links = {}
    for el in robot.findall("link"):
        ln = el.get("name")
        if not ln or ln in links:
            raise SpecError(f"link names must be non-empty and unique, got {ln!r}")
        links[ln] = _inertial(el)
    if not links:
        raise SpecError(f"URDF robot {rname!r} has no <link> elements: there is nothing to "
                        "load")
    urdf_joints = _read_joints(robot, links, mimic, limits)
    order, root = _depth_first(urdf_joints, links)
    anchor = None if floating_base else root
    group, owner = _merge_massless(order, urdf_joints, links, anchor)

    props = {}                                 # owner link -> (mass, com, inertia), link frame
    for ln, members in group.items():
        if ln == anchor:
            continue
        parts = [(links[m][0], p + quat.rotate(q, links[m][1]),
                  quat.rotation_matrix(q) @ links[m][2] @ quat.rotation_matrix(q).T)
                 for m, (q, p) in members.items()]
        props[ln] = _combine(parts)
    singular = _check_singular(props, order, urdf_joints, links, root, group)

    bodies, joints = [], []
    if floating_base:
        bodies.append(Body(root, props[root][0], props[root][2],
                           allow_singular=root in singular))
        joints.append(Joint(ROOT_JOINT, "floating", WORLD, root,
                            child_point=0.0 - props[root][1]))
    for jn in order:
        j = urdf_joints[jn]
        if j.get("merged"):
            continue
        parent, child = owner[j["parent"]], j["child"]
        q_op, p_op = group[parent][j["parent"]]
        point = p_op + quat.rotate(q_op, j["xyz"])
        m, c, inertia = props[child]
        bodies.append(Body(child, m, inertia, allow_singular=child in singular))
        joints.append(Joint(
            jn, j["type"], WORLD if parent == anchor else parent, child,
            parent_point=point if parent == anchor else point - props[parent][1],
            child_point=0.0 - c, axis=j["axis"], orientation_offset=quat.multiply(q_op, j["q"]),
            damper=j["damping"], actuated=j["type"] not in ("fixed", "floating"),
            lower=j.get("lower"), upper=j.get("upper")))
    if not bodies:
        if len(links) == 1:
            raise SpecError(f"URDF robot {rname!r} has a single link {root!r} and no joints: with "
                            "a fixed base the root link is the world and no body moves; load it "
                            "with floating_base=True to make it a free body")
        raise SpecError(f"URDF robot {rname!r}: every link other than the root link {root!r} "
                        "is massless and welded to it by fixed joints, so with a fixed base "
                        "there is no body; "
                        "load it with floating_base=True to make it a free body")
    frames = []
    for ln in [root] + [urdf_joints[jn]["child"] for jn in order]:   # Pinocchio's order
        o = owner[ln]
        q, p = group[o][ln]
        frames.append(Frame(ln, WORLD, p, q) if o == anchor
                      else Frame(ln, o, p - props[o][1], q))
    return MechanismSpec(bodies, joints, name=name or rname, frames=frames)


def _read_joints(robot: ET.Element, links: dict, mimic: str = "independent",
                 limits: bool = False) -> dict:
    """URDF joints by name as dicts (type mapped to spec types; with ``limits`` the
    ``lower`` / ``upper`` of revolute and prismatic joints); checks the tree structure."""
    joints, parent_joint = {}, {}
    for el in robot.findall("joint"):
        jn, jt = el.get("name"), el.get("type")
        if not jn or jn in joints:
            raise SpecError(f"joint names must be non-empty and unique, got {jn!r}")
        if jt not in URDF_JOINT_TYPES:
            raise SpecError(f"joint {jn!r}: unsupported URDF joint type {jt!r}; supported: "
                            f"{sorted(URDF_JOINT_TYPES)}")
        ends = [None if el.find(k) is None else el.find(k).get("link")
                for k in ("parent", "child")]
        for end in ends:
            if end not in links:
                raise SpecError(f"joint {jn!r} refers to unknown link {end!r}")
        if ends[1] in parent_joint:
            raise SpecError(f"link {ends[1]!r} is the child of joints {parent_joint[ends[1]]!r} "
                            f"and {jn!r}: kinematic loops cannot be written in URDF")
        parent_joint[ends[1]] = jn
        mimic_el = el.find("mimic")
        if mimic_el is not None:
            if mimic == "error":
                factor = _floats(mimic_el.get("multiplier"), 1, f"joint {jn!r} mimic multiplier",
                                 (1.0,))[0]
                offset = _floats(mimic_el.get("offset"), 1, f"joint {jn!r} mimic offset",
                                 (0.0,))[0]
                raise SpecError(f"joint {jn!r} mimics joint {mimic_el.get('joint')!r} "
                                f"(multiplier {factor:g}, offset {offset:g}); coupled mimic "
                                "joints are not supported: load with mimic=\"independent\" "
                                "(the default) to make it an independent joint")
            warnings.warn(f"joint {jn!r}: <mimic> ignored, loaded as an independent joint",
                          UrdfWarning, stacklevel=3)
        xyz, q_off = _origin(el, f"joint {jn!r}")
        axis_el, dyn = el.find("axis"), el.find("dynamics")
        if jt in ("fixed", "floating"):
            axis = np.array([1.0, 0.0, 0.0])        # meaningless for these types: ignored
        else:
            axis = _floats(None if axis_el is None else axis_el.get("xyz"), 3,
                           f"joint {jn!r} axis", (1.0, 0.0, 0.0))
            if not np.linalg.norm(axis) > 0.0:
                raise SpecError(f"joint {jn!r} ({jt}): <axis xyz={axis_el.get('xyz')!r}/> is "
                                f"zero; a {jt} joint needs a nonzero axis")
        damping = _floats(None if dyn is None else dyn.get("damping"), 1,
                          f"joint {jn!r} damping", (0.0,))[0]
        joints[jn] = dict(type=URDF_JOINT_TYPES[jt], parent=ends[0], child=ends[1], xyz=xyz,
                          q=q_off, axis=axis, damping=damping)
        if limits and jt in ("revolute", "prismatic") and el.find("limit") is not None:
            joints[jn].update(_limits(el.find("limit"), jn, jt))
    return joints


def _limits(el: ET.Element, jn: str, jt: str) -> dict:
    """``{"lower": [lo], "upper": [hi]}`` of a ``<limit>``, or ``{}`` (with a warning) for a
    range the spec cannot hold."""
    lo = _floats(el.get("lower"), 1, f"joint {jn!r} limit lower", (0.0,))[0]
    hi = _floats(el.get("upper"), 1, f"joint {jn!r} limit upper", (0.0,))[0]
    if not lo < hi:
        why = "an empty range (lower >= upper)"
    elif jt == "revolute" and hi - lo >= 2.0 * np.pi:
        why = "a range of a whole turn or more"
    else:
        return {"lower": [lo], "upper": [hi]}
    warnings.warn(f"joint {jn!r}: <limit lower={lo:g} upper={hi:g}> is {why}; loaded "
                  "without limits", UrdfWarning, stacklevel=4)
    return {}


def _depth_first(joints: dict, links: dict) -> tuple[list[str], str]:
    """Joint names depth-first from the root link, children by joint name; and the root."""
    roots = sorted(set(links) - {j["child"] for j in joints.values()})
    if len(roots) != 1:
        raise SpecError(f"a URDF tree needs exactly one root link (never a child), got {roots}"
                        + (" (the joints form a loop)" if not roots else ""))
    children: dict[str, list[str]] = {ln: [] for ln in links}
    for jn, j in joints.items():
        children[j["parent"]].append(jn)
    order: list[str] = []
    stack = sorted(children[roots[0]], reverse=True)
    while stack:
        jn = stack.pop()
        order.append(jn)
        stack.extend(sorted(children[joints[jn]["child"]], reverse=True))
    if len(order) != len(joints):
        loop = sorted(set(joints) - set(order))
        raise SpecError(f"joints {loop} form a kinematic loop not connected to the root link")
    return order, roots[0]


def _merge_massless(order, joints, links, anchor):
    """Merge links without a regular inertia into bodies through fixed joints.

    A *fixed group* is a link ``T`` (the root, or the child of a moving joint) with every link
    reached from it through fixed joints. A link is *regular* if it has a positive mass and a
    positive definite inertia. In each group:

    * ``T`` is the fixed root (``anchor``): irregular members are welded to the world (they
      become world frames); regular members stay bodies (welded by their fixed joints);
    * ``T`` is irregular (massless or a point mass, e.g. a joint frame with the mesh link
      fixed below it): the whole group is merged into ``T`` (Pinocchio merges every fixed
      joint the same way);
    * ``T`` is regular: each irregular member is merged into its nearest regular ancestor in
      the group (so a massless link in the middle of a fixed chain is merged and the links
      below it hang from that ancestor through the composed fixed joints).

    Merged fixed joints are marked ``merged``. Returns ``group``: owner link -> {member link:
    (q, p) of its frame in the owner's link frame}, and ``owner``: link -> owner link.
    """
    parent_joint = {j["child"]: jn for jn, j in joints.items()}
    regular = {ln: _proper(links[ln][0], links[ln][2]) for ln in links}
    top, owner = {}, {}
    root = next(ln for ln in links if ln not in parent_joint)
    for ln in [root] + [joints[jn]["child"] for jn in order]:     # parents before children
        jn = parent_joint.get(ln)
        if jn is None or joints[jn]["type"] != "fixed":
            top[ln] = owner[ln] = ln
            continue
        up = joints[jn]["parent"]
        top[ln] = t = top[up]
        if t != anchor and not regular[t]:
            owner[ln] = t
        else:
            owner[ln] = ln if regular[ln] else owner[up]
    group = {ln: {} for ln in links if owner[ln] == ln}
    for ln in [root] + [joints[jn]["child"] for jn in order]:
        o = owner[ln]
        if o == ln:
            group[o][ln] = (quat.IDENTITY.copy(), np.zeros(3))
            continue
        j = joints[parent_joint[ln]]
        q_op, p_op = group[o][j["parent"]]
        group[o][ln] = (quat.multiply(q_op, j["q"]), p_op + quat.rotate(q_op, j["xyz"]))
        j["merged"] = True
    return group, owner


def _check_singular(props, order, joints, links, root, group) -> set[str]:
    """Owners (bodies) whose merged inertia is singular, checked for loadability.

    A singular body (zero mass or a singular inertia after merging) is kept, with
    ``Body.allow_singular``, when links with mass move with it (a massless link between two
    moving joints: minimal coordinates handle it if the articulated inertia is positive
    definite; maximal coordinates refuse it). A massless body with nothing massive below it
    has a zero articulated inertia: :class:`SpecError` naming the link and its joint.
    """
    children: dict[str, list[str]] = {ln: [] for ln in links}
    for j in joints.values():
        children[j["parent"]].append(j["child"])
    below: dict[str, float] = {}
    for ln in [joints[jn]["child"] for jn in reversed(order)] + [root]:
        below[ln] = links[ln][0] + sum(below[c] for c in children[ln])
    parent_joint = {j["child"]: jn for jn, j in joints.items()}
    singular = set()
    for ln, (m, _, inertia) in props.items():
        if _proper(m, inertia):
            continue
        moved = (f"moved by joint {parent_joint[ln]!r}" if ln in parent_joint
                 else "the floating root")
        if sum(below[member] for member in group[ln]) <= 0.0:
            raise SpecError(f"link {ln!r} has no mass (no <inertial> or mass 0) and no link "
                            f"with mass moves with it ({moved}): its articulated inertia is "
                            "zero; massless links must be merged into a body through fixed "
                            "joints or carry links with mass")
        singular.add(ln)
    return singular


def _rpy(q: np.ndarray) -> tuple[float, float, float]:
    """URDF roll, pitch, yaw of a unit quaternion (``Q(q) = Rz(yaw) Ry(pitch) Rx(roll)``)."""
    M = quat.rotation_matrix(q)
    cp = np.hypot(M[0, 0], M[1, 0])
    pitch = np.arctan2(-M[2, 0], cp)
    if cp > 1e-9:
        return np.arctan2(M[2, 1], M[2, 2]), pitch, np.arctan2(M[1, 0], M[0, 0])
    # gimbal lock (pitch = ±π/2): only roll ∓ yaw is determined; take yaw = 0
    return np.arctan2(-np.sign(M[2, 0]) * M[0, 1], M[1, 1]), pitch, 0.0


def _text(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def write_urdf(spec: MechanismSpec) -> str:
    """URDF text of a tree spec with revolute, prismatic, fixed and floating joints.

    Each body becomes a link whose frame is its parent joint's frame at zero coordinates (the
    body orientation, origin at the joint point), with ``<inertial>`` at ``xyz = -child_point``,
    ``rpy = 0``. The root link ``"world"`` is massless. Revolute and prismatic joints get
    ``<limit>`` bounds: the joint's ``lower`` / ``upper``, or ±1e9 where it has none (urdfdom
    requires them); ``damper`` becomes
    ``<dynamics damping>``. ``load_urdf(write_urdf(spec))`` reproduces the spec (the
    orientation offsets up to sign).

    Pinocchio reads a URDF ``floating`` joint as a free flyer whose translation is in the joint
    frame (the spec uses the parent frame; the same when ``orientation_offset`` is the
    identity), so a floating base written here loads with plain
    ``pinocchio.buildModelFromXML(text)``; no ``JointModelFreeFlyer()`` root is needed.

    Raises
    ------
    SpecError
        Kinematic loops, a joint of another type, or a body that is the child of no joint or
        whose joint points towards the world (URDF joints go from parent to child).

    Warns
    -----
    UrdfWarning
        For joint springs (URDF has none). Gravity, shapes, ``actuated`` and initial
        coordinates are not written.
    """
    if spec.loop_joints:
        raise SpecError(f"joints {[j.name for j in spec.loop_joints]} close kinematic loops, "
                        "which URDF cannot describe")
    parent_joint = {}
    for j in spec.joints:
        if j.type not in ("revolute", "prismatic", "fixed", "floating"):
            raise SpecError(f"joint {j.name!r}: type {j.type!r} cannot be written as URDF "
                            "(revolute, prismatic, fixed, floating only)")
        if j.child in parent_joint:
            raise SpecError(f"body {j.child!r} is the child of joints "
                            f"{parent_joint[j.child].name!r} and {j.name!r}")
        parent_joint[j.child] = j
        if j.spring != 0.0:
            warnings.warn(f"joint {j.name!r}: spring not written (URDF has no joint springs)",
                          UrdfWarning, stacklevel=2)
    for b in spec.bodies:
        if b.name not in parent_joint:
            raise SpecError(f"body {b.name!r} is the child of no joint; URDF joints must point "
                            "away from the world")
    robot = ET.Element("robot", name=spec.name)
    ET.SubElement(robot, "link", name=WORLD)
    for b in spec.bodies:
        link = ET.SubElement(robot, "link", name=b.name)
        inertial = ET.SubElement(link, "inertial")
        ET.SubElement(inertial, "origin", xyz=_text(-parent_joint[b.name].child_point),
                      rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=repr(b.mass))
        J = b.inertia
        ET.SubElement(inertial, "inertia", **{k: repr(float(J[i, l])) for k, (i, l) in zip(
            ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
            ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)), strict=True)})
    for j in spec.joints:
        el = ET.SubElement(robot, "joint", name=j.name, type=j.type)
        ET.SubElement(el, "parent", link=j.parent)
        ET.SubElement(el, "child", link=j.child)
        xyz = j.parent_point - (0.0 if j.parent == WORLD else parent_joint[j.parent].child_point)
        ET.SubElement(el, "origin", xyz=_text(xyz), rpy=_text(_rpy(j.orientation_offset)))
        ET.SubElement(el, "axis", xyz=_text(j.axis))
        if j.type in ("revolute", "prismatic"):
            lo, hi = (-_BIG, _BIG) if j.lower is None else (
                max(float(j.lower[0]), -_BIG), min(float(j.upper[0]), _BIG))
            ET.SubElement(el, "limit", lower=repr(lo), upper=repr(hi), effort=repr(_BIG),
                          velocity=repr(_BIG))
        if j.damper:
            ET.SubElement(el, "dynamics", damping=repr(j.damper), friction="0.0")
    ET.indent(robot)
    return ET.tostring(robot, encoding="unicode") + "\n"
