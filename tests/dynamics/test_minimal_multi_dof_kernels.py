"""The compiled ABA and ``⊕`` of dynamics.minimal.multi_dof_kernels (spherical, floating and
planar joints) against the NumPy reference, against Pinocchio when present, and through the
explicit integrators' ``backend`` switch."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dynamics import models
from dynamics.minimal import (
    DivergenceError,
    Model,
    aba,
    integrate,
    kinetic_energy,
    multi_dof_kernels,
    potential_energy,
    random_configuration,
    simulate,
)
from dynamics.minimal.integrators import step, tangent_rate
from dynamics.minimal.model import SingularArticulatedInertiaError
from tests.dynamics.minimal_trees import (
    CORPUS,
    corpus_model,
    pin_configuration,
    random_spec,
    random_tree_urdf,
    rel_error,
)


def _check(model: Model, seed: int, aba_tol: float = 1e-11) -> None:
    rng = np.random.default_rng(seed)
    data, ref_data = model.create_data(), model.create_data()
    for _ in range(3):
        q = random_configuration(model, rng)
        v, tau = rng.normal(size=(2, model.nv))
        expected = aba(model, ref_data, q, v, tau)
        assert rel_error(multi_dof_kernels.aba(model, data, q, v, tau), expected) < aba_tol
        assert rel_error(data.ddq, expected) < aba_tol
        # the link accelerations too (gravity as the base acceleration, as the reference)
        assert rel_error(data.A, ref_data.A) < aba_tol
        dv = rng.normal(size=model.nv)
        np.testing.assert_allclose(multi_dof_kernels.integrate(model, q, dv),
                                   integrate(model, q, dv), rtol=0, atol=1e-13)
        delta = 0.3 * rng.normal(size=model.nv)
        np.testing.assert_allclose(multi_dof_kernels.tangent_rate(model, delta, v),
                                   tangent_rate(model, delta, v), rtol=1e-13, atol=1e-13)
        energy = kinetic_energy(model, ref_data, q, v) + potential_energy(model, ref_data, q)
        got = multi_dof_kernels.mechanical_energies(model, q[None], v[None])
        np.testing.assert_allclose(got, [energy], rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_random_trees_with_ball_joints_and_floating_bases_match_the_reference(seed):
    model = Model(random_spec(seed, floating_base=seed % 2 == 0, max_links=20))
    assert multi_dof_kernels.supports(model)
    _check(model, seed)


@pytest.mark.parametrize("seed", range(6))
def test_random_trees_with_planar_and_floating_joints_match_the_reference(seed):
    xml = random_tree_urdf(seed, max_links=12, kinds=("revolute", "prismatic", "planar",
                                                       "floating", "fixed"),
                           p=(0.35, 0.2, 0.15, 0.1, 0.2))
    model = Model.from_urdf(xml, floating_base=seed % 2 == 1)
    _check(model, seed)


@pytest.mark.parametrize("name, floating", [("quadruped", True), ("humanoid_33dof", True),
                                            ("floating_crate", False),
                                            ("mobile_base_planar", False)])
def test_corpus_robots_match_the_reference(name, floating):
    model = corpus_model(name, floating)
    assert {jm.type for jm in model.joints} - {"revolute", "prismatic"}
    _check(model, len(name))


def test_fast_rotations_and_small_angles_integrate_as_the_reference():
    """``⊕`` across the series switches of SO(3) (θ < 1e-8), SE(3) (θ < 0.1) and SE(2)
    (|ω| < 1e-4), and at large angles."""
    model = Model(random_spec(4, floating_base=True, max_links=6))
    q = random_configuration(model, np.random.default_rng(4))
    for scale in (1e-12, 1e-9, 1e-5, 0.05, 0.2, 3.0, 9.0):
        dv = scale * np.random.default_rng(int(1 / scale) % 1000).normal(size=model.nv)
        np.testing.assert_allclose(multi_dof_kernels.integrate(model, q, dv),
                                   integrate(model, q, dv), rtol=0, atol=1e-13)


def test_long_ball_jointed_chain_matches_the_reference():
    model = Model(models.pendulum(30, "spherical"))
    _check(model, 5, aba_tol=1e-9)


def test_floating_robots_match_pinocchio():
    pin = pytest.importorskip("pinocchio")
    for name in ("quadruped", "humanoid_33dof"):
        model = corpus_model(name, True)
        pin_model = pin.buildModelFromUrdf(str(CORPUS / f"{name}.urdf"), pin.JointModelFreeFlyer())
        assert model.nv == pin_model.nv
        rng = np.random.default_rng(7)
        q = random_configuration(model, rng)
        v, tau = rng.normal(size=(2, model.nv))
        expected = pin.aba(pin_model, pin_model.createData(),
                           pin_configuration(model, pin_model, q), v, tau)
        got = multi_dof_kernels.aba(model, model.create_data(), q, v, tau)
        assert rel_error(got, expected) < 1e-10, name


@pytest.mark.parametrize("method", ["euler", "semi_implicit_euler", "rk4"])
def test_explicit_steps_take_the_compiled_kernels(method):
    """``step(..., backend="compiled"/"auto")`` on a floating quadruped: the reference's
    trajectory to rounding."""
    model = corpus_model("quadruped", True)
    rng = np.random.default_rng(1)
    q0 = random_configuration(model, rng)
    v0 = rng.normal(size=model.nv)
    runs = {}
    for backend in ("reference", "compiled", "auto"):
        q, v = q0, v0
        data = model.create_data()
        for _ in range(20):
            q, v = step(model, data, q, v, 1e-3, method, backend=backend)
        runs[backend] = np.concatenate([q, v])
    for backend in ("compiled", "auto"):
        np.testing.assert_allclose(runs[backend], runs["reference"], rtol=1e-11, atol=1e-12)


def test_simulate_records_the_reference_energies():
    """``simulate`` with the compiled kernels computes the energies of the whole trajectory
    after the steps (one compiled call, spring energy added): those of the reference."""
    import dataclasses as dc

    spec = corpus_model("quadruped", True).spec
    spec = dc.replace(spec, joints=tuple(dc.replace(j, spring=2.0) if j.type == "revolute"
                                         else j for j in spec.joints))
    model = Model(spec)
    rng = np.random.default_rng(3)
    q0, v0 = random_configuration(model, rng), rng.normal(size=model.nv)
    ref = simulate(model, q0, v0, 1e-3, 15, "rk4")
    fast = simulate(model, q0, v0, 1e-3, 15, "rk4", backend="auto")
    np.testing.assert_allclose(fast.q, ref.q, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(fast.energy, ref.energy, rtol=1e-11, atol=1e-11)
    assert np.ptp(ref.energy) > 0            # springs, dampers: the energy does change


def test_unsupported_models_are_named_and_auto_falls_back():
    model = Model(models.pendulum(2, "spherical"), rotation="rotation_vector")
    assert not multi_dof_kernels.supports(model)
    data = model.create_data()
    q, v = np.zeros(model.nq), np.zeros(model.nv)
    with pytest.raises(ValueError, match="joint1.*rotation vectors"):
        multi_dof_kernels.aba(model, data, q, v, v)
    with pytest.raises(ValueError, match="joint1.*rotation vectors"):
        step(model, data, q, v, 1e-3, "semi_implicit_euler", backend="compiled")
    auto = step(model, data, q, v, 1e-3, "semi_implicit_euler", backend="auto")
    ref = step(model, data, q, v, 1e-3, "semi_implicit_euler", backend="reference")
    np.testing.assert_array_equal(np.concatenate(auto), np.concatenate(ref))


def test_wrong_lengths_are_named():
    model = Model(models.pendulum(2, "spherical"))
    data = model.create_data()
    q = random_configuration(model, np.random.default_rng(0))
    with pytest.raises(ValueError, match="tau"):
        multi_dof_kernels.aba(model, data, q, np.zeros(6), np.zeros(5))
    with pytest.raises(ValueError, match=r"\bq\b"):
        multi_dof_kernels.integrate(model, q[:-1], np.zeros(6))
    with pytest.raises(ValueError, match="delta"):
        multi_dof_kernels.tangent_rate(model, np.zeros(5), np.zeros(6))
    with pytest.raises(ValueError, match="Vs must be"):
        multi_dof_kernels.mechanical_energies(model, q[None], np.zeros((2, 6)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")    # the reference's overflowing steps
@pytest.mark.parametrize("backend", ["reference", "auto"])
@pytest.mark.parametrize("method", ["euler", "semi_implicit_euler", "rk4"])
def test_a_diverging_explicit_integration_is_a_clear_error(backend, method):
    """The corpus hand's finger dampers on millimetre links make explicit steps of 1 ms
    unstable (semi-implicit Euler's state overflows at step 14): both loops raise
    ``DivergenceError`` naming the step instead of returning inf / NaN; 0.1 ms is stable."""
    model = corpus_model("hand_16dof", False)
    q0 = random_configuration(model, np.random.default_rng(0))
    v0 = np.zeros(model.nv)
    with pytest.raises(DivergenceError, match=r"diverged: step \d+ to t = ") as info:
        simulate(model, q0, v0, 1e-3, 200, method, backend=backend)
    assert 1 <= info.value.step <= 200
    assert info.value.time == pytest.approx(info.value.step * 1e-3)
    res = simulate(model, q0, v0, 1e-4, 200, method, backend=backend)
    assert np.isfinite(res.q).all()
    data = model.create_data()
    with pytest.raises(DivergenceError, match="the step to t = "):
        q, v = q0, v0
        for k in range(200):
            q, v = step(model, data, q, v, 1e-3, method, t=k * 1e-3, backend=backend)


def test_a_singular_articulated_inertia_is_named():
    """A ball joint carrying a body without rotational inertia about the joint (a point mass
    on the joint): ``Sᵀ IA S`` is zero, which the kernel reports by joint."""
    model = Model(models.pendulum(1, "spherical"))
    fm = multi_dof_kernels.multi_dof_model(model)
    # the kernels' cached arrays only (a spec refuses such a body)
    model._multi_dof_model = dataclasses.replace(fm, inertia=np.zeros_like(fm.inertia))
    data = model.create_data()
    q = random_configuration(model, np.random.default_rng(0))
    with pytest.raises(SingularArticulatedInertiaError, match="joint1.*not positive definite"):
        multi_dof_kernels.aba(model, data, q, np.zeros(3), np.zeros(3))
    with pytest.raises(SingularArticulatedInertiaError, match="joint1.*at step 0"):
        multi_dof_kernels.simulate_explicit(model, q, np.zeros(3), 1e-3, 3, "rk4")
    # a non-finite state is not a singular joint: NaN out, as the reference
    assert np.isnan(multi_dof_kernels.aba(Model(models.pendulum(1, "spherical")), data, q,
                                          np.full(3, np.nan), np.zeros(3))).all()


@pytest.mark.parametrize("method", ["euler", "semi_implicit_euler", "rk4"])
@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_simulate_loop_takes_the_reference_steps(method, seed):
    """``simulate`` without a controller runs its whole loop compiled
    (``simulate_explicit``): random trees with ball joints, floating bases, springs and
    dampers on the one-coordinate and ball joints."""
    import dataclasses as dc

    spec = random_spec(seed, floating_base=seed % 2 == 0, max_links=10)
    spec = dc.replace(spec, joints=tuple(
        dc.replace(j, spring=1.5, damper=0.3) if j.type in ("revolute", "prismatic")
        else dc.replace(j, spring=1.0, damper=0.2) if j.type == "spherical" else j
        for j in spec.joints))
    model = Model(spec)
    rng = np.random.default_rng(seed)
    q0, v0 = random_configuration(model, rng), rng.normal(size=model.nv)
    Q, V = multi_dof_kernels.simulate_explicit(model, q0, v0, 1e-3, 25, method)
    ref = simulate(model, q0, v0, 1e-3, 25, method)
    np.testing.assert_allclose(Q, ref.q, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(V, ref.v, rtol=1e-11, atol=1e-11)
    fast = simulate(model, q0, v0, 1e-3, 25, method, backend="auto")
    np.testing.assert_array_equal(fast.q, Q)
    np.testing.assert_allclose(fast.energy, ref.energy, rtol=1e-11, atol=1e-11)
    assert fast.step_time.shape == (25,)


@pytest.mark.parametrize("method", ["euler", "semi_implicit_euler", "rk4"])
def test_a_sprung_ball_joint_pulls_back_to_rest_as_the_reference(method):
    """Springs on ball joints with a rest rotation (their deflection a quaternion log, turned
    past the series switch and far from rest): the compiled loop's trajectory and energies are
    the reference's."""
    import dataclasses as dc

    spec = models.pendulum(3, "spherical")
    spec = dc.replace(spec, joints=tuple(dc.replace(j, spring=2.0, spring_offset=[0.1, -0.2, 0.3])
                                         for j in spec.joints))
    model = Model(spec)
    q0 = random_configuration(model, np.random.default_rng(2), scale=2.0)
    v0 = np.zeros(model.nv)
    Q, _ = multi_dof_kernels.simulate_explicit(model, q0, v0, 1e-3, 30, method)
    fast = simulate(model, q0, v0, 1e-3, 30, method, backend="auto")
    ref = simulate(model, q0, v0, 1e-3, 30, method)
    np.testing.assert_array_equal(fast.q, Q)
    np.testing.assert_allclose(fast.q, ref.q, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(fast.v, ref.v, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(fast.energy, ref.energy, rtol=1e-11, atol=1e-11)


def test_the_block_inertia_transform_is_the_congruence():
    """``tree_kernels._inertia_to_parent_add`` (3×3 blocks; both ABAs use it) against
    ``Xᵀ A X`` formed with the 6×6 ``X``, random rotations, offsets and symmetric ``A``."""
    from scipy.spatial.transform import Rotation

    from dynamics.minimal.tree_kernels import _congruence_add, _inertia_to_parent_add, _X_matrix

    rng = np.random.default_rng(0)
    for _ in range(20):
        R = Rotation.random(random_state=rng).as_matrix()
        p = rng.normal(size=3)
        A = rng.normal(size=(6, 6))
        A = A + A.T
        base = rng.normal(size=(6, 6))
        expected, got = base.copy(), base.copy()
        X = np.empty((6, 6))
        _X_matrix(R, p, X)
        _congruence_add(X, A, np.empty((6, 6)), expected)
        _inertia_to_parent_add(R, p, A, got, np.empty((6, 6)), np.empty((3, 3)))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["euler", "semi_implicit_euler", "rk4"])
def test_a_compiled_step_is_one_step_of_the_compiled_loop(method):
    """``step(..., backend="auto")`` without a multi-DOF spring is one call of the compiled
    loop: a ``step`` loop gives ``simulate``'s compiled trajectory bit for bit (floating
    base, ball joints, springs and dampers on the one-coordinate joints)."""
    import dataclasses as dc

    spec = random_spec(3, floating_base=True, max_links=8)
    spec = dc.replace(spec, joints=tuple(
        dc.replace(j, spring=1.5, damper=0.3) if j.type in ("revolute", "prismatic")
        else dc.replace(j, damper=0.2) if j.type == "spherical" else j for j in spec.joints))
    model = Model(spec)
    rng = np.random.default_rng(3)
    q0, v0 = random_configuration(model, rng), rng.normal(size=model.nv)
    Q, V = multi_dof_kernels.simulate_explicit(model, q0, v0, 1e-3, 15, method)
    data = model.create_data()
    q, v = q0, v0
    for k in range(15):
        q, v = step(model, data, q, v, 1e-3, method, t=k * 1e-3, backend="auto")
        np.testing.assert_array_equal(q, Q[k + 1])
        np.testing.assert_array_equal(v, V[k + 1])
    assert data._explicit_step                       # the packed arguments, made once


@pytest.mark.parametrize("method", ["euler", "semi_implicit_euler", "rk4"])
def test_a_compiled_step_with_a_controller_matches_the_reference(method):
    """A controller's joint forces enter the compiled step (Euler and semi-implicit Euler:
    one call with the forces held; RK4 calls the controller at its stages from Python): the
    reference's trajectory to rounding, the controller called at the same times."""
    model = corpus_model("quadruped", True)
    rng = np.random.default_rng(4)
    q0, v0 = random_configuration(model, rng), rng.normal(size=model.nv)
    gains = rng.normal(size=model.nv)
    runs, calls = {}, {}
    for backend in ("reference", "auto"):
        seen = []

        def controller(t, q, v, seen=seen):
            seen.append(t)
            return -gains * v + np.sin(10.0 * t)

        q, v = q0, v0
        data = model.create_data()
        for k in range(20):
            q, v = step(model, data, q, v, 1e-3, method, t=k * 1e-3, controller=controller,
                        backend=backend)
        runs[backend], calls[backend] = np.concatenate([q, v]), seen
    np.testing.assert_allclose(runs["auto"], runs["reference"], rtol=1e-11, atol=1e-12)
    assert calls["auto"] == calls["reference"]
    with pytest.raises(ValueError, match=r"controller\(t, q, v\) must be a vector of length"):
        step(model, model.create_data(), q0, v0, 1e-3, method,
             controller=lambda t, q, v: np.zeros(3), backend="auto")


def test_a_compiled_step_names_a_singular_joint_and_takes_a_sprung_ball_joint():
    """The one-call step raises the kernel's errors (a singular joint, by name) and takes a
    spring on a ball joint (the reference's result)."""
    import dataclasses as dc

    model = Model(models.pendulum(1, "spherical"))
    fm = multi_dof_kernels.multi_dof_model(model)
    model._multi_dof_model = dataclasses.replace(fm, inertia=np.zeros_like(fm.inertia))
    q = random_configuration(model, np.random.default_rng(0))
    with pytest.raises(SingularArticulatedInertiaError, match="joint1.*not positive definite"):
        step(model, model.create_data(), q, np.zeros(3), 1e-3, "semi_implicit_euler",
             backend="auto")
    spec = models.pendulum(2, "spherical")
    model = Model(dc.replace(spec, joints=tuple(dc.replace(j, spring=2.0) for j in spec.joints)))
    q0 = random_configuration(model, np.random.default_rng(2))
    data = model.create_data()
    fast = step(model, data, q0, np.zeros(model.nv), 1e-3, "semi_implicit_euler",
                backend="auto")
    assert data._explicit_step                       # the packed arguments, made once
    ref = step(model, model.create_data(), q0, np.zeros(model.nv), 1e-3,
               "semi_implicit_euler")
    np.testing.assert_allclose(np.concatenate(fast), np.concatenate(ref), rtol=1e-11,
                               atol=1e-12)


def test_the_packed_layout_matches_the_model_arrays():
    """The buffer of the one-call step holds the model's arrays where the kernel carves them."""
    model = corpus_model("humanoid_33dof", True)
    ints, buf, off = multi_dof_kernels._packed_arguments(model)
    fm = multi_dof_kernels.multi_dof_model(model)
    shapes = multi_dof_kernels._packed_shapes(model.njoints, model.nv, model.nq)
    assert off[-1] == buf.size and len(off) == len(shapes) + 1
    for k, a in enumerate([fm.axis, fm.plane, fm.PR, fm.Pp, fm.S, fm.inertia]):
        np.testing.assert_array_equal(buf[off[k]:off[k + 1]].reshape(shapes[k]), a)
    np.testing.assert_array_equal(ints, np.stack([fm.parent, fm.jtype, fm.iq, fm.iv, fm.nvj]))
    assert shapes[multi_dof_kernels._EXT] == (model.nv,)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), floating=st.booleans(), spherical=st.floats(0.0, 1.0),
       dt=st.sampled_from([1e-4, 1e-3, 5e-3]),
       method=st.sampled_from(["euler", "semi_implicit_euler", "rk4"]))
def test_any_random_tree_takes_the_reference_explicit_steps(seed, floating, spherical, dt,
                                                            method):
    """Property: over random URDF trees (any share of ball joints, with or without a floating
    base, springs and dampers on every joint that takes them), step sizes and methods, the
    compiled loop and a loop of compiled ``step`` calls take the reference's steps, or
    diverge at the same step."""
    import dataclasses as dc

    from dynamics.spec import SpecError

    try:
        spec = random_spec(seed, floating_base=floating, spherical=spherical, max_links=6)
    except SpecError:               # no body with a fixed base (massless links welded on)
        assume(False)
    model = Model(dc.replace(spec, joints=tuple(
        dc.replace(j, spring=1.0, damper=0.1) if j.type in ("revolute", "prismatic",
                                                            "spherical") else j
        for j in spec.joints)))
    rng = np.random.default_rng(seed)
    q0, v0 = random_configuration(model, rng), rng.normal(size=model.nv)
    outcomes = []
    for backend in ("reference", "auto"):
        try:
            outcomes.append(simulate(model, q0, v0, dt, 10, method, backend=backend))
        except DivergenceError as exc:
            outcomes.append(exc.step)
    ref, fast = outcomes
    if isinstance(ref, int) or isinstance(fast, int):
        assert ref == fast
        return
    np.testing.assert_allclose(fast.q, ref.q, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(fast.v, ref.v, rtol=1e-10, atol=1e-10)
    data, q, v = model.create_data(), q0, v0
    for k in range(10):
        q, v = step(model, data, q, v, dt, method, t=k * dt, backend="auto")
    np.testing.assert_array_equal(q, fast.q[-1])
