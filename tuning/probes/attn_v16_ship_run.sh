#!/usr/bin/env bash
# One device command for the f16 V widened in place: the library builds in the background while the harness runs
# tuning/probes/attn_v16_run.sh (checks, forced persistent grids, sanitizers, timing), then the GPU suite on the built
# library; with KILN_BENCH_ATTN=1 also bench_attn.py (which does not fit beside a fresh build in one command).
# Usage (GPU machine, repo root, harness built as build-probe/attn): KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_v16_ship_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
L=/tmp/kiln-logs
mkdir -p "$OUT" "$L"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
PY=$(command -v python3)
t0=$(date +%s)
{ cmake -S . -B build -G Ninja -DKILN_ARCHS=sm90 -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE="$PY" &&
  cmake --build build -j "$(( $(nproc) - 2 ))"; } >"$L/build.log" 2>&1 &
bp=$!
[ "${KILN_SKIP_HARNESS:-0}" = 1 ] || OUT="$OUT" bash tuning/probes/attn_v16_run.sh
wait $bp || { tail -30 "$L/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
OUT="$L/dr" KILN_SKIP_SANITIZERS=1 KILN_SKIP_BENCH=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 bash tests/gpu/device_run.sh >"$L/device_run.log" 2>&1
cp "$L/dr/gpu_run.jsonl" "$L/dr/pytest.log" "$OUT/" 2>/dev/null
grep -E "^pytest|^build" "$L/device_run.log"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -10
[ "${KILN_BENCH_ATTN:-0}" = 1 ] || exit 0
left=$(( 585 - ($(date +%s) - t0) ))  # what the 10-minute command has left
[ "$left" -gt 120 ] || { echo "bench_attn skipped: ${left} s left"; exit 0; }
KILN_LIBRARY=$PWD/build/libkiln.so timeout "$left" "$PY" bench/bench_attn.py --out-dir "$OUT" >"$L/bench_attn.log" 2>&1
echo "bench_attn rc=$?"; tail -25 "$L/bench_attn.log"
