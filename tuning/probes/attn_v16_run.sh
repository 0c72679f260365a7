#!/usr/bin/env bash
# The f16 V widened in place and read MN-major (every pv 16 kernel with V as given): every harness check, the
# persistent ones with the grid forced to 5 CTAs (causal pairs on and off), memcheck and racecheck of three kernels on
# a forced grid, then two timing rounds: fexp 1 against 0 at head dim 128, psum 0 against 1 (the panel of ones).
# Usage (GPU machine, repo root, harness built as build-probe/attn): OUT=<dir> bash tuning/probes/attn_v16_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
C="$OUT/v16_checks.log"
: >"$C"
attn_checks "every kernel" "$C" ""
attn_forced_grid_checks "$C" _pe_
grep -E '^FAIL' "$C" | head -8
attn_sanitize "$OUT/v16_sanitizers.log" d128_s1_pmx_pe_e4m3_bf16 d64_s2_pmx_pe_ps16_e4m3_bf16 m64_d128_s1_pmx_ps16_e4m3_bf16
K=d128_s1_pmx_pe_fe1_e4m3,d128_s1_pmx_pe_e4m3,d128_s1_pmx_ps16_e4m3,d128_s1_pmx_pe_vpre_e4m3
K=$K,d64_s2_pmx_pe_e4m3,d64_s2_pmx_pe_ps16_e4m3,m64_d128_s1_pmx_e4m3,m64_d128_s1_pmx_ps16_e4m3
K=$K,m64_d64_s1_pmx_e4m3,m64_d64_s1_pmx_ps16_e4m3,d256_n64_s1_pmx_e4m3,m64_d256_n64_pmx_e4m3
attn_times "$OUT/v16_times.log" "${KILN_V16_KERNELS:-$K}" \
    "${KILN_V16_SHAPES:-4x32x4096x128,8x16x2048x128,2x16x8192x64,2x8x8192x256,1x8x1024x128,1x8x512x64}"
