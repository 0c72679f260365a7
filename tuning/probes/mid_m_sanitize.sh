#!/bin/bash
# Device: the GPU suite on a prebuilt full library (build-probe/full/libkiln.so.xz from full_lib_build.sh), memcheck and
# racecheck of the fp8 split-K tests, the two mid-M probe kernels whose split-K accumulators take the ring's room
# (build-probe/midm/build, carried) under both tools in kiln_bench, then the kernels cuBLASLt runs at the mid-M sizes.
#   KILN_COMMIT=<sha> OUT=... bash tuning/probes/mid_m_sanitize.sh
export KILN_SKIP_SANITIZERS=1 KILN_SKIP_ATTN=1 KILN_SKIP_SASS=1 KILN_SKIP_BENCH=1 KILN_PREBUILT=build-probe/full/libkiln.so.xz KILN_COMMIT=${KILN_COMMIT:-unknown}
OUT=$OUT bash tests/gpu/device_run.sh 2>&1 | tail -4
export KILN_LIBRARY=$PWD/build/libkiln.so
KILN_GPU_LOG= timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_scaled_mm.py -x > $OUT/memcheck.log 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|passed|failed' $OUT/memcheck.log | tail -2 | tr '\n' ' ')"
KILN_GPU_LOG= timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_scaled_mm.py -k cluster_split > $OUT/racecheck.log 2>&1
echo "racecheck rc=$?: $(grep -E 'RACECHECK SUMMARY|passed|failed' $OUT/racecheck.log | tail -2 | tr '\n' ' ')"
(cd build-probe/midm/build && ln -sf libkiln.so.0.1.0 libkiln.so.0 && ln -sf libkiln.so.0 libkiln.so)
P=Cijk_Alik_Bljk_F8F8B_MT
S=_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1
for n in 128x256x128_WG2x1_MI64x256x32_PGR2${S}_GSU2 128x128x128_WG2x1_MI64x128x32_PGR4${S}_GSU3; do
  name=$P${n}_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK0_PR1_MC3_SAB0_WGMMA_SM90
  for tool in memcheck racecheck; do
    LD_LIBRARY_PATH=$PWD/build-probe/midm/build timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 build-probe/midm/build/kiln_bench --a e4m3 --b e4m3 --d bf16 --sizes 200x520x1024 --solutions $name --warmup 0 --iters 1 > $OUT/probe_$tool.log 2>&1
    echo "$tool ${n%%_WG*} gsu${n##*GSU} rc=$?: $(grep -E 'SUMMARY|pass|FAIL' $OUT/probe_$tool.log | tail -2 | tr '\n' ' ')"
  done
done
echo "== cuBLASLt kernels"; python3 tuning/probes/cublas_kernel_names.py 2>&1 | tail -14
