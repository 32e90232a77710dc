"""numba kernels of the joint-space PD controller (:class:`.control.PDController`).

A controller's input for step ``k`` is ``u_j = kp_j e_j + kd_j (θ̇_d - θ̇_j)`` on every joint
``j`` it drives at that step, with ``e_j = θ_d - θ_j`` taken the short way round
(``(e + π) mod 2π - π``) for angles. ``θ_j`` are the joint coordinates
(:func:`.force_kernels._joint_coordinates`, the angle ``2 atan2(aᵀv, s)`` of a revolute joint,
``C_Tᵀ g_T`` of a prismatic one) and ``θ̇_j`` their rates, the first row of the joint's rate
map (:func:`.force_kernels._joint_rate_map`, :func:`.joints.rate_map`) times
``[v_a, ω_a, v_b, ω_b]``, as :meth:`.MaximalModel.joint_velocities`.

The same kernels give :meth:`.Simulation.minimal_coordinates` /
:meth:`~.Simulation.minimal_velocities` their numbers and the compiled run loop
(:mod:`.run_kernels`) its joint forces, so a PD-controlled :meth:`.Simulation.run` in compiled
chunks and its Python step loop compute the same inputs, bit for bit.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .force_kernels import _joint_coordinates, _joint_rate_map
from .newton_kernels import _ends, _world

__all__ = ["joint_rates_kernel", "pd_forces", "fallen", "control_work"]


@njit(cache=True, error_model="numpy", inline="always")
def _joint_rates(k, xa, qa, xb, qb, v, w, parent, child, p_b, q_off, free, dof, rdof, out, R,
                 M, W):
    """Joint ``k``'s coordinate rates (rows ``0..dof-1``, the rest zero) at its end poses
    ``xa, qa, xb, qb`` (:func:`.newton_kernels._ends`) into ``out`` (6,); ``R``, ``M``
    (6×12) and ``W`` (6, 3, 3) are scratch."""
    _joint_rate_map(xa, qa, xb, qb, p_b[k], q_off[k], free[k], dof[k], rdof[k], R, M, W)
    a, b = parent[k], child[k]
    for i in range(6):
        acc = 0.0
        for c in range(3):
            acc += R[i, 6 + c] * v[b, c] + R[i, 9 + c] * w[b, c]
            if a >= 0:
                acc += R[i, c] * v[a, c] + R[i, 3 + c] * w[a, c]
        out[i] = acc


@njit(cache=True, error_model="numpy", _nrt=True)
def joint_rates_kernel(x, q, v, w, parent, child, p_b, q_off, free, dof, rdof, out):
    """``out[k]`` = the coordinate rates of every joint ``k`` (padded to 6) at the state
    ``x, q, v, w`` (as :meth:`.MaximalModel.joint_velocities`); ``out`` (n_joints, 6)."""
    R = np.empty((6, 12))
    M = np.empty((6, 12))
    W = np.empty((6, 3, 3))
    world_x, world_q = _world()
    for k in range(parent.shape[0]):
        xa, qa, xb, qb = _ends(k, parent, child, x, q, world_x, world_q)
        _joint_rates(k, xa, qa, xb, qb, v, w, parent, child, p_b, q_off, free, dof, rdof,
                     out[k], R, M, W)


def control_work(js) -> tuple:
    """The joint arrays and scratch of :func:`pd_forces` for the joints ``js``
    (:class:`.joints.JointSet`): ``(joints, R, M, W, Q, c, world_x, world_q)`` = ``(parent,
    child, p_a, p_b, q_off, free, dof, tdof, rdof, rot_axis)``, a joint's rate map and its
    scratch (6×12 each), frames (6, 3, 3), quaternions (3, 4), a 6-vector and the world's
    pose."""
    joints = (js.parent, js.child, js.p_a, js.p_b, js.q_off, js.free, js.dof,
              js.translational_dof, js.rotational_dof, js.rot_axis)
    return (joints, np.zeros((6, 12)), np.zeros((6, 12)), np.zeros((6, 3, 3)),
            np.zeros((3, 4)), np.zeros(6), np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))


@njit(cache=True, error_model="numpy", _nrt=False)
def pd_forces(row, x, q, v, w, control, work, out):
    """The PD inputs of row ``row`` of a controller's schedule at the state ``x, q, v, w``
    into ``out`` (n_joints, 6; zero but for column 0 of the driven joints); returns whether
    the row drives any joint (the step then takes joint forces).

    ``control = (kp, kd, angle, goal, goal_rate, active, fall)``: per joint the gains and
    whether its coordinate is an angle (n_joints,), per schedule row the targets, target
    rates and which joints are driven (rows, n_joints), and the fall test of
    :func:`fallen`; ``work``: :func:`control_work`.
    """
    kp, kd, angle, goal, goal_rate, active, fall = control
    joints, R, M, W, Q, c, world_x, world_q = work
    parent, child, p_a, p_b, q_off, free, dof, tdof, rdof, rot_axis = joints
    any_active = False
    for k in range(out.shape[0]):
        for i in range(6):
            out[k, i] = 0.0
        if not active[row, k]:
            continue
        any_active = True
        xa, qa, xb, qb = _ends(k, parent, child, x, q, world_x, world_q)
        _joint_coordinates(xa, qa, xb, qb, p_a[k], p_b[k], q_off[k], free[k], tdof[k],
                           rdof[k], rot_axis[k], c, W, Q)
        err = goal[row, k] - c[0]
        if angle[k]:
            err = (err + np.pi) % (2.0 * np.pi) - np.pi
        _joint_rates(k, xa, qa, xb, qb, v, w, parent, child, p_b, q_off, free, dof, rdof, c,
                     R, M, W)
        out[k, 0] = kp[k] * err + kd[k] * (goal_rate[row, k] - c[0])
    return any_active


@njit(cache=True, error_model="numpy", _nrt=False)
def fallen(x, q, fall):
    """Whether body ``b = fall[0]`` (none if negative) has fallen: its height ``x_b[2]`` below
    ``fall[1]`` or the z component of its z axis, ``1 - 2 (q₁² + q₂²)``, below ``fall[2]``
    (the cosine of the largest tilt)."""
    b = int(fall[0])
    if b < 0:
        return False
    up = 1.0 - 2.0 * (q[b, 1] * q[b, 1] + q[b, 2] * q[b, 2])
    return x[b, 2] < fall[1] or up < fall[2]
