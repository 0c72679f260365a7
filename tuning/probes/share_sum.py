#!/usr/bin/env python3
"""Summary of the small-M sharing probes (sm90_small_m_share*.yaml): per size, the best candidate without stagger-U
and A multicast (the shipped forms), the best with stagger (SU > 0) and the best with A multicast (MC2), in us.

usage: share_sum.py results.json ..."""
import json
import re
import statistics
import sys


def form(name):
    g = lambda k: re.search(r"_%s(\d+)" % k, name).group(1)
    mt = re.search(r"_MT(\d+x\d+)x", name).group(1)
    wg = re.search(r"_WG(\dx\d)", name).group(1)
    return f"{mt} wg{wg} pgr{g('PGR')} gsu{g('GSU')} pk{g('PK')} mc{g('MC')} su{g('SU')}"


def main(paths):
    for path in paths:
        d = json.load(open(path))
        print(f"== {path} ({d.get('device')})")
        print(f"{'size':>16}  {'best shipped form':34} {'us':>6}  {'best stagger':36} {'us':>6}  ratio  {'mc 2 us':>7}")
        ratios = []
        for size, rows in d["sizes"].items():
            ok = [r for r in rows if r.get("pass") and r.get("ms")]
            base = [r for r in ok if "_SU0_" in r["name"] and "_MC2_" not in r["name"]]
            stag = [r for r in ok if "_SU0_" not in r["name"]]
            mc2 = [r for r in ok if "_MC2_" in r["name"] and "_SU0_" in r["name"]]
            bad = [r["name"] for r in rows if not r.get("pass")]
            if not base or not stag:
                print(f"{size:>16}  incomplete ({len(bad)} failed)")
                continue
            b, s = min(base, key=lambda r: r["ms"]), min(stag, key=lambda r: r["ms"])
            ratios.append(b["ms"] / s["ms"])
            m = f"{min(r['ms'] for r in mc2) * 1e3:7.1f}" if mc2 else "      -"
            print(f"{size:>16}  {form(b['name']):34} {b['ms'] * 1e3:6.1f}  {form(s['name']):36} {s['ms'] * 1e3:6.1f}"
                  f"  {ratios[-1]:.3f}  {m}" + (f"  FAILED: {len(bad)}" if bad else ""))
        if ratios:
            print(f"geomean shipped / stagger: {statistics.geometric_mean(ratios):.3f} over {len(ratios)} sizes (> 1: stagger faster)")


if __name__ == "__main__":
    main(sys.argv[1:])
