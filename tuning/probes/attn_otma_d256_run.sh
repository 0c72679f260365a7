#!/usr/bin/env bash
# O stored with TMA at head dim 256 (tuning/patches/attn_otma_d256.patch: the staging takes half the columns at a time,
# OST_ROUNDS 2, where the whole rows do not fit beside three stages; the library's persistent head dim 256 kernels
# take it with the patch), one device command: the sm90 library builds in the background while the harness checks
# the "ot" twin of the packed-V^T head dim 256 kernel (forced grids too), runs memcheck and racecheck on it and times
# it beside the kernel without it; then the GPU suite and, with KILN_BENCH_ATTN=1, bench_attn. Apply and build here:
#   git apply tuning/patches/attn_otma_d256.patch
#   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -lineinfo -I device -I device/abi \
#       tests/gpu/attn/attn_standalone.cu -lcuda -o build-probe/attn
# Usage (GPU machine, repo root, carry build-probe): KILN_BENCH_ATTN=1 OUT=<dir> bash tuning/probes/attn_otma_d256_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
attn_build_library
attn_check_and_sanitize d256 d256_n64_s1_st3_pmx_pe_ot _pe_ot_vpre attn_wg_d256_n64_s1_st3_pmx_pe_ot_vpre_e4m3_bf16
attn_times "$OUT/d256_times.log" "attn_wg_d256_n64_s1_st3_pmx_pe_" "2x8x8192x256,1x16x4096x256,4x16x2048x256" |
    tee "$OUT/d256_times.txt"
attn_wait_library || exit 1
attn_suite_and_bench
