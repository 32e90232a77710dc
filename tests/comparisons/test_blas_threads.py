"""Timings limit every BLAS / OpenMP pool to one thread, the peers' own libraries included.

Each check runs in a fresh interpreter: a peer imported earlier by another test would load
its library before the limit and hide the fault these tests are for (a limit entered before
CHOLMOD's import left CHOLMOD two BLAS threads)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("threadpoolctl")

ROOT = Path(__file__).resolve().parents[2]


def _fresh(code: str) -> list[list]:
    """Run ``code`` in a fresh interpreter; it prints a JSON list of ``[library, threads]``."""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


POOLS = ("import json\nfrom threadpoolctl import threadpool_info\n"
         "def pools():\n"
         "    return [[p['filepath'], p['num_threads']] for p in threadpool_info()]\n")


def test_peers_imported_inside_the_limit_get_one_thread():
    pools = _fresh(POOLS + """
import importlib
from comparisons.blas_threads import limit_blas_threads
with limit_blas_threads(1):
    for name in ("sksparse.cholmod", "qdldl", "pinocchio", "mujoco"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    print(json.dumps(pools()))
""")
    assert pools
    assert [p for p in pools if p[1] != 1] == []


def test_runner_times_cholmod_with_one_blas_thread():
    pytest.importorskip("sksparse.cholmod")
    pools = _fresh(POOLS + """
from comparisons import solvers
from comparisons.runner import CaseSpec, run_case
from comparisons.suite import SUITES
seen = []
factor = solvers.CholmodSolver.factor
def spy(self, case):
    seen.append(pools())
    return factor(self, case)
solvers.CholmodSolver.factor = spy
run_case(CaseSpec(SUITES["default"], "crystal", 3, "spd", None, ("cholmod",), 1))
print(json.dumps(seen[0]))
""")
    assert any("openblas" in p[0] for p in pools)
    assert [p for p in pools if p[1] != 1] == []


def test_scale_part_times_cholmod_with_one_blas_thread():
    pytest.importorskip("sksparse.cholmod")
    pools = _fresh(POOLS + """
from comparisons import scale_bench
seen = []
part = scale_bench._part_cholmod
def spy(*args):
    out = part(*args)
    seen.append(pools())             # still inside the part's limit, CHOLMOD loaded
    return out
scale_bench._part_cholmod = spy
scale_bench.run_part("cholmod", "path", 50, repeats=1, budget=0.1)
print(json.dumps(seen[-1]))
""")
    assert any("openblas" in p[0] for p in pools)
    assert [p for p in pools if p[1] != 1] == []
