"""Ground and body-body contacts with linearized Coulomb friction as nodes of the mechanism graph.

For each contact (Brüdigam et al. 2023 §3.3-3.5, eq. 22-29) the step's unknowns gain, with
slack variables for the interior-point method (§4, App. D):

* ``γ`` normal force and ``s_φ`` its slack, ``s_φ = φ(z₂)``, complementarity ``γ s_φ = μ``;
* for ``m`` friction directions ``b_i`` (pairs ``±``): ``β`` (friction force magnitudes),
  ``η`` and ``ψ`` of the NCP (27): ``B(z₁) ż₁ + ψ 1 - η = 0``, ``β ∘ η = μ``, and the cone
  slack ``s_ψ = c_f γ - 1ᵀβ`` with ``ψ s_ψ = μ``.

The variables of one contact are one graph node with the block order
``u = [γ, s_φ, β (m), η (m), ψ, s_ψ]`` (``[γ, s_φ]`` without friction). A ground contact is a
leaf on its body; a body-body contact (sphere-sphere, sphere-box) is joined to both bodies
(a cycle when the bodies are also joined otherwise: graphsolve's ordering handles it, §4).
The body residuals gain ``-S P_eᵀ [γ; β]`` with ``P = [P_a, P_b]`` the velocity map at ``z₁``
of the contact point of body ``a`` relative to the one of body ``b`` along ``[n; b_1 .. b_m]``
(normal from ``b`` to ``a``, tangent directions in the tangent plane; the ground is a body at
rest, ``P_b = 0``) and ``S = diag(1,1,1,2,2,2)`` the rotational scaling of the integrator's
residual (eq. 16: ``-2τ``); ``P_eᵀ`` maps the contact forces to ``[f; τ]`` by virtual work
(equal and opposite on ``a`` and ``b``) and the normal row equals ``N = [∂φ/∂x, ∂φ/∂ʳq]`` of
eq. (25) up to that scaling. All contacts with the same ``m`` are evaluated together, by the
compiled kernels of :mod:`.contact_kernels` or by the NumPy reference here.

Geometry kinds: ``0`` body point vs ground ``φ = e_zᵀ(x + Q p)``, ``1`` sphere vs ground
``φ = e_zᵀ x - r``, ``2`` sphere vs sphere ``φ = |x_a - x_b| - r_a - r_b``, ``3`` sphere
(``a``) vs box (``b``) ``φ = dist(Q_bᵀ(x_a - x_b), box) - r_a``, ``4`` a joint limit.

A joint limit (``Joint.lower`` / ``upper``) is a frictionless contact between the joint's
child (``a``) and parent (``b``, the world: ``-1``) on one minimal coordinate ``c_i`` of the
joint: ``φ = σ (c_i(z₂) - bound)`` with ``σ = +1`` for a lower and ``-1`` for an upper bound.
Its velocity map is the coordinate's row of the joint's rate map (:func:`.joints.rate_map`,
the actuator map of eq. 1) times ``σ``, so the stop acts on the bodies as a joint force or
torque does; ``∂φ/∂ż`` is that row at ``z₂`` through ``∂z₂/∂ż₁`` (eq. 11, 17). An angle is
read within one turn: at ``z₁`` about the middle of its range, and at ``z₂`` continuously from
its value at ``z₁`` (the step's start, :meth:`ContactGroup.velocity_map` records it), so a step
that turns the joint by less than half a turn cannot pass a stop through the far side.
"""
from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..spec import BodyContact, MechanismSpec
from . import joints as jt
from .contact_kernels import (
    B_AXIS,
    B_BOUND,
    B_FREE,
    B_MIDDLE,
    B_PA,
    B_PB,
    B_QOFF,
    B_SIGN,
    B_START,
    L_CHILD,
    L_COORD,
    L_PARENT,
    L_TDOF,
    LIMIT_COLUMNS,
)

__all__ = ["ContactGroup", "contact_groups"]

E_Z = np.array([0.0, 0.0, 1.0])
_S = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])


def friction_basis(m: int) -> np.ndarray:
    """``m`` unit tangent directions ``b_i`` at angles ``2πi/m`` (opposite pairs; Fig. 1b)."""
    a = 2 * np.pi * np.arange(m) / m
    return np.column_stack([np.cos(a), np.sin(a), np.zeros(m)])


GROUND_POINT, GROUND_SPHERE, SPHERE_SPHERE, SPHERE_BOX, JOINT_LIMIT = 0, 1, 2, 3, 4


def wrap_angle(a, centre):
    """``a`` moved by whole turns into ``[centre - π, centre + π)``."""
    d = a - centre + np.pi
    return centre + (d - 2.0 * np.pi * np.floor(d / (2.0 * np.pi))) - np.pi


class JointLimit:
    """One finite bound of a joint coordinate, as :func:`contact_groups` makes it a contact.

    ``joint``: index in the spec's joints; ``coordinate``: index among the joint's minimal
    coordinates; ``sign``: ``+1`` lower, ``-1`` upper; ``middle``: the middle of an angle's
    range (where it is read from, :func:`wrap_angle`), ``0`` for a translation.
    """

    def __init__(self, name, joint, coordinate, sign, bound, middle):
        self.name, self.joint, self.coordinate = name, joint, coordinate
        self.sign, self.bound, self.middle = sign, bound, middle
        self.friction_directions = 0
        self.radius = self.friction = 0.0


def _limit_table(contacts, js: jt.JointSet | None) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` (int) and ``bound`` (float) rows of :class:`ContactGroup`: each joint
    limit's own values and its joint's constants, zeros (``-1``) for a contact."""
    n = len(contacts)
    limit = np.full((n, LIMIT_COLUMNS[0]), -1, dtype=np.int64)
    bound = np.zeros((n, LIMIT_COLUMNS[1]))
    for r, c in enumerate(contacts):
        if not isinstance(c, JointLimit):
            continue
        k, i = c.joint, c.coordinate
        limit[r] = (k, i, js.parent[k], js.child[k], js.translational_dof[k],
                    js.rotational_dof[k])
        bound[r, [B_SIGN, B_BOUND, B_MIDDLE, B_START]] = (c.sign, c.bound, c.middle, c.middle)
        bound[r, B_PA:B_PB] = js.p_a[k]
        bound[r, B_PB:B_QOFF] = js.p_b[k]
        bound[r, B_QOFF:B_AXIS] = js.q_off[k]
        bound[r, B_AXIS:B_FREE] = js.rot_axis[k]
        bound[r, B_FREE:] = js.free[k, i]
    return limit, bound


def joint_limits(spec: MechanismSpec) -> list[JointLimit]:
    """The finite bounds of the spec's joints, named ``"<joint>.lower"`` / ``"<joint>.upper"``
    (``"<joint>.lower[i]"`` for coordinate ``i`` of a joint with more than one)."""
    out = []
    for k, j in enumerate(spec.joints):
        for i, lo, hi in j.limits:
            rot = i >= j.translational_dof
            mid = 0.5 * (lo + hi) if rot else 0.0
            tag = "" if j.dof == 1 else f"[{i}]"
            for sign, bound, side in ((1.0, lo, "lower"), (-1.0, hi, "upper")):
                if np.isfinite(bound):
                    out.append(JointLimit(f"{j.name}.{side}{tag}", k, i, sign, bound, mid))
    return out


def tangent_basis(normal: np.ndarray, m: int) -> np.ndarray:
    """``m`` unit directions at angles ``2πi/m`` in the plane normal to ``normal`` (..., 3):
    ``t₁`` from ``e_x`` (``e_y`` when the normal is within ~25° of ``e_x``), ``t₂ = n × t₁``;
    ``friction_basis(m)`` for ``n = e_z``. Shape (..., m, 3)."""
    n = np.asarray(normal, dtype=float)
    e = np.where((np.abs(n[..., :1]) < 0.9), np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    t1 = e - np.sum(e * n, axis=-1, keepdims=True) * n
    t1 /= np.linalg.norm(t1, axis=-1, keepdims=True)
    t2 = np.cross(n, t1)
    a = 2 * np.pi * np.arange(m) / m
    return np.cos(a)[:, None] * t1[..., None, :] + np.sin(a)[:, None] * t2[..., None, :]


def _box_closest(p: np.ndarray, half: np.ndarray):
    """Signed distance of box-frame points ``p`` (..., 3) to the box ``|c_i| <= half_i`` and the
    outward unit normal of the nearest feature (face, edge or corner; inside: nearest face)."""
    c = np.clip(p, -half, half)
    d = p - c
    out = np.linalg.norm(d, axis=-1)
    gap = half - np.abs(p)
    axis = np.argmin(gap, axis=-1)
    inside = np.all(np.abs(p) <= half, axis=-1)
    face = np.take_along_axis(gap, axis[..., None], -1)[..., 0]
    nin = np.zeros_like(p)
    np.put_along_axis(nin, axis[..., None], np.where(
        np.take_along_axis(p, axis[..., None], -1) >= 0.0, 1.0, -1.0), -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        nout = d / out[..., None]
    return np.where(inside, -face, out), np.where(inside[..., None], nin, nout)


class ContactGroup:
    """Contacts with the same number ``m`` of friction directions, vectorized.

    Attributes
    ----------
    names : tuple of str
    body : (n,) int  the contact's (first) body ``a``
    other : (n,) int  the second body ``b`` of a body-body contact, ``-1`` for the ground
    kind : (n,) int  geometry kind (module docstring)
    point : (n, 3) body-frame point (kind 0) ; radius : (n,) sphere radius of ``a``
    radius_b : (n,) sphere radius of ``b`` (kind 2) ; half : (n, 3) box half extents (kind 3)
    friction : (n,) ; m : int ; size : int  (block size ``2`` or ``4 + 2m``)
    nodes : (n,) int  graph nodes, set by the step system
    limit : (n, 6) int  ``[joint, coordinate, parent, child, tdof, rdof]`` of a joint limit
        (kind 4), ``-1`` otherwise (columns ``L_*`` of :mod:`.contact_kernels`)
    bound : (n, 23)  ``[σ, bound, middle, start, p_a, p_b, q_off, axis, free row]`` of a joint
        limit: sign, bound, middle of an angle's range, the coordinate at the step's start
        ``z₁`` (set with ``P``), then the joint's constants the compiled kernels read
        (columns ``B_*``); zeros otherwise
    joints : the mechanism's :class:`.joints.JointSet` (limits read it)
    """

    def __init__(self, contacts, body_index, m: int, joints: jt.JointSet | None = None):
        self.names = tuple(c.name for c in contacts)
        n = len(contacts)
        lim = [isinstance(c, JointLimit) for c in contacts]
        if any(lim) and (m or joints is None):
            raise ValueError("joint limits go into the frictionless group, with the joints")
        self.joints = joints
        self.limit, self.bound = _limit_table(contacts, joints)
        self.is_limit = np.array(lim, dtype=bool)
        self.any_limit = bool(self.is_limit.any())
        # a limit on an angle (its coordinate after the translational ones)
        self._rotational = self.is_limit & (self.limit[:, L_COORD] >= self.limit[:, L_TDOF])
        self.body = np.array([body_index[c.body] if not isinstance(c, JointLimit) else -1
                              for c in contacts], dtype=np.int64)
        self.other = np.array([body_index[c.other] if isinstance(c, BodyContact) else -1
                               for c in contacts], dtype=np.int64)
        # a limit: the joint's child (a) and parent (b)
        self.body[self.is_limit] = self.limit[self.is_limit, L_CHILD]
        self.other[self.is_limit] = self.limit[self.is_limit, L_PARENT]
        kinds = {"point": GROUND_POINT, "sphere": GROUND_SPHERE}
        self.kind = np.array([JOINT_LIMIT if isinstance(c, JointLimit) else
                              (SPHERE_SPHERE if c.kind == "sphere" else SPHERE_BOX)
                              if isinstance(c, BodyContact) else kinds[c.kind]
                              for c in contacts], dtype=np.int64)
        self.point = np.array([getattr(c, "point", np.zeros(3)) for c in contacts],
                              dtype=float).reshape(n, 3)
        self.sphere = self.kind == GROUND_SPHERE
        self._all_spheres = bool(self.sphere.all())
        self.radius = np.array([c.radius for c in contacts], dtype=float)
        self.radius_b = np.array([getattr(c, "other_radius", 0.0) for c in contacts], dtype=float)
        self.half = np.array([getattr(c, "half_extents", np.zeros(3)) for c in contacts],
                             dtype=float).reshape(n, 3)
        self.pair = (self.other >= 0) & ~self.is_limit
        self.any_pair = bool(self.pair.any())
        self.friction = np.array([c.friction for c in contacts], dtype=float)
        self.m = int(m)
        self.size = 2 if m == 0 else 4 + 2 * m
        self.basis = friction_basis(m) if m else np.zeros((0, 3))
        self.nodes = np.zeros(n, dtype=np.int64)
        self.rows = np.zeros((n, self.size), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.names)

    def describe(self, k: int) -> str:
        """``"contact 'name'"`` with what it touches, for error messages."""
        if self.is_limit[k]:
            return f"joint limit {self.names[k]!r}"
        what = "the ground" if self.other[k] < 0 else "another body"
        return f"contact {self.names[k]!r} (against {what})"

    # ------------------------------------------------------------------ geometry
    def distance(self, x, q, *, from_start: bool = False) -> np.ndarray:
        """Signed distances ``φ`` (eq. 25) for states with optional leading axes; (..., n).

        A joint limit's angle is read about the middle of its range, or with ``from_start``
        continuously from the angle at the step's start (``bound[:, B_START]``, the distances
        of a step's ``z₂``)."""
        z = x[..., self.body, 2]
        if self._all_spheres:                      # no rotation needed (hot path)
            return z - self.radius
        if self.any_limit:
            out = self._distance_contacts(x, q)
            lim = self.is_limit
            c = self._limit_coordinates(x, q)
            centre = self.bound[lim, B_START if from_start else B_MIDDLE]
            c = np.where(self._rotational[lim], wrap_angle(c, centre), c)
            out[..., lim] = self.bound[lim, B_SIGN] * (c - self.bound[lim, B_BOUND])
            return out
        return self._distance_contacts(x, q)

    def _limit_coordinates(self, x, q) -> np.ndarray:
        """The limited coordinates ``c_i`` of the limits' joints at ``(x, q)``: (..., n_limits)."""
        jk, ci = self.limit[self.is_limit, :2].T
        c = jt.minimal_coordinates(self.joints, *jt.endpoint_states(self.joints, x, q))
        return c[..., jk, ci]

    def _limit_rows(self, x, q) -> np.ndarray:
        """``σ`` times the limited coordinates' rate-map rows at ``(x, q)``, reordered to
        ``[child (a), parent (b)]``: (n_limits, 12)."""
        jk, ci = self.limit[self.is_limit, :2].T
        R = jt.rate_map(self.joints, *jt.endpoint_states(self.joints, x, q))[jk, ci]
        R = self.bound[self.is_limit, B_SIGN:B_SIGN + 1] * R
        out = np.concatenate([R[:, 6:], R[:, :6]], axis=1)
        out[self.other[self.is_limit] < 0, 6:] = 0.0          # the world parent
        return out

    def _distance_contacts(self, x, q) -> np.ndarray:
        """:meth:`distance` of the contacts (a limit's entry is meaningless)."""
        z = x[..., self.body, 2]
        out = np.where(self.sphere, z - self.radius,
                       z + quat.rotate(q[..., self.body, :], self.point)[..., 2])
        if self.any_pair:
            ob = np.maximum(self.other, 0)
            d = x[..., self.body, :] - x[..., ob, :]
            ss = np.linalg.norm(d, axis=-1) - self.radius - self.radius_b
            p = quat.rotate(quat.conjugate(q[..., ob, :]), d)
            sb = _box_closest(p, self.half)[0] - self.radius
            out = np.where(self.kind == SPHERE_SPHERE, ss, np.where(self.kind == SPHERE_BOX,
                                                                      sb, out))
        return out

    def frames(self, x, q):
        """Contact normal ``n`` (from ``b`` to ``a``; ``e_z`` for the ground) and the world
        offsets of the contact point from the centres of ``a`` and ``b``; each (n, 3)."""
        qa = q[self.body]
        normal = np.broadcast_to(E_Z, (len(self), 3)).copy()
        pa = np.where(self.sphere[:, None], -self.radius[:, None] * E_Z,
                      quat.rotate(qa, self.point))
        pb = np.zeros((len(self), 3))
        if self.any_pair:
            ob = np.maximum(self.other, 0)
            d = x[self.body] - x[ob]
            with np.errstate(invalid="ignore", divide="ignore"):   # ground rows: unused
                ns = d / np.linalg.norm(d, axis=-1, keepdims=True)
            qb = q[ob]
            nb = quat.rotate(qb, _box_closest(quat.rotate(quat.conjugate(qb), d),
                                              self.half)[1])
            box = (self.kind == SPHERE_BOX)[:, None]
            pair = self.pair[:, None]
            normal = np.where(pair, np.where(box, nb, ns), normal)
            pa = np.where(pair, -self.radius[:, None] * normal, pa)
            pb = np.where(pair, np.where(box, d - self.radius[:, None] * normal,
                                         self.radius_b[:, None] * normal), 0.0)
        return normal, pa, pb

    def velocity_map(self, x, q) -> np.ndarray:
        """``P = [P_a, P_b]`` of the module docstring at ``z₁``: (n, 1 + m, 12).

        The point of body ``e`` at world offset ``p`` moves with ``v + Q(ω × pᵇ) =
        v + ω_w × p``; along ``d`` that is ``dᵀv + (Qᵀ(p × d))ᵀ ω``.
        """
        normal, pa, pb = self.frames(x, q)
        dirs = np.concatenate([normal[:, None], tangent_basis(normal, self.m)], axis=1)
        P = np.zeros((len(self), 1 + self.m, 12))
        Qa = quat.rotation_matrix(q[self.body])
        P[:, :, :3] = dirs
        P[:, :, 3:6] = np.einsum("nji,nkj->nki", Qa, np.cross(pa[:, None], dirs))
        if self.any_pair:
            Qb = quat.rotation_matrix(q[np.maximum(self.other, 0)])
            Pb = np.concatenate([dirs, np.einsum("nji,nkj->nki", Qb,
                                                 np.cross(pb[:, None], dirs))], axis=2)
            P[:, :, 6:] = np.where(self.pair[:, None, None], -Pb, 0.0)
        if self.any_limit:
            # a limit: its coordinate's rate-map row; and the step's start angle
            P[self.is_limit, 0] = self._limit_rows(x, q)
            lim = self.is_limit
            c = self._limit_coordinates(x, q)
            self.bound[lim, B_START] = np.where(self._rotational[lim],
                                                wrap_angle(c, self.bound[lim, B_MIDDLE]), c)
        return P

    def distance_jacobian(self, x2, q2, dq2_dw, dt) -> np.ndarray:
        """``∂φ(z₂)/∂[ż_a; ż_b]``: (n, 12), with ``dq2_dw`` = ``∂q₂/∂ω₁`` of the bodies
        (nb, 4, 3) and ``z₂`` from ``ż₁`` by eq. (11), (17)."""
        out = np.zeros((len(self), 12))
        out[:, 2] = dt
        if self._all_spheres:
            return out
        point = self.kind == GROUND_POINT
        dq = quat.d_rotate_dq(q2[self.body], self.point)[:, 2, :]      # ∂(Q p)_z/∂q: (n, 4)
        rot = np.einsum("ni,nij->nj", dq, dq2_dw[self.body])
        out[:, 3:6] = np.where(point[:, None], rot, 0.0)
        if self.any_pair:
            ob = np.maximum(self.other, 0)
            d = x2[self.body] - x2[ob]
            with np.errstate(invalid="ignore", divide="ignore"):   # ground rows: unused
                ns = d / np.linalg.norm(d, axis=-1, keepdims=True)
            qb = q2[ob]
            nl = _box_closest(quat.rotate(quat.conjugate(qb), d), self.half)[1]
            nw = quat.rotate(qb, nl)
            box = (self.kind == SPHERE_BOX)[:, None]
            gx = np.where(box, nw, ns)
            dqb = np.einsum("ni,nij,njk->nk", nl, quat.d_rotate_transpose_dq(qb, d),
                            dq2_dw[ob])
            pair = self.pair[:, None]
            out[:, :3] = np.where(pair, dt * gx, out[:, :3])
            out[:, 6:9] = np.where(pair, -dt * gx, 0.0)
            out[:, 9:] = np.where(box, dqb, 0.0)
        if self.any_limit:
            # the rate-map row at z₂ times ∂z₂/∂ż₁: Δt for v, and for ω the body-frame
            # rotation δθ = 2 vec(q̄₂ ∘ δq₂) of ∂q₂/∂ω₁
            lim = self.is_limit
            row = self._limit_rows(x2, q2)
            T = 2.0 * (np.swapaxes(quat.L(q2), -1, -2) @ dq2_dw)[:, 1:]      # (nb, 3, 3)
            a, b = self.body[lim], np.maximum(self.other[lim], 0)
            g = np.empty((int(lim.sum()), 12))
            g[:, :3] = dt * row[:, :3]
            g[:, 3:6] = np.einsum("ni,nij->nj", row[:, 3:6], T[a])
            g[:, 6:9] = dt * row[:, 6:9]
            g[:, 9:] = np.einsum("ni,nij->nj", row[:, 9:], T[b])
            g[self.other[lim] < 0, 6:] = 0.0
            out[lim] = g
        return out

    def kernel_arguments(self) -> tuple:
        """Geometry arrays in the argument order of :mod:`.contact_kernels`: the contacts'
        ``body, other, kind, point, radius, radius_b, half`` and the limits' ``limit,
        bound``."""
        return (self.body, self.other, self.kind, self.point, self.radius, self.radius_b,
                self.half, self.limit, self.bound)

    # ------------------------------------------------------------------ variables
    def split(self, u):
        """``γ, s_φ, β, η, ψ, s_ψ`` views of the (n, size) variable array."""
        m = self.m
        if m == 0:
            return u[:, 0], u[:, 1], u[:, 2:2], u[:, 2:2], None, None
        return (u[:, 0], u[:, 1], u[:, 2:2 + m], u[:, 2 + m:2 + 2 * m], u[:, 2 + 2 * m],
                u[:, 3 + 2 * m])

    def complementarity_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Block-local ``(row, a, b)`` of every complementarity row ``u_a u_b - μ``.

        In the order ``γ s_φ``, ``β_i η_i`` (``i = 1..m``), ``ψ s_ψ``; each row's two
        variables are both constrained to be positive (§4, App. D).
        """
        m = self.m
        row, a, b = [1], [0], [1]
        if m:
            row += list(range(2 + m, 2 + 2 * m)) + [2 + 2 * m]
            a += list(range(2, 2 + m)) + [2 + 2 * m]
            b += list(range(2 + m, 2 + 2 * m)) + [3 + 2 * m]
        return np.array(row), np.array(a), np.array(b)

    def residual(self, u, zdot, phi2, P, mu) -> tuple[np.ndarray, np.ndarray]:
        """Contact rows (n, size) and the body wrenches ``S P_eᵀ [γ; β]`` (n, 2, 6).

        ``zdot`` (n, 12): ``[v₁; ω₁]`` of body ``a`` and ``b`` (zeros for the ground);
        ``phi2``: ``φ(z₂)``; ``P`` at ``z₁``.
        """
        g, sp, beta, eta, psi, spsi = self.split(u)
        rows = np.empty_like(u)
        rows[:, 0] = sp - phi2
        rows[:, 1] = g * sp - mu
        forces = np.concatenate([g[:, None], beta], axis=1)              # (n, 1 + m)
        wrench = _S * np.einsum("nki,nk->ni", P, forces).reshape(-1, 2, 6)
        if self.m:
            m = self.m
            rows[:, 2:2 + m] = np.einsum("nki,ni->nk", P[:, 1:], zdot) + psi[:, None] - eta
            rows[:, 2 + m:2 + 2 * m] = beta * eta - mu
            rows[:, 2 + 2 * m] = psi * spsi - mu
            rows[:, 3 + 2 * m] = spsi - self.friction * g + beta.sum(axis=1)
        return rows, wrench

    def diagonal_blocks(self, u) -> np.ndarray:
        """``∂(contact rows)/∂u``: (n, size, size)."""
        g, sp, beta, eta, psi, spsi = self.split(u)
        n, m, k = len(self), self.m, self.size
        D = np.zeros((n, k, k))
        D[:, 0, 1] = 1.0
        D[:, 1, 0] = sp
        D[:, 1, 1] = g
        if m:
            i = np.arange(m)
            D[:, 2 + i, 2 + m + i] = -1.0                  # -η
            D[:, 2:2 + m, 2 + 2 * m] = 1.0                 # +ψ
            D[:, 2 + m + i, 2 + i] = eta                   # β ∘ η
            D[:, 2 + m + i, 2 + m + i] = beta
            D[:, 2 + 2 * m, 2 + 2 * m] = spsi
            D[:, 2 + 2 * m, 3 + 2 * m] = psi
            D[:, 3 + 2 * m, 3 + 2 * m] = 1.0
            D[:, 3 + 2 * m, 0] = -self.friction
            D[:, 3 + 2 * m, 2:2 + m] = 1.0
        return D

    def body_columns(self, P) -> np.ndarray:
        """``∂(body rows)/∂u``: (n, 2, 6, size) = ``-S P_eᵀ`` in the columns of γ and β."""
        out = np.zeros((len(self), 2, 6, self.size))
        Pe = P.reshape(len(self), 1 + self.m, 2, 6)
        out[..., 0] = -_S * Pe[:, 0]
        if self.m:
            out[..., 2:2 + self.m] = -_S[None, None, :, None] * np.moveaxis(Pe[:, 1:], 1, 3)
        return out

    def contact_rows_by_body(self, P, dphi2) -> np.ndarray:
        """``∂(contact rows)/∂ż_e`` for ``e = a, b``: (n, 2, size, 6)."""
        out = np.zeros((len(self), 2, self.size, 6))
        out[:, :, 0] = -dphi2.reshape(-1, 2, 6)
        if self.m:
            out[:, :, 2:2 + self.m] = np.moveaxis(P[:, 1:].reshape(len(self), self.m, 2, 6),
                                                  2, 1)
        return out

    def initial_variables(self, phi) -> np.ndarray:
        """A strictly positive starting point: slacks from the distance, the rest 1."""
        u = np.ones((len(self), self.size))
        u[:, 1] = np.maximum(phi, 1.0)
        if self.m:
            u[:, 3 + 2 * self.m] = np.maximum(self.friction, 1.0)
        return u


def contact_groups(spec, body_index, joints: jt.JointSet | None = None) -> list[ContactGroup]:
    """Group the spec's contacts by their number of friction directions; the joint limits
    (:func:`joint_limits`) go into the frictionless group, after its contacts. ``joints``:
    the spec's :class:`.joints.JointSet` (made here when not given)."""
    joints = jt.joint_set(spec) if joints is None else joints
    by_m: dict[int, list] = {}
    for c in (*spec.contacts, *joint_limits(spec)):
        by_m.setdefault(c.friction_directions, []).append(c)
    return [ContactGroup(cs, body_index, m, joints) for m, cs in sorted(by_m.items())]
