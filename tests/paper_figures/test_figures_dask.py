"""``python -m paper_figures --workers 2``: each figure a Dask task on a real LocalCluster,
writing its own CSV + PNG, REPORT.md assembled from the results as in-process."""

import pytest

pytest.importorskip("distributed")

from paper_figures.__main__ import main  # noqa: E402

ONLY = ["--only", "fig09b_ladder", "--only", "fig07d_box_drop"]


def _claims(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("|", "##", "Summary"))]


def test_figures_on_dask_match_the_in_process_build(tmp_path, capsys):
    local, dask = tmp_path / "local", tmp_path / "dask"
    assert main(["--quick", "--tiny", *ONLY, "--out", str(local)]) == 0
    assert main(["--quick", "--tiny", *ONLY, "--out", str(dask), "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "dashboard" in out and "on tcp://" in out
    for name in ("fig09b_ladder", "fig07d_box_drop"):
        assert (dask / f"{name}.png").stat().st_size > 1000
        assert (dask / f"{name}.csv").read_text().splitlines()[0] == \
            (local / f"{name}.csv").read_text().splitlines()[0]
    report = (dask / "REPORT.md").read_text()
    assert "43 µm" in report and "Not covered by this run" in report
    # the same claims (the ladder's are timings: compare the box drop's, which are not)
    box = [line for line in _claims(report) if "box" in line.lower()]
    assert box and box == [line for line in _claims((local / "REPORT.md").read_text())
                           if "box" in line.lower()]
