#!/bin/bash
# Device, one call (~3-4 minutes): a full library with new logics (LIB, carried; default build-probe/full/libkiln.so.xz,
# tuning/probes/full_lib_build.sh; first used on the promoted fp8 logic written from the load retime, b759ec1):
# bench_gemm's fp8 case (events and graphs), the GPU suite, the whole held-out list (top 6 candidates a shape, as
# 321ae3f), and pick_vs_alt.py, each within its own limit.
#   KILN_COMMIT=<sha> OUT=... [LIB=...] bash tuning/probes/retime_ship_device.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=/tmp/suite; mkdir -p $S build
LIB=${LIB:-build-probe/full/libkiln.so.xz}
python3 tuning/probes/unxz.py "$LIB" build/libkiln.so || exit 1
export KILN_LIBRARY=$PWD/build/libkiln.so
timeout ${BENCH_S:-70} python3 bench/bench_gemm.py --cases fp8 --budget-s ${BUDGET:-0.8} > "$OUT/bench_gemm.log" 2>&1
echo "bench_gemm rc=$?"; grep -A5 '^summary' "$OUT/bench_gemm.log"
git status --short bench/results | awk '{print $2}' > /tmp/new.txt
tar czf "$OUT/results.tgz" $(cat /tmp/new.txt) 2>/dev/null
KILN_PREBUILT="$LIB" KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_BENCH=1 KILN_SKIP_SASS=1 \
    OUT=$S timeout ${SUITE_S:-80} bash tests/gpu/device_run.sh > $S/suite.txt 2>&1
echo "suite: $(tail -1 $S/suite.txt)"; tar czf "$OUT/suite.tgz" -C $S .
mkdir -p /tmp/ho && timeout ${HELDOUT_S:-40} python3 bench/heldout.py --iters 20 --warmup 3 --budget-s 0.2 \
    --max-candidates 6 --quiet --out /tmp/ho/heldout > /tmp/ho/heldout.log 2>&1
echo "heldout rc=$?"; tail -7 /tmp/ho/heldout.log; tar czf "$OUT/heldout.tgz" -C /tmp/ho .
PYTHONPATH=runtime/python:tuning/probes timeout ${PICKS_S:-40} python3 tuning/probes/pick_vs_alt.py --k 4 \
    --json "$OUT/pick_vs_alt.json" > "$OUT/pick_vs_alt.txt" 2>&1
echo "pick_vs_alt rc=$?"; grep -v "^    " "$OUT/pick_vs_alt.txt"
