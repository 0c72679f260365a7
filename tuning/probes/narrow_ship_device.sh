#!/bin/bash
# Device, one call (~5 minutes): the library with the 64x32 small-M tiles in the fp8 and block-scaled logics
# (build-probe/full_narrow/libkiln.so.xz: tuning/probes/full_lib_build.sh build-probe/full_narrow on this branch;
# the new kernels' code objects copied to build-probe/new_co for the SASS census): the GPU suite, the SASS census and
# compute-sanitizer memcheck / racecheck of the new kernels (kiln_bench from build-probe/nn_pack, odd sizes), then
# bench_gemm's fp8 case and bench_moe's block part on the twelve small-M shapes.
#   KILN_COMMIT=<sha> OUT=... bash tuning/probes/narrow_ship_device.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
KILN_PREBUILT=build-probe/full_narrow/libkiln.so.xz KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_BENCH=1 KILN_SKIP_SASS=1 \
    OUT=$OUT timeout ${SUITE_S:-170} bash tests/gpu/device_run.sh > "$OUT/suite.txt" 2>&1
echo "suite rc=$?: $(tail -1 "$OUT/suite.txt")"
for f in build-probe/new_co/*.co; do
  cuobjdump -sass "$f" 2>/dev/null | awk -v n="$(basename "$f" .co)" '/QGMMA/ {q++} /LDL|STL/ {l++}
      END {printf "%s QGMMA=%d LDL/STL=%d\n", n, q, l}'
done > "$OUT/sass_new.txt"
echo "sass: $(wc -l < "$OUT/sass_new.txt") new kernels, $(grep -c 'QGMMA=0 ' "$OUT/sass_new.txt") without QGMMA, $(grep -vc 'LDL/STL=0$' "$OUT/sass_new.txt") with local memory"
ln -sf libkiln.so build/libkiln.so.0
P=_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1; W=_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0
for t in memcheck racecheck; do
  i=0
  for k in "F8F8B_MT64x32x128_WG1x1_MI64x32x32_PGR12${P}_GSU1${W}_PK1_PR1_MC0" \
           "F8F8B_MT64x32x128_WG1x1_MI64x32x32_PGR8${P}_GSU2${W}_PK0_PR1_MC3" \
           "F8F8BQ_MT64x32x128_WG1x1_MI64x32x32_PGR8${P}_GSU2${W}_PK0_PR0_MC3"; do
    i=$((i + 1)); F=; S=100x1000x1400,7x70x300; case $k in F8F8BQ*) F=--block-scales S=100x1000x1408,7x70x384;; esac
    LD_LIBRARY_PATH=build timeout ${SAN_S:-30} compute-sanitizer --tool $t --error-exitcode 9 build-probe/nn_pack/kiln_bench \
        --a e4m3 --b e4m3 --d bf16 --layout TN $F --sizes $S --solutions Cijk_Alik_Bljk_${k}_WGMMA_SM90 --iters 1 \
        --warmup 0 > "$OUT/${t}_$i.log" 2>&1
    echo "$t $k rc=$?: $(grep -E 'SUMMARY' "$OUT/${t}_$i.log" | tail -1)"
  done
done > "$OUT/sanitizers.txt"
cat "$OUT/sanitizers.txt"
export KILN_LIBRARY=$PWD/build/libkiln.so
SM=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
timeout 90 python3 bench/bench_gemm.py --cases fp8 --shapes $SM --budget-s 0.8 > "$OUT/bench_gemm.log" 2>&1
echo "bench_gemm rc=$?"
[ -n "${SKIP_MOE:-}" ] || timeout 90 python3 bench/bench_moe.py --parts block --shapes $SM --no-kernel-time --budget-s 0.8 > "$OUT/bench_moe.log" 2>&1
echo "bench_moe rc=$?"
git status --short bench/results | awk '{print $2}' > /tmp/new.txt
tar czf "$OUT/results.tgz" $(cat /tmp/new.txt) 2>/dev/null
tail -5 "$OUT/bench_gemm.log"; tail -5 "$OUT/bench_moe.log"
# at most 8 files come back: the rest in logs.tgz
(cd "$OUT" && tar czf /tmp/logs.tgz --exclude=results.tgz . && mv /tmp/logs.tgz . &&
 find . -maxdepth 1 -type f ! -name results.tgz ! -name logs.tgz ! -name suite.txt ! -name sanitizers.txt \
     ! -name sass_new.txt ! -name gpu_run.jsonl -delete; find . -mindepth 1 -type d -exec rm -rf {} +)
cat "$OUT/sanitizers.txt" "$OUT/sass_new.txt"
