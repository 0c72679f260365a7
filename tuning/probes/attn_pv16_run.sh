#!/usr/bin/env bash
# f16 P V probe (H100/H200, one device command, ~2 minutes): builds the attention harness, checks every f16 P V kernel
# against the float64 references, then times them beside the shipped fp8 kernels at four shapes, two rounds.
# Preset `vpre`: does a V^T that the caller packs in f16 (VPRE: TMA writes the V^T stages, the producer neither widens
# nor transposes; the harness packs V with pack_vt16 before the first launch) pay? Times the VPRE kernels beside the
# shipped f16 P V kernel (head dim 256), the fp8 ones (head dim 128, bm 128 and 64) and the f16 P V candidates for
# head dim 128 (bm 128 and 64). KERNELS / SHAPES override either preset.
# Usage (repo root on the GPU machine): OUT=<dir> bash tuning/probes/attn_pv16_run.sh [vpre]
# ATTN_BIN=<path>: a harness already built (e.g. with nvcc on a machine without a GPU, carried along); skips the build.
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
BIN=${ATTN_BIN:-/tmp/attn_pv16}
if [ -z "${ATTN_BIN:-}" ]; then
    nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I device tests/gpu/attn/attn_standalone.cu -lcuda \
        -o "$BIN" >"$OUT/build.log" 2>&1 || { echo "build failed"; tail -20 "$OUT/build.log"; exit 1; }
fi
"$BIN" --filter pv16 --no-bench >"$OUT/checks.log" 2>&1
echo "checks: $(grep -E '^==== summary' "$OUT/checks.log")"
grep -E "FAIL|fail" "$OUT/checks.log" | head -20
if [ "${1:-}" = vpre ]; then
    KERNELS=${KERNELS:-d256_n64_s1_pv16_e4m3,_vpre_,attn_wg_d128_ps_e4m3_bf16,d128_s1_pv16_e4m3,m64_d128}
    SHAPES=${SHAPES:-2x8x8192x256,1x16x4096x256,4x32x4096x128,1x16x16384x128,2x4x2048x128,2x16x8192x64}
fi
KERNELS=${KERNELS:-pv16,attn_wg_d128_ps_e4m3_bf16,attn_wg_d64_s1_ps_fe1_e4m3,attn_wg_d256_ps_e4m3}
SHAPES=${SHAPES:-4x32x4096x128,2x16x8192x64,2x8x8192x256,1x16x4096x256}
for round in 1 2; do
    echo "== round $round"
    "$BIN" --filter none_at_all --bench-filter "$KERNELS" --shapes "$SHAPES" 2>&1 |
        awk '$2 == "pack" {print $1, $2, $3, $5; next} /^BxHxSxD/ {on = 1; next} on && NF >= 5 && $1 ~ /x/ {print $1, $2, $3, $5} /^fastest/ {on = 0}'
done | tee "$OUT/times.txt"
