"""One BLAS thread for timings, for every library a benchmark loads.

threadpoolctl's ``threadpool_limits`` limits the thread pools of the libraries loaded when it
is entered; a library loaded later keeps its default. The benchmarks import some libraries
lazily: scikit-sparse's CHOLMOD links the system's OpenBLAS (and OpenMP), a library of its
own, and graphsolve's compiled kernels call SciPy's OpenBLAS, which ``scipy.linalg`` loads. A
limit entered before such an import does not reach that library, and a benchmark would time
CHOLMOD's supernodal factorization on every core against graphsolve on one (on two cores,
``nx.grid_graph([22]*3)``: 1.2 s with two threads, 2.15 s with one). graphsolve's supernodal
kernel holds SciPy's BLAS to one thread itself
(``graphsolve.kernels.compiled.SUPERNODAL_BLAS_THREADS``). :func:`limit_blas_threads` loads
these libraries first, then limits them.
"""

from __future__ import annotations

import importlib
from contextlib import AbstractContextManager, nullcontext, suppress

__all__ = ["BLAS_MODULES", "load_blas", "limit_blas_threads"]

#: Modules that load a BLAS or OpenMP runtime when imported: NumPy's and SciPy's OpenBLAS
#: (graphsolve's kernels call SciPy's), CHOLMOD's system OpenBLAS and OpenMP. (Pinocchio,
#: MuJoCo and qdldl load OpenMP's ``libgomp``, which CHOLMOD's import loads as well;
#: ``tests/comparisons/test_blas_threads.py`` checks that importing every installed peer after
#: :func:`limit_blas_threads` adds no unlimited pool.)
BLAS_MODULES = ("numpy", "scipy.linalg", "sksparse.cholmod")


def load_blas() -> None:
    """Import the installed modules of :data:`BLAS_MODULES` (missing ones are skipped)."""
    for name in BLAS_MODULES:
        with suppress(ImportError):
            importlib.import_module(name)


def limit_blas_threads(n: int = 1) -> AbstractContextManager:
    """Context limiting every BLAS / OpenMP pool to ``n`` threads, the lazily imported ones
    included (:func:`load_blas` first); a no-op context without threadpoolctl. Enter it after
    anything that starts numba's threading layer (``numba.set_num_threads``), which resets
    OpenMP's thread count."""
    load_blas()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:                  # pragma: no cover - threadpoolctl is a [bench] extra
        return nullcontext()
    return threadpool_limits(limits=n)
