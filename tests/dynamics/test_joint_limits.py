"""Joint limits (``Joint.lower`` / ``upper``): hard stops on joint coordinates, solved as
frictionless unilateral constraints of the maximal step (Brüdigam et al. 2023 eq. 22-28 with
the joint's rate map as the contact map).

Oracles: statics (the stop's force equals the gravity torque or weight it holds), the
unlimited motion before a stop is reached, the stops never passed (also by a joint fast
enough to jump them through the far side of the turn), the Newton matrix against finite
differences, the compiled kernels and the compiled step against the NumPy reference and the
Python interior point, the spec and URDF errors."""
from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import MaximalModel, Simulation, StepSystem
from dynamics.maximal.step_system import quaternion_update
from dynamics.spec import WORLD, Body, Joint, MechanismSpec, Shape, SpecError
from dynamics.urdf import UrdfWarning, load_urdf, write_urdf
from tests.conftest import finite_difference_jacobian
from tests.dynamics.test_body_contacts import _contact_force

G = 9.81


def _limited(spec, **bounds):
    """``spec`` with ``bounds[joint] = (lower, upper)`` (lists of the joint's dof)."""
    joints = tuple(replace(j, lower=bounds[j.name][0], upper=bounds[j.name][1])
                   if j.name in bounds else j for j in spec.joints)
    return replace(spec, joints=joints)


def _pendulum(lower, upper, n=1, **kw):
    spec = models.pendulum(n, **kw)
    return _limited(spec, **{j.name: ([lower], [upper]) for j in spec.joints})


def _slider(lower=-0.2, upper=np.inf, velocity=0.0):
    """A 2 kg box on a vertical prismatic joint, falling under gravity onto a stop."""
    box = Shape("box", (0.2, 0.2, 0.2))
    body = Body("slider", 2.0, box.inertia(2.0), box)
    joint = Joint("slide", "prismatic", WORLD, "slider", axis=[0.0, 0.0, 1.0],
                  lower=[lower], upper=[upper])
    return MechanismSpec((body,), (joint,), initial_velocities={"slide": [velocity]},
                         name="slider")


def _cylinder_on_arm():
    """A rod on a revolute joint with a second rod on a cylindrical joint (slides along and
    turns about the first rod's y axis): limits on both coordinates, between two bodies."""
    a, b = models.rod("arm"), models.rod("sleeve", 0.4, 0.5)
    joints = (Joint("shoulder", "revolute", WORLD, "arm", child_point=[0, 0, 0.5],
                    lower=[-0.6], upper=[0.6]),
              Joint("sleeve", "cylindrical", "arm", "sleeve", parent_point=[0, 0, -0.3],
                    axis=[0.0, 1.0, 0.0], lower=[-0.05, -0.3], upper=[0.08, 0.4]))
    return MechanismSpec((a, b), joints, initial_positions={"shoulder": [0.3]},
                         initial_velocities={"sleeve": [0.6, 3.0]}, name="cylinder_on_arm")




# ---------------------------------------------------------------------- the spec
def test_limits_of_a_joint():
    j = Joint("j", "cylindrical", WORLD, "b", lower=[-0.1, -1.0], upper=[np.inf, 1.0])
    assert j.limits == ((0, -0.1, np.inf), (1, -1.0, 1.0))
    assert Joint("j", "revolute", WORLD, "b").limits == ()
    free = Joint("j", "spherical", WORLD, "b", lower=[-np.inf] * 3, upper=[np.inf] * 3)
    assert free.limits == ()


@pytest.mark.parametrize("kw, match", [
    (dict(type="revolute", lower=[0.2], upper=[0.1]), "lower < upper"),
    (dict(type="revolute", lower=[0.1], upper=[0.1]), "lower < upper"),
    (dict(type="revolute", lower=[0.1, 0.2]), "must have 1 entries"),
    (dict(type="prismatic", upper=[np.nan]), "NaN"),
    (dict(type="revolute", lower=[-1.0]), "both limits within one turn"),
    (dict(type="revolute", lower=[-3.2], upper=[3.2]), "within one turn"),
    (dict(type="spherical", lower=[-1.0, -np.inf, -np.inf]), "rotation vector"),
    (dict(type="floating", upper=[1.0, np.inf, np.inf, np.inf, 0.5, np.inf]), "coordinate 4"),
])
def test_bad_limits_are_spec_errors_naming_the_joint(kw, match):
    with pytest.raises(SpecError, match=match) as err:
        Joint("elbow", parent=WORLD, child="b", **kw)
    assert "'elbow'" in str(err.value)


def test_a_start_outside_the_limits_is_refused_naming_the_joint():
    with pytest.raises(SpecError, match=r"joint 'joint1' starts outside its limits"):
        Simulation(_pendulum(-0.5, 0.5), dt=0.01)           # starts at π/4


# ---------------------------------------------------------------------- physics
def test_a_pendulum_resting_on_a_stop_is_held_by_the_gravity_torque():
    """Falling from π/4 onto the stop at 0.5 rad, it comes to rest there; the stop's torque
    equals the gravity torque ``m g (l/2) sin θ``; the upper stop carries nothing."""
    sim = Simulation(_pendulum(0.5, 1.0), dt=0.01)
    traj = sim.run(200, progress=False)
    assert traj.contact_names == ("joint1.lower", "joint1.upper")
    theta = traj.minimal_coordinates[:, 0]
    assert theta.min() >= 0.5 - 1e-9
    assert theta[-1] == pytest.approx(0.5, abs=1e-9)
    assert _contact_force(sim, "joint1.lower") == pytest.approx(G * 0.5 * np.sin(0.5), rel=1e-8)
    assert _contact_force(sim, "joint1.upper") < 1e-9
    assert traj.contact_distance.min() > -1e-9
    assert traj.constraint_violation.max() < 1e-9
    assert traj.complementarity[1:].max() <= 1e-10


def test_a_prismatic_stop_holds_the_weight():
    sim = Simulation(_slider(), dt=0.01)
    traj = sim.run(100, progress=False)
    d = traj.minimal_coordinates[:, 0]
    assert d.min() >= -0.2 - 1e-9 and d[-1] == pytest.approx(-0.2, abs=1e-9)
    assert _contact_force(sim, "slide.lower") == pytest.approx(2.0 * G, rel=1e-8)


def test_until_the_stop_the_motion_is_the_unlimited_one_and_then_it_stops():
    """The pendulum swings from π/4 as the unlimited one until it reaches the stop at -0.5;
    the impact is inelastic (the joint rate along the stop vanishes) and the energy drops."""
    free = Simulation(models.pendulum(1), dt=0.01).run(150, progress=False)
    lim = Simulation(_pendulum(-0.5, 1.0), dt=0.01).run(150, progress=False)
    theta_free, theta = free.minimal_coordinates[:, 0], lim.minimal_coordinates[:, 0]
    hit = int(np.argmax(theta_free < -0.5))
    assert hit > 10
    # open stops: each step is the joint step of the unlimited mechanism (inactive_first)
    # (row k holds the velocities of step k, which reach z₂ = row k + 1: the step of row
    # hit - 1 is the first to meet the stop)
    np.testing.assert_array_equal(lim.x[:hit], free.x[:hit])
    np.testing.assert_array_equal(lim.iterations[:hit - 1], free.iterations[:hit - 1])
    assert theta.min() >= -0.5 - 1e-9
    k = int(np.argmax(theta < -0.5 + 1e-8))          # first step at the stop
    assert k >= hit - 1
    assert abs(lim.minimal_velocities[k, 0]) < 1e-6
    # the recorded kinetic energy averages the two intervals around a time point: at k + 1
    # the interval at rest and the first one swinging back (≈ 8e-4 J after 10 ms)
    assert lim.kinetic_energy[k + 1] < 1e-3 and free.kinetic_energy[k + 1] > 0.5
    assert lim.energy[k:].max() <= lim.energy[k] + 1e-6      # no energy from the stops


def test_steps_with_open_stops_are_joint_steps():
    """Frictionless contacts only (here limits): a step is first taken without them and kept
    when every stop stays open; with friction the interior point takes every step."""
    sim = Simulation(_pendulum(-1.2, 1.2, n=2), dt=0.01)
    assert sim.system.inactive_first and sim.contact_extrapolation
    free = Simulation(models.pendulum(2), dt=0.01)
    a, b = sim.run(50, progress=False), free.run(50, progress=False)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.iterations, b.iterations)
    (u,) = sim.contact_variables                  # γ = 0, s_φ = φ(z₂) of the last step
    x2, q2 = sim.x + 0.01 * sim.v, quaternion_update(sim.q, sim.w, 0.01)
    np.testing.assert_array_equal(u[:, 0], 0.0)
    np.testing.assert_allclose(u[:, 1], sim.system.contacts[0].distance(x2, q2), atol=1e-12)
    assert not Simulation(models.box_drop(), dt=0.01).system.inactive_first


def test_the_joint_system_solves_from_python_too():
    """``StepSystem.solve_linear`` on a system whose factorization the fused kernels fill
    (no contacts) factors on first use (it used to find it unfactored)."""
    S = Simulation(_pendulum(-1.2, 1.2, n=3), dt=0.01).system.joint_system()
    m = S.model
    x, q, v, w = m.initial_state()
    S.begin(x, q, v, w)
    s = S.pack(v, w, np.zeros((len(m.joints), 6)))
    f = S.residual(s)
    ds = S.solve_linear(s, f)
    np.testing.assert_allclose(S.jacobian(s).to_dense() @ ds, -f, atol=1e-10)


@pytest.mark.parametrize("rate", [40.0, 55.0])
def test_a_fast_joint_cannot_jump_the_stops_through_the_far_side_of_the_turn(rate):
    """At 40 or 55 rad/s and Δt = 10 ms the joint turns 0.4 or 0.55 rad a step, more than the
    0.28 rad between the stops ±3.0 on the far side of the turn: it stops at +3.0 and never
    jumps (the distances of such a step: the next test)."""
    spec = replace(_pendulum(-3.0, 3.0, initial_angle=0.0),
                   initial_velocities={"joint1": [rate]})
    traj = Simulation(spec, dt=0.01).run(40, progress=False)
    theta = traj.minimal_coordinates[:, 0]
    assert np.abs(np.diff(theta)).max() < 1.0              # a jump would be ~6 rad
    assert theta.max() == pytest.approx(3.0, abs=1e-9) and theta.min() >= -3.0 - 1e-9
    assert traj.contact_distance.min() > -1e-9


@pytest.mark.parametrize("kernels", ["compiled", "reference"])
def test_a_step_reads_the_angle_from_its_start(kernels):
    """From 2.9 rad, a step turning the joint by 0.5 rad ends at 3.4 rad, 0.4 rad beyond the
    stop at 3.0: φ = -0.4. Read about the range's middle (0), 3.4 rad would be -2.88 rad,
    inside the range ±3.0, and the step would pass the stop unseen."""
    spec = _pendulum(-3.0, 3.0, initial_angle=2.9)
    S = StepSystem(MaximalModel(spec), 0.01, kernels=kernels)
    x, q, v, w = S.model.initial_state()
    S.begin(x, q, v, w)
    s = S.pack(v, np.array([[2.0 / 0.01 * np.sin(0.25), 0.0, 0.0]]), np.zeros((1, 6)))
    grp = S.contacts[0]
    s[grp.rows] = 1.0
    f = S.residual(s)
    phi = s[grp.rows[:, 1]] - f[grp.rows[:, 0]]                 # row 0: s_φ - φ(z₂)
    np.testing.assert_allclose(phi, [6.4, -0.4], atol=1e-9)     # lower, upper
    np.testing.assert_allclose(grp.distance(x, q), [5.9, 0.1], atol=1e-9)


def test_limits_between_two_bodies_hold_on_both_coordinates_of_a_cylindrical_joint():
    sim = Simulation(_cylinder_on_arm(), dt=0.005)
    traj = sim.run(300, progress=False)
    c = traj.minimal_coordinates                      # shoulder, sleeve d, sleeve angle
    assert traj.contact_distance.min() > -1e-9
    assert c[:, 1].max() == pytest.approx(0.08, abs=1e-9)    # the slide reached its stop
    assert c[:, 2].max() == pytest.approx(0.4, abs=1e-9)     # and so did the angle
    assert c[:, 1].min() >= -0.05 - 1e-9 and c[:, 2].min() >= -0.3 - 1e-9
    assert np.abs(c[:, 0]).max() <= 0.6 + 1e-9
    assert traj.constraint_violation.max() < 1e-9


# ---------------------------------------------------------------------- against references
CASES = {
    "pendulum3": (_pendulum(-0.4, 0.9, n=3), 0.01, 120),
    "slider": (_slider(upper=0.1, velocity=2.0), 0.01, 80),
    "cylinder_on_arm": (_cylinder_on_arm(), 0.005, 150),
}


@pytest.mark.parametrize("case", list(CASES))
def test_compiled_step_equals_the_python_interior_point(case):
    spec, dt, steps = CASES[case]
    fast, ref = Simulation(spec, dt=dt), Simulation(spec, dt=dt)
    assert fast._compiled_contacts
    ref._compiled_contacts = False
    a, b = fast.run(steps, progress=False), ref.run(steps, progress=False)
    np.testing.assert_array_equal(a.iterations, b.iterations)
    for name in ("x", "q", "v", "w", "contact_distance"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=0, atol=1e-10,
                                   err_msg=name)


def _system_at_a_step(spec, dt, kernels, steps, seed):
    """A step system begun at a step of a simulation, with that step's converged velocities
    (``z₂`` valid for the joints) and random positive contact variables."""
    sim = Simulation(spec, dt=dt)
    sim.run(steps, progress=False)
    x, q, v, w = sim.x.copy(), sim.q.copy(), sim.v.copy(), sim.w.copy()
    sim.step()
    S = StepSystem(MaximalModel(spec), dt, kernels=kernels)
    S.begin(x + dt * v, quaternion_update(q, w, dt), v, w)
    S.barrier = 0.2
    s = S.pack(sim.v, sim.w, sim._lam)
    rng = np.random.default_rng(seed)
    for grp in S.contacts:
        s[grp.rows] = rng.uniform(0.2, 2.0, size=grp.rows.shape)
    return S, s


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("kernels", ["compiled", "reference"])
def test_limit_jacobian_matches_finite_differences(case, kernels):
    spec, dt, steps = CASES[case]
    S, s = _system_at_a_step(spec, dt, kernels, steps // 3, seed=1)
    F = S.jacobian(s).to_dense()
    fd = finite_difference_jacobian(S.residual, s)
    np.testing.assert_allclose(F, fd, atol=1e-6 * max(1.0, np.abs(F).max()))


@pytest.mark.parametrize("case", list(CASES))
def test_compiled_limit_kernels_match_the_numpy_reference(case):
    """Also away from the solution (random unknowns: joints violated, angles far from the
    step's start)."""
    spec, dt, steps = CASES[case]
    S, s = _system_at_a_step(spec, dt, "compiled", 5, seed=4)
    R, r = _system_at_a_step(spec, dt, "reference", 5, seed=4)
    for g, h in zip(S.contacts, R.contacts, strict=True):
        np.testing.assert_allclose(g.P, h.P, atol=1e-14)
        np.testing.assert_allclose(g.bound, h.bound, atol=1e-14)
    s = s + np.random.default_rng(0).normal(scale=0.5, size=s.shape) * (s != 0)
    for grp in S.contacts:
        s[grp.rows] = np.abs(s[grp.rows])
    np.testing.assert_allclose(S.residual(s), R.residual(s), atol=1e-12)
    np.testing.assert_allclose(S.jacobian(s).data, R.jacobian(s).data, atol=1e-12)


def test_cold_start_distances_of_limits_match_the_contact_groups():
    from dynamics.maximal.interior_point_kernels import _distance_now
    sim = Simulation(_cylinder_on_arm(), dt=0.005)
    traj = sim.run(60, progress=False)
    for k in range(0, 60, 7):
        x, q = traj.x[k], traj.q[k]
        for grp in sim.system.contacts:
            want = grp.distance(x, q)
            got = [_distance_now(x, q, c, *grp.kernel_arguments()) for c in range(len(grp))]
            np.testing.assert_allclose(got, want, atol=1e-14)


# ---------------------------------------------------------------------- URDF
_ARM = """<robot name="arm"><link name="base"/>
  <link name="l1"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0 0 -0.2"/><mass value="0.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="l3"><inertial><mass value="0.2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="1 0 0"/><limit lower="-0.5" upper="0.25" effort="10" velocity="5"/></joint>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/>
    <origin xyz="0 0 -1"/><axis xyz="0 0 1"/>
    <limit lower="-0.1" upper="0.1" effort="10" velocity="5"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/>
    <origin xyz="0 0 -0.4"/><axis xyz="0 1 0"/>
    <limit lower="-6.3" upper="6.3" effort="10" velocity="5"/></joint>
</robot>"""


def test_urdf_limits_are_read_on_request():
    assert all(j.lower is None for j in load_urdf(_ARM).joints)
    with pytest.warns(UrdfWarning, match="'j3'.*whole turn"):
        spec = load_urdf(_ARM, limits=True)
    j1, j2, j3 = spec.joints
    assert (j1.limits, j2.limits, j3.limits) == (((0, -0.5, 0.25),), ((0, -0.1, 0.1),), ())
    spec = replace(spec, initial_velocities={"j1": [2.0]})
    traj = Simulation(spec, dt=0.01).run(100, progress=False)
    c = traj.minimal_coordinates
    assert c[:, 0].max() == pytest.approx(0.25, abs=1e-9) and c[:, 0].min() >= -0.5 - 1e-9
    assert np.abs(c[:, 1]).max() <= 0.1 + 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)
        back = load_urdf(write_urdf(spec), limits=True)
    assert [j.limits for j in back.joints] == [j.limits for j in spec.joints]


def test_an_empty_urdf_limit_is_dropped_with_a_warning():
    text = _ARM.replace('lower="-0.1" upper="0.1"', 'effort="1"', 1).replace(
        'effort="1" effort="10"', 'effort="10"')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UrdfWarning)
        spec = load_urdf(text, limits=True)
    assert any("'j2'" in str(w.message) and "empty range" in str(w.message) for w in caught)
    assert spec.joints[1].limits == ()


def _corpus_cases():
    from tests.dynamics.test_urdf_corpus import CASES
    return sorted(n for n, c in CASES.items() if not {"load", "maximal"} & set(c))


@pytest.mark.parametrize("name", _corpus_cases())
def test_urdf_corpus_limits_equal_pinocchio_s_and_hold_in_simulation(name):
    """The limits read from the URDF corpus are Pinocchio's (``lowerPositionLimit`` /
    ``upperPositionLimit`` of its revolute and prismatic joints; ranges of a turn or more
    dropped); started mid-range with random joint rates, every robot keeps its stops and its
    joints for 150 steps of 2 ms under gravity."""
    pin = pytest.importorskip("pinocchio")
    from tests.dynamics.test_urdf_corpus import _path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = load_urdf(_path(name), limits=True)
        model = pin.buildModelFromUrdf(_path(name))
    limited = {j.name: j for j in spec.joints if j.limits}
    for jid in range(1, model.njoints):
        jm, jn = model.joints[jid], model.names[jid]
        lo = model.lowerPositionLimit[jm.idx_q]
        hi = model.upperPositionLimit[jm.idx_q]
        one_dof = jm.nq == 1 and jm.nv == 1            # revolute or prismatic (not continuous)
        if one_dof and lo < hi and not (jm.shortname().startswith("JointModelR")
                                        and hi - lo >= 2 * np.pi):
            assert limited[jn].limits == ((0, lo, hi),), jn
        else:
            assert jn not in limited, jn
    rng = np.random.default_rng(7)
    mid = {n: [0.5 * (j.lower[0] + j.upper[0])] for n, j in limited.items()}
    rates = {n: [rng.uniform(-3.0, 3.0)] for n in limited}
    spec = spec.with_initial(mid, rates)
    traj = Simulation(spec, dt=0.002).run(150, progress=False)
    assert traj.constraint_violation.max() < 1e-9
    assert len(traj.contact_names) == 2 * len(limited)
    if limited:
        assert traj.contact_distance.min() > -1e-9
