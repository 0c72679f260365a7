"""Does the company a side is timed in move its time? kiln.attention and cuDNN SDPA (bf16) on the given shapes, timed
three ways in one process: as a pair in alternating blocks (bench_gemm.time_pair, as attn_sweep.py), in bench_attn's
four-way rotation (kiln, kiln with V packed once, cuDNN, flash), and one side at a time for 400 calls each (each after
its own warm-up). Prints TFLOP/s of kiln and cuDNN and their ratio per way.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_timing_check.py [BxHxSxD[c] ...]"""
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_attn import sdpa  # noqa: E402
from bench_gemm import time_fn, time_pair, time_rotation  # noqa: E402

labels = sys.argv[1:] or ["2x8x8192x256", "1x16x8192x256", "4x32x4096x128"]
print(torch.cuda.get_device_name(), flush=True)
for label in labels:
    causal = label.endswith("c")
    b, h, s, d = (int(x) for x in label.rstrip("c").split("x"))
    fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    torch.manual_seed(s + d)
    x = [torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    qf, kf, vf, (dq, dk, dv) = kiln.quantize_qkv(*x)
    out = torch.empty(b, s, h, d, dtype=torch.bfloat16, device="cuda")
    packed = kiln.attention_pack_v(vf)
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in x)
    kw = dict(q_descale=dq, k_descale=dk, v_descale=dv, causal=causal, out=out)
    fk = lambda _: kiln.attention(qf, kf, vf, **kw)  # noqa: E731
    fp = lambda _: kiln.attention(qf, kf, packed, **kw)  # noqa: E731
    fc = lambda _: sdpa(qt, kt, vt, causal, "cudnn")  # noqa: E731
    ff = lambda _: sdpa(qt, kt, vt, causal, "flash")  # noqa: E731
    tf = lambda t: fl / t["median_ms"] / 1e9  # noqa: E731
    res = {}
    k, c = time_pair(fk, fc, [None], 5, 400, 2.0)
    res["pair"] = (tf(k), tf(c))
    k, _, c, _ = time_rotation([fk, fp, fc, ff], [None], 5, 400, 4.0)
    res["rotation4"] = (tf(k), tf(c))
    k, c = time_fn(fk, [None], 20, 400, 1.0), time_fn(fc, [None], 20, 400, 1.0)
    res["one_at_a_time"] = (tf(k), tf(c))
    print(f"{label:16s} " + "  ".join(f"{w}: kiln {a:6.0f} cudnn {bb:6.0f} ratio {a / bb:.3f}"
                                     for w, (a, bb) in res.items()), flush=True)
