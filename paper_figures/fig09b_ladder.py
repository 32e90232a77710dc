"""Brüdigam et al. (2023) Fig. 9b: solving a linear system on a ladder graph, graph-ordered
sparse LDU against dense solvers.

Each ladder of ``r`` rungs has ``2r`` nodes with 6×6 blocks (the paper's size) and an
unsymmetric, block diagonally dominant matrix (``random_block_matrix(kind="unsymmetric")``), the
same matrix for every solver; residuals are checked. Timed per solver (factor + solve, best and
median of several runs in one process, warm-up excluded):

* ``graphsolve compiled`` / ``reference``: :func:`graphsolve.factorize` with the
  ``"brudigam"`` ordering and the numba or the NumPy backend, analysis reused (numeric refactor
  + solve, as inside a Newton loop);
* ``dense block LDU``: Brüdigam & Manchester (2020) Alg. 1-2 (:mod:`graphsolve.dense`);
* ``LAPACK LU``: ``getrf``/``getrs`` on the dense matrix.

Later issues add CHOLMOD, SuperLU and the paper-faithful variant (#3).
"""

from __future__ import annotations

import numpy as np
import scipy
from tqdm import tqdm

import graphsolve as gs
from comparisons.runner import time_call

from ._plotting import finish_axes, save_figure

NAME = "fig09b_ladder"
TITLE = ("Ladder graph, 6×6 blocks: graph-ordered sparse LDU vs dense "
         "(Brüdigam et al. 2023, Fig. 9b)")
SOLVERS = ("graphsolve compiled", "graphsolve reference", "dense block LDU", "LAPACK LU")
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "LAPACK LU": "paper's own: dense LAPACK LU, the original benchmark's baseline (here on the "
                 "same matrix as graphsolve)",
    "dense block LDU": "addition: the dense block LDU of Brüdigam & Manchester 2020 Alg. 1-2",
}
#: A tiny configuration for the test suite.
TINY = {"rungs": [1, 3], "repeats": 1}


def _rungs(quick: bool) -> list[int]:
    return [1, 2, 4, 8, 16, 32, 64] if quick else [1, 2, 4, 8, 16, 32, 64, 101, 151]


def compute(quick: bool = True, rungs: list[int] | None = None, repeats: int | None = None
            ) -> list[dict]:
    """Rows ``rungs, nodes, N, solver, best_s, median_s, repeats, residual``."""
    rungs = rungs or _rungs(quick)
    repeats = repeats or (3 if quick else 7)
    rows = []
    for r in tqdm(rungs, desc=NAME, unit="size"):
        A = gs.random_block_matrix(gs.generators.ladder(2 * r), "unsymmetric", block_size=6,
                                   seed=r)
        S, Ad = A.to_scipy(), A.to_dense()
        b = np.random.default_rng(r).standard_normal(A.shape[0])
        F = gs.factorize(A, ordering="brudigam", method="ldu")
        for solver, fn in _cases(A, Ad, b).items():
            t = time_call(fn, repeats=repeats, warmup=1, min_time=0.02 if quick else 0.05)
            x = fn()
            res = float(np.linalg.norm(S @ x - b) / (np.linalg.norm(b)
                                                    + abs(S).max() * np.linalg.norm(x)))
            rows.append({"rungs": r, "nodes": 2 * r, "N": A.shape[0], "solver": solver,
                         "best_s": t.best, "median_s": t.median, "repeats": t.repeats,
                         "residual": res, "fill_pairs": F.analysis.n_fill
                         if solver.startswith("graphsolve") else ""})
    return rows


def _cases(A, Ad, b) -> dict:
    """One factor + solve callable per solver, all on the same matrix and right-hand side."""
    Fc = gs.factorize(A, ordering="brudigam", method="ldu", backend="compiled")
    Fr = gs.factorize(A, ordering="brudigam", method="ldu", backend="reference")
    return {
        "graphsolve compiled": lambda: Fc.refactor(A).solve(b),
        "graphsolve reference": lambda: Fr.refactor(A).solve(b),
        "dense block LDU": lambda: gs.dense.dense_block_ldu(Ad, A.block_sizes).solve(b),
        "LAPACK LU": lambda: gs.dense.lapack_lu(Ad).solve(b),
    }


def summarize(rows: list[dict]) -> list[str]:
    """Speed ratios of the dense solvers over graphsolve at the largest size."""
    big = max(r["rungs"] for r in rows)
    at = {r["solver"]: r["best_s"] for r in rows if r["rungs"] == big}
    g = at["graphsolve compiled"]
    return [f"{big} rungs: graphsolve compiled {g * 1e3:.3f} ms; "
            + ", ".join(f"{s} {at[s] * 1e3:.3f} ms ({at[s] / g:.1f}x)" for s in SOLVERS[1:])]


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), constrained_layout=True)
    styles = {"graphsolve compiled": ("tab:blue", "o"),
              "graphsolve reference": ("tab:cyan", "D"),
              "dense block LDU": ("tab:red", "s"), "LAPACK LU": ("tab:gray", "^")}
    for solver in SOLVERS:
        rs = [r for r in rows if r["solver"] == solver]
        color, marker = styles[solver]
        label = solver + (f" ({gs.__version__})" if solver.startswith("graphsolve")
                          else f" (SciPy {scipy.__version__})")
        ax.plot([r["nodes"] for r in rs], [r["best_s"] * 1e3 for r in rs], marker=marker,
                color=color, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("graph nodes (2 × rungs), 6×6 blocks")
    ax.set_ylabel("factor + solve time, best of N [ms]")
    ax.set_title(TITLE, fontsize=9)
    finish_axes(ax, legend_size=8)
    save_figure(fig, path, None, dpi=130)


def claims(rows: list[dict]) -> list[dict]:
    """REPORT row for Fig. 9b (corrected timing of the same matrix)."""
    from ._report import B2023, claim

    big = max(r["rungs"] for r in rows)
    at = {r["solver"]: r["best_s"] for r in rows if r["rungs"] == big}
    ratio = at["LAPACK LU"] / at["graphsolve compiled"]
    return [claim(B2023, "Fig. 9b: on ladders the sparse graph solver beats dense by two "
                  "orders of magnitude", "> 100x", f"{big} rungs: LAPACK LU / graphsolve = "
                  f"{ratio:.0f}x", "reproduced" if ratio >= 100 else "partly reproduced",
                  "quick runs stop at 64 rungs" if big < 100 else "",
                  against=("LAPACK LU",))]
