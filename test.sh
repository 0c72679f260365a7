#!/usr/bin/env bash
# kiln tests (no GPU needed; the GPU suite runs too when torch and a GPU are present):
#   generated/ is current, generator tests, a CI build (the ci kernel subset of NVIDIA, every AMD kernel) with resource
#   and ISA checks, the C tests (plain, then under ASan + UBSan), a bounded run of the C API fuzzer, the AMD kernels
#   emulated on the CPU.
set -euo pipefail
cd "$(dirname "$0")"
source .ci/deps.sh
kiln_install_deps

BUILD=${KILN_TEST_BUILD_DIR:-build-ci}
"$KILN_PY" generator/kiln-gen check
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_CI_SUBSET=ON -DPython3_EXECUTABLE="$KILN_PY" \
      ${KILN_ARCHS:+-DKILN_ARCHS="$KILN_ARCHS"}
cmake --build "$BUILD"
ctest --test-dir "$BUILD" --output-on-failure
# The C tests and the API fuzzer under ASan + UBSan (tests/sanitize: the runtime with fake tables, no kernels); any
# sanitizer report fails. Then a bounded fuzzing run from the committed seeds with a fixed seed (tests/fuzz/README.md).
SAN=${KILN_SAN_BUILD_DIR:-$BUILD-san}
CC=clang-19 cmake -S tests/sanitize -B "$SAN" -G Ninja >/dev/null
cmake --build "$SAN"
ctest --test-dir "$SAN" --output-on-failure
rm -rf "$SAN/fuzz-corpus" && mkdir -p "$SAN/fuzz-corpus"
if ! KILN_FUZZ_STATS=1 "$SAN/fuzz/fuzz_api" -seed=1 -max_total_time="${KILN_FUZZ_SECONDS:-60}" -max_len=256 \
        -print_final_stats=1 -artifact_prefix="$SAN/" "$SAN/fuzz-corpus" tests/fuzz/corpus >"$SAN/fuzz.log" 2>&1; then
    cat "$SAN/fuzz.log"
    exit 1
fi
grep -E '^(Done|fuzz_api:|stat::number_of_executed_units)' "$SAN/fuzz.log"
# The installed package works for a project outside the tree: find_package(kiln) -> kiln::kiln.
rm -rf "$BUILD/install" "$BUILD/consumer"
cmake --install "$BUILD" --prefix "$BUILD/install" >/dev/null
cmake -S tests/install -B "$BUILD/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$(cd "$BUILD" && pwd)/install" >/dev/null
cmake --build "$BUILD/consumer" >/dev/null
"$BUILD/consumer/consumer"
KILN_BUILD_DIR="$BUILD" "$KILN_PY" -m pytest -q tests/py
# The GPU suite skips itself without torch + a GPU; pytest's exit code 5 (nothing collected) is not a failure.
KILN_LIBRARY="$BUILD/libkiln.so" "$KILN_PY" -m pytest -q tests/gpu || { rc=$?; [ "$rc" -eq 5 ] || exit "$rc"; }
