#!/usr/bin/env bash
# Where a persistent attention CTA's time goes between its work items: the harness built with
# -DKILN_PROBE_ITEM_CLOCKS (clock64 stamps of every item, printed as "probe" lines after each timed kernel) as
# build-probe/attn_stamp, and the same with -DKILN_PROBE_KV_FIRST (the producer loaded an item's first key tile
# before it waited to load its Q; within run-to-run spread, so the macro was removed after this run) as
# build-probe/attn_kvf. Checks of the persistent kernels with the second (forced grids too), then two alternating
# timing rounds of the shipped persistent kernels.
# Usage (GPU machine, repo root): OUT=<dir> bash tuning/probes/attn_items_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
K=${KILN_ITEM_KERNELS:-attn_wg_d128_s1_pmx_pe_e4m3_bf16,attn_wg_d128_s1_pmx_pe_vpre_e4m3_bf16,attn_wg_d64_s2_pmx_pe_e4m3_bf16,attn_wg_m192_d64_n128_st3_pmx_pe_vpre,attn_wg_d256_n64_s1_st3_pmx_pe_vpre}
SH=${KILN_ITEM_SHAPES:-4x32x4096x128,8x16x2048x128,1x16x16384x128,2x16x8192x64,2x8x8192x256}
if [ "${KILN_SKIP_CHECKS:-0}" != 1 ]; then
    A=build-probe/attn_kvf
    : >"$OUT/items_checks.log"
    attn_checks "kvf _pe_" "$OUT/items_checks.log" "_pe_"
    attn_forced_grid_checks "$OUT/items_checks.log" "_pe_"
fi
attn_compare_builds "$OUT/items" "$K" "$SH" stamp kvf
grep -h "probe " "$OUT"/items_stamp_2.log "$OUT"/items_kvf_2.log | sed 's/^ *//' | cut -c1-400
