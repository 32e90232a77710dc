"""Controlled simulation: what a user with a PD controller runs, ``python -m comparisons
control [--quick] [--steps N] [--repeats R] [--out CSV]``.

Every case is a :func:`dynamics.maximal.pd_controller` with time-varying targets, timed in
this process after untimed warm-up runs (numba compilation), best of ``repeats`` runs of
``steps`` steps from the same start, the garbage collector off, per step:

``compiled_us``
    ``Simulation.run(steps, controller=pd)``: the controller inside the compiled run loop
    (:class:`dynamics.maximal.PDController`).
``python_us``
    The same controller wrapped in a plain function, ``run(steps, controller=lambda s:
    pd(s))``: what any other controller costs (a Python call and a compiled step per step).
``free_us``
    ``run(steps)`` without a controller from the same start (the step alone; the motion
    differs, so the iterations may too).
``mujoco_us`` / ``pinocchio_us`` (revolute chains only)
    The same PD law in a Python loop around the peer's step: MuJoCo's ``mj_step``
    (semi-implicit Euler, the torques in ``qfrc_applied``) and Pinocchio's ``aba`` with
    semi-implicit Euler, as a user would write them; ``max_angle_difference`` is the largest
    joint-angle difference between ours and MuJoCo's trajectory (a check that both simulate
    the same controlled system: different integrators, so O(Δt), not rounding).

Cases: a chain of ``n`` revolute rods (1 m, 1 kg) driven towards a swaying pose (Δt = 5 ms);
the small quadruped swaying on its feet (contacts, Δt = 2 ms); the A1 quadruped walking by
Algorithm 6 of Brüdigam et al. 2023 with its fall test (:mod:`dynamics.gait_learning`,
Δt = 1 ms), the rollout of Fig. 13.
"""
from __future__ import annotations

import gc
import math
import time

import numpy as np
from tqdm.auto import tqdm

from dynamics import gait_learning, models
from dynamics.maximal import MaximalModel, NewtonError, Simulation, pd_controller

__all__ = ["CASES", "COLUMNS", "run_control_benchmark", "markdown_table", "plot_control"]

COLUMNS = ("case", "dt", "steps", "compiled_us", "python_us", "free_us", "python_over_compiled",
           "mujoco_us", "pinocchio_us", "compiled_over_mujoco", "compiled_over_pinocchio",
           "max_angle_difference", "iterations")

KP, KD = 40.0, 4.0


def _chain(n: int):
    spec = models.pendulum(n, actuated=True)
    names = [j.name for j in spec.joints]

    def targets(t):
        return {name: 0.3 * math.sin(2.0 * t + 0.5 * i) for i, name in enumerate(names)}

    return spec, 0.005, pd_controller(targets, KP, KD)


def _quadruped():
    spec = models.quadruped()
    rest = {j: v[0] for j, v in spec.initial_positions.items() if j != "free"}
    ctrl = pd_controller(lambda t: {j: a + 0.2 * math.sin(8.0 * t) for j, a in rest.items()},
                         100.0, 2.0)
    return spec, 0.002, ctrl


def _a1_walk():
    spec = models.a1_quadruped()
    return spec, 0.001, gait_learning._start            # (a set-up: the rollouts' own)


#: name -> () -> (spec, dt, controller or rollout set-up)
CASES = {"revolute chain n=10": lambda: _chain(10), "revolute chain n=100": lambda: _chain(100),
         "quadruped sway (contacts)": _quadruped, "A1 walking (Fig. 13 rollout)": _a1_walk}


def _best(fns, repeats: int) -> list[float]:
    """Best time of each of ``fns``, called alternately ``repeats`` times with the garbage
    collector off; a function returns its own time (after its untimed set-up) or ``None``."""
    best = [np.inf] * len(fns)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for i, fn in enumerate(fns):
                start = time.perf_counter()
                t = fn()
                t = t if t is not None else time.perf_counter() - start
                best[i] = t if np.isnan(t) else min(best[i], t)
    finally:
        if enabled:
            gc.enable()
    return best


def _mujoco_pd(spec, dt, steps, ctrl):
    """``(seconds per run, angles (steps + 1, n))`` of MuJoCo with the PD law in Python."""
    import mujoco

    from .mujoco_peer import mujoco_model_xml, mujoco_state
    model = mujoco.MjModel.from_xml_string(mujoco_model_xml(spec, dt))
    data = mujoco.MjData(model)
    q0, v0 = mujoco_state(spec, model)
    names = [j.name for j in spec.joints]
    kp, kd = np.full(len(names), KP), np.full(len(names), KD)
    out = np.empty((steps + 1, len(names)))

    def run():
        data.qpos[:], data.qvel[:] = q0, v0
        data.time = 0.0
        out[0] = data.qpos
        for k in range(steps):
            goal = ctrl.targets(k * dt)
            g = np.array([goal[n] for n in names])
            data.qfrc_applied[:] = kp * (g - data.qpos) - kd * data.qvel
            mujoco.mj_step(model, data)
            out[k + 1] = data.qpos

    return run, out


def _pinocchio_pd(spec, dt, steps, ctrl):
    import pinocchio as pin

    from .pinocchio_peer import pinocchio_model, pinocchio_state
    model, _ = pinocchio_model(spec)
    data = model.createData()
    q0, v0 = pinocchio_state(spec, model)
    names = [j.name for j in spec.joints]
    kp, kd = np.full(len(names), KP), np.full(len(names), KD)

    def run():
        q, v = q0.copy(), v0.copy()
        for k in range(steps):
            goal = ctrl.targets(k * dt)
            g = np.array([goal[n] for n in names])
            a = pin.aba(model, data, q, v, kp * (g - q) - kd * v)
            v = v + dt * a
            q = q + dt * v

    return run


def _case(name: str, steps: int, repeats: int) -> dict:
    spec, dt, ctrl = CASES[name]()
    setup = ctrl if name.startswith("A1") else None

    def sim_and_controller():
        sim = Simulation(spec, dt, tol=1e-8) if setup else Simulation(spec, dt)
        return sim, (setup(sim, gait_learning.STANDING) if setup else ctrl)

    traj = {}

    def plain_of(controller):
        return lambda sim: controller(sim)

    def timed(kind):
        """A fresh simulation and controller (untimed), then the timed ``run`` (NaN if the
        run without a controller fails: the A1 cannot stand without one)."""
        sim, c = sim_and_controller()
        controller = {"compiled": c, "python": plain_of(c), "free": None}[kind]
        start = time.perf_counter()
        try:
            tr = sim.run(steps, controller=controller, progress=False, record="states")
        except NewtonError:
            if kind != "free":
                raise
            return np.nan
        seconds = time.perf_counter() - start
        traj[kind] = tr
        return seconds

    for kind in ("compiled", "python"):                    # warm-up: numba compilation
        sim, c = sim_and_controller()
        sim.run(5, controller=c if kind == "compiled" else plain_of(c), progress=False)
    compiled, python, free = (lambda k=k: timed(k) for k in ("compiled", "python", "free"))
    fns = [compiled, python, free]
    row = {"case": name, "dt": dt, "steps": steps}
    peers = name.startswith("revolute")
    if peers:
        try:
            mj_run, mj_out = _mujoco_pd(spec, dt, steps, ctrl)
            pin_run = _pinocchio_pd(spec, dt, steps, ctrl)
            mj_run(), pin_run()
            fns += [mj_run, pin_run]
        except ImportError:
            peers = False
    times = _best(fns, repeats)
    us = [1e6 * t / steps for t in times]
    row.update(compiled_us=us[0], python_us=us[1], free_us=us[2],
               python_over_compiled=us[1] / us[0],
               iterations=float(np.mean(traj["compiled"].iterations[1:])))
    if peers:
        tr = traj["compiled"]
        ours = MaximalModel(spec).minimal_coordinates(tr.x, tr.q)[..., 0]
        row.update(mujoco_us=us[3], pinocchio_us=us[4], compiled_over_mujoco=us[0] / us[3],
                   compiled_over_pinocchio=us[0] / us[4],
                   max_angle_difference=float(np.max(np.abs(ours - mj_out))))
    return row


def run_control_benchmark(cases=None, steps: int = 1000, repeats: int = 3,
                          progress: bool = True) -> list[dict]:
    """One row per case of :data:`CASES` (all, or the names in ``cases``), keys
    :data:`COLUMNS`."""
    names = list(CASES) if cases is None else list(cases)
    return [_case(n, steps, repeats) for n in tqdm(names, desc="control", disable=not progress)]


def _fmt(x, digits=1) -> str:
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}f}"


def markdown_table(rows: list[dict]) -> str:
    head = ("| case | Δt | compiled `run` µs/step | Python-called µs/step (×) | no controller | "
            "MuJoCo PD loop (ours /) | Pinocchio PD loop (ours /) | max angle diff vs MuJoCo |")
    lines = [head, "|---|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        mj = (f"{_fmt(r.get('mujoco_us'))} ({_fmt(r.get('compiled_over_mujoco'), 2)}×)"
              if r.get("mujoco_us") is not None else "–")
        pn = (f"{_fmt(r.get('pinocchio_us'))} ({_fmt(r.get('compiled_over_pinocchio'), 2)}×)"
              if r.get("pinocchio_us") is not None else "–")
        diff = (f"{r['max_angle_difference']:.2g} rad" if r.get("max_angle_difference")
                is not None else "–")
        lines.append(f"| {r['case']} | {r['dt'] * 1e3:g} ms | {_fmt(r['compiled_us'])} | "
                     f"{_fmt(r['python_us'])} ({_fmt(r['python_over_compiled'], 2)}×) | "
                     f"{_fmt(r['free_us'])} | {mj} | {pn} | {diff} |")
    return "\n".join(lines)


def plot_control(rows: list[dict], path) -> None:
    """Bars of the µs per step of every case: the PD controller in the compiled loop, called
    from Python, and the MuJoCo and Pinocchio PD loops where they ran (log scale)."""
    from .plot import bar_plot

    def value(r, k):
        v = r.get(k)
        return None if v in (None, "") else float(v)

    keys = (("compiled_us", "ours: PD in the compiled loop"),
            ("python_us", "ours: controller called from Python"),
            ("mujoco_us", "MuJoCo: PD loop in Python"),
            ("pinocchio_us", "Pinocchio ABA + semi-implicit Euler: PD loop in Python"))
    series = {label: [value(r, k) for r in rows] for k, label in keys
              if any(value(r, k) is not None for r in rows)}
    bar_plot(path, [f"{r['case']}, Δt {float(r['dt']) * 1e3:g} ms" for r in rows], series,
             ylabel="µs per step", title="PD-controlled simulation (python -m comparisons "
             "control)")
