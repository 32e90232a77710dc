"""The variational integrator of Lee et al. (2016): DRNEA against finite differences of the
discrete action, the three root finders against each other, the DEL residual along computed
trajectories, energy behaviour (Fig. 2b), iteration counts (Fig. 4b), reference vs compiled,
and failure modes."""
from __future__ import annotations

import doctest

import numpy as np
import pytest

from dynamics import models
from dynamics.minimal import (
    Model,
    forward_kinematics,
    initial_state,
    integrate,
    potential_energy,
    random_configuration,
    spatial,
    tree_kernels,
    variational,
)
from dynamics.minimal.forces import spring_energy
from dynamics.minimal.integrators import simulate
from dynamics.minimal.variational import (
    ConvergenceError,
    del_residual,
    discrete_momentum,
    drnea,
    simulate_variational,
    variational_step,
)
from tests.dynamics.minimal_trees import random_spec, rel_error


def _discrete_lagrangian(model, data, q0, q1, dt):
    """Eq. (9)-(10) summed over the links, from world poses (independent of DRNEA)."""
    forward_kinematics(model, data, q0)
    T0 = data.T_world_link.copy()
    forward_kinematics(model, data, q1)
    kinetic = 0.0
    for i in range(model.njoints):
        V = spatial.log_se3(spatial.inverse(T0[i]) @ data.T_world_link[i]) / dt
        kinetic += 0.5 * V @ model.inertias[i] @ V

    def P(q):
        return potential_energy(model, data, q) + spring_energy(model, q)

    return dt * kinetic - 0.5 * dt * (P(q0) + P(q1))


def _action_gradient(model, data, q_prev, q, q_next, dt, h=1e-6):
    """``-(D₂L_d(q_prev, q) + D₁L_d(q, q_next))`` by central differences along ``q ⊕ h e_j``."""
    out = np.empty(model.nv)
    for j in range(model.nv):
        e = np.zeros(model.nv)
        e[j] = h

        def action(x):
            return (_discrete_lagrangian(model, data, q_prev, x, dt)
                    + _discrete_lagrangian(model, data, x, q_next, dt))

        out[j] = -(action(integrate(model, q, e)) - action(integrate(model, q, -e))) / (2 * h)
    return out


def _with_springs(spec, k=3.0):
    import dataclasses
    return dataclasses.replace(spec, joints=tuple(
        dataclasses.replace(j, spring=k) if j.type in ("revolute", "prismatic", "spherical")
        else j for j in spec.joints))


MODELS = {
    "revolute_chain": lambda: Model(models.pendulum(4)),
    "spherical_chain": lambda: Model(models.pendulum(3, "spherical")),
    "spherical_rotvec": lambda: Model(models.pendulum(2, "spherical"),
                                      rotation="rotation_vector"),
    "random_tree_springs": lambda: Model(_with_springs(random_spec(5, max_links=6))),
    "floating_tree": lambda: Model(random_spec(4, max_links=5, floating_base=True)),
}


@pytest.mark.parametrize("name", MODELS)
def test_drnea_is_the_gradient_of_the_discrete_action(name):
    model = MODELS[name]()
    data = model.create_data()
    rng = np.random.default_rng(2)
    dt = 1e-2
    q = random_configuration(model, rng)
    q_prev = integrate(model, q, -dt * rng.normal(size=model.nv))
    q_next = integrate(model, q, dt * rng.normal(size=model.nv))
    f = drnea(model, data, q_prev, q, q_next, dt)
    oracle = _action_gradient(model, data, q_prev, q, q_next, dt)
    assert np.abs(f - oracle).max() < 1e-7 * max(1.0, np.abs(f).max())
    # the momentum form the solvers use is the same function
    p = discrete_momentum(model, data, q_prev, q, dt)
    assert rel_error(del_residual(model, data, q, p, q_next, dt), f) < 1e-12


def test_drnea_with_joint_forces_and_dampers():
    """Forcing enters as ``-Q``: ``Δt τ`` and ``-d/2 (q_{k+1} ⊖ q_{k-1})``."""
    model = Model(models.pendulum(3, damper=0.7))
    data = model.create_data()
    rng = np.random.default_rng(3)
    q_prev, q, q_next = rng.normal(size=(3, 3))
    tau = rng.normal(size=3)
    free = Model(models.pendulum(3))
    f0 = drnea(free, free.create_data(), q_prev, q, q_next, 1e-3)
    f = drnea(model, data, q_prev, q, q_next, 1e-3, tau)
    np.testing.assert_allclose(f, f0 - 1e-3 * tau + 0.35 * (q_next - q_prev), atol=1e-12)


@pytest.mark.parametrize("name", ["revolute_chain", "spherical_chain", "random_tree_springs"])
def test_riqn_newton_and_broyden_reach_the_same_next_configuration(name):
    model = MODELS[name]()
    data = model.create_data()
    rng = np.random.default_rng(4)
    dt, tol = 1e-3, 1e-12
    q = random_configuration(model, rng)
    p = variational.crba(model, data, q) @ rng.normal(size=model.nv)
    w = variational.convergence_weights(model, data, q, dt)
    results = {s: variational_step(model, data, q, p, dt, solver=s, initial_guess="ig1",
                                   tol=tol, weights=w) for s in variational.SOLVERS}
    for s, res in results.items():
        f = del_residual(model, data, q, p, res.q_next, dt)
        assert np.max(np.abs(f) * w) <= tol, s
    ref = results["newton"].q_next
    for s in ("riqn", "broyden"):
        assert np.abs(results[s].q_next - ref).max() < 1e-9
    # Fig. 4: Newton needs fewer iterations than the quasi-Newton methods
    assert results["newton"].iterations <= results["riqn"].iterations


@pytest.mark.parametrize("solver", variational.SOLVERS)
@pytest.mark.parametrize("name", ["revolute_chain", "spherical_chain"])
def test_del_residual_vanishes_along_the_trajectory(solver, name):
    model = MODELS[name]()
    data = model.create_data()
    rng = np.random.default_rng(5)
    dt = 1e-3
    q0 = random_configuration(model, rng)
    v0 = rng.normal(size=model.nv)
    res = simulate_variational(model, q0, v0, dt, 30, solver=solver)
    assert res.iterations.shape == (30,) and res.iterations.min() >= 0
    w = variational.convergence_weights(model, data, q0, dt)
    for k in range(1, 30):
        f = drnea(model, data, res.q[k - 1], res.q[k], res.q[k + 1], dt)
        assert np.max(np.abs(f) * w) < 1e-9


def test_initial_guesses_and_iteration_counts():
    """IG3 (semi-implicit Euler) starts closest: fewer iterations than IG2 and IG1."""
    model = Model(models.pendulum(5))
    q0, v0 = initial_state(model)
    means = {ig: simulate_variational(model, q0, v0, 1e-3, 200, solver="riqn",
                                      initial_guess=ig, backend="compiled").iterations.mean()
             for ig in variational.INITIAL_GUESSES}
    assert means["ig3"] < means["ig2"] < means["ig1"]


def test_second_order_accuracy():
    model = Model(models.pendulum(3))
    q0, v0 = np.array([1.0, -0.5, 0.3]), np.array([0.0, 1.0, -1.0])
    T = 0.5
    ref = simulate(model, q0, v0, T / 400, 400, "rk4")
    errs = [np.abs(simulate_variational(model, q0, v0, T / n, n, backend="compiled").q[-1]
                   - ref.q[-1]).max() for n in (25, 50, 100)]
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all((orders > 1.8) & (orders < 2.3)), orders


def test_ten_link_chain_conserves_energy_over_ten_thousand_steps():
    """Lee et al. (2016) Fig. 2b: 10 rods on revolute joints under gravity, Δt = 1 ms, 10⁴
    steps (10 s). The variational integrator's energy error stays bounded (no drift); semi-
    implicit Euler's drifts by orders of magnitude more."""
    model = Model(models.pendulum(10))
    q0, v0 = initial_state(model)
    dt, steps = 1e-3, 10_000
    vi = simulate_variational(model, q0, v0, dt, steps, solver="riqn", backend="compiled")
    err = vi.energy - vi.energy[0]
    assert np.abs(err).max() < 1e-3                      # |E| ≈ 347 J: 3e-6 relative
    drift = abs(err[-2000:].mean() - err[:2000].mean())
    assert drift < 1e-4
    # semi-implicit Euler, directly on the compiled ABA (q is a vector space here)
    data = model.create_data()
    q, v = q0.copy(), v0.copy()
    sie = simulate(model, q0, v0, dt, 20, "semi_implicit_euler")
    energies = []
    for k in range(steps):
        v = v + dt * tree_kernels.aba(model, data, q, v, np.zeros(model.nv))
        q = q + dt * v
        if k == 19:
            np.testing.assert_allclose(q, sie.q[-1], atol=1e-12)
        if k % 500 == 499:
            energies.append(variational.total_energy(model, data, q, v))
    sie_err = np.array(energies) - vi.energy[0]
    assert np.abs(sie_err).max() > 100 * np.abs(err).max()
    # the reference and compiled loops agree on the first steps
    ref = simulate_variational(model, q0, v0, dt, 20, solver="riqn")
    np.testing.assert_allclose(ref.q, vi.q[:21], atol=1e-12)
    np.testing.assert_array_equal(ref.iterations, vi.iterations[:20])


def test_damped_chain_loses_energy():
    model = Model(models.pendulum(3, damper=0.5))
    q0, v0 = np.array([1.0, 0.0, 0.0]), np.zeros(3)
    res = simulate_variational(model, q0, v0, 1e-3, 2000, backend="compiled")
    assert res.energy[-1] < res.energy[0] - 0.1
    assert np.all(np.diff(res.energy[::100]) < 1e-9)


@pytest.mark.parametrize("solver", variational.SOLVERS)
def test_compiled_loop_matches_the_reference(solver):
    model = Model(_with_springs(models.pendulum(4, damper=0.2)))
    q0, v0 = np.array([0.5, 0.1, -0.2, 0.3]), np.array([0.0, 1.0, 0.0, -1.0])
    a = simulate_variational(model, q0, v0, 1e-3, 40, solver=solver)
    b = simulate_variational(model, q0, v0, 1e-3, 40, solver=solver, backend="compiled")
    np.testing.assert_allclose(a.q, b.q, atol=1e-12)
    np.testing.assert_allclose(a.v, b.v, atol=1e-9)
    np.testing.assert_allclose(a.energy, b.energy, atol=1e-10)
    np.testing.assert_array_equal(a.iterations, b.iterations)
    rng = np.random.default_rng(0)
    q, p = rng.normal(size=(2, 4))
    q_next = q + 1e-3 * rng.normal(size=4)
    data = model.create_data()
    assert rel_error(tree_kernels.drnea_momentum_form(model, data, q, p, q_next, 1e-3),
                     del_residual(model, data, q, p, q_next, 1e-3)) < 1e-12


def test_controller_is_applied_as_an_impulse():
    """A constant torque τ on a single free-swinging link without gravity: p grows by Δt τ."""
    model = Model(models.pendulum(1))
    import dataclasses
    model = Model(dataclasses.replace(models.pendulum(1), gravity=np.zeros(3)))
    res = simulate_variational(model, [0.0], [0.0], 1e-3, 100, controller=lambda t, q, v: [2.0])
    J = variational.crba(model, model.create_data(), [0.0])[0, 0]
    assert res.v[-1, 0] == pytest.approx(2.0 * 0.1 / J, rel=1e-9)


def test_convergence_failure_is_reported():
    model = Model(models.pendulum(3))
    with pytest.raises(ConvergenceError, match="step 0") as info:
        simulate_variational(model, [1.0, 0, 0], [0, 0, 0], 1e-3, 5, max_iter=0,
                             initial_guess="ig1")
    assert info.value.step == 0
    with pytest.raises(ConvergenceError, match="step 0"):
        simulate_variational(model, [1.0, 0, 0], [0, 0, 0], 1e-3, 5, max_iter=0,
                             initial_guess="ig1", backend="compiled")


def test_bad_arguments():
    model = Model(models.pendulum(2))
    with pytest.raises(ValueError, match="solver"):
        simulate_variational(model, [0, 0], [0, 0], 1e-3, 2, solver="lbfgs")
    with pytest.raises(ValueError, match="initial_guess"):
        simulate_variational(model, [0, 0], [0, 0], 1e-3, 2, initial_guess="ig4")
    with pytest.raises(ValueError, match="initial_guess"):
        simulate_variational(model, [0, 0], [0, 0], 1e-3, 2, initial_guess="ig4",
                             backend="compiled")
    with pytest.raises(ValueError, match="q_next"):
        drnea(model, model.create_data(), [0, 0], [0, 0], [0, 0, 0], 1e-3)
    with pytest.raises(ValueError, match="controller"):
        simulate_variational(model, [0, 0], [0, 0], 1e-3, 2, backend="compiled",
                             solver="newton", controller=lambda t, q, v: q)
    with pytest.raises(ValueError, match="quaternion"):
        drnea(Model(models.pendulum(1, "spherical")), None, [1, 0, 0, 0], [2, 0, 0, 0],
              [1, 0, 0, 0], 1e-3)


def test_doctests():
    assert doctest.testmod(variational, optionflags=doctest.ELLIPSIS).failed == 0
