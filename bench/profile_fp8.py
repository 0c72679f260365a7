#!/usr/bin/env python3
"""Which kernel each side runs, and one shape under a profiler: the groundwork for tuning the sm90 fp8 path.

    python3 bench/profile_fp8.py names [--shapes MxNxK,...]      # kernel names + GPU µs of kiln's pick and of
                                                                  # torch._scaled_mm (cuBLASLt) per shape (torch.profiler)
    ncu --clock-control none --profile-from-start off --launch-skip 1 --launch-count 1 \
        python3 bench/profile_fp8.py run --op kiln|cublas --shape MxNxK [--iters 3]

e4m3 x e4m3 -> bf16 with per-tensor scales, A [M, K] and B [N, K] K-major (the bench_gemm.py fp8 case), random data.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "runtime" / "python"))
sys.path.insert(0, str(REPO / "bench"))

import torch  # noqa: E402

import kiln  # noqa: E402
from bench_gemm import FP8_SHAPES  # noqa: E402


def operands(m, n, k):
    a = (torch.randn(m, k, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    return a, b.t(), one, one


def call(op, ops):
    a, b, sa, sb = ops
    if op == "kiln":
        return kiln.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)
    return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def gpu_kernels(op, ops, reps=5):
    """(name, mean µs) of the GPU kernels one call launches, from torch.profiler over reps calls."""
    for _ in range(3):
        call(op, ops)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            call(op, ops)
        torch.cuda.synchronize()
    rows = []
    for ev in prof.key_averages():
        if ev.device_type == torch.autograd.DeviceType.CUDA and ev.count:
            rows.append((ev.key, ev.device_time_total / reps))
    return sorted(rows, key=lambda r: -r[1])


def parse(text):
    return [tuple(int(v) for v in s.split("x")) for s in text.split(",") if s]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    names = sub.add_parser("names")
    names.add_argument("--shapes", type=parse, default=FP8_SHAPES)
    run = sub.add_parser("run")
    run.add_argument("--op", choices=("kiln", "cublas"), required=True)
    run.add_argument("--shape", type=parse, required=True)
    run.add_argument("--iters", type=int, default=3)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        ops = operands(*args.shape[0])
        call(args.op, ops)  # module load and first-call set-up stay outside the profiled range
        torch.cuda.synchronize()
        torch.cuda.profiler.start()  # ncu --profile-from-start off sees only these calls
        for _ in range(args.iters):
            call(args.op, ops)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        return 0
    print("| M | N | K | kiln µs | cuBLASLt µs | kiln kernel | cuBLASLt kernel(s) |")
    print("|---|---|---|---|---|---|---|")
    for m, n, k in args.shapes:
        ops = operands(m, n, k)
        ours, theirs = gpu_kernels("kiln", ops), gpu_kernels("cublas", ops)
        print(f"| {m} | {n} | {k} | {sum(t for _n, t in ours):.1f} | {sum(t for _n, t in theirs):.1f} | "
              f"{'; '.join(n_ for n_, _t in ours)} | {'; '.join(n_ for n_, _t in theirs)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
