"""Token tiles of 192 and 256 for the weight-only kernel at mid M (100-1024 tokens): each forced by name against
kiln.mixed_mm's pick and cuBLAS f16 (F.linear with the f16 weights), checked against F.linear first. The kernels come
from the probe logic tuning/probes/sm90_mixed_wide.yaml (not shipped; its header says how to build them); f16 x e4m3
-> f16, scale per output channel, bias; weights rotated through >= 192 MB.
    KILN_LIBRARY=<libkiln.so with the probe logic> python3 tuning/probes/mixed_wide.py"""
import math
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_gemm import time_fn  # noqa: E402
from mixed_picks import weight_sets  # noqa: E402  (tuning/probes, the script's directory)

TAIL = "_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK{pk}_PR0_MC0_SAB0_WGMMA_SM90"
WIDE = ["MT256x64x128_WG1x1_MI64x256x16_PGR1", "MT256x128x128_WG1x2_MI64x256x16_PGR1",
        "MT192x64x128_WG1x1_MI64x192x16_PGR2", "MT192x128x128_WG1x2_MI64x192x16_PGR1"]
NAMES = ["Cijk_Alik_Bljk_HF8HP_" + w + TAIL.format(pk=1) for w in WIDE]
SIZES = [(m, n, k) for (n, k) in [(4096, 4096), (12288, 4096), (4096, 11008), (8192, 8192), (28672, 4096)]
         for m in (100, 160, 200, 256, 384, 512, 1024)]

best_ratio = []
for (m, n, k) in SIZES:
    torch.manual_seed(m + n + k)
    sets = weight_sets(m, n, k)
    out = torch.empty(m, n, device="cuda", dtype=torch.float16)
    s0 = sets[0]
    ref = torch.nn.functional.linear(s0["x"], s0["w16"], s0["bias"]).float()

    def run(algo):
        return lambda s: kiln.mixed_mm(s["x"], s["packed"], scale_b=s["scale"], bias=s["bias"], out=out, algo=algo)

    pick = kiln.query(kiln.mixed_mm, s0["x"], s0["packed"], scale_b=s0["scale"], bias=s0["bias"], out=out, k=1)[0]
    t_pick = time_fn(run(None), sets, 3, 100, 0.15)["median_ms"]
    t_cub = time_fn(lambda s: torch.nn.functional.linear(s["x"], s["w16"], s["bias"]), sets, 3, 100, 0.15)["median_ms"]
    row = []
    for nm in NAMES:
        a = kiln.algo_by_name(nm)
        out.fill_(float("nan"))
        err = ((run(a)(s0).float() - ref).norm() / ref.norm()).item()
        t = time_fn(run(a), sets, 3, 100, 0.15)["median_ms"] if err < 1e-2 else float("inf")
        row.append((t, err))
    tb = min(t for t, _ in row)
    best_ratio.append(t_pick / tb)
    cells = "  ".join(f"{t * 1e3:7.1f}{'' if e < 1e-2 else ' FAIL %.1e' % e}" for t, e in row)
    print(f"{m:5d} x {n:5d} x {k:5d}  pick {t_pick * 1e3:7.1f} us  wide: {cells}  cublas {t_cub * 1e3:7.1f}  "
          f"cublas/pick {t_cub / t_pick:5.3f}  cublas/best-wide {t_cub / tb:5.3f}  pick {pick.name[21:58]}", flush=True)
    del sets
    torch.cuda.empty_cache()
print("columns: " + " | ".join(WIDE))
print(f"pick / best wide: geomean {math.exp(sum(map(math.log, best_ratio)) / len(best_ratio)):.3f}")
