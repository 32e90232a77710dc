"""Tests for graphsolve.matrix: BlockMatrix construction/conversion and random block matrices.

Oracles are independent of the library: scipy/numpy matrices built by hand in the tests, the
block pattern computed from dense arrays, eigenvalues from ``numpy.linalg``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import graphsolve as gs
from graphsolve import generators as gen

FAST = settings(max_examples=25, deadline=None)


# ---------------------------------------------------------------------------------------------
# helpers (independent of graphsolve)
# ---------------------------------------------------------------------------------------------


def offsets_of(sizes) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(sizes)]).astype(int)


def random_pattern_matrix(G: nx.Graph, sizes, rng: np.random.Generator, density=0.6,
                          zero_blocks=True) -> np.ndarray:
    """Dense matrix whose nonzero blocks are diagonal blocks and blocks on edges of G.

    Entries inside allowed blocks are nonzero with probability ``density``; with
    ``zero_blocks`` some allowed off-diagonal blocks are left entirely zero.
    """
    off = offsets_of(sizes)
    N = int(off[-1])
    M = np.zeros((N, N))
    allowed = [(i, i) for i in G.nodes] + [(i, j) for u, v in G.edges for i, j in ((u, v), (v, u))]
    for i, j in allowed:
        if zero_blocks and i != j and rng.random() < 0.2:
            continue
        blk = rng.standard_normal((sizes[i], sizes[j]))
        blk[rng.random(blk.shape) > density] = 0.0
        M[off[i]:off[i + 1], off[j]:off[j + 1]] = blk
    return M


def nonzero_block_pairs(M: np.ndarray, sizes) -> set[frozenset]:
    """Unordered pairs {i, j}, i != j, with a nonzero entry in block (i, j) or (j, i)."""
    off = offsets_of(sizes)
    n = len(sizes)
    out = set()
    for i in range(n):
        for j in range(n):
            if i != j and np.any(M[off[i]:off[i + 1], off[j]:off[j + 1]] != 0):
                out.add(frozenset((i, j)))
    return out


def edge_set(G: nx.Graph) -> set[frozenset]:
    return {frozenset(e) for e in G.edges}


def dense_block(M: np.ndarray, sizes, i: int, j: int) -> np.ndarray:
    off = offsets_of(sizes)
    return M[off[i]:off[i + 1], off[j]:off[j + 1]]


def sparse_equal(A, B) -> bool:
    D = sp.csr_array(A) - sp.csr_array(B)
    D.eliminate_zeros()
    return D.nnz == 0 and A.shape == B.shape


# ---------------------------------------------------------------------------------------------
# from_scipy: round trip, pattern inference, pattern errors
# ---------------------------------------------------------------------------------------------


@given(
    n=st.integers(1, 9),
    extra=st.integers(0, 4),
    seed=st.integers(0, 10_000),
    fmt=st.sampled_from(["csr", "csc", "coo", "dense"]),
)
@FAST
def test_from_scipy_round_trip_mixed_sizes(n, extra, seed, fmt):
    rng = np.random.default_rng(seed)
    extra = min(extra, n * (n - 1) // 2 - (n - 1))
    G = gen.random_graph(n, extra_edges=extra, seed=seed)
    sizes = [int(s) for s in rng.integers(1, 8, size=n)]
    M = random_pattern_matrix(G, sizes, rng)
    S = {"csr": sp.csr_array, "csc": sp.csc_array, "coo": sp.coo_array,
         "dense": np.asarray}[fmt](M)

    for graph in (G, None):
        A = gs.BlockMatrix.from_scipy(S, sizes, graph=graph)
        assert A.shape == M.shape
        np.testing.assert_array_equal(A.block_sizes, sizes)
        np.testing.assert_array_equal(A.to_dense(), M)
        T = A.to_scipy()
        assert sp.issparse(T)
        assert sparse_equal(T, sp.csr_array(M))
        assert np.count_nonzero(T.data) == T.nnz == np.count_nonzero(M)
        # each block accessor agrees with the hand-built dense block
        for i in range(n):
            np.testing.assert_array_equal(A.block(i, i), dense_block(M, sizes, i, i))
        for u, v in A.graph.edges:
            np.testing.assert_array_equal(A.block(u, v), dense_block(M, sizes, u, v))
            np.testing.assert_array_equal(A.block(v, u), dense_block(M, sizes, v, u))


def test_from_scipy_scalar_block_size_round_trip():
    rng = np.random.default_rng(3)
    G = gen.ladder(6)
    M = random_pattern_matrix(G, [3] * 6, rng, zero_blocks=False)
    A = gs.BlockMatrix.from_scipy(sp.csr_array(M), 3, graph=G)
    np.testing.assert_array_equal(A.block_sizes, [3] * 6)
    np.testing.assert_array_equal(A.to_dense(), M)


@given(n=st.integers(1, 10), extra=st.integers(0, 6), seed=st.integers(0, 10_000))
@FAST
def test_from_scipy_infers_graph_from_pattern(n, extra, seed):
    rng = np.random.default_rng(seed)
    extra = min(extra, n * (n - 1) // 2 - (n - 1))
    G = gen.random_graph(n, extra_edges=extra, seed=seed)
    sizes = [int(s) for s in rng.integers(1, 8, size=n)]
    M = random_pattern_matrix(G, sizes, rng)
    A = gs.BlockMatrix.from_scipy(sp.csr_array(M), sizes)
    assert sorted(A.graph.nodes) == list(range(n))
    assert edge_set(A.graph) == nonzero_block_pairs(M, sizes)
    np.testing.assert_array_equal(A.to_dense(), M)


def test_from_scipy_infers_edge_from_one_sided_block():
    # only block (2, 0) is nonzero: the inferred graph still has the undirected edge 0-2
    sizes = [2, 1, 3]
    M = np.diag(np.arange(1.0, 7.0))
    M[3, 0] = 5.0                     # row 3 is node 2, column 0 is node 0
    A = gs.BlockMatrix.from_scipy(sp.coo_array(M), sizes)
    assert edge_set(A.graph) == {frozenset((0, 2))}
    np.testing.assert_array_equal(A.block(0, 2), np.zeros((2, 3)))
    np.testing.assert_array_equal(A.to_dense(), M)


def test_from_scipy_inference_keeps_explicit_zeros_and_cancelling_duplicates():
    sizes = [1, 1, 1]
    rows = np.array([0, 1, 2, 0, 2, 2])
    cols = np.array([0, 1, 2, 1, 0, 0])
    vals = np.array([1.0, 2.0, 3.0, 0.0, 4.0, -4.0])    # (0,1) explicit 0, (2,0) cancels
    S = sp.coo_array((vals, (rows, cols)), shape=(3, 3))
    A = gs.BlockMatrix.from_scipy(S, sizes)
    assert edge_set(A.graph) == {frozenset((0, 1)), frozenset((0, 2))}   # stored = structure
    np.testing.assert_array_equal(A.to_dense(), np.diag([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("bad", [(0, 3), (3, 0), (1, 4), (4, 2)])
def test_from_scipy_pattern_error_names_block(bad, fmt):
    G = gen.path(5)                    # edges (0,1) (1,2) (2,3) (3,4)
    sizes = [2, 1, 3, 1, 2]
    off = offsets_of(sizes)
    rng = np.random.default_rng(0)
    M = random_pattern_matrix(G, sizes, rng, zero_blocks=False)
    i, j = bad
    M[off[i + 1] - 1, off[j]] = 7.0    # one entry in block (i, j), not an edge
    S = {"csr": sp.csr_array, "csc": sp.csc_array, "coo": sp.coo_array}[fmt](M)
    with pytest.raises(gs.PatternError) as exc:
        gs.BlockMatrix.from_scipy(S, sizes, graph=G)
    assert tuple(exc.value.block) == (i, j)
    assert isinstance(exc.value, gs.GraphSolveError)
    assert isinstance(exc.value, ValueError)


def test_from_scipy_pattern_error_with_several_bad_blocks_names_one_of_them():
    G = nx.empty_graph(4)
    sizes = [1, 2, 1, 2]
    off = offsets_of(sizes)
    M = np.eye(6)
    bad = {(0, 2), (3, 1), (1, 0)}
    for i, j in bad:
        M[off[i], off[j]] = 1.5
    with pytest.raises(gs.PatternError) as exc:
        gs.BlockMatrix.from_scipy(sp.csr_array(M), sizes, graph=G)
    assert tuple(exc.value.block) in bad


def test_from_scipy_explicit_zeros_outside_graph_are_fine():
    G = gen.path(4)
    sizes = [2, 2, 1, 3]
    rng = np.random.default_rng(1)
    M = random_pattern_matrix(G, sizes, rng)
    C = sp.coo_array(M)
    off = offsets_of(sizes)
    # explicit zeros in blocks (0, 2), (3, 0) and (1, 3): no edges there
    extra_r = np.array([off[0], off[3], off[1] + 1])
    extra_c = np.array([off[2], off[0] + 1, off[3] + 2])
    S = sp.coo_array(
        (np.concatenate([C.data, np.zeros(3)]),
         (np.concatenate([C.row, extra_r]), np.concatenate([C.col, extra_c]))),
        shape=M.shape,
    )
    assert S.nnz == C.nnz + 3
    A = gs.BlockMatrix.from_scipy(S, sizes, graph=G)
    assert edge_set(A.graph) == edge_set(G)
    np.testing.assert_array_equal(A.to_dense(), M)
    assert sparse_equal(A.to_scipy(), sp.csr_array(M))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_from_scipy_nonzero_after_a_stored_zero_of_the_same_off_graph_block(fmt):
    """A block's run in a row is resolved once: a stored zero first, then a nonzero of the same
    block outside the graph, still raises PatternError naming that block."""
    G = gen.path(3)
    sizes = [3, 2, 3]
    off = offsets_of(sizes)
    M = random_pattern_matrix(G, sizes, np.random.default_rng(2), zero_blocks=False)
    rows = [off[0], off[0]]
    cols = [off[2], off[2] + 2]                  # block (0, 2): not an edge
    C = sp.coo_array(M)
    S = sp.coo_array((np.concatenate([C.data, [0.0, 5.0]]),
                      (np.concatenate([C.row, rows]), np.concatenate([C.col, cols]))),
                     shape=M.shape)
    S = {"csr": sp.csr_array, "csc": sp.csc_array}[fmt](S)
    with pytest.raises(gs.PatternError) as exc:
        gs.BlockMatrix.from_scipy(S, sizes, graph=G)
    assert tuple(exc.value.block) == (0, 2)


@FAST
@given(n=st.integers(1, 30), extra=st.integers(0, 40), seed=st.integers(0, 10_000))
def test_mirror_edges_against_a_search(n, extra, seed):
    """``BlockMatrix._transpose_edges`` (one cursor per row) finds every edge's reverse, as a
    search of the reversed pair among the sorted edges does."""
    extra = min(extra, (n - 1) * (n - 2) // 2)   # the non-edges a tree of n nodes leaves
    G = gen.random_graph(n, extra, seed=seed)
    G = nx.relabel_nodes(G, dict(enumerate(np.random.default_rng(seed).permutation(n))))
    A = gs.random_block_matrix(G, "spd", block_size=1, seed=seed)
    keys = A.edges[:, 0] * n + A.edges[:, 1]
    expected = np.searchsorted(keys, A.edges[:, 1] * n + A.edges[:, 0])
    np.testing.assert_array_equal(A._transpose_edges(), expected)
    np.testing.assert_array_equal(A.edges[A._transpose_edges()], A.edges[:, ::-1])


@given(n=st.integers(1, 9), extra=st.integers(0, 4), seed=st.integers(0, 10_000),
       fmt=st.sampled_from(["csr", "csc"]), dup=st.booleans())
@FAST
def test_from_scipy_compiled_scatter_matches_numpy_reference(n, extra, seed, fmt, dup):
    """The compiled assembly (kernels.assembly) against BlockMatrix._scatter, the readable NumPy
    scatter from COO coordinates, on random patterns, sizes and CSR/CSC input with duplicate
    entries (which add up) and explicit zeros."""
    rng = np.random.default_rng(seed)
    extra = min(extra, n * (n - 1) // 2 - (n - 1))
    G = gen.random_graph(n, extra_edges=extra, seed=seed)
    sizes = np.array([int(s) for s in rng.integers(1, 7, size=n)])
    M = random_pattern_matrix(G, sizes, rng)
    C = sp.coo_array(M)
    if dup:                              # split every value in two stored halves, add zeros
        r = np.concatenate([C.row, C.row, C.row[:3]])
        c = np.concatenate([C.col, C.col, C.col[:3]])
        v = np.concatenate([C.data / 2, C.data / 2, np.zeros(min(3, C.nnz))])
        major, minor = (r, c) if fmt == "csr" else (c, r)
        o = np.argsort(major, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=M.shape[0]))])
        S = {"csr": sp.csr_array, "csc": sp.csc_array}[fmt]((v[o], minor[o], indptr),
                                                            shape=M.shape)
        assert S.nnz > C.nnz or C.nnz == 0   # stored duplicates
    else:
        S = {"csr": sp.csr_array, "csc": sp.csc_array}[fmt](M)
    A = gs.BlockMatrix.from_scipy(S, sizes, graph=G)
    ref = gs.BlockMatrix(G.copy(), sizes)
    off = offsets_of(sizes)
    bi = np.searchsorted(off, C.row, side="right") - 1
    bj = np.searchsorted(off, C.col, side="right") - 1
    ref._scatter(bi, bj, C.row - off[bi], C.col - off[bj], C.data)
    np.testing.assert_allclose(A.data, ref.data, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(A.edges, ref.edges)


def test_from_scipy_without_graph_builds_networkx_only_when_asked():
    """analyze / factorize / solve of a matrix from from_scipy run on its arrays; the
    networkx graph appears on first access of .graph, with the pattern and zero_diagonal."""
    S = sp.csr_array(np.array([[4.0, 1, 0, 0], [1, 4, 0, 1], [0, 0, 0, 1], [0, 1, 1, 4]]))
    A = gs.BlockMatrix.from_scipy(S, [1, 1, 1, 1])
    x = gs.solve(A, np.ones(4))
    np.testing.assert_allclose(S @ x, np.ones(4))
    assert A._graph is None
    assert edge_set(A.graph) == {frozenset((0, 1)), frozenset((1, 3)), frozenset((2, 3))}
    assert sorted(A.graph.nodes) == [0, 1, 2, 3]
    assert tuple(A.graph.graph["zero_diagonal"]) == (2,)
    B = A.with_data(A.data * 2)
    assert B.edges is A.edges and B.graph is not A.graph
    np.testing.assert_array_equal(B.to_dense(), 2 * S.toarray())


@pytest.mark.parametrize("make", [lambda M: M.astype(complex), lambda M: sp.csr_array(
    M.astype(np.complex64)), lambda M: M.astype(object)])
def test_from_scipy_refuses_complex_and_non_numeric(make):
    """graphsolve computes in float64: complex input is refused, never cast (the imaginary
    part would be dropped)."""
    M = np.eye(3)
    with pytest.raises(gs.DTypeError) as exc:
        gs.BlockMatrix.from_scipy(make(M), 1)
    assert isinstance(exc.value, TypeError) and isinstance(exc.value, gs.GraphSolveError)


def test_with_data_refuses_complex_and_wrong_shape():
    A = gs.random_block_matrix(gen.path(3), "spd", block_size=2)
    with pytest.raises(gs.DTypeError, match="complex"):
        A.with_data(A.data + 1j)
    with pytest.raises(gs.ShapeError):
        A.with_data(A.data[:-1])


def test_from_scipy_integer_and_bool_values():
    M = np.array([[2, 1, 0], [1, 2, 0], [0, 0, 1]])
    for S in (M, sp.csr_array(M), sp.csc_array(M.astype(bool))):
        A = gs.BlockMatrix.from_scipy(S, [2, 1])
        assert A.data.dtype == np.float64
        np.testing.assert_array_equal(A.to_dense(), np.asarray(S.toarray() if sp.issparse(S)
                                                                else S, dtype=float))


def test_from_scipy_does_not_modify_given_graph():
    G = gen.path(3)
    before = (sorted(G.edges), dict(G.graph), dict(G.nodes(data=True)))
    gs.BlockMatrix.from_scipy(np.eye(3), [1, 1, 1], graph=G)
    assert (sorted(G.edges), dict(G.graph), dict(G.nodes(data=True))) == before


@pytest.mark.parametrize("sizes", [[2, 2], [2, 3, 2], [7], [1, 1, 1, 1, 1, 1, 1]])
def test_from_scipy_shape_error_sizes_not_summing_to_n(sizes):
    S = sp.identity(6, format="csr")
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_scipy(S, sizes)


@pytest.mark.parametrize("size", [4, 5, 7])
def test_from_scipy_shape_error_scalar_size_not_dividing(size):
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_scipy(sp.identity(6, format="csr"), size)


@pytest.mark.parametrize(("N", "sizes"), [(3, [1.9, 2.0]), (4, 2.5), (4, [1.5, 2.5])])
def test_from_scipy_shape_error_non_integer_block_sizes(N, sizes):
    # non-integer sizes must be rejected, not truncated to integers that happen to fit
    # (graph.resolve_block_sizes rejects non-integer sizes with ShapeError)
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_scipy(sp.identity(N, format="csr"), sizes)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (1, 3)])
def test_from_scipy_shape_error_non_square(shape):
    S = sp.random(*shape, density=0.5, random_state=0, format="csr")
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_scipy(S, [1] * shape[0])
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_scipy(S.toarray(), 1)


def test_from_scipy_graph_with_wrong_number_of_nodes():
    with pytest.raises(gs.GraphSolveError):
        gs.BlockMatrix.from_scipy(np.eye(4), [2, 2], graph=gen.path(3))


# ---------------------------------------------------------------------------------------------
# from_blocks
# ---------------------------------------------------------------------------------------------


def test_from_blocks_missing_mirror_is_transpose():
    G = gen.path(3)
    rng = np.random.default_rng(0)
    sizes = [2, 3, 1]
    diag = [rng.standard_normal((s, s)) for s in sizes]
    B01 = rng.standard_normal((2, 3))
    B21 = rng.standard_normal((1, 3))
    A = gs.BlockMatrix.from_blocks(G, diag, {(0, 1): B01, (2, 1): B21})
    expected = np.zeros((6, 6))
    expected[0:2, 0:2], expected[2:5, 2:5], expected[5:6, 5:6] = diag
    expected[0:2, 2:5], expected[2:5, 0:2] = B01, B01.T
    expected[5:6, 2:5], expected[2:5, 5:6] = B21, B21.T
    np.testing.assert_array_equal(A.to_dense(), expected)
    np.testing.assert_array_equal(A.block(1, 0), B01.T)
    np.testing.assert_array_equal(A.block(1, 2), B21.T)


def test_from_blocks_both_directions_kept():
    G = gen.path(2)
    rng = np.random.default_rng(1)
    diag = {0: np.eye(2), 1: 2 * np.eye(3)}
    B, C = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    A = gs.BlockMatrix.from_blocks(G, diag, {(0, 1): B, (1, 0): C})
    expected = np.block([[np.eye(2), B], [C, 2 * np.eye(3)]])
    np.testing.assert_array_equal(A.to_dense(), expected)
    assert not A.is_symmetric()
    # order of insertion does not matter
    A2 = gs.BlockMatrix.from_blocks(G, diag, {(1, 0): C, (0, 1): B})
    np.testing.assert_array_equal(A2.to_dense(), expected)


def test_from_blocks_edge_without_block_is_zero():
    G = gen.star(3)
    A = gs.BlockMatrix.from_blocks(G, [np.eye(1)] * 3, {(0, 1): np.ones((1, 1))})
    expected = np.eye(3)
    expected[0, 1] = expected[1, 0] = 1.0
    np.testing.assert_array_equal(A.to_dense(), expected)
    assert edge_set(A.graph) == edge_set(G)


@pytest.mark.parametrize("blk", [(0, 2), (2, 0), (1, 1), (0, 7)])
def test_from_blocks_pattern_error_off_edge(blk):
    G = gen.path(3)
    with pytest.raises(gs.PatternError) as exc:
        gs.BlockMatrix.from_blocks(G, [np.eye(1)] * 3, {blk: np.ones((1, 1))})
    assert tuple(exc.value.block) == blk


@pytest.mark.parametrize("bad_diag", [np.ones((2, 3)), np.ones(3), np.ones((2, 2, 2))])
def test_from_blocks_shape_error_non_square_diagonal(bad_diag):
    G = gen.path(2)
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_blocks(G, [np.eye(2), bad_diag])


@pytest.mark.parametrize("shape", [(3, 2), (2, 2), (3, 3), (2,)])
def test_from_blocks_shape_error_off_diagonal(shape):
    G = gen.path(2)
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_blocks(G, [np.eye(2), np.eye(3)], {(0, 1): np.ones(shape)})


def test_from_blocks_wrong_number_of_diagonal_blocks():
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_blocks(gen.path(3), [np.eye(2)] * 2)


def test_from_blocks_size_attribute_mismatch():
    G = gen.path(2)
    G.nodes[1]["size"] = 2
    with pytest.raises(gs.ShapeError):
        gs.BlockMatrix.from_blocks(G, [np.eye(2), np.eye(3)])


# ---------------------------------------------------------------------------------------------
# random_block_matrix
# ---------------------------------------------------------------------------------------------


def block_pattern_from_dense(M: np.ndarray, sizes) -> set[tuple[int, int]]:
    off = offsets_of(sizes)
    n = len(sizes)
    return {(i, j) for i in range(n) for j in range(n) if i != j
            and np.any(M[off[i]:off[i + 1], off[j]:off[j + 1]] != 0)}


def test_random_block_matrix_size_attribute_overrides_block_size():
    G = gen.ladder(6)
    attr = {0: 1, 2: 4, 5: 7}
    for v, s in attr.items():
        G.nodes[v]["size"] = s
    expected = [attr.get(v, 3) for v in range(6)]
    for kind in ("spd", "unsymmetric"):
        A = gs.random_block_matrix(G, kind, block_size=3, seed=2)
        np.testing.assert_array_equal(A.block_sizes, expected)
        assert A.shape == (sum(expected), sum(expected))
        for v in range(6):
            assert A.block(v, v).shape == (expected[v], expected[v])
        for u, v in G.edges:
            assert A.block(u, v).shape == (expected[u], expected[v])


def test_random_block_matrix_default_block_size():
    A = gs.random_block_matrix(gen.path(3), "spd")
    np.testing.assert_array_equal(A.block_sizes, [6, 6, 6])


SMALL_GRAPHS = [
    ("path", lambda: gen.path(6)),
    ("star", lambda: gen.star(7)),
    ("ladder", lambda: gen.ladder(8)),
    ("net", lambda: gen.net(3)),
    ("segment_chain", lambda: gen.segment_chain(3)),
    ("random", lambda: gen.random_graph(9, extra_edges=4, seed=5, components=2)),
]


@pytest.mark.parametrize(("name", "make"), SMALL_GRAPHS)
@pytest.mark.parametrize("seed", [0, 1])
def test_random_spd(name, make, seed):
    G = make()
    for v in G.nodes:
        G.nodes[v]["size"] = 1 + (v * 5 + seed) % 7      # mixed 1..7
    A = gs.random_block_matrix(G, "spd", seed=seed)
    M = A.to_dense()
    assert A.is_symmetric()
    np.testing.assert_array_equal(M, M.T)
    w = np.linalg.eigvalsh(M)
    assert w.min() > 0
    assert w.max() / w.min() < 1e4
    assert np.linalg.cond(M) < 1e4
    # pattern: every edge carries a nonzero block both ways, nothing else
    pattern = block_pattern_from_dense(M, A.block_sizes)
    expected = {(u, v) for e in G.edges for u, v in (e, e[::-1])}
    assert pattern == expected
    # scipy confirms positive definiteness via Cholesky of the sparse matrix
    np.linalg.cholesky(A.to_scipy().toarray())


@pytest.mark.parametrize(("name", "make"), SMALL_GRAPHS)
def test_random_unsymmetric(name, make):
    G = make()
    A = gs.random_block_matrix(G, "unsymmetric", block_size=3, seed=4)
    M = A.to_dense()
    assert not A.is_symmetric()
    assert not np.array_equal(M, M.T)
    pattern = block_pattern_from_dense(M, A.block_sizes)
    assert pattern == {(j, i) for i, j in pattern}                 # symmetric block pattern
    assert pattern == {(u, v) for e in G.edges for u, v in (e, e[::-1])}
    for u, v in G.edges:                                           # values independent
        assert not np.allclose(A.block(u, v), A.block(v, u).T)
    sv = np.linalg.svd(M, compute_uv=False)
    assert sv.min() > 1e-8 * sv.max()
    assert np.linalg.matrix_rank(M) == M.shape[0]


def test_random_block_matrix_is_deterministic_in_seed():
    G = gen.ladder(6)
    for kind in ("spd", "unsymmetric"):
        A = gs.random_block_matrix(G, kind, block_size=2, seed=11)
        B = gs.random_block_matrix(G, kind, block_size=2, seed=11)
        C = gs.random_block_matrix(G, kind, block_size=2, seed=12)
        np.testing.assert_array_equal(A.to_dense(), B.to_dense())
        assert not np.array_equal(A.to_dense(), C.to_dense())


def inertia(M: np.ndarray, tol: float = 1e-9) -> tuple[int, int, int]:
    w = np.linalg.eigvalsh(M)
    scale = max(1.0, np.abs(w).max())
    return (int(np.sum(w > tol * scale)), int(np.sum(w < -tol * scale)),
            int(np.sum(np.abs(w) <= tol * scale)))


@pytest.mark.parametrize(
    ("name", "mech"),
    [
        ("path", lambda: gen.path(5)),
        ("star", lambda: gen.star(5)),
        ("random_tree", lambda: gen.random_tree(8, seed=3)),
        ("mixed_sizes", lambda: _mixed_size_tree()),
    ],
)
@pytest.mark.parametrize(("body", "con"), [(6, 3), (3, 2), (2, 2)])
def test_random_kkt_tree_mechanism(name, mech, body, con):
    Gm = mech()
    H = gen.constraint_graph(Gm, body_size=body, constraint_size=con)
    A = gs.random_block_matrix(H, "kkt", seed=7)
    M = A.to_dense()
    roles = dict(H.nodes(data="role"))
    sizes = [H.nodes[v]["size"] for v in range(H.number_of_nodes())]
    np.testing.assert_array_equal(A.block_sizes, sizes)
    assert A.is_symmetric()
    np.testing.assert_array_equal(M, M.T)
    bodies = [v for v in H if roles[v] == "body"]
    cons = [v for v in H if roles[v] == "constraint"]
    for c in cons:
        np.testing.assert_array_equal(A.block(c, c), np.zeros((con, con)))
        np.testing.assert_array_equal(dense_block(M, sizes, c, c), 0.0)
    for b in bodies:
        D = dense_block(M, sizes, b, b)
        np.testing.assert_array_equal(D, D.T)
        assert np.linalg.eigvalsh(D).min() > 0
    # every edge joins a body to a constraint and carries a nonzero (Jacobian) block
    pattern = block_pattern_from_dense(M, sizes)
    assert pattern == {(u, v) for e in H.edges for u, v in (e, e[::-1])}
    n_pos, n_neg, n_zero = inertia(M)
    assert n_pos == sum(sizes[b] for b in bodies)
    assert n_neg == sum(sizes[c] for c in cons)
    assert n_zero == 0


def _mixed_size_tree() -> nx.Graph:
    G = gen.random_tree(6, seed=1)
    for v in G:
        G.nodes[v]["size"] = 3 + v % 4
    return G


def test_random_kkt_on_cyclic_mechanism_is_symmetric_indefinite():
    H = gen.constraint_graph(gen.ladder(6), body_size=6, constraint_size=3)
    A = gs.random_block_matrix(H, "kkt", seed=0)
    M = A.to_dense()
    assert A.is_symmetric()
    n_b = H.graph["bodies"]
    n_c = H.number_of_nodes() - n_b
    n_pos, n_neg, n_zero = inertia(M)
    # 7 joints of 3 rows on 6 bodies of 6 columns: J (21 x 36) full row rank generically
    assert (n_pos, n_neg, n_zero) == (6 * n_b, 3 * n_c, 0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: gen.path(4),
        lambda: gen.ladder(6),
        # roles only on some nodes
        lambda: _partial_roles(),
    ],
)
def test_random_kkt_without_roles_raises(make):
    with pytest.raises(gs.GraphError):
        gs.random_block_matrix(make(), "kkt")


def _partial_roles() -> nx.Graph:
    H = gen.constraint_graph(gen.path(3))
    del H.nodes[0]["role"]
    return H


def test_random_kkt_body_body_edge_raises():
    H = gen.constraint_graph(gen.path(3))
    H.add_edge(0, 1)                    # two bodies
    with pytest.raises(gs.GraphError):
        gs.random_block_matrix(H, "kkt")


@pytest.mark.parametrize("kind", ["SPD", "symmetric", "", "lu"])
def test_random_unknown_kind(kind):
    with pytest.raises(ValueError, match="kind"):
        gs.random_block_matrix(gen.path(3), kind)


@pytest.mark.parametrize("kind", ["spd", "kkt", "unsymmetric"])
def test_random_empty_graph(kind):
    with pytest.raises(gs.GraphError):
        gs.random_block_matrix(nx.Graph(), kind)


@pytest.mark.parametrize(
    "G",
    [
        nx.relabel_nodes(gen.path(3), {0: "a", 1: "b", 2: "c"}),
        nx.relabel_nodes(gen.path(3), {0: 1, 1: 2, 2: 3}),      # 1..n instead of 0..n-1
        nx.relabel_nodes(gen.path(3), {0: 0.0, 1: 1.5, 2: 2.0}),
        nx.grid_2d_graph(2, 2),                                  # tuple labels
    ],
)
def test_random_non_integer_labels(G):
    with pytest.raises(gs.GraphError):
        gs.random_block_matrix(G, "spd")


def test_non_integer_labels_rejected_by_constructors():
    G = nx.relabel_nodes(gen.path(2), {0: "x", 1: "y"})
    with pytest.raises(gs.GraphError):
        gs.BlockMatrix.from_blocks(G, [np.eye(1), np.eye(1)])
    with pytest.raises(gs.GraphError):
        gs.BlockMatrix.from_scipy(np.eye(2), [1, 1], graph=G)


def test_directed_graph_rejected():
    with pytest.raises(gs.GraphError):
        gs.random_block_matrix(nx.DiGraph([(0, 1)]), "spd")


# ---------------------------------------------------------------------------------------------
# check_finite, is_symmetric
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("blk", [(0, 0), (2, 2), (1, 2), (2, 1), (3, 0), (0, 3)])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_finite_names_block(blk, bad):
    G = gen.star(4)
    G.add_edge(1, 2)
    A = gs.random_block_matrix(G, "spd", block_size=2, seed=0)
    A.check_finite()                                    # all finite: no error
    A.block(*blk)[1, 0] = bad
    with pytest.raises(gs.NonFiniteError, match=rf"\({blk[0]}, {blk[1]}\)"):
        A.check_finite()


def test_check_finite_from_scipy_nan():
    M = np.eye(4)
    M[3, 2] = np.nan                      # sizes [1, 2, 1]: row 3 is node 2, col 2 is node 1
    M[2, 3] = 1.0
    A = gs.BlockMatrix.from_scipy(sp.csr_array(M), [1, 2, 1])
    with pytest.raises(gs.NonFiniteError, match=r"\(2, 1\)"):
        A.check_finite()


@pytest.mark.parametrize("where", ["diag_offdiag_entry", "edge_block"])
def test_is_symmetric_detects_single_perturbation(where):
    G = gen.ladder(6)
    for v in G:
        G.nodes[v]["size"] = 1 + v % 3 + 1          # 2..4, so diagonal blocks have off-diagonals
    A = gs.random_block_matrix(G, "spd", seed=3)
    assert A.is_symmetric()
    if where == "diag_offdiag_entry":
        A.block(4, 4)[0, 1] += 1e-9
    else:
        A.block(2, 3)[1, 0] += 1e-9
    assert not A.is_symmetric()
    assert not np.array_equal(A.to_dense(), A.to_dense().T)
    assert A.is_symmetric(rtol=1e-6)


def test_is_symmetric_unequal_block_sizes_transposed_blocks():
    G = gen.path(2)
    B = np.arange(6.0).reshape(2, 3)
    A = gs.BlockMatrix.from_blocks(G, [np.eye(2), np.eye(3)], {(0, 1): B, (1, 0): B.T})
    assert A.is_symmetric()
    A.block(1, 0)[2, 1] = -1.0
    assert not A.is_symmetric()


@given(n=st.integers(2, 8), seed=st.integers(0, 1000))
@FAST
def test_is_symmetric_matches_numpy(n, seed):
    rng = np.random.default_rng(seed)
    G = gen.random_tree(n, seed=seed)
    sizes = [int(s) for s in rng.integers(1, 5, size=n)]
    M = random_pattern_matrix(G, sizes, rng, density=0.8)
    if rng.random() < 0.5:
        M = M + M.T
    A = gs.BlockMatrix.from_scipy(sp.csr_array(M), sizes, graph=G)
    assert A.is_symmetric() == bool(np.array_equal(M, M.T))


@given(n=st.integers(1, 25), extra=st.integers(0, 30), seed=st.integers(0, 10_000),
       mixed=st.booleans(), kind=st.sampled_from(["spd", "unsymmetric"]))
@settings(max_examples=40, deadline=None)
def test_transpose_index_and_symmetry_against_the_dense_transpose(n, extra, seed, mixed, kind):
    """The blockwise transpose index (no sort) maps data to the dense transpose's entries,
    and is_symmetric (stacked-block path for equal sizes) agrees with the dense test."""
    extra = min(extra, (n - 1) * (n - 2) // 2)
    G = gs.generators.random_graph(n, extra_edges=extra, seed=seed) if n > 1 else \
        nx.empty_graph(1)
    if mixed:
        for v, s in enumerate(np.random.default_rng(seed).integers(1, 5, n)):
            G.nodes[v]["size"] = int(s)
    A = gs.random_block_matrix(G, kind, block_size=3, seed=seed)
    D = A.to_dense()
    rows, cols = A._entry_coordinates()
    np.testing.assert_array_equal(A.data[A.transpose_index()], D.T[rows, cols])
    assert A.is_symmetric() == bool(np.array_equal(D, D.T))


# ---------------------------------------------------------------------------------------------
# vectorized construction: random_block_matrix's documented structure, from_blocks' stacked
# writes, both against dense numpy
# ---------------------------------------------------------------------------------------------


def _block_norms(M: np.ndarray, sizes, G: nx.Graph) -> tuple[np.ndarray, np.ndarray]:
    """Sums of numpy's spectral norms of the off-diagonal blocks of M, by block row and by
    block column."""
    n = len(sizes)
    rows, cols = np.zeros(n), np.zeros(n)
    for u, v in G.edges:
        for i, j in ((u, v), (v, u)):
            nb = np.linalg.norm(dense_block(M, sizes, i, j), 2)
            rows[i] += nb
            cols[j] += nb
    return rows, cols


def _random_test_graph(kind: str, n: int, extra: int, seed: int) -> nx.Graph:
    """A random graph with mixed block sizes; for "kkt" the constraint graph of a random
    mechanism, its nodes renumbered at random so bodies and constraints interleave."""
    rng = np.random.default_rng(seed)
    extra = min(extra, (n - 1) * (n - 2) // 2)
    G = gen.random_graph(n, extra_edges=extra, seed=seed) if n > 1 else nx.empty_graph(1)
    if kind == "kkt":
        H = gen.constraint_graph(G, body_size=3, constraint_size=2)
        perm = rng.permutation(H.number_of_nodes())
        G = nx.relabel_nodes(H, {v: int(perm[v]) for v in H})
    for v in G:
        if rng.random() < 0.7:
            G.nodes[v]["size"] = int(rng.integers(1, 6))
    return G


@given(n=st.integers(1, 12), extra=st.integers(0, 8), seed=st.integers(0, 10_000),
       kind=st.sampled_from(["spd", "unsymmetric", "kkt"]))
@settings(max_examples=60, deadline=None)
def test_random_block_matrix_documented_structure_against_dense(n, extra, seed, kind):
    """The vectorized random_block_matrix gives exactly the documented matrices: block sizes
    from the ``size`` attribute, nonzero blocks exactly on the edges; "spd" symmetric positive
    definite with diagonal blocks ``R Rᵀ/s + (r_i + 1) I`` (r_i the sum of numpy's 2-norms of the
    block row), hence block diagonally dominant; "unsymmetric" with (i, j) and (j, i) not
    transposes of each other and block diagonally dominant by rows and by columns; "kkt"
    symmetric, zero constraint blocks, body blocks ``R Rᵀ/s + I``, edges body-constraint."""
    G = _random_test_graph(kind, n, extra, seed)
    before = (sorted(G.edges), dict(G.nodes(data=True)))
    A = gs.random_block_matrix(G, kind, block_size=3, seed=seed)
    assert (sorted(G.edges), dict(G.nodes(data=True))) == before     # input left alone
    nv = G.number_of_nodes()
    sizes = [G.nodes[v].get("size", 3) for v in range(nv)]
    np.testing.assert_array_equal(A.block_sizes, sizes)
    assert dict(A.graph.nodes(data=True)) == dict(G.nodes(data=True))
    assert A.graph is not G and edge_set(A.graph) == edge_set(G)
    M = A.to_dense()
    assert block_pattern_from_dense(M, sizes) == {(u, v) for e in G.edges
                                                  for u, v in (e, e[::-1])}
    rows, cols = _block_norms(M, sizes, G)
    diag = [dense_block(M, sizes, v, v) for v in range(nv)]
    tol = 1e-9 * max(1.0, np.abs(M).max())
    if kind in ("spd", "kkt"):
        np.testing.assert_array_equal(M, M.T)
        assert A.is_symmetric()
    if kind == "spd":
        assert np.linalg.eigvalsh(M).min() > 0
        for v, D in enumerate(diag):                  # D - (r_v + 1) I = R Rᵀ / s: PSD
            assert np.linalg.eigvalsh(D - (rows[v] + 1.0) * np.eye(sizes[v])).min() > -tol
            assert np.linalg.eigvalsh(D).min() > rows[v]             # dominance
        np.testing.assert_allclose(rows, cols, rtol=1e-12)
        assert A.graph.graph["zero_diagonal"] == ()
    elif kind == "unsymmetric":
        for v, D in enumerate(diag):
            smin = np.linalg.svd(D, compute_uv=False).min()
            assert smin > max(rows[v], cols[v]) + 1.0 - tol            # rows and columns
        for u, v in G.edges:
            assert not np.allclose(dense_block(M, sizes, u, v), dense_block(M, sizes, v, u).T)
        if G.number_of_edges():
            assert not A.is_symmetric()
        assert A.graph.graph["zero_diagonal"] == ()
    else:
        role = dict(G.nodes(data="role"))
        for u, v in G.edges:
            assert {role[u], role[v]} == {"body", "constraint"}
        cons = tuple(sorted(v for v in G if role[v] == "constraint"))
        for v, D in enumerate(diag):
            if role[v] == "constraint":
                np.testing.assert_array_equal(D, 0.0)
            else:                                     # R Rᵀ / s + I
                assert np.linalg.eigvalsh(D - np.eye(sizes[v])).min() > -tol
        assert tuple(A.graph.graph["zero_diagonal"]) == cons

    # deterministic in the seed (int or Generator), different for another seed
    again = gs.random_block_matrix(G, kind, block_size=3, seed=np.random.default_rng(seed))
    np.testing.assert_array_equal(again.data, A.data)
    other = gs.random_block_matrix(G, kind, block_size=3, seed=seed + 1)
    if A.data.size > 1:        # a lone 1×1 "unsymmetric" block r + |r| + 1 is 1 for any r < 0
        assert not np.array_equal(other.data, A.data)


def test_random_block_matrix_seed_none_and_generator_stream():
    G = gen.ladder(6)
    A = gs.random_block_matrix(G, "spd", block_size=2, seed=None)
    assert A.is_symmetric() and np.linalg.eigvalsh(A.to_dense()).min() > 0
    rng = np.random.default_rng(3)
    B = gs.random_block_matrix(G, "unsymmetric", block_size=2, seed=rng)
    C = gs.random_block_matrix(G, "unsymmetric", block_size=2, seed=rng)   # stream moved on
    assert not np.array_equal(B.data, C.data)


def test_random_kkt_errors_raised_before_drawing():
    H = gen.constraint_graph(gen.path(3))
    H.add_edge(0, 1)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(gs.GraphError, match=r"edge \(0, 1\) joins two body nodes"):
        gs.random_block_matrix(H, "kkt", seed=rng)
    with pytest.raises(gs.GraphError, match="node 0 has None"):
        gs.random_block_matrix(gen.path(3), "kkt", seed=rng)
    with pytest.raises(ValueError, match="unknown kind"):
        gs.random_block_matrix(gen.path(3), "lu", seed=rng)
    assert rng.bit_generator.state == state


def _random_blocks(G: nx.Graph, sizes, rng, both: float = 0.5):
    """Random diagonal blocks and a dict of off-diagonal blocks: every edge one way, some both
    ways, some not at all."""
    diag = [rng.standard_normal((s, s)) for s in sizes]
    off = {}
    for u, v in G.edges:
        r = rng.random()
        if r < 0.1:
            continue
        i, j = (u, v) if rng.random() < 0.5 else (v, u)
        off[(i, j)] = rng.standard_normal((sizes[i], sizes[j]))
        if r > 1 - both:
            off[(j, i)] = rng.standard_normal((sizes[j], sizes[i]))
    return diag, off


def _dense_from_blocks(sizes, diag, off) -> np.ndarray:
    off_ = offsets_of(sizes)
    M = np.zeros((off_[-1], off_[-1]))
    for v, D in enumerate(diag):
        M[off_[v]:off_[v + 1], off_[v]:off_[v + 1]] = D
    for (i, j), B in off.items():
        M[off_[i]:off_[i + 1], off_[j]:off_[j + 1]] = B
        if (j, i) not in off:
            M[off_[j]:off_[j + 1], off_[i]:off_[i + 1]] = B.T
    return M


@given(n=st.integers(1, 12), extra=st.integers(0, 10), seed=st.integers(0, 10_000),
       mixed=st.booleans(), chunk=st.sampled_from([None, 1, 7]))
@FAST
def test_from_blocks_against_dense(n, extra, seed, mixed, chunk):
    """Stacked writes (grid views for equal sizes, chunked element indices otherwise, chunks
    shrunk to a few entries here) put every block where the dense matrix has it; a 3-D
    diagonal array gives the same matrix as the list of its blocks."""
    rng = np.random.default_rng(seed)
    extra = min(extra, (n - 1) * (n - 2) // 2)
    G = gen.random_graph(n, extra_edges=extra, seed=seed) if n > 1 else nx.empty_graph(1)
    sizes = [int(s) for s in rng.integers(1, 6, n)] if mixed else [3] * n
    diag, off = _random_blocks(G, sizes, rng)
    with pytest.MonkeyPatch.context() as mp:
        if chunk is not None:
            mp.setattr(gs.matrix, "_CHUNK", chunk)
        A = gs.BlockMatrix.from_blocks(G, diag, off)
        np.testing.assert_array_equal(A.to_dense(), _dense_from_blocks(sizes, diag, off))
        as_map = gs.BlockMatrix.from_blocks(G, dict(enumerate(diag)), off)
        np.testing.assert_array_equal(as_map.data, A.data)
        if not mixed:
            stacked = gs.BlockMatrix.from_blocks(G, np.stack(diag), off)
            np.testing.assert_array_equal(stacked.data, A.data)
            np.testing.assert_array_equal(stacked.block_sizes, A.block_sizes)
            assert stacked.graph.graph["zero_diagonal"] == A.graph.graph["zero_diagonal"]


def test_from_blocks_3d_diagonal_equals_list_form():
    G = gen.ladder(6)
    rng = np.random.default_rng(2)
    D = rng.standard_normal((6, 2, 2))
    D[4] = 0.0                                     # a zero diagonal block is recorded
    off = {(0, 1): rng.standard_normal((2, 2)), (3, 2): rng.standard_normal((2, 2))}
    A = gs.BlockMatrix.from_blocks(G, D, off)
    B = gs.BlockMatrix.from_blocks(G, list(D), off)
    np.testing.assert_array_equal(A.data, B.data)
    np.testing.assert_array_equal(A.to_dense(), B.to_dense())
    assert tuple(A.graph.graph["zero_diagonal"]) == (4,) == tuple(B.graph.graph["zero_diagonal"])
    D[0] = 7.0                                     # the matrix holds a copy
    assert not np.any(A.block(0, 0) == 7.0)
    Di = np.arange(6 * 4).reshape(6, 2, 2)         # integers are converted
    np.testing.assert_array_equal(gs.BlockMatrix.from_blocks(G, Di).data[:24], np.arange(24.0))


@pytest.mark.parametrize(("shape", "match"), [((5, 2, 2), "5 diagonal blocks"),
                                              ((6, 2, 3), "not square")])
def test_from_blocks_3d_diagonal_shape_errors(shape, match):
    with pytest.raises(gs.ShapeError, match=match):
        gs.BlockMatrix.from_blocks(gen.path(6), np.zeros(shape))


def test_from_blocks_3d_diagonal_size_attribute_mismatch():
    G = gen.path(3)
    G.nodes[2]["size"] = 3
    with pytest.raises(gs.ShapeError, match="node 2"):
        gs.BlockMatrix.from_blocks(G, np.zeros((3, 2, 2)))


def test_from_blocks_reports_the_first_bad_key_in_order():
    G = gen.path(4)                               # edges 0-1, 1-2, 2-3
    diag = [np.eye(2)] * 4
    good = np.ones((2, 2))
    with pytest.raises(gs.ShapeError, match=r"block \(1, 2\) has shape \(3, 2\), expected "
                                            r"\(2, 2\)"):
        gs.BlockMatrix.from_blocks(G, diag, {(0, 1): good, (1, 2): np.ones((3, 2)),
                                             (0, 3): good})
    with pytest.raises(gs.PatternError, match=r"block \(0, 3\) is not on an edge") as exc:
        gs.BlockMatrix.from_blocks(G, diag, {(0, 1): good, (0, 3): good,
                                             (1, 2): np.ones((3, 2))})
    assert exc.value.block == (0, 3)


@pytest.mark.parametrize("key", [(1, -1), (0, 4), (-1, 0), (4, 0), ("a", 1), (0, 1.5),
                                 (2, 2)])
def test_from_blocks_pattern_error_for_keys_that_are_not_nodes(key):
    # with n = 4, (1, -1) and (0, 4) have the flat keys i * n + j of the edges (0, 3) and (1, 0)
    G = gen.path(4)
    G.add_edge(0, 3)
    with pytest.raises(gs.PatternError) as exc:
        gs.BlockMatrix.from_blocks(G, [np.eye(1)] * 4, {(0, 1): np.ones((1, 1)),
                                                        key: np.ones((1, 1))})
    assert exc.value.block == key


def test_from_blocks_numpy_integer_keys():
    G = gen.path(3)
    B = np.arange(2.0).reshape(1, 2)
    A = gs.BlockMatrix.from_blocks(G, [np.eye(1), np.eye(2), np.eye(1)],
                                   {(np.int64(0), np.int32(1)): B})
    np.testing.assert_array_equal(A.block(1, 0), B.T)


def test_from_scipy_keeps_stored_zeros_as_structure():
    # SciPy's rule: stored entries are the pattern. A Jacobian whose entry is zero at the first
    # Newton iterate must still be an edge, so that the next iterate's values fit.
    M = np.array([[4.0, 0.0, 1.0], [0.0, 4.0, 0.0], [1.0, 0.0, 4.0]])
    S = sp.csr_array(M)
    S2 = S.copy()
    S2 = sp.csr_array((np.concatenate([S2.data, [0.0, 0.0]]),
                       (np.concatenate([S.tocoo().row, [0, 1]]),
                        np.concatenate([S.tocoo().col, [1, 0]]))), shape=(3, 3))
    assert S2.nnz == S.nnz + 2
    A = gs.BlockMatrix.from_scipy(S2, 1)
    assert edge_set(A.graph) == {frozenset((0, 1)), frozenset((0, 2))}
    np.testing.assert_array_equal(A.to_dense(), M)
    F = gs.factorize(A)
    M2 = M.copy()
    M2[0, 1] = M2[1, 0] = 0.5
    F.refactor(gs.BlockMatrix.from_scipy(sp.csr_array(M2), 1, graph=A.graph))
    np.testing.assert_allclose(M2 @ F.solve(np.ones(3)), np.ones(3))
    S2.eliminate_zeros()                                  # the documented way to drop them
    assert edge_set(gs.BlockMatrix.from_scipy(S2, 1).graph) == {frozenset((0, 2))}


@given(n=st.integers(1, 12), extra=st.integers(0, 5), seed=st.integers(0, 10_000))
@FAST
def test_infer_block_sizes_finds_the_blocks_of_a_block_matrix(n, extra, seed):
    # blocks of 2..5 rows on a random graph: the inferred partition is the true one or a
    # coarsening of it (neighbouring nodes with identical neighbourhoods merge), never finer
    rng = np.random.default_rng(seed)
    extra = min(extra, n * (n - 1) // 2 - (n - 1))
    G = gen.random_graph(n, extra_edges=extra, seed=seed)
    sizes = rng.integers(2, 6, size=n)
    M = random_pattern_matrix(G, [int(s) for s in sizes], rng, density=1.0, zero_blocks=False)
    M += np.diag(np.abs(M).sum(axis=1) + 1.0)                # dense blocks, well conditioned
    inferred = gs.matrix.infer_block_sizes(sp.csr_array(M))
    assert inferred.sum() == M.shape[0]
    true_cuts = set(np.cumsum(sizes).tolist())
    assert set(np.cumsum(inferred).tolist()) <= true_cuts
    A = gs.BlockMatrix.from_scipy(sp.csr_array(M))
    np.testing.assert_array_equal(A.to_dense(), M)
    b = rng.standard_normal(M.shape[0])
    np.testing.assert_allclose(M @ gs.factorized(sp.csc_array(M))(b), b,
                               atol=1e-10 * np.abs(M).max() * np.abs(b).max())


def test_infer_block_sizes_scalar_matrix_and_graph_sizes():
    S = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(5, 5))
    assert gs.matrix.infer_block_sizes(S).tolist() == [1] * 5    # no block structure
    G = gen.path(2)
    G.nodes[0]["size"], G.nodes[1]["size"] = 2, 3
    A = gs.BlockMatrix.from_scipy(S, graph=G)                     # sizes from the graph
    assert A.block_sizes.tolist() == [2, 3]
    B = gs.random_block_matrix(gen.ladder(4), "spd", 2, seed=0)
    x = gs.factorized(B)(np.ones(8))
    np.testing.assert_allclose(B.to_dense() @ x, np.ones(8))
    with pytest.raises(gs.GraphSolveError, match="takes no block_sizes"):
        gs.factorized(B, [2, 2, 2, 2])


def test_random_block_matrix_and_from_blocks_copy_the_graph_on_first_access():
    G = gen.constraint_graph(gen.ladder(4), body_size=3, constraint_size=2)
    A = gs.random_block_matrix(G, "kkt", seed=0)
    assert A._graph is None                       # no copy made yet
    H = A.graph
    assert H is not G and H is A.graph
    assert edge_set(H) == edge_set(G)
    assert dict(H.nodes(data=True)) == {v: {**d} for v, d in G.nodes(data=True)}
    zero = tuple(v for v in range(A.n_nodes) if G.nodes[v]["role"] == "constraint")
    assert tuple(H.graph["zero_diagonal"]) == zero
    B = gs.BlockMatrix.from_blocks(gen.path(3), np.stack([np.eye(2)] * 3))
    assert B._graph is None and edge_set(B.graph) == edge_set(gen.path(3))
    assert B.graph.graph["zero_diagonal"] == ()


@given(n=st.integers(1, 80), m=st.integers(0, 200), hub=st.integers(0, 79),
       seed=st.integers(0, 10_000))
@settings(max_examples=60, deadline=None)
def test_symmetric_block_pattern_against_numpy(n, m, hub, seed):
    """The block pattern kernel behind from_scipy / from_blocks: the union of the pairs and
    their mirrors, sorted, without duplicates; a hub node with up to 79 neighbours exercises
    the long-row sort as well as the short rows' insertion sort."""
    from graphsolve.kernels.assembly import symmetric_block_pattern

    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, n, (m, 2))
    hub = hub % n
    pairs = np.concatenate([pairs, np.stack([np.full(n, hub), rng.permutation(n)], axis=1)])
    pairs = pairs[pairs[:, 0] != pairs[:, 1]].astype(np.int64)
    indptr, indices = symmetric_block_pattern(n, pairs[:, 0].copy(), pairs[:, 1].copy())
    both = np.unique(np.concatenate([pairs, pairs[:, ::-1]]), axis=0).reshape(-1, 2)
    np.testing.assert_array_equal(indptr, np.searchsorted(both[:, 0], np.arange(n + 1)))
    np.testing.assert_array_equal(indices, both[:, 1])
