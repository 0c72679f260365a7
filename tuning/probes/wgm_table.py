#!/usr/bin/env python3
"""wgm_run.sh's table: per probe and size, each kernel's best time over the rounds and its ratio to the wgm 8 kernel
of the same tile (> 1: faster than wgm 8). Usage: wgm_table.py OUT_DIR PROBE..."""
import glob
import json
import os
import re
import sys


def key(name):
    m = re.search(r"_MT(\d+x\d+)x\d+_WG(\d+x\d+)_.*?_PGR(\d+)_.*?_WGM(\d+)_", name)
    return (f"MT{m.group(1)} WG{m.group(2)} pgr{m.group(3)}", int(m.group(4))) if m else (name, 0)


def main(argv):
    out, probes = argv[0], argv[1:]
    for p in probes:
        best = {}  # size -> tile -> wgm -> ms
        for f in sorted(glob.glob(os.path.join(out, f"{p}_r*.json"))):
            for size, rows in json.load(open(f))["sizes"].items():
                for r in rows:
                    if r["pass"] and r["ms"] > 0:
                        tile, wgm = key(r["name"])
                        d = best.setdefault(size, {}).setdefault(tile, {})
                        d[wgm] = min(d.get(wgm, r["ms"]), r["ms"])
        wgms = sorted({w for s in best.values() for t in s.values() for w in t})
        print(f"\n{p}: best ms over the rounds (ratio: ms at wgm 8 / ms)")
        print("size | tile | " + " | ".join(f"wgm {w}" for w in wgms))
        for size in sorted(best):
            for tile, d in sorted(best[size].items()):
                base = d.get(8)
                cells = [("-" if w not in d else f"{d[w]:.4f}" + (f" ({base / d[w]:.3f})" if base and w != 8 else ""))
                         for w in wgms]
                print(f"{size} | {tile} | " + " | ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
