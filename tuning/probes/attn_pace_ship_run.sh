#!/bin/bash
# One device command for the paced in-kernel V^T packing (PACE in device/kiln_attn_wgmma.h), on the attention-only
# library of `bash tuning/probes/attn_lib_build.sh DIR` (carry DIR/lib and DIR/generated; DIR default
# build-probe/attnlib2): the GPU attention tests (recorded in $OUT/gpu_run.jsonl), compute-sanitizer memcheck and
# racecheck of test_split_tail on the capped grids (the persist 2 kernels with the packing and its pacing on 3, 7 and
# 11 CTAs; racecheck took 209 s on the H100), then bench_attn RUNS times (default 2) as <NAME>_run<i>, and with
# PICKS=<labels> the forced kernels of tuning/probes/attn_small_picks.py at those shapes.
#   KILN_COMMIT=<sha> OUT=<dir> [DIR=...] [RUNS=2] [NAME=...] [SPLIT_ONLY=VP1] [PICKS=...] \
#     bash tuning/probes/attn_pace_ship_run.sh
set -u
OUT=${OUT:-/tmp/attn_pace}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
A=$PWD/${DIR:-build-probe/attnlib2}
export KILN_LIBRARY=$A/lib/libkiln.so KILN_GENERATED_DIR=$A/generated
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/device.txt"
KILN_GPU_LOG="$OUT/gpu_run.jsonl" timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_attention.py \
  >"$OUT/pytest.log" 2>&1
echo "pytest rc=$?: $(tail -1 "$OUT/pytest.log")"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -10
# (SPLIT_ONLY=VP1: the packed-V kernels alone, racecheck on e4m3 -> bf16 only; all persist 2 kernels of two type pairs
# took over 300 s under racecheck with the pacing)
for tool in memcheck racecheck; do
  k="split_tail"; [ $tool = racecheck ] && k="split_tail and (F8B or B8H)"
  [ $tool = racecheck ] && [ -n "${SPLIT_ONLY:-}" ] && k="split_tail and F8B"
  KILN_TEST_SPLIT_ONLY=${SPLIT_ONLY:-} KILN_TEST_SPLIT_SMALL=1 timeout ${SAN_S:-300} compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider tests/gpu/test_attention.py -k "$k" >"$OUT/split_$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$OUT/split_$tool.log" | tail -2 | tr '\n' ' ')"
done
for i in $(seq 1 ${RUNS:-2}); do
  python3 bench/bench_attn.py --out-dir "$OUT" --name "${NAME:-attn}_run$i" >"$OUT/bench_run$i.log" 2>&1
  echo "bench run$i rc=$?"; grep -h -A7 "^## Summary" "$OUT/${NAME:-attn}_run$i.md" | tail -6
  grep "^| [0-9]" "$OUT/${NAME:-attn}_run$i.md" | cut -d'|' -f2-8
done
if [ -n "${PICKS:-}" ]; then
  timeout 150 python3 tuning/probes/attn_small_picks.py $PICKS >"$OUT/small_picks.txt" 2>&1
  grep -v "^    " "$OUT/small_picks.txt"
fi
