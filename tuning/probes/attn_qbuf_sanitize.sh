#!/usr/bin/env bash
# memcheck and racecheck of the two Q buffers and the item messages alone (harness build-probe/attn_q2, at 852cb0d):
# the persistent head dim 128 kernels (packed V^T and V widened) and head dim 64's, forced 3-CTA grids, a 129x129 case
# and a varlen one; then the racecheck report of the TMA-stored O (build-probe/attn_otma) on the packed-V^T kernel.
# Usage (GPU machine, repo root): OUT=<dir> bash tuning/probes/attn_qbuf_sanitize.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
A=build-probe/attn_q2
KILN_SAN_CASES="129x129 varlen" attn_sanitize "$OUT/q2_sanitizers_full.log" attn_wg_d128_s1_pmx_pe_vpre_e4m3_bf16 \
    attn_wg_d128_s1_pmx_pe_e4m3_bf16 attn_wg_d64_s2_pmx_pe_e4m3_bf16 | tee "$OUT/q2_sanitizers.log"
A=build-probe/attn_otma
KILN_PERSIST_GRID=3 KILN_PERSIST_PAIRS=1 timeout 90 compute-sanitizer --tool racecheck --print-limit 3 \
    $A --filter "attn_wg_d128_s1_pmx_pe_vpre_e4m3_bf16: 129x129" --no-bench >"$OUT/otma_racecheck.log" 2>&1
grep -m 12 -E "Error|Write|Read|at |RACECHECK" "$OUT/otma_racecheck.log"
