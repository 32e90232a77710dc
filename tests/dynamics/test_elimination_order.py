"""Elimination order of the maximal-coordinate Newton system (dynamics.maximal.StepSystem):
joints are pivoted after all of their bodies only where the graph's own order would certainly
meet a singular joint pivot (or a loop is closed to the world); elsewhere the graph's order and
its fill are kept."""

import numpy as np
import pytest

import graphsolve as gs
from dynamics import models
from dynamics.maximal import Simulation
from dynamics.maximal.mechanism import MaximalModel
from dynamics.maximal.step_system import (
    StepSystem,
    _defer,
    _overconstrained_pivot,
    quaternion_update,
)
from dynamics.spec import WORLD, Contact, MechanismSpec


def _tree_order(S: StepSystem) -> list[int]:
    """The graph's own (Brüdigam) order with only the loop joints moved after their bodies,
    as the step system orders a mechanism without a certainly singular joint pivot."""
    js, nb = S.model.joints, S.model.n_bodies
    zero = list(range(nb, nb + len(S.constrained)))
    undamped = S.graph.copy()           # ordered without the damper edges, as StepSystem
    undamped.remove_edges_from((int(js.parent[k]), int(js.child[k])) for k in S._damped_pairs)
    base = gs.analyze(undamped, ordering="brudigam", block_sizes=S.matrix.block_sizes,
                      zero_diagonal=zero)
    loops = {nb + c for c, k in enumerate(S.constrained)
             if js.names[k] in {j.name for j in S.model.spec.loop_joints}}
    return _defer(list(base.elimination_order), loops, S.graph)


def _rows(S: StepSystem) -> dict[int, int]:
    nb = S.model.n_bodies
    return {nb + c: int(S.model.joints.n_constraints[k]) for c, k in enumerate(S.constrained)}


def five_bar_leg_on_ground() -> MechanismSpec:
    """A five-bar leg on two world hips 0.29 m up with a friction contact at its foot (0.034 m
    above the ground at the start; it lands as the leg swings): a contact model whose graph
    order pivots a knee singularly."""
    bodies, joints, init = models._five_bar("", WORLD, np.array([0.0, 0.0, 0.29]), models._X,
                                            0.1, 0.2, 0.05, 0.05, (0.8, -0.8))
    foot = Contact("foot_contact", "lower_a", -models._top(0.2), friction=0.5)
    return MechanismSpec(tuple(bodies), tuple(joints), initial_positions=init,
                         name="five_bar_leg_on_ground", contacts=(foot,))


@pytest.mark.parametrize("spec, fill", [
    (models.fourbar(), 2), (models.double_fourbar(), 4), (models.segment_chain(3), 17),
    (models.segment_chain(10), 73), (models.minitaur(), 34)],
    ids=["fourbar", "double_fourbar", "segment_chain(3)", "segment_chain(10)", "minitaur"])
def test_safe_mechanisms_keep_the_graph_order_and_its_fill(spec, fill):
    S = StepSystem(MaximalModel(spec), 0.01)
    assert not S.joints_deferred
    assert _overconstrained_pivot(_tree_order(S), _rows(S), S.model.n_bodies, S.graph) is None
    assert list(S.analysis.elimination_order) == _tree_order(S)
    assert len(S.analysis.fill_blocks) == fill


@pytest.mark.parametrize("spec, joint", [
    (models.five_bar_leg(), "knee_b"), (models.five_bar_leg(damper=0.1), "knee_b"),
    (models.arm_exoskeleton(), "elbow"), (five_bar_leg_on_ground(), "knee_b")],
    ids=["five_bar_leg", "five_bar_leg_damped", "arm_exoskeleton", "five_bar_leg_on_ground"])
def test_joints_after_their_bodies_where_the_graph_order_pivots_a_joint_singularly(spec, joint):
    """The criterion is a certainty, not a guess: the joint it names is the one whose pivot
    the graph's order finds singular in the first step's Newton matrix."""
    m = MaximalModel(spec)
    S = StepSystem(m, 0.01, kernels="reference")
    nb = m.n_bodies
    assert S.joints_deferred
    tree = _tree_order(S)
    node = _overconstrained_pivot(tree, _rows(S), nb, S.graph)
    assert node is not None and m.joints.names[int(S.constrained[node - nb])] == joint
    # every joint node after all of its bodies
    pos = {n: i for i, n in enumerate(S.analysis.elimination_order)}
    for n in range(nb, nb + len(S.constrained)):
        assert all(pos[n] > pos[b] for b in S.graph[n] if b < nb)
    # the first step's Newton matrix: singular at that joint in the graph's order, not in the
    # deferred one
    x, q, v, w = m.initial_state()
    S.begin(x + S.dt * v, quaternion_update(q, w, S.dt), v, w)
    s = S.pack(v, w, np.zeros((len(m.joints), 6)))
    if S.contacts:
        for grp in S.contacts:
            s[grp.rows] = 1.0
    A = S.jacobian(s)
    zero = list(range(nb, nb + len(S.constrained)))
    an = gs.analyze(S.graph, ordering=tree, block_sizes=A.block_sizes, zero_diagonal=zero)
    with pytest.raises(gs.SingularBlockError) as err:
        gs.factorize(A, method="ldu", analysis=an, backend="reference")
    assert err.value.node == node
    gs.factorize(A, method="ldu", analysis=S.analysis, backend="reference")


def test_five_bar_leg_steps_in_the_deferred_order():
    sim = Simulation(models.five_bar_leg(), 0.001)
    sim.run(5, progress=False)
    S = sim.system
    assert S.joints_deferred
    assert list(S.analysis.elimination_order) == _defer(
        _tree_order(S), set(range(S.model.n_bodies, S.model.n_bodies + len(S.constrained))),
        S.graph)


@pytest.mark.parametrize("kernels", ["compiled", "reference"])
def test_contact_five_bar_leg_simulates(kernels):
    """The contact steps factor with ``pivot_rtol = 0`` (only exact zeros are singular): a
    rank-deficient joint pivot would not be reported there but would wreck the interior point
    (in the graph's order: an interior-point line search failure at t = 0.007 s compiled,
    0.035 s in the reference, before the foot lands)."""
    spec = five_bar_leg_on_ground()
    sim = Simulation(spec, 0.001)
    if kernels == "reference":
        sim.system = StepSystem(sim.model, sim.dt, kernels="reference")
        sim._compiled_step = sim._compiled_contacts = False
    tr = sim.run(300, progress=False)
    assert sim.system.joints_deferred
    assert tr.constraint_violation.max() < 1e-9
    assert -1e-9 < tr.contact_distance.min() < 1e-6            # the foot has landed
