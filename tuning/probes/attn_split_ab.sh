#!/bin/bash
# The split tail (persist 2) against the same persistent attention kernels without it (persist 1), e4m3 -> bf16:
#   bash tuning/probes/attn_split_ab.sh build          # here: build-probe/attnsplit1 and build-probe/attnsplit2, the
#                                                      # shipped YAML's persistent entries alone with persist 1 / 2
#   OUT=... bash tuning/probes/attn_split_ab.sh check  # on the device (carry build-probe/attnsplit{1,2}/{lib,generated},
#       about 2 MB): the GPU attention tests on the split library (test_split_tail among them), then compute-sanitizer
#       memcheck and racecheck of test_split_tail on the capped grids (about 8 minutes at most)
#   OUT=... bash tuning/probes/attn_split_ab.sh ab     # tuning/probes/attn_ab_libs.py on each library in alternating
#       order, twice
set -eu
if [ "${1:-}" = build ]; then
  for v in 1 2; do
    w=build-probe/attnsplit$v
    rm -rf $w; mkdir -p $w/solutions/sm90/attention
    python3 - "$v" > $w/solutions/sm90/attention/fp8_wgmma.yaml <<'PY'
import re, sys
v = sys.argv[1]
s = open("solutions/sm90/attention/fp8_wgmma.yaml").read()
s = s.replace("problem: {kind: attention, qkv: [e4m3, e5m2], o: [bf16, f16]}", "problem: {kind: attention, qkv: e4m3, o: bf16}")
head, body = s.split("solutions:\n", 1)
rows = [l for l in body.splitlines() if l.startswith("  - {") and "persist: 1" in l]
assert len(rows) == 6, rows
print(head + "solutions:\n" + "\n".join(l.replace("persist: 1", f"persist: {v}") for l in rows))
PY
    bash tuning/probes/attn_lib_build.sh $w $w/solutions/sm90/attention/fp8_wgmma.yaml
  done
elif [ "${1:-}" = check ]; then
  OUT=${OUT:-/tmp/attn_split}; mkdir -p $OUT
  export PATH="/usr/local/cuda/bin:$PATH"
  S=$PWD/build-probe/attnsplit2
  # (the library holds the six persistent kernels alone: tests that ask for other kernels are not run on it)
  KILN_LIBRARY=$S/lib/libkiln.so KILN_GENERATED_DIR=$S/generated timeout 300 python3 -m pytest -q -rs \
    tests/gpu/test_attention.py -k "split_tail or every_attention_kernel" > $OUT/tests.txt 2>&1 ||
    echo "tests: rc $?"
  tail -3 $OUT/tests.txt
  for tool in memcheck racecheck; do
    KILN_TEST_SPLIT_SMALL=1 KILN_LIBRARY=$S/lib/libkiln.so KILN_GENERATED_DIR=$S/generated timeout 240 \
      compute-sanitizer --tool $tool \
      python3 -m pytest -q -x tests/gpu/test_attention.py -k "split_tail and F8B" > $OUT/$tool.txt 2>&1 ||
      echo "$tool: rc $?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" $OUT/$tool.txt | tail -3
  done
elif [ "${1:-}" = ab ]; then
  OUT=${OUT:-/tmp/attn_split}; mkdir -p $OUT
  for round in 1 2; do
    for v in 1 2; do
      KILN_LIBRARY=$PWD/build-probe/attnsplit$v/lib/libkiln.so OUT=$OUT timeout 200 python3 tuning/probes/attn_ab_libs.py \
        pe$v > $OUT/ab_pe${v}_$round.txt 2>&1 || echo "ab pe$v: rc $?"
    done
  done
  cat $OUT/ab_pe*_*.txt
else
  echo "usage: attn_split_ab.sh build | check | ab" >&2; exit 2
fi
