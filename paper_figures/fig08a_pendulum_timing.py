"""Brüdigam et al. (2023) Fig. 8a (Brüdigam & Manchester 2020 Fig. 5a): time for 1000 steps of
n-link pendulums with revolute and spherical joints, maximal against minimal coordinates.

Rods of 1 m and 1 kg (:func:`dynamics.models.pendulum`), Δt = 0.01 s, the first joint released
at 45°. Timed by :func:`comparisons.dynamics_bench.run_pendulum_benchmark`: every simulator in
this process after an untimed warm-up, best of N runs (the papers take the best of 100). Ours is
timed as users call it, ``Simulation.run(1000)`` with its default recording (trajectory,
energies, constraint violation); the figure also draws the bare ``step()`` loop, thin. The
peers are their stepping loops. The papers compare with RigidBodyDynamics.jl (RKMK4); here
the minimal-coordinate peers are Pinocchio's ABA with semi-implicit Euler and with RK4 (Python
loop around the C++ ABA) and MuJoCo's semi-implicit Euler (a C loop).
"""

from __future__ import annotations

from comparisons.dynamics_bench import PEERS, linear_slope, ratio_summary, run_pendulum_benchmark

from ._dynamics import OURS_COLOR, label
from ._plotting import finish_axes, save_figure

NAME = "fig08a_pendulum_timing"
TITLE = ("n-link pendulum, Δt = 0.01 s: maximal vs minimal coordinates "
         "(Brüdigam et al. 2023 Fig. 8a)")
SOLVERS = ("maximal",) + PEERS
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "pinocchio-semi-implicit-euler": "substitute: the paper times RigidBodyDynamics.jl (Julia, "
                                     "RKMK4); Pinocchio's C++ ABA with semi-implicit Euler in a "
                                     "Python loop",
    "pinocchio-rk4": "substitute: for RigidBodyDynamics.jl's RKMK4 (Julia); Pinocchio's C++ ABA "
                     "with RK4 in a Python loop",
    "mujoco-euler": "substitute: for RigidBodyDynamics.jl (Julia); MuJoCo's semi-implicit Euler, "
                    "a C loop",
}
JOINTS = ("revolute", "spherical")
#: A tiny configuration for the test suite.
TINY = {"sizes": (1, 3), "steps": 20, "repeats": 1}
COLORS = dict(zip(SOLVERS, (OURS_COLOR, "tab:red", "tab:orange", "tab:green"), strict=True))


def compute(quick: bool = True, sizes=None, steps: int = 1000, repeats: int | None = None
            ) -> list[dict]:
    """Rows of :func:`~comparisons.dynamics_bench.run_pendulum_benchmark`: ``joint, n, solver,
    steps, dt, status, reason, best_s, median_s, us_per_step[, newton_iterations,
    final_constraint_violation], repeats``."""
    sizes = sizes or ((1, 3, 10, 30) if quick else (1, 2, 5, 10, 20, 50, 100))
    repeats = repeats or (2 if quick else 7)
    rows = run_pendulum_benchmark(sizes=tuple(sizes), joints=JOINTS, steps=steps,
                                  repeats=repeats)
    return [{**r, "repeats": repeats} for r in rows]


def summarize(rows: list[dict]) -> list[str]:
    """Our time over each peer's at every size, and the log-log slope of ours."""
    out = []
    for r in ratio_summary(rows):
        ratios = ", ".join(f"{p} {r[_vs(r, p)]:.1f}x" for p in PEERS if _vs(r, p) in r)
        out.append(f"{r['joint']:>9} n = {r['n']:>3}: ours {_ours_s(r) * 1e3:7.1f} ms "
                   f"(step loop {r['maximal_s'] * 1e3:.1f}); ours / peer: {ratios}")
    for joint in JOINTS:
        out.append(f"{joint}: slope of log t vs log n (n >= 10) ours "
                   f"{linear_slope(rows, 'maximal', joint, _KEY):.2f}")
    bad = [r for r in rows if r["status"] != "ok"]
    out += [f"{r['solver']} {r['joint']} n = {r['n']}: {r['status']} ({r['reason']})"
            for r in bad]
    return out


#: Our time column: ``Simulation.run`` (recording included), what users call.
_KEY = "run_best_s"


def _ours_s(ratio_row: dict) -> float:
    """Our ``run`` time in a :func:`ratio_summary` row (the step loop's if it has none)."""
    return ratio_row.get("maximal_run_s", ratio_row["maximal_s"])


def _vs(ratio_row: dict, peer: str) -> str:
    """The ratio column of ``peer`` for our ``run`` time (the step loop's if it has none)."""
    return f"run_vs_{peer}" if "maximal_run_s" in ratio_row else f"vs_{peer}"


def check(rows: list[dict]) -> None:
    """Every simulator ran; ours kept the joints closed."""
    assert all(r["status"] in ("ok", "skipped") for r in rows), [r["reason"] for r in rows]
    ours = [r for r in rows if r["solver"] == "maximal"]
    assert ours and all(r["status"] == "ok" for r in ours)
    assert all(r["final_constraint_violation"] < 1e-8 and r["best_s"] > 0
               and r[_KEY] > 0 for r in ours)


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(1, 2, figsize=(12, 5.4), layout="constrained")
    steps = rows[0]["steps"] if rows else 1000
    ok = [r for r in rows if r["status"] == "ok"]
    for joint, ls in zip(JOINTS, ("-", "--"), strict=True):
        for solver in SOLVERS:
            key = _KEY if solver == "maximal" else "best_s"
            pts = sorted((r["n"], r[key]) for r in ok
                         if r["solver"] == solver and r["joint"] == joint)
            if pts:
                axes[0].loglog(*zip(*pts, strict=True), ls, marker="o", ms=3,
                               color=COLORS[solver])
        loop = sorted((r["n"], r["best_s"]) for r in ok
                      if r["solver"] == "maximal" and r["joint"] == joint)
        if loop:
            axes[0].loglog(*zip(*loop, strict=True), ls, lw=0.7, alpha=0.6,
                           color=COLORS["maximal"])
        ratios = [r for r in ratio_summary(rows) if r["joint"] == joint]
        for peer in PEERS:
            pts = [(r["n"], r[_vs(r, peer)]) for r in ratios if _vs(r, peer) in r]
            if pts:
                axes[1].loglog(*zip(*pts, strict=True), ls, marker="o", ms=3,
                               color=COLORS[peer])
    axes[0].set_ylabel(f"time for {steps} steps [s]")
    axes[0].set_title("(a) wall time; ours: Simulation.run (thin: its step() loop)",
                      fontsize=10)
    axes[1].axhline(1.0, color="black", lw=0.8)
    axes[1].set_ylabel("our time / peer's time (> 1: peer faster)")
    axes[1].set_title("(b) ratio of our time to each peer's (colour: peer)", fontsize=10)
    sizes = sorted({r["n"] for r in rows})
    finish_axes(axes, xlabel="number of links n", xticks=sizes, legend=False)
    handles = [Line2D([], [], color=COLORS[s], marker="o", ms=3, label=label(s))
               for s in SOLVERS]
    handles += [Line2D([], [], color="gray", ls=ls, label=f"{joint} joints")
                for joint, ls in zip(JOINTS, ("-", "--"), strict=True)]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8)
    repeats = rows[0].get("repeats", "N") if rows else "N"
    save_figure(fig, path, f"{TITLE}; best of {repeats} runs, one process")


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for Fig. 8a."""
    from ._report import B2023, claim

    out = []
    ratios = {(r["joint"], r["n"]): r for r in ratio_summary(rows)}
    for joint in JOINTS:
        ns = sorted(n for j, n in ratios if j == joint)
        if not ns:
            continue
        r = ratios[joint, ns[-1]]
        slope = linear_slope(rows, "maximal", joint, _KEY)
        text = ", ".join(f"{p} {r[_vs(r, p)]:.1f}x" for p in PEERS if _vs(r, p) in r)
        fast = r.get(_vs(r, "mujoco-euler"), float("inf")) <= 1.0
        out.append(claim(B2023, f"Fig. 8a ({joint}): maximal coordinates reach timings "
                         "comparable to minimal coordinates, linear in n",
                         "comparable to RigidBodyDynamics.jl (Julia)",
                         f"n = {ns[-1]}: ours (Simulation.run) / peer {text}; log-log "
                         f"slope {slope:.2f}",
                         "partly reproduced",
                         ("faster than MuJoCo here" if fast else "slower than the C++ peers")
                         + "; the paper's peer was RigidBodyDynamics.jl, ours are Pinocchio and "
                         "MuJoCo (C++)", against=tuple(p for p in PEERS if _vs(r, p) in r)))
    return out
