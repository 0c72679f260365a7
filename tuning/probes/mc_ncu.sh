#!/bin/bash
# Device: what TMA multicast costs kiln at mid M. ncu (--clock-control none) of the same tile with and without
# multicast (tuning/probes/sm90_mid_mc.yaml's library, its kiln_bench) at sizes where both give the same CTA count,
# one launch each: time, SM clock, tensor-pipe share, L2 reads, and the warps' stall reasons.
#   PROBE_LIB=build-probe/midmc/libkiln.so.xz BENCH=build-probe/midmc/build/kiln_bench OUT=... \
#       bash tuning/probes/mc_ncu.sh
set -u
out=${OUT:-/tmp}; lib=/tmp/mcprobe; mkdir -p $lib
python3 tuning/probes/unxz.py "$PROBE_LIB" $lib/libkiln.so.0 || exit 1
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
m=$m,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
m=$m,lts__t_sectors_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size
m=$m,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
m=$m,smsp__average_warps_issue_stalled_misc_per_issue_active.ratio,smsp__inst_executed.sum
for job in "384x4096x14336 MT128x128x128.*PGR5.*MC0" "384x4096x14336 MT128x128x128.*PGR5.*MC2" \
           "600x4096x12288 MT128x192x128.*MC0" "600x4096x12288 MT128x192x128.*MC2"; do
  set -- $job; tag=$(echo "$2" | tr -dc 'A-Za-z0-9')
  LD_LIBRARY_PATH=$lib timeout 100 ncu --clock-control none -k "regex:$2" --launch-skip 2 --launch-count 1 \
      --metrics "$m" "$BENCH" --a e4m3 --b e4m3 --d bf16 --layout TN --sizes "$1" --solutions all --iters 3 \
      --warmup 1 --quiet > "/tmp/mc_$1_$tag.txt" 2>&1
  echo "== $1 $2 rc=$?"
  grep -E "duration|per_second|tensor_cycles|lts__|grid_size|stalled|inst_executed" "/tmp/mc_$1_$tag.txt" |
      awk '{sub("smsp__average_warps_issue_stalled_", "stall_", $1); print $1, $NF}'
done
