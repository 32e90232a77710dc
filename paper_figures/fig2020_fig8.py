"""Brüdigam & Manchester (2020) Fig. 8 a-c (§5.2, "Comparison with Variational Integrators"):
time for 1000 steps of n-link revolute pendulums at Newton tolerances 1e-6, 1e-8 and 1e-10,
ours (first order) against a second-order (red) and a third-order (yellow) minimal-coordinate
variational integrator, which the paper reports failing to converge (stopped after 100 Newton
steps) for many links and tight tolerances.

The same experiment as Brüdigam et al. (2023) Fig. 10, computed by
:func:`paper_figures.fig10_tolerances.compute` with the paper's 1000 steps, 1 m / 1 kg rods,
first joint at 45°, Δt = 10 ms. The red and yellow curves are **the paper's comparators**: the
2nd- and 3rd-order Galerkin variational integrators of Fan, Schultz & Murphey (2018, the
paper's ref. [7]) with 2- and 3-point Lobatto quadrature
(:func:`dynamics.minimal.galerkin.simulate_galerkin`, ``s = 1, 2``; the paper names its own
one-point rectangle-rule scheme "1st order", so the order counts quadrature points; measured
accuracy orders 2 and 4), Newton with the exact Jacobian and at most 100 iterations per step,
our implementation from the paper's description (compiled, dense Newton solve instead of Fan
et al.'s O(n) recursion). Dashed: Lee et al. (2016, the paper's ref. [13], also second order
and possibly its red curve): DRNEA + RIQN / Newton with the analytic DEL Jacobian
(:mod:`dynamics.minimal.variational`). Tolerances: ours and Fan et al.'s bound the max-norm of
the residual in force units (N m), Lee et al.'s a per-joint scaled residual (rad); see
:mod:`paper_figures.fig10_tolerances`.
"""

from __future__ import annotations

from . import fig10_tolerances as fig10
from ._dynamics import label, versions

NAME = "fig2020_fig8"
TITLE = ("n-link pendulums, 1000 steps of Δt = 10 ms at tolerances 1e-6 / 1e-8 / 1e-10 "
         "(Brüdigam & Manchester 2020 Fig. 8 a-c)")
SOLVERS = fig10.SOLVERS
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {s: role.replace("ref. [29]", "ref. [7]").replace("ref. [28]", "ref. [13]")
               for s, role in fig10.COMPARATORS.items()}
TOLERANCES = fig10.TOLERANCES
#: A tiny configuration for the test suite.
TINY = {"sizes": (1, 3), "steps": 20, "repeats": 1}
COLORS = fig10.COLORS


def method_label(solver: str) -> str:
    """Legend text with versions and what ``tol`` measures."""
    if solver == "maximal":
        return label("maximal") + " (1st order); tol: max-norm of residual (20)"
    if solver in fig10.PAPER_COMPARATORS:
        colour = "red" if solver == "fan-2nd" else "yellow"
        return fig10.method_label(solver, f" (paper's {colour}, ref. [7])")
    root = "RIQN" if solver == "lee-riqn" else "Newton, analytic DEL Jacobian"
    return (f"Lee et al. 2016 (2nd order, ref. [13]): DRNEA + {root}, graphsolve "
            f"{versions()['graphsolve']} dynamics.minimal (numba); tol: Δt|f_i|/M_ii [rad]")


def compute(quick: bool = True, sizes=None, steps: int = 1000, repeats: int | None = None
            ) -> list[dict]:
    """Rows of :func:`paper_figures.fig10_tolerances.compute` (``n, tol, solver, steps, dt,
    status, reason, seconds, us_per_step, mean_iterations, max_iterations, ...``)."""
    sizes = sizes or ((1, 3, 10, 30) if quick else (1, 2, 5, 10, 20, 30, 50, 100))
    repeats = repeats or (1 if quick else 3)
    return fig10.compute(quick, sizes=tuple(sizes), steps=steps, repeats=repeats,
                         tolerances=TOLERANCES)


def summarize(rows: list[dict]) -> list[str]:
    """Per tolerance: times at the largest n, slopes, failures (as Fig. 10)."""
    return fig10.summarize(rows)


def check(rows: list[dict]) -> None:
    """Ours ran every pendulum at every tolerance with closed joints."""
    fig10.check(rows)


def plot(rows: list[dict], path) -> None:
    fig10.plot_tolerances(rows, path, method_label, TITLE + "; red / yellow: Fan et al. 2018, "
                          "dashed: Lee et al. 2016")


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for the 2020 Fig. 8."""
    from ._report import claim

    paper = "Brüdigam & Manchester 2020"
    ours = [r for r in rows if r["solver"] == "maximal"]
    lee = [r for r in rows if r["solver"].startswith("lee")]
    nmax = max((r["n"] for r in rows), default=0)
    steps = rows[0]["steps"] if rows else 0
    out = [claim(paper, "Fig. 8: ours simulates every n-link pendulum at tolerances 1e-6, "
                 "1e-8, 1e-10", "all succeed",
                 f"{sum(r['status'] == 'ok' for r in ours)}/{len(ours)} runs of {steps} steps "
                 f"succeed (n <= {nmax})",
                 "reproduced" if all(r["status"] == "ok" for r in ours) else "not reproduced")]
    out.append(claim(paper, "Fig. 8: the 2nd- and 3rd-order minimal-coordinate VIs fail to "
                     "converge (stopped after 100 Newton steps) for many links and tight "
                     "tolerances", "failures at small tolerances / many links",
                     f"{fig10.failures(rows)} (n <= {nmax}); Lee et al. 2016: "
                     f"{sum(r['status'] != 'ok' for r in lee)}/{len(lee)} runs fail",
                     fig10.failure_pattern(rows),
                     "the paper's comparators are Fan et al.'s Galerkin VIs (ref. [7]; our "
                     "implementation from the paper, Newton <= 100 iterations, tol on "
                     "max|R|/Δt in N m, the units of ours); Lee et al. 2016 (ref. [13]) with "
                     "its scale-free per-joint tolerance Δt|f_i|/M_ii does not fail",
                     against=fig10.SOLVERS[1:]))
    parts, ratios = [], []
    for solver in ("fan-2nd", "fan-3rd", "lee-riqn", "lee-newton"):
        r = fig10.timing_ratio(rows, solver)
        if r is not None:
            parts.append(f"ours / {solver} {r[2]:.1f}x")
            if solver in fig10.PAPER_COMPARATORS:
                ratios.append(r[2])
    if ratios:
        n, tol, _ = fig10.timing_ratio(rows, "maximal")
        out.append(claim(paper, "§6: ours is competitive in time with minimal-coordinate "
                         "variational integrators", "competitive (plot)",
                         f"n = {n}, tol {tol:g}: " + ", ".join(parts),
                         "reproduced" if max(ratios) < 3 else "partly reproduced",
                         "the minimal-coordinate loops are one compiled numba call each, ours "
                         "a Python loop over compiled steps",
                         against=tuple(s for s in fig10.SOLVERS[1:]
                                       if fig10.timing_ratio(rows, s) is not None)))
    return out
