"""The public library type-checks: ``mypy graphsolve`` (configuration in pyproject.toml) finds no
error, every public function and method is annotated (parameters and return), and the package
ships its ``py.typed`` marker so that users' type checkers read our annotations."""

from __future__ import annotations

import functools
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The modules whose ``__all__`` is graphsolve's public API (the package, the modules it
#: exports, the submodules the API reference documents, and the modules that define them).
PUBLIC_MODULES = (
    "graphsolve",
    "graphsolve.analysis",
    "graphsolve.batch",
    "graphsolve.constraints",
    "graphsolve.dense",
    "graphsolve.distributed",
    "graphsolve.errors",
    "graphsolve.factor",
    "graphsolve.factor_queries",
    "graphsolve.generators",
    "graphsolve.graph",
    "graphsolve.lcp",
    "graphsolve.lowlevel",
    "graphsolve.matrix",
    "graphsolve.mechanisms",
    "graphsolve.ordering",
    "graphsolve.symbolic",
)

#: Public names with a parameter still unannotated (the test fails once they are annotated,
#: so that this list only shrinks). Empty: every public signature is annotated.
PENDING: dict[str, list[str]] = {}


def missing_annotations(fn, is_method: bool = False) -> list[str]:
    """What of ``fn``'s signature is unannotated: ``"parameter NAME"`` and ``"return"``
    (``self`` / ``cls`` of a method and the return of ``__init__`` need none)."""
    fn = getattr(fn, "py_func", fn)                 # a numba dispatcher: its Python function
    annotations = getattr(fn, "__annotations__", {})
    params = list(inspect.signature(fn).parameters.values())
    if is_method and params and params[0].name in ("self", "cls"):
        params = params[1:]
    out = [f"parameter {p.name}" for p in params if p.name not in annotations]
    if "return" not in annotations and fn.__name__ != "__init__":
        out.append("return")
    return out


def _members(cls) -> list[tuple[str, object, bool]]:
    """``(name, function, is_method)`` of the public methods, properties and constructors a
    class defines itself."""
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_") and name != "__init__":
            continue
        if isinstance(value, (staticmethod, classmethod)):
            out.append((name, value.__func__, isinstance(value, classmethod)))
        elif isinstance(value, property):
            out.append((name, value.fget, True))
        elif isinstance(value, functools.cached_property):
            out.append((name, value.func, True))
        elif inspect.isfunction(value):
            out.append((name, value, True))
    return out


def public_signatures() -> dict[str, list[str]]:
    """``{qualified name: missing annotations}`` of every function and method reachable from
    a public module's ``__all__``, each keyed by where it is defined. Compiled kernels of
    ``graphsolve.kernels`` (internal, re-exported by ``graphsolve.lowlevel`` for numba callers;
    their docstrings state the signatures) are left out."""
    found: dict[str, list[str]] = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not getattr(obj, "__module__", "").startswith(
                    "graphsolve") or obj.__module__.startswith("graphsolve.kernels"):
                continue
            if inspect.isclass(obj):
                for member, fn, is_method in _members(obj):
                    key = f"{obj.__module__}.{obj.__qualname__}.{member}"
                    found[key] = missing_annotations(fn, is_method)
            elif callable(obj):
                fn = getattr(obj, "py_func", obj)
                found[f"{fn.__module__}.{fn.__qualname__}"] = missing_annotations(fn)
    return found


def test_graphsolve_ships_py_typed():
    assert (ROOT / "graphsolve" / "py.typed").is_file()
    assert "py.typed" in (ROOT / "pyproject.toml").read_text()


def test_every_public_signature_is_annotated():
    found = public_signatures()
    assert len(found) > 120                            # the walk reaches the API
    assert "graphsolve.analysis.analyze" in found and "graphsolve.symbolic.dfs_orders" in found
    assert "graphsolve.factor.Factorization.solve" in found
    bad = [f"{name}: {', '.join(missing)}" for name, missing in sorted(found.items())
           if missing and PENDING.get(name) != missing]
    assert not bad, "unannotated public signatures:\n" + "\n".join(bad)
    annotated_now = [name for name in PENDING if not found.get(name)]
    assert not annotated_now, f"annotated now, drop from PENDING: {annotated_now}"


def test_the_signature_check_names_what_is_missing():
    def half(a: int, b, *rest, key=None) -> int:
        return a

    class C:
        def method(self, x: int):
            return x

        @property
        def prop(self):
            return 1

    assert missing_annotations(half) == ["parameter b", "parameter rest", "parameter key"]
    assert missing_annotations(C.method, True) == ["return"]
    assert missing_annotations(C.prop.fget, True) == ["return"]
    assert [m[0] for m in _members(C)] == ["method", "prop"]


def test_mypy_requires_annotations_in_every_public_module():
    """pyproject's mypy override makes unannotated functions errors in every public module
    (all functions, private ones included)."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    strict = set()
    for override in config.get("overrides", []):
        if override.get("disallow_untyped_defs") and override.get("disallow_incomplete_defs"):
            modules = override["module"]
            strict |= {modules} if isinstance(modules, str) else set(modules)
    assert strict == set(PUBLIC_MODULES)


def test_mypy_finds_no_error_in_graphsolve():
    pytest.importorskip("mypy")
    run = subprocess.run([sys.executable, "-m", "mypy", "graphsolve"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
