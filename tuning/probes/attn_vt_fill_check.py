"""kiln.attention with v_packed 2 (V^T packed by the kernel itself where the kernel and the problem allow it, else the
pass into its work buffer) against the separate pass: bitwise-equal outputs on odd shapes (GQA, causal sq != sk,
varlen); timing is attn_vt_fill_time.py's. On the GPU machine:
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_vt_fill_check.py
"""
import sys, torch
sys.path.insert(0, "runtime/python")
import kiln
torch.manual_seed(0)
dev = "cuda"
def mk(b, sq, sk, hq, hk, d):
    q = torch.randn(b, sq, hq, d, device=dev, dtype=torch.bfloat16)
    k = torch.randn(b, sk, hk, d, device=dev, dtype=torch.bfloat16)
    v = torch.randn(b, sk, hk, d, device=dev, dtype=torch.bfloat16)
    q8, k8, v8, ds = kiln.quantize_qkv(q, k, v)
    return (q8, k8, v8), ds
bad = 0
cases = [(1, 129, 129, 2, 1, 128, False), (2, 1000, 777, 8, 2, 128, True), (3, 64, 4100, 4, 4, 64, False),
         (2, 300, 300, 6, 3, 256, True), (1, 1, 1, 1, 1, 128, False), (2, 513, 2049, 8, 1, 64, True),
         (4, 2048, 2048, 16, 16, 128, False), (1, 4096, 4096, 8, 8, 256, True), (2, 333, 65, 2, 2, 256, False),
         (2, 2048, 2048, 32, 32, 64, False), (1, 8192, 8192, 4, 4, 128, True)]
for (b, sq, sk, hq, hk, d, causal) in cases:
    (q8, k8, v8), (qd, kd, vd) = mk(b, sq, sk, hq, hk, d)
    kw = dict(q_descale=qd, k_descale=kd, v_descale=vd, causal=causal)
    for rep in range(3):
        fused = kiln.attention(q8, k8, v8, pack_v=True, **kw)
        sep = kiln.attention(q8, k8, kiln.attention_pack_v(v8), **kw)
        torch.cuda.synchronize()
        same = torch.equal(fused, sep)
        if not same: bad += 1
        print(f"case b{b} sq{sq} sk{sk} h{hq}/{hk} d{d} causal{int(causal)} rep {rep}: {'same' if same else 'DIFF max %.3g' % (fused.float()-sep.float()).abs().max().item()}", flush=True)
# varlen
cu_q = torch.tensor([0, 100, 357, 1000], dtype=torch.int32, device=dev); cu_k = torch.tensor([0, 64, 700, 901], dtype=torch.int32, device=dev)
for d in (64, 128, 256):
    q = torch.randn(1000, 4, d, device=dev, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
    k = torch.randn(901, 2, d, device=dev, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
    v = torch.randn(901, 2, d, device=dev, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
    for causal in (False, True):
        fused = kiln.attention(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, causal=causal, pack_v=True)
        sep = kiln.attention(q, k, kiln.attention_pack_v(v, cu_seqlens_k=cu_k), cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, causal=causal)
        torch.cuda.synchronize(); same = torch.equal(fused, sep); bad += not same
        print(f"varlen d{d} causal{int(causal)}: {'same' if same else 'DIFF'}", flush=True)
print(f"EQUALITY: {bad} mismatches", flush=True)
sys.exit(1 if bad else 0)
