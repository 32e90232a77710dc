"""dynamics.minimal.spatial: closed forms against the series of Lee et al. (2016) eq. 12-13,
the matrix exponential (scipy), finite differences, group identities, and Pinocchio."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from dynamics.minimal import spatial as sp

ANGLES = [0.0, 1e-9, 1e-6, 1e-3, 0.02, 0.0999, 0.1001, 0.15, 0.3, 1.0, 2.0, 3.0, np.pi - 1e-6]


def _twist(rng, angle: float, length: float = 1.0) -> np.ndarray:
    w = rng.normal(size=3)
    return np.concatenate([angle * w / np.linalg.norm(w), length * rng.normal(size=3)])


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.mark.parametrize("angle", ANGLES)
def test_exp_log_against_matrix_exponential(rng, angle):
    for _ in range(5):
        V = _twist(rng, angle)
        T = sp.exp_se3(V)
        np.testing.assert_allclose(T, expm(sp.hat(V)), rtol=0, atol=1e-14)
        np.testing.assert_allclose(sp.exp_so3(V[:3]), T[:3, :3], rtol=0, atol=1e-15)
        np.testing.assert_allclose(sp.log_se3(T), V, rtol=0, atol=1e-12 if angle < 3.1 else 1e-8)
        np.testing.assert_allclose(sp.vee(sp.hat(V)), V)


@pytest.mark.parametrize("angle", ANGLES)
def test_dexp_dlog_closed_forms_match_series(rng, angle):
    """eq. 12-13: dlog_V = Σ B_j/j! ad_V^j, and dexp_V = Σ ad_V^k/(k+1)! its inverse."""
    for _ in range(5):
        V = _twist(rng, angle)
        np.testing.assert_allclose(sp.dexp(V), sp.dexp_series(V, 40), rtol=0, atol=1e-14)
        terms = 80 if angle > 2.5 else 50
        np.testing.assert_allclose(sp.dlog(V), sp.dlog_series(V, terms), rtol=0,
                                   atol=1e-13 if angle < 2.5 else 1e-10)
        np.testing.assert_allclose(sp.dlog(V) @ sp.dexp(V), np.eye(6), rtol=0, atol=1e-13)
        np.testing.assert_allclose(sp.dexp_so3(V[:3]), sp.dexp(V)[:3, :3], atol=1e-15)
        np.testing.assert_allclose(sp.dlog_so3(V[:3]), sp.dlog(V)[:3, :3], atol=1e-15)


@pytest.mark.parametrize("angle", [1e-4, 0.7, 2.5])
def test_dexp_is_the_right_trivialized_derivative_of_exp(rng, angle):
    """(d/dt exp[V + tW]) exp(-[V]) = [dexp_V W] at t = 0 (central differences)."""
    V, W = _twist(rng, angle), rng.normal(size=6)
    h = 1e-6
    D = (sp.exp_se3(V + h * W) - sp.exp_se3(V - h * W)) / (2 * h) @ sp.inverse(sp.exp_se3(V))
    np.testing.assert_allclose(sp.vee(D), sp.dexp(V) @ W, atol=1e-8)
    # and dlog the derivative of log: log(exp(dexp_V W h) exp(V)) ≈ V + h W
    T = sp.exp_se3(h * (sp.dexp(V) @ W)) @ sp.exp_se3(V)
    np.testing.assert_allclose((sp.log_se3(T) - V) / h, W, atol=1e-5)


def test_dlog_series_diverges_beyond_two_pi():
    with pytest.raises(ValueError, match="diverges for |w| >= 2π"):
        sp.dlog_series(np.array([0.0, 0.0, 7.0, 0.0, 0.0, 0.0]))


def test_bernoulli_numbers():
    exact = [Fraction(1), Fraction(-1, 2), Fraction(1, 6), 0, Fraction(-1, 30), 0,
             Fraction(1, 42), 0, Fraction(-1, 30), 0, Fraction(5, 66), 0, Fraction(-691, 2730)]
    np.testing.assert_allclose(sp.bernoulli_numbers(13), [float(b) for b in exact], atol=1e-16)


def test_adjoint_identities(rng):
    T1, T2 = sp.exp_se3(rng.normal(size=6)), sp.exp_se3(rng.normal(size=6))
    V, W = rng.normal(size=(2, 6))
    # eq. 15: [Ad_T V] = T [V] T⁻¹, a group homomorphism with Ad_{T⁻¹} = Ad_T⁻¹
    np.testing.assert_allclose(sp.hat(sp.Ad(T1) @ V), T1 @ sp.hat(V) @ sp.inverse(T1),
                               atol=1e-13)
    np.testing.assert_allclose(sp.Ad(T1 @ T2), sp.Ad(T1) @ sp.Ad(T2), atol=1e-13)
    np.testing.assert_allclose(sp.Ad_inv(T1), np.linalg.inv(sp.Ad(T1)), atol=1e-13)
    np.testing.assert_allclose(sp.inverse(T1), np.linalg.inv(T1), atol=1e-14)
    # eq. 13: ad_V W = [V][W] - [W][V]; Ad_{exp V} = exp(ad_V); ad_dual is ad transposed
    np.testing.assert_allclose(sp.hat(sp.ad(V) @ W),
                               sp.hat(V) @ sp.hat(W) - sp.hat(W) @ sp.hat(V), atol=1e-14)
    np.testing.assert_allclose(sp.Ad(sp.exp_se3(V)), expm(sp.ad(V)), atol=1e-12)
    np.testing.assert_array_equal(sp.ad_dual(V), sp.ad(V).T)
    np.testing.assert_allclose(sp.unskew(sp.skew(V[:3])), V[:3])


def test_spatial_inertia_gives_rigid_body_energy_and_momentum(rng):
    m, c = 2.5, rng.normal(size=3)
    A = rng.normal(size=(3, 3))
    inertia = A @ A.T + np.eye(3)
    G = sp.spatial_inertia(m, c, inertia)
    w, v = rng.normal(size=(2, 3))
    v_c = v + np.cross(w, c)                      # velocity of the centre of mass
    V = np.concatenate([w, v])
    assert 0.5 * V @ G @ V == pytest.approx(0.5 * m * v_c @ v_c + 0.5 * w @ inertia @ w)
    np.testing.assert_allclose(G @ V, np.concatenate([inertia @ w + m * np.cross(c, v_c),
                                                      m * v_c]), atol=1e-13)
    # moving the reference frame: G_a = Ad_{T_b_a}ᵀ G_b Ad_{T_b_a}
    T = sp.exp_se3(rng.normal(size=6))
    R, p = T[:3, :3], T[:3, 3]
    G_moved = sp.spatial_inertia(m, R.T @ (c - p), R.T @ inertia @ R)
    np.testing.assert_allclose(sp.Ad(T).T @ G @ sp.Ad(T), G_moved, atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 1e-7, 0.5, np.pi / 2, np.pi - 1e-9, np.pi])
def test_quaternions_and_rotation_log_near_zero_and_pi(rng, angle):
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    R = Rotation.from_rotvec(angle * axis).as_matrix()
    w = sp.log_so3(R)
    np.testing.assert_allclose(sp.exp_so3(w), R, atol=1e-14)
    assert np.linalg.norm(w) == pytest.approx(angle, abs=1e-12)
    q = sp.quaternion_from_rotation(R)
    assert q[0] >= 0.0
    np.testing.assert_allclose(sp.rotation_from_quaternion(q), R, atol=1e-15)


def test_swap_halves_is_an_involution(rng):
    x, X = rng.normal(size=6), rng.normal(size=(6, 6))
    np.testing.assert_array_equal(sp.swap_halves(sp.swap_halves(x)), x)
    np.testing.assert_array_equal(sp.swap_halves(X)[:3, :3], X[3:, 3:])
    np.testing.assert_array_equal(sp.swap_halves(sp.swap_halves(X)), X)


@pytest.mark.parametrize("angle", [1e-8, 0.01, 1.0, 3.0])
def test_against_pinocchio(rng, angle):
    """Pinocchio orders motions (v; w); its Jexp/Jlog are body-frame (right) Jacobians,
    i.e. dexp(-V) and dlog(-V) here."""
    pin = pytest.importorskip("pinocchio")
    V = _twist(rng, angle)
    motion = pin.Motion(sp.swap_halves(V))
    M = pin.exp6(motion)
    np.testing.assert_allclose(sp.exp_se3(V), M.homogeneous, atol=1e-14)
    np.testing.assert_allclose(sp.swap_halves(sp.log_se3(M.homogeneous)), pin.log6(M).vector,
                               atol=1e-12)
    np.testing.assert_allclose(sp.swap_halves(sp.Ad(M.homogeneous)), M.action, atol=1e-14)
    np.testing.assert_allclose(sp.swap_halves(sp.ad(V)), motion.action, atol=1e-15)
    np.testing.assert_allclose(sp.swap_halves(sp.dexp(-V)), pin.Jexp6(motion), atol=1e-13)
    np.testing.assert_allclose(sp.swap_halves(sp.dlog(-V)), pin.Jlog6(M), atol=1e-11)
    np.testing.assert_allclose(sp.dexp_so3(-V[:3]), pin.Jexp3(V[:3]), atol=1e-14)
    np.testing.assert_allclose(sp.log_so3(pin.exp3(V[:3])), pin.log3(pin.exp3(V[:3])),
                               atol=1e-12)
