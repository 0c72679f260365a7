#!/bin/bash
# Device, one call: the scale-cost probes (block_scale_cost_run.sh), then the order patch's full library (carried
# xz, KILN_ORD_LIB) through the GPU suite, bench_moe and memcheck / racecheck of the 128x128 block tile, where
# the probes say the order patch gains.
# Run it from a commit with tuning/patches/block_scale_order.patch applied (the library's sources), so that the
# suite's records and bench_moe's results name that commit; the library: tuning/probes/full_lib_build.sh there.
#   OUT=... bash tuning/probes/block_ord_device.sh   (carry build-probe/bgap_pack and the library)
# With little device time: KILN_ORD_MIN=9 (the probes alone), fewer VARIANTS and SIZES (each kiln_bench run ~2.7 s a
# size; the default seven probes + block + fp8, 2 rounds, 5 sizes: ~4 minutes).
set -u
lib=${KILN_ORD_LIB:-build-probe/full_ord/libkiln.so.xz}
sha=${KILN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
VARIANTS=${VARIANTS-block_np block_npr block_rel block_ord block_bg block_nsb block_nsa} OUT=$OUT \
    timeout 300 bash tuning/probes/block_scale_cost_run.sh > $OUT/scost_table.txt 2>&1
(cd $OUT && tar czf scost.tgz scost && rm -rf scost)
# the rest only where block_ord gains (geomean of block / block_ord over the sizes >= KILN_ORD_MIN, default 1.01)
if python3 - $OUT/scost_table.txt ${KILN_ORD_MIN:-1.01} <<'PY'; then
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
head = next((r for r in rows if r[:1] == ['size']), [])
col = head.index('block/block_ord') if 'block/block_ord' in head else 0
v = [float(r[col]) for r in rows if col and len(r) > col and r[0][:1].isdigit()]
g = math.exp(sum(map(math.log, v)) / len(v)) if v else 0.0
print('block/block_ord geomean %.4f' % g)
sys.exit(0 if g >= float(sys.argv[2]) else 1)
PY
KILN_PREBUILT=$lib KILN_COMMIT=$sha KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 KILN_BENCH=moe OUT=$OUT \
    timeout 150 bash tests/gpu/device_run.sh > $OUT/suite.txt 2>&1
export KILN_LIBRARY=$PWD/build/libkiln.so; ln -sf libkiln.so build/libkiln.so.0
K=Cijk_Alik_Bljk_F8F8BQ_MT128x128x128_WG2x1_MI64x128x32_PGR4_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK1_PR0_MC0_WGMMA_SM90
for t in memcheck racecheck; do
    LD_LIBRARY_PATH=build timeout 30 compute-sanitizer --tool $t --error-exitcode 9 build-probe/bgap_pack/kiln_bench \
        --a e4m3 --b e4m3 --d bf16 --layout TN --block-scales --sizes 1024x640x1408,260x384x2048,516x1000x1024 \
        --solutions $K --iters 1 --warmup 0 > $OUT/tile_$t.log 2>&1; echo "tile $t rc=$?: $(grep -E 'SUMMARY' $OUT/tile_$t.log | tail -1)"
done
fi
cat $OUT/suite.txt 2>/dev/null | tail -12
sed -n '/^size/,$p' $OUT/scost_table.txt
