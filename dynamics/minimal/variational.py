"""The linear-time variational integrator of Lee, Liu, Park & Srinivasa (2016) on SE(3).

Discrete mechanics
------------------
Every link ``i`` has the discrete Lagrangian of eq. (9)-(10),
``L_d = Δt ½ V_iᵀ G_i V_i - Δt/2 (P(q_k) + P(q_{k+1}))`` with the average twist
``V_i = log(ΔT_i)/Δt`` of its displacement ``ΔT_i = T_i(q_k)⁻¹ T_i(q_{k+1})`` (eq. 19, link
frame, ``(w; v)``). Its variation uses the right-trivialized ``dlog`` of eq. (11)-(14), so the
discrete momentum of a link is ``μ_i = dlog(Δt V_i)ᵀ G_i V_i`` (eq. 21b) and the forced discrete
Euler-Lagrange (DEL) equation of the tree (eq. 21a-22) is, in joint coordinates,

    f(q_{k+1}) = -D₁L_d(q_k, q_{k+1}) - F⁻_k - p_k = 0,
    p_{k+1}    =  D₂L_d(q_k, q_{k+1}) + F⁺_k                    (discrete Legendre transform)

with ``-D₁L_d = Jᵀ(μ - Δt/2 F_grav) + Δt/2 ∇P_spring(q_k)`` and
``D₂L_d = J(q_{k+1})ᵀ(Ad(ΔT)ᵀ μ + Δt/2 F_grav(q_{k+1})) - Δt/2 ∇P_spring(q_{k+1})``, where
``Jᵀ`` is the backward pass ``F_i = W_i + Σ_c X_cᵀ F_c``, ``f_i = S_iᵀ F_i`` at time ``k``.
Gravity and joint springs are potentials (trapezoidal rule, so the scheme is symplectic);
joint forces ``τ_k`` (controller) enter as ``F⁻_k = Δt τ_k``, dampers ``-d v`` as
``F⁻_k = F⁺_k = -d/2 (q_{k+1} ⊖ q_k)`` (discrete Lagrange-d'Alembert). ``p_0 = M(q_0) v_0``.
:func:`drnea` is Algorithm 2 in the paper's three-configuration form (``μ_{k-1}`` body terms
instead of ``p_k``); the solvers use the momentum form above, which needs no ``q_{-1}`` and is
algebraically the same (a test checks it).

Root finders (``solver``)
-------------------------
``"riqn"``
    Algorithm 3: ``q ← q ⊖ Δt M(q_k)⁻¹ f`` with ``Δt M⁻¹ f`` from the impulse-based ABA
    (:func:`impulse_aba`: ``aba`` with ``v = 0``, no gravity, ``τ = Δt f``). O(n) per iteration.
``"newton"``
    Newton with the DEL Jacobian ``∂f/∂δ`` at ``q_{k+1} ⊕ δ`` (Algorithm 1). By default
    (``jacobian="analytic"``) it is the appendix's derivative of DRNEA (Algorithm 4,
    :func:`del_jacobian`, O(n²)); ``jacobian="fd"`` keeps the first version, a central finite
    difference of the residual (``2 nv`` O(n) residual evaluations with steps ``q ⊕ ±h e_j``,
    ``h = 1e-6``, relative error ≈ 1e-10). The dense solve is O(n³).
``"broyden"``
    Broyden's ("good") method in inverse form, started from ``H_0 = Δt M(q_k)⁻¹`` (CRBA and a
    dense inverse) with Sherman-Morrison updates: O(n²) per iteration, O(n³) per step.

Updates use ``q ⊕ δ`` (:func:`~dynamics.minimal.configuration.integrate`), so revolute,
prismatic, spherical (quaternion or rotation vector), floating and planar joints are all
supported (the original code supports revolute and prismatic joints only).

Analytic DEL Jacobian (Appendix, Algorithm 4)
---------------------------------------------
Only ``μ_i`` and the damper term depend on ``q_{k+1}`` (the backward pass uses ``X(q_k)``).
Every joint type moves by a right translation, ``T_{λ,j}(q ⊕ δ) = T_{λ,j}(q) exp([S_j δ_j])``,
so ``ΔT_i(q_{k+1} ⊕ δ) = ΔT_i exp([η_i])`` with ``η_i = J_i(q_{k+1}) δ`` (the body Jacobian of
link ``i`` at ``q_{k+1}``, Alg. 4 lines 3-4) and ``∂ξ_i = dlog(-ξ_i) η_i`` (line 5, left-
trivialized). With ``y_i = G_i ξ_i/Δt``, line 8 is
``∂μ_i = Z_i η_i``, ``Z_i = (K(ξ_i, y_i) + dlog(ξ_i)ᵀ G_i/Δt) dlog(-ξ_i)``, where
``K(ξ, y) = ∂(dlog(ξ)ᵀ y)/∂ξ`` (:func:`dlog_transpose_jacobian`), and lines 9-10 are the
backward pass: ``∂f/∂δ = Σ_i J_i(q_k)ᵀ Z_i J_i(q_{k+1}) + ½ diag(d) ∂(q_k ⊖ q_{k+1})/∂δ``.
``K`` is in closed form: ``dlog = [[A, 0], [C, A]]`` with ``A = J(w)⁻¹`` and
``C = DA(w)[v]`` (the lower block of ``ad_ξ^k`` is the derivative of ``ŵ^k`` along ``v̂``), so
with ``g(w, y) = Aᵀ y = y + ½ w × y + d(θ²) w × (w × y)`` and ``G₁ = ∂g/∂w``,
``dlog(ξ)ᵀ y = (g(w, y_w) + G₁(w, y_v) v; g(w, y_v))`` and

    K = [[G₁(w, y_w) + DG₁(w, y_v)[v], G₁(w, y_v)], [G₁(w, y_v), 0]],

which needs ``d(t) = (1 - (θ/2)cot(θ/2))/θ²`` and its first two derivatives in ``t = θ²``
(Bernoulli series below ``θ = 1``, in :mod:`~dynamics.minimal.spatial`). Cost: O(n·depth)
≤ O(n²) per Jacobian, as the paper's Algorithm 4; every joint type of the residual is supported
(no finite-difference fallback).

Initial guesses (``initial_guess``, §3.3): ``"ig1"`` ``q_k``; ``"ig2"`` ``q_k ⊕ (q_k ⊖ q_{k-1})``;
``"ig3"`` (default) semi-implicit Euler with ``v ≈ (q_k ⊖ q_{k-1})/Δt`` and the ABA
acceleration. At the first step ``q_k ⊖ q_{k-1}`` is replaced by ``Δt v_0``.

Convergence: ``|f_i| ≤ tol · M_ii(q_0)/Δt`` for every entry, i.e. the residual impulse would
move each joint by at most ``tol`` (rad or m) through its own inertia; this scaling keeps the
test meaningful from 2 to 100 links. A step that does not converge in ``max_iter`` iterations
raises :class:`ConvergenceError`.

References
----------
J. Lee, C. K. Liu, F. C. Park, S. S. Srinivasa, "A linear-time variational integrator for
multibody systems", WAFR 2016: eq. 9-22, Algorithms 1-3, §3.3, Appendix (Algorithm 4).
J. E. Marsden, M. West, "Discrete mechanics and variational integrators", Acta Numerica 2001,
§3.2 (forced DEL, discrete Legendre transforms).
C. G. Broyden, Math. Comp. 19 (1965).
"""
from __future__ import annotations

import time

import numpy as np

from . import spatial as sp
from .algorithms import _placements, aba, crba
from .configuration import as_vector, check_configuration, check_run, difference, integrate
from .forces import joint_forces, joint_springs, total_energy
from .model import Data, Model
from .results import ConvergenceError, SimulationResult, StepResult, convergence_advice
from .spatial import _d_and_derivatives

__all__ = ["SOLVERS", "INITIAL_GUESSES", "JACOBIANS", "ConvergenceError", "StepResult", "drnea",
           "discrete_momentum", "del_residual", "del_jacobian", "del_jacobian_fd",
           "dlog_transpose_jacobian", "impulse_aba", "variational_step", "simulate_variational",
           "convergence_weights"]

SOLVERS = ("riqn", "newton", "broyden")
INITIAL_GUESSES = ("ig1", "ig2", "ig3")
#: DEL Jacobians of the Newton solver: Algorithm 4 or central finite differences.
JACOBIANS = ("analytic", "fd")
#: Finite-difference step of the Newton Jacobian (configuration units).
FD_STEP = 1e-6
#: Backends of :func:`simulate_variational` and :func:`~dynamics.minimal.integrators.simulate`:
#: ``"reference"`` (NumPy), ``"compiled"`` (numba: :mod:`~dynamics.minimal.tree_kernels` for
#: revolute / prismatic trees, :mod:`~dynamics.minimal.multi_dof_kernels` and
#: :mod:`~dynamics.minimal.multi_dof_variational` with every built-in joint) or ``"auto"``
#: (compiled when the model allows it).
BACKENDS = ("reference", "compiled", "auto")


# -- the recursive passes ----------------------------------------------------------------------
class _Frames:
    """Link placements ``T_{λ(i),i}(q)``, their ``X = Ad⁻¹`` and gravity impulses at one ``q``."""

    def __init__(self, model: Model, data: Data, q: np.ndarray):
        _placements(model, data, q)
        self.T = data.T_parent_link.copy()
        self.X = data.X_link_parent.copy()
        self.T_inv = np.array([sp.inverse(T) for T in self.T])
        g_world = np.concatenate([np.zeros(3), model.gravity])
        g = np.empty((model.njoints, 6))
        for i, p in enumerate(model.parents):
            g[i] = self.X[i] @ (g_world if p < 0 else g[p])
        #: gravity wrench on each link, link frame: ``G_i (0; R_iᵀ g)``
        self.F_grav = np.einsum("nij,nj->ni", model.inertias, g)


def _displacements(model: Model, frames_k: _Frames, T_next: np.ndarray, dt: float):
    """Alg. 2 lines 1-5: ``ΔT_i = T_{λ,i}(q_k)⁻¹ ΔT_λ T_{λ,i}(q_{k+1})``, ``V_i = log(ΔT_i)/Δt``
    and ``μ_i = dlog(Δt V_i)ᵀ G_i V_i`` (eq. 21b)."""
    n = model.njoints
    dT, V, mu = np.empty((n, 4, 4)), np.empty((n, 6)), np.empty((n, 6))
    for i, p in enumerate(model.parents):
        D = T_next[i] if p < 0 else dT[p] @ T_next[i]
        dT[i] = frames_k.T_inv[i] @ D
        xi = sp.log_se3(dT[i])
        V[i] = xi / dt
        mu[i] = sp.dlog(xi).T @ (model.inertias[i] @ V[i])
    return dT, V, mu


def _backward(model: Model, X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``F_i = W_i + Σ_c X_cᵀ F_c`` (leaves to root), ``f_i = S_iᵀ F_i``: ``Jᵀ W``."""
    F = np.array(W)
    f = np.empty(model.nv)
    for jm in reversed(model.joints):
        i, p = jm.index, jm.parent
        f[jm.v_slice] = jm.S.T @ F[i]
        if p >= 0:
            F[p] += X[i].T @ F[i]
    return f


def _placements_of(model: Model, data: Data, q: np.ndarray) -> np.ndarray:
    _placements(model, data, q)
    return data.T_parent_link.copy()


def _spring_gradient(model: Model, q: np.ndarray) -> np.ndarray:
    """``∇P_spring(q) = k (q ⊖ q_rest)``."""
    springs = joint_springs(model)
    if not np.any(springs.stiffness):
        return np.zeros(model.nv)
    return springs.stiffness * difference(model, springs.rest, q)


# -- derivative of dlog (Algorithm 4, line 8) ----------------------------------------------------
def _g_gradient(w, y, d, d1):
    """``G₁ = ∂g/∂w`` of ``g(w, y) = y + ½ w×y + d (s w - t y)``, ``s = w·y``, ``t = w·w``."""
    s, t = w @ y, w @ w
    return (-0.5 * sp.skew(y) + d * (np.outer(w, y) + s * np.eye(3) - 2.0 * np.outer(y, w))
            + 2.0 * d1 * np.outer(s * w - t * y, w))


def _g_hessian_along(w, y, v, d, d1, d2):
    """``DG₁(w, y)[v]``: the derivative of :func:`_g_gradient` in ``w`` along ``v``."""
    s, t, sv, tv = w @ y, w @ w, y @ v, 2.0 * (w @ v)
    r = s * w - t * y
    return (d1 * tv * (np.outer(w, y) + s * np.eye(3) - 2.0 * np.outer(y, w))
            + d * (np.outer(v, y) + sv * np.eye(3) - 2.0 * np.outer(y, v))
            + 2.0 * d2 * tv * np.outer(r, w)
            + 2.0 * d1 * (np.outer(sv * w + s * v - tv * y, w) + np.outer(r, v)))


def dlog_transpose_jacobian(xi, y) -> np.ndarray:
    """``K(ξ, y) = ∂(dlog(ξ)ᵀ y)/∂ξ`` (6×6, ``y`` held fixed), closed form.

    The term ``∂/∂q [dlog_{ΔtV}]ᵀ G V`` of Lee et al. (2016), Algorithm 4 line 8. With
    ``ξ = (w; v)``, ``dlog(ξ)ᵀ y = (g(w, y_w) + G₁(w, y_v) v; g(w, y_v))`` where
    ``g(w, y) = J(w)⁻ᵀ y`` and ``G₁ = ∂g/∂w`` (module docstring), so
    ``K = [[G₁(w, y_w) + DG₁(w, y_v)[v], G₁(w, y_v)], [G₁(w, y_v), 0]]``. Valid for rotation
    angles ``|w| < 2π``.

    Parameters
    ----------
    xi : (6,) array
        Twist ``(w; v)``.
    y : (6,) array
        Wrench ``(m; f)``.

    Examples
    --------
    >>> xi, y = np.array([0.3, -0.2, 0.5, 1.0, 0.4, -0.7]), np.arange(1.0, 7.0)
    >>> e = 1e-6 * np.eye(6)[2]
    >>> fd = (sp.dlog(xi + e).T @ y - sp.dlog(xi - e).T @ y) / 2e-6
    >>> bool(np.allclose(dlog_transpose_jacobian(xi, y)[:, 2], fd, atol=1e-8))
    True
    """
    xi, y = np.asarray(xi, dtype=float), np.asarray(y, dtype=float)
    w, v, yw, yv = xi[:3], xi[3:], y[:3], y[3:]
    d, d1, d2 = _d_and_derivatives(float(np.sqrt(w @ w)))
    Gv = _g_gradient(w, yv, d, d1)
    K = np.zeros((6, 6))
    K[:3, :3] = _g_gradient(w, yw, d, d1) + _g_hessian_along(w, yv, v, d, d1, d2)
    K[:3, 3:] = Gv
    K[3:, :3] = Gv
    return K


def _difference_jacobian(jm, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """``∂(q0 ⊖ (q1 ⊕ δ))/∂δ`` at ``δ = 0`` for one joint (right Jacobian inverse)."""
    if jm.type in ("revolute", "prismatic"):
        return np.eye(1)
    diff = jm.difference(q0, q1)
    if jm.type == "spherical":
        return sp.dlog_so3(-diff)
    if jm.type == "planar":                                  # SE(2) inside SE(3) through S
        S = jm.S
        return S.T @ sp.dlog(-S @ diff) @ S
    twist = np.concatenate([diff[3:], diff[:3]])            # floating: v = (linear; angular)
    return sp.swap_halves(sp.dlog(-twist))


class _StepProblem:
    """Everything of step ``k`` that does not depend on ``q_{k+1}``; ``residual(q_next)`` is the
    O(n) DRNEA evaluation of ``f`` (momentum form), ``jacobian(q_next)`` its derivative
    (Algorithm 4)."""

    def __init__(self, model, data, q, p, dt, tau):
        self.model, self.data, self.q, self.dt = model, data, q, dt
        self.frames = _Frames(model, data, q)
        self.W_const = -0.5 * dt * self.frames.F_grav
        self.c = 0.5 * dt * _spring_gradient(model, q) - p - dt * tau
        self.half_damping = 0.5 * joint_springs(model).damping
        self.damped = bool(np.any(self.half_damping))

    def residual(self, q_next: np.ndarray, keep: bool = False):
        T_next = _placements_of(self.model, self.data, q_next)
        dT, V, mu = _displacements(self.model, self.frames, T_next, self.dt)
        f = _backward(self.model, self.frames.X, mu + self.W_const) + self.c
        if self.damped:
            f += self.half_damping * difference(self.model, self.q, q_next)
        return (f, dT, mu) if keep else f

    def jacobian(self, q_next: np.ndarray) -> np.ndarray:
        """``∂f/∂δ`` at ``q_next ⊕ δ``, ``δ = 0`` (Algorithm 4; module docstring), (nv, nv)."""
        model, dt = self.model, self.dt
        _placements(model, self.data, q_next)
        T_next, X_next = self.data.T_parent_link.copy(), self.data.X_link_parent.copy()
        dT, _, _ = _displacements(model, self.frames, T_next, dt)
        nv = model.nv
        C = np.zeros((model.njoints, 6, nv))      # body Jacobians J_i(q_{k+1}) (lines 3-4)
        F = np.empty((model.njoints, 6, nv))      # ∂F_i/∂δ (line 9)
        for jm in model.joints:
            i, p = jm.index, jm.parent
            if p >= 0:
                C[i] = X_next[i] @ C[p]
            C[i][:, jm.v_slice] = jm.S
            xi = sp.log_se3(dT[i])
            G = model.inertias[i]
            Z = (dlog_transpose_jacobian(xi, G @ xi / dt) + sp.dlog(xi).T @ G / dt) \
                @ sp.dlog(-xi)                                      # lines 5 and 8
            F[i] = Z @ C[i]
        Jac = np.empty((nv, nv))
        for jm in reversed(model.joints):                           # lines 9-10
            i, p = jm.index, jm.parent
            Jac[jm.v_slice] = jm.S.T @ F[i]
            if p >= 0:
                F[p] += self.frames.X[i].T @ F[i]
        if self.damped:
            for jm in model.joints:
                sv, sq = jm.v_slice, jm.q_slice
                Jac[sv, sv] += self.half_damping[sv, None] * _difference_jacobian(
                    jm, self.q[sq], q_next[sq])
        return Jac

    def momentum_next(self, q_next: np.ndarray, dT: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``p_{k+1} = D₂L_d(q_k, q_{k+1}) + F⁺_k``."""
        model, dt = self.model, self.dt
        frames = _Frames(model, self.data, q_next)
        W = np.einsum("nji,nj->ni", np.array([sp.Ad(D) for D in dT]).reshape(-1, 6, 6), mu) \
            + 0.5 * dt * frames.F_grav
        p = _backward(model, frames.X, W) - 0.5 * dt * _spring_gradient(model, q_next)
        if self.damped:
            p -= self.half_damping * difference(model, self.q, q_next)
        return p


def discrete_momentum(model: Model, data: Data, q_prev, q, dt: float) -> np.ndarray:
    """``p_k = D₂L_d(q_{k-1}, q_k) + F⁺_{k-1}``: the momentum the interval ``[k-1, k]`` carries
    into ``q_k`` (joint coordinates, (nv,))."""
    q_prev = check_configuration(model, q_prev, "q_prev")
    q = check_configuration(model, q, "q")
    prob = _StepProblem(model, data, q_prev, np.zeros(model.nv), dt, np.zeros(model.nv))
    _, dT, mu = prob.residual(q, keep=True)
    return prob.momentum_next(q, dT, mu)


def del_residual(model: Model, data: Data, q, p, q_next, dt: float, tau=None) -> np.ndarray:
    """``f(q_{k+1})`` of the forced DEL equation in momentum form (module docstring), O(n).

    Parameters
    ----------
    q, q_next : (nq,) arrays
        ``q_k`` and the candidate ``q_{k+1}``.
    p : (nv,) array
        Discrete momentum ``p_k``.
    dt : float
    tau : (nv,) array, optional
        Joint forces at step ``k`` besides springs and dampers.
    """
    q = check_configuration(model, q)
    q_next = check_configuration(model, q_next, "q_next")
    p = as_vector(p, model.nv, "p", "model.nv")
    tau = np.zeros(model.nv) if tau is None else as_vector(tau, model.nv, "tau", "model.nv")
    return _StepProblem(model, data, q, p, dt, tau).residual(q_next)


def del_jacobian(model: Model, data: Data, q, p, q_next, dt: float, tau=None) -> np.ndarray:
    """Analytic DEL Jacobian ``∂f/∂δ`` of :func:`del_residual` at ``q_{k+1} ⊕ δ``, ``δ = 0``:
    the derivative of DRNEA, Lee et al. (2016) Appendix, Algorithm 4, O(n²).

    The derivative is with respect to the local increment ``δ`` of
    :func:`~dynamics.minimal.configuration.integrate` (the plain derivative for revolute and
    prismatic joints; the right-trivialized one on SO(3) / SE(3) for spherical and floating
    joints), the variable of the Newton update ``q ← q ⊕ δ``. Gravity and springs enter ``f``
    at ``q_k`` only; dampers add ``½ d ∂(q_k ⊖ q_{k+1})/∂δ``. ``p`` and ``tau`` do not change
    the Jacobian; they are checked and accepted so that the call matches :func:`del_residual`.

    Parameters
    ----------
    q, q_next : (nq,) arrays
    p : (nv,) array
    dt : float
    tau : (nv,) array, optional

    Returns
    -------
    (nv, nv) array

    References
    ----------
    Lee et al. (2016), Appendix "Derivative of DRNEA", Algorithm 4; module docstring.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(3))
    >>> data, dt = model.create_data(), 1e-2
    >>> q, q_next, p = np.array([0.3, -0.2, 0.5]), np.array([0.31, -0.21, 0.5]), np.zeros(3)
    >>> J = del_jacobian(model, data, q, p, q_next, dt)
    >>> fd = del_jacobian_fd(model, data, q, p, q_next, dt)
    >>> bool(np.abs(J - fd).max() < 1e-7 * np.abs(J).max())
    True
    """
    q = check_configuration(model, q)
    q_next = check_configuration(model, q_next, "q_next")
    p = as_vector(p, model.nv, "p", "model.nv")
    tau = np.zeros(model.nv) if tau is None else as_vector(tau, model.nv, "tau", "model.nv")
    return _StepProblem(model, data, q, p, dt, tau).jacobian(q_next)


def del_jacobian_fd(model: Model, data: Data, q, p, q_next, dt: float, tau=None,
                    h: float = FD_STEP) -> np.ndarray:
    """:func:`del_jacobian` by central differences of :func:`del_residual` along
    ``q_{k+1} ⊕ ±h e_j`` (``2 nv`` residuals; the Newton solver's ``jacobian="fd"``)."""
    q = check_configuration(model, q)
    q_next = check_configuration(model, q_next, "q_next")
    p = as_vector(p, model.nv, "p", "model.nv")
    tau = np.zeros(model.nv) if tau is None else as_vector(tau, model.nv, "tau", "model.nv")
    return _fd_jacobian(model, _StepProblem(model, data, q, p, dt, tau), q_next, h)


def drnea(model: Model, data: Data, q_prev, q, q_next, dt: float, tau=None) -> np.ndarray:
    """Discrete recursive Newton-Euler algorithm (Lee et al. 2016, Algorithm 2), O(n).

    Forward pass: ``ΔT_i^{k} = T_{λ,i}(q_k)⁻¹ ΔT_λ^{k} T_{λ,i}(q_{k+1})``,
    ``V_i^k = log(ΔT_i^k)/Δt`` (and the same for ``k-1``); backward pass:
    ``F_i = μ_i^k - Ad(ΔT_i^{k-1})ᵀ μ_i^{k-1} - Δt F_grav,i + Σ_c X_cᵀ F_c``,
    ``f_i = S_iᵀ F_i - Q_i`` with ``Q = Δt (τ - k (q_k ⊖ q_rest)) - d/2 (q_{k+1} ⊖ q_{k-1})``
    (springs by the trapezoidal rule; dampers as in the module docstring).

    Parameters
    ----------
    model : Model
    data : Data
    q_prev, q, q_next : (nq,) arrays
        ``q_{k-1}``, ``q_k``, ``q_{k+1}``.
    dt : float
    tau : (nv,) array, optional
        Joint forces at step ``k`` (actuation), besides springs and dampers.

    Returns
    -------
    f : (nv,) array
        Residual impulse; zero iff ``q_{k+1}`` solves the DEL equation.

    References
    ----------
    Lee et al. (2016) eq. 19-22, Algorithm 2.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(2))
    >>> data, dt = model.create_data(), 1e-3
    >>> f = drnea(model, data, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], dt)   # hanging at rest
    >>> bool(np.allclose(f, 0.0))
    True
    """
    q_prev = check_configuration(model, q_prev, "q_prev")
    q = check_configuration(model, q)
    q_next = check_configuration(model, q_next, "q_next")
    tau = np.zeros(model.nv) if tau is None else as_vector(tau, model.nv, "tau", "model.nv")
    frames_prev = _Frames(model, data, q_prev)
    frames = _Frames(model, data, q)
    dT_prev, _, mu_prev = _displacements(model, frames_prev, frames.T, dt)
    _, _, mu = _displacements(model, frames, _placements_of(model, data, q_next), dt)
    carried = np.einsum("nji,nj->ni", np.array([sp.Ad(D) for D in dT_prev]), mu_prev)
    f = _backward(model, frames.X, mu - carried - dt * frames.F_grav)
    springs = joint_springs(model)
    Q = dt * (tau - springs.stiffness * difference(model, springs.rest, q)) \
        - 0.5 * springs.damping * (difference(model, q_prev, q) + difference(model, q, q_next))
    return f - Q


def impulse_aba(model: Model, data: Data, q, impulse) -> np.ndarray:
    """``M(q)⁻¹ impulse`` by the articulated-body algorithm with ``v = 0`` and no gravity
    (Lee et al. 2016 §3.2, "ABI"): RIQN's update is ``impulse_aba(q_k, Δt f)``."""
    saved = data.a_gravity.copy()
    data.a_gravity[:] = 0.0
    try:
        return aba(model, data, q, np.zeros(model.nv), impulse)
    finally:
        data.a_gravity[:] = saved


def convergence_weights(model: Model, data: Data, q, dt: float) -> np.ndarray:
    """``Δt / M_ii(q)``: residual entries times these weights are compared with ``tol``."""
    return dt / np.diag(crba(model, data, q))


def _initial_guess(model, data, q, v, delta_prev, dt, tau, kind):
    if kind == "ig1":
        return q.copy()
    if kind == "ig2":
        return integrate(model, q, delta_prev)
    v_fd = delta_prev / dt
    a = aba(model, data, q, v_fd, tau + joint_forces(model, q, v_fd))
    return integrate(model, q, dt * (v_fd + dt * a))


def variational_step(model: Model, data: Data, q, p, dt: float, *, solver: str = "riqn",
                     initial_guess: str = "ig3", delta_prev=None, tau=None,
                     tol: float = 1e-11, max_iter: int = 50, weights=None,
                     history: list | None = None, jacobian: str = "analytic") -> StepResult:
    """Solve the DEL equation for ``q_{k+1}`` given ``q_k`` and its discrete momentum ``p_k``.

    Parameters
    ----------
    model, data
    q : (nq,) array
    p : (nv,) array
    dt : float
    solver : {"riqn", "newton", "broyden"}
    initial_guess : {"ig1", "ig2", "ig3"}
    delta_prev : (nv,) array, optional
        ``q_k ⊖ q_{k-1}`` for IG2 / IG3 (default ``Δt M(q_k)⁻¹ p_k``).
    tau : (nv,) array, optional
        Joint forces at step ``k`` (besides springs and dampers).
    tol, max_iter
        Convergence: ``max_i |f_i| weights_i ≤ tol`` within ``max_iter`` updates.
    weights : (nv,) array, optional
        Default :func:`convergence_weights` at ``q``.
    history : list, optional
        Receives the scaled residual norm of every evaluation (Fig. 4a).
    jacobian : {"analytic", "fd"}
        Newton's DEL Jacobian: Algorithm 4 (:func:`del_jacobian`) or central finite
        differences (:func:`del_jacobian_fd`). Ignored by the other solvers.

    Raises
    ------
    ConvergenceError
        No convergence within ``max_iter`` updates (or a non-finite residual).
    ValueError
        Unknown solver, Jacobian or initial guess, wrong lengths.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if jacobian not in JACOBIANS:
        raise ValueError(f"jacobian must be one of {JACOBIANS}, got {jacobian!r}")
    if initial_guess not in INITIAL_GUESSES:
        raise ValueError(f"initial_guess must be one of {INITIAL_GUESSES}, got {initial_guess!r}")
    q = check_configuration(model, q)
    p = as_vector(p, model.nv, "p", "model.nv")
    tau = np.zeros(model.nv) if tau is None else as_vector(tau, model.nv, "tau", "model.nv")
    w = convergence_weights(model, data, q, dt) if weights is None else weights
    if delta_prev is None:
        delta_prev = dt * impulse_aba(model, data, q, p)
    prob = _StepProblem(model, data, q, p, dt, tau)
    x = _initial_guess(model, data, q, None, delta_prev, dt, tau, initial_guess)
    f, dT, mu = prob.residual(x, keep=True)
    H = None
    for it in range(max_iter + 1):
        err = float(np.max(np.abs(f) * w)) if model.nv else 0.0
        if history is not None:
            history.append(err)
        if err <= tol:
            return StepResult(x, prob.momentum_next(x, dT, mu), it, err)
        if not np.isfinite(err) or it == max_iter:
            break
        if solver == "riqn":
            step = -impulse_aba(model, data, q, dt * f)
        elif solver == "newton":
            J = prob.jacobian(x) if jacobian == "analytic" else _fd_jacobian(model, prob, x)
            step = -np.linalg.solve(J, f)
        else:
            if H is None:
                H = dt * np.linalg.inv(crba(model, data, q))
            step = -H @ f
        x_new = integrate(model, x, step)
        f_new, dT, mu = prob.residual(x_new, keep=True)
        if solver == "broyden":
            y = f_new - f
            Hy = H @ y
            denom = step @ Hy
            if denom != 0.0:
                H += np.outer(step - Hy, step @ H) / denom
        x, f = x_new, f_new
    raise ConvergenceError(
        f"{solver} did not converge in {max_iter} iterations: scaled DEL residual {err:.3g} > "
        f"tol {tol:g} ({convergence_advice(solver)})", iterations=max_iter,
        residual=err)


def _fd_jacobian(model: Model, prob: _StepProblem, x: np.ndarray,
                 h: float = FD_STEP) -> np.ndarray:
    """``∂f/∂δ`` at ``x ⊕ δ``, ``δ = 0``, by central differences of the residual."""
    J = np.empty((model.nv, model.nv))
    e = np.zeros(model.nv)
    for j in range(model.nv):
        e[j] = h
        J[:, j] = prob.residual(integrate(model, x, e)) - prob.residual(integrate(model, x, -e))
        e[j] = 0.0
    return J / (2.0 * h)


def simulate_variational(model: Model, q0, v0, dt: float, steps: int, *, solver: str = "riqn",
                         controller=None, initial_guess: str = "ig3", tol: float = 1e-11,
                         max_iter: int = 50, backend: str = "reference",
                         jacobian: str = "analytic"):
    """Simulate with the variational integrator; returns an
    :class:`~dynamics.minimal.results.SimulationResult` with ``iterations`` per step and
    ``v_k = M(q_k)⁻¹ p_k``.

    ``controller(t, q, v)`` is evaluated at ``(t_k, q_k, v_k)`` and held over the step.
    ``jacobian`` selects Newton's DEL Jacobian (``"analytic"``: Algorithm 4, ``"fd"``: finite
    differences; see :func:`variational_step`). ``backend="compiled"`` runs it in numba:
    without a controller every solver on revolute / prismatic trees in one call
    (:func:`~dynamics.minimal.tree_kernels.simulate_variational_compiled`; joint torques known
    in advance can be given there as ``tau``); RIQN with spherical, floating and planar joints
    too, and with a controller one compiled call per step
    (:func:`~dynamics.minimal.multi_dof_variational.simulate_riqn`); ``"auto"`` does so when
    possible.

    Raises
    ------
    ConvergenceError
        With ``.step`` set to the failing step.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(2))
    >>> res = simulate_variational(model, [1.0, 0.0], [0.0, 0.0], 1e-2, 50, solver="riqn")
    >>> int(res.iterations.max()) <= 10, bool(np.ptp(res.energy) < 1e-2)
    (True, True)
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if jacobian not in JACOBIANS:
        raise ValueError(f"jacobian must be one of {JACOBIANS}, got {jacobian!r}")
    if backend != "reference":
        # numba is imported on first use
        from . import multi_dof_kernels, multi_dof_variational, tree_kernels
        one_dof = tree_kernels.supports(model)
        if controller is None and one_dof:
            return tree_kernels.simulate_variational_compiled(
                model, q0, v0, dt, steps, solver=solver, initial_guess=initial_guess, tol=tol,
                max_iter=max_iter, jacobian=jacobian)
        if solver == "riqn" and multi_dof_kernels.supports(model):
            return multi_dof_variational.simulate_riqn(
                model, q0, v0, dt, steps, initial_guess=initial_guess, tol=tol,
                max_iter=max_iter, controller=controller)
        if backend == "compiled":
            if controller is not None:
                raise ValueError(f"the compiled variational loop takes a controller with "
                                 f"solver='riqn' only, got {solver!r}; use "
                                 "backend='reference'")
            if not one_dof and multi_dof_kernels.supports(model):
                raise ValueError(f"the compiled variational loop of spherical, floating and "
                                 f"planar joints runs RIQN only, got solver {solver!r} (use "
                                 "backend='reference' or 'auto')")
            return tree_kernels.simulate_variational_compiled(  # names the unsupported joint
                model, q0, v0, dt, steps, solver=solver, initial_guess=initial_guess, tol=tol,
                max_iter=max_iter, jacobian=jacobian)
    steps, q, v = check_run(model, q0, v0, dt, steps)
    data = model.create_data()
    M0 = crba(model, data, q)
    p = M0 @ v
    weights = dt / np.diag(M0)
    delta_prev = dt * v
    Q, Vs = np.empty((steps + 1, model.nq)), np.empty((steps + 1, model.nv))
    energy, times = np.empty(steps + 1), np.empty(steps)
    iterations = np.zeros(steps, dtype=int)
    Q[0], Vs[0], energy[0] = q, v, total_energy(model, data, q, v)
    for k in range(steps):
        start = time.perf_counter()
        tau = np.zeros(model.nv) if controller is None else as_vector(
            controller(k * dt, q, v), model.nv, "controller(t, q, v)", "model.nv")
        try:
            res = variational_step(model, data, q, p, dt, solver=solver,
                                   initial_guess=initial_guess, delta_prev=delta_prev, tau=tau,
                                   tol=tol, max_iter=max_iter, weights=weights,
                                   jacobian=jacobian)
        except ConvergenceError as exc:
            exc.step = k
            exc.args = (f"step {k} (t = {k * dt:g}): {exc.args[0]}",)
            raise
        delta_prev = difference(model, q, res.q_next)
        q, p = res.q_next, res.p_next
        v = impulse_aba(model, data, q, p)
        times[k] = time.perf_counter() - start
        iterations[k] = res.iterations
        Q[k + 1], Vs[k + 1] = q, v
        energy[k + 1] = total_energy(model, data, q, v)
    return SimulationResult(dt * np.arange(steps + 1), Q, Vs, energy, times, solver, iterations)
