"""Configurations of a :class:`~dynamics.minimal.model.Model`: neutral, integrate, difference,
normalize, input checks, and the conversion to and from the spec's joint coordinates.

``q`` has ``model.nq`` entries and ``v`` ``model.nv``; joint ``j`` owns
``q[j.idx_q : j.idx_q + j.nq]`` and ``v[j.idx_v : j.idx_v + j.nv]`` (see
:mod:`dynamics.minimal.joints` for the per-type layout). The spec's coordinates
(:mod:`dynamics.spec`) are translations then rotation vectors per joint; they map one to one for
revolute, prismatic and spherical joints (quaternion ↔ rotation vector, velocities are the
link-frame angular velocity in both) and through the joint's ``orientation_offset`` and rotation
for floating joints (see :class:`~dynamics.minimal.joints.FloatingJoint`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from .joints import JointModel

if TYPE_CHECKING:
    from .model import Model

__all__ = ["neutral", "integrate", "difference", "normalize", "random_configuration",
           "from_spec_coordinates", "to_spec_coordinates", "initial_state", "as_vector",
           "check_configuration"]


def as_vector(x, size: int, argument: str, size_name: str) -> np.ndarray:
    """``x`` as a float array of shape ``(size,)``.

    Raises
    ------
    ValueError
        Naming ``argument`` and the expected length ``size_name = size``.
    """
    a = np.asarray(x, dtype=float)
    if a.shape != (size,):
        raise ValueError(f"{argument} must be a vector of length {size_name} = {size}, "
                         f"got shape {a.shape}")
    return a


def check_configuration(model: Model, q, argument: str = "q") -> np.ndarray:
    """``q`` as a float vector of length ``model.nq``, with unit quaternions.

    Raises
    ------
    ValueError
        Wrong length (naming ``argument``) or a quaternion whose norm differs from 1 by more
        than 1e-9 (naming the joint).
    """
    q = as_vector(q, model.nq, argument, "model.nq")
    checked = model._checked_joints
    if checked is None:             # the joints whose type checks anything (quaternions, ...)
        base = JointModel.check
        checked = model._checked_joints = tuple(jm for jm in model.joints
                                                if type(jm).check is not base)
    for jm in checked:
        jm.check(q[jm.q_slice], argument)
    return q


def check_run(model: Model, q0, v0, dt: float, steps) -> tuple[int, np.ndarray, np.ndarray]:
    """Validated ``(steps, q0, v0)`` of a simulation: ``dt > 0``, integer ``steps >= 0``,
    ``q0`` a valid configuration and ``v0`` of length ``model.nv``."""
    if not dt > 0.0 or int(steps) != steps or steps < 0:
        raise ValueError(f"need dt > 0 and an integer steps >= 0, got dt={dt}, steps={steps}")
    return (int(steps), check_configuration(model, q0, "q0"),
            as_vector(v0, model.nv, "v0", "model.nv"))


def check_newton(tol: float, max_iter: int) -> None:
    """ValueError unless ``tol > 0`` and ``max_iter`` is an integer ``>= 0`` (the Newton
    settings of the variational integrators)."""
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}")
    if int(max_iter) != max_iter or max_iter < 0:
        raise ValueError(f"max_iter must be an integer >= 0, got {max_iter!r}")


def step_forces(tau, steps: int, n: int) -> np.ndarray:
    """Joint forces per step, ``(steps, n)`` C-contiguous: zeros for ``None``, an ``(n,)``
    vector held over every step, or a ``(steps, n)`` array; ValueError for other shapes."""
    tau_k = np.zeros((steps, n)) if tau is None else np.asarray(tau, dtype=float)
    if tau_k.shape == (n,):
        tau_k = np.tile(tau_k, (steps, 1))
    if tau_k.shape != (steps, n):
        raise ValueError(f"tau must have shape (model.nv,) = ({n},) or (steps, model.nv) = "
                         f"({steps}, {n}), got {np.shape(tau)}")
    return np.ascontiguousarray(tau_k)


def neutral(model: Model) -> np.ndarray:
    """The configuration with every link frame on its joint frame (``pinocchio.neutral``).

    >>> from dynamics import models
    >>> from dynamics.minimal import Model
    >>> neutral(Model(models.pendulum(2, "spherical")))
    array([1., 0., 0., 0., 1., 0., 0., 0.])
    """
    return np.concatenate([jm.neutral() for jm in model.joints]) if model.joints \
        else np.zeros(0)


def integrate(model: Model, q, v) -> np.ndarray:
    """``q ⊕ v`` joint by joint (``pinocchio.integrate``): ``q + v`` for 1-DOF joints,
    ``r ∘ exp(w)`` for rotations and ``T exp([V])`` for floating joints (velocities in the
    link frame).

    Raises
    ------
    ValueError
        Wrong lengths or non-unit quaternions in ``q``.
    """
    q = check_configuration(model, q)
    v = as_vector(v, model.nv, "v", "model.nv")
    out = np.empty(model.nq)
    for jm in model.joints:
        sq, sv = jm.q_slice, jm.v_slice
        out[sq] = jm.integrate(q[sq], v[sv])
    return out


def difference(model: Model, q0, q1) -> np.ndarray:
    """``v`` with ``integrate(model, q0, v) == q1`` (``pinocchio.difference``; relative
    rotations below π)."""
    q0 = check_configuration(model, q0, "q0")
    q1 = check_configuration(model, q1, "q1")
    out = np.empty(model.nv)
    for jm in model.joints:
        sq, sv = jm.q_slice, jm.v_slice
        out[sv] = jm.difference(q0[sq], q1[sq])
    return out


def normalize(model: Model, q) -> np.ndarray:
    """A copy of ``q`` with every quaternion scaled to unit norm."""
    q = np.array(as_vector(q, model.nq, "q", "model.nq"))
    for jm in model.joints:
        if getattr(jm, "nr", 0) == 4:
            r = slice(jm.idx_q + jm.nq - 4, jm.idx_q + jm.nq)
            q[r] /= np.linalg.norm(q[r])
    return q


def random_configuration(model: Model, seed=None, *, scale: float = 1.0) -> np.ndarray:
    """``integrate(model, neutral(model), v)`` for a normal random ``v`` of standard deviation
    ``scale`` (``seed``: anything ``numpy.random.default_rng`` accepts)."""
    rng = np.random.default_rng(seed)
    return integrate(model, neutral(model), scale * rng.normal(size=model.nv))


def from_spec_coordinates(model: Model, positions: Mapping | None = None,
                          velocities: Mapping | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(q, v)`` of spec joint coordinates and rates (joint name -> (dof,) array).

    Joints left out are at zero; fixed joints (no coordinates) may appear with empty arrays.

    Raises
    ------
    ValueError
        A name that is no joint of the model, or an entry of the wrong length.

    Examples
    --------
    >>> from dynamics import models
    >>> from dynamics.minimal import Model
    >>> model = Model(models.pendulum(1, "spherical"))
    >>> q, v = from_spec_coordinates(model, {"joint1": [np.pi, 0.0, 0.0]}, {"joint1": [1, 2, 3]})
    >>> np.round(q, 12), v
    (array([0., 1., 0., 0.]), array([1., 2., 3.]))
    """
    positions, velocities = dict(positions or {}), dict(velocities or {})
    by_name = {jm.name: jm for jm in model.joints}
    fixed = {j.name for j in model.spec.tree_joints if j.type == "fixed"}
    for key, given in (("positions", positions), ("velocities", velocities)):
        for name, value in given.items():
            if name in fixed and np.size(value) == 0:
                continue
            if name not in by_name:
                raise ValueError(f"{key}: {name!r} is not a moving joint of model "
                                 f"{model.name!r}; joints: {model.joint_names}")
            dof = by_name[name].spec_joint.dof
            if np.size(value) != dof or np.ndim(value) > 1:
                raise ValueError(f"{key}[{name!r}] must have {dof} entries, got shape "
                                 f"{np.shape(value)}")
    q, v = np.empty(model.nq), np.empty(model.nv)
    for jm in model.joints:
        zero = np.zeros(jm.spec_joint.dof)
        x = np.reshape(np.asarray(positions.get(jm.name, zero), dtype=float), -1)
        xd = np.reshape(np.asarray(velocities.get(jm.name, zero), dtype=float), -1)
        q[jm.q_slice], v[jm.v_slice] = jm.from_spec(x, xd)
    return q, v


def to_spec_coordinates(model: Model, q, v=None) -> tuple[dict, dict]:
    """Spec joint coordinates and rates (joint name -> (dof,) array) of ``(q, v)``
    (``v`` defaults to zeros); rotation vectors have angles in ``[0, π]``."""
    q = check_configuration(model, q)
    v = np.zeros(model.nv) if v is None else as_vector(v, model.nv, "v", "model.nv")
    positions, velocities = {}, {}
    for jm in model.joints:
        sq, sv = jm.q_slice, jm.v_slice
        positions[jm.name], velocities[jm.name] = jm.to_spec(q[sq], v[sv])
    return positions, velocities


def initial_state(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """``(q, v)`` of ``model.spec.initial_positions`` and ``initial_velocities``."""
    return from_spec_coordinates(model, model.spec.initial_positions,
                                 model.spec.initial_velocities)
