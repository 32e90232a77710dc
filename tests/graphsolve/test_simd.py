"""The vectorized intrinsics (graphsolve/kernels/simd.py: 6×6 LDLᵀ blocks, the LDU pair steps
of bodies and joints, the pivot LU) against NumPy and against the scalar loops of
graphsolve/kernels/blocks.py that they replace on the hot path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from numba.core.errors import TypingError

from graphsolve.kernels.blocks import (
    _finish_lu,
    _finish_lu_loops,
    _ldl_inplace,
    _ldl_solve_left,
    _lu_solve_left,
    _lu_solve_trans_left,
    _sub_matmul,
    _swap_rows,
)
from graphsolve.kernels.simd import (
    copy_fixed,
    ldl_solve6,
    ldlt_pair6,
    ldlt_pair6_sym,
    lu_pair_3_6,
    lu_pair_5_6,
    lu_pair_6_3,
    lu_pair_6_5,
    lu_pair_6_6,
    lu_pivot_3,
    lu_pivot_5,
    lu_pivot_6,
    lu_trans_3_6,
    lu_trans_5_6,
    lu_trans_6_3,
    lu_trans_6_5,
    lu_trans_6_6,
    matvec6_sub,
    matvec6t_sub,
    mm6_sub,
    mm6t_sub,
)


@njit(cache=False)
def _mm(c, co, a, ao, b, bo):
    mm6_sub(c, co, a, ao, b, bo)


@njit(cache=False)
def _mmt(c, co, a, ao, b, bo):
    mm6t_sub(c, co, a, ao, b, bo)


@njit(cache=False)
def _solve(f, fo, x, xo):
    ldl_solve6(f, fo, x, xo)


@njit(cache=False)
def _pair(t, to, l, lo, ds, dso, d, do, f, fo):
    ldlt_pair6(t, to, l, lo, ds, dso, d, do, f, fo)


@njit(cache=False)
def _pair_sym(t, to, l, lo, ds, dso, d, do, f, fo, u, uo):
    return ldlt_pair6_sym(t, to, l, lo, ds, dso, d, do, f, fo, u, uo)


@njit(cache=False)
def _mv(y, yo, m, mo, z, zo, transposed):
    if transposed:
        matvec6t_sub(y, yo, m, mo, z, zo)
    else:
        matvec6_sub(y, yo, m, mo, z, zo)


@njit(cache=False)
def _ldl(a):
    return _ldl_inplace(a, 6, 1e-300)


@njit(cache=False)
def _scalar_mm(c, a, b, transposed):
    _sub_matmul(c, a, b, 6, 6, 6, transposed)


@njit(cache=False)
def _scalar_solve(f, x):
    _ldl_solve_left(f, 6, x, 6)


def _definite(rng, sign=1.0):
    m = rng.standard_normal((6, 6))
    return sign * (m @ m.T + 0.5 * np.eye(6))


def _factor(d):
    f = d.ravel().copy()
    assert _ldl(f)
    return f


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), transposed=st.booleans(),
       offsets=st.tuples(*[st.integers(0, 20)] * 3))
def test_block_products_match_numpy_and_the_scalar_loop(seed, transposed, offsets):
    """``c -= a @ b`` (:func:`mm6_sub`) and ``c -= a @ bᵀ`` (:func:`mm6t_sub`)."""
    rng = np.random.default_rng(seed)
    co, ao, bo = offsets
    a = rng.standard_normal(ao + 36 + 3)
    b = rng.standard_normal(bo + 36 + 3)
    c = rng.standard_normal(co + 36 + 3)
    A, B = a[ao:ao + 36].reshape(6, 6), b[bo:bo + 36].reshape(6, 6)
    want = c.copy()
    want[co:co + 36] -= (A @ (B.T if transposed else B)).ravel()
    scalar = c[co:co + 36].copy()
    _scalar_mm(scalar, A.ravel().copy(), B.ravel().copy(), transposed)
    got = c.copy()
    (_mmt if transposed else _mm)(got, co, a, ao, b, bo)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got[co:co + 36], scalar, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(got[:co], c[:co])              # nothing outside the block
    np.testing.assert_array_equal(got[co + 36:], c[co + 36:])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sign=st.sampled_from([1.0, -1.0]),
       fo=st.integers(0, 9), xo=st.integers(0, 9))
def test_ldl_solve6_matches_numpy_and_the_scalar_loop(seed, sign, fo, xo):
    rng = np.random.default_rng(seed)
    d = _definite(rng, sign)
    f = np.concatenate([rng.standard_normal(fo), _factor(d)])
    x = rng.standard_normal(xo + 36 + 2)
    want = np.linalg.solve(d, x[xo:xo + 36].reshape(6, 6)).ravel()
    scalar = x[xo:xo + 36].copy()
    _scalar_solve(f[fo:].copy(), scalar)
    got = x.copy()
    _solve(f, fo, got, xo)
    np.testing.assert_allclose(got[xo:xo + 36], want, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(got[xo:xo + 36], scalar, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(got[:xo], x[:xo])
    np.testing.assert_array_equal(got[xo + 36:], x[xo + 36:])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sign=st.sampled_from([1.0, -1.0]),
       in_place=st.booleans())
def test_ldlt_pair6_is_one_elimination_step(seed, sign, in_place):
    """L = T D_c⁻¹ and D_i = D_i' - T D_c⁻¹ Tᵀ (Brüdigam 2023, Alg. 3 lines 18-20), in place
    (the pair step of the block kernel) and from separate sources (the tree kernel, which
    reads T and D_i' from the matrix's values and leaves them untouched)."""
    rng = np.random.default_rng(seed)
    dc = _definite(rng, sign)
    t = rng.standard_normal((6, 6))
    di = rng.standard_normal((6, 6))
    src = np.concatenate([rng.standard_normal(5), t.ravel(), di.ravel(), rng.standard_normal(2)])
    before = src.copy()
    out = src if in_place else rng.standard_normal(80)
    f = _factor(dc)
    lo, do = (5, 41) if in_place else (7, 43)
    _pair(src, 5, out, lo, src, 41, out, do, f, 0)
    np.testing.assert_allclose(out[lo:lo + 36].reshape(6, 6), np.linalg.solve(dc, t.T).T,
                               rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(out[do:do + 36].reshape(6, 6), di - t @ np.linalg.solve(dc, t.T),
                               rtol=1e-9, atol=1e-9)
    if not in_place:
        np.testing.assert_array_equal(src, before)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), symmetric=st.booleans(), uo=st.integers(0, 9))
def test_ldlt_pair6_sym_is_the_pair_step_and_the_symmetry_sum(seed, symmetric, uo):
    """The same elimination step as ldlt_pair6 (bit for bit), and Σ (U - Tᵀ)² against NumPy:
    exactly 0 for U = Tᵀ (the symmetric matrix the check lets through)."""
    rng = np.random.default_rng(seed)
    f = _factor(_definite(rng))
    src = rng.standard_normal(80)
    t = src[5:41].reshape(6, 6)
    u = rng.standard_normal(uo + 36 + 3)
    if symmetric:
        u[uo:uo + 36] = t.T.ravel()
    want = rng.standard_normal(80)
    got = want.copy()
    _pair(src, 5, want, 7, src, 41, want, 43, f, 0)
    sq = _pair_sym(src, 5, got, 7, src, 41, got, 43, f, 0, u, uo)
    np.testing.assert_array_equal(got, want)
    expected = np.sum((u[uo:uo + 36].reshape(6, 6) - t.T) ** 2)
    if symmetric:
        assert sq == 0.0
    else:
        assert sq == pytest.approx(expected, rel=1e-12)
    for bad in (np.nan, np.inf):                   # a non-finite entry of U or of T
        v = u.copy()
        v[uo + 13] = bad
        assert not np.isfinite(_pair_sym(src, 5, got, 7, src, 41, got, 43, f, 0, v, uo))
    s2 = src.copy()
    s2[5 + 20] = np.inf
    assert not np.isfinite(_pair_sym(s2, 5, got, 7, s2, 41, got, 43, f, 0, u, uo))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), transposed=st.booleans(),
       offsets=st.tuples(*[st.integers(0, 12)] * 3))
def test_matvec6_matches_numpy(seed, transposed, offsets):
    """``y -= M z`` and ``y -= Mᵀ z``; ``y`` and ``z`` in one array, as in the solves."""
    rng = np.random.default_rng(seed)
    yo, mo, zo = offsets
    zo += yo + 6                                    # disjoint segments of one vector
    x = rng.standard_normal(zo + 6 + 2)
    m = rng.standard_normal(mo + 36 + 1)
    M = m[mo:mo + 36].reshape(6, 6)
    want = x.copy()
    want[yo:yo + 6] -= (M.T if transposed else M) @ x[zo:zo + 6]
    got = x.copy()
    _mv(got, yo, m, mo, got, zo, transposed)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_non_finite_values_propagate():
    rng = np.random.default_rng(1)
    f = _factor(_definite(rng))
    t = rng.standard_normal(36)
    t[8] = np.nan
    d = rng.standard_normal(36)
    _pair(t, 0, t, 0, d, 0, d, 0, f, 0)
    assert np.isnan(d).any() and np.isnan(t).any()
    c = np.zeros(36)
    b = np.eye(6).ravel().copy()
    b[0] = np.inf
    _mm(c, 0, np.ones(36), 0, b, 0)
    assert np.isinf(c).any()


@pytest.mark.parametrize("bad", [np.zeros(36, np.float32), np.zeros((6, 6))])
def test_wrong_array_types_are_rejected_at_compile_time(bad):
    with pytest.raises(TypingError, match="float64 array"):
        _mm(bad, 0, np.zeros(36), 0, np.zeros(36), 0)


# ------------------------------------------------------------------ LDU pairs and pivot LU
@njit(cache=False)
def _lu_pair(s, so, d, do, t, to, f, fo, piv, si, sc):
    for k in range(sc):
        _swap_rows(s[so:so + sc * si], k, piv[k], si)
    if si == 6 and sc == 6:
        lu_pair_6_6(s, so, d, do, t, to, f, fo)
    elif si == 6 and sc == 5:
        lu_pair_6_5(s, so, d, do, t, to, f, fo)
    elif si == 5:
        lu_pair_5_6(s, so, d, do, t, to, f, fo)
    elif si == 6:
        lu_pair_6_3(s, so, d, do, t, to, f, fo)
    else:
        lu_pair_3_6(s, so, d, do, t, to, f, fo)


@njit(cache=False)
def _scalar_lu_pair(s, d, t, f, piv, si, sc):
    _lu_solve_left(f, piv, sc, s, si)
    _sub_matmul(d, t, s, si, sc, si, False)


@njit(cache=False)
def _pivot(d, do, f, fo, piv, po, rtol, n):
    if n == 6:
        return lu_pivot_6(d, do, f, fo, piv, po, rtol)
    if n == 5:
        return lu_pivot_5(d, do, f, fo, piv, po, rtol)
    return lu_pivot_3(d, do, f, fo, piv, po, rtol)


@njit(cache=False)
def _scalar_pivot(d, f, piv, rtol, n):
    return _finish_lu_loops(d, f, piv, n, rtol)


@njit(cache=False)
def _dispatched_pivot(d, f, piv, rtol, n):
    return _finish_lu(d, f, piv, n, rtol)


def _lu(a):
    n = a.shape[0]
    f, piv = np.zeros(n * n), np.zeros(n, np.int64)
    assert _scalar_pivot(a.ravel().copy(), f, piv, 1e-12, n)
    return f, piv


def _permuted(a, piv):
    """``P a`` for the row interchanges ``piv`` of LAPACK's ``getrf``."""
    out = a.copy()
    for k, p in enumerate(piv):
        out[[k, p]] = out[[p, k]]
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       sizes=st.sampled_from([(6, 6), (6, 5), (5, 6), (6, 3), (3, 6)]),
       offsets=st.tuples(*[st.integers(0, 9)] * 4))
def test_lu_pairs_are_one_ldu_elimination_step(seed, sizes, offsets):
    """U = D_c⁻¹ S and D_i -= T U (Brüdigam 2023, Alg. 3 lines 18-20, implicit lower block)
    with an LU-factored child pivot that swaps rows: against NumPy, bit for bit the scalar
    loops' result, and nothing written outside the two blocks."""
    si, sc = sizes
    rng = np.random.default_rng(seed)
    so, do, to, fo = offsets
    dc = rng.standard_normal((sc, sc)) + 0.1 * np.eye(sc)
    f, piv = _lu(dc)
    S = rng.standard_normal((sc, si))
    T = rng.standard_normal((si, sc))
    Di = rng.standard_normal((si, si))
    s = np.concatenate([rng.standard_normal(so), S.ravel(), rng.standard_normal(3)])
    d = np.concatenate([rng.standard_normal(do), Di.ravel(), rng.standard_normal(3)])
    t = np.concatenate([rng.standard_normal(to), T.ravel()])
    fb = np.concatenate([rng.standard_normal(fo), f])
    s0, d0 = s.copy(), d.copy()
    _lu_pair(s, so, d, do, t, to, fb, fo, piv, si, sc)
    U = np.linalg.solve(dc, S)
    scale = max(1.0, np.abs(U).max()) * np.linalg.cond(dc)
    np.testing.assert_allclose(s[so:so + sc * si].reshape(sc, si), U, rtol=0,
                               atol=1e-13 * scale)
    np.testing.assert_allclose(d[do:do + si * si].reshape(si, si), Di - T @ U, rtol=0,
                               atol=1e-13 * scale * max(1.0, np.abs(T).max()) * sc)
    sl, dl = S.ravel().copy(), Di.ravel().copy()
    _scalar_lu_pair(sl, dl, T.ravel().copy(), f, piv, si, sc)
    np.testing.assert_array_equal(s[so:so + sc * si], sl)
    np.testing.assert_array_equal(d[do:do + si * si], dl)
    for got, was, o, m in ((s, s0, so, sc * si), (d, d0, do, si * si)):
        np.testing.assert_array_equal(got[:o], was[:o])
        np.testing.assert_array_equal(got[o + m:], was[o + m:])


def _pivot_case(rng, n, kind):
    a = rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-3, 3, (n, 1))
    if kind == "singular":
        a[:, rng.integers(n)] = 0.0
    elif kind == "nearly singular":
        a[rng.integers(n)] *= 1e-13
    elif kind == "nan":
        a[rng.integers(n), rng.integers(n)] = np.nan
    elif kind == "inf":
        a[rng.integers(n), rng.integers(n)] = -np.inf
    elif kind == "rank one":
        a = np.outer(rng.standard_normal(n), rng.standard_normal(n))
    return a


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([6, 5, 3]),
       kind=st.sampled_from(["regular", "singular", "nearly singular", "nan", "inf",
                             "rank one"]),
       rtol=st.sampled_from([0.0, 1e-12]), offsets=st.tuples(*[st.integers(0, 7)] * 3))
def test_lu_pivots_decide_and_factor_like_the_scalar_loops(seed, n, kind, rtol, offsets):
    """The vectorized pivot LU: the same verdict as the scalar loops (singular by the rule of
    PIVOT_RTOL, NaN or inf), and on a regular block P D = L U with their row interchanges and
    their factor bit for bit."""
    rng = np.random.default_rng(seed)
    a = _pivot_case(rng, n, kind)
    do, fo, po = offsets
    d = np.concatenate([rng.standard_normal(do), a.ravel()])
    f = rng.standard_normal(fo + n * n + 2)
    piv = np.full(po + n + 1, -7, np.int64)
    f0 = f.copy()
    ok = _pivot(d, do, f, fo, piv, po, rtol, n)
    fl, pl = np.zeros(n * n), np.zeros(n, np.int64)
    want = _scalar_pivot(a.ravel().copy(), fl, pl, rtol, n)
    assert ok == want
    assert _dispatched_pivot(a.ravel().copy(), fl.copy(), pl.copy(), rtol, n) == want
    np.testing.assert_array_equal(d[do:], a.ravel())                 # the source is read only
    np.testing.assert_array_equal(f[:fo], f0[:fo])
    np.testing.assert_array_equal(f[fo + n * n:], f0[fo + n * n:])
    assert (piv[:po] == -7).all() and piv[po + n] == -7
    if not ok:
        return
    p = piv[po:po + n]
    lu = f[fo:fo + n * n].reshape(n, n)
    L, U = np.tril(lu, -1) + np.eye(n), np.triu(lu)
    np.testing.assert_allclose(L @ U, _permuted(a, p), rtol=0, atol=1e-14 * np.abs(a).max())
    assert np.abs(np.tril(lu, -1)).max(initial=0.0) <= 1.0                # partial pivoting
    np.testing.assert_array_equal(p, pl)
    np.testing.assert_array_equal(f[fo:fo + n * n], fl)


def test_lu_pivot_takes_any_integer_pivot_array_and_refuses_others():
    a = np.random.default_rng(3).standard_normal(36)
    for dtype in (np.int32, np.int64):
        piv = np.zeros(6, dtype)
        assert _pivot(a, 0, np.zeros(36), 0, piv, 0, 1e-12, 6)
    with pytest.raises(TypingError, match="integer pivot array"):
        _pivot(a, 0, np.zeros(36), 0, np.zeros(6), 0, 1e-12, 6)


@njit(cache=False)
def _lu_trans(w, wo, t, to, f, fo, piv, si, sc):
    if si == 6 and sc == 6:
        lu_trans_6_6(w, wo, t, to, f, fo)
    elif si == 6 and sc == 5:
        lu_trans_6_5(w, wo, t, to, f, fo)
    elif si == 5:
        lu_trans_5_6(w, wo, t, to, f, fo)
    elif si == 6:
        lu_trans_6_3(w, wo, t, to, f, fo)
    else:
        lu_trans_3_6(w, wo, t, to, f, fo)
    for k in range(sc - 1, -1, -1):
        _swap_rows(w[wo:wo + sc * si], k, piv[k], si)


@njit(cache=False)
def _scalar_lu_trans(w, t, f, piv, si, sc):
    for r in range(si):
        for c in range(sc):
            w[c * si + r] = t[r * sc + c]
    _lu_solve_trans_left(f, piv, sc, w, si)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       sizes=st.sampled_from([(6, 6), (6, 5), (5, 6), (6, 3), (3, 6)]),
       offsets=st.tuples(*[st.integers(0, 9)] * 3))
def test_lu_trans_scales_the_lower_block_like_the_scalar_loops(seed, sizes, offsets):
    """W = D_c⁻ᵀ Tᵀ, i.e. L = T D_c⁻¹ = Wᵀ (the explicit lower block of an LDU pair step),
    with an LU child pivot that swaps rows: against NumPy, bit for bit the scalar loops'
    result, T read only and nothing written outside W."""
    si, sc = sizes
    rng = np.random.default_rng(seed)
    wo, to, fo = offsets
    dc = rng.standard_normal((sc, sc)) + 0.1 * np.eye(sc)
    f, piv = _lu(dc)
    T = rng.standard_normal((si, sc))
    t = np.concatenate([rng.standard_normal(to), T.ravel()])
    t0 = t.copy()
    w = rng.standard_normal(wo + sc * si + 3)
    w0 = w.copy()
    fb = np.concatenate([rng.standard_normal(fo), f])
    _lu_trans(w, wo, t, to, fb, fo, piv, si, sc)
    L = w[wo:wo + sc * si].reshape(sc, si).T
    scale = max(1.0, np.abs(T).max()) * np.linalg.cond(dc)
    np.testing.assert_allclose(L, T @ np.linalg.inv(dc), rtol=0, atol=1e-13 * scale)
    want = np.zeros(sc * si)
    _scalar_lu_trans(want, T.ravel().copy(), f, piv, si, sc)
    np.testing.assert_array_equal(w[wo:wo + sc * si], want)
    np.testing.assert_array_equal(t, t0)
    np.testing.assert_array_equal(w[:wo], w0[:wo])
    np.testing.assert_array_equal(w[wo + sc * si:], w0[wo + sc * si:])


@njit(cache=False)
def _copy36(dst, d0, src, s0):
    copy_fixed(dst, d0, src, s0, 36)


@njit(cache=False)
def _copy_lengths(dst, d0, src, s0):
    copy_fixed(dst, d0, src, s0, 1)
    copy_fixed(dst, d0 + 1, src, s0 + 1, 5)
    copy_fixed(dst, d0 + 6, src, s0 + 6, 25)
    copy_fixed(dst, d0 + 31, src, s0 + 31, 30)


@pytest.mark.parametrize("d0, s0", [(0, 0), (3, 7), (40, 1)])
def test_copy_fixed_copies_exactly_its_range(d0, s0):
    rng = np.random.default_rng(d0 + s0)
    src = rng.standard_normal(120)
    src[s0 + 4] = np.nan                         # values are moved, not computed on
    dst = np.full(120, -7.0)
    _copy36(dst, d0, src, s0)
    expect = np.full(120, -7.0)
    expect[d0:d0 + 36] = src[s0:s0 + 36]
    np.testing.assert_array_equal(dst, expect)
    dst = np.full(120, -7.0)
    _copy_lengths(dst, d0, src, s0)              # odd lengths: the remainder vectors
    expect = np.full(120, -7.0)
    expect[d0:d0 + 61] = src[s0:s0 + 61]
    np.testing.assert_array_equal(dst, expect)


def test_copy_fixed_moves_overlapping_ranges_like_memmove():
    a = np.arange(80.0)
    _copy36(a, 10, a, 4)                         # every value is loaded before any store
    expect = np.arange(80.0)
    expect[10:46] = np.arange(4.0, 40.0)
    np.testing.assert_array_equal(a, expect)


def test_copy_fixed_needs_a_literal_length():
    @njit(cache=False)
    def runtime_length(dst, src, n):
        copy_fixed(dst, 0, src, 0, n)

    with pytest.raises(TypingError, match="literal"):
        runtime_length(np.zeros(4), np.ones(4), 4)
