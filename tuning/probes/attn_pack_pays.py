#!/usr/bin/env python3
"""Whether kiln.attention's own pass over V pays (kiln._attention._pack_pays), measured: per shape, in one process,
kiln.attention with pack_v=None (the estimate's choice), False (the kernel that widens V in place) and True (the pass,
then the packed-V kernel), and torch SDPA bf16 on cuDNN; TFLOP/s (bench_gemm.py's time_fn, median), the estimate's
choice and whether it picked the faster path. Needs only the two head dim 128 persistent e4m3 -> bf16 kernels in the
library (KILN_LIBRARY), which a build from a trimmed kernels.cmake makes in seconds.

    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_pack_pays.py [--shapes 4x32x4096x128c,...]
"""
import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from bench_attn import Shape, sdpa  # noqa: E402  (puts runtime/python on the path)
from bench_gemm import tflops, time_fn  # noqa: E402

import kiln  # noqa: E402
import torch  # noqa: E402
from kiln._attention import _pack_pays  # noqa: E402


def parse(s: str) -> Shape:
    causal = s.endswith("c")
    b, h, n, d = (int(x) for x in s.rstrip("c").split("x"))
    return Shape(b, h, n, d, causal)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4x32x4096x128c,4x32x4096x128,8x16x2048x128c,8x16x2048x128,"
                                        "2x32x4096x128c,1x16x16384x128c,4x8x4096x128c")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--budget-s", type=float, default=3.0)
    a = ap.parse_args()
    print(f"{'shape':<22} {'choice':>6} {'auto':>7} {'widened':>8} {'packed':>8} {'cudnn':>7}  auto/cudnn  right")
    for sh in (parse(s) for s in a.shapes.split(",")):
        x = [torch.randn(sh.b, sh.s, sh.h, sh.d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
        qf, kf, vf, (dq, dk, dv) = kiln.quantize_qkv(*x)
        out = torch.empty(sh.b, sh.s, sh.h, sh.d, dtype=torch.bfloat16, device="cuda")
        t = {}
        for name, pv in (("auto", None), ("widened", False), ("packed", True)):
            def run(_, pv=pv):
                return kiln.attention(qf, kf, vf, q_descale=dq, k_descale=dk, v_descale=dv, causal=sh.causal, out=out,
                                      pack_v=pv)
            t[name] = tflops(sh.flops, time_fn(run, [None], a.warmup, a.iters, a.budget_s)["median_ms"])
        qt, kt, vt = (u.transpose(1, 2).contiguous() for u in x)
        t["cudnn"] = tflops(sh.flops, time_fn(lambda _: sdpa(qt, kt, vt, sh.causal, "cudnn"), [None], a.warmup,
                                              a.iters, a.budget_s)["median_ms"])
        choice = _pack_pays(sh.b, sh.h, sh.h, sh.s, sh.s, sh.d, sh.causal)
        right = (t["packed"] >= t["widened"]) == choice
        print(f"{sh.label:<22} {'pack' if choice else 'widen':>6} {t['auto']:7.1f} {t['widened']:8.1f} "
              f"{t['packed']:8.1f} {t['cudnn']:7.1f}  {t['auto'] / t['cudnn']:9.3f}  {'yes' if right else 'NO'}")
        del x, qf, kf, vf, out, qt, kt, vt
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
