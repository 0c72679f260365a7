"""kiln.Fp8Linear: an nn.Linear whose weight is fp8, prepacked once, and whose forward is one kiln.mixed_mm
(upcast of the weight, GEMM, per-channel scale and bias in one kernel).

    layer = kiln.Fp8Linear.from_linear(linear, fp8="e4m3")   # quantize per output channel, prepack, keep the bias
    y = layer(x)                                               # x [..., in_features] float16/bfloat16

Imported on first use of kiln.Fp8Linear (this module imports torch). Inference only: there is no backward. In eager
code the forward calls kiln.mixed_mm directly (the cheapest call); under torch.compile, and whenever autograd would
record the call, it goes through the kiln::mixed_mm operator (_library.py), whose fake kernel lets the compiler trace
it and which raises if a backward reaches it.

State: the buffers weight_packed (uint8 [out_features, packed_k(in_features)], kiln_prepack_b's layout),
weight_scale (float32 [out_features], or [1] with granularity="tensor") and bias (or None). weight_scale stays
float32 through module.half()/.to(dtype): the kernel reads float32 scales, and rounding them would change the layer.
"""
from __future__ import annotations

import torch

from . import _library, _ops
from ._blockscaled import GROUP, groups_of  # granularity="group": a scale per 128 of K
from ._prepack import packed_k
from ._quant import fp8_dtype, granularity_dim, quantize_fp8, quantize_per_token_group
from ._types import FP8_NAME, TORCH_DTYPE_NAME

_library.register()  # here, not in forward: a compiled forward must not trace into the registration


class Fp8Linear(torch.nn.Module):
    """y = x @ dequant(W).T + bias, with W in fp8 (e4m3 or e5m2; the FNUZ formats on AMD) and float32 scales per
    output channel (granularity="channel"), one per tensor ("tensor"), or one per output channel and 128 of K
    ("group": weight_scale [out, ceil(in/128)], which the sm90 kernels apply to the widened weights). Build one with
    from_linear(); the constructor makes an empty layer of the right shapes for load_state_dict."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, fp8: str = "e4m3",
                 granularity: str = "channel", out_dtype=None, bias_dtype=torch.float32, device=None):
        super().__init__()
        granularity_dim(granularity)  # ValueError for an unknown name
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.fp8_dtype = fp8_dtype(fp8)
        self.fp8 = FP8_NAME[self.fp8_dtype]
        self.granularity = granularity
        self.out_dtype = out_dtype
        scale_shape = {"channel": (self.out_features,), "tensor": (1,),
                       "group": (self.out_features, groups_of(self.in_features))}[granularity]
        self.register_buffer("weight_packed", torch.zeros((self.out_features, packed_k(self.in_features)),
                                                          dtype=torch.uint8, device=device))
        self.register_buffer("weight_scale", torch.ones(scale_shape, dtype=torch.float32, device=device))
        if bias:
            self.register_buffer("bias", torch.zeros(self.out_features, dtype=bias_dtype, device=device))
        else:
            self.bias = None
        self.__dict__["_packed_cache"] = None

    @classmethod
    def from_linear(cls, linear, *, fp8: str = "e4m3", granularity: str = "channel", out_dtype=None):
        """An Fp8Linear computing what `linear` (an nn.Linear, or any module with weight [out, in] and bias) does,
        with its weight quantized to `fp8` (quantize_fp8, by absolute maximum) and prepacked on the weight's device;
        the bias is kept as it is (float32, float16 or bfloat16). out_dtype: the output dtype (None: the input's).
        granularity="group": a scale per output channel and 128 of the input (quantize_per_token_group)."""
        dim = granularity_dim(granularity)
        weight = getattr(linear, "weight", None)
        if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
            raise TypeError(f"Fp8Linear.from_linear: want an nn.Linear (a 2-D weight [out, in]), got "
                            f"{type(linear).__name__}")
        out_features, in_features = weight.shape
        bias = getattr(linear, "bias", None)
        layer = cls(in_features, out_features, bias is not None, fp8=fp8, granularity=granularity,
                    out_dtype=out_dtype, bias_dtype=bias.dtype if bias is not None else torch.float32,
                    device=weight.device)
        with torch.no_grad():
            if dim == "group":
                q, scales = quantize_per_token_group(weight, GROUP, dtype=getattr(torch, TORCH_DTYPE_NAME[
                    layer.fp8_dtype]))
                scales = scales.contiguous()  # [out, groups], K-major
            else:
                q, scales = quantize_fp8(weight, fp8=fp8, dim=dim)
                scales = scales.reshape(-1)
            layer.weight_packed = _ops.prepack_b(q.t()).data  # B(k, n) = W^T: a TN view of [out, in]
            layer.weight_scale = scales.clone()
            if bias is not None:
                layer.bias = bias.detach().clone()
        return layer

    def packed(self) -> _ops.PackedB:
        """The weight as kiln.mixed_mm takes it (made again when the buffer was replaced: .to(), load_state_dict)."""
        p = self._packed_cache
        if p is None or p.data is not self.weight_packed:
            p = _ops.PackedB(self.weight_packed, self.fp8_dtype, self.in_features, self.out_features)
            self.__dict__["_packed_cache"] = p
        return p

    def dequantized_weight(self, dtype=torch.float32):
        """The weight [out, in] this layer multiplies by: fp8 codes unpacked, times the scales (for checks)."""
        from ._prepack import PREPACK_PERM
        k, n, kp = self.in_features, self.out_features, self.weight_packed.shape[1]
        inverse = torch.empty(len(PREPACK_PERM), dtype=torch.long)
        inverse[torch.tensor(PREPACK_PERM)] = torch.arange(len(PREPACK_PERM))
        grouped = self.weight_packed.view(n, kp // len(PREPACK_PERM), len(PREPACK_PERM))
        codes = grouped[:, :, inverse.to(grouped.device)].reshape(n, kp)[:, :k]
        w = codes.contiguous().view(getattr(torch, TORCH_DTYPE_NAME[self.fp8_dtype])).float()
        scale = self.weight_scale
        if scale.dim() == 2:  # per group: each scale over 128 of K
            scale = scale.repeat_interleave(GROUP, dim=1)[:, :k]
        else:
            scale = scale.reshape(-1, 1)
        return (w * scale).to(dtype)

    def forward(self, x):
        k, n = self.in_features, self.out_features
        if x.shape[-1] != k:
            raise ValueError(f"Fp8Linear: input of shape {tuple(x.shape)}, want [..., {k}]")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, k)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        if torch.compiler.is_compiling() or (x.requires_grad and torch.is_grad_enabled()):
            y = torch.ops.kiln.mixed_mm(x2, self.weight_packed, k, self.fp8, scale_b=self.weight_scale,
                                        bias=self.bias, out_dtype=self.out_dtype)
        else:
            y = _ops.mixed_mm(x2, self.packed(), scale_b=self.weight_scale, bias=self.bias, out_dtype=self.out_dtype)
        return y.reshape(*lead, n)

    def _apply(self, fn, recurse=True):
        """Module.half()/.to(dtype) cast every floating buffer; the scales go back to float32, exact (moved only)."""
        scale = self.weight_scale
        out = super()._apply(fn, recurse)
        if self.weight_scale.dtype != torch.float32:
            self.weight_scale = scale.to(device=self.weight_scale.device)
        return out

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"fp8={self.fp8}, granularity={self.granularity}, out_dtype={self.out_dtype}")


__all__ = ["Fp8Linear"]
