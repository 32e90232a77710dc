"""Minimal-coordinate dynamics of kinematic trees (Lee, Liu, Park & Srinivasa 2016).

Modules: :mod:`.spatial` (SE(3) algebra), :mod:`.joints`, :mod:`.model`, :mod:`.configuration`,
:mod:`.algorithms` (FK, RNEA, ABA, CRBA, energies), :mod:`.forces` (joint springs / dampers),
:mod:`.results` (:class:`SimulationResult`, :class:`ConvergenceError`, :class:`DivergenceError`),
:mod:`.integrators` (explicit Euler, semi-implicit Euler, RKMK4, :func:`simulate`),
:mod:`.variational` (DRNEA, RIQN / Newton / Broyden), :mod:`.galerkin` (the higher-order
Lobatto Galerkin variational integrators of Fan, Schultz & Murphey 2018, Newton with the exact
Jacobian), :mod:`.tree_kernels` (numba kernels for revolute / prismatic trees),
:mod:`.multi_dof_kernels` (numba ABA, ``⊕`` and explicit loops with every built-in joint),
:mod:`.multi_dof_variational` (the RIQN variational loop compiled for them) and
:mod:`.general_joint` (Si & Guenter's general scleronomic joints: ``T(q)`` in sympy, ``S`` and
``Ṡ`` derived; plug in with ``Model(spec, custom_joints=...)``).

A :class:`Model` is built from a :class:`~dynamics.spec.MechanismSpec` or a URDF; as in
Pinocchio, ``data = model.create_data()`` holds the work arrays and the algorithms are free
functions ``f(model, data, q, ...)``.

>>> import numpy as np
>>> from dynamics import models
>>> from dynamics.minimal import Model, aba, crba, initial_state, rnea
>>> model = Model(models.pendulum(3))
>>> data = model.create_data()
>>> q, v = initial_state(model)
>>> ddq = aba(model, data, q, v, np.zeros(model.nv))
>>> bool(np.allclose(crba(model, data, q) @ ddq + rnea(model, data, q, v, 0 * v), 0.0))
True
"""
from . import spatial
from .algorithms import (
    aba,
    body_poses,
    crba,
    forward_kinematics,
    frame_poses,
    kinetic_energy,
    nonlinear_effects,
    potential_energy,
    rnea,
)
from .configuration import (
    difference,
    from_spec_coordinates,
    initial_state,
    integrate,
    neutral,
    normalize,
    random_configuration,
    to_spec_coordinates,
)
from .forces import joint_forces, spring_energy, total_energy
from .general_joint import GeneralJoint, GeneralJointError
from .integrators import simulate
from .joints import (
    FloatingJoint,
    JointModel,
    PlanarJoint,
    PrismaticJoint,
    RevoluteJoint,
    SphericalJoint,
)
from .model import SUPPORTED_JOINTS, Data, Model, TreeModelError
from .results import ConvergenceError, DivergenceError, SimulationResult
from .variational import drnea, impulse_aba, simulate_variational

__all__ = [
    "Model", "Data", "TreeModelError", "SUPPORTED_JOINTS", "JointModel", "RevoluteJoint",
    "PrismaticJoint", "SphericalJoint", "FloatingJoint", "PlanarJoint", "spatial",
    "forward_kinematics", "body_poses", "frame_poses", "rnea", "aba", "crba", "nonlinear_effects",
    "kinetic_energy", "potential_energy",
    "neutral", "integrate", "difference", "normalize", "random_configuration",
    "from_spec_coordinates", "to_spec_coordinates", "initial_state",
    "joint_forces", "spring_energy", "total_energy", "simulate", "SimulationResult",
    "drnea", "impulse_aba", "simulate_variational", "ConvergenceError", "DivergenceError",
    "GeneralJoint", "GeneralJointError",
]
