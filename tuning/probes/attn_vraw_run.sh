#!/usr/bin/env bash
# Attention producer probe (H100/H200, one device command, ~3 minutes): what in the producer's V path bounds the
# wgmma attention kernels (head dim 256 above all: 1057 against 767 TFLOP/s with the transpose skipped)? Builds the
# harness four ways, at once: as it is; -DKILN_PROBE_NO_TRANSPOSE (the producer skips the V transpose);
# -DKILN_PROBE_NO_CVT (f16 widening by byte permutes instead of cvt: wrong for e4m3); -DKILN_PROBE_NO_STSM (the
# transpose's loads and widening kept, its stores left out). The last three give wrong results and are timed only.
# Then checks the VRAW kernels (raw V tiles loaded VRAW - 1 ahead) against the float64 references and times the
# shipped kernels and their VRAW twins in every build, two alternating rounds.
# Usage (repo root on the GPU machine): OUT=<dir> bash tuning/probes/attn_vraw_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
FLAGS="-O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I device tests/gpu/attn/attn_standalone.cu -lcuda"
declare -A MACRO=([attn]="" [attn_nt]="-DKILN_PROBE_NO_TRANSPOSE" [attn_nocvt]="-DKILN_PROBE_NO_CVT"
                  [attn_nostsm]="-DKILN_PROBE_NO_STSM")
BUILDS="attn attn_nt attn_nocvt attn_nostsm"
pids=()
for b in $BUILDS; do
    nvcc $FLAGS ${MACRO[$b]} -o "$OUT/$b" >"$OUT/build_$b.log" 2>&1 &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
for b in $BUILDS; do [ -x "$OUT/$b" ] || { echo "$b did not build"; tail -20 "$OUT/build_$b.log"; exit 1; }; done
"$OUT/attn" --filter _vr --no-bench >"$OUT/checks.log" 2>&1
echo "checks: $(grep -E '^==== summary' "$OUT/checks.log")"
KERNELS="attn_wg_d128_ps_e4m3_bf16,attn_wg_d64_s1_ps_fe1_e4m3,d256_n64_s1_pv16_e4m3,attn_wg_d256_ps_e4m3,_vr"
SHAPES="4x32x4096x128,2x16x8192x64,2x8x8192x256,1x16x4096x256"
for round in 1 2; do
    for b in $BUILDS; do
        echo "== $b, round $round"
        "$OUT/$b" --filter none_at_all --bench-filter "$KERNELS" --shapes "$SHAPES" 2>&1 |
            awk '/^BxHxSxD/ {on = 1; next} on && NF >= 5 && $1 ~ /x/ {print $1, $2, $3, $5} /^fastest/ {on = 0}'
    done
done | tee "$OUT/vraw_times.txt"
