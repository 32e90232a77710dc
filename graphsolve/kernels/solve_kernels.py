"""The block solve (Brüdigam et al. 2023, Alg. 4) compiled with numba, on the flat buffers.

:func:`_solve_bs` solves ``nrhs`` right-hand sides (LDU or LDLᵀ); for one right-hand side,
:func:`_solve_vector` (LDU; also the implicit-L factor of
:func:`graphsolve.kernels.fused.refactor_solve`) and :func:`_solve_sym_vector` (LDLᵀ) keep
each block product a matrix-vector product. ``BS`` (and ``BS2``) passed as literals fix the
block sizes (uniform ``BS×BS`` blocks, or the two sizes of a KKT matrix), ``0`` is generic;
the entry points of :mod:`graphsolve.kernels.specializations` pass them. :func:`_solve_vector`
picks, before typing, a generic kernel or one for the literal sizes
(:func:`_solve_vector_kernel`; as :func:`graphsolve.kernels.factor_kernels._factor`), so that
only the generic one compiles the fixed-size copies of :data:`FIXED_SOLVE_SIZES` and
:data:`FIXED_MATVEC_SIZES`.

All three take the analysis arrays ``order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr``
(:func:`graphsolve.kernels.specializations._solve_arrays`) and the factor buffers, and solve
``x`` in place. Unlike the reference (and Alg. 4 as written), the pivot solves are a pass of
their own (or, implicit-L, part of the forward sweep) and the backward sweep *pushes* each
finished ``x_i`` to its children (``x_c -= U_ci x_i``) instead of pulling from the parents:
both sweeps read the factor blocks in storage order (grouped by parent), and no pivot solve
sits on the sweep's chain of dependent updates.
"""

from __future__ import annotations

from typing import Any

from numba import literally, njit

from .blocks import (
    NO_REFCOUNT,
    _ldl_solve_left,
    _ldl_solve_vec,
    _lu_solve_left,
    _lu_solve_vec,
    _matvec_sub,
    _sub_matmul,
)
from .simd import matvec6_sub, matvec6t_sub, prefetch
from .tree6 import PREFETCH_NODES, _prefetch_x

__all__: list[str] = []

#: Pivot sizes whose solves the generic one-vector LDU solve (:func:`_solve_vector` with
#: ``BS = 0``: ``solve_factored``, the dynamics' contact steps) runs as fixed-size code: those
#: the generic factor fixes (:data:`~graphsolve.kernels.factor_kernels.FIXED_PIVOT_SIZES`:
#: joints 1-5, bodies 6, contact groups 2, 8, 12). Other sizes run the runtime-size loops. (The
#: generic LDLᵀ solve keeps the runtime-size loops: fixed-size copies there made it 1.7× faster
#: on mixed 3/6/12 blocks, but its cold compilation 7× longer, 1.5 → 11 s.)
FIXED_SOLVE_SIZES = (1, 2, 3, 4, 5, 6, 8, 12)
#: :func:`_solve_vector` with ``BS = 0`` runs the block products of a 6×6 block (a rigid body)
#: with a block of these sizes, either way round (``6×o`` and ``o×6``), as fixed-size code;
#: other pairs run the runtime-size loops.
FIXED_MATVEC_SIZES = (1, 2, 3, 4, 5, 6, 8, 12)


# ---------------------------------------------------------------------- fixed-size block steps
# The generic LDU solve's block steps with fixed sizes, as the generic factor's
# (:func:`~graphsolve.kernels.factor_kernels._finish_pivot_sized`): each ``*_py`` body is
# compiled once and inlined by LLVM (``forceinline``) where it is called with literal sizes,
# which then fold into fixed trip counts; each ``*_any`` dispatcher (compiled once as well, and
# inlined by LLVM at the kernels' call sites) picks the copy for the block's runtime sizes.
def _matvec_sub_py(y, M, z, m, n, FM, FN):
    """``y -= M z`` for an ``m×n`` block ``M`` (:func:`~graphsolve.kernels.blocks._matvec_sub`)
    with the sizes ``FM``, ``FN`` if > 0."""
    if FM > 0:
        m = FM
    if FN > 0:
        n = FN
    _matvec_sub(y, M, z, m, n)


def _lu_solve_py(lu, pv, s, y, FS):
    """:func:`~graphsolve.kernels.blocks._lu_solve_vec` with the size ``FS`` if > 0."""
    if FS > 0:
        s = FS
    _lu_solve_vec(lu, pv, s, y)


_FIXED: dict[str, Any] = {"cache": True, "nogil": True, "error_model": "numpy", "forceinline": True}
_matvec_sub_fixed = njit(**_FIXED)(_matvec_sub_py)
_lu_solve_fixed = njit(**_FIXED)(_lu_solve_py)


@njit(**_FIXED)
def _matvec_sub_any(y, M, z, m, n):
    """``y -= M z`` for an ``m×n`` block ``M``: a fixed-size copy for a 6×6 block with a block
    of a size in :data:`FIXED_MATVEC_SIZES` (6×6: the vectorized product of
    :mod:`~graphsolve.kernels.simd`), the runtime-size code otherwise."""
    o = n if m == 6 else (m if n == 6 else 0)
    six = m == 6
    if o == 6:
        matvec6_sub(y, 0, M, 0, z, 0)                               # simd.py
    elif o == 3:
        if six:
            _matvec_sub_fixed(y, M, z, m, n, 6, 3)
        else:
            _matvec_sub_fixed(y, M, z, m, n, 3, 6)
    elif o == 12:
        if six:
            _matvec_sub_fixed(y, M, z, m, n, 6, 12)
        else:
            _matvec_sub_fixed(y, M, z, m, n, 12, 6)
    elif o == 5:
        if six:
            _matvec_sub_fixed(y, M, z, m, n, 6, 5)
        else:
            _matvec_sub_fixed(y, M, z, m, n, 5, 6)
    elif o == 1:
        if six:
            _matvec_sub_fixed(y, M, z, m, n, 6, 1)
        else:
            _matvec_sub_fixed(y, M, z, m, n, 1, 6)
    elif o == 2:
        if six:
            _matvec_sub_fixed(y, M, z, m, n, 6, 2)
        else:
            _matvec_sub_fixed(y, M, z, m, n, 2, 6)
    elif o == 4:
        if six:
            _matvec_sub_fixed(y, M, z, m, n, 6, 4)
        else:
            _matvec_sub_fixed(y, M, z, m, n, 4, 6)
    elif o == 8:
        if six:
            _matvec_sub_fixed(y, M, z, m, n, 6, 8)
        else:
            _matvec_sub_fixed(y, M, z, m, n, 8, 6)
    else:
        _matvec_sub_fixed(y, M, z, m, n, 0, 0)


@njit(**_FIXED)
def _lu_solve_any(lu, pv, s, y):
    """``y <- D⁻¹ y`` with an LU pivot factor: a fixed-size copy for the sizes of
    :data:`FIXED_SOLVE_SIZES`, the runtime-size code otherwise."""
    if s == 6:
        _lu_solve_fixed(lu, pv, s, y, 6)
    elif s == 3:
        _lu_solve_fixed(lu, pv, s, y, 3)
    elif s == 12:
        _lu_solve_fixed(lu, pv, s, y, 12)
    elif s == 5:
        _lu_solve_fixed(lu, pv, s, y, 5)
    elif s == 1:
        _lu_solve_fixed(lu, pv, s, y, 1)
    elif s == 2:
        _lu_solve_fixed(lu, pv, s, y, 2)
    elif s == 4:
        _lu_solve_fixed(lu, pv, s, y, 4)
    elif s == 8:
        _lu_solve_fixed(lu, pv, s, y, 8)
    else:
        _lu_solve_fixed(lu, pv, s, y, 0)


@njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)
def _solve_bs(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L, U, x,
              nrhs, symmetric, BS):
    """Alg. 4 (forward, diagonal and backward sweeps) for ``nrhs`` right-hand sides (``x``
    row-major ``N × nrhs``); ``BS`` > 0: every block is BS×BS, compiled as a constant (the
    small loops get fixed trip counts), ``BS = 0`` generic. The pivot solves are a pass of
    their own and the backward sweep pushes each finished ``x_i`` to its children (module
    docstring)."""
    literally(BS)
    for k in range(order.size):                                     # Alg. 4 lines 1-6
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xi = x[x_ptr[i] * nrhs:x_ptr[i + 1] * nrhs]
        for e in range(child_ptr[k], child_ptr[k + 1]):
            c = fe_child[e]
            _sub_matmul(xi, L[fe_ptr[e]:fe_ptr[e + 1]], x[x_ptr[c] * nrhs:x_ptr[c + 1] * nrhs],
                        si, sizes[c] if BS == 0 else BS, nrhs, False)
    for k in range(order.size):                                     # D⁻¹, in order
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xi = x[x_ptr[i] * nrhs:x_ptr[i + 1] * nrhs]
        if piv[x_ptr[i]] < 0:                                       # LDLᵀ definite pivot
            _ldl_solve_left(Dlu[d_ptr[i]:d_ptr[i] + si * si], si, xi, nrhs)
        else:
            _lu_solve_left(Dlu[d_ptr[i]:d_ptr[i] + si * si], piv[x_ptr[i]:x_ptr[i + 1]], si, xi,
                           nrhs)
    for k in range(order.size - 1, -1, -1):                         # lines 7-12: x_i is
        i = order[k]                                                # final, push it
        si = sizes[i] if BS == 0 else BS
        xi = x[x_ptr[i] * nrhs:x_ptr[i + 1] * nrhs]
        for e in range(child_ptr[k + 1] - 1, child_ptr[k] - 1, -1):
            c = fe_child[e]
            sc = sizes[c] if BS == 0 else BS
            xc = x[x_ptr[c] * nrhs:x_ptr[c + 1] * nrhs]
            blk = fe_ptr[e]
            if symmetric:                       # U_ci = L_icᵀ, L_ic stored (si × sc)
                for q in range(si):             # rows of L_ic: contiguous inner loops
                    for j in range(nrhs):
                        f = xi[q * nrhs + j]
                        for r in range(sc):
                            xc[r * nrhs + j] -= L[blk + q * sc + r] * f
            else:
                _sub_matmul(xc, U[blk:fe_ptr[e + 1]], xi, sc, si, nrhs, False)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _sub_sized(y, M, z, m, n, BS, BS2, GENERIC):
    """``y -= M z`` for an ``m×n`` block, with fixed sizes when (m, n) is the pair (BS, BS2)
    either way round, or BS×BS when ``BS2 = 0`` (uniform sizes; ``GENERIC``: any sizes, with
    the fixed-size copies of :func:`_matvec_sub_any`). ``GENERIC`` is the constant of the
    kernel it is inlined into (:func:`_solve_vector_kernel`), pruned before typing."""
    if GENERIC:
        _matvec_sub_any(y, M, z, m, n)
    elif BS == 6 and BS2 == 0:
        matvec6_sub(y, 0, M, 0, z, 0)                               # simd.py
    elif BS > 0 and BS2 == 0:
        _matvec_sub(y, M, z, BS, BS)
    elif BS2 > 0 and m == BS and n == BS2:
        _matvec_sub(y, M, z, BS, BS2)
    elif BS2 > 0 and m == BS2 and n == BS:
        _matvec_sub(y, M, z, BS2, BS)
    else:
        _matvec_sub(y, M, z, m, n)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _pivot_solve_sized(lu, pv, s, y, BS, BS2, GENERIC):
    """``y <- D⁻¹ y`` with the pivot's LU, fixed-size for the sizes of the pair (or the
    uniform size BS when ``BS2 = 0``; ``GENERIC``: :func:`_lu_solve_any`)."""
    if GENERIC:
        _lu_solve_any(lu, pv, s, y)
    elif BS2 == 0 or s == BS:
        _lu_solve_vec(lu, pv, BS, y)
    elif BS2 > 0 and s == BS2:
        _lu_solve_vec(lu, pv, BS2, y)
    else:
        _lu_solve_vec(lu, pv, s, y)


def _solve_vector_kernel(GENERIC: bool):
    """The kernel :func:`_solve_vector` calls: ``GENERIC`` (any sizes, with the fixed-size
    copies of :data:`FIXED_SOLVE_SIZES`, :data:`FIXED_MATVEC_SIZES`) or for the sizes ``BS``,
    ``BS2`` (literals), compiled as ``_solve_vector_generic`` or ``_solve_vector_sized``.
    ``GENERIC``, a closure constant, is pruned before typing (as in
    :func:`~graphsolve.kernels.factor_kernels._factor_kernel`): the sized kernels never
    compile the generic kernel's fixed-size dispatch."""
    def kernel(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L, U, x, BS,
               BS2, implicit):
        literally(BS)
        literally(BS2)
        for k in range(order.size):                                 # Alg. 4 lines 1-6
            i = order[k]
            si = sizes[i]
            xi = x[x_ptr[i]:x_ptr[i + 1]]
            for e in range(child_ptr[k], child_ptr[k + 1]):
                c = fe_child[e]
                _sub_sized(xi, L[fe_ptr[e]:fe_ptr[e + 1]], x[x_ptr[c]:x_ptr[c + 1]], si,
                           sizes[c], BS, BS2, GENERIC)
            if implicit:
                _pivot_solve_sized(Dlu[d_ptr[i]:d_ptr[i] + si * si], piv[x_ptr[i]:x_ptr[i + 1]],
                                   si, xi, BS, BS2, GENERIC)
        if not implicit:
            for k in range(order.size):                             # D⁻¹, in order
                i = order[k]
                si = sizes[i]
                _pivot_solve_sized(Dlu[d_ptr[i]:d_ptr[i] + si * si], piv[x_ptr[i]:x_ptr[i + 1]],
                                   si, x[x_ptr[i]:x_ptr[i + 1]], BS, BS2, GENERIC)
        for k in range(order.size - 1, -1, -1):                     # lines 7-12: x_i is
            i = order[k]                                            # final, push it
            xi = x[x_ptr[i]:x_ptr[i + 1]]
            for e in range(child_ptr[k + 1] - 1, child_ptr[k] - 1, -1):
                c = fe_child[e]
                _sub_sized(x[x_ptr[c]:x_ptr[c + 1]], U[fe_ptr[e]:fe_ptr[e + 1]], xi, sizes[c],
                           sizes[i], BS, BS2, GENERIC)
    kernel.__name__ = kernel.__qualname__ = ("_solve_vector_generic" if GENERIC
                                             else "_solve_vector_sized")
    return njit(cache=True, nogil=True, error_model="numpy")(kernel)


_solve_vector_generic = _solve_vector_kernel(True)
_solve_vector_sized = _solve_vector_kernel(False)


@njit(nogil=True, error_model="numpy", inline="always")
def _solve_vector(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L, U, x,
                  BS, BS2, implicit):
    """:func:`_solve_bs` for one right-hand side of an LDU factor (``symmetric=False``), with
    the block products and pivot solves of a size pair ``BS`` > ``BS2`` (bodies and joints),
    or of uniform ``BS×BS`` blocks (``BS2 = 0``), as fixed-size inlined copies (``BS = 0``:
    generic).

    ``implicit``: the factor of an acyclic pattern keeps ``T`` (the matrix's own lower blocks)
    instead of ``L = T D_c⁻¹`` (:func:`~graphsolve.kernels.fused.refactor_solve` with an
    implicit handle). The forward sweep then turns each finished ``y_c`` into
    ``z_c = D_c⁻¹ y_c`` at once, so that ``y_i -= T z_c`` equals ``y_i -= L y_c`` and the
    diagonal solve is done; the backward sweep is ``x_i = z_i - U x_p``. Same flops as the
    explicit solve, while the factor skips every ``T D⁻¹`` (a third of its work).

    Inlined by numba into its caller, whose ``BS`` must be a constant (the entry points'
    closure integers): the branch is pruned before typing and only one of the kernels of
    :func:`_solve_vector_kernel` is compiled."""
    if BS == 0:
        _solve_vector_generic(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv,
                              L, U, x, 0, 0, implicit)
    else:
        _solve_vector_sized(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv,
                            L, U, x, BS, BS2, implicit)


@njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)
def _solve_sym_vector(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L, x,
                      BS):
    """:func:`_solve_bs` for one right-hand side of an LDLᵀ factor: ``U_ip = L_piᵀ`` applied as
    row updates (contiguous), the pivot solves by the definite (``M Δ Mᵀ``) or LU form; ``BS``
    > 0: every block is BS×BS (fixed trip counts; the offsets ``x_ptr[i] = BS i`` and
    ``d_ptr[order[k]] = BS² k`` are computed, not looked up: on a large tree in random
    labels each lookup would be a cache miss), ``BS = 0`` generic."""
    literally(BS)
    n = order.size
    for k in range(n):                                              # Alg. 4 lines 1-6
        if BS > 0 and k + PREFETCH_NODES < n:    # x by node id: prefetched (random labels)
            _prefetch_x(order, fe_child, child_ptr, x, BS, k + PREFETCH_NODES)
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xo = x_ptr[i] if BS == 0 else BS * i
        for e in range(child_ptr[k], child_ptr[k + 1]):
            c = fe_child[e]
            co = x_ptr[c] if BS == 0 else BS * c
            if BS == 6:                                             # simd.py
                matvec6_sub(x, xo, L, fe_ptr[e], x, co)
            else:
                sc = sizes[c] if BS == 0 else BS
                _matvec_sub(x[xo:xo + si], L[fe_ptr[e]:fe_ptr[e + 1]], x[co:co + sc], si, sc)
    for k in range(n):                                              # D⁻¹, in order
        if BS > 0 and k + PREFETCH_NODES < n:
            prefetch(x, BS * order[k + PREFETCH_NODES])
            prefetch(piv, BS * order[k + PREFETCH_NODES])
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xo = x_ptr[i] if BS == 0 else BS * i
        xi = x[xo:xo + si]
        do = d_ptr[i] if BS == 0 else BS * BS * k
        lu = Dlu[do:do + si * si]
        if piv[xo] < 0:
            _ldl_solve_vec(lu, si, xi)
        else:
            _lu_solve_vec(lu, piv[xo:xo + si], si, xi)
    for k in range(n - 1, -1, -1):                                  # lines 7-12: x_i is
        if BS > 0 and k >= PREFETCH_NODES:                          # final, push it (_solve_bs)
            _prefetch_x(order, fe_child, child_ptr, x, BS, k - PREFETCH_NODES)
        i = order[k]
        si = sizes[i] if BS == 0 else BS
        xo = x_ptr[i] if BS == 0 else BS * i
        for e in range(child_ptr[k + 1] - 1, child_ptr[k] - 1, -1):
            c = fe_child[e]
            co = x_ptr[c] if BS == 0 else BS * c
            if BS == 6:                                             # simd.py
                matvec6t_sub(x, co, L, fe_ptr[e], x, xo)
                continue
            sc = sizes[c] if BS == 0 else BS
            blk = fe_ptr[e]
            for q in range(si):                 # x_c -= L_icᵀ x_i, row by row of L_ic
                f = x[xo + q]
                for r in range(sc):
                    x[co + r] -= L[blk + q * sc + r] * f

