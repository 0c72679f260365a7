#!/usr/bin/env bash
# Attention producer probe (H100/H200, one device command, ~4 minutes): ncu (--clock-control none, the full set) of
# the shipped head-dim-256 f16 P V kernel at 2x8x8192x256 non-causal, built three ways: as it is,
# -DKILN_PROBE_NO_TRANSPOSE and -DKILN_PROBE_NO_STSM (timing builds, wrong results). One launch each (the second
# warm-up). Writes the details pages and the SASS source page with warp-stall samples of each build under $OUT.
# Usage (repo root on the GPU machine): OUT=<dir> bash tuning/probes/attn_ncu_vpath.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
B=/tmp/attn_ncu
mkdir -p "$OUT" "$B"
export PATH="/usr/local/cuda/bin:$PATH"
FLAGS="-O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -lineinfo -I device tests/gpu/attn/attn_standalone.cu -lcuda"
declare -A MACRO=([attn]="" [attn_nt]="-DKILN_PROBE_NO_TRANSPOSE" [attn_nostsm]="-DKILN_PROBE_NO_STSM")
BUILDS="attn attn_nt attn_nostsm"
pids=()
for b in $BUILDS; do nvcc $FLAGS ${MACRO[$b]} -o "$B/$b" >"$OUT/build_$b.log" 2>&1 & pids+=($!); done
for pid in "${pids[@]}"; do wait "$pid"; done
ARGS="--filter none_at_all --bench-filter d256_n64_s1_pv16_e4m3 --shapes 2x8x8192x256"
for b in $BUILDS; do
    [ -x "$B/$b" ] || { echo "$b did not build"; tail -20 "$OUT/build_$b.log"; continue; }
    timeout 200 ncu --clock-control none --set full --import-source yes -k regex:d256_n64_s1_pv16_e4m3 --launch-skip 1 --launch-count 1 \
        -o "$B/rep_$b" -f "$B/$b" $ARGS >"$OUT/ncu_run_$b.log" 2>&1
    echo "== $b rc=$?"
    ncu -i "$B/rep_$b.ncu-rep" --page details >"$OUT/details_$b.txt" 2>&1
    ncu -i "$B/rep_$b.ncu-rep" --page source --csv --print-source sass >"$OUT/sass_$b.csv" 2>&1
    grep -E "SM Frequency|Duration|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|Issue Slots Busy|Shared|Bank|No Eligible|Warp Cycles Per Issued|Tensor" "$OUT/details_$b.txt" | head -40
done
