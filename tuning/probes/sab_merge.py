#!/usr/bin/env python3
"""Enters the swap-AB (sab 1) kernels of a probe's kiln_bench runs (raw JSON, one file a size, as
tuning/probes/swab_merge_device.sh writes them) into a tune's results file,
so that `kiln-gen tune --stage write` can pick them.

Each probe run timed the new kernels beside kernels of the tune (sab 0); the tune's file holds those kernels' times
from its own runs. A new kernel's time enters as its probe time times the size's drift: the geometric mean, over the
reference kernels both runs timed, of tune time / probe time. Sizes the probe did not time get no record of the new
kernels (the logic's timing table says null there).
    python3 tuning/probes/sab_merge.py RESULTS_JSON PROBE_DIR"""
import glob
import json
import os
import sys

from drift_merge import drift, enter, write  # this script's folder is on sys.path when it runs


def main(results_path: str, probe_dir: str) -> int:
    res = json.load(open(results_path))
    moved = 0
    for f in sorted(glob.glob(os.path.join(probe_dir, "*x*x*.json"))):
        size = os.path.basename(f)[:-5]
        if size not in res["sizes"]:
            continue
        rows = json.load(open(f))["rows"]
        probe = {r["name"]: r["ms"] for r in rows if r.get("pass") and r.get("ms", 0) > 0}
        tune = {r["name"]: r["ms"] for r in res["sizes"][size] if r["pass"] and r["ms"] > 0}
        refs = [n for n in probe if "_SAB0_" in n and n in tune]
        if len(refs) < 2:
            print(f"{size}: {len(refs)} reference kernels in both runs, two wanted; left out")
            continue
        factor = drift(tune, probe, refs)
        new = {n: ms * factor for n, ms in probe.items() if "_SAB1_" in n}
        enter(res, size, sorted(new.items()))
        best_old = min(tune.values())
        name, best = min(new.items(), key=lambda kv: kv[1])
        moved += best < best_old
        print(f"{size}: drift {factor:.3f} ({len(refs)} refs), best before {best_old * 1e3:.2f} us, best swap-AB "
              f"{best * 1e3:.2f} us ({best_old / best:.3f}x)")
    write(results_path, res)
    print(f"{moved} sizes where a swap-AB kernel is now the fastest")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
