"""Dense solvers for Baraff's auxiliary constraints: Lemke's LCP method and mixed systems.

The auxiliary constraints of :class:`graphsolve.constraints.ConstraintSystem` meet in one dense
``k × k`` relation ``a = C μ + q`` (Baraff 1996, eq. 12). Equality rows ask ``a = 0``;
inequality rows ask ``a ≥ 0, μ ≥ 0, a·μ = 0`` -- a linear complementarity problem (LCP).

Method
------
Inequalities are solved with **Lemke's complementary pivoting algorithm** with the covering vector
``d = (1, …, 1)`` and the **lexicographic minimum-ratio rule** (Cottle, Pang & Stone 1992,
§4.4 and §4.9). Why this method:

* it is a finite, direct method (no iteration tolerance), like the rest of Baraff's scheme;
* for a copositive-plus matrix -- every symmetric positive *semi*-definite ``C``, which is what
  workless auxiliary constraints give, ``C = Jᵃ M̂⁻¹ Jᵃᵀ`` -- it either finds a solution or ends
  on a secondary ray, and the ray proves that the LCP has **no** solution (CPS Theorem 4.4.13),
  so infeasible input is reported, never answered wrongly;
* the lexicographic rule makes every basis lexicographically feasible and the pivot sequence
  unique, so degenerate problems (``a = 0`` and ``μ = 0`` at once, duplicated or linearly
  dependent contact rows, i.e. a singular ``C``) cannot cycle (CPS Theorem 4.4.2);
* Dantzig/Cottle principal pivoting is simpler but needs ``C`` positive definite, which
  redundant contacts violate.

Mixed equality and inequality rows are handled by eliminating the equalities with a Schur
complement (``C_ee`` is positive definite when the equality rows are independent): the LCP
``a_i = S μ_i + q̃`` with ``S = C_ii − C_ie C_ee⁻¹ C_ei`` (again positive semi-definite) and
``q̃ = q_i − C_ie C_ee⁻¹ q_e``, then ``μ_e = −C_ee⁻¹ (q_e + C_ei μ_i)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla

from .errors import GraphSolveError, NonFiniteError, ShapeError, SingularBlockError

__all__ = ["LCPError", "InfeasibleLCPError", "DependentRowsError", "LCPSolution", "lemke",
           "AuxiliaryFactor", "DEPENDENCE_RTOL"]

#: A pivot of the equality block counts as zero (the row depends on earlier rows) below
#: ``DEPENDENCE_RTOL`` times the largest diagonal entry.
DEPENDENCE_RTOL = 1e-11
_PIVOT_TOL = 1e-11          # entering-column entries of the scaled tableau treated as zero
_TIE_TOL = 1e-12            # ratio ties (scaled tableau)
_CHECK_RTOL = 1e-8          # final acceptance test of an LCP solution


class LCPError(GraphSolveError):
    """Lemke's method found no solution it can vouch for (pivot limit, ray termination on a
    matrix that is not positive semi-definite, or a solution failing the final check)."""


class InfeasibleLCPError(LCPError):
    """The LCP has no solution: ray termination on a positive semi-definite matrix.

    Attributes
    ----------
    rows : tuple[int, ...]
        Rows in the support of the ray (the mutually contradicting conditions).
    """

    def __init__(self, message: str, rows: tuple[int, ...] = ()):
        super().__init__(message)
        self.rows = rows


class DependentRowsError(SingularBlockError):
    """Equality rows of the auxiliary system are linearly dependent; ``.row`` is the first row
    (in the given order) that depends on the rows before it."""

    def __init__(self, message: str, row: int):
        super().__init__(message, node=None)
        self.row = row


@dataclass(frozen=True)
class LCPSolution:
    """``z ≥ 0, w = M z + q ≥ 0, zᵀw = 0`` and the number of complementary pivots."""

    z: np.ndarray
    w: np.ndarray
    pivots: int


def _lexmin(rows: np.ndarray, keys: np.ndarray) -> int:
    """Index (into ``rows``) of the lexicographically smallest row of ``keys``."""
    cand = np.arange(rows.size)
    for j in range(keys.shape[1]):
        col = keys[cand, j]
        m = col.min()
        cand = cand[col <= m + _TIE_TOL * max(1.0, abs(m))]
        if cand.size == 1:
            break
    return int(cand[0])


def lemke(M: np.ndarray, q: np.ndarray, psd: bool = True, max_pivots: int | None = None
          ) -> LCPSolution:
    """Solve the LCP ``w = M z + q, z ≥ 0, w ≥ 0, zᵀw = 0`` by Lemke's method.

    Parameters
    ----------
    M : ndarray, shape (k, k)
    q : ndarray, shape (k,)
    psd : bool
        ``M`` is known to be positive semi-definite (copositive-plus); a secondary ray then
        proves infeasibility (:class:`InfeasibleLCPError`), otherwise :class:`LCPError`.
    max_pivots : int, optional
        Default ``50 (k + 1)``.

    Returns
    -------
    LCPSolution

    Raises
    ------
    InfeasibleLCPError
        No solution exists (``psd``).
    LCPError
        Ray termination without ``psd``, too many pivots, or a result failing the final check
        ``z, w ≥ −1e-8 s``, ``|zᵢwᵢ| ≤ 1e-8 s²`` (``s`` the problem's scale).
    ShapeError, NonFiniteError
        Bad input.

    References
    ----------
    Lemke (1965); Cottle, Pang & Stone, *The Linear Complementarity Problem* (1992), Alg. 4.4.5
    with the lexicographic rule of §4.9; Baraff (1996), §8.1 and §8.2 step 4.

    Examples
    --------
    >>> import numpy as np
    >>> sol = lemke(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, 1.0]))
    >>> sol.z, sol.w
    (array([0.5, 0. ]), array([0. , 1.5]))
    """
    M = np.asarray(M, dtype=float)
    q = np.asarray(q, dtype=float).ravel()
    k = q.size
    if M.shape != (k, k):
        raise ShapeError(f"LCP matrix has shape {M.shape}, expected ({k}, {k})")
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(q))):
        raise NonFiniteError("LCP data contains NaN or inf")
    if k == 0 or q.min() >= 0:
        return LCPSolution(np.zeros(k), q.copy(), 0)
    scale = max(float(np.abs(M).max()), float(np.abs(q).max()))
    # tableau of  I w − M z − d z0 = q  (scaled); columns w: 0..k-1, z: k..2k-1, z0: 2k
    T = np.zeros((k, 2 * k + 1))
    T[:, :k] = np.eye(k)
    T[:, k:2 * k] = -M / scale
    T[:, 2 * k] = -1.0
    rhs = q / scale
    basis = np.arange(k)

    def pivot(r: int, e: int) -> int:
        p = T[r, e]
        T[r] /= p
        rhs[r] /= p
        f = T[:, e].copy()
        f[r] = 0.0
        T[...] -= np.outer(f, T[r])
        rhs[...] -= f * rhs[r]
        leaving = int(basis[r])
        basis[r] = e
        return leaving

    # z0 enters at the level that makes every w nonnegative; lexicographic tie-break
    rows = np.arange(k)
    leaving = pivot(_lexmin(rows, np.column_stack([rhs, T[:, :k]])), 2 * k)
    limit = 50 * (k + 1) if max_pivots is None else max_pivots
    pivots = 1
    while True:
        entering = leaving + k if leaving < k else leaving - k     # the complement
        col = T[:, entering]
        cand = np.flatnonzero(col > _PIVOT_TOL)
        if cand.size == 0:
            ray = sorted({int(basis[i]) - k for i in np.flatnonzero(col < -_PIVOT_TOL)
                          if k <= basis[i] < 2 * k} | ({entering - k} if entering >= k else set()))
            if psd:
                raise InfeasibleLCPError(
                    "the complementarity problem has no solution (Lemke ray termination on a "
                    f"positive semi-definite matrix); conflicting rows {ray}", tuple(ray))
            raise LCPError("Lemke's method ended on a secondary ray; the matrix is not known to "
                           "be positive semi-definite, so no conclusion about solvability")
        ratios = rhs[cand] / col[cand]
        m = ratios.min()
        tied = cand[ratios <= m + _TIE_TOL * max(1.0, abs(m))]
        z0_row = np.flatnonzero(basis[tied] == 2 * k)
        if z0_row.size:                       # z0 can leave: a solution is reached at once
            r = int(tied[z0_row[0]])
        else:
            keys = np.column_stack([rhs[tied], T[tied, :k]]) / col[tied, None]
            r = int(tied[_lexmin(tied, keys)])
        leaving = pivot(r, entering)
        pivots += 1
        if leaving == 2 * k:
            break
        if pivots >= limit:
            raise LCPError(f"Lemke's method did not finish within {limit} pivots")
    in_basis = (basis >= k) & (basis < 2 * k)
    z = np.zeros(k)
    z[basis[in_basis] - k] = np.maximum(rhs[in_basis], 0.0)
    return _polish(M, q, z, basis[in_basis] - k, pivots)


def _polish(M: np.ndarray, q: np.ndarray, z: np.ndarray, active: np.ndarray, pivots: int
            ) -> LCPSolution:
    """Re-solve ``M_SS z_S = −q_S`` on the final active set (a nonsingular principal block of a
    Lemke basis) to remove the rounding of the tableau, keep the better candidate, check it."""
    def violation(zz: np.ndarray) -> tuple[float, np.ndarray]:
        ww = M @ zz + q
        return max(0.0, -zz.min(), -ww.min(), float(np.max(np.abs(zz * ww)))), ww

    best, (bad, w) = z, violation(z)
    if active.size:
        try:
            zs = np.linalg.solve(M[np.ix_(active, active)], -q[active])
            cand = np.zeros_like(z)
            cand[active] = np.maximum(zs, 0.0)
            cbad, cw = violation(cand)
            if cbad <= bad:
                best, bad, w = cand, cbad, cw
        except np.linalg.LinAlgError:
            pass
    s = max(float(np.abs(q).max()), float(np.abs(M).max() * np.abs(best).max()), 1e-300)
    zs = max(float(np.abs(best).max()), 1e-300)  # type: ignore[arg-type]
    if (best.min() < -_CHECK_RTOL * zs or w.min() < -_CHECK_RTOL * s
            or np.max(np.abs(best * w)) > _CHECK_RTOL * s * zs):
        raise LCPError(f"Lemke's result fails the complementarity check (violation {bad:.3g})")
    return LCPSolution(best, w, pivots)


class AuxiliaryFactor:
    """Factorization of the auxiliary coefficient matrix of Baraff (1996), eq. 12.

    Splits ``a = C μ + q`` into equality rows ``e`` (``a_e = 0``) and inequality rows ``i``
    (``a_i ≥ 0, μ_i ≥ 0, a_i μ_i = 0``); factors ``C_ee`` once (Cholesky when ``symmetric``,
    LU otherwise) and forms the Schur complement ``S = C_ii − C_ie C_ee⁻¹ C_ei`` of the mixed LCP
    (see the module docstring). :meth:`solve` then handles any ``q`` in ``O(k²)`` (equalities
    only) or by Lemke's method.

    Parameters
    ----------
    C : ndarray, shape (k, k)
    inequality : ndarray of bool, shape (k,)
    symmetric : bool
        ``C`` is exactly symmetric (workless constraints built with the symmetric shortcut).
    psd : bool
        ``C`` is positive semi-definite in exact arithmetic (all constraints workless).

    Raises
    ------
    DependentRowsError
        The equality rows are linearly dependent; ``.row`` names the first dependent one.

    Examples
    --------
    >>> import numpy as np
    >>> aux = AuxiliaryFactor(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([False, True]))
    >>> mu, pivots = aux.solve(np.array([1.0, 1.0]))
    >>> mu                       # a_0 = 2μ0 + μ1 + 1 = 0; a_1 = 0.5 ≥ 0 with μ1 = 0
    array([-0.5,  0. ])
    """

    def __init__(self, C: np.ndarray, inequality: np.ndarray, symmetric: bool = True,
                 psd: bool = True):
        C = np.asarray(C, dtype=float)
        self.inequality = np.asarray(inequality, dtype=bool)
        self.eq = np.flatnonzero(~self.inequality)
        self.ineq = np.flatnonzero(self.inequality)
        self.symmetric, self.psd = symmetric, psd
        e, i = self.eq, self.ineq
        self._fac = None
        if e.size:
            Cee = C[np.ix_(e, e)]
            self._fac = self._factor(Cee)
        if i.size:
            self.C_ie, self.C_ei = C[np.ix_(i, e)], C[np.ix_(e, i)]
            S = C[np.ix_(i, i)]
            if e.size:
                S = S - self.C_ie @ self._solve_ee(self.C_ei)
            self.S = 0.5 * (S + S.T) if symmetric else S

    def _factor(self, Cee: np.ndarray) -> tuple[np.ndarray, Any]:
        scale = float(np.max(np.abs(np.diag(Cee)))) if Cee.size else 0.0
        try:
            if self.symmetric:            # pivots of C_ee = RᵀR are R_jj²
                fac = sla.cho_factor(Cee, lower=False, check_finite=False)
                piv = np.diag(fac[0]) ** 2
            else:
                fac = sla.lu_factor(Cee, check_finite=False)
                piv = np.abs(np.diag(fac[0]))
            if scale > 0 and piv.min() > DEPENDENCE_RTOL * scale:
                return fac
        except (np.linalg.LinAlgError, ValueError):
            pass
        row = _first_dependent(Cee, scale)
        raise DependentRowsError(f"equality row {int(self.eq[row])} of the auxiliary system "
                                 "depends linearly on the rows before it", int(self.eq[row]))

    def _solve_ee(self, b: np.ndarray) -> np.ndarray:
        if self.symmetric:
            return sla.cho_solve(self._fac, b, check_finite=False)
        return sla.lu_solve(self._fac, b, check_finite=False)

    def solve(self, q: np.ndarray) -> tuple[np.ndarray, int]:
        """``(μ, Lemke pivots)`` with ``a = C μ + q`` meeting the equality / complementarity
        conditions. Raises :class:`InfeasibleLCPError` (rows numbered in ``q``) or
        :class:`LCPError`."""
        q = np.asarray(q, dtype=float)
        mu = np.zeros(q.size)
        e, i = self.eq, self.ineq
        pivots = 0
        if i.size:
            qt = q[i] - self.C_ie @ self._solve_ee(q[e]) if e.size else q[i]
            try:
                sol = lemke(self.S, qt, psd=self.psd)
            except InfeasibleLCPError as exc:
                rows = tuple(int(i[r]) for r in exc.rows)
                raise InfeasibleLCPError(str(exc).rsplit(";", 1)[0] + f"; conflicting rows "
                                         f"{list(rows)}", rows) from None
            mu[i], pivots = sol.z, sol.pivots
            if e.size:
                mu[e] = -self._solve_ee(q[e] + self.C_ei @ sol.z)
        elif e.size:
            mu[e] = -self._solve_ee(q[e])
        return mu, pivots


def _first_dependent(C: np.ndarray, scale: float) -> int:
    """First ``j`` whose leading ``(j+1) × (j+1)`` block of ``C`` is rank deficient."""
    tol = DEPENDENCE_RTOL * max(scale, 1e-300) * max(C.shape[0], 1)
    for j in range(C.shape[0]):
        if np.linalg.matrix_rank(C[:j + 1, :j + 1], tol=tol) <= j:
            return j
    return C.shape[0] - 1
