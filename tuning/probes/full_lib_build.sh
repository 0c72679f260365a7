#!/bin/bash
# The full library built here (no GPU needed; ~27 minutes on two cores) and packed for a device call: xz brings its
# ~105 MB (the embedded code objects) to ~5 MB, within the 64 MiB a call carries.
#   bash tuning/probes/full_lib_build.sh [DIR]      # default build-probe/full -> DIR/build, DIR/libkiln.so.xz
#   on the device, carrying DIR/libkiln.so.xz:
#   KILN_PREBUILT=DIR/libkiln.so.xz KILN_COMMIT=<sha> KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_BENCH=1 \
#       bash tests/gpu/device_run.sh
# This machine has no cuobjdump: device_run.sh's SASS census needs the code objects on the device (build/code), so
# with KILN_PREBUILT it finds none; run it in a call that builds.
set -eu
w=${1:-build-probe/full}
mkdir -p "$w"
cmake -S . -B "$w/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_ARCHS=sm90 -DKILN_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE="$(command -v python3)" > "$w/build.log" 2>&1
cmake --build "$w/build" -j "$(nproc)" >> "$w/build.log" 2>&1
grep -h "ptxas serialized" "$w/build.log" | head -5 || true
xz -T"$(nproc)" -6 -c "$(readlink -f "$w/build/libkiln.so")" > "$w/libkiln.so.xz"
ls -la "$w/libkiln.so.xz"; ls "$w/build/code/sm90" | wc -l
