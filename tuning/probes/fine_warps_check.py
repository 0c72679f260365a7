"""The weight-only prefill tiles (128x256, two consumers: the FINE loop) with per-group scales whose f16 handling
differs between the warps of a warpgroup: rows 16-31 of every 64 with ~1e-6 scales (two multiplies a pair, the others
one), and weights quantized per group from normal values at K = 4096 / 8192 (scales on both sides of 2^-14). Each
run goes into an output poisoned with NaN and into one of zeros; then the kernel's time with per-group scales at two
prefill sizes. Run with two libraries to compare them.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/fine_warps_check.py [--time] [--small]
(--small: the 300 x 520 x 2048 case only, for compute-sanitizer.)"""
import argparse
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_gemm import time_fn  # noqa: E402

TAIL = "_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK1_PR0_MC0_SAB0_WGMMA_SM90"
TYPES = {"HF8HP": (torch.float16, torch.float8_e4m3fn), "HB8HP": (torch.float16, torch.float8_e5m2),
         "BF8BP": (torch.bfloat16, torch.float8_e4m3fn), "BB8BP": (torch.bfloat16, torch.float8_e5m2)}


def fine(t, pgr):
    return f"Cijk_Alik_Bljk_{t}_MT128x256x128_WG1x2_MI64x128x16_PGR{pgr}{TAIL}"


def operands(kind, m, n, k, at, bt):
    """(a, packed weights, scale_b [N, K/128], the dequantized weights in float64 [N, K])."""
    a = torch.randn(m, k, device="cuda").to(at)
    if kind == "warps":
        w = (torch.randn(n, k, device="cuda") * 64).clamp(-400, 400).to(bt)
        sg = torch.rand(n, -(-k // 128), device="cuda") + 0.5
        sg[torch.arange(n, device="cuda") % 64 // 16 == 1] *= 1e-6
    else:  # quantized per group from normal weights (std 1/sqrt(K): scales near 2^-14; "single": std 0.05, above)
        std = 0.05 if kind == "single" else k ** -0.5
        w, sg = kiln.quantize_per_token_group(torch.randn(n, k, device="cuda") * std, dtype=bt)
        sg = sg.contiguous()
    wd = w.double() * sg.double().repeat_interleave(128, 1)[:, :k]
    return a, kiln.prepack_b(w.t()), sg, wd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--small", action="store_true")
    args = ap.parse_args()
    bad = 0
    for t, (at, bt) in TYPES.items():
        for pgr in (1, 2):
            try:
                algo = kiln.algo_by_name(fine(t, pgr))
            except Exception:  # noqa: BLE001 -- not in this library
                continue
            cases = [("warps", (300, 520, 2048)), ("quantized", (1024, 4096, 4096)), ("quantized", (512, 2048, 8192))]
            for kind, (m, n, k) in cases[:1] if args.small else cases:
                a, packed, sg, wd = operands(kind, m, n, k, at, bt)
                ref = a.double() @ wd.t()
                outs = []
                for fill in (float("nan"), 0.0):
                    out = torch.full((m, n), fill, device="cuda", dtype=at)
                    kiln.mixed_mm(a, packed, scale_b=sg, out=out, algo=algo)
                    outs.append(out.double())
                err = ((outs[1] - ref).norm() / ref.norm()).item()
                same = torch.equal(outs[0], outs[1])
                ok = err < 1e-2 and same
                bad += not ok
                print(f"{t} PGR{pgr} {kind:9s} {m}x{n}x{k}: rel_l2 {err:.2e}, both runs equal {same}: "
                      f"{'ok' if ok else 'BAD'}", flush=True)
    print("ALL OK" if not bad else f"{bad} BAD", flush=True)
    if args.time:  # "single": every scale takes one multiply (bench_w8's weights), so no K-tile's choice differs
        for kind in ("quantized", "single"):
            for (m, n, k) in ((8192, 8192, 8192), (4096, 4096, 14336), (4096, 14336, 4096)):
                a, packed, sg, _ = operands(kind, m, n, k, torch.float16, torch.float8_e4m3fn)
                out = torch.empty(m, n, device="cuda", dtype=torch.float16)
                algo = kiln.algo_by_name(fine("HF8HP", 1))
                ms = time_fn(lambda s: kiln.mixed_mm(a, packed, scale_b=sg, out=out, algo=algo), [None], 3, 50,
                             1.0)["median_ms"]
                print(f"time HF8HP PGR1 {m}x{n}x{k} per-group {kind:9s}: {ms * 1e3:.1f} us "
                      f"({2 * m * n * k / ms / 1e9:.0f} TFLOP/s)", flush=True)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
