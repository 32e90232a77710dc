"""A mechanism in maximal coordinates: body arrays, joint constants, poses and energies.

Each body ``i`` has a position ``x[i]`` (world, of its centre of mass), an orientation
``q[i]`` (unit quaternion, body to world), a velocity ``v[i]`` (world) and an angular velocity
``w[i]`` (body frame), as in Brüdigam et al. (2023) §2.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from .. import quaternion as quat
from ..spec import MechanismSpec, SpecError
from . import joints as jt

__all__ = ["MaximalModel", "RegularizationWarning", "regularize_singular_bodies",
           "SINGULAR_BODIES"]

#: Values of ``singular_bodies`` (:class:`MaximalModel`, :class:`~.simulation.Simulation`).
SINGULAR_BODIES = ("refuse", "regularize")


class RegularizationWarning(UserWarning):
    """A body with a singular inertia was given a small regularizing mass and inertia
    (:func:`regularize_singular_bodies`); the message names the body and what was added."""


def _singular_bodies(spec: MechanismSpec) -> list:
    return [b for b in spec.bodies if b.allow_singular and b.singular]


def _articulated_inertia_error(spec: MechanismSpec) -> str | None:
    """The minimal-coordinate model's message if a joint of the tree ``spec`` sees a singular
    articulated inertia (the ``ratio -> 0`` limit of the regularization does not exist), else
    ``None`` (also when the minimal model does not apply: loops, joint types it lacks)."""
    if spec.loop_joints:
        return None
    from ..minimal.model import Model, SingularArticulatedInertiaError  # lazy import
    try:
        Model(spec)
    except SingularArticulatedInertiaError as e:
        return str(e)
    except (ValueError, NotImplementedError):   # the minimal model does not apply
        return None
    return None


def regularize_singular_bodies(spec: MechanismSpec, ratio: float = 1e-6, *,
                               check: bool = True) -> MechanismSpec:
    """A copy of ``spec`` in which every singular body gets a small mass and inertia.

    A body with ``Body.allow_singular`` and a singular spatial inertia (a massless URDF link
    between two moving joints, such as the cross of a universal joint; a point mass) cannot be
    simulated in maximal coordinates, whose discrete dynamics (20) needs every body's mass
    matrix ``diag(m I, J)`` invertible. This function adds to each such body

    * the mass ``ratio * m_ref`` if its mass is zero (a point mass keeps its mass), and
    * the isotropic inertia ``ratio * j_ref * I₃`` (about its centre of mass),

    where ``m_ref`` is the smallest mass and ``j_ref`` the smallest principal moment of
    inertia among the spec's regular bodies. Without regular bodies (a chain of point masses)
    ``m_ref`` is the smallest positive mass and ``j_ref = m_ref ℓ²`` with ``ℓ`` the largest
    joint offset (``|parent_point|``, ``|child_point|``) of the spec. Each modified body is
    reported by a :class:`RegularizationWarning` naming it and the added mass and inertia.

    This is a modelling change, not an exact treatment: in minimal coordinates the joint-space
    inertia becomes ``M(q) + ratio ΔM(q)``; when ``M(q)`` is positive definite (every joint
    sees a positive definite articulated inertia, the condition under which
    ``dynamics.minimal`` accepts the unregularized spec) the accelerations, and over a fixed
    time the trajectories, change by ``O(ratio)`` and no fast mode appears. Where ``M(q)`` is
    singular (e.g. two coaxial joints around a massless link) the limit does not exist and
    the regularized motion depends on ``ratio``: with ``check=True`` (default) such tree specs
    are refused, using the minimal model's articulated-inertia check (at the neutral
    configuration; loop-closing specs are not checked).

    Parameters
    ----------
    spec : MechanismSpec
    ratio : float
        Fraction in ``(0, 1]`` of the reference mass and inertia; default ``1e-6``.
    check : bool
        Refuse specs whose unregularized articulated inertia is singular (see above).

    Returns
    -------
    MechanismSpec
        ``spec`` itself when no body is singular, else a copy with regular bodies in place of
        the singular ones (``allow_singular`` kept, names, joints and frames unchanged).

    Raises
    ------
    ValueError
        ``ratio`` outside ``(0, 1]``.
    SpecError
        No body has a positive mass, or (``check``) a joint sees a singular articulated
        inertia.
    """
    return _regularize(spec, ratio, check, stacklevel=3)


def _regularize(spec: MechanismSpec, ratio: float, check: bool, stacklevel: int):
    ratio = float(ratio)
    if not (np.isfinite(ratio) and 0.0 < ratio <= 1.0):
        raise ValueError(f"regularize_ratio must be in (0, 1], got {ratio}")
    singular = _singular_bodies(spec)
    if not singular:
        return spec
    names = [b.name for b in singular]
    if check:
        err = _articulated_inertia_error(spec)
        if err is not None:
            raise SpecError(f"bodies {names} cannot be regularized: {err}; a small added "
                            "inertia would decide the motion (no limit as the ratio -> 0)")
    regular = [b for b in spec.bodies if not b.singular]
    if regular:
        m_ref = min(b.mass for b in regular)
        j_ref = min(np.linalg.eigvalsh(b.inertia).min() for b in regular)
        basis = "the smallest regular body mass / principal inertia"
    else:
        masses = [b.mass for b in spec.bodies if b.mass > 0.0]
        if not masses:
            raise SpecError(f"bodies {names}: no body of mechanism {spec.name!r} has a mass, "
                            "there is nothing to scale a regularization by")
        m_ref = min(masses)
        length = max(max(np.linalg.norm(j.parent_point), np.linalg.norm(j.child_point))
                     for j in spec.joints) if spec.joints else 0.0
        if not length > 0.0:
            raise SpecError(f"bodies {names}: mechanism {spec.name!r} has no regular body and "
                            "no joint offset to scale a regularizing inertia by")
        j_ref = m_ref * length**2
        basis = (f"no regular body: the smallest mass and (smallest mass) x (largest joint "
                 f"offset {length:g} m)^2")
    bodies = []
    for b in spec.bodies:
        if not (b.allow_singular and b.singular):
            bodies.append(b)
            continue
        dm = ratio * m_ref if b.mass <= 0.0 else 0.0
        dj = ratio * j_ref
        warnings.warn(f"body {b.name!r} has a singular inertia (mass {b.mass:g} kg); "
                      f"regularized for maximal coordinates by adding mass {dm:.3g} kg and "
                      f"isotropic inertia {dj:.3g} kg m^2 (ratio {ratio:g} of {basis}, "
                      f"{m_ref:.3g} kg / {j_ref:.3g} kg m^2)",
                      RegularizationWarning, stacklevel=stacklevel)
        bodies.append(dataclasses.replace(b, mass=b.mass + dm, inertia=b.inertia + dj * np.eye(3)))
    return dataclasses.replace(spec, bodies=tuple(bodies))


class MaximalModel:
    """Arrays of a :class:`~dynamics.spec.MechanismSpec` for the maximal-coordinate code.

    Parameters
    ----------
    spec : MechanismSpec
    singular_bodies : {"refuse", "regularize"}
        What to do with bodies of singular inertia (``Body.allow_singular``, e.g. a massless
        URDF link between two moving joints). ``"refuse"`` (default): :class:`SpecError`.
        ``"regularize"``: simulate :func:`regularize_singular_bodies(spec, regularize_ratio)
        <regularize_singular_bodies>` instead, which adds a small mass and isotropic inertia to
        each such body with a :class:`RegularizationWarning` (a modelling change of
        ``O(regularize_ratio)``, see there).
    regularize_ratio : float
        The added mass and inertia as a fraction of the smallest regular body's mass and
        principal moment of inertia (default ``1e-6``); used with ``"regularize"`` only.

    Attributes
    ----------
    spec : MechanismSpec
        The simulated spec: the given one, or its regularized copy.
    mass : (nb,) ; inertia : (nb, 3, 3) ; gravity : (3,)
    joints : JointSet
        All joints of the spec, in spec order.
    frame_names : list of str
        The spec's frames (:class:`~dynamics.spec.Frame`), see :meth:`frame_poses`.

    Raises
    ------
    SpecError
        With ``singular_bodies="refuse"``, a body with a singular inertia, naming the body and
        its joints: every body's mass matrix ``diag(m I, J)`` enters the discrete dynamics (20)
        and must be invertible; combining the joints around such a link into one compound
        joint is not implemented. With ``"regularize"``, the errors of
        :func:`regularize_singular_bodies`.
    ValueError
        An unknown ``singular_bodies`` or a ``regularize_ratio`` outside ``(0, 1]``.
    """

    def __init__(self, spec: MechanismSpec, *, singular_bodies: str = "refuse",
                 regularize_ratio: float = 1e-6):
        if not isinstance(spec, MechanismSpec):
            raise TypeError(f"expected a MechanismSpec, got {type(spec).__name__}")
        if singular_bodies not in SINGULAR_BODIES:
            raise ValueError(f"singular_bodies must be one of {SINGULAR_BODIES}, got "
                             f"{singular_bodies!r}")
        if singular_bodies == "regularize":
            spec = _regularize(spec, regularize_ratio, True, stacklevel=4)
        for b in _singular_bodies(spec):
            parents = [j.name for j in spec.joints if j.child == b.name]
            children = [j.name for j in spec.joints if j.parent == b.name]
            what = ("has no mass" if b.mass <= 0.0
                    else f"has a singular inertia (mass {b.mass:g} kg, inertia eigenvalues "
                         f"{np.linalg.eigvalsh(b.inertia)})")
            where = (f"it sits between joints {parents} (to its parent) and {children} "
                     "(to its children)" if children else f"it is moved by joints {parents}")
            raise SpecError(
                f"body {b.name!r} {what}; {where}. The maximal-coordinate model needs a "
                "positive mass and a positive definite inertia for every body and does not "
                "combine the joints around a massless link into a compound joint: give "
                "the link an inertia, pass singular_bodies=\"regularize\" (with "
                "regularize_ratio, default 1e-6) to add a small stated mass and inertia, or "
                "simulate the mechanism with dynamics.minimal")
        self.spec = spec
        self.mass = np.array([b.mass for b in spec.bodies])
        self.inertia = np.array([b.inertia for b in spec.bodies])
        self.gravity = np.asarray(spec.gravity, dtype=float)
        self.joints = jt.joint_set(spec)
        self.n_bodies = len(spec.bodies)
        index = {b.name: k for k, b in enumerate(spec.bodies)}
        self.frame_names = [f.name for f in spec.frames]
        self._frame_body = np.array([index.get(f.body, -1) for f in spec.frames], dtype=np.int64)
        self._frame_position = np.array([f.position for f in spec.frames]).reshape(-1, 3)
        self._frame_orientation = np.array([f.orientation for f in spec.frames]).reshape(-1, 4)

    def frame_poses(self, x, q) -> tuple[np.ndarray, np.ndarray]:
        """World positions ``(..., n_frames, 3)`` and rotations ``(..., n_frames, 3, 3)`` of the
        spec's frames (order :attr:`frame_names`) for body poses ``x (..., nb, 3)``,
        ``q (..., nb, 4)`` (an optional leading time axis, e.g. ``traj.x, traj.q``).

        A frame on body ``b`` at ``(p, q_f)`` is at ``x_b + Q(q_b) p`` with rotation
        ``Q(q_b) Q(q_f)``; frames on the world are constant.
        """
        x, q = np.asarray(x, dtype=float), np.asarray(q, dtype=float)
        lead = x.shape[:-2]
        nf = len(self.frame_names)
        pos, rot = np.empty(lead + (nf, 3)), np.empty(lead + (nf, 3, 3))
        R_f = np.array([quat.rotation_matrix(o) for o in self._frame_orientation])
        for k in range(nf):
            b = self._frame_body[k]
            if b < 0:
                pos[..., k, :], rot[..., k, :, :] = self._frame_position[k], R_f[k]
                continue
            R_b = quat.rotation_matrix(q[..., b, :])
            pos[..., k, :] = x[..., b, :] + R_b @ self._frame_position[k]
            rot[..., k, :, :] = R_b @ R_f[k]
        return pos, rot

    # ------------------------------------------------------------------ kinematics
    def endpoint_states(self, x, q):
        return jt.endpoint_states(self.joints, x, q)

    def joint_velocities(self, x, q, v, w) -> np.ndarray:
        """Joint coordinate rates, padded (n_joints, 6); see :func:`joints.rate_map`."""
        js = self.joints
        M = jt.rate_map(js, *self.endpoint_states(x, q))
        return np.einsum("...ij,...j->...i", M, self._stack_velocities(v, w))

    def _stack_velocities(self, v, w) -> np.ndarray:
        """``[v_a, ω_a, v_b, ω_b]`` per joint, zeros for the world; (..., n_joints, 12)."""
        js = self.joints
        out = np.zeros(v.shape[:-2] + (len(js), 12))
        has = js.parent >= 0
        out[..., has, 0:3] = v[..., js.parent[has], :]
        out[..., has, 3:6] = w[..., js.parent[has], :]
        out[..., 6:9] = v[..., js.child, :]
        out[..., 9:12] = w[..., js.child, :]
        return out

    def minimal_coordinates(self, x, q) -> np.ndarray:
        """Padded joint coordinates (n_joints, 6); see :func:`joints.minimal_coordinates`."""
        return jt.minimal_coordinates(self.joints, *self.endpoint_states(x, q))

    def constraint_residual(self, x, q) -> np.ndarray:
        """Selected constraint values ``Dᵀ g`` of all joints, padded (n_joints, 6)."""
        g = jt.constraint_terms(self.joints, *self.endpoint_states(x, q), jacobians=False)
        return np.einsum("...ij,...j->...i", self.joints.select, g)

    def constraint_violation(self, x, q) -> np.ndarray:
        """Maximum absolute joint-constraint residual (m, quaternion units) per state."""
        if len(self.joints) == 0:
            return np.zeros(np.shape(x)[:-2])
        return np.abs(self.constraint_residual(x, q)).max(axis=(-1, -2))

    # ------------------------------------------------------------------ initial state
    def initial_state(self):
        """Poses and velocities from the spec's initial joint coordinates (tree joints).

        Returns ``(x, q, v, w)``. The configuration of loop joints follows from the tree; it
        must satisfy their constraints (checked by the caller).
        """
        spec, js = self.spec, self.joints
        nb = self.n_bodies
        x = np.full((nb, 3), np.nan)
        q = np.full((nb, 4), np.nan)
        v = np.zeros((nb, 3))
        w = np.zeros((nb, 3))
        known = np.zeros(nb, dtype=bool)
        order = {n: k for k, n in enumerate(js.names)}
        for joint in spec.tree_joints:
            k = order[joint.name]
            pos = np.zeros(6)
            vel = np.zeros(6)
            d = joint.dof
            pos[:d] = spec.initial_positions.get(joint.name, np.zeros(d))
            vel[:d] = spec.initial_velocities.get(joint.name, np.zeros(d))
            C = js.free[k, :d].T                  # (6, dof)
            trans, rot = C[:3] @ pos[:d], self._rotation(k, pos)
            a, b = int(js.parent[k]), int(js.child[k])
            if a >= 0 and not known[a]:
                # reversed tree edge: the child is placed, the parent follows
                if np.any(vel):
                    raise SpecError(f"joint {joint.name!r}: initial velocities on a joint "
                                    "traversed child-to-parent are not supported")
                q[a] = quat.multiply(quat.multiply(q[b], quat.conjugate(rot)),
                                     quat.conjugate(js.q_off[k]))
                x[a] = (x[b] + quat.rotate(q[b], js.p_b[k])
                        - quat.rotate(q[a], js.p_a[k] + trans))
                known[a] = True
                continue
            xa = np.zeros(3) if a < 0 else x[a]
            qa = quat.IDENTITY if a < 0 else q[a]
            va = np.zeros(3) if a < 0 else v[a]
            wa = np.zeros(3) if a < 0 else w[a]
            q[b] = quat.multiply(quat.multiply(qa, js.q_off[k]), rot)
            x[b] = xa + quat.rotate(qa, js.p_a[k] + trans) - quat.rotate(q[b], js.p_b[k])
            Qa, Qb = quat.rotation_matrix(qa), quat.rotation_matrix(q[b])
            rate = C @ vel[:d]
            # relative angular velocity in the child frame (joints.rate_map): for one
            # rotational DOF ``axis θ̇`` is the same in the joint and the child frame
            w[b] = Qb.T @ Qa @ wa + rate[3:]
            lever = Qa.T @ (x[b] + Qb @ js.p_b[k] - xa)
            v[b] = va + Qb @ np.cross(js.p_b[k], w[b]) + Qa @ (rate[:3] + np.cross(wa, lever))
            known[b] = True
        return x, q, v, w

    def _rotation(self, k: int, pos: np.ndarray) -> np.ndarray:
        js = self.joints
        t, r = int(js.translational_dof[k]), int(js.rotational_dof[k])
        if r == 0:
            return quat.IDENTITY.copy()
        if r == 1:
            return quat.from_axis_angle(js.rot_axis[k], pos[t])
        return quat.from_rotation_vector(pos[t:t + 3])

    # ------------------------------------------------------------------ energies
    def kinetic_energy(self, v, w) -> np.ndarray:
        """``Σ ½ m vᵀv + ½ ωᵀ J ω`` for state arrays with an optional leading time axis."""
        trans = 0.5 * np.einsum("i,...ij,...ij->...", self.mass, v, v)
        rot = 0.5 * np.einsum("...ij,ijk,...ik->...", w, self.inertia, w)
        return trans + rot

    def potential_energy(self, x, q) -> np.ndarray:
        """Gravity ``-Σ m gᵀx`` plus joint springs ``½ k |c - c₀|²`` per state."""
        energy = -np.einsum("i,...ij,j->...", self.mass, x, self.gravity)
        js = self.joints
        if np.any(js.spring > 0):
            c = self.minimal_coordinates(x, q) - js.spring_offset
            energy = energy + 0.5 * np.einsum("n,...nj->...", js.spring, c * c)
        return energy
