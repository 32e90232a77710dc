"""Solver adapters: graphsolve and its peers behind one protocol.

Every adapter has ``analyze(case)`` (symbolic), ``factor(case)`` (first numeric factorization),
``refactor(case)`` (numeric only, same pattern), ``solve(b)`` and ``stats()`` (stored factor
entries and, where the solver knows them, fill and flops). ``unsupported(case)`` returns a reason
string for a matrix kind or size the solver does not handle, so the runner records a skip rather
than an error. A solver that has no separate symbolic phase does all its work in ``factor``
(``analyze`` is then a no-op and reported as such).

Peers: CHOLMOD through scikit-sparse (its own simplicial/supernodal choice for ``spd``,
simplicial LDLᵀ for ``kkt``; analyze once, ``cholesky_inplace`` to refactor), SuperLU
(``scipy.sparse.linalg.splu`` with COLAMD or NATURAL column order), QDLDL (``qdldl`` wheel:
AMD + LDLᵀ of quasi-definite matrices, ``update`` to refactor), dense LAPACK LU (``getrf``) on
the same matrix, and Brüdigam & Manchester (2020)'s dense block LDU for small sizes.
"""

from __future__ import annotations

import importlib.metadata
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import graphsolve as gs

__all__ = ["Case", "Solver", "SOLVERS", "make_solvers", "package_version"]


@dataclass
class Case:
    """One benchmark system: a block matrix ``A`` (and its CSC copy ``S``) and a right-hand side.

    ``kind`` is ``"spd"``, ``"kkt"``, ``"unsymmetric"`` or ``"paper"`` (the original Fig. 9
    benchmark's i.i.d. normal blocks, see :mod:`comparisons.paper`). ``orderings`` maps an
    ordering name to an explicit node order that replaces it for this case (the paper suite
    pins the original's DFS order). ``labelling`` names the node numbering: ``"native"`` (the
    generator's) or, for a case from :func:`comparisons.suite.relabel_case`, a random one, whose
    node permutation (old node ``i`` is node ``perm[i]``) is ``perm``.
    """

    family: str
    size: int
    kind: str
    A: gs.BlockMatrix
    b: np.ndarray
    orderings: dict = field(default_factory=dict)
    seed: int = 0
    labelling: str = "native"
    perm: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        self.S = sp.csc_matrix(self.A.to_scipy())

    @property
    def nodes(self) -> int:
        return self.A.n_nodes

    @property
    def N(self) -> int:
        return self.A.shape[0]


def package_version(name: str) -> str:
    """Installed version of a distribution; for graphsolve run from a source tree, its
    ``__version__``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return gs.__version__ if name == "graphsolve" else "not installed"


class Solver(ABC):
    """Base adapter. Subclasses set ``name``, ``kinds`` and implement the protocol."""

    name = "solver"
    package = ""
    kinds: tuple[str, ...] = ("spd", "kkt", "unsymmetric", "paper")
    max_N: int | None = None
    has_analyze = True

    def system(self, case: Case):
        """The ``(S, b)`` this solver is timed on and checked against (the case's own)."""
        return case.S, case.b

    def unsupported(self, case: Case) -> str | None:
        if case.kind not in self.kinds:
            return f"{self.name} does not handle kind {case.kind!r} (supports {self.kinds})"
        if self.max_N is not None and case.N > self.max_N:
            return f"N = {case.N} above this solver's benchmark limit {self.max_N}"
        return None

    def version(self) -> str:
        return package_version(self.package) if self.package else ""

    @abstractmethod
    def analyze(self, case: Case) -> None:
        """Symbolic phase (ordering, fill); a no-op for solvers without one."""

    @abstractmethod
    def factor(self, case: Case) -> None:
        """First numeric factorization after :meth:`analyze`."""

    def refactor(self, case: Case) -> None:
        self.factor(case)

    @abstractmethod
    def solve(self, b: np.ndarray) -> np.ndarray:
        """Solve with the current factorization."""

    def stats(self) -> dict:
        return {}


class GraphsolveSolver(Solver):
    """graphsolve with one ordering and backend (analysis once, ``refactor`` after)."""

    package = "graphsolve"

    def __init__(self, ordering: str = "brudigam", backend: str = "compiled"):
        self.ordering, self.backend = ordering, backend
        self.name = f"graphsolve-{ordering}-{backend}"

    def analyze(self, case):
        self.an = gs.analyze(case.A, case.orderings.get(self.ordering, self.ordering))

    def factor(self, case):
        self.F = gs.factorize(case.A, analysis=self.an, backend=self.backend)

    def refactor(self, case):
        self.F.refactor(case.A)

    def solve(self, b):
        return self.F.solve(b)

    def stats(self):
        st = self.F.stats
        return {"factor_nnz": st["factor_nnz"], "fill_pairs": st["fill_pairs"],
                "flops": st["flops"], "method": st["method"]}


class CholmodSolver(Solver):
    """CHOLMOD (scikit-sparse 0.4.16). spd: CHOLMOD's own choice (``mode="auto"``:
    simplicial on trees and ladders, supernodal LLᵀ on nets and crystals; forcing supernodal
    is ~3× slower on trees). kkt: simplicial LDLᵀ (supernodal needs positive definiteness)."""

    name = "cholmod"
    package = "scikit-sparse"
    kinds = ("spd", "kkt")

    def unsupported(self, case):
        try:
            import sksparse.cholmod  # noqa: F401
        except ImportError as exc:
            return f"scikit-sparse not importable ({exc})"
        return super().unsupported(case)

    def analyze(self, case):
        from sksparse import cholmod

        self.mode = "auto" if case.kind == "spd" else "simplicial"
        self.F = cholmod.analyze(case.S, mode=self.mode)

    def factor(self, case):
        self.F.cholesky_inplace(case.S)

    def solve(self, b):
        return self.F(b)

    def stats(self):
        # LD() keeps an indefinite LDLᵀ as it is (L() would convert it to LLᵀ and fail)
        L = self.F.L() if self.mode == "auto" else self.F.LD()
        return {"factor_nnz": int(L.nnz), "method": f"cholmod-{self.mode}"}


class SuperLUSolver(Solver):
    """SciPy's SuperLU (partial pivoting) with a COLAMD or NATURAL column order."""

    package = "scipy"
    has_analyze = False

    def __init__(self, permc_spec: str = "COLAMD"):
        self.permc_spec = permc_spec
        self.name = f"superlu-{permc_spec.lower()}"

    def analyze(self, case):
        pass

    def factor(self, case):
        self.lu = spla.splu(case.S, permc_spec=self.permc_spec)

    def solve(self, b):
        return self.lu.solve(b)

    def stats(self):
        return {"factor_nnz": int(self.lu.L.nnz + self.lu.U.nnz), "method": "lu"}


class QDLDLSolver(Solver):
    """QDLDL (``qdldl`` wheel): AMD ordering and LDLᵀ of a quasi-definite matrix; the
    constructor analyses and factors, ``update`` refactors."""

    name = "qdldl"
    package = "qdldl"
    kinds = ("spd", "kkt")
    has_analyze = False

    def unsupported(self, case):
        try:
            import qdldl  # noqa: F401
        except ImportError as exc:
            return f"qdldl not importable ({exc})"
        return super().unsupported(case)

    def analyze(self, case):
        # QDLDL needs every diagonal entry in the pattern, also the zero ones of a KKT matrix
        T = sp.triu(case.S, format="coo")
        n = case.N
        self.triu = sp.csc_matrix((np.concatenate([T.data, np.zeros(n)]),
                                   (np.concatenate([T.row, np.arange(n)]),
                                    np.concatenate([T.col, np.arange(n)]))), shape=(n, n))

    def factor(self, case):
        import qdldl

        self.Q = qdldl.Solver(self.triu, upper=True)

    def refactor(self, case):
        self.Q.update(self.triu, upper=True)

    def solve(self, b):
        return self.Q.solve(b)

    def stats(self):
        L, D, _ = self.Q.factors()
        return {"factor_nnz": int(L.nnz + D.size), "method": "ldlt"}


class DenseLUSolver(Solver):
    """LAPACK LU (``getrf``/``getrs``) on the dense form of the same matrix."""

    name = "dense-lapack-lu"
    package = "scipy"
    max_N = 3000
    has_analyze = False

    def analyze(self, case):
        self.dense = case.A.to_dense()

    def factor(self, case):
        self.lu = gs.dense.lapack_lu(self.dense)

    def solve(self, b):
        return self.lu.solve(b)

    def stats(self):
        return {"factor_nnz": int(self.dense.size), "method": "lu"}


class DensePaperSolver(DenseLUSolver):
    """The paper's dense baseline: LAPACK LU on a *separate* i.i.d. uniform [0, 1) matrix of
    the same size (ConstrainedDynamics.jl ``init2!``), not on the graph system."""

    name = "dense-lapack-lu-separate"
    kinds = ("paper",)

    def system(self, case):
        from .paper import paper_dense_matrix, paper_vector

        if getattr(self, "_for", None) != (case.N, case.seed):
            self._system = (paper_dense_matrix(case.N, seed=case.seed + 7),
                            paper_vector(case.N, seed=case.seed + 8, distribution="uniform"))
            self._for = (case.N, case.seed)
        return self._system

    def analyze(self, case):
        self.dense = self.system(case)[0]


class DenseBlockLDUSolver(DenseLUSolver):
    """Brüdigam & Manchester (2020) Alg. 1-2: dense block LDU, O(n³); small sizes only."""

    name = "dense-block-ldu"
    package = "graphsolve"
    max_N = 1200

    def factor(self, case):
        self.lu = gs.dense.dense_block_ldu(self.dense, case.A.block_sizes)

    def stats(self):
        return {"factor_nnz": int(self.dense.size), "method": "ldu"}


def _registry() -> dict[str, callable]:
    reg = {}
    for ordering in gs.ORDERINGS:
        for backend in ("compiled", "reference"):
            reg[f"graphsolve-{ordering}-{backend}"] = (
                lambda o=ordering, be=backend: GraphsolveSolver(o, be))
    reg.update({
        "cholmod": CholmodSolver,
        "qdldl": QDLDLSolver,
        "superlu-colamd": lambda: SuperLUSolver("COLAMD"),
        "superlu-natural": lambda: SuperLUSolver("NATURAL"),
        "dense-lapack-lu": DenseLUSolver,
        "dense-lapack-lu-separate": DensePaperSolver,
        "dense-block-ldu": DenseBlockLDUSolver,
    })
    return reg


#: Every solver name the runner knows, mapped to a factory.
SOLVERS = _registry()


def make_solvers(names) -> list[Solver]:
    """Instantiate solvers by name; unknown names raise ``ValueError`` listing the choices."""
    unknown = [n for n in names if n not in SOLVERS]
    if unknown:
        raise ValueError(f"unknown solver(s) {unknown}; choose from {sorted(SOLVERS)}")
    return [SOLVERS[n]() for n in names]
