"""kiln.Fp8Linear and kiln.quantize_fp8 against nn.Linear.

Two bounds per layer. The kernel: the output against the float64 product with the dequantized weights (what the
layer multiplies by) within the fp8 gate of DESIGN.md. The quantization, element by element: every weight is
rounded with an error of at most u * max(|w|, s * m), where u is the fp8 format's unit roundoff (2^-4 e4m3, 2^-3
e5m2), s the weight's scale and m the format's smallest normal (below it the spacing is fixed), so the dequantized
product differs from nn.Linear's exact float64 result by at most u * (|x| @ max(|W|, s * m)^T) in each output,
whatever cancellation W x has (a relative-L2 bound does not hold for one output that sums to near zero). The
weights' own relative error is checked against u too.
"""
from __future__ import annotations

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

FP8 = {"e4m3": DType.E4M3, "e5m2": DType.E5M2}
HALF = {"f16": DType.F16, "bf16": DType.BF16}
# (in_features, out_features): odd ones, K of one prepack group and less, and a layer of LLM size.
FEATURES = [(1000, 129), (999, 77), (17, 33), (64, 1), (4096, 4096)]


def unit_roundoff(fp8: str) -> float:
    return kiln._quant.FP8_UNIT_ROUNDOFF[FP8[fp8]]


def require(half: str, fp8: str, out: str | None = None):
    kt.require_combo((HALF[half], FP8[fp8], HALF[out or half] if out != "f32" else DType.F32, Layout.TN, True))


def linear(k, n, bias, dtype):
    lin = torch.nn.Linear(k, n, bias=bias, device="cuda", dtype=torch.float32)
    with torch.no_grad():
        lin.weight.normal_(0.0, k ** -0.5)
        if bias:
            lin.bias.normal_(0.0, 0.5)
    return lin.to(dtype)


def exact(lin, x):
    """nn.Linear's result in float64 from its own (16-bit) weights."""
    y = kt.f64(x) @ kt.f64(lin.weight).t()
    return y + kt.f64(lin.bias) if lin.bias is not None else y


def dequantized(layer, x):
    y = kt.f64(x) @ layer.dequantized_weight(torch.float64).t()
    return y + kt.f64(layer.bias) if layer.bias is not None else y


def quantization_bound(layer, lin, x, fp8):
    """u * (|x| @ max(|W|, s * m)^T): the largest difference rounding the weights can make in each output."""
    w = kt.f64(lin.weight).abs()
    smallest_normal = torch.finfo(getattr(torch, kiln._types.TORCH_DTYPE_NAME[FP8[fp8]])).smallest_normal
    scale = layer.weight_scale.double()
    if scale.dim() == 2:  # per group: each scale over 128 inputs
        scale = scale.repeat_interleave(128, dim=1)[:, :w.shape[1]]
    floor = scale.reshape(scale.shape[0], -1) * smallest_normal  # [out, 1], [1, 1] or [out, in]
    return unit_roundoff(fp8) * (kt.f64(x).abs() @ torch.maximum(w, floor.expand_as(w)).t())


def check_layer(layer, lin, x, fp8, what):
    y = layer(x)
    assert y.shape == x.shape[:-1] + (lin.out_features,) and y.dtype == (layer.out_dtype or x.dtype), what
    deq = dequantized(layer, x)
    kt.check(y, deq, kt.TOL_FP8, f"{what} (kernel)")
    # the quantization, vs nn.Linear: elementwise (the bias is added exactly on both sides)
    diff = (deq - exact(lin, x)).abs()
    bound = quantization_bound(layer, lin, x, fp8) * (1 + 1e-6) + 1e-12
    worst = (diff - bound).max().item()
    assert worst <= 0, f"{what} (vs nn.Linear): an output differs by {worst:.3e} more than u * (|x| @ |W|^T)"
    return y


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("features", FEATURES, ids=lambda f: f"{f[0]}x{f[1]}")
@pytest.mark.parametrize("half", sorted(HALF))
@pytest.mark.parametrize("fp8", sorted(FP8))
def test_fp8linear_vs_linear(fp8, half, features, bias):
    require(half, fp8)
    k, n = features
    dtype = kt.tdt(HALF[half])
    lin = linear(k, n, bias, dtype)
    layer = kiln.Fp8Linear.from_linear(lin, fp8=fp8)
    assert layer.weight_packed.shape == (n, kiln.packed_k(k)) and layer.weight_scale.dtype == torch.float32
    w_err = kt.rel_l2(layer.dequantized_weight(torch.float64), kt.f64(lin.weight))
    assert w_err <= unit_roundoff(fp8), f"weight quantization error {w_err:.3e} > u = {unit_roundoff(fp8)}"
    for shape in ((1, k), (37, k), (2, 19, k)):  # decode row, a prefill block, a 3-D [batch, tokens, features]
        x = torch.randn(shape, device="cuda").to(dtype)
        check_layer(layer, lin, x, fp8, f"Fp8Linear {fp8} {half} {k}x{n} bias={bias} x{list(shape)}")


def test_noncontiguous_and_empty_input():
    require("f16", "e4m3")
    lin = linear(256, 96, True, torch.float16)
    layer = kiln.Fp8Linear.from_linear(lin)
    x = torch.randn(256, 40, device="cuda").to(torch.float16).t()  # [40, 256] with stride 1 along rows
    check_layer(layer, lin, x, "e4m3", "transposed input")
    x3 = torch.randn(3, 256, 10, device="cuda").to(torch.float16).transpose(1, 2)
    check_layer(layer, lin, x3, "e4m3", "3-D transposed input")
    assert layer(torch.empty(0, 256, device="cuda", dtype=torch.float16)).shape == (0, 96)


def test_f32_linear_keeps_a_f32_bias():
    require("bf16", "e4m3")
    lin = linear(512, 200, True, torch.float32)
    layer = kiln.Fp8Linear.from_linear(lin)
    assert layer.bias.dtype == torch.float32
    check_layer(layer, lin, torch.randn(33, 512, device="cuda").to(torch.bfloat16), "e4m3", "f32 Linear, bf16 x")


def test_out_dtype_f32():
    require("f16", "e4m3", "f32")
    lin = linear(384, 130, True, torch.float16)
    layer = kiln.Fp8Linear.from_linear(lin, out_dtype=torch.float32)
    y = check_layer(layer, lin, torch.randn(9, 384, device="cuda").to(torch.float16), "e4m3", "out f32")
    assert y.dtype == torch.float32


def test_tensor_granularity():
    require("f16", "e5m2")
    lin = linear(300, 64, False, torch.float16)
    layer = kiln.Fp8Linear.from_linear(lin, fp8="e5m2", granularity="tensor")
    assert layer.weight_scale.shape == (1,)
    check_layer(layer, lin, torch.randn(20, 300, device="cuda").to(torch.float16), "e5m2", "per-tensor scale")


@pytest.mark.parametrize("features", [(1000, 129), (17, 33), (4096, 4096)], ids=lambda f: f"{f[0]}x{f[1]}")
@pytest.mark.parametrize("half", sorted(HALF))
@pytest.mark.parametrize("fp8", sorted(FP8))
def test_group_granularity(fp8, half, features):
    """granularity="group": a scale per output channel and 128 inputs, applied by the kernel to the widened weights
    (sm90); both bounds as for per-channel scales, and the layer's state round-trips."""
    require(half, fp8)
    if kt.arch() != "sm90":
        pytest.skip("per-group weight scales run in the sm90 kernels")
    k, n = features
    dtype = kt.tdt(HALF[half])
    lin = linear(k, n, True, dtype)
    layer = kiln.Fp8Linear.from_linear(lin, fp8=fp8, granularity="group")
    assert layer.weight_scale.shape == (n, -(-k // 128)) and layer.weight_scale.dtype == torch.float32
    w_err = kt.rel_l2(layer.dequantized_weight(torch.float64), kt.f64(lin.weight))
    assert w_err <= unit_roundoff(fp8), f"weight quantization error {w_err:.3e} > u = {unit_roundoff(fp8)}"
    for shape in ((1, k), (37, k), (2, 19, k)):
        x = torch.randn(shape, device="cuda").to(dtype)
        check_layer(layer, lin, x, fp8, f"Fp8Linear group {fp8} {half} {k}x{n} x{list(shape)}")
    empty = kiln.Fp8Linear(k, n, True, fp8=fp8, granularity="group", bias_dtype=dtype, device="cuda")
    empty.load_state_dict(layer.state_dict())
    x = torch.randn(5, k, device="cuda").to(dtype)
    assert torch.equal(empty(x), layer(x))


def test_unknown_granularity():
    lin = linear(256, 64, True, torch.float16)
    with pytest.raises(ValueError, match="granularity='rows'"):
        kiln.Fp8Linear.from_linear(lin, granularity="rows")


def test_half_and_moves_keep_the_scales():
    """module.half() casts every floating buffer; the scales stay float32 and exact. A layer built on the CPU
    works once moved to the GPU (the packed weight is made again from the moved buffer)."""
    require("f16", "e4m3")
    lin_cpu = torch.nn.Linear(128, 48, bias=True)
    layer = kiln.Fp8Linear.from_linear(lin_cpu)
    scales = layer.weight_scale.clone()
    layer = layer.cuda().half()
    assert layer.weight_scale.dtype == torch.float32 and torch.equal(layer.weight_scale.cpu(), scales)
    assert layer.bias.dtype == torch.float16 and layer.weight_packed.device.type == "cuda"
    lin = lin_cpu.to(device="cuda", dtype=torch.float16)
    check_layer(layer, lin, torch.randn(5, 128, device="cuda").to(torch.float16), "e4m3", "built on CPU, moved")


def test_state_dict_round_trip():
    require("bf16", "e5m2")
    lin = linear(200, 72, True, torch.bfloat16)
    layer = kiln.Fp8Linear.from_linear(lin, fp8="e5m2")
    empty = kiln.Fp8Linear(200, 72, True, fp8="e5m2", bias_dtype=torch.bfloat16, device="cuda")
    empty.load_state_dict(layer.state_dict())
    x = torch.randn(11, 200, device="cuda").to(torch.bfloat16)
    assert torch.equal(empty(x), layer(x))
    assert "fp8=e5m2" in repr(empty)


def test_backward_raises():
    require("f16", "e4m3")
    layer = kiln.Fp8Linear.from_linear(linear(64, 32, True, torch.float16))
    x = torch.randn(4, 64, device="cuda", dtype=torch.float16, requires_grad=True)
    with pytest.raises(RuntimeError):
        layer(x).float().sum().backward()


def test_compile_fullgraph_mlp():
    """An MLP of Fp8Linear layers (gate and up, SiLU, down: the shape of an LLM block) under
    torch.compile(fullgraph=True), several M with dynamic shapes: eager's result."""
    require("f16", "e4m3")
    k, h = 256, 352

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = kiln.Fp8Linear.from_linear(linear(k, h, False, torch.float16))
            self.up = kiln.Fp8Linear.from_linear(linear(k, h, False, torch.float16))
            self.down = kiln.Fp8Linear.from_linear(linear(h, k, False, torch.float16))

        def forward(self, x):
            return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))

    model = MLP()
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, dynamic=True)
    with torch.no_grad():
        for shape in ((1, k), (16, k), (3, 45, k)):
            x = torch.randn(shape, device="cuda").to(torch.float16)
            got, want = compiled(x), model(x)
            assert got.shape == want.shape
            kt.check(got, want.double(), kt.TOL_HALF, f"compiled MLP x{list(shape)}")


# ---- quantize_fp8 ----

@pytest.mark.parametrize("fp8", sorted(FP8))
def test_quantize_fp8(fp8):
    w = torch.randn(70, 130, device="cuda").to(torch.bfloat16)
    w[3] = 0  # an all-zero channel: scale 1, codes 0
    q, s = kiln.quantize_fp8(w, fp8=fp8)
    assert q.dtype == kt.tdt(FP8[fp8]) and q.shape == w.shape
    assert s.dtype == torch.float32 and s.shape == (70,) and s[3].item() == 1.0 and not q[3].float().any()
    fmax = torch.finfo(q.dtype).max
    amax = w.float().abs().amax(1)
    assert torch.allclose(q.float().abs().amax(1)[amax > 0], torch.full_like(amax[amax > 0], fmax))
    deq = q.float() * s[:, None]
    assert kt.rel_l2(deq, kt.f64(w)) <= unit_roundoff(fp8)
    q0, s0 = kiln.quantize_fp8(w, fp8=fp8, dim=None)
    assert s0.shape == () and s0.item() == pytest.approx(amax.max().item() / fmax, rel=1e-6)
    q1, s1 = kiln.quantize_fp8(w, fp8=fp8, dim=1)
    assert s1.shape == (130,)
    with pytest.raises(ValueError, match="NaN or Inf"):
        kiln.quantize_fp8(torch.tensor([[1.0, float("inf")]], device="cuda"), fp8=fp8)
