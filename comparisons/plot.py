"""Plots and tables from a results CSV: time vs nodes per family and kind (log-log, one line per
solver), and a fill / ratio table in Markdown, all on the native node numbering; with random
relabellings in the CSV (``run --relabel K``), a table of one solver's time over a peer's on the
native against the worst random numbering."""

from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from pathlib import Path

__all__ = ["read_results", "plot_results", "fill_table", "ratio_table", "labelling_table",
           "native"]

REFERENCE_PEER = "cholmod"


def read_results(path) -> list[dict]:
    with Path(path).open() as fh:
        return list(csv.DictReader(fh))


def native(rows: list[dict]) -> list[dict]:
    """The rows on the generator's own numbering (all rows of a CSV without ``labelling``)."""
    return [r for r in rows if r.get("labelling") in (None, "", "native")]


def _ok(rows):
    return [r for r in native(rows) if r["status"] == "ok"]


def plot_results(rows: list[dict], out_dir, stem: str = "comparison",
                 metric: str = "refactor_solve_s") -> list[Path]:
    """One PNG per (family, kind): ``metric`` in ms vs graph nodes, log-log (native
    numbering)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    at = {(r["family"], r["kind"], int(r["size"]), r["solver"]): float(r[metric]) for r in ok}
    peers = sorted({r["solver"] for r in ok} - {solver})
    cases = sorted({(r["family"], r["kind"], int(r["size"]), int(r["nodes"])) for r in ok})
    lines = [f"{metric} of {solver} / peer (below 1: {solver} faster)", "",
             "| family | kind | size | nodes | " + " | ".join(peers) + " |",
             "|" + "---|" * (4 + len(peers))]
    for fam, kind, size, nodes in cases:
        mine = at.get((fam, kind, size, solver))
        cells = [f"{mine / at[(fam, kind, size, p)]:.2f}" if mine and (fam, kind, size, p) in at
                 else "" for p in peers]
        lines.append(f"| {fam} | {kind} | {size} | {nodes} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def labelling_table(rows: list[dict], solver: str = "graphsolve-auto-compiled",
                    peer: str = REFERENCE_PEER, metric: str = "refactor_solve_s") -> str:
    """Markdown: ``solver``'s ``metric`` over ``peer``'s on the same case, on the native
    numbering and on the worst (largest ratio) and median of the random relabellings, per
    family, kind and size ("" where a row is missing or not ok)."""
    at = {(r["family"], r["kind"], int(r["size"]), r.get("labelling") or "native", r["solver"]):
          float(r[metric]) for r in rows if r["status"] == "ok"}
    cases = sorted({(r["family"], r["kind"], int(r["size"]), int(r["nodes"])) for r in rows
                    if r.get("labelling") in (None, "", "native")})
    labels = sorted({k[3] for k in at} - {"native"})
    lines = [f"{metric} of {solver} / {peer} by node numbering (below 1: {solver} faster)", "",
             "| family | kind | size | nodes | native | worst random | median random | "
             "random labellings |", "|" + "---|" * 8]

    def ratio(fam, kind, size, lab):
        mine, theirs = at.get((fam, kind, size, lab, solver)), at.get((fam, kind, size, lab, peer))
        return mine / theirs if mine and theirs else None

    for fam, kind, size, nodes in cases:
        nat = ratio(fam, kind, size, "native")
        rnd = [x for x in (ratio(fam, kind, size, lab) for lab in labels) if x is not None]
        cells = [f"{nat:.2f}" if nat is not None else "",
                 f"{max(rnd):.2f}" if rnd else "", f"{statistics.median(rnd):.2f}"
                 if rnd else "", str(len(rnd))]
        lines.append(f"| {fam} | {kind} | {size} | {nodes} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
