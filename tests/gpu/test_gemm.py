"""f16/bf16 GEMM (kiln.gemm) against the float64 reference: TN and NN, D in the input type or f32, alpha/beta with
C, bias and activations, batched, odd K through padded leading dimensions, and torch's a @ b convention."""
from __future__ import annotations

import itertools

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

COMBOS = [(a, a, d, lay, False) for a in (DType.F16, DType.BF16) for d in (DType.F16, DType.BF16, DType.F32)
          for lay in (Layout.TN, Layout.NN)]


def base(layout, a_t=DType.F16, d_t=None):
    return (a_t, a_t, d_t or a_t, layout, False)


def run_gemm(shape, combo, alpha=1.0, beta=0.0, with_c=False, bias_type=None, act=None, algo=None):
    batch, m, n, k = kt.split_shape(shape)
    a_t, b_t, d_t, lay, _ = combo
    a = kt.randn_half(kt.mk(batch, m, k), kt.tdt(a_t), extra_rows=1 if batch else 0)
    b = kt.b_operand(k, n, kt.tdt(b_t), lay, batch, extra_rows=3 if batch else 0)
    c = kt.randn_half(kt.mk(batch, m, n), kt.tdt(d_t), extra_rows=2 if batch else 0) if with_c else None
    bias = torch.randn(n, device="cuda").to(kt.tdt(bias_type)) if bias_type is not None else None
    what = (f"{kt.combo_id(combo)} {kt.shape_id(shape)} alpha={alpha} beta={beta} c={with_c} "
            f"bias={kt.name_of(bias_type)} act={act}")
    ref = kt.reference(a, b, alpha=alpha, beta=beta, c=c, bias=bias, act=act)
    return kt.run_checked(kiln.gemm, (a, b), dict(c=c, alpha=alpha, beta=beta, bias=bias, activation=act),
                          lambda: kt.poisoned(m, n, kt.tdt(d_t), batch), ref, kt.TOL_HALF, what, algo)


@pytest.mark.parametrize("combo", COMBOS, ids=kt.combo_id)
def test_gemm_types(combo):
    kt.require_combo(combo)
    for shape in kt.FEW_SHAPES:
        run_gemm(shape, combo)


@pytest.mark.parametrize("shape", kt.ALL_SHAPES, ids=kt.shape_id)
@pytest.mark.parametrize("layout", [Layout.TN, Layout.NN], ids=lambda lay: lay.name)
def test_gemm_shapes(layout, shape):
    combo = base(layout, DType.F16 if sum(shape) % 2 else DType.BF16)
    kt.require_combo(combo)
    run_gemm(shape, combo)


ALPHA_BETA = [(0.5, -1.25, True), (2.0, 0.0, False), (1.0, 1.0, True), (0.0, 0.75, True)]


@pytest.mark.parametrize("alpha,beta,with_c", ALPHA_BETA)
@pytest.mark.parametrize("combo", [base(Layout.TN), base(Layout.NN, DType.BF16),
                                   base(Layout.TN, DType.BF16, DType.F32), base(Layout.NN, DType.F16, DType.F32)],
                         ids=kt.combo_id)
def test_gemm_alpha_beta(combo, alpha, beta, with_c):
    kt.require_combo(combo)
    for shape in ((257, 129, 200), (2, 100, 64, 72)):
        run_gemm(shape, combo, alpha, beta, with_c)


EPILOGUES = list(itertools.product([None, "same", DType.F32], [None, "relu", "gelu", "silu"]))


@pytest.mark.parametrize("bias_type,act", EPILOGUES, ids=kt.name_of)
@pytest.mark.parametrize("layout", [Layout.TN, Layout.NN], ids=lambda lay: lay.name)
def test_gemm_epilogue(layout, bias_type, act):
    combo = base(layout, DType.BF16)
    kt.require_combo(combo)
    bias_t = DType.BF16 if bias_type == "same" else bias_type
    run_gemm((333, 190, 256), combo, 0.5, 0.25, True, bias_t, act)


def test_gemm_like_torch_mm():
    """torch's a @ b on contiguous tensors (NN), default output dtype, alongside torch.mm."""
    m, n, k = 384, 640, 512
    for dtype in (torch.float16, torch.bfloat16):
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        kt.require_combo((kiln.kiln_dtype(a),) * 3 + (Layout.NN, False))
        out = kiln.gemm(a, b)
        assert out.dtype == dtype and out.shape == (m, n)
        ref = kt.reference(a, b)
        kt.check(out, ref, kt.TOL_HALF, f"gemm {dtype} default output")
        assert kt.rel_l2(out, kt.f64(torch.mm(a, b))) < 2 * kt.TOL_HALF + 4e-3
        f32 = kiln.gemm(a, b.t().contiguous().t(), out_dtype=torch.float32)  # TN view of the same B
        kt.check(f32, ref, kt.TOL_HALF, f"gemm {dtype} -> f32 TN")


def test_gemm_rejects_a_with_strided_k():
    a = torch.randn(64, 32, device="cuda", dtype=torch.float16).t()  # [32, 64] with stride(1) = 32
    b = torch.randn(64, 16, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="unit stride along K"):
        kiln.gemm(a, b)
    with pytest.raises(ValueError, match="needs c="):
        kiln.gemm(a.contiguous(), b, beta=1.0)
