#!/bin/bash
# Device, one call (~8 minutes): main's full library (build-probe/full/libkiln.so.xz, carried): the GPU suite, then
# bench_gemm fp8 / fp8_fast and bench_moe's block part (graph_refresh.sh), then bench/heldout.py on its shapes with
# M <= 128 (tuning/probes/heldout_small_m.txt: where the 64x32 tiles are candidates).
#   KILN_COMMIT=<sha> OUT=... bash tuning/probes/merge_refresh_device.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=/tmp/suite; mkdir -p $S
KILN_PREBUILT=build-probe/full/libkiln.so.xz KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_BENCH=1 KILN_SKIP_SASS=1 \
    OUT=$S timeout ${SUITE_S:-150} bash tests/gpu/device_run.sh > $S/suite.txt 2>&1
echo "suite: $(tail -1 $S/suite.txt)"
tar czf "$OUT/suite.tgz" -C $S .
BUDGET=${BUDGET:-0.8} OUT=$OUT timeout ${BENCH_S:-330} bash tuning/probes/graph_refresh.sh > /tmp/refresh.txt 2>&1
echo "refresh rc=$?"; grep -A14 '^summary' "$OUT/bench_gemm.log" | grep -v "n/a$"; grep -A6 '^summary' "$OUT/bench_moe.log"
mkdir -p /tmp/ho; KILN_LIBRARY=/tmp/libkiln.so timeout ${HELDOUT_S:-150} python3 bench/heldout.py --shapes-file tuning/probes/heldout_small_m.txt \
    --iters 20 --warmup 3 --budget-s 0.2 --quiet --out /tmp/ho/heldout_small_m > /tmp/ho/heldout.log 2>&1
echo "heldout rc=$?"; tail -8 /tmp/ho/heldout.log; tar czf "$OUT/heldout.tgz" -C /tmp/ho .
rm -f "$OUT/gpu.txt"  # at most 8 files come back
