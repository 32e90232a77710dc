"""Tests for graphsolve.analysis: the Analysis object (summary, block and flop counts,
immutability, the matrix and graph paths of analyze) and the old import paths of
graphsolve.ordering. The orderings themselves and the fill they predict are tested in
test_ordering.py, against the same oracles (symbolic_oracles.py)."""

from __future__ import annotations

import dataclasses
import pickle

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphsolve as gs
from graphsolve import generators as gen
from tests.graphsolve.symbolic_oracles import sorted_copy, symbolic_elimination

FAST = settings(max_examples=25, deadline=None)
NAMED = tuple(o for o in gs.ORDERINGS if o != "auto")     # the summary's columns
DFS_ORDERINGS = ("brudigam", "dfs")


# ---------------------------------------------------------------------------------------------
# (1) summary
# ---------------------------------------------------------------------------------------------


def parse_summary(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        name, values = line[:14].strip(), line[14:].split()
        rows[name] = values
    return rows


@pytest.mark.parametrize(
    "make",
    [lambda: gen.ladder(8), lambda: gen.net(4), lambda: gen.random_graph(15, 5, seed=1),
     lambda: gen.constraint_graph(gen.ladder(6))],
    ids=["ladder8", "net4", "random", "kkt_ladder"],
)
@pytest.mark.parametrize("first", NAMED)
def test_summary_compares_orderings(make, first):
    G = make()
    an = gs.analyze(G, first)
    text = an.summary()
    for name in NAMED:
        assert name in text
    rows = parse_summary(text)
    names = rows["ordering"]
    assert sorted(names) == sorted(NAMED)
    assert names[0] == first
    fills = dict(zip(names, rows["fill pairs"], strict=True))
    for name in NAMED:
        expected, _ = symbolic_elimination(G, gs.analyze(G, name).elimination_order)
        assert int(fills[name]) == len(expected) == len(gs.analyze(G, name).fill_blocks)
    assert rows["nodes"] == [str(G.number_of_nodes())] * len(NAMED)
    assert rows["edges"] == [str(G.number_of_edges())] * len(NAMED)


def test_summary_columns_match_direct_analyses_small():
    # K4 minus the edge 0-1, edges inserted in a scrambled order: the analysis must depend only
    # on the structure (the DFS visits neighbours in increasing id), and the summary must report
    # the fill of the orderings analyze() produces on this very graph.
    G = nx.Graph()
    G.add_nodes_from(range(4))
    G.add_edges_from([(1, 3), (0, 2), (2, 3), (0, 3), (1, 2)])
    direct = {name: gs.analyze(G, name) for name in NAMED}
    plain = gs.analyze(sorted_copy(G), "brudigam")
    assert direct["brudigam"].elimination_order == plain.elimination_order
    assert set(direct["brudigam"].fill_blocks) == symbolic_elimination(
        G, direct["brudigam"].elimination_order)[0] == set(plain.fill_blocks)
    for first in NAMED:
        rows = parse_summary(direct[first].summary())
        fills = dict(zip(rows["ordering"], rows["fill pairs"], strict=True))
        assert fills == {name: str(direct[name].n_fill) for name in NAMED}, first


def test_summary_without_compare_and_given_ordering():
    G = gen.ladder(6)
    text = gs.analyze(G).summary(compare=False)
    rows = parse_summary(text)
    assert rows["ordering"] == ["brudigam"]
    assert rows["fill pairs"] == ["2"]
    perm = [0, 1, 2, 3, 4, 5]
    rows = parse_summary(gs.analyze(G, perm).summary())
    assert rows["ordering"][0] == "given"
    assert sorted(rows["ordering"][1:]) == sorted(NAMED)
    fill_given, _ = symbolic_elimination(G, perm)
    assert rows["fill pairs"][0] == str(len(fill_given))


# ---------------------------------------------------------------------------------------------
# (2) O(n) on trees
# ---------------------------------------------------------------------------------------------


@given(n=st.integers(1, 80), seed=st.integers(0, 10_000), ordering=st.sampled_from(DFS_ORDERINGS))
@FAST
def test_tree_block_counts(n, seed, ordering):
    G = gen.random_tree(n, seed=seed)
    an = gs.analyze(G, ordering, block_sizes=3)
    bc = an.block_counts
    assert bc["update_triples"] == 0
    assert bc["factor_pairs"] == n - 1
    assert bc["fill_pairs"] == 0
    assert bc["matrix_pairs"] == n - 1
    assert bc["diagonal"] == n
    # L + D + U of a tree: n diagonal blocks and 2 (n - 1) off-diagonal blocks of 3 x 3
    assert an.factor_nnz == 9 * n + 2 * 9 * (n - 1)


def test_forest_block_counts():
    G = gen.random_graph(40, seed=5, components=4)
    bc = gs.analyze(G).block_counts
    assert bc["factor_pairs"] == 36
    assert bc["update_triples"] == 0


@pytest.mark.parametrize("s", [1, 3, 6])
@pytest.mark.parametrize("method", ["ldu", "ldlt"])
def test_flops_linear_on_paths(s, method):
    f100 = gs.analyze(gen.path(100), block_sizes=s).flops(method)
    f400 = gs.analyze(gen.path(400), block_sizes=s).flops(method)
    assert 3.5 <= f400 / f100 <= 4.5
    n100 = gs.analyze(gen.path(100), block_sizes=s).factor_nnz
    n400 = gs.analyze(gen.path(400), block_sizes=s).factor_nnz
    assert 3.5 <= n400 / n100 <= 4.5


def test_flops_linear_on_random_trees():
    f1 = gs.analyze(gen.random_tree(100, seed=1), block_sizes=6).flops()
    f4 = gs.analyze(gen.random_tree(400, seed=1), block_sizes=6).flops()
    assert 3.5 <= f4 / f1 <= 4.5


def test_flops_bad_order_is_superlinear():
    # the natural order on a star rooted at 0 eliminates the hub first: complete fill
    G = gen.star(30)
    bad = gs.analyze(G, "natural")
    good = gs.analyze(G, "brudigam")
    assert len(bad.fill_blocks) == 29 * 28 // 2
    assert good.fill_blocks == ()
    assert bad.flops() > 5 * good.flops()


# ---------------------------------------------------------------------------------------------
# (3) immutability, and analyze on a matrix equals analyze on its graph
# ---------------------------------------------------------------------------------------------


LAYOUT = ("block_sizes", "position", "order", "d_ptr", "x_ptr", "fe_parent", "fe_child",
          "fe_ptr", "child_ptr", "parent_ptr", "parent_edges", "sched_ptr", "sched_ic2",
          "sched_c1c2")


def test_analysis_is_frozen():
    an = gs.analyze(gen.ladder(8))
    for attr in ("fill_blocks", "elimination_order", "ordering", "roots", "parent",
                 "graph", "position"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(an, attr, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        del an.fill_blocks
    with pytest.raises(dataclasses.FrozenInstanceError):
        an.new_attribute = 1
    for attr in ("elimination_order", "roots", "parent", "parents", "children",
                 "acyclic_children", "cyclic_children", "loop_openers", "fill_blocks",
                 "deferred"):
        value = getattr(an, attr)
        assert isinstance(value, tuple)
        assert all(isinstance(x, (int, tuple)) for x in value)


@pytest.mark.parametrize("attr", LAYOUT)
def test_layout_arrays_read_only(attr):
    an = gs.analyze(gen.ladder(8))
    a = getattr(an, attr)
    assert isinstance(a, np.ndarray)
    assert not a.flags.writeable
    if a.size:
        with pytest.raises(ValueError):
            a[0] = 1
        with pytest.raises(ValueError):
            a[...] = 0


def test_analysis_graph_frozen_and_independent_of_input():
    G = gen.ladder(6)
    an = gs.analyze(G)
    fill = an.fill_blocks
    with pytest.raises(nx.NetworkXError):
        an.graph.add_edge(0, 5)
    G.add_edge(0, 5)                      # mutating the input does not touch the analysis
    assert not an.graph.has_edge(0, 5)
    assert an.fill_blocks == fill
    assert {frozenset(e) for e in an.graph.edges} == {frozenset(e) for e in gen.ladder(6).edges}


@given(n=st.integers(1, 40), extra=st.integers(0, 12), comps=st.integers(1, 4),
       seed=st.integers(0, 10_000), ordering=st.sampled_from(NAMED))
@FAST
def test_matrix_analysis_equals_graph_analysis(n, extra, comps, seed, ordering):
    """``analyze(A)`` reads the matrix's adjacency and zero diagonal blocks directly; it must
    equal the analysis of ``A``'s graph given the same sizes and zero-diagonal nodes (forests
    with isolated nodes, cycles, zero pivots that get deferred)."""
    comps = min(comps, n)
    sizes_c = [n // comps + (1 if i < n % comps else 0) for i in range(comps)]
    extra = min(extra, sum(s * (s - 1) // 2 for s in sizes_c) - (n - comps))
    G = gen.random_graph(n, extra_edges=extra, seed=seed, components=comps)
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 4, n)
    A = gs.BlockMatrix(G, sizes, rng.standard_normal(
        int(gs.BlockMatrix(G, sizes).edge_ptr[-1])))
    for v in rng.choice(n, size=n // 4, replace=False):        # zero diagonal blocks
        A.data[A.diag_ptr[v]:A.diag_ptr[v + 1]] = 0.0
    zero = A.zero_diagonal()
    a = gs.analyze(A, ordering)
    b = gs.analyze(G, ordering, block_sizes=sizes, zero_diagonal=zero)
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        else:
            assert x == y, f.name


def test_auto_summary_reports_the_choice_and_every_candidate():
    an = gs.analyze(gen.crystal(4), block_sizes=6)
    last = an.summary(compare=False).splitlines()[-1]
    assert last.startswith(f"auto chose {an.ordering!r} from ")
    for name, _, flops in an.candidates:
        assert name in last and f"{flops:.3g}" in last


@pytest.mark.parametrize("make", [lambda: gen.net(6), lambda: gen.crystal(3),
                                  lambda: gen.constraint_graph(gen.ladder(6))],
                         ids=["net6", "crystal3", "kkt_ladder"])
def test_summary_counted_columns_equal_full_analyses(make, monkeypatch):
    # Above SUMMARY_FULL_PAIRS a compared ordering is only counted (a dense DFS factor of a large
    # crystal does not fit in memory): the counted values must be the full analysis's.
    from graphsolve import analysis as analysis_module

    G = make()
    an = gs.analyze(G, "amd")
    full = parse_summary(an.summary())
    monkeypatch.setattr(analysis_module, "SUMMARY_FULL_PAIRS", 0)
    counted = parse_summary(an.summary())
    assert counted["ordering"] == full["ordering"]
    for row in ("nodes", "edges", "fill pairs", "factor pairs", "deferred", "factor scalars",
                "flops ldu"):
        assert counted[row] == full[row], row
    assert counted["update triples"][1:] == ["-"] * (len(full["ordering"]) - 1)
    assert counted["update triples"][0] == full["update triples"][0]


def test_summary_leaves_out_orderings_far_worse_than_its_own(monkeypatch):
    from graphsolve import analysis as analysis_module

    G = nx.ladder_graph(60)                      # rail by rail: DFS orders explode
    an = gs.analyze(G, "amd")
    monkeypatch.setattr(analysis_module, "SUMMARY_COMPARE_LIMIT", 3)
    text = an.summary()
    rows = parse_summary(text)
    assert "brudigam-cm" in rows["ordering"] and "brudigam" not in rows["ordering"]
    last = text.splitlines()[-1]
    assert last.startswith("not shown") and "brudigam," in last and "dfs" in last
    # block_counts counts the update triples without listing them
    assert an.block_counts["update_triples"] == len(an.sched_ic2)


# ---------------------------------------------------------------------------------------------
# (4) the old home of Analysis and analyze: graphsolve.ordering
# ---------------------------------------------------------------------------------------------


def test_old_import_paths_still_serve_the_moved_names():
    """Users' code imports ``Analysis`` and ``analyze`` from graphsolve.ordering, where they
    lived before the symbolic phase moved to graphsolve.analysis: the same objects come back."""
    import graphsolve.analysis
    import graphsolve.ordering
    from graphsolve.ordering import SUMMARY_FULL_PAIRS, Analysis, analyze

    assert Analysis is gs.Analysis is graphsolve.analysis.Analysis
    assert analyze is gs.analyze is graphsolve.analysis.analyze
    assert SUMMARY_FULL_PAIRS == graphsolve.analysis.SUMMARY_FULL_PAIRS
    assert {"Analysis", "analyze", "ORDERINGS"} <= set(graphsolve.ordering.__all__)
    namespace: dict = {}
    exec("from graphsolve.ordering import *", namespace)
    assert namespace["Analysis"] is gs.Analysis and namespace["ORDERINGS"] == gs.ORDERINGS
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        graphsolve.ordering.no_such_name  # noqa: B018


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_naming_the_old_module_still_loads(protocol):
    """A pickle made before the move names the class ``graphsolve.ordering.Analysis``; it loads
    (here the class path of a fresh pickle is rewritten to the old one: both module names have
    19 characters, so the byte lengths stay valid)."""
    an = gs.analyze(gen.ladder(8), block_sizes=2)
    new = pickle.dumps(an, protocol=protocol)
    assert b"graphsolve.analysis" in new and b"graphsolve.ordering" not in new
    old = new.replace(b"graphsolve.analysis", b"graphsolve.ordering")
    back = pickle.loads(old)
    assert type(back) is gs.Analysis
    assert back.elimination_order == an.elimination_order
    assert back.fill_blocks == an.fill_blocks and back.flops() == an.flops()
