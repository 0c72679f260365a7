"""Where a cached kiln.attention call's host time goes (kiln/_attention.py's plan cache), beside SDPA cuDNN's call.
Microseconds a call (CPU time, the GPU kept busy by a queued sleep so that nothing waits on the device):
  call     kiln.attention, cached plan                  key      _plan_key alone
  empty    torch.empty of the output                    run_c    kiln_attn_run through the bound ctypes function alone
  args     the raw kiln_attn_args made                  cudnn    SDPA (cuDNN backend) on bf16
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_host_parts.py [BxHxSxD[c] ...]"""
import ctypes
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "tuning/probes")
import kiln  # noqa: E402
from host_timing import host_us  # noqa: E402
from kiln import _attention, _fastpath  # noqa: E402

N = 200  # (1000 calls of several launches each filled the launch queue: the call then waited on the GPU)
labels = sys.argv[1:] or ["1x8x512x64", "4x8x512x64c", "4x32x4096x128"]
print(torch.cuda.get_device_name(), flush=True)



for label in labels:
    causal = label.endswith("c")
    b, h, s, d = (int(x) for x in label.rstrip("c").split("x"))
    x = [torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    qf, kf, vf, (dq, dk, dv) = kiln.quantize_qkv(*x)
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in x)
    kw = dict(q_descale=dq, k_descale=dk, v_descale=dv, causal=causal)
    kiln.attention(qf, kf, vf, **kw)
    key = _attention._plan_key(qf, kf, vf, dq, dk, dv, causal, None, None, None, None, None, None, False, None, None,
                               False, None)
    pp = _fastpath.plans.get(key)
    assert pp is not None, "no plan cached"
    out = torch.empty(pp.out_shape, dtype=pp.out_dtype, device="cuda")
    vt_work = torch.empty(max(pp.vt_bytes, 16), dtype=torch.uint8, device="cuda")
    split = torch.empty(max(pp.split_bytes, 16), dtype=torch.uint8, device="cuda")

    def args():
        return _attention._RawAttnArgs(qf.data_ptr(), kf.data_ptr(), vf.data_ptr(), out.data_ptr(), None, None, None,
                                       dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), pp.scale,
                                       vt_work.data_ptr() if pp.vt_bytes else None, pp.vt_bytes,
                                       split.data_ptr() if pp.split_bytes else None, pp.split_bytes)
    a = args()
    run = _attention._attn_run or _attention._bind_attn_run()
    stream = torch.cuda.current_stream().cuda_stream
    parts = {
        "call": lambda: kiln.attention(qf, kf, vf, **kw),
        "key": lambda: _attention._plan_key(qf, kf, vf, dq, dk, dv, causal, None, None, None, None, None, None, False,
                                            None, None, False, None),
        "empty": lambda: torch.empty(pp.out_shape, dtype=pp.out_dtype, device="cuda"),
        "args": args,
        "run_c": lambda: run(pp.handle, pp.problem_addr, pp.algo_addr, ctypes.byref(a), stream),
    }
    res = {n: host_us(f, N) for n, f in parts.items()}
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        res["cudnn"] = host_us(lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal),
                               N)
    print(f"{label:14s} " + "  ".join(f"{n} {v:6.1f}" for n, v in res.items())
          + f"  (vt_work {pp.vt_bytes}, split_work {pp.split_bytes})", flush=True)
