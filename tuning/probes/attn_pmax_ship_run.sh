#!/usr/bin/env bash
# One device command for the speculate entries: the library builds in the background while compute-sanitizer checks
# the harness's pmx kernels (memcheck; racecheck of one kernel per shipped schedule), then the GPU suite, bench_attn
# and the pmx timings of the bm 64 / transposer entries (attn_pmax2_run.sh) on a quiet CPU.
# Usage (GPU machine, repo root, harness built as build-probe/attn): KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_pmax_ship_run.sh
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
S="$OUT/pmx_sanitizers.log"
timeout 150 compute-sanitizer --tool memcheck $A --filter pmx --no-bench >"$S" 2>&1
echo "memcheck rc=$?: $(grep -c '^ok' "$S") ok, $(grep -c '^FAIL' "$S") FAIL; $(grep -E 'ERROR SUMMARY' "$S" | tail -1)"
for k in d128_s1_pmx_vpre m192_d64_n128_st3_pmx_vpre d256_n64_s1_st3_pmx_vpre d128_s1_pmx_fe1 d64_s2_pmx_e4m3 \
         m64_d128_s1_pmx_vpre m64_d256_n64_pmx_e4m3; do
    kill -0 $bp 2>/dev/null || break  # the build is done: the suite first
    timeout 60 compute-sanitizer --tool racecheck $A --filter $k --no-bench >>"$S" 2>&1
    echo "racecheck $k rc=$?: $(grep -E 'RACECHECK SUMMARY' "$S" | tail -1)"
done
wait $bp || { tail -30 "$L/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
OUT="$L/dr" KILN_SKIP_SANITIZERS=1 KILN_SKIP_BENCH=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 bash tests/gpu/device_run.sh >"$L/device_run.log" 2>&1
cp "$L/dr/gpu_run.jsonl" "$L/dr/pytest.log" "$OUT/" 2>/dev/null
grep -E "^pytest|^build" "$L/device_run.log"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -10
KILN_LIBRARY=$PWD/build/libkiln.so timeout 150 "$PY" bench/bench_attn.py --out-dir "$OUT" >"$L/bench_attn.log" 2>&1
echo "bench_attn rc=$?"; tail -25 "$L/bench_attn.log"
OUT=$L SAN=0 timeout 150 bash tuning/probes/attn_pmax2_run.sh | tail -60
