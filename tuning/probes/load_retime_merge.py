#!/usr/bin/env python3
"""Enters load_retime.py's times into a tune's results file, so that `kiln-gen tune --stage write` picks by them.

Per retimed size the candidates keep the scale of the tune's run and take the order of the load run: each retimed
candidate's time becomes (the size's tune-best time among the retimed) x (its load time / that candidate's load
time). The tune-best candidate keeps its time; the others move up or down around it. Candidates that were not retimed
(slower than the leaders in the tune) keep their tune times. A size whose order does not change is left as it is.
    python3 tuning/probes/load_retime_merge.py RESULTS_JSON LOAD_JSON [LOAD_JSON ...] [--min-gain 0.02]
Several LOAD_JSON: the parts of one run that stopped at its time limit and went on with --skip (their sizes are
disjoint; a size in two of them is an error).
--min-gain: only where the load run's best beats the tune's pick by at least this fraction (the spread between
load runs of one kernel is ~1-2 %); below it the size keeps its tune times."""
import argparse
import json
import os
import sys


def merge(res, load, min_gain):
    changed = []
    for size, row in sorted(load["sizes"].items()):
        tune, timed = row["tune"], row["load"]
        anchor = min(tune, key=tune.get)
        best = min(timed, key=timed.get)
        gain = timed[anchor] / timed[best] - 1.0
        if best == anchor or gain < min_gain:
            continue
        scale = tune[anchor] / timed[anchor]
        for r in res["sizes"][size]:
            if r["name"] in timed:
                r["ms"] = round(timed[r["name"]] * scale, 6)
        changed.append((size, anchor, best, gain))
    return changed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("load", nargs="+")
    ap.add_argument("--min-gain", type=float, default=0.02)
    args = ap.parse_args()
    res, load = json.load(open(args.results)), {"sizes": {}}
    for path in args.load:
        part = json.load(open(path))["sizes"]
        both = sorted(set(part) & set(load["sizes"]))
        if both:
            print(f"{path}: sizes {', '.join(both)} are in an earlier part too", file=sys.stderr)
            return 2
        load["sizes"].update(part)
    from ab_table import short  # this script's folder is on sys.path when it runs
    changed = merge(res, load, args.min_gain)
    for size, anchor, best, gain in changed:
        print(f"{size}: {short(anchor)} -> {short(best)} ({gain * 100:.1f} % faster under load)")
    print(f"{len(changed)} of {len(load['sizes'])} retimed sizes change their pick")
    tmp = args.results + ".tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(res, indent=1, sort_keys=True))
    os.replace(tmp, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
