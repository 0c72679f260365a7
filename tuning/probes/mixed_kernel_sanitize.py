"""Weight-only launches of named kernels (default: the 64x128 two-consumer split-K 2 tile that the M-grid retune
added, f16 and bf16 activations), per-channel scales with a bias and per-group scales, odd shapes, each against a
float64 product; for compute-sanitizer:
    KILN_LIBRARY=<libkiln.so> compute-sanitizer --tool memcheck python3 tuning/probes/mixed_kernel_sanitize.py
    [--tiles MT64x128x128_WG1x2_MI64x64x16_PGR4_..._GSU2_...] (the name after the type token)"""
import argparse
import sys

import torch

sys.path.insert(0, "runtime/python")
import kiln  # noqa: E402

NEW = ("MT64x128x128_WG1x2_MI64x64x16_PGR4_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU2_WGM8_VWA16_VWB16_LDSB0_TLDS1"
       "_LBSPP0_WSGR0_OCC0_PK1_PR0_MC0_SAB0_WGMMA_SM90")
SHAPES = [(77, 520, 1000), (40, 4100, 4096), (130, 384, 2944)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiles", nargs="+", default=[NEW])
    args = ap.parse_args()
    ok = True
    for t, at, bt in (("HF8HP", torch.float16, torch.float8_e4m3fn), ("HB8HP", torch.float16, torch.float8_e5m2),
                      ("BF8BP", torch.bfloat16, torch.float8_e4m3fn)):
        for tile in args.tiles:
            try:
                algo = kiln.algo_by_name(f"Cijk_Alik_Bljk_{t}_{tile}")
            except Exception as exc:  # noqa: BLE001 -- a type the library does not hold this tile for
                print(f"{t} {tile}: {exc}")
                continue
            for m, n, k in SHAPES:
                a = torch.randn(m, k, device="cuda").to(at)
                w = (torch.randn(n, k, device="cuda") * 64).clamp(-400, 400).to(bt)
                packed = kiln.prepack_b(w.t())
                bias = torch.randn(n, device="cuda").to(at)
                sc = torch.rand(n, device="cuda") + 0.5
                sg = torch.rand(n, -(-k // 128), device="cuda") + 0.5
                for kind, sb in (("channel", sc), ("group", sg)):
                    wd = w.double() * (sc.double()[:, None] if kind == "channel"
                                       else sg.double().repeat_interleave(128, 1)[:, :k])
                    ref = a.double() @ wd.t() + bias.double()
                    out = torch.full((m, n), float("nan"), device="cuda", dtype=at)
                    kiln.mixed_mm(a, packed, scale_b=sb, bias=bias, out=out, algo=algo)
                    err = ((out.double() - ref).norm() / ref.norm()).item()
                    good = err < 1e-2 and not out.isnan().any().item()
                    print(f"{t} {m}x{n}x{k} {kind} rel_l2 {err:.2e} {'ok' if good else 'BAD'}")
                    ok &= good
    torch.cuda.synchronize()
    print("ALL OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
