"""The supernodal LDLᵀ kernel (:mod:`graphsolve.kernels.supernodal`) against the reference
backend and scipy: forced on for random graphs with cycles (thresholds set to zero), with the
same factors, operation counts, singular-pivot positions and non-finite errors as the block
kernel; and chosen automatically only where it pays."""

import numpy as np
import pytest
import scipy.sparse.linalg as spla
from hypothesis import given, settings
from hypothesis import strategies as st

import graphsolve as gs
from graphsolve import generators as gen
from graphsolve.kernels import compiled as C
from graphsolve.kernels import supernodal as S


@pytest.fixture
def forced(monkeypatch):
    """Every LDLᵀ factor with fill runs the supernodal kernel."""
    monkeypatch.setattr(C, "SUPERNODAL_MIN_FLOPS_PER_NODE", 0)
    monkeypatch.setattr(C, "SUPERNODAL_MIN_WIDE_SHARE", 0.0)
    monkeypatch.setattr(C, "SUPERNODAL_EXCLUDED_SIZES", frozenset())


def _random_matrix(n, extra, seed, sizes, kind):
    G = gen.random_graph(n, extra_edges=extra, seed=seed)
    rng = np.random.default_rng(seed)
    if sizes == "mixed":
        for v in G:
            G.nodes[v]["size"] = int(rng.integers(1, 8))
        return gs.random_block_matrix(G, kind, block_size=1, seed=seed), rng
    return gs.random_block_matrix(G, kind, block_size=sizes, seed=seed), rng


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40), extra=st.integers(1, 60), seed=st.integers(0, 10_000),
       sizes=st.sampled_from(["mixed", 3, 6]), ordering=st.sampled_from(["amd", "brudigam"]),
       nrhs=st.integers(1, 2))
def test_supernodal_equals_reference(n, extra, seed, sizes, ordering, nrhs):
    """spd matrices on random connected graphs with cycles: same L and D as the reference
    backend, same block counts, solutions that match scipy's."""
    extra = min(extra, n * (n - 1) // 2 - (n - 1))
    A, rng = _random_matrix(n, extra, seed, sizes, "spd")
    an = gs.analyze(A, ordering)
    b = rng.standard_normal((A.shape[0], nrhs))
    Fr = gs.factorize(A, method="ldlt", analysis=an, backend="reference")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "SUPERNODAL_MIN_FLOPS_PER_NODE", 0)
        mp.setattr(C, "SUPERNODAL_MIN_WIDE_SHARE", 0.0)
        mp.setattr(C, "SUPERNODAL_EXCLUDED_SIZES", frozenset())
        Fc = gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
        assert C.use_supernodal(an, Fc._work) == bool(an.sched_ptr[-1] > 0)
        x = Fc.solve(b)
        Fc.refactor(A)                      # refactor: the load goes through the same kernel
        x2 = Fc.solve(b)
    scale = np.abs(A.data).max()
    for name in ("L", "D"):
        diff = abs(getattr(Fr, name) - getattr(Fc, name)).max()
        assert diff <= 1e-11 * scale, (name, diff)
    assert Fr.stats["block_ops"] == Fc.stats["block_ops"]
    x_ref = spla.spsolve(A.to_scipy().tocsc(), b)
    assert np.allclose(x, x_ref.reshape(x.shape), rtol=1e-9, atol=1e-11)
    np.testing.assert_array_equal(x, x2)


@pytest.mark.parametrize("family", ["net", "crystal"])
def test_supernodal_on_grids(forced, family):
    """A quasi-definite KKT matrix on a net (bodies 6, constraints 3: indefinite pivots take
    the LU branch inside the panels) and an spd crystal whose widest supernode spans several
    column blocks of :data:`~graphsolve.kernels.supernodal.PANEL_BLOCK` columns (the BLAS
    paths): factors against the reference backend, solution against scipy's."""
    if family == "net":
        G = gen.constraint_graph(gen.net(5), body_size=6, constraint_size=3)
        A = gs.random_block_matrix(G, "kkt", seed=3)
    else:
        A = gs.random_block_matrix(gen.crystal(5), "spd", block_size=6, seed=3)
    an = gs.analyze(A, "amd")
    sn, _, _ = S.plan(an)
    bounds = list(zip(sn[0][:-1], sn[0][1:], strict=True))
    widths = [int(an.block_sizes[an.order[a:b]].sum()) for a, b in bounds]
    widest = max(widths)
    if family == "crystal":
        assert widest > 2 * S.PANEL_BLOCK
        # both R × R updates run: BLAS panels for wide supernodes, block products for narrow
        has_rows = np.diff(sn[1]) > 0
        wide = np.array(widths) >= S.BLAS_UPDATE_MIN_WIDTH
        assert np.any(wide & has_rows) and np.any(~wide & has_rows)
    Fr = gs.factorize(A, method="ldlt", analysis=an, backend="reference")
    Fc = gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
    for name in ("L", "D"):
        ref = getattr(Fr, name)
        assert abs(ref - getattr(Fc, name)).max() <= 1e-10 * abs(ref).max()
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    x = Fc.solve(b)
    assert np.allclose(x, spla.spsolve(A.to_scipy().tocsc(), b), rtol=1e-8, atol=1e-10)
    assert Fr.stats["block_ops"] == Fc.stats["block_ops"]


def test_plan_covers_every_update_pair():
    """Fundamental supernodes: consecutive positions, each supernode's later neighbours form a
    clique of the filled graph, so every R × R pair exists as a factor pair (no target -1), and
    the panels' updates plus the R × R products are exactly the update triples of the block
    kernel's schedule."""
    an = gs.analyze(gen.crystal(5), "amd")
    sn, _, share = S.plan(an, relax=False)
    sn_ptr, row_ptr, rows, tgt_ptr, tgt = sn[:5]
    assert not sn[5].any()                                  # no panel has structural zeros
    assert sn_ptr[0] == 0 and sn_ptr[-1] == an.n_nodes and np.all(np.diff(sn_ptr) >= 1)
    assert np.all(tgt >= 0)
    assert 0.0 <= share <= 1.0
    pairs = set()
    for s in range(sn_ptr.size - 1):
        R = rows[row_ptr[s]:row_ptr[s + 1]]
        assert np.all(np.diff(an.position[R]) > 0)         # in elimination order
        cols = an.order[sn_ptr[s]:sn_ptr[s + 1]]
        for q in range(1, R.size):
            for b in range(q):
                e = tgt[tgt_ptr[s] + q * (q - 1) // 2 + b]
                assert (an.fe_child[e], an.fe_parent[e]) == (R[b], R[q])
                pairs.update((int(R[q]), int(R[b]), int(c)) for c in cols)
        for a, c2 in enumerate(cols):      # inside the panel: c2 < c1 < i, c1 in S
            for b, c1 in enumerate(cols[a + 1:], start=a + 1):
                pairs.update((int(i), int(c1), int(c2)) for i in list(cols[b + 1:]) + list(R))
    # the block kernel's triples (i, c1, c2): T_i,c1 -= L_i,c2 D L_c1,c2ᵀ
    sched = {(int(an.fe_parent[ic2]), int(an.fe_parent[c1c2]), int(an.fe_child[ic2]))
             for ic2, c1c2 in zip(an.sched_ic2, an.sched_c1c2, strict=True)}
    assert pairs == sched



@pytest.mark.parametrize("relax", [False, True])
def test_row_runs_are_the_panel_blocks(relax):
    """The runs a panel is loaded and written back along (:func:`S._row_runs`) are, over the
    panel's rows, exactly the factor pairs whose column lies in the supernode, each in the
    row it belongs to: no block missed, none from another supernode, none twice."""
    G = gen.crystal(5)
    rng = np.random.default_rng(3)
    for v in G:
        G.nodes[v]["size"] = int(rng.integers(1, 8))
    an = gs.analyze(gs.random_block_matrix(G, "spd", block_size=1, seed=2), "amd")
    sn = S.plan(an, relax=relax)[0]
    sn_ptr, row_ptr, rows, _, _, padded, run_ptr, run_lo, run_hi = sn
    assert padded.any() == relax
    seen = np.zeros(an.fe_child.size, int)
    for s in range(sn_ptr.size - 1):
        cols = an.order[sn_ptr[s]:sn_ptr[s + 1]]
        panel = list(cols) + list(rows[row_ptr[s]:row_ptr[s + 1]])
        assert run_ptr[s + 1] - run_ptr[s] == len(panel)
        for b, p in enumerate(panel):
            e = np.arange(run_lo[run_ptr[s] + b], run_hi[run_ptr[s] + b])
            seen[e] += 1
            assert np.all(an.fe_parent[e] == p)
            assert np.all(np.isin(an.fe_child[e], cols))
    assert np.all(seen == 1)                                  # every pair, once


@pytest.mark.parametrize("size", [3, 6, "mixed"])
def test_relaxed_supernodes(forced, size):
    """Relaxed amalgamation merges runs of consecutive fundamental supernodes along the
    elimination tree into panels with structural zeros (flagged ``padded``), which stay exactly
    zero: the factor equals the reference backend's and the fundamental plan's. Thresholds of
    zero merge nothing."""
    G = gen.crystal(5)
    if size == "mixed":
        rng = np.random.default_rng(4)
        for v in G:
            G.nodes[v]["size"] = int(rng.integers(1, 8))
    A = gs.random_block_matrix(G, "spd", block_size=1 if size == "mixed" else size, seed=9)
    an = gs.analyze(A, "amd")
    fund = S.plan(an, relax=False)[0]
    relaxed = S.plan(an)[0]
    assert relaxed[0].size < fund[0].size and relaxed[5].any()
    assert set(relaxed[0]) <= set(fund[0])                  # unions of fundamental ones
    for s in range(relaxed[0].size - 1):                    # ... along the elimination tree
        for k in range(relaxed[0][s] + 1, relaxed[0][s + 1]):
            if k in set(fund[0]):
                assert an.etree[an.order[k - 1]] == an.order[k]
    none = S.plan(an, relax=((0, 0, 0), (0.0, 0.0, 0.0)))[0]
    assert np.array_equal(none[0], fund[0]) and not none[5].any()
    Fr = gs.factorize(A, method="ldlt", analysis=an, backend="reference")
    Fc = gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
    assert Fc._work[2]["supernodal"][0][0].size == relaxed[0].size
    Ff = gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
    Ff._work[2]["supernodal"] = S.plan(an, relax=False)
    Ff.refactor(A)
    for name in ("L", "D"):
        ref = getattr(Fr, name)
        assert abs(ref - getattr(Fc, name)).max() <= 1e-11 * abs(ref).max()
        assert abs(getattr(Ff, name) - getattr(Fc, name)).max() <= 1e-12 * abs(ref).max()
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    assert np.allclose(A.to_scipy() @ Fc.solve(b), b, rtol=1e-9, atol=1e-9)


def test_singular_pivot_position_matches_block_kernel(forced):
    """A pivot made singular inside a wide supernode is reported at the same node, by both
    kernels, and the factorization refuses to solve."""
    A = gs.random_block_matrix(gen.crystal(3), "spd", seed=0)
    an = gs.analyze(A, "amd")
    node = int(an.order[-3])               # inside the last (widest) supernode
    sn, _, _ = S.plan(an)
    assert sn[0][-2] <= an.n_nodes - 3
    Fc = gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
    # make the Schur complement at `node` singular: A_nn := A_nn - D_node + diag(1, .., 1, 0)
    r = _rows(an, node)
    target = np.eye(r.size)
    target[-1, -1] = 0.0
    A.block(node, node)[:] += target - Fc.D.toarray()[np.ix_(r, r)]
    for backend in ("compiled", "reference"):
        with pytest.raises(gs.SingularBlockError) as err:
            gs.factorize(A, method="ldlt", analysis=an, backend=backend)
        assert err.value.node == node
    with pytest.raises(gs.SingularBlockError):
        Fc.refactor(A)
    with pytest.raises(gs.GraphSolveError):
        Fc.solve(np.ones(A.shape[0]))


def _rows(an, node):
    """Scalar rows of ``node`` in the factors' permuted numbering."""
    sizes = an.block_sizes[an.order]
    start = int(np.concatenate([[0], np.cumsum(sizes)])[an.position[node]])
    return np.arange(start, start + an.block_sizes[node])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_values_raise(forced, bad):
    A = gs.random_block_matrix(gen.crystal(3), "spd", seed=1)
    Fc = gs.factorize(A, method="ldlt", ordering="amd", backend="compiled")
    u, v = map(int, A.edges[0])
    A.block(u, v)[0, 1] = bad
    A.block(v, u)[1, 0] = bad
    with pytest.raises(gs.NonFiniteError):
        Fc.refactor(A)


def test_automatic_choice():
    """Chosen for grids and crystals of 3×3 blocks under minimum degree (wide supernodes),
    not for trees, ladders, small grids, the Brüdigam order on grids (single-node supernodes)
    or 6×6 blocks (the vectorized block kernel is faster)."""
    for G in (gen.crystal(8), gen.crystal(10)):
        an = gs.analyze(gs.random_block_matrix(G, "spd", block_size=3), "amd")
        assert C.use_supernodal(an, C.work_buffers(an)), G
    for G, ordering, size in ((gen.path(50), "brudigam", 3), (gen.ladder(200), "amd", 3),
                              (gen.crystal(6), "brudigam", 3), (gen.net(12), "amd", 3),
                              (gen.crystal(4), "amd", 3), (gen.crystal(8), "amd", 6),
                              (gen.net(30), "amd", 6)):
        an = gs.analyze(gs.random_block_matrix(G, "spd", block_size=size), ordering)
        assert not C.use_supernodal(an, C.work_buffers(an)), (G, ordering, size)


def test_automatic_choice_six_by_six_from_large_factors(monkeypatch):
    """6×6 blocks keep the vectorized block kernel below SUPERNODAL_VECTORIZED_MIN_FLOPS and
    take the supernodal kernel above it (threshold lowered here instead of a huge crystal)."""
    an = gs.analyze(gs.random_block_matrix(gen.crystal(8), "spd", block_size=6), "amd")
    assert not C.use_supernodal(an, C.work_buffers(an))
    monkeypatch.setattr(C, "SUPERNODAL_VECTORIZED_MIN_FLOPS", an.flops("ldlt"))
    assert C.use_supernodal(an, C.work_buffers(an))


def test_indefinite_pivots_take_the_lu_branch(forced):
    """Symmetric indefinite pivot blocks (one flipped diagonal entry per node) are factored by
    LU with partial pivoting inside the panels, as in the block kernel."""
    A = gs.random_block_matrix(gen.crystal(4), "spd", block_size=6, seed=5)
    for v in range(A.n_nodes):
        A.block(v, v)[0, 0] *= -3.0
    an = gs.analyze(A, "amd")
    Fr = gs.factorize(A, method="ldlt", analysis=an, backend="reference")
    Fc = gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
    lu_pivots = Fc._piv[an.x_ptr[:-1]] >= 0
    assert lu_pivots.sum() > an.n_nodes // 2
    for name in ("L", "D"):
        ref = getattr(Fr, name)
        assert abs(ref - getattr(Fc, name)).max() <= 1e-9 * abs(ref).max()
    b = np.random.default_rng(2).standard_normal(A.shape[0])
    assert np.allclose(Fc.solve(b), spla.spsolve(A.to_scipy().tocsc(), b), rtol=1e-7, atol=1e-9)


def test_split_supernodes(forced):
    """Runs longer than ``max_width`` are split into chains of supernodes: same factor."""
    A = gs.random_block_matrix(gen.crystal(4), "spd", block_size=3, seed=7)
    an = gs.analyze(A, "amd")
    Fr = gs.factorize(A, method="ldlt", analysis=an, backend="reference")
    Fc = gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
    whole = S.plan(an)[0][0]
    Fc._work[2]["supernodal"] = split = S.plan(an, max_width=2)
    assert np.diff(split[0][0]).max() == 2 < np.diff(whole).max()
    Fc.refactor(A)
    assert abs(Fr.L - Fc.L).max() <= 1e-11 * abs(Fr.L).max()
    assert abs(Fr.D - Fc.D).max() <= 1e-11 * abs(Fr.D).max()


def test_supernodal_factor_never_lists_the_update_triples(forced):
    """The supernodal kernel needs only the count of updates per pair (O(pairs) memory); the
    list of triples, which on a 300² grid would take gigabytes, is never built, while the
    block kernel on the same analysis builds it."""
    A = gs.random_block_matrix(gen.crystal(5), "spd", block_size=6, seed=3)
    an = gs.analyze(A, "amd")
    F = gs.factorize(A, method="ldlt", analysis=an)
    assert C.use_supernodal(an, F._work)
    assert "_schedule" not in an.__dict__ and "sched_ptr" not in an.__dict__   # nor counted
    assert F.stats["block_ops"] == gs.factorize(A, method="ldlt", analysis=an,
                                                backend="reference").stats["block_ops"]
    b = np.ones(A.shape[0])
    assert np.allclose(A.to_scipy() @ F.solve(b), b)
    gs.factorize(A, method="ldu", analysis=an)
    assert "_schedule" in an.__dict__


def test_first_factorization_of_six_by_six_is_supernodal(monkeypatch):
    """6×6 blocks between SUPERNODAL_FIRST_MIN_FLOPS and SUPERNODAL_VECTORIZED_MIN_FLOPS: the
    first factorization runs the supernodal kernel (no update triples listed), refactors the
    block kernel; both give the reference backend's factors and scipy's solution, also
    through a singular first factorization followed by a good refactor."""
    A = gs.random_block_matrix(gen.crystal(8), "spd", block_size=6, seed=3)
    an = gs.analyze(A, "nd")
    # the threshold is a tuning constant: put this small factor above it
    monkeypatch.setattr(C, "SUPERNODAL_FIRST_MIN_FLOPS", an.flops("ldlt") / 2)
    assert C.SUPERNODAL_FIRST_MIN_FLOPS <= an.flops("ldlt") < C.SUPERNODAL_VECTORIZED_MIN_FLOPS
    calls = []
    real = C._factor_supernodal
    monkeypatch.setattr(C, "_factor_supernodal",
                        lambda *args: calls.append(1) or real(*args))
    Fr = gs.factorize(A, method="ldlt", analysis=an, backend="reference")
    Fc = gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
    assert len(calls) == 1 and "compiled_pack__sym" not in an.backend_cache
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    x = spla.spsolve(A.to_scipy().tocsc(), b)
    scale = abs(Fr.L).max()
    for F in (Fc, Fc.refactor(A)):
        for name in ("L", "D"):
            assert abs(getattr(Fr, name) - getattr(F, name)).max() <= 1e-12 * scale, name
        assert np.allclose(F.solve(b), x, rtol=1e-10, atol=1e-12)
    assert len(calls) == 1                  # the refactor took the block kernel
    # a fresh factorization whose first (supernodal) call fails: the refactor still works
    calls.clear()
    node = int(an.order[-3])
    bad = A.copy()
    r = _rows(an, node)
    target = np.eye(r.size)
    target[-1, -1] = 0.0                    # the Schur complement at `node` made singular
    bad.block(node, node)[:] += target - Fc.D.toarray()[np.ix_(r, r)]
    with pytest.raises(gs.SingularBlockError):
        gs.factorize(bad, method="ldlt", analysis=an, backend="compiled")
    F = gs.Factorization(an, "ldlt", "compiled")
    with pytest.raises(gs.SingularBlockError):
        F.refactor(bad)
    assert np.allclose(F.refactor(A).solve(b), x, rtol=1e-10, atol=1e-12)
    assert len(calls) == 2                  # one per factorization's first call


def test_first_factorization_threshold(monkeypatch):
    """Below SUPERNODAL_FIRST_MIN_FLOPS (and with the threshold out of reach) the first
    factorization of 6×6 blocks keeps the block kernel."""
    A = gs.random_block_matrix(gen.crystal(8), "spd", block_size=6, seed=3)
    an = gs.analyze(A, "nd")
    monkeypatch.setattr(C, "SUPERNODAL_FIRST_MIN_FLOPS", np.inf)
    calls = []
    monkeypatch.setattr(C, "_factor_supernodal", lambda *args: calls.append(1))
    gs.factorize(A, method="ldlt", analysis=an, backend="compiled")
    assert not calls


def test_supernodal_factorization_runs_with_the_blas_thread_limit(monkeypatch):
    """The supernodal kernel's BLAS runs under SUPERNODAL_BLAS_THREADS threads (threadpoolctl,
    restored afterwards); None leaves the library's setting alone."""
    from threadpoolctl import threadpool_info

    A = gs.random_block_matrix(gen.crystal(8), "spd", block_size=6, seed=3)
    an = gs.analyze(A, "nd")
    monkeypatch.setattr(C, "SUPERNODAL_FIRST_MIN_FLOPS", 0.0)
    seen = []
    real = C._factor_sn

    def spy(*args):
        seen.append({i["filepath"]: i["num_threads"] for i in threadpool_info()
                     if i["user_api"] == "blas"})
        return real(*args)

    monkeypatch.setattr(C, "_factor_sn", spy)
    before = {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
    assert before, "threadpoolctl sees no BLAS library: the limit would do nothing"
    x = gs.factorize(A, analysis=an).solve(np.ones(A.shape[0]))
    assert seen and seen[-1] and all(n == C.SUPERNODAL_BLAS_THREADS for n in seen[-1].values())
    assert {i["filepath"]: i["num_threads"] for i in threadpool_info()
            if i["user_api"] == "blas"} == before
    np.testing.assert_allclose(A.to_scipy() @ x, 1.0, atol=1e-8)
    monkeypatch.setattr(C, "SUPERNODAL_BLAS_THREADS", None)
    gs.factorize(A, analysis=an)
    assert seen[-1] == before
