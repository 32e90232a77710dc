"""Numeric kernels over the flat buffers laid out by :class:`graphsolve.Analysis`.

``reference`` is readable NumPy that follows the papers' pseudocode; ``compiled`` is the same
algorithm compiled with numba. Both expose ``factor(an, D, Dlu, piv, L, U, symmetric, work)`` and
``solve(an, Dlu, piv, L, U, x, symmetric)``.
"""

from . import reference

try:  # numba is a runtime dependency; keep the reference path usable without it
    from . import compiled
except ImportError:  # pragma: no cover
    compiled = None

KERNELS = {"reference": reference}
if compiled is not None:
    KERNELS["compiled"] = compiled

__all__ = ["KERNELS", "reference", "compiled"]
