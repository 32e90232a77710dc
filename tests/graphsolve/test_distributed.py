"""Batched factorizations on a real Dask ``LocalCluster`` (2 worker processes, one thread each)
against the in-process :func:`graphsolve.factorize_batch`: same solutions, log-determinants
and errors. One cluster for the module; tiny systems, no timing."""

from __future__ import annotations

import logging
import pickle
import subprocess
import sys

import numpy as np
import pytest

import graphsolve as gs
from graphsolve import generators as gen

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=logging.CRITICAL,
                                  env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _batch(kind="unsymmetric", B=53, n=12, seed=0):
    A = gs.random_block_matrix(gen.ladder(n), kind, block_size=3, seed=seed)
    rng = np.random.default_rng(seed)
    vals = A.data[None, :] * (1 + 0.1 * rng.standard_normal((B, A.data.size)))
    if kind != "unsymmetric":
        vals = 0.5 * (vals + vals[:, A.transpose_index()])
    b = rng.standard_normal((B, A.shape[0]))
    return A, vals, b


def _same(x, ref):
    """Equal to the in-process result (bitwise here; allowed: 1e-14 relative)."""
    assert x.shape == ref.shape
    assert np.max(np.abs(x - ref)) <= 1e-14 * np.max(np.abs(ref))


@pytest.mark.parametrize("kind", ["unsymmetric", "spd"])
def test_solve_batch_dask_equals_in_process(client, kind):
    A, vals, b = _batch(kind)
    F = gs.factorize_batch(A, vals)
    x = gs.distributed.solve_batch_dask(A, vals, b, client=client, chunk=7)  # uneven last
    _same(x, F.solve(b))
    b3 = np.random.default_rng(1).standard_normal((*b.shape, 2))
    _same(gs.distributed.solve_batch_dask(A, vals, b3, client=client), F.solve(b3))


def test_factors_stay_on_the_workers(client):
    A, vals, b = _batch("spd")
    ref = gs.factorize_batch(A, vals)
    with gs.distributed.factorize_batch_dask(A, vals, client=client, chunk=10) as F:
        assert F.method == ref.method == "ldlt" and F.batch_size == len(vals)
        assert F.bounds[-1] == (50, 53) and len(F.futures) == 6
        # the template and analysis went to both workers, once
        assert len(client.who_has(F._plan_future)[F._plan_future.key]) == 2
        _same(F.solve(b), ref.solve(b))
        for got, want in zip(F.slogdet(), ref.slogdet(), strict=True):
            _same(got, want)
        parts = F.gather()                       # BatchFactorization objects, pickled here
        assert [p.batch_size for p in parts] == [10] * 5 + [3]
        _same(parts[2].solve(b[20:30]), ref.solve(b)[20:30])
        F.refactor(2 * vals)
        _same(F.solve(b), 0.5 * ref.solve(b))
    assert F.futures == []
    with pytest.raises(gs.GraphSolveError, match="released"):
        F.solve(b)


@pytest.mark.parametrize("kind", ["unsymmetric", "spd"])
def test_queries_and_items_equal_the_in_process_batch(client, kind):
    A, vals, b = _batch(kind, B=23)
    ref = gs.factorize_batch(A, vals)
    with gs.distributed.factorize_batch_dask(A, vals, client=client, chunk=6) as F:
        assert len(F) == 23
        for system in gs.factor_queries.SYSTEMS:
            for trans in ("N", "T"):
                _same(F.solve(b, system, trans), ref.solve(b, system, trans))
        b3 = np.random.default_rng(2).standard_normal((*b.shape, 2))
        _same(F.solve(b3, "L", "T"), ref.solve(b3, "L", "T"))
        np.testing.assert_array_equal(F.perm, ref.perm)
        assert (F.P != ref.P).nnz == 0
        for k in (0, 7, 22, -1):                # first chunk, a middle one, the short last
            Fk = F[k]
            assert isinstance(Fk, gs.Factorization)
            for name in ("L", "D", "U"):
                assert abs(getattr(Fk, name) - getattr(ref[k], name)).max() == 0.0
            assert Fk.slogdet() == ref[k].slogdet()
            _same(Fk.solve(b[k], "U", "T"), ref[k].solve(b[k], "U", "T"))
        if kind == "spd":
            assert F.inertia() == ref.inertia()
        else:
            with pytest.raises(gs.GraphSolveError, match="ldlt"):
                F.inertia()
        with pytest.raises(gs.BatchIndexError, match="batch item 23 .* batch of 23"):
            F[23]
        with pytest.raises(ValueError, match="system"):
            F.solve(b, system="X")
        with pytest.raises(gs.DTypeError):
            F.solve(b + 1j)
        F3 = F[3]
        F.refactor(2 * vals)                    # an item copied here keeps its values
        assert F3.slogdet() == ref[3].slogdet()
        with pytest.raises(gs.GraphSolveError, match="read-only"):
            F3.refactor(A)


def test_dask_array_input_gives_a_lazy_array(client):
    A, vals, b = _batch()
    ref = gs.factorize_batch(A, vals).solve(b)
    dv = da.from_array(vals, chunks=(13, 40))               # rechunked to whole rows
    x = gs.distributed.solve_batch_dask(A, dv, b)            # auto: one pass for the symmetry
    assert isinstance(x, da.Array) and x.chunks[0] == dv.chunks[0]
    _same(x.compute(), ref)
    x = gs.distributed.solve_batch_dask(A, dv, da.from_array(b, chunks=(20, 5)), method="ldu")
    _same(client.compute(x).result(), ref)


def test_errors_name_the_item_of_the_whole_batch(client):
    A, vals, b = _batch()
    bad = vals.copy()
    bad[37] = np.nan
    with pytest.raises(gs.NonFiniteError, match="batch item 37 "):
        gs.distributed.solve_batch_dask(A, bad, b, client=client, chunk=10)
    with pytest.raises(gs.NonFiniteError, match="batch item 37 "):
        gs.distributed.factorize_batch_dask(A, bad, client=client, chunk=10)
    with pytest.raises(gs.NonFiniteError, match="batch item 37 "):
        gs.distributed.solve_batch_dask(A, da.from_array(bad, chunks=(10, -1)), b,
                                        method="ldu").compute()
    singular = vals.copy()
    singular[41] = 0.0                                       # every pivot block singular
    with pytest.raises(gs.SingularBlockError, match="batch item 41") as err:
        gs.distributed.solve_batch_dask(A, singular, b, client=client, chunk=10)
    with pytest.raises(gs.SingularBlockError) as err_local:
        gs.factorize_batch(A, singular)
    assert err.value.node == err_local.value.node
    with pytest.raises(gs.ShapeError):
        gs.distributed.solve_batch_dask(A, vals, b[:-1], client=client)
    for cvals, cb in ((vals + 1j, b), (vals, b + 1j)):     # refused here, before any task
        with pytest.raises(gs.DTypeError, match="complex"):
            gs.distributed.solve_batch_dask(A, cvals, cb, client=client)
        with pytest.raises(gs.DTypeError, match="complex"):
            gs.distributed.solve_batch_dask(A, da.from_array(cvals), da.from_array(cb))
    with pytest.raises(gs.DTypeError, match="complex"):
        gs.distributed.factorize_batch_dask(A, vals + 1j, client=client)
    with pytest.raises(gs.GraphSolveError, match="chunk"):
        gs.distributed.solve_batch_dask(A, vals, b, client=client, chunk=0)


def test_failed_refactor_leaves_no_stale_factors(client):
    """A refactor that fails on a worker (singular item) releases the old factors: solve and
    the other queries raise, as for the in-process batch, instead of answering with the
    factors of the previous values; a refused refactor (wrong shape) keeps them; a later
    good refactor works again."""
    A, vals, b = _batch("spd", B=23)
    ref = gs.factorize_batch(A, vals)
    F = gs.distributed.factorize_batch_dask(A, vals, client=client, chunk=10)
    with pytest.raises(gs.ShapeError):
        F.refactor(vals[:-1])
    _same(F.solve(b), ref.solve(b))                        # refused before any work: kept
    singular = vals.copy()
    singular[17] = 0.0
    with pytest.raises(gs.SingularBlockError, match="batch item 17"):
        F.refactor(singular)
    with pytest.raises(gs.SingularBlockError):
        ref.refactor(singular)
    for query in (lambda G: G.solve(b), lambda G: G.slogdet(), lambda G: G[0].solve(b[0]),
                  lambda G: G.inertia()):
        with pytest.raises(gs.GraphSolveError, match="last refactor failed"):
            query(ref)
        with pytest.raises(gs.GraphSolveError, match="last refactor failed"):
            query(F)
    _same(F.refactor(2 * vals).solve(b), 0.5 * gs.factorize_batch(A, vals).solve(b))
    F.release()


def _same_marked(x, ref):
    """:func:`_same` where ``ref`` has NaN rows (failed items): NaN at the same places."""
    np.testing.assert_array_equal(np.isnan(x), np.isnan(ref))
    _same(np.nan_to_num(x), np.nan_to_num(ref))


def test_errors_mark_equals_the_in_process_batch(client):
    """errors="mark" on the cluster: the same failed items (numbered in the whole batch), NaN
    rows, log-determinants, inertia and item errors as the in-process batch."""
    A, vals, b = _batch("spd", B=23)
    bad = vals.copy()
    bad[[5, 17]] = 0.0                                       # singular
    bad[11, 3] = np.nan
    ref = gs.factorize_batch(A, bad, errors="mark")
    np.testing.assert_array_equal(ref.failed, [5, 11, 17])
    with gs.distributed.factorize_batch_dask(A, bad, client=client, chunk=6,
                                             errors="mark") as F:
        assert F.errors == "mark" and F.pivot_rtol == ref.pivot_rtol
        np.testing.assert_array_equal(F.failed, ref.failed)
        np.testing.assert_array_equal(F.failed_nodes, ref.failed_nodes)
        _same_marked(F.solve(b), ref.solve(b))
        _same_marked(F.solve(b, "L", "T"), ref.solve(b, "L", "T"))
        for got, want in zip(F.slogdet(), ref.slogdet(), strict=True):
            _same_marked(got, want)
        assert F.inertia() == ref.inertia() and F.inertia()[17] is None
        with pytest.raises(gs.SingularBlockError, match="batch item 17: ") as err:
            F[17].solve(b[17])
        assert err.value.node == ref.failed_nodes[17] >= 0
        with pytest.raises(gs.NonFiniteError, match="batch item 11 "):
            F[11].slogdet()
        assert F[16].slogdet() == ref[16].slogdet()
        F.refactor(vals)                                     # errors="mark" kept: no failures
        assert F.failed.size == 0
        _same(F.solve(b), gs.factorize_batch(A, vals).solve(b))
        F.refactor(bad)
        np.testing.assert_array_equal(F.failed, [5, 11, 17])
        with pytest.raises(gs.SingularBlockError, match="batch item 5"):
            F.refactor(bad, errors="raise")
    _same_marked(gs.distributed.solve_batch_dask(A, bad, b, client=client, chunk=7,
                                                 errors="mark"), ref.solve(b))
    x = gs.distributed.solve_batch_dask(A, da.from_array(bad, chunks=(10, -1)), b,
                                        method="ldlt", errors="mark")
    _same_marked(x.compute(), ref.solve(b))


def test_pivot_rtol_on_dask(client):
    """A nearly singular item: marked with the default rule, solved with pivot_rtol=0, as in
    process."""
    A, vals, b = _batch(B=12)
    vals = vals.copy()
    vals[9, A.diag_ptr[0]:A.diag_ptr[1]] = np.diag([1.0, 1.0, 1e-15]).ravel()
    for e in np.flatnonzero((A.edges == 0).any(axis=1)):     # node 0 decoupled in item 9
        vals[9, A.edge_ptr[e]:A.edge_ptr[e + 1]] = 0.0
    for rtol, failed in ((gs.kernels.reference.PIVOT_RTOL, [9]), (0.0, [])):
        ref = gs.factorize_batch(A, vals, ordering="natural", pivot_rtol=rtol, errors="mark")
        np.testing.assert_array_equal(ref.failed, failed)
        an = ref.analysis
        x = gs.distributed.solve_batch_dask(A, vals, b, client=client, chunk=5, analysis=an,
                                            pivot_rtol=rtol, errors="mark")
        _same_marked(x, ref.solve(b))
        with gs.distributed.factorize_batch_dask(A, vals, client=client, chunk=5, analysis=an,
                                                 pivot_rtol=rtol, errors="mark") as F:
            assert F.pivot_rtol == rtol
            np.testing.assert_array_equal(F.failed, failed)
            if not failed:
                assert F[9].pivot_rtol == 0.0
    with pytest.raises(gs.SingularBlockError, match="batch item 9"):
        gs.distributed.solve_batch_dask(A, vals, b, client=client, chunk=5, ordering="natural")


def test_without_a_client_or_without_dask(monkeypatch):
    A, vals, b = _batch(B=4)

    def none():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "get_client", none)
    with pytest.raises(gs.GraphSolveError, match="no Dask client"):
        gs.distributed.solve_batch_dask(A, vals, b)
    monkeypatch.setitem(sys.modules, "distributed", None)     # as if not installed
    with pytest.raises(ImportError, match=r"pip install graphsolve\[dask\]"):
        gs.distributed.factorize_batch_dask(A, vals)


def test_batch_factorization_pickles():
    A, vals, b = _batch(B=5)
    F = gs.factorize_batch(A, vals)
    G = pickle.loads(pickle.dumps(F))
    assert np.array_equal(G.solve(b), F.solve(b))
    assert np.array_equal(G.refactor(2 * vals).solve(b), F.refactor(2 * vals).solve(b))


def test_importing_graphsolve_does_not_import_dask():
    code = ("import sys, graphsolve; "
            "assert not {'dask', 'distributed'} & set(sys.modules), 'dask imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
