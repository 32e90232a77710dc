"""Deprecated: renamed :mod:`comparisons.scale_bench` (every benchmark module is a
``*_bench.py``). Importing this module warns (``DeprecationWarning``) and re-exports the public
names of :mod:`comparisons.scale_bench`; the command line is unchanged
(``python -m comparisons scale``, ``scale-table``)."""

import warnings

from .scale_bench import *  # noqa: F403
from .scale_bench import __all__  # noqa: F401

warnings.warn("comparisons.scale is deprecated; import comparisons.scale_bench instead",
              DeprecationWarning, stacklevel=2)
