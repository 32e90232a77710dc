"""Maximal-coordinate dynamics: one :meth:`Simulation.step` and a short :meth:`Simulation.run`
of an n-link pendulum (:func:`dynamics.models.pendulum`, dt = 10 ms)."""

from __future__ import annotations

from dynamics import models
from dynamics.maximal import Simulation

DT = 0.01
#: Steps of the timed ``run`` and of the warm-up (tests/test_asv_benchmarks.py shrinks them).
RUN_STEPS = 100
WARMUP_STEPS = 5


class Pendulum:
    params = ([10, 100],)
    param_names = ("links",)

    def setup(self, links: int) -> None:
        self.sim = Simulation(models.pendulum(links), dt=DT)
        # warm-up: step() and run() once (JIT compilation or cache load)
        self.sim.step()
        self.sim.run(WARMUP_STEPS, progress=False)

    def time_step(self, links: int) -> None:
        """One variational-integrator step (Newton on the graphsolve-factored system)."""
        self.sim.step()

    def time_run(self, links: int) -> None:
        """``Simulation.run`` of RUN_STEPS steps, recording the trajectory."""
        self.sim.run(RUN_STEPS, progress=False)
