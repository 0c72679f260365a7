#!/bin/bash
# Device, one call: the consumers' turns A/B (turns_run.sh with its gate), then, only where turns win, the full
# library with turns (`NVCC_APPEND_FLAGS=-DKILN_PROBE_TURNS=1 bash tuning/probes/full_lib_build.sh` on the CPU
# machine, ~22 minutes, carried as build-probe/full/libkiln.so.xz; or the tree with the macro's default turned on):
# the GPU suite (device_run.sh with KILN_PREBUILT), bench_gemm (fp8 and bf16), racecheck and memcheck of kiln_bench
# on five kernels that take turns (named barriers or, the block-scaled 128x128, mbarriers). Everything goes back as
# $OUT/turns_ship.tar (a call returns 8 files).
#   KILN_COMMIT=<sha> OUT=... bash tuning/probes/turns_ship_run.sh
set -u
final=${OUT:-/tmp}; o=/tmp/turns_ship; rm -rf $o; mkdir -p $o
pack=${PACK:-build-probe/turns_pack}
snap() { tar -C $o -cf $final/turns_ship.tar .; }  # after each step: a call cut short still brings back the steps done
finish() { snap; exit 0; }
GATE=--gate OUT=$o bash tuning/probes/turns_run.sh > $o/turns_table.txt 2>&1
gate=$?  # turns_run.sh ends with turns_sum.py --gate: 0 only where the turns win
tail -45 $o/turns_table.txt
snap
[ $gate = 0 ] || { echo "turns not faster (or the A/B did not run): stop"; finish; }
[ -f build-probe/full/libkiln.so.xz ] || finish
KILN_PREBUILT=build-probe/full/libkiln.so.xz KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 \
    KILN_SKIP_BENCH=1 OUT=$o/suite bash tests/gpu/device_run.sh 2>&1 | tail -5
snap
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' |
    sed 's/[^a-z0-9]\{1,\}/-/g; s/-$//')
KILN_LIBRARY=$PWD/build/libkiln.so timeout 240 python3 bench/bench_gemm.py --cases fp8,bf16 --budget-s 1.0 \
    --out $o/bench/${dev}_${KILN_COMMIT:0:7} 2>&1 | tail -12
snap
ln -sf libkiln.so build/libkiln.so.0
pick='F8F8B_MT128x256x128_WG2x1_.*PGR2_.*GSU1_.*PR1_MC0|F8F8B_MT128x128x128_WG2x1_.*PGR5_.*GSU1_.*PR1_MC0'
pick="$pick|F8F8B_MT64x128x128_WG1x2_.*PGR4_.*GSU1_.*PR1_MC0|F8F8BQ_MT64x256x128_WG1x2_.*PGR3_.*GSU1_.*MC0"
pick="$pick|F8F8BQ_MT128x128x128_WG2x1_.*PGR4_.*GSU1_.*MC0"
names=$(ls generated/sm90 | sed 's/\.hip$//' | grep -E "^Cijk_Alik_Bljk_($pick)_")
for tool in racecheck memcheck; do
  for n in $names; do
    if [[ $n == *F8F8BQ* ]]; then f=--block-scales; else f=; fi
    LD_LIBRARY_PATH=$PWD/build timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $pack/kiln_bench \
        --a e4m3 --b e4m3 --d bf16 --layout TN --sizes 320x640x1152,200x384x640 --solutions $n --iters 1 \
        --warmup 0 --quiet $f > $o/${tool}_${n:15:40}.log 2>&1
    echo "$tool rc=$? ${n:15:60}: $(grep -E 'SUMMARY' $o/${tool}_${n:15:40}.log | tail -1)"
  done
done
snap
finish
