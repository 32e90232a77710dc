"""The maximal-coordinate integrator against physics and independent simulators.

Oracles: scipy ``solve_ivp`` at tight tolerance on the minimal-coordinate ODE, Pinocchio's ABA
with RK4 at a small step, conservation laws (energy, angular momentum about the gravity axis)
and constraint residuals.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from dynamics import models
from dynamics import quaternion as quat
from dynamics.maximal import NewtonError, Simulation, SingularStepError

G = 9.81


def pendulum_reference(spec, t, damping=0.0):
    """θ(t) of a single rod pendulum from solve_ivp (rtol = atol = 1e-12)."""
    body, joint = spec.bodies[0], spec.joints[0]
    lc = abs(joint.child_point[2])
    J = body.inertia[0, 0] + body.mass * lc**2
    k = body.mass * G * lc

    def f(_, y):
        return [y[1], (-k * np.sin(y[0]) - damping * y[1]) / J]

    th0 = spec.initial_positions["joint1"][0]
    sol = solve_ivp(f, [0, t[-1]], [th0, 0.0], rtol=1e-12, atol=1e-12, dense_output=True)
    th, om = sol.sol(t)
    return th, 0.5 * J * om**2 + k * (1 - np.cos(th)) - k


def test_single_pendulum_converges_first_order_to_the_ode():
    spec = models.pendulum(1)
    errors = []
    for dt in (0.01, 0.005):
        traj = Simulation(spec, dt=dt).run(int(round(1.0 / dt)), progress=False)
        th, _ = pendulum_reference(spec, traj.t)
        errors.append(np.abs(traj.minimal_coordinates[:, 0] - th).max())
    assert errors[0] < 0.02
    assert 1.8 < errors[0] / errors[1] < 2.2          # first order (Brüdigam 2023 §3)


def test_double_pendulum_energy_is_bounded_without_drift():
    """2023 Fig. 7b: 1 m / 1 kg rods released horizontal, Δt = 0.01 s, 10⁴ steps."""
    traj = Simulation(models.double_pendulum(), dt=0.01).run(10_000, progress=False)
    err = np.abs(traj.energy - traj.energy[0])
    drop = 1 * G * (0.5 + 1.5)                    # m g Σ (centre-of-mass drops)
    assert err.max() <= 0.005 * drop              # measured 0.46 %
    first, second = err[:5000].max(), err[5000:].max()
    assert second <= 1.1 * first                  # no secular growth
    slope = np.polyfit(traj.t, traj.energy, 1)[0]
    assert abs(slope) < 1e-4                      # J/s over 100 s
    assert traj.constraint_violation.max() < 1e-9


def test_energy_error_is_second_order_in_the_step():
    errs = []
    for dt in (0.01, 0.005):
        traj = Simulation(models.double_pendulum(), dt=dt).run(int(5 / dt), progress=False)
        errs.append(np.abs(traj.energy - traj.energy[0]).max())
    assert errs[0] / errs[1] > 3.0


@pytest.mark.parametrize("spec", [models.fourbar(), models.segment_chain(5)],
                         ids=["fourbar", "segment_chain5"])
def test_loops_have_no_constraint_drift(spec):
    """2023 Fig. 7a / 2020 Fig. 4b: closed loops, 10⁴ steps of 0.01 s."""
    traj = Simulation(spec, dt=0.01).run(10_000, progress=False)
    assert traj.constraint_violation.max() <= 1e-8
    assert np.abs(traj.energy - traj.energy[0]).max() < 0.01 * np.ptp(traj.potential_energy)


def test_parallelogram_moves_like_a_pendulum():
    """In the four-bar the bar translates: the side links swing as one compound pendulum."""
    traj = Simulation(models.fourbar(), dt=0.005).run(400, progress=False)
    names = traj.coordinate_names
    left = traj.minimal_coordinates[:, names.index("joint_left")]
    right = traj.minimal_coordinates[:, names.index("joint_right")]
    bar = traj.minimal_coordinates[:, names.index("joint_bar")]
    np.testing.assert_allclose(left, right, atol=1e-8)
    np.testing.assert_allclose(bar, -left, atol=1e-8)


def test_damped_pendulum_dissipates_like_the_reference():
    """2023 Fig. 7c: 1 m, 1 kg, joint damping 0.5 N m s, Δt = 0.1 s; and converging for 0.01."""
    spec = models.pendulum(1, damper=0.5, initial_angle=np.pi / 2)
    for dt, tol in ((0.1, 0.08), (0.01, 0.01)):
        traj = Simulation(spec, dt=dt).run(int(round(10 / dt)), progress=False)
        _, energy = pendulum_reference(spec, traj.t, damping=0.5)
        e0 = energy[0] - energy.min()
        assert np.abs(traj.energy - energy).max() < tol * e0
        assert traj.iterations.max() <= 6


def test_scaled_pendulum_half_swing():
    """2023 Fig. 11 setup: a half period from π/2 ends near -π/2 for every scale."""
    for s in (1.0, 0.5, 0.1):
        spec = models.scaled_pendulum(s)
        period = 2 * np.pi * np.sqrt(2 * s**2 / (3 * G))
        dt = 0.001 * s
        traj = Simulation(spec, dt=dt).run(int(round(period * 0.5 / dt)), progress=False)
        th, _ = pendulum_reference(spec, traj.t)
        assert abs(traj.minimal_coordinates[-1, 0] - th[-1]) < 0.02
        assert abs(th[-1] + np.pi / 2) < 0.2          # the large swing is not harmonic


def test_spherical_chain_conserves_angular_momentum_about_gravity():
    # spin 2 rad/s about the vertical: the rate of a 3-DOF rotation is the relative angular
    # velocity in the child frame, here rotated by π/4 about x
    spec = models.pendulum(3, "spherical").with_initial(
        velocities={"joint1": 2.0 * np.array([0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)])})
    sim = Simulation(spec, dt=0.01)
    traj = sim.run(2000, progress=False)
    m, J = sim.model.mass, sim.model.inertia
    # interval velocities with the configuration at the interval start: x_k × v_k is exact
    Lz = (np.einsum("i,tij->tj", m, np.cross(traj.x, traj.v))[:, 2]
          + np.einsum("tiab,ibc,tic->ta", quat.rotation_matrix(traj.q), J, traj.w)[:, 2])
    assert abs(Lz[0]) > 1.0
    assert np.abs(Lz - Lz[0]).max() < 2e-3 * abs(Lz[0])
    assert traj.constraint_violation.max() < 1e-9


def test_newton_converges_quadratically():
    sim = Simulation(models.pendulum(4), dt=0.01, tol=1e-13)
    sim.reuse_factorization = False           # full Newton (a chord step contracts linearly)
    traj = sim.run(50, progress=False)
    for hist in traj.residual_history:
        r = hist[hist > 1e-12]
        for a, b in zip(r[:-1], r[1:], strict=False):
            if a < 1e-2:
                assert b <= 50 * a * a      # e_{k+1} <= C e_k², C from the problem's scale
    assert traj.iterations[1:].mean() <= 3


@pytest.mark.parametrize("spec", [models.pendulum(6), models.pendulum(4, joint="spherical"),
                                  models.fourbar(), models.pendulum(3, damper=0.3)],
                         ids=["revolute", "spherical", "loop", "damped"])
def test_extrapolated_newton_start_changes_only_the_start(spec):
    """The default start 2 s_k - s_{k-1} (compiled in the fused gravity-only kernel, on trees
    with graphsolve's implicit-L factor and on the four-bar's cyclic graph; in Python for the
    damped chain) and the plain start s_k reach the same solutions to the Newton tolerance,
    and the extrapolated start needs no more iterations."""
    runs = []
    for extrapolate in (True, False):
        sim = Simulation(spec, dt=0.01)
        sim.extrapolate = extrapolate
        runs.append(sim.run(300, progress=False))
    a, b = runs
    assert np.abs(a.x - b.x).max() < 1e-9
    assert np.abs(a.v - b.v).max() < 1e-7
    assert a.iterations[1:].mean() <= b.iterations[1:].mean()


@pytest.mark.parametrize("joint", ["spherical", "revolute"])
def test_loop_closed_to_the_world(joint):
    """A 3-link chain whose tip is also jointed to the world (a loop through the ground): both
    chain ends are zero-diagonal joint nodes, and with ball joints a body between two joints
    spins freely, so the tree elimination order met a singular joint pivot. It must run with
    closed loops and bounded energy."""
    from dynamics.maximal.mechanism import MaximalModel
    from dynamics.spec import WORLD, Joint, MechanismSpec

    base = models.pendulum(3, joint=joint, initial_angle=0.6)
    init = dict(base.initial_positions)
    init["joint2"] = [-1.0, 0.3, 0.0] if joint == "spherical" else [-1.0]
    base = MechanismSpec(base.bodies, base.joints, initial_positions=init, name="open")
    x, q, _, _ = MaximalModel(base).initial_state()
    local = np.array([0.0, 0.0, -0.5])
    tip = x[2] + quat.rotation_matrix(q[2]) @ local
    closure = Joint("close", "spherical" if joint == "spherical" else "cylindrical_free",
                    WORLD, "link3", tip, local, [1.0, 0.0, 0.0])
    spec = MechanismSpec(base.bodies, base.joints + (closure,), initial_positions=init,
                         name="closed")
    traj = Simulation(spec, dt=0.01).run(300, progress=False)
    assert traj.constraint_violation.max() < 1e-8
    assert np.ptp(traj.energy) < 0.02 * 9.81 * 3.0
    assert np.abs(traj.x[:, 1] - traj.x[0, 1]).max() > 0.05      # it really moves


def test_initial_velocities_are_projected_onto_the_loops():
    spec = models.double_fourbar()
    sim = Simulation(spec, dt=0.01)
    # after the projection the first update satisfies every constraint
    from dynamics.maximal.step_system import quaternion_update
    x1 = sim.x + sim.dt * sim.v
    q1 = quaternion_update(sim.q, sim.w, sim.dt)
    assert sim.model.constraint_violation(x1, q1) < 1e-10
    # and the crank rate is close to the requested 1 rad/s
    rate = sim.minimal_velocities()["pivot2"][0]
    assert abs(rate - 1.0) < 0.05
    traj = sim.run(100, progress=False)
    assert traj.constraint_violation.max() < 1e-9


def test_actuator_torque_balances_gravity():
    """A torque m g l_c sin θ at the joint holds the pendulum still (eq. 1)."""
    spec = models.pendulum(1, actuated=True, initial_angle=0.6)
    k = spec.bodies[0].mass * G * 0.5
    sim = Simulation(spec, dt=0.01)
    traj = sim.run(100, controller=lambda s: {"joint1": [k * np.sin(0.6)]}, progress=False)
    np.testing.assert_allclose(traj.minimal_coordinates[:, 0], 0.6, atol=1e-9)


def test_spring_oscillator_period():
    """A joint spring without gravity: θ'' = -k/J θ, period 2π sqrt(J/k)."""
    from dynamics.spec import MechanismSpec
    base = models.pendulum(1, initial_angle=0.3)
    j = base.joints[0]
    joint = type(j)(j.name, j.type, j.parent, j.child, j.parent_point, j.child_point, j.axis,
                    spring=4.0)
    spec = MechanismSpec(base.bodies, (joint,), gravity=[0, 0, 0],
                         initial_positions=base.initial_positions)
    J = spec.bodies[0].inertia[0, 0] + 0.25
    dt = 0.001
    traj = Simulation(spec, dt=dt).run(2000, progress=False)
    expected = 0.3 * np.cos(np.sqrt(4.0 / J) * traj.t)
    assert np.abs(traj.minimal_coordinates[:, 0] - expected).max() < 5e-3
    assert np.ptp(traj.energy) < 1e-3 * traj.energy[0]


def test_five_link_urdf_chain_agrees_with_pinocchio():
    """The same URDF in Pinocchio (ABA + RK4, 1e-4 s) and here; first-order convergence."""
    pin = pytest.importorskip("pinocchio")
    from dynamics.urdf import load_urdf, write_urdf
    text = write_urdf(models.pendulum(5))
    spec = load_urdf(text).with_initial({"joint1": [0.7], "joint3": [-0.4]})
    model = pin.buildModelFromXML(text)
    data = model.createData()
    model.gravity.linear[:] = spec.gravity
    assert list(model.names)[1:] == [j.name for j in spec.joints]

    def acc(q, v):
        return pin.aba(model, data, q, v, np.zeros(model.nv))

    h, q, v = 1e-4, np.array([0.7, 0, -0.4, 0, 0]), np.zeros(5)
    ref = [q]
    for _ in range(10_000):
        k1q, k1v = v, acc(q, v)
        k2q, k2v = v + h / 2 * k1v, acc(q + h / 2 * k1q, v + h / 2 * k1v)
        k3q, k3v = v + h / 2 * k2v, acc(q + h / 2 * k2q, v + h / 2 * k2v)
        k4q, k4v = v + h * k3v, acc(q + h * k3q, v + h * k3v)
        q = q + h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        ref.append(q)
    ref = np.array(ref)
    errors = []
    for dt in (2e-3, 1e-3):
        traj = Simulation(spec, dt=dt).run(int(round(1 / dt)), progress=False)
        errors.append(np.abs(traj.minimal_coordinates - ref[::int(round(dt / h))]).max())
    assert errors[1] < 4e-3                      # rad over 1 s at Δt = 1 ms
    assert 1.7 < errors[0] / errors[1] < 2.3     # the first-order integrator's error


def test_fast_rotation_is_a_clear_error():
    spec = models.pendulum(1).with_initial(velocities={"joint1": [250.0]})
    with pytest.raises(NewtonError, match="2/Δt"):
        Simulation(spec, dt=0.01)


def test_newton_iteration_cap_is_a_clear_error():
    sim = Simulation(models.double_pendulum(), dt=0.01, max_iter=1, tol=1e-14)
    with pytest.raises(NewtonError, match="did not converge"):
        sim.run(5, progress=False)


def test_redundant_loop_closure_is_a_clear_singular_error():
    """A revolute closing a planar four-bar adds three redundant constraints: F is singular."""
    from dynamics.spec import MechanismSpec
    base = models.fourbar()
    closure = base.joint("closure")
    redundant = type(closure)(closure.name, "revolute", closure.parent, closure.child,
                              closure.parent_point, closure.child_point, closure.axis)
    joints = tuple(redundant if j.name == "closure" else j for j in base.joints)
    spec = MechanismSpec(base.bodies, joints, initial_positions=base.initial_positions)
    with pytest.raises(SingularStepError, match="singular pivot block .*joint|redundant"):
        Simulation(spec, dt=0.01).run(3, progress=False)      # fails in halves too


def test_fast_rotation_inside_the_compiled_step_is_a_clear_error():
    sim = Simulation(models.pendulum(2), dt=0.01)
    sim.w = sim.w.copy()
    sim.w[1] = [250.0, 0.0, 0.0]                  # bypass set_state's check
    with pytest.raises(NewtonError, match="body 'link2': .*2/Δt"):
        sim.step()
