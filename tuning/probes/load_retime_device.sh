#!/bin/bash
# Device, one call (~6 minutes): load_retime.py on the promoted fp8 tune's sizes with M >= 512, main's full library
# (build-probe/full/libkiln.so.xz, carried). Then, here: tuning/probes/load_retime_merge.py and kiln-gen tune --stage write.
#   OUT=... bash tuning/probes/load_retime_device.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 tuning/probes/unxz.py build-probe/full/libkiln.so.xz /tmp/libkiln.so || exit 1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
KILN_LIBRARY=/tmp/libkiln.so PYTHONPATH=runtime/python timeout ${RETIME_S:-420} python3 tuning/probes/load_retime.py \
    tuning/results/sm90_fp8_promoted_h100.json "$OUT/load_retime.json" --budget-s 0.8 \
    --time-limit-s ${RETIME_LIMIT_S:-380} > "$OUT/load_retime.txt" 2>&1
echo "load_retime rc=$?"; cat "$OUT/load_retime.txt" | cut -c1-230
