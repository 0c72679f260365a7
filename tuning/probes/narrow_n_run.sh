#!/bin/bash
# Device (~2 minutes): the 64x32 small-M tiles beside the shipped 64x64 forms (tuning/probes/narrow_n_{block,fp8}.yaml,
# each built with `generator/kiln-gen tune <yaml> --stage build --work build-probe/nn_<kind>` and packed as
# $PACK/<kind>.so.xz; kiln_bench from there). kiln_bench cold L2, every candidate checked, ROUNDS rounds; per size
# the mean ms of each candidate and the best 64x64 form's time over the best 64x32 one (> 1: the narrow tile faster).
#   OUT=... bash tuning/probes/narrow_n_run.sh
set -u
out=${OUT:-/tmp}/nn; mkdir -p $out
pack=${PACK:-build-probe/nn_pack}
S=${SIZES:-64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048}
for k in block fp8; do
  mkdir -p /tmp/nn_$k && python3 tuning/probes/unxz.py $pack/$k.so.xz /tmp/nn_$k/libkiln.so.0 || exit 1
done
for r in $(seq ${ROUNDS:-2}); do
  for k in block fp8; do
    F=; [ $k = block ] && F=--block-scales
    LD_LIBRARY_PATH=/tmp/nn_$k timeout 200 $pack/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN $F --sizes $S \
        --solutions all --iters 30 --warmup 5 --json $out/${k}_r$r.json > $out/${k}_r$r.txt 2>&1
    echo "$k r$r rc=$?"
  done
done
python3 - $out <<'PY'
import glob, json, math, os, re, statistics as st, sys
t = {}
for f in sorted(glob.glob(sys.argv[1] + '/*.json')):
    kind = os.path.basename(f).rsplit('_r', 1)[0]
    for r in json.load(open(f))['rows']:
        g = re.search(r'MT64x(\d+)x128.*PGR(\d+).*GSU(\d+)', r['name']).groups()
        size = '%sx%sx%s' % (r['m'], r['n'], r['k'])
        t.setdefault((kind, size), {}).setdefault('n%s p%s g%s' % g, []).append((r['ms'], r['pass']))
for kind in ('block', 'fp8'):
    ratios = []
    print(kind)
    for (k, size), c in t.items():
        if k != kind:
            continue
        m = {n: st.mean(ms for ms, _ in v) for n, v in c.items()}
        bad = [n for n, v in c.items() if not all(ok for _, ok in v)]
        wide = min(v for n, v in m.items() if n.startswith('n64'))
        narrow = min(v for n, v in m.items() if n.startswith('n32'))
        ratios.append(wide / narrow)
        best = min(m, key=m.get)
        print(' ', size, ' '.join('%s %.1f' % (n, m[n] * 1e3) for n in sorted(m)), '| 64x64 best / 64x32 best %.3f'
              % (wide / narrow), '| best', best, '| FAILED ' + ','.join(bad) if bad else '')
    print('  geomean 64x64 best / 64x32 best: %.4f' % math.exp(sum(map(math.log, ratios)) / len(ratios)))
PY
