"""What a call of kiln.attention costs the host, and what a plain timing loop then sees, beside SDPA (cuDNN, flash).

Per side and shape, microseconds a call:
  host  CPU time of a call while the GPU is kept busy by a queued sleep (nothing waits on the device: the Python
        wrapper, the library's checks and selection, the launch);
  loop  CUDA events around N back-to-back calls with nothing queued ahead, divided by N (what a plain benchmark loop
        sees: the larger of the host's and the GPU's time a call);
  gpu   bench_gemm.time_fn (events around each call, queued behind a GPU sleep: the kernels alone);
and, per shape, the library's selection alone: kiln_attn_query (top 1) through ctypes, V as given and packed.
SDPA is called inside one sdpa_kernel context (as a model would), on bf16 (batch, heads, seq, dim) views.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_host_overhead.py [BxHxSxD[c] ...]
(KILN_PYTHON_DIR: another copy of runtime/python to import kiln from, e.g. an older commit's, for an A/B)"""
import os
import sys
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.environ.get("KILN_PYTHON_DIR", "runtime/python"))
sys.path.insert(0, "bench")
sys.path.insert(0, "tuning/probes")
import kiln  # noqa: E402
from host_timing import host_us, loop_us  # noqa: E402
from bench_gemm import time_fn  # noqa: E402

N = 200
labels = sys.argv[1:] or ["1x8x512x64", "4x8x512x64c", "1x16x512x64", "2x8x512x128", "1x8x384x64", "4x32x4096x128"]
print(torch.cuda.get_device_name(), flush=True)




def query_us(b, h, s, d, causal, v_packed):
    import ctypes
    from kiln import DType, ScaleMode, kiln_algo
    from kiln._capi import kiln_attn_problem
    lib = kiln.load_library()
    p = kiln_attn_problem()
    lib.kiln_attn_problem_init(ctypes.byref(p), DType.E4M3, DType.BF16, b, h, h, s, s, d)
    p.causal, p.descale, p.v_packed = int(causal), ScaleMode.TENSOR, v_packed
    for t in "qkvo":
        setattr(p, f"{t}_stride_b", s * h * d)
        setattr(p, f"{t}_stride_s", h * d)
        setattr(p, f"{t}_stride_h", d)
    hd, algo, n = kiln.handle(0), kiln_algo(), ctypes.c_int(0)
    t = time.perf_counter()
    for _ in range(1000):
        lib.kiln_attn_query(hd, ctypes.byref(p), ctypes.byref(algo), 1, ctypes.byref(n))
    return (time.perf_counter() - t) * 1e3


for label in labels:
    causal = label.endswith("c")
    bb, h, s, d = (int(x) for x in label.rstrip("c").split("x"))
    torch.manual_seed(s + d)
    x = [torch.randn(bb, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    qf, kf, vf, (dq, dk, dv) = kiln.quantize_qkv(*x)
    packed = kiln.attention_pack_v(vf)
    out = torch.empty(bb, s, h, d, dtype=torch.bfloat16, device="cuda")
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in x)
    kw = dict(q_descale=dq, k_descale=dk, v_descale=dv, causal=causal)
    sides = {
        "kiln": lambda: kiln.attention(qf, kf, vf, **kw),
        "kiln_out": lambda: kiln.attention(qf, kf, vf, out=out, **kw),
        "kiln_vt": lambda: kiln.attention(qf, kf, packed, **kw),
    }
    rows = []
    for name, fn in sides.items():
        rows.append((name, host_us(fn, N), loop_us(fn, N),
                     time_fn(lambda _: fn(), [None], 5, 200, 0.5)["median_ms"] * 1e3))
    for be_name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        with sdpa_kernel(be):
            fn = lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)  # noqa: E731
            rows.append((be_name, host_us(fn, N), loop_us(fn, N),
                         time_fn(lambda _: fn(), [None], 5, 200, 0.5)["median_ms"] * 1e3))
    print(f"{label}: " + "  ".join(f"{n} host {hu:6.1f} loop {lu:7.1f} gpu {gu:7.1f}" for n, hu, lu, gu in rows)
          + f"  query {query_us(bb, h, s, d, causal, 0):.1f} / packed {query_us(bb, h, s, d, causal, 2):.1f}",
          flush=True)
