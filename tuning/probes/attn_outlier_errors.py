"""Relative L2 error of kiln.attention on inputs with outliers (0.1 % of Q's, K's and V's elements times 50, as
bench/bench_attn.py and tests/gpu/test_attention.py make them), over several seeds, with V packed (the packed-V
kernels) and without (the transposer kernels), against the float64 attention of the same fp8 inputs. Separates what
an entry's schedule does to the error from what the inputs do (one bench run draws one input per shape).
Usage (GPU machine, library built): KILN_LIBRARY=build/libkiln.so python3 tuning/probes/attn_outlier_errors.py"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
from bench_attn import kiln, rel_l2, with_outliers  # noqa: E402  (bench_attn puts runtime/python on the path)

ROWS, HEADS, SEEDS = 256, 4, 8


for b, h, s, d, causal in ((4, 32, 4096, 128, False), (4, 32, 4096, 128, True), (2, 16, 8192, 64, False),
                           (2, 8, 8192, 256, False)):
    errs = {True: [], False: []}
    for seed in range(SEEDS):
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)
        x = with_outliers([torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16, generator=gen)
                           for _ in range(3)], gen)
        q, k, v, (dq, dk, dv) = kiln.quantize_qkv(*x)
        ref, _ = kiln.attention_reference(q[:1, -ROWS:, :HEADS], k[:1, :, :HEADS], v[:1, :, :HEADS], q_descale=dq,
                                          k_descale=dk, v_descale=dv, causal=causal)
        for pack in (True, False):
            o = kiln.attention(q, k, v, q_descale=dq, k_descale=dk, v_descale=dv, causal=causal, pack_v=pack)
            errs[pack].append(rel_l2(o[:1, -ROWS:, :HEADS], ref))
    label = f"{b}x{h}x{s}x{d}{' causal' if causal else ''}"
    for pack in (True, False):
        e = sorted(errs[pack])
        print(f"{label:22s} {'packed V' if pack else 'transposer':10s} median {e[len(e) // 2]:.2e} max {e[-1]:.2e} "
              f"all {' '.join(f'{x:.1e}' for x in errs[pack])}", flush=True)
