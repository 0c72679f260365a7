"""The persistent schedule's last wave: TFLOP/s of kiln.attention with V^T packed once, on shapes whose work items
(query blocks x batch x heads) fill the last wave of 132 CTAs partly (the benchmark's shapes) and on neighbours whose
items are a whole number of waves:
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_tail_probe.py
"""
import sys, torch
sys.path.insert(0, "runtime/python"); sys.path.insert(0, "bench")
import kiln
torch.manual_seed(0)
def tflops(b, h, s, d, causal=False, reps=20):
    q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    q8, k8, v8, (qd, kd, vd) = kiln.quantize_qkv(q, k, v)
    pv = kiln.attention_pack_v(v8)
    f = lambda: kiln.attention(q8, k8, pv, q_descale=qd, k_descale=kd, v_descale=vd, causal=causal)
    for _ in range(3): f()
    best = []
    for _ in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(reps): f()
        e1.record(); torch.cuda.synchronize()
        best.append(e0.elapsed_time(e1) / reps)
    ms = sorted(best)[len(best) // 2]
    return 4.0 * b * h * s * s * d * (0.5 if causal else 1.0) / ms / 1e9
for (b, h, s, d, bm) in [(4, 32, 4096, 128, 128), (1, 132, 4096, 128, 128), (4, 33, 4096, 128, 128),
                         (2, 8, 8192, 256, 128), (1, 33, 8192, 256, 128), (2, 8, 8448, 256, 128),
                         (2, 16, 8192, 64, 192), (1, 132, 8192, 64, 192), (2, 16, 6336, 64, 192)]:
    items = b * h * -(-s // bm)
    print("%-16s items %5d waves %6.2f  %7.1f TFLOP/s" % (f"{b}x{h}x{s}x{d}", items, items / 132, tflops(b, h, s, d)),
          flush=True)
