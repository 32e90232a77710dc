"""Brüdigam et al. (2023) Fig. 11: robustness of the Newton solver for physically scaled
pendulums over scaled step sizes.

:func:`dynamics.models.scaled_pendulum` of scale s ∈ {1, 0.5, 0.1}: mass s, length s², pivot
inertia m l²/3, so the small-swing period ``T = 2π sqrt(2 l / (3 g))`` is proportional to s.
Released from rest at θ0 = π/2 and simulated for half a small-swing period (``round(T / 2Δt)``
steps) with Δt = s · (Δt/s) over a log-spaced range of Δt/s. Panels: (a) mean Newton
iterations per step (tolerance 1e-10 on the max-norm of the residual), (b) error of the final
angle against a ``solve_ivp`` reference of the same model at the same final time
(:func:`comparisons.dynamics_peers.solve_ivp_pinocchio`, DOP853, tolerances 1e-12).

The paper's error measure, ``|-π/2 - θ_T|``, is also in the CSV (``paper_error``); since a
π/2 swing lasts longer than the small-swing half period, it levels off at 0.16 rad instead of
measuring the integrator.
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

from comparisons.dynamics_peers import solve_ivp_pinocchio
from dynamics import models
from dynamics.maximal import NewtonError, Simulation

from ._dynamics import label
from ._plotting import finish_axes, ok_rows, save_figure

NAME = "fig11_scaled_pendulum"
TITLE = "Scaled pendulums over scaled step sizes (Brüdigam et al. 2023 Fig. 11)"
SOLVERS = ("maximal",)
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {}
SCALES = (1.0, 0.5, 0.1)
GRAVITY = 9.81
#: A tiny configuration for the test suite.
TINY = {"ratios": (1e-2, 5e-2)}
STYLE = {1.0: ("tab:pink", "-"), 0.5: ("goldenrod", "--"), 0.1: ("tab:green", ":")}


def half_period(s: float) -> float:
    """Half the small-swing period of the scale-s pendulum (s)."""
    return np.pi * np.sqrt(2.0 / (3.0 * GRAVITY)) * s


def compute(quick: bool = True, ratios=None, scales=SCALES) -> list[dict]:
    """Rows ``s, dt_over_s, dt, steps, t_end, solver, status, mean_iterations,
    max_iterations, final_angle, reference_angle, error, paper_error``."""
    ratios = ratios if ratios is not None else np.logspace(-4, -1.3, 8 if quick else 19)
    rows = []
    for s in tqdm(scales, desc=NAME, unit="scale"):
        spec = models.scaled_pendulum(s)
        for r in ratios:
            dt = float(r) * s
            steps = max(1, round(half_period(s) / dt))
            row = {"s": s, "dt_over_s": float(r), "dt": dt, "steps": steps,
                   "t_end": steps * dt, "solver": "maximal", "status": "ok"}
            try:
                tr = Simulation(spec, dt).run(steps, progress=False)
            except NewtonError as exc:
                row.update(status="failed", reason=str(exc)[:200])
                rows.append(row)
                continue
            ref = solve_ivp_pinocchio(spec, np.array([0.0, steps * dt]))
            theta, theta_ref = tr.minimal_coordinates[-1, 0], ref["joint_angles"][-1, 0]
            row.update(mean_iterations=float(tr.iterations[1:].mean()),
                       max_iterations=int(tr.iterations.max()), final_angle=float(theta),
                       reference_angle=float(theta_ref), error=float(abs(theta - theta_ref)),
                       paper_error=float(abs(-np.pi / 2 - theta)))
            rows.append(row)
    return rows


def _ok(rows, s):
    return ok_rows(rows, "dt_over_s", s=s)


def summarize(rows: list[dict]) -> list[str]:
    """Iteration range, error range and observed order per scale."""
    out = []
    for s in sorted({r["s"] for r in rows}, reverse=True):
        rs = _ok(rows, s)
        failed = [r for r in rows if r["s"] == s and r["status"] != "ok"]
        if not rs:
            out.append(f"s = {s:g}: all {len(failed)} runs failed")
            continue
        x, e = np.array([r["dt_over_s"] for r in rs]), np.array([r["error"] for r in rs])
        order = np.polyfit(np.log(x), np.log(e), 1)[0] if len(rs) > 1 else float("nan")
        out.append(f"s = {s:g}: Δt/s {x[0]:.1e}..{x[-1]:.1e}: mean Newton iterations "
                   f"{rs[0]['mean_iterations']:.2f}..{rs[-1]['mean_iterations']:.2f}, final-angle "
                   f"error {e[0]:.1e}..{e[-1]:.1e} rad (slope {order:.2f}), paper's "
                   f"|-π/2 - θ_T| {rs[0]['paper_error']:.3f}..{rs[-1]['paper_error']:.3f} rad"
                   + (f"; {len(failed)} failed" if failed else ""))
    return out


def check(rows: list[dict]) -> None:
    """Every run converged; the error is the same for every scale at the same Δt/s (the
    scaled pendulums are one dynamical system in scaled time) and small."""
    assert all(r["status"] == "ok" for r in rows)
    for r in rows:
        same = [q for q in rows if q["dt_over_s"] == r["dt_over_s"]]
        assert max(abs(q["error"] - r["error"]) for q in same) < 1e-6 + 1e-3 * r["error"]
        assert r["error"] < 2.0 * r["dt_over_s"] and r["mean_iterations"] >= 1.0


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), layout="constrained")
    for s in sorted({r["s"] for r in rows}, reverse=True):
        rs = _ok(rows, s)
        color, ls = STYLE.get(s, ("black", "-"))
        x = [r["dt_over_s"] for r in rs]
        axes[0].semilogx(x, [r["mean_iterations"] for r in rs], ls, marker="o", ms=3,
                         color=color, label=f"s = {s:g}")
        axes[1].loglog(x, [r["error"] for r in rs], ls, marker="o", ms=3, color=color,
                       label=f"s = {s:g}")
        bad = [r["dt_over_s"] for r in rows if r["s"] == s and r["status"] != "ok"]
        if bad:
            axes[0].plot(bad, np.ones(len(bad)), "x", color=color, label=f"s = {s:g} failed")
    axes[0].set_ylabel("mean Newton iterations per step")
    axes[0].set_title("(a) Newton iterations (tolerance 1e-10, max-norm of the residual)",
                      fontsize=10)
    axes[1].set_ylabel("|θ_T − θ_ref(T)| [rad]")
    axes[1].set_title("(b) error of the final angle vs solve_ivp reference", fontsize=10)
    finish_axes(axes, xlabel="scaled step size Δt / s [s]", legend_size=8,
                title=label("maximal"), title_fontsize=7)
    save_figure(fig, path, TITLE + "; mass s, length s², θ0 = π/2, half a small-swing period")


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for Fig. 11."""
    from ._report import B2023, claim

    out = []
    ok_all = all(r["status"] == "ok" for r in rows)
    errs = [r["error"] for r in rows if r["status"] == "ok"]
    out.append(claim(B2023, "Fig. 11b: small, scaled pendulums simulate accurately for "
                     "scaled step sizes", "accurate for all scales", f"all runs "
                     f"{'succeeded' if ok_all else 'did NOT all succeed'}; final-angle error "
                     f"{min(errs):.1e}..{max(errs):.1e} rad, first order in Δt/s",
                     "reproduced" if ok_all else "partly reproduced"))
    first = [_ok(rows, s) for s in sorted({r["s"] for r in rows})]
    up = all(rs[0]["mean_iterations"] > rs[-1]["mean_iterations"] for rs in first if rs)
    out.append(claim(B2023, "Fig. 11a: more Newton iterations per step for smaller steps "
                     "(ill-conditioning)", "iterations rise as Δt/s shrinks",
                     ", ".join(f"s = {rs[0]['s']:g}: {rs[0]['mean_iterations']:.2f} at "
                               f"Δt/s = {rs[0]['dt_over_s']:.0e} vs {rs[-1]['mean_iterations']:.2f}"
                               f" at {rs[-1]['dt_over_s']:.0e}" for rs in first if rs),
                     "reproduced" if up else "not reproduced",
                     "our tolerance is an absolute residual norm; at tiny steps the previous "
                     "velocity already meets it, so iterations fall"))
    return out
