"""Compiled symbolic kernels on CSR adjacency: DFS orders, elimination tree, factor pattern and
the update schedule. :mod:`graphsolve.analysis` turns their arrays into an
:class:`~graphsolve.Analysis`.

The adjacency is the symmetric CSR pattern of the block graph with sorted column indices, so a
DFS that scans neighbours left to right visits them in increasing node id (as networkx does on a
graph with sorted adjacency). The elimination tree and the row patterns of ``L`` follow the
classical algorithms (Liu 1990; Davis 2006, *Direct Methods for Sparse Linear Systems*,
``cs_etree`` / ``cs_ereach``): the lower neighbours of ``k`` in the filled graph are the nodes
on the tree paths from its original lower neighbours up to ``k``. :func:`minimum_degree` is the
greedy minimum-degree ordering on the explicit elimination graph.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

__all__ = ["component_roots", "csr_adjacency", "dfs_orders", "elimination_counts",
           "factor_pattern", "group_by_key", "minimum_degree", "relabelled_csr", "update_counts",
           "update_lists", "update_schedule", "weighted_postorder"]


def csr_adjacency(n: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric CSR adjacency (indptr, indices) with sorted neighbour lists."""
    if edges.size == 0:
        return np.zeros(n + 1, np.int64), np.zeros(0, np.int64)
    both = np.concatenate([edges, edges[:, ::-1]])
    return csr_of_sorted_pairs(n, both[np.lexsort((both[:, 1], both[:, 0]))])


def csr_of_sorted_pairs(n: int, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR ``(indptr, indices)`` of directed pairs ``(u, v)`` already sorted by ``(u, v)``
    (e.g. a :class:`~graphsolve.BlockMatrix`'s ``edges``)."""
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(pairs[:, 0], minlength=n), out=indptr[1:])
    return indptr, np.ascontiguousarray(pairs[:, 1])


@njit(cache=True, nogil=True)
def group_by_key(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable counting sort of ``keys`` in ``0..n-1``: ``(ptr, perm)`` with
    ``perm[ptr[k]:ptr[k + 1]]`` the indices holding key ``k``, in increasing index order."""
    ptr = np.zeros(n + 1, np.int64)
    for k in keys:
        ptr[k + 1] += 1
    for k in range(n):
        ptr[k + 1] += ptr[k]
    fill = ptr[:-1].copy()
    perm = np.empty(keys.size, np.int64)
    for e in range(keys.size):
        perm[fill[keys[e]]] = e
        fill[keys[e]] += 1
    return ptr, perm


@njit(cache=True, nogil=True)
def component_roots(indptr: np.ndarray, indices: np.ndarray, nonzero: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Connected components by their smallest node: ``(roots, labels)`` with ``roots[c]`` the
    smallest node of component ``c`` for which ``nonzero`` holds (the smallest node if none
    does), components numbered in order of their smallest node, ``labels`` each node's
    component."""
    n = indptr.size - 1
    labels = np.full(n, -1, np.int64)
    roots = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    ncomp = 0
    for s in range(n):
        if labels[s] >= 0:
            continue
        labels[s] = ncomp
        root = s if nonzero[s] else -1
        head, tail = 0, 1
        queue[0] = s
        while head < tail:
            v = queue[head]
            head += 1
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if labels[u] < 0:
                    labels[u] = ncomp
                    queue[tail] = u
                    tail += 1
                    if nonzero[u] and (root < 0 or u < root):
                        root = u
        roots[ncomp] = s if root < 0 else root
        ncomp += 1
    return roots[:ncomp], labels


@njit(cache=True, nogil=True)
def relabelled_csr(indptr: np.ndarray, indices: np.ndarray, rank: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the graph with node ``v`` renamed ``rank[v]`` (a permutation), neighbour lists
    sorted."""
    n = indptr.size - 1
    new_ptr = np.zeros(n + 1, np.int64)
    for v in range(n):
        new_ptr[rank[v] + 1] = indptr[v + 1] - indptr[v]
    for k in range(n):
        new_ptr[k + 1] += new_ptr[k]
    new_idx = np.empty(indices.size, np.int64)
    for v in range(n):
        a = new_ptr[rank[v]]
        m = 0
        for e in range(indptr[v], indptr[v + 1]):     # insertion sort: lists are short
            u = rank[indices[e]]
            j = a + m
            while j > a and new_idx[j - 1] > u:
                new_idx[j] = new_idx[j - 1]
                j -= 1
            new_idx[j] = u
            m += 1
    return new_ptr, new_idx


@njit(cache=True, nogil=True)
def dfs_orders(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Depth-first search from each root in turn (each root starts a new component), scanning
    neighbours in CSR order, exactly like a recursive DFS. Returns (preorder, postorder)."""
    n = indptr.size - 1
    visited = np.zeros(n, np.bool_)
    pre = np.empty(n, np.int64)
    post = np.empty(n, np.int64)
    stack = np.empty(n, np.int64)
    nxt = np.empty(n, np.int64)
    npre = 0
    npost = 0
    for r in roots:
        if visited[r]:
            continue
        top = 0
        stack[0] = r
        nxt[r] = indptr[r]
        visited[r] = True
        pre[npre] = r
        npre += 1
        while top >= 0:
            v = stack[top]
            if nxt[v] < indptr[v + 1]:
                u = indices[nxt[v]]
                nxt[v] += 1
                if not visited[u]:
                    visited[u] = True
                    pre[npre] = u
                    npre += 1
                    top += 1
                    stack[top] = u
                    nxt[u] = indptr[u]
            else:
                post[npost] = v
                npost += 1
                top -= 1
    return pre[:npre], post[:npost]


@njit(cache=True, nogil=True)
def _etree_positions(indptr: np.ndarray, indices: np.ndarray, order: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``pos`` (position of each node in ``order``) and the elimination tree by position
    (``cs_etree`` with path compression; -1 for roots)."""
    n = order.size
    pos = np.empty(n, np.int64)
    for k in range(n):
        pos[order[k]] = k
    parent_pos = np.full(n, -1, np.int64)
    ancestor = np.full(n, -1, np.int64)
    for k in range(n):
        v = order[k]
        for q in range(indptr[v], indptr[v + 1]):
            j = pos[indices[q]]
            while j != -1 and j < k:
                jnext = ancestor[j]
                ancestor[j] = k
                if jnext == -1:
                    parent_pos[j] = k
                j = jnext
    return pos, parent_pos


@njit(cache=True, nogil=True)
def _column_counts(indptr: np.ndarray, indices: np.ndarray, order: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``(parent_pos, counts)``: the elimination tree by position and the number of
    off-diagonal blocks of each column of ``L`` (its later neighbours in the filled graph), by
    one walk of every row (``cs_ereach``), O(nnz(L)) time."""
    n = order.size
    pos, parent_pos = _etree_positions(indptr, indices, order)
    counts = np.zeros(n, np.int64)
    flag = np.full(n, -1, np.int64)
    for k in range(n):
        flag[k] = k
        v = order[k]
        for q in range(indptr[v], indptr[v + 1]):
            j = pos[indices[q]]
            if j > k:
                continue
            while flag[j] != k:
                flag[j] = k
                counts[j] += 1
                j = parent_pos[j]
    return parent_pos, counts


def weighted_postorder(indptr: np.ndarray, indices: np.ndarray, order: np.ndarray
                       ) -> np.ndarray:
    """``order`` rearranged into a postorder of its elimination tree in which each node's
    children come in increasing order of their column counts (ties: their order in
    ``order``), so a node directly follows its child with the most later neighbours.

    Every postorder of the elimination tree has the same filled graph, pairs and flops as
    ``order`` (Liu 1990, equivalent orderings); this one is CHOLMOD's (``cholmod_postorder``
    weighted by column counts): it makes a node the successor of the child whose pattern it
    most likely continues, so consecutive columns form supernodes
    (:mod:`graphsolve.kernels.supernodal`) and the factor is read in runs."""
    order = np.asarray(order, np.int64)
    n = order.size
    parent_pos, counts = _column_counts(indptr, indices, order)
    kids = np.flatnonzero(parent_pos >= 0)
    kids = kids[np.lexsort((kids, counts[kids], parent_pos[kids]))]
    child_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(parent_pos[kids], minlength=n), out=child_ptr[1:])
    roots = np.flatnonzero(parent_pos < 0)
    _, post = dfs_orders(child_ptr, kids, roots)
    return order[post]


@njit(cache=True, nogil=True)
def factor_pattern(indptr: np.ndarray, indices: np.ndarray, order: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Elimination tree and the pattern of ``L`` for the elimination ``order``.

    Returns ``parent`` (by node, -1 for roots) and the rows of ``L`` in elimination order:
    ``row_ptr`` (by position) and ``row_nodes`` (the children of each node, i.e. its lower
    neighbours in the filled graph, sorted by position).

    Two walks of every row (``cs_ereach``, Davis 2006 §4.2): the first counts rows and
    columns, the second lists each column's rows, which come in increasing order; a transpose
    of the columns then gives rows sorted without sorting (on a 3-D grid's nested dissection,
    rows of hundreds of entries: 1.8× faster than sorting each row).
    """
    n = order.size
    pos, parent_pos = _etree_positions(indptr, indices, order)
    flag = np.full(n, -1, np.int64)
    row_ptr = np.zeros(n + 1, np.int64)
    col_ptr = np.zeros(n + 1, np.int64)
    for k in range(n):                      # first pass: row and column counts
        flag[k] = k
        v = order[k]
        for q in range(indptr[v], indptr[v + 1]):
            j = pos[indices[q]]
            if j > k:
                continue
            while flag[j] != k:
                row_ptr[k + 1] += 1
                col_ptr[j + 1] += 1
                flag[j] = k
                j = parent_pos[j]
    for k in range(n):
        row_ptr[k + 1] += row_ptr[k]
        col_ptr[k + 1] += col_ptr[k]
    col_rows = np.empty(row_ptr[n], np.int64)
    fill = col_ptr[:-1].copy()
    flag[:] = -1
    for k in range(n):                      # second pass: each column's rows, increasing
        flag[k] = k
        v = order[k]
        for q in range(indptr[v], indptr[v + 1]):
            j = pos[indices[q]]
            if j > k:
                continue
            while flag[j] != k:
                col_rows[fill[j]] = k
                fill[j] += 1
                flag[j] = k
                j = parent_pos[j]
    row_nodes = np.empty(row_ptr[n], np.int64)
    fill[:] = row_ptr[:-1]
    for j in range(n):                      # transpose: each row's columns come in order
        node = order[j]
        for q in range(col_ptr[j], col_ptr[j + 1]):
            k = col_rows[q]
            row_nodes[fill[k]] = node
            fill[k] += 1
    parent = np.full(n, -1, np.int64)
    for k in range(n):
        if parent_pos[k] >= 0:
            parent[order[k]] = order[parent_pos[k]]
    return parent, pos, row_ptr, row_nodes


@njit(cache=True, nogil=True)
def _schedule_sweep(pos: np.ndarray, order: np.ndarray, child_ptr: np.ndarray,
                    fe_child: np.ndarray, ptr: np.ndarray, count: np.ndarray, ic2: np.ndarray,
                    c1c2: np.ndarray, fill: bool) -> None:
    """One sweep of :func:`update_schedule`: counts into ``count[e + 1]`` (``fill=False``), or
    the lists from the offsets ``ptr`` (``fill=True``; ``ptr`` may be read-only). Row by row:
    the children of ``i`` are marked with their pair, then each child list of a ``c1`` is
    scanned for marked nodes."""
    n = order.size
    pair_at = np.empty(n, np.int64)         # by position: the pair (i, c) of the current row
    stamp = np.full(n, -1, np.int64)
    for k in range(n):
        for a in range(child_ptr[k], child_ptr[k + 1]):
            p = pos[fe_child[a]]
            pair_at[p] = a
            stamp[p] = k
        for e in range(child_ptr[k], child_ptr[k + 1]):
            kc = pos[fe_child[e]]
            t = ptr[e]
            for b in range(child_ptr[kc], child_ptr[kc + 1]):
                pb = pos[fe_child[b]]
                if stamp[pb] == k:
                    if fill:
                        ic2[t] = pair_at[pb]
                        c1c2[t] = b
                        t += 1
                    else:
                        count[e + 1] += 1


@njit(cache=True, nogil=True)
def update_counts(pos: np.ndarray, order: np.ndarray, child_ptr: np.ndarray,
                  fe_child: np.ndarray) -> np.ndarray:
    """``sched_ptr`` of :func:`update_schedule` alone: O(pairs) memory."""
    m = fe_child.size
    ptr = np.zeros(m + 1, np.int64)
    none = np.empty(0, np.int64)
    _schedule_sweep(pos, order, child_ptr, fe_child, ptr, ptr, none, none, False)
    for e in range(m):
        ptr[e + 1] += ptr[e]
    return ptr


@njit(cache=True, nogil=True)
def update_lists(pos: np.ndarray, order: np.ndarray, child_ptr: np.ndarray,
                 fe_child: np.ndarray, ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sched_ic2, sched_c1c2)`` of :func:`update_schedule` for the offsets ``ptr`` of
    :func:`update_counts`."""
    ic2 = np.empty(ptr[-1], np.int64)
    c1c2 = np.empty(ptr[-1], np.int64)
    _schedule_sweep(pos, order, child_ptr, fe_child, ptr, np.empty(0, np.int64), ic2, c1c2,
                    True)
    return ic2, c1c2


@njit(cache=True, nogil=True)
def update_schedule(pos: np.ndarray, order: np.ndarray, child_ptr: np.ndarray,
                    fe_child: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every factor pair ``e = (i, c1)``: the pairs ``(i, c2)`` and ``(c1, c2)`` for every
    ``c2`` that is a child of both ``i`` and ``c1`` (Alg. 3 lines 8-15), ``c2`` in elimination
    order: a count pass (:func:`update_counts`), then a fill pass (:func:`update_lists`).
    Returns (sched_ptr, sched_ic2, sched_c1c2)."""
    ptr = update_counts(pos, order, child_ptr, fe_child)
    ic2, c1c2 = update_lists(pos, order, child_ptr, fe_child, ptr)
    return ptr, ic2, c1c2


@njit(cache=True, nogil=True)
def minimum_degree(indptr: np.ndarray, indices: np.ndarray, sizes: np.ndarray,
                   zero: np.ndarray) -> np.ndarray:
    """Greedy minimum degree on the block elimination graph: repeatedly eliminate the eligible
    node whose neighbours have the fewest scalar rows (``sizes`` summed), ties by smallest
    id, and join its neighbours into a clique. A ``zero`` (zero-diagonal) node is eligible once
    all its original neighbours with a nonzero diagonal are eliminated. Returns the order.

    The same rule as :func:`graphsolve.ordering._minimum_degree` (the readable reference, sets
    and a heap), compiled: the neighbour lists live in one pool (a list that outgrows its slot
    moves to the pool's end, which doubles when full) and are merged with a marker array.
    Exact degrees, no quotient graph or approximate degrees (unlike AMD proper: Amestoy, Davis
    & Duff 1996), so each step costs the sum of its neighbours' list lengths."""
    n = indptr.size - 1
    start = indptr[:-1].copy()
    length = indptr[1:] - indptr[:-1]
    cap = length.copy()
    pool = np.empty(max(2 * indices.size, 16), np.int64)
    pool[:indices.size] = indices
    top = indices.size
    mark = np.full(n, -1, np.int64)
    done = np.zeros(n, np.bool_)
    pending = np.zeros(n, np.int64)             # a zero node's nonzero-diagonal neighbours
    for v in range(n):
        if zero[v]:
            for q in range(indptr[v], indptr[v + 1]):
                if not zero[indices[q]]:
                    pending[v] += 1
    deg = np.zeros(n, np.int64)
    for v in range(n):
        for q in range(start[v], start[v] + length[v]):
            deg[v] += sizes[pool[q]]
    heap = [(deg[v], v) for v in range(n) if pending[v] == 0]
    heapq.heapify(heap)
    order = np.empty(n, np.int64)
    nbrs = np.empty(n, np.int64)
    merged = np.empty(n, np.int64)
    count = 0
    tag = 0
    while len(heap) > 0:
        d, v = heapq.heappop(heap)
        if done[v] or d != deg[v] or pending[v] != 0:
            continue
        done[v] = True
        order[count] = v
        count += 1
        m = length[v]
        nbrs[:m] = pool[start[v]:start[v] + m]
        length[v] = 0
        for a in range(m):                  # adj(u) <- adj(u) ∪ adj(v) \ {u, v}
            u = nbrs[a]
            tag += 1
            mark[u] = tag
            mark[v] = tag
            k, du = _merge_into(pool, start[u], start[u] + length[u], mark, tag, merged, 0,
                                sizes, 0)
            k, du = _merge_into(nbrs, 0, m, mark, tag, merged, k, sizes, du)
            if k > cap[u]:                  # move u's list to the end of the pool
                if top + 2 * k > pool.size:
                    grown = np.empty(2 * (top + 2 * k), np.int64)
                    grown[:top] = pool[:top]
                    pool = grown
                start[u] = top
                cap[u] = 2 * k
                top += 2 * k
            pool[start[u]:start[u] + k] = merged[:k]
            length[u] = k
            deg[u] = du
        if not zero[v]:
            for q in range(indptr[v], indptr[v + 1]):
                u = indices[q]
                if pending[u] > 0 and not done[u]:
                    pending[u] -= 1
        for a in range(m):
            u = nbrs[a]
            if pending[u] == 0:
                heapq.heappush(heap, (deg[u], u))
    return order[:count]


@njit(cache=True, inline="always")
def _merge_into(src: np.ndarray, lo: int, hi: int, mark: np.ndarray, tag: int,
                merged: np.ndarray, k: int, sizes: np.ndarray, du: int) -> tuple[int, int]:
    """Append the entries of ``src[lo:hi]`` not yet marked with ``tag`` to ``merged[k:]``
    (marking them); returns the new count and ``du`` plus their sizes."""
    for q in range(lo, hi):
        w = src[q]
        if mark[w] != tag:
            mark[w] = tag
            merged[k] = w
            k += 1
            du += sizes[w]
    return k, du


@njit(cache=True, nogil=True)
def elimination_counts(indptr: np.ndarray, indices: np.ndarray, order: np.ndarray,
                       sizes: np.ndarray, limit: float) -> tuple[int, float, float, float]:
    """Factor pairs and flops of eliminating in ``order``, without building the factor.

    The cheap count that ``ordering="auto"`` compares candidates with: the elimination tree
    (``cs_etree``) and one walk of every row of ``L`` (``cs_ereach``, Davis 2006 §4.1-4.2),
    O(nnz(L)) time and O(n) memory. Visiting the pair (row ``k``, child ``j``) adds ``k`` to
    the parents of ``j``; the parents of a node form a clique of the filled graph, so the
    update triples of Brüdigam et al. (2023) Alg. 3 lines 8-15 with ``c2 = j`` are the pairs of
    its parents: the new parent ``k`` of ``j`` forms a triple with each earlier parent, whose
    sizes and number are kept as running totals. The counts equal
    :meth:`graphsolve.Analysis.flops` of the full analysis (a test checks this).

    Stops early, returning ``-1`` pairs, once the LDU flops exceed ``limit`` (a candidate
    that already lost). Returns ``(pairs, flops_ldu, flops_ldlt, solve_flops)`` (solve with
    one right-hand side), flops as float64.
    """
    n = order.size
    pos, parent_pos = _etree_positions(indptr, indices, order)
    s = np.empty(n, np.float64)                 # block sizes by position
    for k in range(n):
        s[k] = sizes[order[k]]
    s1 = np.zeros(n)                            # by child: sum of the parents' sizes so far
    cnt = np.zeros(n)                           # number of parents so far
    flu = 0.0
    flt = 0.0
    sol = 0.0
    pairs = 0
    flag = np.full(n, -1, np.int64)
    for k in range(n):
        sk = s[k]
        flu += 2.0 * sk * sk * sk / 3.0
        flt += sk * sk * sk / 3.0
        sol += 2.0 * sk * sk
        flag[k] = k
        v = order[k]
        for q in range(indptr[v], indptr[v + 1]):
            j = pos[indices[q]]
            if j > k:
                continue
            while flag[j] != k:
                flag[j] = k
                sj = s[j]
                pairs += 1
                flu += 4.0 * sj * sj * sk + 2.0 * sk * sj * sk
                flt += 2.0 * sj * sj * sk + 2.0 * sk * sj * sk
                sol += 4.0 * sk * sj
                # the new parent k of j pairs with every earlier parent c1 of j
                flu += 4.0 * (sj * sk * s1[j] + sj * sj * sk * cnt[j])
                flt += 2.0 * sj * sk * s1[j]
                s1[j] += sk
                cnt[j] += 1.0
                j = parent_pos[j]
        if flu > limit:
            return -1, flu, flt, sol
    return pairs, flu, flt, sol
