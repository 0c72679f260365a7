#!/bin/bash
# Device: the small-M sharing probes (sm90_small_m_share{,_block}.yaml). Builds both probe libraries here (16 cores)
# unless build-probe/share{,_block} were carried,
# times every candidate (`kiln-gen tune --stage bench`: kiln_bench, cold L2, each candidate checked against the
# float64 reference first), then share_sum.py's table. `OUT=... bash tuning/probes/share_run.sh`.
set -u
OUT=${OUT:-/tmp/share}; mkdir -p $OUT
status=0
for y in share share_block; do
  f=tuning/probes/sm90_small_m_$y.yaml
  if [ ! -f build-probe/$y/build/libkiln.so ]; then  # (carried from a build elsewhere, or built here)
    generator/kiln-gen tune $f --stage build --work build-probe/$y --jobs 16 > $OUT/build_$y.txt 2>&1 \
      || { status=1; tail -n5 $OUT/build_$y.txt; continue; }
  fi
  generator/kiln-gen tune $f --stage bench --work build-probe/$y > $OUT/tune_$y.txt 2>&1 \
    || { status=1; tail -n5 $OUT/tune_$y.txt; }
  cp build-probe/$y/results.json $OUT/results_$y.json 2>/dev/null
done
python3 tuning/probes/share_sum.py $OUT/results_share.json $OUT/results_share_block.json | tee $OUT/summary.txt
exit $status
