"""Grouped (MoE) fp8 GEMM without a GPU: kiln_problem's group fields through the ctypes layer, the status of every
bad grouped problem, and the selection (sm90's and gfx942's grouped kernels, sized by rows per group, k-grouped ones
by K per group; NOT_SUPPORTED naming the kind on archs without grouped kernels). Skips without a built libkiln, like
test_binding.py.

With torch (CPU tensors, the device-less handle selecting for sm90): what kiln.grouped_mm puts in the problem for
k-grouped calls and m_indices (the end rows made from the per-row index), its argument errors, and
kiln.grouped_reference's k-grouped bounds against a sum over K columns written out."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "runtime" / "python"))

import kiln  # noqa: E402
from kiln import DType, GroupMode, Layout, ScaleMode, Status  # noqa: E402
from binding_lib import load_or_skip  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

NO_DEVICE = -1


@pytest.fixture
def lib():
    return load_or_skip("group_mode", "grouped GEMMs")


@pytest.fixture
def sm90(lib):
    kiln.close()
    kiln.set_arch("sm90", device_index=NO_DEVICE)
    yield lib
    kiln.close()


def grouped(m=8192, n=4096, k=7168, groups=8, mode=GroupMode.CONTIGUOUS, block=False, d=DType.BF16, fp8=DType.E4M3,
            **fields):
    scale = ScaleMode.BLOCK if block else ScaleMode.VECTOR
    fields.setdefault("stride_b", n * k)
    if mode == GroupMode.MASKED:
        fields.setdefault("stride_a", m * k)
    if mode in (GroupMode.MASKED, GroupMode.K):
        fields.setdefault("stride_d", m * n)
    return kiln.make_problem(fp8, fp8, d, Layout.TN, m, n, k, group_mode=mode, groups=groups, scale_a=scale,
                             scale_b=scale, **fields)


def status_of(p):
    try:
        kiln.query_problem(p, 8, device_index=NO_DEVICE)
    except kiln.KilnError as exc:
        return exc.status, exc.text
    return Status.SUCCESS, ""


def test_problem_init_group_defaults(lib):
    p = kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 64, 64, 128)
    assert p.group_mode == GroupMode.NONE and p.groups == 0
    assert (p.scale_a_stride_g, p.scale_b_stride_g, p.bias_stride_g) == (-1, -1, -1)


@pytest.mark.parametrize("mode", [GroupMode.CONTIGUOUS, GroupMode.MASKED, GroupMode.K])
@pytest.mark.parametrize("block", [False, True])
def test_sm90_selects_grouped_kernels(sm90, mode, block):
    infos = kiln.query_problem(grouped(mode=mode, block=block), 8, device_index=NO_DEVICE)
    suffix = "QG_MT" if block else "G_MT"
    assert infos and all(suffix in i.name and i.name.endswith("_SM90") for i in infos), [i.name for i in infos]
    if not block:
        assert all("QG_MT" not in i.name for i in infos)
    # a dense problem of the same types never gets a grouped kernel
    dense = kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 1024, 4096, 7168,
                              scale_a=ScaleMode.TENSOR, scale_b=ScaleMode.TENSOR)
    assert all(not i.name.split("_")[3].endswith("G") for i in kiln.query_problem(dense, 8, device_index=NO_DEVICE))


@pytest.mark.parametrize("mode", [GroupMode.CONTIGUOUS, GroupMode.MASKED, GroupMode.K])
@pytest.mark.parametrize("block", [False, True])
@pytest.mark.parametrize("d", [DType.BF16, DType.F32])
def test_gfx942_selects_grouped_kernels(lib, mode, block, d):
    """gfx942's mfma grouped kernels (fp8_grouped.yaml, fp8_block_grouped.yaml) for e4m3fnuz; a dense problem of the
    same types gets none of them."""
    kiln.close()
    kiln.set_arch("gfx942", device_index=NO_DEVICE)
    try:
        for m in (4096, 64):  # large and small groups (rows per group: m / 8 contiguous, m masked)
            infos = kiln.query_problem(grouped(m=m, mode=mode, block=block, d=d, fp8=DType.E4M3FNUZ), 8,
                                       device_index=NO_DEVICE)
            suffix = "QG_MT" if block else "G_MT"
            assert infos and all(suffix in i.name and i.name.endswith("_MFMA_GFX942") for i in infos), \
                [i.name for i in infos]
            if not block:
                assert all("QG_MT" not in i.name for i in infos)
        dense = kiln.make_problem(DType.E4M3FNUZ, DType.E4M3FNUZ, DType.BF16, Layout.TN, 1024, 4096, 7168,
                                  scale_a=ScaleMode.TENSOR, scale_b=ScaleMode.TENSOR)
        assert all(not i.name.split("_")[3].endswith("G") for i in kiln.query_problem(dense, 8, device_index=NO_DEVICE))
    finally:
        kiln.close()


def test_selection_sizes_by_rows_per_group(sm90):
    """Contiguous: m / groups rows per group; the explanation says so."""
    text = kiln.explain_problem(grouped(m=32 * 64, groups=32), device_index=NO_DEVICE)
    assert "grouped: contiguous, 32 groups; sized by 64 rows per group" in text, text
    text = kiln.explain_problem(grouped(m=1024, groups=4, mode=GroupMode.MASKED), device_index=NO_DEVICE)
    assert "grouped: masked, 4 groups; sized by 1024 rows per group" in text, text


def test_k_grouped_selection_sizes_by_k_per_group(sm90):
    """k-grouped: m and n as they are, k / groups (rounded up) of K per group; the explanation says so, and the
    sizing follows it (the same m, n, K per group and group count select the same kernels whatever the total K; the
    group count itself enters the timing model's waves, so it may change the ranking)."""
    text = kiln.explain_problem(grouped(m=4096, n=7168, k=8192, groups=8, mode=GroupMode.K), device_index=NO_DEVICE)
    assert "grouped: k-grouped, 8 groups; sized by 1024 of K per group" in text, text
    text = kiln.explain_problem(grouped(m=256, n=512, k=1000, groups=3, mode=GroupMode.K, lda=1008, ldb=1008),
                                device_index=NO_DEVICE)
    assert "grouped: k-grouped, 3 groups; sized by 334 of K per group" in text, text
    for block in (False, True):
        eight = kiln.query_problem(grouped(m=4096, n=7168, k=8192, groups=8, mode=GroupMode.K, block=block), 8,
                                   device_index=NO_DEVICE)
        same = kiln.query_problem(grouped(m=4096, n=7168, k=8064, groups=8, mode=GroupMode.K, block=block), 8,
                                  device_index=NO_DEVICE)
        assert [i.name for i in eight] == [i.name for i in same]  # 1008 of K per group: the K tiles of 1024


def test_k_grouped_one_group_may_share_d(sm90):
    """stride_d is only checked against m * ldd when there are two groups or more."""
    assert status_of(grouped(mode=GroupMode.K, groups=1, stride_d=0))[0] == Status.SUCCESS


@pytest.mark.parametrize("fields,status,text", [
    (dict(groups=0), Status.INVALID_VALUE, "groups = 0: a grouped problem has 1 .. 2^31 - 1 groups"),
    (dict(batch=2), Status.NOT_SUPPORTED, "a grouped problem has batch 1"),
    (dict(k=0), Status.NOT_SUPPORTED, "k = 0: a grouped problem needs k >= 1"),
    (dict(scale_b_stride_g=-7), Status.INVALID_VALUE, "scale_b_stride_g = -7 must be -1 (packed)"),
    (dict(stride_b=-1), Status.INVALID_VALUE, "stride_b = -1 is negative"),
    (dict(mode=GroupMode.MASKED, stride_d=5), Status.INVALID_VALUE, "masked groups of D would overlap"),
    (dict(mode=GroupMode.K, groups=0), Status.INVALID_VALUE, "groups = 0: a grouped problem has 1 .. 2^31 - 1 groups"),
    (dict(mode=GroupMode.K, stride_d=8192 * 4096 - 1), Status.INVALID_VALUE,
     "stride_d = 33554431 is less than m * ldd = 33554432: k-grouped groups of D would overlap"),
    (dict(mode=GroupMode.K, k=0), Status.NOT_SUPPORTED, "k = 0: a grouped problem needs k >= 1"),
    (dict(mode=GroupMode.K, batch=2), Status.NOT_SUPPORTED, "a grouped problem has batch 1"),
    (dict(fp8=DType.BF16), Status.NOT_SUPPORTED, "grouped GEMMs (group_mode) are fp8 x fp8"),
])
def test_bad_grouped_problems(sm90, fields, status, text):
    k = fields.pop("k", 7168)
    fp8 = fields.pop("fp8", DType.E4M3)
    if fp8 == DType.BF16:
        p = kiln.make_problem(fp8, fp8, DType.BF16, Layout.TN, 256, 256, k, group_mode=GroupMode.CONTIGUOUS, groups=2)
    else:
        mode = fields.pop("mode", GroupMode.CONTIGUOUS)
        p = grouped(k=k, mode=mode, **fields)
    got, msg = status_of(p)
    assert got == status and text in msg, (got, msg)


def test_groups_without_mode_is_invalid(sm90):
    p = kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 64, 64, 128, groups=3)
    got, msg = status_of(p)
    assert got == Status.INVALID_VALUE and "groups = 3 with group_mode = KILN_GROUP_NONE" in msg


@pytest.mark.parametrize("arch", ["sm89", "sm80", "gfx90a", "gfx1151", "gfx1201"])
def test_archs_without_grouped_kernels_say_not_supported(lib, arch):
    kiln.close()
    kiln.set_arch(arch, device_index=NO_DEVICE)
    fp8 = DType.E4M3FNUZ if arch.startswith("gfx9") else DType.E4M3
    try:
        got, text = status_of(grouped(fp8=fp8))
        assert got == Status.NOT_SUPPORTED and f"{arch} has no fp8_grouped kernels" in text, (got, text)
    finally:
        kiln.close()


# ---- kiln.grouped_mm's k-grouped and m_indices calls, planned on CPU tensors (torch) ----

@pytest.fixture
def cpu(sm90):
    """torch with fp8 tensors; plans and explains select for sm90 on the device-less handle."""
    if torch is None or not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("needs torch with float8_e4m3fn")
    torch.manual_seed(0)
    return torch


def fp8_cpu(*shape, pad=0):
    """e4m3 codes 1 .. 119 (finite, none zero), rows padded by `pad` columns (a 16-byte leading dimension)."""
    full = torch.randint(1, 120, shape[:-1] + (shape[-1] + pad,), dtype=torch.uint8).view(torch.float8_e4m3fn)
    return full[..., :shape[-1]]


def ones(*shape):
    return torch.ones(shape, dtype=torch.float32)


KM, KN, KK, KG = 96, 200, 1000, 3  # k-grouped: M, N, K (K columns 0 .. 999), groups
GK = 8                              # ceil(K / 128)


def k_operands():
    a, b = fp8_cpu(KM, KK, pad=8), fp8_cpu(KN, KK, pad=8)  # lda = ldb = 1008
    return a, b, torch.tensor([256, 512, KK], dtype=torch.int32)


@pytest.mark.parametrize("recipe", ["tensor", "row", "row flat", "row [G, M, 1] strided", "block 1x128 M-major",
                                    "block 128x128 row-major"])
def test_k_grouped_problem(cpu, recipe):
    """offs= with a 2-D B: group_mode K, D [G, M, N], the scales' modes and strides as the kernel reads them."""
    a, b, offs = k_operands()
    sa, sb, want = {
        "tensor": (ones(1), ones(1), dict(scale_a=ScaleMode.TENSOR, scale_b=ScaleMode.TENSOR)),
        "row": (ones(KG, KM), ones(KG, KN), dict(scale_a=ScaleMode.VECTOR, scale_b=ScaleMode.VECTOR,
                                                  scale_a_stride_g=KM, scale_b_stride_g=KN)),
        "row flat": (ones(KG * KM), ones(KG * KN), dict(scale_a=ScaleMode.VECTOR, scale_b=ScaleMode.VECTOR,
                                                          scale_a_stride_g=KM, scale_b_stride_g=KN)),
        "row [G, M, 1] strided": (ones(KG, KM + 4, 1)[:, :KM], ones(KG, KN + 8)[:, :KN],
                                  dict(scale_a=ScaleMode.VECTOR, scale_b=ScaleMode.VECTOR, scale_a_stride_g=KM + 4,
                                       scale_b_stride_g=KN + 8)),
        "block 1x128 M-major": (ones(GK, KM).t(), ones(KN, GK),
                                dict(scale_a=ScaleMode.BLOCK, scale_b=ScaleMode.BLOCK, scale_a_stride_m=1,
                                     scale_a_stride_k=KM, scale_b_stride_n=GK, scale_b_stride_k=1,
                                     scale_b_block_n=1)),
        "block 128x128 row-major": (ones(KM, GK), ones(2, GK),
                                    dict(scale_a=ScaleMode.BLOCK, scale_b=ScaleMode.BLOCK, scale_a_stride_m=GK,
                                         scale_a_stride_k=1, scale_b_stride_n=GK, scale_b_stride_k=1,
                                         scale_b_block_n=128)),
    }[recipe]
    plan = kiln.plan(kiln.grouped_mm, a, b, offs=offs, scale_a=sa, scale_b=sb)
    p = plan.problem
    assert (p.group_mode, p.groups, p.m, p.n, p.k) == (GroupMode.K, KG, KM, KN, KK)
    assert (p.lda, p.ldb, p.ldd, p.stride_d, p.batch) == (1008, 1008, KN, KM * KN, 1)
    assert {key: getattr(p, key) for key in want} == want
    assert tuple(plan.out.shape) == (KG, KM, KN) and plan.out.dtype == torch.bfloat16
    assert plan.args.group_index == offs.data_ptr()
    # B as torch._scaled_grouped_mm takes it: the [K, N] transposed view of the same storage
    assert bytes(kiln.plan(kiln.grouped_mm, a, b.t(), offs=offs, scale_a=sa, scale_b=sb).problem) == bytes(p)
    text = kiln.explain(kiln.grouped_mm, a, b, offs=offs, scale_a=sa, scale_b=sb)
    assert "grouped: k-grouped, 3 groups; sized by 334 of K per group" in text, text
    kind = "QG_MT" if recipe.startswith("block") else "G_MT"
    assert all(kind in name for name in kiln.algos(kiln.grouped_mm, a, b, offs=offs, scale_a=sa, scale_b=sb))


def test_k_grouped_out_and_bias(cpu):
    a, b, offs = k_operands()
    out = torch.empty((KG, KM + 2, KN + 8), dtype=torch.float32)[:, :KM, :KN]  # padded rows and groups
    shared = torch.zeros(KN, dtype=torch.float32)
    per_group = torch.zeros((KG, KN), dtype=torch.bfloat16)
    p = kiln.plan(kiln.grouped_mm, a, b, offs=offs, scale_a=ones(1), scale_b=ones(1), bias=shared, out=out).problem
    assert (p.ldd, p.stride_d, p.d_type, p.has_bias, p.bias_stride_g) == (KN + 8, (KM + 2) * (KN + 8), DType.F32,
                                                                          1, 0)
    p = kiln.plan(kiln.grouped_mm, a, b, offs=offs, scale_a=ones(1), scale_b=ones(1), bias=per_group,
                  out_dtype=torch.float16).problem
    assert (p.d_type, p.bias_type, p.bias_stride_g, p.stride_d) == (DType.F16, DType.BF16, KN, KM * KN)


def test_m_indices_become_end_rows(cpu):
    """DeepGEMM's per-row expert index: segments aligned to 128 with -1 padding rows between them, an expert without
    rows, an index >= G (ignored). It becomes the contiguous problem of its end rows."""
    rows, groups, n, k = 512, 4, 128, 256
    x, w = fp8_cpu(rows, k), fp8_cpu(groups, n, k)
    idx = torch.full((rows,), -1, dtype=torch.int32)
    idx[0:100], idx[128:258], idx[300], idx[384:421] = 0, 2, 7, 3  # expert 1 has no rows
    sa, sb = ones(rows), ones(groups, n)
    plan = kiln.plan(kiln.grouped_mm, x, w, m_indices=idx, scale_a=sa, scale_b=sb)
    ends = [t for t in plan.keep if t.data_ptr() == plan.args.group_index]
    assert len(ends) == 1 and ends[0].dtype == torch.int32
    assert ends[0].tolist() == [100, 100, 258, 421]
    by_offs = kiln.plan(kiln.grouped_mm, x, w, offs=ends[0].clone(), scale_a=sa, scale_b=sb).problem
    assert plan.problem.group_mode == GroupMode.CONTIGUOUS and bytes(plan.problem) == bytes(by_offs)
    assert tuple(plan.out.shape) == (rows, n)
    padding = kiln.plan(kiln.grouped_mm, x, w, m_indices=torch.full((rows,), -1, dtype=torch.int32), scale_a=sa,
                        scale_b=sb)
    assert [t for t in padding.keep if t.data_ptr() == padding.args.group_index][0].tolist() == [0] * groups


def test_grouped_mm_argument_errors(cpu):
    a, b, offs = k_operands()
    one = ones(1)
    x, w = fp8_cpu(64, 128), fp8_cpu(2, 64, 128)
    idx = torch.zeros(64, dtype=torch.int32)
    cases = [
        (dict(a=x, b=w, m_indices=idx, offs=offs), ValueError, "exactly one of offs= .* got offs, m_indices"),
        (dict(a=x, b=w, m_indices=idx.long()), TypeError, "m_indices must be an int32 tensor of 64 elements"),
        (dict(a=x, b=w, m_indices=idx[:63]), TypeError, "m_indices must be an int32 tensor of 64 elements"),
        (dict(a=x, b=w, m_indices=idx.reshape(1, 64)), TypeError, "m_indices must be an int32 tensor"),
        (dict(offs=offs.long()), TypeError, "offs of a k-grouped call must be a 1-D int32 tensor"),
        (dict(offs=offs[:0]), ValueError, "offs has no element"),
        (dict(a=fp8_cpu(2, KM, KK)), ValueError, r"a k-grouped A \(offs= with a 2-D B\) is \[M, K\]"),
        (dict(b=fp8_cpu(KN, 512)), ValueError, r"a k-grouped B is \[N, K=1000\]"),
        (dict(a=a.to(torch.float32)), TypeError, "fp8"),
        (dict(scale_a=ones(KG, KM + 1)), ValueError, r"a k-grouped scale_a is .*got \(3, 97\)"),
        (dict(scale_a=ones(KM, KG).t()), ValueError, r"a k-grouped scale_a is .*unit stride along M"),
        (dict(scale_b=ones(KG, GK, KN)), ValueError, r"a k-grouped scale_b is .*got \(3, 8, 200\)"),
        (dict(scale_a=ones(KM, GK), scale_b=ones(KG, KN)), ValueError, "block scales are block on both sides"),
        (dict(scale_a=ones(KM, GK), scale_b=one), ValueError, "block scales are block on both sides"),
        (dict(scale_a=None), ValueError, "fp8 needs scale_a and scale_b"),
        (dict(scale_a=ones(1).double()), TypeError, "scale_a must be float32"),
        (dict(bias=torch.zeros(2, KN)), ValueError, r"a per-group bias is \[groups, N\] = \[3, 200\]"),
        (dict(out=torch.empty(KG, KM, KN + 1)), ValueError, r"out must be \(3, 96, 200\)"),
        (dict(out_dtype=torch.int32), TypeError, "out_dtype must be bfloat16, float16 or float32"),
    ]
    for change, exc, match in cases:
        call = dict(a=a, b=b, offs=offs, scale_a=one, scale_b=one)
        call.update(change)
        if "m_indices" in change and "offs" not in change:
            call.pop("offs")
        with pytest.raises(exc, match=match):
            kiln.plan(kiln.grouped_mm, call.pop("a"), call.pop("b"), **call)


def test_ambiguous_k_grouped_scales(cpu):
    """G = M = N = ceil(K/128): row-major [4, 4] scales read both ways and are refused; flat rowwise scales or an
    M-major block scale_a say which is meant."""
    a, b = fp8_cpu(4, 512), fp8_cpu(4, 512)
    offs = torch.tensor([128, 256, 384, 512], dtype=torch.int32)
    with pytest.raises(ValueError, match="read both as rowwise scales .* and as block scales"):
        kiln.plan(kiln.grouped_mm, a, b, offs=offs, scale_a=ones(4, 4), scale_b=ones(4, 4))
    p = kiln.plan(kiln.grouped_mm, a, b, offs=offs, scale_a=ones(16), scale_b=ones(4, 4)).problem
    assert (p.scale_a, p.scale_b) == (ScaleMode.VECTOR, ScaleMode.VECTOR)
    p = kiln.plan(kiln.grouped_mm, a, b, offs=offs, scale_a=ones(4, 4).t(), scale_b=ones(4, 4)).problem
    assert (p.scale_a, p.scale_b, p.scale_b_block_n) == (ScaleMode.BLOCK, ScaleMode.BLOCK, 1)


def column_sum(a, b, cols, sa_col, sb_col):
    """float64 sum over the K columns `cols` of outer(a[:, c] * sa_col(c), b[:, c] * sb_col(c))."""
    a64, b64 = a.float().double(), b.float().double()
    acc = torch.zeros((a.shape[0], b.shape[0]), dtype=torch.float64)
    for c in cols:
        acc += torch.outer(a64[:, c] * sa_col(c), b64[:, c] * sb_col(c))
    return acc


def test_reference_k_grouped_bounds(cpu):
    """grouped_reference's k-grouped groups are the kernel's: ends clamped into [previous end, K] and rounded down to
    128 unless they reach K (300 -> 256; 200 after it -> empty; 5000 -> K = 1000); an empty group is its bias."""
    m, n, k = 5, 6, 1000
    a, b = fp8_cpu(m, k), fp8_cpu(n, k)
    offs = torch.tensor([300, 200, 900, 5000], dtype=torch.int32)
    cols = [range(0, 256), range(256, 256), range(256, 896), range(896, 1000)]
    bias = torch.randn(4, n)
    sa, sb = torch.rand(4 * m) + 0.5, torch.rand(4, n) + 0.5
    ref = kiln.grouped_reference(a, b.t(), offs=offs, scale_a=sa, scale_b=sb, bias=bias)
    assert ref.shape == (4, m, n) and ref.dtype == torch.float64
    for g in range(4):
        rows, cols_b = sa.reshape(4, m)[g].double(), sb[g].double()
        want = column_sum(a, b, cols[g], lambda c: rows, lambda c: cols_b) + bias[g].double()
        assert torch.allclose(ref[g], want, rtol=1e-12, atol=1e-9), g
    # block 128x128 with an M-major scale_a: each column scaled by its group of 128 over all of K
    sa, sb = torch.rand(8, m).t() + 0.5, torch.rand(1, 8) + 0.5
    ref = kiln.grouped_reference(a, b, offs=offs, scale_a=sa, scale_b=sb)
    for g in range(4):
        want = column_sum(a, b, cols[g], lambda c: sa[:, c // 128].double(), lambda c: sb[0, c // 128].double())
        assert torch.allclose(ref[g], want, rtol=1e-12, atol=1e-9), g
    assert not ref[1].any()  # empty, no bias


def test_reference_m_indices(cpu):
    """grouped_reference with m_indices: the rows of expert g are exactly those whose index is g; padding rows and
    those of an index >= G are NaN."""
    rows, groups, n, k = 40, 3, 8, 256
    x, w = fp8_cpu(rows, k), fp8_cpu(groups, n, k)
    idx = torch.tensor([2, -1, 0, 0, 5, 1] * 6 + [-1, 2, 2, 0], dtype=torch.int32)  # not even sorted
    sa, sb = torch.rand(rows) + 0.5, torch.rand(groups, n) + 0.5
    ref = kiln.grouped_reference(x, w, m_indices=idx, scale_a=sa, scale_b=sb)
    for r, g in enumerate(idx.tolist()):
        if 0 <= g < groups:
            want = (x[r].float().double() @ w[g].float().double().t()) * float(sa[r]) * sb[g].double()
            assert torch.allclose(ref[r], want, rtol=1e-12), r
        else:
            assert torch.isnan(ref[r]).all(), r
