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
attn_check_and_sanitize ho _ho_ _ho_ attn_wg_d128_s1_pmx_pe_ho_vpre_e4m3_bf16 attn_wg_d128_s1_pmx_pe_ho_e4m3_bf16 \
    attn_wg_d64_s2_pmx_pe_ho_e4m3_bf16
attn_times "$OUT/ho_times.log" "attn_wg_d128_s1_pmx_pe_,attn_wg_d64_s2_pmx_pe_" \
    "4x32x4096x128,8x16x2048x128,2x16x8192x64"
