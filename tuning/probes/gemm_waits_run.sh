#!/bin/bash
# Device: where an fp8 GEMM CTA's cycles go. Kernels of tuning/probes/gemm_waits_*.yaml built with
# KILN_PROBE_WAITS=0x7e0000000000ull (each CTA writes its globaltimer span, its cycles and each warp's mbarrier wait
# cycles to that address) into build-probe/waits_<yaml suffix>; this runs kiln_bench on each kernel and size with
# gemm_waits_shim.c preloaded (it maps the address and prints the last launch's records at exit) and summarizes them
# with gemm_waits_sum.py. Build: a copy of the tree with the define at the top of device/kiln_sm90.h, then
#   generator/kiln-gen tune tuning/probes/gemm_waits_block.yaml --stage build --work build-probe/waits_block
# Runs: OUT=... bash tuning/probes/gemm_waits_run.sh                    (small M: block-scaled and promoted fp8)
#       FP8_ONLY=1 FP8_WORKS="waits_fp8 waits_fp8c8" NCU=1 bash ...     (with a KILN_PROBE_PIPE_CHAIN=8 build beside)
#       SIZES= LARGE=1 bash ...                                         (the M >= 4096 picks, promoted and pr 0)
set -u
OUT=${OUT:-/tmp/waits}; mkdir -p $OUT
CUDA=${CUDA_HOME:-/usr/local/cuda}
gcc -shared -fPIC -O2 -o $OUT/shim.so tuning/probes/gemm_waits_shim.c -I$CUDA/include -L$CUDA/lib64/stubs -lcuda || exit 1
P=_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_
S=_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_
one() {  # work flags size kernel
  local B=build-probe/$1/build tag=$1_$3_$(echo $4 | sed 's/.*_MT\([0-9x]*\)x128_.*_GSU\([0-9]\).*MC\([0-9]\).*/\1g\2m\3/')
  LD_PRELOAD=$OUT/shim.so LD_LIBRARY_PATH=$B timeout 60 $B/kiln_bench --a e4m3 --b e4m3 --d bf16 $2 --sizes $3 \
    --solutions $4 --iters 20 --warmup 3 > $OUT/$tag.txt 2>&1
  echo "== $tag $(grep -m1 Cijk $OUT/$tag.txt | awk '{print "bench ms", $3}')"; python3 tuning/probes/gemm_waits_sum.py $OUT/$tag.txt
}
for s in ${SIZES-64x4096x7168 64x7168x2048 128x7168x2048}; do
  if [ -z "${FP8_ONLY:-}" ]; then
    one waits_block --block-scales $s Cijk_Alik_Bljk_F8F8BQ_MT64x64x128_WG1x1_MI64x64x32_PGR8${P}GSU1${S}PK1_PR0_MC0_SAB0_WGMMA_SM90
    one waits_block --block-scales $s Cijk_Alik_Bljk_F8F8BQ_MT64x64x128_WG1x1_MI64x64x32_PGR8${P}GSU2${S}PK0_PR0_MC3_SAB0_WGMMA_SM90
    one waits_block --block-scales $s Cijk_Alik_Bljk_F8F8BQ_MT64x128x128_WG1x1_MI64x128x32_PGR6${P}GSU1${S}PK1_PR0_MC0_SAB0_WGMMA_SM90
  fi
  for w in ${FP8_WORKS:-waits_fp8}; do  # waits_fp8c8: the same kernels built with KILN_PROBE_PIPE_CHAIN=8 too
    one $w "" $s Cijk_Alik_Bljk_F8F8B_MT64x64x128_WG1x1_MI64x64x32_PGR6${P}GSU1${S}PK1_PR1_MC0_SAB0_WGMMA_SM90
    one $w "" $s Cijk_Alik_Bljk_F8F8B_MT64x128x128_WG1x1_MI64x128x32_PGR6${P}GSU1${S}PK1_PR1_MC0_SAB0_WGMMA_SM90
  done
done
if [ -n "${LARGE:-}" ]; then  # the M = 4096 picks, promoted (waits_large) and their pr 0 twins (waits_large_fast)
  for s in ${LARGE_SIZES:-4096x4096x7168 8192x8192x8192}; do
    for t in MT128x256x128_WG2x1_MI64x256x32 MT128x192x128_WG2x1_MI64x192x32; do
      one waits_large "" $s Cijk_Alik_Bljk_F8F8B_${t}_PGR2${P}GSU1${S}PK1_PR1_MC0_SAB0_WGMMA_SM90
      one waits_large_fast --fast-accum $s Cijk_Alik_Bljk_F8F8B_${t}_PGR2${P}GSU1${S}PK1_PR0_MC0_SAB0_WGMMA_SM90
    done
  done
fi
if [ -n "${NCU:-}" ]; then  # the tensor pipe and instruction counts of the shipped 64x64 pick (probe build)
  for w in ${FP8_WORKS:-waits_fp8}; do
    B=build-probe/$w/build
    LD_PRELOAD=$OUT/shim.so LD_LIBRARY_PATH=$B timeout 90 ncu --clock-control none -k regex:Cijk --launch-skip 3 -c 1 \
      --section ComputeWorkloadAnalysis --section SpeedOfLight --section WarpStateStats $B/kiln_bench --a e4m3 --b e4m3 \
      --d bf16 --sizes 64x4096x7168 --iters 1 --warmup 2 --solutions \
      Cijk_Alik_Bljk_F8F8B_MT64x64x128_WG1x1_MI64x64x32_PGR6${P}GSU1${S}PK1_PR1_MC0_SAB0_WGMMA_SM90 > $OUT/ncu_$w.txt 2>&1
    echo "== ncu $w 64x4096x7168"; grep -E "Duration|Executed Ipc A|Issue Slots Busy|Tensor|Stall|Warp Cycles Per Issued" $OUT/ncu_$w.txt | head -14
  done
fi
