#!/bin/bash
# Device: where the block-scaled 128x128 tile (pgr 4, the M >= 4096 pick) loses 6-18 % (geomean 12.5 %) to the
# promoted fp8 tile of the same shape and ring (tuning/probes/block_gap_{block,fp8}.yaml). Four libraries, built here with
#   generator/kiln-gen tune tuning/probes/block_gap_<y>.yaml --stage build --work build-probe/bgap_<y>
#   NVCC_APPEND_FLAGS=-DKILN_PROBE_WAITS=0x7e0000000000ull generator/kiln-gen tune ... --work build-probe/bgap_<y>_w
# for y in block, fp8, are packed in $PACK (default build-probe/bgap_pack): <build>.so.xz (xz of
# build/libkiln.so.0.1.0), one kiln_bench and the two plain code objects (<y>.co); block_nf is the block build of
# a tree whose release_read has no __threadfence_block (timing only: the fence guards a race, kiln_gemm_wgmma.h),
# block_late one whose block_retire gives the stage back after the promotion (the scales consumed), fence kept.
# VARIANTS (default "block_nf block_late") names the block builds timed beside block and fp8 (<name>.so.xz in the
# pack). block_scale_cost_run.sh times such builds alone, without the waits and ncu steps.
# Steps, all logs under $OUT/bgap:
#   1. kiln_bench (cold L2, checked), rounds block, the variants, fp8, then the reverse, on three M >= 4096 sizes;
#   2. the KILN_PROBE_WAITS builds under gemm_waits_shim.c: each warp's mbarrier wait cycles (gemm_waits_sum.py);
#   3. ncu (--clock-control none) of both plain kernels at 4096 x 4096 x 7168, with the SASS source page;
#   4. the SASS of both (cuobjdump), opcode counts.
#   OUT=... bash tuning/probes/block_gap_run.sh
set -u
out=${OUT:-/tmp}/bgap; mkdir -p $out
pack=${PACK:-build-probe/bgap_pack}
CUDA=${CUDA_HOME:-/usr/local/cuda}
gcc -shared -fPIC -O2 -o /tmp/bgap_shim.so tuning/probes/gemm_waits_shim.c -I$CUDA/include -L$CUDA/lib64/stubs -lcuda || exit 1
variants=${VARIANTS-block_nf block_late}
for d in block $variants block_w fp8 fp8_w; do
  mkdir -p /tmp/bg_$d && python3 tuning/probes/unxz.py $pack/$d.so.xz /tmp/bg_$d/libkiln.so.0 || exit 1
done
P=_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK1_PR
declare -A K=([fp8]=Cijk_Alik_Bljk_F8F8B_MT128x128x128_WG2x1_MI64x128x32_PGR4${P}1_MC0_SAB0_WGMMA_SM90) F=([fp8]=)
for y in block $variants; do  # every block build holds the same kernel
  K[$y]=Cijk_Alik_Bljk_F8F8BQ_MT128x128x128_WG2x1_MI64x128x32_PGR4${P}0_MC0_SAB0_WGMMA_SM90 F[$y]=--block-scales
done
run() {  # y lib-suffix tag sizes [preload]
  LD_PRELOAD=${5:-} LD_LIBRARY_PATH=/tmp/bg_$1$2 timeout 150 $pack/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN \
      ${F[$1]} --sizes $4 --solutions ${K[$1]} --iters 30 --warmup 5 > $out/$3.txt 2>&1
  echo "== $3 rc=$? $(grep Cijk $out/$3.txt | awk '{printf "%s ", $0}' | cut -c1-400)"
}
sizes=${SIZES:-4096x7168x16384,4096x4096x7168,8192x8192x8192}
for r in 1 2; do
  if [ $r = 1 ]; then order="block $variants fp8"; else order="fp8 $(echo $variants | tr ' ' '\n' | tac | xargs) block"; fi
  for y in $order; do run $y "" time_${y}_r$r $sizes; done
done
for s in 4096x7168x16384 4096x4096x7168; do
  for y in block fp8; do
    run $y _w waits_${y}_$s $s /tmp/bgap_shim.so
    python3 tuning/probes/gemm_waits_sum.py $out/waits_${y}_$s.txt
  done
done
for y in block fp8; do
  LD_LIBRARY_PATH=/tmp/bg_$y timeout 150 ncu --clock-control none -k regex:Cijk --launch-skip 3 -c 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --section SourceCounters \
      --import-source no -o $out/ncu_$y -f $pack/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN ${F[$y]} \
      --sizes 4096x4096x7168 --iters 1 --warmup 3 --solutions ${K[$y]} > $out/ncu_$y.log 2>&1
  echo "== ncu $y rc=$?"
  ncu --import $out/ncu_$y.ncu-rep --print-details all > $out/ncu_${y}_details.txt 2>&1
  ncu --import $out/ncu_$y.ncu-rep --page source --print-source sass --csv > $out/ncu_${y}_sass.csv 2>&1
  rm -f $out/ncu_$y.ncu-rep  # (the reports made the tar too large to come back)
  grep -E "Duration|SM Frequency|Executed Ipc Active|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Stall|Executed Instructions  " \
      $out/ncu_${y}_details.txt | head -30
done
for y in block $variants fp8; do
  [ -f $pack/$y.co ] || continue
  cuobjdump -sass $pack/$y.co > $out/sass_$y.txt 2>&1
  echo "== sass $y: $(grep -cE '^\s+/\*[0-9a-f]+\*/' $out/sass_$y.txt) instructions"
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_.]+' $out/sass_$y.txt | awk '{print $NF}' | sed 's/\..*//' |
      sort | uniq -c | sort -rn | head -25 | tr '\n' ' '; echo
done
