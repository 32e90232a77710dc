"""Batched factorization: B matrices with one pattern, one analysis, one call.

Sampling, many rollouts or a population of Newton problems produce many matrices on the same
graph. :func:`factorize_batch` gathers their values (a leading batch axis) into factor buffers
with that axis and runs the kernels over the whole batch in one compiled call, so the cost per
matrix is the numeric work alone: no Python per matrix, no per-matrix analysis.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from . import factor_queries as queries
from .analysis import Analysis, analyze
from .errors import (
    BatchIndexError,
    GraphSolveError,
    NonFiniteError,
    ShapeError,
    SingularBlockError,
)
from .factor import (
    LDLT_SYMMETRY_RTOL,
    Factorization,
    GatherMap,
    check_pivot_rtol,
    resolve_backend,
)
from .factor_queries import SYSTEMS, partial_solve
from .kernels import KERNELS
from .kernels.reference import PIVOT_RTOL
from .matrix import BlockMatrix, _as_float64, _check_dtype

__all__ = ["BatchFactorization", "factorize_batch"]


class BatchFactorization:
    """LDU / LDLᵀ factorizations of a batch of matrices sharing one pattern.

    Made by :func:`factorize_batch`. Item ``k`` satisfies the identity of
    :class:`~graphsolve.Factorization` for the matrix ``A.with_data(values[k])``, with the
    permutation :attr:`perm` shared by the batch.

    The batch answers for all items at once: :meth:`solve` (every system of
    :meth:`graphsolve.Factorization.solve`), :meth:`slogdet`, :meth:`inertia`, :attr:`perm`
    and :attr:`P`. ``F[k]`` (or ``F.item(k)``) is item ``k`` as a read-only
    :class:`~graphsolve.Factorization` on which every query of a single factorization works
    (``F[k].L``, ``F[k].D``, ``F[k].U``, ``F[k].solve(b, system="L")``, ...), with the values a
    factorization of that item's matrix on the same analysis would hold; ``len(F)`` is the
    batch size and ``for Fk in F`` runs over the items.

    A batch factored with ``errors="mark"`` may hold failed items (:attr:`failed`): items
    whose pivot block was singular, and items refused before factoring (NaN or inf values, an
    unsymmetric item under ``method="ldlt"``). The other items are factored and answer as
    usual; a failed item gives NaN rows in :meth:`solve`, NaN in :meth:`slogdet`, ``None``
    in :meth:`inertia`, and its view ``F[k]`` raises the item's error on every query.

    Attributes
    ----------
    analysis : Analysis
    method : {"ldu", "ldlt"}
    backend : str
    batch_size : int
    workers : int or None
        Threads of the compiled batch kernel (None: numba's current thread count, by default
        every core).
    pivot_rtol : float
        The singularity rule of every item's pivot blocks, as
        :attr:`graphsolve.Factorization.pivot_rtol` (a block counts as singular when its
        smallest LU pivot is at most ``pivot_rtol * size * max|block|``; 0 flags exact zeros
        only); used by every :meth:`refactor` and inherited by the item views.
    errors : {"raise", "mark"}
        What a :meth:`refactor` does with failed items unless told otherwise (the ``errors``
        of :func:`factorize_batch`).
    """

    def __init__(self, A: BlockMatrix, analysis: Analysis, method: str, backend: str,
                 pivot_rtol: float = PIVOT_RTOL, errors: str = "raise"):
        self.template = A
        self.analysis = analysis
        self.method = method
        self.backend = backend
        self.pivot_rtol = check_pivot_rtol(pivot_rtol)
        self.errors = check_errors(errors)
        self._kernel = KERNELS[backend]
        self._work = self._kernel.work_buffers(analysis)
        self._map = GatherMap(A, analysis, transpose=method == "ldlt")
        self.batch_size = 0
        self.workers: int | None = None
        self._valid = False
        self._counts: dict = {}
        self._generation = 0           # counts refactors that wrote the buffers (item views)
        # per item: OK (-1), the failing node (>= 0), NONFINITE or UNSYMMETRIC
        self._status = np.zeros(0, dtype=np.int64)

    def __getstate__(self) -> dict:
        """Everything but the kernel module and the work buffers' cache of compiled plans
        (rebuilt on first use), so a batch factorization can go to another process (e.g.
        between Dask workers, :mod:`graphsolve.distributed`)."""
        state = self.__dict__.copy()
        del state["_kernel"]
        if isinstance(state["_work"], tuple):
            state["_work"] = (*state["_work"][:2], {})
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("pivot_rtol", PIVOT_RTOL)      # pickled before these existed
        state.setdefault("errors", "raise")
        state.setdefault("_status", np.full(state.get("batch_size", 0), OK, dtype=np.int64))
        self.__dict__.update(state)
        self._kernel = KERNELS[self.backend]

    def refactor(self, values: np.ndarray, errors: str | None = None) -> BatchFactorization:
        """Factor a new batch of values, shape ``(B, len(A.data))`` on the template's layout,
        with the batch's :attr:`pivot_rtol`.

        Parameters
        ----------
        values : ndarray of shape (B, len(A.data))
        errors : {"raise", "mark"}, optional
            For this call (default: the batch's :attr:`errors`, set by
            :func:`factorize_batch`). ``"raise"``: an item with NaN/inf, an unsymmetric item
            under LDLᵀ, or a singular pivot raises for the first such item. ``"mark"``: such
            items are marked failed (:attr:`failed`, :attr:`failed_nodes`) and the refactor
            succeeds; the other items are factored as usual.

        Raises
        ------
        ShapeError, NonFiniteError, GraphSolveError, SingularBlockError
            Wrong shape; with ``errors="raise"`` also NaN/inf (naming the batch item), LDLᵀ of
            an unsymmetric item, or a singular pivot (the message names the batch item and
            the node; ``.node`` is set).

        Values refused before any work (wrong shape; with ``errors="raise"`` NaN/inf or LDLᵀ
        of an unsymmetric item) leave the batch as it was; after a singular pivot with
        ``errors="raise"`` the batch is unusable (its queries raise) until a successful
        refactor, and :attr:`failed` lists every item whose pivot failed. Item views
        (:meth:`item`) taken before a refactor raise afterwards: take them again.
        """
        A, an = self.template, self.analysis
        mark = check_errors(self.errors if errors is None else errors) == "mark"
        values = _as_float64(values, "values")
        if values.ndim != 2 or values.shape[1] != A.data.size:
            raise ShapeError(f"values must have shape (B, {A.data.size}) on the template's "
                             f"layout, got {values.shape}")
        finite = np.isfinite(values).all(axis=1)
        if not finite.all() and not mark:
            raise NonFiniteError(f"batch item {int(np.flatnonzero(~finite)[0])} contains "
                                 "NaN or inf")
        src_l, dst_l, src_u, dst_u = self._map.elements
        t = self._map.transpose
        unsymmetric = np.zeros(values.shape[0], dtype=bool)
        if self.method == "ldlt":
            with np.errstate(invalid="ignore"):         # NaN items are marked as such
                scale = np.abs(values).max(axis=1, keepdims=True)
                unsymmetric = (np.abs(values - values[:, t]) > LDLT_SYMMETRY_RTOL * scale
                               ).any(axis=1) & finite
            if unsymmetric.any() and not mark:
                raise GraphSolveError(f"method='ldlt' needs symmetric matrices; batch item "
                                      f"{int(np.flatnonzero(unsymmetric)[0])} is not; use "
                                      "'ldu'")
        B = values.shape[0]
        n_diag = int(A.diag_ptr[-1])
        self._valid = False                 # the buffers change: invalid until success
        self._generation += 1               # views of items taken before are out of date
        if B != self.batch_size:
            m = int(an.fe_ptr[-1])
            self._D = np.empty((B, n_diag))
            self._Dlu = np.empty((B, n_diag))
            self._piv = np.zeros((B, an.N), dtype=np.int32)
            self._L = np.zeros((B, m))
            self._U = np.zeros((B, m))
            self.batch_size = B
        self._D[:] = values[:, self._map.diag_index]
        self._L[:] = 0.0
        self._U[:] = 0.0
        self._L[:, dst_l] = values[:, src_l]
        self._U[:, dst_u] = values[:, src_u]
        refused = ~finite | unsymmetric
        if refused.any():                   # not factored: fail at the first pivot, at once
            self._D[refused] = 0.0
        with _numba_threads(self.workers if self.backend == "compiled" else None):
            status, self._counts = self._kernel.factor_batch(
                an, self._D, self._Dlu, self._piv, self._L, self._U, self.method == "ldlt",
                self._work, rtol=self.pivot_rtol)
        status = np.asarray(status, dtype=np.int64)
        node_status = np.where(status >= 0, an.order[np.maximum(status, 0)], OK)
        node_status[~finite] = NONFINITE
        node_status[unsymmetric] = UNSYMMETRIC
        self._status = node_status
        failed = np.flatnonzero(node_status != OK)
        if failed.size and not mark:
            raise _item_error(an, int(failed[0]), int(node_status[failed[0]]))
        if failed.size:
            self._poison_items(failed)
        self._valid = True
        return self

    def _poison_items(self, items: np.ndarray) -> None:
        """The buffers of failed ``items`` set to NaN, with row swaps that stay inside each
        block (no swap), so that the batch solve kernel runs over them safely (NaN out)."""
        an = self.analysis
        for buf in (self._D, self._Dlu, self._L, self._U):
            buf[items] = np.nan
        self._piv[items] = np.arange(an.N) - np.repeat(an.x_ptr[:-1], an.block_sizes)

    # ------------------------------------------------------------------ failed items
    @property
    def failed(self) -> np.ndarray:
        """Indices of the items without a factor after the last refactor (int64, increasing;
        empty when every item factored). With ``errors="mark"`` these are the marked items;
        after a refactor that raised (``errors="raise"``) the items whose pivot failed."""
        return np.flatnonzero(self._status != OK)

    @property
    def failed_nodes(self) -> np.ndarray:
        """Per item (shape ``(B,)``, int64): the node whose pivot block was singular, or -1
        where no pivot failed (a factored item, or an item refused before factoring: NaN/inf
        values, or unsymmetric under LDLᵀ; :attr:`failed` lists those too)."""
        return np.where(self._status >= 0, self._status, OK)

    def solve(self, b: ArrayLike, system: str = "A", trans: str = "N") -> np.ndarray:
        """Solve every item's system: ``b`` of shape ``(B, N)`` or ``(B, N, k)``; returns
        ``x`` like ``b`` (float64) with ``x[i]`` the solution of item ``i``.

        ``system`` and ``trans`` have the meaning of :meth:`graphsolve.Factorization.solve`
        (``"A"``, ``"L"``, ``"D"``, ``"U"``, ``"Lt"``, ``"P"``, ``"Pt"``; ``trans="T"`` for the
        transposed system): ``x[i] == F[i].solve(b[i], system, trans)``. ``system="A"`` with
        ``trans="N"`` (and, for LDLᵀ, ``trans="T"``) runs the batch kernel in one call; the
        other systems run the single factorization's solves item by item on its explicit
        factors (built for the call: hold ``F[i]`` to reuse them across calls).

        Raises
        ------
        ShapeError
            ``b`` is not ``(B, N)`` or ``(B, N, k)`` (a scipy.sparse ``b`` included).
        DTypeError
            ``b`` is complex or not numeric.
        NonFiniteError
            ``b`` contains NaN or inf.
        ValueError
            Unknown ``system`` or ``trans``.
        GraphSolveError
            The last refactor failed.

        The rows of failed items (:attr:`failed`, ``errors="mark"``) are NaN.
        """
        if system not in SYSTEMS:
            raise ValueError(f"system must be one of {SYSTEMS}, got {system!r}")
        if trans not in ("N", "T"):
            raise ValueError(f"trans must be 'N' or 'T', got {trans!r}")
        self._require_valid()
        B, N = self.batch_size, self.analysis.N
        if sp.issparse(b):
            raise ShapeError(f"a batch right-hand side is a dense ({B}, {N}) or ({B}, {N}, k) "
                             f"array, got a scipy.sparse {type(b).__name__} (use .toarray(), "
                             "or solve item by item with F[k].solve)")
        b = np.asarray(b)
        _check_dtype(b.dtype, "b")
        if b.ndim not in (2, 3) or b.shape[:2] != (B, N):
            raise ShapeError(f"b has shape {b.shape}; expected ({B}, {N}) or ({B}, {N}, k)")
        if not np.isfinite(b).all():
            raise NonFiniteError("b contains NaN or inf (first at index "
                                 f"{np.argwhere(~np.isfinite(b))[0].tolist()})")
        x = np.array(b, dtype=float, order="C", copy=True)
        transposed = trans == "T" and not (self.method == "ldlt" and system == "A")
        failed = self._status != OK
        if system == "A" and not transposed:
            self._kernel.solve_batch(self.analysis, self._Dlu, self._piv, self._L, self._U,
                                     x.reshape(B, N, -1), self.method == "ldlt")
        else:
            for k in np.flatnonzero(~failed):
                x[k] = partial_solve(self.item(int(k)), x[k], system, transposed)
        x[failed] = np.nan
        return x

    # ------------------------------------------------------------------ items
    def item(self, k: int) -> Factorization:
        """Item ``k`` (``-B <= k < B``) as a read-only :class:`~graphsolve.Factorization`;
        also ``F[k]``.

        Every query of a single factorization works on it (``solve`` with every ``system``
        and ``trans``, ``L``, ``D``, ``U``, ``P``, ``perm``, ``slogdet``, ``inertia``,
        ``aslinearoperator``, ``stats``) and gives what :func:`graphsolve.factorize` of that
        item's matrix with this batch's analysis and method gives. The view reads the batch's
        buffers (no copy): after the batch is refactored its queries raise until it is taken
        again; a pickled or deep-copied view is a standalone copy of the item. ``refactor``
        and ``fused_handle`` raise (refactor the batch, or factor the matrix on its own). The
        view has the batch's :attr:`pivot_rtol`. The view of a failed item (:attr:`failed`)
        raises on every query the error that ``errors="raise"`` would have raised for it:
        :class:`~graphsolve.SingularBlockError` naming the item and the node (``.node``),
        :class:`~graphsolve.NonFiniteError`, or :class:`~graphsolve.GraphSolveError` (LDLᵀ of
        an unsymmetric item).

        Raises
        ------
        BatchIndexError
            ``k`` is outside the batch (also an :class:`IndexError`).
        """
        return _BatchItem(self, check_item_index(k, self.batch_size))

    def __getitem__(self, k: int) -> Factorization:
        return self.item(k)

    def __len__(self) -> int:
        return self.batch_size

    def __iter__(self) -> Iterator[Factorization]:
        return (self.item(k) for k in range(self.batch_size))

    @property
    def perm(self) -> np.ndarray:
        """The scalar permutation ``p`` shared by every item (see
        :attr:`graphsolve.Factorization.perm`)."""
        return queries.permutation(self.analysis)

    @property
    def P(self) -> sp.csr_array:
        """:attr:`perm` as a sparse matrix (see :attr:`graphsolve.Factorization.P`)."""
        return queries.permutation_matrix(self.analysis)

    def slogdet(self) -> tuple[np.ndarray, np.ndarray]:
        """Sign and log ``|det|`` of every item, arrays of shape ``(B,)``
        (see :meth:`graphsolve.Factorization.slogdet`); both are NaN for a failed item
        (:attr:`failed`: its determinant is unknown, not zero)."""
        self._require_valid()
        ok = self._status == OK
        sign, logdet = np.full(self.batch_size, np.nan), np.full(self.batch_size, np.nan)
        if ok.any():
            s, ld = queries.slogdet(self.analysis, self._D[ok] if not ok.all() else self._D)
            sign[ok], logdet[ok] = s, ld
        return sign, logdet

    def inertia(self, tol: float | None = None) -> list[queries.Inertia | None]:
        """The :class:`~graphsolve.factor_queries.Inertia` of every item (see
        :meth:`graphsolve.Factorization.inertia`), ``None`` for a failed item
        (:attr:`failed`); needs ``method="ldlt"``."""
        self._require_valid()
        if self.method != "ldlt":
            raise GraphSolveError("inertia needs the factors of symmetric matrices: factor the "
                                  "batch with method='ldlt'")
        ok = self._status == OK
        out: list[queries.Inertia | None] = [None] * self.batch_size
        if ok.any():
            result = queries.inertia(self.analysis, self._D[ok] if not ok.all() else self._D,
                                     tol)
            assert isinstance(result, list)                 # a batch: one Inertia per item
            for k, inertia in zip(np.flatnonzero(ok), result, strict=True):
                out[k] = inertia
        return out

    def _require_valid(self) -> None:
        if not self._valid:
            raise GraphSolveError("the batch factorization is not valid: its last refactor "
                                  "failed")

    @property
    def stats(self) -> dict:
        an = self.analysis
        return {"method": self.method, "backend": self.backend, "batch_size": self.batch_size,
                "n_nodes": an.n_nodes, "N": an.N, "fill_pairs": an.n_fill,
                "flops_per_matrix": an.flops(self.method), "block_ops": dict(self._counts)}


class _BatchItem(Factorization):
    """Item ``k`` of a :class:`BatchFactorization` as a read-only
    :class:`~graphsolve.Factorization` whose buffers are views of the batch's row ``k``
    (see :meth:`BatchFactorization.item`)."""

    def __init__(self, batch: BatchFactorization, k: int):
        self._setup(batch.analysis, batch.method, batch.backend, batch.pivot_rtol)
        self._D, self._Dlu, self._piv = batch._D[k], batch._Dlu[k], batch._piv[k]
        self._L, self._U = batch._L[k], batch._U[k]
        self._work = None                     # the solves need none; refactor is refused
        self._counts = dict(batch._counts)    # per matrix
        self._valid = True
        self._batch: BatchFactorization | None = batch
        self._item = k
        self._generation = batch._generation
        self._item_status = int(batch._status[k]) if batch._status.size else OK

    def _batch_problem(self) -> str | None:
        """Why the batch's buffers do not hold this item's factor (None: they do)."""
        batch, k = self._batch, self._item
        if batch is None:                     # a standalone copy
            return None
        if batch._generation != self._generation:
            return (f"this view of batch item {k} is out of date: the batch was refactored "
                    f"after it was taken; take F[{k}] again")
        if not batch._valid:
            return (f"batch item {k}: the factorization is not valid: the batch's last "
                    "refactor failed")
        return None

    def _require_valid(self) -> None:
        problem = self._batch_problem()
        if problem is not None:
            raise GraphSolveError(problem)
        if getattr(self, "_item_status", OK) != OK:
            raise _item_error(self.analysis, self._item, self._item_status)
        super()._require_valid()

    def _read_only(self, what: str) -> GraphSolveError:
        return GraphSolveError(
            f"{what}: batch item {self._item} is a read-only view of a BatchFactorization; "
            "refactor the batch (BatchFactorization.refactor) or factor the matrix on its own "
            "(graphsolve.factorize)")

    def refactor(self, A: BlockMatrix) -> Factorization:
        raise self._read_only("refactor")

    def fused_handle(self, A: BlockMatrix, implicit: bool = False) -> tuple:
        raise self._read_only("fused_handle")

    def mark_valid(self, status: int) -> None:
        raise self._read_only("mark_valid")

    def _detached(self) -> _BatchItem:
        """A standalone copy (own buffers, no reference to the batch); raises if the view is
        out of date or the batch invalid. The copy of a failed item raises as the view."""
        problem = self._batch_problem()
        if problem is not None:
            raise GraphSolveError(problem)
        copy = _BatchItem.__new__(_BatchItem)
        copy.__setstate__(self.__getstate__())
        for name in ("_D", "_Dlu", "_piv", "_L", "_U"):
            setattr(copy, name, getattr(self, name).copy())
        return copy

    def __getstate__(self) -> dict:
        """A standalone copy: the item's buffers (pickled as their own arrays), not the batch;
        a view that is out of date, or of an invalid batch, pickles as an invalid
        factorization; the copy of a failed item raises as the view."""
        state = super().__getstate__()
        state["_valid"] = self._valid and self._batch_problem() is None
        state["_batch"] = None
        state["_explicit_cache"] = {}
        return state

    def __repr__(self) -> str:
        an = self.analysis
        batch = "" if self._batch is None else f" of {self._batch.batch_size}"
        return (f"Factorization(batch item {self._item}{batch}, method={self.method!r}, "
                f"ordering={an.ordering!r}, nodes={an.n_nodes}, N={an.N}, "
                f"fill_pairs={an.n_fill})")


def factorize_batch(A: BlockMatrix, values: np.ndarray | Sequence[BlockMatrix],
                    method: str = "auto", ordering: str | Sequence[int] = "auto",
                    analysis: Analysis | None = None,
                    backend: str = "auto", workers: int | None = None,
                    pivot_rtol: float = PIVOT_RTOL, errors: str = "raise"
                    ) -> BatchFactorization:
    """Factor a batch of matrices that share the pattern of ``A``.

    Parameters
    ----------
    A : BlockMatrix
        The template: its graph and layout define the pattern (its values are not factored).
    values : ndarray of shape (B, len(A.data)), or a sequence of BlockMatrix
        The flat data of every matrix on ``A``'s layout (``A.data`` of each), or the matrices
        themselves (same graph and block sizes as ``A``).
    method, ordering, analysis, backend
        As :func:`graphsolve.factorize`; ``"auto"`` method picks LDLᵀ when every item is
        symmetric to a relative ``LDLT_SYMMETRY_RTOL = 1e-12`` (``max|A - Aᵀ| <= 1e-12
        max|A|``), LDU otherwise (with ``errors="mark"``, items with NaN or inf do not
        count).

    workers : int, optional
        Threads that factor the items in parallel (compiled backend; numba's thread pool,
        at most ``numba.config.NUMBA_NUM_THREADS``). None keeps numba's current setting, by
        default every core. The kernels release the GIL, so a thread pool of your own that
        factors separate batches (or separate :func:`~graphsolve.factorize` calls) runs in
        parallel as well.
    pivot_rtol : float
        Relative singularity threshold of every item's pivot blocks, as in
        :func:`graphsolve.factorize` (default ``PIVOT_RTOL = 10 eps``; 0 flags exact zeros
        only); kept as :attr:`BatchFactorization.pivot_rtol` for refactors and item views.
    errors : {"raise", "mark"}
        ``"raise"``: the first item with NaN/inf values, unsymmetric under LDLᵀ, or with a
        singular pivot block raises (the error names the item). ``"mark"``: such items are
        marked failed instead (:attr:`BatchFactorization.failed`,
        :attr:`~BatchFactorization.failed_nodes`) and every other item is factored: their
        solutions are NaN rows, their ``slogdet`` NaN, their ``inertia`` None, and ``F[k]``
        raises the item's error on any query. Kept as the default of
        :meth:`BatchFactorization.refactor`.

    Returns
    -------
    BatchFactorization

    Raises
    ------
    ShapeError, DTypeError, NonFiniteError, GraphSolveError, SingularBlockError
        Values not ``(B, len(A.data))`` or complex; with ``errors="raise"``, the errors of
        :meth:`BatchFactorization.refactor`.

    Examples
    --------
    >>> import numpy as np, graphsolve as gs
    >>> A = gs.random_block_matrix(gs.generators.ladder(10), "unsymmetric", block_size=3)
    >>> vals = np.stack([A.data * (1 + 0.1 * k) for k in range(4)])
    >>> F = gs.factorize_batch(A, vals)
    >>> x = F.solve(np.ones((4, A.shape[0])))
    >>> bool(np.allclose(A.to_scipy() @ (1.1 * x[1]), 1.0))
    True
    """
    if not isinstance(A, BlockMatrix):
        raise GraphSolveError(f"factorize_batch expects a BlockMatrix template, got "
                              f"{type(A).__name__}")
    if not isinstance(values, np.ndarray):
        mats = list(values)
        for k, M in enumerate(mats):
            if not (isinstance(M, BlockMatrix) and np.array_equal(M.edges, A.edges)
                    and np.array_equal(M.block_sizes, A.block_sizes)):
                raise ShapeError(f"batch item {k} is not a BlockMatrix on the template's "
                                 "graph and block sizes")
        values = np.stack([M.data for M in mats]) if mats else np.empty((0, A.data.size))
    values = _as_float64(values, "values")       # DTypeError for complex, before any work
    check_batch_values(A, values)
    backend = resolve_backend(backend)
    pivot_rtol, errors = check_pivot_rtol(pivot_rtol), check_errors(errors)
    with np.errstate(invalid="ignore"):
        method = batch_method(A, values, method, errors)
    workers = check_thread_count(workers, "workers")
    if analysis is None:
        analysis = analyze(A, ordering)
    F = BatchFactorization(A, analysis, method, backend, pivot_rtol, errors)
    F.workers = workers
    return F.refactor(values)


#: Item status codes besides the failing node (``>= 0``): factored, or refused before
#: factoring (``errors="mark"``).
OK, NONFINITE, UNSYMMETRIC = -1, -2, -3


def _item_error(an: Analysis, k: int, status: int) -> GraphSolveError:
    """The error of batch item ``k`` with ``status`` (a node, or a refusal code)."""
    if status == NONFINITE:
        return NonFiniteError(f"batch item {k} contains NaN or inf")
    if status == UNSYMMETRIC:
        return GraphSolveError(f"method='ldlt' needs symmetric matrices; batch item {k} is "
                               "not; use 'ldu'")
    return SingularBlockError(f"batch item {k}: pivot block of node {status} (size "
                              f"{int(an.block_sizes[status])}) is singular", node=status)


def check_errors(value: Any) -> str:
    """``errors`` checked: ``"raise"`` or ``"mark"``."""
    if value not in ("raise", "mark"):
        raise GraphSolveError(f'errors must be "raise" or "mark", got {value!r}')
    return str(value)


# The checks and the choice of method that factorize_batch and graphsolve.distributed share
# (there on the whole batch, before it is split into chunks; values may be a dask array).
def check_batch_values(A: BlockMatrix, values: Any) -> None:
    """``values`` is a non-empty ``(B, len(A.data))`` array on the template's layout."""
    if values.ndim != 2 or values.shape[0] == 0 or values.shape[1] != A.data.size:
        raise ShapeError(f"values must be a non-empty (B, {A.data.size}) array on the "
                         f"template's layout, got shape {values.shape}")


def batch_method(A: BlockMatrix, values: Any, method: str, errors: str = "raise") -> str:
    """``method`` checked; ``"auto"`` decided on the whole batch: ``"ldlt"`` when every item
    is symmetric to a relative :data:`~graphsolve.factor.LDLT_SYMMETRY_RTOL`, else ``"ldu"``
    (with ``errors="mark"``, items with NaN or inf, which will be marked, do not count).
    ``values`` is a NumPy or a dask array (then computed in one pass)."""
    if method not in ("auto", "ldu", "ldlt"):
        raise GraphSolveError(f'unknown method {method!r}; expected "auto", "ldu" or "ldlt"')
    if method != "auto":
        return method
    t = A.transpose_index()
    scale = abs(values).max(axis=1)
    item_symmetric = abs(values - values[:, t]).max(axis=1) <= LDLT_SYMMETRY_RTOL * scale
    if errors == "mark":
        item_symmetric = item_symmetric | ~np.isfinite(values).all(axis=1)
    symmetric = item_symmetric.all()
    if hasattr(symmetric, "compute"):               # a dask array
        symmetric = symmetric.compute()
    return "ldlt" if bool(symmetric) else "ldu"


def check_item_index(k: Any, batch_size: int) -> int:
    """``k`` as an index in ``range(batch_size)`` (negative counts from the end), or
    :class:`~graphsolve.BatchIndexError` naming ``k`` and the batch size."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise BatchIndexError(f"a batch item is selected by an integer, got {k!r}")
    if not -batch_size <= k < batch_size:
        raise BatchIndexError(f"batch item {int(k)} is out of range for a batch of "
                              f"{batch_size} items")
    return int(k) % batch_size


def check_thread_count(value: Any, name: str) -> int | None:
    """A positive integer or None (numba's current setting), as an ``int``."""
    if value is not None and (isinstance(value, bool) or not isinstance(
            value, (int, np.integer)) or value < 1):
        raise GraphSolveError(f"{name} must be a positive integer or None, got {value!r}")
    return None if value is None else int(value)


@contextmanager
def _numba_threads(workers: int | None) -> Iterator[None]:
    """numba's thread count set to ``workers`` (capped at the pool size) for the block."""
    if workers is None:
        yield
        return
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(min(workers, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    try:
        yield
    finally:
        numba.set_num_threads(before)
