"""Grouped (mixture-of-experts) fp8 GEMM (kiln.h "Grouped GEMM"): kiln.grouped_mm on torch tensors and its float64
reference.

    # contiguous: the tokens of all experts back to back, offs[g] = end row of expert g (torch's `offs`)
    y = kiln.grouped_mm(x, w, offs=offs, scale_a=sx, scale_b=sw)          # x [T, K], w [G, N, K] -> y [T, N]
    # masked: one padded batch per expert, masked_m[g] valid rows, read on the device (CUDA-graph safe)
    y = kiln.grouped_mm(x, w, masked_m=counts, scale_a=sx, scale_b=sw)    # x [G, M, K] -> y [G, M, N]

A and B are fp8 (e4m3/e5m2), K-major: A row-major, B [G, N, K] row-major (or its [G, K, N] transposed view, as
torch._scaled_grouped_mm takes it). The group sizes stay on the device: the launch never reads them, so the call
does not synchronize. Rows past a group's end (contiguous: past offs[-1]; masked: past masked_m[g]) are not written.

Scales (float32):
  tensor     scale_a and scale_b with one element each;
  rowwise    scale_a per row of A ([T] or [T, 1]; masked [G, M] or [G, M, 1]), scale_b per column of each group's B
             ([G, N]; a 3-D scale_b is read as block scales) -- torch._scaled_grouped_mm's rowwise recipe;
  block      scale_b 3-D [G, ceil(N/128), ceil(K/128)] (128x128 blocks) or [G, N, ceil(K/128)] (1x128), scale_a
             [T, ceil(K/128)] (masked [G, M, ceil(K/128)]), any strides -- DeepGEMM's recipe, as block_scaled_mm.
bias: [N] shared or [G, N] per group (float32, float16 or bfloat16).
"""
from __future__ import annotations

from ._blockscaled import GROUP, groups_of
from ._capi import DType, GroupMode, Layout, ScaleMode

WHAT = "grouped_mm"


def _torch():
    from ._tensors import torch_module
    return torch_module(WHAT)


def _f32(t, name: str, device):
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{WHAT}: {name} must be a float32 torch.Tensor, got {type(t).__name__}")
    if t.dtype != torch.float32:
        raise TypeError(f"{WHAT}: {name} must be float32, got {t.dtype}")
    if t.device != device:
        raise ValueError(f"{WHAT}: {name} is on {t.device}, expected {device} (every operand on one device)")
    return t


def _index(t, name: str, groups: int, device):
    torch = _torch()
    if not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != 1 or t.numel() != groups:
        raise TypeError(f"{WHAT}: {name} must be an int32 tensor of {groups} elements (one per group), got "
                        f"{getattr(t, 'dtype', type(t).__name__)} {tuple(getattr(t, 'shape', ()))}")
    if t.device != device:
        raise ValueError(f"{WHAT}: {name} is on {t.device}, expected {device}")
    return t.contiguous()


def _as_gnk(b, k: int):
    """The [G, N, K] view (K contiguous) of B given as [G, N, K] or as its [G, K, N] transposed view."""
    if b.dim() != 3:
        raise ValueError(f"{WHAT}: B is [groups, N, K] (or its [groups, K, N] transposed view), got {tuple(b.shape)}")
    if b.shape[2] == k and (b.stride(2) == 1 or b.shape[2] == 1):
        return b
    if b.shape[1] == k and (b.stride(1) == 1 or b.shape[1] == 1):
        return b.transpose(1, 2)
    raise ValueError(f"{WHAT}: B {tuple(b.shape)} with strides {b.stride()} is neither [groups, N, K={k}] with K "
                     f"contiguous nor its transposed view")


def _weights(b, k: int):
    """(groups, n, ldb, stride_b) of B (_as_gnk)."""
    b = _as_gnk(b, k)
    return b.shape[0], b.shape[1], max(b.stride(1), k), b.stride(0)


def _plan(a, b, *, offs, masked_m, scale_a, scale_b, bias, out_dtype, out):
    from . import _ops
    from ._handle import make_problem
    from ._tensors import bias_of, kiln_dtype, output, require_tensor, same_device
    from ._types import FP8_DTYPES

    torch = _torch()
    require_tensor(a, WHAT, "a")
    require_tensor(b, WHAT, "b")
    require_tensor(out, WHAT, "out", optional=True)
    a_type, b_type = kiln_dtype(a, what="a"), kiln_dtype(b, what="b")
    if a_type not in FP8_DTYPES or b_type not in FP8_DTYPES:
        raise TypeError(f"{WHAT} takes fp8 A and B, got {a.dtype} and {b.dtype}")
    if (offs is None) == (masked_m is None):
        raise ValueError(f"{WHAT}: pass exactly one of offs= (contiguous groups) and masked_m= (masked groups)")
    same_device(a.device, {"b": b, "bias": bias, "out": out, "offs": offs, "masked_m": masked_m}, WHAT)
    masked = masked_m is not None
    if a.dim() != (3 if masked else 2):
        raise ValueError(f"{WHAT}: A is [tokens, K] with offs=, [groups, M, K] with masked_m=; got "
                         f"{tuple(a.shape)}")
    k = a.shape[-1]
    if a.stride(-1) != 1 and k > 1:
        raise ValueError(f"{WHAT}: A must be K-contiguous (row-major), strides {a.stride()}")
    groups, n, ldb, stride_b = _weights(b, k)
    m = a.shape[-2]
    lda = max(a.stride(-2), k) if m > 1 else k
    stride_a = a.stride(0) if masked else m * lda
    if masked and a.shape[0] != groups:
        raise ValueError(f"{WHAT}: A has {a.shape[0]} groups, B {groups}")
    index = _index(masked_m if masked else offs, "masked_m" if masked else "offs", groups, a.device)
    shape = (groups, m, n) if masked else (m, n)
    if out is None and out_dtype not in (None, torch.bfloat16, torch.float16, torch.float32):
        raise TypeError(f"{WHAT}: out_dtype must be bfloat16, float16 or float32, got {out_dtype}")
    out, d_type = output(out, out_dtype, DType.BF16, shape[:-2], m, n, a.device)
    if tuple(out.shape) != shape or out.stride(-1) != 1:
        raise ValueError(f"{WHAT}: out must be {shape} with contiguous rows, got {tuple(out.shape)}")
    ldd = max(out.stride(-2), n) if m > 1 else n
    stride_d = out.stride(0) if masked else m * ldd
    fields = dict(lda=lda, ldb=ldb, ldd=ldd, ldc=ldd, stride_a=stride_a, stride_b=stride_b, stride_d=stride_d,
                  stride_c=stride_d, group_mode=GroupMode.MASKED if masked else GroupMode.CONTIGUOUS, groups=groups)
    if scale_a is None or scale_b is None:
        raise ValueError(f"{WHAT}: fp8 needs scale_a and scale_b (1-element tensors for tensor scales)")
    _f32(scale_a, "scale_a", a.device)
    _f32(scale_b, "scale_b", a.device)
    fields.update(_scale_fields(scale_a, scale_b, masked, groups, m, n, k))
    if bias is not None and bias.dim() == 2:
        if tuple(bias.shape) != (groups, n) or bias.stride(1) != 1:
            raise ValueError(f"{WHAT}: a per-group bias is [groups, N] = [{groups}, {n}] with contiguous rows")
        _, bias_type = bias_of(bias[0], n, a.device, WHAT)  # (type and device checks; groups >= 1 here)
        fields.update(has_bias=True, bias_type=bias_type, bias_stride_g=bias.stride(0))
    else:
        bias, bias_type = bias_of(bias, n, a.device, WHAT)
        fields.update(has_bias=bias is not None, bias_type=bias_type, bias_stride_g=0)
    p = make_problem(a_type, b_type, d_type, Layout.TN, m, n, k, **fields)
    plan = _ops._finish(p, out, a, b, None, scale_a, scale_b, bias, keep=(index,))
    plan.args.group_index = index.data_ptr()
    return plan


def _scale_fields(sa, sb, masked: bool, groups: int, m: int, n: int, k: int) -> dict:
    gk = groups_of(k)
    if sb.dim() == 3:  # block scales
        if sb.shape[0] != groups or sb.shape[2] != gk or sb.shape[1] not in (-(-n // GROUP), n):
            raise ValueError(f"{WHAT}: block scale_b is [groups, ceil(N/128), ceil(K/128)] or [groups, N, "
                             f"ceil(K/128)] = [{groups}, {-(-n // GROUP)} or {n}, {gk}], got {tuple(sb.shape)}")
        want_a = (groups, m, gk) if masked else (m, gk)
        if tuple(sa.shape) != want_a:
            raise ValueError(f"{WHAT}: block scale_a is {list(want_a)}, got {tuple(sa.shape)}")
        block_n = GROUP if sb.shape[1] == -(-n // GROUP) else 1
        return dict(scale_a=ScaleMode.BLOCK, scale_b=ScaleMode.BLOCK, scale_a_stride_m=sa.stride(-2),
                    scale_a_stride_k=sa.stride(-1), scale_a_stride_g=sa.stride(0) if masked else 0,
                    scale_b_stride_n=sb.stride(1), scale_b_stride_k=sb.stride(2), scale_b_stride_g=sb.stride(0),
                    scale_b_block_n=block_n)
    fields = {}
    if sa.numel() == 1:
        fields.update(scale_a=ScaleMode.TENSOR)
    else:
        want = (groups, m) if masked else (m,)
        rows = sa.reshape(want) if tuple(sa.shape) == want + (1,) else sa  # [..., 1] columns as torch has them
        if tuple(rows.shape) != want or rows.stride(-1) != 1:
            raise ValueError(f"{WHAT}: rowwise scale_a is {list(want)} (contiguous), got {tuple(sa.shape)}")
        fields.update(scale_a=ScaleMode.VECTOR, scale_a_stride_g=rows.stride(0) if masked else 0)
    if sb.numel() == 1:
        fields.update(scale_b=ScaleMode.TENSOR)
    else:
        cols = sb
        if tuple(cols.shape) != (groups, n) or cols.stride(-1) != 1:
            raise ValueError(f"{WHAT}: rowwise scale_b is [groups, N] = [{groups}, {n}], got {tuple(sb.shape)}")
        fields.update(scale_b=ScaleMode.VECTOR, scale_b_stride_g=cols.stride(0))
    return fields


def grouped_mm(a, b, *, offs=None, masked_m=None, scale_a=None, scale_b=None, bias=None, out_dtype=None, out=None,
               algo=None):
    """Grouped fp8 GEMM: y[rows of group g] = (a[rows] @ b[g]^T) with the scales (module docstring). Exactly one of
    offs= (int32 [G], cumulative end rows: contiguous groups of A [T, K] -> y [T, N]) and masked_m= (int32 [G]: A
    [G, M, K] -> y [G, M, N]). Both stay on the device. out_dtype: bfloat16 (default), float16 or float32."""
    from . import _ops
    plan = _plan(a, b, offs=offs, masked_m=masked_m, scale_a=scale_a, scale_b=scale_b, bias=bias,
                 out_dtype=out_dtype, out=out)
    return _ops._run_whole(plan, algo, WHAT, None)


def grouped_reference(a, b, *, offs=None, masked_m=None, scale_a=None, scale_b=None, bias=None):
    """float64 of what grouped_mm computes, from the same tensors (groups sized on the host here), with NaN in the
    rows grouped_mm does not write. Block scales are applied per 128 of K, as the kernel does."""
    torch = _torch()
    masked = masked_m is not None
    k = a.shape[-1]
    g_count = b.shape[0]
    bt = _as_gnk(b, k)
    n = bt.shape[1]
    a64 = a.float().double()
    b64 = bt.float().double()
    block = scale_b.dim() == 3
    shape = (g_count, a.shape[1], n) if masked else (a.shape[0], n)
    y = torch.full(shape, float("nan"), dtype=torch.float64, device=a.device)
    bounds = []
    if masked:
        counts = masked_m.tolist()
        bounds = [(g, 0, max(0, min(c, a.shape[1]))) for g, c in enumerate(counts)]
    else:
        end = 0
        for g, e in enumerate(offs.tolist()):
            start = end
            end = min(max(e, start), a.shape[0])
            bounds.append((g, start, end))
    for g, r0, r1 in bounds:
        if r1 <= r0:
            continue
        x = a64[g, r0:r1] if masked else a64[r0:r1]
        w = b64[g]
        if block:
            sa = (scale_a[g, r0:r1] if masked else scale_a[r0:r1]).double()
            sb = scale_b[g].double()
            if sb.shape[0] != n:  # 128x128 blocks (with n <= 1 the two granularities coincide)
                sb = sb.repeat_interleave(GROUP, dim=0)[:n]
            acc = torch.zeros((r1 - r0, n), dtype=torch.float64, device=a.device)
            for gi in range(groups_of(k)):
                lo, hi = gi * GROUP, min(k, (gi + 1) * GROUP)
                acc += (x[:, lo:hi] @ w[:, lo:hi].t()) * sa[:, gi:gi + 1] * sb[:, gi].reshape(1, n)
        else:
            acc = x @ w.t()
            if scale_a.numel() == 1:
                acc = acc * float(scale_a.reshape(-1)[0])
            else:
                sa = scale_a.reshape(g_count, -1)[g, r0:r1] if masked else scale_a.reshape(-1)[r0:r1]
                acc = acc * sa.double().reshape(-1, 1)
            if scale_b.numel() == 1:
                acc = acc * float(scale_b.reshape(-1)[0])
            else:
                acc = acc * scale_b.reshape(g_count, n)[g].double().reshape(1, n)
        if bias is not None:
            acc = acc + (bias[g] if bias.dim() == 2 else bias).double().reshape(1, n)
        if masked:
            y[g, r0:r1] = acc
        else:
            y[r0:r1] = acc
    return y


def _register_with_ops() -> None:
    """kiln.plan / query / algos / explain take grouped_mm like the other ops."""
    from . import _ops
    _ops._PLANNERS[WHAT] = lambda a, b, **kw: _plan(a, b, **{**_DEFAULTS, **kw})
    _ops._OPS[grouped_mm] = WHAT


_DEFAULTS = dict(offs=None, masked_m=None, scale_a=None, scale_b=None, bias=None, out_dtype=None, out=None)

__all__ = ["grouped_mm", "grouped_reference"]
