#!/usr/bin/env bash
# The two Q buffers and the item hand-off as a probe option (C::HANDOFF; tuning/patches/attn_handoff.patch, which
# applies to ed6989a, adds it and the harness's "ho" kernels, twins of three persistent bm 128 kernels, and "hot" ones
# with the TMA-stored O too): checks of the ho kernels (forced persistent grids too), memcheck and racecheck of them
# alone (129x129 and varlen cases, 3-CTA grids), and their times against their twins. At ed6989a racecheck reported
# the consumers' reads of the item message against the producer's next write of it (bench/NOTES.md top section).
# Build on this machine first:
#   git apply tuning/patches/attn_handoff.patch
#   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -lineinfo -I device -I device/abi \
#       tests/gpu/attn/attn_standalone.cu -lcuda -o build-probe/attn
# Usage (GPU machine, repo root, carry build-probe): OUT=<dir> bash tuning/probes/attn_handoff_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
: >"$L/ho_checks.log"
attn_checks "ho" "$L/ho_checks.log" "_ho_"
KILN_CHECK_TIMEOUT=90 attn_forced_grid_checks "$L/ho_checks.log" "_ho_"
attn_checks_summary "$L/ho_checks.log" >"$OUT/ho_checks.log"
KILN_SAN_CASES="129x129 varlen" attn_sanitize "$L/ho_sanitizers_full.log" attn_wg_d128_s1_pmx_pe_ho_vpre_e4m3_bf16 \
    attn_wg_d128_s1_pmx_pe_ho_e4m3_bf16 attn_wg_d64_s2_pmx_pe_ho_e4m3_bf16 | tee "$OUT/ho_sanitizers.log"
grep -m 20 -E "RACECHECK|Error|Write|Read|in attn" "$L/ho_sanitizers_full.log" >"$OUT/ho_sanitizer_reports.txt"
attn_times "$OUT/ho_times.log" "attn_wg_d128_s1_pmx_pe_,attn_wg_d64_s2_pmx_pe_" \
    "4x32x4096x128,8x16x2048x128,2x16x8192x64"
