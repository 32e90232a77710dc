"""The compiled joint forces (:mod:`dynamics.maximal.force_kernels`: rate maps, spring
coordinates, joint wrenches, damper blocks) against their NumPy reference
(:mod:`dynamics.maximal.joints`, :meth:`StepSystem.begin`) for every joint type, and the whole
compiled step of mechanisms with springs, dampers and joint forces against the Python-driven
step (``StepSystem.begin`` + Newton) over whole trajectories."""
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

from dynamics import models
from dynamics import quaternion as quat
from dynamics.maximal import MaximalModel, Simulation, StepSystem, pd_controller
from dynamics.maximal import force_kernels as fk
from dynamics.maximal import joints as jt
from dynamics.models import rod
from dynamics.spec import JOINT_TYPES, SELECTION_ROWS, WORLD, Joint, MechanismSpec
from dynamics.urdf import load_urdf

ALL_TYPES = sorted(JOINT_TYPES)
CORPUS = Path(__file__).resolve().parent / "urdf_corpus"


def chain(joint_type: str, spring=0.0, damper=0.0, seed=0) -> MechanismSpec:
    """Body ``a`` on the world and body ``b`` on ``a``, both by ``joint_type`` with random
    points, axes and orientation offsets, springs with random rest coordinates."""
    rng = np.random.default_rng(seed + sum(map(ord, joint_type)))
    joints = []
    for name, parent, child in (("j0", WORLD, "a"), ("j1", "a", "b")):
        dof = 6 - sum(SELECTION_ROWS[s] for s in JOINT_TYPES[joint_type])
        joints.append(Joint(name, joint_type, parent, child, rng.normal(size=3) * 0.3,
                            rng.normal(size=3) * 0.3, rng.normal(size=3),
                            quat.normalize(rng.normal(size=4)), spring=spring, damper=damper,
                            spring_offset=rng.normal(size=dof) * 0.2 if spring else None,
                            actuated=dof > 0))
    return MechanismSpec((rod("a"), rod("b", 0.7, 2.0)), tuple(joints))


def random_poses(nb, rng):
    return (rng.normal(size=(nb, 3)), quat.normalize(rng.normal(size=(nb, 4))),
            rng.normal(size=(nb, 3)), rng.normal(size=(nb, 3)))


def _with_dampers(spec, damper):
    return dataclasses.replace(spec, joints=tuple(dataclasses.replace(j, damper=damper)
                                                  for j in spec.joints))


# -- the kernels against the NumPy reference -----------------------------------------------------
@pytest.mark.parametrize("joint_type", ALL_TYPES)
def test_rate_map_and_coordinates_kernels_match_reference(joint_type):
    """``rate_map_kernel`` and ``coordinates_kernel`` equal :func:`joints.rate_map` and
    :func:`joints.minimal_coordinates` at random poses, for a world-attached joint (parent
    -1) and a joint between two bodies."""
    js = MaximalModel(chain(joint_type)).joints
    rng = np.random.default_rng(11)
    for _ in range(5):
        x, q, _, _ = random_poses(2, rng)
        ends = jt.endpoint_states(js, x, q)
        R = np.full((2, 6, 12), np.nan)
        fk.rate_map_kernel(x, q, js.parent, js.child, js.p_b, js.q_off, js.free, js.dof,
                           js.rotational_dof, R)
        np.testing.assert_allclose(R, jt.rate_map(js, *ends), rtol=0, atol=1e-14)
        c = np.full((2, 6), np.nan)
        fk.coordinates_kernel(x, q, js.parent, js.child, js.p_a, js.p_b, js.q_off, js.free,
                              js.translational_dof, js.rotational_dof, js.rot_axis, c)
        np.testing.assert_allclose(c, jt.minimal_coordinates(js, *ends), rtol=0, atol=1e-14)


def test_coordinates_kernel_at_small_and_half_turn_rotations():
    """The rotation vector's small-angle branch and the sign choice ``s >= 0`` of the angle
    near a half turn, as the reference."""
    for joint_type in ("revolute", "spherical"):
        js = MaximalModel(chain(joint_type)).joints
        for angle in (0.0, 1e-14, 1e-7, np.pi - 1e-9, np.pi + 1e-9, -np.pi + 1e-6):
            qrel = quat.from_axis_angle(js.rot_axis[0], angle)
            q = np.array([quat.multiply(js.q_off[0], qrel), quat.IDENTITY])
            x = np.zeros((2, 3))
            c = np.empty((2, 6))
            fk.coordinates_kernel(x, q, js.parent, js.child, js.p_a, js.p_b, js.q_off,
                                  js.free, js.translational_dof, js.rotational_dof,
                                  js.rot_axis, c)
            ref = jt.minimal_coordinates(js, *jt.endpoint_states(js, x, q))
            np.testing.assert_allclose(c[0], ref[0], rtol=1e-14, atol=1e-15)


def _applied_compiled(S: StepSystem, x1, q1, forces):
    """:func:`force_kernels.applied_forces_kernel` on ``S``'s model, with a copy of ``S``'s
    matrix buffer; returns (external, damping, diag_const, coupling, data)."""
    m, js = S.model, S.model.joints
    nb, nj = m.n_bodies, len(js)
    gravity = np.zeros((nb, 6))
    gravity[:, :3] = m.mass[:, None] * m.gravity
    damped = bool(np.any(js.damper > 0))
    out = (np.full((nb, 6), np.nan), np.full((nj if damped else 0, 12, 12), np.nan),
           np.full((nb, 6, 6), np.nan), np.full((len(S._damped_pairs), 2, 36), np.nan),
           np.full_like(S.matrix.data, 7.0))
    fk.applied_forces_kernel(
        x1, q1, gravity, np.zeros((0, 6)) if forces is None else forces, forces is not None,
        js.parent, js.child, js.p_a, js.p_b, js.q_off, js.free, js.dof, js.translational_dof,
        js.rotational_dof, js.rot_axis, js.spring, js.spring_offset, js.damper,
        S._damped_pairs.astype(np.int64), S._coupling_dst, np.zeros((nj, 6, 12)), *out)
    return out


@pytest.mark.parametrize("joint_type", ALL_TYPES)
@pytest.mark.parametrize("case", ["spring_damper_forces", "spring", "damper", "forces"])
def test_applied_forces_kernel_matches_begin(joint_type, case):
    """External wrenches, damper matrices, the damper blocks of the body diagonals and the
    body-body coupling blocks in the matrix buffer equal :meth:`StepSystem.begin` (NumPy)."""
    spring = 3.0 if "spring" in case else 0.0
    damper = 0.7 if "damper" in case else 0.0
    spec = chain(joint_type, spring=spring, damper=damper)
    S = StepSystem(MaximalModel(spec), 0.01, kernels="reference")
    rng = np.random.default_rng(5)
    forces = rng.normal(size=(2, 6)) if "forces" in case else None
    for _ in range(3):
        x, q, v, w = random_poses(2, rng)
        S.matrix.data[:] = 7.0
        S.begin(x, q, v, w, joint_forces=forces)
        ext, damping, diag, coupling, data = _applied_compiled(S, x, q, forces)
        scale = max(1.0, np.abs(S.external).max())
        np.testing.assert_allclose(ext, S.external, rtol=0, atol=1e-13 * scale)
        np.testing.assert_allclose(diag, S._diag_const, rtol=0, atol=1e-13)
        if S.damping is None:
            assert damping.shape[0] == 0
            continue
        np.testing.assert_allclose(damping, S.damping, rtol=0, atol=1e-13)
        np.testing.assert_allclose(coupling, S._coupling, rtol=0, atol=1e-13)
        np.testing.assert_allclose(data, S.matrix.data, rtol=0, atol=1e-13)
        if joint_type != "fixed" and damper:
            assert np.abs(coupling).max() > 0.1          # the blocks are really there


def test_applied_forces_kernel_with_shared_body_pairs():
    """Two damped joints between the same two bodies share the coupling entries: their
    blocks add up in the matrix buffer, as ``np.add.at`` in the reference."""
    a, b = rod("a"), rod("b")
    joints = (Joint("j0", "spherical", WORLD, "a", [0, 0, 0], [0, 0, 0.5], damper=0.4),
              Joint("j1", "revolute", "a", "b", [0, 0, -0.5], [0, 0, 0.5], [1, 0, 0],
                    damper=0.9, spring=2.0),
              Joint("j2", "cylindrical_free", "a", "b", [0, 0, -0.5], [0, 0, 0.5], [1, 0, 0],
                    damper=0.3))
    S = StepSystem(MaximalModel(MechanismSpec((a, b), joints)), 0.01, kernels="reference")
    rng = np.random.default_rng(8)
    x, q, v, w = random_poses(2, rng)
    S.matrix.data[:] = 7.0
    S.begin(x, q, v, w)
    assert len(S._damped_pairs) == 2
    ext, damping, diag, coupling, data = _applied_compiled(S, x, q, None)
    np.testing.assert_allclose(data, S.matrix.data, rtol=0, atol=1e-13)
    np.testing.assert_allclose(ext, S.external, rtol=0, atol=1e-13)
    np.testing.assert_allclose(diag, S._diag_const, rtol=0, atol=1e-13)


# -- whole compiled steps against the Python-driven step ----------------------------------------
#: Agreement of the compiled and the Python-driven step over 100 steps. Positions and
#: orientations agree to rounding (measured <= 1.1e-14 relative). Velocities solve the
#: constraints of z₂ = z₁ + Δt ż₁, so a rounding difference δ of the positions (1e-16 per step,
#: a few 1e-15 after 100 steps) shows as δ/Δt in the velocities (measured <= 3.7e-12 of the
#: velocity scale at Δt = 1 ms) and δ/Δt² in the multipliers (measured <= 3.4e-9 N on the
#: humanoid); the compiled gravity-only step and the Python path differ by as much (same
#: measurements on the undamped robots).
POSITION_RTOL, VELOCITY_RTOL, MULTIPLIER_RTOL = 1e-12, 2e-11, 2e-8


def _differences(spec, steps=100, dt=0.01, controller=None, forces=None):
    """Run ``spec`` with the whole compiled step and with the Python-driven step
    (``_compiled_step = False``: ``StepSystem.begin`` in NumPy, then the fused Newton);
    returns the largest differences of positions and orientations (relative), velocities
    (relative to the velocity scale), multipliers (relative to ``max(1, |λ|)``) and the mean
    Newton iterations per step."""
    runs = []
    for compiled in (True, False):
        sim = Simulation(spec, dt=dt)
        assert sim._compiled_step
        sim._compiled_step = compiled
        xs, qs, vs, ws, lams, its = [sim.x.copy()], [sim.q.copy()], [], [], [], []
        for k in range(steps):
            if controller is not None:
                its.append(sim.step(sim._forces(controller(sim))))
            else:
                its.append(sim.step(None if forces is None else forces(k)))
            for a, b in ((xs, sim.x), (qs, sim.q), (vs, sim.v), (ws, sim.w), (lams, sim._lam)):
                a.append(b.copy())
        runs.append([np.array(a) for a in (xs, qs, vs, ws, lams, its)])
    (x, q, v, w, lam, it), (xr, qr, vr, wr, lamr, itr) = runs
    vscale = max(np.abs(vr).max(), np.abs(wr).max())
    return {"position": max(np.abs(x - xr).max() / np.abs(xr).max(), np.abs(q - qr).max()),
            "velocity": max(np.abs(v - vr).max(), np.abs(w - wr).max()) / vscale,
            "multiplier": np.abs(lam - lamr).max() / max(1.0, np.abs(lamr).max()),
            "iterations": (it.mean(), itr.mean())}


def _check(d, same_iterations=True):
    assert d["position"] <= POSITION_RTOL, d
    assert d["velocity"] <= VELOCITY_RTOL, d
    assert d["multiplier"] <= MULTIPLIER_RTOL, d
    if same_iterations:
        assert d["iterations"][0] == d["iterations"][1], d


def _sprung(spec, spring=3.0, damper=0.2):
    joints = tuple(dataclasses.replace(j, spring=spring, damper=damper,
                                       spring_offset=0.1 * np.ones(j.dof)) for j in spec.joints)
    return dataclasses.replace(spec, joints=joints)


MODELS = {
    "pendulum20_damped": lambda: models.pendulum(20, damper=0.3),
    "spherical_damped": lambda: models.pendulum(4, joint="spherical", damper=0.3),
    "sprung_pendulum": lambda: _sprung(models.pendulum(3)),
    "sprung_spherical": lambda: _sprung(models.pendulum(3, joint="spherical")),
    "springs_only": lambda: _sprung(models.pendulum(3), damper=0.0),
    "fourbar_damped": lambda: _with_dampers(models.fourbar(), 0.5),
    "double_fourbar_damped": lambda: _with_dampers(models.double_fourbar(), 0.2),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_step_equals_python_step(name):
    _check(_differences(MODELS[name]()))


@pytest.mark.parametrize("joint_type", sorted(t for t in JOINT_TYPES if t != "fixed"))
def test_compiled_step_equals_python_step_for_every_joint_type(joint_type):
    """Strong springs and dampers on a world joint and a body-body joint of every type,
    moving from random coordinates (dt = 1 ms)."""
    spec = chain(joint_type, spring=20.0, damper=5.0)
    rng = np.random.default_rng(3)
    spec = spec.with_initial({j.name: rng.uniform(-0.5, 0.5, j.dof) for j in spec.joints},
                             {j.name: rng.uniform(-2, 2, j.dof) for j in spec.joints})
    _check(_differences(spec, dt=1e-3))


URDF_ROBOTS = {"arm7_flange_camera": False, "hand_16dof": False, "quadruped": True,
               "humanoid_33dof": True, "mobile_manipulator": False, "scara_joint_types": False}


@pytest.mark.parametrize("name", sorted(URDF_ROBOTS))
def test_compiled_step_equals_python_step_on_damped_urdf_robots(name):
    """The corpus robots with joint dampers, from random angles, dt = 1 ms (as ``comparisons
    urdf``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = load_urdf(CORPUS / f"{name}.urdf", floating_base=URDF_ROBOTS[name])
    assert any(j.damper > 0 for j in spec.joints)
    rng = np.random.default_rng(len(name))
    spec = spec.with_initial({j.name: rng.uniform(-0.3, 0.3, 1)
                              for j in spec.tree_joints if j.dof == 1})
    # the quadruped's extrapolated start is within the tolerance in some steps on one path
    # and just above it on the other (as for its compiled gravity-only step)
    _check(_differences(spec, dt=1e-3), same_iterations=name != "quadruped")


def test_compiled_step_equals_python_step_under_a_controller():
    """``run(controller=...)``: a PD controller on a damped, actuated chain (joint forces
    change every step)."""
    spec = models.pendulum(3, damper=0.1, actuated=True)
    ctrl = pd_controller(lambda t: {"joint1": 0.3 * np.sin(3 * t), "joint3": -0.2},
                         kp=20.0, kd=2.0)
    _check(_differences(spec, controller=ctrl))
    # an actuated chain without dampers or springs: forces only
    _check(_differences(models.pendulum(3, actuated=True), controller=ctrl))


def test_compiled_step_equals_python_step_with_broadcast_joint_forces():
    """``step(joint_forces)`` with a full array and with a row broadcast to every joint."""
    spec = _with_dampers(models.pendulum(3, joint="spherical"), 0.2)
    rng = np.random.default_rng(9)
    table = rng.normal(size=(100, 3, 6))
    _check(_differences(spec, forces=lambda k: table[k]))
    _check(_differences(spec, forces=lambda k: np.array([0.1, -0.2, 0.3, 0.0, 0.0, 0.0])))


def test_damped_steps_make_no_python_begin(monkeypatch):
    """With dampers, springs and joint forces a step does not go through
    ``StepSystem.begin`` (the Python path); with contacts it does."""
    sim = Simulation(_sprung(models.pendulum(3, actuated=True)), dt=0.01)

    def refuse(*args, **kwargs):
        raise AssertionError("begin called")

    monkeypatch.setattr(sim.system, "begin", refuse)
    sim.run(5, controller=lambda s: {"joint2": [0.3]}, progress=False)
    assert not Simulation(models.sphere_chain(2), dt=0.01)._compiled_step


def test_compiled_damped_step_reports_the_rate_limit():
    """``|ω| >= 2/Δt`` is refused by the compiled step as by the Python one."""
    from dynamics.maximal import NewtonError
    for compiled in (True, False):
        sim = Simulation(models.pendulum(2, damper=0.3), dt=0.01)
        sim._compiled_step = compiled
        sim.w[1] = [250.0, 0.0, 0.0]
        with pytest.raises(NewtonError, match="reduce the step size"):
            sim.step()


def test_projection_then_compiled_damped_step():
    """``set_state`` (an impulsive projection: ``begin(projection=True)`` clears the damper
    blocks of the matrix) between compiled damped steps: the next steps equal a fresh
    simulation from that state."""
    spec = models.pendulum(3, damper=0.4)
    sim = Simulation(spec, dt=0.01)
    sim.run(10, progress=False)
    state = (sim.x.copy(), sim.q.copy(), sim.v.copy(), sim.w.copy())
    sim.set_state(*state)
    a = sim.run(20, progress=False)
    ref = Simulation(spec, dt=0.01)
    ref._compiled_step = False
    ref.set_state(*state)
    b = ref.run(20, progress=False)
    assert np.abs(a.x - b.x).max() <= POSITION_RTOL * np.abs(b.x).max()
    assert np.abs(a.v - b.v).max() <= VELOCITY_RTOL * np.abs(b.v).max()



def test_damped_trees_factor_without_fill():
    """A damped joint's body-body edge closes a triangle with the joint, eliminated without
    fill in the order of the undamped graph (body, joint, parent body)."""
    for spec in (models.pendulum(20, damper=0.1),
                 _with_dampers(models.pendulum(5, joint="spherical"), 0.2)):
        an = Simulation(spec, dt=0.01).system.analysis
        assert len(an.fill_blocks) == 0
        assert int(an.sched_ptr[-1]) == len(spec.joints) - 1      # one update per pair
