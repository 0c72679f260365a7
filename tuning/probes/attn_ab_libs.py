"""A/B of two attention libraries, one process each (run it alternately with KILN_LIBRARY set to each): TFLOP/s of
the kernel alone (V packed once) and of kiln.attention's default, median of five timed batches of ~0.15 s (at most
2,000 calls); saves the kernel-only outputs to $OUT/outs_<tag>.pt for a bitwise comparison between the libraries.
    KILN_LIBRARY=<libkiln.so> OUT=<dir> python3 tuning/probes/attn_ab_libs.py <tag>"""
import sys, torch, time, os
sys.path.insert(0, "runtime/python")
import kiln
tag = sys.argv[1]
res = {}
outs = {}
for (b, h, s, d, causal) in [(4, 32, 4096, 128, False), (4, 32, 4096, 128, True), (1, 16, 16384, 128, False),
                              (2, 8, 8192, 256, False), (2, 16, 8192, 64, False), (8, 16, 2048, 128, True), (1, 8, 512, 64, False)]:
    torch.manual_seed(1234)
    q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    q8, k8, v8, (qd, kd, vd) = kiln.quantize_qkv(q, k, v)
    kw = dict(q_descale=qd, k_descale=kd, v_descale=vd, causal=causal)
    fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    pv = kiln.attention_pack_v(v8)
    fk = lambda: kiln.attention(q8, k8, pv, **kw)
    fd = lambda: kiln.attention(q8, k8, v8, **kw)
    key = f"{b}x{h}x{s}x{d}{'c' if causal else ''}"
    outs[key] = fk().cpu()
    r = []
    for f in (fk, fd):
        for _ in range(5): f()
        ts = []
        for rep in range(5):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            n = min(2000, max(3, int(0.15 / max(fl / 900e12, 1e-6))))
            e0.record()
            for _ in range(n): f()
            e1.record(); torch.cuda.synchronize()
            ts.append(e0.elapsed_time(e1) / n)
        ts.sort(); r.append(fl / ts[2] / 1e9)
    res[key] = r
    print(f"{tag} {key:16s} kernel {r[0]:7.1f}  default {r[1]:7.1f}", flush=True)
torch.save(outs, os.path.join(os.environ["OUT"], f"outs_{tag}.pt"))
