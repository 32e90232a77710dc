"""Rigid-body algorithms on a :class:`~dynamics.minimal.model.Model`: forward kinematics, RNEA,
ABA, CRBA and energies (reference NumPy versions, one joint at a time).

All functions follow Pinocchio's calling convention ``f(model, data, q, ...)``, fill ``data``
in place and return a copy of their result. Link quantities are twists ``(w; v)`` and wrenches
``(m; f)`` in link coordinates (:mod:`dynamics.minimal.spatial`). Gravity enters as the base
acceleration ``(0; -g)``. Joint springs and dampers of the spec are *not* included: ``tau`` is
the rigid-body joint force alone (the integrators add spring and damper forces).

With ``M(q)`` the joint-space inertia matrix and ``h(q, v) = rnea(q, v, 0)`` the bias forces
(Coriolis, centrifugal, gravity), the identities are ``rnea(q, v, a) = M a + h``,
``aba(q, v, tau) = M⁻¹ (tau - h)`` and ``crba(q) = M``.

References
----------
J. Lee, C. K. Liu, F. C. Park, S. S. Srinivasa (2016), §3 (recursive Lie-group dynamics,
eq. 18-22 in their continuous-time form: ``V_i = Ad V_λ(i) + S_i q̇_i``, ``F_i = G_i V̇_i -
ad_{V_i}ᵀ G_i V_i + Σ_c Ad_{T_{i,c}⁻¹}ᵀ F_c``, ``τ_i = S_iᵀ F_i``).
R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008: RNEA Table 5.1, CRBA Table 6.2,
ABA Table 7.1.
F. C. Park, J. E. Bobrow, S. R. Ploen, "A Lie group formulation of robot dynamics", IJRR 1995.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import spatial as sp
from .configuration import as_vector, check_configuration
from .data import Data

if TYPE_CHECKING:
    from .model import Model

__all__ = ["forward_kinematics", "rnea", "aba", "crba", "nonlinear_effects", "kinetic_energy",
           "potential_energy", "body_poses", "frame_poses"]


def _ad_matrix(V: np.ndarray) -> np.ndarray:
    """``[ad_V] = [[ŵ, 0], [v̂, ŵ]]`` built from Python floats (faster than slicing)."""
    w0, w1, w2, v0, v1, v2 = V.tolist()
    return np.array([[0.0, -w2, w1, 0.0, 0.0, 0.0],
                     [w2, 0.0, -w0, 0.0, 0.0, 0.0],
                     [-w1, w0, 0.0, 0.0, 0.0, 0.0],
                     [0.0, -v2, v1, 0.0, -w2, w1],
                     [v2, 0.0, -v0, w2, 0.0, -w0],
                     [-v1, v0, 0.0, -w1, w0, 0.0]])


def _check_data(model: Model, data: Data) -> None:
    if not isinstance(data, Data) or data.Ia.shape[0] != model.njoints or \
            data.tau.shape[0] != model.nv:
        raise ValueError("data does not belong to this model; use model.create_data()")


def _placements(model: Model, data: Data, q) -> np.ndarray:
    """Check ``q`` and fill ``data.T_parent_link`` and ``data.X_link_parent``."""
    _check_data(model, data)
    q = check_configuration(model, q)
    for jm in model.joints:
        if jm.constant_subspace:
            R_j, p_j = jm.transform(q[jm.q_slice])
        else:       # general joints: S(q) with the transform (dynamics.minimal.general_joint)
            R_j, p_j, S_j = jm.kinematics(q[jm.q_slice])
            data.S[jm.index][:] = S_j
        P = jm.placement
        T = data.T_parent_link[jm.index]
        T[:3, :3] = P[:3, :3] @ R_j
        T[:3, 3] = P[:3, 3] + P[:3, :3] @ p_j
        # X = Ad(T)⁻¹ = [[Rᵀ, 0], [-Rᵀ p̂, Rᵀ]]
        X = data.X_link_parent[jm.index]
        Rt = T[:3, :3].T
        X[:3, :3] = Rt
        X[3:, 3:] = Rt
        X[3:, :3] = -Rt @ sp.skew(T[:3, 3].tolist())
        X[:3, 3:] = 0.0
    return q


def forward_kinematics(model: Model, data: Data, q) -> None:
    """World pose of every link: fills ``data.T_world_link`` (and the relative placements).

    ``T_world_link[i] = T_world_link[λ(i)] T_{λ(i),i}(q_i)`` (Lee et al. 2016, eq. 18).

    Parameters
    ----------
    model : Model
    data : Data
    q : (nq,) array

    Raises
    ------
    ValueError
        ``q`` of the wrong length, or a quaternion of a spherical / floating joint whose norm
        differs from 1 by more than 1e-9 (naming the joint).
    """
    _placements(model, data, q)
    for i, p in enumerate(model.parents):
        if p < 0:
            data.T_world_link[i] = data.T_parent_link[i]
        else:
            np.matmul(data.T_world_link[p], data.T_parent_link[i], out=data.T_world_link[i])


def body_poses(model: Model, data: Data, q) -> tuple[np.ndarray, np.ndarray]:
    """World positions ``(n_bodies, 3)`` and rotations ``(n_bodies, 3, 3)`` of every spec body's
    centre-of-mass frame (order ``model.body_names``; bodies welded to the world included)."""
    forward_kinematics(model, data, q)
    return _placed(data, model.body_links, model.body_placements)


def _placed(data: Data, links, placements) -> tuple[np.ndarray, np.ndarray]:
    """World positions and rotations of frames fixed to links (``link < 0``: to the world) at
    ``placements``, after :func:`forward_kinematics`."""
    positions, rotations = np.empty((len(links), 3)), np.empty((len(links), 3, 3))
    for k, (link, placement) in enumerate(zip(links, placements, strict=True)):
        T = placement if link < 0 else data.T_world_link[link] @ placement
        positions[k], rotations[k] = T[:3, 3], T[:3, :3]
    return positions, rotations


def frame_poses(model: Model, data: Data, q) -> tuple[np.ndarray, np.ndarray]:
    """World positions ``(n_frames, 3)`` and rotations ``(n_frames, 3, 3)`` of the spec's frames
    (order ``model.frame_names``), e.g. the URDF link frames of :func:`dynamics.urdf.load_urdf`
    including sensor and tool links merged into their parent body.

    Examples
    --------
    >>> from dynamics.minimal import Model
    >>> from dynamics.urdf import load_urdf
    >>> model = Model(load_urdf('''<robot name="r"><link name="base"/>
    ...   <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
    ...     <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
    ...   <link name="tool"/>
    ...   <joint name="j" type="continuous"><parent link="base"/><child link="arm"/>
    ...     <axis xyz="0 0 1"/></joint>
    ...   <joint name="flange" type="fixed"><parent link="arm"/><child link="tool"/>
    ...     <origin xyz="1 0 0"/></joint></robot>'''))
    >>> positions, rotations = frame_poses(model, model.create_data(), [np.pi / 2])
    >>> model.frame_names, np.round(positions[model.frame_names.index("tool")], 12).tolist()
    (['base', 'arm', 'tool'], [0.0, 1.0, 0.0])
    """
    forward_kinematics(model, data, q)
    return _placed(data, model.frame_links, model.frame_placements)


def rnea(model: Model, data: Data, q, v, a) -> np.ndarray:
    """Inverse dynamics by the recursive Newton-Euler algorithm, O(n): ``tau = M(q) a + h(q, v)``.

    Forward pass ``V_i = X_i V_λ(i) + S_i v_i``, ``A_i = X_i A_λ(i) + S_i a_i + ad(V_i) S_i v_i``
    (``A_world = (0; -g)``), ``F_i = G_i A_i - ad(V_i)ᵀ G_i V_i``; backward pass ``τ_i = S_iᵀ F_i``,
    ``F_λ(i) += X_iᵀ F_i``. General joints (:mod:`.general_joint`, ``S_i(q_i)``) add their rate
    term ``Ṡ_i v_i`` to ``A_i`` (and to ``c_i`` in ``aba``).

    Parameters
    ----------
    model : Model
    data : Data
    q : (nq,) array
    v, a : (nv,) arrays

    Returns
    -------
    tau : (nv,) array
        Joint forces (also in ``data.tau``; link wrenches in ``data.F``).

    Raises
    ------
    ValueError
        An argument of the wrong length (naming it) or a non-unit quaternion (naming the joint).

    References
    ----------
    Lee et al. (2016) §3.1; Featherstone (2008) Table 5.1.

    Examples
    --------
    >>> from dynamics import models
    >>> from dynamics.minimal import Model
    >>> model = Model(models.pendulum(1))        # a 1 m, 1 kg rod hanging from its top
    >>> data = model.create_data()
    >>> tau = rnea(model, data, [np.pi / 2], [0.0], [0.0])
    >>> bool(np.isclose(tau[0], 9.81 * 0.5))     # holding it horizontal: m g l/2
    True
    """
    q = _placements(model, data, q)
    v = as_vector(v, model.nv, "v", "model.nv")
    a = as_vector(a, model.nv, "a", "model.nv")
    zero = np.zeros(6)
    V, A, F, X = data.V, data.A, data.F, data.X_link_parent
    for jm in model.joints:
        i, p = jm.index, jm.parent
        S = data.S[i]
        Sv = S @ v[jm.v_slice]
        V[i] = X[i] @ (V[p] if p >= 0 else zero) + Sv
        ad_V = _ad_matrix(V[i])
        A[i] = X[i] @ (A[p] if p >= 0 else data.a_gravity) + S @ a[jm.v_slice] \
            + ad_V @ Sv
        if not jm.constant_subspace:
            A[i] += jm.subspace_rate(q[jm.q_slice], v[jm.v_slice])
        G = model.inertias[i]
        F[i] = G @ A[i] - ad_V.T @ (G @ V[i])
    for jm in reversed(model.joints):
        i, p = jm.index, jm.parent
        data.tau[jm.v_slice] = data.S[i].T @ F[i]
        if p >= 0:
            F[p] += X[i].T @ F[i]
    return data.tau.copy()


def nonlinear_effects(model: Model, data: Data, q, v) -> np.ndarray:
    """``h(q, v) = rnea(q, v, 0)``: Coriolis, centrifugal and gravity forces."""
    return rnea(model, data, q, v, np.zeros(model.nv))


def aba(model: Model, data: Data, q, v, tau) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm, O(n): ``M(q)⁻¹ (tau - h(q, v))``.

    Parameters
    ----------
    model : Model
    data : Data
    q : (nq,) array
    v, tau : (nv,) arrays

    Returns
    -------
    ddq : (nv,) array
        Joint accelerations (also in ``data.ddq``; link accelerations in ``data.A``, with
        gravity as the base acceleration).

    Raises
    ------
    ValueError
        An argument of the wrong length (naming it) or a non-unit quaternion (naming the joint).

    References
    ----------
    Featherstone (2008) Table 7.1, in the twist order ``(w; v)``; Lee et al. (2016) eq. 23
    (the same recursion with ``v = 0`` gives ``Δt M⁻¹ e`` for RIQN).

    Examples
    --------
    >>> from dynamics import models
    >>> from dynamics.minimal import Model
    >>> model = Model(models.pendulum(1))
    >>> data = model.create_data()
    >>> ddq = aba(model, data, [np.pi / 2], [0.0], [0.0])
    >>> bool(np.isclose(ddq[0], -9.81 * 0.5 / (1 / 3 + 0.05**2 / 4)))   # -m g l/2 / J_top
    True
    """
    q = _placements(model, data, q)
    v = as_vector(v, model.nv, "v", "model.nv")
    tau = as_vector(tau, model.nv, "tau", "model.nv")
    zero = np.zeros(6)
    V, A, X, c, pa, Ia = data.V, data.A, data.X_link_parent, data.c, data.pa, data.Ia
    for jm in model.joints:
        i, p = jm.index, jm.parent
        Sv = data.S[i] @ v[jm.v_slice]
        V[i] = X[i] @ (V[p] if p >= 0 else zero) + Sv
        ad_V = _ad_matrix(V[i])
        c[i] = ad_V @ Sv
        if not jm.constant_subspace:
            c[i] += jm.subspace_rate(q[jm.q_slice], v[jm.v_slice])
        G = model.inertias[i]
        Ia[i] = G
        pa[i] = -ad_V.T @ (G @ V[i])
    for jm in reversed(model.joints):
        i, p, S = jm.index, jm.parent, data.S[jm.index]
        # keep Ia exactly symmetric: rounding asymmetry otherwise grows along a chain (to 1e-2
        # relative error in ddq for 30 slender links on ball joints)
        Ia[i] = 0.5 * (Ia[i] + Ia[i].T)
        U = data.U[i]
        np.matmul(Ia[i], S, out=U)
        D_inv = data.D_inv[i]
        D_inv[:] = np.linalg.inv(S.T @ U) if jm.nv > 1 else 1.0 / (S[:, 0] @ U[:, 0])
        u = data.u[i]
        u[:] = tau[jm.v_slice] - S.T @ pa[i]
        if p >= 0:
            UD = U @ D_inv
            Ia_i = Ia[i] - UD @ U.T
            pa_i = pa[i] + Ia_i @ c[i] + UD @ u
            Ia[p] += X[i].T @ Ia_i @ X[i]
            pa[p] += X[i].T @ pa_i
    for jm in model.joints:
        i, p = jm.index, jm.parent
        a_i = X[i] @ (A[p] if p >= 0 else data.a_gravity) + c[i]
        ddq = data.D_inv[i] @ (data.u[i] - data.U[i].T @ a_i)
        data.ddq[jm.v_slice] = ddq
        A[i] = a_i + data.S[i] @ ddq
    return data.ddq.copy()


def crba(model: Model, data: Data, q) -> np.ndarray:
    """Joint-space inertia matrix ``M(q)`` by the composite-rigid-body algorithm.

    Composite inertias ``Ic_λ(i) += X_iᵀ Ic_i X_i`` (leaves to root), then for each joint
    ``F = Ic_i S_i``, ``M_ii = S_iᵀ F`` and, walking to the root, ``F = X_jᵀ F``,
    ``M_{λ(j) i} = S_λ(j)ᵀ F``.

    Returns
    -------
    M : (nv, nv) array
        Symmetric positive definite, both triangles filled (also in ``data.M``; Pinocchio's
        ``crba`` fills the upper triangle only).

    Raises
    ------
    ValueError
        ``q`` of the wrong length or a non-unit quaternion (naming the joint).

    References
    ----------
    Featherstone (2008) Table 6.2.
    """
    _placements(model, data, q)
    Ic, X, M = data.Ic, data.X_link_parent, data.M
    Ic[:] = model.inertias
    for jm in reversed(model.joints):
        if jm.parent >= 0:
            Ic[jm.parent] += X[jm.index].T @ Ic[jm.index] @ X[jm.index]
    for jm in model.joints:
        i = jm.index
        rows = jm.v_slice
        S = data.S[i]
        F = Ic[i] @ S
        block = S.T @ F
        M[rows, rows] = 0.5 * (block + block.T) if jm.nv > 1 else block    # exactly symmetric
        j = i
        while model.parents[j] >= 0:
            F = X[j].T @ F
            j = model.parents[j]
            jp = model.joints[j]
            cols = jp.v_slice
            M[cols, rows] = data.S[j].T @ F
            M[rows, cols] = M[cols, rows].T
    return M.copy()


def kinetic_energy(model: Model, data: Data, q, v) -> float:
    """``½ Σ_i V_iᵀ G_i V_i`` (equal to ``½ vᵀ M(q) v``); fills ``data.V``."""
    _placements(model, data, q)
    v = as_vector(v, model.nv, "v", "model.nv")
    V, X = data.V, data.X_link_parent
    energy = 0.0
    for jm in model.joints:
        i, p = jm.index, jm.parent
        V[i] = data.S[i] @ v[jm.v_slice]
        if p >= 0:
            V[i] += X[i] @ V[p]
        energy += 0.5 * V[i] @ model.inertias[i] @ V[i]
    return float(energy)


def potential_energy(model: Model, data: Data, q) -> float:
    """Gravitational potential ``-Σ m_b g·x_b`` of the bodies on moving links (bodies welded to
    the world are left out, as in ``pinocchio.computePotentialEnergy``); fills
    ``data.T_world_link``. Spring energy is not included."""
    forward_kinematics(model, data, q)
    T = data.T_world_link
    first_moment = model.masses @ T[:, :3, 3] + np.einsum("nij,nj->i", T[:, :3, :3],
                                                          model.first_moments)
    return float(-model.gravity @ first_moment)
