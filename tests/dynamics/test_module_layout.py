"""The layout of the dynamics package: imports go one way (no cycle among the modules of
``dynamics``, counting imports inside functions too, but not those under ``if TYPE_CHECKING:``,
which never run), and the renamed modules still import from their old paths with a
``DeprecationWarning`` (issue 26 item 4)."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dynamics"

#: old module -> (new module, names that must be the same objects in both)
RENAMED = {
    "dynamics.minimal.compiled": ("dynamics.minimal.tree_kernels",
                                  ["aba", "rnea", "supports", "flat_model", "FlatModel",
                                   "simulate_variational_compiled", "del_jacobian"]),
    "dynamics.maximal.integrator": ("dynamics.maximal.step_system",
                                    ["StepSystem", "NewtonError", "quaternion_update",
                                     "omega_scalar"]),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skip |= {id(n) for n in ast.walk(child)}
    return skip


def _imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``dynamics`` that module ``name`` imports anywhere in its body."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            # ``from package import submodule`` imports the submodule; other names come from
            # ``base`` itself
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:      # a name inside a module
                target = target.rpartition(".")[0]
            # a relative import also runs the parents' __init__, which import their children:
            # only an explicit import of a package counts as an edge to it
            if target and target != name:
                out.add(target)
    return out


def import_graph() -> nx.DiGraph:
    modules = _modules()
    G = nx.DiGraph()
    G.add_nodes_from(modules)
    for name, path in modules.items():
        for target in _imported_modules(name, path, modules):
            G.add_edge(name, target)
    return G


def test_the_import_graph_sees_the_known_edges():
    G = import_graph()
    assert G.has_edge("dynamics.minimal.variational", "dynamics.minimal.results")
    assert G.has_edge("dynamics.minimal.integrators", "dynamics.minimal.tree_kernels")  # lazy
    assert G.has_edge("dynamics.minimal.tree_kernels", "dynamics.minimal.spatial")
    assert G.has_edge("dynamics.maximal.simulation", "dynamics.maximal.step_system")
    assert G.has_edge("dynamics.minimal.model", "dynamics.minimal.algorithms")    # lazy
    # under ``if TYPE_CHECKING:`` only
    assert not G.has_edge("dynamics.minimal.algorithms", "dynamics.minimal.model")


@pytest.mark.parametrize("package", ["dynamics.minimal", "dynamics.maximal", "dynamics"])
def test_no_import_cycle(package):
    """No cycle among the children of ``package`` (for ``dynamics``: its modules and
    subpackages, each subpackage one node). A package's ``__init__`` re-exports its children,
    so none of them may import it."""
    G = import_graph()
    depth = package.count(".") + 1

    def child(m):
        return ".".join(m.split(".")[:depth + 1]) if m.startswith(package + ".") else None

    H = nx.DiGraph()
    for a, b in G.edges:
        ca, cb = child(a), child(b)
        if ca is not None:
            assert b != package, f"{a} imports its own package {package}"
            if cb is not None and ca != cb:
                H.add_edge(ca, cb)
    cycles = list(nx.simple_cycles(H))
    assert not cycles, f"import cycles among the modules of {package}: {cycles}"


def test_dynamics_imports_only_graphsolve_and_itself():
    """graphsolve ← dynamics ← comparisons ← paper_figures: dynamics never imports the last two."""
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            bad += [f"{path.relative_to(ROOT)}: {n}" for n in names
                    if n and n.split(".")[0] in ("comparisons", "paper_figures")]
    assert not bad, bad


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_renamed_modules_import_from_their_old_path_with_a_warning(old):
    new, names = RENAMED[old]
    new_module = importlib.import_module(new)
    sys.modules.pop(old, None)                   # run the shim again if another test loaded it
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    for name in names:
        assert getattr(module, name) is getattr(new_module, name), name
    assert set(new_module.__all__) <= set(dir(module))


def test_minimal_import_does_not_load_numba_or_the_shims():
    """``import dynamics.minimal`` loads neither numba (the compiled kernels are imported on first
    use) nor a deprecated module."""
    import subprocess
    code = ("import sys, warnings; warnings.simplefilter('error', DeprecationWarning); "
            "import dynamics.minimal, dynamics.maximal, dynamics.rollouts; "
            "print('dynamics.minimal.compiled' in sys.modules, "
            "'dynamics.maximal.integrator' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split() == ["False", "False"]
