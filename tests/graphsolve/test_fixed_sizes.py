"""The generic compiled kernels' fixed-size block code (``FIXED_PIVOT_SIZES``,
``FIXED_PAIR_SIZES`` of :mod:`graphsolve.kernels.factor_kernels`, ``FIXED_SOLVE_SIZES``,
``FIXED_MATVEC_SIZES`` of :mod:`graphsolve.kernels.solve_kernels`) on matrices that mix block
sizes, as the dynamics' contact KKT matrices do (bodies 6, joints 1-5, contact groups 2/8/12).

Oracles: LAPACK (``numpy.linalg.solve`` on the dense matrix) and the reference backend (SciPy
block kernels); the fixed-size copies against the runtime-size code of the same block step.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphsolve as gs
from graphsolve import generators as gen
from graphsolve.kernels.factor_kernels import (
    FIXED_PAIR_SIZES,
    FIXED_PIVOT_SIZES,
    _finish_pivot_fixed,
    _scale_pair,
)
from graphsolve.kernels.reference import PIVOT_RTOL
from graphsolve.kernels.solve_kernels import (
    FIXED_MATVEC_SIZES,
    FIXED_SOLVE_SIZES,
    _lu_solve_any,
    _lu_solve_fixed,
    _matvec_sub_any,
)
from tests.conftest import dense_oracle_solve, rel_error

PROPERTY = settings(max_examples=25, deadline=None)
# fixed-size pivots and pairs, and sizes that stay on the runtime-size code (7, 9)
SIZES = (1, 2, 3, 4, 5, 6, 6, 6, 7, 8, 9, 12)


def _mixed(n, seed, extra, kind):
    """A random tree of ``n`` nodes (plus ``extra`` edges: cycles, fill) with random sizes."""
    rng = np.random.default_rng(seed)
    G = gen.random_tree(n, seed=seed)
    for _ in range(extra):
        u, v = (int(t) for t in rng.choice(n, 2, replace=False))
        G.add_edge(u, v)
    for v in G:
        G.nodes[v]["size"] = int(rng.choice(SIZES))
    return gs.random_block_matrix(G, kind=kind, block_size=1, seed=seed + 1)


@PROPERTY
@given(n=st.integers(2, 30), seed=st.integers(0, 10_000), extra=st.integers(0, 4),
       kind=st.sampled_from(["unsymmetric", "spd"]))
def test_mixed_sizes_solve_like_lapack_and_the_reference(n, seed, extra, kind):
    A = _mixed(n, seed, extra, kind)
    b = np.random.default_rng(seed).standard_normal(A.shape[0])
    ref = dense_oracle_solve(A.to_scipy(), b)
    methods = ["ldu", "ldlt"] if kind == "spd" else ["ldu"]
    for method in methods:
        an = gs.analyze(A)
        fast = gs.factorize(A, method=method, analysis=an, backend="compiled")
        slow = gs.factorize(A, method=method, analysis=an, backend="reference")
        assert rel_error(fast.solve(b), ref) <= 1e-8
        np.testing.assert_allclose(fast.solve(b), slow.solve(b), rtol=1e-9, atol=1e-11)
    from graphsolve.lowlevel import refactor_solve
    an = gs.analyze(A)
    for implicit in ([False, True] if an.n_updates == 0 else [False]):
        F = gs.allocate(an, "ldu", "compiled")
        x = b.copy()
        assert refactor_solve(F.fused_handle(A, implicit=implicit), A.data, x) == -1
        assert rel_error(x, ref) <= 1e-8


@PROPERTY
@given(n=st.integers(2, 25), seed=st.integers(0, 10_000), extra=st.integers(0, 3),
       pick=st.integers(0, 10_000), rank_one=st.booleans())
def test_mixed_sizes_flag_the_same_singular_pivot_as_the_reference(n, seed, extra, pick,
                                                                     rank_one):
    """A singular diagonal block (zero, or rank one) at a random node: the compiled generic
    kernel and refactor_solve fail at the node the reference fails at."""
    A = _mixed(n, seed, extra, "unsymmetric")
    an = gs.analyze(A)
    node = pick % n
    lo, hi = A.diag_ptr[node], A.diag_ptr[node + 1]
    s = int(an.block_sizes[node])
    if rank_one:
        u = np.arange(1.0, s + 1.0)
        A.data[lo:hi] = np.outer(u, u[::-1]).ravel() * 1e3
    else:
        A.data[lo:hi] = 0.0
    failed = {}
    for backend in ("compiled", "reference"):
        try:
            gs.factorize(A, method="ldu", analysis=an, backend=backend)
            failed[backend] = None
        except gs.SingularBlockError as err:
            failed[backend] = err.node
    assert failed["compiled"] == failed["reference"]
    from graphsolve.lowlevel import refactor_solve
    status = refactor_solve(gs.allocate(an, "ldu", "compiled").fused_handle(A), A.data,
                            np.ones(A.shape[0]))
    expected = -1 if failed["reference"] is None else list(an.order).index(failed["reference"])
    assert status == expected


@pytest.mark.parametrize("s", FIXED_PIVOT_SIZES)
@pytest.mark.parametrize("symmetric", [False, True])
def test_fixed_size_pivots_equal_the_runtime_size_code(s, symmetric):
    """Bit for bit, with the same singular verdicts (zero block, rank one, a pivot at the
    pivot_rtol threshold, NaN), for every fixed size."""
    rng = np.random.default_rng(s)
    M = rng.standard_normal((s, s))
    blocks = [M + M.T + 3 * s * np.eye(s) if symmetric else M, np.zeros((s, s)),
              np.outer(np.arange(1.0, s + 1), np.ones(s))]
    near = M.copy()
    near[-1] = near[0] * (1 + 1e-15)                       # singular up to rounding
    blocks.append(near)
    nan = M.copy()
    nan[s // 2, 0] = np.nan
    blocks.append(nan)
    for blk in blocks:
        for rtol in (0.0, PIVOT_RTOL, 1e-3):
            out = []
            for fixed in (0, s):
                D = np.ascontiguousarray(blk.ravel())
                lu, piv = np.zeros(s * s), np.zeros(s, np.int64)
                ok = _finish_pivot_fixed(D, lu, piv, s, symmetric, rtol, fixed)
                out.append((ok, D, lu, piv))
            assert out[0][0] == out[1][0]
            for a, b in zip(out[0][1:], out[1][1:], strict=True):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("o", FIXED_PAIR_SIZES)
@pytest.mark.parametrize("body_first", [True, False])
@pytest.mark.parametrize("mode", ["ldu", "implicit", "ldlt"])
def test_fixed_size_pairs_equal_the_runtime_size_code(o, body_first, mode):
    si, sc = (6, o) if body_first else (o, 6)
    rng = np.random.default_rng(10 * o + body_first)
    C = rng.standard_normal((sc, sc)) + 2 * sc * np.eye(sc)
    symmetric = mode == "ldlt"
    if symmetric:
        C = C + C.T
    lu_c, piv_c = np.zeros(sc * sc), np.zeros(sc, np.int64)
    assert _finish_pivot_fixed(C.ravel().copy(), lu_c, piv_c, sc, symmetric, 0.0, 0)
    T0, S0 = rng.standard_normal((2, si * sc))
    D0 = rng.standard_normal(si * si)
    out = []
    for fixed in ((0, 0), (si, sc)):
        T, S, Di, w2 = T0.copy(), S0.copy(), D0.copy(), np.zeros(144)
        _scale_pair(T, S, Di, lu_c, piv_c, si, sc, symmetric, w2, mode == "implicit",
                    False, *fixed)
        out.append((T, S, Di))
    for a, b in zip(*out, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


# ---------------------------------------------------------------------- the generic solves
# The one-vector LDU kernel with BS = 0 (solve_kernels: FIXED_SOLVE_SIZES and
# FIXED_MATVEC_SIZES; Factorization.solve and solve_factored), and the LDLᵀ and several-column
# solves: against LAPACK, and against the runtime-size kernel (_solve_bs, the
# multi-right-hand-side solve, with nrhs = 1) on the same factor buffers.
def _runtime_size_solve(F, b, symmetric):
    from graphsolve.kernels.specializations import _SOLVE, _pack, _solve_arrays
    ints, bounds = _pack(F.analysis, _solve_arrays)
    x = np.ascontiguousarray(b, dtype=float).copy()
    nrhs = 1 if x.ndim == 1 else x.shape[1]
    _SOLVE[(0, 0)](ints, bounds, F._Dlu, F._piv, F._L, F._U, x.reshape(-1), nrhs, symmetric)
    return x


def _indefinite(A, seed):
    """``A`` (SPD) with the signs of some eigenvalues of a third of its diagonal blocks flipped:
    symmetric, indefinite pivots (LDLᵀ takes their LU branch), as well conditioned."""
    rng = np.random.default_rng(seed)
    n = A.block_sizes.size
    for v in rng.choice(n, max(1, n // 3), replace=False):
        s = int(A.block_sizes[v])
        lo, hi = A.diag_ptr[v], A.diag_ptr[v + 1]
        lam, V = np.linalg.eigh(A.data[lo:hi].reshape(s, s))
        lam = lam * np.where(rng.random(s) < 0.5, -1.0, 1.0)
        A.data[lo:hi] = (V * lam @ V.T).ravel()
    return A


@PROPERTY
@given(n=st.integers(2, 30), seed=st.integers(0, 10_000), extra=st.integers(0, 4),
       kind=st.sampled_from(["unsymmetric", "spd", "indefinite"]),
       nrhs=st.sampled_from([0, 1, 3]))
def test_generic_solves_equal_lapack_and_the_runtime_size_kernel(n, seed, extra, kind, nrhs):
    """Every fixed size and pair (and sizes 7, 9 without one), LDU and LDLᵀ (definite and
    indefinite pivots); ``nrhs = 0``: a vector (the one-vector kernels), 1 and 3: columns."""
    A = _mixed(n, seed, extra, "unsymmetric" if kind == "unsymmetric" else "spd")
    if kind == "indefinite":
        A = _indefinite(A, seed + 2)
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(A.shape[0] if nrhs == 0 else (A.shape[0], nrhs))
    ref = dense_oracle_solve(A.to_scipy(), b)
    for method in ["ldu"] if kind == "unsymmetric" else ["ldu", "ldlt"]:
        F = gs.factorize(A, method=method, backend="compiled")
        x = F.solve(b)
        assert rel_error(x, ref) <= 1e-8
        slow = _runtime_size_solve(F, b, method == "ldlt")
        np.testing.assert_allclose(x, slow, rtol=1e-10, atol=1e-12 * np.abs(slow).max())
    from graphsolve.lowlevel import refactor_solve, solve_factored
    an = gs.analyze(A)
    for implicit in ([False, True] if an.n_updates == 0 else [False]):
        F = gs.allocate(an, "ldu", "compiled")
        handle = F.fused_handle(A, implicit=implicit)
        x = np.zeros(A.shape[0])
        assert refactor_solve(handle, A.data, x) == -1
        for col in (b.T if b.ndim == 2 else [b]):
            x = np.array(col)                       # a copy: solved in place
            solve_factored(handle, x)
            assert rel_error(x, dense_oracle_solve(A.to_scipy(), col)) <= 1e-8


@pytest.mark.parametrize("o", sorted({*FIXED_MATVEC_SIZES, 7, 9}))
@pytest.mark.parametrize("body_first", [True, False])
def test_fixed_size_block_products_equal_numpy(o, body_first):
    """The generic LDU solve's block products ``y -= M z``: a 6×6 block with every size (7 and
    9 on the runtime-size code), and two blocks without a 6."""
    rng = np.random.default_rng(o)
    for m, n in [(6, o) if body_first else (o, 6), (o, o + 1)]:
        M = rng.standard_normal((m, n))
        z = rng.standard_normal(n)
        y0 = rng.standard_normal(m)
        y = y0.copy()
        _matvec_sub_any(y, M.ravel(), z, m, n)
        np.testing.assert_allclose(y, y0 - M @ z, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("s", sorted({*FIXED_SOLVE_SIZES, 7, 9}))
def test_fixed_size_pivot_solves_equal_the_runtime_size_code(s):
    """The generic LDU solve's pivot solves (LU with row swaps): the fixed-size copy, the
    runtime-size code and LAPACK agree."""
    rng = np.random.default_rng(s)
    D = rng.standard_normal((s, s)) + 0.1 * np.eye(s)
    lu, piv = np.zeros(s * s), np.zeros(s, np.int64)
    assert _finish_pivot_fixed(D.ravel().copy(), lu, piv, s, False, 0.0, 0)
    b = rng.standard_normal(s)
    y, z = b.copy(), b.copy()
    _lu_solve_any(lu, piv, s, y)
    _lu_solve_fixed(lu, piv, s, z, 0)
    np.testing.assert_allclose(y, z, rtol=1e-13, atol=1e-13)
    assert rel_error(y, np.linalg.solve(D, b)) <= 1e-10
