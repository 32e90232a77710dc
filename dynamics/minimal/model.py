"""The kinematic tree of a mechanism in minimal coordinates: :class:`Model`.

Following Pinocchio's model/data split, a :class:`Model` is built once from a
:class:`~dynamics.spec.MechanismSpec` (or a URDF) and never changes; ``model.create_data()``
returns a :class:`~dynamics.minimal.data.Data` (defined in :mod:`dynamics.minimal.data`,
importable from here too) with every work array the algorithms of
:mod:`dynamics.minimal.algorithms` fill in place.

Tree
----
Every moving joint (revolute, prismatic, spherical, floating, planar) adds one *link*; links are
numbered like the joints, parents first. A fixed joint adds no link: its child body is welded
to the parent's link (as Pinocchio appends a fixed child's inertia to its parent joint), and
bodies welded to the world take no part in the dynamics. Link ``i``'s frame is the link frame of
joint ``i`` (the child body's frame at the joint origin, :mod:`dynamics.spec`); its spatial
inertia ``model.inertias[i]`` sums its bodies, each at its centre of mass ``-child_point``
(moved through the fixed joints).

Joint order is the spec's spanning-tree order (:attr:`~dynamics.spec.MechanismSpec.tree_joints`),
the order :func:`comparisons.pinocchio_peer.pinocchio_model` gives Pinocchio. For
:meth:`Model.from_urdf` that is the depth-first order of the URDF tree with the children of a
link sorted by joint name, exactly ``pinocchio.buildModelFromXML``'s order.

Joint springs and dampers stay in ``model.spec``: ``rnea``, ``aba`` and ``crba`` compute the
rigid-body dynamics alone, and the integrators add the joint forces. Ground contacts of the spec
are not modelled here either.

References
----------
J. Carpentier et al., "The Pinocchio C++ library", SII 2019 (model/data split, joint order).
J. Lee, C. K. Liu, F. C. Park, S. S. Srinivasa (2016), §3.1 (tree notation ``λ(i)``, eq. 18).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import quaternion as quat
from ..spec import WORLD, MechanismSpec, SpecError
from . import spatial as sp
from .data import Data
from .joints import (
    ROTATIONS,
    FloatingJoint,
    JointModel,
    PlanarJoint,
    PrismaticJoint,
    RevoluteJoint,
    SphericalJoint,
)

__all__ = ["Model", "Data", "TreeModelError", "SUPPORTED_JOINTS"]

_JOINT_CLASSES = {"revolute": RevoluteJoint, "prismatic": PrismaticJoint,
                  "spherical": SphericalJoint, "floating": FloatingJoint,
                  "planar": PlanarJoint}
#: Spec joint types the tree model accepts.
SUPPORTED_JOINTS = (*_JOINT_CLASSES, "fixed")


class TreeModelError(SpecError):
    """A valid spec that the minimal-coordinate tree cannot represent; names the joint(s)."""


class SingularArticulatedInertiaError(TreeModelError):
    """Joints that see a singular articulated inertia (a massless link with nothing massive
    moving with it, or coaxial joints around one): no finite force accelerates them.
    ``joints`` names them."""

    def __init__(self, message: str, joints: list[str]):
        super().__init__(message)
        self.joints = list(joints)


def _readonly(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


class Model:
    """Kinematic tree of a mechanism in minimal coordinates.

    Parameters
    ----------
    spec : MechanismSpec
        A tree: every joint is a revolute, prismatic, spherical, floating, planar or fixed
        joint whose parent is on the world side.
    rotation : {"quaternion", "rotation_vector"}
        Rotation coordinates of spherical and floating joints (see :mod:`.joints`): unit
        quaternions ``(w, x, y, z)`` (nq 4 / 7, Pinocchio's choice, scalar first) or rotation
        vectors (exponential coordinates, nq 3 / 6).
    custom_joints : mapping joint name -> joint description, optional
        Joints whose kinematics replace the spec's, e.g.
        :class:`~dynamics.minimal.general_joint.GeneralJoint` (Si & Guenter's general
        scleronomic joints). A description has ``nq`` and a method ``bind(spec_joint, index,
        parent, placement, idx_q, idx_v)`` returning a :class:`~.joints.JointModel`. The named
        spec joint only places the joint (``parent``, ``child``, ``parent_point``,
        ``child_point``, ``orientation_offset``; springs and dampers still apply); its type is a
        placeholder and must have ``nq`` spec coordinates (e.g. ``"prismatic"`` for one), which
        are then the joint's ``q`` and ``v`` one to one.

    Attributes
    ----------
    spec : MechanismSpec
    name : str
    joints : tuple of JointModel
        The moving joints; ``joints[i]`` moves link ``i``.
    joint_names : list of str
    njoints, nq, nv : int
        Number of moving joints (links), configuration size and velocity size.
    parents : tuple of int
        Parent link of each link, ``-1`` for the world.
    children : tuple of tuple of int
    inertias : (njoints, 6, 6) array
        Spatial inertia of each link about its frame origin, twist order ``(w; v)``.
    masses : (njoints,) array
    first_moments : (njoints, 3) array
        ``Σ m c`` of each link's bodies (link frame): mass times centre of mass.
    gravity : (3,) array
        ``spec.gravity``.
    body_names : list of str
        All bodies of the spec, in spec order.
    body_links : tuple of int
        The link each body is welded to (``-1``: the world).
    body_placements : (n_bodies, 4, 4) array
        Each body's centre-of-mass frame in its link's frame.
    frame_names : list of str
        The spec's frames (:class:`~dynamics.spec.Frame`; a URDF gives one per link).
    frame_links : tuple of int
        The link each frame is fixed to (``-1``: the world).
    frame_placements : (n_frames, 4, 4) array
        Each frame in its link's frame (see :func:`~dynamics.minimal.algorithms.frame_poses`).

    Raises
    ------
    TreeModelError
        Loop-closing joints (naming them), an unsupported joint type (naming joint and type),
        a joint reached from its child, a ``custom_joints`` entry naming no spanning-tree
        joint or whose placeholder has the wrong number of coordinates, or (for specs with
        singular-inertia bodies, ``Body.allow_singular``) a joint whose articulated inertia is
        singular at the neutral configuration.
    ValueError
        An unknown ``rotation``.

    Examples
    --------
    >>> from dynamics import models
    >>> model = Model(models.pendulum(3, "spherical"))
    >>> model.joint_names, model.nq, model.nv
    (['joint1', 'joint2', 'joint3'], 12, 9)
    >>> Model(models.pendulum(3, "spherical"), rotation="rotation_vector").nq
    9
    """

    def __init__(self, spec: MechanismSpec, *, rotation: str = "quaternion",
                 custom_joints: Mapping | None = None):
        if rotation not in ROTATIONS:
            raise ValueError(f"rotation must be one of {ROTATIONS}, got {rotation!r}")
        custom = dict(custom_joints or {})
        unknown = sorted(set(custom) - {j.name for j in spec.tree_joints})
        if unknown:
            raise TreeModelError(
                f"custom_joints {unknown} are not joints of the spanning tree of mechanism "
                f"{spec.name!r}; tree joints: {[j.name for j in spec.tree_joints]}")
        if spec.loop_joints:
            raise TreeModelError(
                f"mechanism {spec.name!r} has kinematic loops closed by joints "
                f"{[j.name for j in spec.loop_joints]}; the minimal-coordinate model needs a "
                "tree (simulate loops with dynamics.maximal)")
        self.spec, self.name, self.rotation = spec, spec.name, rotation
        # body name -> (link index or -1, the body's link frame in that link's frame)
        owner: dict[str, tuple[int, np.ndarray]] = {}
        child_point = {j.child: j.child_point for j in spec.tree_joints}
        joints: list[JointModel] = []
        nq = nv = 0
        for j in spec.tree_joints:
            if j.type not in SUPPORTED_JOINTS and j.name not in custom:
                raise TreeModelError(
                    f"joint {j.name!r} has type {j.type!r}; the minimal-coordinate model "
                    f"supports {list(SUPPORTED_JOINTS)}")
            if j.parent != WORLD and j.parent not in owner:
                raise TreeModelError(
                    f"joint {j.name!r} is reached from its child {j.child!r}; every joint's "
                    "parent must be on the world side of the tree")
            if j.parent == WORLD:
                link, placement = -1, sp.pose(quat.rotation_matrix(j.orientation_offset),
                                              j.parent_point)
            else:
                link, T_link_parent = owner[j.parent]
                placement = T_link_parent @ sp.pose(
                    quat.rotation_matrix(j.orientation_offset),
                    j.parent_point - child_point[j.parent])
            if j.name in custom:
                desc = custom[j.name]
                if j.dof != desc.nq:
                    raise TreeModelError(
                        f"custom joint {j.name!r} has nq = {desc.nq} coordinates but its "
                        f"placeholder spec joint of type {j.type!r} has {j.dof}; give the spec "
                        f"joint a type with {desc.nq} coordinates")
                jm = desc.bind(j, len(joints), link, placement, nq, nv)
            elif j.type == "fixed":
                owner[j.child] = (link, placement)
                continue
            else:
                cls = _JOINT_CLASSES[j.type]
                extra = {"rotation": rotation} if j.type in ("spherical", "floating") else {}
                jm = cls(j, len(joints), link, placement, nq, nv, **extra)
            joints.append(jm)
            nq, nv = nq + jm.nq, nv + jm.nv
            owner[j.child] = (jm.index, np.eye(4))
        self.joints = tuple(joints)
        self.joint_names = [jm.name for jm in joints]
        self.njoints, self.nq, self.nv = len(joints), nq, nv
        self.parents = tuple(jm.parent for jm in joints)
        self.children = tuple(tuple(k for k, p in enumerate(self.parents) if p == i)
                              for i in range(self.njoints))
        self.gravity = _readonly(spec.gravity)

        n = self.njoints
        inertias, masses, moments = np.zeros((n, 6, 6)), np.zeros(n), np.zeros((n, 3))
        self.body_names = [b.name for b in spec.bodies]
        links, placements = [], []
        for body in spec.bodies:
            link, T = owner[body.name]
            com = sp.pose(T[:3, :3], T[:3, 3] - T[:3, :3] @ child_point[body.name])
            links.append(link)
            placements.append(com)
            if link < 0:
                continue
            R = com[:3, :3]
            inertias[link] += sp.spatial_inertia(body.mass, com[:3, 3], R @ body.inertia @ R.T)
            masses[link] += body.mass
            moments[link] += body.mass * com[:3, 3]
        self.inertias, self.masses = _readonly(inertias), _readonly(masses)
        self.first_moments = _readonly(moments)
        self.body_links = tuple(links)
        self.body_placements = _readonly(placements)
        index = {name: b for b, name in enumerate(self.body_names)}
        self.frame_names = [f.name for f in spec.frames]
        self.frame_links = tuple(-1 if f.body == WORLD else links[index[f.body]]
                                 for f in spec.frames)
        self.frame_placements = _readonly(np.array(
            [sp.pose(quat.rotation_matrix(f.orientation), f.position) if f.body == WORLD
             else placements[index[f.body]] @ sp.pose(quat.rotation_matrix(f.orientation),
                                                       f.position)
             for f in spec.frames]).reshape(-1, 4, 4))
        # Derived data computed on first use by the module that owns it (the model itself never
        # changes): the spec's joint springs and dampers as vectors (:mod:`.forces`), the flat
        # arrays of the compiled kernels (:mod:`.tree_kernels`, :mod:`.multi_dof_kernels`), the
        # ancestor table of the Galerkin integrators (:mod:`.galerkin`) and the tree tables of
        # the SVI (:mod:`.svi`); the joints whose configurations need a check
        # (:func:`.configuration.check_configuration`); the packed arrays of the compiled
        # explicit loop (:func:`.multi_dof_kernels.simulate_explicit`).
        self._joint_springs = None
        self._checked_joints: tuple | None = None
        self._explicit_packed: tuple | None = None
        self._flat_model = None
        self._multi_dof_model = None
        self._galerkin_ancestors = None
        self._svi_tree = None
        if any(b.allow_singular and b.singular for b in spec.bodies):
            self._check_articulated_inertia()

    def _check_articulated_inertia(self) -> None:
        """Raise :class:`TreeModelError` if a joint sees a singular articulated inertia.

        Run when a spec body has a singular inertia (``Body.allow_singular``, e.g. a massless
        URDF link between two moving joints). ABA's pivot ``D_i = S_iᵀ I^A_i S_i`` of each joint
        is computed at the neutral configuration (zero velocity) and compared with the
        diagonal block of the joint-space inertia ``M`` (``D_i <= M_ii``): a pivot below
        ``1e-12`` of it means the joint cannot be accelerated by a finite force (e.g. a massless
        link with nothing below it, or two joints on the same axis around a massless link).
        Other configurations are not checked.
        """
        from .algorithms import aba, crba
        from .configuration import neutral
        data = self.create_data()
        q0 = neutral(self)
        M = crba(self, data, q0)
        bad = []
        with np.errstate(divide="ignore", invalid="ignore"):
            try:
                aba(self, data, q0, np.zeros(self.nv), np.zeros(self.nv))
                pivots = [np.linalg.eigvalsh(np.linalg.inv(data.D_inv[jm.index])).min()
                          if np.all(np.isfinite(data.D_inv[jm.index])) else 0.0
                          for jm in self.joints]
            except np.linalg.LinAlgError:
                pivots = [0.0] * self.njoints
        for jm, d in zip(self.joints, pivots, strict=True):
            scale = np.abs(M[jm.v_slice, jm.v_slice]).max()
            if not d > 1e-12 * scale:
                bad.append(jm.name)
        if bad:
            singular = [b.name for b in self.spec.bodies if b.allow_singular and b.singular]
            raise SingularArticulatedInertiaError(
                f"joints {bad} of mechanism {self.name!r} see a singular articulated inertia "
                f"at the neutral configuration (bodies with singular inertia: {singular}): a "
                "massless link needs links with mass moving with it through joints on "
                "independent axes", bad)

    @classmethod
    def from_urdf(cls, path_or_text, *, floating_base: bool = False,
                  rotation: str = "quaternion", custom_joints: Mapping | None = None) -> Model:
        """Build a model from a URDF file path or text through :func:`dynamics.urdf.load_urdf`.

        Parameters
        ----------
        path_or_text : str or os.PathLike
        floating_base : bool
            Join the root link to the world with a floating joint ``"root_joint"`` (as
            ``pinocchio.buildModelFromXML(xml, pinocchio.JointModelFreeFlyer())``).
        rotation : {"quaternion", "rotation_vector"}
        custom_joints : mapping, optional
            As for :class:`Model` (URDF joint name -> joint description).

        Raises
        ------
        dynamics.spec.SpecError
            From ``load_urdf``: malformed URDF, an unknown joint type (naming the joint), loops.
        TreeModelError
            A massless link between moving joints whose articulated inertia is singular.
            (Every URDF joint type loads: ``planar`` joints become
            :class:`~.joints.PlanarJoint`, ``q = (x, y, θ)``.)
        """
        from ..urdf import load_urdf
        return cls(load_urdf(path_or_text, floating_base=floating_base), rotation=rotation,
                   custom_joints=custom_joints)

    def create_data(self) -> Data:
        """A fresh :class:`Data` for this model."""
        return Data(self)

    def __repr__(self) -> str:
        return (f"Model({self.name!r}, njoints={self.njoints}, nq={self.nq}, nv={self.nv}, "
                f"rotation={self.rotation!r})")
