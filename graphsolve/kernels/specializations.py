"""The compiled entry points, one per block-size specialization, generated from one table.

numba compiles a kernel once per literal block size: the small block loops get fixed trip
counts, and uniform 6×6 blocks use the vectorized operations of :mod:`graphsolve.kernels.simd`.
:data:`SPECIALIZATIONS` lists the specializations ``(BS, BS2)`` — ``(0, 0)`` generic, ``(BS, 0)``
uniform ``BS×BS`` blocks, ``(BS, BS2)`` exactly two sizes (bodies and joints of a KKT matrix)
— and which entry points each gets. :func:`_entry` makes each as a closure over the literal
sizes: numba types a closure's integers as compile-time constants, prunes the branches they
decide, and caches each closure under its own name (``_factor_6_0``, ``_solve_sym_3_0``, ...).
The dictionaries :data:`_FACTOR`, :data:`_SOLVE`, :data:`_SOLVE_SYM`, :data:`_SOLVE_VECTOR`,
:data:`_SOLVE_IMPLICIT` and :data:`_FACTOR_BATCH` map a specialization to its entry point.

The entry points called from Python take the analysis arrays packed in one array
(:func:`_pack`, unpacked inside by :func:`_unpack`): one argument to unbox instead of ten;
numba's dispatch costs ~0.1 µs per plain array argument and more inside tuples, which is most
of a small refactor's fixed cost.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .batch_kernels import _factor_batch, _factor_batch_pair
from .blocks import NO_REFCOUNT
from .factor_kernels import _factor, _factor_pair, _poison
from .solve_kernels import _solve_bs, _solve_sym_vector, _solve_vector
from .tree6 import _factor_tree6

__all__ = ["SPECIALIZATIONS", "SPECIALIZED_SIZES", "SPECIALIZED_PAIRS", "specialization"]

#: ``(BS, BS2)`` -> the entry points compiled for it:
#:
#: * ``"factor"``: factor / refactor (:func:`~graphsolve.kernels.factor_kernels._factor`,
#:   ``_factor_pair`` for two sizes, the tree kernel for an LDLᵀ of uniform 6×6 blocks);
#: * ``"solve"``: any number of right-hand sides (LDU or LDLᵀ);
#: * ``"solve_sym"``: LDLᵀ, one right-hand side (checks ``x`` for NaN and inf first);
#: * ``"solve_vector"``: LDU, one right-hand side;
#: * ``"implicit"``: LDU, one right-hand side of an implicit-L factor (``refactor_solve``);
#: * ``"batch"``: the batched factor (a parallel compile each).
#:
#: A kind missing from a row falls back to the generic ``(0, 0)`` entry point (for
#: ``"solve_vector"``: to ``"solve"``).
SPECIALIZATIONS: dict[tuple[int, int], tuple[str, ...]] = {
    (0, 0): ("factor", "solve", "solve_sym", "solve_vector", "implicit", "batch"),
    (3, 0): ("factor", "solve", "solve_sym", "solve_vector"),
    (6, 0): ("factor", "solve", "solve_sym", "solve_vector", "batch"),
    (6, 3): ("factor", "solve_vector", "implicit", "batch"),
    (6, 5): ("factor", "solve_vector", "implicit"),
}

#: Uniform block sizes that get kernels compiled with the size as a constant.
SPECIALIZED_SIZES = tuple(bs for bs, bs2 in SPECIALIZATIONS if bs and not bs2)
#: Pairs of block sizes (body, joint) of KKT matrices of rigid bodies with their own kernels.
SPECIALIZED_PAIRS = tuple(spec for spec in SPECIALIZATIONS if spec[1])


def specialization(an) -> tuple[int, int]:
    """``(BS, 0)`` if every block is BS×BS and BS is specialized, ``(BS, BS2)`` for a
    specialized pair of sizes, else ``(0, 0)`` (the generic kernel)."""
    size = an.uniform_block_size
    if size:
        return (size, 0) if size in SPECIALIZED_SIZES else (0, 0)
    pair = an.size_pair
    return pair if pair in SPECIALIZED_PAIRS else (0, 0)


# ---------------------------------------------------------------------- packed analysis arrays
def _sym(an) -> tuple:
    """The analysis arrays of the factor kernels (``sym``); the first seven are
    :func:`_solve_arrays`."""
    return (an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_child, an.fe_ptr, an.child_ptr,
            an.sched_ptr, an.sched_ic2, an.sched_c1c2)


def _solve_arrays(an) -> tuple:
    """The analysis arrays of the solve kernels (no update schedule: it is not computed for a
    supernodal factor)."""
    return (an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_child, an.fe_ptr, an.child_ptr)


def _pack(an, arrays=_sym) -> tuple[np.ndarray, np.ndarray]:
    """The analysis arrays of ``arrays(an)`` (:func:`_sym` or :func:`_solve_arrays`)
    concatenated (int64) and the bounds of each: the form the entry points take
    (:func:`_unpack`). Made once per analysis and kept in its
    :attr:`~graphsolve.Analysis.backend_cache`."""
    key = "compiled_pack_" + arrays.__name__
    hit = an.backend_cache.get(key)
    if hit is None:
        parts = arrays(an)
        bounds = np.zeros(len(parts) + 1, dtype=np.int64)
        bounds[1:] = np.cumsum([a.size for a in parts])
        hit = an.backend_cache[key] = (
            np.concatenate([np.asarray(a, dtype=np.int64) for a in parts]), bounds)
        if arrays is _sym:                     # the triples, kept once: the analysis' own
            an.share_schedule(*(hit[0][bounds[t]:bounds[t + 1]] for t in (8, 9)))  # lists
    return hit


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _unpack(ints, bounds):
    """The ``sym`` tuple of :func:`_sym` from its packed form (:func:`_pack`)."""
    return (ints[bounds[0]:bounds[1]], ints[bounds[1]:bounds[2]], ints[bounds[2]:bounds[3]],
            ints[bounds[3]:bounds[4]], ints[bounds[4]:bounds[5]], ints[bounds[5]:bounds[6]],
            ints[bounds[6]:bounds[7]], ints[bounds[7]:bounds[8]], ints[bounds[8]:bounds[9]],
            ints[bounds[9]:bounds[10]])


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _unpack_solve(ints, bounds):
    """The arrays of :func:`_solve_arrays` from a pack of :func:`_solve_arrays` or of
    :func:`_sym` (whose first seven arrays they are)."""
    return (ints[bounds[0]:bounds[1]], ints[bounds[1]:bounds[2]], ints[bounds[2]:bounds[3]],
            ints[bounds[3]:bounds[4]], ints[bounds[4]:bounds[5]], ints[bounds[5]:bounds[6]],
            ints[bounds[6]:bounds[7]])


#: ``(values, lsrc, usrc)`` for buffers loaded beforehand (the factor kernels' ``gat``)
_NO_GATHER = (np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64))


# ---------------------------------------------------------------------- entry point factories
def _factor_entry(BS: int, BS2: int):
    def entry(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, implicit, values, lsrc,
              usrc):
        sym = _unpack(ints, bounds)
        gat = (values, lsrc, usrc)
        if BS2 > 0:
            return _factor_pair(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, BS, BS2,
                                implicit, gat)
        if BS == 6:                    # LDLᵀ refactor of a pattern without triples (trees)
            if symmetric and values.size > 0 and sym[7][sym[7].size - 1] == 0:
                return _factor_tree6(sym, D, Dlu, piv, L, U, w2, rtol, gat)
        return _factor(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, BS, implicit, gat)
    return entry


def _uniform_only(kind: str, BS2: int) -> None:
    if BS2:
        raise ValueError(f"SPECIALIZATIONS: {kind!r} has kernels for uniform sizes only")


def _solve_entry(BS: int, BS2: int):
    _uniform_only("solve", BS2)

    def entry(ints, bounds, Dlu, piv, L, U, x, nrhs, symmetric):
        order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr = _unpack_solve(ints, bounds)
        _solve_bs(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L, U, x,
                  nrhs, symmetric, BS)
    return entry


def _solve_sym_entry(BS: int, BS2: int):
    _uniform_only("solve_sym", BS2)

    def entry(ints, bounds, Dlu, piv, L, x):
        if _poison(x) != 0.0:                       # NaN or inf in x: not solved
            return False
        order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr = _unpack_solve(ints, bounds)
        _solve_sym_vector(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L,
                          x, BS)
        return True
    return entry


def _solve_vector_entry(BS: int, BS2: int, implicit: bool = False):
    def entry(ints, bounds, Dlu, piv, L, U, x):
        order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr = _unpack_solve(ints, bounds)
        _solve_vector(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L, U,
                      x, BS, BS2, implicit)
    return entry


def _solve_implicit_entry(BS: int, BS2: int):
    return _solve_vector_entry(BS, BS2, True)


def _factor_batch_entry(BS: int, BS2: int):
    def entry(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, implicit, gat):
        if BS2 > 0:
            _factor_batch_pair(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts,
                               BS, BS2, implicit, gat)
        else:
            _factor_batch(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts, BS,
                          implicit, gat)
    return entry


_FACTORIES = {"factor": _factor_entry, "solve": _solve_entry, "solve_sym": _solve_sym_entry,
              "solve_vector": _solve_vector_entry, "implicit": _solve_implicit_entry,
              "batch": _factor_batch_entry}


def _entry(kind: str, BS: int, BS2: int):
    """The entry point ``kind`` for the specialization ``(BS, BS2)``: the factory's closure
    named ``_{kind}_{BS}_{BS2}`` (numba's cache files are named after it) and compiled with
    ``@njit(cache=True, nogil=True)``."""
    py_func = _FACTORIES[kind](BS, BS2)
    py_func.__name__ = py_func.__qualname__ = f"_{kind}_{BS}_{BS2}"
    # without reference counting (see compiled.py), except the batches (numba's parallel
    # loops need it)
    return njit(cache=True, nogil=True, error_model="numpy",
                **({} if kind == "batch" else NO_REFCOUNT))(py_func)


def _table(kind: str) -> dict:
    return {spec: _entry(kind, *spec) for spec, kinds in SPECIALIZATIONS.items() if kind in kinds}


#: factor / refactor entry points: ``(ints, bounds, D, Dlu, piv, L, U, symmetric, w1, w2,
#: rtol, implicit, values, lsrc, usrc) -> (status, scalings, updates, squared asymmetry)``
_FACTOR = _table("factor")
#: solves of ``nrhs`` right-hand sides: ``(ints, bounds, Dlu, piv, L, U, x, nrhs, symmetric)``
_SOLVE = _table("solve")
#: LDLᵀ solves of one right-hand side: ``(ints, bounds, Dlu, piv, L, x) -> x finite?``
_SOLVE_SYM = _table("solve_sym")
#: LDU solves of one right-hand side: ``(ints, bounds, Dlu, piv, L, U, x)``
_SOLVE_VECTOR = _table("solve_vector")
#: :data:`_SOLVE_VECTOR` for an implicit-L factor
_SOLVE_IMPLICIT = _table("implicit")
#: batched factors: ``(sym, D, Dlu, piv, L, U, symmetric, w1, w2, rtol, status, counts,
#: implicit, gat)``, buffers with a leading batch axis
_FACTOR_BATCH = _table("batch")
