#!/bin/bash
# Device, one call (~6 minutes): the pre-wait descriptor probes, then, where they gain, the change's full library
# through the GPU suite and the sanitizers.
#   1. block_scale_cost_run.sh with VARIANTS (default block_pd fp8_pd block_far block_pdfar) against main's block
#      tile (block) and its promoted fp8 twin (fp8), ROUNDS (2) rounds, carried in build-probe/bgap_pack;
#   2. only where block / block_pd and fp8 / fp8_pd both have a geomean >= KILN_PD_MIN (default 1.01): the GPU suite
#      on the library KILN_PD_LIB (default build-probe/full_pd/libkiln.so.xz: tuning/probes/full_lib_build.sh on a tree
#      with the change, the local branch `pd`), then memcheck and racecheck of both tiles on it (kiln_bench, odd sizes).
# Run it from that tree (the suite's record names KILN_COMMIT). KILN_PD_MIN=9: the probes alone.
#   KILN_COMMIT=<sha> OUT=... bash tuning/probes/predesc_device.sh
set -u
pack=${PACK:-build-probe/bgap_pack}
VARIANTS=${VARIANTS-block_pd fp8_pd block_far block_pdfar} ROUNDS=${ROUNDS:-2} OUT=$OUT timeout 330 \
    bash tuning/probes/block_scale_cost_run.sh > $OUT/pd_table.txt 2>&1
(cd $OUT && tar czf pd.tgz scost && rm -rf scost)
if python3 - $OUT/pd_table.txt ${KILN_PD_MIN:-1.01} <<'PY'; then
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
head = next((r for r in rows if r[:1] == ['size']), [])
def geo(a, b):
    if a not in head or b not in head:
        return 0.0
    i, j = head.index(a), head.index(b)
    v = [float(r[i].rstrip('*')) / float(r[j].rstrip('*')) for r in rows if len(r) > max(i, j) and r[0][:1].isdigit()]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else 0.0
g = {k: geo(*k.split('/')) for k in ('block/block_pd', 'fp8/fp8_pd', 'block/block_far', 'block/block_pdfar')}
print(' '.join('%s %.4f' % kv for kv in g.items()))
sys.exit(0 if min(g['block/block_pd'], g['fp8/fp8_pd']) >= float(sys.argv[2]) else 1)
PY
KILN_PREBUILT=${KILN_PD_LIB:-build-probe/full_pd/libkiln.so.xz} KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 \
    KILN_SKIP_BENCH=1 OUT=$OUT timeout 170 bash tests/gpu/device_run.sh > $OUT/suite.txt 2>&1
ln -sf libkiln.so build/libkiln.so.0
. tuning/probes/block_pair_kernel.sh
for t in memcheck racecheck; do
  for y in block fp8; do
    pair_kernel $y
    LD_LIBRARY_PATH=build timeout 40 compute-sanitizer --tool $t --error-exitcode 9 $pack/kiln_bench --a e4m3 \
        --b e4m3 --d bf16 --layout TN $F --sizes 1024x640x1408,260x384x2048,516x1000x1024 --solutions $K --iters 1 \
        --warmup 0 > $OUT/${y}_$t.log 2>&1
    echo "$y $t rc=$?: $(grep -E 'SUMMARY' $OUT/${y}_$t.log | tail -1)"
  done
done
tail -3 $OUT/suite.txt
fi
sed -n '/^size/,$p' $OUT/pd_table.txt
