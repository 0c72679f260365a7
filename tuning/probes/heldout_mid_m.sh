#!/bin/bash
# The held-out fp8 shapes with M in 200-1024 (the weakest class, bench/NOTES.md "The last wave"), every candidate
# kiln.query offers timed (not only its top 6): does a split-K kernel of the library already beat the pick there?
#   bash tuning/probes/heldout_mid_m.sh build   # here: build-probe/promlogic, the promoted logic alone at e4m3 -> bf16
#                                               # (17 kernels, ~12 MB: carry it; ~15 minutes on two busy cores)
#   OUT=... KILN_LIBRARY=$PWD/build-probe/promlogic/build/libkiln.so bash tuning/probes/heldout_mid_m.sh
#                                               # on the device (or with the full library: build/libkiln.so)
set -eu
if [ "${1:-}" = build ]; then
  w=build-probe/promlogic
  rm -rf $w; mkdir -p $w/solutions/sm90
  python3 -c '
import re, sys
s = open("solutions/sm90/wgmma_fp8_promoted.yaml").read()
s = re.sub(r"  a: \[e4m3, e5m2\]\n  b: \[e4m3, e5m2\]\n  d: \[bf16, f16, f32\]", "  a: e4m3\n  b: e4m3\n  d: bf16", s, 1)
sys.stdout.write(re.sub(r"\nci: .*\n", "\n", s))' > $w/solutions/sm90/wgmma_fp8_promoted.yaml
  PYTHONPATH=generator python3 -c "
from pathlib import Path
from kilngen import schema, render
w = Path('$w')
render.write_tree(w / 'generated', render.render_tree([schema.load_file(w / 'solutions/sm90/wgmma_fp8_promoted.yaml', w)],
                                                      Path('templates')))"
  cmake -S . -B $w/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_ARCHS=sm90 -DKILN_GENERATED_DIR=$PWD/$w/generated \
    -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE=$(command -v python3) > $w.log 2>&1
  cmake --build $w/build -j "$(nproc)" >> $w.log 2>&1
  exit 0
fi
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
