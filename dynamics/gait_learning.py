"""A quadruped learning to walk by sampling gait parameters (Brüdigam et al. 2023 §5.4, Fig. 13,
Appendix E, Algorithms 6 and 7).

* **Gait** (Algorithm 6, :func:`gait_targets`, :func:`gait_controller`): every thigh and calf
  joint tracks a sinusoid of five parameters ``(b, a1, d1, a2, d2)``: thighs
  ``a1 cos(20π b t + φ) + d1``, calves ``a2 cos(20π b t + φ - π/2) + d2`` with ``φ = 0`` for
  the front-right and back-left legs and ``φ = π`` for the front-left and back-right legs
  (diagonal pairs in phase, the pairs half a cycle apart); the hip abduction joints are held
  at 0. PD gains (kp, kd): hip (100, 5), thigh (80, 4), calf (60, 3), no desired rates.
* **Learning** (Algorithm 7, :func:`sampling_search`): from the standing parameters
  :data:`STANDING`, each episode tries parameters near the best ones so far (normal draws
  scaled by an exploration factor 0.1, which shrinks by 0.9 after each failure and is reset
  after a success); after a success the next sample moves 0.01 along the normalized
  successful step plus a 0.002-scaled draw. A sample is kept when the robot walks further
  than the best so far. :func:`learn_to_walk` runs it on :func:`dynamics.models.a1_quadruped`
  with 10 s rollouts at Δt = 1 ms and 100 episodes (the paper's numbers; the paper reports
  more than 12 m walked after 100 episodes).

Readings of the paper made here (and why):

* Parameter order. Algorithm 6 unpacks ``b, a1, a2, d1, d2``, but Algorithm 7 calls
  ``[0.1, 0, 1, 0, -1.5]`` the parameters "for standing", which holds only in the order
  ``(b, a1, d1, a2, d2)`` (thigh offset 1 rad, calf offset -1.5 rad, no amplitudes); the
  authors' Dojo.jl version of this example (``quadruped_sampling``) uses that order too.
* Draws. Algorithm 7 writes ``rand(5)``; a uniform draw on [0, 1) (Julia's ``rand``) could
  only increase every parameter, while the text says "randomly in the vicinity of the
  current parameters": we draw standard normal numbers (as Dojo.jl's version does, with
  ``randn``) from a seeded :func:`numpy.random.default_rng`.
* After a failed episode the next sample is drawn around the best parameters (the text:
  "in case of progress, this set of parameters is selected as the starting point for new
  sample draws"), not around the failed ones.
* Distance: the forward (x) displacement of the trunk's centre of mass over the rollout. A
  rollout that raises (the Newton iteration fails) or in which the robot falls (trunk below
  :data:`FALL_HEIGHT` or tilted more than :data:`FALL_TILT_DEG`; the model has contacts at
  the feet only, so a fallen trunk would sink through the ground) is a failure: no progress.
* ``samples > 1`` (our addition, 1 = the paper's algorithm) tries that many samples per
  episode, all drawn from the same distribution, and keeps the best: the rollouts of an
  episode are independent, so they run as parallel Dask tasks with ``client=``.

Each episode's rollouts go through :func:`dynamics.rollouts.rollouts` (in this process, or on
a Dask cluster with ``client``); the random draws are made here, so a run is reproducible
from its seed and does not depend on where its rollouts ran.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from . import models
from .maximal import Simulation, pd_controller
from .maximal.control import Fallen, PDController
from .rollouts import rollouts

__all__ = ["PARAMETER_NAMES", "STANDING", "GAINS", "FIRST_PAIR", "SECOND_PAIR", "FALL_HEIGHT",
           "FALL_TILT_DEG", "Fallen", "gait_targets", "gait_controller", "walk",
           "sampling_search", "Episode", "LearningResult", "learn_to_walk"]

#: The five gait parameters of Algorithm 6 in the order used here (module docstring):
#: frequency factor ``b`` (the legs cycle at ``10 b`` Hz), thigh amplitude and offset, calf
#: amplitude and offset (rad).
PARAMETER_NAMES = ("b", "a1", "d1", "a2", "d2")
#: Algorithm 7, line 3: the initial parameters, the robot standing.
STANDING = np.array([0.1, 0.0, 1.0, 0.0, -1.5])
#: Algorithm 6: PD gains (kp in N m/rad, kd in N m s/rad) of hip, thigh and calf joints.
GAINS = {"hip": (100.0, 5.0), "thigh": (80.0, 4.0), "calf": (60.0, 3.0)}
#: Algorithm 6: the diagonal leg pairs; the second pair is offset by π.
FIRST_PAIR = ("FR", "RL")
SECOND_PAIR = ("FL", "RR")
#: A rollout fails when the trunk's centre of mass drops below this height (m; it stands at
#: about 0.27 m, and its box is 0.114 m high) ...
FALL_HEIGHT = 0.1
#: ... or the trunk tilts more than this (degrees from upright).
FALL_TILT_DEG = 60.0
#: Algorithm 7's constants: initial exploration factor, its decay after a failure, the scale
#: of the draws after a success, and the step along the successful direction.
EXPLORE, DECAY, STEP, BIAS_STEP = 0.1, 0.9, 0.002, 0.01


def _params(params) -> np.ndarray:
    p = np.array(params, dtype=float).reshape(-1)
    if p.shape != (5,) or not np.all(np.isfinite(p)):
        raise ValueError(f"gait parameters are five finite numbers {PARAMETER_NAMES}, "
                         f"got {params!r}")
    return p


def gait_targets(t: float, params) -> dict[str, float]:
    """Desired joint angles (rad) of Algorithm 6 at time ``t`` (s) for ``params = (b, a1, d1,
    a2, d2)``, by joint name of :func:`dynamics.models.a1_quadruped` (hips 0)."""
    b, a1, d1, a2, d2 = _params(params)
    phase = 20.0 * np.pi * t * b
    out = {}
    for pair, offset in ((FIRST_PAIR, 0.0), (SECOND_PAIR, np.pi)):
        thigh = a1 * np.cos(phase + offset) + d1
        calf = a2 * np.cos(phase + offset - 0.5 * np.pi) + d2
        for leg in pair:
            out[f"{leg}_hip"], out[f"{leg}_thigh"], out[f"{leg}_calf"] = 0.0, thigh, calf
    return out


def _gains(which: int) -> dict[str, float]:
    return {f"{leg}_{joint}": g[which] for leg in models.A1_LEGS for joint, g in GAINS.items()}


def gait_controller(params) -> Callable:
    """Algorithm 6 as a controller for :meth:`dynamics.maximal.Simulation.run`: PD tracking
    of :func:`gait_targets` with :data:`GAINS` (``u = kp (θ_d - θ) - kd θ̇``)."""
    p = _params(params)
    return pd_controller(lambda t: gait_targets(t, p), _gains(0), _gains(1))


class _WalkController(PDController):
    """:func:`gait_controller` that raises :class:`Fallen` before a step at which the trunk has
    fallen (:data:`FALL_HEIGHT`, :data:`FALL_TILT_DEG`; the ``fall`` test of
    :func:`~dynamics.maximal.pd_controller`, which the compiled run loop evaluates too).
    Pickles as its parameters."""

    def __init__(self, params):
        self.params = _params(params)
        super().__init__(self._targets, _gains(0), _gains(1),
                         fall=("trunk", FALL_HEIGHT, FALL_TILT_DEG))

    def _targets(self, t):
        return gait_targets(t, self.params)

    def __getstate__(self):
        return {"params": self.params}

    def __setstate__(self, state):
        self.__init__(state["params"])


def _start(sim: Simulation, params) -> _WalkController:
    """``setup`` of the walking rollouts: the robot standing at the parameters' offsets (hips
    0, thighs ``d1``, calves ``d2``, feet on the ground, at rest: the initial state of
    ``a1_quadruped(thigh=d1, calf=d2)``), walking by Algorithm 6."""
    p = _params(params)
    sim.set_coordinates(dict(models.a1_quadruped(thigh=p[2], calf=p[4]).initial_positions))
    return _WalkController(p)


#: Samples of the trunk path kept per rollout (every this many steps).
PATH_EVERY = 20


def _summary(traj) -> dict:
    """What a walking rollout returns (computed where it ran)."""
    x = traj.x[:, 0]
    return {"distance": float(x[-1, 0] - x[0, 0]), "lateral": float(x[-1, 1] - x[0, 1]),
            "min_height": float(x[:, 2].min()),
            "max_penetration": float(max(0.0, -traj.contact_distance.min())),
            "max_violation": float(traj.constraint_violation.max()),
            "mean_iterations": float(traj.iterations[1:].mean()) if len(x) > 1 else 0.0,
            "max_iterations": int(traj.iterations.max()),
            "t": traj.t[::PATH_EVERY].copy(), "path": x[::PATH_EVERY].copy()}


def walk(params_list: Sequence, duration: float = 10.0, *, simulation: Simulation | None = None,
         dt: float = 0.001, tol: float = 1e-8, friction: float = 0.8, client=None,
         chunk: int | None = None) -> list[dict]:
    """Rollouts of :func:`dynamics.models.a1_quadruped` walking by Algorithm 6 for each
    parameter set, through :func:`dynamics.rollouts.rollouts` (``client``: Dask).

    Each starts at rest standing at the set's offsets and runs ``duration`` s (or until it
    fails). Returns per set a dict: ``status`` (``"ok"``, ``"fallen"`` or ``"failed"``),
    ``reason``, ``distance`` (forward trunk displacement, m; NaN unless ok), ``lateral``,
    ``min_height``, ``max_penetration``, ``max_violation``, ``mean_iterations``,
    ``max_iterations``, ``t`` and ``path`` (trunk centre of mass every :data:`PATH_EVERY`
    steps). ``simulation``: the template (default ``Simulation(a1_quadruped(friction=...),
    dt, tol)``).
    """
    if simulation is None:
        simulation = Simulation(models.a1_quadruped(friction=friction), dt, tol=tol)
    steps = round(duration / simulation.dt)
    cases = [tuple(_params(p)) for p in params_list]
    results = rollouts(simulation, steps, cases, setup=_start, output=_summary,
                       record=("contact_distance", "constraint_violation"), client=client,
                       chunk=chunk, errors="return")
    out = []
    for r in results:
        if isinstance(r, Exception):
            fell = isinstance(r, Fallen)
            out.append({"status": "fallen" if fell else "failed",
                        "reason": f"{type(r).__name__}: {r}"[:300], "distance": np.nan,
                        "failed_at": r.time if fell else np.nan})
        else:
            out.append({"status": "ok", "reason": "", "failed_at": np.nan, **r})
    return out


@dataclass(frozen=True)
class Episode:
    """One episode of :func:`sampling_search`: the ``samples`` tried (rows of ``params``),
    their ``distances`` (NaN: failed) and evaluation ``info``, whether the best of them was
    ``accepted``, the best distance after the episode, and how the samples were drawn
    (``explore`` factor, ``biased``: along the last successful direction)."""

    index: int
    params: np.ndarray
    distances: np.ndarray
    accepted: bool
    best_distance: float
    best_params: np.ndarray
    explore: float
    biased: bool
    info: tuple = ()


@dataclass
class LearningResult:
    """The outcome of :func:`sampling_search` / :func:`learn_to_walk`: the best ``params`` and
    their ``distance`` (0 and the initial parameters if no episode made progress), every
    :class:`Episode`, and ``seconds`` of wall time spent evaluating."""

    params: np.ndarray
    distance: float
    episodes: list[Episode] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def best_so_far(self) -> np.ndarray:
        """The best distance after each episode (Fig. 13b's learning curve)."""
        return np.array([e.best_distance for e in self.episodes])


def _distance(value) -> float:
    d = value.get("distance", np.nan) if isinstance(value, dict) else value
    d = np.nan if d is None else float(d)
    return d


def sampling_search(evaluate: Callable[[list[np.ndarray]], list], initial=STANDING,
                    episodes: int = 100, *, seed: int | np.random.Generator = 0,
                    samples: int = 1, explore: float = EXPLORE, decay: float = DECAY,
                    step: float = STEP, bias_step: float = BIAS_STEP,
                    callback: Callable[[Episode], None] | None = None) -> LearningResult:
    """Algorithm 7 of Brüdigam et al. 2023 (Appendix E) for any objective.

    ``evaluate(list of parameter arrays)`` returns one result per array: a distance (float;
    NaN or ``None`` for a failure) or a dict with a ``"distance"`` entry (kept in
    :attr:`Episode.info`). Per episode, without a successful direction ``bias`` the samples
    are ``best + explore · N(0, I)``; with it, ``best + step · N(0, I) + bias_step · bias``.
    The best sample is accepted if its distance exceeds the best so far (initially 0); then
    ``bias = normalize(sample - best)``, ``explore`` is reset, else ``bias = 0`` and
    ``explore *= decay``. ``samples = 1`` is the paper's algorithm (module docstring).
    ``seed``: an integer or a :class:`numpy.random.Generator`; the same seed and objective
    give the same run.
    """
    if not isinstance(episodes, (int, np.integer)) or episodes < 0:
        raise ValueError(f"episodes must be a non-negative integer, got {episodes!r}")
    if not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    best = np.array(initial, dtype=float).reshape(-1)
    n = best.size
    best_distance, factor, bias = 0.0, float(explore), np.zeros(n)
    result = LearningResult(best.copy(), best_distance)
    for k in range(int(episodes)):
        biased = bool(np.any(bias))
        draws = rng.standard_normal((samples, n))
        if biased:
            tried = best + step * draws + bias_step * bias
        else:
            tried = best + factor * draws
        t0 = time.perf_counter()
        values = list(evaluate([p.copy() for p in tried]))
        result.seconds += time.perf_counter() - t0
        if len(values) != samples:
            raise ValueError(f"evaluate returned {len(values)} results for {samples} samples")
        dist = np.array([_distance(v) for v in values])
        i = int(np.nanargmax(dist)) if np.any(np.isfinite(dist)) else -1
        accepted = i >= 0 and dist[i] > best_distance
        used = factor
        if accepted:
            d = tried[i] - best
            norm = np.linalg.norm(d)
            bias = d / norm if norm > 0 else np.zeros(n)
            best, best_distance, factor = tried[i].copy(), float(dist[i]), float(explore)
        else:
            bias = np.zeros(n)
            factor *= decay
        ep = Episode(k + 1, tried, dist, bool(accepted), best_distance, best.copy(), used,
                     biased, tuple(values))
        result.episodes.append(ep)
        if callback is not None:
            callback(ep)
    result.params, result.distance = best, best_distance
    return result


def learn_to_walk(episodes: int = 100, duration: float = 10.0, dt: float = 0.001, *,
                  seed: int = 0, samples: int = 1, initial=STANDING, tol: float = 1e-8,
                  friction: float = 0.8, client=None, chunk: int | None = None,
                  callback: Callable[[Episode], None] | None = None) -> LearningResult:
    """The quadruped of Brüdigam et al. 2023 Fig. 13 learning to walk: :func:`sampling_search`
    over :func:`walk` rollouts of :func:`dynamics.models.a1_quadruped` (defaults: the paper's
    100 episodes of 10 s at Δt = 1 ms; Newton tolerance ``tol``). Each episode's rollouts run
    through :func:`dynamics.rollouts.rollouts`, as Dask tasks with ``client``. Every
    :attr:`Episode.info` holds the :func:`walk` summary of each sample."""
    template = Simulation(models.a1_quadruped(friction=friction), dt, tol=tol)

    def evaluate(params_list):
        return walk(params_list, duration, simulation=template, client=client, chunk=chunk)

    return sampling_search(evaluate, initial, episodes, seed=seed, samples=samples,
                           callback=callback)
