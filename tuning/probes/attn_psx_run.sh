#!/usr/bin/env bash
# PSUM beyond the shipped entries (the "psx" harness kernels): head dim 128 with three stages or the speculative P,
# three consumers at head dim 128, and the bm 64 packed-V kernels of head dims 64 and 128; checks, then two
# alternating timing rounds against the shipped kernels. With NCU=1 also the full ncu set and the SASS source page
# (warp-stall samples) of the shipped head-dim-128 kernel at 4x32x4096x128, and its SASS.
# The "sx" kernels (S in two halves, SSPLIT) lost and were removed from the header and the harness after f139bf4; the
# timing filters still name them (they then match nothing).
# Usage (GPU machine, repo root, harness built with -lineinfo as build-probe/attn):
#   OUT=<dir> [NCU=1] bash tuning/probes/attn_psx_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
A=build-probe/attn
L="$OUT/psx.log"
: >"$L"
for f in psx m64_d128_s1_pv16_vpre m64_d64_s1_pv16_vpre; do timeout 120 $A --filter $f --no-bench >>"$L" 2>&1; done
grep -E "regs=" "$L" | sort -u | grep -E "psx|m64_d(64|128)_s1_pv16_vpre|d128_s1_ps16_vpre|m192_d64_n128_st3_ps16" | head -20
echo "checks: $(grep -c '^ok' "$L") ok, $(grep -c '^FAIL' "$L") FAIL"
grep '^FAIL' "$L" | head -5
K128=attn_wg_d128_s1_ps16_vpre_e4m3_bf16,attn_wg_d128_s1_st3_psx_vpre,attn_wg_d128_s1_spec_psx_vpre
K128=$K128,attn_wg_d128_s1_sx_psx_vpre,attn_wg_d128_s1_st3_sx_psx_vpre,attn_wg_m192_d128_n64_s1_psx_vpre
K128=$K128,attn_wg_m192_d128_n128_psx_vpre
K64=attn_wg_m192_d64_n128_st3_ps16_vpre,attn_wg_d64_s1_ps16_vpre,attn_wg_d64_s1_spec_psx_vpre,attn_wg_d64_s1_sx_psx_vpre
KM64=attn_wg_m64_d128_s1_pv16_vpre,attn_wg_m64_d128_s1_psx_vpre,attn_wg_m64_d128_s1_sx_psx_vpre
KM64=$KM64,attn_wg_m64_d64_s1_pv16_vpre,attn_wg_m64_d64_s1_psx_vpre
T="$OUT/psx_times.log"
: >"$T"
for round in 1 2; do
    timeout 150 $A --filter none_at_all --bench-filter "$K128" --shapes 4x32x4096x128,1x16x16384x128 >>"$T" 2>&1
    timeout 90 $A --filter none_at_all --bench-filter "$K64" --shapes 2x16x8192x64,4x16x4096x64 >>"$T" 2>&1
    timeout 90 $A --filter none_at_all --bench-filter "$KM64" --shapes 1x8x512x128,2x8x2048x128,1x8x512x64,2x8x2048x64 >>"$T" 2>&1
done
grep -E "^[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn" "$T" | awk '{printf "%-16s %-7s %-48s %8s\n", $1, $2, $3, $5}' |
    sort -k1,1 -k2,2 -k3,3 -s
if [ "${NCU:-0}" = 1 ]; then
    K=attn_wg_d128_s1_ps16_vpre_e4m3_bf16
    cuobjdump -sass -fun $K $A >"$OUT/sass_d128.txt" 2>&1
    echo "SASS lines: $(wc -l <"$OUT/sass_d128.txt")"
    timeout 240 ncu --clock-control none --set full --import-source yes -k regex:d128_s1_ps16_vpre_e4m3 --launch-skip 1 --launch-count 1 \
        -o /tmp/rep_d128 -f $A --filter none_at_all --bench-filter $K --shapes 4x32x4096x128 >"$OUT/ncu_run.log" 2>&1
    echo "ncu rc=$?"
    ncu -i /tmp/rep_d128.ncu-rep --page details >"$OUT/ncu_details_d128.txt" 2>&1
    ncu -i /tmp/rep_d128.ncu-rep --page source --csv --print-source sass >"$OUT/ncu_sass_d128.csv" 2>&1
    grep -E "SM Frequency|Duration|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Eligible Warps|Registers Per" \
        "$OUT/ncu_details_d128.txt" | head -20
fi
