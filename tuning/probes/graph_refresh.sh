#!/bin/bash
# One device call: main's full library (packed), bench_gemm's fp8 / fp8_fast cases and bench_moe's block part with
# their event and CUDA-graph columns; results tarred under $OUT. BUDGET (s a side) defaults to 1.0.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-1.0}
python3 tuning/probes/unxz.py build-probe/full/libkiln.so.xz /tmp/libkiln.so || exit 1
export KILN_LIBRARY=/tmp/libkiln.so
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
python3 bench/bench_gemm.py --cases fp8,fp8_fast --budget-s "$BUDGET" > "$OUT/bench_gemm.log" 2>&1
echo "bench_gemm rc=$?" >> "$OUT/rc.txt"
python3 bench/bench_moe.py --parts block --budget-s "$BUDGET" > "$OUT/bench_moe.log" 2>&1
echo "bench_moe rc=$?" >> "$OUT/rc.txt"
git status --short bench/results | awk '{print $2}' > /tmp/new.txt
tar czf "$OUT/results.tgz" $(cat /tmp/new.txt) 2>/dev/null
cat "$OUT/rc.txt"; tail -25 "$OUT/bench_gemm.log"; tail -25 "$OUT/bench_moe.log"
