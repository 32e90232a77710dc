"""Deprecated: renamed :mod:`dynamics.maximal.step_system` (:class:`StepSystem`, one Newton-solved
step of the maximal-coordinate integrator). Importing this module warns
(``DeprecationWarning``) and re-exports the public names of :mod:`dynamics.maximal.step_system`
and its helpers ``omega_scalar`` and ``quaternion_update``."""

import warnings

from .step_system import *  # noqa: F403
from .step_system import __all__, omega_scalar  # noqa: F401

warnings.warn("dynamics.maximal.integrator is deprecated; import dynamics.maximal.step_system "
              "instead", DeprecationWarning, stacklevel=2)
