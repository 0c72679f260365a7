#!/bin/bash
# Device, one call (~5 minutes): the swap-AB merge probe (tuning/probes/sm90_swab_merge.yaml) at the promoted tune's
# sizes with M <= 1024, kiln_bench per size (cold L2, every candidate checked and timed), then memcheck and racecheck
# of its swap-AB kernels on shapes whose K the TMA kernels take. Carry LIB (the probe's kiln_bench, libkiln.so.0 and
# sab.txt, the comma list of its SAB1 kernel names), built here with
#   generator/kiln-gen tune tuning/probes/sm90_swab_merge.yaml --stage build --work build-probe/swabm
#   mkdir -p build-probe/swabm/lib && cp -L build-probe/swabm/build/{kiln_bench,libkiln.so.0} build-probe/swabm/lib/
#   grep -o "Cijk[A-Za-z0-9_]*SAB1_WGMMA_SM90" build-probe/swabm/build/kiln_code_objects.txt | sort -u | paste -sd, - \
#       > build-probe/swabm/lib/sab.txt
# then, on the CPU machine, the tarball unpacked into DIR: python3 tuning/probes/sab_merge.py \
#   tuning/results/sm90_fp8_promoted_h100.json DIR.
#   OUT=... [LIB=build-probe/swabm/lib] [SWAB_S=170] bash tuning/probes/swab_merge_device.sh
# Another probe of swap-AB forms (tuning/probes/sm90_swabk.yaml: with split-K): LIB=build-probe/swabk/lib NAME=swabk
# SIZES="..." (its sizes, as kiln-gen tune --stage candidates lists them); SKIP_SAN=1: timings only (kernels that the
# sanitizers have seen).
set -u
OUT=${OUT:-/tmp/out}; W=/tmp/${NAME:-swabm}; mkdir -p $W
LIB=${LIB:-build-probe/swabm/lib}
export LD_LIBRARY_PATH=$PWD/$LIB
KB=$LIB/kiln_bench
t0=$(date +%s)
for s in ${SIZES:-256x2112x7168 256x24576x1536 256x32768x512 256x7168x16384 256x4096x7168 256x7168x2048 256x4096x4096 256x11008x4096 256x4096x14336 256x8192x8192 512x2112x7168 512x24576x1536 512x32768x512 512x7168x16384 512x4096x7168 512x7168x2048 512x4096x4096 512x11008x4096 512x4096x14336 512x8192x8192 1024x2112x7168 1024x24576x1536 1024x32768x512 1024x7168x16384 1024x4096x7168 1024x7168x2048 1024x4096x4096 1024x11008x4096 1024x4096x14336 1024x8192x8192 1x2112x7168 1x24576x1536 1x32768x512 1x7168x16384 1x4096x7168 1x7168x2048 1x4096x4096 1x11008x4096 1x4096x14336 1x8192x8192 16x2112x7168 16x24576x1536 16x32768x512 16x7168x16384 16x4096x7168 16x7168x2048 16x4096x4096 16x11008x4096 16x4096x14336 16x8192x8192 64x2112x7168 64x24576x1536 64x32768x512 64x7168x16384 64x4096x7168 64x7168x2048 64x4096x4096 64x11008x4096 64x4096x14336 64x8192x8192 128x2112x7168 128x24576x1536 128x32768x512 128x7168x16384 128x4096x7168 128x7168x2048 128x4096x4096 128x11008x4096 128x4096x14336 128x8192x8192 1024x28672x4096 16x57344x8192 128x57344x8192 16x8192x28672 128x8192x28672}; do
  timeout 60 $KB --a e4m3 --b e4m3 --d bf16 --sizes $s --solutions all --iters 20 --warmup 3 --json $W/$s.json --quiet \
      > $W/$s.log 2>&1; echo "$s rc=$?" >> $W/rc.txt
  [ $(( $(date +%s) - t0 )) -gt ${SWAB_S:-170} ] && { echo "budget spent at $s"; break; }
done
grep -c "rc=0" $W/rc.txt; grep -v "rc=0" $W/rc.txt | head
[ -n "${SKIP_SAN:-}" ] && { tar czf $OUT/${NAME:-swabm}.tgz -C $W .; exit 0; }
SAB=$(cat $LIB/sab.txt)
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 $KB --a e4m3 --b e4m3 --d bf16 \
    --sizes 300x1000x1408,77x576x7168 --solutions $SAB --iters 1 --warmup 0 --warm-l2 > $W/memcheck.log 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1) $(grep 'kiln_bench:' $W/memcheck.log | tail -1)"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $KB --a e4m3 --b e4m3 --d bf16 --sizes 200x600x704 \
    --solutions $SAB --iters 1 --warmup 0 --warm-l2 > $W/racecheck.log 2>&1
echo "racecheck rc=$?: $(grep -E 'RACECHECK SUMMARY' $W/racecheck.log | tail -1) $(grep 'kiln_bench:' $W/racecheck.log | tail -1)"
tar czf $OUT/${NAME:-swabm}.tgz -C $W .
