"""dynamics, comparisons and paper_figures use graphsolve only through its public API: the
names of ``graphsolve.__all__``, its public modules, and no private attribute of its objects.
What our own packages need, an outside user can do too (issue: graphsolve as a dependency)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import graphsolve as gs

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("dynamics", "comparisons", "paper_figures")
#: Modules of graphsolve whose public names are part of the API (the rest are internals).
PUBLIC_MODULES = {"graphsolve", "graphsolve.lowlevel", "graphsolve.generators",
                  "graphsolve.dense", "graphsolve.mechanisms", "graphsolve.factor_queries",
                  "graphsolve.errors", "graphsolve.distributed"}


def _outside_sources():
    for pkg in OUTSIDE:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            yield path, ast.parse(path.read_text(), filename=str(path))


def _private_members() -> set[str]:
    """Underscore names defined on graphsolve's public classes (not dunders)."""
    names = set()
    for obj in vars(gs).values():
        if inspect.isclass(obj) and obj.__module__.startswith("graphsolve"):
            names |= {n for n in dir(obj) if n.startswith("_") and not n.startswith("__")}
    return names


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, []


def _defined_here(tree) -> set[str]:
    """Underscore names a module defines itself (its own functions, classes, attributes)."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
    return own


def test_outside_packages_import_only_public_graphsolve_names():
    bad = []
    for path, tree in _outside_sources():
        for line, module, names in _imports(tree):
            if module != "graphsolve" and not module.startswith("graphsolve."):
                continue
            where = f"{path.relative_to(ROOT)}:{line}"
            if module not in PUBLIC_MODULES:
                bad.append(f"{where} imports the internal module {module}")
                continue
            for name in names:
                mod = __import__(module, fromlist=["_"])
                public = getattr(mod, "__all__", None)
                if name.startswith("_") or (public is not None and name not in public
                                             and not inspect.ismodule(getattr(mod, name, None))):
                    bad.append(f"{where} imports {module}.{name}, not in its __all__")
    assert not bad, "\n".join(bad)


def test_outside_packages_use_no_private_member_of_graphsolve_objects():
    private = _private_members()
    assert "_entry_coordinates" in private          # the check sees BlockMatrix's internals
    bad = []
    for path, tree in _outside_sources():
        own = _defined_here(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr in private
                    and node.attr not in own):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} uses .{node.attr}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", sorted(PUBLIC_MODULES))
def test_public_modules_declare_their_names(module):
    mod = __import__(module, fromlist=["_"])
    assert mod.__all__, module
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.__all__ lists missing {name}"
