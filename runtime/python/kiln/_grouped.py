"""Grouped (mixture-of-experts) fp8 GEMM (kiln.h "Grouped GEMM"): kiln.grouped_mm on torch tensors and its float64
reference.

    # contiguous: the tokens of all experts back to back, offs[g] = end row of expert g (torch's `offs`)
    y = kiln.grouped_mm(x, w, offs=offs, scale_a=sx, scale_b=sw)          # x [T, K], w [G, N, K] -> y [T, N]
    # the same layout given as DeepGEMM's per-row expert index (-1: a padding row)
    y = kiln.grouped_mm(x, w, m_indices=idx, scale_a=sx, scale_b=sw)      # idx [T] -> y [T, N]
    # masked: one padded batch per expert, masked_m[g] valid rows, read on the device (CUDA-graph safe)
    y = kiln.grouped_mm(x, w, masked_m=counts, scale_a=sx, scale_b=sw)    # x [G, M, K] -> y [G, M, N]
    # k-grouped (the weight gradient): 2-D A and B whose K columns are the groups' back to back, offs[g] = end column
    dw = kiln.grouped_mm(dy_t, x_t, offs=offs, scale_a=sa, scale_b=sb)    # [M, K], [N, K] -> dw [G, M, N]

A and B are fp8 (e4m3/e5m2), K-major: A row-major, B [G, N, K] row-major (or its [G, K, N] transposed view, as
torch._scaled_grouped_mm takes it). The group sizes stay on the device: the launch never reads them, so the call
does not synchronize. Rows past a group's end (contiguous: past offs[-1]; masked: past masked_m[g]) are not written.

m_indices (int32 [T], on the device): row t belongs to expert m_indices[t], -1 marks a padding row; each expert's
rows are one run and the experts come in order (DeepGEMM's contiguous layout: runs aligned to 128 with padding rows
between them). It becomes cumulative end rows on the device, without a synchronization (CUDA-graph safe): end(g) =
1 + the last row of expert g, or end(g - 1) for an expert without rows. The rows of every expert are exact; what
grouped_mm writes into a padding row is unspecified (as DeepGEMM's): a padding row before an expert's run is
computed as one of that expert's rows, one after the last run is not written. An index >= G is ignored, its row
unspecified like a padding row's.

k-grouped (offs= with a 2-D B, torch._scaled_grouped_mm's 2d-2d case): A [M, K] and B [N, K] (or its [K, N]
transposed view) hold the groups' K columns back to back; offs int32 [G] are their cumulative end columns, and
y[g] = A[:, cols of g] @ B[:, cols of g]^T -> [G, M, N]. The kernel clamps each end into [end(g - 1), K] and, unless
it is K, rounds it down to a multiple of 128 (every end but the last should be one); an empty group gives y[g] =
bias (zeros without one).

Scales (float32):
  tensor     scale_a and scale_b with one element each;
  rowwise    scale_a per row of A ([T] or [T, 1]; masked [G, M] or [G, M, 1]), scale_b per column of each group's B
             ([G, N]; a 3-D scale_b is read as block scales) -- torch._scaled_grouped_mm's rowwise recipe;
             k-grouped: scale_a per group and row of A ([G, M], [G * M] or [G, M, 1]), scale_b per group and
             column ([G, N], [G * N] or [G, N, 1]);
  block      scale_b 3-D [G, ceil(N/128), ceil(K/128)] (128x128 blocks) or [G, N, ceil(K/128)] (1x128), scale_a
             [T, ceil(K/128)] (masked [G, M, ceil(K/128)]), any strides -- DeepGEMM's recipe, as block_scaled_mm;
             k-grouped: the groups of 128 along all of K, as a dense block-scaled GEMM: scale_a [M, ceil(K/128)] and
             scale_b [N, ceil(K/128)] (1x128, the weight-gradient recipe) or [ceil(N/128), ceil(K/128)] (128x128),
             any strides (DeepGEMM's M-major scale_a, a [ceil(K/128), M] tensor's .t(), included).
  A k-grouped call tells rowwise from block scales by their shapes (and rowwise scales' unit stride). The two
  readings fit the same tensors only where G = M = ceil(K/128) = N (row-major 2-D scales): such a call raises
  ValueError; pass rowwise scales flat ([G * M], [G * N]) or block scale_a M-major.
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


def _as_nk(b, k: int):
    """The [N, K] view (K contiguous) of a k-grouped B given as [N, K] or as its [K, N] transposed view."""
    if b.dim() == 2:
        if b.shape[1] == k and (b.stride(1) == 1 or k == 1):
            return b
        if b.shape[0] == k and (b.stride(0) == 1 or k == 1):
            return b.t()
    raise ValueError(f"{WHAT}: a k-grouped B is [N, K={k}] with K contiguous (or its [K, N] transposed view), got "
                     f"{tuple(b.shape)} with strides {b.stride()}")


def _mode(offs, masked_m, m_indices, b) -> GroupMode:
    """The group mode of a call: which of offs= / masked_m= / m_indices= it passes, and B's rank with offs=."""
    given = [name for name, v in (("offs", offs), ("masked_m", masked_m), ("m_indices", m_indices)) if v is not None]
    if len(given) != 1:
        raise ValueError(f"{WHAT}: pass exactly one of offs= (contiguous groups, or k-grouped with a 2-D B), "
                         f"masked_m= (masked groups) and m_indices= (an expert index per row); got "
                         f"{', '.join(given) or 'none'}")
    if masked_m is not None:
        return GroupMode.MASKED
    return GroupMode.K if offs is not None and b.dim() == 2 else GroupMode.CONTIGUOUS


def _ends_of_indices(idx, groups: int):
    """Cumulative end rows (int32 [groups], on idx's device) of DeepGEMM's per-row expert index, computed there
    without a synchronization: end(g) = 1 + the last row whose index is g, or end(g - 1) where there is none. Rows
    with an index < 0 (padding) or >= groups count for no expert."""
    torch = _torch()
    rows = idx.shape[0]
    valid = (idx >= 0) & (idx < groups)
    expert = torch.where(valid, idx, torch.zeros_like(idx)).long()
    last = torch.where(valid, torch.arange(1, rows + 1, dtype=torch.int32, device=idx.device), torch.zeros_like(idx))
    ends = torch.zeros(groups, dtype=torch.int32, device=idx.device).scatter_reduce(0, expert, last, "amax")
    return torch.cummax(ends, 0).values.contiguous()


def _row_indices(t, rows: int, device):
    torch = _torch()
    if not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != 1 or t.numel() != rows:
        raise TypeError(f"{WHAT}: m_indices must be an int32 tensor of {rows} elements (an expert index per row of A, "
                        f"-1 for padding), got {getattr(t, 'dtype', type(t).__name__)} "
                        f"{tuple(getattr(t, 'shape', ()))}")
    if t.device != device:
        raise ValueError(f"{WHAT}: m_indices is on {t.device}, expected {device}")
    return t.contiguous()


def _k_offs(t, device):
    torch = _torch()
    if not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != 1:
        raise TypeError(f"{WHAT}: offs of a k-grouped call must be a 1-D int32 tensor (the groups' cumulative end "
                        f"columns), got {getattr(t, 'dtype', type(t).__name__)} {tuple(getattr(t, 'shape', ()))}")
    if t.numel() < 1:
        raise ValueError(f"{WHAT}: offs has no element: a k-grouped call has at least one group")
    if t.device != device:
        raise ValueError(f"{WHAT}: offs is on {t.device}, expected {device}")
    return t.contiguous()


def _fp8_operands(a, b, out):
    from ._tensors import kiln_dtype, require_tensor
    from ._types import FP8_DTYPES

    require_tensor(a, WHAT, "a")
    require_tensor(b, WHAT, "b")
    require_tensor(out, WHAT, "out", optional=True)
    a_type, b_type = kiln_dtype(a, what="a"), kiln_dtype(b, what="b")
    if a_type not in FP8_DTYPES or b_type not in FP8_DTYPES:
        raise TypeError(f"{WHAT} takes fp8 A and B, got {a.dtype} and {b.dtype}")
    return a_type, b_type


def _output(out, out_dtype, shape: tuple, device):
    """(out, d_type, ldd) of the output [..., M, N] (given or new) with contiguous rows."""
    from ._tensors import output

    torch = _torch()
    m, n = shape[-2:]
    if out is None and out_dtype not in (None, torch.bfloat16, torch.float16, torch.float32):
        raise TypeError(f"{WHAT}: out_dtype must be bfloat16, float16 or float32, got {out_dtype}")
    out, d_type = output(out, out_dtype, DType.BF16, shape[:-2], m, n, device)
    if tuple(out.shape) != shape or out.stride(-1) != 1:
        raise ValueError(f"{WHAT}: out must be {shape} with contiguous rows, got {tuple(out.shape)}")
    return out, d_type, max(out.stride(-2), n) if m > 1 else n


def _bias_fields(bias, groups: int, n: int, device):
    """(bias, fields) of a bias [N] shared by the groups or [G, N] per group."""
    from ._tensors import bias_of

    if bias is not None and bias.dim() == 2:
        if tuple(bias.shape) != (groups, n) or bias.stride(1) != 1:
            raise ValueError(f"{WHAT}: a per-group bias is [groups, N] = [{groups}, {n}] with contiguous rows, got "
                             f"{tuple(bias.shape)}")
        _, bias_type = bias_of(bias[0], n, device, WHAT)  # (type and device checks; groups >= 1 here)
        return bias, dict(has_bias=True, bias_type=bias_type, bias_stride_g=bias.stride(0))
    bias, bias_type = bias_of(bias, n, device, WHAT)
    return bias, dict(has_bias=bias is not None, bias_type=bias_type, bias_stride_g=0)


def _scales(scale_a, scale_b, device):
    if scale_a is None or scale_b is None:
        raise ValueError(f"{WHAT}: fp8 needs scale_a and scale_b (1-element tensors for tensor scales)")
    return _f32(scale_a, "scale_a", device), _f32(scale_b, "scale_b", device)


def _plan(a, b, *, offs, masked_m, m_indices=None, scale_a, scale_b, bias, out_dtype, out):
    from ._tensors import require_tensor, same_device

    require_tensor(a, WHAT, "a")
    require_tensor(b, WHAT, "b")
    mode = _mode(offs, masked_m, m_indices, b)
    if mode == GroupMode.K:
        return _plan_k(a, b, offs=offs, scale_a=scale_a, scale_b=scale_b, bias=bias, out_dtype=out_dtype, out=out)
    a_type, b_type = _fp8_operands(a, b, out)
    same_device(a.device, {"b": b, "bias": bias, "out": out, "offs": offs, "masked_m": masked_m,
                           "m_indices": m_indices}, WHAT)
    masked = mode == GroupMode.MASKED
    if a.dim() != (3 if masked else 2):
        raise ValueError(f"{WHAT}: A is [tokens, K] with offs= or m_indices=, [groups, M, K] with masked_m=; got "
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
    if m_indices is not None:
        index = _ends_of_indices(_row_indices(m_indices, m, a.device), groups)
    else:
        index = _index(masked_m if masked else offs, "masked_m" if masked else "offs", groups, a.device)
    out, d_type, ldd = _output(out, out_dtype, (groups, m, n) if masked else (m, n), a.device)
    stride_d = out.stride(0) if masked else m * ldd
    fields = dict(lda=lda, ldb=ldb, ldd=ldd, ldc=ldd, stride_a=stride_a, stride_b=stride_b, stride_d=stride_d,
                  stride_c=stride_d, group_mode=mode, groups=groups)
    scale_a, scale_b = _scales(scale_a, scale_b, a.device)
    fields.update(_scale_fields(scale_a, scale_b, masked, groups, m, n, k))
    return _grouped_plan(a, b, out, (a_type, b_type, d_type), (m, n, k), fields, (scale_a, scale_b), bias, index)


def _plan_k(a, b, *, offs, scale_a, scale_b, bias, out_dtype, out):
    """k-grouped: A [M, K], B [N, K] (or [K, N] view), offs [G] end columns -> out [G, M, N]."""
    from ._tensors import same_device

    a_type, b_type = _fp8_operands(a, b, out)
    same_device(a.device, {"b": b, "bias": bias, "out": out, "offs": offs}, WHAT)
    if a.dim() != 2:
        raise ValueError(f"{WHAT}: a k-grouped A (offs= with a 2-D B) is [M, K], got {tuple(a.shape)}")
    m, k = a.shape
    if a.stride(1) != 1 and k > 1:
        raise ValueError(f"{WHAT}: A must be K-contiguous (row-major), strides {a.stride()}")
    bt = _as_nk(b, k)
    n = bt.shape[0]
    lda = max(a.stride(0), k) if m > 1 else k
    ldb = max(bt.stride(0), k) if n > 1 else k
    index = _k_offs(offs, a.device)
    groups = index.numel()
    out, d_type, ldd = _output(out, out_dtype, (groups, m, n), a.device)
    # A and B are one matrix each: stride_a and stride_b are not read (their matrix sizes here)
    fields = dict(lda=lda, ldb=ldb, ldd=ldd, ldc=ldd, stride_a=m * lda, stride_b=n * ldb, stride_d=out.stride(0),
                  stride_c=out.stride(0), group_mode=GroupMode.K, groups=groups)
    scale_a, scale_b = _scales(scale_a, scale_b, a.device)
    fields.update(_k_scale_fields(scale_a, scale_b, groups, m, n, k))
    return _grouped_plan(a, b, out, (a_type, b_type, d_type), (m, n, k), fields, (scale_a, scale_b), bias, index)


def _grouped_plan(a, b, out, types: tuple, mnk: tuple, fields: dict, scales: tuple, bias, index):
    """The plan of a grouped call from its problem fields (scales' included): the bias's fields, the problem, and
    group_index on the device (kept alive by the plan)."""
    from . import _ops
    from ._handle import make_problem

    bias, bias_fields = _bias_fields(bias, fields["groups"], mnk[1], a.device)
    p = make_problem(*types, Layout.TN, *mnk, **fields, **bias_fields)
    plan = _ops._finish(p, out, a, b, None, *scales, bias, keep=(index,))
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


# ---- k-grouped scales: tensor, rowwise per group ([G, M], [G, N]) or block over all of K ----

def _k_rows(s, groups: int, size: int):
    """s as a rowwise k-grouped scale, [groups, size] with unit stride along size (from [G, size], [G * size] or
    [G, size, 1]); None where it is not one."""
    shape = tuple(s.shape)
    if shape == (groups * size,) or shape == (groups, size, 1):
        try:
            s = s.view(groups, size)
        except RuntimeError:  # strides no [G, size] view has
            return None
    elif shape != (groups, size):
        return None
    return s if s.stride(1) == 1 or size == 1 else None


def _k_block_n(sb, n: int, gk: int):
    """scale_b_block_n of a block k-grouped scale_b ([ceil(N/128), ceil(K/128)]: 128, [N, ceil(K/128)]: 1); None
    where it is not one."""
    if sb.dim() != 2 or sb.shape[1] != gk or sb.shape[0] not in (-(-n // GROUP), n):
        return None
    return GROUP if sb.shape[0] == -(-n // GROUP) else 1


def _k_recipe(sa, sb, groups: int, m: int, n: int, k: int):
    """How a k-grouped call's scales read: ("tensor", None, None), ("row", rows_a, rows_b) with each a [G, size]
    view or None (a tensor scale on that side), or ("block", block_n, None). ValueError naming the argument that
    fits no reading, and for scales that fit both rowwise and block."""
    gk = groups_of(k)
    if sa.numel() == 1 and sb.numel() == 1:  # the same number under every reading
        return "tensor", None, None
    rows_a = None if sa.numel() == 1 else _k_rows(sa, groups, m)
    rows_b = None if sb.numel() == 1 else _k_rows(sb, groups, n)
    row_a, row_b = sa.numel() == 1 or rows_a is not None, sb.numel() == 1 or rows_b is not None
    block_a, block_n = tuple(sa.shape) == (m, gk), _k_block_n(sb, n, gk)
    forms = {"scale_a": f"1 element (tensor), [G, M] = [{groups}, {m}], [G * M] or [G, M, 1] (rowwise), or "
                        f"[M, ceil(K/128)] = [{m}, {gk}] (block)",
             "scale_b": f"1 element (tensor), [G, N] = [{groups}, {n}], [G * N] or [G, N, 1] (rowwise), or "
                        f"[N, ceil(K/128)] = [{n}, {gk}] (1x128 block) or [ceil(N/128), ceil(K/128)] = "
                        f"[{-(-n // GROUP)}, {gk}] (128x128 block)"}
    for name, s, fits, dim in (("scale_a", sa, row_a or block_a, "M"), ("scale_b", sb, row_b or block_n is not None,
                                                                         "N")):
        if not fits:
            raise ValueError(f"{WHAT}: a k-grouped {name} is {forms[name]} (rowwise with unit stride along {dim}); "
                             f"got {tuple(s.shape)} with strides {s.stride()}")
    block = block_a and block_n is not None
    if block and row_a and row_b:
        raise ValueError(f"{WHAT}: k-grouped scale_a {tuple(sa.shape)} and scale_b {tuple(sb.shape)} read both as "
                         f"rowwise scales ([G, M], [G, N]) and as block scales ([M, ceil(K/128)], [N or "
                         f"ceil(N/128), ceil(K/128)]) since G = M = ceil(K/128) = N: pass rowwise scales flat "
                         f"([G * M], [G * N]), or block scale_a M-major (a [ceil(K/128), M] tensor's .t())")
    if block:
        return "block", block_n, None
    if row_a and row_b:
        return "row", rows_a, rows_b
    def reading(s, row):
        return "tensor" if s.numel() == 1 else "rowwise" if row else "block"

    raise ValueError(f"{WHAT}: k-grouped scale_a {tuple(sa.shape)} reads as {reading(sa, row_a)} scales and scale_b "
                     f"{tuple(sb.shape)} as {reading(sb, row_b)} ones: block scales are block on both sides (tensor "
                     f"and rowwise ones mix)")


def _k_scale_fields(sa, sb, groups: int, m: int, n: int, k: int) -> dict:
    recipe, x, y = _k_recipe(sa, sb, groups, m, n, k)
    if recipe == "block":  # the group strides are not read: K's groups of 128 index all of K
        return dict(scale_a=ScaleMode.BLOCK, scale_b=ScaleMode.BLOCK, scale_a_stride_m=sa.stride(0),
                    scale_a_stride_k=sa.stride(1), scale_b_stride_n=sb.stride(0), scale_b_stride_k=sb.stride(1),
                    scale_b_block_n=x)
    fields = dict(scale_a=ScaleMode.TENSOR, scale_b=ScaleMode.TENSOR)
    if x is not None:
        fields.update(scale_a=ScaleMode.VECTOR, scale_a_stride_g=x.stride(0))
    if y is not None:
        fields.update(scale_b=ScaleMode.VECTOR, scale_b_stride_g=y.stride(0))
    return fields


def grouped_mm(a, b, *, offs=None, masked_m=None, m_indices=None, scale_a=None, scale_b=None, bias=None,
               out_dtype=None, out=None, algo=None):
    """Grouped fp8 GEMM (module docstring). Exactly one of
      offs=       int32 [G], cumulative ends: with B [G, N, K] the end rows of contiguous groups of A [T, K] ->
                  y [T, N]; with a 2-D B [N, K] (or its [K, N] view) the end columns of k-grouped A [M, K] and B ->
                  y [G, M, N];
      masked_m=   int32 [G], valid rows of each batch of A [G, M, K] -> y [G, M, N];
      m_indices=  int32 [T], the expert of each row of A [T, K] (-1: padding) -> y [T, N].
    All stay on the device. out_dtype: bfloat16 (default), float16 or float32."""
    from . import _fastpath, _ops
    try:
        key = _key(a, b, offs, masked_m, m_indices, scale_a, scale_b, bias, out_dtype, out, algo)
        pp = _fastpath.plans.get(key)
    except Exception:  # noqa: BLE001 -- a call that cannot be keyed goes the whole way, which says what is wrong
        key = pp = None
    if pp is not None:
        y = _run_cached(pp, a, b, offs, masked_m, m_indices, scale_a, scale_b, bias, out)
        if y is not None:
            return y
    plan = _plan(a, b, offs=offs, masked_m=masked_m, m_indices=m_indices, scale_a=scale_a, scale_b=scale_b,
                 bias=bias, out_dtype=out_dtype, out=out)
    return _ops._run_whole(plan, algo, WHAT, key)


# ---- the per-call fast path (_fastpath.py): a plan per key of every argument but the data pointers ----
# The whole way checks every argument, builds and checks the problem and selects (host time ~80 us a call on an H100
# against ~22 for torch._scaled_grouped_mm, tuning/results/probe_host_overhead_moe_h100_54ef5b1.txt); a call whose key
# ran before launches its plan with this call's pointers. What the whole way derives from the tensors' values is
# derived again: the group ends of m_indices (on the device, _ends_of_indices). Not cached: a group index that is not
# contiguous (the whole way copies it), and what _key cannot key by value.

def _key(a, b, offs, masked_m, m_indices, scale_a, scale_b, bias, out_dtype, out, algo) -> tuple:
    from ._fastpath import Uncacheable, tensor_key, value_key
    from ._ops import _algo_key
    for t in (offs, masked_m, m_indices):
        if t is not None and not t.is_contiguous():
            raise Uncacheable("a non-contiguous group index")
    opt = lambda t: None if t is None else tensor_key(t)  # noqa: E731
    return (WHAT, tensor_key(a), tensor_key(b), opt(offs), opt(masked_m), opt(m_indices), tensor_key(scale_a),
            tensor_key(scale_b), opt(bias), value_key(out_dtype), opt(out), _algo_key(algo))


def _run_cached(pp, a, b, offs, masked_m, m_indices, scale_a, scale_b, bias, out):
    """_fastpath.run_cached with this call's group index (m_indices' end rows made again on the device)."""
    from . import _fastpath
    index = offs if offs is not None else masked_m if masked_m is not None else _ends_of_indices(m_indices,
                                                                                                   pp.problem.groups)
    return _fastpath.run_cached(pp, a, b, None, scale_a, scale_b, bias, out, 1.0, 0.0, group_index=index)


def _k_end_columns(offs, k: int) -> list:
    """The kernel's group bounds of a k-grouped call: (start, end) columns per group, ends clamped into
    [previous end, K] and rounded down to a multiple of 128 unless they reach K."""
    bounds, end = [], 0
    for v in offs.tolist():
        start = end
        end = max(start, k if v >= k else v // GROUP * GROUP)
        bounds.append((start, end))
    return bounds


def _reference_k(a, b, offs, scale_a, scale_b, bias):
    torch = _torch()
    m, k = a.shape
    bt = _as_nk(b, k)
    n, groups = bt.shape[0], offs.numel()
    a64, b64 = a.float().double(), bt.float().double()
    recipe, x, y = _k_recipe(scale_a, scale_b, groups, m, n, k)
    if recipe == "block":
        sa = scale_a.double()
        sb = scale_b.double() if x == 1 else scale_b.double().repeat_interleave(GROUP, dim=0)[:n]
    out = torch.empty((groups, m, n), dtype=torch.float64, device=a.device)
    for g, (start, end) in enumerate(_k_end_columns(offs, k)):
        acc = torch.zeros((m, n), dtype=torch.float64, device=a.device)
        if recipe == "block" and end > start:
            for gi in range(start // GROUP, groups_of(end)):  # every 128 of K lies inside one group
                lo, hi = gi * GROUP, min(end, (gi + 1) * GROUP)
                acc += (a64[:, lo:hi] @ b64[:, lo:hi].t()) * sa[:, gi:gi + 1] * sb[:, gi].reshape(1, n)
        elif end > start:
            acc = a64[:, start:end] @ b64[:, start:end].t()
            acc = acc * (float(scale_a.reshape(-1)[0]) if x is None else x[g].double().reshape(m, 1))
            acc = acc * (float(scale_b.reshape(-1)[0]) if y is None else y[g].double().reshape(1, n))
        if bias is not None:
            acc = acc + (bias[g] if bias.dim() == 2 else bias).double().reshape(1, n)
        out[g] = acc
    return out


def grouped_reference(a, b, *, offs=None, masked_m=None, m_indices=None, scale_a=None, scale_b=None, bias=None):
    """float64 of what grouped_mm computes, from the same tensors (groups sized on the host here), with NaN in the
    rows grouped_mm does not write (m_indices: in the padding rows and those of an index >= G, whose values
    grouped_mm leaves unspecified). Block scales are applied per 128 of K, as the kernel does; k-grouped ends are
    clamped and rounded down to 128 as the kernel does."""
    torch = _torch()
    mode = _mode(offs, masked_m, m_indices, b)
    if mode == GroupMode.K:
        return _reference_k(a, b, offs, scale_a, scale_b, bias)
    masked = mode == GroupMode.MASKED
    k = a.shape[-1]
    g_count = b.shape[0]
    bt = _as_gnk(b, k)
    n = bt.shape[1]
    a64 = a.float().double()
    b64 = bt.float().double()
    block = scale_b.dim() == 3
    shape = (g_count, a.shape[1], n) if masked else (a.shape[0], n)
    y = torch.full(shape, float("nan"), dtype=torch.float64, device=a.device)
    groups = []  # (g, the group's rows: a slice of batch g (masked) or of A, or an index tensor (m_indices))
    if masked:
        for g, c in enumerate(masked_m.tolist()):
            groups.append((g, slice(0, max(0, min(c, a.shape[1])))))
    elif m_indices is not None:
        idx = m_indices.long()
        for g in range(g_count):
            groups.append((g, (idx == g).nonzero().reshape(-1)))
    else:
        end = 0
        for g, e in enumerate(offs.tolist()):
            start = end
            end = min(max(e, start), a.shape[0])
            groups.append((g, slice(start, end)))
    for g, rows in groups:
        count = rows.stop - rows.start if isinstance(rows, slice) else rows.numel()
        if count <= 0:
            continue
        x = a64[g, rows] if masked else a64[rows]
        w = b64[g]
        if block:
            sa = (scale_a[g, rows] if masked else scale_a[rows]).double()
            sb = scale_b[g].double()
            if sb.shape[0] != n:  # 128x128 blocks (with n <= 1 the two granularities coincide)
                sb = sb.repeat_interleave(GROUP, dim=0)[:n]
            acc = torch.zeros((count, n), dtype=torch.float64, device=a.device)
            for gi in range(groups_of(k)):
                lo, hi = gi * GROUP, min(k, (gi + 1) * GROUP)
                acc += (x[:, lo:hi] @ w[:, lo:hi].t()) * sa[:, gi:gi + 1] * sb[:, gi].reshape(1, n)
        else:
            acc = x @ w.t()
            if scale_a.numel() == 1:
                acc = acc * float(scale_a.reshape(-1)[0])
            else:
                sa = scale_a.reshape(g_count, -1)[g, rows] if masked else scale_a.reshape(-1)[rows]
                acc = acc * sa.double().reshape(-1, 1)
            if scale_b.numel() == 1:
                acc = acc * float(scale_b.reshape(-1)[0])
            else:
                acc = acc * scale_b.reshape(g_count, n)[g].double().reshape(1, n)
        if bias is not None:
            acc = acc + (bias[g] if bias.dim() == 2 else bias).double().reshape(1, n)
        if masked:
            y[g, rows] = acc
        else:
            y[rows] = acc
    return y


def _register_with_ops() -> None:
    """kiln.plan / query / algos / explain take grouped_mm like the other ops."""
    from . import _ops
    _ops._PLANNERS[WHAT] = lambda a, b, **kw: _plan(a, b, **{**_DEFAULTS, **kw})
    _ops._OPS[grouped_mm] = WHAT


_DEFAULTS = dict(offs=None, masked_m=None, m_indices=None, scale_a=None, scale_b=None, bias=None, out_dtype=None,
                 out=None)

__all__ = ["grouped_mm", "grouped_reference"]
