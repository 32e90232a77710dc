"""The compiled RIQN variational loop with ball, floating and planar joints
(``dynamics.minimal.multi_dof_variational``) against the NumPy reference
(``simulate_variational(..., backend="reference")``), and its dispatch and errors."""
from __future__ import annotations

import dataclasses as dc
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dynamics import models
from dynamics.minimal import (
    Model,
    difference,
    multi_dof_kernels,
    multi_dof_variational,
    random_configuration,
)
from dynamics.minimal.model import SingularArticulatedInertiaError
from dynamics.minimal.results import ConvergenceError
from dynamics.minimal.variational import simulate_variational
from dynamics.spec import SpecError
from dynamics.urdf import load_urdf
from tests.dynamics.minimal_trees import CORPUS, corpus_model, random_spec


def _damped_tree(seed: int, floating: bool) -> Model:
    """A random tree with ball joints (and a floating base), springs and dampers on its
    one-coordinate and ball joints (these with a rest rotation)."""
    spec = random_spec(seed, floating_base=floating, max_links=9)
    return Model(dc.replace(spec, joints=tuple(
        dc.replace(j, spring=2.0, damper=0.3) if j.type in ("revolute", "prismatic")
        else dc.replace(j, spring=1.0, damper=0.2, spring_offset=[0.2, 0.0, -0.1])
        if j.type == "spherical" else j for j in spec.joints)))


def _assert_same_run(fast, ref, v_tol=1e-10):
    np.testing.assert_array_equal(fast.iterations, ref.iterations)
    np.testing.assert_allclose(fast.q, ref.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.v, ref.v, rtol=0, atol=v_tol)
    np.testing.assert_allclose(fast.energy, ref.energy, rtol=0, atol=1e-10)


@pytest.mark.parametrize("guess", ["ig1", "ig2", "ig3"])
@pytest.mark.parametrize("seed", range(4))
def test_random_damped_trees_take_the_reference_steps(seed, guess):
    """Random trees with ball joints, floating bases, springs and dampers: the reference's
    configurations, velocities, energies and iteration counts."""
    model = _damped_tree(seed, floating=seed % 2 == 0)
    rng = np.random.default_rng(seed)
    q0, v0 = random_configuration(model, rng), 0.5 * rng.normal(size=model.nv)
    ref = simulate_variational(model, q0, v0, 2e-3, 15, initial_guess=guess)
    fast = multi_dof_variational.simulate_riqn(model, q0, v0, 2e-3, 15, initial_guess=guess)
    _assert_same_run(fast, ref)


@pytest.mark.parametrize("name, floating", [("quadruped", True), ("humanoid_33dof", True),
                                            ("mobile_base_planar", False),
                                            ("floating_crate", False)])
def test_corpus_robots_take_the_reference_steps(name, floating):
    """Floating quadruped and humanoid, a planar base (SE(2)), a crate on a floating joint:
    ``simulate_variational(..., backend="auto")`` runs the compiled loop, with the
    reference's trajectory."""
    model = corpus_model(name, floating)
    rng = np.random.default_rng(5)
    q0, v0 = random_configuration(model, rng), 0.3 * rng.normal(size=model.nv)
    ref = simulate_variational(model, q0, v0, 1e-3, 12)
    fast = simulate_variational(model, q0, v0, 1e-3, 12, backend="auto")
    assert np.ptp(fast.step_time) == 0.0             # one compiled call: the mean per step
    _assert_same_run(fast, ref, v_tol=1e-9)


def test_the_difference_is_the_reference_difference():
    """``q1 ⊖ q0`` of every joint type, rotations from small to near π and planar turns
    across the series switch."""
    model = corpus_model("humanoid_33dof", True)
    planar = corpus_model("mobile_base_planar", False)
    rng = np.random.default_rng(7)
    for m in (model, planar, Model(models.pendulum(3, "spherical"))):
        for scale in (1e-9, 1e-5, 0.3, 1.5, 3.0):
            q0 = random_configuration(m, rng)
            q1 = random_configuration(m, rng) if scale == 3.0 else \
                multi_dof_kernels.integrate(m, q0, scale * rng.normal(size=m.nv))
            np.testing.assert_allclose(multi_dof_variational.difference(m, q0, q1),
                                       difference(m, q0, q1), rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="model.nq"):
        multi_dof_variational.difference(planar, np.zeros(2), np.zeros(planar.nq))


def test_a_floating_robot_in_free_fall_keeps_its_momentum():
    """The floating quadruped without gravity, tumbling with random joint rates and its joint
    dampers working: internal forces only, so its total spatial momentum in the world (the
    base joint's discrete momentum, ``p = M v``, carried to the world frame) is conserved
    (the discrete Noether theorem of the variational integrator), while the dampers take
    energy out."""
    from dynamics.minimal import crba, forward_kinematics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = load_urdf(CORPUS / "quadruped.urdf", floating_base=True)
    model = Model(dc.replace(spec, gravity=np.zeros(3)))
    rng = np.random.default_rng(2)
    q0, v0 = random_configuration(model, rng), rng.normal(size=model.nv)
    res = multi_dof_variational.simulate_riqn(model, q0, v0, 2e-3, 300)
    data = model.create_data()
    momenta = []
    for q, v in zip(res.q[::30], res.v[::30], strict=True):
        p = crba(model, data, q) @ v
        forward_kinematics(model, data, q)
        R, x = data.T_world_link[0, :3, :3], data.T_world_link[0, :3, 3]
        linear = R @ p[:3]
        momenta.append(np.concatenate([linear, R @ p[3:6] + np.cross(x, linear)]))
    momenta = np.array(momenta)
    assert np.abs(momenta - momenta[0]).max() < 1e-9 * np.abs(momenta[0]).max()
    assert res.energy[-1] < res.energy[0]                # the dampers dissipate


def test_dispatch_and_errors():
    """``auto`` takes the compiled loop for RIQN and the reference for Newton and Broyden;
    ``compiled`` refuses what it cannot take; a non-converging step and a singular joint are
    named."""
    model = corpus_model("quadruped", True)
    rng = np.random.default_rng(3)
    q0, v0 = random_configuration(model, rng), 0.2 * rng.normal(size=model.nv)
    newton = simulate_variational(model, q0, v0, 1e-3, 3, solver="newton", backend="auto")
    ref = simulate_variational(model, q0, v0, 1e-3, 3, solver="newton")
    np.testing.assert_array_equal(newton.q, ref.q)
    with pytest.raises(ValueError, match="runs RIQN"):
        simulate_variational(model, q0, v0, 1e-3, 3, solver="broyden", backend="compiled")
    with pytest.raises(ValueError, match="controller"):
        simulate_variational(model, q0, v0, 1e-3, 3, solver="newton", backend="compiled",
                             controller=lambda t, q, v: -v)
    with pytest.raises(ValueError, match=r"controller\(t, q, v\) must be a vector"):
        simulate_variational(model, q0, v0, 1e-3, 3, backend="auto",
                             controller=lambda t, q, v: np.zeros(2))
    with pytest.raises(ValueError, match="initial_guess"):
        multi_dof_variational.simulate_riqn(model, q0, v0, 1e-3, 3, initial_guess="ig9")
    with pytest.raises(ConvergenceError, match=r"step 0 \(t = 0\): riqn did not converge") \
            as info:
        simulate_variational(model, q0, v0, 1e-3, 3, max_iter=1, backend="auto")
    assert info.value.step == 0
    assert "solver='newton'" in str(info.value)      # the advice for stiff dampers
    single = Model(models.pendulum(1, "spherical"))
    fm = multi_dof_kernels.multi_dof_model(single)
    single._multi_dof_model = dc.replace(fm, inertia=np.zeros_like(fm.inertia))
    with pytest.raises(SingularArticulatedInertiaError, match="joint1.*at step 0"):
        multi_dof_variational.simulate_riqn(single, random_configuration(single, rng),
                                            np.zeros(3), 1e-3, 3)


@pytest.mark.parametrize("name, floating", [("quadruped", True), ("arm7_flange_camera", False)])
def test_a_controller_is_held_over_each_compiled_step(name, floating):
    """With a controller (a PD law and a time-varying torque, also on the revolute arm, which
    the one-call loop of ``tree_kernels`` does not take) the compiled RIQN steps one call at a
    time: the reference's trajectory, the controller called at the same times with the same
    states."""
    model = corpus_model(name, floating)
    rng = np.random.default_rng(8)
    q0, v0 = random_configuration(model, rng), 0.3 * rng.normal(size=model.nv)
    gains = rng.uniform(0.5, 2.0, model.nv)
    calls = {}
    runs = {}
    for backend in ("reference", "auto"):
        seen = []

        def controller(t, q, v, seen=seen):
            seen.append((t, q.copy(), v.copy()))
            return -gains * v + np.cos(20.0 * t)

        runs[backend] = simulate_variational(model, q0, v0, 1e-3, 10, backend=backend,
                                             controller=controller)
        calls[backend] = seen
    _assert_same_run(runs["auto"], runs["reference"], v_tol=1e-9)
    assert len(calls["auto"]) == len(calls["reference"]) == 10
    for (ta, qa, va), (tr, qr, vr) in zip(calls["auto"], calls["reference"], strict=True):
        assert ta == tr
        np.testing.assert_allclose(qa, qr, atol=1e-12)
        np.testing.assert_allclose(va, vr, atol=1e-9)


def test_stiff_dampers_defeat_riqn_and_newton_takes_them():
    """The corpus hand's finger dampers on millimetre links at 1 ms: RIQN's iteration matrix
    ``M(q_k)`` leaves the dampers out and it does not converge, compiled and reference alike,
    and its error says what converges; Newton (its Jacobian has the dampers) takes one
    iteration per step."""
    model = corpus_model("hand_16dof", False)
    q0 = random_configuration(model, np.random.default_rng(0), scale=0.3)
    v0 = np.zeros(model.nv)
    for backend in ("auto", "reference"):
        with pytest.raises(ConvergenceError, match="converge with solver='newton'"):
            simulate_variational(model, q0, v0, 1e-3, 3, backend=backend)
    res = simulate_variational(model, q0, v0, 1e-3, 20, solver="newton", backend="auto")
    assert res.iterations.max() <= 2


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), floating=st.booleans(), spherical=st.floats(0.0, 1.0),
       dt=st.sampled_from([5e-4, 2e-3, 1e-2]), guess=st.sampled_from(["ig1", "ig2", "ig3"]))
def test_any_random_tree_takes_the_reference_riqn_steps(seed, floating, spherical, dt, guess):
    """Property: over random URDF trees (any share of ball joints, with or without a floating
    base, dampers on every joint), step sizes and initial guesses, the compiled RIQN loop
    takes the reference's steps (or fails at the same step)."""
    try:
        spec = random_spec(seed, floating_base=floating, spherical=spherical, max_links=6)
    except SpecError:               # no body with a fixed base (massless links welded on)
        assume(False)
    model = Model(dc.replace(spec, joints=tuple(
        dc.replace(j, damper=0.1) if j.type in ("revolute", "prismatic", "spherical") else j
        for j in spec.joints)))
    rng = np.random.default_rng(seed)
    q0, v0 = random_configuration(model, rng), 0.5 * rng.normal(size=model.nv)
    outcomes = []
    for run in (lambda: simulate_variational(model, q0, v0, dt, 5, initial_guess=guess),
                lambda: multi_dof_variational.simulate_riqn(model, q0, v0, dt, 5,
                                                            initial_guess=guess)):
        try:
            outcomes.append(run())
        except ConvergenceError as exc:
            outcomes.append(exc.step)
    ref, fast = outcomes
    if isinstance(ref, int) or isinstance(fast, int):
        assert ref == fast
    else:
        _assert_same_run(fast, ref, v_tol=1e-8)


@pytest.mark.parametrize("solver", ["riqn", "newton", "broyden"])
@pytest.mark.parametrize("backend", ["reference", "auto"])
def test_a_robot_without_movable_joints_simulates(solver, backend):
    """A tree whose joints are all fixed (no coordinates; found by the property test above):
    every solver returns the empty trajectory (the reference's momentum had failed on the
    empty link set)."""
    model = Model(random_spec(278, spherical=0.0, max_links=6))
    assert model.nv == 0
    res = simulate_variational(model, np.zeros(0), np.zeros(0), 1e-3, 3, solver=solver,
                               backend=backend)
    assert res.q.shape == (4, 0) and np.all(res.energy == 0.0)
