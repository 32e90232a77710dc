"""SE(3) / se(3) algebra of Lee, Liu, Park & Srinivasa (2016), §2.

Conventions
-----------
* A pose is a 4×4 homogeneous matrix ``T = [[R, p], [0, 1]]`` (eq. 4); ``T_a_b`` is frame ``b``
  in frame ``a`` (it maps ``b`` coordinates to ``a`` coordinates).
* A twist is ``V = (w; v)``: **angular first, then linear** (eq. 5), with matrix form
  ``[V] = [[ŵ, v], [0, 0]]``. A wrench is ``F = (m; f)`` (moment; force), paired with twists by
  ``Fᵀ V`` (power). Pinocchio's ``Motion`` and ``Force`` vectors are ``(linear; angular)``:
  :func:`swap_halves` converts 6-vectors and 6×6 matrices between the two orders.
* ``Ad(T) = [[R, 0], [p̂R, R]]`` maps twists from ``b`` to ``a`` coordinates for ``T = T_a_b``
  (eq. 15); forces go the other way with its transpose: ``F_b = Ad(T_a_b)ᵀ F_a``.
* ``ad(V) = [[ŵ, 0], [v̂, ŵ]]`` is the Lie bracket ``ad_V W = [V][W] - [W][V]`` (eq. 13) and
  ``ad_dual(V) = ad(V)ᵀ`` its dual on wrenches: a rigid body obeys ``F = G V̇ - ad(V)ᵀ G V``.
* ``dexp(V) = Σ_k ad_V^k / (k+1)!`` is the right-trivialized tangent of ``exp``
  (``(d/dt exp[V]) exp(-[V]) = [dexp(V) V̇]``); ``dlog(V) = dexp(V)⁻¹ = Σ_j B_j/j! ad_V^j``
  (eq. 12-13, Bernoulli numbers with ``B_1 = -1/2``). The body-frame (left-trivialized)
  tangent is ``dexp(-V)``. :func:`dexp` and :func:`dlog` are closed forms;
  :func:`dexp_series` and :func:`dlog_series` sum the series (tests compare the two).

References
----------
J. Lee, C. K. Liu, F. C. Park, S. S. Srinivasa, "A linear-time variational integrator for
multibody systems", WAFR 2016, eq. 4-5, 12-13, 15.
T. D. Barfoot, *State Estimation for Robotics*, 2017, §7.1.5 (closed forms of the SE(3)
Jacobian ``Q`` block, eq. 7.86).
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import factorial

import numpy as np

__all__ = [
    "skew", "unskew", "hat", "vee", "exp_so3", "log_so3", "dexp_so3", "dlog_so3", "exp_se3",
    "log_se3", "inverse", "Ad", "Ad_inv", "ad", "ad_dual", "dexp", "dlog", "dexp_series",
    "dlog_series", "bernoulli_numbers", "spatial_inertia", "swap_halves", "pose",
    "rotation_from_quaternion", "quaternion_from_rotation",
]

#: Below this rotation angle the trigonometric coefficients use their Taylor series.
_SMALL_ANGLE = 0.1


def skew(w) -> np.ndarray:
    """``ŵ``: the 3×3 cross-product matrix, ``skew(w) @ x == cross(w, x)``."""
    x, y, z = w
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def unskew(W: np.ndarray) -> np.ndarray:
    """Inverse of :func:`skew` (reads the lower-triangular entries)."""
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def hat(V) -> np.ndarray:
    """``[V]``: the 4×4 matrix of a twist ``V = (w; v)`` (eq. 5)."""
    out = np.zeros((4, 4))
    out[:3, :3] = skew(V[:3])
    out[:3, 3] = V[3:]
    return out


def vee(Vm: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hat`: the twist ``(w; v)`` of a 4×4 matrix of se(3)."""
    return np.concatenate([unskew(Vm[:3, :3]), Vm[:3, 3]])


def pose(R: np.ndarray, p) -> np.ndarray:
    """The 4×4 homogeneous matrix ``[[R, p], [0, 1]]``."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def _coefficients(theta: float) -> tuple[float, float, float, float, float, float]:
    """``sinθ/θ, (1-cosθ)/θ², (θ-sinθ)/θ³, (1-(θ/2)cot(θ/2))/θ², (θ²+2cosθ-2)/(2θ⁴),
    (2θ-3sinθ+θcosθ)/(2θ⁵)`` with Taylor series (to θ⁶) for small θ."""
    if theta < _SMALL_ANGLE:
        t2 = theta * theta
        t4, t6 = t2 * t2, t2 * t2 * t2
        return (1.0 - t2 / 6.0 + t4 / 120.0 - t6 / 5040.0,
                0.5 - t2 / 24.0 + t4 / 720.0 - t6 / 40320.0,
                1.0 / 6.0 - t2 / 120.0 + t4 / 5040.0 - t6 / 362880.0,
                1.0 / 12.0 + t2 / 720.0 + t4 / 30240.0 + t6 / 1209600.0,
                1.0 / 24.0 - t2 / 720.0 + t4 / 40320.0 - t6 / 3628800.0,
                1.0 / 120.0 - t2 / 2520.0 + t4 / 120960.0 - t6 / 9979200.0)
    s, c = np.sin(theta), np.cos(theta)
    t2 = theta * theta
    half = 0.5 * theta
    sh = np.sin(half)
    # 1 - cosθ = 2 sin²(θ/2) and θ² + 2cosθ - 2 = (θ - 2 sin(θ/2))(θ + 2 sin(θ/2)) avoid the
    # cancellation of cos θ against 1
    return (s / theta, 2.0 * sh * sh / t2, (theta - s) / (t2 * theta),
            (1.0 - half * np.cos(half) / sh) / t2,
            (theta - 2.0 * sh) * (theta + 2.0 * sh) / (2.0 * t2 * t2),
            (2.0 * theta - 3.0 * s + theta * c) / (2.0 * t2 * t2 * theta))


def exp_so3(w) -> np.ndarray:
    """Rodrigues' formula: the rotation matrix ``exp(ŵ)`` of a rotation vector ``w``.

    >>> np.round(exp_so3([0.0, 0.0, np.pi / 2]) @ [1.0, 0.0, 0.0], 12)
    array([0., 1., 0.])
    """
    w = np.asarray(w, dtype=float)
    a, b = _coefficients(float(np.sqrt(w @ w)))[:2]
    W = skew(w)
    return np.eye(3) + a * W + b * (W @ W)


def quaternion_from_rotation(R: np.ndarray) -> np.ndarray:
    """Unit quaternion ``(w, x, y, z)`` with ``w >= 0`` of a rotation matrix (Shepperd's method,
    accurate at every angle)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    k = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                      (R[1, 0] - R[0, 1]) / s])
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[m, m])
        q = np.empty(4)
        q[0] = (R[m, j] - R[j, m]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + m] = (R[m, i] + R[i, m]) / s
    q /= np.sqrt(q @ q)
    return -q if q[0] < 0.0 else q


def rotation_from_quaternion(q) -> np.ndarray:
    """Rotation matrix of a unit quaternion ``(w, x, y, z)`` (not normalized here)."""
    w, x, y, z = q
    return np.array([
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)]])


def log_so3(R: np.ndarray) -> np.ndarray:
    """Rotation vector ``w`` (``|w| <= π``) with ``exp_so3(w) == R``; accurate near 0 and π.

    >>> bool(np.allclose(log_so3(exp_so3([0.1, -2.0, 0.5])), [0.1, -2.0, 0.5]))
    True
    """
    q = quaternion_from_rotation(np.asarray(R, dtype=float))
    s = float(np.sqrt(q[1:] @ q[1:]))
    if s < 1e-12:
        return 2.0 * q[1:] / q[0]
    return (2.0 * np.arctan2(s, q[0]) / s) * q[1:]


def dexp_so3(w) -> np.ndarray:
    """``J(w) = Σ ŵ^k/(k+1)!``: the so(3) block of :func:`dexp` (the left Jacobian of SO(3))."""
    w = np.asarray(w, dtype=float)
    _, b, c = _coefficients(float(np.sqrt(w @ w)))[:3]
    W = skew(w)
    return np.eye(3) + b * W + c * (W @ W)


def dlog_so3(w) -> np.ndarray:
    """``J(w)⁻¹ = I - ŵ/2 + (1 - (θ/2)cot(θ/2))/θ² ŵ²`` for ``θ = |w| < 2π``."""
    w = np.asarray(w, dtype=float)
    d = _coefficients(float(np.sqrt(w @ w)))[3]
    W = skew(w)
    return np.eye(3) - 0.5 * W + d * (W @ W)


def exp_se3(V) -> np.ndarray:
    """``exp([V])`` of a twist ``V = (w; v)``: ``[[exp_so3(w), J(w) v], [0, 1]]``.

    >>> T = exp_se3([0.0, 0.0, np.pi / 2, 1.0, 0.0, 0.0])
    >>> np.round(T[:3, 3], 12)
    array([0.63661977, 0.63661977, 0.        ])
    """
    V = np.asarray(V, dtype=float)
    w, v = V[:3], V[3:]
    a, b, c = _coefficients(float(np.sqrt(w @ w)))[:3]
    W = skew(w)
    W2 = W @ W
    T = np.eye(4)
    T[:3, :3] = np.eye(3) + a * W + b * W2
    T[:3, 3] = v + b * (W @ v) + c * (W2 @ v)
    return T


def log_se3(T: np.ndarray) -> np.ndarray:
    """The twist ``V = (w; v)`` with ``|w| <= π`` and ``exp_se3(V) == T``."""
    T = np.asarray(T, dtype=float)
    w = log_so3(T[:3, :3])
    return np.concatenate([w, dlog_so3(w) @ T[:3, 3]])


def inverse(T: np.ndarray) -> np.ndarray:
    """``T⁻¹ = [[Rᵀ, -Rᵀp], [0, 1]]``."""
    out = np.eye(4)
    Rt = T[:3, :3].T
    out[:3, :3] = Rt
    out[:3, 3] = -Rt @ T[:3, 3]
    return out


def Ad(T: np.ndarray) -> np.ndarray:
    """``[Ad_T] = [[R, 0], [p̂R, R]]`` (eq. 15): ``[Ad_T V] = T [V] T⁻¹``."""
    R, p = T[:3, :3], T[:3, 3]
    out = np.zeros((6, 6))
    out[:3, :3] = R
    out[3:, 3:] = R
    out[3:, :3] = skew(p) @ R
    return out


def Ad_inv(T: np.ndarray) -> np.ndarray:
    """``[Ad_{T⁻¹}] = [[Rᵀ, 0], [-Rᵀp̂, Rᵀ]]`` without forming ``T⁻¹``."""
    Rt = T[:3, :3].T
    out = np.zeros((6, 6))
    out[:3, :3] = Rt
    out[3:, 3:] = Rt
    out[3:, :3] = -Rt @ skew(T[:3, 3])
    return out


def ad(V) -> np.ndarray:
    """``[ad_V] = [[ŵ, 0], [v̂, ŵ]]`` (eq. 13): ``ad_V W = [V][W] - [W][V]``."""
    out = np.zeros((6, 6))
    W = skew(V[:3])
    out[:3, :3] = W
    out[3:, 3:] = W
    out[3:, :3] = skew(V[3:])
    return out


def ad_dual(V) -> np.ndarray:
    """``ad_V* = ad_Vᵀ`` acting on wrenches ``(m; f)``: ``F = G V̇ - ad_dual(V) G V``."""
    return ad(V).T


def _blocks_dexp(w: np.ndarray, v: np.ndarray):
    """``J(w)``, ``J(w)⁻¹`` and Barfoot's ``Q(v, w)`` (eq. 7.86b) for a twist ``(w; v)``."""
    _, b, c, d, e, f = _coefficients(float(np.sqrt(w @ w)))
    W, P = skew(w), skew(v)
    W2 = W @ W
    WP, PW = W @ P, P @ W
    WPW = WP @ W
    Q = (0.5 * P + c * (WP + PW + WPW) + e * (W @ WP + PW @ W - 3.0 * WPW)
         + f * (WPW @ W + W @ WPW))
    eye = np.eye(3)
    return eye + b * W + c * W2, eye - 0.5 * W + d * W2, Q


def dexp(V) -> np.ndarray:
    """Closed form of ``dexp_V = Σ ad_V^k/(k+1)! = [[J(w), 0], [Q(v, w), J(w)]]``.

    References
    ----------
    Lee et al. (2016) §2 (definition, below eq. 11); Barfoot (2017) eq. 7.86 for ``Q``.
    """
    V = np.asarray(V, dtype=float)
    J, _, Q = _blocks_dexp(V[:3], V[3:])
    out = np.zeros((6, 6))
    out[:3, :3] = J
    out[3:, 3:] = J
    out[3:, :3] = Q
    return out


def dlog(V) -> np.ndarray:
    """Closed form of ``dlog_V = dexp_V⁻¹ = [[J⁻¹, 0], [-J⁻¹ Q J⁻¹, J⁻¹]]`` (eq. 12-13),
    valid for rotation angles ``|w| < 2π``."""
    V = np.asarray(V, dtype=float)
    _, Jinv, Q = _blocks_dexp(V[:3], V[3:])
    out = np.zeros((6, 6))
    out[:3, :3] = Jinv
    out[3:, 3:] = Jinv
    out[3:, :3] = -Jinv @ Q @ Jinv
    return out


@lru_cache(maxsize=8)
def bernoulli_numbers(n: int) -> tuple[float, ...]:
    """``B_0 … B_{n-1}`` with ``B_1 = -1/2`` (the convention of Lee et al. 2016, eq. 12).

    >>> bernoulli_numbers(5)
    (1.0, -0.5, 0.16666666666666666, 0.0, -0.03333333333333333)
    """
    B: list[Fraction] = []
    for m in range(n):
        if m == 0:
            B.append(Fraction(1))
            continue
        acc = sum(Fraction(factorial(m + 1), factorial(k) * factorial(m + 1 - k)) * B[k]
                  for k in range(m))
        B.append(-acc / (m + 1))
    return tuple(float(b) for b in B)


# -- the ŵ² coefficient of dlog and its derivatives (Lee et al. 2016, Algorithm 4, line 8) --------
#: ``a_n = |B_2n|/(2n)!``: ``d(t) = (1 - (θ/2)cot(θ/2))/θ² = Σ_{n≥1} a_n t^{n-1}``, ``t = θ²``.
_D_SERIES = np.array([abs(b) / factorial(2 * n) for n, b in
                      enumerate(bernoulli_numbers(30)[2::2], start=1)][:14])
#: Below this angle ``d``, ``d'`` and ``d''`` are summed from :data:`_D_SERIES`.
_SERIES_ANGLE = 1.0


def _d_and_derivatives(theta: float) -> tuple[float, float, float]:
    """``d(t)``, ``d'(t)``, ``d''(t)`` for ``t = θ²`` (``d`` is the ``ŵ²`` coefficient of
    ``J(w)⁻¹``, :func:`dlog_so3`; the DEL Jacobian of :mod:`dynamics.minimal.variational` and its
    compiled twin in :mod:`dynamics.minimal.tree_kernels` need its derivatives)."""
    if theta < _SERIES_ANGLE:
        t = theta * theta
        d = d1 = d2 = 0.0
        for n in range(len(_D_SERIES), 0, -1):            # Horner, highest power first
            a = _D_SERIES[n - 1]
            d = d * t + a
            if n >= 2:
                d1 = d1 * t + (n - 1) * a
            if n >= 3:
                d2 = d2 * t + (n - 1) * (n - 2) * a
        return d, d1, d2
    half = 0.5 * theta
    sh, ch = np.sin(half), np.cos(half)
    cot, csc2 = ch / sh, 1.0 / (sh * sh)
    t2 = theta * theta
    d = (1.0 - half * cot) / t2
    d1 = (t2 * csc2 + 2.0 * theta * cot - 8.0) / (8.0 * t2 * t2)
    d2 = (-t2 * theta * cot * csc2 - 3.0 * t2 * csc2 - 6.0 * theta * cot + 32.0) \
        / (16.0 * t2 * t2 * t2)
    return d, d1, d2


def dexp_series(V, terms: int = 30) -> np.ndarray:
    """``Σ_{k<terms} ad_V^k / (k+1)!`` (converges for every ``V``)."""
    A = ad(np.asarray(V, dtype=float))
    out, term = np.eye(6), np.eye(6)
    for k in range(1, terms):
        term = term @ A / (k + 1)
        out += term
    return out


def dlog_series(V, terms: int = 40) -> np.ndarray:
    """``Σ_{j<terms} B_j/j! ad_V^j`` of eq. (12)-(13).

    Raises
    ------
    ValueError
        If the rotation angle ``|w| >= 2π``, where the series diverges.
    """
    V = np.asarray(V, dtype=float)
    if np.sqrt(V[:3] @ V[:3]) >= 2.0 * np.pi:
        raise ValueError(f"the Bernoulli series of dlog diverges for |w| >= 2π, got "
                         f"|w| = {np.sqrt(V[:3] @ V[:3])}")
    A = ad(V)
    B = bernoulli_numbers(terms)
    out, power = np.eye(6), np.eye(6)
    for j in range(1, terms):
        power = power @ A / j                 # ad_V^j / j!
        if B[j] != 0.0:
            out += B[j] * power
    return out


def spatial_inertia(mass: float, com, inertia) -> np.ndarray:
    """Spatial inertia ``G`` (6×6, order ``(w; v)``) about a frame's origin of a body with
    ``mass``, centre of mass ``com`` and rotational ``inertia`` about the centre of mass, both
    in that frame: ``G = [[I + m ĉĉᵀ, m ĉ], [m ĉᵀ, m 1]]`` (eq. 7 when ``c = 0``)."""
    C = skew(com)
    out = np.empty((6, 6))
    out[:3, :3] = np.asarray(inertia, dtype=float) + mass * (C @ C.T)
    out[:3, 3:] = mass * C
    out[3:, :3] = mass * C.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def swap_halves(x: np.ndarray) -> np.ndarray:
    """Swap the two 3-blocks of a 6-vector, or of both axes of a 6×6 matrix: converts between
    ``(w; v)`` (this module) and Pinocchio's ``(v; w)``. Its own inverse."""
    x = np.asarray(x)
    idx = np.r_[3:6, 0:3]
    return x[idx] if x.ndim == 1 else x[np.ix_(idx, idx)]
