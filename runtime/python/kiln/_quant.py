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

# Fp8Linear's weight-scale granularities: the quantize_fp8 dim of each (a Linear weight is [out, in]).
GRANULARITY_DIM = {"channel": 0, "tensor": None}

GROUP_MISSING = (
    "granularity='group' (a weight scale per output channel and per group of K, e.g. 128) is not available: it "
    "needs a kernel that multiplies each K group's partial sums by that group's scales inside its K loop, and "
    "kiln's problem has scale modes none, tensor and vector only (kiln.h KILN_SCALE_NONE/TENSOR/VECTOR), with no "
    "per-group scale operand and no kernel that reads one. Use granularity='channel' (a scale per output channel) "
    "or 'tensor'.")


def fp8_dtype(fp8) -> DType:
    """The kiln DType of an fp8 name ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"; "e4m3fn" = "e4m3")."""
    if not isinstance(fp8, str):
        raise TypeError(f"fp8= takes a name such as 'e4m3', got {type(fp8).__name__}")
    dt = FP8_NAMES.get(fp8.lower())
    if dt is None:
        raise ValueError(f"fp8={fp8!r} is not one of {sorted(FP8_NAMES)}")
    return dt


def granularity_dim(granularity):
    """quantize_fp8's dim for an Fp8Linear granularity; NotImplementedError for 'group' (GROUP_MISSING says why)."""
    if granularity == "group":
        raise NotImplementedError(GROUP_MISSING)
    if granularity not in GRANULARITY_DIM:
        raise ValueError(f"granularity={granularity!r} is not one of 'channel', 'tensor' ('group' is not available)")
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


__all__ = ["FP8_MANTISSA_BITS", "FP8_UNIT_ROUNDOFF", "GRANULARITY_DIM", "GROUP_MISSING", "fp8_dtype",
           "granularity_dim", "quantize_fp8"]
