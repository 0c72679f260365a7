"""kiln.attention against cuDNN SDPA (bf16) under steady clocks: the sides run in alternating blocks of calls (the
order turned each round) for about --seconds of GPU time a shape, so that all see the same clocks and temperature.
bench_attn times each side once for ~30 calls in a row; this says how far its ratios move under a long run.
Sides: kiln (V as given: kiln.attention's default, packing V where it pays), kiln_vt (V packed once by the caller),
cudnn. Prints median TFLOP/s a side over all calls and over the first and last thirds, and the ratios.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_steady.py [--seconds S] [label ...]
(labels BxHxSxD, a trailing c for causal; default: bench_attn's non-causal head dim 128 and 256 rows)"""
import argparse
import statistics
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_attn import sdpa  # noqa: E402

DEFAULT = ["4x32x4096x128", "1x16x16384x128", "2x8x8192x256"]


def parse(label):
    causal = label.endswith("c")
    b, h, s, d = (int(x) for x in label.rstrip("c").split("x"))
    return b, h, s, d, causal


def sides_for(b, h, s, d, causal):
    torch.manual_seed(b * 7 + s + d)
    x = [torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    qf, kf, vf, (dq, dk, dv) = kiln.quantize_qkv(*x)
    out = torch.empty(b, s, h, d, dtype=torch.bfloat16, device="cuda")
    packed = kiln.attention_pack_v(vf)
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in x)
    return {
        "kiln": lambda: kiln.attention(qf, kf, vf, q_descale=dq, k_descale=dk, v_descale=dv, causal=causal, out=out),
        "kiln_vt": lambda: kiln.attention(qf, kf, packed, q_descale=dq, k_descale=dk, v_descale=dv, causal=causal,
                                          out=out),
        "cudnn": lambda: sdpa(qt, kt, vt, causal, "cudnn"),
    }


def run(label, seconds, block):
    b, h, s, d, causal = parse(label)
    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    sides = sides_for(b, h, s, d, causal)
    names = list(sides)
    for fn in sides.values():  # warm-up and an estimate of one call
        fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for fn in sides.values():
        fn()
    e1.record()
    torch.cuda.synchronize()
    per_round = e0.elapsed_time(e1) * block  # ms of one round (every side one block)
    rounds = max(3, int(seconds * 1e3 / per_round))
    ev = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            for _ in range(block):
                a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                sides[n]()
                z.record()
                ev[n].append((a, z))
        torch.cuda.synchronize()  # (the host waits once a round; the queue holds a round's calls)
    res = {}
    for n in names:
        ms = [a.elapsed_time(z) for a, z in ev[n]]
        third = max(1, len(ms) // 3)
        res[n] = {k: flops / (statistics.median(v) * 1e-3) / 1e12
                  for k, v in (("all", ms), ("first", ms[:third]), ("last", ms[-third:]))}
        res[n]["calls"] = len(ms)
    row = (f"{label:<18} " + " ".join(f"{n} {res[n]['all']:7.1f} ({res[n]['first']:.0f}/{res[n]['last']:.0f})"
                                      for n in names)
           + f" | kiln/cudnn {res['kiln']['all'] / res['cudnn']['all']:.3f}"
           + f" (first {res['kiln']['first'] / res['cudnn']['first']:.3f}, last "
           + f"{res['kiln']['last'] / res['cudnn']['last']:.3f})"
           + f" kiln_vt/cudnn {res['kiln_vt']['all'] / res['cudnn']['all']:.3f} [{res['kiln']['calls']} calls a side]")
    print(row, flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--block", type=int, default=10)
    ap.add_argument("labels", nargs="*")
    a = ap.parse_args()
    print(f"{torch.cuda.get_device_name()}: median TFLOP/s a side (first third / last third)", flush=True)
    for label in a.labels or DEFAULT:
        run(label, a.seconds, a.block)


if __name__ == "__main__":
    main()
