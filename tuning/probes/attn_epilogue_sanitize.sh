#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck of the 16-byte O stores: the shipped persistent kernels (and a bm 64 one)
# on a 129x129 case (O's rows 16-byte aligned: the quad transpose) and the strided padded layout (O's rows 8-byte
# aligned: the 4-byte stores), persistent grids forced to 3 CTAs. Harness build-probe/attn_ep.
# Usage (GPU machine, repo root): OUT=<dir> bash tuning/probes/attn_epilogue_sanitize.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
A=build-probe/attn_${KILN_NEW:-ep}
KILN_SAN_CASES="129x129 strided" attn_sanitize "$L/ep_sanitizers_full.log" attn_wg_d128_s1_pmx_pe_e4m3_bf16 \
    attn_wg_d128_s1_pmx_pe_vpre_e4m3_bf16 attn_wg_d64_s2_pmx_pe_e4m3_bf16 attn_wg_d256_n64_s1_st3_pmx_pe_vpre_e4m3_bf16 \
    attn_wg_m64_d128_s1_pmx_e4m3_bf16 | tee "$OUT/ep_sanitizers.log"
