#!/usr/bin/env bash
# VPRE (V^T packed in f16 by the caller) with varlen batches: at 0d7bf5f the harness packed a varlen V^T at the
# cumulative key offsets and the kernels stopped with "an illegal instruction" at the V^T load; since then V^T is packed
# per sequence (kiln_attn_wgmma.h, C::VPRE). Checks every VPRE kernel on the harness's cases (varlen among them), then
# one varlen case under compute-sanitizer memcheck (which names the faulting function and line). ~2 minutes.
# Usage (repo root on the GPU machine): OUT=<dir> bash tuning/probes/attn_vpre_varlen_probe.sh
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
nvcc -O3 -std=c++17 -lineinfo -gencode arch=compute_90a,code=sm_90a -I device tests/gpu/attn/attn_standalone.cu -lcuda \
    -o /tmp/attn_vpre >"$OUT/build.log" 2>&1 || { echo "build failed"; tail -20 "$OUT/build.log"; exit 1; }
timeout 150 /tmp/attn_vpre --filter _vpre_ --no-bench >"$OUT/checks.log" 2>&1
echo "checks rc=$?: $(grep -E '^==== summary' "$OUT/checks.log")"
grep -E "^ok" "$OUT/checks.log" | awk '{print $2}' | sort | uniq -c
grep -E "^FAIL|illegal|error" "$OUT/checks.log" | head -8
k=attn_wg_d256_n64_s1_pv16_vpre_e4m3_bf16
timeout 90 compute-sanitizer --tool memcheck --show-backtrace device /tmp/attn_vpre --filter "$k: varlen" \
    --no-bench >"$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log")"; grep -E "Illegal|illegal|at 0x| in .*\.h:" "$OUT/memcheck.log" | head -6
