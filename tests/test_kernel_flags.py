"""No compiled kernel of graphsolve or dynamics uses a fastmath flag that changes rounding.

numba links a copy of every callee into each caller's LLVM module and optimizes each copy
again; with ``reassoc`` / ``contract`` / ``arcp`` / ``afn`` the copies may round differently,
and which copy a call binds to depended on whether numba compiled the kernels in the running
process or loaded them from its on-disk cache: ``Simulation(sphere_chain(100), dt=0.01)``
gave trajectories 7e-4 m apart in a first and a second process (CHANGELOG, 2026-11-26). This
test walks every numba dispatcher the packages define (module attributes and the tables of
specialized entry points) and checks its flags. (The hand-written IR of
:mod:`graphsolve.kernels.simd` has no flags: its multiply-subtracts are ``llvm.fmuladd``.)
"""
import importlib
import pkgutil
import warnings

import pytest
from numba.core.registry import CPUDispatcher

import dynamics
import graphsolve

#: Flags that let LLVM change a result's rounding (nsz, nnan, ninf only change what the
#: compiler may assume about signs, NaN and inf).
ROUNDING_FLAGS = {"fast", "reassoc", "contract", "arcp", "afn"}
#: ``_poison`` sums ``v * 0``: 0 or NaN in any order, so reassociation cannot change it.
ALLOWED = {("graphsolve.kernels.factor_kernels", "_poison")}


def _modules(package):
    yield package
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        with warnings.catch_warnings():             # deprecated aliases of renamed modules
            warnings.simplefilter("ignore", DeprecationWarning)
            yield importlib.import_module(info.name)


def _dispatchers():
    seen = set()
    for package in (graphsolve, dynamics):
        for module in _modules(package):
            for value in vars(module).values():
                candidates = [value]
                if isinstance(value, dict):
                    candidates = list(value.values())
                for d in candidates:
                    if isinstance(d, CPUDispatcher) and id(d) not in seen:
                        seen.add(id(d))
                        yield d.py_func.__module__, d.py_func.__name__, d


def _flags(dispatcher):
    fm = dispatcher.targetoptions.get("fastmath", False)
    if fm is True:
        return {"fast"}
    return set(fm or ())


def test_the_walk_finds_the_kernels():
    found = {(m, n) for m, n, _ in _dispatchers()}
    # one of each kind: a plain kernel, a factory closure, a table entry, a dynamics kernel
    for expected in (("graphsolve.kernels.blocks", "_lu_inplace"),
                     ("graphsolve.kernels.factor_kernels", "_factor_generic"),
                     ("graphsolve.kernels.specializations", "_factor_6_0"),
                     ("dynamics.maximal.newton_kernels", "newton_kernel")):
        assert expected in found, expected


@pytest.mark.parametrize("module,name,dispatcher",
                         [pytest.param(m, n, d, id=f"{m}.{n}") for m, n, d in _dispatchers()])
def test_no_kernel_uses_rounding_fastmath_flags(module, name, dispatcher):
    bad = _flags(dispatcher) & ROUNDING_FLAGS
    if (module, name) in ALLOWED:
        assert bad <= {"reassoc"}
    else:
        assert not bad, f"{module}.{name} is compiled with fastmath {sorted(bad)}"
