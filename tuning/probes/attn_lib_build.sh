#!/bin/bash
# A library of the sm90 attention kernels alone (solutions/sm90/attention/*.yaml as shipped), built here, for device
# calls that run the attention tests and bench_attn without the full library's build (about 5 minutes there):
#   bash tuning/probes/attn_lib_build.sh    # -> build-probe/attnlib/{lib/libkiln.so,generated} (carry both)
#   on the device: KILN_LIBRARY=$PWD/build-probe/attnlib/lib/libkiln.so KILN_GENERATED_DIR=$PWD/build-probe/attnlib/generated ...
set -eu
w=build-probe/attnlib
rm -rf $w; mkdir -p $w
PYTHONPATH=generator python3 -c "
from pathlib import Path
from kilngen import attention_yaml, render
w = Path('$w')
files = [attention_yaml.load_file(f, Path('.')) for f in sorted(Path('solutions/sm90/attention').glob('*.yaml'))]
render.write_tree(w / 'generated', render.render_tree([], Path('templates'), attention=files))"
cmake -S . -B $w/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_ARCHS=sm90 -DKILN_GENERATED_DIR=$PWD/$w/generated \
  -DKILN_BUILD_TESTS=OFF -DPython3_EXECUTABLE=$(command -v python3) > $w.log 2>&1
cmake --build $w/build -j "$(nproc)" >> $w.log 2>&1
grep -h "spill\|serialized" $w.log | head -5 || true
mkdir -p $w/lib && cp -L $w/build/libkiln.so $w/lib/libkiln.so
ls -la $w/lib/libkiln.so; ls $w/generated/sm90 | wc -l
