"""Mechanical systems in redundant coordinates with a constant mass matrix and quadratic
holonomic constraints, and the planar director formulation of a
:class:`~dynamics.spec.MechanismSpec` in those coordinates -- the model the GGL variational
integrator (:mod:`dynamics.ggl`) runs on.

Redundant system
----------------
Coordinates ``q ∈ ℝⁿ``, a constant symmetric positive definite mass matrix ``M`` (kinetic energy
``T = ½ q̇ᵀ M q̇``), a constant generalized force ``f`` (gravity: ``V(q) = -fᵀ q``) and ``m``
holonomic constraints of at most second degree,

    g_j(q) = ½ qᵀ H_j q + a_jᵀ q - c_j,      G(q) = ∂g/∂q = A + [H_j q]_j,

whose Hessians ``H_j`` are constant (:class:`QuadraticConstraints`).

Planar director formulation (Betsch & Steinmann 2001; Betsch & Uhlar 2007)
--------------------------------------------------------------------------
A rigid body moving in the world ``y``-``z`` plane is described by the position ``φ`` of its
centre of mass and two directors ``d₁, d₂`` (its body ``y`` and ``z`` axes), all in plane
coordinates ``(y, z)``:

    q_b = (φ, d₁, d₂) ∈ ℝ⁶,    a body point ξ = (ξ_y, ξ_z):  x(ξ) = φ + ξ_y d₁ + ξ_z d₂,

linear in ``q_b``. Rigidity is three quadratic constraints per body, ``½(d₁·d₁ - 1)``,
``½(d₂·d₂ - 1)``, ``d₁·d₂``; a revolute joint about the plane normal (and a
``"cylindrical_free"`` loop closure about it) makes two points coincide, ``x_a(ξ_a) - x_b(ξ_b) =
0`` (linear; a constant point for a joint to the world). The kinetic energy
``½ m |φ̇|² + ½ E₁ |ḋ₁|² + ½ E₂ |ḋ₂|²`` with the Euler-tensor entries ``E₁ + E₂ = J`` (the
moment of inertia about the plane normal through the centre of mass) gives the constant mass
matrix ``diag(m, m, E₁, E₁, E₂, E₂)``; only ``E₁ + E₂`` enters planar motion and we take
``E₁ = E₂ = J/2``, as Kinon, Betsch & Schneider do for the double four-bar linkage (their
published input, ``DoubleFourBarLinkage.m`` of the authors' code *metis*). Gravity acts on
``φ``. This is the formulation, with these coordinates and constraints, that Kinon et al. (2023)
simulate the double four-bar in; its construction from a ``MechanismSpec`` (which joint point
goes where, the angles of revolute joints, the checks) is ours.

References
----------
P. Betsch, P. Steinmann, "Constrained integration of rigid body dynamics", Comput. Methods
Appl. Mech. Engrg. 191 (2001) 467-488.
P. Betsch, S. Uhlar, "Energy-momentum conserving integration of multibody dynamics",
Multibody Syst. Dyn. 17 (2007) 243-289.
P. L. Kinon, P. Betsch, S. Schneider, "The GGL variational principle for constrained mechanical
systems", Multibody Syst. Dyn. 57 (2023) 211-236 (not in this repository).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import quaternion as quat
from .spec import WORLD, MechanismSpec, SpecError

__all__ = ["QuadraticConstraints", "RedundantSystem", "PlanarDirectorModel",
           "planar_directors", "PLANAR_JOINTS"]

#: Joint types :func:`planar_directors` accepts (axis along the world ``x`` axis, the plane
#: normal); both make two points coincide in the plane.
PLANAR_JOINTS = ("revolute", "cylindrical_free")


class QuadraticConstraints:
    """``g_j(q) = ½ qᵀ H_j q + a_jᵀ q - c_j`` for ``j = 0..m-1`` with constant ``H_j``.

    Parameters
    ----------
    linear : (m, n) array
        The rows ``a_jᵀ``.
    offset : (m,) array
        ``c``.
    hessian_entries : (rows, cols_k, cols_l, values) arrays
        The nonzero entries ``H_j[k, l] = value`` (both triangles of the symmetric ``H_j``;
        repeated entries add up).

    >>> import numpy as np
    >>> # a unit circle and the line y = x: g = (½(x² + y² - 1), y - x)
    >>> g = QuadraticConstraints(np.array([[0.0, 0.0], [-1.0, 1.0]]), np.array([0.5, 0.0]),
    ...                          ([0, 0], [0, 1], [0, 1], [1.0, 1.0]))
    >>> q = np.array([0.6, 0.8])
    >>> g.value(q), g.jacobian(q)
    (array([0. , 0.2]), array([[ 0.6,  0.8],
           [-1. ,  1. ]]))
    """

    def __init__(self, linear, offset, hessian_entries):
        self.linear = np.array(linear, dtype=float)
        self.offset = np.array(offset, dtype=float)
        m, n = self.linear.shape
        if self.offset.shape != (m,):
            raise ValueError(f"offset must have shape ({m},), got {self.offset.shape}")
        j, k, l, val = (np.asarray(a) for a in hessian_entries)
        j, k, l = (np.asarray(a, dtype=np.int64) for a in (j, k, l))
        val = np.asarray(val, dtype=float)
        if j.size and (j.min() < 0 or j.max() >= m or min(k.min(), l.min()) < 0
                       or max(k.max(), l.max()) >= n):
            raise ValueError("Hessian entry out of range")
        self.m, self.n = m, n
        self._j, self._k, self._l, self._val = j, k, l, val
        self._jk, self._kl = j * n + k, k * n + l
        self._row_sum = np.zeros((j.size, m))          # entry e -> its row j
        self._row_sum[np.arange(j.size), j] = 1.0
        H = self.hessians()
        if not np.allclose(H, H.transpose(0, 2, 1)):
            raise ValueError("the Hessians must be symmetric (give both triangles)")
        self.quadratic_rows = np.flatnonzero(np.abs(H).sum(axis=(1, 2)) > 0)

    def hessians(self) -> np.ndarray:
        """The dense ``(m, n, n)`` stack of ``H_j`` (for tests and small systems)."""
        H = np.zeros((self.m, self.n, self.n))
        np.add.at(H, (self._j, self._k, self._l), self._val)
        return H

    def hessian_rows(self, x: np.ndarray) -> np.ndarray:
        """``(m, n)``: row ``j`` is ``(H_j x)ᵀ``."""
        return np.bincount(self._jk, self._val * np.asarray(x, dtype=float)[self._l],
                           self.m * self.n).reshape(self.m, self.n)

    def value(self, q: np.ndarray) -> np.ndarray:
        """``g(q)``, shape ``(m,)``."""
        return 0.5 * self.hessian_rows(q) @ q + self.linear @ q - self.offset

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """``G(q) = A + [H_j q]_j``, shape ``(m, n)``."""
        return self.linear + self.hessian_rows(q)

    def contract(self, gamma: np.ndarray) -> np.ndarray:
        """``Σ_j γ_j H_j``, shape ``(n, n)``."""
        return np.bincount(self._kl, self._val * np.asarray(gamma, dtype=float)[self._j],
                           self.n * self.n).reshape(self.n, self.n)

    def _bilinear(self, qs: np.ndarray, us: np.ndarray) -> np.ndarray:
        """``(qᵀ H_j u)`` for every row of ``qs, us (T, n)``: ``(T, m)``."""
        return (self._val * qs[:, self._k] * us[:, self._l]) @ self._row_sum

    def values_over_time(self, qs: np.ndarray) -> np.ndarray:
        """``g(q_k)`` for every row of ``qs (T, n)``: ``(T, m)``."""
        qs = np.atleast_2d(np.asarray(qs, dtype=float))
        return 0.5 * self._bilinear(qs, qs) + qs @ self.linear.T - self.offset

    def jacobian_times(self, qs: np.ndarray, us: np.ndarray) -> np.ndarray:
        """``G(q_k) u_k`` for every row of ``qs, us (T, n)``: ``(T, m)``."""
        qs = np.atleast_2d(np.asarray(qs, dtype=float))
        us = np.atleast_2d(np.asarray(us, dtype=float))
        return self._bilinear(qs, us) + us @ self.linear.T


@dataclass(frozen=True)
class RedundantSystem:
    """A mechanical system in redundant coordinates: constant mass matrix, constant force,
    quadratic holonomic constraints (see the module docstring), and an initial state.

    Attributes
    ----------
    mass_matrix : (n, n) array
    force : (n,) array
        Constant generalized force ``f``; the potential energy is ``V(q) = -fᵀ q``.
    constraints : QuadraticConstraints
    q0, v0 : (n,) arrays
        Initial configuration and velocity (should satisfy ``g(q0) = 0``, ``G(q0) v0 = 0``).
    """

    mass_matrix: np.ndarray
    force: np.ndarray
    constraints: QuadraticConstraints
    q0: np.ndarray
    v0: np.ndarray
    mass_inverse: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        M = np.array(self.mass_matrix, dtype=float)
        n = M.shape[0]
        if M.shape != (n, n) or not np.allclose(M, M.T):
            raise ValueError("mass_matrix must be a symmetric square matrix")
        if np.linalg.eigvalsh(M).min() <= 0:
            raise ValueError("mass_matrix must be positive definite")
        if self.constraints.n != n:
            raise ValueError(f"constraints act on {self.constraints.n} coordinates, the mass "
                             f"matrix on {n}")
        for name in ("force", "q0", "v0"):
            a = np.array(getattr(self, name), dtype=float)
            if a.shape != (n,):
                raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
            object.__setattr__(self, name, a)
        object.__setattr__(self, "mass_matrix", M)
        object.__setattr__(self, "mass_inverse", np.linalg.inv(M))

    @property
    def n(self) -> int:
        return self.mass_matrix.shape[0]

    @property
    def m(self) -> int:
        return self.constraints.m

    def kinetic_energy(self, p: np.ndarray) -> np.ndarray:
        """``½ pᵀ M⁻¹ p`` for momenta ``p (..., n)``."""
        p = np.asarray(p, dtype=float)
        return 0.5 * np.einsum("...i,ij,...j->...", p, self.mass_inverse, p)

    def potential_energy(self, q: np.ndarray) -> np.ndarray:
        """``-fᵀ q`` for configurations ``q (..., n)``."""
        return -np.asarray(q, dtype=float) @ self.force


@dataclass(frozen=True)
class PlanarDirectorModel(RedundantSystem):
    """The planar director formulation of a mechanism spec (:func:`planar_directors`).

    Coordinates are ``q[6b:6b+6] = (φ, d₁, d₂)`` of body ``b`` (spec order) in plane
    coordinates ``(y, z)``. Constraint rows: three rigidity rows per body
    (:attr:`rigidity_rows`), then two rows per joint, ``x_parent - x_child`` (m)
    (:attr:`joint_rows`, named in :attr:`row_names`).
    """

    spec: MechanismSpec | None = None
    row_names: tuple[str, ...] = ()
    rigidity_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    joint_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: revolute joints: name -> (parent index or -1, child index, offset angle, axis sign,
    #: initial coordinate)
    revolute: dict = field(default_factory=dict)

    def body_positions(self, qs: np.ndarray) -> np.ndarray:
        """Centres of mass ``(..., nb, 2)`` (plane coordinates ``(y, z)``)."""
        qs = np.asarray(qs, dtype=float)
        return qs.reshape(qs.shape[:-1] + (-1, 6))[..., 0:2]

    def body_angles(self, qs: np.ndarray) -> np.ndarray:
        """Angle of every body's ``y`` axis from the world ``y`` axis about ``+x``,
        ``(..., nb)`` in ``(-π, π]``."""
        qs = np.asarray(qs, dtype=float)
        d1 = qs.reshape(qs.shape[:-1] + (-1, 6))[..., 2:4]
        return np.arctan2(d1[..., 1], d1[..., 0])

    def joint_angles(self, qs: np.ndarray) -> dict[str, np.ndarray]:
        """The angle of every revolute joint (the spec's joint coordinate) along a trajectory
        ``qs (T, n)``, unwrapped over time from the spec's initial coordinate."""
        qs = np.atleast_2d(np.asarray(qs, dtype=float))
        theta = self.body_angles(qs)
        out = {}
        for name, (a, b, offset, sign, initial) in self.revolute.items():
            rel = theta[:, b] - (theta[:, a] if a >= 0 else 0.0) - offset
            rel = np.unwrap(sign * rel)
            rel = rel + 2 * np.pi * np.round((initial - rel[0]) / (2 * np.pi))
            out[name] = rel
        return out

    def joint_violation(self, qs: np.ndarray) -> np.ndarray:
        """Largest absolute joint-constraint residual ``|x_parent - x_child|_∞`` (m) per
        configuration of ``qs (T, n)``."""
        g = self.constraints.values_over_time(np.atleast_2d(qs))
        return np.abs(g[:, self.joint_rows]).max(axis=1)

    def rigidity_violation(self, qs: np.ndarray) -> np.ndarray:
        """Largest absolute rigidity-constraint residual (dimensionless) per configuration."""
        g = self.constraints.values_over_time(np.atleast_2d(qs))
        return np.abs(g[:, self.rigidity_rows]).max(axis=1)


def _x_angle(q: np.ndarray, what: str) -> float:
    """The angle of a rotation about ``+x`` (SpecError if it is not one)."""
    R = quat.rotation_matrix(q)
    if not np.allclose(R[:, 0], [1.0, 0.0, 0.0], atol=1e-9):
        raise SpecError(f"{what}: the rotation does not keep the x axis (not planar in y-z)")
    return float(np.arctan2(R[2, 1], R[1, 1]))


def planar_directors(spec: MechanismSpec, *, tol: float = 1e-8) -> PlanarDirectorModel:
    """The planar director formulation (module docstring) of a mechanism moving in the world
    ``y``-``z`` plane.

    Every body's ``x`` axis must stay along the world ``x`` axis, gravity and the initial
    velocities must lie in the plane, and every joint must be of a type in
    :data:`PLANAR_JOINTS` with its axis along ``±x``. The initial configuration and velocity
    come from the spec's initial joint coordinates (as for ``dynamics.maximal``); joint springs,
    dampers, actuation and contacts are not modelled.

    Raises
    ------
    SpecError
        A mechanism outside that class, or initial coordinates that open a loop by more than
        ``tol``.

    >>> from dynamics import models
    >>> model = planar_directors(models.double_fourbar())
    >>> model.n, model.m        # 5 bodies × 6 coordinates; 15 rigidity + 7 joints × 2 rows
    (30, 29)
    """
    from .maximal.mechanism import MaximalModel  # the spec's kinematics of the initial state

    if spec.contacts:
        raise SpecError(f"{spec.name}: contacts are not modelled in director coordinates")
    g = np.asarray(spec.gravity, dtype=float)
    if abs(g[0]) > 1e-12:
        raise SpecError(f"{spec.name}: gravity has an x component; the plane is y-z")
    for j in spec.joints:
        if j.type not in PLANAR_JOINTS:
            raise SpecError(f"joint {j.name!r}: type {j.type!r} is not supported in planar "
                            f"director coordinates (supported: {PLANAR_JOINTS})")
        if abs(abs(j.axis[0]) - 1.0) > 1e-12:
            raise SpecError(f"joint {j.name!r}: axis {j.axis} is not along the plane normal x")
        if j.spring or j.damper or j.actuated:
            raise SpecError(f"joint {j.name!r}: springs, dampers and actuation are not "
                            "modelled in director coordinates")
        _x_angle(j.orientation_offset, f"joint {j.name!r} orientation_offset")
    model = MaximalModel(spec)
    x, qr, v, w = model.initial_state()
    nb = len(spec.bodies)
    n = 6 * nb
    index = {b.name: k for k, b in enumerate(spec.bodies)}
    q0, v0 = np.zeros(n), np.zeros(n)
    mass = np.zeros(n)
    force = np.zeros(n)
    for k, b in enumerate(spec.bodies):
        R = quat.rotation_matrix(qr[k])
        _x_angle(qr[k], f"body {b.name!r}")
        omega = (R @ w[k])
        if abs(v[k, 0]) > 1e-12 or np.abs(omega[1:]).max() > 1e-12:
            raise SpecError(f"body {b.name!r}: the initial velocity leaves the y-z plane")
        d1, d2 = R[1:, 1], R[1:, 2]
        s = slice(6 * k, 6 * k + 6)
        q0[s] = np.concatenate([x[k, 1:], d1, d2])
        # ḋ = ω e_x × d in plane coordinates: ω (-d_z, d_y)
        v0[s] = np.concatenate([v[k, 1:], omega[0] * np.array([-d1[1], d1[0], -d2[1], d2[0]])])
        J = float(b.inertia[0, 0])
        mass[s] = [b.mass, b.mass, J / 2, J / 2, J / 2, J / 2]
        force[6 * k:6 * k + 2] = b.mass * g[1:]
    # rigidity rows: ½(d1·d1 - 1), ½(d2·d2 - 1), d1·d2
    m = 3 * nb + 2 * len(spec.joints)
    A = np.zeros((m, n))
    c = np.zeros(m)
    rows, ks, ls, vals = [], [], [], []
    names = []
    for k, b in enumerate(spec.bodies):
        o = 6 * k
        for r, (a_, b_) in enumerate(((2, 2), (4, 4), (2, 4))):
            j = 3 * k + r
            for comp in (0, 1):
                for kk, ll in {(o + a_ + comp, o + b_ + comp), (o + b_ + comp, o + a_ + comp)}:
                    rows.append(j)
                    ks.append(kk)
                    ls.append(ll)
                    vals.append(1.0)
            c[j] = 0.5 if a_ == b_ else 0.0
            names.append(f"{b.name}:rigidity{r + 1}")

    def point_map(body: int, point) -> np.ndarray:
        """(2, n): x(ξ) = φ + ξ_y d₁ + ξ_z d₂ of body ``body``."""
        S = np.zeros((2, n))
        o = 6 * body
        S[:, o:o + 2] = np.eye(2)
        S[:, o + 2:o + 4] = point[1] * np.eye(2)
        S[:, o + 4:o + 6] = point[2] * np.eye(2)
        return S

    revolute = {}
    for i, jt in enumerate(spec.joints):
        r = 3 * nb + 2 * i
        b = index[jt.child]
        A[r:r + 2] -= point_map(b, jt.child_point)
        if jt.parent == WORLD:
            c[r:r + 2] = -jt.parent_point[1:]
            a = -1
        else:
            a = index[jt.parent]
            A[r:r + 2] += point_map(a, jt.parent_point)
        names += [f"{jt.name}:y", f"{jt.name}:z"]
        if jt.type == "revolute":
            initial = spec.initial_positions.get(jt.name, np.zeros(1))[0]
            revolute[jt.name] = (a, b, _x_angle(jt.orientation_offset, jt.name),
                                 float(np.sign(jt.axis[0])), float(initial))
    constraints = QuadraticConstraints(A, c, (rows, ks, ls, vals))
    out = PlanarDirectorModel(np.diag(mass), force, constraints, q0, v0, spec=spec,
                              row_names=tuple(names),
                              rigidity_rows=np.arange(3 * nb),
                              joint_rows=np.arange(3 * nb, m), revolute=revolute)
    gap = np.abs(constraints.value(q0)).max()
    if gap > tol:
        worst = names[int(np.argmax(np.abs(constraints.value(q0))))]
        raise SpecError(f"{spec.name}: the initial configuration violates {worst} by {gap:.2e}")
    vgap = np.abs(constraints.jacobian(q0) @ v0).max()
    if vgap > tol:
        raise SpecError(f"{spec.name}: the initial velocity violates the velocity constraints "
                        f"by {vgap:.2e}")
    return out
