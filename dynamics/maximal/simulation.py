"""Time stepping: :class:`Simulation` and the :class:`Trajectory` it returns.

Each step computes ``z₁`` from the update rules (11) and (17), then solves the discrete
dynamics (20) for ``ż₁`` and ``λ₁`` with Newton's method and a backtracking line search
(Brüdigam et al. 2023, Appendix D, Algorithm 5), every linear solve going through graphsolve.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np
from tqdm.auto import tqdm

import graphsolve as gs

from .. import quaternion as quat
from ..spec import MechanismSpec, SpecError
from . import contact_kernels as ck
from .control import PDController
from .control_kernels import joint_rates_kernel
from .force_kernels import coordinates_kernel
from .interior_point_kernels import TAU, warm_floor
from .mechanism import MaximalModel
from .newton_kernels import CHORD_RATE, NewtonStatus
from .step_system import (
    ConvergenceError,
    NewtonError,
    SingularStepError,
    StepSystem,
    omega_scalar,
    quaternion_update,
)

__all__ = ["Simulation", "Trajectory"]


class _Recorded:
    """A :class:`Trajectory` field that :meth:`Simulation.run` may leave to be computed from
    the recorded states on first access (then cached); ``None`` when it was not recorded."""

    def __set_name__(self, owner, name):
        self.name, self.key = name, "_value_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return None                    # the dataclass default of the field
        d = obj.__dict__
        try:
            return d[self.key]
        except KeyError:
            pass
        rec = d.get("_recording")
        value = None if rec is None else rec.compute(self.name)
        d[self.key] = value
        return value

    def __set__(self, obj, value):
        # called by the dataclass __init__; None leaves the field to the recording
        if value is None:
            obj.__dict__.pop(self.key, None)
        else:
            obj.__dict__[self.key] = value


@dataclass(frozen=True)
class Trajectory:
    """Arrays with one row per time point ``t[k] = k Δt`` (``k = 0..steps``).

    ``x``: (T, nb, 3); ``q``: (T, nb, 4); ``v``, ``w``: (T, nb, 3) the integrator's velocity
    and body-frame angular velocity of the interval ``[t_k, t_k+1]`` (eq. 11, 17);
    ``minimal_coordinates`` / ``minimal_velocities``: (T, n_coordinates), columns named by
    ``coordinate_names`` (revolute angles unwrapped over time); energies (T,) in J, the
    kinetic one from the mean of the two interval rates around ``t_k`` (``Δx/Δt`` and the
    rotation angle per step ``θ a/Δt``; second order);
    ``constraint_violation`` (T,) the maximum absolute joint-constraint residual;
    ``iterations`` (T,) Newton iterations of the step that produced the row (0 at ``t = 0``);
    ``residual_history``: per step, the residual norms of its Newton iterations;
    ``contact_distance`` (T, n_contacts): the signed distance φ of every contact and joint
    limit (columns ``contact_names``; a limit's φ is its coordinate's distance to the bound);
    ``complementarity`` (T,): the largest complementarity product (``γ s_φ``, ``β η``,
    ``ψ s_ψ``) at the step's solution (0 at ``t = 0``).

    A trajectory returned by :meth:`Simulation.run` holds the states (``t, x, q, v, w``),
    ``iterations`` and what the step loop recorded (residual histories, contact variables);
    every other field is computed from them, vectorized over time, when it is first read
    (then cached), so recording costs little per step. Fields left out by ``run``'s
    ``record=`` argument read ``None``. Computed fields read the state arrays at first
    access: do not modify ``x, q, v, w`` in place before reading them.
    """

    t: np.ndarray
    x: np.ndarray
    q: np.ndarray
    v: np.ndarray
    w: np.ndarray
    minimal_coordinates: np.ndarray | None = _Recorded()
    minimal_velocities: np.ndarray | None = _Recorded()
    coordinate_names: tuple[str, ...] | None = _Recorded()
    kinetic_energy: np.ndarray | None = _Recorded()
    potential_energy: np.ndarray | None = _Recorded()
    energy: np.ndarray | None = _Recorded()
    constraint_violation: np.ndarray | None = _Recorded()
    iterations: np.ndarray | None = _Recorded()
    residual_history: tuple[np.ndarray, ...] | None = _Recorded()
    contact_names: tuple[str, ...] | None = _Recorded()
    contact_distance: np.ndarray | None = _Recorded()
    complementarity: np.ndarray | None = _Recorded()

    def __getstate__(self):
        # pickles hold every recorded field computed, not the recording
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state):
        for name, value in state.items():
            object.__setattr__(self, name, value)


#: Trajectory fields every recording holds (``record="states"``).
_STATE_FIELDS = ("t", "x", "q", "v", "w", "iterations")
#: Name fields that follow the arrays they label.
_LABELS = {"coordinate_names": ("minimal_coordinates", "minimal_velocities"),
           "contact_names": ("contact_distance", "complementarity")}
#: Time points per chunk of the vectorized derived quantities, times the number of joints
#: (keeps the per-joint (…, 6, 12) temporaries in cache: ~1.5× faster than all at once).
_CHUNK = 4096
#: Most steps per compiled call of :meth:`Simulation.run` (bounds the residual-history buffer
#: of a chunk; the calls cost ~0.01 µs per step at this size).
_RUN_CHUNK = 4096


def _record_fields(record="all") -> frozenset[str]:
    """The :class:`Trajectory` fields kept by ``Simulation.run(record=record)``.

    ``"all"``: every field; ``"states"``: ``t, x, q, v, w, iterations``; a field name or an
    iterable of field names: those and the states (a name field follows its arrays:
    ``coordinate_names`` with ``minimal_*``, ``contact_names`` with ``contact_distance`` /
    ``complementarity``).

    Raises
    ------
    ValueError
        Naming the ``record`` argument, for anything else.
    """
    names = [f.name for f in fields(Trajectory)]
    if isinstance(record, str):
        if record == "all":
            return frozenset(names)
        if record == "states":
            return frozenset(_STATE_FIELDS)
        record = (record,)
    try:
        chosen = set(record)
    except TypeError:
        chosen = None
    if chosen is None or not all(isinstance(n, str) and n in names for n in chosen):
        bad = (record if chosen is None
               else sorted(str(n) for n in chosen if not (isinstance(n, str) and n in names)))
        raise ValueError(f"record must be 'all', 'states' or Trajectory field names from "
                         f"{names}; got {bad!r}")
    chosen |= set(_STATE_FIELDS)
    for label, arrays in _LABELS.items():
        if chosen & set(arrays):
            chosen.add(label)
    return frozenset(chosen)


class _Recording:
    """What :meth:`Simulation.run` stored per step, and the derived :class:`Trajectory` fields
    computed from it on demand (the formulas of the former eager recording)."""

    def __init__(self, model: MaximalModel, dt: float, contacts, xs, qs, vs, ws,
                 contact_variables, record: frozenset[str], history=None, its=None):
        self.model, self.dt, self.contacts = model, dt, contacts
        self.history = history      # residual max-norms of every step, concatenated, or None
        self.its = its              # iterations per row (with history)
        self.xs, self.qs, self.vs, self.ws = xs, qs, vs, ws
        self.contact_variables = contact_variables          # per group (T, n, size) or None
        self.record = record
        self._cache: dict[str, object] = {}

    def compute(self, name: str):
        if name not in self.record:
            return None
        if name not in self._cache:
            self._cache[name] = getattr(self, "_" + name)()
        return self._cache[name]

    def _chunked(self, fn, *arrays):
        """``fn`` over time chunks of the ``(T, ...)`` arrays, concatenated along time."""
        T = arrays[0].shape[0]
        c = max(1, _CHUNK // max(1, len(self.model.joints)))
        if T <= c:
            return fn(*arrays)
        return np.concatenate([fn(*(a[i:i + c] for a in arrays)) for i in range(0, T, c)])

    # The integrator's velocities belong to the interval [t_k, t_k+1] (eq. 11, 17):
    # v = Δx/Δt exactly, while ω = (2/Δt) sin(θ/2) a is the chord of the rotation by θ about
    # a over the step (eq. 13, A.14). The kinetic energy at a time point uses the interval
    # rates Δx/Δt and θ a/Δt, averaged over the two intervals around t_k (the second-order,
    # Störmer-Verlet, velocity).
    def _kinetic_energy(self):
        vs = self.vs
        wr = _rotation_rate(self.ws, self.dt)
        va, wa = vs.copy(), wr.copy()
        va[1:] = 0.5 * (vs[1:] + vs[:-1])
        wa[1:] = 0.5 * (wr[1:] + wr[:-1])
        return self.model.kinetic_energy(va, wa)

    def _potential_energy(self):
        return self._chunked(self.model.potential_energy, self.xs, self.qs)

    def _energy(self):
        return self.compute_any("kinetic_energy") + self.compute_any("potential_energy")

    def compute_any(self, name: str):
        """``name`` whether recorded or not (an ingredient of a recorded field)."""
        if name not in self._cache:
            self._cache[name] = getattr(self, "_" + name)()
        return self._cache[name]

    def _columns(self):
        """``(joint, coordinate)`` index arrays, names and unwrapped (angle) columns of the
        minimal coordinates."""
        js = self.model.joints
        cols, names, angle_cols = [], [], []
        for k, name in enumerate(js.names):
            d, t = int(js.dof[k]), int(js.translational_dof[k])
            for i in range(d):
                if i == t and js.rotational_dof[k] == 1:
                    angle_cols.append(len(cols))
                cols.append((k, i))
                names.append(name if d == 1 else f"{name}[{i}]")
        idx_k = np.array([c[0] for c in cols], dtype=np.int64)
        idx_i = np.array([c[1] for c in cols], dtype=np.int64)
        return idx_k, idx_i, tuple(names), angle_cols

    def _coordinate_names(self):
        return self._columns()[2]

    def _minimal_coordinates(self):
        idx_k, idx_i, _, angle_cols = self._columns()
        m = self.model
        mc = self._chunked(lambda x, q: m.minimal_coordinates(x, q)[:, idx_k, idx_i],
                           self.xs, self.qs)
        for c in angle_cols:
            mc[:, c] = np.unwrap(mc[:, c])
        return mc

    def _minimal_velocities(self):
        idx_k, idx_i = self._columns()[:2]
        m = self.model
        return self._chunked(lambda x, q, v, w: m.joint_velocities(x, q, v, w)[:, idx_k, idx_i],
                             self.xs, self.qs, self.vs, self.ws)

    def _constraint_violation(self):
        return self._chunked(self.model.constraint_violation, self.xs, self.qs)

    def _residual_history(self):
        """Per step, the residual max-norms of its iterations (``iterations + 1`` each), as
        views of the concatenated ``history`` the compiled run loop wrote."""
        if self.history is None:
            return None
        ends = np.cumsum(self.its[1:] + 1)
        return tuple(self.history[a:b] for a, b in zip(ends - (self.its[1:] + 1), ends,
                                                       strict=True))

    def _contact_names(self):
        return tuple(n for g in self.contacts for n in g.names)

    def _contact_distance(self):
        T = self.xs.shape[0]
        return np.concatenate([g.distance(self.xs, self.qs) for g in self.contacts]
                              + [np.zeros((T, 0))], axis=1)

    def _complementarity(self):
        """Largest |complementarity product| of each step's contact variables (as
        :meth:`Simulation.complementarity` after the step); 0 at ``t = 0``."""
        T = self.xs.shape[0]
        comp = np.zeros(T)
        if T == 1:
            return comp
        prods = []
        for grp, u in zip(self.contacts, self.contact_variables, strict=True):
            u = u[1:]
            prods.append(u[:, :, 0] * u[:, :, 1])
            if grp.m:
                m = grp.m
                prods.append((u[:, :, 2:2 + m] * u[:, :, 2 + m:2 + 2 * m]).reshape(T - 1, -1))
                prods.append(u[:, :, 2 + 2 * m] * u[:, :, 3 + 2 * m])
        if prods:
            comp[1:] = np.max(np.abs(np.concatenate(prods, axis=1)), axis=1)
        return comp


class Simulation:
    """Maximal-coordinate variational integrator for a mechanism spec.

    Parameters
    ----------
    spec : MechanismSpec
    dt : float
        Step size (s), > 0.
    tol : float
        Newton tolerance on the max-norm of the residual (20) (velocity rows in N, torque rows
        in N m, constraint rows in m / quaternion units).
    max_iter : int
        Newton iteration cap per step.
    backend : str
        graphsolve kernel backend (``"auto"``, ``"compiled"``, ``"reference"``).
    singular_bodies : {"refuse", "regularize"}
        Bodies with a singular inertia (``Body.allow_singular``, e.g. a massless URDF link
        between two moving joints): refused (default) or given a small mass and isotropic
        inertia, ``regularize_ratio`` (default ``1e-6``) times the smallest regular body's,
        with a :class:`~.mechanism.RegularizationWarning` (see
        :func:`~.mechanism.regularize_singular_bodies`; an ``O(ratio)`` modelling change).
    regularize_ratio : float
        See ``singular_bodies``.
    halvings : int
        Initial value of the attribute :attr:`halvings` (default 3).

    Attributes
    ----------
    spec : MechanismSpec
        The simulated spec (``model.spec``): the given one, or its regularized copy.
    warm_start : bool
        Contact steps start from the last step's contact variables (floored at 1e-3, or as
        ``quiet_floor`` says).
    quiet_floor : bool
        With ``warm_start``, a contact that was closed restarts from a floor of 3e-4 instead
        of 1e-3 after a step of at most three interior-point iterations
        (:func:`.interior_point_kernels.warm_floor`; default on): resting contacts converge
        in about two iterations instead of three; events after quiet steps (a contact
        opening, sticking, an impact) can take one or two more. Off: 1e-3 always. The count
        is the last converged contact step's (reset by :meth:`set_state` and a halved step),
        also for ``contact_variables`` set by hand.
    refine, refine_atol : bool, float
        Iterative refinement of the interior-point corrector solves, skipped when the linear
        residual is already ``<= refine_atol`` (default ``tol/100``).
    extrapolate : bool
        Start Newton from the linear extrapolation ``2 s_k - s_{k-1}`` of the last two steps'
        velocities and multipliers (:meth:`_extrapolated_guess`; default on). Only the start
        changes, not the solution.
    reuse_factorization : bool
        Simplified Newton (default on): an iteration that follows one which reduced the
        residual 100-fold or more first tries the last factorization of the Newton matrix,
        and keeps that step if it reaches ``tol`` or, before the last iteration ``max_iter``
        allows, reduces the residual 100-fold again (:data:`.newton_kernels.CHORD_RATE`);
        otherwise it is a full Newton iteration. From the extrapolated start a step's second
        iteration then needs no assembly and no factorization, and reaches the same solution
        to the tolerance. Off: Newton's method of 2023 App. D, Alg. 5, as published. The
        interior-point iterations of contact steps always factor.
    contact_extrapolation : bool
        Use :meth:`_extrapolated_guess` (velocities ``2 ż_k - ż_{k-1}``) for contact steps too
        (default off: no fewer iterations on the sphere chain; fewer on the box drop), on when
        every contact is frictionless (joint limits, frictionless contacts), where a step is
        first taken without the contacts (:meth:`_inactive_step`), a joint step that
        extrapolation saves iterations of.
    halvings : int
        A step whose Newton or interior-point iteration does not converge
        (:class:`~.step_system.ConvergenceError`) is taken as two steps of ``Δt/2``, each
        halved again if it fails, down to ``Δt/2^halvings`` (default 3; 0 raises at once).
        The trajectory stays on the ``Δt`` grid; only the failing interval is integrated
        with the smaller steps (:meth:`_halved_step`). If the halves fail too, the step's
        own error is raised, the state left before the step.
    halved_steps : int
        Steps taken in halves so far.

    Raises
    ------
    ValueError
        ``dt <= 0``, non-positive tolerance or negative ``halvings``.
    SpecError
        The initial joint coordinates violate a loop-closing joint by more than ``1e-8``; a
        body with a singular inertia (see ``singular_bodies`` and
        :class:`~.mechanism.MaximalModel`).

    Examples
    --------
    >>> from dynamics import models
    >>> from dynamics.maximal import Simulation
    >>> traj = Simulation(models.pendulum(2), dt=0.01).run(10, progress=False)
    >>> traj.x.shape, bool(traj.constraint_violation.max() < 1e-9)
    ((11, 2, 3), True)
    """

    def __init__(self, spec: MechanismSpec, dt: float, tol: float = 1e-10, max_iter: int = 50,
                 backend: str = "auto", *, singular_bodies: str = "refuse",
                 regularize_ratio: float = 1e-6, halvings: int = 3):
        dt = float(dt)
        if not np.isfinite(dt) or dt <= 0.0:
            raise ValueError(f"dt must be a positive step size, got {dt}")
        if isinstance(halvings, bool) or int(halvings) != halvings or halvings < 0:
            raise ValueError(f"halvings must be an integer >= 0, got {halvings!r}")
        if not tol > 0:
            raise ValueError(f"tol must be positive, got {tol}")
        self.model = MaximalModel(spec, singular_bodies=singular_bodies,
                                  regularize_ratio=regularize_ratio)
        spec = self.model.spec                   # the regularized copy, if any
        self.spec, self.dt, self.tol, self.max_iter = spec, dt, float(tol), int(max_iter)
        self.system = StepSystem(self.model, dt, backend)
        self.t = 0.0
        self._residuals = np.zeros(0)
        x, q, v, w = self.model.initial_state()
        self._check_initial(x, q)
        self._lam = np.zeros((len(self.model.joints), 6))
        self.contact_variables = [np.zeros((len(g), g.size)) for g in self.system.contacts]
        # interior-point iterations of the step that made contact_variables (-1: none or
        # unknown); the warm start's floor follows it (interior_point_kernels.warm_floor)
        self._contact_iterations = -1
        self.warm_start = True
        self.quiet_floor = True
        self.refine = True
        self.contact_extrapolation = self.system.inactive_first
        self.extrapolate = True
        self.reuse_factorization = True
        # a whole step is one compiled call (StepSystem.step_compiled): no contacts, compiled
        # kernels and graphsolve backend; springs, dampers and joint forces included. False
        # takes the Python-driven step (StepSystem.begin, the NumPy reference, then Newton).
        self._compiled_step = bool(self.system.fused)
        # with contacts, a whole step is one compiled call too (StepSystem.contact_step); False
        # takes the Python-driven interior point (_interior_point, the readable reference)
        self._compiled_contacts = self.system.compiled_contacts
        self.refine_atol = 1e-2 * self.tol
        self.halvings = int(halvings)
        self.halved_steps = 0
        self._backend = backend
        self._half: Simulation | None = None     # the Δt/2 simulation of _halved_step
        self._pairs = None               # complementarity (row, a, b), built on first use
        # a controller's inputs, built on first use (_input_slots)
        self._inputs: tuple[dict[str, tuple[int, int, bool]], np.ndarray] | None = None
        self.set_state(x, q, v, w)

    def _check_initial(self, x, q) -> None:
        """Refuse an initial pose that opens a loop joint, puts a contact inside the ground
        or two bodies into each other, or a joint outside its limits
        (:class:`~dynamics.spec.SpecError`)."""
        viol = float(self.model.constraint_violation(x, q))
        if viol > 1e-8:
            raise SpecError(f"the initial joint coordinates violate the joint constraints by "
                            f"{viol:.3g} (loop joints must close at t = 0)")
        for grp in self.system.contacts:
            phi = grp.distance(x, q)
            if np.any(phi < -1e-9):
                k = int(np.argmin(phi))
                if grp.is_limit[k]:
                    j, i = grp.limit[k, :2]
                    joint = self.spec.joints[j]
                    raise SpecError(f"joint {joint.name!r} starts outside its limits: coordinate "
                                    f"{i} is {-phi[k]:.3g} beyond its bound "
                                    f"{grp.bound[k, 1]:.6g} (joint limit {grp.names[k]!r}); "
                                    f"start within [{joint.lower[i]:.6g}, "
                                    f"{joint.upper[i]:.6g}]")
                if grp.other[k] < 0:
                    raise SpecError(f"contact {grp.names[k]!r} is inside the ground at t = 0 "
                                    f"(φ = {phi[k]:.3g} m); start it on or above z = 0")
                names = [b.name for b in self.spec.bodies]
                raise SpecError(f"body contact {grp.names[k]!r}: bodies "
                                f"{names[grp.body[k]]!r} and {names[grp.other[k]]!r} overlap "
                                f"at t = 0 (φ = {phi[k]:.3g} m); start them apart or touching")

    # ------------------------------------------------------------------ state
    def set_coordinates(self, positions: Mapping[str, Sequence[float]] | None = None,
                        velocities: Mapping[str, Sequence[float]] | None = None) -> None:
        """Set the state from joint coordinates and rates, by joint name (tree joints; the
        others keep the spec's initial values), as the construction from
        ``spec.with_initial(positions, velocities)`` does: the poses follow from the tree, the
        velocities are projected on the joints (:meth:`set_state`), and the spec (``spec``,
        ``model.spec``) becomes that copy. A fresh ``Simulation(spec, dt)`` after
        ``set_coordinates(p, v)`` steps exactly as ``Simulation(spec.with_initial(p, v), dt)``.

        Raises
        ------
        SpecError
            Unknown joints or wrong sizes, or coordinates that open a loop joint or put a
            contact inside the ground (as at construction).
        """
        spec = self.spec.with_initial(positions, velocities)
        model = copy.copy(self.model)
        model.spec = spec
        x, q, v, w = model.initial_state()
        self._check_initial(x, q)
        self.spec = self.model.spec = spec
        self.set_state(x, q, v, w)

    def set_state(self, x, q, v, w, project: bool = True) -> None:
        """Set body positions, unit quaternions and velocities (shapes (nb,3)/(nb,4)).

        With ``project=True`` the velocities are made consistent with the joints: the
        smallest impulsive change (in the mass metric) such that the first update (11), (17)
        satisfies all constraints - the discrete counterpart of the velocity projection.
        """
        nb = self.model.n_bodies
        x, v, w = (np.array(a, dtype=float).reshape(nb, 3) for a in (x, v, w))
        q = quat.check_unit(np.array(q, dtype=float).reshape(nb, 4), "q")
        for name, a in (("x", x), ("v", v), ("w", w)):
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{name} contains NaN or inf")
        self._check_rate(w)
        self.x, self.q, self.v, self.w = x, q, v, w
        self._previous = None
        self._contact_iterations = -1
        if project and len(self.system.constrained) and (np.any(v) or np.any(w)):
            self.system.begin(x, q, v, w, projection=True)
            s, _ = self._newton(self.system.pack(v, w, np.zeros_like(self._lam)))
            self.v, self.w, _ = (a.copy() for a in self.system.unpack(s))

    def _check_rate(self, w):
        bad = ~np.isfinite(omega_scalar(w, self.dt))
        if np.any(bad):
            raise self._rate_error(int(np.flatnonzero(bad)[0]), w)

    def _rate_error(self, i: int, w: np.ndarray) -> NewtonError:
        return NewtonError(f"body {self.spec.bodies[i].name!r}: |ω| = "
                           f"{np.linalg.norm(w[i]):.4g} rad/s >= 2/Δt = {2 / self.dt:.4g}; "
                           "reduce the step size")

    @property
    def last_residuals(self) -> np.ndarray:
        """Residual max-norms of the last step's Newton or interior-point iterations (a copy:
        the compiled steps keep them in a work buffer that the next step overwrites)."""
        return np.array(self._residuals)

    @last_residuals.setter
    def last_residuals(self, value) -> None:
        self._residuals = np.asarray(value, dtype=float)

    # ------------------------------------------------------------------ stepping
    def _interior_point(self, s):
        """Mehrotra predictor-corrector interior point for contacts (2023 App. D; Nocedal &
        Wright 2006, Alg. 14.3 and §19.3).

        ``s`` holds velocities, joint multipliers and the contact variables of
        :mod:`.contacts`; ``f_μ(s)`` is the residual (20) with every complementarity row
        (``γ s_φ``, ``β_i η_i``, ``ψ s_ψ``) ``= μ`` (``StepSystem.barrier``). Each iteration, with
        ``μ = mean(products)`` and one factorization of ``F = ∂f/∂s``:

        1. predictor: the affine step ``F Δ_a = -f_0`` (no iterative refinement), its largest
           step ``α_a <= 1`` to the boundary and ``μ_a`` the mean product there; centring
           ``σ = (μ_a/μ)³`` (N&W 14.34);
        2. corrector: ``F Δ = -f_σμ - Δ_a u_a ∘ Δ_a u_b`` (for each pair ``u_a u_b``, the
           second-order term of the affine step; N&W 14.35), solved with the same
           factorization (:meth:`StepSystem.resolve`) and iteratively refined;
        3. fraction to the boundary ``τ = max(0.995, 1 - μ)`` on every contact variable
           (N&W 19.9), then a halving line search on ``‖f_σμ‖₂``. If the corrector gives no
           decrease in 8 halvings, the plain Newton step of ``f_σμ`` (a descent direction of
           that merit) is searched instead.

        The centring target is recomputed from the current products every iteration, so
        a complementarity pair pushed to the boundary (both members → 0, as a friction
        ``β_i, η_i`` pair of a contact changing between sliding and sticking) raises ``σμ``
        and is re-centred, instead of being jammed by a fixed barrier lowered on the other
        pairs' progress (fraction-to-the-boundary steps of ~1e-6: ``sphere_chain(100)``
        stalled at t = 0.17 s with the former Fiacco-McCormick schedule). Converged when
        ``‖f_0‖∞ <= tol``: every equation residual and every complementarity product below
        ``tol``. The target never drops below ``tol/100``.
        """
        sys = self.system
        if self._pairs is None:
            loc = [g.complementarity_pairs() for g in sys.contacts]
            self._pairs = tuple(np.concatenate([g.rows[:, p[k]].ravel() for g, p in
                                                zip(sys.contacts, loc, strict=True)])
                                for k in range(3))
            self._positive = np.concatenate([g.rows.ravel() for g in sys.contacts])
        row, ia, ib = self._pairs
        pos = self._positive
        target_min = 0.01 * self.tol
        sys.barrier = 0.0               # f_0: the complementarity rows hold the products
        f = sys.residual(s)
        norm = _norm(f)
        history = [norm]
        iters = 0
        centre, corrector = np.empty(sys.N), np.empty(sys.N)
        while norm > self.tol:
            if iters >= self.max_iter:
                mean = ck.mean_product(s, s, 0.0, ia, ib)
                raise ConvergenceError(f"interior-point method did not converge in {self.max_iter} "
                                       f"iterations at t = {self.t:.6g} s (residual {norm:.3g}, "
                                       f"mean complementarity {mean:.3g}, tol {self.tol:g})")
            mu = ck.mean_product(s, s, 0.0, ia, ib)
            # predictor (affine scaling) direction; it only sets σ and the second-order
            # term, so it skips the iterative refinement of the corrector
            sys.factor(s)
            d_aff = sys.resolve(-f, refine=False)
            alpha = ck.step_to_boundary(s, d_aff, pos, 1.0)
            mu_aff = ck.mean_product(s, d_aff, alpha, ia, ib)
            target = max(min(1.0, (mu_aff / mu) ** 3) * mu, target_min)
            # centre = -f_σμ, corrector = -f_σμ - Δa∘Δb (second-order term of the affine step)
            merit = ck.corrector_rhs(f, target, row, ia, ib, d_aff, centre, corrector)
            tau = max(_TAU, 1.0 - mu)
            sys.barrier = target           # residual() now returns f_σμ
            found = None
            for direction in (corrector, centre):
                ds = sys.resolve(direction, refine=self.refine, atol=self.refine_atol)
                found = _backtrack(sys.residual, s, ds, ck.step_to_boundary(s, ds, pos, tau),
                                   merit, _norm2, halvings=8 if direction is corrector else 40)
                if found is not None:
                    break
            sys.barrier = 0.0
            if found is None:
                raise ConvergenceError(f"interior-point line search failed at t = {self.t:.6g} s "
                                       f"(residual {norm:.3g}, target {target:.3g})")
            s, f = found
            f[row] += target
            norm = _norm(f)
            iters += 1
            history.append(norm)
        self.last_residuals = np.array(history)
        return s, iters

    def _newton(self, s):
        sys = self.system
        if sys.contacts and not sys.projection:
            return self._interior_point(s)
        if sys.fused:
            code, it, pos, history = sys.newton(s, self.tol, self.max_iter,
                                                self.reuse_factorization)
            self.last_residuals = history
            self._raise(code, pos, history)
            return s, it
        return self._newton_loop(sys, s)

    def _newton_loop(self, sys: StepSystem, s):
        """Newton's method with halving line search on ``sys`` (no contacts) from ``s``, in
        Python, with the simplified-Newton rule of :attr:`reuse_factorization` (as the
        compiled :func:`.newton_kernels.newton_kernel`); ``(s, iterations)``,
        :class:`ConvergenceError` at the iteration cap or a failed line search."""
        f = sys.residual(s)
        norm = _norm(f)
        history = [norm]
        chord = False
        while norm >= self.tol:
            if len(history) > self.max_iter:
                raise ConvergenceError(f"Newton did not converge in {self.max_iter} iterations at "
                                       f"t = {self.t:.6g} s (residual {norm:.3g}, "
                                       f"tol {self.tol:g})")
            if chord:                   # the last factorization, full step
                trial = s + sys.resolve(-f, refine=False)
                ft = sys.residual(trial)
                nt = _norm(ft)
                if nt < self.tol or (nt <= CHORD_RATE * norm and len(history) < self.max_iter):
                    s, f, norm = trial, ft, nt
                    history.append(norm)
                    continue
            found = _backtrack(sys.residual, s, sys.solve_linear(s, f), 1.0, norm, _norm)
            if found is None:
                raise ConvergenceError(f"line search failed at t = {self.t:.6g} s (residual "
                                       f"{norm:.3g}, tol {self.tol:g}); |ω| may approach 2/Δt")
            s, f = found
            nt = _norm(f)
            chord = self.reuse_factorization and nt <= CHORD_RATE * norm
            norm = nt
            history.append(norm)
        self.last_residuals = np.array(history)
        return s, len(history) - 1

    def _inactive_step(self, s0, x1, q1, joint_forces):
        """The step without the contacts (:attr:`StepSystem.inactive_first`): Newton with
        halving line search on :meth:`StepSystem.joint_system` from the velocities and
        multipliers of ``s0``, as on a mechanism without contacts. ``(s, iterations)`` with
        ``γ = 0``, ``s_φ = φ(z₂)`` if it converges and every contact is open at its ``z₂``
        (``φ >= 0``): then ``γ = 0`` is the exact complementarity solution. ``None`` (the
        interior point takes the step) otherwise, or when the last step closed a contact
        (``γ > s_φ``)."""
        sys = self.system
        if not sys.inactive_first or any(np.any(u[:, 0] > u[:, 1])
                                         for u in self.contact_variables):
            return None
        plain = sys.joint_system()
        plain.begin(x1, q1, self.v, self.w, joint_forces)
        try:
            s, iters = self._newton_loop(plain, plain.pack(*sys.unpack(s0)))
        except (ConvergenceError, gs.GraphSolveError):   # the cap, line search, a singular pivot
            return None
        v1, w1, lam = plain.unpack(s)
        x2, q2 = plain.next_configuration(v1, w1)
        out = sys.pack(v1, w1, lam)
        for grp in sys.contacts:
            phi = grp.distance(x2, q2, from_start=True)
            if not np.all(phi >= 0.0):
                return None
            out[grp.rows[:, 0]] = 0.0
            out[grp.rows[:, 1]] = phi
        return out, iters

    def _raise(self, code: int, pos: int, history: np.ndarray) -> None:
        """Turn a compiled Newton status into the error it stands for (0: no error)."""
        if code == NewtonStatus.CONVERGED:
            return
        norm = history[-1]
        if code == NewtonStatus.ITERATION_CAP:
            raise ConvergenceError(f"Newton did not converge in {self.max_iter} iterations at "
                                   f"t = {self.t:.6g} s (residual {norm:.3g}, tol {self.tol:g})")
        if code == NewtonStatus.LINE_SEARCH_FAILED:
            raise ConvergenceError(f"line search failed at t = {self.t:.6g} s (residual "
                                   f"{norm:.3g}, tol {self.tol:g}); |ω| may approach 2/Δt")
        if code == NewtonStatus.NONFINITE:
            raise NewtonError(f"the Newton matrix became non-finite at t = {self.t:.6g} s")
        if code == NewtonStatus.RATE_LIMIT:
            raise self._rate_error(pos, self.w)
        node = int(self.system.analysis.order[pos])
        raise SingularStepError(f"singular pivot block at node {node} of the mechanism graph "
                                f"({self._node_name(node)}) at t = {self.t:.6g} s: the joints "
                                "are redundant or at a singular configuration")

    def _node_name(self, node: int) -> str:
        nb = self.model.n_bodies
        if node < nb:
            return f"body {self.spec.bodies[node].name!r}"
        k = int(self.system.constrained[node - nb])
        return f"joint {self.model.joints.names[k]!r}"

    def step(self, joint_forces: np.ndarray | None = None) -> int:
        """Advance one step; returns the number of Newton iterations.

        ``joint_forces``: actuator inputs along the joint coordinates, (n_joints, 6) (or
        anything that broadcasts to it), or ``None``. Without contacts the whole step is one
        compiled call (:meth:`StepSystem.step_compiled`), joint springs, dampers and forces
        included; with contacts too (:meth:`StepSystem.contact_step`, the interior-point loop
        of :meth:`_interior_point` in compiled code). A step that does not converge is taken
        in halves (:attr:`halvings`, :meth:`_halved_step`; the iterations of all its halves
        are returned).
        """
        try:
            return self._step_once(joint_forces)
        except _HALVED_ERRORS as failed:
            return self._retry_in_halves(failed, joint_forces)

    def _retry_in_halves(self, failed: NewtonError, joint_forces) -> int:
        """The step that failed with ``failed`` taken in halves (:meth:`_halved_step`);
        ``failed`` raised if :attr:`halvings` is 0 or the halves fail too (then with what
        they raised as its cause)."""
        if self.halvings <= 0:
            raise failed
        try:
            return self._halved_step(joint_forces)
        except NewtonError as exc:
            raise failed from exc

    def _halved_step(self, joint_forces) -> int:
        """The step from ``t`` to ``t + Δt`` taken by a simulation of ``Δt/2`` (made once; its
        :attr:`halvings` one fewer, so a failing half is halved again), started from this
        state (:meth:`_take_state`). Two half steps reach ``t + Δt``; a third one gives the
        configuration ``z`` after it, valid for the joints and contacts, and the velocities
        for ``Δt`` are those that lead there (``x + Δt v = x_z``, ``q₁(q, ω, Δt) = q_z``,
        eq. 11 and 17), as the step after this one starts from ``x + Δt v``: carried over as
        they are, the half step's velocities would lead half a step too far (into the ground
        at a contact closing at ``|v|``, by ``|v| Δt/2``).

        Returns the iterations of the three half steps; :attr:`last_residuals` holds their
        residual histories one after the other (each after the first without its starting
        residual, so that there are ``iterations + 1`` entries as for any step). Raises what a
        half step raises, this state left unchanged."""
        half = self._half
        if half is None:
            half = self._half = Simulation(self.spec, 0.5 * self.dt, self.tol, self.max_iter,
                                           self._backend)
        if half.system.kernels != self.system.kernels:     # the readable reference's halves
            half.system = StepSystem(half.model, half.dt, self._backend,
                                     kernels=self.system.kernels)
        # the halves take the path this simulation takes (compiled or Python-driven step)
        half._compiled_step = self._compiled_step and bool(half.system.fused)
        half._compiled_contacts = self._compiled_contacts and bool(half.system.compiled_contacts)
        for name in ("warm_start", "quiet_floor", "refine", "refine_atol", "extrapolate",
                     "reuse_factorization", "contact_extrapolation"):
            setattr(half, name, getattr(self, name))
        half.halvings = self.halvings - 1
        half._take_state(self)
        its, history = 0, []
        for k in range(3):
            its += half.step(joint_forces)
            history.append(half.last_residuals[1 if k else 0:])
            if k == 1:                      # the state at t + Δt
                x, q = half.x.copy(), half.q.copy()
                lam, cvar = half._lam.copy(), [u.copy() for u in half.contact_variables]
        xz = half.x + half.dt * half.v
        qz = quaternion_update(half.q, half.w, half.dt)
        self.x, self.q = x, q
        self.v = (xz - x) / self.dt
        rel = quat.multiply(quat.conjugate(q), qz)          # = [c, (Δt/2) ω] (eq. 17)
        self.w = (2.0 / self.dt) * np.sign(rel[:, :1]) * rel[:, 1:]
        self._lam, self.contact_variables = lam, cvar
        self._previous = None
        self._contact_iterations = -1
        self.t += self.dt
        self._residuals = np.concatenate(history)
        self.halved_steps += 1
        return its

    def _take_state(self, src: Simulation) -> None:
        """``src``'s state as this simulation's (``src`` may step with another ``Δt``):
        positions, velocities (``ω`` for this ``Δt`` at the same rotation rate, eq. 13:
        ``ω = (2/Δt) sin(θ/2) a``), time, and multipliers and contact variables as the next
        step's start; no extrapolation from earlier steps. :meth:`_halved_step` uses it from
        ``Δt`` to ``Δt/2``.

        The velocities of a state say where the next configuration is (``x + Δt v``, eq.
        11 and 17), so with another ``Δt`` they are projected onto the joints again
        (:meth:`set_state`: the smallest change in the mass metric), or the next step would
        start off the constraints by O(Δt²). Both this and using the velocity of a ``Δt``
        interval for the first ``Δt/2`` of it are O(Δt) changes of the velocity. The
        projection gets at least 50 Newton iterations whatever :attr:`max_iter` is."""
        rate = _rotation_rate(src.w, src.dt)
        n = np.linalg.norm(rate, axis=-1, keepdims=True)
        unit = rate / np.where(n > 0.0, n, 1.0)
        w = (2.0 / self.dt) * np.sin(0.5 * self.dt * n) * unit
        cap = self.max_iter
        self.max_iter = max(cap, 50)
        try:
            self.set_state(src.x, src.q, src.v, w, project=src.dt != self.dt)
        finally:
            self.max_iter = cap
        self._lam = src._lam.copy()
        self.contact_variables = [u.copy() for u in src.contact_variables]
        self._previous = None
        self.t = src.t

    def _step_once(self, joint_forces) -> int:
        """One step of ``Δt`` (:meth:`step` without the halving)."""
        if self._compiled_contacts:
            return self._contact_step_compiled(joint_forces)
        if self._compiled_step:
            # the kernel extrapolates from and then updates self._previous in place
            fresh = self._previous is None or not self.extrapolate
            if fresh:
                self._previous = (self.v.copy(), self.w.copy(), self._lam.copy())
            code, it, pos, history = self.system.step_compiled(
                self.x, self.q, self.v, self.w, self._lam, self.tol, self.max_iter,
                previous=None if fresh else self._previous, joint_forces=joint_forces,
                reuse=self.reuse_factorization)
            self.last_residuals = history
            self._raise(code, pos, history)
            self.t += self.dt
            return it
        current = (self.v.copy(), self.w.copy(), self._lam.copy())
        self._check_rate(self.w)
        x1 = self.x + self.dt * self.v
        q1 = quaternion_update(self.q, self.w, self.dt)
        self.system.begin(x1, q1, self.v, self.w, joint_forces)
        s0 = self._extrapolated_guess()
        if s0 is None:
            s0 = self.system.pack(self.v, self.w, self._lam)
        warm = self.warm_start and any(np.any(u) for u in self.contact_variables)
        kept = self._inactive_step(s0, x1, q1, joint_forces)
        last = self._contact_iterations if self.quiet_floor else -1
        if kept is not None:
            s, iters = kept
        else:
            for grp, prev in zip(self.system.contacts, self.contact_variables, strict=True):
                if warm:
                    # the last solution pushed off the boundary (every variable >= 1e-3, or
                    # QUIET_FLOOR for a closed contact after a quiet step: warm_floor)
                    floor = [warm_floor(slack, last) for slack in prev[:, 1]]
                    s0[grp.rows] = np.maximum(prev, np.array(floor)[:, None])
                else:
                    s0[grp.rows] = grp.initial_variables(grp.distance(x1, q1))
            try:
                s, iters = self._newton(s0.copy())
            except NewtonError:
                if not warm:
                    raise
                # a warm start can sit next to a degenerate complementarity pair and jam the
                # interior-point method: retry the step once from the cold start
                for grp in self.system.contacts:
                    s0[grp.rows] = grp.initial_variables(grp.distance(x1, q1))
                s, iters = self._newton(s0)
        self._contact_iterations = -1 if kept is not None else iters
        self.contact_variables = [s[grp.rows].copy() for grp in self.system.contacts]
        v1, w1, lam = self.system.unpack(s)
        self.x, self.q, self.v, self.w, self._lam = x1, q1, v1.copy(), w1.copy(), lam
        self._previous = current
        self.t += self.dt
        return iters

    def _contact_step_compiled(self, joint_forces) -> int:
        """:meth:`step` with contacts in one compiled call (:meth:`StepSystem.contact_step`):
        same start (warm or cold contact variables, the cold retry, the extrapolation switch),
        iterations and errors as the Python-driven step."""
        sys = self.system
        # the warm start (may be user-set)
        sys.set_contact_variables(self.contact_variables, self._contact_iterations)
        prev = self._previous
        extrapolate = prev is not None and self.extrapolate and self.contact_extrapolation
        if prev is None:         # receives the current state (s_k) for the next step
            prev = self._previous = (np.empty_like(self.v), np.empty_like(self.w),
                                     np.empty_like(self._lam))
        code, it, pos, target, history = sys.contact_step(
            self.x, self.q, self.v, self.w, self._lam, self.tol, self.max_iter,
            warm_start=self.warm_start, refine=self.refine, refine_atol=self.refine_atol,
            previous=prev, extrapolate=extrapolate, joint_forces=joint_forces,
            reuse=self.reuse_factorization, quiet_floor=self.quiet_floor)
        self._residuals = history
        self._contact_iterations = sys.last_contact_iterations()
        if code != NewtonStatus.CONVERGED:
            self._previous = None
            self._contact_error(code, pos, target, history)
        self.contact_variables = sys.contact_variables()
        self.t += self.dt
        return it

    def _contact_error(self, code: int, pos: int, target: float, history: np.ndarray) -> None:
        """Raise the error of a failed compiled contact step (:meth:`_raise` for the codes
        shared with the joint-only steps)."""
        norm = history[-1]
        if code == NewtonStatus.ITERATION_CAP:
            raise ConvergenceError(f"interior-point method did not converge in {self.max_iter} "
                                   f"iterations at t = {self.t:.6g} s (residual {norm:.3g}, "
                                   f"mean complementarity {self.system.mean_complementarity():.3g}"
                                   f", tol {self.tol:g})")
        if code == NewtonStatus.LINE_SEARCH_FAILED:
            raise ConvergenceError(f"interior-point line search failed at t = {self.t:.6g} s "
                                   f"(residual {norm:.3g}, target {target:.3g})")
        self._raise(code, pos, history)

    def _extrapolated_guess(self) -> np.ndarray | None:
        """Initial Newton point ``2 s_k - s_{k-1}`` (linear extrapolation of velocities and
        multipliers over the last two steps), or ``None`` (start from ``s_k``) at the first
        step after :meth:`set_state`, with contacts (impacts make velocities non-smooth) or
        when the extrapolated rate would leave ``|ω| < 2/Δt`` (eq. 17).

        The integrator's solution is unchanged, only the starting point: ``s_{k+1} - s_k`` is
        O(Δt) while the extrapolation error is O(Δt²): on a 100-link pendulum the initial
        residual drops about 10× and the Newton iterations per step from 2.15 to 2.04 at
        ``tol = 1e-10`` (the whole compiled step does the same in compiled code).
        """
        if (self._previous is None or not self.extrapolate
                or (self.system.contacts and not self.contact_extrapolation)):
            return None
        v0, w0, lam0 = self._previous
        w = 2.0 * self.w - w0
        if not np.all(np.einsum("ij,ij->i", w, w) < (1.0 / self.dt) ** 2):
            return None
        return self.system.pack(2.0 * self.v - v0, w, 2.0 * self._lam - lam0)

    def _forces(self, values: Mapping[str, np.ndarray] | np.ndarray | None
                ) -> np.ndarray | None:
        """A controller's ``{joint name: inputs}`` (or array, :meth:`_force_array`) as the
        ``(n_joints, 6)`` array :meth:`step` takes (``None`` for no inputs). Each name costs
        one dictionary lookup (:meth:`_input_slots`): ``run`` calls this every step."""
        if isinstance(values, np.ndarray):
            return self._force_array(values)
        if not values:
            return None
        slots = self._input_slots()[0]
        out = np.zeros((len(self.model.joints), 6))
        for name, val in values.items():
            slot = slots.get(name)
            if slot is None:                 # the model's joints are the spec's
                raise SpecError(f"no joint named {name!r}")
            k, dof, actuated = slot
            if not actuated:
                raise SpecError(f"joint {name!r} is not actuated (set actuated=True)")
            val = np.asarray(val, dtype=float).reshape(-1)
            if val.shape != (dof,):
                raise ValueError(f"joint {name!r} takes {dof} inputs, got {val.shape}")
            out[k, :dof] = val
        return out

    def _force_array(self, values: np.ndarray) -> np.ndarray:
        """A controller's inputs as an array: broadcast to ``(n_joints, 6)`` (rows in
        ``model.joints.names`` order, column ``c < dof`` the joint's ``c``-th coordinate), zero
        on every passive joint and beyond each joint's coordinates, else the error the mapping
        form raises for that joint."""
        js = self.model.joints
        shape = (len(js), 6)
        try:
            out = np.broadcast_to(np.asarray(values, dtype=float), shape)
        except ValueError:
            raise ValueError(f"controller inputs of shape {np.shape(values)} do not broadcast "
                             f"to (n_joints, 6) = {shape}") from None
        slots, free = self._input_slots()
        bad = np.flatnonzero((out != 0.0) & ~free)
        if bad.size:
            k, c = divmod(int(bad[0]), 6)
            name = js.names[k]
            _, dof, actuated = slots[name]
            if not actuated:
                raise SpecError(f"joint {name!r} is not actuated (set actuated=True)")
            raise ValueError(f"joint {name!r} takes {dof} inputs, got a nonzero input in "
                             f"column {c}")
        return out

    def _input_slots(self) -> tuple[dict[str, tuple[int, int, bool]], np.ndarray]:
        """``({joint name: (row of the model's joints, dof, actuated)}, free)``, made on first
        use: :meth:`_forces` looks each name up once per step; ``free`` (n_joints, 6) marks the
        inputs an array may set (:meth:`_force_array`)."""
        if self._inputs is None:
            spec = {j.name: j for j in self.spec.joints}
            slots = {name: (k, spec[name].dof, spec[name].actuated)
                     for k, name in enumerate(self.model.joints.names)}
            free = np.zeros((len(slots), 6), dtype=bool)
            for k, dof, actuated in slots.values():
                free[k, :dof] = actuated
            self._inputs = (slots, free)
        return self._inputs

    def complementarity(self) -> float:
        """Largest complementarity product of the last step's contact variables."""
        prods = [p for grp, u in zip(self.system.contacts, self.contact_variables, strict=True)
                 for p in _products(grp, u)]
        return float(np.max(np.abs(np.concatenate(prods)))) if prods else 0.0

    def frame_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World position (3,) and rotation matrix (3, 3) of the spec frame ``name`` now
        (e.g. a URDF sensor or tool link; :meth:`MaximalModel.frame_poses` for all frames or
        a whole trajectory)."""
        try:
            k = self.model.frame_names.index(name)
        except ValueError:
            raise SpecError(f"no frame named {name!r}; frames: {self.model.frame_names}") \
                from None
        pos, rot = self.model.frame_poses(self.x, self.q)
        return pos[k], rot[k]

    def minimal_coordinates(self, as_array: bool = False
                            ) -> dict[str, np.ndarray] | np.ndarray:
        """Current joint coordinates by joint name (:meth:`MaximalModel.minimal_coordinates`
        of the current state, computed by the compiled kernel the PD controller uses).
        ``as_array``: one ``(n_joints, 6)`` array instead (rows in ``model.joints.names``
        order, zero beyond each joint's coordinates, as the kernel pads them), the layout a
        controller may return to :meth:`run`."""
        js = self.model.joints
        c = np.empty((len(js), 6))
        coordinates_kernel(self.x, self.q, js.parent, js.child, js.p_a, js.p_b, js.q_off,
                           js.free, js.translational_dof, js.rotational_dof, js.rot_axis, c)
        return c if as_array else self._by_joint(c)

    def minimal_velocities(self, as_array: bool = False
                           ) -> dict[str, np.ndarray] | np.ndarray:
        """Current joint coordinate rates by joint name (:meth:`MaximalModel.joint_velocities`
        of the current state, computed by the compiled kernel the PD controller uses).
        ``as_array``: as in :meth:`minimal_coordinates`."""
        js = self.model.joints
        c = np.empty((len(js), 6))
        joint_rates_kernel(self.x, self.q, self.v, self.w, js.parent, js.child, js.p_b,
                           js.q_off, js.free, js.dof, js.rotational_dof, c)
        return c if as_array else self._by_joint(c)

    def _by_joint(self, c: np.ndarray) -> dict[str, np.ndarray]:
        """Rows of padded per-joint values (n_joints, 6) by joint name, cut to each joint's
        coordinates."""
        js = self.model.joints
        return {n: c[k, :d] for k, (n, d) in enumerate(zip(js.names, js.dof, strict=True))}

    def run(self, steps: int, controller: Callable | None = None,
            progress: bool | None = None, record="all") -> Trajectory:
        """Simulate ``steps`` steps from the current state.

        ``controller(sim)`` is called before each step and returns ``{joint name: inputs}``
        (forces/torques along the joint's coordinates) for actuated joints, or ``None``, or an
        array that broadcasts to ``(n_joints, 6)`` as :meth:`step` takes (rows in
        ``model.joints.names`` order, zero on passive joints and beyond each joint's
        coordinates; :meth:`minimal_coordinates` ``(as_array=True)`` reads the state in that
        layout): the array form skips the per-joint conversion of the mapping.

        ``record`` selects the :class:`Trajectory` fields: ``"all"`` (default), ``"states"``
        (``t, x, q, v, w, iterations``: no residual histories or contact variables stored per
        step) or a field name or names, kept with the states (``coordinate_names`` follows
        ``minimal_*``, ``contact_names`` follows ``contact_distance`` / ``complementarity``);
        the other fields read ``None``. The step loop only copies the states (and what is
        recorded) into preallocated arrays; derived fields (energies, minimal coordinates,
        constraint violation, contact distances, complementarity) are computed, vectorized
        over time, on first access.

        Without a controller or with a :func:`pd_controller` (and with the compiled kernels:
        ``backend`` ``"auto"`` or ``"compiled"``) the step loop itself is compiled
        (:meth:`_run_compiled`, chunks of up to 4096 steps, the progress bar updated between
        them): the same steps as :meth:`step`, bit for bit, without its per-step Python
        overhead (the PD controller's inputs computed inside the loop, its targets in Python
        ahead of each chunk: :class:`PDController`). With another controller the loop calls
        it and :meth:`step` from Python. Either way a step that does not converge is
        taken in halves (:attr:`halvings`), and a failing step raises its
        :class:`NewtonError` with the simulation left at the state before that step (``t``
        included), as after :meth:`step`.

        Raises
        ------
        ValueError
            ``steps < 0`` or an unknown ``record``.
        NewtonError
            A step failed (as from :meth:`step`).
        """
        steps = int(steps)
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        keep = _record_fields(record)
        m = self.model
        T = steps + 1
        xs, qs = np.empty((T, m.n_bodies, 3)), np.empty((T, m.n_bodies, 4))
        vs, ws = np.empty_like(xs), np.empty_like(xs)
        its = np.zeros(T, dtype=np.int64)
        hist = [] if "residual_history" in keep else None
        contacts = self.system.contacts
        cvar = None
        if "complementarity" in keep:
            cvar = [np.zeros((T, len(g), g.size)) for g in contacts]
            for buf, u in zip(cvar, self.contact_variables, strict=True):
                buf[0] = u
        t0 = self.t
        xs[0], qs[0], vs[0], ws[0] = self.x, self.q, self.v, self.w
        show = steps >= 200 if progress is None else progress
        # the compiled loop only stands for Simulation.step itself (not an override)
        pd = controller if isinstance(controller, PDController) else None
        compiled = ((controller is None or pd is not None) and type(self).step is Simulation.step
                    and "step" not in self.__dict__
                    and (self._compiled_step or self._compiled_contacts))
        flat = None
        if compiled:
            flat = self._run_compiled(steps, (xs, qs, vs, ws, its), hist is not None, cvar, show,
                                      pd)
            hist = None
        else:
            loop = (tqdm(range(1, T), desc=self.spec.name, leave=False) if show
                    else range(1, T))
            step = self.step
            for k in loop:
                its[k] = step(self._forces(controller(self)) if controller is not None
                              else None)
                xs[k], qs[k], vs[k], ws[k] = self.x, self.q, self.v, self.w
                if hist is not None:
                    hist.append(self.last_residuals)
                if cvar:
                    for buf, u in zip(cvar, self.contact_variables, strict=True):
                        buf[k] = u
        traj = Trajectory(t=t0 + self.dt * np.arange(T), x=xs, q=qs, v=vs, w=ws,
                          iterations=its,
                          residual_history=None if hist is None else tuple(hist))
        object.__setattr__(traj, "_recording", _Recording(
            m, self.dt, contacts, xs, qs, vs, ws, cvar, keep, history=flat, its=its))
        return traj

    def _halve_in_run(self, code: int, pos: int, target: float, history: np.ndarray,
                      contact: bool, record, k: int, cols, pd=None) -> None:
        """A step of :meth:`_run_compiled` that failed with ``code``: its error raised unless
        it is one that halving retries (:data:`_HALVED_ERRORS`) and the step converges in halves
        (:meth:`_halved_step`, with the PD controller ``pd``'s inputs at this state, as the
        failed step took them), recorded into row ``k`` of ``record`` and ``cols``."""
        try:
            if contact:
                self._previous = None
                self._contact_error(code, pos, target, history)
            self._raise(code, pos, history)
        except _HALVED_ERRORS as failed:
            iterations = self._retry_in_halves(failed, None if pd is None else pd.forces(self))
        xs, qs, vs, ws, its = record
        xs[k], qs[k], vs[k], ws[k], its[k] = self.x, self.q, self.v, self.w, iterations
        if cols is not None:
            cols[k] = np.concatenate([u.ravel() for u in self.contact_variables])

    def _run_compiled(self, steps: int, record, residuals: bool, cvar, show: bool, pd=None):
        """The step loop of :meth:`run` without a controller or with the PD controller ``pd``
        (its targets evaluated ahead of each chunk at the times of its steps,
        :meth:`PDController.schedule`), in compiled chunks
        (:meth:`StepSystem.run_compiled`, :meth:`StepSystem.contact_run`): the same steps as
        :meth:`step` (bit for bit), recorded into ``record = (xs, qs, vs, ws, its)`` and, per
        group, ``cvar`` (if not ``None``); a step that does not converge is taken in halves
        from Python (:meth:`_halve_in_run`) and the compiled loop goes on after it. The
        chunks start at 16 steps and double while one takes less than 50 ms (up to
        ``_RUN_CHUNK`` steps, fewer with residual histories and a large ``max_iter``), so the
        progress bar (``show``) and ``KeyboardInterrupt`` are served between them; the state
        (``t``, ``x, q, v, w``, the extrapolation and contact variables, ``last_residuals``)
        is that of the step loop after every chunk and, after a failing step, the error is
        the one :meth:`step` raises, with the same state.

        Returns the residual max-norms of every step, one after the other (``residuals``), or
        ``None``.
        """
        sys = self.system
        contact = self._compiled_contacts
        cols = None
        extrapolate = (self.extrapolate and self.contact_extrapolation if contact
                       else self.extrapolate)

        def prepare() -> bool:
            """Set up the compiled loop from the current state; whether a last step exists
            to extrapolate from (``started``)."""
            if contact:
                sys.set_contact_variables(self.contact_variables,     # the warm start
                                          self._contact_iterations)
                started = self._previous is not None
                if self._previous is None:
                    self._previous = (np.empty_like(self.v), np.empty_like(self.w),
                                      np.empty_like(self._lam))
                return started
            started = self._previous is not None and self.extrapolate
            if self._previous is None:      # start_step writes the current state into them
                self._previous = (self.v.copy(), self.w.copy(), self._lam.copy())
            return started

        started = prepare()
        if contact and cvar:
            rows = sys.contact_rows()
            cols = np.zeros((steps + 1, rows.size))
        bar = tqdm(total=steps, desc=self.spec.name, leave=False) if show else None
        pieces = []
        hflat = None
        chunk, first, todo = 16, 1, steps
        # the residual histories of a chunk take at most 2^18 entries (2 MB)
        most = max(16, min(_RUN_CHUNK, (1 << 18) // (self.max_iter + 1))) if residuals \
            else _RUN_CHUNK
        try:
            while todo:
                count = min(chunk, todo)
                if residuals and (hflat is None or hflat.size < count * (self.max_iter + 1)):
                    hflat = np.empty(count * (self.max_iter + 1))
                control = None
                if pd is not None:
                    times, tk = [], self.t
                    for _ in range(count):      # the times step() would see: t += Δt
                        times.append(tk)
                        tk += self.dt
                    control = (pd.schedule(self, times), pd.work(self))
                start = time.perf_counter()
                if contact:
                    code, it, pos, target, done, t, used, history = sys.contact_run(
                        first, count, self.t, self.x, self.q, self.v, self.w, self._lam,
                        self._previous, started, extrapolate, self.tol, self.max_iter,
                        warm_start=self.warm_start, refine=self.refine,
                        refine_atol=self.refine_atol, record=record,
                        hflat=hflat if residuals else None,
                        contact_rows=None if cols is None else rows, contacts_out=cols,
                        reuse=self.reuse_factorization, quiet_floor=self.quiet_floor,
                        control=control)
                else:
                    target = 0.0
                    code, it, pos, done, t, used, history = sys.run_compiled(
                        first, count, self.t, self.x, self.q, self.v, self.w, self._lam,
                        self._previous, started, extrapolate, self.tol, self.max_iter, record,
                        hflat if residuals else None, reuse=self.reuse_factorization,
                        control=control)
                elapsed = time.perf_counter() - start
                self.t = t
                self._residuals = history
                if residuals:
                    pieces.append(hflat[:used].copy())
                if done:
                    started = True
                    if contact:
                        self.contact_variables = sys.contact_variables()
                if contact:
                    self._contact_iterations = sys.last_contact_iterations()
                if pd is not None and code == NewtonStatus.CONVERGED and done < count:
                    pd.check(self)          # stopped before a step at which the robot fell
                    raise AssertionError("the compiled loop stopped for a fall that "
                                         "PDController.check does not see")
                if code != NewtonStatus.CONVERGED:
                    k = first + done                    # the failing step's row
                    self._halve_in_run(code, pos, target, history, contact, record,
                                       k, cols, pd)
                    if residuals:
                        pieces.append(self._residuals)
                    done += 1
                if bar is not None:
                    bar.update(done)
                first += done
                todo -= done
                if code != NewtonStatus.CONVERGED and todo:
                    started = prepare()         # after a halved step, as the step loop
                if elapsed < 0.05:
                    chunk = min(2 * chunk, most)
        finally:
            if bar is not None:
                bar.close()
        if cvar and cols is not None:
            a = 0
            for buf, grp in zip(cvar, sys.contacts, strict=True):
                n = len(grp) * grp.size
                buf[1:] = cols[1:, a:a + n].reshape(steps, len(grp), grp.size)
                a += n
        return np.concatenate(pieces + [np.zeros(0)]) if residuals else None


#: The errors of a step that :attr:`Simulation.halvings` retries in halves (a singular
#: pivot is not among them: redundant joints stay singular in halves).
_HALVED_ERRORS: tuple[type[NewtonError], ...] = (ConvergenceError,)

#: Fraction to the boundary of the interior-point steps (Nocedal & Wright eq. 19.9): shared
#: with the compiled step, as the warm start's floor (warm_floor).
_TAU = TAU


def _rotation_rate(w: np.ndarray, dt: float) -> np.ndarray:
    """``θ a / Δt`` for the integrator's ``ω = (2/Δt) sin(θ/2) a`` (eq. 13): the rotation angle
    per step over the step, instead of its chord."""
    n = np.linalg.norm(w, axis=-1, keepdims=True)
    x = np.minimum(0.5 * dt * n, 1.0)
    small = x < 1e-8
    return w * np.where(small, 1.0 + x * x / 6.0, np.arcsin(x) / np.where(small, 1.0, x))


def _products(grp, u) -> list[np.ndarray]:
    """Complementarity products of one contact group's variables."""
    g, sp, beta, eta, psi, spsi = grp.split(u)
    out = [g * sp]
    if grp.m:
        out += [(beta * eta).ravel(), psi * spsi]
    return out


def _backtrack(residual, s, ds, alpha, merit, measure, halvings: int = 40):
    """Halving line search (2023 App. D, Alg. 5): the first ``s + α ds`` with
    ``measure(residual) < merit``, as ``(s_new, f_new)``; ``None`` if none is found."""
    for _ in range(halvings):
        trial = s + alpha * ds
        ft = residual(trial)
        if measure(ft) < merit:            # NaN (|ω| >= 2/Δt) compares False: halve
            return trial, ft
        alpha *= 0.5
    return None


def _norm2(f: np.ndarray) -> float:
    """Euclidean norm (NaN for a non-finite ``f``, which fails every ``<`` test)."""
    return float(np.sqrt(np.dot(f, f)))


def _norm(f: np.ndarray) -> float:
    n = float(np.max(np.abs(f))) if f.size else 0.0
    return n if np.isfinite(n) else np.inf
