"""Every benchmark has one shape: a ``comparisons/<name>_bench.py`` module with a plot function,
one command of ``python -m comparisons`` writing CSV + JSON + PNG; the old module names
(``comparisons.batch``, ``comparisons.scale``) still import, with a ``DeprecationWarning``."""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys

import pytest

import comparisons
from comparisons.__main__ import main

#: command -> (module, plot function) of every benchmark command (``run``: the suites).
COMMANDS = {"batch": ("batch_bench", "plot_batch"),
            "constraints": ("constraints_bench", "plot_constraints"),
            "dynamics": ("dynamics_bench", "plot_pendulum_benchmark"),
            "contacts": ("contact_bench", "plot_sphere_chain"),
            "contact-sweep": ("contact_sweep_bench", "plot_contact_sweep"),
            "urdf": ("urdf_bench", "plot_urdf"),
            "minimal": ("minimal_bench", "plot_minimal"),
            "general-joints": ("general_joints_bench", "plot_general_joints"),
            "scale": ("scale_bench", "plot_scale"),
            "control": ("control_bench", "plot_control")}


def test_every_bench_module_has_a_command_and_a_plot():
    benches = {m.name for m in pkgutil.iter_modules(comparisons.__path__)
               if m.name.endswith("_bench")}
    assert benches == {module for module, _ in COMMANDS.values()}
    for module, plot in COMMANDS.values():
        mod = importlib.import_module(f"comparisons.{module}")
        assert plot in mod.__all__ and callable(getattr(mod, plot)), module
    with pytest.raises(SystemExit):           # every command is known to the parser
        main(["--help"])
    for command in COMMANDS:
        with pytest.raises(SystemExit) as exit_:
            main([command, "--help"])
        assert exit_.value.code == 0


@pytest.mark.parametrize("old, new", [("batch", "batch_bench"), ("scale", "scale_bench")])
def test_old_module_names_warn_and_reexport(old, new, monkeypatch):
    monkeypatch.delitem(sys.modules, f"comparisons.{old}", raising=False)
    with pytest.warns(DeprecationWarning, match=f"comparisons.{new}"):
        mod = importlib.import_module(f"comparisons.{old}")
    target = importlib.import_module(f"comparisons.{new}")
    assert mod.__all__ == target.__all__
    for name in target.__all__:
        assert getattr(mod, name) is getattr(target, name)


PLOT_ROWS = {
    "plot_batch": [
        {"family": "path", "size": 20, "batch": 10, "threads": 1, "batch_s": 1e-3,
         "per_matrix_batch_us": 100.0, "per_matrix_loop_us": 300.0, "python_threads": 2,
         "pool_s": 2e-3},
        {"way": "in-process, 1 thread", "family": "ladder", "size": 500, "batch": 10,
         "workers": 0, "seconds": 1.0, "per_system_us": 1e5},
        {"way": "dask, values from here", "family": "ladder", "size": 500, "batch": 10,
         "workers": 2, "seconds": 0.6, "per_system_us": 6e4}],
    "plot_constraints": [{"n": n, "k": k, "solver": s, "status": "ok", "best_s": 1e-3 * (k + 1)}
                         for n in (10, 20) for k in (0, 5) for s in ("baraff", "superlu")],
    "plot_sphere_chain": [{"n": 0, "case": "box_drop"}] + [
        {"n": n, "maximal_us_per_step": 10.0 * n, "maximal_us_per_iteration": 3.0 * n,
         "mujoco_us_per_step": 2.0 * n} for n in (1, 5)],
    "plot_contact_sweep": [{"n": str(n), "friction": str(f), "velocity": str(v),
                            "status": "failed" if f > 0.6 and n == 100 else "ok"}
                           for n in (10, 100) for f in (0.3, 0.8) for v in (0.5, 1.5)],
    "plot_minimal": [{"dof": d, "solver": s, "seconds": 0.01 * d}
                     for d in (2, 10) for s in ("newton", "riqn")],
    "plot_general_joints": [{"case": "RC20", "dofs": 20, "numpy_aba_ms": 0.1,
                             "compiled_aba_ms": 0.01, "general_aba_ms": None,
                             "pinocchio_aba_ms": "", "paper_method_I_ms": 0.02}],
    "plot_urdf": [{"robot": "arm", "dof": 6, "maximal_step_us": 50.0, "minimal_step_us": 5.0,
                   "pinocchio_step_us": None}],
    "plot_control": [{"case": "chain", "dt": 0.005, "compiled_us": 20.0, "python_us": 90.0,
                      "mujoco_us": 11.0, "pinocchio_us": None},
                     {"case": "quadruped", "dt": "0.002", "compiled_us": "70", "python_us": "160",
                      "mujoco_us": "", "pinocchio_us": ""}],
    "plot_scale": [{"family": "path", "nodes": str(n), "status": "ok",
                    "gs_refactor_solve_s": str(1e-7 * n), "cholmod_refactor_solve_s": "",
                    "gs_rss_used": str(100 * n), "cholmod_rss_used": str(200 * n)}
                   for n in (100, 1000)],
}


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "dynamics"])
def test_plots_from_rows(command, tmp_path):
    pytest.importorskip("matplotlib")
    module, plot = COMMANDS[command]
    fn = getattr(importlib.import_module(f"comparisons.{module}"), plot)
    path = tmp_path / f"{command}.png"
    fn(PLOT_ROWS[plot], path)
    assert path.stat().st_size > 1000


def test_general_joints_command_writes_csv_json_png(tmp_path):
    pytest.importorskip("sympy")
    pytest.importorskip("matplotlib")
    out = tmp_path / "gj.csv"
    assert main(["general-joints", "--revolute", "5", "--torus", "2", "--no-windmill",
                 "--number", "2", "--repeats", "1", "--out", str(out)]) == 0
    assert "RC5" in out.read_text() and out.with_suffix(".png").exists()
    assert "argv" in json.loads(out.with_suffix(".json").read_text())
