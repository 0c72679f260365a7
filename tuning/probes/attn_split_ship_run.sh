#!/bin/bash
# The device command of the split tail's ship (2d739ff): tuning/probes/attn_pace_ship_run.sh on the library of
# `bash tuning/probes/attn_lib_build.sh` (build-probe/attnlib; carry its lib and generated), every persist 2 kernel under
# the sanitizers, one bench_attn, then the forced picks at the head dim 64 wave boundaries.
#   KILN_COMMIT=<sha> OUT=<dir> bash tuning/probes/attn_split_ship_run.sh
DIR=${DIR:-build-probe/attnlib} RUNS=${RUNS:-1} NAME=${NAME:-attn_split_ship} \
  PICKS=${PICKS:-"2x16x1024x64 1x16x2048x64 8x16x2048x64 1x32x4096x64"} exec bash "$(dirname "$0")/attn_pace_ship_run.sh"
