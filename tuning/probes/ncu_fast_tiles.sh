#!/bin/bash
# Device probe: ncu (--clock-control none) of the three fast tiles of sm90_fast_tiles.yaml at 8192^3, one launch each
# (the third of kiln_bench's), the metrics of bench/results/profile_nvidia-h100-80gb-hbm3_662d6ff/ plus SM and L1
# throughput. Writes ${OUT:-/tmp}/ncu_fast_<tile>_8192.txt.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp}
"$root/generator/kiln-gen" tune "$root/tuning/probes/sm90_fast_tiles.yaml" --stage build --work /tmp/nft --jobs 16 \
    > "$out/build_fast_tiles.log" 2>&1 || { echo "build failed"; tail -20 "$out/build_fast_tiles.log"; exit 1; }
metrics=gpu__time_duration.sum,lts__t_requests.sum,lts__t_sector_hit_rate.pct,lts__t_sectors.sum,lts__t_sectors_op_read.sum
metrics=$metrics,lts__t_sectors_op_write.sum,sm__inst_executed_pipe_tensor_op_gmma.sum
metrics=$metrics,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
metrics=$metrics,sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active
metrics=$metrics,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
metrics=$metrics,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
metrics=$metrics,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
metrics=$metrics,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
metrics=$metrics,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
for tile in 128x192 128x256 128x128; do
  timeout 150 ncu --clock-control none -k "regex:MT${tile}x" --launch-skip 2 --launch-count 1 --metrics "$metrics" \
    /tmp/nft/build/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN --sizes 8192x8192x8192 --solutions all \
    --iters 3 --warmup 1 --fast-accum --quiet > "$out/ncu_fast_${tile}_8192.txt" 2>&1
  echo "== $tile rc=$?"; grep -E "duration|tensor_cycles|sectors_op_read|sm__throughput|l1tex__throughput|inst_executed.sum|stalled_(barrier|long|wait|mio|math)" "$out/ncu_fast_${tile}_8192.txt" | awk '{print $1, $NF}'
done
