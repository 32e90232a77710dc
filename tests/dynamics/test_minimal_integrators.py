"""dynamics.minimal explicit integrators and joint forces: convergence orders against a fine
reference, springs and dampers against the closed-form oscillator, energy bookkeeping and one
test per failure mode."""
from __future__ import annotations

import doctest

import numpy as np
import pytest

from dynamics import models
from dynamics.minimal import Model, difference, forces, integrators, random_configuration
from dynamics.minimal.integrators import simulate, step
from dynamics.minimal.model import TreeModelError
from dynamics.spec import WORLD, Body, Joint, MechanismSpec
from tests.dynamics.minimal_trees import random_spec


def _error(model, a, b):
    return (np.linalg.norm(difference(model, a.q[-1], b.q[-1]))
            + np.linalg.norm(a.v[-1] - b.v[-1]))


def _orders(model, method, q0, v0, T=0.4, ns=(20, 40, 80)):
    ref = simulate(model, q0, v0, T / 640, 640, "rk4")
    errs = np.array([_error(model, simulate(model, q0, v0, T / n, n, method), ref) for n in ns])
    return np.log2(errs[:-1] / errs[1:])


@pytest.mark.parametrize("case", ["revolute", "spherical", "spherical_rotvec", "floating"])
def test_rk4_is_fourth_order_on_every_joint_type(case):
    """Runge-Kutta-Munthe-Kaas: order 4 also on SO(3) and SE(3) joints (a plain RK4 on the
    quaternion entries would leave the manifold)."""
    if case == "floating":
        model = Model(random_spec(2, max_links=4, floating_base=True))
    else:
        joint = "revolute" if case == "revolute" else "spherical"
        rotation = "rotation_vector" if case.endswith("rotvec") else "quaternion"
        model = Model(models.pendulum(3, joint), rotation=rotation)
    rng = np.random.default_rng(1)
    q0 = random_configuration(model, rng, scale=0.7)
    v0 = rng.normal(size=model.nv)
    orders = _orders(model, "rk4", q0, v0)
    assert orders.min() > 3.7, orders
    for method in ("euler", "semi_implicit_euler"):
        assert 0.6 < _orders(model, method, q0, v0).mean() < 1.4


def _oscillator(k, d, gravity=(0.0, 0.0, 0.0)):
    body = Body("b", 2.0, np.diag([0.3, 0.5, 0.7]))
    spec = MechanismSpec((body,), (Joint("j", "revolute", WORLD, "b", axis=[0, 0, 1],
                                         spring=k, damper=d, spring_offset=[0.2]),),
                         gravity=np.array(gravity))
    return Model(spec)


def test_spring_damper_matches_the_closed_form_oscillator():
    k, d, J = 3.0, 0.4, 0.7                        # J: inertia about the z axis
    model = _oscillator(k, d)
    res = simulate(model, [1.2], [0.0], 1e-3, 2000, "rk4")
    wn, zeta = np.sqrt(k / J), d / (2 * np.sqrt(k * J))
    wd = wn * np.sqrt(1 - zeta**2)
    t = res.t
    x0 = 1.0                                       # initial deflection from the rest angle 0.2
    exact = 0.2 + x0 * np.exp(-zeta * wn * t) * (np.cos(wd * t)
                                                 + zeta * wn / wd * np.sin(wd * t))
    np.testing.assert_allclose(res.q[:, 0], exact, atol=1e-10)
    assert np.all(np.diff(res.energy) <= 1e-12)    # the damper only dissipates


def test_spring_energy_is_conserved_without_damper():
    model = _oscillator(5.0, 0.0, gravity=(0.0, -9.81, 0.0))
    res = simulate(model, [1.0], [0.5], 1e-3, 1000, "rk4")
    assert np.ptp(res.energy) < 1e-10 * np.abs(res.energy).max()


def test_spherical_spring_torque_is_minus_the_energy_gradient():
    body = Body("b", 1.0, np.diag([0.3, 0.5, 0.7]))
    spec = MechanismSpec((body,), (Joint("j", "spherical", WORLD, "b", spring=2.0,
                                         spring_offset=[0.3, -0.2, 0.1]),))
    model = Model(spec)
    q = random_configuration(model, 4)
    grad = np.empty(3)
    for i in range(3):
        e = np.zeros(3)
        e[i] = 1e-6
        grad[i] = (forces.spring_energy(model, integrators.integrate(model, q, e))
                   - forces.spring_energy(model, integrators.integrate(model, q, -e))) / 2e-6
    np.testing.assert_allclose(forces.joint_forces(model, q, np.zeros(3)), -grad, atol=1e-8)


def test_controller_torque_and_its_length():
    model = Model(models.pendulum(2))
    data = model.create_data()
    q, v = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    tau = np.array([1.0, -2.0])
    q1, v1 = step(model, data, q, v, 1e-3, "euler", controller=lambda t, q, v: tau)
    a = integrators.aba(model, data, q, v, tau)
    np.testing.assert_allclose(v1, v + 1e-3 * a)
    with pytest.raises(ValueError, match="controller"):
        step(model, data, q, v, 1e-3, "rk4", controller=lambda t, q, v: np.zeros(3))


@pytest.mark.parametrize("method", ["euler", "semi_implicit_euler", "rk4"])
def test_compiled_backend_gives_the_same_steps(method):
    model = Model(models.pendulum(4, damper=0.1))
    q0, v0 = np.array([0.5, 0.1, -0.2, 0.3]), np.array([0.0, 1.0, 0.0, -1.0])
    a = simulate(model, q0, v0, 1e-3, 50, method)
    b = simulate(model, q0, v0, 1e-3, 50, method, backend="compiled")
    np.testing.assert_allclose(a.q, b.q, atol=1e-12)
    assert a.step_time.shape == (50,) and a.iterations is None


def test_bad_arguments():
    model = Model(models.pendulum(2))
    with pytest.raises(ValueError, match="method"):
        simulate(model, [0, 0], [0, 0], 1e-3, 3, "leapfrog")
    with pytest.raises(ValueError, match="dt > 0"):
        simulate(model, [0, 0], [0, 0], 0.0, 3, "rk4")
    with pytest.raises(TypeError, match="unexpected options"):
        simulate(model, [0, 0], [0, 0], 1e-3, 3, "rk4", tol=1e-3)
    with pytest.raises(ValueError, match="v0"):
        simulate(model, [0, 0], [0, 0, 0], 1e-3, 3, "rk4")
    with pytest.raises(ValueError, match="backend"):
        simulate(model, [0, 0], [0, 0], 1e-3, 3, "rk4", backend="gpu")
    # the compiled kernels take ball joints with quaternions only
    with pytest.raises(ValueError, match="joint1.*rotation vectors"):
        simulate(Model(models.pendulum(2, "spherical"), rotation="rotation_vector"),
                 np.zeros(6), np.zeros(6), 1e-3, 3, "rk4", backend="compiled")


def test_spring_on_a_floating_joint_is_rejected():
    spec = MechanismSpec((Body("b", 1.0, np.eye(3)),),
                         (Joint("free", "floating", WORLD, "b", damper=1.0),))
    model = Model(spec)
    with pytest.raises(TreeModelError, match="free"):
        forces.joint_forces(model, np.r_[np.zeros(3), 1.0, 0.0, 0.0, 0.0], np.zeros(6))


def test_doctests():
    for module in (integrators, forces):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0
