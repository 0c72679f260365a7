#!/bin/bash
# Device, one call (~4 minutes): the raw weight-stream probe (tuning/probes/dram_rows.cu) and the block-scaled
# small-M picks with the producer issuing K-tiles in groups (tuning/probes/tma_group_run.sh, carried in
# build-probe/tg_pack).
#   OUT=... bash tuning/probes/weight_stream_device.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvcc -O3 -arch=sm_90a -I device -o /tmp/dram_rows tuning/probes/dram_rows.cu -lcuda > "$OUT/dram_rows_build.log" 2>&1 &&
    timeout 200 /tmp/dram_rows > "$OUT/dram_rows.txt" 2>&1
echo "dram_rows rc=$?"
OUT=$OUT ROUNDS=${ROUNDS:-2} timeout 200 bash tuning/probes/tma_group_run.sh > "$OUT/tma_group.txt" 2>&1
echo "tma_group block rc=$?"
OUT=$OUT ROUNDS=${ROUNDS:-2} BASE=fbase VARIANTS="fg2 fg4" F= timeout 200 bash tuning/probes/tma_group_run.sh \
    > "$OUT/tma_group_fp8.txt" 2>&1
echo "tma_group fp8 rc=$?"
(cd "$OUT" && tar czf tg.tgz tg_* && rm -rf tg_*)
cat "$OUT/dram_rows.txt"; sed -n '/^size/,$p' "$OUT/tma_group.txt" "$OUT/tma_group_fp8.txt"
