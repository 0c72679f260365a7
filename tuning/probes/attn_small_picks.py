"""Short attention problems: kiln.attention's default pick against every sm90 kernel of the head dim forced by name
(the packed-V ones with kiln.attention's own pass over V, as a caller gets them) and cuDNN SDPA (bf16), TFLOP/s, one
process. Says whether the selection's order (larger tiles first unless they leave SMs idle; attn.c rank_key) picks
the fastest kernel where the problems are small or causal.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_small_picks.py [label ...]
(labels BxHxSxD, a trailing c for causal, e.g. 2x16x1024x64c: only those shapes, the list's or any other)"""
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
import kiln  # noqa: E402
from bench_attn import sdpa  # noqa: E402  (torch SDPA with one backend)
from bench_gemm import time_fn  # noqa: E402

SHAPES = [(1, 8, 512, 64, False), (1, 8, 512, 64, True), (4, 8, 512, 64, True), (4, 8, 512, 64, False),
          (1, 16, 512, 64, True), (8, 8, 512, 64, True), (1, 8, 384, 64, True), (2, 8, 512, 128, True),
          (2, 8, 512, 128, False), (4, 16, 1024, 64, True), (16, 16, 1024, 128, False), (16, 16, 1024, 128, True),
          (8, 16, 2048, 128, True), (2, 24, 3000, 128, True), (8, 16, 2048, 64, False),
          # the wave estimate's boundaries (attn.c attn_estimate): 64 and 68 128-row workgroups; bm 192 against 128
          (1, 4, 2048, 128, False), (1, 4, 2176, 128, False), (2, 16, 1024, 64, False), (2, 16, 1024, 64, True),
          (1, 16, 2048, 64, False), (1, 32, 4096, 64, False),
          # bench_attn's non-causal head dim 128 and 256 rows (is a kernel other than the pick faster there?)
          (4, 32, 4096, 128, False), (1, 16, 16384, 128, False), (2, 8, 8192, 256, False)]


def names(d):
    with open("generated/attention.c") as f:
        txt = f.read()
    import re
    found = sorted(set(re.findall(r'"(Attn_F8B_D%d_[A-Z0-9_]*_SM90)"' % d, txt)))
    return [n for n in found if "PV8" not in n]  # f16 P: the recipe the default takes


def label_of(b, h, s, d, causal):
    return f"{b}x{h}x{s}x{d}{'c' if causal else ''}"


WANT = sys.argv[1:]
KNOWN = {label_of(*shape) for shape in SHAPES}
RUN = [shape for shape in SHAPES if not WANT or label_of(*shape) in WANT]
RUN += [tuple(int(x) for x in w.rstrip("c").split("x")) + (w.endswith("c"),) for w in WANT if w not in KNOWN]
for (b, h, s, d, causal) in RUN:
    torch.manual_seed(s + d + b)
    x = [torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    q8, k8, v8, (dq, dk, dv) = kiln.quantize_qkv(*x)
    out = torch.empty(b, s, h, d, device="cuda", dtype=torch.bfloat16)
    kw = dict(q_descale=dq, k_descale=dk, v_descale=dv, causal=causal, out=out)
    fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    tf = lambda f: fl / time_fn(f, [None], 5, 300, 0.3)["median_ms"] / 1e9  # noqa: E731
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in x)
    label = f"{b}x{h}x{s}x{d}{'c' if causal else ''}"
    res = [("cudnn", tf(lambda _: sdpa(qt, kt, vt, causal, "cudnn"))),
           ("default", tf(lambda _: kiln.attention(q8, k8, v8, **kw)))]
    for n in names(d):
        try:
            a = kiln.algo_by_name(n)
            vp = "_VP1_" in n
            res.append((n.replace("Attn_F8B_", "").replace("_WGMMA_SM90", "").replace("_SM90", ""),
                        tf(lambda _: kiln.attention(q8, k8, v8, algo=a, pack_v=vp, **kw))))
        except Exception:  # noqa: BLE001 - a kernel that does not take the problem
            res.append((n[9:40], float("nan")))
    best = max((r for r in res[2:] if r[1] == r[1]), key=lambda r: r[1])
    print(f"{label:16s} cudnn {res[0][1]:6.1f} default {res[1][1]:6.1f} best {best[1]:6.1f} {best[0]}", flush=True)
    for n, t in res[2:]:
        print(f"    {n:60s} {t:7.1f}", flush=True)
