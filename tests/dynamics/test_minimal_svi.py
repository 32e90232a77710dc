"""Johnson & Murphey's structured variational integrator (:mod:`dynamics.minimal.svi`): the
cached-recursion derivatives of the Lagrangian against the independent world-frame formulas of
:mod:`dynamics.minimal.galerkin`, the DEL Jacobian against finite differences, the measured
order of accuracy, bounded energy error, reversibility, the O(n²) / O(n³) cache sizes, and
failures."""
from __future__ import annotations

import doctest

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from dynamics import models
from dynamics.minimal import Model, crba, galerkin, initial_state, simulate, svi, tree_kernels
from dynamics.minimal.svi import (
    SVIFailure,
    cache_sizes,
    lagrangian_derivatives,
    simulate_svi,
    svi_jacobian,
    svi_momentum,
    svi_residual,
)
from tests.dynamics.minimal_trees import sprung_tree as _sprung_tree


def test_doctests():
    assert doctest.testmod(svi).failed == 0


@pytest.mark.parametrize("make", [lambda: Model(models.pendulum(4)), _sprung_tree])
def test_lagrangian_derivatives_match_the_world_frame_formulas(make):
    """The cached frame recursions (4×4 frames, pseudo-inertias) against the twist / spatial
    inertia formulas of the Galerkin module and CRBA: an independent derivation."""
    model = make()
    rng = np.random.default_rng(1)
    q, v = rng.normal(size=(2, model.nv))
    ours = lagrangian_derivatives(model, q, v, hessians=True)
    ref = galerkin.lagrangian_derivatives(model, model.create_data(), q, v, hessians=True)
    for key in ("L_q", "L_v", "M", "L_vq", "L_qq"):
        assert np.allclose(ours[key], ref[key], rtol=1e-12, atol=1e-11), key
    assert np.allclose(ours["M"], crba(model, model.create_data(), q), atol=1e-12)


@pytest.mark.parametrize("make", [lambda: Model(models.pendulum(5)), _sprung_tree])
def test_jacobian_against_finite_differences(make):
    model = make()
    rng = np.random.default_rng(2)
    n, dt = model.nv, 0.01
    q = rng.normal(size=n)
    x = q + dt * rng.normal(size=n)
    p = rng.normal(size=n)
    tau = rng.normal(size=n)
    J = svi_jacobian(model, q, p, x, dt, tau)
    h = 1e-6
    fd = np.column_stack([(svi_residual(model, q, p, x + h * e, dt, tau)
                           - svi_residual(model, q, p, x - h * e, dt, tau)) / (2 * h)
                          for e in np.eye(n)])
    assert np.abs(J - fd).max() < 1e-7 * max(1.0, np.abs(J).max())


def test_hanging_chain_stays_at_rest_and_momentum_is_the_legendre_transform():
    model = Model(models.pendulum(3))
    res = simulate_svi(model, np.zeros(3), np.zeros(3), 0.01, 50, tol=1e-13)
    assert not res.failed and np.abs(res.q).max() < 1e-12
    # p_{k+1} = D₂L_d: the discrete momentum of a converged step equals svi_momentum
    q0, v0 = np.array([0.4, -0.3, 0.2]), np.array([0.5, 0.0, -0.2])
    res = simulate_svi(model, q0, v0, 0.01, 3, tol=1e-14)
    assert np.allclose(svi_momentum(model, res.q[1], res.p[1], res.q[2], 0.01), res.p[2],
                       atol=1e-12)
    assert np.abs(svi_residual(model, res.q[1], res.p[1], res.q[2], 0.01)).max() < 1e-12


def test_order_of_accuracy_two():
    """Global error at T = 1 s of a double pendulum against DOP853 (rtol 1e-13) on the ODE of
    the compiled ABA: slope 2 (the midpoint rule)."""
    model = Model(models.pendulum(2))
    data = model.create_data()
    q0, v0, T = np.array([1.0, 0.5]), np.zeros(2), 1.0
    ref = solve_ivp(lambda t, y: np.concatenate([y[2:], tree_kernels.aba(model, data, y[:2], y[2:],
                                                                     np.zeros(2))]),
                    (0.0, T), np.concatenate([q0, v0]), method="DOP853", rtol=1e-13,
                    atol=1e-13).y[:, -1]
    dts = (0.02, 0.01, 0.005, 0.0025)
    errors = []
    for dt in dts:
        res = simulate_svi(model, q0, v0, dt, round(T / dt), tol=1e-13, norm="impulse")
        assert not res.failed, res.reason
        errors.append(max(np.abs(res.q[-1] - ref[:2]).max(), np.abs(res.v[-1] - ref[2:]).max()))
    slope = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert abs(slope - 2.0) < 0.15, (errors, slope)


def test_energy_error_bounded_without_drift():
    """200 s of the chaotic double pendulum released horizontally at Δt = 10 ms: the energy
    error stays bounded (no drift), unlike RK4's."""
    model = Model(models.double_pendulum())
    q0, v0 = initial_state(model)
    res = simulate_svi(model, q0, v0, 0.01, 20000, tol=1e-12)
    assert not res.failed, res.reason
    err = np.abs(res.energy - res.energy[0])
    quarter = len(err) // 4
    assert err.max() < 0.5
    assert err[-quarter:].max() < 1.5 * err[:quarter].max()
    rk4 = simulate(model, q0, v0, 0.01, 20000, "rk4", backend="compiled")
    rk4_err = np.abs(rk4.energy - rk4.energy[0])
    assert rk4_err[-quarter:].max() > 4 * rk4_err[:quarter].max()


def test_reversible():
    """Symmetric method: from (q_N, -p_N) the integrator retraces the trajectory."""
    model = Model(models.pendulum(3))
    q0, v0 = np.array([1.0, -0.5, 0.3]), np.array([0.2, 0.0, -0.4])
    fwd = simulate_svi(model, q0, v0, 0.02, 100, tol=1e-14)
    back = simulate_svi(model, fwd.q[-1], -fwd.v[-1], 0.02, 100, tol=1e-14)
    assert not (fwd.failed or back.failed)
    assert np.abs(back.q[-1] - q0).max() < 1e-9
    assert np.abs(back.v[-1] + v0).max() < 1e-8
    assert np.allclose(back.q[::-1], fwd.q, atol=1e-9)


def test_damped_tree_loses_energy_and_matches_galerkin_trapezoid_to_second_order():
    """Dampers dissipate; the SVI (midpoint) and the trapezoidal Galerkin VI are different
    second-order schemes whose trajectories agree to O(Δt²)."""
    model = _sprung_tree()
    q0, v0 = initial_state(model)
    v0 = v0 + 0.3
    res = simulate_svi(model, q0, v0, 0.005, 400, tol=1e-12)
    assert not res.failed
    assert res.energy[-1] < res.energy[0]
    gal = galerkin.simulate_galerkin(model, q0, v0, 0.005, 400, s=1, tol=1e-10, norm="scaled")
    assert np.abs(res.q[-1] - gal.q[-1]).max() < 1e-2


def test_cache_sizes_are_quadratic_and_cubic_in_the_chain_length():
    for n in (10, 20, 40):
        n1, n2 = cache_sizes(Model(models.pendulum(n)))
        assert n1 == n * (n + 1) // 2
        assert n2 == n * (n + 1) * (n + 2) // 6


def test_failures_and_argument_errors():
    model = Model(models.pendulum(3))
    q0, v0 = np.array([1.0, 0.0, 0.0]), np.zeros(3)
    res = simulate_svi(model, q0, v0, 0.05, 10, tol=1e-30, max_iter=2)
    assert res.failed and res.failed_step == 0 and "max_iter" in res.reason
    assert res.q.shape == (1, 3) and res.steps == 0
    with pytest.raises(SVIFailure):
        simulate_svi(model, q0, v0, 0.05, 10, tol=1e-30, max_iter=2, raise_on_failure=True)
    with pytest.raises(ValueError, match="norm"):
        simulate_svi(model, q0, v0, 0.01, 1, norm="max")
    with pytest.raises(ValueError, match="initial_guess"):
        simulate_svi(model, q0, v0, 0.01, 1, initial_guess="ig3")
    with pytest.raises(ValueError, match="tau"):
        simulate_svi(model, q0, v0, 0.01, 2, tau=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="revolute and prismatic"):
        simulate_svi(Model(models.pendulum(2, "spherical")), np.r_[1.0, 0, 0, 0, 1, 0, 0, 0],
                     np.zeros(6), 0.01, 1)
    ig1 = simulate_svi(model, q0, v0, 0.01, 20, initial_guess="ig1", tol=1e-12)
    ig2 = simulate_svi(model, q0, v0, 0.01, 20, initial_guess="ig2", tol=1e-12)
    assert np.allclose(ig1.q, ig2.q, atol=1e-10)
    assert ig2.iterations.mean() <= ig1.iterations.mean()


@pytest.mark.parametrize("run", [
    lambda m, **kw: svi.simulate_svi(m, [0.3, 0.0], [0.0, 0.0], 1e-2, 3, **kw),
    lambda m, **kw: galerkin.simulate_galerkin(m, [0.3, 0.0], [0.0, 0.0], 1e-2, 3, s=2, **kw),
    lambda m, **kw: tree_kernels.simulate_variational_compiled(m, [0.3, 0.0], [0.0, 0.0], 1e-2,
                                                               3, **kw),
], ids=["svi", "galerkin", "compiled-lee"])
def test_joint_forces_of_a_wrong_shape_are_refused_by_every_variational_simulator(run):
    """tau of shape (nv,) or (steps, nv) is accepted, anything else is a ValueError naming
    both accepted shapes; the Galerkin and SVI integrators also refuse bad Newton settings."""
    model = Model(models.pendulum(2))
    held, per_step = run(model, tau=[0.1, 0.0]), run(model, tau=np.tile([0.1, 0.0], (3, 1)))
    np.testing.assert_array_equal(held.q, per_step.q)
    with pytest.raises(ValueError, match=r"tau must have shape \(model.nv,\) = \(2,\)"):
        run(model, tau=np.zeros((2, 2)))


@pytest.mark.parametrize("simulate_fn", [svi.simulate_svi, galerkin.simulate_galerkin])
@pytest.mark.parametrize(("tol", "max_iter", "message"), [
    (0.0, 10, "tol must be positive"), (1e-9, 2.5, "max_iter must be an integer"),
    (1e-9, -1, "max_iter must be an integer")])
def test_bad_newton_settings_are_refused(simulate_fn, tol, max_iter, message):
    model = Model(models.pendulum(2))
    with pytest.raises(ValueError, match=message):
        simulate_fn(model, [0.3, 0.0], [0.0, 0.0], 1e-2, 3, tol=tol, max_iter=max_iter)
