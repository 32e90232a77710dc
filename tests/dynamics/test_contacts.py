"""Ground contacts with friction (Brüdigam et al. 2023 §3.3-3.5, App. D) against physics:
resting penetration, no bounce, Coulomb sticking and sliding on a slope with the analytic
acceleration, rolling of a sphere (v = 5/7 v₀), complementarity, Jacobians vs finite
differences, and bad input."""
import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import MaximalModel, NewtonError, Simulation, StepSystem
from dynamics.maximal.step_system import quaternion_update
from dynamics.spec import Contact, SpecError
from tests.conftest import finite_difference_jacobian

G = 9.81


@pytest.fixture(scope="module")
def box_drop():
    return Simulation(models.box_drop(), dt=0.01).run(100, progress=False)


def test_box_drop_rests_on_the_ground(box_drop):
    """2023 Fig. 7d: 0.5 m cube dropped from 0.4 m, Δt = 0.01 s: no penetration, no bounce."""
    traj = box_drop
    assert traj.contact_distance.min() > -1e-4          # paper: 43 µm above; MuJoCo: -2.7 cm
    assert traj.contact_distance.min() > -1e-9
    z = traj.x[:, 0, 2]
    land = int(np.argmax(z <= 0.25 + 1e-6))
    assert 0 < land < 40
    np.testing.assert_allclose(z[land:], 0.25, atol=1e-8)   # stays down: no bounce
    e = traj.energy
    # (the first step's O(Δt²) change is the start-up of the time-point velocity average)
    assert np.all(np.diff(e[1:]) < 1e-6)                # the impact never adds energy
    assert e[-1] == pytest.approx(1.0 * G * 0.25, abs=1e-6)


def test_complementarity_at_convergence_is_below_tolerance(box_drop):
    assert box_drop.complementarity.max() <= 1e-10
    assert box_drop.contact_names == tuple(f"corner{i}" for i in range(8))


@pytest.mark.parametrize("friction, slides", [(0.5, False), (0.1, True)])
def test_box_on_slope_sticks_or_slides_with_coulomb_friction(friction, slides):
    theta = 0.3                                         # tan θ = 0.309
    traj = Simulation(models.box_on_slope(theta, friction), dt=0.01).run(80, progress=False)
    x = traj.x[:, 0, 0]
    if slides:
        a = np.polyfit(traj.t[5:], x[5:], 2)[0] * 2
        expected = G * (np.sin(theta) - friction * np.cos(theta))
        assert a == pytest.approx(expected, rel=1e-6)
    else:
        assert np.abs(x).max() < 1e-8
    assert traj.contact_distance.min() > -1e-9


def test_sphere_starts_rolling_at_five_sevenths():
    """A solid sphere sliding at v₀ ends up rolling at 5/7 v₀ (angular momentum about the
    contact point is conserved)."""
    traj = Simulation(models.sphere_chain(1, velocity=1.0), dt=0.005).run(200, progress=False)
    v_end = traj.v[-1, 0, 0]
    assert v_end == pytest.approx(5 / 7, rel=1e-3)
    w_end = traj.w[-1, 0]
    assert np.linalg.norm(w_end) * 0.25 == pytest.approx(v_end, rel=1e-3)   # v = ω r


def test_sphere_chain_runs_with_joints_and_contacts():
    traj = Simulation(models.sphere_chain(4), dt=0.01).run(60, progress=False)
    assert traj.contact_distance.min() > -1e-9
    assert traj.constraint_violation.max() < 1e-9
    assert traj.complementarity.max() <= 1e-10
    assert traj.iterations[1:].max() <= 50


def test_long_sphere_chain_passes_the_old_interior_point_stall():
    """Issue #6: ``sphere_chain(100)`` at Δt = 0.01 s jammed the interior point at t = 0.17 s
    (a friction pair ``β_i, η_i`` driven to the boundary together under a fixed barrier;
    fraction-to-the-boundary steps of ~1e-6). The predictor-corrector re-centres it."""
    n, mu, steps = 100, 0.5, 20
    traj = Simulation(models.sphere_chain(n, friction=mu), dt=0.01).run(steps, progress=False)
    assert traj.complementarity[1:].max() <= 1e-10
    assert traj.contact_distance.min() > -1e-9
    assert traj.constraint_violation.max() < 1e-9
    assert traj.iterations[1:].max() < 50
    # friction slows the sliding chain steadily (about μ g = 4.9 m/s² while it slides)
    vx = traj.v[:, :, 0].mean(axis=1)
    assert np.all(np.diff(vx) < 0.0)
    assert 0.0 < vx[-1] < 1.0 - 0.5 * mu * G * traj.t[-1]


def _contact_system(seed=0):
    spec = models.box_drop(height=0.01)
    m = MaximalModel(spec)
    S = StepSystem(m, 0.01)
    rng = np.random.default_rng(seed)
    x, q, v, w = m.initial_state()
    v, w = rng.normal(size=(1, 3)), rng.normal(size=(1, 3))
    S.begin(x + 0.01 * v, quaternion_update(q, w, 0.01), v, w)
    S.barrier = 0.3
    s = S.pack(v, w, np.zeros((1, 6)))
    for grp in S.contacts:
        s[grp.rows] = rng.uniform(0.2, 2.0, size=grp.rows.shape)
    return S, s


def test_contact_jacobian_matches_finite_differences():
    S, s = _contact_system()
    F = S.jacobian(s).to_dense()
    fd = finite_difference_jacobian(S.residual, s)
    np.testing.assert_allclose(F, fd, atol=1e-6 * max(1.0, np.abs(F).max()))


def test_contact_nodes_are_leaves_eliminated_first():
    S, _ = _contact_system()
    order = list(S.analysis.elimination_order)
    for grp in S.contacts:
        assert all(order.index(c) < order.index(b) for c, b in zip(grp.nodes, grp.body,
                                                                    strict=True))
    assert len(S.analysis.fill_blocks) == 0            # a tree: O(n) in bodies and contacts


def test_contact_errors():
    spec = models.box_drop()
    with pytest.raises(SpecError, match="contact 'c' is on unknown body 'ghost'"):
        type(spec)(spec.bodies, spec.joints, contacts=(Contact("c", "ghost"),))
    with pytest.raises(SpecError, match="friction coefficient must be finite and >= 0"):
        Contact("c", "box", friction=-0.1)
    with pytest.raises(SpecError, match="n_friction must be an even integer"):
        Contact("c", "box", friction=0.5, n_friction=3)
    with pytest.raises(SpecError, match="needs a positive radius"):
        Contact("c", "box", kind="sphere")
    buried = models.box_drop(height=-0.01)
    with pytest.raises(SpecError, match="inside the ground at t = 0"):
        Simulation(buried, dt=0.01)


def test_interior_point_iteration_cap_is_a_clear_error():
    sim = Simulation(models.box_drop(height=0.0), dt=0.01, max_iter=3)
    with pytest.raises(NewtonError, match="interior-point method did not converge"):
        sim.run(2, progress=False)


def test_mujoco_box_drop_penetrates_centimetres():
    """The same scene in MuJoCo with its default (soft) contacts sinks in by about 2.7 cm."""
    from comparisons.contact_bench import mujoco_box_drop
    pytest.importorskip("mujoco")
    res = mujoco_box_drop(steps=100)
    assert 0.01 < res["max_penetration"] < 0.05


def test_compiled_and_reference_kernels_agree_with_contacts():
    S, s = _contact_system(seed=3)
    m = S.model
    R = StepSystem(m, 0.01, kernels="reference")
    R.begin(S.x1, S.q1, S.v0, S.w0)
    R.barrier = S.barrier
    np.testing.assert_allclose(S.residual(s), R.residual(s), atol=1e-12)
    np.testing.assert_allclose(S.jacobian(s).data, R.jacobian(s).data, atol=1e-12)
    x = np.random.default_rng(0).normal(size=S.N)
    np.testing.assert_allclose(S.matvec(x), S.matrix.to_dense() @ x, atol=1e-12)


def test_quadruped_stands_under_pd_control():
    """Legged robot with foot contacts, hips and knees held by the PD controller hook."""
    from dynamics.maximal import pd_controller
    spec = models.quadruped()
    targets = {j: v[0] for j, v in spec.initial_positions.items() if j != "free"}
    sim = Simulation(spec, dt=0.002)
    traj = sim.run(150, controller=pd_controller(targets, kp=100.0, kd=2.0), progress=False)
    z = traj.x[:, 0, 2]
    assert np.abs(z - z[0]).max() < 0.02
    assert traj.contact_distance.min() > -1e-9
    assert traj.contact_distance[-1].max() < 1e-6       # all four feet on the ground
    assert traj.constraint_violation.max() < 1e-9
    assert traj.complementarity.max() <= 1e-10


def test_factor_resolve_and_solve_linear_agree():
    """``solve_linear(s, f, refine=...)`` = ``factor(s)`` then ``resolve(-f)``; the refined
    solve has a linear residual no larger than the plain one."""
    S, s = _contact_system(seed=5)
    f = S.residual(s)
    plain = S.solve_linear(s, f, refine=False)
    refined = S.solve_linear(s, f)
    S.factor(s)
    np.testing.assert_allclose(S.resolve(-f, refine=False), plain, rtol=0, atol=0)
    F = S.matrix.to_dense()
    np.testing.assert_allclose(F @ plain, -f, atol=1e-9)
    # both residuals are at rounding level: compare them within a few ulps of ||F|| ||x||
    # (a fixed 1e-15 failed or passed depending on whether numba compiled the kernels in
    # the process or loaded them from its cache: same algorithm, different rounding)
    ulps = 8 * np.finfo(float).eps * np.abs(F).sum(axis=1).max() * np.abs(plain).max()
    assert np.abs(F @ refined + f).max() <= np.abs(F @ plain + f).max() + ulps


def test_compiled_ground_kernels_match_the_numpy_reference_on_the_sphere_chain():
    spec = models.sphere_chain(3)
    m = MaximalModel(spec)
    rng = np.random.default_rng(2)
    x, q, v, w = m.initial_state()
    v, w = rng.normal(size=v.shape), rng.normal(size=w.shape)
    lam = rng.normal(size=(len(m.joints), 6))
    out = []
    for kernels in ("compiled", "reference"):
        S = StepSystem(m, 0.01, kernels=kernels)
        S.begin(x + 0.01 * v, quaternion_update(q, w, 0.01), v, w)
        S.barrier = 0.1
        s = S.pack(v, w, lam)
        for grp in S.contacts:
            s[grp.rows] = np.linspace(0.3, 1.7, grp.rows.size).reshape(grp.rows.shape)
        out.append((S.residual(s), S.jacobian(s).data.copy()))
    np.testing.assert_allclose(out[0][0], out[1][0], atol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], atol=1e-12)


def test_benchmark_scaling_summary_fits_slope_and_affine_cost():
    from comparisons.contact_bench import affine_fit, scaling_summary
    rows = [{"n": n, "maximal_status": "ok", "maximal_s": 1e-3 * (300 + 20 * n),
             "maximal_us_per_step": 300 + 20 * n, "maximal_us_per_iteration": 100 + 5 * n,
             "maximal_iterations": 3.0, "mujoco_s": 1e-6 * n * n} for n in (10, 20, 50, 100)]
    a, b = affine_fit(rows)
    assert (a, b) == (pytest.approx(100), pytest.approx(5))
    summ = scaling_summary(rows)
    assert summ["slope_mujoco"] == pytest.approx(2.0)
    assert 0.5 < summ["slope_step"] < 1.0
    assert summ["iterations_per_step"] == {10: 3.0, 20: 3.0, 50: 3.0, 100: 3.0}
