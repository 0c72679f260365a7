#!/usr/bin/env bash
# f16 P V with the row sums on the tensor cores (PSUM with PV 16, the "ps16" harness kernels) against the shipped f16
# configurations: checks of the new kernels, then two alternating timing rounds.
# Usage (GPU machine, repo root, harness built as build-probe/attn): OUT=<dir> bash tuning/probes/attn_psum16_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
A=build-probe/attn
timeout 90 $A --filter ps16 --no-bench >"$OUT/ps16_check.log" 2>&1
echo "checks rc=$?: $(grep -c '^ok' "$OUT/ps16_check.log") ok, $(grep -c '^FAIL' "$OUT/ps16_check.log") FAIL"
grep '^FAIL' "$OUT/ps16_check.log" | head -5
K64=attn_wg_m192_d64_n128_st3_pv16_vpre_e4m3_bf16,attn_wg_m192_d64_n128_st3_ps16_vpre_e4m3_bf16
K64=$K64,attn_wg_d64_s2_pv16_e4m3_bf16,attn_wg_d64_s2_ps16_e4m3_bf16
K64=$K64,attn_wg_d64_s1_pv16_vpre_e4m3_bf16,attn_wg_d64_s1_ps16_vpre_e4m3_bf16
K128=attn_wg_d128_s1_pv16_vpre_e4m3_bf16,attn_wg_d128_s1_ps16_vpre_e4m3_bf16
K128=$K128,attn_wg_d128_s1_pv16_fe1_e4m3_bf16,attn_wg_d128_s1_ps16_fe1_e4m3_bf16
for round in 1 2; do
    timeout 90 $A --filter none_at_all --bench-filter "$K64" --shapes 2x16x8192x64,1x16x16384x64 >"$OUT/ps16_times64_$round.log" 2>&1
    timeout 90 $A --filter none_at_all --bench-filter "$K128" --shapes 4x32x4096x128,1x16x16384x128 >"$OUT/ps16_times128_$round.log" 2>&1
done
grep -h "TFLOP/s$" "$OUT"/ps16_times*_*.log | sort | awk '{print $1, $2, $3, $4}'
