"""Numeric backends over the flat buffers laid out by :class:`graphsolve.Analysis`.

``reference`` is readable NumPy that follows the papers' pseudocode; ``compiled`` is the same
algorithm compiled with numba. Both implement the backend protocol of
:mod:`graphsolve.kernels.protocol` (:class:`~graphsolve.kernels.protocol.Backend`); a third
backend is added with :func:`register_backend` and then chosen by name
(``gs.factorize(A, backend=name)``).
"""

from __future__ import annotations

from . import protocol, reference
from .protocol import Backend, Status, check_backend

try:  # numba is a runtime dependency; keep the reference path usable without it
    from . import compiled
except ImportError:  # pragma: no cover
    compiled = None  # type: ignore[assignment]

#: The backend registry: name -> module or object implementing the protocol.
KERNELS = {"reference": reference}
if compiled is not None:
    KERNELS["compiled"] = compiled


def register_backend(name: str, backend) -> None:
    """Register a backend under ``name`` (checked against the protocol; ``TypeError`` names
    what is missing). It is then available to ``factorize``/``factorize_batch``'s
    ``backend=`` argument."""
    protocol.register_backend(name, backend, KERNELS)


for _name, _backend in KERNELS.items():
    check_backend(_name, _backend)

__all__ = ["KERNELS", "Backend", "Status", "register_backend", "reference", "compiled"]
