#!/usr/bin/env python3
"""Held-out check of kiln's runtime selection: on fp8 shapes it was never tuned on, is its pick (close to) the best
of its own candidates?

Problem: e4m3 x e4m3 -> bf16, TN (weight [N, K]), per-tensor scales: kiln.scaled_mm as bench_gemm.py's fp8 case
calls it. For each shape of --shapes-file ("M N K  # source" per line):
  candidates = kiln.query(kiln.scaled_mm, ..., k=<all>); rank 0 is kiln's pick (what kiln.scaled_mm runs unforced).
  Each candidate is forced with algo=, checked once against torch._scaled_mm (relative L2 <= 1e-2; the output is
  poisoned with NaN first, so a kernel that skips tiles fails) and timed; torch._scaled_mm (cuBLASLt) is timed too.
  best = fastest passing candidate; pick/best = pick ms / best ms; cuBLAS/pick = cuBLASLt ms / pick ms (> 1: kiln
  faster). Timing is bench_gemm.time_fn (CUDA events, GPU-sleep queue-ahead, median, L2-rotated input sets).

Summary (JSON "summary"; the Markdown's Summary and the printed lines say the same):
  shapes                     number of shapes run (rows, errored ones included)
  hits                       shapes whose pick passes its check and is within 10% of best (pick ms <= 1.10 x best ms)
  frac_pick_within_10pct     hits / shapes: an errored shape, or one whose pick fails its check, counts as a miss
  mean_pick_over_best        mean of pick ms / best ms over the shapes whose pick passes (>= 1; 1 = always the best)
  max_pick_over_best         the largest of those
  geomean_cublas_over_pick   geometric mean of cuBLASLt ms / pick ms over the shapes with both times: > 1 means kiln's
                             pick is faster than cuBLASLt, < 1 slower (the sign convention of bench_gemm's ratio)
  errors, k1_disagrees, failed_candidates, misses (one entry per shape that is not a hit, with why)
  pass_hit_bar, pass_mean_bar   the bars: frac_pick_within_10pct >= 0.90, mean_pick_over_best <= 1.05
Writes PREFIX.json (every candidate's time), PREFIX.md and, where matplotlib imports, PREFIX.png.
Exit status: 0 when both bars pass and no shape errored, 1 otherwise, 2 without torch/CUDA.

The shapes are held out: none may be a size the fp8 tuning measures (tuning/sm90_fp8.yaml) or one the shipped logic
(solutions/sm90/wgmma_fp8.yaml) was measured on; a run warns about any that is, the self-check fails on it (both read
the YAML with PyYAML). On the H100 the whole list takes ~5 minutes with --iters 20 --warmup 3 --budget-s 0.2 (the
self-check prints its estimate); the defaults time longer.

    python3 bench/heldout.py                      # -> bench/results/heldout_<device>_<commit>.{json,md,png}
    python3 bench/heldout.py --max-candidates 6 --iters 20 --out /tmp/heldout
    python3 bench/heldout.py --self-check         # shapes file, summary, table and plot on fake data; no GPU
    python3 bench/heldout.py --part 1/2 --out /tmp/h1 ... --part 2/2 --out /tmp/h2   # over two runs (or machines),
    python3 bench/heldout.py --merge /tmp/h1.json /tmp/h2.json                      # then one report of both
  --time-limit-s S starts no shape after S seconds: the report then says complete: false and which shapes ran.
"""
from __future__ import annotations

import argparse
import json
import math
import pathlib
import re
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import bench_gemm as bg  # noqa: E402  (puts runtime/python on sys.path, imports kiln; torch optional)

kiln = bg.kiln
DEFAULT_SHAPES = HERE / "heldout_shapes.txt"
TOL_REL_L2 = 1e-2
MISS_FACTOR = 1.10     # pick counts as a hit when pick_ms <= MISS_FACTOR * best_ms
BAR_HIT_FRACTION = 0.90
BAR_MEAN_RATIO = 1.05
QUERY_ALL = 256        # k for kiln.query: more than any problem has candidates
# what these shapes are held out from: the sizes the fp8 tuning measures, and those the shipped logic holds
TUNING_FILE = bg.REPO / "tuning" / "sm90_fp8.yaml"
LOGIC_FILE = bg.REPO / "solutions" / "sm90" / "wgmma_fp8.yaml"
# run-time estimate of the whole list (self-check), fitted to the H100 run at 7b8173e with --iters 20 --warmup 3
# --budget-s 0.2 (47 shapes, 19.1 TFLOP, ~36 candidates each: 113.5 s): per shape, and per TFLOP of one GEMM
EST_S_PER_SHAPE = 1.0
EST_S_PER_TFLOP = 3.5
MAX_EST_S = 480.0      # the list must stay one run of under 8 minutes
# name tokens that hold the usual value: left out of short names (docs/naming.md)
USUAL_TOKENS = {"PLR0", "SU0", "SUS0", "SUM0", "LPA0", "LPB0", "LXS1", "GSU1", "WGM8", "VWA16", "VWB16", "LDSB0",
                "TLDS1", "LBSPP0", "WSGR0", "OCC0", "SAB0"}


# ---- pure helpers ----

def read_shapes(path) -> list:
    """[(m, n, k, source)] from lines "M N K  # source"; blank and '#' lines are skipped."""
    shapes = []
    for no, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        body, _, comment = line.partition("#")
        if not body.strip():
            continue
        fields = body.split()
        if len(fields) != 3 or not all(f.isdigit() for f in fields):
            raise SystemExit(f"{path}:{no}: want 'M N K  # source', got {line!r}")
        m, n, k = map(int, fields)
        if n % 16 or k % 16:
            raise SystemExit(f"{path}:{no}: N and K must be multiples of 16 (fp8 TMA rows), got {m} {n} {k}")
        shapes.append((m, n, k, comment.strip()))
    return shapes


_GRIDS = {}


def tuning_grid(tuning_file=TUNING_FILE, logic_file=LOGIC_FILE) -> frozenset:
    """{(m, n, k)}: every size of tuning_file's `sizes` (read as `kiln-gen tune` reads them: exact sizes and the
    product of m x (n, k)) and every size logic_file's selection holds (exact entries, timings). Needs PyYAML and
    generator/ (ImportError without PyYAML)."""
    key = (str(tuning_file), str(logic_file))
    if key not in _GRIDS:
        import yaml
        if str(bg.REPO / "generator") not in sys.path:
            sys.path.insert(0, str(bg.REPO / "generator"))
        from kilngen import tune
        sizes = set(tune.load(pathlib.Path(tuning_file), bg.REPO).sizes)
        if logic_file and pathlib.Path(logic_file).is_file():
            sel = (yaml.safe_load(pathlib.Path(logic_file).read_text()) or {}).get("selection") or {}
            for entry in (sel.get("exact") or []) + (sel.get("timings") or []):
                sizes.add(tuple(int(v) for v in entry["size"]))
        _GRIDS[key] = frozenset(sizes)
    return _GRIDS[key]


def in_tuning_grid(m: int, n: int, k: int, grid=None) -> bool:
    return (m, n, k) in (tuning_grid() if grid is None else grid)


def estimate_run_s(shapes) -> float:
    """Seconds a run of these shapes takes on the H100 with --iters 20 --warmup 3 --budget-s 0.2 (EST_S_*)."""
    return sum(EST_S_PER_SHAPE + EST_S_PER_TFLOP * 2.0 * m * n * k / 1e12 for m, n, k, *_src in shapes)


def short_name(name: str) -> str:
    """Cijk_Alik_Bljk_F8F8B_MT128x128x128_WG1x1_..._PK2_WGMMA_SM90 -> MT128x128x128_WG1x1_MI64x128x32_PGR5_PK2_WGMMA"""
    tokens = name.split("_")
    if len(tokens) > 6 and tokens[0].startswith("Cijk"):
        tokens = tokens[4:-1]  # index order, types; arch
    return "_".join(t for t in tokens if t not in USUAL_TOKENS)


def score_row(row: dict) -> dict:
    """Fill pick/best fields of a row whose candidates carry ms (or None) and ok; cublas_ms may be None."""
    cands = row.get("candidates", [])
    passing = [c for c in cands if c.get("ok") and c.get("ms") is not None]
    best = min(passing, key=lambda c: c["ms"]) if passing else None
    pick = cands[0] if cands else None
    pick_ms = pick.get("ms") if pick else None
    row.update(pick=pick["name"] if pick else None, pick_ok=bool(pick and pick.get("ok")), pick_ms=pick_ms,
               best=best["name"] if best else None, best_rank=best["rank"] if best else None,
               best_ms=best["ms"] if best else None)
    row["ratio_pick_best"] = pick_ms / best["ms"] if best and pick_ms else None
    row["ratio_vs_cublas"] = row["cublas_ms"] / pick_ms if row.get("cublas_ms") and pick_ms else None
    row["hit"] = bool("error" not in row and row["pick_ok"] and row["ratio_pick_best"] is not None
                      and row["ratio_pick_best"] <= MISS_FACTOR)
    return row


def summarize(rows) -> dict:
    """Bars over all rows: errored rows and rows whose pick fails its check count as misses."""
    ratios = [r["ratio_pick_best"] for r in rows if r.get("pick_ok") and r.get("ratio_pick_best")]
    hits = sum(1 for r in rows if r.get("hit"))
    frac = hits / len(rows) if rows else None
    mean = sum(ratios) / len(ratios) if ratios else None
    misses = [{"shape": shape_str(r), "pick": r.get("pick"), "pick_ms": r.get("pick_ms"), "best": r.get("best"),
               "best_ms": r.get("best_ms"), "ratio_pick_best": r.get("ratio_pick_best"),
               "why": r.get("error") or ("pick failed its check" if not r.get("pick_ok") else "slower")}
              for r in rows if not r.get("hit")]
    return {"shapes": len(rows), "hits": hits, "frac_pick_within_10pct": frac, "mean_pick_over_best": mean,
            "max_pick_over_best": max(ratios) if ratios else None,
            "geomean_cublas_over_pick": bg.geomean(r["ratio_vs_cublas"] for r in rows if r.get("ratio_vs_cublas")),
            "errors": sum(1 for r in rows if "error" in r),
            "k1_disagrees": sum(1 for r in rows if r.get("k1_agrees") is False),  # query(k=1) top != rank 0
            "failed_candidates": sum(1 for r in rows for c in r.get("candidates", []) if not c.get("ok")),
            "pass_hit_bar": frac is not None and frac >= BAR_HIT_FRACTION,
            "pass_mean_bar": mean is not None and mean <= BAR_MEAN_RATIO, "misses": misses}


def shape_str(r: dict) -> str:
    return f"{r['m']}x{r['n']}x{r['k']}"


def _num(v, fmt="{:.3f}") -> str:
    return "-" if v is None else fmt.format(v)


def summary_lines(s: dict) -> list:
    verdict = {True: "PASS", False: "MISS"}
    lines = [f"pick within {MISS_FACTOR:.2f}x of best: {s['hits']}/{s['shapes']} = "
             f"{_num(s['frac_pick_within_10pct'], '{:.1%}')} (bar >= {BAR_HIT_FRACTION:.0%}): "
             f"{verdict[s['pass_hit_bar']]}",
             f"mean pick/best: {_num(s['mean_pick_over_best'])} (bar <= {BAR_MEAN_RATIO:.2f}): "
             f"{verdict[s['pass_mean_bar']]}; max {_num(s['max_pick_over_best'])}",
             f"geomean cuBLASLt ms / pick ms: {_num(s['geomean_cublas_over_pick'])} (> 1: kiln faster)",
             f"shapes with errors: {s['errors']}; candidates failing the check or erroring: {s['failed_candidates']}"]
    for miss in s["misses"]:
        lines.append(f"miss {miss['shape']}: pick {short_name(miss['pick'] or '-')} "
                     f"{_num(miss['pick_ms'], '{:.4f}')} ms, best {short_name(miss['best'] or '-')} "
                     f"{_num(miss['best_ms'], '{:.4f}')} ms, pick/best {_num(miss['ratio_pick_best'], '{:.2f}')} "
                     f"({miss['why'][:160]})")
    return lines


COLUMNS = ("shape", "source", "cands ok", "pick", "pick ms", "best (if not pick)", "best ms", "pick/best",
           "cuBLASLt ms", "cuBLAS/pick")


def table_cells(r: dict) -> list:
    cands = r.get("candidates", [])
    if "error" in r and not cands:
        return [shape_str(r), r.get("source", ""), "-", "ERROR: " + r["error"][:120]] + ["-"] * 6
    best = "=" if r.get("best") == r.get("pick") else short_name(r.get("best") or "-")
    ratio = _num(r.get("ratio_pick_best"), "{:.3f}") + ("" if r.get("hit") else " **miss**")
    pick = short_name(r.get("pick") or "-") + ("" if r.get("pick_ok") else " (FAILED check)")
    return [shape_str(r), r.get("source", ""), f"{sum(1 for c in cands if c.get('ok'))}/{len(cands)}", pick,
            _num(r.get("pick_ms"), "{:.4f}"), best, _num(r.get("best_ms"), "{:.4f}"), ratio,
            _num(r.get("cublas_ms"), "{:.4f}"), _num(r.get("ratio_vs_cublas"), "{:.2f}")]


def markdown(meta, rows, summary) -> str:
    clean = lambda s: str(s).replace("|", "/").replace("\n", " ")  # noqa: E731
    lines = [f"# kiln held-out selection check (fp8 e4m3 -> bf16, TN, per-tensor scales): {meta['device']}", "",
             f"commit `{meta['commit']}`, torch {meta['torch']}, CUDA {meta['cuda']}, kiln arch {meta['kiln_arch']}, "
             f"median of up to {meta['iters']} runs (at most {meta['budget_s']} s per kernel) after {meta['warmup']} "
             f"warm-up, shapes from `{meta['shapes_file']}`, {meta['time_utc']}", "", "## Summary", ""]
    lines += [f"- {clean(line)}" for line in summary_lines(summary)]
    lines += ["", "pick = kiln.query rank 0 (kiln's runtime selection); best = fastest candidate passing the check "
              f"(rel. L2 <= {TOL_REL_L2:g} vs torch._scaled_mm).", "",
              "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(clean(c) for c in table_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def plot(rows, meta, png_path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = list(range(len(rows)))
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(max(9.0, 0.28 * len(rows) + 2.5), 8.0))
    pick_best = [r.get("ratio_pick_best") for r in rows]
    failed = ["error" in r or r.get("ratio_pick_best") is None or not r.get("pick_ok") for r in rows]
    ax1.bar(xs, [0.0 if f else v for f, v in zip(failed, pick_best)],
            color=["tab:green" if r.get("hit") else "tab:red" for r in rows])
    ax1.axhline(1.0, color="0.5", linewidth=0.8)
    ax1.axhline(MISS_FACTOR, color="black", linestyle="--", linewidth=1.0, label=f"{MISS_FACTOR:.2f}")
    top = max([MISS_FACTOR] + [v for v in pick_best if v]) * 1.08
    for x, f in zip(xs, failed):
        if f:  # errored, or the pick failed its check
            ax1.text(x, 1.0, "x", ha="center", va="bottom", color="red", fontweight="bold")
    ax1.set_ylim(0.9 if top < 1.6 else 0.0, top)
    ax1.set_ylabel("pick ms / best ms  (red: > 1.10)")
    ax1.legend(loc="upper right", fontsize=8)
    cub = [r.get("ratio_vs_cublas") for r in rows]
    ax2.bar(xs, [v or 0.0 for v in cub], color="tab:blue")
    ax2.axhline(1.0, color="black", linestyle="--", linewidth=1.0)
    ax2.set_ylabel("cuBLASLt ms / pick ms  (> 1: kiln faster)")
    ax2.set_xticks(xs)
    ax2.set_xticklabels([shape_str(r) for r in rows], rotation=90, fontsize=7)
    ax1.set_title(f"kiln held-out fp8 selection, {meta.get('device', '?')}, commit {str(meta.get('commit', '?'))[:10]}",
                  fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path, dpi=130)
    plt.close(fig)


def write_outputs(prefix: pathlib.Path, meta, rows) -> dict:
    summary = summarize(rows)
    bg.write_report(prefix, {"meta": meta, "rows": rows, "summary": summary}, markdown(meta, rows, summary),
                    lambda png: plot(rows, meta, png), summary_lines(summary))
    return summary


# ---- the GPU part ----

def run_shape(m, n, k, source, args) -> dict:
    torch = bg.torch
    row = {"m": m, "n": n, "k": k, "source": source, "flops": 2.0 * m * n * k, "candidates": []}
    try:
        case = bg.fp8_case(bg.Spec("fp8", m, n, k), rowwise=False)  # its make() and theirs() (torch._scaled_mm)
        sets = [case.make() for _ in range(bg.n_sets_for(case.set_bytes))]
        row["input_sets"] = len(sets)
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        s0 = sets[0]
        query = lambda kk: kiln.query(kiln.scaled_mm, s0["a"], s0["b"], s0["sa"], s0["sb"], out=out, k=kk)  # noqa: E731
        infos = query(args.max_candidates or QUERY_ALL)
        row["k1_agrees"] = bool(infos) and query(1)[0].name == infos[0].name
        ref = case.theirs(s0)
        for rank, info in enumerate(infos):
            c = {"rank": rank, "name": info.name, "gsu": info.gsu, "workspace_bytes": info.workspace_bytes,
                 "ok": False, "ms": None}
            row["candidates"].append(c)
            fn = lambda s, info=info: kiln.scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out=out, algo=info)  # noqa: E731
            try:
                out.fill_(float("nan"))
                fn(s0)
                c["rel_l2"] = bg.rel_l2(out, ref)
                c["ok"] = c["rel_l2"] <= TOL_REL_L2  # NaN fails
                t = bg.time_fn(fn, sets, args.warmup, args.iters, args.budget_s)
                c.update(ms=t["median_ms"], min_ms=t["min_ms"], runs=t["runs"])
            except Exception as exc:  # noqa: BLE001 - a broken candidate must not hide the others
                c["error"] = f"{type(exc).__name__}: {exc}"[:500]
            if not args.quiet:
                print(f"    {rank:2d} {short_name(info.name):52s} {_num(c['ms'], '{:.4f}'):>9s} ms  "
                      f"rel_l2 {_num(c.get('rel_l2'), '{:.1e}')}{'' if c['ok'] else '  FAILED'}", flush=True)
        del ref
        t = bg.time_fn(case.theirs, sets, args.warmup, args.iters, args.budget_s)
        row.update(cublas_ms=t["median_ms"], cublas_runs=t["runs"])
        if not infos:
            row["error"] = "kiln.query returned no candidates"
    except Exception as exc:  # noqa: BLE001 - one broken shape must not hide the others
        row["error"] = f"{type(exc).__name__}: {exc}"[:500]
    row.setdefault("cublas_ms", None)
    score_row(row)
    if not row["hit"] and row["candidates"]:
        try:  # how the pick was made, for the misses
            row["explain"] = kiln.explain(kiln.scaled_mm, s0["a"], s0["b"], s0["sa"], s0["sb"], out=out)
        except Exception as exc:  # noqa: BLE001
            row["explain"] = f"{type(exc).__name__}: {exc}"
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes-file", default=str(DEFAULT_SHAPES), help="'M N K  # source' per line")
    ap.add_argument("--iters", type=int, default=50, help="timed runs per kernel (at most; see --budget-s)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=0.5,
                    help="at most this many seconds of timed runs per kernel (down to %d runs)" % bg.MIN_ITERS)
    ap.add_argument("--max-candidates", type=int, default=0, help="time only the top N of kiln.query (0: all)")
    ap.add_argument("--out", default=None, help="output prefix (default bench/results/heldout_<device>_<commit>)")
    ap.add_argument("--quiet", action="store_true", help="one line per shape, not per candidate")
    ap.add_argument("--self-check", action="store_true", help="check the pure-Python parts on fake data; no GPU")
    ap.add_argument("--part", default=None, help="i/n: run shapes i-1, i-1+n, ... of the list (1 <= i <= n)")
    ap.add_argument("--time-limit-s", type=float, default=0.0, help="start no shape after this many seconds (0: none)")
    ap.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                    help="write one report from the rows of these heldout JSON files (parts of one list); no GPU")
    args = ap.parse_args(argv)
    if args.self_check:
        return self_check(pathlib.Path(args.shapes_file))
    if args.merge:
        return merge(args.merge, args.out, read_shapes(args.shapes_file))
    if args.iters < 1 or args.max_candidates < 0:
        ap.error("--iters must be >= 1 and --max-candidates >= 0")
    all_shapes = read_shapes(args.shapes_file)
    try:
        shapes = select_part(all_shapes, args.part)
    except ValueError as exc:
        ap.error(str(exc))
    try:
        grid = tuning_grid()
    except ImportError as exc:
        print(f"warning: shapes not checked against the tuning grid ({exc})", file=sys.stderr)
        grid = frozenset()
    for m, n, k, _src in shapes:
        if in_tuning_grid(m, n, k, grid):
            print(f"warning: {m}x{n}x{k} is in the tuning grid, not held out", file=sys.stderr)
    torch = bg.torch
    if torch is None or not torch.cuda.is_available():
        print("heldout: needs torch and a CUDA device", file=sys.stderr)
        return 2

    device, commit = torch.cuda.get_device_name(), bg.git_commit()
    kiln.load_library()
    meta = {"device": device, "commit": commit, "torch": torch.__version__, "cuda": torch.version.cuda,
            "kiln_library": kiln.library_path(), "kiln_arch": kiln.device_arch(), "iters": args.iters,
            "warmup": args.warmup, "budget_s": args.budget_s, "max_candidates": args.max_candidates,
            "shapes_file": args.shapes_file, "tol_rel_l2": TOL_REL_L2, "part": args.part,
            "shapes_listed": len(all_shapes), "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    rows, t0 = [], time.monotonic()
    for i, (m, n, k, src) in enumerate(shapes):
        if args.time_limit_s and time.monotonic() - t0 > args.time_limit_s:
            print(f"time limit: {len(shapes) - i} shapes not run", flush=True)
            break
        if not args.quiet:
            print(f"[{i + 1}/{len(shapes)}] {m}x{n}x{k}  {src}", flush=True)
        row = run_shape(m, n, k, src, args)
        rows.append(row)
        print(f"  {m}x{n}x{k}: " + "  ".join(f"{t}={c}" for t, c in zip(COLUMNS[2:], table_cells(row)[2:])),
              flush=True)
        torch.cuda.empty_cache()
    meta["wall_s"] = round(time.monotonic() - t0, 1)
    meta["complete"] = args.part is None and len(rows) == len(all_shapes)
    name = report_name(device, commit)
    summary = write_outputs(pathlib.Path(args.out) if args.out else HERE / "results" / name, meta, rows)
    return 0 if summary["pass_hit_bar"] and summary["pass_mean_bar"] and not summary["errors"] else 1


def report_name(device: str, commit: str) -> str:
    """heldout_<device>_<commit>: the default report prefix under bench/results."""
    return "heldout_" + re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-").lower() + "_" + commit[:10]


def select_part(shapes: list, part) -> list:
    """Shapes i-1, i-1+n, ... for part "i/n" (None: all)."""
    if part is None:
        return shapes
    try:
        i, n = (int(x) for x in part.split("/"))
    except ValueError:
        raise ValueError(f"--part takes i/n, got {part!r}") from None
    if not 1 <= i <= n:
        raise ValueError(f"--part {part}: want 1 <= i <= n")
    return shapes[i - 1::n]


def merge_rows(runs: list, shapes: list) -> tuple:
    """(meta, rows) of one report from several runs' (meta, rows): rows in the order of the shapes list, each shape
    once (the first run that has it); meta from the first run, with every run's commit, device and part."""
    order = {(m, n, k): i for i, (m, n, k, _s) in enumerate(shapes)}
    seen, rows = set(), []
    for _meta, rs in runs:
        for r in rs:
            key = (r["m"], r["n"], r["k"])
            if key not in seen:
                seen.add(key)
                rows.append(r)
    rows.sort(key=lambda r: order.get((r["m"], r["n"], r["k"]), len(order)))
    meta = dict(runs[0][0])
    meta["merged"] = [{"commit": m.get("commit"), "device": m.get("device"), "part": m.get("part"),
                       "rows": len(rs)} for m, rs in runs]
    meta["wall_s"] = round(sum(m.get("wall_s", 0.0) for m, _rs in runs), 1)
    meta["complete"] = all((m, n, k) in seen for m, n, k, _s in shapes)
    return meta, rows


def merge(files: list, out, shapes: list) -> int:
    runs = []
    for f in files:
        d = json.loads(pathlib.Path(f).read_text())
        runs.append((d["meta"], d["rows"]))
    meta, rows = merge_rows(runs, shapes)
    commits = {m.get("commit") for m, _rs in runs}
    if len(commits) > 1:
        print(f"warning: the parts come from different commits {sorted(map(str, commits))}", file=sys.stderr)
    name = report_name(str(meta.get("device")), str(meta.get("commit")))
    summary = write_outputs(pathlib.Path(out) if out else HERE / "results" / name, meta, rows)
    print(f"merged {len(files)} runs: {len(rows)} of {len(shapes)} shapes" +
          ("" if meta["complete"] else " (incomplete)"))
    return 0 if summary["pass_hit_bar"] and summary["pass_mean_bar"] and not summary["errors"] else 1


def self_check(shapes_file: pathlib.Path) -> int:
    """The shapes file (count, alignment, held out, large N and K, run time), scoring, summary, table, JSON and plot on
    fake rows."""
    shapes = read_shapes(shapes_file)
    flops = [2.0 * m * n * k for m, n, k, _s in shapes]
    assert len(shapes) >= 60 and all(src for *_mnk, src in shapes), "want >= 60 shapes, each with a source"
    inside = [f"{m}x{n}x{k}" for m, n, k, _s in shapes if in_tuning_grid(m, n, k)]
    assert not inside, f"in the tuning grid (tuning/sm90_fp8.yaml or the shipped logic), not held out: {inside}"
    assert len({s[:3] for s in shapes}) == len(shapes), "duplicate shapes"
    large = [s for s in shapes if s[1] >= 28672 or s[2] >= 16384]
    assert len(large) >= 15 and max(s[1] for s in shapes) >= 57344 and max(s[2] for s in shapes) >= 28672, \
        "want >= 15 shapes with N >= 28672 or K >= 16384, reaching N = 57344 and K = 28672"
    assert min(s[0] for s in shapes) == 1 and max(s[0] for s in shapes) >= 12000, "want M from 1 to >= 12000"
    assert sum(s[0] & (s[0] - 1) != 0 for s in shapes) >= len(shapes) // 2, "want mostly off-power-of-two M"
    est = estimate_run_s(shapes)
    assert est <= MAX_EST_S, f"the list would take ~{est:.0f} s on the H100, over {MAX_EST_S:.0f} s"
    print(f"{shapes_file}: {len(shapes)} shapes, {sum(flops):.3g} FLOP in all, {len(large)} with N >= 28672 or "
          f"K >= 16384, {sum(f > 2e12 for f in flops)} above 2e12 FLOP; ~{est:.0f} s on the H100 "
          f"(--iters 20 --warmup 3 --budget-s 0.2); held out from {len(tuning_grid())} tuned sizes")
    assert in_tuning_grid(4096, 7168, 2048) and not in_tuning_grid(4096, 7168, 2064)
    assert in_tuning_grid(1, 57344, 8192) and in_tuning_grid(16384, 53248, 16384)  # the grid reaches large N and K
    full = "Cijk_Alik_Bljk_F8F8B_MT128x128x128_WG1x1_MI64x128x32_PGR5_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU4_WGM8_" \
           "VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK2_WGMMA_SM90"
    assert short_name(full) == "MT128x128x128_WG1x1_MI64x128x32_PGR5_GSU4_PK2_WGMMA", short_name(full)
    assert short_name("other") == "other"
    with tempfile.TemporaryDirectory() as tmp:
        bad = pathlib.Path(tmp) / "bad.txt"
        bad.write_text("64 4104 4096  # N not a multiple of 16\n")
        try:
            read_shapes(bad)
            raise AssertionError("misaligned N accepted")
        except SystemExit:
            pass

    # fake rows: 4 candidates; the pick is best except on shape 1 (pick 1.6x best) and shape 2 (pick 1.08x best);
    # shape 3's fastest candidate fails its check; shape 4 errors; shape 5's pick fails its check.
    names = [full.replace("MT128x128x128", f"MT{64 * (j + 1)}x128x128") for j in range(4)]
    rows = []
    for i, (m, n, k, src) in enumerate(shapes[:10]):
        row = {"m": m, "n": n, "k": k, "source": src, "flops": 2.0 * m * n * k, "candidates": []}
        base = 0.01 + 1e-3 * i
        times = [base, base * 1.2, base * 1.5, base * 2.0]
        if i == 1:
            times = [base * 1.6, base, base * 1.5, base * 2.0]
        if i == 2:
            times = [base * 1.08, base, base * 1.5, base * 2.0]
        for j, (name, ms) in enumerate(zip(names, times)):
            ok = not (i == 3 and j == 3) and not (i == 5 and j == 0)
            row["candidates"].append({"rank": j, "name": name, "ok": ok, "ms": base * 0.5 if (i == 3 and j == 3)
                                      else ms, "rel_l2": 1e-3 if ok else 0.5})
        row["cublas_ms"] = base * 1.1
        if i == 4:
            row = {"m": m, "n": n, "k": k, "source": src, "flops": 0.0, "candidates": [], "cublas_ms": None,
                   "error": "KilnError: fake | failure"}
        rows.append(score_row(row))
    assert [r["hit"] for r in rows] == [True, False, True, True, False, False, True, True, True, True]
    assert rows[3]["best_rank"] == 0 and rows[1]["best_rank"] == 1 and math.isclose(rows[1]["ratio_pick_best"], 1.6)
    assert rows[5]["best_rank"] == 1 and not rows[5]["pick_ok"]
    meta = {"device": "Fake GPU", "commit": "0" * 40, "torch": "-", "cuda": "-", "kiln_arch": "-", "iters": 50,
            "warmup": 10, "budget_s": 0.5, "shapes_file": str(shapes_file), "time_utc": "-"}
    with tempfile.TemporaryDirectory() as tmp:
        summary = write_outputs(pathlib.Path(tmp) / "sub" / "fake", meta, rows)
        data = json.loads((pathlib.Path(tmp) / "sub" / "fake.json").read_text())
        assert data["summary"] == summary and len(data["rows"]) == len(rows)
        md = (pathlib.Path(tmp) / "sub" / "fake.md").read_text()
        assert md.count("\n| ") == len(rows) + 1 and "ERROR: KilnError: fake / failure" in md
        assert md.count("**miss**") == 2 and "(FAILED check)" in md and ": MISS" in md
    assert summary["shapes"] == 10 and summary["hits"] == 7 and math.isclose(summary["frac_pick_within_10pct"], 0.7)
    assert data["summary"]["shapes"] == 10 and math.isclose(data["summary"]["frac_pick_within_10pct"], 0.7)
    # mean over the 8 rows whose pick passes: six at 1.0, 1.6, 1.08
    assert math.isclose(summary["mean_pick_over_best"], (6 + 1.6 + 1.08) / 8)
    assert math.isclose(summary["geomean_cublas_over_pick"], bg.geomean(r["ratio_vs_cublas"] for r in rows
                                                                        if r["ratio_vs_cublas"]))
    # the sign: cuBLASLt ms / pick ms, > 1 when kiln's pick is faster (shape 0: pick = base ms, cuBLASLt 1.1 x base)
    assert math.isclose(rows[0]["ratio_vs_cublas"], 1.1) and math.isclose(rows[1]["ratio_vs_cublas"], 1.1 / 1.6)
    for key in ("shapes", "frac_pick_within_10pct", "mean_pick_over_best", "geomean_cublas_over_pick"):
        assert key in data["summary"], key
    assert not summary["pass_hit_bar"] and not summary["pass_mean_bar"] and summary["errors"] == 1
    assert [x["shape"] for x in summary["misses"]] == [shape_str(rows[i]) for i in (1, 4, 5)]
    good = summarize([rows[i] for i in (0, 2, 3, 6)])
    assert good["pass_hit_bar"] and good["pass_mean_bar"] and not good["misses"]
    empty = summarize([])
    assert empty["frac_pick_within_10pct"] is None and not empty["pass_hit_bar"] and summary_lines(empty)
    # parts cover the list once; merging the parts' rows (in any order, a shape twice) gives the list's order back
    parts = [select_part(shapes, f"{i}/3") for i in (1, 2, 3)]
    assert sorted(map(tuple, sum(parts, []))) == sorted(map(tuple, shapes)) and sum(map(len, parts)) == len(shapes)
    for bad in ("0/2", "3/2", "x", "1/0"):
        try:
            select_part(shapes, bad)
            raise AssertionError(f"--part {bad} accepted")
        except ValueError:
            pass
    listed = [(r["m"], r["n"], r["k"], r["source"]) for r in rows]
    m1, m2 = dict(meta, part="2/2", wall_s=2.0), dict(meta, part="1/2", wall_s=1.0)
    mmeta, mrows = merge_rows([(m1, rows[1::2]), (m2, rows[0::2] + rows[1:2])], listed)
    assert mrows == rows and mmeta["complete"] and mmeta["wall_s"] == 3.0 and len(mmeta["merged"]) == 2
    assert not merge_rows([(m1, rows[1::2])], listed)[0]["complete"]
    print("self-check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
