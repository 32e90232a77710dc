"""``REPORT.md``: one row per claim of the seed papers, with the paper's number, ours and a
verdict, collected from the figure modules' optional ``claims(rows)`` hooks."""

from __future__ import annotations

import platform
import time
from pathlib import Path

from comparisons.solvers import package_version

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not applicable")
B2023 = "Brüdigam et al. 2023"


def claim(paper: str, text: str, paper_value: str, ours: str, verdict: str,
          note: str = "") -> dict:
    """One REPORT row; ``verdict`` is one of :data:`VERDICTS`."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    return {"paper": paper, "claim": text, "paper_value": paper_value, "ours": ours,
            "verdict": verdict, "note": note}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_report(claims: dict[str, list[dict]], path: Path, quick: bool,
                 missing: list[str]) -> None:
    """Write ``path``: a table per figure, the machine and package versions."""
    lines = ["# Claims of the seed papers, checked by `python -m paper_figures`", "",
             f"Run: {time.strftime('%Y-%m-%d %H:%M %Z')}, {'quick' if quick else 'full'} "
             "configuration (quick runs use smaller sizes than the papers; verdicts say so "
             "where it matters).", "",
             f"Machine: {platform.processor() or platform.machine()}, Python "
             f"{platform.python_version()}; " + ", ".join(
                 f"{p} {package_version(p)}" for p in ("graphsolve", "numpy", "scipy", "numba",
                                                      "scikit-sparse", "pin", "mujoco")), ""]
    counts = {v: 0 for v in VERDICTS}
    for rows in claims.values():
        for r in rows:
            counts[r["verdict"]] += 1
    lines += ["Summary: " + ", ".join(f"{n} {v}" for v, n in counts.items()), ""]
    for name, rows in claims.items():
        lines += [f"## {name}", "", "| paper | claim | paper's number | ours | verdict | note |",
                  "|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(_cell(r[k]) for k in ("paper", "claim", "paper_value",
                                                         "ours", "verdict", "note")) + " |"
                  for r in rows]
        lines.append("")
    if missing:
        lines += ["## Not covered by this run", ""] + [f"- {m}" for m in missing] + [""]
    path.write_text("\n".join(lines))
