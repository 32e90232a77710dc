"""The variational integrator's RIQN loop compiled for trees of every built-in joint type.

:func:`dynamics.minimal.variational.simulate_variational` with ``solver="riqn"`` (Lee, Liu,
Park & Srinivasa 2016, Algorithms 2-3 in the momentum form of
:mod:`dynamics.minimal.variational`) in numba, for the models of
:func:`.multi_dof_kernels.supports`: floating bases, ball joints and planar joints (quaternion
rotations) besides revolute and prismatic ones, which :mod:`.tree_kernels` covers alone. Per
step:

- the links' placements at ``q_k``, their gravity wrenches and the constant terms of the DEL
  residual ``f(x) = Jᵀ(μ(x) - Δt/2 F_grav) + Δt/2 ∇P_spring(q_k) - p_k - Δt τ_k + d/2 (x ⊖ q_k)``;
- the initial guess (IG1 ``q_k``, IG2 ``q_k ⊕ δ_prev``, IG3 semi-implicit Euler);
- RIQN: ``x ← x ⊕ (-Δt M(q_k)⁻¹ f(x))`` with the impulse ABA
  (:func:`.multi_dof_kernels._aba` with ``v = 0`` and no gravity) until
  ``max_i |f_i| Δt / M_ii(q_0) ≤ tol``;
- ``p_{k+1} = D₂L_d(q_k, x) + F⁺_k``, ``v_{k+1} = M(x)⁻¹ p_{k+1}`` and the energy.

The joint-space differences ``x ⊖ q`` (dampers, ``δ_prev``) are those of
:meth:`~dynamics.minimal.joints.JointModel.difference`: the quaternion logarithm, the SE(3)
logarithm of a floating joint's relative pose (twist reordered to ``(v; w)``) and SE(2)'s;
a ball joint's spring acts on its rotation from rest, ``k (q ⊖ q_rest)`` (as
:func:`.variational._spring_gradient`; floating and planar joints take no springs). Newton
and Broyden stay on the reference. Without a controller the whole run is one call; a
controller ``(t, q, v) -> τ`` is called from Python before each step, which is then one
compiled call.
"""
from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from .algorithms import crba
from .configuration import check_run
from .model import Model
from .multi_dof_kernels import (
    _aba,
    _integrate,
    _placements,
    _quaternion_rotation,
    _rotation_log,
    multi_dof_model,
    require_supported,
)
from .results import ConvergenceError, SimulationResult, convergence_advice
from .tree_kernels import (
    _GUESS_CODES,
    _dlog_transpose,
    _gravity_potential,
    _gravity_wrench,
    _log_se3,
    _XT_add,
)

__all__ = ["simulate_riqn", "difference"]

@njit(cache=True)
def _difference(jtype, iq, iv, q0, q1, out, R0, R1, dR, dp, xi):
    """``out = q1 ⊖ q0`` joint by joint (:meth:`~.joints.JointModel.difference`); ``R0``,
    ``R1``, ``dR`` (3×3), ``dp`` (3) and ``xi`` (6): scratch."""
    for i in range(jtype.shape[0]):
        t, o, s = jtype[i], iq[i], iv[i]
        if t <= 1:
            out[s] = q1[o] - q0[o]
        elif t == 2:
            _rotation_log(q0, o, q1, o, out, s)
        elif t == 3:                      # log(T0⁻¹ T1), the twist (w; v) as (v; w)
            _quaternion_rotation(q0, o + 3, R0)
            _quaternion_rotation(q1, o + 3, R1)
            for a in range(3):
                for b in range(3):
                    dR[a, b] = R0[0, a] * R1[0, b] + R0[1, a] * R1[1, b] + R0[2, a] * R1[2, b]
                dp[a] = (R0[0, a] * (q1[o] - q0[o]) + R0[1, a] * (q1[o + 1] - q0[o + 1])
                         + R0[2, a] * (q1[o + 2] - q0[o + 2]))
            _log_se3(dR, dp, xi)
            for a in range(3):
                out[s + a] = xi[3 + a]
                out[s + 3 + a] = xi[a]
        else:                             # SE(2) (.joints.PlanarJoint.difference)
            w = q1[o + 2] - q0[o + 2]
            c, sn = math.cos(q0[o + 2]), math.sin(q0[o + 2])
            dx, dy = q1[o] - q0[o], q1[o + 1] - q0[o + 1]
            d0, d1 = c * dx + sn * dy, -sn * dx + c * dy
            if abs(w) < 1e-4:
                w2 = w * w
                al, be = 1.0 - w2 / 6.0 + w2 * w2 / 120.0, w * (0.5 - w2 / 24.0)
            else:
                al, be = math.sin(w) / w, (1.0 - math.cos(w)) / w
            nrm = al * al + be * be
            out[s] = (al * d0 + be * d1) / nrm
            out[s + 1] = (al * d1 - be * d0) / nrm
            out[s + 2] = w


@njit(cache=True)
def _residual(fm, Rk, pk, W_const, c_const, half_d, damped, qk, x, dt, Rn, pn, dR, dp, mu, F,
              f, w):
    """DRNEA in momentum form: ``f(x)`` for ``q_{k+1} = x`` (as
    :meth:`.variational._StepProblem.residual`); leaves the placements ``(Rn, pn)`` of ``x``,
    ``ΔT = (dR, dp)`` and ``μ`` for :func:`_momentum_next`. ``w``: :func:`_work`."""
    parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G = fm
    Rj, t3, xi, y, diff, R0, R1 = w[0], w[1], w[2], w[3], w[4], w[5], w[6]
    n = parent.shape[0]
    _placements(jtype, iq, axis, plane, PR, Pp, x, Rj, Rn, pn)
    for i in range(n):
        k = parent[i]
        for a in range(3):              # ΔT_λ T_{λ,i}(x), then T_{λ,i}(q_k)⁻¹ of it
            if k >= 0:
                for b in range(3):
                    Rj[a, b] = (dR[k, a, 0] * Rn[i, 0, b] + dR[k, a, 1] * Rn[i, 1, b]
                                + dR[k, a, 2] * Rn[i, 2, b])
                t3[a] = (dR[k, a, 0] * pn[i, 0] + dR[k, a, 1] * pn[i, 1]
                         + dR[k, a, 2] * pn[i, 2] + dp[k, a]) - pk[i, a]
            else:
                for b in range(3):
                    Rj[a, b] = Rn[i, a, b]
                t3[a] = pn[i, a] - pk[i, a]
        for a in range(3):
            for b in range(3):
                dR[i, a, b] = (Rk[i, 0, a] * Rj[0, b] + Rk[i, 1, a] * Rj[1, b]
                               + Rk[i, 2, a] * Rj[2, b])
            dp[i, a] = Rk[i, 0, a] * t3[0] + Rk[i, 1, a] * t3[1] + Rk[i, 2, a] * t3[2]
        _log_se3(dR[i], dp[i], xi)
        for d in range(6):
            xi[d] /= dt
        for d in range(6):
            acc = 0.0
            for e in range(6):
                acc += G[i, d, e] * xi[e]
            y[d] = acc
        for d in range(6):
            xi[d] *= dt
        _dlog_transpose(xi, y, mu[i], w[7], w[8])
    for i in range(n):
        for d in range(6):
            F[i, d] = mu[i, d] + W_const[i, d]
    _transpose_jacobian(parent, iv, nvj, S, Rk, pk, F, f)
    for j in range(f.shape[0]):
        f[j] += c_const[j]
    if damped:
        _difference(jtype, iq, iv, qk, x, diff, R0, R1, Rj, t3, xi)
        for j in range(f.shape[0]):
            f[j] += half_d[j] * diff[j]


@njit(cache=True)
def _transpose_jacobian(parent, iv, nvj, S, R, p, F, out):
    """``out = Jᵀ F`` (:func:`.variational._backward`): ``F_i`` gathered from the leaves to
    the root (``F_λ += X_iᵀ F_i``, in place) and ``out_i = S_iᵀ F_i``."""
    for i in range(parent.shape[0] - 1, -1, -1):
        o = iv[i]
        for j in range(nvj[i]):
            acc = 0.0
            for r in range(6):
                acc += S[i, r, j] * F[i, r]
            out[o + j] = acc
        if parent[i] >= 0:
            _XT_add(R[i], p[i], F[i], F[parent[i]])


@njit(cache=True)
def _momentum_next(fm, Rn, pn, dR, dp, mu, Fg_next, dt, stiffness, rest, half_d, damped, x,
                   F, out, w):
    """``p_{k+1} = J(x)ᵀ (Ad(ΔT)ᵀ μ + Δt/2 F_grav(x)) - Δt/2 k (x - rest) - d/2 (x ⊖ q_k)``
    (:meth:`.variational._StepProblem.momentum_next`; ``w[4]`` holds ``x ⊖ q_k`` from the
    last :func:`_residual` when ``damped``)."""
    parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G = fm
    diff = w[4]
    n = parent.shape[0]
    for i in range(n):
        m0 = mu[i, 0] - (dp[i, 1] * mu[i, 5] - dp[i, 2] * mu[i, 4])
        m1 = mu[i, 1] - (dp[i, 2] * mu[i, 3] - dp[i, 0] * mu[i, 5])
        m2 = mu[i, 2] - (dp[i, 0] * mu[i, 4] - dp[i, 1] * mu[i, 3])
        for d in range(3):
            mw = dR[i, 0, d] * m0 + dR[i, 1, d] * m1 + dR[i, 2, d] * m2
            mf = dR[i, 0, d] * mu[i, 3] + dR[i, 1, d] * mu[i, 4] + dR[i, 2, d] * mu[i, 5]
            F[i, d] = mw + 0.5 * dt * Fg_next[i, d]
            F[i, 3 + d] = mf + 0.5 * dt * Fg_next[i, 3 + d]
    _transpose_jacobian(parent, iv, nvj, S, Rn, pn, F, out)
    for i in range(n):
        o = iv[i]
        if jtype[i] <= 1:
            out[o] -= 0.5 * dt * stiffness[o] * (x[iq[i]] - rest[iq[i]])
        elif jtype[i] == 2 and stiffness[o] != 0.0:
            _rotation_log(rest, iq[i], x, iq[i], w[1], 0)
            for j in range(3):
                out[o + j] -= 0.5 * dt * stiffness[o + j] * w[1][j]
    if damped:
        for j in range(out.shape[0]):
            out[j] -= half_d[j] * diff[j]


@njit(cache=True)
def _impulse_aba(fm, q, impulse, out, a):
    """``out = M(q)⁻¹ impulse``: the ABA with ``v = 0`` and no gravity (RIQN's update,
    :func:`.variational.impulse_aba`); returns :func:`.multi_dof_kernels._aba`'s code and
    joint. ``a``: the second tuple of :func:`_work`."""
    parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G = fm
    zero6, zero_v, R, p, V, c, pa, Ia, Ia_red, U, Dm, Dinv, u, A, B, Rj, inv_work, t6, h6 = a
    return _aba(parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G, zero6, q, zero_v,
                impulse, R, p, V, c, pa, Ia, Ia_red, U, Dm, Dinv, u, A, B, Rj, inv_work, t6,
                h6, out)


@njit(cache=True)
def _energy(fm, R, p, mass, first_moment, gvec, stiffness, rest, q, v, mom, Rw, pw, t3):
    """``½ vᵀ p + P_grav + ½ Σ k |q ⊖ rest|²`` (:func:`.forces.total_energy`; ``t3``:
    scratch)."""
    parent, jtype, iq, iv = fm[0], fm[1], fm[2], fm[3]
    total = 0.5 * (v @ mom) + _gravity_potential(parent, R, p, mass, first_moment, gvec, Rw, pw)
    for i in range(jtype.shape[0]):
        o = iv[i]
        if jtype[i] <= 1:
            total += 0.5 * stiffness[o] * (q[iq[i]] - rest[iq[i]]) ** 2
        elif jtype[i] == 2 and stiffness[o] != 0.0:
            _rotation_log(rest, iq[i], q, iq[i], t3, 0)
            for j in range(3):
                total += 0.5 * stiffness[o + j] * t3[j] ** 2
    return total


@njit(cache=True)
def _simulate(fm, mass, first_moment, gvec, stiffness, damping, rest, state, dt, guess, tol,
              max_iter, weights, tau_k, first, Qout, Vout, E, iters, w, a):
    """RIQN steps ``k = 0 … K-1`` (``K`` the rows of ``tau_k``, the joint forces held over
    each step) from ``state = (q, p, v, δ_prev)``, updated in place, into rows ``k + 1`` of
    ``Qout``, ``Vout``, ``E`` and ``iters[k]`` (``first``: row 0 too, the initial state and
    its energy). Returns ``(status, step, joint)``: ``(0, -1, -1)``, ``(1, k, -1)`` if step
    ``k`` did not converge (or its residual was not finite), ``(2, k, j)`` if joint ``j``'s
    articulated inertia was singular at step ``k``."""
    parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G = fm
    q, p, v, delta_prev = state
    n, nv, nq = parent.shape[0], v.shape[0], q.shape[0]
    Rk, pk, Rn, pn = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3))
    dR, dp = np.empty((n, 3, 3)), np.empty((n, 3))
    mu, F, g, Fg, W_const = (np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)),
                             np.empty((n, 6)), np.empty((n, 6)))
    Rw, pw = np.empty((n, 3, 3)), np.empty((n, 3))
    c_const, f, step, p_new, ddq, vs, tau = (
        np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv),
        np.empty(nv))
    x, xn = np.empty(nq), np.empty(nq)
    half_d = 0.5 * damping
    damped = bool(np.any(damping != 0.0))
    a_grav = np.zeros(6)
    a_grav[3:] = -gvec
    Rj = w[0]
    if first:
        _placements(jtype, iq, axis, plane, PR, Pp, q, Rj, Rk, pk)
        Qout[0], Vout[0] = q, v
        E[0] = _energy(fm, Rk, pk, mass, first_moment, gvec, stiffness, rest, q, v, p, Rw, pw,
                       w[1])
    for k in range(tau_k.shape[0]):
        _placements(jtype, iq, axis, plane, PR, Pp, q, Rj, Rk, pk)
        _gravity_wrench(parent, G, Rk, pk, gvec, g, Fg)
        for i in range(n):
            for d in range(6):
                W_const[i, d] = -0.5 * dt * Fg[i, d]
            o = iv[i]
            if jtype[i] == 2 and stiffness[o] != 0.0:
                _rotation_log(rest, iq[i], q, iq[i], w[1], 0)
            for j in range(nvj[i]):
                spring = 0.0
                if jtype[i] <= 1:
                    spring = 0.5 * dt * stiffness[o] * (q[iq[i]] - rest[iq[i]])
                elif jtype[i] == 2 and stiffness[o] != 0.0:
                    spring = 0.5 * dt * stiffness[o + j] * w[1][j]
                c_const[o + j] = spring - p[o + j] - dt * tau_k[k, o + j]
        if guess == 0:
            x[:] = q
        elif guess == 1:
            _integrate(jtype, iq, iv, q, delta_prev, x, Rj)
        else:                           # IG3: semi-implicit Euler from v ≈ δ_prev / Δt
            for j in range(nv):
                vs[j] = delta_prev[j] / dt
                tau[j] = tau_k[k, j] - damping[j] * vs[j]
            for i in range(n):
                if jtype[i] <= 1:
                    tau[iv[i]] -= stiffness[iv[i]] * (q[iq[i]] - rest[iq[i]])
                elif jtype[i] == 2 and stiffness[iv[i]] != 0.0:
                    _rotation_log(rest, iq[i], q, iq[i], w[1], 0)
                    for j in range(3):
                        tau[iv[i] + j] -= stiffness[iv[i] + j] * w[1][j]
            code, bad = _aba(parent, jtype, iq, iv, nvj, axis, plane, PR, Pp, S, G, a_grav, q,
                             vs, tau, a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                             a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], ddq)
            if code != 0:
                return 2, k, bad
            for j in range(nv):
                step[j] = dt * (vs[j] + dt * ddq[j])
            _integrate(jtype, iq, iv, q, step, x, Rj)
        _residual(fm, Rk, pk, W_const, c_const, half_d, damped, q, x, dt, Rn, pn, dR, dp, mu,
                  F, f, w)
        it = 0
        while True:
            err = 0.0
            for j in range(nv):
                err = max(err, abs(f[j]) * weights[j])
            if err <= tol:
                break
            if it == max_iter or not np.isfinite(err):
                iters[k] = it
                return 1, k, -1
            for j in range(nv):
                step[j] = dt * f[j]
            code, bad = _impulse_aba(fm, q, step, ddq, a)
            if code != 0:
                return 2, k, bad
            for j in range(nv):
                step[j] = -ddq[j]
            _integrate(jtype, iq, iv, x, step, xn, Rj)
            x[:] = xn
            _residual(fm, Rk, pk, W_const, c_const, half_d, damped, q, x, dt, Rn, pn, dR, dp,
                      mu, F, f, w)
            it += 1
        iters[k] = it
        _gravity_wrench(parent, G, Rn, pn, gvec, g, Fg)
        if not damped:
            _difference(jtype, iq, iv, q, x, w[4], w[5], w[6], Rj, w[1], w[2])
        _momentum_next(fm, Rn, pn, dR, dp, mu, Fg, dt, stiffness, rest, half_d, damped, x, F,
                       p_new, w)
        delta_prev[:] = w[4]            # x ⊖ q_k
        q[:] = x
        p[:] = p_new
        code, bad = _impulse_aba(fm, q, p, v, a)
        if code != 0:
            return 2, k + 1, bad
        Qout[k + 1], Vout[k + 1] = q, v
        _placements(jtype, iq, axis, plane, PR, Pp, q, Rj, Rk, pk)
        E[k + 1] = _energy(fm, Rk, pk, mass, first_moment, gvec, stiffness, rest, q, v, p, Rw,
                           pw, w[1])
    return 0, -1, -1


def _work(model: Model) -> tuple[tuple, tuple]:
    """The scratch of :func:`_residual` / :func:`_difference` (``Rj, t3, xi, y, diff, R0,
    R1``, and the 6×6 and 7×3×3 of the dlog) and of the ABA calls (``0₆, 0_v``, then
    :func:`.multi_dof_kernels._aba`'s arrays)."""
    n, nv = model.njoints, model.nv
    w = (np.zeros((3, 3)), np.zeros(3), np.zeros(6), np.zeros(6), np.zeros(nv),
         np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((6, 6)), np.zeros((7, 3, 3)))
    a = (np.zeros(6), np.zeros(nv), np.zeros((n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 6)),
         np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6, 6)), np.zeros((6, 6)),
         np.zeros((n, 6, 6)), np.zeros((6, 6)), np.zeros((n, 6, 6)), np.zeros(nv),
         np.zeros((n, 6)), np.zeros((6, 6)), np.zeros((3, 3)), np.zeros((6, 12)), np.zeros(6),
         np.zeros(6))
    return w, a


def _flat(model: Model) -> tuple:
    fm = multi_dof_model(model)
    return (fm.parent, fm.jtype, fm.iq, fm.iv, fm.nvj, fm.axis, fm.plane, fm.PR, fm.Pp, fm.S,
            fm.inertia)


def difference(model: Model, q0, q1) -> np.ndarray:
    """Compiled :func:`dynamics.minimal.difference` (``q1 ⊖ q0``) for the models of
    :func:`.multi_dof_kernels.supports`; configurations are taken as valid."""
    require_supported(model, "difference")
    fm = multi_dof_model(model)
    q0 = np.ascontiguousarray(q0, dtype=float)
    q1 = np.ascontiguousarray(q1, dtype=float)
    if q0.shape != (model.nq,) or q1.shape != (model.nq,):
        raise ValueError(f"q0 and q1 must be vectors of length model.nq = {model.nq}, got "
                         f"{q0.shape} and {q1.shape}")
    out = np.empty(model.nv)
    _difference(fm.jtype, fm.iq, fm.iv, q0, q1, out, np.empty((3, 3)), np.empty((3, 3)),
                np.empty((3, 3)), np.empty(3), np.empty(6))
    return out


def simulate_riqn(model: Model, q0, v0, dt: float, steps: int, *, initial_guess: str = "ig3",
                  tol: float = 1e-11, max_iter: int = 50, controller=None,
                  tau=None) -> SimulationResult:
    """:func:`dynamics.minimal.variational.simulate_variational` with ``solver="riqn"``
    compiled (module docstring). Without a controller the whole loop is one call and
    ``step_time`` is the mean over the run; ``controller(t, q, v)`` is evaluated at
    ``(t_k, q_k, v_k)`` and held over the step, one compiled call per step. ``tau``: joint
    forces known in advance, ``(nv,)`` or one row per step (added to the controller's).

    Raises
    ------
    ConvergenceError
        Naming the failing step.
    SingularArticulatedInertiaError
        A joint whose articulated inertia is not positive definite (naming it and the step).
    ValueError
        An unsupported joint, unknown initial guess, wrong lengths, ``dt <= 0``.
    """
    from .configuration import as_vector, step_forces
    from .forces import joint_springs
    from .multi_dof_kernels import _raise_singular

    if initial_guess not in _GUESS_CODES:
        raise ValueError(f"initial_guess must be one of {tuple(_GUESS_CODES)}, "
                         f"got {initial_guess!r}")
    require_supported(model, "the compiled variational loop")
    fm = multi_dof_model(model)
    springs = joint_springs(model)
    steps, q, v = check_run(model, q0, v0, dt, steps)
    tau_k = step_forces(tau, steps, model.nv)
    M0 = crba(model, model.create_data(), q)
    weights = dt / np.diag(M0)
    Q, V = np.empty((steps + 1, model.nq)), np.empty((steps + 1, model.nv))
    E, iters = np.empty(steps + 1), np.zeros(steps, dtype=np.int64)
    w, a = _work(model)
    state = (q.copy(), M0 @ v, v.copy(), dt * v)
    args = (_flat(model), fm.mass, fm.first_moment, fm.gravity,
            np.ascontiguousarray(springs.stiffness, dtype=float),
            np.ascontiguousarray(springs.damping, dtype=float),
            np.ascontiguousarray(springs.rest, dtype=float), state, float(dt),
            _GUESS_CODES[initial_guess], float(tol), int(max_iter), weights)
    times = np.empty(steps)
    if controller is None:
        start = time.perf_counter()
        status, k, joint = _simulate(*args, tau_k, True, Q, V, E, iters, w, a)
        times[:] = (time.perf_counter() - start) / max(steps, 1)
    else:
        status, k, joint = _simulate(*args, tau_k[:0], True, Q, V, E, iters, w, a)
        for step in range(steps):
            start = time.perf_counter()
            forces = tau_k[step:step + 1].copy()
            forces[0] += as_vector(controller(step * dt, state[0].copy(), state[2].copy()),
                                   model.nv, "controller(t, q, v)", "model.nv")
            status, k, joint = _simulate(*args, forces, False, Q[step:step + 2],
                                         V[step:step + 2], E[step:step + 2],
                                         iters[step:step + 1], w, a)
            times[step] = time.perf_counter() - start
            if status:
                k += step
                break
    if status == 1:
        raise ConvergenceError(
            f"step {k} (t = {k * dt:g}): riqn did not converge in {max_iter} iterations (tol "
            f"{tol:g}; {convergence_advice('riqn')})", step=int(k),
            iterations=int(max_iter))
    if status == 2:
        _raise_singular(model, joint, f" at step {k}")
    return SimulationResult(dt * np.arange(steps + 1), Q, V, E, times, "riqn", iters)
