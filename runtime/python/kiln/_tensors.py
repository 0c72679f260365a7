"""torch tensors -> what a kiln_problem and kiln_args say about them: kinds checked, sizes, leading dimensions,
batch strides and pointers (in elements, like the C API).

Torch is imported on first use (torch_module()); without it the functions here raise TorchRequiredError, an
ImportError that says what works without torch.

Empty tensors are valid operands (the C API does empty products as cuBLAS does, kiln.h "Empty problems"). An extent
of 0 leaves a leading dimension or a batch stride meaningless (torch reports strides of 1 there), so one that
satisfies every rule is chosen.
"""
from __future__ import annotations

from ._capi import DType, Layout, ScaleMode
from ._convert import as_float32
from ._types import BIAS_DTYPES, TORCH_DTYPE_NAME, dtype_from_name, infer_b_layout, single_row_ld

NO_TORCH_WORKS = ("make_problem, query_problem, explain_problem, set_arch, algo_by_name, prepack_numpy and "
                  "prepack_b_host (numpy)")


class TorchRequiredError(ImportError):
    """A kiln function that takes or makes torch tensors was called where torch does not import."""


def torch_module(what: str = "this function"):
    """The torch module, or TorchRequiredError naming the kiln function that needs it."""
    try:
        import torch
    except ImportError as exc:
        raise TorchRequiredError(f"kiln.{what} needs PyTorch, which does not import here ({exc}); without torch, "
                                 f"kiln's ctypes layer still works: {NO_TORCH_WORKS}", name="torch") from exc
    return torch


def require_tensor(t, op: str, what: str, optional: bool = False) -> None:
    """TypeError "op: what must be a torch.Tensor, got NoneType" for anything that is not a tensor."""
    if optional and t is None:
        return
    torch = torch_module(op)
    if not isinstance(t, torch.Tensor):
        want = "a torch.Tensor or None" if optional else "a torch.Tensor"
        raise TypeError(f"{op}: {what} must be {want}, got {type(t).__name__}")


def kiln_dtype(t, fp8: str | None = None, what: str = "tensor") -> DType:
    """kiln dtype of a torch tensor, a torch.dtype or a kiln DType; raw torch.uint8 needs fp8='e4m3' | 'e5m2' | ...."""
    if isinstance(t, DType):
        return t
    torch = torch_module("kiln_dtype")
    if isinstance(t, torch.Tensor):
        dtype = t.dtype
    elif isinstance(t, torch.dtype):
        dtype = t
    else:
        raise TypeError(f"{what}: want a torch.Tensor or torch.dtype, got {type(t).__name__}")
    if fp8 is not None and not isinstance(fp8, str):
        raise TypeError(f"{what}: fp8= takes a name such as 'e4m3', got {type(fp8).__name__}")
    return dtype_from_name(str(dtype).replace("torch.", ""), fp8, what)


def torch_dtype(dt: DType):
    return getattr(torch_module("torch_dtype"), TORCH_DTYPE_NAME[DType(dt)])


def same_device(device, tensors: dict, op: str) -> None:
    """Every given tensor on `device` (CUDA for runs; query/explain also take CPU tensors)."""
    for name, t in tensors.items():
        if t is not None and t.device != device:
            raise ValueError(f"{op}: {name} is on {t.device}, expected {device} (every operand on one device)")


def device_index(device) -> int:
    """The CUDA device index of a torch device; -1 (the device-less handle) for any other device."""
    if device.type != "cuda":
        return -1
    return device.index if device.index is not None else torch_module().cuda.current_device()


def _ld(rows: int, cols: int, stride_rows: int, dt: DType) -> int:
    """Leading dimension of a [rows, cols] matrix: torch's row stride, or, where there is at most one row or no
    column (the stride means nothing), one that keeps the kernels' 16-byte alignment predicates true."""
    return stride_rows if rows > 1 and cols > 0 else single_row_ld(cols, dt)


def operand_a(a, a_type: DType, what="a"):
    """(batch, m, k, lda, stride_a) of A [M, K] or [batch, M, K] with unit stride along K."""
    if a.dim() not in (2, 3):
        raise ValueError(f"{what}: want [M, K] or [batch, M, K], got shape {tuple(a.shape)}")
    m, k = a.shape[-2:]
    if a.stride(-1) != 1 and k > 1 and m > 0:
        raise ValueError(f"{what}: A must have unit stride along K (row-major [M, K]); strides are {a.stride()}. "
                         f"Pass a.contiguous() if a copy is acceptable.")
    lda = _ld(m, k, a.stride(-2), a_type)
    batch = a.shape[0] if a.dim() == 3 else 1
    stride = a.stride(0) if batch > 1 and m * k > 0 else m * lda
    return batch, m, k, lda, stride


def operand_b(b, b_type: DType, layout, what="b"):
    """(batch, k, n, layout, ldb, stride_b) of B(k, n) given as [K, N] or [batch, K, N]."""
    if b.dim() not in (2, 3):
        raise ValueError(f"{what}: want [K, N] or [batch, K, N], got shape {tuple(b.shape)}")
    k, n = b.shape[-2:]
    layout, ldb = infer_b_layout(k, n, b.stride(-2), b.stride(-1), b_type, layout, what)
    batch = b.shape[0] if b.dim() == 3 else 1
    stride = b.stride(0) if batch > 1 and k * n > 0 else (n if layout == Layout.TN else k) * ldb
    return batch, k, n, layout, ldb, stride


def matrix_mn(t, batch, m, n, dt: DType, what: str):
    """(ld, stride) of a D or C tensor [M, N] or [batch, M, N] with unit stride along N."""
    if t.dim() == 2 and batch > 1:
        raise ValueError(f"{what}: a batched problem needs a [batch, M, N] tensor, got {tuple(t.shape)}")
    want = (batch, m, n) if t.dim() == 3 else (m, n)
    if tuple(t.shape) != want:
        raise ValueError(f"{what}: shape {tuple(t.shape)}, expected {want}")
    if kiln_dtype(t, what=what) != dt:
        raise TypeError(f"{what}: dtype {t.dtype}, expected {torch_dtype(dt)}")
    if t.stride(-1) != 1 and n > 1 and m > 0:
        raise ValueError(f"{what}: needs unit stride along N; strides are {t.stride()}")
    ld = _ld(m, n, t.stride(-2), dt)
    stride = t.stride(0) if (t.dim() == 3 and batch > 1 and m * n > 0) else m * ld
    return ld, stride


def output(out, out_dtype, default: DType, batch_dims: tuple, m, n, device, what="out"):
    """(out, d_type): the caller's out (checked for kind; shape by matrix_mn) or a new one."""
    torch = torch_module()
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


def scale(s, length: int, device, what: str, op: str):
    """(mode, tensor) for a scale: None, a Python number, a 1-element tensor or a length-element vector (f32)."""
    torch = torch_module(op)
    if s is None:
        return ScaleMode.NONE, None
    if isinstance(s, (int, float)) and not isinstance(s, bool):
        s = torch.full((1,), as_float32(s, f"{op}: {what}"), dtype=torch.float32, device=device)
    if not isinstance(s, torch.Tensor):
        raise TypeError(f"{op}: {what} must be None, a number or a float32 torch.Tensor, got {type(s).__name__}")
    if s.dtype != torch.float32:
        raise TypeError(f"{what}: scales are float32 device tensors, got {s.dtype}")
    if s.device != device:
        raise ValueError(f"{what}: on {s.device}, expected {device}")
    if s.numel() == 1:
        return ScaleMode.TENSOR, s
    if s.numel() != length or sum(1 for d in s.shape if d != 1) != 1:
        raise ValueError(f"{what}: want 1 element (per tensor) or {length} (per row/column), got {tuple(s.shape)}")
    if length > 0 and s.reshape(-1).stride(0) != 1:
        raise ValueError(f"{what}: vector scale must be contiguous")
    return ScaleMode.VECTOR, s


def bias_of(bias, n: int, device, op: str, what="bias"):
    """(tensor, bias_type) of a bias [N] (or None)."""
    require_tensor(bias, op, what, optional=True)
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


def pointer(t):
    """The address kiln_args gets for a tensor: None (NULL) for no tensor or one without elements (torch's data
    pointer of those means nothing; kiln.h reads no pointer of an empty operand)."""
    if t is None or t.numel() == 0:
        return None
    return t.data_ptr()
