"""A tiny suite end to end: every solver runs (or is skipped with a reason), residuals are
small on the well-conditioned corrected benchmark, CSV + JSON + plots are written. No timing
assertions: speed is claimed only from real benchmark runs."""

import json

import numpy as np
import pytest

from comparisons.__main__ import main
from comparisons.plot import read_results
from comparisons.runner import run
from comparisons.solvers import SOLVERS, make_solvers
from comparisons.suite import (
    FAMILIES,
    SUITES,
    large_side_cases,
    make_case,
    make_graph,
    make_paper_case,
    node_count,
)

TINY = dict(families=["path", "ladder"], sizes=[8], repeats=1, progress=False)


def test_tiny_default_suite_all_solvers():
    rows = run(SUITES["default"], solvers=sorted(SOLVERS), **TINY)
    assert len(rows) == 2 * 3 * len(SOLVERS)
    by = {(r["family"], r["kind"], r["solver"]): r for r in rows}
    for r in rows:
        assert r["status"] in ("ok", "skipped"), r
        if r["status"] == "ok":
            assert r["residual"] < 1e-10, r
            assert r["refactor_solve_s"] > 0
        else:
            assert r["reason"]
    # peers that exist here must run; CI installs CHOLMOD and QDLDL
    assert by[("path", "spd", "cholmod")]["status"] == "ok"
    assert by[("path", "kkt", "qdldl")]["status"] == "ok"
    assert by[("path", "unsymmetric", "cholmod")]["status"] == "skipped"
    for kind in ("spd", "unsymmetric", "kkt"):
        assert by[("ladder", kind, "graphsolve-brudigam-compiled")]["status"] == "ok"
        assert by[("ladder", kind, "superlu-colamd")]["status"] == "ok"


def test_all_peers_solve_the_same_system():
    case = make_case("net", 3, "spd")
    xs = {}
    for s in make_solvers(["graphsolve-brudigam-compiled", "cholmod", "qdldl",
                           "superlu-natural", "dense-lapack-lu", "dense-block-ldu"]):
        s.analyze(case)
        s.factor(case)
        s.refactor(case)
        xs[s.name] = s.solve(case.b)
    ref = np.linalg.solve(case.A.to_dense(), case.b)
    for name, x in xs.items():
        assert np.allclose(x, ref, rtol=1e-9, atol=1e-12), name


def test_paper_case_uses_original_order_without_new_fill():
    case = make_paper_case("ladder", 4)
    (s,) = make_solvers(["graphsolve-brudigam-compiled"])
    s.analyze(case)
    assert s.an.n_fill == 0            # the fill blocks are already in the paper matrix
    s.factor(case)
    x = s.solve(case.b)
    assert np.allclose(case.S @ x, case.b)


def test_unknown_solver_and_family_raise():
    with pytest.raises(ValueError, match="unknown solver"):
        make_solvers(["nope"])
    with pytest.raises(ValueError, match="unknown family"):
        make_case("moebius", 3, "spd")


def test_command_line_run_and_plot(tmp_path):
    out = tmp_path / "tiny.csv"
    assert main(["run", "--suite", "default", "--families", "path", "--sizes", "6",
                 "--kinds", "spd", "--solvers", "graphsolve-brudigam-compiled", "cholmod",
                 "--repeats", "1", "--out", str(out)]) == 0
    rows = read_results(out)
    assert [r["solver"] for r in rows] == ["graphsolve-brudigam-compiled", "cholmod"]
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["blas_threads"] == 1 and "numpy" in meta["packages"]
    assert main(["plot", str(out), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "tiny_path_spd.png").exists()
    assert "graphsolve" in (tmp_path / "tiny_tables.md").read_text()
    assert main(["list"]) == 0


def test_batch_benchmark_tiny():
    from comparisons.batch_bench import run_batch

    rows = run_batch(cases=(("path", 5, 4),), repeats=1, progress=False)
    assert rows and all(r["max_diff"] < 1e-12 and r["speedup"] > 0 for r in rows)
    assert all(r["pool_s"] > 0 and r["python_threads"] >= 1 for r in rows)


def test_cases_left_out_by_a_suite_are_reported_with_their_reason():
    from comparisons.suite import SUITES

    suite = SUITES["default"]
    run = set(suite.cases())
    skipped = suite.skipped()
    keys = {(s["family"], s["size"], s["kind"]) for s in skipped}
    assert ("crystal", 3, "kkt") in keys and not keys & run
    everything = {(f, n, k) for f, sizes in suite.sizes.items() for n in sizes
                  for k in suite.kinds}
    assert keys | run == everything                      # nothing disappears silently
    assert all("singular" in s["reason"] for s in skipped if s["family"] == "crystal")
    assert suite.skipped(families=["path"]) == []


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_node_count_matches_the_graph_without_building_it(family):
    for size in (3, 4, 7):
        assert node_count(family, size) == make_graph(family, size).number_of_nodes()
    with pytest.raises(ValueError, match="unknown family"):
        node_count("mesh", 3)


def test_sizes_meant_as_node_counts_are_flagged_for_side_families():
    """``run --sizes 2000`` on every family: a 2000×2000 net and a 2000³ crystal are named
    (the CLI prints them as warnings), the node-count families are not."""
    big = large_side_cases(["path", "net", "crystal", "nx-grid2d"], [30, 2000])
    assert big == [("net", 2000, 4_000_000), ("crystal", 2000, 8_000_000_000),
                   ("nx-grid2d", 2000, 4_000_000)]
    assert large_side_cases(["path", "ladder", "nx-tree"], [10**6]) == []
