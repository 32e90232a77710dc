"""Shared plumbing of the dynamics figures: method labels with versions, the papers' colours,
and thinning long time series for the CSV and the plot (no simulation code here)."""

from __future__ import annotations

import numpy as np

from comparisons.blas_threads import limit_blas_threads
from comparisons.solvers import package_version

#: The papers draw their own method in blue and the comparison in red.
OURS_COLOR, PEER_COLOR = "tab:blue", "tab:red"


def versions() -> dict[str, str]:
    """Installed versions of the packages the dynamics figures compare."""
    return {"graphsolve": package_version("graphsolve"), "pin": package_version("pin"),
            "mujoco": package_version("mujoco"), "scipy": package_version("scipy")}


def label(solver: str) -> str:
    """Legend text for a method id, naming the package version."""
    v = versions()
    pin = f"Pinocchio {v['pin']}"
    return {
        "maximal": f"ours: maximal-coordinate VI (graphsolve {v['graphsolve']})",
        "pinocchio-rk4-kkt": f"{pin} RK4, loops at acceleration level",
        "pinocchio-heun": f"{pin} Heun (explicit RK2)",
        "pinocchio-euler": f"{pin} explicit Euler",
        "pinocchio-semi-implicit-euler": f"{pin} semi-implicit Euler",
        "pinocchio-rk4": f"{pin} RK4",
        "mujoco-euler": f"MuJoCo {v['mujoco']} Euler",
        "solve_ivp": f"SciPy {v['scipy']} solve_ivp DOP853, tol 1e-12",
        "ggl": "GGL variational method (Kinon, Betsch & Schneider 2023; our NumPy code)",
    }.get(solver, solver)


def sample_indices(n: int, max_points: int) -> np.ndarray:
    """Every k-th of ``n`` time points (first and last included), at most ~``max_points``."""
    k = max(1, int(np.ceil(n / max_points)))
    return np.unique(np.r_[np.arange(0, n, k), n - 1])


def bin_max(y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``max |y|`` over the points since the previous index of ``idx`` (from
    :func:`sample_indices`), so a thinned error curve keeps every peak."""
    a = np.abs(np.asarray(y))
    return np.r_[a[idx[0]], np.maximum.reduceat(a, idx[:-1] + 1)[: len(idx) - 1]] \
        if len(idx) > 1 else a[idx]


def thin(t: np.ndarray, y: np.ndarray, max_points: int, envelope: bool = False):
    """At most ``max_points`` samples of ``y(t)``: every k-th point, or with ``envelope`` the
    largest ``|y|`` of each run of k points (so no peak of an error curve is lost)."""
    t, y = np.asarray(t), np.asarray(y)
    k = max(1, int(np.ceil(len(t) / max_points)))
    if k == 1:
        return t, np.abs(y) if envelope else y
    if not envelope:
        idx = np.unique(np.r_[np.arange(0, len(t), k), len(t) - 1])
        return t[idx], y[idx]
    n = len(t) // k * k
    peaks = np.abs(y[:n]).reshape(-1, k).max(axis=1)
    tt = t[k - 1:n:k]
    if n < len(t):
        tt, peaks = np.r_[tt, t[-1]], np.r_[peaks, np.abs(y[n:]).max()]
    return np.r_[t[0], tt], np.r_[abs(y[0]), peaks]


def one_blas_thread():
    """Context pinning BLAS to one thread for timings (threadpoolctl; a no-op without it), as
    :func:`comparisons.runner.run` does: on a shared 2-core machine a second BLAS thread turns
    microsecond LAPACK calls into millisecond waits. The peers' own BLAS libraries are loaded
    first (:func:`comparisons.blas_threads.limit_blas_threads`)."""
    return limit_blas_threads(1)
