#!/usr/bin/env python3
"""Time kiln against its baseline in the same process, on random data, and write the table.

Cases (DESIGN.md performance anchors; --cases picks a subset, default all):
  fp8          e4m3 x e4m3 -> bf16, per-tensor scales       vs torch._scaled_mm (cuBLASLt)
                 4096^3, 8192^3 and M in {64, 128, 4096} x (N, K) in FP8_NK [--shapes replaces the list]
                 Both accumulate in FP32 (kiln promotes wgmma's fp8 sums every 128 of K; cuBLASLt's default mode).
  fp8_fast     the same with fast accumulation on both sides vs torch._scaled_mm(use_fast_accum=True)
                 (kiln.scaled_mm(use_fast_accum=True): sums kept in wgmma's accumulator over all of K)
  fp8_rowwise  e4m3 x e4m3 -> bf16, scale_a[M], scale_b[N],  vs torch._scaled_mm(rowwise scales) + bias
               + bias[N] (bf16)                                4096^3, 8192^3 and M in {64, 128, 4096} x
                                                               (N, K) in {(7168, 2048), (4096, 7168)} [--rowwise-shapes]
  mixed        f16 A x fp8 B (e4m3, e5m2) * scale[n] + bias  vs torch.compile of (a @ b.to(f16)) * scale + bias
                                                               M = --mixed-m, N in {4096, 8192}, K = 4096
  bf16         bf16 x bf16 -> bf16 (a @ w.t(), TN)           vs torch.mm (cuBLAS)              8192^3

Timing: CUDA events around each call, after warm-up; the host queues the timed calls behind a GPU sleep so that each
event pair measures GPU time, not Python; median of --iters runs (fewer, down to MIN_ITERS, where --iters runs would
take longer than --budget-s by the warm-up's estimate); small problems rotate through several input sets so that the
L2 cache does not hold them. kiln and the baseline are timed in alternating blocks of 5 calls (time_pair), so that
both run under the same clocks: a power-limited GEMM's clock drifts between two back-to-back timing runs. Each case
also compares kiln's output with the baseline's once (relative L2), so a fast wrong kernel shows. ratio = baseline
ms / kiln ms (> 1: kiln is faster).

Summary (JSON "summary", the Markdown's Summary, printed last; None / n/a where the rows are missing or failed):
fp8_8192_ratio; fp8_m4096_geomean_ratio and fp8_m4096_min_ratio (geometric mean and smallest ratio over the six
M = 4096 fp8 shapes, fp8_m4096_shapes of them measured); fp8_m64_128_geomean_ratio (the twelve M in {64, 128} shapes,
fp8_m64_128_shapes); the same four for fp8_fast (fast_fp8_8192_ratio, fast_fp8_m4096_geomean_ratio,
fast_fp8_m4096_min_ratio, fast_fp8_m64_128_geomean_ratio); mixed_n8192_kiln_ms (per fp8 format); bf16_8192_ratio.
The fp8 and fp8_fast rows are also timed in CUDA graphs (time_graph: each side's calls captured and replayed, per
call, no event pair around every call; the rows' graph_* fields), summarized as the same keys with _graph_ before
_ratio (fp8_8192_graph_ratio, fp8_m4096_geomean_graph_ratio, fp8_m4096_min_graph_ratio,
fp8_m64_128_geomean_graph_ratio, and the fast_ ones). The event pair costs ~4-5 us a call on the H100, half of a
small-M call: the graph numbers are what a graph-replaying caller sees; the event ones stay the headline keys. (Long
calls, 0.2 ms and up, read up to 23 % slower in a graph than by events on the H100, both sides; bench/NOTES.md.)

Writes <out>.json (meta, cases, summary), <out>.md and, where matplotlib imports, <out>.png (bench/plot_bench.py;
elsewhere run `python3 bench/plot_bench.py <out>.json <out>.png` later).

    python3 bench/bench_gemm.py                       # all cases -> bench/results/<device>_<commit>.{json,md,png}
    python3 bench/bench_gemm.py --cases fp8 --shapes 4096x7168x2048,16x8192x8192 --out /tmp/fp8
    python3 bench/bench_gemm.py --self-check          # table, summary and plot code on fake rows; no GPU needed
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
import tempfile
import time
from dataclasses import dataclass, field
from typing import NamedTuple

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "runtime" / "python"))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import kiln  # noqa: E402

try:
    import torch
except ImportError:  # --help and --self-check still work; main() says what is missing
    torch = None

ROTATE_BYTES = 256 << 20   # input bytes to cycle through: several times the 50 MB L2 of an H100
MAX_SETS = 8
QUEUE_AHEAD_CYCLES = 50_000_000  # ~25-30 ms of GPU sleep while the host enqueues the timed calls
MIN_ITERS = 10             # the fewest timed runs the time budget may leave

# ---- the benchmark list ----

CASES = ("fp8", "fp8_fast", "fp8_rowwise", "mixed", "bf16")
GRAPH_CASES = ("fp8", "fp8_fast")  # also timed in CUDA graphs (time_graph)
SQUARE = [(4096, 4096, 4096), (8192, 8192, 8192)]
FP8_M = (64, 128, 4096)
FP8_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
ROWWISE_NK = [(7168, 2048), (4096, 7168)]
FP8_SHAPES = SQUARE + [(m, n, k) for m in FP8_M for n, k in FP8_NK]
ROWWISE_SHAPES = SQUARE + [(m, n, k) for m in FP8_M for n, k in ROWWISE_NK]
MIXED_NS = (4096, 8192)
MIXED_K = 4096
MIXED_FORMATS = ("e4m3", "e5m2")
BF16_SHAPE = (8192, 8192, 8192)

LABELS = {
    "fp8": "fp8 e4m3->bf16 tensor-scale",
    "fp8_fast": "fp8 e4m3->bf16 tensor-scale fast-accum",
    "fp8_rowwise": "fp8 e4m3->bf16 row/col-scale +bias",
    "mixed": "mixed f16 x {variant} *scale[n] +bias",
    "bf16": "bf16 TN",
}


class Spec(NamedTuple):
    """One benchmark row before it runs: which case, which shape, and the case's variant (mixed: fp8 format)."""
    case: str
    m: int
    n: int
    k: int
    variant: str = ""

    @property
    def label(self) -> str:
        return f"{LABELS[self.case].format(variant=self.variant)} {self.m}x{self.n}x{self.k}"


def parse_shapes(text: str, what: str = "--shapes") -> list:
    shapes = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", item)
        if not m:
            raise SystemExit(f"{what}: {item!r} is not MxNxK")
        shapes.append(tuple(int(v) for v in m.groups()))
    return shapes


def case_specs(cases, fp8_shapes=FP8_SHAPES, rowwise_shapes=ROWWISE_SHAPES, mixed_m: int = 4096) -> list:
    """The rows a run makes, in order (pure Python: no torch, no GPU)."""
    specs = []
    if "fp8" in cases:
        specs += [Spec("fp8", *s) for s in fp8_shapes]
    if "fp8_fast" in cases:
        specs += [Spec("fp8_fast", *s) for s in fp8_shapes]
    if "fp8_rowwise" in cases:
        specs += [Spec("fp8_rowwise", *s) for s in rowwise_shapes]
    if "mixed" in cases:
        specs += [Spec("mixed", mixed_m, n, MIXED_K, fmt) for fmt in MIXED_FORMATS for n in MIXED_NS]
    if "bf16" in cases:
        specs.append(Spec("bf16", *BF16_SHAPE))
    return specs


# ---- timing ----

def n_sets_for(set_bytes: int) -> int:
    return max(1, min(MAX_SETS, math.ceil(ROTATE_BYTES / max(set_bytes, 1))))


def budget_iters(iters: int, est_ms: float, budget_s: float) -> int:
    """iters, cut so that iters calls of est_ms each fit in budget_s, but never below MIN_ITERS."""
    if not est_ms > 0:
        return iters
    return max(min(iters, MIN_ITERS), min(iters, int(budget_s * 1e3 / est_ms)))


def _warm_ms(fn, sets, warmup: int) -> float:
    """Runs fn max(warmup, 1) times (rotating through sets), timed as a whole: the estimate of one call."""
    n_warm = max(warmup, 1)
    w0, w1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    w0.record()
    for i in range(n_warm):
        fn(sets[i % len(sets)])
    w1.record()
    torch.cuda.synchronize()
    return w0.elapsed_time(w1) / n_warm


def _summary(pairs) -> dict:
    ms = sorted(s.elapsed_time(e) for s, e in pairs)
    return {"median_ms": statistics.median(ms), "min_ms": ms[0], "max_ms": ms[-1], "runs": len(ms)}


def time_fn(fn, sets, warmup: int, iters: int, budget_s: float) -> dict:
    """Median GPU milliseconds of fn(inputs) over (up to) iters calls, rotating through sets.

    The warm-up (at least one call) is timed as a whole to estimate one call, which sizes the timed loop."""
    iters = budget_iters(iters, _warm_ms(fn, sets, warmup), budget_s)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
    for i in range(iters):
        starts[i].record()
        fn(sets[i % len(sets)])
        ends[i].record()
    torch.cuda.synchronize()
    return _summary(zip(starts, ends))


def time_pair(fa, fb, sets, warmup: int, iters: int, budget_s: float, block: int = 5) -> tuple:
    """(time_fn-style dict of fa, of fb), the two timed in alternating blocks of `block` calls (A B, B A, A B, ...):
    both sides run under the same clocks and temperature, so a long power-limited kernel's ratio does not carry the
    drift between two back-to-back timing runs. Each side's calls rotate through sets as in time_fn; the budget is
    shared, and both sides get the call count the slower one leaves."""
    return tuple(time_rotation([fa, fb], sets, warmup, iters, budget_s, block))


def time_rotation(fns, sets, warmup: int, iters: int, budget_s: float, block: int = 5) -> list:
    """time_pair for any number of sides: blocks of `block` calls a side, the order turned by one each round (A B C,
    B C A, C A B, ...), every side the same call count (what the slowest leaves of budget_s / len(fns)); a
    time_fn-style dict a side, in the order of fns."""
    n = len(fns)
    est = [_warm_ms(fn, sets, warmup) for fn in fns]
    iters = min(budget_iters(iters, e, budget_s / n) for e in est)
    events = [[] for _ in fns]
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
    done = [0] * n
    r = 0
    while min(done) < iters:
        for side in [(r + i) % n for i in range(n)]:
            fn = fns[side]
            for _ in range(min(block, iters - done[side])):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                fn(sets[done[side] % len(sets)])
                e1.record()
                events[side].append((e0, e1))
                done[side] += 1
        r += 1
    torch.cuda.synchronize()
    return [_summary(ev) for ev in events]


def time_sides(fns, sets, warmup: int, iters: int, budget_s: float, short_ms: float = 0.1,
               short_iters: int = 30) -> list:
    """time_rotation of fns, budget_s seconds a side, unless the first side's call takes under short_ms: then each side
    alone (time_fn, short_iters calls behind its own queue-ahead sleep). In rotation the events of calls shorter than
    their launch from the host time the host's launches (a 10 us attention call read 70-90 us); no clock drift to
    share at that length."""
    if _warm_ms(fns[0], sets, warmup) < short_ms:
        return [time_fn(fn, sets, warmup, short_iters, budget_s) for fn in fns]
    return time_rotation(fns, sets, warmup, iters, budget_s * len(fns))


GRAPH_REPLAY_MS = 20.0     # a captured graph holds about this many ms of calls (between 3 and GRAPH_CALLS calls)
GRAPH_CALLS = 20
GRAPH_REPS = 7


def time_graph(fns, sets, est_ms: float, reps: int = GRAPH_REPS) -> list:
    """Per-call GPU ms of each fn with no host in the timing: each fn's calls (rotating through sets, as timed
    elsewhere) captured once in a CUDA graph, the graphs replayed in turns (A B, B A, ...) between two events; median
    over reps replays of replay time / calls. What a caller that replays graphs (decode loops, CUDA-graph serving)
    sees per call: the kernels and the gaps between back-to-back launches, without the event pair around every call
    that time_fn's medians carry (~4-5 us on the H100: most of a 10 us small-M call). est_ms: one call's estimate."""
    calls = max(3, min(GRAPH_CALLS, int(GRAPH_REPLAY_MS / max(est_ms, 1e-3))))
    graphs = []
    for fn in fns:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture stream (lazy loads, plan caches, allocator)
            for i in range(min(calls, len(sets))):
                fn(sets[i % len(sets)])
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(calls):
                fn(sets[i % len(sets)])
        g.replay()
        graphs.append(g)
    torch.cuda.synchronize()
    # as time_fn: the replays queued behind a GPU sleep and run back to back, no host wait (and no idle GPU)
    # between them, so that they run under the conditions of the event timing's calls
    events = [[] for _ in fns]
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
    for r in range(reps):
        for side in [(r + i) % len(fns) for i in range(len(fns))]:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            graphs[side].replay()
            e1.record()
            events[side].append((e0, e1))
    torch.cuda.synchronize()
    per_call = [[e0.elapsed_time(e1) / calls for e0, e1 in ev] for ev in events]
    return [{"median_ms": statistics.median(v), "min_ms": min(v), "runs": len(v), "calls": calls} for v in per_call]


FLUSH_BYTES = 256 << 20   # the buffer time_kernels zeroes before every call: five times the H100's 50 MB L2
KERNEL_CALLS = 30


def per_call_kernel_us(kernels, flush_names) -> list:
    """The summed kernel time of each call from a profile's kernels [(name, start_us, end_us), ...] of calls that
    each follow a flush (kernels named in flush_names): a flush kernel opens the next call's group; empty groups
    (a flush of several kernels) are skipped."""
    calls, cur = [], 0.0
    for name, start, end in sorted(kernels, key=lambda k: k[1]):
        if name in flush_names:
            if cur:
                calls.append(cur)
            cur = 0.0
        else:
            cur += end - start
    if cur:
        calls.append(cur)
    return calls


def _profile_kernels(run) -> list:
    """[(name, start_us, end_us)] of the CUDA kernels run() launches, from torch.profiler (CUPTI)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    cuda = torch.autograd.DeviceType.CUDA
    return [(e.name, e.time_range.start, e.time_range.end) for e in prof.events()
            if getattr(e, "device_type", None) == cuda]


def time_kernels(fns, sets, calls: int = KERNEL_CALLS) -> list:
    """Per-call GPU time of each fn's kernels alone, timed the way DeepGEMM's benchmark harness times its kernels:
    the kernels' durations from torch.profiler (CUPTI, no launch gaps, no event pair), the L2 flushed before every
    call by zeroing a FLUSH_BYTES buffer, the calls rotating through sets, and kiln's programmatic launch off
    (KILN_PDL=0: a kernel launched ahead would count its wait for the flush). The flush's kernels are told apart by
    their names (a profile of the flush alone). A dict a side: median_ms over the calls, calls, kernels (the names
    seen)."""
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    flush_names = {k[0] for k in _profile_kernels(flush.zero_)}
    pdl = os.environ.get("KILN_PDL")
    os.environ["KILN_PDL"] = "0"
    try:
        out = []
        for fn in fns:
            fn(sets[0])  # lazy loads and plan caches outside the profile

            def run():
                for i in range(calls):
                    flush.zero_()
                    fn(sets[i % len(sets)])
            kernels = _profile_kernels(run)
            us = per_call_kernel_us(kernels, flush_names)
            names = sorted({k[0] for k in kernels} - flush_names)
            out.append({"median_ms": statistics.median(us) * 1e-3 if us else float("nan"), "calls": len(us),
                        "kernels": names})
        return out
    finally:
        if pdl is None:
            os.environ.pop("KILN_PDL", None)
        else:
            os.environ["KILN_PDL"] = pdl


def graph_fields(flops: float, t_k: dict, t_b: dict) -> dict:
    """The row's fields of a time_graph pair: kiln_graph_ms, base_graph_ms, graph_ratio (base / kiln)."""
    return {"kiln_graph_ms": t_k["median_ms"], "base_graph_ms": t_b["median_ms"],
            "graph_ratio": t_b["median_ms"] / t_k["median_ms"], "kiln_graph_tflops": tflops(flops, t_k["median_ms"]),
            "base_graph_tflops": tflops(flops, t_b["median_ms"]), "graph_calls": t_k["calls"]}


def rel_l2(x, ref) -> float:
    x, ref = x.double(), ref.double()
    return ((x - ref).norm() / ref.norm()).item()


def tflops(flops: float, ms: float) -> float:
    return flops / (ms * 1e-3) / 1e12 if ms > 0 else float("nan")


# ---- cases: inputs, kiln's call, the baseline's call ----

@dataclass
class Case:
    set_bytes: int      # bytes of one input set (decides how many sets rotate)
    make: object        # () -> dict of inputs
    ours: object        # inputs -> kiln output
    theirs: object      # inputs -> baseline output
    query: object       # inputs -> kiln.query(...) of the call `ours` makes, top 1 = what kiln's default selection runs
    baseline: str
    extra: dict = field(default_factory=dict)  # more fields for the result row


def _torch_scaled_mm(a, b, scale_a, scale_b, fast=False):
    r = torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16, use_fast_accum=fast)
    return r[0] if isinstance(r, tuple) else r  # older torch returned (out, amax)


def fp8_case(spec: Spec, rowwise: bool, fast: bool = False) -> Case:
    """Per-tensor scales, or (rowwise) scale_a[M], scale_b[N] and a bf16 bias[N] that the baseline adds after; fast:
    fast accumulation on both sides."""
    m, n, k = spec.m, spec.n, spec.k

    def make():
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)  # weight [N, K]; b = w.t() is column-major
        shape_a, shape_b = ((m,), (n,)) if rowwise else ((), ())
        s = {"a": a, "b": w.t(), "sa": torch.rand(shape_a, device="cuda") + 0.5,
             "sb": torch.rand(shape_b, device="cuda") + 0.5, "bias": None}
        # the baseline's views of the same scales: torch._scaled_mm's rowwise mode wants [M, 1] and [1, N]
        s["base_sa"], s["base_sb"] = (s["sa"].view(-1, 1), s["sb"].view(1, -1)) if rowwise else (s["sa"], s["sb"])
        if rowwise:
            s["bias"] = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        return s

    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")

    def theirs(s):
        r = _torch_scaled_mm(s["a"], s["b"], s["base_sa"], s["base_sb"], fast)
        return r + s["bias"] if rowwise else r

    return Case(m * k + n * k + (4 * m + 6 * n if rowwise else 0), make,
                lambda s: kiln.scaled_mm(s["a"], s["b"], s["sa"], s["sb"], bias=s["bias"], out=out,
                                         use_fast_accum=fast), theirs,
                lambda s: kiln.query(kiln.scaled_mm, s["a"], s["b"], s["sa"], s["sb"], bias=s["bias"], out=out,
                                     use_fast_accum=fast, k=1),
                "torch._scaled_mm" + (" rowwise + bias" if rowwise else "") + (" fast-accum" if fast else ""))


def _mixed_eager(a, b_kn, scale, bias):
    return (a @ b_kn.to(torch.float16)) * scale + bias


def mixed_case(spec: Spec, compile_it: bool, base_scale_dtype) -> Case:
    """By default the baseline gets the scale as f16 so that, like kiln, it computes and writes f16; with an f32
    scale (--mixed-baseline-scale float32) torch promotes the epilogue and its output to f32. The compiled baseline
    is static-shape (dynamic=False), so that the second N does not get a shape-generic recompile."""
    m, n, k = spec.m, spec.n, spec.k
    fp8_dtype = getattr(torch, kiln.TORCH_DTYPE_NAME[kiln.FP8_NAMES[spec.variant]])

    def make():
        b_kn = (torch.randn(k, n, device="cuda") * 0.5).to(fp8_dtype)  # B(k, n) row-major, what a @ b reads
        scale = torch.rand(n, device="cuda") + 0.5
        return {"a": torch.randn(m, k, device="cuda", dtype=torch.float16), "b_kn": b_kn,
                "packed": kiln.prepack_b(b_kn), "scale": scale, "base_scale": scale.to(base_scale_dtype),
                "bias": torch.randn(n, device="cuda", dtype=torch.float16)}

    out = torch.empty(m, n, dtype=torch.float16, device="cuda")
    case = Case(2 * m * k + n * k + 6 * n, make,
                lambda s: kiln.mixed_mm(s["a"], s["packed"], scale_b=s["scale"], bias=s["bias"], out=out), None,
                lambda s: kiln.query(kiln.mixed_mm, s["a"], s["packed"], scale_b=s["scale"], bias=s["bias"],
                                     out=out, k=1),
                ("torch.compile" if compile_it else "eager (torch.compile off)")
                + (", f32 scale -> f32 out" if base_scale_dtype == torch.float32 else ""),
                {"b_format": spec.variant})
    fn = [torch.compile(_mixed_eager, dynamic=False) if compile_it else _mixed_eager]

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


def bf16_case(spec: Spec) -> Case:
    m, n, k = spec.m, spec.n, spec.k

    def make():
        # B(k, n) as the transposed view of [N, K] storage (TN), as a linear layer's weight; torch.mm gets the same
        return {"a": torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                "b": torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()}

    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    return Case(2 * (m * k + k * n), make,
                lambda s: kiln.gemm(s["a"], s["b"], out=out), lambda s: torch.mm(s["a"], s["b"]),
                lambda s: kiln.query(kiln.gemm, s["a"], s["b"], out=out, k=1), "torch.mm")


def build_case(spec: Spec, args) -> Case:
    if spec.case in ("fp8", "fp8_fast", "fp8_rowwise"):
        return fp8_case(spec, rowwise=spec.case == "fp8_rowwise", fast=spec.case == "fp8_fast")
    if spec.case == "mixed":
        return mixed_case(spec, not args.no_compile, getattr(torch, args.mixed_baseline_scale))
    return bf16_case(spec)


# ---- driver ----

def new_row(spec: Spec) -> dict:
    return {"case": spec.case, "label": spec.label, "m": spec.m, "n": spec.n, "k": spec.k}


def timing_fields(flops: float, t_k: dict, t_b: dict) -> dict:
    return {"kiln_ms": t_k["median_ms"], "base_ms": t_b["median_ms"], "ratio": t_b["median_ms"] / t_k["median_ms"],
            "kiln_tflops": tflops(flops, t_k["median_ms"]), "base_tflops": tflops(flops, t_b["median_ms"]),
            "kiln_min_ms": t_k["min_ms"], "base_min_ms": t_b["min_ms"],
            "kiln_runs": t_k["runs"], "base_runs": t_b["runs"]}


def run_case(spec: Spec, args) -> dict:
    row = new_row(spec)
    case = None
    try:
        case = build_case(spec, args)
        row.update(case.extra)
        sets = [case.make() for _ in range(n_sets_for(case.set_bytes))]
        row["input_sets"] = len(sets)
        row["kiln_kernel"] = case.query(sets[0])[0].name
        mine = case.ours(sets[0]).clone()
        row["rel_l2"] = rel_l2(mine, case.theirs(sets[0]))
        del mine
        t_k, t_b = time_pair(case.ours, case.theirs, sets, args.warmup, args.iters, 2 * args.budget_s)
        row.update(timing_fields(2.0 * spec.m * spec.n * spec.k, t_k, t_b))
    except Exception as exc:  # noqa: BLE001 - one broken case must not hide the others
        row["error"] = f"{type(exc).__name__}: {exc}"
    if "error" not in row and spec.case in GRAPH_CASES and not args.no_graph:
        try:
            g_k, g_b = time_graph([case.ours, case.theirs], sets, row["kiln_ms"])
            row.update(graph_fields(2.0 * spec.m * spec.n * spec.k, g_k, g_b))
        except Exception as exc:  # noqa: BLE001 - a call that cannot be captured keeps its event timing
            row["graph_error"] = f"{type(exc).__name__}: {exc}"
    if case is not None:
        row["baseline"] = case.baseline
    return row


# ---- summary, table ----

def geomean(values) -> float | None:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(rows) -> dict:
    """The headline numbers; a value is None where its rows are missing or failed. *_shapes counts the rows that
    went into a geometric mean (the full default list has 6 and 12); fp8_m4096_min_ratio is the smallest ratio among
    the same M = 4096 rows as fp8_m4096_geomean_ratio (the worst of the six LLM shapes, which a geomean can hide)."""
    ok = [r for r in rows if "error" not in r]

    def pick(case, pred):
        return [r for r in ok if r["case"] == case and pred(r)]

    def one(case, shape, key):
        hits = pick(case, lambda r: (r["m"], r["n"], r["k"]) == shape)
        return hits[0].get(key) if hits else None

    mixed = {r["b_format"]: r["kiln_ms"] for r in pick("mixed", lambda r: r["n"] == 8192)}
    out = {}
    for case, prefix in (("fp8", ""), ("fp8_fast", "fast_")):
        big = pick(case, lambda r: r["m"] == 4096 and (r["n"], r["k"]) in FP8_NK)
        small = pick(case, lambda r: r["m"] in (64, 128) and (r["n"], r["k"]) in FP8_NK)
        out.update({
            f"{prefix}fp8_8192_ratio": one(case, (8192, 8192, 8192), "ratio"),
            f"{prefix}fp8_m4096_geomean_ratio": geomean(r["ratio"] for r in big),
            f"{prefix}fp8_m4096_min_ratio": min((r["ratio"] for r in big), default=None),
            f"{prefix}fp8_m4096_shapes": len(big),
            f"{prefix}fp8_m64_128_geomean_ratio": geomean(r["ratio"] for r in small),
            f"{prefix}fp8_m64_128_shapes": len(small),
            **graph_summary(prefix, one(case, (8192, 8192, 8192), "graph_ratio"), big, small)})
    return {
        **out,
        "mixed_n8192_kiln_ms": {fmt: mixed.get(fmt) for fmt in MIXED_FORMATS},
        "bf16_8192_ratio": one("bf16", BF16_SHAPE, "ratio"),
    }


def graph_summary(prefix: str, r8192, big, small) -> dict:
    """The CUDA-graph twins of the fp8 keys (graph_ratio: time_graph per call), each None unless every row of its
    set has one."""
    def geo(rows):
        return geomean(r["graph_ratio"] for r in rows) if rows and all("graph_ratio" in r for r in rows) else None
    return {f"{prefix}fp8_8192_graph_ratio": r8192,
            f"{prefix}fp8_m4096_geomean_graph_ratio": geo(big),
            f"{prefix}fp8_m4096_min_graph_ratio": min(r["graph_ratio"] for r in big) if geo(big) else None,
            f"{prefix}fp8_m64_128_geomean_graph_ratio": geo(small)}


def _num(v, fmt="{:.3f}") -> str:
    return "n/a" if v is None else fmt.format(v)


def summary_lines(s: dict) -> list:
    nk = len(FP8_NK)
    mixed = ", ".join(f"{fmt} {_num(ms)}" for fmt, ms in s["mixed_n8192_kiln_ms"].items())
    lines = []
    for prefix, what in (("", "fp8"), ("fast_", "fp8 fast-accum")):
        lines += [
            f"{what} 8192^3 ratio: {_num(s[prefix + 'fp8_8192_ratio'])}",
            f"{what} M=4096 geomean ratio ({s[prefix + 'fp8_m4096_shapes']}/{nk} shapes): "
            f"{_num(s[prefix + 'fp8_m4096_geomean_ratio'])}, min {_num(s[prefix + 'fp8_m4096_min_ratio'])}",
            f"{what} M in {{64,128}} geomean ratio ({s[prefix + 'fp8_m64_128_shapes']}/{2 * nk} shapes): "
            f"{_num(s[prefix + 'fp8_m64_128_geomean_ratio'])}",
            f"{what} in CUDA graphs (per call, no event pair around each): 8192^3 "
            f"{_num(s[prefix + 'fp8_8192_graph_ratio'])}, M=4096 geomean "
            f"{_num(s[prefix + 'fp8_m4096_geomean_graph_ratio'])}, "
            f"min {_num(s[prefix + 'fp8_m4096_min_graph_ratio'])}, "
            f"M in {{64,128}} geomean {_num(s[prefix + 'fp8_m64_128_geomean_graph_ratio'])}"]
    return lines + [
        f"mixed N=8192 kiln ms: {mixed}",
        f"bf16 8192^3 ratio: {_num(s['bf16_8192_ratio'])}",
    ]


COLUMNS = [("case", "case", "{}"), ("shape / kind", "label", "{}"), ("kiln ms", "kiln_ms", "{:.3f}"),
           ("baseline ms", "base_ms", "{:.3f}"), ("kiln TFLOP/s", "kiln_tflops", "{:.0f}"),
           ("baseline TFLOP/s", "base_tflops", "{:.0f}"), ("ratio base/kiln", "ratio", "{:.2f}"),
           ("graph: kiln ms", "kiln_graph_ms", "{:.4f}"), ("graph: baseline ms", "base_graph_ms", "{:.4f}"),
           ("graph ratio", "graph_ratio", "{:.2f}"),
           ("rel L2 vs base", "rel_l2", "{:.1e}"), ("baseline", "baseline", "{}")]


def table_rows(rows) -> list:
    out = []
    for r in rows:
        cells = []
        for _title, key, fmt in COLUMNS:
            v = r.get(key)
            cells.append("-" if v is None else fmt.format(v))
        if "error" in r:
            cells[2] = "ERROR: " + r["error"][:120].replace("|", "/").replace("\n", " ")
        out.append(cells)
    return out


def markdown(meta, rows, summary) -> str:
    lines = [f"# kiln GEMM benchmark: {meta['device']}", "",
             f"commit `{meta['commit']}`, torch {meta['torch']}, CUDA {meta['cuda']}, kiln arch {meta['kiln_arch']}, "
             f"median of up to {meta['iters']} runs (at most {meta['budget_s']} s of them per side) after "
             f"{meta['warmup']} warm-up, {meta['time_utc']}", "", "## Summary", ""]
    lines += [f"- {line}" for line in summary_lines(summary)]
    lines += ["", "ratio = baseline ms / kiln ms (> 1: kiln is faster): CUDA events around each call. graph: the "
              "same calls captured in a CUDA graph and replayed, per call (time_graph), for the fp8 cases.", "",
              "| " + " | ".join(t for t, _k, _f in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    lines += ["", "Kernels kiln chose (its default selection, kiln.query top 1):", ""]
    lines += [f"- {r['label']}: `{r.get('kiln_kernel', '-')}`" for r in rows]
    return "\n".join(lines) + "\n"


def write_report(base: pathlib.Path, payload: dict, md: str, plot, summary: list, later: str = "") -> None:
    """<base>.json (payload), <base>.md and, when plot(<base>.png) finds matplotlib, <base>.png; prints the summary
    last. A plotting failure is reported, never fatal: the numbers are already written."""
    base.parent.mkdir(parents=True, exist_ok=True)
    paths = {ext: base.with_name(base.name + ext) for ext in (".json", ".md", ".png")}
    paths[".json"].write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    paths[".md"].write_text(md)
    try:
        plot(paths[".png"])
        print(f"wrote {paths['.png']}")
    except ImportError as exc:
        print(f"no plot ({exc})" + (f"; later: {later.format(json=paths['.json'], png=paths['.png'])}" if later else ""))
    except Exception as exc:  # noqa: BLE001 - the numbers are written; a plotting problem must not lose the run
        print(f"plot failed: {type(exc).__name__}: {exc}")
    print(f"wrote {paths['.json']} and {paths['.md']}")
    print("summary:")
    for line in summary:
        print("  " + line)


PLOT_LATER = "python3 bench/plot_bench.py {json} {png}"  # write_report's `later` for plot_cases


def plot_cases(base: pathlib.Path):
    """write_report's plot for a results file with "cases" rows: bench/plot_bench.py's bar plot of <base>.json."""
    def plot(png):
        from plot_bench import plot as plot_json
        plot_json(base.with_name(base.name + ".json"), png)
    return plot


def write_outputs(base: pathlib.Path, meta, rows) -> dict:
    """<base>.json, <base>.md and (with matplotlib) <base>.png; prints the table and the summary last."""
    summary = summarize(rows)
    md = markdown(meta, rows, summary)
    print()
    print(md)

    write_report(base, {"meta": meta, "cases": rows, "summary": summary}, md, plot_cases(base),
                 summary_lines(summary), later=PLOT_LATER)
    return summary


def git_commit() -> str:
    if os.environ.get("KILN_COMMIT"):
        return os.environ["KILN_COMMIT"]
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10)
        return r.stdout.strip() if r.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def self_check() -> int:
    """The pure-Python parts (specs, summary, table, JSON, plot) on fake rows: fp8 ratio 1.2 at 8192^3, 0.5 at
    M=4096 but 0.4 and 0.625 on two of its shapes (geomean still 0.5, min 0.4), 0.25 at M in {64, 128}, 0.8
    elsewhere; failed fp8_rowwise M=64 rows. Needs neither torch nor a GPU; writes to a temporary directory."""
    specs = case_specs(CASES)
    assert len(specs) == 2 * len(FP8_SHAPES) + len(ROWWISE_SHAPES) + 2 * len(MIXED_NS) + 1 == 40 + 8 + 4 + 1
    rows = []
    for i, spec in enumerate(specs):
        row = new_row(spec)
        if spec.case == "fp8_rowwise" and spec.m == 64:
            row["error"] = "KilnError: fake failure | for the table"
        else:
            ratio = 0.8
            if spec.case == "fp8":
                ratio = 1.2 if spec.m == 8192 else {4096: 0.5, 64: 0.25, 128: 0.25}[spec.m]
                if spec.m == 4096 and (spec.n, spec.k) in FP8_NK[:2]:
                    ratio = {FP8_NK[0]: 0.4, FP8_NK[1]: 0.625}[(spec.n, spec.k)]
            kiln_ms = 1.0 + i
            t_k = {"median_ms": kiln_ms, "min_ms": kiln_ms, "runs": 50}
            t_b = {"median_ms": kiln_ms * ratio, "min_ms": kiln_ms * ratio, "runs": 50}
            row.update(timing_fields(2.0 * spec.m * spec.n * spec.k, t_k, t_b), rel_l2=1e-3, kiln_kernel=f"K{i}",
                       baseline="fake", input_sets=1)
            if spec.case == "fp8":  # graph ratios: twice the event ones; fp8_fast has none
                g_k = {"median_ms": kiln_ms, "min_ms": kiln_ms, "runs": 7, "calls": 20}
                g_b = {"median_ms": 2 * kiln_ms * ratio, "min_ms": 2 * kiln_ms * ratio, "runs": 7, "calls": 20}
                row.update(graph_fields(2.0 * spec.m * spec.n * spec.k, g_k, g_b))
        if spec.case == "mixed":
            row["b_format"] = spec.variant
        rows.append(row)
    meta = {"device": "Fake GPU", "commit": "0" * 40, "torch": "-", "cuda": "-", "kiln_arch": "-", "iters": 50,
            "warmup": 10, "budget_s": 2.0, "time_utc": "-"}
    with tempfile.TemporaryDirectory() as tmp:
        summary = write_outputs(pathlib.Path(tmp) / "fake", meta, rows)
        data = json.loads((pathlib.Path(tmp) / "fake.json").read_text())
        assert data["summary"] == summary and len(data["cases"]) == len(rows)
        md = (pathlib.Path(tmp) / "fake.md").read_text()
        assert md.count("\n| ") == len(rows) + 1 and "ERROR: KilnError: fake failure / for" in md
    assert math.isclose(summary["fp8_8192_ratio"], 1.2)
    assert math.isclose(summary["fp8_m4096_geomean_ratio"], 0.5) and summary["fp8_m4096_shapes"] == 6
    assert math.isclose(summary["fp8_m4096_min_ratio"], 0.4)
    assert "M=4096 geomean ratio (6/6 shapes): 0.500, min 0.400" in md
    assert math.isclose(summary["fp8_m64_128_geomean_ratio"], 0.25) and summary["fp8_m64_128_shapes"] == 12
    assert math.isclose(summary["fp8_8192_graph_ratio"], 2.4)
    assert math.isclose(summary["fp8_m4096_geomean_graph_ratio"], 1.0)
    assert math.isclose(summary["fp8_m4096_min_graph_ratio"], 0.8)
    assert math.isclose(summary["fp8_m64_128_geomean_graph_ratio"], 0.5)
    assert summary["fast_fp8_m64_128_geomean_graph_ratio"] is None
    assert "fp8 in CUDA graphs (per call, no event pair around each): 8192^3 2.400, M=4096 geomean 1.000, " in md
    assert math.isclose(summary["fast_fp8_8192_ratio"], 0.8) and summary["fast_fp8_m4096_shapes"] == 6
    assert "fp8 fast-accum M=4096 geomean ratio (6/6 shapes): 0.800" in md
    mixed_8192 = [r["kiln_ms"] for r in rows if r["case"] == "mixed" and r["n"] == 8192]
    assert list(summary["mixed_n8192_kiln_ms"].values()) == mixed_8192
    assert math.isclose(summary["bf16_8192_ratio"], 0.8)
    assert geomean([2.0, 8.0]) == 4.0 and geomean([]) is None
    assert budget_iters(50, 5.0, 2.0) == 50 and budget_iters(50, 100.0, 2.0) == 20
    assert budget_iters(50, 1000.0, 2.0) == MIN_ITERS and budget_iters(5, 1000.0, 2.0) == 5
    empty = summarize([])
    assert empty["fp8_8192_ratio"] is None and "n/a" in summary_lines(empty)[0]
    assert empty["fp8_m4096_min_ratio"] is None and summary_lines(empty)[1].endswith("n/a, min n/a")
    print("self-check passed")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma list of {', '.join(CASES)} (default all)")
    ap.add_argument("--shapes", default=None, help="fp8 shapes MxNxK,... (replaces the default list)")
    ap.add_argument("--rowwise-shapes", default=None, help="fp8_rowwise shapes MxNxK,... (replaces the default list)")
    ap.add_argument("--mixed-m", type=int, default=4096, help="M of the mixed cases")
    ap.add_argument("--iters", type=int, default=50, help="timed runs per side (at most; see --budget-s)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=2.0,
                    help="at most this many seconds of timed runs per side of a case (down to %d runs)" % MIN_ITERS)
    ap.add_argument("--no-compile", action="store_true", help="mixed baseline in eager mode")
    ap.add_argument("--no-graph", action="store_true", help="skip the CUDA-graph timing of the fp8 cases")
    ap.add_argument("--mixed-baseline-scale", choices=["float16", "float32"], default="float16",
                    help="dtype of the scale the mixed baseline multiplies by (float32 makes its output f32)")
    ap.add_argument("--name", default=None, help="results file name (default <device>_<commit>)")
    ap.add_argument("--out", default=None, help="output path without extension (default bench/results/<name>)")
    ap.add_argument("--self-check", action="store_true", help="check the table/summary/plot code on fake rows")
    args = ap.parse_args(argv)
    if args.self_check:
        return self_check()
    if args.iters < 20:
        ap.error("--iters must be at least 20")
    args.cases = {c.strip() for c in args.cases.split(",") if c.strip()}
    if not args.cases <= set(CASES):
        ap.error(f"unknown case in {sorted(args.cases)}; known: {', '.join(CASES)}")
    specs = case_specs(args.cases,
                       FP8_SHAPES if args.shapes is None else parse_shapes(args.shapes),
                       ROWWISE_SHAPES if args.rowwise_shapes is None else
                       parse_shapes(args.rowwise_shapes, "--rowwise-shapes"),
                       args.mixed_m)
    if torch is None or not torch.cuda.is_available():
        print("bench_gemm: needs torch and a CUDA device", file=sys.stderr)
        return 2

    device = torch.cuda.get_device_name()
    commit = git_commit()
    meta = {"device": device, "commit": commit, "torch": torch.__version__, "cuda": torch.version.cuda,
            "kiln_library": None, "kiln_arch": None, "iters": args.iters, "warmup": args.warmup,
            "budget_s": args.budget_s, "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    kiln.load_library()
    meta["kiln_library"], meta["kiln_arch"] = kiln.library_path(), kiln.device_arch()

    rows = []
    t0 = time.monotonic()
    for spec in specs:
        row = run_case(spec, args)
        rows.append(row)
        cells = table_rows([row])[0]
        print("  ".join(f"{t}={c}" for (t, _k, _f), c in zip(COLUMNS, cells)), flush=True)
        torch.cuda.empty_cache()
    meta["wall_s"] = round(time.monotonic() - t0, 1)

    name = args.name or re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-").lower() + "_" + commit[:10]
    base = pathlib.Path(args.out) if args.out else REPO / "bench" / "results" / name
    write_outputs(base, meta, rows)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
