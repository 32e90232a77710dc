"""General scleronomic joints (Si & Guenter): a joint given only by its transform ``T(q)``.

Si & Guenter, "Linear-time dynamics for general joint models", §3 (joint model) describe any
scleronomic joint by the homogeneous transform ``T(q) ∈ SE(3)`` of its child frame in its parent
frame as a function of ``k <= 6`` independent coordinates; the joint's motion subspace and its
derivative, which recursive algorithms need, follow by differentiating ``T`` (their D*
symbolic differentiation). Here ``T`` is written with sympy expressions of the coordinates
and differentiated symbolically once; numeric functions are generated with ``sympy.lambdify``
(common subexpressions shared, ``cse=True``).

Conventions (those of :mod:`dynamics.minimal.joints`): ``T(q)`` is the link frame in the joint
frame, twists are ``(w; v)`` in link coordinates, and the velocity of the link relative to the
joint frame is the body twist ``(T⁻¹ Ṫ)^∨ = S(q) q̇`` with columns

    ``S_j(q) = (T⁻¹ ∂T/∂q_j)^∨ = (vee(Rᵀ ∂R/∂q_j); Rᵀ ∂p/∂q_j)``,

so ``T = [[exp(θ [a]), 0], [0, 1]]`` gives the built-in revolute ``S = (a; 0)``. The
coordinates are Euclidean: ``v = q̇``, ``integrate(q, v) = q + v``. With ``S`` depending on
``q``, the link acceleration picks up the rate term

    ``Ṡ q̇ = Σ_j Σ_l ∂S_j/∂q_l q̇_l q̇_j``

besides the usual velocity product ``ad(V_i) S_i q̇_i`` (Si & Guenter's ``Ṡ_k q̇_k`` in the
bias terms of their recursions, eq. 24-35); ``rnea``, ``aba``, ``crba`` and the energies of
:mod:`dynamics.minimal.algorithms` use ``S(q)`` and this term for joints with
``constant_subspace = False``.

A joint is plugged into a :class:`~dynamics.minimal.model.Model` through a placeholder spec
joint with the same number of coordinates::

    joint = bezier_curve_joint(points)              # nq = 1
    model = Model(spec, custom_joints={"slide": joint})   # "slide": a "prismatic" spec joint

:func:`bezier_chain` builds the example of Si & Guenter Fig. 3: a chain of tori whose first
torus slides along a Bezier spline, its main axis on the tangent.

Compiled forward dynamics over general joints is :mod:`dynamics.minimal.general_compiled`
(Si & Guenter's Method I and Method II); the paper's surface-surface joints and its torus-chain
and windmill models are :mod:`dynamics.minimal.surface_joint`. What is not supported: the
compiled kernels of :mod:`dynamics.minimal.tree_kernels` and the variational integrators
(:mod:`dynamics.minimal.variational`, which assume a constant ``S``) reject or cannot use
general joints; the spec alone describes a different mechanism (the
placeholder joint), so ``dynamics.maximal`` and Pinocchio peers do not model it.

References
----------
H. Si, B. Guenter, "Linear-time dynamics for general joint models", §3 (scleronomic joints,
``T(q)``), §4 (recursions with ``S`` and ``Ṡ``), Fig. 3 (torus chain on a Bezier spline).
R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, §4.4 (``c_J = Ṡ q̇`` of joints with
configuration-dependent motion subspaces).
"""
from __future__ import annotations

from collections.abc import Callable
from math import comb

import numpy as np

from .. import quaternion as quat
from ..spec import WORLD, Body, Joint, MechanismSpec
from .joints import JointModel

__all__ = ["GeneralJoint", "GeneralJointModel", "GeneralJointError", "revolute_joint",
           "prismatic_joint", "bezier_curve_joint", "bezier_point", "bezier_chain_spec",
           "bezier_chain", "torus_inertia", "DEFAULT_CONTROL_POINTS", "TRANSFORM_TOLERANCE"]

#: Largest accepted deviation of ``RᵀR`` from the identity at the sample configurations.
TRANSFORM_TOLERANCE = 1e-9
#: Seven control points (m) of a spline in the world x-z plane (Si & Guenter Fig. 3 uses 7).
DEFAULT_CONTROL_POINTS = ((0.0, 0.0, 2.0), (1.0, 0.0, 0.0), (2.0, 0.0, -0.5), (3.0, 0.0, 0.5),
                          (4.0, 0.0, -0.5), (5.0, 0.0, 0.0), (6.0, 0.0, 2.0))


class GeneralJointError(ValueError):
    """A transform that is no valid joint: wrong shape, foreign symbols, not in SE(3), not
    finite, or a rank-deficient motion subspace at a sample configuration."""


def _sympy():
    try:
        import sympy
    except ImportError as exc:     # pragma: no cover - sympy is a dependency of dynamics
        raise ImportError("general joints need sympy (pip install 'sympy>=1.12', part of the "
                          "'dynamics' extra)") from exc
    return sympy


def _vee(W):
    """``(W₃₂, W₁₃, W₂₁)`` of the skew part of a 3×3 sympy matrix."""
    return [(W[2, 1] - W[1, 2]) / 2, (W[0, 2] - W[2, 0]) / 2, (W[1, 0] - W[0, 1]) / 2]


def _lambdify(args, exprs):
    """A numeric function of ``args`` returning ``exprs`` as a flat list: scalar ``math``
    code (fastest for one configuration), ``numpy`` if an expression has no ``math`` form."""
    sympy = _sympy()
    try:
        f = sympy.lambdify(args, exprs, modules="math", cse=True)
        f(*[[0.5] * len(a) for a in args])
        return f
    except (NameError, TypeError, ValueError, AttributeError, ZeroDivisionError, OverflowError):
        return sympy.lambdify(args, exprs, modules="numpy", cse=True)


class GeneralJoint:
    """A scleronomic joint given by its transform ``T(q)`` (Si & Guenter §3).

    Parameters
    ----------
    transform : callable
        ``transform(q)`` with ``q`` a tuple of ``nq`` real sympy symbols returns the 4×4
        homogeneous transform of the link frame in the joint frame (a sympy ``Matrix`` or
        anything it accepts, e.g. nested lists of expressions). It must lie in SE(3) for every
        ``q`` (checked at ``samples``).
    nq : int
        Number of coordinates, 1 … 6.
    name : str
        Label used in messages.
    samples : (m, nq) array, optional
        Configurations at which ``T`` is validated: finite, ``RᵀR = I`` within
        :data:`TRANSFORM_TOLERANCE`, ``det R > 0`` and ``S`` of full column rank. Default
        ``q = 0`` and three points drawn uniformly from ``[-1, 1]^nq``.
    simplify : bool
        ``sympy.simplify`` ``S`` and the rate term before code generation (slow for large
        expressions; off by default, ``cse`` already shares subexpressions).
    subspace : callable, optional
        ``subspace(q)`` returning ``S(q)`` (6×nq sympy) in a closed form the caller derived
        from the structure of ``T`` (e.g. :func:`~.surface_joint.surface_surface_joint`'s
        ``S`` from the factors of ``T``): smaller expressions than differentiating the whole
        product. It must equal ``(T⁻¹ ∂T/∂q)^∨``; this is checked against central
        differences of ``T`` at ``samples`` (relative 1e-6).
    rate : callable, optional
        ``rate(q, qd)`` returning ``Ṡ q̇`` (6×1 sympy) in closed form, with ``subspace``;
        checked against central differences of ``S`` along ``q̇`` at ``samples``. Default:
        ``Σ_l ∂(S q̇)/∂q_l q̇_l`` by differentiating ``S``.

    Attributes
    ----------
    nq, nv : int
    symbols, velocity_symbols : tuple of sympy.Symbol
        ``q`` and ``q̇``.
    T : sympy.Matrix (4, 4)
    S_expr : sympy.Matrix (6, nq)
        ``S(q)``, columns ``(T⁻¹ ∂T/∂q_j)^∨`` (twist order ``(w; v)``).
    rate_expr : sympy.Matrix (6, 1)
        ``Ṡ q̇ = Σ_l ∂(S q̇)/∂q_l q̇_l``.

    Raises
    ------
    GeneralJointError
        A bad ``nq``, a transform of the wrong shape, depending on other symbols, not in SE(3)
        or with a rank-deficient ``S`` at a sample.

    Examples
    --------
    >>> import sympy
    >>> screw = GeneralJoint(lambda q: [[sympy.cos(q[0]), -sympy.sin(q[0]), 0, 0],
    ...                                 [sympy.sin(q[0]), sympy.cos(q[0]), 0, 0],
    ...                                 [0, 0, 1, 0.1 * q[0]], [0, 0, 0, 1]], 1, name="screw")
    >>> screw.motion_subspace([0.3]).ravel().round(12).tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.1]
    """

    def __init__(self, transform: Callable, nq: int, *, name: str = "general",
                 samples=None, simplify: bool = False, subspace: Callable | None = None,
                 rate: Callable | None = None):
        sympy = _sympy()
        if isinstance(nq, bool) or not isinstance(nq, (int, np.integer)) or not 1 <= nq <= 6:
            raise GeneralJointError(f"general joint {name!r}: nq must be an integer in 1 … 6 "
                                    f"(a scleronomic joint has at most 6 DOF), got {nq!r}")
        self.name, self.nq, self.nv = name, int(nq), int(nq)
        q = sympy.symbols(f"q0:{nq}", real=True)
        qd = sympy.symbols(f"qd0:{nq}", real=True)
        self.symbols, self.velocity_symbols = tuple(q), tuple(qd)
        try:
            T = sympy.Matrix(transform(self.symbols))
        except (TypeError, ValueError, IndexError) as exc:
            raise GeneralJointError(
                f"general joint {name!r}: transform(q) with q = {self.symbols} failed: "
                f"{exc}") from exc
        if T.shape != (4, 4):
            raise GeneralJointError(f"general joint {name!r}: transform(q) must be a 4×4 "
                                    f"homogeneous transform, got shape {T.shape}")
        foreign = T.free_symbols - set(q)
        if foreign:
            raise GeneralJointError(
                f"general joint {name!r}: the transform depends on {sorted(map(str, foreign))}, "
                f"not only on its {nq} coordinates {[str(s) for s in q]}; substitute numbers "
                "for parameters (or raise nq)")
        last = [sympy.simplify(T[3, k] - (1 if k == 3 else 0)) for k in range(4)]
        if any(e != 0 for e in last):
            raise GeneralJointError(f"general joint {name!r}: the last row of T must be "
                                    f"(0, 0, 0, 1), got {list(T[3, :])}")
        R, p = T[:3, :3], T[:3, 3]
        if subspace is None:
            cols = []
            for qj in q:
                w = _vee(R.T * R.diff(qj))
                lin = R.T * p.diff(qj)
                cols.append(list(w) + list(lin))
            S = sympy.Matrix(cols).T                                # (6, nq)
        else:
            S = sympy.Matrix(subspace(self.symbols))
            if S.shape != (6, nq) or S.free_symbols - set(q):
                raise GeneralJointError(f"general joint {name!r}: subspace(q) must be a 6×{nq} "
                                        f"matrix of the coordinates, got shape {S.shape}")
        self._closed_form_subspace = subspace is not None
        if rate is None:
            Sv = S * sympy.Matrix(qd)
            rate = Sv.jacobian(sympy.Matrix(q)) * sympy.Matrix(qd)  # Σ_l ∂(S q̇)/∂q_l q̇_l
            self._closed_form_rate = False
        else:
            rate = sympy.Matrix(rate(self.symbols, self.velocity_symbols))
            if rate.shape != (6, 1) or rate.free_symbols - set(q) - set(qd):
                raise GeneralJointError(f"general joint {name!r}: rate(q, qd) must be a 6×1 "
                                        f"matrix of q and qd, got shape {rate.shape}")
            self._closed_form_rate = True
        if simplify:
            S, rate = S.applyfunc(sympy.simplify), rate.applyfunc(sympy.simplify)
        self.T, self.S_expr, self.rate_expr = T, S, rate
        # one call per configuration: R (row-major), p, S (row-major)
        self._kin = _lambdify([q], list(R) + list(p) + list(S))
        self._rate = _lambdify([q, qd], list(rate))
        self._validate(samples)

    def __repr__(self) -> str:
        return f"GeneralJoint({self.name!r}, nq={self.nq})"

    # -- numeric evaluation --------------------------------------------------------------------
    def kinematics(self, q) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(R, p, S)`` at ``q`` (nq,): rotation (3, 3), translation (3,), subspace (6, nq)."""
        out = np.array(self._kin(list(np.asarray(q, dtype=float).reshape(-1))), dtype=float)
        return out[:9].reshape(3, 3), out[9:12], out[12:].reshape(6, self.nq)

    def transform_matrix(self, q) -> np.ndarray:
        """``T(q)`` as a (4, 4) array."""
        R, p, _ = self.kinematics(q)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        return T

    def motion_subspace(self, q) -> np.ndarray:
        """``S(q)`` (6, nq), twist order ``(w; v)``, link coordinates."""
        return self.kinematics(q)[2]

    def subspace_rate(self, q, v) -> np.ndarray:
        """``Ṡ(q, v) v = Σ_j Σ_l ∂S_j/∂q_l v_l v_j`` (6,)."""
        q = list(np.asarray(q, dtype=float).reshape(-1))
        v = list(np.asarray(v, dtype=float).reshape(-1))
        return np.array(self._rate(q, v), dtype=float)

    def _validate(self, samples) -> None:
        if samples is None:
            rng = np.random.default_rng(0)
            samples = np.vstack([np.zeros(self.nq), rng.uniform(-1.0, 1.0, (3, self.nq))])
        samples = np.atleast_2d(np.asarray(samples, dtype=float))
        if samples.shape[1] != self.nq:
            raise GeneralJointError(f"general joint {self.name!r}: samples must have {self.nq} "
                                    f"columns, got shape {samples.shape}")
        for qs in samples:
            try:
                R, p, S = self.kinematics(qs)
                rate = self.subspace_rate(qs, np.ones(self.nq))
            except (ValueError, ZeroDivisionError, OverflowError) as exc:
                raise GeneralJointError(f"general joint {self.name!r}: evaluating T at q = "
                                        f"{qs.tolist()} failed: {exc}") from exc
            where = f"general joint {self.name!r} at q = {qs.tolist()}"
            if not (np.all(np.isfinite(R)) and np.all(np.isfinite(p))
                    and np.all(np.isfinite(S)) and np.all(np.isfinite(rate))):
                raise GeneralJointError(f"{where}: T, S or Ṡ is not finite")
            err = float(np.abs(R.T @ R - np.eye(3)).max())
            if err > TRANSFORM_TOLERANCE or np.linalg.det(R) <= 0.0:
                raise GeneralJointError(
                    f"{where}: the upper-left 3×3 block of T is not a rotation "
                    f"(max |RᵀR - I| = {err:.3g}, det = {np.linalg.det(R):.3g}); T must be "
                    "in SE(3) for every q")
            if self._closed_form_subspace:
                S_fd = self._fd_subspace(qs)
                if np.abs(S - S_fd).max() > 1e-6 * max(1.0, np.abs(S_fd).max()):
                    raise GeneralJointError(
                        f"{where}: the closed-form subspace differs from (T⁻¹ ∂T/∂q)^∨ by "
                        f"{np.abs(S - S_fd).max():.3g} (central differences of T)")
            if self._closed_form_rate:
                qd = np.linspace(1.0, -0.5, self.nq)
                h = 1e-6
                fd = (self.motion_subspace(qs + h * qd) - self.motion_subspace(qs - h * qd)) \
                    @ qd / (2 * h)
                got = self.subspace_rate(qs, qd)
                if np.abs(got - fd).max() > 1e-5 * max(1.0, np.abs(fd).max()):
                    raise GeneralJointError(
                        f"{where}: the closed-form rate Ṡ q̇ differs from central differences "
                        f"of S by {np.abs(got - fd).max():.3g}")
            sv = np.linalg.svd(S, compute_uv=False)
            if sv.min() <= 1e-10 * max(1.0, sv.max()):
                raise GeneralJointError(
                    f"{where}: the motion subspace S = (T⁻¹ ∂T/∂q)^∨ has rank below nq = "
                    f"{self.nq} (singular values {sv.tolist()}); the coordinates are not "
                    "independent there")

    def _fd_subspace(self, q, h: float = 1e-6) -> np.ndarray:
        """``(T⁻¹ ∂T/∂q_j)^∨`` by central differences of :meth:`transform_matrix`."""
        q = np.asarray(q, dtype=float)
        T = self.transform_matrix(q)
        Tinv = np.linalg.inv(T)
        S = np.empty((6, self.nq))
        for j in range(self.nq):
            e = np.zeros(self.nq)
            e[j] = h
            W = Tinv @ (self.transform_matrix(q + e) - self.transform_matrix(q - e)) / (2 * h)
            S[:3, j] = 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])
            S[3:, j] = W[:3, 3]
        return S

    # -- model construction --------------------------------------------------------------------
    def bind(self, spec_joint: Joint, index: int, parent: int, placement: np.ndarray,
             idx_q: int, idx_v: int) -> GeneralJointModel:
        """The :class:`GeneralJointModel` of this joint at its place in a model (called by
        :class:`~dynamics.minimal.model.Model` for ``custom_joints``)."""
        return GeneralJointModel(self, spec_joint, index, parent, placement, idx_q, idx_v)


class GeneralJointModel(JointModel):
    """A :class:`GeneralJoint` in a model: ``S(q)`` and ``Ṡ v`` come from the joint's
    generated functions (``constant_subspace = False``); ``q`` is Euclidean and ``q`` / ``v``
    equal the placeholder spec joint's coordinates and rates."""

    type = "general"
    constant_subspace = False

    def __init__(self, joint: GeneralJoint, spec_joint: Joint, index: int, parent: int,
                 placement: np.ndarray, idx_q: int, idx_v: int):
        self.joint = joint
        self.nq, self.nv = joint.nq, joint.nv
        super().__init__(spec_joint, index, parent, placement, idx_q, idx_v)

    @property
    def S(self):
        raise TypeError(f"joint {self.name!r} is a general joint: its motion subspace depends "
                        "on q (use jm.kinematics(q) or data.S after an algorithm call); "
                        "algorithms that assume a constant S do not support it")

    def transform(self, q):
        R, p, _ = self.joint.kinematics(q)
        return R, p

    def kinematics(self, q):
        return self.joint.kinematics(q)

    def subspace_rate(self, q, v):
        return self.joint.subspace_rate(q, v)

    def check(self, q, argument="q"):
        if not np.all(np.isfinite(q)):
            raise ValueError(f"joint {self.name!r}: {argument}[{self.idx_q}:"
                             f"{self.idx_q + self.nq}] is not finite")


# -- examples ----------------------------------------------------------------------------------
def _unit(axis) -> np.ndarray:
    a = np.asarray(axis, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)) or not np.linalg.norm(a) > 0.0:
        raise GeneralJointError(f"axis must be a finite nonzero 3-vector, got {axis!r}")
    return a / np.linalg.norm(a)


def revolute_joint(axis=(1.0, 0.0, 0.0)) -> GeneralJoint:
    """A revolute joint written as ``T(θ) = [[I + sin θ K + (1 - cos θ) K², 0], [0, 1]]``
    (Rodrigues, ``K = [axis]``): reproduces the built-in revolute joint."""
    sympy = _sympy()
    a = _unit(axis)
    K = sympy.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])

    def transform(q):
        R = sympy.eye(3) + sympy.sin(q[0]) * K + (1 - sympy.cos(q[0])) * K * K
        return R.row_join(sympy.zeros(3, 1)).col_join(sympy.Matrix([[0, 0, 0, 1]]))
    return GeneralJoint(transform, 1, name="revolute")


def prismatic_joint(axis=(1.0, 0.0, 0.0)) -> GeneralJoint:
    """A prismatic joint ``T(d) = [[I, d axis], [0, 1]]``."""
    sympy = _sympy()
    a = _unit(axis)

    def transform(q):
        return sympy.eye(3).row_join(sympy.Matrix(a) * q[0]).col_join(
            sympy.Matrix([[0, 0, 0, 1]]))
    return GeneralJoint(transform, 1, name="prismatic")


def _control_points(control_points) -> np.ndarray:
    P = np.asarray(control_points, dtype=float)
    if P.ndim != 2 or P.shape[1] != 3 or P.shape[0] < 2 or not np.all(np.isfinite(P)):
        raise GeneralJointError(f"control_points must be a finite (m >= 2, 3) array, got shape "
                                f"{P.shape}")
    return P


def bezier_point(control_points, s: float, derivative: int = 0) -> np.ndarray:
    """``c(s)`` (or its ``derivative``-th derivative) of the Bezier curve by de Casteljau
    (numeric reference for tests, independent of sympy)."""
    P = _control_points(control_points)
    n = P.shape[0] - 1
    for _ in range(derivative):
        P = n * np.diff(P, axis=0)
        n -= 1
        if n < 0:
            return np.zeros(3)
    pts = P.copy()
    while pts.shape[0] > 1:
        pts = (1.0 - s) * pts[:-1] + s * pts[1:]
    return pts[0]


def bezier_curve_joint(control_points=DEFAULT_CONTROL_POINTS, reference=(0.0, 1.0, 0.0), *,
                       name: str = "bezier") -> GeneralJoint:
    """A 1-DOF joint sliding along a Bezier curve, oriented with its tangent.

    ``q = s`` is the curve parameter (``[0, 1]`` spans the curve; outside it the polynomial
    continues). With ``c(s) = Σ_i B_i^n(s) P_i`` (Bernstein basis, degree ``n = m - 1``) the
    link frame has its origin on ``c(s)`` and the axes

        ``x = t = c'/|c'|``, ``y = (r - (r·t) t) / |r - (r·t) t|``, ``z = x × y``

    for the fixed reference vector ``r``: a *reference-vector frame*, not the Frenet frame,
    so it stays defined on straight pieces and through inflections; it is singular only where
    the tangent is parallel to ``r`` or ``c' = 0``. For a curve in a plane normal to ``r``
    (the default: the world x-z plane, ``r = e_y``) ``y = r`` throughout.

    Parameters
    ----------
    control_points : (m, 3) array, m >= 2
        In the joint frame, m.
    reference : (3,) array
    name : str

    Raises
    ------
    GeneralJointError
        Bad control points or reference, or a degenerate frame at ``s ∈ {0, ¼, ½, ¾, 1}``.

    References
    ----------
    Si & Guenter §5, Fig. 3 (torus chain sliding along a 7-point Bezier spline, the first
    torus' main axis on the tangent).
    """
    sympy = _sympy()
    P = _control_points(control_points)
    r = _unit(reference)
    n = P.shape[0] - 1
    rv = sympy.Matrix(r)

    def transform(q):
        s = q[0]
        c = sympy.zeros(3, 1)
        for i in range(n + 1):
            c += comb(n, i) * (1 - s) ** (n - i) * s ** i * sympy.Matrix(P[i])
        d = c.diff(s)
        t = d / sympy.sqrt(d.dot(d))
        y = rv - rv.dot(t) * t
        y = y / sympy.sqrt(y.dot(y))
        z = t.cross(y)
        R = t.row_join(y).row_join(z)
        return R.row_join(c).col_join(sympy.Matrix([[0, 0, 0, 1]]))
    return GeneralJoint(transform, 1, name=name, samples=np.linspace(0.0, 1.0, 5)[:, None])


def torus_inertia(mass: float, major: float, minor: float) -> np.ndarray:
    """Inertia about the centre of a solid torus with its symmetry axis along body x:
    ``m (R² + ¾ a²)`` about the axis, ``m (R²/2 + ⅝ a²)`` about diameters."""
    axial = mass * (major ** 2 + 0.75 * minor ** 2)
    diametral = mass * (0.5 * major ** 2 + 0.625 * minor ** 2)
    return np.diag([axial, diametral, diametral])


def bezier_chain_spec(n: int, control_points=DEFAULT_CONTROL_POINTS, *, major: float = 0.2,
                      minor: float = 0.04, mass: float = 1.0, initial_s: float = 0.1,
                      reference=(0.0, 1.0, 0.0)) -> tuple[MechanismSpec, dict]:
    """Spec and ``custom_joints`` of the torus chain on a Bezier spline (Si & Guenter Fig. 3).

    Torus 1 slides along the spline (:func:`bezier_curve_joint`, spec placeholder
    ``"prismatic"`` joint ``"slide"``): the spline passes through its centre and its main
    (symmetry) axis is the tangent. Torus ``k + 1`` hangs from the bottom of torus ``k``
    (``-z``, wire centre line ``major`` from the centre) through it, turned 90° about ``z``
    so the rings interlock, on a revolute joint about its own main axis — the tangent of the
    parent's wire at the contact, the dominant rotation of interlocked rings. (Si & Guenter
    link their tori by 4-DOF surface-surface joints, as :func:`~.surface_joint.torus_chain`
    does; the revolute links keep this example small.) Masses ``mass``, radii ``major`` /
    ``minor`` (m); the chain starts at rest at ``s = initial_s``, gravity ``-z``.

    Returns
    -------
    spec : MechanismSpec
    custom_joints : dict
        ``{"slide": GeneralJoint}`` for :class:`~dynamics.minimal.model.Model`.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    inertia = torus_inertia(mass, major, minor)
    bodies = tuple(Body(f"torus{k + 1}", mass, inertia) for k in range(n))
    turn = quat.from_rotation_vector([0.0, 0.0, 0.5 * np.pi])
    joints = [Joint("slide", "prismatic", WORLD, "torus1")]
    for k in range(1, n):
        joints.append(Joint(f"link{k + 1}", "revolute", f"torus{k}", f"torus{k + 1}",
                            [0.0, 0.0, -major], [0.0, 0.0, major - 2.0 * minor],
                            [1.0, 0.0, 0.0], turn))
    spec = MechanismSpec(bodies, tuple(joints), initial_positions={"slide": [initial_s]},
                         name=f"bezier_torus_chain{n}")
    return spec, {"slide": bezier_curve_joint(control_points, reference, name="slide")}


def bezier_chain(n: int, control_points=DEFAULT_CONTROL_POINTS, **kwargs):
    """The :class:`~dynamics.minimal.model.Model` of :func:`bezier_chain_spec` (``n`` tori,
    ``n`` DOF: the spline parameter, then ``n - 1`` revolute angles).

    >>> model = bezier_chain(3)
    >>> model.nq, [jm.type for jm in model.joints]
    (3, ['general', 'revolute', 'revolute'])
    """
    from .model import Model
    spec, custom = bezier_chain_spec(n, control_points, **kwargs)
    return Model(spec, custom_joints=custom)
