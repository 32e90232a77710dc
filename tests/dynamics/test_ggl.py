"""The GGL variational integrator (dynamics.ggl) on the planar director formulation
(dynamics.redundant), against oracles other than itself: the exact motion of the double
four-bar's parallelogram mode (a 1-DOF ODE solved by SciPy), our maximal-coordinate integrator,
the maximal model's energies, finite differences and a dense linear solve."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from dynamics import models
from dynamics import quaternion as quat
from dynamics.ggl import (
    GGLFailure,
    _newton_delta,
    ggl_jacobian,
    ggl_jacobian_fd,
    ggl_residual,
    simulate_ggl,
)
from dynamics.maximal import Simulation
from dynamics.maximal.mechanism import MaximalModel
from dynamics.redundant import (
    QuadraticConstraints,
    RedundantSystem,
    planar_directors,
)
from dynamics.spec import SpecError

G = 9.81


@pytest.fixture(scope="module")
def fourbar():
    return planar_directors(models.double_fourbar(thin_bars=True))


def parallelogram(spec, T, t):
    """Crank angle and energy of the exact parallelogram mode (all cranks at one angle θ, the
    couplers translating): I θ̈ = -3.5 m g l sin θ, I = 3 (J + m l²/4) + 2 m l²."""
    J = spec.bodies[0].inertia[0, 0]
    inertia = 3 * (J + 0.25) + 2.0
    y0 = [spec.initial_positions["pivot1"][0], spec.initial_velocities["pivot1"][0]]
    sol = solve_ivp(lambda _, y: [y[1], -3.5 * G * np.sin(y[0]) / inertia], (0, T), y0,
                    method="DOP853", rtol=1e-13, atol=1e-13, dense_output=True)
    theta, rate = sol.sol(t)
    return theta, 0.5 * inertia * rate[0] ** 2 - 3.5 * G * np.cos(theta[0])


def released_at(theta0):
    """The thin-bar double four-bar with every crank at ``theta0`` (1 rad/s)."""
    return models.double_fourbar(thin_bars=True).with_initial(
        {"pivot1": [theta0], "pin1": [-theta0], "pivot2": [theta0], "pin2": [-theta0],
         "pivot3": [theta0]})


# ---------------------------------------------------------------------- the model
def test_quadratic_constraints_match_their_dense_hessians():
    rng = np.random.default_rng(0)
    n, m = 5, 3
    H = rng.standard_normal((m, n, n))
    H = H + H.transpose(0, 2, 1)
    H[1] = 0.0                                           # a linear row
    j, k, l = np.nonzero(H)
    c = QuadraticConstraints(rng.standard_normal((m, n)), rng.standard_normal(m),
                             (j, k, l, H[j, k, l]))
    q, gam = rng.standard_normal(n), rng.standard_normal(m)
    A, off = c.linear, c.offset
    np.testing.assert_allclose(c.hessians(), H)
    np.testing.assert_allclose(c.value(q), 0.5 * np.einsum("k,jkl,l->j", q, H, q) + A @ q - off)
    np.testing.assert_allclose(c.jacobian(q), A + H @ q)
    np.testing.assert_allclose(c.contract(gam), np.einsum("j,jkl->kl", gam, H))
    qs, us = rng.standard_normal((4, n)), rng.standard_normal((4, n))
    np.testing.assert_allclose(c.values_over_time(qs), [c.value(x) for x in qs])
    np.testing.assert_allclose(c.jacobian_times(qs, us),
                               [c.jacobian(x) @ y for x, y in zip(qs, us, strict=True)])
    assert list(c.quadratic_rows) == [0, 2]
    with pytest.raises(ValueError, match="symmetric"):
        QuadraticConstraints(A, off, ([0], [0], [1], [1.0]))


def test_directors_reproduce_the_maximal_models_initial_state(fourbar):
    spec = fourbar.spec
    x, q, v, w = MaximalModel(spec).initial_state()
    assert (fourbar.n, fourbar.m) == (30, 29)
    np.testing.assert_allclose(fourbar.body_positions(fourbar.q0), x[:, 1:], atol=1e-15)
    # energies of the two descriptions agree (the maximal model's own formulas)
    mm = MaximalModel(spec)
    p0 = fourbar.mass_matrix @ fourbar.v0
    assert fourbar.kinetic_energy(p0) == pytest.approx(mm.kinetic_energy(v, w), rel=1e-14)
    assert fourbar.potential_energy(fourbar.q0) == pytest.approx(mm.potential_energy(x, q),
                                                                 rel=1e-14)
    assert np.abs(fourbar.constraints.value(fourbar.q0)).max() < 1e-15
    assert np.abs(fourbar.constraints.jacobian(fourbar.q0) @ fourbar.v0).max() < 1e-15
    angles = fourbar.joint_angles(fourbar.q0)
    assert set(angles) == {"pivot1", "pin1", "pivot2", "pin2", "pivot3"}
    for name, a in angles.items():
        assert a[0] == pytest.approx(spec.initial_positions[name][0])
    assert fourbar.row_names[:3] == ("crank1:rigidity1", "crank1:rigidity2", "crank1:rigidity3")


def test_joint_angles_follow_the_maximal_integrator(fourbar):
    spec = fourbar.spec
    traj = Simulation(spec, 0.01).run(50, progress=False)
    # directors from the maximal trajectory's rotations
    R = quat.rotation_matrix(traj.q)                       # (T, nb, 3, 3)
    qs = np.concatenate([traj.x[..., 1:], R[..., 1:, 1], R[..., 1:, 2]], axis=-1)
    angles = fourbar.joint_angles(qs.reshape(len(traj.t), -1))
    names = list(traj.coordinate_names)
    for name, a in angles.items():
        np.testing.assert_allclose(a, traj.minimal_coordinates[:, names.index(name)],
                                   atol=1e-9)


@pytest.mark.parametrize("make, match", [
    (lambda: models.pendulum(2, "spherical"), "not supported"),
    (lambda: models.box_drop(), "contacts"),
    (lambda: models.pendulum(1, damper=0.1), "dampers"),
])
def test_planar_directors_refuse_what_they_do_not_model(make, match):
    with pytest.raises(SpecError, match=match):
        planar_directors(make())


def test_thin_bars_have_the_slender_rod_inertia():
    spec = models.double_fourbar(thin_bars=True)
    for b in spec.bodies:
        np.testing.assert_allclose(np.diag(b.inertia), [1 / 12, 1 / 12, 1 / 1200])
    assert models.double_fourbar().bodies[0].inertia[0, 0] == pytest.approx((3e-4 * 25 + 1) / 12)


# ---------------------------------------------------------------------- Newton
def test_jacobian_matches_finite_differences_and_the_block_solve(fourbar):
    rng = np.random.default_rng(1)
    n, m, dt = fourbar.n, fourbar.m, 0.01
    q_n = fourbar.q0 + 1e-2 * rng.standard_normal(n)
    p_n = fourbar.mass_matrix @ fourbar.v0
    z = np.concatenate([q_n + 1e-2 * rng.standard_normal(n), rng.standard_normal(2 * n),
                        rng.standard_normal(2 * m)])
    J = ggl_jacobian(fourbar, dt, q_n, p_n, z)
    Jfd = ggl_jacobian_fd(fourbar, dt, q_n, p_n, z)
    assert np.abs(J - Jfd).max() < 1e-7 * max(1.0, np.abs(J).max())
    r = ggl_residual(fourbar, dt, q_n, p_n, z)
    delta = _newton_delta(fourbar, dt, q_n, fourbar.constraints.jacobian(q_n), z, r)
    dense = np.linalg.solve(J, -r)
    assert np.abs(delta - dense).max() < 1e-9 * np.abs(dense).max()


def test_unconstrained_step_is_symplectic_euler():
    """Without constraints the scheme is p' = p - h ∇V(q), q' = q + h M⁻¹ p'."""
    M = np.diag([2.0, 3.0])
    f = np.array([0.5, -9.81 * 3.0])
    c = QuadraticConstraints(np.zeros((0, 2)), np.zeros(0), ([], [], [], []))  # m = 0
    system = RedundantSystem(M, f, c, np.array([0.1, 0.2]), np.array([1.0, -1.0]))
    h = 0.1
    res = simulate_ggl(system, h, 3, tol=1e-13)
    q, p = system.q0, M @ system.v0
    for k in range(3):
        p = p + h * f
        q = q + h * np.linalg.solve(M, p)
        np.testing.assert_allclose(res.p[k + 1], p, rtol=1e-12)
        np.testing.assert_allclose(res.q[k + 1], q, rtol=1e-12)


# ---------------------------------------------------------------------- physics
def test_constraints_hold_at_every_step(fourbar):
    res = simulate_ggl(fourbar, 0.01, 50, tol=1e-10)
    assert res.iterations[1:].max() <= 6
    assert res.position_residual.max() <= 1e-10
    vel = res.velocity_residual
    assert vel["enforced"].max() <= 1e-10                      # G(q̄) M⁻¹ p_{n+1} = 0
    assert 1e-6 < vel["at_q"].max() < 0.1                      # at q_{n+1}: small, not zero
    assert fourbar.joint_violation(res.q).max() <= 1e-10
    assert fourbar.rigidity_violation(res.q).max() <= 1e-10
    assert np.abs(res.gamma).max() < 1.0                       # γ → 0 with h


def test_energy_error_is_bounded_and_first_order(fourbar):
    """Symplectic: no drift over five crank turns through ten singular configurations; the
    energy error of the nodes is O(h) (the momenta of a symplectic Euler step)."""
    errs = {}
    for dt in (0.002, 0.001):
        res = simulate_ggl(fourbar, dt, round(2.0 / dt), tol=1e-10)
        e = np.abs(res.energy - res.energy[0])
        errs[dt] = e.max()
        half = len(e) // 2
        assert e[half:].max() < 1.2 * e[:half].max()
    assert errs[0.002] / errs[0.001] == pytest.approx(2.0, rel=0.1)


def test_convergence_order_against_the_exact_parallelogram_mode():
    """Order 1 for a generic start (trajectory and energy); order 2 for the trajectory of
    Fig. 12's start (cranks upright: θ̈(0) = 0, so the symplectic-Euler start error vanishes)."""
    T, dts = 0.5, (0.01, 0.005, 0.0025)
    for theta0, order_q in ((2.5, 1.0), (np.pi, 2.0)):
        spec = released_at(theta0)
        system = planar_directors(spec)
        eq, ee = [], []
        for dt in dts:
            res = simulate_ggl(system, dt, round(T / dt), tol=1e-12)
            theta, energy = parallelogram(spec, T, res.t)
            eq.append(np.abs(system.joint_angles(res.q)["pivot1"] - theta).max())
            ee.append(np.abs(res.energy - energy).max())
        pq, pe = np.log2(eq[1] / eq[2]), np.log2(ee[1] / ee[2])
        assert pq == pytest.approx(order_q, abs=0.1), (theta0, eq)
        assert pe == pytest.approx(1.0, abs=0.1), (theta0, ee)


def test_agrees_with_our_maximal_integrator_at_small_steps(fourbar):
    """1 s at Δt = 0.001 s, through the first singular configuration (t ≈ 0.72 s)."""
    dt, steps = 0.001, 1000
    res = simulate_ggl(fourbar, dt, steps, tol=1e-10)
    traj = Simulation(fourbar.spec, dt).run(steps, progress=False)
    com = fourbar.body_positions(res.q)
    assert np.abs(com - traj.x[..., 1:]).max() < 1e-3
    angle = fourbar.joint_angles(res.q)["pivot1"]
    assert angle[-1] > 1.5 * np.pi                             # passed the singular pose
    assert np.abs(angle - traj.minimal_coordinates[:, 0]).max() < 1e-3


def test_large_steps_fail_at_the_singular_configuration_unless_continued(fourbar):
    """At Δt = 0.01 s Newton does not converge at the step onto the first singular
    configuration; the authors' solver keeps the last iterate and goes on."""
    with pytest.raises(GGLFailure, match="after 40 iterations") as err:
        simulate_ggl(fourbar, 0.01, 100, tol=1e-9)
    step = err.value.step
    assert 60 < step < 75 and len(err.value.result.t) == step
    res = simulate_ggl(fourbar, 0.01, 100, tol=1e-9, on_max_iter="continue")
    assert step in res.unconverged and res.residual[step] > 1e-9
    assert np.all(np.isfinite(res.q))
    with pytest.raises(ValueError, match="on_max_iter"):
        simulate_ggl(fourbar, 0.01, 1, on_max_iter="ignore")
