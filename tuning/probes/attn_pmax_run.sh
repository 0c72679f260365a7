#!/usr/bin/env bash
# The speculative P (SPEC) on the two-consumer kernels, and the moved max read off the f16 P (PMAX, "pmx" harness
# kernels) on every head dim: checks of the new kernels, then two alternating timing rounds against the shipped ones.
# Usage (GPU machine, repo root, harness built as build-probe/attn): OUT=<dir> bash tuning/probes/attn_pmax_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
A=build-probe/attn
L="$OUT/pmx.log"
timeout 150 $A --filter pmx --no-bench >"$L" 2>&1
grep -E "regs=" "$L" | grep pmx
echo "checks: $(grep -c '^ok' "$L") ok, $(grep -c '^FAIL' "$L") FAIL"
grep '^FAIL' "$L" | head -5
K128=attn_wg_d128_s1_ps16_vpre_e4m3,attn_wg_d128_s1_spec_psx_vpre,attn_wg_d128_s1_pmx_vpre,attn_wg_m192_d128_n64_s1_pmx_vpre
K128=$K128,attn_wg_d128_s1_pv16_fe1_e4m3,attn_wg_d128_s1_spec_pv16_fe1_e4m3,attn_wg_d128_s1_pmx_fe1
K64=attn_wg_m192_d64_n128_st3_ps16_vpre,attn_wg_m192_d64_n128_st3_pmx_vpre,attn_wg_d64_s1_ps16_vpre
K64=$K64,attn_wg_d64_s1_spec_psx_vpre,attn_wg_d64_s1_pmx_vpre
K256=attn_wg_d256_n64_s1_st3_pv16_vpre,attn_wg_d256_n64_s1_st3_spec_pv16_vpre,attn_wg_d256_n64_s1_st3_pmx_vpre
T="$OUT/pmx_times.log"
: >"$T"
for round in 1 2; do
    timeout 150 $A --filter none_at_all --bench-filter "$K128" --shapes 4x32x4096x128,1x16x16384x128 >>"$T" 2>&1
    timeout 90 $A --filter none_at_all --bench-filter "$K64" --shapes 2x16x8192x64,4x16x4096x64 >>"$T" 2>&1
    timeout 90 $A --filter none_at_all --bench-filter "$K256" --shapes 2x8x8192x256,1x16x4096x256 >>"$T" 2>&1
done
grep -E "^[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn.* [0-9.]+e-[0-9]+" "$T" |
    awk '{printf "%-16s %-7s %-48s %8s\n", $1, $2, $3, $5}' | sort -k1,1 -k2,2 -k3,3 -s
