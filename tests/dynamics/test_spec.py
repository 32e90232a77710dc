"""Mechanism specs: validation errors, models and their initial states."""
import networkx as nx
import numpy as np
import pytest

from dynamics import models
from dynamics import quaternion as quat
from dynamics.maximal import MaximalModel, Simulation
from dynamics.spec import WORLD, Body, Joint, MechanismSpec, SpecError


def _body(name="a", mass=1.0, inertia=None):
    return Body(name, mass, np.eye(3) if inertia is None else inertia)


def test_unknown_joint_type():
    with pytest.raises(SpecError, match="unknown joint type 'screw'"):
        Joint("j", "screw", WORLD, "a")


def test_aliases_map_to_table_b2_types():
    assert Joint("j", "continuous", WORLD, "a").type == "revolute"
    assert Joint("j", "ball", WORLD, "a").type == "spherical"


@pytest.mark.parametrize("mass", [0.0, -1.0, np.nan])
def test_nonpositive_mass(mass):
    with pytest.raises(SpecError, match="body 'a': mass must be positive"):
        _body(mass=mass)


@pytest.mark.parametrize("inertia, msg", [
    (np.diag([1.0, 1.0, -0.1]), "not positive definite"),
    (np.diag([1.0, 1.0, 0.0]), "not positive definite"),
    (np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "not symmetric"),
    (np.eye(2), "3×3"),
])
def test_bad_inertia(inertia, msg):
    with pytest.raises(SpecError, match=msg):
        _body(inertia=inertia)


def test_non_unit_orientation_offset():
    with pytest.raises(SpecError, match="unit quaternion"):
        Joint("j", "revolute", WORLD, "a", orientation_offset=[1.0, 0.1, 0, 0])


def test_non_unit_quaternion_state():
    sim = Simulation(models.pendulum(1), dt=0.01)
    q = sim.q * 1.01
    with pytest.raises(ValueError, match="unit quaternion"):
        sim.set_state(sim.x, q, sim.v, sim.w)


def test_unknown_parent_body():
    with pytest.raises(SpecError, match="joint 'j' refers to unknown body 'ghost'"):
        MechanismSpec((_body(),), (Joint("j", "revolute", "ghost", "a"),))


def test_body_not_connected_to_world():
    joints = (Joint("j0", "revolute", WORLD, "a"), Joint("j1", "revolute", "b", "c"))
    with pytest.raises(SpecError, match=r"\['b', 'c'\] are not connected to the world"):
        MechanismSpec((_body("a"), _body("b"), _body("c")), joints)


def test_duplicate_names_and_self_joint():
    with pytest.raises(SpecError, match="duplicate body names"):
        MechanismSpec((_body("a"), _body("a")), (Joint("j", "revolute", WORLD, "a"),))
    with pytest.raises(SpecError, match="child must be a body other than the parent"):
        Joint("j", "revolute", "a", "a")


def test_initial_coordinates_checked():
    with pytest.raises(SpecError, match="initial_positions\\['joint1'\\] must have 1 entries"):
        models.pendulum(1).with_initial({"joint1": [0.1, 0.2]})
    with pytest.raises(SpecError, match="closes a loop"):
        models.fourbar().with_initial({"closure": [0.0, 0.0, 0.0, 0.0]})


@pytest.mark.parametrize("dt", [0.0, -0.01, np.nan])
def test_nonpositive_step(dt):
    with pytest.raises(ValueError, match="dt must be a positive step size"):
        Simulation(models.pendulum(1), dt=dt)


def test_inconsistent_loop_configuration_is_refused():
    spec = models.fourbar().with_initial({"joint_bar": [0.3]})
    with pytest.raises(SpecError, match="violate the joint constraints"):
        Simulation(spec, dt=0.01)


def test_actuating_a_passive_joint_is_refused():
    sim = Simulation(models.pendulum(1), dt=0.01)
    with pytest.raises(SpecError, match="not actuated"):
        sim.run(1, controller=lambda s: {"joint1": [1.0]}, progress=False)


@pytest.mark.parametrize("make", [
    lambda: models.pendulum(4), lambda: models.pendulum(3, "spherical"),
    models.double_pendulum, models.fourbar, lambda: models.segment_chain(3),
    models.double_fourbar, lambda: models.scaled_pendulum(0.5),
])
def test_models_start_on_their_constraints(make):
    spec = make()
    m = MaximalModel(spec)
    x, q, _, _ = m.initial_state()
    assert m.constraint_violation(x, q) < 1e-12
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-14)
    # the tree joints' coordinates come back from the maximal state
    c = m.minimal_coordinates(x, q)
    for k, j in enumerate(spec.joints):
        if j.name in spec.initial_positions:
            np.testing.assert_allclose(c[k, :j.dof], spec.initial_positions[j.name],
                                       atol=1e-12)


def test_pendulum_geometry():
    spec = models.pendulum(2, initial_angle=np.pi / 2)
    x, q, _, _ = MaximalModel(spec).initial_state()
    # both rods horizontal along +y (rotation by +90° about x), centres at y = 0.5 and 1.5
    np.testing.assert_allclose(x, [[0, 0.5, 0], [0, 1.5, 0]], atol=1e-14)
    np.testing.assert_allclose(quat.rotate(q[0], [0, 0, -1.0]), [0, 1, 0], atol=1e-14)


def test_segment_chain_is_a_chain_of_loops():
    spec = models.segment_chain(4)
    assert len(spec.bodies) == 12 and len(spec.loop_joints) == 4
    sim = Simulation(spec, dt=0.01)
    # Cycle rank of the Newton graph: the world is not a node, so the first loop (closed
    # through the ground) is open in the graph; the other three are cycles.
    G = sim.system.graph
    assert G.number_of_edges() - G.number_of_nodes() + nx.number_connected_components(G) == 3
    assert len(sim.system.analysis.fill_blocks) > 0
