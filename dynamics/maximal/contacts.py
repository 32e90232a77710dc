"""Ground contacts with linearized Coulomb friction as leaf nodes of the mechanism graph.

For each contact on body ``b`` (Brüdigam et al. 2023 §3.3-3.5, eq. 22-29) the step's unknowns
gain, with slack variables for the interior-point method (§4, App. D):

* ``γ`` normal force and ``s_φ`` its slack, ``s_φ = φ(z₂)``, complementarity ``γ s_φ = μ``;
* for ``m`` friction directions ``b_i`` (pairs ``±``): ``β`` (friction force magnitudes),
  ``η`` and ``ψ`` of the NCP (27): ``B(z₁) ż₁ + ψ 1 - η = 0``, ``β ∘ η = μ``, and the cone
  slack ``s_ψ = c_f γ - 1ᵀβ`` with ``ψ s_ψ = μ``.

The variables of one contact are one graph node, a leaf on its body, with the block order
``u = [γ, s_φ, β (m), η (m), ψ, s_ψ]`` (``[γ, s_φ]`` without friction). The body's residual
gains ``-S Pᵀ [γ; β]`` with ``P = [n; b_1 .. b_m]`` the contact point's velocity map at ``z₁``
(``P ż`` is the point's velocity along each direction) and ``S = diag(1,1,1,2,2,2)`` the
rotational scaling of the integrator's residual (eq. 16: ``-2τ``); ``Pᵀ`` maps the contact
forces to ``[f; τ]`` by virtual work, and its normal row equals ``N = [∂φ/∂x, ∂φ/∂ʳq]`` of
eq. (25) up to that scaling. All contacts with the same ``m`` are evaluated together.
"""
from __future__ import annotations

import numpy as np

from .. import quaternion as quat

__all__ = ["ContactGroup", "contact_groups"]

E_Z = np.array([0.0, 0.0, 1.0])
_S = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])


def friction_basis(m: int) -> np.ndarray:
    """``m`` unit tangent directions ``b_i`` at angles ``2πi/m`` (opposite pairs; Fig. 1b)."""
    a = 2 * np.pi * np.arange(m) / m
    return np.column_stack([np.cos(a), np.sin(a), np.zeros(m)])


class ContactGroup:
    """Contacts with the same number ``m`` of friction directions, vectorized.

    Attributes
    ----------
    names : tuple of str
    body : (n,) int
    point : (n, 3) body-frame point (``kind="point"``) ; sphere : (n,) bool ; radius : (n,)
    friction : (n,) ; m : int ; size : int  (block size ``2`` or ``4 + 2m``)
    nodes : (n,) int  graph nodes, set by the step system
    """

    def __init__(self, contacts, body_index, m: int):
        self.names = tuple(c.name for c in contacts)
        self.body = np.array([body_index[c.body] for c in contacts], dtype=np.int64)
        self.point = np.array([c.point for c in contacts], dtype=float).reshape(-1, 3)
        self.sphere = np.array([c.kind == "sphere" for c in contacts])
        self.radius = np.array([c.radius for c in contacts])
        self.friction = np.array([c.friction for c in contacts])
        self.m = int(m)
        self.size = 2 if m == 0 else 4 + 2 * m
        self.basis = friction_basis(m) if m else np.zeros((0, 3))
        self.nodes = np.zeros(len(contacts), dtype=np.int64)
        self.rows = np.zeros((len(contacts), self.size), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.names)

    # ------------------------------------------------------------------ geometry
    def distance(self, x, q) -> np.ndarray:
        """Signed distances ``φ`` (eq. 25) for states with optional leading axes; (..., n)."""
        xb, qb = x[..., self.body, :], q[..., self.body, :]
        point = xb[..., 2] + quat.rotate(qb, self.point)[..., 2]
        return np.where(self.sphere, xb[..., 2] - self.radius, point)

    def _offset_world(self, qb) -> np.ndarray:
        """World vector from the centre of mass to the contact point."""
        pw = quat.rotate(qb, self.point)
        return np.where(self.sphere[:, None], -self.radius[:, None] * E_Z, pw)

    def velocity_map(self, q) -> np.ndarray:
        """``P`` of the module docstring at orientation ``q``: (n, 1 + m, 6)."""
        qb = q[self.body]
        Q = quat.rotation_matrix(qb)
        dirs = np.vstack([E_Z, self.basis])                      # (1 + m, 3)
        # point velocity v + Q (ω × p) = v - [p_w]× Q ω  (p_w world offset)
        rot = -quat.skew(self._offset_world(qb)) @ Q             # (n, 3, 3)
        P = np.empty((len(self), 1 + self.m, 6))
        P[:, :, :3] = dirs
        P[:, :, 3:] = np.einsum("kj,nji->nki", dirs, rot)
        return P

    def distance_jacobian(self, q2, dq2_dw) -> np.ndarray:
        """``∂φ(z₂)/∂ż₁``: (n, 6), with ``dq2_dw`` = ``∂q₂/∂ω₁`` of the bodies (nb, 4, 3)."""
        out = np.zeros((len(self), 6))
        out[:, 2] = 1.0                                          # times Δt by the caller
        dq = quat.d_rotate_dq(q2[self.body], self.point)[:, 2, :]      # ∂(Q p)_z/∂q: (n, 4)
        rot = np.einsum("ni,nij->nj", dq, dq2_dw[self.body])
        out[:, 3:] = np.where(self.sphere[:, None], 0.0, rot)
        return out

    # ------------------------------------------------------------------ variables
    def split(self, u):
        """``γ, s_φ, β, η, ψ, s_ψ`` views of the (n, size) variable array."""
        m = self.m
        if m == 0:
            return u[:, 0], u[:, 1], u[:, 2:2], u[:, 2:2], None, None
        return (u[:, 0], u[:, 1], u[:, 2:2 + m], u[:, 2 + m:2 + 2 * m], u[:, 2 + 2 * m],
                u[:, 3 + 2 * m])

    def residual(self, u, zdot, phi2, P, mu) -> tuple[np.ndarray, np.ndarray]:
        """Contact rows (n, size) and the body wrenches ``S Pᵀ [γ; β]`` (n, 6).

        ``zdot`` (n, 6): the contact bodies' ``[v₁; ω₁]``; ``phi2``: ``φ(z₂)``; ``P`` at ``z₁``.
        """
        g, sp, beta, eta, psi, spsi = self.split(u)
        rows = np.empty_like(u)
        rows[:, 0] = sp - phi2
        rows[:, 1] = g * sp - mu
        forces = np.concatenate([g[:, None], beta], axis=1)              # (n, 1 + m)
        wrench = _S * np.einsum("nki,nk->ni", P, forces)
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
        """``∂(body rows)/∂u``: (n, 6, size) = ``-S Pᵀ`` in the columns of γ and β."""
        out = np.zeros((len(self), 6, self.size))
        out[:, :, 0] = -_S * P[:, 0]
        if self.m:
            out[:, :, 2:2 + self.m] = -_S[None, :, None] * np.swapaxes(P[:, 1:], 1, 2)
        return out

    def contact_rows_by_body(self, P, dphi2, dt) -> np.ndarray:
        """``∂(contact rows)/∂ż₁``: (n, size, 6)."""
        out = np.zeros((len(self), self.size, 6))
        out[:, 0, :3] = -dt * dphi2[:, :3]
        out[:, 0, 3:] = -dphi2[:, 3:]
        if self.m:
            out[:, 2:2 + self.m] = P[:, 1:]
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
