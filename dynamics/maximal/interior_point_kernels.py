"""A whole contact step in one compiled (numba) call: the update rules, the applied forces, the
contact velocity maps and the interior-point loop, with no Python per iteration.

The algorithm is the Mehrotra predictor-corrector of :meth:`.Simulation._interior_point`
(Brüdigam et al. 2023, App. D; Nocedal & Wright 2006, Alg. 14.3 and §19.3), which stays the
readable reference; the constants, the iteration counts and the order of the floating-point
operations are the same (the tests compare the two on every contact model). Per iteration,
with ``μ`` the mean complementarity product and one factorization of ``F = ∂f/∂s`` (of its
condensed form, :mod:`.condensation`):

1. predictor: ``F Δ_a = -f_0`` (refactor and solve in one call,
   :func:`.condensation.condensed_refactor_solve`), ``α_a`` to the boundary, ``μ_a`` there and
   the centring target ``σμ = max((μ_a/μ)³ μ, tol/100)`` (N&W 14.34);
2. corrector ``F Δ = -f_σμ - Δ_a u_a ∘ Δ_a u_b`` (N&W 14.35) with the same factor
   (:func:`.condensation.condensed_solve`) and up to three rounds of iterative refinement;
3. fraction to the boundary ``τ = max(0.995, 1 - μ)`` (N&W 19.9) and a halving line search on
   ``‖f_σμ‖₂``: 8 halvings of the corrector, then 40 of the plain Newton (centring) step.

Converged when ``‖f_0‖∞ <= tol``. A warm start (the last step's contact variables floored at
``WARM_FLOOR``, or at ``QUIET_FLOOR`` for a closed contact after a quiet step: see
:func:`warm_floor`) that fails by the iteration cap or the line search is retried once from the
cold start, as :meth:`.Simulation.step` does. The outcome is a
:class:`.newton_kernels.NewtonStatus` code that Python turns into a :class:`.NewtonError`.

Contact groups (contacts with the same number ``m`` of friction directions) come as a tuple of
equally typed tuples (:meth:`.StepSystem.contact_step` builds it), looped over in compiled code.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from graphsolve.lowlevel import STATUS_NONFINITE

from . import contact_kernels as ck
from .condensation import condensed_refactor_solve, condensed_solve, full_residual
from .force_kernels import _applied_forces_into, forced_step_kernel
from .newton_kernels import (
    _CONVERGED,
    _ITERATION_CAP,
    _LINE_SEARCH_FAILED,
    _NONFINITE,
    _RATE_LIMIT,
    _SINGULAR_PIVOT,
    _copy,
    _copy_vec,
    _jacobian,
    _max_abs,
    _residual,
    _rot,
    finish_step,
    start_step,
    step_kernel,
)

__all__ = ["contact_step_kernel", "step_kernel_plain_first", "plain_first", "warm_floor",
           "TAU", "WARM_FLOOR", "QUIET_FLOOR", "QUIET_ITERATIONS", "CLOSED_SLACK"]

#: Fraction to the boundary of the interior-point steps (Nocedal & Wright eq. 19.9).
TAU = 0.995
#: Warm start: the previous step's contact variables raised to at least this value.
WARM_FLOOR = 1e-3
#: Warm start after a quiet step (one that converged in at most ``QUIET_ITERATIONS``
#: interior-point iterations): the floor of a contact that was closed (``s_φ < CLOSED_SLACK``).
QUIET_FLOOR = 3e-4
QUIET_ITERATIONS = 3
CLOSED_SLACK = 1e-6


@njit(cache=True, error_model="numpy", _nrt=False)
def warm_floor(slack, last_iterations):
    """The warm start's floor of one contact's variables: :data:`QUIET_FLOOR` if the contact
    was closed (its last distance slack ``s_φ`` below :data:`CLOSED_SLACK`) and the last step
    was a quiet interior-point step (``0 <= last_iterations <= QUIET_ITERATIONS``; ``-1``: no
    interior-point step to go by), else :data:`WARM_FLOOR`.

    A resting contact's pairs then start with complementarity products about three times
    smaller and converge in about two iterations instead of three (``sphere_chain(10)``, 1000
    steps: 2.05 instead of 3.0 per step). After a step that needed more (an impact, a contact
    opening), and for open contacts, the floor stays at ``WARM_FLOOR``: from a lower floor the
    interior point needs more iterations to change which contacts are active. A uniform floor
    of 1e-4 made ``sphere_chain(100)``'s impact take 20-40 % more iterations; 1e-4 after quiet
    steps made one step of the Minitaur's collapse take 10-12 iterations instead of 4, and the
    compiled and reference paths then parted at the tolerance's level. Long chains with many
    contact events pay for it: ``sphere_chain(100)`` took 3.65 instead of 3.44 iterations per
    step over 1000 steps.
    """
    if slack < CLOSED_SLACK and 0 <= last_iterations <= QUIET_ITERATIONS:
        return QUIET_FLOOR
    return WARM_FLOOR


@njit(cache=True, error_model="numpy", _nrt=False)
def _ip_residual(s, barrier, x1, q1, v0, w0, dt, mass, inertia, external, damping, G, joints,
                 groups, newton, cwork, f):
    """``f(s)`` into ``f`` with every complementarity row ``= barrier`` (``StepSystem.residual``
    with ``StepSystem.barrier``); ``newton``: :func:`.newton_kernels.newton_work`, ``cwork``:
    :func:`.contact_kernels.contact_work`."""
    parent, child, p_a, p_b, q_off, select, nc, jrow = joints[:8]
    # bool(False): a runtime bool, the signature the Newton steps compile (newton_kernels)
    _residual(s, x1, q1, v0, w0, mass, inertia, dt, bool(False), external,  # noqa: UP018
              damping, damping.shape[0] > 0, G, parent, child, p_a, p_b, q_off, select, nc, jrow,
              newton, f)
    for g in groups:
        (m, body, other, kind, point, radius, radius_b, half, limit, bound, friction, r0, P,
         diag_ptr, bc_a, cb_a, bc_b, cb_b) = g
        ck._contact_residual_into(s, x1, q1, dt, barrier, m, body, other, kind, point, radius,
                                  radius_b, half, limit, bound, friction, r0, P, f, cwork)


@njit(cache=True, error_model="numpy", _nrt=False)
def _ip_jacobian(s, data, x1, q1, dt, mass, inertia, diag_const, G, joints, groups, newton,
                 cwork, constant):
    """``F(s)`` into the BlockMatrix buffer ``data`` (``StepSystem.jacobian``); the blocks fixed
    during a step (``-Gᵀ``, :func:`.newton_kernels._jacobian`, and the contacts' ``P`` and
    constant entries, :func:`.contact_kernels._contact_jacobian_into`) only with
    ``constant``."""
    parent, child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb = joints[:10]
    _jacobian(s, data, x1, q1, mass, inertia, dt, False, diag_const, G, parent, child, p_a,
              p_b, q_off, select, nc, ptr_bj, ptr_jb, newton, constant)
    for g in groups:
        (m, body, other, kind, point, radius, radius_b, half, limit, bound, friction, r0, P,
         diag_ptr, bc_a, cb_a, bc_b, cb_b) = g
        ck._contact_jacobian_into(s, x1, q1, dt, m, body, other, kind, point, radius, radius_b,
                                  half, limit, bound, friction, r0, P, diag_ptr, bc_a, cb_a,
                                  bc_b, cb_b, data, constant, cwork)


@njit(cache=True, error_model="numpy", _nrt=False)
def _resolve(handle, blocks, data, rhs, x, refine, atol, r, rt, xt, tmp):
    """``x = F⁻¹ rhs`` with the current factor of the condensed matrix (``StepSystem.resolve``;
    ``handle``: :meth:`.Condensation.solver`, :func:`.condensation.condensed_solve`): with
    ``refine``, up to three rounds of iterative refinement while the max-norm of the full
    matrix's ``F x - rhs`` halves (the best iterate kept), none when it is already
    ``<= atol``. ``blocks``: :attr:`.Condensation.plain_blocks` of ``data``
    (:func:`.condensation.full_residual`); ``r, rt, xt, tmp`` are scratch."""
    condensed_solve(handle, data, rhs, x)
    if not refine:
        return
    rn = full_residual(handle[2], blocks, data, x, rhs, r)
    if rn <= atol:
        return
    for _ in range(3):
        condensed_solve(handle, data, r, tmp)
        for i in range(x.shape[0]):
            xt[i] = x[i] - tmp[i]
        rtn = full_residual(handle[2], blocks, data, xt, rhs, rt)
        if not rtn < 0.5 * rn:
            if rtn < rn:
                _copy_vec(x, xt)
            break
        _copy_vec(x, xt)
        rn = rtn
        r, rt = rt, r


@njit(cache=True, error_model="numpy", _nrt=False)
def _interior_point(s, tol, max_iter, refine, refine_atol, history, handle, data, blocks,
                    x1, q1, v0, w0, dt, mass, inertia, external, damping, diag_const, G, joints,
                    groups, pairs, work, newton):
    """The interior-point loop of :meth:`.Simulation._interior_point` on ``s`` in place.

    ``pairs = (row, ia, ib, positive)``: the complementarity rows, the indices of their two
    variables and all positive variables. ``work = (d_aff, centre, corrector, ds, r, rt, xt,
    tmp, cwork)`` (``N`` each, then :func:`.contact_kernels.contact_work`); ``newton``:
    :func:`.newton_kernels.newton_work` (its residual buffers and trial too). ``handle``: the
    condensed solver (:meth:`.Condensation.solver`); ``data``: the full matrix's values;
    ``blocks``: :attr:`.Condensation.plain_blocks`. Returns
    ``(code, iterations, position, target)`` (``target`` the centring target of a failed line
    search).
    """
    row, ia, ib, positive = pairs
    d_aff, centre, corrector, ds, r, rt, xt, tmp, cwork = work[:9]
    f, ft, trial = newton[0], newton[1], newton[2]
    target_min = 0.01 * tol
    _ip_residual(s, 0.0, x1, q1, v0, w0, dt, mass, inertia, external, damping, G, joints,
                 groups, newton, cwork, f)
    norm = _max_abs(f)
    history[0] = norm
    iters = 0
    while norm > tol:
        if iters >= max_iter:
            return _ITERATION_CAP, iters, -1, 0.0
        mu = ck.mean_product(s, s, 0.0, ia, ib)
        # predictor (affine scaling) direction, without iterative refinement
        _ip_jacobian(s, data, x1, q1, dt, mass, inertia, diag_const, G, joints, groups, newton,
                     cwork, iters == 0)
        for i in range(f.shape[0]):
            tmp[i] = -f[i]
        status = condensed_refactor_solve(handle, data, tmp, d_aff, iters == 0)
        if status == STATUS_NONFINITE:
            return _NONFINITE, iters, -1, 0.0
        if status >= 0:
            return _SINGULAR_PIVOT, iters, status, 0.0
        alpha = ck.step_to_boundary(s, d_aff, positive, 1.0)
        mu_aff = ck.mean_product(s, d_aff, alpha, ia, ib)
        target = max(min(1.0, (mu_aff / mu) ** 3.0) * mu, target_min)
        merit = ck.corrector_rhs(f, target, row, ia, ib, d_aff, centre, corrector)
        tau = max(TAU, 1.0 - mu)
        found = False
        for attempt in range(2):          # Mehrotra's corrector, then the centring step
            rhs = corrector if attempt == 0 else centre
            _resolve(handle, blocks, data, rhs, ds, refine, refine_atol, r, rt, xt, tmp)
            alpha = ck.step_to_boundary(s, ds, positive, tau)
            for _ in range(8 if attempt == 0 else 40):
                for i in range(s.shape[0]):
                    trial[i] = s[i] + alpha * ds[i]
                _ip_residual(trial, target, x1, q1, v0, w0, dt, mass, inertia, external,
                             damping, G, joints, groups, newton, cwork, ft)
                if np.sqrt(np.dot(ft, ft)) < merit:     # NaN compares False: halve
                    found = True
                    break
                alpha *= 0.5
            if found:
                break
        if not found:
            return _LINE_SEARCH_FAILED, iters, -1, target
        _copy_vec(s, trial)
        f, ft = ft, f
        for k in range(row.shape[0]):
            f[row[k]] += target
        norm = _max_abs(f)
        iters += 1
        history[iters] = norm
    return _CONVERGED, iters, -1, 0.0


@njit(cache=True, error_model="numpy")
def _distance_now(x, q, c, body, other, kind, point, radius, radius_b, half, limit, bound):
    """Signed distance ``φ(z)`` of contact ``c`` at the configuration ``(x, q)``
    (:meth:`.ContactGroup.distance`)."""
    return _distance_now_into(x, q, c, body, other, kind, point, radius, radius_b, half, limit,
                              bound, ck.contact_work(0))


@njit(cache=True, error_model="numpy", _nrt=False)
def _distance_now_into(x, q, c, body, other, kind, point, radius, radius_b, half, limit, bound,
                       cwork):
    """:func:`_distance_now` with the scratch ``cwork`` of
    :func:`.contact_kernels.contact_work`."""
    a, k = body[c], kind[c]
    if k == 1:
        return x[a, 2] - radius[c]
    if k == 4:                        # a joint limit, its angle about the range's middle
        return ck.limit_distance_now(x, q, c, limit, bound, cwork)
    Q, v3 = cwork[0], cwork[2]
    if k == 0:
        _rot(q[a], Q)
        return x[a, 2] + (Q[2, 0] * point[c, 0] + Q[2, 1] * point[c, 1]
                          + Q[2, 2] * point[c, 2])
    b = other[c]
    d, p, cl, dd = v3[0], v3[1], v3[2], v3[3]
    for i in range(3):
        d[i] = x[a, i] - x[b, i]
    if k == 2:
        return np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - radius[c] - radius_b[c]
    _rot(q[b], Q)
    for i in range(3):
        p[i] = Q[0, i] * d[0] + Q[1, i] * d[1] + Q[2, i] * d[2]
    dist, _ = ck._box_geometry(p, half[c], cl, dd)
    return dist - radius[c]


@njit(cache=True, error_model="numpy", _nrt=False)
def _contact_start(s, u, warm, last_iterations, x1, q1, groups, cwork):
    """The contact rows of the starting point: the last step's variables ``u`` floored at
    :func:`warm_floor` (``warm``; ``last_iterations`` of the last step), else
    :meth:`.ContactGroup.initial_variables` at ``z₁`` (``cwork``:
    :func:`.contact_kernels.contact_work`)."""
    for g in groups:
        (m, body, other, kind, point, radius, radius_b, half, limit, bound, friction,
         r0) = g[:12]
        size = 2 if m == 0 else 4 + 2 * m
        for c in range(body.shape[0]):
            r = r0[c]
            if warm:
                floor = warm_floor(u[r + 1], last_iterations)
                for i in range(size):
                    s[r + i] = max(u[r + i], floor)
                continue
            for i in range(size):
                s[r + i] = 1.0
            phi = _distance_now_into(x1, q1, c, body, other, kind, point, radius, radius_b, half,
                                     limit, bound, cwork)
            s[r + 1] = max(phi, 1.0)
            if m:
                s[r + 3 + 2 * m] = max(friction[c], 1.0)


@njit(cache=True, error_model="numpy", _nrt=False)
def _plain_step(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, tol, max_iter,
                history, mass, inertia, dt, gravity_wrench, joint_forces, has_forces, plain,
                reuse):
    """The step without contacts (:meth:`.StepSystem.step_compiled` of
    :meth:`.StepSystem.joint_system`): :func:`.newton_kernels.step_kernel`, or
    :func:`.force_kernels.forced_step_kernel` with joint springs, dampers or forces, on the
    state in place. ``plain``: :meth:`.StepSystem._plain_arguments`; ``reuse``: the
    simplified-Newton rule of :func:`.newton_kernels.newton_kernel`. Returns ``(code,
    iterations, position)``."""
    handle, data, joints, forces_work, newton, s, applied = plain[:7]
    (parent, child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb, free, dof, tdof, rdof,
     rot_axis, spring, spring_offset, damper, damped_pairs, coupling_dst) = joints
    G, rate, external, damping, diag_const, coupling, force_scratch = forces_work
    if applied or has_forces:
        return forced_step_kernel(
            x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, tol, max_iter, history,
            handle, data, mass, inertia, dt, gravity_wrench, joint_forces, has_forces, parent,
            child, p_a, p_b, q_off, select, free, nc, dof, tdof, rdof, rot_axis, spring,
            spring_offset, damper, damped_pairs, coupling_dst, jrow, ptr_bj, ptr_jb, G, rate,
            external, damping, diag_const, coupling, newton, force_scratch, reuse)
    return step_kernel(
        x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, tol, max_iter, history,
        handle, data, mass, inertia, dt, gravity_wrench, diag_const, G, parent, child, p_a, p_b,
        q_off, select, nc, jrow, ptr_bj, ptr_jb, newton, reuse)


@njit(cache=True, error_model="numpy", _nrt=False)
def _open_contacts(sv, x1, q1, dt, groups, cwork, out):
    """After a step without contacts to ``z₂`` (``x1, q1`` its ``z₁``, ``sv`` its body
    velocities in the first rows): each contact's rows of ``out`` get ``γ = 0``,
    ``s_φ = φ(z₂)`` (:func:`.contact_kernels.open_contacts`); returns whether every contact
    is open (``φ(z₂) >= 0``)."""
    ok = True
    for g in groups:
        (m, cbody, other, kind, point, radius, radius_b, half, limit, bound, friction,
         r0) = g[:12]
        if not ck.open_contacts(sv, x1, q1, dt, cbody, other, kind, point, radius, radius_b,
                                half, limit, bound, r0, out, cwork):
            ok = False
    return ok


@njit(cache=True, error_model="numpy", _nrt=False)
def _any_closed(u, groups):
    """Whether the last step's contact variables ``u`` have a contact with ``γ > s_φ``."""
    for g in groups:
        cbody, r0 = g[1], g[11]
        for c in range(cbody.shape[0]):
            if u[r0[c]] > u[r0[c] + 1]:
                return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def _copy_state(src, dst):
    """Copy the eight state arrays ``(x, q, v, w, λ, previous v, w, λ)`` of ``src`` into
    those of ``dst``."""
    _copy(dst[0], src[0])
    _copy(dst[1], src[1])
    _copy(dst[2], src[2])
    _copy(dst[3], src[3])
    _copy(dst[4], src[4])
    _copy(dst[5], src[5])
    _copy(dst[6], src[6])
    _copy(dst[7], src[7])


@njit(cache=True, error_model="numpy", _nrt=False)
def _store_contacts(s, u, groups):
    """The contact variables of ``s`` into their rows of ``u``."""
    for g in groups:
        m, cbody = g[0], g[1]
        r0 = g[11]
        size = 2 if m == 0 else 4 + 2 * m
        for c in range(cbody.shape[0]):
            for i in range(size):
                u[r0[c] + i] = s[r0[c] + i]


@njit(cache=True, error_model="numpy", _nrt=False)
def plain_first(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, u, last, s, tol,
                max_iter, history, mass, inertia, dt, gravity_wrench, joint_forces, has_forces,
                groups, cwork, plain, reuse):
    """A step of frictionless contacts (:attr:`.StepSystem.inactive_first`) first taken
    without them: unless the last step's ``u`` closed a contact (``γ > s_φ``), the step of
    :meth:`.StepSystem.joint_system` (:func:`_plain_step`; ``plain`` =
    :meth:`.StepSystem._plain_arguments`, then an ``(x, q, v, w, λ, previous v, w, λ)``
    backup). If it converges with every contact open at its ``z₂`` (:func:`_open_contacts`),
    it is the step's solution: the state is updated, ``u`` gets ``γ = 0``, ``s_φ = φ(z₂)``
    (the complementarity exact), ``last[0]`` -1 (no interior-point step, see
    :func:`warm_floor`), ``history`` its residuals. Otherwise the state is restored
    for :func:`contact_step_kernel`. Returns ``(kept, code, iterations, position)``."""
    if _any_closed(u, groups):
        return False, _CONVERGED, 0, -1
    backup = plain[7]
    _copy_state((x, q, v, w, lam, prev_v, prev_w, prev_lam), backup)
    code, it, pos = _plain_step(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, tol,
                                max_iter, history, mass, inertia, dt, gravity_wrench,
                                joint_forces, has_forces, plain, reuse)
    if code == _CONVERGED and _open_contacts(plain[5], x, q, dt, groups, cwork, s):
        _store_contacts(s, u, groups)
        last[0] = -1
        return True, code, it, pos
    _copy_state(backup, (x, q, v, w, lam, prev_v, prev_w, prev_lam))
    return False, code, it, pos


@njit(cache=True, error_model="numpy", _nrt=False)
def step_kernel_plain_first(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, u,
                            last, warm_start, quiet_floor, s, tol, max_iter, refine,
                            refine_atol, history, handle, data, blocks, mass, inertia, dt,
                            gravity_wrench, joint_forces, has_forces, joints, groups, pairs,
                            forces_work, work, newton, s_start, inactive_first, plain, reuse):
    """:func:`contact_step_kernel`, after :func:`plain_first` when ``inactive_first``
    (:meth:`.StepSystem.contact_step`; ``reuse`` for the step without contacts, see
    :func:`.newton_kernels.newton_kernel`); returns as :func:`contact_step_kernel`."""
    if inactive_first:
        kept, code, it, pos = plain_first(x, q, v, w, lam, prev_v, prev_w, prev_lam,
                                          extrapolate, u, last, s, tol, max_iter, history,
                                          mass, inertia, dt, gravity_wrench, joint_forces,
                                          has_forces, groups, work[8], plain, reuse)
        if kept:
            return code, it, pos, 0.0
    return contact_step_kernel(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, u,
                               last, warm_start, quiet_floor, s, tol, max_iter, refine,
                               refine_atol, history, handle, data, blocks, mass, inertia, dt,
                               gravity_wrench, joint_forces, has_forces, joints, groups, pairs,
                               forces_work, work, newton, s_start)


@njit(cache=True, error_model="numpy", _nrt=False)
def contact_step_kernel(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, u, last,
                        warm_start, quiet_floor, s, tol, max_iter, refine, refine_atol,
                        history, handle, data, blocks, mass, inertia, dt, gravity_wrench,
                        joint_forces, has_forces, joints, groups, pairs, forces_work, work,
                        newton, s_start):
    """One whole integrator step with contacts (:meth:`.Simulation.step` with contacts).

    :func:`.newton_kernels.start_step` (update rules, constraint Jacobians at ``z₁``, the
    start ``s`` from ``(v, ω, λ)``, possibly extrapolated), the applied forces at ``z₁``
    (:func:`.force_kernels.applied_forces_kernel`), the contact velocity maps ``P`` at ``z₁``,
    the contact rows of the start (:func:`_contact_start`; warm when ``warm_start`` and ``u``
    holds a nonzero contact variable, floored as :func:`warm_floor` says with the last step's
    iterations ``last[0]`` if ``quiet_floor``, at :data:`WARM_FLOOR` otherwise; a step that
    converges sets ``last[0]`` to its own iterations, one that fails leaves it), the
    interior-point loop (:func:`_interior_point`; retried once from the cold start after a
    failed warm start) and, on success, :func:`.newton_kernels.finish_step` and the new
    contact variables into their rows of ``u``.

    ``joints`` = ``(parent, child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb, free,
    dof, tdof, rdof, rot_axis, spring, spring_offset, damper, damped_pairs, coupling_dst)``;
    ``forces_work`` = ``(G, rate, external, damping, diag_const, coupling, force_scratch)``
    (:func:`.force_kernels.forced_step_kernel`, :func:`.force_kernels.force_work`);
    ``blocks``, ``work`` and ``newton``: as :func:`_interior_point`; ``s_start`` (N,) scratch:
    the step allocates nothing. Returns ``(code, iterations, position, target)``: a
    :class:`.newton_kernels.NewtonStatus` code, the iterations of the last attempt
    (``history[:iterations + 1]`` its residual max-norms), the singular pivot's position or the
    body over the rate limit, the target of a failed line search.
    """
    (parent, child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb, free, dof, tdof, rdof,
     rot_axis, spring, spring_offset, damper, damped_pairs, coupling_dst) = joints
    G, rate, external, damping, diag_const, coupling, force_scratch = forces_work
    cwork = work[8]
    body = start_step(x, q, v, w, lam, prev_v, prev_w, prev_lam, extrapolate, s, dt, parent,
                      child, p_a, p_b, q_off, select, nc, jrow, G, newton)
    x1, q1 = newton[3], newton[4]
    if body >= 0:
        return _RATE_LIMIT, 0, body, 0.0
    _applied_forces_into(x1, q1, gravity_wrench, joint_forces, has_forces, parent, child, p_a,
                         p_b, q_off, free, dof, tdof, rdof, rot_axis, spring, spring_offset,
                         damper, damped_pairs, coupling_dst, rate, external, damping,
                         diag_const, coupling, data, force_scratch, newton[9], newton[10])
    warm = False
    for g in groups:
        (m, cbody, other, kind, point, radius, radius_b, half, limit, bound, friction, r0, P,
         diag_ptr, bc_a, cb_a, bc_b, cb_b) = g
        ck._velocity_maps_into(x1, q1, m, cbody, other, kind, point, radius, radius_b, half,
                               limit, bound, P, cwork)
        size = 2 if m == 0 else 4 + 2 * m
        for c in range(cbody.shape[0]):
            for i in range(size):
                if u[r0[c] + i] != 0.0:
                    warm = warm_start
    _copy_vec(s_start, s)
    _contact_start(s, u, warm, last[0] if quiet_floor else -1, x1, q1, groups, cwork)
    code, it, pos, target = _interior_point(
        s, tol, max_iter, refine, refine_atol, history, handle, data, blocks, x1, q1, v, w,
        dt, mass, inertia, external, damping, diag_const, G, joints, groups, pairs, work, newton)
    if warm and (code == _ITERATION_CAP or code == _LINE_SEARCH_FAILED):
        # a warm start can sit next to a degenerate complementarity pair and jam the
        # interior-point method: retry the step once from the cold start
        _copy_vec(s, s_start)
        _contact_start(s, u, False, -1, x1, q1, groups, cwork)
        code, it, pos, target = _interior_point(
            s, tol, max_iter, refine, refine_atol, history, handle, data, blocks, x1, q1,
            v, w, dt, mass, inertia, external, damping, diag_const, G, joints, groups, pairs,
            work, newton)
    if code != _CONVERGED:
        return code, it, pos, target
    _store_contacts(s, u, groups)
    last[0] = it
    code, it, pos = finish_step(code, it, pos, x, q, v, w, lam, x1, q1, s, nc, jrow)
    return code, it, pos, 0.0
