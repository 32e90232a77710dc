"""The maximal-coordinate integrator's Newton system at a simulation's current state, and one
linear solve of it timed by sparse and dense solvers (Brüdigam et al. 2023 Fig. 9a, Brüdigam &
Manchester 2020 Fig. 4c)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from comparisons.runner import time_call
from dynamics.maximal import Simulation
from dynamics.maximal.step_system import quaternion_update


def newton_matrix(sim: Simulation):
    """The integrator's Newton matrix ``F`` (a graphsolve BlockMatrix) and residual ``f`` at the
    simulation's current state, as its next step would first assemble them."""
    system = sim.system
    x1 = sim.x + sim.dt * sim.v
    system.begin(x1, quaternion_update(sim.q, sim.w, sim.dt), sim.v, sim.w)
    s = system.pack(sim.v, sim.w, np.zeros((len(sim.model.joints), 6)))
    f = system.residual(s)
    return system.jacobian(s), f


def time_linear_solves(S, f: np.ndarray, cases: dict[str, Callable[[], np.ndarray]],
                       row: dict, repeats: int) -> list[dict]:
    """One row per solver of ``cases`` (``{solver: solve}``, each returning ``x`` with
    ``S x = f``): ``row`` with ``solver``, ``kind="linear_solve"`` and ``time_s``, ``median_s``,
    ``repeats`` (:func:`comparisons.runner.time_call`) and the backward error ``residual``, or
    ``status="failed"`` with the ``reason`` (recorded, not fatal)."""
    rows = []
    for solver, fn in cases.items():
        out = {**row, "solver": solver, "kind": "linear_solve"}
        try:
            t = time_call(fn, repeats=repeats, warmup=1, min_time=0.01, budget=2.0)
            x = fn()
        except Exception as exc:
            out.update(status="failed", reason=f"{type(exc).__name__}: {exc}"[:200])
        else:
            res = float(np.linalg.norm(S @ x - f) / (np.linalg.norm(f)
                                                     + abs(S).max() * np.linalg.norm(x)))
            out.update(time_s=t.best, median_s=t.median, repeats=t.repeats, residual=res)
        rows.append(out)
    return rows
