#!/usr/bin/env bash
# One GPU-machine session: build the library for the device, run the GPU suite, compute-sanitizer, the benchmark.
# Usage (on the GPU machine, repo root): KILN_COMMIT=<sha> OUT=<dir> bash tests/gpu/device_run.sh [bench args]
#   KILN_BENCH=moe / attn / w8: bench_moe.py (block-scaled and grouped) / bench_attn.py / bench_w8.py (weight-only
#   fp8) instead of bench_gemm.py; KILN_SKIP_ATTN=1 skips the attention harness, KILN_SKIP_SANITIZERS=1 /
#   KILN_SKIP_BENCH=1 / KILN_SKIP_SASS=1 / KILN_SKIP_SUITE=1 the sanitizers / the benchmark / the SASS census / the
#   GPU suite. The build (~5-7 minutes) and the sanitizers do not fit one 10-minute device command together with the
#   suite: run the suite in one call and, on the still-warm machine (the build is kept), KILN_SKIP_SUITE=1
#   KILN_SKIP_BENCH=1 KILN_SKIP_ATTN=1 for the sanitizers.
#   KILN_PREBUILT=<libkiln.so.xz>: the library built elsewhere (tuning/probes/full_lib_build.sh on the CPU machine,
#   ~27 minutes there; xz brings its ~105 MB of code objects to ~5 MB, within what a device call carries) instead of
#   the build: the suite then takes about a minute of the call. The sanitizers' example run needs build/kiln_example
#   and is left out then.
# Writes under $OUT: build.log, pytest.log, gpu_run.jsonl, memcheck.log, racecheck.log, bench.json/.md.
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
PY=$(command -v python3)
ARCH=${KILN_ARCHS:-sm90}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/device.txt"

t0=$(date +%s)
if [ -n "${KILN_PREBUILT:-}" ]; then
    mkdir -p build && "$PY" -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
        "$KILN_PREBUILT" build/libkiln.so || { echo "cannot unpack $KILN_PREBUILT"; exit 1; }
    echo "prebuilt library $KILN_PREBUILT: $(stat -c %s build/libkiln.so) bytes" | tee "$OUT/build.log"
elif ! { cmake -S . -B build -G Ninja -DKILN_ARCHS="$ARCH" -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE="$PY" &&
       cmake --build build -j "$(nproc)"; } >"$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"; exit 1
else
    echo "build: $(( $(date +%s) - t0 )) s, $(ls build/code/*/*.co | wc -l) code objects"
    grep -h "ptxas serialized" "$OUT/build.log" | head -5  # kernels whose wgmma ptxas serialized (buildtools.py)
fi
[ -x build/kiln_example ] && build/kiln_example | tail -2

export KILN_LIBRARY="$PWD/build/libkiln.so" KILN_COMMIT="${KILN_COMMIT:-unknown}" KILN_GPU_LOG="$OUT/gpu_run.jsonl"
if [ "${KILN_SKIP_SUITE:-0}" != 1 ]; then
    "$PY" -m pytest -q -p no:cacheprovider tests/gpu >"$OUT/pytest.log" 2>&1
    echo "pytest rc=$?: $(tail -1 "$OUT/pytest.log")"
fi

# SASS of the wgmma kernels: the main loop must issue QGMMA (fp8) / HGMMA (16-bit) and nothing may touch local memory.
# One cuobjdump per code object, as many at once as there are cores (one after another they took ~4 minutes of the
# 10 a device command may run).
sass_counts() {
    cuobjdump -sass "$1" 2>/dev/null | awk -v n="$(basename "$1" .co)" '
        /QGMMA/ {q++} /HGMMA/ {h++} /LDL|STL/ {l++}
        END {printf "%s QGMMA=%d HGMMA=%d LDL/STL=%d\n", n, q, h, l}'
}
if command -v cuobjdump >/dev/null && [ "${KILN_SKIP_SASS:-0}" != 1 ]; then
    export -f sass_counts
    ls build/code/sm90/*WGMMA*.co 2>/dev/null | xargs -r -P "$(nproc)" -I{} bash -c 'sass_counts "$1"' _ {} |
        sort >"$OUT/sass.txt"
    echo "sass: $(wc -l <"$OUT/sass.txt") wgmma kernels, $(awk '$2=="QGMMA=0" && $3=="HGMMA=0"' "$OUT/sass.txt" | wc -l) without GMMA, $(grep -vc 'LDL/STL=0$' "$OUT/sass.txt") with local memory"
fi

# Sanitizers on a representative slice (every kernel family, attention included, and the split-K path), not the
# whole sweep (test_mixed_repeatable's thousands of runs are left to the plain suite).
if [ "${KILN_SKIP_SANITIZERS:-0}" != 1 ]; then
    KILN_GPU_LOG= timeout "${KILN_MEMCHECK_TIMEOUT:-240}" compute-sanitizer --tool memcheck --error-exitcode 9 "$PY" -m pytest -q -p no:cacheprovider \
        tests/gpu/test_scaled_mm.py tests/gpu/test_mixed_mm.py tests/gpu/test_gemm.py tests/gpu/test_empty.py \
        tests/gpu/test_grouped.py tests/gpu/test_attention.py -k "not long_keys and not repeatable" -x >"$OUT/memcheck.log" 2>&1
    rc=$?
    # the block-scaled split-K-in-a-cluster kernels, both ways of getting the scales
    KILN_GPU_LOG= timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$PY" -m pytest -q -p no:cacheprovider \
        tests/gpu/test_block_scaled.py -k cluster_split >>"$OUT/memcheck.log" 2>&1
    echo "memcheck rc=$rc/$?: $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/memcheck.log" | tail -2 | tr '\n' ' ')"
    if [ -x build/kiln_example ]; then
        timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 build/kiln_example 300 260 640 >"$OUT/racecheck.log" 2>&1
        echo "racecheck rc=$?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
    fi
    # split-K in a cluster (rank 0 reads its peers' sums over DSMEM): one dtype's sweep of those kernels. (The
    # block-scaled ones are left out: racecheck reports the scale warp's cp.async copies against the consumers' reads
    # in every two-consumer block kernel, split-K in a cluster or not, and the test's M = 130 shape takes that path
    # whatever KILN_TMA_SCALES says: its scale strides are not 16-byte multiples. racecheck reports the same for a
    # correct mbarrier ring with no cp.async at all: docs/sanitizers.md.)
    node=$(KILN_GPU_LOG= "$PY" -m pytest --collect-only -q -p no:cacheprovider tests/gpu/test_mixed_mm.py -k cluster_split | head -1)
    KILN_GPU_LOG= timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$PY" -m pytest -q -p no:cacheprovider \
        "$node" >>"$OUT/racecheck.log" 2>&1
    echo "racecheck (cluster split-K) rc=$?: $(grep -E 'RACECHECK SUMMARY' "$OUT/racecheck.log" | tail -1)"
    KILN_GPU_LOG= timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$PY" -m pytest -q -p no:cacheprovider \
        tests/gpu/test_scaled_mm.py -k cluster_split >>"$OUT/racecheck.log" 2>&1
    echo "racecheck (fp8 cluster split-K) rc=$?: $(grep -E 'RACECHECK SUMMARY' "$OUT/racecheck.log" | tail -1)"
    # What racecheck follows, on correct probe programs (tests/gpu/sanitizer/, docs/sanitizers.md): the block-scaled
    # scale warp's mbarrier ring filled three ways, and the attention kernels' turns through bar.sync / bar.arrive.
    race_probe() {  # race_probe <source stem> <label> [mode]
        [ -x "$OUT/$1" ] || nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a "tests/gpu/sanitizer/$1.cu" \
            -o "$OUT/$1" >"$OUT/$1_build.log" 2>&1 || return 0
        timeout 60 compute-sanitizer --tool racecheck "$OUT/$1" ${3:-} >"$OUT/racecheck_$1${3:-}.log" 2>&1
        echo "racecheck ($2) rc=$?: $(grep -E '^(mode|turns)|RACECHECK SUMMARY' "$OUT/racecheck_$1${3:-}.log" | tr '\n' ' ')"
    }
    for mode in 0 1 2; do race_probe cp_async_ring "mbarrier ring, mode $mode" "$mode"; done
    race_probe named_turns "named-barrier turns"
    # the attention kernels (wgmma: producer transposes into shared memory the consumers' wgmma read), and every
    # e4m3 -> bf16 table kernel forced once (test_every_attention_kernel), but the schedule-3 ones: under racecheck
    # they do not finish (one CTA, one key tile: > 120 s; docs/sanitizers.md). synccheck (named barriers, the turns
    # of schedules 2 and 3 included) and memcheck (above) take them.
    KILN_GPU_LOG= KILN_TEST_ATTN_SKIP=_SC3_ timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 "$PY" -m pytest -q -p no:cacheprovider \
        tests/gpu/test_attention.py -k "head_dims or varlen or (every_attention and F8B)" >>"$OUT/racecheck.log" 2>&1
    echo "racecheck (attention) rc=$?: $(grep -E 'RACECHECK SUMMARY' "$OUT/racecheck.log" | tail -1)"
    KILN_GPU_LOG= timeout 180 compute-sanitizer --tool synccheck --error-exitcode 9 "$PY" -m pytest -q -p no:cacheprovider \
        tests/gpu/test_attention.py -k "every_attention and F8B" >"$OUT/synccheck.log" 2>&1
    echo "synccheck (attention) rc=$?: $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/synccheck.log" | tail -2 | tr '\n' ' ')"
fi

# FP8 attention, both NVIDIA families standalone: the harness checks against float64 references (V-mean and
# long-key cases included) and times the FlashAttention shapes (tests/gpu/attn/attn_standalone.cu).
if [ "${KILN_SKIP_ATTN:-0}" != 1 ]; then
    if nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I device tests/gpu/attn/attn_standalone.cu -o "$OUT/attn" >"$OUT/attn_build.log" 2>&1; then
        timeout "${KILN_ATTN_TIMEOUT:-240}" "$OUT/attn" >"$OUT/attn.log" 2>&1
        echo "attention rc=$?: $(tail -1 "$OUT/attn.log")"
    else
        echo "attention: harness did not build"; tail -20 "$OUT/attn_build.log"
    fi
fi

if [ "${KILN_SKIP_BENCH:-0}" != 1 ]; then
    case "${KILN_BENCH:-gemm}" in
    gemm) "$PY" bench/bench_gemm.py --out "$OUT/bench" "$@" 2>&1 | tail -25 ;;
    moe) "$PY" bench/bench_moe.py --out-dir "$OUT" "$@" 2>&1 | tail -25 ;;  # block-scaled and grouped MoE parts
    attn) "$PY" bench/bench_attn.py --out-dir "$OUT" "$@" 2>&1 | tail -25 ;;  # FP8 attention vs SDPA cuDNN/flash
    w8) "$PY" bench/bench_w8.py --out "$OUT/w8" "$@" 2>&1 | tail -25 ;;  # f16 x fp8 weights vs cuBLAS f16 / torch.compile
    esac
fi
