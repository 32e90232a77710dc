"""numba kernels for trees of revolute and prismatic joints: RNEA, ABA, DRNEA, its analytic
Jacobian (Algorithm 4) and the whole variational simulation loop (RIQN, Newton, Broyden), with
the signatures of the NumPy reference.

The model is flattened once (lazily, cached on the model by :func:`flat_model`) into arrays:
parent index, joint type (0 revolute, 1 prismatic), axis, joint placement ``(R_P, p_P)``,
spatial inertia, mass and first moment, spring / damper constants and rest angle. A link
placement is kept as ``(R, p)`` and ``X = Ad(T)⁻¹`` is applied without forming it:
``X (w; v) = (Rᵀw; Rᵀ(v - p × w))`` and ``Xᵀ (m; f) = (R m + p × R f; R f)``.

The DEL Jacobian :func:`_del_jacobian` is the one of
:meth:`dynamics.minimal.variational._StepProblem.jacobian` (see that module's docstring):
per link ``Z_i = (K(ξ_i, G_i ξ_i/Δt) + dlog(ξ_i)ᵀ G_i/Δt) dlog(-ξ_i)``, then one column per
joint ``j``: ``c_i = X_i(q_{k+1}) c_λ(i)`` down the subtree of ``j`` (``c_j = S_j``), and the
backward pass ``F_i = Z_i c_i + Σ X_c(q_k)ᵀ F_c``, ``J_ij = S_iᵀ F_i``: O(n·depth) ≤ O(n²).

ABA is split in a configuration-only factorization (articulated inertias ``Ia``, ``U = Ia S``,
``1/(Sᵀ U)``) and a solve (bias forces and accelerations); RIQN's impulse ABA
(``v = 0``, no gravity) at ``q_k`` re-uses one factorization for every iteration of a step.

Every kernel is ``@njit(cache=True)``; the first call compiles (timings must exclude it).

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, Tables 5.1 and 7.1.
J. Lee, C. K. Liu, F. C. Park, S. S. Srinivasa (2016), Algorithms 1-4.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from .algorithms import crba
from .configuration import as_vector, step_forces
from .forces import joint_springs
from .model import Data, Model
from .results import ConvergenceError, SimulationResult, convergence_advice
from .spatial import _D_SERIES, _SERIES_ANGLE

__all__ = ["FlatModel", "flat_model", "supports", "rnea", "aba", "drnea_momentum_form",
           "del_jacobian", "simulate_variational_compiled"]

_SOLVER_CODES = {"riqn": 0, "newton": 1, "broyden": 2}
_GUESS_CODES = {"ig1": 0, "ig2": 1, "ig3": 2}
_JACOBIAN_CODES = {"analytic": 0, "fd": 1}
_FD_STEP = 1e-6


@dataclass(frozen=True)
class FlatModel:
    """Flat arrays of a tree of revolute / prismatic joints (see the module docstring)."""

    parent: np.ndarray
    jtype: np.ndarray
    axis: np.ndarray
    PR: np.ndarray
    Pp: np.ndarray
    inertia: np.ndarray
    mass: np.ndarray
    first_moment: np.ndarray
    gravity: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    rest: np.ndarray


def supports(model: Model) -> bool:
    """Whether every joint of ``model`` is revolute or prismatic."""
    return all(jm.type in ("revolute", "prismatic") for jm in model.joints)


def require_supported(model: Model, what: str) -> None:
    """Raise ValueError naming the first joint of ``model`` that is neither revolute nor
    prismatic (``what``: who needs them, for the message)."""
    for jm in model.joints:
        if jm.type not in ("revolute", "prismatic"):
            raise ValueError(f"{what} support revolute and prismatic joints only; joint "
                             f"{jm.name!r} is {jm.type}")


def flat_model(model: Model) -> FlatModel:
    """The model's :class:`FlatModel` (built once, cached on the model).

    Raises
    ------
    ValueError
        A joint other than revolute or prismatic (naming it).
    """
    cached = model._flat_model
    if cached is not None:
        return cached
    require_supported(model, "the compiled kernels")
    springs = joint_springs(model)
    P = np.array([jm.placement for jm in model.joints]).reshape(-1, 4, 4)
    flat = FlatModel(
        np.array(model.parents, dtype=np.int64),
        np.array([0 if jm.type == "revolute" else 1 for jm in model.joints], dtype=np.int64),
        np.array([jm.axis for jm in model.joints], dtype=float).reshape(-1, 3),
        np.ascontiguousarray(P[:, :3, :3]), np.ascontiguousarray(P[:, :3, 3]),
        np.ascontiguousarray(model.inertias), np.array(model.masses),
        np.array(model.first_moments), np.array(model.gravity),
        np.array(springs.stiffness), np.array(springs.damping), np.array(springs.rest))
    model._flat_model = flat
    return flat


# -- small spatial helpers ---------------------------------------------------------------------
@njit(cache=True)
def _placements(fm_parent, jtype, axis, PR, Pp, q, R, p):
    """``T_{λ(i),i}(q_i) = P_i exp(S_i q_i)`` as ``(R[i], p[i])``."""
    n = q.shape[0]
    for i in range(n):
        if jtype[i] == 0:
            x, y, z = axis[i, 0], axis[i, 1], axis[i, 2]
            s, c = math.sin(q[i]), math.cos(q[i])
            C = 1.0 - c
            r00, r01, r02 = c + x * x * C, x * y * C - z * s, x * z * C + y * s
            r10, r11, r12 = y * x * C + z * s, c + y * y * C, y * z * C - x * s
            r20, r21, r22 = z * x * C - y * s, z * y * C + x * s, c + z * z * C
            for a in range(3):
                P0, P1, P2 = PR[i, a, 0], PR[i, a, 1], PR[i, a, 2]
                R[i, a, 0] = P0 * r00 + P1 * r10 + P2 * r20
                R[i, a, 1] = P0 * r01 + P1 * r11 + P2 * r21
                R[i, a, 2] = P0 * r02 + P1 * r12 + P2 * r22
                p[i, a] = Pp[i, a]
        else:
            for a in range(3):
                R[i, a, 0], R[i, a, 1], R[i, a, 2] = PR[i, a, 0], PR[i, a, 1], PR[i, a, 2]
                p[i, a] = Pp[i, a] + q[i] * (PR[i, a, 0] * axis[i, 0] + PR[i, a, 1] * axis[i, 1]
                                             + PR[i, a, 2] * axis[i, 2])


@njit(cache=True, _nrt=False)
def _X_apply(R, p, x, out):
    """``out = X x`` with ``X = Ad((R, p))⁻¹`` (twists, parent -> child)."""
    w0, w1, w2 = x[0], x[1], x[2]
    u0 = x[3] - (p[1] * w2 - p[2] * w1)
    u1 = x[4] - (p[2] * w0 - p[0] * w2)
    u2 = x[5] - (p[0] * w1 - p[1] * w0)
    for a in range(3):
        out[a] = R[0, a] * w0 + R[1, a] * w1 + R[2, a] * w2
        out[3 + a] = R[0, a] * u0 + R[1, a] * u1 + R[2, a] * u2


@njit(cache=True, _nrt=False)
def _XT_add(R, p, F, out):
    """``out += Xᵀ F`` (wrenches, child -> parent)."""
    f0 = R[0, 0] * F[3] + R[0, 1] * F[4] + R[0, 2] * F[5]
    f1 = R[1, 0] * F[3] + R[1, 1] * F[4] + R[1, 2] * F[5]
    f2 = R[2, 0] * F[3] + R[2, 1] * F[4] + R[2, 2] * F[5]
    for a in range(3):
        out[a] += R[a, 0] * F[0] + R[a, 1] * F[1] + R[a, 2] * F[2]
    out[0] += p[1] * f2 - p[2] * f1
    out[1] += p[2] * f0 - p[0] * f2
    out[2] += p[0] * f1 - p[1] * f0
    out[3] += f0
    out[4] += f1
    out[5] += f2


@njit(cache=True)
def _X_matrix(R, p, X):
    for a in range(6):
        for b in range(6):
            X[a, b] = 0.0
    for a in range(3):
        for b in range(3):
            X[a, b] = R[b, a]
            X[3 + a, 3 + b] = R[b, a]
    # -Rᵀ p̂
    for a in range(3):
        X[3 + a, 0] = -(R[1, a] * p[2] - R[2, a] * p[1])
        X[3 + a, 1] = -(R[2, a] * p[0] - R[0, a] * p[2])
        X[3 + a, 2] = -(R[0, a] * p[1] - R[1, a] * p[0])


@njit(cache=True)
def _congruence_add(X, A, B, out):
    """``out += Xᵀ A X`` (B: 6×6 scratch)."""
    for a in range(6):
        for b in range(6):
            s = 0.0
            for c in range(6):
                s += A[a, c] * X[c, b]
            B[a, b] = s
    for a in range(6):
        for b in range(6):
            s = 0.0
            for c in range(6):
                s += X[c, a] * B[c, b]
            out[a, b] += s


@njit(cache=True, _nrt=False)
def _rotate_block(R, A, i0, j0, M):
    """``M[i0:i0+3, j0:j0+3] = R A[i0:i0+3, j0:j0+3] Rᵀ``."""
    t00 = A[i0, j0] * R[0, 0] + A[i0, j0 + 1] * R[0, 1] + A[i0, j0 + 2] * R[0, 2]
    t01 = A[i0, j0] * R[1, 0] + A[i0, j0 + 1] * R[1, 1] + A[i0, j0 + 2] * R[1, 2]
    t02 = A[i0, j0] * R[2, 0] + A[i0, j0 + 1] * R[2, 1] + A[i0, j0 + 2] * R[2, 2]
    t10 = A[i0 + 1, j0] * R[0, 0] + A[i0 + 1, j0 + 1] * R[0, 1] + A[i0 + 1, j0 + 2] * R[0, 2]
    t11 = A[i0 + 1, j0] * R[1, 0] + A[i0 + 1, j0 + 1] * R[1, 1] + A[i0 + 1, j0 + 2] * R[1, 2]
    t12 = A[i0 + 1, j0] * R[2, 0] + A[i0 + 1, j0 + 1] * R[2, 1] + A[i0 + 1, j0 + 2] * R[2, 2]
    t20 = A[i0 + 2, j0] * R[0, 0] + A[i0 + 2, j0 + 1] * R[0, 1] + A[i0 + 2, j0 + 2] * R[0, 2]
    t21 = A[i0 + 2, j0] * R[1, 0] + A[i0 + 2, j0 + 1] * R[1, 1] + A[i0 + 2, j0 + 2] * R[1, 2]
    t22 = A[i0 + 2, j0] * R[2, 0] + A[i0 + 2, j0 + 1] * R[2, 1] + A[i0 + 2, j0 + 2] * R[2, 2]
    for a in range(3):
        M[i0 + a, j0] = R[a, 0] * t00 + R[a, 1] * t10 + R[a, 2] * t20
        M[i0 + a, j0 + 1] = R[a, 0] * t01 + R[a, 1] * t11 + R[a, 2] * t21
        M[i0 + a, j0 + 2] = R[a, 0] * t02 + R[a, 1] * t12 + R[a, 2] * t22


@njit(cache=True, _nrt=False)
def _inertia_to_parent_add(R, p, A, out, M, H):
    """``out += Xᵀ A X`` for a symmetric 6×6 ``A`` and ``X = Ad((R, p))⁻¹ =
    [[Rᵀ, 0], [-Rᵀ p̂, Rᵀ]]`` (an articulated inertia moved to the parent frame), by 3×3
    blocks: with ``Bᵢⱼ = R Aᵢⱼ Rᵀ``, ``C = p̂ B₂₂`` and ``H = B₁₂ p̂`` the result is
    ``[[B₁₁ - H - Hᵀ - C p̂, B₁₂ + C], [(B₁₂ + C)ᵀ, B₂₂]]``: about half the products of
    :func:`_congruence_add`'s two 6×6 products. ``M`` (6×6), ``H`` (at least 3×3): scratch."""
    _rotate_block(R, A, 0, 0, M)
    _rotate_block(R, A, 0, 3, M)
    _rotate_block(R, A, 3, 3, M)
    p0, p1, p2 = p[0], p[1], p[2]
    for j in range(3):                  # C = p̂ B22 (columns p × b) into M's lower left
        b0, b1, b2 = M[3, 3 + j], M[4, 3 + j], M[5, 3 + j]
        M[3, j] = p1 * b2 - p2 * b1
        M[4, j] = p2 * b0 - p0 * b2
        M[5, j] = p0 * b1 - p1 * b0
    for a in range(3):                  # rows of H = B12 p̂ (bᵀ p̂ = (b × p)ᵀ)
        b0, b1, b2 = M[a, 3], M[a, 4], M[a, 5]
        H[a, 0] = b1 * p2 - b2 * p1
        H[a, 1] = b2 * p0 - b0 * p2
        H[a, 2] = b0 * p1 - b1 * p0
    for a in range(3):
        c0, c1, c2 = M[3 + a, 0], M[3 + a, 1], M[3 + a, 2]       # row a of C
        cp0, cp1, cp2 = c1 * p2 - c2 * p1, c2 * p0 - c0 * p2, c0 * p1 - c1 * p0
        out[a, 0] += M[a, 0] - H[a, 0] - H[0, a] - cp0
        out[a, 1] += M[a, 1] - H[a, 1] - H[1, a] - cp1
        out[a, 2] += M[a, 2] - H[a, 2] - H[2, a] - cp2
        for b in range(3):
            top = M[a, 3 + b] + M[3 + a, b]
            out[a, 3 + b] += top
            out[3 + b, a] += top
            out[3 + a, 3 + b] += M[3 + a, 3 + b]


@njit(cache=True)
def _subspace(jtype, axis, S):
    for a in range(6):
        S[a] = 0.0
    off = 0 if jtype == 0 else 3
    S[off], S[off + 1], S[off + 2] = axis[0], axis[1], axis[2]


@njit(cache=True, _nrt=False)
def _cross_motion(V, x, out):
    """``out = ad(V) x`` (motion cross product, twist order (w; v))."""
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    out[0] = w1 * x[2] - w2 * x[1]
    out[1] = w2 * x[0] - w0 * x[2]
    out[2] = w0 * x[1] - w1 * x[0]
    out[3] = w1 * x[5] - w2 * x[4] + v1 * x[2] - v2 * x[1]
    out[4] = w2 * x[3] - w0 * x[5] + v2 * x[0] - v0 * x[2]
    out[5] = w0 * x[4] - w1 * x[3] + v0 * x[1] - v1 * x[0]


@njit(cache=True, _nrt=False)
def _cross_force(V, h, out):
    """``out = -ad(V)ᵀ h`` (force cross product)."""
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    out[0] = w1 * h[2] - w2 * h[1] + v1 * h[5] - v2 * h[4]
    out[1] = w2 * h[0] - w0 * h[2] + v2 * h[3] - v0 * h[5]
    out[2] = w0 * h[1] - w1 * h[0] + v0 * h[4] - v1 * h[3]
    out[3] = w1 * h[5] - w2 * h[4]
    out[4] = w2 * h[3] - w0 * h[5]
    out[5] = w0 * h[4] - w1 * h[3]


@njit(cache=True)
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


# -- RNEA and ABA ------------------------------------------------------------------------------
@njit(cache=True)
def _rnea(parent, jtype, axis, PR, Pp, G, a_world, q, v, a, R, p, V, A, F, tau):
    n = q.shape[0]
    _placements(parent, jtype, axis, PR, Pp, q, R, p)
    S, tmp, h = np.empty(6), np.empty(6), np.empty(6)
    zero = np.zeros(6)
    for i in range(n):
        _subspace(jtype[i], axis[i], S)
        k = parent[i]
        _X_apply(R[i], p[i], V[k] if k >= 0 else zero, V[i])
        _X_apply(R[i], p[i], A[k] if k >= 0 else a_world, A[i])
        for c in range(6):
            V[i, c] += S[c] * v[i]
            A[i, c] += S[c] * a[i]
            tmp[c] = S[c] * v[i]
        _cross_motion(V[i], tmp, h)
        for c in range(6):
            A[i, c] += h[c]
        for c in range(6):
            h[c] = _dot6(G[i, c], V[i])
        _cross_force(V[i], h, tmp)
        for c in range(6):
            F[i, c] = _dot6(G[i, c], A[i]) + tmp[c]
    for i in range(n - 1, -1, -1):
        _subspace(jtype[i], axis[i], S)
        tau[i] = _dot6(S, F[i])
        if parent[i] >= 0:
            _XT_add(R[i], p[i], F[i], F[parent[i]])


@njit(cache=True)
def _aba_factor(parent, jtype, axis, G, R, p, Ia, Ia_red, U, Dinv, X, B):
    """Articulated inertias of the placements ``(R, p)`` (configuration only)."""
    n = R.shape[0]
    S = np.empty(6)
    for i in range(n):
        Ia[i, :, :] = G[i]
    for i in range(n - 1, -1, -1):
        _subspace(jtype[i], axis[i], S)
        for c in range(6):
            for d in range(c + 1, 6):       # keep Ia exactly symmetric
                m = 0.5 * (Ia[i, c, d] + Ia[i, d, c])
                Ia[i, c, d] = m
                Ia[i, d, c] = m
        for c in range(6):
            U[i, c] = _dot6(Ia[i, c], S)
        Dinv[i] = 1.0 / _dot6(S, U[i])
        for c in range(6):
            for d in range(6):
                Ia_red[i, c, d] = Ia[i, c, d] - U[i, c] * U[i, d] * Dinv[i]
        k = parent[i]
        if k >= 0:
            _inertia_to_parent_add(R[i], p[i], Ia_red[i], Ia[k], B, X)


@njit(cache=True)
def _aba_solve(parent, jtype, axis, R, p, Ia_red, U, Dinv, c, pa, tau, a_world, ddq, A):
    """Bias forces ``pa`` (overwritten) and velocity products ``c`` -> ``ddq``, link ``A``."""
    n = R.shape[0]
    S, tmp = np.empty(6), np.empty(6)
    u = np.empty(n)
    for i in range(n - 1, -1, -1):
        _subspace(jtype[i], axis[i], S)
        u[i] = tau[i] - _dot6(S, pa[i])
        k = parent[i]
        if k >= 0:
            for d in range(6):
                tmp[d] = pa[i, d] + _dot6(Ia_red[i, d], c[i]) + U[i, d] * Dinv[i] * u[i]
            _XT_add(R[i], p[i], tmp, pa[k])
    for i in range(n):
        _subspace(jtype[i], axis[i], S)
        k = parent[i]
        _X_apply(R[i], p[i], A[k] if k >= 0 else a_world, tmp)
        for d in range(6):
            tmp[d] += c[i, d]
        ddq[i] = Dinv[i] * (u[i] - _dot6(U[i], tmp))
        for d in range(6):
            A[i, d] = tmp[d] + S[d] * ddq[i]


@njit(cache=True)
def _velocity_terms(parent, jtype, axis, G, R, p, v, V, c, pa):
    """``V_i``, ``c_i = ad(V_i) S_i v_i`` and ``pa_i = -ad(V_i)ᵀ G_i V_i``."""
    n = R.shape[0]
    S, tmp, h = np.empty(6), np.empty(6), np.empty(6)
    zero = np.zeros(6)
    for i in range(n):
        _subspace(jtype[i], axis[i], S)
        k = parent[i]
        _X_apply(R[i], p[i], V[k] if k >= 0 else zero, V[i])
        for d in range(6):
            V[i, d] += S[d] * v[i]
            tmp[d] = S[d] * v[i]
        _cross_motion(V[i], tmp, c[i])
        for d in range(6):
            h[d] = _dot6(G[i, d], V[i])
        _cross_force(V[i], h, pa[i])


@njit(cache=True)
def _aba(parent, jtype, axis, PR, Pp, G, a_world, q, v, tau, R, p, Ia, Ia_red, U, Dinv, X, B,
         V, c, pa, A, ddq):
    _placements(parent, jtype, axis, PR, Pp, q, R, p)
    _aba_factor(parent, jtype, axis, G, R, p, Ia, Ia_red, U, Dinv, X, B)
    _velocity_terms(parent, jtype, axis, G, R, p, v, V, c, pa)
    _aba_solve(parent, jtype, axis, R, p, Ia_red, U, Dinv, c, pa, tau, a_world, ddq, A)


class _Work:
    """Work arrays of the compiled kernels for one model."""

    def __init__(self, n: int):
        self.R, self.p = np.zeros((n, 3, 3)), np.zeros((n, 3))
        self.V, self.A, self.F = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6))
        self.c, self.pa, self.U = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6))
        self.Ia, self.Ia_red = np.zeros((n, 6, 6)), np.zeros((n, 6, 6))
        self.Dinv, self.out = np.zeros(n), np.zeros(n)
        self.X, self.B = np.zeros((6, 6)), np.zeros((6, 6))


def _work(model: Model, data: Data) -> _Work:
    w = data._compiled_work
    if w is None or w.out.shape[0] != model.nv:
        w = _Work(model.nv)
        data._compiled_work = w
    return w


def rnea(model: Model, data: Data, q, v, a) -> np.ndarray:
    """Compiled :func:`dynamics.minimal.rnea` (revolute / prismatic trees, no quaternion
    checks needed); returns ``tau`` (nv,).

    Raises
    ------
    ValueError
        Wrong lengths or an unsupported joint type.
    """
    fm = flat_model(model)
    n = model.nv
    q, v, a = (as_vector(x, n, name, "model.nv") for x, name in ((q, "q"), (v, "v"), (a, "a")))
    w = _work(model, data)
    _rnea(fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, fm.inertia, data.a_gravity, q, v, a,
          w.R, w.p, w.V, w.A, w.F, w.out)
    return w.out.copy()


def aba(model: Model, data: Data, q, v, tau) -> np.ndarray:
    """Compiled :func:`dynamics.minimal.aba` (revolute / prismatic trees); returns ``ddq``.

    Raises
    ------
    ValueError
        Wrong lengths or an unsupported joint type.
    """
    fm = flat_model(model)
    n = model.nv
    q, v, tau = (as_vector(x, n, name, "model.nv")
                 for x, name in ((q, "q"), (v, "v"), (tau, "tau")))
    w = _work(model, data)
    _aba(fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, fm.inertia, data.a_gravity, q, v, tau,
         w.R, w.p, w.Ia, w.Ia_red, w.U, w.Dinv, w.X, w.B, w.V, w.c, w.pa, w.A, w.out)
    return w.out.copy()


# -- DRNEA -------------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _coeffs(theta):
    """The six coefficients of :func:`dynamics.minimal.spatial._coefficients`."""
    if theta < 0.1:
        t2 = theta * theta
        t4, t6 = t2 * t2, t2 * t2 * t2
        return (1.0 - t2 / 6.0 + t4 / 120.0 - t6 / 5040.0,
                0.5 - t2 / 24.0 + t4 / 720.0 - t6 / 40320.0,
                1.0 / 6.0 - t2 / 120.0 + t4 / 5040.0 - t6 / 362880.0,
                1.0 / 12.0 + t2 / 720.0 + t4 / 30240.0 + t6 / 1209600.0,
                1.0 / 24.0 - t2 / 720.0 + t4 / 40320.0 - t6 / 3628800.0,
                1.0 / 120.0 - t2 / 2520.0 + t4 / 120960.0 - t6 / 9979200.0)
    s, c = math.sin(theta), math.cos(theta)
    t2 = theta * theta
    half = 0.5 * theta
    sh = math.sin(half)
    return (s / theta, 2.0 * sh * sh / t2, (theta - s) / (t2 * theta),
            (1.0 - half * math.cos(half) / sh) / t2,
            (theta - 2.0 * sh) * (theta + 2.0 * sh) / (2.0 * t2 * t2),
            (2.0 * theta - 3.0 * s + theta * c) / (2.0 * t2 * t2 * theta))


@njit(cache=True, _nrt=False)
def _skew(w, W):
    W[0, 0], W[0, 1], W[0, 2] = 0.0, -w[2], w[1]
    W[1, 0], W[1, 1], W[1, 2] = w[2], 0.0, -w[0]
    W[2, 0], W[2, 1], W[2, 2] = -w[1], w[0], 0.0


@njit(cache=True)
def _log_se3(R, p, out):
    """``log`` of ``(R, p)`` through Shepperd's quaternion (as :func:`spatial.log_se3`),
    without allocating."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    k = 0
    best = tr
    for j in range(3):
        if R[j, j] > best:
            best, k = R[j, j], j + 1
    if k == 0:
        s = 2.0 * math.sqrt(1.0 + tr)
        q0, q1 = 0.25 * s, (R[2, 1] - R[1, 2]) / s
        q2, q3 = (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * math.sqrt(1.0 + R[i, i] - R[j, j] - R[m, m])
        q0 = (R[m, j] - R[j, m]) / s
        vi, vj, vm = 0.25 * s, (R[j, i] + R[i, j]) / s, (R[m, i] + R[i, m]) / s
        # (q1, q2, q3) has vi at i, vj at j, vm at m
        if i == 0:
            q1, q2, q3 = vi, vj, vm
        elif i == 1:
            q1, q2, q3 = vm, vi, vj
        else:
            q1, q2, q3 = vj, vm, vi
    if q0 < 0.0:
        q0, q1, q2, q3 = -q0, -q1, -q2, -q3
    nrm = math.sqrt(q0 ** 2 + q1 ** 2 + q2 ** 2 + q3 ** 2)
    sv = math.sqrt(q1 ** 2 + q2 ** 2 + q3 ** 2) / nrm
    scale = 2.0 / q0 if sv < 1e-12 else 2.0 * math.atan2(sv, q0 / nrm) / sv
    w0, w1, w2 = scale * q1 / nrm, scale * q2 / nrm, scale * q3 / nrm
    out[0], out[1], out[2] = w0, w1, w2
    theta = math.sqrt(w0 ** 2 + w1 ** 2 + w2 ** 2)
    d = _coeffs(theta)[3]
    a0, a1, a2 = w1 * p[2] - w2 * p[1], w2 * p[0] - w0 * p[2], w0 * p[1] - w1 * p[0]   # ŵ p
    b0, b1, b2 = w1 * a2 - w2 * a1, w2 * a0 - w0 * a2, w0 * a1 - w1 * a0               # ŵ² p
    out[3] = p[0] - 0.5 * a0 + d * b0
    out[4] = p[1] - 0.5 * a1 + d * b1
    out[5] = p[2] - 0.5 * a2 + d * b2


@njit(cache=True, _nrt=False)
def _mm3(A, B, out):
    """``out = A B`` (3×3)."""
    for r in range(3):
        for c in range(3):
            out[r, c] = A[r, 0] * B[0, c] + A[r, 1] * B[1, c] + A[r, 2] * B[2, c]


@njit(cache=True, _nrt=False)
def _dlog_into(xi, out, T):
    """``out = dlog(ξ) = [[J⁻¹, 0], [-J⁻¹ Q J⁻¹, J⁻¹]]`` (6×6) without allocating (``T``:
    a (7, 3, 3) scratch), the blocks of :func:`dynamics.minimal.spatial.dlog_se3`."""
    theta = math.sqrt(xi[0] ** 2 + xi[1] ** 2 + xi[2] ** 2)
    _, b, c, d, e, f = _coeffs(theta)
    W, P, W2, WP, PW, WPW, Q = T[0], T[1], T[2], T[3], T[4], T[5], T[6]
    _skew(xi[:3], W)
    _skew(xi[3:], P)
    _mm3(W, W, W2)
    _mm3(W, P, WP)
    _mm3(P, W, PW)
    _mm3(WP, W, WPW)
    for r in range(3):
        for k in range(3):
            w_wp = W[r, 0] * WP[0, k] + W[r, 1] * WP[1, k] + W[r, 2] * WP[2, k]
            pw_w = PW[r, 0] * W[0, k] + PW[r, 1] * W[1, k] + PW[r, 2] * W[2, k]
            wpw_w = WPW[r, 0] * W[0, k] + WPW[r, 1] * W[1, k] + WPW[r, 2] * W[2, k]
            w_wpw = W[r, 0] * WPW[0, k] + W[r, 1] * WPW[1, k] + W[r, 2] * WPW[2, k]
            Q[r, k] = (0.5 * P[r, k] + c * (WP[r, k] + PW[r, k] + WPW[r, k])
                       + e * (w_wp + pw_w - 3.0 * WPW[r, k]) + f * (wpw_w + w_wpw))
    for r in range(3):
        for k in range(3):
            jinv = (1.0 if r == k else 0.0) - 0.5 * W[r, k] + d * W2[r, k]
            out[r, k] = jinv
            out[3 + r, 3 + k] = jinv
            out[r, 3 + k] = 0.0
    Jinv = out[:3, :3]
    _mm3(Jinv, Q, WP)                               # J⁻¹ Q, then -(J⁻¹ Q) J⁻¹
    for r in range(3):
        for k in range(3):
            out[3 + r, k] = -(WP[r, 0] * Jinv[0, k] + WP[r, 1] * Jinv[1, k]
                              + WP[r, 2] * Jinv[2, k])


@njit(cache=True)
def _dlog_transpose(xi, y, out, M, T):
    """``out = dlog(ξ)ᵀ y`` (``M`` 6×6 and ``T`` 7×3×3: :func:`_dlog_into`'s scratch)."""
    _dlog_into(xi, M, T)
    for j in range(6):
        acc = 0.0
        for r in range(6):
            acc += M[r, j] * y[r]
        out[j] = acc


@njit(cache=True)
def _dlog_matrix(xi, out):
    """``out = dlog(ξ)`` (6×6)."""
    _dlog_into(xi, out, np.empty((7, 3, 3)))


@njit(cache=True)
def _d_derivatives(theta):
    """``d(t)``, ``d'(t)``, ``d''(t)``, ``t = θ²`` (as ``spatial._d_and_derivatives``)."""
    if theta < _SERIES_ANGLE:
        t = theta * theta
        d = d1 = d2 = 0.0
        for n in range(_D_SERIES.shape[0], 0, -1):
            a = _D_SERIES[n - 1]
            d = d * t + a
            if n >= 2:
                d1 = d1 * t + (n - 1) * a
            if n >= 3:
                d2 = d2 * t + (n - 1) * (n - 2) * a
        return d, d1, d2
    half = 0.5 * theta
    sh, ch = math.sin(half), math.cos(half)
    cot, csc2 = ch / sh, 1.0 / (sh * sh)
    t2 = theta * theta
    return ((1.0 - half * cot) / t2,
            (t2 * csc2 + 2.0 * theta * cot - 8.0) / (8.0 * t2 * t2),
            (-t2 * theta * cot * csc2 - 3.0 * t2 * csc2 - 6.0 * theta * cot + 32.0)
            / (16.0 * t2 * t2 * t2))


@njit(cache=True)
def _g_gradient(w0, w1, w2, y, d, d1, out, r0, c0):
    """``out[r0:r0+3, c0:c0+3] += ∂g/∂w`` for ``g(w, y) = y + ½ w×y + d (s w - t y)``."""
    w = (w0, w1, w2)
    s = w0 * y[0] + w1 * y[1] + w2 * y[2]
    t = w0 * w0 + w1 * w1 + w2 * w2
    for a in range(3):
        ra = s * w[a] - t * y[a]
        for b in range(3):
            val = d * (w[a] * y[b] - 2.0 * y[a] * w[b]) + 2.0 * d1 * ra * w[b]
            if a == b:
                val += d * s
            out[r0 + a, c0 + b] += val
    # -½ ŷ
    out[r0 + 0, c0 + 1] += 0.5 * y[2]
    out[r0 + 0, c0 + 2] -= 0.5 * y[1]
    out[r0 + 1, c0 + 0] -= 0.5 * y[2]
    out[r0 + 1, c0 + 2] += 0.5 * y[0]
    out[r0 + 2, c0 + 0] += 0.5 * y[1]
    out[r0 + 2, c0 + 1] -= 0.5 * y[0]


@njit(cache=True)
def _dlog_transpose_jacobian(xi, y, K):
    """``K = ∂(dlog(ξ)ᵀ y)/∂ξ`` (``variational.dlog_transpose_jacobian``)."""
    w0, w1, w2 = xi[0], xi[1], xi[2]
    w, v = (w0, w1, w2), (xi[3], xi[4], xi[5])
    yw, yv = y[:3], y[3:]
    d, d1, d2 = _d_derivatives(math.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    for a in range(6):
        for b in range(6):
            K[a, b] = 0.0
    _g_gradient(w0, w1, w2, yw, d, d1, K, 0, 0)
    _g_gradient(w0, w1, w2, yv, d, d1, K, 0, 3)
    for a in range(3):
        for b in range(3):
            K[3 + a, b] = K[a, 3 + b]
    # DG₁(w, y_v)[v]
    s = w0 * yv[0] + w1 * yv[1] + w2 * yv[2]
    t = w0 * w0 + w1 * w1 + w2 * w2
    sv = v[0] * yv[0] + v[1] * yv[1] + v[2] * yv[2]
    tv = 2.0 * (w0 * v[0] + w1 * v[1] + w2 * v[2])
    for a in range(3):
        ra = s * w[a] - t * yv[a]
        qa = sv * w[a] + s * v[a] - tv * yv[a]
        for b in range(3):
            val = (d1 * tv * (w[a] * yv[b] - 2.0 * yv[a] * w[b])
                   + d * (v[a] * yv[b] - 2.0 * yv[a] * v[b])
                   + 2.0 * d2 * tv * ra * w[b] + 2.0 * d1 * (qa * w[b] + ra * v[b]))
            if a == b:
                val += d1 * tv * s + d * sv
            K[a, b] += val


@njit(cache=True)
def _del_jacobian(parent, jtype, axis, G, Rk, pk, Rn, pn, dR, dp, half_d, dt, Z, c, Fc, J):
    """Algorithm 4: ``J = ∂f/∂q_{k+1}`` from the placements at ``q_k`` (``Rk, pk``) and
    ``q_{k+1}`` (``Rn, pn``) and the displacements ``ΔT = (dR, dp)`` left by :func:`_residual`.
    ``Z`` (n, 6, 6), ``c`` and ``Fc`` (n, 6) are scratch."""
    n = Rk.shape[0]
    xi, y, S = np.empty(6), np.empty(6), np.empty(6)
    K, Dm, Bm, A = np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6))
    in_sub = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        _log_se3(dR[i], dp[i], xi)
        for a in range(6):
            y[a] = _dot6(G[i, a], xi) / dt
        _dlog_transpose_jacobian(xi, y, K)
        _dlog_matrix(xi, Dm)
        for a in range(6):
            xi[a] = -xi[a]
        _dlog_matrix(xi, Bm)
        for a in range(6):                  # A = K + dlog(ξ)ᵀ G / Δt
            for b in range(6):
                s = 0.0
                for m in range(6):
                    s += Dm[m, a] * G[i, m, b]
                A[a, b] = K[a, b] + s / dt
        for a in range(6):                  # Z = A dlog(-ξ)
            for b in range(6):
                s = 0.0
                for m in range(6):
                    s += A[a, m] * Bm[m, b]
                Z[i, a, b] = s
    for j in range(n):
        for i in range(n):
            for a in range(6):
                Fc[i, a] = 0.0
        for i in range(j, n):
            if i == j:
                in_sub[i] = True
                _subspace(jtype[j], axis[j], c[i])
            else:
                in_sub[i] = in_sub[parent[i]] if parent[i] >= j else False
                if not in_sub[i]:
                    continue
                _X_apply(Rn[i], pn[i], c[parent[i]], c[i])
            for a in range(6):
                Fc[i, a] = _dot6(Z[i, a], c[i])
        for i in range(n - 1, -1, -1):
            _subspace(jtype[i], axis[i], S)
            J[i, j] = _dot6(S, Fc[i])
            if parent[i] >= 0:
                _XT_add(Rk[i], pk[i], Fc[i], Fc[parent[i]])
        J[j, j] += half_d[j]


@njit(cache=True)
def _gravity_wrench(parent, G, R, p, gvec, g, Fg):
    """``F_grav,i = G_i g_i`` with ``g_i = X_i g_λ(i)``, ``g_world = (0; gravity)``."""
    world = np.zeros(6)
    world[3:] = gvec
    for i in range(R.shape[0]):
        k = parent[i]
        _X_apply(R[i], p[i], g[k] if k >= 0 else world, g[i])
        for d in range(6):
            Fg[i, d] = _dot6(G[i, d], g[i])


@njit(cache=True)
def _residual(parent, jtype, axis, PR, Pp, G, Rk, pk, W_const, c_const, half_d, qk, x, dt,
              Rn, pn, dR, dp, mu, F, f):
    """DRNEA (Alg. 2, momentum form): ``f(x)`` for ``q_{k+1} = x``; leaves ``ΔT = (dR, dp)`` and
    ``μ`` of ``x``."""
    n = x.shape[0]
    _placements(parent, jtype, axis, PR, Pp, x, Rn, pn)
    xi, y, S = np.empty(6), np.empty(6), np.empty(6)
    M, T = np.empty((6, 6)), np.empty((7, 3, 3))
    for i in range(n):
        k = parent[i]
        if k >= 0:
            Rc = dR[k] @ Rn[i]
            pc = dR[k] @ pn[i] + dp[k]
        else:
            Rc, pc = Rn[i], pn[i]
        Rt = Rk[i].T
        dR[i] = Rt @ Rc
        dp[i] = Rt @ (pc - pk[i])
        _log_se3(dR[i], dp[i], xi)
        for d in range(6):
            xi[d] /= dt
        for d in range(6):
            y[d] = _dot6(G[i, d], xi)
        for d in range(6):
            xi[d] *= dt
        _dlog_transpose(xi, y, mu[i], M, T)
    for i in range(n):
        for d in range(6):
            F[i, d] = mu[i, d] + W_const[i, d]
    for i in range(n - 1, -1, -1):
        _subspace(jtype[i], axis[i], S)
        f[i] = _dot6(S, F[i]) + c_const[i] + half_d[i] * (x[i] - qk[i])
        if parent[i] >= 0:
            _XT_add(Rk[i], pk[i], F[i], F[parent[i]])


@njit(cache=True)
def _momentum_next(parent, jtype, axis, Rn, pn, dR, dp, mu, Fg_next, dt, stiffness, rest,
                   half_d, qk, x, F, out):
    """``p_{k+1} = J(x)ᵀ (Ad(ΔT)ᵀ μ + Δt/2 F_grav(x)) - Δt/2 k (x - rest) - d/2 (x - q_k)``."""
    n = x.shape[0]
    S = np.empty(6)
    for i in range(n):
        m = mu[i, :3] - np.cross(dp[i], mu[i, 3:])
        mw = dR[i].T @ m
        mf = dR[i].T @ mu[i, 3:]
        for d in range(3):
            F[i, d] = mw[d] + 0.5 * dt * Fg_next[i, d]
            F[i, 3 + d] = mf[d] + 0.5 * dt * Fg_next[i, 3 + d]
    for i in range(n - 1, -1, -1):
        _subspace(jtype[i], axis[i], S)
        out[i] = (_dot6(S, F[i]) - 0.5 * dt * stiffness[i] * (x[i] - rest[i])
                  - half_d[i] * (x[i] - qk[i]))
        if parent[i] >= 0:
            _XT_add(Rn[i], pn[i], F[i], F[parent[i]])


@njit(cache=True)
def _potential(parent, R, p, mass, first_moment, gvec, stiffness, rest, q):
    n = R.shape[0]
    total = _gravity_potential(parent, R, p, mass, first_moment, gvec, np.empty((n, 3, 3)),
                               np.empty((n, 3)))
    for i in range(n):
        total += 0.5 * stiffness[i] * (q[i] - rest[i]) ** 2
    return total


@njit(cache=True)
def _gravity_potential(parent, R, p, mass, first_moment, gvec, Rw, pw):
    """``-Σ g·(m_i x_i + R_i c_i)`` over the links (:func:`.algorithms.potential_energy`)
    from the placements ``(R[i], p[i])`` in the parent links; the world poses go to ``Rw``,
    ``pw``."""
    total = 0.0
    for i in range(R.shape[0]):
        k = parent[i]
        for r in range(3):
            if k >= 0:
                for c in range(3):
                    Rw[i, r, c] = (Rw[k, r, 0] * R[i, 0, c] + Rw[k, r, 1] * R[i, 1, c]
                                   + Rw[k, r, 2] * R[i, 2, c])
                pw[i, r] = pw[k, r] + (Rw[k, r, 0] * p[i, 0] + Rw[k, r, 1] * p[i, 1]
                                       + Rw[k, r, 2] * p[i, 2])
            else:
                for c in range(3):
                    Rw[i, r, c] = R[i, r, c]
                pw[i, r] = p[i, r]
        for r in range(3):
            x = mass[i] * pw[i, r] + (Rw[i, r, 0] * first_moment[i, 0]
                                      + Rw[i, r, 1] * first_moment[i, 1]
                                      + Rw[i, r, 2] * first_moment[i, 2])
            total -= gvec[r] * x
    return total


@njit(cache=True)
def _simulate(parent, jtype, axis, PR, Pp, G, mass, first_moment, gvec, stiffness, damping,
              rest, q0, v0, p0, dt, steps, solver, guess, tol, max_iter, weights, jac, tau_k,
              Qout, Vout, E, iters):
    """The whole variational simulation; returns -1 or the index of a step that failed.
    ``jac``: Newton's Jacobian (0 Algorithm 4, 1 finite differences); ``tau_k`` (steps, n):
    joint forces held over each step."""
    n = q0.shape[0]
    Rk, pk = np.empty((n, 3, 3)), np.empty((n, 3))
    Rn, pn = np.empty((n, 3, 3)), np.empty((n, 3))
    dR, dp = np.empty((n, 3, 3)), np.empty((n, 3))
    mu, F = np.empty((n, 6)), np.empty((n, 6))
    Ia, Ia_red = np.empty((n, 6, 6)), np.empty((n, 6, 6))
    U, Dinv = np.empty((n, 6)), np.empty(n)
    X, B = np.empty((6, 6)), np.empty((6, 6))
    Vw, c, pa, A = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    g, Fg, W_const = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    zeros6n = np.zeros((n, 6))
    c_const, f, f_new, fp, ddq = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    half_d = 0.5 * damping
    zero6 = np.zeros(6)
    a_grav = np.zeros(6)
    a_grav[3:] = -gvec
    H = np.zeros((n, n))
    J = np.zeros((n, n))
    Z = np.empty((n, 6, 6))
    e = np.zeros(n)
    q, p, v = q0.copy(), p0.copy(), v0.copy()
    delta_prev = dt * v0
    _placements(parent, jtype, axis, PR, Pp, q, Rk, pk)
    Qout[0], Vout[0] = q, v
    E[0] = 0.5 * (v @ p) + _potential(parent, Rk, pk, mass, first_moment, gvec, stiffness,
                                       rest, q)
    for k in range(steps):
        _placements(parent, jtype, axis, PR, Pp, q, Rk, pk)
        _gravity_wrench(parent, G, Rk, pk, gvec, g, Fg)
        _aba_factor(parent, jtype, axis, G, Rk, pk, Ia, Ia_red, U, Dinv, X, B)
        for i in range(n):
            for d in range(6):
                W_const[i, d] = -0.5 * dt * Fg[i, d]
            c_const[i] = 0.5 * dt * stiffness[i] * (q[i] - rest[i]) - p[i] - dt * tau_k[k, i]
        if guess == 0:
            x = q.copy()
        elif guess == 1:
            x = q + delta_prev
        else:
            v_fd = delta_prev / dt
            tau = tau_k[k] - stiffness * (q - rest) - damping * v_fd
            _velocity_terms(parent, jtype, axis, G, Rk, pk, v_fd, Vw, c, pa)
            _aba_solve(parent, jtype, axis, Rk, pk, Ia_red, U, Dinv, c, pa, tau, a_grav, ddq, A)
            x = q + dt * (v_fd + dt * ddq)
        _residual(parent, jtype, axis, PR, Pp, G, Rk, pk, W_const, c_const, half_d, q, x, dt,
                  Rn, pn, dR, dp, mu, F, f)
        it = 0
        while True:
            err = 0.0
            for i in range(n):
                err = max(err, abs(f[i]) * weights[i])
            if err <= tol:
                break
            if it == max_iter or not np.isfinite(err):
                iters[k] = it
                return k
            if solver == 0:
                pa[:, :] = zeros6n
                _aba_solve(parent, jtype, axis, Rk, pk, Ia_red, U, Dinv, zeros6n, pa, dt * f,
                           zero6, ddq, A)
                step = -ddq
            elif solver == 1 and jac == 0:
                # Rn, pn, dR, dp are those of x (the last _residual call)
                _del_jacobian(parent, jtype, axis, G, Rk, pk, Rn, pn, dR, dp, half_d, dt, Z,
                              Vw, c, J)
                step = -np.linalg.solve(J, f)
            elif solver == 1:
                for j in range(n):
                    e[j] = _FD_STEP
                    _residual(parent, jtype, axis, PR, Pp, G, Rk, pk, W_const, c_const, half_d,
                              q, x + e, dt, Rn, pn, dR, dp, mu, F, fp)
                    _residual(parent, jtype, axis, PR, Pp, G, Rk, pk, W_const, c_const, half_d,
                              q, x - e, dt, Rn, pn, dR, dp, mu, F, f_new)
                    e[j] = 0.0
                    for i in range(n):
                        J[i, j] = (fp[i] - f_new[i]) / (2.0 * _FD_STEP)
                step = -np.linalg.solve(J, f)
            else:
                if it == 0:
                    for j in range(n):
                        e[j] = dt
                        pa[:, :] = zeros6n
                        _aba_solve(parent, jtype, axis, Rk, pk, Ia_red, U, Dinv, zeros6n, pa,
                                   e, zero6, ddq, A)
                        H[:, j] = ddq
                        e[j] = 0.0
                step = -(H @ f)
            x = x + step
            _residual(parent, jtype, axis, PR, Pp, G, Rk, pk, W_const, c_const, half_d, q, x,
                      dt, Rn, pn, dR, dp, mu, F, f_new)
            if solver == 2:
                y = f_new - f
                Hy = H @ y
                denom = step @ Hy
                if denom != 0.0:
                    H += np.outer(step - Hy, step @ H) / denom
            f[:] = f_new
            it += 1
        iters[k] = it
        _gravity_wrench(parent, G, Rn, pn, gvec, g, Fg)
        p_new = np.empty(n)
        _momentum_next(parent, jtype, axis, Rn, pn, dR, dp, mu, Fg, dt, stiffness, rest, half_d,
                       q, x, F, p_new)
        delta_prev = x - q
        q, p = x, p_new
        # v = M(q)⁻¹ p by the impulse ABA at the new configuration
        _aba_factor(parent, jtype, axis, G, Rn, pn, Ia, Ia_red, U, Dinv, X, B)
        pa[:, :] = zeros6n
        _aba_solve(parent, jtype, axis, Rn, pn, Ia_red, U, Dinv, zeros6n, pa, p, zero6, v, A)
        Qout[k + 1], Vout[k + 1] = q, v
        E[k + 1] = 0.5 * (v @ p) + _potential(parent, Rn, pn, mass, first_moment, gvec,
                                               stiffness, rest, q)
    return -1


def drnea_momentum_form(model: Model, data: Data, q, p, q_next, dt: float) -> np.ndarray:
    """Compiled :func:`dynamics.minimal.variational.del_residual` without joint forces ``tau``
    (revolute / prismatic trees)."""
    fm = flat_model(model)
    n = model.nv
    q, p, q_next = (as_vector(x, n, name, "model.nv")
                    for x, name in ((q, "q"), (p, "p"), (q_next, "q_next")))
    Rk, pk, g, Fg = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 6)), np.empty((n, 6))
    _placements(fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, q, Rk, pk)
    _gravity_wrench(fm.parent, fm.inertia, Rk, pk, fm.gravity, g, Fg)
    c_const = 0.5 * dt * fm.stiffness * (q - fm.rest) - p
    f = np.empty(n)
    _residual(fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, fm.inertia, Rk, pk, -0.5 * dt * Fg,
              c_const, 0.5 * fm.damping, q, q_next, dt, np.empty((n, 3, 3)), np.empty((n, 3)),
              np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 6)), np.empty((n, 6)), f)
    return f


def del_jacobian(model: Model, data: Data, q, p, q_next, dt: float) -> np.ndarray:
    """Compiled :func:`dynamics.minimal.variational.del_jacobian` (Algorithm 4; revolute /
    prismatic trees), (nv, nv). ``p`` does not enter the Jacobian (kept for symmetry with
    :func:`drnea_momentum_form`)."""
    fm = flat_model(model)
    n = model.nv
    q, p, q_next = (as_vector(x, n, name, "model.nv")
                    for x, name in ((q, "q"), (p, "p"), (q_next, "q_next")))
    Rk, pk, Rn, pn = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3))
    dR, dp, mu, F = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 6)), np.empty((n, 6))
    _placements(fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, q, Rk, pk)
    zeros6n, zeros = np.zeros((n, 6)), np.zeros(n)
    f = np.empty(n)
    _residual(fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, fm.inertia, Rk, pk, zeros6n, zeros,
              zeros, q, q_next, dt, Rn, pn, dR, dp, mu, F, f)
    J = np.empty((n, n))
    _del_jacobian(fm.parent, fm.jtype, fm.axis, fm.inertia, Rk, pk, Rn, pn, dR, dp,
                  0.5 * fm.damping, float(dt), np.empty((n, 6, 6)), np.empty((n, 6)),
                  np.empty((n, 6)), J)
    return J


def simulate_variational_compiled(model: Model, q0, v0, dt: float, steps: int, *,
                                  solver: str = "riqn", initial_guess: str = "ig3",
                                  tol: float = 1e-11, max_iter: int = 50,
                                  jacobian: str = "analytic", tau=None):
    """:func:`dynamics.minimal.variational.simulate_variational` in one compiled loop
    (revolute / prismatic trees). ``step_time`` is the mean over the run.

    Parameters
    ----------
    jacobian : {"analytic", "fd"}
        Newton's DEL Jacobian: Algorithm 4 (default) or central finite differences.
    tau : (nv,) or (steps, nv) array, optional
        Joint forces besides springs and dampers, constant or one row per step (held over
        step ``k``, as a controller's output in the reference loop); no feedback controller.

    Raises
    ------
    ConvergenceError
        Naming the failing step.
    ValueError
        Unsupported joint types, unknown solver, Jacobian or initial guess, wrong lengths.
    """
    if solver not in _SOLVER_CODES:
        raise ValueError(f"solver must be one of {tuple(_SOLVER_CODES)}, got {solver!r}")
    if initial_guess not in _GUESS_CODES:
        raise ValueError(f"initial_guess must be one of {tuple(_GUESS_CODES)}, "
                         f"got {initial_guess!r}")
    if jacobian not in _JACOBIAN_CODES:
        raise ValueError(f"jacobian must be one of {tuple(_JACOBIAN_CODES)}, got {jacobian!r}")
    if not dt > 0.0 or int(steps) != steps or steps < 0:
        raise ValueError(f"need dt > 0 and an integer steps >= 0, got dt={dt}, steps={steps}")
    fm = flat_model(model)
    n, steps = model.nv, int(steps)
    q0 = as_vector(q0, n, "q0", "model.nq")
    v0 = as_vector(v0, n, "v0", "model.nv")
    tau_k = step_forces(tau, steps, n)
    M0 = crba(model, model.create_data(), q0)
    weights = dt / np.diag(M0)
    Q, V = np.empty((steps + 1, n)), np.empty((steps + 1, n))
    E, iters = np.empty(steps + 1), np.zeros(steps, dtype=np.int64)
    start = time.perf_counter()
    status = _simulate(fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, fm.inertia, fm.mass,
                       fm.first_moment, fm.gravity, fm.stiffness, fm.damping, fm.rest, q0, v0,
                       M0 @ v0, float(dt), steps, _SOLVER_CODES[solver],
                       _GUESS_CODES[initial_guess], float(tol), int(max_iter), weights,
                       _JACOBIAN_CODES[jacobian], tau_k, Q, V, E, iters)
    elapsed = time.perf_counter() - start
    if status >= 0:
        raise ConvergenceError(
            f"step {status} (t = {status * dt:g}): {solver} did not converge in {max_iter} "
            f"iterations (tol {tol:g}; {convergence_advice(solver)})",
            step=int(status), iterations=int(max_iter))
    times = np.full(steps, elapsed / max(steps, 1))
    return SimulationResult(dt * np.arange(steps + 1), Q, V, E, times, solver, iters)
