"""A/B of two attention libraries, one process each (run it alternately with KILN_LIBRARY set to each): TFLOP/s of
the kernel alone (V packed once) and of kiln.attention's default (bench_gemm.time_fn: the median of up to 200 calls,
0.75 s a side; tuning/results/probe_attn_desc_ab_h200.txt came from 5cf1a23's version, medians of five batches of
~0.15 s); saves the kernel-only outputs to $OUT/outs_<tag>.pt for a bitwise comparison between the libraries.
    KILN_LIBRARY=<libkiln.so> OUT=<dir> python3 tuning/probes/attn_ab_libs.py <tag>"""
import sys, torch, os
sys.path.insert(0, "runtime/python"); sys.path.insert(0, "bench")
import kiln
from bench_gemm import time_fn
tag = sys.argv[1]
outs = {}
for (b, h, s, d, causal) in [(4, 32, 4096, 128, False), (4, 32, 4096, 128, True), (1, 16, 16384, 128, False),
                              (2, 8, 8192, 256, False), (2, 16, 8192, 64, False), (8, 16, 2048, 128, True), (1, 8, 512, 64, False)]:
    torch.manual_seed(1234)
    q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    q8, k8, v8, (qd, kd, vd) = kiln.quantize_qkv(q, k, v)
    kw = dict(q_descale=qd, k_descale=kd, v_descale=vd, causal=causal)
    fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    pv = kiln.attention_pack_v(v8)
    fk = lambda _: kiln.attention(q8, k8, pv, **kw)
    fd = lambda _: kiln.attention(q8, k8, v8, **kw)
    key = f"{b}x{h}x{s}x{d}{'c' if causal else ''}"
    outs[key] = fk(None).cpu()
    r = [fl / time_fn(f, [None], 5, 200, 0.75)["median_ms"] / 1e9 for f in (fk, fd)]
    print(f"{tag} {key:16s} kernel {r[0]:7.1f}  default {r[1]:7.1f}", flush=True)
torch.save(outs, os.path.join(os.environ["OUT"], f"outs_{tag}.pt"))
