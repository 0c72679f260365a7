#!/usr/bin/env bash
# PMAX ("pmx" harness kernels) on the rest of the shipped f16 P V entries (bm 64, the transposing producers, head dim
# 256 with bn 64) against the same kernels without it, then compute-sanitizer memcheck and racecheck of every pmx
# kernel's harness cases.
# Usage (GPU machine, repo root, harness built as build-probe/attn): OUT=<dir> bash tuning/probes/attn_pmax2_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
A=build-probe/attn
L="$OUT/pmx2.log"
timeout 150 $A --filter pmx --no-bench >"$L" 2>&1
grep -E "regs=" "$L" | grep pmx
echo "checks: $(grep -c '^ok' "$L") ok, $(grep -c '^FAIL' "$L") FAIL"
grep '^FAIL' "$L" | head -5
KA=attn_wg_d64_s2_pv16_e4m3,attn_wg_d64_s2_pmx_e4m3,attn_wg_d256_n64_s1_pv16_e4m3,attn_wg_d256_n64_s1_pmx_e4m3
KA=$KA,attn_wg_m192_d64_n128_st3_pmx_vpre
KB=attn_wg_m64_d128_s1_pv16_e4m3,attn_wg_m64_d128_s1_pmx_e4m3,attn_wg_m64_d64_s1_pv16_e4m3,attn_wg_m64_d64_s1_pmx_e4m3
KB=$KB,attn_wg_m64_d256_n64_pv16_e4m3,attn_wg_m64_d256_n64_pmx_e4m3,attn_wg_m64_d256_n64_pv16_vpre,attn_wg_m64_d256_n64_pmx_vpre
KB=$KB,attn_wg_m64_d128_s1_pv16_vpre,attn_wg_m64_d128_s1_pmx_vpre,attn_wg_m64_d64_s1_pv16_vpre,attn_wg_m64_d64_s1_pmx_vpre
T="$OUT/pmx2_times.log"
: >"$T"
for round in 1 2; do
    timeout 120 $A --filter none_at_all --bench-filter "$KA" --shapes 2x16x8192x64,2x8x8192x256 >>"$T" 2>&1
    timeout 120 $A --filter none_at_all --bench-filter "$KB" --shapes 1x8x512x64,1x8x512x128,1x8x1024x256,2x8x2048x128 >>"$T" 2>&1
done
grep -E "^[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn.* [0-9.]+e-[0-9]+" "$T" |
    awk '{printf "%-16s %-7s %-44s %8s\n", $1, $2, $3, $5}' | sort -k1,1 -k2,2 -k3,3 -s
[ "${SAN:-1}" = 1 ] || exit 0
S="$OUT/pmx_sanitizers.log"
timeout 200 compute-sanitizer --tool memcheck $A --filter pmx --no-bench >"$S" 2>&1
echo "memcheck rc=$?: $(grep -c '^ok' "$S") ok, $(grep -c '^FAIL' "$S") FAIL; $(grep -E 'ERROR SUMMARY' "$S" | tail -1)"
# racecheck: the kernels of the shipped configurations (one per schedule and consumer count)
for k in d128_s1_pmx_vpre m192_d64_n128_st3_pmx_vpre d256_n64_s1_st3_pmx_vpre d128_s1_pmx_fe1 d64_s2_pmx_e4m3 \
         m64_d128_s1_pmx_vpre m64_d256_n64_pmx_e4m3; do
    timeout 90 compute-sanitizer --tool racecheck $A --filter $k --no-bench >>"$S" 2>&1
    echo "racecheck $k rc=$?: $(grep -E 'RACECHECK SUMMARY' "$S" | tail -1)"
done
