#!/usr/bin/env bash
# Two Q buffers in the persistent kernels (the next item's Q loads while the consumers still work on the current one),
# the items handed to the consumers by the producer (ItemMsg), and O stored with TMA from per-warp staging rows, one
# device command: the library builds in the background while tuning/probes/attn_epilogue_run.sh checks the harness of
# all three (build-probe/attn_otma: every wgmma kernel, forced persistent grids too) and times it in alternating
# rounds against the harness before them (attn_stamp) and the one with the first two only (attn_q2), all built with
# -DKILN_PROBE_ITEM_CLOCKS; memcheck and racecheck of the TMA-stored O (the packed-V^T head dim 128 and the head dim 64
# kernel, forced 3-CTA grids, a 129x129 case and a varlen one); then the GPU suite on the library and, with
# KILN_BENCH_ATTN=1, bench_attn.
# Usage (GPU machine, repo root): KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_qbuf_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
attn_build_library
KILN_NEW=otma KILN_OLD="stamp q2" \
    KILN_ITEM_SHAPES=${KILN_ITEM_SHAPES:-4x32x4096x128,8x16x2048x128,2x16x8192x64} \
    OUT="$OUT" bash "$(dirname "$0")/attn_epilogue_run.sh"
for v in stamp q2; do attn_item_probes "$v" >"$OUT/${v}_probe.txt"; done
A=build-probe/attn_otma
KILN_SAN_CASES="129x129 varlen" attn_sanitize "$L/otma_sanitizers_full.log" attn_wg_d128_s1_pmx_pe_vpre_e4m3_bf16 \
    attn_wg_d64_s2_pmx_pe_e4m3_bf16 | tee "$OUT/otma_sanitizers.log"
attn_wait_library || exit 1
attn_suite_and_bench
