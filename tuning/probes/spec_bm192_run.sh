#!/usr/bin/env bash
# The speculative P on by default at bm 192 (device/kiln_attn_wgmma.h, SPEC): the harness's bm 192 kernels checked
# (default SPEC on, and the "nospec" twin), then timed side by side in two alternating rounds.
# Usage (GPU machine, repo root, harness built as build-probe/attn): OUT=<dir> bash tuning/probes/spec_bm192_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
A=build-probe/attn
$A --filter m192_d64_n128_st3 --no-bench >"$OUT/spec_check.log" 2>&1
echo "checks rc=$?: $(grep -ci fail "$OUT/spec_check.log") lines with 'fail', $(grep -c . "$OUT/spec_check.log") lines"
K=attn_wg_m192_d64_n128_st3_pv16_vpre_e4m3_bf16,attn_wg_m192_d64_n128_st3_nospec_pv16_vpre_e4m3_bf16
for round in 1 2; do
    $A --filter none_at_all --bench-filter "$K" --shapes 2x16x8192x64,1x16x16384x64,4x16x2048x64 \
        >"$OUT/spec_times_$round.log" 2>&1
done
grep -h "attn_wg_m192" "$OUT"/spec_times_*.log | tail -24
