"""Compiled kernels that build a :class:`~graphsolve.BlockMatrix` from a compressed sparse matrix.

:meth:`graphsolve.BlockMatrix.from_scipy` hands them the CSR arrays of ``S`` (or the CSC arrays,
which are the CSR arrays of ``Sᵀ``). Every pass is one sweep over the stored entries, block row
by block row, with two arrays of length ``n`` (a stamp and a position per node) instead of
sorting or hashing the entries, so a 10⁶-node path is assembled in about a second and with no
temporary of the size of the input. :meth:`BlockMatrix._scatter` is the readable NumPy version
of the scatter, and the tests check both against each other.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .simd import prefetch

#: How many nodes ahead the scatter prefetches the blocks a node's edges will touch.
PREFETCH_NODES = 4

__all__ = ["stored_block_pairs", "symmetric_block_pattern", "scatter_compressed",
           "gather_sources", "upper_edges_equal", "mirror_edges", "zero_blocks"]


@njit(inline="always")
def _node_of(c, blk, uniform):
    """The node of scalar column ``c``: ``c // uniform`` for blocks of one size (no lookup in
    ``blk``, whose random reads cost TLB misses on large randomly numbered graphs)."""
    return c // uniform if uniform > 0 else blk[c]


@njit(cache=True, nogil=True)
def stored_block_pairs(indptr, indices, blk, off, uniform=0):
    """Off-diagonal blocks ``(i, j)`` holding a stored entry of a compressed matrix, each once.

    ``indptr, indices`` are CSR arrays (major index = row), ``blk[c]`` the node of scalar
    column ``c`` and ``off`` the node offsets (the rows of node ``i`` are ``off[i]:off[i+1]``);
    ``uniform > 0``: every block has that size (``blk`` is then not read).
    Stored zeros count, as in SciPy and CHOLMOD, where the stored entries are the structure:
    a later matrix may put values there. Rows must hold sorted columns (SciPy's canonical
    format): the rest of a block's run in a row is skipped. Two sweeps: count, then fill.
    Returns ``(pi, pj)`` in block-row order, columns unsorted."""
    n = off.size - 1
    mark = np.full(n, -1, np.int64)
    pi = np.empty(0, np.int64)
    pj = np.empty(0, np.int64)
    count = 0
    for sweep in range(2):                      # count, then fill
        if sweep == 1:
            pi = np.empty(count, np.int64)
            pj = np.empty(count, np.int64)
            mark[:] = -1
            count = 0
        for i in range(n):
            for r in range(off[i], off[i + 1]):
                end = -1                        # columns below end are in the block just seen
                for p in range(indptr[r], indptr[r + 1]):
                    c = indices[p]
                    if c < end:
                        continue
                    j = _node_of(c, blk, uniform)
                    end = off[j + 1]
                    if j != i and mark[j] != i:
                        mark[j] = i
                        if sweep == 1:
                            pi[count] = i
                            pj[count] = j
                        count += 1
    return pi, pj


@njit(cache=True, nogil=True, inline="always")
def _sort_run(a: np.ndarray, lo: int, hi: int) -> None:
    """Sort ``a[lo:hi]`` in place: insertion sort for the short runs of sparse rows (a slice's
    ``sort()`` costs more than a short row's whole work), NumPy's sort for long ones."""
    if hi - lo > 32:
        a[lo:hi].sort()
        return
    for i in range(lo + 1, hi):
        x = a[i]
        j = i
        while j > lo and a[j - 1] > x:
            a[j] = a[j - 1]
            j -= 1
        a[j] = x


@njit(cache=True, nogil=True)
def symmetric_block_pattern(n, pi, pj):
    """CSR ``(indptr, indices)`` of the union of the pairs ``(pi, pj)`` and their mirrors
    ``(pj, pi)``, sorted columns and no duplicates: the directed edges of the block graph in
    the order of :attr:`graphsolve.BlockMatrix.edges`."""
    count = np.zeros(n + 1, np.int64)
    for k in range(pi.size):
        count[pi[k] + 1] += 1
        count[pj[k] + 1] += 1
    for i in range(n):
        count[i + 1] += count[i]
    fill = count[:-1].copy()
    cols = np.empty(count[n], np.int64)
    for k in range(pi.size):
        cols[fill[pi[k]]] = pj[k]
        fill[pi[k]] += 1
        cols[fill[pj[k]]] = pi[k]
        fill[pj[k]] += 1
    indptr = np.zeros(n + 1, np.int64)
    m = 0
    for i in range(n):
        _sort_run(cols, count[i], count[i + 1])   # in place; m <= the read index below
        last = -1
        for q in range(count[i], count[i + 1]):
            j = cols[q]
            if j != last:
                cols[m] = j
                m += 1
                last = j
        indptr[i + 1] = m
    return indptr, cols[:m].copy()


@njit(cache=True, nogil=True)
def scatter_compressed(indptr, indices, data, blk, off, sizes, diag_ptr, e_indptr, e_indices,
                       edge_ptr, mirror, transposed, out, uniform=0):
    """Add the stored nonzeros of a compressed matrix into the flat block buffer ``out``.

    ``transposed=False``: the arrays are CSR (major index = row). ``transposed=True``: they are
    CSC, i.e. the CSR arrays of ``Sᵀ``; entry ``(major r, minor c)`` is then ``S[c, r]`` and
    goes to block ``(node(c), node(r))`` through ``mirror`` (the index of the reversed edge).
    ``e_indptr, e_indices`` is the block graph as CSR of directed edges (edge ``k`` is the
    ``k``-th stored pair) and ``edge_ptr``/``diag_ptr`` the block offsets in ``out``;
    ``uniform`` as for :func:`stored_block_pairs`. Rows must hold sorted columns (SciPy's
    canonical format): each block's run in a row is resolved once. Duplicates add up.
    Returns ``(-1, -1)``, or the first nonzero block ``(row node, column node)`` that is not
    on an edge (``out`` is then partly written)."""
    n = off.size - 1
    stamp = np.full(n, -1, np.int64)
    pos = np.empty(n, np.int64)
    for i in range(n):
        if i + PREFETCH_NODES < n:          # what node i + PREFETCH_NODES reads by neighbour
            for k in range(e_indptr[i + PREFETCH_NODES], e_indptr[i + PREFETCH_NODES + 1]):
                j = e_indices[k]
                prefetch(blk, off[j])
                prefetch(stamp, j)
                prefetch(pos, j)
                t0 = edge_ptr[mirror[k]] if transposed else edge_ptr[k]
                for q in range(t0, edge_ptr[(mirror[k] if transposed else k) + 1], 8):
                    prefetch(out, q)
        for k in range(e_indptr[i], e_indptr[i + 1]):
            stamp[e_indices[k]] = i
            pos[e_indices[k]] = k
        si = sizes[i]
        for r in range(off[i], off[i + 1]):
            a = r - off[i]
            end = -1                            # the block of columns [lo, end) is resolved:
            lo = 0                              # its entries go to out[base + (c - lo) * step]
            base = 0
            step = 1
            j = -1
            for p in range(indptr[r], indptr[r + 1]):
                c = indices[p]
                if c >= end:                    # a new block: sorted rows (canonical format)
                    j = _node_of(c, blk, uniform)
                    lo = off[j]
                    end = off[j + 1]
                    if j == i:
                        blk0 = diag_ptr[i]
                    elif stamp[j] == i:
                        blk0 = edge_ptr[mirror[pos[j]]] if transposed else edge_ptr[pos[j]]
                    else:
                        blk0 = -1               # not on an edge: only stored zeros may be here
                    if transposed:              # S[c, r]: row c - lo, column a of the block
                        base = blk0 + a
                        step = si
                    else:                       # S[r, c]: row a, column c - lo
                        base = blk0 + a * sizes[j]
                        step = 1
                    if blk0 < 0:
                        base = -1
                v = data[p]
                if v == 0:
                    continue
                if base < 0:
                    if transposed:
                        return j, i
                    return i, j
                out[base + (c - lo) * step] += v
    return -1, -1


@njit(cache=True, nogil=True)
def gather_sources(a_indptr, a_indices, edge_ptr, position, child_ptr, fe_child, fe_ptr):
    """Where every off-diagonal block of a matrix goes in the factor buffers, in one pass:
    ``(lsrc, usrc, dst, upper, bad)``.

    The matrix's directed edges are the CSR ``a_indptr, a_indices`` (both directions, sorted
    columns) and edge ``q``'s block starts at ``edge_ptr[q]`` of its data. The analysis groups
    its pairs by the position of their parent (the later eliminated node): the children of the
    node at position ``k`` are ``fe_child[child_ptr[k]:child_ptr[k + 1]]``; edge ``(i, j)``
    and its mirror ``(j, i)`` both map to the pair ``(parent, child)`` of ``{i, j}``.

    Per factor pair ``e``: ``lsrc[e]`` / ``usrc[e]``, where its lower (row of the later
    eliminated node) / upper block starts in the data, -1 for a fill pair. Per edge ``q``:
    ``dst[q]``, where its block starts in ``L`` or ``U`` (``fe_ptr`` of its pair), and
    ``upper[q]``, whether it goes to ``U``. ``bad`` is -1, or the first edge whose pair the
    analysis does not have (the rest is then incomplete)."""
    n = position.size
    stamp = np.full(n, -1, np.int64)
    where = np.empty(n, np.int64)
    lsrc = np.full(fe_child.size, -1, np.int64)
    usrc = np.full(fe_child.size, -1, np.int64)
    dst = np.empty(a_indices.size, np.int64)
    upper = np.empty(a_indices.size, np.bool_)
    for p in range(n):
        k = position[p]
        for e in range(child_ptr[k], child_ptr[k + 1]):
            stamp[fe_child[e]] = p
            where[fe_child[e]] = e
        for q in range(a_indptr[p], a_indptr[p + 1]):
            j = a_indices[q]
            if position[j] > k:
                continue                        # p is the child: set from j's row
            if stamp[j] != p:
                return lsrc, usrc, dst, upper, q
            e = where[j]
            lo = a_indptr[j]
            hi = a_indptr[j + 1]
            while lo < hi:                      # the mirror (j, p) in j's sorted row
                mid = (lo + hi) // 2
                if a_indices[mid] < p:
                    lo = mid + 1
                else:
                    hi = mid
            lsrc[e] = edge_ptr[q]               # block (p, j), p eliminated later: in L
            usrc[e] = edge_ptr[lo]
            dst[q] = fe_ptr[e]
            dst[lo] = fe_ptr[e]
            upper[q] = False
            upper[lo] = True
    return lsrc, usrc, dst, upper, -1


@njit(cache=True, nogil=True)
def upper_edges_equal(a_indptr, a_indices, edges):
    """Whether the edges ``(i, j)``, ``i < j``, of the directed CSR ``a_indptr, a_indices``
    (sorted columns) are exactly the rows of ``edges`` (sorted ``(u, v)``, ``u < v``)."""
    k = 0
    m = edges.shape[0]
    for i in range(a_indptr.size - 1):
        for q in range(a_indptr[i], a_indptr[i + 1]):
            j = a_indices[q]
            if j <= i:
                continue
            if k >= m or edges[k, 0] != i or edges[k, 1] != j:
                return False
            k += 1
    return k == m


@njit(cache=True, nogil=True)
def mirror_edges(e_indptr, e_indices):
    """``rev`` with edge ``rev[k]`` the reverse of edge ``k``, for the directed edges of a
    symmetric pattern as CSR with sorted columns (:attr:`graphsolve.BlockMatrix.edges`).

    Visiting the rows in order, the edges ``(i, j)`` arrive in increasing ``i`` for each
    ``j``, which is the order of row ``j``'s own columns: one cursor per row walks them
    (O(edges), no search)."""
    n = e_indptr.size - 1
    cursor = e_indptr[:-1].copy()
    rev = np.empty(e_indices.size, np.int64)
    for i in range(n):
        for k in range(e_indptr[i], e_indptr[i + 1]):
            j = e_indices[k]
            rev[k] = cursor[j]
            cursor[j] += 1
    return rev


@njit(cache=True, nogil=True)
def zero_blocks(data, ptr):
    """``zero[i]``: block ``data[ptr[i]:ptr[i + 1]]`` holds only zeros (NaN is not zero)."""
    n = ptr.size - 1
    zero = np.ones(n, np.bool_)
    for i in range(n):
        for q in range(ptr[i], ptr[i + 1]):
            if data[q] != 0.0:
                zero[i] = False
                break
    return zero
