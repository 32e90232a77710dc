"""The backend protocol: what a numeric backend provides, and how one is registered.

A *backend* does the numeric phase on the flat buffers that an :class:`~graphsolve.Analysis`
lays out; the Python classes (:class:`~graphsolve.Factorization`,
:class:`~graphsolve.BatchFactorization`) only allocate the buffers, pick the backend by name
(``backend="reference" | "compiled" | "auto"`` or a registered name) and call it through
this interface. Two backends ship: ``reference`` (readable NumPy following the papers'
pseudocode, :mod:`graphsolve.kernels.reference`) and ``compiled`` (the same algorithm in
numba, :mod:`graphsolve.kernels.compiled`); a test runs every numeric test on both.

Buffers (all float64 unless said, laid out by the analysis ``an``):

* ``D``, ``Dlu``: pivot blocks and their factors, ``an.d_ptr`` offsets (row-major blocks).
  For LDLᵀ of a pattern without update triples (trees) :class:`~graphsolve.Factorization`
  passes the ``compiled`` backend one buffer as both (pivots factored in place, a third fewer
  pages); such a pivot that is not definite reports failure, and the factorization then
  allocates ``D`` and runs again. Other backends always get two buffers;
* ``piv``: int32, one row-swap index per scalar row (LAPACK ``getrf`` convention; ``-1`` at a
  block's first row marks a definite LDLᵀ pivot factored as ``M Δ Mᵀ``);
* ``L``, ``U``: one block per factor pair ``e`` at ``an.fe_ptr[e]`` (``L`` block
  ``s_parent × s_child``, ``U`` block ``s_child × s_parent``; LDLᵀ leaves ``U`` unused);
* batched calls put a leading batch axis on every buffer.

Optional query (:class:`~graphsolve.Factorization` calls it when a backend has it):
``writes_upper(an, symmetric, work) -> bool``, whether the first factorization writes ``U``
(its pages are then made up front; without the query: for LDU only).

A status is :class:`Status` ``OK`` (-1), ``NONFINITE`` (-2, fused entry point only) or the
elimination position (``>= 0``) of the first singular pivot block.
"""

from __future__ import annotations

import enum
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Backend", "Status", "REQUIRED", "register_backend", "check_backend"]


class Status(enum.IntEnum):
    """Return codes of the numeric kernels (values ``>= 0`` are singular pivot positions)."""

    OK = -1
    NONFINITE = -2


@runtime_checkable
class Backend(Protocol):
    """The functions a backend module (or object) provides. ``an`` is an
    :class:`~graphsolve.Analysis`, ``symmetric`` selects LDLᵀ (``True``) or LDU."""

    def work_buffers(self, an) -> Any:
        """Scratch the backend wants per factorization (allocated once; ``None`` if none)."""

    def refactor(self, an, values: np.ndarray, gmap, D, Dlu, piv, L, U, symmetric: bool,
                 work=None, rtol: float = ...) -> tuple[int, dict, bool, bool]:
        """Load a matrix's flat values through the :class:`~graphsolve.factor.GatherMap`
        ``gmap`` into ``D``/``L``/``U`` (fill blocks zero) and factor them in place.
        Returns ``(status, block_op_counts, finite, exactly_symmetric)``; when ``finite`` is
        False nothing needs to be factored (the caller raises)."""

    def factor(self, an, D, Dlu, piv, L, U, symmetric: bool, work=None, rtol: float = ...
               ) -> tuple[int, dict]:
        """Factor buffers already loaded: ``(status, block_op_counts)``."""

    def solve(self, an, Dlu, piv, L, U, x: np.ndarray, symmetric: bool) -> bool:
        """Solve ``A x = b`` in place (``x`` holds ``b``, shape ``(N,)`` or ``(N, k)``);
        False if ``x`` holds NaN or inf."""

    def factor_batch(self, an, D, Dlu, piv, L, U, symmetric: bool, work=None,
                     rtol: float = ...) -> tuple[np.ndarray, dict]:
        """:meth:`factor` for every item of batched buffers, each with the singularity rule
        ``rtol`` (passed by keyword): ``(status per item, counts)``. Every item is factored
        (a singular item does not stop the others); the buffers of a failed item hold no
        usable factor."""

    def solve_batch(self, an, Dlu, piv, L, U, x: np.ndarray, symmetric: bool) -> None:
        """:meth:`solve` for every item; ``x`` C-contiguous ``(B, N, k)``."""

    def all_finite(self, x: np.ndarray) -> bool:
        """Whether every entry of ``x`` is finite."""


#: The names every backend must provide (the methods of :class:`Backend`).
REQUIRED = ("work_buffers", "refactor", "factor", "solve", "factor_batch", "solve_batch",
            "all_finite")


def check_backend(name: str, backend: ModuleType | object) -> None:
    """Raise ``TypeError`` naming what ``backend`` lacks of the protocol."""
    missing = [f for f in REQUIRED if not callable(getattr(backend, f, None))]
    if missing:
        raise TypeError(f"backend {name!r} does not implement the backend protocol "
                        f"(graphsolve.kernels.protocol.Backend): missing {missing}")


def register_backend(name: str, backend: ModuleType | object, kernels: dict) -> None:
    """Add ``backend`` under ``name`` to the registry ``kernels`` after checking the protocol
    (use :func:`graphsolve.kernels.register_backend`, which passes the package registry)."""
    if not isinstance(name, str) or not name or name == "auto":
        raise ValueError(f"a backend name must be a non-empty string other than 'auto', "
                         f"got {name!r}")
    check_backend(name, backend)
    kernels[name] = backend
