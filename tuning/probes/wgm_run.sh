#!/bin/bash
# Device probe: builds the wgm probes (sm90_wgm*.yaml), times every candidate in two rounds (kiln_bench through the
# tune's bench stage) and prints per size each kernel's best time and its ratio to the wgm 8 kernel of its tile
# (ab_table.py --wgm). Results under ${OUT:-/tmp}/wgm.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp}/wgm
mkdir -p "$out"
probes="${WGM_PROBES:-sm90_wgm sm90_wgm_block}"
for p in $probes; do
  ( "$root/generator/kiln-gen" tune "$root/tuning/probes/$p.yaml" --stage build --work "/tmp/wgm_$p" --jobs 8 \
      > "$out/build_$p.log" 2>&1 || echo "build $p failed" ) &
done
wait
for r in 1 2; do
  for p in $probes; do
    w=/tmp/wgm_$p
    rm -f "$w/results.json"
    "$root/generator/kiln-gen" tune "$root/tuning/probes/$p.yaml" --stage bench --work "$w" --iters 30 \
      >> "$out/bench_$p.log" 2>&1 && cp "$w/results.json" "$out/${p}_r$r.json"
  done
done
python3 "$root/tuning/probes/ab_table.py" --wgm "$out" $probes | tee "$out/table.txt"
