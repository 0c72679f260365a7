#!/usr/bin/env python3
"""The turns probe's table (tuning/probes/turns_run.sh): per size and kernel, the best time of the rounds without
and with KILN_PROBE_TURNS and their ratio (> 1: turns faster); kernels that failed their check are marked.

    python3 tuning/probes/turns_sum.py OUT_DIR      (OUT_DIR holds <build>_r<round>.json from kiln_bench --json)
    python3 tuning/probes/turns_sum.py OUT_DIR --gate   exit status 0 only where the promoted fp8 two-consumer
                                                        128-row tiles run faster with turns (geomean >= 1.01)
"""
import glob
import json
import math
import os
import re
import sys

_FORM = re.compile(r"_MT(\d+x\d+)x\d+_WG(\d+x\d+)_.*?_PGR(\d+)_")


def best(paths):
    """{(size, form): (us, all passed)} over the rounds' files."""
    out = {}
    for path in paths:
        with open(path) as f:
            rows = json.load(f)["rows"]
        for row in rows:
            m = _FORM.search(row["name"])
            if row.get("ms") is None or not m:  # not timed (its check failed first, or it could not run)
                continue
            key = (f"{row['m']}x{row['n']}x{row['k']}", f"{m.group(1)} wg{m.group(2)} pgr{m.group(3)}")
            us, ok = row["ms"] * 1e3, bool(row.get("pass", True))
            old = out.get(key)
            out[key] = (min(us, old[0]), ok and old[1]) if old else (us, ok)
    return out


def main(argv):
    if len(argv) not in (1, 2) or (len(argv) == 2 and argv[1] != "--gate"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    gate = []
    for probe in ("turns", "turnsb"):
        base = best(glob.glob(os.path.join(argv[0], f"{probe}_base_r*.json")))
        turn = best(glob.glob(os.path.join(argv[0], f"{probe}_turns_r*.json")))
        if not base or not turn:
            continue
        print(f"{'block-scaled' if probe == 'turnsb' else 'promoted fp8'}: us without / with turns, ratio")
        ratios = {}
        for key in sorted(base, key=lambda k: (-math.prod(map(int, k[0].split("x"))), k[1])):
            if key not in turn:
                continue
            (b, bok), (t, tok) = base[key], turn[key]
            flag = "" if bok and tok else "  CHECK FAILED"
            ratios.setdefault(key[1], []).append(b / t)
            if probe == "turns" and key[1].startswith(("128x256 wg2x1", "128x128 wg2x1")):
                gate.append(b / t)
            print(f"  {key[0]:>18} {key[1]:<22} {b:9.1f} {t:9.1f} {b / t:6.3f}{flag}")
        for form, r in sorted(ratios.items()):
            print(f"  geomean {form:<22} {math.exp(sum(map(math.log, r)) / len(r)):.3f} over {len(r)} sizes")
    if len(argv) == 2:
        g = math.exp(sum(map(math.log, gate)) / len(gate)) if gate else 0.0
        print(f"gate: promoted 128x256 / 128x128 two consumers {g:.3f} over {len(gate)} (pass at >= 1.01)")
        return 0 if g >= 1.01 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
