"""The kinematic tree shared by the Pinocchio and MuJoCo peers of :mod:`comparisons.dynamics_peers`.

:func:`tree_links` checks that a :class:`~dynamics.spec.MechanismSpec` is something the peers
can model and lists its bodies parents-first with the placement of each joint frame in the
parent's link frame; :class:`Layout` says where each joint sits in a simulator's ``q`` and ``v``
and turns spec coordinates into simulator states and back.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dynamics import quaternion as quat
from dynamics.spec import WORLD, Body, Joint, MechanismSpec, SpecError

__all__ = ["SUPPORTED_JOINTS", "UnsupportedMechanismError", "SimulationDivergedError", "Link",
           "tree_links", "Layout", "config_size", "require", "check_steps", "check_finite",
           "xyzw", "wxyz"]

SUPPORTED_JOINTS = ("revolute", "prismatic", "spherical", "fixed", "floating")


class UnsupportedMechanismError(SpecError):
    """A valid spec the peers cannot model (loops, other joint types, springs on ball joints)."""


class SimulationDivergedError(FloatingPointError):
    """A peer simulation produced non-finite values; ``.step`` and ``.time`` say where."""

    def __init__(self, simulator: str, step: int, dt: float):
        self.step, self.time = step, step * dt
        super().__init__(f"{simulator} simulation diverged at step {step} (t = {self.time:g} s, "
                         f"dt = {dt:g} s); try a smaller time step")


def require(module: str):
    """Import an optional peer (``pinocchio`` or ``mujoco``) with an installation hint."""
    try:
        return importlib.import_module(module)
    except ImportError as err:      # pragma: no cover - depends on the environment
        raise ImportError(f"comparisons.dynamics_peers needs {module!r}: "
                          "pip install 'graphsolve[dynamics]' (pin, mujoco)") from err


def check_steps(dt: float, steps: int) -> None:
    """Raise ``ValueError`` unless ``dt > 0`` and ``steps`` is a non-negative integer."""
    if not (np.isfinite(dt) and dt > 0.0):
        raise ValueError(f"dt must be a positive number, got {dt}")
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps}")


def check_finite(simulator: str, Q: np.ndarray, V: np.ndarray, dt: float) -> None:
    """Raise :class:`SimulationDivergedError` at the first row of ``Q`` or ``V`` with NaN/inf."""
    bad = ~(np.isfinite(Q).all(axis=1) & np.isfinite(V).all(axis=1))
    if bad.any():
        raise SimulationDivergedError(simulator, int(np.argmax(bad)), dt)


def xyzw(q: np.ndarray) -> np.ndarray:
    """Scalar-first quaternions ``(..., 4)`` to scalar-last (Pinocchio's ``coeffs()`` order)."""
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def wxyz(q: np.ndarray) -> np.ndarray:
    """Scalar-last quaternions ``(..., 4)`` to scalar-first (the spec's and MuJoCo's order)."""
    return np.concatenate([q[..., 3:], q[..., :3]], axis=-1)


@dataclass(frozen=True)
class Link:
    """A body on the tree and the placement of its joint frame in the parent's link frame.

    A body's link frame is the child frame of its joint (the joint frame moved by the joint
    coordinate); its centre-of-mass frame is the link frame shifted by ``-child_point``.
    """

    joint: Joint
    body: Body
    parent: int                 # index of the parent link, -1 for the world
    rotation: np.ndarray        # (3, 3): joint frame in the parent link frame
    translation: np.ndarray     # (3,): ``parent_point - parent's child_point``


def tree_links(spec: MechanismSpec) -> list[Link]:
    """The bodies of ``spec`` as :class:`Link` objects, every parent before its children.

    Raises
    ------
    UnsupportedMechanismError
        For loop-closing joints, joint types outside :data:`SUPPORTED_JOINTS`, a joint whose
        parent is farther from the world than its child, a floating joint whose parent is not
        the world, or a spring on a spherical or floating joint.
    """
    if spec.loop_joints:
        raise UnsupportedMechanismError(
            f"mechanism {spec.name!r} has kinematic loops closed by joints "
            f"{[j.name for j in spec.loop_joints]}; the peer simulators model trees only")
    index: dict[str, int] = {}
    links: list[Link] = []
    for j in spec.tree_joints:
        if j.type not in SUPPORTED_JOINTS:
            raise UnsupportedMechanismError(
                f"joint {j.name!r} has type {j.type!r}; the peer simulators support "
                f"{list(SUPPORTED_JOINTS)}")
        if j.parent != WORLD and j.parent not in index:
            raise UnsupportedMechanismError(
                f"joint {j.name!r} is reached from its child {j.child!r}; the peer simulators "
                "need every joint's parent on the world side of the tree")
        if j.type == "floating" and j.parent != WORLD:
            raise UnsupportedMechanismError(
                f"floating joint {j.name!r} has parent {j.parent!r}; only a floating root "
                "(parent 'world') is supported")
        if j.spring > 0.0 and j.type in ("spherical", "floating"):
            raise UnsupportedMechanismError(
                f"joint {j.name!r}: springs are supported on revolute and prismatic joints only, "
                f"not on {j.type!r}")
        parent = index[j.parent] if j.parent != WORLD else -1
        shift = links[parent].joint.child_point if parent >= 0 else np.zeros(3)
        links.append(Link(j, spec.bodies[spec.body_index(j.child)], parent,
                          quat.rotation_matrix(j.orientation_offset), j.parent_point - shift))
        index[j.child] = len(links) - 1
    return links


def config_size(j: Joint) -> int:
    """Configuration entries of a moving joint in both peers (a quaternion has 4)."""
    return {"spherical": 4, "floating": 7}.get(j.type, 1)


#: ``to_segment(joint, x, xdot) -> (q_j, v_j)`` and ``from_segment(joint, Q_j) -> X_j``
ToSegment = Callable[[Joint, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
FromSegment = Callable[[Joint, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Layout:
    """Where each moving joint sits in a simulator's ``q`` and ``v`` vectors, with the maps
    between its spec coordinates and its segments there."""

    joints: tuple[Joint, ...]
    q_start: tuple[int, ...]
    v_start: tuple[int, ...]
    nq: int
    nv: int
    to_segment: ToSegment
    from_segment: FromSegment

    def state(self, spec: MechanismSpec) -> tuple[np.ndarray, np.ndarray]:
        """Simulator ``(q, v)`` of the spec's initial coordinates (default zeros)."""
        q, v = np.zeros(self.nq), np.zeros(self.nv)
        for j, iq, iv in zip(self.joints, self.q_start, self.v_start, strict=True):
            zero = np.zeros(j.dof)
            x = np.asarray(spec.initial_positions.get(j.name, zero), dtype=float)
            xd = np.asarray(spec.initial_velocities.get(j.name, zero), dtype=float)
            q[iq:iq + config_size(j)], v[iv:iv + j.dof] = self.to_segment(j, x, xd)
        return q, v

    def forces(self):
        """``damping`` per velocity, and the springs as arrays ``q index, v index, stiffness,
        rest`` (revolute and prismatic joints only)."""
        damping = np.zeros(self.nv)
        rows = []
        for j, iq, iv in zip(self.joints, self.q_start, self.v_start, strict=True):
            damping[iv:iv + j.dof] = j.damper
            if j.spring > 0.0:
                rest = 0.0 if j.spring_offset is None else float(j.spring_offset[0])
                rows.append((iq, iv, j.spring, rest))
        table = np.array(rows, dtype=float).reshape(-1, 4)
        return (damping, table[:, 0].astype(int), table[:, 1].astype(int), table[:, 2],
                table[:, 3])

    def outputs(self, Q: np.ndarray) -> dict:
        """``coordinates`` (joint name -> (T, dof)), ``revolute_joints`` and ``joint_angles``
        (T, number of revolute joints) of a trajectory ``Q`` (T, nq)."""
        coords = {j.name: self.from_segment(j, Q[:, iq:iq + config_size(j)])
                  for j, iq in zip(self.joints, self.q_start, strict=True)}
        revolute = [j.name for j in self.joints if j.type == "revolute"]
        angles = np.stack([coords[n][:, 0] for n in revolute], axis=1) if revolute \
            else np.zeros((Q.shape[0], 0))
        return {"coordinates": coords, "revolute_joints": revolute, "joint_angles": angles}
