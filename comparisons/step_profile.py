"""Where a step of the maximal-coordinate integrator spends its time, before and after the
compiled step (issue 26, item 5): ``python -m comparisons step-profile [--quick] [--out CSV]``.

Every case is timed on two paths of :meth:`dynamics.maximal.Simulation.run` (what users call,
its default recording included), Δt = 0.01 s, from the model's initial state after untimed
warm-up steps:

``reference`` (before)
    The readable Python-driven step: ``StepSystem(kernels="reference")`` (NumPy residual and
    Jacobian, :meth:`~dynamics.maximal.StepSystem.begin` in NumPy), the Python Newton loop
    ``Simulation._newton`` / interior point ``Simulation._interior_point``, graphsolve through
    its Python API (``Factorization.refactor`` / ``solve``, compiled kernels).
``compiled`` (after)
    The default step: one compiled call per step (``StepSystem.step_compiled``, or
    ``StepSystem.contact_step`` with contacts).

All times are CPU times (:func:`time.process_time`), which a loaded machine disturbs much less
than wall time; the total is the best of ``repeats`` runs of ``steps`` steps, with the garbage
collector off, per step.

**Reference groups** (a :mod:`cProfile` run of ``Simulation.run`` with a CPU-time timer): the
cumulative time of these functions (matched by module file and function name), as fractions of
the profiled run, times the unprofiled total (the profiler inflates Python-heavy code, so its
fractions are applied to the clean total; ``profile_overhead`` is the profiled over the
unprofiled time, minus 1):

- ``setup``: ``StepSystem.begin`` (the step's constants: constraint Jacobians at ``z₁``,
  contact velocity maps, applied forces);
- ``residual``: ``StepSystem.residual`` (every evaluation, the line search's trials included);
- ``assembly``: ``StepSystem.jacobian`` (the Newton matrix into the BlockMatrix);
- ``factor``: graphsolve's ``Factorization.refactor`` (``graphsolve/factor.py``); with
  contacts ``condensation.condensed_refactor_solve`` (the condensed matrix,
  :mod:`dynamics.maximal.condensation`, as the compiled step factors it);
- ``solve``: ``StepSystem.resolve`` (graphsolve's ``Factorization.solve``; with contacts
  ``condensation.condensed_solve`` and the iterative refinement's residuals
  ``condensation.full_residual``);
- ``line_search``: ``simulation._backtrack`` without the residuals it calls, and the
  interior point's step control (``contact_kernels.step_to_boundary``, ``mean_product``,
  ``corrector_rhs``);
- ``rest``: the total minus the groups: the Python of ``run`` and ``step`` (recording, state
  copies, rate checks, update rules, the Newton loop's own lines).

The counts per step (``residuals_per_step``, ``factors_per_step``, ``solves_per_step``,
``refinements_per_step``) are the profile's call counts over the steps.

**Compiled groups** (estimates): the compiled step cannot be profiled from Python, so its
pieces are timed in isolation, on the state of a real step (after the timed run: the update
rules, :meth:`~dynamics.maximal.StepSystem.begin` with the compiled kernels, the start
``(v, ω, λ)`` with the contact variables of the last step floored by ``warm_floor``), each as a
loop *inside* numba that calls the kernel ``k`` times (no Python call overhead; ``k`` grows
until a loop takes ``min_time``; best of 3). The kernels and their arguments are those the
public :class:`~dynamics.maximal.StepSystem` methods pass (captured from
``StepSystem.begin``, ``residual`` and ``jacobian``, which call them by module and name):

- ``setup``: ``newton_kernels.constraint_jacobian_kernel`` and, per contact group,
  ``contact_kernels.velocity_maps``, once per step;
- ``residual``: ``newton_kernels.residual_kernel`` (+ per group the kernel of
  ``contact_kernels.contact_residual``, ``_contact_residual_into`` with its scratch made once,
  as in the step);
- ``assembly``: ``newton_kernels.jacobian_kernel`` (+ ``contact_kernels.contact_jacobian``'s
  ``_contact_jacobian_into``, likewise);
- ``factor``: ``graphsolve.lowlevel.refactor_solve(handle, values, x)`` minus
  ``solve_factored``, on a factorization of the step's own kind (implicit-L for acyclic
  Newton matrices without contacts); with contacts ``condensation.condensed_refactor_solve``
  minus ``condensed_solve`` on ``StepSystem.condensed_solver()`` (the condensed matrix,
  :mod:`dynamics.maximal.condensation`, the step's own factor);
- ``solve``: ``graphsolve.lowlevel.solve_factored(handle, x)``, or with contacts
  ``condensation.condensed_solve`` (+ the refinement residual ``condensation.full_residual``).

The step's own Newton loop computes the joints' constraint derivatives in its Jacobian, as the
public kernels timed here do; unlike them, it writes the constant ``-Gᵀ`` blocks once per
Newton solve, not in every Jacobian, so the assembly is slightly over-estimated. Calls per
step, as ratios per iteration of the reference path, which applies the same rules: Jacobians
and factorizations ``iterations × f``, ``f`` its factorizations per iteration (1 for the
interior point; below 1 for Newton, whose chord steps, ``Simulation.reuse_factorization``,
reuse the last factorization); residuals ``1 + iterations × t``, with ``t`` the
reference path's line-search and chord trials per iteration (its residual calls minus one per
step, over its iterations); ``iterations × r`` solves and, for the interior point,
``iterations × e`` refinement residuals, ``r`` and ``e`` the reference path's
graphsolve solves and refinement residuals per iteration (the compiled interior point does
the same predictor solve, corrector solve, up to three refinement solves, and centring
retry, :mod:`dynamics.maximal.interior_point_kernels`). Share = unit cost × calls per step;
``rest`` = total − the shares: the line search's and interior point's own arithmetic, the
update rules and what ``run`` adds per step. That rest is split by a timing of the
whole-step kernel called in a loop inside numba (``kernel_us``,
:func:`kernel_step_seconds`): ``kernel_rest_us = kernel_us -`` the shares (the compiled
step's own line search, interior-point arithmetic, update rules and setup beyond the
constraint Jacobians) and ``python_run_us = us_per_step - kernel_us`` (what ``run`` adds to
the step kernel: its compiled step loop's recording and chunk calls, and the Python around
them). A third timing, ``step_call_us``, calls the compiled step directly from Python in a
loop (:func:`direct_step_seconds`): ``call_overhead_us = step_call_us - kernel_us`` is what
one Python-driven :meth:`~dynamics.maximal.Simulation.step` pays on top of its kernel (the
StepSystem method and the call into numba: unboxing some thirty arguments), i.e. what ``run``
with a controller pays per step and ``run`` without one does not (its loop is compiled); it
is not part of ``rest``. These are measured differences, so noise can make a small one
negative.
"""
from __future__ import annotations

import cProfile
import gc
import pstats
import time
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np
from numba import njit

from dynamics import models
from dynamics.maximal import Simulation, StepSystem
from dynamics.maximal import contact_kernels as ck
from dynamics.maximal import newton_kernels as nk
from dynamics.maximal import step_system as stepmod
from dynamics.maximal.condensation import condensed_refactor_solve, condensed_solve, full_residual
from dynamics.maximal.interior_point_kernels import warm_floor
from dynamics.maximal.step_system import quaternion_update
from graphsolve.lowlevel import PIVOT_RTOL, STATUS_OK, allocate, refactor_solve, solve_factored

__all__ = ["CASES", "QUICK_CASES", "GROUPS", "COLUMNS", "reference_simulation",
           "profile_reference", "compiled_unit_costs", "profile_case", "run_step_profile",
           "direct_step_seconds", "kernel_step_seconds", "markdown_table"]

#: The cases of the issue's table: name -> spec factory.
CASES: dict[str, Callable] = {
    "revolute chain n=100": lambda: models.pendulum(100, "revolute"),
    "spherical chain n=100": lambda: models.pendulum(100, "spherical"),
    "pendulum n=1": lambda: models.pendulum(1),
    "sphere chain n=1": lambda: models.sphere_chain(1),
    "sphere chain n=10": lambda: models.sphere_chain(10),
}
#: ``--quick``: a two-link pendulum and one sphere with contact.
QUICK_CASES: dict[str, Callable] = {
    "pendulum n=2": lambda: models.pendulum(2),
    "sphere chain n=1": lambda: models.sphere_chain(1),
}
#: The groups of a step's time, in table order (module docstring).
GROUPS = ("setup", "residual", "assembly", "factor", "solve", "line_search", "rest")
#: CSV columns.
COLUMNS = ("case", "path", "method", "bodies", "unknowns", "steps", "dt", "us_per_step",
           "iterations", *(f"{g}_us" for g in GROUPS), "residuals_per_step",
           "factors_per_step", "solves_per_step", "refinements_per_step", "profile_overhead",
           "unit_setup_us", "unit_residual_us", "unit_jacobian_us", "unit_factor_us",
           "unit_solve_us", "unit_refinement_us", "step_call_us", "kernel_us",
           "kernel_rest_us", "call_overhead_us", "python_run_us")


# ---------------------------------------------------------------------- the two paths
def reference_simulation(spec, dt: float = 0.01) -> Simulation:
    """A :class:`~dynamics.maximal.Simulation` on the readable Python-driven path: its system
    replaced by ``StepSystem(model, dt, kernels="reference")``, and the step's two switches
    (set at construction from the system's ``fused`` and ``compiled_contacts``; Simulation has
    no public switch) re-derived from the new system, both ``False``."""
    sim = Simulation(spec, dt=dt)
    sim.system = StepSystem(sim.model, sim.dt, kernels="reference")
    sim._compiled_step = bool(sim.system.fused)
    sim._compiled_contacts = bool(sim.system.compiled_contacts)
    return sim


@contextmanager
def _gc_off():
    """The garbage collector off while timing (restored afterwards)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _warmed(make, warm: int, repeats: int):
    """``repeats`` fresh simulations ``make()``, each after ``warm`` untimed steps of ``run``."""
    for _ in range(repeats):
        sim = make()
        sim.run(warm, progress=False)
        yield sim


def _timed_run(make, steps: int, warm: int, repeats: int):
    """Best CPU seconds per step of ``make().run(steps)`` after ``warm`` untimed steps (a fresh
    simulation per repeat, the GC off), the last trajectory and simulation."""
    best, traj, sim = np.inf, None, None
    with _gc_off():
        for sim in _warmed(make, warm, repeats):
            start = time.process_time()
            traj = sim.run(steps, progress=False)
            best = min(best, time.process_time() - start)
    return best / steps, traj, sim


# ---------------------------------------------------------------------- reference profile
def _match(stats, file_suffix: str, name: str) -> list:
    return [k for k in stats if k[2] == name and k[0].replace("\\", "/").endswith(file_suffix)]


def _cum(stats, file_suffix, name) -> float:
    return sum(stats[k][3] for k in _match(stats, file_suffix, name))


def _calls(stats, file_suffix, name) -> int:
    return sum(stats[k][1] for k in _match(stats, file_suffix, name))


def profile_reference(sim: Simulation, steps: int) -> dict:
    """cProfile (CPU-time timer) of ``sim.run(steps)``: per group its fraction of the profiled
    run, the profiled seconds, the call counts and the Newton / interior-point iterations.

    Raises
    ------
    RuntimeError
        If the NumPy reference residual was never called (the run took another path).
    """
    prof = cProfile.Profile(time.process_time)
    with _gc_off():
        prof.enable()
        traj = sim.run(steps, progress=False)
        prof.disable()
    st = pstats.Stats(prof).stats
    SS, SIM = "dynamics/maximal/step_system.py", "dynamics/maximal/simulation.py"
    CK = "dynamics/maximal/contact_kernels.py"
    COND = "dynamics/maximal/condensation.py"
    if not _calls(st, SS, "residual_reference"):
        raise RuntimeError("the profiled run never called StepSystem.residual_reference: "
                           "Simulation.run did not take the reference path")
    total = _cum(st, SIM, "run")
    backtrack_residual = sum(
        caller_stats[3] for k in _match(st, SS, "residual")
        for caller, caller_stats in st[k][4].items()
        if caller[2] == "_backtrack" and caller[0].replace("\\", "/").endswith(SIM))
    seconds = {
        "setup": _cum(st, SS, "begin"),
        "residual": _cum(st, SS, "residual"),
        "assembly": _cum(st, SS, "jacobian"),
        "factor": (_cum(st, "graphsolve/factor.py", "refactor")
                   + _cum(st, COND, "condensed_refactor_solve")),
        "solve": _cum(st, SS, "resolve"),
        "line_search": (_cum(st, SIM, "_backtrack") - backtrack_residual
                        + sum(_cum(st, CK, n) for n in ("step_to_boundary", "mean_product",
                                                         "corrector_rhs"))),
    }
    seconds["rest"] = total - sum(seconds.values())
    its = traj.iterations[1:]
    return {"fractions": {g: t / total for g, t in seconds.items()}, "profiled_s": total,
            "iterations": float(its.mean()), "total_iterations": int(its.sum()),
            "residuals": _calls(st, SS, "residual"),
            "factors": (_calls(st, "graphsolve/factor.py", "refactor")
                        + _calls(st, COND, "condensed_refactor_solve")),
            "solves": (_calls(st, "graphsolve/factor.py", "solve")
                       + _calls(st, COND, "condensed_solve")),
            "refinements": (_calls(st, CK, "refinement_residual")
                            + _calls(st, COND, "full_residual"))}


# ---------------------------------------------------------------------- compiled unit costs
@njit
def _repeat(fn, k, args):
    """``fn(*args)`` ``k`` times in compiled code."""
    for _ in range(k):
        fn(*args)


@njit
def _repeat_refactor_solve(k, handle, values, rhs, x):
    for _ in range(k):
        x[:] = rhs
        refactor_solve(handle, values, x)


@njit
def _repeat_solve(k, handle, rhs, x):
    for _ in range(k):
        x[:] = rhs
        solve_factored(handle, x)


def _unit_seconds(loop, min_time: float) -> float:
    """CPU seconds per call of ``loop(k)`` (a compiled loop of ``k`` calls): ``k`` doubled from
    1 until a loop takes ``min_time``, then the best of 3 loops of that ``k``."""
    loop(1)                                                  # compile, warm caches
    k = 1
    while True:
        start = time.process_time()
        loop(k)
        t = time.process_time() - start
        if t >= min_time or k >= 1 << 24:
            break
        k *= 2
    best = t
    for _ in range(2):
        start = time.process_time()
        loop(k)
        best = min(best, time.process_time() - start)
    return best / k


@contextmanager
def _capture(module, name: str, calls: list):
    """Record the arguments of every call of ``module.name`` (then call it) while active."""
    original = getattr(module, name)

    def recorder(*args):
        calls.append(args)
        return original(*args)

    setattr(module, name, recorder)
    try:
        yield
    finally:
        setattr(module, name, original)


def _captured(calls: list, what: str) -> list:
    if not calls:
        raise RuntimeError(f"StepSystem never called {what}: the compiled kernels changed; "
                           "update comparisons.step_profile")
    return calls


def compiled_unit_costs(sim: Simulation, min_time: float = 0.02) -> dict:
    """CPU microseconds per call of the compiled step's pieces on the state of ``sim`` (its
    next step; module docstring): ``setup``, ``residual``, ``jacobian``, ``factor``, ``solve``
    and ``refinement`` (0 without contacts). Uses a copy of the simulation's
    :class:`~dynamics.maximal.StepSystem` arrays only through its public methods; the
    simulation itself is not stepped."""
    S = StepSystem(sim.model, sim.dt)                # same model: the same analysis and layout
    dt = sim.dt
    v, w = sim.v.copy(), sim.w.copy()
    x1 = sim.x + dt * v
    q1 = quaternion_update(sim.q, w, dt)
    setup_calls, vmap_calls = [], []
    with _capture(stepmod, "constraint_jacobian_kernel", setup_calls), \
            _capture(ck, "velocity_maps", vmap_calls):
        S.begin(x1, q1, v, w)
    lam = getattr(sim, "_lam", np.zeros((len(sim.model.joints), 6)))
    s = S.pack(v, w, lam)
    last = getattr(sim, "_contact_iterations", -1) if getattr(sim, "quiet_floor", True) else -1
    for grp, u in zip(S.contacts, sim.contact_variables, strict=True):
        floor = np.array([warm_floor(slack, last) for slack in u[:, 1]])
        s[grp.rows] = np.maximum(u, floor[:, None])
    res_calls, cres_calls, jac_calls, cjac_calls = [], [], [], []
    with _capture(stepmod, "residual_kernel", res_calls), \
            _capture(ck, "contact_residual", cres_calls):
        S.barrier = 0.0
        rhs = -S.residual(s)
    with _capture(stepmod, "jacobian_kernel", jac_calls), \
            _capture(ck, "contact_jacobian", cjac_calls):
        S.jacobian(s)

    def cost(pairs) -> float:
        return 1e6 * sum(_unit_seconds(lambda k, fn=fn, a=a: _repeat(fn, k, a), min_time)
                         for fn, a in pairs)

    setup = cost([(nk.constraint_jacobian_kernel, _captured(setup_calls,
                                                            "constraint_jacobian_kernel")[0])]
                 + [(ck.velocity_maps, a) for a in vmap_calls])
    residual = cost([(nk.residual_kernel, _captured(res_calls, "residual_kernel")[0])]
                    # the step's own loop: the scratch made once, not per call (a[5]: m)
                    + [(ck._contact_residual_into, (*a, ck.contact_work(a[5])))
                       for a in cres_calls])
    jacobian = cost([(nk.jacobian_kernel, _captured(jac_calls, "jacobian_kernel")[0])]
                    + [(ck._contact_jacobian_into, (*a, True, ck.contact_work(a[4])))
                       for a in cjac_calls])
    data = S.matrix.data
    x = rhs.copy()
    refinement = 0.0
    if S.contacts:
        # the interior point's condensed matrix (dynamics.maximal.condensation)
        cond = S.condensation()
        F, solver = S.condensed_solver()      # the step's own kind (implicit-L on trees)
        status = condensed_refactor_solve(solver, data, rhs, x)
        F.mark_valid(status)
        if status != STATUS_OK:
            raise RuntimeError(f"condensed_refactor_solve returned {status} on the step's "
                               "Newton matrix")
        both = cost([(condensed_refactor_solve, (solver, data, rhs, x))])
        solve = cost([(condensed_solve, (solver, data, rhs, x))])
        out = np.empty_like(rhs)
        refinement = cost([(full_residual, (cond.arrays, cond.plain_blocks, data, x, rhs,
                                            out))])
    else:
        F = allocate(S.analysis, "ldu", "compiled", pivot_rtol=PIVOT_RTOL)
        handle = F.fused_handle(S.matrix, implicit=S.analysis.n_updates == 0)
        status = refactor_solve(handle, data, x)
        F.mark_valid(status)
        if status != STATUS_OK:
            raise RuntimeError(f"refactor_solve returned {status} on the step's Newton matrix")
        both = 1e6 * _unit_seconds(lambda k: _repeat_refactor_solve(k, handle, data, rhs, x),
                                   min_time)
        solve = 1e6 * _unit_seconds(lambda k: _repeat_solve(k, handle, rhs, x), min_time)
    return {"setup": setup, "residual": residual, "jacobian": jacobian,
            "factor": max(both - solve, 0.0), "solve": solve, "refinement": refinement}


def direct_step_seconds(make, steps: int, warm: int = 5, repeats: int = 3) -> float:
    """Best CPU seconds per step of calling the compiled step itself from Python
    (``sim.system.step_compiled``, or ``contact_step`` with contacts) ``steps`` times, from the
    state of ``make()`` after ``warm`` steps of ``run`` (a fresh simulation per repeat, the
    start of :func:`profile_case`'s timed runs), with the simulation's settings. This minus
    the kernel's own time (:func:`kernel_step_seconds`) is what a Python-driven step pays on
    top of its kernel (the StepSystem method, the call into numba)."""
    best = np.inf
    with _gc_off():
        for sim in _warmed(make, warm, repeats):
            S = sim.system
            lam = getattr(sim, "_lam", np.zeros((len(sim.model.joints), 6)))
            x, q, v, w, lam = (np.array(a) for a in (sim.x, sim.q, sim.v, sim.w, lam))
            prev = (v.copy(), w.copy(), lam.copy())
            if S.contacts:
                S.set_contact_variables(sim.contact_variables,
                                        getattr(sim, "_contact_iterations", -1))
            start = time.process_time()
            for _ in range(steps):
                if S.contacts:
                    code = S.contact_step(x, q, v, w, lam, sim.tol, sim.max_iter,
                                          warm_start=sim.warm_start, refine=sim.refine,
                                          refine_atol=sim.refine_atol, previous=prev,
                                          extrapolate=False,
                                          quiet_floor=sim.quiet_floor)[0]
                else:
                    code = S.step_compiled(x, q, v, w, lam, sim.tol, sim.max_iter,
                                           previous=prev)[0]
                if code != nk.NewtonStatus.CONVERGED:
                    raise RuntimeError(f"the compiled step returned status {code}")
            best = min(best, time.process_time() - start)
    return best / steps


@njit
def _steps(fn, k, args):
    """``k`` whole steps ``fn(*args)`` in compiled code (the state arrays in ``args`` advance
    in place); the number of steps that did not converge."""
    bad = 0
    for _ in range(k):
        if fn(*args)[0] != 0:
            bad += 1
    return bad


#: The whole-step kernels StepSystem calls (by their names in ``step_system``).
_STEP_KERNELS = ("step_kernel", "forced_step_kernel", "step_kernel_plain_first")


def kernel_step_seconds(make, steps: int, warm: int = 5, repeats: int = 3) -> float:
    """Best CPU seconds per step of ``steps`` whole compiled steps called from a loop *inside*
    numba (no Python per step), from the state of ``make()`` after ``warm`` steps of ``run``
    and one :meth:`~dynamics.maximal.Simulation.step` whose kernel call (``step_kernel``,
    ``forced_step_kernel`` or ``step_kernel_plain_first`` with contacts, as ``StepSystem``
    picks it) is captured
    and then repeated with the same arguments. :func:`direct_step_seconds` minus this is the
    call into numba (the StepSystem method's Python, unboxing its arguments).

    Raises
    ------
    RuntimeError
        If no whole-step kernel was called or a step did not converge.
    """
    best = np.inf
    with _gc_off():
        for sim in _warmed(make, warm, repeats):
            calls = {name: [] for name in _STEP_KERNELS}
            with _capture(stepmod, _STEP_KERNELS[0], calls[_STEP_KERNELS[0]]), \
                    _capture(stepmod, _STEP_KERNELS[1], calls[_STEP_KERNELS[1]]), \
                    _capture(stepmod, _STEP_KERNELS[2], calls[_STEP_KERNELS[2]]):
                sim.step()
            name = next((n for n in _STEP_KERNELS if calls[n]), None)
            if name is None:
                raise RuntimeError("Simulation.step called none of the whole-step kernels "
                                   f"{_STEP_KERNELS}; update comparisons.step_profile")
            fn, args = getattr(stepmod, name), calls[name][0]
            bad = _steps(fn, 1, args)                        # compile (a real step)
            start = time.process_time()
            bad += _steps(fn, steps, args)
            best = min(best, time.process_time() - start)
            if bad:
                raise RuntimeError(f"{bad} compiled steps did not converge")
    return best / steps


# ---------------------------------------------------------------------- one case
def profile_case(name: str, spec, dt: float = 0.01, steps: int = 1000, repeats: int = 3,
                 warm: int = 5, min_time: float = 0.02) -> list[dict]:
    """The two rows (``reference``, ``compiled``) of one case (module docstring)."""
    base = {"case": name, "steps": steps, "dt": dt}
    # before: the reference path, timed, then profiled from the same start
    ref_us = 1e6 * _timed_run(lambda: reference_simulation(spec, dt), steps, warm, repeats)[0]
    sim = reference_simulation(spec, dt)
    sim.run(warm, progress=False)
    prof = profile_reference(sim, steps)
    ref = {**base, "path": "reference", "method": "cProfile fractions x CPU total",
           "bodies": sim.model.n_bodies, "unknowns": sim.system.N, "us_per_step": ref_us,
           "iterations": prof["iterations"],
           **{f"{g}_us": f * ref_us for g, f in prof["fractions"].items()},
           "residuals_per_step": prof["residuals"] / steps,
           "factors_per_step": prof["factors"] / steps,
           "solves_per_step": prof["solves"] / steps,
           "refinements_per_step": prof["refinements"] / steps,
           "profile_overhead": prof["profiled_s"] / (ref_us * 1e-6 * steps) - 1.0}
    # after: the compiled step, timed, then its pieces on the state it reached
    def make():
        return Simulation(spec, dt=dt)

    comp_s, traj, sim = _timed_run(make, steps, warm, repeats)
    comp_us = 1e6 * comp_s
    unit = compiled_unit_costs(sim, min_time)
    call_us = 1e6 * direct_step_seconds(make, steps, warm, repeats)
    kernel_us = 1e6 * kernel_step_seconds(make, steps, warm, repeats)
    its = float(traj.iterations[1:].mean())
    ref_its = max(prof["total_iterations"], 1)
    trials = (prof["residuals"] - steps) / ref_its          # line-search residuals / iteration
    # per iteration as in the reference, which applies the same rules: a chord step of the
    # simplified Newton (Simulation.reuse_factorization) is an iteration with a residual and
    # a solve but no assembly and no factorization; only contact steps refine (else 0 calls)
    residuals = 1.0 + its * trials
    factors = its * prof["factors"] / ref_its
    solves = its * prof["solves"] / ref_its
    refinements = its * prof["refinements"] / ref_its
    shares = {"setup": unit["setup"], "residual": unit["residual"] * residuals,
              "assembly": unit["jacobian"] * factors, "factor": unit["factor"] * factors,
              "solve": unit["solve"] * solves + unit["refinement"] * refinements}
    comp = {**base, "path": "compiled", "method": "unit costs x estimated calls",
            "bodies": sim.model.n_bodies, "unknowns": sim.system.N, "us_per_step": comp_us,
            "iterations": its, **{f"{g}_us": t for g, t in shares.items()},
            "line_search_us": None, "rest_us": comp_us - sum(shares.values()),
            "step_call_us": call_us, "kernel_us": kernel_us,
            "kernel_rest_us": kernel_us - sum(shares.values()),
            "call_overhead_us": call_us - kernel_us, "python_run_us": comp_us - kernel_us,
            "residuals_per_step": residuals, "factors_per_step": factors,
            "solves_per_step": solves, "refinements_per_step": refinements,
            **{f"unit_{k}_us": v for k, v in unit.items()}}
    return [ref, comp]


def run_step_profile(cases: dict | None = None, dt: float = 0.01, steps: int = 1000,
                     repeats: int = 3, warm: int = 5, min_time: float = 0.02,
                     progress: bool = True) -> list[dict]:
    """:func:`profile_case` for every case (default :data:`CASES`); a failing case is recorded
    with ``path = "failed"`` and the error in ``method``."""
    rows = []
    for name, make in (cases or CASES).items():
        if progress:
            print(f"  {name} ...", flush=True)
        try:
            rows += profile_case(name, make(), dt, steps, repeats, warm, min_time)
        except Exception as exc:                             # recorded, not fatal
            rows.append({"case": name, "path": "failed",
                         "method": f"{type(exc).__name__}: {exc}"[:200]})
    return rows


#: The compiled rest's parts (columns ``<part>_us``), in table order.
_REST = ("kernel_rest", "python_run", "call_overhead")


def _cell(row: dict, group: str) -> str:
    t = row.get(f"{group}_us")
    if t is None or t == "" or (isinstance(t, float) and np.isnan(t)):
        return "–"
    return f"{t:.0f} ({100 * t / row['us_per_step']:.0f} %)" if t >= 10 else \
        f"{t:.1f} ({100 * t / row['us_per_step']:.0f} %)"


def markdown_table(rows: list[dict]) -> str:
    """Per case and path: CPU µs per step (the compiled one's speed-up over the reference row
    above it), iterations per step and every group's µs per step
    (its share of the step in parentheses), the compiled rest split into the kernel's own and
    what ``run`` adds, and the extra of a Python-driven ``step()`` call (not part of ``run``
    without a controller; the reference path's rest is all Python); failed cases as a note."""
    names = {"setup": "setup", "residual": "residual", "assembly": "assembly",
             "factor": "factor", "solve": "solve", "line_search": "line search",
             "rest": "rest"}
    head = ("| case | path | µs/step | iterations | " + " | ".join(names[g] for g in GROUPS)
            + " | rest: in the kernel | rest: `run` beyond the kernel"
            + " | a `step()` call's extra (not in `run`) |")
    lines = [head, "|" + "---|" * (7 + len(GROUPS))]
    before = {}
    for r in rows:
        if r.get("path") == "failed":
            lines.append(f"| {r['case']} | failed: {r['method']} |" + " |" * (5 + len(GROUPS)))
            continue
        us = r["us_per_step"]
        total = f"{us:.0f}" if us >= 10 else f"{us:.1f}"
        if r["path"] == "reference":
            before[r["case"]] = us
        elif r["case"] in before:
            total += f" ({before[r['case']] / us:.0f}× faster)"
        lines.append(f"| {r['case']} | {r['path']} | {total} | {r['iterations']:.2f} | "
                     + " | ".join(_cell(r, g) for g in (*GROUPS, *_REST)) + " |")
    return "\n".join(lines)
