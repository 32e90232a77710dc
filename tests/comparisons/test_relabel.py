"""Random node numberings of a case (``run --relabel K``) and the networkx-native families.
No timing assertions."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.linalg as spla

from comparisons.__main__ import main
from comparisons.plot import labelling_table, read_results
from comparisons.runner import run
from comparisons.solvers import SOLVERS
from comparisons.suite import (
    FAMILIES,
    SUITES,
    make_case,
    make_graph,
    make_paper_case,
    relabel_case,
    relabelled_cases,
    relabelling_seed,
    scalar_permutation,
)


@pytest.mark.parametrize("family, size", [("path", 12), ("ladder", 10), ("net", 4),
                                          ("nx-tree", 15), ("nx-grid2d", 4)])
@pytest.mark.parametrize("kind", ["spd", "unsymmetric", "kkt"])
def test_relabelled_case_has_the_permuted_solution(family, size, kind):
    case = make_case(family, size, kind)
    new = relabel_case(case, seed=5, labelling="random-x")
    assert new.labelling == "random-x" and case.labelling == "native"
    assert sorted(new.perm) == list(range(case.nodes))
    assert not np.array_equal(new.perm, np.arange(case.nodes))
    idx = scalar_permutation(case.A.block_sizes, new.perm)
    x = spla.spsolve(case.S, case.b)
    y = spla.spsolve(new.S, new.b)
    assert np.allclose(y, x[idx], rtol=1e-10, atol=1e-12)
    assert np.allclose(new.S.toarray(), case.S.toarray()[np.ix_(idx, idx)])
    assert np.array_equal(new.A.to_scipy().toarray(), new.S.toarray())


def test_relabelled_kkt_case_keeps_block_sizes_and_roles():
    case = make_case("ladder", 8, "kkt")
    new = relabel_case(case, seed=1)
    perm = new.perm
    old, G = case.A.graph, new.A.graph
    assert sorted(G.nodes) == list(range(case.nodes))
    assert np.array_equal(new.A.block_sizes[perm], case.A.block_sizes)
    for i in range(case.nodes):
        assert G.nodes[perm[i]]["role"] == old.nodes[i]["role"]
        assert G.nodes[perm[i]]["size"] == old.nodes[i]["size"]
        if "bodies" in old.nodes[i]:
            assert G.nodes[perm[i]]["bodies"] == tuple(sorted(perm[list(old.nodes[i]["bodies"])]))
    assert {tuple(sorted((perm[u], perm[v]))) for u, v in old.edges} == \
        {tuple(sorted(e)) for e in G.edges}
    assert sorted(G.graph["zero_diagonal"]) == sorted(perm[list(old.graph["zero_diagonal"])])


def test_relabellings_are_reproducible_and_skip_pinned_orderings():
    case = make_case("random_tree", 30, "spd")
    a, b = relabelled_cases(case, 2), relabelled_cases(case, 2)
    assert [c.labelling for c in a] == ["random-0", "random-1"]
    assert all(np.array_equal(x.perm, y.perm) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0].perm, a[1].perm)
    assert relabelling_seed("path", 100, 0) == relabelling_seed("path", 100, 0)
    assert len({relabelling_seed(f, s, r) for f in ("path", "ladder") for s in (100, 200)
                for r in range(3)}) == 12
    paper = make_paper_case("ladder", 3)
    assert relabelled_cases(paper, 3) == []
    with pytest.raises(ValueError, match="pins orderings"):
        relabel_case(paper, 0)


@pytest.mark.parametrize("family, size, nodes", [("nx-ladder", 20, 20), ("nx-ladder", 7, 8),
                                                 ("nx-grid2d", 5, 25), ("nx-grid3d", 3, 27),
                                                 ("nx-tree", 40, 40)])
def test_nx_families_are_connected_integer_graphs_of_their_size(family, size, nodes):
    G = make_graph(family, size)
    assert G.number_of_nodes() == nodes
    assert set(G.nodes) == set(range(nodes)) and nx.is_connected(G)
    if family == "nx-tree":
        assert nx.is_tree(G)
    ours = {"nx-ladder": "ladder", "nx-grid2d": "net", "nx-grid3d": "crystal"}.get(family)
    if ours:                                       # same graph as ours, up to numbering
        assert nx.is_isomorphic(G, make_graph(ours, size))


def test_suites_time_auto_first_and_paper_keeps_brudigam():
    for name in ("default", "full"):
        s = SUITES[name]
        gs_solvers = [x for x in s.solvers if x.startswith("graphsolve")]
        if "graphsolve-auto-compiled" in SOLVERS:
            assert gs_solvers[0] == "graphsolve-auto-compiled"
        assert "graphsolve-brudigam-compiled" in gs_solvers
        assert set(FAMILIES) <= set(s.sizes)
        assert all(x in SOLVERS for x in s.solvers)
    assert "graphsolve-auto-compiled" not in SUITES["paper"].solvers
    assert "graphsolve-brudigam-compiled" in SUITES["paper"].solvers
    kinds = {k for f, _, k in SUITES["default"].cases(families=["nx-tree"])}
    assert kinds == {"spd"}


def test_run_writes_labelling_rows():
    solvers = ["graphsolve-brudigam-compiled", "cholmod"]
    rows = run(SUITES["default"], families=["path"], sizes=[6], kinds=["spd"],
               solvers=solvers, repeats=1, progress=False, warmup_s=0, relabel=2)
    assert [(r["labelling"], r["solver"]) for r in rows] == [
        (lab, s) for lab in ("native", "random-0", "random-1") for s in solvers]
    assert all(r["status"] == "ok" and r["residual"] < 1e-10 for r in rows)
    paper = run(SUITES["paper"], families=["ladder"], sizes=[2],
                solvers=["graphsolve-brudigam-compiled"], repeats=1, progress=False,
                warmup_s=0, relabel=2)
    assert [r["labelling"] for r in paper] == ["native"]


def test_command_line_relabel_and_labelling_table(tmp_path):
    out = tmp_path / "rel.csv"
    assert main(["run", "--suite", "default", "--families", "nx-ladder", "--sizes", "8",
                 "--kinds", "spd", "--solvers", "graphsolve-brudigam-compiled", "cholmod",
                 "--repeats", "1", "--relabel", "1", "--out", str(out)]) == 0
    rows = read_results(out)
    assert [r["labelling"] for r in rows] == ["native", "native", "random-0", "random-0"]
    assert main(["plot", str(out), "--out", str(tmp_path)]) == 0
    tables = (tmp_path / "rel_tables.md").read_text()
    assert "Native vs random node numbering" in tables
    section = tables.split("Native vs random node numbering")[1]
    line = next(ln for ln in section.splitlines() if ln.startswith("| nx-ladder | spd | 8 |"))
    assert line.count("|") == 9 and line.rstrip(" |").endswith("1")


def test_labelling_table_takes_the_worst_random_labelling():
    def row(lab, solver, t):
        return {"family": "path", "kind": "spd", "size": "10", "nodes": "10", "labelling": lab,
                "solver": solver, "status": "ok", "refactor_solve_s": str(t)}

    rows = [row("native", "g", 1), row("native", "cholmod", 4),
            row("random-0", "g", 2), row("random-0", "cholmod", 4),
            row("random-1", "g", 3), row("random-1", "cholmod", 4),
            row("random-2", "g", 1), row("random-2", "cholmod", 4)]
    last = labelling_table(rows, solver="g").splitlines()[-1]
    assert last == "| path | spd | 10 | 10 | 0.25 | 0.75 | 0.50 | 3 |"
