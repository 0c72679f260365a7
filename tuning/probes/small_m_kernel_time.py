"""Small-M block-scaled fp8 GEMM (bench_moe's M in {64, 128} rows): kiln and cuBLASLt blockwise timed three ways,
to separate the kernels from what each call's timing adds. DeepGEMM's published figures, the anchor of those rows,
are kernel times.
  events  bench_gemm.time_pair as bench_moe times them: an event pair around each call, calls queued ahead;
  kernel  torch.profiler's device time of the call's kernels (all of them: a split's reduce too), per call;
  graph   bench_gemm.time_graph: each side's calls in a CUDA graph, replayed between two events, per call
          (back-to-back launches, no host; tuning/results/probe_small_m_kernel_time_h100.txt came from 8179fc4's
          own version: 20 calls of one input set, 10 replays a side one after the other).
  KILN_LIBRARY=... python3 tuning/probes/small_m_kernel_time.py"""
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_gemm import time_graph, time_pair  # noqa: E402
from bench_moe import (BLOCK_NK, DEEPGEMM_H800_TFLOPS, block_make, pick_torch_layout, rel_l2_and_finite,  # noqa: E402
                       torch_blockwise)


def kernel_us(fn, s, calls=40):
    fn(s)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(s)
        torch.cuda.synchronize()
    total = 0.0
    for e in prof.key_averages():
        total += getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0.0)
    return total / calls


print("shape | kiln: events kernel graph us | cuBLASLt: events kernel graph us | DeepGEMM H800 us (published) | "
      "kiln kernel TFLOP/s, / DeepGEMM")
for m in (64, 128):
    for n, k in BLOCK_NK:
        torch.manual_seed(7)
        sets = [block_make(m, n, k) for _ in range(4)]
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        ref = kiln.block_scaled_reference(sets[0]["a"], sets[0]["b"], sets[0]["sa"], sets[0]["sb"])
        ours = lambda s: kiln.block_scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out=out)  # noqa: E731
        err, _ = rel_l2_and_finite(ours(sets[0]), ref)
        pick_torch_layout(sets, ref)  # writes the scale_b torch takes into every set
        ta, tb = time_pair(ours, torch_blockwise, sets, 10, 200, 0.6)
        ka, kb = kernel_us(ours, sets[0]), kernel_us(torch_blockwise, sets[0])
        try:
            ga, gb = (t["median_ms"] * 1e3 for t in time_graph([ours, torch_blockwise], sets, ta["median_ms"]))
        except Exception as exc:  # noqa: BLE001 - a call that cannot be captured: say so, keep the other columns
            print(f"  graph capture failed: {type(exc).__name__}: {str(exc)[:120]}")
            ga = gb = float("nan")
        fl = 2.0 * m * n * k
        dg = DEEPGEMM_H800_TFLOPS.get((m, n, k))
        dg_us = fl / dg / 1e6 if dg else float("nan")
        print(f"{m}x{n}x{k} | {ta['median_ms'] * 1e3:.2f} {ka:.2f} {ga:.2f} | {tb['median_ms'] * 1e3:.2f} {kb:.2f} "
              f"{gb:.2f} | {dg_us:.2f} | {fl / ka / 1e6:.0f}, {dg_us / ka:.3f} (rel L2 {err:.1e})", flush=True)
