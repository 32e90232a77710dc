"""The Galerkin variational integrators of Fan, Schultz & Murphey (2018) in minimal coordinates
(:mod:`dynamics.minimal.galerkin`): quadrature, derivatives of the Lagrangian and the exact DEL
Jacobian against finite differences, compiled against reference, measured order of accuracy,
energy behaviour, reversibility and the failure report at unreachable tolerances."""
from __future__ import annotations

import doctest

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from dynamics import models
from dynamics.minimal import (
    Model,
    crba,
    galerkin,
    initial_state,
    kinetic_energy,
    potential_energy,
    simulate,
    tree_kernels,
)
from dynamics.minimal.forces import spring_energy
from dynamics.minimal.galerkin import (
    GalerkinFailure,
    degree,
    galerkin_jacobian,
    galerkin_jacobian_fd,
    galerkin_momentum,
    galerkin_residual,
    lagrangian_derivatives,
    lobatto,
    simulate_galerkin,
)
from tests.dynamics.minimal_trees import sprung_tree as _sprung_tree


def test_doctests():
    assert doctest.testmod(galerkin).failed == 0


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_lobatto_rule_and_differentiation_matrix(s):
    c, w, a = lobatto(s)
    assert c[0] == 0.0 and c[-1] == 1.0 and np.allclose(c, 1.0 - c[::-1])
    for deg in range(2 * s):                    # exact to degree 2s - 1
        assert w @ c**deg == pytest.approx(1.0 / (deg + 1), abs=1e-14)
    assert w @ c ** (2 * s) != pytest.approx(1.0 / (2 * s + 1), abs=1e-8)
    for deg in range(s + 1):                    # a differentiates degree-s polynomials
        assert np.allclose(a @ c**deg, deg * c ** max(deg - 1, 0), atol=1e-12)


def test_paper_orders():
    assert (degree(2), degree(3)) == (1, 2)
    with pytest.raises(ValueError):
        degree(4)


@pytest.mark.parametrize("make", [lambda: Model(models.pendulum(4)), _sprung_tree])
def test_lagrangian_derivatives_against_finite_differences(make):
    model = make()
    data = model.create_data()
    rng = np.random.default_rng(0)
    n = model.nv
    q, v = rng.normal(size=n), rng.normal(size=n)

    def lagrangian(q, v):
        return (kinetic_energy(model, data, q, v) - potential_energy(model, data, q)
                - spring_energy(model, q))

    def first(q, v):
        d = lagrangian_derivatives(model, data, q, v)
        return d["L_q"], d["L_v"]

    d = lagrangian_derivatives(model, data, q, v, hessians=True)
    h, E = 1e-6, np.eye(n)
    fd_q = [(lagrangian(q + h * e, v) - lagrangian(q - h * e, v)) / (2 * h) for e in E]
    fd_v = [(lagrangian(q, v + h * e) - lagrangian(q, v - h * e)) / (2 * h) for e in E]
    assert np.allclose(d["L_q"], fd_q, atol=1e-7) and np.allclose(d["L_v"], fd_v, atol=1e-7)
    assert np.allclose(d["M"], crba(model, data, q), atol=1e-13)
    dq = np.array([np.subtract(first(q + h * e, v), first(q - h * e, v)) / (2 * h) for e in E])
    assert np.allclose(d["L_qq"], dq[:, 0].T, atol=1e-7)     # column m: ∂/∂q_m
    assert np.allclose(d["L_vq"], dq[:, 1].T, atol=1e-7)
    assert np.allclose(d["L_qq"], d["L_qq"].T, atol=1e-12)


@pytest.mark.parametrize("s", [1, 2, 3])
def test_residual_jacobian_against_finite_differences(s):
    model = _sprung_tree()
    data, dt, n = model.create_data(), 0.01, model.nv
    rng = np.random.default_rng(s)
    q, p, tau = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    X = q + dt * rng.normal(size=(s, n)).cumsum(axis=0)
    J = galerkin_jacobian(model, data, q, p, X, dt, s, tau)
    fd = galerkin_jacobian_fd(model, data, q, p, X, dt, s, tau)
    assert np.abs(J - fd).max() < 1e-7 * np.abs(J).max()
    R, Jc = galerkin._compiled_problem(model, q, p, X, dt, s, tau)    # the numba kernels
    assert np.allclose(R, galerkin_residual(model, data, q, p, X, dt, s, tau), atol=1e-12)
    assert np.allclose(Jc, J, atol=1e-10 * np.abs(J).max())


def test_trapezoidal_case_is_the_two_point_rule():
    """s = 1: R_0 = p_k + Δt/2 L_q(q_k, v) - (M(q_k) + M(q_{k+1})) v / 2, v = Δq/Δt."""
    model = Model(models.pendulum(3))
    data, dt = model.create_data(), 0.02
    q, q1, p = np.array([0.3, -0.2, 0.5]), np.array([0.32, -0.25, 0.47]), np.array([1., 2, 3])
    v = (q1 - q) / dt
    d0, d1 = (lagrangian_derivatives(model, data, x, v, True) for x in (q, q1))
    R = galerkin_residual(model, data, q, p, q1[None], dt, 1)[0]
    assert np.allclose(R, p + 0.5 * dt * d0["L_q"] - 0.5 * (d0["M"] + d1["M"]) @ v)
    p1 = galerkin_momentum(model, data, q, p, q1[None], dt, 1)
    assert np.allclose(p1, 0.5 * dt * d1["L_q"] + 0.5 * (d0["M"] + d1["M"]) @ v)


@pytest.mark.parametrize("s", [1, 2])
def test_compiled_loop_matches_reference(s):
    model = _sprung_tree()
    q0, v0 = initial_state(model)
    tau = np.random.default_rng(1).normal(size=(30, model.nv))
    runs = [simulate_galerkin(model, q0, v0, 0.01, 30, s=s, tol=1e-12, norm="scaled", tau=tau,
                              backend=b)
            for b in ("reference", "compiled")]
    assert not any(r.failed for r in runs)
    assert np.allclose(runs[0].q, runs[1].q, atol=1e-11)
    assert np.allclose(runs[0].p, runs[1].p, atol=1e-9)
    assert np.allclose(runs[0].energy, runs[1].energy, atol=1e-9)
    assert np.abs(runs[0].iterations - runs[1].iterations).max() <= 1   # rounding at tol
    assert runs[1].iterations.max() <= 4                    # Newton, exact Jacobian


def test_hanging_chain_stays_at_rest():
    model = Model(models.pendulum(5))
    res = simulate_galerkin(model, np.zeros(5), np.zeros(5), 0.01, 50, s=2)
    assert not res.failed and np.abs(res.q).max() < 1e-13 and res.iterations.max() == 0


@pytest.mark.parametrize("s, dts, order", [(1, (0.02, 0.01, 0.005, 0.0025), 2),
                                           (2, (0.02, 0.01, 0.005), 4),
                                           (3, (0.05, 0.025, 0.0125), 6)])
def test_order_of_accuracy(s, dts, order):
    """Global error at T = 1 s of a double pendulum against DOP853 at rtol 1e-13: slopes 2, 4, 6
    (the papers' "2nd-order" is s = 1, their "3rd-order" s = 2)."""
    model = Model(models.pendulum(2))
    data = model.create_data()
    q0, v0, T = np.array([1.0, 0.5]), np.zeros(2), 1.0
    ref = solve_ivp(lambda t, y: np.concatenate([y[2:], tree_kernels.aba(model, data, y[:2], y[2:],
                                                                     np.zeros(2))]),
                    (0.0, T), np.concatenate([q0, v0]), method="DOP853", rtol=1e-13,
                    atol=1e-13).y[:, -1]
    errors = []
    for dt in dts:
        res = simulate_galerkin(model, q0, v0, dt, round(T / dt), s=s, tol=1e-12, norm="impulse")
        assert not res.failed, res.reason
        errors.append(max(np.abs(res.q[-1] - ref[:2]).max(), np.abs(res.v[-1] - ref[2:]).max()))
    slope = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert abs(slope - order) < 0.3, (errors, slope)


@pytest.mark.parametrize("s, bound", [(1, 0.5), (2, 1e-3)])
def test_energy_error_bounded_without_drift(s, bound):
    """200 s of the chaotic double pendulum released horizontally (2023 Fig. 7b) at Δt = 10 ms:
    the energy error stays bounded (no drift), unlike RK4's, which grows eightfold."""
    model = Model(models.double_pendulum())
    q0, v0 = initial_state(model)
    res = simulate_galerkin(model, q0, v0, 0.01, 20000, s=s, tol=1e-12, norm="scaled")
    assert not res.failed, res.reason
    err = np.abs(res.energy - res.energy[0])
    quarter = len(err) // 4
    assert err.max() < bound
    assert err[-quarter:].max() < 1.5 * err[:quarter].max()
    rk4 = simulate(model, q0, v0, 0.01, 20000, "rk4", backend="compiled")
    rk4_err = np.abs(rk4.energy - rk4.energy[0])
    assert rk4_err[-quarter:].max() > 4 * rk4_err[:quarter].max()


@pytest.mark.parametrize("s", [1, 2])
def test_reversible(s):
    """Symmetric method: from (q_N, -p_N) the integrator retraces the trajectory to (q_0, -p_0)."""
    model = Model(models.pendulum(3))
    q0, v0 = np.array([1.0, -0.5, 0.3]), np.array([0.2, 0.0, -0.4])
    fwd = simulate_galerkin(model, q0, v0, 0.02, 100, s=s, tol=1e-13, norm="scaled")
    back = simulate_galerkin(model, fwd.q[-1], -fwd.v[-1], 0.02, 100, s=s, tol=1e-13,
                             norm="scaled")
    assert not (fwd.failed or back.failed)
    assert np.abs(back.q[-1] - q0).max() < 1e-9
    assert np.abs(back.v[-1] + v0).max() < 1e-8
    assert np.allclose(back.q[::-1], fwd.q, atol=1e-9)


def test_unreachable_tolerance_is_reported_as_a_failure():
    """The residual of a 10-link chain cannot get below ~5e-10 N m with s = 2 (module docstring):
    tol 1e-10 fails at the first step after max_iter updates, 1e-8 converges."""
    model = Model(models.pendulum(10))
    q0, v0 = initial_state(model)
    res = simulate_galerkin(model, q0, v0, 0.01, 20, s=2, tol=1e-10, max_iter=30)
    assert res.failed and res.failed_step == 0 and res.steps == 0 and len(res.q) == 1
    assert "max_iter after 30 Newton updates" in res.reason and "force residual" in res.reason
    with pytest.raises(GalerkinFailure, match="step 0") as info:
        simulate_galerkin(model, q0, v0, 0.01, 20, s=2, tol=1e-10, max_iter=30,
                          raise_on_failure=True)
    assert info.value.result.failed
    ok = simulate_galerkin(model, q0, v0, 0.01, 20, s=2, tol=1e-8)
    assert not ok.failed and ok.reason == "" and ok.steps == 20 and ok.iterations.max() <= 3
    # the per-joint scaled measure of Lee et al. is reachable at the same nominal tolerance
    assert not simulate_galerkin(model, q0, v0, 0.01, 20, s=2, tol=1e-10, norm="scaled").failed


def test_argument_errors():
    model = Model(models.pendulum(2))
    with pytest.raises(ValueError, match="norm"):
        simulate_galerkin(model, [0, 0], [0, 0], 0.01, 1, norm="l2")
    with pytest.raises(ValueError, match="backend"):
        simulate_galerkin(model, [0, 0], [0, 0], 0.01, 1, backend="gpu")
    with pytest.raises(ValueError, match="s must be"):
        simulate_galerkin(model, [0, 0], [0, 0], 0.01, 1, s=0)
    with pytest.raises(ValueError, match="tau"):
        simulate_galerkin(model, [0, 0], [0, 0], 0.01, 3, tau=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="spherical"):
        simulate_galerkin(Model(models.pendulum(2, "spherical")), np.tile([1., 0, 0, 0], 2),
                          np.zeros(6), 0.01, 1)
