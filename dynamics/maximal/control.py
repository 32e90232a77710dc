"""Controllers for :meth:`Simulation.run`: functions of the simulation returning joint inputs."""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..spec import SpecError
from .control_kernels import control_work, pd_forces

__all__ = ["pd_controller", "PDController"]


def pd_controller(targets: Mapping[str, float] | Callable[[float], Mapping[str, float]],
                  kp: float | Mapping[str, float], kd: float | Mapping[str, float],
                  rates: Mapping[str, float] | Callable[[float], Mapping[str, float]]
                  | None = None) -> PDController:
    """Joint-space PD control ``u = kp (θ_d - θ) + kd (θ̇_d - θ̇)`` for one-coordinate joints.

    ``targets`` maps joint names to desired coordinates, or is a function of time returning
    such a mapping (a gait, as Algorithm 6 of Brüdigam et al. 2023). ``rates``: the desired
    rates ``θ̇_d`` in the same form (a tracking controller, as Algorithm 8); without it
    ``θ̇_d = 0``, ``u = kp (θ_d - θ) - kd θ̇``. ``kp``/``kd`` are numbers or per-joint
    mappings. The joints must be ``actuated``, revolute or prismatic; an angle's error is
    taken the short way round (in ``[-π, π)``).

    Returns
    -------
    PDController
        ``controller(sim) -> {joint: [u]}`` for :meth:`Simulation.run`, which runs it inside
        its compiled step loop (:class:`PDController`).
    """
    return PDController(targets, kp, kd, rates)


class PDController:
    """The controller :func:`pd_controller` makes.

    Called with a simulation, it returns ``{joint: [u]}`` as any controller of
    :meth:`Simulation.run`. :meth:`Simulation.run` recognizes it and evaluates it inside its
    compiled step loop (:func:`.control_kernels.pd_forces`): only the targets, functions of
    time, are evaluated in Python, once per step ahead of each compiled chunk. The
    coordinates, rates and inputs are those of a call from Python, bit for bit.
    :meth:`forces` gives the inputs as the ``(n_joints, 6)`` array :meth:`Simulation.step`
    takes.

    A call with an object that is not a :class:`Simulation` reads its
    ``minimal_coordinates()``, ``minimal_velocities()`` and ``t`` (every coordinate is then
    taken as an angle).
    """

    def __init__(self, targets, kp, kd, rates=None):
        self.targets, self.kp, self.kd, self.rates = targets, kp, kd, rates
        self._bound = None          # (model, {name: joint index}, kp, kd, angle, work)

    def __call__(self, sim) -> dict[str, list[float]]:
        if not hasattr(sim, "model") or not hasattr(sim, "spec"):
            return self._generic(sim)
        u, active = self._inputs(sim)
        names = sim.model.joints.names
        return {names[k]: [float(u[k, 0])] for k in np.flatnonzero(active)}

    def forces(self, sim) -> np.ndarray | None:
        """The inputs at ``sim``'s state and time as an ``(n_joints, 6)`` array for
        :meth:`Simulation.step` (zero but for column 0 of the driven joints), or ``None`` when
        the targets name no joint (as an empty mapping from :meth:`__call__`)."""
        u, active = self._inputs(sim)
        return u if active.any() else None

    def _inputs(self, sim):
        control = self.schedule(sim, [sim.t])
        out = np.zeros((len(control[0]), 6))
        pd_forces(0, sim.x, sim.q, sim.v, sim.w, control, self.work(sim), out)
        return out, control[5][0]

    def work(self, sim) -> tuple:
        """:func:`.control_kernels.control_work` for ``sim``'s model (made once per model)."""
        return self._bind(sim)[4]

    def schedule(self, sim, times) -> tuple:
        """The controller's arrays for steps starting at ``times`` (in order), as
        :func:`.control_kernels.pd_forces` takes them: ``(kp, kd, angle, goal, goal_rate,
        active)``. Raises :class:`~dynamics.spec.SpecError` for a joint the model does not
        have or that is not actuated and ``ValueError`` for one with more than one
        coordinate or a missing gain, before any step."""
        index, kp, kd, angle, _ = self._bind(sim)
        n = len(kp)
        rows = len(times)
        goal, goal_rate = np.zeros((rows, n)), np.zeros((rows, n))
        active = np.zeros((rows, n), dtype=np.bool_)
        constant = not callable(self.targets) and not callable(self.rates)
        for r, t in enumerate(times):
            if constant and r:
                goal[r], goal_rate[r], active[r] = goal[0], goal_rate[0], active[0]
                continue
            targets = self.targets(t) if callable(self.targets) else self.targets
            rates = ({} if self.rates is None else self.rates(t) if callable(self.rates)
                     else self.rates)
            for name, value in targets.items():
                k = index.get(name)
                if k is None:
                    self._refuse(sim, name)
                goal[r, k] = float(value)
                goal_rate[r, k] = float(rates.get(name, 0.0))
                active[r, k] = True
        return kp, kd, angle, goal, goal_rate, active

    def _bind(self, sim):
        """Per joint of ``sim``'s model: the index of the drivable joints by name, the gains
        (NaN where a mapping has none) and whether the coordinate is an angle; made once per
        model."""
        model = sim.model
        if self._bound is None or self._bound[0] is not model:
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
            self._bound = (model, index, kp, kd, angle, control_work(js))
        return self._bound[1:]

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
        return {"targets": self.targets, "kp": self.kp, "kd": self.kd, "rates": self.rates}

    def __setstate__(self, state):
        self.__init__(state["targets"], state["kp"], state["kd"], state["rates"])


def _gain(g, name):
    if isinstance(g, Mapping):
        return float(g[name]) if name in g else None
    return float(g)
