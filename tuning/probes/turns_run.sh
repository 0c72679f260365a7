#!/bin/bash
# Device: the consumers' turns (KILN_PROBE_TURNS, kiln_gemm_wgmma.h) against the same kernels without them.
# kiln_bench (cold L2, every candidate, 30 iterations) in rounds base, turns, turns, base, for the promoted fp8 probe
# (tuning/probes/sm90_turns.yaml) and the block-scaled one (sm90_turns_block.yaml); turns_sum.py prints the table.
# The four libraries, built here with
#   generator/kiln-gen tune tuning/probes/sm90_turns[_block].yaml --stage build --work build-probe/turns[b]_base
#   NVCC_APPEND_FLAGS=-DKILN_PROBE_TURNS=1 generator/kiln-gen tune tuning/probes/sm90_turns[_block].yaml \
#       --stage build --work build-probe/turns[b]_turns
# are packed into one carried folder, $PACK (default build-probe/turns_pack): <build>.so.xz (xz of
# build/libkiln.so.0.1.0) and one build/kiln_bench (the same client for all four).
#   OUT=... bash tuning/probes/turns_run.sh
set -u
out=${OUT:-/tmp}/turns; mkdir -p $out
fp8=${FP8_SIZES:-8192x8192x8192,4096x4096x7168,4096x7168x16384,4096x2112x7168,4096x24576x1536,2048x8192x8192}
[ -n "${FP8_SIZES:-}" ] || fp8=$fp8,1024x4096x14336,600x4096x12288,128x7168x16384,128x4096x7168,64x7168x2048
blk=${BLOCK_SIZES:-4096x7168x16384,4096x4096x7168,4096x2112x7168,4096x7168x2048,128x4096x7168,128x2112x7168}
[ -n "${BLOCK_SIZES:-}" ] || blk=$blk,64x4096x7168,64x7168x2048
pack=${PACK:-build-probe/turns_pack}
for d in turns_base turns_turns turnsb_base turnsb_turns; do
  mkdir -p /tmp/lib_$d && python3 tuning/probes/unxz.py $pack/$d.so.xz /tmp/lib_$d/libkiln.so.0 || exit 1
done
bench() {  # DIR ROUND SIZES [FLAGS]
  LD_LIBRARY_PATH=/tmp/lib_$1 timeout 200 $pack/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN \
      --sizes $3 --solutions all --iters 30 --warmup 5 --quiet ${4:-} --json $out/$1_r$2.json > $out/$1_r$2.log 2>&1
  echo "== $1 r$2 rc=$?"
}
for r in 1 2; do
  if [ $r = 1 ]; then order="base turns"; else order="turns base"; fi
  for v in $order; do bench turns_$v $r $fp8; bench turnsb_$v $r $blk --block-scales; done
done
python3 tuning/probes/turns_sum.py $out ${GATE:-}
