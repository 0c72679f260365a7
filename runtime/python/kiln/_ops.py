"""The torch-facing operations: tensors -> (kiln_problem, kiln_args, output) -> kiln_run.

Each op has a planner (_plan_*) that validates tensors and builds the problem; the op runs the plan, and
query()/explain() ask the library about the same plan. Shapes, strides and leading dimensions are in elements.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

from ._capi import DType, Layout, ScaleMode, kiln_args, kiln_problem, load_library, check
from ._handle import explain_problem, make_problem, query_problem, run
from ._prepack import prepack_torch
from ._types import (BIAS_DTYPES, FP8_DTYPES, HALF_DTYPES, TORCH_DTYPE_NAME, activation_from_name,
                     dtype_from_name, infer_b_layout, single_row_ld)

PREPACKED_LAYOUT = Layout.TN  # a packed B is [N][kp], K-major like a TN B with ldb = kp


def _torch():
    import torch
    return torch


def kiln_dtype(t, fp8: str | None = None, what: str = "tensor") -> DType:
    """kiln dtype of a torch tensor (or torch.dtype); raw torch.uint8 needs fp8='e4m3' | 'e5m2' | ...."""
    dtype = getattr(t, "dtype", t)
    return dtype_from_name(str(dtype).replace("torch.", ""), fp8, what)


def torch_dtype(dt: DType):
    return getattr(_torch(), TORCH_DTYPE_NAME[dt])


@dataclass
class Plan:
    problem: kiln_problem
    args: kiln_args
    out: object      # torch.Tensor written by the run
    device: object   # torch.device
    keep: tuple = ()  # tensors the args point into that the caller does not hold (scales made from floats)


def _require_cuda(device, tensors: dict) -> None:
    for name, t in tensors.items():
        if t is None:
            continue
        if t.device != device:
            raise ValueError(f"{name} is on {t.device}, expected {device} (every operand on one CUDA device)")
    if device.type != "cuda":
        raise ValueError(f"kiln runs on CUDA tensors; got {device}")


def _operand_a(a, a_type: DType, what="a"):
    """(batch, m, k, lda, stride_a) of A [M, K] or [batch, M, K] with unit stride along K."""
    if a.dim() not in (2, 3):
        raise ValueError(f"{what}: want [M, K] or [batch, M, K], got shape {tuple(a.shape)}")
    m, k = a.shape[-2:]
    if a.stride(-1) != 1 and k > 1:
        raise ValueError(f"{what}: A must have unit stride along K (row-major [M, K]); strides are {a.stride()}. "
                         f"Pass a.contiguous() if a copy is acceptable.")
    lda = a.stride(-2) if m > 1 else single_row_ld(k, a_type)
    batch = a.shape[0] if a.dim() == 3 else 1
    stride = a.stride(0) if batch > 1 else m * lda
    return batch, m, k, lda, stride


def _operand_b(b, b_type: DType, layout, what="b"):
    """(batch, k, n, layout, ldb, stride_b) of B(k, n) given as [K, N] or [batch, K, N]."""
    if b.dim() not in (2, 3):
        raise ValueError(f"{what}: want [K, N] or [batch, K, N], got shape {tuple(b.shape)}")
    k, n = b.shape[-2:]
    layout, ldb = infer_b_layout(k, n, b.stride(-2), b.stride(-1), b_type, layout, what)
    batch = b.shape[0] if b.dim() == 3 else 1
    stride = b.stride(0) if batch > 1 else (n if layout == Layout.TN else k) * ldb
    return batch, k, n, layout, ldb, stride


def _matrix_mn(t, batch, m, n, dt: DType, what: str):
    """(ld, stride) of a D or C tensor [M, N] or [batch, M, N] with unit stride along N."""
    if t.dim() == 2 and batch > 1:
        raise ValueError(f"{what}: a batched problem needs a [batch, M, N] tensor, got {tuple(t.shape)}")
    want = (batch, m, n) if t.dim() == 3 else (m, n)
    if tuple(t.shape) != want:
        raise ValueError(f"{what}: shape {tuple(t.shape)}, expected {want}")
    if kiln_dtype(t, what=what) != dt:
        raise TypeError(f"{what}: dtype {t.dtype}, expected {torch_dtype(dt)}")
    if t.stride(-1) != 1 and n > 1:
        raise ValueError(f"{what}: needs unit stride along N; strides are {t.stride()}")
    ld = t.stride(-2) if m > 1 else single_row_ld(n, dt)
    stride = t.stride(0) if (t.dim() == 3 and batch > 1) else m * ld
    return ld, stride


def _output(out, out_dtype, default: DType, batch_dims: tuple, m, n, device, what="out"):
    torch = _torch()
    dt = kiln_dtype(out_dtype, what="out_dtype") if out_dtype is not None else None
    if out is None:
        dt = dt if dt is not None else default
        out = torch.empty(batch_dims + (m, n), dtype=torch_dtype(dt), device=device)
    else:
        have = kiln_dtype(out, what=what)
        if dt is not None and dt != have:
            raise TypeError(f"{what}: dtype {out.dtype} disagrees with out_dtype={out_dtype}")
        dt = have
    return out, dt


def _scale(s, length: int, device, what: str):
    """(mode, tensor) for a scale: None, a Python number, a 1-element tensor or a length-element vector (f32)."""
    torch = _torch()
    if s is None:
        return ScaleMode.NONE, None
    if isinstance(s, (int, float)):
        s = torch.full((1,), float(s), dtype=torch.float32, device=device)
    if s.dtype != torch.float32:
        raise TypeError(f"{what}: scales are float32 device tensors, got {s.dtype}")
    if s.device != device:
        raise ValueError(f"{what}: on {s.device}, expected {device}")
    if s.numel() == 1:
        return ScaleMode.TENSOR, s
    if s.numel() != length or sum(1 for d in s.shape if d != 1) != 1:
        raise ValueError(f"{what}: want 1 element (per tensor) or {length} (per row/column), got {tuple(s.shape)}")
    if s.reshape(-1).stride(0) != 1:
        raise ValueError(f"{what}: vector scale must be contiguous")
    return ScaleMode.VECTOR, s


def _bias(bias, n: int, device, what="bias"):
    if bias is None:
        return None, DType.F32
    bt = kiln_dtype(bias, what=what)
    if bt not in BIAS_DTYPES:
        raise TypeError(f"{what}: bias is float32, float16 or bfloat16, got {bias.dtype}")
    if bias.numel() != n or (n > 1 and sum(1 for d in bias.shape if d != 1) != 1):
        raise ValueError(f"{what}: want [{n}], got {tuple(bias.shape)}")
    if bias.device != device:
        raise ValueError(f"{what}: on {bias.device}, expected {device}")
    if n > 1 and bias.reshape(-1).stride(0) != 1:
        raise ValueError(f"{what}: must be contiguous")
    return bias, bt


def _ptr(t):
    return t.data_ptr() if t is not None else None


def _finish(p: kiln_problem, out, a, b, c=None, sa=None, sb=None, bias=None, alpha=1.0, beta=0.0, keep=()):
    args = kiln_args(a=_ptr(a), b=_ptr(b), c=_ptr(c), d=_ptr(out), scale_a=_ptr(sa), scale_b=_ptr(sb),
                     bias=_ptr(bias), alpha=alpha, beta=beta)
    return Plan(p, args, out, a.device, keep)


def _plan_dense(a, b, *, a_type, b_type, default_out: DType, c=None, alpha=1.0, beta=0.0, scale_a=None,
                scale_b=None, bias=None, activation=None, out_dtype=None, layout=None, out=None, what="gemm"):
    batch_a, m, k, lda, stride_a = _operand_a(a, a_type)
    batch_b, kb, n, layout, ldb, stride_b = _operand_b(b, b_type, layout)
    if kb != k:
        raise ValueError(f"{what}: A is [{m}, {k}] but B is [{kb}, {n}]")
    if a.dim() != b.dim() or batch_a != batch_b:
        raise ValueError(f"{what}: A {tuple(a.shape)} and B {tuple(b.shape)} must both be 2-D or both [batch, ...]"
                         " with the same batch")
    batch_dims = (batch_a,) if a.dim() == 3 else ()
    _require_cuda(a.device, {"b": b, "c": c, "bias": bias, "out": out})
    out, d_type = _output(out, out_dtype, default_out, batch_dims, m, n, a.device)
    ldd, stride_d = _matrix_mn(out, batch_a, m, n, d_type, "out")
    sa_mode, sa = _scale(scale_a, m, a.device, "scale_a")
    sb_mode, sb = _scale(scale_b, n, a.device, "scale_b")
    bias, bias_type = _bias(bias, n, a.device)
    fields = dict(batch=batch_a, lda=lda, ldb=ldb, ldd=ldd, stride_a=stride_a, stride_b=stride_b, stride_d=stride_d,
                  scale_a=sa_mode, scale_b=sb_mode, has_bias=bias is not None, bias_type=bias_type,
                  activation=activation_from_name(activation))
    if c is not None:
        ldc, stride_c = _matrix_mn(c, batch_a, m, n, d_type, "c")
        fields.update(has_c=1, ldc=ldc, stride_c=stride_c)
    else:
        fields.update(ldc=ldd, stride_c=stride_d)
    p = make_problem(a_type, b_type, d_type, layout, m, n, k, **fields)
    keep = tuple(t for t, given in ((sa, scale_a), (sb, scale_b)) if t is not None and t is not given)
    return _finish(p, out, a, b, c, sa, sb, bias, alpha, beta, keep)


def _plan_gemm(a, b, *, c=None, alpha=1.0, beta=0.0, bias=None, activation=None, out_dtype=None, layout=None,
               out=None):
    a_type, b_type = kiln_dtype(a, what="a"), kiln_dtype(b, what="b")
    if a_type not in HALF_DTYPES or b_type not in HALF_DTYPES:
        raise TypeError(f"gemm takes float16/bfloat16 A and B (got {a.dtype}, {b.dtype}); fp8 x fp8 is "
                        f"kiln.scaled_mm, 16-bit x fp8 is kiln.mixed_mm with kiln.prepack_b")
    if beta != 0.0 and c is None:
        raise ValueError("gemm: beta != 0 needs c=")
    return _plan_dense(a, b, a_type=a_type, b_type=b_type, default_out=a_type, c=c, alpha=alpha, beta=beta,
                       bias=bias, activation=activation, out_dtype=out_dtype, layout=layout, out=out)


def _plan_scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype=None, activation=None, a_fp8=None, b_fp8=None,
                    layout=None, out=None):
    a_type, b_type = kiln_dtype(a, a_fp8, "a"), kiln_dtype(b, b_fp8, "b")
    if a_type not in FP8_DTYPES or b_type not in FP8_DTYPES:
        raise TypeError(f"scaled_mm takes fp8 A and B (got {a.dtype}, {b.dtype}); use a_fp8=/b_fp8= for uint8")
    return _plan_dense(a, b, a_type=a_type, b_type=b_type, default_out=DType.BF16, scale_a=scale_a,
                       scale_b=scale_b, bias=bias, activation=activation, out_dtype=out_dtype, layout=layout,
                       out=out, what="scaled_mm")


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


def prepack_b(b, *, layout=None, fp8: str | None = None) -> PackedB:
    """Pack fp8 B(k, n), given as [K, N] (NN) or a transposed view of [N, K] storage (TN), on its device."""
    torch = _torch()
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

    Returns the packed [N, kp] uint8 bytes as the same kind of array. For cross-checking prepack_b.
    """
    lib = load_library()
    is_torch = type(b).__module__.startswith("torch")
    if is_torch:
        if b.device.type != "cpu":
            raise ValueError("prepack_b_host takes host memory; use prepack_b for device tensors")
        if b.dtype.itemsize != 1:
            raise TypeError(f"prepack_b_host: want 1-byte elements, got {b.dtype}")
        if fp8 is not None or b.dtype != _torch().uint8:
            kiln_dtype(b, fp8, "b")  # validates the fp8 claim
        shape, strides, ptr = tuple(b.shape), tuple(b.stride()), b.data_ptr()
    else:
        if getattr(b, "itemsize", None) != 1:
            raise TypeError("prepack_b_host: want a numpy array of 1-byte elements")
        shape, strides, ptr = b.shape, b.strides, b.ctypes.data
    if len(shape) != 2:
        raise ValueError(f"prepack_b_host: want B as [K, N], got shape {shape}")
    k, n = shape
    layout, ld = infer_b_layout(k, n, strides[0], strides[1], DType.E4M3, layout, "prepack_b_host")
    size, kp = ctypes.c_size_t(), ctypes.c_int64()
    check(lib.kiln_prepack_b_size(n, k, ctypes.byref(size), ctypes.byref(kp)), "kiln_prepack_b_size")
    if is_torch:
        out = _torch().empty((n, kp.value), dtype=_torch().uint8)
        dst = out.data_ptr()
    else:
        import numpy as np
        out = np.empty((n, kp.value), dtype=np.uint8)
        dst = out.ctypes.data
    if size.value != n * kp.value:
        raise RuntimeError(f"kiln_prepack_b_size says {size.value} bytes for [{n}, {kp.value}]")
    check(lib.kiln_prepack_b(ptr, int(layout), n, k, ld, dst, size.value), "kiln_prepack_b")
    return out


def _plan_mixed_mm(a, packed_b, *, scale_b=None, bias=None, out_dtype=None, activation=None, out=None):
    if not isinstance(packed_b, PackedB):
        raise TypeError("mixed_mm takes B from kiln.prepack_b(...)")
    a_type = kiln_dtype(a, what="a")
    if a_type not in HALF_DTYPES:
        raise TypeError(f"mixed_mm takes a float16/bfloat16 A, got {a.dtype}")
    lead = tuple(a.shape[:-1])
    k = a.shape[-1]
    if a.dim() < 2:
        raise ValueError(f"mixed_mm: want A as [..., M, K], got shape {tuple(a.shape)}")
    if k != packed_b.k:
        raise ValueError(f"mixed_mm: A has K={k}, packed B has K={packed_b.k}")
    a2 = a
    if a.dim() > 2:
        try:
            a2 = a.view(-1, k)
        except RuntimeError:
            raise ValueError(f"mixed_mm: the leading dims of A {tuple(a.shape)} (strides {a.stride()}) do not "
                             f"flatten into rows; pass a contiguous A") from None
    _, m, _, lda, _ = _operand_a(a2, a_type)
    n = packed_b.n
    _require_cuda(a.device, {"packed_b": packed_b.data, "bias": bias, "out": out})
    if out is not None and tuple(out.shape) != lead + (n,):
        raise ValueError(f"out: shape {tuple(out.shape)}, expected {lead + (n,)}")
    out, d_type = _output(out, out_dtype, a_type, lead[:-1], lead[-1], n, a.device)
    try:
        out2 = out.view(-1, n) if out.dim() > 2 else out
    except RuntimeError:
        raise ValueError(f"out: the leading dims of {tuple(out.shape)} (strides {out.stride()}) do not flatten "
                         f"into rows") from None
    ldd, _ = _matrix_mn(out2, 1, m, n, d_type, "out")
    sb_mode, sb = _scale(scale_b, n, a.device, "scale_b")
    bias, bias_type = _bias(bias, n, a.device)
    p = make_problem(a_type, packed_b.dtype, d_type, PREPACKED_LAYOUT, m, n, k, b_prepacked=1, lda=lda,
                     ldb=packed_b.kp, ldc=ldd, ldd=ldd, scale_b=sb_mode, has_bias=bias is not None,
                     bias_type=bias_type, activation=activation_from_name(activation))
    p.stride_a, p.stride_b, p.stride_c, p.stride_d = m * lda, n * packed_b.kp, m * ldd, m * ldd
    keep = (sb,) if sb is not None and sb is not scale_b else ()
    return _finish(p, out, a2, packed_b.data, None, None, sb, bias, 1.0, 0.0, keep)


def gemm(a, b, *, c=None, alpha=1.0, beta=0.0, bias=None, activation=None, out_dtype=None, layout=None, out=None,
         algo=None):
    """D = act(alpha * A @ B + beta * C + bias) for float16/bfloat16 A [M, K] / [batch, M, K] and B(k, n) as
    [K, N] (NN) or a transposed view of [N, K] storage (TN). D defaults to A's dtype."""
    plan = _plan_gemm(a, b, c=c, alpha=alpha, beta=beta, bias=bias, activation=activation, out_dtype=out_dtype,
                      layout=layout, out=out)
    run(plan.problem, plan.args, algo, plan.device, "gemm")
    return plan.out


def scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype=None, activation=None, a_fp8=None, b_fp8=None,
              layout=None, out=None, algo=None):
    """Like torch._scaled_mm: fp8 A [M, K] row-major, B(k, n) [K, N] column-major (b.t() contiguous), scales
    float32 per tensor (1 element) or per row of A / column of B. Batched [batch, ...] too. D defaults to bf16."""
    plan = _plan_scaled_mm(a, b, scale_a, scale_b, bias=bias, out_dtype=out_dtype, activation=activation,
                           a_fp8=a_fp8, b_fp8=b_fp8, layout=layout, out=out)
    run(plan.problem, plan.args, algo, plan.device, "scaled_mm")
    return plan.out


def mixed_mm(a, packed_b, *, scale_b=None, bias=None, out_dtype=None, activation=None, out=None, algo=None):
    """act(A @ upcast(B) * scale_b + bias) for float16/bfloat16 A [..., K] and B from prepack_b. D defaults to A's
    dtype; scale_b is None, a number, a 1-element or an [N] float32 tensor."""
    plan = _plan_mixed_mm(a, packed_b, scale_b=scale_b, bias=bias, out_dtype=out_dtype, activation=activation,
                          out=out)
    run(plan.problem, plan.args, algo, plan.device, "mixed_mm")
    return plan.out


_PLANNERS = {"gemm": _plan_gemm, "scaled_mm": _plan_scaled_mm, "mixed_mm": _plan_mixed_mm}
_OPS = {gemm: "gemm", scaled_mm: "scaled_mm", mixed_mm: "mixed_mm"}


def plan(op, *args, **kwargs) -> Plan:
    """The problem, arguments and output an op would run with (the output is allocated, nothing is launched)."""
    name = _OPS.get(op, op)
    if name not in _PLANNERS:
        raise ValueError(f"op must be one of {sorted(_PLANNERS)} (or the function), got {op!r}")
    return _PLANNERS[name](*args, **kwargs)


def _device_index(device) -> int:
    return device.index if device.index is not None else _torch().cuda.current_device()


def query(op, *args, k: int = 8, **kwargs) -> list:
    """Top-k candidate AlgoInfo (best first) for the call op(*args, **kwargs), pointer alignment included."""
    pl = plan(op, *args, **kwargs)
    return query_problem(pl.problem, k, pl.args, _device_index(pl.device))


def algos(op, *args, k: int = 8, **kwargs) -> list:
    """Kernel names of query(...)."""
    return [info.name for info in query(op, *args, k=k, **kwargs)]


def explain(op, *args, **kwargs) -> str:
    """kiln_explain's account of how the call op(*args, **kwargs) would select its kernel."""
    pl = plan(op, *args, **kwargs)
    return explain_problem(pl.problem, pl.args, _device_index(pl.device))
