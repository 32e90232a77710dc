"""The vectorized 6×6 intrinsics (graphsolve/kernels/simd.py) against NumPy and against the
scalar loops of graphsolve/kernels/blocks.py that they replace on the hot path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from numba.core.errors import TypingError

from graphsolve.kernels.blocks import _ldl_inplace, _ldl_solve_left, _sub_matmul
from graphsolve.kernels.simd import (
    ldl_solve6,
    ldlt_pair6,
    ldlt_pair6_sym,
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
