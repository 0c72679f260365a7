#!/bin/bash
# Device, one call (~5 minutes): the 64x32 small-M tiles against the shipped forms (narrow_n_run.sh, carried in
# build-probe/nn_pack), then bench_moe's block part on main's full library (build-probe/full/libkiln.so.xz) with the
# kernel-time column (bench_gemm.time_kernels) beside the event and graph ones; results tarred under $OUT.
#   OUT=... bash tuning/probes/narrow_ktime_device.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
OUT=$OUT ROUNDS=${ROUNDS:-2} timeout 240 bash tuning/probes/narrow_n_run.sh > "$OUT/narrow_n.txt" 2>&1
echo "narrow_n rc=$?"
(cd "$OUT" && tar czf nn.tgz nn && rm -rf nn)
python3 tuning/probes/unxz.py build-probe/full/libkiln.so.xz /tmp/libkiln.so || exit 1
KILN_LIBRARY=/tmp/libkiln.so timeout 280 python3 bench/bench_moe.py --parts block --budget-s 0.8 \
    > "$OUT/bench_moe.log" 2>&1
echo "bench_moe rc=$?"
git status --short bench/results | awk '{print $2}' > /tmp/new.txt
tar czf "$OUT/results.tgz" $(cat /tmp/new.txt) 2>/dev/null
sed -n '/^block$/,$p' "$OUT/narrow_n.txt"; grep -i "error\|ktime\|Traceback" "$OUT/bench_moe.log" | head -5
tail -6 "$OUT/bench_moe.log"
