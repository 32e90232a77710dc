"""The compiled backend against the reference backend: same factors, same operation counts,
on random graphs, block sizes, kinds, orderings and methods (property test), including the
uniform 3×3 and 6×6 blocks that use the size-specialized compiled kernels."""

import numpy as np
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
