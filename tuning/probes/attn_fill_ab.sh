#!/bin/bash
# One device command for a change to the in-kernel V^T packing (v_packed 2): two attention-only libraries built here
# with tuning/probes/attn_lib_build.sh, build-probe/attnlib (before) and build-probe/attnlib2 (after), both carried.
# The GPU attention tests and the bitwise check against the pass on the new library, then attn_steady.py on both in
# alternating processes (kiln and kiln with V packed once against cuDNN in the same process), bench_attn on the
# libraries of BENCH_LIBS (default N), compute-sanitizer memcheck and racecheck of attn_vt_fill_sanitize.py, with PICKS=1 the large rows'
# forced picks.
#   KILN_COMMIT=<sha> OUT=<dir> [AB_O=build-probe/X AB_N=build-probe/Y] bash tuning/probes/attn_fill_ab.sh
set -u
OUT=${OUT:-/tmp/attn_fill}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
O=$PWD/${AB_O:-build-probe/attnlib}; N=$PWD/${AB_N:-build-probe/attnlib2}  # (AB_O / AB_N: other library dirs)
use() { export KILN_LIBRARY=$1/lib/libkiln.so KILN_GENERATED_DIR=$1/generated; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader | tee "$OUT/device.txt"
use "$N"
KILN_GPU_LOG="$OUT/gpu_run.jsonl" timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_attention.py \
  >"$OUT/pytest.log" 2>&1
echo "pytest rc=$?: $(tail -1 "$OUT/pytest.log")"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -10
timeout 90 python3 tuning/probes/attn_vt_fill_check.py >"$OUT/fill_check.txt" 2>&1
echo "fill_check rc=$?: $(tail -1 "$OUT/fill_check.txt")"
for r in 1 2; do
  for L in O N; do
    use "${!L}"
    timeout 100 python3 tuning/probes/attn_steady.py --seconds ${STEADY_S:-2} 4x32x4096x128 2x8x8192x256 4x32x4096x128c \
      2>&1 | sed "s/^/$L$r /"
  done
done | tee "$OUT/ab.txt"
for L in ${BENCH_LIBS:-N}; do  # bench_attn on each library named (O, N), as attn_bench_<L>.*
  use "${!L}"
  python3 bench/bench_attn.py --out-dir "$OUT" --name attn_bench_$L >"$OUT/bench_$L.log" 2>&1
  echo "bench $L rc=$?"; grep -h -A7 "^## Summary" "$OUT/attn_bench_$L.md" | tail -6
done
use "$N"
for tool in memcheck racecheck; do
  timeout ${SAN_S:-150} compute-sanitizer --tool $tool --error-exitcode 9 python3 tuning/probes/attn_vt_fill_sanitize.py \
    >"$OUT/fill_$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/fill_$tool.log" | tail -1)"
done
if [ -n "${PICKS:-}" ]; then
  timeout 120 python3 tuning/probes/attn_small_picks.py 4x32x4096x128 1x16x16384x128 2x8x8192x256 >"$OUT/picks.txt" 2>&1
  grep -v "^    " "$OUT/picks.txt" | head -30
fi
