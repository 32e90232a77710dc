"""Pinocchio and MuJoCo peers built from a MechanismSpec (comparisons.dynamics_peers).

Oracles: forward kinematics written here from the conventions of the ``dynamics.spec`` docstring
(with scipy rotations), closed-form pendulum periods and linear spring-damper solutions, energy
and momentum conservation, and agreement between the two independent simulators.
"""

import numpy as np
import pytest
import scipy.linalg
from scipy.spatial.transform import Rotation

from comparisons import dynamics_peers as peers
from dynamics.spec import Body, Joint, MechanismSpec, Shape

GRAVITY = 9.81


@pytest.fixture(scope="module")
def pin():
    return pytest.importorskip("pinocchio")


@pytest.fixture(scope="module")
def mujoco():
    return pytest.importorskip("mujoco")


def link_body(name: str, mass: float = 1.0, length: float = 1.0, radius: float = 0.05) -> Body:
    """A cylinder-like link along its z axis."""
    shape = Shape("cylinder", (radius, length))
    return Body(name, mass, shape.inertia(mass), shape)


def chain_spec(n: int, joint: str = "revolute", positions=None, velocities=None,
               **joint_kwargs) -> MechanismSpec:
    """n links of 1 m hanging down at zero angle; joints about x (revolute) at the link ends."""
    bodies = [link_body(f"link{i}") for i in range(n)]
    joints = [Joint(f"joint{i}", joint, "world" if i == 0 else f"link{i - 1}", f"link{i}",
                    parent_point=(0.0, 0.0, 0.0) if i == 0 else (0.0, 0.0, -0.5),
                    child_point=(0.0, 0.0, 0.5), axis=(1.0, 0.0, 0.0), **joint_kwargs)
              for i in range(n)]
    return MechanismSpec(bodies, joints, gravity=(0.0, 0.0, -GRAVITY),
                         initial_positions=positions or {}, initial_velocities=velocities or {})


def forward_kinematics(spec: MechanismSpec, coordinates: dict) -> dict:
    """Body name -> (R, p_com, p_link): world rotation, centre of mass and joint-origin position.

    Straight from the spec docstring: the joint frame is ``parent_point`` and
    ``orientation_offset`` in the parent frame, the child frame is the joint frame moved by the
    joint coordinate, and the child's ``child_point`` sits at the (moved) joint origin.
    """
    pose = {"world": (np.eye(3), np.zeros(3), np.zeros(3))}
    for j in spec.tree_joints:
        R_parent, p_parent, _ = pose[j.parent]
        offset = Rotation.from_quat(np.array(j.orientation_offset), scalar_first=True)
        R_joint = R_parent @ offset.as_matrix()
        origin = p_parent + R_parent @ j.parent_point
        x = np.array(coordinates.get(j.name, np.zeros(j.dof)), dtype=float)  # writable for scipy
        R_child = R_joint
        if j.type == "revolute":
            R_child = R_joint @ Rotation.from_rotvec(j.axis * x[0]).as_matrix()
        elif j.type == "spherical":
            R_child = R_joint @ Rotation.from_rotvec(x).as_matrix()
        elif j.type == "prismatic":
            origin = origin + R_joint @ j.axis * x[0]
        else:
            assert j.type == "fixed"
        pose[j.child] = (R_child, origin - R_child @ j.child_point, origin)
    return pose


def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def mixed_tree(rng, root: str = "spherical") -> MechanismSpec:
    """Six bodies: a root joint, then revolute, prismatic, fixed, spherical and a second revolute
    branch, every joint with a random offset, axis and attachment points, springs and dampers."""
    def body(i):
        R = Rotation.from_quat(random_rotation(rng)).as_matrix()
        return Body(f"b{i}", 1.0 + rng.random(), R @ np.diag(1.0 + rng.random(3)) @ R.T,
                    Shape("box", (0.2, 0.3, 0.4)))

    def where():
        return {"parent_point": rng.normal(size=3), "child_point": rng.normal(size=3),
                "orientation_offset": random_rotation(rng)}

    joints = [Joint("root", root, "world", "b0", **where()),
              Joint("r1", "revolute", "b0", "b1", axis=rng.normal(size=3), damper=0.2,
                    spring=3.0, spring_offset=[0.3], **where()),
              Joint("p2", "prismatic", "b1", "b2", axis=rng.normal(size=3), spring=5.0,
                    damper=0.1, **where()),
              Joint("f3", "fixed", "b2", "b3", **where()),
              Joint("s4", "spherical", "b3", "b4", damper=0.05, **where()),
              Joint("r5", "revolute", "b0", "b5", axis=(0.0, 1.0, 0.0), **where())]
    dof = 6 if root == "floating" else 3
    return MechanismSpec([body(i) for i in range(6)], joints,
                         initial_positions={"root": 0.5 * rng.normal(size=dof), "r1": [0.4],
                                            "p2": [0.1], "s4": rng.normal(size=3), "r5": [1.0]},
                         initial_velocities={"root": rng.normal(size=dof), "r1": [1.0],
                                             "p2": [-0.5], "s4": rng.normal(size=3),
                                             "r5": [2.0]})


# -- (a) kinematics ------------------------------------------------------------------------------
def test_pinocchio_kinematics_of_revolute_chain(pin):
    rng = np.random.default_rng(0)
    angles = {f"joint{i}": rng.uniform(-2, 2, size=1) for i in range(4)}
    spec = chain_spec(4, positions=angles)
    model, names = peers.pinocchio_model(spec)
    assert names == [f"joint{i}" for i in range(4)] and model.nq == model.nv == 4
    assert np.array_equal(model.gravity.linear, [0.0, 0.0, -GRAVITY])
    data = model.createData()
    q, v = peers.pinocchio_state(spec, model)
    assert np.array_equal(v, np.zeros(4))
    pin.forwardKinematics(model, data, q)
    fk = forward_kinematics(spec, angles)
    for i, name in enumerate(names):
        R, _, link_origin = fk[f"link{i}"]
        oMi = data.oMi[model.getJointId(name)]
        np.testing.assert_allclose(oMi.rotation, R, atol=1e-14)
        np.testing.assert_allclose(oMi.translation, link_origin, atol=1e-14)
    masses = np.array([b.mass for b in spec.bodies])
    com = sum(m * fk[b.name][1] for m, b in zip(masses, spec.bodies, strict=True)) / masses.sum()
    np.testing.assert_allclose(pin.centerOfMass(model, data, q), com, atol=1e-14)
    # the hanging chain at zero angle: link i has its centre of mass at z = -(i + 1/2)
    zero = peers.simulate_pinocchio(chain_spec(4), 0.01, 0)
    np.testing.assert_allclose(zero["body_positions"][0][:, 2], -np.arange(4) - 0.5, atol=1e-15)


def test_body_frames_of_general_tree_match_spec_conventions(pin, mujoco):
    spec = mixed_tree(np.random.default_rng(1))
    fk = forward_kinematics(spec, spec.initial_positions)
    for sim in (peers.simulate_pinocchio(spec, 0.01, 0), peers.simulate_mujoco(spec, 0.01, 0)):
        assert sim["body_names"] == [b.name for b in spec.bodies]
        for k, b in enumerate(spec.bodies):
            R, p_com, _ = fk[b.name]
            np.testing.assert_allclose(sim["body_rotations"][0, k], R, atol=1e-12)
            np.testing.assert_allclose(sim["body_positions"][0, k], p_com, atol=1e-12)
        for name, x in spec.initial_positions.items():
            np.testing.assert_allclose(sim["coordinates"][name][0], x, atol=1e-12)


def test_floating_root_pose_and_free_fall(pin, mujoco):
    body = Body("box", 2.0, np.diag([0.1, 0.2, 0.3]))
    x0, xd0 = np.array([0.1, -0.2, 0.3, 0.4, -0.5, 0.6]), np.array([1.0, 0.5, 2.0, 3.0, -1.0, 2.0])
    offset = Rotation.from_rotvec([0.3, 0.2, -0.1])
    joint = Joint("free", "floating", "world", "box", parent_point=(0.0, 0.0, 1.0),
                  child_point=(0.1, 0.2, 0.3), orientation_offset=offset.as_quat(scalar_first=True))
    spec = MechanismSpec([body], [joint], initial_positions={"free": x0},
                         initial_velocities={"free": xd0})
    R0 = offset.as_matrix() @ Rotation.from_rotvec(x0[3:]).as_matrix()
    p0 = joint.parent_point + x0[:3] - R0 @ joint.child_point
    # velocity of the centre of mass: xdot - R (omega × child_point), omega in the child frame
    v0 = xd0[:3] - R0 @ np.cross(xd0[3:], joint.child_point)
    t = np.linspace(0.0, 0.5, 501)
    expected = p0 + np.outer(t, v0) + 0.5 * np.outer(t**2, [0.0, 0.0, -GRAVITY])
    for sim in (peers.simulate_pinocchio(spec, 1e-3, 500, "rk4"),
                peers.simulate_mujoco(spec, 1e-3, 500, "rk4")):
        np.testing.assert_allclose(sim["body_rotations"][0, 0], R0, atol=1e-14)
        np.testing.assert_allclose(sim["body_positions"][:, 0], expected, atol=1e-9)
        np.testing.assert_allclose(sim["coordinates"]["free"][0], x0, atol=1e-14)
        assert np.ptp(sim["energy"]) < 1e-9 * abs(sim["energy"][0])


# -- (b) small oscillations ----------------------------------------------------------------------
def oscillation_period(t: np.ndarray, angle: np.ndarray) -> float:
    """Twice the mean spacing of the zero crossings (linear interpolation)."""
    k = np.nonzero(np.sign(angle[:-1]) != np.sign(angle[1:]))[0]
    crossings = t[k] - angle[k] * (t[k + 1] - t[k]) / (angle[k + 1] - angle[k])
    assert crossings.size >= 4
    return 2.0 * float(np.mean(np.diff(crossings)))


@pytest.mark.parametrize("simulator, integrator", [("pinocchio", "semi_implicit_euler"),
                                                   ("pinocchio", "rk4"), ("mujoco", "euler"),
                                                   ("mujoco", "rk4")])
def test_single_pendulum_small_oscillation_period(pin, mujoco, simulator, integrator):
    theta0 = 0.01
    spec = chain_spec(1, positions={"joint0": [theta0]})
    body = spec.bodies[0]
    J_pivot = body.inertia[0, 0] + body.mass * 0.5**2
    period = 2 * np.pi * np.sqrt(J_pivot / (body.mass * GRAVITY * 0.5))
    dt = 1e-3
    simulate = peers.simulate_pinocchio if simulator == "pinocchio" else peers.simulate_mujoco
    sim = simulate(spec, dt, int(3.3 * period / dt), integrator=integrator)
    measured = oscillation_period(sim["t"], sim["joint_angles"][:, 0])
    # the finite amplitude lengthens the period by theta0²/16 = 6.25e-6 (the first term of the
    # elliptic-integral series); the integrators change it by less than (ω dt)²/24 = 6e-7
    assert abs(measured / (period * (1.0 + theta0**2 / 16.0)) - 1.0) < 2e-6


# -- (c), (d), (e) agreement and conservation -----------------------------------------------------
def test_revolute_chain_rk4_pinocchio_equals_mujoco(pin, mujoco):
    spec = chain_spec(3, positions={"joint0": [0.5], "joint1": [-0.3], "joint2": [0.8]},
                      velocities={"joint1": [1.0]})
    p = peers.simulate_pinocchio(spec, 1e-3, 1000, "rk4")
    m = peers.simulate_mujoco(spec, 1e-3, 1000, "rk4")
    assert p["revolute_joints"] == m["revolute_joints"] == ["joint0", "joint1", "joint2"]
    assert p["joint_angles"].shape == m["joint_angles"].shape == (1001, 3)
    np.testing.assert_allclose(p["joint_angles"], m["joint_angles"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(p["energy"], m["energy"], rtol=1e-10)
    np.testing.assert_allclose(p["t"][-1], 1.0)
    assert p["seconds"] > 0 and m["seconds"] > 0


def test_pinocchio_rk4_conserves_energy(pin):
    spec = chain_spec(3, positions={"joint0": [1.0], "joint1": [-0.5], "joint2": [0.8]},
                      velocities={"joint2": [2.0]})
    sim = peers.simulate_pinocchio(spec, 1e-3, 1000, "rk4", poses=False)
    drift = np.max(np.abs(sim["energy"] - sim["energy"][0]))
    assert sim["kinetic"].max() > 5.0       # energy is really exchanged
    assert drift < 1e-6 * abs(sim["energy"][0])
    assert drift < 1e-6 * sim["kinetic"].max()


def test_spherical_chain_rk4_pinocchio_equals_mujoco(pin, mujoco):
    rng = np.random.default_rng(2)
    spec = chain_spec(3, "spherical", damper=0.1,
                      positions={f"joint{i}": 0.5 * rng.normal(size=3) for i in range(3)},
                      velocities={f"joint{i}": rng.normal(size=3) for i in range(3)})
    p = peers.simulate_pinocchio(spec, 1e-3, 1000, "rk4")
    m = peers.simulate_mujoco(spec, 1e-3, 1000, "rk4")
    assert p["q"].shape == (1001, 12) and m["qpos"].shape == (1001, 12)
    for name in p["coordinates"]:
        np.testing.assert_allclose(p["coordinates"][name], m["coordinates"][name], atol=1e-8)
    np.testing.assert_allclose(p["body_positions"], m["body_positions"], atol=1e-8)
    np.testing.assert_allclose(p["energy"], m["energy"], rtol=1e-9)
    assert np.all(np.diff(p["energy"]) < 1e-12)       # the dampers only dissipate


def test_pinocchio_rk4_is_fourth_order_on_spherical_chain(pin):
    rng = np.random.default_rng(3)
    spec = chain_spec(2, "spherical",
                      positions={f"joint{i}": 0.5 * rng.normal(size=3) for i in range(2)},
                      velocities={f"joint{i}": 2 * rng.normal(size=3) for i in range(2)})

    def final(dt):
        return peers.simulate_pinocchio(spec, dt, round(0.2 / dt), "rk4")["body_positions"][-1]

    reference = final(2.5e-4)
    errors = [np.abs(final(dt) - reference).max() for dt in (4e-3, 2e-3)]
    assert errors[0] / errors[1] > 12.0          # 16 for a fourth-order method


def test_mixed_tree_semi_implicit_euler_pinocchio_equals_mujoco(pin, mujoco):
    spec = mixed_tree(np.random.default_rng(4))
    p = peers.simulate_pinocchio(spec, 1e-3, 500)
    m = peers.simulate_mujoco(spec, 1e-3, 500)
    np.testing.assert_allclose(p["body_positions"], m["body_positions"], atol=1e-10)
    np.testing.assert_allclose(p["body_rotations"], m["body_rotations"], atol=1e-10)
    np.testing.assert_allclose(p["energy"], m["energy"], rtol=1e-9)


def test_pinocchio_crba_forward_dynamics_equals_aba(pin):
    spec = mixed_tree(np.random.default_rng(6), root="floating")
    aba = peers.simulate_pinocchio(spec, 1e-3, 300, "rk4")
    crba = peers.simulate_pinocchio(spec, 1e-3, 300, "rk4", forward_dynamics="crba")
    np.testing.assert_allclose(crba["q"], aba["q"], atol=1e-10)
    np.testing.assert_allclose(crba["energy"], aba["energy"], rtol=1e-10)


def test_floating_mixed_tree_rk4_pinocchio_equals_mujoco(pin, mujoco):
    spec = mixed_tree(np.random.default_rng(5), root="floating")
    p = peers.simulate_pinocchio(spec, 1e-3, 500, "rk4")
    m = peers.simulate_mujoco(spec, 1e-3, 500, "rk4")
    # Pinocchio integrates the free flyer on SE(3), MuJoCo on R³ × SO(3): both fourth order
    np.testing.assert_allclose(p["body_positions"], m["body_positions"], atol=1e-8)
    for name in p["coordinates"]:
        np.testing.assert_allclose(p["coordinates"][name], m["coordinates"][name], atol=1e-8)
    np.testing.assert_allclose(p["energy"], m["energy"], rtol=1e-8)


# -- springs and dampers against the linear ODE ----------------------------------------------------
@pytest.mark.parametrize("joint", ["revolute", "prismatic"])
def test_spring_damper_joint_matches_linear_ode(pin, mujoco, joint):
    k, d, rest, x0, xd0 = 4.0, 0.3, 0.2, -0.1, 0.5
    body = link_body("link")
    spec = MechanismSpec([body], [Joint("j", joint, "world", "link", child_point=(0, 0, 0.5),
                                        axis=(1.0, 0.0, 0.0), spring=k, damper=d,
                                        spring_offset=[rest])],
                         gravity=(0.0, 0.0, 0.0), initial_positions={"j": [x0]},
                         initial_velocities={"j": [xd0]})
    inertia = body.inertia[0, 0] + body.mass * 0.25 if joint == "revolute" else body.mass
    A = np.array([[0.0, 1.0], [-k / inertia, -d / inertia]])
    step = scipy.linalg.expm(A * 1e-3)          # exact flow over one time step
    exact = [np.array([x0 - rest, xd0])]
    for _ in range(2000):
        exact.append(step @ exact[-1])
    exact = np.array(exact)[:, 0] + rest
    for sim in (peers.simulate_pinocchio(spec, 1e-3, 2000, "rk4"),
                peers.simulate_mujoco(spec, 1e-3, 2000, "rk4")):
        np.testing.assert_allclose(sim["coordinates"]["j"][:, 0], exact, atol=1e-10)


# -- (f) errors and output ----------------------------------------------------------------------
def test_loop_spec_is_rejected(pin, mujoco):
    spec = chain_spec(2)
    closed = MechanismSpec(spec.bodies, spec.joints + (
        Joint("close", "revolute", "world", "link1", parent_point=(0, 0, -2.0),
              child_point=(0, 0, -0.5)),), name="loop")
    for build in (peers.pinocchio_model, lambda s: peers.mujoco_model_xml(s, 0.01),
                  lambda s: peers.simulate_pinocchio(s, 0.01, 1),
                  lambda s: peers.simulate_mujoco(s, 0.01, 1)):
        with pytest.raises(peers.UnsupportedMechanismError, match="loops closed by joints.*close"):
            build(closed)


@pytest.mark.parametrize("joint_type", ["planar", "cylindrical", "fixed_orientation"])
def test_unsupported_joint_type_is_rejected(pin, mujoco, joint_type):
    spec = chain_spec(2, joint_type)
    with pytest.raises(peers.UnsupportedMechanismError, match=f"joint0.*{joint_type}"):
        peers.pinocchio_model(spec)
    with pytest.raises(ValueError, match=joint_type):      # also a ValueError (SpecError)
        peers.mujoco_model_xml(spec, 0.01)


def test_other_unsupported_cases_are_rejected(pin):
    with pytest.raises(peers.UnsupportedMechanismError, match="springs.*spherical"):
        peers.pinocchio_model(chain_spec(2, "spherical", spring=1.0))
    floating = chain_spec(2)
    inner = MechanismSpec(floating.bodies, (floating.joints[0], Joint(
        "joint1", "floating", "link0", "link1")))
    with pytest.raises(peers.UnsupportedMechanismError, match="only a floating root"):
        peers.pinocchio_model(inner)
    reversed_joint = MechanismSpec(floating.bodies, (floating.joints[0], Joint(
        "joint2", "revolute", "link1", "link0")))
    with pytest.raises(peers.UnsupportedMechanismError, match="joint2.*world side"):
        peers.pinocchio_model(reversed_joint)
    with pytest.raises(ValueError, match="unknown integrator"):
        peers.simulate_pinocchio(floating, 0.01, 1, integrator="rk45")
    with pytest.raises(ValueError, match="dt must be"):
        peers.simulate_pinocchio(floating, 0.0, 1)
    with pytest.raises(ValueError, match="steps must be"):
        peers.simulate_pinocchio(floating, 0.01, -1)
    with pytest.raises(ValueError, match="unknown forward_dynamics"):
        peers.simulate_pinocchio(floating, 0.01, 1, forward_dynamics="lu")


def test_mujoco_xml_has_visual_geoms_and_quoted_names(mujoco):
    spec = chain_spec(2)
    odd = MechanismSpec([link_body('a "quoted" <link>')], [Joint(
        "j&1", "revolute", "world", 'a "quoted" <link>', child_point=(0, 0, 0.5))])
    xml = peers.mujoco_model_xml(spec, 0.002)
    assert xml.count("<geom ") == 2 and 'contype="0" conaffinity="0"' in xml
    assert 'timestep="0.002"' in xml and 'type="hinge"' in xml
    model = mujoco.MjModel.from_xml_string(peers.mujoco_model_xml(odd, 0.01))
    assert model.body('a "quoted" <link>').id == 1 and model.joint("j&1").id == 0
    with pytest.raises(ValueError, match="unknown integrator"):
        peers.simulate_mujoco(spec, 0.01, 1, integrator="semi_implicit_euler")


def test_divergence_is_reported_with_its_step(pin, mujoco):
    # ω dt = sqrt(k / J) dt ≈ 17 > 2: explicit schemes blow up geometrically
    spec = chain_spec(1, spring=1e6, positions={"joint0": [0.1]})
    for simulate in (peers.simulate_pinocchio, peers.simulate_mujoco):
        with pytest.raises(peers.SimulationDivergedError, match="diverged at step") as err:
            simulate(spec, 0.01, 400)
        assert 10 < err.value.step <= 400 and err.value.time == pytest.approx(0.01 * err.value.step)


# -- Heun (explicit 2nd-order Runge-Kutta) and the solve_ivp reference ----------------------------
def spring_damper_slider(k: float = 4.0, d: float = 0.3):
    """A prismatic slider along x (gravity along -z does no work): x'' = -(k x + d x') / m."""
    spec = chain_spec(1, "prismatic", spring=k, damper=d, positions={"joint0": [0.2]},
                      velocities={"joint0": [-0.5]})
    m = spec.bodies[0].mass
    A = np.array([[0.0, 1.0], [-k / m, -d / m]])
    return spec, A, np.array([0.2, -0.5])


def test_heun_is_the_second_order_taylor_map_on_a_linear_system(pin):
    # Heun's step on y' = A y is exactly y+ = (I + hA + (hA)²/2) y
    spec, A, y0 = spring_damper_slider()
    dt, steps = 0.05, 40
    sim = peers.simulate_pinocchio(spec, dt, steps, integrator="heun", poses=False)
    step = np.eye(2) + dt * A + 0.5 * (dt * A) @ (dt * A)
    expected = np.array([np.linalg.matrix_power(step, i) @ y0 for i in range(steps + 1)])
    np.testing.assert_allclose(np.column_stack([sim["q"][:, 0], sim["v"][:, 0]]), expected,
                               rtol=0, atol=1e-13)


def test_heun_is_second_order_on_a_spherical_chain(pin):
    rng = np.random.default_rng(5)
    spec = chain_spec(2, "spherical",
                      positions={f"joint{i}": 0.5 * rng.normal(size=3) for i in range(2)},
                      velocities={f"joint{i}": rng.normal(size=3) for i in range(2)})
    ref = peers.simulate_pinocchio(spec, 1e-4, 2000, "rk4")["body_positions"][-1]
    errors = [np.abs(peers.simulate_pinocchio(spec, dt, round(0.2 / dt), "heun")
                     ["body_positions"][-1] - ref).max() for dt in (4e-3, 2e-3)]
    assert 3.5 < errors[0] / errors[1] < 4.5      # second order: halving dt quarters the error


def test_solve_ivp_reference_matches_the_matrix_exponential(pin):
    spec, A, y0 = spring_damper_slider()
    t = np.linspace(0.0, 3.0, 31)
    ref = peers.solve_ivp_pinocchio(spec, t)
    expected = np.array([scipy.linalg.expm(A * ti) @ y0 for ti in t])
    np.testing.assert_allclose(np.column_stack([ref["q"][:, 0], ref["v"][:, 0]]), expected,
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(ref["t"], t)
    assert ref["nfev"] > 0 and np.all(np.diff(ref["energy"]) < 1e-12)   # the damper dissipates


def test_solve_ivp_reference_conserves_pendulum_energy_and_rejects_ball_joints(pin):
    spec = chain_spec(2, positions={"joint0": [1.2], "joint1": [-0.4]})
    ref = peers.solve_ivp_pinocchio(spec, np.linspace(0.0, 2.0, 201))
    assert ref["kinetic"].max() > 5.0 and np.ptp(ref["energy"]) < 1e-9
    with pytest.raises(peers.UnsupportedMechanismError, match="vector-space"):
        peers.solve_ivp_pinocchio(chain_spec(1, "spherical"), np.linspace(0.0, 1.0, 3))
