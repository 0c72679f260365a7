#!/usr/bin/env python3
"""A/B table of a probe built several ways (tuning/probes/patches: split_rs_run.sh, split64_run.sh): per size and
kernel, the best of the rounds' times of each build label and its ratio to the first label's (> 1: faster). Reads
OUT_DIR/<probe>_<label>_r<round>.json (the tune's results.json of each round). Usage:
ab_table.py OUT_DIR PROBE... -- LABELS..."""
import glob
import json
import os
import re
import sys


def short(name):
    m = re.search(r"_MT(\d+x\d+)x\d+_WG(\d+x\d+)_.*?_PGR(\d+)_", name)
    return f"MT{m.group(1)} WG{m.group(2)} pgr{m.group(3)}" if m else name


def main(argv):
    sep = argv.index("--")
    out, probes, clocks = argv[0], argv[1:sep], argv[sep + 1:]
    for p in probes:
        best = {}  # (size, kernel) -> {clocks: ms}
        for c in clocks:
            for f in glob.glob(os.path.join(out, f"{p}_{c}_r*.json")):
                for size, rows in json.load(open(f))["sizes"].items():
                    for r in rows:
                        if not r["pass"] or r["ms"] <= 0:
                            continue
                        d = best.setdefault((size, short(r["name"])), {})
                        d[c] = min(d.get(c, r["ms"]), r["ms"])
        print(f"\n{p}: best ms of the rounds; ratio = ms of the first label / ms")
        print("size | kernel | " + " | ".join(f"{c} clk" if c.isdigit() else c for c in clocks))
        for (size, k), d in sorted(best.items()):
            base = d.get(clocks[0])
            cells = []
            for c in clocks:
                if c not in d:
                    cells.append("-")
                elif base and c != clocks[0]:
                    cells.append(f"{d[c]:.4f} ({base / d[c]:.3f})")
                else:
                    cells.append(f"{d[c]:.4f}")
            print(f"{size} | {k} | " + " | ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
