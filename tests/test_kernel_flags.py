"""Flags of the compiled kernels of graphsolve and dynamics.

No kernel uses a fastmath flag that changes rounding:

numba links a copy of every callee into each caller's LLVM module and optimizes each copy
again; with ``reassoc`` / ``contract`` / ``arcp`` / ``afn`` the copies may round differently,
and which copy a call binds to depended on whether numba compiled the kernels in the running
process or loaded them from its on-disk cache: ``Simulation(sphere_chain(100), dt=0.01)``
gave trajectories 7e-4 m apart in a first and a second process (CHANGELOG, 2026-11-26). This
test walks every numba dispatcher the packages define (module attributes and the tables of
specialized entry points) and checks its flags. (The hand-written IR of
:mod:`graphsolve.kernels.simd` has no flags: its multiply-subtracts are ``llvm.fmuladd``.)

The hot kernels (the factor and solve, the dynamics step, Newton and interior-point loops) are
compiled without numba's reference counting (``_nrt=False``): with it, every array argument,
tuple member and slice costs an atomic increment and decrement, which was two thirds of the
compiled time of a pendulum step. Such a kernel is safe as long as it allocates nothing (numba
refuses to compile an allocation then) and hands no array to code that counts references:
here no kernel compiled without reference counting returns an array, and every compiled
function such a kernel calls says whether it counts references (numba otherwise compiles it
like its first caller, so its flags would depend on the order of calls).
"""
import ast
import importlib
import inspect
import pkgutil
import textwrap
import warnings

import numpy as np
import pytest
from numba import types
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


#: Kernels that must run without reference counting (the step and factor loops).
HOT = (("graphsolve.kernels.fused", "refactor_solve"),
       ("graphsolve.kernels.fused", "solve_factored"),
       ("graphsolve.kernels.factor_kernels", "_factor_pair"),
       ("graphsolve.kernels.factor_kernels", "_factor_generic"),
       ("graphsolve.kernels.specializations", "_factor_6_5"),
       ("graphsolve.kernels.tree6", "_factor_tree6"),
       ("dynamics.maximal.newton_kernels", "newton_kernel"),
       ("dynamics.maximal.newton_kernels", "step_kernel"),
       ("dynamics.maximal.force_kernels", "forced_step_kernel"),
       ("dynamics.maximal.interior_point_kernels", "contact_step_kernel"),
       ("dynamics.maximal.interior_point_kernels", "plain_first"),
       ("dynamics.maximal.run_kernels", "joint_run_kernel"),
       ("dynamics.maximal.run_kernels", "contact_run_kernel"))


def _without_refcount(dispatcher):
    return dispatcher.targetoptions.get("_nrt", True) is False


def _lean():
    return [(m, n, d) for m, n, d in _dispatchers() if _without_refcount(d)]


def test_the_hot_kernels_run_without_reference_counting():
    lean = {(m, n) for m, n, _ in _lean()}
    missing = [k for k in HOT if k not in lean]
    assert not missing, f"compiled with reference counting: {missing}"


def _holds_array(ty):
    if isinstance(ty, types.Array):
        return True
    if isinstance(ty, types.BaseTuple):
        return any(_holds_array(t) for t in ty.types)
    return False


def _source(dispatcher):
    return ast.parse(textwrap.dedent(inspect.getsource(dispatcher.py_func)))


def _may_be_array(node):
    """Whether a returned expression may be a view: a subscript with one index (a row or a
    slice: ``x[a]``, ``s[i:j]``), or a tuple holding one. (Returned names are the kernels'
    counters and flags; the runtime check below types the entry points.)"""
    if isinstance(node, ast.Tuple):
        return any(_may_be_array(e) for e in node.elts)
    if isinstance(node, ast.Subscript):
        return not isinstance(node.slice, ast.Tuple)
    return False


def test_no_kernel_without_reference_counting_returns_an_array():
    found = []
    for module, name, d in _lean():
        for node in ast.walk(_source(d)):
            if isinstance(node, ast.Return) and node.value is not None and _may_be_array(
                    node.value):
                found.append(f"{module}.{name}: return {ast.unparse(node.value)}")
    assert not found, "\n".join(found)


def test_the_array_check_sees_a_view():
    tree = ast.parse("def f(x, a):\n    return x[a], x[a, 2]\n").body[0]
    ret = tree.body[0].value
    assert _may_be_array(ret.elts[0]) and not _may_be_array(ret.elts[1])


@pytest.fixture(scope="module")
def compiled_kernels():
    """Run the kernels once (a pendulum with and without a damper, a sphere on the ground
    with friction, a pendulum against a stop, graphsolve's factor kinds) so that the entry
    points' signatures, return types included, exist in this process."""
    from dataclasses import replace

    import graphsolve as gs
    from dynamics import models
    from dynamics.maximal import Simulation
    from graphsolve import generators

    for spec in (models.pendulum(2), models.pendulum(2, damper=0.3), models.sphere_chain(1)):
        Simulation(spec, dt=0.01).run(3, progress=False)
    spec = models.pendulum(1)
    joints = tuple(replace(j, lower=[-0.5], upper=[0.9]) for j in spec.joints)
    Simulation(replace(spec, joints=joints), dt=0.01).run(30, progress=False)
    for G in (generators.random_tree(30, seed=1), generators.ladder(20), generators.net(6)):
        for kind in ("spd", "unsymmetric"):  # (KKT pairs: the dynamics above)
            A = gs.random_block_matrix(G, kind=kind, seed=2)
            gs.solve(A, np.ones(A.shape[0]))


def test_compiled_entry_points_without_reference_counting_return_no_array(compiled_kernels):
    """The typed return of every compiled signature in this process (the entry points: a
    kernel that numba loads from its cache brings no signatures of its callees)."""
    checked = set()
    for module, name, d in _lean():
        for sig, cres in d.overloads.items():
            checked.add(name)
            assert not _holds_array(cres.signature.return_type), (
                f"{module}.{name}{sig} returns {cres.signature.return_type}")
    assert {"joint_run_kernel", "contact_run_kernel"} <= checked


def _callees(dispatcher):
    """The compiled functions the Python source of ``dispatcher`` calls by name (``f(...)``
    or ``module.f(...)``), resolved in its globals."""
    fn = dispatcher.py_func
    tree = _source(dispatcher)
    scope = {**fn.__globals__}
    if fn.__closure__:
        scope.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__),
                         strict=True))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target = None
        if isinstance(node.func, ast.Name):
            target = scope.get(node.func.id)
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            target = getattr(scope.get(node.func.value.id), node.func.attr, None)
        if isinstance(target, CPUDispatcher):
            yield target


def test_callees_of_kernels_without_reference_counting_declare_it():
    undeclared = set()
    for module, name, d in _lean():
        for callee in _callees(d):
            if callee.targetoptions.get("inline", "never") == "always":
                continue        # compiled into the caller, with the caller's flags
            if "_nrt" not in callee.targetoptions:
                undeclared.add(f"{module}.{name} -> {callee.py_func.__module__}."
                               f"{callee.py_func.__name__}")
    assert not undeclared, "\n".join(sorted(undeclared))
