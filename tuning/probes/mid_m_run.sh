#!/bin/bash
# Device: the mid-M probe. bench/heldout.py on tuning/probes/mid_m_shapes.txt twice: the shipped library's pick
# (MAIN_LIB, an xz-packed full library from tuning/probes/full_lib_build.sh) and every candidate of the probe library
# (PROBE_LIB, an xz-packed `kiln-gen tune tuning/probes/sm90_mid_m.yaml --stage build` library), each beside
# torch._scaled_mm in the same process; then mid_m_sum.py's table, and the SM clock and power while the probe ran.
#   MAIN_LIB=build-probe/fullc/libkiln.so.xz PROBE_LIB=build-probe/midm/libkiln.so.xz OUT=... bash tuning/probes/mid_m_run.sh
set -u
OUT=${OUT:-/tmp/midm}; mkdir -p "$OUT"
python3 tuning/probes/unxz.py "$MAIN_LIB" /tmp/kiln_main.so || exit 1
python3 tuning/probes/unxz.py "$PROBE_LIB" /tmp/kiln_probe.so || exit 1
export PYTHONPATH=$PWD/runtime/python
S=${SHAPES:-tuning/probes/mid_m_shapes.txt}
KILN_LIBRARY=/tmp/kiln_main.so python3 bench/heldout.py --shapes-file "$S" --max-candidates 1 --quiet \
    --out "$OUT/midm_main" > "$OUT/main.log" 2>&1
# the SM clock and the board power every 100 ms during the probe pass (power bound or not: bench/NOTES.md)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader,nounits -lms 100 > "$OUT/clocks.csv" 2>/dev/null &
SAMPLER=$!
KILN_LIBRARY=/tmp/kiln_probe.so python3 bench/heldout.py --shapes-file "$S" --quiet --budget-s 0.3 \
    --out "$OUT/midm_probe" > "$OUT/probe.log" 2>&1
kill $SAMPLER 2>/dev/null
python3 -c "
import statistics, sys
rows = [l.split(', ') for l in open(sys.argv[1]) if l.count(',') == 2]
busy = [(float(r[1]), float(r[2])) for r in rows if r[2].strip() not in ('', '[N/A]') and float(r[1]) > 1000]
if busy:
    print(f'probe pass, {len(busy)} samples of 100 ms with the SM clock above 1 GHz: clock median {statistics.median(c for c, _ in busy):.0f} MHz, '
          f'min {min(c for c, _ in busy):.0f}; power median {statistics.median(p for _, p in busy):.0f} W, max {max(p for _, p in busy):.0f}')
" "$OUT/clocks.csv"
python3 tuning/probes/mid_m_sum.py "$OUT/midm_main.json" "$OUT/midm_probe.json" | tee "$OUT/summary.txt"
