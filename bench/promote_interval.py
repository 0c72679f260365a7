#!/usr/bin/env python3
"""Error of every promoted fp8 kernel of a library (a kiln-gen tune build of tuning/sm90_fp8_promote_interval.yaml)
on same-sign products, by promotion interval: rel. L2 against float64 from the same fp8 inputs, beside cuBLASLt's
default mode. Usage: python3 bench/promote_interval.py <libkiln.so>"""
import os
import sys

os.environ["KILN_LIBRARY"] = sys.argv[1]
import torch  # noqa: E402

import kiln  # noqa: E402

torch.manual_seed(0)
one = torch.tensor(1.0, device="cuda")
for m, n, k in ((2048, 2048, 8192), (256, 256, 28672), (128, 4096, 16384)):
    a = (torch.randn(m, k, device="cuda").abs() + 0.5).to(torch.float8_e4m3fn)
    w = (torch.randn(n, k, device="cuda").abs() + 0.5).to(torch.float8_e4m3fn)
    ref = a.double() @ w.double().t()
    rel = lambda x: ((x.double() - ref).norm() / ref.norm()).item()  # noqa: E731
    base = torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16)
    line = [f"{m}x{n}x{k} same-sign: cuBLASLt {rel(base):.2e}"]
    for info in kiln.query(kiln.scaled_mm, a, w.t(), one, one, k=16):
        out = kiln.scaled_mm(a, w.t(), one, one, algo=info)
        tok = [t for t in info.name.split("_") if t.startswith(("MT", "PR", "PK"))]
        line.append(f"{'_'.join(tok)} {rel(out):.2e}")
    torch.cuda.synchronize()
    print("  ".join(line), flush=True)
