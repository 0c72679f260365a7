#!/bin/bash
# Device, one call (~6 minutes): the float-fold runs' scheduling hints (tuning/probes/sass_hints.py), patched here
# into the packed probe libraries with tuning/probes/sass_patch.py:
#   <tile>_sw   --mode switch: the FFMA / FADD of dense runs without reuse flags and yield bit (switch allowed);
#   <tile>_swh  the same on the first half of each run;   <tile>_st  --mode stay: yield bit set on all of them;
# for tile block (main's block-scaled 128x128 wg2x1 pgr 4) and fp8 (its promoted twin), in build-probe/bgap_pack;
# then main's full library (build-probe/full) against its --mode switch copy (build-probe/full_sw) on the bench_gemm
# fp8 shapes, kiln's own pick, alternating rounds. SASS of block / fp8 before and after to $OUT/sass.tgz.
#   OUT=... bash tuning/probes/sass_yield_device.sh
set -u
pack=build-probe/bgap_pack
mkdir -p $OUT/sass
for t in block fp8; do
  cuobjdump -sass $pack/$t.co > $OUT/sass/$t.sass 2>&1
  cuobjdump -sass $pack/${t}_sw.co > $OUT/sass/${t}_sw.sass 2>&1
done
(cd $OUT && tar czf sass.tgz sass && rm -rf sass)
VARIANTS=${VARIANTS-block_sw fp8_sw block_st fp8_st block_swh fp8_swh} ROUNDS=${ROUNDS:-2} OUT=$OUT timeout 330 \
    bash tuning/probes/block_scale_cost_run.sh > $OUT/sw_table.txt 2>&1
(cd $OUT && tar czf sw.tgz scost && rm -rf scost)
for d in full full_sw; do
  mkdir -p /tmp/fl_$d && python3 tuning/probes/unxz.py build-probe/$d/libkiln.so.xz /tmp/fl_$d/libkiln.so.0 || exit 1
done
S=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
S=$S,128x7168x16384,64x4096x7168,2048x7168x2048
mkdir -p $OUT/flib
r=0
for d in full full_sw full_sw full; do
  r=$((r + 1))
  LD_LIBRARY_PATH=/tmp/fl_$d timeout 150 $pack/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN --sizes $S --solutions top1 \
      --iters 30 --warmup 5 --json $OUT/flib/${d}_r$r.json > $OUT/flib/${d}_r$r.txt 2>&1
  echo "$d r$r rc=$?"
done
python3 - $OUT/flib <<'PY'
import glob, json, os, statistics as st, sys
t = {}
for f in sorted(glob.glob(sys.argv[1] + '/*.json')):
    y = os.path.basename(f).rsplit('_r', 1)[0]
    for r in json.load(open(f))['rows']:
        t.setdefault('%sx%sx%s' % (r['m'], r['n'], r['k']), {}).setdefault(y, []).append((r['ms'], r['pass']))
print('size full full_sw full/full_sw pass')
for k, v in t.items():
    a, b = st.mean(x for x, _ in v.get('full', [(0, 0)])), st.mean(x for x, _ in v.get('full_sw', [(0, 0)]))
    ok = all(p for y in v for _, p in v[y])
    print(k, '%.4f %.4f %.3f' % (a, b, a / b if b else 0), ok)
PY
sed -n '/^size/,$p' $OUT/sw_table.txt
