#!/usr/bin/env bash
# kiln set-up and main job, on a fresh Debian 12 machine (as root):
#   installs the build dependencies from Debian, regenerates generated/ from solutions/ + templates/, builds the
#   per-arch libraries (every arch whose compiler is present: nvcc for sm_*, clang-19 or ROCm hipcc for gfx*, see
#   README) and runs the example.
# Options through the environment: KILN_ARCHS="sm90;sm89" to choose archs, KILN_BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")"
source .ci/deps.sh
kiln_install_deps

BUILD=${KILN_BUILD_DIR:-build}
"$KILN_PY" generator/kiln-gen generate --quiet
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$KILN_PY" \
      ${KILN_ARCHS:+-DKILN_ARCHS="$KILN_ARCHS"}
cmake --build "$BUILD"
"$BUILD"/kiln_example
