#!/usr/bin/env bash
# O through shared memory and bulk copies (epilogue_staged) and the items handed to the consumers by the producer
# (ItemMsg), one device command: the library builds in the background while tuning/probes/attn_epilogue_run.sh checks
# the harness of both changes (build-probe/attn_msg: every wgmma kernel, forced persistent grids too) and times it in
# alternating rounds against the harness before them (attn_stamp) and with the staged O alone (attn_ost), all three
# built with -DKILN_PROBE_ITEM_CLOCKS; then the GPU suite on the library and, with KILN_BENCH_ATTN=1, bench_attn.
# Usage (GPU machine, repo root): KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_ostage_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
attn_build_library
KILN_NEW=msg KILN_OLD="stamp ost" \
    KILN_ITEM_SHAPES=${KILN_ITEM_SHAPES:-4x32x4096x128,8x16x2048x128,2x16x8192x64,2x8x8192x256} \
    OUT="$OUT" bash "$(dirname "$0")/attn_epilogue_run.sh"
for v in stamp ost; do attn_item_probes "$v" >"$OUT/${v}_probe.txt"; done
attn_wait_library || exit 1
attn_suite_and_bench
