"""Lee, Liu, Park & Srinivasa (2016) Fig. 2-4: the linear-time minimal-coordinate variational
integrator (DRNEA + RIQN) -- energy behaviour, time vs DOF, and root-finder iterations.

Model: :func:`comparisons.minimal_bench.box_chain` (boxes 0.3 × 0.3 × 1.5 m, 1 kg, revolute
joints about x, first joint at 45°, at rest, gravity), as in the paper's Fig. 2a.

* Fig. 2 (panel a): total energy of the 10-body chain over the frames, Δt = 0.01 s, with the
  variational integrator (DRNEA + RIQN, tol 1e-11) and with semi-implicit Euler (the paper's
  comparison), plus explicit Euler and RK4 (:func:`dynamics.minimal.simulate`).
* Fig. 3 (panels b, c): time of ``steps`` steps (Δt = 1 ms) vs DOF for DRNEA + Newton,
  DRNEA + RIQN and DRNEA + Broyden, all in the same compiled loop, initial guess IG1
  (:func:`comparisons.minimal_bench.fig3_timings`), and RIQN's speed-up over Newton beside
  the paper's 3.8× (10 DOF) and 53× (100 DOF). The paper runs 10k frames, as the full
  build does (the quick build 200). Our Newton uses the
  analytic DEL Jacobian of the paper's appendix (Algorithm 4, O(n²)) and a dense solve,
  compiled in the same loop as RIQN (``fig3_timings(newton_jacobian="analytic")``, the
  default; ``"fd"`` times the earlier central finite-difference Jacobian). The paper's SVI
  curve (Johnson & Murphey 2009, its ref. [6]) is :func:`dynamics.minimal.svi.simulate_svi`:
  the midpoint discrete Lagrangian in generalized coordinates with the DEL residual (O(n²))
  and its Jacobian (O(n³)) from frames and frame derivatives cached per link, solved by
  Newton (dense O(n³) solve), same model, Δt, IG1 and scaled tolerance; its time is the
  compiled stepping loop alone (velocities and energies are computed afterwards, while the
  DRNEA loops include their O(n) velocity and energy per step).
* Fig. 4 (panels d, e): (d) scaled DEL residual over the iterations of one step (the paper
  starts from the zero configuration; the public step takes IG1, ``q_{k+1} = q_k``, which
  we use, with Δt = 30 ms at t = 0.3 s so the convergence is visible), (e) iterations per
  step over the frames for Newton and RIQN, and (f) mean iterations for every solver ×
  initial guess IG1/IG2/IG3 (§3.3), 10 DOF, Δt = 1 ms, tol 1e-11.
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

from comparisons.minimal_bench import PAPER_SPEEDUP, box_chain, fig3_timings, speedups
from dynamics.minimal import Model, crba, initial_state, simulate
from dynamics.minimal.svi import simulate_svi
from dynamics.minimal.variational import variational_step

from ._dynamics import label, sample_indices, versions
from ._plotting import finish_axes, save_figure, size_ticks

NAME = "lee2016_fig2_4"
TITLE = ("Linear-time variational integrator, box chains "
         "(Lee, Liu, Park & Srinivasa 2016 Fig. 2-4)")
SOLVERS = ("riqn", "newton", "broyden", "svi", "semi_implicit_euler", "euler", "rk4")
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "newton": "paper's own: DRNEA + Newton with the analytic DEL Jacobian of the paper's appendix"
              " (Algorithm 4)",
    "broyden": "paper's own: DRNEA + Broyden's method",
    "svi": "paper's own: Johnson & Murphey's structured variational integrator (SVI) + Newton, "
           "our implementation from their T-RO 2009 description (numba), not their code",
    "semi_implicit_euler": "paper's own: semi-implicit Euler, the paper's Fig. 2 comparison",
    "euler": "addition: explicit Euler (ABA)",
    "rk4": "addition: RK4 (ABA)",
}
ENERGY_METHODS = ("riqn", "semi_implicit_euler", "euler", "rk4")
#: Drawing order of the energy panel: RIQN on top of the (also flat) RK4 curve.
_DRAW_ORDER = ("rk4", "euler", "semi_implicit_euler", "riqn")
ROOT_FINDERS = ("newton", "riqn", "broyden")
GUESSES = ("ig1", "ig2", "ig3")
TOL = 1e-11
#: A tiny configuration for the test suite.
TINY = {"frames": 100, "dofs": (2, 4), "steps": 20, "iteration_frames": 50}
COLORS = {"riqn": "tab:blue", "newton": "tab:red", "broyden": "tab:green", "svi": "tab:brown",
          "semi_implicit_euler": "tab:orange", "euler": "tab:purple", "rk4": "tab:gray"}


def method_label(m: str) -> str:
    """Legend text naming the implementation and version."""
    v = f"graphsolve {versions()['graphsolve']} dynamics.minimal"
    return {"riqn": f"DRNEA + RIQN (variational, {v})",
            "newton": f"DRNEA + Newton, analytic DEL Jacobian (Alg. 4) ({v})",
            "broyden": f"DRNEA + Broyden ({v})",
            "svi": f"SVI + Newton (Johnson & Murphey, {v}.svi)",
            "semi_implicit_euler": f"semi-implicit Euler + ABA ({v})",
            "euler": f"explicit Euler + ABA ({v})",
            "rk4": f"RK4 + ABA ({v})"}.get(m, label(m))


def _energy_rows(frames, dt, n=10):
    model = Model(box_chain(n))
    q0, v0 = initial_state(model)
    rows = []
    for m in ENERGY_METHODS:
        opts = {"tol": TOL} if m == "riqn" else {}
        row = {"panel": "fig2_energy", "solver": m, "dof": n, "dt": dt, "steps": frames,
               "status": "ok"}
        with np.errstate(all="ignore"):
            try:
                res = simulate(model, q0, v0, dt, frames, m, backend="auto", **opts)
            except Exception as exc:
                rows.append({**row, "status": "failed", "reason": f"{type(exc).__name__}: "
                             f"{exc}"[:200]})
                continue
        E = res.energy
        finite = np.isfinite(E)
        diverged = (not finite.all()) or np.abs(E - E[0]).max() > 1e3 * max(1.0, abs(E[0]))
        rows.append({**row, "status": "diverged" if diverged else "ok",
                     "energy_drift": float(np.abs(E[finite] - E[0]).max()),
                     "final_energy_change": float(E[-1] - E[0])})
        for k in sample_indices(len(E), 400):
            rows.append({"panel": "fig2_series", "solver": m, "frame": int(k),
                         "energy": float(E[k]), "status": "ok"})
    return rows


def _svi_rows(dofs, steps, dt=1e-3):
    """Fig. 3's SVI curve: :func:`~dynamics.minimal.svi.simulate_svi` on the same box chains,
    Δt, initial guess (IG1) and scaled tolerance as :func:`fig3_timings`."""
    simulate_svi(Model(box_chain(2)), [0.3, 0.0], [0.0, 0.0], dt, 2, tol=TOL)   # compile
    rows = []
    for n in dofs:
        model = Model(box_chain(n))
        q0 = np.zeros(n)
        q0[0] = np.pi / 4
        res = simulate_svi(model, q0, np.zeros(n), dt, steps, tol=TOL, initial_guess="ig1",
                           norm="scaled")
        rows.append({"panel": "fig3_timing", "status": "failed" if res.failed else "ok",
                     "steps": steps, "dof": n, "solver": "svi", "seconds": res.seconds,
                     "per_step_us": 1e6 * res.seconds / steps,
                     "mean_iterations": float(res.iterations.mean()),
                     "max_iterations": int(res.iterations.max()),
                     "energy_error": float(np.abs(res.energy - res.energy[0]).max())})
    return rows


def _slope(rows, solver, last=2):
    """Log-log slope of time vs DOF over the ``last`` largest DOFs of ``solver``."""
    pts = sorted((r["dof"], r["seconds"]) for r in _panel(rows, "fig3_timing", solver=solver))
    pts = pts[-last:]
    if len(pts) < 2:
        return None
    x, y = np.log([d for d, _ in pts]), np.log([t for _, t in pts])
    return float(np.polyfit(x, y, 1)[0])


def _convergence_rows(n=10, dt=0.03, frame=10):
    """Residual history of one step (Fig. 4a) from the state at ``frame`` of an RIQN run."""
    model = Model(box_chain(n))
    q0, v0 = initial_state(model)
    ref = simulate(model, q0, v0, dt, frame, "riqn", backend="auto", tol=TOL)
    q, v = ref.q[-1], ref.v[-1]
    data = model.create_data()
    p = crba(model, data, q) @ v
    rows = []
    for s in ROOT_FINDERS:
        hist: list = []
        variational_step(model, data, q, p, dt, solver=s, initial_guess="ig1", tol=1e-14,
                         max_iter=50, history=hist)
        rows += [{"panel": "fig4a_convergence", "solver": s, "iteration": i,
                  "residual": float(r), "status": "ok"} for i, r in enumerate(hist)]
    return rows


def _iteration_rows(frames, n=10, dt=1e-3):
    model = Model(box_chain(n))
    q0, v0 = initial_state(model)
    rows = []
    for s in ROOT_FINDERS:
        for g in GUESSES:
            res = simulate(model, q0, v0, dt, frames, s, backend="auto", tol=TOL,
                           initial_guess=g)
            it = res.iterations
            rows.append({"panel": "fig4b_iterations", "solver": s, "initial_guess": g,
                         "dof": n, "steps": frames, "mean_iterations": float(it.mean()),
                         "std_iterations": float(it.std()), "max_iterations": int(it.max()),
                         "status": "ok"})
            if g == "ig1":
                rows += [{"panel": "fig4b_series", "solver": s, "frame": int(k),
                          "iterations": int(it[k]), "status": "ok"}
                         for k in sample_indices(len(it), 300)]
    return rows


def compute(quick: bool = True, frames: int | None = None, dofs=None, steps: int | None = None,
            iteration_frames: int | None = None) -> list[dict]:
    """Rows tagged by ``panel``: ``fig2_energy`` / ``fig2_series`` (energy), ``fig3_timing``
    (``dof, solver, seconds, per_step_us, mean_iterations, energy_error``), ``fig3_speedup``,
    ``fig4a_convergence``, ``fig4b_iterations`` / ``fig4b_series``."""
    frames = frames or (1000 if quick else 10000)
    dofs = dofs or ((2, 5, 10, 20) if quick else (2, 5, 10, 20, 50, 100))
    steps = steps or (200 if quick else 10000)            # the paper: 10k frames
    iteration_frames = iteration_frames or (500 if quick else 2000)
    rows = []
    parts = ["fig2", "fig3", "fig4"]
    for part in tqdm(parts, desc=NAME, unit="panel"):
        if part == "fig2":
            rows += _energy_rows(frames, 0.01)
        elif part == "fig3":
            t = fig3_timings(tuple(dofs), steps=steps, tol=TOL)
            rows += [{"panel": "fig3_timing", "status": "ok", "steps": steps, **r} for r in t]
            rows += _svi_rows(dofs, steps)
            for s in ("riqn", "broyden"):
                rows += [{"panel": "fig3_speedup", "solver": s, "dof": d, "speedup": x,
                          "paper_speedup": PAPER_SPEEDUP.get(d) if s == "riqn" else None,
                          "status": "ok"} for d, x in sorted(speedups(t, solver=s).items())]
        else:
            rows += _convergence_rows()
            rows += _iteration_rows(iteration_frames)
    return rows


def _panel(rows, name, **kw):
    return [r for r in rows if r["panel"] == name and all(r.get(k) == v for k, v in kw.items())]


def summarize(rows: list[dict]) -> list[str]:
    """Energy drift per method, speed-ups vs the paper's, iterations per solver."""
    out = []
    for r in _panel(rows, "fig2_energy"):
        out.append(f"Fig. 2, 10-body chain, {r['steps']} frames of Δt = {r['dt']} s: "
                   f"{r['solver']} {r['status']}, max |E - E0| "
                   f"{r.get('energy_drift', float('nan')):.3g} J")
    sp = _panel(rows, "fig3_speedup", solver="riqn")
    out.append("Fig. 3, RIQN speed-up over Newton: " + ", ".join(
        f"{r['dof']} DOF {r['speedup']:.1f}x"
        + (f" (paper {r['paper_speedup']:g}x)" if r["paper_speedup"] else "") for r in sp))
    sp = _panel(rows, "fig3_speedup", solver="broyden")
    out.append("Fig. 3, Broyden speed-up over Newton: " + ", ".join(
        f"{r['dof']} DOF {r['speedup']:.1f}x" for r in sp))
    t = {(r["dof"], r["solver"]): r for r in _panel(rows, "fig3_timing")}
    out.append("Fig. 3, µs per step (SVI / DRNEA + Newton / DRNEA + RIQN): " + ", ".join(
        f"{d} DOF {t[d, 'svi']['per_step_us']:.0f} / {t[d, 'newton']['per_step_us']:.0f} / "
        f"{t[d, 'riqn']['per_step_us']:.0f}" for d in sorted({d for d, s in t if s == "svi"})
        if (d, "newton") in t and (d, "riqn") in t))
    slope = _slope(rows, "svi")
    if slope is not None:
        out.append(f"Fig. 3, SVI log-log slope of time vs DOF (two largest DOFs): {slope:.2f}")
    for s in ROOT_FINDERS:
        h = _panel(rows, "fig4a_convergence", solver=s)
        its = {r["initial_guess"]: r for r in _panel(rows, "fig4b_iterations", solver=s)}
        out.append(f"Fig. 4, {s}: one step from IG1 reaches {h[-1]['residual']:.1e} in "
                   f"{len(h) - 1} iterations; iterations per step (mean ± std) " + ", ".join(
                       f"{g} {r['mean_iterations']:.2f} ± {r['std_iterations']:.2f}"
                       for g, r in its.items()))
    out.append("paper Fig. 4b (zero-configuration guess): Newton 4 ± 0.0, RIQN 5.69 ± 1.16")
    return out


def check(rows: list[dict]) -> None:
    """RIQN conserves energy far better than semi-implicit Euler; RIQN is faster than Newton
    from 5 DOF on; Newton converges in no more iterations than RIQN on the same step."""
    e = {r["solver"]: r for r in _panel(rows, "fig2_energy")}
    assert e["riqn"]["status"] == "ok"
    assert e["riqn"]["energy_drift"] < 0.1 * e["semi_implicit_euler"]["energy_drift"]
    t = {(r["dof"], r["solver"]): r for r in _panel(rows, "fig3_timing")}
    assert all(r["seconds"] > 0 and r["energy_error"] < 1e-2 for r in t.values())
    sp = _panel(rows, "fig3_speedup", solver="riqn")
    assert all(r["speedup"] > 1.0 for r in sp if r["dof"] >= 5)
    n_newton = len(_panel(rows, "fig4a_convergence", solver="newton"))
    n_riqn = len(_panel(rows, "fig4a_convergence", solver="riqn"))
    assert 1 < n_newton <= n_riqn


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(19, 11), layout="constrained")
    ax = axes[0][0]
    info = {r["solver"]: r for r in _panel(rows, "fig2_energy")}
    lims = []
    for m in _DRAW_ORDER:
        s = _panel(rows, "fig2_series", solver=m)
        if not s:
            continue
        e = np.array([r["energy"] for r in s])
        status = info[m]["status"]
        ax.plot([r["frame"] for r in s], e, color=COLORS[m], lw=2.0 if m == "riqn" else 1.2,
                ls="--" if m == "rk4" else "-",
                label=method_label(m) + ("" if status == "ok" else f" [{status}]"))
        if status == "ok":
            lims += [np.nanmin(e), np.nanmax(e)]
    if lims:
        lo, hi = min(lims), max(lims)
        pad = 0.15 * max(hi - lo, 1e-3)
        ax.set_ylim(lo - pad, hi + pad)
    dt = next(iter(info.values()))["dt"] if info else 0.01
    ax.set_xlabel(f"frame (Δt = {dt} s)")
    ax.set_ylabel("total energy [J]")
    ax.set_title("(a) Fig. 2b: energy of the 10-body chain", fontsize=10)
    ax.legend(fontsize=7)

    timing = _panel(rows, "fig3_timing")
    steps = timing[0]["steps"] if timing else 0
    for s in ROOT_FINDERS + ("svi",):
        pts = sorted((r["dof"], r["seconds"]) for r in timing if r["solver"] == s)
        if pts:
            for a in (axes[0][1],):
                a.loglog(*zip(*pts, strict=True), "-o", ms=3, color=COLORS[s],
                         label=method_label(s))
    dofs = sorted({r["dof"] for r in timing})
    for a in (axes[0][1], axes[0][2]):
        size_ticks(a, sorted(set(dofs) | set(PAPER_SPEEDUP)) if a is axes[0][2] else dofs)
    axes[0][1].set_xlabel("degrees of freedom (bodies in the chain)")
    axes[0][1].set_ylabel(f"time for {steps} steps of Δt = 1 ms [s]")
    axes[0][1].set_title("(b) Fig. 3: time vs DOF (IG1, tol 1e-11, compiled loop)",
                         fontsize=10)
    axes[0][1].legend(fontsize=6.5, loc="upper left")
    ax = axes[0][2]
    for s, mk in (("riqn", "o"), ("broyden", "s")):
        sp = _panel(rows, "fig3_speedup", solver=s)
        ax.loglog([r["dof"] for r in sp], [r["speedup"] for r in sp], "-" + mk, ms=4,
                  color=COLORS[s], label=f"Newton time / {s.upper() if s == 'riqn' else 'Broyden'}"
                  " time (ours)")
    ax.loglog(list(PAPER_SPEEDUP), list(PAPER_SPEEDUP.values()), "*", ms=13, color="black",
              label="paper: RIQN / Newton (3.8x at 10, 53x at 100 DOF)")
    ax.axhline(1.0, color="black", lw=0.7)
    ax.set_xlabel("degrees of freedom")
    ax.set_ylabel("speed-up over DRNEA + Newton [×]")
    ax.set_title("(c) Fig. 3: speed-up over Newton (analytic Jacobian)", fontsize=10)
    ax.legend(fontsize=7)

    ax = axes[1][0]
    for s in ROOT_FINDERS:
        h = _panel(rows, "fig4a_convergence", solver=s)
        ax.semilogy([r["iteration"] for r in h], [max(r["residual"], 1e-18) for r in h],
                    "-o", ms=3, color=COLORS[s], label=method_label(s))
    ax.set_xlabel("iteration")
    ax.set_ylabel("scaled DEL residual max_i Δt|f_i|/M_ii [rad]")
    ax.set_title("(d) Fig. 4a: convergence in one step (10 DOF, IG1, Δt = 30 ms)", fontsize=10)
    ax.legend(fontsize=6.5, loc="upper right")
    ax = axes[1][1]
    for s in ("newton", "riqn"):
        it = _panel(rows, "fig4b_series", solver=s)
        ax.plot([r["frame"] for r in it], [r["iterations"] for r in it], ".-", ms=3, lw=0.6,
                color=COLORS[s], label=method_label(s))
    ax.set_xlabel("frame (Δt = 1 ms)")
    ax.set_ylabel("iterations per step")
    ax.set_title("(e) Fig. 4b: iterations over frames (10 DOF, IG1)", fontsize=10)
    ax.legend(fontsize=7)
    ax = axes[1][2]
    its = _panel(rows, "fig4b_iterations")
    width = 0.25
    for i, s in enumerate(ROOT_FINDERS):
        rs = [next((r for r in its if r["solver"] == s and r["initial_guess"] == g), None)
              for g in GUESSES]
        ax.bar(np.arange(len(GUESSES)) + (i - 1) * width,
               [r["mean_iterations"] if r else 0 for r in rs], width,
               yerr=[r["std_iterations"] if r else 0 for r in rs], color=COLORS[s],
               label=s, capsize=2)
    ax.set_xticks(range(len(GUESSES)), [g.upper() for g in GUESSES])
    ax.set_xlabel("initial guess (§3.3)")
    ax.set_ylabel("mean iterations per step (± std)")
    ax.set_title("(f) iterations by initial guess\n(paper, zero guess: Newton 4, RIQN 5.69)",
                 fontsize=9)
    ax.legend(fontsize=7)
    finish_axes(axes, legend=False)
    save_figure(fig, path, TITLE, dpi=110)


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for Lee et al. 2016 Fig. 2-4."""
    from ._report import claim

    paper = "Lee et al. 2016"
    out = []
    e = {r["solver"]: r for r in _panel(rows, "fig2_energy")}
    if "riqn" in e and "semi_implicit_euler" in e:
        ri, se = e["riqn"].get("energy_drift"), e["semi_implicit_euler"].get("energy_drift")
        out.append(claim(paper, "Fig. 2: RIQN does not dissipate energy while semi-implicit "
                         "Euler does (10-body chain)", "RIQN flat, Euler drifts",
                         f"max |E - E0|: RIQN {ri:.3g} J, semi-implicit Euler {se:.3g} J",
                         "reproduced" if ri < 0.1 * se else "not reproduced",
                         "semi-implicit Euler's energy oscillates and drifts, mostly upwards "
                         "here, rather than dissipating", against=("semi_implicit_euler",)))
    sp = {r["dof"]: r["speedup"] for r in _panel(rows, "fig3_speedup", solver="riqn")}
    for d, p in PAPER_SPEEDUP.items():
        if d in sp:
            out.append(claim(paper, f"Fig. 3: RIQN {p:g}x faster than Newton at {d} DOF",
                             f"{p:g}x", f"{sp[d]:.1f}x",
                             "reproduced" if sp[d] >= 0.5 * p else "not reproduced",
                             "our Newton uses the analytic DEL Jacobian (Algorithm 4, O(n²)) "
                             "and a dense solve, compiled in the same numba loop as RIQN, "
                             "and needs fewer iterations; up to 100 DOF that Jacobian and "
                             "solve cost only a few times RIQN's O(n) sweeps (about 2x at "
                             "100 DOF here), so the paper's 53x gap does not appear",
                             against=("newton",)))
    if not any(d in sp for d in PAPER_SPEEDUP) and sp:
        d = max(sp)
        out.append(claim(paper, "Fig. 3: RIQN faster than Newton, growing with DOF",
                         "3.8x at 10, 53x at 100 DOF", f"{sp[d]:.1f}x at {d} DOF",
                         "partly reproduced" if sp[d] > 1.0 else "not reproduced",
                         "smaller sizes than the paper's; our Newton uses the analytic "
                         "O(n²) DEL Jacobian compiled in the same loop", against=("newton",)))
    t = {(r["dof"], r["solver"]): r["seconds"] for r in _panel(rows, "fig3_timing")}
    both = sorted(d for d, s in t if s == "svi" and (d, "newton") in t)
    if both:
        big = both[-1]
        ratio = {d: t[d, "svi"] / t[d, "newton"] for d in both}
        out.append(claim(paper, "Fig. 3: for the same root finder (Newton), DRNEA is faster than "
                         "SVI", "DRNEA + Newton below SVI (plot)",
                         "SVI / DRNEA + Newton time: " + ", ".join(
                             f"{d} DOF {ratio[d]:.2g}x" for d in both),
                         "reproduced" if min(ratio.values()) > 1.0 and big >= 20 else
                         "partly reproduced" if ratio[big] > 1.0 else "not reproduced",
                         "SVI: Johnson & Murphey's integrator in our implementation "
                         "(midpoint rule, cached frame derivatives, dense Newton), compiled like "
                         "the DRNEA loops; at a few DOF its simpler 4×4 algebra is faster than "
                         "DRNEA's SE(3) logarithms, from about 20 DOF its O(n³) Jacobian "
                         "dominates", against=("svi", "newton")))
        slope = _slope(rows, "svi")
        if slope is not None and big >= 20:
            out.append(claim(paper, "§1: the SVI costs O(n²) per DEL evaluation and O(n³) per "
                             "Jacobian (plus the O(n³) inversion)", "O(n³) per Newton step",
                             f"log-log slope of SVI time vs DOF {slope:.2f} ("
                             + " -> ".join(str(d) for d in both[-2:]) + " DOF)",
                             "reproduced" if slope >= 2.5 else "partly reproduced",
                             "cache sizes Σ depth_i and Σ depth_i (depth_i + 1)/2 "
                             "(dynamics.minimal.svi.cache_sizes); below ~50 DOF the O(n²) and "
                             "per-link overheads lower the slope", against=("svi",)))
    it = {r["solver"]: r for r in _panel(rows, "fig4b_iterations", initial_guess="ig1")}
    if "newton" in it and "riqn" in it:
        n, r = it["newton"]["mean_iterations"], it["riqn"]["mean_iterations"]
        out.append(claim(paper, "Fig. 4b: Newton needs fewer iterations per step than RIQN",
                         "Newton 4, RIQN 5.69 (zero-configuration guess)",
                         f"Newton {n:.2f}, RIQN {r:.2f} (IG1)",
                         "reproduced" if n <= r else "not reproduced",
                         "IG1 instead of the zero configuration, so fewer iterations",
                         against=("newton",)))
    return out
