"""Many independent rollouts of one mechanism: in this process, or as Dask tasks on a cluster.

Sampling, Monte-Carlo studies and parameter sweeps run the same maximal-coordinate model
(:class:`dynamics.maximal.Simulation`) from many initial states or with many controllers.
:func:`rollouts` runs ``steps`` steps for every case of a list and returns what each run
recorded, in the order of the cases:

* each rollout starts from a fresh copy of the template simulation (``copy.deepcopy``: its
  state, time, tolerances and options; the template itself is never stepped), so a rollout is
  exactly the run of its own new ``Simulation`` and does not depend on the others, nor on the
  chunking or the worker that ran it;
* with ``client`` (a ``distributed.Client``) the template goes to every worker once
  (``client.scatter(..., broadcast=True)``), and the cases are split into tasks of ``chunk``
  rollouts each; without it the rollouts run one after the other here.

A case is ``None`` (the template's own state), ``(x, q, v, w)`` (body positions, unit
quaternions, velocities, angular velocities: :meth:`~dynamics.maximal.Simulation.set_state`)
or a mapping with ``"positions"`` and / or ``"velocities"`` (joint coordinates by joint name:
:meth:`~dynamics.maximal.Simulation.set_coordinates`, i.e. the run of
``Simulation(spec.with_initial(positions, velocities), dt)``). With ``setup``, a case is
anything picklable: ``setup(sim, case)`` prepares the fresh copy (state, options, a parameter)
and returns the controller of that rollout, or ``None`` for ``controller``. The Dask path needs
the ``dask`` extra (``pip install graphsolve[dask]``); functions and closures (``setup``,
``controller``, ``output``) travel by cloudpickle.

Examples
--------
>>> import numpy as np
>>> from dynamics import models
>>> from dynamics.maximal import Simulation
>>> from dynamics.rollouts import rollouts
>>> sim = Simulation(models.pendulum(2), dt=0.01)
>>> cases = [{"positions": {"joint1": [a]}} for a in (0.1, 0.2, 0.3)]
>>> energy = rollouts(sim, 20, cases, fields="energy")
>>> [e["energy"].shape for e in energy]
[(21,), (21,), (21,)]
>>> from distributed import Client                                  # doctest: +SKIP
>>> with Client(n_workers=2, threads_per_worker=1) as client:       # doctest: +SKIP
...     same = rollouts(sim, 20, cases, fields="energy", client=client)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from .maximal.simulation import Simulation

__all__ = ["rollouts", "run_one"]

#: How to install what the Dask path needs.
INSTALL = "pip install graphsolve[dask]"


def _require_distributed():
    try:
        import distributed
    except ImportError as exc:                      # pragma: no cover - the environment's
        raise ImportError(f"rollouts(client=...) needs Dask: {INSTALL} (dask, "
                          "distributed)") from exc
    return distributed


def _start(sim: Simulation, case) -> None:
    """Put the fresh copy ``sim`` in the initial state that ``case`` describes."""
    if case is None:
        return
    if isinstance(case, Mapping):
        unknown = set(case) - {"positions", "velocities"}
        if unknown:
            raise ValueError(f"a rollout case mapping has the keys 'positions' and / or "
                             f"'velocities', got {sorted(unknown)}")
        sim.set_coordinates(case.get("positions"), case.get("velocities"))
        return
    if isinstance(case, Sequence) and len(case) == 4:
        sim.set_state(*case)
        return
    raise ValueError("a rollout case is None, (x, q, v, w) or a mapping with 'positions' / "
                     f"'velocities' (or anything, with setup=); got {type(case).__name__}")


def _fields(names) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


def run_one(template: Simulation, steps: int, case=None, *, setup: Callable | None = None,
            controller: Callable | None = None, record=None, fields=None,
            output: Callable | None = None):
    """One rollout of :func:`rollouts`: ``steps`` steps of a deep copy of ``template`` started
    as ``case`` says (the template is not modified). Returns the
    :class:`~dynamics.maximal.Trajectory`, the ``{field: array}`` of ``fields``, or
    ``output(trajectory)``."""
    sim = copy.deepcopy(template)
    if setup is not None:
        chosen = setup(sim, case)
        if chosen is not None:
            controller = chosen
    else:
        _start(sim, case)
    if record is None:
        record = "all" if fields is None else _fields(fields)
    traj = sim.run(steps, controller=controller, progress=False, record=record)
    if output is not None:
        return output(traj)
    if fields is not None:
        return {name: getattr(traj, name) for name in _fields(fields)}
    return traj


def _run_guarded(template: Simulation, steps: int, case, errors: str, options: dict):
    """:func:`run_one`, or with ``errors="return"`` the exception a failing rollout raised."""
    if errors == "raise":
        return run_one(template, steps, case, **options)
    try:
        return run_one(template, steps, case, **options)
    except Exception as exc:          # returned in place of the result (errors="return")
        return exc


def _run_chunk(template: Simulation, steps: int, cases: list, options: dict,
               errors: str = "raise") -> list:
    return [_run_guarded(template, steps, case, errors, options) for case in cases]


def rollouts(simulation: Simulation, steps: int, cases: Iterable, *,
             setup: Callable | None = None, controller: Callable | None = None,
             record=None, fields: str | Sequence[str] | None = None,
             output: Callable | None = None, client=None, chunk: int | None = None,
             progress: bool = False, errors: str = "raise") -> list:
    """Run ``steps`` steps of ``simulation`` from every case, independently.

    Parameters
    ----------
    simulation : Simulation
        The template (model, step size, tolerances, options and a default state); each
        rollout steps a deep copy of it.
    steps : int
        Steps per rollout.
    cases : iterable
        One rollout each: ``None``, ``(x, q, v, w)`` or ``{"positions": {...},
        "velocities": {...}}`` (joint coordinates by name); with ``setup``, anything.
    setup : callable, optional
        ``setup(sim, case)`` prepares the fresh copy ``sim`` for ``case`` and returns its
        controller (or ``None``: ``controller``).
    controller : callable, optional
        ``controller(sim)``, as for :meth:`~dynamics.maximal.Simulation.run`, for every
        rollout (unless ``setup`` returns another).
    record : str or sequence of str, optional
        What each run records (:meth:`~dynamics.maximal.Simulation.run`'s ``record``;
        default ``fields`` when given, else ``"all"``).
    fields : str or sequence of str, optional
        Return ``{field: array}`` per rollout (e.g. ``("q", "energy")``), computed where the
        rollout ran, instead of the whole :class:`~dynamics.maximal.Trajectory`.
    output : callable, optional
        Return ``output(trajectory)`` per rollout instead (e.g. a final state or a cost),
        computed where the rollout ran.
    client : distributed.Client, optional
        Run the rollouts as Dask tasks on its cluster (``None``: in this process).
    chunk : int, optional
        Rollouts per task (default: the cases split into four tasks per worker thread).
    progress : bool
        A tqdm bar over the rollouts (or tasks, with ``client``).
    errors : {"raise", "return"}
        A rollout that raises (a :class:`~dynamics.maximal.NewtonError`, or an exception of
        its controller, e.g. one that stops a robot that fell): ``"raise"`` (default) raises
        it; ``"return"`` puts the exception object in that rollout's place of the result
        and runs the others (searches that score failures, e.g.
        :func:`dynamics.gait_learning.learn_to_walk`).

    Returns
    -------
    list
        Per case, in order: a :class:`~dynamics.maximal.Trajectory`, a dict of ``fields`` or
        the value of ``output`` (or, with ``errors="return"``, the exception of a failed
        rollout). Equal to running each case by itself in a new ``Simulation``:
        ``run_one(simulation, steps, case, ...)``.

    Raises
    ------
    With ``errors="raise"``, the error of the first failing rollout (e.g.
    :class:`~dynamics.maximal.NewtonError`, :class:`~dynamics.spec.SpecError`), with
    ``client`` as well; ``ImportError`` without Dask when ``client`` is given.
    """
    if not isinstance(simulation, Simulation):
        raise TypeError(f"expected a dynamics.maximal.Simulation template, got "
                        f"{type(simulation).__name__}")
    steps = int(steps)
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    cases = list(cases)
    options = {"setup": setup, "controller": controller, "record": record, "fields": fields,
               "output": output}
    if fields is not None and output is not None:
        raise ValueError("give fields or output, not both")
    if errors not in ("raise", "return"):
        raise ValueError(f"errors must be 'raise' or 'return', got {errors!r}")
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int)
                              or chunk < 1):
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    if client is None:
        from tqdm.auto import tqdm

        return [_run_guarded(simulation, steps, case, errors, options)
                for case in tqdm(cases, desc="rollouts", disable=not progress)]
    distributed = _require_distributed()
    if not cases:
        return []
    if chunk is None:
        threads = max(1, sum(client.nthreads().values()))
        chunk = max(1, math.ceil(len(cases) / (4 * threads)))
    template = client.scatter(simulation, broadcast=True, hash=False)
    parts = [cases[i:i + chunk] for i in range(0, len(cases), chunk)]
    futures = [client.submit(_run_chunk, template, steps, part, options, errors, pure=False)
               for part in parts]
    try:
        if progress:
            from tqdm.auto import tqdm

            for _ in tqdm(distributed.as_completed(futures), total=len(futures),
                          desc="rollouts", unit="task"):
                pass
        results = client.gather(futures)
    finally:
        client.cancel(futures)
        template.release()
    return [r for part in results for r in part]

