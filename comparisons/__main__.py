"""``python -m comparisons list | run --suite S [--workers N | --scheduler ADDRESS] [--resume]
[...] | plot FILE | scale [...] | scale-table FILE | batch [--workers N] | constraints | dynamics
| contacts | contact-sweep | urdf | minimal | general-joints | step-profile | control``.

Every benchmark other than the suites (``run``) is one module ``comparisons/<name>_bench.py``
and one command here, which writes a CSV, its JSON metadata (``.json``: machine, versions,
command line) and a plot (``.png``) next to it."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from .plot import fill_table, labelling_table, plot_results, ratio_table, read_results
from .runner import machine_metadata, run, write_metadata, write_results
from .solvers import SOLVERS, make_solvers
from .suite import SIDE_EXPONENT, SUITES, large_side_cases


def _list(_args) -> int:
    for s in SUITES.values():
        print(f"suite {s.name}: {s.description}; kinds {', '.join(s.kinds)}; "
              f"repeats {s.repeats}" + (f" over >= {s.min_case_s} s per case"
                                        if s.min_case_s else ""))
        for fam, sizes in s.sizes.items():
            print(f"    {fam:<12} sizes {', '.join(map(str, sizes))}")
        print(f"    solvers: {', '.join(s.solvers)}")
    print("solvers (availability):")
    for name, solver in zip(SOLVERS, make_solvers(SOLVERS), strict=True):
        print(f"    {name:<32} {solver.version() or '-'}")
    return 0


def _run(args) -> int:
    from contextlib import nullcontext

    from .runner import gemm_reference_gflops, simd_gemm_gflops

    suite = SUITES[args.suite]
    if args.sizes:
        for fam, size, nodes in large_side_cases(args.families or list(suite.sizes), args.sizes):
            print(f"warning: --sizes applies to every family: {fam} at size {size} is "
                  f"{size}^{SIDE_EXPONENT[fam]} = {nodes:,} nodes (its size is the side); "
                  "restrict the run with --families, or see `python -m comparisons scale`",
                  file=sys.stderr)
    t0 = time.perf_counter()
    out = Path(args.out or f"results/{suite.name}.csv")
    distributed = bool(args.workers or args.scheduler)
    if args.workers and args.scheduler:
        raise SystemExit("error: give --workers or --scheduler, not both")
    meta = {**_meta(), "suite": suite.name, "resume": args.resume,
            "mode": f"scheduler {args.scheduler}" if args.scheduler
            else f"LocalCluster, {args.workers} workers" if args.workers else "in-process"}
    if distributed:
        from .cluster import dask_client, describe_client

        ctx = dask_client(workers=args.workers, scheduler=args.scheduler,
                          retries=args.retries)
    else:
        ctx = nullcontext()
    with ctx as client:
        if client is not None:
            info = describe_client(client)
            meta["dask"] = info
            print(f"Dask: {len(info['workers'])} workers, scheduler {info['scheduler']}, "
                  f"dashboard {info['dashboard']}")
        write_metadata(out, meta)               # a first version, in case the run is cut
        rows = run(suite, families=args.families, sizes=args.sizes, kinds=args.kinds,
                   solvers=args.solvers, repeats=args.repeats, min_case_s=args.min_case_time,
                   relabel=args.relabel, out=out, resume=args.resume, client=client,
                   retries=args.retries, progress=not args.no_progress)
    from .blas_threads import limit_blas_threads

    with limit_blas_threads(1):
        gemm = gemm_reference_gflops()
        simd = simd_gemm_gflops()
    skipped = suite.skipped(families=args.families, sizes=args.sizes, kinds=args.kinds)
    meta["skipped_cases"] = skipped
    meta.update({"gemm6_reference_gflops": round(gemm, 3), "gemm6_simd_gflops": round(simd, 3),
                 "gemm6_note": "measured on the host that ran the command",
                 "cpus": sorted({r["cpu"] for r in rows if r.get("cpu")}),
                 "hosts": sorted({r["host"] for r in rows if r.get("host")}),
                 "seconds": round(time.perf_counter() - t0, 1)})
    write_metadata(out, meta)
    bad = [r for r in rows if r["status"] == "failed"]
    print(f"{len(rows)} rows ({len(bad)} failed, "
          f"{sum(r['status'] == 'skipped' for r in rows)} skipped) -> {out}, "
          f"{out.with_suffix('.json')}")
    for r in bad:
        print(f"  failed: {r['family']} {r['size']} {r['kind']} {r['solver']}: {r['reason']}")
    if skipped:
        print(f"{len(skipped)} cases not run by the suite's design (listed in the JSON):")
        for reason in sorted({s["reason"] for s in skipped}):
            which = sorted({f"{s['family']} × {s['kind']}" for s in skipped
                            if s["reason"] == reason})
            print(f"  {', '.join(which)}: {reason}")
    trees = [r for r in rows if r.get("gflops") and r["family"] in ("path", "random_tree")
             and r["solver"].startswith("graphsolve-brudigam")]   # zero fill: O(n) work
    if trees and not distributed:   # the GEMM reference is this host's: same-run only here
        # the uniform 6×6 spd case first (a KKT path has more nodes)
        big = max(trees, key=lambda r: (r["kind"] == "spd", r["nodes"], r["gflops"]))
        print(f"graphsolve (brudigam) on a {big['nodes']}-node {big['family']}: "
              f"{big['gflops']:.2f} GFLOP/s (analysis flops / refactor time) = "
              f"{big['gflops'] / gemm:.0%} of the numba 6x6 GEMM loop ({gemm:.2f} GFLOP/s, "
              f"same run), {big['gflops'] / simd:.0%} of the vectorized 6x6 product "
              f"({simd:.2f} GFLOP/s)")
    return 0


def _plot(args) -> int:
    rows = read_results(args.file)
    out = Path(args.out or Path(args.file).parent)
    stem = Path(args.file).stem
    paths = plot_results(rows, out, stem=stem)
    tables = out / f"{stem}_tables.md"
    solvers = {r["solver"] for r in rows}
    mine = [s for s in ("graphsolve-auto-compiled", "graphsolve-brudigam-compiled")
            if s in solvers] or ["graphsolve-brudigam-compiled"]
    text = ("# Factor entries (fill block pairs)\n\n" + fill_table(rows)
            + "\n\n# Time ratios (native numbering)\n\n"
            + "\n\n".join(ratio_table(rows, solver=s) for s in mine))
    if any(r.get("labelling") not in (None, "", "native") for r in rows):
        text += ("\n\n# Native vs random node numbering\n\n"
                 + labelling_table(rows, solver=mine[0]))
    tables.write_text(text + "\n")
    print(f"{len(paths)} plots and {tables.name} -> {out}")
    return 0


def _meta() -> dict:
    return {**machine_metadata(), "argv": sys.argv,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "blas_threads": 1}


def _save_plot(plot, rows: list[dict], out: Path) -> str:
    """``plot(rows, out.with_suffix(".png"))``; the text naming the PNG for the last line of a
    command ("" when matplotlib is missing: said so instead)."""
    png = Path(out).with_suffix(".png")
    try:
        plot(rows, png)
    except ImportError as exc:
        print(f"  no plot: {exc} (pip install -e '.[plot]')")
        return ""
    return f", {png}"


def _batch(args) -> int:
    from contextlib import nullcontext

    from .batch_bench import plot_batch, run_batch

    if args.workers and args.scheduler:
        raise SystemExit("error: give --workers or --scheduler, not both")
    meta = _meta()
    rows = run_batch(repeats=args.repeats or 5)
    for r in rows:
        print(f"  {r['family']:>7} {r['size']:>4} B={r['batch']:<5} threads={r['threads']}: "
              f"batch {r['per_matrix_batch_us']:8.1f} us/matrix, loop "
              f"{r['per_matrix_loop_us']:8.1f} us/matrix, speed-up {r['speedup']:.2f}x; "
              f"{r['python_threads']} Python threads {r['pool_speedup']:.2f}x the loop")
    if args.workers or args.scheduler:
        from .batch_bench import DASK_CASE, run_batch_dask, task_overhead
        from .cluster import dask_client, describe_client

        ctx = dask_client(workers=args.workers, scheduler=args.scheduler)
    else:
        ctx = nullcontext()
    with ctx as client:
        if client is not None:
            meta["dask"] = describe_client(client)
            print(f"Dask: {len(meta['dask']['workers'])} workers, dashboard "
                  f"{meta['dask']['dashboard']}")
            family, size, block, B = DASK_CASE
            dask_rows = run_batch_dask(client, family, args.dask_size or size, block,
                                       args.dask_batch or B, repeats=args.repeats or 3)
            for r in dask_rows:
                print(f"  {r['batch']} {r['family']} {r['size']} systems, {r['way']:<32} "
                      f"{r['seconds']:8.3f} s = {r['per_system_us']:7.1f} us/system, "
                      f"{r['speedup']:.2f}x (max diff {r['max_diff']:.1e})")
            overhead = task_overhead(client, repeats=args.repeats or 3)
            for r in overhead:
                print(f"  {r['way']:<40} {r['per_task_us']:8.1f} us per task")
            rows = rows + dask_rows + overhead
    out = Path(args.out or "results/batch.csv")
    write_results(rows, out, meta, columns=None)
    print(f"-> {out}{_save_plot(plot_batch, rows, out)}")
    return 0


def _constraints(args) -> int:
    from .constraints_bench import crossover, plot_constraints, run_constraint_benchmark

    rows = run_constraint_benchmark(ns=tuple(args.ns), ks=tuple(args.ks),
                                    repeats=args.repeats or 3)
    out = Path(args.out or "results/constraints.csv")
    write_results(rows, out, _meta(), columns=None)
    for r in rows:
        t = f"{r['best_s'] * 1e3:9.3f} ms" if r["status"] == "ok" else r["status"]
        print(f"  n={r['n']:<5} k={r['k']:<3} {r['solver']:<22} {t}")
    print(f"crossover (smallest k where Baraff's primary/auxiliary is not the fastest, per n): "
          f"{crossover(rows)} -> {out}{_save_plot(plot_constraints, rows, out)}")
    return 0


def _dynamics(args) -> int:
    from .dynamics_bench import (
        linear_slope,
        plot_pendulum_benchmark,
        ratio_summary,
        run_pendulum_benchmark,
    )

    sizes = tuple(args.sizes or ((1, 5, 20) if args.quick else (1, 2, 5, 10, 20, 50, 100)))
    steps = args.steps or (200 if args.quick else 1000)
    rows = run_pendulum_benchmark(sizes=sizes, steps=steps, repeats=args.repeats or 3)
    out = Path(args.out or "results/pendulum.csv")
    meta = _meta()
    write_results(rows, out, meta, columns=None)
    png = out.with_suffix(".png")
    versions = {"pinocchio-semi-implicit-euler": meta.get("versions", {}).get("pin", ""),
                "pinocchio-rk4": meta.get("versions", {}).get("pin", ""),
                "mujoco-euler": meta.get("versions", {}).get("mujoco", "")}
    plot_pendulum_benchmark(rows, png, versions)
    for r in rows:
        t = f"{r['us_per_step']:9.1f} us/step" if r["status"] == "ok" else r["status"]
        run = (f", Simulation.run {r['run_us_per_step']:9.1f} us/step (recording "
               f"{100 * r['recording_overhead']:.1f} %)"
               if r["status"] == "ok" and r.get("run_us_per_step") else "")
        print(f"  {r['joint']:>9} n={r['n']:<4} {r['solver']:<30} {t}{run}")
    for r in ratio_summary(rows):
        ratios = ", ".join(f"{k[3:]} {v:.2f}x" for k, v in r.items() if k.startswith("vs_"))
        runs = ", ".join(f"{k[7:]} {v:.2f}x" for k, v in r.items() if k.startswith("run_vs_"))
        print(f"  maximal / peer, {r['joint']} n={r['n']}: step loop {ratios}"
              + (f"; Simulation.run {runs}" if runs else ""))
    for joint in ("revolute", "spherical"):
        print(f"  log-log slope of the maximal integrator ({joint}, n >= 10): "
              f"{linear_slope(rows, 'maximal', joint):.2f}")
    print(f"-> {out}, {png}")
    return 0


def _urdf(args) -> int:
    from .urdf_bench import markdown_table, plot_urdf, run_urdf_benchmark

    rows = run_urdf_benchmark(args.out, args.corpus, meta=_meta(),
                              robots=set(args.robots) if args.robots else None,
                              number=args.number, repeats=args.repeats, progress=True)
    print(markdown_table(rows))
    print(f"-> {args.out}{_save_plot(plot_urdf, rows, Path(args.out))}")
    return 0


def _contacts(args) -> int:
    from .contact_bench import (
        maximal_box_drop,
        mujoco_box_drop,
        plot_sphere_chain,
        run_sphere_chain_benchmark,
        scaling_summary,
    )

    ours = maximal_box_drop()
    print(f"  box drop (0.5 m cube from 0.4 m, dt 0.01 s): maximal min distance "
          f"{ours['min_distance']:.3g} m, final {ours['final_distance']:.3g} m, "
          f"{ours['iterations']:.1f} interior-point iterations per step")
    try:
        mj = mujoco_box_drop()
        print(f"  box drop, MuJoCo {mj['version']} defaults: max penetration "
              f"{mj['max_penetration'] * 100:.2f} cm, final {-mj['final_distance'] * 1e3:.3f} mm")
    except ImportError as exc:
        mj = {"status": f"skipped: {exc}"}
    sizes = tuple(args.sizes or ((1, 5, 10) if args.quick else (1, 2, 5, 10, 20, 50, 100)))
    steps = args.steps or (100 if args.quick else 1000)
    rows = run_sphere_chain_benchmark(sizes=sizes, steps=steps, repeats=args.repeats or 1)
    for r in rows:
        rows_mj = (f"MuJoCo {r['mujoco_us_per_step']:8.1f} us/step, penetration "
                   f"{r['mujoco_penetration'] * 100:.2f} cm" if "mujoco_s" in r
                   else r.get("mujoco_status", ""))
        ours_s = (f"{r['maximal_us_per_step']:9.1f} us/step, penetration "
                  f"{r['maximal_penetration']:.1e} m" if "maximal_s" in r
                  else r["maximal_status"])
        its = (f" ({r['maximal_iterations']:.2f} it/step, {r['maximal_us_per_iteration']:.0f}"
               " us/it)" if "maximal_s" in r else "")
        print(f"  sphere chain n={r['n']:<4} maximal {ours_s}{its}; {rows_mj}")
    summ = scaling_summary(rows)
    print(f"  log-log slope over n >= {summ['min_size']}: maximal time per step "
          f"{summ['slope_step']:.2f}, per interior-point iteration {summ['slope_iteration']:.2f}"
          f"; MuJoCo per step {summ['slope_mujoco']:.2f}")
    print(f"  affine fit per IP iteration: {summ['iteration_fixed_us']:.0f} us + "
          f"{summ['iteration_per_sphere_us']:.2f} us * n; per step: {summ['step_fixed_us']:.0f}"
          f" us + {summ['step_per_sphere_us']:.2f} us * n")
    print("  IP iterations per step: " + ", ".join(
        f"n={n}: {v:.2f}" for n, v in summ["iterations_per_step"].items()))
    out = Path(args.out or "results/contacts.csv")
    box = [{"n": 0, "case": "box_drop",
            **{f"maximal_{k}": v for k, v in ours.items() if np.ndim(v) == 0},
            **{f"mujoco_{k}": v for k, v in mj.items() if np.ndim(v) == 0}}]
    write_results(box + rows, out, _meta(), columns=None)
    print(f"-> {out}{_save_plot(plot_sphere_chain, rows, out)}")
    return 0


def _contact_sweep(args) -> int:
    from .contact_sweep_bench import plot_contact_sweep, run_contact_sweep, summarize

    cases = args.cases or (12 if args.quick else 160)
    sizes = args.sizes or ([2, 5, 10] if args.quick else [10, 30, 60, 100])
    out = Path(args.out or "results/contact_sweep.csv")
    rows = run_contact_sweep(cases, sizes, seed=args.seed, duration=args.duration, out=out,
                             resume=args.resume, halvings=args.halvings)
    summ = summarize(rows)
    for n, (failed, total) in summ["per_size"].items():
        print(f"  sphere chain n={n:<4} {failed} of {total} runs failed")
    for r in rows:
        if r["status"] == "failed":
            print(f"  case {r['case']}: n={r['n']} friction {float(r['friction']):.3f} velocity "
                  f"{float(r['velocity']):.3f} dt {r['dt']} m={r['n_friction']}: {r['message']}")
    write_metadata(out, {**_meta(), "cases": cases, "sizes": sizes, "seed": args.seed,
                         "duration": args.duration, "halvings": args.halvings, **summ})
    print(f"{summ['failed']} of {summ['cases']} runs failed -> {out}"
          f"{_save_plot(plot_contact_sweep, rows, out)}")
    return 0


def _step_profile(args) -> int:
    from .step_profile import (
        CASES,
        COLUMNS,
        QUICK_CASES,
        markdown_table,
        run_step_profile,
    )

    cases = QUICK_CASES if args.quick else CASES
    steps = args.steps or (20 if args.quick else 1000)
    repeats = args.repeats or (1 if args.quick else 3)
    rows = run_step_profile(cases, steps=steps, repeats=repeats,
                            min_time=0.005 if args.quick else 0.02)
    out = Path(args.out or "results/step_profile.csv")
    meta = {**_meta(), "steps": steps, "repeats": repeats, "timer": "time.process_time (CPU)"}
    try:
        meta["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    write_results(rows, out, meta, columns=list(COLUMNS))
    print(markdown_table(rows))
    print(f"CPU time per step, {steps} steps, best of {repeats}; load average "
          f"{meta.get('load_average', '?')} -> {out}")
    return 0


def _control(args) -> int:
    from .control_bench import CASES, COLUMNS, markdown_table, plot_control, run_control_benchmark

    cases = ["revolute chain n=10", "quadruped sway (contacts)"] if args.quick else list(CASES)
    steps = args.steps or (100 if args.quick else 1000)
    repeats = args.repeats or (1 if args.quick else 3)
    out = Path(args.out or "results/control.csv")
    rows = run_control_benchmark(cases, steps=steps, repeats=repeats)
    write_results(rows, out, {**_meta(), "steps": steps, "repeats": repeats}, columns=COLUMNS)
    print(markdown_table(rows))
    print(f"wall time per step, {steps} steps, best of {repeats} -> {out}"
          f"{_save_plot(plot_control, rows, out)}")
    return 0


def _minimal(args) -> int:
    from .minimal_bench import minimal_bench, plot_minimal

    res = minimal_bench(quick=args.quick, dofs=tuple(args.dofs) if args.dofs else None,
                        steps=args.steps, newton_jacobian=args.newton_jacobian)
    print(f"  Newton's DEL Jacobian: {args.newton_jacobian}")
    for r in res["rows"]:
        print(f"  DOF {r['dof']:>4} {r['solver']:<8} {r['seconds']:9.4f} s "
              f"({r['mean_iterations']:.2f} iterations/step, max |ΔE| {r['energy_error']:.2e} J)")
    for d, x in sorted(res["speedup_riqn"].items()):
        paper = res["paper_speedup"].get(d)
        ref = f" (paper {paper}x)" if paper else ""
        print(f"  RIQN speed-up over Newton at {d} DOF: {x:.1f}x{ref}; Broyden "
              f"{res['speedup_broyden'].get(d, float('nan')):.1f}x")
    aba = res["aba"]
    if aba.get("ratio") is not None:
        print(f"  ABA n = {aba['n']}: ours {aba['ours_s'] * 1e6:.1f} us, pin.aba "
              f"{aba['pinocchio_s'] * 1e6:.1f} us, ratio {aba['ratio']:.2f}x")
    out = Path(args.out or "results/minimal.csv")
    write_results(res["rows"], out, {**_meta(), "aba": aba,
                                     "newton_jacobian": args.newton_jacobian}, columns=None)
    print(f"-> {out}{_save_plot(plot_minimal, res['rows'], out)}")
    return 0


def _general_joints(args) -> int:
    from .general_joints_bench import format_rows, general_joints_bench, plot_general_joints

    rows = general_joints_bench(revolute=tuple(args.revolute), torus=tuple(args.torus),
                                windmill=not args.no_windmill, number=args.number,
                                repeats=args.repeats)
    print(format_rows(rows))
    out = Path(args.out)
    write_results(rows, out, _meta(), columns=None)
    print(f"-> {out}{_save_plot(plot_general_joints, rows, out)}")
    return 0


def _scale(args) -> int:
    from . import scale_bench as scale

    if args.one:
        family, size = args.one[0], int(args.one[1])
        res = scale.run_part(args.part, family, size, npz=args.npz,
                             repeats=args.repeats or 3, budget=args.budget,
                             memory_fraction=args.memory_fraction)
        if args.json:
            print(scale.one_json(res))
        else:
            for k, v in res.items():
                print(f"  {k:<24} {v}")
        return 0
    out = Path(args.out)
    rows = scale.run_scale(families=args.families, sizes=args.sizes, quick=args.quick,
                           repeats=args.repeats, out=out, fresh=args.fresh,
                           budget=args.budget, meta={**_meta(), "block_size": scale.BLOCK})
    print(scale.scale_table(rows))
    bad = [r for r in rows if r["status"] != "ok"]
    print(f"{len(rows)} cases ({len(bad)} failed) -> {out}, {out.with_suffix('.json')}"
          f"{_save_plot(scale.plot_scale, rows, out)}")
    return 0


def _scale_table(args) -> int:
    from .scale_bench import read_scale, scale_table

    print(scale_table(read_scale(args.file)))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m comparisons", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="suites and solvers")
    r = sub.add_parser("run", help="run a suite, write CSV + JSON metadata")
    r.add_argument("--suite", choices=sorted(SUITES), default="default")
    r.add_argument("--families", nargs="+", metavar="FAMILY")
    r.add_argument("--sizes", nargs="+", type=int, metavar="SIZE",
                   help="instead of the suite's sizes, for every family: nodes for path, "
                        "trees and ladders, the side k for net, crystal and the nx grids "
                        "(k² or k³ nodes)")
    r.add_argument("--kinds", nargs="+", choices=("spd", "unsymmetric", "kkt"))
    r.add_argument("--solvers", nargs="+", metavar="SOLVER", help=f"from {sorted(SOLVERS)}")
    r.add_argument("--repeats", type=int)
    r.add_argument("--min-case-time", type=float, metavar="SECONDS",
                   help="spread each case's timed rounds over at least this long (default: "
                        "the suite's)")
    r.add_argument("--relabel", type=int, default=0, metavar="K",
                   help="also run every case on K random numberings of its nodes (the same "
                        "matrix permuted blockwise, seeded by family, size and r; CSV column "
                        "labelling: native, random-0 .. random-<K-1>); cases with pinned "
                        "orderings (suite paper) run native only")
    r.add_argument("--out", help="CSV path (default results/SUITE.csv); each finished case's "
                   "rows are appended at once")
    r.add_argument("--workers", type=int, metavar="N",
                   help="run the cases as Dask tasks on a local cluster of N single-threaded "
                        "worker processes (needs the dask extra)")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the cases as Dask tasks on an existing cluster (e.g. "
                        "tcp://host:8786)")
    r.add_argument("--resume", action="store_true",
                   help="keep the CSV and skip the cases it holds for every solver (key: "
                        "suite, family, size, kind, labelling); the others run again")
    r.add_argument("--retries", type=int, default=2, metavar="K",
                   help="with Dask: resubmit a case that raised, or whose worker died, up to K "
                        "times before recording it as failed (default %(default)s)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    bt = sub.add_parser("batch", help="batched factorization vs a loop of single ones (and, "
                        "with --workers / --scheduler, a large batch on a Dask cluster)")
    bt.add_argument("--repeats", type=int)
    bt.add_argument("--out", help="CSV path (default results/batch.csv)")
    bt.add_argument("--workers", type=int, metavar="N",
                    help="also time a large batch (graphsolve.distributed) on a local Dask "
                         "cluster of N single-threaded workers, and the cost of a Dask task")
    bt.add_argument("--scheduler", metavar="ADDRESS", help="the same on an existing cluster")
    bt.add_argument("--dask-batch", type=int, metavar="B", help="systems of the Dask batch "
                    "(default 10000)")
    bt.add_argument("--dask-size", type=int, metavar="NODES", help="ladder nodes of the Dask "
                    "batch (default 500, 3x3 blocks)")
    cs = sub.add_parser("constraints", help="Baraff primary/auxiliary vs full-KKT solvers on "
                        "chains with loop closures")
    cs.add_argument("--ns", nargs="+", type=int, default=[100, 300, 1000])
    cs.add_argument("--ks", nargs="+", type=int, default=[0, 1, 5, 10, 20, 50])
    cs.add_argument("--repeats", type=int)
    cs.add_argument("--out", help="CSV path (default results/constraints.csv)")
    dy = sub.add_parser("dynamics", help="n-link pendulums: maximal-coordinate integrator vs "
                        "Pinocchio and MuJoCo (2023 Fig. 8a)")
    dy.add_argument("--sizes", nargs="+", type=int, metavar="N")
    dy.add_argument("--steps", type=int, help="steps per run (default 1000, --quick 200)")
    dy.add_argument("--repeats", type=int)
    dy.add_argument("--quick", action="store_true", help="n = 1, 5, 20 and 200 steps")
    dy.add_argument("--out", help="CSV path (default results/pendulum.csv)")
    ct = sub.add_parser("contacts", help="box drop and sphere chain: interior-point contacts "
                        "vs MuJoCo (2023 Fig. 7d, 8b)")
    ct.add_argument("--sizes", nargs="+", type=int, metavar="N")
    ct.add_argument("--steps", type=int, help="steps per run (default 1000, --quick 100)")
    ct.add_argument("--quick", action="store_true", help="n = 1, 5, 10 and 100 steps")
    ct.add_argument("--repeats", type=int, help="best of N (default 1)")
    ct.add_argument("--out", help="CSV path (default results/contacts.csv)")
    cw = sub.add_parser("contact-sweep", help="robustness: seeded random sphere chains "
                        "sliding to rest, failures of the interior-point method")
    cw.add_argument("--cases", type=int, help="number of cases (default 160, --quick 12)")
    cw.add_argument("--sizes", nargs="+", type=int, metavar="N",
                    help="chain lengths drawn from (default 10 30 60 100, --quick 2 5 10)")
    cw.add_argument("--seed", type=int, default=0, help="seed of the case parameters")
    cw.add_argument("--duration", type=float, default=1.1, help="simulated seconds per case "
                    "(default %(default)s)")
    cw.add_argument("--quick", action="store_true", help="12 short chains")
    cw.add_argument("--resume", action="store_true", help="keep the cases already in the CSV")
    cw.add_argument("--halvings", type=int, default=None, help="Simulation.halvings: a step "
                    "that does not converge is retried in halves this many levels deep "
                    "(default: the Simulation default, 3; 0: fail at once)")
    cw.add_argument("--out", help="CSV path (default results/contact_sweep.csv)")
    ur = sub.add_parser("urdf", help="URDF corpus: step time per robot, maximal vs minimal vs "
                        "Pinocchio (ABA + semi-implicit Euler)")
    ur.add_argument("--corpus", help="directory of *.urdf files (default: the repository's "
                    "tests/dynamics/urdf_corpus)")
    ur.add_argument("--robots", nargs="+", metavar="NAME", help="file stems (default: all)")
    ur.add_argument("--number", type=int, default=100, help="steps per timed loop (default "
                    "%(default)s)")
    ur.add_argument("--repeats", type=int, default=5, help="best of N loops (default %(default)s)")
    ur.add_argument("--out", default="results/urdf.csv", help="CSV path (default %(default)s)")
    sp = sub.add_parser("step-profile", help="where a maximal-coordinate step's time goes "
                        "(residual, assembly, factor, solve, line search, Python), the Python "
                        "reference path beside the compiled step")
    sp.add_argument("--quick", action="store_true", help="pendulum(2) and sphere_chain(1), "
                    "20 steps, one repeat")
    sp.add_argument("--steps", type=int, help="steps per timed run (default 1000, --quick 20)")
    sp.add_argument("--repeats", type=int, help="best of N runs (default 3, --quick 1)")
    sp.add_argument("--out", help="CSV path (default results/step_profile.csv)")
    ct = sub.add_parser("control", help="PD-controlled simulation: the controller in the "
                        "compiled run loop vs called from Python, MuJoCo and Pinocchio PD loops")
    ct.add_argument("--quick", action="store_true", help="two cases, 100 steps, one repeat")
    ct.add_argument("--steps", type=int, help="steps per timed run (default 1000, --quick 100)")
    ct.add_argument("--repeats", type=int, help="best of N runs (default 3, --quick 1)")
    ct.add_argument("--out", help="CSV path (default results/control.csv)")
    mn = sub.add_parser("minimal", help="variational integrator in minimal coordinates: "
                        "Newton vs RIQN vs Broyden (Lee et al. 2016 Fig. 3), ABA vs Pinocchio")
    mn.add_argument("--dofs", nargs="+", type=int, metavar="DOF")
    mn.add_argument("--steps", type=int)
    mn.add_argument("--quick", action="store_true")
    mn.add_argument("--newton-jacobian", choices=("analytic", "fd"), default="analytic",
                    help="Newton's DEL Jacobian: analytic (Algorithm 4, default) or central "
                    "finite differences")
    mn.add_argument("--out", help="CSV path (default results/minimal.csv)")
    gj = sub.add_parser("general-joints", help="ABA, Method I and Method II on revolute chains, "
                        "torus chains and the windmill beside Si & Guenter Table 1")
    gj.add_argument("--revolute", nargs="+", type=int, default=[20, 50, 100], metavar="N",
                    help="revolute box chains (default %(default)s)")
    gj.add_argument("--torus", nargs="*", type=int, default=[10, 20], metavar="N",
                    help="torus chains of N tori (default %(default)s)")
    gj.add_argument("--no-windmill", action="store_true", help="skip the windmill (WM)")
    gj.add_argument("--number", type=int, default=200, help="calls per timed loop")
    gj.add_argument("--repeats", type=int, default=5, help="best of N loops")
    gj.add_argument("--out", default="results/general_joints.csv",
                    help="CSV path (default %(default)s)")
    sc = sub.add_parser("scale", help="graphsolve's default path vs CHOLMOD up to 10^6 nodes: "
                        "times, ratios and peak memory, each case in fresh subprocesses")
    from .scale_bench import BUDGET_S, SCALE_FAMILIES
    from .suite import FAMILIES

    sc.add_argument("--families", nargs="+", choices=sorted(FAMILIES), metavar="FAMILY",
                    help=f"default {' '.join(SCALE_FAMILIES)}")
    sc.add_argument("--sizes", nargs="+", type=int, metavar="SIZE",
                    help="for every family: nodes, or the side k of a k x k grid (default: "
                         "10^4 10^5 10^6 nodes, grids 100 300)")
    sc.add_argument("--quick", action="store_true", help="10^4 and 10^5 nodes only")
    sc.add_argument("--repeats", type=int, help="best of N (default 5 below 10^5 nodes, 3 "
                    "from there on)")
    sc.add_argument("--budget", type=float, default=BUDGET_S, metavar="SECONDS",
                    help="stop repeating a call once its samples took this long (default "
                         "%(default)s)")
    sc.add_argument("--out", default="results/scale.csv",
                    help="CSV, appended case by case; cases already in it are skipped")
    sc.add_argument("--fresh", action="store_true", help="start a new CSV")
    sc.add_argument("--one", nargs=2, metavar=("FAMILY", "SIZE"), help=argparse.SUPPRESS)
    sc.add_argument("--part", choices=("graphsolve", "cholmod"), default="graphsolve",
                    help=argparse.SUPPRESS)
    sc.add_argument("--npz", help=argparse.SUPPRESS)
    sc.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    sc.add_argument("--memory-fraction", type=float, help=argparse.SUPPRESS)
    st = sub.add_parser("scale-table", help="Markdown table of a scale CSV")
    st.add_argument("file")
    pl = sub.add_parser("plot", help="plots and tables from a results CSV")
    pl.add_argument("file")
    pl.add_argument("--out", help="output directory (default: next to the CSV)")
    args = p.parse_args(argv)
    return {"list": _list, "run": _run, "plot": _plot, "batch": _batch,
            "constraints": _constraints, "dynamics": _dynamics,
            "contacts": _contacts, "contact-sweep": _contact_sweep, "urdf": _urdf,
            "minimal": _minimal,
            "general-joints": _general_joints, "scale": _scale,
            "step-profile": _step_profile, "control": _control,
            "scale-table": _scale_table}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
