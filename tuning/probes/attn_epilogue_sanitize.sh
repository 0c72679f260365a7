#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck of the 16-byte O stores: the shipped persistent kernels (and a bm 64 one)
# on a 129x129 case (O's rows 16-byte aligned: the quad transpose) and the strided padded layout (O's rows 8-byte
# aligned: the 4-byte stores), persistent grids forced to 3 CTAs. Harness build-probe/attn_ep.
# Usage (GPU machine, repo root): OUT=<dir> bash tuning/probes/attn_epilogue_sanitize.sh
set -uo pipefail
source "$(dirname "$0")/attn_probe_lib.sh"
A=build-probe/attn_${KILN_NEW:-ep}
log="$OUT/ep_sanitizers.log"
: >"$log"
for tool in memcheck racecheck; do
    for k in attn_wg_d128_s1_pmx_pe_e4m3_bf16 attn_wg_d128_s1_pmx_pe_vpre_e4m3_bf16 attn_wg_d64_s2_pmx_pe_e4m3_bf16 \
             attn_wg_d256_n64_s1_st3_pmx_pe_vpre_e4m3_bf16 attn_wg_m64_d128_s1_pmx_e4m3_bf16; do
        for c in "129x129" "strided"; do
            KILN_PERSIST_GRID=3 KILN_PERSIST_PAIRS=1 timeout 90 compute-sanitizer --tool $tool --print-limit 5 \
                $A --filter "${k}: $c" --no-bench >"$L/san.log" 2>&1
            echo "$tool $k $c: rc $? $(grep -cE '^ok' "$L/san.log") ok $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/san.log" | tail -1)" | tee -a "$log"
        done
    done
done
