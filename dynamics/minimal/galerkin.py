"""Higher-order Galerkin variational integrators in minimal coordinates, after Fan, Schultz &
Murphey (WAFR 2018): the "2nd-order" and "3rd-order" minimal-coordinate variational
integrators that Brüdigam & Manchester (2020) Fig. 8 and Brüdigam et al. (2023) Fig. 10 compare
against.

Discrete mechanics (Fan et al. §2; Marsden & West 2001 §2.2.6)
--------------------------------------------------------------
On step ``[t_k, t_k + Δt]`` the trajectory is the degree-``s`` polynomial through ``s + 1``
control points ``q_k = q_k^0, q_k^1, …, q_k^s = q_{k+1}`` placed at the Gauss-Lobatto nodes
``c_0 = 0 < c_1 < … < c_s = 1``, and the action is approximated by the ``(s + 1)``-point
Lobatto quadrature on the same nodes (weights ``w_j``), so the discrete Lagrangian is

    L_d(q_k^0, …, q_k^s) = Δt Σ_j w_j L(q_k^j, v_k^j),   v_k^j = (1/Δt) Σ_i a_ji q_k^i,

with ``a_ji = φ_i'(c_j)`` the derivative of the ``i``-th Lagrange basis polynomial at node
``j``. The (forced) discrete Euler-Lagrange equations in momentum form are (Fan et al. §2; we
do not recall their equation numbers; Marsden & West §2.2.6 and §3.2 for forced Galerkin
Lagrangians)

    R_0 = p_k + D_0 L_d + Δt w_0 F^0 = 0,
    R_i =       D_i L_d + Δt w_i F^i = 0,          i = 1 … s-1,
    p_{k+1} =   D_s L_d + Δt w_s F^s,

    D_i L_d = Δt w_i ∂L/∂q(q^i, v^i) + Σ_j w_j a_ji ∂L/∂v(q^j, v^j),

``s·n`` equations for the ``s·n`` unknowns ``q_k^1 … q_k^s``; ``F^j = τ_k - d ∘ v^j`` are the
joint forces (controller torques held over the step, dampers; discrete Lagrange-d'Alembert with
the same quadrature). Joint springs and gravity are in the potential of ``L``.
``s = 1`` is the trapezoidal variational integrator (``L_d = Δt/2 (L(q_k, v) + L(q_{k+1}, v))``,
``v = (q_{k+1} - q_k)/Δt``), ``s = 2`` the Simpson (3-point Lobatto) one. Lobatto Galerkin
integrators are symplectic, symmetric and of order ``2s`` (Ober-Blöbaum & Saake 2015;
Hairer, Lubich & Wanner 2006 §VI.6): Lobatto IIIA-IIIB in disguise.

What "2nd" and "3rd order" mean in the papers (:data:`PAPER_ORDERS`)
--------------------------------------------------------------------
Brüdigam et al. call their own integrator "first order": eq. (7)-(8) of the 2023 paper
(eq. (23)-(24) of the 2020 paper) approximate the action integral by the one-point rectangle
rule ``Δt L(x_k, v_k)`` with the first-order velocity ``v_k = (x_{k+1} - x_k)/Δt``: the order
counts the points of the quadrature of the action. The 2nd- and 3rd-order comparators are read
the same way: the 2-point (trapezoidal, ``s = 1``) and the 3-point (Simpson, ``s = 2``) Lobatto
Galerkin integrators of Fan et al. (the 2023 paper compares with "two minimal-coordinate
integrators [28, 29]", Lee et al. 2016 and Fan et al. 2018; the 2020 paper ran "two C++
implementations ... [13, 7]" of the same two papers). This reading is ours -- neither paper
defines the orders or says which code drew which curve; the red "2nd-order" curve may equally
be Lee et al.'s integrator (:mod:`dynamics.minimal.variational`, also second order), which the
figures keep as dashed curves. As approximations, ``s = 1`` is second-order and ``s = 2``
*fourth*-order accurate (measured slopes 2.00 and 3.97, and 5.95 for ``s = 3``, in
``tests/dynamics/test_minimal_galerkin.py``); no symmetric variational integrator has odd
order, so "3rd order" cannot mean the accuracy.

Recursive derivatives of the Lagrangian (after Fan et al. §3-4, from memory)
----------------------------------------------------------------------------
Fan et al. evaluate the DEL equations in O(n) and their linearization in O(n²) by recursions
over the tree. The formulas below are our derivation of the same quantities, not a
transcription of theirs. Everything is in the world (spatial) frame, where joint ``i`` moves
every twist of its subtree by ``ad_{S_i}``: with world joint screws
``S_i = Ad_{T_0i} S_i^link``, link velocities ``V_i = V_λ(i) + S_i v_i``, world inertias
``G_i``, subtree momenta ``P_i = Σ_{l ⪰ i} G_l V_l``, composite inertias
``Y_i = Σ_{l ⪰ i} G_l``, gravity ``a_g = (0; g)`` and ``B_i = ad_{V_i} S_i``,

    ∂L/∂v_i = S_iᵀ P_i,     ∂L/∂q_i = B_iᵀ P_i + S_iᵀ Y_i a_g - k_i (q_i - q_rest,i)

(one forward and one backward pass, O(n)), and with ``W_i = Y_i S_i``,
``U_i = -ad_{S_i}ᵀ P_i + Y_i B_i`` and ``C_i = ad_{a_g} S_i`` the exact second derivatives are,
for ``m`` an ancestor of ``i`` or ``i`` itself (``m ⪯ i``),

    ∂²L/∂v_i∂v_m = W_iᵀ S_m   (= M_im, CRBA),        ∂²L/∂v_i∂q_m = W_iᵀ B_m,
    ∂²L/∂v_m∂q_i = S_mᵀ U_i   (m ≺ i),                ∂²L/∂q_i∂q_m = U_iᵀ B_m + W_iᵀ C_m - δ_im k_i,

symmetric completion for ``M`` and ``∂²L/∂q²``, zero between different branches: O(n·depth)
per node (O(n²) for a chain). These are checked against finite differences of
:func:`~dynamics.minimal.algorithms.kinetic_energy` and
:func:`~dynamics.minimal.algorithms.potential_energy` in the tests. The Newton Jacobian of the
DEL residual is then exact:

    ∂R_i/∂q^m = δ_im Δt w_i L_qq^i + w_i a_im L_qv^i + w_m a_mi L_vq^m
                + Σ_j w_j a_ji a_jm M^j / Δt - w_i a_im diag(d),

and the Newton step is a dense LU solve of the ``s·n × s·n`` system. **Cost per Newton
iteration: O(s·n·depth) for the derivatives, O(s³ n²) for the assembly, O((s·n)³) for the
solve** -- Fan et al. compute the Newton direction in O(n) by a recursive elimination, which is
not implemented here. Measured (compiled, one core, 1000 steps of an n-link pendulum at
Δt = 10 ms, tol 1e-6, ~2 Newton iterations per step): 0.11 / 0.22 ms per step at n = 30,
0.4 / 0.6 ms at n = 50, 1.1 / 2.5 ms at n = 100 for ``s = 1`` / ``s = 2``.

Solver (:func:`simulate_galerkin`)
----------------------------------
Newton's method from a second-order Taylor guess ``q^j = q_k + c_j Δt v_k + ½ (c_j Δt)² a_k``
(``v_k = M(q_k)⁻¹ p_k``, ``a_k`` the continuous acceleration at ``(q_k, v_k)``), at most
``max_iter`` (default 100, the 2020 paper: "stopped after 100 Newton steps") updates. A step
that does not reach ``tol`` ends the run: the result carries ``failed``, ``failed_step`` and
``reason`` (the papers show these failures at small tolerances and many links) unless
``raise_on_failure``. Convergence (``norm``):

``"force"`` (default)
    ``max |R| / Δt ≤ tol``: the DEL residual as a generalized force (N m, N) -- the units of
    the residual (20) that ``dynamics.maximal.Simulation(tol=...)`` bounds.
``"impulse"``
    ``max |R| ≤ tol`` (N m s, N s), the residual as written above.
``"scaled"``
    ``max |R_i,a| Δt / M_aa(q_0) ≤ tol`` (rad, m): the joint motion the residual impulse would
    cause, the measure of :mod:`dynamics.minimal.variational` (Lee et al.'s integrator).

An absolute tolerance is unreachable beyond some ``n``: the configuration is resolved to
``ε|q|`` (``ε`` the machine epsilon) and the residual changes by ``‖∂R/∂X‖ ε|q|`` across one
unit in the last place, with ``‖∂R/∂X‖ ≈ Σ_j w_j a_ji a_jm M^j/Δt ∝ M_11/Δt ∝ n³`` for a chain
of equal links. Newton then stagnates above ``tol`` and the run fails after ``max_iter``
updates -- the papers' failures at small tolerances and many links ("numerical issues in
minimal coordinates", 2023 §5.3); in maximal coordinates the corresponding entries are each
body's own ``m/Δt``.
(Evaluating ``∂L/∂q`` and ``∂L/∂v`` in link frames, as the reference backend does, or in the
world frame, as the compiled one does, gives the same floor.)

Backends: ``"compiled"`` runs the whole loop in one numba call (revolute and prismatic trees,
the only joints of the papers' comparators); ``"reference"`` is the NumPy version of the same
equations, one Python call per node and iteration (for tests; ``∂L/∂q`` and ``∂L/∂v`` there by
link-frame passes as in RNEA, ``∂L/∂q_i = (ad_{V_i} S_i)ᵀ P_i + S_iᵀ F_grav,i``, an independent
check of the world-frame formulas); ``"auto"`` picks the compiled one. Both support revolute
and prismatic joints only (the papers test revolute chains: "ball-and-socket joints ... were
not part of the implementations of these integrators").

References
----------
T. Fan, J. Schultz, T. Murphey, "Efficient computation of higher-order variational integrators
in robotic simulation and trajectory optimization", WAFR 2018 (Springer 2020, pp. 689-706);
the paper is not in this repository: section and equation numbers above are from memory.
J. E. Marsden, M. West, "Discrete mechanics and variational integrators", Acta Numerica 2001,
§2.2.6 (Galerkin integrators), §3.2 (forced DEL).
S. Ober-Blöbaum, N. Saake, "Construction and analysis of higher order Galerkin variational
integrators", Adv. Comput. Math. 41 (2015) 955-986.
E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*, 2006, §VI.6.
J. Brüdigam, Z. Manchester (2020) §3.1, §5.2 Fig. 8; J. Brüdigam et al. (2023) §2.2, §5.3
Fig. 10.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from . import spatial as sp
from .algorithms import forward_kinematics
from .configuration import as_vector, check_newton, check_run, step_forces
from .forces import joint_springs, total_energy
from .model import Data, Model
from .results import MomentumTrajectory, StepFailure
from .tree_kernels import (
    _congruence_add,
    _cross_force,
    _cross_motion,
    _dot6,
    _placements,
    _X_matrix,
    flat_model,
    require_supported,
    supports,
)

__all__ = ["PAPER_ORDERS", "NORMS", "BACKENDS", "GalerkinFailure", "GalerkinResult",
           "lobatto", "degree", "supports", "lagrangian_derivatives", "galerkin_residual",
           "galerkin_jacobian", "galerkin_jacobian_fd", "galerkin_momentum",
           "simulate_galerkin"]

#: The papers' order names -> polynomial degree ``s`` (module docstring).
PAPER_ORDERS = {2: 1, 3: 2}
#: Convergence measures of :func:`simulate_galerkin`.
NORMS = ("force", "impulse", "scaled")
BACKENDS = ("auto", "compiled", "reference")
_NORM_CODES = {"force": 0, "impulse": 1, "scaled": 2}
_FAILURE = {1: "max_iter", 2: "non-finite residual", 3: "singular Newton matrix"}


class GalerkinFailure(StepFailure):
    """A Galerkin step did not converge (``raise_on_failure=True``); carries ``result``."""


@dataclass(frozen=True)
class GalerkinResult(MomentumTrajectory):
    """Trajectory of :func:`simulate_galerkin`: the fields of
    :class:`~dynamics.minimal.results.MomentumTrajectory` (``residual`` in the measure
    ``norm``; ``reason``: ``max_iter``, non-finite residual or singular Newton matrix) and

    Attributes
    ----------
    s : int
        Polynomial degree (``s + 1`` control points / Lobatto nodes per step).
    """

    s: int


# -- quadrature ----------------------------------------------------------------------------------
def lobatto(s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gauss-Lobatto nodes ``c`` and weights ``w`` on ``[0, 1]`` (``s + 1`` points) and the
    derivative matrix ``a[j, i] = φ_i'(c_j)`` of the Lagrange basis on those nodes.

    Examples
    --------
    >>> c, w, a = lobatto(2)
    >>> c.tolist(), np.round(6 * w, 12).tolist()
    ([0.0, 0.5, 1.0], [1.0, 4.0, 1.0])
    >>> a[0].tolist()
    [-3.0, 4.0, -1.0]
    """
    if int(s) != s or s < 1:
        raise ValueError(f"s must be an integer >= 1, got {s!r}")
    s = int(s)
    Ps = np.polynomial.legendre.Legendre.basis(s)
    interior = np.sort(Ps.deriv().roots().real) if s > 1 else np.zeros(0)
    x = np.concatenate([[-1.0], interior, [1.0]])
    w = 2.0 / (s * (s + 1) * Ps(x) ** 2)
    c, w = 0.5 * (x + 1.0), 0.5 * w
    lam = np.array([1.0 / np.prod([c[i] - c[k] for k in range(s + 1) if k != i])
                    for i in range(s + 1)])
    a = np.zeros((s + 1, s + 1))
    for j in range(s + 1):
        for i in range(s + 1):
            if i != j:
                a[j, i] = lam[i] / lam[j] / (c[j] - c[i])
        a[j, j] = -a[j].sum()
    return c, w, a


def degree(order: int) -> int:
    """Polynomial degree ``s`` of the papers' "``order``-order" integrator (2 -> 1, 3 -> 2)."""
    if order not in PAPER_ORDERS:
        raise ValueError(f"order must be one of {tuple(PAPER_ORDERS)}, got {order!r}")
    return PAPER_ORDERS[order]


def _check_model(model: Model) -> None:
    require_supported(model, "the Galerkin integrators")


# -- reference (NumPy) derivatives of the Lagrangian ---------------------------------------------
def _ancestors(model: Model) -> np.ndarray:
    """``A[i, m]``: ``m`` is ``i`` or an ancestor of ``i``."""
    cached = model._galerkin_ancestors
    if cached is None:
        n = model.njoints
        cached = np.zeros((n, n), dtype=bool)
        for i in range(n):
            m = i
            while m >= 0:
                cached[i, m] = True
                m = model.parents[m]
        model._galerkin_ancestors = cached
    return cached


def _link_terms(model: Model, data: Data, q: np.ndarray, v: np.ndarray):
    """``∂L/∂q`` and ``∂L/∂v`` by link-frame passes (after ``forward_kinematics``): the same
    pairings as the world-frame formulas, without the cancellation of moments about the world
    origin (lower rounding for long chains)."""
    n = model.njoints
    X = data.X_link_parent
    V, g = np.empty((n, 6)), np.empty((n, 6))
    g_world = np.concatenate([np.zeros(3), model.gravity])
    for i, par in enumerate(model.parents):
        V[i] = model.joints[i].S[:, 0] * v[i] + (X[i] @ V[par] if par >= 0 else 0.0)
        g[i] = X[i] @ (g[par] if par >= 0 else g_world)
    P = np.einsum("nij,nj->ni", model.inertias, V)
    F = np.einsum("nij,nj->ni", model.inertias, g)
    for i in range(n - 1, -1, -1):
        par = model.parents[i]
        if par >= 0:
            P[par] += X[i].T @ P[i]
            F[par] += X[i].T @ F[i]
    S = np.array([jm.S[:, 0] for jm in model.joints]).reshape(n, 6)
    B = np.array([sp.ad(V[i]) @ S[i] for i in range(n)]).reshape(n, 6)
    springs = joint_springs(model)
    return (np.einsum("ni,ni->n", B, P) + np.einsum("ni,ni->n", S, F)
            - springs.stiffness * (q - springs.rest)), np.einsum("ni,ni->n", S, P)


def _node_terms(model: Model, data: Data, q: np.ndarray, v: np.ndarray, hessians: bool):
    """``∂L/∂q``, ``∂L/∂v`` (link-frame passes) and, with ``hessians``, the second derivatives
    by the world-frame formulas of the module docstring at one quadrature node."""
    forward_kinematics(model, data, q)
    L_q, L_v = _link_terms(model, data, q, v)
    out = {"L_q": L_q, "L_v": L_v}
    if not hessians:
        return out
    n = model.njoints
    S, G = np.empty((n, 6)), np.empty((n, 6, 6))
    for i, jm in enumerate(model.joints):
        T = data.T_world_link[i]
        S[i] = sp.Ad(T) @ jm.S[:, 0]
        X = sp.Ad_inv(T)
        G[i] = X.T @ model.inertias[i] @ X
    V = np.empty((n, 6))
    for i, par in enumerate(model.parents):
        V[i] = S[i] * v[i] + (V[par] if par >= 0 else 0.0)
    P, Y = np.einsum("nij,nj->ni", G, V), G.copy()
    for i in range(n - 1, -1, -1):
        par = model.parents[i]
        if par >= 0:
            P[par] += P[i]
            Y[par] += Y[i]
    B = np.array([sp.ad(V[i]) @ S[i] for i in range(n)]).reshape(n, 6)
    a_g = np.concatenate([np.zeros(3), model.gravity])
    W = np.einsum("nij,nj->ni", Y, S)
    stiffness = joint_springs(model).stiffness
    A = _ancestors(model)
    strict_up = A.T & ~np.eye(n, dtype=bool)
    U = np.array([-sp.ad(S[i]).T @ P[i] + Y[i] @ B[i] for i in range(n)]).reshape(n, 6)
    C = np.array([sp.ad(a_g) @ S[i] for i in range(n)]).reshape(n, 6)
    low = A * (W @ S.T)
    out["M"] = low + low.T - np.diag(np.diag(low))
    out["L_vq"] = A * (W @ B.T) + strict_up * (S @ U.T)
    low = A * (U @ B.T + W @ C.T)
    out["L_qq"] = low + low.T - np.diag(np.diag(low)) - np.diag(stiffness)
    return out


def lagrangian_derivatives(model: Model, data: Data, q, v, hessians: bool = False) -> dict:
    """First (and second) derivatives of ``L(q, v) = T - V_gravity - V_springs`` by the
    world-frame recursions of the module docstring (NumPy reference).

    Returns
    -------
    dict
        ``"L_q"``, ``"L_v"`` (nv,) and, with ``hessians``, ``"M"`` (``∂²L/∂v²``), ``"L_vq"``
        (``∂²L/∂v∂q``, row ``v``, column ``q``; ``L_qv`` is its transpose) and ``"L_qq"``.

    Examples
    --------
    >>> from dynamics import models
    >>> from dynamics.minimal import crba
    >>> model = Model(models.pendulum(3))
    >>> data = model.create_data()
    >>> q, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -0.3])
    >>> d = lagrangian_derivatives(model, data, q, v, hessians=True)
    >>> bool(np.allclose(d["L_v"], crba(model, data, q) @ v))
    True
    """
    _check_model(model)
    q = as_vector(q, model.nv, "q", "model.nv")
    v = as_vector(v, model.nv, "v", "model.nv")
    return _node_terms(model, data, q, v, hessians)


def _forces(model: Model, tau, v):
    return tau - joint_springs(model).damping * v


def _nodes(q, X, dt, a):
    Q = np.vstack([q[None, :], X])
    return Q, (a @ Q) / dt


def _prepare(model, q, p, X, dt, s, tau):
    _check_model(model)
    n = model.nv
    q = as_vector(q, n, "q", "model.nv")
    p = as_vector(p, n, "p", "model.nv")
    X = np.asarray(X, dtype=float)
    if X.shape != (s, n):
        raise ValueError(f"X must have shape (s, model.nv) = ({s}, {n}), got {X.shape}")
    tau = np.zeros(n) if tau is None else as_vector(tau, n, "tau", "model.nv")
    return q, p, X, tau


def galerkin_residual(model: Model, data: Data, q, p, X, dt: float, s: int = 1,
                      tau=None) -> np.ndarray:
    """DEL residual ``(R_0, …, R_{s-1})`` (s, nv) of the module docstring for the unknown
    control points ``X = (q_k^1, …, q_k^s)`` (s, nv) given ``q_k`` and ``p_k`` (NumPy
    reference, O(s·n)).

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(2))
    >>> R = galerkin_residual(model, model.create_data(), [0.0, 0.0], [0.0, 0.0],
    ...                       [[0.0, 0.0]], 0.01)           # hanging at rest
    >>> bool(np.allclose(R, 0.0))
    True
    """
    q, p, X, tau = _prepare(model, q, p, X, dt, s, tau)
    c, w, a = lobatto(s)
    Q, Vn = _nodes(q, X, dt, a)
    terms = [_node_terms(model, data, Q[j], Vn[j], False) for j in range(s + 1)]
    Lv = np.array([t["L_v"] for t in terms])
    R = np.empty((s, model.nv))
    for i in range(s):
        R[i] = (dt * w[i] * (terms[i]["L_q"] + _forces(model, tau, Vn[i]))
                + np.einsum("j,j,jn->n", w, a[:, i], Lv))
    R[0] += p
    return R


def galerkin_momentum(model: Model, data: Data, q, p, X, dt: float, s: int = 1,
                      tau=None) -> np.ndarray:
    """``p_{k+1} = D_s L_d + Δt w_s F^s`` (nv,) at the control points ``X`` (discrete Legendre
    transform of the step)."""
    q, p, X, tau = _prepare(model, q, p, X, dt, s, tau)
    c, w, a = lobatto(s)
    Q, Vn = _nodes(q, X, dt, a)
    terms = [_node_terms(model, data, Q[j], Vn[j], False) for j in range(s + 1)]
    Lv = np.array([t["L_v"] for t in terms])
    return (dt * w[s] * (terms[s]["L_q"] + _forces(model, tau, Vn[s]))
            + np.einsum("j,j,jn->n", w, a[:, s], Lv))


def galerkin_jacobian(model: Model, data: Data, q, p, X, dt: float, s: int = 1,
                      tau=None) -> np.ndarray:
    """Exact Jacobian ``∂R/∂X`` (s·nv, s·nv) of :func:`galerkin_residual` (module docstring;
    rows and columns ordered ``(node, joint)``), NumPy reference.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(3))
    >>> data, dt = model.create_data(), 0.01
    >>> q, p = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.2, -0.1])
    >>> X = q + np.array([[0.004, -0.002, 0.001], [0.009, -0.003, 0.001]])
    >>> J = galerkin_jacobian(model, data, q, p, X, dt, s=2)
    >>> fd = galerkin_jacobian_fd(model, data, q, p, X, dt, s=2)
    >>> bool(np.abs(J - fd).max() < 1e-7 * np.abs(J).max())
    True
    """
    q, p, X, tau = _prepare(model, q, p, X, dt, s, tau)
    n = model.nv
    c, w, a = lobatto(s)
    Q, Vn = _nodes(q, X, dt, a)
    H = [_node_terms(model, data, Q[j], Vn[j], True) for j in range(s + 1)]
    D = np.diag(joint_springs(model).damping)
    J = np.zeros((s * n, s * n))
    for i in range(s):
        for m in range(1, s + 1):
            blk = (w[i] * a[i, m] * (H[i]["L_vq"].T - D) + w[m] * a[m, i] * H[m]["L_vq"]
                   + sum(w[j] * a[j, i] * a[j, m] * H[j]["M"] for j in range(s + 1)) / dt)
            if i == m:
                blk = blk + dt * w[i] * H[i]["L_qq"]
            J[i * n:(i + 1) * n, (m - 1) * n:m * n] = blk
    return J


def galerkin_jacobian_fd(model: Model, data: Data, q, p, X, dt: float, s: int = 1, tau=None,
                         h: float = 1e-6) -> np.ndarray:
    """:func:`galerkin_jacobian` by central differences of :func:`galerkin_residual`."""
    q, p, X, tau = _prepare(model, q, p, X, dt, s, tau)
    x = X.ravel()
    J = np.empty((x.size, x.size))
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        J[:, k] = (galerkin_residual(model, data, q, p, (x + e).reshape(X.shape), dt, s, tau)
                   - galerkin_residual(model, data, q, p, (x - e).reshape(X.shape), dt, s, tau)
                   ).ravel() / (2.0 * h)
    return J


# -- reference simulation loop ---------------------------------------------------------------
def _taylor_guess(model, data, q, v, tau, dt, c):
    d = _node_terms(model, data, q, v, True)
    acc = np.linalg.solve(d["M"], d["L_q"] + _forces(model, tau, v) - d["L_vq"] @ v)
    return np.array([q + cj * dt * v + 0.5 * (cj * dt) ** 2 * acc for cj in c[1:]])


def _simulate_reference(model, q0, v0, p0, dt, steps, s, tol, max_iter, weights, tau_k):
    n = model.nv
    data = model.create_data()
    c, w, a = lobatto(s)
    Q, Vs, Ps = np.empty((steps + 1, n)), np.empty((steps + 1, n)), np.empty((steps + 1, n))
    E, iters, resid = np.empty(steps + 1), np.zeros(steps, dtype=np.int64), np.zeros(steps)
    q, v, p = q0.copy(), v0.copy(), p0.copy()
    Q[0], Vs[0], Ps[0], E[0] = q, v, p, total_energy(model, data, q, v)
    for k in range(steps):
        X = _taylor_guess(model, data, q, v, tau_k[k], dt, c)
        it, status = 0, 0
        while True:
            R = galerkin_residual(model, data, q, p, X, dt, s, tau_k[k])
            err = float(np.max(np.abs(R) * weights))
            if err <= tol:
                break
            if not np.isfinite(err):
                status = 2
            elif it == max_iter:
                status = 1
            if status:
                iters[k], resid[k] = it, err
                return k, status, err, (Q, Vs, Ps, E, iters, resid)
            J = galerkin_jacobian(model, data, q, p, X, dt, s, tau_k[k])
            try:
                X = X - np.linalg.solve(J, R.ravel()).reshape(s, n)
            except np.linalg.LinAlgError:
                iters[k], resid[k] = it, err
                return k, 3, err, (Q, Vs, Ps, E, iters, resid)
            it += 1
        iters[k], resid[k] = it, err
        p = galerkin_momentum(model, data, q, p, X, dt, s, tau_k[k])
        q = X[-1].copy()
        v = np.linalg.solve(lagrangian_derivatives(model, data, q, np.zeros(n), True)["M"], p)
        Q[k + 1], Vs[k + 1], Ps[k + 1], E[k + 1] = q, v, p, total_energy(model, data, q, v)
    return -1, 0, 0.0, (Q, Vs, Ps, E, iters, resid)


# -- compiled kernels ------------------------------------------------------------------------
@njit(cache=True)
def _kinematics(parent, jtype, axis, PR, Pp, G, gvec, q, R, p, Rw, pw, S, Gw, Y, grav, X, Bm):
    """World placements, screws ``S_i``, inertias ``G_i``, composite inertias ``Y_i`` and
    ``grav_i = S_iᵀ Y_i a_g`` at ``q``."""
    n = q.shape[0]
    _placements(parent, jtype, axis, PR, Pp, q, R, p)
    for i in range(n):
        k = parent[i]
        if k >= 0:
            for r in range(3):
                pw[i, r] = pw[k, r]
                for col in range(3):
                    Rw[i, r, col] = 0.0
                for m in range(3):
                    pw[i, r] += Rw[k, r, m] * p[i, m]
                    for col in range(3):
                        Rw[i, r, col] += Rw[k, r, m] * R[i, m, col]
        else:
            for r in range(3):
                pw[i, r] = p[i, r]
                for col in range(3):
                    Rw[i, r, col] = R[i, r, col]
        a0 = Rw[i, 0, 0] * axis[i, 0] + Rw[i, 0, 1] * axis[i, 1] + Rw[i, 0, 2] * axis[i, 2]
        a1 = Rw[i, 1, 0] * axis[i, 0] + Rw[i, 1, 1] * axis[i, 1] + Rw[i, 1, 2] * axis[i, 2]
        a2 = Rw[i, 2, 0] * axis[i, 0] + Rw[i, 2, 1] * axis[i, 1] + Rw[i, 2, 2] * axis[i, 2]
        if jtype[i] == 0:
            S[i, 0], S[i, 1], S[i, 2] = a0, a1, a2
            S[i, 3] = pw[i, 1] * a2 - pw[i, 2] * a1
            S[i, 4] = pw[i, 2] * a0 - pw[i, 0] * a2
            S[i, 5] = pw[i, 0] * a1 - pw[i, 1] * a0
        else:
            S[i, 0] = S[i, 1] = S[i, 2] = 0.0
            S[i, 3], S[i, 4], S[i, 5] = a0, a1, a2
        _X_matrix(Rw[i], pw[i], X)                 # Ad(T_0i)⁻¹
        for r in range(6):
            for col in range(6):
                Gw[i, r, col] = 0.0
        _congruence_add(X, G[i], Bm, Gw[i])
    for i in range(n):
        for r in range(6):
            for col in range(6):
                Y[i, r, col] = Gw[i, r, col]
    for i in range(n - 1, -1, -1):
        k = parent[i]
        if k >= 0:
            for r in range(6):
                for col in range(6):
                    Y[k, r, col] += Y[i, r, col]
    for i in range(n):
        g = 0.0
        for r in range(6):
            g += S[i, r] * (Y[i, r, 3] * gvec[0] + Y[i, r, 4] * gvec[1] + Y[i, r, 5] * gvec[2])
        grav[i] = g


@njit(cache=True)
def _velocity(parent, S, Gw, grav, stiffness, rest, q, v, V, P, B, Lq, Lv):
    """``V_i``, ``P_i``, ``B_i``, ``∂L/∂q`` and ``∂L/∂v`` at ``(q, v)`` (O(n))."""
    n = v.shape[0]
    for i in range(n):
        k = parent[i]
        for d in range(6):
            V[i, d] = S[i, d] * v[i] + (V[k, d] if k >= 0 else 0.0)
        for d in range(6):
            P[i, d] = _dot6(Gw[i, d], V[i])
    for i in range(n - 1, -1, -1):
        k = parent[i]
        if k >= 0:
            for d in range(6):
                P[k, d] += P[i, d]
    for i in range(n):
        _cross_motion(V[i], S[i], B[i])
        Lv[i] = _dot6(S[i], P[i])
        Lq[i] = _dot6(B[i], P[i]) + grav[i] - stiffness[i] * (q[i] - rest[i])


@njit(cache=True)
def _mass(parent, S, Y, M):
    n = S.shape[0]
    W = np.empty(6)
    for i in range(n):
        for j in range(n):
            M[i, j] = 0.0
    for i in range(n):
        for d in range(6):
            W[d] = _dot6(Y[i, d], S[i])
        m = i
        while m >= 0:
            x = _dot6(W, S[m])
            M[i, m] = x
            M[m, i] = x
            m = parent[m]


@njit(cache=True)
def _hessians(parent, S, Y, P, B, a_g, stiffness, W, U, C, tmp, M, Lvq, Lqq):
    """``M``, ``∂²L/∂v∂q`` and ``∂²L/∂q²`` (module docstring), O(n·depth) plus zeroing."""
    n = S.shape[0]
    for i in range(n):
        for d in range(6):
            W[i, d] = _dot6(Y[i, d], S[i])
        _cross_force(S[i], P[i], U[i])
        for d in range(6):
            U[i, d] += _dot6(Y[i, d], B[i])
        _cross_motion(a_g, S[i], C[i])
    for i in range(n):
        for j in range(n):
            M[i, j] = 0.0
            Lvq[i, j] = 0.0
            Lqq[i, j] = 0.0
    for i in range(n):
        m = i
        while m >= 0:
            x = _dot6(W[i], S[m])
            M[i, m] = x
            M[m, i] = x
            Lvq[i, m] = _dot6(W[i], B[m])
            x = _dot6(U[i], B[m]) + _dot6(W[i], C[m])
            Lqq[i, m] = x
            Lqq[m, i] = x
            if m != i:
                Lvq[m, i] = _dot6(S[m], U[i])
            m = parent[m]
        Lqq[i, i] -= stiffness[i]


@njit(cache=True)
def _potential_world(Rw, pw, mass, first_moment, gvec, stiffness, rest, q):
    total = 0.0
    for i in range(q.shape[0]):
        for r in range(3):
            c = mass[i] * pw[i, r] + (Rw[i, r, 0] * first_moment[i, 0]
                                      + Rw[i, r, 1] * first_moment[i, 1]
                                      + Rw[i, r, 2] * first_moment[i, 2])
            total -= gvec[r] * c
        total += 0.5 * stiffness[i] * (q[i] - rest[i]) ** 2
    return total


class _Nodes:
    """Work arrays of the ``s + 1`` quadrature nodes for the compiled kernels."""

    def __init__(self, s: int, n: int):
        self.R, self.p = np.empty((s + 1, n, 3, 3)), np.empty((s + 1, n, 3))
        self.Rw, self.pw = np.empty((s + 1, n, 3, 3)), np.empty((s + 1, n, 3))
        self.S, self.V, self.P, self.B = (np.empty((s + 1, n, 6)) for _ in range(4))
        self.Gw, self.Y = np.empty((s + 1, n, 6, 6)), np.empty((s + 1, n, 6, 6))
        self.grav, self.Lq, self.Lv = np.empty((s + 1, n)), np.empty((s + 1, n)), np.empty(
            (s + 1, n))
        self.M, self.Lvq, self.Lqq = (np.empty((s + 1, n, n)) for _ in range(3))


@njit(cache=True)
def _evaluate(parent, jtype, axis, PR, Pp, G, gvec, stiffness, damping, rest, first, Qn, Vn,
              p, tau, dt, w, a, R, p_, Rw, pw, S, Gw, Y, grav, V, P, B, Lq, Lv, X6, B6, Res):
    """Node velocities ``v^j``, the kinematics of nodes ``first … s`` (node 0's are kept
    between iterations), ``∂L/∂q``, ``∂L/∂v`` at every node and the residual ``Res``."""
    s = Qn.shape[0] - 1
    n = Qn.shape[1]
    for j in range(s + 1):
        for i in range(n):
            x = 0.0
            for m in range(s + 1):
                x += a[j, m] * Qn[m, i]
            Vn[j, i] = x / dt
    for j in range(s + 1):
        if j >= first:
            _kinematics(parent, jtype, axis, PR, Pp, G, gvec, Qn[j], R[j], p_[j], Rw[j], pw[j],
                        S[j], Gw[j], Y[j], grav[j], X6, B6)
        _velocity(parent, S[j], Gw[j], grav[j], stiffness, rest, Qn[j], Vn[j], V[j], P[j], B[j],
                  Lq[j], Lv[j])
    for i in range(s):
        for r in range(n):
            x = dt * w[i] * (Lq[i, r] + tau[r] - damping[r] * Vn[i, r])
            for j in range(s + 1):
                x += w[j] * a[j, i] * Lv[j, r]
            if i == 0:
                x += p[r]
            Res[i * n + r] = x


@njit(cache=True)
def _jacobian(parent, gvec, stiffness, damping, dt, w, a, S, Y, P, B, M, Lvq, Lqq, Wk, Uk, Ck,
              tmp, J):
    """Hessians of ``L`` at every node (after :func:`_evaluate`) and the exact Jacobian
    ``∂R/∂X`` (module docstring) into ``J``."""
    s = S.shape[0] - 1
    n = S.shape[1]
    a_g = np.zeros(6)
    a_g[3:] = gvec
    for j in range(s + 1):
        _hessians(parent, S[j], Y[j], P[j], B[j], a_g, stiffness, Wk, Uk, Ck, tmp, M[j], Lvq[j],
                  Lqq[j])
    for i in range(s):
        for m in range(1, s + 1):
            f1, f2 = w[i] * a[i, m], w[m] * a[m, i]
            for r in range(n):
                for col in range(n):
                    x = f1 * Lvq[i, col, r] + f2 * Lvq[m, r, col]
                    for j in range(s + 1):
                        x += w[j] * a[j, i] * a[j, m] * M[j, r, col] / dt
                    if i == m:
                        x += dt * w[i] * Lqq[i, r, col]
                    J[i * n + r, (m - 1) * n + col] = x
                J[i * n + r, (m - 1) * n + r] -= f1 * damping[r]


@njit(cache=True)
def _simulate(parent, jtype, axis, PR, Pp, G, mass, first_moment, gvec, stiffness, damping,
              rest, q0, v0, dt, steps, c, w, a, tol, max_iter, weights, tau_k,
              R, p_, Rw, pw, S, Gw, Y, grav, V, P, B, Lq, Lv, M, Lvq, Lqq,
              Qout, Vout, Pout, E, iters, resid):
    """The whole Galerkin simulation; returns ``(status, step, err)``: status 0 done, 1
    ``max_iter``, 2 non-finite residual, 3 singular Newton matrix at ``step``."""
    n = q0.shape[0]
    s = c.shape[0] - 1
    N = s * n
    Wk, Uk, Ck = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    X6, B6, tmp = np.empty((6, 6)), np.empty((6, 6)), np.empty(6)
    Qn, Vn = np.empty((s + 1, n)), np.empty((s + 1, n))
    Res = np.empty(N)
    J = np.empty((N, N))
    a_g = np.zeros(6)
    a_g[3:] = gvec
    q, v = q0.copy(), v0.copy()
    _kinematics(parent, jtype, axis, PR, Pp, G, gvec, q, R[0], p_[0], Rw[0], pw[0], S[0],
                Gw[0], Y[0], grav[0], X6, B6)
    _mass(parent, S[0], Y[0], M[0])
    p = M[0] @ v
    Qout[0], Vout[0], Pout[0] = q, v, p
    E[0] = 0.5 * (v @ p) + _potential_world(Rw[0], pw[0], mass, first_moment, gvec, stiffness,
                                             rest, q)
    for k in range(steps):
        tau = tau_k[k]
        # Taylor guess from (q_k, v_k): node 0's kinematics are those of q_k
        _velocity(parent, S[0], Gw[0], grav[0], stiffness, rest, q, v, V[0], P[0], B[0], Lq[0],
                  Lv[0])
        _hessians(parent, S[0], Y[0], P[0], B[0], a_g, stiffness, Wk, Uk, Ck, tmp, M[0],
                  Lvq[0], Lqq[0])
        acc = np.linalg.solve(M[0], Lq[0] + tau - damping * v - Lvq[0] @ v)
        Qn[0] = q
        for j in range(1, s + 1):
            h = c[j] * dt
            for i in range(n):
                Qn[j, i] = q[i] + h * v[i] + 0.5 * h * h * acc[i]
        it = 0
        while True:
            _evaluate(parent, jtype, axis, PR, Pp, G, gvec, stiffness, damping, rest, 1, Qn, Vn,
                      p, tau, dt, w, a, R, p_, Rw, pw, S, Gw, Y, grav, V, P, B, Lq, Lv, X6, B6,
                      Res)
            err = 0.0
            for i in range(s):
                for r in range(n):
                    e = abs(Res[i * n + r]) * weights[r]
                    if not e <= err:           # NaN propagates
                        err = e
            if err <= tol:
                break
            if not np.isfinite(err):
                iters[k], resid[k] = it, err
                return 2, k, err
            if it == max_iter:
                iters[k], resid[k] = it, err
                return 1, k, err
            _jacobian(parent, gvec, stiffness, damping, dt, w, a, S, Y, P, B, M, Lvq, Lqq, Wk,
                      Uk, Ck, tmp, J)
            step = np.linalg.solve(J, Res)
            if not np.all(np.isfinite(step)):
                iters[k], resid[k] = it, err
                return 3, k, err
            for j in range(1, s + 1):
                for i in range(n):
                    Qn[j, i] -= step[(j - 1) * n + i]
            it += 1
        iters[k], resid[k] = it, err
        p_new = np.empty(n)
        for r in range(n):
            x = dt * w[s] * (Lq[s, r] + tau[r] - damping[r] * Vn[s, r])
            for j in range(s + 1):
                x += w[j] * a[j, s] * Lv[j, r]
            p_new[r] = x
        # node s becomes node 0 of the next step
        Rw[0] = Rw[s]
        pw[0] = pw[s]
        S[0] = S[s]
        Gw[0] = Gw[s]
        Y[0] = Y[s]
        grav[0] = grav[s]
        q, p = Qn[s].copy(), p_new
        _mass(parent, S[0], Y[0], M[0])
        v = np.linalg.solve(M[0], p)
        Qout[k + 1], Vout[k + 1], Pout[k + 1] = q, v, p
        E[k + 1] = 0.5 * (v @ p) + _potential_world(Rw[0], pw[0], mass, first_moment, gvec,
                                                     stiffness, rest, q)
    return 0, -1, 0.0


def _compiled_problem(model, q, p, X, dt, s, tau):
    """Residual (s, nv) and Jacobian of the compiled kernels at ``X`` (for tests)."""
    q, p, X, tau = _prepare(model, q, p, X, dt, s, tau)
    fm = flat_model(model)
    n = model.nv
    c, w, a = lobatto(s)
    nd = _Nodes(s, n)
    Qn = np.ascontiguousarray(np.vstack([q[None, :], X]))
    Res, J = np.empty(s * n), np.empty((s * n, s * n))
    _evaluate(fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, fm.inertia, fm.gravity, fm.stiffness,
              fm.damping, fm.rest, 0, Qn, np.empty((s + 1, n)), p, tau, float(dt), w, a, nd.R,
              nd.p, nd.Rw, nd.pw, nd.S, nd.Gw, nd.Y, nd.grav, nd.V, nd.P, nd.B, nd.Lq, nd.Lv,
              np.empty((6, 6)), np.empty((6, 6)), Res)
    _jacobian(fm.parent, fm.gravity, fm.stiffness, fm.damping, float(dt), w, a, nd.S, nd.Y, nd.P,
              nd.B, nd.M, nd.Lvq, nd.Lqq, np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)),
              np.empty(6), J)
    return Res.reshape(s, n), J


# -- driver ---------------------------------------------------------------------------------
def simulate_galerkin(model: Model, q0, v0, dt: float, steps: int, *, s: int = 1,
                      tol: float = 1e-10, max_iter: int = 100, norm: str = "force",
                      backend: str = "auto", tau=None,
                      raise_on_failure: bool = False) -> GalerkinResult:
    """Simulate ``steps`` steps of the degree-``s`` Lobatto Galerkin variational integrator
    (Fan et al. 2018; module docstring) solved by Newton's method with the exact Jacobian.

    Parameters
    ----------
    model : Model
        Revolute and prismatic joints only.
    q0, v0 : (nv,) arrays
        Initial state; ``p_0 = M(q_0) v_0``.
    dt : float
    steps : int
    s : int
        Polynomial degree: 1 is the papers' "2nd-order", 2 their "3rd-order" integrator
        (:data:`PAPER_ORDERS`, :func:`degree`); accurate to order ``2s``.
    tol : float
        Newton tolerance on the convergence measure ``norm``.
    max_iter : int
        Newton updates per step before the run is declared failed (100 as in the 2020 paper).
    norm : {"force", "impulse", "scaled"}
        Convergence measure (module docstring; default: max-norm of the residual in N m / N).
    backend : {"auto", "compiled", "reference"}
    tau : (nv,) or (steps, nv) array, optional
        Joint forces besides springs and dampers, constant or held over each step.
    raise_on_failure : bool
        Raise :class:`GalerkinFailure` instead of returning a result with ``failed``.

    Returns
    -------
    GalerkinResult
        Truncated at the failing step when ``failed``.

    Raises
    ------
    ValueError
        Unsupported joints, unknown norm or backend, ``s < 1``, wrong lengths.
    GalerkinFailure
        Only with ``raise_on_failure``.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(2))
    >>> res = simulate_galerkin(model, [1.0, 0.0], [0.0, 0.0], 1e-2, 100, s=2)
    >>> res.failed, int(res.iterations.max()) <= 4, bool(np.ptp(res.energy) < 1e-6)
    (False, True, True)
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    check_newton(tol, max_iter)
    c, w, a = lobatto(s)
    s = int(s)
    _check_model(model)
    steps, q0, v0 = check_run(model, q0, v0, dt, steps)
    n = model.nv
    tau_k = step_forces(tau, steps, n)
    M0 = lagrangian_derivatives(model, model.create_data(), q0, np.zeros(n), True)["M"]
    weights = {"force": np.full(n, 1.0 / dt), "impulse": np.ones(n),
               "scaled": dt / np.diag(M0)}[norm]
    method = f"galerkin-s{s}"
    start = time.perf_counter()
    if backend == "reference":
        status_step, status, err, arrays = _simulate_reference(
            model, q0, v0, M0 @ v0, dt, steps, s, tol, int(max_iter), weights, tau_k)
    else:
        fm = flat_model(model)
        nd = _Nodes(s, n)
        arrays = (np.empty((steps + 1, n)), np.empty((steps + 1, n)), np.empty((steps + 1, n)),
                  np.empty(steps + 1), np.zeros(steps, dtype=np.int64), np.zeros(steps))
        status, status_step, err = _simulate(
            fm.parent, fm.jtype, fm.axis, fm.PR, fm.Pp, fm.inertia, fm.mass, fm.first_moment,
            fm.gravity, fm.stiffness, fm.damping, fm.rest, q0, v0, float(dt), steps, c, w, a,
            float(tol), int(max_iter), weights, tau_k, nd.R, nd.p, nd.Rw, nd.pw, nd.S, nd.Gw,
            nd.Y, nd.grav, nd.V, nd.P, nd.B, nd.Lq, nd.Lv, nd.M, nd.Lvq, nd.Lqq, *arrays)
        status_step = int(status_step)
    seconds = time.perf_counter() - start
    Q, Vs, Ps, E, iters, resid = arrays
    done = steps if status == 0 else status_step
    reason = ""
    if status:
        reason = (f"step {done} (t = {done * dt:g} s): {_FAILURE[int(status)]} after "
                  f"{int(iters[done])} Newton updates, {norm} residual {err:.3g} > tol {tol:g}")
    res = GalerkinResult(t=dt * np.arange(done + 1), q=Q[:done + 1], v=Vs[:done + 1],
                         p=Ps[:done + 1], energy=E[:done + 1], iterations=iters[:done],
                         residual=resid[:done], failed=bool(status),
                         failed_step=done if status else None, reason=reason, seconds=seconds,
                         method=method, s=s)
    if status and raise_on_failure:
        raise GalerkinFailure(f"{method}: {reason}", res)
    return res
