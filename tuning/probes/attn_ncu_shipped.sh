#!/usr/bin/env bash
# ncu (--clock-control none) of the shipped attention kernels with V packed once: the full set at 4x32x4096x128,
# 2x8x8192x256 and 2x16x8192x64 (one launch each, the second call), details pages under $OUT, then the per-SASS-line
# source counters of the head dim 128 kernel (gzipped CSV). ~1 minute on the H200.
# Usage (repo root on the GPU machine): KILN_LIBRARY=<libkiln.so> OUT=<dir> bash tuning/probes/attn_ncu_shipped.sh
set -u
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
for sh in "4 32 4096 128 0" "2 8 8192 256 0" "2 16 8192 64 0"; do
    tag=$(echo "$sh" | tr ' ' x)
    timeout 150 ncu --clock-control none --set full -k regex:Attn_ --launch-skip 1 --launch-count 1 -o "/tmp/rep_$tag" -f \
        python3 tuning/probes/attn_ncu_one.py $sh >"$OUT/ncu_$tag.log" 2>&1
    echo "== $tag rc=$?"
    ncu -i "/tmp/rep_$tag.ncu-rep" --page details >"$OUT/details_$tag.txt" 2>&1
    grep -E "  Attn_|SM Frequency|Duration  |Compute \(SM\) Throughput|Issue Slots Busy|Eligible Warps|Warp Cycles Per Issued|highest-utilized" \
        "$OUT/details_$tag.txt"
done
tag=4x32x4096x128x0
timeout 200 ncu --clock-control none --section SourceCounters --section WarpStateStats --import-source yes -k regex:Attn_ \
    --launch-skip 1 --launch-count 1 -o "/tmp/src_$tag" -f python3 tuning/probes/attn_ncu_one.py 4 32 4096 128 0 \
    >"$OUT/ncu_src_$tag.log" 2>&1
ncu -i "/tmp/src_$tag.ncu-rep" --page source --csv --print-source sass | gzip >"$OUT/source_$tag.csv.gz"
