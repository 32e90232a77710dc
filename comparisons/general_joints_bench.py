"""Si & Guenter Table 1: ABA timings on revolute chains and on a general-joint chain, ours
beside theirs.

Their Table 1 (ms per forward-dynamics call, 2.67 GHz Core 2 Quad): revolute chains RC20 / RC50 /
RC100, torus chains TC10 / TC20 (surface-surface joints, 38 / 78 DOF) and a windmill (WM),
for their fully symbolic code (Method I), Featherstone's ABA, SD/FAST and their mixed
symbolic-numeric code (Method II), see :data:`PAPER_TABLE1_MS`.

Ours, on the same kind of chains (:func:`comparisons.minimal_bench.box_chain`: boxes on revolute
joints): the NumPy ABA (:func:`dynamics.minimal.aba`), the numba ABA
(:func:`dynamics.minimal.tree_kernels.aba`), the NumPy ABA with every revolute joint given as a
:class:`~dynamics.minimal.general_joint.GeneralJoint` (sympy-derived ``S``, the generic path),
and ``pinocchio.aba`` as a peer when it imports. For general joints we time the Bezier torus
chain (:func:`dynamics.minimal.general_joint.bezier_chain`, Si & Guenter Fig. 3, ``n`` DOF)
beside their TC10 / TC20 rows; those are different mechanisms (4-DOF surface joints between
tori), so only the order of magnitude compares. Timings are per call, best of ``repeats``
``timeit`` runs of ``number`` calls, random ``q, v, tau``. Nothing here runs inside pytest except
a tiny smoke test.
"""
from __future__ import annotations

import timeit

import numpy as np

from comparisons.minimal_bench import box_chain
from dynamics.minimal import Model, aba
from dynamics.minimal.general_joint import bezier_chain, revolute_joint

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
#: Our general-joint chain timed beside each paper torus-chain case.
BEZIER_CASES = {"TC10": 10, "TC20": 20}


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


def general_joints_bench(revolute=(20, 50, 100), bezier=(10, 20), *, number: int = 200,
                         repeats: int = 5, seed: int = 0, compiled: bool = True,
                         general_revolute: bool = True, pinocchio: bool = True) -> list[dict]:
    """ABA timings (ms per call) on revolute chains and Bezier torus chains, with
    Si & Guenter's Table 1 beside them.

    Parameters
    ----------
    revolute : sequence of int
        Chain lengths ``n`` of the revolute chains (Table 1's RC20 / RC50 / RC100).
    bezier : sequence of int
        Numbers of tori of the Bezier chains; ``n`` in :data:`BEZIER_CASES` values is paired with
        the paper's torus-chain row, others with none.
    number, repeats : int
        ``timeit``: calls per run and runs (the best run counts).
    seed : int
    compiled, general_revolute, pinocchio : bool
        Also time the numba ABA, the ABA with general (sympy) revolute joints and
        ``pinocchio.aba`` (when it imports) on the revolute chains.

    Returns
    -------
    list of dict
        One row per chain: ``case``, ``mechanism``, ``dofs``, ``numpy_aba_ms``,
        ``compiled_aba_ms``, ``general_aba_ms``, ``pinocchio_aba_ms`` (``None`` when not
        timed or not applicable), ``max_abs_diff`` (largest ``|ddq|`` difference between our
        variants and the peer), and the paper's row: ``paper_case``, ``paper_dofs``,
        ``paper_method_I_ms``, ``paper_featherstone_ms``, ``paper_sdfast_ms``,
        ``paper_method_II_ms`` (``None`` where the paper has no number).
    """
    rng = np.random.default_rng(seed)
    rows = []
    general_rev = revolute_joint((1.0, 0.0, 0.0)) if general_revolute else None
    for n in revolute:
        spec = box_chain(n)
        model = Model(spec)
        data = model.create_data()
        q, v, tau = rng.normal(size=(3, n))
        ddq = aba(model, data, q, v, tau)
        row = {"case": f"RC{n}", "mechanism": f"revolute box chain, {n} links", "dofs": n,
               "numpy_aba_ms": _best_ms(aba, (model, data, q, v, tau), number, repeats),
               "compiled_aba_ms": None, "general_aba_ms": None, "pinocchio_aba_ms": None}
        diffs = []
        if compiled:
            from dynamics.minimal.tree_kernels import aba as compiled_aba
            cdata = model.create_data()
            row["compiled_aba_ms"] = _best_ms(compiled_aba, (model, cdata, q, v, tau),
                                              number, repeats)
            diffs.append(np.abs(compiled_aba(model, cdata, q, v, tau) - ddq).max())
        if general_rev is not None:
            gmodel = Model(spec, custom_joints={j.name: general_rev for j in spec.tree_joints})
            gdata = gmodel.create_data()
            row["general_aba_ms"] = _best_ms(aba, (gmodel, gdata, q, v, tau), number,
                                             repeats)
            diffs.append(np.abs(aba(gmodel, gdata, q, v, tau) - ddq).max())
        if pinocchio:
            ms, theirs = _pinocchio_aba(spec, q, v, tau, number, repeats)
            row["pinocchio_aba_ms"] = ms
            if theirs is not None:
                diffs.append(np.abs(theirs - ddq).max())
        row["max_abs_diff"] = float(max(diffs)) if diffs else None
        case = f"RC{n}"
        row.update(_paper(case) if case in PAPER_TABLE1_MS else
                   {k: None for k in _paper("RC20")})
        rows.append(row)
    paper_for = {m: c for c, m in BEZIER_CASES.items()}
    for n in bezier:
        model = bezier_chain(n)
        data = model.create_data()
        q = np.r_[rng.uniform(0.1, 0.9), rng.normal(size=n - 1)]
        v, tau = rng.normal(size=(2, n))
        row = {"case": f"BC{n}", "mechanism": f"Bezier torus chain (Fig. 3), {n} tori",
               "dofs": n,
               "numpy_aba_ms": _best_ms(aba, (model, data, q, v, tau), number, repeats),
               "compiled_aba_ms": None, "general_aba_ms": None, "pinocchio_aba_ms": None,
               "max_abs_diff": None}
        row.update(_paper(paper_for[n]) if n in paper_for else
                   {k: None for k in _paper("RC20")})
        rows.append(row)
    return rows


def format_rows(rows: list[dict]) -> str:
    """A plain-text table of :func:`general_joints_bench` rows (ms)."""
    def f(x):
        return "—" if x is None else f"{x:.4g}"
    cols = [("case", "case"), ("dofs", "DOF"), ("numpy_aba_ms", "numpy"),
            ("compiled_aba_ms", "numba"), ("general_aba_ms", "general"),
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
    """Bars of the ms per ABA call of every chain: ours (NumPy, numba, general joints,
    Pinocchio) beside the paper's Method I / Featherstone / SD/FAST / Method II of the matching
    case (log scale; missing values leave no bar)."""
    from .plot import bar_plot

    def value(r, k):
        v = r.get(k)
        return None if v in (None, "") else float(v)

    groups = [f"{r['case']} ({r['dofs']} DOF)" for r in rows]
    keys = (("numpy_aba_ms", "ours: NumPy ABA"), ("compiled_aba_ms", "ours: numba ABA"),
            ("general_aba_ms", "ours: general joints"), ("pinocchio_aba_ms", "pinocchio.aba"),
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
