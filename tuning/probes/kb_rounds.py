"""The rounds kb_rounds.sh leaves: times[key][build] = [(ms, passed), ...] over every <build>_r<round>.json of a
folder, key(row) naming a row (a size, or a size and a kernel)."""
import glob
import json
import os


def load(folder, key):
    times = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
        build = os.path.basename(f).rsplit("_r", 1)[0]
        for r in json.load(open(f))["rows"]:
            times.setdefault(key(r), {}).setdefault(build, []).append((r["ms"], r["pass"]))
    return times
