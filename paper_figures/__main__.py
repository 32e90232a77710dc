"""Command line: ``python -m paper_figures [--quick] [--only NAME] [--out DIR] [--workers N |
--scheduler ADDRESS]``.

With ``--workers N`` (a local Dask cluster of N single-threaded worker processes) or
``--scheduler ADDRESS`` (an existing one), every figure module is one Dask task that writes its
own CSV and PNG (:func:`paper_figures._build.build_figure`; on a multi-node cluster ``--out``
must be on a shared file system); REPORT.md is assembled at the end from the tasks' results,
in the same order as in-process. A figure that fails there is listed in REPORT.md and the
command exits with 1. Timing figures built side by side compete for the cores: their absolute
times are those of a loaded machine."""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from . import FIGURES  # noqa: E402
from ._build import build_figure, write_csv  # noqa: E402, F401
from ._report import write_report  # noqa: E402

#: Figures of the seed papers that no module reproduces yet (listed in REPORT.md).
NOT_COVERED = [
    "Si & Guenter Table 1: SD/FAST (closed source; Pinocchio stands in on the revolute "
    "chains, and neither has surface joints for TC10 / TC20 / WM)",
]

DEFAULT_OUT = Path(__file__).resolve().parent / "out"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m paper_figures", description=__doc__)
    p.add_argument("--quick", action="store_true", help="small sizes, a few minutes in total")
    p.add_argument("--only", action="append", choices=sorted(FIGURES), metavar="NAME",
                   help=f"only this figure (repeatable); one of {sorted(FIGURES)}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    p.add_argument("--tiny", action="store_true",
                   help="each figure's TINY configuration (seconds; for tests)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="build the figures as Dask tasks on a local cluster of N processes")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="build the figures as Dask tasks on an existing cluster")
    args = p.parse_args(argv)
    if args.workers and args.scheduler:
        p.error("give --workers or --scheduler, not both")
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"paper_figures: python {platform.python_version()} on {platform.machine()}, "
          f"{'quick' if args.quick else 'full'} run -> {args.out}")
    names = args.only or sorted(FIGURES)
    if args.workers or args.scheduler:
        results, failed = _build_on_dask(names, args)
    else:
        results, failed = {}, {}
        for name in names:
            results[name] = res = build_figure(name, args.quick, args.out, tiny=args.tiny)
            _print_result(res)
    claims: dict[str, list[dict]] = {}
    comparators: dict[str, dict[str, str]] = {}
    for name in names:                          # the report in the figures' order
        res = results.get(name)
        if res and res["claims"] is not None:
            claims[res["claims"]["title"]] = res["claims"]["rows"]
            comparators[res["claims"]["title"]] = res["claims"]["comparators"]
    missing = NOT_COVERED + [f"{name}: the build failed: {reason}"
                             for name, reason in failed.items()]
    report = args.out / "REPORT.md"
    write_report(claims, report, args.quick, missing, comparators)
    print(f"  claims report -> {report}")
    return 1 if failed else 0


def _print_result(res: dict) -> None:
    where = "" if res["worker"] == "local" else f" on {res['worker']}"
    print(f"  {res['name']}: {res['rows']} rows, {res['seconds']:.1f} s{where} -> "
          f"{res['csv']}, {res['png']}")
    for line in res["summary"]:
        print(f"    {line}")


def _build_on_dask(names: list[str], args) -> tuple[dict, dict]:
    """One :func:`build_figure` task per figure; results printed as they complete."""
    from distributed import as_completed

    from comparisons.cluster import dask_client, describe_client

    results: dict[str, dict] = {}
    failed: dict[str, str] = {}
    with dask_client(workers=args.workers, scheduler=args.scheduler) as client:
        info = describe_client(client)
        print(f"  Dask: {len(info['workers'])} workers, scheduler {info['scheduler']}, "
              f"dashboard {info['dashboard']}")
        futures = {client.submit(build_figure, name, args.quick, str(args.out.resolve()),
                                 tiny=args.tiny, key=f"figure {name}", pure=False,
                                 retries=1): name for name in names}
        for fut in as_completed(futures):
            name = futures[fut]
            try:
                results[name] = res = fut.result()
            except Exception as exc:
                failed[name] = f"{type(exc).__name__}: {exc}"
                print(f"  {name}: FAILED: {failed[name]}")
                continue
            _print_result(res)
    return results, failed


if __name__ == "__main__":
    sys.exit(main())
