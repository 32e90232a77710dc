"""Robustness sweep of the contact solver: seeded random sphere chains run until they come to
rest, recording which runs the interior-point method fails to converge on.

Each case is :func:`dynamics.models.sphere_chain` with its size ``n`` drawn from ``sizes`` and
its friction coefficient, initial velocity, time step and number of friction directions drawn
from :data:`RANGES` by a generator seeded with ``(seed, case index)`` (a case's parameters do
not depend on how many cases run). The chain slides, decelerates at about ``μ g`` and comes to
rest after ``v / (μ g)`` seconds, at most 1.02 s over :data:`RANGES` (the default ``duration``
is 1.1 s): the run crosses the transition from sliding to sticking, where the contact forces
of a chain are statically indeterminate (ball joints carry load between the spheres).

One CSV row per case, appended as soon as the case finishes: its parameters, ``status``
(``ok`` or ``failed``), the time and message of the :class:`dynamics.maximal.NewtonError`,
the steps run, the largest number of interior-point iterations of a step, the smallest
contact distance, the largest complementarity product and the steps that converged only in
halves (``Simulation.halvings``; ``halvings=0`` runs without). ``resume`` skips the cases the
file already holds.
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from dynamics import models
from dynamics.maximal import NewtonError, Simulation

__all__ = ["RANGES", "COLUMNS", "sweep_case", "run_contact_sweep", "summarize",
           "plot_contact_sweep"]

#: Parameter ranges: friction coefficient and initial velocity (m/s) uniform, time step (s)
#: and friction directions drawn from the tuples.
RANGES = {"friction": (0.2, 0.9), "velocity": (0.5, 2.0), "dt": (0.005, 0.01, 0.02),
          "n_friction": (2, 4)}
COLUMNS = ("case", "seed", "n", "friction", "velocity", "dt", "n_friction", "status",
           "fail_t", "message", "steps", "max_iterations", "min_distance", "max_complementarity",
           "seconds", "halved_steps")


def sweep_case(index: int, seed: int, sizes) -> dict:
    """The parameters of case ``index``: its own generator ``(seed, index)``."""
    rng = np.random.default_rng([seed, index])
    return {"case": index, "seed": seed, "n": int(rng.choice(np.asarray(sizes))),
            "friction": float(rng.uniform(*RANGES["friction"])),
            "velocity": float(rng.uniform(*RANGES["velocity"])),
            "dt": float(rng.choice(RANGES["dt"])),
            "n_friction": int(rng.choice(RANGES["n_friction"]))}


def _run_case(p: dict, duration: float, halvings: int | None = None) -> dict:
    spec = models.sphere_chain(p["n"], friction=p["friction"], velocity=p["velocity"],
                               n_friction=p["n_friction"])
    sim = Simulation(spec, dt=p["dt"])
    if halvings is not None:
        sim.halvings = halvings
    steps = int(round(duration / p["dt"]))
    t0 = time.perf_counter()
    try:
        traj = sim.run(steps, progress=False)
    except NewtonError as exc:
        return {**p, "status": "failed", "fail_t": round(sim.t, 10), "message": str(exc),
                "steps": int(round(sim.t / p["dt"])), "seconds": time.perf_counter() - t0,
                "halved_steps": sim.halved_steps}
    return {**p, "status": "ok", "fail_t": "", "message": "", "steps": steps,
            "max_iterations": int(traj.iterations[1:].max()),
            "min_distance": float(traj.contact_distance.min()),
            "max_complementarity": float(traj.complementarity[1:].max()),
            "seconds": time.perf_counter() - t0, "halved_steps": sim.halved_steps}


def _read(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def run_contact_sweep(cases: int = 160, sizes=(10, 30, 60, 100), seed: int = 0,
                      duration: float = 1.1, out="results/contact_sweep.csv",
                      resume: bool = False, progress: bool = True,
                      halvings: int | None = None) -> list[dict]:
    """Run cases ``0 .. cases-1`` (:func:`sweep_case`), each for ``duration`` simulated
    seconds, appending a row per case to ``out`` (``halvings``: ``Simulation.halvings``,
    ``None`` its default). With ``resume`` the cases already in ``out``
    (same index and seed) are kept and not run again; otherwise ``out`` starts empty. Returns
    every row of ``out`` (read back as strings for resumed cases)."""
    if not sizes or min(sizes) < 1:
        raise ValueError(f"sizes must be positive chain lengths, got {sizes!r}")
    if cases < 1 or not duration > 0:
        raise ValueError(f"cases must be >= 1 and duration > 0, got {cases}, {duration}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if resume and out.exists():
        done = {(int(r["case"]), int(r["seed"])): r for r in _read(out)}
    else:
        with out.open("w", newline="") as fh:
            csv.DictWriter(fh, fieldnames=COLUMNS).writeheader()
    rows = []
    for i in tqdm(range(cases), desc="contact sweep", disable=not progress):
        if (i, seed) in done:
            rows.append(done[(i, seed)])
            continue
        row = _run_case(sweep_case(i, seed, sizes), duration, halvings)
        with out.open("a", newline="") as fh:
            csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore").writerow(row)
        rows.append(row)
    return rows


def summarize(rows: list[dict]) -> dict:
    """Failures per chain length: ``{n: (failed, cases)}`` and the total."""
    per: dict[int, list[int]] = {}
    for r in rows:
        c = per.setdefault(int(r["n"]), [0, 0])
        c[0] += r["status"] == "failed"
        c[1] += 1
    failed = sum(c[0] for c in per.values())
    return {"per_size": {n: tuple(c) for n, c in sorted(per.items())}, "failed": failed,
            "cases": len(rows)}


def plot_contact_sweep(rows: list[dict], png) -> None:
    """Friction against initial velocity per case, failed runs marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for status, style in (("ok", dict(marker="o", color="tab:blue", alpha=0.4)),
                          ("failed", dict(marker="x", color="tab:red"))):
        sel = [r for r in rows if r["status"] == status]
        ax.scatter([float(r["velocity"]) for r in sel], [float(r["friction"]) for r in sel],
                   s=[8 + 0.4 * int(r["n"]) for r in sel], label=f"{status} ({len(sel)})",
                   **style)
    ax.set_xlabel("initial velocity [m/s]")
    ax.set_ylabel("friction coefficient")
    ax.set_title("sphere chains coming to rest (marker size: chain length)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
