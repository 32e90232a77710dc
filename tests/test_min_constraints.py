"""``.ci/min-constraints.txt`` (the pins of ``make test-mindeps``) is pyproject.toml's lower
bounds: one ``name==X`` line for each ``name>=X`` of ``[project].dependencies``, and nothing
else. So raising a bound without the constraints file (or the other way round) fails here."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / ".ci" / "min-constraints.txt"


def lower_bounds() -> dict[str, str]:
    """``{name: X}`` of pyproject's ``name>=X`` dependencies; each must have exactly one."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    bounds = {}
    for dep in deps:
        req = Requirement(dep)
        lower = [s.version for s in req.specifier if s.operator == ">="]
        assert len(lower) == 1, f"{dep!r}: a runtime dependency needs one lower bound (>=)"
        bounds[canonicalize_name(req.name)] = lower[0]
    return bounds


def pins() -> dict[str, str]:
    out = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", f"{line!r}: pin with =="
        assert canonicalize_name(req.name) not in out, f"{req.name} pinned twice"
        out[canonicalize_name(req.name)] = spec.version
    return out


def test_constraints_pin_exactly_the_lower_bounds():
    assert pins() == lower_bounds()


def test_the_makefile_installs_with_the_constraints_and_tests_there():
    makefile = (ROOT / "Makefile").read_text()
    assert "-c .ci/min-constraints.txt" in makefile
    assert "test-mindeps:" in makefile
