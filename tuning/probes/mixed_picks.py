"""Weight-only fp8 at sizes off the mixed tune's grid: kiln.mixed_mm's pick (f16 activations x prepacked e4m3
weights, scale per output channel, bias) against each of its top candidates forced by name, and cuBLAS f16 (F.linear
with the f16 weights, what the target compares with). M takes values the grid lacks (2-8 decode batches, 24-100,
200-3000) on layers of the grid and off it. Weights rotate through copies of >= 192 MB so that each call reads them
from HBM, as a model's next layer does. Prints per size: TFLOP/s or TB/s of fp8 weights, pick / best, cuBLAS / pick.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/mixed_picks.py [--k 10] [--dtype f16|bf16]
(--dtype bf16: bf16 activations and output against cuBLAS bf16, the bf16 logic's picks.)"""
import argparse
import math
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_gemm import time_fn  # noqa: E402

SIZES = [(m, n, k) for (n, k) in [(4096, 4096), (12288, 4096), (11008, 4096), (4096, 11008), (8192, 8192)]
         for m in (2, 4, 8, 24, 40, 100, 200)] + [(m, 12288, 4096) for m in (384, 700, 1500, 3000)]


def weight_sets(m, n, k, dt=torch.float16, total_bytes=192e6):
    """Input sets of one size: activations, per-channel e4m3 weights prepacked, their scales, a bias and the f16
    weights cuBLAS reads, as many copies as make total_bytes of fp8 weights (at least two)."""
    sets = []
    for _ in range(max(2, math.ceil(total_bytes / (n * k)))):
        w = torch.randn(n, k, device="cuda", dtype=dt) / k ** 0.5
        sc = w.abs().amax(dim=1).float() / 448.0
        wq = (w / sc[:, None].to(dt)).to(torch.float8_e4m3fn)
        sets.append({"x": torch.randn(m, k, device="cuda", dtype=dt), "packed": kiln.prepack_b(wq.t()),
                     "scale": sc, "bias": torch.randn(n, device="cuda", dtype=dt),
                     "w16": (wq.to(dt) * sc[:, None].to(dt)).contiguous()})
    return sets


def time_candidates(cands, run, s0, ref, sets, budget_s) -> list:
    """(median ms, rank, name, rel L2 against ref on s0) of each candidate forced by run(algo); inf ms where the
    result is wrong (rel L2 >= 1e-2, NaN included)."""
    times = []
    for i, a in enumerate(cands):
        got = run(a)(s0).float()
        err = ((got - ref).norm() / ref.norm()).item()
        t = time_fn(run(a), sets, 3, 100, budget_s)["median_ms"] if err < 1e-2 else float("inf")
        times.append((t, i, a.name, err))
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=0.15)
    ap.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    args = ap.parse_args()
    dt = torch.float16 if args.dtype == "f16" else torch.bfloat16
    ratios, picks = [], []
    for (m, n, k) in SIZES:
        torch.manual_seed(m + n + k)
        sets = weight_sets(m, n, k, dt)
        out = torch.empty(m, n, device="cuda", dtype=dt)
        s0 = sets[0]
        cands = kiln.query(kiln.mixed_mm, s0["x"], s0["packed"], scale_b=s0["scale"], bias=s0["bias"], out=out,
                           k=args.k)
        ref = torch.nn.functional.linear(s0["x"], s0["w16"], s0["bias"]).float()

        def run(algo):
            return lambda s: kiln.mixed_mm(s["x"], s["packed"], scale_b=s["scale"], bias=s["bias"], out=out, algo=algo)

        times = time_candidates(cands, run, s0, ref, sets, args.budget_s)
        t_pick = time_fn(run(None), sets, 3, 100, args.budget_s)["median_ms"]
        t_cub = time_fn(lambda s: torch.nn.functional.linear(s["x"], s["w16"], s["bias"]), sets, 3, 100,
                        args.budget_s)["median_ms"]
        best = min(times)
        pb = t_pick / best[0]
        picks.append(pb)
        ratios.append(t_cub / t_pick)
        print(f"{m:5d} x {n:5d} x {k:5d}  pick {t_pick * 1e3:8.1f} us ({n * k / t_pick / 1e9:5.2f} TB/s)  "
              f"best {best[0] * 1e3:8.1f} us (rank {best[1]})  pick/best {pb:5.3f}  "
              f"cublas {args.dtype} {t_cub * 1e3:8.1f} us  cublas/pick {t_cub / t_pick:5.3f}", flush=True)
        if pb > 1.05:
            print(f"      pick {cands[0].name}\n      best {best[2]}", flush=True)
        del sets
        torch.cuda.empty_cache()
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"sizes {len(picks)}  pick within 10% of best: {sum(p <= 1.10 for p in picks)}  mean pick/best "
          f"{sum(picks) / len(picks):.3f}  max {max(picks):.3f}  geomean cublas/pick {g:.3f}")


if __name__ == "__main__":
    main()
