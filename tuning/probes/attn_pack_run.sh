#!/usr/bin/env bash
# The V^T packer of kiln_attn_pack_v rebuilt on 32-bit words of two keys (kiln_attn_wgmma.h attn_pack_vt), one device
# command: the sm90 library builds in the background while the harness checks every vpre kernel with the library's
# packer (KILN_LIB_PACK=1; forced persistent grids too), runs memcheck and racecheck on it (three head dims, 129x129
# and varlen cases), and times it beside the harness's tiled packer (the layout the library had before: a [key][D]
# tile of 16-bit elements) at the bench shapes; then the GPU suite on the library and, with KILN_BENCH_ATTN=1,
# bench_attn.
# Usage (GPU machine, repo root, carry build-probe): KILN_BENCH_ATTN=1 OUT=<dir> bash tuning/probes/attn_pack_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
attn_build_library
export KILN_LIB_PACK=1
attn_check_and_sanitize pack vpre _pe_ot_vpre attn_wg_d128_s1_pmx_pe_ot_vpre_e4m3_bf16 \
    attn_wg_m192_d64_n128_st3_pmx_pe_ot_vpre_e4m3_bf16 attn_wg_d256_n64_s1_st3_pmx_pe_vpre_e4m3_bf16
attn_times "$L/pack_times.log" "attn_wg_d128_s1_pmx_pe_ot_vpre,attn_wg_m192_d64_n128_st3_pmx_pe_ot_vpre,attn_wg_d256_n64_s1_st3_pmx_pe_vpre" \
    "4x32x4096x128,1x16x16384x128,2x16x8192x64,2x8x8192x256" >/dev/null
grep -h " pack " "$L/pack_times.log" | tee "$OUT/pack_times.txt"
attn_wait_library || exit 1
attn_suite_and_bench
