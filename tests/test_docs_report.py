"""The documentation's page "Reproducing the papers" (``docs/reproducing.md``): it is in the
toctree, it includes the page that ``docs/_ext/paper_report.py`` generates from a run of
``python -m paper_figures`` (REPORT.md and one PNG per figure), it says that the site shows the
quick build and how to get the full one, and the generated output stays out of git. The figures
themselves are not built here (``make docs`` does that)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGE = DOCS / "reproducing.md"


@pytest.fixture(scope="module")
def ext():
    spec = importlib.util.spec_from_file_location("paper_report", DOCS / "_ext" / "paper_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def toctree_entries(text: str) -> list[str]:
    entries = []
    for block in re.findall(r"```\{toctree\}\n(.*?)```", text, flags=re.S):
        entries += [line.strip() for line in block.splitlines()
                    if line.strip() and not line.startswith(":")]
    return entries


def test_the_page_is_in_the_toctree():
    assert "reproducing" in toctree_entries((DOCS / "index.md").read_text())


def test_the_extension_is_enabled():
    conf = (DOCS / "conf.py").read_text()
    assert re.search(r'^\s*"paper_report",', conf, flags=re.M)


def test_the_page_includes_the_generated_report(ext):
    text = PAGE.read_text()
    (include,) = re.findall(r"```\{include\} (\S+)\n```", text)
    assert (DOCS / include).resolve() == ext.PAGE
    assert "REPORT.md" in text


def test_the_page_says_it_is_the_quick_build_and_how_to_get_the_full_one(ext):
    text = PAGE.read_text()
    assert "quick build" in text and "python -m paper_figures --quick" in text
    assert ext.QUICK_ARGS == ["--quick"]
    assert re.search(r"^\.venv/bin/python -m paper_figures\s", text, flags=re.M)   # full run
    assert "make docs DOCS_FIGURES=paper_figures/out" in text
    makefile = (ROOT / "Makefile").read_text()
    assert f"{ext.ENV}=$(DOCS_FIGURES)" in makefile


def test_generated_output_is_git_ignored(ext):
    assert ext.OUT.is_relative_to(DOCS / "_build")
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "docs/_build/" in ignored
    assert "paper_figures/out/" in ignored


REPORT = """# Claims of the seed papers, checked by `python -m paper_figures`

Run: now, quick configuration

## fig_a: First figure (Paper 1)

| paper | claim |
|---|---|
| P | c |

## fig_b: Second figure

| paper | claim |
|---|---|
| P | d |

## Not covered by this run

- something
"""


def test_render_page_puts_each_figure_after_its_table(ext, tmp_path):
    out = tmp_path / "docs" / "_build" / "paper_figures"
    text = ext.render_page(REPORT, ["fig_a", "fig_b", "fig_c"], out, tmp_path / "docs")
    headings = re.findall(r"^(#+) (.*)$", text, flags=re.M)
    assert headings[0] == ("##", "Claims of the seed papers, checked by `python -m "
                                 "paper_figures`")
    assert ("###", "Not covered by this run") in headings
    figures = re.findall(r"^:::\{figure\} (\S+)$", text, flags=re.M)
    assert figures == ["/_build/paper_figures/fig_a.png", "/_build/paper_figures/fig_b.png",
                       "/_build/paper_figures/fig_c.png"]           # fig_c: no table, at the end
    assert text.index("| P | c |") < text.index("fig_a.png") < text.index("## fig_b")
    assert text.index("| P | d |") < text.index("fig_b.png") < text.index("Not covered")
    assert "without a table of claims" in text
    assert "{download}`REPORT.md </_build/paper_figures/REPORT.md>`" in text


def test_a_run_is_fresh_only_if_it_succeeded_after_the_last_source_change(ext, tmp_path):
    root, out = tmp_path, tmp_path / "out"
    (root / "graphsolve").mkdir()
    source = root / "graphsolve" / "x.py"
    source.write_text("")
    out.mkdir()
    assert not ext.is_fresh(out, root)                        # nothing built
    (out / "REPORT.md").write_text("")
    (out / "build.json").write_text(json.dumps({"source": "quick", "returncode": 0}))
    os.utime(source, (1e9, 1e9))
    assert ext.is_fresh(out, root)
    os.utime(source, None)                                    # edited after the run
    os.utime(out / "build.json", (1e9 - 1, 1e9 - 1))
    assert not ext.is_fresh(out, root)
    (out / "build.json").write_text(json.dumps({"source": "quick", "returncode": 1}))
    os.utime(source, (1e9, 1e9))
    assert not ext.is_fresh(out, root)                        # the run failed
    (out / "build.json").write_text(json.dumps({"source": "/some/full/run", "returncode": 0}))
    assert not ext.is_fresh(out, root)                        # a copied run is not the quick one


def test_copy_run_takes_the_report_and_the_pngs(ext, tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    run.mkdir()
    with pytest.raises(FileNotFoundError, match="REPORT.md"):
        ext.copy_run(run, out)
    (run / "REPORT.md").write_text("# r\n")
    (run / "fig_a.png").write_bytes(b"png")
    (run / "fig_a.csv").write_text("x\n")
    ext.copy_run(run, out)
    assert sorted(p.name for p in out.iterdir()) == ["REPORT.md", "build.json", "fig_a.png"]
    page = ext.write_page(out, tmp_path)
    assert "{figure} /out/fig_a.png" in page.read_text()
