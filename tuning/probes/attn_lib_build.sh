#!/bin/bash
# A library of attention kernels alone, built here, for device calls that run the attention tests and bench_attn
# without the full library's build (about 5 minutes there):
#   bash tuning/probes/attn_lib_build.sh [DIR [YAML ...]]   # default: build-probe/attnlib and the shipped
#       solutions/sm90/attention/*.yaml -> DIR/{lib/libkiln.so,generated} (what the device call carries)
#   on the device: KILN_LIBRARY=$PWD/DIR/lib/libkiln.so KILN_GENERATED_DIR=$PWD/DIR/generated ...
# (attn_split_ab.sh builds its two libraries with it from YAML files inside DIR, which stay.)
set -eu
w=${1:-build-probe/attnlib}
shift || true
[ $# -gt 0 ] || set -- solutions/sm90/attention/*.yaml
rm -rf $w/generated $w/build $w/lib; mkdir -p $w
PYTHONPATH=generator python3 - "$w" "$@" <<'PY'
import sys
from pathlib import Path
from kilngen import attention_yaml, render
w = Path(sys.argv[1])
files = [attention_yaml.load_file(Path(f), Path('.')) for f in sys.argv[2:]]
render.write_tree(w / 'generated', render.render_tree([], Path('templates'), attention=files))
PY
cmake -S . -B $w/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_ARCHS=sm90 -DKILN_GENERATED_DIR=$PWD/$w/generated \
  -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE=$(command -v python3) > $w.log 2>&1
cmake --build $w/build -j "$(nproc)" >> $w.log 2>&1
grep -h "spill\|serialized" $w.log | head -5 || true
mkdir -p $w/lib && cp -L $w/build/libkiln.so $w/lib/libkiln.so
ls -la $w/lib/libkiln.so; ls $w/generated/sm90 | wc -l
