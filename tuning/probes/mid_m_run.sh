#!/bin/bash
# Device: the mid-M probe. bench/heldout.py on tuning/probes/mid_m_shapes.txt twice: the shipped library's pick
# (MAIN_LIB, an xz-packed full library from tuning/probes/full_lib_build.sh) and every candidate of the probe library
# (PROBE_LIB, an xz-packed `kiln-gen tune tuning/probes/sm90_mid_m.yaml --stage build` library), each beside
# torch._scaled_mm in the same process; then mid_m_sum.py's table.
#   MAIN_LIB=build-probe/fullc/libkiln.so.xz PROBE_LIB=build-probe/midm/libkiln.so.xz OUT=... bash tuning/probes/mid_m_run.sh
set -u
OUT=${OUT:-/tmp/midm}; mkdir -p "$OUT"
unpack() { python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$1" "$2"; }
unpack "$MAIN_LIB" /tmp/kiln_main.so && unpack "$PROBE_LIB" /tmp/kiln_probe.so || exit 1
export PYTHONPATH=$PWD/runtime/python
S=${SHAPES:-tuning/probes/mid_m_shapes.txt}
KILN_LIBRARY=/tmp/kiln_main.so python3 bench/heldout.py --shapes-file "$S" --max-candidates 1 --quiet \
    --out "$OUT/midm_main" > "$OUT/main.log" 2>&1
KILN_LIBRARY=/tmp/kiln_probe.so python3 bench/heldout.py --shapes-file "$S" --quiet --budget-s 0.3 \
    --out "$OUT/midm_probe" > "$OUT/probe.log" 2>&1
python3 tuning/probes/mid_m_sum.py "$OUT/midm_main.json" "$OUT/midm_probe.json" | tee "$OUT/summary.txt"
