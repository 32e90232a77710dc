"""Each figure module runs on a tiny configuration and writes CSV + PNG (no timing asserts)."""

import csv

import pytest

from paper_figures import FIGURES
from paper_figures.__main__ import main
from paper_figures._report import (
    BASES,
    COMPARATOR_KINDS,
    VERDICTS,
    basis_counts,
    claim,
    claim_basis,
    comparator_kind,
    write_report,
)


def check_linear_solver_rows(rows: list[dict]) -> None:
    """The default check (figures without a ``check`` hook: the linear-solver benchmarks):
    every successful row solved its system to a small backward error."""
    ok = [r for r in rows if r.get("status", "ok") == "ok"]
    assert ok and all(float(r["residual"]) < 1e-9 for r in ok)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_module_tiny(name, tmp_path):
    mod = FIGURES[name]
    rows = mod.compute(quick=True, **mod.TINY)
    assert any(r.get("status", "ok") == "ok" for r in rows)
    assert {r["solver"] for r in rows} == set(mod.SOLVERS)
    # a figure checks its own physics or accuracy with a ``check(rows)`` hook (dynamics
    # figures: constraint violation, energy error, ...); otherwise residuals are required
    getattr(mod, "check", check_linear_solver_rows)(rows)
    png = tmp_path / f"{name}.png"
    mod.plot(rows, png)
    assert png.stat().st_size > 1000
    assert mod.summarize(rows)
    if hasattr(mod, "claims"):                   # REPORT.md rows
        for c in mod.claims(rows):
            assert c["verdict"] in VERDICTS and c["claim"] and c["ours"], c
            assert set(c["against"]) <= set(mod.COMPARATORS), (c["against"], c["claim"])
            assert claim_basis(c, mod.COMPARATORS) in BASES


def test_every_figure_module_follows_the_protocol():
    for name, mod in FIGURES.items():
        assert mod.NAME == name and mod.TITLE and mod.SOLVERS and isinstance(mod.TINY, dict)
        for fn in ("compute", "plot", "summarize"):
            assert callable(getattr(mod, fn)), (name, fn)


def test_every_figure_module_declares_its_comparators():
    for name, mod in FIGURES.items():
        assert isinstance(mod.COMPARATORS, dict), name
        assert set(mod.COMPARATORS) <= set(mod.SOLVERS), (name, set(mod.COMPARATORS))
        for solver, role in mod.COMPARATORS.items():
            kind = comparator_kind(role)
            assert kind in COMPARATOR_KINDS
            # substitutes and additions say why; "paper's own" may stand alone
            assert kind == "paper's own" or len(role) > len(kind) + 10, (name, solver, role)
    with pytest.raises(ValueError, match="starts with one of"):
        comparator_kind("ours")


def test_claim_basis_and_the_report_counts(tmp_path):
    comp_a = {"x": "paper's own", "y": "substitute: closed source", "z": "addition: extra"}
    rows_a = [claim("P", "c1", "1", "1", "reproduced", against=("x",)),
              claim("P", "c2", "1", "1", "reproduced", against=("x", "y")),
              claim("P", "c3", "1", "1", "not reproduced", against=("z",)),
              claim("P", "c4", "1", "1", "reproduced", against=("x", "z")),
              claim("P", "c5", "1", "1", "reproduced")]
    rows_b = [claim("Q", "d1", "1", "1", "partly reproduced", against=("w",))]
    comp_b = {"w": "substitute: the paper's code is not public"}
    assert [claim_basis(r, comp_a) for r in rows_a] == [
        "paper's own", "substitute", "addition", "paper's own", "none"]
    claims = {"fig_a: A": rows_a, "fig_b: B": rows_b, "fig_c: C": []}
    comparators = {"fig_a: A": comp_a, "fig_b: B": comp_b, "fig_c: C": {}}
    assert basis_counts(claims, comparators) == {"paper's own": 2, "substitute": 2,
                                                 "addition": 1, "none": 1}
    with pytest.raises(KeyError):
        claim_basis(rows_b[0], comp_a)
    with pytest.raises(TypeError):
        claim("P", "c", "1", "1", "reproduced", against="x")
    path = tmp_path / "REPORT.md"
    write_report(claims, path, True, [], comparators)
    text = path.read_text()
    assert ("Claims checked against the papers' own comparators: 2, substitutes: 2, "
            "comparators added here only: 1, no comparator (our method alone): 1") in text
    assert "- `y`: substitute: closed source" in text
    assert "- `w`: substitute: the paper's code is not public" in text
    assert "Comparators: none" in text                       # fig_c
    assert "| reproduced | substitute: x, y |" in text
    assert "| reproduced | — |" in text                      # c5


def test_command_line_writes_csv_and_png(tmp_path, monkeypatch):
    mod = FIGURES["fig09b_ladder"]
    monkeypatch.setattr(mod, "_rungs", lambda quick: [1, 2])
    assert main(["--quick", "--only", "fig09b_ladder", "--out", str(tmp_path)]) == 0
    with (tmp_path / "fig09b_ladder.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * len(mod.SOLVERS)
    assert (tmp_path / "fig09b_ladder.png").exists()


def test_command_line_writes_the_claims_report(tmp_path, monkeypatch):
    mod = FIGURES["fig07d_box_drop"]
    compute = mod.compute
    monkeypatch.setattr(mod, "compute", lambda quick: compute(quick=quick, **mod.TINY))
    assert main(["--quick", "--only", "fig07d_box_drop", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "REPORT.md").read_text()
    assert "43 µm" in text and "| verdict |" in text and "Not covered by this run" in text
    assert "- `mujoco-euler`: paper's own" in text
    assert "Claims checked against the papers' own comparators: 1, substitutes: 0" in text


def test_looped_pendulum_of_fig2020_fig5_closes_one_loop():
    from dynamics.maximal import Simulation
    from paper_figures.fig2020_fig5 import looped_pendulum

    for joint in ("revolute", "spherical"):
        spec = looped_pendulum(4, joint)
        assert len(spec.bodies) == 4 and len(spec.joints) == 5
        tr = Simulation(spec, 0.01).run(10, progress=False)   # raises if the loop is open
        assert tr.constraint_violation.max() < 1e-9
    with pytest.raises(ValueError):
        looped_pendulum(2)
