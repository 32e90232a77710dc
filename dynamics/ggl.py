"""The GGL variational integrator of Kinon, Betsch & Schneider (Multibody Syst. Dyn. 57, 2023,
"The GGL variational principle for constrained mechanical systems") for systems in redundant
coordinates with a constant mass matrix (:class:`~dynamics.redundant.RedundantSystem`, e.g. the
planar director formulation :func:`~dynamics.redundant.planar_directors`) -- the comparator of
Brüdigam et al. (2023) Fig. 12 (their ref. [17]).

GGL equations of motion
-----------------------
Gear, Gupta & Leimkuhler (1985) enforce the holonomic constraints ``g(q) = 0`` *and* their
velocity form ``G(q) q̇ = 0`` with a second multiplier ``γ``, which enters the kinematic equation.
Written with momenta ``p`` (the form of the scheme below; our transcription, the paper is not
in this repository),

    q̇ = M⁻¹ (p + G(q)ᵀ γ),
    ṗ = -∇V(q) - G(q)ᵀ λ - (Σ_j γ_j ∇²g_j(q)) M⁻¹ p,
    0 = g(q),        0 = G(q) M⁻¹ p,

an index-2 DAE whose exact solution has ``γ = 0``.

The discrete scheme (what is implemented)
-----------------------------------------
The integrator Kinon et al. ran for the double four-bar linkage is ``GGL_VI_mod`` of the
authors' Matlab code *metis* (github.com/plkinon/metis; its published input script
``input/published/MUBO_kinon_betsch_schneider_2022/single_analysis_double4bar_linkage*.m``
names it; the class cites the paper's DOI). We implement its residual equations, per step
``n → n+1`` with step ``h`` and ``q̄ = q_n + h v_n``,

    R₁ = q_{n+1} - q_n - h v_n - h M⁻¹ G(q̄)ᵀ γ_{n+1}                   = 0,
    R₂ = p_{n+1} - p_n + h ∇V(q_n) + h G(q_n)ᵀ λ_n + h Γ M⁻¹ p_{n+1}      = 0,
    R₃ = M v_n - p_{n+1} - h Γ M⁻¹ p_{n+1}                               = 0,
    R₄ = g(q_{n+1})                                                      = 0,
    R₅ = G(q̄) M⁻¹ p_{n+1}                                                = 0,

``Γ = Σ_j γ_{n+1,j} ∇²g_j(q̄)`` (constant here: the constraints are quadratic), for the
``3n + 2m`` unknowns ``z = (q_{n+1}, p_{n+1}, v_n, λ_n, γ_{n+1})``, solved by Newton's method
with the exact Jacobian :func:`ggl_jacobian` (max-norm of the residual ``≤ tol``; the authors'
script uses ``1e-9`` and at most 40 iterations). ``p_0 = M v_0``; ``λ_n`` is the multiplier
of ``G(q_n)`` that closes the constraints at ``q_{n+1}`` (as in SHAKE).

*Derived by us, not taken from the paper* (which is not in this repository): these equations
are the stationarity conditions of the discrete action

    S_d = Σ_n [ h L(q_n, v_n) + p_{n+1}·(q_{n+1} - q_n - h v_n) - h λ_n·g(q_n)
                - h γ_{n+1}·G(q_n + h v_n) M⁻¹ p_{n+1} ],    L = ½ vᵀ M v - V(q),

(variations by ``p_{n+1}``, ``q_n``, ``v_n``, ``γ_{n+1}``, ``λ_n`` give ``R₁``, ``R₂``, ``R₃``,
``R₅`` and ``g(q_n) = 0``), the rectangle-rule discretization of the continuous GGL functional
``∫ L(q, v) + p·(q̇ - v) - λ·g(q) - γ·G(q) M⁻¹ p dt`` whose Euler-Lagrange equations are the
GGL equations above. Without constraints the scheme is the symplectic Euler method
``p_{n+1} = p_n - h ∇V(q_n)``, ``q_{n+1} = q_n + h M⁻¹ p_{n+1}``: symplectic and of **first
order** for a general initial state, for the trajectory and for the energy ``H(q_n, p_n)``
(the authors' postprocessing uses ``½ v_nᵀ M v_n + V(q_n)``, likewise first order). Its
positions are those of the Störmer-Verlet method started with an ``O(h²)`` error
``h² a_0 / 2``; where the initial acceleration ``a_0`` vanishes -- the double four-bar released
with its cranks upright, Fig. 12's start -- the trajectory is of second order, the energy
still of first. All measured in ``tests/dynamics/test_ggl.py`` against the exact motion of the
four-bar's parallelogram mode. The velocity constraint holds at ``q̄``, not at ``q_{n+1}``:
``G(q_{n+1}) M⁻¹ p_{n+1}`` is small (``O(h³)`` away from singular configurations, measured),
not zero (:attr:`GGLResult.velocity_residual` reports both); ``γ = O(h)``.

Singular configurations: near a configuration where ``G`` loses rank (the double four-bar with
all bars parallel) plain Newton may not converge at large steps (at Δt = 0.01 s it does not
at the step onto the first one). The authors' solver then keeps the last iterate and goes on
(``on_max_iter="continue"``); by default :func:`simulate_ggl` raises :class:`GGLFailure`.

Cost: each Newton iteration eliminates ``δq, δp, δv`` and solves the ``2m × 2m`` Schur
complement for ``δλ, δγ`` (``_newton_delta``, derived by us; the same step as a dense solve with
:func:`ggl_jacobian`, 58 instead of 148 unknowns for the double four-bar); everything is
vectorized in NumPy, no loop over bodies. :attr:`GGLResult.seconds` is the step loop's wall
time; BLAS should run on one thread (``threadpoolctl``) on a busy machine.

References
----------
C. W. Gear, B. Leimkuhler, G. K. Gupta, "Automatic integration of Euler-Lagrange equations
with constraints", J. Comput. Appl. Math. 12-13 (1985) 77-90.
P. L. Kinon, P. Betsch, S. Schneider, "The GGL variational principle for constrained mechanical
systems", Multibody Syst. Dyn. 57 (2023) 211-236.
P. L. Kinon, J. K. Bauer, *metis* (Matlab), github.com/plkinon/metis, ``GGL_VI_mod.m``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .redundant import RedundantSystem

__all__ = ["simulate_ggl", "GGLResult", "GGLFailure", "ggl_residual", "ggl_jacobian",
           "ggl_jacobian_fd", "PAPER_TOLERANCE", "PAPER_MAX_ITER", "ON_MAX_ITER"]

#: Newton tolerance (max-norm of the residual) and iteration cap of the authors' input script
#: for the double four-bar.
PAPER_TOLERANCE = 1e-9
PAPER_MAX_ITER = 40
#: What :func:`simulate_ggl` does when Newton runs out of iterations.
ON_MAX_ITER = ("raise", "continue")


class GGLFailure(RuntimeError):
    """Newton did not converge within ``max_iter`` iterations (or produced non-finite
    values) at step ``step``; ``result`` holds the trajectory up to the step before."""

    def __init__(self, message: str, step: int, result: GGLResult):
        super().__init__(message)
        self.step = step
        self.result = result


@dataclass(frozen=True)
class GGLResult:
    """Trajectory of :func:`simulate_ggl`, one row per time ``t_k = k h`` (``k = 0..steps``).

    Attributes
    ----------
    system : RedundantSystem
    dt : float
    t : (T,) ; q, p : (T, n)
        Configurations and momenta ``(q_k, p_k)``.
    v : (T, n)
        ``v_k`` of the interval ``[t_k, t_{k+1}]`` (NaN in the last row).
    lam : (T, m)
        ``λ_k`` of that interval (NaN in the last row).
    gamma : (T, m)
        ``γ_k`` (zeros at ``k = 0``).
    iterations : (T,) int
        Newton iterations of the step that produced the row (0 at ``t = 0``).
    residual : (T,)
        Max-norm of the residual at the accepted iterate of that step (above the tolerance
        only for steps accepted unconverged, ``on_max_iter="continue"``).
    tol : float
        The Newton tolerance.
    seconds : float
        Wall time of the step loop (energies and residuals below are computed afterwards).
    """

    system: RedundantSystem
    dt: float
    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    v: np.ndarray
    lam: np.ndarray
    gamma: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    seconds: float
    tol: float = 0.0

    @property
    def steps(self) -> int:
        return len(self.t) - 1

    @property
    def kinetic_energy(self) -> np.ndarray:
        """``½ p_kᵀ M⁻¹ p_k``."""
        return self.system.kinetic_energy(self.p)

    @property
    def potential_energy(self) -> np.ndarray:
        return self.system.potential_energy(self.q)

    @property
    def energy(self) -> np.ndarray:
        """``H(q_k, p_k)``."""
        return self.kinetic_energy + self.potential_energy

    @property
    def position_residual(self) -> np.ndarray:
        """``max_j |g_j(q_k)|`` per row."""
        return np.abs(self.system.constraints.values_over_time(self.q)).max(axis=1)

    @property
    def velocity_residual(self) -> dict[str, np.ndarray]:
        """``max_j |(G M⁻¹ p_k)_j|`` per row with ``G`` at ``q̄_{k-1} = q_{k-1} + h v_{k-1}``
        (``"enforced"``, the scheme's ``R₅``; at ``k = 0`` that of the initial velocity) and
        at ``q_k`` (``"at_q"``, the authors' postprocessed velocity constraint)."""
        c = self.system.constraints
        u = self.p @ self.system.mass_inverse
        at_q = np.abs(c.jacobian_times(self.q, u)).max(axis=1)
        qbar = self.q[:-1] + self.dt * self.v[:-1]
        enforced = np.zeros(len(self.t))
        enforced[0] = at_q[0]
        if len(self.t) > 1:
            enforced[1:] = np.abs(c.jacobian_times(qbar, u[1:])).max(axis=1)
        return {"enforced": enforced, "at_q": at_q}

    @property
    def unconverged(self) -> np.ndarray:
        """Indices ``k`` of the rows produced by a step accepted above the tolerance."""
        return np.flatnonzero(self.residual > self.tol)

    @property
    def microseconds_per_step(self) -> float:
        return 1e6 * self.seconds / max(self.steps, 1)


def _split(z, n, m):
    return z[:n], z[n:2 * n], z[2 * n:3 * n], z[3 * n:3 * n + m], z[3 * n + m:]


def ggl_residual(system: RedundantSystem, dt: float, q_n, p_n, z) -> np.ndarray:
    """``(R₁, R₂, R₃, R₄, R₅)`` (module docstring) at ``z = (q_{n+1}, p_{n+1}, v_n, λ_n,
    γ_{n+1})`` for the state ``(q_n, p_n)``; shape ``(3n + 2m,)``."""
    return _residual(system, float(dt), q_n, p_n, system.constraints.jacobian(q_n),
                     np.asarray(z, dtype=float))


def _residual(system, h, q_n, p_n, G0, z):
    n, m = system.n, system.m
    c, M, W = system.constraints, system.mass_matrix, system.mass_inverse
    q1, p1, v, lam, gam = _split(z, n, m)
    qbar = q_n + h * v
    Gbar = c.jacobian(qbar)
    Wp = W @ p1
    GamWp = c.contract(gam) @ Wp
    return np.concatenate([
        q1 - q_n - h * v - h * W @ (Gbar.T @ gam),
        p1 - p_n - h * system.force + h * G0.T @ lam + h * GamWp,
        M @ v - p1 - h * GamWp,
        c.value(q1),
        Gbar @ Wp,
    ])


def ggl_jacobian(system: RedundantSystem, dt: float, q_n, p_n, z) -> np.ndarray:
    """The exact Jacobian ``∂R/∂z`` of :func:`ggl_residual`, ``(3n + 2m, 3n + 2m)`` (blocks in
    the order of ``R`` and ``z``; :func:`simulate_ggl` solves with it by block elimination)."""
    n, m = system.n, system.m
    c, M, W, h = system.constraints, system.mass_matrix, system.mass_inverse, float(dt)
    q1, p1, v, lam, gam = _split(np.asarray(z, dtype=float), n, m)
    iq, ip, iv, il, ig = (slice(0, n), slice(n, 2 * n), slice(2 * n, 3 * n),
                          slice(3 * n, 3 * n + m), slice(3 * n + m, 3 * n + 2 * m))
    Gbar = c.jacobian(q_n + h * v)
    Gam = c.contract(gam)
    T = c.hessian_rows(W @ p1)                  # row j: (H_j M⁻¹ p_{n+1})ᵀ
    eye = np.eye(n)
    J = np.zeros((3 * n + 2 * m, 3 * n + 2 * m))
    J[iq, iq] = eye                             # R₁
    J[iq, iv] = -h * eye - h * h * (W @ Gam)
    J[iq, ig] = -h * (W @ Gbar.T)
    J[ip, ip] = eye + h * (Gam @ W)             # R₂
    J[ip, il] = h * c.jacobian(q_n).T
    J[ip, ig] = h * T.T
    J[iv, iv] = M                               # R₃
    J[iv, ip] = -eye - h * (Gam @ W)
    J[iv, ig] = -h * T.T
    J[il, iq] = c.jacobian(q1)                  # R₄
    J[ig, ip] = Gbar @ W                        # R₅
    J[ig, iv] = h * T
    return J


def ggl_jacobian_fd(system: RedundantSystem, dt: float, q_n, p_n, z,
                    eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of :func:`ggl_residual` (for tests)."""
    z = np.asarray(z, dtype=float)
    J = np.empty((z.size, z.size))
    for i in range(z.size):
        dz = np.zeros_like(z)
        dz[i] = eps
        J[:, i] = (ggl_residual(system, dt, q_n, p_n, z + dz)
                   - ggl_residual(system, dt, q_n, p_n, z - dz)) / (2 * eps)
    return J


def _newton_delta(system, h, q_n, G0, z, r):
    """The Newton update ``δ = -J⁻¹ r`` of :func:`ggl_jacobian` by block elimination: the
    velocity, momentum and position rows are solved for ``δv, δp, δq`` in terms of
    ``δλ, δγ``, which solve the ``2m × 2m`` Schur complement (derived by us; the same step as
    the dense ``(3n + 2m)²`` solve, checked in the tests)."""
    n, m = system.n, system.m
    c, W = system.constraints, system.mass_inverse
    q1, p1, v, lam, gam = _split(z, n, m)
    r1, r2, r3, r4, r5 = _split(r, n, m)
    Gbar = c.jacobian(q_n + h * v)
    Gam = c.contract(gam)
    T = c.hessian_rows(W @ p1)                         # row j: (H_j M⁻¹ p_{n+1})ᵀ
    G1 = c.jacobian(q1)
    WG0 = W @ G0.T                                     # (n, m)
    WGam = W @ Gam
    # δv = u0 + U δλ   (rows R₂ + R₃: M δv + h G0ᵀ δλ = -r₂ - r₃)
    u0, U = -W @ (r2 + r3), -h * WG0
    # δp = -B⁻¹ (r₂ + h G0ᵀ δλ + h Tᵀ δγ),  B = I + h Γ M⁻¹
    B = np.eye(n) + h * (Gam @ W)
    X = np.linalg.solve(B, np.column_stack([r2, h * G0.T, h * T.T]))
    xr, Xl, Xg = X[:, 0], X[:, 1:m + 1], X[:, m + 1:]
    # δq = -r₁ - Aqv δv - Aqg δγ,  Aqv = -h I - h² M⁻¹ Γ,  Aqg = -h M⁻¹ Ḡᵀ
    Aqv_u0 = -h * u0 - h * h * (WGam @ u0)
    Aqv_U = -h * U - h * h * (WGam @ U)
    Aqg = -h * (W @ Gbar.T)
    GbarW = Gbar @ W
    S = np.empty((2 * m, 2 * m))
    S[:m, :m] = -G1 @ Aqv_U                            # row R₄: G₁ δq = -r₄
    S[:m, m:] = -G1 @ Aqg
    S[m:, :m] = -GbarW @ Xl + h * (T @ U)              # row R₅: Ḡ M⁻¹ δp + h T δv = -r₅
    S[m:, m:] = -GbarW @ Xg
    rhs = np.concatenate([-r4 + G1 @ (r1 + Aqv_u0), -r5 + GbarW @ xr - h * (T @ u0)])
    dl = np.linalg.solve(S, rhs)
    dlam, dgam = dl[:m], dl[m:]
    dv = u0 + U @ dlam
    dp = -(xr + Xl @ dlam + Xg @ dgam)
    dq = -r1 - (Aqv_u0 + Aqv_U @ dlam) - Aqg @ dgam
    return np.concatenate([dq, dp, dv, dlam, dgam])


def simulate_ggl(system: RedundantSystem, dt: float, steps: int, *,
                 tol: float = 1e-10, max_iter: int = PAPER_MAX_ITER,
                 on_max_iter: str = "raise") -> GGLResult:
    """Run the GGL variational integrator (module docstring) for ``steps`` steps of ``dt``
    from ``(system.q0, M v0)``.

    ``tol`` bounds the max-norm of the residual ``R`` (its rows are in m, N s, N s, m / 1 and
    m/s); Kinon et al. use :data:`PAPER_TOLERANCE`. Newton starts from the last step's
    velocity and multipliers (``q_{n+1} = q_n + h v_{n-1}``).

    ``on_max_iter`` is what happens when Newton has not reached ``tol`` after ``max_iter``
    iterations: ``"raise"`` (default) a :class:`GGLFailure`; ``"continue"`` keep the last
    iterate and go on, as the authors' Newton solver does (*metis* ``Solver.newton_iterate``
    warns and continues) -- how the paper's comparator runs through the singular configurations
    of the double four-bar at large steps. Such steps show in :attr:`GGLResult.residual`
    (``> tol``) and :attr:`GGLResult.unconverged`.

    Raises
    ------
    GGLFailure
        Newton did not reach ``tol`` in ``max_iter`` iterations (with ``on_max_iter="raise"``)
        or the residual became non-finite.

    >>> from dynamics import models
    >>> from dynamics.redundant import planar_directors
    >>> res = simulate_ggl(planar_directors(models.double_fourbar()), 0.01, 20)
    >>> bool(res.position_residual.max() < 1e-10), res.q.shape
    (True, (21, 30))
    """
    dt, steps = float(dt), int(steps)
    if not np.isfinite(dt) or dt <= 0:
        raise ValueError(f"dt must be positive, got {dt}")
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}")
    if on_max_iter not in ON_MAX_ITER:
        raise ValueError(f"on_max_iter must be one of {ON_MAX_ITER}, got {on_max_iter!r}")
    n, m = system.n, system.m
    T = steps + 1
    qs, ps = np.empty((T, n)), np.empty((T, n))
    vs, lams, gams = np.full((T, n), np.nan), np.full((T, m), np.nan), np.zeros((T, m))
    its, res = np.zeros(T, dtype=np.int64), np.zeros(T)
    qs[0], ps[0] = system.q0, system.mass_matrix @ system.v0
    z = np.concatenate([qs[0], ps[0], system.v0, np.zeros(2 * m)])
    start = time.perf_counter()

    def partial(k):
        return GGLResult(system, dt, np.arange(k + 1) * dt, qs[:k + 1], ps[:k + 1],
                         vs[:k + 1], lams[:k + 1], gams[:k + 1], its[:k + 1], res[:k + 1],
                         time.perf_counter() - start, tol)

    for k in range(steps):
        q_n, p_n = qs[k], ps[k]
        z[:n] = q_n + dt * z[2 * n:3 * n]            # q_{n+1} guess from the last v
        z[n:2 * n] = p_n
        G0 = system.constraints.jacobian(q_n)
        for it in range(max_iter + 1):
            r = _residual(system, dt, q_n, p_n, G0, z)
            norm = float(np.abs(r).max())
            if not np.isfinite(norm):
                raise GGLFailure(f"GGL step {k + 1}: non-finite residual", k + 1, partial(k))
            if norm <= tol:
                break
            if it == max_iter:
                if on_max_iter == "continue":
                    break
                raise GGLFailure(f"GGL step {k + 1}: Newton residual {norm:.2e} > tol {tol:g} "
                                 f"after {max_iter} iterations", k + 1, partial(k))
            try:
                z += _newton_delta(system, dt, q_n, G0, z, r)
            except np.linalg.LinAlgError:
                raise GGLFailure(f"GGL step {k + 1}: singular Newton matrix", k + 1,
                                 partial(k)) from None
        q1, p1, v, lam, gam = _split(z, n, m)
        qs[k + 1], ps[k + 1] = q1, p1
        vs[k], lams[k], gams[k + 1] = v, lam, gam
        its[k + 1], res[k + 1] = it, norm
    return GGLResult(system, dt, np.arange(T) * dt, qs, ps, vs, lams, gams, its, res,
                     time.perf_counter() - start, tol)
