#!/usr/bin/env python3
"""Probe: would swap-AB pay for the fp8 x fp8 GEMM at small and mid M? A swap-AB kernel computes D^T = B A^T, so
that the weights take wgmma's 64-row M side and the tokens its N side, which can be any multiple of 8 (cuBLASLt's
mid-M kernels size that side to make about one wave: 96, 112, 152 tokens). The shipped kernels can already run the
transposed problem: kiln.scaled_mm(W, X) is D^T = W X^T of shape N x M, the weights as its rows. Its mainloop is
what a swap-AB kernel's would be (same operands, same tiles, tokens on the column side); only the output is written
transposed (same bytes). So the best of kiln.query's candidates on the transposed problem, timed against the pick on
the problem as given, is what swap-AB would gain with today's tile widths (column tiles of 32 to 256).

Per shape, in one process, bench_gemm's timing (operand sets rotated, alternating blocks): the pick against
cuBLASLt (torch._scaled_mm), then each of the transposed problem's top k against the pick.

    KILN_LIBRARY=build/libkiln.so PYTHONPATH=runtime/python python3 tuning/probes/swap_estimate.py \
        [--k 6] [--shapes MxNxK,...] [--json F]
"""
import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch  # noqa: E402

import bench_gemm as bg  # noqa: E402
import kiln  # noqa: E402
from ab_table import short  # noqa: E402

# Small and mid M at the large N and K of LLM layers; none in bench/heldout_shapes.txt, the tuning grids or
# tuning/probes/mid_m_shapes.txt.
SHAPES = "24x8192x8192,48x14336x4096,96x4096x14336,160x28672x4096,200x11008x4096,300x7168x18432," \
         "300x3584x14336,450x5120x20480,640x8192x8192,800x3072x12288,250x57344x8192,180x4096x28672"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--budget-s", type=float, default=0.6)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for m, n, k in bg.parse_shapes(args.shapes):
        case = bg.fp8_case(bg.Spec("fp8", m, n, k), rowwise=False)
        sets = [case.make() for _ in range(bg.n_sets_for(case.set_bytes))]
        for s in sets:  # the transposed problem's operands: W [N, K] as A, X [M, K] as B (a K-major view, no copy)
            s["ta"], s["tb"] = s["b"].t(), s["a"].t()
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        tout = torch.empty(n, m, dtype=torch.bfloat16, device="cuda")
        s0 = sets[0]
        pick = kiln.query(kiln.scaled_mm, s0["a"], s0["b"], s0["sa"], s0["sb"], out=out, k=1)[0]
        cands = kiln.query(kiln.scaled_mm, s0["ta"], s0["tb"], s0["sb"], s0["sa"], out=tout, k=args.k)
        ref = kiln.scaled_mm(s0["a"], s0["b"], s0["sa"], s0["sb"], out=out, algo=pick).float()

        def mine(s):
            return kiln.scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out=out, algo=pick)

        ours, theirs = bg.time_pair(mine, case.theirs, sets, 5, 60, args.budget_s * 2)
        row = {"shape": f"{m}x{n}x{k}", "pick": pick.name, "pick_ms": ours["median_ms"],
               "cublaslt_ms": theirs["median_ms"], "swapped": []}
        print(f"{m}x{n}x{k}: pick {short(pick.name)} {ours['median_ms'] * 1e3:.1f} us, cuBLASLt "
              f"{theirs['median_ms'] * 1e3:.1f} us (cuBLASLt / pick {theirs['median_ms'] / ours['median_ms']:.3f})",
              flush=True)
        for info in cands:
            def swapped(s, info=info):
                return kiln.scaled_mm(s["ta"], s["tb"], s["sb"], s["sa"], out=tout, algo=info)

            got = swapped(s0).float().t()
            err = float((got - ref).norm() / max(ref.norm(), 1e-30))
            p, a = bg.time_pair(mine, swapped, sets, 5, 60, args.budget_s)
            row["swapped"].append({"name": info.name, "ms": a["median_ms"], "pick_ms": p["median_ms"],
                                   "rel_l2_vs_pick": err})
            print(f"    D^T {short(info.name):30s} {a['median_ms'] * 1e3:7.1f} us, pick {p['median_ms'] * 1e3:7.1f}: "
                  f"pick / it {p['median_ms'] / a['median_ms']:.3f}  (rel L2 vs pick {err:.1e})", flush=True)
        best = max(row["swapped"], key=lambda c: c["pick_ms"] / c["ms"])
        row["best_swapped"] = best["name"]
        row["gain"] = best["pick_ms"] / best["ms"]  # > 1: the transposed problem's best runs faster than the pick
        row["cublaslt_over_pick"] = theirs["median_ms"] / ours["median_ms"]
        row["cublaslt_over_best"] = row["cublaslt_over_pick"] * max(row["gain"], 1.0)
        rows.append(row)
        del sets
        torch.cuda.empty_cache()

    def geo(key):
        return math.exp(sum(math.log(r[key]) for r in rows) / len(rows))

    summary = {"shapes": len(rows), "geomean_gain": geo("gain"), "geomean_cublaslt_over_pick": geo("cublaslt_over_pick"),
               "geomean_cublaslt_over_best_of_both": geo("cublaslt_over_best"),
               "shapes_gaining_5pct": sum(r["gain"] >= 1.05 for r in rows)}
    print("\n| shape | pick | cuBLASLt / pick | best D^T kernel | pick / best D^T |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['shape']} | {short(r['pick'])} | {r['cublaslt_over_pick']:.3f} | {short(r['best_swapped'])} | "
              f"{r['gain']:.3f} |")
    print(json.dumps(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "summary": summary,
                                               "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
