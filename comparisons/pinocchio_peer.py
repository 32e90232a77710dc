"""Pinocchio peer of :mod:`comparisons.dynamics_peers`: a ``pinocchio.Model`` from a spec, an
articulated-body-algorithm simulation loop with explicit integrators, and a tight-tolerance
``scipy.integrate.solve_ivp`` reference on the same minimal-coordinate ODE.

References
----------
J. Carpentier et al., "The Pinocchio C++ library", IEEE/SICE SII 2019.
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, ch. 7 (articulated-body
algorithm).
H. Munthe-Kaas, "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29, 1999.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.linalg

from dynamics import quaternion as quat
from dynamics.spec import Joint, MechanismSpec

from .peer_tree import (
    Layout,
    SimulationDivergedError,
    UnsupportedMechanismError,
    check_finite,
    check_steps,
    require,
    tree_links,
    wxyz,
    xyzw,
)

__all__ = ["PIN_INTEGRATORS", "PIN_FORWARD_DYNAMICS", "RK_TABLEAUS", "pinocchio_model",
           "pinocchio_state", "simulate_pinocchio", "solve_ivp_pinocchio", "minimal_dynamics",
           "integrate_steps", "tangent_blocks", "trajectory_outputs"]

PIN_INTEGRATORS = ("semi_implicit_euler", "euler", "heun", "rk4")
#: Butcher tableaus ``(a, b)`` of the explicit Runge-Kutta methods, run in the tangent space at
#: the step's start (Munthe-Kaas): ``a[i]`` holds stage ``i``'s coefficients of the earlier
#: stages, ``b`` the weights. ``"heun"`` is the explicit trapezoidal rule (second order).
RK_TABLEAUS = {
    "heun": (((), (1.0,)), (0.5, 0.5)),
    "rk4": (((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)), (1 / 6, 1 / 3, 1 / 3, 1 / 6)),
}
#: ``"aba"``: articulated-body algorithm, O(n); ``"crba"``: joint-space inertia matrix (CRBA)
#: and nonlinear effects, then a dense Cholesky solve, O(n³) but more accurate for long,
#: ill-conditioned chains (see :func:`simulate_pinocchio`).
PIN_FORWARD_DYNAMICS = ("aba", "crba")


def _joint_model(pin, j: Joint):
    if j.type in ("revolute", "prismatic"):
        aligned = ((pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ) if j.type == "revolute"
                   else (pin.JointModelPX, pin.JointModelPY, pin.JointModelPZ))
        for k in range(3):
            if np.array_equal(j.axis, np.eye(3)[k]):
                return aligned[k]()
        unaligned = (pin.JointModelRevoluteUnaligned if j.type == "revolute"
                     else pin.JointModelPrismaticUnaligned)
        return unaligned(np.array(j.axis))
    return pin.JointModelSpherical() if j.type == "spherical" else pin.JointModelFreeFlyer()


def _to_pin(j: Joint, x: np.ndarray, xd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spec coordinates and rates of one joint -> Pinocchio ``q`` and ``v`` segments."""
    if j.type == "spherical":
        return xyzw(quat.from_rotation_vector(x)), xd
    if j.type == "floating":
        R_off = quat.rotation_matrix(j.orientation_offset)
        r = quat.from_rotation_vector(x[3:])
        v_lin = quat.rotation_matrix(r).T @ R_off.T @ xd[:3]    # the free flyer's local twist
        return np.concatenate([R_off.T @ x[:3], xyzw(r)]), np.concatenate([v_lin, xd[3:]])
    return x, xd


def _from_pin(j: Joint, q: np.ndarray) -> np.ndarray:
    """Pinocchio ``q`` segments (T, nq_j) -> spec coordinates (T, dof)."""
    if j.type == "spherical":
        return quat.rotation_vector(wxyz(q))
    if j.type == "floating":
        R_off = quat.rotation_matrix(j.orientation_offset)
        return np.concatenate([q[:, :3] @ R_off.T, quat.rotation_vector(wxyz(q[:, 3:]))], axis=1)
    return q


def pinocchio_model(spec: MechanismSpec):
    """Build a ``pinocchio.Model`` of a tree mechanism.

    Every moving joint becomes a Pinocchio joint named like the spec joint whose frame is the
    body's link frame (placement: ``orientation_offset`` at ``parent_point`` in the parent's
    centre-of-mass frame); each body is appended at ``-child_point`` with identity rotation and
    gets a BODY frame (its centre-of-mass frame) named like the body. A fixed joint adds no
    Pinocchio joint: its body is appended to the parent's joint.

    Parameters
    ----------
    spec : MechanismSpec
        A tree (no loop joints) of revolute, prismatic, spherical and fixed joints and an
        optional floating root.

    Returns
    -------
    model : pinocchio.Model
        With ``model.gravity.linear == spec.gravity``.
    joint_names : list of str
        The moving joints in Pinocchio's order (joint ids 1, 2, ...).

    Raises
    ------
    UnsupportedMechanismError
        See :func:`comparisons.peer_tree.tree_links`.

    Examples
    --------
    >>> import numpy as np
    >>> from dynamics.spec import Body, Joint, MechanismSpec
    >>> b = Body("b", 1.0, np.eye(3))
    >>> spec = MechanismSpec([b], [Joint("j", "revolute", "world", "b", child_point=[0, 0, 1])])
    >>> model, names = pinocchio_model(spec)
    >>> model.nq, names
    (1, ['j'])
    """
    pin = require("pinocchio")
    model = pin.Model()
    model.name = spec.name
    model.gravity.linear = np.array(spec.gravity)
    # per link: its Pinocchio joint, the link frame in that joint's frame, and a frame id
    joint_id: list[int] = []
    in_joint: list = []
    frame_id: list[int] = []
    names = []
    for link in tree_links(spec):
        j = link.joint
        if link.parent < 0:
            parent_joint, X_parent, parent_frame = 0, pin.SE3.Identity(), 0
        else:
            p = link.parent
            parent_joint, X_parent, parent_frame = joint_id[p], in_joint[p], frame_id[p]
        placement = X_parent * pin.SE3(link.rotation, np.array(link.translation))
        if j.type == "fixed":
            joint_id.append(parent_joint)
            in_joint.append(placement)
        else:
            jid = model.addJoint(parent_joint, _joint_model(pin, j), placement, j.name)
            parent_frame = model.addJointFrame(jid, parent_frame)
            joint_id.append(jid)
            in_joint.append(pin.SE3.Identity())
            names.append(j.name)
        com = in_joint[-1] * pin.SE3(np.eye(3), -np.array(j.child_point))
        inertia = pin.Inertia(link.body.mass, np.zeros(3), np.array(link.body.inertia))
        model.appendBodyToJoint(joint_id[-1], inertia, com)
        frame_id.append(model.addBodyFrame(link.body.name, joint_id[-1], com, parent_frame))
    return model, names


def _layout(spec: MechanismSpec, model) -> Layout:
    joints = tuple(link.joint for link in tree_links(spec) if link.joint.type != "fixed")
    ids = [model.getJointId(j.name) for j in joints]
    return Layout(joints, tuple(model.joints[i].idx_q for i in ids),
                  tuple(model.joints[i].idx_v for i in ids), model.nq, model.nv,
                  _to_pin, _from_pin)


def pinocchio_state(spec: MechanismSpec, model) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio ``(q, v)`` of the spec's initial coordinates (shapes ``(nq,)``, ``(nv,)``)."""
    return _layout(spec, model).state(spec)


def _rkmk_step(pin, model, acceleration, q, v, dt, blocks, tableau):
    """One explicit Runge-Kutta step in the tangent space at ``q`` (Runge-Kutta-Munthe-Kaas).

    With ``q(t) = q ⊕ ξ(t)`` the state ``(ξ, v)`` obeys ``ξ' = J(ξ)⁻¹ v`` (``J``: derivative of
    ``q ⊕ ξ`` in ``ξ``, ``pin.dIntegrate``; the identity for 1-DOF joints, a diagonal block per
    spherical or free joint) and ``v' = a(q ⊕ ξ, v)``, an ODE on a vector space, integrated with
    the Butcher ``tableau`` (``a``, ``b``) at its full order. ``blocks`` holds the velocity
    indices of those blocks, one ``(k, size)`` array per block size.
    """
    def rate(xi, w):
        if not blocks:
            return w
        J = pin.dIntegrate(model, q, xi, pin.ArgumentPosition.ARG1)
        out = np.array(w, dtype=float)
        for idx in blocks:
            J_blocks = J[idx[:, :, None], idx[:, None, :]]
            out[idx] = np.linalg.solve(J_blocks, w[idx][..., None])[..., 0]
        return out

    a, b = tableau
    stages = [(v, acceleration(q, v))]
    for row in a[1:]:
        xi, w = np.zeros_like(v), v
        for c, (x_j, a_j) in zip(row, stages, strict=True):
            if c:
                xi, w = xi + c * dt * x_j, w + c * dt * a_j
        stages.append((rate(xi, w), acceleration(pin.integrate(model, q, xi), w)))
    dxi = sum(b_i * x_i for b_i, (x_i, _) in zip(b, stages, strict=True))
    dv = sum(b_i * a_i for b_i, (_, a_i) in zip(b, stages, strict=True))
    return pin.integrate(model, q, dt * dxi), v + dt * dv


def tangent_blocks(layout: Layout) -> list[np.ndarray]:
    """Velocity indices of the spherical (3) and free (6) joints, one ``(k, size)`` array per
    size present (the blocks of ``pin.dIntegrate`` that :func:`_rkmk_step` inverts)."""
    blocks = [np.array([np.arange(iv, iv + size)
                        for j, iv in zip(layout.joints, layout.v_start, strict=True)
                        if j.dof == size]).reshape(-1, size) for size in (3, 6)]
    return [idx for idx in blocks if idx.size]


def integrate_steps(pin, model, integrator: str, acceleration, q, v, dt: float, steps: int,
                    blocks) -> tuple[np.ndarray, np.ndarray, float]:
    """Run ``steps`` explicit steps of ``acceleration(q, v)``; returns ``Q`` (T, nq), ``V``
    (T, nv) and the wall time of the loop alone. See :func:`simulate_pinocchio` for the
    integrators.

    Raises
    ------
    SimulationDivergedError
        If the state becomes non-finite or a linear solve inside a step fails.
    """
    Q, V = np.empty((steps + 1, model.nq)), np.empty((steps + 1, model.nv))
    Q[0], V[0] = q, v
    integrate = pin.integrate
    tableau = RK_TABLEAUS.get(integrator)
    start = time.perf_counter()
    with np.errstate(over="ignore", invalid="ignore"):     # non-finite states are checked below
        try:
            for i in range(steps):
                if integrator == "semi_implicit_euler":
                    v = v + dt * acceleration(q, v)
                    q = integrate(model, q, dt * v)
                elif integrator == "euler":
                    a = acceleration(q, v)
                    q, v = integrate(model, q, dt * v), v + dt * a
                else:
                    q, v = _rkmk_step(pin, model, acceleration, q, v, dt, blocks, tableau)
                Q[i + 1], V[i + 1] = q, v
        except np.linalg.LinAlgError as err:    # a singular dexp block or M not SPD
            raise SimulationDivergedError("pinocchio", i + 1, dt) from err
    seconds = time.perf_counter() - start
    check_finite("pinocchio", Q, V, dt)
    return Q, V, seconds


def minimal_dynamics(spec: MechanismSpec, forward_dynamics: str = "aba"):
    """Pinocchio model, data, layout and the joint-space dynamics of a tree spec.

    Returns ``(pin, model, data, layout, acceleration)`` where ``acceleration(q, v)`` applies
    the joints' dampers and springs (``tau = -d v - k (q - rest)``) and computes ``q̈`` with
    ABA or CRBA + Cholesky (see :func:`simulate_pinocchio`).
    """
    if forward_dynamics not in PIN_FORWARD_DYNAMICS:
        raise ValueError(f"unknown forward_dynamics {forward_dynamics!r}; choose from "
                         f"{PIN_FORWARD_DYNAMICS}")
    pin = require("pinocchio")
    model, _ = pinocchio_model(spec)
    data = model.createData()
    layout = _layout(spec, model)
    damping, sq, sv, stiffness, rest = layout.forces()
    aba = pin.aba

    def acceleration(q, v):
        tau = -damping * v
        if sq.size:
            tau[sv] -= stiffness * (q[sq] - rest)
        if forward_dynamics == "aba":
            return aba(model, data, q, v, tau)
        M = pin.crba(model, data, q)                # upper triangle
        rhs = tau - pin.nonLinearEffects(model, data, q, v)
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(M, check_finite=False), rhs,
                                      check_finite=False)

    return pin, model, data, layout, acceleration


def trajectory_outputs(pin, model, data, layout: Layout, spec: MechanismSpec, t: np.ndarray,
                       Q: np.ndarray, V: np.ndarray, seconds: float, poses: bool) -> dict:
    """The output dictionary of :func:`simulate_pinocchio` for a trajectory ``Q``, ``V``."""
    _, sq, _, stiffness, rest = layout.forces()
    out = {"t": t, "q": Q, "v": V, "joint_names": [j.name for j in layout.joints],
           "seconds": seconds, **layout.outputs(Q)}
    out["kinetic"] = np.array([pin.computeKineticEnergy(model, data, qi, vi)
                               for qi, vi in zip(Q, V, strict=True)])
    out["potential"] = np.array([pin.computePotentialEnergy(model, data, qi) for qi in Q]) \
        + 0.5 * np.sum(stiffness * (Q[:, sq] - rest) ** 2, axis=1)
    out["energy"] = out["kinetic"] + out["potential"]
    if poses:
        frames = [model.getFrameId(b.name, pin.FrameType.BODY) for b in spec.bodies]
        P, R = np.empty((len(Q), len(frames), 3)), np.empty((len(Q), len(frames), 3, 3))
        for i, qi in enumerate(Q):
            pin.framesForwardKinematics(model, data, qi)
            for b, f in enumerate(frames):
                P[i, b], R[i, b] = data.oMf[f].translation, data.oMf[f].rotation
        out.update(body_names=[b.name for b in spec.bodies], body_positions=P, body_rotations=R)
    return out


def simulate_pinocchio(spec: MechanismSpec, dt: float, steps: int,
                       integrator: str = "semi_implicit_euler", poses: bool = True,
                       forward_dynamics: str = "aba") -> dict:
    """Simulate a tree mechanism with Pinocchio's articulated-body algorithm (``pin.aba``).

    ``"semi_implicit_euler"``: ``v+ = v + dt a(q, v)``, ``q+ = q ⊕ dt v+``; ``"euler"``:
    ``q+ = q ⊕ dt v``, ``v+ = v + dt a(q, v)``; ``"heun"`` (explicit second-order Runge-Kutta,
    the trapezoidal rule) and ``"rk4"`` (classic Runge-Kutta): in the tangent space at ``q``
    (Munthe-Kaas), of full order also for spherical and floating joints (``⊕`` is
    ``pin.integrate``; tableaus in :data:`RK_TABLEAUS`). Joint torques ``-d v - k (q - rest)``
    from the dampers and springs.

    Parameters
    ----------
    spec : MechanismSpec
    dt : float
        Time step (s).
    steps : int
        Number of steps; outputs have ``T = steps + 1`` rows (the initial state first).
    integrator : {"semi_implicit_euler", "euler", "heun", "rk4"}
    poses : bool
        Also return the bodies' centre-of-mass frames (computed after the timed loop).
    forward_dynamics : {"aba", "crba"}
        How accelerations are computed. ABA loses accuracy on long chains of slender links
        (relative error ~1e2 against CRBA + Cholesky for 100 spherical joints between
        1 m × 5 cm cylinders, where cond(M) ~ 1e10), which can make an explicit simulation
        diverge; ``"crba"`` stays at round-off times cond(M) there.

    Returns
    -------
    dict
        ``t`` (T,), ``q`` (T, nq) and ``v`` (T, nv) in Pinocchio's layout, ``joint_names``,
        ``coordinates`` (joint name -> (T, dof) spec coordinates), ``revolute_joints`` and
        ``joint_angles`` (T, n_revolute), ``kinetic``, ``potential`` (gravity plus springs) and
        ``energy`` (T,), ``body_names``, ``body_positions`` (T, n_bodies, 3) and
        ``body_rotations`` (T, n_bodies, 3, 3) if ``poses``, and ``seconds``: the wall time of
        the stepping loop alone.

    Raises
    ------
    ValueError
        For an unknown integrator, ``dt <= 0`` or ``steps < 0``.
    UnsupportedMechanismError
        See :func:`comparisons.peer_tree.tree_links`.
    SimulationDivergedError
        If the state becomes non-finite.
    """
    if integrator not in PIN_INTEGRATORS:
        raise ValueError(f"unknown integrator {integrator!r}; choose from {PIN_INTEGRATORS}")
    if forward_dynamics not in PIN_FORWARD_DYNAMICS:
        raise ValueError(f"unknown forward_dynamics {forward_dynamics!r}; choose from "
                         f"{PIN_FORWARD_DYNAMICS}")
    check_steps(dt, steps)
    pin, model, data, layout, acceleration = minimal_dynamics(spec, forward_dynamics)
    q, v = layout.state(spec)
    Q, V, seconds = integrate_steps(pin, model, integrator, acceleration, q, v, dt, steps,
                                    tangent_blocks(layout))
    return trajectory_outputs(pin, model, data, layout, spec, dt * np.arange(steps + 1), Q, V,
                              seconds, poses)


def solve_ivp_pinocchio(spec: MechanismSpec, t: np.ndarray, rtol: float = 1e-12,
                        atol: float = 1e-12, method: str = "DOP853", poses: bool = False,
                        forward_dynamics: str = "aba") -> dict:
    """Reference solution of a tree mechanism's minimal-coordinate ODE by
    :func:`scipy.integrate.solve_ivp` (adaptive, tight tolerances), with Pinocchio's dynamics.

    The accuracy oracle for the fixed-step integrators: same model, dampers and springs as
    :func:`simulate_pinocchio`, state ``(q, v)`` integrated as one vector, so only joints whose
    configuration is a vector space (revolute, prismatic, fixed) are allowed.

    Parameters
    ----------
    spec : MechanismSpec
    t : (T,) array
        Increasing output times (s), starting at the initial time 0.
    rtol, atol, method
        Passed to :func:`scipy.integrate.solve_ivp`.

    Returns
    -------
    dict
        As :func:`simulate_pinocchio` (``seconds`` is the solver's wall time) plus ``nfev``.

    Raises
    ------
    UnsupportedMechanismError
        For spherical or floating joints, and as :func:`comparisons.peer_tree.tree_links`.
    RuntimeError
        If ``solve_ivp`` fails.

    Examples
    --------
    >>> import numpy as np
    >>> from dynamics.spec import Body, Joint, MechanismSpec
    >>> rod = Body("rod", 1.0, np.diag([1 / 12, 1 / 12, 1e-3]))
    >>> spec = MechanismSpec([rod], [Joint("hinge", "revolute", "world", "rod",
    ...                                    child_point=[0, 0, 0.5])],
    ...                      initial_positions={"hinge": [0.1]})
    >>> ref = solve_ivp_pinocchio(spec, np.linspace(0.0, 1.0, 11))
    >>> ref["joint_angles"].shape, bool(np.ptp(ref["energy"]) < 1e-10)
    ((11, 1), True)
    """
    import scipy.integrate

    pin, model, data, layout, acceleration = minimal_dynamics(spec, forward_dynamics)
    if model.nq != model.nv:
        raise UnsupportedMechanismError(
            f"mechanism {spec.name!r} has spherical or floating joints; solve_ivp_pinocchio "
            "integrates (q, v) as one vector and needs a vector-space configuration")
    t = np.asarray(t, dtype=float)
    q, v = layout.state(spec)
    nq = model.nq

    def rhs(_, y):
        return np.concatenate([y[nq:], acceleration(y[:nq], y[nq:])])

    start = time.perf_counter()
    sol = scipy.integrate.solve_ivp(rhs, (float(t[0]), float(t[-1])), np.concatenate([q, v]),
                                    method=method, t_eval=t, rtol=rtol, atol=atol)
    seconds = time.perf_counter() - start
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed on {spec.name!r}: {sol.message}")
    out = trajectory_outputs(pin, model, data, layout, spec, t, sol.y[:nq].T.copy(),
                             sol.y[nq:].T.copy(), seconds, poses)
    out["nfev"] = int(sol.nfev)
    return out
