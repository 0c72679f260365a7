"""Per-group weight scales against per-channel ones on the same weight-only kernel (f16 activations x prepacked
e4m3 weights, bias): for each size the kernel kiln.mixed_mm picks with per-channel scales is forced for both, so the
ratio group / channel is what the group scales cost in that kernel. Weights rotate through copies of >= 192 MB.
Run once per probe library (KILN_LIBRARY), e.g. builds with -DKILN_PROBE_GS_* macros:
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/group_scale_probe.py --label base"""
import argparse
import math
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_gemm import time_fn  # noqa: E402

SIZES = [(8192, 8192, 8192), (4096, 4096, 14336), (256, 4096, 4096), (64, 8192, 8192), (1, 8192, 8192),
         (16, 8192, 8192), (1, 28672, 4096), (1, 4096, 14336)]


def make_sets(m, n, k, total_bytes=192e6):
    sets = []
    for _ in range(max(2, math.ceil(total_bytes / (n * k)))):
        w = torch.randn(n, k, device="cuda") * 0.05
        gs = w.reshape(n, k // 128, 128).abs().amax(dim=2).clamp_min(1e-8) / 448.0
        wq = (w / gs.repeat_interleave(128, dim=1)).to(torch.float8_e4m3fn)
        sets.append({"x": torch.randn(m, k, device="cuda", dtype=torch.float16), "packed": kiln.prepack_b(wq.t()),
                     "gscale": gs.float().contiguous(), "cscale": gs.amax(dim=1).float().contiguous(),
                     "gscale_n": gs.float().t().contiguous().t(),  # the same [N, K/128] values stored N-major
                     "bias": torch.randn(n, device="cuda", dtype=torch.float16) * 0.1,
                     "w16": (wq.float() * gs.repeat_interleave(128, dim=1)).half()})
    return sets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--budget-s", type=float, default=0.3)
    ap.add_argument("--min-m", type=int, default=1, help="only the sizes with at least this M")
    args = ap.parse_args()
    for (m, n, k) in [s for s in SIZES if s[0] >= args.min_m]:
        torch.manual_seed(m + n + k)
        sets = make_sets(m, n, k)
        out = torch.empty(m, n, device="cuda", dtype=torch.float16)
        s0 = sets[0]
        algo = kiln.query(kiln.mixed_mm, s0["x"], s0["packed"], scale_b=s0["cscale"], bias=s0["bias"], out=out,
                          k=1)[0]

        def run(key):
            return lambda s: kiln.mixed_mm(s["x"], s["packed"], scale_b=s[key], bias=s["bias"], out=out, algo=algo)

        ref = torch.nn.functional.linear(s0["x"], s0["w16"], s0["bias"]).float()
        got = run("gscale")(s0).float()
        err = ((got - ref).norm() / ref.norm()).item()
        tc = time_fn(run("cscale"), sets, 3, 100, args.budget_s)["median_ms"]
        tg = time_fn(run("gscale"), sets, 3, 100, args.budget_s)["median_ms"]
        tn = time_fn(run("gscale_n"), sets, 3, 100, args.budget_s)["median_ms"]
        tc2 = time_fn(run("cscale"), sets, 3, 100, args.budget_s)["median_ms"]
        tc = min(tc, tc2)
        got_n = run("gscale_n")(s0).float()
        err_n = ((got_n - ref).norm() / ref.norm()).item()
        print(f"{args.label:8s} {m:5d}x{n:5d}x{k:5d} channel {tc * 1e3:9.1f} us  group {tg * 1e3:9.1f} us  "
              f"group/channel {tg / tc:6.3f}  n-major {tn / tc:6.3f}  rel_l2 {err:.1e} {err_n:.1e}  "
              f"{algo.name[15:60]}", flush=True)
        del sets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
