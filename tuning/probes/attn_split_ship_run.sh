#!/bin/bash
# One device command for the split tail as shipped (2d739ff), on the attention-only library of
# tuning/probes/attn_lib_build.sh (carry build-probe/attnlib/lib and build-probe/attnlib/generated): the GPU
# attention tests (recorded in $OUT/gpu_run.jsonl), compute-sanitizer memcheck and racecheck of test_split_tail on the
# capped grids (racecheck took 209 s on the H100), bench_attn, then the forced kernels of
# tuning/probes/attn_small_picks.py at the head dim 64 wave boundaries (the gate first, where the call's limit is
# short).
#   KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_split_ship_run.sh
set -u
OUT=${OUT:-/tmp/attn_ship}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
A=$PWD/build-probe/attnlib
export KILN_LIBRARY=$A/lib/libkiln.so KILN_GENERATED_DIR=$A/generated
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/device.txt"
KILN_GPU_LOG="$OUT/gpu_run.jsonl" timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_attention.py \
  >"$OUT/pytest.log" 2>&1
echo "pytest rc=$?: $(tail -1 "$OUT/pytest.log")"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -10
for tool in memcheck racecheck; do
  k="split_tail"; [ $tool = racecheck ] && k="split_tail and (F8B or B8H)"
  KILN_TEST_SPLIT_SMALL=1 timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider tests/gpu/test_attention.py -k "$k" >"$OUT/split_$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$OUT/split_$tool.log" | tail -2 | tr '\n' ' ')"
done
python3 bench/bench_attn.py --out-dir "$OUT" 2>&1 | tail -25
timeout 150 python3 tuning/probes/attn_small_picks.py 2x16x1024x64 1x16x2048x64 8x16x2048x64 1x32x4096x64 \
  >"$OUT/small_picks.txt" 2>&1
grep -v "^    " "$OUT/small_picks.txt"
