"""The torch-facing operations: tensors -> (kiln_problem, kiln_args, output) -> kiln_run.

Each op has a planner (_plan_*) that validates tensors and builds the problem; the op runs the plan, and
query()/explain() ask the library about the same plan. Shapes, strides and leading dimensions are in elements.
A run that succeeded leaves its prepared plan in a cache keyed by everything but the data pointers (_key_*), and a
later call of the same key runs that plan without planning again (_fastpath.py says what the key holds).

Every function here needs torch (TorchRequiredError without it). Runs take CUDA tensors; query() and explain() also
take CPU tensors, and then answer for the device-less handle, whose arch kiln.set_arch() picks: what kiln would
choose on a GPU this machine does not have. Empty tensors (M, N or K = 0) are valid: the output has its shape, and
with K = 0 it holds act(beta*C + bias).
"""
from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

from . import _fastpath
from ._blockscaled import GROUP, groups_of
from ._capi import DType, Layout, ScaleMode, check, kiln_algo, kiln_args, kiln_problem, load_library
from ._convert import INT64, as_float32, as_int
from ._fastpath import Uncacheable, run_cached, scale_key, tensor_key, value_key
from ._handle import AlgoInfo, explain_problem, make_problem, query_problem, resolve
from ._prepack import prepack_torch
from ._tensors import (TorchRequiredError, bias_of, device_index, kiln_dtype, matrix_mn, operand_a, operand_b,
                       output, pointer, require_tensor, same_device, scale, torch_dtype, torch_module)
from ._types import FP8_DTYPES, FP8_NAME, HALF_DTYPES, activation_from_name, infer_b_layout

__all__ = ["PREPACKED_LAYOUT", "PackedB", "Plan", "TorchRequiredError", "algos", "explain", "gemm", "kiln_dtype",
           "mixed_mm", "plan", "prepack_b", "prepack_b_host", "query", "scaled_mm", "torch_dtype"]

PREPACKED_LAYOUT = Layout.TN  # a packed B is [N][kp], K-major like a TN B with ldb = kp


@dataclass
class Plan:
    problem: kiln_problem
    args: kiln_args
    out: object      # torch.Tensor written by the run
    device: object   # torch.device
    keep: tuple = ()  # tensors the args point into that the caller does not hold (scales made from floats)


def _finish(p: kiln_problem, out, a, b, c=None, sa=None, sb=None, bias=None, alpha=1.0, beta=0.0, keep=()):
    args = kiln_args(a=pointer(a), b=pointer(b), c=pointer(c), d=pointer(out), scale_a=pointer(sa),
                     scale_b=pointer(sb), bias=pointer(bias), alpha=alpha, beta=beta)
    return Plan(p, args, out, a.device, keep)


def _plan_dense(a, b, *, a_type, b_type, default_out: DType, c=None, alpha=1.0, beta=0.0, scale_a=None,
                scale_b=None, bias=None, activation=None, out_dtype=None, layout=None, out=None, what="gemm",
                fast_accum=False):
    batch_a, m, k, lda, stride_a = operand_a(a, a_type)
    batch_b, kb, n, layout, ldb, stride_b = operand_b(b, b_type, layout)
    if kb != k:
        raise ValueError(f"{what}: A is [{m}, {k}] but B is [{kb}, {n}]")
    if a.dim() != b.dim() or batch_a != batch_b:
        raise ValueError(f"{what}: A {tuple(a.shape)} and B {tuple(b.shape)} must both be 2-D or both [batch, ...]"
                         " with the same batch")
    batch_dims = (batch_a,) if a.dim() == 3 else ()
    require_tensor(c, what, "c", optional=True)
    require_tensor(out, what, "out", optional=True)
    same_device(a.device, {"b": b, "c": c, "bias": bias, "out": out}, what)
    out, d_type = output(out, out_dtype, default_out, batch_dims, m, n, a.device)
    ldd, stride_d = matrix_mn(out, batch_a, m, n, d_type, "out")
    sa_mode, sa = scale(scale_a, m, a.device, "scale_a", what)
    sb_mode, sb = scale(scale_b, n, a.device, "scale_b", what)
    bias, bias_type = bias_of(bias, n, a.device, what)
    fields = dict(batch=batch_a, lda=lda, ldb=ldb, ldd=ldd, stride_a=stride_a, stride_b=stride_b, stride_d=stride_d,
                  scale_a=sa_mode, scale_b=sb_mode, has_bias=bias is not None, bias_type=bias_type,
                  activation=activation_from_name(activation), fast_accum=int(bool(fast_accum)))
    if c is not None:
        ldc, stride_c = matrix_mn(c, batch_a, m, n, d_type, "c")
        fields.update(has_c=1, ldc=ldc, stride_c=stride_c)
    else:
        fields.update(ldc=ldd, stride_c=stride_d)
    p = make_problem(a_type, b_type, d_type, layout, m, n, k, **fields)
    keep = tuple(t for t, given in ((sa, scale_a), (sb, scale_b)) if t is not None and t is not given)
    return _finish(p, out, a, b, c, sa, sb, bias, alpha, beta, keep)


def _plan_gemm(a, b, *, c=None, alpha=1.0, beta=0.0, bias=None, activation=None, out_dtype=None, layout=None,
               out=None):
    require_tensor(a, "gemm", "a")
    require_tensor(b, "gemm", "b")
    alpha, beta = as_float32(alpha, "gemm: alpha"), as_float32(beta, "gemm: beta")
    a_type, b_type = kiln_dtype(a, what="a"), kiln_dtype(b, what="b")
    if a_type not in HALF_DTYPES or b_type not in HALF_DTYPES:
        raise TypeError(f"gemm takes float16/bfloat16 A and B (got {a.dtype}, {b.dtype}); fp8 x fp8 is "
                        f"kiln.scaled_mm, 16-bit x fp8 is kiln.mixed_mm with kiln.prepack_b")
    if beta != 0.0 and c is None:
        raise ValueError("gemm: beta != 0 needs c=")
    return _plan_dense(a, b, a_type=a_type, b_type=b_type, default_out=a_type, c=c, alpha=alpha, beta=beta,
                       bias=bias, activation=activation, out_dtype=out_dtype, layout=layout, out=out)


def _plan_scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype=None, activation=None, a_fp8=None, b_fp8=None,
                    layout=None, out=None, use_fast_accum=False):
    require_tensor(a, "scaled_mm", "a")
    require_tensor(b, "scaled_mm", "b")
    a_type, b_type = kiln_dtype(a, a_fp8, "a"), kiln_dtype(b, b_fp8, "b")
    if a_type not in FP8_DTYPES or b_type not in FP8_DTYPES:
        raise TypeError(f"scaled_mm takes fp8 A and B (got {a.dtype}, {b.dtype}); use a_fp8=/b_fp8= for uint8")
    return _plan_dense(a, b, a_type=a_type, b_type=b_type, default_out=DType.BF16, scale_a=scale_a,
                       scale_b=scale_b, bias=bias, activation=activation, out_dtype=out_dtype, layout=layout,
                       out=out, what="scaled_mm", fast_accum=use_fast_accum)


@dataclass(frozen=True)
class PackedB:
    """B (K x N fp8) reordered by kiln_prepack_b's rule: data is uint8 [N, kp] on the device."""
    data: object
    dtype: DType
    k: int
    n: int

    @property
    def kp(self) -> int:
        return self.data.shape[1]

    @property
    def fp8(self) -> str:
        """The weights' fp8 format by name ("e4m3", ...): with data and k, the arguments of torch.ops.kiln.mixed_mm."""
        return FP8_NAME[self.dtype]


def prepack_b(b, *, layout=None, fp8: str | None = None) -> PackedB:
    """Pack fp8 B(k, n), given as [K, N] (NN) or a transposed view of [N, K] storage (TN), on its device."""
    torch = torch_module("prepack_b")
    require_tensor(b, "prepack_b", "b")
    b_type = kiln_dtype(b, fp8, "b")
    if b_type not in FP8_DTYPES:
        raise TypeError(f"prepack_b packs fp8 weights, got {b.dtype}")
    if b.dim() != 2:
        raise ValueError(f"prepack_b: want B as [K, N], got shape {tuple(b.shape)}")
    k, n = b.shape
    infer_b_layout(k, n, b.stride(0), b.stride(1), b_type, layout, "prepack_b")  # checks a forced layout
    u8 = b if b.dtype == torch.uint8 else b.view(torch.uint8)
    return PackedB(prepack_torch(u8), b_type, k, n)


def prepack_b_host(b, *, layout=None, fp8: str | None = None):
    """kiln_prepack_b (the C function, on the host) of B(k, n) given as a numpy or CPU torch [K, N] array of bytes.

    Returns the packed [N, kp] uint8 bytes as the same kind of array. For cross-checking prepack_b. Needs numpy or
    torch, whichever the input is, and not the other."""
    lib = load_library()
    is_torch = type(b).__module__.startswith("torch")
    if is_torch:
        torch = torch_module("prepack_b_host")
        if b.device.type != "cpu":
            raise ValueError("prepack_b_host takes host memory; use prepack_b for device tensors")
        if b.dtype.itemsize != 1:
            raise TypeError(f"prepack_b_host: want 1-byte elements, got {b.dtype}")
        if fp8 is not None or b.dtype != torch.uint8:
            kiln_dtype(b, fp8, "b")  # validates the fp8 claim
        shape, strides, ptr = tuple(b.shape), tuple(b.stride()), b.data_ptr()
    else:
        if getattr(b, "itemsize", None) != 1 or not hasattr(b, "ctypes"):
            raise TypeError(f"prepack_b_host: want a numpy array or CPU torch tensor of 1-byte elements, got "
                            f"{type(b).__name__}")
        shape, strides, ptr = b.shape, b.strides, b.ctypes.data
    if len(shape) != 2:
        raise ValueError(f"prepack_b_host: want B as [K, N], got shape {shape}")
    k, n = (as_int(v, f"prepack_b_host: {what}", INT64) for v, what in zip(shape, "kn"))
    layout, ld = infer_b_layout(k, n, strides[0], strides[1], DType.E4M3, layout, "prepack_b_host")
    ld = as_int(ld, "prepack_b_host: ld", INT64)
    size, kp = ctypes.c_size_t(), ctypes.c_int64()
    check(lib.kiln_prepack_b_size(n, k, ctypes.byref(size), ctypes.byref(kp)), "kiln_prepack_b_size",
          f"n={n}, k={k}")
    if is_torch:
        out = torch.empty((n, kp.value), dtype=torch.uint8)
        dst = out.data_ptr()
    else:
        import numpy as np
        out = np.empty((n, kp.value), dtype=np.uint8)
        dst = out.ctypes.data
    if size.value != n * kp.value:
        raise RuntimeError(f"kiln_prepack_b_size says {size.value} bytes for [{n}, {kp.value}]")
    if size.value == 0:  # nothing to pack (N or K = 0): the packed array is empty too
        return out
    check(lib.kiln_prepack_b(ptr, int(layout), n, k, ld, dst, size.value), "kiln_prepack_b")
    return out


def _group_scales(s, n: int, k: int, device):
    """The kiln_problem fields of per-group weight scales, or None when scale_b is not one: a 2-D float32 tensor of
    one scale per weight row and 128 of K ([N, ceil(K/128)]) or per 128x128 block ([ceil(N/128), ceil(K/128)]), any
    strides. (With one group, an [N, 1] scale is a per-row vector, which the epilogue applies: the same product.)"""
    torch = torch_module("mixed_mm")
    groups = groups_of(k)
    if not isinstance(s, torch.Tensor) or s.dim() != 2 or s.shape[1] != groups or (groups == 1 and s.shape[0] == n):
        return None
    rows = s.shape[0]
    if rows not in (n, groups_of(n)):
        raise ValueError(f"scale_b: per-group weight scales are [N, ceil(K/128)] = [{n}, {groups}] or "
                         f"[ceil(N/128), ceil(K/128)] = [{groups_of(n)}, {groups}], got {tuple(s.shape)}")
    if s.dtype != torch.float32:
        raise TypeError(f"scale_b: scales are float32 device tensors, got {s.dtype}")
    if s.device != device:
        raise ValueError(f"scale_b: on {s.device}, expected {device}")
    block_n = 1 if rows == n else GROUP
    return dict(scale_b_block_n=block_n, scale_b_stride_n=s.stride(0) if rows > 1 else 0,
                scale_b_stride_k=s.stride(1) if groups > 1 else 0)


def _plan_mixed_mm(a, packed_b, *, scale_b=None, bias=None, out_dtype=None, activation=None, out=None):
    require_tensor(a, "mixed_mm", "a")
    if not isinstance(packed_b, PackedB):
        raise TypeError(f"mixed_mm: packed_b must be a kiln.PackedB from kiln.prepack_b(...), got "
                        f"{type(packed_b).__name__}")
    require_tensor(out, "mixed_mm", "out", optional=True)
    a_type = kiln_dtype(a, what="a")
    if a_type not in HALF_DTYPES:
        raise TypeError(f"mixed_mm takes a float16/bfloat16 A, got {a.dtype}")
    if a.dim() < 2:
        raise ValueError(f"mixed_mm: want A as [..., M, K], got shape {tuple(a.shape)}")
    lead = tuple(a.shape[:-1])
    k = a.shape[-1]
    if k != packed_b.k:
        raise ValueError(f"mixed_mm: A has K={k}, packed B has K={packed_b.k}")
    rows = math.prod(lead)  # explicit: view(-1, 0) of an empty A is ambiguous
    a2 = a
    if a.dim() > 2:
        try:
            a2 = a.view(rows, k)
        except RuntimeError:
            raise ValueError(f"mixed_mm: the leading dims of A {tuple(a.shape)} (strides {a.stride()}) do not "
                             f"flatten into rows; pass a contiguous A") from None
    _, m, _, lda, _ = operand_a(a2, a_type)
    n = packed_b.n
    same_device(a.device, {"packed_b": packed_b.data, "bias": bias, "out": out}, "mixed_mm")
    if out is not None and tuple(out.shape) != lead + (n,):
        raise ValueError(f"out: shape {tuple(out.shape)}, expected {lead + (n,)}")
    out, d_type = output(out, out_dtype, a_type, lead[:-1], lead[-1], n, a.device)
    try:
        out2 = out.view(rows, n) if out.dim() > 2 else out
    except RuntimeError:
        raise ValueError(f"out: the leading dims of {tuple(out.shape)} (strides {out.stride()}) do not flatten "
                         f"into rows") from None
    ldd, _ = matrix_mn(out2, 1, m, n, d_type, "out")
    group = _group_scales(scale_b, n, k, a.device)
    if group is None:
        sb_mode, sb = scale(scale_b, n, a.device, "scale_b", "mixed_mm")
        group = {}
    else:
        sb_mode, sb = ScaleMode.BLOCK, scale_b
    bias, bias_type = bias_of(bias, n, a.device, "mixed_mm")
    p = make_problem(a_type, packed_b.dtype, d_type, PREPACKED_LAYOUT, m, n, k, b_prepacked=1, lda=lda,
                     ldb=packed_b.kp, ldc=ldd, ldd=ldd, scale_b=sb_mode, has_bias=bias is not None,
                     bias_type=bias_type, activation=activation_from_name(activation), **group)
    p.stride_a, p.stride_b, p.stride_c, p.stride_d = m * lda, n * packed_b.kp, m * ldd, m * ldd
    keep = (sb,) if sb is not None and sb is not scale_b else ()
    return _finish(p, out, a2, packed_b.data, None, None, sb, bias, 1.0, 0.0, keep)


# ---- the ops: a cached plan when the key of the call has one (_fastpath), else the whole way ----

_plans = _fastpath.plans


def _algo_key(algo):
    """algo= in a key: the algo's bytes (an AlgoInfo's kiln_algo), None for kiln_query's choice."""
    if algo is None:
        return None
    if type(algo) is AlgoInfo:
        return bytes(algo.algo)
    if type(algo) is kiln_algo:
        return bytes(algo)
    raise Uncacheable(type(algo).__name__)


def _packed_key(packed_b) -> tuple:
    if type(packed_b) is not PackedB:
        raise Uncacheable(type(packed_b).__name__)
    return (tensor_key(packed_b.data), packed_b.dtype, packed_b.k, packed_b.n)


# The keys of the three ops: every argument, in the op's order (a None stays None: the common case costs no call).

def _key_gemm(a, b, c, alpha, beta, bias, activation, out_dtype, layout, out, algo) -> tuple:
    return ("gemm", tensor_key(a), tensor_key(b), None if c is None else tensor_key(c), value_key(alpha),
            value_key(beta), None if bias is None else tensor_key(bias),
            None if activation is None else value_key(activation), None if out_dtype is None else value_key(out_dtype),
            None if layout is None else value_key(layout), None if out is None else tensor_key(out),
            None if algo is None else _algo_key(algo))


def _key_scaled_mm(a, b, scale_a, scale_b, bias, out_dtype, activation, a_fp8, b_fp8, layout, out, algo,
                   use_fast_accum) -> tuple:
    return ("scaled_mm", bool(use_fast_accum), tensor_key(a), tensor_key(b), scale_key(scale_a), scale_key(scale_b),
            None if bias is None else tensor_key(bias), None if out_dtype is None else value_key(out_dtype),
            None if activation is None else value_key(activation), None if a_fp8 is None else value_key(a_fp8),
            None if b_fp8 is None else value_key(b_fp8), None if layout is None else value_key(layout),
            None if out is None else tensor_key(out), None if algo is None else _algo_key(algo))


def _key_mixed_mm(a, packed_b, scale_b, bias, out_dtype, activation, out, algo) -> tuple:
    return ("mixed_mm", tensor_key(a), _packed_key(packed_b), scale_key(scale_b),
            None if bias is None else tensor_key(bias), None if out_dtype is None else value_key(out_dtype),
            None if activation is None else value_key(activation), None if out is None else tensor_key(out),
            None if algo is None else _algo_key(algo))


def _run_whole(plan: Plan, algo, where: str, key):
    """The first call of a key (or an uncacheable call): resolve the algo, run, and cache the prepared plan once its
    run succeeded."""
    generation = _plans.generation  # before resolving: a set_arch()/close() meanwhile drops this plan
    h, index, algo, ws_bytes = resolve(plan.problem, plan.args, algo, plan.device, where)
    pp = _fastpath.prepare(plan.problem, h, index, algo, ws_bytes, plan.out, plan.args.d, where)
    _fastpath.launch_plan_args(pp, plan.args)
    if key is not None and pp.cacheable:
        _plans.put(key, pp, generation)
    return plan.out


def gemm(a, b, *, c=None, alpha=1.0, beta=0.0, bias=None, activation=None, out_dtype=None, layout=None, out=None,
         algo=None):
    """D = act(alpha * A @ B + beta * C + bias) for float16/bfloat16 A [M, K] / [batch, M, K] and B(k, n) as
    [K, N] (NN) or a transposed view of [N, K] storage (TN). D defaults to A's dtype."""
    try:
        key = _key_gemm(a, b, c, alpha, beta, bias, activation, out_dtype, layout, out, algo)
        pp = _plans.get(key)
    except Exception:  # noqa: BLE001 -- a call that cannot be keyed goes the whole way, which says what is wrong
        key = pp = None
    if pp is not None:
        d = run_cached(pp, a, b, c, None, None, bias, out, float(alpha), float(beta))
        if d is not None:
            return d
    plan = _plan_gemm(a, b, c=c, alpha=alpha, beta=beta, bias=bias, activation=activation, out_dtype=out_dtype,
                      layout=layout, out=out)
    return _run_whole(plan, algo, "gemm", key)


def scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype=None, activation=None, a_fp8=None, b_fp8=None,
              layout=None, out=None, algo=None, use_fast_accum=False):
    """Like torch._scaled_mm: fp8 A [M, K] row-major, B(k, n) [K, N] column-major (b.t() contiguous), scales
    float32 per tensor (1 element) or per row of A / column of B. Batched [batch, ...] too. D defaults to bf16.
    use_fast_accum=True (torch's flag of the same name) lets sm90 kernels keep their fp8 sums in wgmma's
    reduced-precision accumulator over all of K: faster, less accurate at long K. The default promotes them to FP32
    every 128 of K."""
    try:
        key = _key_scaled_mm(a, b, scale_a, scale_b, bias, out_dtype, activation, a_fp8, b_fp8, layout, out, algo,
                             use_fast_accum)
        pp = _plans.get(key)
    except Exception:  # noqa: BLE001 -- as in gemm
        key = pp = None
    if pp is not None:
        d = run_cached(pp, a, b, None, scale_a, scale_b, bias, out, 1.0, 0.0)
        if d is not None:
            return d
    plan = _plan_scaled_mm(a, b, scale_a, scale_b, bias=bias, out_dtype=out_dtype, activation=activation,
                           a_fp8=a_fp8, b_fp8=b_fp8, layout=layout, out=out, use_fast_accum=use_fast_accum)
    return _run_whole(plan, algo, "scaled_mm", key)


def mixed_mm(a, packed_b, *, scale_b=None, bias=None, out_dtype=None, activation=None, out=None, algo=None):
    """act(A @ upcast(B) * scale_b + bias) for float16/bfloat16 A [..., K] and B from prepack_b. D defaults to A's
    dtype; scale_b is None, a number, a 1-element or an [N] float32 tensor, or per-group weight scales: float32
    [N, ceil(K/128)] (one per weight row and 128 of K) or [ceil(N/128), ceil(K/128)] (128x128 blocks), which the
    kernel applies to the widened weights (in A's type) before the product (sm90 only)."""
    try:
        key = _key_mixed_mm(a, packed_b, scale_b, bias, out_dtype, activation, out, algo)
        pp = _plans.get(key)
    except Exception:  # noqa: BLE001 -- as in gemm
        key = pp = None
    if pp is not None:
        d = run_cached(pp, a, packed_b.data, None, None, scale_b, bias, out, 1.0, 0.0)
        if d is not None:
            return d
    plan = _plan_mixed_mm(a, packed_b, scale_b=scale_b, bias=bias, out_dtype=out_dtype, activation=activation,
                          out=out)
    return _run_whole(plan, algo, "mixed_mm", key)


_PLANNERS = {"gemm": _plan_gemm, "scaled_mm": _plan_scaled_mm, "mixed_mm": _plan_mixed_mm}
_OPS = {gemm: "gemm", scaled_mm: "scaled_mm", mixed_mm: "mixed_mm"}


def plan(op, *args, **kwargs) -> Plan:
    """The problem, arguments and output an op would run with (the output is allocated, nothing is launched)."""
    name = _OPS.get(op, op) if callable(op) or isinstance(op, str) else None
    if name not in _PLANNERS:
        raise ValueError(f"op must be one of {sorted(_PLANNERS)} (or the function), got {op!r}")
    torch_module(name)
    return _PLANNERS[name](*args, **kwargs)


def query(op, *args, k: int = 8, **kwargs) -> list:
    """Top-k candidate AlgoInfo (best first) for the call op(*args, **kwargs), pointer alignment included."""
    pl = plan(op, *args, **kwargs)
    return query_problem(pl.problem, k, pl.args, device_index(pl.device))


def algos(op, *args, k: int = 8, **kwargs) -> list:
    """Kernel names of query(...)."""
    return [info.name for info in query(op, *args, k=k, **kwargs)]


def explain(op, *args, **kwargs) -> str:
    """kiln_explain's account of how the call op(*args, **kwargs) would select its kernel. When no kernel can be
    selected, KilnError is raised carrying the account (.explanation, and at the end of its message)."""
    pl = plan(op, *args, **kwargs)
    return explain_problem(pl.problem, pl.args, device_index(pl.device))
