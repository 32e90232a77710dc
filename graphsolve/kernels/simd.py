"""Vectorized block operations for the compiled kernels (numba intrinsics, LLVM IR): 6×6
LDLᵀ blocks, and the LDU pair steps and pivot LUs of bodies and joints.

Six is the block size of a rigid body (Baraff 1996; Brüdigam et al. 2023 use 6×6 blocks
throughout §5.2), so the uniform 6×6 LDLᵀ refactor of a tree is the hot path of the package.
Written as numba loops (:func:`graphsolve.kernels.blocks._rows6`, ``_sweep_rows6``) its block
products and triangular solves compile to scalar instructions only: numba cannot tell LLVM that
the flat buffers do not alias, and a row of six is not a vector length LLVM's SLP vectorizer
picks on its own. The intrinsics here emit the same arithmetic as straight-line LLVM IR over
``<4 x double>`` + ``<2 x double>`` row vectors held in registers (a 6×6 block is twelve
vector registers), which LLVM lowers to AVX / FMA where the CPU has them and to SSE2 pairs
where it does not: in a loop of independent 6×6 blocks, about three times as fast as the
scalar loops.

The LDU factor of a KKT matrix (Baraff 1996) pairs bodies (6×6 pivots) with joints (5×5 or
3×3: revolute / prismatic and spherical joints). Its pair step (:func:`lu_pair_6_5` and the
other ``lu_pair_*``) holds the rows of ``D_c⁻¹ S`` in registers, rows of five or three as
``<4 x double>`` + ``<1 x double>`` or ``<2 x double>`` + ``<1 x double>``, and its pivot LU
(:func:`lu_pivot_6`, ``_5``, ``_3``) holds the whole block, choosing each pivot and swapping
rows with selects instead of branches. These round each product and difference as the scalar
loops do (:func:`_sub_exact`, no fused multiply-add): their results are the loops' bit for
bit, so the dynamics' trajectories and iteration counts do not depend on which code ran. On
the 100-link revolute chain's Newton matrix they cut the refactor from 32 to 24.5 µs.

Each function takes flat, C-contiguous float64 arrays and element offsets (the kernels' block
buffers), reads and writes its blocks' entries from each offset, and does no bounds checks:
the callers pass offsets of blocks laid out by the analysis. The scalar loops in
:mod:`graphsolve.kernels.blocks` are the reference; ``tests/graphsolve/test_simd.py`` checks
these against them and against NumPy. Only multiplications, additions and (in the LU
operations) divisions by pivots are emitted, no reassociation: NaN and inf propagate as in
the scalar code. In the 6×6 LDLᵀ operations ``acc - f * x`` is LLVM's ``llvm.fmuladd``
(one FMA where the CPU has one, a multiply and an add otherwise): the choice is the
target's, not the optimizer's, so every copy of a kernel rounds alike (no fastmath
``contract`` flag, see :mod:`graphsolve.kernels.blocks`).
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic

__all__ = ["mm6_sub", "mm6t_sub", "ldl_solve6", "ldlt_pair6", "ldlt_pair6_sym", "matvec6_sub",
           "matvec6t_sub", "lu_pair_6_5", "lu_pair_5_6", "lu_pair_6_3", "lu_pair_3_6",
           "lu_pair_6_6", "lu_trans_6_5", "lu_trans_5_6", "lu_trans_6_3", "lu_trans_3_6",
           "lu_trans_6_6", "lu_pivot_6", "lu_pivot_5", "lu_pivot_3", "prefetch", "copy_fixed"]

_DBL = ir.DoubleType()
_V4 = ir.VectorType(_DBL, 4)
_V2 = ir.VectorType(_DBL, 2)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _check(*args) -> None:
    """Typing: alternating (array, offset) arguments; arrays flat C-contiguous float64."""
    for k in range(0, len(args), 2):
        arr, off = args[k], args[k + 1]
        if not (isinstance(arr, types.Array) and arr.dtype == types.float64 and arr.ndim == 1
                and arr.layout == "C" and arr.mutable):
            raise TypingError(f"argument {k}: expected a writable flat C-contiguous float64 "
                              f"array, got {arr}")
        if not isinstance(off, types.Integer):
            raise TypingError(f"argument {k + 1}: expected an integer offset, got {off}")


def _base(context, builder, signature, args, k):
    """Pointer to ``arr[off]`` for the (array, offset) argument pair at ``k``."""
    ary = context.make_array(signature.args[k])(context, builder, args[k])
    off = context.cast(builder, args[k + 1], signature.args[k + 1], types.intp)
    return builder.gep(ary.data, [off])


def _ptr(builder, base, k, vt):
    p = builder.gep(base, [ir.Constant(_I64, k)])
    return builder.bitcast(p, vt.as_pointer()) if vt is not None else p


def _row_chunks(width: int) -> list:
    """``(offset, vector type)`` pieces of a row of ``width`` doubles (six: ``<4>`` + ``<2>``,
    five: ``<4>`` + ``<1>``, three: ``<2>`` + ``<1>``)."""
    chunks, o = [], 0
    while o < width:
        n = 4 if width - o >= 4 else (2 if width - o >= 2 else 1)
        chunks.append((o, ir.VectorType(_DBL, n)))
        o += n
    return chunks


def _load_row(builder, base, r, width=6):
    """Row ``r`` of a block of ``width`` columns, as the vectors of :func:`_row_chunks` (a 6×6
    block's: a ``<4 x double>`` and a ``<2 x double>``)."""
    return [builder.load(_ptr(builder, base, width * r + o, vt), align=8)
            for o, vt in _row_chunks(width)]


def _store_row(builder, base, r, row, width=6) -> None:
    for (o, vt), v in zip(_row_chunks(width), row, strict=True):
        builder.store(v, _ptr(builder, base, width * r + o, vt), align=8)


def _scalar(builder, base, k):
    return builder.load(_ptr(builder, base, k, None), align=8)


def _splat(builder, s, vt):
    v = builder.insert_element(ir.Constant(vt, ir.Undefined), s, ir.Constant(_I32, 0))
    mask = ir.Constant(ir.VectorType(_I32, vt.count), [0] * vt.count)
    return builder.shuffle_vector(v, ir.Constant(vt, ir.Undefined), mask)


def _sub_scaled(builder, acc, f, row):
    """``acc - f * row`` (``f`` a scalar): ``fmuladd(-f, row, acc)``."""
    out = []
    for h in range(len(row)):
        vt = row[h].type
        fmuladd = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vt, [vt] * 3),
                                                 f"llvm.fmuladd.v{vt.count}f64")
        out.append(builder.call(fmuladd, [_splat(builder, builder.fneg(f), vt), row[h], acc[h]]))
    return out


def _sub_exact(builder, acc, f, row):
    """``acc - f * row`` as a multiply and a subtraction, each rounded: the arithmetic of the
    scalar loops (``c -= f * x``, no fused multiply-add), so that the result is theirs bit for
    bit."""
    out = []
    for h in range(len(row)):
        vt = row[h].type
        out.append(builder.fsub(acc[h], builder.fmul(_splat(builder, f, vt), row[h])))
    return out


def _scaled(builder, f, row):
    return [builder.fmul(_splat(builder, f, row[h].type), row[h]) for h in range(len(row))]


def _ldl_sweeps(builder, F, rows):
    """``rows <- M⁻ᵀ Δ⁻¹ M⁻¹ rows`` with the factor of ``blocks._ldl_inplace`` at ``F`` (unit
    lower ``M`` below the diagonal, ``1/Δ`` on it); the two sweeps of ``_ldl_solve_left``."""
    for r in range(6):                              # y = M⁻¹ x
        for k in range(r):
            rows[r] = _sub_scaled(builder, rows[r], _scalar(builder, F, 6 * r + k), rows[k])
    for r in range(5, -1, -1):                      # x_r = Δ_r⁻¹ y_r - Σ_{k>r} M_kr x_k
        rows[r] = _scaled(builder, _scalar(builder, F, 7 * r), rows[r])
        for k in range(r + 1, 6):
            rows[r] = _sub_scaled(builder, rows[r], _scalar(builder, F, 6 * k + r), rows[k])
    return rows


def _load_transposed(builder, B, m=6, n=6):
    """The ``n`` rows of ``Bᵀ`` (the columns of the ``m×n`` block ``B``, 6×6 by default),
    gathered into registers as rows of width ``m``."""
    rows = []
    for c in range(n):
        row = []
        for o, vt in _row_chunks(m):
            v = ir.Constant(vt, ir.Undefined)
            for q in range(vt.count):
                v = builder.insert_element(v, _scalar(builder, B, (o + q) * n + c),
                                           ir.Constant(_I32, q))
            row.append(v)
        rows.append(row)
    return rows


def _sub_product(builder, C, A, rows, src=None) -> None:
    """``C -= A @ R`` with ``R``'s six rows in registers, ``A`` and ``C`` 6×6 in memory
    (``C = S - A @ R`` with ``src`` = ``S``)."""
    for i in range(6):
        acc = _load_row(builder, C if src is None else src, i)
        for t in range(6):
            acc = _sub_scaled(builder, acc, _scalar(builder, A, 6 * i + t), rows[t])
        _store_row(builder, C, i, acc)


@intrinsic
def mm6_sub(typingctx, c, co, a, ao, b, bo):
    """``c[co:co+36] -= a[ao:ao+36] @ b[bo:bo+36]``, 6×6 row-major blocks (the scalar form is
    ``blocks._sub_matmul(c, a, b, 6, 6, 6, False)``)."""
    _check(c, co, a, ao, b, bo)

    def codegen(context, builder, signature, args):
        C, A, B = (_base(context, builder, signature, args, k) for k in (0, 2, 4))
        _sub_product(builder, C, A, [_load_row(builder, B, t) for t in range(6)])
        return context.get_dummy_value()
    return types.void(c, co, a, ao, b, bo), codegen


@intrinsic
def mm6t_sub(typingctx, c, co, a, ao, b, bo):
    """``c[co:co+36] -= a[ao:ao+36] @ b[bo:bo+36]ᵀ``, 6×6 row-major blocks (the scalar form is
    ``blocks._sub_matmul(c, a, b, 6, 6, 6, True)``): the fill update of an LDLᵀ triple,
    Brüdigam et al. (2023) Alg. 3 line 14."""
    _check(c, co, a, ao, b, bo)

    def codegen(context, builder, signature, args):
        C, A, B = (_base(context, builder, signature, args, k) for k in (0, 2, 4))
        _sub_product(builder, C, A, _load_transposed(builder, B))
        return context.get_dummy_value()
    return types.void(c, co, a, ao, b, bo), codegen


@intrinsic
def ldl_solve6(typingctx, f, fo, x, xo):
    """``x <- D⁻¹ x`` for a 6×6 block ``x`` at ``xo`` and the ``M Δ Mᵀ`` factor of ``D`` at
    ``fo`` (the scalar form is ``blocks._ldl_solve_left(f, 6, x, 6)``)."""
    _check(f, fo, x, xo)

    def codegen(context, builder, signature, args):
        F, X = (_base(context, builder, signature, args, k) for k in (0, 2))
        rows = _ldl_sweeps(builder, F, [_load_row(builder, X, r) for r in range(6)])
        for r in range(6):
            _store_row(builder, X, r, rows[r])
        return context.get_dummy_value()
    return types.void(f, fo, x, xo), codegen


@intrinsic
def ldlt_pair6(typingctx, t, to, l, lo, ds, dso, d, do, f, fo):
    """One LDLᵀ pair of Brüdigam et al. (2023) Alg. 3 lines 18-20 for 6×6 blocks with a
    definite child pivot: ``V = D_c⁻¹ Tᵀ``, ``D_i = D_i' - T V``, ``L = Vᵀ = T D_c⁻¹``.

    ``T`` is read at ``t[to]`` and ``L`` written at ``l[lo]``; ``D_i'`` is read at ``ds[dso]``
    and the updated ``D_i`` written at ``d[do]``; ``f[fo]`` holds the ``M Δ Mᵀ`` factor of
    ``D_c``. In place (``T`` and ``L``, ``D_i'`` and ``D_i`` the same blocks) this is the
    definite LDLᵀ branch of ``factor_kernels._scale_pair_py`` (transpose into ``w2``,
    ``_ldl_solve_left``, ``_sub_matmul``, transpose back); apart, the tree kernel
    (``tree6._factor_tree6``) reads ``T`` and ``D_i'`` straight from the matrix's values.
    ``Tᵀ`` is gathered into registers and nothing passes through a work buffer; every read of
    ``T`` and ``D_i'`` comes before the write of the same row, so the in-place form is safe."""
    _check(t, to, l, lo, ds, dso, d, do, f, fo)

    def codegen(context, builder, signature, args):
        T, Lo, Ds, D, F = (_base(context, builder, signature, args, k) for k in (0, 2, 4, 6, 8))
        _pair6(builder, T, Lo, Ds, D, F, _load_transposed(builder, T))
        return context.get_dummy_value()
    return types.void(t, to, l, lo, ds, dso, d, do, f, fo), codegen


def _pair6(builder, T, Lo, Ds, D, F, tt) -> None:
    """The body of :func:`ldlt_pair6`, ``tt`` the rows of ``Tᵀ`` in registers."""
    rows = _ldl_sweeps(builder, F, list(tt))        # V = D_c⁻¹ Tᵀ
    _sub_product(builder, D, T, rows, src=Ds)       # D_i = D_i' - T V (T not yet overwritten)
    for c in range(6):                              # L <- Vᵀ
        for r in range(6):
            h, q = (0, r) if r < 4 else (1, r - 4)
            v = builder.extract_element(rows[c][h], ir.Constant(_I32, q))
            builder.store(v, _ptr(builder, Lo, 6 * r + c, None), align=8)


@intrinsic
def ldlt_pair6_sym(typingctx, t, to, l, lo, ds, dso, d, do, f, fo, u, uo):
    """:func:`ldlt_pair6`, and returns ``Σ (U - Tᵀ)²`` for the upper block ``U`` at ``u[uo]``
    (the matrix's ``A_ic`` against its ``A_ci``): the LDLᵀ symmetry check of the pair, on the
    rows of ``Tᵀ`` that the pair step gathers into registers anyway (scalar form: the check
    loop in ``tree6._factor_tree6``). NaN or inf in either block makes the sum NaN or inf.
    """
    _check(t, to, l, lo, ds, dso, d, do, f, fo, u, uo)

    def codegen(context, builder, signature, args):
        T, Lo, Ds, D, F, U = (_base(context, builder, signature, args, k)
                              for k in (0, 2, 4, 6, 8, 10))
        tt = _load_transposed(builder, T)
        acc = None
        for r in range(6):                          # (U - Tᵀ) row by row, squares summed
            ur = _load_row(builder, U, r)
            diff = [builder.fsub(ur[h], tt[r][h]) for h in range(2)]
            sq = [builder.fmul(diff[h], diff[h]) for h in range(2)]
            acc = sq if acc is None else [builder.fadd(acc[h], sq[h]) for h in range(2)]
        _pair6(builder, T, Lo, Ds, D, F, tt)        # after the loads of U: U may alias L
        total = builder.extract_element(acc[1], ir.Constant(_I32, 0))
        total = builder.fadd(total, builder.extract_element(acc[1], ir.Constant(_I32, 1)))
        for q in range(4):
            total = builder.fadd(total, builder.extract_element(acc[0], ir.Constant(_I32, q)))
        return total
    return types.float64(t, to, l, lo, ds, dso, d, do, f, fo, u, uo), codegen


def _load_vec6(builder, base):
    return [builder.load(_ptr(builder, base, 0, _V4), align=8),
            builder.load(_ptr(builder, base, 4, _V2), align=8)]


def _store_vec6(builder, base, v) -> None:
    builder.store(v[0], _ptr(builder, base, 0, _V4), align=8)
    builder.store(v[1], _ptr(builder, base, 4, _V2), align=8)


def _shuffle(builder, a, b, idx):
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(_I32, len(idx)), idx))


@intrinsic
def matvec6_sub(typingctx, y, yo, m, mo, z, zo):
    """``y[yo:yo+6] -= M z[zo:zo+6]`` with ``M`` 6×6 row-major at ``mo``: six row dot products,
    paired into ``<2 x double>`` sums (the scalar form is ``blocks._matvec_sub(y, M, z, 6,
    6)``)."""
    _check(y, yo, m, mo, z, zo)

    def codegen(context, builder, signature, args):
        Y, M, Z = (_base(context, builder, signature, args, k) for k in (0, 2, 4))
        zv = _load_vec6(builder, Z)
        sums = []
        for r in range(6):                          # <row_r · z> as the two lanes of a pair
            row = _load_row(builder, M, r)
            p4 = builder.fmul(row[0], zv[0])
            p2 = builder.fmul(row[1], zv[1])
            lo = _shuffle(builder, p4, p4, [0, 1])
            hi = _shuffle(builder, p4, p4, [2, 3])
            sums.append(builder.fadd(builder.fadd(lo, hi), p2))
        pairs = []
        for r in range(0, 6, 2):                    # (Σ lanes of r, Σ lanes of r + 1)
            a = _shuffle(builder, sums[r], sums[r + 1], [0, 2])
            b = _shuffle(builder, sums[r], sums[r + 1], [1, 3])
            pairs.append(builder.fadd(a, b))
        for h in range(3):
            p = _ptr(builder, Y, 2 * h, _V2)
            builder.store(builder.fsub(builder.load(p, align=8), pairs[h]), p, align=8)
        return context.get_dummy_value()
    return types.void(y, yo, m, mo, z, zo), codegen


@intrinsic
def matvec6t_sub(typingctx, y, yo, m, mo, z, zo):
    """``y[yo:yo+6] -= Mᵀ z[zo:zo+6]`` with ``M`` 6×6 row-major at ``mo``: ``y -= Σ_q z_q
    M_q`` over the rows ``M_q`` (the transposed product of an LDLᵀ backward sweep)."""
    _check(y, yo, m, mo, z, zo)

    def codegen(context, builder, signature, args):
        Y, M, Z = (_base(context, builder, signature, args, k) for k in (0, 2, 4))
        acc = _load_vec6(builder, Y)
        for q in range(6):
            acc = _sub_scaled(builder, acc, _scalar(builder, Z, q), _load_row(builder, M, q))
        _store_vec6(builder, Y, acc)
        return context.get_dummy_value()
    return types.void(y, yo, m, mo, z, zo), codegen


def _sweep(builder, F, n, rows, forward, trans, scale):
    """One triangular sweep over ``rows`` (registers) with the ``n×n`` LU factor at ``F``, in
    order (``forward``) or reverse: ``row_r -= Σ_k a_rk row_k`` over the rows already swept
    (``a_rk`` read as ``a[k, r]`` when ``trans``), then ``row_r *= 1 / a_rr`` if ``scale``.
    The arithmetic of ``blocks._sweep_rows6`` and the LU solves' loops, bit for bit."""
    one = ir.Constant(_DBL, 1.0)
    for r in (range(n) if forward else range(n - 1, -1, -1)):
        for k in (range(r) if forward else range(r + 1, n)):
            a = _scalar(builder, F, k * n + r if trans else r * n + k)
            rows[r] = _sub_exact(builder, rows[r], a, rows[k])
        if scale:
            rows[r] = _scaled(builder, builder.fdiv(one, _scalar(builder, F, r * n + r)),
                              rows[r])
    return rows


def _lu_pair(si: int, sc: int):
    """The intrinsic of one implicit-LDU pair step for an ``si×si`` pivot ``D_i`` and an
    ``sc×sc`` child pivot ``D_c`` (see :func:`lu_pair_6_5`)."""
    @intrinsic
    def lu_pair(typingctx, s, so, d, do, t, to, f, fo):
        _check(s, so, d, do, t, to, f, fo)

        def codegen(context, builder, signature, args):
            S, D, T, F = (_base(context, builder, signature, args, k) for k in (0, 2, 4, 6))
            rows = [_load_row(builder, S, r, si) for r in range(sc)]
            rows = _sweep(builder, F, sc, rows, True, False, False)    # unit lower
            rows = _sweep(builder, F, sc, rows, False, False, True)    # upper, 1 / u_rr
            for r in range(sc):                             # U = D_c⁻¹ S
                _store_row(builder, S, r, rows[r], si)
            for i in range(si):                             # D_i -= T U
                acc = _load_row(builder, D, i, si)
                for k in range(sc):
                    acc = _sub_exact(builder, acc, _scalar(builder, T, i * sc + k), rows[k])
                _store_row(builder, D, i, acc, si)
            return context.get_dummy_value()
        return types.void(s, so, d, do, t, to, f, fo), codegen
    return lu_pair


#: One LDU pair step of Brüdigam et al. (2023) Alg. 3 lines 18-20 with an implicit lower
#: block, for a 6×6 pivot ``D_i`` (a rigid body) and a 5×5 child pivot ``D_c`` (a joint of
#: five constraints, e.g. revolute): ``lu_pair_6_5(s, so, d, do, t, to, f, fo)`` overwrites
#: the 5×6 block ``S`` at ``s[so]`` (the matrix's ``A_ci``, its rows already swapped by the
#: pivot's row interchanges) with ``U = D_c⁻¹ S`` (the two triangular sweeps of the LU factor
#: at ``f[fo]``, LAPACK ``getrf`` layout) and then subtracts ``T U`` from the 6×6 ``D_i`` at
#: ``d[do]``, ``T`` the 6×5 ``A_ic`` at ``t[to]``. The rows of ``U`` stay in registers between
#: the two. Scalar form: ``blocks._lu_solve_left`` (after its row swaps) and
#: ``blocks._sub_matmul`` in ``factor_kernels._scale_pair_py``, whose results these are bit for
#: bit (the same operations in the same order, each product and difference rounded:
#: :func:`_sub_exact`).
lu_pair_6_5 = _lu_pair(6, 5)
#: :func:`lu_pair_6_5` for a 5×5 pivot ``D_i`` (a joint) and a 6×6 child pivot (a body): ``S``
#: is 6×5 and ``T`` 5×6.
lu_pair_5_6 = _lu_pair(5, 6)
#: :func:`lu_pair_6_5` for a 6×6 pivot and a 3×3 child (a spherical joint), and the other way
#: round; and for two 6×6 pivots (uniform LDU).
lu_pair_6_3 = _lu_pair(6, 3)
lu_pair_3_6 = _lu_pair(3, 6)
lu_pair_6_6 = _lu_pair(6, 6)


def _lu_trans(si: int, sc: int):
    """The intrinsic :func:`lu_trans_6_5` for an ``si×sc`` block ``T`` and an ``sc×sc``
    child pivot."""
    @intrinsic
    def lu_trans(typingctx, w, wo, t, to, f, fo):
        _check(w, wo, t, to, f, fo)

        def codegen(context, builder, signature, args):
            W, T, F = (_base(context, builder, signature, args, k) for k in (0, 2, 4))
            rows = _load_transposed(builder, T, si, sc)        # the rows of Tᵀ
            rows = _sweep(builder, F, sc, rows, True, True, True)      # Uᵀ (lower)
            rows = _sweep(builder, F, sc, rows, False, True, False)    # Lᵀ (unit upper)
            for r in range(sc):
                _store_row(builder, W, r, rows[r], si)
            return context.get_dummy_value()
        return types.void(w, wo, t, to, f, fo), codegen
    return lu_trans


#: ``lu_trans_6_5(w, wo, t, to, f, fo)``: the two sweeps of ``W = D_c⁻ᵀ Tᵀ`` for the 6×5 block
#: ``T`` at ``t[to]`` (read, gathered transposed into registers) and the LU factor of the 5×5
#: child pivot at ``f[fo]``, into the 5×6 ``W`` at ``w[wo]``; the caller then undoes the row
#: interchanges on ``W`` (``L = T D_c⁻¹ = Wᵀ`` up to them). The explicit-L half of an LDU pair
#: step (every LDU :class:`~graphsolve.Factorization`, and the fused handles of patterns with
#: fill; an implicit-L handle skips it) and of LDLᵀ with an LU child pivot. Scalar form: the
#: transposing copy and the two sweeps of ``blocks._lu_solve_trans_left`` in
#: ``factor_kernels._scale_pair_py``, whose result this is bit for bit.
lu_trans_6_5 = _lu_trans(6, 5)
#: :func:`lu_trans_6_5` for a 5×6 ``T`` and a 6×6 child pivot; ``_6_3``, ``_3_6`` and ``_6_6``
#: likewise.
lu_trans_5_6 = _lu_trans(5, 6)
lu_trans_6_3 = _lu_trans(6, 3)
lu_trans_3_6 = _lu_trans(3, 6)
lu_trans_6_6 = _lu_trans(6, 6)


def _lu_pivot(n: int):
    """The intrinsic :func:`lu_pivot_6` for an ``n×n`` pivot."""
    @intrinsic
    def lu_pivot(typingctx, d, do, f, fo, piv, po, rtol):
        _check(d, do, f, fo)
        if not (isinstance(piv, types.Array) and isinstance(piv.dtype, types.Integer)
                and piv.ndim == 1 and piv.layout == "C" and piv.mutable) \
                or not isinstance(po, types.Integer):
            raise TypingError(f"expected a writable flat integer pivot array, got {piv}")
        if not isinstance(rtol, types.Float):
            raise TypingError(f"expected a float tolerance, got {rtol}")

        def codegen(context, builder, signature, args):
            D, F = (_base(context, builder, signature, args, k) for k in (0, 2))
            P = _base(context, builder, signature, args, 4)
            ity = context.get_value_type(signature.args[4].dtype)
            tol = context.cast(builder, args[6], signature.args[6], types.float64)
            zero, inf = ir.Constant(_DBL, 0.0), ir.Constant(_DBL, float("inf"))
            rows = [_load_row(builder, D, r, n) for r in range(n)]
            fabs = {str(vt): cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(vt, [vt]), f"llvm.fabs.v{vt.count}f64")
                for _, vt in _row_chunks(n)}
            sabs = cgutils.get_or_insert_function(builder.module,
                                                  ir.FunctionType(_DBL, [_DBL]), "llvm.fabs.f64")
            smax = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(_DBL, [_DBL, _DBL]), "llvm.maxnum.f64")
            # the block's largest |entry| and whether every entry is finite (Σ v·0 = 0)
            poison, scale = zero, zero
            for r in range(n):
                for v in rows[r]:
                    key = str(v.type)
                    z = builder.fmul(v, ir.Constant(v.type, [0.0] * v.type.count))
                    a = builder.call(fabs[key], [v])
                    for q in range(v.type.count):
                        e = ir.Constant(_I32, q)
                        poison = builder.fadd(poison, builder.extract_element(z, e))
                        scale = builder.call(smax, [scale, builder.extract_element(a, e)])
            umin = inf
            finite = builder.fcmp_ordered("==", poison, zero)
            chunks = _row_chunks(n)

            def element(row, c):
                for h, (o, vt) in enumerate(chunks):
                    if o <= c < o + vt.count:
                        return builder.extract_element(row[h], ir.Constant(_I32, c - o))
                raise AssertionError(c)

            def insert(row, c, x):
                out = list(row)
                for h, (o, vt) in enumerate(chunks):
                    if o <= c < o + vt.count:
                        out[h] = builder.insert_element(row[h], x, ir.Constant(_I32, c - o))
                return out

            for k in range(n):
                best = builder.call(sabs, [element(rows[k], k)])    # pivot: largest |a_rk|
                p = ir.Constant(_I64, k)
                for r in range(k + 1, n):
                    v = builder.call(sabs, [element(rows[r], k)])
                    gt = builder.fcmp_ordered(">", v, best)
                    best = builder.select(gt, v, best)
                    p = builder.select(gt, ir.Constant(_I64, r), p)
                builder.store(p if ity.width == 64 else builder.trunc(p, ity),
                              builder.gep(P, [ir.Constant(_I64, k)]))
                rk = rows[k]                                        # swap rows k and p
                new_k = list(rk)
                for r in range(k + 1, n):
                    is_r = builder.icmp_signed("==", p, ir.Constant(_I64, r))
                    new_k = [builder.select(is_r, rows[r][h], new_k[h]) for h in range(len(rk))]
                    rows[r] = [builder.select(is_r, rk[h], rows[r][h]) for h in range(len(rk))]
                rows[k] = new_k
                ukk = element(rows[k], k)
                ok = builder.fcmp_ordered("==", builder.fmul(ukk, zero), zero)
                finite = builder.and_(finite, ok)
                a = builder.call(sabs, [ukk])
                umin = builder.select(builder.fcmp_ordered("<", a, umin), a, umin)
                # row k beyond column k (earlier columns hold multipliers: not subtracted)
                masked = []
                for h, (o, vt) in enumerate(chunks):
                    mask = ir.Constant(ir.VectorType(ir.IntType(1), vt.count),
                                       [o + q > k for q in range(vt.count)])
                    masked.append(builder.select(mask, rows[k][h],
                                                 ir.Constant(vt, [0.0] * vt.count)))
                for r in range(k + 1, n):
                    fk = builder.fdiv(element(rows[r], k), ukk)
                    rows[r] = insert(_sub_exact(builder, rows[r], fk, masked), k, fk)
            for r in range(n):
                _store_row(builder, F, r, rows[r], n)
            umin = builder.select(finite, umin, zero)
            limit = builder.fmul(builder.fmul(tol, ir.Constant(_DBL, float(n))), scale)
            return builder.fcmp_ordered(">", umin, limit)
        return types.boolean(d, do, f, fo, piv, po, rtol), codegen
    return lu_pivot


#: ``lu_pivot_6(d, do, f, fo, piv, po, rtol)``: LU with partial pivoting (LAPACK ``getrf``
#: layout and row interchanges) of the 6×6 block at ``d[do]`` into ``f[fo]``, the
#: interchanges into ``piv[po:po+6]``, with the rows in registers (the pivot search and the
#: row swaps are selects, not branches); True unless the block is singular by the rule of
#: :data:`~graphsolve.kernels.reference.PIVOT_RTOL` (smallest ``|u_kk|`` at most
#: ``rtol · 6 · max |d|``) or holds NaN or inf. Scalar form: ``blocks._finish_lu_loops``, with
#: the same verdict and, for a regular block, the same factor bit for bit (up to the sign of
#: a zero). An exactly singular column is not skipped as there: its multipliers become inf or
#: NaN, and the block is reported singular all the same.
lu_pivot_6 = _lu_pivot(6)
#: :func:`lu_pivot_6` for a 5×5 block (a joint of five constraints).
lu_pivot_5 = _lu_pivot(5)
#: :func:`lu_pivot_6` for a 3×3 block (a spherical joint).
lu_pivot_3 = _lu_pivot(3)

_I32 = ir.IntType(32)


@intrinsic
def prefetch(typingctx, a, ao):
    """Ask the CPU to bring ``a[ao]``'s cache line in (``llvm.prefetch``: read, high
    locality). A hint with no effect on results: the tree kernels issue it a few nodes ahead
    for blocks whose address depends on the node labelling, so that the misses of a random
    labelling overlap the pivot work instead of stalling it (a random gather of 36-value
    blocks takes about half the time)."""
    if not isinstance(a, types.Array) or not isinstance(ao, types.Integer):
        raise TypingError("prefetch(array, offset)")

    def codegen(context, builder, signature, args):
        p = _base(context, builder, signature, args, 0)
        name = "llvm.prefetch.p0"
        if not getattr(p.type, "is_opaque", False):     # LLVM with typed pointers
            p, name = builder.bitcast(p, ir.IntType(8).as_pointer()), "llvm.prefetch.p0i8"
        fnty = ir.FunctionType(ir.VoidType(), [p.type, _I32, _I32, _I32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        builder.call(fn, [p, ir.Constant(_I32, 0), ir.Constant(_I32, 3), ir.Constant(_I32, 1)])
        return context.get_dummy_value()
    return types.void(a, ao), codegen


@intrinsic
def copy_fixed(typingctx, dst, d0, src, s0, n):
    """``dst[d0:d0 + n] = src[s0:s0 + n]`` for a literal ``n``: every value loaded first (as
    ``<4 x double>`` vectors and a remainder), then stored. A numba loop of the same copy
    stays one load and one store per value, since LLVM cannot tell that ``dst`` and ``src``
    do not alias; loading all before storing is right for overlapping ranges too (as
    ``memmove``). Blocks of the factor load (:func:`graphsolve.kernels.factor_kernels._gather`).
    """
    _check(dst, d0, src, s0)
    if not isinstance(n, types.IntegerLiteral) or n.literal_value <= 0:
        raise TypingError(f"copy_fixed: the length must be a positive integer literal, got {n}")
    width = n.literal_value

    def codegen(context, builder, signature, args):
        d = _base(context, builder, signature, args, 0)
        s = _base(context, builder, signature, args, 2)
        chunks = _row_chunks(width)
        values = [builder.load(_ptr(builder, s, o, vt), align=8) for o, vt in chunks]
        for (o, vt), v in zip(chunks, values, strict=True):
            builder.store(v, _ptr(builder, d, o, vt), align=8)
        return context.get_dummy_value()
    return types.void(dst, d0, src, s0, n), codegen
