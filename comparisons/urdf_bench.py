"""Per-robot step times on the URDF corpus: maximal coordinates vs minimal coordinates vs
Pinocchio (issue 24, "timing per step for each corpus robot").

For every URDF of the corpus (default: the repository's ``tests/dynamics/urdf_corpus``) that
:func:`dynamics.urdf.load_urdf` loads (fixed base; the robots of :data:`FLOATING_BASE`, and any
robot whose fixed-base load fails, with a free-flyer root), one step of ``dt`` = 1 ms under
gravity, joint dampers on, from random angles in [-0.3, 0.3] on the one-coordinate joints, is
timed three ways in this process:

* ``maximal_step_us``: :meth:`dynamics.maximal.Simulation.step` in a loop, and
  ``maximal_run_us``: :meth:`~dynamics.maximal.Simulation.run` (default recording) per step,
  both from the same state; ``newton_iterations`` is the mean per step;
* ``minimal_step_us``: :func:`dynamics.minimal.integrators.step` with
  ``"semi_implicit_euler"`` (ABA, joint dampers, ``q ⊕ Δt v'``), ``backend="auto"`` (the
  compiled kernels: ``tree_kernels`` for revolute / prismatic trees, ``multi_dof_kernels``
  with floating, spherical or planar joints; ``minimal_backend`` says which), and
  ``minimal_run_us``: :func:`dynamics.minimal.simulate` per step (the same method and
  backend, its energy recording included: with compiled kernels one compiled loop);
* ``minimal_riqn_us``: :func:`dynamics.minimal.simulate` per step with ``"riqn"``, the
  variational integrator of Lee et al. 2016 in minimal coordinates (implicit, as the maximal
  step; ``backend="auto"``: compiled for every built-in joint type), ``riqn_iterations`` its
  mean iterations per step;
* ``pinocchio_step_us``: the same semi-implicit Euler step written in Python around
  ``pin.aba`` and ``pin.integrate`` with ``τ = -d v``.

An explicit loop that diverges over ``number`` steps (a stiff damper on a small inertia: the
corpus hand at 1 ms) is not timed on its inf / NaN states: NaN, and the reason in ``note``.

Each time is the best of ``repeats`` loops of ``number`` steps, the loops of the three
simulators alternating, garbage collector off, after an untimed warm-up (numba compilation).
The ratios are ``maximal / pinocchio``, ``minimal / pinocchio`` and ``maximal / minimal``
(step loops). The maximal integrator solves an implicit step with Newton iterations (a
graphsolve factorization each), the other two take one explicit ABA step, so the ratio is not
that of equally accurate steps. Joint springs and dampers (``dampers`` column; most URDFs with
``<dynamics damping>``) stay in the maximal step's single compiled call, but each damped joint
couples its two bodies in the Newton matrix (an exact damper Jacobian), which makes the
factorization cyclic: about twice the undamped step. A robot that one side refuses
(massless links between joints in maximal coordinates, a singular articulated inertia in
minimal ones) gets NaN there and the reason in ``note``.
"""
from __future__ import annotations

import re
import warnings
from collections.abc import Collection
from pathlib import Path

import numpy as np

from dynamics.maximal import Simulation
from dynamics.minimal import ConvergenceError, DivergenceError, Model, initial_state
from dynamics.minimal.integrators import simulate as minimal_simulate
from dynamics.minimal.integrators import step as minimal_step
from dynamics.spec import SpecError
from dynamics.urdf import load_urdf

from .dynamics_bench import _best_of

__all__ = ["FLOATING_BASE", "DEFAULT_CORPUS", "corpus_files", "urdf_timings",
           "markdown_table", "run_urdf_benchmark", "plot_urdf"]

#: Robots timed with a free-flyer root (floating-base robots of the corpus).
FLOATING_BASE = ("quadruped", "humanoid_33dof")
#: The repository's URDF corpus (``tests/dynamics/urdf_corpus``, next to this package).
DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "tests" / "dynamics" / "urdf_corpus"


def corpus_files(corpus_dir=None) -> list[Path]:
    """The ``*.urdf`` files of ``corpus_dir`` (default :data:`DEFAULT_CORPUS`), sorted.

    Raises
    ------
    FileNotFoundError
        The directory does not exist (an installed package without the repository's tests:
        pass ``corpus_dir``).
    """
    path = DEFAULT_CORPUS if corpus_dir is None else Path(corpus_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"URDF corpus directory {str(path)!r} not found; pass "
                                "corpus_dir (the repository's tests/dynamics/urdf_corpus)")
    return sorted(path.glob("*.urdf"))


def _load(path: Path, floating: bool):
    """``(spec, floating)``; fixed-base load failures are retried with a free-flyer root."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return load_urdf(path, floating_base=floating), floating
        except SpecError:
            if floating:
                raise
            return load_urdf(path, floating_base=True), True


def _reason(side: str, exc: Exception) -> str:
    """``side: first sentence of the error`` (the CSV's ``note``)."""
    text = re.split(r"\.\s+(?=[A-Z])", str(exc).split("; ")[0])[0]
    return f"{side}: {text}"


def _with_initial(spec, seed: int):
    rng = np.random.default_rng(seed)
    return spec.with_initial({j.name: rng.uniform(-0.3, 0.3, 1)
                              for j in spec.tree_joints if j.dof == 1})


def _maximal_timers(spec, dt, number):
    sim = Simulation(spec, dt=dt)
    state = (sim.x.copy(), sim.q.copy(), sim.v.copy(), sim.w.copy())
    iterations = []

    def steps():
        sim.set_state(*state)
        for _ in range(number):
            iterations.append(sim.step())

    def run():
        sim.set_state(*state)
        sim.run(number, progress=False)

    steps()                                                    # warm both paths untimed
    run()
    iterations.clear()
    return [steps, run], iterations


def _minimal_timers(model, dt, number):
    data = model.create_data()
    q0, v0 = initial_state(model)
    backend = "compiled" if _compiled_supported(model) else "reference"

    def steps():
        q, v = q0, v0
        for _ in range(number):
            q, v = minimal_step(model, data, q, v, dt, "semi_implicit_euler", backend="auto")

    def run():
        minimal_simulate(model, q0, v0, dt, number, "semi_implicit_euler", backend="auto")

    run()                       # compile, untimed (simulate first: it names a diverging step)
    steps()
    return [steps, run], backend


def _riqn_timer(model, dt, number):
    """The RIQN simulation of ``number`` steps, and the iterations of its untimed warm-up."""
    q0, v0 = initial_state(model)

    def run():
        minimal_simulate(model, q0, v0, dt, number, "riqn", backend="auto")

    res = minimal_simulate(model, q0, v0, dt, number, "riqn", backend="auto")
    return run, float(np.mean(res.iterations)) if number else float("nan")


def _compiled_supported(model) -> bool:
    from dynamics.minimal import multi_dof_kernels, tree_kernels
    return tree_kernels.supports(model) or multi_dof_kernels.supports(model)


def _pinocchio_timer(path: Path, floating: bool, spec, model, dt, number):
    """The semi-implicit Euler loop around ``pin.aba`` (``None`` without Pinocchio)."""
    try:
        import pinocchio as pin
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pm = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating
              else pin.buildModelFromUrdf(str(path)))
    pd = pm.createData()
    damping = np.zeros(pm.nv)
    for j in spec.joints:
        if j.damper and pm.existJointName(j.name):
            jm = pm.joints[pm.getJointId(j.name)]
            damping[jm.idx_v:jm.idx_v + jm.nv] = j.damper
    q0 = pin.neutral(pm)
    for name, val in spec.initial_positions.items():       # one-coordinate joints only
        if not pm.existJointName(name):
            continue
        jm = pm.joints[pm.getJointId(name)]
        if jm.nq == 1:
            q0[jm.idx_q] = val[0]
        elif jm.nq == 2 and jm.nv == 1:
            q0[jm.idx_q:jm.idx_q + 2] = np.cos(val[0]), np.sin(val[0])
    v0 = np.zeros(pm.nv)
    if model is not None and pm.nv != model.nv:
        raise AssertionError(f"{spec.name}: Pinocchio nv {pm.nv} != minimal nv {model.nv}")

    def loop():
        q, v = q0, v0
        for _ in range(number):
            v = v + dt * pin.aba(pm, pd, q, v, -damping * v)
            q = pin.integrate(pm, q, dt * v)
        return q, v

    def run():                  # the timed call (_best_of times a function returning None)
        loop()

    q, v = loop()
    if not (np.isfinite(q).all() and np.isfinite(v).all()):
        raise DivergenceError(f"semi_implicit_euler diverged within {number} steps of "
                              f"dt = {dt:g} (a non-finite state)", step=None, time=number * dt)
    return run, pm.nv


def urdf_timings(corpus_dir=None, *, robots: Collection[str] | None = None,
                 floating_base: Collection[str] = FLOATING_BASE, dt: float = 1e-3,
                 number: int = 50, repeats: int = 5, seed: int = 0,
                 progress: bool = False) -> list[dict]:
    """Per-step times (µs) of the corpus robots; see the module docstring.

    Parameters
    ----------
    corpus_dir : path, optional
        Directory of ``*.urdf`` files (default :data:`DEFAULT_CORPUS`).
    robots : collection of str, optional
        File stems to time (default: all).
    floating_base : collection of str
        Stems loaded with a free-flyer root.
    dt : float
    number, repeats : int
        Steps per timed loop; loops per simulator (the best is kept).
    seed : int
        Seed of the random initial angles.
    progress : bool
        Print one line per robot.

    Returns
    -------
    list of dict
        One row per loaded robot: ``robot, base ("fixed" / "floating"), dof, bodies,
        dampers`` (joint springs or dampers: the maximal step's Newton matrix couples each
        damped joint's two bodies), ``maximal_step_us, maximal_run_us,
        minimal_step_us, minimal_run_us, minimal_riqn_us, pinocchio_step_us,
        maximal_over_pinocchio, minimal_over_pinocchio, maximal_over_minimal,
        newton_iterations, riqn_iterations, minimal_backend, note``. Robots that do not load
        are left out.
    """
    rows = []
    for path in corpus_files(corpus_dir):
        if robots is not None and path.stem not in robots:
            continue
        try:
            spec, floating = _load(path, path.stem in floating_base)
        except SpecError:
            continue
        spec = _with_initial(spec, seed)
        fns, names, notes = [], [], []
        iterations: list[int] = []
        try:
            timers, iterations = _maximal_timers(spec, dt, number)
            fns += timers
            names += ["maximal_step", "maximal_run"]
        except SpecError as exc:
            notes.append(_reason("maximal", exc))
        model, backend = None, ""
        try:
            model = Model(spec)
            timers, backend = _minimal_timers(model, dt, number)
            fns += timers
            names += ["minimal_step", "minimal_run"]
        except (SpecError, DivergenceError) as exc:
            notes.append(_reason("minimal", exc))
        riqn_iterations = float("nan")
        if model is not None:
            try:
                riqn, riqn_iterations = _riqn_timer(model, dt, number)
                fns.append(riqn)
                names.append("minimal_riqn")
            except ConvergenceError as exc:
                notes.append(_reason("minimal RIQN", exc))
        try:
            pin_timer = _pinocchio_timer(path, floating, spec, model, dt, number)
        except DivergenceError as exc:
            pin_timer = None
            notes.append(_reason("Pinocchio", exc))
        nv = model.nv if model is not None else None
        if pin_timer is not None:
            fns.append(pin_timer[0])
            names.append("pinocchio_step")
            nv = pin_timer[1] if nv is None else nv
        best = {name: b for name, (b, _) in zip(names, _best_of(fns, repeats), strict=True)}
        us = {k: 1e6 * best[k] / number if k in best else float("nan")
              for k in ("maximal_step", "maximal_run", "minimal_step", "minimal_run",
                        "minimal_riqn", "pinocchio_step")}
        row = {"robot": path.stem, "base": "floating" if floating else "fixed", "dof": nv,
               "bodies": len(spec.bodies),
               "dampers": any(j.damper > 0 or j.spring > 0 for j in spec.joints),
               **{f"{k}_us": v for k, v in us.items()},
               "maximal_over_pinocchio": us["maximal_step"] / us["pinocchio_step"],
               "minimal_over_pinocchio": us["minimal_step"] / us["pinocchio_step"],
               "maximal_over_minimal": us["maximal_step"] / us["minimal_step"],
               "newton_iterations": float(np.mean(iterations)) if iterations else float("nan"),
               "riqn_iterations": riqn_iterations, "minimal_backend": backend,
               "note": "; ".join(notes)}
        rows.append(row)
        if progress:
            print(f"  {row['robot']:<28} dof {row['dof']:>3}: maximal "
                  f"{us['maximal_step']:8.1f} us, minimal {us['minimal_step']:8.1f} us, "
                  f"pinocchio {us['pinocchio_step']:8.1f} us", flush=True)
    return rows


def markdown_table(rows: list[dict]) -> str:
    """A Markdown table of :func:`urdf_timings` rows (times in µs, ratios ×)."""
    def f(x, fmt):
        return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, fmt)

    lines = ["| robot | base | dof | bodies | dampers | maximal step | maximal run "
             "| minimal step | minimal run | minimal RIQN | Pinocchio step | max/pin | min/pin "
             "| max/min | Newton it. | RIQN it. |",
             "|---|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        lines.append(
            f"| {r['robot']} | {r['base']} | {r['dof']} | {r['bodies']} "
            f"| {'yes' if r['dampers'] else 'no'} "
            f"| {f(r['maximal_step_us'], '.1f')} | {f(r['maximal_run_us'], '.1f')} "
            f"| {f(r['minimal_step_us'], '.1f')} ({r['minimal_backend'] or '–'}) "
            f"| {f(r.get('minimal_run_us'), '.1f')} | {f(r.get('minimal_riqn_us'), '.1f')} "
            f"| {f(r['pinocchio_step_us'], '.1f')} | {f(r['maximal_over_pinocchio'], '.1f')} "
            f"| {f(r['minimal_over_pinocchio'], '.2f')} | {f(r['maximal_over_minimal'], '.1f')} "
            f"| {f(r['newton_iterations'], '.2f')} | {f(r.get('riqn_iterations'), '.2f')} |")
    return "\n".join(lines)


def run_urdf_benchmark(out="results/urdf.csv", corpus_dir=None, *, meta: dict | None = None,
                       **kwargs) -> list[dict]:
    """:func:`urdf_timings` (``kwargs`` passed on) written to the CSV ``out`` (and ``.json``
    metadata next to it, with the settings); returns the rows."""
    from .runner import write_results

    rows = urdf_timings(corpus_dir, **kwargs)
    settings = {k: (sorted(v) if isinstance(v, (set, frozenset)) else v)
                for k, v in kwargs.items()}
    write_results(rows, out, {**(meta or {}), "benchmark": "urdf", "settings": settings,
                              "corpus_dir": str(corpus_dir or DEFAULT_CORPUS)}, columns=None)
    return rows


def plot_urdf(rows: list[dict], path) -> None:
    """Bars of the µs per step of every corpus robot: maximal ``step()``, minimal
    semi-implicit Euler (``step`` loop and ``simulate``), Pinocchio (log scale; a robot a
    simulator could not load has no bar)."""
    from .plot import bar_plot

    def value(r, k):
        v = r.get(k)
        return None if v in (None, "") else float(v)

    groups = [f"{r['robot']} ({r['dof']})" for r in rows]
    series = {label: [value(r, k) for r in rows]
              for k, label in (("maximal_step_us", "maximal step"),
                               ("minimal_step_us", "minimal step"),
                               ("minimal_run_us", "minimal run"),
                               ("pinocchio_step_us", "Pinocchio step"))}
    bar_plot(path, groups, series, ylabel="µs per step",
             title="URDF corpus: time per step (robot (DOF))")
