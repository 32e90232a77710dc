"""The project builds as an sdist and a wheel, and the wheel installs and imports in a clean venv.

``python -m build`` builds the sdist and then the wheel from that sdist (so the sdist is complete
enough to build from). The wheel is installed with ``--no-deps`` into a fresh venv without the
system site-packages; the runtime dependencies (numpy, scipy, numba, ...) are made visible by a
``.pth`` line *appended* after the venv's own site-packages, so ``graphsolve`` and its metadata
come from the installed wheel, never from this source tree or its editable install.
"""

from __future__ import annotations

import json
import re
import site
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("graphsolve", "dynamics", "comparisons", "paper_figures")

CHECK = r"""
import importlib.metadata as md, json, sys
import numpy as np
import graphsolve as gs
A = gs.random_block_matrix(gs.generators.ladder(6), kind="spd", block_size=2, seed=0)
x = gs.solve(A, np.ones(A.shape[0]), backend="reference")
print(json.dumps({
    "file": gs.__file__,
    "version": gs.__version__,
    "metadata_version": md.version("graphsolve"),
    "license": md.metadata("graphsolve")["License-Expression"],
    "residual": float(abs(A.to_scipy() @ x - 1.0).max()),
    "matplotlib_imported": "matplotlib" in sys.modules,
}))
"""


def test_wheel_builds_installs_and_imports_in_a_clean_venv(tmp_path):
    pyproject = (ROOT / "pyproject.toml").read_text()
    (version,) = re.findall(r'^version = "([^"]+)"', pyproject, flags=re.M)
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True, text=True)
    (wheel,) = dist.glob("graphsolve-*.whl")
    (sdist,) = dist.glob("graphsolve-*.tar.gz")
    assert wheel.name == f"graphsolve-{version}-py3-none-any.whl"

    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    for package in PACKAGES:
        assert f"{package}/__init__.py" in names
    assert f"graphsolve-{version}.dist-info/licenses/LICENSE" in names
    assert "graphsolve/py.typed" in names                 # PEP 561: our annotations are read
    assert not [n for n in names if n.endswith((".nbi", ".nbc", ".pyc"))]
    with tarfile.open(sdist) as tf:
        members = {Path(m).name for m in tf.getnames()}
    assert {"LICENSE", "pyproject.toml", "README.md"} <= members

    env = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env)
    python = env / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", "--no-index", str(wheel)], check=True)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                              "'purelib'))"], check=True, capture_output=True, text=True)
    purelib = Path(purelib.stdout.strip())
    # the runtime dependencies of this environment, searched after the venv's own packages
    (purelib / "zz_runtime_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")

    out = subprocess.run([str(python), "-I", "-c", CHECK], cwd=tmp_path, check=True,
                         capture_output=True, text=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(report["file"]).is_relative_to(env), report["file"]
    assert report["version"] == report["metadata_version"] == version
    assert report["license"] == "BSD-3-Clause"
    assert report["residual"] < 1e-8
    assert not report["matplotlib_imported"], "the core package must not need matplotlib"
