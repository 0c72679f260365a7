"""Weight-only fp8 with per-group weight scales (scale_b [N, K/128]): kiln.mixed_mm's pick against its top
candidates forced by name, per-channel scales beside it. The logics were timed with tensor scales, so the selection
does not see what the per-group scales cost each tile; this says whether another tile would be faster with them.
Prints per size: the pick's time with group and with channel scales, the fastest forced candidate with group scales,
pick / best, and the best kernel's name where it is not the pick.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/group_picks.py [--k 8] [--dtype f16|bf16]"""
import argparse
import math
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
sys.path.insert(0, "tuning/probes")
import kiln  # noqa: E402
from bench_gemm import time_fn  # noqa: E402
from mixed_picks import time_candidates  # noqa: E402

SIZES = ([(m, n, k) for (n, k) in [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (11008, 4096)]
          for m in (16, 128, 512, 2048, 4096)] + [(8192, 8192, 8192)])


def weight_sets(m, n, k, dt, total_bytes=192e6):
    """Copies of one size's operands (>= total_bytes of fp8 weights, at least two): activations, e4m3 weights
    prepacked, their per-group and per-channel scales, a bias."""
    sets = []
    for _ in range(max(2, math.ceil(total_bytes / (n * k)))):
        w = torch.randn(n, k, device="cuda", dtype=torch.float32) / k ** 0.5
        wq, sg = kiln.quantize_per_token_group(w)
        sc = (w.abs().amax(dim=1) / 448.0).float()
        sets.append({"x": torch.randn(m, k, device="cuda", dtype=dt), "packed": kiln.prepack_b(wq.t()),
                     "group": sg.contiguous(), "channel": sc, "bias": torch.randn(n, device="cuda", dtype=dt),
                     "w": (wq.float().reshape(n, -1, 128) * sg.contiguous()[:, :, None]).reshape(n, k)})
    return sets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    ap.add_argument("--budget-s", type=float, default=0.15)
    args = ap.parse_args()
    dt = torch.float16 if args.dtype == "f16" else torch.bfloat16
    picks = []
    for (m, n, k) in SIZES:
        torch.manual_seed(m + n + k)
        sets = weight_sets(m, n, k, dt)
        out = torch.empty(m, n, device="cuda", dtype=dt)
        s0 = sets[0]
        cands = kiln.query(kiln.mixed_mm, s0["x"], s0["packed"], scale_b=s0["group"], bias=s0["bias"], out=out,
                           k=args.k)
        ref = (s0["x"].float() @ s0["w"].t() + s0["bias"].float())

        def run(algo, kind="group"):
            return lambda s: kiln.mixed_mm(s["x"], s["packed"], scale_b=s[kind], bias=s["bias"], out=out, algo=algo)

        times = time_candidates(cands, run, s0, ref, sets, args.budget_s)
        t_pick = time_fn(run(None), sets, 3, 100, args.budget_s)["median_ms"]
        t_chan = time_fn(run(None, "channel"), sets, 3, 100, args.budget_s)["median_ms"]
        best = min(times)
        pb = t_pick / best[0]
        picks.append(pb)
        print(f"{m:5d} x {n:5d} x {k:5d}  group pick {t_pick * 1e3:8.1f} us  channel pick {t_chan * 1e3:8.1f} us  "
              f"group/channel {t_pick / t_chan:5.3f}  best forced {best[0] * 1e3:8.1f} us (rank {best[1]})  "
              f"pick/best {pb:5.3f}  max err {max(e for *_, e in times):.1e}", flush=True)
        if pb > 1.03:
            print(f"      pick {cands[0].name}\n      best {best[2]}", flush=True)
        del sets
        torch.cuda.empty_cache()
    print(f"sizes {len(picks)}  pick within 5% of best: {sum(p <= 1.05 for p in picks)}  mean pick/best "
          f"{sum(picks) / len(picks):.3f}  max {max(picks):.3f}")


if __name__ == "__main__":
    main()
