"""One attention shape through kiln.attention with V packed once beforehand, three calls (the kernel alone, for
tuning/probes/attn_ncu_shipped.sh): KILN_LIBRARY=<libkiln.so> python3 tuning/probes/attn_ncu_one.py B H S D CAUSAL"""
import sys, torch
sys.path.insert(0, "runtime/python")
import kiln
b, h, s, d, c = (int(x) for x in sys.argv[1:6])
q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
q8, k8, v8, (qd, kd, vd) = kiln.quantize_qkv(q, k, v)
pv = kiln.attention_pack_v(v8)
for _ in range(3):
    kiln.attention(q8, k8, pv, q_descale=qd, k_descale=kd, v_descale=vd, causal=bool(c))
torch.cuda.synchronize()
