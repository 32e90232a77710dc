"""Deprecated: renamed :mod:`dynamics.minimal.tree_kernels` (the numba kernels for trees of
revolute and prismatic joints). Importing this module warns (``DeprecationWarning``) and
re-exports the public names of :mod:`dynamics.minimal.tree_kernels`."""

import warnings

from .tree_kernels import *  # noqa: F403
from .tree_kernels import __all__  # noqa: F401

warnings.warn("dynamics.minimal.compiled is deprecated; import dynamics.minimal.tree_kernels "
              "instead", DeprecationWarning, stacklevel=2)
