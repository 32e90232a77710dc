"""Batched factorization against scipy's spsolve, item by item, on both backends."""

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import graphsolve as gs
from graphsolve import generators as gen


def _batch(G, kind, B=5, seed=0, block_size=3):
    A = gs.random_block_matrix(G, kind, block_size=block_size, seed=seed)
    rng = np.random.default_rng(seed)
    vals = A.data[None, :] * (1 + 0.1 * rng.standard_normal((B, A.data.size)))
    if kind != "unsymmetric":                     # keep every item symmetric
        t = A.transpose_index()
        vals = 0.5 * (vals + vals[:, t])
    return A, vals


def _oracle(A, vals, b):
    return np.stack([spla.spsolve(A.with_data(v).to_scipy().tocsc(), bk)
                     for v, bk in zip(vals, b, strict=True)])


@pytest.mark.parametrize("G", [gen.random_tree(12, seed=1), gen.ladder(10), gen.net(3),
                               gen.random_graph(12, extra_edges=3, seed=2, components=2)],
                         ids=["tree", "ladder", "net", "forest"])
@pytest.mark.parametrize("kind", ["spd", "unsymmetric"])
def test_batch_matches_spsolve(G, kind, backend):
    A, vals = _batch(G, kind)
    F = gs.factorize_batch(A, vals, backend=backend)
    assert F.method == ("ldlt" if kind == "spd" else "ldu")
    b = np.random.default_rng(3).standard_normal((len(vals), A.shape[0]))
    x = F.solve(b)
    assert x.shape == b.shape
    assert np.allclose(x, _oracle(A, vals, b), rtol=1e-9, atol=1e-12)
    b3 = np.random.default_rng(4).standard_normal((len(vals), A.shape[0], 2))
    x3 = F.solve(b3)
    for j in range(2):
        assert np.allclose(x3[:, :, j], _oracle(A, vals, b3[:, :, j]), rtol=1e-9, atol=1e-12)


def test_batch_kkt_and_refactor(backend):
    G = gen.constraint_graph(gen.ladder(8))
    A, vals = _batch(G, "kkt", B=4, block_size=6)
    F = gs.factorize_batch(A, vals, backend=backend)
    b = np.ones((4, A.shape[0]))
    assert np.allclose(F.solve(b), _oracle(A, vals, b), rtol=1e-8, atol=1e-12)
    vals2 = vals[::-1].copy()
    F.refactor(vals2)
    assert np.allclose(F.solve(b), _oracle(A, vals2, b), rtol=1e-8, atol=1e-12)
    assert F.stats["batch_size"] == 4


def test_batch_equals_single_factorizations(backend):
    A, vals = _batch(gen.ladder(12), "unsymmetric", B=3)
    F = gs.factorize_batch(A, [A.with_data(v) for v in vals], backend=backend)
    b = np.arange(3 * A.shape[0], dtype=float).reshape(3, -1)
    for k in range(3):
        single = gs.factorize(A.with_data(vals[k]), backend=backend)
        assert np.allclose(F.solve(b)[k], single.solve(b[k]), rtol=1e-12, atol=1e-14)
    assert F.stats["block_ops"] == single.stats["block_ops"]


def test_batch_singular_item_is_named(backend):
    A, vals = _batch(gen.path(5), "unsymmetric", B=3)
    vals = vals.copy()
    vals[1, A.diag_ptr[0]:A.diag_ptr[1]] = 0.0     # node 0 is eliminated first: zero pivot
    with pytest.raises(gs.SingularBlockError, match="batch item 1") as exc:
        gs.factorize_batch(A, vals, ordering="natural", backend=backend)
    assert exc.value.node == 0


def test_batch_bad_input():
    A, vals = _batch(gen.path(4), "unsymmetric", B=2)
    with pytest.raises(gs.ShapeError):
        gs.factorize_batch(A, vals[:, :-1])
    bad = vals.copy()
    bad[1, 0] = np.nan
    with pytest.raises(gs.NonFiniteError, match="batch item 1"):
        gs.factorize_batch(A, bad)
    with pytest.raises(gs.GraphSolveError, match="ldlt"):
        gs.factorize_batch(A, vals, method="ldlt")
    F = gs.factorize_batch(A, vals)
    with pytest.raises(gs.ShapeError):
        F.solve(np.ones((3, A.shape[0])))
    with pytest.raises(gs.ShapeError):
        gs.factorize_batch(A, [gs.random_block_matrix(gen.path(5), "spd", block_size=3)])


def test_batch_values_of_other_dtypes():
    """Complex or object values are refused before any work (never cast to their real part);
    float32 and integer values are factored in float64."""
    import warnings

    A, vals = _batch(gen.path(4), "unsymmetric", B=2)
    b = np.ones((2, A.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no ComplexWarning on the way
        for bad in (vals + 1j, vals.astype(object)):
            with pytest.raises(gs.DTypeError, match="values"):
                gs.factorize_batch(A, bad)
        F = gs.factorize_batch(A, vals)
        with pytest.raises(gs.DTypeError, match="complex"):
            F.refactor(vals + 0j)
        np.testing.assert_array_equal(F.solve(b), gs.factorize_batch(A, vals).solve(b))
    F32 = gs.factorize_batch(A, vals.astype(np.float32))
    np.testing.assert_allclose(F32.solve(b), _oracle(A, vals.astype(np.float32).astype(float), b),
                               rtol=1e-9)


def test_batch_workers_give_the_same_factors():
    A = gs.random_block_matrix(gen.ladder(10), "unsymmetric", block_size=3, seed=0)
    vals = np.stack([A.data * (1 + 0.1 * k) for k in range(5)])
    b = np.ones((5, A.shape[0]))
    ref = gs.factorize_batch(A, vals).solve(b)
    for workers in (1, 2, 8):
        F = gs.factorize_batch(A, vals, workers=workers, backend="compiled")
        assert F.workers == workers
        np.testing.assert_array_equal(F.solve(b), ref)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(gs.GraphSolveError, match="workers"):
            gs.factorize_batch(A, vals, workers=bad)


def test_factorizations_in_python_threads_match_sequential_results():
    """The compiled kernels release the GIL (nogil=True): factorizations of separate matrices
    in a thread pool give exactly the sequential results (separate buffers per thread)."""
    from concurrent.futures import ThreadPoolExecutor

    from graphsolve.kernels import compiled, solve_kernels
    from graphsolve.kernels import specializations as sp

    mats = [gs.random_block_matrix(G, kind, block_size=6, seed=s) for s, (G, kind) in enumerate(
        [(gen.net(8), "spd"), (gen.random_tree(60, seed=1), "unsymmetric"),
         (gen.ladder(40), "spd"), (gen.crystal(4), "unsymmetric")] * 2)]
    b = [np.arange(A.shape[0], dtype=float) for A in mats]

    def run(k):
        F = gs.factorize(mats[k], backend="compiled")
        return F.refactor(mats[k]).solve(b[k])

    sequential = [run(k) for k in range(len(mats))]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(run, range(len(mats))))
    for x, y in zip(sequential, threaded, strict=True):
        np.testing.assert_array_equal(x, y)
    tables = (sp._FACTOR, sp._SOLVE, sp._SOLVE_SYM, sp._SOLVE_VECTOR, sp._SOLVE_IMPLICIT,
              sp._FACTOR_BATCH)
    for kernel in (*(k for t in tables for k in t.values()), solve_kernels._solve_sym_vector,
                   compiled.refactor_solve):
        assert kernel.targetoptions.get("nogil") is True, kernel


# ---------------------------------------------------------------------- pivot_rtol, errors
def _nearly_singular_item(B=5, k=2):
    """A path batch (natural order: node 0 first) whose item ``k`` has the pivot block of node
    0 equal to diag(1, 1, 1e-15): singular by the default rule (10 eps · 3 · 1), not by 0."""
    A, vals = _batch(gen.path(5), "unsymmetric", B=B)
    vals = vals.copy()
    vals[k, A.diag_ptr[0]:A.diag_ptr[1]] = np.diag([1.0, 1.0, 1e-15]).ravel()
    for e in np.flatnonzero((A.edges == 0).any(axis=1)):     # node 0 decoupled in item k:
        vals[k, A.edge_ptr[e]:A.edge_ptr[e + 1]] = 0.0       # no growth through the pivot
    return A, vals


def test_batch_pivot_rtol_decides_which_items_fail(backend):
    import pickle

    A, vals = _nearly_singular_item()
    single = A.with_data(vals[2])
    with pytest.raises(gs.SingularBlockError, match="batch item 2") as exc:
        gs.factorize_batch(A, vals, ordering="natural", backend=backend)
    with pytest.raises(gs.SingularBlockError) as exc_single:
        gs.factorize(single, ordering="natural", backend=backend)
    assert exc.value.node == exc_single.value.node == 0
    F = gs.factorize_batch(A, vals, ordering="natural", backend=backend, pivot_rtol=0.0)
    assert F.pivot_rtol == 0.0 and F.failed.size == 0
    assert F[2].pivot_rtol == 0.0                        # the item view inherits it
    assert gs.factorize_batch(A, vals[:1], backend=backend)[0].pivot_rtol == \
        gs.kernels.reference.PIVOT_RTOL
    ref = gs.factorize(single, ordering="natural", backend=backend, pivot_rtol=0.0)
    b = np.ones((5, A.shape[0]))
    x2 = F.solve(b)[2]
    np.testing.assert_allclose(x2, ref.solve(b[2]), rtol=1e-12)
    np.testing.assert_allclose(x2, np.linalg.solve(single.to_dense(), b[2]), rtol=1e-9)
    assert F.slogdet()[1][2] == pytest.approx(ref.slogdet()[1], rel=1e-12)
    np.testing.assert_allclose(F.solve(b)[[0, 1, 3, 4]], gs.factorize_batch(
        A, vals[[0, 1, 3, 4]], ordering="natural", backend=backend).solve(b[:4]), rtol=1e-12)
    F.refactor(vals)                                     # refactor keeps the batch's rule
    G = pickle.loads(pickle.dumps(F))
    assert G.pivot_rtol == 0.0 and G[2].pivot_rtol == 0.0
    G.refactor(vals)
    # with errors="mark", the default rule marks the item, rtol=0 does not
    M = gs.factorize_batch(A, vals, ordering="natural", backend=backend, errors="mark")
    np.testing.assert_array_equal(M.failed, [2])
    np.testing.assert_array_equal(M.failed_nodes, [-1, -1, 0, -1, -1])
    for bad in (-1.0, np.nan, "small"):
        with pytest.raises(gs.GraphSolveError, match="pivot_rtol"):
            gs.factorize_batch(A, vals, pivot_rtol=bad)


@pytest.mark.parametrize("kind", ["unsymmetric", "spd"])
def test_batch_errors_mark_one_bad_item_of_five(backend, kind):
    A, vals = _batch(gen.ladder(6), kind, B=5)
    vals = vals.copy()
    vals[3] = 0.0                                  # every pivot block singular
    F = gs.factorize_batch(A, vals, backend=backend, errors="mark")
    assert F.errors == "mark" and F.method == ("ldlt" if kind == "spd" else "ldu")
    with pytest.raises(gs.SingularBlockError) as exc:
        gs.factorize(A.with_data(vals[3]), method=F.method, analysis=F.analysis,
                     backend=backend)
    node = exc.value.node
    np.testing.assert_array_equal(F.failed, [3])
    assert F.failed.dtype.kind == "i"
    np.testing.assert_array_equal(F.failed_nodes, [-1, -1, -1, node, -1])
    b = np.random.default_rng(5).standard_normal((5, A.shape[0]))
    x = F.solve(b)
    assert np.isnan(x[3]).all() and np.isfinite(np.delete(x, 3, axis=0)).all()
    x3 = F.solve(np.stack([b, 2 * b], axis=-1))
    assert np.isnan(x3[3]).all()
    sign, logdet = F.slogdet()
    assert np.isnan(sign[3]) and np.isnan(logdet[3])
    for k in (0, 1, 2, 4):
        M = A.with_data(vals[k])
        single = gs.factorize(M, method=F.method, analysis=F.analysis, backend=backend)
        np.testing.assert_allclose(x[k], single.solve(b[k]), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(x[k], np.linalg.solve(M.to_dense(), b[k]), rtol=1e-9,
                                   atol=1e-12)
        np.testing.assert_allclose(x3[k, :, 1], 2 * x[k], rtol=1e-12, atol=1e-14)
        assert (sign[k], logdet[k]) == pytest.approx(single.slogdet(), rel=1e-12)
        np.testing.assert_allclose(F.solve(b, "L", "T")[k], single.solve(b[k], "L", "T"),
                                   rtol=1e-12, atol=1e-14)
        assert abs(F[k].L - single.L).max() <= 1e-12 * abs(single.L).max()
    assert np.isnan(F.solve(b, "U")[3]).all()
    for query in (lambda G: G.solve(b[3]), lambda G: G.slogdet(), lambda G: G.L,
                  lambda G: G.solve(b[3], "D")):
        with pytest.raises(gs.SingularBlockError, match=f"batch item 3: .*node {node}") as err:
            query(F[3])
        assert err.value.node == node
    if kind == "spd":
        inertia = F.inertia()
        assert inertia[3] is None
        assert inertia[0] == gs.factorize(A.with_data(vals[0]), method="ldlt").inertia()
    # a refactor without bad items clears the marks; errors="raise" for one call raises
    F.refactor(vals[[0, 1, 2, 4, 0]])
    assert F.failed.size == 0 and (F.failed_nodes == -1).all()
    with pytest.raises(gs.SingularBlockError, match="batch item 3"):
        F.refactor(vals, errors="raise")
    np.testing.assert_array_equal(F.failed, [3])
    with pytest.raises(gs.GraphSolveError, match="last refactor failed"):
        F.solve(b)
    F.refactor(vals)                                     # the batch's errors: "mark"
    np.testing.assert_array_equal(F.failed, [3])


def test_batch_errors_mark_nonfinite_and_unsymmetric_items(backend):
    A, vals = _batch(gen.ladder(6), "spd", B=4)
    bad = vals.copy()
    bad[1, 5] = np.nan
    bad[2, -1] *= 1.5                              # one off-diagonal entry: unsymmetric
    with pytest.raises(gs.NonFiniteError, match="batch item 1"):
        gs.factorize_batch(A, bad, method="ldlt", backend=backend)
    F = gs.factorize_batch(A, bad, method="ldlt", backend=backend, errors="mark")
    np.testing.assert_array_equal(F.failed, [1, 2])
    np.testing.assert_array_equal(F.failed_nodes, [-1, -1, -1, -1])
    b = np.ones((4, A.shape[0]))
    x = F.solve(b)
    assert np.isnan(x[1:3]).all()
    for k in (0, 3):
        np.testing.assert_allclose(
            x[k], gs.factorize(A.with_data(vals[k]), method="ldlt", analysis=F.analysis,
                               backend=backend).solve(b[k]), rtol=1e-12, atol=1e-14)
    with pytest.raises(gs.NonFiniteError, match="batch item 1 "):
        F[1].solve(b[1])
    with pytest.raises(gs.GraphSolveError, match="batch item 2 is not"):
        F[2].slogdet()
    assert F.inertia()[1] is None and F.inertia()[2] is None
    # LDU: the NaN item is marked, the unsymmetric one is an ordinary item
    G = gs.factorize_batch(A, bad, backend=backend, errors="mark")
    assert G.method == "ldu"
    np.testing.assert_array_equal(G.failed, [1])
    # "auto" is decided on the finite items: a NaN item does not turn the batch into LDU
    H = gs.factorize_batch(A, np.concatenate([vals[:2], bad[1:2]]), backend=backend,
                           errors="mark")
    assert H.method == "ldlt"
    np.testing.assert_array_equal(H.failed, [2])
    with pytest.raises(gs.GraphSolveError, match="errors"):
        gs.factorize_batch(A, vals, errors="ignore")


def test_batch_errors_raise_lists_every_failed_item(backend):
    A, vals = _batch(gen.path(5), "unsymmetric", B=4)
    F = gs.factorize_batch(A, vals, backend=backend)
    assert F.errors == "raise" and F.failed.size == 0
    np.testing.assert_array_equal(F.failed_nodes, [-1] * 4)
    sing = vals.copy()
    sing[[1, 3]] = 0.0
    with pytest.raises(gs.SingularBlockError, match="batch item 1"):
        F.refactor(sing)
    np.testing.assert_array_equal(F.failed, [1, 3])


def test_marked_batch_pickles():
    import pickle

    A, vals = _batch(gen.ladder(6), "unsymmetric", B=5)
    vals = vals.copy()
    vals[1] = 0.0
    F = gs.factorize_batch(A, vals, errors="mark")
    G = pickle.loads(pickle.dumps(F))
    b = np.ones((5, A.shape[0]))
    np.testing.assert_array_equal(G.solve(b), F.solve(b))          # NaN rows equal too
    np.testing.assert_array_equal(G.failed, [1])
    np.testing.assert_array_equal(G.failed_nodes, F.failed_nodes)
    assert G.errors == "mark"
    with pytest.raises(gs.SingularBlockError, match="batch item 1"):
        G[1].solve(b[1])
    F1 = pickle.loads(pickle.dumps(F[1]))                          # a standalone copy
    with pytest.raises(gs.SingularBlockError, match="batch item 1") as err:
        F1.slogdet()
    assert err.value.node == F.failed_nodes[1]
    F0 = pickle.loads(pickle.dumps(F[0]))
    np.testing.assert_allclose(F0.solve(b[0]), F.solve(b)[0], rtol=1e-12)
