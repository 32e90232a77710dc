"""Brüdigam & Manchester (2020) Fig. 5 a-b (§5.2): time for 1000 steps (10 s, Δt = 10 ms) of
n-link pendulums, maximal coordinates (ours) against a minimal-coordinate explicit integrator,
revolute joints (solid) and ball-and-socket joints (dashed); (b) the same with one loop closure.

The paper's explicit integrator is RigidBodyDynamics.jl's Runge-Kutta-Munthe-Kaas (RKMK4);
ours is Pinocchio's ABA with classic RK4 in the tangent space (a Python loop around the C++
ABA), best of ``repeats``:

* (a) open pendulums (:func:`dynamics.models.pendulum`, 1 m / 1 kg rods, first joint at 45°):
  :func:`comparisons.dynamics_bench.run_pendulum_benchmark` with the solvers ``maximal`` and
  ``pinocchio-rk4`` (the module behind Brüdigam et al. 2023 Fig. 8a, see
  :mod:`paper_figures.fig08a_pendulum_timing`).
* (b) one loop closure: :func:`looped_pendulum` - a chain of n - 1 rods hanging from the world
  as a circular arc (absolute angles 0.5 .. -0.5 rad), its tip joined to the lower end of an
  n-th rod that hangs vertically from a second world pivot (for n = 3 a four-bar). The
  minimal-coordinate peer closes the loop at acceleration level only
  (:func:`comparisons.constrained_minimal.simulate_constrained_pinocchio`, RK4, no
  stabilization), as RigidBodyDynamics.jl does without stabilization; its loop-constraint
  violation is recorded beside its time. The paper does not describe its closed-loop
  structures; this one is ours.

A run that raises (Newton failure, divergence, unsupported mechanism) is a ``failed`` row.
"""

from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

from comparisons.constrained_minimal import simulate_constrained_pinocchio
from comparisons.dynamics_bench import run_pendulum_benchmark
from dynamics import models
from dynamics import quaternion as quat
from dynamics.maximal import Simulation
from dynamics.spec import WORLD, Joint, MechanismSpec

from ._dynamics import OURS_COLOR, PEER_COLOR, label, one_blas_thread
from ._plotting import ok_rows, save_figure, size_ticks

NAME = "fig2020_fig5"
TITLE = ("n-link pendulums, 1000 steps of Δt = 10 ms: maximal vs minimal coordinates, "
         "(a) open, (b) one loop closure (Brüdigam & Manchester 2020 Fig. 5)")
SOLVERS = ("maximal", "pinocchio-rk4", "pinocchio-rk4-kkt")
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "pinocchio-rk4": "substitute: for RigidBodyDynamics.jl's RKMK4 (Julia); Pinocchio's C++ ABA "
                     "with RK4 in a Python loop",
    "pinocchio-rk4-kkt": "substitute: for RigidBodyDynamics.jl with the loop closed at "
                         "acceleration level; Pinocchio, RK4, a dense constraint solve per stage,"
                         " Python loop",
}
JOINTS = ("revolute", "spherical")
DT = 0.01
ARC = 0.5                 # rad: absolute angle of the first / last rod of the loop's arc
#: A tiny configuration for the test suite.
TINY = {"sizes": (1, 3), "loop_sizes": (3, 4), "steps": 20, "repeats": 1}
COLORS = {"maximal": OURS_COLOR, "pinocchio-rk4": PEER_COLOR, "pinocchio-rk4-kkt": PEER_COLOR}


def method_label(solver: str) -> str:
    if solver == "pinocchio-rk4-kkt":
        return label(solver) + " (loop)"
    return label(solver)


def looped_pendulum(n: int, joint: str = "revolute") -> MechanismSpec:
    """``n`` rods (1 m, 1 kg) in one closed loop: rods 1..n-1 hang from the origin as a circular
    arc, rod n hangs from a second world pivot placed so that its lower end meets the arc's
    tip, where a loop joint (``cylindrical_free`` for revolute chains - the planar pin -,
    ``spherical`` for ball joints) closes the loop. Released from rest; ``n >= 3``."""
    if n < 3:
        raise ValueError(f"a loop needs n >= 3 rods, got {n}")
    base = models.pendulum(n, joint)
    k = n - 1
    angles = np.linspace(ARC, -ARC, k)
    rel = np.r_[angles[0], np.diff(angles)]
    extra = [] if joint == "revolute" else [0.0, 0.0]
    init = {f"joint{i + 1}": [rel[i]] + extra for i in range(k)}
    init[f"joint{n}"] = [0.0] + extra
    top, bottom = np.array([0.0, 0.0, 0.5]), np.array([0.0, 0.0, -0.5])

    def last(pivot):
        return Joint(f"joint{n}", joint, WORLD, f"link{n}", pivot, top, [1.0, 0.0, 0.0])

    trial = MechanismSpec(base.bodies, base.joints[:k] + (last(np.zeros(3)),),
                          initial_positions=init)
    x, q = Simulation(trial, DT).model.initial_state()[:2]
    tip = x[k - 1] + quat.rotate(q[k - 1], bottom)
    end = x[k] + quat.rotate(q[k], bottom)
    closure = Joint("closure", "cylindrical_free" if joint == "revolute" else "spherical",
                    f"link{k}", f"link{n}", bottom, bottom, [1.0, 0.0, 0.0])
    return MechanismSpec(base.bodies, base.joints[:k] + (last(tip - end), closure),
                         initial_positions=init, name=f"looped_pendulum{n}_{joint}")


def _time_ours(spec, steps, repeats):
    sim = Simulation(spec, DT)
    sim.run(3, progress=False)                           # compile + warm caches
    sim = Simulation(spec, DT)
    state = (sim.x.copy(), sim.q.copy(), sim.v.copy(), sim.w.copy())
    best, iters = np.inf, []
    for _ in range(repeats):
        sim.set_state(*state, project=False)
        sim.t = 0.0
        iters = []
        start = time.perf_counter()
        for _ in range(steps):
            iters.append(sim.step())
        best = min(best, time.perf_counter() - start)
    return best, {"newton_iterations": float(np.mean(iters)),
                  "final_constraint_violation": float(sim.model.constraint_violation(sim.x,
                                                                                     sim.q))}


def _time_peer(spec, steps, repeats):
    best, out = np.inf, None
    for _ in range(repeats):
        out = simulate_constrained_pinocchio(spec, DT, steps, integrator="rk4")
        best = min(best, out["seconds"])
    return best, {"final_constraint_violation": float(out["constraint_violation"][-1]),
                  "max_constraint_violation": float(out["constraint_violation"].max())}


def compute(quick: bool = True, sizes=None, loop_sizes=None, steps: int = 1000,
            repeats: int | None = None) -> list[dict]:
    """Rows ``panel ("a" | "b"), joint, n, solver, steps, dt, status, reason, best_s[,
    newton_iterations, final_constraint_violation, max_constraint_violation]``."""
    sizes = sizes or ((1, 3, 10, 30) if quick else (1, 2, 5, 10, 20, 50, 100))
    loop_sizes = loop_sizes or ((3, 10, 30) if quick else (3, 5, 10, 20, 30, 50, 100))
    repeats = repeats or (2 if quick else 5)
    peer_repeats = 1 if quick else repeats
    with one_blas_thread():
        rows = [{**r, "panel": "a"} for r in run_pendulum_benchmark(
            sizes=tuple(sizes), joints=JOINTS, steps=steps, dt=DT, repeats=repeats,
            solvers=("maximal", "pinocchio-rk4"), progress=False)]
        cases = [(j, n, s) for j in JOINTS for n in loop_sizes
                 for s in ("maximal", "pinocchio-rk4-kkt")]
        for joint, n, solver in tqdm(cases, desc=f"{NAME} (b)", unit="run"):
            row = {"panel": "b", "joint": joint, "n": n, "solver": solver, "steps": steps,
                   "dt": DT, "status": "ok", "reason": ""}
            try:
                spec = looped_pendulum(n, joint)
                fn = _time_ours if solver == "maximal" else _time_peer
                with np.errstate(all="ignore"):
                    best, extra = fn(spec, steps, repeats if solver == "maximal"
                                     else peer_repeats)
            except Exception as exc:                     # recorded, as the paper's failures
                row.update(status="failed", reason=f"{type(exc).__name__}: {exc}"[:200])
            else:
                row.update(best_s=best, us_per_step=1e6 * best / steps, **extra)
            rows.append(row)
    return [{**r, "repeats": repeats} for r in rows]


def _ok(rows, panel, solver, joint):
    return ok_rows(rows, "n", panel=panel, solver=solver, joint=joint)


def _failed(rows, panel=None):
    return [r for r in rows if r["status"] != "ok" and (panel is None or r["panel"] == panel)]


def summarize(rows: list[dict]) -> list[str]:
    """Times per panel, joint and size; failures."""
    out = []
    for panel in ("a", "b"):
        peer = "pinocchio-rk4" if panel == "a" else "pinocchio-rk4-kkt"
        for joint in JOINTS:
            ours = {r["n"]: r for r in _ok(rows, panel, "maximal", joint)}
            theirs = {r["n"]: r for r in _ok(rows, panel, peer, joint)}
            parts = []
            for n in sorted(set(ours) | set(theirs)):
                o, p = ours.get(n), theirs.get(n)
                s = f"n = {n}: ours {o['best_s'] * 1e3:.0f} ms" if o else f"n = {n}: ours -"
                if p:
                    s += f", RK4 {p['best_s'] * 1e3:.0f} ms"
                    if "max_constraint_violation" in p:
                        s += f" (loop violation {p['max_constraint_violation']:.1e} m)"
                parts.append(s)
            out.append(f"({panel}) {joint}: " + "; ".join(parts))
    out += [f"({r['panel']}) {r['solver']} {r['joint']} n = {r['n']}: {r['status']} "
            f"({r['reason']})" for r in _failed(rows)]
    return out


def check(rows: list[dict]) -> None:
    """Ours ran every open pendulum and kept every joint closed."""
    ours = [r for r in rows if r["solver"] == "maximal"]
    assert all(r["status"] == "ok" for r in ours if r["panel"] == "a")
    ok = [r for r in ours if r["status"] == "ok"]
    assert ok and all(r["final_constraint_violation"] < 1e-8 and r["best_s"] > 0 for r in ok)
    assert any(r["panel"] == "b" for r in ok)


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.6), layout="constrained")
    steps = rows[0]["steps"] if rows else 1000
    for ax, panel, peer in ((axes[0], "a", "pinocchio-rk4"), (axes[1], "b",
                                                              "pinocchio-rk4-kkt")):
        ymax = max((r["best_s"] for r in rows if r["status"] == "ok"), default=1.0)
        for joint, ls in zip(JOINTS, ("-", "--"), strict=True):
            for solver in ("maximal", peer):
                rs = _ok(rows, panel, solver, joint)
                if rs:
                    ax.loglog([r["n"] for r in rs], [r["best_s"] for r in rs], ls, marker="o",
                              ms=4, color=COLORS[solver])
                bad = [r["n"] for r in rows if r["panel"] == panel and r["solver"] == solver
                       and r["joint"] == joint and r["status"] != "ok"]
                if bad:
                    ax.plot(bad, [1.3 * ymax] * len(bad), "x", ms=10, mew=2,
                            color=COLORS[solver])
        sizes = sorted({r["n"] for r in rows if r["panel"] == panel})
        size_ticks(ax, sizes)
        ax.set_xlabel("number of links n")
        ax.set_ylabel(f"time for {steps} steps [s]")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_title("(a) open pendulums", fontsize=10)
    axes[1].set_title("(b) one loop closure (arc of n - 1 rods closed by rod n)", fontsize=10)
    handles = [Line2D([], [], color=COLORS[s], marker="o", ms=4, label=method_label(s))
               for s in SOLVERS if s != "pinocchio-rk4-kkt"]
    handles.append(Line2D([], [], color=PEER_COLOR, marker="o", ms=4,
                          label="(b) " + method_label("pinocchio-rk4-kkt")))
    handles += [Line2D([], [], color="gray", ls=ls, label=f"{j} joints")
                for j, ls in zip(JOINTS, ("-", "--"), strict=True)]
    handles.append(Line2D([], [], color="gray", marker="x", ls="", mew=2,
                          label="failed run (diverged / Newton failure)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8)
    repeats = rows[0].get("repeats", "N") if rows else "N"
    save_figure(fig, path, f"{TITLE}; best of {repeats}", title_size=10)


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for the 2020 Fig. 5."""
    from comparisons.runner import loglog_slope

    from ._report import claim

    paper = "Brüdigam & Manchester 2020"
    out = []
    ratio = {}
    for joint in JOINTS:
        ours = {r["n"]: r["best_s"] for r in _ok(rows, "a", "maximal", joint)}
        rk4 = {r["n"]: r["best_s"] for r in _ok(rows, "a", "pinocchio-rk4", joint)}
        common = sorted(set(ours) & set(rk4))
        if common:
            ratio[joint] = {n: ours[n] / rk4[n] for n in common}
        slope = loglog_slope(list(ours), list(ours.values()), min_size=3) if len(ours) > 2 \
            else float("nan")
        ratio.setdefault(f"slope_{joint}", slope)
    if "revolute" in ratio and "spherical" in ratio:
        rv, sp = ratio["revolute"], ratio["spherical"]
        n = max(rv)
        out.append(claim(paper, "Fig. 5a: linear time; the explicit integrator is faster for "
                         "revolute joints, ours competitive and faster for ball joints",
                         "ours faster for ball joints (vs RigidBodyDynamics.jl RKMK4)",
                         f"n = {n}: ours / Pinocchio RK4 {rv[n]:.2f} (revolute), "
                         f"{sp[n]:.2f} (ball); log-log slope of ours "
                         f"{ratio['slope_revolute']:.2f} / {ratio['slope_spherical']:.2f}",
                         "reproduced" if sp[n] < 1.0 <= rv[n] else "partly reproduced"
                         if sp[n] < rv[n] else "not reproduced",
                         "peer: Pinocchio's C++ ABA stepped by RK4 in a Python loop, not "
                         "Julia's RKMK4", against=("pinocchio-rk4",)))
    ours_sp = {r["n"]: r["best_s"] for r in _ok(rows, "a", "maximal", "spherical")}
    ours_rv = {r["n"]: r["best_s"] for r in _ok(rows, "a", "maximal", "revolute")}
    common = sorted(set(ours_sp) & set(ours_rv))
    if common:
        n = common[-1]
        out.append(claim(paper, "§5.2: ours simulates ball joints faster than revolute joints "
                         "(a ball joint constrains fewer degrees of freedom)", "qualitative",
                         f"n = {n}: ball {ours_sp[n] * 1e3:.0f} ms, revolute "
                         f"{ours_rv[n] * 1e3:.0f} ms",
                         "reproduced" if ours_sp[n] < ours_rv[n] else "not reproduced"))
    b_ours = [r for r in rows if r["panel"] == "b" and r["solver"] == "maximal"]
    b_peer = [r for r in rows if r["panel"] == "b" and r["solver"] == "pinocchio-rk4-kkt"]
    if b_ours:
        ok = [r for r in b_ours if r["status"] == "ok"]
        peer_ok = [r for r in b_peer if r["status"] == "ok"]
        faster = [r for r in ok for p in peer_ok if (p["joint"], p["n"]) == (r["joint"], r["n"])
                  and r["best_s"] < p["best_s"]]
        drift = max((p["max_constraint_violation"] for p in peer_ok), default=float("nan"))
        out.append(claim(paper, "Fig. 5b: with one loop closure, linear time and competitive "
                         "with (for ball joints faster than) the explicit integrator",
                         "qualitative (plot)",
                         f"ours {len(ok)}/{len(b_ours)} runs ok, faster than Pinocchio RK4 in "
                         f"{len(faster)}/{len(peer_ok)} common cases; RK4 {len(peer_ok)}/"
                         f"{len(b_peer)} ok, loop violation up to {drift:.1e} m",
                         "reproduced" if len(ok) == len(b_ours) and faster
                         else "partly reproduced",
                         "our loop mechanism (the paper does not describe its own); the peer "
                         "is a Python loop with a dense constraint solve per RK stage; failed "
                         "runs: " + (", ".join(f"{r['solver']} {r['joint']} n={r['n']}"
                                               for r in _failed(rows, "b")) or "none"),
                         against=("pinocchio-rk4-kkt",)))
    return out
