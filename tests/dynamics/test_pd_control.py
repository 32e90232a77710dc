"""The joint-space PD controller (:func:`dynamics.maximal.pd_controller`) and its compiled run
loop: the inputs against a NumPy evaluation of the same law, ``Simulation.run`` in compiled
chunks against its Python step loop (same states bit for bit, same errors at the same state),
halved steps, and the errors for joints it cannot drive."""
import pickle
from dataclasses import replace

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import Fallen, MaximalModel, Simulation, pd_controller
from dynamics.maximal.control import PDController
from dynamics.maximal.control_kernels import joint_rates_kernel
from dynamics.models import rod
from dynamics.spec import WORLD, Body, Joint, MechanismSpec, SpecError

from .test_maximal_force_kernels import ALL_TYPES, chain, random_poses


def _python_loop(sim):
    """``sim`` made to take :meth:`Simulation.run`'s Python step loop (an instance ``step``)."""
    sim.step = sim.step
    return sim


def _numpy_inputs(sim, targets, rates, kp, kd):
    """The PD law from :class:`MaximalModel`'s NumPy coordinates and rates."""
    m = sim.model
    c = m.minimal_coordinates(sim.x, sim.q)
    r = m.joint_velocities(sim.x, sim.q, sim.v, sim.w)
    out = {}
    for name, goal in targets.items():
        k = m.joints.names.index(name)
        err = goal - c[k, 0]
        if m.joints.rotational_dof[k] == 1:
            err = (err + np.pi) % (2 * np.pi) - np.pi
        out[name] = kp * err + kd * (rates.get(name, 0.0) - r[k, 0])
    return out


def _slider_arm():
    """A revolute shoulder, a prismatic slide and a revolute wrist, all actuated, with a
    damper on the slide (the run loop's forced kernel without a controller too)."""
    z, x = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    bodies = (rod("upper", 0.5, 1.0), rod("slider", 0.4, 0.8), rod("hand", 0.2, 0.3))
    joints = (Joint("shoulder", "revolute", WORLD, "upper", [0, 0, 0], [0, 0, 0.25], x,
                    actuated=True),
              Joint("slide", "prismatic", "upper", "slider", [0, 0, -0.25], [0, 0, 0.2], z,
                    damper=0.4, actuated=True),
              Joint("wrist", "revolute", "slider", "hand", [0, 0, -0.2], [0, 0, 0.1], x,
                    actuated=True))
    return MechanismSpec(bodies, joints, initial_positions={"shoulder": [0.4]},
                         name="slider_arm")


def _gait(spec, amplitude=0.3):
    rest = {j: v[0] for j, v in spec.initial_positions.items() if j != "free"}
    return (lambda t: {n: v + amplitude * np.sin(8.0 * t) for n, v in rest.items()},
            lambda t: {n: 8.0 * amplitude * np.cos(8.0 * t) for n in rest})


# -- the inputs --------------------------------------------------------------------------------
@pytest.mark.parametrize("joint_type", ALL_TYPES)
def test_joint_rates_kernel_matches_numpy(joint_type):
    """The compiled coordinate rates (``Simulation.minimal_velocities``) equal
    :meth:`MaximalModel.joint_velocities` at random states, every joint type."""
    js = MaximalModel(chain(joint_type)).joints
    model = MaximalModel(chain(joint_type))
    rng = np.random.default_rng(3)
    for _ in range(5):
        x, q, v, w = random_poses(2, rng)
        out = np.full((2, 6), np.nan)
        joint_rates_kernel(x, q, v, w, js.parent, js.child, js.p_b, js.q_off, js.free, js.dof,
                           js.rotational_dof, out)
        np.testing.assert_allclose(out, model.joint_velocities(x, q, v, w), rtol=0, atol=1e-13)


def test_inputs_match_the_numpy_law_and_the_generic_call():
    """At a moving state of the slider arm, the controller's inputs equal the law evaluated
    with NumPy's coordinates (the slide's 4 m error not wrapped as an angle, the shoulder's
    3π/2 wrapped to -π/2), and the call on a duck-typed simulation agrees for the angles."""
    sim = Simulation(_slider_arm(), dt=0.005)
    sim.run(40, progress=False)
    targets = {"shoulder": sim.minimal_coordinates()["shoulder"][0] + 1.5 * np.pi,
               "slide": 4.0, "wrist": -0.3}
    rates = {"wrist": 0.7}
    ctrl = pd_controller(targets, kp={"shoulder": 3.0, "slide": 5.0, "wrist": 2.0}, kd=0.5,
                         rates=rates)
    got = ctrl(sim)
    kp = {"shoulder": 3.0, "slide": 5.0, "wrist": 2.0}
    for name in targets:
        want = _numpy_inputs(sim, {name: targets[name]}, rates, kp[name], 0.5)[name]
        assert got[name][0] == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert got["slide"][0] > 5.0 * 3.0                       # 4 m, not 4 - 2π
    u = ctrl.forces(sim)
    assert u.shape == (3, 6) and np.all(u[:, 1:] == 0.0)
    assert [u[k, 0] for k in range(3)] == [got[n][0] for n in ("shoulder", "slide", "wrist")]

    class Duck:
        t = sim.t
        minimal_coordinates = sim.minimal_coordinates
        minimal_velocities = sim.minimal_velocities

    angles = {n: targets[n] for n in ("shoulder", "wrist")}
    duck = pd_controller(angles, kp, 0.5, rates=rates)(Duck())
    for name in angles:
        assert duck[name][0] == got[name][0]


def test_no_targets_is_no_force():
    sim = Simulation(_slider_arm(), dt=0.01)
    ctrl = pd_controller(lambda t: {} if t < 0.05 else {"wrist": 0.2}, 1.0, 0.1)
    assert ctrl(sim) == {} and ctrl.forces(sim) is None
    ref = _python_loop(Simulation(_slider_arm(), dt=0.01))
    a, b = sim.run(12, controller=ctrl, progress=False), ref.run(12, controller=ctrl,
                                                                progress=False)
    np.testing.assert_array_equal(a.x, b.x)
    free = Simulation(_slider_arm(), dt=0.01).run(12, progress=False)
    np.testing.assert_array_equal(a.x[:6], free.x[:6])     # the first steps take no force
    assert not np.array_equal(a.x[-1], free.x[-1])


# -- the compiled run loop against the Python step loop -------------------------------------------
def _same_runs(make, steps, controller, record="all"):
    a, b = make(), _python_loop(make())
    ta = a.run(steps, controller=controller, progress=False, record=record)
    tb = b.run(steps, controller=controller, progress=False, record=record)
    for f in ("x", "q", "v", "w", "iterations", "t"):
        np.testing.assert_array_equal(getattr(ta, f), getattr(tb, f), err_msg=f)
    assert a.t == b.t and a.halved_steps == b.halved_steps
    return a, b, ta, tb


def test_compiled_run_equals_the_step_loop_without_contacts():
    """Revolute and prismatic joints and a damper (the forced kernel), constant and
    time-varying targets with target rates; the residual histories too."""
    spec = _slider_arm()
    constant = pd_controller({"shoulder": -0.2, "slide": 0.1, "wrist": 0.5}, kp=4.0, kd=0.3)
    moving = pd_controller(lambda t: {"shoulder": np.sin(3 * t), "slide": 0.1 * t}, 4.0,
                           {"shoulder": 0.3, "slide": 0.6},
                           rates=lambda t: {"shoulder": 3 * np.cos(3 * t)})
    for ctrl in (constant, moving):
        a, _, ta, tb = _same_runs(lambda: Simulation(spec, dt=0.005), 300, ctrl)
        for ha, hb in zip(ta.residual_history, tb.residual_history, strict=True):
            np.testing.assert_array_equal(ha, hb)


def test_compiled_run_equals_the_step_loop_with_contacts():
    """The PD-driven quadruped walking in place (contacts, interior point, its warm starts
    and contact variables), run in two calls (the schedule of each compiled chunk starts at
    the simulation's time)."""
    spec = models.quadruped()
    targets, rates = _gait(spec)
    ctrl = pd_controller(targets, kp=100.0, kd=2.0, rates=rates)
    a, b, ta, tb = _same_runs(lambda: Simulation(spec, dt=0.002), 150, ctrl)
    for ua, ub in zip(ta.complementarity, tb.complementarity, strict=True):
        np.testing.assert_array_equal(ua, ub)
    ta2, tb2 = (s.run(60, controller=ctrl, progress=False) for s in (a, b))
    np.testing.assert_array_equal(ta2.q, tb2.q)
    assert np.min(ta.contact_distance) > -1e-9               # no penetration


def test_a_driven_turntable_follows_the_linear_pd_response():
    """A disc turning about the vertical (no gravity torque) under ``u = kp (θ_d - θ) - kd θ̇``
    is the linear oscillator ``I θ̈ + kd θ̇ + kp θ = kp θ_d``: the simulated angle follows its
    closed-form solution to O(Δt) and settles at the target."""
    I, kp, kd, goal = 0.5, 8.0, 2.0, 1.0
    disc = Body("disc", 1.0, np.diag([1.0, 1.0, I]))
    spec = MechanismSpec((disc,), (Joint("turn", "revolute", WORLD, "disc", [0, 0, 0],
                                         [0, 0, 0], [0, 0, 1], actuated=True),))
    ctrl = pd_controller({"turn": goal}, kp=kp, kd=kd)
    errors = []
    for dt in (0.01, 0.005):
        sim = Simulation(spec, dt=dt)
        tr = sim.run(int(round(4.0 / dt)), controller=ctrl, progress=False)
        theta = tr.minimal_coordinates[:, 0]
        wn, zeta = np.sqrt(kp / I), kd / (2 * np.sqrt(kp * I))
        wd = wn * np.sqrt(1 - zeta ** 2)
        t = tr.t
        exact = goal * (1 - np.exp(-zeta * wn * t) * (np.cos(wd * t)
                                                       + zeta * wn / wd * np.sin(wd * t)))
        errors.append(np.max(np.abs(theta - exact)))
        assert abs(theta[-1] - goal) < 0.02
    assert errors[0] < 0.05 and 1.6 < errors[0] / errors[1] < 2.6    # first order in Δt


def test_halved_steps_and_the_failing_step_match_the_step_loop():
    """A gain too high for Δt = 10 ms (explicit damping ``kd Δt / I`` near 2 on the shanks):
    a step is taken in halves, then one fails. The compiled loop halves the same step with
    the controller's inputs of that step and raises the same error at the same state."""
    spec = models.quadruped()
    targets, _ = _gait(spec)
    ctrl = pd_controller(targets, kp=100.0, kd=2.0)
    sims = [Simulation(spec, dt=0.01), _python_loop(Simulation(spec, dt=0.01))]
    errors = []
    for sim in sims:
        with pytest.raises(Exception) as info:
            sim.run(50, controller=ctrl, progress=False)
        errors.append(info.value)
    a, b = sims
    assert type(errors[0]) is type(errors[1]) and str(errors[0]) == str(errors[1])
    assert a.halved_steps == b.halved_steps >= 1
    assert a.t == b.t
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.w, b.w)


# -- errors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("targets,kp,error,match", [
    ({"elbow": 0.1}, 1.0, SpecError, "no joint named 'elbow'"),
    ({"wrist": 0.1, "passive": 0.0}, 1.0, SpecError, "'passive' is not actuated"),
    ({"ball": 0.1}, 1.0, ValueError, "'ball' has 3 coordinates"),
    ({"wrist": 0.1}, {"shoulder": 1.0}, ValueError, "no gain kp or kd for joint 'wrist'"),
])
def test_errors_name_the_joint_before_any_step(targets, kp, error, match):
    spec = _slider_arm()
    joints = spec.joints + (
        Joint("passive", "revolute", "hand", "tip", [0, 0, -0.1], [0, 0, 0.05], [1, 0, 0]),
        Joint("ball", "spherical", "tip", "knob", [0, 0, -0.05], [0, 0, 0.05], actuated=True))
    spec = replace(spec, bodies=spec.bodies + (rod("tip", 0.1, 0.1), rod("knob", 0.1, 0.1)),
                   joints=joints)
    ctrl = pd_controller(targets, kp=kp, kd=0.1)
    for sim in (Simulation(spec, dt=0.01), _python_loop(Simulation(spec, dt=0.01))):
        x = sim.x.copy()
        with pytest.raises(error, match=match):
            sim.run(5, controller=ctrl, progress=False)
        assert sim.t == 0.0 and np.array_equal(sim.x, x)
        with pytest.raises(error, match=match):
            ctrl(sim)


def test_the_controller_pickles():
    ctrl = pd_controller({"wrist": 0.3}, kp={"wrist": 2.0}, kd=0.1, rates={"wrist": 0.1})
    sim = Simulation(_slider_arm(), dt=0.01)
    sim.run(3, progress=False)
    ctrl(sim)                                   # bound to a model: not part of the state
    back = pickle.loads(pickle.dumps(ctrl))
    assert isinstance(back, PDController) and back(sim) == ctrl(sim)


def test_a_state_set_between_runs_is_read():
    """The controller reads the simulation's state at each chunk's start (no cached pose):
    after ``set_state`` the inputs are those at the new state."""
    sim = Simulation(_slider_arm(), dt=0.01)
    ctrl = pd_controller({"shoulder": 0.0}, kp=2.0, kd=0.0)
    before = ctrl(sim)["shoulder"][0]
    sim.set_coordinates({"shoulder": [0.2]})
    after = ctrl(sim)["shoulder"][0]
    assert before == pytest.approx(-2.0 * 0.4) and after == pytest.approx(-2.0 * 0.2)


def test_a_fall_stops_the_run_before_that_step_as_the_step_loop():
    """With weak gains the quadruped sags; ``fall=("torso", 0.36, 60)`` raises
    :class:`Fallen` before the first step from a state below 0.36 m, at the same state and
    time in the compiled loop and the Python step loop."""
    spec = models.quadruped()
    rest = {j: v[0] for j, v in spec.initial_positions.items() if j != "free"}
    ctrl = pd_controller(rest, kp=2.0, kd=0.05, fall=("torso", 0.36, 60.0))
    sims = [Simulation(spec, dt=0.005), _python_loop(Simulation(spec, dt=0.005))]
    raised = []
    for sim in sims:
        with pytest.raises(Fallen, match="torso height 0.35") as info:
            sim.run(400, controller=ctrl, progress=False)
        raised.append(info.value)
    a, b = sims
    assert str(raised[0]) == str(raised[1]) and raised[0].time == a.t == b.t > 0.0
    assert raised[0].x == a.x[0, 0]
    np.testing.assert_array_equal(a.x, b.x)
    assert a.x[0, 2] < 0.36 <= Simulation(spec, dt=0.005).x[0, 2]
    with pytest.raises(Fallen):
        ctrl(a)
    with pytest.raises(SpecError, match="no body named 'trunk'"):
        pd_controller(rest, 1.0, 0.1, fall=("trunk", 0.1, 60.0))(a)
