"""The simplified-Newton rule of the maximal-coordinate step (``Simulation.reuse_factorization``,
:data:`dynamics.maximal.newton_kernels.CHORD_RATE`): an iteration after a 100-fold reduction
first tries the last factorization. It must reach the solutions of full Newton to the
tolerance, with at most two more (cheap) iterations and fewer factorizations; the compiled
kernel and the Python loop must take the same iterations."""
from dataclasses import replace

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import Simulation, StepSystem
from dynamics.maximal.step_system import quaternion_update

SPECS = {
    "revolute": lambda: models.pendulum(6),
    "spherical": lambda: models.pendulum(4, joint="spherical"),
    "loop": models.fourbar,                             # cyclic graph: explicit LDU factor
    "damped": lambda: models.pendulum(3, damper=0.3),   # forced_step_kernel
    "spring": lambda: replace(models.pendulum(3), joints=tuple(
        replace(j, spring=40.0) for j in models.pendulum(3).joints)),
}


def _run(spec, reuse, steps=200, dt=0.01, python=False):
    sim = Simulation(spec, dt=dt)
    sim.reuse_factorization = reuse
    factors = []
    if python:                          # the readable path: NumPy step, Python Newton loop
        sim.system = StepSystem(sim.model, sim.dt, kernels="reference")
        sim._compiled_step = False
        plain_factor = sim.system.factor

        def counting_factor(s):
            factors.append(1)
            plain_factor(s)
        sim.system.factor = counting_factor
    return sim.run(steps, progress=False), len(factors)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_reuse_reaches_full_newtons_solutions(name):
    spec = SPECS[name]()
    reused, _ = _run(spec, True)
    full, _ = _run(spec, False)
    assert np.abs(reused.x - full.x).max() < 1e-9
    assert np.abs(reused.v - full.v).max() < 1e-7
    assert reused.constraint_violation.max() < 1e-9
    # chord steps are cheap (a residual and a solve): up to two more per step (stiff springs)
    assert np.all(reused.iterations <= full.iterations + 2)
    assert reused.iterations[1:].mean() <= full.iterations[1:].mean() + 1.5
    for h in reused.residual_history:
        assert h[-1] < 1e-10


def test_python_loop_factors_about_once_per_step_with_reuse():
    """Counted on the Python Newton loop (``StepSystem.factor`` calls): two Newton iterations
    per step, and with reuse the second is a chord step on the first one's factorization."""
    spec = models.pendulum(5)
    reused, n_reused = _run(spec, True, steps=60, python=True)
    full, n_full = _run(spec, False, steps=60, python=True)
    assert n_full == full.iterations.sum()
    assert n_reused < 0.6 * reused.iterations.sum()
    assert np.abs(reused.x - full.x).max() < 1e-10


@pytest.mark.parametrize("name", ["revolute", "damped"])
def test_compiled_kernel_and_python_loop_take_the_same_iterations(name):
    """The compiled ``newton_kernel`` and ``Simulation._newton_loop`` apply the same rule:
    the same iteration counts, the same states to rounding."""
    spec = SPECS[name]()
    compiled, _ = _run(spec, True, steps=80)
    python, n = _run(spec, True, steps=80, python=True)
    np.testing.assert_array_equal(compiled.iterations, python.iterations)
    assert np.abs(compiled.x - python.x).max() < 1e-11
    assert n < python.iterations.sum()


def test_far_starts_converge_to_full_newtons_solution():
    """From starts far from the solution (random velocities of up to 5 rad/s added to the
    state, where the first iterations contract little and chord steps get rejected), the
    compiled Newton with reuse decreases the residual at every iteration and reaches full
    Newton's solution."""
    spec = models.pendulum(4)
    sim = Simulation(spec, dt=0.01)
    sim.run(20, progress=False)
    S = sim.system
    rng = np.random.default_rng(3)
    S.begin(sim.x + sim.dt * sim.v, quaternion_update(sim.q, sim.w, sim.dt), sim.v, sim.w)
    tol = 1e-10
    for _ in range(10):
        s0 = S.pack(sim.v + rng.uniform(-1, 1, sim.v.shape),
                    sim.w + rng.uniform(-5, 5, sim.w.shape), np.zeros((len(sim.model.joints), 6)))
        sa, sb = s0.copy(), s0.copy()
        ca, ita, _, ha = S.newton(sa, tol, 50, True)
        cb, itb, _, hb = S.newton(sb, tol, 50, False)
        assert ca == cb == 0
        assert np.all(ha[1:] < ha[:-1])
        assert ha[-1] < tol and hb[-1] < tol
        np.testing.assert_allclose(sa, sb, atol=1e-9 * max(1.0, np.abs(sb).max()))
        assert ita <= itb + 2
