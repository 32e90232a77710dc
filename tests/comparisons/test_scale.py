"""The scale benchmark on tiny sizes: the system it builds, one part in this process, and the
command line end to end (fresh subprocesses, CSV appended, resumed). No timing assertions."""

import numpy as np
import pytest

from comparisons.__main__ import main
from comparisons.scale_bench import (
    SCALE_COLUMNS,
    factor_nbytes,
    read_scale,
    run_part,
    scale_matrix,
    scale_table,
)
from comparisons.suite import make_graph


@pytest.mark.parametrize("family, size", [("path", 30), ("random_tree", 30), ("ladder", 30),
                                          ("nx-grid2d", 5)])
def test_scale_matrix_is_spd_on_the_family_graph(family, size):
    S, b, nodes = scale_matrix(family, size)
    G = make_graph(family, size)
    assert nodes == G.number_of_nodes() and S.shape == (6 * nodes, 6 * nodes) == (b.size,) * 2
    dense = S.toarray()
    assert np.array_equal(dense, dense.T)
    np.linalg.cholesky(dense)                      # positive definite
    blocks = np.abs(dense).reshape(nodes, 6, nodes, 6).sum(axis=(1, 3)) > 0
    expected = nx_adjacency(G) | np.eye(nodes, dtype=bool)
    assert np.array_equal(blocks, expected)
    assert np.array_equal(scale_matrix(family, size)[0].toarray(), dense)    # seeded


def nx_adjacency(G):
    import networkx as nx

    return nx.to_numpy_array(G, nodelist=range(G.number_of_nodes())) > 0


def test_run_part_in_process_reports_times_and_memory():
    import graphsolve as gs

    g = run_part("graphsolve", "path", 50, repeats=1)
    assert g["gs_residual"] < 1e-12 and g["ordering"] in gs.ORDERINGS
    assert g["matrix_bytes"] == (50 + 2 * 49) * 36 * 8
    assert g["factor_bytes"] >= g["matrix_bytes"] and g["gs_rss_used"] >= 0   # D, Dlu, L, U
    assert g["gs_rss_peak"] >= g["gs_rss_baseline"] >= g["gs_rss_imports"] > 0
    c = run_part("cholmod", "path", 50, repeats=1)
    assert c["cholmod_residual"] < 1e-12 and c["cholmod_factor_nnz"] > 0
    S, b, _ = scale_matrix("path", 20)
    F = gs.factorize(gs.BlockMatrix.from_scipy(S, 6))
    assert factor_nbytes(F) >= F._D.nbytes + F._L.nbytes + F._U.nbytes


def test_scale_command_quick_tiny(tmp_path, capsys):
    out = tmp_path / "scale.csv"
    assert main(["scale", "--quick", "--families", "path", "--sizes", "200", "--repeats", "1",
                 "--out", str(out)]) == 0
    rows = read_scale(out)
    assert len(rows) == 1 and tuple(rows[0]) == SCALE_COLUMNS
    r = rows[0]
    assert r["status"] == "ok", r["reason"]
    assert (r["family"], r["nodes"], r["N"], r["repeats"]) == ("path", "200", "1200", "1")
    for k in ("from_scipy_s", "gs_analyze_s", "gs_refactor_solve_s", "gs_one_shot_s",
              "cholmod_refactor_solve_s", "ratio_analyze", "ratio_refactor_solve",
              "ratio_one_shot", "gs_first_over_refactor", "gs_ns_per_node", "gs_rss_peak",
              "gs_rss_baseline", "cholmod_rss_peak", "matrix_bytes", "factor_bytes"):
        assert float(r[k]) > 0, k
    # a 200-node system's memory (0.2 MB) is below what the peak-RSS difference resolves: the
    # high-water mark may already have been reached while importing (then used = 0)
    assert float(r["gs_used_over_data"]) >= 0
    assert float(r["gs_residual"]) < 1e-12 and float(r["cholmod_residual"]) < 1e-12
    assert abs(float(r["ratio_refactor_solve"]) - float(r["gs_refactor_solve_s"])
               / float(r["cholmod_refactor_solve_s"])) < 1e-9
    assert out.with_suffix(".json").exists()
    assert out.with_suffix(".png").exists() or "no plot" in capsys.readouterr().out
    # resumed: path 200 is in the CSV already and not run again; path 30 is appended
    assert main(["scale", "--families", "path", "--sizes", "200", "30", "--repeats", "1",
                 "--out", str(out)]) == 0
    assert [(r["family"], r["size"], r["status"]) for r in read_scale(out)] == [
        ("path", "200", "ok"), ("path", "30", "ok")]
    capsys.readouterr()
    assert main(["scale-table", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| path 200 | 200 |" in table and "| path 30 | 30 |" in table


def test_scale_table_shows_failures():
    text = scale_table([{"family": "path", "size": "10", "nodes": "10", "status": "failed",
                         "reason": "graphsolve exit -9"}])
    assert "failed: graphsolve exit -9" in text


@pytest.mark.parametrize("family", ["nx-grid2d", "net", "crystal", "nx-grid3d"])
def test_warm_up_of_grids_takes_the_supernodal_kernel(family):
    """The warm-up matrix of grids and crystals is large enough that its first factorization
    runs the supernodal kernel, so a large case's first factorization excludes its compile."""
    import graphsolve as gs
    from comparisons.scale_bench import _warmup_size
    from graphsolve.kernels import compiled

    S, _, _ = scale_matrix(family, _warmup_size(family), seed=1)
    an = gs.analyze(gs.BlockMatrix.from_scipy(S, 6))
    assert compiled.use_supernodal(an, compiled.work_buffers(an), first=True)
