"""
Order of accuracy of the maximal-coordinate simulation on URDF robots
=====================================================================

Two robots of the URDF corpus (``tests/dynamics/urdf_corpus``): the fixed-base 7-DOF arm with
a flange camera and the floating-base quadruped (free-flyer root), both with their URDF joint
dampers, start from random joint angles (the quadruped also with a moving base). Each is
simulated for 0.1 s by the maximal-coordinate variational integrator
(:class:`dynamics.maximal.Simulation`) at four step sizes ``dt`` = 4, 2, 1 and 0.5 ms, and the
largest world-position error of any URDF link frame (bodies and merged sensor / tool links)
against a high-accuracy reference is plotted against ``dt``. The reference is the
minimal-coordinate model of the same spec (:class:`dynamics.minimal.Model`, equal to
Pinocchio's ABA to 1e-15) integrated by fourth-order Runge-Kutta-Munthe-Kaas at 0.25 ms, about
1e-14 m from the exact solution.

**Why first order.** The integrator is a discrete Lagrange-d'Alembert scheme (Brüdigam et al.
2023, eq. 11, 17, 20): its velocity ``ż_k`` belongs to the *interval* ``[t_k, t_k+1]``, a
midpoint quantity, but the simulation starts it from the spec's velocity at ``t_0``, an offset
of ``dt / 2`` in time that shifts the whole trajectory by ``O(dt)``. And the joint dampers act
through the interval velocity, i.e. backward Euler in the velocity (L-stable, which the stiff
finger dampers of the hand need), again first order. Both robots therefore show slope 1.

**The second-order variant.** Without dampers the scheme is a leapfrog in
``(z_k, ż_{k+1/2})``: started from the exact velocity at ``t = dt / 2`` (here read from the
reference and mapped to body velocities) instead of that at ``t = 0``, the same integrator is
second order, slope 2, with errors four orders of magnitude smaller at 1 ms. The first order of
the default start is a start-up offset, not a property of the discrete dynamics.
``tests/dynamics/test_urdf_corpus.py`` asserts these slopes.
"""

import dataclasses
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dynamics.maximal import Simulation
from dynamics.minimal import (
    Model,
    frame_poses,
    initial_state,
    simulate,
    to_spec_coordinates,
)
from dynamics.urdf import ROOT_JOINT, load_urdf


def corpus_dir() -> Path:
    """``tests/dynamics/urdf_corpus`` of the repository (``docs/examples`` is two levels
    below it; sphinx-gallery sets ``__file__``)."""
    here = Path(globals().get("__file__", "docs/examples/x.py")).resolve().parent
    for base in (here, *here.parents, Path.cwd(), *Path.cwd().parents):
        if (base / "tests" / "dynamics" / "urdf_corpus").is_dir():
            return base / "tests" / "dynamics" / "urdf_corpus"
    raise FileNotFoundError("tests/dynamics/urdf_corpus not found")


STEPS = np.array([4e-3, 2e-3, 1e-3, 5e-4])
HORIZON, SAMPLE, REFERENCE_DT = 0.1, 4e-3, 2.5e-4
CORPUS = corpus_dir()


def arm(damped: bool = True):
    """The 7-DOF arm from random angles in [-0.3, 0.3] at rest."""
    spec = load_urdf(CORPUS / "arm7_flange_camera.urdf")
    rng = np.random.default_rng(3)
    spec = spec.with_initial({j.name: rng.uniform(-0.3, 0.3, 1)
                              for j in spec.tree_joints if j.dof == 1})
    if not damped:
        spec = dataclasses.replace(spec, joints=tuple(dataclasses.replace(j, damper=0.0)
                                                      for j in spec.joints))
    return spec


def quadruped():
    """The free-flyer quadruped from random joint angles and rates, base pose and twist."""
    spec = load_urdf(CORPUS / "quadruped.urdf", floating_base=True)
    rng = np.random.default_rng(3)
    moving = [j for j in spec.tree_joints if j.dof == 1]
    pos = {j.name: rng.uniform(-0.3, 0.3, 1) for j in moving}
    vel = {j.name: rng.uniform(-1.0, 1.0, 1) for j in moving}
    pos[ROOT_JOINT] = np.r_[rng.uniform(-0.2, 0.2, 3), rng.uniform(-0.5, 0.5, 3)]
    vel[ROOT_JOINT] = np.r_[rng.uniform(-0.5, 0.5, 3), rng.uniform(-1.0, 1.0, 3)]
    return spec.with_initial(pos, vel)


def reference(spec):
    """Link-frame positions every ``SAMPLE`` s from the minimal model (RKMK4 at
    ``REFERENCE_DT``), the model and the simulation result."""
    model = Model(spec)
    q0, v0 = initial_state(model)
    res = simulate(model, q0, v0, REFERENCE_DT, int(round(HORIZON / REFERENCE_DT)), "rk4",
                   backend="auto")
    data = model.create_data()
    stride = int(round(SAMPLE / REFERENCE_DT))
    return np.array([frame_poses(model, data, q)[0] for q in res.q[::stride]]), model, res


def errors(spec, ref, start=None):
    """Max link-frame error against ``ref`` at each step size; ``start(dt)`` optionally gives
    the initial body velocities ``(v, w)``. Returns the errors and the fitted log-log slope."""
    out = []
    for dt in STEPS:
        sim = Simulation(spec, dt=dt)
        if start is not None:
            sim.set_state(sim.x, sim.q, *start(dt))
        traj = sim.run(int(round(HORIZON / dt)), progress=False)
        s = int(round(SAMPLE / dt))
        positions, _ = sim.model.frame_poses(traj.x[::s], traj.q[::s])
        out.append(np.abs(positions - ref).max())
    out = np.array(out)
    return out, np.polyfit(np.log(STEPS), np.log(out), 1)[0]


curves = {}
for label, spec in (("7-DOF arm, dampers", arm()), ("quadruped (free flyer), dampers",
                                                     quadruped())):
    ref, _, _ = reference(spec)
    curves[label] = errors(spec, ref)

# the second-order variant: no dampers, velocities of t = dt/2 as the start
undamped = arm(damped=False)
ref, model, res = reference(undamped)


def midpoint_start(dt):
    k = int(round(dt / 2 / REFERENCE_DT))
    pos, vel = to_spec_coordinates(model, res.q[k], res.v[k])
    _, _, v, w = Simulation(undamped.with_initial(pos, vel), dt=dt).model.initial_state()
    return v, w


curves["7-DOF arm, no dampers, midpoint start"] = errors(undamped, ref, midpoint_start)
for label, (err, slope) in curves.items():
    print(f"{label}: slope {slope:.2f}, errors [m] " + ", ".join(f"{e:.2e}" for e in err))

# %%
# Log-log plot with slope-1 and slope-2 guide lines through the first points.
fig, ax = plt.subplots(figsize=(6.5, 4.5))
for (label, (err, slope)), marker in zip(curves.items(), "osd", strict=True):
    ax.loglog(STEPS * 1e3, err, marker=marker, label=f"{label} (slope {slope:.2f})")
first = [err[0] for err, _ in curves.values()]
for order, anchor, style in ((1, max(first[:2]) * 1.6, "k--"), (2, first[2] * 1.6, "k:")):
    ax.loglog(STEPS * 1e3, anchor * (STEPS / STEPS[0]) ** order, style, lw=1,
              label=f"slope {order}")
ax.set_xticks(STEPS * 1e3, [f"{dt * 1e3:g}" for dt in STEPS])
ax.minorticks_off()
ax.set_xlabel("step size dt [ms]")
ax.set_ylabel("max link-frame position error over 0.1 s [m]")
slopes = ", ".join(f"{s:.2f}" for _, s in curves.values())
ax.set_title(f"Maximal coordinates vs minimal RK4 reference: fitted slopes {slopes}",
             fontsize=9)
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
