#!/usr/bin/env bash
# O stored with TMA (C::OTMA, the path chosen on kernel parameters only) and the item hand-off (C::HANDOFF), each alone
# and together, as twins of the shipped persistent kernels in one harness build ("ot", "ho", "hot" names): their
# checks (forced persistent grids too), memcheck and racecheck of each variant alone, and two timing rounds of every
# twin in one process. Build on this machine first (ptxas -v: no C7520, no spills in the twins):
#   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -lineinfo -I device -I device/abi \
#       tests/gpu/attn/attn_standalone.cu -lcuda -o build-probe/attn
# Usage (GPU machine, repo root, carry build-probe): OUT=<dir> bash tuning/probes/attn_otma_run.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
: >"$L/ot_checks.log"
for f in _ot_ _hot_ _ho_; do
    attn_checks "$f" "$L/ot_checks.log" "$f"
    KILN_CHECK_TIMEOUT=90 attn_forced_grid_checks "$L/ot_checks.log" "$f"
done
attn_checks_summary "$L/ot_checks.log" >"$OUT/ot_checks.log"
KILN_SAN_CASES="129x129 varlen" attn_sanitize "$L/ot_sanitizers_full.log" attn_wg_d128_s1_pmx_pe_ot_vpre_e4m3_bf16 \
    attn_wg_d128_s1_pmx_pe_ho_vpre_e4m3_bf16 attn_wg_m192_d64_n128_st3_pmx_pe_ot_vpre_e4m3_bf16 |
    tee "$OUT/ot_sanitizers.log"
grep -m 40 -E "RACECHECK|Error|Write|Read|in attn|at 0x" "$L/ot_sanitizers_full.log" >"$OUT/ot_sanitizer_reports.txt"
attn_times "$OUT/ot_times.log" \
    "attn_wg_d128_s1_pmx_pe_,attn_wg_d64_s2_pmx_pe_,attn_wg_m192_d64_n128_st3_pmx_pe_" \
    "4x32x4096x128,8x16x2048x128,1x16x16384x128,2x16x8192x64" | tee "$OUT/ot_times.txt"
echo "total: $(( $(date +%s) - PROBE_T0 )) s"
