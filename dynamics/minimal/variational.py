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
    Newton with the DEL Jacobian ``∂f/∂q_{k+1}``. **First version: the Jacobian is a central
    finite difference of the residual** (``2 nv`` O(n) residual evaluations with steps
    ``q ⊕ ±h e_j``, ``h = 1e-6``, relative error ≈ 1e-10), not the appendix's analytic
    derivative of DRNEA (Algorithm 4); both cost O(n²) per Jacobian, and the dense solve is
    O(n³) (Algorithm 1).
``"broyden"``
    Broyden's ("good") method in inverse form, started from ``H_0 = Δt M(q_k)⁻¹`` (CRBA and a
    dense inverse) with Sherman-Morrison updates: O(n²) per iteration, O(n³) per step.

Updates use ``q ⊕ δ`` (:func:`~dynamics.minimal.configuration.integrate`), so revolute,
prismatic, spherical (quaternion or rotation vector) and floating joints are all supported
(the original code supports revolute and prismatic joints only).

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
multibody systems", WAFR 2016: eq. 9-22, Algorithms 1-3, §3.3.
J. E. Marsden, M. West, "Discrete mechanics and variational integrators", Acta Numerica 2001,
§3.2 (forced DEL, discrete Legendre transforms).
C. G. Broyden, Math. Comp. 19 (1965).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from . import spatial as sp
from .algorithms import _placements, aba, crba
from .configuration import as_vector, check_configuration, check_run, difference, integrate
from .forces import joint_forces, joint_springs, total_energy
from .model import Data, Model

__all__ = ["SOLVERS", "INITIAL_GUESSES", "ConvergenceError", "StepResult", "drnea",
           "discrete_momentum", "del_residual", "impulse_aba", "variational_step",
           "simulate_variational", "convergence_weights"]

SOLVERS = ("riqn", "newton", "broyden")
INITIAL_GUESSES = ("ig1", "ig2", "ig3")
#: Finite-difference step of the Newton Jacobian (configuration units).
FD_STEP = 1e-6


class ConvergenceError(RuntimeError):
    """A variational step did not converge; carries ``step``, ``iterations`` and ``residual``
    (the scaled residual norm when giving up)."""

    def __init__(self, message: str, *, step: int | None = None, iterations: int = 0,
                 residual: float = np.inf):
        super().__init__(message)
        self.step, self.iterations, self.residual = step, iterations, residual


@dataclass(frozen=True)
class StepResult:
    """One variational step: ``q_next``, ``p_next`` (discrete momentum), the number of root-finder
    updates ``iterations`` and the final scaled residual ``residual``."""

    q_next: np.ndarray
    p_next: np.ndarray
    iterations: int
    residual: float


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


class _StepProblem:
    """Everything of step ``k`` that does not depend on ``q_{k+1}``; ``residual(q_next)`` is the
    O(n) DRNEA evaluation of ``f`` (momentum form)."""

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

    def momentum_next(self, q_next: np.ndarray, dT: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``p_{k+1} = D₂L_d(q_k, q_{k+1}) + F⁺_k``."""
        model, dt = self.model, self.dt
        frames = _Frames(model, self.data, q_next)
        W = np.einsum("nji,nj->ni", np.array([sp.Ad(D) for D in dT]), mu) \
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
                     history: list | None = None) -> StepResult:
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

    Raises
    ------
    ConvergenceError
        No convergence within ``max_iter`` updates (or a non-finite residual).
    ValueError
        Unknown solver or initial guess, wrong lengths.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
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
            step = -np.linalg.solve(_fd_jacobian(model, prob, x), f)
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
        f"tol {tol:g} (reduce dt, raise max_iter or loosen tol)", iterations=max_iter,
        residual=err)


def _fd_jacobian(model: Model, prob: _StepProblem, x: np.ndarray) -> np.ndarray:
    """``∂f/∂δ`` at ``x ⊕ δ``, ``δ = 0``, by central differences of the residual."""
    J = np.empty((model.nv, model.nv))
    e = np.zeros(model.nv)
    for j in range(model.nv):
        e[j] = FD_STEP
        J[:, j] = prob.residual(integrate(model, x, e)) - prob.residual(integrate(model, x, -e))
        e[j] = 0.0
    return J / (2.0 * FD_STEP)


def simulate_variational(model: Model, q0, v0, dt: float, steps: int, *, solver: str = "riqn",
                         controller=None, initial_guess: str = "ig3", tol: float = 1e-11,
                         max_iter: int = 50, backend: str = "reference"):
    """Simulate with the variational integrator; returns an
    :class:`~dynamics.minimal.integrators.SimulationResult` with ``iterations`` per step and
    ``v_k = M(q_k)⁻¹ p_k``.

    ``controller(t, q, v)`` is evaluated at ``(t_k, q_k, v_k)`` and held over the step.
    ``backend="compiled"`` runs the whole loop in numba
    (:func:`~dynamics.minimal.compiled.simulate_variational_compiled`: revolute / prismatic
    trees, no controller); ``"auto"`` does so when possible.

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
    from .integrators import BACKENDS, SimulationResult

    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend != "reference":
        from . import compiled
        if backend == "compiled" or (compiled.supports(model) and controller is None):
            if controller is not None:
                raise ValueError("the compiled variational loop takes no controller; use "
                                 "backend='reference'")
            return compiled.simulate_variational_compiled(
                model, q0, v0, dt, steps, solver=solver, initial_guess=initial_guess, tol=tol,
                max_iter=max_iter)
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
                                   tol=tol, max_iter=max_iter, weights=weights)
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
