"""V^T packed by the kernel at bm 192 (three consumers), with tuning/patches/attn_vt_fill_bm192.patch applied and an
attention-only library built from that tree: bitwise against the pass on a forced bm 192 kernel, then paired timings
of head dim 64 shapes (fused / pass + kernel / packed once). argv[1]: check | sanitize | time
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_vt_fill_bm192.py check"""
import sys, torch
sys.path.insert(0, "runtime/python"); sys.path.insert(0, "bench")
import kiln
sys.path.insert(0, "tuning/probes")
from attn_vt_fill_time import time_shapes
mode = sys.argv[1]
torch.manual_seed(0)
K192 = kiln.algo_by_name("Attn_F8B_D64_BM192_BN128_S3_SC0_PS1_PR0_FE0_SP2_PV16_VP1_PE1_WGMMA_SM90")
bad = 0
def mk(b, s, h, d):
    return torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn)
if mode in ("check", "sanitize"):
    cases = [(1, 129, 129, 2, 1, False), (2, 200, 333, 4, 2, True), (1, 300, 300, 2, 2, True)]
    if mode == "check":
        cases += [(2, 1000, 777, 8, 2, True), (3, 64, 4100, 4, 4, False), (2, 513, 2049, 8, 1, True),
                  (2, 2048, 2048, 32, 32, False), (1, 8192, 8192, 8, 8, True), (1, 1, 1, 1, 1, False), (2, 4096, 4096, 16, 4, False)]
    for (b, sq, sk, hq, hk, causal) in cases:
        q, k, v = mk(b, sq, hq, 64), mk(b, sk, hk, 64), mk(b, sk, hk, 64)
        for rep in range(3 if mode == "check" else 1):
            fused = kiln.attention(q, k, v, causal=causal, pack_v=True, algo=K192)
            sep = kiln.attention(q, k, kiln.attention_pack_v(v), causal=causal, algo=K192)
            torch.cuda.synchronize()
            same = torch.equal(fused, sep); bad += not same
            print(f"{b}x{hq}/{hk}x{sq}/{sk}x64 causal {int(causal)} rep {rep}: {'same' if same else 'DIFF'}", flush=True)
    cu_q = torch.tensor([0, 100, 357, 1000], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, 64, 700, 901], dtype=torch.int32, device="cuda")
    q = torch.randn(1000, 4, 64, device="cuda").to(torch.float8_e4m3fn)
    k, v = (torch.randn(901, 2, 64, device="cuda").to(torch.float8_e4m3fn) for _ in range(2))
    for causal in (False, True):
        fused = kiln.attention(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, causal=causal, pack_v=True, algo=K192)
        sep = kiln.attention(q, k, kiln.attention_pack_v(v, cu_seqlens_k=cu_k), cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                             causal=causal, algo=K192)
        torch.cuda.synchronize(); same = torch.equal(fused, sep); bad += not same
        print(f"varlen causal {int(causal)}: {'same' if same else 'DIFF'}", flush=True)
    print(f"EQUALITY: {bad} mismatches", flush=True)
    sys.exit(1 if bad else 0)
time_shapes("bm192", [(2, 16, 8192, 64, False), (2, 16, 8192, 64, True), (1, 32, 8192, 64, False), (4, 16, 4096, 64, False),
                      (4, 16, 4096, 64, True), (8, 16, 2048, 64, True), (1, 16, 16384, 64, False)])
