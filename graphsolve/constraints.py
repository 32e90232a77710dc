"""Baraff's primary/auxiliary constraint solver: O(n) primary constraints, O(nk) auxiliaries.

Sign conventions (Baraff 1996, eq. 1-7): bodies with SPD mass blocks ``M_i`` move by

    M v̇ = Jᵀλ + F_ext,          J v̇ + c = 0   (equality rows),
                                a = J v̇ + c ≥ 0, μ ≥ 0, a·μ = 0   (inequality rows),

where ``c`` is the ``rhs`` given to :meth:`ConstraintSystem.add_constraint` and the force of an
inequality is ``Jᵀμ`` (``Kμ`` for a non-workless one), so ``μ ≥ 0`` pushes towards ``a ≥ 0``.
Equivalently ``v̇`` minimises ``½ v̇ᵀMv̇ − F_extᵀv̇`` subject to the constraints, and the KKT
matrix reads ``[[M, Jᵀ], [J, 0]] [v̇; −λ] = [F_ext; −c]``.

The **primary** constraints (two-body, equality, workless, acyclic) give the sparse matrix
``H = [[M, Jpᵀ], [Jp, 0]]`` on the bipartite body/constraint tree (eq. 8 with ``−λ`` as unknown),
factored once by :func:`graphsolve.factorize` (LDLᵀ, leaves→root, no fill, §7). Every other
constraint is **auxiliary** (§8): its rows are scalar conditions ``a = C μ + q`` (eq. 12) with
``C = Jᵃ M̂⁻¹ K`` built column by column from ``k`` solves with ``H`` and solved densely
(:mod:`graphsolve.lcp`): equality rows by Cholesky (LU if not workless), inequality rows by
Lemke's method with lexicographic pivoting, mixed ones after eliminating the equalities with a
Schur complement. The steps are those of §8.2.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeAlias, cast

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike

from .analysis import Analysis, analyze
from .errors import GraphError, GraphSolveError, NonFiniteError, ShapeError, SingularBlockError
from .factor import Factorization, factorize
from .lcp import AuxiliaryFactor, DependentRowsError, InfeasibleLCPError
from .matrix import BlockMatrix

__all__ = ["ConstraintSystem", "Constraint", "ConstraintSolution", "ConstraintOps",
           "InfeasibleConstraintsError"]

KINDS = ("equality", "inequality")
#: External forces: one array per body, or one flat array of all of them.
Forces: TypeAlias = "ArrayLike | Sequence[ArrayLike]"
METHODS = ("auto", "workless", "general")


class InfeasibleConstraintsError(InfeasibleLCPError):
    """The constraints admit no acceleration; ``.constraints`` names the conflicting ones."""

    def __init__(self, message: str, constraints: tuple[int, ...]):
        super().__init__(message, ())
        self.constraints = constraints


@dataclass(frozen=True)
class Constraint:
    """One constraint as given: ``Σ_b J_b v̇_b + c`` (``= 0`` or ``≥ 0``) with force
    ``Σ_b K_bᵀ λ`` on body ``b`` (``K_b = J_b`` unless non-workless ``force_directions``)."""

    bodies: tuple[int, ...]
    jacobians: tuple[np.ndarray, ...]
    rhs: np.ndarray
    kind: str
    forces: tuple[np.ndarray, ...]
    workless: bool

    @property
    def rows(self) -> int:
        return int(self.rhs.size)


@dataclass(frozen=True)
class ConstraintOps:
    """Operation counts of one solve.

    ``primary_block_ops``: block pivots / scalings / update triples of the factorization of
    ``H`` (O(n), ``updates == 0`` on a tree); ``coefficient_solves``: solves with ``H`` that
    built ``C`` (``== k``, the auxiliary rows), of kind ``"forward"`` (workless shortcut: L and D
    only) or ``"full"``; ``primary_solves``: full solves of steps 2 and 5; ``solve_flops``: flops
    of one full solve (O(n)); ``lcp_pivots``: Lemke pivots; ``factorizations``: numeric
    factorizations of ``H`` so far (one per :meth:`ConstraintSystem.factor`, none per solve).
    """

    primary_block_ops: dict
    factorizations: int
    fill_pairs: int
    coefficient_solves: int
    coefficient_solve_kind: str
    primary_solves: int
    solve_flops: int
    lcp_pivots: int


@dataclass(frozen=True)
class ConstraintSolution:
    """Result of :meth:`ConstraintSystem.solve`.

    Attributes
    ----------
    acceleration : list of ndarray
        ``v̇_i`` of every body (views of ``acceleration_vector``, made on first access).
    multipliers : list of ndarray
        ``λ`` (equalities) or ``μ`` (inequalities) of every constraint, in the order added
        (views of ``multiplier_vector``).
    acceleration_vector, multiplier_vector : ndarray
        The same, concatenated (read-only).
    body_offsets, row_offsets : ndarray
        Where body ``i`` / constraint ``j`` starts in them.
    primary, auxiliary : tuple of int
        Constraint indices of the split.
    residuals : dict
        ``dynamics``: ``‖M v̇ − Σ Kλ − F‖∞``; ``equality``: ``max |J v̇ + c|`` over equality rows;
        ``min_a``, ``min_mu``: smallest ``a`` and ``μ`` of inequality rows (``inf`` if none);
        ``complementarity``: ``max |a·μ|``.
    ops : ConstraintOps
    method : str
        ``"workless"`` or ``"general"`` (how ``C`` was built).
    """

    acceleration_vector: np.ndarray
    multiplier_vector: np.ndarray
    body_offsets: np.ndarray
    row_offsets: np.ndarray
    primary: tuple
    auxiliary: tuple
    residuals: dict
    ops: ConstraintOps
    method: str

    def __post_init__(self) -> None:
        self.acceleration_vector.flags.writeable = False
        self.multiplier_vector.flags.writeable = False

    @cached_property
    def acceleration(self) -> list[np.ndarray]:
        return _pieces(self.acceleration_vector, self.body_offsets)

    @cached_property
    def multipliers(self) -> list[np.ndarray]:
        return _pieces(self.multiplier_vector, self.row_offsets)


@dataclass
class _Symbolic:
    primary: tuple
    auxiliary: tuple
    H: BlockMatrix
    analysis: Analysis
    c_primary: np.ndarray
    Ja: sp.csr_array
    Ka: sp.csr_array
    ca: np.ndarray
    inequality: np.ndarray
    aux_rows: list            # (constraint, row) of every auxiliary row
    J: sp.csr_array           # all constraints, rows in the order added
    K: sp.csr_array           # force directions, (n_v, rows)
    c: np.ndarray
    row_ptr: np.ndarray
    M: sp.csr_array           # block-diagonal mass matrix
    inequality_rows: np.ndarray
    primary_rows: np.ndarray   # row of λ (order added) of every primary row of H
    aux_row_index: np.ndarray  # row of λ of every auxiliary row
    F: Factorization | None = None
    perm: np.ndarray | None = None
    factorizations: int = 0
    aux: AuxiliaryFactor | None = None
    method: str = ""
    ops: dict = field(default_factory=dict)


class ConstraintSystem:
    """Bodies with SPD mass blocks and constraints, solved by Baraff's primary/auxiliary method.

    Parameters
    ----------
    mass_blocks : sequence of array_like
        ``M_i``, symmetric positive definite, any size (6 for a rigid body, 3 for a particle).
    backend : str
        Kernel backend of :func:`graphsolve.factorize`.

    Raises
    ------
    ShapeError, NonFiniteError
        A mass block that is not a square 2-D finite array.
    SingularBlockError
        A mass block that is not symmetric positive definite (``.node`` is the body).

    Notes
    -----
    The split is automatic unless :meth:`set_primary` is called: primary is a maximum-row
    spanning forest (Kruskal, ties by index) of the two-body, workless equality constraints whose
    two Jacobian blocks have full row rank; all others (loop closures, one-body, three-or-more-
    body, non-workless and inequality constraints) are auxiliary (Baraff 1996, §1.1, §8).

    References
    ----------
    Baraff (1996), eq. 1-12, §7 (factorization of ``H``), §8.2 (steps 1-6), Appendix A.

    Examples
    --------
    >>> import numpy as np
    >>> system = ConstraintSystem([np.eye(2), 2 * np.eye(2)])
    >>> system.add_constraint((0, 1), [np.eye(2), -np.eye(2)], [0.0, 0.0])     # v̇0 = v̇1
    0
    >>> system.add_constraint(0, [[0.0, 1.0]], [1.0], kind="inequality")   # v̇0[1] + 1 ≥ 0
    1
    >>> res = system.solve([np.array([0.0, -6.0]), np.zeros(2)])
    >>> res.primary, res.auxiliary
    ((0,), (1,))
    >>> np.round(res.acceleration[0], 12), np.round(res.multipliers[1], 12)
    (array([ 0., -1.]), array([3.]))
    """

    def __init__(self, mass_blocks: Sequence, backend: str = "auto"):
        self.masses: list[np.ndarray] = []
        for i, m in enumerate(mass_blocks):
            m = np.array(m, dtype=float)            # a private, read-only copy
            if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
                raise ShapeError(f"mass block of body {i} must be square and non-empty, got "
                                 f"shape {m.shape}")
            if not np.all(np.isfinite(m)):
                raise NonFiniteError(f"mass block of body {i} contains NaN or inf")
            if np.max(np.abs(m - m.T)) > 1e-12 * np.max(np.abs(m)):
                raise SingularBlockError(f"mass block of body {i} is not symmetric", node=i)
            try:
                np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                raise SingularBlockError(f"mass block of body {i} is not positive definite "
                                         "(Cholesky failed)", node=i) from None
            m.flags.writeable = False
            self.masses.append(m)
        if not self.masses:
            raise GraphError("a constraint system needs at least one body")
        self.body_sizes = np.array([m.shape[0] for m in self.masses], dtype=np.int64)
        self.body_offsets = np.concatenate([[0], np.cumsum(self.body_sizes)])
        self.body_offsets.flags.writeable = False
        self.backend = backend
        self.constraints: list[Constraint] = []
        self._user_primary: tuple[int, ...] | None = None
        self._sym: _Symbolic | None = None

    @property
    def n_bodies(self) -> int:
        return len(self.masses)

    # ------------------------------------------------------------------ building
    def add_constraint(self, bodies: int | Sequence[int],
                       jacobians: ArrayLike | Sequence[ArrayLike], rhs: ArrayLike,
                       kind: str = "equality",
                       force_directions: Sequence[ArrayLike] | None = None) -> int:
        """Add ``Σ_b J_b v̇_b + c = 0`` (``kind="equality"``) or ``≥ 0`` (``"inequality"``).

        Parameters
        ----------
        bodies : int or sequence of int
            One, two or more distinct body indices.
        jacobians : array_like or sequence of array_like
            One block ``J_b`` of shape ``(m, dim(b))`` per body (a 1-D block is one row).
        rhs : float or array_like, shape (m,)
            ``c`` (a float is used for every row).
        kind : {"equality", "inequality"}
        force_directions : sequence of array_like, optional
            Blocks ``K_bᵀ`` (shapes as ``jacobians``) of a non-workless constraint force
            ``Σ K_bᵀ λ`` (Baraff §8.1, eq. 11); such a constraint is always auxiliary.

        Returns
        -------
        int
            The constraint's index.

        Raises
        ------
        GraphError
            A body index out of range or repeated, or an unknown ``kind``.
        ShapeError
            Block shapes disagreeing with each other, the bodies or ``rhs``.
        NonFiniteError
            NaN or inf in the data.
        """
        idx = len(self.constraints)
        if kind not in KINDS:
            raise GraphError(f"constraint {idx}: unknown kind {kind!r}; expected {KINDS}")
        listed: tuple[Any, ...] = ((bodies,) if np.isscalar(bodies)
                                   else tuple(cast(Sequence[int], bodies)))
        if not listed:
            raise GraphError(f"constraint {idx} acts on no body")
        for b in listed:
            if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not (
                    0 <= b < self.n_bodies):
                raise GraphError(f"constraint {idx}: body {b!r} is out of range (the system has "
                                 f"{self.n_bodies} bodies, 0..{self.n_bodies - 1})")
        if len(set(listed)) != len(listed):
            raise GraphError(f"constraint {idx}: body listed twice in {listed}")
        body_ids = tuple(int(b) for b in listed)
        per_body: Sequence[Any] = cast(Sequence[Any], jacobians)
        if len(body_ids) == 1:                      # a bare block instead of a list of one
            try:
                if np.asarray(jacobians, dtype=float).ndim in (1, 2):
                    per_body = [jacobians]
            except ValueError:
                pass
        blocks = self._blocks(idx, body_ids, per_body, "Jacobian")
        m = blocks[0].shape[0]
        c = np.atleast_1d(np.array(rhs, dtype=float)).ravel()
        if c.size == 1 and m > 1 and np.ndim(rhs) == 0:
            c = np.full(m, float(c[0]))
        if c.shape != (m,):
            raise ShapeError(f"constraint {idx}: rhs has {c.size} entries, the Jacobian {m} rows")
        if not np.all(np.isfinite(c)):
            raise NonFiniteError(f"constraint {idx}: rhs contains NaN or inf")
        c.flags.writeable = False
        forces = blocks if force_directions is None else self._blocks(
            idx, body_ids, force_directions, "force direction")
        if any(f.shape[0] != m for f in forces):
            raise ShapeError(f"constraint {idx}: force directions must have {m} rows")
        workless = all(np.array_equal(f, j) for f, j in zip(forces, blocks, strict=True))
        self.constraints.append(Constraint(body_ids, blocks, c, kind, forces, workless))
        self._sym = None
        return idx

    def _blocks(self, idx: int, bodies: tuple[int, ...], arrays: Iterable[ArrayLike], what: str
                ) -> tuple[np.ndarray, ...]:
        arrays = list(arrays)
        if len(arrays) != len(bodies):
            raise ShapeError(f"constraint {idx}: {len(arrays)} {what} blocks for "
                             f"{len(bodies)} bodies {bodies}")
        out: list[np.ndarray] = []
        for b, a in zip(bodies, arrays, strict=True):
            a = np.atleast_2d(np.array(a, dtype=float))     # a private, read-only copy
            if a.ndim != 2 or a.shape[1] != self.body_sizes[b] or a.shape[0] == 0 or (
                    out and a.shape[0] != out[0].shape[0]):
                rows = out[0].shape[0] if out else "m"
                raise ShapeError(f"constraint {idx}: {what} block on body {b} has shape "
                                 f"{a.shape}, expected ({rows}, {self.body_sizes[b]})")
            if not np.all(np.isfinite(a)):
                raise NonFiniteError(f"constraint {idx}: {what} block on body {b} contains "
                                     "NaN or inf")
            a.flags.writeable = False
            out.append(a)
        return tuple(out)

    def set_primary(self, indices: Iterable[int] | None) -> None:
        """Choose the primary constraints (``None``: automatic split, see the class Notes).

        Raises
        ------
        GraphError
            An index that is not a two-body workless equality constraint, or a set with a cycle
            (naming the constraint that closes it).
        """
        if indices is None:
            self._user_primary = None
        else:
            chosen = tuple(int(i) for i in indices)
            for i in chosen:
                if not 0 <= i < len(self.constraints):
                    raise GraphError(f"primary constraint {i} does not exist")
                c = self.constraints[i]
                if len(c.bodies) != 2 or c.kind != "equality" or not c.workless:
                    raise GraphError(f"constraint {i} cannot be primary: primary constraints "
                                     "are workless equalities between exactly two bodies")
            forest = _UnionFind(self.n_bodies)
            for i in chosen:
                if not forest.union(*self.constraints[i].bodies):
                    raise GraphError(f"primary constraint {i} (bodies "
                                     f"{self.constraints[i].bodies}) closes a cycle; primary "
                                     "constraints must be acyclic (make it auxiliary)")
            self._user_primary = chosen
        self._sym = None

    def split(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(primary, auxiliary)`` constraint indices: the user's set (:meth:`set_primary`)
        or the automatic spanning forest of the class Notes (Baraff 1996, §1.1, §8)."""
        if self._user_primary is not None:
            primary = tuple(sorted(self._user_primary))
        else:
            cand = [i for i, c in enumerate(self.constraints)
                    if len(c.bodies) == 2 and c.kind == "equality" and c.workless
                    and all(np.linalg.matrix_rank(j) == c.rows for j in c.jacobians)]
            cand.sort(key=lambda i: -self.constraints[i].rows)
            forest = _UnionFind(self.n_bodies)
            primary = tuple(sorted(i for i in cand if forest.union(*self.constraints[i].bodies)))
        chosen = set(primary)
        return primary, tuple(i for i in range(len(self.constraints)) if i not in chosen)

    # ------------------------------------------------------------------ symbolic phase
    def _symbolic(self) -> _Symbolic:
        if self._sym is not None:
            return self._sym
        primary, auxiliary = self.split()
        nb, cons = self.n_bodies, self.constraints
        G = nx.Graph()
        G.add_nodes_from((b, {"role": "body", "size": int(s)})
                         for b, s in enumerate(self.body_sizes))
        off = {}
        for p, ci in enumerate(primary):
            G.add_node(nb + p, role="constraint", size=cons[ci].rows)
            for b, j in zip(cons[ci].bodies, cons[ci].jacobians, strict=True):
                G.add_edge(nb + p, b)
                off[(nb + p, b)] = j
        diag = self.masses + [np.zeros((cons[ci].rows,) * 2) for ci in primary]
        H = BlockMatrix.from_blocks(G, diag, off)
        an = analyze(H, "brudigam")
        J, K, row_ptr = self._assemble(range(len(cons)))
        c = np.concatenate([x.rhs for x in cons]) if cons else np.zeros(0)
        Ja, Ka, _ = self._assemble(auxiliary)
        aux_rows = [(ci, r) for ci in auxiliary for r in range(cons[ci].rows)]
        self._sym = _Symbolic(
            primary=primary, auxiliary=auxiliary, H=H, analysis=an,
            c_primary=np.concatenate([cons[ci].rhs for ci in primary]) if primary
            else np.zeros(0), Ja=Ja, Ka=Ka,
            ca=np.array([cons[ci].rhs[r] for ci, r in aux_rows]),
            inequality=np.array([cons[ci].kind == "inequality" for ci, _ in aux_rows], bool),
            aux_rows=aux_rows, J=J, K=K, c=c, row_ptr=row_ptr,
            M=sp.block_diag(self.masses, format="csr"),
            primary_rows=np.concatenate([np.arange(row_ptr[ci], row_ptr[ci + 1])
                                         for ci in primary] or [np.zeros(0, np.int64)]),
            aux_row_index=np.array([row_ptr[ci] + r for ci, r in aux_rows], dtype=np.int64),
            inequality_rows=np.repeat([x.kind == "inequality" for x in cons],
                                      [x.rows for x in cons]).astype(bool))
        return self._sym

    def _assemble(self, indices: Iterable[int]) -> tuple[sp.csr_array, sp.csr_array, np.ndarray]:
        """``J`` (rows of the given constraints × n_v), ``K`` (n_v × rows), row offsets."""
        rows, cols, jv, kv, ptr = [], [], [], [], [0]
        for ci in indices:
            con = self.constraints[ci]
            for b, j, f in zip(con.bodies, con.jacobians, con.forces, strict=True):
                r, cc = np.indices(j.shape)
                rows.append((r + ptr[-1]).ravel())
                cols.append((cc + self.body_offsets[b]).ravel())
                jv.append(j.ravel())
                kv.append(f.ravel())
            ptr.append(ptr[-1] + con.rows)
        nv = int(self.body_offsets[-1])

        def cat(parts: list) -> np.ndarray:
            return np.concatenate(parts) if parts else np.zeros(0)

        row_idx, col_idx = cat(rows).astype(np.int64), cat(cols).astype(np.int64)
        J = sp.csr_array((cat(jv), (row_idx, col_idx)), shape=(ptr[-1], nv))
        K = sp.csr_array((cat(kv), (col_idx, row_idx)), shape=(nv, ptr[-1]))
        row_ptr = np.asarray(ptr, dtype=np.int64)
        row_ptr.flags.writeable = False
        return J, K, row_ptr

    # ------------------------------------------------------------------ numeric phase
    def factor(self, method: str = "auto") -> ConstraintSystem:
        """Numeric phase: factor ``H`` (§8.2 step 1) and build and factor the auxiliary
        coefficient matrix ``C = Jᵃ M̂⁻¹ K`` of eq. 12 with ``k`` solves (step 3).

        ``method``:

        * ``"general"`` -- §8.2 step 3 as written: ``k`` full solves ``H [Y; ·] = [K; 0]``
          (one multi-column call), ``C = Jᵃ Y``. When every auxiliary is workless
          (``K = Jᵃᵀ``), ``C = Jᵃ M̂⁻¹ Jᵃᵀ`` is symmetric positive semi-definite and is
          symmetrized and factored by Cholesky; otherwise LU.
        * ``"workless"`` -- Rosenthal's shortcut (Baraff's acknowledgements): with
          ``P H Pᵀ = L D Lᵀ`` and ``B = [Jᵃᵀ; 0]``, ``C = Bᵀ H⁻¹ B = Wᵀ D⁻¹ W`` with
          ``W = L⁻¹ P B``: only the forward third of each solve, ``C`` exactly symmetric.
          ``W`` fills every ancestor of the constraint's bodies, so ``Wᵀ D⁻¹ W`` costs
          ``O(k² · depth)``; and :class:`~graphsolve.Factorization` has no forward-only solve,
          so it runs through ``F.L`` / ``F.D`` and SciPy. On chains it is slower than
          ``"general"`` (n = 1000, k = 150 rows: 146 ms vs 17 ms).
        * ``"auto"`` -- ``"general"``.

        Raises
        ------
        SingularBlockError
            A dependent primary constraint (a singular pivot of ``H``) or dependent auxiliary
            equality rows; ``.constraint`` names the constraint.
        GraphSolveError
            ``method="workless"`` with a non-workless auxiliary, or an unknown method.

        References
        ----------
        Baraff (1996), §7.3 and Appendix A (factor), §8.1 and eq. 12 (``C``), §8.2 steps 1 and
        3, §10 (the workless shortcut).
        """
        if method not in METHODS:
            raise GraphSolveError(f"unknown method {method!r}; expected one of {METHODS}")
        sym = self._symbolic()
        workless = all(self.constraints[ci].workless for ci in sym.auxiliary)
        if method == "workless" and not workless:
            bad = next(ci for ci in sym.auxiliary if not self.constraints[ci].workless)
            raise GraphSolveError(f'method="workless" needs workless auxiliaries; constraint '
                                  f"{bad} has its own force directions")
        method = "general" if method == "auto" else method
        try:
            if sym.F is None:
                sym.F = factorize(sym.H, method="ldlt", analysis=sym.analysis,
                                  backend=self.backend)
            else:
                sym.F.refactor(sym.H)
        except SingularBlockError as exc:
            raise self._name_pivot(sym, exc) from None
        sym.factorizations += 1
        nv, N = int(self.body_offsets[-1]), sym.analysis.N
        k = len(sym.aux_rows)
        if k:
            B = np.zeros((N, k))
            B[:nv] = sym.Ka.toarray()
            if method == "workless":
                F = sym.F
                if sym.perm is None:
                    sym.perm = F.perm
                W = spla.spsolve_triangular(F.L, B[sym.perm], lower=True, unit_diagonal=True)
                C = W.T @ spla.splu(F.D.tocsc(), permc_spec="NATURAL").solve(W)
            else:
                C = sym.Ja @ sym.F.solve(B)[:nv]
            if workless:
                C = 0.5 * (C + C.T)
            try:
                sym.aux = AuxiliaryFactor(C, sym.inequality, symmetric=workless, psd=workless)
            except DependentRowsError as exc:
                ci, r = sym.aux_rows[exc.row]
                err = SingularBlockError(f"auxiliary equality constraint {ci} (row {r}, bodies "
                                         f"{self.constraints[ci].bodies}) is redundant: it "
                                         "depends on the other equality constraints")
                err.constraint = ci
                raise err from None
        sym.method = method
        if not sym.ops:          # structural: the same for every refactor of this analysis
            sym.ops = {"primary_block_ops": dict(sym.F.stats["block_ops"]),
                       "solve_flops": sym.analysis.solve_flops("ldlt")}
        sym.ops.update({"factorizations": sym.factorizations,
                   "fill_pairs": sym.analysis.n_fill, "coefficient_solves": k,
                        "coefficient_solve_kind": "forward" if method == "workless" else "full"})
        return self

    def _name_pivot(self, sym: _Symbolic, exc: SingularBlockError) -> SingularBlockError:
        node, nb = exc.node, self.n_bodies
        if node is None or node < nb:
            err = SingularBlockError(f"body {node}: singular pivot while factoring H ({exc})",
                                     node=node)
            err.constraint = None
            return err
        ci = sym.primary[node - nb]
        err = SingularBlockError(
            f"primary constraint {ci} (bodies {self.constraints[ci].bodies}) is dependent or "
            "redundant: its pivot in H is singular (its rows depend on each other or on other "
            "primary constraints; its Jacobian blocks need full row rank). Make it auxiliary "
            "or remove it.", node=node)
        err.constraint = ci
        return err

    def solve(self, f_ext: Forces, method: str | None = None, residuals: bool = True
              ) -> ConstraintSolution:
        """Accelerations and multipliers for external forces ``f_ext`` (one array per body, or
        one flat array of all of them).

        Steps of Baraff (1996) §8.2: (1) factor ``H`` and (3) build ``C`` via :meth:`factor`
        (done once, reused; again only if ``method`` changes); (2) one solve
        ``H [v̇ᵃᵘˣ; −λ] = [F; −c_p]`` and ``q = Jᵃ v̇ᵃᵘˣ + cᵃ``; (4) ``μ`` from ``a = C μ + q``;
        (5) one solve ``H [v̇; −λ] = [F + K μ; −c_p]``. With ``residuals=False`` the
        (O(n)) residual check is skipped and ``.residuals`` is empty.

        Raises
        ------
        ShapeError, NonFiniteError
            Bad ``f_ext`` (naming the body).
        InfeasibleConstraintsError
            The constraints cannot all hold; ``.constraints`` names them.
        LCPError, SingularBlockError
            See :func:`graphsolve.lcp.lemke` and :meth:`factor`.

        References
        ----------
        Baraff (1996), eq. 6-8 and 10-12, §8.2 steps 2, 4 and 5.
        """
        sym = self._symbolic()
        if sym.F is None or (method is not None and method != sym.method):
            self.factor(method or "auto")
        f = self._forces(f_ext)
        nv = f.size
        assert sym.F is not None                  # factored above
        x = sym.F.solve(np.concatenate([f, -sym.c_primary]))          # step 2
        solves, pivots = 1, 0
        mu = np.zeros(0)
        if sym.aux_rows:
            assert sym.aux is not None            # made with the auxiliary rows
            q = sym.Ja @ x[:nv] + sym.ca
            try:
                mu, pivots = sym.aux.solve(q)                            # step 4
            except InfeasibleLCPError as exc:
                cons = tuple(sorted({sym.aux_rows[r][0] for r in exc.rows}))
                raise InfeasibleConstraintsError(
                    f"the constraints are infeasible: no acceleration satisfies constraints "
                    f"{list(cons) or list(sym.auxiliary)} together with the equalities", cons
                ) from None
            x = sym.F.solve(np.concatenate([f + sym.Ka @ mu, -sym.c_primary]))   # step 5
            solves += 1
        vdot = x[:nv].copy()
        lam = np.zeros(sym.c.size)
        lam[sym.primary_rows] = -x[nv:]        # H numbering: bodies, then primary constraints
        lam[sym.aux_row_index] = mu
        return ConstraintSolution(
            acceleration_vector=vdot, multiplier_vector=lam, body_offsets=self.body_offsets,
            row_offsets=sym.row_ptr,
            primary=sym.primary, auxiliary=sym.auxiliary,
            residuals=self._residuals(sym, vdot, lam, f) if residuals else {},
            ops=ConstraintOps(**sym.ops, primary_solves=solves, lcp_pivots=pivots),
            method=sym.method)

    def _forces(self, f_ext: Forces) -> np.ndarray:
        nv = int(self.body_offsets[-1])
        if isinstance(f_ext, np.ndarray) and f_ext.shape == (nv,) and f_ext.dtype != object:
            f = f_ext.astype(float)
        else:
            per_body = list(cast(Iterable[ArrayLike], f_ext))
            if len(per_body) != self.n_bodies:
                raise ShapeError(f"f_ext has {len(per_body)} entries for {self.n_bodies} bodies")
            out = [np.asarray(fb, dtype=float) for fb in per_body]
            for b, fb in enumerate(out):
                if fb.shape != (self.body_sizes[b],):
                    raise ShapeError(f"force on body {b} has shape {fb.shape}, expected "
                                     f"({self.body_sizes[b]},)")
            f = np.concatenate(out)
        if not np.all(np.isfinite(f)):
            b = int(np.searchsorted(self.body_offsets, np.flatnonzero(~np.isfinite(f))[0],
                                    side="right") - 1)
            raise NonFiniteError(f"force on body {b} contains NaN or inf")
        return f

    def _residuals(self, sym: _Symbolic, vdot: np.ndarray, lam: np.ndarray, f: np.ndarray
                   ) -> dict[str, float]:
        a = sym.J @ vdot + sym.c
        ineq = sym.inequality_rows
        return {"dynamics": float(np.max(np.abs(sym.M @ vdot - sym.K @ lam - f))),
                "equality": float(np.max(np.abs(a[~ineq]), initial=0.0)),
                "min_a": float(np.min(a[ineq], initial=np.inf)),
                "min_mu": float(np.min(lam[ineq], initial=np.inf)),
                "complementarity": float(np.max(np.abs(a[ineq] * lam[ineq]), initial=0.0))}

    # ------------------------------------------------------------------ oracles' inputs
    def kkt(self, f_ext: Forces) -> tuple[sp.csr_array, np.ndarray]:
        """``(S, b)``: the full KKT system ``S [v̇; −λ] = b = [F; −c]`` of :meth:`kkt_matrix`
        (an assembly of the inputs for oracles and benchmarks; it solves nothing)."""
        return self.kkt_matrix(), np.concatenate([self._forces(f_ext), -self._symbolic().c])

    def kkt_matrix(self) -> sp.csr_array:
        """``[[M, K], [J, 0]]`` (``K = Jᵀ`` when workless) over all constraints, rows in the
        order added: ``S [v̇; −λ] = [F; −c]`` when every constraint is an active equality."""
        sym = self._symbolic()
        blocks = [[sym.M, sym.K], [sym.J, None]]
        return sp.csr_array(sp.bmat(blocks, format="csr"))    # block_array: SciPy ≥ 1.12


def _pieces(x: np.ndarray, ptr: np.ndarray) -> list[np.ndarray]:
    p = ptr.tolist()
    return [x[a:b] for a, b in zip(p[:-1], p[1:], strict=True)]


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[ra] = rb
        return True
