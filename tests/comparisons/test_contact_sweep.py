"""The contact robustness sweep: seeded cases, one CSV row per case written as it finishes,
failures recorded with their time and message, resume."""
import csv

import pytest

from comparisons import contact_sweep_bench as cs
from comparisons.__main__ import main
from dynamics.maximal import NewtonError


def _rows(path):
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_case_parameters_are_seeded_per_case_and_in_range():
    a = [cs.sweep_case(i, 7, (3, 4)) for i in range(20)]
    assert a == [cs.sweep_case(i, 7, (3, 4)) for i in range(20)]
    assert a[5] != cs.sweep_case(5, 8, (3, 4))
    for p in a:
        assert p["n"] in (3, 4)
        assert cs.RANGES["friction"][0] <= p["friction"] <= cs.RANGES["friction"][1]
        assert cs.RANGES["velocity"][0] <= p["velocity"] <= cs.RANGES["velocity"][1]
        assert p["dt"] in cs.RANGES["dt"] and p["n_friction"] in cs.RANGES["n_friction"]


def test_tiny_sweep_writes_a_row_per_case_and_resumes(tmp_path, monkeypatch):
    out = tmp_path / "sweep.csv"
    rows = cs.run_contact_sweep(3, sizes=(1, 2), duration=0.05, out=out, progress=False)
    assert [r["status"] for r in rows] == ["ok"] * 3
    disk = _rows(out)
    assert [int(r["case"]) for r in disk] == [0, 1, 2]
    for r in disk:
        assert float(r["min_distance"]) > -1e-9
        assert float(r["max_complementarity"]) <= 1e-10
        assert int(r["steps"]) == round(0.05 / float(r["dt"]))
    ran = []
    real = cs._run_case
    monkeypatch.setattr(cs, "_run_case",
                        lambda p, d, h: ran.append(p["case"]) or real(p, d, h))
    rows = cs.run_contact_sweep(5, sizes=(1, 2), duration=0.05, out=out, resume=True,
                                progress=False)
    assert ran == [3, 4] and len(rows) == 5
    assert [int(r["case"]) for r in _rows(out)] == [0, 1, 2, 3, 4]
    assert cs.summarize(rows)["cases"] == 5


def test_a_failed_run_is_recorded_with_its_time_and_message(tmp_path, monkeypatch):
    class Jams:
        def __init__(self, spec, dt):
            self.t, self.dt, self.halved_steps = 0.0, dt, 0

        def run(self, steps, progress=False):
            self.t = 3 * self.dt
            raise NewtonError("interior-point method did not converge (test)")

    monkeypatch.setattr(cs, "Simulation", Jams)
    out = tmp_path / "sweep.csv"
    rows = cs.run_contact_sweep(2, sizes=(4,), duration=0.1, out=out, progress=False)
    assert [r["status"] for r in rows] == ["failed", "failed"]
    disk = _rows(out)
    assert disk[0]["message"] == "interior-point method did not converge (test)"
    assert float(disk[0]["fail_t"]) == pytest.approx(3 * float(disk[0]["dt"]))
    assert int(disk[0]["steps"]) == 3
    assert cs.summarize(rows) == {"per_size": {4: (2, 2)}, "failed": 2, "cases": 2}


@pytest.mark.parametrize("kw", [{"sizes": ()}, {"sizes": (0, 3)}, {"cases": 0},
                                {"duration": 0.0}])
def test_bad_arguments_raise_before_any_run(tmp_path, kw):
    args = {"cases": 2, "sizes": (2,), "duration": 0.05, "out": tmp_path / "x.csv", **kw}
    with pytest.raises(ValueError):
        cs.run_contact_sweep(**args, progress=False)
    assert not (tmp_path / "x.csv").exists()


def test_command_line(tmp_path, capsys):
    out = tmp_path / "cs.csv"
    assert main(["contact-sweep", "--cases", "2", "--sizes", "1", "--duration", "0.05",
                 "--out", str(out)]) == 0
    assert len(_rows(out)) == 2 and out.with_suffix(".json").exists()
    assert "0 of 2 runs failed" in capsys.readouterr().out
