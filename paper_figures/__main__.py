"""Command line: ``python -m paper_figures [--quick] [--only NAME] [--out DIR]``."""

from __future__ import annotations

import argparse
import csv
import platform
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from . import FIGURES  # noqa: E402
from ._report import write_report  # noqa: E402

#: Figures of the seed papers that no module reproduces yet (listed in REPORT.md).
NOT_COVERED = [
    "Lee et al. 2016 Fig. 3: the SVI curve (Johnson & Murphey's structured variational "
    "integrator is not implemented)",
    "Si & Guenter Table 1: SD/FAST and the torus-chain / windmill surface joints (our general "
    "joint example is a Bezier-curve chain)",
]

DEFAULT_OUT = Path(__file__).resolve().parent / "out"


def write_csv(rows: list[dict], path: Path) -> None:
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m paper_figures", description=__doc__)
    p.add_argument("--quick", action="store_true", help="small sizes, a few minutes in total")
    p.add_argument("--only", action="append", choices=sorted(FIGURES), metavar="NAME",
                   help=f"only this figure (repeatable); one of {sorted(FIGURES)}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"paper_figures: python {platform.python_version()} on {platform.machine()}, "
          f"{'quick' if args.quick else 'full'} run -> {args.out}")
    claims: dict[str, list[dict]] = {}
    for name in args.only or sorted(FIGURES):
        mod = FIGURES[name]
        t0 = time.perf_counter()
        rows = mod.compute(quick=args.quick)
        csv_path, png_path = args.out / f"{name}.csv", args.out / f"{name}.png"
        write_csv(rows, csv_path)
        mod.plot(rows, png_path)
        print(f"  {name}: {len(rows)} rows, {time.perf_counter() - t0:.1f} s -> "
              f"{csv_path.name}, {png_path.name}")
        for line in getattr(mod, "summarize", lambda r: [])(rows):
            print(f"    {line}")
        if hasattr(mod, "claims"):
            claims[f"{name}: {mod.TITLE}"] = mod.claims(rows)
    report = args.out / "REPORT.md"
    write_report(claims, report, args.quick, NOT_COVERED)
    print(f"  claims report -> {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
