"""Surface-surface joints and Si & Guenter's torus-chain (TC10, TC20) and windmill (WM) models.

Si & Guenter, "Linear-time dynamics for multibody systems with general joint models", §5,
Table 1 and Figs. 1-2, simulate chains of tori "connected by surface-surface constrained
joints" (TC10: 38 DOF, TC20: 78 DOF) and a tree-structured windmill "which has sphere-sphere,
sphere-ellipsoid, sphere-torus, torus-torus, and torus-ellipsoid surface joint connections"
(WM: 73 DOF). §4 (after eq. 35) gives the size of a surface-surface joint's ``Ω_k``: 4×4, so
the joint has **4 DOF**. The paper gives neither the joint's parametrisation nor the models'
dimensions; this module is our reading, documented here:

Surface-surface joint (4 DOF)
    Each body carries a parametric surface ``x(u, v)`` with a moving frame
    ``F(u, v) = (E(u, v), x(u, v)) ∈ SE(3)``: ``E = [t₁, t₂, n]`` with ``t₁ = x_u/|x_u|``,
    ``n`` the outward unit normal, ``t₂ = n × t₁`` (closed forms for each surface). With
    ``q = (u₁, v₁, u₂, v₂)`` the contact point's coordinates on the parent and on the child
    surface, the child frame in the parent frame is

        ``G(q) = P_A F_A(u₁, v₁) C F_B(u₂, v₂)⁻¹ P_B⁻¹``,   ``C = Rot_z(σ) Rot_x(π)``,

    (``P_A``, ``P_B``: constant poses of the surfaces in their bodies). Hence the two contact
    points coincide, the outward normals are opposite (the surfaces touch), and the tangent
    frames are turned by the fixed angle ``σ`` about the common normal: the bodies roll and
    slide on each other (four coordinates) while the relative spin about the normal is tied to
    the surface frames. ``G`` is the paper's ``G_i = f_{λ(i),i}`` (eq. 6). ``S`` (eq. 9) and
    ``Ṡ q̇`` (eq. 12) are differentiated symbolically (sympy) from the factors of ``G`` rather
    than from the expanded product (much smaller expressions): ``S = [Ad_{BC⁻¹} ξ_A,
    -Ad_B ξ_B]`` with ``A = P_A F_A``, ``B = P_B F_B`` and ``ξ`` the surface frames' body-twist
    columns ``(F⁻¹ ∂F/∂s)^∨``, and ``Ṡ q̇ = Ad_{BC⁻¹}(ad_{Ad_C η_B} η_A + η̇_A) - Ad_B η̇_B``
    (``η = ξ q̇``, ``η̇ = Σ_l ∂η/∂q_l q̇_l``); :class:`~.general_joint.GeneralJoint` checks
    both against central differences of ``G`` and ``S`` when the joint is built.

Torus chain TC``n`` (``2 + 4 (n - 1)`` DOF: 38 for TC10, 78 for TC20, as in Table 1)
    Torus 1 hangs from a fixed point of the world (a nail through its hole) by a 2-DOF
    surface-point joint ``G(u, v) = C F(u, v)⁻¹`` (the torus' surface passes through the point
    with its normal pointing down; spin about the vertical locked); torus ``k + 1`` hangs
    through the hole of torus ``k`` on a 4-DOF torus-torus joint with ``σ = π/2`` (interlocked
    rings). The 2-DOF first joint is our choice that reproduces the paper's DOF count.

Windmill WM (``1 + 18 × 4 = 73`` DOF, as in Table 1)
    A hub sphere on a revolute joint about the horizontal world x axis carries six arms, one
    every 60° in the y-z plane; each arm is a chain of three bodies on 4-DOF surface joints,
    the arm patterns (cycled) sphere→sphere→torus→torus, sphere→ellipsoid→torus→ellipsoid
    and sphere→sphere→ellipsoid→torus cover the paper's five connection types. Sizes and
    masses are ours (:func:`windmill_spec`).

References
----------
W. Si, B. Guenter, "Linear-time dynamics for multibody systems with general joint models",
§3-4 (eq. 6-12: ``G_i``, ``S_i``, ``Ṡ_i``), §4 after eq. 35 (4×4 ``Ω`` of a surface-surface
joint), §5 (Table 1, Figs. 1-2: torus chain, windmill).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..spec import WORLD, Body, Joint, MechanismSpec
from .general_joint import GeneralJoint, _sympy, revolute_joint

__all__ = ["Surface", "sphere", "ellipsoid", "torus", "surface_surface_joint",
           "surface_point_joint", "torus_chain_spec", "torus_chain", "windmill_spec",
           "windmill", "TORUS_CHAIN_DOFS", "WINDMILL_ARMS"]


def TORUS_CHAIN_DOFS(n: int) -> int:        # noqa: N802 - a formula, named like a constant
    """DOF of TC``n``: ``2 + 4 (n - 1)`` (Table 1: TC10 38, TC20 78)."""
    return 2 + 4 * (n - 1)


@dataclass(frozen=True)
class Surface:
    """A parametric surface of a body: ``kind`` ("sphere", "ellipsoid", "torus"), its
    dimensions ``params`` (m), its constant pose ``pose`` (4×4) in the body frame, and the
    solid's ``mass`` (kg) for :meth:`inertia`."""

    kind: str
    params: tuple
    pose: tuple = tuple(map(tuple, np.eye(4)))
    mass: float = 1.0

    def frame(self, u, v):
        """``(E, x)``: sympy 3×3 frame ``[t₁, t₂, n]`` and 3×1 point at ``(u, v)`` in the
        surface's own coordinates (see the module docstring)."""
        sympy = _sympy()
        cu, su, cv, sv = sympy.cos(u), sympy.sin(u), sympy.cos(v), sympy.sin(v)
        if self.kind == "sphere":
            (r,) = self.params
            n = sympy.Matrix([cu * cv, su * cv, sv])
            return (sympy.Matrix([[-su, -cu * sv, cu * cv], [cu, -su * sv, su * cv],
                                  [0, cv, sv]]), r * n)
        if self.kind == "torus":
            big, small = self.params
            x = sympy.Matrix([(big + small * cv) * cu, (big + small * cv) * su, small * sv])
            return (sympy.Matrix([[-su, -sv * cu, cv * cu], [cu, -sv * su, cv * su],
                                  [0, cv, sv]]), x)
        if self.kind == "ellipsoid":
            # t₁ = x_u/|x_u| and n = ∇((x/a)² + (y/b)² + (z/c)²)/|∇| in closed form, valid for
            # cos v > 0 (the parametrisation's poles are at v = ±π/2)
            a, b, c = self.params
            x = sympy.Matrix([a * cu * cv, b * su * cv, c * sv])
            t1 = sympy.Matrix([-a * su, b * cu, 0]) / sympy.sqrt(a * a * su ** 2
                                                               + b * b * cu ** 2)
            g = sympy.Matrix([cu * cv / a, su * cv / b, sv / c])
            n = g / sympy.sqrt(g.dot(g))
            t2 = n.cross(t1)
            return t1.row_join(t2).row_join(n), x
        raise ValueError(f"unknown surface kind {self.kind!r}")

    def point(self, u: float, v: float) -> np.ndarray:
        """The surface point ``x(u, v)`` in the body frame (NumPy, for tests)."""
        cu, su, cv, sv = math.cos(u), math.sin(u), math.cos(v), math.sin(v)
        if self.kind == "sphere":
            x = self.params[0] * np.array([cu * cv, su * cv, sv])
        elif self.kind == "torus":
            big, small = self.params
            x = np.array([(big + small * cv) * cu, (big + small * cv) * su, small * sv])
        else:
            a, b, c = self.params
            x = np.array([a * cu * cv, b * su * cv, c * sv])
        P = np.asarray(self.pose)
        return P[:3, :3] @ x + P[:3, 3]

    def normal(self, u: float, v: float) -> np.ndarray:
        """Outward unit normal at ``(u, v)`` in the body frame (NumPy, for tests)."""
        cu, su, cv, sv = math.cos(u), math.sin(u), math.cos(v), math.sin(v)
        if self.kind in ("sphere", "torus"):
            n = np.array([cu * cv, su * cv, sv])
        else:
            a, b, c = self.params      # gradient of the implicit (x/a)² + (y/b)² + (z/c)²
            n = np.array([cu * cv / a, su * cv / b, sv / c])
            n /= np.linalg.norm(n)
        return np.asarray(self.pose)[:3, :3] @ n

    def inertia(self) -> np.ndarray:
        """Rotational inertia (3×3, about the centre, body frame) of the solid of ``mass``:
        sphere ``2/5 m r²``; ellipsoid ``m/5 (b² + c², a² + c², a² + b²)``; solid torus about
        its axis ``m (R² + ¾ r²)``, about diameters ``m (R²/2 + ⅝ r²)``."""
        m = self.mass
        if self.kind == "sphere":
            diag = [0.4 * m * self.params[0] ** 2] * 3
        elif self.kind == "ellipsoid":
            a, b, c = self.params
            diag = [m / 5 * (b * b + c * c), m / 5 * (a * a + c * c), m / 5 * (a * a + b * b)]
        else:
            big, small = self.params
            d = m * (0.5 * big ** 2 + 0.625 * small ** 2)
            diag = [d, d, m * (big ** 2 + 0.75 * small ** 2)]
        R = np.asarray(self.pose)[:3, :3]
        return R @ np.diag(diag) @ R.T


def sphere(radius: float, *, mass: float = 1.0, pose=None) -> Surface:
    """Sphere ``x = r (cos u cos v, sin u cos v, sin v)`` (poles at ``v = ±π/2``)."""
    return Surface("sphere", (float(radius),), _pose(pose), float(mass))


def ellipsoid(a: float, b: float, c: float, *, mass: float = 1.0, pose=None) -> Surface:
    """Ellipsoid ``x = (a cos u cos v, b sin u cos v, c sin v)`` (frame valid for
    ``|v| < π/2``)."""
    return Surface("ellipsoid", (float(a), float(b), float(c)), _pose(pose), float(mass))


def torus(major: float, minor: float, *, mass: float = 1.0, pose=None) -> Surface:
    """Torus ``x = ((R + r cos v) cos u, (R + r cos v) sin u, r sin v)``, axis ``z``;
    ``v = 0`` outer, ``v = π`` inner equator."""
    if not major > minor > 0:
        raise ValueError(f"need major > minor > 0, got {major}, {minor}")
    return Surface("torus", (float(major), float(minor)), _pose(pose), float(mass))


def _pose(pose) -> tuple:
    P = np.eye(4) if pose is None else np.asarray(pose, dtype=float)
    if P.shape != (4, 4):
        raise ValueError(f"pose must be 4×4, got shape {P.shape}")
    return tuple(map(tuple, P))


def _homogeneous(R, x):
    sympy = _sympy()
    return sympy.Matrix(R).row_join(sympy.Matrix(x)).col_join(sympy.Matrix([[0, 0, 0, 1]]))


def _inverse(T):
    R, x = T[:3, :3], T[:3, 3]
    return _homogeneous(R.T, -R.T * x)


def _adjoint(T):
    """``Ad_T = [[R, 0], [p̂ R, R]]`` (twists ``(w; v)``) of a sympy 4×4 transform."""
    sympy = _sympy()
    R, p = T[:3, :3], T[:3, 3]
    P = sympy.Matrix([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    return R.row_join(sympy.zeros(3, 3)).col_join((P * R).row_join(R))


def _ad(V):
    """``ad_V = [[ŵ, 0], [v̂, ŵ]]`` (Si & Guenter eq. 3) of a sympy twist ``(w; v)``."""
    sympy = _sympy()
    w, v = V[:3, 0], V[3:, 0]
    W = sympy.Matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    Vh = sympy.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return W.row_join(sympy.zeros(3, 3)).col_join(Vh.row_join(W))


def _body_twist(E, x, s):
    """``(F⁻¹ ∂F/∂s)^∨ = (vee(Eᵀ ∂E/∂s); Eᵀ ∂x/∂s)`` of the surface frame ``F = (E, x)``."""
    sympy = _sympy()
    W = E.T * E.diff(s)
    w = [(W[2, 1] - W[1, 2]) / 2, (W[0, 2] - W[2, 0]) / 2, (W[1, 0] - W[0, 1]) / 2]
    return sympy.Matrix(w + list(E.T * x.diff(s)))


def _contact_flip(spin: float):
    """``C = Rot_z(σ) Rot_x(π)``: maps the child's frame ``[t₁, t₂, n]`` at the contact to the
    parent's, normal reversed."""
    sympy = _sympy()
    c, s = sympy.Float(math.cos(spin), 17), sympy.Float(math.sin(spin), 17)
    if spin == 0.0:
        c, s = sympy.Integer(1), sympy.Integer(0)
    elif abs(spin - 0.5 * math.pi) < 1e-15:
        c, s = sympy.Integer(0), sympy.Integer(1)
    Rz = sympy.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    Rx = sympy.Matrix([[1, 0, 0], [0, -1, 0], [0, 0, -1]])
    return _homogeneous(Rz * Rx, [0, 0, 0])


def _sym_pose(P):
    sympy = _sympy()
    P = np.asarray(P, dtype=float)
    return sympy.Matrix(4, 4, lambda i, j: sympy.nsimplify(P[i, j])
                        if P[i, j] in (0.0, 1.0, -1.0) else sympy.Float(P[i, j], 17))


def surface_surface_joint(parent: Surface, child: Surface, spin: float = 0.0, *,
                          name: str = "surface", samples=None) -> GeneralJoint:
    """The 4-DOF surface-surface joint ``G(u₁, v₁, u₂, v₂) = P_A F_A C F_B⁻¹ P_B⁻¹`` (module
    docstring): the child's surface touches the parent's at surface coordinates
    ``(u₁, v₁)`` on the parent and ``(u₂, v₂)`` on the child, normals opposite, tangent frames
    turned by ``spin`` about the normal. ``samples``: configurations at which the joint is
    validated (default: the equators, away from sphere and ellipsoid poles)."""
    sympy = _sympy()
    PA, PBinv, C = _sym_pose(parent.pose), _inverse(_sym_pose(child.pose)), _contact_flip(spin)

    PB = _sym_pose(child.pose)

    def transform(q):
        EA, xA = parent.frame(q[0], q[1])
        EB, xB = child.frame(q[2], q[3])
        return sympy.Matrix(PA * _homogeneous(EA, xA) * C * _inverse(_homogeneous(EB, xB))
                            * PBinv)

    def subspace(q):
        # G = A C B⁻¹ with A = P_A F_A, B = P_B F_B: G⁻¹ ∂G/∂q_a = Ad_{B C⁻¹} (A⁻¹ ∂A/∂q_a) and
        # G⁻¹ ∂G/∂q_b = -Ad_B (B⁻¹ ∂B/∂q_b) (as twists); A⁻¹ ∂A is P_A-free
        EA, xA = parent.frame(q[0], q[1])
        EB, xB = child.frame(q[2], q[3])
        B = PB * _homogeneous(EB, xB)
        Ad_BCi = _adjoint(B * _inverse(C))
        Ad_B = _adjoint(B)
        cols = [Ad_BCi * _body_twist(EA, xA, q[k]) for k in (0, 1)]
        cols += [-(Ad_B * _body_twist(EB, xB, q[k])) for k in (2, 3)]
        return cols[0].row_join(cols[1]).row_join(cols[2]).row_join(cols[3])
    def rate(q, qd):
        # Ṡ q̇ = Ad_{BC⁻¹} (ad_{Ad_C η_B} η_A + η̇_A) - Ad_B η̇_B, with η_A = ξ_A q̇_a,
        # η_B = ξ_B q̇_b the surface frames' body twists and η̇ = Σ_l ∂η/∂q_l q̇_l
        # (d/dt Ad_M = Ad_M ad_{(M⁻¹Ṁ)^∨}, M = B C⁻¹, M⁻¹Ṁ = C (B⁻¹Ḃ) C⁻¹; ad_η η = 0)
        EA, xA = parent.frame(q[0], q[1])
        EB, xB = child.frame(q[2], q[3])
        B = PB * _homogeneous(EB, xB)
        etaA = _body_twist(EA, xA, q[0]) * qd[0] + _body_twist(EA, xA, q[1]) * qd[1]
        etaB = _body_twist(EB, xB, q[2]) * qd[2] + _body_twist(EB, xB, q[3]) * qd[3]
        detaA = etaA.diff(q[0]) * qd[0] + etaA.diff(q[1]) * qd[1]
        detaB = etaB.diff(q[2]) * qd[2] + etaB.diff(q[3]) * qd[3]
        return (_adjoint(B * _inverse(C)) * (_ad(_adjoint(C) * etaB) * etaA + detaA)
                - _adjoint(B) * detaB)
    if samples is None:
        samples = [[0.3, 0.2, -0.4, 0.1], [2.0, -0.3, 1.0, 0.25], [-1.0, 0.1, 3.0, -0.2]]
    return GeneralJoint(transform, 4, name=name, samples=samples, subspace=subspace,
                        rate=rate)


def surface_point_joint(child: Surface, spin: float = 0.0, *, name: str = "surface_point",
                        samples=None) -> GeneralJoint:
    """The 2-DOF joint of a body whose surface passes through the origin of the joint frame
    with its outward normal along ``-z``: ``G(u, v) = C F(u, v)⁻¹ P⁻¹`` (a surface-surface
    joint whose parent surface is a point with a fixed frame)."""
    sympy = _sympy()
    PBinv, C = _inverse(_sym_pose(child.pose)), _contact_flip(spin)

    PB = _sym_pose(child.pose)

    def transform(q):
        E, x = child.frame(q[0], q[1])
        return sympy.Matrix(C * _inverse(_homogeneous(E, x)) * PBinv)

    def subspace(q):
        E, x = child.frame(q[0], q[1])
        Ad_B = _adjoint(PB * _homogeneous(E, x))
        return (-(Ad_B * _body_twist(E, x, q[0]))).row_join(-(Ad_B * _body_twist(E, x, q[1])))
    def rate(q, qd):
        # S q̇ = -Ad_B η_B: Ṡ q̇ = -Ad_B (ad_{η_B} η_B + η̇_B) = -Ad_B η̇_B
        E, x = child.frame(q[0], q[1])
        eta = _body_twist(E, x, q[0]) * qd[0] + _body_twist(E, x, q[1]) * qd[1]
        return -(_adjoint(PB * _homogeneous(E, x)) * (eta.diff(q[0]) * qd[0]
                                                     + eta.diff(q[1]) * qd[1]))
    if samples is None:
        samples = [[0.3, 3.0], [-1.2, 2.8], [2.0, -2.9]]
    return GeneralJoint(transform, 2, name=name, samples=samples, subspace=subspace,
                        rate=rate)


# -- the torus chain (Table 1 TC10 / TC20, Fig. 1) ----------------------------------------------
_JOINT_CACHE: dict = {}


def _cached(key, make):
    if key not in _JOINT_CACHE:
        _JOINT_CACHE[key] = make()
    return _JOINT_CACHE[key]


def torus_chain_spec(n: int, *, major: float = 0.1, minor: float = 0.02, mass: float = 0.1,
                     ) -> tuple[MechanismSpec, dict]:
    """Spec and ``custom_joints`` of TC``n`` (module docstring): ``n`` solid tori (axis =
    body ``z``, radii ``major`` / ``minor`` in m, ``mass`` kg each; our values, the paper gives
    none), torus 1 on a 2-DOF surface-point joint at the world origin, tori ``k + 1`` on 4-DOF
    torus-torus joints (``σ = π/2``). Placeholder spec joints: ``"cylindrical"`` (2 coordinates)
    and ``"cylindrical_free"`` (4). Initial state: the chain hanging straight down at rest
    (contacts on the inner equators, ``v = π``), gravity ``-z``; the surface coordinates are
    perturbed on the first joint (``v = π + 0.3``: the top ring tilted) so the chain swings.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    tor = torus(major, minor, mass=mass)
    bodies = tuple(Body(f"torus{k + 1}", mass, tor.inertia()) for k in range(n))
    joints = [Joint("hang", "cylindrical", WORLD, "torus1")]
    initial = {"hang": [0.5 * math.pi, math.pi + 0.3]}
    for k in range(1, n):
        joints.append(Joint(f"link{k + 1}", "cylindrical_free", f"torus{k}", f"torus{k + 1}"))
        # every torus touches its parent at its u = π/2 inner point (the top when hanging) and
        # carries its child at its u = -π/2 inner point (the bottom)
        initial[f"link{k + 1}"] = [-0.5 * math.pi, math.pi, 0.5 * math.pi, math.pi]
    key = ("tc", major, minor)
    custom = {"hang": _cached(key + ("hang",), lambda: surface_point_joint(tor, name="hang"))}
    tt = _cached(key + ("tt",), lambda: surface_surface_joint(
        tor, tor, 0.5 * math.pi, name="torus-torus",
        samples=[[-1.5, 3.0, 1.5, 3.1], [0.3, 2.5, -0.4, 3.5], [2.0, 0.5, 1.0, -0.3]]))
    custom.update({f"link{k + 1}": tt for k in range(1, n)})
    spec = MechanismSpec(bodies, tuple(joints), initial_positions=initial,
                         name=f"torus_chain{n}")
    return spec, custom


def torus_chain(n: int, **kwargs):
    """The :class:`~dynamics.minimal.model.Model` of :func:`torus_chain_spec` (TC10: ``n =
    10``, 38 DOF; TC20: 78 DOF)."""
    from .model import Model
    spec, custom = torus_chain_spec(n, **kwargs)
    return Model(spec, custom_joints=custom)


# -- the windmill (Table 1 WM, Fig. 2) -------------------------------------------------------------
#: Arm patterns of the windmill (body kinds after the hub sphere), cycled over the six arms.
WINDMILL_ARMS = (("sphere", "torus", "torus"), ("ellipsoid", "torus", "ellipsoid"),
                 ("sphere", "ellipsoid", "torus"))


def _arm_surface(kind: str) -> Surface:
    if kind == "sphere":
        return sphere(0.08, mass=0.5)
    if kind == "ellipsoid":
        return ellipsoid(0.14, 0.07, 0.05, mass=0.5)
    return torus(0.1, 0.025, mass=0.3)


#: Surface coordinates where an arm body touches its parent (its ``-x`` point) and where it
#: carries its child (its ``+x`` point; the outer equator of a torus), away from poles.
_BACK, _FRONT = (math.pi, 0.0), (0.0, 0.0)


def windmill_spec(arms: int = 6) -> tuple[MechanismSpec, dict]:
    """Spec and ``custom_joints`` of WM (module docstring; 73 DOF for six arms).

    Our dimensions (the paper gives none): hub sphere radius 0.2 m, 5 kg, revolute about
    world ``x`` 1 m above the origin; arm spheres r 0.08 m, 0.5 kg; ellipsoids 0.14 × 0.07 ×
    0.05 m, 0.5 kg; tori R 0.1 / r 0.025 m, 0.3 kg. Each arm body touches its parent at its own
    ``-x`` surface point (``u = π, v = 0``) and carries its child at its ``+x`` point
    (``u = v = 0``, the outer equator for tori); joint ``σ = 0``. The hub sphere's
    parametrisation has its poles on the rotation axis, so arm ``a`` starts at ``u₁ = a·60°``
    on its equator. Gravity ``-z``; initial state: arms straight out, at rest.
    """
    hub = sphere(0.2, mass=5.0, pose=[[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
    bodies = [Body("hub", hub.mass, hub.inertia())]
    joints = [Joint("rotor", "revolute", WORLD, "hub", [0.0, 0.0, 1.0], [0.0, 0.0, 0.0],
                    [1.0, 0.0, 0.0])]
    custom: dict = {"rotor": _cached(("wm", "rotor"), lambda: revolute_joint((1.0, 0.0, 0.0)))}
    initial: dict = {"rotor": [0.0]}
    for a in range(arms):
        pattern = WINDMILL_ARMS[a % len(WINDMILL_ARMS)]
        parent_name, parent_kind, parent_at = "hub", "hub", (2 * math.pi * a / arms, 0.0)
        for k, kind in enumerate(pattern):
            name = f"arm{a + 1}_{k + 1}"
            surf = _arm_surface(kind)
            bodies.append(Body(name, surf.mass, surf.inertia()))
            jname = f"{parent_name}-{name}"
            joints.append(Joint(jname, "cylindrical_free", parent_name, name))
            psurf = hub if parent_kind == "hub" else _arm_surface(parent_kind)
            pk = "sphere" if parent_kind == "hub" else parent_kind
            key = ("wm", parent_kind, kind)
            custom[jname] = _cached(key, lambda p=psurf, c=surf, pk=pk, kind=kind: (
                surface_surface_joint(p, c, 0.0, name=f"{pk}-{kind}",
                                      samples=[[0.3, 0.2, 2.9, 0.1], [1.5, -0.3, 3.4, 0.2],
                                               [-0.2, 0.1, 0.2, -0.3]])))
            initial[jname] = [*parent_at, *_BACK]
            parent_name, parent_kind, parent_at = name, kind, _FRONT
    spec = MechanismSpec(tuple(bodies), tuple(joints), initial_positions=initial,
                         name=f"windmill{arms}")
    return spec, custom


def windmill(arms: int = 6):
    """The :class:`~dynamics.minimal.model.Model` of :func:`windmill_spec` (73 DOF)."""
    from .model import Model
    spec, custom = windmill_spec(arms)
    return Model(spec, custom_joints=custom)
