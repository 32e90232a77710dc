"""A step whose Newton or interior-point iteration does not converge is taken as two steps of
``Δt/2`` (``Simulation.halvings`` levels deep): the compiled run and the step loop agree bit
for bit, the physics stays exact (constraints, contact distances, complementarity), the
rotation rate carries over between step sizes, and a step that fails in halves too raises its
own error with the state before it."""
import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import ConvergenceError, NewtonError, Simulation, StepSystem

from .test_run_compiled import _assert_same_state, _assert_same_trajectory, _no_control


def _both(make, steps, **kw):
    """The compiled run and the step loop of the same simulation."""
    out = []
    for controller in (None, _no_control):
        sim = Simulation(make(), dt=0.01, **kw)
        out.append((sim.run(steps, controller=controller, progress=False), sim))
    (ta, a), (tb, b) = out
    _assert_same_trajectory(ta, tb)
    _assert_same_state(a, b)
    assert a.halved_steps == b.halved_steps
    return ta, a


def test_a_joint_step_that_does_not_converge_is_taken_in_halves():
    # pendulum(20) at tol 1e-12 needs 3 Newton iterations first at step 199
    make = lambda: models.pendulum(20)  # noqa: E731
    with pytest.raises(ConvergenceError, match="did not converge in 2 iterations"):
        Simulation(make(), dt=0.01, tol=1e-12, max_iter=2, halvings=0).run(
            300, progress=False)
    traj, sim = _both(make, 300, tol=1e-12, max_iter=2)
    assert sim.halved_steps >= 1 and sim.t == pytest.approx(3.0)
    assert traj.constraint_violation.max() < 1e-9       # velocities re-projected per Δt
    # ~100 of the 300 steps halved here, each an O(Δt) change of the velocities where the
    # step size changes: 65 J against a kinetic energy up to 570 J (without halving, at the
    # default cap: 0.01 J); a handful of halved steps (the contact sweep) is what it is for
    drift = np.abs(traj.energy - traj.energy[0]).max()
    assert drift < 0.2 * traj.kinetic_energy.max()
    # a halved step's iterations are its halves' (each <= 2), its history has one more
    halved = np.flatnonzero(traj.iterations > 2)
    assert halved.size == sim.halved_steps
    for k in halved:
        assert traj.residual_history[k - 1].size == traj.iterations[k] + 1


def test_a_contact_step_that_does_not_converge_is_taken_in_halves():
    # sphere_chain(2) needs more than 8 interior-point iterations first at t = 0.3 s
    make = lambda: models.sphere_chain(2)  # noqa: E731
    with pytest.raises(ConvergenceError, match="interior-point method did not converge"):
        Simulation(make(), dt=0.01, max_iter=8, halvings=0).run(100, progress=False)
    traj, sim = _both(make, 100, max_iter=8)
    assert sim.halved_steps >= 1
    assert traj.contact_distance.min() > -1e-12
    assert traj.complementarity[1:].max() <= 1e-10


def test_a_step_failing_in_halves_raises_its_own_error_with_the_state_before_it():
    for controller in (None, _no_control):
        sim = Simulation(models.pendulum(3), dt=0.01)
        sim.run(40, controller=controller, progress=False)
        before = (sim.x.copy(), sim.w.copy())
        sim.max_iter = 1
        with pytest.raises(ConvergenceError, match=r"in 1 iterations at t = 0\.4 s") as err:
            sim.run(40, controller=controller, progress=False)
        assert isinstance(err.value, NewtonError)
        assert isinstance(err.value.__cause__, NewtonError)     # what the halves raised
        assert sim.t == pytest.approx(0.4) and sim.halved_steps == 0
        np.testing.assert_array_equal(sim.x, before[0])
        np.testing.assert_array_equal(sim.w, before[1])


def test_halves_keep_the_rotation_rate():
    """A torque-free cube spinning about a principal axis turns at a constant rate in the
    integrator's exact discrete solution: a step of Δt and two of Δt/2 (the ω of eq. 13
    re-expressed for the other step size) end at the same orientation and rate."""
    one, two = (Simulation(models.box_drop(height=2.0), dt=0.05) for _ in range(2))
    for sim in (one, two):
        sim.set_state(sim.x, sim.q, np.zeros((1, 3)), np.array([[0.0, 0.0, 25.0]]),
                      project=False)
    one.step()
    two._halved_step(None)
    assert two.halved_steps == 1 and two.t == one.t
    np.testing.assert_allclose(two.q, one.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(two.w, one.w, rtol=0, atol=1e-11)
    angle = 2 * np.arctan2(one.q[0, 3], one.q[0, 0])
    assert angle == pytest.approx(2 * np.arcsin(25.0 * 0.05 / 2), abs=1e-12)


def _reference(sim):
    """``sim`` on the readable Python-driven path (NumPy step, Python Newton / interior point)."""
    sim.system = StepSystem(sim.model, sim.dt, kernels="reference")
    sim._compiled_step = sim._compiled_contacts = False
    return sim


@pytest.mark.parametrize("make, kw", [(lambda: models.pendulum(20), {"tol": 1e-12}),
                                      (lambda: models.sphere_chain(2), {})],
                         ids=["joints", "contacts"])
def test_the_readable_path_takes_its_halves_on_the_readable_path(make, kw):
    """A halved step of a simulation on the Python-driven reference is taken by a Δt/2
    simulation on that path too (its own NumPy step system, no compiled step), and ends where
    the compiled path's halved step ends, to the tolerance."""
    ref = _reference(Simulation(make(), dt=0.01, **kw))
    comp = Simulation(make(), dt=0.01, **kw)
    ref._halved_step(None)
    comp._halved_step(None)
    half = ref._half
    assert half.system.kernels == "reference" and half.dt == 0.005
    assert not half._compiled_step and not half._compiled_contacts
    assert comp._half.system.kernels == "compiled"
    assert comp._half._compiled_step or comp._half._compiled_contacts
    assert ref.halved_steps == comp.halved_steps == 1
    np.testing.assert_allclose(ref.x, comp.x, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ref.v, comp.v, rtol=0, atol=1e-7)


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_halvings_must_be_a_non_negative_integer(bad):
    with pytest.raises(ValueError, match="halvings must be an integer >= 0"):
        Simulation(models.pendulum(1), dt=0.01, halvings=bad)


def test_halved_steps_end_where_the_joints_and_contacts_hold():
    """The unpowered Minitaur at Δt = 10 ms collapses onto its closed-loop legs: without
    halving a step's interior point stalls at t = 0.16 s. In halves the step goes on, and the
    velocities after it lead to a configuration that a third half step made valid: the feet
    stay out of the ground (carried over as they were, the half step's velocities took a
    foot 3.7 mm into it, and the next step met a singular knee pivot)."""
    with pytest.raises(ConvergenceError, match=r"t = 0\.16 s"):
        Simulation(models.minitaur(), dt=0.01, halvings=0).run(30, progress=False)
    traj, sim = _both(models.minitaur, 30)
    assert sim.halved_steps >= 1
    assert traj.constraint_violation.max() < 1e-9
    assert traj.contact_distance.min() > -1e-12
