"""The low-level API: what compiled code of your own needs to drive graphsolve's kernels.

The high-level API (:func:`graphsolve.factorize`, :meth:`~graphsolve.Factorization.refactor`,
:meth:`~graphsolve.Factorization.solve`) costs a few microseconds of Python per call. A Newton
loop compiled with numba (such as the maximal-coordinate integrator of ``dynamics``) instead
keeps one factorization and calls :func:`refactor_solve` from its own compiled code:

>>> import numpy as np, graphsolve as gs
>>> from graphsolve import lowlevel
>>> A = gs.random_block_matrix(gs.generators.ladder(6), "unsymmetric", block_size=2)
>>> F = gs.allocate(gs.analyze(A), method="ldu")      # buffers only, nothing factored yet
>>> handle = F.fused_handle(A)                          # tuple of arrays, typed for numba
>>> x = np.ones(A.shape[0])
>>> status = lowlevel.refactor_solve(handle, A.data, x)  # callable from @njit code as well
>>> F.mark_valid(status)                                # Python-level use stays checked
>>> status == lowlevel.STATUS_OK and bool(np.allclose(A.to_scipy() @ x, 1.0))
True

Write new values into ``A.data`` in place (its layout: :meth:`graphsolve.BlockMatrix.
entry_coordinates` gives the row and column of every entry, :attr:`graphsolve.BlockMatrix.
diag_ptr` / ``edge_ptr`` where each block starts; :func:`block_coordinates` turns a list of
blocks into the coordinates of their entries) and call :func:`refactor_solve` again.
:func:`solve_factored` solves another right-hand side with the factor the last successful
:func:`refactor_solve` left (several solves per factorization, as an interior-point method's
predictor and corrector).

Everything here is public and stable in the sense of the rest of the package: ``dynamics``
and ``comparisons`` use only these names and the package's top-level ones (a test checks it).
"""

from __future__ import annotations

from .factor import allocate
from .kernels.fused import refactor_solve, solve_factored
from .kernels.protocol import Status
from .kernels.reference import PIVOT_RTOL
from .kernels.simd import mm6_sub
from .matrix import block_coordinates

__all__ = ["refactor_solve", "solve_factored", "allocate", "PIVOT_RTOL", "Status",
           "STATUS_OK", "STATUS_NONFINITE", "mm6_sub", "block_coordinates"]

#: :func:`refactor_solve` succeeded (``x`` holds the solution); ``Status.OK`` as a plain int.
STATUS_OK = int(Status.OK)
#: :func:`refactor_solve` found NaN or inf in the values (``x`` unchanged). Any status
#: ``>= 0`` is the elimination position of the first singular pivot block (the node is
#: ``analysis.order[status]``).
STATUS_NONFINITE = int(Status.NONFINITE)

