"""fp8 x fp8 scaled GEMM (kiln.scaled_mm) against the float64 reference: every type mix the library lists, every
shape, scale modes, bias types and activations, batched, and the torch._scaled_mm calling convention."""
from __future__ import annotations

import itertools

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

FP8 = [DType.E4M3, DType.E5M2, DType.E4M3FNUZ, DType.E5M2FNUZ]
FNUZ = {DType.E4M3FNUZ, DType.E5M2FNUZ}
COMBOS = [(a, b, d, lay, False) for a in FP8 for b in FP8 if (a in FNUZ) == (b in FNUZ)
          for d in (DType.BF16, DType.F16, DType.F32) for lay in (Layout.TN, Layout.NN)]
BASE = (DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, False)


def scale(mode, length, as_row):
    """A float32 scale: per tensor (0-dim or [1]) or a vector ([L] or [L, 1] / [1, L])."""
    if mode == "tensor":
        return kt.positive(())
    if mode == "tensor1":
        return kt.positive((1,))
    if mode == "vector":
        return kt.positive((length,))
    return kt.positive((length, 1) if as_row else (1, length))  # "vector2d"


def run_fp8(shape, combo, sa_mode="tensor", sb_mode="tensor", bias_type=None, act=None, algo=None, fast=False):
    batch, m, n, k = kt.split_shape(shape)
    a_t, b_t, d_t, lay, _ = combo
    a = kt.randn_fp8(kt.mk(batch, m, k), kt.tdt(a_t), extra_rows=1 if batch else 0)
    b = kt.b_operand(k, n, kt.tdt(b_t), lay, batch, extra_rows=2 if batch else 0)
    sa, sb = scale(sa_mode, m, True), scale(sb_mode, n, False)
    bias = torch.randn(n, device="cuda").to(kt.tdt(bias_type)) if bias_type is not None else None
    what = (f"{kt.combo_id(combo)} {kt.shape_id(shape)} sa={sa_mode} sb={sb_mode} "
            f"bias={kt.name_of(bias_type)} act={act}" + (" fast_accum" if fast else ""))
    ref = kt.reference(a, b, sa=sa, sb=sb, bias=bias, act=act)
    kwargs = dict(bias=bias, activation=act, **(dict(use_fast_accum=True) if fast else {}))
    return kt.run_checked(kiln.scaled_mm, (a, b, sa, sb), kwargs,
                          lambda: kt.poisoned(m, n, kt.tdt(d_t), batch), ref, kt.TOL_FP8, what, algo)


@pytest.mark.parametrize("combo", COMBOS, ids=kt.combo_id)
def test_fp8_types(combo):
    kt.require_combo(combo)
    for shape in kt.FEW_SHAPES:
        run_fp8(shape, combo)


@pytest.mark.parametrize("shape", kt.ALL_SHAPES, ids=kt.shape_id)
def test_fp8_shapes(shape):
    kt.require_combo(BASE)
    run_fp8(shape, BASE)


EPILOGUES = list(itertools.product(["tensor", "vector"], ["tensor", "vector"], [None, DType.BF16, DType.F32],
                                   [None, "relu", "gelu", "silu"]))


@pytest.mark.parametrize("sa_mode,sb_mode,bias_type,act", EPILOGUES, ids=kt.name_of)
def test_fp8_epilogue(sa_mode, sb_mode, bias_type, act):
    kt.require_combo(BASE)
    for shape in ((300, 200, 512), (2, 65, 130, 256)):
        run_fp8(shape, BASE, sa_mode, sb_mode, bias_type, act)


@pytest.mark.parametrize("d_t", [DType.F16, DType.F32])
def test_fp8_epilogue_other_outputs(d_t):
    combo = (DType.E4M3, DType.E5M2, d_t, Layout.TN, False)
    kt.require_combo(combo)
    run_fp8((257, 129, 384), combo, "vector2d", "vector2d", DType.F32, "gelu")
    run_fp8((257, 129, 384), combo, "tensor1", "vector", DType.BF16, "silu")


def test_fp8_like_torch_scaled_mm():
    """torch._scaled_mm's convention: a [M, K] row-major, b = w.t() of a row-major [N, K] weight, 0-dim scales.
    The default output (bf16, allocated by kiln) agrees with the reference and with torch's own result."""
    kt.require_combo(BASE)
    m, n, k = 256, 512, 1024
    a = kt.fp8_values((m, k), torch.float8_e4m3fn)
    w = kt.fp8_values((n, k), torch.float8_e4m3fn)
    sa, sb = kt.positive(()), kt.positive(())
    out = kiln.scaled_mm(a, w.t(), sa, sb)
    assert out.dtype == torch.bfloat16 and out.shape == (m, n) and out.is_contiguous()
    ref = kt.reference(a, w.t(), sa=sa, sb=sb)
    kt.check(out, ref, kt.TOL_FP8, "scaled_mm default output")
    try:
        theirs = torch._scaled_mm(a, w.t(), sa, sb, out_dtype=torch.bfloat16)
    except (RuntimeError, TypeError) as exc:  # torch without fp8 GEMM on this device
        pytest.skip(f"torch._scaled_mm unavailable: {exc}")
    if isinstance(theirs, tuple):
        theirs = theirs[0]
    assert kt.rel_l2(out, kt.f64(theirs)) < 2 * kt.TOL_FP8


def test_fp8_uint8_override_is_bitwise_the_same():
    kt.require_combo(BASE)
    m, n, k = 192, 320, 256
    a = kt.fp8_values((m, k), torch.float8_e4m3fn)
    w = kt.fp8_values((n, k), torch.float8_e4m3fn)
    sa, sb = kt.positive((m,)), kt.positive((n,))
    algo = kiln.query(kiln.scaled_mm, a, w.t(), sa, sb, k=1)[0]
    ours = kiln.scaled_mm(a, w.t(), sa, sb, algo=algo)
    raw = kiln.scaled_mm(a.view(torch.uint8), w.view(torch.uint8).t(), sa, sb, a_fp8="e4m3", b_fp8="e4m3",
                         algo=algo)
    assert torch.equal(ours, raw)
    with pytest.raises(TypeError, match="fp8="):
        kiln.scaled_mm(a.view(torch.uint8), w.t(), sa, sb)


CLUSTER_SPLIT_SHAPES = [(1, 1000, 8192), (3, 4104, 4096), (17, 130, 1008), (2, 5, 520, 2048), (65, 300, 1536),
                        (128, 2056, 7168), (64, 192, 256), (64, 192, 128)]


def test_fp8_cluster_split():
    """Every split-K-in-a-cluster kernel of the fp8 table (MC3: the gsu CTAs of a cluster take a tile's K slices and
    the first adds the others' promoted FP32 sums from their shared memory), forced by name on odd small-M shapes
    (K not a multiple of 128, a batch, M past one tile) with row and column scales, a bias and an activation, into
    a poisoned output; where K leaves a split empty the call is refused (INVALID_ALGO) and the output stays as it
    was."""
    kt.require_combo(BASE)
    names = sorted(n for n in kt.claimed_names_of(kt.arch(), BASE)
                   if "_MC3_" in n and kt.table_solutions()[n].problem.kind.value == "fp8_scaled")
    if not names:
        pytest.skip(f"no split-K-in-a-cluster {kt.combo_id(BASE)} kernel in this table")
    ran, refused = set(), 0
    for shape in CLUSTER_SPLIT_SHAPES:
        batch, m, n, k = kt.split_shape(shape)
        a = kt.randn_fp8(kt.mk(batch, m, k), kt.tdt(DType.E4M3), extra_rows=1 if batch else 0)
        b = kt.b_operand(k, n, kt.tdt(DType.E4M3), Layout.TN, batch, extra_rows=2 if batch else 0)
        sa, sb = scale("vector", m, True), scale("vector", n, False)
        bias = torch.randn(n, device="cuda").to(torch.bfloat16)
        ref = kt.reference(a, b, sa=sa, sb=sb, bias=bias, act="gelu")
        for name in names:
            out = kt.poisoned(m, n, torch.bfloat16, batch)
            try:
                res = kt.run_and_record(kiln.scaled_mm, a, b, sa, sb, bias=bias, activation="gelu", out=out,
                                        algo=kiln.algo_by_name(name))
            except kiln.KilnError as exc:
                assert exc.status == kiln.Status.INVALID_ALGO, f"{name} {kt.shape_id(shape)}: {exc}"
                assert torch.isnan(out).all(), f"{name} {kt.shape_id(shape)}: refused, yet the output was written"
                refused += 1
                continue
            kt.check(res, ref, kt.TOL_FP8, f"{name} {kt.shape_id(shape)}")
            kt.untouched_outside(res, name)
            ran.add(name)
    assert ran == set(names), f"split-K-in-a-cluster kernels that ran on no shape: {sorted(set(names) - ran)}"
    assert refused, "no shape left a split empty: the refusal path went untested"


def test_fp8_query_and_explain():
    kt.require_combo(BASE)
    a = kt.fp8_values((512, 512), torch.float8_e4m3fn)
    w = kt.fp8_values((1024, 512), torch.float8_e4m3fn)
    sa, sb = kt.positive(()), kt.positive(())
    infos = kiln.query(kiln.scaled_mm, a, w.t(), sa, sb, k=kt.TOPK)
    assert infos and len(infos) <= kt.TOPK
    assert kiln.algos("scaled_mm", a, w.t(), sa, sb, k=kt.TOPK) == [i.name for i in infos]
    for info in infos:
        assert kt.decode(info.name).arch.value == kt.arch()
        assert info.gsu == kt.decode(info.name).gsu
    text = kiln.explain(kiln.scaled_mm, a, w.t(), sa, sb)
    assert infos[0].name in text


def _same_sign(m, n, k, seed):
    """A and B positive (|N(0, 1)| + 0.5): every product has the same sign, so an accumulator that keeps fewer bits
    than FP32 on each add drifts instead of averaging out. Zero-mean inputs hide it."""
    torch.manual_seed(seed)
    a = (torch.randn(m, k, device="cuda").abs() + 0.5).to(torch.float8_e4m3fn)
    w = (torch.randn(n, k, device="cuda").abs() + 0.5).to(torch.float8_e4m3fn)
    return a, w


# Relative L2 on same-sign products over long K: cuBLASLt's default mode reaches 2.5e-4 at 2048 x 2048 x 8192
# (bench/accum_probe.py); sums kept in wgmma's fp8 accumulator over all of K reach 1.6e-1.
TOL_PROMOTED = 1e-3


@pytest.mark.parametrize("shape", [(2048, 2048, 8192), (4096, 4096, 16384), (128, 7168, 16384), (64, 2112, 7168),
                                   (16, 4096, 14336), (1, 8192, 28672), (333, 1000, 9000)], ids=kt.shape_id)
def test_long_k_same_sign_products(shape):
    """The default accumulation (fast_accum off) promotes wgmma's fp8 sums to FP32 every 128 of K, whichever kernel
    the selection picks for the shape (large tiles, split-K, ping-pong): the error stays at cuBLASLt's level."""
    kt.require_combo(BASE)
    m, n, k = shape
    a, w = _same_sign(m, n, k, 11)
    one = torch.tensor(1.0, device="cuda")
    for info in kiln.query(kiln.scaled_mm, a, w.t(), one, one, out_dtype=torch.float32, k=3):
        out = kiln.scaled_mm(a, w.t(), one, one, out_dtype=torch.float32, algo=info)
        torch.cuda.synchronize()
        err = kt.rel_l2(out, kt.reference(a, w.t(), sa=one, sb=one))
        assert err <= TOL_PROMOTED, f"{m}x{n}x{k} same-sign e4m3 -> f32 with {info.name}: rel L2 {err:.2e}"
        kt.EXERCISED.add(info.name)


def test_fast_accum_is_opt_in():
    """use_fast_accum=True may pick kernels that keep the sum in wgmma's accumulator (PR0, like cuBLASLt's fast-accum
    mode): they stay correct on zero-mean inputs and show the known drift on same-sign ones; the default never picks
    them for more than one K-tile."""
    kt.require_combo(BASE)
    m = n = 2048
    k = 8192
    one = torch.tensor(1.0, device="cuda")
    a, w = _same_sign(m, n, k, 12)
    f32 = dict(out_dtype=torch.float32)
    default = [i.name for i in kiln.query(kiln.scaled_mm, a, w.t(), one, one, k=kt.SWEEP_K, **f32)]
    assert default and all(kt.decode(name).pr > 0 or kt.decode(name).family.value != "wgmma" for name in default)
    fast = kiln.query(kiln.scaled_mm, a, w.t(), one, one, use_fast_accum=True, k=kt.SWEEP_K, **f32)
    assert fast and any(kt.decode(i.name).pr == 0 for i in fast)
    if kt.arch() == "sm90":
        assert "fast_accum" in kiln.explain(kiln.scaled_mm, a, w.t(), one, one, use_fast_accum=True, **f32)
        out = kiln.scaled_mm(a, w.t(), one, one, out_dtype=torch.float32, use_fast_accum=True, algo=fast[0])
        ref = kt.reference(a, w.t(), sa=one, sb=one)
        assert kt.rel_l2(out, ref) > 10 * TOL_PROMOTED  # the drift the default avoids (1.6e-1 measured)
    for shape in ((1024, 1024, 4096), (257, 129, 384)):
        run_fp8(shape, BASE, fast=True)
