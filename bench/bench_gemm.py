#!/usr/bin/env python3
"""Time kiln against its baseline in the same process, on random data, and write the table.

Cases (DESIGN.md performance anchors):
  fp8    e4m3 x e4m3 -> bf16, per-tensor scales        vs torch._scaled_mm (cuBLASLt)     4096^3, 8192^3 [+ --shapes]
  mixed  f16 A x fp8 B (e4m3, e5m2) * scale[n] + bias  vs torch.compile of (a @ b.to(f16)) * scale + bias
                                                          M = --mixed-m, N in {4096, 8192}, K = 4096
  bf16   bf16 x bf16 -> bf16 (a @ b, NN)               vs torch.mm (cuBLAS)              8192^3

Timing: CUDA events around each call, after warm-up; the host queues the timed calls behind a GPU sleep so that each
event pair measures GPU time, not Python; median of --iters (>= 20) runs; small problems rotate through several
input sets so that the L2 cache does not hold them. Each case also compares kiln's output with the baseline's once
(relative L2), so a fast wrong kernel shows.

    python3 bench/bench_gemm.py                       # all cases -> bench/results/<device>_<commit>.{json,md}
    python3 bench/bench_gemm.py --cases fp8 --shapes 4096x7168x2048,16x8192x8192 --out /tmp/fp8
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "runtime" / "python"))

import kiln  # noqa: E402

try:
    import torch
except ImportError:  # --help still works; main() says what is missing
    torch = None

ROTATE_BYTES = 256 << 20   # input bytes to cycle through: several times the 50 MB L2 of an H100
MAX_SETS = 8
QUEUE_AHEAD_CYCLES = 50_000_000  # ~25-30 ms of GPU sleep while the host enqueues the timed calls


# ---- timing ----

def n_sets_for(set_bytes: int) -> int:
    return max(1, min(MAX_SETS, math.ceil(ROTATE_BYTES / max(set_bytes, 1))))


def time_fn(fn, sets, warmup: int, iters: int) -> dict:
    """Median GPU milliseconds of fn(inputs) over iters calls, rotating through sets."""
    for i in range(warmup):
        fn(sets[i % len(sets)])
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
    for i in range(iters):
        starts[i].record()
        fn(sets[i % len(sets)])
        ends[i].record()
    torch.cuda.synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return {"median_ms": statistics.median(ms), "min_ms": ms[0], "max_ms": ms[-1], "runs": len(ms)}


def rel_l2(x, ref) -> float:
    x, ref = x.double(), ref.double()
    return ((x - ref).norm() / ref.norm()).item()


def tflops(flops: float, ms: float) -> float:
    return flops / (ms * 1e-3) / 1e12 if ms > 0 else float("nan")


# ---- cases ----

@dataclass
class Case:
    label: str
    flops: float
    set_bytes: int      # bytes of one input set (decides how many sets rotate)
    make: object        # () -> dict of inputs
    ours: object        # inputs -> kiln output
    theirs: object      # inputs -> baseline output
    query: object       # inputs -> kiln.query(...) of the call `ours` makes
    baseline: str


def fp8_case(m, n, k):
    def make():
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)  # weight [N, K]; b = w.t() is column-major
        return {"a": a, "b": w.t(), "sa": torch.rand((), device="cuda") + 0.5,
                "sb": torch.rand((), device="cuda") + 0.5}

    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")

    def theirs(s):
        r = torch._scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out_dtype=torch.bfloat16)
        return r[0] if isinstance(r, tuple) else r

    return Case(f"fp8 e4m3->bf16 tensor-scale {m}x{n}x{k}", 2.0 * m * n * k, m * k + n * k, make,
                lambda s: kiln.scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out=out), theirs,
                lambda s: kiln.query(kiln.scaled_mm, s["a"], s["b"], s["sa"], s["sb"], out=out, k=1),
                "torch._scaled_mm")


def _mixed_eager(a, b_kn, scale, bias):
    return (a @ b_kn.to(torch.float16)) * scale + bias


def mixed_case(m, n, k, fp8_dtype, compile_it: bool, base_scale_dtype):
    """By default the baseline gets the scale as f16 so that, like kiln, it computes and writes f16; with an f32
    scale (--mixed-baseline-scale f32) torch promotes the epilogue and its output to f32."""
    def make():
        b_kn = (torch.randn(k, n, device="cuda") * 0.5).to(fp8_dtype)  # B(k, n) row-major, what a @ b reads
        scale = torch.rand(n, device="cuda") + 0.5
        return {"a": torch.randn(m, k, device="cuda", dtype=torch.float16), "b_kn": b_kn,
                "packed": kiln.prepack_b(b_kn), "scale": scale, "base_scale": scale.to(base_scale_dtype),
                "bias": torch.randn(n, device="cuda", dtype=torch.float16)}

    out = torch.empty(m, n, dtype=torch.float16, device="cuda")
    fmt = {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2"}[fp8_dtype]
    case = Case(f"mixed f16 x {fmt} *scale[n] +bias {m}x{n}x{k}", 2.0 * m * n * k,
                2 * m * k + n * k + 6 * n, make,
                lambda s: kiln.mixed_mm(s["a"], s["packed"], scale_b=s["scale"], bias=s["bias"], out=out), None,
                lambda s: kiln.query(kiln.mixed_mm, s["a"], s["packed"], scale_b=s["scale"], bias=s["bias"],
                                     out=out, k=1),
                ("torch.compile" if compile_it else "eager (torch.compile off)")
                + (", f32 scale -> f32 out" if base_scale_dtype == torch.float32 else ""))
    fn = [torch.compile(_mixed_eager) if compile_it else _mixed_eager]

    def theirs(s):
        try:
            return fn[0](s["a"], s["b_kn"], s["base_scale"], s["bias"])
        except Exception as exc:  # noqa: BLE001 - torch.compile fails at the first call; fall back and say so
            if fn[0] is _mixed_eager:
                raise
            fn[0] = _mixed_eager
            case.baseline = f"eager (torch.compile failed: {type(exc).__name__}: {str(exc)[:160]})"
            return fn[0](s["a"], s["b_kn"], s["base_scale"], s["bias"])

    case.theirs = theirs
    return case


def bf16_case(m, n, k):
    def make():
        return {"a": torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                "b": torch.randn(k, n, device="cuda", dtype=torch.bfloat16)}

    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    return Case(f"bf16 NN {m}x{n}x{k}", 2.0 * m * n * k, 2 * (m * k + k * n), make,
                lambda s: kiln.gemm(s["a"], s["b"], out=out), lambda s: torch.mm(s["a"], s["b"]),
                lambda s: kiln.query(kiln.gemm, s["a"], s["b"], out=out, k=1), "torch.mm")


# ---- driver ----

def parse_shapes(text: str) -> list:
    shapes = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", item)
        if not m:
            raise SystemExit(f"--shapes: {item!r} is not MxNxK")
        shapes.append(tuple(int(v) for v in m.groups()))
    return shapes


def build_cases(args) -> list:
    cases = []
    if "fp8" in args.cases:
        for shape in [(4096, 4096, 4096), (8192, 8192, 8192)] + parse_shapes(args.shapes):
            cases.append(("fp8", lambda s=shape: fp8_case(*s)))
    if "mixed" in args.cases:
        for fp8_dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            for n in (4096, 8192):
                cases.append(("mixed", lambda n=n, d=fp8_dtype: mixed_case(
                    args.mixed_m, n, 4096, d, not args.no_compile, getattr(torch, args.mixed_baseline_scale))))
    if "bf16" in args.cases:
        cases.append(("bf16", lambda: bf16_case(8192, 8192, 8192)))
    return cases


def run_case(family, factory, args) -> dict:
    case = factory()
    row = {"case": case.label, "family": family}
    try:
        sets = [case.make() for _ in range(n_sets_for(case.set_bytes))]
        row["input_sets"] = len(sets)
        row["kiln_algo"] = case.query(sets[0])[0].name
        mine = case.ours(sets[0]).clone()
        row["rel_l2_vs_baseline"] = rel_l2(mine, case.theirs(sets[0]))
        t_k = time_fn(case.ours, sets, args.warmup, args.iters)
        t_b = time_fn(case.theirs, sets, args.warmup, args.iters)
    except Exception as exc:  # noqa: BLE001 - one broken case must not hide the others
        row.update(error=f"{type(exc).__name__}: {exc}", baseline=case.baseline)
        return row
    row.update(baseline=case.baseline, kiln_ms=t_k["median_ms"], baseline_ms=t_b["median_ms"],
               kiln_tflops=tflops(case.flops, t_k["median_ms"]), baseline_tflops=tflops(case.flops, t_b["median_ms"]),
               ratio=t_b["median_ms"] / t_k["median_ms"], kiln_min_ms=t_k["min_ms"], baseline_min_ms=t_b["min_ms"],
               runs=t_k["runs"])
    return row


def git_commit() -> str:
    if os.environ.get("KILN_COMMIT"):
        return os.environ["KILN_COMMIT"]
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10)
        return r.stdout.strip() if r.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


COLUMNS = [("case", "case", "{}"), ("kiln ms", "kiln_ms", "{:.3f}"), ("baseline ms", "baseline_ms", "{:.3f}"),
           ("kiln TFLOP/s", "kiln_tflops", "{:.0f}"), ("baseline TFLOP/s", "baseline_tflops", "{:.0f}"),
           ("ratio base/kiln", "ratio", "{:.2f}"), ("rel L2 vs base", "rel_l2_vs_baseline", "{:.1e}"),
           ("baseline", "baseline", "{}")]


def table_rows(rows):
    out = []
    for r in rows:
        cells = []
        for _title, key, fmt in COLUMNS:
            v = r.get(key)
            cells.append("-" if v is None else fmt.format(v))
        if "error" in r:
            cells[1] = "ERROR: " + r["error"][:120]
        out.append(cells)
    return out


def markdown(meta, rows) -> str:
    lines = [f"# kiln GEMM benchmark: {meta['device']}", "",
             f"commit `{meta['commit']}`, torch {meta['torch']}, CUDA {meta['cuda']}, kiln arch {meta['kiln_arch']}, "
             f"median of {meta['iters']} runs after {meta['warmup']} warm-up, {meta['time_utc']}", "",
             "| " + " | ".join(t for t, _k, _f in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    lines += ["", "ratio = baseline ms / kiln ms (> 1: kiln is faster). Kernels kiln chose:", ""]
    lines += [f"- {r['case']}: `{r.get('kiln_algo', '-')}`" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="fp8,mixed,bf16", help="comma list of fp8, mixed, bf16")
    ap.add_argument("--shapes", default="", help="extra fp8 shapes, MxNxK,...")
    ap.add_argument("--mixed-m", type=int, default=4096, help="M of the mixed cases")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-compile", action="store_true", help="mixed baseline in eager mode")
    ap.add_argument("--mixed-baseline-scale", choices=["float16", "float32"], default="float16",
                    help="dtype of the scale the mixed baseline multiplies by (float32 makes its output f32)")
    ap.add_argument("--name", default=None, help="results file name (default <device>_<commit>)")
    ap.add_argument("--out", default=None, help="output path without extension (default bench/results/<name>)")
    args = ap.parse_args(argv)
    if args.iters < 20:
        ap.error("--iters must be at least 20")
    args.cases = {c.strip() for c in args.cases.split(",") if c.strip()}
    if not args.cases <= {"fp8", "mixed", "bf16"}:
        ap.error(f"unknown case in {sorted(args.cases)}")
    if torch is None or not torch.cuda.is_available():
        print("bench_gemm: needs torch and a CUDA device", file=sys.stderr)
        return 2

    device = torch.cuda.get_device_name()
    commit = git_commit()
    meta = {"device": device, "commit": commit, "torch": torch.__version__, "cuda": torch.version.cuda,
            "kiln_library": None, "kiln_arch": None, "iters": args.iters, "warmup": args.warmup,
            "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    kiln.load_library()
    meta["kiln_library"], meta["kiln_arch"] = kiln.library_path(), kiln.device_arch()

    rows = []
    for family, factory in build_cases(args):
        row = run_case(family, factory, args)
        rows.append(row)
        cells = table_rows([row])[0]
        print("  ".join(f"{t}={c}" for (t, _k, _f), c in zip(COLUMNS, cells)), flush=True)
        torch.cuda.empty_cache()

    name = args.name or re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-").lower() + "_" + commit[:10]
    base = pathlib.Path(args.out) if args.out else REPO / "bench" / "results" / name
    base.parent.mkdir(parents=True, exist_ok=True)
    base.with_suffix(".json").write_text(json.dumps({"meta": meta, "cases": rows}, indent=2, sort_keys=True) + "\n")
    md = markdown(meta, rows)
    base.with_suffix(".md").write_text(md)
    print()
    print(md)
    print(f"wrote {base.with_suffix('.json')} and {base.with_suffix('.md')}")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
