#!/bin/bash
# Device: per-instruction stall samples (ncu SourceCounters, --clock-control none, one launch at 4096x4096x7168) of
# main's block-scaled 128x128 tile, probe builds of it and its promoted fp8 twin (the libraries of
# block_scale_cost_run.sh in $PACK), to see where the scales' 6-9 % goes: block against block_np (no scale copies,
# no scale reads) and block_c4x (copies on every 4th K-tile). Each build's SASS page (with the samples) is
# bprof/<y>_sass.csv.gz, its details bprof/<y>_details.txt, all in $OUT/bprof.tgz (a call brings back at most 8
# files); the reports themselves are dropped (too large to come back).
#   VARIANTS="block block_np fp8" OUT=... bash tuning/probes/block_scale_prof.sh
set -u
out=${OUT:-/tmp}/bprof; mkdir -p $out
pack=${PACK:-build-probe/bgap_pack}
. tuning/probes/block_pair_kernel.sh
for y in ${VARIANTS-block block_np block_c4x fp8}; do
  mkdir -p /tmp/bp_$y && python3 tuning/probes/unxz.py $pack/$y.so.xz /tmp/bp_$y/libkiln.so.0 || exit 1
  pair_kernel $y
  LD_LIBRARY_PATH=/tmp/bp_$y timeout 150 ncu --clock-control none -k regex:Cijk --launch-skip 3 -c 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --section SourceCounters --import-source no -o /tmp/bp_$y/rep -f $pack/kiln_bench --a e4m3 --b e4m3 --d bf16 \
      --layout TN $F --sizes 4096x4096x7168 --iters 1 --warmup 3 --solutions $K > $out/${y}_ncu.log 2>&1
  echo "== ncu $y rc=$?"
  ncu --import /tmp/bp_$y/rep.ncu-rep --print-details all > $out/${y}_details.txt 2>&1
  ncu --import /tmp/bp_$y/rep.ncu-rep --page source --print-source sass --csv 2>&1 | gzip > $out/${y}_sass.csv.gz
  grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued|Stall" $out/${y}_details.txt | head -14
done
(cd $OUT && tar czf bprof.tgz bprof && rm -rf bprof)
