"""Random test mechanisms as Baraff constraint systems.

Bodies on a random tree (or a chain) joined by ball or hinge-like joints, plus loop closures and
contact-like inequalities: inputs for the tests and the benchmark of
:class:`~graphsolve.constraints.ConstraintSystem`.
"""

from __future__ import annotations

import numpy as np

from .constraints import ConstraintSystem
from .errors import GraphError, ShapeError

__all__ = ["random_mechanism"]


def _skew(r: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _joint(rng: np.random.Generator, s: int, joint: str) -> tuple[np.ndarray, np.ndarray]:
    """Jacobian blocks ``(J_parent, J_child)``; a common translation of both bodies along
    ``e_0`` (``s ≠ 6``) or any uniform translation (``s = 6``) is always free."""
    if s == 6:          # rigid body, v = [linear; angular]; point velocity v − skew(r) ω
        rp, rc = rng.normal(scale=0.5, size=(2, 3))
        Jp = np.hstack([np.eye(3), -_skew(rp)])
        Jc = np.hstack([-np.eye(3), _skew(rc)])
        if joint == "hinge":   # two more rows: no relative rotation about axes ⟂ to the hinge
            u = rng.standard_normal(3)
            U = np.linalg.svd(u[None, :])[2][1:]          # 2 × 3, rows ⟂ u
            Jp = np.vstack([Jp, np.hstack([np.zeros((2, 3)), U])])
            Jc = np.vstack([Jc, np.hstack([np.zeros((2, 3)), -U])])
        return Jp, Jc
    m = max(1, s // 2) if joint == "ball" else max(1, s - 1)
    Gp, Gc = rng.standard_normal((2, m, s))
    Gc[:, 0] = Gp[:, 0]
    return Gp, -Gc


def random_mechanism(n_bodies: int, k_loops: int = 0, n_contacts: int = 0, body_size: int = 6,
                     joint: str = "ball", seed: int | np.random.Generator | None = 0,
                     topology: str = "tree") -> ConstraintSystem:
    """A random mechanism as a :class:`ConstraintSystem` (test and benchmark input).

    Bodies ``0..n-1`` form a random tree (``topology="chain"``: the chain ``0-1-…``) whose
    edges are joints, added first (so they become the primary constraints): for
    ``body_size=6`` (``v = [linear; angular]``) a ball joint ``J_parent = [I, −skew(r_p)]``,
    ``J_child = [−I, skew(r_c)]`` with random lever arms, and a hinge adds two rows that forbid
    relative rotation about the axes perpendicular to a random hinge axis (5 rows). Other sizes
    get random blocks of ``s//2`` (ball) or ``s−1`` (hinge) rows. Then ``k_loops`` ball-joint
    loop closures between distinct random body pairs at tree distance ``≥ 2`` (``≥ 4`` for
    hinges), and ``n_contacts`` one-row inequalities on random bodies: the normal acceleration
    ``nᵀ(v̇ + ω̇ × r)`` with ``n`` near ``+z`` (near ``e_0`` for other sizes) and ``c`` uniform
    in ``[−1, 1]``, so that some are active and some not for moderate forces. Equality
    right-hand sides are ``N(0, 0.1²)``; mass blocks are ``diag(m I₃, R diag(I) Rᵀ)``.

    A uniform translation along ``+z`` satisfies every joint and raises every contact, so the
    inequalities are always feasible; with many loops on few bodies the equality constraints
    may become dependent (:meth:`ConstraintSystem.solve` then raises a
    :class:`~graphsolve.SingularBlockError` naming one).

    Raises
    ------
    ShapeError
        ``n_bodies < 1`` or ``body_size < 2``.
    GraphError
        Unknown ``joint`` / ``topology``, or not enough distinct far-apart body pairs.

    Examples
    --------
    >>> system = random_mechanism(8, k_loops=2, n_contacts=3, seed=1)
    >>> len(system.constraints), system.split()[1]
    (12, (7, 8, 9, 10, 11))
    """
    if n_bodies < 1 or body_size < 2:
        raise ShapeError(f"need n_bodies >= 1 and body_size >= 2, got {n_bodies}, {body_size}")
    if joint not in ("ball", "hinge") or topology not in ("tree", "chain"):
        raise GraphError(f"unknown joint {joint!r} or topology {topology!r}")
    rng = np.random.default_rng(seed)
    masses = []
    for _ in range(n_bodies):
        if body_size == 6:
            R = np.linalg.qr(rng.standard_normal((3, 3)))[0]
            inertia = R @ np.diag(rng.uniform(0.1, 1.0, 3)) @ R.T
            masses.append(np.block([[rng.uniform(0.5, 2.0) * np.eye(3), np.zeros((3, 3))],
                                    [np.zeros((3, 3)), inertia]]))
        else:
            A = rng.standard_normal((body_size, body_size))
            masses.append(A @ A.T / body_size + np.eye(body_size))
    system = ConstraintSystem(masses)
    parent = [-1] + [i - 1 if topology == "chain" else int(rng.integers(0, i))
                     for i in range(1, n_bodies)]
    depth = [0] * n_bodies
    for i in range(1, n_bodies):
        depth[i] = depth[parent[i]] + 1
        Jp, Jc = _joint(rng, body_size, joint)
        system.add_constraint((parent[i], i), (Jp, Jc), rng.normal(scale=0.1, size=len(Jp)))

    def distance(a: int, b: int) -> int:
        d = 0
        while a != b:
            if depth[a] < depth[b]:
                a, b = b, a
            a, d = parent[a], d + 1
        return d

    need = 2 if joint == "ball" else 4
    pairs: set[tuple[int, int]] = set()
    for _ in range(200 * k_loops):
        if len(pairs) == k_loops:
            break
        a, b = sorted(int(v) for v in rng.choice(n_bodies, 2, replace=False)) if \
            n_bodies > 1 else (0, 0)
        if (a, b) not in pairs and a != b and distance(a, b) >= need:
            pairs.add((a, b))
            Jp, Jc = _joint(rng, body_size, "ball")
            system.add_constraint((a, b), (Jp, Jc), rng.normal(scale=0.1, size=len(Jp)))
    if len(pairs) < k_loops:
        raise GraphError(f"found only {len(pairs)} of {k_loops} body pairs at tree distance "
                         f">= {need} for loop closures")
    for _ in range(n_contacts):
        b = int(rng.integers(0, n_bodies))
        if body_size == 6:
            n = np.array([0.0, 0.0, 1.0]) + 0.3 * rng.standard_normal(3)
            n /= np.linalg.norm(n)
            row = np.concatenate([n, np.cross(rng.normal(scale=0.5, size=3), n)])
        else:
            row = rng.standard_normal(body_size)
            row[0] = 1.0 + abs(row[0])
        system.add_constraint(b, row[None, :], [rng.uniform(-1.0, 1.0)], kind="inequality")
    return system
