"""The interior point's condensed Newton matrix (:mod:`dynamics.maximal.condensation`) against
dense NumPy: its contact blocks are the Schur complements of the slack pairs, its solves solve
the full system, its residual is the full matrix's; on every contact kind and joint limits."""
import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import Simulation, StepSystem
from dynamics.maximal import contact_kernels as ck
from dynamics.maximal.condensation import full_residual
from dynamics.maximal.interior_point_kernels import WARM_FLOOR
from dynamics.maximal.step_system import quaternion_update
from tests.dynamics.test_body_contacts import CASES as BODY_CASES
from tests.dynamics.test_body_contacts import _system
from tests.dynamics.test_joint_limits import _cylinder_on_arm, _pendulum

SPECS = {
    "sphere chain (ground spheres, 4 friction directions)": (models.sphere_chain, (3,), 30),
    "box drop (ground points)": (models.box_drop, (), 40),
    "sphere stack (sphere-sphere)": (models.sphere_stack, (2,), 20),
    "quadruped": (models.quadruped, (), 20),
    "pendulum on a stop (joint limits)": (_pendulum, (0.5, 1.0), 60),
    "cylinder on an arm (limits between two bodies)": (_cylinder_on_arm, (), 20),
}


def _interior_point_matrix(make, args, steps):
    """A step system with its Newton matrix at an interior point of a real step: the state
    after ``steps`` steps, the next step's start with the last contact variables floored at
    ``WARM_FLOOR`` (as the warm start)."""
    sim = Simulation(make(*args), dt=0.01)
    sim.run(steps, progress=False)
    S = StepSystem(sim.model, sim.dt)
    x1 = sim.x + sim.dt * sim.v
    q1 = quaternion_update(sim.q, sim.w, sim.dt)
    S.begin(x1, q1, sim.v.copy(), sim.w.copy())
    s = S.pack(sim.v, sim.w, np.zeros((len(sim.model.joints), 6)))
    for grp, u in zip(S.contacts, sim.contact_variables, strict=True):
        s[grp.rows] = np.maximum(u, WARM_FLOOR)
    return S, s


def _case(case):
    """``(S, s)``: a real step's matrix (:data:`SPECS`) or, for the body contacts'
    geometries, random positive contact variables (``test_body_contacts._system``)."""
    if case in SPECS:
        return _interior_point_matrix(*SPECS[case])
    return _system(BODY_CASES[case], "compiled", seed=2)


CASES = [*SPECS, *(k for k in BODY_CASES if k != "sphere-box inside")]


@pytest.mark.parametrize("case", CASES)
def test_condensed_blocks_are_the_schur_complements_of_the_slack_pairs(case):
    S, s = _case(case)
    A = S.jacobian(s)
    cond = S.condensation()
    R = cond.condense(A.data)
    for grp in S.contacts:
        row, a, b = grp.complementarity_pairs()
        krow = np.setdiff1d(np.arange(grp.size), row)
        for i, node in enumerate(grp.nodes):
            D = A.block(int(node), int(node))
            want = D[np.ix_(krow, a)] - D[np.ix_(krow, b)] @ np.linalg.solve(
                D[np.ix_(row, b)], D[np.ix_(row, a)])
            np.testing.assert_allclose(R.block(int(node), int(node)), want, rtol=1e-13,
                                       atol=1e-13 * np.abs(want).max())
            assert R.block_sizes[node] == (1 if grp.m == 0 else grp.m + 2)
            for body in (grp.body[i], grp.other[i]):
                if body < 0:
                    continue
                body = int(body)
                np.testing.assert_array_equal(R.block(body, int(node)),
                                              A.block(body, int(node))[:, a])
                np.testing.assert_array_equal(R.block(int(node), body),
                                              A.block(int(node), body)[krow])
                # the slacks' columns of the body rows and complementarity rows vs bodies
                assert not A.block(body, int(node))[:, b].any()
                assert not A.block(int(node), body)[row].any()
    for i in range(S.model.n_bodies):
        np.testing.assert_array_equal(R.block(i, i), A.block(i, i))


@pytest.mark.parametrize("case", CASES)
def test_condensed_solve_and_residual_are_the_full_systems(case):
    S, s = _case(case)
    S.factor(s)
    dense = S.matrix.to_dense()
    rng = np.random.default_rng(3)
    rhs = rng.normal(size=S.N)
    x = S.resolve(rhs, refine=False)
    # backward error of the unrefined condensed solve against the full matrix
    scale = np.abs(dense).max() * np.abs(x).max() + np.abs(rhs).max()
    assert np.abs(dense @ x - rhs).max() <= 1e-12 * scale
    np.testing.assert_allclose(x, np.linalg.solve(dense, rhs), rtol=0,
                               atol=1e-8 * np.abs(x).max())
    # the refinement's residual: the full matrix's, at its structural nonzeros only
    cond = S.condensation()
    y = rng.normal(size=S.N)
    out = np.empty(S.N)
    norm = full_residual(cond.arrays, cond.plain_blocks, S.matrix.data, y, rhs, out)
    want = dense @ y - rhs
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-12 * np.abs(want).max())
    assert norm == np.abs(out).max()
    rows, cols = S._coordinates()
    coo = np.empty(S.N)
    assert abs(ck.refinement_residual(rows, cols, S.matrix.data, y, rhs, coo) - norm) <= (
        1e-12 * norm)


def test_nan_in_the_residual_is_reported():
    S, s = _interior_point_matrix(*SPECS["sphere chain (ground spheres, 4 friction directions)"])
    S.factor(s)
    cond = S.condensation()
    y = np.zeros(S.N)
    y[S.model.n_bodies * 6 // 2] = np.nan          # a body row in the middle
    out = np.empty(S.N)
    assert np.isnan(full_residual(cond.arrays, cond.plain_blocks, S.matrix.data, y,
                                  np.zeros(S.N), out))
