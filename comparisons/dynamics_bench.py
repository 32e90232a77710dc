"""n-link pendulum benchmark: the maximal-coordinate integrator vs Pinocchio and MuJoCo.

The setting of Brüdigam et al. (2023) Fig. 8a: chains of n rods (1 m, 1 kg) with revolute or
spherical joints, Δt = 0.01 s, 1000 steps, the first joint released from 45°. Every simulator
runs in this process, after an untimed warm-up (numba compilation, model building); the time
is the best (and median) of ``repeats`` runs of the stepping loop alone, with the garbage
collector off. Peers: Pinocchio's ABA with semi-implicit Euler and with RK4, MuJoCo's default
(semi-implicit Euler) step.

The maximal integrator is timed twice from the same state, alternately in every repeat: a loop
of ``Simulation.step()`` (``best_s``, ``us_per_step``) and what users call,
``Simulation.run(steps)`` with its default recording (``run_best_s``, ``run_us_per_step``);
``recording_overhead = run_best_s / best_s - 1`` is the cost of the recording per step as a
fraction of a step.
"""
from __future__ import annotations

import gc
import time

import numpy as np
from tqdm.auto import tqdm

from dynamics import models
from dynamics.maximal import Simulation

from .runner import loglog_slope

__all__ = ["run_pendulum_benchmark", "ratio_summary", "plot_pendulum_benchmark"]

PEERS = ("pinocchio-semi-implicit-euler", "pinocchio-rk4", "mujoco-euler")


def _best(fn, repeats):
    return _best_of((fn,), repeats)[0]


def _best_of(fns, repeats):
    """``(best, median)`` of each of ``fns``, called alternately ``repeats`` times with the
    garbage collector off; a function returns its own time or ``None`` (timed here)."""
    samples = [[] for _ in fns]
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for fn, out in zip(fns, samples, strict=True):
                start = time.perf_counter()
                t = fn()
                out.append(t if t is not None else time.perf_counter() - start)
    finally:
        if enabled:
            gc.enable()
    return [(float(np.min(x)), float(np.median(x))) for x in samples]


def _maximal(spec, dt, steps, repeats):
    sim = Simulation(spec, dt=dt)
    state = (sim.x.copy(), sim.q.copy(), sim.v.copy(), sim.w.copy())
    sim.run(5, progress=False)                                # compile + warm caches: run's
    sim.step()                                                # loop and step()'s kernel
    sim.set_state(*state, project=False)
    iters = []

    def loop():
        sim.set_state(*state, project=False)
        start = time.perf_counter()
        for _ in range(steps):
            iters.append(sim.step())
        return time.perf_counter() - start

    def run():
        sim.set_state(*state, project=False)
        start = time.perf_counter()
        sim.run(steps, progress=False)
        return time.perf_counter() - start

    (best, median), (run_best, run_median) = _best_of((loop, run), repeats)
    viol = float(sim.model.constraint_violation(sim.x, sim.q))
    return best, median, {"newton_iterations": float(np.mean(iters)),
                          "final_constraint_violation": viol,
                          "run_best_s": run_best, "run_median_s": run_median,
                          "run_us_per_step": 1e6 * run_best / steps,
                          "recording_overhead": run_best / best - 1.0}


def _peer(name, spec, dt, steps, repeats):
    from . import dynamics_peers as peers

    if name.startswith("pinocchio"):
        integ = "rk4" if name.endswith("rk4") else "semi_implicit_euler"

        def run():
            return peers.simulate_pinocchio(spec, dt, steps, integrator=integ,
                                            poses=False)["seconds"]
    else:
        def run():
            return peers.simulate_mujoco(spec, dt, steps, poses=False)["seconds"]
    run()                                                     # warm-up
    best, median = _best(run, repeats)
    return best, median, {}


def run_pendulum_benchmark(sizes=(1, 2, 5, 10, 20, 50, 100), joints=("revolute", "spherical"),
                           steps: int = 1000, dt: float = 0.01, repeats: int = 3,
                           solvers=("maximal",) + PEERS, progress: bool = True) -> list[dict]:
    """Time ``steps`` steps of ``models.pendulum(n, joint)`` for every size, joint and solver.

    A peer that is not installed or fails is recorded with ``status`` and ``reason``.
    Returns one dict per (joint, n, solver) with ``best_s``, ``median_s``, ``us_per_step``
    (the stepping loop); the maximal rows add ``run_best_s``, ``run_median_s``,
    ``run_us_per_step`` (``Simulation.run``, recording included) and ``recording_overhead``
    (``run_best_s / best_s - 1``).
    """
    rows = []
    cases = [(j, n, s) for j in joints for n in sizes for s in solvers]
    for joint, n, solver in tqdm(cases, disable=not progress, desc="pendulum benchmark"):
        spec = models.pendulum(n, joint)
        row = {"joint": joint, "n": n, "solver": solver, "steps": steps, "dt": dt,
               "status": "ok", "reason": ""}
        try:
            if solver == "maximal":
                best, median, extra = _maximal(spec, dt, steps, repeats)
            else:
                best, median, extra = _peer(solver, spec, dt, steps, repeats)
        except ImportError as exc:
            row.update(status="skipped", reason=f"not installed: {exc}")
        except Exception as exc:                               # recorded, not fatal
            row.update(status="failed", reason=f"{type(exc).__name__}: {exc}"[:200])
        else:
            row.update(best_s=best, median_s=median, us_per_step=1e6 * best / steps, **extra)
        rows.append(row)
    return rows


def ratio_summary(rows: list[dict], solver: str = "maximal") -> list[dict]:
    """Time of ``solver`` divided by each peer's, per (joint, n): ``vs_<peer>`` for the
    stepping loop and, where the rows have ``run_best_s`` (``Simulation.run``, recording
    included), ``run_vs_<peer>`` and ``recording_overhead``."""
    good = {(r["joint"], r["n"], r["solver"]): r for r in rows if r["status"] == "ok"}
    ok = {key: r["best_s"] for key, r in good.items()}
    out = []
    for joint, n in sorted({(r["joint"], r["n"]) for r in rows}):
        if (joint, n, solver) not in ok:
            continue
        ours = good[joint, n, solver]
        row = {"joint": joint, "n": n, f"{solver}_s": ok[joint, n, solver]}
        if "run_best_s" in ours:
            row[f"{solver}_run_s"] = ours["run_best_s"]
            row["recording_overhead"] = ours["recording_overhead"]
        for peer in PEERS:
            if (joint, n, peer) in ok:
                row[f"vs_{peer}"] = ok[joint, n, solver] / ok[joint, n, peer]
                if "run_best_s" in ours:
                    row[f"run_vs_{peer}"] = ours["run_best_s"] / ok[joint, n, peer]
        out.append(row)
    return out


def linear_slope(rows: list[dict], solver: str, joint: str, key: str = "best_s") -> float:
    """Slope of log(time) against log(n) for n >= 10: 1 for linear complexity. ``key`` is the
    time column (``best_s``: the stepping loop; ``run_best_s``: ``Simulation.run``)."""
    ok = [r for r in rows if r["solver"] == solver and r["joint"] == joint
          and r["status"] == "ok" and key in r]
    return loglog_slope([r["n"] for r in ok], [r[key] for r in ok], min_size=10)


def plot_pendulum_benchmark(rows: list[dict], path, versions: dict | None = None) -> None:
    """Log-log time of ``steps`` steps vs n, one line per solver, revolute solid, spherical
    dashed (2023 Fig. 8a layout)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    versions = versions or {}
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    colors = dict(zip(("maximal",) + PEERS, ("C0", "C3", "C1", "C2"), strict=True))
    for joint, style in (("revolute", "-"), ("spherical", "--")):
        for solver in ("maximal",) + PEERS:
            pts = sorted((r["n"], r["best_s"]) for r in rows if r["solver"] == solver
                         and r["joint"] == joint and r["status"] == "ok")
            if not pts:
                continue
            n, t = zip(*pts, strict=True)
            label = f"{solver} {versions.get(solver, '')} ({joint})".replace("  ", " ")
            ax.loglog(n, t, style, marker="o", ms=3, color=colors[solver], label=label)
    steps = rows[0]["steps"] if rows else 1000
    ax.set_xlabel("number of links n")
    ax.set_ylabel(f"time for {steps} steps (s)")
    ax.set_title("n-link pendulum, Δt = 0.01 s (Brüdigam et al. 2023 Fig. 8a)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
