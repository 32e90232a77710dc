"""Compiled forward dynamics over general joints: our versions of Si & Guenter's Method I and
Method II.

Si & Guenter (§4 after eq. 35, §5) evaluate their recursion (eq. 18-35) in two ways, both
from D*-generated, compiled C++:

*Method I* (fully symbolic)
    "recursions 1 ~ 6 are all evaluated symbolically": one straight-line program for the whole
    model, with the joints' ``S`` and ``Ṡ``, the constants (inertias, placements) and the
    symbolic inverse of each ``Ω_k`` (Gaussian elimination, exploiting zeros and ones) folded
    in.
*Method II* (mixed symbolic-numeric)
    "recursions 1 ~ 3 are computed symbolically while recursions 4 ~ 6 are computed
    numerically" (their own Jacobi solver for ``Ω_k⁻¹``).

Ours:

:class:`MethodI`
    A model-specific straight-line C function of the whole ABA (Featherstone's Table 7.1 in
    the twist order ``(w; v)``, the same recursion as :func:`~.algorithms.aba`; it arranges
    the ``O(n)`` factorisation of ``M⁻¹`` with articulated inertias where Si & Guenter's
    eq. 18-35 use Ploen's ``Y`` / ``Π`` factors, and computes the same ``q̈``), built by
    unrolling the recursion over the tree in sympy: every joint's cse'd ``T``, ``S``, ``Ṡ q̇``
    expressions inlined, inertias, placements and gravity as constants, every
    intermediate 6-vector / 6×6 / ``d×d`` entry a named scalar (zero and unit entries folded
    away by sympy), ``D_k⁻¹`` (their ``Ω_k⁻¹``) by symbolic LDLᵀ elimination. The program is
    printed as C and compiled with the system C compiler (``cc -O2``; the paper compiled
    C++ too), loaded with ``ctypes``. Numba is no option for code this long: it took 76 s
    here to compile 20 000 straight-line statements, where ``gcc -O2`` compiles TC20's
    7 200 (longer) statements in about 25 s. Compiled libraries are cached by the hash of
    their source (:data:`CACHE_DIR`), so only the first use of a model pays for gcc.
:class:`MethodII`
    Per joint *type*, the cse'd sympy expressions of ``T(q)``, ``S(q)`` and ``Ṡ q̇`` compiled
    into one numba kernel (the symbolic part); the recursion itself is generic numeric numba
    code over flat arrays (6×6 matrix products in loops, ``D_k⁻¹`` by a numeric Cholesky
    factorisation). So our symbolic/numeric split is at the joint quantities rather than
    after recursion 3 (our recursions 1-3 are numeric too); what the paper names as Method
    II's cost, numeric matrix code and a numeric solver for ``Ω_k⁻¹``, is numeric in ours
    as well.

Both take ``(q, v, tau)`` and return ``ddq``; both agree with :func:`~.algorithms.aba` to
rounding (tested), and support models whose every joint is a
:class:`~.general_joint.GeneralJoint` (built-in revolute / prismatic joints can be given as
:func:`~.general_joint.revolute_joint` / :func:`~.general_joint.prismatic_joint`).

References
----------
W. Si, B. Guenter, "Linear-time dynamics for multibody systems with general joint models",
§4 (eq. 18-35, Method I / II), §5 (Table 1).
R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, Table 7.1.
"""
from __future__ import annotations

import ctypes
import hashlib
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
from numba import njit

from .general_joint import GeneralJointModel, _sympy

__all__ = ["MethodI", "MethodII", "CompiledGeneralError", "c_compiler", "CACHE_DIR"]

#: Where :class:`MethodI` keeps its generated sources and compiled libraries: the user's cache
#: directory (``$XDG_CACHE_HOME/graphsolve/codegen``, default ``~/.cache/...``), not a shared
#: temporary directory, as the libraries are loaded by name; ``GRAPHSOLVE_CODEGEN_DIR``
#: overrides.
CACHE_DIR = Path(os.environ.get("GRAPHSOLVE_CODEGEN_DIR") or (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "graphsolve" / "codegen"))


class CompiledGeneralError(ValueError):
    """A model the compiled general-joint ABA cannot handle (a joint that is no
    :class:`~.general_joint.GeneralJoint`), or no C compiler for :class:`MethodI`."""


def c_compiler() -> str | None:
    """The C compiler :class:`MethodI` uses (``$CC``, else ``cc`` / ``gcc`` on the path)."""
    for cc in (os.environ.get("CC"), "cc", "gcc"):
        if cc and shutil.which(cc):
            return shutil.which(cc)
    return None


def _general_joints(model):
    joints = []
    for jm in model.joints:
        if not isinstance(jm, GeneralJointModel):
            raise CompiledGeneralError(
                f"joint {jm.name!r} of model {model.name!r} is a built-in {jm.type!r} joint; the "
                "compiled general-joint ABA needs every joint as a GeneralJoint (e.g. "
                "revolute_joint(axis) for a revolute)")
        joints.append(jm.joint)
    return joints


def _joint_cse(joint):
    """``(replacements, outputs)``: sympy cse of ``R`` (row-major), ``p``, ``S`` (row-major)
    and ``Ṡ q̇`` of a general joint, cached on the joint."""
    cached = getattr(joint, "_cse_cache", None)
    if cached is None:
        sympy = _sympy()
        R, p = joint.T[:3, :3], joint.T[:3, 3]
        exprs = list(R) + list(p) + list(joint.S_expr) + list(joint.rate_expr)
        cached = sympy.cse(exprs, symbols=sympy.numbered_symbols("x"))
        joint._cse_cache = cached
    return cached


# -- Method II: numba kernels per joint type, numeric recursion ---------------------------------
def _kernel_source(joint, fname: str) -> str:
    """Python source of ``fname(q, qd, out)`` writing ``R``, ``p``, ``S``, ``Ṡ q̇`` to ``out``."""
    from sympy.printing.pycode import pycode
    reps, outs = _joint_cse(joint)
    lines = [f"def {fname}(q, qd, out):"]
    lines += [f"    {s} = q[{k}]" for k, s in enumerate(joint.symbols)]
    lines += [f"    {s} = qd[{k}]" for k, s in enumerate(joint.velocity_symbols)]
    lines += [f"    {s} = {pycode(e)}" for s, e in reps]
    lines += [f"    out[{k}] = {pycode(e)}" for k, e in enumerate(outs)]
    return "\n".join(lines) + "\n"


@njit(cache=True)
def _cholesky_inverse(D, out):
    """``out = D⁻¹`` of a small symmetric positive definite ``D`` (Cholesky)."""
    n = D.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        s = D[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            s = D[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    for c in range(n):           # solve L Lᵀ x = e_c
        y = np.zeros(n)
        for i in range(n):
            s = 1.0 if i == c else 0.0
            for k in range(i):
                s -= L[i, k] * y[k]
            y[i] = s / L[i, i]
        for i in range(n - 1, -1, -1):
            s = y[i]
            for k in range(i + 1, n):
                s -= L[k, i] * out[k, c]
            out[i, c] = s / L[i, i]


@njit(cache=True)
def _x_apply(R, p, a, out):
    """``out = Ad(T)⁻¹ a`` for ``T = (R, p)``: ``(Rᵀ w; Rᵀ (v - p × w))``."""
    w0, w1, w2, v0, v1, v2 = a[0], a[1], a[2], a[3], a[4], a[5]
    u0 = v0 - (p[1] * w2 - p[2] * w1)
    u1 = v1 - (p[2] * w0 - p[0] * w2)
    u2 = v2 - (p[0] * w1 - p[1] * w0)
    for k in range(3):
        out[k] = R[0, k] * w0 + R[1, k] * w1 + R[2, k] * w2
        out[3 + k] = R[0, k] * u0 + R[1, k] * u1 + R[2, k] * u2


@njit(cache=True)
def _x_matrix(R, p, X):
    """``X = Ad(T)⁻¹ = [[Rᵀ, 0], [-Rᵀ p̂, Rᵀ]]``."""
    X[:, :] = 0.0
    for i in range(3):
        for j in range(3):
            X[i, j] = R[j, i]
            X[3 + i, 3 + j] = R[j, i]
    for i in range(3):       # row i of -Rᵀ p̂ is -rᵀ p̂ = (p × r)ᵀ with r = R[:, i]
        r0, r1, r2 = R[0, i], R[1, i], R[2, i]
        X[3 + i, 0] = p[1] * r2 - p[2] * r1
        X[3 + i, 1] = p[2] * r0 - p[0] * r2
        X[3 + i, 2] = p[0] * r1 - p[1] * r0


@njit(cache=True)
def _ad_cross(V, m, out):
    """``out = ad(V) m`` for twists ``V = (w; v)``, ``m = (w'; v')``: ``(w × w'; v × w' + w ×
    v')``."""
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    out[0] = w1 * m[2] - w2 * m[1]
    out[1] = w2 * m[0] - w0 * m[2]
    out[2] = w0 * m[1] - w1 * m[0]
    out[3] = v1 * m[2] - v2 * m[1] + w1 * m[5] - w2 * m[4]
    out[4] = v2 * m[0] - v0 * m[2] + w2 * m[3] - w0 * m[5]
    out[5] = v0 * m[1] - v1 * m[0] + w0 * m[4] - w1 * m[3]


@njit(cache=True)
def _ad_dual(V, h, out):
    """``out = ad(V)ᵀ h`` for a wrench ``h = (m; f)``: ``(-(w × m) - v × f; -(w × f))``,
    i.e. ``ad(V)ᵀ = -[[ŵ, v̂], [0, ŵ]]``."""
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    m0, m1, m2, f0, f1, f2 = h[0], h[1], h[2], h[3], h[4], h[5]
    out[0] = -(w1 * m2 - w2 * m1) - (v1 * f2 - v2 * f1)
    out[1] = -(w2 * m0 - w0 * m2) - (v2 * f0 - v0 * f2)
    out[2] = -(w0 * m1 - w1 * m0) - (v0 * f1 - v1 * f0)
    out[3] = -(w1 * f2 - w2 * f1)
    out[4] = -(w2 * f0 - w0 * f2)
    out[5] = -(w0 * f1 - w1 * f0)


@njit(cache=True)
def _mm(A, B):
    """``A @ B`` for small matrices by loops (numba's ``@`` calls BLAS: µs per call)."""
    n, k = A.shape
    m = B.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        for l in range(k):
            a = A[i, l]
            if a != 0.0:
                for j in range(m):
                    out[i, j] += a * B[l, j]
    return out


@njit(cache=True)
def _mtm(A, B):
    """``Aᵀ @ B`` for small matrices by loops."""
    k, n = A.shape
    m = B.shape[1]
    out = np.zeros((n, m))
    for l in range(k):
        for i in range(n):
            a = A[l, i]
            if a != 0.0:
                for j in range(m):
                    out[i, j] += a * B[l, j]
    return out


@njit(cache=True)
def _mv(A, x):
    """``A @ x`` by loops."""
    n, k = A.shape
    out = np.zeros(n)
    for i in range(n):
        s = 0.0
        for l in range(k):
            s += A[i, l] * x[l]
        out[i] = s
    return out


@njit(cache=True)
def _mtv(A, x):
    """``Aᵀ @ x`` by loops."""
    k, n = A.shape
    out = np.zeros(n)
    for l in range(k):
        a = x[l]
        for i in range(n):
            out[i] += A[l, i] * a
    return out


@njit(cache=True)
def _aba_numeric(buf, v, tau, parent, PR, Pp, G, qidx, nvj, agrav, ddq):
    """The numeric ABA (Featherstone Table 7.1, twists ``(w; v)``) from the joint quantities
    in ``buf[i] = (R_j, p_j, S_j, Ṡ_j q̇_j)`` (row-major) of every joint; writes ``ddq``."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    X = np.empty((n, 6, 6))
    V = np.zeros((n, 6))
    c = np.zeros((n, 6))
    pa = np.zeros((n, 6))
    Ia = np.zeros((n, 6, 6))
    A = np.zeros((n, 6))
    S = np.zeros((n, 6, 6))
    U = np.zeros((n, 6, 6))
    Di = np.zeros((n, 6, 6))
    u = np.zeros((n, 6))
    tmp = np.empty(6)
    for i in range(n):
        d, iq = nvj[i], qidx[i]
        out = buf[i]
        for r in range(3):
            for k in range(3):
                s = 0.0
                for m in range(3):
                    s += PR[i, r, m] * out[3 * m + k]
                R[i, r, k] = s
            s = Pp[i, r]
            for m in range(3):
                s += PR[i, r, m] * out[9 + m]
            p[i, r] = s
        for r in range(6):
            for k in range(d):
                S[i, r, k] = out[12 + d * r + k]
        _x_matrix(R[i], p[i], X[i])
        Sv = _mv(S[i, :, :d], v[iq:iq + d])
        if parent[i] >= 0:
            _x_apply(R[i], p[i], V[parent[i]], tmp)
            V[i] = tmp + Sv
        else:
            V[i] = Sv
        _ad_cross(V[i], Sv, tmp)
        c[i] = tmp + out[12 + 6 * d:18 + 6 * d]
        Ia[i] = G[i]
        _ad_dual(V[i], _mv(G[i], V[i]), tmp)
        pa[i] = -tmp
    for i in range(n - 1, -1, -1):
        d, iq = nvj[i], qidx[i]
        Si = S[i, :, :d]
        Iai = 0.5 * (Ia[i] + Ia[i].T)
        Ui = _mm(Iai, Si)
        U[i, :, :d] = Ui
        Dinv = np.empty((d, d))
        _cholesky_inverse(_mtm(Si, Ui), Dinv)
        Di[i, :d, :d] = Dinv
        ui = tau[iq:iq + d] - _mtv(Si, pa[i])
        u[i, :d] = ui
        if parent[i] >= 0:
            UD = _mm(Ui, Dinv)
            Ia_a = Iai - _mm(UD, Ui.T)
            pa_a = pa[i] + _mv(Ia_a, c[i]) + _mv(UD, ui)
            Xi = X[i]
            Ia[parent[i]] += _mtm(Xi, _mm(Ia_a, Xi))
            pa[parent[i]] += _mtv(Xi, pa_a)
    for i in range(n):
        d, iq = nvj[i], qidx[i]
        if parent[i] >= 0:
            _x_apply(R[i], p[i], A[parent[i]], tmp)
        else:
            _x_apply(R[i], p[i], agrav, tmp)
        a_i = tmp + c[i]
        dd = _mv(Di[i, :d, :d], u[i, :d] - _mtv(U[i, :, :d], a_i))
        ddq[iq:iq + d] = dd
        A[i] = a_i + _mv(S[i, :, :d], dd)


class MethodII:
    """Our Method II (module docstring): compiled per-joint-type ``T, S, Ṡ q̇`` kernels (sympy
    cse → numba) feeding a generic numeric numba ABA.

    Parameters
    ----------
    model : Model
        Every joint a :class:`~.general_joint.GeneralJoint`.

    Raises
    ------
    CompiledGeneralError
        A built-in joint in ``model``.

    Notes
    -----
    Construction generates and numba-compiles one kernel per distinct joint object and a
    loop filling every joint's ``(R, p, S, Ṡ q̇)`` (seconds); the numeric recursion
    (``_aba_numeric``) is compiled once and cached on disk by numba. A call is the two
    compiled functions.
    ``model.spec.gravity`` enters as the base acceleration ``(0; -g)`` as in
    :func:`~.algorithms.aba`.
    """

    def __init__(self, model):
        joints = _general_joints(model)
        kinds: list = []
        for j in joints:
            if not any(j is k for k in kinds):
                kinds.append(j)
        ns: dict = {"math": math}
        src = []
        for k, j in enumerate(kinds):
            src.append(_kernel_source(j, f"kin{k}"))
        exec("\n".join(src), ns)           # noqa: S102 - our own generated code
        kernels = [njit(ns[f"kin{k}"]) for k in range(len(kinds))]
        disp = ["def joint_eval(q, v, kind, qidx, nvj, buf):",
                "    for i in range(kind.shape[0]):",
                "        d, iq = nvj[i], qidx[i]"]
        for k in range(len(kinds)):
            disp.append(f"        {'if' if k == 0 else 'elif'} kind[i] == {k}:\n"
                        f"            kin{k}(q[iq:iq + d], v[iq:iq + d], buf[i])")
        dns = {f"kin{k}": kern for k, kern in enumerate(kernels)}
        exec("\n".join(disp) + "\n", dns)  # noqa: S102
        #: the symbolic part: every joint's ``(R, p, S, Ṡ q̇)`` into ``buf``
        self.joint_eval = njit(dns["joint_eval"])
        self.model = model
        n = model.njoints
        self.parent = np.array(model.parents, dtype=np.int64)
        self.PR = np.ascontiguousarray([jm.placement[:3, :3] for jm in model.joints])
        self.Pp = np.ascontiguousarray([jm.placement[:3, 3] for jm in model.joints])
        self.G = np.ascontiguousarray(model.inertias)
        self.qidx = np.array([jm.idx_q for jm in model.joints], dtype=np.int64)
        self.nvj = np.array([jm.nv for jm in model.joints], dtype=np.int64)
        self.kind = np.array([next(k for k, j in enumerate(kinds) if j is jm.joint)
                              for jm in model.joints], dtype=np.int64)
        self.agrav = np.concatenate([np.zeros(3), -np.asarray(model.gravity, dtype=float)])
        self.buf = np.zeros((n, 18 + 6 * int(self.nvj.max())))
        self._ddq = np.zeros(model.nv)
        self.n_kinds = len(kinds)

    def __call__(self, q, v, tau) -> np.ndarray:
        """``ddq = M(q)⁻¹ (tau - h(q, v))``."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if q.shape != (self.model.nq,) or v.shape != (self.model.nv,) or \
                np.shape(tau) != (self.model.nv,):
            raise ValueError(f"q, v, tau must have lengths {self.model.nq}, {self.model.nv}, "
                             f"{self.model.nv}")
        self.joint_eval(q, v, self.kind, self.qidx, self.nvj, self.buf)
        _aba_numeric(self.buf, v, np.asarray(tau, dtype=float), self.parent, self.PR,
                     self.Pp, self.G, self.qidx, self.nvj, self.agrav, self._ddq)
        return self._ddq.copy()


# -- Method I: the whole ABA unrolled symbolically, printed as C ---------------------------------
class _Emitter:
    """Names every non-trivial scalar expression (a new symbol ``t<k>`` and a C statement), so
    expressions stay small; numbers, symbols and their negatives pass through."""

    def __init__(self):
        self.sympy = _sympy()
        self.lines: list = []
        self.n = 0

    def __call__(self, e):
        sympy = self.sympy
        e = sympy.sympify(e)
        if e.is_Number or e.is_Symbol or (e.is_Mul and len(e.args) == 2
                                          and e.args[0] == -1 and e.args[1].is_Symbol):
            return e
        s = sympy.Symbol(f"t{self.n}")
        self.n += 1
        self.lines.append((s, e))
        return s

    def mat(self, M):
        return M.applyfunc(self)

    def sym(self, M):
        """Name the upper triangle of a symmetric matrix and mirror it."""
        out = M.copy()
        for i in range(M.shape[0]):
            for j in range(i, M.shape[1]):
                out[i, j] = self(M[i, j])
                out[j, i] = out[i, j]
        return out


def _const(sympy, x: float):
    if x == 0.0:
        return sympy.Integer(0)
    if x in (1.0, -1.0):
        return sympy.Integer(int(x))
    return sympy.Float(repr(float(x)), 17)


def _unrolled_aba(model, joints):
    """Emitter lines of the unrolled ABA and the output symbols (``ddq``)."""
    sympy = _sympy()
    em = _Emitter()
    n = model.njoints
    qs = [sympy.Symbol(f"q_{k}") for k in range(model.nq)]
    vs = [sympy.Symbol(f"v_{k}") for k in range(model.nv)]
    ts = [sympy.Symbol(f"tau_{k}") for k in range(model.nv)]
    Mat = sympy.Matrix
    R, P, X, S, V, c, pa, Ia = ([None] * n for _ in range(8))
    for i, (jm, joint) in enumerate(zip(model.joints, joints, strict=True)):
        d = jm.nv
        reps, outs = _joint_cse(joint)
        sub = {s: qs[jm.idx_q + k] for k, s in enumerate(joint.symbols)}
        sub.update({s: vs[jm.idx_v + k] for k, s in enumerate(joint.velocity_symbols)})
        for s, e in reps:
            sub[s] = em(e.xreplace(sub))
        vals = [em(e.xreplace(sub)) for e in outs]
        Rj, pj = Mat(3, 3, vals[:9]), Mat(vals[9:12])
        S[i] = Mat(6, d, vals[12:12 + 6 * d])
        rate = Mat(vals[12 + 6 * d:18 + 6 * d])
        PR = Mat(3, 3, [_const(sympy, x) for x in jm.placement[:3, :3].ravel()])
        Pp = Mat([_const(sympy, x) for x in jm.placement[:3, 3]])
        R[i] = em.mat(PR * Rj)
        P[i] = em.mat(Pp + PR * pj)
        Rt = R[i].T
        ph = Mat([[0, -P[i][2], P[i][1]], [P[i][2], 0, -P[i][0]], [-P[i][1], P[i][0], 0]])
        X[i] = Rt.row_join(sympy.zeros(3, 3)).col_join(em.mat(-Rt * ph).row_join(Rt))
        Sv = em.mat(S[i] * Mat(vs[jm.idx_v:jm.idx_v + d]))
        V[i] = em.mat(X[i] * V[jm.parent] + Sv) if jm.parent >= 0 else Sv
        w, lin = V[i][:3, 0], V[i][3:, 0]
        wh = Mat([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        vh = Mat([[0, -lin[2], lin[1]], [lin[2], 0, -lin[0]], [-lin[1], lin[0], 0]])
        ad = wh.row_join(sympy.zeros(3, 3)).col_join(vh.row_join(wh))
        c[i] = em.mat(ad * Sv + rate)
        G = Mat(6, 6, [_const(sympy, x) for x in model.inertias[i].ravel()])
        Ia[i] = G
        pa[i] = em.mat(-ad.T * em.mat(G * V[i]))
    U, Di, u = [None] * n, [None] * n, [None] * n
    for i in range(n - 1, -1, -1):
        jm = model.joints[i]
        d = jm.nv
        Iai = em.sym(Ia[i])
        U[i] = em.mat(Iai * S[i])
        D = em.sym(S[i].T * U[i])
        Di[i] = _ldl_inverse(em, D)
        u[i] = em.mat(Mat(ts[jm.idx_v:jm.idx_v + d]) - S[i].T * pa[i])
        if jm.parent >= 0:
            UD = em.mat(U[i] * Di[i])
            Ia_a = em.sym(Iai - UD * U[i].T)
            pa_a = em.mat(pa[i] + Ia_a * c[i] + UD * u[i])
            Y = em.mat(Ia_a * X[i])
            Ia[jm.parent] = Ia[jm.parent] + X[i].T * Y
            pa[jm.parent] = pa[jm.parent] + em.mat(X[i].T * pa_a)
    grav = Mat([0, 0, 0] + [_const(sympy, -g) for g in model.gravity])
    A = [None] * n
    ddq = [None] * model.nv
    for i in range(n):
        jm = model.joints[i]
        a_i = em.mat(X[i] * (A[jm.parent] if jm.parent >= 0 else grav) + c[i])
        dd = em.mat(Di[i] * (u[i] - U[i].T * a_i))
        for k in range(jm.nv):
            ddq[jm.idx_v + k] = dd[k]
        A[i] = em.mat(a_i + S[i] * dd)
    return em, ddq


def _ldl_inverse(em, D):
    """Named entries of ``D⁻¹`` by LDLᵀ elimination of the symmetric ``D`` (symbolic)."""
    sympy = em.sympy
    n = D.shape[0]
    L = sympy.eye(n)
    dg = [None] * n
    for j in range(n):
        dg[j] = em(D[j, j] - sum((L[j, k] ** 2 * dg[k] for k in range(j)), sympy.Integer(0)))
        for i in range(j + 1, n):
            L[i, j] = em((D[i, j] - sum((L[i, k] * L[j, k] * dg[k] for k in range(j)),
                                        sympy.Integer(0))) / dg[j])
    inv_d = [em(1 / dg[j]) for j in range(n)]
    # L⁻¹ (unit lower triangular), then D⁻¹ = L⁻ᵀ diag(1/d) L⁻¹
    Li = sympy.eye(n)
    for j in range(n):
        for i in range(j + 1, n):
            Li[i, j] = em(-sum((L[i, k] * Li[k, j] for k in range(j, i)), sympy.Integer(0)))
    out = sympy.zeros(n, n)
    for i in range(n):
        for j in range(i, n):
            out[i, j] = em(sum((Li[k, i] * inv_d[k] * Li[k, j] for k in range(j, n)),
                               sympy.Integer(0)))
            out[j, i] = out[i, j]
    return out


_C_FUNCTIONS = {"sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log",
                "Abs": "fabs", "atan": "atan", "asin": "asin", "acos": "acos"}


def _c_expr(e) -> str:
    """C text of a sympy expression built from symbols, numbers, ``+``, ``*``, powers and
    elementary functions (a fast path for the many small statements; ``sympy.ccode`` for
    anything else)."""
    sympy = _sympy()
    if e.is_Symbol:
        return e.name
    if e.is_Integer:
        return f"{int(e)}.0"
    if e.is_Rational:
        return f"({int(e.p)}.0/{int(e.q)}.0)"
    if e.is_Float:
        return repr(float(e))
    if e.is_Add:
        return "(" + " + ".join(_c_expr(a) for a in e.args) + ")"
    if e.is_Mul:
        return "(" + "*".join(_c_expr(a) for a in e.args) + ")"
    if e.is_Pow:
        b, x = e.args
        if x == sympy.Rational(1, 2):
            return f"sqrt({_c_expr(b)})"
        if x == sympy.Rational(-1, 2):
            return f"(1.0/sqrt({_c_expr(b)}))"
        if x.is_Integer and 0 < int(x) <= 4:
            t = _c_expr(b)
            return "(" + "*".join([t] * int(x)) + ")"
        if x.is_Integer and -4 <= int(x) < 0:
            t = _c_expr(b)
            return "(1.0/(" + "*".join([t] * -int(x)) + "))"
        return f"pow({_c_expr(b)}, {_c_expr(x)})"
    if isinstance(e, sympy.Function) and type(e).__name__ in _C_FUNCTIONS and len(e.args) == 1:
        return f"{_C_FUNCTIONS[type(e).__name__]}({_c_expr(e.args[0])})"
    return f"({sympy.ccode(e)})"


def _c_source(model, joints, fname: str = "aba") -> tuple[str, int]:
    """C source of ``void aba(const double *q, const double *v, const double *tau, double
    *ddq)`` and its number of statements."""
    sympy = _sympy()
    em, ddq = _unrolled_aba(model, joints)
    lines = ["#include <math.h>",
             f"void {fname}(const double *q, const double *v, const double *tau, "
             "double *ddq) {"]
    lines += [f"const double q_{k} = q[{k}];" for k in range(model.nq)]
    lines += [f"const double v_{k} = v[{k}];" for k in range(model.nv)]
    lines += [f"const double tau_{k} = tau[{k}];" for k in range(model.nv)]
    for s, e in em.lines:
        lines.append(f"const double {s} = {_c_expr(e)};")
    lines += [f"ddq[{k}] = {_c_expr(sympy.sympify(e))};" for k, e in enumerate(ddq)]
    lines.append("}")
    return "\n".join(lines) + "\n", len(em.lines)


class MethodI:
    """Our Method I (module docstring): the whole ABA of ``model`` unrolled symbolically into
    one straight-line C function, compiled with the system C compiler and called via
    ``ctypes``.

    Parameters
    ----------
    model : Model
        Every joint a :class:`~.general_joint.GeneralJoint`.
    flags : sequence of str
        Compiler flags (default ``-O2``).

    Attributes
    ----------
    statements : int
        Number of generated scalar statements.
    source_path, library_path : Path

    Raises
    ------
    CompiledGeneralError
        A built-in joint in ``model`` or no C compiler (:func:`c_compiler`).
    """

    def __init__(self, model, flags=("-O2",)):
        joints = _general_joints(model)
        cc = c_compiler()
        if cc is None:
            raise CompiledGeneralError("Method I compiles generated C code and needs a C "
                                       "compiler (cc / gcc, or $CC); none found")
        src, self.statements = _c_source(model, joints)
        digest = hashlib.sha256((src + " ".join(flags)).encode()).hexdigest()[:20]
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        self.source_path = CACHE_DIR / f"aba_{digest}.c"
        self.library_path = CACHE_DIR / f"aba_{digest}.so"
        if not self.library_path.exists():
            self.source_path.write_text(src)
            tmp = self.library_path.with_suffix(f".{os.getpid()}.so")
            proc = subprocess.run([cc, *flags, "-shared", "-fPIC", str(self.source_path), "-o",
                                   str(tmp), "-lm"], capture_output=True, text=True)
            if proc.returncode != 0:
                raise CompiledGeneralError(f"compiling {self.source_path} failed:\n"
                                           f"{proc.stderr[-2000:]}")
            os.replace(tmp, self.library_path)
        self._lib = ctypes.CDLL(str(self.library_path))
        self._fn = self._lib.aba
        self._fn.argtypes = [ctypes.c_void_p] * 4
        self._fn.restype = None
        self.model = model
        # fixed input / output buffers, their addresses passed as integers (cheapest ctypes
        # call: about 1 µs)
        self._q, self._v = np.zeros(model.nq), np.zeros(model.nv)
        self._tau, self._ddq = np.zeros(model.nv), np.zeros(model.nv)
        self._ptrs = tuple(a.ctypes.data for a in (self._q, self._v, self._tau, self._ddq))

    def __call__(self, q, v, tau) -> np.ndarray:
        """``ddq = M(q)⁻¹ (tau - h(q, v))``."""
        if np.shape(q) != self._q.shape or np.shape(v) != self._v.shape or \
                np.shape(tau) != self._tau.shape:
            raise ValueError(f"q, v, tau must have lengths {self.model.nq}, {self.model.nv}, "
                             f"{self.model.nv}")
        self._q[:] = q
        self._v[:] = v
        self._tau[:] = tau
        self._fn(*self._ptrs)
        return self._ddq.copy()
