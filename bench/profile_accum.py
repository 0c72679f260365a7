"""ncu target: kiln.scaled_mm at 8192^3, promoted (default) then fast accumulation, two calls each."""
import torch, kiln
m=n=k=8192
a=torch.randn(m,k,device="cuda").to(torch.float8_e4m3fn); w=torch.randn(n,k,device="cuda").to(torch.float8_e4m3fn)
one=torch.tensor(1.0,device="cuda")
for fast in (False, True):
    for _ in range(2): kiln.scaled_mm(a, w.t(), one, one, use_fast_accum=fast)
torch.cuda.synchronize()
