"""Scale benchmark: graphsolve's default path against CHOLMOD up to 10⁶ nodes, with peak memory.

For each (family, size) the parent process builds one spd system with 6×6 blocks
(:func:`scale_matrix`), writes it to a temporary ``.npz`` and runs two fresh subprocesses
(``python -m comparisons scale --one FAMILY SIZE --part graphsolve|cholmod --npz FILE --json``),
so that each solver's peak memory (the process's peak resident set size: ``VmHWM``, see
:func:`_rss`) is its own:

* graphsolve, the default path of a user holding a SciPy matrix:
  ``A = BlockMatrix.from_scipy(S, 6)``, ``an = gs.analyze(A)`` (default ordering),
  ``F = gs.factorize(A, analysis=an)`` (first factorization), ``F.refactor(A)``, ``F.solve(b)``;
* CHOLMOD (scikit-sparse, ``mode="auto"``): ``F = cholmod.analyze(S)``, the first
  ``F.cholesky_inplace(S)`` after it, later ``cholesky_inplace`` calls (refactor), ``F(b)``.

Each subprocess pins BLAS to one thread, caps its address space at 80 % of the memory available
when it starts (a case too big for the machine fails with ``MemoryError`` instead of waking the
OOM killer), runs the same calls once on a small matrix of the same family (numba compilation
and first-touch allocation, excluded), reads its baseline RSS, loads the system, and times every
call best of ``repeats`` (default 5 below 10⁵ nodes, 3 from there on; at most ``budget`` seconds
of samples per call, at least one sample). Default sizes: path, random tree and ladder 10⁴,
10⁵, 10⁶ nodes, ``nx-grid2d`` 100² and 300²; ``--quick`` 10⁴ and 10⁵ nodes and the 100² grid
(about a minute here). Reported per case (one CSV row, appended as soon as the case
finishes, so an interrupted run resumes where it stopped):

* times in seconds, refactor + solve per node in ns, ratios graphsolve / CHOLMOD of analyze,
  refactor + solve and one-shot (analyze + first factorization + solve), graphsolve's first
  factorization over its refactor, and ``auto``'s choice of ordering;
* memory in bytes: ``*_rss_imports`` (idle Python with the imports), ``*_rss_baseline`` (after
  the warm-up, just before the system is loaded), ``*_rss_peak`` (process peak at the end of
  the part) and ``*_rss_used = peak - baseline`` (the part's own memory, the loaded system
  included); for graphsolve also ``matrix_bytes`` (``A.data``), ``factor_bytes`` (the
  factorization's buffers ``_D, _Dlu, _piv, _L, _U`` and its kernel work buffers),
  ``analysis_bytes`` (the arrays of the :class:`graphsolve.Analysis`), ``scipy_bytes`` (the
  loaded CSC matrix) and ``gs_used_over_data = gs_rss_used / (matrix_bytes + factor_bytes)``.

:func:`scale_table` prints the CSV as a Markdown table, :func:`plot_scale` plots refactor + solve
time and memory against nodes. Tests run tiny sizes; no test times anything. (This module was
``comparisons.scale``, which still imports, with a ``DeprecationWarning``.)
"""

from __future__ import annotations

import csv
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .blas_threads import limit_blas_threads

__all__ = ["SCALE_FAMILIES", "SIZES", "QUICK_SIZES", "SCALE_COLUMNS", "scale_matrix",
           "run_part", "run_scale", "read_scale", "scale_table", "plot_scale", "factor_nbytes"]

SCALE_FAMILIES = ("path", "random_tree", "ladder", "nx-grid2d")
#: default sizes: nodes, or the side k of a k×k grid
SIZES = {"path": (10**4, 10**5, 10**6), "random_tree": (10**4, 10**5, 10**6),
         "ladder": (10**4, 10**5, 10**6), "nx-grid2d": (100, 300)}
QUICK_SIZES = {"path": (10**4, 10**5), "random_tree": (10**4, 10**5),
               "ladder": (10**4, 10**5), "nx-grid2d": (100,)}   # a 300² grid alone: minutes
#: Warm-up sizes: large enough for grids and crystals that their first factorization takes
#: the supernodal kernel (from 3·10⁸ flops, ``SUPERNODAL_FIRST_MIN_FLOPS``), so that a case's
#: first factorization does not include loading or compiling it. Others: 200 nodes.
WARMUP_SIZE = {"nx-grid2d": 60, "net": 60, "crystal": 10, "nx-grid3d": 10}
BLOCK = 6
BUDGET_S = 5.0                     # seconds of samples per timed call, at least one sample
MEMORY_FRACTION = 0.8              # a part may use this share of the memory available at start
ROOT = Path(__file__).resolve().parents[1]

SCALE_COLUMNS = (
    "family", "size", "nodes", "N", "nnz", "block_size", "status", "reason", "ordering",
    "repeats", "from_scipy_s", "gs_analyze_s", "gs_factor_s", "gs_refactor_s", "gs_solve_s",
    "gs_refactor_solve_s", "gs_one_shot_s", "gs_ns_per_node", "gs_first_over_refactor",
    "gs_residual", "cholmod_analyze_s", "cholmod_factor_s", "cholmod_refactor_s",
    "cholmod_solve_s", "cholmod_refactor_solve_s", "cholmod_one_shot_s", "cholmod_ns_per_node",
    "cholmod_residual", "cholmod_factor_nnz", "ratio_analyze",
    "ratio_refactor_solve", "ratio_one_shot", "matrix_bytes", "factor_bytes", "analysis_bytes",
    "scipy_bytes", "gs_rss_imports", "gs_rss_baseline", "gs_rss_peak", "gs_rss_used",
    "gs_used_over_data", "cholmod_rss_imports", "cholmod_rss_baseline", "cholmod_rss_peak",
    "cholmod_rss_used", "seconds")


# ---------------------------------------------------------------------- the system
def scale_matrix(family: str, size: int, seed: int = 0, block: int = BLOCK
                 ) -> tuple[sp.csc_matrix, np.ndarray, int]:
    """``(S, b, nodes)``: a random spd system with ``block``×``block`` blocks on the graph of
    ``family`` at ``size`` (:func:`comparisons.suite.make_graph`), built without a Python loop
    per block: Gaussian off-diagonal blocks, diagonal blocks ``R Rᵀ / block + (s_i + 1) I``
    with ``s_i`` the sum of the Frobenius norms (bounds on the spectral norms that
    :func:`graphsolve.random_block_matrix` sums) of node ``i``'s off-diagonal blocks, so the
    matrix is block diagonally dominant; a standard normal right-hand side."""
    from .suite import make_graph

    G = make_graph(family, size)
    n = G.number_of_nodes()
    e = np.array(G.edges, dtype=np.int64).reshape(-1, 2)
    del G
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((e.shape[0], block, block))
    nb = np.sqrt(np.einsum("eij,eij->e", B, B))
    s = np.bincount(e[:, 0], nb, n) + np.bincount(e[:, 1], nb, n)
    R = rng.standard_normal((n, block, block))
    D = R @ R.transpose(0, 2, 1) / block
    D[:, np.arange(block), np.arange(block)] += (s + 1.0)[:, None]
    # block rows / columns of every stored block: diagonal, (i, j) and (j, i) = (i, j)ᵀ
    bi = np.concatenate([np.arange(n), e[:, 0], e[:, 1]])
    bj = np.concatenate([np.arange(n), e[:, 1], e[:, 0]])
    order = np.argsort(bi * n + bj, kind="stable")
    blocks = np.concatenate([D, B, B.transpose(0, 2, 1)])[order]
    del B, D, R
    indptr = np.concatenate([[0], np.cumsum(np.bincount(bi, minlength=n))])
    S = sp.bsr_matrix((blocks, bj[order], indptr), shape=(n * block, n * block)).tocsc()
    S.sort_indices()
    b = rng.standard_normal(n * block)
    return S, b, n


def _save(path, S, b, nodes) -> None:
    np.savez(path, data=S.data, indices=S.indices, indptr=S.indptr, shape=np.array(S.shape),
             b=b, nodes=np.array(nodes))


def _load(path):
    with np.load(path) as z:
        S = sp.csc_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        return S, z["b"], int(z["nodes"])


# ---------------------------------------------------------------------- measurement
def _rss() -> int:
    """Peak resident set size of this process so far, in bytes: ``VmHWM`` of
    ``/proc/self/status`` where there is one, else ``getrusage(RUSAGE_SELF).ru_maxrss``.

    On Linux ``ru_maxrss`` of a spawned process starts at its parent's resident size at the
    spawn (the kernel keeps the high-water mark of the pre-``exec`` image: a parent holding
    1 GB gave every child ``ru_maxrss`` >= 1 GB), so it would charge the parent's matrix to
    each part; ``VmHWM`` belongs to the process's own address space."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)


def _best_of(fn, repeats: int, budget: float = BUDGET_S):
    """``(best seconds, result of the last call)``: ``fn()`` timed up to ``repeats`` times
    (GC off), stopping once ``budget`` seconds of samples are spent; the previous result is
    dropped before each call, so at most one result is alive at a time."""
    samples, result = [], None
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(max(1, repeats)):
            result = None
            t0 = time.perf_counter()
            result = fn()
            samples.append(time.perf_counter() - t0)
            if sum(samples) >= budget:
                break
    finally:
        if enabled:
            gc.enable()
    return min(samples), result


def _nbytes(obj) -> int:
    """Bytes of the ndarrays in ``obj`` (an array, or a tuple / list / dict of them, one level
    deep)."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (tuple, list)):
        return sum(int(x.nbytes) for x in obj if isinstance(x, np.ndarray))
    return 0


def factor_nbytes(F) -> int:
    """Bytes of a :class:`graphsolve.Factorization`'s buffers: ``_D, _Dlu, _piv, _L, _U`` and
    the kernel work buffers (``_work``: arrays, and arrays in its caches one level deep)."""
    buffers = {id(b): b for b in (getattr(F, name, None) for name in
                                  ("_D", "_Dlu", "_piv", "_L", "_U")) if b is not None}
    total = sum(_nbytes(b) for b in buffers.values())   # D is Dlu when factored in place
    work = getattr(F, "_work", None)
    if isinstance(work, (tuple, list)):
        total += sum(_nbytes(w) for w in work)
    return total


def _analysis_nbytes(an) -> int:
    import dataclasses

    return sum(_nbytes(getattr(an, f.name, None)) for f in dataclasses.fields(an))


def _residual(S, b, x) -> float:
    from .runner import _residual as residual

    return residual(S, b, x)


def _warmup_size(family: str) -> int:
    return WARMUP_SIZE.get(family, 200)


def _part_graphsolve(load, family, repeats, budget) -> dict:
    import graphsolve as gs

    Sw, bw, _ = scale_matrix(family, _warmup_size(family), seed=1)
    Aw = gs.BlockMatrix.from_scipy(Sw, BLOCK)
    Fw = gs.factorize(Aw, analysis=gs.analyze(Aw))
    Fw.refactor(Aw)
    Fw.solve(bw)
    del Sw, bw, Aw, Fw
    gc.collect()
    out = {"gs_rss_baseline": _rss()}
    S, b, _ = load()
    t_from, A = _best_of(lambda: gs.BlockMatrix.from_scipy(S, BLOCK), repeats, budget)
    t_an, an = _best_of(lambda: gs.analyze(A), repeats, budget)
    t_f, F = _best_of(lambda: gs.factorize(A, analysis=an), repeats, budget)
    F.refactor(A)                                      # untimed: warm caches, as in a loop
    t_rf, _ = _best_of(lambda: F.refactor(A), repeats, budget)
    t_s, x = _best_of(lambda: F.solve(b), repeats, budget)
    out["gs_rss_peak"] = _rss()
    out.update({
        "ordering": an.ordering, "from_scipy_s": t_from, "gs_analyze_s": t_an,
        "gs_factor_s": t_f, "gs_refactor_s": t_rf, "gs_solve_s": t_s,
        "gs_residual": _residual(S, b, x), "matrix_bytes": int(A.data.nbytes),
        "factor_bytes": factor_nbytes(F), "analysis_bytes": _analysis_nbytes(an),
        "scipy_bytes": int(S.data.nbytes + S.indices.nbytes + S.indptr.nbytes)})
    return out


def _part_cholmod(load, family, repeats, budget) -> dict:
    from sksparse import cholmod

    Sw, bw, _ = scale_matrix(family, _warmup_size(family), seed=1)
    Fw = cholmod.analyze(Sw)
    Fw.cholesky_inplace(Sw)
    Fw(bw)
    del Sw, bw, Fw
    gc.collect()
    out = {"cholmod_rss_baseline": _rss()}
    S, b, _ = load()
    t_an, t_f, F = [], [], None
    enabled = gc.isenabled()
    gc.disable()
    try:                           # analyze, then the first factorization of that analysis
        for _ in range(max(1, repeats)):
            F = None
            t0 = time.perf_counter()
            F = cholmod.analyze(S)
            t1 = time.perf_counter()
            F.cholesky_inplace(S)
            t_an.append(t1 - t0)
            t_f.append(time.perf_counter() - t1)
            if sum(t_an) + sum(t_f) >= budget:
                break
    finally:
        if enabled:
            gc.enable()
    t_rf, _ = _best_of(lambda: F.cholesky_inplace(S), repeats, budget)
    t_s, x = _best_of(lambda: F(b), repeats, budget)
    out["cholmod_rss_peak"] = _rss()
    out.update({"cholmod_analyze_s": min(t_an), "cholmod_factor_s": min(t_f),
                "cholmod_refactor_s": t_rf, "cholmod_solve_s": t_s,
                "cholmod_residual": _residual(S, b, x),
                "cholmod_factor_nnz": int(F.L().nnz)})     # L() copies: after the peak
    return out


def _limit_memory(fraction: float) -> None:
    """Cap this process's address space at its current size plus ``fraction`` of the memory
    available now (``/proc/meminfo``; nothing where that is missing), so that a case too big
    for the machine ends in a ``MemoryError`` (a failed row) rather than in the OOM killer
    picking a process on a shared machine."""
    import resource

    try:
        with open("/proc/meminfo") as fh:
            avail = next(int(ln.split()[1]) * 1024 for ln in fh
                         if ln.startswith("MemAvailable:"))
        with open("/proc/self/status") as fh:
            vsz = next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("VmSize:"))
    except (OSError, StopIteration):
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = vsz + int(fraction * avail)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def run_part(part: str, family: str, size: int, npz=None, repeats: int = 3,
             budget: float = BUDGET_S, memory_fraction: float | None = None) -> dict:
    """One part (``"graphsolve"`` or ``"cholmod"``) of one case in this process: warm-up,
    baseline RSS, load the system from ``npz`` (or, when ``npz`` is None, build it with
    :func:`scale_matrix`, whose memory then counts in the part's peak), time, peak RSS. Keys
    as in :data:`SCALE_COLUMNS` (``gs_*`` or ``cholmod_*``, plus ``*_rss_used``). With
    ``memory_fraction``, the address space is capped first (:func:`_limit_memory`)."""
    prefix = {"graphsolve": "gs", "cholmod": "cholmod"}[part]
    imports = _rss()
    if memory_fraction:
        _limit_memory(memory_fraction)
    limit = limit_blas_threads(1)                      # CHOLMOD's OpenBLAS included

    def load():
        return _load(npz) if npz is not None else scale_matrix(family, size)

    with limit:
        fn = _part_graphsolve if part == "graphsolve" else _part_cholmod
        out = {f"{prefix}_rss_imports": imports, **fn(load, family, repeats, budget)}
    out[f"{prefix}_rss_used"] = out[f"{prefix}_rss_peak"] - out[f"{prefix}_rss_baseline"]
    return out


# ---------------------------------------------------------------------- orchestration
def default_repeats(nodes: int) -> int:
    """Best of 5 below 10⁵ nodes, of 3 from there on."""
    return 5 if nodes < 10**5 else 3


def _subprocess_part(part, family, size, npz, repeats, budget) -> dict:
    """:func:`run_part` in a fresh ``python -m comparisons scale --one`` process (one BLAS /
    OpenMP thread, address space capped at :data:`MEMORY_FRACTION` of the available memory);
    its JSON line, or ``{"status": "failed", "reason": ...}``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                       os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, "-m", "comparisons", "scale", "--one", family, str(size),
           "--part", part, "--npz", str(npz), "--repeats", str(repeats), "--budget",
           str(budget), "--memory-fraction", str(MEMORY_FRACTION), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(_JSON_TAG)]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"status": "failed",
                "reason": f"{part} exit {proc.returncode}: " + " | ".join(tail)[-300:]}
    return json.loads(lines[-1][len(_JSON_TAG):])


_JSON_TAG = "SCALE-JSON "


def one_json(result: dict) -> str:
    """The line a ``--one --json`` subprocess prints for its parent."""
    return _JSON_TAG + json.dumps(result)


def _derived(row: dict) -> dict:
    """Sums, per-node times and ratios from a row's measured times (keys present only when
    both inputs are)."""
    out = {}

    def get(k):
        v = row.get(k)
        return None if v in (None, "") else float(v)

    for p in ("gs", "cholmod"):
        an, f, rf, s = (get(f"{p}_{k}_s") for k in ("analyze", "factor", "refactor", "solve"))
        if rf is not None and s is not None:
            out[f"{p}_refactor_solve_s"] = rf + s
            out[f"{p}_ns_per_node"] = (rf + s) / int(row["nodes"]) * 1e9
        if None not in (an, f, s):
            out[f"{p}_one_shot_s"] = an + f + s
    for key, k in (("ratio_analyze", "analyze_s"), ("ratio_refactor_solve", "refactor_solve_s"),
                   ("ratio_one_shot", "one_shot_s")):
        g, c = out.get(f"gs_{k}", get(f"gs_{k}")), out.get(f"cholmod_{k}", get(f"cholmod_{k}"))
        if g is not None and c:
            out[key] = g / c
    if get("gs_factor_s") is not None and get("gs_refactor_s"):
        out["gs_first_over_refactor"] = get("gs_factor_s") / get("gs_refactor_s")
    data = (get("matrix_bytes") or 0) + (get("factor_bytes") or 0)
    if get("gs_rss_used") is not None and data:
        out["gs_used_over_data"] = get("gs_rss_used") / data
    return out


def read_scale(path) -> list[dict]:
    """Rows of a scale CSV (strings, as written)."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return []
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _append(path: Path, row: dict) -> None:
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=SCALE_COLUMNS, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)


def run_scale(families=None, sizes=None, quick: bool = False, repeats: int | None = None,
              out="results/scale.csv", fresh: bool = False, progress: bool = True,
              budget: float = BUDGET_S, meta: dict | None = None) -> list[dict]:
    """Run the scale benchmark; return every row of ``out`` (earlier ones included).

    Cases are ``families`` (default :data:`SCALE_FAMILIES`) × ``sizes`` (default
    :data:`SIZES`, or :data:`QUICK_SIZES` with ``quick``; given ``sizes`` apply to every
    family, as nodes or as a grid's side). Each finished case is appended to ``out`` at once;
    a case already in ``out`` with ``status="ok"`` is not run again (``fresh`` starts a new
    file). ``meta`` is written next to the CSV (``.json``).
    """
    from tqdm import tqdm

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fresh and out.exists():
        out.unlink()
    old = read_scale(out)
    if old and tuple(old[0].keys()) != SCALE_COLUMNS:
        raise ValueError(f"{out} has other columns than this version writes; pass another "
                         "--out or --fresh")
    done = {(r["family"], int(r["size"])) for r in old if r["status"] == "ok"}
    if meta is not None:
        out.with_suffix(".json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
    table = QUICK_SIZES if quick else SIZES
    cases = [(f, s) for f in (families or SCALE_FAMILIES) for s in (sizes or table[f])]
    rows = list(old)
    bar = tqdm(cases, disable=not progress, unit="case", desc="scale")
    with tempfile.TemporaryDirectory(prefix="graphsolve-scale-") as tmp:
        for family, size in bar:
            if (family, size) in done:
                continue
            bar.set_postfix_str(f"{family} {size}: building the system")
            t0 = time.perf_counter()
            S, b, nodes = scale_matrix(family, size)
            npz = Path(tmp) / f"{family}-{size}.npz"
            _save(npz, S, b, nodes)
            row = {"family": family, "size": size, "nodes": nodes, "N": S.shape[0],
                   "nnz": int(S.nnz), "block_size": BLOCK,
                   "repeats": repeats or default_repeats(nodes)}
            del S, b
            reasons = []
            for part in ("graphsolve", "cholmod"):
                bar.set_postfix_str(f"{family} {size}: {part}")
                res = _subprocess_part(part, family, size, npz, row["repeats"], budget)
                if res.get("status") == "failed":
                    reasons.append(res["reason"])
                else:
                    row.update(res)
            npz.unlink()
            row.update(_derived(row))
            row.update(status="failed" if reasons else "ok", reason="; ".join(reasons),
                       seconds=round(time.perf_counter() - t0, 1))
            _append(out, row)
            rows = [r for r in rows if (r["family"], int(r["size"])) != (family, size)]
            rows.append(row)
    return rows


# ---------------------------------------------------------------------- table
def _f(v, fmt: str, scale: float = 1.0) -> str:
    if v in (None, ""):
        return ""
    return format(float(v) * scale, fmt)


def scale_table(rows: list[dict]) -> str:
    """Markdown: one line per case (ok rows; a failed case shows its reason). Memory in MB
    (10⁶ bytes): ``used`` = process peak - baseline (baseline = Python with the imports after a
    small warm-up, in its own column), ``data`` = matrix + factor buffers."""
    lines = ["| graph | nodes | auto chose | from_scipy [s] | analyze gs / CHOLMOD | "
             "refactor + solve [ms] | ns / node | refactor + solve gs / CHOLMOD | one-shot "
             "gs / CHOLMOD | first factorize / refactor | gs used [MB] | data [MB] | used / "
             "data | CHOLMOD used [MB] | baseline gs / CHOLMOD [MB] |",
             "|" + "---|" * 15]
    for r in rows:
        name = f"{r['family']} {r['size']}"
        if r.get("status") != "ok":
            lines.append(f"| {name} | {r.get('nodes', '')} | failed: "
                         f"{(r.get('reason') or '')[:80]} |" + " |" * 12)
            continue
        data = float(r["matrix_bytes"] or 0) + float(r["factor_bytes"] or 0)
        cells = [name, r["nodes"], r.get("ordering", ""), _f(r["from_scipy_s"], ".2f"),
                 _f(r["ratio_analyze"], ".2f") + "×", _f(r["gs_refactor_solve_s"], ".2f", 1e3),
                 _f(r["gs_ns_per_node"], ".0f"), _f(r["ratio_refactor_solve"], ".2f") + "×",
                 _f(r["ratio_one_shot"], ".2f") + "×", _f(r["gs_first_over_refactor"], ".1f"),
                 _f(r["gs_rss_used"], ".0f", 1e-6), f"{data / 1e6:.0f}",
                 _f(r["gs_used_over_data"], ".1f"), _f(r["cholmod_rss_used"], ".0f", 1e-6),
                 f"{_f(r['gs_rss_baseline'], '.0f', 1e-6)} / "
                 f"{_f(r['cholmod_rss_baseline'], '.0f', 1e-6)}"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------- plot
def plot_scale(rows: list[dict], path) -> None:
    """Log-log refactor + solve time (left) and memory used (right) against nodes, graphsolve
    solid and CHOLMOD dashed, one colour per family (``ok`` rows)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r.get("status") == "ok"]
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(10, 4.2))
    for i, family in enumerate(dict.fromkeys(r["family"] for r in ok)):
        mine = sorted((r for r in ok if r["family"] == family), key=lambda r: int(r["nodes"]))
        n = [int(r["nodes"]) for r in mine]
        for p, style, label in (("gs", "-", "graphsolve"), ("cholmod", "--", "CHOLMOD")):
            t = [float(r[f"{p}_refactor_solve_s"] or "nan") for r in mine]
            m = [float(r[f"{p}_rss_used"] or "nan") / 1e6 for r in mine]
            ax_t.loglog(n, t, style, marker="o", ms=3, color=f"C{i}",
                        label=f"{family} {label}")
            ax_m.loglog(n, m, style, marker="o", ms=3, color=f"C{i}")
    ax_t.set_ylabel("refactor + solve (s)")
    ax_m.set_ylabel("peak RSS - baseline (MB)")
    for ax in (ax_t, ax_m):
        ax.set_xlabel("nodes (6×6 spd blocks)")
        ax.grid(True, which="both", alpha=0.3)
    ax_t.legend(fontsize=7)
    fig.suptitle("graphsolve's default path vs CHOLMOD at scale")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
