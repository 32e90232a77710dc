"""graphsolve: sparse block LDU / LDLᵀ factorization in the order of a graph.

A matrix whose nonzero blocks follow a graph (one dense block per node, off-diagonal blocks on
edges) is factored leaves-to-root: with zero fill and O(n) work on trees (Baraff 1996;
Brüdigam & Manchester 2020), with Brüdigam et al.'s reduced fill on graphs with cycles (2023).

Two levels of API::

    x = gs.solve(A, b)                                  # quick path
    an = gs.analyze(A.graph); F = gs.factorize(A, analysis=an); F.refactor(A2); F.solve(b)
"""

from importlib import metadata as _metadata

from . import dense, distributed, generators
from .analysis import Analysis, analyze
from .batch import BatchFactorization, factorize_batch
from .constraints import ConstraintSolution, ConstraintSystem, InfeasibleConstraintsError
from .errors import (
    BatchIndexError,
    DTypeError,
    GraphError,
    GraphSolveError,
    GraphSolveWarning,
    NonFiniteError,
    PatternError,
    ShapeError,
    SingularBlockError,
)
from .factor import Factorization, allocate, factorize, factorized, solve
from .matrix import BlockMatrix, random_block_matrix
from .ordering import ORDERINGS

# The version is written once, in pyproject.toml; the installed package's metadata carries it.
try:
    __version__ = _metadata.version("graphsolve")
except _metadata.PackageNotFoundError:  # pragma: no cover - a source tree never installed
    __version__ = "0+unknown"

__all__ = [
    "Analysis",
    "BatchFactorization",
    "BatchIndexError",
    "BlockMatrix",
    "ConstraintSolution",
    "ConstraintSystem",
    "DTypeError",
    "Factorization",
    "GraphError",
    "GraphSolveError",
    "GraphSolveWarning",
    "InfeasibleConstraintsError",
    "NonFiniteError",
    "ORDERINGS",
    "PatternError",
    "ShapeError",
    "SingularBlockError",
    "analyze",
    "dense",
    "distributed",
    "allocate",
    "factorize",
    "factorize_batch",
    "factorized",
    "generators",
    "random_block_matrix",
    "solve",
]
