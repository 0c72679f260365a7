#!/bin/bash
# Device, one call (~9 minutes), main's full library (build-probe/full/libkiln.so.xz, carried): pick_vs_alt.py (the
# fp8 pick against kiln.query's next five under bench_gemm's timing, the seven large bench shapes), then
# lrc_ncu.sh (ncu at 8192^3 of the promoted / fast 128x256, promoted 128x192 pgr 2 and 3, and cuBLASLt), then
# bench/heldout.py on the whole list, top 6 candidates a shape.
#   OUT=... bash tuning/probes/load_picks_device.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 tuning/probes/unxz.py build-probe/full/libkiln.so.xz /tmp/libkiln.so || exit 1
KILN_LIBRARY=/tmp/libkiln.so PYTHONPATH=runtime/python:tuning/probes timeout 120 python3 tuning/probes/pick_vs_alt.py \
    --k 6 --json "$OUT/pick_vs_alt.json" > "$OUT/pick_vs_alt.txt" 2>&1
echo "pick_vs_alt rc=$?"; tail -45 "$OUT/pick_vs_alt.txt"
OUT=$OUT timeout 150 bash tuning/probes/lrc_ncu.sh
# then the whole held-out list as 321ae3f ran it (top 6 candidates a shape), within what the call has left
mkdir -p /tmp/ho && KILN_LIBRARY=/tmp/libkiln.so timeout ${HELDOUT_S:-310} python3 bench/heldout.py --iters 20 --warmup 3 \
    --budget-s 0.2 --max-candidates 6 --time-limit-s ${HELDOUT_LIMIT_S:-270} --quiet --out /tmp/ho/heldout \
    > /tmp/ho/heldout.log 2>&1
echo "heldout rc=$?"; tail -8 /tmp/ho/heldout.log; tar czf "$OUT/heldout.tgz" -C /tmp/ho .
