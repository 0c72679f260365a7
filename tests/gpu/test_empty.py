"""Empty products, as cuBLAS and torch do them: M or N = 0 is a success that writes nothing and returns an output of
that shape; K = 0 writes D = act(beta * C + bias) (zeros without C and bias); a batch of 0 returns [0, M, N]."""
from __future__ import annotations

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

FP8_TN = (DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, False)
F16_TN = (DType.F16, DType.F16, DType.F16, Layout.TN, False)
MIXED = (DType.F16, DType.E4M3, DType.F16, Layout.TN, True)


def _fp8(rows, cols):
    return kt.fp8_values((rows, cols), torch.float8_e4m3fn)


@pytest.mark.parametrize("m,n", [(0, 64), (64, 0), (0, 0)])
def test_scaled_mm_empty_output(m, n):
    kt.require_combo(FP8_TN)
    a, w = _fp8(m, 128), _fp8(n, 128)
    out = kiln.scaled_mm(a, w.t(), kt.positive(()), kt.positive(()))
    assert out.shape == (m, n) and out.dtype == torch.bfloat16
    rowwise = kiln.scaled_mm(a, w.t(), kt.positive((m, 1)), kt.positive((1, n)), bias=torch.zeros(
        n, dtype=torch.bfloat16, device="cuda"))
    assert rowwise.shape == (m, n)
    torch.cuda.synchronize()


@pytest.mark.parametrize("m,n", [(0, 48), (33, 0)])
def test_gemm_empty_output(m, n):
    kt.require_combo(F16_TN)
    a = kt.randn_half((m, 64), torch.float16)
    b = kt.randn_half((n, 64), torch.float16).t()
    c = kt.randn_half((m, n), torch.float16)
    out = kiln.gemm(a, b, c=c, beta=1.0)
    assert out.shape == (m, n) and out.dtype == torch.float16
    torch.cuda.synchronize()


@pytest.mark.parametrize("bias,act", [(False, None), (True, None), (True, "relu")])
def test_scaled_mm_k0_is_the_epilogue(bias, act):
    kt.require_combo(FP8_TN)
    m, n = 70, 136
    a = torch.empty((m, 0), dtype=torch.float8_e4m3fn, device="cuda")
    w = torch.empty((n, 0), dtype=torch.float8_e4m3fn, device="cuda")
    b_vec = torch.randn(n, device="cuda").to(torch.bfloat16) if bias else None
    out = kt.poisoned(m, n, torch.bfloat16)
    kiln.scaled_mm(a, w.t(), kt.positive(()), kt.positive(()), bias=b_vec, activation=act, out=out)
    torch.cuda.synchronize()
    expect = torch.zeros((m, n), device="cuda") if b_vec is None else b_vec.float().expand(m, n)
    expect = kt.act_ref(expect, act).to(torch.bfloat16)
    assert torch.equal(out, expect), "K = 0 must give act(bias) (zeros without a bias) in every element"
    kt.untouched_outside(out, "scaled_mm K=0")


def test_gemm_k0_is_beta_c():
    kt.require_combo(F16_TN)
    m, n = 65, 40
    a = torch.empty((m, 0), dtype=torch.float16, device="cuda")
    b = torch.empty((0, n), dtype=torch.float16, device="cuda")
    c = kt.randn_half((m, n), torch.float16)
    out = kt.poisoned(m, n, torch.float16)
    kiln.gemm(a, b, c=c, alpha=3.0, beta=0.5, out=out)
    torch.cuda.synchronize()
    kt.check(out, 0.5 * kt.f64(c), kt.TOL_HALF, "gemm K=0: D = beta*C")
    kt.untouched_outside(out, "gemm K=0")
    zeros = kiln.gemm(a, b)
    torch.cuda.synchronize()
    assert zeros.shape == (m, n) and not zeros.any(), "K = 0 without C and bias must give zeros"


def test_mixed_mm_k0_is_the_bias():
    kt.require_combo(MIXED)
    m, n = 17, 64
    packed = kiln.prepack_b(torch.empty((n, 0), dtype=torch.float8_e4m3fn, device="cuda").t())
    assert packed.data.shape == (n, 0) and packed.k == 0
    a = torch.empty((m, 0), dtype=torch.float16, device="cuda")
    bias = torch.randn(n, device="cuda").to(torch.float16)
    out = kiln.mixed_mm(a, packed, scale_b=kt.positive((n,)), bias=bias)
    torch.cuda.synchronize()
    assert torch.equal(out, bias.expand(m, n))


def test_mixed_mm_empty_rows():
    kt.require_combo(MIXED)
    packed = kiln.prepack_b(_fp8(32, 64).t())
    a = torch.empty((2, 0, 64), dtype=torch.float16, device="cuda")  # [batch, seq = 0, K]
    out = kiln.mixed_mm(a, packed)
    torch.cuda.synchronize()
    assert out.shape == (2, 0, 32)


def test_zero_batch():
    kt.require_combo(FP8_TN)
    a = torch.empty((0, 8, 64), dtype=torch.float8_e4m3fn, device="cuda")
    w = torch.empty((0, 16, 64), dtype=torch.float8_e4m3fn, device="cuda")
    out = kiln.scaled_mm(a, w.transpose(-1, -2), kt.positive(()), kt.positive(()))
    assert out.shape == (0, 8, 16)


# K = 0 on odd and batched shapes, both layouts, alpha/beta with C, vector scales: the gate of kilntest.
K0_SHAPES = [(1, 96, 0), (129, 257, 0), (3, 77, 99, 0)]
EPILOGUES = [dict(), dict(bias=DType.BF16), dict(bias=DType.F32, act="gelu"), dict(act="silu")]


def _bias(n, bias_type):
    return torch.randn(n, device="cuda").to(kt.tdt(bias_type)) if bias_type is not None else None


@pytest.mark.parametrize("shape", K0_SHAPES, ids=kt.shape_id)
@pytest.mark.parametrize("layout", [Layout.TN, Layout.NN], ids=lambda lay: lay.name)
@pytest.mark.parametrize("alpha,beta,with_c", [(1.0, 0.0, False), (0.5, -1.25, True), (2.0, 1.0, True)])
def test_gemm_k0_odd_shapes(shape, layout, alpha, beta, with_c):
    batch, m, n, k = kt.split_shape(shape)
    a_t = DType.F16 if layout == Layout.TN else DType.BF16
    kt.require_combo((a_t, a_t, a_t, layout, False))
    a = kt.randn_half(kt.mk(batch, m, k), kt.tdt(a_t))
    b = kt.b_operand(k, n, kt.tdt(a_t), layout, batch)
    c = kt.randn_half(kt.mk(batch, m, n), kt.tdt(a_t)) if with_c else None
    bias = _bias(n, DType.F32 if with_c else None)
    ref = kt.reference(a, b, alpha=alpha, beta=beta, c=c, bias=bias, act="relu" if with_c else None)
    out = kt.poisoned(m, n, kt.tdt(a_t), batch)
    res = kiln.gemm(a, b, c=c, alpha=alpha, beta=beta, bias=bias, activation="relu" if with_c else None, out=out)
    assert res is out
    what = f"gemm K=0 {kt.shape_id(shape)} {layout.name} alpha={alpha} beta={beta} c={with_c}"
    kt.check(out, ref, kt.TOL_HALF, what)
    kt.untouched_outside(out, what)


@pytest.mark.parametrize("shape", K0_SHAPES, ids=kt.shape_id)
@pytest.mark.parametrize("epi", EPILOGUES, ids=lambda e: "-".join(f"{k}={kt.name_of(v)}" for k, v in e.items())
                         or "plain")
def test_scaled_mm_k0_odd_shapes(shape, epi):
    batch, m, n, k = kt.split_shape(shape)
    combo = (DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, False)
    kt.require_combo(combo)
    a = kt.randn_fp8(kt.mk(batch, m, k), torch.float8_e4m3fn)
    b = kt.b_operand(k, n, torch.float8_e4m3fn, Layout.TN, batch)
    sa, sb = kt.positive(()), kt.positive((n,))
    bias = _bias(n, epi.get("bias"))
    act = epi.get("act")
    ref = kt.reference(a, b, sa=sa, sb=sb, bias=bias, act=act)
    out = kt.poisoned(m, n, torch.bfloat16, batch)
    res = kiln.scaled_mm(a, b, sa, sb, bias=bias, activation=act, out=out)
    assert res is out
    what = f"scaled_mm K=0 {kt.shape_id(shape)} {epi}"
    kt.check(out, ref, kt.TOL_FP8, what)
    kt.untouched_outside(out, what)
