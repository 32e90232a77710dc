"""numba forward dynamics (ABA), configuration update and energies for trees of every built-in
joint type: revolute, prismatic, spherical, floating and planar, several degrees of freedom per
joint.

:mod:`.tree_kernels` covers trees of one-degree-of-freedom joints (and the variational loops
on them); floating-base robots (quadrupeds, humanoids), ball-jointed chains and planar bases
need a joint's motion subspace ``S`` as a ``6 × nv_j`` matrix and its configuration on a
manifold (quaternions, SE(3), SE(2)). This module runs :func:`dynamics.minimal.aba`,
:func:`dynamics.minimal.integrate` and RK4's :func:`.integrators.tangent_rate` for them, and
the energies of a whole trajectory (:func:`mechanical_energies`), with the same equations as
the NumPy reference (Featherstone 2008 Table 7.1 in the twist order ``(w; v)``;
``D_j = S_jᵀ U_j`` inverted per joint, at most 6×6), so that
:func:`dynamics.minimal.integrators.step` and :func:`~dynamics.minimal.integrators.simulate`
make no Python call per joint. Rotations must be quaternions (the default
``Model(rotation="quaternion")``); :func:`supports` says whether a model qualifies.

The model is flattened once (:func:`multi_dof_model`, cached on the model): per joint its
parent, type code (:data:`JOINT_CODES`), offsets in ``q`` and ``v``, axis, plane directions
(planar), placement ``(R_P, p_P)``, ``S`` (6×6, the first ``nv_j`` columns used) and spatial
inertia. The work arrays live on the :class:`~dynamics.minimal.data.Data` (made on first use).
The explicit integrators' steps run in one compiled call, a whole trajectory
(:func:`simulate_explicit`) or one step (:func:`explicit_step`), on every array packed into
three (:func:`_packed_arguments`): unboxing some 45 arrays per call had cost more than the
step of a 7-DOF arm.

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, Table 7.1 (ABA with multi-DOF
joints: ``U = IA S``, ``D = Sᵀ U``, ``u = τ - Sᵀ pA``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .configuration import as_vector
from .data import Data
from .model import Model, SingularArticulatedInertiaError
from .results import DivergenceError
from .tree_kernels import (
    _cross_force,
    _cross_motion,
    _dlog_into,
    _gravity_potential,
    _inertia_to_parent_add,
    _X_apply,
    _XT_add,
)

__all__ = ["JOINT_CODES", "MultiDofModel", "multi_dof_model", "supports", "require_supported",
           "aba", "integrate", "tangent_rate", "mechanical_energies", "EXPLICIT_CODES",
           "simulate_explicit", "explicit_step"]

#: Type code of each joint type in :class:`MultiDofModel` ``jtype``.
JOINT_CODES = {"revolute": 0, "prismatic": 1, "spherical": 2, "floating": 3, "planar": 4}


@dataclass(frozen=True)
class MultiDofModel:
    """Flat arrays of a tree of built-in joints (module docstring); ``n`` joints."""

    parent: np.ndarray       # (n,) parent joint, -1 for the world
    jtype: np.ndarray        # (n,) JOINT_CODES
    iq: np.ndarray           # (n,) offset of the joint in q
    iv: np.ndarray           # (n,) offset in v
    nvj: np.ndarray          # (n,) degrees of freedom
    axis: np.ndarray         # (n, 3)
    plane: np.ndarray        # (n, 3, 2) planar joints' plane directions (u1, u2)
    PR: np.ndarray           # (n, 3, 3) placement rotation
    Pp: np.ndarray           # (n, 3) placement translation
    S: np.ndarray            # (n, 6, 6) motion subspace, first nvj columns
    inertia: np.ndarray      # (n, 6, 6) spatial inertias
    mass: np.ndarray         # (n,) link masses
    first_moment: np.ndarray  # (n, 3) mass times centre of mass, link frame
    gravity: np.ndarray      # (3,)


def _unsupported(model: Model) -> str | None:
    """Why ``model`` has no compiled kernels here, or ``None``."""
    for jm in model.joints:
        if jm.type not in JOINT_CODES or not jm.constant_subspace:
            return f"joint {jm.name!r} is a {type(jm).__name__} ({jm.type or 'general'})"
        if jm.type in ("spherical", "floating") and getattr(jm, "nr", 4) != 4:
            return (f"joint {jm.name!r} uses rotation vectors (Model(rotation="
                    f"{model.rotation!r})); the compiled kernels take quaternions")
    return None


def supports(model: Model) -> bool:
    """Whether every joint of ``model`` is a built-in joint type with quaternion rotations."""
    return _unsupported(model) is None


def require_supported(model: Model, what: str) -> None:
    """Raise ValueError naming the first joint the compiled kernels cannot take (``what``: who
    needs them, for the message)."""
    why = _unsupported(model)
    if why is not None:
        raise ValueError(f"{what} support revolute, prismatic, spherical, floating and planar "
                         f"joints with quaternion rotations; {why}")


def multi_dof_model(model: Model) -> MultiDofModel:
    """The model's :class:`MultiDofModel` (built once, cached on the model).

    Raises
    ------
    ValueError
        A joint the kernels cannot take (naming it).
    """
    cached = model._multi_dof_model
    if cached is not None:
        return cached
    require_supported(model, "the compiled multi-DOF kernels")
    n = model.njoints
    S = np.zeros((n, 6, 6))
    plane = np.zeros((n, 3, 2))
    for jm in model.joints:
        S[jm.index, :, :jm.nv] = jm.S
        if jm.type == "planar":
            plane[jm.index] = jm.plane
    P = np.array([jm.placement for jm in model.joints]).reshape(-1, 4, 4)
    flat = MultiDofModel(
        parent=np.array(model.parents, dtype=np.int64),
        jtype=np.array([JOINT_CODES[jm.type] for jm in model.joints], dtype=np.int64),
        iq=np.array([jm.idx_q for jm in model.joints], dtype=np.int64),
        iv=np.array([jm.idx_v for jm in model.joints], dtype=np.int64),
        nvj=np.array([jm.nv for jm in model.joints], dtype=np.int64),
        axis=np.array([jm.axis for jm in model.joints], dtype=float).reshape(-1, 3),
        plane=plane, PR=np.ascontiguousarray(P[:, :3, :3]),
        Pp=np.ascontiguousarray(P[:, :3, 3]), S=S,
        inertia=np.ascontiguousarray(model.inertias, dtype=float),
        mass=np.array(model.masses, dtype=float),
        first_moment=np.array(model.first_moments, dtype=float).reshape(-1, 3),
        gravity=np.array(model.gravity, dtype=float))
    model._multi_dof_model = flat
    return flat


# -- joint kinematics --------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _axis_rotation(axis, s, c, out):
    """``out = I + s K + (1 - c) K²`` with ``K = [axis]×`` (rotation about a unit axis)."""
    x, y, z = axis[0], axis[1], axis[2]
    C = 1.0 - c
    out[0, 0], out[0, 1], out[0, 2] = c + x * x * C, x * y * C - z * s, x * z * C + y * s
    out[1, 0], out[1, 1], out[1, 2] = y * x * C + z * s, c + y * y * C, y * z * C - x * s
    out[2, 0], out[2, 1], out[2, 2] = z * x * C - y * s, z * y * C + x * s, c + z * z * C


@njit(cache=True, _nrt=False)
def _quaternion_rotation(q, o, out):
    """Rotation matrix of the unit quaternion ``q[o:o+4] = (w, x, y, z)``
    (:func:`.spatial.rotation_from_quaternion`)."""
    w, x, y, z = q[o], q[o + 1], q[o + 2], q[o + 3]
    out[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[0, 1] = 2.0 * (x * y - w * z)
    out[0, 2] = 2.0 * (x * z + w * y)
    out[1, 0] = 2.0 * (x * y + w * z)
    out[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[1, 2] = 2.0 * (y * z - w * x)
    out[2, 0] = 2.0 * (x * z - w * y)
    out[2, 1] = 2.0 * (y * z + w * x)
    out[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True, _nrt=False)
def _placements(jtype, iq, axis, plane, PR, Pp, q, Rj, R, p):
    """``T_{λ(i),i}(q_i) = P_i T_j(q_i)`` of every joint as ``(R[i], p[i])``; ``T_j`` is the
    joint's :meth:`~.joints.JointModel.transform` (``Rj``: 3×3 scratch)."""
    for i in range(jtype.shape[0]):
        t, o = jtype[i], iq[i]
        pj0 = pj1 = pj2 = 0.0
        if t == 0:
            _axis_rotation(axis[i], math.sin(q[o]), math.cos(q[o]), Rj)
        elif t == 1:
            _axis_rotation(axis[i], 0.0, 1.0, Rj)
            pj0, pj1, pj2 = q[o] * axis[i, 0], q[o] * axis[i, 1], q[o] * axis[i, 2]
        elif t == 2:
            _quaternion_rotation(q, o, Rj)
        elif t == 3:
            _quaternion_rotation(q, o + 3, Rj)
            pj0, pj1, pj2 = q[o], q[o + 1], q[o + 2]
        else:
            _axis_rotation(axis[i], math.sin(q[o + 2]), math.cos(q[o + 2]), Rj)
            W = plane[i]
            pj0 = W[0, 0] * q[o] + W[0, 1] * q[o + 1]
            pj1 = W[1, 0] * q[o] + W[1, 1] * q[o + 1]
            pj2 = W[2, 0] * q[o] + W[2, 1] * q[o + 1]
        for a in range(3):
            P0, P1, P2 = PR[i, a, 0], PR[i, a, 1], PR[i, a, 2]
            for b in range(3):
                R[i, a, b] = P0 * Rj[0, b] + P1 * Rj[1, b] + P2 * Rj[2, b]
            p[i, a] = Pp[i, a] + P0 * pj0 + P1 * pj1 + P2 * pj2


# -- ABA ---------------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _invert_spd(D, d, out, work):
    """``out[:d, :d] = D[:d, :d]⁻¹`` by Gauss-Jordan elimination without pivoting (``D``
    symmetric positive definite: ``Sᵀ IA S``); ``work``: d×2d scratch. Returns 0, or 1 for a
    non-positive pivot (a joint whose articulated inertia is singular), 2 for a non-finite one
    (a non-finite state)."""
    for r in range(d):
        for c in range(d):
            work[r, c] = D[r, c]
            work[r, d + c] = 1.0 if r == c else 0.0
    for k in range(d):
        piv = work[k, k]
        if not piv > 0.0:
            return 1 if piv == piv else 2
        if piv == np.inf:
            return 2
        inv = 1.0 / piv
        for c in range(2 * d):
            work[k, c] *= inv
        for r in range(d):
            if r != k:
                f = work[r, k]
                if f != 0.0:
                    for c in range(2 * d):
                        work[r, c] -= f * work[k, c]
    for r in range(d):
        for c in range(d):
            out[r, c] = work[r, d + c]
    return 0


@njit(cache=True, _nrt=False)
def _aba(parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G, a_world, q, v, tau, R, p, V, c,
         pa, Ia, Ia_red, U, Dm, Dinv, u, A, B, Rj, inv_work, t6, h6, ddq):
    """Featherstone's ABA (Table 7.1) with multi-DOF joints into ``ddq``; returns ``(code,
    joint)``: ``(0, -1)``, or :func:`_invert_spd`'s code and the joint where ``Sᵀ IA S`` is not
    positive definite (1) or not finite (2)."""
    n = parent.shape[0]
    _placements(jtype, iq, axis, plane, PR, Pp, q, Rj, R, p)
    for i in range(n):                              # velocities and bias forces, root first
        k, d, o = parent[i], nvj[i], iv[i]
        for r in range(6):
            acc = 0.0
            for j in range(d):
                acc += S[i, r, j] * v[o + j]
            t6[r] = acc                             # S v
        if k >= 0:
            _X_apply(R[i], p[i], V[k], V[i])
            for r in range(6):
                V[i, r] += t6[r]
        else:
            for r in range(6):
                V[i, r] = t6[r]
        _cross_motion(V[i], t6, c[i])               # c = ad(V) S v
        for r in range(6):
            acc = 0.0
            for j in range(6):
                acc += G[i, r, j] * V[i, j]
                Ia[i, r, j] = G[i, r, j]
            h6[r] = acc
        _cross_force(V[i], h6, pa[i])               # pa = -ad(V)ᵀ G V
    for i in range(n - 1, -1, -1):                  # articulated inertias, leaves first
        k, d, o = parent[i], nvj[i], iv[i]
        for r in range(6):
            for j in range(r + 1, 6):               # keep Ia exactly symmetric (as the reference)
                m = 0.5 * (Ia[i, r, j] + Ia[i, j, r])
                Ia[i, r, j] = m
                Ia[i, j, r] = m
        for r in range(6):
            for j in range(d):
                acc = 0.0
                for t in range(6):
                    acc += Ia[i, r, t] * S[i, t, j]
                U[i, r, j] = acc
        for a in range(d):
            for b in range(d):
                acc = 0.0
                for t in range(6):
                    acc += S[i, t, a] * U[i, t, b]
                Dm[a, b] = acc
            acc = 0.0
            for t in range(6):
                acc += S[i, t, a] * pa[i, t]
            u[o + a] = tau[o + a] - acc
        code = _invert_spd(Dm, d, Dinv[i], inv_work)
        if code:
            return code, i
        if k < 0:
            continue
        # UD = U D⁻¹ (6×d) into B's first columns; Ia_red = Ia - UD Uᵀ; pa_i = pa + Ia_red c + UD u
        for r in range(6):
            for j in range(d):
                acc = 0.0
                for t in range(d):
                    acc += U[i, r, t] * Dinv[i, t, j]
                B[r, j] = acc
        for r in range(6):
            for j in range(6):
                acc = 0.0
                for t in range(d):
                    acc += B[r, t] * U[i, j, t]
                Ia_red[r, j] = Ia[i, r, j] - acc
        for r in range(6):
            acc = pa[i, r]
            for j in range(6):
                acc += Ia_red[r, j] * c[i, j]
            for t in range(d):
                acc += B[r, t] * u[o + t]
            t6[r] = acc
        _inertia_to_parent_add(R[i], p[i], Ia_red, Ia[k], B, Rj)
        _XT_add(R[i], p[i], t6, pa[k])
    for i in range(n):                              # accelerations, root first
        k, d, o = parent[i], nvj[i], iv[i]
        _X_apply(R[i], p[i], A[k] if k >= 0 else a_world, t6)
        for r in range(6):
            t6[r] += c[i, r]
        for a in range(d):
            acc = u[o + a]
            for t in range(6):
                acc -= U[i, t, a] * t6[t]
            h6[a] = acc
        for a in range(d):
            acc = 0.0
            for b in range(d):
                acc += Dinv[i, a, b] * h6[b]
            ddq[o + a] = acc
        for r in range(6):
            acc = t6[r]
            for j in range(d):
                acc += S[i, r, j] * ddq[o + j]
            A[i, r] = acc
    return 0, -1


def _raise_singular(model: Model, joint: int, where: str) -> None:
    name = model.joints[joint].name
    raise SingularArticulatedInertiaError(
        f"joint {name!r}: its articulated inertia Sᵀ IA S is not positive definite{where} (a "
        "massless subtree?)", [name])


@dataclass
class _Work:
    R: np.ndarray
    p: np.ndarray
    Ia_red: np.ndarray
    U: np.ndarray
    Dm: np.ndarray
    Dinv: np.ndarray
    u: np.ndarray
    B: np.ndarray
    Rj: np.ndarray
    inv_work: np.ndarray
    t6: np.ndarray
    h6: np.ndarray
    ddq: np.ndarray


def _work(model: Model, data: Data) -> _Work:
    w = data._multi_dof_work
    if w is None:
        n = model.njoints
        w = data._multi_dof_work = _Work(
            R=np.zeros((n, 3, 3)), p=np.zeros((n, 3)), Ia_red=np.zeros((6, 6)),
            U=np.zeros((n, 6, 6)), Dm=np.zeros((6, 6)), Dinv=np.zeros((n, 6, 6)),
            u=np.zeros(model.nv), B=np.zeros((6, 6)), Rj=np.zeros((3, 3)),
            inv_work=np.zeros((6, 12)), t6=np.zeros(6), h6=np.zeros(6), ddq=np.zeros(model.nv))
    return w


def aba(model: Model, data: Data, q, v, tau) -> np.ndarray:
    """Compiled :func:`dynamics.minimal.aba` for trees of built-in joints (:func:`supports`);
    returns ``ddq`` and fills ``data.V``, ``data.A``, ``data.c``, ``data.pa`` and
    ``data.Ia`` as the reference does.

    Raises
    ------
    ValueError
        Wrong lengths or an unsupported joint (naming it).
    SingularArticulatedInertiaError
        A joint whose articulated inertia ``Sᵀ IA S`` is not positive definite (naming it).
    """
    fm = multi_dof_model(model)
    q = as_vector(q, model.nq, "q", "model.nq")
    v = as_vector(v, model.nv, "v", "model.nv")
    tau = as_vector(tau, model.nv, "tau", "model.nv")
    w = _work(model, data)
    code, joint = _aba(fm.parent, fm.jtype, fm.iq, fm.iv, fm.nvj, fm.axis, fm.plane, fm.PR,
                       fm.Pp, fm.S, fm.inertia, data.a_gravity, q, v, tau, w.R, w.p, data.V,
                       data.c, data.pa, data.Ia, w.Ia_red, w.U, w.Dm, w.Dinv, w.u, data.A, w.B,
                       w.Rj, w.inv_work, w.t6, w.h6, w.ddq)
    if code == 1:
        _raise_singular(model, joint, "")
    if code == 2:                       # non-finite input: NaN out, as the reference
        w.ddq[:] = np.nan
    data.ddq[:] = w.ddq
    return w.ddq.copy()


# -- configuration update ----------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _exp_coefficients(theta):
    """``sinθ/θ, (1-cosθ)/θ², (θ-sinθ)/θ³`` (:func:`.spatial._coefficients`, the same series
    below θ = 0.1)."""
    if theta < 0.1:
        t2 = theta * theta
        t4, t6 = t2 * t2, t2 * t2 * t2
        return (1.0 - t2 / 6.0 + t4 / 120.0 - t6 / 5040.0,
                0.5 - t2 / 24.0 + t4 / 720.0 - t6 / 40320.0,
                1.0 / 6.0 - t2 / 120.0 + t4 / 5040.0 - t6 / 362880.0)
    s = math.sin(theta)
    t2 = theta * theta
    sh = math.sin(0.5 * theta)
    return s / theta, 2.0 * sh * sh / t2, (theta - s) / (t2 * theta)


@njit(cache=True, _nrt=False)
def _rotate_quaternion(q, o, w0, w1, w2, out):
    """``out[o:o+4] = normalize(q[o:o+4] ∘ exp(w))`` (:meth:`.joints._RotationJoint._rotate_by`,
    the rotation-vector quaternion of :func:`dynamics.quaternion.from_rotation_vector`)."""
    theta = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    half = 0.5 * theta
    scale = 0.5 - theta * theta / 48.0 if theta < 1e-8 else math.sin(half) / theta
    e0, e1, e2, e3 = math.cos(half), scale * w0, scale * w1, scale * w2
    a0, a1, a2, a3 = q[o], q[o + 1], q[o + 2], q[o + 3]
    r0 = a0 * e0 - a1 * e1 - a2 * e2 - a3 * e3
    r1 = a0 * e1 + a1 * e0 + a2 * e3 - a3 * e2
    r2 = a0 * e2 - a1 * e3 + a2 * e0 + a3 * e1
    r3 = a0 * e3 + a1 * e2 - a2 * e1 + a3 * e0
    norm = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2 + r3 * r3)
    out[o], out[o + 1], out[o + 2], out[o + 3] = r0 / norm, r1 / norm, r2 / norm, r3 / norm


@njit(cache=True, _nrt=False)
def _rotation_log(a, oa, b, ob, out, so):
    """``out[so:so+3] = log(R(a)ᵀ R(b))`` of the unit quaternions ``a[oa:oa+4]``,
    ``b[ob:ob+4]``: :func:`dynamics.quaternion.rotation_vector` of ``conj(a) ∘ b`` (a ball
    joint's :meth:`~.joints.JointModel.difference`, its spring's deflection)."""
    a0, a1, a2, a3 = a[oa], a[oa + 1], a[oa + 2], a[oa + 3]
    b0, b1, b2, b3 = b[ob], b[ob + 1], b[ob + 2], b[ob + 3]
    r0 = a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3
    r1 = a0 * b1 - a1 * b0 - a2 * b3 + a3 * b2
    r2 = a0 * b2 - a2 * b0 - a3 * b1 + a1 * b3
    r3 = a0 * b3 - a3 * b0 - a1 * b2 + a2 * b1
    if r0 < 0.0:
        r0, r1, r2, r3 = -r0, -r1, -r2, -r3
    nv = math.sqrt(r1 * r1 + r2 * r2 + r3 * r3)
    scale = 2.0 / r0 if nv < 1e-12 else 2.0 * math.atan2(nv, r0) / nv
    out[so], out[so + 1], out[so + 2] = scale * r1, scale * r2, scale * r3


@njit(cache=True, _nrt=False)
def _integrate(jtype, iq, iv, q, v, out, Rj):
    """``out = q ⊕ v`` joint by joint (:meth:`~.joints.JointModel.integrate`)."""
    for i in range(jtype.shape[0]):
        t, o, s = jtype[i], iq[i], iv[i]
        if t <= 1:
            out[o] = q[o] + v[s]
        elif t == 2:
            _rotate_quaternion(q, o, v[s], v[s + 1], v[s + 2], out)
        elif t == 3:
            # T exp([V]) with the twist V = (w; v_lin): p += R (v + b ŵ v + c ŵ² v)
            l0, l1, l2 = v[s], v[s + 1], v[s + 2]
            w0, w1, w2 = v[s + 3], v[s + 4], v[s + 5]
            _, b, cc = _exp_coefficients(math.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
            x0, x1, x2 = w1 * l2 - w2 * l1, w2 * l0 - w0 * l2, w0 * l1 - w1 * l0   # ŵ v
            y0, y1, y2 = w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0   # ŵ² v
            d0, d1, d2 = l0 + b * x0 + cc * y0, l1 + b * x1 + cc * y1, l2 + b * x2 + cc * y2
            _quaternion_rotation(q, o + 3, Rj)
            for a in range(3):
                out[o + a] = q[o + a] + (Rj[a, 0] * d0 + Rj[a, 1] * d1 + Rj[a, 2] * d2)
            _rotate_quaternion(q, o + 3, w0, w1, w2, out)
        else:
            # SE(2): (x, y) += R(θ) (α v1 - β v2, β v1 + α v2), θ += ω (.joints._se2_v)
            w = v[s + 2]
            if abs(w) < 1e-4:
                w2 = w * w
                al, be = 1.0 - w2 / 6.0 + w2 * w2 / 120.0, w * (0.5 - w2 / 24.0)
            else:
                al, be = math.sin(w) / w, (1.0 - math.cos(w)) / w
            s0, s1 = al * v[s] - be * v[s + 1], be * v[s] + al * v[s + 1]
            ct, st = math.cos(q[o + 2]), math.sin(q[o + 2])
            out[o] = q[o] + (ct * s0 - st * s1)
            out[o + 1] = q[o + 1] + (st * s0 + ct * s1)
            out[o + 2] = q[o + 2] + w


def integrate(model: Model, q, v) -> np.ndarray:
    """Compiled :func:`dynamics.minimal.integrate` (``q ⊕ v``) for the models of
    :func:`supports`; ``q`` is taken as valid (unit quaternions: the caller checks).

    Raises
    ------
    ValueError
        Wrong lengths or an unsupported joint (naming it).
    """
    fm = multi_dof_model(model)
    q = as_vector(q, model.nq, "q", "model.nq")
    v = as_vector(v, model.nv, "v", "model.nv")
    out = np.empty(model.nq)
    _integrate(fm.jtype, fm.iq, fm.iv, q, v, out, np.empty((3, 3)))
    return out


@njit(cache=True, _nrt=False)
def _tangent_rate(jtype, iv, nvj, S, delta, v, out, xi, U, M, T):
    """``out = dexp⁻¹_{-δ}(v)`` joint by joint (:func:`.integrators.tangent_rate`): ``v`` for
    revolute and prismatic joints, ``Sᵀ dlog(-S δ) S v`` for the others (``S δ`` is the
    joint's twist in the order ``(w; v)``: the SO(3), SE(3) or SE(2) ``dlog``). ``xi``,
    ``U``, ``M`` and ``T`` (7 × 3 × 3): scratch."""
    for i in range(jtype.shape[0]):
        s, d = iv[i], nvj[i]
        if jtype[i] <= 1:
            out[s] = v[s]
            continue
        for r in range(6):
            a = 0.0
            b = 0.0
            for j in range(d):
                a += S[i, r, j] * delta[s + j]
                b += S[i, r, j] * v[s + j]
            xi[r] = -a
            U[r] = b
        _dlog_into(xi, M, T)
        for j in range(d):
            acc = 0.0
            for r in range(6):
                if S[i, r, j] != 0.0:
                    t = 0.0
                    for c in range(6):
                        t += M[r, c] * U[c]
                    acc += S[i, r, j] * t
            out[s + j] = acc


def tangent_rate(model: Model, delta, v) -> np.ndarray:
    """Compiled :func:`dynamics.minimal.integrators.tangent_rate` (``δ'`` of ``q_k ⊕ δ(t)``
    moving with ``v``) for the models of :func:`supports`.

    Raises
    ------
    ValueError
        Wrong lengths or an unsupported joint (naming it).
    """
    fm = multi_dof_model(model)
    delta = as_vector(delta, model.nv, "delta", "model.nv")
    v = as_vector(v, model.nv, "v", "model.nv")
    out = np.empty(model.nv)
    _tangent_rate(fm.jtype, fm.iv, fm.nvj, fm.S, delta, v, out, np.empty(6), np.empty(6),
                  np.empty((6, 6)), np.empty((7, 3, 3)))
    return out


# -- energies of a trajectory ------------------------------------------------------------------
@njit(cache=True)
def _energies(parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G, mass, first_moment,
              gravity, Q, Vs, out, R, p, Rw, pw, V, Rj, t6):
    """``out[k]`` = kinetic + gravitational energy of ``(Q[k], Vs[k])``
    (:func:`.algorithms.kinetic_energy` + :func:`.algorithms.potential_energy`)."""
    n = parent.shape[0]
    for k in range(Q.shape[0]):
        q, v = Q[k], Vs[k]
        _placements(jtype, iq, axis, plane, PR, Pp, q, Rj, R, p)
        kinetic = 0.0
        for i in range(n):
            a, d, o = parent[i], nvj[i], iv[i]
            for r in range(6):
                acc = 0.0
                for j in range(d):
                    acc += S[i, r, j] * v[o + j]
                t6[r] = acc
            if a >= 0:
                _X_apply(R[i], p[i], V[a], V[i])
                for r in range(6):
                    V[i, r] += t6[r]
            else:
                for r in range(6):
                    V[i, r] = t6[r]
            for r in range(6):
                acc = 0.0
                for c in range(6):
                    acc += G[i, r, c] * V[i, c]
                kinetic += 0.5 * V[i, r] * acc
        potential = _gravity_potential(parent, R, p, mass, first_moment, gravity, Rw, pw)
        out[k] = kinetic + potential


def mechanical_energies(model: Model, Q, Vs) -> np.ndarray:
    """Kinetic + gravitational energy of every row of a trajectory ``(Q, Vs)`` (``(T, nq)``,
    ``(T, nv)``), compiled: what :func:`.algorithms.kinetic_energy` +
    :func:`.algorithms.potential_energy` give row by row (spring energy not included). Rows are
    taken as valid configurations.

    Raises
    ------
    ValueError
        Wrong shapes or an unsupported joint (naming it).
    """
    fm = multi_dof_model(model)
    Q = np.ascontiguousarray(Q, dtype=float)
    Vs = np.ascontiguousarray(Vs, dtype=float)
    if Q.ndim != 2 or Q.shape[1] != model.nq or Vs.shape != (Q.shape[0], model.nv):
        raise ValueError(f"Q and Vs must be (T, model.nq) = (T, {model.nq}) and (T, model.nv) "
                         f"= (T, {model.nv}), got {Q.shape} and {Vs.shape}")
    n = model.njoints
    out = np.empty(Q.shape[0])
    _energies(fm.parent, fm.jtype, fm.iq, fm.iv, fm.nvj, fm.axis, fm.plane, fm.PR, fm.Pp, fm.S,
              fm.inertia, fm.mass, fm.first_moment, fm.gravity, Q, Vs, out,
              np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3)),
              np.empty((n, 6)), np.empty((3, 3)), np.empty(6))
    return out


# -- the explicit integrators' whole loop ------------------------------------------------------
#: Method codes of :func:`simulate_explicit` (:data:`.integrators.EXPLICIT_METHODS`).
EXPLICIT_CODES = {"euler": 0, "semi_implicit_euler": 1, "rk4": 2}


@njit(cache=True, _nrt=False)
def _acceleration(fm, a_world, stiffness, damping, rest, q, v, ext, tau, w, ddq):
    """ABA of ``(q, v)`` under the joint forces ``ext`` plus the joints' spring and damper
    forces ``-k (q ⊖ q_rest) - d v`` (:func:`.forces.joint_forces`: springs on one-coordinate
    and ball joints; floating and planar joints take none) into ``ddq`` (``tau``: scratch);
    returns :func:`_aba`'s ``(code, joint)``."""
    parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G = fm
    R, p, V, c, pa, Ia, Ia_red, U, Dm, Dinv, u, A, B, Rj, inv_work, t6, h6 = w[:17]
    for i in range(jtype.shape[0]):
        o, d = iv[i], nvj[i]
        for j in range(d):
            tau[o + j] = ext[o + j] - damping[o + j] * v[o + j]
        if jtype[i] <= 1 and stiffness[o] != 0.0:
            tau[o] -= stiffness[o] * (q[iq[i]] - rest[iq[i]])
        elif jtype[i] == 2 and stiffness[o] != 0.0:      # the ball's rotation from rest
            _rotation_log(rest, iq[i], q, iq[i], h6, 0)  # (h6: the ABA's, free until it runs)
            for j in range(3):
                tau[o + j] -= stiffness[o + j] * h6[j]
    return _aba(parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G, a_world, q, v, tau, R, p,
                V, c, pa, Ia, Ia_red, U, Dm, Dinv, u, A, B, Rj, inv_work, t6, h6, ddq)


@njit(cache=True, _nrt=False)
def _explicit_run(method, fm, a_world, stiffness, damping, rest, dt, Q, Vs, w, ext, tau, kd, kv,
                  qs, vs, delta):
    """Rows ``1 ..`` of ``Q``, ``Vs`` from row 0 by ``method`` (:data:`EXPLICIT_CODES`), as
    :func:`.integrators.step` takes them, the joint forces ``ext`` added at every force
    evaluation (``tau``: scratch); returns ``(code, step, joint)``: ``(0, -1, -1)``, or
    1 and the step and joint whose articulated inertia is singular, or 2 and the first step
    whose result is not finite (the method diverged)."""
    jtype, iq, iv, nvj, S = fm[1], fm[2], fm[3], fm[4], fm[9]
    Rj = w[13]
    nv = Vs.shape[1]
    for k in range(Q.shape[0] - 1):
        q, v, qn, vn = Q[k], Vs[k], Q[k + 1], Vs[k + 1]
        if method <= 1:
            code, bad = _acceleration(fm, a_world, stiffness, damping, rest, q, v, ext, tau, w,
                                      kv[0])
            if code:
                return _failure(code, k, bad)
            for j in range(nv):
                vn[j] = v[j] + dt * kv[0, j]
                delta[j] = dt * (v[j] if method == 0 else vn[j])
            _integrate(jtype, iq, iv, q, delta, qn, Rj)
            if not (_finite(vn) and _finite(qn)):
                return 2, k + 1, -1
            continue
        # Runge-Kutta-Munthe-Kaas 4 (integrators.step): stages at c = 0, 1/2, 1/2, 1
        for stage in range(4):
            if stage == 0:
                for j in range(nv):
                    kd[0, j] = v[j]
                code, bad = _acceleration(fm, a_world, stiffness, damping, rest, q, v, ext, tau, w,
                                          kv[0])
            else:
                cdt = (0.5 if stage < 3 else 1.0) * dt
                for j in range(nv):
                    delta[j] = cdt * kd[stage - 1, j]
                    vs[j] = v[j] + cdt * kv[stage - 1, j]
                _integrate(jtype, iq, iv, q, delta, qs, Rj)
                # (scratch: t6 and h6 of the ABA, free between its calls, and w's last two)
                _tangent_rate(jtype, iv, nvj, S, delta, vs, kd[stage], w[15], w[16], w[17],
                              w[18])
                code, bad = _acceleration(fm, a_world, stiffness, damping, rest, qs, vs, ext,
                                          tau, w, kv[stage])
            if code:
                return _failure(code, k, bad)
        h = dt / 6.0
        for j in range(nv):
            delta[j] = h * (kd[0, j] + 2.0 * kd[1, j] + 2.0 * kd[2, j] + kd[3, j])
            vn[j] = v[j] + h * (kv[0, j] + 2.0 * kv[1, j] + 2.0 * kv[2, j] + kv[3, j])
        _integrate(jtype, iq, iv, q, delta, qn, Rj)
        if not (_finite(vn) and _finite(qn)):
            return 2, k + 1, -1
    return 0, -1, -1


@njit(cache=True, _nrt=False)
def _failure(code, k, joint):
    """:func:`_explicit_run`'s result for an ABA that failed with ``code`` in step ``k`` (from
    0): a singular joint, or a non-finite pivot (a state that overflowed: step ``k + 1``
    diverges)."""
    if code == 1:
        return 1, k, joint
    return 2, k + 1, -1


@njit(cache=True, _nrt=False)
def _finite(x):
    for i in range(x.shape[0]):
        if not abs(x[i]) < np.inf:
            return False
    return True


def simulate_explicit(model: Model, q0: np.ndarray, v0: np.ndarray, dt: float, steps: int,
                      method: str) -> tuple[np.ndarray, np.ndarray]:
    """The trajectory ``(Q, Vs)`` (``steps + 1`` rows) of :func:`.integrators.simulate`'s
    explicit ``method`` without a controller, every step in one compiled call: the same
    steps as :func:`.integrators.step` with the compiled kernels (to rounding). ``q0``,
    ``v0`` are taken as checked.

    Raises
    ------
    ValueError
        An unsupported joint (naming it).
    SingularArticulatedInertiaError
        A joint whose articulated inertia is not positive definite (naming it and the step).
    DivergenceError
        A step whose result is not finite (naming it).
    """
    ints, buf, off = packed = _model_packed(model)
    buf[off[_EXT]:off[_EXT + 1]] = 0.0              # no joint forces (explicit_step's own)
    Q, Vs = np.empty((steps + 1, model.nq)), np.empty((steps + 1, model.nv))
    Q[0], Vs[0] = q0, v0
    code, k, bad = _explicit_packed(EXPLICIT_CODES[method], *packed, float(dt), Q, Vs)
    if code == 1:
        _raise_singular(model, bad, f" at step {k}")
    if code == 2:
        raise DivergenceError.explicit(method, dt, k * dt, k)
    return Q, Vs


def _packed_shapes(n: int, nv: int, nq: int) -> list[tuple[int, ...]]:
    """The shapes of the float arrays :func:`_explicit_packed` carves out of its buffer, in
    its order: the model's ``axis, plane, PR, Pp, S, inertia``; ``a_world``; the springs'
    ``stiffness, damping, rest``; the ABA's work (``R, p, V, c, pa, Ia, Ia_red, U, Dm, Dinv,
    u, A, B, Rj, inv_work, t6, h6``, as :func:`aba` has them) and the 6×6 and 7×3×3 scratch
    of ``tangent_rate``'s dlog; the joint forces ``ext``; the scratch ``tau, kd, kv, qs, vs,
    delta`` of :func:`_explicit_run`."""
    return [(n, 3), (n, 3, 2), (n, 3, 3), (n, 3), (n, 6, 6), (n, 6, 6),
            (6,), (nv,), (nv,), (nq,),
            (n, 3, 3), (n, 3), (n, 6), (n, 6), (n, 6), (n, 6, 6), (6, 6), (n, 6, 6), (6, 6),
            (n, 6, 6), (nv,), (n, 6), (6, 6), (3, 3), (6, 12), (6,), (6,), (6, 6), (7, 3, 3),
            (nv,), (nv,), (4, nv), (4, nv), (nq,), (nv,), (nv,)]


#: The index of ``ext`` among :func:`_packed_shapes`.
_EXT = 29


def _model_packed(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_packed_arguments` of ``model``, made once and kept on it (``ext`` and the work
    are scratch that every call sets)."""
    if model._explicit_packed is None:
        model._explicit_packed = _packed_arguments(model)
    return model._explicit_packed


def _packed_arguments(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`_explicit_packed` takes besides ``method``, ``dt``, ``Q`` and ``Vs``: the
    model's five integer arrays as the rows of one array, every float array of
    :func:`_packed_shapes` in one buffer (zero joint forces ``ext``, zero work), and their
    offsets in it. Three arguments instead of about 45, whose unboxing cost 4-5 µs per
    call."""
    from .forces import joint_springs

    fm = multi_dof_model(model)
    springs = joint_springs(model)
    n, nv, nq = model.njoints, model.nv, model.nq
    shapes = _packed_shapes(n, nv, nq)
    given = [fm.axis, fm.plane, fm.PR, fm.Pp, fm.S, fm.inertia,
             np.concatenate([np.zeros(3), -fm.gravity]),      # (0; -g), as Data.a_gravity
             springs.stiffness, springs.damping, springs.rest]
    if [a.shape for a in given] != shapes[:len(given)]:     # the carving must match
        raise AssertionError("multi_dof_kernels: the packed layout is out of date")
    off = np.cumsum([0] + [math.prod(shape) for shape in shapes]).astype(np.int64)
    buf = np.zeros(off[-1])
    for k, a in enumerate(given):
        buf[off[k]:off[k + 1]] = np.ravel(a)
    ints = np.ascontiguousarray(np.stack([fm.parent, fm.jtype, fm.iq, fm.iv, fm.nvj]),
                                dtype=np.int64)
    return ints, buf, off


@njit(cache=True, _nrt=False)
def _explicit_packed(method, ints, buf, off, dt, Q, Vs):
    """:func:`_explicit_run` on the arrays of :func:`_packed_arguments`: views carved out of
    ``buf`` in :func:`_packed_shapes`' order. Compiled without reference counting, as
    graphsolve's kernels (the caller holds every array; nothing it calls allocates): with it,
    making and dropping the views and the slices of the ABA cost about a third of a step
    (7-DOF arm: 3.6 against 2.5 µs per step)."""
    n, nv = ints.shape[1], Vs.shape[1]
    fm = (ints[0], ints[1], ints[2], ints[3], ints[4],
          buf[off[0]:off[1]].reshape((n, 3)), buf[off[1]:off[2]].reshape((n, 3, 2)),
          buf[off[2]:off[3]].reshape((n, 3, 3)), buf[off[3]:off[4]].reshape((n, 3)),
          buf[off[4]:off[5]].reshape((n, 6, 6)), buf[off[5]:off[6]].reshape((n, 6, 6)))
    w = (buf[off[10]:off[11]].reshape((n, 3, 3)), buf[off[11]:off[12]].reshape((n, 3)),
         buf[off[12]:off[13]].reshape((n, 6)), buf[off[13]:off[14]].reshape((n, 6)),
         buf[off[14]:off[15]].reshape((n, 6)), buf[off[15]:off[16]].reshape((n, 6, 6)),
         buf[off[16]:off[17]].reshape((6, 6)), buf[off[17]:off[18]].reshape((n, 6, 6)),
         buf[off[18]:off[19]].reshape((6, 6)), buf[off[19]:off[20]].reshape((n, 6, 6)),
         buf[off[20]:off[21]], buf[off[21]:off[22]].reshape((n, 6)),
         buf[off[22]:off[23]].reshape((6, 6)), buf[off[23]:off[24]].reshape((3, 3)),
         buf[off[24]:off[25]].reshape((6, 12)), buf[off[25]:off[26]], buf[off[26]:off[27]],
         buf[off[27]:off[28]].reshape((6, 6)), buf[off[28]:off[29]].reshape((7, 3, 3)))
    return _explicit_run(method, fm, buf[off[6]:off[7]], buf[off[7]:off[8]],
                         buf[off[8]:off[9]], buf[off[9]:off[10]], dt, Q, Vs, w,
                         buf[off[29]:off[30]], buf[off[30]:off[31]],
                         buf[off[31]:off[32]].reshape((4, nv)),
                         buf[off[32]:off[33]].reshape((4, nv)), buf[off[33]:off[34]],
                         buf[off[34]:off[35]], buf[off[35]:off[36]])


def explicit_step(model: Model, data: Data, q: np.ndarray, v: np.ndarray, dt: float,
                  method: str, t: float = 0.0,
                  tau: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One step of :func:`.integrators.step`'s explicit ``method`` from ``(q, v)`` at time
    ``t`` in one compiled call (:func:`_explicit_run` over a single step: the step
    :func:`simulate_explicit` takes, bit for bit), the joint forces ``tau`` (``None``: zero)
    added to the springs and dampers at every force evaluation. ``q``, ``v`` are taken as
    checked; the packed arrays are the model's (:func:`_model_packed`), the two state rows
    ``data``'s, made once (the step does not fill ``data``'s ABA arrays, ``data.V``,
    ``data.A``, ...). Returns new
    ``(q, v)``.

    Raises
    ------
    ValueError
        An unsupported joint (naming it).
    SingularArticulatedInertiaError
        A joint whose articulated inertia is not positive definite (naming it).
    DivergenceError
        The step's result is not finite.
    """
    ints, buf, off = _model_packed(model)
    rows = data._explicit_step
    if rows is None:
        rows = data._explicit_step = (np.zeros((2, model.nq)), np.zeros((2, model.nv)))
    Q, Vs = rows
    Q[0], Vs[0] = q, v
    ext = buf[off[_EXT]:off[_EXT + 1]]
    if tau is None:
        ext.fill(0.0)
    else:
        ext[:] = tau
    code, _, bad = _explicit_packed(EXPLICIT_CODES[method], ints, buf, off, float(dt), Q, Vs)
    if code == 1:
        _raise_singular(model, bad, "")
    if code == 2:
        raise DivergenceError.explicit(method, dt, t + dt)
    return Q[1].copy(), Vs[1].copy()
