"""Deprecated: renamed :mod:`comparisons.batch_bench` (every benchmark module is a
``*_bench.py``). Importing this module warns (``DeprecationWarning``) and re-exports the public
names of :mod:`comparisons.batch_bench`; the command line is unchanged
(``python -m comparisons batch``)."""

import warnings

from .batch_bench import *  # noqa: F403
from .batch_bench import __all__  # noqa: F401

warnings.warn("comparisons.batch is deprecated; import comparisons.batch_bench instead",
              DeprecationWarning, stacklevel=2)
