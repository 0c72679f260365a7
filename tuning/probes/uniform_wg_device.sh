#!/bin/bash
# Device, one call: the warpgroup index taken through a warp broadcast (kiln_gemm_wgmma.h, run:
# `const int wg = __shfl_sync(0xffffffffu, thread_x() / 128, 0);`) timed and checked. Run on an H100 on 2026-12-07
# (tuning/results/probe_uniform_wg_h100.txt): the block tile 3-13 % slower, the fp8 twin -7 to +3 %; not applied.
#   1. block_scale_cost_run.sh: main's block-scaled 128x128 tile and its promoted fp8 twin (block, fp8) against the
#      same kernels built from the broadcast tree (block_u, fp8_u), cold L2, every run checked, ROUNDS rounds;
#   2. the GPU suite on that tree's full library (tuning/probes/full_lib_build.sh there, carried as xz: KILN_ULIB);
#   3. compute-sanitizer memcheck of the block tile on it (kiln_bench, three odd sizes).
# Carry build-probe/bgap_pack (with block_u / fp8_u .so.xz and .co) and the library.
#   KILN_COMMIT=<sha> OUT=... bash tuning/probes/uniform_wg_device.sh
set -u
pack=${PACK:-build-probe/bgap_pack}
for y in block block_u fp8 fp8_u; do
  [ -f $pack/$y.co ] && echo "sass $y: $(cuobjdump -sass $pack/$y.co | grep -cE '^\s+/\*[0-9a-f]+\*/') instructions," \
      "R2UR $(cuobjdump -sass $pack/$y.co | grep -c R2UR), LDL/STL $(cuobjdump -sass $pack/$y.co | grep -cE 'LDL|STL')"
done
VARIANTS="block_u fp8_u" ROUNDS=${ROUNDS:-2} OUT=$OUT timeout 150 bash tuning/probes/block_scale_cost_run.sh \
    > $OUT/ucost.txt 2>&1
(cd $OUT && tar czf ucost.tgz scost && rm -rf scost)
KILN_PREBUILT=${KILN_ULIB:-build-probe/full_u/libkiln.so.xz} KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 \
    KILN_SKIP_BENCH=1 OUT=$OUT timeout 170 bash tests/gpu/device_run.sh > $OUT/suite.txt 2>&1
ln -sf libkiln.so build/libkiln.so.0
. tuning/probes/block_pair_kernel.sh; pair_kernel block
LD_LIBRARY_PATH=build timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 $pack/kiln_bench --a e4m3 \
    --b e4m3 --d bf16 --layout TN $F --sizes 1024x640x1408,260x384x2048,516x1000x1024 --solutions $K \
    --iters 1 --warmup 0 > $OUT/tile_memcheck.log 2>&1
echo "tile memcheck rc=$?: $(grep -E 'SUMMARY' $OUT/tile_memcheck.log | tail -1)"
tail -3 $OUT/suite.txt
sed -n '/^size/,$p' $OUT/ucost.txt
