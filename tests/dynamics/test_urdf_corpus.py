"""The URDF corpus (``tests/dynamics/urdf_corpus``, written by its ``generate.py``): realistic
robot descriptions and the failure classes of issue 24, loaded in both coordinate systems.

* Every file Pinocchio loads (``pin.buildModelFromUrdf``) either loads in ``dynamics.minimal``
  with RNEA, ABA and CRBA equal to Pinocchio's within 1e-10 relative at random states, and
  every URDF link frame (bodies, merged sensor / tool links) at Pinocchio's placement, or
  gives the expected clear error.
* Every file ``dynamics.maximal`` supports is simulated for 200 steps of 1 ms (and 400 of
  0.5 ms) under gravity from random joint angles: the joint constraints hold to 1e-9, and the
  world positions of all link frames follow the minimal-coordinate RK4 simulation of the same
  spec (Pinocchio's ABA + RK4 where the minimal model refuses the robot; since planar joints are
  supported (test_minimal_planar) every maximal case has a minimal reference). The maximal
  integrator is first order in ``dt`` (the five-link check in ``test_maximal_physics``); its
  difference to the fourth-order reference (≈ 5e-4 m after 0.1 s at 1 ms), must be
  below 2e-3 m and halve (ratio 1.8-2.2) with the step: a modelling difference would not
  shrink with ``dt``. Joint dampers are kept: both sides apply ``τ = -d q̇`` per joint
  coordinate (:func:`dynamics.minimal.joint_forces`; the maximal integrator applies
  ``-d R(z₁)ᵀ R(z₁) ż₁`` with ``R`` the rate map, ``R ż`` the joint rates, implicit in the
  step's velocity), exact at every RK4 stage on the reference side and to first order on the
  maximal side, so the damper's discretization difference is O(dt) and part of the error
  that must halve with the step.
* Singular bodies (issue 24 class 3: massless links between moving joints, point masses) are
  refused by ``dynamics.maximal`` by default; with ``singular_bodies="regularize"`` they get a
  stated small mass and inertia, and the modelling error is measured to be proportional to the
  ratio (``test_regularized_maximal_follows_minimal``).
* ``<mimic>`` joints load as independent joints with a warning, or are refused with
  ``mimic="error"``.
* Strongly damped joints (issue 24 class 5): the maximal Newton iteration converges
  quadratically (the damper's body-body Jacobian blocks, :mod:`dynamics.maximal.step_system`).
"""
from __future__ import annotations

import dataclasses
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dynamics import quaternion as quat
from dynamics.maximal import RegularizationWarning, Simulation, regularize_singular_bodies
from dynamics.minimal import (
    Model,
    TreeModelError,
    aba,
    crba,
    frame_poses,
    initial_state,
    random_configuration,
    rnea,
    simulate,
    to_spec_coordinates,
)
from dynamics.spec import SpecError
from dynamics.urdf import ROOT_JOINT, UrdfWarning, load_urdf
from tests.dynamics.minimal_trees import pin_configuration, rel_error

pin = pytest.importorskip("pinocchio")

CORPUS = Path(__file__).parent / "urdf_corpus"
TOL = 1e-10

#: Expected outcome per corpus file (default: loads, minimal and maximal work). ``load``,
#: ``minimal``, ``maximal``: regex of the expected error; ``floating``: also compare the
#: floating-base model (free-flyer root) with Pinocchio in minimal coordinates; ``pin``:
#: whether Pinocchio loads the file; ``warns``: regex of an expected UrdfWarning;
#: ``ref_substeps``: RK4 steps per step of the reference simulation (stiff dampers).
CASES: dict[str, dict] = {
    "arm7_flange_camera": {},
    "gripper_2finger_mimic": {"warns": "right_finger_joint.*mimic"},
    "hand_16dof": {"ref_substeps": 20},
    "quadruped": {"floating": True},
    "humanoid_33dof": {"floating": True},
    "mobile_manipulator": {},
    "mobile_base_planar": {},
    "floating_crate": {},
    "pan_tilt_zero_axis": {},
    "massless_fixed_chain": {},
    "industrial6": {},
    "scara_joint_types": {},
    "universal_wrist_arm": {
        "maximal": r"body 'wrist_cross' has no mass; it sits between joints \['wrist_1'\].*"
                   r"\['wrist_2'\]"},
    "point_mass_double_pendulum": {"maximal": "body 'bob1' has a singular inertia.*'swing1'"},
    "coaxial_massless": {
        "minimal": r"joints \['spin_outer'\].*singular articulated inertia.*spinner_frame",
        "maximal": "body 'spinner_frame' has no mass"},
    "single_link": {"load": "single link 'body' and no joints.*floating_base=True",
                    "floating": True},
    "massless_leaf": {"load": "link 'probe' has no mass.*'probe_rotation'"},
    "empty_robot": {"load": "'empty_robot' has no <link> elements", "pin": False},
}


def _path(name: str) -> str:
    return str(CORPUS / f"{name}.urdf")


def _load(name: str, **kw):
    """``load_urdf`` of a corpus file, checking its expected warning (if any)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UrdfWarning)
        spec = load_urdf(_path(name), **kw)
    messages = [str(w.message) for w in caught if issubclass(w.category, UrdfWarning)]
    if "warns" in CASES[name]:
        assert any(re.search(CASES[name]["warns"], m) for m in messages), messages
    else:
        assert not messages
    return spec


def _pin_model(name: str, floating: bool = False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if floating:
            return pin.buildModelFromUrdf(_path(name), pin.JointModelFreeFlyer())
        return pin.buildModelFromUrdf(_path(name))


def test_corpus_is_complete():
    files = {p.stem for p in CORPUS.glob("*.urdf")}
    assert files == set(CASES)
    assert len(files) >= 15


@pytest.mark.parametrize("name", sorted(CASES))
def test_pinocchio_loads_or_refuses(name):
    if CASES[name].get("pin", True):
        _pin_model(name)
    else:
        with pytest.raises(ValueError):
            _pin_model(name)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if "load" in c))
def test_load_errors_name_the_problem(name):
    with pytest.raises(SpecError, match=CASES[name]["load"]):
        load_urdf(_path(name))


def test_mimic_error_option():
    """The gripper's right finger mimics the left one: ``mimic="error"`` refuses it naming both
    joints, the multiplier and the offset; the default loads it as an independent joint with
    a warning (``_load``, the ``warns`` entry of CASES)."""
    with pytest.raises(SpecError, match=r"joint 'right_finger_joint' mimics joint "
                                        r"'left_finger_joint' \(multiplier 1, offset 0\)"):
        load_urdf(_path("gripper_2finger_mimic"), mimic="error")
    spec = _load("gripper_2finger_mimic", mimic="independent")
    assert {"left_finger_joint", "right_finger_joint"} <= {j.name for j in spec.joints}


def _compare_with_pinocchio(model, pin_model, seed: int, n_states: int = 3):
    """RNEA, ABA, CRBA and all URDF link frames against Pinocchio at random states."""
    assert model.joint_names == list(pin_model.names[1:])
    assert model.nv == pin_model.nv
    rng = np.random.default_rng(seed)
    data, pd = model.create_data(), pin_model.createData()
    for _ in range(n_states):
        q = random_configuration(model, rng)
        qp = pin_configuration(model, pin_model, q)
        v, a, tau = rng.normal(size=(3, model.nv))
        M = pin.crba(pin_model, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        errors = {"rnea": rel_error(rnea(model, data, q, v, a), pin.rnea(pin_model, pd, qp, v, a)),
                  "aba": rel_error(aba(model, data, q, v, tau),
                                   pin.aba(pin_model, pd, qp, v, tau)),
                  "crba": rel_error(crba(model, data, q), M)}
        assert max(errors.values()) < TOL, errors
        positions, rotations = frame_poses(model, data, q)
        pin.framesForwardKinematics(pin_model, pd, qp)
        for k, frame in enumerate(model.frame_names):
            oMf = pd.oMf[pin_model.getFrameId(frame, pin.FrameType.BODY)]
            np.testing.assert_allclose(positions[k], oMf.translation, atol=1e-12, err_msg=frame)
            np.testing.assert_allclose(rotations[k], oMf.rotation, atol=1e-12, err_msg=frame)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if "load" not in c))
def test_minimal_matches_pinocchio(name):
    spec = _load(name)
    pin_model = _pin_model(name)
    # every URDF link is a frame, as in Pinocchio
    assert [f.name for f in spec.frames] == [
        f.name for f in pin_model.frames if f.type == pin.FrameType.BODY and f.name != "universe"]
    if "minimal" in CASES[name]:
        with pytest.raises(TreeModelError, match=CASES[name]["minimal"]):
            Model(spec)
        return
    _compare_with_pinocchio(Model(spec), pin_model, seed=len(name))


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.get("floating")))
def test_floating_base_minimal_matches_pinocchio(name):
    spec = _load(name, floating_base=True)
    _compare_with_pinocchio(Model(spec), _pin_model(name, floating=True), seed=len(name))


# -- maximal coordinates -----------------------------------------------------------------------
def _with_initial(spec, seed: int):
    """The spec (dampers kept) started from random angles / displacements in [-0.3, 0.3] on
    its one-coordinate joints (zero velocity)."""
    rng = np.random.default_rng(seed)
    init = {j.name: rng.uniform(-0.3, 0.3, 1) for j in spec.tree_joints if j.dof == 1}
    return dataclasses.replace(spec, initial_positions=init)


def _pinocchio_frames(name: str, spec, dt: float, steps: int) -> np.ndarray:
    """World positions (steps + 1, n_frames, 3) of the link frames in Pinocchio (ABA + RK4 on
    the manifold) from the spec's initial joint coordinates (one-coordinate joints only)."""
    model = _pin_model(name)
    data = model.createData()
    q = pin.neutral(model)
    for jn, val in spec.initial_positions.items():
        jm = model.joints[model.getJointId(jn)]
        q[jm.idx_q:jm.idx_q + jm.nq] = (val if jm.nq == 1
                                       else [np.cos(val[0]), np.sin(val[0])])
    v = np.zeros(model.nv)
    ids = [model.getFrameId(f.name, pin.FrameType.BODY) for f in spec.frames]
    out = []
    damping = np.zeros(model.nv)             # the spec's joint dampers, τ = -d v
    for j in spec.joints:
        if j.damper and model.existJointName(j.name):
            jm = model.joints[model.getJointId(j.name)]
            damping[jm.idx_v:jm.idx_v + jm.nv] = j.damper

    def acc(q, v):
        return pin.aba(model, data, q, v, -damping * v)

    for k in range(steps + 1):
        pin.framesForwardKinematics(model, data, q)
        out.append([data.oMf[i].translation.copy() for i in ids])
        if k == steps:
            break
        k1v, k1q = acc(q, v), v
        k2q = v + dt / 2 * k1v
        k2v = acc(pin.integrate(model, q, dt / 2 * k1q), k2q)
        k3q = v + dt / 2 * k2v
        k3v = acc(pin.integrate(model, q, dt / 2 * k2q), k3q)
        k4q = v + dt * k3v
        k4v = acc(pin.integrate(model, q, dt * k3q), k4q)
        q = pin.integrate(model, q, dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q))
        v = v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    return np.array(out)


def _reference_frames(name: str, spec, dt: float, steps: int) -> np.ndarray:
    """Link-frame positions of the RK4 reference at ``t = k dt``, integrated with
    ``ref_substeps`` RK4 steps per ``dt`` (stiff dampers: explicit RK4 is stable only for
    ``dt d / I <~ 2.8``; the hand's fingertips have ``d / I ≈ 7e3 /s``)."""
    sub = CASES[name].get("ref_substeps", 1)
    if "minimal" in CASES[name]:
        return _pinocchio_frames(name, spec, dt / sub, steps * sub)[::sub]
    model = Model(spec)
    q0, v0 = initial_state(model)
    res = simulate(model, q0, v0, dt / sub, steps * sub, "rk4", backend="auto")
    data = model.create_data()
    return np.array([frame_poses(model, data, q)[0] for q in res.q[::sub]])


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items()
                                        if "load" not in c and "maximal" not in c))
def test_maximal_simulation_follows_minimal(name):
    spec = _with_initial(_load(name), seed=len(name))
    dt, steps = 1e-3, 200                 # 0.2 s; and 400 steps of 0.5 ms
    ref = _reference_frames(name, spec, dt, steps)
    errors = []
    for refine in (1, 2):
        sim = Simulation(spec, dt=dt / refine)
        traj = sim.run(steps * refine, progress=False)
        assert traj.constraint_violation.max() <= 1e-9
        positions, _ = sim.model.frame_poses(traj.x[::refine], traj.q[::refine])
        errors.append(np.abs(positions - ref).max())
    assert errors[0] < 2e-3, errors
    assert 1.8 < errors[0] / errors[1] < 2.2, errors
    # the frame API of the simulation agrees with the trajectory arrays
    last = sim.model.frame_names[-1]
    np.testing.assert_allclose(sim.frame_pose(last)[0], positions[-1, -1], atol=1e-15)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if "maximal" in c))
def test_maximal_refusals_name_body_and_joints(name):
    spec = _load(name)
    with pytest.raises(SpecError, match=CASES[name]["maximal"]) as err:
        Simulation(spec, dt=1e-3)
    assert 'singular_bodies="regularize"' in str(err.value)        # the opt-in is named


# -- singular bodies regularized in maximal coordinates (issue 24 class 3) ---------------------
#: Corpus robots with singular bodies that the minimal model accepts (the ratio -> 0 limit of
#: the regularization exists).
REGULARIZED = sorted(n for n, c in CASES.items() if "maximal" in c and "minimal" not in c)


def _regularized(spec, dt: float, ratio: float):
    """``Simulation(..., singular_bodies="regularize")`` and its RegularizationWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RegularizationWarning)
        sim = Simulation(spec, dt=dt, singular_bodies="regularize", regularize_ratio=ratio)
    return sim, [str(w.message) for w in caught if issubclass(w.category, RegularizationWarning)]


def test_regularization_adds_the_stated_mass_and_inertia():
    """Each singular body of the universal wrist (the massless cross and yoke between wrist_1,
    wrist_2 and wrist_3) gets ratio x the smallest regular mass (wrist_3_link, 0.35 kg) and
    ratio x the smallest principal inertia (its 2.12917e-4 kg m²) as isotropic inertia, each
    named in a warning; regular bodies, joints and frames are unchanged."""
    spec = _load("universal_wrist_arm")
    ratio = 1e-4
    with pytest.warns(RegularizationWarning) as caught:
        reg = regularize_singular_bodies(spec, ratio)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    for body, msg in zip(("wrist_cross", "wrist_yoke"), messages, strict=True):
        assert re.search(rf"body '{body}'.*adding mass 3\.5e-05 kg and isotropic inertia "
                         r"2\.13e-08 kg m\^2 \(ratio 0\.0001", msg), msg
    for b, r in zip(spec.bodies, reg.bodies, strict=True):
        if b.singular:
            assert r.mass == pytest.approx(ratio * 0.35, rel=1e-15)
            np.testing.assert_allclose(r.inertia, ratio * 0.000212917 * np.eye(3), rtol=1e-12)
            assert not r.singular
        else:
            assert r is b
    assert all(a is b for a, b in zip(reg.joints + reg.frames, spec.joints + spec.frames,
                                      strict=True))
    # point masses keep their mass and get inertia only; the scale comes from the joint
    # offsets when no body is regular (0.5 kg x (0.5 m)² here)
    pm = _load("point_mass_double_pendulum")
    with pytest.warns(RegularizationWarning) as caught:
        reg = regularize_singular_bodies(pm, ratio)
    assert [re.search(r"body '(\w+)'.*adding mass 0 kg", str(w.message)).group(1)
            for w in caught] == ["bob1", "bob2"]
    assert [b.mass for b in reg.bodies] == [b.mass for b in pm.bodies]
    np.testing.assert_allclose(reg.bodies[0].inertia, ratio * 0.125 * np.eye(3), rtol=1e-12)
    # nothing to do: the spec itself, no warning
    arm = _load("arm7_flange_camera")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegularizationWarning)
        assert regularize_singular_bodies(arm, ratio) is arm
        assert Simulation(arm, dt=1e-3, singular_bodies="regularize").spec is arm
    with pytest.raises(ValueError, match="regularize_ratio"):
        regularize_singular_bodies(spec, 0.0)
    with pytest.raises(ValueError, match="singular_bodies"):
        Simulation(spec, dt=1e-3, singular_bodies="ignore")


def test_regularization_refuses_a_singular_articulated_inertia():
    """Two coaxial joints around a massless link: the minimal model refuses the spec (the
    split of the rotation between the joints is undetermined), so a small added inertia would
    decide the motion and the limit ratio -> 0 does not exist: refused as well."""
    with pytest.raises(SpecError, match=r"\['spinner_frame'\] cannot be regularized.*"
                                        r"singular articulated inertia"):
        Simulation(_load("coaxial_massless"), dt=1e-3, singular_bodies="regularize")


@pytest.mark.parametrize("name", REGULARIZED)
def test_regularized_maximal_follows_minimal(name):
    """Massless links between moving joints (universal wrist) and point masses simulated in
    maximal coordinates with ``singular_bodies="regularize"``, against the exact
    minimal-coordinate RK4 simulation (no regularization):

    * at ratio 1e-6 the tolerance logic of ``test_maximal_simulation_follows_minimal`` holds
      (error < 2e-3 m that halves with the step, constraints to 1e-9) with <= 4 Newton
      iterations per step (2 measured);
    * the regularization error alone, isolated by comparing maximal simulations at the same
      dt: ``d(r) = max |frames(r) - frames(1e-6)|`` is proportional to the ratio
      (d(1e-3) / d(1e-4) ≈ 10.1 expected; measured wrist 3.4e-6 / 3.4e-7 m, pendulum
      9.6e-6 / 9.6e-7 m over 0.1 s) and equals the modelling error of the regularized spec in
      the minimal model (exact RK4 vs RK4, no maximal integrator) to 5%: the O(dt) integrator
      error cancels, the O(ratio) model change is what remains.
    """
    spec = _with_initial(_load(name), seed=len(name))
    singular = [b.name for b in spec.bodies if b.singular]
    assert singular
    dt, steps = 1e-3, 100
    ref = _reference_frames(name, spec, dt, steps)
    errors = []
    for refine in (1, 2):
        sim, messages = _regularized(spec, dt / refine, 1e-6)
        assert [re.search(r"body '(\w+)'", m).group(1) for m in messages] == singular
        traj = sim.run(steps * refine, progress=False)
        assert traj.constraint_violation.max() <= 1e-9
        assert traj.iterations[1:].max() <= 4
        positions, _ = sim.model.frame_poses(traj.x[::refine], traj.q[::refine])
        errors.append(np.abs(positions - ref).max())
    assert errors[0] < 2e-3, errors
    assert 1.8 < errors[0] / errors[1] < 2.2, errors

    frames = {}
    for ratio in (1e-3, 1e-4, 1e-6):
        sim, _ = _regularized(spec, dt, ratio)
        traj = sim.run(steps, progress=False)
        assert traj.iterations[1:].max() <= 4
        frames[ratio] = sim.model.frame_poses(traj.x, traj.q)[0]
    d = {r: np.abs(frames[r] - frames[1e-6]).max() for r in (1e-3, 1e-4)}
    assert 9.0 < d[1e-3] / d[1e-4] < 11.2, d
    # the same modelling error in the minimal model (RK4 at the same dt, error ~1e-12 m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegularizationWarning)
        minimal = {r: _reference_frames(name, regularize_singular_bodies(spec, r), dt, steps)
                   for r in (1e-4, 1e-6)}
    model_error = np.abs(minimal[1e-4] - minimal[1e-6]).max()
    assert abs(d[1e-4] - model_error) < 0.05 * model_error, (d, model_error)


@pytest.mark.parametrize("scale", [1, 50, 500])
def test_damped_arm_newton_converges_quadratically(scale):
    """Issue 24 class 5 on the corpus 7-DOF arm with its dampers (0.1 N m s/rad) multiplied
    by ``scale`` (up to 50 N m s/rad, a time constant I/d of a few ms on the wrist): at
    dt = 1e-3 every step converges in <= 4 Newton iterations (2 measured), every iteration
    above the rounding floor reduces the residual by >= 1e3 (linear convergence with the
    former diagonal-only damper Jacobian: ratios 0.2-0.56, 21 iterations at scale 50 and no
    convergence at 500), and the error contracts quadratically, ``e_{k+1} <= C e_k²``."""
    spec = _load("arm7_flange_camera")
    rng = np.random.default_rng(len("arm7_flange_camera"))
    joints = tuple(dataclasses.replace(j, damper=scale * j.damper) for j in spec.joints)
    assert max(j.damper for j in joints) == pytest.approx(0.1 * scale)
    spec = dataclasses.replace(spec, joints=joints).with_initial(
        {j.name: rng.uniform(-0.3, 0.3, 1) for j in spec.tree_joints if j.dof == 1})
    sim = Simulation(spec, dt=1e-3)
    sim.reuse_factorization = False           # full Newton: a new Jacobian every iteration
    traj = sim.run(100, progress=False)
    assert traj.iterations[1:].max() <= 4
    assert traj.constraint_violation.max() <= 1e-9
    for h in traj.residual_history:
        above = h[:-1] > 1e-6                 # e_k well above the 1e-10 tolerance / rounding
        ratios = h[1:][above] / h[:-1][above]
        assert np.all(ratios < 1e-3), h
        assert np.all(h[1:][above] <= 10.0 * h[:-1][above] ** 2), h


# -- floating bases in maximal coordinates (issue 24 class 6) ----------------------------------
FLOATING = sorted(n for n, c in CASES.items() if c.get("floating") and "load" not in c)


def _floating_with_initial(name: str, seed: int, gravity=None):
    """The free-flyer model of a corpus robot from random joint angles in [-0.3, 0.3], a
    random base pose and random joint rates, base linear (world) and angular (base frame)
    velocity, dampers kept."""
    spec = _load(name, floating_base=True)
    rng = np.random.default_rng(seed)
    moving = [j for j in spec.tree_joints if j.dof == 1]
    pos = {j.name: rng.uniform(-0.3, 0.3, 1) for j in moving}
    vel = {j.name: rng.uniform(-1.0, 1.0, 1) for j in moving}
    pos[ROOT_JOINT] = np.r_[rng.uniform(-0.2, 0.2, 3), rng.uniform(-0.5, 0.5, 3)]
    vel[ROOT_JOINT] = np.r_[rng.uniform(-0.5, 0.5, 3), rng.uniform(-1.0, 1.0, 3)]
    spec = spec.with_initial(pos, vel)
    return spec if gravity is None else dataclasses.replace(spec, gravity=gravity)


@pytest.mark.parametrize("name", FLOATING)
def test_floating_base_initial_velocities_match_pinocchio(name):
    """The maximal model's initial body velocities (before the discrete projection) give every
    link frame Pinocchio's frame velocity (free-flyer, ``LOCAL_WORLD_ALIGNED``) at the same
    configuration and ``v``: the spec's rotational rates of a free flyer (and every 3-DOF
    rotation) are the child-frame relative angular velocity, as Pinocchio's ``v``."""
    _check_initial_state_against_pinocchio(_floating_with_initial(name, seed=len(name)),
                                           _pin_model(name, floating=True))


def _check_initial_state_against_pinocchio(spec, pin_model):
    """Link-frame positions and velocities of the maximal initial state == Pinocchio's at the
    minimal model's ``(q, v)`` of the spec's initial coordinates."""
    model = Model(spec)
    q0, v0 = initial_state(model)
    qp = pin_configuration(model, pin_model, q0)
    pd = pin_model.createData()
    pin.forwardKinematics(pin_model, pd, qp, v0)
    pin.updateFramePlacements(pin_model, pd)
    mm = Simulation(spec, dt=1e-3).model
    x, q, v, w = mm.initial_state()
    body = {b.name: i for i, b in enumerate(spec.bodies)}
    for f in spec.frames:
        if f.body not in body:          # a frame on the world
            continue
        i = body[f.body]
        R = quat.rotation_matrix(q[i])
        lin = v[i] + R @ np.cross(w[i], f.position)
        ref = pin.getFrameVelocity(pin_model, pd, pin_model.getFrameId(f.name, pin.BODY),
                                   pin.LOCAL_WORLD_ALIGNED)
        np.testing.assert_allclose(x[i] + R @ f.position,
                                   pd.oMf[pin_model.getFrameId(f.name, pin.BODY)].translation,
                                   atol=1e-12, err_msg=f.name)
        np.testing.assert_allclose(lin, ref.linear, atol=1e-12, err_msg=f.name)
        np.testing.assert_allclose(R @ w[i], ref.angular, atol=1e-12, err_msg=f.name)


def test_rotated_free_flyer_origin_matches_pinocchio():
    """A URDF ``floating`` joint whose origin is rotated (``rpy``): the spec's translational
    coordinates are the displacement in the *parent* frame and Pinocchio's ``q[:3]`` the one
    in the joint frame (``dynamics.minimal.FloatingJoint`` converts, ``R_off``); with both
    conventions applied the maximal initial state, the minimal model and Pinocchio put every
    frame at the same place with the same velocity, and the two simulations agree."""
    text = (CORPUS / "floating_crate.urdf").read_text()
    assert text.count('<origin xyz="0 0 1" rpy="0 0 0"/>') == 1
    text = text.replace('<origin xyz="0 0 1" rpy="0 0 0"/>',
                        '<origin xyz="0 0 1" rpy="0.3 -0.5 0.8"/>')
    spec = load_urdf(text)
    fj = next(j for j in spec.joints if j.type == "floating")
    assert abs(fj.orientation_offset[0]) < 0.99
    spec = spec.with_initial({fj.name: [0.1, -0.2, 0.3, 0.4, -0.3, 0.2]},
                             {fj.name: [0.5, -0.3, 0.2, 0.7, -1.0, 0.5]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pin_model = pin.buildModelFromXML(text)
    _check_initial_state_against_pinocchio(spec, pin_model)
    model = Model(spec)
    q0, _ = initial_state(model)
    # Pinocchio's translation is R_offᵀ (spec translation): the joint-frame displacement
    jm = next(j for j in model.joints if j.name == fj.name)
    np.testing.assert_allclose(q0[jm.q_slice][:3], quat.rotation_matrix(
        fj.orientation_offset).T @ [0.1, -0.2, 0.3], atol=1e-15)


@pytest.mark.parametrize("name", FLOATING)
def test_floating_base_maximal_follows_minimal(name):
    """100 steps of 1 ms under gravity from a random configuration with a moving base: joint
    constraints hold to 1e-9 and the link frames follow the minimal-coordinate RK4 simulation
    of the free-flyer model (itself equal to Pinocchio, ``test_floating_base_minimal_matches_
    pinocchio``) with the tolerance logic of ``test_maximal_simulation_follows_minimal``."""
    spec = _floating_with_initial(name, seed=len(name))
    dt, steps = 1e-3, 100
    model = Model(spec)
    q0, v0 = initial_state(model)
    res = simulate(model, q0, v0, dt, steps, "rk4", backend="auto")
    data = model.create_data()
    ref = np.array([frame_poses(model, data, q)[0] for q in res.q])
    errors = []
    for refine in (1, 2):
        sim = Simulation(spec, dt=dt / refine)
        traj = sim.run(steps * refine, progress=False)
        assert traj.constraint_violation.max() <= 1e-9
        assert traj.iterations[1:].max() <= 4
        positions, _ = sim.model.frame_poses(traj.x[::refine], traj.q[::refine])
        errors.append(np.abs(positions - ref).max())
    assert np.ptp(ref[:, 0], axis=0).max() > 0.03           # the base does move
    assert errors[0] < 2e-3, errors
    assert 1.8 < errors[0] / errors[1] < 2.2, errors


@pytest.mark.parametrize("name", FLOATING)
def test_floating_base_conserves_momentum_without_gravity(name):
    """No gravity, dampers on: the joint forces are internal, so the total linear momentum and
    the angular momentum about the centre of mass are conserved - by the robot (Pinocchio's
    centroidal momentum of the initial state, to the O(dt) of the discrete initial
    projection) and exactly by the variational integrator (discrete Noether theorem). With the
    interval rates ``(v_k, ω_k)`` of ``[t_k, t_k+1]`` and ``z_k`` at ``t_k`` the discrete
    momenta of the residual (20) are ``Σ m v_k`` and ``Σ (x_k - c_k) × m v_k + Q(q_k) π_k``
    with ``π_k = (Δt/2) (ω̄ₛ(ω_k) J ω_k + ω_k × J ω_k)`` (``ω̄ₛ = sqrt(4/Δt² - |ω|²)``, eq. 13):
    the translational rows telescope ``m (v_k - v_k-1)`` and the rotational ones
    ``π_k - Q(q_k)ᵀ Q(q_k-1) π_k-1``; forces and constraint wrenches taken at ``z_k`` have zero
    resultant and moment. Both must be constant to 1e-10 relative over 300 steps, while the
    kinetic energy decays (the dampers act)."""
    spec = _floating_with_initial(name, seed=len(name), gravity=np.zeros(3))
    dt = 1e-3
    sim = Simulation(spec, dt=dt)
    traj = sim.run(300, progress=False)
    m, J = sim.model.mass, sim.model.inertia
    P = np.einsum("i,tij->tj", m, traj.v)
    c = np.einsum("i,tij->tj", m, traj.x) / m.sum()
    ws = np.sqrt(4.0 / dt**2 - np.einsum("tij,tij->ti", traj.w, traj.w))
    Jw = np.einsum("ibc,tic->tib", J, traj.w)
    pi = 0.5 * dt * (ws[..., None] * Jw + np.cross(traj.w, Jw))
    L = (np.einsum("i,tij->tj", m, np.cross(traj.x - c[:, None], traj.v))
         + np.einsum("tiab,tib->ta", quat.rotation_matrix(traj.q), pi))
    assert np.abs(P - P[0]).max() <= 1e-10 * np.linalg.norm(P[0])
    assert np.abs(L - L[0]).max() <= 1e-10 * np.linalg.norm(L[0])
    assert traj.kinetic_energy[-1] < 0.999 * traj.kinetic_energy[0]
    # the same momentum as the robot's (continuous) centroidal momentum in Pinocchio
    model, pin_model = Model(spec), _pin_model(name, floating=True)
    q0, v0 = initial_state(model)
    hg = pin.computeCentroidalMomentum(pin_model, pin_model.createData(),
                                       pin_configuration(model, pin_model, q0), v0)
    assert rel_error(P[0], hg.linear) < 5e-3
    assert rel_error(L[0], hg.angular) < 5e-3


# -- order of accuracy in dt (issue 24 acceptance) ---------------------------------------------
ORDER_STEPS = (4e-3, 2e-3, 1e-3, 5e-4)
ORDER_HORIZON, ORDER_SAMPLE, ORDER_REFERENCE = 0.1, 4e-3, 2.5e-4


def _order_case(name: str):
    """The arm (fixed base, dampers on) from random angles at rest, or the quadruped (free
    flyer, dampers on) from random angles with a moving base."""
    if name == "quadruped":
        return _floating_with_initial(name, seed=3)
    return _with_initial(_load(name), seed=3)


def _order_reference(spec):
    """Link-frame positions every ``ORDER_SAMPLE`` s up to ``ORDER_HORIZON`` from the minimal
    model integrated by RK4 at ``ORDER_REFERENCE`` (error ~1e-14 m) and the model, result."""
    model = Model(spec)
    q0, v0 = initial_state(model)
    res = simulate(model, q0, v0, ORDER_REFERENCE,
                   int(round(ORDER_HORIZON / ORDER_REFERENCE)), "rk4", backend="auto")
    data = model.create_data()
    stride = int(round(ORDER_SAMPLE / ORDER_REFERENCE))
    return np.array([frame_poses(model, data, q)[0] for q in res.q[::stride]]), model, res


def _order_errors(spec, ref, start=None):
    """Max link-frame error against ``ref`` for every step of ``ORDER_STEPS``; ``start(dt)``
    optionally gives the initial body velocities ``(v, w)``."""
    errors = []
    for dt in ORDER_STEPS:
        sim = Simulation(spec, dt=dt)
        if start is not None:
            sim.set_state(sim.x, sim.q, *start(dt))
        traj = sim.run(int(round(ORDER_HORIZON / dt)), progress=False)
        s = int(round(ORDER_SAMPLE / dt))
        positions, _ = sim.model.frame_poses(traj.x[::s], traj.q[::s])
        errors.append(np.abs(positions - ref).max())
    return np.array(errors), np.polyfit(np.log(ORDER_STEPS), np.log(errors), 1)[0]


@pytest.mark.parametrize("name", ["arm7_flange_camera", "quadruped"])
def test_maximal_order_of_accuracy_is_one(name):
    """The maximal simulation started from the spec's state is first order in dt against a
    high-accuracy minimal reference: the fitted slope of log(max link-frame error over 0.1 s)
    against log(dt) at dt = 4, 2, 1, 0.5 ms is 1.00 (measured 0.998 on the arm, errors
    8.9e-4 .. 1.1e-4 m; 1.000 on the quadruped, 2.1e-3 .. 2.7e-4 m). Two first-order sources: the
    integrator's velocity ż_k belongs to the interval [t_k, t_k+1] (eq. 11, 17) but is started
    from the spec's velocity at t_0, and the dampers act through the interval velocity
    (backward-Euler in the velocity, L-stable for the stiff finger dampers)."""
    spec = _order_case(name)
    ref, _, _ = _order_reference(spec)
    errors, slope = _order_errors(spec, ref)
    assert 0.9 < slope < 1.1, (errors, slope)
    assert errors[2] < 2e-3, errors


def test_maximal_undamped_with_midpoint_start_is_second_order():
    """Without dampers the scheme is a leapfrog in (z_k, ż_{k+1/2}): started from the exact
    velocities at t = dt/2 (the reference's, mapped to bodies) instead of those at t = 0, the
    same integrator is second order (slope measured 1.98, errors 1.1e-6 .. 1.8e-8 m, against
    slope 1.00 and 9.1e-4 .. 1.1e-4 m from the t = 0 velocities). The first
    order of the default start is therefore an initial-velocity offset of dt/2, not a
    property of the discrete dynamics (20)."""
    spec = _with_initial(_load("arm7_flange_camera"), seed=3)
    spec = dataclasses.replace(spec, joints=tuple(dataclasses.replace(j, damper=0.0)
                                                  for j in spec.joints))
    ref, model, res = _order_reference(spec)

    def start(dt):
        k = int(round(dt / 2 / ORDER_REFERENCE))
        pos, vel = to_spec_coordinates(model, res.q[k], res.v[k])
        _, _, v, w = Simulation(spec.with_initial(pos, vel), dt=dt).model.initial_state()
        return v, w

    errors, slope = _order_errors(spec, ref, start)
    assert 1.8 < slope < 2.2, (errors, slope)
