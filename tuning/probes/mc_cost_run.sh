#!/bin/bash
# Device: where TMA multicast's cost comes from at mid M. kiln_bench (cold L2, every candidate) on the multicast probe
# library (tuning/probes/sm90_mid_mc.yaml) and on the same kernels built with KILN_PROBE_MC_NOSHARE (each CTA loads
# the whole shared operand itself, the pair's cross-CTA stage hand-off kept), then ncu's L2 reads and time of the
# 128x128 pair at 384 x 4096 x 14336 in both builds.
#   LIBS="mc:build-probe/midmc ns:build-probe/midmc_ns" OUT=... bash tuning/probes/mc_cost_run.sh
# (each dir holds libkiln.so.xz and build/kiln_bench; the NOSHARE build: a copy of the tree with
# `#define KILN_PROBE_MC_NOSHARE 1` at the top of device/kiln_sm90.h, then
# `generator/kiln-gen tune tuning/probes/sm90_mid_mc.yaml --stage build --work build-probe/midmc_ns`)
set -u
out=${OUT:-/tmp}; sizes=${SIZES:-384x4096x14336,600x4096x12288,320x5120x13824,4096x4096x4096}
for entry in $LIBS; do
  tag=${entry%%:*}; dir=${entry#*:}; lib=/tmp/mccost_$tag; mkdir -p $lib
  python3 tuning/probes/unxz.py $dir/libkiln.so.xz $lib/libkiln.so.0 || exit 1
  LD_LIBRARY_PATH=$lib $dir/build/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN --sizes $sizes --solutions all \
      --iters 30 --warmup 5 --quiet --json $out/bench_$tag.json > /tmp/bench_$tag.log 2>&1
  echo "== $tag bench rc=$?"
  LD_LIBRARY_PATH=$lib timeout 100 ncu --clock-control none -k "regex:MT128x128x128.*PGR5.*MC2" --launch-skip 2 \
      --launch-count 1 --metrics gpu__time_duration.sum,lts__t_sectors_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum \
      $dir/build/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN --sizes 384x4096x14336 --solutions all --iters 3 \
      --warmup 1 --quiet 2>&1 | grep -E "duration|lts__|xbar" | awk -v t=$tag '{print t, $1, $NF}'
done
