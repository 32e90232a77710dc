"""Contact benchmarks: the box drop (2023 Fig. 7d) and the sphere chain (Fig. 8b), the
maximal-coordinate interior-point integrator beside MuJoCo (default soft contacts, Euler).

Both simulators run in this process; times are wall-clock (``time.perf_counter``) of the whole
stepping loop (``Simulation.run``: every interior-point iteration, the trajectory bookkeeping
included; MuJoCo: ``mj_step`` plus reading the heights), the best of ``repeats`` runs after an
untimed warm-up step, with the garbage collector off. Beside ``Simulation.run`` the sphere chain
times a plain loop of ``Simulation.step()`` from the same start (alternately in every repeat):
``maximal_recording_overhead = maximal_s / maximal_step_s - 1`` is the cost of the recording.
:func:`scaling_summary` gives the log-log slopes (1 = linear time), the
affine fit ``a + b n`` of the time per interior-point iteration (``a``: fixed cost of an
iteration and the step's share of call overhead, ``b``: graph factorization and solves per
sphere) and the iterations per step. With the compiled backend a whole step, its
interior-point loop included, is one compiled call (``StepSystem.contact_step``).
"""
from __future__ import annotations

import gc
import time

import numpy as np
from tqdm.auto import tqdm

from dynamics import models
from dynamics.maximal import Simulation

from .runner import loglog_slope

__all__ = ["maximal_box_drop", "mujoco_box_drop", "run_sphere_chain_benchmark",
           "mujoco_sphere_chain_xml", "linear_slope", "affine_fit", "scaling_summary",
           "plot_sphere_chain"]


def maximal_box_drop(steps: int = 100, dt: float = 0.01, height: float = 0.4) -> dict:
    """Our box drop: ``t``, ``distance`` (lowest corner's signed distance, m), penetration
    (m, positive = below ground), energy gain and interior-point iterations."""
    traj = Simulation(models.box_drop(height=height), dt=dt).run(steps, progress=False)
    dist = traj.contact_distance.min(axis=1)
    return {"t": traj.t, "distance": dist,
            "max_penetration": float(max(0.0, -dist.min())), "min_distance": float(dist.min()),
            "final_distance": float(dist[-1]), "final_height": float(traj.x[-1, 0, 2]),
            "energy_gain": float(np.max(np.diff(traj.energy))),
            "iterations": float(traj.iterations[1:].mean())}


def mujoco_box_drop(steps: int = 100, dt: float = 0.01, height: float = 0.4) -> dict:
    """The same cube in MuJoCo with default solver parameters (solref, solimp) and Euler:
    ``t``, ``distance`` (bottom face height, m) and the penetration."""
    import mujoco

    xml = f"""<mujoco><option timestep="{dt}"/><worldbody>
      <geom type="plane" size="5 5 0.1"/>
      <body pos="0 0 {height + 0.25}"><freejoint/>
        <geom type="box" size="0.25 0.25 0.25" mass="1"/></body>
    </worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    z = np.empty(steps + 1)
    z[0] = data.qpos[2] - 0.25
    for k in range(steps):
        mujoco.mj_step(model, data)
        z[k + 1] = data.qpos[2] - 0.25
    return {"t": dt * np.arange(steps + 1), "distance": z,
            "max_penetration": float(max(0.0, -z.min())), "min_distance": float(z.min()),
            "final_distance": float(z[-1]), "version": mujoco.__version__}


def mujoco_sphere_chain_xml(n: int, dt: float = 0.01, radius: float = 0.25,
                            velocity: float = 1.0, friction: float = 0.5) -> str:
    """MJCF of ``models.sphere_chain(n)``: nested bodies joined by ball joints."""
    body = ""
    for i in reversed(range(n)):
        inner = body
        joint = "<freejoint/>" if i == 0 else (
            f'<joint type="ball" pos="{-radius} 0 0"/>')
        pos = f"0 0 {radius}" if i == 0 else f"{2 * radius} 0 0"
        body = (f'<body name="s{i}" pos="{pos}">{joint}'
                f'<geom type="sphere" size="{radius}" mass="1" friction="{friction} 0.005 0.0001"/>'
                f"{inner}</body>")
    return (f'<mujoco><option timestep="{dt}"/><worldbody>'
            f'<geom type="plane" size="100 100 0.1" friction="{friction} 0.005 0.0001"/>'
            f"{body}</worldbody></mujoco>")


def _mujoco_chain(n, steps, dt, velocity):
    import mujoco

    model = mujoco.MjModel.from_xml_string(mujoco_sphere_chain_xml(n, dt))
    data = mujoco.MjData(model)
    data.qvel[0] = velocity
    start = time.perf_counter()
    low = 0.0
    for _ in range(steps):
        mujoco.mj_step(model, data)
        low = min(low, float(np.min(data.xpos[1:, 2])) - 0.25)
    elapsed = time.perf_counter() - start
    ok = bool(np.all(np.isfinite(data.qpos)))
    return elapsed, -low, ok


def _maximal_chain(spec, steps, dt, repeats):
    """Best ``Simulation.run(steps)`` time with its trajectory, and best ``step()``-loop time,
    each from a fresh simulation after one warm-up step, alternately, the GC off. A throwaway
    ``run(2)`` first loads ``run``'s own compiled loop (with one repeat, the first size's time
    included it: 0.2 ms per step at n = 1 against 25 µs)."""
    best_run, best_loop, traj, loop_its = np.inf, np.inf, None, 0
    Simulation(spec, dt=dt).run(2, progress=False)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            sim = Simulation(spec, dt=dt)
            sim.step()                                       # warm-up
            start = time.perf_counter()
            traj = sim.run(steps, progress=False)
            best_run = min(best_run, time.perf_counter() - start)
            sim = Simulation(spec, dt=dt)
            sim.step()
            step, its = sim.step, 0
            start = time.perf_counter()
            for _ in range(steps):
                its += step()
            best_loop = min(best_loop, time.perf_counter() - start)
            loop_its = its
    finally:
        if enabled:
            gc.enable()
    return best_run, traj, best_loop, loop_its


def run_sphere_chain_benchmark(sizes=(1, 2, 5, 10, 20), steps: int = 1000, dt: float = 0.01,
                               repeats: int = 1, progress: bool = True) -> list[dict]:
    """Time ``steps`` steps of ``sphere_chain(n)`` here and in MuJoCo; penetration of both.

    Per size a row with ``maximal_us_per_step`` (``Simulation.run``, recording included), the
    interior-point iterations per step (``maximal_iterations`` mean,
    ``maximal_iterations_max``), ``maximal_us_per_iteration`` (time over the total iteration
    count: the cost of one graph factorization and its solves, whose growth in ``n``
    separates the linear algebra from the iteration count), ``maximal_step_us_per_step``
    (a plain ``step()`` loop), ``maximal_recording_overhead`` (run over loop, minus 1),
    ``mujoco_us_per_step`` and both penetrations; a failure is recorded in the status.
    """
    rows = []
    for n in tqdm(sizes, disable=not progress, desc="sphere chain"):
        spec = models.sphere_chain(n)
        row = {"n": n, "steps": steps, "dt": dt}
        try:
            best, traj, loop, loop_its = _maximal_chain(spec, steps, dt, repeats)
            its = traj.iterations[1:]
            row.update(maximal_s=best, maximal_us_per_step=1e6 * best / steps,
                       maximal_total_iterations=int(its.sum()),
                       maximal_penetration=float(max(0.0, -traj.contact_distance.min())),
                       maximal_iterations=float(its.mean()),
                       maximal_iterations_max=int(its.max()),
                       maximal_us_per_iteration=1e6 * best / max(int(its.sum()), 1),
                       maximal_step_s=loop, maximal_step_us_per_step=1e6 * loop / steps,
                       maximal_step_total_iterations=loop_its,
                       maximal_recording_overhead=best / loop - 1.0,
                       maximal_status="ok")
        except Exception as exc:                             # recorded, not fatal
            row.update(maximal_status=f"failed: {type(exc).__name__}: {exc}"[:200])
        try:
            _mujoco_chain(n, 5, dt, 1.0)                     # warm-up
            elapsed = np.inf
            for _ in range(repeats):
                t, pen, ok = _mujoco_chain(n, steps, dt, 1.0)
                elapsed = min(elapsed, t)
            row.update(mujoco_s=elapsed, mujoco_us_per_step=1e6 * elapsed / steps,
                       mujoco_penetration=pen, mujoco_status="ok" if ok else "diverged")
        except ImportError as exc:
            row.update(mujoco_status=f"skipped: {exc}")
        rows.append(row)
    return rows


def linear_slope(rows: list[dict], key: str = "maximal_s", min_size: int = 5) -> float:
    """Slope of log(``key``) against log(n) over ``n >= min_size`` (1 for linear complexity);
    ``key="maximal_us_per_iteration"`` for the time per interior-point iteration."""
    ok = [r for r in rows if r.get("maximal_status") == "ok"]
    return loglog_slope([r["n"] for r in ok], [r[key] for r in ok], min_size=min_size)


def affine_fit(rows: list[dict], key: str = "maximal_us_per_iteration", min_size: int = 5
               ) -> tuple[float, float]:
    """Least-squares ``(a, b)`` of ``key ≈ a + b n`` over the successful rows with
    ``n >= min_size``: ``a`` the fixed cost per interior-point iteration (Python overhead of the
    reference path; the compiled step's call overhead shared out),
    ``b`` the cost per sphere (NaN, NaN with fewer than two sizes)."""
    ok = [(r["n"], r[key]) for r in rows if r.get("maximal_status") == "ok"
          and r["n"] >= min_size]
    if len(ok) < 2:
        return float("nan"), float("nan")
    n, y = np.array(ok, dtype=float).T
    b, a = np.polyfit(n, y, 1)
    return float(a), float(b)


def scaling_summary(rows: list[dict], min_size: int = 10) -> dict:
    """Log-log slopes of the time per step (ours, MuJoCo) and per interior-point iteration,
    the affine fit ``a + b n`` of the time per step and per iteration and the mean iterations
    per step, over ``n >= min_size`` (slope 1: linear time)."""
    ok = [r for r in rows if r.get("maximal_status") == "ok" and r["n"] >= min_size]
    mj = [r for r in rows if "mujoco_s" in r and r["n"] >= min_size]
    a_it, b_it = affine_fit(rows, "maximal_us_per_iteration", min_size)
    a_st, b_st = affine_fit(rows, "maximal_us_per_step", min_size)
    return {
        "min_size": min_size,
        "slope_step": linear_slope(rows, "maximal_s", min_size),
        "slope_iteration": linear_slope(rows, "maximal_us_per_iteration", min_size),
        "slope_mujoco": loglog_slope([r["n"] for r in mj], [r["mujoco_s"] for r in mj],
                                     min_size=min_size),
        "iteration_fixed_us": a_it, "iteration_per_sphere_us": b_it,
        "step_fixed_us": a_st, "step_per_sphere_us": b_st,
        "iterations_per_step": {r["n"]: r["maximal_iterations"] for r in ok},
    }


def plot_sphere_chain(rows: list[dict], path) -> None:
    """Time per step against the chain length (log-log): the maximal integrator's
    ``Simulation.run``, its time per interior-point iteration, and MuJoCo's step (rows of
    :func:`run_sphere_chain_benchmark`; rows without ``n`` > 0 are left out)."""
    from .plot import line_plot

    lines: dict = {}
    for r in rows:
        if not r.get("n"):
            continue
        for key, label in (("maximal_us_per_step", "maximal, per step"),
                           ("maximal_us_per_iteration", "maximal, per IP iteration"),
                           ("mujoco_us_per_step", "MuJoCo, per step")):
            if r.get(key) not in (None, ""):
                lines.setdefault(label, []).append((r["n"], float(r[key])))
    line_plot(path, {"sphere chain (2023 Fig. 8b)": lines}, xlabel="spheres n",
              ylabel="µs")
