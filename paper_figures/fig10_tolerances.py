"""Brüdigam et al. (2023) Fig. 10 a-c: time for 1000 steps of n-link revolute pendulums at Newton
tolerances 1e-6, 1e-8 and 1e-10, maximal against minimal coordinates.

The paper compares its first-order maximal-coordinate integrator (blue) with a second-order
(red) and a third-order (yellow) minimal-coordinate variational integrator, refs. [28] (Lee et
al. 2016) and [29] (Fan, Schultz & Murphey 2018), and reports that the minimal-coordinate ones
fail at small tolerances and many links. Curves here:

* ``maximal`` -- ours (:class:`dynamics.maximal.Simulation`);
* ``fan-2nd`` (red) and ``fan-3rd`` (yellow) -- **the paper's comparators**: Fan et al.'s
  higher-order Galerkin variational integrators with 2- and 3-point Lobatto quadrature
  (:func:`dynamics.minimal.galerkin.simulate_galerkin`, ``s = 1, 2``: the papers count the
  quadrature points, their own "first-order" scheme being the one-point rectangle rule; the
  measured accuracy orders are 2 and 4), Newton's method with the exact Jacobian, at most 100
  iterations per step, compiled numba loop. Our implementation from the paper's description
  (the authors' C++ code is not used); Fan et al.'s O(n) Newton direction is replaced by a
  dense LU solve (O((s n)³) per iteration), so these curves are not linear in n;
* ``lee-riqn``, ``lee-newton`` (dashed) -- Lee et al. (2016)'s linear-time variational
  integrator (:mod:`dynamics.minimal.variational`: DRNEA residual, RIQN / Newton with the
  analytic DEL Jacobian, IG3, compiled), also second order: ref. [28], possibly the paper's
  red curve; kept with its own per-joint tolerance.

Model: :func:`dynamics.models.pendulum` (rods 1 m, 1 kg, revolute joints, first joint at 45°,
at rest), Δt = 0.01 s as in Fig. 8a. The tolerances:

* ours (``tol`` of :class:`dynamics.maximal.Simulation`): max-norm of the residual of the
  discrete dynamics (20) -- N, N m and m (constraint rows);
* Fan et al. (``norm="force"``): max-norm of the DEL residual divided by Δt, N m -- the same
  units as ours. Its rounding floor ``∝ M_11/Δt · ε|q| ∝ n³`` is what makes small tolerances
  unreachable for long chains (:mod:`dynamics.minimal.galerkin`);
* Lee et al. (``tol`` of :func:`dynamics.minimal.simulate`): ``max_i |f_i| Δt / M_ii(q_0)``,
  the joint motion (rad) the residual DEL impulse would cause through each joint's own inertia
  (scale-free, hence no failures).

The time is the stepping loop alone (ours: after an untimed warm-up, state reset each run;
minimal: one compiled call after a compiled warm-up), best of ``repeats``, BLAS on one thread.
A run that raises (Newton failure, non-convergence) is recorded as a ``failed`` row with the
exception, as the paper shows the minimal-coordinate integrators failing.
"""

from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

from dynamics import models
from dynamics.maximal import Simulation
from dynamics.minimal import Model, initial_state, simulate
from dynamics.minimal.galerkin import degree, simulate_galerkin

from ._dynamics import OURS_COLOR, label, one_blas_thread, versions
from ._plotting import finish_axes, ok_rows, save_figure

NAME = "fig10_tolerances"
TITLE = ("n-link pendulum, Δt = 0.01 s, Newton tolerances 1e-6 / 1e-8 / 1e-10 "
         "(Brüdigam et al. 2023 Fig. 10: ours vs the 2nd/3rd-order minimal VIs of Fan et al. "
         "2018; Lee et al. 2016 dashed)")
SOLVERS = ("maximal", "fan-2nd", "fan-3rd", "lee-riqn", "lee-newton")
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "fan-2nd": "paper's own: Fan, Schultz & Murphey 2018 (ref. [29]) 2-point Lobatto Galerkin VI, "
               "our implementation from the paper, dense Newton solve",
    "fan-3rd": "paper's own: Fan, Schultz & Murphey 2018 (ref. [29]) 3-point Lobatto Galerkin VI, "
               "our implementation from the paper, dense Newton solve",
    "lee-riqn": "addition: Lee et al. 2016 (ref. [28]), DRNEA + RIQN; Fig. 10 shows only the "
                "2nd- and 3rd-order integrators",
    "lee-newton": "addition: Lee et al. 2016 (ref. [28]), DRNEA + Newton (analytic Jacobian); "
                  "not in Fig. 10",
}
#: The paper's own comparators (its red and yellow curves).
PAPER_COMPARATORS = ("fan-2nd", "fan-3rd")
TOLERANCES = (1e-6, 1e-8, 1e-10)
DT = 0.01
#: Newton iterations before a minimal-coordinate step is declared failed (2020 paper, §5.2).
MAX_ITER = 100
#: A tiny configuration for the test suite.
TINY = {"sizes": (1, 3), "steps": 20, "repeats": 1}
COLORS = {"maximal": OURS_COLOR, "fan-2nd": "tab:red", "fan-3rd": "goldenrod",
          "lee-riqn": "tab:purple", "lee-newton": "tab:gray"}
LINESTYLES = {"lee-riqn": "--", "lee-newton": "--"}


def method_label(solver: str, paper_ref: str = "") -> str:
    """Legend text with the version (``paper_ref`` is added to the Galerkin curves)."""
    if solver == "maximal":
        return label("maximal") + "; tol: max-norm of residual (20)"
    gs = versions()["graphsolve"]
    if solver in PAPER_COMPARATORS:
        order = solver.removeprefix("fan-")
        return (f"Fan et al. 2018 {order}-order Galerkin VI, {degree(int(order[0])) + 1}-point "
                f"Lobatto{paper_ref}, Newton (graphsolve {gs} dynamics.minimal.galerkin, "
                "numba); tol: max|R|/Δt [N m]")
    root = "RIQN" if solver == "lee-riqn" else "Newton (analytic DEL Jacobian)"
    return (f"Lee et al. 2016 minimal VI: DRNEA + {root} (graphsolve "
            f"{gs} dynamics.minimal, numba); tol: Δt|f_i|/M_ii [rad]")


def _time_maximal(spec, tol, steps, repeats):
    sim = Simulation(spec, DT, tol=tol)
    sim.run(3, progress=False)                          # compile + warm caches
    state = (sim.x.copy(), sim.q.copy(), sim.v.copy(), sim.w.copy())
    best, iters = np.inf, []
    for _ in range(repeats):
        sim.set_state(*state, project=False)
        iters = []
        start = time.perf_counter()
        for _ in range(steps):
            iters.append(sim.step())
        best = min(best, time.perf_counter() - start)
    viol = float(sim.model.constraint_violation(sim.x, sim.q))
    return best, {"mean_iterations": float(np.mean(iters)), "max_iterations": int(max(iters)),
                  "final_constraint_violation": viol}


def _time_minimal(spec, solver, tol, steps, repeats):
    model = Model(spec)
    q0, v0 = initial_state(model)
    method = solver.removeprefix("lee-")
    simulate(model, q0, v0, DT, 2, method, backend="compiled", tol=tol)   # compile
    best, res = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        res = simulate(model, q0, v0, DT, steps, method, backend="compiled", tol=tol)
        best = min(best, time.perf_counter() - start)
    return best, {"mean_iterations": float(res.iterations.mean()),
                  "max_iterations": int(res.iterations.max()),
                  "energy_drift": float(np.abs(res.energy - res.energy[0]).max())}


def _time_galerkin(spec, solver, tol, steps, repeats):
    model = Model(spec)
    q0, v0 = initial_state(model)
    s = degree(int(solver.removeprefix("fan-")[0]))
    simulate_galerkin(model, q0, v0, DT, 2, s=s, tol=1e-6)          # compile
    best, res = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        res = simulate_galerkin(model, q0, v0, DT, steps, s=s, tol=tol, max_iter=MAX_ITER,
                                norm="force", raise_on_failure=True)
        best = min(best, time.perf_counter() - start)
    return best, {"mean_iterations": float(res.iterations.mean()),
                  "max_iterations": int(res.iterations.max()),
                  "energy_drift": float(np.abs(res.energy - res.energy[0]).max())}


def compute(quick: bool = True, sizes=None, steps: int | None = None,
            repeats: int | None = None, tolerances=TOLERANCES) -> list[dict]:
    """Rows ``n, tol, solver, steps, dt, status, reason, seconds, us_per_step,
    mean_iterations, max_iterations[, final_constraint_violation | energy_drift], repeats``."""
    sizes = sizes or ((1, 3, 10, 30) if quick else (1, 2, 5, 10, 20, 30, 50))
    steps = steps or (200 if quick else 1000)
    repeats = repeats or (1 if quick else 3)
    rows = []
    cases = [(tol, n, s) for tol in tolerances for n in sizes for s in SOLVERS]
    with one_blas_thread():
        for tol, n, solver in tqdm(cases, desc=NAME, unit="run"):
            spec = models.pendulum(n)
            row = {"n": n, "tol": tol, "solver": solver, "steps": steps, "dt": DT,
                   "status": "ok", "reason": "", "repeats": repeats}
            try:
                if solver == "maximal":
                    best, extra = _time_maximal(spec, tol, steps, repeats)
                elif solver in PAPER_COMPARATORS:
                    best, extra = _time_galerkin(spec, solver, tol, steps, repeats)
                else:
                    best, extra = _time_minimal(spec, solver, tol, steps, repeats)
            except Exception as exc:                    # recorded, as in the paper's figure
                row.update(status="failed", reason=f"{type(exc).__name__}: {exc}"[:200])
            else:
                row.update(seconds=best, us_per_step=1e6 * best / steps, **extra)
            rows.append(row)
    return rows


def _series(rows, solver, tol):
    return ok_rows(rows, "n", solver=solver, tol=tol)


def summarize(rows: list[dict]) -> list[str]:
    """Per tolerance: times at the largest n, ratios, slopes and failures."""
    out = []
    for tol in sorted({r["tol"] for r in rows}, reverse=True):
        parts = []
        for solver in SOLVERS:
            rs = _series(rows, solver, tol)
            if not rs:
                parts.append(f"{solver}: all failed")
                continue
            n = np.array([r["n"] for r in rs])
            t = np.array([r["seconds"] for r in rs])
            big = n >= 3
            slope = np.polyfit(np.log(n[big]), np.log(t[big]), 1)[0] if big.sum() > 1 \
                else float("nan")
            parts.append(f"{solver} {t[-1] * 1e3:.1f} ms at n = {n[-1]} (slope {slope:.2f}, "
                         f"{rs[-1]['mean_iterations']:.2f} it/step)")
        out.append(f"tol {tol:g}: " + "; ".join(parts))
    bad = [r for r in rows if r["status"] != "ok"]
    out += [f"{r['solver']} n = {r['n']} tol {r['tol']:g}: {r['status']} ({r['reason']})"
            for r in bad]
    if not bad:
        out.append("no method failed at any tolerance (the paper's minimal-coordinate "
                   "integrators failed at tight tolerances)")
    return out


def failures(rows: list[dict], solvers=PAPER_COMPARATORS) -> str:
    """``solver: n at tol, …`` of the failed runs of ``solvers`` (``none``)."""
    parts = []
    for solver in solvers:
        bad = sorted((r["tol"], r["n"]) for r in rows
                     if r["solver"] == solver and r["status"] != "ok")
        if bad:
            by_tol = {}
            for tol, n in bad:
                by_tol.setdefault(tol, []).append(n)
            parts.append(f"{solver} fails at " + ", ".join(
                f"n = {'/'.join(map(str, ns))} (tol {tol:g})"
                for tol, ns in sorted(by_tol.items(), reverse=True)))
        else:
            parts.append(f"{solver}: no failure")
    return "; ".join(parts)


def failure_pattern(rows: list[dict], solvers=PAPER_COMPARATORS) -> str:
    """Verdict for "the minimal-coordinate integrators fail at small tolerances and many
    links": ``reproduced`` when some run of ``solvers`` fails, none fails at the loosest
    tolerance, and at every tolerance a failing ``n`` has no larger ``n`` that succeeds;
    ``partly reproduced`` with failures otherwise; ``not reproduced`` without any."""
    mine = [r for r in rows if r["solver"] in solvers]
    bad = [r for r in mine if r["status"] != "ok"]
    if not bad:
        return "not reproduced"
    loosest = max(r["tol"] for r in mine)
    monotone = all(not (r["status"] == "ok" and r["n"] > b["n"] and r["tol"] == b["tol"]
                        and r["solver"] == b["solver"]) for b in bad for r in mine)
    return "reproduced" if monotone and all(r["tol"] < loosest for r in bad) \
        else "partly reproduced"


def check(rows: list[dict]) -> None:
    """Ours simulated every pendulum at every tolerance with closed joints; every successful
    row has a positive time."""
    ours = [r for r in rows if r["solver"] == "maximal"]
    assert ours and all(r["status"] == "ok" for r in ours), [r["reason"] for r in ours]
    assert all(r["final_constraint_violation"] < 1e-6 for r in ours)
    assert all(r["seconds"] > 0 for r in rows if r["status"] == "ok")


def plot(rows: list[dict], path) -> None:
    plot_tolerances(rows, path, method_label, TITLE)


def plot_tolerances(rows: list[dict], path, label_of, title: str) -> None:
    """One log-log panel of the time against n per tolerance, a cross above the curves for
    every failed run (one row of crosses per method), one legend below the panels (methods
    named by ``label_of``): this figure and the 2020 Fig. 8 (:mod:`.fig2020_fig8`)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    tols = sorted({r["tol"] for r in rows}, reverse=True)
    fig, axes = plt.subplots(1, len(tols), figsize=(5 * len(tols), 5.4), sharey=True,
                             layout="constrained", squeeze=False)
    steps = rows[0]["steps"] if rows else 1000
    ymax = max((r["seconds"] for r in rows if r["status"] == "ok"), default=1.0)
    for ax, tol, letter in zip(axes[0], tols, "abcdef", strict=False):
        for solver in SOLVERS:
            rs = _series(rows, solver, tol)
            if rs:
                ax.loglog([r["n"] for r in rs], [r["seconds"] for r in rs], marker="o", ms=4,
                          ls=LINESTYLES.get(solver, "-"), color=COLORS[solver])
            bad = [r["n"] for r in rows if r["solver"] == solver and r["tol"] == tol
                   and r["status"] != "ok"]
            if bad:
                y = 1.5 * ymax * 1.2 ** SOLVERS.index(solver)   # one row per solver
                ax.plot(bad, [y] * len(bad), "x", ms=10, mew=2, color=COLORS[solver])
        ax.set_title(f"({letter}) tolerance {tol:g}", fontsize=10)
    finish_axes(axes, xlabel="number of links n", xticks=sorted({r["n"] for r in rows}),
                legend=False)
    axes[0][0].set_ylabel(f"time for {steps} steps [s] (Δt = {DT * 1e3:g} ms)")
    handles = [Line2D([], [], color=COLORS[s], marker="o", ms=4, ls=LINESTYLES.get(s, "-"),
                      label=label_of(s)) for s in SOLVERS]
    handles.append(Line2D([], [], color="gray", marker="x", ls="", mew=2,
                          label="failed run (no convergence / exception)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=1, fontsize=8)
    save_figure(fig, path, title, title_size=10)


def _slope(rows, solver, tol):
    rs = [r for r in _series(rows, solver, tol) if r["n"] >= 3]
    if len(rs) < 2:
        return float("nan")
    return float(np.polyfit(np.log([r["n"] for r in rs]), np.log([r["seconds"] for r in rs]),
                            1)[0])


def timing_ratio(rows: list[dict], solver: str) -> tuple[int, float, float] | None:
    """``(n, tol, ours / solver)`` at the largest ``n`` both ran at the loosest tolerance."""
    tol = max((r["tol"] for r in rows), default=None)
    both = {r["n"]: r for r in _series(rows, "maximal", tol)}
    theirs = [r for r in _series(rows, solver, tol) if r["n"] in both]
    if not theirs:
        return None
    r = theirs[-1]
    return r["n"], tol, both[r["n"]]["seconds"] / r["seconds"]


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for Fig. 10."""
    from ._report import B2023, claim

    ours = [r for r in rows if r["solver"] == "maximal"]
    ok = all(r["status"] == "ok" for r in ours)
    nmax = max((r["n"] for r in rows), default=0)
    lee = [r for r in rows if r["solver"].startswith("lee") and r["status"] != "ok"]
    out = [claim(B2023, "Fig. 10: the maximal-coordinate integrator simulates every n-link "
                 "pendulum at tolerances 1e-6, 1e-8, 1e-10", "all succeed",
                 f"{sum(r['status'] == 'ok' for r in ours)}/{len(ours)} runs succeed "
                 f"(n <= {nmax})", "reproduced" if ok else "not reproduced")]
    out.append(claim(B2023, "Fig. 10: minimal-coordinate variational integrators fail at small "
                     "tolerances and many links", "2nd/3rd-order minimal VIs fail",
                     f"{failures(rows)} (n <= {nmax}); Lee et al. 2016: {len(lee)} failures",
                     failure_pattern(rows),
                     "paper's comparators (Fan et al. 2018 Galerkin VIs, 2-/3-point Lobatto; "
                     "our implementation, Newton <= 100 iterations, tol on max|R|/Δt in N m); "
                     "Lee et al. 2016 (ref. [28]) with its scale-free per-joint tolerance "
                     "never fails", against=SOLVERS[1:]))
    slopes = {s: _slope(rows, s, max(TOLERANCES)) for s in SOLVERS[:3]}
    linear = all(x <= 1.3 for x in slopes.values())
    out.append(claim(B2023, "Fig. 10: all three algorithms display linear complexity",
                     "linear in n", "log-log slopes of time vs n (n >= 3, tol 1e-6): "
                     + ", ".join(f"{s} {x:.2f}" for s, x in slopes.items()),
                     "not applicable" if nmax < 10 else
                     "reproduced" if linear else "partly reproduced",
                     "the Galerkin VIs solve the s·n Newton system by dense LU (O((s n)^3) per "
                     "iteration), not by Fan et al.'s O(n) recursion: linear only while the "
                     "O(n) and O(n^2) parts dominate", against=PAPER_COMPARATORS))
    for solver in PAPER_COMPARATORS:
        r = timing_ratio(rows, solver)
        if r is None:
            continue
        n, tl, ratio = r
        out.append(claim(B2023, f"Fig. 10: ours achieves timings comparable to the "
                         f"{solver.removeprefix('fan-')}-order minimal VI", "comparable (plot)",
                         f"n = {n}, tol {tl:g}: ours / {solver} {ratio:.1f}x",
                         "reproduced" if ratio < 3 else "partly reproduced",
                         f"ours is a Python loop over compiled steps, {solver} one compiled "
                         "numba call", against=(solver,)))
    return out
