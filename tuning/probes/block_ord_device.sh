#!/bin/bash
# Device, one call: the scale-cost probes (block_scale_cost_run.sh), then the order patch's full library (carried
# xz, KILN_ORD_LIB) through the GPU suite, bench_moe and memcheck / racecheck of the block-scaled tiles.
#   OUT=... bash tuning/probes/block_ord_device.sh   (carry build-probe/bgap_pack and the library)
set -u
lib=${KILN_ORD_LIB:-build-probe/full_ord/libkiln.so.xz}
sha=${KILN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
VARIANTS=${VARIANTS-block_ns block_np block_npr block_rel block_ord block_nsb block_nsa} OUT=$OUT \
    timeout 300 bash tuning/probes/block_scale_cost_run.sh > $OUT/scost_table.txt 2>&1
(cd $OUT && tar czf scost.tgz scost && rm -rf scost)
KILN_PREBUILT=$lib KILN_COMMIT=$sha KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 KILN_BENCH=moe OUT=$OUT \
    timeout 150 bash tests/gpu/device_run.sh > $OUT/suite.txt 2>&1
export KILN_LIBRARY=$PWD/build/libkiln.so; ln -sf libkiln.so build/libkiln.so.0
K=Cijk_Alik_Bljk_F8F8BQ_MT128x128x128_WG2x1_MI64x128x32_PGR4_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK1_PR0_MC0_WGMMA_SM90
for t in memcheck racecheck; do
    LD_LIBRARY_PATH=build timeout 30 compute-sanitizer --tool $t --error-exitcode 9 build-probe/bgap_pack/kiln_bench \
        --a e4m3 --b e4m3 --d bf16 --layout TN --block-scales --sizes 1024x640x1408,260x384x2048,516x1000x1024 \
        --solutions $K --iters 1 --warmup 0 > $OUT/tile_$t.log 2>&1; echo "tile $t rc=$?: $(grep -E 'SUMMARY' $OUT/tile_$t.log | tail -1)"
done
KILN_GPU_LOG= timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
    tests/gpu/test_block_scaled.py -x > $OUT/memcheck_block.log 2>&1; echo "memcheck block rc=$?: $(tail -1 $OUT/memcheck_block.log)"
cat $OUT/suite.txt | tail -12
sed -n '/^size/,$p' $OUT/scost_table.txt
