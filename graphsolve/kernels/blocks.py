"""Small dense block operations for the compiled kernels (numba, inlined).

Flat row-major blocks of a few rows: LU with partial pivoting (LAPACK ``getrf`` convention) and
the definite ``M Δ Mᵀ`` factor of LDLᵀ pivot blocks, their triangular solves, and block
products. Loops written out beat BLAS calls at these sizes; six-column operands keep a row of
the result in six scalars (:func:`_rows6`, :func:`_sweep_rows6`), which the compiler cannot do
for memory it cannot prove unaliased. Every function is ``inline="always"``: after an edit
here, run ``make clean-cache`` (numba's cache of the calling kernels follows their own file).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .simd import lu_pivot_3, lu_pivot_5, lu_pivot_6

#: numba options of the kernels that run per pivot block or per solve (the factor and solve
#: kernels, their entry points, the fused refactor-and-solve): compiled without numba's
#: reference counting (``_nrt``), which costs an atomic increment and decrement per array
#: argument, tuple member and slice, per call. Such a kernel allocates nothing and returns no
#: array (docs: architecture, "Hot kernels without reference counting";
#: tests/test_kernel_flags.py).
NO_REFCOUNT: dict[str, Any] = {"_nrt": False}

# No kernel is compiled with value-changing fastmath flags (reassoc, contract, arcp): numba
# links a copy of every callee into each caller's module and LLVM re-optimizes each copy;
# with those flags the copies may round differently, and which copy a call binds to
# depended on whether numba compiled the kernels in this process or loaded them from its
# cache (the same dynamics run differed by 1e-3 between a first and a second process).
# Measured without them: no slower (refactor + solve, dynamics steps).


@njit(cache=True, error_model="numpy", inline="always")
def _lu_inplace(a, piv, s):
    """LU with partial pivoting of the s×s row-major matrix ``a`` (flat view), in place.
    Returns min |u_kk| (0 for an exactly singular or non-finite block)."""
    umin = np.inf
    for k in range(s):
        p = k
        best = abs(a[k * s + k])
        for r in range(k + 1, s):
            v = abs(a[r * s + k])
            if v > best:
                best, p = v, r
        piv[k] = p
        if p != k:
            for c in range(s):
                tmp = a[k * s + c]
                a[k * s + c] = a[p * s + c]
                a[p * s + c] = tmp
        ukk = a[k * s + k]
        if not np.isfinite(ukk):
            return 0.0
        if abs(ukk) < umin:
            umin = abs(ukk)
        if ukk == 0.0:
            continue
        for r in range(k + 1, s):
            f = a[r * s + k] / ukk
            a[r * s + k] = f
            if f != 0.0:
                for c in range(k + 1, s):
                    a[r * s + c] -= f * a[k * s + c]
    return umin


@njit(cache=True, error_model="numpy", inline="always")
def _ldl_inplace(a, s, tol):
    """Symmetric ``a = M Δ Mᵀ`` of the s×s row-major (flat) block without pivoting: M (unit
    lower) below the diagonal, ``1/Δ`` on it (reciprocals: the solves multiply). Reads only
    the lower triangle. Returns True if every ``|Δ_k| > tol`` and all Δ_k have one sign,
    i.e. the block is numerically definite (for a definite block, no pivoting is as stable as
    Cholesky); otherwise the caller falls back to LU with partial pivoting. Brüdigam et al.
    (2023) leave the pivot factorization open; a quasi-definite KKT matrix (Baraff 1996) has
    only definite pivot blocks in any elimination order, so this is the fast path for LDLᵀ."""
    sign = 0.0
    for k in range(s):
        d = a[k * s + k]
        if not abs(d) > tol:                # also catches NaN
            return False
        if sign * d < 0.0:
            return False
        sign = d
        r = 1.0 / d
        a[k * s + k] = r
        for i in range(k + 1, s):
            f = a[i * s + k]
            a[i * s + k] = f * r
            for j in range(k + 1, i + 1):   # Schur complement (lower): A_ij -= A_ik M_jk
                a[i * s + j] -= f * a[j * s + k]
    return True


@njit(cache=True, error_model="numpy", inline="always")
def _ldl_solve_left(a, s, x, ncol):
    """x (s × ncol, flat row-major) <- D⁻¹ x = M⁻ᵀ Δ⁻¹ M⁻¹ x with the factor of
    :func:`_ldl_inplace` (no divisions, no row swaps)."""
    if ncol == 6:                           # y = M⁻¹ x; x_r = Δ_r⁻¹ y_r - Σ_k>r M_kr x_k
        _sweep_rows6(a, s, x, True, False, 0)
        _sweep_rows6(a, s, x, False, True, 1)
        return
    for r in range(s):                      # M (unit lower)
        for k in range(r):
            _row_axpy(x, r, k, a[r * s + k], ncol)
    for r in range(s):                      # Δ⁻¹ (stored reciprocals)
        d = a[r * s + r]
        for j in range(ncol):
            x[r * ncol + j] *= d
    for r in range(s - 1, -1, -1):          # Mᵀ (unit upper)
        for k in range(r + 1, s):
            _row_axpy(x, r, k, a[k * s + r], ncol)


@njit(cache=True, error_model="numpy", inline="always")
def _sweep_rows6(a, s, x, forward, trans, scale):
    """One triangular sweep over the rows of ``x`` (s × 6): in order (``forward``) or reverse,
    ``x_r <- (x_r · a_rr if scale == 1) - Σ_k a_rk x_k`` over the rows already swept, then
    ``/ a_rr`` if ``scale == 2`` (``a_rk`` read as ``a[k, r]`` when ``trans``). A row is held in
    six scalars (see :func:`_rows6`). The triangular solves with an LU or ``M Δ Mᵀ`` pivot
    factor on six columns are two such sweeps."""
    for step in range(s):
        r = step if forward else s - 1 - step
        q = r * 6
        c0, c1, c2, c3, c4, c5 = x[q], x[q + 1], x[q + 2], x[q + 3], x[q + 4], x[q + 5]
        if scale == 1:
            d = a[r * s + r]
            c0, c1, c2, c3, c4, c5 = c0 * d, c1 * d, c2 * d, c3 * d, c4 * d, c5 * d
        k0, k1 = (0, r) if forward else (r + 1, s)
        for k in range(k0, k1):
            f = a[k * s + r] if trans else a[r * s + k]
            p = k * 6
            c0 -= f * x[p]
            c1 -= f * x[p + 1]
            c2 -= f * x[p + 2]
            c3 -= f * x[p + 3]
            c4 -= f * x[p + 4]
            c5 -= f * x[p + 5]
        if scale == 2:
            d = 1.0 / a[r * s + r]
            c0, c1, c2, c3, c4, c5 = c0 * d, c1 * d, c2 * d, c3 * d, c4 * d, c5 * d
        x[q], x[q + 1], x[q + 2], x[q + 3], x[q + 4], x[q + 5] = c0, c1, c2, c3, c4, c5


@njit(cache=True, error_model="numpy", inline="always")
def _swap_rows(x, k, p, ncol):
    """Swap rows k and p of the flat row-major x with ncol columns."""
    if p != k:
        for j in range(ncol):
            tmp = x[k * ncol + j]
            x[k * ncol + j] = x[p * ncol + j]
            x[p * ncol + j] = tmp


@njit(cache=True, error_model="numpy", inline="always")
def _row_axpy(x, dst, src, f, ncol):
    """Row dst -= f * row src of the flat row-major x with ncol columns."""
    for j in range(ncol):
        x[dst * ncol + j] -= f * x[src * ncol + j]


@njit(cache=True, error_model="numpy", inline="always")
def _lu_solve_left(lu, piv, s, x, ncol):
    """x (s × ncol, flat row-major) <- D⁻¹ x."""
    for k in range(s):
        _swap_rows(x, k, piv[k], ncol)
    if ncol == 6:
        _sweep_rows6(lu, s, x, True, False, 0)         # unit lower
        _sweep_rows6(lu, s, x, False, False, 2)        # upper
        return
    for r in range(s):                      # unit lower
        for k in range(r):
            _row_axpy(x, r, k, lu[r * s + k], ncol)
    for r in range(s - 1, -1, -1):          # upper
        for k in range(r + 1, s):
            _row_axpy(x, r, k, lu[r * s + k], ncol)
        inv = 1.0 / lu[r * s + r]
        for j in range(ncol):
            x[r * ncol + j] *= inv


@njit(cache=True, error_model="numpy", inline="always")
def _lu_solve_trans_left(lu, piv, s, x, ncol):
    """x (s × ncol, flat row-major) <- D⁻ᵀ x, with P D = L U: Dᵀ = Uᵀ Lᵀ P, so solve with Uᵀ,
    then Lᵀ, then undo the row swaps in reverse order. Rows are contiguous (vectorizes)."""
    if ncol == 6:
        _sweep_rows6(lu, s, x, True, True, 2)          # Uᵀ (lower, non-unit)
        _sweep_rows6(lu, s, x, False, True, 0)         # Lᵀ (unit upper)
        for k in range(s - 1, -1, -1):
            _swap_rows(x, k, piv[k], ncol)
        return
    for r in range(s):                      # Uᵀ (lower, non-unit)
        for k in range(r):
            _row_axpy(x, r, k, lu[k * s + r], ncol)
        inv = 1.0 / lu[r * s + r]
        for j in range(ncol):
            x[r * ncol + j] *= inv
    for r in range(s - 1, -1, -1):          # Lᵀ (unit upper)
        for k in range(r + 1, s):
            _row_axpy(x, r, k, lu[k * s + r], ncol)
    for k in range(s - 1, -1, -1):          # Pᵀ
        _swap_rows(x, k, piv[k], ncol)


@njit(cache=True, error_model="numpy", inline="always")
def _rows6(c, a, b, m, k, b_transposed, assign):
    """``c (m×6) -= a (m×k) @ b`` (``assign``: ``c = a @ b``), ``b`` (k×6) or, transposed,
    stored (6×k). A row of ``c`` lives in six scalars while ``k`` products are added, so
    nothing is stored and reloaded in between (the compiler cannot prove ``c`` does not alias
    ``a``/``b``); about twice the speed of the plain loops for 6×6 blocks."""
    for i in range(m):
        r = i * 6
        if assign:
            c0 = c1 = c2 = c3 = c4 = c5 = 0.0
        else:
            c0, c1, c2, c3, c4, c5 = c[r], c[r + 1], c[r + 2], c[r + 3], c[r + 4], c[r + 5]
        for t in range(k):
            f = a[i * k + t]
            if assign:
                f = -f
            if b_transposed:
                c0 -= f * b[t]
                c1 -= f * b[k + t]
                c2 -= f * b[2 * k + t]
                c3 -= f * b[3 * k + t]
                c4 -= f * b[4 * k + t]
                c5 -= f * b[5 * k + t]
            else:
                q = t * 6
                c0 -= f * b[q]
                c1 -= f * b[q + 1]
                c2 -= f * b[q + 2]
                c3 -= f * b[q + 3]
                c4 -= f * b[q + 4]
                c5 -= f * b[q + 5]
        c[r], c[r + 1], c[r + 2], c[r + 3], c[r + 4], c[r + 5] = c0, c1, c2, c3, c4, c5


@njit(cache=True, error_model="numpy", inline="always")
def _matmul(a, b, out, m, k, n):
    """out (m×n) = a (m×k) @ b (k×n), all flat row-major."""
    if n == 6:
        _rows6(out, a, b, m, k, False, True)
        return
    for i in range(m):
        for j in range(n):
            out[i * n + j] = 0.0
        for t in range(k):
            f = a[i * k + t]
            for j in range(n):
                out[i * n + j] += f * b[t * n + j]


@njit(cache=True, error_model="numpy", inline="always")
def _sub_matmul(c, a, b, m, k, n, b_transposed):
    """c (m×n) -= a (m×k) @ b (k×n), or @ bᵀ with b stored (n×k) when ``b_transposed``."""
    if n == 6:
        _rows6(c, a, b, m, k, b_transposed, False)
        return
    if b_transposed:                        # row-by-row dot products: contiguous in a and b
        for i in range(m):
            for j in range(n):
                acc = 0.0
                for t in range(k):
                    acc += a[i * k + t] * b[j * k + t]
                c[i * n + j] -= acc
        return
    if n == 1:                              # matrix-vector: dot products
        for i in range(m):
            acc = 0.0
            for t in range(k):
                acc += a[i * k + t] * b[t]
            c[i] -= acc
        return
    for i in range(m):
        for t in range(k):
            f = a[i * k + t]
            if b_transposed:
                for j in range(n):
                    c[i * n + j] -= f * b[j * k + t]
            else:
                for j in range(n):
                    c[i * n + j] -= f * b[t * n + j]


# One right-hand side: flat loops with no nested helpers (each inlined copy stays small; numba
# re-processes every nested ``inline="always"`` callee at each call site).
@njit(cache=True, error_model="numpy", inline="always")
def _matvec_sub(y, a, z, m, n):
    """``y (m) -= a (m×n) @ z (n)``, row dot products."""
    for i in range(m):
        acc = 0.0
        for t in range(n):
            acc += a[i * n + t] * z[t]
        y[i] -= acc


@njit(cache=True, error_model="numpy", inline="always")
def _lu_solve_vec(lu, piv, s, y):
    """``y <- D⁻¹ y`` with the LU factor of :func:`_lu_inplace` (one right-hand side)."""
    for k in range(s):
        p = piv[k]
        if p != k:
            tmp = y[k]
            y[k] = y[p]
            y[p] = tmp
    for r in range(s):                      # unit lower
        for k in range(r):
            y[r] -= lu[r * s + k] * y[k]
    for r in range(s - 1, -1, -1):          # upper
        for k in range(r + 1, s):
            y[r] -= lu[r * s + k] * y[k]
        y[r] *= 1.0 / lu[r * s + r]


@njit(cache=True, error_model="numpy", inline="always")
def _ldl_solve_vec(a, s, y):
    """``y <- D⁻¹ y`` with the ``M Δ Mᵀ`` factor of :func:`_ldl_inplace` (one right-hand
    side; ``Δ`` stored as reciprocals)."""
    for r in range(s):                      # M (unit lower)
        for k in range(r):
            y[r] -= a[r * s + k] * y[k]
    for r in range(s):                      # Δ⁻¹ (stored reciprocals)
        y[r] *= a[r * s + r]
    for r in range(s - 1, -1, -1):          # Mᵀ (unit upper)
        for k in range(r + 1, s):
            y[r] -= a[k * s + r] * y[k]


@njit(error_model="numpy", inline="always")
def _finish_pivot(Di, lu_i, piv_i, si, symmetric, rtol):
    """Symmetrize (LDLᵀ), copy and factor the pivot ``D_i``; False if it is singular.

    LDLᵀ tries :func:`_ldl_inplace` first (marked by ``piv_i[0] = -1``); an indefinite or
    nearly singular block, and every LDU pivot, gets LU with partial pivoting, whose smallest
    pivot decides singularity (the rule of :data:`~graphsolve.kernels.reference.PIVOT_RTOL`).

    The definite test scales the tolerance by the largest diagonal entry: it passes only for a
    definite block, whose largest entry is on the diagonal (``|a_ij|² ≤ a_ii a_jj``), so the
    rule is the same without a pass over all entries. A NaN or inf anywhere in the (averaged)
    lower triangle reaches some ``Δ_k`` as NaN, ``±inf`` of the wrong sign or a NaN
    tolerance, so a non-finite block always falls through to the LU branch, which checks
    every entry (3 % of a path refactor). Pivots factored in place (:func:`_in_place`) have
    no LU branch: False instead."""
    if symmetric and _finish_definite(Di, lu_i, 0, si, rtol):
        piv_i[0] = -1
        return True
    if _in_place(Di, lu_i):             # the definite attempt overwrote D_i: no LU of it
        return False
    return _finish_lu(Di, lu_i, piv_i, si, rtol)


@njit(error_model="numpy", inline="always")
def _in_place(D, Dlu):
    """Whether the pivot blocks are factored in place (``D`` and ``Dlu`` one buffer, as a
    :class:`graphsolve.Factorization` of a tree allocates them for LDLᵀ): a pivot then has
    no copy left once :func:`_finish_definite` has run, so an indefinite or singular pivot
    is reported as failed (and the caller factors again with separate buffers) instead of
    going to :func:`_finish_lu`."""
    return D.ctypes.data == Dlu.ctypes.data


@njit(error_model="numpy", inline="always")
def _finish_definite(D, Dlu, o, si, rtol):
    """The LDLᵀ branch of :func:`_finish_pivot` on the block at offset ``o`` of ``D`` and
    ``Dlu``: symmetrize it and copy it in one pass, factor the copy (:func:`_ldl_inplace`);
    False if it is not numerically definite. (On offsets rather than slices, so that the 6×6
    tree kernel calls it without making slices.)"""
    scale = 0.0
    for r in range(si):
        for c in range(r):
            avg = 0.5 * (D[o + r * si + c] + D[o + c * si + r])
            D[o + r * si + c] = avg
            D[o + c * si + r] = avg
            Dlu[o + r * si + c] = avg
            Dlu[o + c * si + r] = avg
        v = D[o + r * si + r]
        Dlu[o + r * si + r] = v
        scale = max(scale, abs(v))          # a definite block's largest entry is diagonal
    return _ldl_inplace(Dlu[o:o + si * si], si, rtol * si * scale)


@njit(error_model="numpy", inline="always")
def _finish_lu(Di, lu_i, piv_i, si, rtol):
    """The LU branch of :func:`_finish_pivot`: copy, LU with partial pivoting, and the
    singularity rule on its smallest pivot (non-finite entries count as singular). Pivots of
    6, 5 and 3 rows (bodies, and joints of five or three constraints) run the vectorized
    :func:`graphsolve.kernels.simd.lu_pivot_6` (rows in registers, the same verdict and the
    same factor bit for bit), other sizes :func:`_finish_lu_loops`."""
    if si == 6:
        return lu_pivot_6(Di, 0, lu_i, 0, piv_i, 0, rtol)
    if si == 5:
        return lu_pivot_5(Di, 0, lu_i, 0, piv_i, 0, rtol)
    if si == 3:
        return lu_pivot_3(Di, 0, lu_i, 0, piv_i, 0, rtol)
    return _finish_lu_loops(Di, lu_i, piv_i, si, rtol)


@njit(error_model="numpy", inline="always")
def _finish_lu_loops(Di, lu_i, piv_i, si, rtol):
    """:func:`_finish_lu` as scalar loops, for any size (the reference of the vectorized
    pivots)."""
    scale = 0.0
    finite = True
    for q in range(si * si):
        lu_i[q] = Di[q]
        v = abs(Di[q])
        if not np.isfinite(v):
            finite = False
        elif v > scale:
            scale = v
    umin = _lu_inplace(lu_i, piv_i, si)
    return finite and umin > rtol * si * scale
