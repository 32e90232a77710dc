"""dynamics.minimal against Pinocchio (the oracle): RNEA, ABA, CRBA, energies, kinematics and
configuration operations on random URDF trees and on random specs with spherical joints.

Conventions converted here: Pinocchio's continuous joints have ``q = (cos θ, sin θ)``, its
quaternions are scalar last and its free-flyer ``q = (x, y, z, qx, qy, qz, qw)``; velocities
(free flyer: linear then angular, both in the local frame) agree without conversion.
"""
from __future__ import annotations

import numpy as np
import pytest

from comparisons.pinocchio_peer import pinocchio_model, pinocchio_state
from dynamics.minimal import (
    Model,
    aba,
    body_poses,
    crba,
    difference,
    initial_state,
    integrate,
    kinetic_energy,
    potential_energy,
    random_configuration,
    rnea,
)
from tests.dynamics.minimal_trees import pin_configuration, random_spec, random_tree_urdf, rel_error

pin = pytest.importorskip("pinocchio")

TOL = 1e-10
URDF_SEEDS = range(120)          # ≥ 100 random trees of 2-31 links, half with a floating base


def _pin_mass_matrix(pin_model, pin_data, qp) -> np.ndarray:
    M = pin.crba(pin_model, pin_data, qp)
    return np.triu(M) + np.triu(M, 1).T          # Pinocchio fills the upper triangle


def _compare(model, pin_model, q, qp, rng) -> dict:
    v, a, tau = rng.normal(size=(3, model.nv))
    data, pd = model.create_data(), pin_model.createData()
    return {
        "rnea": rel_error(rnea(model, data, q, v, a), pin.rnea(pin_model, pd, qp, v, a)),
        "aba": rel_error(aba(model, data, q, v, tau), pin.aba(pin_model, pd, qp, v, tau)),
        "crba": rel_error(crba(model, data, q), _pin_mass_matrix(pin_model, pd, qp)),
        "kinetic": rel_error(kinetic_energy(model, data, q, v),
                             pin.computeKineticEnergy(pin_model, pd, qp, v)),
        "potential": abs(potential_energy(model, data, q)
                         - pin.computePotentialEnergy(pin_model, pd, qp)),
    }


@pytest.mark.parametrize("seed", URDF_SEEDS)
def test_random_urdf_tree_matches_pinocchio(seed):
    floating = seed % 2 == 1
    n_links = 31 if seed % 4 == 0 else None      # 30 bodies (fixed base: the root is the world)
    xml = random_tree_urdf(seed, n_links)
    model = Model.from_urdf(xml, floating_base=floating)
    pin_model = (pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()) if floating
                 else pin.buildModelFromXML(xml))
    assert model.joint_names == list(pin_model.names[1:])
    assert model.nv == pin_model.nv
    rng = np.random.default_rng(seed)
    q = random_configuration(model, rng)
    err = _compare(model, pin_model, q, pin_configuration(model, pin_model, q), rng)
    for key in ("rnea", "aba", "crba", "kinetic"):
        assert err[key] < TOL, (key, err)
    assert err["potential"] < 1e-9


@pytest.mark.parametrize("rotation", ["quaternion", "rotation_vector"])
@pytest.mark.parametrize("seed", range(16))
def test_spherical_joints_match_pinocchio_peer(seed, rotation):
    """Random specs with spherical joints (no URDF form) against the Pinocchio model of
    comparisons.pinocchio_peer: same joint order, same spec-coordinate conventions."""
    spec = random_spec(seed, floating_base=seed % 2 == 1)
    model = Model(spec, rotation=rotation)
    pin_model, names = pinocchio_model(spec)
    assert model.joint_names == names
    q, v = initial_state(model)
    qp, vp = pinocchio_state(spec, pin_model)
    np.testing.assert_allclose(v, vp, rtol=0, atol=1e-12)
    if rotation == "quaternion":
        np.testing.assert_allclose(pin_configuration(model, pin_model, q), qp, atol=1e-12)
    err = _compare(model, pin_model, q, qp, np.random.default_rng(seed))
    for key in ("rnea", "aba", "crba", "kinetic"):
        assert err[key] < TOL, (key, err)
    assert err["potential"] < 1e-9
    # every body's centre-of-mass frame, including bodies welded by fixed joints
    positions, rotations = body_poses(model, model.create_data(), q)
    pd = pin_model.createData()
    pin.framesForwardKinematics(pin_model, pd, qp)
    for b, name in enumerate(model.body_names):
        oMf = pd.oMf[pin_model.getFrameId(name, pin.FrameType.BODY)]
        np.testing.assert_allclose(positions[b], oMf.translation, atol=1e-10)
        np.testing.assert_allclose(rotations[b], oMf.rotation, atol=1e-10)


@pytest.mark.parametrize("seed", range(8))
def test_integrate_and_difference_match_pinocchio(seed):
    spec = random_spec(seed, floating_base=True)
    model = Model(spec)
    pin_model, _ = pinocchio_model(spec)
    rng = np.random.default_rng(seed)
    q0 = random_configuration(model, rng)
    dv = rng.normal(size=model.nv)
    q1 = integrate(model, q0, dv)
    qp0, qp1 = (pin_configuration(model, pin_model, x) for x in (q0, q1))
    np.testing.assert_allclose(pin.difference(pin_model, pin.integrate(pin_model, qp0, dv), qp1),
                               0.0, atol=1e-12)
    np.testing.assert_allclose(difference(model, q0, q1), pin.difference(pin_model, qp0, qp1),
                               atol=1e-12)


@pytest.mark.parametrize("joint", ["revolute", "spherical"])
def test_thirty_link_chain_matches_pinocchio(joint):
    """A chain of 30 slender rods (1 m × 5 cm): the deepest tree, and for ball joints a badly
    conditioned M (cond ≈ 2e7: the spin about each rod's axis is nearly free). There both ABAs
    are compared with a Cholesky solve of CRBA + RNEA; ours must be at least as close to it as
    ``pin.aba`` (whose error there is ≈ 8e-10, ours ≈ 1e-10)."""
    from dynamics import models
    spec = models.pendulum(30, joint)
    model = Model(spec)
    pin_model, _ = pinocchio_model(spec)
    rng = np.random.default_rng(30)
    q = random_configuration(model, rng)
    qp = pin_configuration(model, pin_model, q)
    err = _compare(model, pin_model, q, qp, np.random.default_rng(31))
    for key in ("rnea", "crba", "kinetic") + (("aba",) if joint == "revolute" else ()):
        assert err[key] < TOL, (key, err)
    v, tau = rng.normal(size=(2, model.nv))
    data = model.create_data()
    M = crba(model, data, q)
    solve = np.linalg.solve(M, tau - rnea(model, data, q, v, np.zeros(model.nv)))
    ours = rel_error(aba(model, data, q, v, tau), solve)
    theirs = rel_error(pin.aba(pin_model, pin_model.createData(), qp, v, tau), solve)
    assert ours <= max(TOL, theirs), (ours, theirs)
