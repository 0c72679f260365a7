#!/usr/bin/env bash
# One device command for the 16-byte O stores: the library builds in the background while the harness runs
# tuning/probes/attn_epilogue_run.sh (checks, forced persistent grids, timing against the harness before the change),
# then the GPU suite on the built library; with KILN_BENCH_ATTN=1 also bench_attn.py in what the command has left.
# Usage (GPU machine, repo root, harnesses in build-probe/): KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_epilogue_ship_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
attn_build_library
[ "${KILN_SKIP_HARNESS:-0}" = 1 ] || OUT="$OUT" bash "$(dirname "$0")/attn_epilogue_run.sh"
attn_wait_library || exit 1
attn_suite_and_bench
