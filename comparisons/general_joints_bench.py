"""Si & Guenter Table 1: forward-dynamics timings on revolute chains, torus chains and the
windmill, ours beside theirs.

Their Table 1 (ms per forward-dynamics call, 2.67 GHz Core 2 Quad): revolute chains RC20 / RC50 /
RC100, torus chains TC10 / TC20 (4-DOF surface-surface joints, 38 / 78 DOF) and a windmill (WM,
73 DOF), for their fully symbolic code (Method I), Featherstone's ABA, SD/FAST and their mixed
symbolic-numeric code (Method II), see :data:`PAPER_TABLE1_MS`.

Ours, per case (``None`` where a method does not apply):

RC``n``: revolute box chains (:func:`comparisons.minimal_bench.box_chain`)
    the NumPy ABA (:func:`dynamics.minimal.aba`), the numba ABA
    (:func:`dynamics.minimal.tree_kernels.aba`), the NumPy ABA with every joint given as a
    sympy-derived :class:`~dynamics.minimal.general_joint.GeneralJoint`, our Method I and
    Method II (:mod:`dynamics.minimal.general_compiled`) on that general-joint model, and
    ``pinocchio.aba`` (a substitute for SD/FAST, which is closed source) when it imports.
TC``n`` / WM: the paper's models (:mod:`dynamics.minimal.surface_joint`)
    the NumPy ABA, Method I and Method II. Featherstone's ABA as the paper ran it, SD/FAST and
    Pinocchio have no surface-surface joints ("NA" in the paper too).

``max_abs_diff`` is the largest ``|ddq|`` difference of every variant from the NumPy ABA,
relative to ``1 + max |ddq|``. Timings are per call, best of ``repeats`` ``timeit`` runs of
``number`` calls, at random ``q, v, tau`` (TC / WM: the initial state plus 0.3 · N(0, 1)
perturbations); ``method_I_setup_s`` / ``method_II_setup_s`` are the preprocessing times (code
generation and compilation; Method I's compiled library is cached on disk, so a second run
loads it). Nothing here runs inside pytest except tiny smoke tests.
"""
from __future__ import annotations

import timeit

import numpy as np

from comparisons.minimal_bench import box_chain
from dynamics.minimal import Model, aba
from dynamics.minimal.general_joint import revolute_joint

__all__ = ["PAPER_TABLE1_MS", "general_joints_bench", "format_rows", "plot_general_joints"]

#: Si & Guenter Table 1, running time in milliseconds (``None``: "NA" or "—" in the paper).
PAPER_TABLE1_MS = {
    "RC20": {"dofs": 20, "method_I": 0.020, "featherstone": 0.025, "sdfast": 0.016,
             "method_II": 1.0},
    "RC50": {"dofs": 50, "method_I": 0.050, "featherstone": 0.064, "sdfast": 0.136,
             "method_II": 2.4},
    "RC100": {"dofs": 100, "method_I": 0.112, "featherstone": 0.127, "sdfast": None,
              "method_II": 4.9},
    "TC10": {"dofs": 38, "method_I": 0.055, "featherstone": None, "sdfast": None,
             "method_II": 1.05},
    "TC20": {"dofs": 78, "method_I": 0.115, "featherstone": None, "sdfast": None,
             "method_II": 2.2},
    "WM": {"dofs": 73, "method_I": 0.108, "featherstone": None, "sdfast": None,
           "method_II": 2.4},
}
def _best_ms(fn, args: tuple, number: int, repeats: int) -> float:
    """Milliseconds per call of ``fn(*args)``, best of ``repeats`` runs of ``number`` calls."""
    fn(*args)                                       # warm up (numba compile, caches)
    return 1e3 * min(timeit.repeat(lambda: fn(*args), number=number, repeat=repeats)) / number


def _pinocchio_aba(spec, q, v, tau, number, repeats):
    """``(ms per call, pinocchio.aba result)`` or ``(None, None)`` without pinocchio."""
    try:
        import pinocchio as pin
    except ImportError:
        return None, None
    from comparisons.pinocchio_peer import pinocchio_model
    pm = pinocchio_model(spec)
    pm = pm[0] if isinstance(pm, tuple) else pm
    pd = pm.createData()
    ms = _best_ms(pin.aba, (pm, pd, q, v, tau), number, repeats)
    return ms, np.asarray(pin.aba(pm, pd, q, v, tau))


def _paper(case: str) -> dict:
    p = PAPER_TABLE1_MS[case]
    return {"paper_case": case, "paper_dofs": p["dofs"], "paper_method_I_ms": p["method_I"],
            "paper_featherstone_ms": p["featherstone"], "paper_sdfast_ms": p["sdfast"],
            "paper_method_II_ms": p["method_II"]}


def _compiled_methods(model, q, v, tau, ref, number, repeats, method_i, method_ii):
    """Timings, setup times and the largest relative ``ddq`` difference of our Method I / II."""
    import time

    from dynamics.minimal.general_compiled import MethodI, MethodII, c_compiler
    out = {"method_I_ms": None, "method_II_ms": None, "method_I_setup_s": None,
           "method_II_setup_s": None}
    diffs = []
    scale = 1.0 + float(np.abs(ref).max())
    for key, cls, on in (("method_I", MethodI, method_i and c_compiler() is not None),
                         ("method_II", MethodII, method_ii)):
        if not on:
            continue
        t0 = time.perf_counter()
        fd = cls(model)
        ddq = fd(q, v, tau)
        out[f"{key}_setup_s"] = time.perf_counter() - t0
        out[f"{key}_ms"] = _best_ms(fd, (q, v, tau), number, repeats)
        diffs.append(float(np.abs(ddq - ref).max()) / scale)
    return out, diffs


def general_joints_bench(revolute=(20, 50, 100), torus=(10, 20), windmill: bool = True, *,
                         number: int = 200, repeats: int = 5, seed: int = 0,
                         compiled: bool = True, general_revolute: bool = True,
                         pinocchio: bool = True, method_i: bool = True,
                         method_ii: bool = True) -> list[dict]:
    """Forward-dynamics timings (ms per call) on Table 1's models, the paper's numbers beside.

    Parameters
    ----------
    revolute : sequence of int
        Chain lengths of the revolute chains (Table 1's RC20 / RC50 / RC100).
    torus : sequence of int
        Numbers of tori of the torus chains (TC10 / TC20: 38 / 78 DOF).
    windmill : bool
        Also the windmill WM (73 DOF; about a minute of symbolic preprocessing and
        compilation on first use).
    number, repeats : int
        ``timeit``: calls per run and runs (the best run counts).
    seed : int
    compiled, general_revolute, pinocchio : bool
        On the revolute chains, also time the numba ABA, the NumPy ABA with general (sympy)
        revolute joints and ``pinocchio.aba`` (when it imports).
    method_i, method_ii : bool
        Time our Method I (needs a C compiler; skipped without one) and Method II; on the
        revolute chains they run on the general-joint model (``general_revolute`` or not).

    Returns
    -------
    list of dict
        One row per model: ``case``, ``mechanism``, ``dofs``, ``numpy_aba_ms``,
        ``compiled_aba_ms``, ``general_aba_ms``, ``method_I_ms``, ``method_II_ms``,
        ``pinocchio_aba_ms`` (``None`` when not timed or not applicable),
        ``method_I_setup_s``, ``method_II_setup_s``, ``max_abs_diff`` (see the module
        docstring), and the paper's row: ``paper_case``, ``paper_dofs``,
        ``paper_method_I_ms``, ``paper_featherstone_ms``, ``paper_sdfast_ms``,
        ``paper_method_II_ms`` (``None`` where the paper has no number).
    """
    from dynamics.minimal import initial_state
    from dynamics.minimal.surface_joint import torus_chain
    from dynamics.minimal.surface_joint import windmill as build_windmill

    rng = np.random.default_rng(seed)
    rows = []
    general_rev = revolute_joint((1.0, 0.0, 0.0))
    empty = {k: None for k in _paper("RC20")}
    for n in revolute:
        spec = box_chain(n)
        model = Model(spec)
        data = model.create_data()
        q, v, tau = rng.normal(size=(3, n))
        ddq = aba(model, data, q, v, tau)
        scale = 1.0 + float(np.abs(ddq).max())
        row = {"case": f"RC{n}", "mechanism": f"revolute box chain, {n} links", "dofs": n,
               "numpy_aba_ms": _best_ms(aba, (model, data, q, v, tau), number, repeats),
               "compiled_aba_ms": None, "general_aba_ms": None, "pinocchio_aba_ms": None}
        diffs = []
        if compiled:
            from dynamics.minimal.tree_kernels import aba as compiled_aba
            cdata = model.create_data()
            row["compiled_aba_ms"] = _best_ms(compiled_aba, (model, cdata, q, v, tau),
                                              number, repeats)
            diffs.append(np.abs(compiled_aba(model, cdata, q, v, tau) - ddq).max() / scale)
        gmodel = Model(spec, custom_joints={j.name: general_rev for j in spec.tree_joints})
        if general_revolute:
            gdata = gmodel.create_data()
            row["general_aba_ms"] = _best_ms(aba, (gmodel, gdata, q, v, tau), number,
                                             repeats)
            diffs.append(np.abs(aba(gmodel, gdata, q, v, tau) - ddq).max() / scale)
        methods, mdiffs = _compiled_methods(gmodel, q, v, tau, ddq, number, repeats,
                                            method_i, method_ii)
        row.update(methods)
        diffs += mdiffs
        if pinocchio:
            ms, theirs = _pinocchio_aba(spec, q, v, tau, number, repeats)
            row["pinocchio_aba_ms"] = ms
            if theirs is not None:
                diffs.append(np.abs(theirs - ddq).max() / scale)
        row["max_abs_diff"] = float(max(diffs)) if diffs else None
        case = f"RC{n}"
        row.update(_paper(case) if case in PAPER_TABLE1_MS else empty)
        rows.append(row)
    builds = [(f"TC{n}", f"torus chain, {n} tori, 4-DOF surface joints",
               lambda n=n: torus_chain(n)) for n in torus]
    if windmill:
        builds.append(("WM", "windmill, hub + 6 arms of 3 bodies, 4-DOF surface joints",
                       build_windmill))
    for case, mechanism, build in builds:
        model = build()
        data = model.create_data()
        q0, _ = initial_state(model)
        q = q0 + 0.3 * rng.normal(size=model.nq)
        v, tau = rng.normal(size=(2, model.nv))
        ddq = aba(model, data, q, v, tau)
        row = {"case": case, "mechanism": mechanism, "dofs": model.nv,
               "numpy_aba_ms": _best_ms(aba, (model, data, q, v, tau), number, repeats),
               "compiled_aba_ms": None, "general_aba_ms": None, "pinocchio_aba_ms": None}
        methods, diffs = _compiled_methods(model, q, v, tau, ddq, number, repeats, method_i,
                                           method_ii)
        row.update(methods)
        row["max_abs_diff"] = float(max(diffs)) if diffs else None
        row.update(_paper(case) if case in PAPER_TABLE1_MS else empty)
        rows.append(row)
    return rows


def format_rows(rows: list[dict]) -> str:
    """A plain-text table of :func:`general_joints_bench` rows (ms)."""
    def f(x):
        return "—" if x is None else f"{x:.4g}"
    cols = [("case", "case"), ("dofs", "DOF"), ("numpy_aba_ms", "numpy"),
            ("compiled_aba_ms", "numba"), ("general_aba_ms", "general"),
            ("method_I_ms", "MethodI"), ("method_II_ms", "MethodII"),
            ("pinocchio_aba_ms", "pinocchio"), ("paper_case", "paper"),
            ("paper_dofs", "p.DOF"), ("paper_method_I_ms", "p.MethodI"),
            ("paper_featherstone_ms", "p.Featherst."), ("paper_sdfast_ms", "p.SD/FAST"),
            ("paper_method_II_ms", "p.MethodII")]
    lines = ["  ".join(f"{h:>12}" for _, h in cols)]
    for r in rows:
        lines.append("  ".join(f"{r[k] if isinstance(r[k], str) else f(r[k]):>12}"
                               for k, _ in cols))
    return "\n".join(lines)



def plot_general_joints(rows: list[dict], path) -> None:
    """Bars of the ms per ABA call of every model: ours (NumPy, numba, general joints, Method I,
    Method II, Pinocchio) beside the paper's Method I / Featherstone / SD/FAST / Method II of
    the matching case (log scale; missing values leave no bar)."""
    from .plot import bar_plot

    def value(r, k):
        v = r.get(k)
        return None if v in (None, "") else float(v)

    groups = [f"{r['case']} ({r['dofs']} DOF)" for r in rows]
    keys = (("numpy_aba_ms", "ours: NumPy ABA"), ("compiled_aba_ms", "ours: numba ABA"),
            ("general_aba_ms", "ours: general joints"), ("method_I_ms", "ours: Method I"),
            ("method_II_ms", "ours: Method II"), ("pinocchio_aba_ms", "pinocchio.aba"),
            ("paper_method_I_ms", "paper: Method I"),
            ("paper_featherstone_ms", "paper: Featherstone"),
            ("paper_sdfast_ms", "paper: SD/FAST"), ("paper_method_II_ms", "paper: Method II"))
    series = {label: [value(r, k) for r in rows] for k, label in keys
              if any(value(r, k) is not None for r in rows)}
    bar_plot(path, groups, series, ylabel="ms per forward-dynamics call",
             title="Si & Guenter Table 1: ours (this machine) beside the paper's (2.67 GHz "
                   "Core 2)")


if __name__ == "__main__":      # pragma: no cover
    print(format_rows(general_joints_bench()))
