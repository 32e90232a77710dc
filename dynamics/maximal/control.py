"""Controllers for :meth:`Simulation.run`: functions of the simulation returning joint inputs."""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..spec import SpecError
from .control_kernels import control_work, fallen, pd_forces

__all__ = ["pd_controller", "PDController", "Fallen"]


class Fallen(RuntimeError):
    """The robot fell: raised by a :class:`PDController` with a ``fall`` test before the step
    at which its body is too low or tilted (:func:`dynamics.gait_learning.walk` reports such
    rollouts as fallen). ``args``: message, time (s), the body's x (m). Importable as
    ``dynamics.maximal.Fallen`` and, where the reference documents it,
    ``dynamics.gait_learning.Fallen``."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    @property
    def time(self) -> float:
        return float(self.args[1])

    @property
    def x(self) -> float:
        return float(self.args[2])


def pd_controller(targets: Mapping[str, float] | Callable[[float], Mapping[str, float]],
                  kp: float | Mapping[str, float], kd: float | Mapping[str, float],
                  rates: Mapping[str, float] | Callable[[float], Mapping[str, float]]
                  | None = None, *, fall: tuple[str, float, float] | None = None
                  ) -> PDController:
    """Joint-space PD control ``u = kp (θ_d - θ) + kd (θ̇_d - θ̇)`` for one-coordinate joints.

    ``targets`` maps joint names to desired coordinates, or is a function of time returning
    such a mapping (a gait, as Algorithm 6 of Brüdigam et al. 2023). ``rates``: the desired
    rates ``θ̇_d`` in the same form (a tracking controller, as Algorithm 8); without it
    ``θ̇_d = 0``, ``u = kp (θ_d - θ) - kd θ̇``. ``kp``/``kd`` are numbers or per-joint
    mappings. The joints must be ``actuated``, revolute or prismatic; an angle's error is
    taken the short way round (in ``[-π, π)``).

    ``fall = (body, min_height, max_tilt_deg)``: before each step the controller raises
    :class:`~dynamics.gait_learning.Fallen` if ``body``'s height is below ``min_height`` (m)
    or its z axis is tilted more than ``max_tilt_deg`` from the world's (the state left as
    before that step), so a rollout of a legged robot stops when it falls.

    Returns
    -------
    PDController
        ``controller(sim) -> {joint: [u]}`` for :meth:`Simulation.run`, which runs it inside
        its compiled step loop (:class:`PDController`).
    """
    return PDController(targets, kp, kd, rates, fall=fall)


class PDController:
    """The controller :func:`pd_controller` makes.

    Called with a simulation, it returns ``{joint: [u]}`` as any controller of
    :meth:`Simulation.run`. :meth:`Simulation.run` recognizes it and evaluates it inside its
    compiled step loop (:func:`.control_kernels.pd_forces`): only the targets, functions of
    time, are evaluated in Python, once per step ahead of each compiled chunk (so a run that
    stops early has called them for times it did not reach: they should depend on the time
    alone). The coordinates, rates and inputs are those of a call from Python, bit for bit.
    :meth:`forces` gives the inputs as the ``(n_joints, 6)`` array :meth:`Simulation.step`
    takes.

    A call with an object that is not a :class:`Simulation` reads its
    ``minimal_coordinates()``, ``minimal_velocities()`` and ``t`` (every coordinate is then
    taken as an angle).
    """

    def __init__(self, targets, kp, kd, rates=None, *, fall=None):
        self.targets, self.kp, self.kd, self.rates = targets, kp, kd, rates
        self.fall = None if fall is None else (str(fall[0]), float(fall[1]), float(fall[2]))
        self._bound = None          # (model, {name: joint index}, kp, kd, angle, work, fall)

    def __call__(self, sim) -> dict[str, list[float]]:
        if not hasattr(sim, "model") or not hasattr(sim, "spec"):
            return self._generic(sim)
        self.check(sim)
        u, active = self._inputs(sim)
        names = sim.model.joints.names
        return {names[k]: [float(u[k, 0])] for k in np.flatnonzero(active)}

    def forces(self, sim) -> np.ndarray | None:
        """The inputs at ``sim``'s state and time as an ``(n_joints, 6)`` array for
        :meth:`Simulation.step` (zero but for column 0 of the driven joints), or ``None`` when
        the targets name no joint (as an empty mapping from :meth:`__call__`). Raises
        :class:`~dynamics.gait_learning.Fallen` as :meth:`check`."""
        self.check(sim)
        u, active = self._inputs(sim)
        return u if active.any() else None

    def _inputs(self, sim):
        control = self.schedule(sim, [sim.t])
        out = np.zeros((len(control[0]), 6))
        pd_forces(0, sim.x, sim.q, sim.v, sim.w, control, self.work(sim), out)
        return out, control[5][0]

    def check(self, sim) -> None:
        """Raise :class:`~dynamics.gait_learning.Fallen` if the ``fall`` test finds ``sim``'s
        body fallen (the test of the compiled loop, :func:`.control_kernels.fallen`)."""
        if self.fall is None:
            return
        fall = self._bind(sim)[5]
        if fallen(sim.x, sim.q, fall):
            b = int(fall[0])
            up = 1.0 - 2.0 * (sim.q[b, 1] ** 2 + sim.q[b, 2] ** 2)
            raise Fallen(f"the robot fell at t = {sim.t:.3f} s ({self.fall[0]} height "
                         f"{sim.x[b, 2]:.3f} m, tilt "
                         f"{np.degrees(np.arccos(np.clip(up, -1, 1))):.0f}°)",
                         float(sim.t), float(sim.x[b, 0]))

    def work(self, sim) -> tuple:
        """:func:`.control_kernels.control_work` for ``sim``'s model (made once per model)."""
        return self._bind(sim)[4]

    def schedule(self, sim, times) -> tuple:
        """The controller's arrays for steps starting at ``times`` (in order), as
        :func:`.control_kernels.pd_forces` takes them: ``(kp, kd, angle, goal, goal_rate,
        active, fall)``. Raises :class:`~dynamics.spec.SpecError` for a joint the model does not
        have or that is not actuated and ``ValueError`` for one with more than one
        coordinate or a missing gain, before any step."""
        index, kp, kd, angle, _, fall = self._bind(sim)
        n = len(kp)
        rows = len(times)
        goal, goal_rate = np.zeros((rows, n)), np.zeros((rows, n))
        active = np.zeros((rows, n), dtype=np.bool_)
        constant = not callable(self.targets) and not callable(self.rates)
        names, cols = None, None
        for r, t in enumerate(times[:1] if constant else times):
            targets = self.targets(t) if callable(self.targets) else self.targets
            rates = ({} if self.rates is None else self.rates(t) if callable(self.rates)
                     else self.rates)
            keys = list(targets)
            if keys != names:               # (a gait names the same joints at every step)
                for name in keys:
                    if name not in index:
                        self._refuse(sim, name)
                names, cols = keys, np.array([index[name] for name in keys], dtype=np.int64)
            goal[r, cols] = [float(value) for value in targets.values()]
            if rates:
                goal_rate[r, cols] = [float(rates.get(name, 0.0)) for name in keys]
            active[r, cols] = True
        if constant:                        # every row as the first
            goal[1:], goal_rate[1:], active[1:] = goal[0], goal_rate[0], active[0]
        return kp, kd, angle, goal, goal_rate, active, fall

    def _bind(self, sim):
        """Per joint of ``sim``'s model: the index of the drivable joints by name, the gains
        (NaN where a mapping has none), whether the coordinate is an angle, the work arrays and
        the ``fall`` test's ``[body, min_height, cos(max_tilt)]`` (body -1: none); made once
        per model."""
        model = sim.model
        bound = self._bound             # (one read: another thread may bind another model)
        if bound is None or bound[0] is not model:
            js = model.joints
            index = {}
            kp, kd = np.full(len(js), np.nan), np.full(len(js), np.nan)
            for k, (name, dof) in enumerate(zip(js.names, js.dof, strict=True)):
                if dof != 1 or not sim.spec.joint(name).actuated:
                    continue
                gains = [_gain(g, name) for g in (self.kp, self.kd)]
                if None in gains:
                    continue
                index[name] = k
                kp[k], kd[k] = gains
            angle = np.asarray(js.rotational_dof == 1)
            fall = np.array([-1.0, 0.0, 0.0])
            if self.fall is not None:
                names = [b.name for b in sim.spec.bodies]
                if self.fall[0] not in names:
                    raise SpecError(f"pd_controller fall test: no body named {self.fall[0]!r}")
                fall = np.array([names.index(self.fall[0]), self.fall[1],
                                 np.cos(np.radians(self.fall[2]))])
            bound = self._bound = (model, index, kp, kd, angle, control_work(js), fall)
        return bound[1:]

    def _refuse(self, sim, name):
        """The error for target ``name``, which is not a drivable joint of ``sim``."""
        j = sim.spec.joint(name)                    # SpecError: no such joint
        if not j.actuated:
            raise SpecError(f"joint {name!r} is not actuated (set actuated=True)")
        if j.dof != 1:
            raise ValueError(f"joint {name!r} has {j.dof} coordinates; pd_controller drives "
                             "one-coordinate (revolute, prismatic) joints")
        raise ValueError(f"pd_controller: no gain kp or kd for joint {name!r}")

    def _generic(self, sim):
        goal = self.targets(sim.t) if callable(self.targets) else self.targets
        goal_rate = ({} if self.rates is None else self.rates(sim.t) if callable(self.rates)
                     else self.rates)
        pos, vel = sim.minimal_coordinates(), sim.minimal_velocities()
        out = {}
        for name, target in goal.items():
            err = float(target) - float(pos[name][0])
            err = (err + np.pi) % (2 * np.pi) - np.pi       # angles: shortest way round
            rate_err = float(goal_rate.get(name, 0.0)) - float(vel[name][0])
            kp, kd = _gain(self.kp, name), _gain(self.kd, name)
            if kp is None or kd is None:
                raise ValueError(f"pd_controller: no gain kp or kd for joint {name!r}")
            out[name] = [kp * err + kd * rate_err]
        return out

    def __getstate__(self):
        return {"targets": self.targets, "kp": self.kp, "kd": self.kd, "rates": self.rates,
                "fall": self.fall}

    def __setstate__(self, state):
        PDController.__init__(self, state["targets"], state["kp"], state["kd"],
                              state["rates"], fall=state.get("fall"))


def _gain(g, name):
    if isinstance(g, Mapping):
        return float(g[name]) if name in g else None
    return float(g)
