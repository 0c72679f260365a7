#!/usr/bin/env python3
"""Summary of the mid-M probe (tuning/probes/sm90_mid_m.yaml, mid_m_run.sh): per size cuBLASLt, the shipped library's
pick, and the probe library's best candidate of each form (the shipped tiles unsplit, split-K in a cluster (MC3),
split-K through the workspace (GSU > 1, MC0)), in us, with cuBLASLt / kiln (> 1: kiln faster).

usage: mid_m_sum.py main.json probe.json   (bench/heldout.py reports: the full library with --max-candidates 1, and
the probe library with every candidate)"""
import json
import re
import statistics
import sys


def form(name):
    if "_MC3_" in name:
        return "mc3"
    return "ws" if not re.search(r"_GSU1_", name) else "unsplit"


def short(name):
    g = lambda k: re.search(r"_%s(\d+)" % k, name).group(1)  # noqa: E731
    mt, wg = re.search(r"_MT(\d+x\d+)x", name).group(1), re.search(r"_WG(\dx\d)", name).group(1)
    return f"{mt} wg{wg} pgr{g('PGR')} gsu{g('GSU')}"


def main(main_path, probe_path):
    rows_main = {(r["m"], r["n"], r["k"]): r for r in json.load(open(main_path))["rows"]}
    probe = json.load(open(probe_path))
    print(f"device: {probe['meta']['device']}; us; ratio = cuBLASLt / kiln")
    print(f"{'size':>16} {'cuBLASLt':>8} {'pick':>6} {'ratio':>5} | {'unsplit':>7} {'mc3':>6} {'ws':>6} | best form")
    keys = ("pick", "unsplit", "mc3", "ws", "best")
    ratios = {k: [] for k in keys}
    for r in probe["rows"]:
        size = (r["m"], r["n"], r["k"])
        cub = r.get("cublas_ms")
        ok = [c for c in r["candidates"] if c.get("ok") and c.get("ms")]
        best = {f: min((c for c in ok if form(c["name"]) == f), key=lambda c: c["ms"], default=None)
                for f in ("unsplit", "mc3", "ws")}
        m = rows_main.get(size)
        pick = next((c for c in (m or {}).get("candidates", []) if c.get("rank") == 0 and c.get("ms")), None)
        allbest = min(ok, key=lambda c: c["ms"], default=None)
        vals = {"pick": pick, **best, "best": allbest}
        for k in keys:
            if vals[k] and cub:
                ratios[k].append(cub / vals[k]["ms"])
        us = lambda c: f"{c['ms'] * 1e3:6.1f}" if c else "     -"  # noqa: E731
        rp = f"{cub / pick['ms']:5.2f}" if pick and cub else "    -"
        print(f"{'x'.join(map(str, size)):>16} {cub * 1e3 if cub else float('nan'):8.1f} {us(pick)} {rp} | "
              f"{us(best['unsplit']):>7} {us(best['mc3'])} {us(best['ws'])} | "
              f"{short(allbest['name']) if allbest else '-'} {form(allbest['name']) if allbest else ''}")
    for k in keys:
        if ratios[k]:
            print(f"geomean cuBLASLt / {k}: {statistics.geometric_mean(ratios[k]):.3f} over {len(ratios[k])} sizes")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
