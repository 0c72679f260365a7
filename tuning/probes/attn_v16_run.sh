#!/usr/bin/env bash
# The f16 V widened in place and read MN-major (every pv 16 kernel with V as given): every harness check, the
# persistent ones with the grid forced to 5 CTAs (causal pairs on and off), memcheck and racecheck of three kernels on
# a forced grid, then two timing rounds: fexp 1 against 0 at head dim 128, psum 0 against 1 (the panel of ones).
# Usage (GPU machine, repo root, harness built as build-probe/attn): OUT=<dir> bash tuning/probes/attn_v16_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
L=/tmp/kiln-logs
mkdir -p "$OUT" "$L"
export PATH="/usr/local/cuda/bin:$PATH"
A=build-probe/attn
C="$OUT/v16_checks.log"
timeout 240 $A --no-bench >"$C" 2>&1
echo "checks, every kernel: rc $? $(grep -c '^ok' "$C") ok, $(grep -c '^FAIL' "$C") FAIL"
for pairs in 0 1; do
    KILN_PERSIST_GRID=5 KILN_PERSIST_PAIRS=$pairs timeout 120 $A --filter _pe_ --no-bench >"$L/c$pairs.log" 2>&1
    echo "checks _pe_, grid 5, pairs $pairs: rc $? $(grep -c '^ok' "$L/c$pairs.log") ok, $(grep -c '^FAIL' "$L/c$pairs.log") FAIL"
    cat "$L/c$pairs.log" >>"$C"
done
grep -E '^FAIL' "$C" | head -8
S="$OUT/v16_sanitizers.log"
: >"$S"
for tool in memcheck racecheck; do
    for k in d128_s1_pmx_pe_e4m3_bf16 d64_s2_pmx_pe_ps16_e4m3_bf16 m64_d128_s1_pmx_ps16_e4m3_bf16; do
        KILN_PERSIST_GRID=3 KILN_PERSIST_PAIRS=1 timeout 90 compute-sanitizer --tool $tool --print-limit 5 \
            $A --filter "${k}: 129x129" --no-bench >"$L/san.log" 2>&1
        echo "$tool $k: rc $? $(grep -cE '^ok' "$L/san.log") ok $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/san.log" | tail -1)"
        cat "$L/san.log" >>"$S"
    done
done
K=d128_s1_pmx_pe_fe1_e4m3,d128_s1_pmx_pe_e4m3,d128_s1_pmx_ps16_e4m3,d128_s1_pmx_pe_vpre_e4m3
K=$K,d64_s2_pmx_pe_e4m3,d64_s2_pmx_pe_ps16_e4m3,m64_d128_s1_pmx_e4m3,m64_d128_s1_pmx_ps16_e4m3
K=$K,m64_d64_s1_pmx_e4m3,m64_d64_s1_pmx_ps16_e4m3,d256_n64_s1_pmx_e4m3,m64_d256_n64_pmx_e4m3
T="$OUT/v16_times.log"
: >"$T"
for round in 1 2; do
    timeout 150 $A --filter none_at_all --bench-filter "${KILN_V16_KERNELS:-$K}" \
        --shapes ${KILN_V16_SHAPES:-4x32x4096x128,8x16x2048x128,2x16x8192x64,2x8x8192x256,1x8x1024x128,1x8x512x64} >>"$T" 2>&1
done
grep -E "^[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn.* [0-9.]+e-[0-9]+" "$T" |
    awk '{printf "%-16s %-7s %-42s %8s\n", $1, $2, $3, $5}' | sort -k1,1 -k2,2 -k3,3 -s
