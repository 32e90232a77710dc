"""Numeric phase: block LDU / LDLᵀ factorizations on an :class:`~graphsolve.Analysis`.

``factorize`` gathers a :class:`~graphsolve.BlockMatrix` into the flat factor buffers that the
analysis laid out (one vectorized gather), runs a kernel, and returns a :class:`Factorization`.
``refactor`` repeats only the numeric part for new values on the same pattern.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, cast

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike

from . import factor_queries as queries
from .analysis import Analysis, analyze
from .errors import GraphSolveError, NonFiniteError, PatternError, ShapeError, SingularBlockError
from .factor_queries import SYSTEMS, Inertia, partial_solve
from .kernels import KERNELS, assembly
from .kernels.reference import PIVOT_RTOL
from .matrix import BlockMatrix, _check_dtype, block_coordinates

__all__ = ["Factorization", "allocate", "factorize", "solve", "factorized", "GatherMap", "BACKENDS"]

#: A scipy.sparse matrix or array (a right-hand side or solution in sparse format).
SparseMatrix: TypeAlias = "sp.spmatrix | sp.sparray"

#: The backends that ship ("auto" picks "compiled" when numba is available); backends added
#: with :func:`graphsolve.kernels.register_backend` are accepted by name as well.
BACKENDS = ("auto", *KERNELS)


def resolve_backend(backend: str) -> str:
    """The registered backend that ``backend`` names ("auto": compiled if available)."""
    if backend == "auto":
        return "compiled" if "compiled" in KERNELS else "reference"
    if not isinstance(backend, str) or backend not in KERNELS:
        raise GraphSolveError(f"unknown or unavailable backend {backend!r}; available: "
                              f"{('auto', *KERNELS)}")
    return backend
#: Relative tolerance of the symmetry check of ``method="ldlt"``.
LDLT_SYMMETRY_RTOL = 1e-12


def check_pivot_rtol(value: Any) -> float:
    """``pivot_rtol`` as a finite float ``>= 0``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value < 0:
        raise GraphSolveError(f"pivot_rtol must be a finite number >= 0, got {value!r}")
    return float(value)


class Factorization:
    """A block LDU (``P A Pᵀ = L D U``) or LDLᵀ (``P A Pᵀ = L D Lᵀ``) factorization.

    Made only by :func:`factorize`. ``P`` is the block permutation of the elimination order:
    with ``p = F.perm``, ``A[p][:, p] == F.L @ F.D @ F.U`` where ``L`` is unit block-lower
    triangular, ``D`` block diagonal and ``U`` unit block-upper triangular (``U = Lᵀ`` for
    LDLᵀ).

    Attributes
    ----------
    analysis : Analysis
    method : {"ldu", "ldlt"}
    backend : str
    pivot_rtol : float
        A pivot block counts as singular when its smallest LU pivot is at most
        ``pivot_rtol * size * max|block|`` (default ``10 eps``; 0 flags exact zeros only).
    """

    def __init__(self, analysis: Analysis, method: str, backend: str,
                 pivot_rtol: float = PIVOT_RTOL):
        self._setup(analysis, method, backend, pivot_rtol)
        an = analysis
        # pages made up front for what the factorization writes (U: LDU, and LDLᵀ's block
        # kernels when the pattern has update triples)
        self._work = self._kernel.work_buffers(analysis)
        writes_upper = getattr(self._kernel, "writes_upper", None)
        upper = method == "ldu" or (writes_upper is not None
                                    and writes_upper(an, method == "ldlt", self._work))
        self._Dlu = _zeros(int(an.d_ptr[-1]), populate=True)
        # LDLᵀ of a tree (no update triples) factors its pivot blocks in place: no block is
        # read once factored, and a third fewer pages to make (see _run_kernel)
        in_place = method == "ldlt" and backend == "compiled" and an.n_updates == 0
        self._D = self._Dlu if in_place else _zeros(int(an.d_ptr[-1]), populate=True)
        self._piv = np.zeros(an.N, dtype=np.int32)
        self._L = _zeros(int(an.fe_ptr[-1]), populate=True)
        self._U = _zeros(int(an.fe_ptr[-1]), populate=upper)

    def _setup(self, analysis: Analysis, method: str, backend: str, pivot_rtol: float) -> None:
        """Every attribute but the factor buffers (``_D``, ``_Dlu``, ``_piv``, ``_L``, ``_U``)
        and the kernel's work buffers (``_work``), which the caller sets: allocated by
        ``__init__``, views of a batch's buffers in :meth:`graphsolve.BatchFactorization.item`."""
        self.analysis = analysis
        self.pivot_rtol = check_pivot_rtol(pivot_rtol)
        self.method = method
        self.backend = backend
        self._kernel = KERNELS[backend]
        self._maps: list[tuple] = []              # (edges, block_sizes, GatherMap) per layout
        self._last_map: tuple | None = None       # (edges, block_sizes, map) of the last A
        self._valid = False
        self._implicit = False          # fused_handle(implicit=True) was made
        self._implicit_state = False    # the buffers hold an implicit-L factor
        self._counts: dict = {}
        self._explicit_cache: dict[str, sp.csr_array] = {}

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict:
        """Everything but the kernel module and the work buffers' cache of compiled plans
        (rebuilt on first use), so a factorization can go to another process."""
        state = self.__dict__.copy()
        del state["_kernel"]
        if state["_work"] is not None:
            state["_work"] = (*state["_work"][:2], {})
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._kernel = KERNELS[self.backend]

    # ------------------------------------------------------------------ numeric phase
    def refactor(self, A: BlockMatrix) -> Factorization:
        """Factor new values with the same pattern, reusing the analysis (A is not modified).

        Raises
        ------
        PatternError
            ``A`` has a block outside the analysed graph.
        ShapeError
            Different block sizes.
        NonFiniteError, SingularBlockError
            As :func:`factorize`.

        A matrix refused before any work (not a BlockMatrix, a block outside the pattern,
        other block sizes) leaves the factorization as it was. After a failure during the
        numeric work (NaN/inf, a singular pivot, LDLᵀ of an unsymmetric matrix) the
        factorization is unusable (``solve`` raises) until a successful refactor: a failure
        can never go unnoticed.
        """
        ldlt = self.method == "ldlt"
        status, finite, exact = self._run_kernel(A, ldlt)
        if not finite:
            A.check_finite()                      # raises, naming the block
        if ldlt and not exact:
            _check_symmetric(A)                   # raises unless within the tolerance
        if status >= 0:
            raise _singular_error(self.analysis, int(self.analysis.order[status]))
        self._valid = True
        return self

    def _run_kernel(self, A: BlockMatrix, ldlt: bool) -> tuple[int, bool, bool]:
        """Check ``A``'s type and layout (a refused ``A`` leaves the factorization as it was),
        then invalidate and factor its values: ``(status, finite, exactly symmetric)``."""
        if not isinstance(A, BlockMatrix):
            raise GraphSolveError(f"expected a BlockMatrix, got {type(A).__name__}")
        layout = self._layout(A)                  # PatternError / ShapeError before any work
        self._valid = False
        self._implicit_state = False
        self._explicit_cache.clear()
        while True:
            status, self._counts, finite, exact = self._kernel.refactor(
                self.analysis, A.data, layout, self._D, self._Dlu, self._piv, self._L,
                self._U, ldlt, self._work, self.pivot_rtol)
            if status < 0 or self._D is not self._Dlu:
                return status, finite, exact
            # pivots factored in place take the definite branch only: an indefinite,
            # singular or non-finite pivot (or an LDU pivot) needs its block kept for LU.
            # From now on D is a buffer of its own, and the factorization runs again.
            self._D = _zeros(self._Dlu.size, populate=True)

    def _pivots(self) -> np.ndarray:
        """The pivot blocks ``D_j`` (flat, elimination order): the ``D`` buffer, or, for
        pivots factored in place, the blocks rebuilt from their definite factors
        (:func:`graphsolve.factor_queries.definite_pivots`, once per factorization)."""
        if self._D is not self._Dlu:
            return self._D
        if "pivots" not in self._explicit_cache:
            self._explicit_cache["pivots"] = queries.definite_pivots(self.analysis, self._Dlu)
        return self._explicit_cache["pivots"]

    def _try_ldlt(self, A: BlockMatrix) -> bool:
        """Run the LDLᵀ kernel; True (and valid) if it succeeded on values symmetric to
        :data:`LDLT_SYMMETRY_RTOL`.

        The kernel compares every upper block with its lower block's transpose while it loads
        them, so ``method="auto"`` needs no symmetry pass of its own on exactly symmetric
        input (assembly round-off costs one pass); on anything else (unsymmetric, singular,
        NaN) the caller decides with the full checks."""
        status, finite, exact = self._run_kernel(A, True)
        self._valid = status < 0 and finite and (
            exact or A.is_symmetric(rtol=LDLT_SYMMETRY_RTOL))
        return self._valid

    @property
    def stats(self) -> dict:
        """Sizes, fill, stored scalars and flops of this factorization, and ``block_ops``: the
        pivots, scalings and update triples the last (re)factorization executed."""
        an = self.analysis
        return {
            "method": self.method, "ordering": an.ordering, "backend": self.backend,
            "n_nodes": an.n_nodes, "N": an.N, "fill_pairs": an.n_fill,
            "factor_nnz": an.factor_nnz if self.method == "ldu"
            else int(an.d_ptr[-1] + an.fe_ptr[-1]),
            "flops": an.flops(self.method), "block_ops": dict(self._counts),
        }

    def _layout(self, A: BlockMatrix) -> GatherMap:
        last = self._last_map                 # the same matrix again: no pattern hashing
        if last is not None and last[0] is A.edges and last[1] is A.block_sizes:
            return last[2]
        gmap = next((m for edges, sizes, m in self._maps   # layouts are read-only arrays
                     if (edges is A.edges or np.array_equal(edges, A.edges))
                     and (sizes is A.block_sizes or np.array_equal(sizes, A.block_sizes))), None)
        if gmap is None:
            gmap = GatherMap(A, self.analysis)
            self._maps.append((A.edges, A.block_sizes, gmap))
        self._last_map = (A.edges, A.block_sizes, gmap)
        return gmap

    def fused_handle(self, A: BlockMatrix, implicit: bool = False) -> tuple:
        """Low-level hook for numba code: a ``handle`` such that
        ``graphsolve.lowlevel.refactor_solve(handle, A.data, x)``
        refactors values laid out like ``A`` into this factorization's buffers and solves
        ``x`` in place (LDU, compiled backend only). Afterwards call :meth:`mark_valid` with its
        status so that Python-level use of the factorization stays checked.

        ``implicit=True`` (acyclic patterns, i.e. no fill) makes ``refactor_solve`` keep the
        lower blocks unscaled and apply ``D⁻¹`` during the solve, which saves a third of the
        factor's work when every factorization serves one solve (Newton's method). The
        buffers then hold no explicit factor, so :meth:`solve` and ``L``/``D``/``U`` raise
        until the next :meth:`refactor`. ``graphsolve.lowlevel.solve_factored(handle, x)``
        solves further right-hand sides with the factor of the last successful
        ``refactor_solve``. The handle flags singular pivots by this factorization's
        ``pivot_rtol``.
        """
        if self.backend != "compiled" or self.method != "ldu":
            raise GraphSolveError("fused_handle needs the compiled backend and method 'ldu', "
                                  f"got {self.backend!r}, {self.method!r}")
        updates = self.analysis.n_updates
        if implicit and updates:
            raise GraphSolveError("fused_handle(implicit=True) needs an acyclic pattern; this "
                                  f"analysis has {updates} block updates (cycles)")
        self._implicit = bool(implicit)
        return self._kernel.fused_handle(self.analysis, self._layout(A), self._D, self._Dlu,
                                         self._piv, self._L, self._U, self._work,
                                         bool(implicit), self.pivot_rtol)

    def mark_valid(self, status: int) -> None:
        """Record the status returned by ``refactor_solve`` (-1 means success; after an
        ``implicit`` handle the factorization stays unusable from Python until a refactor)."""
        self._explicit_cache.clear()
        self._valid = int(status) == -1
        self._implicit_state = self._implicit

    # ------------------------------------------------------------------ solves
    def solve(self, b: ArrayLike | SparseMatrix, system: str = "A", trans: str = "N"
              ) -> np.ndarray | SparseMatrix:
        """Solve ``A x = b`` (or one factor's system) for ``b`` of shape ``(N,)`` or ``(N, k)``;
        returns ``x`` like ``b``.

        Parameters
        ----------
        b : array_like
        system : {"A", "L", "D", "U", "Lt", "P", "Pt"}
            With ``A = Pᵀ L D U P`` (``(P x) = x[p]``, ``p = F.perm``; ``U = Lᵀ`` for LDLᵀ),
            in the style of CHOLMOD's ``solve``: ``"A"`` solves ``A x = b`` (the fused block
            solve); ``"L"``, ``"D"``, ``"U"`` and ``"Lt"`` solve ``L x = b``, ``D x = b``,
            ``U x = b``, ``Lᵀ x = b`` in the permuted numbering; ``"P"`` returns ``P b`` and
            ``"Pt"`` ``Pᵀ b``. So ``solve(b)`` equals ``solve(solve(solve(solve(solve(b, "P"),
            "L"), "D"), "U"), "Pt")``.
        trans : {"N", "T"}
            ``"T"`` solves with the transpose of the system's matrix (``Aᵀ x = b``, ``Lᵀ x = b``,
            ...); for LDLᵀ ``A`` is symmetric and ``"T"`` changes nothing for ``"A"``.

        Only ``system="A", trans="N"`` uses the fused block kernels; the other systems run
        SciPy's compiled triangular solves on the explicit factors (built on first use, about
        three times the work). See :mod:`graphsolve.factor_queries`.

        Raises
        ------
        ShapeError
            ``b`` has the wrong shape.
        DTypeError
            ``b`` is complex or not numeric (real ``b`` of any dtype, lists and ``np.matrix``
            included, is solved in float64 and ``x`` is a float64 ndarray; a scipy.sparse
            ``b`` is solved densely and ``x`` returned in ``b``'s sparse format, as
            :func:`scipy.sparse.linalg.spsolve` does).
        NonFiniteError
            ``b`` contains NaN or inf.
        ValueError
            Unknown ``system`` or ``trans``.
        GraphSolveError
            The last (re)factorization failed.

        Examples
        --------
        >>> import numpy as np, graphsolve as gs
        >>> A = gs.random_block_matrix(gs.generators.ladder(4), "unsymmetric", 2, seed=0)
        >>> F = gs.factorize(A)
        >>> b = np.arange(A.shape[0], dtype=float)
        >>> bool(np.allclose(A.to_scipy().T @ F.solve(b, trans="T"), b))
        True
        """
        if system not in SYSTEMS:
            raise ValueError(f"system must be one of {SYSTEMS}, got {system!r}")
        if trans not in ("N", "T"):
            raise ValueError(f"trans must be 'N' or 'T', got {trans!r}")
        self._require_valid()
        N = self.analysis.N
        if sp.issparse(b):                  # like spsolve: a sparse b gives a sparse x
            sb = cast(Any, b)
            if sb.shape[0] != N:
                raise ShapeError(f"b has shape {sb.shape}; expected ({N},) or ({N}, k)")
            return type(sb)(self.solve(sb.toarray(), system, trans))
        b = np.asarray(b)
        _check_dtype(b.dtype, "b")
        if b.ndim not in (1, 2) or b.shape[0] != N:
            raise ShapeError(f"b has shape {b.shape}; expected ({N},) or ({N}, k)")
        transposed = trans == "T" and not (self.method == "ldlt" and system == "A")
        if system != "A" or transposed:
            b = np.asarray(b, dtype=np.float64)
            if not np.isfinite(b).all():
                raise NonFiniteError(f"b contains NaN or inf (first at index "
                                     f"{np.argwhere(~np.isfinite(b))[0].tolist()})")
            return partial_solve(self, b, system, transposed)
        x = b.copy() if b.dtype == np.float64 else np.array(
            b, dtype=np.result_type(b.dtype, np.float64), order="C", copy=True)
        if not self._kernel.solve(self.analysis, self._Dlu, self._piv, self._L, self._U, x,
                                  self.method == "ldlt"):
            raise NonFiniteError(f"b contains NaN or inf (first at index "
                                 f"{np.argwhere(~np.isfinite(b))[0].tolist()})")
        return x

    __call__ = solve

    def aslinearoperator(self) -> spla.LinearOperator:
        """``A⁻¹`` as a :class:`scipy.sparse.linalg.LinearOperator` (``rmatvec`` and
        ``rmatmat`` apply ``A⁻ᵀ``)."""
        N = self.analysis.N

        def transposed(b: np.ndarray) -> np.ndarray:
            return self.solve(b, trans="T")

        return spla.LinearOperator((N, N), matvec=self.solve, matmat=self.solve, dtype=float,
                                   rmatvec=transposed, rmatmat=transposed)

    # ------------------------------------------------------------------ queries
    def slogdet(self) -> tuple[float, float]:
        """Sign and natural log of ``|det A|``, like :func:`numpy.linalg.slogdet`:
        ``det A = Π_j det D_j`` over the pivot blocks (``L`` and ``U`` are unit triangular,
        ``det P`` appears squared).

        Examples
        --------
        >>> import numpy as np, graphsolve as gs
        >>> A = gs.random_block_matrix(gs.generators.random_tree(5, seed=1), "unsymmetric", 3,
        ...                          seed=2)
        >>> sign, logdet = gs.factorize(A).slogdet()
        >>> bool(np.allclose([sign, logdet], np.linalg.slogdet(A.to_scipy().toarray())))
        True
        """
        self._require_valid()
        sign, logdet = queries.slogdet(self.analysis, self._pivots())
        return float(sign), float(logdet)

    def inertia(self, tol: float | None = None) -> Inertia:
        """Numbers of positive, negative and zero eigenvalues of the symmetric ``A``
        (Sylvester's law of inertia: ``A`` is congruent to the block diagonal ``D``).

        Needs a factor of a symmetric matrix: an LDLᵀ factorization, or an LDU one whose
        ``U`` equals ``Lᵀ`` and whose pivot blocks are symmetric to a relative
        ``1e-10``. An eigenvalue of a pivot block counts as zero when its magnitude is at
        most ``tol`` (default ``N · eps · max|λ|``).

        Raises
        ------
        GraphSolveError
            The factorization is of an unsymmetric matrix, or is not valid.

        Examples
        --------
        A KKT matrix ``[[M, Jᵀ], [J, 0]]`` with definite ``M`` and full-rank ``J`` has one
        positive eigenvalue per body row and one negative per constraint row (here three
        bodies of 6 rows and two joints of 3 rows):

        >>> import graphsolve as gs
        >>> G = gs.generators.constraint_graph(gs.generators.path(3))
        >>> A = gs.random_block_matrix(G, "kkt", seed=0)
        >>> gs.factorize(A, method="ldlt").inertia()
        Inertia(positive=18, negative=6, zero=0)
        """
        self._require_valid()
        if self.method == "ldu":
            self._require_symmetric_factor()
        result = queries.inertia(self.analysis, self._pivots(), tol)
        assert isinstance(result, Inertia)                  # one factor: one Inertia
        return result

    def _require_symmetric_factor(self) -> None:
        L, U = self.L, self.U
        diff = abs(U - L.T).max() if L.nnz else 0.0
        Dm = self.D
        asym = abs(Dm - Dm.T).max() if Dm.nnz else 0.0
        scale_l = max(abs(L).max(), 1.0)
        scale_d = abs(Dm).max() if Dm.nnz else 1.0
        if diff > 1e-10 * scale_l or asym > 1e-10 * scale_d:
            raise GraphSolveError(
                "inertia needs the factor of a symmetric matrix; this LDU factor has "
                f"max|U - Lᵀ| = {diff:.3g} and max|D - Dᵀ| = {asym:.3g} (factor a symmetric "
                "matrix with method='ldlt')")

    @property
    def P(self) -> sp.csr_array:
        """The permutation as a sparse matrix: ``P @ A @ P.T == L @ D @ U``
        (``P[i, p[i]] = 1`` with ``p = F.perm``)."""
        return queries.permutation_matrix(self.analysis)

    # ------------------------------------------------------------------ explicit factors
    @property
    def perm(self) -> np.ndarray:
        """Scalar permutation ``p`` with ``A[p][:, p] == L @ D @ U``."""
        return queries.permutation(self.analysis)

    def _permuted_offsets(self) -> np.ndarray:
        return queries.permuted_offsets(self.analysis)

    def _triangular(self, which: str) -> sp.csr_array:
        an = self.analysis
        s, off = an.block_sizes, self._permuted_offsets()
        p, c = an.fe_parent, an.fe_child
        if which == "L" or self.method == "ldlt":
            rows, cols = block_coordinates(off[p], off[c], s[p], s[c])
            data = self._L
            if which == "U":
                rows, cols = cols, rows
        else:
            rows, cols = block_coordinates(off[c], off[p], s[c], s[p])
            data = self._U
        eye = np.arange(an.N)
        return sp.csr_array((np.concatenate([data, np.ones(an.N)]),
                             (np.concatenate([rows, eye]), np.concatenate([cols, eye]))),
                            shape=(an.N, an.N))

    @property
    def L(self) -> sp.csr_array:
        """Unit block-lower-triangular factor (permuted numbering; built once per
        factorization)."""
        return self._explicit("L")

    @property
    def U(self) -> sp.csr_array:
        """Unit block-upper-triangular factor (``L.T`` for LDLᵀ)."""
        return self._explicit("U")

    @property
    def D(self) -> sp.csr_array:
        """Block-diagonal factor (permuted numbering)."""
        return self._explicit("D")

    def _explicit(self, which: str) -> sp.csr_array:
        self._require_valid()
        if which not in self._explicit_cache:
            self._explicit_cache[which] = (self._diagonal() if which == "D"
                                           else self._triangular(which))
        return self._explicit_cache[which]

    def _diagonal(self) -> sp.csr_array:
        an = self.analysis
        s, off = an.block_sizes, self._permuted_offsets()
        idx = an.order                          # D holds the blocks in elimination order
        rows, cols = block_coordinates(off[idx], off[idx], s[idx], s[idx])
        return sp.csr_array((self._pivots(), (rows, cols)), shape=(an.N, an.N))

    def _require_valid(self) -> None:
        if self._implicit_state:
            raise GraphSolveError("the factorization holds an implicit-L factor made by "
                                  "refactor_solve (fused_handle(implicit=True)); call "
                                  "refactor first")
        if not self._valid:
            raise GraphSolveError("the factorization is not valid: its last refactor failed")

    def __repr__(self) -> str:
        an = self.analysis
        return (f"Factorization(method={self.method!r}, ordering={an.ordering!r}, "
                f"nodes={an.n_nodes}, N={an.N}, fill_pairs={an.n_fill})")


# ---------------------------------------------------------------------- functions
#: Factor buffers of at least this many bytes are mapped in base (4 KiB) pages.
SMALL_PAGES_BYTES = 1 << 22


def _zeros(n: int, populate: bool = False) -> np.ndarray:
    """``n`` float64 zeros; ``populate``: for a buffer the factorization will write in full.

    Past :data:`SMALL_PAGES_BYTES` the buffer is an anonymous mapping of its own, in base
    (4 KiB) pages where NumPy would ask for transparent huge pages: on the virtual machines we
    benchmark on, the first write to a fresh 2 MiB page can stall on memory compaction (a first
    factorization of crystal 22³, 300 MB of factor, once took 0.4-0.5 s longer than a refactor
    in huge pages). A populated mapping (``MAP_POPULATE``) has its pages made by the
    kernel in one call, which costs a fraction of faulting them in one by one from the
    factor kernel: 117 MB (a 10⁵-node path's factor) 60-80 ms against 140-180 ms, measured
    2026-11-26. Buffers that may stay unwritten (``U`` of an LDLᵀ factor) keep their pages
    unmapped until written. Platforms without these flags get ``np.zeros``.
    """
    if 8 * n < SMALL_PAGES_BYTES or not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return np.zeros(n)
    if populate and hasattr(mmap, "MAP_POPULATE"):
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE
        return np.frombuffer(mmap.mmap(-1, 8 * n, flags=flags), np.float64, n)
    buf = mmap.mmap(-1, 8 * n)
    buf.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(buf, np.float64, n)


def allocate(analysis: Analysis, method: str = "ldu", backend: str = "compiled",
             pivot_rtol: float = PIVOT_RTOL) -> Factorization:
    """An unfactored :class:`Factorization` (buffers only) for ``analysis``.

    For code that fills it through :meth:`Factorization.refactor` or the low-level
    :meth:`Factorization.fused_handle`; ``solve`` raises until a factorization succeeds.
    """
    if method not in ("ldu", "ldlt"):
        raise GraphSolveError(f"method must be 'ldu' or 'ldlt', got {method!r}")
    return Factorization(analysis, method, resolve_backend(backend), pivot_rtol)


def factorize(A: BlockMatrix, method: str = "auto", ordering: str | Sequence[int] = "auto",
              analysis: Analysis | None = None, backend: str = "auto",
              root: int | None = None, pivot_rtol: float = PIVOT_RTOL) -> Factorization:
    """Factor a block matrix in the order of its graph.

    Parameters
    ----------
    A : BlockMatrix
    method : {"auto", "ldu", "ldlt"}
        ``"ldu"`` takes any matrix; ``"ldlt"`` requires ``A`` symmetric (to a relative
        ``1e-12``) and reads its lower triangle; ``"auto"`` picks ``"ldlt"`` for input
        symmetric to a relative ``1e-12`` (``max|A - Aᵀ| <= 1e-12 max|A|``, as ``"ldlt"``
        accepts; the lower triangle is factored) and ``"ldu"`` otherwise.
    ordering : str or sequence of int
        See :func:`graphsolve.analyze` (default ``"auto"``); ignored when ``analysis`` is
        given.
    analysis : Analysis, optional
        Reuse a symbolic analysis (its graph must contain ``A``'s pattern).
    backend : {"auto", "compiled", "reference"}
        ``"reference"``: the readable NumPy kernels; ``"compiled"``: the same algorithm compiled
        with numba; ``"auto"``: ``"compiled"`` when numba is available.
    root : int, optional
        DFS root, see :func:`graphsolve.analyze`.
    pivot_rtol : float
        Relative singularity threshold of pivot blocks (see :class:`Factorization`); pass a
        smaller value (or 0) for systems that are legitimately ill-conditioned, such as the
        Newton matrices of an interior-point method near convergence.

    Returns
    -------
    Factorization
        With ``A[p][:, p] == L @ D @ U`` (LDU) or ``L @ D @ L.T`` (LDLᵀ), ``p = F.perm``.

    Raises
    ------
    SingularBlockError
        A pivot block is (numerically) singular; ``.node`` names it.
    PatternError, ShapeError, NonFiniteError, GraphSolveError
        ``A`` outside the analysed pattern, bad shapes, NaN/inf, ``ldlt`` on an unsymmetric
        matrix, unknown method or backend.

    References
    ----------
    Brüdigam et al. (2023), Alg. 1-4; Brüdigam & Manchester (2020), Alg. 3-4; Baraff (1996),
    §7 and Appendix A.

    Examples
    --------
    >>> import numpy as np, graphsolve as gs
    >>> A = gs.random_block_matrix(gs.generators.ladder(8), "unsymmetric", block_size=3)
    >>> F = gs.factorize(A)
    >>> b = np.arange(A.shape[0], dtype=float)
    >>> bool(np.allclose(A.to_scipy() @ F.solve(b), b))
    True
    >>> p = F.perm
    >>> bool(np.allclose(A.to_dense()[p][:, p], (F.L @ F.D @ F.U).toarray()))
    True
    """
    if not isinstance(A, BlockMatrix):
        raise GraphSolveError(f"factorize expects a BlockMatrix, got {type(A).__name__}; wrap "
                              "a scipy matrix with BlockMatrix.from_scipy(S, block_sizes)")
    if method not in ("auto", "ldu", "ldlt"):
        raise GraphSolveError(f'unknown method {method!r}; expected "auto", "ldu" or "ldlt"')
    backend = resolve_backend(backend)
    if analysis is None:
        analysis = analyze(A, ordering, root=root)
    if method != "auto":
        return Factorization(analysis, method, backend, pivot_rtol).refactor(A)
    F = Factorization(analysis, "ldlt", backend, pivot_rtol)
    if F._try_ldlt(A):                            # symmetric (to the tolerance): LDLᵀ stands
        return F
    A.check_finite()                              # NaN/inf: raise, naming the block
    if A.is_symmetric(rtol=LDLT_SYMMETRY_RTOL):   # symmetric but singular: LDLᵀ's error
        return F.refactor(A)
    F.method = "ldu"
    return F.refactor(A)


def solve(A: BlockMatrix, b: ArrayLike | SparseMatrix, **kwargs: Any
          ) -> np.ndarray | SparseMatrix:
    """One-shot ``A x = b``: :func:`factorize` (same keywords) then ``solve``.

    Examples
    --------
    >>> import numpy as np, graphsolve as gs
    >>> A = gs.random_block_matrix(gs.generators.net(3), "spd", block_size=2)
    >>> x = gs.solve(A, np.ones(18))
    >>> bool(np.allclose(A.to_scipy() @ x, 1.0))
    True
    """
    return factorize(A, **kwargs).solve(b)


def factorized(S: BlockMatrix | SparseMatrix | ArrayLike,
               block_sizes: Sequence[int] | int | None = None, graph: nx.Graph | None = None,
               **kwargs: Any) -> Callable[..., np.ndarray | SparseMatrix]:
    """``scipy.sparse.linalg.factorized`` look-alike: factor ``S`` once, return ``solve(b)``.

    ``S`` is a :class:`BlockMatrix` (``block_sizes`` and ``graph`` must then be None), or a
    sparse or dense matrix that :meth:`BlockMatrix.from_scipy` partitions with ``block_sizes``
    and ``graph`` (both optional: the blocks are then inferred, see
    :func:`graphsolve.matrix.infer_block_sizes`). ``kwargs`` go to :func:`factorize`.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, graphsolve as gs
    >>> S = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(6, 6))
    >>> solve = gs.factorized(S, [2, 2, 2])
    >>> bool(np.allclose(S @ solve(np.ones(6)), 1.0))
    True
    >>> bool(np.allclose(S @ gs.factorized(S)(np.ones(6)), 1.0))   # blocks inferred
    True
    """
    if isinstance(S, BlockMatrix):
        if block_sizes is not None or graph is not None:
            raise GraphSolveError("factorized(A) of a BlockMatrix takes no block_sizes or graph "
                                  "(the matrix has them)")
        return factorize(S, **kwargs).solve
    return factorize(BlockMatrix.from_scipy(S, block_sizes, graph), **kwargs).solve


# ---------------------------------------------------------------------- helpers
class GatherMap:
    """Where the values of one matrix layout go in the factor buffers of an analysis.

    The diagonal section of ``A.data`` (blocks by node) goes to ``D`` (blocks in elimination
    order, :attr:`diag_index`); every off-diagonal block
    ``b`` of ``A`` is the contiguous run ``A.data[src[b]:src[b] + length[b]]`` and lands in
    ``U`` (``upper[b]``) or ``L`` at ``dst[b]``. :attr:`elements` gives the same map entry by
    entry (for NumPy fancy indexing); ``transpose`` is the transpose index of ``A.data`` when
    requested (batch LDLᵀ symmetry check).
    """

    def __init__(self, A: BlockMatrix, an: Analysis, transpose: bool = False):
        _check_compatible(A, an)
        a_indptr, a_indices = A._edge_csr()
        self.lsrc, self.usrc, self.dst, self.upper, bad = assembly.gather_sources(
            a_indptr, a_indices, A.edge_ptr, an.position, an.child_ptr, an.fe_child, an.fe_ptr)
        if bad >= 0:
            u, v = (int(x) for x in A.edges[bad])
            raise PatternError(f"block ({u}, {v}) is not in the analysed pattern: the analysis "
                               "has no edge there; analyze the new graph", (u, v))
        if not assembly.upper_edges_equal(a_indptr, a_indices, an.edges):
            inside = an.has_edges(A.edges)                # not the analysed graph itself:
            if not inside.all():                          # a fill pair is not an edge
                u, v = (int(x) for x in A.edges[np.flatnonzero(~inside)[0]])
                raise PatternError(f"block ({u}, {v}) is not in the analysed pattern: the "
                                   "analysis has no edge there; analyze the new graph", (u, v))
        self.n_diag = int(A.diag_ptr[-1])
        self.src = A.edge_ptr[:-1]
        self.length = np.diff(A.edge_ptr)
        self.transpose = A.transpose_index() if transpose else None
        self._elements: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._diag_index: np.ndarray | None = None
        self._d_ptr, self._diag_ptr = an.d_ptr, A.diag_ptr
        self._diag_len = (A.block_sizes * A.block_sizes).astype(np.int64)

    @property
    def diag_index(self) -> np.ndarray:
        """``D = data[diag_index]`` (the analysis lays ``D`` out in elimination order)."""
        if self._diag_index is None:
            k = np.arange(self.n_diag)
            dst = np.repeat(self._d_ptr[:-1] - self._diag_ptr[:-1], self._diag_len) + k
            index = np.empty(self.n_diag, np.int64)
            index[dst] = k
            self._diag_index = index
        return self._diag_index

    @property
    def elements(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(src_l, dst_l, src_u, dst_u)``: ``L[dst_l] = data[src_l]``, same for ``U``."""
        if self._elements is None:
            src = np.arange(self.src[0], self.src[0] + self.length.sum()) if self.length.size \
                else np.zeros(0, np.int64)
            dst = np.repeat(self.dst - self.src, self.length) + src
            up = np.repeat(self.upper, self.length)
            self._elements = (src[~up], dst[~up], src[up], dst[up])
        return self._elements


def _check_compatible(A: BlockMatrix, an: Analysis) -> None:
    if not isinstance(A, BlockMatrix):
        raise GraphSolveError(f"expected a BlockMatrix, got {type(A).__name__}")
    if A.n_nodes != an.n_nodes:
        raise ShapeError(f"the matrix has {A.n_nodes} nodes but the analysis {an.n_nodes}")
    if not np.array_equal(A.block_sizes, an.block_sizes):
        i = int(np.flatnonzero(A.block_sizes != an.block_sizes)[0])
        raise ShapeError(f"node {i} has block size {int(A.block_sizes[i])} in the matrix but "
                         f"{int(an.block_sizes[i])} in the analysis; analyze the matrix itself "
                         "(gs.analyze(A)) or pass block_sizes= to gs.analyze")


def _singular_error(an: Analysis, node: int) -> SingularBlockError:
    role = an.node_data.get(node, {}).get("role")
    hint = ""
    if node in an.zero_diagonal and an.ordering in ("natural", "given"):
        hint = ("; it has a zero diagonal block and the ordering eliminates it before its "
                "neighbours: use ordering='brudigam'")
    return SingularBlockError(
        f"pivot block of node {node} (size {int(an.block_sizes[node])}"
        + (f", role {role}" if role else "") + f", position {int(an.position[node])} of "
        f"{an.n_nodes} in the {an.ordering!r} order) is singular" + hint, node=node)


def _check_symmetric(A: BlockMatrix) -> None:
    """The LDLᵀ symmetry rule for a matrix that is not exactly symmetric: ``max|A - Aᵀ|`` at
    most :data:`LDLT_SYMMETRY_RTOL` ``· max|A|`` (assembly round-off passes)."""
    if not A.is_symmetric(rtol=LDLT_SYMMETRY_RTOL):
        raise GraphSolveError(_asymmetry_message(A, A.transpose_index()))


def _asymmetry_message(A: BlockMatrix, t: np.ndarray) -> str:
    diff = np.abs(A.data - A.data[t])
    k = int(np.argmax(diff))
    if k < A.diag_ptr[-1]:
        i = int(np.searchsorted(A.diag_ptr, k, side="right") - 1)
        blk: tuple[int, ...] = (i, i)
    else:
        e = int(np.searchsorted(A.edge_ptr, k, side="right") - 1)
        blk = tuple(int(v) for v in A.edges[e])
    return (f"method='ldlt' needs a symmetric matrix; block {blk} differs from the transpose "
            f"of block {blk[::-1]} by {diff[k]:.3g}; use method='ldu'")
