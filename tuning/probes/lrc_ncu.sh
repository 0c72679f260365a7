#!/bin/bash
# Device, one call (~3 minutes): does the promoted fp8 kernel lose the L2 request coalescing that its fast twin gets?
# ncu (--clock-control none, one launch each) of the same 128x256 tile promoted (pr 1) and fast (pr 0), the 128x192
# pr 1 tile at pgr 2 and 3, at 8192^3, and of cuBLASLt's torch._scaled_mm there: time, tensor pipe, L2 sectors read, the L2 request
# coalescer's (lrc) sectors. First the lrc metric names this ncu knows (lrc_metrics.txt).
#   OUT=... bash tuning/probes/lrc_ncu.sh      (main's full library build-probe/full/libkiln.so.xz, carried)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; L=/tmp/lrc; mkdir -p $L
python3 tuning/probes/unxz.py build-probe/full/libkiln.so.xz $L/libkiln.so.0 || exit 1
ln -sf libkiln.so.0 $L/libkiln.so
ncu --query-metrics --chip gh100 > $L/all_metrics.txt 2>&1
grep -iE '^(lrc|lts__t_(sectors|requests)_srcunit_tex)' $L/all_metrics.txt > "$OUT/lrc_metrics.txt"
echo "lrc metric bases: $(grep -ic '^lrc' "$OUT/lrc_metrics.txt")"
LRC=lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
LRC=$LRC,lrc__lts2lrc_sectors_op_read.sum,lrc__xbar2gpc_sectors_op_read.sum
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
m=$m,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
m=$m,lts__t_sectors_op_read.sum,lts__t_requests_op_read.sum,lts__t_sector_op_read_hit_rate.pct
m=$m,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size,launch__cluster_dim_x
[ -n "$LRC" ] && m=$m,$LRC
echo "metrics: $m"
B=build-probe/nn_pack/kiln_bench
T=_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0
for job in "MT128x256x128_WG2x1_MI64x256x32_PGR2${T}_PK1_PR1_MC0 -" \
           "MT128x256x128_WG2x1_MI64x256x32_PGR2${T}_PK1_PR0_MC0 --fast-accum" \
           "MT128x192x128_WG2x1_MI64x192x32_PGR2${T}_PK1_PR1_MC0 -" \
           "MT128x192x128_WG2x1_MI64x192x32_PGR3${T}_PK1_PR1_MC0 -"; do
  set -- $job; f=$2; [ "$f" = - ] && f=
  LD_LIBRARY_PATH=$L timeout 120 ncu --clock-control none -k regex:Cijk_ --launch-skip 2 --launch-count 1 --metrics "$m" \
      $B --a e4m3 --b e4m3 --d bf16 --layout TN $f --sizes 8192x8192x8192 --solutions Cijk_Alik_Bljk_F8F8B_${1}_WGMMA_SM90 \
      --iters 3 --warmup 1 --quiet > "$L/k_$1.txt" 2>&1
  echo "== kiln ${1:0:40} ${1: -12} $f rc=$?"
  grep -E "^ +(gpu__|sm__|lts__|dram__|launch__|lrc__)" "$L/k_$1.txt" | awk '{print $1, $(NF)}'
done
cat > $L/cub.py <<'PY'
import torch
a = torch.randn(8192, 8192, device="cuda").to(torch.float8_e4m3fn)
b = torch.randn(8192, 8192, device="cuda").to(torch.float8_e4m3fn).t()
s = torch.ones((), device="cuda")
for _ in range(4):
    torch._scaled_mm(a, b, scale_a=s, scale_b=s, out_dtype=torch.bfloat16)
torch.cuda.synchronize()
PY
timeout 150 ncu --clock-control none -k "regex:nvjet|sm90|gemm" --launch-skip 2 --launch-count 1 --metrics "$m" \
    python3 $L/cub.py > $L/cublas.txt 2>&1
echo "== cuBLASLt rc=$?: $(grep -m1 -oE '(nvjet|sm90)[A-Za-z0-9_]*' $L/cublas.txt)"
grep -E "^ +(gpu__|sm__|lts__|dram__|launch__|lrc__)" $L/cublas.txt | awk '{print $1, $(NF)}'
(cd $L && tar czf "$OUT/ncu_raw.tgz" k_*.txt cublas.txt)
