"""Per-group-scaled weight-only launches of the kernels the group-scale paths run (the FINE 128x256 prefill tile,
the weight-scaled 64x128 tile, a decode tile), f16 x e4m3 and bf16 x e5m2, scales of one magnitude and mixed (every
fifth row ~1e-6, so warps take the two-multiply path), each against a float64 product; for compute-sanitizer:
    KILN_LIBRARY=<libkiln.so> compute-sanitizer --tool racecheck python3 tuning/probes/group_scale_sanitize.py"""
import sys

import torch

sys.path.insert(0, "runtime/python")
import kiln  # noqa: E402

TAIL = "_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK1_PR0_MC0_SAB0_WGMMA_SM90"
TILES = ["MT128x256x128_WG1x2_MI64x128x16_PGR1", "MT64x128x128_WG1x2_MI64x64x16_PGR4", "MT8x128x128_WG1x2_MI64x8x16_PGR8"]


def main():
    ok = True
    for t, at, bt in (("HF8HP", torch.float16, torch.float8_e4m3fn), ("BB8BP", torch.bfloat16, torch.float8_e5m2)):
        for tile in TILES:
            algo = kiln.algo_by_name(f"Cijk_Alik_Bljk_{t}_{tile}{TAIL}")
            for mixed in (False, True):
                m, n, k = (5 if tile.startswith("MT8x") else 300), 520, 1000
                a = torch.randn(m, k, device="cuda").to(at)
                w = (torch.randn(n, k, device="cuda") * 64).clamp(-400, 400).to(bt)
                sb = torch.rand(n, -(-k // 128), device="cuda") + 0.5
                if mixed:
                    sb[::5] *= 1e-6
                ref = a.double() @ (w.double() * sb.double().repeat_interleave(128, 1)[:, :k]).t()
                out = kiln.mixed_mm(a, kiln.prepack_b(w.t()), scale_b=sb, algo=algo)
                err = ((out.double() - ref).norm() / ref.norm()).item()
                print(f"{t} {tile} mixed={mixed} rel_l2 {err:.2e}")
                ok &= err < 1e-2
    torch.cuda.synchronize()
    print("ALL OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
