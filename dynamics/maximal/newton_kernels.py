"""numba versions of the per-iteration residual and Jacobian of :mod:`.step_system`, the
Newton iteration and the whole gravity-only step (with joint springs, dampers and forces:
:mod:`.force_kernels`).

Same equations as the NumPy reference (:meth:`StepSystem.residual_reference`,
:meth:`StepSystem.jacobian_reference`), written as loops over bodies and joints so one Newton
iteration makes no Python call per body or joint; the tests compare the two.
"""
from __future__ import annotations

import enum

import numpy as np
from numba import njit

from graphsolve.lowlevel import STATUS_NONFINITE, refactor_solve

# Reassociation and contraction let LLVM vectorize the small loops; "nnan"/"ninf" stay off
# because the |ω| ≥ 2/Δt rule and the residual checks rely on NaN propagating.
_FAST = {"reassoc", "contract", "nsz", "arcp"}


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

__all__ = ["residual_kernel", "jacobian_kernel", "constraint_jacobian_kernel", "newton_kernel",
           "step_kernel"]


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _mm(A, B, C):
    """``C = A @ B`` for small matrices, without a BLAS call."""
    n, k = A.shape
    m = B.shape[1]
    for i in range(n):
        for j in range(m):
            acc = 0.0
            for t in range(k):
                acc += A[i, t] * B[t, j]
            C[i, j] = acc


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
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


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _mv(A, x, y):
    """``y = A @ x``."""
    for i in range(A.shape[0]):
        acc = 0.0
        for t in range(A.shape[1]):
            acc += A[i, t] * x[t]
        y[i] = acc


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _mtv(A, x, y):
    """``y = Aᵀ @ x``."""
    for i in range(A.shape[1]):
        acc = 0.0
        for t in range(A.shape[0]):
            acc += A[t, i] * x[t]
        y[i] = acc


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _cross(a, b, c):
    c[0] = a[1] * b[2] - a[2] * b[1]
    c[1] = a[2] * b[0] - a[0] * b[2]
    c[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
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


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _Lmat(q, M):
    s = q[0]
    M[0, 0] = s
    M[0, 1] = -q[1]
    M[0, 2] = -q[2]
    M[0, 3] = -q[3]
    M[1, 0] = q[1]
    M[2, 0] = q[2]
    M[3, 0] = q[3]
    M[1, 1] = s
    M[2, 2] = s
    M[3, 3] = s
    M[1, 2] = -q[3]
    M[1, 3] = q[2]
    M[2, 1] = q[3]
    M[2, 3] = -q[1]
    M[3, 1] = -q[2]
    M[3, 2] = q[1]


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _Rmat(q, M):
    _Lmat(q, M)
    M[1, 2] = q[3]
    M[1, 3] = -q[2]
    M[2, 1] = -q[3]
    M[2, 3] = q[1]
    M[3, 1] = q[2]
    M[3, 2] = -q[1]


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _d_rotate_dq(q, p, out):
    """``∂(Q(q)p)/∂q`` (3×4) of ``quaternion.d_rotate_dq`` in closed form: with ``q = (s, v)``
    and ``u = s p + v × p``, the derivative of the vector part of ``q ∘ p̂ ∘ q*`` (A.6) is
    ``[2u | 2(vᵀp) I - 2[u]×]`` (from ``R(p̂ ∘ q*) + L(q ∘ p̂) T``, eq. A.4)."""
    s = q[0]
    u0 = s * p[0] + q[2] * p[2] - q[3] * p[1]
    u1 = s * p[1] + q[3] * p[0] - q[1] * p[2]
    u2 = s * p[2] + q[1] * p[1] - q[2] * p[0]
    d = 2.0 * (q[1] * p[0] + q[2] * p[1] + q[3] * p[2])
    out[0, 0] = 2.0 * u0
    out[1, 0] = 2.0 * u1
    out[2, 0] = 2.0 * u2
    out[0, 1] = d
    out[1, 2] = d
    out[2, 3] = d
    out[0, 2] = 2.0 * u2
    out[0, 3] = -2.0 * u1
    out[1, 1] = -2.0 * u2
    out[1, 3] = 2.0 * u0
    out[2, 1] = 2.0 * u1
    out[2, 2] = -2.0 * u0


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def joint_terms(xa, qa, xb, qb, pa, pb, qoff, g, dxa, dqa, dxb, dqb, jac, W):
    """One joint's ``[g_T; g_R]`` (B.1, B.3) and derivatives, as ``joints.constraint_terms``.

    ``W`` is scratch space of shape (7, 4, 4).
    """
    Qa = W[0, :3, :3]
    Qb = W[1, :3, :3]
    _rot(qa, Qa)
    _rot(qb, Qb)
    r = W[2, 0, :3]
    tmp3 = W[2, 1, :3]
    _mv(Qb, pb, tmp3)
    for i in range(3):
        r[i] = xb[i] + tmp3[i] - xa[i]
    _mtv(Qa, r, tmp3)
    La, Loff, Lc = W[3], W[4], W[5]
    _Lmat(qa, La)
    c = W[2, 3]
    _mv(La, qoff, c)                       # c = q_a ∘ q_off; P = L(q_off)ᵀ L(q_a)ᵀ = L(c)ᵀ
    _Lmat(c, Lc)
    for i in range(3):
        g[i] = tmp3[i] - pa[i]
        acc = 0.0
        for t in range(4):
            acc += Lc[t, i + 1] * qb[t]
        g[3 + i] = acc
    if not jac:
        return
    for i in range(6):
        for j in range(3):
            dxa[i, j] = 0.0
            dxb[i, j] = 0.0
    for i in range(3):
        for j in range(3):
            dxb[i, j] = Qa[j, i]
            dxa[i, j] = -Qa[j, i]
    tmp = W[6, :3, :]
    _d_rotate_dq(qb, pb, tmp)
    for i in range(3):
        for j in range(4):
            acc = 0.0
            for t in range(3):
                acc += Qa[t, i] * tmp[t, j]
            dqb[i, j] = acc
    conj = W[2, 2]
    conj[0] = qa[0]
    for i in range(1, 4):
        conj[i] = -qa[i]
    _d_rotate_dq(conj, r, tmp)
    for i in range(3):
        dqa[i, 0] = tmp[i, 0]
        for j in range(1, 4):
            dqa[i, j] = -tmp[i, j]
    Rb = W[6]
    _Rmat(qb, Rb)
    _Lmat(qoff, Loff)
    for i in range(3):
        for j in range(4):
            acc = 0.0
            for t in range(4):
                acc += Loff[t, i + 1] * Rb[t, j]
            dqb[3 + i, j] = Lc[j, i + 1]
            dqa[3 + i, j] = acc if j == 0 else -acc


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _omega_s(w, dt):
    arg = (2.0 / dt) ** 2 - (w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    return np.sqrt(arg) if arg > 0.0 else np.nan


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _next_quaternion(q, w, dt, out):
    """``q₂ = (Δt/2) L(q₁) [ω̄ₛ; ω₁]`` (eq. 17) written out; returns ``ω̄ₛ`` (NaN if
    ``|ω| >= 2/Δt``)."""
    ws = _omega_s(w, dt)
    h = 0.5 * dt
    out[0] = h * (q[0] * ws - q[1] * w[0] - q[2] * w[1] - q[3] * w[2])
    out[1] = h * (q[0] * w[0] + q[1] * ws + q[2] * w[2] - q[3] * w[1])
    out[2] = h * (q[0] * w[1] + q[2] * ws + q[3] * w[0] - q[1] * w[2])
    out[3] = h * (q[0] * w[2] + q[3] * ws + q[1] * w[1] - q[2] * w[0])
    return ws


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _next_configuration(s, x1, q1, dt):
    nb = x1.shape[0]
    x2 = np.empty((nb, 3))
    q2 = np.empty((nb, 4))
    for i in range(nb):
        for c in range(3):
            x2[i, c] = x1[i, c] + dt * s[6 * i + c]
        _next_quaternion(q1[i], s[6 * i + 3:6 * i + 6], dt, q2[i])
    return x2, q2


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _ends(k, parent, child, x, q, world_x, world_q):
    a = parent[k]
    if a < 0:
        return world_x, world_q, x[child[k]], q[child[k]]
    return x[a], q[a], x[child[k]], q[child[k]]


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _world():
    wq = np.zeros(4)
    wq[0] = 1.0
    return np.zeros(3), wq


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def residual_kernel(s, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
                    has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow):
    """``f(s)`` of eq. (30a); see ``StepSystem.residual_reference``."""
    return _residual(s, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
                     has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow,
                     np.empty((0, 2, 6, 7)), False)


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _residual(s, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
              has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow, deriv, keep):
    """:func:`residual_kernel`; with ``keep`` it also stores every joint's constraint
    derivatives at ``z₂(s)`` in ``deriv[k, end] = [∂g/∂x | ∂g/∂q]`` (6×7) for
    :func:`_jacobian` at the same ``s`` (a Newton step reuses them when accepted)."""
    nb = x1.shape[0]
    nj = parent.shape[0]
    out = np.empty(s.shape[0])
    Jw1 = np.empty(3)
    Jw0 = np.empty(3)
    c1 = np.empty(3)
    c0 = np.empty(3)
    dw = np.empty(3)
    wr = np.empty(12)
    for i in range(nb):
        v1 = s[6 * i:6 * i + 3]
        w1 = s[6 * i + 3:6 * i + 6]
        J = inertia[i]
        if projection:
            for c in range(3):
                out[6 * i + c] = mass[i] * (v1[c] - v0[i, c])
            for c in range(3):
                dw[c] = w1[c] - w0[i, c]
            _mv(J, dw, Jw1)
            for c in range(3):
                out[6 * i + 3 + c] = Jw1[c]
        else:
            _mv(J, w1, Jw1)
            _mv(J, w0[i], Jw0)
            s1 = _omega_s(w1, dt)
            s0 = _omega_s(w0[i], dt)
            _cross(w1, Jw1, c1)
            _cross(w0[i], Jw0, c0)
            for c in range(3):
                out[6 * i + c] = mass[i] * (v1[c] - v0[i, c]) / dt
                out[6 * i + 3 + c] = s1 * Jw1[c] + c1[c] - s0 * Jw0[c] + c0[c]
        for c in range(6):
            out[6 * i + c] -= external[i, c] * (2.0 if c >= 3 else 1.0)
    zd = np.empty(12)
    for k in range(nj):
        a, b = parent[k], child[k]
        if has_damping:
            zd[:] = 0.0
            if a >= 0:
                zd[:6] = s[6 * a:6 * a + 6]
            zd[6:] = s[6 * b:6 * b + 6]
            _mv(damping[k], zd, wr)
            for c in range(6):
                sc = 2.0 if c >= 3 else 1.0
                if a >= 0:
                    out[6 * a + c] += sc * wr[c]
                out[6 * b + c] += sc * wr[6 + c]
        m = nc[k]
        if m == 0:
            continue
        r0 = jrow[k]
        for c in range(6):
            fa = 0.0
            fb = 0.0
            for r in range(m):
                fa += G[0, k, r, c] * s[r0 + r]
                fb += G[1, k, r, c] * s[r0 + r]
            if a >= 0:
                out[6 * a + c] -= fa
            out[6 * b + c] -= fb
    x2, q2 = _next_configuration(s, x1, q1, dt)
    g = np.empty(6)
    cv = np.empty(6)
    d3 = np.empty((6, 3))
    d4 = np.empty((6, 4))
    W = np.empty((7, 4, 4))
    world_x, world_q = _world()
    for k in range(nj):
        m = nc[k]
        if m == 0:
            continue
        xa, qa, xb, qb = _ends(k, parent, child, x2, q2, world_x, world_q)
        if keep:
            joint_terms(xa, qa, xb, qb, p_a[k], p_b[k], q_off[k], g, deriv[k, 0, :, :3],
                        deriv[k, 0, :, 3:], deriv[k, 1, :, :3], deriv[k, 1, :, 3:], True, W)
        else:
            joint_terms(xa, qa, xb, qb, p_a[k], p_b[k], q_off[k], g, d3, d4, d3, d4, False, W)
        _mv(select[k], g, cv)
        for r in range(m):
            out[jrow[k] + r] = cv[r]
    return out


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def jacobian_kernel(s, data, x1, q1, mass, inertia, dt, projection, diag_const, G, parent,
                    child, p_a, p_b, q_off, select, nc, ptr_bj, ptr_jb):
    """Write ``F = ∂f/∂s`` (eq. 32) into the flat BlockMatrix buffer ``data``."""
    _jacobian(s, data, x1, q1, mass, inertia, dt, projection, diag_const, G, parent, child,
              p_a, p_b, q_off, select, nc, ptr_bj, ptr_jb,
              np.empty((parent.shape[0], 2, 6, 7)), False)


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def _jacobian(s, data, x1, q1, mass, inertia, dt, projection, diag_const, G, parent, child,
              p_a, p_b, q_off, select, nc, ptr_bj, ptr_jb, deriv, have):
    """:func:`jacobian_kernel`; ``have`` says ``deriv`` already holds the joints' constraint
    derivatives at ``z₂(s)`` (from :func:`_residual` with ``keep``), else they are computed."""
    nb = x1.shape[0]
    nj = parent.shape[0]
    D = np.empty((6, 6))
    Jw = np.empty(3)
    L = np.empty((4, 4))
    dq2 = np.empty((nb, 4, 3))          # ∂q₂/∂ω₁ of every body (eq. 17)
    for i in range(nb):
        w = s[6 * i + 3:6 * i + 6]
        ws = _omega_s(w, dt)
        _Lmat(q1[i], L)
        for r in range(4):
            for c in range(3):
                dq2[i, r, c] = 0.5 * dt * (-L[r, 0] * w[c] / ws + L[r, c + 1])
        D[:, :] = diag_const[i]
        J = inertia[i]
        if projection:
            for c in range(3):
                D[c, c] += mass[i]
            D[3:, 3:] += J
        else:
            _mv(J, w, Jw)
            for c in range(3):
                D[c, c] += mass[i] / dt
            for r in range(3):
                for c in range(3):
                    D[3 + r, 3 + c] += ws * J[r, c] - Jw[r] * w[c] / ws
            # [w]× J - [J w]×
            for c in range(3):
                D[3, 3 + c] += w[1] * J[2, c] - w[2] * J[1, c]
                D[4, 3 + c] += w[2] * J[0, c] - w[0] * J[2, c]
                D[5, 3 + c] += w[0] * J[1, c] - w[1] * J[0, c]
            D[3, 4] += Jw[2]
            D[3, 5] -= Jw[1]
            D[4, 3] -= Jw[2]
            D[4, 5] += Jw[0]
            D[5, 3] += Jw[1]
            D[5, 4] -= Jw[0]
        for r in range(6):
            for c in range(6):
                data[36 * i + 6 * r + c] = D[r, c]
    if not have:
        x2, q2 = _next_configuration(s, x1, q1, dt)
        g = np.empty(6)
        W = np.empty((7, 4, 4))
        world_x, world_q = _world()
        for k in range(nj):
            if nc[k] == 0:
                continue
            xa, qa, xb, qb = _ends(k, parent, child, x2, q2, world_x, world_q)
            joint_terms(xa, qa, xb, qb, p_a[k], p_b[k], q_off[k], g, deriv[k, 0, :, :3],
                        deriv[k, 0, :, 3:], deriv[k, 1, :, :3], deriv[k, 1, :, 3:], True, W)
    blk = np.empty((6, 6))
    sel = np.empty((6, 6))
    dqw = np.empty((6, 3))
    for k in range(nj):
        m = nc[k]
        if m == 0:
            continue
        for e in range(2):
            body = parent[k] if e == 0 else child[k]
            if body < 0:
                continue
            p = ptr_bj[e, k]
            for r in range(6):
                for c in range(m):
                    data[p + r * m + c] = -G[e, k, c, r]
            dx = deriv[k, e, :, :3]
            _mm(deriv[k, e, :, 3:], dq2[body], dqw)
            for r in range(6):
                for c in range(3):
                    blk[r, c] = dt * dx[r, c]
                    blk[r, 3 + c] = dqw[r, c]
            _select_mm(select[k], m, blk, sel)
            p = ptr_jb[e, k]
            for r in range(m):
                for c in range(6):
                    data[p + r * 6 + c] = sel[r, c]


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def constraint_jacobian_kernel(x, q, parent, child, p_a, p_b, q_off, select, G):
    """``G[e, k] = Dₖᵀ [∂g/∂x_e, ∂g/∂ʳq_e]`` (eq. 21, A.8) for both ends of every joint."""
    nj = parent.shape[0]
    g = np.empty(6)
    dxa = np.empty((6, 3))
    dqa = np.empty((6, 4))
    dxb = np.empty((6, 3))
    dqb = np.empty((6, 4))
    blk = np.empty((6, 6))
    L = np.empty((4, 4))
    W = np.empty((7, 4, 4))
    world_x, world_q = _world()
    for k in range(nj):
        xa, qa, xb, qb = _ends(k, parent, child, x, q, world_x, world_q)
        joint_terms(xa, qa, xb, qb, p_a[k], p_b[k], q_off[k], g, dxa, dqa, dxb, dqb, True, W)
        for e in range(2):
            dx = dxa if e == 0 else dxb
            dq = dqa if e == 0 else dqb
            _Lmat(qa if e == 0 else qb, L)
            for r in range(6):
                for c in range(3):
                    blk[r, c] = dx[r, c]
                    acc = 0.0
                    for t in range(4):
                        acc += dq[r, t] * L[t, c + 1]
                    blk[r, 3 + c] = acc
            _select_mm(select[k], 6, blk, G[e, k])


@njit(cache=True, error_model="numpy", fastmath=_FAST, inline="always")
def _max_abs(f):
    m = 0.0
    for i in range(f.shape[0]):
        a = abs(f[i])
        if not a <= m:                # also catches NaN
            m = a if a == a else np.inf
    return m


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def newton_kernel(s, tol, max_iter, history, handle, data, x1, q1, v0, w0, mass,
                  inertia, dt, projection, external, damping, has_damping, diag_const, G,
                  parent, child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb):
    """Newton's method with halving line search (2023 App. D, Alg. 5) on ``s`` in place.

    Every iteration writes ``F(s)`` into ``data``, refactors and solves through graphsolve's
    compiled LDU (:func:`graphsolve.lowlevel.refactor_solve`) without returning to
    Python. Returns ``(code, iterations, position)``, ``code`` a :class:`NewtonStatus`
    (``SINGULAR_PIVOT`` at ``position`` of the elimination order). ``history[k]`` is the
    residual max-norm after ``k`` iterations.
    """
    deriv = np.empty((parent.shape[0], 2, 6, 7))
    deriv_trial = np.empty_like(deriv)
    f = _residual(s, x1, q1, v0, w0, mass, inertia, dt, projection, external, damping,
                  has_damping, G, parent, child, p_a, p_b, q_off, select, nc, jrow, deriv, True)
    norm = _max_abs(f)
    history[0] = norm
    it = 0
    trial = np.empty_like(s)
    while norm >= tol:
        if it >= max_iter:
            return _ITERATION_CAP, it, -1
        _jacobian(s, data, x1, q1, mass, inertia, dt, projection, diag_const, G, parent, child,
                  p_a, p_b, q_off, select, nc, ptr_bj, ptr_jb, deriv, True)
        for i in range(f.shape[0]):
            f[i] = -f[i]
        status = refactor_solve(handle, data, f)
        if status == STATUS_NONFINITE:
            return _NONFINITE, it, -1
        if status >= 0:
            return _SINGULAR_PIVOT, it, status
        alpha = 1.0
        ok = False
        for _ in range(40):
            for i in range(s.shape[0]):
                trial[i] = s[i] + alpha * f[i]
            ft = _residual(trial, x1, q1, v0, w0, mass, inertia, dt, projection, external,
                           damping, has_damping, G, parent, child, p_a, p_b, q_off, select, nc,
                           jrow, deriv_trial, True)
            nt = _max_abs(ft)
            if nt < norm:
                ok = True
                break
            alpha *= 0.5
        if not ok:
            return _LINE_SEARCH_FAILED, it, -1
        s[:] = trial
        f = ft
        norm = nt
        deriv, deriv_trial = deriv_trial, deriv
        it += 1
        history[it] = norm
    return _CONVERGED, it, -1


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def start_step(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, dt, parent, child,
               p_a, p_b, q_off, select, nc, jrow, G):
    """The part of a whole compiled step before Newton: the update rules (11), (17), the
    constraint Jacobians ``G`` at ``z₁`` and Newton's start in ``s`` (the current
    ``(v, ω, λ)`` or, with ``extrapolate``, ``2 s_k - s_{k-1}`` with ``s_{k-1}`` in ``prev_*``,
    unless that rate would reach ``|ω| ≥ 1/Δt``); ``prev_*`` then receive ``s_k``.

    Returns ``(x₁, q₁, body)``: ``body >= 0`` is the first body with ``|ω| >= 2/Δt`` (nothing
    else done then), ``-1`` otherwise.
    """
    nb = x.shape[0]
    x1 = np.empty_like(x)
    q1 = np.empty_like(q)
    for i in range(nb):
        if not _omega_s(w[i], dt) > 0.0:
            return x1, q1, i
    for i in range(nb):
        for c in range(3):
            x1[i, c] = x[i, c] + dt * v[i, c]
        _next_quaternion(q[i], w[i], dt, q1[i])
    constraint_jacobian_kernel(x1, q1, parent, child, p_a, p_b, q_off, select, G)
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
    prev_v[:] = v
    prev_w[:] = w
    prev_lam[:] = lam
    return x1, q1, -1


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def finish_step(code, it, pos, x, q, v, w, lam, x1, q1, s, nc, jrow):
    """The state update after Newton: ``x, q, v, w, lam`` from ``z₁`` and the solution ``s``
    (only if ``code`` is ``CONVERGED``); returns ``(code, it, pos)``."""
    if code != _CONVERGED:
        return code, it, pos
    x[:] = x1
    q[:] = q1
    for i in range(x.shape[0]):
        v[i] = s[6 * i:6 * i + 3]
        w[i] = s[6 * i + 3:6 * i + 6]
    for k in range(nc.shape[0]):
        for r in range(nc[k]):
            lam[k, r] = s[jrow[k] + r]
    return _CONVERGED, it, -1


@njit(cache=True, error_model="numpy", fastmath=_FAST)
def step_kernel(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, tol, max_iter,
                history, handle, data, mass, inertia, dt, gravity_wrench, diag_const, G, parent,
                child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb):
    """One whole integrator step for mechanisms whose only applied force is gravity.

    :func:`start_step` (update rules, constraint Jacobians at ``z₁``, Newton's start, possibly
    extrapolated), :func:`newton_kernel`, then :func:`finish_step`: ``x, q, v, w, lam`` are
    overwritten with the new state (only on success). Returns ``(code, iterations,
    position)`` as :func:`newton_kernel`, with ``RATE_LIMIT`` for a body whose
    ``|ω| >= 2/Δt`` (its index in ``position``). Joint springs, dampers and forces:
    :func:`.force_kernels.forced_step_kernel`.
    """
    x1, q1, body = start_step(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, dt,
                              parent, child, p_a, p_b, q_off, select, nc, jrow, G)
    if body >= 0:
        return _RATE_LIMIT, 0, body
    damping = np.zeros((0, 12, 12))
    code, it, pos = newton_kernel(s, tol, max_iter, history, handle, data, x1, q1, v, w, mass,
                                  inertia, dt, False, gravity_wrench, damping, False,
                                  diag_const, G, parent, child, p_a, p_b, q_off, select, nc,
                                  jrow, ptr_bj, ptr_jb)
    return finish_step(code, it, pos, x, q, v, w, lam, x1, q1, s, nc, jrow)
