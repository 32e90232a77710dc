"""The public library type-checks: ``mypy graphsolve`` (configuration in pyproject.toml) finds no
error, and the package ships its ``py.typed`` marker so that users' type checkers read our
annotations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_graphsolve_ships_py_typed():
    assert (ROOT / "graphsolve" / "py.typed").is_file()
    assert "py.typed" in (ROOT / "pyproject.toml").read_text()


def test_mypy_finds_no_error_in_graphsolve():
    pytest.importorskip("mypy")
    run = subprocess.run([sys.executable, "-m", "mypy", "graphsolve"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
