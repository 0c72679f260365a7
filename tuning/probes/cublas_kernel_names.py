#!/usr/bin/env python3
"""Which kernels torch._scaled_mm (cuBLASLt, e4m3 -> bf16, tensor scales) runs for each size of a shapes file: the
kernel names (tile, cluster, schedule) and their GPU times from torch.profiler, to compare with kiln's picks.

usage: cublas_kernel_names.py [shapes file (default tuning/probes/mid_m_shapes.txt)]"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def sizes(path):
    for line in open(path):
        line = line.split("#")[0].split()
        if len(line) >= 3:
            yield tuple(int(v) for v in line[:3])


def main(path="tuning/probes/mid_m_shapes.txt"):
    one = torch.ones((), device="cuda")
    for m, n, k in sizes(path):
        a = (torch.randn(m, k, device="cuda") / 4).to(torch.float8_e4m3fn)
        b = (torch.randn(n, k, device="cuda") / 4).to(torch.float8_e4m3fn)
        run = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                run()
            torch.cuda.synchronize()
        names = {}
        for e in prof.events():
            if e.device_type.name == "CUDA":
                names.setdefault(e.name, []).append(e.device_time)
        for name, ts in names.items():
            print(f"{m}x{n}x{k}: {sum(ts) / len(ts):7.1f} us  {name}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
