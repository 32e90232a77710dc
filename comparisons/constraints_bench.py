"""Benchmark: Baraff's primary/auxiliary split against factoring the full KKT system.

A chain of ``n`` rigid bodies (6 dof, 3-row ball joints) with ``k`` ball-joint loop closures
(equality only, :func:`graphsolve.mechanisms.random_mechanism` with ``topology="chain"``) is
solved for ``[v̇; −λ]`` of ``[[M, Jᵀ], [J, 0]] [v̇; −λ] = [F; −c]`` by

(a) ``baraff``: :class:`graphsolve.ConstraintSystem` -- refactor ``H`` of the primary tree,
    ``3k`` primary solves for the auxiliary coefficient matrix, dense ``3k × 3k`` solve, final
    solve (Baraff 1996, §8.2); the split and the analysis of ``H`` are done once, untimed;
(b) ``graphsolve-brudigam``: graphsolve LDLᵀ of the full KKT matrix on the body/constraint
    graph (with cycles) in the Brüdigam ordering, analysis once, refactor + solve timed;
(c) ``graphsolve-amd``: the same with the AMD ordering;
(d) ``cholmod-simplicial``: CHOLMOD simplicial LDLᵀ (analyze once; ``cholesky_inplace`` +
    solve timed); it does not pivot, so a zero pivot of the indefinite matrix is a recorded
    failure;
(e) ``superlu``: ``scipy.sparse.linalg.splu`` (COLAMD, partial pivoting) + solve.

Timings use :func:`comparisons.runner.time_call` (warm-up excluded, best of ``repeats``) with
BLAS pinned to one thread. Every row carries the normwise backward error of its solution.
"""

from __future__ import annotations

import sys

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import graphsolve as gs
from graphsolve import ConstraintSystem
from graphsolve.mechanisms import random_mechanism

from .blas_threads import limit_blas_threads
from .runner import time_call

__all__ = ["run_constraint_benchmark", "crossover", "full_kkt_matrix", "plot_constraints",
           "SOLVER_NAMES"]

SOLVER_NAMES = ("baraff", "graphsolve-brudigam", "graphsolve-amd", "cholmod-simplicial",
                "superlu")


def full_kkt_matrix(system: ConstraintSystem) -> gs.BlockMatrix:
    """``[[M, Jᵀ], [J, 0]]`` with *every* constraint a node (bodies first, then constraints in
    the order added): the same numbering as :meth:`ConstraintSystem.kkt`."""
    nb = system.n_bodies
    G = nx.Graph()
    G.add_nodes_from((b, {"role": "body", "size": int(s)}) for b, s in enumerate(system.body_sizes))
    off = {}
    for i, con in enumerate(system.constraints):
        G.add_node(nb + i, role="constraint", size=con.rows)
        for b, j in zip(con.bodies, con.jacobians, strict=True):
            G.add_edge(nb + i, b)
            off[(nb + i, b)] = j
    diag = list(system.masses) + [np.zeros((c.rows, c.rows)) for c in system.constraints]
    return gs.BlockMatrix.from_blocks(G, diag, off)


def _backward_error(S, b, x) -> float:
    if not np.all(np.isfinite(x)):
        return float("inf")
    r = S @ x - b
    nrm = float(abs(S).sum(axis=1).max())
    return float(np.abs(r).max() / (nrm * np.abs(x).max() + np.abs(b).max()))


def _baraff(system, f, S, b, repeats):
    system.factor()                       # symbolic split + analysis of H (untimed)

    fv = np.concatenate(f)

    def run():
        system.factor()
        return system.solve(fv, residuals=False)

    t = time_call(run, repeats)
    res = run()
    x = np.concatenate([res.acceleration_vector, -res.multiplier_vector])
    return t, x


def _graphsolve(system, f, S, b, repeats, ordering="brudigam"):
    A = full_kkt_matrix(system)
    an = gs.analyze(A, ordering)
    F = gs.factorize(A, method="ldlt", analysis=an)

    def run():
        F.refactor(A)
        return F.solve(b)

    return time_call(run, repeats), run()


def _cholmod(system, f, S, b, repeats):
    import warnings

    from sksparse import cholmod

    Sc = sp.csc_matrix(S)
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # CholmodWarning (zero pivot) -> failure
        F = cholmod.analyze(Sc, mode="simplicial")

        def run():
            F.cholesky_inplace(Sc)
            return F(b)

        x = run()
        if not np.all(np.isfinite(x)):
            raise FloatingPointError("non-finite solution (zero pivot in the LDLᵀ of the "
                                     "indefinite KKT matrix)")
        return time_call(run, repeats), x


def _superlu(system, f, S, b, repeats):
    Sc = sp.csc_matrix(S)

    def run():
        return spla.splu(Sc).solve(b)

    return time_call(run, repeats), run()


_RUNNERS = {"baraff": (_baraff, {}),
            "graphsolve-brudigam": (_graphsolve, {"ordering": "brudigam"}),
            "graphsolve-amd": (_graphsolve, {"ordering": "amd"}),
            "cholmod-simplicial": (_cholmod, {}),
            "superlu": (_superlu, {})}


def run_constraint_benchmark(ns=(100, 300, 1000), ks=(0, 1, 5, 10, 20, 50), repeats: int = 3,
                             progress: bool = True, seed: int = 0) -> list[dict]:
    """Time solvers (a)-(e) of the module docstring on chains with loop closures.

    Returns
    -------
    list of dict
        One row per ``(n, k, solver)``: ``n``, ``k`` (loop closures; ``3k`` auxiliary rows),
        ``solver``, ``status`` (``"ok"`` / ``"failed"``), ``reason`` (the failure),
        ``best_s`` and ``median_s`` (seconds per numeric factorization + solve), ``residual``
        (normwise backward error of ``[v̇; −λ]`` in the full KKT system), ``N``.

    Examples
    --------
    >>> rows = run_constraint_benchmark(ns=(8,), ks=(1,), repeats=1, progress=False)
    >>> sorted({r["solver"] for r in rows}) == sorted(SOLVER_NAMES)
    True
    """
    limit = limit_blas_threads(1)
    rows = []
    with limit:
        for n in ns:
            for k in ks:
                system = random_mechanism(n, k, topology="chain", seed=seed + 7919 * k + n)
                rng = np.random.default_rng(seed)
                f = [rng.standard_normal(int(s)) for s in system.body_sizes]
                S, b = system.kkt(f)
                S = sp.csr_matrix(S)
                for name, (fn, kw) in _RUNNERS.items():
                    row = {"n": n, "k": k, "solver": name, "N": S.shape[0]}
                    try:
                        t, x = fn(system, f, S, b, repeats, **kw)
                        row.update(status="ok", reason="", best_s=t.best, median_s=t.median,
                                   residual=_backward_error(S, b, x))
                    except Exception as exc:   # a failing solver is a result, not a crash
                        row.update(status="failed", reason=f"{type(exc).__name__}: {exc}"[:300],
                                   best_s=float("nan"), median_s=float("nan"),
                                   residual=float("nan"))
                    rows.append(row)
                    if progress:
                        print(f"n={n:5d} k={k:3d} {name:20s} {row['status']:6s} "
                              f"{row['best_s'] * 1e3:9.3f} ms  residual {row['residual']:.1e}",
                              file=sys.stderr)
    return rows


def crossover(rows: list[dict], against=None) -> dict[int, int | None]:
    """Per ``n``, the smallest ``k`` at which ``baraff`` is no longer the fastest solver with
    status ``"ok"`` (``None`` if it wins for every ``k`` measured). ``against`` restricts the
    competitors to the given solver names (e.g. ``("graphsolve-brudigam",)``: Baraff's split
    against Brüdigam's cyclic fill-in reduction, the two ways of handling loops).

    Examples
    --------
    >>> rows = [{"n": 10, "k": k, "solver": s, "status": "ok", "best_s": t}
    ...         for k, s, t in [(0, "baraff", 1.0), (0, "superlu", 2.0),
    ...                         (5, "baraff", 3.0), (5, "superlu", 2.0)]]
    >>> crossover(rows)
    {10: 5}
    """
    keep = None if against is None else {"baraff", *against}
    out: dict[int, int | None] = {}
    for n in sorted({r["n"] for r in rows}):
        out[n] = None
        for k in sorted({r["k"] for r in rows if r["n"] == n}):
            ok = [r for r in rows if r["n"] == n and r["k"] == k and r["status"] == "ok"
                  and (keep is None or r["solver"] in keep)]
            if not any(r["solver"] == "baraff" for r in ok):
                continue
            if min(ok, key=lambda r: r["best_s"])["solver"] != "baraff":
                out[n] = k
                break
    return out


def plot_constraints(rows: list[dict], path) -> None:
    """Time of factorization + solve against the number of loop closures ``k``, one panel per
    chain length ``n``, one line per solver (``ok`` rows; log time)."""
    from .plot import line_plot

    panels: dict = {}
    for r in rows:
        if r["status"] == "ok":
            panels.setdefault(f"chain of {r['n']} bodies", {}).setdefault(
                r["solver"], []).append((r["k"], float(r["best_s"]) * 1e3))
    line_plot(path, panels, xlabel="loop closures k", ylabel="factor + solve (ms)",
              title="Baraff's primary/auxiliary split vs the full KKT system", logx=False)
