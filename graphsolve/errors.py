"""Exceptions and warnings raised by graphsolve.

Every error derives from :class:`GraphSolveError`, itself a :class:`ValueError`, so callers can
catch one type. Messages name the offending node, block or argument and the shapes involved.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "GraphSolveError",
    "GraphError",
    "ShapeError",
    "DTypeError",
    "NonFiniteError",
    "PatternError",
    "SingularBlockError",
    "BatchIndexError",
    "GraphSolveWarning",
]


class GraphSolveError(ValueError):
    """Root of all graphsolve errors."""


class GraphError(GraphSolveError):
    """The graph itself is unusable: empty, wrong node labels, missing roles, self loops."""


class ShapeError(GraphSolveError):
    """An array or block has the wrong shape (non-square block, sizes not summing to N, b)."""


class DTypeError(GraphSolveError, TypeError):
    """An array's dtype cannot be computed in float64 without loss (complex, object, str)."""


class NonFiniteError(GraphSolveError):
    """A matrix or right-hand side contains NaN or infinity."""


class PatternError(GraphSolveError):
    """A nonzero block lies outside the graph / the analysed pattern.

    Attributes
    ----------
    block : tuple[int, int] or None
        The offending block ``(row_node, col_node)``.
    """

    def __init__(self, message: str, block: tuple[int, int] | None = None):
        super().__init__(message)
        self.block = block


class SingularBlockError(GraphSolveError, np.linalg.LinAlgError):
    """A pivot block is singular or numerically singular.

    Attributes
    ----------
    node : int
        The graph node whose pivot block failed.
    constraint : int or None
        Set by :class:`~graphsolve.ConstraintSystem`: the constraint that made the pivot
        singular (None for a body's pivot or outside constraint systems).
    """

    def __init__(self, message: str, node: int | None = None):
        super().__init__(message)
        self.node = node
        self.constraint: int | None = None


class BatchIndexError(GraphSolveError, IndexError):
    """An item index outside a batch (:meth:`graphsolve.BatchFactorization.item`); also an
    :class:`IndexError`, as ``batch[k]`` is."""


class GraphSolveWarning(UserWarning):
    """Base class of graphsolve warnings."""
