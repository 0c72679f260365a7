#!/bin/bash
# The fast-accumulation logic before and after the 128x192 tiles (6266099), same process order, one device call:
#   bash tuning/probes/fast_ab.sh build        # here: two libraries of that logic alone at e4m3 x e4m3 -> bf16
#                                              # (build-probe/fastold from 6266099^, build-probe/fastlogic from HEAD)
#   OUT=... bash tuning/probes/fast_ab.sh run  # on the device (carry both): bench_gemm --cases fp8_fast on each
set -eu
if [ "${1:-}" = build ]; then
  for spec in fastold:6266099^ fastlogic:HEAD; do
    w=build-probe/${spec%%:*}; rev=${spec#*:}
    rm -rf $w; mkdir -p $w/solutions/sm90
    git show $rev:solutions/sm90/wgmma_fp8.yaml | python3 -c '
import re, sys
s = sys.stdin.read()
s = re.sub(r"  a: \[e4m3, e5m2\]\n  b: \[e4m3, e5m2\]\n  d: \[bf16, f16, f32\]", "  a: e4m3\n  b: e4m3\n  d: bf16", s, 1)
sys.stdout.write(re.sub(r"\nci: \[.*\]\n", "\n", s))' > $w/solutions/sm90/wgmma_fp8.yaml
    PYTHONPATH=generator python3 -c "
from pathlib import Path
from kilngen import schema, render
w = Path('$w')
render.write_tree(w / 'generated', render.render_tree([schema.load_file(w / 'solutions/sm90/wgmma_fp8.yaml', w)],
                                                      Path('templates')))"
    cmake -S . -B $w/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_ARCHS=sm90 -DKILN_GENERATED_DIR=$PWD/$w/generated \
      -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE=$(command -v python3) > $w.log 2>&1
    cmake --build $w/build -j "$(nproc)" >> $w.log 2>&1
  done
elif [ "${1:-}" = run ]; then
  OUT=${OUT:-/tmp/fast_ab}; mkdir -p $OUT
  for w in fastold fastlogic; do
    KILN_LIBRARY=$PWD/build-probe/$w/build/libkiln.so timeout 200 python3 bench/bench_gemm.py --cases fp8_fast \
      --iters 20 --budget-s 0.5 --out $OUT/$w > $OUT/$w.txt 2>&1 || echo "$w: rc $?"
    echo "== $w"; grep "fast-accum" $OUT/$w.md | grep ratio
  done
else
  echo "usage: fast_ab.sh build | run" >&2; exit 2
fi
