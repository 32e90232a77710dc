"""Body-body contacts (sphere-sphere, sphere-box; Brüdigam et al. 2023 §2, eq. 25-27, §4 graph):
head-on impact, a static stack, friction between two spheres, Jacobians vs finite differences,
compiled kernels vs the NumPy reference, a graph with a cycle through a contact, bad input."""
import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import MaximalModel, Simulation, StepSystem
from dynamics.maximal.step_system import quaternion_update
from dynamics.spec import WORLD, Body, BodyContact, Joint, MechanismSpec, Shape, SpecError
from tests.conftest import finite_difference_jacobian

G = 9.81
TOL = 1e-10


def _contact_force(sim, name):
    """Normal force γ (N) of the named contact at the last step."""
    for grp, u in zip(sim.system.contacts, sim.contact_variables, strict=True):
        if name in grp.names:
            return float(u[grp.names.index(name), 0])
    raise KeyError(name)


def test_head_on_collision_conserves_momentum_without_penetration_or_energy_gain():
    spec = models.sphere_collision(velocity=1.0, gap=0.1)
    traj = Simulation(spec, dt=0.01).run(60, progress=False)
    p = traj.v[:, 0] + traj.v[:, 1]                       # equal masses
    np.testing.assert_allclose(p, [[1.0, 0.0, 0.0]] * len(p), atol=1e-9)
    assert traj.contact_distance.min() > -1e-4
    assert traj.contact_distance.min() > -1e-9
    assert np.all(np.diff(traj.energy) < 1e-9)           # the impact never adds energy
    assert traj.energy[-1] < traj.energy[0]              # inelastic (no restitution model)
    assert traj.x[-1, 1, 0] > traj.x[0, 1, 0] + 0.1      # the struck sphere moves off
    assert traj.complementarity[1:].max() <= TOL
    assert np.abs(traj.w).max() < 1e-9                   # central impact: no spin


def test_static_stack_contact_forces_equal_the_weight_above():
    sim = Simulation(models.sphere_stack(2), dt=0.01)
    x0 = sim.x.copy()
    traj = sim.run(100, progress=False)
    np.testing.assert_allclose(traj.x[-1], x0, atol=1e-8)
    assert _contact_force(sim, "stack1") == pytest.approx(1.0 * G, rel=1e-8)
    assert _contact_force(sim, "ground1") == pytest.approx(2.0 * G, rel=1e-8)
    assert traj.contact_distance.min() > -1e-9
    assert traj.complementarity[1:].max() <= TOL


def test_three_sphere_stack_settles_from_a_drop():
    traj = Simulation(models.sphere_stack(3, gap=0.05), dt=0.01).run(100, progress=False)
    assert traj.contact_distance.min() > -1e-9
    np.testing.assert_allclose(traj.contact_distance[-1], 0.0, atol=1e-8)
    assert np.all(np.diff(traj.energy[1:]) < 1e-6)


def _sphere_on_big_sphere(friction, velocity=1.0, big=1e4, r=0.25):
    """A small sphere on top of a huge fixed sphere (radius ``big``), sliding along x."""
    small = Shape("sphere", (r,))
    huge = Shape("sphere", (big,))
    bodies = (Body("ball", 1.0, small.inertia(1.0), small),
              Body("planet", 100.0, huge.inertia(100.0), huge))
    joints = (Joint("anchor", "fixed", WORLD, "planet", parent_point=[0.0, 0.0, -big]),
              Joint("free", "floating", WORLD, "ball"))
    return MechanismSpec(bodies, joints, initial_positions={"free": [0, 0, r, 0, 0, 0]},
                         initial_velocities={"free": [velocity, 0, 0, 0, 0, 0]},
                         contacts=(BodyContact("touch", "ball", "planet", r, big,
                                               friction=friction, n_friction=4),))


def test_friction_between_two_spheres_decelerates_at_mu_g():
    """While it slides, the ball's speed drops at ``μ g`` (the normal force is ``m g`` up to
    ``v²/(g R)`` ~ 1e-5 on the R = 10 km sphere); then it rolls (``|ω| r = v``) at 5/7 v₀
    (up to the ~4e-4 it gains rolling down the big sphere's slope)."""
    mu, v0 = 0.2, 1.0
    dt = 0.005
    traj = Simulation(_sphere_on_big_sphere(mu, v0), dt=dt).run(160, progress=False)
    t_roll = 2 * v0 / (7 * mu * G)                       # 0.146 s
    k = int(0.8 * t_roll / dt)
    a = np.polyfit(traj.t[2:k], traj.v[2:k, 0, 0], 1)[0]
    assert a == pytest.approx(-mu * G, rel=1e-2)
    assert traj.v[-1, 0, 0] == pytest.approx(5 / 7 * v0, rel=2e-3)
    assert np.linalg.norm(traj.w[-1, 0]) * 0.25 == pytest.approx(traj.v[-1, 0, 0], rel=1e-3)
    assert traj.contact_distance.min() > -1e-9
    assert traj.complementarity[1:].max() <= TOL


def test_frictionless_sphere_keeps_sliding():
    traj = Simulation(_sphere_on_big_sphere(0.0, 1.0), dt=0.01).run(20, progress=False)
    assert traj.v[-1, 0, 0] == pytest.approx(1.0, rel=1e-2)
    assert np.abs(traj.w).max() < 1e-9


def _system(spec, kernels, seed=0):
    m = MaximalModel(spec)
    S = StepSystem(m, 0.01, kernels=kernels)
    rng = np.random.default_rng(seed)
    x, q, v, w = m.initial_state()
    v, w = rng.normal(size=v.shape), rng.normal(size=w.shape)
    S.begin(x + 0.01 * v, quaternion_update(q, w, 0.01), v, w)
    S.barrier = 0.3
    s = S.pack(v, w, np.zeros((len(m.joints), 6)))
    for grp in S.contacts:
        s[grp.rows] = rng.uniform(0.2, 2.0, size=grp.rows.shape)
    return S, s


def _ball_and_crate(ball):
    sh, bx = Shape("sphere", (0.2,)), Shape("box", (1.0, 0.6, 0.4))
    bodies = (Body("ball", 1.0, sh.inertia(1.0), sh), Body("crate", 2.0, bx.inertia(2.0), bx))
    joints = (Joint("f1", "floating", WORLD, "ball"), Joint("f2", "floating", WORLD, "crate"))
    return MechanismSpec(bodies, joints,
                         initial_positions={"f1": list(ball) + [0, 0, 0],
                                            "f2": [0, 0, 0, 0.3, -0.2, 0.5]},
                         contacts=(BodyContact("c", "ball", "crate", 0.2, kind="box",
                                               half_extents=[0.5, 0.3, 0.2], friction=0.4),))


CASES = {
    "sphere-sphere stack": models.sphere_stack(3, gap=0.01, offset=0.05),
    "sphere-box face": _ball_and_crate([0.1, 0.05, 0.5]),
    "sphere-box edge": _ball_and_crate([0.8, 0.5, 0.1]),
    "sphere-box corner": _ball_and_crate([0.7, 0.6, 0.5]),
    "sphere-box inside": _ball_and_crate([0.1, 0.0, 0.05]),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("kernels", ["compiled", "reference"])
def test_body_contact_jacobian_matches_finite_differences(case, kernels):
    S, s = _system(CASES[case], kernels)
    F = S.jacobian(s).to_dense()
    fd = finite_difference_jacobian(S.residual, s)
    np.testing.assert_allclose(F, fd, atol=1e-6 * max(1.0, np.abs(F).max()))


@pytest.mark.parametrize("case", list(CASES))
def test_compiled_contact_kernels_match_the_numpy_reference(case):
    S, s = _system(CASES[case], "compiled", seed=4)
    R, r = _system(CASES[case], "reference", seed=4)
    for g, h in zip(S.contacts, R.contacts, strict=True):
        np.testing.assert_allclose(g.P, h.P, atol=1e-14)
    np.testing.assert_allclose(S.residual(s), R.residual(r), atol=1e-12)
    np.testing.assert_allclose(S.jacobian(s).data, R.jacobian(r).data, atol=1e-12)
    x = np.random.default_rng(0).normal(size=S.N)
    np.testing.assert_allclose(S.matvec(x), S.matrix.to_dense() @ x, atol=1e-12)


def test_body_contact_node_joins_both_bodies_and_can_close_a_cycle():
    """A contact between the ends of a 3-sphere chain closes the cycle
    sphere1 - ball2 - sphere2 - ball3 - sphere3 - contact - sphere1; while it is inactive the
    motion equals that of the chain without it."""
    base = models.sphere_chain(3)
    loop = MechanismSpec(base.bodies, base.joints, initial_positions=base.initial_positions,
                         initial_velocities=base.initial_velocities, contacts=base.contacts + (
                             BodyContact("ends", "sphere1", "sphere3", 0.25, 0.25,
                                         friction=0.3),))
    sim = Simulation(loop, dt=0.01)
    grp = [g for g in sim.system.contacts if "ends" in g.names][0]
    node = int(grp.nodes[grp.names.index("ends")])
    assert set(sim.system.graph[node]) == {0, 2}
    assert len(sim.system.analysis.fill_blocks) > 0          # the cycle fills in
    a = sim.run(30, progress=False)
    b = Simulation(base, dt=0.01).run(30, progress=False)
    np.testing.assert_allclose(a.x, b.x, atol=1e-8)
    assert a.complementarity[1:].max() <= TOL


def test_body_contact_errors():
    base = models.sphere_stack(2)
    with pytest.raises(SpecError, match="contact 'c' is on unknown body 'ghost'"):
        MechanismSpec(base.bodies, base.joints, initial_positions=base.initial_positions,
                      contacts=(BodyContact("c", "sphere1", "ghost", 0.25, 0.25),))
    with pytest.raises(SpecError, match="body 'sphere1' appears twice"):
        BodyContact("c", "sphere1", "sphere1", 0.25, 0.25)
    with pytest.raises(SpecError, match="friction coefficient must be finite and >= 0"):
        BodyContact("c", "sphere1", "sphere2", 0.25, 0.25, friction=-0.1)
    with pytest.raises(SpecError, match="n_friction must be an even integer"):
        BodyContact("c", "sphere1", "sphere2", 0.25, 0.25, friction=0.5, n_friction=3)
    with pytest.raises(SpecError, match="needs a positive other_radius"):
        BodyContact("c", "sphere1", "sphere2", 0.25)
    with pytest.raises(SpecError, match="needs positive half_extents"):
        BodyContact("c", "sphere1", "sphere2", 0.25, kind="box")
    with pytest.raises(SpecError, match="kind must be 'sphere'"):
        BodyContact("c", "sphere1", "sphere2", 0.25, 0.25, kind="capsule")
    overlap = models.sphere_stack(2, gap=-0.01)
    with pytest.raises(SpecError, match="'sphere2' and 'sphere1' overlap at t = 0"):
        Simulation(overlap, dt=0.01)
