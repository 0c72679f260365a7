#!/usr/bin/env bash
# The consumers' epilogue in 16-byte stores and the first tile's softmax without the speculative P: the harness of the
# change built with -DKILN_PROBE_ITEM_CLOCKS as build-probe/attn_ep, the one before it as build-probe/attn_stamp
# (tuning/probes/attn_items_run.sh). Checks of every wgmma kernel (forced persistent grids too) with the new one, then
# two alternating timing rounds of the shipped persistent kernels and the new one's item stamps.
# Usage (GPU machine, repo root): OUT=<dir> bash tuning/probes/attn_epilogue_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
K=${KILN_ITEM_KERNELS:-attn_wg_d128_s1_pmx_pe_e4m3_bf16,attn_wg_d128_s1_pmx_pe_vpre_e4m3_bf16,attn_wg_d64_s2_pmx_pe_e4m3_bf16,attn_wg_m192_d64_n128_st3_pmx_pe_vpre,attn_wg_d256_n64_s1_st3_pmx_pe_vpre}
SH=${KILN_ITEM_SHAPES:-4x32x4096x128,8x16x2048x128,1x16x16384x128,2x16x8192x64,2x8x8192x256}
NEW=${KILN_NEW:-ep} OLD=${KILN_OLD:-stamp}
if [ "${KILN_SKIP_CHECKS:-0}" != 1 ]; then
    A=build-probe/attn_$NEW
    : >"$L/${NEW}_checks.log"
    attn_checks "$NEW attn_wg" "$L/${NEW}_checks.log" "attn_wg"
    KILN_CHECK_TIMEOUT=${KILN_GRID_CHECK_TIMEOUT:-90} attn_forced_grid_checks "$L/${NEW}_checks.log" "_pe_"
    attn_checks_summary "$L/${NEW}_checks.log" >"$OUT/${NEW}_checks.log"
fi
attn_compare_builds "$L/times" "$K" "$SH" $OLD $NEW
for f in "$L"/times_*.log; do echo "== $f"; cat "$f"; done >"$OUT/${NEW}_times.log"
attn_item_probes "$NEW"
