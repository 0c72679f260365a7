#!/usr/bin/env python3
"""Per size of a bench/heldout.py run: the fastest candidates with their tile count, and two rates that say what bounds
a grid of about one wave of tiles, each CTA walking all of K:

- busy: a CTA's tile flops over its time, as a share of one SM's part of the tensor peak (1,979 TFLOP/s dense fp8
  over 132 SMs at the boost clock). For a grid of at most one wave this is the mainloop's efficiency with the prologue
  and the epilogue folded in.
- L2->SM: the A and B tile bytes all CTAs load (tiles x (MT0 + MT1) x K, fp8) over the time.

    python3 tuning/probes/mid_n_rates.py tuning/results/probe_mid_n_h100.json [--top 5]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generator"))
from kilngen.model import decode  # noqa: E402  (kernel names read as the generator writes them)

PEAK_FP8 = 1979e12
SMS = 132


def rates(m: int, n: int, k: int, name: str, ms: float) -> dict:
    sol = decode(name)
    (mt0, mt1, _du), (w0, w1), pgr, gsu, mc = sol.mt, sol.wg, sol.pgr, sol.gsu, sol.mc
    tiles = math.ceil(m / mt0) * math.ceil(n / mt1) * gsu
    waves = math.ceil(tiles / SMS)
    sec = ms * 1e-3
    tile_flops = 2.0 * mt0 * mt1 * k / gsu
    return {"form": f"{mt0}x{mt1} wg{w0}x{w1} pgr{pgr}" + (f" gsu{gsu}" if gsu > 1 else "") + (f" mc{mc}" if mc else ""),
            "us": ms * 1e3, "tiles": tiles, "waves": waves,
            "busy": tile_flops * waves / sec / (PEAK_FP8 / SMS),
            "l2_tbs": tiles * (mt0 + mt1) * k / gsu / sec / 1e12}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="bench/heldout.py JSON (every candidate timed)")
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    doc = json.load(open(args.run))
    print(f"device: {doc['meta']['device']}; busy = tile flops x waves / time / (fp8 peak / {SMS}); "
          "L2->SM = tiles x (MT0 + MT1) x K bytes / time")
    for row in doc["rows"]:
        m, n, k = row["m"], row["n"], row["k"]
        cands = sorted((c for c in row["candidates"] if c.get("ok")), key=lambda c: c["ms"])[: args.top]
        print(f"{m}x{n}x{k}: cuBLASLt {row['cublas_ms'] * 1e3:.1f} us")
        for c in cands:
            r = rates(m, n, k, c["name"], c["ms"])
            print(f"    {r['form']:<24} {r['us']:7.1f} us  {r['tiles']:4d} tiles ({r['waves']} wave"
                  f"{'s' if r['waves'] > 1 else ''})  busy {r['busy']:.2f}  L2->SM {r['l2_tbs']:4.1f} TB/s")


if __name__ == "__main__":
    main()
