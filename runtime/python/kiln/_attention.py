"""FP8 attention forward (kiln.h "FP8 attention forward") on torch tensors, its fp8 quantizer and a float64 reference.

    qf, kf, vf, (q_descale, k_descale, v_descale) = kiln.quantize_qkv(q, k, v)     # bf16 -> fp8 + descales
    out = kiln.attention(qf, kf, vf, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale, causal=True)

Layout (batch, seq, heads, head_dim) like flash_attn_func; with cu_seqlens_q / cu_seqlens_k (int32, batch + 1
offsets, on the device) q, k, v are (total, heads, head_dim) and the sequences' rows follow each other. Descales:
None, one-element tensors (per tensor) or (batch, heads_kv) tensors, as FlashAttention-3 takes them. P is
requantized to fp8 for P.V (docs/attention.md: what that costs).

    vt = kiln.attention_pack_v(vf)                  # V^T in f16, for kernels that read it (sm90): 1.06-1.15x faster
    out = kiln.attention(qf, kf, vt, ...)           # (kiln.attention packs V itself where the problem is large)
"""
from __future__ import annotations

import ctypes
import math

from . import _fastpath
from ._capi import DType, ScaleMode, check, kiln_algo, kiln_attn_args, kiln_attn_problem, load_library
from ._ops import _algo_key

WHAT = "attention"
FP8_MAX = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "float8_e4m3fnuz": 240.0, "float8_e5m2fnuz": 57344.0}


def _torch():
    from ._tensors import torch_module
    return torch_module(WHAT)


def _strides4(t, name: str, varlen: bool) -> tuple:
    """(batch, seq, head) element strides of a (B, S, H, D) tensor, or (0, seq, head) of a varlen (T, H, D) one."""
    if t.dim() != (3 if varlen else 4):
        want = "(total, heads, head_dim)" if varlen else "(batch, seq, heads, head_dim)"
        raise ValueError(f"{WHAT}: {name} is {want}, got shape {tuple(t.shape)}")
    if t.stride(-1) != 1:
        raise ValueError(f"{WHAT}: {name}'s head_dim must be contiguous, strides {t.stride()}")
    if varlen:
        return 0, t.stride(0), t.stride(1)
    return t.stride(0), t.stride(1), t.stride(2)


def _descale(d, name: str, batch: int, heads_kv: int, device):
    torch = _torch()
    if d is None:
        return None, ScaleMode.NONE
    if not isinstance(d, torch.Tensor) or d.dtype != torch.float32 or d.device != device:
        raise TypeError(f"{WHAT}: {name} must be a float32 tensor on {device}")
    if d.numel() == 1:
        return d, ScaleMode.TENSOR
    if tuple(d.shape) != (batch, heads_kv):
        raise ValueError(f"{WHAT}: {name} is one element or (batch, heads_kv) = ({batch}, {heads_kv}), got "
                         f"{tuple(d.shape)}")
    return d.contiguous(), ScaleMode.VECTOR


class PackedV:
    """V^T packed in f16 for the attention kernels that read it (kiln.attention_pack_v; kiln.h kiln_attn_pack_v):
    `data` is a float16 tensor (batch, heads_kv, head_dim, keys), keys = seqlen_k rounded up to 8, each sequence's
    keys from 0 (varlen too), the keys past a sequence's length 0. Pass it as kiln.attention's v: kernels that read it
    run 1.06x (head dim 64) to 1.15x (256) faster on sm90, and a V packed once (a KV cache) serves every call."""
    __slots__ = ("data", "dtype", "batch", "heads_kv", "seqlen_k", "head_dim", "varlen")

    def __init__(self, data, dtype, batch: int, heads_kv: int, seqlen_k: int, head_dim: int, varlen: bool):
        self.data, self.dtype, self.batch, self.heads_kv = data, dtype, batch, heads_kv
        self.seqlen_k, self.head_dim, self.varlen = seqlen_k, head_dim, varlen

    @property
    def device(self):
        return self.data.device

    def __repr__(self) -> str:
        return (f"PackedV(batch={self.batch}, heads_kv={self.heads_kv}, seqlen_k={self.seqlen_k}, "
                f"head_dim={self.head_dim}, from {self.dtype}{', varlen' if self.varlen else ''})")


def _vt_keys(seqlen_k: int) -> int:
    return (seqlen_k + 7) // 8 * 8 if seqlen_k > 0 else 8


def attention_pack_v(v, *, cu_seqlens_k=None, max_seqlen_k=None):
    """V (batch, seq, heads_kv, head_dim) fp8, or varlen (total, heads_kv, head_dim) with cu_seqlens_k, -> PackedV,
    packed on the current stream by the packer of the kernel that will read it. KilnError NOT_SUPPORTED where the
    device has no such kernels (only sm90 has)."""
    from ._handle import handle
    from ._fastpath import _bind_stream
    from ._tensors import device_index, kiln_dtype
    from ._types import FP8_DTYPES

    torch = _torch()
    if not isinstance(v, torch.Tensor):
        raise TypeError(f"attention_pack_v: v must be a torch.Tensor, got {type(v).__name__}")
    qkv = kiln_dtype(v, what="v")
    if qkv not in FP8_DTYPES:
        raise TypeError(f"attention_pack_v: v must be fp8, got {v.dtype}")
    varlen = cu_seqlens_k is not None
    vs = _strides4(v, "v", varlen)
    heads_kv, d = v.shape[-2], v.shape[-1]
    if varlen:
        if not isinstance(cu_seqlens_k, torch.Tensor) or cu_seqlens_k.dtype != torch.int32 or \
                cu_seqlens_k.dim() != 1 or cu_seqlens_k.device != v.device or cu_seqlens_k.numel() < 1:
            raise TypeError(f"attention_pack_v: cu_seqlens_k must be a 1-D int32 tensor on {v.device}")
        batch = cu_seqlens_k.numel() - 1
        if max_seqlen_k is None:  # reads the offsets back: a synchronization
            max_seqlen_k = (cu_seqlens_k[1:] - cu_seqlens_k[:-1]).max().item() if batch else 0
        sk = int(max_seqlen_k)
    else:
        batch, sk = v.shape[0], v.shape[1]
    packed = torch.empty((batch, heads_kv, d, _vt_keys(sk)), dtype=torch.float16, device=v.device)
    lib = load_library()
    p = kiln_attn_problem()
    check(lib.kiln_attn_problem_init(ctypes.byref(p), qkv, DType.BF16, batch, heads_kv, heads_kv, 1, sk, d),
          "kiln_attn_problem_init")
    p.varlen = int(varlen)
    p.v_stride_b, p.v_stride_s, p.v_stride_h = vs
    if varlen:
        p.total_q, p.total_k = 1, v.shape[0]
    index = device_index(v.device)
    h = handle(index)
    stream = _bind_stream()(index) if v.device.type == "cuda" else None
    nbytes = packed.numel() * 2 if batch and heads_kv and sk else 0
    check(lib.kiln_attn_pack_v(h, ctypes.byref(p), v.data_ptr(), cu_seqlens_k.data_ptr() if varlen else None,
                               packed.data_ptr(), nbytes, stream), "kiln_attn_pack_v", f"v {tuple(v.shape)}", handle=h)
    return PackedV(packed, v.dtype, batch, heads_kv, sk, d, varlen)


# kiln.attention packs V itself (pack_v=None) where the time the packed-V kernels save exceeds the pass. They run this
# much faster by head dim than the ones that widen V in place (H200 harness, persistent kernels: head dim 128 with O
# stored through TMA 957 TFLOP/s against 829 at 4x32x4096 non-causal, 845 against 743 causal, 721 against 653 at
# 8x16x2048 causal, tuning/results/probe_attn_otma_h200_times.txt; 64 (bm 192) 629 against 481; 256 1066 against
# 910). The pass costs a launch and 3 bytes a V element at ~3 TB/s (the packer streams 3.0-3.6 TB/s on the H200,
# tuning/results/probe_attn_pack_h200_times.txt; the H100's HBM3 has 70 % of the H200's bandwidth), and the widening
# kernel's time is estimated at 800 TFLOP/s. kiln.attention with and without the pass, measured on the H200
# (tuning/probes/attn_pack_pays.py, tuning/results/probe_attn_pack_pays_h200.txt): causal 4x32x4096x128 780 TFLOP/s
# packed against 734-750, 4x8x4096x128 736-747 against 708-710 (both pack with these constants), 8x16x2048x128 620
# against 627-640 (does not).
_PACK_GAIN = {64: 0.25, 128: 0.13, 256: 0.15}


def _pack_pays(batch, heads_q, heads_kv, sq, sk, d, causal) -> bool:
    flops = 4.0 * batch * heads_q * sq * sk * d * (0.5 if causal and sq == sk else 1.0)
    kernel_s = flops / 800e12
    pack_s = 4e-6 + 3.0 * batch * heads_kv * sk * d / 3.0e12
    return _PACK_GAIN.get(d, 0.0) * kernel_s > pack_s


def _packed_kernels(lib, h, p) -> bool:
    """Whether the handle's arch has kernels that read a packed V^T for problem p (as it stands, v_packed set)."""
    algo = kiln_algo()
    n = ctypes.c_int(0)
    return lib.kiln_attn_query(h, ctypes.byref(p), ctypes.byref(algo), 1, ctypes.byref(n)) == 0 and n.value > 0


# ---- the per-call fast path (as _fastpath's for the GEMM ops) ----
# A call that went the whole way and ran leaves a plan under a key of everything it depends on but the data pointers
# (_plan_key): the checked problem with its V handling decided (v_packed), the kernel the library selected for it, the
# workspace sizes, the output's and the LSE's shapes. A later call of the key allocates the outputs and workspaces,
# writes the pointers into a fresh kiln_attn_args and calls kiln_attn_run through a ctypes function whose types were
# set once, with the plan's algo: no selection (the whole way ran it up to three times: the packed-V query, the split
# workspace size, the run). The library still checks the problem, the pointers and the algo on every run. The plans
# live in _fastpath.plans beside the GEMM ops' (keys tagged "attention"), so set_arch() and close() drop them too.
# Not cached: varlen calls without max_seqlen_q / max_seqlen_k (those read the offsets back), empty problems,
# (batch, heads_kv) descales that are not contiguous (the whole way copies them), and anything _plan_key cannot key
# by value (the call then goes the whole way, which says what is wrong with it).

class _RawAttnArgs(ctypes.Structure):
    """kiln_attn_args without CheckedStructure's per-field checks, made fresh for each cached run."""
    _fields_ = kiln_attn_args._fields_


assert ctypes.sizeof(_RawAttnArgs) == ctypes.sizeof(kiln_attn_args)


class _AttnPlan:
    """What a cached run of one key needs besides the tensors. Never changed once made: threads share it."""
    __slots__ = ("problem", "problem_addr", "algo", "algo_addr", "handle", "device", "device_index", "out_shape",
                 "out_dtype", "lse_shape", "vt_bytes", "split_bytes", "packed", "scale")

    def __repr__(self) -> str:
        return (f"_AttnPlan({self.problem!r}, algo={bytes(self.algo).hex()}, out={self.out_shape} {self.out_dtype}, "
                f"lse={self.lse_shape}, vt_work={self.vt_bytes}, split_work={self.split_bytes} on {self.device})")


_attn_run = None  # kiln_attn_run with raw argument types (bound once by _bind_attn_run)


def _bind_attn_run():
    global _attn_run
    fn = load_library()["kiln_attn_run"]  # a function object of its own: lib.kiln_attn_run keeps its prototype
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_RawAttnArgs), ctypes.c_void_p]
    _attn_run = fn
    return fn


def _descale_key(d):
    if d is None:
        return None
    if d.numel() != 1 and not d.is_contiguous():
        raise _fastpath.Uncacheable("a non-contiguous descale")
    return _fastpath.tensor_key(d)


def _plan_key(q, k, v, q_descale, k_descale, v_descale, causal, softmax_scale, out_dtype, cu_seqlens_q, cu_seqlens_k,
              max_seqlen_q, max_seqlen_k, return_lse, out, algo, fp8_p, pack_v) -> tuple:
    """Every argument of a kiln.attention call, in its order, but the data pointers (of which the alignment bits)."""
    tk, vk = _fastpath.tensor_key, _fastpath.value_key
    varlen = cu_seqlens_q is not None or cu_seqlens_k is not None
    if varlen and (max_seqlen_q is None or max_seqlen_k is None):
        raise _fastpath.Uncacheable("varlen without max_seqlen_q and max_seqlen_k")
    if type(v) is PackedV:
        v_key = ("packed", tk(v.data), v.dtype, v.batch, v.heads_kv, v.seqlen_k, v.head_dim, v.varlen)
    else:
        v_key = tk(v)
    return ("attention", tk(q), tk(k), v_key, _descale_key(q_descale), _descale_key(k_descale),
            _descale_key(v_descale), vk(causal), vk(softmax_scale), vk(out_dtype),
            None if cu_seqlens_q is None else tk(cu_seqlens_q), None if cu_seqlens_k is None else tk(cu_seqlens_k),
            vk(max_seqlen_q), vk(max_seqlen_k), vk(return_lse), None if out is None else tk(out),
            _algo_key(algo), vk(fp8_p), vk(pack_v))


def _cache_plan(key, generation, lib, h, p, algo, index, out_given, out, lse, vt_work, split_work, packed,
                scale) -> None:
    """Cache the plan of a call that ran: its problem (p, taken over), the algo (the one forced, else the library's
    choice for p: what kiln_attn_run ran), its outputs' shapes and workspace sizes."""
    import torch
    if _fastpath._torch is not torch:
        _fastpath._use_torch(torch)  # (torch.dtype keys by value from here on)
    if algo is None:
        algo, n = kiln_algo(), ctypes.c_int(0)
        if lib.kiln_attn_query(h, ctypes.byref(p), ctypes.byref(algo), 1, ctypes.byref(n)) != 0 or n.value < 1:
            return
    pp = _AttnPlan()
    pp.problem = p
    pp.problem_addr = ctypes.addressof(p)
    pp.algo = kiln_algo.from_buffer_copy(algo)
    pp.algo_addr = ctypes.addressof(pp.algo)
    pp.handle, pp.device, pp.device_index = h, out.device, index
    pp.out_shape, pp.out_dtype = (None, None) if out_given else (tuple(out.shape), out.dtype)  # (given: in the key)
    pp.lse_shape = tuple(lse.shape) if lse is not None else None
    pp.vt_bytes = vt_work.numel() if vt_work is not None else 0
    pp.split_bytes = split_work.numel() if split_work is not None else 0
    pp.packed, pp.scale = packed, scale
    _fastpath.plans.put(key, pp, generation)


def _run_plan(pp, q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, out):
    """A cached plan's run with this call's tensors: outputs and workspaces made, pointers set, launched."""
    torch = _fastpath._torch
    device = pp.device
    if out is None:
        out = torch.empty(pp.out_shape, dtype=pp.out_dtype, device=device)
    lse = torch.empty(pp.lse_shape, dtype=torch.float32, device=device) if pp.lse_shape is not None else None
    vt_work = torch.empty(pp.vt_bytes, dtype=torch.uint8, device=device) if pp.vt_bytes else None
    split_work = torch.empty(pp.split_bytes, dtype=torch.uint8, device=device) if pp.split_bytes else None
    a = _RawAttnArgs(q.data_ptr(), k.data_ptr(), v.data.data_ptr() if pp.packed else v.data_ptr(), out.data_ptr(),
                     lse.data_ptr() if lse is not None else None,
                     cu_seqlens_q.data_ptr() if cu_seqlens_q is not None else None,
                     cu_seqlens_k.data_ptr() if cu_seqlens_k is not None else None,
                     q_descale.data_ptr() if q_descale is not None else None,
                     k_descale.data_ptr() if k_descale is not None else None,
                     v_descale.data_ptr() if v_descale is not None else None, pp.scale,
                     vt_work.data_ptr() if vt_work is not None else None, pp.vt_bytes,
                     split_work.data_ptr() if split_work is not None else None, pp.split_bytes)
    run = _attn_run or _bind_attn_run()
    stream = (_fastpath._stream or _fastpath._bind_stream())(pp.device_index)
    status = run(pp.handle, pp.problem_addr, pp.algo_addr, ctypes.byref(a), stream or None)
    if status:
        check(status, "kiln_attn_run", f"q {tuple(q.shape)} k {tuple(k.shape)}", handle=pp.handle)
    return (out, lse) if lse is not None else out


def attention(q, k, v, *, q_descale=None, k_descale=None, v_descale=None, causal=False, softmax_scale=None,
              out_dtype=None, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
              return_lse=False, out=None, algo=None, fp8_p=False, pack_v=None):
    """softmax(softmax_scale * q_descale * k_descale * Q K^T [causal]) V * v_descale per (batch, head), fp8 Q, K, V
    -> bf16 (default) or f16. Returns out, or (out, lse) with return_lse (lse float32 (batch, heads, seq); varlen:
    (heads, batch * max_seqlen_q) with sequence b's rows at cu_seqlens_q[b]). algo: an AlgoInfo (kiln.algo_by_name of
    an attention kernel's name) or a kiln_algo forces that kernel; kiln_attn_run refuses one that does not take the
    problem. fp8_p=True prefers the kernels that requantize P to fp8 for P V (FlashAttention-3's recipe: faster at
    head dim 64, about 2.5e-2 relative error on diffuse attention) over those that keep P in f16 (about 2e-3).
    v may be a PackedV (kiln.attention_pack_v). Else pack_v says whether to pack V first: None (default) packs where
    the arch has packed-V kernels and the problem is large enough for the pass to pay (or where algo names such a
    kernel), True wherever the arch has them, False never."""
    try:
        key = _plan_key(q, k, v, q_descale, k_descale, v_descale, causal, softmax_scale, out_dtype, cu_seqlens_q,
                        cu_seqlens_k, max_seqlen_q, max_seqlen_k, return_lse, out, algo, fp8_p, pack_v)
        pp = _fastpath.plans.get(key)
    except Exception:  # noqa: BLE001 -- a call that cannot be keyed goes the whole way, which says what is wrong
        key = pp = None
    if pp is not None:
        return _run_plan(pp, q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, out)
    return _attention_whole(q, k, v, q_descale, k_descale, v_descale, causal, softmax_scale, out_dtype, cu_seqlens_q,
                            cu_seqlens_k, max_seqlen_q, max_seqlen_k, return_lse, out, algo, fp8_p, pack_v, key)


def _attention_whole(q, k, v, q_descale, k_descale, v_descale, causal, softmax_scale, out_dtype, cu_seqlens_q,
                     cu_seqlens_k, max_seqlen_q, max_seqlen_k, return_lse, out, algo, fp8_p, pack_v, key):
    """kiln.attention the whole way: every argument checked, the problem built and checked by the library, the kernel
    selected by it; with a key (not None), the run's plan cached once it succeeded."""
    from ._handle import algo_info, as_kiln_algo, handle
    from ._fastpath import _bind_stream
    from ._tensors import device_index, kiln_dtype
    from ._types import FP8_DTYPES

    torch = _torch()
    generation = _fastpath.plans.generation  # before planning: a set_arch()/close() meanwhile drops this plan
    packed = v if isinstance(v, PackedV) else None
    for name, t in (("q", q), ("k", k), ("v", v if packed is None else packed.data)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{WHAT}: {name} must be a torch.Tensor, got {type(t).__name__}")
    if pack_v is not None and not isinstance(pack_v, bool):
        raise TypeError(f"{WHAT}: pack_v must be None, True or False, got {pack_v!r}")
    algo_in = algo
    algo = as_kiln_algo(algo)  # (a TypeError before anything is allocated)
    qkv = kiln_dtype(q, what="q")
    v_dtype = packed.dtype if packed is not None else v.dtype
    if qkv not in FP8_DTYPES or k.dtype != q.dtype or v_dtype != q.dtype:
        raise TypeError(f"{WHAT}: q, k and v are fp8 of one type (quantize with kiln.quantize_qkv), got {q.dtype}, "
                        f"{k.dtype}, {v_dtype}")
    if q.device != k.device or q.device != (packed.device if packed is not None else v.device):
        raise ValueError(f"{WHAT}: q, k and v must be on one device")
    varlen = cu_seqlens_q is not None or cu_seqlens_k is not None
    if varlen and (cu_seqlens_q is None or cu_seqlens_k is None):
        raise ValueError(f"{WHAT}: pass both cu_seqlens_q and cu_seqlens_k, or neither")
    if packed is not None:
        if packed.varlen != varlen:
            raise ValueError(f"{WHAT}: v was packed {'with' if packed.varlen else 'without'} cu_seqlens_k; pass it "
                             f"{'with' if packed.varlen else 'without'} them here too")
        if varlen:
            if max_seqlen_k is None:
                max_seqlen_k = packed.seqlen_k
            elif int(max_seqlen_k) != packed.seqlen_k:
                raise ValueError(f"{WHAT}: max_seqlen_k = {max_seqlen_k}, v was packed for {packed.seqlen_k}")
    qs, ks = (_strides4(t, n, varlen) for t, n in ((q, "q"), (k, "k")))
    vs = (0, 0, 0) if packed is not None else _strides4(v, "v", varlen)
    heads_q, d = q.shape[-2], q.shape[-1]
    heads_kv = k.shape[-2]
    v_heads, v_d = (packed.heads_kv, packed.head_dim) if packed is not None else (v.shape[-2], v.shape[-1])
    if k.shape[-1] != d or v_d != d or v_heads != heads_kv:
        raise ValueError(f"{WHAT}: head dims / kv heads differ: q {tuple(q.shape)}, k {tuple(k.shape)}, v "
                         f"{packed if packed is not None else tuple(v.shape)}")
    if varlen:
        for name, c in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
            if not isinstance(c, torch.Tensor) or c.dtype != torch.int32 or c.dim() != 1 or c.device != q.device:
                raise TypeError(f"{WHAT}: {name} must be a 1-D int32 tensor on {q.device}")
        batch = cu_seqlens_q.numel() - 1
        if cu_seqlens_k.numel() != batch + 1 or batch < 0:
            raise ValueError(f"{WHAT}: cu_seqlens_q and cu_seqlens_k must both have batch + 1 entries")
        if max_seqlen_q is None or max_seqlen_k is None:  # reads the offsets back: a synchronization
            lq = (cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max().item() if batch else 0
            lk = (cu_seqlens_k[1:] - cu_seqlens_k[:-1]).max().item() if batch else 0
            max_seqlen_q = lq if max_seqlen_q is None else max_seqlen_q
            max_seqlen_k = lk if max_seqlen_k is None else max_seqlen_k
        sq, sk = int(max_seqlen_q), int(max_seqlen_k)
    else:
        batch, sq, sk = q.shape[0], q.shape[1], k.shape[1]
        v_batch, v_sk = (packed.batch, packed.seqlen_k) if packed is not None else (v.shape[0], v.shape[1])
        if k.shape[0] != batch or v_batch != batch or v_sk != sk:
            raise ValueError(f"{WHAT}: q {tuple(q.shape)}, k {tuple(k.shape)} and v "
                             f"{packed if packed is not None else tuple(v.shape)} disagree")
    if packed is not None and packed.batch != batch:
        raise ValueError(f"{WHAT}: v was packed for batch {packed.batch}, the problem has {batch}")
    o_type = {None: DType.BF16, torch.bfloat16: DType.BF16, torch.float16: DType.F16}.get(out_dtype)
    if o_type is None:
        raise TypeError(f"{WHAT}: out_dtype must be torch.bfloat16 or torch.float16, got {out_dtype}")
    out_given = out is not None
    if out is None:
        out = torch.empty(q.shape, dtype=torch.bfloat16 if o_type == DType.BF16 else torch.float16, device=q.device)
    elif tuple(out.shape) != tuple(q.shape) or out.device != q.device:
        raise ValueError(f"{WHAT}: out must have q's shape {tuple(q.shape)} on {q.device}")
    else:
        o_type = kiln_dtype(out, what="out")
    os_ = _strides4(out, "out", varlen)
    descales = [_descale(x, n, batch, heads_kv, q.device) for x, n in
                ((q_descale, "q_descale"), (k_descale, "k_descale"), (v_descale, "v_descale"))]
    modes = {m for _, m in descales}
    if len(modes) != 1:
        raise ValueError(f"{WHAT}: q_descale, k_descale and v_descale go together (all None, all one element, or all "
                         f"(batch, heads_kv))")
    mode = modes.pop()
    lse = None
    if return_lse:
        shape = (heads_q, batch * sq) if varlen else (batch, heads_q, sq)
        lse = torch.empty(shape, dtype=torch.float32, device=q.device)
    scale = 0.0 if softmax_scale is None else float(softmax_scale)
    if not math.isfinite(scale) or scale < 0:
        raise ValueError(f"{WHAT}: softmax_scale = {softmax_scale} must be finite and > 0")

    lib = load_library()
    p = kiln_attn_problem()
    check(lib.kiln_attn_problem_init(ctypes.byref(p), qkv, o_type, batch, heads_q, heads_kv, sq, sk, d),
          "kiln_attn_problem_init")
    p.causal, p.varlen, p.has_lse, p.descale = int(bool(causal)), int(varlen), int(bool(return_lse)), mode
    p.fp8_p = int(bool(fp8_p))
    (p.q_stride_b, p.q_stride_s, p.q_stride_h), (p.k_stride_b, p.k_stride_s, p.k_stride_h) = qs, ks
    (p.v_stride_b, p.v_stride_s, p.v_stride_h), (p.o_stride_b, p.o_stride_s, p.o_stride_h) = vs, os_
    if varlen:  # the packed rows: sm90's wgmma kernels map the tensors whole
        p.total_q, p.total_k = q.shape[0], k.shape[0] if packed is not None else min(k.shape[0], v.shape[0])
    index = device_index(q.device)
    h = handle(index)
    vt_work = None
    if packed is None and pack_v is not False and q.device.type == "cuda":
        if algo is not None:
            want = pack_v is True or "_VP1_" in (algo_in.name if hasattr(algo_in, "name") else algo_info(h, algo).name)
        else:
            want = pack_v is True or _pack_pays(batch, heads_q, heads_kv, sq, sk, d, causal)
        if want:
            p.v_packed = 1  # (as _packed_kernels asks the table)
            if pack_v is True or algo is not None or _packed_kernels(lib, h, p):
                # v_packed 2: the kernel packs V into a work buffer of V^T and its chunk flags while it runs, or
                # kiln_attn_run runs the pass into it first where that is faster or the kernel cannot (where the
                # arch has no such kernel, kiln_attn_run's KilnError says why).
                p.v_packed = 2
                nbytes = ctypes.c_size_t(0)
                check(lib.kiln_attn_pack_v_size(ctypes.byref(p), ctypes.byref(nbytes)), "kiln_attn_pack_v_size")
                vt_work = torch.empty(max(nbytes.value, 16), dtype=torch.uint8, device=q.device)
    p.v_packed = 2 if vt_work is not None else int(packed is not None)
    a = kiln_attn_args()
    a.q, a.k, a.o = q.data_ptr(), k.data_ptr(), out.data_ptr()
    a.v = packed.data.data_ptr() if packed is not None else v.data_ptr()
    a.lse = lse.data_ptr() if lse is not None else None
    if varlen:
        a.cu_seqlens_q, a.cu_seqlens_k = cu_seqlens_q.data_ptr(), cu_seqlens_k.data_ptr()
    if mode != ScaleMode.NONE:
        a.q_descale, a.k_descale, a.v_descale = (x.data_ptr() for x, _ in descales)
    a.softmax_scale = scale
    if vt_work is not None:
        a.vt_work, a.vt_work_bytes = vt_work.data_ptr(), vt_work.numel()
    algo_ptr = ctypes.byref(algo) if algo is not None else None
    split_work = None
    if q.device.type == "cuda" and not causal and not varlen and hasattr(lib, "kiln_attn_split_work_size"):
        # a kernel with the split tail (persist 2) sums the pieces of the blocks it cuts in this buffer (kiln.h;
        # non-causal fixed lengths only)
        nbytes = ctypes.c_size_t(0)
        check(lib.kiln_attn_split_work_size(h, ctypes.byref(p), algo_ptr, ctypes.byref(nbytes)),
              "kiln_attn_split_work_size", handle=h)
        if nbytes.value:
            split_work = torch.empty(nbytes.value, dtype=torch.uint8, device=q.device)
            a.split_work, a.split_work_bytes = split_work.data_ptr(), split_work.numel()
    stream = _bind_stream()(index) if q.device.type == "cuda" else None
    check(lib.kiln_attn_run(h, ctypes.byref(p), algo_ptr, ctypes.byref(a), stream), "kiln_attn_run",
          f"q {tuple(q.shape)} k {tuple(k.shape)}", handle=h)
    if key is not None and q.device.type == "cuda" and min(batch, heads_q, sq, sk) > 0:
        _cache_plan(key, generation, lib, h, p, algo, index, out_given, out, lse, vt_work, split_work,
                    packed is not None, a.softmax_scale)
    return (out, lse) if return_lse else out


def quantize_qkv(q, k, v, *, dtype=None, per_head=False):
    """fp8 copies of q, k, v (batch, seq, heads, head_dim) and their descales (float32): one per tensor, or with
    per_head=True one per (batch, kv head) ((batch, heads_kv); q's per its kv head group), amax mapped to the fp8
    type's largest value. dtype: torch.float8_e4m3fn (default) or another fp8 type (e4m3fnuz on gfx942)."""
    torch = _torch()
    dtype = dtype or torch.float8_e4m3fn
    top = FP8_MAX[str(dtype).replace("torch.", "")]

    def one(t, groups):
        x = t.float()
        if per_head:
            b, s, h, d = x.shape
            g = x.reshape(b, s, groups, h // groups, d)
            amax = g.abs().amax(dim=(1, 3, 4)).clamp(min=1e-12)  # (batch, heads_kv)
            scale = amax / top
            xq = (g / scale[:, None, :, None, None]).reshape(b, s, h, d).to(dtype)
            return xq, scale.contiguous()
        amax = x.abs().amax().clamp(min=1e-12)
        scale = (amax / top).reshape(1)
        return (x / scale).to(dtype), scale

    heads_kv = k.shape[-2]
    (qq, sq), (kq, sk), (vq, sv) = one(q, heads_kv), one(k, heads_kv), one(v, heads_kv)
    return qq, kq, vq, (sq, sk, sv)


def attention_reference(q, k, v, *, q_descale=None, k_descale=None, v_descale=None, causal=False,
                        softmax_scale=None):
    """float64 (batch, seq, heads, head_dim) and lse (batch, heads, seq) of exact attention on the fp8 values as
    given (descales applied), fixed lengths. A row that sees no key gets 0 and -inf."""
    torch = _torch()
    b, sq, hq, d = q.shape
    sk, hk = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else float(softmax_scale)

    def ds(x, heads):
        if x is None:
            return torch.ones(b, heads, dtype=torch.float64, device=q.device)
        x = x.double()
        full = x.reshape(1, 1).expand(b, hk) if x.numel() == 1 else x
        return full.repeat_interleave(heads // hk, dim=1)

    qd = q.float().double() * ds(q_descale, hq)[:, None, :, None]
    kd = k.float().double() * ds(k_descale, hk)[:, None, :, None]
    vd = v.float().double() * ds(v_descale, hk)[:, None, :, None]
    rep = hq // hk
    kd = kd.repeat_interleave(rep, dim=2)
    vd = vd.repeat_interleave(rep, dim=2)
    s = torch.einsum("bqhd,bkhd->bhqk", qd, kd) * scale
    if causal:
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(sk, device=q.device)[None, :]
        s = s.masked_fill(j > i + (sk - sq), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    pr = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    o = torch.einsum("bhqk,bkhd->bqhd", pr, vd)
    return o, lse


__all__ = ["attention", "attention_reference", "quantize_qkv"]
