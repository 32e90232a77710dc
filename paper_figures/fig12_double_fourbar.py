"""Brüdigam et al. (2023) Fig. 12: the double four-bar linkage benchmark, whose bars all become
parallel (a singular constraint configuration) twice per crank revolution.

:func:`dynamics.models.double_fourbar` (three 1 m, 1 kg cranks on pivots 1 m apart, two 1 m,
1 kg couplers, cranks released upright at 1 rad/s), 10 s with Δt = 0.01 s and 0.001 s. Panels:
(a) the first crank's angle, (b) the energy error, (c) the joint-constraint violation, (d) the
kinetic, potential and total energy of our run.

The paper compares with the variational GGL method of its ref. [17], for which no
implementation is available here. In its place the red lines show the minimal-coordinate
alternative of Fig. 7a - Pinocchio tree, loop joints imposed at acceleration level, RK4
(:func:`comparisons.constrained_minimal.simulate_constrained_pinocchio`) - up to the time its
constraint violation passes 1 cm (it fails at the singular configurations).
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

from comparisons.constrained_minimal import simulate_constrained_pinocchio
from comparisons.peer_tree import SimulationDivergedError
from dynamics import models
from dynamics.maximal import Simulation

from ._dynamics import OURS_COLOR, PEER_COLOR, bin_max, label, sample_indices
from ._plotting import finish_axes, save_figure

NAME = "fig12_double_fourbar"
TITLE = ("Double four-bar linkage (Brüdigam et al. 2023 Fig. 12); the paper's GGL method is "
         "not available — red: minimal-coordinate RK4 instead")
SOLVERS = ("maximal", "pinocchio-rk4-kkt")
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "pinocchio-rk4-kkt": "substitute: for the variational GGL method of the paper's ref. [17] "
                         "(Matlab, not available); Pinocchio tree, loops at acceleration level, "
                         "RK4",
}
#: A tiny configuration for the test suite.
TINY = {"duration": 0.5, "steps_sizes": (0.01,)}
#: The peer counts as failed from the first time its loops open by more than this (m).
FAILED_VIOLATION = 1e-2
MAX_POINTS = 2000


def _peer(spec, dt, steps):
    """The RK4 run up to divergence: its outputs and the failure time (or ``None``)."""
    try:
        return simulate_constrained_pinocchio(spec, dt, steps, integrator="rk4"), None
    except SimulationDivergedError as err:               # rerun up to the last finite state
        out = simulate_constrained_pinocchio(spec, dt, max(err.step - 1, 0), integrator="rk4")
        return out, err.time


def _rows(solver, dt, t, angle, kinetic, potential, violation, status):
    energy = kinetic + potential
    idx = sample_indices(len(t), MAX_POINTS)
    viol = bin_max(violation, idx)
    return [{"solver": solver, "dt": dt, "status": status, "t": float(t[i]),
             "crank_angle": float(angle[i]), "kinetic": float(kinetic[i]),
             "potential": float(potential[i]), "energy": float(energy[i]),
             "energy_error": float(energy[i] - energy[0]), "constraint_violation": float(v)}
            for i, v in zip(idx, viol, strict=True)]


def compute(quick: bool = True, duration: float = 10.0, steps_sizes=(0.01, 0.001)
            ) -> list[dict]:
    """Rows ``solver, dt, status, t, crank_angle, kinetic, potential, energy, energy_error,
    constraint_violation`` (the violation is the maximum since the previous row), plus
    ``failed_at`` (s) on the rows of a peer run that failed."""
    spec = models.double_fourbar()
    rows = []
    for dt in tqdm(steps_sizes, desc=NAME, unit="dt"):
        steps = round(duration / dt)
        tr = Simulation(spec, dt).run(steps, progress=False)
        rows += _rows("maximal", dt, tr.t, tr.minimal_coordinates[:, 0], tr.kinetic_energy,
                      tr.potential_energy, tr.constraint_violation, "ok")
        out, failed = _peer(spec, dt, steps)
        bad = np.flatnonzero(out["constraint_violation"] > FAILED_VIOLATION)
        end = len(out["t"]) if bad.size == 0 else int(bad[0])
        if bad.size:
            failed = float(out["t"][end])
        peer = _rows("pinocchio-rk4-kkt", dt, out["t"][:end], out["coordinates"]["pivot1"][:end, 0],
                     out["kinetic"][:end], out["potential"][:end],
                     out["constraint_violation"][:end], "ok" if failed is None else "failed")
        rows += [{**r, "failed_at": failed if failed is not None else ""} for r in peer]
    return rows


def _series(rows, solver, dt, key):
    rs = [r for r in rows if r["solver"] == solver and float(r["dt"]) == dt]
    return np.array([float(r["t"]) for r in rs]), np.array([float(r[key]) for r in rs])


def _failed_at(rows, dt):
    f = [r["failed_at"] for r in rows if r["solver"] == "pinocchio-rk4-kkt"
         and float(r["dt"]) == dt and r.get("failed_at") not in ("", None)]
    return float(f[0]) if f else None


def summarize(rows: list[dict]) -> list[str]:
    """Energy error, constraint violation and crank turns of ours; where the peer failed."""
    out = []
    for dt in sorted({float(r["dt"]) for r in rows}, reverse=True):
        t, e = _series(rows, "maximal", dt, "energy_error")
        _, v = _series(rows, "maximal", dt, "constraint_violation")
        _, a = _series(rows, "maximal", dt, "crank_angle")
        _, etot = _series(rows, "maximal", dt, "energy")
        failed = _failed_at(rows, dt)
        tp, vp = _series(rows, "pinocchio-rk4-kkt", dt, "constraint_violation")
        peer = (f"RK4 at acceleration level failed (violation > {FAILED_VIOLATION:g} m) at "
                f"t = {failed:.2f} s" if failed is not None else
                f"RK4 at acceleration level ran {tp[-1]:g} s, max violation {vp.max():.1e} m")
        out.append(f"Δt = {dt:g} s, {t[-1]:g} s: ours max |ΔE| {np.abs(e).max():.2e} J "
                   f"({np.abs(e).max() / abs(etot[0]):.1e} of E0 = {etot[0]:.2f} J), max "
                   f"constraint violation {v.max():.1e} m, first crank turned "
                   f"{(a[-1] - a[0]) / (2 * np.pi):.2f} revolutions; {peer}")
    out.append("the paper's GGL comparison is not reproduced (no implementation available)")
    return out


def check(rows: list[dict]) -> None:
    """Ours keeps the loops closed and the energy bounded."""
    for dt in {float(r["dt"]) for r in rows}:
        _, v = _series(rows, "maximal", dt, "constraint_violation")
        _, e = _series(rows, "maximal", dt, "energy_error")
        _, etot = _series(rows, "maximal", dt, "energy")
        assert v.max() < 1e-8 and np.abs(e).max() < 1e-3 * abs(etot[0])


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 8.4), layout="constrained")
    (a, b), (c, d) = axes
    dts = sorted({float(r["dt"]) for r in rows}, reverse=True)
    styles = dict(zip(dts, ("-", "--", ":"), strict=False))
    for dt in dts:
        ls = styles[dt]
        for solver, color in (("maximal", OURS_COLOR), ("pinocchio-rk4-kkt", PEER_COLOR)):
            lab = f"{label(solver)}, Δt = {dt:g} s"
            t, y = _series(rows, solver, dt, "crank_angle")
            if not len(t):
                continue
            a.plot(t, y, ls, color=color, lw=1.2, label=lab)
            t, y = _series(rows, solver, dt, "energy_error")
            b.semilogy(t[1:], np.maximum(np.abs(y[1:]), 1e-16), ls, color=color, lw=1,
                       label=lab)
            t, y = _series(rows, solver, dt, "constraint_violation")
            c.semilogy(t[1:], np.maximum(y[1:], 1e-17), ls, color=color, lw=1, label=lab)
            failed = _failed_at(rows, dt) if solver != "maximal" else None
            for ax in (a, b, c):
                if failed is not None:
                    ax.axvline(failed, color=color, ls=ls, lw=0.8, alpha=0.6)
        for key, color in (("kinetic", "tab:orange"), ("potential", "tab:green"),
                           ("energy", "black")):
            t, y = _series(rows, "maximal", dt, key)
            d.plot(t, y, ls, color=color, lw=1.2, label=f"{key} (ours), Δt = {dt:g} s")
    a.set_ylabel("first crank angle [rad]")
    a.set_title("(a) trajectory (vertical line: RK4 run fails)", fontsize=10)
    b.set_ylabel("energy error |E(t) − E(0)| [J]")
    b.set_ylim(1e-16, 1e2)                     # a failing RK4 run leaves the axis upwards
    b.set_title("(b) energy error", fontsize=10)
    c.set_ylabel("constraint violation [m] (max per interval)")
    c.set_title("(c) constraint violation", fontsize=10)
    d.set_ylabel("energy [J]")
    d.set_title("(d) energy components of our simulation", fontsize=10)
    lo, hi = d.get_ylim()
    d.set_ylim(lo, hi + 0.45 * (hi - lo))      # room for the legend
    finish_axes([a, b, c], xlabel="time t [s]")
    finish_axes(d, xlabel="time t [s]", ncol=2, loc="upper center")
    save_figure(fig, path, TITLE)


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for Fig. 12."""
    from ._report import B2023, claim

    out = []
    for dt in sorted({float(r["dt"]) for r in rows}, reverse=True):
        t, e = _series(rows, "maximal", dt, "energy_error")
        _, v = _series(rows, "maximal", dt, "constraint_violation")
        late = t >= 0.5 * t[-1]
        bounded = np.abs(e[late]).max() < 2 * np.abs(e[~late]).max() + 1e-12
        out.append(claim(B2023, f"Fig. 12 (Δt = {dt:g} s): the double four-bar passes its "
                         "singular configurations with bounded energy error and small "
                         "constraint violation", "bounded; violation very low",
                         f"max |ΔE| {np.abs(e).max():.1e} J over {t[-1]:g} s, violation "
                         f"{v.max():.1e} m", "reproduced" if bounded and v.max() < 1e-8
                         else "not reproduced"))
    out.append(claim(B2023, "Fig. 12: the GGL method's energy error grows", "grows",
                     "GGL not implemented", "not applicable",
                     "an acceleration-level RK4 is shown instead; it fails at the singular "
                     "configurations"))
    return out
