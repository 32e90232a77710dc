"""Joint models of the minimal-coordinate tree: configuration, motion subspace, integration.

Each moving joint connects a *joint frame* (fixed to the parent link) to its *link frame* (the
child body's frame at the joint origin, see :mod:`dynamics.spec`). A joint model gives the link
frame in the joint frame as a function of its configuration ``q_j`` (``nq`` numbers) and the
motion subspace ``S`` (6 × ``nv``, twist order ``(w; v)``, link-frame coordinates) with
``V_link = Ad(T_parent_link)⁻¹ V_parent + S v_j``. Every ``S`` here is constant; joints whose
``S`` depends on ``q_j`` (:mod:`dynamics.minimal.general_joint`) set ``constant_subspace = False``
and give ``S(q_j)`` through :meth:`JointModel.kinematics` and the rate term ``Ṡ v_j`` through
:meth:`JointModel.subspace_rate`.

===========  ===  ===  ==========================================================================
type         nq   nv   configuration ``q_j`` / velocity ``v_j``
===========  ===  ===  ==========================================================================
revolute     1    1    angle about ``axis`` (joint frame) / its rate
prismatic    1    1    displacement along ``axis`` / its rate
spherical    4    3    unit quaternion ``(w, x, y, z)`` of the link frame in the joint frame /
                       angular velocity in the link frame (Pinocchio's ``JointModelSpherical``)
             3    3    with ``rotation="rotation_vector"``: the rotation vector instead
floating     7    6    position of the link origin in the joint frame and the quaternion
                       ``(w, x, y, z)`` / ``(linear; angular)`` velocity of the link frame in
                       link coordinates (Pinocchio's free flyer, scalar first)
             6    6    with ``rotation="rotation_vector"``: position and rotation vector
planar       3    3    ``(x, y, θ)``: position of the link origin in the joint frame along the
                       plane directions ``(u1, u2)`` normal to ``axis`` and the angle about
                       ``axis`` / ``(v1, v2, ω)``: the link-frame linear velocity along
                       ``(u1, u2)`` and the angular rate (Pinocchio's ``JointModelPlanar``,
                       whose ``q`` is ``(x, y, cos θ, sin θ)``, for ``axis = z``)
===========  ===  ===  ==========================================================================

``integrate`` is ``q ⊕ v``: ``q + v`` for 1-DOF joints, ``q ∘ exp(v)`` on SO(3) and
``T exp([S v])`` on SE(3) and SE(2) (as ``pinocchio.integrate``); ``difference`` is its
inverse.

References
----------
J. Lee, C. K. Liu, F. C. Park, S. S. Srinivasa (2016), §3.1 (joint Jacobian ``S_i``).
R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, ch. 4 (joint models).
"""
from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..spec import Joint
from . import spatial as sp

__all__ = ["JointModel", "RevoluteJoint", "PrismaticJoint", "SphericalJoint", "FloatingJoint",
           "PlanarJoint", "plane_directions", "ROTATIONS", "QUATERNION_TOLERANCE"]

#: Rotation coordinates of spherical and floating joints.
ROTATIONS = ("quaternion", "rotation_vector")
#: Largest accepted ``| |q| - 1 |`` of quaternion coordinates.
QUATERNION_TOLERANCE = 1e-9


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


class JointModel:
    """A moving joint: its place in the tree and in ``q`` / ``v``, and its kinematics.

    Attributes
    ----------
    name : str
    type : str
        ``"revolute"``, ``"prismatic"``, ``"spherical"``, ``"floating"`` or ``"planar"``.
    index : int
        Position of the joint (and of its link) in the model.
    parent : int
        Index of the parent link, ``-1`` for the world.
    placement : (4, 4) array
        The joint frame in the parent link frame (world frame for ``parent == -1``).
    axis : (3,) array
        Unit axis in the joint frame (revolute and prismatic joints).
    nq, nv, idx_q, idx_v : int
        Sizes and offsets of the joint's segments of ``q`` and ``v``.
    q_slice, v_slice : slice
        ``q[q_slice]`` and ``v[v_slice]`` are the joint's segments.
    S : (6, nv) array
        Motion subspace in link coordinates, twist order ``(w; v)`` (joints with
        ``constant_subspace`` only).
    constant_subspace : bool
        ``S`` does not depend on ``q_j`` (true for every joint of this module).
    spec_joint : dynamics.spec.Joint
        The joint of the spec it was built from.
    """

    type = ""
    nq = nv = 0
    constant_subspace = True

    def __init__(self, spec_joint: Joint, index: int, parent: int, placement: np.ndarray,
                 idx_q: int, idx_v: int):
        self.spec_joint = spec_joint
        self.name = spec_joint.name
        self.index, self.parent = index, parent
        self.placement = _readonly(placement)
        self.axis = _readonly(spec_joint.axis)
        self.idx_q, self.idx_v = idx_q, idx_v
        self.q_slice, self.v_slice = slice(idx_q, idx_q + self.nq), slice(idx_v, idx_v + self.nv)
        if self.constant_subspace:
            self.S = _readonly(self._motion_subspace())

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.name!r}, parent={self.parent}, "
                f"idx_q={self.idx_q}, idx_v={self.idx_v})")

    # -- per joint type ------------------------------------------------------------------------
    def _motion_subspace(self) -> np.ndarray:
        raise NotImplementedError

    def transform(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(R, p)``: the link frame in the joint frame at configuration ``q`` (nq,)."""
        raise NotImplementedError

    def kinematics(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(R, p, S)``: :meth:`transform` and the motion subspace at ``q``."""
        R, p = self.transform(q)
        return R, p, self.S

    def subspace_rate(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``Ṡ(q, v) v``, the joint's own velocity-product acceleration (6,); zero when
        ``constant_subspace``."""
        return np.zeros(6)

    def neutral(self) -> np.ndarray:
        """The configuration with the link frame on the joint frame."""
        return np.zeros(self.nq)

    def integrate(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``q ⊕ v``: the configuration reached from ``q`` moving with ``v`` for unit time."""
        return q + v

    def difference(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """``v`` with ``integrate(q0, v) == q1`` (rotation angles below π)."""
        return q1 - q0

    def check(self, q: np.ndarray, argument: str = "q") -> None:
        """Raise ``ValueError`` naming the joint if ``q`` is not a valid configuration."""

    def from_spec(self, x: np.ndarray, xd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Spec coordinates and rates (see :mod:`dynamics.spec`) -> ``(q_j, v_j)``."""
        return np.array(x, dtype=float), np.array(xd, dtype=float)

    def to_spec(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(q_j, v_j)`` -> spec coordinates and rates."""
        return np.array(q, dtype=float), np.array(v, dtype=float)


class RevoluteJoint(JointModel):
    """Rotation by the angle ``q`` about ``axis``; ``S = (axis; 0)``."""

    type, nq, nv = "revolute", 1, 1

    def __init__(self, *args):
        super().__init__(*args)
        K = sp.skew(self.axis)
        self._K, self._K2 = K, K @ K

    def _motion_subspace(self) -> np.ndarray:
        return np.concatenate([self.axis, np.zeros(3)])[:, None]

    def transform(self, q):
        s, c = np.sin(q[0]), np.cos(q[0])
        return np.eye(3) + s * self._K + (1.0 - c) * self._K2, np.zeros(3)


class PrismaticJoint(JointModel):
    """Translation by ``q`` along ``axis``; ``S = (0; axis)``."""

    type, nq, nv = "prismatic", 1, 1

    def _motion_subspace(self) -> np.ndarray:
        return np.concatenate([np.zeros(3), self.axis])[:, None]

    def transform(self, q):
        return np.eye(3), q[0] * self.axis


class _RotationJoint(JointModel):
    """Shared rotation handling of spherical and floating joints (``nr`` rotation entries)."""

    def __init__(self, *args, rotation: str = "quaternion"):
        if rotation not in ROTATIONS:
            raise ValueError(f"rotation must be one of {ROTATIONS}, got {rotation!r}")
        self.rotation = rotation
        self.nr = 4 if rotation == "quaternion" else 3
        self.nq = self.nv - 3 + self.nr
        super().__init__(*args)

    def _rotation(self, r: np.ndarray) -> np.ndarray:
        return sp.rotation_from_quaternion(r) if self.nr == 4 else sp.exp_so3(r)

    def _rotation_coords(self, R: np.ndarray) -> np.ndarray:
        return sp.quaternion_from_rotation(R) if self.nr == 4 else sp.log_so3(R)

    def _neutral_rotation(self) -> np.ndarray:
        return quat.IDENTITY.copy() if self.nr == 4 else np.zeros(3)

    def _rotate_by(self, r: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Rotation coordinates of ``rot(r) exp(w)`` (quaternions stay normalized)."""
        if self.nr == 4:
            out = quat.multiply(r, quat.from_rotation_vector(w))
            return out / np.sqrt(out @ out)
        return sp.log_so3(sp.exp_so3(r) @ sp.exp_so3(w))

    def _relative_rotation(self, r0: np.ndarray, r1: np.ndarray) -> np.ndarray:
        """``log(rot(r0)ᵀ rot(r1))``."""
        if self.nr == 4:
            return quat.rotation_vector(quat.multiply(quat.conjugate(r0), r1))
        return sp.log_so3(sp.exp_so3(r0).T @ sp.exp_so3(r1))

    def _spec_rotation(self, x: np.ndarray) -> np.ndarray:
        return quat.from_rotation_vector(x) if self.nr == 4 else np.array(x, dtype=float)

    def _to_spec_rotation(self, r: np.ndarray) -> np.ndarray:
        return quat.rotation_vector(r) if self.nr == 4 else np.array(r, dtype=float)

    def check(self, q, argument="q"):
        if self.nr == 4:
            r = q[self.nq - 4:]
            norm = float(np.sqrt(r @ r))
            if not abs(norm - 1.0) <= QUATERNION_TOLERANCE:
                start = self.idx_q + self.nq - 4
                raise ValueError(
                    f"joint {self.name!r}: quaternion {argument}[{start}:{start + 4}] has norm "
                    f"{norm!r}, expected 1 (tolerance {QUATERNION_TOLERANCE:g}); normalize it, "
                    "e.g. with dynamics.minimal.normalize(model, q)")


class SphericalJoint(_RotationJoint):
    """Free rotation about the joint origin; ``S = (1; 0)`` (link-frame angular velocity)."""

    type, nv = "spherical", 3

    def _motion_subspace(self) -> np.ndarray:
        return np.vstack([np.eye(3), np.zeros((3, 3))])

    def transform(self, q):
        return self._rotation(q), np.zeros(3)

    def neutral(self):
        return self._neutral_rotation()

    def integrate(self, q, v):
        return self._rotate_by(q, v)

    def difference(self, q0, q1):
        return self._relative_rotation(q0, q1)

    def from_spec(self, x, xd):
        return self._spec_rotation(x), np.array(xd, dtype=float)

    def to_spec(self, q, v):
        return self._to_spec_rotation(q), np.array(v, dtype=float)


class FloatingJoint(_RotationJoint):
    """Free motion: ``q = (p, rotation)``, ``v = (linear; angular)`` in link coordinates, so
    ``S = [[0, 1], [1, 0]]`` in the twist order ``(w; v)``.

    The spec's translational coordinates are the joint displacement in the *parent* frame and
    its rates their time derivatives (:mod:`dynamics.spec`); here, as in Pinocchio, the
    position is in the joint frame (rotated by the spec's ``orientation_offset``) and the
    linear velocity in the link frame.
    """

    type, nv = "floating", 6

    def __init__(self, *args, rotation: str = "quaternion"):
        super().__init__(*args, rotation=rotation)
        self._R_off = quat.rotation_matrix(self.spec_joint.orientation_offset)

    def _motion_subspace(self) -> np.ndarray:
        S = np.zeros((6, 6))
        S[3:, :3] = np.eye(3)
        S[:3, 3:] = np.eye(3)
        return S

    def transform(self, q):
        return self._rotation(q[3:]), q[:3]

    def neutral(self):
        return np.concatenate([np.zeros(3), self._neutral_rotation()])

    def integrate(self, q, v):
        twist = np.concatenate([v[3:], v[:3]])
        step = sp.exp_se3(twist)
        R = self._rotation(q[3:])
        return np.concatenate([q[:3] + R @ step[:3, 3], self._rotate_by(q[3:], v[3:])])

    def difference(self, q0, q1):
        T0 = sp.pose(self._rotation(q0[3:]), q0[:3])
        T1 = sp.pose(self._rotation(q1[3:]), q1[:3])
        twist = sp.log_se3(sp.inverse(T0) @ T1)
        return np.concatenate([twist[3:], twist[:3]])

    def from_spec(self, x, xd):
        x, xd = np.asarray(x, dtype=float), np.asarray(xd, dtype=float)
        r = self._spec_rotation(x[3:])
        R = sp.exp_so3(x[3:])
        return (np.concatenate([self._R_off.T @ x[:3], r]),
                np.concatenate([R.T @ (self._R_off.T @ xd[:3]), xd[3:]]))

    def to_spec(self, q, v):
        R = self._rotation(q[3:])
        return (np.concatenate([self._R_off @ q[:3], self._to_spec_rotation(q[3:])]),
                np.concatenate([self._R_off @ (R @ v[:3]), v[3:]]))


def plane_directions(axis) -> np.ndarray:
    """``(3, 2)`` orthonormal plane directions ``(u1, u2)`` of a planar joint about ``axis``.

    ``u1`` is ``e_x`` projected on the plane normal to ``axis`` (``e_y`` when the axis is
    within 25° of ``x``) and ``u2 = axis × u1``, so ``(u1, u2, axis)`` is right-handed and
    ``axis = z`` gives ``(e_x, e_y)``, the plane of Pinocchio's ``JointModelPlanar``.

    >>> plane_directions([0, 0, 1]).T
    array([[1., 0., 0.],
           [0., 1., 0.]])
    """
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    helper = np.eye(3)[1] if abs(a[0]) > 0.9 else np.eye(3)[0]
    u1 = helper - (helper @ a) * a
    u1 /= np.linalg.norm(u1)
    return np.column_stack([u1, np.cross(a, u1)])


def _se2_v(w: float) -> tuple[float, float]:
    """``(α, β)`` of SE(2)'s ``V(ω) = α I + β J`` (``J`` the rotation by 90°):
    ``α = sin ω / ω``, ``β = (1 - cos ω) / ω`` (series below ``|ω| < 1e-4``)."""
    if abs(w) < 1e-4:
        w2 = w * w
        return 1.0 - w2 / 6.0 + w2 * w2 / 120.0, w * (0.5 - w2 / 24.0)
    return np.sin(w) / w, (1.0 - np.cos(w)) / w


def _rot2(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s], [s, c]])


class PlanarJoint(JointModel):
    """Motion in the plane normal to ``axis`` and rotation about it (URDF ``planar``).

    ``q = (x, y, θ)``: the link origin at ``x u1 + y u2`` in the joint frame
    (:func:`plane_directions`) and the link frame rotated by ``θ`` about ``axis``;
    ``v = (v1, v2, ω)``: the link frame's linear velocity along ``u1``, ``u2`` in *link*
    coordinates and ``ω = θ̇``, so ``S = [(0; u1), (0; u2), (axis; 0)]`` is constant and
    ``integrate`` is the SE(2) exponential ``T exp([S v])`` (as Pinocchio's planar joint,
    whose ``v`` is the same and whose ``q`` is ``(x, y, cos θ, sin θ)``). Unlike Pinocchio,
    which ignores the URDF axis (plane normal to the joint frame's ``z``), the plane follows
    ``axis``, as the URDF specification and ``dynamics.maximal`` do; both agree for
    ``axis = z`` (the usual mobile base).

    The spec's coordinates of a planar joint (:mod:`dynamics.spec`) are the displacement
    along the parent-frame plane directions of ``dynamics.maximal.joints.basis`` and the
    angle, their rates the time derivatives; :meth:`from_spec` / :meth:`to_spec` convert
    (a 2 × 2 rotation of the translation, the link-frame velocity ``R(θ)ᵀ ṗ``).
    """

    type, nq, nv = "planar", 3, 3

    def __init__(self, *args):
        self._W = plane_directions(args[0].axis)
        super().__init__(*args)
        K = sp.skew(self.axis)
        self._K, self._K2 = K, K @ K
        # spec translational coordinates t = M (x, y): the parent-frame plane basis of
        # dynamics.maximal.joints.basis(R_off axis) (copied: minimal does not import maximal)
        R_off = quat.rotation_matrix(self.spec_joint.orientation_offset)
        a = R_off @ self.axis
        helper = np.eye(3)[int(np.argmin(np.abs(a)))]
        b1 = np.cross(a, helper)
        b1 /= np.linalg.norm(b1)
        C = np.column_stack([b1, np.cross(a, b1)])
        self._M = C.T @ R_off @ self._W
        self.plane = _readonly(self._W)

    def _motion_subspace(self) -> np.ndarray:
        S = np.zeros((6, 3))
        S[3:, :2] = self._W
        S[:3, 2] = self.axis
        return S

    def transform(self, q):
        s, c = np.sin(q[2]), np.cos(q[2])
        return np.eye(3) + s * self._K + (1.0 - c) * self._K2, self._W @ q[:2]

    def integrate(self, q, v):
        al, be = _se2_v(float(v[2]))
        step = np.array([al * v[0] - be * v[1], be * v[0] + al * v[1]])
        return np.concatenate([q[:2] + _rot2(q[2]) @ step, [q[2] + v[2]]])

    def difference(self, q0, q1):
        w = float(q1[2] - q0[2])
        d = _rot2(q0[2]).T @ (q1[:2] - q0[:2])
        al, be = _se2_v(w)
        n = al * al + be * be
        return np.array([(al * d[0] + be * d[1]) / n, (al * d[1] - be * d[0]) / n, w])

    def from_spec(self, x, xd):
        x, xd = np.asarray(x, dtype=float), np.asarray(xd, dtype=float)
        return (np.concatenate([self._M.T @ x[:2], x[2:]]),
                np.concatenate([_rot2(x[2]).T @ (self._M.T @ xd[:2]), xd[2:]]))

    def to_spec(self, q, v):
        return (np.concatenate([self._M @ q[:2], q[2:]]),
                np.concatenate([self._M @ (_rot2(q[2]) @ v[:2]), v[2:]]))
