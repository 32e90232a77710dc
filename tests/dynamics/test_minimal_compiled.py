"""numba kernels of dynamics.minimal against the NumPy reference (and Pinocchio when present)."""
from __future__ import annotations

import numpy as np
import pytest

from dynamics import models
from dynamics.minimal import Model, aba, rnea, tree_kernels
from tests.dynamics.minimal_trees import random_tree_urdf, rel_error


@pytest.mark.parametrize("seed", range(20))
def test_rnea_and_aba_match_the_reference_on_random_trees(seed):
    model = Model.from_urdf(random_tree_urdf(seed, max_links=20))
    data = model.create_data()
    rng = np.random.default_rng(seed)
    q, v, a = rng.normal(size=(3, model.nv))
    assert rel_error(tree_kernels.rnea(model, data, q, v, a), rnea(model, data, q, v, a)) < 1e-12
    assert rel_error(tree_kernels.aba(model, data, q, v, a), aba(model, data, q, v, a)) < 1e-11


def test_long_chain_aba_matches_the_reference():
    model = Model(models.pendulum(100))
    data = model.create_data()
    rng = np.random.default_rng(1)
    q, v, tau = rng.normal(size=(3, 100))
    assert rel_error(tree_kernels.aba(model, data, q, v, tau), aba(model, data, q, v, tau)) < 1e-9


def test_aba_matches_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from comparisons.pinocchio_peer import pinocchio_model
    model = Model(models.pendulum(20))
    pm = pinocchio_model(model.spec)
    pm = pm[0] if isinstance(pm, tuple) else pm
    rng = np.random.default_rng(2)
    q, v, tau = rng.normal(size=(3, 20))
    expected = pin.aba(pm, pm.createData(), q, v, tau)
    assert rel_error(tree_kernels.aba(model, model.create_data(), q, v, tau), expected) < 1e-10


def test_unsupported_joints_and_lengths():
    ball = Model(models.pendulum(2, "spherical"))
    with pytest.raises(ValueError, match="joint1.*spherical"):
        tree_kernels.aba(ball, ball.create_data(), np.zeros(8), np.zeros(6), np.zeros(6))
    assert not tree_kernels.supports(ball)
    model = Model(models.pendulum(2))
    with pytest.raises(ValueError, match="tau"):
        tree_kernels.aba(model, model.create_data(), np.zeros(2), np.zeros(2), np.zeros(3))
