"""Block graphs: validation, block sizes and the roles of nodes.

A *block graph* is an undirected :class:`networkx.Graph` whose nodes are the integers ``0..n-1``.
Node ``i`` owns the ``i``-th diagonal block of a matrix (``size`` rows and columns), and an edge
``(i, j)`` allows the two off-diagonal blocks ``(i, j)`` and ``(j, i)`` to be nonzero. Mechanism
graphs also carry a node attribute ``role`` (``"body"`` or ``"constraint"``); constraint nodes
have a zero diagonal block in Baraff's KKT matrix (Baraff 1996, eq. 8).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias, cast

import networkx as nx
import numpy as np

from .errors import GraphError, ShapeError

__all__ = [
    "check_graph",
    "resolve_block_sizes",
    "block_offsets",
    "zero_diagonal_nodes",
]


#: Block sizes as the API takes them: one size for every node, a sequence indexed by node, a
#: mapping ``{node: size}``, or None (node ``size`` attributes, else a default).
BlockSizes: TypeAlias = "int | Iterable[int] | Mapping[int, int] | None"


def check_graph(G: nx.Graph) -> int:
    """Validate a block graph and return its number of nodes.

    Raises
    ------
    GraphError
        If ``G`` is not an undirected simple graph, is empty, has self loops, or its nodes are not
        exactly the integers ``0..n-1``.
    """
    if not isinstance(G, nx.Graph) or G.is_directed() or G.is_multigraph():
        raise GraphError(
            f"expected an undirected networkx.Graph, got {type(G).__name__}"
            + (" (directed)" if isinstance(G, nx.Graph) and G.is_directed() else "")
        )
    n = G.number_of_nodes()
    if n == 0:
        raise GraphError("the graph is empty: a block graph needs at least one node")
    nodes = set(G.nodes)
    if nodes != set(range(n)):
        bad = sorted((v for v in nodes if not (isinstance(v, (int, np.integer)) and 0 <= v < n)),
                     key=repr)[:3]
        raise GraphError(
            f"graph nodes must be the integers 0..{n - 1}; found {bad!r}; relabel with "
            "networkx.convert_node_labels_to_integers(G)"
        )
    loops = list(nx.selfloop_edges(G))
    if loops:
        raise GraphError(f"self loop on node {loops[0][0]}: diagonal blocks are implicit")
    return n


def resolve_block_sizes(G: nx.Graph, block_sizes: BlockSizes = None, default: int = 1
                        ) -> np.ndarray:
    """Return the block size of every node as an ``int64`` array of length ``n``.

    Node attribute ``size`` wins; otherwise ``block_sizes`` (an int for all nodes, a sequence
    indexed by node, or a mapping); otherwise ``default``.

    Raises
    ------
    ShapeError
        If a size is not a positive integer or a sequence has the wrong length.
    """
    return _resolve_block_sizes(G, check_graph(G), block_sizes, default)


def _resolve_block_sizes(G: nx.Graph, n: int, block_sizes: BlockSizes, default: int = 1
                         ) -> np.ndarray:
    """:func:`resolve_block_sizes` of a graph already checked (``n`` nodes)."""
    if block_sizes is None:
        sizes = np.full(n, default, dtype=np.int64)
    elif np.isscalar(block_sizes):
        sizes = np.full(n, _positive_int(block_sizes, "block_sizes"), dtype=np.int64)
    elif isinstance(block_sizes, Mapping):
        sizes = np.array([block_sizes.get(i, default) for i in range(n)], dtype=np.int64)
    else:
        arr = np.asarray(list(cast(Iterable[int], block_sizes)))     # not a scalar
        if arr.shape != (n,):
            raise ShapeError(f"block_sizes has {arr.size} entries but the graph has {n} nodes")
        sizes = arr.astype(np.int64)
        if not np.array_equal(sizes, arr):
            raise ShapeError(f"block_sizes must be integers, got {arr!r}")
    for i, s in G.nodes(data="size"):
        if s is not None:
            sizes[i] = _positive_int(s, f"size of node {i}")
    bad = np.flatnonzero(sizes < 1)
    if bad.size:
        raise ShapeError(f"block size of node {int(bad[0])} is {int(sizes[bad[0]])}; must be >= 1")
    return sizes


def block_offsets(block_sizes: np.ndarray) -> np.ndarray:
    """Row offsets of the blocks: ``offsets[i]:offsets[i+1]`` are the rows of node ``i``."""
    off = np.zeros(len(block_sizes) + 1, dtype=np.int64)
    np.cumsum(block_sizes, out=off[1:])
    return off


def zero_diagonal_nodes(G: nx.Graph) -> frozenset[int]:
    """Nodes whose diagonal block is structurally zero: ``role == "constraint"`` or the graph
    attribute ``zero_diagonal`` (set by :class:`~graphsolve.BlockMatrix` from its pattern)."""
    marked = set(G.graph.get("zero_diagonal", ()))
    marked.update(i for i, r in G.nodes(data="role") if r == "constraint")
    return frozenset(marked)


def _positive_int(value: Any, what: str) -> int:
    try:
        iv = int(value)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be a positive integer, got {value!r}") from None
    if iv != value or iv < 1:
        raise ShapeError(f"{what} must be a positive integer, got {value!r}")
    return iv
