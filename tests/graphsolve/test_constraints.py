"""Tests for graphsolve.constraints (Baraff's primary/auxiliary solver) and graphsolve.lcp.

Oracles never use the library's solvers: equality-only systems are checked against
``scipy.sparse.linalg.spsolve`` of the full KKT matrix ``[[M, Jᵀ], [J, 0]]`` assembled here from
the constraint data; inequality systems against the KKT conditions of the equivalent QP
``min ½ v̇ᵀMv̇ − Fᵀv̇  s.t.  J_e v̇ + c_e = 0,  J_i v̇ + c_i ≥ 0`` checked directly, against a
brute-force enumeration of active sets (dense numpy), and against SciPy's SLSQP.
"""

from __future__ import annotations

import dataclasses
import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from graphsolve.constraints import (
    ConstraintSystem,
    InfeasibleConstraintsError,
)
from graphsolve.errors import (
    GraphError,
    GraphSolveError,
    NonFiniteError,
    ShapeError,
    SingularBlockError,
)
from graphsolve.lcp import InfeasibleLCPError, lemke
from graphsolve.mechanisms import random_mechanism
from tests.conftest import rel_error

ORACLE_TOL = 1e-10
KKT_TOL = 1e-9


# ---------------------------------------------------------------------------------------------
# independent assembly and oracles
# ---------------------------------------------------------------------------------------------


def assemble(system):
    """``M``, ``J`` (all rows, order added), force directions ``K`` (n_v × rows), ``c`` and the
    inequality mask, built here from the constraint records (not by the library)."""
    off = np.concatenate([[0], np.cumsum([m.shape[0] for m in system.masses])])
    M = sp.block_diag(system.masses, format="csr")
    nrows = sum(c.rhs.size for c in system.constraints)
    J = np.zeros((nrows, off[-1]))
    K = np.zeros((off[-1], nrows))
    r = 0
    for con in system.constraints:
        m = con.rhs.size
        for b, jb, kb in zip(con.bodies, con.jacobians, con.forces, strict=True):
            J[r:r + m, off[b]:off[b + 1]] = jb
            K[off[b]:off[b + 1], r:r + m] = kb.T
        r += m
    c = np.concatenate([con.rhs for con in system.constraints] or [np.zeros(0)])
    ineq = np.concatenate([np.full(con.rhs.size, con.kind == "inequality")
                           for con in system.constraints] or [np.zeros(0, bool)])
    return M.toarray(), J, K, c, ineq


def forces(system, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return [scale * rng.standard_normal(m.shape[0]) for m in system.masses]


def kkt_oracle(system, f):
    """Equality-only: ``[[M, K], [J, 0]] [v̇; −λ] = [F; −c]`` (from M v̇ = Kλ + F, J v̇ + c = 0;
    ``K = Jᵀ`` when workless) solved by SuperLU."""
    M, J, K, c, _ = assemble(system)
    S = sp.bmat([[sp.csr_matrix(M), sp.csr_matrix(K)], [sp.csr_matrix(J), None]], format="csc")
    x = spla.spsolve(S, np.concatenate([np.concatenate(f), -c]))
    nv = M.shape[0]
    return x[:nv], -x[nv:]


def check_kkt(system, res, f, tol=KKT_TOL):
    """Stationarity, primal feasibility, μ ≥ 0 and complementarity, relative to the scales."""
    M, J, K, c, ineq = assemble(system)
    v, lam = res.acceleration_vector, res.multiplier_vector
    fv = np.concatenate(f)
    force_scale = np.abs(M).max() * np.abs(v).max() + np.abs(fv).max() + \
        np.abs(K).max() * np.abs(lam).max(initial=0.0)
    assert np.abs(M @ v - K @ lam - fv).max() <= tol * force_scale
    a = J @ v + c
    a_scale = np.abs(J).max() * np.abs(v).max() + np.abs(c).max()
    lam_scale = max(np.abs(lam).max(initial=0.0), 1e-300)
    assert np.abs(a[~ineq]).max(initial=0.0) <= tol * a_scale
    assert a[ineq].min(initial=0.0) >= -tol * a_scale
    assert lam[ineq].min(initial=0.0) >= -tol * lam_scale
    assert np.abs(a[ineq] * lam[ineq]).max(initial=0.0) <= tol * a_scale * lam_scale
    return a, lam


def brute_force_qp(system, f):
    """The QP's unique v̇ by enumerating active sets of the inequality rows (dense numpy)."""
    M, J, K, c, ineq = assemble(system)
    fv = np.concatenate(f)
    rows_i = np.flatnonzero(ineq)
    nv = M.shape[0]
    for r in range(rows_i.size + 1):
        for active in itertools.combinations(rows_i, r):
            A = np.concatenate([np.flatnonzero(~ineq), np.array(active, dtype=int)])
            S = np.block([[M, J[A].T], [J[A], np.zeros((A.size, A.size))]])
            x = np.linalg.lstsq(S, np.concatenate([fv, -c[A]]), rcond=None)[0]
            v, lam = x[:nv], -x[nv:]
            if np.abs(S @ x - np.concatenate([fv, -c[A]])).max() > 1e-9 * (1 + np.abs(x).max()):
                continue
            a = J @ v + c
            if (lam[A.size - r:].min(initial=0) >= -1e-10 and a[ineq].min(initial=0) >= -1e-10):
                return v
    raise AssertionError("no active set satisfies the KKT conditions")


# ---------------------------------------------------------------------------------------------
# test systems
# ---------------------------------------------------------------------------------------------


def forest_system(seed=3):
    """Three components (rigid bodies and particles), a loop in one, a one-body and a
    three-body equality constraint, and a non-default body size."""
    rng = np.random.default_rng(seed)
    sizes = [6, 6, 6, 3, 3, 3, 6, 4, 4]
    masses = []
    for s in sizes:
        A = rng.standard_normal((s, s))
        masses.append(A @ A.T / s + np.eye(s))
    system = ConstraintSystem(masses)

    def joint(a, b, m):
        system.add_constraint((a, b), [rng.standard_normal((m, sizes[a])),
                                       rng.standard_normal((m, sizes[b]))],
                              rng.standard_normal(m))

    joint(0, 1, 3)
    joint(1, 2, 3)
    joint(2, 0, 2)           # loop closure in component {0, 1, 2}
    joint(3, 4, 2)
    joint(4, 5, 1)           # component {3, 4, 5}: particles
    joint(6, 7, 2)
    joint(7, 8, 2)           # component {6, 7, 8}
    system.add_constraint(5, rng.standard_normal((2, 3)), rng.standard_normal(2))   # one body
    system.add_constraint((0, 4, 8), [rng.standard_normal((1, s)) for s in (6, 3, 4)],
                          [0.3])                                                    # three
    return system


EQUALITY_SYSTEMS = {
    "ball_tree": lambda: random_mechanism(15, seed=1),
    "hinge_tree": lambda: random_mechanism(12, joint="hinge", seed=2),
    "chain_loops": lambda: random_mechanism(30, k_loops=4, topology="chain", seed=3),
    "tree_loops": lambda: random_mechanism(25, k_loops=3, seed=4),
    "hinge_loops": lambda: random_mechanism(20, k_loops=2, joint="hinge", seed=5),
    "particles": lambda: random_mechanism(20, k_loops=2, body_size=3, seed=6),
    "size4": lambda: random_mechanism(10, k_loops=1, body_size=4, joint="hinge", seed=7),
    "forest_single_three_body": forest_system,
    "one_body": lambda: random_mechanism(1, seed=8),
}


# ---------------------------------------------------------------------------------------------
# equality constraints: agreement with the full KKT solve
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["general", "workless"])
@pytest.mark.parametrize("name", list(EQUALITY_SYSTEMS))
def test_equalities_match_full_kkt_solve(name, method):
    system = EQUALITY_SYSTEMS[name]()
    f = forces(system, seed=11)
    res = system.solve(f, method=method)
    v_ref, lam_ref = kkt_oracle(system, f)
    assert rel_error(res.acceleration_vector, v_ref) <= ORACLE_TOL
    if lam_ref.size:
        assert rel_error(res.multiplier_vector, lam_ref) <= ORACLE_TOL
    assert res.method == method
    assert [a.shape[0] for a in res.acceleration] == [m.shape[0] for m in system.masses]
    assert [m.size for m in res.multipliers] == [c.rows for c in system.constraints]


def test_kkt_is_the_assembled_system():
    """``kkt()`` (the oracles' input) is ``[[M, K], [J, 0]]``, ``[F; −c]`` as assembled here."""
    system = random_mechanism(3, n_contacts=2, seed=1)
    f = forces(system, seed=2)
    S, b = system.kkt(f)
    M, J, K, c, _ = assemble(system)
    assert isinstance(S, sp.csr_array)
    np.testing.assert_array_equal(S.toarray(), np.block([[M, K], [J, np.zeros((c.size,) * 2)]]))
    np.testing.assert_array_equal(b, np.concatenate([*f, -c]))


def test_backends_agree(backend):
    system = random_mechanism(12, k_loops=2, n_contacts=4, seed=21)
    system.backend = backend
    f = forces(system, seed=3)
    res = system.solve(f)
    check_kkt(system, res, f)
    assert rel_error(res.acceleration_vector, brute_force_qp(system, f)) <= KKT_TOL


def test_split_is_a_spanning_forest_and_auxiliaries_are_the_rest():
    system = forest_system()
    primary, auxiliary = system.split()
    assert primary == (0, 1, 3, 4, 5, 6)            # 9 bodies, 3 components
    assert auxiliary == (2, 7, 8)                   # loop, one-body, three-body
    res = system.solve(forces(system))
    assert (res.primary, res.auxiliary) == (primary, auxiliary)
    assert res.ops.fill_pairs == 0 and res.ops.primary_block_ops["updates"] == 0


def test_inequalities_and_non_workless_are_auxiliary():
    system = random_mechanism(6, n_contacts=3, seed=2)
    J = [np.eye(6), -np.eye(6)]
    i = system.add_constraint((0, 5), J, 0.0, force_directions=[2 * np.eye(6), -np.eye(6)])
    primary, auxiliary = system.split()
    assert i in auxiliary and i not in primary
    assert all(system.constraints[j].kind == "equality" for j in primary)
    assert {5, 6, 7} <= set(auxiliary)


def test_user_primary_set_gives_the_same_answer():
    system = random_mechanism(12, k_loops=2, seed=9)
    f = forces(system, seed=2)
    auto = system.solve(f)
    loops = auto.auxiliary
    # a spanning forest that takes the loop closures first: some tree joints become auxiliary
    G = nx.MultiGraph()
    G.add_nodes_from(range(system.n_bodies))
    chosen = []
    for i in (*loops, *auto.primary):
        a, b = system.constraints[i].bodies
        if not nx.has_path(G, a, b):
            G.add_edge(a, b)
            chosen.append(i)
    system.set_primary(chosen)
    swapped = system.solve(f)
    assert set(loops) <= set(swapped.primary) and len(swapped.auxiliary) == len(loops)
    assert set(swapped.auxiliary) <= set(auto.primary)
    assert rel_error(swapped.acceleration_vector, auto.acceleration_vector) <= ORACLE_TOL
    assert rel_error(swapped.multiplier_vector, auto.multiplier_vector) <= ORACLE_TOL
    system.set_primary(None)
    assert system.split() == (auto.primary, auto.auxiliary)


def test_non_workless_auxiliary_matches_unsymmetric_kkt():
    system = random_mechanism(8, k_loops=1, seed=4)
    rng = np.random.default_rng(0)
    J = [rng.standard_normal((2, 6)), rng.standard_normal((2, 6))]
    K = [j + 0.1 * rng.standard_normal(j.shape) for j in J]
    system.add_constraint((1, 6), J, [0.2, -0.1], force_directions=K)
    f = forces(system, seed=5)
    res = system.solve(f)
    assert res.method == "general"
    v_ref, lam_ref = kkt_oracle(system, f)
    assert rel_error(res.acceleration_vector, v_ref) <= ORACLE_TOL
    assert rel_error(res.multiplier_vector, lam_ref) <= ORACLE_TOL
    with pytest.raises(GraphSolveError, match="workless"):
        system.factor("workless")


def test_result_is_frozen_and_reports_residuals():
    system = random_mechanism(5, k_loops=1, n_contacts=2, seed=1)
    res = system.solve(forces(system))
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.method = "x"
    with pytest.raises(ValueError):
        res.acceleration_vector[0] = 1.0
    assert np.shares_memory(res.acceleration[1], res.acceleration_vector)
    assert set(res.residuals) == {"dynamics", "equality", "min_a", "min_mu", "complementarity"}
    assert res.residuals["dynamics"] < 1e-12 and res.residuals["equality"] < 1e-12
    assert system.solve(forces(system), residuals=False).residuals == {}


# ---------------------------------------------------------------------------------------------
# inequalities: KKT conditions of the QP, brute force, SLSQP
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["general", "workless"])
@pytest.mark.parametrize("seed", range(4))
def test_inequalities_satisfy_qp_kkt_and_match_brute_force(seed, method):
    system = random_mechanism(5, k_loops=1, n_contacts=6, seed=seed)
    f = forces(system, seed=seed, scale=2.0)
    res = system.solve(f, method=method)
    a, mu = check_kkt(system, res, f)
    v_bf = brute_force_qp(system, f)
    assert rel_error(res.acceleration_vector, v_bf) <= KKT_TOL


def test_some_contacts_active_some_inactive():
    system = random_mechanism(20, k_loops=2, n_contacts=10, seed=3)
    f = forces(system, seed=1)
    res = system.solve(f)
    a, mu = check_kkt(system, res, f)
    _, _, _, _, ineq = assemble(system)
    assert 0 < np.sum(mu[ineq] > 1e-8) < ineq.sum()


def test_objective_matches_slsqp():
    system = random_mechanism(3, n_contacts=4, seed=12)
    f = forces(system, seed=3, scale=3.0)
    M, J, K, c, ineq = assemble(system)
    fv = np.concatenate(f)

    def obj(v):
        return 0.5 * v @ M @ v - fv @ v

    cons = [{"type": "eq", "fun": lambda v: J[~ineq] @ v + c[~ineq],
             "jac": lambda v: J[~ineq]},
            {"type": "ineq", "fun": lambda v: J[ineq] @ v + c[ineq], "jac": lambda v: J[ineq]}]
    # ftol 1e-13: at 1e-14 SciPy 1.10's SLSQP stops at the same point with status 8 (positive
    # directional derivative in the line search) instead of success
    ref = so.minimize(obj, np.zeros(fv.size), jac=lambda v: M @ v - fv, constraints=cons,
                      method="SLSQP", options={"ftol": 1e-13, "maxiter": 500})
    assert ref.success
    res = system.solve(f)
    check_kkt(system, res, f)
    v = res.acceleration_vector
    assert obj(v) <= ref.fun + 1e-9 * (1 + abs(ref.fun))
    assert abs(obj(v) - ref.fun) <= 1e-7 * (1 + abs(ref.fun))
    assert rel_error(v, ref.x) <= 1e-5


def test_degenerate_contact_with_zero_gap_and_zero_force():
    """a = 0 and μ = 0 at once: c chosen so the contact is exactly at rest without force."""
    system = random_mechanism(4, seed=5)
    f = forces(system, seed=2)
    v0, _ = kkt_oracle(system, f)
    row = np.array([[0.0, 0.0, 1.0, 0.2, -0.1, 0.0]])
    system.add_constraint(1, row, -row @ v0[6:12] - 0.5, kind="inequality")   # active
    v1 = system.solve(f).acceleration_vector
    system.add_constraint(2, row, -row @ v1[12:18], kind="inequality")       # a = 0, μ = 0
    res = system.solve(f)
    a, mu = check_kkt(system, res, f)
    assert abs(a[-1]) < 1e-12 and abs(mu[-1]) < 1e-9
    assert mu[-2] > 1e-3
    assert rel_error(res.acceleration_vector, brute_force_qp(system, f)) <= KKT_TOL


def test_degenerate_duplicated_and_redundant_contacts():
    """A singular LCP matrix: the same contact twice and 8 contacts on one 6-dof body."""
    rng = np.random.default_rng(4)
    system = ConstraintSystem([np.diag([1.0, 1, 1, 0.3, 0.4, 0.5])])
    for _ in range(8):
        n = np.array([0, 0, 1.0]) + 0.2 * rng.standard_normal(3)
        row = np.concatenate([n / np.linalg.norm(n), np.cross(rng.standard_normal(3), n)])
        system.add_constraint(0, row[None], [-0.5], kind="inequality")
    system.add_constraint(0, system.constraints[0].jacobians[0], [-0.5], kind="inequality")
    f = [np.array([0.0, 0, -9.81, 0, 0, 0])]
    res = system.solve(f)
    check_kkt(system, res, f)
    assert rel_error(res.acceleration_vector, brute_force_qp(system, f)) <= KKT_TOL


def test_mixed_equality_and_inequality_auxiliaries():
    system = random_mechanism(6, k_loops=1, n_contacts=3, seed=8)
    system.add_constraint(3, np.eye(6)[:2], [0.1, -0.2])                     # one-body equality
    system.add_constraint((0, 2, 4), [np.ones((1, 6))] * 3, [0.05])            # three-body
    f = forces(system, seed=4)
    for method in ("general", "workless"):
        res = system.solve(f, method=method)
        check_kkt(system, res, f)
        assert rel_error(res.acceleration_vector, brute_force_qp(system, f)) <= KKT_TOL


def test_infeasible_inequalities_raise():
    system = ConstraintSystem([np.eye(3), 2 * np.eye(3)])
    system.add_constraint((0, 1), [np.eye(3), -np.eye(3)], 0.0)
    system.add_constraint(0, [[0.0, 0.0, 1.0]], [0.0], kind="inequality")     # z̈ ≥ 0
    system.add_constraint(1, [[0.0, 0.0, -1.0]], [-1.0], kind="inequality")   # z̈ ≤ −1
    with pytest.raises(InfeasibleConstraintsError, match="infeasible") as info:
        system.solve([np.zeros(3), np.zeros(3)])
    assert info.value.constraints == (1, 2)


def test_inequality_contradicting_an_equality_raises():
    system = ConstraintSystem([np.eye(3)])
    system.add_constraint(0, [[0.0, 0.0, 1.0]], [1.0])                          # z̈ = −1
    system.add_constraint(0, [[0.0, 0.0, 1.0]], [-2.0], kind="inequality")    # z̈ ≥ 2
    with pytest.raises(InfeasibleConstraintsError) as info:
        system.solve([np.zeros(3)])
    assert 1 in info.value.constraints


# ---------------------------------------------------------------------------------------------
# operation counts: O(n) primary, O(nk) auxiliary
# ---------------------------------------------------------------------------------------------


def test_primary_block_ops_grow_linearly():
    per_body, flops_per_body = [], []
    for n in (50, 100, 200, 400):
        system = random_mechanism(n, k_loops=2, seed=n)
        res = system.solve(forces(system))
        ops = res.ops.primary_block_ops
        assert ops["updates"] == 0 and res.ops.fill_pairs == 0            # no fill: a tree
        assert ops["pivots"] == 2 * n - 1 and ops["scalings"] == 2 * (n - 1)
        per_body.append(sum(ops.values()) / n)
        flops_per_body.append(res.ops.solve_flops / n)
    assert max(per_body) <= 4.0
    assert max(flops_per_body) / min(flops_per_body) < 1.05


@pytest.mark.parametrize("k_loops", [0, 1, 3, 6])
def test_auxiliary_needs_k_primary_solves(k_loops):
    system = random_mechanism(40, k_loops=k_loops, n_contacts=2, seed=k_loops)
    k = sum(system.constraints[i].rows for i in system.split()[1])
    assert k == 3 * k_loops + 2
    for method in ("general", "workless"):
        res = system.solve(forces(system), method=method)
        assert res.ops.coefficient_solves == k
        assert res.ops.primary_solves == 2
    assert res.ops.coefficient_solve_kind == "forward"


def test_h_is_factored_once_and_reused():
    system = random_mechanism(10, k_loops=1, n_contacts=2, seed=0)
    first = system.solve(forces(system, 1))
    second = system.solve(forces(system, 2))
    assert first.ops.factorizations == second.ops.factorizations == 1
    assert system.solve(forces(system, 3), method="workless").ops.factorizations == 2


def test_no_auxiliaries_needs_one_solve():
    system = random_mechanism(10, seed=0)
    res = system.solve(forces(system))
    assert res.auxiliary == () and res.ops.primary_solves == 1
    assert res.ops.coefficient_solves == 0


# ---------------------------------------------------------------------------------------------
# property test
# ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 10), loops=st.integers(0, 2), contacts=st.integers(0, 4),
       body_size=st.sampled_from([3, 4, 6]), joint=st.sampled_from(["ball", "hinge"]),
       seed=st.integers(0, 2**16))
def test_property_random_mechanisms(n, loops, contacts, body_size, joint, seed):
    try:
        system = random_mechanism(n, loops, contacts, body_size=body_size, joint=joint,
                                  seed=seed)
    except GraphError:                        # no far-apart pair for a loop closure
        assume(False)
    _, J, _, _, ineq = assemble(system)
    assume(np.linalg.matrix_rank(J[~ineq]) == (~ineq).sum())
    f = forces(system, seed=seed)
    res = system.solve(f)
    check_kkt(system, res, f)
    if not ineq.any():
        v_ref, _ = kkt_oracle(system, f)
        assert rel_error(res.acceleration_vector, v_ref) <= ORACLE_TOL
    workless = system.solve(f, method="workless")
    assert rel_error(workless.acceleration_vector, res.acceleration_vector) <= 1e-8


# ---------------------------------------------------------------------------------------------
# Lemke's method on its own
# ---------------------------------------------------------------------------------------------


def test_lemke_against_enumeration_on_degenerate_psd_problems():
    rng = np.random.default_rng(0)
    for t in range(200):
        k = int(rng.integers(1, 7))
        G = rng.standard_normal((int(rng.integers(1, k + 1)), k))
        M, q = G.T @ G, rng.standard_normal(k)
        if t % 3 == 0:
            q[: k // 2] = 0.0                         # degenerate: zero right-hand sides
        try:
            sol = lemke(M, q)
        except InfeasibleLCPError:
            for S in itertools.product([False, True], repeat=k):
                S = np.array(S)
                z = np.zeros(k)
                if S.any():
                    z[S] = np.linalg.lstsq(M[np.ix_(S, S)], -q[S], rcond=None)[0]
                w = M @ z + q
                assert not (z.min() > -1e-9 and w.min() > -1e-9 and np.abs(w[S]).max(
                    initial=0) < 1e-9), "Lemke reported infeasible but a solution exists"
            continue
        s = 1 + np.abs(sol.z).max()
        assert sol.z.min() >= 0 and sol.w.min() >= -1e-10 * s
        assert np.abs(sol.z * sol.w).max() <= 1e-10 * s * s
        assert np.allclose(sol.w, M @ sol.z + q, atol=1e-12 * s)


# ---------------------------------------------------------------------------------------------
# bad input: one test per failure mode
# ---------------------------------------------------------------------------------------------


def test_singular_mass_block_names_the_body():
    with pytest.raises(SingularBlockError, match="body 1") as info:
        ConstraintSystem([np.eye(3), np.diag([1.0, 0.0, 1.0])])
    assert info.value.node == 1


def test_unsymmetric_mass_block_names_the_body():
    with pytest.raises(SingularBlockError, match="body 0.*symmetric"):
        ConstraintSystem([np.array([[1.0, 0.5], [0.0, 1.0]])])


def test_dependent_primary_constraint_names_the_constraint():
    J = np.array([[1.0, 0, 0], [0, 1, 0], [1, 1, 0]])                  # third row = sum
    system = ConstraintSystem([np.eye(3)] * 3)
    system.add_constraint((1, 2), [np.eye(3), -np.eye(3)], 0.0)
    system.add_constraint((0, 1), [J, -J], 0.0)
    system.set_primary([0, 1])
    with pytest.raises(SingularBlockError, match="primary constraint 1") as info:
        system.solve([np.ones(3)] * 3)
    assert info.value.constraint == 1


def test_redundant_auxiliary_constraint_names_the_constraint():
    system = ConstraintSystem([np.eye(3)] * 2)
    system.add_constraint((0, 1), [np.eye(3), -np.eye(3)], 0.0)
    system.add_constraint((1, 0), [np.eye(3), -np.eye(3)], 0.0)          # the same joint
    with pytest.raises(SingularBlockError, match="constraint 1.*redundant") as info:
        system.solve([np.ones(3)] * 2)
    assert info.value.constraint == 1


def test_cyclic_user_primary_set_names_the_constraint():
    system = random_mechanism(6, k_loops=1, seed=0)
    with pytest.raises(GraphError, match="primary constraint 5 .*cycle"):
        system.set_primary(range(6))


def test_inequality_cannot_be_primary():
    system = random_mechanism(3, n_contacts=1, seed=0)
    with pytest.raises(GraphError, match="constraint 2 cannot be primary"):
        system.set_primary([0, 2])


def test_mismatched_jacobian_shape_names_constraint_and_body():
    system = ConstraintSystem([np.eye(6), np.eye(3)])
    with pytest.raises(ShapeError, match="constraint 0.*body 1"):
        system.add_constraint((0, 1), [np.ones((3, 6)), np.ones((3, 6))], 0.0)
    with pytest.raises(ShapeError, match="constraint 0.*body 1"):
        system.add_constraint((0, 1), [np.ones((3, 6)), np.ones((2, 3))], 0.0)
    with pytest.raises(ShapeError, match="constraint 0: rhs"):
        system.add_constraint((0, 1), [np.ones((3, 6)), np.ones((3, 3))], [1.0, 2.0])


def test_body_index_out_of_range_names_it():
    system = ConstraintSystem([np.eye(3)] * 2)
    with pytest.raises(GraphError, match="constraint 0: body 2 is out of range"):
        system.add_constraint((0, 2), [np.eye(3)] * 2, 0.0)
    with pytest.raises(GraphError, match="body listed twice"):
        system.add_constraint((1, 1), [np.eye(3)] * 2, 0.0)


def test_nan_inputs_raise_non_finite():
    with pytest.raises(NonFiniteError, match="body 0"):
        ConstraintSystem([np.full((2, 2), np.nan)])
    system = ConstraintSystem([np.eye(2)] * 2)
    with pytest.raises(NonFiniteError, match="constraint 0"):
        system.add_constraint((0, 1), [np.eye(2), np.array([[np.nan, 0], [0, 1]])], 0.0)
    with pytest.raises(NonFiniteError, match="constraint 0: rhs"):
        system.add_constraint((0, 1), [np.eye(2)] * 2, [np.inf, 0])
    system.add_constraint((0, 1), [np.eye(2), -np.eye(2)], 0.0)
    with pytest.raises(NonFiniteError, match="body 1"):
        system.solve([np.zeros(2), np.array([np.nan, 0.0])])


def test_bad_force_shape_names_the_body():
    system = ConstraintSystem([np.eye(2), np.eye(3)])
    with pytest.raises(ShapeError, match="body 1"):
        system.solve([np.zeros(2), np.zeros(2)])
    with pytest.raises(ShapeError, match="3 entries for 2 bodies"):
        system.solve([np.zeros(2)] * 3)


def test_unknown_kind_and_method():
    system = ConstraintSystem([np.eye(2)])
    with pytest.raises(GraphError, match="kind"):
        system.add_constraint(0, np.eye(2), 0.0, kind="friction")
    with pytest.raises(GraphSolveError, match="method"):
        system.factor("fast")
