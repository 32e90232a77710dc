"""Controllers for :meth:`Simulation.run`: functions of the simulation returning joint inputs."""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

__all__ = ["pd_controller"]


def pd_controller(targets: Mapping[str, float] | Callable[[float], Mapping[str, float]],
                  kp: float | Mapping[str, float], kd: float | Mapping[str, float],
                  rates: Mapping[str, float] | Callable[[float], Mapping[str, float]]
                  | None = None):
    """Joint-space PD control ``u = kp (θ_d - θ) + kd (θ̇_d - θ̇)`` for one-coordinate joints.

    ``targets`` maps joint names to desired coordinates, or is a function of time returning
    such a mapping (a gait, as Algorithm 6 of Brüdigam et al. 2023). ``rates``: the desired
    rates ``θ̇_d`` in the same form (a tracking controller, as Algorithm 8); without it
    ``θ̇_d = 0``, ``u = kp (θ_d - θ) - kd θ̇``. ``kp``/``kd`` are numbers or per-joint
    mappings. The joints must be ``actuated``.

    Returns
    -------
    callable
        ``controller(sim) -> {joint: [u]}`` for :meth:`Simulation.run`.
    """
    def gain(g, name):
        return float(g[name]) if isinstance(g, Mapping) else float(g)

    def controller(sim):
        goal = targets(sim.t) if callable(targets) else targets
        goal_rate = ({} if rates is None else rates(sim.t) if callable(rates) else rates)
        pos, vel = sim.minimal_coordinates(), sim.minimal_velocities()
        out = {}
        for name, target in goal.items():
            err = float(target) - float(pos[name][0])
            err = (err + np.pi) % (2 * np.pi) - np.pi       # angles: shortest way round
            rate_err = float(goal_rate.get(name, 0.0)) - float(vel[name][0])
            out[name] = [gain(kp, name) * err + gain(kd, name) * rate_err]
        return out

    return controller
