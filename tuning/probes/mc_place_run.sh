#!/bin/bash
# Device: where the CTAs of a clustered launch run and how long each takes. The multicast probe's kernels built with
# KILN_PROBE_WAITS (build-probe/midmc_w: a copy of the tree with `#define KILN_PROBE_WAITS 0x7e0000000000ull` at the
# top of device/kiln_sm90.h, `generator/kiln-gen tune tuning/probes/sm90_mid_mc.yaml --stage build --work
# build-probe/midmc_w`), run one at a time with gemm_waits_shim.c preloaded; the KWAIT records (SM id, start and end,
# cycles, mbarrier waits per warp) of each kernel's last launch go to $OUT/place.tar for tuning/probes/mc_place_sum.py.
# First cluster_occupancy.py on the pair kernels: how many two-CTA clusters can be resident at once.
set -u
out=${OUT:-/tmp}; w=/tmp/mcplace; mkdir -p $w/lib $w/logs
CUDA=${CUDA_HOME:-/usr/local/cuda}
gcc -shared -fPIC -O2 -o $w/shim.so tuning/probes/gemm_waits_shim.c -I$CUDA/include -L$CUDA/lib64/stubs -lcuda || exit 1
python3 tuning/probes/unxz.py build-probe/midmc_w/libkiln.so.xz $w/lib/libkiln.so.0 || exit 1
for f in build-probe/midmc_w/build/code/sm90/*MT128x1[29][28]x128*MC[12]_*.co; do
  python3 tuning/probes/cluster_occupancy.py $f 2>&1 | tail -1
done
P=_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK1_PR1_MC
for size in ${SIZES:-384x4096x14336 4096x4096x4096}; do
  for t in MT128x128x128_WG2x1_MI64x128x32_PGR5 MT128x192x128_WG2x1_MI64x192x32_PGR3; do
    for mc in 0 1 2; do
      name=Cijk_Alik_Bljk_F8F8B_${t}${P}${mc}_WGMMA_SM90
      LD_PRELOAD=$w/shim.so LD_LIBRARY_PATH=$w/lib timeout 60 build-probe/midmc_w/build/kiln_bench --a e4m3 --b e4m3 \
          --d bf16 --sizes $size --solutions $name --iters 10 --warmup 3 > $w/logs/${size}_${t%%_*}_mc$mc.txt 2>&1
      echo "== $size ${t%%_*} mc$mc rc=$? $(grep -m1 Cijk $w/logs/${size}_${t%%_*}_mc$mc.txt | awk '{print $3}')"
    done
  done
done
tar -C $w -cf $out/place.tar logs
