"""Benchmark of the minimal-coordinate variational integrator (Lee et al. 2016, Fig. 3) and of
the compiled ABA against ``pinocchio.aba``.

Setting of Fig. 3: serial chains of ``n`` boxes 0.3 × 0.3 × 1.5 m on revolute joints under
gravity, Δt = 1 ms, 1000 steps, DOF 2 … 100; the DEL equation is evaluated by DRNEA and solved by
Newton (the analytic DEL Jacobian of the paper's appendix, Algorithm 4, O(n²), and a dense
solve), RIQN (impulse-based ABA) or Broyden, all in the same compiled loop
(:func:`dynamics.minimal.tree_kernels.simulate_variational_compiled`), so the ratios compare root
finders, not languages. The paper reports RIQN 3.8× faster than Newton at 10 DOF and 53× at
100 DOF. ``newton_jacobian="fd"`` (``--newton-jacobian fd`` on the command line) times Newton
with the earlier central finite-difference Jacobian (``2n`` DRNEA evaluations per iteration)
instead.

The default initial guess is IG1 (``q_{k+1} = q_k``) so that every solver really iterates: with
IG3 the slowly swinging long chains are often within the tolerance before the first update
(0.2 updates per step at 100 DOF) and the timings measure the initial guess, not the solver.
Timings exclude the first (compiling) call; each configuration is timed ``repeats`` times and
the best is kept. Nothing here runs inside pytest except a tiny smoke test.
"""
from __future__ import annotations

import time
import timeit

import numpy as np

from dynamics.minimal import Model
from dynamics.minimal.tree_kernels import aba as compiled_aba
from dynamics.minimal.tree_kernels import simulate_variational_compiled
from dynamics.spec import WORLD, Body, Joint, MechanismSpec, Shape

__all__ = ["PAPER_SPEEDUP", "box_chain", "fig3_timings", "aba_timing", "minimal_bench",
           "plot_minimal"]

#: RIQN speed-up over Newton (both with DRNEA) reported by Lee et al. (2016), by DOF.
PAPER_SPEEDUP = {10: 3.8, 100: 53.0}
SOLVERS = ("newton", "riqn", "broyden")


def box_chain(n: int, *, size=(0.3, 0.3, 1.5), mass: float = 1.0,
              initial_angle: float = np.pi / 4) -> MechanismSpec:
    """``n`` boxes of ``size`` (m) hanging in a chain on revolute joints about x (Fig. 2a / 3);
    the first joint starts at ``initial_angle``, at rest."""
    length = size[2]
    shape = Shape("box", tuple(size))
    bodies = tuple(Body(f"box{i + 1}", mass, shape.inertia(mass), shape) for i in range(n))
    top = np.array([0.0, 0.0, 0.5 * length])
    joints = tuple(Joint(f"joint{i + 1}", "revolute", WORLD if i == 0 else f"box{i}",
                         f"box{i + 1}", np.zeros(3) if i == 0 else -top, top, [1.0, 0.0, 0.0])
                   for i in range(n))
    return MechanismSpec(bodies, joints, initial_positions={"joint1": [initial_angle]},
                         name=f"box_chain{n}")


def fig3_timings(dofs=(2, 5, 10, 20, 50, 100), *, steps: int = 1000, dt: float = 1e-3,
                 solvers=SOLVERS, initial_guess: str = "ig1", repeats: int = 1,
                 tol: float = 1e-11, newton_jacobian: str = "analytic") -> list[dict]:
    """Wall-clock seconds of ``steps`` variational steps per DOF and solver (Newton's DEL
    Jacobian: ``newton_jacobian``, ``"analytic"`` (Algorithm 4) or ``"fd"``).

    Returns
    -------
    list of dict
        One row per (dof, solver): ``dof, solver, seconds, per_step_us, mean_iterations,
        max_iterations, energy_error`` (max ``|E - E_0|``).
    """
    rows = []
    warm = Model(box_chain(2))
    for solver in solvers:                          # compile every kernel once
        simulate_variational_compiled(warm, [0.3, 0.0], [0.0, 0.0], dt, 2, solver=solver,
                                      jacobian=newton_jacobian)
    for n in dofs:
        model = Model(box_chain(n))
        q0 = np.zeros(n)
        q0[0] = np.pi / 4
        v0 = np.zeros(n)
        for solver in solvers:
            best, res = np.inf, None
            for _ in range(repeats):
                start = time.perf_counter()
                res = simulate_variational_compiled(model, q0, v0, dt, steps, solver=solver,
                                                    initial_guess=initial_guess, tol=tol,
                                                    jacobian=newton_jacobian)
                best = min(best, time.perf_counter() - start)
            rows.append({"dof": n, "solver": solver, "seconds": best,
                         "per_step_us": 1e6 * best / steps,
                         "mean_iterations": float(res.iterations.mean()),
                         "max_iterations": int(res.iterations.max()),
                         "energy_error": float(np.abs(res.energy - res.energy[0]).max())})
    return rows


def speedups(rows: list[dict], baseline: str = "newton", solver: str = "riqn") -> dict:
    """``{dof: seconds(baseline) / seconds(solver)}``."""
    t = {(r["dof"], r["solver"]): r["seconds"] for r in rows}
    return {d: t[(d, baseline)] / t[(d, solver)] for d, s in t if s == solver
            and (d, baseline) in t}


def aba_timing(n: int = 100, *, number: int = 2000, repeats: int = 5, seed: int = 0) -> dict:
    """Seconds per call of the compiled ABA and of ``pinocchio.aba`` (if installed) on the
    ``n``-box chain, same process, random ``q, v, tau``; ``ratio = ours / pinocchio``."""
    model = Model(box_chain(n))
    data = model.create_data()
    rng = np.random.default_rng(seed)
    q, v, tau = rng.normal(size=(3, n))
    compiled_aba(model, data, q, v, tau)            # compile
    ours = min(timeit.repeat(lambda: compiled_aba(model, data, q, v, tau), number=number,
                             repeat=repeats)) / number
    out = {"n": n, "ours_s": ours, "pinocchio_s": None, "ratio": None, "max_abs_diff": None}
    try:
        import pinocchio as pin
    except ImportError:
        return out
    from comparisons.pinocchio_peer import pinocchio_model
    pm = pinocchio_model(model.spec)
    pm = pm[0] if isinstance(pm, tuple) else pm
    pd = pm.createData()
    theirs = min(timeit.repeat(lambda: pin.aba(pm, pd, q, v, tau), number=number,
                               repeat=repeats)) / number
    diff = np.abs(np.asarray(pin.aba(pm, pd, q, v, tau)) - compiled_aba(model, data, q, v, tau))
    out.update(pinocchio_s=theirs, ratio=ours / theirs, max_abs_diff=float(diff.max()))
    return out


def minimal_bench(*, quick: bool = False, dofs=None, steps: int | None = None,
                  initial_guess: str = "ig1", newton_jacobian: str = "analytic") -> dict:
    """Fig. 3 timings, RIQN and Broyden speed-ups over Newton (analytic DEL Jacobian unless
    ``newton_jacobian="fd"``) beside the paper's, and ABA vs Pinocchio at n = 100 (``quick``:
    DOF 2, 4, 100 steps, n = 10 for ABA).

    Returns
    -------
    dict
        ``rows`` (:func:`fig3_timings`), ``speedup_riqn`` and ``speedup_broyden``
        (``{dof: ×}``), ``paper_speedup`` (:data:`PAPER_SPEEDUP`), ``aba`` (:func:`aba_timing`).
    """
    if dofs is None:
        dofs = (2, 4) if quick else (2, 5, 10, 20, 50, 100)
    steps = (100 if quick else 1000) if steps is None else steps
    rows = fig3_timings(dofs, steps=steps, initial_guess=initial_guess,
                        newton_jacobian=newton_jacobian)
    return {"rows": rows, "speedup_riqn": speedups(rows),
            "speedup_broyden": speedups(rows, solver="broyden"),
            "paper_speedup": dict(PAPER_SPEEDUP),
            "aba": aba_timing(10 if quick else 100, number=200 if quick else 2000)}


def plot_minimal(rows: list[dict], path) -> None:
    """Time of the whole run against DOF (log-log), one line per root finder (rows of
    :func:`fig3_timings`; Lee et al. 2016 Fig. 3 layout)."""
    from .plot import line_plot

    lines: dict = {}
    for r in rows:
        lines.setdefault(r["solver"], []).append((r["dof"], float(r["seconds"])))
    line_plot(path, {"variational integrator, box chains (Lee et al. 2016 Fig. 3)": lines},
              xlabel="DOF", ylabel="seconds per run")
