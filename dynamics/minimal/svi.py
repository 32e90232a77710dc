"""The structured variational integrator (SVI) of Johnson & Murphey (IEEE T-RO 2009) for trees
of revolute and prismatic joints: the midpoint-rule discrete Lagrangian in generalized
coordinates, its DEL residual and Jacobian from recursive tree computations over cached frames
and their derivatives, and Newton's method with that Jacobian -- the "SVI" beside Newton and
RIQN in Lee, Liu, Park & Srinivasa (2016) Fig. 3.

Discrete mechanics
------------------
With ``q̄ = (q_k + q_{k+1})/2`` and ``v̄ = (q_{k+1} - q_k)/Δt`` the midpoint discrete
Lagrangian is ``L_d(q_k, q_{k+1}) = Δt L(q̄, v̄)`` (Johnson & Murphey use the generalized
midpoint ``(1 - α) q_k + α q_{k+1}``; ``α = ½`` here, the symmetric, second-order choice), so

    D₁L_d = Δt/2 ∂L/∂q(q̄, v̄) - ∂L/∂v(q̄, v̄),      D₂L_d = Δt/2 ∂L/∂q(q̄, v̄) + ∂L/∂v(q̄, v̄),

and the forced DEL equation in momentum form (Marsden & West 2001 §3.2; the position-momentum
form Johnson & Murphey solve) is

    R(q_{k+1}) = p_k + D₁L_d(q_k, q_{k+1}) + Δt/2 F(q̄, v̄) = 0,
    p_{k+1}    =       D₂L_d(q_k, q_{k+1}) + Δt/2 F(q̄, v̄),

with ``F = τ_k - d ∘ v̄`` (controller torques held over the step, joint dampers; discrete
Lagrange-d'Alembert) and ``p_0 = M(q_0) v_0``. Gravity and joint springs are in
``L = T - V``. The Newton matrix is

    ∂R/∂q_{k+1} = Δt/4 L_qq + ½ (L_vqᵀ - L_vq) - M/Δt - ½ diag(d),

``L_vq[j, m] = ∂²L/∂v_j∂q_m``, ``M = ∂²L/∂v²``. The scheme is symplectic and symmetric, hence
of order 2 with a bounded energy error (measured in ``tests/dynamics/test_minimal_svi.py``).

Recursive tree computations (Johnson & Murphey §IV, from the paper's description)
---------------------------------------------------------------------------------
Every link frame is ``g_i = g_λ(i) X_i(q_i)``, ``X_i(q) = P_i exp(Ŝ_i q)`` (the constant joint
placement, then a rotation about or a translation along the joint axis; ``Ŝ_i`` the 4×4 twist
matrix, so ``∂X_i/∂q_i = X_i Ŝ_i``). Each frame caches its transform, its derivatives by the
coordinates of its ancestors ``a, b ⪯ i`` and those of its velocity ``ġ_i = Σ_a ∂g_i/∂q_a v_a``,
built from the parent's caches:

    ∂g_i/∂q_a = ∂g_λ/∂q_a X_i  (a ≺ i),            ∂g_i/∂q_i = g_i Ŝ_i,
    ∂²g_i/∂q_a∂q_b = ∂²g_λ/∂q_a∂q_b X_i  (a, b ≺ i), ∂²g_i/∂q_a∂q_i = ∂g_i/∂q_a Ŝ_i,
    ġ_i = ġ_λ X_i + v_i g_i Ŝ_i,
    ∂ġ_i/∂q_a = ∂ġ_λ/∂q_a X_i + v_i ∂g_i/∂q_a Ŝ_i  (a ≺ i),   ∂ġ_i/∂q_i = ġ_i Ŝ_i,
    ∂²ġ_i/∂q_a∂q_b = ∂²ġ_λ/∂q_a∂q_b X_i + v_i ∂²g_i/∂q_a∂q_b Ŝ_i  (a, b ≺ i),
    ∂²ġ_i/∂q_a∂q_i = ∂ġ_i/∂q_a Ŝ_i,

(``∂ġ_i/∂v_a = ∂g_i/∂q_a``; ``∂²ġ/∂q∂q`` is the third derivative of the frame contracted with
``v``). A link's kinetic energy is ``T_i = ½ tr(ġ_i 𝕄_i ġ_iᵀ)`` with the 4×4 pseudo-inertia
``𝕄_i = ∫ (x; 1)(x; 1)ᵀ dm = [[½ tr(I_o) 𝟙 - I_o, m c], [m cᵀ, m]]`` in the link frame, its
potential ``V_i = -m gᵀ (R_i c + p_i)`` (the position column of ``g_i 𝕄_i e₄``), so with
``⟨A, B⟩ = tr(A Bᵀ)``::

    ∂L/∂v_a = Σ_{i ⪰ a} ⟨∂g_i/∂q_a, ġ_i 𝕄_i⟩,
    ∂L/∂q_a = Σ_{i ⪰ a} ⟨∂ġ_i/∂q_a, ġ_i 𝕄_i⟩ + gᵀ (∂g_i/∂q_a 𝕄_i e₄) - k_a (q_a - q_rest,a),
    M_ab    = Σ_{i ⪰ a, b} ⟨∂g_i/∂q_a, ∂g_i/∂q_b 𝕄_i⟩,
    L_vq,ab = Σ_i ⟨∂²g_i/∂q_a∂q_b, ġ_i 𝕄_i⟩ + ⟨∂g_i/∂q_a, ∂ġ_i/∂q_b 𝕄_i⟩,
    L_qq,ab = Σ_i ⟨∂²ġ_i/∂q_a∂q_b, ġ_i 𝕄_i⟩ + ⟨∂ġ_i/∂q_a, ∂ġ_i/∂q_b 𝕄_i⟩
              + gᵀ (∂²g_i/∂q_a∂q_b 𝕄_i e₄) - δ_ab k_a.

**Cost.** The first-derivative caches hold ``Σ_i depth_i`` 3×4 blocks, the second-derivative
ones ``Σ_i depth_i (depth_i + 1)/2`` (:func:`cache_sizes`): for a chain of ``n`` links the DEL
residual costs O(n²) and its Jacobian O(n³), plus the O(n³) dense solve of each Newton
iteration -- the complexities Lee et al. (2016 §1) quote for the SVI ("O(n²) for evaluating the
DEL equation, and O(n³) for computing the Jacobian"), against their O(n) DRNEA residual and
O(n²) Algorithm-4 Jacobian. Measured in ``paper_figures.fig_lee2016_fig2to4`` (SVI curve).

Everything runs in numba (``@njit(cache=True)``; the first call compiles). The whole stepping
loop is one compiled call (:attr:`SVIResult.seconds`); velocities ``v_k = M(q_k)⁻¹ p_k`` and
energies are computed afterwards (O(n³) per step, not included in ``seconds``).

Convergence (``norm``): ``"scaled"`` (default) ``max_i |R_i| Δt / M_ii(q_0) ≤ tol`` -- Lee et
al.'s measure in :mod:`dynamics.minimal.variational`, so the two are timed at the same
tolerance; ``"impulse"`` ``max |R| ≤ tol`` (N m s); ``"force"`` ``max |R| / Δt ≤ tol`` (N m).
Initial guess: ``"ig1"`` ``q_{k+1} = q_k`` (as in Lee et al.'s Fig. 3 timings) or ``"ig2"``
(default) ``q_k + (q_k - q_{k-1})`` (``Δt v_0`` at the first step).

References
----------
E. R. Johnson, T. D. Murphey, "Scalable variational integrators for constrained mechanical
systems in generalized coordinates", IEEE Trans. Robotics 25(6), 2009, pp. 1249-1261 (the
paper is not in this repository; the recursions above are our derivation of the cached
tree computations it describes).
J. Lee, C. K. Liu, F. C. Park, S. S. Srinivasa, "A linear-time variational integrator for
multibody systems", WAFR 2016, §1 and §4.3, Fig. 3.
J. E. Marsden, M. West, "Discrete mechanics and variational integrators", Acta Numerica 2001,
§2.2 (midpoint discrete Lagrangians), §3.2 (forced DEL).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from .configuration import as_vector, check_newton, check_run, step_forces
from .forces import joint_springs
from .model import Model
from .results import MomentumTrajectory, StepFailure
from .tree_kernels import require_supported, supports

__all__ = ["NORMS", "INITIAL_GUESSES", "SVIFailure", "SVIResult", "supports", "cache_sizes",
           "lagrangian_derivatives", "svi_residual", "svi_jacobian", "svi_momentum",
           "simulate_svi"]

#: Convergence measures of :func:`simulate_svi` (module docstring).
NORMS = ("scaled", "impulse", "force")
#: Initial guesses of :func:`simulate_svi`.
INITIAL_GUESSES = ("ig1", "ig2")
_NORM_CODES = {"scaled": 0, "impulse": 1, "force": 2}
_FAILURE = {1: "max_iter", 2: "non-finite residual"}


class SVIFailure(StepFailure):
    """An SVI step did not converge (``raise_on_failure=True``); carries ``result``."""


@dataclass(frozen=True)
class SVIResult(MomentumTrajectory):
    """Trajectory of :func:`simulate_svi`: the fields of
    :class:`~dynamics.minimal.results.MomentumTrajectory`; ``seconds`` is the wall time of the
    compiled stepping loop, the velocities and energies computed afterwards excluded."""


# -- the tree of frames ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Tree:
    parent: np.ndarray
    jtype: np.ndarray
    axis: np.ndarray
    PR: np.ndarray
    Pp: np.ndarray
    pseudo: np.ndarray          # (n, 4, 4) pseudo-inertias 𝕄_i
    gvec: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    rest: np.ndarray
    depth: np.ndarray           # number of ancestors including the link itself
    off1: np.ndarray            # start of link i's first-derivative blocks
    off2: np.ndarray            # start of link i's second-derivative blocks
    anc: np.ndarray             # anc[off1[i] + a]: the a-th ancestor of i (0 = root side)
    n1: int
    n2: int


def _tree(model: Model) -> _Tree:
    cached = model._svi_tree
    if cached is not None:
        return cached
    require_supported(model, "the SVI and its kernels")
    n = model.njoints
    parents = np.array(model.parents, dtype=np.int64)
    if np.any(parents >= np.arange(n)):
        raise ValueError("the joints must be ordered parents first")
    depth = np.zeros(n, dtype=np.int64)
    for i in range(n):
        depth[i] = 1 + (depth[parents[i]] if parents[i] >= 0 else 0)
    off1 = np.concatenate([[0], np.cumsum(depth)]).astype(np.int64)
    off2 = np.concatenate([[0], np.cumsum(depth * (depth + 1) // 2)]).astype(np.int64)
    anc = np.empty(off1[-1], dtype=np.int64)
    for i in range(n):
        if parents[i] >= 0:
            k = parents[i]
            anc[off1[i]:off1[i] + depth[i] - 1] = anc[off1[k]:off1[k] + depth[k]]
        anc[off1[i] + depth[i] - 1] = i
    pseudo = np.zeros((n, 4, 4))
    for i in range(n):
        G = np.asarray(model.inertias[i])
        I_o, m = G[:3, :3], float(model.masses[i])
        pseudo[i, :3, :3] = 0.5 * np.trace(I_o) * np.eye(3) - I_o
        pseudo[i, :3, 3] = pseudo[i, 3, :3] = model.first_moments[i]
        pseudo[i, 3, 3] = m
    springs = joint_springs(model)
    P = np.array([jm.placement for jm in model.joints]).reshape(-1, 4, 4)
    tree = _Tree(parents, np.array([0 if jm.type == "revolute" else 1 for jm in model.joints],
                                   dtype=np.int64),
                 np.array([jm.axis for jm in model.joints], dtype=float).reshape(-1, 3),
                 np.ascontiguousarray(P[:, :3, :3]), np.ascontiguousarray(P[:, :3, 3]), pseudo,
                 np.array(model.gravity, dtype=float), np.array(springs.stiffness, dtype=float),
                 np.array(springs.damping, dtype=float), np.array(springs.rest, dtype=float),
                 depth, off1, off2, anc, int(off1[-1]), int(off2[-1]))
    model._svi_tree = tree
    return tree


def cache_sizes(model: Model) -> tuple[int, int]:
    """Number of cached 3×4 blocks per frame-derivative array: first derivatives
    (``Σ depth_i``, O(n²) for a chain) and second derivatives (``Σ depth_i (depth_i + 1)/2``,
    O(n³)).

    >>> from dynamics import models
    >>> cache_sizes(Model(models.pendulum(10)))
    (55, 220)
    """
    t = _tree(model)
    return t.n1, t.n2


# -- compiled kernels -----------------------------------------------------------------------------
@njit(cache=True)
def _local(jtype, axis, PR, Pp, qi, R, p):
    """``X_i(q_i) = P_i exp(Ŝ_i q_i)`` as ``(R, p)``."""
    if jtype == 0:
        x, y, z = axis[0], axis[1], axis[2]
        s, c = math.sin(qi), math.cos(qi)
        C = 1.0 - c
        r = np.empty((3, 3))
        r[0, 0], r[0, 1], r[0, 2] = c + x * x * C, x * y * C - z * s, x * z * C + y * s
        r[1, 0], r[1, 1], r[1, 2] = y * x * C + z * s, c + y * y * C, y * z * C - x * s
        r[2, 0], r[2, 1], r[2, 2] = z * x * C - y * s, z * y * C + x * s, c + z * z * C
        for a in range(3):
            for b in range(3):
                R[a, b] = PR[a, 0] * r[0, b] + PR[a, 1] * r[1, b] + PR[a, 2] * r[2, b]
            p[a] = Pp[a]
    else:
        for a in range(3):
            for b in range(3):
                R[a, b] = PR[a, b]
            p[a] = Pp[a] + qi * (PR[a, 0] * axis[0] + PR[a, 1] * axis[1] + PR[a, 2] * axis[2])


@njit(cache=True)
def _mul_X(A, R, p, out):
    """``out = A X`` for 3×4 top rows ``A`` and ``X = [[R, p], [0, 1]]``."""
    for r in range(3):
        a0, a1, a2 = A[r, 0], A[r, 1], A[r, 2]
        out[r, 0] = a0 * R[0, 0] + a1 * R[1, 0] + a2 * R[2, 0]
        out[r, 1] = a0 * R[0, 1] + a1 * R[1, 1] + a2 * R[2, 1]
        out[r, 2] = a0 * R[0, 2] + a1 * R[1, 2] + a2 * R[2, 2]
        out[r, 3] = a0 * p[0] + a1 * p[1] + a2 * p[2] + A[r, 3]


@njit(cache=True)
def _add_S(A, jtype, axis, scale, out):
    """``out += scale · A Ŝ`` (``Ŝ = [[ŵ, 0], [0, 0]]`` revolute, ``[[0, u], [0, 0]]``
    prismatic, in the joint frame)."""
    x, y, z = axis[0], axis[1], axis[2]
    for r in range(3):
        a0, a1, a2 = A[r, 0], A[r, 1], A[r, 2]
        if jtype == 0:              # A[:, :3] @ skew(axis)
            out[r, 0] += scale * (a1 * z - a2 * y)
            out[r, 1] += scale * (a2 * x - a0 * z)
            out[r, 2] += scale * (a0 * y - a1 * x)
        else:
            out[r, 3] += scale * (a0 * x + a1 * y + a2 * z)


@njit(cache=True)
def _set_S(A, jtype, axis, out):
    out[:, :] = 0.0
    _add_S(A, jtype, axis, 1.0, out)


@njit(cache=True)
def _cache1(parent, jtype, axis, PR, Pp, depth, off1, q, v, Rl, pl, g, gd, G1, Gd1):
    """Frames ``g_i``, velocities ``ġ_i`` and their first derivatives by the ancestors'
    coordinates (module docstring), parents first: O(Σ depth_i)."""
    n = q.shape[0]
    for i in range(n):
        _local(jtype[i], axis[i], PR[i], Pp[i], q[i], Rl[i], pl[i])
        k = parent[i]
        d = depth[i]
        o = off1[i]
        if k >= 0:
            _mul_X(g[k], Rl[i], pl[i], g[i])
            _mul_X(gd[k], Rl[i], pl[i], gd[i])
            ok = off1[k]
            for a in range(d - 1):
                _mul_X(G1[ok + a], Rl[i], pl[i], G1[o + a])
                _mul_X(Gd1[ok + a], Rl[i], pl[i], Gd1[o + a])
                _add_S(G1[o + a], jtype[i], axis[i], v[i], Gd1[o + a])
        else:
            g[i, :, :3] = Rl[i]
            g[i, :, 3] = pl[i]
            gd[i, :, :] = 0.0
        _set_S(g[i], jtype[i], axis[i], G1[o + d - 1])
        for r in range(3):
            for c in range(4):
                gd[i, r, c] += v[i] * G1[o + d - 1, r, c]
        _set_S(gd[i], jtype[i], axis[i], Gd1[o + d - 1])


@njit(cache=True)
def _cache2(parent, jtype, axis, depth, off1, off2, v, Rl, pl, G1, Gd1, G2, Gd2):
    """Second derivatives of the frames and of their velocities (pairs ``a ≤ b`` of
    ancestors, index ``b (b + 1)/2 + a``), after :func:`_cache1`: O(Σ depth_i²)."""
    n = v.shape[0]
    for i in range(n):
        k = parent[i]
        d = depth[i]
        o1, o2 = off1[i], off2[i]
        if k >= 0:
            ok = off2[k]
            for t in range((d - 1) * d // 2):       # pairs of strict ancestors
                _mul_X(G2[ok + t], Rl[i], pl[i], G2[o2 + t])
                _mul_X(Gd2[ok + t], Rl[i], pl[i], Gd2[o2 + t])
                _add_S(G2[o2 + t], jtype[i], axis[i], v[i], Gd2[o2 + t])
        b = d - 1
        for a in range(d):
            t = o2 + b * (b + 1) // 2 + a
            _set_S(G1[o1 + a], jtype[i], axis[i], G2[t])
            _set_S(Gd1[o1 + a], jtype[i], axis[i], Gd2[t])


@njit(cache=True)
def _inner(A, B):
    s = 0.0
    for r in range(3):
        for c in range(4):
            s += A[r, c] * B[r, c]
    return s


@njit(cache=True)
def _times_pseudo(A, Mp, out):
    """``out = A 𝕄`` (3×4 times 4×4)."""
    for r in range(3):
        for c in range(4):
            out[r, c] = A[r, 0] * Mp[0, c] + A[r, 1] * Mp[1, c] + A[r, 2] * Mp[2, c] \
                + A[r, 3] * Mp[3, c]


@njit(cache=True)
def _grav(A, Mp, gvec):
    """``gᵀ (A 𝕄 e₄)``: the gravity work of a frame derivative ``A``."""
    s = 0.0
    for r in range(3):
        s += gvec[r] * (A[r, 0] * Mp[0, 3] + A[r, 1] * Mp[1, 3] + A[r, 2] * Mp[2, 3]
                        + A[r, 3] * Mp[3, 3])
    return s


@njit(cache=True)
def _first(depth, off1, anc, pseudo, gvec, stiffness, rest, q, gd, G1, Gd1, W, Lq, Lv):
    """``∂L/∂q`` and ``∂L/∂v`` from the first-order caches: O(Σ depth_i)."""
    n = q.shape[0]
    for j in range(n):
        Lq[j] = -stiffness[j] * (q[j] - rest[j])
        Lv[j] = 0.0
    for i in range(n):
        _times_pseudo(gd[i], pseudo[i], W[i])
        o = off1[i]
        for a in range(depth[i]):
            j = anc[o + a]
            Lv[j] += _inner(G1[o + a], W[i])
            Lq[j] += _inner(Gd1[o + a], W[i]) + _grav(G1[o + a], pseudo[i], gvec)


@njit(cache=True)
def _mass(depth, off1, anc, pseudo, G1, U, M):
    """``M = ∂²L/∂v²`` from the first-order caches: O(Σ depth_i²)."""
    M[:, :] = 0.0
    for i in range(depth.shape[0]):
        o, d = off1[i], depth[i]
        for b in range(d):
            _times_pseudo(G1[o + b], pseudo[i], U[b])
        for b in range(d):
            lb = anc[o + b]
            for a in range(b + 1):
                la = anc[o + a]
                m = _inner(G1[o + a], U[b])
                M[la, lb] += m
                if a != b:
                    M[lb, la] += m


@njit(cache=True)
def _second(depth, off1, off2, anc, pseudo, gvec, stiffness, G1, Gd1, G2, Gd2, W, U, Ud, M,
            Lvq, Lqq):
    """``M``, ``L_vq`` (row ``v``, column ``q``) and ``L_qq`` from both caches (``W`` from
    :func:`_first`): O(Σ depth_i²)."""
    n = depth.shape[0]
    M[:, :] = 0.0
    Lvq[:, :] = 0.0
    Lqq[:, :] = 0.0
    for j in range(n):
        Lqq[j, j] = -stiffness[j]
    for i in range(n):
        o1, o2, d = off1[i], off2[i], depth[i]
        Mp = pseudo[i]
        for b in range(d):
            _times_pseudo(G1[o1 + b], Mp, U[b])
            _times_pseudo(Gd1[o1 + b], Mp, Ud[b])
        for b in range(d):
            lb = anc[o1 + b]
            for a in range(b + 1):
                la = anc[o1 + a]
                t = o2 + b * (b + 1) // 2 + a
                m = _inner(G1[o1 + a], U[b])
                h2 = _inner(G2[t], W[i])
                hq = _inner(Gd2[t], W[i]) + _inner(Gd1[o1 + a], Ud[b]) + _grav(G2[t], Mp, gvec)
                M[la, lb] += m
                Lvq[la, lb] += h2 + _inner(G1[o1 + a], Ud[b])
                Lqq[la, lb] += hq
                if a != b:
                    M[lb, la] += m
                    Lvq[lb, la] += h2 + _inner(G1[o1 + b], Ud[a])
                    Lqq[lb, la] += hq


@njit(cache=True)
def _potential(depth, g, pseudo, gvec, stiffness, rest, q):
    total = 0.0
    for i in range(q.shape[0]):
        total -= _grav(g[i], pseudo[i], gvec)
        total += 0.5 * stiffness[i] * (q[i] - rest[i]) ** 2
    return total


class _Work:
    """Work arrays of the kernels for one tree."""

    def __init__(self, t: _Tree):
        n = t.parent.shape[0]
        dmax = int(t.depth.max()) if n else 0
        self.Rl, self.pl = np.empty((n, 3, 3)), np.empty((n, 3))
        self.g, self.gd, self.W = np.empty((n, 3, 4)), np.empty((n, 3, 4)), np.empty((n, 3, 4))
        self.G1, self.Gd1 = np.empty((t.n1, 3, 4)), np.empty((t.n1, 3, 4))
        self.G2, self.Gd2 = np.empty((t.n2, 3, 4)), np.empty((t.n2, 3, 4))
        self.U, self.Ud = np.empty((dmax, 3, 4)), np.empty((dmax, 3, 4))
        self.Lq, self.Lv = np.empty(n), np.empty(n)
        self.M, self.Lvq, self.Lqq = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))


@njit(cache=True)
def _evaluate(parent, jtype, axis, PR, Pp, pseudo, gvec, stiffness, damping, rest, depth, off1,
              anc, q, p, x, tau, dt, Rl, pl, g, gd, G1, Gd1, W, Lq, Lv, R):
    """DEL residual ``R`` at ``q_{k+1} = x``; leaves the first-order caches of the midpoint
    and ``∂L/∂q``, ``∂L/∂v`` there."""
    qm = 0.5 * (q + x)
    vm = (x - q) / dt
    _cache1(parent, jtype, axis, PR, Pp, depth, off1, qm, vm, Rl, pl, g, gd, G1, Gd1)
    _first(depth, off1, anc, pseudo, gvec, stiffness, rest, qm, gd, G1, Gd1, W, Lq, Lv)
    for j in range(q.shape[0]):
        R[j] = p[j] + 0.5 * dt * (Lq[j] + tau[j] - damping[j] * vm[j]) - Lv[j]


@njit(cache=True)
def _jacobian(parent, jtype, axis, depth, off1, off2, anc, pseudo, gvec, stiffness, damping, q,
              x, dt, Rl, pl, G1, Gd1, G2, Gd2, W, U, Ud, M, Lvq, Lqq, J):
    """``∂R/∂q_{k+1}`` after :func:`_evaluate` at the same ``x``."""
    vm = (x - q) / dt
    _cache2(parent, jtype, axis, depth, off1, off2, vm, Rl, pl, G1, Gd1, G2, Gd2)
    _second(depth, off1, off2, anc, pseudo, gvec, stiffness, G1, Gd1, G2, Gd2, W, U, Ud, M, Lvq,
            Lqq)
    n = q.shape[0]
    for a in range(n):
        for b in range(n):
            J[a, b] = 0.25 * dt * Lqq[a, b] + 0.5 * (Lvq[b, a] - Lvq[a, b]) - M[a, b] / dt
        J[a, a] -= 0.5 * damping[a]


@njit(cache=True)
def _simulate(parent, jtype, axis, PR, Pp, pseudo, gvec, stiffness, damping, rest, depth, off1,
              off2, anc, q0, p0, v0, dt, steps, tol, max_iter, weights, guess, tau_k, Rl, pl, g,
              gd, G1, Gd1, G2, Gd2, W, U, Ud, Lq, Lv, M, Lvq, Lqq, Q, P, iters, resid):
    """The stepping loop; returns ``(status, step, last residual)``: status 0 ok, 1 max_iter,
    2 non-finite residual."""
    n = q0.shape[0]
    R = np.empty(n)
    J = np.empty((n, n))
    q, p = q0.copy(), p0.copy()
    delta = dt * v0
    Q[0], P[0] = q, p
    for k in range(steps):
        x = q.copy() if guess == 0 else q + delta
        tau = tau_k[k]
        _evaluate(parent, jtype, axis, PR, Pp, pseudo, gvec, stiffness, damping, rest, depth,
                  off1, anc, q, p, x, tau, dt, Rl, pl, g, gd, G1, Gd1, W, Lq, Lv, R)
        it = 0
        while True:
            err = 0.0
            for j in range(n):
                err = max(err, abs(R[j]) * weights[j])
            if not np.isfinite(err):
                iters[k] = it
                return 2, k, err
            if err <= tol:
                break
            if it == max_iter:
                iters[k] = it
                return 1, k, err
            _jacobian(parent, jtype, axis, depth, off1, off2, anc, pseudo, gvec, stiffness,
                      damping, q, x, dt, Rl, pl, G1, Gd1, G2, Gd2, W, U, Ud, M, Lvq, Lqq, J)
            x = x - np.linalg.solve(J, R)
            _evaluate(parent, jtype, axis, PR, Pp, pseudo, gvec, stiffness, damping, rest,
                      depth, off1, anc, q, p, x, tau, dt, Rl, pl, g, gd, G1, Gd1, W, Lq, Lv, R)
            it += 1
        iters[k], resid[k] = it, err
        vm = (x - q) / dt
        for j in range(n):
            p[j] = 0.5 * dt * (Lq[j] + tau[j] - damping[j] * vm[j]) + Lv[j]
        delta = x - q
        q = x
        Q[k + 1], P[k + 1] = q, p
    return 0, steps, 0.0


@njit(cache=True)
def _velocities(parent, jtype, axis, PR, Pp, pseudo, gvec, stiffness, rest, depth, off1, anc, Q,
                P, Rl, pl, g, gd, G1, Gd1, U, M, V, E):
    """``v_k = M(q_k)⁻¹ p_k`` and the energy of every stored state."""
    n = Q.shape[1]
    zero = np.zeros(n)
    for k in range(Q.shape[0]):
        _cache1(parent, jtype, axis, PR, Pp, depth, off1, Q[k], zero, Rl, pl, g, gd, G1, Gd1)
        _mass(depth, off1, anc, pseudo, G1, U, M)
        V[k] = np.linalg.solve(M, P[k])
        E[k] = 0.5 * (V[k] @ P[k]) + _potential(depth, g, pseudo, gvec, stiffness, rest, Q[k])


# -- public wrappers ------------------------------------------------------------------------------
def lagrangian_derivatives(model: Model, q, v, hessians: bool = False) -> dict:
    """``∂L/∂q``, ``∂L/∂v`` and, with ``hessians``, ``M``, ``L_vq`` (row ``v``, column ``q``)
    and ``L_qq`` by the cached frame recursions of the module docstring.

    Examples
    --------
    >>> from dynamics import models
    >>> from dynamics.minimal import crba
    >>> model = Model(models.pendulum(3))
    >>> q, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -0.3])
    >>> d = lagrangian_derivatives(model, q, v, hessians=True)
    >>> bool(np.allclose(d["M"], crba(model, model.create_data(), q)))
    True
    """
    t = _tree(model)
    q = as_vector(q, model.nv, "q", "model.nv")
    v = as_vector(v, model.nv, "v", "model.nv")
    w = _Work(t)
    _cache1(t.parent, t.jtype, t.axis, t.PR, t.Pp, t.depth, t.off1, q, v, w.Rl, w.pl, w.g, w.gd,
            w.G1, w.Gd1)
    _first(t.depth, t.off1, t.anc, t.pseudo, t.gvec, t.stiffness, t.rest, q, w.gd, w.G1, w.Gd1,
           w.W, w.Lq, w.Lv)
    out = {"L_q": w.Lq.copy(), "L_v": w.Lv.copy()}
    if hessians:
        _cache2(t.parent, t.jtype, t.axis, t.depth, t.off1, t.off2, v, w.Rl, w.pl, w.G1, w.Gd1,
                w.G2, w.Gd2)
        _second(t.depth, t.off1, t.off2, t.anc, t.pseudo, t.gvec, t.stiffness, w.G1, w.Gd1,
                w.G2, w.Gd2, w.W, w.U, w.Ud, w.M, w.Lvq, w.Lqq)
        out.update(M=w.M.copy(), L_vq=w.Lvq.copy(), L_qq=w.Lqq.copy())
    return out


def _step_args(model, q, p, q_next, tau):
    t = _tree(model)
    n = model.nv
    q = as_vector(q, n, "q", "model.nv")
    p = as_vector(p, n, "p", "model.nv")
    x = as_vector(q_next, n, "q_next", "model.nv")
    tau = np.zeros(n) if tau is None else as_vector(tau, n, "tau", "model.nv")
    return t, q, p, x, tau, _Work(t)


def _residual_into(t, w, q, p, x, tau, dt, R):
    _evaluate(t.parent, t.jtype, t.axis, t.PR, t.Pp, t.pseudo, t.gvec, t.stiffness, t.damping,
              t.rest, t.depth, t.off1, t.anc, q, p, x, tau, float(dt), w.Rl, w.pl, w.g, w.gd,
              w.G1, w.Gd1, w.W, w.Lq, w.Lv, R)


def svi_residual(model: Model, q, p, q_next, dt: float, tau=None) -> np.ndarray:
    """DEL residual ``R = p_k + D₁L_d(q_k, q_{k+1}) + Δt/2 F`` (N m s) of the module docstring.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(2))
    >>> bool(np.allclose(svi_residual(model, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], 0.01), 0.0))
    True
    """
    t, q, p, x, tau, w = _step_args(model, q, p, q_next, tau)
    R = np.empty(model.nv)
    _residual_into(t, w, q, p, x, tau, dt, R)
    return R


def svi_jacobian(model: Model, q, p, q_next, dt: float, tau=None) -> np.ndarray:
    """``∂R/∂q_{k+1}`` (nv, nv) by the second-order frame caches (module docstring)."""
    t, q, p, x, tau, w = _step_args(model, q, p, q_next, tau)
    R, J = np.empty(model.nv), np.empty((model.nv, model.nv))
    _residual_into(t, w, q, p, x, tau, dt, R)
    _jacobian(t.parent, t.jtype, t.axis, t.depth, t.off1, t.off2, t.anc, t.pseudo, t.gvec,
              t.stiffness, t.damping, q, x, float(dt), w.Rl, w.pl, w.G1, w.Gd1, w.G2, w.Gd2, w.W,
              w.U, w.Ud, w.M, w.Lvq, w.Lqq, J)
    return J


def svi_momentum(model: Model, q, p, q_next, dt: float, tau=None) -> np.ndarray:
    """``p_{k+1} = D₂L_d(q_k, q_{k+1}) + Δt/2 F`` (discrete Legendre transform)."""
    t, q, p, x, tau, w = _step_args(model, q, p, q_next, tau)
    _residual_into(t, w, q, p, x, tau, dt, np.empty(model.nv))
    vm = (x - q) / dt
    return 0.5 * dt * (w.Lq + tau - t.damping * vm) + w.Lv


def simulate_svi(model: Model, q0, v0, dt: float, steps: int, *, tol: float = 1e-10,
                 max_iter: int = 50, norm: str = "scaled", initial_guess: str = "ig2",
                 tau=None, raise_on_failure: bool = False) -> SVIResult:
    """Simulate ``steps`` steps of Johnson & Murphey's structured variational integrator
    (midpoint discrete Lagrangian, Newton with the cached-recursion Jacobian; module
    docstring).

    Parameters
    ----------
    model : Model
        Revolute and prismatic joints only.
    q0, v0 : (nv,) arrays
        Initial state; ``p_0 = M(q_0) v_0``.
    dt : float
    steps : int
    tol : float
        Newton tolerance on the convergence measure ``norm``.
    max_iter : int
        Newton updates per step before the run is declared failed.
    norm : {"scaled", "impulse", "force"}
        ``"scaled"``: ``max_i |R_i| Δt / M_ii(q_0)`` (rad, m), Lee et al.'s measure.
    initial_guess : {"ig2", "ig1"}
        ``q_k + (q_k - q_{k-1})`` or ``q_k``.
    tau : (nv,) or (steps, nv) array, optional
        Joint forces besides springs and dampers, constant or held over each step.
    raise_on_failure : bool
        Raise :class:`SVIFailure` instead of returning a result with ``failed``.

    Returns
    -------
    SVIResult
        Truncated at the failing step when ``failed``.

    Raises
    ------
    ValueError
        Unsupported joints, unknown norm or initial guess, wrong lengths.
    SVIFailure
        Only with ``raise_on_failure``.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(2))
    >>> res = simulate_svi(model, [1.0, 0.0], [0.0, 0.0], 1e-2, 100)
    >>> res.failed, int(res.iterations.max()) <= 4, bool(np.ptp(res.energy) < 1e-2)
    (False, True, True)
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if initial_guess not in INITIAL_GUESSES:
        raise ValueError(f"initial_guess must be one of {INITIAL_GUESSES}, got "
                         f"{initial_guess!r}")
    check_newton(tol, max_iter)
    t = _tree(model)
    steps, q0, v0 = check_run(model, q0, v0, dt, steps)
    n = model.nv
    tau_k = step_forces(tau, steps, n)
    w = _Work(t)
    args = (t.parent, t.jtype, t.axis, t.PR, t.Pp, t.pseudo, t.gvec, t.stiffness, t.rest,
            t.depth, t.off1, t.anc)
    M0 = np.empty((n, n))
    _velocities(*args, q0[None, :], np.zeros((1, n)), w.Rl, w.pl, w.g, w.gd, w.G1, w.Gd1, w.U,
                M0, np.empty((1, n)), np.empty(1))
    p0 = M0 @ v0
    weights = {"scaled": dt / np.diag(M0), "impulse": np.ones(n),
               "force": np.full(n, 1.0 / dt)}[norm]
    Q, P = np.empty((steps + 1, n)), np.empty((steps + 1, n))
    iters, resid = np.zeros(steps, dtype=np.int64), np.zeros(steps)
    start = time.perf_counter()
    status, done, err = _simulate(
        t.parent, t.jtype, t.axis, t.PR, t.Pp, t.pseudo, t.gvec, t.stiffness, t.damping, t.rest,
        t.depth, t.off1, t.off2, t.anc, q0, p0, v0, float(dt), steps, float(tol), int(max_iter),
        weights, 0 if initial_guess == "ig1" else 1, tau_k, w.Rl, w.pl, w.g, w.gd, w.G1, w.Gd1,
        w.G2, w.Gd2, w.W, w.U, w.Ud, w.Lq, w.Lv, w.M, w.Lvq, w.Lqq, Q, P, iters, resid)
    seconds = time.perf_counter() - start
    status, done = int(status), int(done)
    Q, P = Q[:done + 1], P[:done + 1]
    V, E = np.empty_like(Q), np.empty(done + 1)
    _velocities(*args, Q, P, w.Rl, w.pl, w.g, w.gd, w.G1, w.Gd1, w.U, w.M, V, E)
    reason = ""
    if status:
        reason = (f"step {done} (t = {done * dt:g} s): {_FAILURE[status]} after "
                  f"{int(iters[done])} Newton updates, {norm} residual {err:.3g} > tol {tol:g}")
    res = SVIResult(dt * np.arange(done + 1), Q, V, P, E, iters[:done], resid[:done],
                    bool(status), done if status else None, reason, seconds, "svi")
    if status and raise_on_failure:
        raise SVIFailure(f"svi: {reason}", res)
    return res
