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
(``a``) vs box (``b``) ``φ = dist(Q_bᵀ(x_a - x_b), box) - r_a``.
"""
from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..spec import BodyContact

__all__ = ["ContactGroup", "contact_groups"]

E_Z = np.array([0.0, 0.0, 1.0])
_S = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])


def friction_basis(m: int) -> np.ndarray:
    """``m`` unit tangent directions ``b_i`` at angles ``2πi/m`` (opposite pairs; Fig. 1b)."""
    a = 2 * np.pi * np.arange(m) / m
    return np.column_stack([np.cos(a), np.sin(a), np.zeros(m)])


GROUND_POINT, GROUND_SPHERE, SPHERE_SPHERE, SPHERE_BOX = 0, 1, 2, 3


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
    """

    def __init__(self, contacts, body_index, m: int):
        self.names = tuple(c.name for c in contacts)
        n = len(contacts)
        self.body = np.array([body_index[c.body] for c in contacts], dtype=np.int64)
        self.other = np.array([body_index[c.other] if isinstance(c, BodyContact) else -1
                               for c in contacts], dtype=np.int64)
        kinds = {"point": GROUND_POINT, "sphere": GROUND_SPHERE}
        self.kind = np.array([(SPHERE_SPHERE if c.kind == "sphere" else SPHERE_BOX)
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
        self.pair = self.other >= 0
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
        what = "the ground" if self.other[k] < 0 else "another body"
        return f"contact {self.names[k]!r} (against {what})"

    # ------------------------------------------------------------------ geometry
    def distance(self, x, q) -> np.ndarray:
        """Signed distances ``φ`` (eq. 25) for states with optional leading axes; (..., n)."""
        z = x[..., self.body, 2]
        if self._all_spheres:                      # no rotation needed (hot path)
            return z - self.radius
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
        return out

    def kernel_arguments(self) -> tuple:
        """Geometry arrays in the argument order of :mod:`.contact_kernels`."""
        return (self.body, self.other, self.kind, self.point, self.radius, self.radius_b,
                self.half)

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


def contact_groups(spec, body_index) -> list[ContactGroup]:
    """Group the spec's contacts by their number of friction directions."""
    by_m: dict[int, list] = {}
    for c in spec.contacts:
        by_m.setdefault(c.friction_directions, []).append(c)
    return [ContactGroup(cs, body_index, m) for m, cs in sorted(by_m.items())]
