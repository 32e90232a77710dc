"""Batched kernels: the factor and solve of many matrices with one analysis, in parallel.

Every buffer has a leading batch axis; the items run on numba's threads (``prange``), each
through the same factor (:mod:`graphsolve.kernels.factor_kernels`) and solve
(:mod:`graphsolve.kernels.solve_kernels`) kernels as a single matrix, with one row of the work
buffers per thread. The buffers are preloaded (``gat`` empty). ``implicit`` (False) comes
from Python as a runtime bool, so the factor kernels compiled for the single-matrix entry
points are reused. The per-specialization entry points are in
:mod:`graphsolve.kernels.specializations`; :func:`graphsolve.kernels.compiled.factor_batch`
and ``solve_batch`` call them.
"""

from __future__ import annotations

from numba import get_thread_id, literally, njit, prange

from .factor_kernels import _factor_generic, _factor_pair, _factor_uniform
from .solve_kernels import _solve_bs

__all__: list[str] = []


def _factor_batch_kernel(GENERIC: bool):
    """The kernel :func:`_factor_batch` calls, generic or for uniform sizes (``BS`` literal):
    each calls only its own kernel of :func:`~graphsolve.kernels.factor_kernels._factor_kernel`
    (``GENERIC``, a closure constant, is pruned before typing)."""
    def kernel(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, BS, implicit,
               gat):
        literally(BS)
        for b in prange(D.shape[0]):
            t = get_thread_id()
            if GENERIC:
                st, scalings, updates, _ = _factor_generic(sym, D[b], Dlu[b], piv[b], L[b], U[b],
                                                           symmetric, w1[t], w2[t], rtol, 0,
                                                           implicit, gat)
            else:
                st, scalings, updates, _ = _factor_uniform(sym, D[b], Dlu[b], piv[b], L[b], U[b],
                                                           symmetric, w1[t], w2[t], rtol, BS,
                                                           implicit, gat)
            status[b] = st
            counts[b, 0] = scalings
            counts[b, 1] = updates
    kernel.__name__ = kernel.__qualname__ = ("_factor_batch_generic" if GENERIC
                                             else "_factor_batch_uniform")
    return njit(cache=True, nogil=True, error_model="numpy", parallel=True)(kernel)


_factor_batch_generic = _factor_batch_kernel(True)
_factor_batch_uniform = _factor_batch_kernel(False)


@njit(nogil=True, error_model="numpy", inline="always")
def _factor_batch(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, BS,
                  implicit, gat):
    """:func:`~graphsolve.kernels.factor_kernels._factor` of every item (``BS`` as there, a
    constant of the caller: inlined, the branch is pruned before typing); writes each item's
    status and its scalings and updates to ``status[b]``, ``counts[b]``."""
    if BS == 0:
        _factor_batch_generic(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts,
                              0, implicit, gat)
    else:
        _factor_batch_uniform(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts,
                              BS, implicit, gat)


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def _factor_batch_pair(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, BS,
                       BS2, implicit, gat):
    """:func:`_factor_batch` for a pair of block sizes
    (:func:`~graphsolve.kernels.factor_kernels._factor_pair`)."""
    literally(BS)
    literally(BS2)
    for b in prange(D.shape[0]):
        t = get_thread_id()
        st, scalings, updates, _ = _factor_pair(sym, D[b], Dlu[b], piv[b], L[b], U[b],
                                                symmetric, w1[t], w2[t], rtol, BS, BS2,
                                                implicit, gat)
        status[b] = st
        counts[b, 0] = scalings
        counts[b, 1] = updates


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def _solve_batch(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L, U, x,
                 nrhs, symmetric):
    """:func:`~graphsolve.kernels.solve_kernels._solve_bs` (generic sizes) of every item;
    ``x`` is ``(B, N · nrhs)``."""
    for b in prange(x.shape[0]):
        _solve_bs(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu[b], piv[b], L[b],
                  U[b], x[b], nrhs, symmetric, 0)
