#!/usr/bin/env bash
# One device command for the persist entries: the library builds in the background while the harness checks the "pe"
# kernels with the grid forced to 5 CTAs (causal pairs on and off) and times them against their one-block-a-CTA twins
# at small and mid sizes, then the GPU suite and bench_attn on the built library. Ran at 64f75b6 (shapes
# 1x16x16384x128, 2x8x8192x256, 1x8x512x64, 1x8x1024x128, 2x16x1024x64) and at the one-wave 3-D grid after it.
# Usage (GPU machine, repo root, harness built as build-probe/attn): KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_persist_ship_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
L=/tmp/kiln-logs  # logs that need not come back (the device tool returns 8 files)
mkdir -p "$OUT" "$L"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
PY=$(command -v python3)
t0=$(date +%s)
{ cmake -S . -B build -G Ninja -DKILN_ARCHS=sm90 -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE="$PY" &&
  cmake --build build -j "$(( $(nproc) - 2 ))"; } >"$L/build.log" 2>&1 &
bp=$!
A=build-probe/attn
C="$OUT/persist2_checks.log"
: >"$C"
for pairs in 0 1; do
    KILN_PERSIST_GRID=5 KILN_PERSIST_PAIRS=$pairs timeout 120 $A --filter _pe_ --no-bench >"$L/c$pairs.log" 2>&1
    echo "checks, grid 5, pairs $pairs: rc $? $(grep -c '^ok' "$L/c$pairs.log") ok, $(grep -c '^FAIL' "$L/c$pairs.log") FAIL"
    cat "$L/c$pairs.log" >>"$C"
done
K=d128_s1_pmx_vpre,d128_s1_pmx_pe_vpre,m192_d64_n128_st3_pmx_vpre,m192_d64_n128_st3_pmx_pe_vpre
K=$K,d256_n64_s1_st3_pmx_vpre,d256_n64_s1_st3_pmx_pe_vpre,d64_s2_pmx_e4m3,d64_s2_pmx_pe
T="$OUT/persist2_times.log"
: >"$T"
for round in 1 2; do
    timeout 100 $A --filter none_at_all --bench-filter "$K" \
        --shapes 1x8x512x64,1x8x1024x128,2x16x1024x64,4x32x4096x128,8x16x2048x128 >>"$T" 2>&1
done
grep -E "^[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn.* [0-9.]+e-[0-9]+" "$T" |
    awk '{printf "%-16s %-7s %-44s %8s\n", $1, $2, $3, $5}' | sort -k1,1 -k2,2 -k3,3 -s
wait $bp || { tail -30 "$L/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
OUT="$L/dr" KILN_SKIP_SANITIZERS=1 KILN_SKIP_BENCH=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 bash tests/gpu/device_run.sh >"$L/device_run.log" 2>&1
cp "$L/dr/gpu_run.jsonl" "$L/dr/pytest.log" "$OUT/" 2>/dev/null
grep -E "^pytest|^build" "$L/device_run.log"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -10
[ "${KILN_SKIP_BENCH_ATTN:-0}" = 1 ] && exit 0
KILN_LIBRARY=$PWD/build/libkiln.so timeout 150 "$PY" bench/bench_attn.py --out-dir "$OUT" >"$L/bench_attn.log" 2>&1
echo "bench_attn rc=$?"; tail -25 "$L/bench_attn.log"
