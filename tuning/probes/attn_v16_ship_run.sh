#!/usr/bin/env bash
# One device command for the f16 V widened in place: the library builds in the background while the harness runs
# tuning/probes/attn_v16_run.sh (checks, forced persistent grids, sanitizers, timing), then the GPU suite on the built
# library; with KILN_BENCH_ATTN=1 also bench_attn.py in what the command has left.
# Usage (GPU machine, repo root, harness built as build-probe/attn): KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_v16_ship_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
attn_build_library
[ "${KILN_SKIP_HARNESS:-0}" = 1 ] || OUT="$OUT" bash "$(dirname "$0")/attn_v16_run.sh"
attn_wait_library || exit 1
attn_suite_and_bench
