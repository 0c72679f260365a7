#!/bin/bash
# Device: ncu (--clock-control none) of kiln's pick and of torch._scaled_mm (cuBLASLt) at one mid-M size, one launch
# each, with the SM clock, the L2 throughput and the tensor-pipe share: tells an L2-delivery bound from a clock
# (power) bound at mid M (bench/NOTES.md). KILN_LIBRARY picks the library; SHAPE defaults to 600x4096x12288.
#   KILN_LIBRARY=/tmp/kiln_main.so SHAPE=600x4096x12288 OUT=... bash tuning/probes/mid_ncu_pair.sh
set -u
out=${OUT:-/tmp}; shape=${SHAPE:-600x4096x12288}
export PYTHONPATH=$PWD/runtime/python
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,gpc__cycles_elapsed.max
m=$m,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,lts__t_sectors_op_read.sum,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,l1tex__m_xbar2l1tex_read_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size
m=$m,launch__cluster_dim_x,launch__cluster_dim_y
for op in kiln cublas; do
  timeout 120 ncu --clock-control none --profile-from-start off --launch-skip 2 --launch-count 1 --metrics "$m" \
      python3 bench/profile_fp8.py run --op $op --shape "$shape" --iters 4 > "$out/ncu_${op}_${shape}.txt" 2>&1
  echo "== $op $shape rc=$?"
  grep -E "^  [A-Za-z_]|duration|per_second|tensor_cycles|lts__|dram__|xbar2l1tex|sm__throughput|launch__" \
      "$out/ncu_${op}_${shape}.txt" | grep -v "^==" | awk '{print $1, $(NF-1), $NF}' | cut -c1-140
done
