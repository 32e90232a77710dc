"""Independent simulators for the maximal-coordinate integrator: Pinocchio and MuJoCo from a spec.

A tree :class:`~dynamics.spec.MechanismSpec` (no loop-closing joints) with ``revolute``,
``prismatic``, ``spherical`` and ``fixed`` joints and an optional ``floating`` root becomes a
``pinocchio.Model`` (:func:`pinocchio_model`) and MJCF text (:func:`mujoco_model_xml`);
:func:`simulate_pinocchio` and :func:`simulate_mujoco` step them and return trajectories,
energies, body poses and the wall time of the stepping loop. Neither peer uses ``dynamics``
beyond the spec and its quaternion helpers. The code lives in :mod:`comparisons.peer_tree`
(the tree and the coordinate layouts), :mod:`comparisons.pinocchio_peer` and
:mod:`comparisons.mujoco_peer`; this module is their public face.

Frames
------
The link frame of a body is the child frame of the joint that carries it: the joint frame
(``orientation_offset`` at ``parent_point`` in the parent body's centre-of-mass frame) moved by
the joint coordinate. The body's centre-of-mass frame is the link frame shifted by
``-child_point``, with the same orientation. In Pinocchio a link frame is a joint frame (a
fixed joint adds no joint: its body is appended to the parent's joint); in MuJoCo it is the
frame of a nested ``<body>``.

Coordinates
-----------
Spec coordinates (``spec.initial_positions`` and the ``coordinates`` output) are the angle about
``axis`` (revolute), the displacement along ``axis`` (prismatic), the rotation vector of the
child frame in the joint frame (spherical) and, for a floating root, the displacement of
``child_point`` from ``parent_point`` in the parent (world) frame followed by that rotation
vector. Rotational rates are relative angular velocities in the child frame, which are
Pinocchio's local ``v`` and MuJoCo's ``qvel`` for ball joints. Layouts differ: Pinocchio stores
a spherical joint as a quaternion ``(x, y, z, w)`` (nq 4, nv 3) and a free flyer as position
and quaternion with a local twist; MuJoCo stores quaternions ``(w, x, y, z)`` and a free
joint's linear velocity in the world frame.

Forces and integrators
----------------------
A joint's ``damper`` gives ``tau = -d v`` on each of its velocities and its ``spring``
``tau = -k (q - rest)`` (revolute and prismatic joints; MuJoCo ``damping``, ``stiffness``,
``springref``). Both are explicit in every scheme: MuJoCo's implicit damping in its Euler
integrator is switched off, so Pinocchio's ``"semi_implicit_euler"`` and MuJoCo's ``"euler"``
are the same method (``v+ = v + dt a(q, v)``, ``q+ = q ⊕ dt v+``) and agree to round-off on
fixed-base trees. ``"rk4"`` is the classic Runge-Kutta method in the tangent space at the step's
start in both (fourth order on SO(3)); with a floating root the two agree to ``O(dt⁴)`` only,
since Pinocchio integrates a free flyer on SE(3) and MuJoCo on R³ × SO(3).

Timing
------
``seconds`` covers the stepping loop alone (``time.perf_counter``), with the state copied into
preallocated arrays at every step; energies and body poses are computed afterwards.

References
----------
J. Carpentier et al., "The Pinocchio C++ library", IEEE/SICE SII 2019.
E. Todorov, T. Erez, Y. Tassa, "MuJoCo: a physics engine for model-based control", IROS 2012.
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, ch. 7 (articulated bodies).
H. Munthe-Kaas, "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29, 1999.
J. Brüdigam, S. Sosnowski, Z. Manchester, S. Hirche, "Linear-time variational integrators in
maximal coordinates", 2023, Table B.2 (joint types).

Examples
--------
>>> import numpy as np
>>> from dynamics.spec import Body, Joint, MechanismSpec
>>> rod = Body("rod", 1.0, np.diag([1 / 12, 1 / 12, 1e-3]))
>>> spec = MechanismSpec([rod], [Joint("hinge", "revolute", "world", "rod",
...                                    child_point=[0, 0, 0.5])],
...                      initial_positions={"hinge": [0.1]})
>>> sim = simulate_pinocchio(spec, dt=1e-3, steps=10, integrator="rk4")
>>> sim["joint_angles"].shape, sim["revolute_joints"]
((11, 1), ['hinge'])
"""
from __future__ import annotations

from .mujoco_peer import MUJOCO_INTEGRATORS, mujoco_model_xml, mujoco_state, simulate_mujoco
from .peer_tree import SUPPORTED_JOINTS, SimulationDivergedError, UnsupportedMechanismError
from .pinocchio_peer import (
    PIN_FORWARD_DYNAMICS,
    PIN_INTEGRATORS,
    pinocchio_model,
    pinocchio_state,
    simulate_pinocchio,
    solve_ivp_pinocchio,
)

__all__ = ["SUPPORTED_JOINTS", "PIN_INTEGRATORS", "PIN_FORWARD_DYNAMICS", "MUJOCO_INTEGRATORS",
           "UnsupportedMechanismError", "SimulationDivergedError", "pinocchio_model",
           "pinocchio_state", "simulate_pinocchio", "solve_ivp_pinocchio", "mujoco_model_xml",
           "mujoco_state", "simulate_mujoco"]
