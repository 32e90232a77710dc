"""Plots and tables from a results CSV: time vs nodes per family and kind (log-log, one line per
solver), and a fill / ratio table in Markdown, all on the native node numbering; with random
relabellings in the CSV (``run --relabel K``), a table of one solver's time over a peer's on the
native against the worst random numbering.

Ratios are computed within one execution of a case only (the rows sharing a ``task`` id, or,
in a CSV without that column, a case key): all solvers of a case ran in the same process on the
same host, so a ratio is a same-run ratio even when the CSV was filled by workers on different
machines; several executions of a case give the median of their ratios. Absolute times are
comparable only on one machine: :func:`plot_results` warns when the rows it plots come from
more than one CPU model."""

from __future__ import annotations

import csv
import statistics
import warnings
from collections import defaultdict
from pathlib import Path

__all__ = ["read_results", "plot_results", "fill_table", "ratio_table", "labelling_table",
           "native", "cpu_models", "case_runs", "line_plot", "bar_plot"]

REFERENCE_PEER = "cholmod"


def read_results(path) -> list[dict]:
    with Path(path).open() as fh:
        return list(csv.DictReader(fh))


def native(rows: list[dict]) -> list[dict]:
    """The rows on the generator's own numbering (all rows of a CSV without ``labelling``)."""
    return [r for r in rows if r.get("labelling") in (None, "", "native")]


def _ok(rows):
    return [r for r in native(rows) if r["status"] == "ok"]


def cpu_models(rows: list[dict]) -> list[str]:
    """The distinct non-empty ``cpu`` values of ``rows`` (none for a CSV without the column)."""
    return sorted({r["cpu"] for r in rows if r.get("cpu")})


def case_runs(rows: list[dict], metric: str = "refactor_solve_s"
              ) -> dict[tuple, list[dict[str, float]]]:
    """``{(family, kind, size, labelling): [{solver: metric} per execution of the case]}`` over
    the ``ok`` rows: an execution is the rows sharing a ``task`` id (one task, one process);
    rows without one form a single execution per case."""
    runs: dict[tuple, dict[str, float]] = defaultdict(dict)
    for r in rows:
        if r["status"] != "ok" or r.get(metric) in (None, ""):
            continue
        case = (r["family"], r["kind"], int(r["size"]), r.get("labelling") or "native")
        runs[(*case, r.get("task") or "")][r["solver"]] = float(r[metric])
    out: dict[tuple, list[dict[str, float]]] = defaultdict(list)
    for key, values in runs.items():
        out[key[:4]].append(values)
    return out


def _ratio(executions: list[dict[str, float]], mine: str, peer: str) -> float | None:
    """Median over the executions of a case of ``mine / peer`` within each execution."""
    xs = [d[mine] / d[peer] for d in executions if d.get(mine) and d.get(peer)]
    return statistics.median(xs) if xs else None


def plot_results(rows: list[dict], out_dir, stem: str = "comparison",
                 metric: str = "refactor_solve_s") -> list[Path]:
    """One PNG per (family, kind): ``metric`` in ms vs graph nodes, log-log (native
    numbering)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cpus = cpu_models(_ok(rows))
    if len(cpus) > 1:
        warnings.warn(f"the rows come from {len(cpus)} CPU models ({'; '.join(cpus)}): absolute "
                      f"times in the {metric} plots are not comparable across them; compare "
                      "the within-case ratios of the tables", UserWarning, stacklevel=2)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    groups = defaultdict(list)
    missing = defaultdict(set)                    # solvers that failed or were skipped
    for r in native(rows):
        if r["status"] == "ok":
            groups[(r["family"], r["kind"])].append(r)
        else:
            missing[(r["family"], r["kind"])].add(f"{r['solver']} ({r['status']})")
    paths = []
    for (family, kind), rs in sorted(groups.items()):
        fig, ax = plt.subplots(figsize=(6.4, 4.4), constrained_layout=True)
        by_solver = defaultdict(list)
        for r in rs:
            by_solver[(r["solver"], r["version"])].append(r)
        for (solver, version), pts in sorted(by_solver.items()):
            pts.sort(key=lambda r: int(r["nodes"]))
            style = "-" if solver.startswith("graphsolve") else "--"
            ax.plot([int(r["nodes"]) for r in pts], [float(r[metric]) * 1e3 for r in pts],
                    style, marker="o", ms=3, label=f"{solver} {version}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("graph nodes")
        ax.set_ylabel(f"{metric.removesuffix('_s').replace('_', ' + ')} time, best of N [ms]")
        blocks = ("6×6 body and 3×3 constraint blocks" if kind == "kkt" else "6×6 blocks")
        ax.set_title(f"{family}, kind {kind}: {blocks}, 1 BLAS thread", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, ncol=2)
        if missing[(family, kind)]:
            fig.text(0.01, 0.005, "not shown: " + ", ".join(sorted(missing[(family, kind)])),
                     fontsize=6, color="dimgray")
        path = out_dir / f"{stem}_{family}_{kind}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths


def fill_table(rows: list[dict]) -> str:
    """Markdown: stored factor entries (and fill block pairs for graphsolve) per case (native
    numbering)."""
    ok = _ok(rows)
    solvers = sorted({r["solver"] for r in ok})
    cases = sorted({(r["family"], r["kind"], int(r["size"]), int(r["nodes"])) for r in ok})
    at = {(r["family"], r["kind"], int(r["size"]), r["solver"]): r for r in ok}
    lines = ["| family | kind | size | nodes | " + " | ".join(solvers) + " |",
             "|" + "---|" * (4 + len(solvers))]
    for fam, kind, size, nodes in cases:
        cells = []
        for s in solvers:
            r = at.get((fam, kind, size, s))
            if r is None or not r.get("factor_nnz"):
                cells.append("")
            else:
                fill = f" ({r['fill_pairs']} fill)" if r.get("fill_pairs") not in (None, "") \
                    else ""
                cells.append(f"{int(float(r['factor_nnz']))}{fill}")
        lines.append(f"| {fam} | {kind} | {size} | {nodes} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_table(rows: list[dict], solver: str = "graphsolve-brudigam-compiled",
                metric: str = "refactor_solve_s") -> str:
    """Markdown: ``solver``'s time divided by every other solver's, per case (< 1: faster;
    native numbering)."""
    ok = _ok(rows)
    runs = case_runs(ok, metric)
    peers = sorted({r["solver"] for r in ok} - {solver})
    cases = sorted({(r["family"], r["kind"], int(r["size"]), int(r["nodes"])) for r in ok})
    lines = [f"{metric} of {solver} / peer (below 1: {solver} faster)", "",
             "| family | kind | size | nodes | " + " | ".join(peers) + " |",
             "|" + "---|" * (4 + len(peers))]
    for fam, kind, size, nodes in cases:
        ex = runs.get((fam, kind, size, "native"), [])
        cells = [f"{x:.2f}" if (x := _ratio(ex, solver, p)) is not None else "" for p in peers]
        lines.append(f"| {fam} | {kind} | {size} | {nodes} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def labelling_table(rows: list[dict], solver: str = "graphsolve-auto-compiled",
                    peer: str = REFERENCE_PEER, metric: str = "refactor_solve_s") -> str:
    """Markdown: ``solver``'s ``metric`` over ``peer``'s on the same case, on the native
    numbering and on the worst (largest ratio) and median of the random relabellings, per
    family, kind and size ("" where a row is missing or not ok)."""
    runs = case_runs(rows, metric)
    cases = sorted({(r["family"], r["kind"], int(r["size"]), int(r["nodes"])) for r in rows
                    if r.get("labelling") in (None, "", "native")
                    and r.get("nodes") not in (None, "")})
    labels = sorted({k[3] for k in runs} - {"native"})
    lines = [f"{metric} of {solver} / {peer} by node numbering (below 1: {solver} faster)", "",
             "| family | kind | size | nodes | native | worst random | median random | "
             "random labellings |", "|" + "---|" * 8]

    def ratio(fam, kind, size, lab):
        return _ratio(runs.get((fam, kind, size, lab), []), solver, peer)

    for fam, kind, size, nodes in cases:
        nat = ratio(fam, kind, size, "native")
        rnd = [x for x in (ratio(fam, kind, size, lab) for lab in labels) if x is not None]
        cells = [f"{nat:.2f}" if nat is not None else "",
                 f"{max(rnd):.2f}" if rnd else "", f"{statistics.median(rnd):.2f}"
                 if rnd else "", str(len(rnd))]
        lines.append(f"| {fam} | {kind} | {size} | {nodes} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------- the other benchmarks
def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def line_plot(path, panels: dict[str, dict[str, list[tuple[float, float]]]], *, xlabel: str,
              ylabel: str, title: str = "", logx: bool = True, logy: bool = True) -> Path:
    """One PNG of side-by-side panels ``{panel title: {line label: [(x, y), ...]}}`` (the
    plot of a ``*_bench`` module; lines sorted by x, NaN points left out)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(4.6 * max(len(panels), 1) + 1.2,
                                                              4.2), squeeze=False)
    for ax, (name, lines) in zip(axes[0], panels.items(), strict=False):
        for i, (label, pts) in enumerate(lines.items()):
            pts = sorted((float(x), float(y)) for x, y in pts if y == y and y is not None)
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", ms=3, color=f"C{i % 10}",
                        label=label)
        ax.set_xscale("log" if logx else "linear")
        ax.set_yscale("log" if logy else "linear")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(name, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def bar_plot(path, groups: list[str], series: dict[str, list[float | None]], *, ylabel: str,
             title: str = "", logy: bool = True) -> Path:
    """One PNG of grouped bars: ``series[label][i]`` is the bar of ``groups[i]`` (None or NaN:
    no bar)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.4, 0.9 * len(groups) + 2), 4.4))
    width = 0.8 / max(len(series), 1)
    for i, (label, values) in enumerate(series.items()):
        ys = [float("nan") if v is None else float(v) for v in values]
        ax.bar([k + i * width for k in range(len(groups))], ys, width, label=label)
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(groups))], groups, fontsize=7,
                  rotation=30 if len(groups) > 6 else 0, ha="right" if len(groups) > 6 else
                  "center")
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
