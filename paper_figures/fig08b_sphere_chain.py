"""Brüdigam et al. (2023) Fig. 8b: time for a chain of n spheres (0.25 m, 1 kg, ball joints)
lying on the ground, with contacts and friction, Δt = 0.01 s; MuJoCo beside it.

Through :func:`comparisons.contact_bench.run_sphere_chain_benchmark`: the chain starts sliding
at 1 m/s; ours solves every step with the interior-point method on the mechanism graph
(contacts as leaves: a tree, O(n) per iteration); MuJoCo runs with its default solver. Besides
time, the deepest penetration of each. The paper ran n up to 100 and reports MuJoCo failing
beyond 44 spheres; the full run goes to n = 100 (the quick run to 10). The log-log slope
includes a fixed per-iteration overhead, so it stays below 1 at these sizes; the per-sphere
cost is constant (affine fit in ``python -m comparisons contacts``).
"""

from __future__ import annotations

from comparisons.contact_bench import run_sphere_chain_benchmark
from comparisons.runner import loglog_slope

from ._dynamics import OURS_COLOR, PEER_COLOR, label
from ._plotting import finish_axes, ok_rows, save_figure

NAME = "fig08b_sphere_chain"
TITLE = "Sphere chain on the ground with friction, Δt = 0.01 s (Brüdigam et al. 2023 Fig. 8b)"
SOLVERS = ("maximal", "mujoco-euler")
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "mujoco-euler": "paper's own: MuJoCo with default solver parameters, as in the paper's text",
}
#: A tiny configuration for the test suite.
TINY = {"sizes": (1, 2), "steps": 10}


def compute(quick: bool = True, sizes=None, steps: int | None = None) -> list[dict]:
    """Rows ``solver, n, steps, time_s, us_per_step, penetration, status``."""
    sizes = sizes or ((1, 5, 10) if quick else (1, 2, 5, 10, 20, 50, 100))
    steps = steps or (200 if quick else 1000)
    rows = []
    for r in run_sphere_chain_benchmark(sizes=sizes, steps=steps):
        for solver, key in (("maximal", "maximal"), ("mujoco-euler", "mujoco")):
            status = r.get(f"{key}_status", "missing")
            row = {"solver": solver, "n": r["n"], "steps": steps,
                   "status": "ok" if status == "ok" else status}
            if status == "ok":
                row.update(time_s=r[f"{key}_s"], us_per_step=r[f"{key}_us_per_step"],
                           penetration=r[f"{key}_penetration"])
                if key == "maximal":
                    row.update(iterations=r["maximal_iterations"])
            rows.append(row)
    return rows


def _ok(rows, solver):
    return ok_rows(rows, "n", solver=solver)


def _slope(rows) -> float:
    ours = _ok(rows, "maximal")
    return loglog_slope([r["n"] for r in ours], [r["time_s"] for r in ours], min_size=5)


def summarize(rows: list[dict]) -> list[str]:
    out = []
    mj = {r["n"]: r for r in _ok(rows, "mujoco-euler")}
    for r in _ok(rows, "maximal"):
        line = (f"n = {r['n']:>3}: ours {r['us_per_step']:8.1f} us/step "
                f"({r['iterations']:.1f} interior-point iterations), penetration "
                f"{r['penetration']:.1e} m")
        if r["n"] in mj:
            m = mj[r["n"]]
            line += (f"; MuJoCo {m['us_per_step']:8.1f} us/step, penetration "
                     f"{m['penetration'] * 100:.2f} cm")
        out.append(line)
    out.append(f"log-log slope of our time (n >= 5): {_slope(rows):.2f}")
    return out


def check(rows: list[dict]) -> None:
    ours = _ok(rows, "maximal")
    assert ours and all(r["penetration"] < 1e-8 for r in ours)


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    for solver, color in zip(SOLVERS, (OURS_COLOR, PEER_COLOR), strict=True):
        ok = _ok(rows, solver)
        if not ok:
            continue
        n = [r["n"] for r in ok]
        axes[0].loglog(n, [r["time_s"] for r in ok], "o-", color=color, label=label(solver))
        axes[1].semilogy(n, [max(r["penetration"], 1e-12) for r in ok], "o-", color=color,
                         label=label(solver))
    steps = rows[0]["steps"] if rows else 0
    axes[0].set_xlabel("number of spheres n")
    axes[0].set_ylabel(f"time for {steps} steps [s]")
    axes[1].set_xlabel("number of spheres n")
    axes[1].set_ylabel("deepest penetration [m] (floored at 1e-12)")
    finish_axes(axes, legend_size=8)
    save_figure(fig, path, TITLE, title_size=None, dpi=130)


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for Fig. 8b."""
    from ._report import B2023, claim

    ours = _ok(rows, "maximal")
    mj = {r["n"]: r for r in _ok(rows, "mujoco-euler")}
    big = ours[-1]["n"] if ours else 0
    slope = _slope(rows)
    why = ("slope below 1: fixed per-iteration overhead plus a constant cost per sphere"
           if slope < 1 else "log-log slope of the time per run (n >= 5), iterations per "
           "step included")
    out = [claim(B2023, "Fig. 8b: sphere chains with contacts in linear time, no penetration",
                 "linear up to n = 100", f"up to n = {big}: penetration "
                 f"{max(r['penetration'] for r in ours):.1e} m; slope "
                 f"{slope:.2f}",
                 "reproduced" if big >= 100 and slope <= 1.1 else "partly reproduced",
                 why
                 + ("" if big >= 100 else f"; this run stops at n = {big} (the full run and "
                    "`python -m comparisons contacts` go to 100 and beyond)"))]
    if big in mj:
        out.append(claim(B2023, "Fig. 8b: MuJoCo violates contacts by 10 cm or more beyond 20 "
                         "spheres and fails beyond 44", "≥ 10 cm, fails > 44",
                         f"n = {big}: {mj[big]['penetration'] * 100:.2f} cm, status "
                         f"{mj[big]['status']}", "not reproduced" if big > 20
                         else "not applicable",
                         "MuJoCo 4 with these models stays within a few mm",
                         against=("mujoco-euler",)))
    return out
