#!/usr/bin/env bash
# FRESH (a row block's first tile skips the speculative P) against PMAX without it ("pmxfr" harness kernels), timed in
# alternating rounds while the library builds; then the GPU suite and bench_attn on the built library.
# Ran at 1279076 (tuning/results/probe_attn_fresh_h200_times.txt, where the FRESH kernels are "pmx" and those without it
# "pmxnf"); FRESH lost on the packed-V kernels and was removed from the header after it, with its harness kernels:
# check out 1279076 to run it again.
# Usage (GPU machine, repo root, harness built as build-probe/attn): KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_fresh_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
L=/tmp/kiln-logs
mkdir -p "$OUT" "$L"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
PY=$(command -v python3)
t0=$(date +%s)
{ cmake -S . -B build -G Ninja -DKILN_ARCHS=sm90 -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE="$PY" &&
  cmake --build build -j "$(nproc)"; } >"$L/build.log" 2>&1 &
bp=$!
A=build-probe/attn
timeout 100 $A --filter pmx --no-bench >"$L/checks.log" 2>&1
echo "checks (pmx, pmxfr): $(grep -c '^ok' "$L/checks.log") ok, $(grep -c '^FAIL' "$L/checks.log") FAIL"
K=d128_s1_pmx_vpre,d128_s1_pmxfr_vpre,m192_d64_n128_st3_pmx_vpre,m192_d64_n128_st3_pmxfr_vpre
K=$K,d256_n64_s1_st3_pmx_vpre,d256_n64_s1_st3_pmxfr_vpre,d128_s1_pmx_fe1,d128_s1_pmxfr_fe1
T="$OUT/fresh_times.log"
: >"$T"
for round in 1 2; do
    timeout 100 $A --filter none_at_all --bench-filter "$K" \
        --shapes 4x32x4096x128,2x16x2048x128,2x16x8192x64,4x16x2048x64,2x8x8192x256 >>"$T" 2>&1
done
grep -E "^[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn.* [0-9.]+e-[0-9]+" "$T" |
    awk '{printf "%-16s %-7s %-44s %8s\n", $1, $2, $3, $5}' | sort -k1,1 -k2,2 -k3,3 -s
wait $bp || { tail -30 "$L/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
OUT="$L/dr" KILN_SKIP_SANITIZERS=1 KILN_SKIP_BENCH=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 bash tests/gpu/device_run.sh >"$L/device_run.log" 2>&1
cp "$L/dr/gpu_run.jsonl" "$L/dr/pytest.log" "$OUT/" 2>/dev/null
grep -E "^pytest" "$L/device_run.log"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -10
KILN_LIBRARY=$PWD/build/libkiln.so timeout 120 "$PY" bench/bench_attn.py --budget-s 0.6 --out-dir "$OUT" >"$L/bench_attn.log" 2>&1
echo "bench_attn rc=$?"; tail -9 "$L/bench_attn.log"
