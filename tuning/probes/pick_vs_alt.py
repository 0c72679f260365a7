#!/usr/bin/env python3
"""Probe: under bench_gemm's conditions (operand sets rotated, kiln and the other side timed in alternating blocks,
bench_gemm.time_pair), is the fp8 logic's pick the fastest of kiln.query's top candidates? Per shape: the pick
against cuBLASLt (torch._scaled_mm), then each other candidate against the pick. The tune times candidates alone
with kiln_bench (cold L2, one kernel at a time); this asks whether that order holds where the bench measures.

    KILN_LIBRARY=build/libkiln.so PYTHONPATH=runtime/python python3 tuning/probes/pick_vs_alt.py [--k 6] [--json F]
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import torch  # noqa: E402

import bench_gemm as bg  # noqa: E402
import kiln  # noqa: E402
from ab_table import short  # noqa: E402  (this script's folder is on sys.path when it runs)

SHAPES = [(8192, 8192, 8192), (4096, 2112, 7168), (4096, 24576, 1536), (4096, 32768, 512), (4096, 7168, 16384),
          (4096, 4096, 7168), (4096, 7168, 2048)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for m, n, k in SHAPES:
        case = bg.fp8_case(bg.Spec("fp8", m, n, k), rowwise=False)
        sets = [case.make() for _ in range(bg.n_sets_for(case.set_bytes))]
        cands = kiln.query(kiln.scaled_mm, sets[0]["a"], sets[0]["b"], sets[0]["sa"], sets[0]["sb"], k=args.k)
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")

        def call(info):
            return lambda s: kiln.scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out=out, algo=info)

        pick = call(cands[0])
        ours, theirs = bg.time_pair(pick, case.theirs, sets, 5, 50, 2.0)
        base = {"shape": f"{m}x{n}x{k}", "pick": cands[0].name, "pick_ms": ours["median_ms"],
                "cublaslt_ms": theirs["median_ms"], "alternatives": []}
        print(f"{m}x{n}x{k}: pick {short(cands[0].name)} {ours['median_ms']:.4f} ms, cuBLASLt "
              f"{theirs['median_ms']:.4f} ms, ratio {theirs['median_ms'] / ours['median_ms']:.3f}")
        for info in cands[1:]:
            p, a = bg.time_pair(pick, call(info), sets, 5, 50, 2.0)
            base["alternatives"].append({"name": info.name, "pick_ms": p["median_ms"], "ms": a["median_ms"]})
            print(f"    {short(info.name):28s} {a['median_ms']:.4f} ms against the pick's {p['median_ms']:.4f}: "
                  f"pick / it {p['median_ms'] / a['median_ms']:.3f}")
        rows.append(base)
        del sets
        torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
