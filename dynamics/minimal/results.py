"""What the minimal-coordinate simulators return: :class:`SimulationResult` (a trajectory of
:func:`~dynamics.minimal.integrators.simulate` and
:func:`~dynamics.minimal.variational.simulate_variational`, NumPy or compiled), :class:`StepResult`
(one variational step) and :class:`ConvergenceError` (a variational step that did not converge).

The integrators, the variational solvers and the compiled kernels
(:mod:`~dynamics.minimal.tree_kernels`) all build these, so they live in a module of their own
that imports none of them. :class:`MomentumTrajectory` and :class:`StepFailure` are the shared
shape of the momentum-form Newton integrators' results
(:class:`~dynamics.minimal.galerkin.GalerkinResult`, :class:`~dynamics.minimal.svi.SVIResult`)
and failures.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SimulationResult", "StepResult", "ConvergenceError", "DivergenceError",
           "MomentumTrajectory", "StepFailure"]


@dataclass(frozen=True)
class SimulationResult:
    """Trajectory of :func:`~dynamics.minimal.integrators.simulate`.

    Attributes
    ----------
    t : (steps + 1,) array
    q : (steps + 1, nq) array
    v : (steps + 1, nv) array
        For the variational methods, the velocity of the discrete Legendre transform
        ``v_k = M(q_k)⁻¹ p_k`` (see :mod:`~dynamics.minimal.variational`).
    energy : (steps + 1,) array
        Kinetic + gravitational + spring energy of ``(q_k, v_k)``.
    step_time : (steps,) array
        Wall-clock seconds of each step (energy evaluation excluded).
    method : str
    iterations : (steps,) int array or None
        Root-finder iterations per step (variational methods).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    energy: np.ndarray
    step_time: np.ndarray
    method: str
    iterations: np.ndarray | None = None


@dataclass(frozen=True)
class StepResult:
    """One variational step: ``q_next``, ``p_next`` (discrete momentum), the number of root-finder
    updates ``iterations`` and the final scaled residual ``residual``."""

    q_next: np.ndarray
    p_next: np.ndarray
    iterations: int
    residual: float


class ConvergenceError(RuntimeError):
    """A variational step did not converge; carries ``step``, ``iterations`` and ``residual``
    (the scaled residual norm when giving up)."""

    def __init__(self, message: str, *, step: int | None = None, iterations: int = 0,
                 residual: float = np.inf):
        super().__init__(message)
        self.step, self.iterations, self.residual = step, iterations, residual


def convergence_advice(solver: str) -> str:
    """What to try when a variational step of ``solver`` does not converge (for the
    :class:`ConvergenceError` messages)."""
    advice = "reduce dt, raise max_iter or loosen tol"
    if solver == "riqn":
        advice += ("; stiff joint dampers, which RIQN's iteration matrix M(q_k) leaves out, "
                   "converge with solver='newton'")
    return advice


class DivergenceError(ArithmeticError):
    """An explicit integrator's state became non-finite: the method diverged, the step ``dt``
    being too large for the mechanism's stiffest mode (a joint damper or spring on a small
    inertia: semi-implicit Euler needs about ``d Δt / I < 2``). Carries ``step`` (the first
    step whose result is not finite, from 1; ``None`` from a single ``step`` call) and ``time``
    (its end)."""

    def __init__(self, message: str, *, step: int | None, time: float):
        super().__init__(message)
        self.step, self.time = step, time

    @classmethod
    def explicit(cls, method: str, dt: float, time: float,
                 step: int | None = None) -> DivergenceError:
        """The error of an explicit ``method`` whose step ending at ``time`` (step ``step``
        from 1, if known) gave a non-finite state."""
        where = f"step {step}" if step is not None else "the step"
        return cls(f"{method} diverged: {where} to t = {time:.6g} s gave a non-finite state; "
                   f"dt = {dt:g} is too large for the mechanism's stiffest mode (joint dampers "
                   "or springs on small inertias): take a smaller dt, or an implicit "
                   "integrator", step=step, time=time)


@dataclass(frozen=True)
class MomentumTrajectory:
    """Trajectory of a variational integrator in momentum form whose steps are solved by
    Newton's method (:func:`~dynamics.minimal.galerkin.simulate_galerkin`,
    :func:`~dynamics.minimal.svi.simulate_svi`), up to the last converged step.

    Attributes
    ----------
    t : (K + 1,) array
    q, v, p : (K + 1, nv) arrays
        Configurations, velocities ``v_k = M(q_k)⁻¹ p_k`` and discrete momenta ``p_k``.
    energy : (K + 1,) array
        Kinetic + gravitational + spring energy of ``(q_k, v_k)``.
    iterations : (K,) int array
        Newton updates of every completed step.
    residual : (K,) array
        Final convergence measure of every completed step.
    failed : bool
    failed_step : int or None
        The step that did not converge (``K == failed_step``).
    reason : str
        Empty, or why the failing step stopped, with its last residual.
    seconds : float
        Wall time of the stepping loop.
    method : str
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    p: np.ndarray
    energy: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    failed: bool
    failed_step: int | None
    reason: str
    seconds: float
    method: str

    @property
    def steps(self) -> int:
        """Number of completed steps."""
        return int(self.iterations.shape[0])


class StepFailure(RuntimeError):
    """A step of a :class:`MomentumTrajectory` did not converge and the caller asked for an
    error (``raise_on_failure=True``); ``result`` holds the trajectory up to that step."""

    def __init__(self, message: str, result: MomentumTrajectory):
        super().__init__(message)
        self.result = result
