"""The asv benchmarks (``benchmarks/``, ``make bench``) still run: every benchmark class's
``setup`` and each ``time_*`` / ``peakmem_*`` method once, at its first parameter values and
tiny sizes, untimed, so that an API change breaks this test and not only the next asv run."""

from __future__ import annotations

import importlib
import inspect
import itertools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("bench_graphsolve", "bench_batch", "bench_dynamics")
PREFIXES = ("time_", "peakmem_", "mem_", "track_")


def _module(name: str):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"benchmarks.{name}")


def _tiny(monkeypatch, mod) -> None:
    """Shrink each module's sizes (its constants, not its parameter lists)."""
    if mod.__name__.endswith("bench_graphsolve"):
        tiny = {"path": 8, "random_tree": 8, "ladder": 8, "net": 3, "crystal": 2,
                "nx_grid2d_relabelled": 3}
        monkeypatch.setattr(mod, "SIZES", {f: {"small": n, "large": n + 1}
                                           for f, n in tiny.items()})
    elif mod.__name__.endswith("bench_batch"):
        monkeypatch.setattr(mod, "BATCH", 3)
        monkeypatch.setattr(mod, "LADDER_NODES", 6)
    elif mod.__name__.endswith("bench_dynamics"):
        monkeypatch.setattr(mod, "RUN_STEPS", 2)
        monkeypatch.setattr(mod, "WARMUP_STEPS", 1)


def _cases():
    for name in MODULES:
        mod = _module(name)
        for cls_name, cls in vars(mod).items():
            if (inspect.isclass(cls) and cls.__module__ == mod.__name__
                    and not cls_name.startswith("_")
                    and any(m.startswith(PREFIXES) for m in dir(cls))):
                yield pytest.param(name, cls_name, id=f"{name}.{cls_name}")


def test_every_module_has_benchmarks():
    found = {name for name, _ in (p.values for p in _cases())}
    assert found == set(MODULES)


def test_sizes_cover_every_family():
    mod = _module("bench_graphsolve")
    assert set(mod.SIZES) == set(mod.GENERATORS) == set(mod.SPD.params[0])
    assert set(mod.Unsymmetric.params[0]) <= set(mod.SIZES)


@pytest.mark.parametrize(("module", "cls_name"), list(_cases()))
def test_benchmark_class_runs_once(monkeypatch, module, cls_name):
    mod = _module(module)
    _tiny(monkeypatch, mod)
    cls = getattr(mod, cls_name)
    params = getattr(cls, "params", ())
    if params and not isinstance(params[0], (list, tuple)):
        params = (params,)                        # asv's single-parameter shorthand
    methods = sorted(m for m in dir(cls) if m.startswith(PREFIXES))
    assert methods
    # the first value of each parameter, and for the graph families every family (tiny sizes)
    first = [p[:1] for p in params]
    if params and module == "bench_graphsolve":
        first[0] = list(params[0])
    for args in itertools.product(*first) if params else [()]:
        bench = cls()
        if hasattr(bench, "setup"):
            bench.setup(*args)
        for m in methods:
            getattr(bench, m)(*args)
        if hasattr(bench, "teardown"):
            bench.teardown(*args)
