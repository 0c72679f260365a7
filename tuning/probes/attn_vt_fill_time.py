"""TFLOP/s of kiln.attention with v_packed 2 (pack_v=True: the kernel packs V itself where the kernel and the problem
allow it, kiln_attn_run's rules), with the separate pass, and with V packed once, timed in alternating blocks
(bench_gemm.time_pair):
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_vt_fill_time.py <label>
"""
import sys, torch
sys.path.insert(0, "runtime/python"); sys.path.insert(0, "bench")
import kiln
from bench_gemm import time_pair
SHAPES = [(4, 32, 4096, 128, False), (4, 32, 4096, 128, True), (1, 16, 16384, 128, False), (1, 16, 16384, 128, True),
          (8, 16, 2048, 128, True), (2, 8, 8192, 256, False), (2, 16, 8192, 64, False)]


def time_shapes(label, shapes):
    """One line a shape (b, h, s, d, causal): TFLOP/s fused, pass + kernel, packed once."""
    torch.manual_seed(0)
    for (b, h, s, d, causal) in shapes:
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        q8, k8, v8, (qd, kd, vd) = kiln.quantize_qkv(q, k, v)
        kw = dict(q_descale=qd, k_descale=kd, v_descale=vd, causal=causal)
        fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
        pv = kiln.attention_pack_v(v8)
        fa = lambda _: kiln.attention(q8, k8, v8, pack_v=True, **kw)
        fb = lambda _: kiln.attention(q8, k8, kiln.attention_pack_v(v8), **kw)
        fc = lambda _: kiln.attention(q8, k8, pv, **kw)
        same = torch.equal(fa(0), fc(0))
        ta, tb = time_pair(fa, fb, [None], 3, 40, 2.0)
        tc, _ = time_pair(fc, fb, [None], 3, 40, 2.0)
        r = [fl / t["median_ms"] / 1e9 for t in (ta, tb, tc)]
        print("%s %-22s fused %7.1f  pass+kernel %7.1f  packed-once %7.1f  fused/pass %.3f same %s" % (label, f"{b}x{h}x{s}x{d}{' c' if causal else ''}", *r, r[0] / r[1], same), flush=True)


if __name__ == "__main__":
    time_shapes(sys.argv[1], SHAPES)
