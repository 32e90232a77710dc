"""Closed kinematic loops in minimal coordinates: a Pinocchio tree whose loop-closing joints are
enforced at acceleration level only, without constraint stabilization, integrated explicitly.

This is the comparison of Brüdigam et al. (2023) Fig. 7a and Brüdigam & Manchester (2020)
Fig. 4b: the loop-closing joints of a :class:`~dynamics.spec.MechanismSpec` are cut, the
remaining tree is a ``pinocchio.Model`` (:func:`comparisons.pinocchio_peer.pinocchio_model`),
and each cut joint becomes a position constraint ``C(q) = S (p_child - p_parent) = 0`` on its
two attachment points. The dynamics are the index-1 DAE

    M(q) q̈ + h(q, q̇) = τ + Jᵀ λ,    J(q) q̈ + J̇ q̇ = 0      (J = ∂C/∂q)

solved for ``q̈`` at every stage (Schur complement of ``J M⁻¹ Jᵀ``, least squares, so redundant
or singular configurations give the minimum-norm multipliers). Only ``C̈ = 0`` is imposed, so
the integration error makes ``C`` and ``Ċ`` drift (no Baumgarte terms) - the behaviour the
papers contrast with the variational integrator's exact position constraints.

Supported loop joints: those that constrain translation only (Table B.2 ``D_R = "none"``):
``spherical`` (``S = I``, any mechanism) and, for planar mechanisms, ``cylindrical_free``
(``S``: the two world directions normal to the joint axis) and ``planar_free`` (``S``: the
axis). A mechanism is planar here if every revolute joint's world axis at the initial
configuration is parallel to the loop joint's axis (the parent then turns about that axis, so
a world-fixed ``S`` spans the joint's constraint directions at every configuration).

References
----------
J. Brüdigam, S. Sosnowski, Z. Manchester, S. Hirche, "Linear-time variational integrators in
maximal coordinates", 2023, §5.1 (Fig. 7a).
J. Baumgarte, "Stabilization of constraints and integrals of motion in dynamical systems",
Comput. Methods Appl. Mech. Eng. 1, 1972 (the stabilization left out here).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from dynamics import quaternion as quat
from dynamics.spec import WORLD, MechanismSpec

from .peer_tree import (
    SimulationDivergedError,
    UnsupportedMechanismError,
    check_steps,
    config_size,
)
from .pinocchio_peer import (
    PIN_INTEGRATORS,
    integrate_steps,
    minimal_dynamics,
    tangent_blocks,
    trajectory_outputs,
)

__all__ = ["LoopClosure", "tree_part", "simulate_constrained_pinocchio"]


@dataclass(frozen=True)
class LoopClosure:
    """A cut loop joint: Pinocchio frame ids of its attachment points (``None`` for a world
    point, then ``world_point``) and the world-frame constraint directions ``rows`` (k, 3)."""

    name: str
    parent_frame: int | None
    world_point: np.ndarray
    child_frame: int
    rows: np.ndarray


def tree_part(spec: MechanismSpec) -> MechanismSpec:
    """The spec without its loop-closing joints (same bodies, initial coordinates, gravity)."""
    return MechanismSpec(spec.bodies, spec.tree_joints, spec.gravity, spec.initial_positions,
                         spec.initial_velocities, f"{spec.name}_tree")


def _point_frame(pin, model, body: str, point: np.ndarray, name: str) -> int:
    """Add an operational frame at ``point`` (body centre-of-mass frame) of ``body``."""
    f = model.frames[model.getFrameId(body, pin.FrameType.BODY)]
    placement = f.placement * pin.SE3(np.eye(3), np.asarray(point, dtype=float))
    return model.addFrame(pin.Frame(name, f.parentJoint, placement, pin.FrameType.OP_FRAME))


def _closures(pin, model, spec: MechanismSpec, q0: np.ndarray) -> list[LoopClosure]:
    data = model.createData()
    pin.framesForwardKinematics(model, data, q0)
    out = []
    for j in spec.loop_joints:
        d_t, d_r = j.selections
        if d_r != "none":
            raise UnsupportedMechanismError(
                f"loop joint {j.name!r} ({j.type}) constrains rotation; constrained_minimal "
                "supports translation-only loop joints (spherical, cylindrical_free, planar_free)")
        R_parent = np.eye(3) if j.parent == WORLD else \
            data.oMf[model.getFrameId(j.parent, pin.FrameType.BODY)].rotation
        axis = R_parent @ quat.rotation_matrix(j.orientation_offset) @ j.axis
        if d_t == "full":
            rows = np.eye(3)
        else:
            for i in range(1, model.njoints):
                local = _local_axis(model, i)
                if local is None or np.linalg.norm(
                        np.cross(data.oMi[i].rotation @ local, axis)) > 1e-9:
                    raise UnsupportedMechanismError(
                        f"loop joint {j.name!r} ({j.type}) needs a planar mechanism: joint "
                        f"{model.names[i]!r} does not turn about the loop joint's axis")
            basis = np.linalg.svd(axis[None, :])[2]        # axis first, then two normals
            rows = basis[1:] if d_t == "axis" else basis[:1]
        child = _point_frame(pin, model, j.child, j.child_point, f"{j.name}:child")
        parent = None if j.parent == WORLD else _point_frame(pin, model, j.parent,
                                                             j.parent_point, f"{j.name}:parent")
        out.append(LoopClosure(j.name, parent, np.array(j.parent_point, dtype=float), child,
                               rows))
    return out


def _local_axis(model, i: int):
    """Rotation axis of a revolute Pinocchio joint in its own frame; zeros for prismatic ones
    (they never turn the parent) and ``None`` for ball or free joints."""
    short = model.joints[i].shortname()
    if short in ("JointModelRX", "JointModelRY", "JointModelRZ"):
        return np.eye(3)["XYZ".index(short[-1])]
    if short == "JointModelRevoluteUnaligned":
        return np.array(model.joints[i].extract().axis)
    if short.startswith("JointModelP"):
        return np.zeros(3)
    return None


def simulate_constrained_pinocchio(spec: MechanismSpec, dt: float, steps: int,
                                   integrator: str = "rk4", poses: bool = False,
                                   controller=None) -> dict:
    """Simulate a mechanism with kinematic loops in minimal coordinates (Pinocchio), the loop
    joints enforced at acceleration level without stabilization.

    Parameters
    ----------
    spec : MechanismSpec
        Tree joints as :func:`comparisons.pinocchio_peer.simulate_pinocchio` accepts; loop
        joints as in the module docstring.
    dt, steps, integrator
        As :func:`~comparisons.pinocchio_peer.simulate_pinocchio` (``"rk4"`` is the classic
        Runge-Kutta method in the tangent space).
    controller : callable, optional
        ``controller(t, positions, velocities) -> {joint name: inputs}`` for actuated tree
        joints, called at the start of every step with the tree joints' coordinates and rates
        by name (as :meth:`dynamics.maximal.Simulation.run`'s controller sees them); the
        inputs are held over the step (zero-order hold, as ``Simulation.run`` applies them).
        Returned in ``out["inputs"]`` (joint name -> (steps, dof)).

    Returns
    -------
    dict
        The keys of :func:`~comparisons.pinocchio_peer.simulate_pinocchio` for the tree (its
        ``coordinates`` cover the tree joints) plus ``constraint_violation`` (T,): the largest
        absolute loop-constraint residual ``|S (p_child - p_parent)|`` (m) at each time point.
        The initial velocities are projected onto ``J q̇ = 0`` (mass metric).

    Raises
    ------
    UnsupportedMechanismError
        For unsupported loop joints or a non-planar mechanism with planar-only loop joints.
    SimulationDivergedError
        If the state becomes non-finite.

    Examples
    --------
    >>> from dynamics import models
    >>> out = simulate_constrained_pinocchio(models.fourbar(), 0.01, 100)
    >>> bool(0 < out["constraint_violation"][-1] < 1e-3)
    True
    """
    if integrator not in PIN_INTEGRATORS:
        raise ValueError(f"unknown integrator {integrator!r}; choose from {PIN_INTEGRATORS}")
    check_steps(dt, steps)
    tree = tree_part(spec)
    pin, model, data, layout, free_acceleration = minimal_dynamics(tree, "crba")
    q0, v0 = layout.state(tree)
    closures = _closures(pin, model, spec, q0)
    # frames were added to the model: fresh data for the frame queries (free_acceleration keeps
    # its own data, which CRBA and the nonlinear effects use without frames)
    data = model.createData()
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    zero = np.zeros(model.nv)

    def residual(q):
        """``C(q)`` of every closure, stacked (the frames must be placed)."""
        return np.concatenate([c.rows @ (data.oMf[c.child_frame].translation - (
            c.world_point if c.parent_frame is None else data.oMf[c.parent_frame].translation))
            for c in closures])

    def jacobian(q):
        """``J`` and the joint-space inertia's Cholesky factor at ``q``."""
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        rows = []
        for c in closures:
            Jc = pin.getFrameJacobian(model, data, c.child_frame, lwa)[:3]
            if c.parent_frame is not None:
                Jc = Jc - pin.getFrameJacobian(model, data, c.parent_frame, lwa)[:3]
            rows.append(c.rows @ Jc)
        M = pin.crba(model, data, q)           # upper triangle
        return np.vstack(rows), scipy.linalg.cho_factor(M, check_finite=False)

    def drift(q, v):
        """``J̇ q̇``: the constraint acceleration at ``q̈ = 0`` (classical point accelerations)."""
        pin.forwardKinematics(model, data, q, v, zero)
        out = []
        for c in closures:
            a = pin.getFrameClassicalAcceleration(model, data, c.child_frame, lwa).linear
            if c.parent_frame is not None:
                a = a - pin.getFrameClassicalAcceleration(model, data, c.parent_frame,
                                                          lwa).linear
            out.append(c.rows @ a)
        return np.concatenate(out)

    def acceleration(q, v, tau=None):
        a_free = free_acceleration(q, v)
        J, chol = jacobian(q)
        if tau is not None and tau.any():          # joint inputs: M⁻¹ τ more
            a_free = a_free + scipy.linalg.cho_solve(chol, tau, check_finite=False)
        MinvJt = scipy.linalg.cho_solve(chol, J.T, check_finite=False)
        schur, rhs = J @ MinvJt, -(J @ a_free + drift(q, v))
        if not (np.isfinite(schur).all() and np.isfinite(rhs).all()):
            raise np.linalg.LinAlgError("non-finite constraint system")   # diverged
        return a_free + MinvJt @ np.linalg.lstsq(schur, rhs, rcond=None)[0]

    J, chol = jacobian(q0)                     # consistent initial velocities: J v = 0
    MinvJt = scipy.linalg.cho_solve(chol, J.T, check_finite=False)
    v0 = v0 - MinvJt @ np.linalg.lstsq(J @ MinvJt, J @ v0, rcond=None)[0]
    blocks = tangent_blocks(layout)
    if controller is None:
        Q, V, seconds = integrate_steps(pin, model, integrator, acceleration, q0, v0, dt, steps,
                                        blocks)
        inputs = None
    else:
        Q, V, seconds, inputs = _controlled_steps(pin, model, layout, integrator, acceleration,
                                                  controller, q0, v0, dt, steps, blocks)
    out = trajectory_outputs(pin, model, data, layout, tree, dt * np.arange(steps + 1), Q, V,
                             seconds, poses)
    violation = np.empty(len(Q))
    for i, qi in enumerate(Q):
        pin.framesForwardKinematics(model, data, qi)
        violation[i] = np.abs(residual(qi)).max()
    out["constraint_violation"] = violation
    if inputs is not None:
        out["inputs"] = inputs
    return out


def _controlled_steps(pin, model, layout, integrator, acceleration, controller, q, v, dt,
                      steps, blocks):
    """:func:`~comparisons.pinocchio_peer.integrate_steps` one step at a time with the
    controller's inputs added to the joint torques and held over each step."""
    held = np.zeros(model.nv)
    where = {j.name: (j, iq, iv) for j, iq, iv in zip(layout.joints, layout.q_start,
                                                       layout.v_start, strict=True)}

    def driven(qi, vi):
        return acceleration(qi, vi, held)

    Q, V = np.empty((steps + 1, model.nq)), np.empty((steps + 1, model.nv))
    Q[0], V[0] = q, v
    inputs: dict[str, list] = {}
    seconds = 0.0
    for k in range(steps):
        pos = {n: layout.from_segment(j, Q[k:k + 1, iq:iq + config_size(j)])[0]
               for n, (j, iq, _) in where.items()}
        vel = {n: V[k, iv:iv + j.dof] for n, (j, _, iv) in where.items()}
        held[:] = 0.0
        for name, val in (controller(k * dt, pos, vel) or {}).items():
            j, _, iv = where[name]
            if not j.actuated:
                raise ValueError(f"joint {name!r} is not actuated (set actuated=True)")
            val = np.asarray(val, dtype=float).reshape(-1)
            held[iv:iv + j.dof] = val
            inputs.setdefault(name, np.zeros((steps, j.dof)))[k] = val
        try:
            Qk, Vk, sec = integrate_steps(pin, model, integrator, driven, Q[k], V[k], dt, 1,
                                          blocks)
        except SimulationDivergedError:
            raise SimulationDivergedError("pinocchio", k + 1, dt) from None
        Q[k + 1], V[k + 1] = Qk[1], Vk[1]
        seconds += sec
    return Q, V, seconds, inputs
