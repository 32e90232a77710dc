"""The compiled backend: numba ``@njit(cache=True, nogil=True)`` kernels over the flat factor
buffers. The kernels release the GIL, so factorizations of different matrices run in parallel
from Python threads (one :class:`~graphsolve.Factorization` per thread: a factorization's
buffers are not shared safely).

Same Python-level signatures and results as :mod:`graphsolve.kernels.reference` (which reads
like the papers), so a parametrized test fixture runs every numeric test on both. This module
holds the backend functions of :class:`~graphsolve.kernels.protocol.Backend` (the choice of
kernel for a factorization, the supernodal rule, the packing of the analysis arrays once per
analysis); the kernels are in

* :mod:`graphsolve.kernels.factor_kernels` — the block factor (Brüdigam et al. 2023, Alg. 3,
  with the update schedule of the analysis) and the load of the values;
* :mod:`graphsolve.kernels.solve_kernels` — the block solve (Alg. 4);
* :mod:`graphsolve.kernels.tree6` — the uniform 6×6 LDLᵀ tree factor with the load fused in,
  and prefetching;
* :mod:`graphsolve.kernels.batch_kernels` — batches in parallel on numba's threads;
* :mod:`graphsolve.kernels.specializations` — the entry points compiled per block size
  (3, 6 and the KKT pairs 6/3, 6/5), generated from one table;
* :mod:`graphsolve.kernels.fused` — :func:`fused_handle` and :func:`refactor_solve`, refactor
  and solve in one call from numba code;
* :mod:`graphsolve.kernels.supernodal` — the supernodal LDLᵀ kernel for patterns with much fill;
* :mod:`graphsolve.kernels.blocks`, :mod:`graphsolve.kernels.simd` — the small dense block
  operations (loops, and vectorized 6×6 operations), which beat BLAS calls for blocks of a few
  rows.

Pivot factors use the LAPACK convention (``getrf``: ``P D = L U`` with ``piv`` the 0-based row
swap applied at step ``k``), and the singularity rule is the shared
:data:`~graphsolve.kernels.reference.PIVOT_RTOL` rule. An LDLᵀ pivot block that is definite (all
of them for a quasi-definite matrix) is factored ``M Δ Mᵀ`` without pivoting instead, marked by
``piv = -1`` at the block's first row (:func:`graphsolve.kernels.blocks._ldl_inplace`).

Where the speed comes from (``python -m comparisons run``; see the README for numbers): the
values are loaded inside the factor kernel, in one pass of straight copies over raw offsets,
or for an LDLᵀ tree of 6×6 blocks read where they are used; uniform 6×6 blocks use the
vectorized block operations, and products and triangular solves with six columns elsewhere keep
a row of the result in six scalars; kernels are compiled per block size and, for one
right-hand side, per solve shape; LDLᵀ keeps ``L D`` of each pair so a fill update is one block
product.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
from numba import get_num_threads

from . import supernodal
from .batch_kernels import _solve_batch
from .factor_kernels import _factor_sn, _poison
from .fused import KIND_IMPLICIT as KIND_IMPLICIT
from .fused import KIND_PAIR_6_3 as KIND_PAIR_6_3
from .fused import KIND_PAIR_6_5 as KIND_PAIR_6_5
from .fused import fused_handle as fused_handle
from .fused import refactor_solve as refactor_solve
from .reference import PIVOT_RTOL
from .specializations import (
    _FACTOR,
    _FACTOR_BATCH,
    _NO_GATHER,
    _SOLVE,
    _SOLVE_SYM,
    _SOLVE_VECTOR,
    _pack,
    _solve_arrays,
    _sym,
    specialization,
)
from .specializations import SPECIALIZATIONS as SPECIALIZATIONS
from .specializations import SPECIALIZED_PAIRS as SPECIALIZED_PAIRS
from .specializations import SPECIALIZED_SIZES as SPECIALIZED_SIZES
from .tree6 import PREFETCH_NODES as PREFETCH_NODES

__all__ = ["all_finite", "factor", "refactor", "solve", "factor_batch", "solve_batch",
           "work_buffers", "writes_upper"]

def work_buffers(an) -> tuple:
    """Two work buffers of ``max_size²`` for :func:`factor` (allocated once per
    factorization), and a cache for the supernodal plan (:func:`_supernodal_plan`)."""
    m = int(an.block_sizes.max())
    return np.empty(m * m), np.empty(m * m), {}


# ---------------------------------------------------------------------- supernodal or block
#: An LDLᵀ factor uses the supernodal kernel (:mod:`graphsolve.kernels.supernodal`) when its
#: analysis counts at least this many flops per node and at least the share
#: ``SUPERNODAL_MIN_WIDE_SHARE`` of its ``R × R`` update work falls in wide supernodes.
SUPERNODAL_MIN_FLOPS_PER_NODE = 25_000
SUPERNODAL_MIN_WIDE_SHARE = 0.3


#: uniform block sizes with a vectorized 6×6 block kernel (:mod:`graphsolve.kernels.simd`),
#: which beats the supernodal kernel until the factor's work is large: they switch only from
#: :data:`SUPERNODAL_VECTORIZED_MIN_FLOPS` LDLᵀ flops on, where the two kernels' refactor times
#: cross on grids and crystals under nested dissection (with the BLAS ``R × R`` update).
SUPERNODAL_EXCLUDED_SIZES = frozenset({6})
SUPERNODAL_VECTORIZED_MIN_FLOPS = 2.6e9
#: The first factorization of such blocks uses the supernodal kernel from this many LDLᵀ flops
#: on: the block kernel needs the list of update triples, built on its first call (at crystal
#: 12³, 2.5·10⁶ triples: list and packing cost more than the factorization's arithmetic
#: difference), which only repeated refactors pay back. Measured in one process, interleaved,
#: one BLAS thread (:data:`SUPERNODAL_BLAS_THREADS`), first factorization supernodal / block:
#: crystal 10³ (3.7·10⁸ flops) 0.96, 12³ 0.80, 2-D grid 60² (4.2·10⁸) 1.03, 100² 0.82; below,
#: crystal 8³ (8.8·10⁷) 1.50, grid 32² (5.3·10⁷) 1.92, 45² (1.6·10⁸) 1.08.
SUPERNODAL_FIRST_MIN_FLOPS = 3e8


def use_supernodal(an, work, first: bool = False) -> bool:
    """Whether an LDLᵀ factor of ``an`` runs the supernodal kernel: patterns with much fill
    (many flops per node) with wide supernodes, like grids and crystals under minimum degree,
    and, for blocks with a vectorized kernel (:data:`SUPERNODAL_EXCLUDED_SIZES`), only large
    factors (:data:`SUPERNODAL_VECTORIZED_MIN_FLOPS`; for the ``first`` factorization of a
    factor, from :data:`SUPERNODAL_FIRST_MIN_FLOPS`).

    Patterns with little work per panel (small nets and crystals, ladders) and orders without
    wide supernodes (the Brüdigam order) keep the block kernel, which is faster there. Trees
    and other patterns without update triples are decided without counting the flops (an
    elimination count: 0.1 s at 10⁶ nodes)."""
    if an.n_updates == 0:
        return False
    if an.uniform_block_size in SUPERNODAL_EXCLUDED_SIZES and an.flops("ldlt") < (
            SUPERNODAL_FIRST_MIN_FLOPS if first else SUPERNODAL_VECTORIZED_MIN_FLOPS):
        return False
    if an.flops("ldlt") < SUPERNODAL_MIN_FLOPS_PER_NODE * an.n_nodes:
        return False
    return _supernodal_plan(an, work)[2] >= SUPERNODAL_MIN_WIDE_SHARE


def writes_upper(an, symmetric: bool, work) -> bool:
    """Whether the first factorization of ``an`` writes the ``U`` buffer: LDU always; LDLᵀ
    only in the block kernels of a pattern with update triples (they keep ``L_ic2 D_c2`` in
    ``U``), not in the supernodal kernel nor on a pattern without triples (trees).
    :class:`~graphsolve.Factorization` maps the pages of the buffers a factorization writes up
    front (an optional backend query: backends without it get ``U`` populated for LDU only)."""
    if not symmetric:
        return True
    return an.n_updates > 0 and not use_supernodal(an, work, first=True)


def _kernel_for(an, work, symmetric) -> tuple:
    """``(supernodal?, block kernel, packed analysis arrays, block counts of a complete
    factorization)`` for a refactor, looked up once per factorization and method (cached in
    its work buffers: a small refactor's Python overhead is part of what it costs)."""
    cache = work[2] if len(work) > 2 else {}
    key = ("kernel", bool(symmetric))
    hit = cache.get(key)
    if hit is None:
        sn = bool(symmetric) and use_supernodal(an, work)
        packed = (None, None) if sn else _pack(an)  # the supernodal kernel needs no triples
        hit = cache[key] = (sn, _FACTOR[specialization(an)], *packed, {})
    return hit


def _first_supernodal(an, work) -> bool:
    """Whether this LDLᵀ call is the first of its factorization and takes the supernodal
    kernel although its refactors will take the block kernel (:data:`SUPERNODAL_FIRST_MIN_FLOPS`):
    a one-shot factorization then never builds the update triples. True at most once per
    ``work``; False once the refactor kernel is chosen."""
    cache = work[2] if len(work) > 2 else None
    if cache is None or ("kernel", True) in cache or "first_done" in cache:
        return False
    cache["first_done"] = True
    return use_supernodal(an, work, first=True) and not use_supernodal(an, work)


#: BLAS threads of the supernodal kernel's panel products (its ``R × R`` updates call the BLAS
#: that SciPy ships, OpenBLAS, through numba): set with ``threadpoolctl`` around each supernodal
#: factorization; ``None`` leaves the library's own setting (by default one thread per core).
#: One thread by default: OpenBLAS's threads wait for each other between the many small and
#: middle-sized panels, and on a machine with other work they are descheduled while the
#: others spin. Measured on 2 cores at load 3 (one process, other jobs running): crystal 22³
#: refactor 1.57 s with one thread against 8.2-20.7 s with two, crystal 12³ first
#: factorization 72-92 ms against 1.3-2.7 s, a 2-D grid 32² 8.5 against 314 ms.
SUPERNODAL_BLAS_THREADS: int | None = 1
_BLAS_CONTROLLER = None


def _blas_threads():
    """Context limiting the BLAS to :data:`SUPERNODAL_BLAS_THREADS` threads (about 13 µs; a
    no-op when it is ``None``). The limit is process-wide while it holds: a thread of yours
    that calls BLAS at the same time gets it too."""
    global _BLAS_CONTROLLER
    if SUPERNODAL_BLAS_THREADS is None:
        return contextlib.nullcontext()
    if _BLAS_CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER = ThreadpoolController()
    return _BLAS_CONTROLLER.limit(limits=SUPERNODAL_BLAS_THREADS, user_api="blas")


def _supernodal_plan(an, work) -> tuple:
    """:func:`graphsolve.kernels.supernodal.plan`, made once per factorization (cached in its
    work buffers)."""
    cache = work[2] if len(work) > 2 else {}
    if "supernodal" not in cache:
        cache["supernodal"] = supernodal.plan(an)
    return cache["supernodal"]


def _factor_supernodal(an, gat, D, Dlu, piv, L, U, work, rtol) -> tuple:
    """Factor with the supernodal kernel; the block counts are those of the block kernel,
    which does the same pairs and update triples (all of them, or up to a failed pivot)."""
    sn, scratch, _ = _supernodal_plan(an, work)
    none = np.zeros(0, np.int64)                # the update triples are never listed
    sym = (an.order, an.block_sizes, an.d_ptr, an.x_ptr, an.fe_child, an.fe_ptr, an.child_ptr,
           none, none, none)        # the update counts are not needed either (computed lazily)
    with _blas_threads():
        status, sq = _factor_sn(sym, sn, D, Dlu, piv, L, U, float(rtol), scratch, gat)
    if status < 0:
        return status, int(an.child_ptr[-1]), an.n_updates, sq
    scalings = int(an.child_ptr[status + 1])
    return status, scalings, int(an.sched_ptr[scalings]), sq


# ---------------------------------------------------------------------- factor, refactor
def factor(an, D, Dlu, piv, L, U, symmetric: bool, work=None, rtol: float = PIVOT_RTOL
           ) -> tuple[int, dict]:
    """Compiled :func:`graphsolve.kernels.reference.factor` (same arguments and results)."""
    work = work if work is not None else work_buffers(an)
    if symmetric and use_supernodal(an, work):
        status, scalings, updates, _ = _factor_supernodal(an, _NO_GATHER, D, Dlu, piv, L, U, work,
                                                          rtol)
    else:
        status, scalings, updates, _ = _FACTOR[specialization(an)](
            *_pack(an), D, Dlu, piv, L, U, bool(symmetric), work[0], work[1], float(rtol), False,
            *_NO_GATHER)
    return int(status), _counts(an, status, scalings, updates)


def _counts(an, status, scalings, updates) -> dict:
    pivots = an.n_nodes if status < 0 else int(status) + 1
    return {"pivots": pivots, "scalings": int(scalings), "updates": int(updates)}


def refactor(an, values, gmap, D, Dlu, piv, L, U, symmetric: bool, work=None,
             rtol: float = PIVOT_RTOL) -> tuple[int, dict, bool, bool]:
    """Compiled :func:`graphsolve.kernels.reference.refactor`: the load is part of the factor
    kernel (through ``gat``), so the values are read once. ``finite`` needs no pass of its own
    on success: every value enters some pivot block (LDU: ``D_i -= T D⁻¹ S``; LDLᵀ: the upper
    blocks through the symmetry sum), whose finiteness the factor checks."""
    work = work if work is not None else work_buffers(an)
    if symmetric and _first_supernodal(an, work):
        supernodal_, done = True, None          # this call only: counts made below
    else:
        supernodal_, kernel, ints, bounds, done = _kernel_for(an, work, symmetric)
    if supernodal_:
        status, scalings, updates, sq = _factor_supernodal(
            an, (values, gmap.lsrc, gmap.usrc), D, Dlu, piv, L, U, work, rtol)
    else:
        status, scalings, updates, sq = kernel(
            ints, bounds, D, Dlu, piv, L, U, bool(symmetric), work[0], work[1], float(rtol),
            False, values, gmap.lsrc, gmap.usrc)
    ok = status < 0
    finite = (ok and math.isfinite(sq)) or _poison(values) == 0.0
    if not ok or done is None:
        counts = _counts(an, status, scalings, updates)
    else:                                       # a complete run: built once, then reused
        if done.get("scalings") != scalings or done.get("updates") != updates:
            done.update(_counts(an, status, scalings, updates))
        counts = done
    return int(status), counts, bool(finite), bool(ok and sq == 0.0)


# ---------------------------------------------------------------------- solve
def _solve_plan(an) -> tuple:
    """``(LDLᵀ one-vector kernel, LDU one-vector kernel or None, kernel for any number of
    right-hand sides, ints, bounds)`` of the solves, made once per analysis (kept like
    :func:`~graphsolve.kernels.specializations._pack`'s arrays)."""
    hit = an.backend_cache.get("compiled_solve")
    if hit is None:
        spec = specialization(an)
        hit = an.backend_cache["compiled_solve"] = (
            _SOLVE_SYM.get(spec, _SOLVE_SYM[(0, 0)]), _SOLVE_VECTOR.get(spec),
            _SOLVE.get(spec, _SOLVE[(0, 0)]), *_pack(an, _solve_arrays))
    return hit


def solve(an, Dlu, piv, L, U, x, symmetric: bool) -> bool:
    """Compiled :func:`graphsolve.kernels.reference.solve` (same contract); ``x``
    C-contiguous. An LDLᵀ solve with one right-hand side checks ``x`` inside its kernel
    (:func:`~graphsolve.kernels.factor_kernels._poison`), in the same call as the solve."""
    if not x.flags.c_contiguous:
        raise ValueError("x must be C-contiguous")
    one = x.ndim == 1 or x.shape[1] == 1
    solve_sym, solve_vector, solve_any, ints, bounds = _solve_plan(an)
    if symmetric and one:
        return solve_sym(ints, bounds, Dlu, piv, L, x if x.ndim == 1 else x.reshape(-1))
    if not all_finite(x):
        return False
    if solve_vector is not None and not symmetric and one:
        solve_vector(ints, bounds, Dlu, piv, L, U, x.reshape(-1))
    else:
        solve_any(ints, bounds, Dlu, piv, L, U, x.reshape(-1), 1 if one else x.shape[1],
                  bool(symmetric))
    return True


# ---------------------------------------------------------------------- batches
def factor_batch(an, D, Dlu, piv, L, U, symmetric: bool, work=None,
                 rtol: float = PIVOT_RTOL) -> tuple[np.ndarray, dict]:
    """Factor a batch: every buffer has a leading batch axis; items run in parallel on numba's
    threads (``numba.set_num_threads``). Returns the status of every matrix (-1 or the
    position of its first singular pivot by the rule ``rtol``) and the block operations per
    matrix (of the first item that factored; of item 0 if none did). ``work`` is ignored (one
    work row per thread is allocated per call)."""
    m = int(an.block_sizes.max())
    threads = get_num_threads()
    w1, w2 = np.empty((threads, m * m)), np.empty((threads, m * m))
    status = np.empty(D.shape[0], dtype=np.int64)
    counts = np.zeros((D.shape[0], 2), dtype=np.int64)
    kernel = _FACTOR_BATCH.get(specialization(an), _FACTOR_BATCH[(0, 0)])
    kernel(_sym(an), D, Dlu, piv, L, U, bool(symmetric), w1, w2, float(rtol), status, counts,
           False, _NO_GATHER)
    ok = np.flatnonzero(status < 0)
    r = int(ok[0]) if ok.size else 0
    return status, {"pivots": an.n_nodes if ok.size else int(status[0]) + 1,
                    "scalings": int(counts[r, 0]), "updates": int(counts[r, 1])}


def solve_batch(an, Dlu, piv, L, U, x, symmetric: bool) -> None:
    """Solve a batch in place; ``x`` C-contiguous ``(B, N, k)``."""
    B, N, k = x.shape
    order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr = _solve_arrays(an)
    _solve_batch(order, sizes, d_ptr, x_ptr, fe_child, fe_ptr, child_ptr, Dlu, piv, L, U,
                 x.reshape(B, N * k), k, bool(symmetric))


def all_finite(x: np.ndarray) -> bool:
    """:func:`graphsolve.kernels.reference.all_finite`; a compiled reduction for float64
    (:func:`~graphsolve.kernels.factor_kernels._poison`, a tenth of
    ``np.isfinite(x).all()``'s time on small vectors)."""
    if x.dtype == np.float64 and x.flags.c_contiguous:
        return bool(_poison(x.reshape(-1)) == 0.0)
    return bool(np.isfinite(x).all())
