"""Block-scaled fp8 GEMM (kiln.block_scaled_mm, KILN_SCALE_BLOCK) against the float64 blockwise reference from the
same fp8 tensors and scales (kiln.block_scaled_reference): odd shapes with partial tiles and a partial last K group,
both granularities of B (128x128, 1x128), kiln's, DeepGEMM's and torch._scaled_mm's scale layouts, bias, every
output type, scales spanning six decades across groups, every kernel the library lists, the quantization helpers,
and clear errors. The gate is kilntest's (relative L2 <= 1e-2 plus output rounding, poisoned outputs, nothing
written outside D).

Skips when the library has no block-scaled kernel for the device (kiln_query answers NO_SOLUTION / NOT_SUPPORTED)
unless generated/ lists one for this arch: then a missing answer fails.
"""
from __future__ import annotations

import math

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

GROUP = 128
NOT_THERE = ("NO_SOLUTION", "NOT_SUPPORTED", "NO_CODE_FOR_DEVICE")
OUT_TYPES = {DType.BF16: "bfloat16", DType.F16: "float16", DType.F32: "float32"}


# ---- what the library has ----

def block_names(arch_name: str, d_type=None) -> set:
    """Kernels generated/ lists for block-scaled fp8 on this arch (name suffix Q: kind fp8_block_scaled)."""
    out = set()
    for name, sol in kt.table_solutions().items():
        kind = getattr(getattr(sol.problem, "kind", None), "value", None)
        if sol.arch.value == arch_name and kind == "fp8_block_scaled":
            if d_type is None or kt.combo_of(sol)[2] == d_type:
                out.add(name)
    return out


def require_block(d_type=DType.BF16, m=256, n=256, k=256):
    p = kiln.make_problem(DType.E4M3, DType.E4M3, d_type, Layout.TN, m, n, k, scale_a=kiln.ScaleMode.BLOCK,
                          scale_b=kiln.ScaleMode.BLOCK)
    try:
        found, err = kiln.query_problem(p, 1), None
    except kiln.KilnError as exc:
        if exc.status.name not in NOT_THERE:
            raise
        found, err = [], exc
    if found:
        return
    if block_names(kt.arch(), d_type):
        pytest.fail(f"block-scaled e4m3 -> {d_type.name}: generated/ lists kernels for {kt.arch()} but kiln_query "
                    f"finds none ({err})")
    pytest.skip(f"no block-scaled e4m3 -> {d_type.name} kernel for {kt.arch()} ({err})")


# ---- inputs ----

def groups(k: int) -> int:
    return -(-k // GROUP)


def spread_scales(shape, lo=-3.0, hi=3.0):
    """float32 scales 10^u, u uniform in [lo, hi]: groups and rows whose products differ by up to 10^12, so applying
    one scale per row (or per tile) instead of per group and row fails the gate by orders of magnitude."""
    u = torch.rand(shape, device="cuda") * (hi - lo) + lo
    return torch.pow(10.0, u)


def scale_a_in(s, layout: str):
    """scale_a [M, G] (values of s) in a layout: kiln's (M-major), DeepGEMM's, k-major, or inside padded storage."""
    if layout == "padded":  # a strided view into a larger buffer, poisoned around it
        m, g = s.shape
        base = torch.full((g + 1, m + 5), float("nan"), device="cuda")
        view = base[1:, 3:3 + m].t()
        view.copy_(s)
        return view
    return kiln.scale_layout(s, layout, operand="a")


def scale_b_in(s, layout: str, b_block: int):
    """scale_b from kiln's orientation [N side, G] into a layout ("torch" is torch._scaled_mm's, transposed)."""
    return kiln.scale_layout(s, layout, operand="b", b_block=b_block)


def make_inputs(m, n, k, b_block=128, spread=True):
    """fp8 A [M, K] and B = W.t() (W [N, K]) in padded, poisoned storage (no zero codes), scales in kiln's
    orientation: sa [M, G], sb [ceil(N/128), G] or [N, G]."""
    a = kt.randn_fp8((m, k), torch.float8_e4m3fn)
    b = kt.b_operand(k, n, torch.float8_e4m3fn, Layout.TN)
    g = groups(k)
    rows = -(-n // b_block)
    make = spread_scales if spread else (lambda shape: kt.positive(shape))
    return a, b, make((m, g)), make((rows, g))


def run_block(m, n, k, *, b_block=128, a_layout="kiln", b_layout="kiln", d_type=DType.BF16, bias_type=None,
              spread=True, algo=None, pass_b_block=False):
    """One checked call (or one per kernel with algo="each"); returns the AlgoInfos tried."""
    a, b, sa, sb = make_inputs(m, n, k, b_block, spread)
    sa_t, sb_t = scale_a_in(sa, a_layout), scale_b_in(sb, b_layout, b_block)
    bias = torch.randn(n, device="cuda").to(kt.tdt(bias_type)) if bias_type is not None else None
    kwargs = dict(bias=bias)
    order = None
    if pass_b_block:  # say both: a square scale_b in an unusual layout (mn-major 128x128) needs the order too
        order = "kn" if b_layout == "torch" else "nk"
        kwargs.update(b_block=b_block, scale_b_order=order)
    if d_type != DType.BF16:
        kwargs["out_dtype"] = kt.tdt(d_type)
    ref = kiln.block_scaled_reference(a, b, sa_t, sb_t, bias=bias, b_block=kwargs.get("b_block"),
                                      scale_b_order=order)
    # the reference reads the scales through the same rules as the op; check that those rules found the values
    # the test meant (kiln's orientation, sa/sb), so that a layout misread cannot pass on both sides
    ref_meant = kiln.block_scaled_reference(a, b, sa, kiln.scale_layout(sb, "k-major", operand="b"),
                                            bias=bias, b_block=b_block, scale_b_order="nk")
    assert torch.allclose(ref, ref_meant, rtol=1e-12, atol=0), "the layout rules misread a scale tensor"
    what = (f"block {m}x{n}x{k} b_block={b_block} sa={a_layout} sb={b_layout} d={d_type.name} "
            f"bias={kt.name_of(bias_type)}")
    make_out = lambda: kt.poisoned(m, n, kt.tdt(d_type))  # noqa: E731
    args = (a, b, sa_t, sb_t)
    if algo != "each":
        return kt.run_checked(kiln.block_scaled_mm, args, kwargs, make_out, ref, kt.TOL_FP8, what, algo)
    offered = kiln.query(kiln.block_scaled_mm, *args, out=make_out(), k=kt.SWEEP_K, **kwargs)
    assert offered, f"{what}: kiln_query returned no candidate"
    names = {al.name for al in offered}
    forced = [kiln.algo_by_name(nm) for nm in sorted(block_names(kt.arch(), d_type) - names)]
    for al in offered + forced:
        out = make_out()
        label = f"{what} algo={al.name}"
        try:
            res = kt.run_and_record(kiln.block_scaled_mm, *args, out=out, algo=al, **kwargs)
        except kiln.KilnError as exc:
            if al in forced and exc.status == kiln.Status.INVALID_ALGO:
                continue  # a tuning variant that does not take this shape (split-K depth and the like)
            raise
        assert res is out
        kt.check(out, ref, kt.TOL_FP8, label)
        kt.untouched_outside(out, label)
    return offered


def shape_id(s) -> str:
    return "x".join(map(str, s))


# ---- shapes ----

SMALL_M = (1, 63, 64, 65, 128, 300)
SMALL_N = (1, 8, 100, 128, 129, 2112)
SMALL_K = (128, 256, 300)
SMALL = [(m, n, k) for m in SMALL_M for n in SMALL_N for k in SMALL_K]
LARGE = [(4096, 7168, 7168), (4096, 2112, 7168), (4096, 129, 300), (64, 7168, 7168), (128, 7168, 2048),
         (300, 129, 7168), (1, 7168, 7168), (65, 2112, 7168), (4096, 7168, 256), (63, 100, 7168)]


@pytest.mark.parametrize("shape", SMALL, ids=shape_id)
def test_block_small_shapes(shape):
    require_block()
    run_block(*shape)


@pytest.mark.parametrize("shape", LARGE, ids=shape_id)
def test_block_large_shapes(shape):
    require_block()
    run_block(*shape)


@pytest.mark.parametrize("shape", [(65, 129, 300), (300, 2112, 7168), (1, 100, 256), (4096, 7168, 7168)],
                         ids=shape_id)
def test_block_1x128_b(shape):
    """One scale per column of B and group (the weight-gradient recipe)."""
    require_block()
    run_block(*shape, b_block=1)


LAYOUTS = [(a, b) for a in ("kiln", "deepgemm", "k-major", "padded") for b in ("kiln", "torch", "deepgemm",
                                                                                   "mn-major", "k-major")]


@pytest.mark.parametrize("a_layout,b_layout", LAYOUTS, ids=lambda v: v)
@pytest.mark.parametrize("b_block", [128, 1])
def test_block_scale_layouts(a_layout, b_layout, b_block):
    require_block()
    for shape in ((63, 300, 300), (130, 2112, 1024)):
        run_block(*shape, b_block=b_block, a_layout=a_layout, b_layout=b_layout, pass_b_block=True)


def test_block_square_scale_b_auto():
    """N == K: a square 128x128 scale_b, told apart by its memory (kiln's row-major vs torch's transposed view)."""
    require_block()
    for b_layout in ("kiln", "torch"):
        run_block(256, 1024, 1024, b_layout=b_layout)


@pytest.mark.parametrize("d_type", [DType.BF16, DType.F16, DType.F32], ids=kt.name_of)
@pytest.mark.parametrize("bias_type", [None, DType.F32, DType.BF16, DType.F16], ids=kt.name_of)
def test_block_outputs_and_bias(d_type, bias_type):
    require_block(d_type)
    for shape in ((65, 129, 300), (300, 2112, 1024)):  # f16 holds 65504 at most: no 10^6 scales there
        run_block(*shape, d_type=d_type, bias_type=bias_type, spread=d_type != DType.F16)


@pytest.mark.parametrize("d_type", [DType.BF16, DType.F32], ids=kt.name_of)
def test_block_every_kernel(d_type):
    """Every kernel kiln_query offers and every block-scaled kernel generated/ lists, forced, on shapes with partial
    tiles and a partial last group (split-K variants included), for each output type the table has."""
    require_block(d_type)
    for shape in ((64, 2112, 7168), (300, 129, 300), (128, 4096, 2048), (1, 100, 1024)):
        run_block(*shape, d_type=d_type, algo="each")


@pytest.mark.parametrize("path", ["tma", "warp"])
def test_block_cluster_split(path, monkeypatch):
    """Every split-K-in-a-cluster block-scaled kernel (MC3: the cluster's first CTA adds the others' promoted sums
    from their shared memory), forced by name, with either way of getting the scales, on shapes with partial tiles,
    K not a multiple of 128 and a bias; where K leaves a split empty the call is refused and the output untouched."""
    require_block()
    names = sorted(nm for nm in block_names(kt.arch(), DType.BF16) if "_MC3_" in nm)
    if not names:
        pytest.skip("no split-K-in-a-cluster block-scaled kernel in this table")
    if path == "warp":
        monkeypatch.setenv("KILN_TMA_SCALES", "0")
    ran, refused = set(), 0
    for m, n, k in ((64, 2112, 7168), (1, 300, 1000), (130, 4100, 2048), (64, 256, 256), (64, 256, 128)):
        for nm in names:
            try:
                run_block(m, n, k, bias_type=DType.BF16, algo=kiln.algo_by_name(nm))
                ran.add(nm)
            except kiln.KilnError as exc:
                assert exc.status == kiln.Status.INVALID_ALGO, f"{nm} {m}x{n}x{k}: {exc}"
                refused += 1
    assert ran == set(names), f"split-K-in-a-cluster kernels that ran on no shape: {sorted(set(names) - ran)}"
    assert refused, "no shape left a split empty: the refusal path went untested"


@pytest.mark.parametrize("path", ["tma", "warp"])
def test_block_scale_paths(path, monkeypatch):
    """Both ways a block-scaled kernel gets its scales (kiln_abi.h, scale_tma): the copy engine (scale_a M-major with
    16-byte strides, scale_b K- or N-major likewise) and the producer's scale warp (KILN_TMA_SCALES=0, or layouts the
    maps cannot take), every kernel forced, with partial tiles, a partial last group and N-major 128x128 and 1x128
    scale_b."""
    require_block()
    if path == "warp":
        monkeypatch.setenv("KILN_TMA_SCALES", "0")
    for shape in ((64, 2112, 7168), (300, 129, 300), (128, 4096, 2048)):
        run_block(*shape, algo="each")  # K-major 128x128 scale_b
    run_block(256, 1000, 1536, b_layout="mn-major", algo="each")  # N-major 128x128
    run_block(256, 1000, 1536, b_block=1, algo="each")  # N-major 1x128
    run_block(256, 1000, 1536, b_block=1, b_layout="k-major")  # K-major 1x128: the scale warp either way


def test_block_outliers_need_per_group_scales():
    """Unit fp8 values with scales 10^-3..10^3 per group: the reference's row sums are dominated by a few groups;
    a kernel applying one scale per row or per tile lands orders of magnitude off."""
    require_block()
    m, n, k = 128, 256, 1024
    a, b, sa, sb = make_inputs(m, n, k)
    # Group 0 at the bottom of the range: a kernel that applies a row's first scale to all its groups is then off by
    # orders of magnitude on every row. With all eight groups random, group 0 was the dominant group of the largest
    # rows in about one draw in twenty (a float64 model of this check: 5 % of 300 draws under 0.5), and the self-check
    # below failed by chance, as in the suite at 306851b (0.19 against 0.5). With group 0 pinned: 1.0 in every draw.
    sa[:, 0] = 1e-3
    ref = kiln.block_scaled_reference(a, b, sa, sb)
    wrong = kiln.block_scaled_reference(a, b, sa[:, :1].expand(m, groups(k)).contiguous(), sb)
    assert kt.rel_l2(wrong.to(torch.float32), ref) > 0.5, "the test's scales do not separate the groups"
    out = kt.poisoned(m, n, torch.bfloat16)
    kiln.block_scaled_mm(a, b, sa, sb, out=out)
    kt.check(out, ref, kt.TOL_FP8, "outliers")


def test_block_query_and_explain_name_a_block_kernel():
    require_block()
    a, b, sa, sb = make_inputs(256, 2112, 7168)
    infos = kiln.query(kiln.block_scaled_mm, a, b, sa, sb, k=4)
    assert infos
    names = block_names(kt.arch())
    assert all(i.name in names for i in infos), [i.name for i in infos]
    text = kiln.explain(kiln.block_scaled_mm, a, b, sa, sb)
    assert infos[0].name in text


def test_block_fast_path_matches():
    """The second call of a key runs the cached plan: same result, and new scale values are read."""
    require_block()
    a, b, sa, sb = make_inputs(65, 300, 300)
    first = kiln.block_scaled_mm(a, b, sa, sb)
    again = kiln.block_scaled_mm(a, b, sa, sb)
    assert torch.equal(first, again)
    sa2 = sa * 2.0
    kt.check(kiln.block_scaled_mm(a, b, sa2, sb), kiln.block_scaled_reference(a, b, sa2, sb), kt.TOL_FP8,
             "cached plan, new scales")


# ---- the quantization helpers, end to end ----

def test_quantize_then_gemm_matches_the_unquantized_product():
    require_block()
    m, n, k = 300, 2112, 7168
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    x[:, 1000:1100] *= 1000  # an outlier channel: its group gets its own scale
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
    xq, sx = kiln.quantize_per_token_group(x)
    wq, sw = kiln.quantize_per_block(w)
    assert sx.shape == (m, groups(k)) and sx.stride() == (1, m)
    assert sw.shape == (-(-n // GROUP), groups(k)) and sw.is_contiguous()
    y = kiln.block_scaled_mm(xq, wq.t(), sx, sw)
    kt.check(y, kiln.block_scaled_reference(xq, wq.t(), sx, sw), kt.TOL_FP8, "quantized inputs")
    exact = x.double() @ w.double().t()
    # e4m3 keeps 3 mantissa bits: each product is off by at most ~2 * 2^-4 relative
    assert kt.rel_l2(y, exact) < 0.1


@pytest.mark.parametrize("k", [128, 300, 7168])
def test_quantize_per_token_group(k):
    m = 65
    x = torch.randn(m, k, device="cuda") * spread_scales((m, 1))
    x[3] = 0.0                      # an all-zero row: every group of it all zero
    x[5, :GROUP] = 0.0              # one zero group in a row
    q, s = kiln.quantize_per_token_group(x)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (m, k) and q.is_contiguous()
    assert s.dtype == torch.float32 and s.shape == (m, groups(k)) and s.stride() == (1, 68)  # M-major, 16-byte units
    assert bool(torch.isfinite(s).all()) and bool((s > 0).all()), "a zero group must get a finite positive scale"
    assert bool((q[3].float() == 0).all())
    deq = q.float() * s.repeat_interleave(GROUP, dim=1)[:, :k]
    assert bool(torch.isfinite(deq).all())
    err = (deq - x).abs()
    bound = x.abs() * 2.0 ** -4 + s.repeat_interleave(GROUP, dim=1)[:, :k] * 2.0 ** -9  # half an ulp, subnormals
    assert bool((err <= bound * 1.0001).all()), float((err - bound).max())
    amax = q.float().abs().reshape(m, -1).amax(dim=1)
    assert float(amax[amax > 0].min()) > 400, "each row's largest group should reach the top of e4m3 (448)"


@pytest.mark.parametrize("n,k", [(128, 128), (300, 300), (7168, 2048)])
def test_quantize_per_block(n, k):
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    w[:GROUP, :GROUP] = 0
    q, s = kiln.quantize_per_block(w)
    nb = -(-n // GROUP)
    g = groups(k)
    assert q.shape == (n, k) and s.shape == (nb, g) and s.stride() == (-(-g // 4) * 4, 1)  # K-major, 16-byte rows
    assert bool(torch.isfinite(s).all()) and bool((s > 0).all())
    full = s.repeat_interleave(GROUP, 0)[:n].repeat_interleave(GROUP, 1)[:, :k]
    deq = q.float() * full
    assert bool(((deq - w.float()).abs() <= w.float().abs() * 2.0 ** -4 + full * 2.0 ** -9 + 1e-30).all())


def test_scale_layouts_hold_the_same_values():
    s = torch.rand(63, 7, device="cuda")
    for to in ("kiln", "torch", "deepgemm", "mn-major", "k-major"):
        assert torch.equal(kiln.scale_layout(s, to, operand="a"), s), to
    assert kiln.scale_layout(s, "deepgemm", operand="a").stride() == (1, 64)
    sb = torch.rand(17, 56, device="cuda")
    t = kiln.scale_layout(sb, "torch", operand="b")
    assert t.shape == (56, 17) and t.stride() == (1, 56) and torch.equal(t.t(), sb)


# ---- errors ----

def _ok_inputs():
    return make_inputs(64, 256, 256)


@pytest.mark.parametrize("change,exc,match", [
    (lambda a, b, sa, sb: (a.to(torch.bfloat16), b, sa, sb), TypeError, "fp8 A and B"),
    (lambda a, b, sa, sb: (a, b, sa.double(), sb), TypeError, "scale_a must be float32"),
    (lambda a, b, sa, sb: (a, b, sa, sb.half()), TypeError, "scale_b must be float32"),
    (lambda a, b, sa, sb: (a, b, sa[:, :1], sb), ValueError, r"scale_a: want \[M, ceil\(K/128\)\]"),
    (lambda a, b, sa, sb: (a, b, sa, sb[:, :1]), ValueError, "scale_b: shape"),
    (lambda a, b, sa, sb: (a, b, sa.cpu(), sb), ValueError, "scale_a is on cpu"),
    (lambda a, b, sa, sb: (a, b, sa, sb.cpu()), ValueError, "scale_b is on cpu"),
    (lambda a, b, sa, sb: (a.unsqueeze(0), b, sa, sb), ValueError, "one batch"),
    (lambda a, b, sa, sb: (a, b[:128], sa, sb), ValueError, "A is"),
    (lambda a, b, sa, sb: (a, b, [1.0], sb), TypeError, "scale_a must be a float32 torch.Tensor"),
], ids=["a_bf16", "sa_f64", "sb_f16", "sa_shape", "sb_shape", "sa_cpu", "sb_cpu", "batch", "k_mismatch",
        "sa_list"])
def test_block_argument_errors(change, exc, match):
    args = change(*_ok_inputs())
    with pytest.raises(exc, match=match):
        kiln.block_scaled_mm(*args)


def test_block_keyword_errors():
    a, b, sa, sb = _ok_inputs()
    with pytest.raises(ValueError, match="b_block=64"):
        kiln.block_scaled_mm(a, b, sa, sb, b_block=64)
    with pytest.raises(ValueError, match="scale_b_order='x'"):
        kiln.block_scaled_mm(a, b, sa, sb, scale_b_order="x")
    with pytest.raises(TypeError, match="out"):
        kiln.block_scaled_mm(a, b, sa, sb, out=torch.empty(64, 256, device="cuda", dtype=torch.float16),
                             out_dtype=torch.bfloat16)


def test_block_quantize_errors():
    with pytest.raises(TypeError, match="quantize_per_token_group"):
        kiln.quantize_per_token_group(torch.ones(4, 4, device="cuda", dtype=torch.int32))
    with pytest.raises(ValueError, match="NaN or Inf"):
        kiln.quantize_per_block(torch.full((4, 4), math.inf, device="cuda"))
    with pytest.raises(ValueError, match="group=0"):
        kiln.quantize_per_token_group(torch.ones(4, 4, device="cuda"), group=0)
