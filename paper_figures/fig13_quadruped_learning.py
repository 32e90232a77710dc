"""Brüdigam et al. (2023) Fig. 13 (§5.4, Appendix E): a quadruped of the Unitree A1's build learns
to walk with the sampling-based Algorithm 7, its legs driven by the sinusoidal gait and PD
controllers of Algorithm 6. The paper: "The simulation step size is Δt = 0.001 s", each episode
a 10 s rollout, and "the robot learns to walk a distance of more than 12 m (average velocity of
1.2 m/s) in 100 episodes"; Fig. 13b plots the learning progress.

Model: :func:`dynamics.models.a1_quadruped` (masses, inertias, link lengths, hip positions and
joint axes from Unitree's ``a1_description`` URDF, point feet with friction 0.8); gait and
learning: :mod:`dynamics.gait_learning` (:func:`~dynamics.gait_learning.learn_to_walk`, seeded,
each episode's rollout through :func:`dynamics.rollouts.rollouts`; our readings of the
pseudo-code are listed there). Newton tolerance 1e-8.

Builds: full -- the paper's 100 episodes of 10 s at Δt = 1 ms (10⁶ steps; the summary states
the measured cost per step and the full build's estimated time); quick -- :data:`QUICK`
episodes of :data:`QUICK_DURATION` s (CI), whose distance is not comparable with the paper's.

Panels: (a) the learning curve: distance of every episode's rollout and the best so far (the
paper's Fig. 13b); (b) the trunk's forward position and height over the rollout of the best
parameters (the learned gait); (c) the best gait parameters after each episode.
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

from dynamics import gait_learning

from ._dynamics import OURS_COLOR, one_blas_thread
from ._plotting import finish_axes, save_figure

NAME = "fig13_quadruped_learning"
TITLE = ("A1-like quadruped learning to walk with sampling-based Algorithm 7 "
         "(Brüdigam et al. 2023 Fig. 13)")
SOLVERS = ("maximal",)
#: No comparator: the figure shows our simulator alone, as the paper's does.
COMPARATORS: dict[str, str] = {}
#: The paper's numbers (§5.4): episodes, rollout length (s), step (s), distance (m).
PAPER_EPISODES, PAPER_DURATION, PAPER_DT, PAPER_DISTANCE = 100, 10.0, 0.001, 12.0
#: The quick build: episodes and rollout length (s).
QUICK, QUICK_DURATION = 12, 2.0
TOL = 1e-8
SEED = 0
#: A tiny configuration for the test suite.
TINY = {"episodes": 3, "duration": 0.1}


def compute(quick: bool = True, episodes: int | None = None, duration: float | None = None,
            dt: float = PAPER_DT, seed: int = SEED, samples: int = 1) -> list[dict]:
    """Rows ``kind`` "episode" (``episode, status, distance`` (NaN: failed), ``accepted,
    best_distance, explore, biased``, the tried parameters ``b, a1, d1, a2, d2``,
    ``max_penetration, max_violation, mean_iterations, steps_run``), "path" (``t, x, y, z``: the
    trunk over the rollout of the best parameters) and one "run" row (``episodes, duration,
    dt, seconds, steps_run, us_per_step, full_build_hours``, the best ``distance`` and
    parameters); all ``solver = "maximal"``."""
    episodes = episodes or (QUICK if quick else PAPER_EPISODES)
    duration = duration or (QUICK_DURATION if quick else PAPER_DURATION)
    bar = tqdm(total=episodes, desc=NAME, unit="episode")
    with one_blas_thread():
        result = gait_learning.learn_to_walk(episodes, duration, dt, seed=seed,
                                             samples=samples, tol=TOL,
                                             callback=lambda e: bar.update())
    bar.close()
    steps = round(duration / dt)
    rows, steps_run, best_walk = [], 0, None
    for e in result.episodes:
        for j, (p, d, info) in enumerate(zip(e.params, e.distances, e.info, strict=True)):
            ran = steps if info["status"] == "ok" else (
                round(info["failed_at"] / dt) if np.isfinite(info["failed_at"]) else 0)
            steps_run += ran
            ok = info["status"] == "ok"
            rows.append({"solver": "maximal", "kind": "episode", "episode": e.index,
                         "sample": j, "status": info["status"], "reason": info["reason"],
                         "distance": float(d), "accepted": e.accepted and d == e.best_distance,
                         "best_distance": e.best_distance, "explore": e.explore,
                         "biased": e.biased, **dict(zip(gait_learning.PARAMETER_NAMES,
                                                        map(float, p), strict=True)),
                         "max_penetration": info["max_penetration"] if ok else np.nan,
                         "max_violation": info["max_violation"] if ok else np.nan,
                         "mean_iterations": info["mean_iterations"] if ok else np.nan,
                         "steps_run": ran})
            if ok and (best_walk is None or d > best_walk["distance"]):
                best_walk = info
    if best_walk is not None:
        rows += [{"solver": "maximal", "kind": "path", "status": "ok", "t": float(t),
                  "x": float(x), "y": float(y), "z": float(z)}
                 for t, (x, y, z) in zip(best_walk["t"], best_walk["path"], strict=True)]
    us = 1e6 * result.seconds / max(steps_run, 1)
    full_steps = PAPER_EPISODES * round(PAPER_DURATION / PAPER_DT)
    rows.append({"solver": "maximal", "kind": "run", "status": "ok", "episodes": episodes,
                 "duration": duration, "dt": dt, "seed": seed, "samples": samples,
                 "seconds": result.seconds, "steps_run": steps_run, "us_per_step": us,
                 "full_build_hours": us * 1e-6 * full_steps / 3600.0,
                 "distance": result.distance,
                 **dict(zip(gait_learning.PARAMETER_NAMES, map(float, result.params),
                            strict=True))})
    return rows


def _kind(rows, kind):
    return [r for r in rows if r["kind"] == kind]


def _run(rows) -> dict:
    return _kind(rows, "run")[0]


def _ok(rows):
    return [r for r in _kind(rows, "episode") if r["status"] == "ok"]


def _is_paper_run(run) -> bool:
    return (int(run["episodes"]) >= PAPER_EPISODES and float(run["duration"]) >= PAPER_DURATION
            and float(run["dt"]) <= PAPER_DT)


def summarize(rows: list[dict]) -> list[str]:
    """The learning result, failures, physics checks and the cost per step."""
    run, eps = _run(rows), _kind(rows, "episode")
    ok = _ok(rows)
    out = [f"{int(run['episodes'])} episodes of {float(run['duration']):g} s at Δt = "
           f"{float(run['dt']):g} s (seed {run['seed']}): best distance "
           f"{float(run['distance']):.3f} m ({float(run['distance']) / float(run['duration']):.3f}"
           f" m/s); paper: > {PAPER_DISTANCE:g} m after {PAPER_EPISODES} episodes of "
           f"{PAPER_DURATION:g} s",
           "best parameters (b, a1, d1, a2, d2) = ("
           + ", ".join(f"{float(run[n]):.4f}" for n in gait_learning.PARAMETER_NAMES) + ")",
           f"{sum(bool(r['accepted']) for r in eps)} accepted, {len(eps) - len(ok)} failed "
           f"(fell or Newton failure) of {len(eps)} rollouts"]
    if ok:
        out.append(f"penetration <= {max(float(r['max_penetration']) for r in ok):.1e} m, "
                   f"joint violation <= {max(float(r['max_violation']) for r in ok):.1e}, "
                   f"{np.mean([float(r['mean_iterations']) for r in ok]):.2f} Newton it/step")
    out.append(f"{int(run['steps_run'])} steps in {float(run['seconds']):.1f} s: "
               f"{float(run['us_per_step']):.0f} µs/step; the full build "
               f"({PAPER_EPISODES} × {PAPER_DURATION:g} s at {PAPER_DT:g} s) would take about "
               f"{float(run['full_build_hours']):.2f} h at this cost (less if rollouts fall)")
    return out


def check(rows: list[dict]) -> None:
    """Feet never in the ground, joints closed, and Algorithm 7's bookkeeping: the best
    distance never decreases and grows exactly at the accepted episodes."""
    ok = _ok(rows)
    assert ok, "no rollout finished"
    assert all(float(r["max_penetration"]) < 1e-6 for r in ok)
    assert all(float(r["max_violation"]) < 1e-8 for r in ok)
    best = 0.0
    by_episode: dict[int, list[dict]] = {}
    for r in _kind(rows, "episode"):
        by_episode.setdefault(int(r["episode"]), []).append(r)
    for k in sorted(by_episode):
        samples = by_episode[k]
        kept = [r for r in samples if r["accepted"]]
        assert len(kept) <= 1
        if kept:
            d = float(kept[0]["distance"])
            assert d > best and d == max(float(r["distance"]) for r in samples
                                         if np.isfinite(float(r["distance"])))
            best = d
        else:
            assert not any(float(r["distance"]) > best for r in samples)
        assert all(float(r["best_distance"]) == best for r in samples)
    assert float(_run(rows)["distance"]) == best


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt

    run = _run(rows)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8), layout="constrained")
    a, b, c = axes
    eps = _kind(rows, "episode")
    k = np.array([int(r["episode"]) for r in eps])
    d = np.array([float(r["distance"]) for r in eps])
    fail = ~np.isfinite(d)
    a.plot(k[~fail], d[~fail], "o", ms=3, color="0.5", label="episode's rollout")
    if fail.any():
        a.plot(k[fail], np.zeros(fail.sum()), "x", color="tab:red", ms=5,
               label="failed (fell / Newton)")
    last = {}
    for r in eps:
        last[int(r["episode"])] = float(r["best_distance"])
    a.step(list(last), list(last.values()), where="post", color=OURS_COLOR, lw=1.5,
           label="best so far")
    a.axhline(PAPER_DISTANCE, color="black", ls="--", lw=0.8,
              label=f"paper: > {PAPER_DISTANCE:g} m after {PAPER_EPISODES} × "
                    f"{PAPER_DURATION:g} s")
    if not _is_paper_run(run):
        a.set_yscale("symlog", linthresh=0.01)
    a.set_xlabel("episode")
    a.set_ylabel("distance walked in one rollout [m]")
    a.set_title(f"(a) learning ({int(run['episodes'])} episodes of "
                f"{float(run['duration']):g} s, Δt = {float(run['dt']):g} s)", fontsize=10)
    path_rows = _kind(rows, "path")
    if path_rows:
        t = np.array([float(r["t"]) for r in path_rows])
        b.plot(t, [float(r["x"]) for r in path_rows], color=OURS_COLOR, label="trunk x [m]")
        b.plot(t, [float(r["z"]) for r in path_rows], color="tab:green", label="trunk height [m]")
        b.plot(t, [float(r["y"]) for r in path_rows], color="tab:orange", lw=0.8,
               label="trunk y (sideways) [m]")
    b.set_xlabel("time t [s]")
    b.set_title(f"(b) the best gait: {float(run['distance']):.3f} m in "
                f"{float(run['duration']):g} s", fontsize=10)
    for name, color in zip(gait_learning.PARAMETER_NAMES,
                           ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"),
                           strict=True):
        best = {}
        current = float(gait_learning.STANDING[gait_learning.PARAMETER_NAMES.index(name)])
        for r in eps:
            if r["accepted"]:
                current = float(r[name])
            best[int(r["episode"])] = current
        c.step(list(best), list(best.values()), where="post", color=color, label=name)
    c.set_xlabel("episode")
    c.set_ylabel("parameter value")
    c.set_title("(c) best gait parameters (Algorithm 6: b, a1, d1, a2, d2)", fontsize=10)
    finish_axes(axes)
    save_figure(fig, path, TITLE)


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for Fig. 13."""
    from ._report import B2023, claim

    run, ok = _run(rows), _ok(rows)
    dist, dur = float(run["distance"]), float(run["duration"])
    paper_run = _is_paper_run(run)
    ours = (f"{dist:.2f} m ({dist / dur:.2f} m/s) after {int(run['episodes'])} episodes of "
            f"{dur:g} s at Δt = {float(run['dt']):g} s")
    if paper_run:
        verdict = ("reproduced" if dist > PAPER_DISTANCE else
                   "partly reproduced" if dist > 0.0 else "not reproduced")
        note = ("partly: the robot learned to walk forward but less far than the paper's; "
                if verdict == "partly reproduced" else "")
    else:
        verdict = "not applicable"
        note = (f"this build ran {int(run['episodes'])} episodes of {dur:g} s, not the "
                f"paper's {PAPER_EPISODES} of {PAPER_DURATION:g} s: the distance is not "
                f"comparable (the full build, FIGURE_ARGS=, runs the paper's; estimated "
                f"{float(run['full_build_hours']):.1f} h at the measured "
                f"{float(run['us_per_step']):.0f} µs/step); ")
    note += ("model from Unitree's A1 URDF with point feet, friction 0.8 (paper: not stated); "
             "Algorithm 7 read with normal draws, parameters (b, a1, d1, a2, d2) and resets "
             "to the best parameters after a failure (dynamics.gait_learning)")
    out = [claim(B2023, f"§5.4 / Fig. 13: the A1 quadruped learns to walk more than "
                 f"{PAPER_DISTANCE:g} m (1.2 m/s) in {PAPER_EPISODES} episodes of "
                 f"{PAPER_DURATION:g} s rollouts at Δt = 1 ms (sampling-based Algorithm 7)",
                 f"> {PAPER_DISTANCE:g} m", ours, verdict, note)]
    if ok:
        pen = max(float(r["max_penetration"]) for r in ok)
        viol = max(float(r["max_violation"]) for r in ok)
        out.append(claim(B2023, "§5.4: rigid contacts: the walking robot's feet do not "
                         "penetrate the ground", "rigid (no penetration)",
                         f"largest penetration {pen:.1e} m over {len(ok)} rollouts",
                         "reproduced" if pen < 1e-6 else "not reproduced",
                         "4 point feet with linearized friction cones, interior-point "
                         "contact solve, Newton tolerance 1e-8"))
        out.append(claim(B2023, "§5.4: the walking quadruped's joint constraints hold "
                         "(maximal coordinates, 13 bodies, 12 revolute joints)",
                         "constraints satisfied", f"largest joint-constraint violation "
                         f"{viol:.1e} over {len(ok)} rollouts",
                         "reproduced" if viol < 1e-8 else "not reproduced",
                         "successful rollouts; fallen ones stop when the trunk falls"))
    return out
