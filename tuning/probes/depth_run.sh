#!/bin/bash
# Device probe: builds sm90_depth.yaml (promoted) and sm90_depth_fast.yaml (its fast twin), times every candidate in
# two rounds in alternating order (kiln_bench through the tune's bench stage) and prints per size each kernel's best
# time (ab_table.py). Then ncu (--clock-control none) of the fast 128x192 at pgr 3 and 4 at 8192^3, the tensor pipe's
# active share and the stalls, as ncu_fast_tiles.sh reads pgr 2. Results under ${OUT:-/tmp}/depth.
. "$(dirname "$0")/rounds.sh" depth
probes="sm90_depth sm90_depth_fast"
for p in $probes; do probe_build "$p" "/tmp/depth_$p" "$p" & done
wait
for r in 1 2; do
  order=$probes; [ $r = 2 ] && order="sm90_depth_fast sm90_depth"
  for p in $order; do probe_bench "$p" "/tmp/depth_$p" "$p" "${p}_base_r$r.json"; done
done
python3 "$root/tuning/probes/ab_table.py" "$out" $probes -- base | tee "$out/table.txt"
metrics=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
metrics=$metrics,lts__t_sectors_op_read.sum,lts__t_sector_hit_rate.pct
metrics=$metrics,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
metrics=$metrics,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
for pgr in 3 4; do
  timeout 150 ncu --clock-control none -k "regex:MT128x192x.*PGR${pgr}_.*MC0_" --launch-skip 2 --launch-count 1 \
    --metrics "$metrics" /tmp/depth_sm90_depth_fast/build/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN \
    --sizes 8192x8192x8192 --solutions all --iters 3 --warmup 1 --fast-accum --quiet > "$out/ncu_fast_pgr${pgr}.txt" 2>&1
  echo "== fast 128x192 pgr $pgr rc=$?"
  grep -E "duration|tensor_cycles|sectors_op_read|hit_rate|stalled" "$out/ncu_fast_pgr${pgr}.txt" | awk '{print $1, $NF}'
done
