#!/bin/bash
# Device probe: sm90_chain.yaml built once per split-pair chain length (-DKILN_PROBE_PAIR_CHAIN=1, 2, 4, 8; 1 is
# the loop that drains every K-tile), timed in two rounds in alternating order; prints one table (ab_table.py, base
# chain 1). Results under ${OUT:-/tmp}/chain.
. "$(dirname "$0")/rounds.sh" chain
p=sm90_chain
chains="${CHAINS:-1 2 4 8}"
PROBE_JOBS=4
for c in $chains; do probe_build $p "/tmp/chain_$c" "c$c" "-DKILN_PROBE_PAIR_CHAIN=$c" & done
wait
rev=$(echo $chains | tr ' ' '\n' | tac | tr '\n' ' ')
for r in 1 2; do
  order=$chains; [ $r = 2 ] && order=$rev
  for c in $order; do probe_bench $p "/tmp/chain_$c" "c$c" "${p}_c${c}_r$r.json"; done
done
labels=$(for c in $chains; do printf "c%s " "$c"; done)
python3 "$root/tuning/probes/ab_table.py" "$out" $p -- $labels | tee "$out/table.txt"
