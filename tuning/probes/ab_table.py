#!/usr/bin/env python3
"""Probe tables: per size and kernel, the best of the rounds' kiln_bench times in each column and its ratio to the
base column's (> 1: faster). The tune's results.json of each round is read from OUT_DIR.

    ab_table.py OUT_DIR PROBE... -- LABELS...   columns are builds: <probe>_<label>_r<round>.json, base the first
                                                label (tuning/probes/patches: split_rs_run.sh, split64_run.sh)
    ab_table.py --wgm OUT_DIR PROBE...          columns are the kernels' WGM: <probe>_r<round>.json, base wgm 8
                                                (wgm_run.sh)"""
import glob
import json
import os
import re
import sys

_NAME = re.compile(r"_MT(\d+x\d+)x\d+_WG(\d+x\d+)_.*?_PGR(\d+)_.*?_WGM(\d+)_")
_TAIL = re.compile(r"_PR(\d+)_MC(\d+)_")
_GSU = re.compile(r"_GSU(\d+)_")


def short(name: str) -> str:
    """A kernel name's tile, consumer split and ring depth, and its split-K, cluster mode and fast accumulation where
    it has them: "MT128x256 WG2x1 pgr2", "MT64x128 WG1x2 pgr4 gsu2 mc3", "MT128x192 WG2x1 pgr2 mc1 fast"."""
    m = _NAME.search(name)
    if not m:
        return name
    t = _TAIL.search(name)
    g = _GSU.search(name)
    tail = f" gsu{g.group(1)}" if g and g.group(1) != "1" else ""
    tail += (f" mc{t.group(2)}" if t.group(2) != "0" else "") + (" fast" if t.group(1) == "0" else "") if t else ""
    return f"MT{m.group(1)} WG{m.group(2)} pgr{m.group(3)}{tail}"


def wgm(name: str) -> int:
    m = _NAME.search(name)
    return int(m.group(4)) if m else 0


def best_times(files_by_column: dict, column_of=None) -> dict:
    """{(size, kernel): {column: best ms}} over the passing rows of each column's files; column_of(name) overrides
    the file's column (and drops it from the kernel key)."""
    best = {}
    for col, files in files_by_column.items():
        for f in files:
            for size, rows in json.load(open(f))["sizes"].items():
                for r in rows:
                    if not r["pass"] or r["ms"] <= 0:
                        continue
                    c = column_of(r["name"]) if column_of else col
                    d = best.setdefault((size, short(r["name"])), {})
                    d[c] = min(d.get(c, r["ms"]), r["ms"])
    return best


def print_table(title: str, best: dict, columns: list, base) -> None:
    print(f"\n{title}: best ms of the rounds; ratio = ms at {base} / ms")
    print("size | kernel | " + " | ".join(str(c) for c in columns))
    for (size, k), d in sorted(best.items()):
        cells = []
        for c in columns:
            if c not in d:
                cells.append("-")
            elif d.get(base) and c != base:
                cells.append(f"{d[c]:.4f} ({d[base] / d[c]:.3f})")
            else:
                cells.append(f"{d[c]:.4f}")
        print(f"{size} | {k} | " + " | ".join(cells))


def main(argv) -> None:
    if argv and argv[0] == "--wgm":
        out, probes = argv[1], argv[2:]
        for p in probes:
            best = best_times({None: sorted(glob.glob(os.path.join(out, f"{p}_r*.json")))}, wgm)
            columns = sorted({c for d in best.values() for c in d})
            print_table(p, best, columns, 8)
        return
    sep = argv.index("--")
    out, probes, labels = argv[0], argv[1:sep], argv[sep + 1:]
    for p in probes:
        best = best_times({c: glob.glob(os.path.join(out, f"{p}_{c}_r*.json")) for c in labels})
        print_table(p, best, labels, labels[0])


if __name__ == "__main__":
    main(sys.argv[1:])
