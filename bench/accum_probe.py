"""How far fp8 GEMMs drift from float64 when a long K sums same-sign products (positive-mean A and B): kiln's
default (FP32 promotion every 128 of K) and use_fast_accum=True, beside cuBLASLt's two modes."""
import torch
import kiln

torch.manual_seed(0)
f8 = torch.float8_e4m3fn
one = torch.tensor(1.0, device="cuda")
for M, N, K in ((256, 256, 4096), (256, 256, 28672), (2048, 2048, 8192)):
    for kind in ("positive", "zero-mean"):
        if kind == "positive":
            a = (torch.randn(M, K, device="cuda").abs() + 0.5).to(f8)
            w = (torch.randn(N, K, device="cuda").abs() + 0.5).to(f8)
        else:
            a = torch.randn(M, K, device="cuda").to(f8)
            w = torch.randn(N, K, device="cuda").to(f8)
        ref = a.double() @ w.double().t()
        rel = lambda x: ((x.double() - ref).norm() / ref.norm()).item()
        ours = kiln.scaled_mm(a, w.t(), one, one, out_dtype=torch.float32)
        ours_fast = kiln.scaled_mm(a, w.t(), one, one, out_dtype=torch.float32, use_fast_accum=True)
        slow = torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.float32)
        fast = torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.float32, use_fast_accum=True)
        torch.cuda.synchronize()
        print(f"{M}x{N}x{K} {kind:9s}: rel L2 vs float64  kiln {rel(ours):.2e}  cuBLASLt {rel(slow):.2e}  "
              f"kiln fast-accum {rel(ours_fast):.2e}  cuBLASLt fast-accum {rel(fast):.2e}", flush=True)
