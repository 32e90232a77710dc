"""The compiled contact step (:meth:`StepSystem.contact_step`,
:mod:`dynamics.maximal.interior_point_kernels`) against the Python-driven interior point
(:meth:`Simulation._interior_point`, the reference) on every contact model: the same
iteration count at every step, states equal to 1e-10, zero penetration, and the same errors."""
from dataclasses import replace

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import MaximalModel, NewtonError, Simulation, StepSystem, pd_controller


def _quadruped_controller(spec):
    targets = {j: v[0] for j, v in spec.initial_positions.items() if j != "free"}
    return pd_controller(targets, kp=100.0, kd=2.0)


def _damped_sphere_chain(n):
    """sphere_chain(n) with a spring and a damper on every ball joint: the damper's body-body
    coupling blocks and the spring wrenches together with contacts."""
    spec = models.sphere_chain(n)
    joints = tuple(j if j.type == "floating" else replace(j, spring=2.0, damper=0.5)
                   for j in spec.joints)
    return replace(spec, joints=joints, name=f"damped_sphere_chain{n}")


# (spec, dt, steps, controller factory)
CASES = {
    "damped_sphere_chain_4": (_damped_sphere_chain(4), 0.01, 60, None),
    "box_drop": (models.box_drop(), 0.01, 80, None),
    "box_on_slope": (models.box_on_slope(np.deg2rad(30.0), 0.3), 0.01, 60, None),
    "sphere_chain_1": (models.sphere_chain(1), 0.01, 100, None),
    "sphere_chain_3": (models.sphere_chain(3), 0.01, 80, None),
    "sphere_chain_10": (models.sphere_chain(10), 0.01, 60, None),
    "sphere_stack": (models.sphere_stack(3, gap=0.05), 0.01, 80, None),
    "sphere_collision": (models.sphere_collision(velocity=1.0, gap=0.1), 0.01, 60, None),
    "quadruped_pd": (models.quadruped(), 0.002, 80, _quadruped_controller),
}


def _pair(spec, dt, **kw):
    """A simulation on the compiled contact step and one on the Python reference."""
    fast = Simulation(spec, dt=dt, **kw)
    ref = Simulation(spec, dt=dt, **kw)
    assert fast._compiled_contacts
    ref._compiled_contacts = False
    return fast, ref


def _assert_same(ta, tb, atol=1e-10):
    np.testing.assert_array_equal(ta.iterations, tb.iterations)
    for name in ("x", "q", "v", "w", "contact_distance"):
        np.testing.assert_allclose(getattr(ta, name), getattr(tb, name), rtol=0, atol=atol,
                                   err_msg=name)
    assert [len(h) for h in ta.residual_history] == [len(h) for h in tb.residual_history]


@pytest.mark.parametrize("case", list(CASES))
def test_compiled_contact_step_equals_the_python_interior_point(case):
    spec, dt, steps, controller = CASES[case]
    fast, ref = _pair(spec, dt)
    ctrl = None if controller is None else controller(spec)
    ta = fast.run(steps, controller=ctrl, progress=False)
    tb = ref.run(steps, controller=ctrl, progress=False)
    _assert_same(ta, tb)
    # the contacts were really solved (frictionless ones: steps where every contact stays
    # open are taken without them, StepSystem.inactive_first, 0 iterations in free flight)
    assert ta.iterations[1:].min() >= (0 if fast.system.inactive_first else 1)
    assert ta.iterations[1:].max() >= 1
    assert ta.contact_distance.min() > -1e-9              # zero penetration kept
    assert ta.complementarity.max() <= fast.tol
    # (the intermediate residual norms agree to about 1e-3 only: the warm start's tiny contact
    # variables, products of 1e-10, differ between the paths at rounding level, relatively
    # much; the iterates converge to the same states)
    assert max(h[-1] for h in ta.residual_history) <= fast.tol


def test_compiled_contact_step_makes_no_python_call_per_iteration(monkeypatch):
    """The reference's per-iteration entry points are never called by the compiled step."""
    sim = Simulation(models.sphere_chain(2), dt=0.01)

    def forbidden(*args, **kwargs):
        raise AssertionError("Python-driven interior-point call in the compiled step")

    for name in ("factor", "resolve", "residual", "jacobian", "begin"):
        monkeypatch.setattr(sim.system, name, forbidden)
    monkeypatch.setattr(sim, "_interior_point", forbidden)
    its = [sim.step() for _ in range(30)]
    assert sum(its) > 30


@pytest.mark.parametrize("option", ["no_warm_start", "no_refinement", "extrapolation"])
def test_compiled_contact_step_follows_the_simulation_options(option):
    fast, ref = _pair(models.box_drop(), 0.01)
    for sim in (fast, ref):
        if option == "no_warm_start":
            sim.warm_start = False
        elif option == "no_refinement":
            sim.refine = False
        else:
            sim.contact_extrapolation = True
    _assert_same(fast.run(60, progress=False), ref.run(60, progress=False))


def test_switching_between_compiled_and_python_steps_keeps_the_warm_start():
    """Contact variables pass between the two paths (the warm start of the next step)."""
    spec = models.sphere_chain(3)
    mixed, ref = _pair(spec, 0.01)
    a1 = mixed.run(30, progress=False)
    mixed._compiled_contacts = False
    a2 = mixed.run(20, progress=False)
    mixed._compiled_contacts = True
    a3 = mixed.run(20, progress=False)
    b = ref.run(70, progress=False)
    its = np.concatenate([a1.iterations[1:], a2.iterations[1:], a3.iterations[1:]])
    np.testing.assert_array_equal(its, b.iterations[1:])
    np.testing.assert_allclose(a3.x[-1], b.x[-1], rtol=0, atol=1e-10)


def test_compiled_contact_iteration_cap_names_time_and_residual():
    fast, ref = _pair(models.box_drop(height=0.0), 0.01, max_iter=3)
    with pytest.raises(NewtonError) as fast_error:
        fast.run(2, progress=False)
    with pytest.raises(NewtonError) as ref_error:
        ref.run(2, progress=False)
    msg = str(fast_error.value)
    assert msg.startswith("interior-point method did not converge in 3 iterations at t = 0 s "
                          "(residual ")
    assert "mean complementarity" in msg and "tol 1e-10" in msg
    # the same message as the reference, up to the last digits of the two numbers
    head = msg.split("(residual")[0]
    assert str(ref_error.value).split("(residual")[0] == head
    assert len(fast.last_residuals) == 4                  # the start and three iterations
    assert fast.t == 0.0                                  # the failed step did not advance


def test_compiled_contact_step_reports_a_too_fast_rotation():
    """|ω| >= 2/Δt at the start of a compiled contact step: the rate error, naming the body."""
    sim = Simulation(models.sphere_chain(1), dt=0.01)
    sim.step()
    sim.w[0] = [0.0, 0.0, 250.0]           # past 2/Δt = 200 rad/s, behind set_state's check
    with pytest.raises(NewtonError, match=r"\|ω\| = 250 rad/s >= 2/Δt = 200"):
        sim.step()


def test_contact_variables_round_trip_through_the_work_vector():
    S = StepSystem(Simulation(models.box_drop(), dt=0.01).model, 0.01)
    values = [np.arange(len(g) * g.size, dtype=float).reshape(len(g), g.size) + 1.0
              for g in S.contacts]
    S.set_contact_variables(values)
    for got, want in zip(S.contact_variables(), values, strict=True):
        np.testing.assert_array_equal(got, want)


def test_cold_start_distances_match_the_contact_groups():
    """The compiled cold start's ``φ(z₁)`` (every geometry kind, sphere-box outside, on an
    edge, a corner and inside) equals :meth:`ContactGroup.distance`."""
    from dynamics.maximal.interior_point_kernels import _distance_now
    from dynamics.quaternion import from_axis_angle
    from tests.dynamics.test_body_contacts import CASES as BODY_CASES

    rng = np.random.default_rng(4)
    specs = [models.box_drop(), models.sphere_chain(2), *BODY_CASES.values()]
    for spec in specs:
        model = MaximalModel(spec)
        x = model.initial_state()[0] + rng.normal(scale=0.05, size=(model.n_bodies, 3))
        q = from_axis_angle(rng.normal(size=(len(x), 3)), rng.uniform(0, 1, size=len(x)))
        for grp in StepSystem(model, 0.01).contacts:
            got = [_distance_now(x, q, c, *grp.kernel_arguments()) for c in range(len(grp))]
            np.testing.assert_allclose(got, grp.distance(x, q), rtol=0, atol=1e-14)


def test_long_sphere_chain_stays_within_the_references_own_rounding_spread():
    """sphere_chain(100): the impact (steps 12-15, 20-30 iterations each) amplifies rounding
    differences (the compiled update rules round ``q₁`` differently by an ulp) to 1e-7 in the
    poses, as a 1-ulp perturbation of the reference's own start does (measured: 6e-8 m, 1e-7 in
    q; velocities 1e-5 during the impact, 1e-11 after); iteration counts then differ on some
    steps: 40 steps took 538 (compiled) and 574 (reference) iterations, and 528-546 and
    533-545 with the start's x of body 1, 2 or 3 moved by an ulp (2026-11-27, condensed
    interior-point matrices; 534-550 and 531-542 with the full ones before)."""
    fast, ref = _pair(models.sphere_chain(100), 0.01)
    ta = fast.run(40, progress=False)
    tb = ref.run(40, progress=False)
    np.testing.assert_array_equal(ta.iterations[:14], tb.iterations[:14])
    assert abs(int(ta.iterations.sum()) - int(tb.iterations.sum())) <= 0.08 * tb.iterations.sum()
    for name, atol in (("x", 1e-6), ("q", 1e-6), ("v", 1e-4), ("w", 1e-4)):
        np.testing.assert_allclose(getattr(ta, name), getattr(tb, name), rtol=0, atol=atol,
                                   err_msg=name)
        np.testing.assert_allclose(getattr(ta, name)[-1], getattr(tb, name)[-1], rtol=0,
                                   atol=1e-6 if name in "xq" else 1e-9, err_msg=name)
    assert ta.contact_distance.min() > -1e-9


def test_warm_floor_lowers_only_closed_contacts_after_a_quiet_step():
    from dynamics.maximal.interior_point_kernels import (
        CLOSED_SLACK,
        QUIET_FLOOR,
        QUIET_ITERATIONS,
        WARM_FLOOR,
        warm_floor,
    )
    assert QUIET_FLOOR < WARM_FLOOR
    closed, open_ = 0.1 * CLOSED_SLACK, 10.0 * CLOSED_SLACK
    assert warm_floor(closed, QUIET_ITERATIONS) == QUIET_FLOOR
    assert warm_floor(CLOSED_SLACK, QUIET_ITERATIONS) == WARM_FLOOR   # not below: not closed
    assert warm_floor(closed, 0) == QUIET_FLOOR
    assert warm_floor(closed, QUIET_ITERATIONS + 1) == WARM_FLOOR   # after an impact
    assert warm_floor(closed, -1) == WARM_FLOOR                     # no interior-point step
    assert warm_floor(open_, 1) == WARM_FLOOR


def test_last_contact_iterations_round_trip_and_follow_the_steps():
    """The iterations that set the warm start's floor are stored with the contact variables,
    updated by every compiled step and reset where the state comes from elsewhere."""
    sim = Simulation(models.sphere_chain(3), dt=0.01)
    S = sim.system
    S.set_contact_variables(sim.contact_variables, 2)
    assert S.last_contact_iterations() == 2
    S.set_contact_variables(sim.contact_variables)
    assert S.last_contact_iterations() == -1
    for _ in range(5):
        it = sim.step()
        assert sim._contact_iterations == it == S.last_contact_iterations()
    sim.set_state(sim.x, sim.q, sim.v, sim.w)
    assert sim._contact_iterations == -1


def test_quiet_steps_start_resting_contacts_closer_to_the_solution():
    """A resting sphere chain (after its first steps) converges in about two interior-point
    iterations per step with the quiet floor, three with ``quiet_floor`` off (WARM_FLOOR for
    every contact); either way both paths take the same iterations."""
    its = {}
    for quiet in (True, False):
        fast, ref = _pair(models.sphere_chain(10), 0.01)
        loop = Simulation(models.sphere_chain(10), dt=0.01)     # step() from Python
        for sim in (fast, ref, loop):
            sim.quiet_floor = quiet
        a = fast.run(60, progress=False)
        _assert_same(a, ref.run(60, progress=False))
        _assert_same(a, loop.run(60, controller=lambda sim: None, progress=False))
        assert a.contact_distance.min() > -1e-10
        its[quiet] = a.iterations[20:].mean()
    assert its[True] < 2.5 < 2.8 < its[False]


def test_contact_iterations_agree_on_both_paths_through_kept_and_failed_steps():
    """The count that sets the floor: -1 after a step kept without contacts (a limited
    pendulum swinging freely, then at its stop), the iterations after an interior-point step,
    equal on the compiled and the reference path at every step; a failing step leaves it."""
    from tests.dynamics.test_joint_limits import _pendulum
    fast, ref = _pair(_pendulum(-0.5, 1.0), 0.01)
    seen = set()
    for _ in range(150):
        it = fast.step()
        assert ref.step() == it
        assert fast._contact_iterations == ref._contact_iterations
        seen.add(fast._contact_iterations == -1)
    assert seen == {True, False}
    for compiled in (True, False):
        sim = Simulation(models.sphere_chain(2), dt=0.01, max_iter=8, halvings=0)
        sim._compiled_contacts = compiled
        before = None
        with pytest.raises(NewtonError, match="did not converge in 8 iterations"):
            for _ in range(100):
                before = sim._contact_iterations
                sim.step()
        assert sim._contact_iterations == before >= 0
