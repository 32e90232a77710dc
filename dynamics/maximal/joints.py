"""Joint constraints of Brüdigam et al. (2023) Appendix B, vectorized over all joints.

Every joint of Table B.2 is the general translational constraint (B.1)

    g_T = Q(q_a)ᵀ (x_b + Q(q_b) p_b - x_a - Q(q_a) p_a)

stacked on the general rotational constraint (B.3)

    g_R = V L(q_off)ᵀ L(q_a)ᵀ q_b

and multiplied by a selection matrix ``Dᵀ`` (B.7a); the nullspace matrix ``Cᵀ`` gives the
joint's minimal coordinates (B.7b). A world-fixed parent uses ``x_a = 0``, ``q_a = 1`` (B.2,
B.4). All functions here take arrays with a leading joint axis, so one call evaluates the
whole mechanism; :class:`JointSet` holds the per-joint constants.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quaternion as quat
from ..spec import SELECTION_ROWS, WORLD, MechanismSpec

__all__ = ["JointSet", "basis", "joint_set"]


def basis(axis: np.ndarray) -> np.ndarray:
    """Orthonormal ``[V1 V2 V3]`` with ``V3 = axis`` (the role of the SVD of B.5-B.6)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    v1 = np.cross(a, helper)
    v1 /= np.linalg.norm(v1)
    v2 = np.cross(a, v1)
    return np.column_stack([v1, v2, a])


def _selection(kind: str, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(D, C) of Table B.1 for a basis ``B = [V1 V2 V3]``: columns select / span."""
    if kind == "none":
        return np.zeros((3, 0)), np.eye(3)
    if kind == "plane":
        return B[:, 2:], B[:, :2]
    if kind == "axis":
        return B[:, :2], B[:, 2:]
    return np.eye(3), np.zeros((3, 0))


@dataclass(frozen=True)
class JointSet:
    """Constants of ``n`` joints, padded to 6 rows so all joints share one array shape.

    Attributes
    ----------
    names : tuple of str
    parent, child : (n,) int
        Body indices; ``parent == -1`` is the world.
    p_a, p_b : (n, 3)
        Joint point from the parent's / child's centre of mass, in its own frame.
    q_off : (n, 4)
        Joint-frame orientation in the parent frame.
    select : (n, 6, 6)
        Rows ``0..n_constraints-1`` are ``blockdiag(D_T, D_R)ᵀ`` (B.7a), the rest zero.
    free : (n, 6, 6)
        Rows ``0..dof-1`` are ``blockdiag(C_T, C_R)ᵀ`` (B.7b), the rest zero.
    n_constraints, dof, translational_dof, rotational_dof : (n,) int
    spring, damper : (n,)
    spring_offset : (n, 6)
        Rest coordinates, padded.
    rot_axis : (n, 3)
        Joint axis in the joint frame (for the angle of one-rotational-DOF joints).
    """

    names: tuple[str, ...]
    parent: np.ndarray
    child: np.ndarray
    p_a: np.ndarray
    p_b: np.ndarray
    q_off: np.ndarray
    select: np.ndarray
    free: np.ndarray
    n_constraints: np.ndarray
    dof: np.ndarray
    translational_dof: np.ndarray
    rotational_dof: np.ndarray
    spring: np.ndarray
    damper: np.ndarray
    spring_offset: np.ndarray
    rot_axis: np.ndarray

    def __len__(self) -> int:
        return len(self.names)


def joint_set(spec: MechanismSpec) -> JointSet:
    """Build the padded joint constants of ``spec`` (in the spec's joint order)."""
    n = len(spec.joints)
    select = np.zeros((n, 6, 6))
    free = np.zeros((n, 6, 6))
    nc, dof, tdof, rdof = (np.zeros(n, dtype=np.int64) for _ in range(4))
    offs = np.zeros((n, 6))
    for k, j in enumerate(spec.joints):
        kt, kr = j.selections
        # The translational constraint is expressed in the parent frame: axis rotated by q_off.
        Dt, Ct = _selection(kt, basis(quat.rotate(j.orientation_offset, j.axis)))
        Dr, Cr = _selection(kr, basis(j.axis))
        D = np.zeros((6, Dt.shape[1] + Dr.shape[1]))
        D[:3, :Dt.shape[1]] = Dt
        D[3:, Dt.shape[1]:] = Dr
        C = np.zeros((6, Ct.shape[1] + Cr.shape[1]))
        C[:3, :Ct.shape[1]] = Ct
        C[3:, Ct.shape[1]:] = Cr
        nc[k], dof[k] = D.shape[1], C.shape[1]
        tdof[k], rdof[k] = Ct.shape[1], Cr.shape[1]
        assert nc[k] == SELECTION_ROWS[kt] + SELECTION_ROWS[kr]
        select[k, :nc[k]] = D.T
        free[k, :dof[k]] = C.T
        if j.spring_offset is not None:
            offs[k, :dof[k]] = j.spring_offset
    index = {b.name: i for i, b in enumerate(spec.bodies)}
    return JointSet(
        names=tuple(j.name for j in spec.joints),
        parent=np.array([-1 if j.parent == WORLD else index[j.parent] for j in spec.joints],
                        dtype=np.int64),
        child=np.array([index[j.child] for j in spec.joints], dtype=np.int64),
        p_a=np.array([j.parent_point for j in spec.joints]).reshape(n, 3),
        p_b=np.array([j.child_point for j in spec.joints]).reshape(n, 3),
        q_off=np.array([j.orientation_offset for j in spec.joints]).reshape(n, 4),
        select=select, free=free, n_constraints=nc, dof=dof, translational_dof=tdof,
        rotational_dof=rdof,
        spring=np.array([j.spring for j in spec.joints]),
        damper=np.array([j.damper for j in spec.joints]),
        spring_offset=offs,
        rot_axis=np.array([j.axis for j in spec.joints]).reshape(n, 3),
    )


def endpoint_states(js: JointSet, x: np.ndarray, q: np.ndarray):
    """Parent and child poses of every joint; the world is ``x = 0``, ``q = 1``."""
    world = js.parent < 0
    pa = np.where(world, 0, js.parent)
    xa = np.where(world[:, None], 0.0, x[..., pa, :])
    qa = np.where(world[:, None], quat.IDENTITY, q[..., pa, :])
    return xa, qa, x[..., js.child, :], q[..., js.child, :]


def constraint_terms(js: JointSet, xa, qa, xb, qb, jacobians: bool = True):
    """General constraints ``[g_T; g_R]`` (B.1, B.3) and their derivatives.

    Returns
    -------
    g : (n, 6)
    dxa, dxb : (n, 6, 3)
        ``∂g/∂x_a``, ``∂g/∂x_b``.
    dqa, dqb : (n, 6, 4)
        ``∂g/∂q_a``, ``∂g/∂q_b`` in the four quaternion entries (rotational Jacobians follow
        from :func:`dynamics.quaternion.rotational_jacobian`, eq. A.8).
    """
    Qa = quat.rotation_matrix(qa)
    r = xb + quat.rotate(qb, js.p_b) - xa
    g = np.empty(xa.shape[:-1] + (6,))
    g[..., :3] = np.einsum("...ji,...j->...i", Qa, r) - js.p_a
    Loff_T = np.swapaxes(quat.L(js.q_off), -1, -2)
    La_T = np.swapaxes(quat.L(qa), -1, -2)
    g[..., 3:] = np.einsum("...ij,...jk,...k->...i", Loff_T[:, 1:, :], La_T, qb)
    if not jacobians:
        return g
    n = len(js)
    QaT = np.swapaxes(Qa, -1, -2)
    dxa = np.zeros((n, 6, 3))
    dxb = np.zeros((n, 6, 3))
    dxb[:, :3] = QaT
    dxa[:, :3] = -QaT
    dqa = np.empty((n, 6, 4))
    dqb = np.empty((n, 6, 4))
    dqb[:, :3] = QaT @ quat.d_rotate_dq(qb, js.p_b)
    dqa[:, :3] = quat.d_rotate_transpose_dq(qa, r)
    dqb[:, 3:] = Loff_T[:, 1:, :] @ La_T
    dqa[:, 3:] = Loff_T[:, 1:, :] @ quat.R(qb) @ quat.T
    return g, dxa, dqa, dxb, dqb


def rate_map(js: JointSet, xa, qa, xb, qb) -> np.ndarray:
    """Jacobian of the joint-coordinate rates w.r.t. ``[v_a, ω_a, v_b, ω_b]``; (n, 6, 12).

    Rows ``0..dof-1`` (rest zero): ``Cᵀ [ġ_T; ω_rel]`` with ``ω_rel`` the child's angular
    velocity relative to the parent and angular velocities in body frames. ``ω_rel`` is
    expressed in the joint frame for one rotational DOF (there ``axisᵀ ω_rel`` is the angle
    rate, the same in the child frame, which the relative rotation about the axis leaves
    fixed) and in the child frame, ``ω_b - Q_bᵀ Q_a ω_a``, for three (spherical, floating,
    ``*_free`` joints): Pinocchio's convention (``v`` of ``JointModelSpherical`` /
    ``FreeFlyer`` is the local angular velocity), which :mod:`dynamics.minimal` and the peer
    simulators use for the spec's rotational rates as well. By virtual work the same matrix
    transposed maps joint forces/torques ``u`` to body wrenches ``[f (world); τ (body frame)]``
    - the actuator wrenches of eq. (1) (a 3-DOF joint torque is thus in the child frame).
    """
    Qa = quat.rotation_matrix(qa)
    Qb = quat.rotation_matrix(qb)
    QaT = np.swapaxes(Qa, -1, -2)
    Qoff_T = np.swapaxes(quat.rotation_matrix(js.q_off), -1, -2)
    lever = np.einsum("...ji,...j->...i", Qa, xb + np.einsum("...ij,...j->...i", Qb, js.p_b) - xa)
    M = np.zeros(xa.shape[:-1] + (6, 12))
    M[..., :3, 0:3] = -QaT
    M[..., :3, 3:6] = quat.skew(lever)                 # [g_T + p_a]× ω_a
    M[..., :3, 6:9] = QaT
    M[..., :3, 9:12] = -QaT @ Qb @ quat.skew(js.p_b)
    M[..., 3:, 3:6] = -Qoff_T
    M[..., 3:, 9:12] = Qoff_T @ QaT @ Qb
    three = js.rotational_dof == 3                  # ω_rel in the child frame
    if np.any(three):
        M[..., three, 3:, 3:6] = -(np.swapaxes(Qb, -1, -2) @ Qa)[..., three, :, :]
        M[..., three, 3:, 9:12] = np.eye(3)
    return js.free @ M


def minimal_coordinates(js: JointSet, xa, qa, xb, qb) -> np.ndarray:
    """Joint coordinates, padded to (n, 6): ``C_Tᵀ g_T`` then the rotational coordinates.

    One rotational DOF: the angle ``2 atan2(aᵀ v, s)`` of ``q_rel = q_off⁻¹ q_a⁻¹ q_b`` about
    the axis (in ``(-π, π]`` after choosing ``s >= 0``); three: the rotation vector of
    ``q_rel`` (B.7b with ``C_R = I`` read through the logarithm).
    """
    g = constraint_terms(js, xa, qa, xb, qb, jacobians=False)
    out = np.zeros(xa.shape[:-1] + (6,))
    t = js.translational_dof
    ct = np.einsum("...ij,...j->...i", js.free[:, :, :3], g[..., :3])
    qrel = quat.multiply(quat.conjugate(js.q_off), quat.multiply(quat.conjugate(qa), qb))
    qrel = np.where(qrel[..., :1] < 0.0, -qrel, qrel)
    angle = 2.0 * np.arctan2(np.einsum("...i,...i->...", js.rot_axis, qrel[..., 1:]),
                             qrel[..., 0])
    rotvec = quat.rotation_vector(qrel)
    for k in range(len(js)):                          # per joint, vectorized over time
        out[..., k, :t[k]] = ct[..., k, :t[k]]
        r = js.rotational_dof[k]
        if r == 1:
            out[..., k, t[k]] = angle[..., k]
        elif r == 3:
            out[..., k, t[k]:t[k] + 3] = rotvec[..., k, :]
    return out
