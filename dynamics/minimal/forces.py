"""Joint springs and dampers of the spec as joint forces, and the total mechanical energy.

``rnea``, ``aba`` and ``crba`` compute the rigid-body dynamics alone; the integrators of
:mod:`.integrators` and :mod:`.variational` add these joint forces. For a joint with spring
constant ``k``, damper ``d`` and rest configuration ``q_rest`` (the spec's ``spring_offset``):

* revolute / prismatic: ``tau = -k (q - q_rest) - d v``, potential ``½ k (q - q_rest)²``;
* spherical: ``tau = -k log(R_restᵀ R) - d ω`` with the link-frame angular velocity ``ω``,
  potential ``½ k |log(R_restᵀ R)|²`` (``-k log(R_restᵀ R)`` is exactly minus its gradient
  for right perturbations ``R exp(δ)``, since ``J_r(θ)ᵀ θ = θ``).

Floating joints with a spring or damper are rejected (the spec's floating coordinates are not
the link-frame twist of this model). Planar joints take dampers, ``tau = -d v`` (the same
force as the spec's ``-d`` times the parent-frame translation and angle rates: ``v`` is their
rotation into the link frame), and reject springs (the spec's spring acts on the parent-frame
translation, not on the SE(2) ``difference``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .algorithms import kinetic_energy, potential_energy
from .configuration import as_vector
from .model import Data, Model, TreeModelError

__all__ = ["JointSprings", "joint_springs", "joint_forces", "spring_energy", "total_energy"]


@dataclass(frozen=True)
class JointSprings:
    """Per-``v``-entry spring and damper constants and each joint's rest configuration.

    Attributes
    ----------
    stiffness, damping : (nv,) arrays
    rest : (nq,) array
        Rest configuration (the spec's ``spring_offset``, zeros by default).
    active : bool
        Whether any spring or damper is nonzero.
    """

    stiffness: np.ndarray
    damping: np.ndarray
    rest: np.ndarray
    active: bool


def joint_springs(model: Model) -> JointSprings:
    """The model's :class:`JointSprings` (built once per model and cached on it).

    Raises
    ------
    TreeModelError
        A floating joint with a nonzero spring or damper, or a planar joint with a nonzero
        spring (naming the joint).
    """
    cached = model._joint_springs
    if cached is not None:
        return cached
    k, d, rest = np.zeros(model.nv), np.zeros(model.nv), np.empty(model.nq)
    for jm in model.joints:
        sj = jm.spec_joint
        if jm.type == "floating" and (sj.spring or sj.damper):
            raise TreeModelError(f"joint {jm.name!r}: springs and dampers on floating joints "
                                 "are not supported by dynamics.minimal")
        if jm.type == "planar" and sj.spring:
            raise TreeModelError(f"joint {jm.name!r}: springs on planar joints are not "
                                 "supported by dynamics.minimal (dampers are)")
        k[jm.v_slice], d[jm.v_slice] = sj.spring, sj.damper
        offset = np.zeros(sj.dof) if sj.spring_offset is None else sj.spring_offset
        rest[jm.q_slice] = jm.from_spec(offset, np.zeros(sj.dof))[0]
    out = JointSprings(k, d, rest, bool(np.any(k) or np.any(d)))
    for a in (out.stiffness, out.damping, out.rest):
        a.setflags(write=False)
    model._joint_springs = out
    return out


def _deflection(model: Model, q: np.ndarray, springs: JointSprings) -> np.ndarray:
    """``difference(rest, q)`` joint by joint (no input checks)."""
    out = np.empty(model.nv)
    for jm in model.joints:
        out[jm.v_slice] = jm.difference(springs.rest[jm.q_slice], q[jm.q_slice])
    return out


def joint_forces(model: Model, q, v) -> np.ndarray:
    """Spring and damper forces ``-k difference(q_rest, q) - d v`` of every joint, (nv,).

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(2, damper=0.5))
    >>> joint_forces(model, [0.1, 0.2], [1.0, -2.0])
    array([-0.5,  1. ])
    """
    springs = joint_springs(model)
    v = as_vector(v, model.nv, "v", "model.nv")
    if not springs.active:
        return np.zeros(model.nv)
    q = as_vector(q, model.nq, "q", "model.nq")
    tau = -springs.damping * v
    if np.any(springs.stiffness):
        tau -= springs.stiffness * _deflection(model, q, springs)
    return tau


def spring_energy(model: Model, q) -> float:
    """``Σ ½ k |difference(q_rest, q)|²`` over the joints (0 without springs)."""
    springs = joint_springs(model)
    if not np.any(springs.stiffness):
        return 0.0
    delta = _deflection(model, as_vector(q, model.nq, "q", "model.nq"), springs)
    return float(0.5 * springs.stiffness @ (delta * delta))


def total_energy(model: Model, data: Data, q, v) -> float:
    """Kinetic + gravitational + spring energy."""
    return (kinetic_energy(model, data, q, v) + potential_energy(model, data, q)
            + spring_energy(model, q))
