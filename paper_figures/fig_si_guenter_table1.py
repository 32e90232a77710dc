"""Si & Guenter, Table 1 (§5): running time of one forward-dynamics call in milliseconds on
revolute chains RC20 / RC50 / RC100, torus chains TC10 / TC20 and the windmill WM, ours beside
the paper's numbers (2.67 GHz Core 2 Quad: their symbolic Method I, Featherstone's ABA,
SD/FAST, their mixed symbolic-numeric Method II).

Computed by :func:`comparisons.general_joints_bench.general_joints_bench`. The torus chains
and the windmill are the paper's models as we read them (:mod:`dynamics.minimal.surface_joint`:
4-DOF surface-surface joints, 38 / 78 / 73 DOF as in Table 1; the paper gives no dimensions,
ours are documented there). Ours: our Method I (the whole ABA unrolled symbolically into one
compiled C function) and Method II (sympy-derived joint kernels compiled with numba, numeric
numba recursion), :mod:`dynamics.minimal.general_compiled`, on every model; the NumPy ABA on
every model; on the revolute chains also the numba ABA (Featherstone), the NumPy ABA with
sympy-derived general revolute joints and ``pinocchio.aba`` (a substitute for SD/FAST, which is
closed source; Pinocchio has no surface joints, so TC / WM have no peer, as Featherstone and
SD/FAST are "NA" in the paper). Random states; best of ``repeats`` ``timeit`` runs of
``number`` calls; our times include the Python call (``ctypes`` for Method I, about 1 µs).
"""

from __future__ import annotations

from comparisons.general_joints_bench import PAPER_TABLE1_MS, general_joints_bench

from ._dynamics import one_blas_thread, versions
from ._plotting import save_figure

NAME = "si_guenter_table1"
TITLE = "ABA and general-joint timings, ms per call (Si & Guenter Table 1)"
#: Our columns (``<id>_ms`` in the benchmark rows) and the paper's.
OURS = ("numpy_aba", "compiled_aba", "general_aba", "method_I", "method_II")
PEER = ("pinocchio_aba",)
PAPER = ("paper_method_I", "paper_featherstone", "paper_sdfast", "paper_method_II")
SOLVERS = OURS + PEER + PAPER
#: The methods the figure compares against: the paper's own, substitutes, additions
#: (:mod:`paper_figures._report`).
COMPARATORS = {
    "numpy_aba": "paper's own: Featherstone's ABA (our NumPy implementation)",
    "compiled_aba": "paper's own: Featherstone's ABA (our numba implementation)",
    "pinocchio_aba": "substitute: for SD/FAST (closed source, not available); Pinocchio's ABA "
                     "(C++), on the revolute chains only (it has no surface joints)",
}
#: A tiny configuration for the test suite.
TINY = {"revolute": (5,), "torus": (2,), "windmill": False, "number": 2, "repeats": 1}
STYLE = {"numpy_aba": "tab:blue", "compiled_aba": "navy", "general_aba": "tab:cyan",
         "method_I": "tab:green", "method_II": "tab:olive",
         "pinocchio_aba": "tab:red", "paper_method_I": "0.15", "paper_featherstone": "0.35",
         "paper_sdfast": "0.55", "paper_method_II": "0.75"}


def method_label(solver: str) -> str:
    """Legend text naming implementation and version."""
    v = versions()
    g = f"graphsolve {v['graphsolve']} dynamics.minimal"
    return {"numpy_aba": f"ours: ABA, NumPy ({g})",
            "compiled_aba": f"ours: ABA, numba ({g})",
            "general_aba": f"ours: ABA with general (sympy) joints, NumPy ({g})",
            "method_I": f"ours: Method I, unrolled symbolic ABA in C ({g})",
            "method_II": f"ours: Method II, sympy joint kernels + numeric ABA, numba ({g})",
            "pinocchio_aba": f"Pinocchio {v['pin']} aba (C++)",
            "paper_method_I": "paper: Method I (symbolic, 2.67 GHz Core 2)",
            "paper_featherstone": "paper: Featherstone ABA",
            "paper_sdfast": "paper: SD/FAST",
            "paper_method_II": "paper: Method II (symbolic-numeric)"}[solver]


def compute(quick: bool = True, revolute=None, torus=None, windmill: bool = True,
            number: int | None = None, repeats: int | None = None) -> list[dict]:
    """Long rows ``case, mechanism, dofs, paper_case, paper_dofs, solver, ms, status,
    max_abs_diff, setup_s``: one per (case, method) with a number (``status`` "ok"), or "not
    applicable" where the benchmark or the paper has none. Quick and full build the same
    models (the paper's); quick times fewer calls."""
    revolute = revolute or (20, 50, 100)
    torus = (10, 20) if torus is None else torus
    number = number or (20 if quick else 200)
    repeats = repeats or (3 if quick else 5)
    with one_blas_thread():
        bench = general_joints_bench(tuple(revolute), tuple(torus), windmill, number=number,
                                     repeats=repeats)
    rows = []
    for b in bench:
        for s in SOLVERS:
            ms = b.get(f"{s}_ms")
            rows.append({"case": b["case"], "mechanism": b["mechanism"], "dofs": b["dofs"],
                         "paper_case": b["paper_case"], "paper_dofs": b["paper_dofs"],
                         "solver": s, "ms": ms, "status": "ok" if ms is not None
                         else "not applicable", "max_abs_diff": b["max_abs_diff"],
                         "setup_s": b.get(f"{s}_setup_s"), "number": number,
                         "repeats": repeats})
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
    """Every model has positive NumPy / Method II timings (and Method I where a C compiler
    exists), and every variant agrees with the NumPy ABA (relative 1e-8)."""
    from dynamics.minimal.general_compiled import c_compiler
    rc = [r for r in rows if r["case"].startswith("RC")]
    assert rc and all(r["ms"] > 0 for r in rc if r["solver"] in OURS
                      and (r["solver"] != "method_I" or c_compiler()))
    assert all(r["max_abs_diff"] < 1e-8 for r in rows)
    need = ("numpy_aba", "method_II") + (("method_I",) if c_compiler() else ())
    assert all(r["ms"] > 0 for r in rows if r["solver"] in need)


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
    ax.set_xlabel("mechanism: RC = revolute box chain, TC = torus chain (4-DOF surface joints), "
                  "WM = windmill")
    ax.set_ylabel("time per forward-dynamics call [ms]")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    fig.legend(fontsize=7, ncol=3, loc="outside lower center")
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
    if all(t.get(c, {}).get("method_I") for c in ("RC20", "RC50", "RC100")):
        faster = [t[c]["method_I"] < t[c]["compiled_aba"] for c in ("RC20", "RC50", "RC100")]
        out.append(claim(paper, "Table 1 RC20-RC100: Method I (symbolic) is faster than "
                         "Featherstone's ABA",
                         "0.020 / 0.050 / 0.112 vs 0.025 / 0.064 / 0.127 ms",
                         "Method I " + " / ".join(f"{t[c]['method_I']:.4f}" for c in
                                                  ("RC20", "RC50", "RC100"))
                         + " vs numba ABA " + " / ".join(f"{t[c]['compiled_aba']:.4f}" for c in
                                                         ("RC20", "RC50", "RC100")) + " ms",
                         "reproduced" if all(faster) else
                         "partly reproduced" if any(faster) else "not reproduced",
                         "our ABA is numba, not the paper's C++ Featherstone; Method I includes "
                         "a ctypes call (about 1 µs)", against=("compiled_aba",)))
    for case in ("TC10", "TC20", "WM"):
        r = t.get(case)
        if not r or r.get("method_I") is None or r.get("method_II") is None:
            continue
        p = PAPER_TABLE1_MS[case]
        verdict = ("reproduced" if r["method_I"] <= 2 * p["method_I"]
                   and r["method_II"] <= 2 * p["method_II"] else "partly reproduced")
        out.append(claim(paper, f"Table 1 {case} ({p['dofs']} DOF, 4-DOF surface-surface "
                         "joints): forward dynamics time per call",
                         f"Method I {p['method_I']} ms, Method II {p['method_II']} ms",
                         f"Method I {r['method_I']:.4f} ms, Method II {r['method_II']:.4f} ms "
                         f"({r['dofs']} DOF; NumPy ABA {r['numpy_aba']:.2f} ms)", verdict,
                         "our reading of the paper's models (dimensions ours); other machine; "
                         "no comparator: Featherstone / SD/FAST are NA in the paper, Pinocchio "
                         "has no surface joints"))
    sym = [(c, t[c]) for c in ("TC10", "TC20", "WM")
           if c in t and t[c].get("method_I") and t[c].get("method_II")]
    if sym:
        ours = ", ".join(f"{c} ×{r['method_II'] / r['method_I']:.1f}" for c, r in sym)
        out.append(claim(paper, "§5: the symbolic method (I) gives faster code than the mixed "
                         "symbolic-numeric method (II)",
                         "II / I: TC10 ×19, TC20 ×19, WM ×22", f"II / I: {ours}",
                         "reproduced" if all(r["method_I"] < r["method_II"] for _, r in sym)
                         else "not reproduced",
                         "ordering reproduced; the paper's larger gap includes its slow Jacobi "
                         "solver for Ω⁻¹ (§5), ours uses Cholesky in numba"))
    if "TC10" in t and "TC20" in t and t["TC10"].get("method_I") and t["TC20"].get("method_I"):
        g = t["TC20"]["method_I"] / t["TC10"]["method_I"]
        out.append(claim(paper, "§4-5: linear time on general joints (TC10 -> TC20, 38 -> 78 "
                         "DOF)", "Method I ×2.1, Method II ×2.1",
                         f"Method I ×{g:.1f}, Method II "
                         f"×{t['TC20']['method_II'] / t['TC10']['method_II']:.1f}",
                         "reproduced" if g < 1.5 * 78 / 38 else "partly reproduced"))
    return out

