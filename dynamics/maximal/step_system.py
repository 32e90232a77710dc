"""One step of the maximal-coordinate variational integrator, solved by Newton on the graph.

Given ``z₁ = (x₁, q₁)`` from the update rules (11) and (17) and the previous velocities ``ż₀``,
the unknowns ``s = [ż₁; λ₁]`` solve (Brüdigam et al. 2023, eq. 10, 16, 20)

    d_b = [ m (v₁ - v₀)/Δt - f_b ;
            ω̄ₛ(ω₁) J ω₁ + ω₁ × J ω₁ - ω̄ₛ(ω₀) J ω₀ + ω₀ × J ω₀ - 2 τ_b ] - Σ_j G_jb(z₁)ᵀ λ_j = 0
    c_j = Dⱼᵀ g_j(z₂(ż₁)) = 0

for every body ``b`` and joint ``j``, with ``ω̄ₛ(ω) = sqrt(4/Δt² - ωᵀω)``, ``G = [∂g/∂x, ∂g/∂ʳq]``
(eq. 21, A.8) and ``[f; τ]`` the wrench of gravity, joint springs (potential gradients at
``z₁``), actuators (eq. 1) and joint dampers (evaluated implicitly at ``ż₁``). The Newton matrix
``F = ∂(d, c)/∂s`` has one 6×6 block per body, a zero block per joint and nonzero blocks only
between a joint and its two bodies: it is factored by graphsolve's LDU (2023 Alg. 1-4) on the
mechanism graph, analysed once and numerically refactored each iteration (eq. 31-33).

Joint springs and dampers in the Newton matrix (exact). With ``R = R(z₁)`` the rate map of a
joint (:func:`.joints.rate_map`, evaluated once per step at ``z₁``, which the update rules fix
before Newton starts), its applied wrench on ``[a; b]`` is ``W = Rᵀ u`` with
``u = -k (c(z₁) - c₀) - d R ż₁`` (springs as the gradient of their potential at ``z₁``, the
2023 paper's potential forces of §2/§3.1; dampers as non-conservative wrenches, §2, taken at
the unknown ``ż₁``). Hence

    ∂W/∂ż₁ = -d Rᵀ R   (12×12, both bodies of the joint),    ∂W/∂ż₁|spring = 0,

and the body rows ``d_b = … - diag(1, 2) W`` get ``+diag(1, 2) d Rᵀ R``: the 6×6 diagonal blocks
of ``a`` and ``b`` and the off-diagonal blocks ``(a, b)``, ``(b, a)``. The latter couple two
bodies that are not otherwise neighbours, so a damped joint between two bodies adds the graph
edge ``a - b`` (the "additional off-diagonal entries" of dampers, 2023 §4.2, Fig. 6: each
damped joint closes a three-node cycle body-joint-body, eliminated with the cyclic LDU of
Alg. 3-4 with fill-in only inside that cycle). Both blocks are constant during a step, written
into the matrix by :meth:`StepSystem.begin`. With them the Newton matrix is the exact
derivative of the residual and the iteration converges quadratically with any damping.

:meth:`StepSystem.begin` is the NumPy reference of these step constants; without contacts a
whole step, them included, is one compiled call (:meth:`StepSystem.step_compiled`,
:mod:`.force_kernels`).
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

import graphsolve as gs
from graphsolve.lowlevel import PIVOT_RTOL, STATUS_NONFINITE, STATUS_OK, allocate

from .. import quaternion as quat
from . import contact_kernels as ck
from . import joints as jt
from .condensation import Condensation, condensed_refactor_solve, condensed_solve, full_residual
from .contacts import contact_groups
from .control_kernels import control_work
from .force_kernels import force_work, forced_step_kernel
from .interior_point_kernels import step_kernel_plain_first
from .mechanism import MaximalModel
from .newton_kernels import (
    NewtonStatus,
    constraint_jacobian_kernel,
    jacobian_kernel,
    newton_kernel,
    newton_work,
    residual_kernel,
    step_kernel,
)
from .run_kernels import contact_run_kernel, joint_run_kernel

__all__ = ["StepSystem", "NewtonError", "ConvergenceError", "SingularStepError",
           "quaternion_update"]

_ROT_SCALE = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])


@dataclass
class _StepWork:
    """Work arrays of :meth:`StepSystem.step_compiled` (see
    :func:`.force_kernels.forced_step_kernel`)."""

    gravity: np.ndarray          # (nb, 6) gravity wrench
    G: np.ndarray                # (2, n_joints, 6, 6) constraint Jacobians at z₁
    rate: np.ndarray             # (n_joints, 6, 12) rate maps
    external: np.ndarray         # (nb, 6) applied wrenches
    damping: np.ndarray          # (n_joints or 0, 12, 12) damper matrices d RᵀR
    diag_const: np.ndarray       # (nb, 6, 6) damper blocks of the body diagonals
    coupling: np.ndarray         # (n_pairs, 2, 36) damper blocks between two bodies
    pairs: np.ndarray            # (n_pairs,) the damped joints between two bodies
    applied: bool                # the mechanism has a joint spring or damper
    no_forces: np.ndarray        # (0, 6) placeholder for joint_forces=None
    control_forces: np.ndarray   # (n_joints, 6) a PD controller's inputs in the run loops
    s: np.ndarray                # (N,) the step's unknowns
    history: np.ndarray          # (max_iter + 1,) residual max-norms, regrown for a larger cap
    prev_v: np.ndarray           # (nb, 3) extrapolation scratch when there is no last step
    prev_w: np.ndarray           # (nb, 3)
    prev_lam: np.ndarray         # (n_joints, 6)
    force_scratch: tuple         # scratch of the applied forces (force_kernels.force_work)

    @property
    def forces(self) -> tuple:
        """``(G, rate, external, damping, diag_const, coupling, force_scratch)``, as the
        forced and contact step kernels take them."""
        return (self.G, self.rate, self.external, self.damping, self.diag_const, self.coupling,
                self.force_scratch)

    def history_for(self, max_iter: int) -> np.ndarray:
        """The history buffer, regrown if it holds fewer than ``max_iter + 1`` entries."""
        if self.history.shape[0] < max_iter + 1:
            self.history = np.zeros(max_iter + 1)
        return self.history


@dataclass
class _ContactWork:
    """Work arrays of :meth:`StepSystem.contact_step` (see
    :func:`.interior_point_kernels.step_kernel_plain_first`), made once per step system."""

    factorization: gs.Factorization     # the compiled step's own, of the condensed matrix
    handle: tuple                       # its solver (StepSystem.condensed_solver)
    u: np.ndarray                       # (N,) the last step's contact variables in their rows
    last: np.ndarray                    # (1,) its interior-point iterations (-1: none)
    groups: tuple                       # per contact group, the kernel's geometry tuple
    joints: tuple                       # the joint arrays of the kernel
    pairs: tuple                        # (row, ia, ib, positive) complementarity indices
    forces: tuple                       # (G, rate, external, damping, diag_const, coupling,
    #                                     force_scratch): _StepWork.forces
    scratch: tuple                      # the interior-point loop's work vectors, then the
    #                                     contact kernels' scratch
    s_start: np.ndarray                 # (N,) the start before the contact rows
    blocks: tuple                       # Condensation.plain_blocks (the refinement residual)
    spans: tuple                        # per group, its (first row, n, size) in s
    plain: tuple                        # the step without contacts (plain_first)


def _factor_status(code: int, pos: int) -> int:
    """The graphsolve status (:data:`graphsolve.lowlevel.STATUS_OK`, ``STATUS_NONFINITE`` or a
    singular pivot's position) that a Newton run ending in ``code`` leaves in the
    factorization, for ``Factorization.mark_valid``."""
    if code == NewtonStatus.NONFINITE:
        return STATUS_NONFINITE
    if code == NewtonStatus.SINGULAR_PIVOT:
        return pos
    return STATUS_OK


class NewtonError(RuntimeError):
    """The step's Newton iteration failed (no convergence, or ``|ω| ≥ 2/Δt``)."""


class ConvergenceError(NewtonError):
    """The step's Newton or interior-point iteration did not converge: the iteration cap or a
    failed line search (a :class:`NewtonError`; :attr:`.Simulation.halvings` retries such a
    step in halves before raising it)."""


class SingularStepError(NewtonError):
    """The step's Newton matrix has a singular pivot block: redundant joints, or an iterate
    at a singular configuration of the mechanism (e.g. a closed-loop leg stretched straight).
    A :class:`NewtonError`, raised at once: :attr:`.Simulation.halvings` does not retry it
    (redundant joints stay singular in halves)."""


def omega_scalar(w: np.ndarray, dt: float) -> np.ndarray:
    """``ω̄ₛ = sqrt((2/Δt)² - ωᵀω)`` of eq. (13); NaN where ``|ω| >= 2/Δt``."""
    arg = (2.0 / dt) ** 2 - np.einsum("...i,...i->...", w, w)
    with np.errstate(invalid="ignore"):
        return np.where(arg > 0.0, np.sqrt(np.maximum(arg, 0.0)), np.nan)


def quaternion_update(q: np.ndarray, w: np.ndarray, dt: float) -> np.ndarray:
    """``q₁ = (Δt/2) L(q₀) ω̄₀`` of eq. (17); unit norm by construction."""
    wbar = np.concatenate([omega_scalar(w, dt)[..., None], w], axis=-1)
    return 0.5 * dt * quat.multiply(q, wbar)


def _defer(order: list[int], late: set[int], G: nx.Graph) -> list[int]:
    """Move each node of ``late`` right after the last of its neighbours in ``order``.

    A loop-closing joint pivoted while one of its bodies is still to come can meet a singular
    Schur complement: the bodies eliminated so far, with the rest held fixed, may already be
    locked by the tree joints (e.g. a four-bar side link pinned to the ground). Once all its
    bodies are eliminated, its pivot is singular only if the closure is redundant.
    """
    order = [n for n in order if n not in late]
    for n in sorted(late):
        pos = max(order.index(b) for b in G[n])
        order.insert(pos + 1, n)
    return order


def _overconstrained_pivot(order: list[int], rows: dict[int, int], n_bodies: int,
                           G: nx.Graph) -> int | None:
    """The first joint node whose pivot block is singular for every value of the matrix when
    ``G``'s nodes are eliminated in ``order``, or ``None``.

    ``rows``: the constraint rows of every joint node (zero diagonal block, nonzero blocks only
    with its bodies); nodes ``< n_bodies`` are bodies (6 columns); any other node (a contact)
    has a nonzero diagonal. When the pivots before ``n`` are nonsingular, the pivot of ``n`` is
    singular exactly when the leading principal submatrix of the eliminated nodes and ``n`` is,
    and that submatrix is block diagonal over the connected components of the subgraph those
    nodes induce: only the component ``C`` of ``n`` matters. The rows of the joints in ``C``
    are zero outside the columns of the bodies in ``C`` (no joint-joint or joint-contact
    blocks), so if the joints of ``C`` hold more rows than its bodies have columns
    (``Σ rows > 6 · bodies``) those rows are linearly dependent and the pivot is singular,
    whatever the configuration. This is the case of a tree order that eliminates a body pinned
    to the world before a joint of its loop: e.g. a five-bar leg's upper link with its hip
    (5 rows) before its knee (5 more rows, 10 > 6: ``models.five_bar_leg``), or the human
    upper arm with its spherical shoulder (3) before the elbow (5, 8 > 6:
    ``models.arm_exoskeleton``). Pivoting every joint after all of its bodies (:func:`_defer`)
    never leaves such a component: each joint then comes with both of its bodies.

    The component sums are kept by union-find over the elimination (linear in the graph).
    """
    parent: dict[int, int] = {}
    excess: dict[int, int] = {}         # per component root: rows - 6 · bodies

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for n in order:
        parent[n] = n
        excess[n] = rows.get(n, 0) - (6 if n < n_bodies else 0)
        for m in G[n]:
            if m in parent:
                r = root(m)
                if r != n:
                    parent[r] = n
                    excess[n] += excess.pop(r)
        if n in rows and excess[n] > 0:
            return n
    return None


class StepSystem:
    """The Newton system of one integrator step on the mechanism graph.

    Graph nodes: bodies ``0..nb-1`` (6×6 blocks), then one node per joint with at least one
    constraint (``n_constraints`` rows, zero diagonal block), joined to its bodies.

    Elimination order (analysed once): the Brüdigam order of the graph without damper edges,
    with every loop-closing joint moved after both of its bodies (:func:`_defer`). Every joint
    is moved after all of its bodies (``joints_deferred``) in two cases: a loop joint closed to
    the world, and an order that would certainly meet a singular joint pivot, i.e. pivot a
    joint whose eliminated part holds more constraint rows than body freedoms
    (:func:`_overconstrained_pivot`: a five-bar leg on two world hips, the exoskeleton's human
    arm on its spherical shoulder). Other mechanisms keep the graph's order and its fill.
    """

    def __init__(self, model: MaximalModel, dt: float, backend: str = "auto",
                 kernels: str = "compiled", contacts: bool = True):
        if kernels not in ("compiled", "reference"):
            raise ValueError(f"kernels must be 'compiled' or 'reference', got {kernels!r}")
        self.model, self.dt = model, float(dt)
        js = model.joints
        nb = model.n_bodies
        self.contacts = contact_groups(model.spec, {b.name: i for i, b in
                                                    enumerate(model.spec.bodies)}, js
                                       ) if contacts else []
        self.kernels = kernels
        self.barrier = 0.0
        self.projection = False           # begin(..., projection=True): a projection step
        #: Whether a step is first taken without the contacts (:meth:`joint_system`), kept if
        #: every contact is open after it (:meth:`contact_step`): the contacts are
        #: frictionless (joint limits, frictionless contacts), where an open contact's force
        #: is exactly zero.
        self.inactive_first = bool(self.contacts) and all(g.m == 0 for g in self.contacts)
        self._joints_only: StepSystem | None = None
        self.constrained = np.flatnonzero(js.n_constraints > 0)
        node = {int(k): nb + c for c, k in enumerate(self.constrained)}
        sizes = [np.full(nb, 6), js.n_constraints[self.constrained]]
        first = nb + len(self.constrained)
        for grp in self.contacts:
            grp.nodes = first + np.arange(len(grp))
            first += len(grp)
            sizes.append(np.full(len(grp), grp.size))
        sizes = np.concatenate(sizes)
        G = nx.Graph()
        G.add_nodes_from(range(len(sizes)))
        for k, n in node.items():
            for e in (js.parent[k], js.child[k]):
                if e >= 0:
                    G.add_edge(int(e), n)
        # damped joints between two bodies: the damper's body-body coupling blocks (exact)
        self._damped_pairs = np.flatnonzero((js.damper > 0) & (js.parent >= 0)
                                            & (js.parent != js.child))
        for k in self._damped_pairs:
            G.add_edge(int(js.parent[k]), int(js.child[k]))
        for grp in self.contacts:
            G.add_edges_from(zip(grp.body.tolist(), grp.nodes.tolist(), strict=True))
            G.add_edges_from((int(b), int(c)) for b, c in zip(grp.other, grp.nodes, strict=True)
                             if b >= 0)
        self.graph = G
        self.matrix = gs.BlockMatrix(G, sizes)
        zero = list(node.values())
        self._zero = zero
        # The order is that of the graph without the damper edges: a damped joint's edge a - b
        # then closes its triangle without fill (on a tree: body b, its joint, body a), where
        # ordering the damped graph itself filled between consecutive joints (a damped
        # 20-link chain: 37 fill blocks and 74 block updates against 0 and 19; 1.4× faster
        # steps).
        undamped = G
        if len(self._damped_pairs):
            undamped = G.copy()
            undamped.remove_edges_from((int(js.parent[k]), int(js.child[k]))
                                       for k in self._damped_pairs)
        base = gs.analyze(undamped, ordering="brudigam", block_sizes=sizes, zero_diagonal=zero)
        loop_names = {j.name for j in model.spec.loop_joints}
        joint_nodes = set(node.values())
        if any(js.parent[k] < 0 and name in loop_names for k, name in enumerate(js.names)):
            # A loop closed to the world makes both ends of a chain zero-diagonal joint nodes:
            # some body would be eliminated with two joints still after it, and a body between
            # two ball joints (free spin about their axis) then leaves a singular joint pivot.
            # Pivot every joint after all of its bodies (joint-joint fill, never singular
            # unless the joints are redundant).
            late = joint_nodes
        else:
            # Loops closed between two bodies: each loop joint after its two bodies; every
            # joint after its bodies where the order would certainly meet a singular joint
            # pivot (more constraint rows than body freedoms behind it: a five-bar leg's knee
            # after its upper link and that link's hip, models.five_bar_leg; the elbow after
            # the human upper arm and its spherical shoulder, models.arm_exoskeleton). Other
            # mechanisms (four-bars, segment chains, floating-base legs as models.minitaur)
            # keep their order and its fill.
            late = {node[k] for k, name in enumerate(js.names)
                    if k in node and name in loop_names}
            rows = {node[k]: int(js.n_constraints[k]) for k in node}
            if _overconstrained_pivot(_defer(list(base.elimination_order), late, G), rows,
                                      nb, G) is not None:
                late = joint_nodes
        #: every joint is pivoted after all of its bodies (:func:`_defer`); otherwise the
        #: graph's own order, with only the loop joints moved after their bodies
        self.joints_deferred = bool(joint_nodes) and late == joint_nodes
        if late or undamped is not G:
            self.analysis = gs.analyze(G, ordering=_defer(list(base.elimination_order), late, G),
                                       block_sizes=sizes, zero_diagonal=zero)
        else:
            self.analysis = base
        self.backend = backend
        # Tree mechanisms (no block updates) let the fused Newton kernel use graphsolve's
        # implicit-L factor: one solve per factorization, a third less factor work.
        self._acyclic = int(self.analysis.sched_ptr[-1]) == 0
        self._factorization = None
        self._condensation = None         # the interior point's condensed matrix
        self._condensed_factorization = None   # (factorization, solver) of factor()
        self._handle = None
        self._csr = None                  # entry coordinates of the BlockMatrix buffer
        self._work = None                 # work arrays of step_compiled
        self._contact_wk = None           # work arrays of contact_step
        self._joint_args = None           # the joint arrays tuple of run_compiled
        self._no_control = None           # run kernels' placeholders for "no controller"
        self._kernel_work = None          # scratch of the compiled kernels (newton_work)
        self.offsets = self.matrix.offsets
        self.N = int(self.offsets[-1])
        self._build_scatter(node)
        self._coupling = np.zeros((len(self._damped_pairs), 2, 36))

    # ------------------------------------------------------------------ index maps
    def _build_scatter(self, node):
        """Index maps from padded per-joint blocks to the flat BlockMatrix buffer."""
        js, A = self.model.joints, self.matrix
        n = len(js)
        src, dst = [], []
        # stacked padded arrays: 0 = body a rows (6×6), 1 = body b rows, 2 = joint rows vs a,
        # 3 = joint rows vs b; flat index = ((slot * n + k) * 6 + r) * 6 + c
        for k, jn in node.items():
            nc = int(js.n_constraints[k])
            for end, e in enumerate((js.parent[k], js.child[k])):
                if e < 0:
                    continue
                r6, cc = np.meshgrid(np.arange(6), np.arange(nc), indexing="ij")
                p = A.edge_ptr[A.edge_index(int(e), jn)]
                dst.append(p + (r6 * nc + cc).ravel())
                src.append((((end * n + k) * 6 + r6) * 6 + cc).ravel())
                rr, c6 = np.meshgrid(np.arange(nc), np.arange(6), indexing="ij")
                p = A.edge_ptr[A.edge_index(jn, int(e))]
                dst.append(p + (rr * 6 + c6).ravel())
                src.append(((((2 + end) * n + k) * 6 + rr) * 6 + c6).ravel())
        self._src = np.concatenate(src) if src else np.zeros(0, dtype=np.int64)
        self._dst = np.concatenate(dst) if dst else np.zeros(0, dtype=np.int64)
        self._ptr_bj = np.full((2, n), -1, dtype=np.int64)
        self._ptr_jb = np.full((2, n), -1, dtype=np.int64)
        self._jrow = np.full(n, -1, dtype=np.int64)
        for k, jn in node.items():
            self._jrow[k] = self.offsets[jn]
            for end, e in enumerate((js.parent[k], js.child[k])):
                if e >= 0:
                    self._ptr_bj[end, k] = A.edge_ptr[A.edge_index(int(e), jn)]
                    self._ptr_jb[end, k] = A.edge_ptr[A.edge_index(jn, int(e))]
        # damper coupling: flat buffer index of every entry of the (a, b) and (b, a) blocks
        # of each damped joint (row-major 6×6); joints sharing a body pair share entries
        pairs = self._damped_pairs
        self._coupling_dst = np.zeros((len(pairs), 2, 36), dtype=np.int64)
        for i, k in enumerate(pairs):
            a, b = int(js.parent[k]), int(js.child[k])
            self._coupling_dst[i, 0] = A.edge_ptr[A.edge_index(a, b)] + np.arange(36)
            self._coupling_dst[i, 1] = A.edge_ptr[A.edge_index(b, a)] + np.arange(36)
        rows = [self.offsets[node[int(k)]] + np.arange(js.n_constraints[k])
                for k in self.constrained]
        self._lambda_rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        cols = [k * 6 + np.arange(js.n_constraints[k]) for k in self.constrained]
        self._lambda_src = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        for grp in self.contacts:
            k = grp.size
            grp.rows = self.offsets[grp.nodes][:, None] + np.arange(k)
            grp.r0 = np.ascontiguousarray(grp.rows[:, 0])
            grp.diag_ptr = A.diag_ptr[grp.nodes].astype(np.int64)
            grp.dst_diag = grp.diag_ptr[:, None] + np.arange(k * k)
            # edge blocks to body a and (body-body contacts) body b; -1: no second body
            ptr = np.full((4, len(grp)), -1, dtype=np.int64)
            for e, bodies in enumerate((grp.body, grp.other)):
                for i, (b, c) in enumerate(zip(bodies, grp.nodes, strict=True)):
                    if b >= 0:
                        ptr[e, i] = A.edge_ptr[A.edge_index(int(b), int(c))]
                        ptr[2 + e, i] = A.edge_ptr[A.edge_index(int(c), int(b))]
            grp.bc_a, grp.bc_b, grp.cb_a, grp.cb_b = ptr
            grp.dst_bc = ptr[0][:, None] + np.arange(6 * k)
            grp.dst_cb = ptr[2][:, None] + np.arange(6 * k)
            pair = np.flatnonzero(grp.other >= 0)
            grp.pair_index = pair
            grp.dst_bc2 = ptr[1][pair][:, None] + np.arange(6 * k)
            grp.dst_cb2 = ptr[3][pair][:, None] + np.arange(6 * k)

    def unpack(self, s: np.ndarray):
        """``(v, w, λ_padded)`` views of a solution vector ``s``; λ padded to (n_joints, 6)."""
        nb = self.model.n_bodies
        body = s[:6 * nb].reshape(nb, 6)
        lam = np.zeros(len(self.model.joints) * 6)
        lam[self._lambda_src] = s[self._lambda_rows]
        return body[:, :3], body[:, 3:], lam.reshape(-1, 6)

    def pack(self, v, w, lam_padded) -> np.ndarray:
        s = np.zeros(self.N)
        nb = self.model.n_bodies
        s[:6 * nb] = np.hstack([v, w]).ravel()
        s[self._lambda_rows] = np.asarray(lam_padded).ravel()[self._lambda_src]
        return s

    # ------------------------------------------------------------------ step setup
    def begin(self, x1, q1, v0, w0, joint_forces=None, projection: bool = False):
        """Fix the quantities that stay constant during the step's Newton iteration.

        ``joint_forces`` (n_joints, 6) are actuator inputs along the joint coordinates. With
        ``projection=True`` the body residual becomes ``M̃ (ż₁ - ż₀) - Σ Gᵀλ`` (an impulsive
        projection of ``ż₀`` onto velocities whose update satisfies the constraints).
        """
        m, js = self.model, self.model.joints
        self.x1, self.q1, self.v0, self.w0 = x1, q1, v0, w0
        self.projection = projection
        G = np.empty((2, len(js), 6, 6))                  # Dᵀ [∂g/∂x, ∂g/∂ʳq] per end
        if self.kernels == "compiled":
            constraint_jacobian_kernel(x1, q1, js.parent, js.child, js.p_a, js.p_b, js.q_off,
                                       js.select, G, self._scratch())
        else:
            ends = m.endpoint_states(x1, q1)
            _, dxa, dqa, dxb, dqb = jt.constraint_terms(js, *ends)
            for e, (dx, dq, qe) in enumerate(((dxa, dqa, ends[1]), (dxb, dqb, ends[3]))):
                G[e, :, :, :3] = js.select @ dx
                G[e, :, :, 3:] = js.select @ quat.rotational_jacobian(dq, qe)
        self.G = G
        for grp in self.contacts:
            if self.kernels == "compiled":
                grp.P = np.empty((len(grp), 1 + grp.m, 12))
                ck.velocity_maps(x1, q1, grp.m, *grp.kernel_arguments(), grp.P)
            else:
                grp.P = grp.velocity_map(x1, q1)
        nb = m.n_bodies
        wrench = np.zeros((nb, 6))
        self.damping = None
        if not projection:
            wrench[:, :3] += m.mass[:, None] * m.gravity
            springs, dampers = np.any(js.spring > 0), np.any(js.damper > 0)
            if springs or dampers or joint_forces is not None:
                ends = m.endpoint_states(x1, q1)
                RM = jt.rate_map(js, *ends)                # (n, 6, 12)
                u = np.zeros((len(js), 6))
                if springs:
                    u -= js.spring[:, None] * (jt.minimal_coordinates(js, *ends)
                                               - js.spring_offset)
                if joint_forces is not None:
                    u += joint_forces
                self._add_joint_wrench(wrench, np.einsum("nji,nj->ni", RM, u))
                if dampers:
                    self.damping = js.damper[:, None, None] * np.einsum("nki,nkj->nij", RM, RM)
        self.external = wrench
        self._diag_const = np.zeros((nb, 6, 6))
        self._coupling = np.zeros((len(self._damped_pairs), 2, 36))
        if self.damping is not None:
            # ∂(-diag(1,2) W_damper)/∂ż₁ = diag(1,2) d RᵀR (module docstring): body diagonals
            # and, for a joint between two bodies, the (a, b) and (b, a) blocks
            K = self.damping * np.tile(_ROT_SCALE, 2)[None, :, None]
            has = js.parent >= 0
            np.add.at(self._diag_const, js.parent[has], K[has, :6, :6])
            np.add.at(self._diag_const, js.child, K[:, 6:, 6:])
            pairs = self._damped_pairs
            self._coupling[:, 0] = K[pairs, :6, 6:].reshape(-1, 36)
            self._coupling[:, 1] = K[pairs, 6:, :6].reshape(-1, 36)
        self._write_coupling(self.matrix)

    def _write_coupling(self, A) -> None:
        """The damper blocks between the two bodies of every damped joint into ``A`` (constant
        during a step; zero in a projection step). The Newton iteration's kernels do not write
        these entries, so the fused compiled Newton iteration keeps them from :meth:`begin`
        (the whole compiled step writes its own: :func:`.force_kernels.applied_forces_kernel`)."""
        if not len(self._damped_pairs):
            return
        A.data[self._coupling_dst.ravel()] = 0.0
        np.add.at(A.data, self._coupling_dst.ravel(), self._coupling.ravel())

    def _add_joint_wrench(self, wrench, w12):
        js = self.model.joints
        has = js.parent >= 0
        np.add.at(wrench, js.parent[has], w12[has, :6])
        np.add.at(wrench, js.child, w12[:, 6:])

    # ------------------------------------------------------------------ contacts
    def _contact_residual(self, s, v1, w1, x2, q2, out) -> None:
        """Contact rows and contact forces on the bodies (:mod:`.contacts`, NumPy reference),
        in place."""
        if not self.contacts:
            return
        if self.projection:                 # projection: contact variables stay put
            for grp in self.contacts:
                out[grp.rows] = 0.0
            return
        nb = self.model.n_bodies
        zdot = np.vstack([np.hstack([v1, w1]), np.zeros((1, 6))])       # row -1: the ground
        body_rows = out[:6 * nb].reshape(-1, 6)
        for grp in self.contacts:
            zd = np.hstack([zdot[grp.body], zdot[grp.other]])
            rows, wrench = grp.residual(s[grp.rows], zd, grp.distance(x2, q2, from_start=True),
                                        grp.P, self.barrier)
            out[grp.rows] = rows
            np.add.at(body_rows, grp.body, -wrench[:, 0])
            pair = grp.pair_index
            np.add.at(body_rows, grp.other[pair], -wrench[pair, 1])

    def _contact_residual_compiled(self, s, out) -> None:
        """:meth:`_contact_residual` by :func:`.contact_kernels.contact_residual`."""
        if self.projection:
            for grp in self.contacts:
                out[grp.rows] = 0.0
            return
        for grp in self.contacts:
            ck.contact_residual(s, self.x1, self.q1, self.dt, self.barrier, grp.m,
                                *grp.kernel_arguments(), grp.friction, grp.r0, grp.P, out)

    def _contact_jacobian(self, s, w1, x2, q2, A) -> None:
        """Contact blocks of ``F`` (diagonal, body-contact, contact-body), in place."""
        if not self.contacts:
            return
        if self.projection:
            self._projection_contact_blocks(A)
            return
        dq2 = self._dq2_dw(self.q1, w1)
        for grp in self.contacts:
            n, pair = len(grp), grp.pair_index
            A.data[grp.dst_diag] = grp.diagonal_blocks(s[grp.rows]).reshape(n, -1)
            bc = grp.body_columns(grp.P).reshape(n, 2, -1)
            cb = grp.contact_rows_by_body(grp.P, grp.distance_jacobian(x2, q2, dq2, self.dt)
                                          ).reshape(n, 2, -1)
            A.data[grp.dst_bc] = bc[:, 0]
            A.data[grp.dst_cb] = cb[:, 0]
            A.data[grp.dst_bc2] = bc[pair, 1]
            A.data[grp.dst_cb2] = cb[pair, 1]

    def _projection_contact_blocks(self, A) -> None:
        for grp in self.contacts:
            A.data[grp.dst_diag] = np.eye(grp.size).ravel()
            for dst in (grp.dst_bc, grp.dst_cb, grp.dst_bc2, grp.dst_cb2):
                A.data[dst] = 0.0

    def _contact_jacobian_compiled(self, s, A) -> None:
        """:meth:`_contact_jacobian` by :func:`.contact_kernels.contact_jacobian`."""
        if self.projection:
            self._projection_contact_blocks(A)
            return
        for grp in self.contacts:
            ck.contact_jacobian(s, self.x1, self.q1, self.dt, grp.m, *grp.kernel_arguments(),
                                grp.friction, grp.r0, grp.P, grp.diag_ptr, grp.bc_a, grp.cb_a,
                                grp.bc_b, grp.cb_b, A.data)

    def _coordinates(self):
        """Row and column of every entry of the BlockMatrix buffer (cached)."""
        if self._csr is None:
            rows, cols = self.matrix.entry_coordinates()
            self._csr = (np.ascontiguousarray(rows, dtype=np.int64),
                         np.ascontiguousarray(cols, dtype=np.int64))
        return self._csr

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """``F x`` with the current Jacobian values, straight from the BlockMatrix buffer
        (compiled COO product; no CSR copy per call or per Jacobian)."""
        rows, cols = self._coordinates()
        out = np.empty(self.N)
        ck.coo_matvec(rows, cols, self.matrix.data, np.ascontiguousarray(x, dtype=float), out)
        return out

    # ------------------------------------------------------------------ residual
    def next_configuration(self, v1, w1):
        return self.x1 + self.dt * v1, quaternion_update(self.q1, w1, self.dt)

    def residual(self, s: np.ndarray) -> np.ndarray:
        """``f(s)`` of eq. (30a) in the graph's row layout; NaN if some ``|ω| >= 2/Δt``."""
        if self.kernels == "reference":
            return self.residual_reference(s)
        m, js = self.model, self.model.joints
        has = self.damping is not None
        damping = self.damping if has else np.zeros((0, 12, 12))
        out = residual_kernel(s, self.x1, self.q1, self.v0, self.w0, m.mass, m.inertia,
                              self.dt, self.projection, self.external, damping, has, self.G,
                              js.parent, js.child, js.p_a, js.p_b, js.q_off, js.select,
                              js.n_constraints, self._jrow, self._scratch())
        if self.contacts:
            self._contact_residual_compiled(s, out)
        return out

    def jacobian(self, s: np.ndarray) -> gs.BlockMatrix:
        """``F = ∂f/∂s`` (eq. 32) written into the analysed BlockMatrix (in place)."""
        if self.kernels == "reference":
            return self.jacobian_reference(s)
        m, js = self.model, self.model.joints
        jacobian_kernel(s, self.matrix.data, self.x1, self.q1, m.mass, m.inertia, self.dt,
                        self.projection, self._diag_const, self.G, js.parent, js.child, js.p_a,
                        js.p_b, js.q_off, js.select, js.n_constraints, self._ptr_bj,
                        self._ptr_jb, self._scratch())
        self._write_coupling(self.matrix)
        if self.contacts:
            self._contact_jacobian_compiled(s, self.matrix)
        return self.matrix

    def residual_reference(self, s: np.ndarray) -> np.ndarray:
        """NumPy reference of :meth:`residual` (vectorized over bodies and joints)."""
        m, js, dt = self.model, self.model.joints, self.dt
        v1, w1, lam = self.unpack(s)
        J = m.inertia
        out = np.empty(self.N)
        body = np.empty((m.n_bodies, 6))
        if self.projection:
            body[:, :3] = m.mass[:, None] * (v1 - self.v0)
            body[:, 3:] = np.einsum("nij,nj->ni", J, w1 - self.w0)
        else:
            Jw1 = np.einsum("nij,nj->ni", J, w1)
            Jw0 = np.einsum("nij,nj->ni", J, self.w0)
            body[:, :3] = m.mass[:, None] * (v1 - self.v0) / dt
            body[:, 3:] = (omega_scalar(w1, dt)[:, None] * Jw1 + np.cross(w1, Jw1)
                           - omega_scalar(self.w0, dt)[:, None] * Jw0 + np.cross(self.w0, Jw0))
        wrench = self.external.copy()
        if self.damping is not None:
            zd = m._stack_velocities(v1, w1)
            self._add_joint_wrench(wrench, -np.einsum("nij,nj->ni", self.damping, zd))
        body -= _ROT_SCALE * wrench
        force = np.einsum("enji,nj->eni", self.G, lam)      # G_eᵀ λ
        has = js.parent >= 0
        np.add.at(body, js.parent[has], -force[0, has])
        np.add.at(body, js.child, -force[1])
        out[:6 * m.n_bodies] = body.ravel()
        x2, q2 = self.next_configuration(v1, w1)
        c = np.einsum("nij,nj->ni", js.select,
                      jt.constraint_terms(js, *m.endpoint_states(x2, q2), jacobians=False))
        out[self._lambda_rows] = c.ravel()[self._lambda_src]
        self._contact_residual(s, v1, w1, x2, q2, out)
        return out

    # ------------------------------------------------------------------ Jacobian
    def jacobian_reference(self, s: np.ndarray) -> gs.BlockMatrix:
        """NumPy reference of :meth:`jacobian`."""
        m, js, dt = self.model, self.model.joints, self.dt
        v1, w1, _ = self.unpack(s)
        nb = m.n_bodies
        D = self._diag_const.copy()
        if self.projection:
            D[:, :3, :3] += m.mass[:, None, None] * np.eye(3)
            D[:, 3:, 3:] += m.inertia
        else:
            J = m.inertia
            ws = omega_scalar(w1, dt)
            Jw = np.einsum("nij,nj->ni", J, w1)
            D[:, :3, :3] += (m.mass / dt)[:, None, None] * np.eye(3)
            D[:, 3:, 3:] += (ws[:, None, None] * J - np.einsum("ni,nj->nij", Jw, w1)
                             / ws[:, None, None] + quat.skew(w1) @ J - quat.skew(Jw))
        A = self.matrix
        A.data[:36 * nb] = D.ravel()
        x2, q2 = self.next_configuration(v1, w1)
        ends2 = m.endpoint_states(x2, q2)
        _, dxa, dqa, dxb, dqb = jt.constraint_terms(js, *ends2)
        blocks = np.empty((4, len(js), 6, 6))
        blocks[0] = -np.swapaxes(self.G[0], -1, -2)
        blocks[1] = -np.swapaxes(self.G[1], -1, -2)
        for e, (dx, dq) in enumerate(((dxa, dqa), (dxb, dqb))):
            idx = js.parent if e == 0 else js.child
            safe = np.maximum(idx, 0)
            dq2 = self._dq2_dw(self.q1[safe], w1[safe])      # (n, 4, 3)
            blocks[2 + e, :, :, :3] = dt * (js.select @ dx)
            blocks[2 + e, :, :, 3:] = js.select @ dq @ dq2
        A.data[self._dst] = blocks.ravel()[self._src]
        self._write_coupling(A)
        self._contact_jacobian(s, w1, x2, q2, A)
        return A

    def _dq2_dw(self, q1, w1):
        """``∂q₂/∂ω₁ = (Δt/2) L(q₁) [-ω₁ᵀ/ω̄ₛ; I]`` from eq. (17); (n, 4, 3)."""
        ws = omega_scalar(w1, self.dt)
        top = -w1 / ws[:, None]
        M = np.concatenate([top[:, None, :], np.broadcast_to(np.eye(3), w1.shape[:1] + (3, 3))],
                           axis=1)
        return 0.5 * self.dt * quat.L(q1) @ M

    def _fused_factorization(self, s: np.ndarray):
        """:meth:`_ensure_factorization`, with this system's fused handle (``_handle``, for
        the compiled Newton steps) made on first use."""
        F = self._ensure_factorization(s)
        if self._handle is None:
            self._handle = F.fused_handle(self.matrix, implicit=self._acyclic)
        return F

    def _ensure_factorization(self, s: np.ndarray):
        """The graphsolve factorization, made from ``F(s)`` on first use."""
        if self._factorization is None:
            if self.fused:      # filled by the fused kernel: no separate kernel compile
                self._factorization = allocate(self.analysis, "ldu", "compiled")
            else:
                # Interior-point matrices pair tiny and large complementarity entries near
                # convergence (structured ill-conditioning): only exact zeros are singular.
                self._factorization = gs.factorize(
                    self.jacobian(s), method="ldu", analysis=self.analysis,
                    backend=self.backend, pivot_rtol=0.0 if self.contacts else PIVOT_RTOL)
        return self._factorization

    @property
    def fused(self) -> bool:
        """Whether :meth:`newton` runs (compiled kernels and graphsolve's compiled backend)."""
        return (self.kernels == "compiled" and self.backend in ("auto", "compiled")
                and not self.contacts)

    def newton(self, s: np.ndarray, tol: float, max_iter: int, reuse: bool = True):
        """Fused compiled Newton iteration on ``s`` (in place); see :func:`newton_kernel`
        (``reuse``: its simplified-Newton rule, :data:`.newton_kernels.CHORD_RATE`).

        Returns ``(code, iterations, position, history)``.
        """
        m, js = self.model, self.model.joints
        F = self._fused_factorization(s)
        history = np.zeros(max_iter + 1)
        has = self.damping is not None
        damping = self.damping if has else np.zeros((0, 12, 12))
        code, it, pos = newton_kernel(
            s, tol, max_iter, history, self._handle, self.matrix.data, self.x1, self.q1,
            self.v0, self.w0, m.mass, m.inertia, self.dt, self.projection, self.external,
            damping, has, self._diag_const, self.G, js.parent, js.child, js.p_a, js.p_b,
            js.q_off, js.select, js.n_constraints, self._jrow, self._ptr_bj, self._ptr_jb,
            self._scratch(), bool(reuse))
        F.mark_valid(_factor_status(code, pos))
        return code, it, pos, history[:it + 1]

    def _scratch(self) -> tuple:
        """The scratch arrays of every compiled kernel (:func:`.newton_kernels.newton_work`),
        made on first use; they hold nothing from one kernel call to the next."""
        if self._kernel_work is None:
            self._kernel_work = newton_work(self.model.n_bodies, len(self.model.joints), self.N)
        return self._kernel_work

    def _step_work(self):
        """Work arrays of the whole compiled steps (:meth:`step_compiled`), made on first use:
        not shared with :meth:`begin`'s attributes, which stay those of the last Python-driven
        step."""
        if self._work is None:
            m, js = self.model, self.model.joints
            nb, nj = m.n_bodies, len(js)
            gravity = np.zeros((nb, 6))
            gravity[:, :3] = m.mass[:, None] * m.gravity
            damped = bool(np.any(js.damper > 0))
            self._work = _StepWork(
                gravity=gravity, G=np.empty((2, nj, 6, 6)), rate=np.zeros((nj, 6, 12)),
                external=np.empty((nb, 6)),
                damping=np.zeros((nj if damped else 0, 12, 12)),
                diag_const=np.zeros((nb, 6, 6)),
                coupling=np.zeros((len(self._damped_pairs), 2, 36)),
                pairs=np.ascontiguousarray(self._damped_pairs, dtype=np.int64),
                applied=bool(np.any(js.spring > 0) or damped),
                no_forces=np.zeros((0, 6)), control_forces=np.zeros((nj, 6)),
                s=np.zeros(self.N), history=np.zeros(0),
                prev_v=np.zeros((nb, 3)), prev_w=np.zeros((nb, 3)),
                prev_lam=np.zeros((nj, 6)), force_scratch=force_work(nj))
        return self._work

    def step_compiled(self, x, q, v, w, lam, tol: float, max_iter: int, previous=None,
                      joint_forces=None, reuse: bool = True):
        """A whole step in one compiled call; state arrays updated in place on success.

        Gravity alone (no joint spring or damper in the mechanism, no ``joint_forces``):
        :func:`.newton_kernels.step_kernel`; otherwise
        :func:`.force_kernels.forced_step_kernel`, which also evaluates what :meth:`begin`
        does in NumPy (rate maps, spring coordinates, joint wrenches, damper blocks).
        ``joint_forces``: actuator inputs along the joint coordinates, anything that
        broadcasts to (n_joints, 6) (as in :meth:`begin`). ``previous`` = ``(v, w, λ)`` of the
        last step (arrays, overwritten with the current ones) starts Newton from the linear
        extrapolation ``2 s_k - s_{k-1}``; ``None`` starts from ``s_k``. Returns ``(code,
        iterations, position, history)``, ``history`` a view of a work buffer that the next
        call overwrites. ``reuse``: the simplified-Newton rule of
        :func:`.newton_kernels.newton_kernel`. Contacts: :meth:`contact_step`.
        """
        m, js = self.model, self.model.joints
        wk = self._step_work()
        s = wk.s
        extrapolate = previous is not None
        if previous is None:        # start_step only writes the current state into them
            previous = (wk.prev_v, wk.prev_w, wk.prev_lam)
        F = self._fused_factorization(s)
        history = wk.history_for(max_iter)
        if joint_forces is None and not wk.applied:
            code, it, pos = step_kernel(
                x, q, v, w, lam, *previous, extrapolate, s, tol, max_iter, history,
                self._handle, self.matrix.data, m.mass, m.inertia, self.dt, wk.gravity,
                wk.diag_const, wk.G, js.parent, js.child, js.p_a, js.p_b, js.q_off, js.select,
                js.n_constraints, self._jrow, self._ptr_bj, self._ptr_jb, self._scratch(),
                bool(reuse))
        else:
            has_forces = joint_forces is not None
            forces = (np.ascontiguousarray(np.broadcast_to(
                np.asarray(joint_forces, dtype=float), (len(js), 6))) if has_forces
                      else wk.no_forces)
            code, it, pos = forced_step_kernel(
                x, q, v, w, lam, *previous, extrapolate, s, tol, max_iter, history,
                self._handle, self.matrix.data, m.mass, m.inertia, self.dt, wk.gravity, forces,
                has_forces, js.parent, js.child, js.p_a, js.p_b, js.q_off, js.select, js.free,
                js.n_constraints, js.dof, js.translational_dof, js.rotational_dof,
                js.rot_axis, js.spring, js.spring_offset, js.damper, wk.pairs,
                self._coupling_dst, self._jrow, self._ptr_bj, self._ptr_jb, wk.G, wk.rate,
                wk.external, wk.damping, wk.diag_const, wk.coupling, self._scratch(),
                wk.force_scratch, bool(reuse))
        F.mark_valid(_factor_status(code, pos))
        return code, it, pos, history[:it + 1]

    def step_gravity_only(self, x, q, v, w, lam, tol: float, max_iter: int, previous=None):
        """:meth:`step_compiled` without joint forces (its former name, from when the compiled
        step took gravity as the only applied force; joint springs and dampers of the
        mechanism are included)."""
        return self.step_compiled(x, q, v, w, lam, tol, max_iter, previous)

    @property
    def compiled_contacts(self) -> bool:
        """Whether :meth:`contact_step` runs: contacts, compiled kernels and graphsolve's
        compiled backend."""
        return (self.kernels == "compiled" and self.backend in ("auto", "compiled")
                and bool(self.contacts))

    def _contact_work(self) -> _ContactWork:
        """Work arrays of :meth:`contact_step`, made on first use: its own factorization and
        fused handle (several solves per factorization; singular only at exact zero pivots, as
        the reference's), the kernel's argument tuples and scratch vectors."""
        if self._contact_wk is None:
            js = self.model.joints
            wk = self._step_work()
            F, handle = self.condensed_solver()
            groups, spans = [], []
            for grp in self.contacts:
                P = np.zeros((len(grp), 1 + grp.m, 12))          # velocity maps at z₁
                groups.append((int(grp.m), *grp.kernel_arguments(), grp.friction, grp.r0,
                               P, grp.diag_ptr, grp.bc_a, grp.cb_a, grp.bc_b, grp.cb_b))
                first = int(grp.rows[0, 0])
                if not np.array_equal(grp.rows.ravel(), first + np.arange(grp.rows.size)):
                    raise AssertionError("contact rows of a group must be contiguous")
                spans.append((first, len(grp), grp.size))
            loc = [g.complementarity_pairs() for g in self.contacts]
            pairs = tuple(np.ascontiguousarray(np.concatenate(
                [g.rows[:, p[k]].ravel() for g, p in zip(self.contacts, loc, strict=True)]),
                dtype=np.int64) for k in range(3))
            positive = np.concatenate([g.rows.ravel() for g in self.contacts]).astype(np.int64)
            N = self.N
            max_m = max(int(grp.m) for grp in self.contacts)
            scratch = (*(np.empty(N) for _ in range(8)), ck.contact_work(max_m))
            joints = (js.parent, js.child, js.p_a, js.p_b, js.q_off, js.select, js.n_constraints,
                      self._jrow, self._ptr_bj, self._ptr_jb, js.free, js.dof,
                      js.translational_dof, js.rotational_dof, js.rot_axis, js.spring,
                      js.spring_offset, js.damper, wk.pairs, self._coupling_dst)
            forces = wk.forces
            if self.inactive_first:
                plain = self.joint_system()._plain_arguments()
            else:               # not used: this system's own arrays, of the same types
                plain = (handle[0], self.matrix.data, joints, forces, self._scratch(), wk.s,
                         wk.applied)
            nb = self.model.n_bodies
            # the state (x, q, v, w, λ, previous v, w, λ) before a step without contacts
            backup = (np.empty((nb, 3)), np.empty((nb, 4)), np.empty((nb, 3)),
                      np.empty((nb, 3)), np.empty((len(js), 6)), np.empty((nb, 3)),
                      np.empty((nb, 3)), np.empty((len(js), 6)))
            self._contact_wk = _ContactWork(
                factorization=F, handle=handle, u=np.zeros(N),
                last=np.full(1, -1, dtype=np.int64), groups=tuple(groups),
                joints=joints, pairs=(*pairs, positive), forces=forces, scratch=scratch,
                s_start=np.empty(N), blocks=self._condensation.plain_blocks, spans=tuple(spans),
                plain=(*plain, backup))
        return self._contact_wk

    def joint_system(self) -> StepSystem:
        """The step system of the same mechanism without its contacts and joint limits (made
        on first use): the step a frictionless-contact system takes first
        (:attr:`inactive_first`)."""
        if self._joints_only is None:
            self._joints_only = StepSystem(self.model, self.dt, self.backend, self.kernels,
                                           contacts=False)
        return self._joints_only

    def _plain_arguments(self) -> tuple:
        """``(handle, data, joints, forces, newton, s, applied)``: what
        :func:`.interior_point_kernels.plain_first` needs to take this (contact-free) system's
        compiled step (:meth:`step_compiled`)."""
        wk = self._step_work()
        self._fused_factorization(wk.s)
        return (self._handle, self.matrix.data, self._joint_arguments(), wk.forces,
                self._scratch(), wk.s, wk.applied)

    def contact_step(self, x, q, v, w, lam, tol: float, max_iter: int, *, warm_start: bool,
                     refine: bool, refine_atol: float, previous, extrapolate: bool,
                     joint_forces=None, reuse: bool = True, quiet_floor: bool = True):
        """A whole step with contacts in one compiled call
        (:func:`.interior_point_kernels.step_kernel_plain_first`, then
        :func:`.interior_point_kernels.contact_step_kernel`: update rules, applied forces,
        contact maps and the Mehrotra interior-point loop of
        :meth:`.Simulation._interior_point`, Brüdigam et al. 2023 App. D, Nocedal & Wright
        Alg. 14.3); the state arrays are updated in place on success.

        The contact variables of the last step are :meth:`contact_variables` (set them with
        :meth:`set_contact_variables`); ``warm_start`` starts from them when one is nonzero,
        floored as :func:`.interior_point_kernels.warm_floor` says with the last step's
        interior-point iterations (:meth:`last_contact_iterations`) if ``quiet_floor``, at
        :data:`.interior_point_kernels.WARM_FLOOR` otherwise.
        With :attr:`inactive_first`, unless the last step closed a contact, the step is first
        taken without the contacts (the compiled step of :meth:`joint_system`), and kept if
        every contact is open after it (force ``γ = 0``, ``s_φ = φ(z₂)``; ``reuse`` as in
        :meth:`step_compiled`).
        ``previous`` = ``(v, w, λ)`` arrays that receive the current state; with
        ``extrapolate`` they hold the last step's, and the start is ``2 s_k - s_{k-1}`` (as
        :meth:`step_compiled`). ``joint_forces`` as in :meth:`step_compiled`. Returns ``(code,
        iterations, position, target, history)``: a :class:`.NewtonStatus`, the iterations,
        the singular pivot's position or the body over the rate limit, the centring target of a
        failed line search and the residual max-norms (a view of a work buffer that the next
        call overwrites).
        """
        m, js = self.model, self.model.joints
        wk = self._step_work()
        cw = self._contact_work()
        s = wk.s
        history = wk.history_for(max_iter)
        has_forces = joint_forces is not None
        forces = (np.ascontiguousarray(np.broadcast_to(
            np.asarray(joint_forces, dtype=float), (len(js), 6))) if has_forces
                  else wk.no_forces)
        code, it, pos, target = step_kernel_plain_first(
            x, q, v, w, lam, *previous, bool(extrapolate), cw.u, cw.last, bool(warm_start),
            bool(quiet_floor), s, float(tol), int(max_iter), bool(refine), float(refine_atol),
            history, cw.handle, self.matrix.data, cw.blocks, m.mass, m.inertia, self.dt,
            wk.gravity, forces, has_forces, cw.joints, cw.groups, cw.pairs, cw.forces,
            cw.scratch, self._scratch(), cw.s_start, self.inactive_first, cw.plain, bool(reuse))
        cw.factorization.mark_valid(_factor_status(code, pos))
        return code, it, pos, target, history[:it + 1]

    def _joint_arguments(self) -> tuple:
        """The joint arrays of the compiled kernels, as one tuple (see
        :func:`.interior_point_kernels.contact_step_kernel`)."""
        if self._joint_args is None:
            js, wk = self.model.joints, self._step_work()
            self._joint_args = (js.parent, js.child, js.p_a, js.p_b, js.q_off, js.select,
                                js.n_constraints, self._jrow, self._ptr_bj, self._ptr_jb,
                                js.free, js.dof, js.translational_dof, js.rotational_dof,
                                js.rot_axis, js.spring, js.spring_offset, js.damper, wk.pairs,
                                self._coupling_dst)
        return self._joint_args

    def _control_arguments(self, control) -> tuple:
        """``(joint_forces, has_forces, has_control, control, control_work)`` of the run
        kernels: no joint forces for ``control=None``, else the PD controller's ``(schedule,
        work)`` and a buffer for its inputs (placeholders of the same types without one, so
        the kernels compile once)."""
        wk = self._step_work()
        if control is not None:
            schedule, work = control
            return wk.control_forces, False, True, schedule, work
        if self._no_control is None:
            n = len(self.model.joints)
            self._no_control = (np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.bool_),
                                np.zeros((0, n)), np.zeros((0, n)),
                                np.zeros((0, n), dtype=np.bool_), np.array([-1.0, 0.0, 0.0])
                                ), control_work(self.model.joints)
        return (wk.no_forces, False, False, *self._no_control)

    def run_compiled(self, first: int, count: int, t: float, x, q, v, w, lam, previous,
                     started: bool, extrapolate: bool, tol: float, max_iter: int, record,
                     hflat=None, reuse: bool = True, control=None):
        """Steps ``first .. first + count - 1`` of :meth:`.Simulation.run` without contacts in
        one compiled call (:func:`.run_kernels.joint_run_kernel`): each step is
        :meth:`step_compiled`'s, on the state arrays in place; ``previous`` = ``(v, w, λ)``
        arrays of the last step (``started``) or to be filled (not ``started``), as
        :meth:`step_compiled` with and without ``previous``. ``record`` = ``(xs, qs, vs, ws,
        its)`` receive rows ``first ..`` of the converged steps; ``hflat`` (optional) their
        residual max-norms one after the other; ``reuse`` as in :meth:`step_compiled`.
        ``control``: ``None`` (no joint forces) or ``(schedule, work)`` of a PD controller
        (:meth:`.control.PDController.schedule` for these steps and its ``work``), whose
        inputs each step takes as :meth:`step_compiled` takes ``joint_forces``.

        Returns ``(code, iterations, position, done, t, used, history)``: the last step's
        status, iterations and position (as :meth:`step_compiled`), the converged steps,
        ``t`` advanced by ``Δt`` per converged step, the entries of ``hflat`` written and the
        last step's residual max-norms (a view of the work buffer).
        """
        m = self.model
        wk = self._step_work()
        F = self._fused_factorization(wk.s)
        history = wk.history_for(max_iter)
        record_history = hflat is not None
        if hflat is None:
            hflat = wk.history
        code, it, pos, done, t, used = joint_run_kernel(
            int(first), int(count), float(t), self.dt, bool(extrapolate), bool(started), x, q, v,
            w, lam, *previous, wk.s, float(tol), int(max_iter), history, self._handle,
            self.matrix.data, m.mass, m.inertia, wk.gravity, wk.applied,
            *self._control_arguments(control), self._joint_arguments(), wk.forces,
            self._scratch(), *record, record_history, hflat, bool(reuse))
        F.mark_valid(_factor_status(code, pos))
        return code, it, pos, done, t, used, history[:it + 1]

    def contact_run(self, first: int, count: int, t: float, x, q, v, w, lam, previous,
                    started: bool, extrapolate: bool, tol: float, max_iter: int, *,
                    warm_start: bool, refine: bool, refine_atol: float, record, hflat=None,
                    contact_rows=None, contacts_out=None, reuse: bool = True,
                    quiet_floor: bool = True, control=None):
        """Steps ``first .. first + count - 1`` of :meth:`.Simulation.run` with contacts in one
        compiled call (:func:`.run_kernels.contact_run_kernel`): each step is
        :meth:`contact_step`'s (the warm start from :meth:`contact_variables`, which the
        converged steps update). ``previous``, ``started``, ``record``, ``hflat`` and
        ``control`` as in :meth:`run_compiled`; ``contacts_out[k]`` (optional) receives the
        contact variables of step ``k``, the entries ``contact_rows`` of ``s``; ``reuse`` as
        in :meth:`step_compiled`, ``quiet_floor`` as in :meth:`contact_step`.

        Returns ``(code, iterations, position, target, done, t, used, history)``: the last
        step's :meth:`contact_step` result, then as :meth:`run_compiled`.
        """
        m = self.model
        wk = self._step_work()
        cw = self._contact_work()
        history = wk.history_for(max_iter)
        record_history = hflat is not None
        if hflat is None:
            hflat = wk.history
        record_contacts = contacts_out is not None
        if not record_contacts:
            contact_rows, contacts_out = np.zeros(0, dtype=np.int64), np.zeros((0, 0))
        code, it, pos, target, done, t, used = contact_run_kernel(
            int(first), int(count), float(t), self.dt, bool(extrapolate), bool(started), x, q, v,
            w, lam, *previous, cw.u, cw.last, bool(warm_start), bool(quiet_floor), wk.s,
            float(tol), int(max_iter), bool(refine), float(refine_atol), history, cw.handle,
            self.matrix.data, cw.blocks, m.mass, m.inertia, wk.gravity,
            *self._control_arguments(control), cw.joints, cw.groups, cw.pairs, cw.forces,
            cw.scratch, self._scratch(), cw.s_start, self.inactive_first, cw.plain, *record,
            record_history, hflat, record_contacts, contact_rows, contacts_out, bool(reuse))
        cw.factorization.mark_valid(_factor_status(code, pos))
        return code, it, pos, target, done, t, used, history[:it + 1]

    def contact_rows(self) -> np.ndarray:
        """Positions in ``s`` of every contact variable, group after group (the order of
        :meth:`contact_variables` flattened)."""
        return np.concatenate([np.arange(a, a + n * k) for a, n, k in self._contact_work().spans]
                              + [np.zeros(0, dtype=np.int64)]).astype(np.int64)

    def contact_variables(self) -> list[np.ndarray]:
        """Copies of the contact variables :meth:`contact_step` last stored, per group
        ``(n, size)``."""
        u = self._contact_work().u
        return [u[a:a + n * k].reshape(n, k).copy() for a, n, k in self._contact_work().spans]

    def set_contact_variables(self, values, last_iterations: int = -1) -> None:
        """Store per-group ``(n, size)`` contact variables for :meth:`contact_step`'s warm
        start, and the interior-point iterations of the step that made them
        (``last_iterations``; -1: not an interior-point step, or unknown), which set the warm
        start's floor (:func:`.interior_point_kernels.warm_floor`)."""
        cw = self._contact_work()
        for (a, n, k), val in zip(cw.spans, values, strict=True):
            cw.u[a:a + n * k] = np.asarray(val, dtype=float).reshape(-1)
        cw.last[0] = int(last_iterations)

    def last_contact_iterations(self) -> int:
        """The interior-point iterations of the last converged :meth:`contact_step` (-1 if it
        was taken without contacts; a failed step leaves the value), as
        :meth:`set_contact_variables` takes them."""
        return int(self._contact_work().last[0])

    def mean_complementarity(self) -> float:
        """Mean complementarity product of the last iterate of :meth:`contact_step` (for
        the messages of a failed step)."""
        row, ia, ib, _ = self._contact_work().pairs
        s = self._step_work().s
        return float(ck.mean_product(s, s, 0.0, ia, ib))

    @property
    def condensed(self) -> bool:
        """Whether :meth:`factor` and :meth:`resolve` go through the condensed matrix
        (:mod:`.condensation`): with contacts, except in a projection step (whose contact
        blocks are the identity)."""
        return bool(self.contacts) and not self.projection

    def condensation(self) -> Condensation:
        """The contacts' slack condensation (:class:`.condensation.Condensation`), made on
        first use."""
        if self._condensation is None:
            self._condensation = Condensation(self.matrix, self.contacts, self._zero,
                                              self.analysis.order)
        return self._condensation

    def condensed_solver(self) -> tuple:
        """``(factorization, solver)`` of the condensed matrix (:meth:`condensation`):
        graphsolve's compiled LDU, ``pivot_rtol = 0`` (interior-point matrices pair tiny and
        large complementarity entries near convergence, structured ill-conditioning: only
        exact zeros are singular), and its :meth:`.Condensation.solver` for
        :func:`.condensation.condensed_refactor_solve` and ``condensed_solve``. On acyclic
        patterns (every contact a leaf of a tree) the fused handle keeps the implicit-L
        factor (lower blocks unscaled, ``D⁻¹`` applied in the solves): on ``sphere_chain``
        n = 10 / 100 a step took 9 % / 29 % less time than with the explicit factor, with the
        same or fewer interior-point iterations (3.01 / 4.29 against 3.01 / 4.31 per step).
        The compiled contact step and the Python reference (:meth:`factor`) each make their
        own."""
        cond = self.condensation()
        F = allocate(cond.analysis, "ldu", "compiled", pivot_rtol=0.0)
        handle = F.fused_handle(cond.reduced, implicit=cond.analysis.n_updates == 0)
        return F, cond.solver(handle)

    def factor(self, s: np.ndarray) -> None:
        """Evaluate ``F(s)`` (eq. 32) and (re)factor it with graphsolve's LDU (eq. 31-33);
        with contacts the condensed matrix (:attr:`condensed`, :mod:`.condensation`),
        through :func:`.condensation.condensed_refactor_solve` as the compiled step does.

        Raises
        ------
        graphsolve.NonFiniteError, graphsolve.SingularBlockError
            A value is NaN or infinite, or a pivot block is singular (as graphsolve's
            ``Factorization.refactor``).
        """
        A = self.jacobian(s)
        if self.condensed:
            if self._condensed_factorization is None:
                self._condensed_factorization = self.condensed_solver()
            F, solver = self._condensed_factorization
            status = condensed_refactor_solve(solver, A.data, np.zeros(self.N),
                                              np.empty(self.N))
            F.mark_valid(status)
            if status == STATUS_NONFINITE:
                A.check_finite()                  # raises, naming the block
                raise gs.NonFiniteError("the condensed interior-point matrix is not finite "
                                        "(a contact variable reached zero)")
            if status >= 0:
                node = int(F.analysis.order[status])
                raise gs.SingularBlockError(
                    f"pivot block of node {node} of the condensed interior-point matrix "
                    "is singular", node=node)
            return
        fresh = self._factorization is None
        F = self._ensure_factorization(s)
        if not fresh or self.fused:     # a fused system's factorization starts unfactored
            F.refactor(A)

    def resolve(self, rhs: np.ndarray, refine: bool = True, atol: float = 0.0) -> np.ndarray:
        """``F⁻¹ rhs`` with the factorization of the last :meth:`factor`.

        With contacts (:attr:`condensed`) the solve goes through the condensed matrix
        (:func:`.condensation.condensed_solve`). With ``refine``: iterative refinement (up to
        3 rounds while the max-norm of the linear residual ``F x - rhs`` halves; the best
        iterate is kept). Interior-point matrices near convergence pair tiny and large
        complementarity entries (ill-conditioned by construction), where refined steps reach a
        lower residual. No refinement when the linear residual is already ``<= atol``.
        """
        data = self.matrix.data
        if self.condensed:
            solver = self._condensed_factorization[1]

            def solve(b):
                x = np.empty(self.N)
                condensed_solve(solver, data, np.ascontiguousarray(b, dtype=float), x)
                return x
        else:
            solve = self._factorization.solve
        x = solve(rhs)
        if not refine:
            return x
        if self.condensed:
            cond = self._condensation

            def residual(y, out):
                return full_residual(cond.arrays, cond.plain_blocks, data, y, rhs, out)
        else:
            rows, cols = self._coordinates()

            def residual(y, out):
                return ck.refinement_residual(rows, cols, data, y, rhs, out)
        r = np.empty(self.N)
        rt = np.empty(self.N)
        rn = residual(x, r)
        if rn <= atol:
            return x
        for _ in range(3):
            trial = x - solve(r)
            rtn = residual(trial, rt)
            if not rtn < 0.5 * rn:
                if rtn < rn:
                    x = trial
                break
            x, rn = trial, rtn
            r, rt = rt, r
        return x

    def solve_linear(self, s: np.ndarray, f: np.ndarray, refine: bool | None = None
                     ) -> np.ndarray:
        """Newton direction ``Δs`` of ``F(s) Δs = -f`` (eq. 33) through graphsolve; iteratively
        refined (:meth:`resolve`) by default when there are contacts."""
        self.factor(s)
        return self.resolve(-f, bool(self.contacts) if refine is None else refine)
