set -uo pipefail
export PATH="/usr/local/cuda/bin:$PATH"
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I device tests/gpu/attn/attn_standalone.cu -lcuda -o /tmp/attn_p >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
for k in attn_wg_d64_pv16_e4m3_bf16 attn_wg_d64_s2_pv16_e4m3_bf16 attn_wg_d64_s1_pv16_fe1_e4m3_bf16 attn_wg_d64_s1_st3_pv16_e4m3_bf16 attn_wg_m64_d64_s1_pv16_e4m3_bf16 attn_wg_m64_d64_s1_pv16_fe1_e4m3_bf16 attn_wg_d128_s2_pv16_e4m3_bf16 attn_wg_d128_s1_pv16_fe1_e4m3_bf16 attn_wg_m64_d128_s1_pv16_fe1_e4m3_bf16; do
  timeout 60 /tmp/attn_p --filter "$k: " --no-bench >>"$OUT/checks.log" 2>&1; echo "$k rc=$? ok=$(grep -c "^ok   $k:" $OUT/checks.log)"
done
grep -E "^(FAIL|bad)" "$OUT/checks.log" | head
K=wg_d64_s1_ps_fe1_e4m3,wg_m64_d64_s1_ps_fe1,d64_pv16,d64_s2_pv16,d64_s1_pv16,d64_s1_st3_pv16,m64_d64_s1_pv16,attn_wg_d128_ps_e4m3_bf16,d128_s1_pv16,d128_s2_pv16,m64_d128_ps_fe1,m64_d128_s1_pv16
S=2x16x8192x64,1x8x512x64,4x16x2048x64,1x16x16384x64,4x32x4096x128,1x16x16384x128,2x4x2048x128,1x8x512x128
for round in 1 2; do
  echo "== round $round"
  /tmp/attn_p --filter none_at_all --bench-filter "$K" --shapes "$S" 2>&1 | awk '/^BxHxSxD/ {on = 1; next} on && NF >= 5 && $1 ~ /x/ {print $1, $2, $3, $5} /^fastest/ {on = 0}'
done | tee "$OUT/times.txt"
