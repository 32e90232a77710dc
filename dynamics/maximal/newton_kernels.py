"""numba versions of the per-iteration residual and Jacobian of :mod:`.step_system`, the
Newton iteration and the whole gravity-only step (with joint springs, dampers and forces:
:mod:`.force_kernels`).

Same equations as the NumPy reference (:meth:`StepSystem.residual_reference`,
:meth:`StepSystem.jacobian_reference`), written as loops over bodies and joints so one Newton
iteration makes no Python call per body or joint; the tests compare the two.

What a step computes once is not recomputed: every body's rotation matrix once per
configuration (:func:`_configuration`, :func:`_rotations`), not once per joint end; the
constraint derivatives in closed form in the rotational coordinates (:func:`_joint_derivatives`:
``[∂g/∂x | ∂g/∂ʳq]``, the same 6×6 blocks for ``G`` at ``z₁`` and for the Newton matrix at
``z₂``, where ``∂q₂/∂ω₁`` reduces to a 3×3 factor per body, :func:`_body_blocks`) and only
where a Jacobian is assembled (not at every line-search trial); the blocks ``-Gᵀ``, constant
during a step, written once per Newton solve. The scratch comes from :func:`newton_work`
(owned by :class:`.StepSystem`): a step allocates nothing.
"""
from __future__ import annotations

import enum

import numpy as np
from numba import njit

from graphsolve.lowlevel import STATUS_NONFINITE, refactor_solve, solve_factored

# Compiled without fastmath flags, as graphsolve's kernels (graphsolve.kernels.blocks says why).


class NewtonStatus(enum.IntEnum):
    """The ``code`` that :func:`newton_kernel` and :func:`step_kernel` return."""

    CONVERGED = 0
    ITERATION_CAP = 1            # no convergence within max_iter iterations
    LINE_SEARCH_FAILED = 2
    NONFINITE = 3                # the Newton matrix became non-finite
    SINGULAR_PIVOT = 4           # at ``position`` of the elimination order
    RATE_LIMIT = 5               # body ``position`` has |ω| >= 2/Δt (whole-step kernels only)


# plain ints for the compiled kernels (numba folds module-level ints as constants)
_CONVERGED = int(NewtonStatus.CONVERGED)
_ITERATION_CAP = int(NewtonStatus.ITERATION_CAP)
_LINE_SEARCH_FAILED = int(NewtonStatus.LINE_SEARCH_FAILED)
_NONFINITE = int(NewtonStatus.NONFINITE)
_SINGULAR_PIVOT = int(NewtonStatus.SINGULAR_PIVOT)
_RATE_LIMIT = int(NewtonStatus.RATE_LIMIT)

#: The simplified-Newton rule of :func:`newton_kernel` (and of the Python Newton loop,
#: ``Simulation._newton_loop``): after an iteration that reduced the residual's max-norm by at
#: least this factor, the next iteration first tries the last factorization of the Newton
#: matrix (a chord step ``s - F(s_old)⁻¹ f(s)``, full length), and keeps it if it reaches the
#: tolerance or (unless it is the last iteration ``max_iter`` allows) reduces the residual by
#: this factor again; otherwise that iteration is a full Newton iteration from the same ``s``.
CHORD_RATE = 1e-2

__all__ = ["residual_kernel", "jacobian_kernel", "constraint_jacobian_kernel", "newton_kernel",
           "step_kernel", "newton_work"]


@njit(cache=True, error_model="numpy", inline="always")
def _select_mm(S, m, B, C):
    """``C = S @ B`` for a joint's selection matrix ``S`` (6×6, rows ``m:`` zero): only the
    first ``m`` rows are formed and zero entries skipped (axis-aligned joints select rows)."""
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[i, j] = 0.0
    for i in range(m):
        for t in range(6):
            f = S[i, t]
            if f != 0.0:
                for j in range(B.shape[1]):
                    C[i, j] += f * B[t, j]


@njit(cache=True, error_model="numpy", inline="always")
def _select_row(S, i, B):
    """Row ``i`` of ``S @ B`` for a 6-column ``B``, as six scalars (each summed over ``t`` in
    order, zero entries of ``S`` skipped: axis-aligned joints select rows)."""
    c0 = c1 = c2 = c3 = c4 = c5 = 0.0
    for t in range(6):
        f = S[i, t]
        if f != 0.0:
            c0 += f * B[t, 0]
            c1 += f * B[t, 1]
            c2 += f * B[t, 2]
            c3 += f * B[t, 3]
            c4 += f * B[t, 4]
            c5 += f * B[t, 5]
    return c0, c1, c2, c3, c4, c5


@njit(cache=True, error_model="numpy", inline="always")
def _select_rows6(S, B, C):
    """``C = S @ B`` for 6×6 ``S``, ``B`` and ``C``: each row summed in scalars
    (:func:`_select_row`, the sums of :func:`_select_mm`) and stored once (stores through
    ``C`` would otherwise make LLVM reload ``B``)."""
    for i in range(6):
        c0, c1, c2, c3, c4, c5 = _select_row(S, i, B)
        C[i, 0] = c0
        C[i, 1] = c1
        C[i, 2] = c2
        C[i, 3] = c3
        C[i, 4] = c4
        C[i, 5] = c5


@njit(cache=True, error_model="numpy", inline="always")
def _column_sums(A, s, r0, m):
    """``A[:m]ᵀ s[r0:r0 + m]`` for a 6-column ``A``, as six scalars (each summed over the rows
    in order)."""
    c0 = c1 = c2 = c3 = c4 = c5 = 0.0
    for r in range(m):
        f = s[r0 + r]
        c0 += A[r, 0] * f
        c1 += A[r, 1] * f
        c2 += A[r, 2] * f
        c3 += A[r, 3] * f
        c4 += A[r, 4] * f
        c5 += A[r, 5] * f
    return c0, c1, c2, c3, c4, c5


@njit(cache=True, error_model="numpy", inline="always")
def _sub6(out, o, c0, c1, c2, c3, c4, c5):
    """``out[o:o + 6] -= (c0, ..., c5)``."""
    out[o] -= c0
    out[o + 1] -= c1
    out[o + 2] -= c2
    out[o + 3] -= c3
    out[o + 4] -= c4
    out[o + 5] -= c5


@njit(cache=True, error_model="numpy", inline="always")
def _neg_transpose(data, ptr, Gk, m):
    """``data[ptr:ptr + 6m] = -Gkᵀ`` (6×m, row-major) of the first ``m`` rows of ``Gk``."""
    for r in range(6):
        for c in range(m):
            data[ptr + r * m + c] = -Gk[c, r]


@njit(cache=True, error_model="numpy", inline="always")
def _mv(A, x, y):
    """``y = A @ x``."""
    for i in range(A.shape[0]):
        acc = 0.0
        for t in range(A.shape[1]):
            acc += A[i, t] * x[t]
        y[i] = acc


@njit(cache=True, error_model="numpy", inline="always")
def _mtv(A, x, y):
    """``y = Aᵀ @ x``."""
    for i in range(A.shape[1]):
        acc = 0.0
        for t in range(A.shape[0]):
            acc += A[t, i] * x[t]
        y[i] = acc


@njit(cache=True, error_model="numpy", inline="always")
def _rot(q, Q):
    """Rotation matrix of unit quaternion ``q`` (eq. A.6) into ``Q``."""
    s, a, b, c = q[0], q[1], q[2], q[3]
    Q[0, 0] = s * s + a * a - b * b - c * c
    Q[0, 1] = 2.0 * (a * b - s * c)
    Q[0, 2] = 2.0 * (a * c + s * b)
    Q[1, 0] = 2.0 * (a * b + s * c)
    Q[1, 1] = s * s - a * a + b * b - c * c
    Q[1, 2] = 2.0 * (b * c - s * a)
    Q[2, 0] = 2.0 * (a * c - s * b)
    Q[2, 1] = 2.0 * (b * c + s * a)
    Q[2, 2] = s * s - a * a - b * b + c * c


@njit(cache=True, error_model="numpy", inline="always")
def _ends(k, parent, child, x, q, world_x, world_q):
    a = parent[k]
    if a < 0:
        return world_x, world_q, x[child[k]], q[child[k]]
    return x[a], q[a], x[child[k]], q[child[k]]


@njit(cache=True, error_model="numpy")
def _world():
    wq = np.zeros(4)
    wq[0] = 1.0
    return np.zeros(3), wq


def newton_work(n_bodies: int, n_joints: int, n_unknowns: int) -> tuple:
    """The scratch arrays of the compiled step kernels (owned by :class:`.StepSystem`, made
    once): nothing in a step's residual, Jacobian or setup allocates.

    ``(f, ft, trial, x1, q1, x2, q2, R, K, world_x, world_q, world_R, B, small,
    no_damping)``: the residual at ``s`` and at the line search's trial, the trial (``N``);
    ``z₁`` of the update rules; ``z₂(s)`` with ``R[i] = Q(q₂ᵢ)`` (``Q(q₁ᵢ)`` in the setup);
    ``K`` (nb, 3, 3) the per-body factor of ``∂q₂/∂ω₁`` (:func:`_body_blocks`); the world's
    pose; ``B`` (2, 6, 6) one joint's derivatives per end (:func:`_joint_derivatives`);
    ``small`` (3, 6) one joint's ``g``, lever and ``p`` (:func:`_joint_geometry`); an empty
    damper array. (The kernels pass this tuple by value: each further member costs every
    call; a 16th, the force scratch, made a pendulum step 1.7× slower.)
    """
    N, nb = n_unknowns, n_bodies
    world_q = np.zeros(4)
    world_q[0] = 1.0
    return (np.zeros(N), np.zeros(N), np.zeros(N), np.zeros((nb, 3)), np.zeros((nb, 4)),
            np.zeros((nb, 3)), np.zeros((nb, 4)), np.zeros((nb, 3, 3)), np.zeros((nb, 3, 3)),
            np.zeros(3), world_q, np.eye(3), np.zeros((2, 6, 6)), np.zeros((3, 6)),
            np.zeros((0, 12, 12)))


@njit(cache=True, error_model="numpy", inline="always")
def _omega_s(w, dt):
    arg = (2.0 / dt) ** 2 - (w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    return np.sqrt(arg) if arg > 0.0 else np.nan


@njit(cache=True, error_model="numpy", inline="always")
def _next_quaternion(q, w, dt, out):
    """``q₂ = (Δt/2) L(q₁) [ω̄ₛ; ω₁]`` (eq. 17) written out; returns ``ω̄ₛ`` (NaN if
    ``|ω| >= 2/Δt``)."""
    ws = _omega_s(w, dt)
    h = 0.5 * dt
    a0, a1, a2, a3 = q[0], q[1], q[2], q[3]     # (scalars: out may alias q and w)
    b0, b1, b2 = w[0], w[1], w[2]
    out[0] = h * (a0 * ws - a1 * b0 - a2 * b1 - a3 * b2)
    out[1] = h * (a0 * b0 + a1 * ws + a2 * b2 - a3 * b1)
    out[2] = h * (a0 * b1 + a2 * ws + a3 * b0 - a1 * b2)
    out[3] = h * (a0 * b2 + a3 * ws + a1 * b1 - a2 * b0)
    return ws


@njit(cache=True, error_model="numpy", _nrt=False)
def _configuration(s, x1, q1, dt, x2, q2, R):
    """``z₂(s)``: ``x₂ = x₁ + Δt v₁``, ``q₂`` of eq. (17) and ``R[i] = Q(q₂ᵢ)`` of every body
    (NaN where ``|ω₁| >= 2/Δt``)."""
    for i in range(x1.shape[0]):
        for c in range(3):
            x2[i, c] = x1[i, c] + dt * s[6 * i + c]
        _next_quaternion(q1[i], s[6 * i + 3:6 * i + 6], dt, q2[i])
        _rot(q2[i], R[i])


@njit(cache=True, error_model="numpy", _nrt=False)
def _rotations(q, R):
    """``R[i] = Q(q[i])`` for every body."""
    for i in range(q.shape[0]):
        _rot(q[i], R[i])


@njit(cache=True, error_model="numpy", inline="always")
def _end_frames(k, parent, child, x, q, R, world_x, world_q, world_R):
    """Pose ``(x, q, Q(q))`` of joint ``k``'s parent (the world's for ``parent < 0``) and
    child."""
    a, b = parent[k], child[k]
    if a < 0:
        return world_x, world_q, world_R, x[b], q[b], R[b]
    return x[a], q[a], R[a], x[b], q[b], R[b]


@njit(cache=True, error_model="numpy", inline="always")
def _conj_mul(a, b):
    """``a* ∘ b`` (eq. A.2c with ``a* = (a₀, -a_v)``) as four scalars."""
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3],
            a[0] * b[1] - b[0] * a[1] - a[2] * b[3] + a[3] * b[2],
            a[0] * b[2] - b[0] * a[2] - a[3] * b[1] + a[1] * b[3],
            a[0] * b[3] - b[0] * a[3] - a[1] * b[2] + a[2] * b[1])


@njit(cache=True, error_model="numpy", inline="always")
def _joint_geometry_scalars(xa, qa, Qa, xb, qb, Qb, pb, qoff):
    """:func:`_joint_geometry` as the seven scalars ``(ℓ₀, ℓ₁, ℓ₂, p₀, p₁, p₂, p₃)``."""
    r0 = xb[0] + Qb[0, 0] * pb[0] + Qb[0, 1] * pb[1] + Qb[0, 2] * pb[2] - xa[0]
    r1 = xb[1] + Qb[1, 0] * pb[0] + Qb[1, 1] * pb[1] + Qb[1, 2] * pb[2] - xa[1]
    r2 = xb[2] + Qb[2, 0] * pb[0] + Qb[2, 1] * pb[1] + Qb[2, 2] * pb[2] - xa[2]
    l0 = Qa[0, 0] * r0 + Qa[1, 0] * r1 + Qa[2, 0] * r2
    l1 = Qa[0, 1] * r0 + Qa[1, 1] * r1 + Qa[2, 1] * r2
    l2 = Qa[0, 2] * r0 + Qa[1, 2] * r1 + Qa[2, 2] * r2
    e0, e1, e2, e3 = _conj_mul(qa, qb)
    o0, o1, o2, o3 = qoff[0], qoff[1], qoff[2], qoff[3]
    return (l0, l1, l2,
            o0 * e0 + o1 * e1 + o2 * e2 + o3 * e3,
            o0 * e1 - e0 * o1 - o2 * e3 + o3 * e2,
            o0 * e2 - e0 * o2 - o3 * e1 + o1 * e3,
            o0 * e3 - e0 * o3 - o1 * e2 + o2 * e1)


@njit(cache=True, error_model="numpy", inline="always")
def _joint_geometry(xa, qa, Qa, xb, qb, Qb, pb, qoff, lever, p):
    """A joint's lever ``ℓ = Q_aᵀ (x_b + Q_b p_b - x_a)`` (``g_T = ℓ - p_a``, B.1) and the
    relative rotation ``p = q_off* ∘ q_a* ∘ q_b`` (``g_R = p_v``, B.3: ``V L(q_off)ᵀ L(q_a)ᵀ q_b``
    with ``L(q)ᵀ = L(q*)``), into ``lever`` (3) and ``p`` (4)."""
    l0, l1, l2, p0, p1, p2, p3 = _joint_geometry_scalars(xa, qa, Qa, xb, qb, Qb, pb, qoff)
    lever[0] = l0
    lever[1] = l1
    lever[2] = l2
    p[0] = p0
    p[1] = p1
    p[2] = p2
    p[3] = p3


@njit(cache=True, error_model="numpy", inline="always")
def _joint_derivatives(Qa, Qb, pb, qoff, lever, p, B):
    """``B[e] = [∂g/∂x_e | ∂g/∂ʳq_e]`` (6×6) of a joint's ``g = [g_T; g_R]`` for its parent
    (``e = 0``) and child (``e = 1``), from :func:`_joint_geometry`'s ``lever`` and ``p``.

    ``∂ʳq`` is the derivative along ``q ∘ [1; v]`` (``∂g/∂q · L(q) H``, eq. A.8), in closed
    form: ``Q(q ∘ [1; v]) = Q(q) (I + 2[v]×) + O(v²)`` gives ``∂g_T/∂ʳq_a = 2[ℓ]×`` and
    ``∂g_T/∂ʳq_b = -2 Q_aᵀ Q_b [p_b]×``; ``g_R`` is the vector part of ``p ∘ [1; v]``
    (child), resp. of ``q_off* ∘ [1; -v] ∘ q_a* ∘ q_b = p - [0; Q(q_off)ᵀ v] ∘ p`` (parent):
    ``∂g_R/∂ʳq_b = p₀ I + [p_v]×``, ``∂g_R/∂ʳq_a = -(p₀ I - [p_v]×) Q(q_off)ᵀ``.
    ``∂g_T/∂x_a = -Q_aᵀ = -∂g_T/∂x_b``; ``g_R`` does not depend on the positions.
    """
    for e in range(2):
        for i in range(3, 6):
            for j in range(3):
                B[e, i, j] = 0.0
    # Q_b and p_b in scalars (stores into B, which may alias them, would make LLVM reload
    # them for every row)
    b00, b01, b02 = Qb[0, 0], Qb[0, 1], Qb[0, 2]
    b10, b11, b12 = Qb[1, 0], Qb[1, 1], Qb[1, 2]
    b20, b21, b22 = Qb[2, 0], Qb[2, 1], Qb[2, 2]
    c0, c1, c2 = pb[0], pb[1], pb[2]
    for i in range(3):
        a0, a1, a2 = Qa[0, i], Qa[1, i], Qa[2, i]
        B[0, i, 0] = -a0
        B[0, i, 1] = -a1
        B[0, i, 2] = -a2
        B[1, i, 0] = a0
        B[1, i, 1] = a1
        B[1, i, 2] = a2
        # -2 (Q_aᵀ Q_b)_i × p_b: row i of -2 Q_aᵀ Q_b [p_b]×
        ab0 = a0 * b00 + a1 * b10 + a2 * b20
        ab1 = a0 * b01 + a1 * b11 + a2 * b21
        ab2 = a0 * b02 + a1 * b12 + a2 * b22
        B[1, i, 3] = -2.0 * (ab1 * c2 - ab2 * c1)
        B[1, i, 4] = -2.0 * (ab2 * c0 - ab0 * c2)
        B[1, i, 5] = -2.0 * (ab0 * c1 - ab1 * c0)
    l0, l1, l2 = 2.0 * lever[0], 2.0 * lever[1], 2.0 * lever[2]
    B[0, 0, 3] = 0.0                                   # 2[ℓ]×
    B[0, 0, 4] = -l2
    B[0, 0, 5] = l1
    B[0, 1, 3] = l2
    B[0, 1, 4] = 0.0
    B[0, 1, 5] = -l0
    B[0, 2, 3] = -l1
    B[0, 2, 4] = l0
    B[0, 2, 5] = 0.0
    p0, p1, p2, p3 = p[0], p[1], p[2], p[3]
    B[1, 3, 3] = p0                                    # p₀ I + [p_v]×
    B[1, 3, 4] = -p3
    B[1, 3, 5] = p2
    B[1, 4, 3] = p3
    B[1, 4, 4] = p0
    B[1, 4, 5] = -p1
    B[1, 5, 3] = -p2
    B[1, 5, 4] = p1
    B[1, 5, 5] = p0
    # -(p₀ I - [p_v]×) Q(q_off)ᵀ: -B[1]ᵀ Q(q_off)ᵀ = -(Q(q_off) B[1])ᵀ
    s, a, b, c = qoff[0], qoff[1], qoff[2], qoff[3]
    o00 = s * s + a * a - b * b - c * c
    o01 = 2.0 * (a * b - s * c)
    o02 = 2.0 * (a * c + s * b)
    o10 = 2.0 * (a * b + s * c)
    o11 = s * s - a * a + b * b - c * c
    o12 = 2.0 * (b * c - s * a)
    o20 = 2.0 * (a * c - s * b)
    o21 = 2.0 * (b * c + s * a)
    o22 = s * s - a * a - b * b + c * c
    for j in range(3):
        m0, m1, m2 = B[1, 3, 3 + j], B[1, 4, 3 + j], B[1, 5, 3 + j]
        B[0, 3 + j, 3] = -(o00 * m0 + o01 * m1 + o02 * m2)
        B[0, 3 + j, 4] = -(o10 * m0 + o11 * m1 + o12 * m2)
        B[0, 3 + j, 5] = -(o20 * m0 + o21 * m1 + o22 * m2)


@njit(cache=True, error_model="numpy")
def residual_kernel(s, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
                    has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow, work):
    """``f(s)`` of eq. (30a); see ``StepSystem.residual_reference``. ``work``:
    :func:`newton_work`; the result is a new array."""
    out = np.empty(s.shape[0])
    _residual(s, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
              has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow, work, out)
    return out


@njit(cache=True, error_model="numpy", _nrt=False)
def _residual(s, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
              has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow, work, out):
    """:func:`residual_kernel` into ``out``; ``z₂(s)`` goes to ``work``'s ``x2, q2, R``."""
    _, _, _, _, _, x2, q2, R, _, world_x, world_q, world_R, _, _, _ = work
    nb = x1.shape[0]
    nj = parent.shape[0]
    for i in range(nb):
        o = 6 * i
        J = inertia[i]
        if projection:
            for c in range(3):
                out[o + c] = mass[i] * (s[o + c] - v0[i, c])
            d0, d1, d2 = s[o + 3] - w0[i, 0], s[o + 4] - w0[i, 1], s[o + 5] - w0[i, 2]
            for c in range(3):
                out[o + 3 + c] = J[c, 0] * d0 + J[c, 1] * d1 + J[c, 2] * d2
        else:
            w1 = s[o + 3:o + 6]
            a0, a1, a2 = w1[0], w1[1], w1[2]
            b0, b1, b2 = w0[i, 0], w0[i, 1], w0[i, 2]
            j0 = J[0, 0] * a0 + J[0, 1] * a1 + J[0, 2] * a2           # J ω₁
            j1 = J[1, 0] * a0 + J[1, 1] * a1 + J[1, 2] * a2
            j2 = J[2, 0] * a0 + J[2, 1] * a1 + J[2, 2] * a2
            k0 = J[0, 0] * b0 + J[0, 1] * b1 + J[0, 2] * b2           # J ω₀
            k1 = J[1, 0] * b0 + J[1, 1] * b1 + J[1, 2] * b2
            k2 = J[2, 0] * b0 + J[2, 1] * b1 + J[2, 2] * b2
            s1 = _omega_s(w1, dt)
            s0 = _omega_s(w0[i], dt)
            for c in range(3):
                out[o + c] = mass[i] * (s[o + c] - v0[i, c]) / dt
            out[o + 3] = s1 * j0 + (a1 * j2 - a2 * j1) - s0 * k0 + (b1 * k2 - b2 * k1)
            out[o + 4] = s1 * j1 + (a2 * j0 - a0 * j2) - s0 * k1 + (b2 * k0 - b0 * k2)
            out[o + 5] = s1 * j2 + (a0 * j1 - a1 * j0) - s0 * k2 + (b0 * k1 - b1 * k0)
        for c in range(6):
            out[o + c] -= external[i, c] * (2.0 if c >= 3 else 1.0)
    for k in range(nj):
        a, b = parent[k], child[k]
        if has_damping:             # -diag(1, 2) W of the damper wrench W = -d RᵀR ż₁
            Dk = damping[k]
            for c in range(12):
                acc = 0.0
                if a >= 0:
                    for t in range(6):
                        acc += Dk[c, t] * s[6 * a + t]
                for t in range(6):
                    acc += Dk[c, 6 + t] * s[6 * b + t]
                body = a if c < 6 else b
                if body >= 0:
                    out[6 * body + c % 6] += (2.0 if c % 6 >= 3 else 1.0) * acc
        m = nc[k]
        if m == 0:
            continue
        r0 = jrow[k]
        # Gₑᵀ λ of both ends in scalars, stored once
        Ga, Gb = G[0, k], G[1, k]
        a0, a1, a2, a3, a4, a5 = _column_sums(Ga, s, r0, m)
        b0, b1, b2, b3, b4, b5 = _column_sums(Gb, s, r0, m)
        if a >= 0:
            _sub6(out, 6 * a, a0, a1, a2, a3, a4, a5)
        _sub6(out, 6 * b, b0, b1, b2, b3, b4, b5)
    _configuration(s, x1, q1, dt, x2, q2, R)
    for k in range(nj):
        m = nc[k]
        if m == 0:
            continue
        xa, qa, Qa, xb, qb, Qb = _end_frames(k, parent, child, x2, q2, R, world_x, world_q,
                                       world_R)
        # g = [ℓ - p_a; p_v] in scalars (stores into out, which may alias the poses, would
        # make LLVM reload them), then S g row by row
        l0, l1, l2, _, p1, p2, p3 = _joint_geometry_scalars(xa, qa, Qa, xb, qb, Qb, p_b[k],
                                                           q_off[k])
        g0, g1, g2 = l0 - p_a[k, 0], l1 - p_a[k, 1], l2 - p_a[k, 2]
        S = select[k]
        r0 = jrow[k]
        for r in range(m):              # (summed from 0.0 in t order, as a loop would)
            out[r0 + r] = (((((0.0 + S[r, 0] * g0) + S[r, 1] * g1) + S[r, 2] * g2)
                            + S[r, 3] * p1) + S[r, 4] * p2) + S[r, 5] * p3


@njit(cache=True, error_model="numpy", _nrt=False)
def jacobian_kernel(s, data, x1, q1, mass, inertia, dt, projection, diag_const, G, parent,
                    child, p_a, p_b, q_off, select, nc, ptr_bj, ptr_jb, work):
    """Write ``F = ∂f/∂s`` (eq. 32) into the flat BlockMatrix buffer ``data``; ``work``:
    :func:`newton_work`."""
    _jacobian(s, data, x1, q1, mass, inertia, dt, projection, diag_const, G, parent, child,
              p_a, p_b, q_off, select, nc, ptr_bj, ptr_jb, work, True)


@njit(cache=True, error_model="numpy", inline="always")
def _body_blocks(s, data, mass, inertia, dt, projection, diag_const, K):
    """The body diagonal blocks of ``F`` into ``data`` and the factor ``K`` of ``∂q₂/∂ω₁`` of
    every body.

    ``q₂ = q₁ ∘ u`` with the unit ``u = (Δt/2)[ω̄ₛ; ω₁]`` (eq. 17), so ``∂q₂/∂ω₁ =
    L(q₁) (Δt/2)[-ω₁ᵀ/ω̄ₛ; I] = L(q₂) L(u*) (Δt/2)[-ω₁ᵀ/ω̄ₛ; I] = L(q₂) H K`` with
    ``K = (Δt/2)² (ω̄ₛ I + ω₁ω₁ᵀ/ω̄ₛ - [ω₁]×)`` (the first row of ``L(u*)(…)`` vanishes):
    ``∂g/∂ω₁ = ∂g/∂ʳq₂ K``.
    """
    for i in range(mass.shape[0]):
        o = 36 * i
        J = inertia[i]
        Di = diag_const[i]
        for r in range(6):
            for c in range(6):
                data[o + 6 * r + c] = Di[r, c]
        w = s[6 * i + 3:6 * i + 6]
        ws = _omega_s(w, dt)
        w0, w1, w2 = w[0], w[1], w[2]
        if projection:
            for c in range(3):
                data[o + 7 * c] += mass[i]
            for r in range(3):
                for c in range(3):
                    data[o + 6 * (3 + r) + 3 + c] += J[r, c]
        else:
            j0 = J[0, 0] * w0 + J[0, 1] * w1 + J[0, 2] * w2
            j1 = J[1, 0] * w0 + J[1, 1] * w1 + J[1, 2] * w2
            j2 = J[2, 0] * w0 + J[2, 1] * w1 + J[2, 2] * w2
            for c in range(3):
                data[o + 7 * c] += mass[i] / dt
            # ω̄ₛ J - (J ω) ωᵀ/ω̄ₛ + [ω]× J - [J ω]×, column by column (scalar arguments:
            # stores into data, which may alias s and J, would make LLVM reload them)
            _rotational_column(data, o, 0, ws, w0 / ws, w0, w1, w2, j0, j1, j2, J[0, 0],
                               J[1, 0], J[2, 0])
            _rotational_column(data, o, 1, ws, w1 / ws, w0, w1, w2, j0, j1, j2, J[0, 1],
                               J[1, 1], J[2, 1])
            _rotational_column(data, o, 2, ws, w2 / ws, w0, w1, w2, j0, j1, j2, J[0, 2],
                               J[1, 2], J[2, 2])
            data[o + 22] += j2
            data[o + 23] -= j1
            data[o + 27] -= j2
            data[o + 29] += j0
            data[o + 33] += j1
            data[o + 34] -= j0
        _rotation_update_map(w, ws, 0.25 * dt * dt, K[i])


@njit(cache=True, error_model="numpy", inline="always")
def _rotational_column(data, o, c, ws, wc, w0, w1, w2, j0, j1, j2, Ja, Jb, Jc):
    """Column ``c`` of ``ω̄ₛ J - (J ω) ωᵀ/ω̄ₛ + [ω]× J`` added to the rotational block of the
    body block at ``data[o:o + 36]`` (``wc = ω_c/ω̄ₛ``, ``j = J ω``, ``Ja, Jb, Jc`` column
    ``c`` of ``J``)."""
    data[o + 21 + c] += ws * Ja - j0 * wc + (w1 * Jc - w2 * Jb)
    data[o + 27 + c] += ws * Jb - j1 * wc + (w2 * Ja - w0 * Jc)
    data[o + 33 + c] += ws * Jc - j2 * wc + (w0 * Jb - w1 * Ja)


@njit(cache=True, error_model="numpy", inline="always")
def _rotation_update_map(w, ws, scale, K):
    """``K = scale (ω̄ₛ I + ω ωᵀ / ω̄ₛ - [ω]×)``: with ``scale = Δt²/2`` the body-frame
    rotation ``δθ₂ = 2 vec(q̄₂ ∘ δq₂)`` of ``q₂`` (eq. 17) per unit change of ``ω₁``."""
    w0, w1, w2 = w[0], w[1], w[2]          # (held in scalars: K may alias w)
    d = scale * ws
    K[0, 0] = scale * (w0 * w0 / ws) + d
    K[0, 1] = scale * (w0 * w1 / ws) + scale * w2      # -[ω]×
    K[0, 2] = scale * (w0 * w2 / ws) - scale * w1
    K[1, 0] = scale * (w1 * w0 / ws) - scale * w2
    K[1, 1] = scale * (w1 * w1 / ws) + d
    K[1, 2] = scale * (w1 * w2 / ws) + scale * w0
    K[2, 0] = scale * (w2 * w0 / ws) + scale * w1
    K[2, 1] = scale * (w2 * w1 / ws) - scale * w0
    K[2, 2] = scale * (w2 * w2 / ws) + d


@njit(cache=True, error_model="numpy", _nrt=False)
def _jacobian(s, data, x1, q1, mass, inertia, dt, projection, diag_const, G, parent, child,
              p_a, p_b, q_off, select, nc, ptr_bj, ptr_jb, work, constant):
    """:func:`jacobian_kernel`; with ``constant`` false the blocks ``-Gᵀ`` (fixed during a step:
    the factorization only reads ``data``) are taken to be in ``data`` already."""
    _, _, _, _, _, x2, q2, R, K, world_x, world_q, world_R, B, small, _ = work
    lever, p = small[1, :3], small[2, :4]
    nj = parent.shape[0]
    _body_blocks(s, data, mass, inertia, dt, projection, diag_const, K)
    _configuration(s, x1, q1, dt, x2, q2, R)
    for k in range(nj):
        m = nc[k]
        if m == 0:
            continue
        if constant:
            for e in range(2):
                if (parent[k] if e == 0 else child[k]) >= 0:
                    # fixed trip counts for the common row counts (LLVM unrolls them)
                    if m == 5:
                        _neg_transpose(data, ptr_bj[e, k], G[e, k], 5)
                    elif m == 3:
                        _neg_transpose(data, ptr_bj[e, k], G[e, k], 3)
                    else:
                        _neg_transpose(data, ptr_bj[e, k], G[e, k], m)
        xa, qa, Qa, xb, qb, Qb = _end_frames(k, parent, child, x2, q2, R, world_x, world_q,
                                       world_R)
        _joint_geometry(xa, qa, Qa, xb, qb, Qb, p_b[k], q_off[k], lever, p)
        _joint_derivatives(Qa, Qb, p_b[k], q_off[k], lever, p, B)
        S = select[k]
        for e in range(2):
            body = parent[k] if e == 0 else child[k]
            if body < 0:
                continue
            Be = B[e]
            Kb = K[body]
            k00, k01, k02 = Kb[0, 0], Kb[0, 1], Kb[0, 2]       # (held in registers)
            k10, k11, k12 = Kb[1, 0], Kb[1, 1], Kb[1, 2]
            k20, k21, k22 = Kb[2, 0], Kb[2, 1], Kb[2, 2]
            ptr = ptr_jb[e, k]
            for r in range(m):
                # row r of S [Δt ∂g/∂x | ∂g/∂ʳq₂ K] (∂x₂/∂v₁ = Δt I, ∂q₂/∂ω₁: _body_blocks)
                d0, d1, d2, h0, h1, h2 = _select_row(S, r, Be)
                o = ptr + 6 * r
                data[o] = dt * d0
                data[o + 1] = dt * d1
                data[o + 2] = dt * d2
                data[o + 3] = h0 * k00 + h1 * k10 + h2 * k20
                data[o + 4] = h0 * k01 + h1 * k11 + h2 * k21
                data[o + 5] = h0 * k02 + h1 * k12 + h2 * k22


@njit(cache=True, error_model="numpy", _nrt=False)
def constraint_jacobian_kernel(x, q, parent, child, p_a, p_b, q_off, select, G, work):
    """``G[e, k] = Dₖᵀ [∂g/∂x_e, ∂g/∂ʳq_e]`` (eq. 21, A.8) for both ends of every joint, at the
    poses ``x, q``; ``work``: :func:`newton_work` (its ``R`` receives ``Q(q)``)."""
    _, _, _, _, _, _, _, R, _, world_x, world_q, world_R, B, small, _ = work
    lever, p = small[1, :3], small[2, :4]
    _rotations(q, R)
    for k in range(parent.shape[0]):
        xa, qa, Qa, xb, qb, Qb = _end_frames(k, parent, child, x, q, R, world_x, world_q, world_R)
        _joint_geometry(xa, qa, Qa, xb, qb, Qb, p_b[k], q_off[k], lever, p)
        _joint_derivatives(Qa, Qb, p_b[k], q_off[k], lever, p, B)
        for e in range(2):
            _select_rows6(select[k], B[e], G[e, k])


@njit(cache=True, error_model="numpy", inline="always")
def _copy(dst, src):
    """``dst[:] = src`` for 2-D arrays of equal shape, as a loop (the slice assignment needs
    numba's reference counting, which the step kernels run without)."""
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True, error_model="numpy", inline="always")
def _copy_vec(dst, src):
    """``dst[:] = src`` for vectors of equal length, as a loop (see :func:`_copy`)."""
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@njit(cache=True, error_model="numpy", inline="always")
def _max_abs(f):
    m = 0.0
    for i in range(f.shape[0]):
        a = abs(f[i])
        if not a <= m:                # also catches NaN
            m = a if a == a else np.inf
    return m


@njit(cache=True, error_model="numpy", _nrt=False)
def newton_kernel(s, tol, max_iter, history, handle, data, x1, q1, v0, w0, mass,
                  inertia, dt, projection, external, damping, has_damping, diag_const, G,
                  parent, child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb, work,
                  reuse=True):
    """Newton's method with halving line search (2023 App. D, Alg. 5) on ``s`` in place.

    A Newton iteration writes ``F(s)`` into ``data`` (the constant blocks ``-Gᵀ`` only in the
    first), refactors and solves through graphsolve's compiled LDU
    (:func:`graphsolve.lowlevel.refactor_solve`) without returning to Python. With ``reuse``
    (simplified Newton, :data:`CHORD_RATE`), an iteration that follows one which reduced the
    residual by ``CHORD_RATE`` or more first tries the last factorization
    (:func:`graphsolve.lowlevel.solve_factored`; no assembly, no factorization): near the
    solution the step error is then ``O(|Δs_old| |Δs|)`` instead of Newton's ``O(|Δs|²)``,
    which from a warm start still lands at the rounding floor in the same two iterations at
    half the factorizations. Returns ``(code, iterations, position)``, ``code`` a
    :class:`NewtonStatus` (``SINGULAR_PIVOT`` at ``position`` of the elimination order).
    ``history[k]`` is the residual max-norm after ``k`` iterations (a rejected chord trial is
    not an iteration). ``work``: :func:`newton_work` (``x1, q1`` may be its own).
    """
    f, ft, trial = work[0], work[1], work[2]
    _residual(s, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
              has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow, work, f)
    norm = _max_abs(f)
    history[0] = norm
    it = 0
    chord = False
    while norm >= tol:
        if it >= max_iter:
            return _ITERATION_CAP, it, -1
        if chord:               # the last factorization, full step: s - F_old⁻¹ f
            for i in range(f.shape[0]):
                trial[i] = -f[i]
            solve_factored(handle, trial)
            for i in range(s.shape[0]):
                trial[i] += s[i]
            _residual(trial, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
                      has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow, work,
                      ft)
            nt = _max_abs(ft)
            if nt < tol or (nt <= CHORD_RATE * norm and it + 1 < max_iter):
                _copy_vec(s, trial)
                f, ft = ft, f
                norm = nt
                it += 1
                history[it] = norm
                continue
        # (a rejected chord trial leaves s and f as they were: a Newton iteration from s)
        _jacobian(s, data, x1, q1, mass, inertia, dt, projection, diag_const, G, parent, child,
                  p_a, p_b, q_off, select, nc, ptr_bj, ptr_jb, work, it == 0)
        for i in range(f.shape[0]):
            f[i] = -f[i]
        status = refactor_solve(handle, data, f)
        if status == STATUS_NONFINITE:
            return _NONFINITE, it, -1
        if status >= 0:
            return _SINGULAR_PIVOT, it, status
        alpha = 1.0
        ok = False
        nt = norm
        for _ in range(40):
            for i in range(s.shape[0]):
                trial[i] = s[i] + alpha * f[i]
            _residual(trial, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
                      has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow, work,
                      ft)
            nt = _max_abs(ft)
            if nt < norm:
                ok = True
                break
            alpha *= 0.5
        if not ok:
            return _LINE_SEARCH_FAILED, it, -1
        _copy_vec(s, trial)
        f, ft = ft, f
        chord = reuse and nt <= CHORD_RATE * norm
        norm = nt
        it += 1
        history[it] = norm
    return _CONVERGED, it, -1


@njit(cache=True, error_model="numpy", _nrt=False)
def start_step(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, dt, parent, child,
               p_a, p_b, q_off, select, nc, jrow, G, work):
    """The part of a whole compiled step before Newton: the update rules (11), (17), the
    constraint Jacobians ``G`` at ``z₁`` and Newton's start in ``s`` (the current
    ``(v, ω, λ)`` or, with ``extrapolate``, ``2 s_k - s_{k-1}`` with ``s_{k-1}`` in ``prev_*``,
    unless that rate would reach ``|ω| ≥ 1/Δt``); ``prev_*`` then receive ``s_k``.

    ``z₁`` goes to ``work[3], work[4]`` (:func:`newton_work`). Returns ``body``: the first
    body with ``|ω| >= 2/Δt`` (nothing else done then), or ``-1``.
    """
    nb = x.shape[0]
    x1, q1 = work[3], work[4]
    for i in range(nb):
        if not _omega_s(w[i], dt) > 0.0:
            return i
    for i in range(nb):
        for c in range(3):
            x1[i, c] = x[i, c] + dt * v[i, c]
        _next_quaternion(q[i], w[i], dt, q1[i])
    constraint_jacobian_kernel(x1, q1, parent, child, p_a, p_b, q_off, select, G, work)
    if extrapolate:
        limit = 1.0 / (dt * dt)
        for i in range(nb):
            n2 = 0.0
            for c in range(3):
                e = 2.0 * w[i, c] - prev_w[i, c]
                n2 += e * e
            if not n2 < limit:
                extrapolate = False
    for i in range(nb):
        for c in range(3):
            s[6 * i + c] = v[i, c]
            s[6 * i + 3 + c] = w[i, c]
    for k in range(parent.shape[0]):
        for r in range(nc[k]):
            s[jrow[k] + r] = lam[k, r]
    if extrapolate:         # (never touches prev_* otherwise: they may be uninitialized)
        for i in range(nb):
            for c in range(3):
                s[6 * i + c] += v[i, c] - prev_v[i, c]
                s[6 * i + 3 + c] += w[i, c] - prev_w[i, c]
        for k in range(parent.shape[0]):
            for r in range(nc[k]):
                s[jrow[k] + r] += lam[k, r] - prev_lam[k, r]
    _copy(prev_v, v)
    _copy(prev_w, w)
    _copy(prev_lam, lam)
    return -1


@njit(cache=True, error_model="numpy", _nrt=False)
def finish_step(code, it, pos, x, q, v, w, lam, x1, q1, s, nc, jrow):
    """The state update after Newton: ``x, q, v, w, lam`` from ``z₁`` and the solution ``s``
    (only if ``code`` is ``CONVERGED``); returns ``(code, it, pos)``."""
    if code != _CONVERGED:
        return code, it, pos
    _copy(x, x1)
    _copy(q, q1)
    for i in range(x.shape[0]):
        for c in range(3):
            v[i, c] = s[6 * i + c]
            w[i, c] = s[6 * i + 3 + c]
    for k in range(nc.shape[0]):
        for r in range(nc[k]):
            lam[k, r] = s[jrow[k] + r]
    return _CONVERGED, it, -1


@njit(cache=True, error_model="numpy", _nrt=False)
def step_kernel(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, tol, max_iter,
                history, handle, data, mass, inertia, dt, gravity_wrench, diag_const, G, parent,
                child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb, work, reuse=True):
    """One whole integrator step for mechanisms whose only applied force is gravity.

    :func:`start_step` (update rules, constraint Jacobians at ``z₁``, Newton's start, possibly
    extrapolated), :func:`newton_kernel`, then :func:`finish_step`: ``x, q, v, w, lam`` are
    overwritten with the new state (only on success). Returns ``(code, iterations,
    position)`` as :func:`newton_kernel`, with ``RATE_LIMIT`` for a body whose
    ``|ω| >= 2/Δt`` (its index in ``position``). Joint springs, dampers and forces:
    :func:`.force_kernels.forced_step_kernel`. ``work``: :func:`newton_work`; ``reuse``: the
    simplified-Newton rule of :func:`newton_kernel`.
    """
    body = start_step(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, dt, parent,
                      child, p_a, p_b, q_off, select, nc, jrow, G, work)
    x1, q1 = work[3], work[4]
    if body >= 0:
        return _RATE_LIMIT, 0, body
    # bool(False), unlike False, is typed as a runtime bool, not Literal[bool](False):
    # newton_kernel and _residual then compile once for this kernel, forced_step_kernel and
    # the Python-driven Newton loop (StepSystem.newton) instead of once per literal pattern
    off = bool(False)  # noqa: UP018
    code, it, pos = newton_kernel(s, tol, max_iter, history, handle, data, x1, q1, v, w, mass,
                                  inertia, dt, off, gravity_wrench, work[14], off, diag_const,
                                  G, parent, child, p_a, p_b, q_off, select, nc, jrow, ptr_bj,
                                  ptr_jb, work, reuse)
    return finish_step(code, it, pos, x, q, v, w, lam, x1, q1, s, nc, jrow)
