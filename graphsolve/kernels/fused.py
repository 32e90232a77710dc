"""Refactor and solve in one compiled call, for numba code that loops (e.g. a Newton iteration).

:func:`fused_handle` packs what a factorization's refactor and solve need (the packed analysis
arrays, the gather map, the factor and work buffers, the specialization) into a tuple of
arrays; :func:`refactor_solve`, itself compiled, loads new values, factors them (LDU) and
solves without returning to Python; :func:`solve_factored` solves further right-hand sides with
that factor. Public as :func:`graphsolve.lowlevel.refactor_solve`,
:func:`graphsolve.lowlevel.solve_factored` and :meth:`graphsolve.Factorization.fused_handle`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .blocks import NO_REFCOUNT
from .factor_kernels import _poison
from .reference import PIVOT_RTOL
from .specializations import (
    _FACTOR,
    _SOLVE_IMPLICIT,
    _SOLVE_VECTOR,
    _pack,
    specialization,
)

__all__ = ["fused_handle", "refactor_solve", "solve_factored", "KIND_PAIR_6_5", "KIND_PAIR_6_3",
           "KIND_IMPLICIT"]

#: The ``kind`` of a :func:`fused_handle`: ``100 · BS + BS2`` for the size specialization
#: ``(BS, BS2)`` of :func:`~graphsolve.kernels.specializations.specialization` (0 generic),
#: plus :data:`KIND_IMPLICIT` for an implicit-L factor. :func:`refactor_solve` runs the
#: kernels of the two KKT pairs (the dynamics' Newton matrices) and the generic ones otherwise.
KIND_PAIR_6_5 = 605
KIND_PAIR_6_3 = 603
KIND_IMPLICIT = 1000

# the entry points refactor_solve calls, as globals (numba code cannot look up a dict)
_factor_0_0 = _FACTOR[(0, 0)]
_factor_6_3 = _FACTOR[(6, 3)]
_factor_6_5 = _FACTOR[(6, 5)]
_solve_vector_0_0 = _SOLVE_VECTOR[(0, 0)]
_solve_vector_6_3 = _SOLVE_VECTOR[(6, 3)]
_solve_vector_6_5 = _SOLVE_VECTOR[(6, 5)]
_solve_implicit_0_0 = _SOLVE_IMPLICIT[(0, 0)]
_solve_implicit_6_3 = _SOLVE_IMPLICIT[(6, 3)]
_solve_implicit_6_5 = _SOLVE_IMPLICIT[(6, 5)]


def fused_handle(an, gmap, D, Dlu, piv, L, U, work, implicit: bool = False,
                 rtol: float = PIVOT_RTOL) -> tuple:
    """The ``handle`` (a tuple of arrays) for :func:`refactor_solve`, which numba code can call
    in a loop (e.g. a Newton iteration) without returning to Python. The buffers are shared
    with the :class:`~graphsolve.Factorization` that made them. ``implicit`` (acyclic patterns
    only) keeps the lower blocks unscaled (solved by
    :func:`~graphsolve.kernels.solve_kernels._solve_vector` with ``implicit``): faster, but
    the buffers then do not hold the explicit factor. ``rtol``: the singular-pivot rule
    (:data:`~graphsolve.kernels.reference.PIVOT_RTOL`; 0 flags exact zeros only)."""
    w1, w2 = work[:2]
    if implicit and an.n_updates != 0:
        raise ValueError("an implicit-L factor needs an acyclic pattern (no fill updates)")
    bs, bs2 = specialization(an)
    return (*_pack(an), gmap.lsrc, gmap.usrc, D, Dlu, piv, L, U, w1, w2, float(rtol),
            np.int64(_handle_kind(bs, bs2, implicit)))


def _handle_kind(bs: int, bs2: int, implicit: bool) -> int:
    return 100 * bs + bs2 + (KIND_IMPLICIT if implicit else 0)


@njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)
def refactor_solve(handle, values, x):
    """Load ``values`` (a BlockMatrix buffer), factor them (LDU) and solve ``x`` in place.

    Returns -1 on success, -2 if ``values`` holds NaN or inf, else the position in the
    elimination order of the first singular pivot block (``x`` is then unchanged).
    """
    ints, bounds, lsrc, usrc, D, Dlu, piv, L, U, w1, w2, rtol, kind = handle
    # The load is fused into the factor. Non-finite values need no separate pass: every value
    # block enters some pivot block (D_i -= T D_c⁻¹ S, with NaN/inf propagating), whose
    # finiteness the factor checks; a failed pivot is then told apart from non-finite input.
    implicit = kind >= KIND_IMPLICIT
    pair = kind % KIND_IMPLICIT
    # LDU: False, but as a runtime bool like Factorization's calls pass it; a literal False
    # would make numba compile (and cache) a second copy of every factor kernel
    symmetric = kind < 0
    # the size-specialized kernels (separately compiled and cached), as the backend picks them
    if pair == KIND_PAIR_6_5:
        status, _, _, _ = _factor_6_5(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2,
                                      rtol, implicit, values, lsrc, usrc)
    elif pair == KIND_PAIR_6_3:
        status, _, _, _ = _factor_6_3(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2,
                                      rtol, implicit, values, lsrc, usrc)
    else:
        status, _, _, _ = _factor_0_0(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2,
                                      rtol, implicit, values, lsrc, usrc)
    if status >= 0:
        return -2 if _poison(values) != 0.0 else status
    solve_factored(handle, x)
    return -1


@njit(cache=True, nogil=True, error_model="numpy", **NO_REFCOUNT)
def solve_factored(handle, x):
    """Solve ``x`` in place with the factor that the last successful :func:`refactor_solve` on
    ``handle`` left in its buffers (another right-hand side for the same matrix: no refactor).

    The caller guarantees that factor: a :func:`refactor_solve` returned -1 and nothing has
    refactored the buffers since. An implicit-L handle solves with its unscaled lower blocks,
    as :func:`refactor_solve` does. Non-finite ``x`` propagates (no check).
    """
    ints, bounds, lsrc, usrc, D, Dlu, piv, L, U, w1, w2, rtol, kind = handle
    implicit = kind >= KIND_IMPLICIT
    # the solve kernels read the first seven arrays of the pack (_unpack_solve)
    if kind == KIND_IMPLICIT + KIND_PAIR_6_5:
        _solve_implicit_6_5(ints, bounds, Dlu, piv, L, U, x)
    elif kind == KIND_IMPLICIT + KIND_PAIR_6_3:
        _solve_implicit_6_3(ints, bounds, Dlu, piv, L, U, x)
    elif implicit:
        _solve_implicit_0_0(ints, bounds, Dlu, piv, L, U, x)
    elif kind == KIND_PAIR_6_5:
        _solve_vector_6_5(ints, bounds, Dlu, piv, L, U, x)
    elif kind == KIND_PAIR_6_3:
        _solve_vector_6_3(ints, bounds, Dlu, piv, L, U, x)
    else:                           # LDU (a handle's factor), any sizes
        _solve_vector_0_0(ints, bounds, Dlu, piv, L, U, x)
