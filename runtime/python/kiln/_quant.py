"""fp8 weight quantization for kiln's 16-bit x fp8 GEMM (mixed_mm, Fp8Linear): scales by absolute maximum.

    q, scales = kiln.quantize_fp8(linear.weight, fp8="e4m3", dim=0)   # a float32 scale per output channel
    w ~= q.float() * scales[:, None]

scale = amax / (the format's largest finite value), q = round_to_fp8(w / scale) saturated to that value, where amax
is the absolute maximum over everything but `dim` (dim=None: over the whole tensor, one scale). A slice that is all
zeros gets scale 1. The rounding error of q is then at most half an ulp of the format relative to each weight
(2^-4 for e4m3, 2^-3 for e5m2) for weights in its normal range; FP8_UNIT_ROUNDOFF holds those bounds.

Torch is imported on first use; the tables and the granularity rules here are plain Python.
"""
from __future__ import annotations

from ._capi import DType
from ._types import FP8_NAME, FP8_NAMES, TORCH_DTYPE_NAME

# Mantissa bits of each fp8 format, and its unit roundoff (half an ulp, relative): the quantization error bound.
FP8_MANTISSA_BITS = {DType.E4M3: 3, DType.E5M2: 2, DType.E4M3FNUZ: 3, DType.E5M2FNUZ: 2}
assert FP8_MANTISSA_BITS.keys() == FP8_NAME.keys()
FP8_UNIT_ROUNDOFF = {dt: 2.0 ** -(bits + 1) for dt, bits in FP8_MANTISSA_BITS.items()}

# Fp8Linear's weight-scale granularities: the quantize_fp8 dim of each (a Linear weight is [out, in]); "group" is a
# scale per output channel and per 128 of K (quantize_per_token_group on the weight), applied by the kernel to the
# widened weights (kiln.mixed_mm's per-group scale_b; the sm90 kernels).
GRANULARITY_DIM = {"channel": 0, "tensor": None, "group": "group"}


def fp8_dtype(fp8) -> DType:
    """The kiln DType of an fp8 name ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"; "e4m3fn" = "e4m3")."""
    if not isinstance(fp8, str):
        raise TypeError(f"fp8= takes a name such as 'e4m3', got {type(fp8).__name__}")
    dt = FP8_NAMES.get(fp8.lower())
    if dt is None:
        raise ValueError(f"fp8={fp8!r} is not one of {sorted(FP8_NAMES)}")
    return dt


def granularity_dim(granularity):
    """quantize_fp8's dim for an Fp8Linear granularity ("group": the string itself, quantize_per_token_group)."""
    if granularity not in GRANULARITY_DIM:
        raise ValueError(f"granularity={granularity!r} is not one of 'channel', 'tensor', 'group'")
    return GRANULARITY_DIM[granularity]


def quantize_fp8(w, fp8: str = "e4m3", dim: int | None = 0):
    """(q, scales): w quantized to the fp8 format `fp8` with float32 scales by absolute maximum.

    dim: the dimension that keeps a scale per index (0: per row, i.e. per output channel of a Linear weight [out,
    in]); None: one scale for the whole tensor. scales has shape [w.shape[dim]] (or [] for dim=None), q has w's shape
    and the torch fp8 dtype, both on w's device. Raises ValueError for weights that are not all finite."""
    from ._tensors import require_tensor, torch_module

    torch = torch_module("quantize_fp8")
    require_tensor(w, "quantize_fp8", "w")
    dt = fp8_dtype(fp8)
    if not w.is_floating_point():
        raise TypeError(f"quantize_fp8: w must be a floating-point tensor, got {w.dtype}")
    if w.element_size() == 1:
        raise TypeError(f"quantize_fp8: w is already 8-bit ({w.dtype})")
    qtype = getattr(torch, TORCH_DTYPE_NAME[dt])
    fmax = float(torch.finfo(qtype).max)
    wf = w.detach().float()
    if dim is None:
        amax = wf.abs().amax() if wf.numel() else wf.new_zeros(())
        shape = ()
    else:
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"quantize_fp8: dim must be an int or None, got {type(dim).__name__}")
        if not -w.dim() <= dim < w.dim():
            raise ValueError(f"quantize_fp8: dim={dim} out of range for a {w.dim()}-D tensor")
        dim %= w.dim()
        others = [d for d in range(w.dim()) if d != dim]
        if not others:
            amax = wf.abs()
        else:  # amax of an empty reduction is an error in torch: zeros, then scale 1
            amax = wf.abs().amax(dim=others) if wf.numel() else wf.new_zeros(w.shape[dim])
        shape = [1] * w.dim()
        shape[dim] = w.shape[dim]
    if not bool(torch.isfinite(amax).all()):
        raise ValueError("quantize_fp8: w has NaN or Inf values")
    scales = torch.where(amax > 0, amax / fmax, torch.ones_like(amax)).contiguous()
    q = (wf / scales.reshape(shape)).clamp_(-fmax, fmax).to(qtype)
    return q, scales


# ---- block scales (kiln.block_scaled_mm): one scale per 1 x group (per token) or block x block (per weight tile) ----

# An all-zero group gets amax BLOCK_AMAX_EPS instead of 0: a tiny positive scale, q = 0, never inf or NaN.
BLOCK_AMAX_EPS = 1e-12


def _block_quant_setup(x, what: str, size: int, size_name: str, dtype):
    from ._tensors import require_tensor, torch_module

    torch = torch_module(what)
    require_tensor(x, what, "x" if what == "quantize_per_token_group" else "w")
    if not x.is_floating_point() or x.element_size() == 1:
        raise TypeError(f"{what}: want a float32/float16/bfloat16 tensor, got {x.dtype}")
    if x.dim() != 2:
        raise ValueError(f"{what}: want a 2-D tensor, got shape {tuple(x.shape)}")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"{what}: {size_name}={size!r} must be a positive int (kiln's GEMM reads groups of 128)")
    dtype = torch.float8_e4m3fn if dtype is None else dtype
    if not isinstance(dtype, torch.dtype) or torch.empty((), dtype=dtype).element_size() != 1 \
            or not dtype.is_floating_point:
        raise TypeError(f"{what}: dtype must be a torch fp8 dtype (torch.float8_e4m3fn, ...), got {dtype!r}")
    return torch, dtype, float(torch.finfo(dtype).max)


def _scales_of(torch, amax, fmax: float, what: str):
    if not bool(torch.isfinite(amax).all()):
        raise ValueError(f"{what}: the input has NaN or Inf values")
    return amax.clamp(min=BLOCK_AMAX_EPS) / fmax


def quantize_per_token_group(x, group: int = 128, dtype=None):
    """(x_fp8 [M, K], scale [M, ceil(K/group)] float32): each row's groups of `group` along K (the last one shorter)
    quantized by their absolute maximum, scale = amax / (the format's largest value: 448 for e4m3), x ~= x_fp8 *
    scale. scale comes M-major, its groups round_up(M, 4) floats apart (strides (1, round_up(M, 4)): whole 16-byte
    units, which lets the sm90 kernels load it with the copy engine; DeepGEMM's "TMA-aligned" layout, and
    torch._scaled_mm's 1x128 layout where M is a multiple of 4). dtype: a torch fp8 dtype (default
    torch.float8_e4m3fn). Also the 1x128 scales of a weight [N, K] (b_block=1)."""
    torch, dtype, fmax = _block_quant_setup(x, "quantize_per_token_group", group, "group", dtype)
    m, k = x.shape
    g = -(-k // group)
    xf = x.detach().float()
    if g * group != k:
        xf = torch.nn.functional.pad(xf, (0, g * group - k))
    xg = xf.reshape(m, g, group)
    amax = xg.abs().amax(dim=2) if xg.numel() else xg.new_zeros((m, g))
    scale = _scales_of(torch, amax, fmax, "quantize_per_token_group")
    q = (xg / scale.unsqueeze(2)).clamp_(-fmax, fmax).to(dtype).reshape(m, g * group)[:, :k].contiguous()
    out = torch.empty((g, -(-m // 4) * 4), dtype=torch.float32, device=x.device)[:, :m].t()
    out.copy_(scale)
    return q, out


def quantize_per_block(w, block: int = 128, dtype=None):
    """(w_fp8 [N, K], scale [ceil(N/block), ceil(K/block)] float32 K-major): each block x block tile of w (edge
    tiles smaller) quantized by its absolute maximum, as quantize_per_token_group does per group. scale's rows are
    round_up(ceil(K/block), 4) floats apart (strides (round_up(G, 4), 1): whole 16-byte units, which lets the sm90
    kernels load it with the copy engine; row-major, DeepGEMM's and kiln's default layout, where G is a multiple of 4).
    kiln.scale_layout(scale, "torch", operand="b") is torch._scaled_mm's."""
    torch, dtype, fmax = _block_quant_setup(w, "quantize_per_block", block, "block", dtype)
    n, k = w.shape
    nb, g = -(-n // block), -(-k // block)
    wf = w.detach().float()
    if nb * block != n or g * block != k:
        wf = torch.nn.functional.pad(wf, (0, g * block - k, 0, nb * block - n))
    tiles = wf.reshape(nb, block, g, block)
    amax = tiles.abs().amax(dim=(1, 3)) if tiles.numel() else tiles.new_zeros((nb, g))
    scale = _scales_of(torch, amax, fmax, "quantize_per_block")
    q = (tiles / scale[:, None, :, None]).clamp_(-fmax, fmax).to(dtype).reshape(nb * block, g * block)
    out = torch.empty((nb, -(-g // 4) * 4), dtype=torch.float32, device=w.device)[:, :g]
    out.copy_(scale)
    return q[:n, :k].contiguous(), out


__all__ = ["BLOCK_AMAX_EPS", "FP8_MANTISSA_BITS", "FP8_UNIT_ROUNDOFF", "GRANULARITY_DIM",
           "fp8_dtype", "granularity_dim", "quantize_fp8", "quantize_per_block", "quantize_per_token_group"]
