#!/usr/bin/env bash
# Persistent CTAs over the work order (PERSIST, kiln_attn_work_grid; harness "pe" kernels) against the shipped
# entries' one-block-a-CTA twins: checks at the harness's own grid and with the grid forced to 5 CTAs (every CTA walks
# many items, causal pairs on and off), compute-sanitizer on a forced grid, then two timing rounds.
# Usage (GPU machine, repo root, harness built as build-probe/attn): OUT=<dir> bash tuning/probes/attn_persist_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
L=/tmp/kiln-logs
mkdir -p "$OUT" "$L"
export PATH="/usr/local/cuda/bin:$PATH"
A=build-probe/attn
C="$OUT/persist_checks.log"
: >"$C"
timeout 120 $A --filter _pe_ --no-bench >>"$C" 2>&1
echo "checks, own grid: $(grep -c '^ok' "$C") ok, $(grep -c '^FAIL' "$C") FAIL"
for pairs in 0 1; do
    KILN_PERSIST_GRID=5 KILN_PERSIST_PAIRS=$pairs timeout 120 $A --filter _pe_ --no-bench >"$L/c$pairs.log" 2>&1
    echo "checks, grid 5, pairs $pairs: $(grep -c '^ok' "$L/c$pairs.log") ok, $(grep -c '^FAIL' "$L/c$pairs.log") FAIL, rc $?"
    cat "$L/c$pairs.log" >>"$C"
done
grep -E '^FAIL' "$C" | head -8
S="$OUT/persist_sanitizers.log"
: >"$S"
for tool in memcheck racecheck; do
    for k in d128_s1_pmx_pe_vpre d128_s1_pmx_pe_fe1 m192_d64_n128_st3_pmx_pe_vpre; do
        [ $tool = racecheck ] && [ $k = d128_s1_pmx_pe_vpre ] && continue
        KILN_PERSIST_GRID=3 KILN_PERSIST_PAIRS=1 timeout 60 compute-sanitizer --tool $tool --print-limit 5 \
            $A --filter "${k}_e4m3_bf16: " --no-bench >"$L/san.log" 2>&1
        echo "$tool $k (grid 3, pairs): rc $? $(grep -cE '^ok' "$L/san.log") ok $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/san.log" | tail -1)"
        cat "$L/san.log" >>"$S"
    done
done
K=d128_s1_pmx_vpre,d128_s1_pmx_pe_vpre,d128_s1_pmx_fe1,d128_s1_pmx_pe_fe1,m192_d64_n128_st3_pmx_vpre
K=$K,m192_d64_n128_st3_pmx_pe_vpre,d256_n64_s1_st3_pmx_vpre,d256_n64_s1_st3_pmx_pe_vpre,d64_s2_pmx_e4m3,d64_s2_pmx_pe
T="$OUT/persist_times.log"
: >"$T"
for round in 1 2; do
    timeout 150 $A --filter none_at_all --bench-filter "$K" \
        --shapes 4x32x4096x128,1x16x16384x128,8x16x2048x128,2x24x3000x128,2x16x8192x64,4x16x2048x64,2x8x8192x256,1x8x512x64 >>"$T" 2>&1
done
grep -E "^[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn.* [0-9.]+e-[0-9]+" "$T" |
    awk '{printf "%-16s %-7s %-44s %8s\n", $1, $2, $3, $5}' | sort -k1,1 -k2,2 -k3,3 -s
