#!/bin/bash
# Device probe: sm90_chain.yaml built once per split-pair chain length (-DKILN_PROBE_PAIR_CHAIN=1, 2, 4, 8; 1 is
# the loop that drains every K-tile), timed in two rounds in alternating order; prints one table (ab_table.py, base
# chain 1). Results under ${OUT:-/tmp}/chain.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp}/chain
mkdir -p "$out"
p=sm90_chain
chains="${CHAINS:-1 2 4 8}"
for c in $chains; do
  ( NVCC_APPEND_FLAGS=-DKILN_PROBE_PAIR_CHAIN=$c "$root/generator/kiln-gen" tune "$root/tuning/probes/$p.yaml" \
      --stage build --work "/tmp/chain_$c" --jobs 4 > "$out/build_c$c.log" 2>&1 || echo "build chain $c failed" ) &
done
wait
rev=$(echo $chains | tr ' ' '\n' | tac | tr '\n' ' ')
for r in 1 2; do
  order=$chains; [ $r = 2 ] && order=$rev
  for c in $order; do
    w=/tmp/chain_$c
    rm -f "$w/results.json"
    "$root/generator/kiln-gen" tune "$root/tuning/probes/$p.yaml" --stage bench --work "$w" --iters 30 \
      >> "$out/bench_c$c.log" 2>&1 && cp "$w/results.json" "$out/${p}_c${c}_r$r.json"
  done
done
labels=$(for c in $chains; do printf "c%s " "$c"; done)
python3 "$root/tuning/probes/ab_table.py" "$out" $p -- $labels | tee "$out/table.txt"
