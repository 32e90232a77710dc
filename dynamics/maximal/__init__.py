"""Maximal-coordinate variational integrator (Brüdigam et al. 2023 §2-4, App. A, B, D).

>>> from dynamics import models
>>> from dynamics.maximal import Simulation
>>> traj = Simulation(models.double_pendulum(), dt=0.01).run(100, progress=False)
>>> bool(abs(traj.energy[-1] - traj.energy[0]) < 0.1)
True
"""
# Fallen is importable from here; the reference documents it as dynamics.gait_learning.Fallen
from .control import Fallen, PDController, pd_controller  # noqa: F401
from .mechanism import MaximalModel, RegularizationWarning, regularize_singular_bodies
from .simulation import Simulation, Trajectory
from .step_system import ConvergenceError, NewtonError, SingularStepError, StepSystem

__all__ = ["Simulation", "Trajectory", "MaximalModel", "StepSystem", "NewtonError",
           "ConvergenceError", "SingularStepError", "pd_controller", "PDController",
           "regularize_singular_bodies", "RegularizationWarning"]
