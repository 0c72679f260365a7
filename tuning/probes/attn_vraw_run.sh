#!/usr/bin/env bash
# Attention producer probe (H100/H200, one device command, ~2 minutes): is the producer's V path what bounds the
# wgmma attention kernels? Builds the harness twice, as it is and with -DKILN_PROBE_NO_TRANSPOSE (the producer skips
# the V transpose: wrong results, the timing of a V^T loaded as it is), checks the VRAW kernels (raw V tiles loaded
# VRAW - 1 ahead) against the float64 references, then times the shipped kernels, their VRAW twins and the
# no-transpose build in alternating rounds. Usage (repo root on the GPU machine): OUT=<dir> bash tuning/probes/attn_vraw_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
FLAGS="-O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I device tests/gpu/attn/attn_standalone.cu -lcuda"
nvcc $FLAGS -o "$OUT/attn" >"$OUT/build.log" 2>&1 &
plain=$!
nvcc $FLAGS -DKILN_PROBE_NO_TRANSPOSE -o "$OUT/attn_nt" >"$OUT/build_nt.log" 2>&1 &
nt=$!
wait "$plain" || { tail -20 "$OUT/build.log"; exit 1; }
wait "$nt" || { tail -20 "$OUT/build_nt.log"; exit 1; }
"$OUT/attn" --filter _vr --no-bench >"$OUT/checks.log" 2>&1
echo "checks: $(grep -E '^==== summary' "$OUT/checks.log")"
KERNELS="attn_wg_d128_ps_e4m3_bf16,attn_wg_d64_s1_ps_fe1_e4m3,d256_n64_s1_pv16_e4m3,attn_wg_d256_ps_e4m3,_vr"
SHAPES="4x32x4096x128,2x16x8192x64,2x8x8192x256,1x16x4096x256"
for round in 1 2; do
    for build in attn attn_nt; do
        echo "== $build, round $round"
        "$OUT/$build" --filter none_at_all --bench-filter "$KERNELS" --shapes "$SHAPES" 2>&1 |
            awk '/^BxHxSxD/ {on = 1; next} on && NF >= 5 && $1 ~ /x/ {print $1, $2, $3, $5} /^fastest/ {on = 0}'
    done
done | tee "$OUT/vraw_times.txt"
