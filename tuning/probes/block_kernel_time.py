"""Block-scaled fp8 at M in {64, 128} (bench_moe.py's twelve DeepGEMM shapes) timed as kernel time: torch.profiler's
CUDA kernel durations, 256 MB zeroed before every call so that L2 holds nothing (DeepGEMM's published figures are
timed that way), every kernel kiln.query offers (checked against the float64 blockwise reference first), and
cuBLASLt blockwise through torch._scaled_mm. bench_moe.py times whole calls with CUDA events; this asks whether that
difference in method explains the distance to DeepGEMM's H800 figures.

Run on the GPU machine against a library holding the block-scaled tune's candidates:
    generator/kiln-gen tune tuning/sm90_fp8_block.yaml --work build-tune/kt --stage build
    KILN_LIBRARY=$PWD/build-tune/kt/build/libkiln.so PYTHONPATH=$PWD/runtime/python \
        python3 tuning/probes/block_kernel_time.py out.json
Prints one line per shape; writes the rows as JSON."""
import sys, statistics, json
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "bench"))
import torch, kiln
import bench_moe as bm
import bench_gemm as bg
from torch.profiler import profile, ProfilerActivity
flush = torch.empty(int(256e6 // 4), dtype=torch.int32, device="cuda")

def kernel_us(fn, iters=20):
    fn(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            flush.zero_()
            fn()
        torch.cuda.synchronize()
    tot = 0.0
    for e in prof.events():
        if str(e.device_type).endswith("CUDA") and "fill" not in e.name.lower() and "zero" not in e.name.lower() \
           and "Memset" not in e.name:
            tot += e.time_range.end - e.time_range.start
    return tot / iters

def main():
    out_rows = []
    for m in (64, 128):
        for (n, k) in bm.BLOCK_NK:
            fl = 2.0 * m * n * k
            s = bm.block_make(m, n, k)
            out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
            ref = kiln.block_scaled_reference(s["a"], s["b"], s["sa"], s["sb"])
            cands = kiln.query(kiln.block_scaled_mm, s["a"], s["b"], s["sa"], s["sb"], out=out, k=40)
            best = None
            for a in cands:
                f = lambda a=a: kiln.block_scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out=out, algo=a)
                rel = bm.rel_l2_and_finite(f(), ref)[0]
                if rel > 1e-2: continue
                us = kernel_us(f)
                if best is None or us < best[0]: best = (us, a.name)
            variant, status, theirs = bm.pick_torch_layout([s], ref)
            cu = kernel_us(lambda: bm.torch_blockwise(s)) if theirs is not None else float("nan")
            dg = bm.DEEPGEMM_H800_TFLOPS[(m, n, k)]
            r = dict(m=m, n=n, k=k, kiln_best_kernel_us=best[0], kiln_best=best[1], kiln_tflops=fl / best[0] / 1e6,
                     cublaslt_kernel_us=cu, cublaslt_tflops=fl / cu / 1e6, deepgemm_h800=dg)
            out_rows.append(r)
            print(f"{m}x{n}x{k}: kiln best {best[0]:6.1f} us {r['kiln_tflops']:5.0f} TF | cuBLASLt {cu:6.1f} us "
                  f"{r['cublaslt_tflops']:5.0f} TF | DeepGEMM H800 {dg:.0f} | kiln/DG {r['kiln_tflops']/dg:.2f}  "
                  f"{best[1][22:75]}", flush=True)
            del s, ref
    json.dump(out_rows, open(sys.argv[1], "w"), indent=1)

if __name__ == "__main__":
    main()
