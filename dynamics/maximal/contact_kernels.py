"""Compiled (numba) contact rows of the step system; :mod:`.contacts` holds the NumPy reference.

Every function works on one :class:`~.contacts.ContactGroup` (contacts with the same number
``m`` of friction directions) and reads the unknowns straight from the packed solution vector
``s`` (body ``i``'s ``[v₁; ω₁]`` at ``s[6i:6i+6]``, contact ``c``'s variables from row ``r0[c]``
on, in the block order ``[γ, s_φ, β (m), η (m), ψ, s_ψ]`` of :mod:`.contacts`). One call per
group replaces the dozen small NumPy calls of the reference, the fixed cost per
interior-point iteration (Brüdigam et al. 2023, §3.3-3.5 eq. 22-29, App. D).

Geometry kinds (``kind``): ``0`` body point vs the ground plane, ``1`` sphere vs the ground,
``2`` sphere vs sphere (body ``a`` and ``b``), ``3`` sphere (body ``a``) vs box (body ``b``,
half extents ``half``), ``4`` a joint limit: coordinate ``limit[c, 1]`` of joint ``limit[c, 0]``
against ``bound[c]``, the joint's constants in the rows of ``limit`` and ``bound`` (columns
``L_*``, ``B_*`` below), read by the joint kernels of :mod:`.force_kernels`. The second body
of a ground contact (and of a limit on a joint to the world) is ``-1``.

The public functions allocate their scratch (for calls from Python); the compiled contact step
calls the private ``_…_into`` versions with the scratch of :func:`contact_work`, made once per
:class:`.StepSystem`: an interior-point iteration allocates nothing.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .force_kernels import _joint_coordinates, _joint_rate_map
from .newton_kernels import _next_quaternion, _rot, _rotation_update_map

__all__ = ["velocity_maps", "contact_residual", "contact_jacobian", "distances_next",
           "contact_work", "block_refinement_residual"]

_S = (1.0, 1.0, 1.0, 2.0, 2.0, 2.0)


@njit(cache=True)
def contact_work(max_m):
    """Scratch of the ``_…_into`` kernels for groups of up to ``max_m`` friction directions:
    ``(Q, Qb, v3, v4, grad, f, dirs, lw)`` = two 3×3 rotations, (8, 3) and (2, 4) small
    vectors, the distance gradient (12), the forces ``[γ; β]`` (``1 + max_m``), the directions
    (``1 + max_m``, 3) and the joint limits' scratch (:func:`_limit_scratch`). Nothing in
    them outlives a call."""
    k = 1 + int(max_m)
    return (np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((8, 3)), np.zeros((2, 4)),
            np.zeros(12), np.zeros(k), np.zeros((k, 3)), np.zeros(_LIMIT_WORK))


# ---------------------------------------------------------------------- joint limits
# A joint limit's constants are rows of the group's ``limit`` (int) and ``bound`` (float)
# arrays (:class:`.contacts.ContactGroup`), so that the contact loops pass two arrays more,
# not the mechanism's joint arrays: every array a compiled loop unpacks costs reference
# counting in each call, measurable on the frictional sphere chains.
#: Columns of ``limit``: joint, coordinate, parent, child, translational and rotational DOF.
L_JOINT, L_COORD, L_PARENT, L_CHILD, L_TDOF, L_RDOF = range(6)
#: Columns of ``bound``: σ, bound, the middle of an angle's range, the coordinate at the
#: step's start, then the joint's ``p_a`` (3), ``p_b`` (3), ``q_off`` (4), axis (3) and the
#: limited coordinate's row of the joint's free-direction matrix (6).
B_SIGN, B_BOUND, B_MIDDLE, B_START, B_PA, B_PB, B_QOFF, B_AXIS, B_FREE = (
    0, 1, 2, 3, 4, 7, 10, 14, 17)
LIMIT_COLUMNS = (6, 23)
_LIMIT_WORK = 16 + 72 + 72 + 54 + 12 + 6 + 18


@njit(cache=True, inline="always")
def _limit_scratch(lw):
    """Views of the flat limit scratch ``lw``: ``E`` (4, 4) the ends' poses, ``R`` and ``M``
    (6×12) a rate map and its scratch, ``W`` (6, 3, 3) frames, ``Qs`` (3, 4) quaternions,
    ``c6`` (6) coordinates, ``T`` (2, 3, 3) the ends' ``∂δθ₂/∂ω₁``."""
    E = lw[0:16].reshape(4, 4)
    R = lw[16:88].reshape(6, 12)
    M = lw[88:160].reshape(6, 12)
    W = lw[160:214].reshape(6, 3, 3)
    Qs = lw[214:226].reshape(3, 4)
    c6 = lw[226:232]
    T = lw[232:250].reshape(2, 3, 3)
    return E, R, M, W, Qs, c6, T


@njit(cache=True, inline="always")
def _limit_poses(s, x, q, dt, c, limit, E, T, at_next, want_T):
    """Poses of limit ``c``'s joint ends (parent, child; the world ``x = 0, q = 1``) into
    ``E = [x_a, q_a, x_b, q_b]``: at ``(x, q)``, or with ``at_next`` at ``z₂(s)`` (eq. 11, 17),
    then with ``want_T`` each end's ``T = ∂δθ₂/∂ω₁`` (the body-frame rotation
    ``δθ₂ = 2 vec(q̄₂ ∘ δq₂)``, :func:`.newton_kernels._rotation_update_map`)."""
    for end in range(2):
        e = limit[c, L_PARENT] if end == 0 else limit[c, L_CHILD]
        xe, qe = E[2 * end, :3], E[2 * end + 1]
        if e < 0:
            for i in range(3):
                xe[i] = 0.0
            qe[0], qe[1], qe[2], qe[3] = 1.0, 0.0, 0.0, 0.0
        elif not at_next:
            for i in range(3):
                xe[i] = x[e, i]
            for i in range(4):
                qe[i] = q[e, i]
        else:
            o = 6 * e
            for i in range(3):
                xe[i] = x[e, i] + dt * s[o + i]
            ws = _next_quaternion(q[e], s[o + 3:o + 6], dt, qe)
            if want_T:
                _rotation_update_map(s[o + 3:o + 6], ws, 0.5 * dt * dt, T[end])


@njit(cache=True, inline="always")
def _limit_angle(E, bound, c):
    """The angle ``2 atan2(aᵀ v, s)`` of ``q_rel = q_off⁻¹ ∘ q_a⁻¹ ∘ q_b`` (``s >= 0``) of
    limit ``c``'s joint (one rotational degree of freedom), ends' quaternions ``E[1]``,
    ``E[3]`` (:func:`.force_kernels._joint_coordinates` written out on scalars)."""
    a0, a1, a2, a3 = E[1, 0], E[1, 1], E[1, 2], E[1, 3]
    b0, b1, b2, b3 = E[3, 0], E[3, 1], E[3, 2], E[3, 3]
    # ab = conj(a) ∘ b = (a0 b0 + a·b, a0 b - b0 a - a × b)
    s = a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3
    x = a0 * b1 - b0 * a1 - (a2 * b3 - a3 * b2)
    y = a0 * b2 - b0 * a2 - (a3 * b1 - a1 * b3)
    z = a0 * b3 - b0 * a3 - (a1 * b2 - a2 * b1)
    o0, o1 = bound[c, B_QOFF], bound[c, B_QOFF + 1]
    o2, o3 = bound[c, B_QOFF + 2], bound[c, B_QOFF + 3]
    rs = o0 * s + o1 * x + o2 * y + o3 * z
    rx = o0 * x - s * o1 - (o2 * z - o3 * y)
    ry = o0 * y - s * o2 - (o3 * x - o1 * z)
    rz = o0 * z - s * o3 - (o1 * y - o2 * x)
    if rs < 0.0:
        rs, rx, ry, rz = -rs, -rx, -ry, -rz
    return 2.0 * np.arctan2(bound[c, B_AXIS] * rx + bound[c, B_AXIS + 1] * ry
                            + bound[c, B_AXIS + 2] * rz, rs)


@njit(cache=True, inline="always")
def _limit_coordinate(c, limit, bound, E, centre_col, lw):
    """The limited coordinate of limit ``c`` at the poses ``E`` (:func:`_limit_poses`); an
    angle moved by whole turns into ``[centre - π, centre + π)``, ``centre = bound[c,
    centre_col]`` (the range's middle, or the step's start angle)."""
    if limit[c, L_COORD] >= limit[c, L_TDOF]:
        centre = bound[c, centre_col]
        d = _limit_angle(E, bound, c) - centre + np.pi
        return centre + (d - 2.0 * np.pi * np.floor(d / (2.0 * np.pi))) - np.pi
    _, _, _, W, Qs, c6, _ = _limit_scratch(lw)
    free = bound[c, B_FREE:B_FREE + 6].reshape(1, 6)
    _joint_coordinates(E[0, :3], E[1], E[2, :3], E[3], bound[c, B_PA:B_PA + 3],
                       bound[c, B_PB:B_PB + 3], bound[c, B_QOFF:B_QOFF + 4], free, 1, 0,
                       bound[c, B_AXIS:B_AXIS + 3], c6, W, Qs)
    return c6[0]


@njit(cache=True, inline="always")
def _limit_rate_row(c, limit, bound, E, lw):
    """The limited coordinate's row of the joint's rate map (:func:`.joints.rate_map`) at
    the poses ``E``: a view (12) into ``lw``, columns ``[parent; child]``."""
    _, R, M, W, _, _, _ = _limit_scratch(lw)
    free = bound[c, B_FREE:B_FREE + 6].reshape(1, 6)
    _joint_rate_map(E[0, :3], E[1], E[2, :3], E[3], bound[c, B_PB:B_PB + 3],
                    bound[c, B_QOFF:B_QOFF + 4], free, 1, limit[c, L_RDOF], R, M, W)
    return R[0]


@njit(cache=True, _nrt=False)
def _box_geometry(p, half, c, d):
    """Closest point ``c`` of the box ``|c_i| <= half_i`` to ``p`` (box frame), ``d = p - c``;
    returns the signed distance to the box surface and, inside, the face axis (else -1)."""
    inside = True
    for i in range(3):
        c[i] = min(max(p[i], -half[i]), half[i])
        d[i] = p[i] - c[i]
        if abs(p[i]) > half[i]:
            inside = False
    if not inside:
        return np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), -1
    best, axis = np.inf, 0
    for i in range(3):
        gap = half[i] - abs(p[i])
        if gap < best:
            best, axis = gap, i
    return -best, axis


@njit(cache=True, _nrt=False)
def _box_normal_local(p, half, nl, c, d):
    """Outward unit normal (box frame) of the nearest box feature to ``p``; ``c, d`` (3) are
    scratch."""
    dist, axis = _box_geometry(p, half, c, d)
    if axis < 0:
        for i in range(3):
            nl[i] = d[i] / dist
    else:
        nl[:] = 0.0
        nl[axis] = 1.0 if p[axis] >= 0.0 else -1.0
    return dist


# The limit kernels below are called, not inlined, from the contact loops: their code (a
# joint's coordinates and rate map) kept out of the contacts' hot loops.
@njit(cache=True, _nrt=False)
def _limit_velocity_map(x, q, c, b, limit, bound, P, work):
    """Row ``c`` of :func:`velocity_maps` for a joint limit (``b``: its second body, ``-1``
    for the world): ``σ`` times the coordinate's rate-map row at ``z₁ = (x, q)`` as
    ``[child; parent]``, and the start coordinate ``bound[c, B_START]``."""
    lw = work[7]
    E, _, _, _, _, _, T = _limit_scratch(lw)
    _limit_poses(x[0], x, q, 0.0, c, limit, E, T, False, False)
    row = _limit_rate_row(c, limit, bound, E, lw)
    sg = bound[c, B_SIGN]
    for i in range(6):
        P[c, 0, i] = sg * row[6 + i]
        P[c, 0, 6 + i] = sg * row[i] if b >= 0 else 0.0
    bound[c, B_START] = _limit_coordinate(c, limit, bound, E, B_MIDDLE, lw)


@njit(cache=True, _nrt=False)
def _limit_distance_next(s, x1, q1, dt, c, b, limit, bound, grad, want_grad, work):
    """:func:`_distance_next` of a joint limit: ``σ (c_i(z₂) - bound)``, the angle read from
    the step's start, and with ``want_grad`` ``σ`` times the rate-map row at ``z₂`` through
    ``∂z₂/∂ż₁`` in ``grad`` (zeroed by the caller)."""
    lw = work[7]
    E, _, _, _, _, _, T = _limit_scratch(lw)
    _limit_poses(s, x1, q1, dt, c, limit, E, T, True, want_grad)
    sg = bound[c, B_SIGN]
    phi = sg * (_limit_coordinate(c, limit, bound, E, B_START, lw) - bound[c, B_BOUND])
    if want_grad:
        row = _limit_rate_row(c, limit, bound, E, lw)
        for i in range(3):
            grad[i] = sg * dt * row[6 + i]
            grad[3 + i] = sg * (row[9] * T[1, 0, i] + row[10] * T[1, 1, i]
                                + row[11] * T[1, 2, i])
        if b >= 0:
            for i in range(3):
                grad[6 + i] = sg * dt * row[i]
                grad[9 + i] = sg * (row[3] * T[0, 0, i] + row[4] * T[0, 1, i]
                                    + row[5] * T[0, 2, i])
    return phi


@njit(cache=True, _nrt=False)
def limit_distance_now(x, q, c, limit, bound, work):
    """The signed distance of joint limit ``c`` at ``(x, q)``, its angle read about the
    middle of its range (:meth:`.ContactGroup.distance`)."""
    lw = work[7]
    E, _, _, _, _, _, T = _limit_scratch(lw)
    _limit_poses(x[0], x, q, 0.0, c, limit, E, T, False, False)
    return bound[c, B_SIGN] * (_limit_coordinate(c, limit, bound, E, B_MIDDLE, lw)
                               - bound[c, B_BOUND])


@njit(cache=True, _nrt=False)
def open_contacts(s, x1, q1, dt, body, other, kind, point, radius, radius_b, half, limit,
                  bound, r0, out, work):
    """The contact rows of a step taken without the frictionless contacts of the group:
    ``out[r0[c]] = γ = 0`` and ``out[r0[c] + 1] = s_φ = φ(z₂(s))`` (as
    :func:`distances_next`), each joint limit's start coordinate ``bound[c, B_START]`` at
    ``z₁`` set first (as :func:`velocity_maps` does; the lower and upper limit of one
    coordinate share its evaluation). Returns whether every contact is open
    (``φ(z₂) >= 0``). ``work``: :func:`contact_work`."""
    lw = work[7]
    E, _, _, _, _, _, T = _limit_scratch(lw)
    last_k, last_i, value = -1, -1, 0.0
    ok = True
    for c in range(body.shape[0]):
        if kind[c] != 4:
            phi = _distance_next(s, x1, q1, dt, c, body, other, kind, point, radius, radius_b,
                                 half, limit, bound, work[4], False, work)
        else:
            k, i = limit[c, L_JOINT], limit[c, L_COORD]
            if k != last_k or i != last_i:
                _limit_poses(s, x1, q1, dt, c, limit, E, T, False, False)
                bound[c, B_START] = _limit_coordinate(c, limit, bound, E, B_MIDDLE, lw)
                _limit_poses(s, x1, q1, dt, c, limit, E, T, True, False)
                value = _limit_coordinate(c, limit, bound, E, B_START, lw)
                last_k, last_i = k, i
            else:
                bound[c, B_START] = bound[c - 1, B_START]
            phi = bound[c, B_SIGN] * (value - bound[c, B_BOUND])
        out[r0[c]] = 0.0
        out[r0[c] + 1] = phi
        if not phi >= 0.0:
            ok = False
    return ok


@njit(cache=True)
def velocity_maps(x, q, m, body, other, kind, point, radius, radius_b, half, limit, bound, P):
    """``P`` (n, 1 + m, 12) at ``z₁``: the contact point's relative velocity map ``[P_a, P_b]``
    along the normal and the ``m`` tangent directions (see :meth:`ContactGroup.velocity_map`)."""
    _velocity_maps_into(x, q, m, body, other, kind, point, radius, radius_b, half, limit, bound,
                        P, contact_work(m))


@njit(cache=True, _nrt=False)
def _velocity_maps_into(x, q, m, body, other, kind, point, radius, radius_b, half, limit, bound,
                        P, work):
    """:func:`velocity_maps` with the scratch ``work`` of :func:`contact_work`."""
    n = body.shape[0]
    Q, Qb, v3, dirs = work[0], work[1], work[2], work[6]
    nrm, t1, t2, pa, pb, tmp, nl = v3[0], v3[1], v3[2], v3[3], v3[4], v3[5], v3[6]
    for c in range(n):
        a, b, k = body[c], other[c], kind[c]
        if k == 4:                 # a joint limit: σ × its rate-map row, and the start angle
            _limit_velocity_map(x, q, c, b, limit, bound, P, work)
            continue
        _rot(q[a], Q)
        if k == 0 or k == 1:
            nrm[0], nrm[1], nrm[2] = 0.0, 0.0, 1.0
            for i in range(3):
                pa[i] = (Q[i, 0] * point[c, 0] + Q[i, 1] * point[c, 1] + Q[i, 2] * point[c, 2]
                         if k == 0 else (-radius[c] if i == 2 else 0.0))
        elif k == 2:
            dd = 0.0
            for i in range(3):
                nrm[i] = x[a, i] - x[b, i]
                dd += nrm[i] * nrm[i]
            dd = np.sqrt(dd)
            for i in range(3):
                nrm[i] /= dd
                pa[i] = -radius[c] * nrm[i]
                pb[i] = radius_b[c] * nrm[i]
        else:
            _rot(q[b], Qb)
            for i in range(3):
                tmp[i] = 0.0
                for j in range(3):
                    tmp[i] += Qb[j, i] * (x[a, j] - x[b, j])       # box frame centre
            _box_normal_local(tmp, half[c], nl, t1, t2)
            for i in range(3):
                nrm[i] = Qb[i, 0] * nl[0] + Qb[i, 1] * nl[1] + Qb[i, 2] * nl[2]
            for i in range(3):
                pa[i] = -radius[c] * nrm[i]
                pb[i] = x[a, i] - x[b, i] - radius[c] * nrm[i]
        # tangent basis: t1 from e_x (e_y if the normal is close to e_x), t2 = n × t1
        e0 = 1.0 if abs(nrm[0]) < 0.9 else 0.0
        e1 = 1.0 - e0
        dot = e0 * nrm[0] + e1 * nrm[1]
        t1[0], t1[1], t1[2] = e0 - dot * nrm[0], e1 - dot * nrm[1], -dot * nrm[2]
        tn = np.sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2])
        for i in range(3):
            t1[i] /= tn
        t2[0] = nrm[1] * t1[2] - nrm[2] * t1[1]
        t2[1] = nrm[2] * t1[0] - nrm[0] * t1[2]
        t2[2] = nrm[0] * t1[1] - nrm[1] * t1[0]
        for i in range(3):
            dirs[0, i] = nrm[i]
        for j in range(m):
            ang = 2.0 * np.pi * j / m
            ca, sa = np.cos(ang), np.sin(ang)
            for i in range(3):
                dirs[1 + j, i] = ca * t1[i] + sa * t2[i]
        if b >= 0:
            _rot(q[b], Qb)
        for j in range(1 + m):
            d = dirs[j]
            # rotational part Qᵀ (p_w × d): d·(ω_w × p_w) with ω_w = Q ω
            cx = pa[1] * d[2] - pa[2] * d[1]
            cy = pa[2] * d[0] - pa[0] * d[2]
            cz = pa[0] * d[1] - pa[1] * d[0]
            for i in range(3):
                P[c, j, i] = d[i]
                P[c, j, 3 + i] = Q[0, i] * cx + Q[1, i] * cy + Q[2, i] * cz
            if b >= 0:
                cx = pb[1] * d[2] - pb[2] * d[1]
                cy = pb[2] * d[0] - pb[0] * d[2]
                cz = pb[0] * d[1] - pb[1] * d[0]
                for i in range(3):
                    P[c, j, 6 + i] = -d[i]
                    P[c, j, 9 + i] = -(Qb[0, i] * cx + Qb[1, i] * cy + Qb[2, i] * cz)
            else:
                for i in range(6):
                    P[c, j, 6 + i] = 0.0


@njit(cache=True, inline="always")
def _distance_next(s, x1, q1, dt, c, body, other, kind, point, radius, radius_b, half, limit,
                   bound, grad, want_grad, work):
    """``φ(z₂(ż₁))`` of contact ``c`` and, if ``want_grad``, ``∂φ/∂[ż_a; ż_b]`` in ``grad``;
    ``work``: :func:`contact_work` (its ``Q``, ``v3`` and ``v4``)."""
    a, b, k = body[c], other[c], kind[c]
    oa = 6 * a
    if want_grad:
        grad[:] = 0.0
    if k == 4:                     # a joint limit: σ (c_i(z₂) - bound), the angle from z₁'s
        return _limit_distance_next(s, x1, q1, dt, c, b, limit, bound, grad, want_grad,
                                    work)
    if k == 1:
        if want_grad:
            grad[2] = dt
        return x1[a, 2] + dt * s[oa + 2] - radius[c]
    Q, v3, v4 = work[0], work[2], work[3]
    q2, g = v4[0], v4[1]
    if k == 0:
        ws = _next_quaternion(q1[a], s[oa + 3:oa + 6], dt, q2)
        p = point[c]
        qs, vx, vy, vz = q2[0], q2[1], q2[2], q2[3]
        vp = vx * p[0] + vy * p[1] + vz * p[2]
        crz = vx * p[1] - vy * p[0]
        phi = (x1[a, 2] + dt * s[oa + 2] + (qs * qs - vx * vx - vy * vy - vz * vz) * p[2]
               + 2.0 * vz * vp + 2.0 * qs * crz)
        if want_grad:
            grad[2] = dt
            # ∂(Q(q) p)_z/∂q at q₂, times ∂q₂/∂ω₁ = (Δt/2) L(q₁) [-ωᵀ/ω̄ₛ; I] (eq. 17)
            g[0] = 2.0 * qs * p[2] + 2.0 * crz
            g[1] = -2.0 * vx * p[2] + 2.0 * vz * p[0] + 2.0 * qs * p[1]
            g[2] = -2.0 * vy * p[2] + 2.0 * vz * p[1] - 2.0 * qs * p[0]
            g[3] = 2.0 * vp
            q = q1[a]
            w = s[oa + 3:oa + 6]
            # gL = gᵀ L(q₁)
            gl0 = g[0] * q[0] + g[1] * q[1] + g[2] * q[2] + g[3] * q[3]
            gl1 = -g[0] * q[1] + g[1] * q[0] + g[2] * q[3] - g[3] * q[2]
            gl2 = -g[0] * q[2] - g[1] * q[3] + g[2] * q[0] + g[3] * q[1]
            gl3 = -g[0] * q[3] + g[1] * q[2] - g[2] * q[1] + g[3] * q[0]
            h = 0.5 * dt
            grad[3] = h * (gl1 - gl0 * w[0] / ws)
            grad[4] = h * (gl2 - gl0 * w[1] / ws)
            grad[5] = h * (gl3 - gl0 * w[2] / ws)
        return phi
    ob = 6 * b
    d, p, nl, cr = v3[0], v3[1], v3[2], v3[3]
    for i in range(3):
        d[i] = x1[a, i] + dt * s[oa + i] - x1[b, i] - dt * s[ob + i]
    if k == 2:
        dist = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        if want_grad:
            for i in range(3):
                grad[i] = dt * d[i] / dist
                grad[6 + i] = -dt * d[i] / dist
        return dist - radius[c] - radius_b[c]
    # sphere vs box: p = Q(q_b2)ᵀ d in the box frame
    ws = _next_quaternion(q1[b], s[ob + 3:ob + 6], dt, q2)
    _rot(q2, Q)
    for i in range(3):
        p[i] = Q[0, i] * d[0] + Q[1, i] * d[1] + Q[2, i] * d[2]
    dist = _box_normal_local(p, half[c], nl, v3[4], v3[5])
    if want_grad:
        # ∂φ/∂p = nl; ∂p/∂x_a = Qᵀ, ∂p/∂x_b = -Qᵀ; ∂p/∂q₂ = ∂(Q(q)ᵀ d)/∂q
        for i in range(3):
            gi = Q[i, 0] * nl[0] + Q[i, 1] * nl[1] + Q[i, 2] * nl[2]     # (Q nl)_i
            grad[i] = dt * gi
            grad[6 + i] = -dt * gi
        # Q(q)ᵀ d = Q(q^C) d; (nlᵀ Qᵀ d) is bilinear in q: gradient by the polynomial form
        # f(q) = (s² - v·v)(nl·d) + 2 (v·nl)(v·d) - 2 s nl·(v × d), with cr = d × nl
        # (so nl·(v × d) = v·(d × nl))
        qs, v = q2[0], q2[1:]
        nd = nl[0] * d[0] + nl[1] * d[1] + nl[2] * d[2]
        vn = v[0] * nl[0] + v[1] * nl[1] + v[2] * nl[2]
        vd = v[0] * d[0] + v[1] * d[1] + v[2] * d[2]
        cr[0] = d[1] * nl[2] - d[2] * nl[1]
        cr[1] = d[2] * nl[0] - d[0] * nl[2]
        cr[2] = d[0] * nl[1] - d[1] * nl[0]
        g[0] = 2.0 * qs * nd - 2.0 * (v[0] * cr[0] + v[1] * cr[1] + v[2] * cr[2])
        for i in range(3):
            g[1 + i] = -2.0 * v[i] * nd + 2.0 * nl[i] * vd + 2.0 * vn * d[i] - 2.0 * qs * cr[i]
        q = q1[b]
        w = s[ob + 3:ob + 6]
        gl0 = g[0] * q[0] + g[1] * q[1] + g[2] * q[2] + g[3] * q[3]
        gl1 = -g[0] * q[1] + g[1] * q[0] + g[2] * q[3] - g[3] * q[2]
        gl2 = -g[0] * q[2] - g[1] * q[3] + g[2] * q[0] + g[3] * q[1]
        gl3 = -g[0] * q[3] + g[1] * q[2] - g[2] * q[1] + g[3] * q[0]
        h = 0.5 * dt
        grad[9] = h * (gl1 - gl0 * w[0] / ws)
        grad[10] = h * (gl2 - gl0 * w[1] / ws)
        grad[11] = h * (gl3 - gl0 * w[2] / ws)
    return dist - radius[c]


@njit(cache=True)
def distances_next(s, x1, q1, dt, body, other, kind, point, radius, radius_b, half, limit, bound,
                   out):
    """``φ(z₂)`` of every contact of the group for the unknowns ``s``."""
    work = contact_work(0)
    for c in range(body.shape[0]):
        out[c] = _distance_next(s, x1, q1, dt, c, body, other, kind, point, radius, radius_b,
                                half, limit, bound, work[4], False, work)


@njit(cache=True)
def contact_residual(s, x1, q1, dt, barrier, m, body, other, kind, point, radius, radius_b,
                     half, limit, bound, friction, r0, P, out):
    """Contact rows (eq. 25-28 with slacks, App. D) and ``-S Pᵀ [γ; β]`` added to the body rows
    of ``out``, in place."""
    _contact_residual_into(s, x1, q1, dt, barrier, m, body, other, kind, point, radius,
                           radius_b, half, limit, bound, friction, r0, P, out, contact_work(m))


@njit(cache=True, inline="always")
def _contact_residual_into(s, x1, q1, dt, barrier, m, body, other, kind, point, radius,
                           radius_b, half, limit, bound, friction, r0, P, out, work):
    """:func:`contact_residual` with the scratch ``work`` of :func:`contact_work`."""
    grad, f = work[4], work[5]
    for c in range(body.shape[0]):
        a, b = body[c], other[c]
        r = r0[c]
        phi = _distance_next(s, x1, q1, dt, c, body, other, kind, point, radius, radius_b,
                             half, limit, bound, grad, False, work)
        g, sp = s[r], s[r + 1]
        out[r] = sp - phi
        out[r + 1] = g * sp - barrier
        f[0] = g
        if m:
            psi, spsi = s[r + 2 + 2 * m], s[r + 3 + 2 * m]
            bsum = 0.0
            for j in range(m):
                beta, eta = s[r + 2 + j], s[r + 2 + m + j]
                f[1 + j] = beta
                bsum += beta
                vel = 0.0
                for i in range(6):
                    vel += P[c, 1 + j, i] * s[6 * a + i]
                if b >= 0:
                    for i in range(6):
                        vel += P[c, 1 + j, 6 + i] * s[6 * b + i]
                out[r + 2 + j] = vel + psi - eta
                out[r + 2 + m + j] = beta * eta - barrier
            out[r + 2 + 2 * m] = psi * spsi - barrier
            out[r + 3 + 2 * m] = spsi - friction[c] * g + bsum
        for i in range(6):
            acc = 0.0
            for j in range(1 + m):
                acc += P[c, j, i] * f[j]
            out[6 * a + i] -= _S[i] * acc
        if b >= 0:
            for i in range(6):
                acc = 0.0
                for j in range(1 + m):
                    acc += P[c, j, 6 + i] * f[j]
                out[6 * b + i] -= _S[i] * acc


@njit(cache=True)
def contact_jacobian(s, x1, q1, dt, m, body, other, kind, point, radius, radius_b, half, limit,
                     bound, friction, r0, P, diag_ptr, bc_a, cb_a, bc_b, cb_b, data):
    """Contact blocks of ``F`` written into the BlockMatrix buffer ``data``: the contact's
    diagonal block (``k×k``), body-contact ``-S Pᵀ`` (``6×k``) and contact-body
    ``∂(rows)/∂ż`` (``k×6``) per body, all row-major at the given pointers."""
    _contact_jacobian_into(s, x1, q1, dt, m, body, other, kind, point, radius, radius_b, half,
                           limit, bound, friction, r0, P, diag_ptr, bc_a, cb_a, bc_b, cb_b,
                           data, True, contact_work(m))


@njit(cache=True, inline="always")
def _contact_jacobian_into(s, x1, q1, dt, m, body, other, kind, point, radius, radius_b, half,
                           limit, bound, friction, r0, P, diag_ptr, bc_a, cb_a, bc_b, cb_b,
                           data, constant, work):
    """:func:`contact_jacobian` with the scratch ``work`` of :func:`contact_work`. With
    ``constant`` false only the entries that depend on ``s`` are written (the complementarity
    entries of the diagonal block and the distance gradient row ``∂φ/∂ż``): the rest (the
    diagonal block's constants and zeros, ``-S Pᵀ`` and the ``P`` rows, fixed during a step as
    ``P`` is) are taken to be in ``data`` already, from a call with ``constant`` in the same
    step."""
    k = 2 if m == 0 else 4 + 2 * m
    grad = work[4]
    for c in range(body.shape[0]):
        b = other[c]
        r = r0[c]
        _distance_next(s, x1, q1, dt, c, body, other, kind, point, radius, radius_b, half, limit,
                       bound, grad, True, work)
        D = diag_ptr[c]
        if constant:
            for i in range(k * k):
                data[D + i] = 0.0
            data[D + 1] = 1.0
            if m:
                for j in range(m):
                    rowf = D + (2 + j) * k
                    data[rowf + 2 + m + j] = -1.0
                    data[rowf + 2 + 2 * m] = 1.0
                rs = D + (3 + 2 * m) * k
                data[rs + 3 + 2 * m] = 1.0
                data[rs] = -friction[c]
                for j in range(m):
                    data[rs + 2 + j] = 1.0
        g, sp = s[r], s[r + 1]
        data[D + k] = sp
        data[D + k + 1] = g
        if m:
            for j in range(m):
                rowc = D + (2 + m + j) * k
                data[rowc + 2 + j] = s[r + 2 + m + j]
                data[rowc + 2 + m + j] = s[r + 2 + j]
            rp = D + (2 + 2 * m) * k
            data[rp + 2 + 2 * m] = s[r + 3 + 2 * m]
            data[rp + 3 + 2 * m] = s[r + 2 + 2 * m]
        for end in range(2):
            if end == 1 and b < 0:
                break
            off = 6 * end
            pb = bc_a[c] if end == 0 else bc_b[c]
            pc = cb_a[c] if end == 0 else cb_b[c]
            if not constant:
                for i in range(6):
                    data[pc + i] = -grad[off + i]
                continue
            for i in range(6):
                for j in range(k):
                    v = 0.0
                    if j == 0:
                        v = -_S[i] * P[c, 0, off + i]
                    elif 2 <= j < 2 + m:
                        v = -_S[i] * P[c, j - 1, off + i]
                    data[pb + i * k + j] = v
            for rr in range(k):
                for i in range(6):
                    v = 0.0
                    if rr == 0:
                        v = -grad[off + i]
                    elif 2 <= rr < 2 + m:
                        v = P[c, rr - 1, off + i]
                    data[pc + rr * 6 + i] = v


# ---------------------------------------------------------------------- interior-point helpers
@njit(cache=True, _nrt=False)
def coo_matvec(rows, cols, data, x, out):
    """``out = A x`` for the BlockMatrix buffer ``data`` with entry coordinates ``rows, cols``
    (the BlockMatrix's own layout: no copy into a CSR matrix per Jacobian)."""
    out[:] = 0.0
    for k in range(data.shape[0]):
        out[rows[k]] += data[k] * x[cols[k]]


@njit(cache=True, inline="always")
def _max_abs_nan(out):
    """``max |out_i|``, NaN if some entry is NaN."""
    big = 0.0
    for i in range(out.shape[0]):
        a = abs(out[i])
        if a != a:
            return a
        if a > big:
            big = a
    return big


@njit(cache=True, _nrt=False)
def refinement_residual(rows, cols, data, x, rhs, out):
    """``out = A x - rhs`` and its max-norm (iterative refinement)."""
    for i in range(out.shape[0]):
        out[i] = -rhs[i]
    for k in range(data.shape[0]):
        out[rows[k]] += data[k] * x[cols[k]]
    return _max_abs_nan(out)


@njit(cache=True, _nrt=False)
def block_refinement_residual(blocks, data, x, rhs, out):
    """:func:`refinement_residual` by blocks: ``blocks = (row0, col0, nrows, ncols)`` of the
    BlockMatrix's blocks in the order of ``data`` (each row-major, one after another, as
    :meth:`graphsolve.BlockMatrix.entry_coordinates` lays them out). The products are added
    to each row in the same order as there (the same floating-point result) without reading
    two coordinates per entry."""
    row0, col0, nrows, ncols = blocks
    for i in range(out.shape[0]):
        out[i] = -rhs[i]
    k = 0
    for b in range(row0.shape[0]):
        r0, c0, nc = row0[b], col0[b], ncols[b]
        for r in range(nrows[b]):
            acc = out[r0 + r]
            for c in range(nc):
                acc += data[k + c] * x[c0 + c]
            out[r0 + r] = acc
            k += nc
    return _max_abs_nan(out)


@njit(cache=True, _nrt=False)
def step_to_boundary(s, ds, positive, tau):
    """Largest ``α <= 1`` with ``u + α Δu >= (1 - τ) u`` for the positive variables ``u =
    s[positive]`` (fraction to the boundary, Nocedal & Wright eq. 19.9)."""
    alpha = 1.0
    for k in range(positive.shape[0]):
        i = positive[k]
        if ds[i] < 0.0:
            a = -tau * s[i] / ds[i]
            if a < alpha:
                alpha = a
    return alpha


@njit(cache=True, _nrt=False)
def mean_product(s, ds, alpha, ia, ib):
    """Mean of the complementarity products ``(a + α Δa)(b + α Δb)`` (``μ`` of N&W §14.2)."""
    acc = 0.0
    for k in range(ia.shape[0]):
        acc += (s[ia[k]] + alpha * ds[ia[k]]) * (s[ib[k]] + alpha * ds[ib[k]])
    return acc / ia.shape[0]


@njit(cache=True, _nrt=False)
def corrector_rhs(f, target, row, da_idx, db_idx, d_aff, rhs_centre, rhs_corr):
    """Right-hand sides of the centring step ``-f_σμ`` and of Mehrotra's corrector
    ``-f_σμ - Δa∘Δb`` (N&W eq. 14.35); returns ``‖f_σμ‖₂``."""
    for i in range(f.shape[0]):
        rhs_centre[i] = -f[i]
    for k in range(row.shape[0]):
        rhs_centre[row[k]] += target
    acc = 0.0
    for i in range(f.shape[0]):
        acc += rhs_centre[i] * rhs_centre[i]
        rhs_corr[i] = rhs_centre[i]
    for k in range(row.shape[0]):
        rhs_corr[row[k]] -= d_aff[da_idx[k]] * d_aff[db_idx[k]]
    return np.sqrt(acc)
