#!/bin/bash
# Device probe: builds the wgm probes (sm90_wgm*.yaml), times every candidate in two rounds (kiln_bench through the
# tune's bench stage) and prints per size each kernel's best time and its ratio to the wgm 8 kernel of its tile
# (ab_table.py --wgm). Results under ${OUT:-/tmp}/wgm.
. "$(dirname "$0")/rounds.sh" wgm
probes="${WGM_PROBES:-sm90_wgm sm90_wgm_block}"
for p in $probes; do probe_build "$p" "/tmp/wgm_$p" "$p" & done
wait
for r in 1 2; do
  for p in $probes; do probe_bench "$p" "/tmp/wgm_$p" "$p" "${p}_r$r.json"; done
done
python3 "$root/tuning/probes/ab_table.py" --wgm "$out" $probes | tee "$out/table.txt"
