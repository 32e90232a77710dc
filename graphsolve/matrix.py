"""BlockMatrix: a square matrix whose nonzero blocks follow a graph.

Storage is one flat ``float64`` buffer: first the diagonal blocks in node order, then the
off-diagonal blocks of every *directed* edge ``(i, j)`` (both directions of each graph edge),
sorted by ``(i, j)``; every block is stored row-major. Two matrices on the same graph with the same
block sizes therefore share one layout, which is what lets :func:`graphsolve.factorize` move their
values into a factor buffer with a single vectorized gather.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp

from .errors import DTypeError, GraphError, NonFiniteError, PatternError, ShapeError
from .graph import _resolve_block_sizes, block_offsets, check_graph, resolve_block_sizes
from .kernels import assembly
from .symbolic import csr_of_sorted_pairs

__all__ = ["BlockMatrix", "random_block_matrix", "block_coordinates"]


def block_coordinates(row0: np.ndarray, col0: np.ndarray, nrows: np.ndarray,
                      ncols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Global ``(row, col)`` of every entry of blocks stored one after another, row-major.

    Block ``b`` has top-left corner ``(row0[b], col0[b])`` and shape ``(nrows[b], ncols[b])``.
    """
    counts = np.asarray(nrows, dtype=np.int64) * np.asarray(ncols, dtype=np.int64)
    starts = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    bid = np.repeat(np.arange(counts.size), counts)
    local = np.arange(starts[-1]) - starts[:-1][bid]
    nc = np.asarray(ncols, dtype=np.int64)[bid]
    return np.asarray(row0)[bid] + local // nc, np.asarray(col0)[bid] + local % nc


class BlockMatrix:
    """A square block matrix on a graph (one dense block per node, two per edge).

    Build one with :meth:`from_scipy`, :meth:`from_blocks` or :func:`random_block_matrix`; the
    constructor itself is internal.

    Attributes
    ----------
    graph : networkx.Graph
        The block graph (nodes ``0..n-1``, node attributes kept; for a matrix made by
        :meth:`from_scipy` without a graph, built on first access: analysis and factorization
        work on :attr:`edges` and never need it). Its graph attribute
        ``"zero_diagonal"`` lists the nodes whose diagonal block was zero at construction, so
        that ``analyze(A.graph)`` can place them; ``analyze(A)`` re-reads the current values
        (:meth:`zero_diagonal`).
    block_sizes : ndarray of int64, shape (n,)
        Read-only (the layout is fixed; :meth:`copy` and :meth:`with_data` share it).
    edges : ndarray of int64, shape (m, 2)
        Both directions of every graph edge, sorted by ``(i, j)``; read-only.
    offsets : ndarray of int64, shape (n + 1,)
        Rows of node ``i`` are ``offsets[i]:offsets[i + 1]``.
    data : ndarray of float64
        The flat block buffer (see the module docstring).
    shape : tuple[int, int]

    Examples
    --------
    >>> import numpy as np, networkx as nx, graphsolve as gs
    >>> A = gs.BlockMatrix.from_blocks(nx.path_graph(2), [np.eye(2), 3 * np.eye(1)],
    ...                                {(0, 1): np.ones((2, 1))})
    >>> A.to_dense()
    array([[1., 0., 1.],
           [0., 1., 1.],
           [1., 1., 3.]])
    >>> A.is_symmetric()
    True
    """

    _graph_source: nx.Graph | None = None     # see _on_copy_of

    def __init__(self, graph: nx.Graph, block_sizes: np.ndarray, data: np.ndarray | None = None):
        self._init_layout(graph, block_sizes, data)
        self._graph = graph
        graph.graph["zero_diagonal"] = self._zero_at_build = self._zero_diagonal()

    @classmethod
    def _on_copy_of(cls, graph: nx.Graph, block_sizes: np.ndarray) -> BlockMatrix:
        """A zero matrix on ``graph`` whose :attr:`graph` is a copy of it made on first access
        (copying a networkx graph of 10⁶ nodes takes seconds, and analysis and factorization
        never need it). Call :meth:`_built` once the values are written."""
        A = object.__new__(cls)
        A._init_layout(graph, block_sizes, None)
        A._graph = None
        A._graph_source = graph
        return A

    def _built(self) -> BlockMatrix:
        """Record the zero diagonal blocks of the finished matrix (graph attribute
        ``"zero_diagonal"``)."""
        self._zero_at_build = self._zero_diagonal()
        if self._graph is not None:
            self._graph.graph["zero_diagonal"] = self._zero_at_build
        return self

    def _init_layout(self, graph: nx.Graph, block_sizes: Sequence[int] | np.ndarray,
                     data: np.ndarray | None) -> None:
        n = check_graph(graph)
        sizes = np.array(block_sizes, dtype=np.int64)   # a copy: the layout becomes read-only
        if sizes.shape != (n,):
            raise ShapeError(f"{sizes.size} block sizes for a graph of {n} nodes")
        edges = np.fromiter((v for e in graph.edges for v in e), dtype=np.int64,
                            count=2 * graph.number_of_edges()).reshape(-1, 2)
        directed = np.concatenate([edges, edges[:, ::-1]])
        directed = directed[np.lexsort((directed[:, 1], directed[:, 0]))]
        self._set_layout(sizes, directed, data)

    def _set_layout(self, sizes: np.ndarray, directed: np.ndarray,
                    data: np.ndarray | None) -> None:
        """Offsets of the flat buffer for ``sizes`` and the sorted directed ``edges``."""
        n = sizes.size
        sizes.flags.writeable = False               # the layout is fixed: copies share it
        directed.flags.writeable = False
        self.block_sizes = sizes
        self.offsets = block_offsets(sizes)
        N = int(self.offsets[-1])
        self.shape = (N, N)
        self.edges = directed                       # (m, 2) directed pairs, sorted
        self._edge_keys = directed[:, 0] * n + directed[:, 1]
        self.diag_ptr = block_offsets(sizes * sizes)
        self.edge_ptr = self.diag_ptr[-1] + block_offsets(sizes[directed[:, 0]]
                                                          * sizes[directed[:, 1]])
        size = int(self.edge_ptr[-1])
        if data is None:
            data = np.zeros(size)
        else:
            data = _as_float64(data, "data")
            if data.shape != (size,):
                raise ShapeError(f"flat data has shape {data.shape}, layout needs ({size},)")
        self.data = data

    def _like(self, data: np.ndarray, graph: nx.Graph | None) -> BlockMatrix:
        """A matrix sharing this one's layout arrays (not copied), holding ``data``."""
        data = _as_float64(data, "data")
        if data.shape != self.data.shape:
            raise ShapeError(f"flat data has shape {data.shape}, layout needs "
                             f"{self.data.shape}")
        B = object.__new__(BlockMatrix)
        B.__dict__.update(self.__dict__)
        B.data, B._graph = data, graph
        return B

    def __setstate__(self, state: dict) -> None:
        """Unpickling: the layout arrays become read-only again."""
        self.__dict__.update(state)
        self.block_sizes.flags.writeable = False
        self.edges.flags.writeable = False

    @property
    def graph(self) -> nx.Graph:
        """The block graph as a :class:`networkx.Graph` (built on first access for matrices
        made by :meth:`from_scipy` without a graph)."""
        if self._graph is None:
            source = self._graph_source
            if source is not None:                  # random_block_matrix / from_blocks
                G = source.copy()
            else:
                G = nx.Graph()
                G.add_nodes_from(range(self.n_nodes))
                und = self.edges[self.edges[:, 0] < self.edges[:, 1]]
                G.add_edges_from(und.tolist())
            G.graph["zero_diagonal"] = self._zero_at_build
            self._graph = G
        return self._graph

    @graph.setter
    def graph(self, G: nx.Graph) -> None:
        self._graph = G

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_scipy(cls, S: sp.sparray | sp.spmatrix | np.ndarray,
                   block_sizes: Sequence[int] | int | None = None,
                   graph: nx.Graph | None = None) -> BlockMatrix:
        """Partition a square sparse (or dense) matrix into blocks.

        Parameters
        ----------
        S : scipy.sparse matrix/array or ndarray, shape (N, N)
            Real values (stored as float64). CSR and CSC are read in place; other formats
            are converted to CSR first.
        block_sizes : sequence of int (one per node, summing to N), int (equal blocks), or None
            None: the ``size`` attributes of ``graph``'s nodes if it has them all, else
            :func:`infer_block_sizes` (runs of consecutive rows with one sparsity pattern).
        graph : networkx.Graph, optional
            The block graph. If None it is inferred from the blocks holding a stored entry of
            ``S`` (stored zeros included, as SciPy and CHOLMOD treat them: they are structure
            that later values may fill; call ``S.eliminate_zeros()`` first to drop them). If
            given, every nonzero off-diagonal block must lie on an edge (stored zeros may lie
            anywhere).

        Raises
        ------
        ShapeError
            ``S`` not square, or block sizes not summing to N.
        PatternError
            A nonzero block ``(i, j)`` with ``(i, j)`` not an edge of ``graph``.
        DTypeError
            ``S`` is complex or not numeric (graphsolve computes in float64).
        """
        if not sp.issparse(S):
            S = np.asarray(S)
            _check_dtype(S.dtype, "S")
            if S.ndim != 2 or S.shape[0] != S.shape[1]:
                raise ShapeError(f"matrix must be square, got shape {S.shape}")
            S = sp.csr_array(S)
        if len(S.shape) != 2 or S.shape[0] != S.shape[1]:
            raise ShapeError(f"matrix must be square, got shape {S.shape}")
        _check_dtype(S.dtype, "S")
        N = S.shape[0]
        if block_sizes is None:
            given = None if graph is None else [d.get("size") for _, d in
                                                sorted(graph.nodes(data=True))]
            block_sizes = (given if given and None not in given
                           else infer_block_sizes(S).tolist())
        raw = np.atleast_1d(np.asarray(block_sizes))
        if raw.ndim != 1 or raw.size == 0 or raw.dtype == bool or not np.issubdtype(
                raw.dtype, np.number) or np.any(raw != np.round(raw)) or np.any(raw < 1):
            raise ShapeError(f"block sizes must be positive integers, got {block_sizes!r}")
        if isinstance(block_sizes, (int, np.integer)):
            b = int(block_sizes)
            if N % b:
                raise ShapeError(f"block size {block_sizes} does not divide N = {N}")
            sizes = np.full(N // b, b, dtype=np.int64)
        else:
            sizes = raw.astype(np.int64)
        if sizes.sum() != N:
            raise ShapeError(f"block sizes sum to {int(sizes.sum())} but the matrix has N = {N}")
        C: Any = S                                 # sparse from here on
        transposed = C.format == "csc"             # CSC arrays are the CSR arrays of S.T
        C = C if C.format in ("csr", "csc") else C.tocsr()
        if not C.has_canonical_format:             # duplicates must add up before the pattern
            C = C.copy()
            C.sum_duplicates()
        indptr, indices = C.indptr, C.indices
        vals = np.asarray(C.data, dtype=np.float64)
        n = sizes.size
        off = block_offsets(sizes)
        uniform = int(sizes[0]) if np.all(sizes == sizes[0]) else 0
        blk = (np.zeros(0, np.int64) if uniform
               else np.repeat(np.arange(n, dtype=np.int64), sizes))
        if graph is None:
            pi, pj = assembly.stored_block_pairs(indptr, indices, blk, off, uniform)
            e_indptr, e_indices = assembly.symmetric_block_pattern(n, pi, pj)
            del pi, pj
            directed = np.empty((e_indices.size, 2), np.int64)
            directed[:, 0] = np.repeat(np.arange(n, dtype=np.int64), np.diff(e_indptr))
            directed[:, 1] = e_indices
            A = object.__new__(cls)
            A._set_layout(sizes, directed, None)
            A._graph = None
            A._csr = (e_indptr, e_indices)
        else:
            if check_graph(graph) != n:
                raise ShapeError(f"{n} block sizes but the graph has {graph.number_of_nodes()} "
                                 "nodes")
            graph = graph.copy()
            for i, s in graph.nodes(data="size"):
                if s is not None and s != sizes[i]:
                    raise ShapeError(f"node {i} has size attribute {s} but block size {sizes[i]}")
            A = cls(graph, sizes)
            e_indptr, e_indices = A._edge_csr()
        mirror = A._transpose_edges() if transposed else np.zeros(0, np.int64)
        bi, bj = assembly.scatter_compressed(indptr, indices, vals, blk, off, sizes, A.diag_ptr,
                                             e_indptr, e_indices, A.edge_ptr, mirror,
                                             transposed, A.data, uniform)
        if bi >= 0:
            raise PatternError(f"nonzero block {(int(bi), int(bj))} lies outside the graph (no "
                               f"edge {bi}-{bj})", (int(bi), int(bj)))
        A._zero_at_build = A._zero_diagonal()
        if A._graph is not None:
            A._graph.graph["zero_diagonal"] = A._zero_at_build
        return A

    @classmethod
    def from_blocks(cls, graph: nx.Graph, diagonal: Sequence[np.ndarray] | Mapping | np.ndarray,
                    off_diagonal: Mapping[tuple[int, int], np.ndarray] | None = None
                    ) -> BlockMatrix:
        """Assemble a matrix from its blocks.

        The blocks are checked and written block shape by block shape (one stacked,
        vectorized write per shape); the off-diagonal positions are looked up all at once.

        Parameters
        ----------
        graph : networkx.Graph
            Nodes ``0..n-1``.
        diagonal : sequence or mapping of 2-D arrays, or ndarray of shape (n, s, s)
            Diagonal block of every node, shape ``(s_i, s_i)``; the block sizes are read from
            these shapes (and must agree with a node attribute ``size`` where present). A 3-D
            array gives ``n`` blocks of one size ``s`` and is written as it is.
        off_diagonal : mapping ``(i, j) -> array`` of shape ``(s_i, s_j)``, optional
            Blocks on edges. If only one direction of an edge is given, the other is its
            transpose (pass both for unsymmetric values); edges with no block are zero.

        Raises
        ------
        PatternError
            A block ``(i, j)`` whose nodes are not joined by an edge.
        ShapeError
            A non-square diagonal block or an off-diagonal block of the wrong shape.

        Of the keys of ``off_diagonal``, the first (in its order) that is off the graph or holds
        a block of the wrong shape is the one reported.
        """
        n = check_graph(graph)
        if isinstance(diagonal, np.ndarray) and diagonal.ndim == 3:
            stack = np.asarray(diagonal, dtype=float)
            if stack.shape[0] != n:
                raise ShapeError(f"{stack.shape[0]} diagonal blocks for a graph of {n} nodes")
            if stack.shape[1] != stack.shape[2]:
                raise ShapeError(f"diagonal block of node 0 is not square: shape "
                                 f"{stack.shape[1:]}")
            sizes = np.full(n, stack.shape[1], dtype=np.int64)
            diag = None
        else:
            diag = [diagonal[i] for i in range(n)] if isinstance(diagonal, Mapping) \
                else list(diagonal)
            if len(diag) != n:
                raise ShapeError(f"{len(diag)} diagonal blocks for a graph of {n} nodes")
            diag = [np.atleast_2d(np.asarray(d, dtype=float)) for d in diag]
            for i, d in enumerate(diag):
                if d.ndim != 2 or d.shape[0] != d.shape[1]:
                    raise ShapeError(f"diagonal block of node {i} is not square: shape "
                                     f"{d.shape}")
            sizes = np.array([d.shape[0] for d in diag], dtype=np.int64)
        attr = resolve_block_sizes(graph, sizes)
        if not np.array_equal(attr, sizes):
            i = int(np.flatnonzero(attr != sizes)[0])
            raise ShapeError(f"node {i}: size attribute {attr[i]} but diagonal block {sizes[i]}")

        # off-diagonal blocks: positions looked up at once, then the first bad key reported
        given = dict(off_diagonal or {})
        keys = [(i, j) for i, j in given]
        blocks = [np.asarray(b, dtype=float) for b in given.values()]
        rows, cols = _node_ids([i for i, _ in keys], n), _node_ids([j for _, j in keys], n)
        A = cls._on_copy_of(graph, sizes)
        target = rows * n + cols
        k = np.searchsorted(A._edge_keys, target)            # directed edge index of each key
        found = k < A._edge_keys.size
        found[found] = A._edge_keys[k[found]] == target[found]
        on_edge = found & (rows >= 0) & (cols >= 0)          # a -1 could alias another key
        shapes = np.array([b.shape if b.ndim == 2 else (-1, -1) for b in blocks],
                          dtype=np.int64).reshape(-1, 2)
        expected = np.stack([sizes[np.maximum(rows, 0)], sizes[np.maximum(cols, 0)]], axis=1)
        bad = np.flatnonzero(~on_edge | np.any(shapes != expected, axis=1))
        if bad.size:
            t = int(bad[0])
            i, j = keys[t]
            if not on_edge[t]:
                raise PatternError(f"block ({i}, {j}) is not on an edge of the graph", (i, j))
            raise ShapeError(f"block ({i}, {j}) has shape {blocks[t].shape}, expected "
                             f"({sizes[rows[t]]}, {sizes[cols[t]]})")

        if diag is None:
            _put_blocks(A.data, A.diag_ptr[:-1], stack)
        else:
            for _, nodes in _groups(sizes):
                _put_blocks(A.data, A.diag_ptr[nodes], np.stack([diag[i] for i in nodes]))
        rev = A._transpose_edges()
        have = np.zeros(A.edges.shape[0], dtype=bool)
        have[k] = True
        for _, pos in _groups(sizes[rows] * (int(sizes.max()) + 1) + sizes[cols]):
            stack_ij = np.stack([blocks[t] for t in pos])
            _put_blocks(A.data, A.edge_ptr[k[pos]], stack_ij)
            alone = ~have[rev[k[pos]]]               # (j, i) not given: the transpose
            _put_blocks(A.data, A.edge_ptr[rev[k[pos[alone]]]],
                        stack_ij[alone].transpose(0, 2, 1))
        return A._built()

    # ------------------------------------------------------------------ access
    @property
    def n_nodes(self) -> int:
        return int(self.block_sizes.size)

    def edge_index(self, i: int, j: int) -> int:
        """Index of the directed edge ``(i, j)`` in :attr:`edges`; PatternError if absent."""
        key = i * self.n_nodes + j
        k = int(np.searchsorted(self._edge_keys, key))
        if k == self._edge_keys.size or self._edge_keys[k] != key:
            raise PatternError(f"block ({i}, {j}) is not on an edge of the graph", (i, j))
        return k

    def block(self, i: int, j: int) -> np.ndarray:
        """A writable view of block ``(i, j)``, shape ``(s_i, s_j)``."""
        si, sj = int(self.block_sizes[i]), int(self.block_sizes[j])
        if i == j:
            start = self.diag_ptr[i]
        else:
            start = self.edge_ptr[self.edge_index(i, j)]
        return self.data[start:start + si * sj].reshape(si, sj)

    def copy(self) -> BlockMatrix:
        """A copy of the values (the layout arrays, never written, are shared)."""
        return self._like(self.data.copy(), None if self._graph is None else self._graph.copy())

    def with_data(self, data: np.ndarray) -> BlockMatrix:
        """A matrix on the same graph and layout holding ``data`` (not copied if float64).

        Raises
        ------
        ShapeError
            ``data`` does not have the shape of :attr:`data`.
        DTypeError
            ``data`` is complex or not numeric.
        """
        return self._like(data, None if self._graph is None else self._graph.copy())

    # ------------------------------------------------------------------ conversion
    def entry_coordinates(self) -> tuple[np.ndarray, np.ndarray]:
        """Global ``(rows, cols)`` of every entry of :attr:`data` (int64 arrays of its length):
        ``data[k]`` is the matrix entry ``(rows[k], cols[k])``. For code that writes values
        into ``data`` in place (see :mod:`graphsolve.lowlevel`)."""
        return self._entry_coordinates()

    def _entry_coordinates(self) -> tuple[np.ndarray, np.ndarray]:
        """Global (row, col) of every entry of :attr:`data`, vectorized."""
        n = self.n_nodes
        brow = np.concatenate([np.arange(n), self.edges[:, 0]])
        bcol = np.concatenate([np.arange(n), self.edges[:, 1]])
        s, off = self.block_sizes, self.offsets
        return block_coordinates(off[brow], off[bcol], s[brow], s[bcol])

    def to_scipy(self) -> sp.csr_array:
        """The matrix as ``scipy.sparse.csr_array`` (stored zeros of blocks dropped)."""
        rows, cols = self._entry_coordinates()
        nz = self.data != 0
        return sp.csr_array((self.data[nz], (rows[nz], cols[nz])), shape=self.shape)

    def to_dense(self) -> np.ndarray:
        """The matrix as a dense ``ndarray``."""
        out = np.zeros(self.shape)
        rows, cols = self._entry_coordinates()
        out[rows, cols] = self.data
        return out

    def _edge_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The directed edges as CSR ``(indptr, indices)`` (made once, shared by copies)."""
        csr = self.__dict__.get("_csr")
        if csr is None:
            csr = self._csr = csr_of_sorted_pairs(self.n_nodes, self.edges)
        return csr

    def _transpose_edges(self) -> np.ndarray:
        """``rev`` with ``edges[rev[e]] == edges[e][::-1]`` (made once, shared by copies)."""
        rev = self.__dict__.get("_rev")
        if rev is None:
            rev = self._rev = assembly.mirror_edges(*self._edge_csr())
            rev.flags.writeable = False
        return rev

    def transpose_index(self) -> np.ndarray:
        """``t`` with ``data[t]`` the flat data of the transposed matrix (same layout).

        Block by block, no sort: entry ``(r, c)`` of block ``(i, j)`` is entry ``(c, r)`` of
        block ``(j, i)``, which starts at that block's offset (O(entries))."""
        n, s = self.n_nodes, self.block_sizes
        brow = np.concatenate([np.arange(n), self.edges[:, 0]])
        bcol = np.concatenate([np.arange(n), self.edges[:, 1]])
        own = np.concatenate([self.diag_ptr[:-1], self.edge_ptr[:-1]])
        mirror = np.concatenate([self.diag_ptr[:-1], self.edge_ptr[:-1][self._transpose_edges()]])
        nr, nc = s[brow], s[bcol]
        bid = np.repeat(np.arange(brow.size), nr * nc)
        local = np.arange(self.data.size) - own[bid]
        r, c = np.divmod(local, nc[bid])
        return mirror[bid] + c * nr[bid] + r

    def is_symmetric(self, rtol: float = 0.0) -> bool:
        """True if ``A == A.T`` up to ``rtol * max|A|`` (exactly, by default)."""
        d = self.data
        scale = np.max(np.abs(d)) if d.size else 0.0
        s = self.block_sizes
        if s.size and np.all(s == s[0]):           # equal blocks: compare stacked transposes
            k = int(s[0])
            D = d[: self.diag_ptr[-1]].reshape(-1, k, k)
            E = d[self.diag_ptr[-1]:].reshape(-1, k, k)
            tol = rtol * scale
            return bool(np.all(np.abs(D - D.transpose(0, 2, 1)) <= tol) and np.all(
                np.abs(E - E[self._transpose_edges()].transpose(0, 2, 1)) <= tol))
        return bool(np.all(np.abs(d - d[self.transpose_index()]) <= rtol * scale))

    def check_finite(self) -> None:
        """Raise :class:`NonFiniteError` naming the first block holding NaN or inf."""
        bad = np.flatnonzero(~np.isfinite(self.data))
        if bad.size:
            k = int(bad[0])
            if k < self.diag_ptr[-1]:
                i = int(np.searchsorted(self.diag_ptr, k, side="right") - 1)
                blk: tuple[int, ...] = (i, i)
            else:
                e = int(np.searchsorted(self.edge_ptr, k, side="right") - 1)
                blk = tuple(int(v) for v in self.edges[e])
            raise NonFiniteError(f"matrix block {blk} contains {self.data[k]} (NaN/inf)")

    def __repr__(self) -> str:
        return (f"BlockMatrix(n_nodes={self.n_nodes}, edges={len(self.edges) // 2}, "
                f"shape={self.shape})")

    # ------------------------------------------------------------------ internals
    def zero_diagonal(self) -> frozenset[int]:
        """Nodes whose diagonal block is zero now, or whose role is ``"constraint"``."""
        return frozenset(self._zero_diagonal())

    def _zero_diagonal(self) -> tuple[int, ...]:
        zero = {int(i) for i in np.flatnonzero(assembly.zero_blocks(self.data, self.diag_ptr))}
        if self._graph is not None:
            zero.update(i for i, r in self._graph.nodes(data="role") if r == "constraint")
        return tuple(sorted(zero))

    def _scatter(self, bi: np.ndarray, bj: np.ndarray, li: np.ndarray, lj: np.ndarray,
                 vals: np.ndarray) -> None:
        """Write entries given by block and local coordinates into :attr:`data`."""
        s = self.block_sizes
        diag = bi == bj
        self.data[self.diag_ptr[bi[diag]] + li[diag] * s[bi[diag]] + lj[diag]] = vals[diag]
        oi, oj = bi[~diag], bj[~diag]
        keys = oi * self.n_nodes + oj
        k = np.searchsorted(self._edge_keys, keys)
        k_clip = np.minimum(k, max(self._edge_keys.size - 1, 0))
        missing = (k == self._edge_keys.size) | (self._edge_keys[k_clip] != keys) \
            if self._edge_keys.size else np.ones(keys.size, bool)
        if np.any(missing):
            t = int(np.flatnonzero(missing)[0])
            blk = (int(oi[t]), int(oj[t]))
            raise PatternError(f"nonzero block {blk} lies outside the graph (no edge "
                               f"{blk[0]}-{blk[1]})", blk)
        self.data[self.edge_ptr[k] + li[~diag] * s[oj] + lj[~diag]] = vals[~diag]


def infer_block_sizes(S: sp.sparray | sp.spmatrix | np.ndarray) -> np.ndarray:
    """Block sizes of a square sparse (or dense) matrix: maximal runs of consecutive rows whose
    sparsity patterns in ``S + Sᵀ + I`` are identical (*supervariables*).

    A matrix assembled from dense ``s × s`` blocks on a graph (finite elements with ``s``
    unknowns per node, rigid bodies with 6) is found to have those blocks, or coarser ones
    where neighbouring nodes happen to share their neighbours; a matrix without block
    structure gets blocks of size 1, on which graphsolve still works (with scalar speed).
    Stored entries count, zeros included. O(nnz), no Python loop per row.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, graphsolve as gs
    >>> S = sp.kron(sp.diags([1.0, 4.0, 1.0], [-1, 0, 1], shape=(4, 4)), np.ones((3, 3)))
    >>> gs.matrix.infer_block_sizes(S).tolist()
    [3, 3, 3, 3]
    """
    S = sp.csr_array(S)
    N = S.shape[0]
    if N == 0:
        return np.zeros(0, np.int64)
    P = abs(S) + abs(S).T + sp.csr_array(sp.identity(N, format="csr"))  # eye_array: SciPy ≥ 1.12
    P = sp.csr_array((np.ones(P.nnz), P.indices, P.indptr), shape=(N, N))
    P.sort_indices()
    indptr, indices = P.indptr.astype(np.int64), P.indices.astype(np.int64)
    length = np.diff(indptr)
    same = length[:-1] == length[1:]               # row r vs row r + 1: same length first,
    rows = np.repeat(np.arange(N - 1), length[:-1])  # then entry by entry
    entry = np.arange(indptr[N - 1])
    cand = same[rows]
    differs = np.zeros(N - 1, bool)
    e = entry[cand]
    differs[rows[cand][indices[e] != indices[e + length[rows[e]]]]] = True
    starts = np.flatnonzero(np.concatenate([[True], ~same | differs]))
    return np.diff(np.append(starts, N)).astype(np.int64)


def _check_dtype(dtype: np.dtype, what: str) -> None:
    """Refuse what graphsolve cannot compute in float64 without losing information."""
    if np.issubdtype(dtype, np.complexfloating):
        raise DTypeError(f"{what} is complex ({dtype}); graphsolve factors real matrices only "
                         "(float64): split into real and imaginary parts or use scipy.sparse."
                         "linalg.splu")
    if not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer)
            or dtype == np.bool_):
        raise DTypeError(f"{what} has dtype {dtype}; expected real numbers")


def _as_float64(a: Any, what: str) -> np.ndarray:
    """``a`` as a float64 array (no copy if it already is one); DTypeError if complex."""
    a = np.asarray(a)
    _check_dtype(a.dtype, what)
    return a if a.dtype == np.float64 else a.astype(np.float64)


# ---------------------------------------------------------------------- random matrices
def random_block_matrix(G: nx.Graph, kind: str = "spd", block_size: int = 6,
                        seed: int | np.integer | np.random.Generator | None = 0
                        ) -> BlockMatrix:
    """A random, well-conditioned matrix on the graph ``G``.

    Parameters
    ----------
    G : networkx.Graph
        Nodes ``0..n-1``; node attribute ``size`` overrides ``block_size``.
    kind : {"spd", "kkt", "unsymmetric"}
        ``"spd"``: symmetric positive definite, block diagonally dominant: Gaussian block
        ``B`` on ``(i, j)`` and ``Bᵀ`` on ``(j, i)`` for every edge ``i < j``, diagonal block
        ``R Rᵀ / s_i + (r_i + 1) I`` with ``R`` Gaussian and ``r_i`` the sum of the spectral
        norms of node ``i``'s off-diagonal blocks.
        ``"unsymmetric"``: symmetric pattern, independent Gaussian blocks on ``(i, j)`` and
        ``(j, i)``, diagonal block ``R + (max(r_i, c_i) + ‖R‖₂ + 1) I`` with ``r_i`` (``c_i``)
        the sum of the spectral norms of the off-diagonal blocks in block row (column) ``i``:
        block diagonally dominant by rows and columns, so block elimination in any order is
        stable without pivoting.
        ``"kkt"``: Baraff's quasi-definite matrix ``[[M, Jᵀ], [J, 0]]`` (Baraff 1996, eq. 8) on a
        graph with node attribute ``role``: body nodes carry SPD mass blocks ``R Rᵀ / s + I``,
        constraint nodes zero blocks, every edge joins a body to a constraint and carries a
        Gaussian Jacobian block ``J`` on ``(constraint, body)`` (full rank with probability
        one) and ``Jᵀ`` on ``(body, constraint)``.
    block_size : int
    seed : int, None or numpy.random.Generator
        The values are a deterministic function of the seed (and of the graph and sizes):
        the off-diagonal blocks are drawn first, one stack per block shape in increasing
        ``(s_i, s_j)``, edges in ``(i, j)`` order within a shape, then the diagonal blocks the
        same way by size.

    Raises
    ------
    GraphError
        ``kind="kkt"`` on a graph without roles, or with an edge not joining body and constraint.
    ValueError
        Unknown ``kind``.

    Notes
    -----
    ``A.graph`` is a copy of ``G`` (node attributes included) made on its first access, not
    up front: copying a networkx graph of 10⁶ nodes takes seconds that analysis and
    factorization never need. Do not modify ``G`` before reading ``A.graph`` if you need the
    two to differ.

    No Python loop per block: blocks of one shape are drawn as one ``(count, s_i, s_j)`` stack,
    their spectral norms computed batched (``numpy.linalg.eigvalsh`` of the Gram matrices), the
    row and column sums accumulated with ``numpy.bincount``, and the stacks written straight
    into the flat buffer :attr:`BlockMatrix.data`.

    Examples
    --------
    >>> import graphsolve as gs
    >>> A = gs.random_block_matrix(gs.generators.path(4), "spd", block_size=2, seed=1)
    >>> A.shape, A.is_symmetric()
    ((8, 8), True)
    """
    n = check_graph(G)
    sizes = _resolve_block_sizes(G, n, block_size)
    if kind not in ("spd", "kkt", "unsymmetric"):
        raise ValueError(f'unknown kind {kind!r}; expected "spd", "kkt" or "unsymmetric"')
    rng = np.random.default_rng(seed)
    A = BlockMatrix._on_copy_of(G, sizes)
    edges = A.edges
    rev = A._transpose_edges()
    upper = np.flatnonzero(edges[:, 0] < edges[:, 1])   # every graph edge once, (i, j) order
    if kind == "kkt":
        constraint = _kkt_constraints(G, n)
        same = constraint[edges[upper, 0]] == constraint[edges[upper, 1]]
        if np.any(same):
            i, j = (int(v) for v in edges[upper[np.argmax(same)]])
            role = "constraint" if constraint[i] else "body"
            raise GraphError(f'kind="kkt": edge ({i}, {j}) joins two {role} nodes; '
                             "every edge must join a body to a constraint")
        _random_edge_blocks(A, rng, np.flatnonzero(constraint[edges[:, 0]]), rev)  # J on (c, b)
        bodies = np.flatnonzero(~constraint)
        for s, pos in _groups(sizes[bodies]):
            _put_blocks(A.data, A.diag_ptr[bodies[pos]],
                        _random_spd_blocks(rng, pos.size, s, np.ones(pos.size)))
    elif kind == "spd":
        norms = _random_edge_blocks(A, rng, upper, rev)
        row_sum = (np.bincount(edges[upper, 0], norms, minlength=n)
                   + np.bincount(edges[upper, 1], norms, minlength=n))
        for s, nodes in _groups(sizes):
            _put_blocks(A.data, A.diag_ptr[nodes],
                        _random_spd_blocks(rng, nodes.size, s, row_sum[nodes] + 1.0))
    else:
        norms = _random_edge_blocks(A, rng, np.arange(edges.shape[0]), None)
        row_sum = np.bincount(edges[:, 0], norms, minlength=n)
        col_sum = np.bincount(edges[:, 1], norms, minlength=n)
        for s, nodes in _groups(sizes):
            R = rng.standard_normal((nodes.size, s, s))
            shift = np.maximum(row_sum[nodes], col_sum[nodes]) + _spectral_norms(R) + 1.0
            R[:, np.arange(s), np.arange(s)] += shift[:, None]     # R + shift I
            _put_blocks(A.data, A.diag_ptr[nodes], R)
    return A._built()


def _kkt_constraints(G: nx.Graph, n: int) -> np.ndarray:
    """Per node, True if its ``role`` is ``"constraint"``; GraphError unless every node of the
    block graph ``G`` (``n`` nodes) is a body or a constraint."""
    roles = dict(G.nodes(data="role"))
    role = [roles[i] for i in range(n)]
    missing = [i for i, r in enumerate(role) if r not in ("body", "constraint")]
    if missing:
        raise GraphError(
            f'kind="kkt" needs node attribute role="body"/"constraint" on every node; node '
            f"{missing[0]} has {role[missing[0]]!r} (build the graph with "
            "graphsolve.generators.constraint_graph)")
    return np.array([r == "constraint" for r in role], dtype=bool)


def _random_edge_blocks(A: BlockMatrix, rng: np.random.Generator, chosen: np.ndarray,
                        rev: np.ndarray | None) -> np.ndarray:
    """Draw a Gaussian block on each directed edge ``A.edges[chosen]`` and write it into
    ``A.data``; with ``rev`` (:meth:`BlockMatrix._transpose_edges`) also write its transpose on
    the reversed edge. One stack per block shape, shapes in increasing ``(s_i, s_j)``. Returns
    the spectral norm of every drawn block, aligned with ``chosen``."""
    s = A.block_sizes
    r, c = s[A.edges[chosen, 0]], s[A.edges[chosen, 1]]
    norms = np.empty(chosen.size)
    for _, pos in _groups(r * (int(s.max()) + 1) + c):
        e = chosen[pos]
        B = rng.standard_normal((pos.size, int(r[pos[0]]), int(c[pos[0]])))
        _put_blocks(A.data, A.edge_ptr[e], B)
        if rev is not None:
            _put_blocks(A.data, A.edge_ptr[rev[e]], B.transpose(0, 2, 1))
        norms[pos] = _spectral_norms(B)
    return norms


def _random_spd_blocks(rng: np.random.Generator, count: int, s: int, shift: np.ndarray
                       ) -> np.ndarray:
    """``count`` blocks ``R Rᵀ / s + shift[t] I`` with Gaussian ``R`` (exactly symmetric)."""
    R = rng.standard_normal((count, s, s))
    D = R @ R.transpose(0, 2, 1)
    del R
    r, c = np.triu_indices(s, 1)
    D[:, c, r] = D[:, r, c]                 # exactly symmetric, whatever matmul rounds
    D /= s
    D[:, np.arange(s), np.arange(s)] += shift[:, None]
    return D


def _spectral_norms(B: np.ndarray) -> np.ndarray:
    """``‖B[t]‖₂`` of every block of the stack ``B``: the square root of the largest eigenvalue
    of the smaller Gram matrix ``B Bᵀ`` or ``Bᵀ B`` (batched ``eigvalsh``, a quarter faster
    than a batched SVD and equal to it to rounding)."""
    Bt = B.transpose(0, 2, 1)
    gram = B @ Bt if B.shape[1] <= B.shape[2] else Bt @ B
    return np.sqrt(np.maximum(np.linalg.eigvalsh(gram)[:, -1], 0.0))


def _groups(keys: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """``(value, positions)`` for every distinct value of the integer array ``keys``, values
    increasing, positions increasing within a group (no sort when all keys are equal)."""
    if keys.size == 0:
        return []
    if np.all(keys == keys[0]):
        return [(int(keys[0]), np.arange(keys.size))]
    order = np.argsort(keys, kind="stable")
    cuts = np.flatnonzero(np.diff(keys[order])) + 1
    return [(int(keys[g[0]]), g) for g in np.split(order, cuts)]


_CHUNK = 1 << 20          # entries per indexed write in _put_blocks (bounds its index array)


def _put_blocks(data: np.ndarray, starts: np.ndarray, blocks: np.ndarray) -> None:
    """Write the stack ``blocks`` (``count`` blocks of shape ``(a, b)``) into the flat buffer,
    block ``t`` row-major at ``data[starts[t]:starts[t] + a * b]``.

    When every start lies on a grid of step ``a * b`` from the first (always so when all blocks
    of the buffer have this size) this is one row-indexed assignment into a ``(rows, a, b)``
    view of ``data``; otherwise element indices are written in chunks of about ``_CHUNK``."""
    count, a, b = blocks.shape
    k = a * b
    if count == 0 or k == 0:
        return
    base = int(starts.min())
    rel = starts - base
    if not np.any(rel % k):
        rows = rel // k
        data[base:base + (int(rows.max()) + 1) * k].reshape(-1, a, b)[rows] = blocks
        return
    step = max(1, _CHUNK // k)
    local = np.arange(k)
    for c in range(0, count, step):
        data[starts[c:c + step, None] + local] = blocks[c:c + step].reshape(-1, k)


def _node_ids(values: list, n: int) -> np.ndarray:
    """``values`` as ``int64`` node ids, ``-1`` where a value is not an integer in ``0..n-1``."""
    ids = np.asarray(values)
    if ids.ndim != 1 or ids.dtype.kind not in "biu":    # mixed or non-integer labels
        ids = np.array([v if isinstance(v, (int, np.integer)) and 0 <= v < n else -1
                        for v in values], dtype=np.int64)
    ids = ids.astype(np.int64)
    ids[(ids < 0) | (ids >= n)] = -1
    return ids
