"""The interior-point Newton matrix with the contacts' slack variables condensed out.

Each contact adds to the step's unknowns ``u = [γ, s_φ, β (m), η (m), ψ, s_ψ]`` (one graph node,
:mod:`.contacts`), and its rows are of two kinds:

* the **complementarity rows** ``γ s_φ - μ``, ``β_i η_i - μ``, ``ψ s_ψ - μ``
  (:meth:`.ContactGroup.complementarity_pairs`): their entries are ``s_φ, γ``, ``η_i, β_i``,
  ``s_ψ, ψ`` in the columns of their own two variables and nothing else (no body entries);
* the **equation rows** ``s_φ - φ``, ``B ż + ψ - η`` (m) and ``s_ψ - c_f γ + 1ᵀβ``
  (Brüdigam et al. 2023 eq. 22-29), which couple the contact to its bodies.

Pairing every complementarity row ``E`` with its slack column (``s_φ``, ``η_i``, ``s_ψ``),
``F_EE`` is diagonal with the positive entries ``γ, β_i, ψ`` of the interior point, and the
Schur complement on the remaining rows ``K`` (``φ``, friction, cone) and columns (``γ``, ``β``,
``ψ``),

    F_KK - F_KE F_EE⁻¹ F_EK,

is the contact block of the **condensed matrix** (Nocedal & Wright 2006 §19.3, the
primal-dual system with the slacks eliminated): ``m + 2`` rows instead of ``4 + 2m`` (one
instead of two without friction), diagonal ``-s_φ/γ``, ``η_i/β_i``, ``-s_ψ/ψ`` in this
pairing. The body-contact blocks keep the ``K`` columns and the contact-body blocks the ``K``
rows; nothing else changes (bodies and joints are the graph's first nodes, so their rows keep
their place). graphsolve factors the condensed matrix on the same graph in the same elimination
order; a solve condenses the right-hand side (``r_K - F_KE F_EE⁻¹ r_E``), solves, and recovers
the slacks' components (``Δ_E = F_EE⁻¹ (r_E - F_EK Δ_K)``). Eliminating a contact node of
``sphere_chain(10)`` costs half as much this way (blocks 6×6 against 12×12 with four friction
directions).

Both the compiled interior point (:mod:`.interior_point_kernels`) and the Python reference
(:meth:`.StepSystem.factor`, :meth:`.StepSystem.resolve`) solve through it, with the kernels
below; the iterative refinement stays on the full matrix (:meth:`.StepSystem.resolve`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

import graphsolve as gs
from graphsolve.lowlevel import STATUS_OK, refactor_solve, solve_factored

from .contact_kernels import _max_abs_nan

__all__ = ["Condensation", "condense_matrix", "condense_rhs", "expand_solution",
           "full_residual", "condensed_solve", "condensed_refactor_solve"]

# columns of the per-contact integer table ``meta``
(_K, _KR, _R0, _RR0, _D, _DR, _BCA, _BCB, _CBA, _CBB, _RBCA, _RBCB, _RCBA, _RCBB, _ROWA,
 _ROWB) = range(16)


class Condensation:
    """The condensed matrix of a step system's contact nodes (module docstring).

    Parameters
    ----------
    matrix : graphsolve.BlockMatrix
        The full Newton matrix (bodies, then joints, then contacts, as :class:`.StepSystem`
        numbers its nodes).
    contacts : list of ContactGroup
        The step system's contact groups, their ``nodes`` set.
    zero_diagonal : list of int
        Nodes with a structurally zero diagonal block (the joints).
    order : sequence of int
        The full matrix's elimination order, used for the condensed one.

    Attributes
    ----------
    reduced : graphsolve.BlockMatrix
        The condensed matrix (the same graph; contact blocks of ``m + 2`` rows, ``1`` without
        friction); :meth:`condense` writes it.
    analysis : graphsolve.Analysis
        Its analysis, in ``order``.
    arrays : tuple
        ``(n_plain, runs, meta, pattern, inv)``: the kernels' description (the rows before the
        first contact, the copied runs of entries ``(source, destination, length)``, per contact
        its sizes, rows and block pointers in both matrices, its block-local condensed rows and
        columns and slack rows and columns, and the reciprocals ``1/F_EE`` that
        :func:`condense_matrix` stores for the solves).
    plain_blocks : tuple
        ``(row0, col0, nrows, ncols, pointer)`` of the full matrix's blocks between bodies and
        joints (:func:`full_residual`).
    """

    def __init__(self, matrix: gs.BlockMatrix, contacts, zero_diagonal, order):
        sizes = matrix.block_sizes.astype(np.int64).copy()
        first = min(int(g.nodes[0]) for g in contacts)
        reduced_size = {}
        for g in contacts:
            sizes[g.nodes] = 1 if g.m == 0 else g.m + 2
            for c in g.nodes:
                reduced_size[int(c)] = int(sizes[c])
        self.reduced = gs.BlockMatrix(matrix.graph, sizes)
        self.analysis = gs.analyze(matrix.graph, ordering=list(order), block_sizes=sizes,
                                   zero_diagonal=zero_diagonal)
        R = self.reduced
        n_plain = int(matrix.offsets[first])
        if int(R.offsets[first]) != n_plain:
            raise AssertionError("contact nodes must follow the bodies and joints")
        # entries copied unchanged: diagonal blocks and edges of bodies and joints
        src, dst, length = [], [], []
        for i in range(first):
            src.append(matrix.diag_ptr[i])
            dst.append(R.diag_ptr[i])
            length.append(int(sizes[i]) ** 2)
        for e, (i, j) in enumerate(matrix.edges):
            if i < first and j < first:
                src.append(matrix.edge_ptr[e])
                dst.append(R.edge_ptr[R.edge_index(int(i), int(j))])
                length.append(int(sizes[i] * sizes[j]))
        runs = []
        for s, d, n in zip(src, dst, length, strict=True):
            if runs and runs[-1][0] + runs[-1][2] == s and runs[-1][1] + runs[-1][2] == d:
                runs[-1][2] += n
            else:
                runs.append([int(s), int(d), int(n)])
        maxk = max(g.size for g in contacts)
        n_contacts = sum(len(g) for g in contacts)
        meta = np.full((n_contacts, 16), -1, dtype=np.int64)
        pattern = np.zeros((n_contacts, 4, maxk), dtype=np.int64)
        c = 0
        for g in contacts:
            row, a, b = g.complementarity_pairs()
            krow = np.setdiff1d(np.arange(g.size), row)
            for i, node in enumerate(g.nodes):
                node = int(node)
                meta[c, _K], meta[c, _KR] = g.size, reduced_size[node]
                meta[c, _R0], meta[c, _RR0] = matrix.offsets[node], R.offsets[node]
                meta[c, _D], meta[c, _DR] = matrix.diag_ptr[node], R.diag_ptr[node]
                for end, body in enumerate((g.body[i], g.other[i])):
                    if body < 0:
                        continue
                    body = int(body)
                    meta[c, _BCA + end] = matrix.edge_ptr[matrix.edge_index(body, node)]
                    meta[c, _CBA + end] = matrix.edge_ptr[matrix.edge_index(node, body)]
                    meta[c, _RBCA + end] = R.edge_ptr[R.edge_index(body, node)]
                    meta[c, _RCBA + end] = R.edge_ptr[R.edge_index(node, body)]
                    meta[c, _ROWA + end] = matrix.offsets[body]
                for k, idx in enumerate((krow, a, row, b)):
                    pattern[c, k, :len(idx)] = idx
                c += 1
        self.arrays = (n_plain, np.array(runs, dtype=np.int64).reshape(-1, 3), meta, pattern,
                       np.zeros((n_contacts, maxk)))
        # the blocks between bodies and joints, for full_residual: (row0, col0, nrows, ncols,
        # pointer), in the buffer's order
        plain = [(i, i, matrix.diag_ptr[i]) for i in range(first)]
        plain += [(int(i), int(j), matrix.edge_ptr[e]) for e, (i, j) in enumerate(matrix.edges)
                  if i < first and j < first]
        off, size = matrix.offsets, matrix.block_sizes
        self.plain_blocks = tuple(np.ascontiguousarray(a, dtype=np.int64) for a in (
            [off[i] for i, _, _ in plain], [off[j] for _, j, _ in plain],
            [size[i] for i, _, _ in plain], [size[j] for _, j, _ in plain],
            [p for _, _, p in plain]))

    def condense(self, data: np.ndarray) -> gs.BlockMatrix:
        """:attr:`reduced` from the full matrix's values ``data`` (:func:`condense_matrix`)."""
        condense_matrix(self.arrays, data, self.reduced.data)
        return self.reduced

    def solver(self, handle) -> tuple:
        """``(handle, reduced data, arrays, scratch)``: what :func:`condensed_solve` and
        :func:`condensed_refactor_solve` take, ``handle`` a fused handle of :attr:`reduced`."""
        return (handle, self.reduced.data, self.arrays, np.empty(int(self.reduced.offsets[-1])))


@njit(cache=True, error_model="numpy", _nrt=False)
def condense_matrix(arrays, data, rdata, constant=True):
    """The condensed matrix's values ``rdata`` from the full ``data`` (module docstring);
    stores ``1/F_EE`` of every contact in ``arrays``' last member for the solves.

    Uses the contact blocks' structure: the ``i``-th condensed row has one slack entry, in the
    ``i``-th slack column, and the ``i``-th complementarity row one entry besides its slack's,
    in the ``i``-th condensed column, so ``F_KE F_EE⁻¹ F_EK`` is diagonal. Without
    ``constant`` only what a Jacobian without its constant entries changes is condensed again
    (:func:`.contact_kernels._contact_jacobian_into`: the complementarity rows and the distance
    row against the bodies): the diagonal of each condensed block, ``1/F_EE`` and the distance
    row of the contact-body blocks; the rest of the contacts' condensed blocks is taken to be
    in ``rdata`` from a call with ``constant`` in the same step."""
    n_plain, runs, meta, pattern, inv = arrays
    for r in range(runs.shape[0]):
        s, d = runs[r, 0], runs[r, 1]
        for i in range(runs[r, 2]):
            rdata[d + i] = data[s + i]
    for c in range(meta.shape[0]):
        k, kr, D, Dr = meta[c, _K], meta[c, _KR], meta[c, _D], meta[c, _DR]
        krow, kcol, erow, ecol = pattern[c, 0], pattern[c, 1], pattern[c, 2], pattern[c, 3]
        for i in range(kr):
            ri = D + krow[i] * k
            if constant:
                for j in range(kr):
                    rdata[Dr + i * kr + j] = data[ri + kcol[j]]
            re = D + erow[i] * k
            inv[c, i] = 1.0 / data[re + ecol[i]]
            rdata[Dr + i * kr + i] = (data[ri + kcol[i]]
                                      - data[ri + ecol[i]] * inv[c, i] * data[re + kcol[i]])
        for end in range(2):
            bc, cb = meta[c, _BCA + end], meta[c, _CBA + end]
            if bc < 0:
                continue
            rbc, rcb = meta[c, _RBCA + end], meta[c, _RCBA + end]
            if not constant:                    # the distance row (the first condensed one)
                for j in range(6):
                    rdata[rcb + j] = data[cb + krow[0] * 6 + j]
                continue
            for r in range(6):
                for j in range(kr):
                    rdata[rbc + r * kr + j] = data[bc + r * k + kcol[j]]
            for i in range(kr):
                for j in range(6):
                    rdata[rcb + i * 6 + j] = data[cb + krow[i] * 6 + j]


@njit(cache=True, error_model="numpy", _nrt=False)
def condense_rhs(arrays, data, rhs, xr):
    """The condensed right-hand side ``xr`` of ``rhs`` (``r_K - F_KE F_EE⁻¹ r_E`` in the
    contact rows) with the matrix of the last :func:`condense_matrix`."""
    n_plain, runs, meta, pattern, inv = arrays
    for i in range(n_plain):
        xr[i] = rhs[i]
    for c in range(meta.shape[0]):
        k, kr, r0, rr0, D = meta[c, _K], meta[c, _KR], meta[c, _R0], meta[c, _RR0], meta[c, _D]
        krow, erow, ecol = pattern[c, 0], pattern[c, 2], pattern[c, 3]
        for i in range(kr):
            xr[rr0 + i] = (rhs[r0 + krow[i]]
                           - data[D + krow[i] * k + ecol[i]] * inv[c, i] * rhs[r0 + erow[i]])


@njit(cache=True, error_model="numpy", _nrt=False)
def expand_solution(arrays, data, rhs, xr, x):
    """The full solution ``x`` (not ``rhs``'s array) from the condensed one ``xr``: the
    condensed unknowns copied, the slacks' ``F_EE⁻¹ (r_E - F_EK x_K)``."""
    n_plain, runs, meta, pattern, inv = arrays
    for i in range(n_plain):
        x[i] = xr[i]
    for c in range(meta.shape[0]):
        k, kr, r0, rr0, D = meta[c, _K], meta[c, _KR], meta[c, _R0], meta[c, _RR0], meta[c, _D]
        kcol, erow, ecol = pattern[c, 1], pattern[c, 2], pattern[c, 3]
        for i in range(kr):
            x[r0 + kcol[i]] = xr[rr0 + i]
            x[r0 + ecol[i]] = (rhs[r0 + erow[i]]
                               - data[D + erow[i] * k + kcol[i]] * xr[rr0 + i]) * inv[c, i]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def _rows_times(data, p, x, c0, out, r0, nrows, nc):
    """``out[r0 + r] += Σ_c data[p + r nc + c] x[c0 + c]`` for ``r < nrows``, summed in the
    order of ``c``."""
    for r in range(nrows):
        acc = out[r0 + r]
        for c in range(nc):
            acc += data[p + c] * x[c0 + c]
        out[r0 + r] = acc
        p += nc


@njit(cache=True, error_model="numpy", _nrt=False)
def full_residual(arrays, plain_blocks, data, x, rhs, out):
    """``out = F x - rhs`` of the full matrix ``data`` and its max-norm (as
    :func:`.contact_kernels.refinement_residual`): the iterative refinement's residual. The
    blocks between bodies and joints (``plain_blocks``, :attr:`Condensation.plain_blocks`)
    entry by entry, then the contact blocks at their structural nonzeros only (the condensed
    rows and columns, and the slack pairs of :func:`condense_matrix`)."""
    n_plain, runs, meta, pattern, inv = arrays
    row0, col0, nrows, ncols, ptr = plain_blocks
    for i in range(out.shape[0]):
        out[i] = -rhs[i]
    for b in range(row0.shape[0]):
        r0, c0, nc, p = row0[b], col0[b], ncols[b], ptr[b]
        if nc == 6:                     # the same sums, with a constant trip count
            _rows_times(data, p, x, c0, out, r0, nrows[b], 6)
        elif nc == 3:
            _rows_times(data, p, x, c0, out, r0, nrows[b], 3)
        else:
            _rows_times(data, p, x, c0, out, r0, nrows[b], nc)
    for c in range(meta.shape[0]):
        k, kr, r0, D = meta[c, _K], meta[c, _KR], meta[c, _R0], meta[c, _D]
        krow, kcol, erow, ecol = pattern[c, 0], pattern[c, 1], pattern[c, 2], pattern[c, 3]
        for i in range(kr):
            ri = D + krow[i] * k
            acc = out[r0 + krow[i]]
            for j in range(kr):
                acc += data[ri + kcol[j]] * x[r0 + kcol[j]]
            acc += data[ri + ecol[i]] * x[r0 + ecol[i]]
            re = D + erow[i] * k
            out[r0 + krow[i]] = acc
            out[r0 + erow[i]] += (data[re + kcol[i]] * x[r0 + kcol[i]]
                                  + data[re + ecol[i]] * x[r0 + ecol[i]])
        for end in range(2):
            bc, cb, rb = meta[c, _BCA + end], meta[c, _CBA + end], meta[c, _ROWA + end]
            if bc < 0:
                continue
            for r in range(6):
                acc = out[rb + r]
                for j in range(kr):
                    acc += data[bc + r * k + kcol[j]] * x[r0 + kcol[j]]
                out[rb + r] = acc
            for i in range(kr):
                acc = out[r0 + krow[i]]
                for j in range(6):
                    acc += data[cb + krow[i] * 6 + j] * x[rb + j]
                out[r0 + krow[i]] = acc
    return _max_abs_nan(out)


@njit(cache=True, error_model="numpy", _nrt=False)
def condensed_solve(solver, data, rhs, x):
    """``x = F⁻¹ rhs`` (``x`` not ``rhs``'s array) with the factor of the condensed matrix
    (``solver``: :meth:`Condensation.solver`; ``data`` the full matrix's values)."""
    handle, rdata, arrays, xr = solver
    condense_rhs(arrays, data, rhs, xr)
    solve_factored(handle, xr)
    expand_solution(arrays, data, rhs, xr, x)


@njit(cache=True, error_model="numpy", _nrt=False)
def condensed_refactor_solve(solver, data, rhs, x, constant=True):
    """Condense the full matrix ``data`` (:func:`condense_matrix`, ``constant`` as there),
    refactor it and solve ``F x = rhs`` (``x`` not ``rhs``'s array); returns graphsolve's
    status (:func:`graphsolve.lowlevel.refactor_solve`; ``x`` is not written unless it is
    :data:`~graphsolve.lowlevel.STATUS_OK`)."""
    handle, rdata, arrays, xr = solver
    condense_matrix(arrays, data, rdata, constant)
    condense_rhs(arrays, data, rhs, xr)
    status = refactor_solve(handle, rdata, xr)
    if status == STATUS_OK:
        expand_solution(arrays, data, rhs, xr, x)
    return status
