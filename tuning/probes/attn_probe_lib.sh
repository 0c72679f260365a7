# Shared steps of the attention device probes (sourced; the GPU machine, repo root, the harness built as
# build-probe/attn). Sets OUT (results that come back), L (logs that need not), PY and A, and puts nvcc's tools on PATH.
OUT=${OUT:-/tmp/kiln-out}
L=/tmp/kiln-logs
mkdir -p "$OUT" "$L"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
PY=$(command -v python3)
A=build-probe/attn
PROBE_T0=$(date +%s)

# The sm90 library, built in the background (the harness runs beside it); attn_wait_library waits for it.
attn_build_library() {
    { cmake -S . -B build -G Ninja -DKILN_ARCHS=sm90 -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE="$PY" &&
      cmake --build build -j "$(( $(nproc) - 2 ))"; } >"$L/build.log" 2>&1 &
    LIBRARY_PID=$!
}
attn_wait_library() {
    wait "$LIBRARY_PID" || { tail -30 "$L/build.log"; return 1; }
    echo "build: $(( $(date +%s) - PROBE_T0 )) s"
    grep -h "ptxas serialized" "$L/build.log" | head -5 || true  # wgmma serialized (C7510-C7520, buildtools.py)
}

# attn_checks LABEL LOG FILTER: the harness's checks of the cases whose name holds FILTER, appended to LOG, counted.
attn_checks() {
    timeout "${KILN_CHECK_TIMEOUT:-240}" $A --filter "$3" --no-bench >"$L/checks.log" 2>&1
    echo "checks $1: rc $? $(grep -c '^ok' "$L/checks.log") ok, $(grep -c '^FAIL' "$L/checks.log") FAIL"
    cat "$L/checks.log" >>"$2"
}
# attn_checks_summary LOG: the summary and FAIL lines of a checks log and its count of ok lines.
attn_checks_summary() {
    grep -E "summary|^FAIL" "$1"
    echo "ok lines: $(grep -c '^ok' "$1")"
}
# attn_item_probes BUILD: the item-stamp lines of attn_compare_builds' second round of build BUILD (prefix $L/times).
attn_item_probes() {
    grep -h "probe " "$L/times_${1}_2.log" | sed 's/^ *//; s/producer.*consumer 1/consumer 1/' | cut -c1-330
}
# attn_forced_grid_checks LOG FILTER: the persistent kernels' checks with the grid forced to 5 CTAs, causal pairs off
# and on (every CTA walks many items).
attn_forced_grid_checks() {
    for pairs in 0 1; do
        KILN_PERSIST_GRID=5 KILN_PERSIST_PAIRS=$pairs attn_checks "$2, grid 5, pairs $pairs" "$1" "$2"
    done
}
# attn_sanitize LOG KERNEL...: memcheck and racecheck of each kernel's cases named in KILN_SAN_CASES (space-separated
# name parts after "KERNEL: "; default 129x129) on a grid forced to 3 CTAs.
attn_sanitize() {
    local log=$1 tool k c
    shift
    : >"$log"
    for tool in memcheck racecheck; do
        for k in "$@"; do
            for c in ${KILN_SAN_CASES:-129x129}; do
                KILN_PERSIST_GRID=3 KILN_PERSIST_PAIRS=1 timeout 90 compute-sanitizer --tool $tool --print-limit 5 \
                    $A --filter "${k}: $c" --no-bench >"$L/san.log" 2>&1
                echo "$tool $k $c: rc $? $(grep -cE '^ok' "$L/san.log") ok $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/san.log" | tail -1)"
                cat "$L/san.log" >>"$log"
            done
        done
    done
}
# attn_check_and_sanitize NAME FILTER GRID_FILTER KERNEL...: the harness's checks of the cases whose name holds FILTER,
# those of GRID_FILTER on forced persistent grids, their summary ($OUT/NAME_checks.log), then memcheck and racecheck
# of each KERNEL's 129x129 and varlen cases ($OUT/NAME_sanitizers.log, the first reports in
# $OUT/NAME_sanitizer_reports.txt).
attn_check_and_sanitize() {
    local name=$1 filter=$2 grid_filter=$3
    shift 3
    : >"$L/${name}_checks.log"
    attn_checks "$filter" "$L/${name}_checks.log" "$filter"
    KILN_CHECK_TIMEOUT=90 attn_forced_grid_checks "$L/${name}_checks.log" "$grid_filter"
    attn_checks_summary "$L/${name}_checks.log" >"$OUT/${name}_checks.log"
    KILN_SAN_CASES="129x129 varlen" attn_sanitize "$L/${name}_sanitizers_full.log" "$@" | tee "$OUT/${name}_sanitizers.log"
    grep -m 40 -E "RACECHECK|Error|Write|Read|in attn|at 0x" "$L/${name}_sanitizers_full.log" \
        >"$OUT/${name}_sanitizer_reports.txt"
}
# attn_times LOG KERNELS SHAPES: two timing rounds of the kernels whose names hold any of KERNELS (comma-separated) at
# SHAPES, then a sorted table (shape, mask, kernel, TFLOP/s).
attn_times() {
    : >"$1"
    for round in 1 2; do
        timeout "${KILN_TIMES_TIMEOUT:-150}" $A --filter none_at_all --bench-filter "$2" --shapes "$3" >>"$1" 2>&1
    done
    grep -E "^[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn.* [0-9.]+e-[0-9]+" "$1" |
        awk '{printf "%-16s %-7s %-46s %8s\n", $1, $2, $3, $5}' | sort -k1,1 -k2,2 -k3,3 -s
}
# attn_compare_builds PREFIX KERNELS SHAPES BUILD...: two timing rounds of build-probe/attn_BUILD for each BUILD in
# turn (logs PREFIX_BUILD_ROUND.log), then each build's rows (shape, mask, kernel, TFLOP/s) sorted.
attn_compare_builds() {
    local prefix=$1 k=$2 sh=$3 round v
    shift 3
    for round in 1 2; do
        for v in "$@"; do
            timeout "${KILN_TIMES_TIMEOUT:-150}" build-probe/attn_$v --filter none_at_all --bench-filter "$k" \
                --shapes "$sh" >"${prefix}_${v}_$round.log" 2>&1
            echo "times $v round $round: rc $?"
        done
    done
    for v in "$@"; do
        echo "== $v"
        cat "${prefix}_${v}"_*.log | grep -E "^ +[0-9]+x[0-9]+x[0-9]+x[0-9]+ +(full|causal) +attn" |
            awk '{printf "%-16s %-7s %-46s %8s\n", $1, $2, $3, $6}' | sort -k1,1 -k2,2 -k3,3 -s
    done
}
# attn_suite_and_bench: the GPU suite on the built library (records under $OUT) and, with KILN_BENCH_ATTN=1,
# bench_attn.py in what the command has left (KILN_CMD_SECONDS, default 585 of a 10-minute command).
attn_suite_and_bench() {
    OUT="$L/dr" KILN_SKIP_SANITIZERS=1 KILN_SKIP_BENCH=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 \
        bash tests/gpu/device_run.sh >"$L/device_run.log" 2>&1
    cp "$L/dr/gpu_run.jsonl" "$L/dr/pytest.log" "$OUT/" 2>/dev/null
    grep -E "^pytest|^build" "$L/device_run.log"
    grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -10
    [ "${KILN_BENCH_ATTN:-0}" = 1 ] || return 0
    local left=$(( ${KILN_CMD_SECONDS:-585} - ($(date +%s) - PROBE_T0) ))
    [ "$left" -gt 120 ] || { echo "bench_attn skipped: ${left} s left"; return 0; }
    KILN_LIBRARY=$PWD/build/libkiln.so timeout "$left" "$PY" bench/bench_attn.py --out-dir "$OUT" >"$L/bench_attn.log" 2>&1
    echo "bench_attn rc=$?"
    tail -25 "$L/bench_attn.log"
}
