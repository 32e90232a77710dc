"""Coordinate-free mechanism description shared by the maximal and minimal coordinate codes.

A :class:`MechanismSpec` lists rigid :class:`Body` objects and the :class:`Joint` objects that
connect them (or a body to the fixed ``"world"``). Nothing here depends on a coordinate choice:
``dynamics.maximal`` turns a spec into bodies with poses and joint constraints, and
``dynamics.minimal`` into a kinematic tree.

Conventions
-----------
* A body frame sits at the body's centre of mass; ``inertia`` is about the centre of mass in
  that frame.
* A joint frame is fixed to its parent: its origin is ``parent_point`` (parent frame, from the
  parent's centre of mass) and its orientation is ``orientation_offset`` (a unit quaternion,
  the joint frame in the parent frame, ``q_off`` of Brüdigam et al. 2023 eq. B.3). At zero
  joint coordinates the child frame has the joint frame's orientation and the child's
  ``child_point`` coincides with the joint origin.
* ``axis`` is given in the joint frame. The joint's minimal coordinates are its translational
  coordinates followed by its rotational ones. The translational ones are components of the
  joint displacement ``g_T`` (eq. B.1, parent frame) along the free directions built from the
  axis rotated into the parent frame, ``Q(q_off) axis`` (a prismatic displacement ``d`` puts
  the child's joint point at ``parent_point + d Q(q_off) axis``). The rotational ones are the
  angle about ``axis`` for one rotational degree of freedom and the rotation vector of the
  relative rotation (joint frame) for three. The rates (``initial_velocities``, the
  simulations' joint velocities) are the time derivatives of the translational coordinates,
  then the angle rate for one rotational degree of freedom and, for three, the child's angular
  velocity relative to the parent expressed in the *child* frame (Pinocchio's ``v`` of a
  spherical joint or free flyer), not the derivative of the rotation vector.

Joint types follow Table B.2 of Brüdigam et al. (2023): for each type the translational and
rotational constraint selections ``D_T``, ``D_R`` are one of ``"none"`` (0 rows), ``"plane"``
(``V3``: 1 row, motion restricted to the plane normal to the axis), ``"axis"`` (``V_{1:2}``:
2 rows, motion restricted to the axis) and ``"full"`` (3 rows).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from . import quaternion as quat

__all__ = ["JOINT_TYPES", "JOINT_ALIASES", "WORLD", "Shape", "Body", "Joint", "Contact",
           "BodyContact", "Frame", "MechanismSpec", "SpecError"]

WORLD = "world"

#: Table B.2: joint type -> (D_T selection, D_R selection).
JOINT_TYPES: dict[str, tuple[str, str]] = {
    "fixed": ("full", "full"),
    "prismatic": ("axis", "full"),
    "planar_fixed_orientation": ("plane", "full"),
    "fixed_orientation": ("none", "full"),
    "revolute": ("full", "axis"),
    "cylindrical": ("axis", "axis"),
    "planar": ("plane", "axis"),
    "axis_rotation_free_translation": ("none", "axis"),
    "spherical": ("full", "none"),
    "cylindrical_free": ("axis", "none"),
    "planar_free": ("plane", "none"),
    "floating": ("none", "none"),
}
#: Other names accepted for the types above (URDF and common usage).
JOINT_ALIASES = {"continuous": "revolute", "hinge": "revolute", "ball": "spherical",
                 "ball_and_socket": "spherical", "free": "floating", "slider": "prismatic"}
#: Number of constraint rows and of free coordinates for each selection.
SELECTION_ROWS = {"none": 0, "plane": 1, "axis": 2, "full": 3}


class SpecError(ValueError):
    """An invalid mechanism description; the message names the body or joint."""


def _vector(x, n: int, what: str) -> np.ndarray:
    a = np.array(x, dtype=float).reshape(-1)
    if a.shape != (n,):
        raise SpecError(f"{what} must have {n} entries, got {np.shape(x)}")
    if not np.all(np.isfinite(a)):
        raise SpecError(f"{what} contains NaN or inf")
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class Shape:
    """Geometry used for inertia helpers, contacts and plots: ``kind`` and its dimensions (m).

    kinds: ``"box"`` (x, y, z edge lengths), ``"cylinder"`` (radius, length along z),
    ``"sphere"`` (radius), ``"none"``.
    """

    kind: str = "none"
    dims: tuple[float, ...] = ()

    def inertia(self, mass: float) -> np.ndarray:
        """Inertia about the centre of a solid of this shape and ``mass`` (kg m²)."""
        d = self.dims
        if self.kind == "box":
            x, y, z = d
            return mass / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])
        if self.kind == "cylinder":
            r, h = d
            t = mass * (3 * r * r + h * h) / 12.0
            return np.diag([t, t, 0.5 * mass * r * r])
        if self.kind == "sphere":
            return np.eye(3) * 0.4 * mass * d[0] ** 2
        raise SpecError(f"shape {self.kind!r} has no inertia formula")


@dataclass(frozen=True)
class Body:
    """A rigid body: ``mass`` (kg) and ``inertia`` (3×3, kg m², about the centre of mass).

    ``allow_singular=True`` admits a body whose spatial inertia is singular: ``mass >= 0`` and a
    symmetric positive *semi*-definite ``inertia`` (a massless link between two moving joints,
    e.g. the cross of a universal joint, or a point mass). Only ``dynamics.minimal`` accepts such
    bodies exactly (the articulated inertia every joint sees must still be positive definite,
    checked when its ``Model`` is built); ``dynamics.maximal`` refuses them with a
    :class:`SpecError` naming the body and its joints, unless ``singular_bodies="regularize"``
    is passed (:func:`dynamics.maximal.regularize_singular_bodies`: a stated small mass and
    inertia). Otherwise the mass must be positive and the inertia positive definite.
    """

    name: str
    mass: float
    inertia: np.ndarray
    shape: Shape = field(default_factory=Shape)
    allow_singular: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or self.name == WORLD:
            raise SpecError(f"body name must be a non-empty string other than {WORLD!r}, "
                            f"got {self.name!r}")
        m = float(self.mass)
        if not np.isfinite(m) or m < 0.0 or (m == 0.0 and not self.allow_singular):
            raise SpecError(f"body {self.name!r}: mass must be positive, got {self.mass}")
        J = np.array(self.inertia, dtype=float)
        if J.shape != (3, 3) or not np.all(np.isfinite(J)):
            raise SpecError(f"body {self.name!r}: inertia must be a finite 3×3 matrix, "
                            f"got shape {J.shape}")
        scale = max(1.0, np.abs(J).max())
        if not np.allclose(J, J.T, rtol=1e-10, atol=1e-14 * scale):
            raise SpecError(f"body {self.name!r}: inertia is not symmetric")
        low = np.linalg.eigvalsh(J).min()
        if self.allow_singular:
            if low < -1e-12 * scale:
                raise SpecError(f"body {self.name!r}: inertia is not positive semi-definite "
                                f"(eigenvalues {np.linalg.eigvalsh(J)})")
        elif low <= 0.0:
            raise SpecError(f"body {self.name!r}: inertia is not positive definite "
                            f"(eigenvalues {np.linalg.eigvalsh(J)})")
        J.setflags(write=False)
        object.__setattr__(self, "mass", m)
        object.__setattr__(self, "inertia", J)
        object.__setattr__(self, "allow_singular", bool(self.allow_singular))

    @property
    def singular(self) -> bool:
        """Whether the spatial inertia is singular (zero mass or a singular ``inertia``)."""
        return self.mass <= 0.0 or bool(np.linalg.eigvalsh(self.inertia).min() <= 0.0)


@dataclass(frozen=True)
class Joint:
    """A joint between ``parent`` (a body name or ``"world"``) and ``child`` (a body name).

    ``spring`` (N/m or N m/rad) and ``damper`` (N s/m or N m s/rad) act on every minimal
    coordinate of the joint; ``spring_offset`` is the spring's rest coordinate vector (default
    zeros). ``actuated`` joints accept controller inputs (forces/torques along the minimal
    coordinates, eq. 1 of Brüdigam et al. 2023).

    ``lower`` and ``upper`` (``dof`` entries each, ``-inf`` / ``inf`` for an unbounded
    coordinate; default: no limits) bound the joint's minimal coordinates: hard stops that
    ``dynamics.maximal`` enforces as frictionless unilateral constraints of the step (like the
    contacts of eq. 22-28, solved by the interior-point method), one per finite bound.
    Translational coordinates take any bounds with ``lower < upper`` (one side may be
    infinite). The angle of a joint with one rotational degree of freedom (revolute,
    cylindrical, planar, ...) takes two finite bounds with ``upper - lower < 2π``: the stops of
    a range within one turn (a step measures the angle continuously from its start, so a fast
    joint cannot jump the stops through the far side of the turn). The rotation vector of a
    three-rotational-DOF joint (spherical, floating, ``*_free``) takes no bounds (cone limits
    are not modelled). ``dynamics.minimal`` does not model limits (as it
    does not model contacts).
    """

    name: str
    type: str
    parent: str
    child: str
    parent_point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    child_point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    orientation_offset: np.ndarray = field(default_factory=lambda: quat.IDENTITY.copy())
    spring: float = 0.0
    damper: float = 0.0
    spring_offset: np.ndarray | None = None
    actuated: bool = False
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    def __post_init__(self):
        t = JOINT_ALIASES.get(self.type, self.type)
        if t not in JOINT_TYPES:
            raise SpecError(f"joint {self.name!r}: unknown joint type {self.type!r}; known: "
                            f"{sorted(JOINT_TYPES) + sorted(JOINT_ALIASES)}")
        object.__setattr__(self, "type", t)
        w = f"joint {self.name!r}"
        object.__setattr__(self, "parent_point", _vector(self.parent_point, 3, f"{w} parent_point"))
        object.__setattr__(self, "child_point", _vector(self.child_point, 3, f"{w} child_point"))
        axis = _vector(self.axis, 3, f"{w} axis")
        if np.linalg.norm(axis) == 0.0:
            raise SpecError(f"{w}: axis must be nonzero")
        axis = axis / np.linalg.norm(axis)
        axis.setflags(write=False)
        object.__setattr__(self, "axis", axis)
        q = _vector(self.orientation_offset, 4, f"{w} orientation_offset")
        if abs(np.linalg.norm(q) - 1.0) > 1e-9:
            raise SpecError(f"{w}: orientation_offset must be a unit quaternion, "
                            f"|q| = {np.linalg.norm(q)}")
        object.__setattr__(self, "orientation_offset", q)
        for k in ("spring", "damper"):
            val = float(getattr(self, k))
            if not np.isfinite(val) or val < 0.0:
                raise SpecError(f"{w}: {k} must be finite and >= 0, got {val}")
            object.__setattr__(self, k, val)
        if self.child == WORLD or self.child == self.parent:
            raise SpecError(f"{w}: child must be a body other than the parent, "
                            f"got parent={self.parent!r}, child={self.child!r}")
        if self.spring_offset is not None:
            object.__setattr__(self, "spring_offset",
                               _vector(self.spring_offset, self.dof, f"{w} spring_offset"))
        self._check_limits(w)

    def _check_limits(self, w: str) -> None:
        """Validate and store ``lower`` / ``upper`` (``None`` stays ``None``)."""
        if self.lower is None and self.upper is None:
            return
        bounds = {}
        for key, default in (("lower", -np.inf), ("upper", np.inf)):
            val = getattr(self, key)
            a = np.full(self.dof, default) if val is None else \
                np.array(val, dtype=float).reshape(-1)
            if a.shape != (self.dof,):
                raise SpecError(f"{w} {key} must have {self.dof} entries (one per minimal "
                                f"coordinate of a {self.type} joint), got {np.shape(val)}")
            if np.any(np.isnan(a)):
                raise SpecError(f"{w} {key} contains NaN")
            a.setflags(write=False)
            bounds[key] = a
        lo, hi = bounds["lower"], bounds["upper"]
        for i in range(self.dof):
            if not lo[i] < hi[i]:
                raise SpecError(f"{w}: coordinate {i} needs lower < upper, got "
                                f"[{lo[i]}, {hi[i]}]")
            bounded = np.isfinite(lo[i]) or np.isfinite(hi[i])
            if not bounded or i < self.translational_dof:
                continue
            if self.rotational_dof == 3:
                raise SpecError(f"{w}: the rotation vector of a {self.type} joint (coordinate "
                                f"{i}) takes no limits; only translational coordinates and the "
                                "angle of one rotational degree of freedom do")
            if not (np.isfinite(lo[i]) and np.isfinite(hi[i]) and hi[i] - lo[i] < 2.0 * np.pi):
                raise SpecError(f"{w}: the angle (coordinate {i}) needs both limits within one "
                                f"turn (upper - lower < 2π), got [{lo[i]}, {hi[i]}]")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def limits(self) -> tuple[tuple[int, float, float], ...]:
        """``(coordinate, lower, upper)`` of every coordinate with a finite bound."""
        if self.lower is None:
            return ()
        return tuple((i, float(lo), float(hi)) for i, (lo, hi)
                     in enumerate(zip(self.lower, self.upper, strict=True))
                     if np.isfinite(lo) or np.isfinite(hi))

    @property
    def selections(self) -> tuple[str, str]:
        """``(D_T, D_R)`` selection names of Table B.2."""
        return JOINT_TYPES[self.type]

    @property
    def translational_dof(self) -> int:
        return 3 - SELECTION_ROWS[self.selections[0]]

    @property
    def rotational_dof(self) -> int:
        return 3 - SELECTION_ROWS[self.selections[1]]

    @property
    def dof(self) -> int:
        """Number of minimal coordinates (free directions) of the joint."""
        return self.translational_dof + self.rotational_dof

    @property
    def n_constraints(self) -> int:
        """Number of constraint rows ``6 - dof`` (Table B.2)."""
        return 6 - self.dof


@dataclass(frozen=True)
class Contact:
    """A contact of a body with the ground plane ``z = 0`` (Brüdigam et al. 2023 §2, eq. 25).

    ``kind="point"``: the body-frame point ``point`` (from the centre of mass) must stay above
    the ground, ``φ = e_zᵀ (x + Q(q) p) >= 0``. ``kind="sphere"``: a sphere of ``radius`` about
    the centre of mass, ``φ = e_zᵀ x - r >= 0``, touching at its lowest point. ``friction`` is
    the Coulomb coefficient ``c_f >= 0`` of the linearized cone with ``n_friction`` (even)
    basis directions (eq. 2-4, 27); ``friction = 0`` is a frictionless contact.
    """

    name: str
    body: str
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    kind: str = "point"
    radius: float = 0.0
    friction: float = 0.0
    n_friction: int = 4

    def __post_init__(self):
        w = f"contact {self.name!r}"
        if self.kind not in ("point", "sphere"):
            raise SpecError(f"{w}: kind must be 'point' or 'sphere', got {self.kind!r}")
        object.__setattr__(self, "point", _vector(self.point, 3, f"{w} point"))
        r = float(self.radius)
        if self.kind == "sphere" and not (np.isfinite(r) and r > 0.0):
            raise SpecError(f"{w}: a sphere contact needs a positive radius, got {self.radius}")
        object.__setattr__(self, "radius", r)
        mu, nf = _friction_parameters(w, self.friction, self.n_friction)
        object.__setattr__(self, "friction", mu)
        object.__setattr__(self, "n_friction", nf)

    @property
    def friction_directions(self) -> int:
        """Number of friction variables: ``n_friction``, or 0 for a frictionless contact."""
        return self.n_friction if self.friction > 0.0 else 0


def _friction_parameters(w: str, friction, n_friction) -> tuple[float, int]:
    mu = float(friction)
    if not np.isfinite(mu) or mu < 0.0:
        raise SpecError(f"{w}: friction coefficient must be finite and >= 0, got {friction}")
    nf = int(n_friction)
    if nf != n_friction or nf < 2 or nf % 2:
        raise SpecError(f"{w}: n_friction must be an even integer >= 2 (pairs of opposite "
                        f"directions), got {n_friction}")
    return mu, nf


@dataclass(frozen=True)
class BodyContact:
    """A contact between two bodies: a sphere on ``body`` against a sphere or a box on ``other``.

    ``kind="sphere"``: spheres of ``radius`` (about ``body``'s centre of mass) and
    ``other_radius`` (about ``other``'s), signed distance ``φ = |x_a - x_b| - r_a - r_b >= 0``.
    ``kind="box"``: the sphere against a box of ``half_extents`` centred at ``other``'s centre
    of mass and aligned with its frame, ``φ`` = distance from the sphere centre to the box
    surface (negative inside) minus ``radius``. The normal force acts along the line between
    the closest points, friction (Coulomb coefficient ``friction``, ``n_friction`` even
    directions) in the tangent plane there (Brüdigam et al. 2023 §2, eq. 2-4, 25-27).

    Raises
    ------
    SpecError
        ``body == other``, bad kind, non-positive radius or half extent, negative friction or
        odd ``n_friction``; unknown bodies are reported by :class:`MechanismSpec`.
    """

    name: str
    body: str
    other: str
    radius: float
    other_radius: float = 0.0
    kind: str = "sphere"
    half_extents: np.ndarray = field(default_factory=lambda: np.zeros(3))
    friction: float = 0.0
    n_friction: int = 4

    def __post_init__(self):
        w = f"body contact {self.name!r}"
        if self.body == self.other:
            raise SpecError(f"{w}: body {self.body!r} appears twice; a body contact needs two "
                            "different bodies")
        if self.kind not in ("sphere", "box"):
            raise SpecError(f"{w}: kind must be 'sphere' (sphere-sphere) or 'box' (sphere-box), "
                            f"got {self.kind!r}")
        r = float(self.radius)
        if not (np.isfinite(r) and r > 0.0):
            raise SpecError(f"{w}: the sphere on {self.body!r} needs a positive radius, got "
                            f"{self.radius}")
        object.__setattr__(self, "radius", r)
        ro = float(self.other_radius)
        h = _vector(self.half_extents, 3, f"{w} half_extents")
        if self.kind == "sphere" and not (np.isfinite(ro) and ro > 0.0):
            raise SpecError(f"{w}: the sphere on {self.other!r} needs a positive other_radius, "
                            f"got {self.other_radius}")
        if self.kind == "box" and not np.all(h > 0.0):
            raise SpecError(f"{w}: the box on {self.other!r} needs positive half_extents, got "
                            f"{h}")
        object.__setattr__(self, "other_radius", ro)
        object.__setattr__(self, "half_extents", h)
        mu, nf = _friction_parameters(w, self.friction, self.n_friction)
        object.__setattr__(self, "friction", mu)
        object.__setattr__(self, "n_friction", nf)

    @property
    def friction_directions(self) -> int:
        """Number of friction variables: ``n_friction``, or 0 for a frictionless contact."""
        return self.n_friction if self.friction > 0.0 else 0


@dataclass(frozen=True)
class Frame:
    """A named frame fixed to a body (or to the world): a sensor, tool or link frame.

    ``position`` is the frame's origin in the body frame (from the body's centre of mass) and
    ``orientation`` the unit quaternion of the frame's axes in the body frame. ``body`` is a
    body name or ``"world"``. Frames take no part in the dynamics; ``dynamics.minimal.
    frame_poses`` and ``dynamics.maximal.MaximalModel.frame_poses`` give their world poses.
    :func:`dynamics.urdf.load_urdf` adds one frame per URDF link, named like the link (links
    merged into a parent body included).
    """

    name: str
    body: str
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: quat.IDENTITY.copy())

    def __post_init__(self):
        w = f"frame {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise SpecError(f"frame names must be non-empty strings, got {self.name!r}")
        object.__setattr__(self, "position", _vector(self.position, 3, f"{w} position"))
        q = _vector(self.orientation, 4, f"{w} orientation")
        if abs(np.linalg.norm(q) - 1.0) > 1e-9:
            raise SpecError(f"{w}: orientation must be a unit quaternion, "
                            f"|q| = {np.linalg.norm(q)}")
        object.__setattr__(self, "orientation", q)


@dataclass(frozen=True)
class MechanismSpec:
    """Bodies, joints, gravity and initial joint coordinates of a mechanism.

    Parameters
    ----------
    bodies, joints : sequences of Body and Joint
    gravity : (3,) array, m/s², default ``(0, 0, -9.81)``
    initial_positions, initial_velocities : mapping joint name -> (dof,) array, optional
        Minimal coordinates of the joints of the spanning tree at ``t = 0`` (default zeros).
        Loop-closing joints take whatever their bodies imply.
    name : str
    contacts : sequence of Contact or BodyContact, optional
        Ground contacts and body-body contacts (inequality constraints, eq. 22-28).
    frames : sequence of Frame, optional
        Named frames fixed to bodies or the world (sensor / tool / URDF link frames); they
        do not change the dynamics.

    Raises
    ------
    SpecError
        Duplicate names, a joint or frame referring to an unknown body, a body not connected
        to the world through joints, or bad initial coordinates.
    """

    bodies: tuple[Body, ...]
    joints: tuple[Joint, ...]
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    initial_positions: Mapping[str, np.ndarray] = field(default_factory=dict)
    initial_velocities: Mapping[str, np.ndarray] = field(default_factory=dict)
    name: str = "mechanism"
    contacts: tuple[Contact | BodyContact, ...] = ()
    frames: tuple[Frame, ...] = ()

    def __post_init__(self):
        bodies, joints = tuple(self.bodies), tuple(self.joints)
        contacts = tuple(self.contacts)
        object.__setattr__(self, "contacts", contacts)
        object.__setattr__(self, "frames", tuple(self.frames))
        if not bodies:
            raise SpecError("a mechanism needs at least one body")
        object.__setattr__(self, "bodies", bodies)
        object.__setattr__(self, "joints", joints)
        object.__setattr__(self, "gravity", _vector(self.gravity, 3, "gravity"))
        names = [b.name for b in bodies]
        for kind, seq in (("body", names), ("joint", [j.name for j in joints])):
            dup = {n for n in seq if seq.count(n) > 1}
            if dup:
                raise SpecError(f"duplicate {kind} names: {sorted(dup)}")
        known = set(names)
        for j in joints:
            for end in (j.parent, j.child):
                if end != WORLD and end not in known:
                    raise SpecError(f"joint {j.name!r} refers to unknown body {end!r}")
        for c in contacts:
            if not isinstance(c, (Contact, BodyContact)):
                raise SpecError(f"contacts must be Contact or BodyContact, got {c!r}")
            for b in (c.body, c.other) if isinstance(c, BodyContact) else (c.body,):
                if b not in known:
                    raise SpecError(f"contact {c.name!r} is on unknown body {b!r}")
        fnames = [f.name for f in self.frames]
        for f in self.frames:
            if not isinstance(f, Frame):
                raise SpecError(f"frames must be Frame objects, got {f!r}")
            if f.body != WORLD and f.body not in known:
                raise SpecError(f"frame {f.name!r} is on unknown body {f.body!r}")
        dup = {n for n in fnames if fnames.count(n) > 1}
        if dup:
            raise SpecError(f"duplicate frame names: {sorted(dup)}")
        cnames = [c.name for c in contacts]
        dup = {n for n in cnames if cnames.count(n) > 1}
        if dup:
            raise SpecError(f"duplicate contact names: {sorted(dup)}")
        G = self.graph()
        unreachable = sorted(set(names) - nx.node_connected_component(G, WORLD)) if joints \
            else sorted(names)
        if unreachable:
            raise SpecError(f"bodies {unreachable} are not connected to the world by any joint "
                            "(add a 'floating' joint for a free body)")
        tree = {j.name for j in self.tree_joints}
        for key in ("initial_positions", "initial_velocities"):
            given = dict(getattr(self, key))
            out = {}
            for jn, val in given.items():
                j = self.joint(jn)
                if jn not in tree:
                    raise SpecError(f"{key}: joint {jn!r} closes a loop; its coordinates follow "
                                    "from the tree joints")
                out[jn] = _vector(val, j.dof, f"{key}[{jn!r}]")
            object.__setattr__(self, key, out)

    # -- lookups -----------------------------------------------------------------------------
    def body_index(self, name: str) -> int:
        for i, b in enumerate(self.bodies):
            if b.name == name:
                return i
        raise SpecError(f"no body named {name!r}")

    def joint(self, name: str) -> Joint:
        for j in self.joints:
            if j.name == name:
                return j
        raise SpecError(f"no joint named {name!r}")

    def frame(self, name: str) -> Frame:
        """The :class:`Frame` called ``name``."""
        for f in self.frames:
            if f.name == name:
                return f
        raise SpecError(f"no frame named {name!r}; frames: {[f.name for f in self.frames]}")

    def graph(self) -> nx.MultiGraph:
        """Bodies and ``"world"`` as nodes, one edge per joint (key = joint name)."""
        G = nx.MultiGraph()
        G.add_node(WORLD)
        G.add_nodes_from(b.name for b in self.bodies)
        for j in self.joints:
            G.add_edge(j.parent, j.child, key=j.name)
        return G

    @property
    def tree_joints(self) -> tuple[Joint, ...]:
        """Joints of the breadth-first spanning tree from the world, in the order given."""
        reached = {WORLD}
        chosen: list[Joint] = []
        remaining = list(self.joints)
        progress = True
        while remaining and progress:
            progress = False
            for j in list(remaining):
                ends = {j.parent, j.child}
                if len(ends & reached) == 1:
                    chosen.append(j)
                    reached |= ends
                    remaining.remove(j)
                    progress = True
        return tuple(chosen)

    @property
    def loop_joints(self) -> tuple[Joint, ...]:
        """Joints that close kinematic loops (not in :attr:`tree_joints`)."""
        tree = {j.name for j in self.tree_joints}
        return tuple(j for j in self.joints if j.name not in tree)

    @property
    def dof(self) -> int:
        """Degrees of freedom of the tree (loops remove more; not counted here)."""
        return sum(j.dof for j in self.tree_joints)

    def with_initial(self, positions: Mapping[str, Sequence[float]] | None = None,
                     velocities: Mapping[str, Sequence[float]] | None = None) -> MechanismSpec:
        """A copy with some initial joint coordinates replaced."""
        pos = dict(self.initial_positions)
        pos.update(positions or {})
        vel = dict(self.initial_velocities)
        vel.update(velocities or {})
        return MechanismSpec(self.bodies, self.joints, self.gravity, pos, vel, self.name,
                             self.contacts, self.frames)
