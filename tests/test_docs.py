"""The documentation sources: every public name is in the API reference, and every Python block of
the Markdown pages runs (``make docs`` builds the site itself, with warnings as errors)."""

from __future__ import annotations

import importlib
import pkgutil
import re
import types
from pathlib import Path

import pytest

import comparisons
import dynamics

DOCS = Path(__file__).resolve().parents[1] / "docs"
API = DOCS / "api"

#: Modules whose ``__all__`` the reference must list in full (one section each).
DOCUMENTED = (
    "graphsolve",
    "graphsolve.generators",
    "graphsolve.dense",
    "graphsolve.distributed",
    "graphsolve.lcp",
    "graphsolve.mechanisms",
    "graphsolve.graph",
    "graphsolve.symbolic",
    "graphsolve.factor_queries",
    "graphsolve.lowlevel",
    "graphsolve.kernels.protocol",
    "dynamics.spec",
    "dynamics.models",
    "dynamics.urdf",
    "dynamics.quaternion",
    "dynamics.maximal",
    "dynamics.rollouts",
    "dynamics.gait_learning",
    "dynamics.redundant",
    "dynamics.ggl",
    "dynamics.minimal",
    "dynamics.minimal.galerkin",
    "dynamics.minimal.svi",
    "dynamics.minimal.spatial",
    "dynamics.minimal.general_joint",
    "dynamics.minimal.surface_joint",
    "dynamics.minimal.general_compiled",
)


def reference_entries(text: str) -> dict[str, set[str]]:
    """``{module: names}`` of the autosummary entries under each ``.. currentmodule::``."""
    entries: dict[str, set[str]] = {}
    module = None
    in_autosummary = False
    for line in text.splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module = m.group(1)
            entries.setdefault(module, set())
            in_autosummary = False
        elif line.startswith(".. autosummary::"):
            in_autosummary = True
        elif in_autosummary and (m := re.match(r"   ([A-Za-z_][\w.]*)\s*$", line)):
            entries[module].add(m.group(1))
        elif in_autosummary and line and not line.startswith(" "):
            in_autosummary = False
    return entries


def all_entries() -> dict[str, set[str]]:
    merged: dict[str, set[str]] = {}
    for path in sorted(API.glob("*.rst")):
        for module, names in reference_entries(path.read_text()).items():
            merged.setdefault(module, set()).update(names)
    return merged


def test_reference_parser_finds_entries_and_misses_absent_names():
    text = ".. currentmodule:: pkg\n\n.. autosummary::\n   :toctree: x\n\n   alpha\n   beta\n\nz\n"
    assert reference_entries(text) == {"pkg": {"alpha", "beta"}}
    assert "gamma" not in reference_entries(text)["pkg"]


@pytest.mark.parametrize("module_name", DOCUMENTED)
def test_every_public_name_is_in_the_api_reference(module_name):
    module = importlib.import_module(module_name)
    documented = all_entries().get(module_name, set())
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):      # a public submodule: a section of its own
            if obj.__name__ not in DOCUMENTED:
                missing.append(f"{name} (module {obj.__name__}: add it to DOCUMENTED)")
        elif name not in documented:
            missing.append(name)
    assert not missing, f"{module_name}.__all__ names missing from docs/api/*.rst: {missing}"


def test_every_dynamics_module_is_documented():
    public = {f"dynamics.{m.name}" for m in pkgutil.iter_modules(dynamics.__path__)
              if not m.name.startswith("_")}
    assert public <= set(DOCUMENTED), public - set(DOCUMENTED)


def test_every_comparisons_module_is_documented():
    text = (API / "comparisons.rst").read_text()
    documented = set(re.findall(r"\.\. automodule:: (comparisons\.\w+)", text))
    public = {f"comparisons.{m.name}" for m in pkgutil.iter_modules(comparisons.__path__)
              if not m.name.startswith("_")}
    assert public <= documented, f"comparisons modules missing: {sorted(public - documented)}"


MARKDOWN_PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


@pytest.mark.parametrize("page", MARKDOWN_PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_markdown_python_blocks_run(page):
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    namespace: dict = {}
    for block in blocks:                   # the blocks of one page share a namespace
        exec(compile(block, str(page), "exec"), namespace)
