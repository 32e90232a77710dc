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
