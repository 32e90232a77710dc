"""Numeric kernels over the flat buffers laid out by :class:`graphsolve.Analysis`.

``reference`` is readable NumPy that follows the papers' pseudocode; ``compiled`` (numba, issue
#3) will share its signatures.
"""

from . import reference

__all__ = ["reference"]
