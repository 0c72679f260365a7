#!/bin/bash
# The held-out fp8 shapes with M in 200-1024 (the weakest class, bench/NOTES.md "The last wave"), every candidate
# kiln.query offers timed (not only its top 6): does a split-K kernel of the library already beat the pick there?
#   OUT=... bash tuning/probes/heldout_mid_m.sh      # on the device, with KILN_LIBRARY set or build/libkiln.so built
set -eu
OUT=${OUT:-/tmp/heldout_mid_m}; mkdir -p "$OUT"
export KILN_LIBRARY=${KILN_LIBRARY:-$PWD/build/libkiln.so}
awk '/^#/ || NF < 3 || ($1 >= 200 && $1 <= 1024)' bench/heldout_shapes.txt > "$OUT/shapes.txt"
timeout "${LIMIT_S:-400}" python3 bench/heldout.py --shapes-file "$OUT/shapes.txt" --max-candidates 0 --iters 20 \
  --warmup 3 --budget-s 0.2 --quiet --time-limit-s "${SHAPE_LIMIT_S:-330}" --out "$OUT/mid_m" > "$OUT/mid_m.txt" 2>&1 ||
  echo "heldout rc $?"
python3 - "$OUT/mid_m.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if r.get("pick_ms") and r.get("best_ms"):
        print(f"{r['m']}x{r['n']}x{r['k']}: pick {r['pick_ms']:.4f} best {r['best_ms']:.4f} (rank {r.get('best_rank')}) "
              f"cuBLASLt {r.get('cublas_ms') or float('nan'):.4f}  best {r['best'][15:60]}")
print({k: v for k, v in d["summary"].items() if k != "misses"})
P
