#!/usr/bin/env python3
"""Enters the 64x32 tiles of the narrow-tile probe (tuning/probes/narrow_n_run.sh; raw kiln_bench JSON in
tuning/results/probe_narrow_n_h100/) into a tune's results file, so that `kiln-gen tune --stage write` can pick them.

The probe timed the new tiles beside two shipped 64x64 kernels (unsplit, and split two ways in a cluster) in the same
kiln_bench runs; the tune's file holds the 64x64 kernels' times from its own (earlier) run. Each new tile's time
enters as its probe time (mean of the rounds) times the size's drift factor: the geometric mean, over the two 64x64
kernels, of tune time / probe time. Only the sizes the probe timed get the new tiles (the others have no record of
them: the logic's timing table says null there).
    python3 tuning/probes/narrow_n_merge.py KIND RESULTS_JSON PROBE_DIR NAME...
KIND: block or fp8 (the probe's file prefix); NAME: the full kernel names to enter."""
import glob
import json
import os
import statistics
import sys

from drift_merge import drift, enter, write  # this script's folder is on sys.path when it runs


def main(kind, results_path, probe_dir, names):
    res = json.load(open(results_path))
    probe = {}
    for f in sorted(glob.glob(os.path.join(probe_dir, f"{kind}_r*.json"))):
        for r in json.load(open(f))["rows"]:
            if r["pass"]:
                probe.setdefault(f"{r['m']}x{r['n']}x{r['k']}", {}).setdefault(r["name"], []).append(r["ms"])
    for size, rows in probe.items():
        mean = {n: statistics.mean(v) for n, v in rows.items()}
        tune = {r["name"]: r["ms"] for r in res["sizes"][size] if r["pass"]}
        refs = [n for n in mean if "_MT64x64x" in n and n in tune]
        if len(refs) < 2:
            raise SystemExit(f"{size}: {len(refs)} reference kernels in both runs, two wanted")
        factor = drift(tune, mean, refs)
        enter(res, size, [(n, mean[n] * factor) for n in names])
        best_old = min(tune.values())
        best_new = min(mean[n] * factor for n in names)
        print(f"{size}: drift {factor:.3f}, best before {best_old * 1e3:.2f} us, best 64x32 {best_new * 1e3:.2f} us"
              f"{'  <- 64x32' if best_new < best_old else ''}")
    write(results_path, res)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
