"""One figure build, the unit of work of ``python -m paper_figures``: in process, or one Dask
task per figure with ``--workers N`` / ``--scheduler ADDRESS``."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")


def write_csv(rows: list[dict], path: Path) -> None:
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with Path(path).open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def build_figure(name: str, quick: bool, out, tiny: bool = False) -> dict:
    """Compute figure ``name`` (its ``TINY`` configuration with ``tiny``), write
    ``out/<name>.csv`` and ``out/<name>.png`` and return what the command prints and
    ``REPORT.md`` needs: ``name``, ``rows`` (count), ``seconds``, ``csv``, ``png``, ``summary``
    (lines), ``claims`` (``title``, ``rows`` and the module's ``COMPARATORS``; ``None``
    without a ``claims`` hook) and ``worker`` / ``host``. With
    Dask, ``out`` must be visible to the workers (a shared file system on a multi-node
    cluster)."""
    import socket

    from comparisons.runner import worker_info

    from . import FIGURES

    mod = FIGURES[name]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = mod.compute(quick=quick, **mod.TINY) if tiny else mod.compute(quick=quick)
    csv_path, png_path = out / f"{name}.csv", out / f"{name}.png"
    write_csv(rows, csv_path)
    mod.plot(rows, png_path)
    return {"name": name, "rows": len(rows), "seconds": time.perf_counter() - t0,
            "csv": csv_path.name, "png": png_path.name,
            "summary": list(getattr(mod, "summarize", lambda r: [])(rows)),
            "claims": ({"title": f"{name}: {mod.TITLE}", "rows": mod.claims(rows),
                        "comparators": dict(mod.COMPARATORS)}
                       if hasattr(mod, "claims") else None),
            "worker": worker_info()["worker"], "host": socket.gethostname()}
