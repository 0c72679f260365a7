#!/usr/bin/env bash
# The TMA-stored O in the library (every persistent attention kernel where its staging fits): the sm90 library builds
# in the background while the harness checks its "ot" twins (forced persistent grids too) and runs memcheck and
# racecheck on the two twins that tuning/probes/attn_otma_run.sh did not (head dim 64 sched 2; f16 O); then the GPU
# suite on the library and bench_attn (KILN_BENCH_ATTN=1) in what the command has left.
# Usage (GPU machine, repo root, carry build-probe): KILN_BENCH_ATTN=1 OUT=<dir> bash tuning/probes/attn_otma_ship_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
attn_build_library
attn_check_and_sanitize ot_ship _ot_ _ot_ attn_wg_d64_s2_pmx_pe_ot_e4m3_bf16 attn_wg_d128_s1_pmx_pe_ot_ps16_e5m2_f16
attn_wait_library || exit 1
attn_suite_and_bench
