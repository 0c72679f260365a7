#!/bin/bash
# Device probe: builds the promoted fp8 and block-scaled probes with consumer 1 delayed by 0 / 200 / 500 clocks at
# each tile start (-DKILN_STAGGER_CLOCKS through NVCC_APPEND_FLAGS), times them in two alternating rounds and prints
# one table per probe (stagger_table.py). Logs and results under ${OUT:-/tmp}/stagger.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp}/stagger
mkdir -p "$out"
clocks="0 200 500"
probes="sm90_stagger sm90_stagger_block"
for p in $probes; do
  for c in $clocks; do
    ( NVCC_APPEND_FLAGS="-DKILN_STAGGER_CLOCKS=$c" "$root/generator/kiln-gen" tune "$root/tuning/probes/$p.yaml" \
        --stage build --work "/tmp/stg_${p}_$c" --jobs 5 > "$out/build_${p}_$c.log" 2>&1 || echo "build $p $c failed" ) &
  done
done
wait
for r in 1 2; do
  for p in $probes; do
    order=$clocks
    [ $r = 2 ] && order=$(echo $clocks | tr ' ' '\n' | tac | tr '\n' ' ')
    for c in $order; do
      w=/tmp/stg_${p}_$c
      rm -f "$w/results.json"
      "$root/generator/kiln-gen" tune "$root/tuning/probes/$p.yaml" --stage bench --work "$w" --iters 30 \
        >> "$out/bench_${p}_$c.log" 2>&1 && cp "$w/results.json" "$out/${p}_${c}_r$r.json"
    done
  done
done
python3 "$root/tuning/probes/stagger_table.py" "$out" $probes -- $clocks | tee "$out/table.txt"
