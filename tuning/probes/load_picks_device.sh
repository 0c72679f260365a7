#!/bin/bash
# Device, one call (~3 minutes), main's full library (build-probe/full/libkiln.so.xz, carried): pick_vs_alt.py (the
# fp8 pick against kiln.query's next five under bench_gemm's timing, the seven large bench shapes), then
# lrc_ncu.sh (ncu at 8192^3 of the promoted / fast 128x256, promoted 128x192 pgr 2 and 3, and cuBLASLt).
#   OUT=... bash tuning/probes/load_picks_device.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 tuning/probes/unxz.py build-probe/full/libkiln.so.xz /tmp/libkiln.so || exit 1
KILN_LIBRARY=/tmp/libkiln.so PYTHONPATH=runtime/python:tuning/probes timeout 200 python3 tuning/probes/pick_vs_alt.py \
    --k 6 --json "$OUT/pick_vs_alt.json" > "$OUT/pick_vs_alt.txt" 2>&1
echo "pick_vs_alt rc=$?"; tail -45 "$OUT/pick_vs_alt.txt"
OUT=$OUT timeout 240 bash tuning/probes/lrc_ncu.sh
