"""numba versions of the applied joint forces of :meth:`.StepSystem.begin` (joint springs,
dampers and actuator forces) and the whole compiled step built on them.

Per joint, as the NumPy reference in :mod:`.joints` and :meth:`.StepSystem.begin`:

* the rate map ``R`` (:func:`.joints.rate_map`, 6×12, rows ``dof..5`` zero; the relative
  angular velocity in the child frame for three rotational DOF);
* the minimal coordinates ``c`` springs act on (:func:`.joints.minimal_coordinates`:
  ``C_Tᵀ g_T``, the angle ``2 atan2(aᵀv, s)`` of one rotational DOF, the rotation vector of
  three);
* the joint inputs ``u = -k (c - c₀) + f`` and their body wrenches ``Rᵀ u`` added to the
  parent (unless the world) and the child;
* the damper matrix ``d RᵀR`` (12×12) the residual applies at ``ż₁``, and its blocks of the
  Newton matrix: the parent and child 6×6 diagonal blocks into the constant ``diag_const``
  and the parent-child coupling blocks written into the matrix buffer (``_coupling_dst``).

Written as loops so a step makes no Python call per joint; the tests compare them with the
NumPy reference for every joint type.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .newton_kernels import (
    _RATE_LIMIT,
    _copy,
    _ends,
    _mtv,
    _mv,
    _rot,
    _select_mm,
    _world,
    finish_step,
    newton_kernel,
    start_step,
)

__all__ = ["rate_map_kernel", "coordinates_kernel", "applied_forces_kernel",
           "forced_step_kernel", "force_work"]


@njit(cache=True, error_model="numpy", inline="always")
def _frames(xa, qa, xb, qb, pb, W):
    """``Q_a``, ``Q_b`` in ``W[0]``, ``W[1]`` and the lever ``Q_aᵀ (x_b + Q_b p_b - x_a)`` (the
    translational constraint ``g_T`` plus ``p_a``) in ``W[5, 0]``."""
    Qa, Qb = W[0], W[1]
    _rot(qa, Qa)
    _rot(qb, Qb)
    r = W[5, 1]
    _mv(Qb, pb, r)
    for i in range(3):
        r[i] += xb[i] - xa[i]
    _mtv(Qa, r, W[5, 0])


@njit(cache=True, error_model="numpy", inline="always")
def _joint_rate_map(xa, qa, xb, qb, pb, qoff, free, dof, rdof, out, M, W):
    """One joint's rate map (:func:`.joints.rate_map`) into ``out`` (6×12); ``M`` (6×12) and
    ``W`` (6, 3, 3) are scratch."""
    _frames(xa, qa, xb, qb, pb, W)
    Qa, Qb, Qo, AB = W[0], W[1], W[2], W[3]
    lever = W[5, 0]
    for i in range(3):
        for j in range(3):
            acc = 0.0
            for t in range(3):
                acc += Qa[t, i] * Qb[t, j]
            AB[i, j] = acc                             # Q_aᵀ Q_b
    for i in range(6):
        for j in range(12):
            M[i, j] = 0.0
    for i in range(3):
        for j in range(3):
            M[i, j] = -Qa[j, i]
            M[i, 6 + j] = Qa[j, i]
    M[0, 4] = -lever[2]                                # [g_T + p_a]×
    M[0, 5] = lever[1]
    M[1, 3] = lever[2]
    M[1, 5] = -lever[0]
    M[2, 3] = -lever[1]
    M[2, 4] = lever[0]
    for i in range(3):                                 # -Q_aᵀ Q_b [p_b]×: rows -(AB_i × p_b)
        M[i, 9] = -(AB[i, 1] * pb[2] - AB[i, 2] * pb[1])
        M[i, 10] = -(AB[i, 2] * pb[0] - AB[i, 0] * pb[2])
        M[i, 11] = -(AB[i, 0] * pb[1] - AB[i, 1] * pb[0])
    if rdof == 3:                                      # ω_rel in the child frame
        for i in range(3):
            for j in range(3):
                M[3 + i, 3 + j] = -AB[j, i]
            M[3 + i, 9 + i] = 1.0
    else:                                              # ω_rel in the joint frame
        _rot(qoff, Qo)
        for i in range(3):
            for j in range(3):
                M[3 + i, 3 + j] = -Qo[j, i]
                acc = 0.0
                for t in range(3):
                    acc += Qo[t, i] * AB[t, j]
                M[3 + i, 9 + j] = acc
    _select_mm(free, dof, M, out)


@njit(cache=True, error_model="numpy", inline="always")
def _qmul(a, b, out):
    """Hamilton product ``a ∘ b = L(a) b`` (eq. A.2c)."""
    s, x, y, z = a[0], a[1], a[2], a[3]
    out[0] = s * b[0] - x * b[1] - y * b[2] - z * b[3]
    out[1] = x * b[0] + s * b[1] - z * b[2] + y * b[3]
    out[2] = y * b[0] + z * b[1] + s * b[2] - x * b[3]
    out[3] = z * b[0] - y * b[1] + x * b[2] + s * b[3]


@njit(cache=True, error_model="numpy", inline="always")
def _joint_coordinates(xa, qa, xb, qb, pa, pb, qoff, free, tdof, rdof, axis, out, W, Q):
    """One joint's minimal coordinates (:func:`.joints.minimal_coordinates`), padded to 6,
    into ``out``; ``W`` (6, 3, 3) and ``Q`` (3, 4) are scratch."""
    for i in range(6):
        out[i] = 0.0
    if tdof > 0:
        _frames(xa, qa, xb, qb, pb, W)
        g = W[5, 1]
        for i in range(3):
            g[i] = W[5, 0, i] - pa[i]                  # g_T
        for r in range(tdof):
            out[r] = free[r, 0] * g[0] + free[r, 1] * g[1] + free[r, 2] * g[2]
    if rdof == 0:
        return
    conj, ab, qrel = Q[0], Q[1], Q[2]
    conj[0] = qa[0]
    for i in range(1, 4):
        conj[i] = -qa[i]
    _qmul(conj, qb, ab)                                # q_a⁻¹ ∘ q_b
    conj[0] = qoff[0]
    for i in range(1, 4):
        conj[i] = -qoff[i]
    _qmul(conj, ab, qrel)                              # q_off⁻¹ ∘ q_a⁻¹ ∘ q_b
    if qrel[0] < 0.0:
        for i in range(4):
            qrel[i] = -qrel[i]
    if rdof == 1:                                      # the angle about the axis
        out[tdof] = 2.0 * np.arctan2(axis[0] * qrel[1] + axis[1] * qrel[2]
                                     + axis[2] * qrel[3], qrel[0])
    elif rdof == 3:                                    # the rotation vector
        nv = np.sqrt(qrel[1] * qrel[1] + qrel[2] * qrel[2] + qrel[3] * qrel[3])
        if nv < 1e-12:
            scale = 2.0 / qrel[0]
        else:
            scale = 2.0 * np.arctan2(nv, qrel[0]) / nv
        for i in range(3):
            out[tdof + i] = scale * qrel[1 + i]


@njit(cache=True, error_model="numpy")
def rate_map_kernel(x, q, parent, child, p_b, q_off, free, dof, rdof, out):
    """``out[k]`` = the rate map of every joint ``k`` at the poses ``x, q`` (as
    :func:`.joints.rate_map` of the joints' end poses); ``out`` (n_joints, 6, 12)."""
    M = np.empty((6, 12))
    W = np.empty((6, 3, 3))
    world_x, world_q = _world()
    for k in range(parent.shape[0]):
        xa, qa, xb, qb = _ends(k, parent, child, x, q, world_x, world_q)
        _joint_rate_map(xa, qa, xb, qb, p_b[k], q_off[k], free[k], dof[k], rdof[k], out[k], M,
                        W)


@njit(cache=True, error_model="numpy")
def coordinates_kernel(x, q, parent, child, p_a, p_b, q_off, free, tdof, rdof, rot_axis, out):
    """``out[k]`` = the padded minimal coordinates of every joint ``k`` at the poses ``x, q``
    (as :func:`.joints.minimal_coordinates`); ``out`` (n_joints, 6)."""
    W = np.empty((6, 3, 3))
    Q = np.empty((3, 4))
    world_x, world_q = _world()
    for k in range(parent.shape[0]):
        xa, qa, xb, qb = _ends(k, parent, child, x, q, world_x, world_q)
        _joint_coordinates(xa, qa, xb, qb, p_a[k], p_b[k], q_off[k], free[k], tdof[k], rdof[k],
                           rot_axis[k], out[k], W, Q)


def force_work(n_joints: int) -> tuple:
    """Scratch of :func:`_applied_forces_into` (made once by :class:`.StepSystem`, the last
    member of its ``forces`` tuple): ``(M, W, Q, c, u, w12)`` = one joint's 6×12 rate map,
    (6, 3, 3) frames, (3, 4) quaternions, its coordinates and inputs (6 each) and every
    joint's 12-vector wrench (n_joints, 12)."""
    return (np.zeros((6, 12)), np.zeros((6, 3, 3)), np.zeros((3, 4)), np.zeros(6), np.zeros(6),
            np.zeros((n_joints, 12)))


#: rows of the body wrench that the residual scales by 2 (torques, eq. 20)
_SCALE = (1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0)


@njit(cache=True, error_model="numpy")
def applied_forces_kernel(x1, q1, gravity_wrench, joint_forces, has_forces, parent, child,
                          p_a, p_b, q_off, free, dof, tdof, rdof, rot_axis, spring,
                          spring_offset, damper, pairs, coupling_dst, rate, external, damping,
                          diag_const, coupling, data):
    """What :meth:`.StepSystem.begin` fixes for a step's Newton iteration, at ``z₁ = (x1, q1)``.

    * ``external`` (nb, 6) = ``gravity_wrench`` plus the wrenches ``Rᵀ u`` of the joint inputs
      ``u = -k (c(z₁) - c₀) + f`` (springs, and ``joint_forces`` (n_joints, 6) if
      ``has_forces``), added to every joint's parent (unless the world), then its child;
    * ``damping`` (n_joints, 12, 12) = ``d RᵀR`` for every joint, or nothing when it has no
      rows (a mechanism without dampers);
    * ``diag_const`` (nb, 6, 6): the damper blocks ``diag(1, 2) d RᵀR`` of the body diagonals;
      ``coupling`` (n_pairs, 2, 36): the ``(a, b)`` and ``(b, a)`` blocks of the damped joints
      ``pairs`` between two bodies, written into ``data`` at ``coupling_dst`` (zeroed first,
      then added: joints sharing a body pair share entries).

    ``rate`` (n_joints, 6, 12) receives the rate maps of the joints with a spring, damper or
    nonzero force (the others are not evaluated). Sums follow the order of the reference.
    """
    nj = parent.shape[0]
    world_x, world_q = _world()
    _applied_forces_into(x1, q1, gravity_wrench, joint_forces, has_forces, parent, child, p_a,
                         p_b, q_off, free, dof, tdof, rdof, rot_axis, spring, spring_offset,
                         damper, pairs, coupling_dst, rate, external, damping, diag_const,
                         coupling, data, (np.empty((6, 12)), np.empty((6, 3, 3)),
                                          np.empty((3, 4)), np.empty(6), np.empty(6),
                                          np.empty((nj, 12))), world_x, world_q)


@njit(cache=True, error_model="numpy", _nrt=False)
def _applied_forces_into(x1, q1, gravity_wrench, joint_forces, has_forces, parent, child, p_a,
                         p_b, q_off, free, dof, tdof, rdof, rot_axis, spring, spring_offset,
                         damper, pairs, coupling_dst, rate, external, damping, diag_const,
                         coupling, data, work, world_x, world_q):
    """:func:`applied_forces_kernel` with the scratch ``work`` of :func:`force_work` and the
    world's pose ``world_x = 0``, ``world_q = (1, 0, 0, 0)`` (those of
    :func:`.newton_kernels.newton_work`)."""
    nj = parent.shape[0]
    has_damping = damping.shape[0] > 0
    M, W, Q, c, u, w12 = work
    for k in range(nj):
        d = dof[k]
        forced = False
        if has_forces:
            for r in range(d):
                if joint_forces[k, r] != 0.0:
                    forced = True
        damped = has_damping and damper[k] > 0.0
        if has_damping and not damped:
            for i in range(12):
                for j in range(12):
                    damping[k, i, j] = 0.0
        if not (spring[k] > 0.0 or damped or forced):
            for i in range(12):
                w12[k, i] = 0.0
            continue
        xa, qa, xb, qb = _ends(k, parent, child, x1, q1, world_x, world_q)
        R = rate[k]
        _joint_rate_map(xa, qa, xb, qb, p_b[k], q_off[k], free[k], d, rdof[k], R, M, W)
        for r in range(d):
            u[r] = 0.0
        if spring[k] > 0.0:
            _joint_coordinates(xa, qa, xb, qb, p_a[k], p_b[k], q_off[k], free[k], tdof[k],
                               rdof[k], rot_axis[k], c, W, Q)
            for r in range(d):
                u[r] -= spring[k] * (c[r] - spring_offset[k, r])
        if forced:
            for r in range(d):
                u[r] += joint_forces[k, r]
        for i in range(12):
            acc = 0.0
            for r in range(d):
                acc += R[r, i] * u[r]
            w12[k, i] = acc
        if damped:
            dk = damper[k]
            for i in range(12):
                for j in range(12):
                    acc = 0.0
                    for r in range(d):
                        acc += R[r, i] * R[r, j]
                    damping[k, i, j] = dk * acc
    _copy(external, gravity_wrench)
    for k in range(nj):
        a = parent[k]
        if a >= 0:
            for i in range(6):
                external[a, i] += w12[k, i]
    for k in range(nj):
        b = child[k]
        for i in range(6):
            external[b, i] += w12[k, 6 + i]
    diag_const[:, :, :] = 0.0
    if not has_damping:
        return
    for k in range(nj):
        a = parent[k]
        if a >= 0 and damper[k] > 0.0:
            for i in range(6):
                for j in range(6):
                    diag_const[a, i, j] += _SCALE[i] * damping[k, i, j]
    for k in range(nj):
        b = child[k]
        if damper[k] > 0.0:
            for i in range(6):
                for j in range(6):
                    diag_const[b, i, j] += _SCALE[i] * damping[k, 6 + i, 6 + j]
    for p in range(pairs.shape[0]):
        k = pairs[p]
        for i in range(6):
            for j in range(6):
                coupling[p, 0, 6 * i + j] = _SCALE[i] * damping[k, i, 6 + j]
                coupling[p, 1, 6 * i + j] = _SCALE[i] * damping[k, 6 + i, j]
    for p in range(pairs.shape[0]):
        for e in range(2):
            for t in range(36):
                data[coupling_dst[p, e, t]] = 0.0
    for p in range(pairs.shape[0]):
        for e in range(2):
            for t in range(36):
                data[coupling_dst[p, e, t]] += coupling[p, e, t]


@njit(cache=True, error_model="numpy", _nrt=False)
def forced_step_kernel(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, tol, max_iter,
                       history, handle, data, mass, inertia, dt, gravity_wrench, joint_forces,
                       has_forces, parent, child, p_a, p_b, q_off, select, free, nc, dof, tdof,
                       rdof, rot_axis, spring, spring_offset, damper, pairs, coupling_dst,
                       jrow, ptr_bj, ptr_jb, G, rate, external, damping, diag_const, coupling,
                       work, force_scratch, reuse=True):
    """One whole integrator step with joint springs, dampers and joint forces.

    :func:`.newton_kernels.step_kernel` with the applied forces of
    :func:`applied_forces_kernel` at ``z₁`` between the update rules and Newton
    (``joint_forces`` (n_joints, 6) read only if ``has_forces``). ``G``, ``rate``,
    ``external``, ``damping``, ``diag_const`` and ``coupling`` are work arrays (see
    :func:`applied_forces_kernel`; ``damping`` without rows for a mechanism without
    dampers); ``work``: :func:`.newton_kernels.newton_work`; ``force_scratch``:
    :func:`force_work` (nothing here allocates); ``reuse``: the simplified-Newton rule of
    :func:`.newton_kernels.newton_kernel`. Returns ``(code, iterations, position)`` as
    ``step_kernel``.
    """
    body = start_step(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, dt, parent,
                      child, p_a, p_b, q_off, select, nc, jrow, G, work)
    x1, q1 = work[3], work[4]
    if body >= 0:
        return _RATE_LIMIT, 0, body
    _applied_forces_into(x1, q1, gravity_wrench, joint_forces, has_forces, parent, child, p_a,
                         p_b, q_off, free, dof, tdof, rdof, rot_axis, spring, spring_offset,
                         damper, pairs, coupling_dst, rate, external, damping, diag_const,
                         coupling, data, force_scratch, work[9], work[10])
    code, it, pos = newton_kernel(s, tol, max_iter, history, handle, data, x1, q1, v, w, mass,
                                  inertia, dt, bool(False), external, damping,  # noqa: UP018
                                  damping.shape[0] > 0,   # runtime bools: see step_kernel
                                  diag_const, G, parent, child, p_a, p_b, q_off, select, nc,
                                  jrow, ptr_bj, ptr_jb, work, reuse)
    return finish_step(code, it, pos, x, q, v, w, lam, x1, q1, s, nc, jrow)
