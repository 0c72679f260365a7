#!/bin/bash
# Device, one call (~1-2 minutes): load_retime.py on a tune's sizes with M >= 512, main's full library
# (build-probe/full/libkiln.so.xz, carried). KIND=fp8 (default; the promoted logic's results) or block (the
# block-scaled logic's). Then, here: tuning/probes/load_retime_merge.py and kiln-gen tune --stage write.
#   KIND=block OUT=... bash tuning/probes/load_retime_device.sh
# SKIP=<an earlier call's load_retime_<kind>.json, committed or carried>: its sizes are left out (a second call takes
# up where a first one's time limit stopped it); the output is then load_retime_<kind>_2.json.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
KIND=${KIND:-fp8}
TAG=${SKIP:+_2}
case $KIND in
  fp8) RES=tuning/results/sm90_fp8_promoted_h100.json ;;
  block) RES=tuning/results/sm90_fp8_block_h100.json ;;
  *) echo "KIND: fp8 or block"; exit 2 ;;
esac
python3 tuning/probes/unxz.py build-probe/full/libkiln.so.xz /tmp/libkiln.so || exit 1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
KILN_LIBRARY=/tmp/libkiln.so PYTHONPATH=runtime/python timeout ${RETIME_S:-420} python3 tuning/probes/load_retime.py \
    "$RES" "$OUT/load_retime_$KIND$TAG.json" --kind "$KIND" --budget-s 0.8 --time-limit-s ${RETIME_LIMIT_S:-380} \
    ${SKIP:+--skip "$SKIP"} > "$OUT/load_retime_$KIND$TAG.txt" 2>&1
echo "load_retime rc=$?"; cut -c1-230 "$OUT/load_retime_$KIND$TAG.txt"
