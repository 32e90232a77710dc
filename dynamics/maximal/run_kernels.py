"""Many integrator steps in one compiled (numba) call: the loop of :meth:`.Simulation.run`
without a controller or with a PD controller (:class:`.control.PDController`, evaluated here
by :func:`.control_kernels.pd_forces`).

Each step is the whole-step kernel :meth:`.Simulation.step` calls
(:func:`.newton_kernels.step_kernel`, :func:`.force_kernels.forced_step_kernel` or
:func:`.interior_point_kernels.contact_step_kernel`) with the same arguments, start
(extrapolated or not) and work buffers, so the trajectory, the iterations and the state left
behind are those of the Python step loop, bit for bit; only the per-step Python overhead
(argument passing, unpacking, copies into the recording) is gone. After each converged step
the kernels copy the state into row ``k`` of the recording arrays, the iteration count into
``its[k]``, optionally the residual max-norms into a flat buffer and the contact variables
into their row. They stop at the first failing step and return its status, so that Python
raises the error the step loop would raise, with the same state.

The loop kernels run without ``fastmath``: the time ``t`` is accumulated by the same
additions ``t += Δt`` as :meth:`.Simulation.step`'s. Every flag the step kernels branch on
(``has_forces`` included) is a run-time argument, never a constant of the loop: LLVM inlines
the step kernels here, and a constant branch merged their blocks into ones where it contracted
other multiply-adds (1-ulp differences from the step loop on a damped chain).
"""
from __future__ import annotations

from numba import njit

from .control_kernels import fallen, pd_forces
from .force_kernels import forced_step_kernel
from .interior_point_kernels import contact_step_kernel, plain_first
from .newton_kernels import _CONVERGED, _copy, step_kernel

__all__ = ["joint_run_kernel", "contact_run_kernel"]


@njit(cache=True, error_model="numpy", inline="always")
def _record(k, it, x, q, v, w, xs, qs, vs, ws, its, history, record_history, hflat, hpos):
    for i in range(x.shape[0]):
        for c in range(3):
            xs[k, i, c] = x[i, c]
            vs[k, i, c] = v[i, c]
            ws[k, i, c] = w[i, c]
        for c in range(4):
            qs[k, i, c] = q[i, c]
    its[k] = it
    if record_history:
        for j in range(it + 1):
            hflat[hpos + j] = history[j]
        hpos += it + 1
    return hpos


@njit(cache=True, error_model="numpy", _nrt=False)
def joint_run_kernel(first, count, t, dt, extrapolate, started, x, q, v, w, lam, prev_v,
                     prev_w, prev_lam, s, tol, max_iter, history, handle, data, mass, inertia,
                     gravity_wrench, applied, joint_forces, has_forces, has_control, control,
                     control_work, joints, forces_work, work, xs, qs, vs, ws, its,
                     record_history, hflat, reuse):
    """Steps ``first .. first + count - 1`` of a run without contacts (joint springs and
    dampers included; the constant ``joint_forces`` read only if ``has_forces``; with
    ``has_control``, ``joint_forces`` are instead rewritten before each step by the PD
    controller's :func:`.control_kernels.pd_forces`, schedule row ``k - first`` of
    ``control``, and taken if that row drives any joint; the loop stops before a step at
    which the controller's body has fallen, :func:`.control_kernels.fallen`, returning
    ``CONVERGED`` with fewer than ``count`` steps done).

    Step ``k`` is :func:`.newton_kernels.step_kernel` (``applied`` false: gravity alone) or
    :func:`.force_kernels.forced_step_kernel` on the state ``x, q, v, w, lam`` (in place),
    starting from the extrapolation of ``prev_*`` when ``extrapolate`` and a last step exists
    (``started``, or ``k > first``); without it ``prev_*`` first receive the current state,
    as :meth:`.Simulation.step` makes them then. On success row ``k`` of ``xs, qs, vs, ws``
    gets the new state, ``its[k]`` the iterations and, with ``record_history``, the
    ``iterations + 1`` residual max-norms go to ``hflat`` one step after the other.
    ``joints`` and ``forces_work`` are the tuples of
    :func:`.interior_point_kernels.contact_step_kernel`, ``work`` the scratch of
    :func:`.newton_kernels.newton_work`; ``reuse``: the simplified-Newton rule of
    :func:`.newton_kernels.newton_kernel`.

    Returns ``(code, iterations, position, done, t, used)``: the status of the last step run
    (``CONVERGED`` when all ``count`` converged; otherwise the failing step's code, iterations
    and position, as ``step_kernel``), the converged steps, ``t`` plus ``Δt`` per converged
    step and the entries of ``hflat`` written.
    """
    (parent, child, p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb, free, dof, tdof, rdof,
     rot_axis, spring, spring_offset, damper, damped_pairs, coupling_dst) = joints
    G, rate, external, damping, diag_const, coupling, force_scratch = forces_work
    hpos = 0
    code, it, pos = _CONVERGED, 0, -1
    done = 0
    for k in range(first, first + count):
        ex = extrapolate and (started or k > first)
        if not ex:
            _copy(prev_v, v)
            _copy(prev_w, w)
            _copy(prev_lam, lam)
        forced = has_forces
        if has_control:
            if fallen(x, q, control[6]):
                break               # (CONVERGED, fewer than count: the controller's stop)
            forced = pd_forces(k - first, x, q, v, w, control, control_work, joint_forces)
        if applied or forced:
            code, it, pos = forced_step_kernel(
                x, q, v, w, lam, prev_v, prev_w, prev_lam, ex, s, tol, max_iter, history,
                handle, data, mass, inertia, dt, gravity_wrench, joint_forces, forced, parent,
                child, p_a, p_b, q_off, select, free, nc, dof, tdof, rdof, rot_axis, spring,
                spring_offset, damper, damped_pairs, coupling_dst, jrow, ptr_bj, ptr_jb, G,
                rate, external, damping, diag_const, coupling, work, force_scratch, reuse)
        else:
            code, it, pos = step_kernel(
                x, q, v, w, lam, prev_v, prev_w, prev_lam, ex, s, tol, max_iter, history,
                handle, data, mass, inertia, dt, gravity_wrench, diag_const, G, parent, child,
                p_a, p_b, q_off, select, nc, jrow, ptr_bj, ptr_jb, work, reuse)
        if code != _CONVERGED:
            break
        t += dt
        done += 1
        hpos = _record(k, it, x, q, v, w, xs, qs, vs, ws, its, history, record_history,
                       hflat, hpos)
    return code, it, pos, done, t, hpos


@njit(cache=True, error_model="numpy", _nrt=False)
def contact_run_kernel(first, count, t, dt, extrapolate, started, x, q, v, w, lam, prev_v,
                       prev_w, prev_lam, u, last, warm_start, quiet_floor, s, tol, max_iter,
                       refine, refine_atol, history, handle, data, blocks, mass, inertia,
                       gravity_wrench, joint_forces, has_forces, has_control, control,
                       control_work, joints, groups, pairs, forces_work, work, newton, s_start,
                       inactive_first, plain, xs, qs, vs, ws, its, record_history, hflat,
                       record_contacts, crow, us, reuse):
    """Steps ``first .. first + count - 1`` of a run with contacts (the constant
    ``joint_forces`` read only if ``has_forces``, or rewritten before each step by the PD
    controller ``control`` with ``has_control``, as in :func:`joint_run_kernel`).

    Step ``k`` is, with ``inactive_first``, first :func:`.interior_point_kernels.plain_first`
    (the step without contacts, ``plain``; kept if every contact stays open), otherwise
    :func:`.interior_point_kernels.contact_step_kernel` (warm start from ``u`` and the last
    step's interior-point iterations ``last[0]``, which each step updates, read if
    ``quiet_floor``; the cold retry; extrapolated when ``extrapolate`` and a last step
    exists: ``started`` or ``k > first``); recorded as :func:`joint_run_kernel`, and with
    ``record_contacts`` the new contact variables ``u[crow]`` into ``us[k]``; ``reuse`` as
    there. Returns ``(code,
    iterations, position, target, done, t, used)``: ``contact_step_kernel``'s ``(code,
    iterations, position, target)`` of the last step run, then as :func:`joint_run_kernel`.
    """
    hpos = 0
    code, it, pos, target = _CONVERGED, 0, -1, 0.0
    done = 0
    for k in range(first, first + count):
        ex = extrapolate and (started or k > first)
        kept, target = False, 0.0
        forced = has_forces
        if has_control:
            if fallen(x, q, control[6]):
                break               # (CONVERGED, fewer than count: the controller's stop)
            forced = pd_forces(k - first, x, q, v, w, control, control_work, joint_forces)
        if inactive_first:
            kept, code, it, pos = plain_first(
                x, q, v, w, lam, prev_v, prev_w, prev_lam, ex, u, last, s, tol, max_iter,
                history, mass, inertia, dt, gravity_wrench, joint_forces, forced, groups,
                work[8], plain, reuse)
        if not kept:
            code, it, pos, target = contact_step_kernel(
                x, q, v, w, lam, prev_v, prev_w, prev_lam, ex, u, last, warm_start,
                quiet_floor, s, tol, max_iter, refine, refine_atol, history, handle, data,
                blocks, mass, inertia, dt, gravity_wrench, joint_forces, forced, joints,
                groups, pairs, forces_work, work, newton, s_start)
        if code != _CONVERGED:
            break
        t += dt
        done += 1
        hpos = _record(k, it, x, q, v, w, xs, qs, vs, ws, its, history, record_history,
                       hflat, hpos)
        if record_contacts:
            for j in range(crow.shape[0]):
                us[k, j] = u[crow[j]]
    return code, it, pos, target, done, t, hpos
