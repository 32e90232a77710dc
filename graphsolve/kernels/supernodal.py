"""Supernodal LDLᵀ: the numeric factor of a pattern with much fill, its dense parts done by
BLAS matrix products.

The block-by-block factor (:func:`graphsolve.kernels.compiled._factor`, Brüdigam et al. 2023
Alg. 3) spends its time in 6×6 products, which run at a few GFLOP/s whatever their number. On a
graph whose factor fills in (grids and crystals under a minimum-degree order) consecutive
pivots of the elimination order often share their whole column pattern: each node's only
next-eliminated neighbour is the next node, and the two have the same later neighbours. Such a
run is a *fundamental supernode* (Liu, Ng & Peyton 1993; Davis 2006, §4.8 and §9.1). Its
columns form one dense panel: rows = the supernode's own nodes, then the later nodes ``R`` they
all connect to. Right-looking over the supernodes in elimination order:

1. assemble the panel from the factor buffers (the matrix's blocks, already reduced by the
   updates of earlier supernodes);
2. factor it a block of :data:`PANEL_BLOCK` columns at a time (blocked dense LDLᵀ). In the
   block's own rows each pivot ``D_j`` is factored exactly as in the block kernel
   (:func:`~graphsolve.kernels.blocks._finish_pivot`: definite ``M Δ Mᵀ`` or LU with partial
   pivoting, same singularity rule) and the rows below it become ``L = T D_j⁻¹`` (Alg. 3 lines
   18-20 for every pair of the column). The rows below the block get all of the block's columns
   at once, by one BLAS product with the inverse of the block's unit triangle, and the
   supernode's later columns are updated by one BLAS product (``F -= L Tᵀ``, in place);
3. write the factor blocks back and subtract ``L_a (L_b D_S)ᵀ`` from each block ``(a, b)`` of
   ``R × R``: Alg. 3 line 14 for all of the supernode's triples of that pair. Narrow
   supernodes do it in place, one block product per pair whose inner dimension is the
   supernode's width; supernodes of at least :data:`BLAS_UPDATE_MIN_WIDTH` columns compute
   a panel of ``R``'s rows at a time by one BLAS product into scratch and subtract it from the
   blocks (:func:`_update_rr_blas`). On crystal 8³ BLAS for every supernode lost (the scatter
   cost more than BLAS saved: 12.8-15.5 ms against 12.8 ms); on crystal 22³ the wide fronts
   gain 1.3×.

The result is the same factor (same ``D``, ``Dlu``, ``piv``, ``L`` buffers, so every solve and
accessor works unchanged), computed in another order; only rounding differs. Pivots are met in
elimination order, so a singular pivot reports the same position.

:func:`factor_supernodal` is compiled into its caller
(:func:`graphsolve.kernels.compiled._factor_sn`), whose numba cache follows ``compiled.py``
only: after an edit here, run ``make clean-cache``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.np.linalg import _BLAS

from .blocks import _FAST, _finish_pivot, _ldl_solve_left, _lu_solve_trans_left, _sub_matmul

__all__ = ["plan", "factor_supernodal"]

#: Panel columns (scalars) factored by the loops before the rest of the supernode is updated by
#: one BLAS product.
PANEL_BLOCK = 48

#: A supernode at least this many scalar columns wide updates ``R × R`` by BLAS products into a
#: scratch panel, then subtracts the panel from the blocks (step 3); narrower ones multiply
#: block by block in place. Measured with 6×6 blocks, refactor, in place → BLAS: crystal 22³
#: 3.70 → 2.75 s, 200² grid 1.08 → 1.04 s; the value 24 itself was not tuned.
BLAS_UPDATE_MIN_WIDTH = 24

#: Scalar rows of ``R`` per BLAS product of the ``R × R`` update (bounds its scratch panel).
UPDATE_PANEL_ROWS = 128

#: Supernodes of at least this many nodes count as wide (see :func:`plan`).
WIDE_NODES = 4

#: Longer runs are split (a split run is still a chain of supernodes): bounds the two panel
#: buffers, which a dense graph would otherwise make as large as its whole factor.
MAX_SUPERNODE_NODES = 128

#: BLAS ``dgemm`` as numba's own ``np.dot`` calls it (numba's helper library forwards to SciPy's
#: BLAS; an external symbol, so the kernels stay cacheable). Unlike ``np.dot`` it takes leading
#: dimensions and ``beta``: products on sub-blocks of a panel, accumulated in place.
_xxgemm = _BLAS().numba_xxgemm(types.float64)
_KIND, _NOTRANS, _TRANS = ord("d"), ord("n"), ord("t")
_ONE, _MINUS_ONE, _ZERO = 0, 1, 2                # positions in the ``consts`` scratch array


@njit(error_model="numpy", inline="always")
def _gemm_abt(A, a0, B, b0, C, c0, m, n, k, ld_a, ld_b, ld_c, alpha, beta, consts):
    """``C = alpha A Bᵀ + beta C`` on row-major sub-blocks of flat buffers: ``A`` (m×k) at
    ``A[a0]``, ``B`` (n×k) at ``B[b0]``, ``C`` (m×n) at ``C[c0]`` with row strides ``ld_*``
    (column-major BLAS sees the transposes: ``Cᵀ = B Aᵀ``); ``alpha``, ``beta`` index
    ``consts``."""
    _xxgemm(_KIND, _TRANS, _NOTRANS, n, m, k, consts[alpha:].ctypes, B[b0:].ctypes, ld_b,
            A[a0:].ctypes, ld_a, consts[beta:].ctypes, C[c0:].ctypes, ld_c)


@njit(cache=True)
def _fundamental(order, etree, parent_ptr, parent_edges, fe_parent, pos, sizes, max_width):
    """Supernodes as runs of positions, their row nodes and the edge of every ``R × R`` pair.

    Position ``k`` joins the supernode of ``k - 1`` when the node at ``k`` is the elimination
    tree parent of the node at ``k - 1`` and has exactly one later neighbour fewer (then the
    two share every later neighbour). ``max_width`` caps a supernode's width in nodes.
    Returns ``(sn_ptr, row_ptr, rows, tgt_ptr, tgt, sizes_needed)``: the supernode ``s`` covers
    positions ``sn_ptr[s]:sn_ptr[s+1]``; its rows ``R`` are ``rows[row_ptr[s]:row_ptr[s+1]]``
    in elimination order; ``tgt[tgt_ptr[s] + a (a - 1) / 2 + b]`` is the factor pair (child
    ``R[b]``, parent ``R[a]``), ``b < a``, or -1 if the pattern lacks it.
    ``sizes_needed = (max panel scalars, max panel rows, max panel nodes)``."""
    n = order.size
    sn_ptr = np.empty(n + 1, np.int64)
    ns = 0
    width = 0
    for k in range(n):
        joins = False
        if k > 0 and width < max_width:
            cnt_prev = parent_ptr[k] - parent_ptr[k - 1]
            cnt = parent_ptr[k + 1] - parent_ptr[k]
            joins = etree[order[k - 1]] == order[k] and cnt_prev == cnt + 1
        if joins:
            width += 1
        else:
            sn_ptr[ns] = k
            ns += 1
            width = 1
    sn_ptr[ns] = n
    sn_ptr = sn_ptr[:ns + 1].copy()
    row_ptr = np.zeros(ns + 1, np.int64)
    tgt_ptr = np.zeros(ns + 1, np.int64)
    for s in range(ns):
        last = sn_ptr[s + 1] - 1
        m = parent_ptr[last + 1] - parent_ptr[last]
        row_ptr[s + 1] = row_ptr[s] + m
        tgt_ptr[s + 1] = tgt_ptr[s] + m * (m - 1) // 2
    rows = np.empty(row_ptr[ns], np.int64)
    tgt = np.full(tgt_ptr[ns], -1, np.int64)
    max_panel = 0
    max_h = 0
    max_nodes = 0
    for s in range(ns):
        k0 = sn_ptr[s]
        last = sn_ptr[s + 1] - 1
        r0 = row_ptr[s]
        m = row_ptr[s + 1] - r0
        for t in range(m):
            rows[r0 + t] = fe_parent[parent_edges[parent_ptr[last] + t]]
        for b in range(m):                   # R[b]'s parents are sorted by position
            q = rows[r0 + b]
            t = parent_ptr[pos[q]]
            t_end = parent_ptr[pos[q] + 1]
            for a in range(b + 1, m):
                pa = pos[rows[r0 + a]]
                while t < t_end and pos[fe_parent[parent_edges[t]]] < pa:
                    t += 1
                if t < t_end and pos[fe_parent[parent_edges[t]]] == pa:
                    tgt[tgt_ptr[s] + a * (a - 1) // 2 + b] = parent_edges[t]
        w_sc = 0
        for k in range(k0, last + 1):
            w_sc += sizes[order[k]]
        m_sc = 0
        for t in range(m):
            m_sc += sizes[rows[r0 + t]]
        max_panel = max(max_panel, (w_sc + m_sc) * w_sc)
        max_h = max(max_h, w_sc + m_sc)
        max_nodes = max(max_nodes, last + 1 - k0 + m)
    return sn_ptr, row_ptr, rows, tgt_ptr, tgt, np.array([max_panel, max_h, max_nodes])


def plan(an, max_width: int = MAX_SUPERNODE_NODES) -> tuple:
    """The supernodal plan of an analysis and its scratch buffers (allocated once):
    ``(sn, scratch, wide_share)`` for :func:`factor_supernodal`. ``wide_share`` is the part of
    the ``R × R`` update work (rows² × width) done by supernodes of at least
    :data:`WIDE_NODES` nodes, whose panels use BLAS and whose block products have a long inner
    dimension; ``max_width`` caps a supernode's nodes."""
    sn_ptr, row_ptr, rows, tgt_ptr, tgt, need = _fundamental(
        an.order, an.etree, an.parent_ptr, an.parent_edges, an.fe_parent, an.position,
        an.block_sizes, int(max_width))
    max_panel, max_h, max_nodes = (int(v) for v in need)
    smax = int(an.block_sizes.max())
    sn = (sn_ptr, row_ptr, rows, tgt_ptr, tgt, an.parent_ptr, an.parent_edges, an.fe_parent)
    scratch = (np.empty(max_panel), np.empty(max_panel), np.empty(smax * max_h),
               np.empty(an.n_nodes, np.int64), np.empty(max_nodes + 1, np.int64),
               np.empty((PANEL_BLOCK + smax) ** 2), np.array([1.0, -1.0, 0.0]),
               np.empty((UPDATE_PANEL_ROWS + smax) * max_h))
    sizes = an.block_sizes.astype(float)
    width = np.add.reduceat(sizes[an.order], sn_ptr[:-1])
    r_sizes = np.concatenate([[0.0], np.cumsum(sizes[rows])])
    height = r_sizes[row_ptr[1:]] - r_sizes[row_ptr[:-1]]
    work = height * height * width
    wide = np.diff(sn_ptr) >= WIDE_NODES
    share = float(work[wide].sum() / work.sum()) if work.sum() > 0 else 0.0
    return sn, scratch, share


@njit(error_model="numpy", fastmath=_FAST, inline="always")
def _scale_rows(F, G, r0, r1, oj, sj, lu, pv, wb, in_g):
    """Rows ``r0:r1`` of the pivot's columns ``oj:oj+sj``: ``T`` (in ``F``, copied to ``G``;
    or already in ``G`` if ``in_g``) becomes ``L = T D_j⁻¹`` in ``F`` (Alg. 3 line 18 for
    each row's pair, as ``D⁻ᵀ Tᵀ``)."""
    nr = r1 - r0
    if nr <= 0:
        return
    for r in range(nr):
        for c in range(sj):
            v = G[r0 + r, oj + c] if in_g else F[r0 + r, oj + c]
            G[r0 + r, oj + c] = v
            wb[c * nr + r] = v
    if pv[0] < 0:                              # definite pivot: M Δ Mᵀ, symmetric
        _ldl_solve_left(lu, sj, wb, nr)
    else:
        _lu_solve_trans_left(lu, pv, sj, wb, nr)
    for r in range(nr):
        for c in range(sj):
            F[r0 + r, oj + c] = wb[c * nr + r]


@njit(error_model="numpy", fastmath=_FAST, inline="always")
def _rows_below(Fb, Gb, H, W, ob0, ob1, jb, je, roff, Mb, consts):
    """``T = F[ob1:H, ob0:ob1] M⁻ᵀ`` into ``G`` (same place), where ``M`` is the block's unit
    block-lower factor (its rows in ``F`` hold ``L`` left of each diagonal block; the diagonal
    blocks of ``M`` are identities): every earlier column of the block applied to all rows
    below at once (``T_rj = F_rj - Σ_j'<j L_rj' T_jj'ᵀ``), by one BLAS product."""
    nb = ob1 - ob0
    Minv = Mb[:nb * nb].reshape((nb, nb))
    for q in range(nb * nb):
        Mb[q] = 0.0
    for jj in range(jb, je):                   # forward substitution, node row by node row
        lo = roff[jj] - ob0
        hi = roff[jj + 1] - ob0
        for r in range(lo, hi):
            Minv[r, r] = 1.0
            for c in range(lo):
                acc = 0.0
                for k in range(c, lo):
                    acc += Fb[(ob0 + r) * W + ob0 + k] * Minv[k, c]
                Minv[r, c] = -acc
    _gemm_abt(Fb, ob1 * W + ob0, Mb, 0, Gb, ob1 * W + ob0, H - ob1, nb, nb, W, nb, W, _ONE,
              _ZERO, consts)


@njit(error_model="numpy", fastmath=_FAST, inline="always")
def _update_rr_blas(Fb, Gb, Cb, W, w, m, roff, rows, r0, sizes, D, d_ptr, L, fe_ptr, tgt, t0,
                    consts):
    """Step 3 for a wide supernode: for a panel of ``R``'s rows at a time, ``C = L_R T_Rᵀ``
    (rows of the panel × all of ``R`` up to the panel's end) by one BLAS product, then
    ``D_a -= C_aa`` and ``L_ab -= C_ab`` for the pairs ``(a, b)``, ``b < a``, of the
    pattern (Alg. 3 line 14 for all of the supernode's triples of each pair)."""
    R0 = roff[w]
    a0 = 0
    while a0 < m:
        a1 = a0 + 1
        while a1 < m and roff[w + a1 + 1] - roff[w + a0] <= UPDATE_PANEL_ROWS:
            a1 += 1
        top = roff[w + a0]
        nr = roff[w + a1] - top
        nc = roff[w + a1] - R0
        _gemm_abt(Fb, top * W, Gb, R0 * W, Cb, 0, nr, nc, W, W, W, nc, _ONE, _ZERO, consts)
        for a in range(a0, a1):
            pa = rows[r0 + a]
            sa = sizes[pa]
            ra = roff[w + a] - top
            ca = roff[w + a] - R0
            dd = d_ptr[pa]
            for r in range(sa):
                for c in range(sa):
                    D[dd + r * sa + c] -= Cb[(ra + r) * nc + ca + c]
            base = t0 + a * (a - 1) // 2
            for b in range(a):
                e = tgt[base + b]
                if e >= 0:
                    sb = sizes[rows[r0 + b]]
                    cb = roff[w + b] - R0
                    f0 = fe_ptr[e]
                    for r in range(sa):
                        for c in range(sb):
                            L[f0 + r * sb + c] -= Cb[(ra + r) * nc + cb + c]
        a0 = a1


@njit(error_model="numpy", fastmath=_FAST)
def factor_supernodal(sym, sn, D, Dlu, piv, L, rtol, scratch):
    """Numeric LDLᵀ over the supernodes of :func:`plan` (see the module docstring), on factor
    buffers loaded with the matrix (``D``, lower blocks in ``L``). Returns the elimination
    position of the first singular pivot, or -1."""
    order, sizes, d_ptr, x_ptr, _, fe_ptr, _, _, _, _ = sym
    sn_ptr, row_ptr, rows, tgt_ptr, tgt, parent_ptr, parent_edges, fe_parent = sn
    Fb, Gb, wb, loc, roff, Mb, consts, Cb = scratch
    for s in range(sn_ptr.size - 1):
        k0 = sn_ptr[s]
        w = sn_ptr[s + 1] - k0
        r0 = row_ptr[s]
        m = row_ptr[s + 1] - r0
        H = 0
        for b in range(w + m):                 # local blocks: the columns, then R
            node = order[k0 + b] if b < w else rows[r0 + b - w]
            loc[node] = b
            roff[b] = H
            H += sizes[node]
        roff[w + m] = H
        W = roff[w]
        F = Fb[:H * W].reshape((H, W))
        G = Gb[:H * W].reshape((H, W))
        for jj in range(w):                    # 1. assemble
            j = order[k0 + jj]
            sj = sizes[j]
            oj = roff[jj]
            dj = d_ptr[j]
            for r in range(sj):
                for c in range(sj):
                    F[oj + r, oj + c] = D[dj + r * sj + c]
            for t in range(parent_ptr[k0 + jj], parent_ptr[k0 + jj + 1]):
                e = parent_edges[t]
                p = fe_parent[e]
                sp = sizes[p]
                o = roff[loc[p]]
                f0 = fe_ptr[e]
                for r in range(sp):
                    for c in range(sj):
                        F[o + r, oj + c] = L[f0 + r * sj + c]
        jb = 0                                 # 2. factor, column block by column block
        while jb < w:
            je = jb + 1
            while je < w and roff[je + 1] - roff[jb] <= PANEL_BLOCK:
                je += 1
            ob0 = roff[jb]
            ob1 = roff[je]
            for jj in range(jb, je):           # the block's own rows: loops
                j = order[k0 + jj]
                sj = sizes[j]
                oj = roff[jj]
                dj = d_ptr[j]
                for r in range(sj):
                    for c in range(sj):
                        D[dj + r * sj + c] = F[oj + r, oj + c]
                lu = Dlu[dj:dj + sj * sj]
                pv = piv[x_ptr[j]:x_ptr[j + 1]]
                if not _finish_pivot(D[dj:dj + sj * sj], lu, pv, sj, True, rtol):
                    return k0 + jj
                below = oj + sj
                _scale_rows(F, G, below, ob1, oj, sj, lu, pv, wb, False)
                for b in range(jj + 1, je):    # later columns of the block, row by row
                    for r in range(roff[b], roff[b + 1]):
                        for c in range(below, roff[b + 1]):
                            acc = 0.0
                            for q in range(sj):
                                acc += F[r, oj + q] * G[c, oj + q]
                            F[r, c] -= acc
            if ob1 < H:                        # the rows below: T = F M⁻ᵀ, one BLAS product
                _rows_below(Fb, Gb, H, W, ob0, ob1, jb, je, roff, Mb, consts)
                for jj in range(jb, je):       # L = T D_j⁻¹
                    j = order[k0 + jj]
                    sj = sizes[j]
                    dj = d_ptr[j]
                    _scale_rows(F, G, ob1, H, roff[jj], sj, Dlu[dj:dj + sj * sj],
                                piv[x_ptr[j]:x_ptr[j + 1]], wb, True)
            if ob1 < W:                        # later columns: F -= L Tᵀ, in place
                _gemm_abt(Fb, ob1 * W + ob0, Gb, ob1 * W + ob0, Fb, ob1 * W + ob1, H - ob1,
                          W - ob1, ob1 - ob0, W, W, W, _MINUS_ONE, _ONE, consts)
            jb = je
        for jj in range(w):                    # 3. write the factor back ...
            j = order[k0 + jj]
            sj = sizes[j]
            oj = roff[jj]
            for t in range(parent_ptr[k0 + jj], parent_ptr[k0 + jj + 1]):
                e = parent_edges[t]
                p = fe_parent[e]
                o = roff[loc[p]]
                f0 = fe_ptr[e]
                for r in range(sizes[p]):
                    for c in range(sj):
                        L[f0 + r * sj + c] = F[o + r, oj + c]
        if m == 0:
            continue
        if W >= BLAS_UPDATE_MIN_WIDTH:         # ... and update R × R: BLAS, then subtract
            _update_rr_blas(Fb, Gb, Cb, W, w, m, roff, rows, r0, sizes, D, d_ptr, L, fe_ptr,
                            tgt, tgt_ptr[s], consts)
            continue
        for a in range(m):                     # ... or block by block, in place
            pa = rows[r0 + a]
            sa = sizes[pa]
            oa = roff[w + a]
            _sub_matmul(D[d_ptr[pa]:], Fb[oa * W:], Gb[oa * W:], sa, W, sa, True)
            base = tgt_ptr[s] + a * (a - 1) // 2
            for b in range(a):
                e = tgt[base + b]
                if e >= 0:
                    _sub_matmul(L[fe_ptr[e]:], Fb[oa * W:], Gb[roff[w + b] * W:], sa, W,
                                sizes[rows[r0 + b]], True)
    return -1
