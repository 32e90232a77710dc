"""The compiled backend against the reference backend: same factors, same operation counts,
on random graphs, block sizes, kinds, orderings and methods (property test), including the
uniform 3×3 and 6×6 blocks that use the size-specialized compiled kernels."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphsolve as gs
from graphsolve import generators as gen


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 20), extra=st.integers(0, 5), comps=st.integers(1, 3),
       seed=st.integers(0, 10_000), sizes=st.sampled_from(["mixed", 3, 6]),
       kind=st.sampled_from(["spd", "unsymmetric"]),
       ordering=st.sampled_from(list(gs.ORDERINGS)), nrhs=st.integers(1, 3))
def test_compiled_equals_reference(n, extra, comps, seed, sizes, kind, ordering, nrhs):
    comps = min(comps, n)
    extra = min(extra, max(0, (n // comps) * (n // comps - 1) // 2 - n // comps))
    G = gen.random_graph(n, extra_edges=extra, seed=seed, components=comps)
    rng = np.random.default_rng(seed)
    if sizes == "mixed":
        for v in G:
            G.nodes[v]["size"] = int(rng.integers(1, 8))
        block = 1
    else:
        block = sizes
    A = gs.random_block_matrix(G, kind, block_size=block, seed=seed)
    b = rng.standard_normal((A.shape[0], nrhs))
    methods = ["ldu", "ldlt"] if kind == "spd" else ["ldu"]
    for method in methods:
        Fr = gs.factorize(A, method=method, ordering=ordering, backend="reference")
        Fc = gs.factorize(A, method=method, ordering=ordering, backend="compiled")
        scale = np.abs(A.data).max()
        for name in ("L", "D", "U"):
            diff = abs(getattr(Fr, name) - getattr(Fc, name)).max()
            assert diff <= 1e-11 * scale, (name, diff)
        assert np.allclose(Fr.solve(b), Fc.solve(b), rtol=1e-10, atol=1e-13)
        assert Fr.stats["block_ops"] == Fc.stats["block_ops"]


@pytest.mark.parametrize(("family", "constraint_size"),
                         [("tree", 3), ("ladder", 3), ("path", 5)])
@pytest.mark.parametrize("method", ["ldlt", "ldu"])
def test_kkt_size_pair_kernels_equal_reference(constraint_size, family, method):
    """KKT matrices with 6×6 bodies and 3×3 / 5×5 joints use the size-pair kernels. (5-row
    joints on a ladder over-constrain it; on random trees they make it ill-conditioned.)"""
    from graphsolve.kernels.compiled import specialization

    base = {"tree": gen.random_tree(15, seed=4), "ladder": gen.ladder(10),
            "path": gen.path(12)}[family]
    G = gen.constraint_graph(base, body_size=6, constraint_size=constraint_size)
    A = gs.random_block_matrix(G, "kkt", seed=2)
    an = gs.analyze(A)
    assert specialization(an) == (6, constraint_size)
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    Fr = gs.factorize(A, method=method, analysis=an, backend="reference")
    Fc = gs.factorize(A, method=method, analysis=an, backend="compiled")
    for name in ("L", "D", "U"):        # relative to the factor's own magnitude: 5-row
        ref = getattr(Fr, name)         # joints give element growth (|D| ~ 1e4 |A|)
        assert abs(ref - getattr(Fc, name)).max() <= 1e-11 * abs(ref).max()
    x = Fc.solve(b)
    S = A.to_scipy()
    assert np.abs(S @ x - b).max() <= 1e-10 * (abs(S).sum(axis=1).max() * np.abs(x).max())
    assert np.allclose(x, Fr.solve(b), rtol=1e-8, atol=1e-12)


def test_shipped_backends_implement_the_protocol():
    from graphsolve.kernels import KERNELS, Backend
    from graphsolve.kernels.protocol import REQUIRED

    for name, backend in KERNELS.items():
        assert isinstance(backend, Backend), name
        for f in REQUIRED:
            assert callable(getattr(backend, f)), (name, f)


def test_a_registered_backend_is_used_by_name():
    """A third backend (here: the reference kernels behind a counting wrapper) registered
    through graphsolve.kernels.register_backend serves factorize, refactor, solve and batches."""
    import types

    from graphsolve import kernels
    from graphsolve.kernels import reference

    calls = []

    def wrap(f):
        def counted(*args, **kwargs):
            calls.append(f.__name__)
            return f(*args, **kwargs)
        return counted

    counting = types.SimpleNamespace(**{f: wrap(getattr(reference, f))
                                        for f in kernels.protocol.REQUIRED})
    kernels.register_backend("counting", counting)
    try:
        A = gs.random_block_matrix(gen.ladder(8), "unsymmetric", block_size=2, seed=0)
        b = np.arange(A.shape[0], dtype=float)
        F = gs.factorize(A, backend="counting")
        x = F.solve(b)
        np.testing.assert_allclose(A.to_dense() @ x, b, atol=1e-10 * np.abs(b).max())
        assert {"work_buffers", "refactor", "solve"} <= set(calls)
        Fb = gs.factorize_batch(A, np.stack([A.data, 2 * A.data]), backend="counting")
        np.testing.assert_allclose(Fb.solve(np.stack([b, b]))[1], x / 2, rtol=1e-12)
        assert {"factor_batch", "solve_batch"} <= set(calls)
    finally:
        del kernels.KERNELS["counting"]
    with pytest.raises(gs.GraphSolveError, match="counting"):
        gs.factorize(A, backend="counting")


def test_register_backend_refuses_incomplete_backends():
    import types

    from graphsolve import kernels

    with pytest.raises(TypeError, match=r"missing \['refactor'"):
        kernels.register_backend("half", types.SimpleNamespace(work_buffers=lambda an: None))
    with pytest.raises(ValueError, match="auto"):
        kernels.register_backend("auto", kernels.reference)
    assert "half" not in kernels.KERNELS
    assert kernels.Status.OK == -1 and kernels.Status.NONFINITE == -2
