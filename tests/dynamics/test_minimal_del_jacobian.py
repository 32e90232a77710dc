"""The analytic DEL Jacobian (Lee et al. 2016, Appendix, Algorithm 4): ``∂(dlog(ξ)ᵀ y)/∂ξ``
against finite differences and the Bernoulli series, ``∂f/∂q_{k+1}`` against central finite
differences of the residual on random trees of every joint type (springs, dampers, gravity),
Newton's quadratic convergence and agreement with RIQN, the compiled kernels against the
reference, and joint torques in the compiled loop."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynamics import models
from dynamics.minimal import Model, integrate, random_configuration, spatial, tree_kernels
from dynamics.minimal import variational as vi
from dynamics.minimal.variational import (
    del_jacobian,
    del_jacobian_fd,
    del_residual,
    dlog_transpose_jacobian,
    simulate_variational,
    variational_step,
)
from dynamics.spec import SpecError
from tests.dynamics.minimal_trees import random_spec, rel_error

SETTINGS = settings(max_examples=12, deadline=None)
coord = st.floats(-1.0, 1.0, allow_nan=False)
six = st.tuples(*[coord] * 6).map(np.array)


def _with_joint_forces(spec, k=3.0, d=0.4):
    """Springs and dampers on every revolute, prismatic and spherical joint."""
    return dataclasses.replace(spec, joints=tuple(
        dataclasses.replace(j, spring=k, damper=d) if j.type in ("revolute", "prismatic",
                                                                 "spherical") else j
        for j in spec.joints))


def _model(seed, *, floating=False, spherical=0.4, forces=True, rotation="quaternion",
           max_links=6):
    """A random tree with at least two degrees of freedom (the first fitting seed from
    ``seed`` on: some random URDFs have no moving body)."""
    for s in range(seed, seed + 50):
        try:
            spec = random_spec(s, floating_base=floating, spherical=spherical,
                               max_links=max_links)
        except SpecError:
            continue
        model = Model(_with_joint_forces(spec) if forces else spec, rotation=rotation)
        if model.nv >= 2:
            return model
    raise AssertionError(f"no random tree with two DOF from seed {seed}")


def _fd_dlog_transpose(xi, y, h=1e-6):
    return np.array([(spatial.dlog(xi + h * e).T @ y - spatial.dlog(xi - h * e).T @ y) / (2 * h)
                     for e in np.eye(6)]).T


# -- the derivative of dlog ---------------------------------------------------------------------
@SETTINGS
@given(xi=six, y=six, angle=st.sampled_from([0.0, 1e-4, 0.05, 0.7, 0.999, 1.001, 2.0, 3.0]))
def test_dlog_transpose_jacobian_matches_finite_differences(xi, y, angle):
    w = xi[:3]
    norm = np.linalg.norm(w)
    xi = xi.copy()
    xi[:3] = angle * w / norm if norm > 1e-3 else [angle, 0.0, 0.0]
    K = dlog_transpose_jacobian(xi, y)
    scale = max(1.0, np.abs(K).max())
    assert np.abs(K - _fd_dlog_transpose(xi, y)).max() < 1e-8 * scale
    # the compiled kernel is the same function
    Kc = np.empty((6, 6))
    tree_kernels._dlog_transpose_jacobian(xi, y, Kc)
    assert np.abs(Kc - K).max() < 1e-13 * scale


def test_dlog_transpose_jacobian_matches_the_bernoulli_series():
    """Differentiating the series of eq. (12) term by term gives the same matrix."""
    rng = np.random.default_rng(0)
    xi, y = rng.normal(size=6), rng.normal(size=6)
    xi[:3] *= 1.2 / np.linalg.norm(xi[:3])
    h = 1e-6
    series = np.array([(spatial.dlog_series(xi + h * e, 80).T @ y
                        - spatial.dlog_series(xi - h * e, 80).T @ y) / (2 * h)
                       for e in np.eye(6)]).T
    assert rel_error(dlog_transpose_jacobian(xi, y), series) < 1e-8


def test_d_coefficients_are_continuous_at_the_series_switch():
    below = spatial._d_and_derivatives(np.nextafter(spatial._SERIES_ANGLE, 0.0))
    above = spatial._d_and_derivatives(spatial._SERIES_ANGLE)
    for a, b in zip(below, above, strict=True):
        assert abs(a - b) < 1e-11 * abs(b)
    assert spatial._d_and_derivatives(0.3)[0] == pytest.approx(spatial._coefficients(0.3)[3],
                                                               rel=1e-14)
    assert tree_kernels._d_derivatives(2.0) == pytest.approx(spatial._d_and_derivatives(2.0),
                                                             rel=1e-14)


# -- ∂f/∂q_{k+1} ---------------------------------------------------------------------------------
@SETTINGS
@given(seed=st.integers(0, 10_000), floating=st.booleans(),
       rotation=st.sampled_from(["quaternion", "rotation_vector"]),
       dt=st.sampled_from([1e-3, 1e-2, 5e-2]), speed=st.sampled_from([1.0, 10.0]))
def test_del_jacobian_matches_central_differences(seed, floating, rotation, dt, speed):
    model = _model(seed, floating=floating, rotation=rotation)
    data = model.create_data()
    rng = np.random.default_rng(seed)
    q = random_configuration(model, rng)
    q_next = integrate(model, q, dt * speed * rng.normal(size=model.nv))
    p = rng.normal(size=model.nv)
    J = del_jacobian(model, data, q, p, q_next, dt)
    assert J.shape == (model.nv, model.nv)
    assert rel_error(J, del_jacobian_fd(model, data, q, p, q_next, dt, h=1e-5)) < 1e-8


def test_del_jacobian_with_spherical_dampers_and_floating_base():
    """Every joint type in one tree: floating base, spherical joints with dampers, springs."""
    spec = _with_joint_forces(random_spec(17, floating_base=True, spherical=0.6, max_links=8))
    model = Model(spec)
    assert {jm.type for jm in model.joints} == {"floating", "spherical", "revolute",
                                               "prismatic"}
    assert np.any(vi.joint_springs(model).damping)
    data = model.create_data()
    rng = np.random.default_rng(1)
    q = random_configuration(model, rng)
    q_next = integrate(model, q, 0.05 * rng.normal(size=model.nv))
    p, tau = rng.normal(size=(2, model.nv))
    J = del_jacobian(model, data, q, p, q_next, 1e-2, tau)
    assert rel_error(J, del_jacobian_fd(model, data, q, p, q_next, 1e-2, tau, h=1e-5)) < 1e-8


def test_del_jacobian_is_the_mass_matrix_over_dt_at_rest():
    """At ``q_{k+1} = q_k`` (no gravity, springs or dampers), ``∂f/∂q_{k+1} = M(q_k)/Δt``."""
    spec = dataclasses.replace(random_spec(3, max_links=6), gravity=np.zeros(3))
    model = Model(spec)
    data = model.create_data()
    q = random_configuration(model, 0)
    dt = 1e-2
    J = del_jacobian(model, data, q, np.zeros(model.nv), q, dt)
    assert rel_error(J, vi.crba(model, data, q) / dt) < 1e-12


# -- Newton ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["chain", "spherical", "tree"])
def test_newton_converges_quadratically_and_agrees_with_riqn(name):
    model = {"chain": lambda: Model(models.pendulum(5)),
             "spherical": lambda: Model(models.pendulum(3, "spherical")),
             "tree": lambda: _model(5, max_links=8)}[name]()
    data = model.create_data()
    rng = np.random.default_rng(7)
    dt, tol = 1e-2, 1e-13
    q = random_configuration(model, rng)
    p = vi.crba(model, data, q) @ (3.0 * rng.normal(size=model.nv))
    w = vi.convergence_weights(model, data, q, dt)
    hist = {}
    res = {}
    for solver, jac in (("newton", "analytic"), ("newton", "fd"), ("riqn", "analytic")):
        hist[solver, jac] = []
        res[solver, jac] = variational_step(model, data, q, p, dt, solver=solver,
                                            initial_guess="ig1", tol=tol, weights=w,
                                            history=hist[solver, jac], jacobian=jac,
                                            max_iter=200)
    e = np.array(hist["newton", "analytic"])
    assert len(e) >= 4                               # it really iterates
    # quadratic (Fig. 4a): log e_{l+1} / log e_l ≈ 2 once e_l < 0.1, above round-off
    rates = [np.log(b) / np.log(a) for a, b in zip(e[:-1], e[1:], strict=True)
             if a < 0.1 and b > 1e-13]
    assert rates and min(rates) > 1.7, e
    np.testing.assert_allclose(hist["newton", "fd"], e, rtol=1e-3, atol=1e-13)
    assert res["newton", "analytic"].iterations < res["riqn", "analytic"].iterations
    assert res["newton", "analytic"].iterations == res["newton", "fd"].iterations
    ref = res["newton", "analytic"].q_next
    for key in (("newton", "fd"), ("riqn", "analytic")):
        assert np.abs(res[key].q_next - ref).max() < 1e-10
    f = del_residual(model, data, q, p, ref, dt)
    assert np.max(np.abs(f) * w) <= tol


def test_simulations_with_analytic_and_fd_jacobians_agree():
    model = _model(2, max_links=5)
    q0 = random_configuration(model, 1)
    v0 = np.random.default_rng(1).normal(size=model.nv)
    a = simulate_variational(model, q0, v0, 1e-3, 15, solver="newton")
    b = simulate_variational(model, q0, v0, 1e-3, 15, solver="newton", jacobian="fd")
    np.testing.assert_allclose(a.q, b.q, atol=1e-11)
    np.testing.assert_array_equal(a.iterations, b.iterations)


def test_bad_jacobian_names():
    model = Model(models.pendulum(2))
    with pytest.raises(ValueError, match="jacobian"):
        simulate_variational(model, [0, 0], [0, 0], 1e-3, 2, solver="newton", jacobian="exact")
    with pytest.raises(ValueError, match="jacobian"):
        simulate_variational(model, [0, 0], [0, 0], 1e-3, 2, solver="newton",
                             jacobian="exact", backend="compiled")
    with pytest.raises(ValueError, match="jacobian"):
        variational_step(model, model.create_data(), [0, 0], [0, 0], 1e-3, jacobian="exact")


# -- compiled ----------------------------------------------------------------------------------
@SETTINGS
@given(seed=st.integers(0, 10_000), dt=st.sampled_from([1e-3, 1e-2]))
def test_compiled_del_jacobian_matches_the_reference(seed, dt):
    model = _model(seed, spherical=0.0, max_links=8)
    data = model.create_data()
    rng = np.random.default_rng(seed)
    q = random_configuration(model, rng)
    q_next = q + dt * 5.0 * rng.normal(size=model.nv)
    p = rng.normal(size=model.nv)
    assert rel_error(tree_kernels.del_jacobian(model, data, q, p, q_next, dt),
                     del_jacobian(model, data, q, p, q_next, dt)) < 1e-12


@pytest.mark.parametrize("jacobian", vi.JACOBIANS)
def test_compiled_newton_matches_the_reference(jacobian):
    model = Model(_with_joint_forces(models.pendulum(4)))
    q0, v0 = np.array([0.5, 0.1, -0.2, 0.3]), np.array([0.0, 1.0, 0.0, -1.0])
    kw = dict(solver="newton", initial_guess="ig1", jacobian=jacobian)
    a = simulate_variational(model, q0, v0, 1e-2, 30, **kw)
    b = simulate_variational(model, q0, v0, 1e-2, 30, backend="compiled", **kw)
    np.testing.assert_allclose(a.q, b.q, atol=1e-12)
    np.testing.assert_allclose(a.v, b.v, atol=1e-9)
    np.testing.assert_array_equal(a.iterations, b.iterations)
    assert a.iterations.min() >= 2


@pytest.mark.parametrize("per_step", [False, True])
def test_compiled_loop_with_joint_torques(per_step):
    model = Model(_with_joint_forces(random_spec(4, spherical=0.0, max_links=6)))
    n, dt, steps = model.nv, 1e-3, 25
    rng = np.random.default_rng(3)
    q0, v0 = random_configuration(model, rng), rng.normal(size=n)
    tau = rng.normal(size=(steps, n)) if per_step else rng.normal(size=n)

    def controller(t, q, v):
        return tau[int(round(t / dt))] if per_step else tau

    for solver in ("riqn", "newton"):
        a = simulate_variational(model, q0, v0, dt, steps, solver=solver, controller=controller)
        b = tree_kernels.simulate_variational_compiled(model, q0, v0, dt, steps, solver=solver,
                                                   tau=tau)
        np.testing.assert_allclose(a.q, b.q, atol=1e-12)
        np.testing.assert_allclose(a.v, b.v, atol=1e-9)
        np.testing.assert_array_equal(a.iterations, b.iterations)
    free = tree_kernels.simulate_variational_compiled(model, q0, v0, dt, steps)
    assert np.abs(free.q[-1] - b.q[-1]).max() > 1e-8
    with pytest.raises(ValueError, match="tau"):
        tree_kernels.simulate_variational_compiled(model, q0, v0, dt, steps, tau=np.zeros(n + 1))
