#!/bin/bash
# Device: the block-scaled small-M picks built with the producer issuing G K-tiles back to back (KILN_PROBE_TMA_GROUP,
# tuning/probes/tma_group_block.yaml) against the same kernels without (base). Each build is
# `NVCC_APPEND_FLAGS=-DKILN_PROBE_TMA_GROUP=G generator/kiln-gen tune tuning/probes/tma_group_block.yaml --stage build
# --work build-probe/tg_gG`, packed as $PACK/gG.so.xz (base: no flag); kiln_bench from the base build. kiln_bench
# cold L2, every run checked, ROUNDS rounds in rotated orders; a table of mean ms per kernel and size and base / gG.
# The promoted fp8 twins (tuning/probes/tma_group_fp8.yaml, packed as fbase / fg2 / fg4): BASE=fbase VARIANTS="fg2 fg4"
# F= (no block scales).
#   VARIANTS="g2 g4" ROUNDS=2 OUT=... bash tuning/probes/tma_group_run.sh
set -u
base=${BASE:-base}
F=${F---block-scales}
out=${OUT:-/tmp}/tg_$base; mkdir -p $out
pack=${PACK:-build-probe/tg_pack}
vs="$base ${VARIANTS:-g2 g4}"
for d in $vs; do
  mkdir -p /tmp/tg_$d && python3 tuning/probes/unxz.py $pack/$d.so.xz /tmp/tg_$d/libkiln.so.0 || exit 1
done
S=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048
S=${SIZES:-$S,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048}
. tuning/probes/kb_rounds.sh
run_build() {
  LD_LIBRARY_PATH=/tmp/tg_$1 timeout 200 $pack/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN $F --sizes $S \
      --solutions all --iters 30 --warmup 5 --json "$2"
}
kb_rounds $out "$vs" ${ROUNDS:-2} run_build
python3 - $out $vs <<'PY'
import math, re, statistics as st, sys
sys.path.insert(0, 'tuning/probes')
from kb_rounds import load
d, ys = sys.argv[1], sys.argv[2:]
def key(r):
    k = re.search(r'MT(\d+x\d+)x128.*PGR(\d+).*GSU(\d+)', r['name'])
    return '%sx%sx%s %s/p%s/g%s' % (r['m'], r['n'], r['k'], *k.groups())
t = load(d, key)
b = ys[0]
print('size kernel', *ys, *[b + '/' + y for y in ys[1:]])
ratios = {y: [] for y in ys[1:]}
for k, v in t.items():
    m = {y: st.mean(ms for ms, _ in v[y]) for y in ys if y in v}
    bad = {y for y in m if not all(ok for _, ok in v[y])}
    for y in ys[1:]:
        if y in m and b in m: ratios[y].append(m[b] / m[y])
    print(k, *['%.4f%s' % (m[y], '*' if y in bad else '') if y in m else '-' for y in ys],
          *['%.3f' % (m[b] / m[y]) if y in m and b in m else '-' for y in ys[1:]])
geo = {y: math.exp(sum(map(math.log, r)) / len(r)) for y, r in ratios.items() if r}
print('geomean', b + '/variant:', ' '.join('%s %.4f' % kv for kv in geo.items()))
PY
