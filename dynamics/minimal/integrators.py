"""Explicit time integrators on the configuration manifold, built on :func:`aba` and
:func:`integrate`, and :func:`simulate`, the common driver (also of the variational solvers).

State ``(q, v)``: ``q`` on the joints' manifolds (quaternions, SE(3)), ``v`` the joint
velocities (link-frame angular / linear velocities for spherical and floating joints). Joint
forces are ``controller(t, q, v)`` (optional) plus the spec's springs and dampers
(:func:`~dynamics.minimal.forces.joint_forces`).

Methods
-------
``"euler"``
    Explicit Euler: ``q' = q ⊕ Δt v``, ``v' = v + Δt a(q, v)``. First order, gains energy.
``"semi_implicit_euler"``
    Symplectic (semi-implicit) Euler: ``v' = v + Δt a(q, v)``, ``q' = q ⊕ Δt v'``. First
    order; the baseline of Lee et al. (2016) Fig. 2b.
``"rk4"``
    Runge-Kutta-Munthe-Kaas of order 4: classical RK4 for ``(δ, v)`` in the tangent space at the
    step start, ``q(t) = q_k ⊕ δ(t)``, ``δ' = dexp⁻¹_{-δ}(v)`` per joint (identity for revolute
    and prismatic joints, the SO(3) / SE(3) / SE(2) ``dlog`` for spherical, floating and planar
    joints), so the
    method is fourth order on every joint type and quaternions stay unit.
``"riqn"``, ``"newton"``, ``"broyden"``
    The variational integrator of Lee et al. (2016) with the given root finder
    (:func:`dynamics.minimal.variational.simulate_variational`).

References
----------
H. Munthe-Kaas, "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999).
E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*, 2006, §IV.8.
J. Lee, C. K. Liu, F. C. Park, S. S. Srinivasa (2016), §4.2 (semi-implicit Euler baseline).
"""
from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable

import numpy as np

from . import spatial as sp
from .algorithms import aba
from .configuration import as_vector, check_configuration, check_run, integrate
from .forces import joint_forces, joint_springs, spring_energy, total_energy
from .model import Data, Model
from .results import DivergenceError, SimulationResult
from .variational import BACKENDS, simulate_variational

__all__ = ["EXPLICIT_METHODS", "VARIATIONAL_METHODS", "BACKENDS", "SimulationResult", "step",
           "simulate", "tangent_rate"]

EXPLICIT_METHODS = ("euler", "semi_implicit_euler", "rk4")
VARIATIONAL_METHODS = ("riqn", "newton", "broyden")

Controller = Callable[[float, np.ndarray, np.ndarray], np.ndarray]


def tangent_rate(model: Model, delta: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``δ'`` of ``q(t) = q_k ⊕ δ(t)`` moving with joint velocity ``v``: ``dexp⁻¹_{-δ}(v)`` per
    joint (``v`` itself for revolute and prismatic joints)."""
    out = np.array(v, dtype=float)
    for jm in model.joints:
        s = jm.v_slice
        if jm.type == "spherical":
            out[s] = sp.dlog_so3(-delta[s]) @ v[s]
        elif jm.type == "floating":
            # v = (linear; angular) -> twist (angular; linear) and back
            d, w = delta[s], v[s]
            twist = sp.dlog(-np.concatenate([d[3:], d[:3]])) @ np.concatenate([w[3:], w[:3]])
            out[s] = np.concatenate([twist[3:], twist[:3]])
        elif jm.type == "planar":
            # the SE(3) dlog restricted to the planar subalgebra spanned by S's columns
            S = jm.S
            out[s] = S.T @ sp.dlog(-S @ delta[s]) @ (S @ v[s])
    return out


@functools.cache
def _kernel_modules():
    """``(tree_kernels, multi_dof_kernels)``, imported on first use (they import numba)."""
    from . import multi_dof_kernels, tree_kernels

    return tree_kernels, multi_dof_kernels


def _compiled_kernels(model: Model, backend: str):
    """``(aba, integrate, tangent_rate)`` of the chosen backend: the NumPy reference, or
    compiled (:mod:`.tree_kernels`' ABA for revolute / prismatic trees, otherwise
    :mod:`.multi_dof_kernels`', which also has ``⊕`` and ``tangent_rate`` for every built-in
    joint); ``"auto"`` takes the compiled ones when the model allows them, ``"compiled"``
    raises ValueError naming the joint otherwise."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "reference":
        return aba, integrate, tangent_rate
    tree_kernels, mk = _kernel_modules()
    # the flat arrays cached on the model say which kernels took it before (no joint loop)
    if model._flat_model is not None:
        return tree_kernels.aba, mk.integrate, mk.tangent_rate
    if model._multi_dof_model is not None:
        return mk.aba, mk.integrate, mk.tangent_rate
    if tree_kernels.supports(model):
        tree_kernels.flat_model(model)
        mk.multi_dof_model(model)
        return tree_kernels.aba, mk.integrate, mk.tangent_rate
    if backend == "auto" and not mk.supports(model):
        return aba, integrate, tangent_rate
    mk.multi_dof_model(model)                   # raises for unsupported joints
    return mk.aba, mk.integrate, mk.tangent_rate


def _acceleration(model, data, t, q, v, controller, forward=aba):
    tau = joint_forces(model, q, v)
    if controller is not None:
        tau = tau + as_vector(controller(t, q, v), model.nv, "controller(t, q, v)", "model.nv")
    return forward(model, data, q, v, tau)


def step(model: Model, data: Data, q, v, dt: float, method: str = "rk4", *, t: float = 0.0,
         controller: Controller | None = None,
         backend: str = "reference") -> tuple[np.ndarray, np.ndarray]:
    """One explicit step ``(q_k, v_k) -> (q_{k+1}, v_{k+1})`` of ``method`` in
    :data:`EXPLICIT_METHODS`; ``backend`` picks the ABA and ``⊕`` (``"reference"``,
    ``"compiled"``: :mod:`.tree_kernels` for revolute / prismatic trees,
    :mod:`.multi_dof_kernels` with spherical, floating and planar joints too, or ``"auto"``).
    With the compiled kernels the step is one compiled call
    (:func:`.multi_dof_kernels.explicit_step`, the step :func:`simulate`'s compiled loop
    takes; a controller's forces are held over an Euler or semi-implicit Euler step) unless
    RK4 has a controller.

    Raises
    ------
    ValueError
        Unknown method, wrong lengths, non-unit quaternions.
    DivergenceError
        The step's result is not finite (``dt`` too large for a stiff joint damper or spring).

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(1))
    >>> q, v = step(model, model.create_data(), [0.0], [1.0], 0.1, "semi_implicit_euler")
    >>> bool(np.isclose(q[0], 0.1 * v[0]))
    True
    """
    if method not in EXPLICIT_METHODS:
        raise ValueError(f"method must be one of {EXPLICIT_METHODS}, got {method!r}")
    q = check_configuration(model, q)
    v = as_vector(v, model.nv, "v", "model.nv")
    fd, plus, rate = _compiled_kernels(model, backend)
    if fd is not aba and (controller is None or method != "rk4"):
        # compiled: the step in one call (the one simulate's compiled loop takes), the
        # controller's forces held over it
        tau = None if controller is None else as_vector(
            controller(t, q, v), model.nv, "controller(t, q, v)", "model.nv")
        return _kernel_modules()[1].explicit_step(model, data, q, v, dt, method, t, tau)
    if method == "euler":
        a = _acceleration(model, data, t, q, v, controller, fd)
        return _finite_state(plus(model, q, dt * v), v + dt * a, method, t, dt)
    if method == "semi_implicit_euler":
        v1 = v + dt * _acceleration(model, data, t, q, v, controller, fd)
        return _finite_state(plus(model, q, dt * v1), v1, method, t, dt)
    # Runge-Kutta-Munthe-Kaas 4 in the tangent space at q
    zero = np.zeros(model.nv)
    kd, kv = [], []
    for c, prev in ((0.0, None), (0.5, 1), (0.5, 2), (1.0, 3)):
        delta = zero if prev is None else c * dt * kd[-1]
        vs = v if prev is None else v + c * dt * kv[-1]
        qs = q if prev is None else plus(model, q, delta)
        kd.append(vs if prev is None else rate(model, delta, vs))
        kv.append(_acceleration(model, data, t + c * dt, qs, vs, controller, fd))
    delta = dt / 6.0 * (kd[0] + 2.0 * kd[1] + 2.0 * kd[2] + kd[3])
    return _finite_state(plus(model, q, delta),
                         v + dt / 6.0 * (kv[0] + 2.0 * kv[1] + 2.0 * kv[2] + kv[3]), method, t, dt)


def _finite_state(q: np.ndarray, v: np.ndarray, method: str, t: float,
                  dt: float) -> tuple[np.ndarray, np.ndarray]:
    """``(q, v)``, or :class:`~.results.DivergenceError` if either is not finite (or so large
    that its square overflows: one test of two dot products)."""
    if not math.isfinite(np.dot(q, q) + np.dot(v, v)):
        raise DivergenceError.explicit(method, dt, t + dt)
    return q, v


def simulate(model: Model, q0, v0, dt: float, steps: int, method: str = "rk4",
             controller: Controller | None = None, *, backend: str = "reference",
             **options) -> SimulationResult:
    """Integrate ``steps`` steps of ``dt`` from ``(q0, v0)``.

    Parameters
    ----------
    model : Model
    q0 : (nq,) array
    v0 : (nv,) array
    dt : float
    steps : int
    method : str
        One of :data:`EXPLICIT_METHODS` or :data:`VARIATIONAL_METHODS`.
    controller : callable ``(t, q, v) -> tau`` (nv,), optional
        Joint forces added to the springs and dampers.
    backend : {"reference", "compiled", "auto"}
        NumPy or numba kernels (explicit methods: :mod:`.tree_kernels` for revolute /
        prismatic trees, :mod:`.multi_dof_kernels` with spherical, floating and planar joints
        too; variational methods: :mod:`.tree_kernels`, revolute / prismatic trees and no
        controller); ``"auto"`` uses them when possible.
    **options
        For the variational methods: ``initial_guess``, ``tol``, ``max_iter``
        (:func:`dynamics.minimal.variational.simulate_variational`).

    Returns
    -------
    SimulationResult
        With the compiled kernels and no controller, the explicit methods run every step in
        one compiled call (:func:`.multi_dof_kernels.simulate_explicit`) and ``step_time``
        holds the mean time per step.

    Raises
    ------
    ValueError
        Unknown method, ``dt <= 0``, ``steps < 0``, wrong lengths, non-unit quaternions.
    DivergenceError
        An explicit step whose result is not finite (naming the step): ``dt`` is too large
        for the mechanism's stiffest mode.
    dynamics.minimal.variational.ConvergenceError
        A variational step that does not converge.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(2))
    >>> res = simulate(model, [0.5, 0.0], [0.0, 0.0], 1e-3, 200, "rk4")
    >>> res.q.shape, bool(np.ptp(res.energy) < 1e-9)
    ((201, 2), True)
    """
    if method in VARIATIONAL_METHODS:
        return simulate_variational(model, q0, v0, dt, steps, solver=method,
                                    controller=controller, backend=backend, **options)
    if method not in EXPLICIT_METHODS:
        raise ValueError(f"method must be one of {EXPLICIT_METHODS + VARIATIONAL_METHODS}, "
                         f"got {method!r}")
    if options:
        raise TypeError(f"unexpected options for {method!r}: {sorted(options)}")
    steps, q, v = check_run(model, q0, v0, dt, steps)
    _compiled_kernels(model, backend)           # an unknown backend, unsupported joints
    energies = _trajectory_energies(model, backend)
    data = None
    if energies is not None and controller is None:
        # the whole loop in one compiled call (the same steps), its time spread over the steps
        start = time.perf_counter()
        Q, Vs = _kernel_modules()[1].simulate_explicit(model, q, v, dt, steps, method)
        times = np.full(steps, (time.perf_counter() - start) / max(steps, 1))
    else:
        data = model.create_data()
        Q, Vs = np.empty((steps + 1, model.nq)), np.empty((steps + 1, model.nv))
        times = np.empty(steps)
        Q[0], Vs[0] = q, v
        for k in range(steps):
            start = time.perf_counter()
            try:
                q, v = step(model, data, q, v, dt, method, t=k * dt, controller=controller,
                            backend=backend)
            except DivergenceError:
                raise DivergenceError.explicit(method, dt, (k + 1) * dt, k + 1) from None
            times[k] = time.perf_counter() - start
            Q[k + 1], Vs[k + 1] = q, v
    if energies is not None:
        energy = energies(Q, Vs)
    else:
        data = model.create_data() if data is None else data
        energy = np.array([total_energy(model, data, Q[k], Vs[k]) for k in range(steps + 1)])
    return SimulationResult(dt * np.arange(steps + 1), Q, Vs, energy, times, method)


def _trajectory_energies(model: Model, backend: str):
    """``energies(Q, Vs)``: the total energy of every row of a trajectory in one compiled call
    (:func:`.multi_dof_kernels.mechanical_energies` plus the spring energy), for the compiled
    backends on the models they take; ``None`` otherwise (:func:`total_energy` row by row)."""
    if backend == "reference":
        return None
    from . import multi_dof_kernels
    if not multi_dof_kernels.supports(model):
        return None
    springs = bool(np.any(joint_springs(model).stiffness))

    def energies(Q: np.ndarray, Vs: np.ndarray) -> np.ndarray:
        out = multi_dof_kernels.mechanical_energies(model, Q, Vs)
        if springs:
            out += np.array([spring_energy(model, q) for q in Q])
        return out

    return energies
