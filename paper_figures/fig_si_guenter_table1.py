"""Si & Guenter, Table 1 (§5): running time of one forward-dynamics (ABA) call in milliseconds on
revolute chains RC20 / RC50 / RC100 and torus chains TC10 / TC20, our implementations beside
the paper's numbers (2.67 GHz Core 2 Quad: their symbolic Method I, Featherstone's ABA,
SD/FAST, their mixed symbolic-numeric Method II).

Computed by :func:`comparisons.general_joints_bench.general_joints_bench`: on box chains with
revolute joints the NumPy ABA (:func:`dynamics.minimal.aba`), the numba ABA, the NumPy ABA with
every joint given as a sympy-derived general joint
(:class:`dynamics.minimal.general_joint.GeneralJoint`) and ``pinocchio.aba``; for the torus
chains our general-joint Bezier chain (their Fig. 3; ``n`` DOF, not the paper's 4-DOF
surface-surface joints - compare orders of magnitude only). Random ``q, v, τ``; best of
``repeats`` ``timeit`` runs of ``number`` calls. The windmill (WM) is not built.
"""

from __future__ import annotations

from comparisons.general_joints_bench import PAPER_TABLE1_MS, general_joints_bench

from ._dynamics import one_blas_thread, versions
from ._plotting import save_figure

NAME = "si_guenter_table1"
TITLE = "ABA and general-joint timings, ms per call (Si & Guenter Table 1)"
#: Our columns (``<id>_ms`` in the benchmark rows) and the paper's.
OURS = ("numpy_aba", "compiled_aba", "general_aba")
PEER = ("pinocchio_aba",)
PAPER = ("paper_method_I", "paper_featherstone", "paper_sdfast", "paper_method_II")
SOLVERS = OURS + PEER + PAPER
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "numpy_aba": "paper's own: Featherstone's ABA (our NumPy implementation)",
    "compiled_aba": "paper's own: Featherstone's ABA (our numba implementation)",
    "pinocchio_aba": "substitute: for SD/FAST (closed source); Pinocchio's ABA (C++)",
}
#: A tiny configuration for the test suite.
TINY = {"revolute": (5,), "bezier": (3,), "number": 2, "repeats": 1}
STYLE = {"numpy_aba": "tab:blue", "compiled_aba": "navy", "general_aba": "tab:cyan",
         "pinocchio_aba": "tab:red", "paper_method_I": "0.15", "paper_featherstone": "0.35",
         "paper_sdfast": "0.55", "paper_method_II": "0.75"}


def method_label(solver: str) -> str:
    """Legend text naming implementation and version."""
    v = versions()
    g = f"graphsolve {v['graphsolve']} dynamics.minimal"
    return {"numpy_aba": f"ours: ABA, NumPy ({g})",
            "compiled_aba": f"ours: ABA, numba ({g})",
            "general_aba": f"ours: ABA with general (sympy) joints, NumPy ({g})",
            "pinocchio_aba": f"Pinocchio {v['pin']} aba (C++)",
            "paper_method_I": "paper: Method I (symbolic, 2.67 GHz Core 2)",
            "paper_featherstone": "paper: Featherstone ABA",
            "paper_sdfast": "paper: SD/FAST",
            "paper_method_II": "paper: Method II (symbolic-numeric)"}[solver]


def compute(quick: bool = True, revolute=None, bezier=None, number: int | None = None,
            repeats: int | None = None) -> list[dict]:
    """Long rows ``case, mechanism, dofs, paper_case, paper_dofs, solver, ms, status,
    max_abs_diff``: one per (case, method) with a number (``status`` "ok"), or "not
    applicable" where the benchmark or the paper has none."""
    revolute = revolute or (20, 50, 100)
    bezier = bezier or (10, 20)
    number = number or (20 if quick else 200)
    repeats = repeats or (3 if quick else 5)
    with one_blas_thread():
        bench = general_joints_bench(tuple(revolute), tuple(bezier), number=number,
                                     repeats=repeats)
    rows = []
    for b in bench:
        for s in SOLVERS:
            ms = b.get(f"{s}_ms")
            rows.append({"case": b["case"], "mechanism": b["mechanism"], "dofs": b["dofs"],
                         "paper_case": b["paper_case"], "paper_dofs": b["paper_dofs"],
                         "solver": s, "ms": ms, "status": "ok" if ms is not None
                         else "not applicable", "max_abs_diff": b["max_abs_diff"],
                         "number": number, "repeats": repeats})
    return rows


def _table(rows):
    out: dict = {}
    for r in rows:
        out.setdefault(r["case"], {"dofs": r["dofs"], "paper_case": r["paper_case"],
                                   "paper_dofs": r["paper_dofs"]})[r["solver"]] = r["ms"]
    return out


def summarize(rows: list[dict]) -> list[str]:
    """Ours and theirs per case (ms)."""
    def f(x):
        return "-" if x is None else f"{x:.3g}"
    out = []
    for case, t in _table(rows).items():
        out.append(f"{case} ({t['dofs']} DOF) vs paper {t['paper_case'] or '-'}: "
                   + ", ".join(f"{s} {f(t.get(s))}" for s in SOLVERS) + " ms")
    return out


def check(rows: list[dict]) -> None:
    """Every revolute chain has all our timings, positive, and the variants agree."""
    rc = [r for r in rows if r["case"].startswith("RC")]
    assert rc and all(r["ms"] > 0 for r in rc if r["solver"] in OURS)
    assert all(r["max_abs_diff"] < 1e-6 for r in rc)
    assert all(r["ms"] > 0 for r in rows if r["case"].startswith("BC")
               and r["solver"] == "numpy_aba")


def plot(rows: list[dict], path) -> None:
    import matplotlib.pyplot as plt

    table = _table(rows)
    cases = list(table)
    fig, ax = plt.subplots(figsize=(13, 6.2), layout="constrained")
    width = 0.8 / len(SOLVERS)
    for i, s in enumerate(SOLVERS):
        xs = [k + (i - (len(SOLVERS) - 1) / 2) * width for k in range(len(cases))]
        ys = [table[c].get(s) for c in cases]
        keep = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
        if keep:
            ax.bar(*zip(*keep, strict=True), width, color=STYLE[s], label=method_label(s),
                   hatch="//" if s.startswith("paper") else None,
                   edgecolor="white" if s.startswith("paper") else None)
    ax.set_yscale("log")
    ax.set_xticks(range(len(cases)), [
        f"{c} ({table[c]['dofs']} DOF)" + (f"\nvs paper {table[c]['paper_case']} "
                                           f"({table[c]['paper_dofs']} DOF)"
                                           if table[c]["paper_case"] else "")
        for c in cases], fontsize=8)
    ax.set_xlabel("mechanism: RC = revolute box chain, BC = our Bezier general-joint chain "
                  "(paper: TC = torus chain)")
    ax.set_ylabel("time per forward-dynamics call [ms]")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    fig.legend(fontsize=7, ncol=4, loc="outside lower center")
    number, repeats = (rows[0]["number"], rows[0]["repeats"]) if rows else ("N", "N")
    save_figure(fig, path, f"{TITLE}; ours: best of {repeats} × {number} calls, this machine, "
                "1 BLAS thread", title_size=10)


def claims(rows: list[dict]) -> list[dict]:
    """REPORT rows for Table 1."""
    from ._report import claim

    paper = "Si & Guenter"
    out = []
    t = _table(rows)
    for case in ("RC20", "RC50", "RC100"):
        if case not in t:
            continue
        r, p = t[case], PAPER_TABLE1_MS[case]
        out.append(claim(paper, f"Table 1 {case}: ABA (Featherstone) time per call",
                         f"Featherstone {p['featherstone']} ms, Method I {p['method_I']} ms",
                         f"numba {r['compiled_aba']:.3f} ms, NumPy {r['numpy_aba']:.2f} ms, "
                         f"Pinocchio " + (f"{r['pinocchio_aba']:.3f} ms"
                                          if r.get("pinocchio_aba") else "-"),
                         "reproduced" if r["compiled_aba"] < 2 * p["featherstone"]
                         else "partly reproduced",
                         "different machine (2.67 GHz Core 2 then); NumPy ABA is Python-bound",
                         against=("compiled_aba", "numpy_aba")
                         + (("pinocchio_aba",) if r.get("pinocchio_aba") else ())))
    rc = sorted((v["dofs"], v) for k, v in t.items() if k.startswith("RC"))
    if len(rc) > 1:
        (n0, a), (n1, b) = rc[0], rc[-1]
        growth = b["compiled_aba"] / a["compiled_aba"]
        out.append(claim(paper, "§5: O(n) running time of the recursive forward dynamics",
                         "RC20 -> RC100: Method I ×5.6, Featherstone ×5.1",
                         f"numba ABA {n0} -> {n1} DOF: ×{growth:.1f}; general joints "
                         f"×{b['general_aba'] / a['general_aba']:.1f}",
                         "reproduced" if growth < 1.5 * n1 / n0 else "partly reproduced"))
        over = [v["general_aba"] / v["numpy_aba"] for _, v in rc]
        out.append(claim(paper, "Table 1 / §4: general (symbolically derived) joints in the same "
                         "O(n) recursion, at a cost close to the specialised one",
                         "Method I on par with Featherstone (0.112 vs 0.127 ms at RC100)",
                         f"general / specialised revolute joints (both NumPy): "
                         f"{min(over):.2f}-{max(over):.2f}x",
                         "reproduced" if max(over) < 2 else "partly reproduced",
                         "sympy-derived S(q) evaluated numerically, not generated C code",
                         against=("numpy_aba",)))
    bc = {k: v for k, v in t.items() if k.startswith("BC") and v["paper_case"]}
    if bc:
        parts = ", ".join(f"{k} {v['numpy_aba']:.2f} ms vs {v['paper_case']} Method I "
                          f"{PAPER_TABLE1_MS[v['paper_case']]['method_I']} / II "
                          f"{PAPER_TABLE1_MS[v['paper_case']]['method_II']} ms"
                          for k, v in bc.items())
        out.append(claim(paper, "Table 1 TC10 / TC20: general surface-joint chains simulate in "
                         "about 0.1 ms (Method I), 1-2 ms (Method II)",
                         "TC10 0.055 / 1.05 ms, TC20 0.115 / 2.2 ms", parts,
                         "partly reproduced",
                         "our Bezier chain (1 DOF per torus) is not the paper's torus chain "
                         "(4-DOF surface joints): orders of magnitude only; NumPy, not C"))
    return out

