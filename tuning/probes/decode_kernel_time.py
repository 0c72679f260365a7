"""Decode calls (kiln.mixed_mm, M = 1) timed both ways: kernel time as block_kernel_time.py takes it (torch.profiler,
256 MB zeroed before each call) and bench_gemm.time_fn's CUDA events around each call, for the top 6 kernels
kiln.query offers and for cuBLAS f16 (F.linear), plus a one-element add for what an empty call costs each way.

    KILN_LIBRARY=<a library with mixed decode kernels> PYTHONPATH=$PWD/runtime/python \
        python3 tuning/probes/decode_kernel_time.py out.json"""
import sys, json
_here = __import__("pathlib").Path(__file__).resolve().parent
sys.path.insert(0, str(_here.parents[1] / "bench")); sys.path.insert(0, str(_here))
import torch, kiln
import bench_gemm as bg
import pdl_chain as pc
from block_kernel_time import kernel_us
rows = []
x = torch.zeros(1, device="cuda")
e_us = bg.time_fn(lambda s: x.add_(1), [None], 5, 200, 1.0)["median_ms"] * 1e3
k_us = kernel_us(lambda: x.add_(1))
print(f"tiny add kernel: event {e_us:.2f} us, kernel {k_us:.2f} us", flush=True)
for m, n, k in [(1, 4096, 4096), (1, 1024, 8192), (1, 6144, 4096), (1, 8192, 8192), (1, 4096, 14336)]:
    sets = pc.decode_sets(m, n, k, min(16, bg.n_sets_for(n * k)))
    out = torch.empty(m, n, dtype=torch.float16, device="cuda")
    s0 = sets[0]
    def linear(s):
        return torch.nn.functional.linear(s["x"], s["w16"])
    cb_k = kernel_us(lambda: linear(s0))
    cb_e = bg.time_fn(linear, sets, 5, 40, 1.0)["median_ms"] * 1e3
    print(f"{m}x{n}x{k}: cuBLAS f16 kernel {cb_k:.1f} event {cb_e:.1f}", flush=True)
    for a in kiln.query(kiln.mixed_mm, s0["x"], s0["packed"], scale_b=s0["scale"], bias=s0["bias"], out=out, k=6):
        f = lambda s, a=a: kiln.mixed_mm(s["x"], s["packed"], scale_b=s["scale"], bias=s["bias"], out=out, algo=a)
        kk = kernel_us(lambda: f(s0)); ee = bg.time_fn(f, sets, 5, 40, 1.0)["median_ms"] * 1e3
        rows.append(dict(m=m, n=n, k=k, name=a.name, kernel_us=kk, event_us=ee, cublas_kernel_us=cb_k,
                         cublas_event_us=cb_e))
        print(f"   kernel {kk:6.1f} event {ee:6.1f}  {a.name[22:80]}", flush=True)
    del sets
json.dump(rows, open(sys.argv[1], "w"), indent=1)
