"""Work arrays of the minimal-coordinate algorithms: :class:`Data`.

As in Pinocchio, a :class:`~dynamics.minimal.model.Model` never changes and
``model.create_data()`` returns a :class:`Data` with every array that
:mod:`dynamics.minimal.algorithms` fills in place. This module imports no other module of the
package at run time, so the algorithms can check their ``data`` argument without importing
the model.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .model import Model

__all__ = ["Data"]


class Data:
    """Work arrays of the algorithms for one :class:`Model` (allocated once, filled in place).

    Link quantities are in link-frame coordinates with twist order ``(w; v)``.

    Attributes
    ----------
    T_parent_link : (n, 4, 4)
        Link ``i`` in its parent's link frame (the world for root links): ``T_{λ(i),i}``.
    X_link_parent : (n, 6, 6)
        ``Ad(T_{λ(i),i})⁻¹``: maps parent-frame twists to link ``i``'s frame (its transpose
        maps link ``i``'s wrenches to the parent).
    T_world_link : (n, 4, 4)
        World pose of each link (:func:`~dynamics.minimal.algorithms.forward_kinematics`).
    V, A, F : (n, 6)
        Link twists, accelerations (gravity included as a base acceleration in ``rnea`` and
        ``aba``) and the wrenches transmitted by the joints.
    c, pa : (n, 6)
        Velocity-product accelerations ``ad(V_i) S_i v_i`` and articulated bias forces.
    Ia, Ic : (n, 6, 6)
        Articulated-body and composite-rigid-body inertias.
    U, D_inv, u : lists of (6, nv_i), (nv_i, nv_i), (nv_i,)
        Articulated-body projections of each joint.
    tau, ddq : (nv,)
        Results of ``rnea`` and ``aba``.
    M : (nv, nv)
        Joint-space inertia matrix of ``crba`` (both triangles).
    S : list of (6, nv_i)
        Motion subspace of each joint at the last ``q`` (the joint's constant ``S`` unless it
        is configuration dependent, :mod:`dynamics.minimal.general_joint`).
    """

    def __init__(self, model: Model):
        n, nv = model.njoints, model.nv
        self.T_parent_link = np.tile(np.eye(4), (n, 1, 1))
        self.X_link_parent = np.zeros((n, 6, 6))
        self.T_world_link = np.tile(np.eye(4), (n, 1, 1))
        self.V, self.A, self.F = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6))
        self.c, self.pa = np.zeros((n, 6)), np.zeros((n, 6))
        self.Ia, self.Ic = np.zeros((n, 6, 6)), np.zeros((n, 6, 6))
        self.U = [np.zeros((6, jm.nv)) for jm in model.joints]
        self.D_inv = [np.zeros((jm.nv, jm.nv)) for jm in model.joints]
        self.u = [np.zeros(jm.nv) for jm in model.joints]
        self.tau, self.ddq = np.zeros(nv), np.zeros(nv)
        self.M = np.zeros((nv, nv))
        self.S = [jm.S if jm.constant_subspace else np.zeros((6, jm.nv)) for jm in model.joints]
        #: ``(0; -g)``: the world's spatial acceleration that stands in for gravity.
        self.a_gravity = np.concatenate([np.zeros(3), -model.gravity])
        # work arrays of the compiled kernels (:mod:`.tree_kernels`,
        # :mod:`.multi_dof_kernels`; the two state rows of its one-step call,
        # :func:`.multi_dof_kernels.explicit_step`), allocated on first use
        self._compiled_work = None
        self._multi_dof_work = None
        self._explicit_step = None
