"""Sphinx extension of the page "Reproducing the papers" (``docs/reproducing.md``).

When the build starts (``builder-inited``) it makes sure :data:`OUT` holds a run of
``python -m paper_figures``: the REPORT.md of the papers' claims and one PNG per figure. By
default that is the quick configuration (``python -m paper_figures --quick``, two to three
minutes on two cores with numba's cache warm), run only when :data:`OUT` has no successful run
newer than every ``.py`` file of ``graphsolve``, ``dynamics``, ``comparisons`` and
``paper_figures``. With the environment variable ``GRAPHSOLVE_DOCS_FIGURES=DIR`` (``make docs
DOCS_FIGURES=paper_figures/out``) the REPORT.md and PNGs of an existing run in ``DIR`` — such as
a full one, ``python -m paper_figures`` — are copied instead.

It then writes :data:`PAGE` (``page.md``), which ``docs/reproducing.md`` includes: REPORT.md
with its headings one level down and each figure's PNG after that figure's table of claims.
Everything here is generated into ``docs/_build/`` (git-ignored, excluded from the sources,
removed by ``make clean``). A failed figure build is a Sphinx warning, hence an error under
``make docs`` (``-W``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
#: The run of ``python -m paper_figures`` the page shows (under the git-ignored ``docs/_build``).
OUT = DOCS / "_build" / "paper_figures"
#: The generated Markdown that ``docs/reproducing.md`` includes.
PAGE = OUT / "page.md"
#: Written after each run: how it was made and whether it succeeded.
STAMP = OUT / "build.json"
ENV = "GRAPHSOLVE_DOCS_FIGURES"
QUICK_ARGS = ["--quick"]
SOURCES = ("graphsolve", "dynamics", "comparisons", "paper_figures")


def newest_source_mtime(root: Path = ROOT) -> float:
    """The latest modification time of a ``.py`` file of the packages the figures run."""
    return max((p.stat().st_mtime for pkg in SOURCES for p in (root / pkg).rglob("*.py")),
               default=0.0)


def is_fresh(out: Path = OUT, root: Path = ROOT) -> bool:
    """Whether ``out`` holds a successful quick run newer than the sources."""
    stamp = out / "build.json"
    if not (stamp.exists() and (out / "REPORT.md").exists()):
        return False
    info = json.loads(stamp.read_text())
    return (info.get("source") == "quick" and info.get("returncode") == 0
            and stamp.stat().st_mtime >= newest_source_mtime(root))


def build_quick(out: Path = OUT) -> int:
    """Run ``python -m paper_figures --quick`` into a scratch directory, then move it to ``out``
    (an interrupted run leaves no half-written output behind). Returns the exit code."""
    scratch = out.with_name(out.name + ".tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    cmd = [sys.executable, "-m", "paper_figures", *QUICK_ARGS, "--out", str(scratch)]
    print(f"docs: python {' '.join(cmd[1:3] + QUICK_ARGS)} -> {out.relative_to(ROOT)} (a few "
          f"minutes; log in {(out / 'build.log').relative_to(ROOT)})", file=sys.stderr)
    t0 = time.perf_counter()
    with (scratch / "build.log").open("w") as log:
        rc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "MPLBACKEND": "Agg"}).returncode
    (scratch / "build.json").write_text(json.dumps(
        {"source": "quick", "command": cmd[1:3] + QUICK_ARGS, "returncode": rc,
         "seconds": round(time.perf_counter() - t0, 1)}) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    scratch.rename(out)
    return rc


def copy_run(source: Path, out: Path = OUT) -> None:
    """Copy REPORT.md and the PNGs of an existing ``python -m paper_figures`` run to ``out``."""
    if not (source / "REPORT.md").exists():
        raise FileNotFoundError(f"{ENV}={source}: no REPORT.md there (run python -m "
                                "paper_figures --out DIR first)")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for path in [source / "REPORT.md", *sorted(source.glob("*.png"))]:
        shutil.copy2(path, out / path.name)
    (out / "build.json").write_text(json.dumps({"source": str(source), "returncode": 0}) + "\n")


def figure_block(name: str, out: Path = OUT, docs: Path = DOCS) -> list[str]:
    """MyST lines showing ``name``'s PNG (a path from the source directory, ``/…``)."""
    src = "/" + (out / f"{name}.png").relative_to(docs).as_posix()
    return [f":::{{figure}} {src}", f":alt: {name}", ":width: 100%", "",
            f"`{name}.png`", ":::", ""]


def render_page(report: str, pngs: list[str], out: Path = OUT, docs: Path = DOCS) -> str:
    """REPORT.md's text with every heading one level down and, after each figure's section (its
    heading is ``## NAME: TITLE``), that figure's PNG; PNGs without a section come at the end."""
    available = set(pngs)
    shown: set[str] = set()
    lines: list[str] = []
    current: str | None = None

    def close_section() -> None:
        if current in available and current not in shown:
            lines.extend(figure_block(current, out, docs))
            shown.add(current)

    for line in report.splitlines():
        if line.startswith("## "):
            close_section()
            current = line[3:].split(":", 1)[0].strip()
        if line.startswith("#"):
            line = "#" + line
        lines.append(line)
    close_section()
    rest = [name for name in pngs if name not in shown]
    if rest:
        lines += ["", "## Figures without a table of claims", ""]
        for name in rest:
            lines += [f"### {name}", "", *figure_block(name, out, docs)]
    rel = "/" + (out / "REPORT.md").relative_to(docs).as_posix()
    lines += ["", f"The report as generated: {{download}}`REPORT.md <{rel}>`.", ""]
    return "\n".join(lines)


def write_page(out: Path = OUT, docs: Path = DOCS) -> Path:
    page = out / "page.md"
    pngs = sorted(p.stem for p in out.glob("*.png"))
    page.write_text(render_page((out / "REPORT.md").read_text(), pngs, out, docs))
    return page


def prepare(app) -> None:
    source = os.environ.get(ENV, "").strip()
    if source:
        copy_run((ROOT / source).resolve())
    elif not is_fresh():
        rc = build_quick()
        if rc:
            logger.warning("python -m paper_figures --quick failed (exit %d), see %s; the page "
                           "'Reproducing the papers' shows what it built", rc, OUT / "build.log")
    if (OUT / "REPORT.md").exists():
        write_page()
    else:
        OUT.mkdir(parents=True, exist_ok=True)
        PAGE.write_text("The figure build wrote no REPORT.md.\n")
        logger.warning("no %s: the page 'Reproducing the papers' is empty", OUT / "REPORT.md")


def setup(app):
    app.connect("builder-inited", prepare)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
