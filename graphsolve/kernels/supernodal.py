"""Supernodal LDLᵀ: the numeric factor of a pattern with much fill, its dense parts done by
BLAS matrix products.

The block-by-block factor (:func:`graphsolve.kernels.factor_kernels._factor`, Brüdigam et al.
2023 Alg. 3) spends its time in 6×6 products, which run at a few GFLOP/s whatever their number.
On a graph whose factor fills in (grids and crystals under a minimum-degree order) consecutive
pivots of the elimination order often share their whole column pattern: each node's only
next-eliminated neighbour is the next node, and the two have the same later neighbours. Such a
run is a *fundamental supernode* (Liu, Ng & Peyton 1993; Davis 2006, §4.8 and §9.1). Its
columns form one dense panel: rows = the supernode's own nodes, then the later nodes ``R`` they
all connect to. Short fundamental supernodes along a chain of the elimination tree are then
merged when the merged panel has few structural zeros (*relaxed amalgamation*, Ashcraft &
Grimes 1989, with CHOLMOD's thresholds; :func:`_relaxed`): fewer, wider panels, so more of the
work runs in BLAS. The zeros are part of the dense panel only; they stay exactly zero and are
never written to the factor, whose pattern is unchanged. Right-looking over the supernodes in
elimination order:

1. assemble the panel from the factor buffers (the matrix's blocks, already reduced by the
   updates of earlier supernodes; a panel with structural zeros is cleared first), row by
   row along the runs of :func:`_row_runs`, so that the factor is read in storage order and
   the panel written one row at a time (column by column, each 6×6 block landed on six panel
   rows far apart: ``nx.grid_graph([22]*3)``, assembly and write-back 205 → 88 ms of a 1.4 s
   factorization);
2. factor it a block of :data:`PANEL_BLOCK` columns at a time (blocked dense LDLᵀ). In the
   block's own rows each pivot ``D_j`` is factored exactly as in the block kernel
   (:func:`~graphsolve.kernels.blocks._finish_pivot`: definite ``M Δ Mᵀ`` or LU with partial
   pivoting, same singularity rule) and the rows below it become ``L = T D_j⁻¹`` (Alg. 3 lines
   18-20 for every pair of the column). The rows below the block get all of the block's columns
   at once, by one BLAS product with the inverse of the block's unit triangle, then each
   pivot's ``D_j⁻¹`` (formed once from its factor) multiplies its columns there, and the
   supernode's later columns are updated by one BLAS product (``F -= L Tᵀ``, in place);
3. write the factor blocks back (row by row, as they were loaded) and subtract
   ``L_a (L_b D_S)ᵀ`` from each block ``(a, b)`` of ``R × R``: Alg. 3 line 14 for all of
   the supernode's triples of that pair. Narrow
   supernodes do it in place, one block product per pair whose inner dimension is the
   supernode's width; supernodes of at least :data:`BLAS_UPDATE_MIN_WIDTH` columns compute
   a panel of ``R``'s rows at a time by one BLAS product into scratch and subtract it from the
   blocks (:func:`_update_rr_blas`); on crystal 22³ the wide fronts gain 1.3×.

The result is the same factor (same ``D``, ``Dlu``, ``piv``, ``L`` buffers, so every solve and
accessor works unchanged), computed in another order; only rounding differs. Pivots are met in
elimination order, so a singular pivot reports the same position.

:func:`factor_supernodal` is compiled into its caller
(:func:`graphsolve.kernels.factor_kernels._factor_sn`), whose numba cache follows
``factor_kernels.py`` only: after an edit here, run ``make clean-cache``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.np.linalg import _BLAS

from .blocks import NO_REFCOUNT, _finish_pivot, _ldl_solve_left, _lu_solve_trans_left, _sub_matmul

__all__ = ["plan", "factor_supernodal"]

#: Panel columns (scalars) factored by the loops before the rest of the supernode is updated by
#: one BLAS product.
PANEL_BLOCK = 48

#: A supernode at least this many scalar columns wide updates ``R × R`` by BLAS products into a
#: scratch panel, then subtracts the panel from the blocks (step 3); narrower ones multiply
#: block by block in place. Measured with 6×6 blocks, refactor, in place → BLAS: crystal 22³
#: 3.70 → 2.75 s, 200² grid 1.08 → 1.04 s. Since panels load row by row (:func:`_row_runs`),
#: two-node supernodes gain too (24 → 12, best of 5, old and new alternating: crystal 12³
#: 54 → 51 ms, ``nx.grid_2d_graph(100, 100)`` 132 → 128 ms and 148 → 142 ms relabelled,
#: ``nx.grid_graph([22]*3)`` 1.30 → 1.27 s); single-node ones gain less and stay in place.
BLAS_UPDATE_MIN_WIDTH = 12

#: Scalar rows of ``R`` per BLAS product of the ``R × R`` update (bounds its scratch panel).
UPDATE_PANEL_ROWS = 128

#: Supernodes of at least this many nodes count as wide (see :func:`plan`).
WIDE_NODES = 4

#: Longer runs are split (a split run is still a chain of supernodes): bounds the two panel
#: buffers, which a dense graph would otherwise make as large as its whole factor.
MAX_SUPERNODE_NODES = 128

#: Relaxed amalgamation (:func:`_relaxed`): the scalar widths up to which a merged supernode
#: may hold any share of structural zeros, then up to :data:`RELAX_ZEROS` ``[0]``, ``[1]``;
#: wider ones up to ``RELAX_ZEROS[2]``. CHOLMOD's defaults (``nrelax``, ``zrelax``).
RELAX_WIDTHS = (4, 16, 48)
RELAX_ZEROS = (0.8, 0.1, 0.05)

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
def _fundamental(order, etree, parent_ptr, max_width):
    """Fundamental supernodes as runs of elimination positions: ``sn_ptr`` (supernode ``s``
    covers positions ``sn_ptr[s]:sn_ptr[s+1]``).

    Position ``k`` joins the supernode of ``k - 1`` when the node at ``k`` is the elimination
    tree parent of the node at ``k - 1`` and has exactly one later neighbour fewer (then the
    two share every later neighbour, and the supernode's panel has no structural zero).
    ``max_width`` caps a supernode's width in nodes."""
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
    return sn_ptr[:ns + 1].copy()


@njit(cache=True)
def _relaxed(sn_ptr, order, etree, parent_ptr, parent_edges, fe_parent, sizes, max_width,
             widths, zeros):
    """Relaxed amalgamation (Ashcraft & Grimes 1989; CHOLMOD's ``cholmod_super_symbolic``):
    merge a supernode into the next one when that one starts with the elimination-tree parent
    of its last column and the merged panel stays dense enough. Returns the merged ``sn_ptr``
    and ``padded`` (1 where a panel has structural zeros).

    Walks the supernodes from the last to the first, growing the current merged supernode
    downwards. A merge of ``W`` scalar columns is accepted when ``W <= widths[0]``, or
    ``W <= widths[1]`` and at most ``zeros[0]`` of the merged lower trapezoid is structural
    zeros, or ``W <= widths[2]`` and at most ``zeros[1]``, or at most ``zeros[2]`` (CHOLMOD's
    ``nrelax`` / ``zrelax`` rule, its defaults in :data:`RELAX_WIDTHS`, :data:`RELAX_ZEROS`).
    A column's pattern below a supernode that it joins this way is a subset of the supernode's
    (the pattern of a column, without its parent, is in its parent's), so the rows of the
    merged panel are those of its last column and no factor block is added: the structural
    zeros of the panel stay exactly zero through the dense factorization and are not written
    back."""
    ns = sn_ptr.size - 1
    # Scalar width, actual lower-trapezoid entries and rows-below height of each supernode.
    w_sc = np.zeros(ns, np.float64)
    z_sc = np.zeros(ns, np.float64)
    h_sc = np.zeros(ns, np.float64)
    for s in range(ns):
        for k in range(sn_ptr[s], sn_ptr[s + 1]):
            sj = sizes[order[k]]
            below = 0
            for t in range(parent_ptr[k], parent_ptr[k + 1]):
                below += sizes[fe_parent[parent_edges[t]]]
            w_sc[s] += sj
            z_sc[s] += sj * (sj + 1) / 2 + sj * below
        last = sn_ptr[s + 1] - 1
        for t in range(parent_ptr[last], parent_ptr[last + 1]):
            h_sc[s] += sizes[fe_parent[parent_edges[t]]]
    start = np.empty(ns + 1, np.int64)
    padded = np.zeros(ns, np.uint8)
    ng = 0
    start[0] = sn_ptr[ns]
    gw = 0.0
    gz = 0.0
    gh = 0.0
    gn = 0
    for s in range(ns - 1, -1, -1):
        nodes = sn_ptr[s + 1] - sn_ptr[s]
        merged = False
        if ng > 0 and gn + nodes <= max_width:
            first_next = order[sn_ptr[s + 1]]
            if etree[order[sn_ptr[s + 1] - 1]] == first_next:
                W = gw + w_sc[s]
                dense = W * (W + 1) / 2 + W * gh
                frac = (dense - gz - z_sc[s]) / dense
                merged = (W <= widths[0] or (W <= widths[1] and frac <= zeros[0])
                          or (W <= widths[2] and frac <= zeros[1]) or frac <= zeros[2])
        if merged:
            gw += w_sc[s]
            gz += z_sc[s]
            gn += nodes
            dense = gw * (gw + 1) / 2 + gw * gh
            padded[ng - 1] = 1 if dense > gz else 0
        else:
            ng += 1
            gw = w_sc[s]
            gz = z_sc[s]
            gh = h_sc[s]
            gn = nodes
            padded[ng - 1] = 0
        start[ng] = sn_ptr[s]
    out = np.empty(ng + 1, np.int64)
    pad = np.empty(ng, np.uint8)
    for g in range(ng + 1):
        out[g] = start[ng - g]
    for g in range(ng):
        pad[g] = padded[ng - 1 - g]
    return out, pad


@njit(cache=True)
def _panels(sn_ptr, order, parent_ptr, parent_edges, fe_parent, pos, sizes):
    """The rows and update targets of each supernode's panel.

    Returns ``(row_ptr, rows, tgt_ptr, tgt, sizes_needed)``: the rows ``R`` below supernode
    ``s`` are ``rows[row_ptr[s]:row_ptr[s+1]]`` (its last column's later neighbours, in
    elimination order); ``tgt[tgt_ptr[s] + a (a - 1) / 2 + b]`` is the factor pair (child
    ``R[b]``, parent ``R[a]``), ``b < a``, or -1 if the pattern lacks it.
    ``sizes_needed = (max panel scalars, max panel rows, max panel nodes)``."""
    ns = sn_ptr.size - 1
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
    return row_ptr, rows, tgt_ptr, tgt, np.array([max_panel, max_h, max_nodes])


@njit(cache=True)
def _row_runs(sn_ptr, order, row_ptr, rows, child_ptr, fe_child, pos):
    """The factor blocks of each panel row inside its supernode's columns, as runs of blocks.

    The factor stores each node's blocks ``L_pj`` by row ``p``, their columns ``j`` sorted by
    elimination position (:func:`graphsolve.symbolic.factor_pattern`), so the blocks of row
    ``p`` in the columns of supernode ``s`` are the consecutive pairs
    ``run_lo[q] .. run_hi[q] - 1``, ``q = run_ptr[s] + b`` for the panel's row ``b`` (its own
    nodes, then ``R``). Panels are loaded and written back along these runs: row by row, the
    factor read in order, rather than column by column across the whole panel."""
    ns = sn_ptr.size - 1
    run_ptr = np.zeros(ns + 1, np.int64)
    for s in range(ns):
        run_ptr[s + 1] = run_ptr[s] + sn_ptr[s + 1] - sn_ptr[s] + row_ptr[s + 1] - row_ptr[s]
    run_lo = np.empty(run_ptr[ns], np.int64)
    run_hi = np.empty(run_ptr[ns], np.int64)
    for s in range(ns):
        k0 = sn_ptr[s]
        k1 = sn_ptr[s + 1]
        w = k1 - k0
        for b in range(run_ptr[s + 1] - run_ptr[s]):
            node = order[k0 + b] if b < w else rows[row_ptr[s] + b - w]
            end = child_ptr[pos[node] + 1]
            lo = child_ptr[pos[node]]
            hi = end
            while lo < hi:                     # the row's first block in a column >= k0
                mid = (lo + hi) // 2
                if pos[fe_child[mid]] < k0:
                    lo = mid + 1
                else:
                    hi = mid
            e = lo
            while e < end and pos[fe_child[e]] < k1:
                e += 1
            run_lo[run_ptr[s] + b] = lo
            run_hi[run_ptr[s] + b] = e
    return run_ptr, run_lo, run_hi


def _wide_share(an, sn_ptr) -> float:
    """The part of the ``R × R`` update work (rows² × width) done by supernodes of at least
    :data:`WIDE_NODES` nodes among the supernodes ``sn_ptr``."""
    sizes = an.block_sizes.astype(float)
    width = np.add.reduceat(sizes[an.order], sn_ptr[:-1])
    below = np.concatenate([[0.0], np.cumsum(sizes[an.fe_parent[an.parent_edges]])])
    height = below[an.parent_ptr[sn_ptr[1:]]] - below[an.parent_ptr[sn_ptr[1:] - 1]]
    work = height * height * width
    wide = np.diff(sn_ptr) >= WIDE_NODES
    return float(work[wide].sum() / work.sum()) if work.sum() > 0 else 0.0


def plan(an, max_width: int = MAX_SUPERNODE_NODES, relax=True) -> tuple:
    """The supernodal plan of an analysis and its scratch buffers (allocated once):
    ``(sn, scratch, wide_share)`` for :func:`factor_supernodal`. ``wide_share`` is the part of
    the ``R × R`` update work (rows² × width) done by fundamental supernodes of at least
    :data:`WIDE_NODES` nodes, whose panels use BLAS and whose block products have a long inner
    dimension (measured before amalgamation: the rule that chooses this kernel was set on
    fundamental supernodes); ``max_width`` caps a supernode's nodes. ``relax``: merge fundamental
    supernodes by :func:`_relaxed` (True: :data:`RELAX_WIDTHS`, :data:`RELAX_ZEROS`; a pair
    ``(widths, zeros)`` of three each; False: fundamental supernodes only).

    ``sn = (sn_ptr, row_ptr, rows, tgt_ptr, tgt, padded, run_ptr, run_lo, run_hi)``: the
    supernodes' first positions, their rows ``R`` and ``R × R`` targets (:func:`_panels`), the
    flags of panels with structural zeros and the panel rows' runs of blocks
    (:func:`_row_runs`)."""
    sn_ptr = _fundamental(an.order, an.etree, an.parent_ptr, int(max_width))
    share = _wide_share(an, sn_ptr)
    if relax is False:
        padded = np.zeros(sn_ptr.size - 1, np.uint8)
    else:
        widths, zeros = (RELAX_WIDTHS, RELAX_ZEROS) if relax is True else relax
        sn_ptr, padded = _relaxed(sn_ptr, an.order, an.etree, an.parent_ptr, an.parent_edges,
                                  an.fe_parent, an.block_sizes, int(max_width),
                                  np.asarray(widths, np.float64), np.asarray(zeros, np.float64))
    row_ptr, rows, tgt_ptr, tgt, need = _panels(
        sn_ptr, an.order, an.parent_ptr, an.parent_edges, an.fe_parent, an.position,
        an.block_sizes)
    max_panel, max_h, max_nodes = (int(v) for v in need)
    smax = int(an.block_sizes.max())
    run_ptr, run_lo, run_hi = _row_runs(sn_ptr, an.order, row_ptr, rows, an.child_ptr,
                                        an.fe_child, an.position)
    sn = (sn_ptr, row_ptr, rows, tgt_ptr, tgt, padded, run_ptr, run_lo, run_hi)
    scratch = (np.empty(max_panel), np.empty(max_panel), np.empty(smax * max_h),
               np.empty(an.n_nodes, np.int64), np.empty(max_nodes + 1, np.int64),
               np.empty((PANEL_BLOCK + smax) ** 2), np.array([1.0, -1.0, 0.0]),
               np.empty((UPDATE_PANEL_ROWS + smax) * max_h))
    return sn, scratch, share


@njit(error_model="numpy", inline="always")
def _scale_rows(F, G, r0, r1, oj, sj, lu, pv, wb):
    """Rows ``r0:r1`` of the pivot's columns ``oj:oj+sj``: ``T`` (in ``F``, copied to ``G``)
    becomes ``L = T D_j⁻¹`` in ``F`` (Alg. 3 line 18 for
    each row's pair, as ``D⁻ᵀ Tᵀ``)."""
    nr = r1 - r0
    if nr <= 0:
        return
    for r in range(nr):
        for c in range(sj):
            v = F[r0 + r, oj + c]
            G[r0 + r, oj + c] = v
            wb[c * nr + r] = v
    if pv[0] < 0:                              # definite pivot: M Δ Mᵀ, symmetric
        _ldl_solve_left(lu, sj, wb, nr)
    else:
        _lu_solve_trans_left(lu, pv, sj, wb, nr)
    for r in range(nr):
        for c in range(sj):
            F[r0 + r, oj + c] = wb[c * nr + r]


@njit(error_model="numpy", inline="always")
def _block_in(F, o, oj, L, f0, sp, sj):
    """``F[o:o+sp, oj:oj+sj]`` = the ``sp × sj`` block at ``L[f0]`` (row-major); the 6×6
    case with sizes known to the compiler."""
    if sp == 6 and sj == 6:
        for r in range(6):
            for c in range(6):
                F[o + r, oj + c] = L[f0 + 6 * r + c]
        return
    for r in range(sp):
        for c in range(sj):
            F[o + r, oj + c] = L[f0 + r * sj + c]


@njit(error_model="numpy", inline="always")
def _block_out(F, o, oj, L, f0, sp, sj):
    """The inverse copy of :func:`_block_in`: ``L[f0]`` = ``F[o:o+sp, oj:oj+sj]``."""
    if sp == 6 and sj == 6:
        for r in range(6):
            for c in range(6):
                L[f0 + 6 * r + c] = F[o + r, oj + c]
        return
    for r in range(sp):
        for c in range(sj):
            L[f0 + r * sj + c] = F[o + r, oj + c]


@njit(error_model="numpy", inline="always")
def _block_sub(X, x0, C, c0, ld, sa, sb):
    """``X[x0:]`` (an ``sa × sb`` block, row-major) ``-=`` the block of ``C`` at ``C[c0]``
    with row stride ``ld``; the 6×6 case with sizes known to the compiler."""
    if sa == 6 and sb == 6:
        for r in range(6):
            for c in range(6):
                X[x0 + 6 * r + c] -= C[c0 + r * ld + c]
        return
    for r in range(sa):
        for c in range(sb):
            X[x0 + r * sb + c] -= C[c0 + r * ld + c]


@njit(error_model="numpy", inline="always")
def _rows_times6(F, G, r0, r1, oj, X):
    """``F[r, oj:oj+6] = G[r, oj:oj+6] Xᵀ`` for ``r0 <= r < r1`` (``X`` 6×6, row-major in a
    flat buffer): :func:`_scale_below` for 6×6 pivots, with the inner sizes known to the
    compiler."""
    for r in range(r0, r1):
        t0 = G[r, oj]
        t1 = G[r, oj + 1]
        t2 = G[r, oj + 2]
        t3 = G[r, oj + 3]
        t4 = G[r, oj + 4]
        t5 = G[r, oj + 5]
        for c in range(6):
            F[r, oj + c] = (t0 * X[6 * c] + t1 * X[6 * c + 1] + t2 * X[6 * c + 2]
                            + t3 * X[6 * c + 3] + t4 * X[6 * c + 4] + t5 * X[6 * c + 5])


@njit(error_model="numpy", inline="always")
def _scale_below(F, G, r0, r1, oj, sj, lu, pv, wb):
    """Rows ``r0:r1`` of the pivot's columns ``oj:oj+sj``: ``T`` (in ``G``) becomes
    ``L = T D_j⁻¹`` in ``F`` (Alg. 3 line 18 for each row's pair). ``D_j⁻¹`` is made once from
    the pivot's factor (its solve applied to the identity, as :func:`_scale_rows` applies it to
    the rows), then each row is multiplied by it: many rows per pivot below a panel block."""
    if r1 <= r0:
        return
    for c in range(sj):
        for r in range(sj):
            wb[c * sj + r] = 1.0 if r == c else 0.0
    if pv[0] < 0:                              # X = D⁻ᵀ, so that X[c, q] = D⁻¹[q, c]
        _ldl_solve_left(lu, sj, wb, sj)
    else:
        _lu_solve_trans_left(lu, pv, sj, wb, sj)
    if sj == 6:
        _rows_times6(F, G, r0, r1, oj, wb)
        return
    for r in range(r0, r1):
        for c in range(sj):
            acc = 0.0
            for q in range(sj):
                acc += G[r, oj + q] * wb[c * sj + q]
            F[r, oj + c] = acc


@njit(error_model="numpy", inline="always")
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


@njit(error_model="numpy", inline="always")
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
            _block_sub(D, d_ptr[pa], Cb, ra * nc + ca, nc, sa, sa)
            base = t0 + a * (a - 1) // 2
            for b in range(a):
                e = tgt[base + b]
                if e >= 0:
                    _block_sub(L, fe_ptr[e], Cb, ra * nc + roff[w + b] - R0, nc, sa,
                               sizes[rows[r0 + b]])
        a0 = a1


@njit(error_model="numpy", **NO_REFCOUNT)
def factor_supernodal(sym, sn, D, Dlu, piv, L, rtol, scratch):
    """Numeric LDLᵀ over the supernodes of :func:`plan` (see the module docstring), on factor
    buffers loaded with the matrix (``D``, lower blocks in ``L``). Returns the elimination
    position of the first singular pivot, or -1."""
    order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, _, _, _, _ = sym
    sn_ptr, row_ptr, rows, tgt_ptr, tgt, padded, run_ptr, run_lo, run_hi = sn
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
        if padded[s]:                          # structural zeros of a relaxed supernode
            Fb[:H * W] = 0.0
        for b in range(w + m):                 # 1. assemble, row by row
            p = order[k0 + b] if b < w else rows[r0 + b - w]
            sp = sizes[p]
            op = roff[b]
            if b < w:
                _block_in(F, op, op, D, d_ptr[p], sp, sp)
            q = run_ptr[s] + b
            for e in range(run_lo[q], run_hi[q]):
                j = fe_child[e]
                _block_in(F, op, roff[loc[j]], L, fe_ptr[e], sp, sizes[j])
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
                _scale_rows(F, G, below, ob1, oj, sj, lu, pv, wb)
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
                    _scale_below(F, G, ob1, H, roff[jj], sj, Dlu[dj:dj + sj * sj],
                                 piv[x_ptr[j]:x_ptr[j + 1]], wb)
            if ob1 < W:                        # later columns: F -= L Tᵀ, in place
                _gemm_abt(Fb, ob1 * W + ob0, Gb, ob1 * W + ob0, Fb, ob1 * W + ob1, H - ob1,
                          W - ob1, ob1 - ob0, W, W, W, _MINUS_ONE, _ONE, consts)
            jb = je
        for b in range(1, w + m):              # 3. write the factor back, row by row ...
            p = order[k0 + b] if b < w else rows[r0 + b - w]
            sp = sizes[p]
            op = roff[b]
            q = run_ptr[s] + b
            for e in range(run_lo[q], run_hi[q]):
                j = fe_child[e]
                _block_out(F, op, roff[loc[j]], L, fe_ptr[e], sp, sizes[j])
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
