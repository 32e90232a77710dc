"""Random URDF trees and Pinocchio conversions for the dynamics.minimal tests (no pinocchio
import here: the invariant tests run without it)."""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from dynamics.spec import MechanismSpec
from dynamics.urdf import load_urdf

__all__ = ["random_tree_urdf", "random_spec", "pin_configuration", "rel_error", "CORPUS",
           "corpus_model"]

#: The URDF corpus of the tests.
CORPUS = Path(__file__).resolve().parent / "urdf_corpus"


def corpus_model(name: str, floating: bool):
    """The corpus robot ``name`` as a minimal :class:`~dynamics.minimal.Model` (the loader's
    warnings silenced), with a free-flyer root if ``floating``."""
    from dynamics.minimal import Model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Model(load_urdf(CORPUS / f"{name}.urdf", floating_base=floating))


def _v(a) -> str:
    return " ".join(repr(float(x)) for x in a)


def _inertial(rng) -> str:
    m = float(rng.uniform(0.5, 3.0))
    d = rng.uniform(0.1, 1.0, 3)
    inertia = m / 12 * np.diag([d[1]**2 + d[2]**2, d[0]**2 + d[2]**2, d[0]**2 + d[1]**2])
    R = Rotation.random(random_state=rng).as_matrix()
    I = (R @ inertia @ R.T).tolist()
    com, rpy = rng.normal(0, 0.3, 3), rng.uniform(-np.pi, np.pi, 3) * [1, 0.5, 1]
    return (f'<inertial><origin xyz="{_v(com)}" rpy="{_v(rpy)}"/><mass value="{m!r}"/>'
            f'<inertia ixx="{I[0][0]!r}" ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" iyy="{I[1][1]!r}" '
            f'iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/></inertial>')


def random_tree_urdf(seed: int, n_links: int | None = None, *, max_links: int = 30,
                     kinds=("revolute", "continuous", "prismatic", "fixed"),
                     p=(0.3, 0.25, 0.25, 0.2)) -> str:
    """A random URDF tree of ``n_links`` links (default 2 … ``max_links``, root included):
    joints of ``kinds`` on random axes (40 % along ±x, ±y or ±z) and origins, random inertials
    (rotated, off the joint axis); half of the links hang from the previous one (deep
    branches), the others from a random earlier link; some fixed-joint children are massless
    (merged into their parent by both parsers)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, max_links + 1)) if n_links is None else n_links
    names = [f"L{k}" for k in rng.permutation(10 * n)[:n]]      # file order != sorted order
    jnames = [f"J{k}" for k in rng.permutation(10 * n)[:n]]
    elems = []
    for i, name in enumerate(names):
        kind = None if i == 0 else str(rng.choice(kinds, p=p))
        massless = kind == "fixed" and rng.random() < 0.3
        elems.append(f'<link name="{name}"/>' if massless
                     else f'<link name="{name}">{_inertial(rng)}</link>')
        if i == 0:
            continue
        parent = names[i - 1] if rng.random() < 0.5 else names[int(rng.integers(0, i))]
        if rng.random() < 0.4:
            axis = np.eye(3)[rng.integers(3)] * rng.choice([-1, 1])
        else:
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
        xyz, rpy = rng.normal(0, 0.4, 3), rng.uniform(-np.pi, np.pi, 3) * [1, 0.5, 1]
        limit = ('<limit lower="-3" upper="3" effort="10" velocity="10"/>'
                 if kind in ("revolute", "prismatic") else "")
        elems.append(f'<joint name="{jnames[i]}" type="{kind}"><parent link="{parent}"/>'
                     f'<child link="{name}"/><origin xyz="{_v(xyz)}" rpy="{_v(rpy)}"/>'
                     f'<axis xyz="{_v(axis)}"/>{limit}</joint>')
    order = rng.permutation(len(elems))
    return '<robot name="random">' + "\n".join(elems[k] for k in order) + "</robot>"


def random_spec(seed: int, *, floating_base: bool = False, spherical: float = 0.4,
                max_links: int = 30) -> MechanismSpec:
    """A random URDF tree as a spec with a fraction ``spherical`` of its revolute joints turned
    into spherical joints, and random initial coordinates and rates of every joint."""
    spec = load_urdf(random_tree_urdf(seed, max_links=max_links), floating_base=floating_base)
    rng = np.random.default_rng(seed + 10_000)
    joints = [dataclasses.replace(j, type="spherical")
              if j.type == "revolute" and rng.random() < spherical else j for j in spec.joints]
    pos = {j.name: rng.normal(size=j.dof) for j in joints}
    vel = {j.name: rng.normal(size=j.dof) for j in joints}
    return MechanismSpec(spec.bodies, joints, spec.gravity, pos, vel, spec.name)


def pin_configuration(model, pin_model, q: np.ndarray) -> np.ndarray:
    """Pinocchio ``q`` of a ``dynamics.minimal`` configuration (quaternion rotations):
    continuous joints as ``(cos, sin)``, quaternions scalar last, planar ``(x, y, θ)`` as
    ``(x, y, cos θ, sin θ)``. Velocities agree as they are (free-flyer ``v`` is ``(linear;
    angular)`` in the local frame in both, planar ``(v_x, v_y, ω)``)."""
    out = np.zeros(pin_model.nq)
    for jm, pj in zip(model.joints, list(pin_model.joints)[1:], strict=True):
        seg = q[jm.q_slice]
        if pj.shortname() == "JointModelPlanar":
            seg = np.array([seg[0], seg[1], np.cos(seg[2]), np.sin(seg[2])])
        elif pj.nq == 2:
            seg = np.array([np.cos(seg[0]), np.sin(seg[0])])
        elif pj.nq in (4, 7):
            seg = np.concatenate([seg[:-4], seg[-3:], seg[-4:-3]])
        out[pj.idx_q:pj.idx_q + pj.nq] = seg
    return out


def rel_error(x, ref) -> float:
    """``|x - ref| / |ref|`` (Frobenius / 2-norm; absolute when ``ref`` is zero)."""
    x, ref = np.asarray(x, dtype=float), np.asarray(ref, dtype=float)
    scale = np.linalg.norm(ref)
    return float(np.linalg.norm(x - ref) / (scale if scale > 0 else 1.0))


def sprung_tree(seed=3, k=3.0, d=0.4):
    """A branching random revolute / prismatic tree (:func:`random_spec`) with springs and
    dampers on every joint, as a minimal :class:`~dynamics.minimal.Model`."""
    from dynamics.minimal import Model

    spec = random_spec(seed, spherical=0.0, max_links=7)
    spec = dataclasses.replace(spec, joints=tuple(
        dataclasses.replace(j, spring=k, damper=d) if j.type in ("revolute", "prismatic")
        else j for j in spec.joints))
    model = Model(spec)
    assert {jm.type for jm in model.joints} == {"revolute", "prismatic"}
    assert len(set(model.parents)) < model.njoints              # branching
    return model
