"""MuJoCo peer of :mod:`comparisons.dynamics_peers`: MJCF text from a spec and an ``mj_step``
simulation loop.

References
----------
E. Todorov, T. Erez, Y. Tassa, "MuJoCo: a physics engine for model-based control", IROS 2012.
MuJoCo documentation, "XML Reference" (``body``, ``joint``, ``inertial``, ``option/flag``) and
"Computation: Numerical integration".
"""
from __future__ import annotations

import time
from xml.sax.saxutils import quoteattr

import numpy as np

from dynamics import quaternion as quat
from dynamics.spec import Body, Joint, MechanismSpec

from .peer_tree import Layout, check_finite, check_steps, require, tree_links

__all__ = ["MUJOCO_INTEGRATORS", "mujoco_model_xml", "mujoco_state", "simulate_mujoco"]

#: ``simulate_mujoco`` integrator name -> MJCF ``integrator`` attribute.
MUJOCO_INTEGRATORS = {"euler": "Euler", "rk4": "RK4", "implicitfast": "implicitfast"}
_JOINT_TYPES = {"revolute": "hinge", "prismatic": "slide", "spherical": "ball",
                "floating": "free"}


def _to_mujoco(j: Joint, x: np.ndarray, xd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spec coordinates and rates of one joint -> MuJoCo ``qpos`` and ``qvel`` segments."""
    if j.type == "spherical":
        return quat.from_rotation_vector(x), xd
    if j.type == "floating":      # world pose of the link frame (the parent is the world)
        r = quat.multiply(j.orientation_offset, quat.from_rotation_vector(x[3:]))
        return np.concatenate([j.parent_point + x[:3], r]), xd
    return x, xd


def _from_mujoco(j: Joint, q: np.ndarray) -> np.ndarray:
    """MuJoCo ``qpos`` segments (T, nq_j) -> spec coordinates (T, dof)."""
    if j.type == "spherical":
        return quat.rotation_vector(q)
    if j.type == "floating":
        rel = quat.multiply(quat.conjugate(j.orientation_offset), q[:, 3:])
        return np.concatenate([q[:, :3] - j.parent_point, quat.rotation_vector(rel)], axis=1)
    return q


def _numbers(x) -> str:
    return " ".join(repr(float(a)) for a in np.ravel(x))


def _geom(body: Body, at: np.ndarray) -> str:
    """A visual (non-colliding) geom for the body's shape, or ``""``."""
    kind, dims = body.shape.kind, np.asarray(body.shape.dims, dtype=float)
    if kind == "box":
        size = dims / 2.0           # MJCF sizes are half-lengths
    elif kind == "cylinder":
        size = [dims[0], dims[1] / 2.0]
    elif kind == "sphere":
        size = dims
    else:
        return ""
    return (f'<geom type="{kind}" size="{_numbers(size)}" pos="{_numbers(at)}" '
            'contype="0" conaffinity="0"/>')


def _body_lines(link, indent: str) -> list[str]:
    """The opening ``<body>`` tag and its joint, inertial and geom elements."""
    j, body = link.joint, link.body
    lines = [f"{indent}<body name={quoteattr(body.name)} pos=\"{_numbers(link.translation)}\" "
             f"quat=\"{_numbers(j.orientation_offset)}\">"]
    if j.type != "fixed":
        axis = f' axis="{_numbers(j.axis)}"' if j.type in ("revolute", "prismatic") else ""
        spring = ""
        if j.spring > 0.0:
            rest = 0.0 if j.spring_offset is None else j.spring_offset[0]
            spring = f' stiffness="{j.spring!r}" springref="{_numbers(rest)}"'
        lines.append(f"{indent}  <joint name={quoteattr(j.name)} "
                     f"type=\"{_JOINT_TYPES[j.type]}\"{axis} damping=\"{j.damper!r}\"{spring}/>")
    J = body.inertia
    full = _numbers([J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]])
    lines.append(f"{indent}  <inertial pos=\"{_numbers(-j.child_point)}\" "
                 f"mass=\"{body.mass!r}\" fullinertia=\"{full}\"/>")
    geom = _geom(body, -j.child_point)
    return lines + ([f"{indent}  {geom}"] if geom else [])


def mujoco_model_xml(spec: MechanismSpec, timestep: float, integrator: str = "Euler") -> str:
    """MJCF text of a tree mechanism: one nested ``<body>`` per spec body.

    A body's frame is its link frame (``pos``, ``quat``: the joint frame in the parent body's
    frame), its ``<joint>`` (``hinge``, ``slide``, ``ball``, ``free``; none for ``fixed``) sits at
    the frame origin with the spec's ``damping``, ``stiffness`` and ``springref``, and
    ``<inertial>`` puts the centre of mass at ``-child_point``. Shapes become visual geoms
    (``contype="0" conaffinity="0"``; geoms add no inertia). Angles are in radians; the energy
    flag is on, the Euler integrator's implicit damping and the automatic reset on divergence
    are off.

    Parameters
    ----------
    spec : MechanismSpec
    timestep : float
        ``<option timestep>`` (s).
    integrator : str
        MJCF ``integrator`` attribute: ``"Euler"``, ``"RK4"``, ``"implicit"``, ``"implicitfast"``.

    Returns
    -------
    str

    Raises
    ------
    UnsupportedMechanismError
        See :func:`comparisons.peer_tree.tree_links`. MuJoCo itself rejects inertias that
        violate the triangle inequality when the text is compiled.
    """
    links = tree_links(spec)
    children: list[list[int]] = [[] for _ in links]
    roots = []
    for i, link in enumerate(links):
        (roots if link.parent < 0 else children[link.parent]).append(i)
    lines = ["<mujoco model=" + quoteattr(spec.name) + ">",
             '  <compiler angle="radian" inertiafromgeom="false"/>',
             f'  <option timestep="{float(timestep)!r}" gravity="{_numbers(spec.gravity)}" '
             f'integrator="{integrator}">',
             '    <flag energy="enable" eulerdamp="disable" autoreset="disable"/>',
             "  </option>", "  <worldbody>"]
    stack = [(i, True, 2) for i in reversed(roots)]
    while stack:                                    # depth-first, without recursion
        i, opening, level = stack.pop()
        if opening:
            lines += _body_lines(links[i], "  " * level)
            stack.append((i, False, level))
            stack.extend((c, True, level + 1) for c in reversed(children[i]))
        else:
            lines.append("  " * level + "</body>")
    lines += ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines) + "\n"


def _layout(spec: MechanismSpec, model) -> Layout:
    joints = tuple(link.joint for link in tree_links(spec) if link.joint.type != "fixed")
    ids = [model.joint(j.name).id for j in joints]
    return Layout(joints, tuple(int(model.jnt_qposadr[i]) for i in ids),
                  tuple(int(model.jnt_dofadr[i]) for i in ids), model.nq, model.nv,
                  _to_mujoco, _from_mujoco)


def mujoco_state(spec: MechanismSpec, model) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo ``(qpos, qvel)`` of the spec's initial coordinates for a model compiled from
    :func:`mujoco_model_xml`."""
    return _layout(spec, model).state(spec)


def simulate_mujoco(spec: MechanismSpec, dt: float, steps: int, integrator: str = "euler",
                    poses: bool = True) -> dict:
    """Simulate a tree mechanism with ``mujoco.mj_step``.

    Parameters
    ----------
    spec : MechanismSpec
    dt : float
        Time step (s).
    steps : int
        Number of steps; outputs have ``T = steps + 1`` rows.
    integrator : {"euler", "rk4", "implicitfast"}
        MuJoCo's semi-implicit Euler (damping explicit, as in Pinocchio's
        ``"semi_implicit_euler"``), its Runge-Kutta 4, or its implicit-in-velocity scheme.
    poses : bool
        Also return the bodies' centre-of-mass frames (``xipos``, ``xmat``).

    Returns
    -------
    dict
        As :func:`comparisons.pinocchio_peer.simulate_pinocchio`, with ``qpos`` (T, nq) and
        ``qvel`` (T, nv) in MuJoCo's layout instead of ``q`` and ``v``. Energies come from
        ``data.energy`` (potential: gravity plus springs), evaluated after the timed loop,
        which runs with the energy flag off.

    Raises
    ------
    ValueError
        For an unknown integrator, ``dt <= 0`` or ``steps < 0``.
    UnsupportedMechanismError
        See :func:`comparisons.peer_tree.tree_links`.
    SimulationDivergedError
        If the state becomes non-finite.
    """
    if integrator not in MUJOCO_INTEGRATORS:
        raise ValueError(f"unknown integrator {integrator!r}; choose from "
                         f"{sorted(MUJOCO_INTEGRATORS)}")
    check_steps(dt, steps)
    mujoco = require("mujoco")
    model = mujoco.MjModel.from_xml_string(
        mujoco_model_xml(spec, dt, MUJOCO_INTEGRATORS[integrator]))
    data = mujoco.MjData(model)
    layout = _layout(spec, model)
    data.qpos[:], data.qvel[:] = layout.state(spec)
    energy_flag = int(mujoco.mjtEnableBit.mjENBL_ENERGY)
    model.opt.enableflags &= ~energy_flag           # costs ~20 % of a step; computed below
    Q, V = np.empty((steps + 1, model.nq)), np.empty((steps + 1, model.nv))
    Q[0], V[0] = data.qpos, data.qvel
    step = mujoco.mj_step
    start = time.perf_counter()
    for i in range(steps):
        step(model, data)
        Q[i + 1], V[i + 1] = data.qpos, data.qvel
    seconds = time.perf_counter() - start
    check_finite("mujoco", Q, V, dt)

    model.opt.enableflags |= energy_flag
    ids = [model.body(b.name).id for b in spec.bodies]
    E = np.empty((steps + 1, 2))
    P, R = np.empty((steps + 1, len(ids), 3)), np.empty((steps + 1, len(ids), 3, 3))
    for i in range(steps + 1):
        data.qpos[:], data.qvel[:] = Q[i], V[i]
        mujoco.mj_forward(model, data)
        E[i] = data.energy
        if poses:
            P[i], R[i] = data.xipos[ids], data.xmat[ids].reshape(-1, 3, 3)
    out = {"t": dt * np.arange(steps + 1), "qpos": Q, "qvel": V,
           "joint_names": [j.name for j in layout.joints], "seconds": seconds,
           "potential": E[:, 0], "kinetic": E[:, 1], "energy": E.sum(axis=1),
           **layout.outputs(Q)}
    if poses:
        out.update(body_names=[b.name for b in spec.bodies], body_positions=P, body_rotations=R)
    return out
