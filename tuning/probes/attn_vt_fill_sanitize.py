"""Small problems through kiln.attention with the kernel packing V itself (v_packed 2, where the kernel and the
problem allow it), for compute-sanitizer (memcheck, racecheck) on the GPU machine; equal to the separate pass or exits non-zero:
    compute-sanitizer --tool racecheck python3 tuning/probes/attn_vt_fill_sanitize.py
"""
import sys, torch
sys.path.insert(0, "runtime/python")
import kiln
torch.manual_seed(1)
bad = 0
for (b, sq, sk, hq, hk, d, causal) in [(1, 129, 129, 2, 1, 128, False), (2, 200, 333, 4, 2, 128, True),
                                       (1, 300, 300, 2, 2, 64, True), (1, 65, 1000, 2, 1, 256, False)]:
    mk = lambda s, h: torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn)
    q, k, v = mk(sq, hq), mk(sk, hk), mk(sk, hk)
    fused = kiln.attention(q, k, v, causal=causal, pack_v=True)
    sep = kiln.attention(q, k, kiln.attention_pack_v(v), causal=causal)
    torch.cuda.synchronize()
    same = torch.equal(fused, sep)
    bad += not same
    print(f"{b}x{hq}/{hk}x{sq}/{sk}x{d} causal {int(causal)}: {'same' if same else 'DIFF'}", flush=True)
cu_q = torch.tensor([0, 100, 357], dtype=torch.int32, device="cuda")
cu_k = torch.tensor([0, 64, 500], dtype=torch.int32, device="cuda")
q = torch.randn(357, 4, 128, device="cuda").to(torch.float8_e4m3fn)
k, v = (torch.randn(500, 2, 128, device="cuda").to(torch.float8_e4m3fn) for _ in range(2))
fused = kiln.attention(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=257, max_seqlen_k=436,
                       causal=True, pack_v=True)
sep = kiln.attention(q, k, kiln.attention_pack_v(v, cu_seqlens_k=cu_k, max_seqlen_k=436), cu_seqlens_q=cu_q,
                     cu_seqlens_k=cu_k, max_seqlen_q=257, max_seqlen_k=436, causal=True)
torch.cuda.synchronize()
bad += not torch.equal(fused, sep)
print(f"varlen: {'same' if torch.equal(fused, sep) else 'DIFF'}; {bad} mismatches", flush=True)
sys.exit(1 if bad else 0)
