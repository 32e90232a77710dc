"""Unit-quaternion algebra of Brüdigam et al. (2023), Appendix A.

Quaternions are stacked as ``q = [q_s, q_v1, q_v2, q_v3]`` (scalar first, Hamilton convention,
local-to-global action: ``Q(q) x`` maps body-frame coordinates to world coordinates). Every
function accepts a single quaternion of shape ``(4,)`` or a stack of shape ``(..., 4)`` and maps
over the leading axes, so the integrator can evaluate all joints of a mechanism in one call.

References
----------
J. Brüdigam, S. Sosnowski, Z. Manchester, S. Hirche, "Linear-time variational integrators in
maximal coordinates", 2023, Appendix A (eq. A.1-A.14).
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "T", "V", "skew", "hat", "vee", "L", "R", "multiply", "conjugate", "inverse",
    "rotation_matrix", "rotate", "from_axis_angle", "from_rotation_vector", "rotation_vector",
    "from_rpy", "normalize", "check_unit", "rotational_gradient", "rotational_jacobian",
    "d_rotate_dq", "d_rotate_transpose_dq", "IDENTITY",
]

#: ``T`` of eq. (A.4a): ``T q`` is the conjugate (the inverse of a unit quaternion).
T = np.diag([1.0, -1.0, -1.0, -1.0])
#: ``V`` of eq. (A.4d): ``V q`` is the vector part, ``V.T x`` embeds a vector (eq. A.5c-d).
V = np.hstack([np.zeros((3, 1)), np.eye(3)])
#: The identity rotation.
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def skew(x: np.ndarray) -> np.ndarray:
    """Skew-symmetric cross-product matrix ``x^×`` of eq. (A.3c); shape ``(..., 3, 3)``.

    >>> skew(np.array([1.0, 2.0, 3.0])) @ np.array([0.0, 0.0, 1.0])
    array([ 2., -1.,  0.])
    """
    x = np.asarray(x, dtype=float)
    out = np.zeros(x.shape[:-1] + (3, 3))
    out[..., 0, 1] = -x[..., 2]
    out[..., 0, 2] = x[..., 1]
    out[..., 1, 0] = x[..., 2]
    out[..., 1, 2] = -x[..., 0]
    out[..., 2, 0] = -x[..., 1]
    out[..., 2, 1] = x[..., 0]
    return out


def hat(x: np.ndarray) -> np.ndarray:
    """Pure quaternion ``x^ = [0, x]`` of eq. (A.3a)."""
    x = np.asarray(x, dtype=float)
    return np.concatenate([np.zeros(x.shape[:-1] + (1,)), x], axis=-1)


def vee(q: np.ndarray) -> np.ndarray:
    """Vector part ``q^∨ = V q`` of eq. (A.3b)."""
    return np.asarray(q, dtype=float)[..., 1:]


def _lr(q: np.ndarray, sign: float) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    s = q[..., 0]
    v = q[..., 1:]
    out = np.empty(q.shape[:-1] + (4, 4))
    out[..., 0, 0] = s
    out[..., 0, 1:] = -v
    out[..., 1:, 0] = v
    out[..., 1:, 1:] = sign * skew(v)
    for i in range(1, 4):
        out[..., i, i] = s
    return out


def L(q: np.ndarray) -> np.ndarray:
    """Left-multiplication matrix of eq. (A.4b): ``q ∘ p = L(q) p``; shape ``(..., 4, 4)``."""
    return _lr(q, 1.0)


def R(q: np.ndarray) -> np.ndarray:
    """Right-multiplication matrix of eq. (A.4c): ``p ∘ q = R(q) p``; shape ``(..., 4, 4)``."""
    return _lr(q, -1.0)


def multiply(q: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Hamilton product ``q ∘ p`` of eq. (A.2c).

    >>> qz = from_axis_angle([0, 0, 1], np.pi / 2)
    >>> np.allclose(multiply(qz, qz), from_axis_angle([0, 0, 1], np.pi))
    True
    """
    return np.einsum("...ij,...j->...i", L(q), np.asarray(p, dtype=float))


def conjugate(q: np.ndarray) -> np.ndarray:
    """Conjugate ``q^C = T q`` of eq. (A.2a)."""
    return np.asarray(q, dtype=float) @ T


def inverse(q: np.ndarray) -> np.ndarray:
    """Inverse ``q^C / |q|²`` (eq. A.2b; equal to the conjugate for unit quaternions)."""
    q = np.asarray(q, dtype=float)
    return conjugate(q) / np.sum(q * q, axis=-1, keepdims=True)


def rotation_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix ``Q(q) = V R(q)ᵀ L(q) Vᵀ`` of eq. (A.6); shape ``(..., 3, 3)``.

    >>> np.round(rotation_matrix(from_axis_angle([0, 0, 1], np.pi / 2)) @ [1, 0, 0], 12)
    array([0., 1., 0.])
    """
    q = np.asarray(q, dtype=float)
    return np.swapaxes(R(q), -1, -2)[..., 1:, :] @ L(q)[..., :, 1:]


def rotate(q: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``Q(q) x``: body-frame coordinates to world coordinates (eq. A.6)."""
    return np.einsum("...ij,...j->...i", rotation_matrix(q), np.asarray(x, dtype=float))


def from_axis_angle(axis, angle) -> np.ndarray:
    """Unit quaternion of a rotation by ``angle`` (rad) about ``axis`` (normalized here)."""
    axis = np.asarray(axis, dtype=float)
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise ValueError("rotation axis must be nonzero")
    half = 0.5 * np.asarray(angle, dtype=float)[..., None]
    vec = np.sin(half) * axis / n
    return np.concatenate([np.broadcast_to(np.cos(half), vec.shape[:-1] + (1,)), vec], axis=-1)


def from_rotation_vector(r: np.ndarray) -> np.ndarray:
    """Exponential map: the unit quaternion rotating by ``|r|`` about ``r / |r|``."""
    r = np.asarray(r, dtype=float)
    theta = np.linalg.norm(r, axis=-1, keepdims=True)
    half = 0.5 * theta
    # sin(θ/2)/θ, with its series near zero
    small = theta < 1e-8
    scale = np.where(small, 0.5 - theta**2 / 48.0, np.sin(half) / np.where(small, 1.0, theta))
    return np.concatenate([np.cos(half), scale * r], axis=-1)


def rotation_vector(q: np.ndarray) -> np.ndarray:
    """Logarithm map: the rotation vector ``θ·axis`` with ``θ ∈ [0, π]``.

    ``q`` and ``-q`` give the same result except at exactly ``θ = π`` (zero scalar part),
    where ``±π·axis`` describe the same rotation.
    """
    q = np.asarray(q, dtype=float)
    q = np.where(q[..., :1] < 0.0, -q, q)
    s = q[..., :1]
    v = q[..., 1:]
    nv = np.linalg.norm(v, axis=-1, keepdims=True)
    theta = 2.0 * np.arctan2(nv, s)
    small = nv < 1e-12
    scale = np.where(small, 2.0 / np.where(small, s, 1.0), theta / np.where(small, 1.0, nv))
    return scale * v


def from_rpy(rpy) -> np.ndarray:
    """Quaternion of URDF roll-pitch-yaw angles (fixed axes x, y, z: ``Rz(y) Ry(p) Rx(r)``)."""
    r, p, y = (float(a) for a in rpy)
    qx = from_axis_angle([1.0, 0.0, 0.0], r)
    qy = from_axis_angle([0.0, 1.0, 0.0], p)
    qz = from_axis_angle([0.0, 0.0, 1.0], y)
    return multiply(qz, multiply(qy, qx))


def normalize(q: np.ndarray) -> np.ndarray:
    """``q / |q|``; raises ``ValueError`` for a zero quaternion."""
    q = np.asarray(q, dtype=float)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise ValueError("zero quaternion cannot be normalized")
    return q / n


def check_unit(q: np.ndarray, name: str = "q", tol: float = 1e-9) -> np.ndarray:
    """Return ``q`` as a float array after checking ``|q| = 1`` within ``tol``.

    Raises
    ------
    ValueError
        Naming ``name`` and the norm found, for a wrong shape or a non-unit quaternion.
    """
    q = np.asarray(q, dtype=float)
    if q.shape[-1:] != (4,):
        raise ValueError(f"{name} must have 4 components (scalar first), got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} contains NaN or inf: {q}")
    n = np.linalg.norm(q, axis=-1)
    if np.any(np.abs(n - 1.0) > tol):
        raise ValueError(f"{name} must be a unit quaternion, |{name}| = {n}")
    return q


def rotational_gradient(grad_q: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Rotational gradient ``∇ʳf = V L(q)ᵀ ∇_q f`` of eq. (A.7); shape ``(..., 3)``.

    For a body-frame rotation ``q → q ∘ exp(δ)``, ``df = ½ ∇ʳfᵀ δ``.
    """
    return np.einsum("...ji,...j->...i", L(q)[..., :, 1:], grad_q)


def rotational_jacobian(jac_q: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Rotational Jacobian ``∂f/∂ʳq = (∂f/∂q) L(q) Vᵀ`` of eq. (A.8); shape ``(..., m, 3)``."""
    return np.asarray(jac_q) @ L(q)[..., :, 1:]


def d_rotate_dq(q: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Jacobian ``∂(Q(q) p)/∂q`` of the rotated vector w.r.t. the 4 quaternion entries.

    ``Q(q) p = V L(q) R(q)ᵀ p^`` is bilinear in q, so the derivative is
    ``V [R(R(q)ᵀ p^) + L(q) L(p^) T]``; shape ``(..., 3, 4)``.
    """
    q = np.asarray(q, dtype=float)
    ph = hat(np.broadcast_to(np.asarray(p, dtype=float), q.shape[:-1] + (3,)))
    y = np.einsum("...ji,...j->...i", R(q), ph)      # R(q)ᵀ p^ = p^ ∘ q^C
    return (R(y) + L(q) @ L(ph) @ T)[..., 1:, :]


def d_rotate_transpose_dq(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Jacobian ``∂(Q(q)ᵀ w)/∂q``; uses ``Q(q)ᵀ = Q(T q)``; shape ``(..., 3, 4)``."""
    return d_rotate_dq(conjugate(q), w) @ T
