#!/usr/bin/env bash
# memcheck and racecheck of the two Q buffers and the item hand-off (harness build-probe/attn_q2, at 852cb0d, whose
# bm 128 kernels are those that ship with them): the persistent head dim 128 kernels (packed V^T and V widened) on a
# 129x129 case and a varlen one, head dim 64 sched 2 on the 129x129 case, grids forced to 3 CTAs.
# Usage (GPU machine, repo root): OUT=<dir> bash tuning/probes/attn_qbuf_sanitize.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
A=build-probe/attn_q2
KILN_SAN_CASES="129x129 varlen" attn_sanitize "$OUT/q2_sanitizers_full.log" attn_wg_d128_s1_pmx_pe_vpre_e4m3_bf16 \
    attn_wg_d128_s1_pmx_pe_e4m3_bf16 | tee "$OUT/q2_sanitizers.log"
KILN_SAN_CASES="129x129" attn_sanitize "$OUT/q2_sanitizers_d64_full.log" attn_wg_d64_s2_pmx_pe_e4m3_bf16 |
    tee -a "$OUT/q2_sanitizers.log"
