"""``Simulation.run`` without a controller runs its step loop in compiled chunks
(:mod:`dynamics.maximal.run_kernels`): the same trajectory, iterations, residual histories,
contact variables and final state as the Python loop over ``Simulation.step`` (the reference,
taken here through a controller that returns ``None``), bit for bit, and the same error, at
the same step and with the same state, when a step fails."""
from dataclasses import replace

import numpy as np
import pytest

from dynamics import models
from dynamics.maximal import NewtonError, Simulation

from .test_maximal_force_kernels import chain


def _no_control(sim):
    return None


def _damped_fourbar():
    spec = models.fourbar()
    return replace(spec, joints=tuple(replace(j, spring=1.5, damper=0.3) for j in spec.joints),
                   name="damped_fourbar")


CASES = {
    "pendulum_1": (lambda: models.pendulum(1), 300),
    "pendulum_100": (lambda: models.pendulum(100), 40),
    "spherical_5": (lambda: models.pendulum(5, "spherical"), 120),
    "fourbar": (lambda: models.fourbar(), 120),
    "damped_fourbar": (_damped_fourbar, 120),
    "spring_damper_chain": (lambda: chain("revolute", spring=3.0, damper=0.7), 80),
    "sphere_chain_3": (lambda: models.sphere_chain(3), 80),
}


def _state(sim):
    prev = () if sim._previous is None else tuple(a.copy() for a in sim._previous)
    return (sim.t, sim.x.copy(), sim.q.copy(), sim.v.copy(), sim.w.copy(), sim._lam.copy(), prev,
            [u.copy() for u in sim.contact_variables], sim.last_residuals,
            getattr(sim, "_contact_iterations", -1))


def _assert_same_state(a, b):
    sa, sb = _state(a), _state(b)
    assert sa[0] == sb[0]
    for u, v in zip(sa[1:6], sb[1:6], strict=True):
        np.testing.assert_array_equal(u, v)
    assert len(sa[6]) == len(sb[6])
    for u, v in zip(sa[6], sb[6], strict=True):
        np.testing.assert_array_equal(u, v)
    for u, v in zip(sa[7], sb[7], strict=True):
        np.testing.assert_array_equal(u, v)
    np.testing.assert_array_equal(sa[8], sb[8])
    assert sa[9] == sb[9]


def _assert_same_trajectory(ta, tb):
    for name in ("t", "x", "q", "v", "w", "iterations", "complementarity"):
        np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name), err_msg=name)
    assert len(ta.residual_history) == len(tb.residual_history)
    for ha, hb in zip(ta.residual_history, tb.residual_history, strict=True):
        np.testing.assert_array_equal(ha, hb)


@pytest.mark.parametrize("extrapolate", [True, False])
@pytest.mark.parametrize("case", list(CASES))
def test_compiled_run_equals_the_step_loop(case, extrapolate):
    make, steps = CASES[case]
    fast, ref = Simulation(make(), dt=0.01), Simulation(make(), dt=0.01)
    assert fast._compiled_step or fast._compiled_contacts
    for sim in (fast, ref):
        sim.extrapolate = extrapolate
        sim.contact_extrapolation = extrapolate
    # two runs: the second continues from the first's state (extrapolation, contact warm start)
    for n in (steps, steps // 3):
        ta = fast.run(n, progress=False)
        tb = ref.run(n, controller=_no_control, progress=False)
        _assert_same_trajectory(ta, tb)
        _assert_same_state(fast, ref)
    # and the step loop continues from the compiled run's state as from its own
    assert fast.step() == ref.step()
    _assert_same_state(fast, ref)


def test_compiled_run_records_what_is_asked():
    fast, ref = (Simulation(models.sphere_chain(2), dt=0.01) for _ in range(2))
    ta = fast.run(50, progress=True, record="states")
    tb = ref.run(50, controller=_no_control, progress=False, record="states")
    assert ta.residual_history is None and ta.complementarity is None
    _assert_same_state(fast, ref)
    np.testing.assert_array_equal(ta.x, tb.x)
    ta = fast.run(0, progress=False)
    assert ta.residual_history == () and ta.x.shape[0] == 1


def _failing_pair(make, steps, dt=0.01, **kw):
    """The error and state of the compiled run and of the step loop (no halving: the
    failing step itself)."""
    kw.setdefault("halvings", 0)
    out = []
    for controller in (None, _no_control):
        sim = Simulation(make(), dt=dt, **kw)
        with pytest.raises(NewtonError) as err:
            sim.run(steps, controller=controller, progress=False)
        out.append((str(err.value), sim))
    (ma, a), (mb, b) = out
    assert ma == mb
    _assert_same_state(a, b)
    return ma, a


@pytest.mark.parametrize("tol, max_iter, message", [
    (1e-12, 2, "did not converge in 2 iterations"), (1e-13, 50, "line search failed")])
def test_a_failing_step_mid_run_raises_the_step_loops_error(tol, max_iter, message):
    # pendulum(20) at tol 1e-12 needs 3 iterations first at step 199 (the 4th compiled chunk);
    # at 1e-13 the line search fails at t = 2.17 s
    msg, sim = _failing_pair(lambda: models.pendulum(20), 300, tol=tol, max_iter=max_iter)
    assert message in msg and sim.t > 1.0


def test_a_failing_contact_step_mid_run_raises_the_step_loops_error():
    # sphere_chain(2) needs more than 8 interior-point iterations first at t = 0.3 s
    msg, sim = _failing_pair(lambda: models.sphere_chain(2), 100, max_iter=8)
    assert "interior-point method did not converge" in msg and sim.t > 0.2
    assert sim._previous is None


def test_a_failing_first_step_of_a_continued_run_raises_the_step_loops_error():
    out = []
    for controller in (None, _no_control):
        sim = Simulation(models.pendulum(3), dt=0.01)
        sim.run(40, controller=controller, progress=False)
        sim.max_iter = 1
        with pytest.raises(NewtonError, match="did not converge in 1 iterations") as err:
            sim.run(40, controller=controller, progress=False)
        out.append((str(err.value), sim))
    assert out[0][0] == out[1][0]
    _assert_same_state(out[0][1], out[1][1])
    assert out[0][1].t == pytest.approx(0.4)


def test_an_overridden_step_is_called_by_run():
    sim = Simulation(models.pendulum(2), dt=0.01)
    calls = []

    def step(joint_forces=None):
        calls.append(joint_forces)
        return Simulation.step(sim, joint_forces)

    sim.step = step
    sim.run(5, progress=False)
    assert calls == [None] * 5
