#!/bin/bash
# Device, one call (~8 minutes): the shipped swap-AB forms at the promoted tune's sizes the merge probe did not reach
# (tuning/probes/sm90_swabl.yaml, kiln_bench through the probe library LIB, carried), their times entered into the
# tune's results (sab_merge.py), the logic written again and generated, the full library built here, then
# retime_ship_device.sh on it (bench_gemm fp8, the GPU suite, the held-out list, pick_vs_alt). The CPU machine repeats
# the merge from swabl.tgz and checks that generated/dispatch.c comes out as printed here.
#   KILN_COMMIT=<label> OUT=... [LIB=build-probe/swabl/lib] [SIZES=...] bash tuning/probes/swabl_ship_device.sh
# SIZES: the probe's sizes, its exact ones first and then M = 2048, 4096, ... (the probe stops after SWAB_S seconds; at
# 045e509 120 s reached 21 of 45).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIB=${LIB:-build-probe/swabl/lib} NAME=swabl SKIP_SAN=1 SWAB_S=${SWAB_S:-150} bash tuning/probes/swab_merge_device.sh
mkdir -p /tmp/swabl_res && tar xzf "$OUT/swabl.tgz" -C /tmp/swabl_res
R=tuning/results/sm90_fp8_promoted_h100.json
python3 tuning/probes/sab_merge.py $R /tmp/swabl_res | tail -3
generator/kiln-gen tune tuning/sm90_fp8_promoted.yaml --stage write --results $R | tail -1
generator/kiln-gen generate | tail -1
echo "dispatch.c $(sha256sum generated/dispatch.c | cut -c1-16)"
t=$(date +%s); bash tuning/probes/full_lib_build.sh build-probe/dev > /tmp/libbuild.txt 2>&1
echo "library rc=$? in $(( $(date +%s) - t )) s: $(tail -1 /tmp/libbuild.txt)"
[ -s build-probe/dev/libkiln.so.xz ] || { tail -20 build-probe/dev/build.log; exit 1; }
LIB=build-probe/dev/libkiln.so.xz bash tuning/probes/retime_ship_device.sh
