"""``REPORT.md``: one row per claim of the seed papers, with the paper's number, ours and a
verdict, collected from the figure modules' optional ``claims(rows)`` hooks.

Comparators
-----------
Every figure module declares ``COMPARATORS``: ``{solver id: role}`` for each method of its
``SOLVERS`` that the figure compares *against* (the method the figure reproduces, and rows
holding the paper's published numbers, are not comparators). A role is a string starting
with one of :data:`COMPARATOR_KINDS`:

``"paper's own"``
    The comparator the paper used: the same algorithm (our implementation from its
    description, e.g. Fan et al.'s Galerkin integrators for Brüdigam et al. 2023 Fig. 10), or
    the same package (MuJoCo), or, for accuracy figures where the numerical scheme alone
    decides the result, the scheme the paper names run through another package (Heun's
    method on Pinocchio's ABA instead of DifferentialEquations.jl).
``"substitute: reason"``
    Stands in for a comparator that is unavailable or not reproducible here (SD/FAST is closed
    source: Pinocchio; RigidBodyDynamics.jl timings: Pinocchio / MuJoCo; the GGL method's
    Matlab code: an acceleration-level RK4).
``"addition: reason"``
    Not in the paper: an extra baseline or a reference solution.

A claim names the comparators it is checked against (``claim(..., against=(ids))``); its
*basis* (:func:`claim_basis`) is ``"substitute"`` if any of them is a substitute, else
``"paper's own"`` if any is, else ``"addition"``, and ``"none"`` for a claim about our method
alone. REPORT.md lists each figure's comparators, the basis of every claim, and the counts.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

from comparisons.solvers import package_version

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not applicable")
B2023 = "Brüdigam et al. 2023"
#: Roles of a figure's comparators (the prefix of each ``COMPARATORS`` value).
COMPARATOR_KINDS = ("paper's own", "substitute", "addition")
#: What a claim is checked against (:func:`claim_basis`).
BASES = ("paper's own", "substitute", "addition", "none")
_BASIS_TEXT = {"paper's own": "the papers' own comparators", "substitute": "substitutes",
               "addition": "comparators added here only",
               "none": "no comparator (our method alone)"}


def claim(paper: str, text: str, paper_value: str, ours: str, verdict: str,
          note: str = "", against: tuple[str, ...] = ()) -> dict:
    """One REPORT row; ``verdict`` is one of :data:`VERDICTS`; ``against``: the ids (keys of the
    figure's ``COMPARATORS``) of the comparators the claim is checked against."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    if isinstance(against, str):
        raise TypeError("against must be a tuple of comparator ids, not a string")
    return {"paper": paper, "claim": text, "paper_value": paper_value, "ours": ours,
            "verdict": verdict, "note": note, "against": tuple(against)}


def comparator_kind(role: str) -> str:
    """The kind (one of :data:`COMPARATOR_KINDS`) of a ``COMPARATORS`` value.

    >>> comparator_kind("substitute: SD/FAST is closed source")
    'substitute'
    """
    kind = role.split(":", 1)[0].strip()
    if kind not in COMPARATOR_KINDS:
        raise ValueError(f"a comparator role starts with one of {COMPARATOR_KINDS}, "
                         f"got {role!r}")
    return kind


def claim_basis(row: dict, comparators: dict[str, str]) -> str:
    """What claim ``row`` is checked against, one of :data:`BASES` (module docstring).

    Raises
    ------
    KeyError
        ``row["against"]`` names a method that is not in ``comparators``.
    """
    kinds = {comparator_kind(comparators[s]) for s in row.get("against", ())}
    return next((k for k in ("substitute", "paper's own", "addition") if k in kinds), "none")


def basis_counts(claims: dict[str, list[dict]],
                 comparators: dict[str, dict[str, str]]) -> dict[str, int]:
    """``{basis: number of claims}`` over every figure (``comparators``: title -> the
    figure's ``COMPARATORS``)."""
    counts = {b: 0 for b in BASES}
    for title, rows in claims.items():
        for r in rows:
            counts[claim_basis(r, comparators.get(title, {}))] += 1
    return counts


def _against(row: dict, comparators: dict[str, str]) -> str:
    basis = claim_basis(row, comparators)
    return "—" if basis == "none" else f"{basis}: " + ", ".join(row["against"])


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_report(claims: dict[str, list[dict]], path: Path, quick: bool,
                 missing: list[str], comparators: dict[str, dict[str, str]] | None = None
                 ) -> None:
    """Write ``path``: a table per figure (``claims``: title -> rows) with its comparators
    (``comparators``: title -> the figure's ``COMPARATORS``), the counts of verdicts and of
    claims by comparator basis, the machine and package versions."""
    comparators = comparators or {}
    lines = ["# Claims of the seed papers, checked by `python -m paper_figures`", "",
             f"Run: {time.strftime('%Y-%m-%d %H:%M %Z')}, {'quick' if quick else 'full'} "
             "configuration (quick runs use smaller sizes than the papers; verdicts say so "
             "where it matters).", "",
             f"Machine: {platform.processor() or platform.machine()}, Python "
             f"{platform.python_version()}; " + ", ".join(
                 f"{p} {package_version(p)}" for p in ("graphsolve", "numpy", "scipy", "numba",
                                                      "scikit-sparse", "pin", "mujoco")), ""]
    counts = {v: 0 for v in VERDICTS}
    for rows in claims.values():
        for r in rows:
            counts[r["verdict"]] += 1
    lines += ["Summary: " + ", ".join(f"{n} {v}" for v, n in counts.items()), ""]
    basis = basis_counts(claims, comparators)
    lines += ["Claims checked against " + ", ".join(
        f"{_BASIS_TEXT[b]}: {n}" for b, n in basis.items()) + " (a claim checked against "
        "any substitute counts as a substitute; each figure lists its comparators).", ""]
    for name, rows in claims.items():
        comp = comparators.get(name, {})
        lines += [f"## {name}", ""]
        if comp:
            lines += ["Comparators:", ""] + [f"- `{s}`: {_cell(role)}" for s, role in
                                              comp.items()] + [""]
        else:
            lines += ["Comparators: none (the figure shows our method alone).", ""]
        lines += ["| paper | claim | paper's number | ours | verdict | checked against | note |",
                  "|---|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join([_cell(r[k]) for k in ("paper", "claim", "paper_value",
                                                          "ours", "verdict")]
                                    + [_cell(_against(r, comp)), _cell(r["note"])]) + " |"
                  for r in rows]
        lines.append("")
    if missing:
        lines += ["## Not covered by this run", ""] + [f"- {m}" for m in missing] + [""]
    path.write_text("\n".join(lines))
