"""kiln.attention against cuDNN SDPA (bf16) on shapes that bench_attn does not list: batch, heads, odd lengths, GQA,
each head dim, causal and not. Per shape the two sides are timed in alternating blocks (bench_gemm.time_sides, up to
--budget-s seconds or 400 calls a side; calls under 0.1 ms one side at a time, as bench_attn), so a row's ratio does
not carry clock drift between two timing runs; prints one row a shape and the geomean per class of
bench_attn (hd128 non-causal / causal, hd64, hd256, small). kiln.attention runs as a caller would call it (it packs
V itself where that pays); cuDNN gets K and V repeated over the query heads of a group for GQA rows.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_sweep.py [--budget-s 1.0] [--only hd128]"""
import argparse
import math
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_attn import sdpa  # noqa: E402  (torch SDPA with one backend)
from bench_gemm import time_sides  # noqa: E402

# (batch, heads_q, heads_kv, seqlen, head_dim, causal)
SHAPES = [
    (2, 32, 32, 8192, 128, False), (8, 16, 16, 2048, 128, False), (1, 32, 32, 8192, 128, False),
    (2, 24, 24, 3000, 128, False), (16, 16, 16, 1024, 128, False), (1, 64, 64, 4096, 128, False),
    (2, 32, 8, 4096, 128, False), (1, 40, 40, 6000, 128, False),
    (2, 32, 32, 8192, 128, True), (8, 16, 16, 2048, 128, True), (1, 16, 16, 8192, 128, True),
    (2, 24, 24, 3000, 128, True), (2, 32, 8, 4096, 128, True), (1, 40, 40, 6000, 128, True),
    (4, 16, 16, 4096, 64, False), (1, 32, 32, 16384, 64, False), (8, 16, 16, 2048, 64, False),
    (2, 16, 16, 8192, 64, True), (2, 12, 12, 5000, 64, False),
    (1, 16, 16, 8192, 256, False), (4, 8, 8, 4096, 256, False), (2, 8, 8, 8192, 256, True), (1, 8, 8, 3000, 256, False),
    (1, 16, 16, 512, 64, False), (2, 8, 8, 512, 128, False), (1, 8, 8, 384, 64, False), (4, 8, 8, 512, 64, True),
]


def cls(s, d, causal):
    if s <= 512:
        return "small_512"
    if d == 128:
        return "hd128_causal" if causal else "hd128_noncausal"
    return f"hd{d}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget-s", type=float, default=1.0)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    by = {}
    for (b, hq, hk, s, d, causal) in SHAPES:
        c = cls(s, d, causal)
        if args.only and args.only not in c:
            continue
        torch.manual_seed(b * 7 + hq + s + d)
        q = torch.randn(b, s, hq, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b, s, hk, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        q8, k8, v8, (dq, dk, dv) = kiln.quantize_qkv(q, k, v)
        out = torch.empty(b, s, hq, d, device="cuda", dtype=torch.bfloat16)
        kw = dict(q_descale=dq, k_descale=dk, v_descale=dv, causal=causal, out=out)
        rep = hq // hk
        qt = q.transpose(1, 2).contiguous()
        kt, vt = (t.repeat_interleave(rep, dim=2).transpose(1, 2).contiguous() for t in (k, v))
        fl = 4.0 * b * hq * s * s * d * (0.5 if causal else 1.0)
        label = f"{b}x{hq}/{hk}x{s}x{d}{' causal' if causal else ''}"
        try:
            tk, tc = time_sides([lambda _: kiln.attention(q8, k8, v8, **kw),
                                 lambda _: sdpa(qt, kt, vt, causal, "cudnn")], [None], 5, 400, args.budget_s)
        except Exception as exc:  # noqa: BLE001
            print(f"{label:28s} error {type(exc).__name__}: {str(exc)[:120]}", flush=True)
            continue
        a, bb = fl / tk["median_ms"] / 1e9, fl / tc["median_ms"] / 1e9
        by.setdefault(c, []).append(a / bb)
        print(f"{label:28s} {c:16s} kiln {a:7.1f}  cudnn {bb:7.1f}  ratio {a / bb:6.3f}", flush=True)
        del q, k, v, q8, k8, v8, out, qt, kt, vt
        torch.cuda.empty_cache()
    for c, r in by.items():
        print(f"class {c:16s} n {len(r):2d} geomean {math.exp(sum(map(math.log, r)) / len(r)):.3f} min {min(r):.3f}")


if __name__ == "__main__":
    main()
