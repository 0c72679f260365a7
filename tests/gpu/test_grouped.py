"""Grouped (MoE) fp8 GEMM (kiln.grouped_mm, kiln.h "Grouped GEMM") against the float64 reference from the same fp8
tensors and scales (kiln.grouped_reference): contiguous groups (torch's offs) and masked groups (masked_m, read on
the device) with empty groups, one-row groups, groups that are not a multiple of the tile, decreasing offsets and
counts above the allocation (clamped); tensor, rowwise and block scales (128x128 and 1x128 B blocks); shared and
per-group bias; every output type; every grouped kernel the table lists, forced by name. Outputs are poisoned: the
rows of every group must be written and pass the gate (relative L2), and the rows outside every group must still
hold the poison (nothing written there). Clear errors for bad calls.

k-grouped (offs= with 2-D A [M, K] and B [N, K]: the MoE weight gradient, D [G, M, N]): empty groups, a single group,
K not a multiple of 128, ends that are not multiples of 128 (rounded down by the kernel and the reference alike),
decreasing ends and ends past K, many uneven groups, odd and large M x N; tensor, rowwise (per group) and block scales
over all of K (1x128 and 128x128 B, DeepGEMM's M-major scale_a); shared and per-group bias; every grouped kernel
forced by name. Each group is checked on its own against the reference (random data in every K column, so a kernel
that crossed a group's bounds fails it), every element must be written and nothing around D's [G, M, N] view.

m_indices (DeepGEMM's per-row expert index, -1 for padding): segments aligned to 128 with padding rows between them,
an expert without rows and an index >= G, against the reference on the real rows (padding rows are unspecified),
against the offs= call of the same end rows, and replayed in a CUDA graph with new indices (the end rows are made on
the device).

Skips when the library has no grouped kernel for the device unless generated/ lists one for this arch."""
from __future__ import annotations

import itertools

import pytest

import kilntest as kt
from kilntest import DType, kiln, torch

pytestmark = pytest.mark.gpu

GROUP = 128
KINDS = ("fp8_grouped", "fp8_block_grouped")
NOT_THERE = ("NO_SOLUTION", "NOT_SUPPORTED", "NO_CODE_FOR_DEVICE")


def grouped_names(kind: str) -> list:
    return sorted(name for name, sol in kt.table_solutions().items()
                  if sol.arch.value == kt.arch() and getattr(sol.problem.kind, "value", None) == kind)


def require(kind: str):
    p = kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, kiln.Layout.TN, 256, 256, 256,
                          group_mode=kiln.GroupMode.CONTIGUOUS, groups=2,
                          scale_a=kiln.ScaleMode.BLOCK if kind == KINDS[1] else kiln.ScaleMode.TENSOR,
                          scale_b=kiln.ScaleMode.BLOCK if kind == KINDS[1] else kiln.ScaleMode.TENSOR)
    try:
        found, err = kiln.query_problem(p, 1), None
    except kiln.KilnError as exc:
        if exc.status.name not in NOT_THERE:
            raise
        found, err = [], exc
    if found:
        return
    if grouped_names(kind):
        pytest.fail(f"{kind}: generated/ lists kernels for {kt.arch()} but kiln_query finds none ({err})")
    pytest.skip(f"no {kind} kernel for {kt.arch()} ({err})")


# ---- inputs ----

def fp8(shape, scale=1.0):
    return kt.randn_fp8(shape, kt.tdt(DType.E4M3), scale=scale)


def offs_of(sizes) -> "torch.Tensor":
    return torch.tensor(sizes, dtype=torch.int32).cumsum(0).to(torch.int32).cuda()


def span(shape):
    """float32 scales 2^-6 .. 2^6."""
    return torch.exp2(torch.empty(shape, device="cuda").uniform_(-6, 6))


def scales(recipe: str, masked: bool, groups: int, m: int, n: int, k: int, b_block: int = GROUP):
    """(scale_a, scale_b) float32 for a recipe: tensor, row, block (2^-6 .. 2^6 across groups and blocks)."""
    gk = -(-k // GROUP)
    if recipe == "tensor":
        return span((1,)), span((1,))
    if recipe == "row":
        return span((groups, m) if masked else (m,)), span((groups, n))
    rows_b = -(-n // GROUP) if b_block == GROUP else n
    sa = span((groups, gk, m)).transpose(1, 2) if masked else span((gk, m)).t()  # M-major, kiln's fastest
    return sa, span((groups, rows_b, gk))


def run_case(a, b, *, offs=None, masked_m=None, sa, sb, bias=None, out_dtype=None, algo=None, what=""):
    out_dtype = out_dtype or torch.bfloat16
    shape = (a.shape[0], a.shape[1], b.shape[1]) if masked_m is not None else (a.shape[0], b.shape[1])
    out = kt.poison_(torch.empty(shape, dtype=out_dtype, device="cuda"))
    res = kiln.grouped_mm(a, b, offs=offs, masked_m=masked_m, scale_a=sa, scale_b=sb, bias=bias, out=out, algo=algo)
    assert res is out
    torch.cuda.synchronize()
    if algo is not None:
        kt.EXERCISED.add(algo.name)
    ref = kiln.grouped_reference(a, b, offs=offs, masked_m=masked_m, scale_a=sa, scale_b=sb, bias=bias)
    inside = ~torch.isnan(ref)
    label = f"{what} algo={algo.name if algo is not None else 'auto'}"
    assert not torch.isfinite(out.float()[~inside]).any(), f"{label}: rows outside every group were written"
    if inside.any():
        kt.check(out[inside], ref[inside], kt.TOL_FP8, label)


CONTIGUOUS = [  # (group sizes, n, k): empty groups, one row, not multiples of any tile, K not a multiple of 128
    ([0, 1, 130, 77, 256, 0, 300], 256, 512),
    ([64, 64, 64, 64], 333, 1000),
    ([513, 0, 7], 160, 200),
    ([1000], 512, 256),
]


@pytest.mark.parametrize("recipe", ["tensor", "row", "block"])
@pytest.mark.parametrize("case", CONTIGUOUS, ids=lambda c: f"{len(c[0])}g-{sum(c[0])}x{c[1]}x{c[2]}")
def test_contiguous(case, recipe):
    require(KINDS[1] if recipe == "block" else KINDS[0])
    sizes, n, k = case
    g, m = len(sizes), sum(sizes) + 5  # 5 rows past the last group: never written
    a, b = fp8((m, k)), fp8((g, n, k))
    sa, sb = scales(recipe, False, g, m, n, k)
    run_case(a, b, offs=offs_of(sizes), sa=sa, sb=sb, what=f"contiguous {recipe} {sizes} n={n} k={k}")


@pytest.mark.parametrize("recipe", ["tensor", "row", "block"])
def test_masked(recipe):
    require(KINDS[1] if recipe == "block" else KINDS[0])
    g, m_max, n, k = 5, 200, 384, 640
    counts = torch.tensor([0, 5, 200, 300, 129], dtype=torch.int32).cuda()  # 300 > m_max: clamped to 200
    a, b = fp8((g, m_max, k)), fp8((g, n, k))
    sa, sb = scales(recipe, True, g, m_max, n, k)
    run_case(a, b, masked_m=counts, sa=sa, sb=sb, what=f"masked {recipe}")


def test_decreasing_offsets_make_empty_groups():
    require(KINDS[0])
    a, b = fp8((300, 256)), fp8((3, 128, 256))
    offs = torch.tensor([200, 100, 300], dtype=torch.int32).cuda()  # group 1 empty, group 2 rows 200..299
    sa, sb = scales("row", False, 3, 300, 128, 256)
    run_case(a, b, offs=offs, sa=sa, sb=sb, what="decreasing offsets")


@pytest.mark.parametrize("recipe", ["row", "block"])
def test_bias_and_outputs(recipe):
    require(KINDS[1] if recipe == "block" else KINDS[0])
    sizes, n, k = [40, 0, 190, 3], 200, 384
    g, m = len(sizes), sum(sizes)
    a, b = fp8((m, k)), fp8((g, n, k))
    sa, sb = scales(recipe, False, g, m, n, k)
    for out_dtype in (torch.bfloat16, torch.float32):
        for bias in (torch.randn(n, device="cuda"), torch.randn(g, n, device="cuda").to(torch.bfloat16)):
            run_case(a, b, offs=offs_of(sizes), sa=sa, sb=sb, bias=bias, out_dtype=out_dtype,
                     what=f"{recipe} bias {tuple(bias.shape)} {out_dtype}")


def test_block_per_column_b_scales():
    require(KINDS[1])
    sizes, n, k = [100, 260], 300, 400
    g, m = len(sizes), sum(sizes)
    a, b = fp8((m, k)), fp8((g, n, k))
    sa, sb = scales("block", False, g, m, n, k, b_block=1)
    run_case(a, b, offs=offs_of(sizes), sa=sa, sb=sb, what="1x128 B scales")


def test_transposed_weights_view():
    """B as torch._scaled_grouped_mm takes it: the [G, K, N] transposed view of [G, N, K] storage."""
    require(KINDS[0])
    sizes, n, k = [50, 70], 256, 256
    a, w = fp8((sum(sizes), k)), fp8((2, n, k))
    sa, sb = scales("row", False, 2, sum(sizes), n, k)
    offs = offs_of(sizes)
    y1 = kiln.grouped_mm(a, w, offs=offs, scale_a=sa, scale_b=sb)
    y2 = kiln.grouped_mm(a, w.transpose(1, 2), offs=offs, scale_a=sa, scale_b=sb)
    torch.cuda.synchronize()
    assert torch.equal(y1, y2)


@pytest.mark.parametrize("kind", KINDS)
def test_every_grouped_kernel(kind):
    """Each grouped kernel the table lists, forced by name with its own input and output types, on contiguous and
    masked groups."""
    require(kind)
    recipe = "block" if kind == KINDS[1] else "row"
    names = grouped_names(kind)
    assert names
    sizes, n, k = [0, 1, 190, 64, 257], 320, 384
    g, m = len(sizes), sum(sizes)
    sa, sb = scales(recipe, False, g, m, n, k)
    sam, sbm = scales(recipe, True, g, 150, n, k)
    counts = torch.tensor([150, 0, 1, 77, 149], dtype=torch.int32).cuda()
    solutions = kt.table_solutions()
    for name in names:
        a_t, b_t, d_t = (kt.tdt(kt.DType[x.name]) for x in (solutions[name].problem.a, solutions[name].problem.b,
                                                               solutions[name].problem.d))
        a, b, am = kt.randn_fp8((m, k), a_t), kt.randn_fp8((g, n, k), b_t), kt.randn_fp8((g, 150, k), a_t)
        algo = kiln.algo_by_name(name)
        shrink = 2.0 ** -4 if d_t == torch.float16 else 1.0  # scales up to 2^12 overflow f16's 65504
        run_case(a, b, offs=offs_of(sizes), sa=sa * shrink, sb=sb * shrink, out_dtype=d_t, algo=algo,
                 what=f"{name} contiguous")
        run_case(am, b, masked_m=counts, sa=sam * shrink, sb=sbm * shrink, out_dtype=d_t, algo=algo,
                 what=f"{name} masked")


def test_many_groups():
    """32 groups of 128 rows and 256 groups of a few rows (the many-small-experts case)."""
    require(KINDS[0])
    for g, rows in ((32, 128), (256, 5)):
        sizes = [rows] * g
        a, b = fp8((g * rows, 256)), fp8((g, 128, 256))
        sa, sb = scales("row", False, g, g * rows, 128, 256)
        run_case(a, b, offs=offs_of(sizes), sa=sa, sb=sb, what=f"{g} groups of {rows}")


def test_bad_calls():
    require(KINDS[0])
    a, b = fp8((64, 128)), fp8((2, 64, 128))
    one = torch.ones(1, device="cuda")
    offs = offs_of([32, 32])
    with pytest.raises(ValueError, match="exactly one of offs"):
        kiln.grouped_mm(a, b, scale_a=one, scale_b=one)
    with pytest.raises(ValueError, match="exactly one of offs"):
        kiln.grouped_mm(a, b, offs=offs, masked_m=offs, scale_a=one, scale_b=one)
    with pytest.raises(TypeError, match="int32"):
        kiln.grouped_mm(a, b, offs=offs.long(), scale_a=one, scale_b=one)
    with pytest.raises(TypeError, match="int32"):
        kiln.grouped_mm(a, b, offs=offs_of([64]), scale_a=one, scale_b=one)  # one offset for two groups
    with pytest.raises(TypeError, match="fp8"):
        kiln.grouped_mm(a.to(torch.bfloat16), b, offs=offs, scale_a=one, scale_b=one)
    with pytest.raises(ValueError, match="rowwise scale_b"):
        kiln.grouped_mm(a, b, offs=offs, scale_a=one, scale_b=torch.ones(2, 63, device="cuda"))
    with pytest.raises(ValueError, match="groups"):
        kiln.grouped_mm(fp8((3, 16, 128)), b, masked_m=offs, scale_a=one, scale_b=one)


# ---- k-grouped: A [M, K] and B [N, K] whose K columns are the groups', D [G, M, N] ----

K_RECIPES = ["tensor", "row", "block", "block1x128"]


def k_scales(recipe: str, groups: int, m: int, n: int, k: int):
    """(scale_a, scale_b) of a k-grouped call: tensor; row ([G, M], [G, N]); block: DeepGEMM's M-major scale_a
    [M, ceil(K/128)] with scale_b [ceil(N/128), ceil(K/128)] (128x128, K-major), or with block1x128 an N-major
    scale_b [N, ceil(K/128)] (the weight-gradient recipe: both operands scaled per 1x128)."""
    gk = -(-k // GROUP)
    if recipe == "tensor":
        return span((1,)), span((1,))
    if recipe == "row":
        return span((groups, m)), span((groups, n))
    if recipe == "block1x128":
        return span((gk, m)).t(), span((gk, n)).t()
    return span((gk, m)).t(), span((-(-n // GROUP), gk))


def k_kind(recipe: str) -> str:
    return KINDS[1] if recipe.startswith("block") else KINDS[0]


def ends_of(sizes) -> list:
    """Cumulative ends (at import time too, where the machine has no torch)."""
    return list(itertools.accumulate(sizes))


def run_k(a, b, ends, *, sa, sb, bias=None, out_dtype=None, algo=None, what=""):
    """grouped_mm k-grouped into a poisoned [G, M, N] view of padded storage (ldd and stride_d past N and M * N):
    every group against the reference on its own (an empty one is its bias, or zeros), nothing written around it."""
    out_dtype = out_dtype or torch.bfloat16
    offs = torch.tensor(ends, dtype=torch.int32).cuda()
    ref = kiln.grouped_reference(a, b, offs=offs, scale_a=sa, scale_b=sb, bias=bias)
    g, m, n = ref.shape
    out = kt.poisoned(m, n, out_dtype, batch=g)
    res = kiln.grouped_mm(a, b, offs=offs, scale_a=sa, scale_b=sb, bias=bias, out=out, algo=algo)
    assert res is out
    torch.cuda.synchronize()
    if algo is not None:
        kt.EXERCISED.add(algo.name)
    label = f"k-grouped {what} ends={ends} algo={algo.name if algo is not None else 'auto'}"
    for gi in range(g):
        kt.check(out[gi], ref[gi], kt.TOL_FP8, f"{label} group {gi}")
    kt.untouched_outside(out, label)
    return out


K_CASES = [  # (offs as given, m, n, k): the kernel clamps each end into [previous end, K] and rounds it down to 128
    ([0, 128, 512, 768], 96, 200, 768),                              # sizes 0, 128, 384, 256: an empty group first
    ([512], 257, 130, 512),                                          # one group
    ([1000], 96, 200, 1000),                                         # one group, K not a multiple of 128
    ([256, 512, 1000], 257, 130, 1000),                              # the last group ends at K = 1000
    ([300, 640], 96, 200, 640),                                      # 300 is rounded down to 256
    ([384, 128, 5000], 96, 200, 640),                                # decreasing: group 1 empty; 5000 -> K
    ([256, 512], 96, 200, 768),                                      # columns past the last end are in no group
    (ends_of([128, 0, 256, 384, 128, 0, 512, 640]), 129, 257, 2048),  # 8 uneven groups
]


@pytest.mark.parametrize("recipe", K_RECIPES)
@pytest.mark.parametrize("case", K_CASES, ids=lambda c: f"{'-'.join(map(str, c[0]))}_{c[1]}x{c[2]}x{c[3]}")
def test_k_grouped(case, recipe):
    require(k_kind(recipe))
    ends, m, n, k = case
    a, b = fp8((m, k)), fp8((n, k))
    sa, sb = k_scales(recipe, len(ends), m, n, k)
    run_k(a, b, ends, sa=sa, sb=sb, what=f"{recipe} {m}x{n}x{k}")


@pytest.mark.parametrize("recipe", ["row", "block1x128"])
def test_k_grouped_large(recipe):
    """1024 x 2048 outputs over K = 4096 in 4 groups (multiple tiles in M and N, 8 to 12 K tiles per group)."""
    require(k_kind(recipe))
    m, n, ends = 1024, 2048, ends_of([1024, 512, 1536, 1024])
    a, b = fp8((m, ends[-1])), fp8((n, ends[-1]))
    sa, sb = k_scales(recipe, 4, m, n, ends[-1])
    run_k(a, b, ends, sa=sa, sb=sb, what=f"large {recipe}")


@pytest.mark.parametrize("recipe", ["row", "block"])
def test_k_grouped_bias_and_outputs(recipe):
    """Shared [N] and per-group [G, N] bias, bf16 and f32 outputs; group 1 is empty: D[1] is the bias alone."""
    require(k_kind(recipe))
    ends, m, n, k = ends_of([256, 0, 384, 232]), 96, 200, 872
    a, b = fp8((m, k)), fp8((n, k))
    sa, sb = k_scales(recipe, len(ends), m, n, k)
    for out_dtype in (torch.bfloat16, torch.float32):
        for bias in (torch.randn(n, device="cuda"), torch.randn(len(ends), n, device="cuda").to(torch.bfloat16)):
            out = run_k(a, b, ends, sa=sa, sb=sb, bias=bias, out_dtype=out_dtype,
                        what=f"{recipe} bias {tuple(bias.shape)} {out_dtype}")
            want = (bias[1] if bias.dim() == 2 else bias).to(out_dtype)
            assert torch.equal(out[1], want.expand(m, n)), "an empty group's D is its bias"


def test_k_grouped_layouts():
    """B as its [K, N] transposed view (torch._scaled_grouped_mm's) and rowwise scales flat ([G * M], [G * N]) give
    the same problem, so the same bits; row-major block scales (read by the scale warp, not the tensor maps) pass
    the reference."""
    require(KINDS[0])
    ends, m, n, k = [256, 512, 1000], 96, 200, 1000
    a, b = fp8((m, k)), fp8((n, k))
    offs = torch.tensor(ends, dtype=torch.int32).cuda()
    for recipe in ("row", "block1x128"):
        if not kiln_has(k_kind(recipe)):
            continue
        sa, sb = k_scales(recipe, 3, m, n, k)
        base = kiln.grouped_mm(a, b, offs=offs, scale_a=sa, scale_b=sb)
        same = [kiln.grouped_mm(a, b.t(), offs=offs, scale_a=sa, scale_b=sb)]
        if recipe == "row":
            same.append(kiln.grouped_mm(a, b, offs=offs, scale_a=sa.reshape(-1), scale_b=sb.reshape(-1)))
        torch.cuda.synchronize()
        assert all(torch.equal(base, y) for y in same), recipe
        if recipe == "block1x128":
            run_k(a, b, ends, sa=sa.contiguous(), sb=sb.contiguous(), what="row-major block scales")


def kiln_has(kind: str) -> bool:
    try:
        require(kind)
    except pytest.skip.Exception:
        return False
    return True


def test_k_grouped_ambiguous_scales():
    """G = M = N = ceil(K/128) = 4: row-major [4, 4] scales read both as rowwise and as block ones and are refused;
    flat rowwise scales and an M-major block scale_a each run as meant."""
    require(KINDS[0])
    ends, k = [128, 256, 384, 512], 512
    a, b = fp8((4, k)), fp8((4, k))
    offs = torch.tensor(ends, dtype=torch.int32).cuda()
    with pytest.raises(ValueError, match="read both as rowwise scales"):
        kiln.grouped_mm(a, b, offs=offs, scale_a=span((4, 4)), scale_b=span((4, 4)))
    run_k(a, b, ends, sa=span((16,)), sb=span((16,)), what="flat rowwise 4x4")
    if kiln_has(KINDS[1]):
        run_k(a, b, ends, sa=span((4, 4)).t(), sb=span((4, 4)), what="M-major block 4x4")


@pytest.mark.parametrize("kind", KINDS)
def test_every_grouped_kernel_k_grouped(kind):
    """Each grouped kernel the table lists, forced by name with its own input and output types, on k-grouped calls
    (an empty group, K not a multiple of 128) and on m_indices."""
    require(kind)
    names = grouped_names(kind)
    assert names
    ends, m, n, k = ends_of([0, 128, 384, 232]), 130, 200, 744
    recipes = ("block", "block1x128") if kind == KINDS[1] else ("row", "tensor")
    counts = [100, 0, 130, 37]
    idx_list, _ = m_layout(counts)
    idx = torch.tensor(idx_list, dtype=torch.int32).cuda()
    solutions = kt.table_solutions()
    for name in names:
        a_t, b_t, d_t = (kt.tdt(kt.DType[x.name]) for x in (solutions[name].problem.a, solutions[name].problem.b,
                                                               solutions[name].problem.d))
        algo = kiln.algo_by_name(name)
        shrink = 2.0 ** -4 if d_t == torch.float16 else 1.0  # scales up to 2^12 overflow f16's 65504
        a, b = kt.randn_fp8((m, k), a_t), kt.randn_fp8((n, k), b_t)
        for recipe in recipes:
            sa, sb = k_scales(recipe, len(ends), m, n, k)
            run_k(a, b, ends, sa=sa * shrink, sb=sb * shrink, out_dtype=d_t, algo=algo, what=f"{name} {recipe}")
        x, w = kt.randn_fp8((len(idx_list), k), a_t), kt.randn_fp8((len(counts), n, k), b_t)
        sa, sb = scales("block" if kind == KINDS[1] else "row", False, len(counts), len(idx_list), n, k)
        run_m_indices(x, w, idx, sa=sa * shrink, sb=sb * shrink, out_dtype=d_t, algo=algo, what=name)


# ---- m_indices: DeepGEMM's per-row expert index (-1: padding), made into end rows on the device ----

def m_layout(counts, align=GROUP, stray=None):
    """(per-row expert index, end rows) of DeepGEMM's contiguous layout: expert g's counts[g] rows, each run padded
    with -1 rows to a multiple of `align`; `stray` (an index >= G) replaces the first padding row."""
    idx, ends = [], []
    for g, c in enumerate(counts):
        idx += [g] * c
        ends.append(len(idx) if c else (ends[-1] if ends else 0))
        idx += [-1] * (-c % align)
    if stray is not None:
        idx[idx.index(-1)] = stray
    return idx, ends


def run_m_indices(x, w, idx, *, sa, sb, bias=None, out_dtype=None, algo=None, what=""):
    """grouped_mm with m_indices into a poisoned output: the real rows (0 <= index < G) against the reference, the
    rows past the last expert's run not written. Returns the output."""
    out = kt.poison_(torch.empty((x.shape[0], w.shape[1]), dtype=out_dtype or torch.bfloat16, device="cuda"))
    res = kiln.grouped_mm(x, w, m_indices=idx, scale_a=sa, scale_b=sb, bias=bias, out=out, algo=algo)
    assert res is out
    torch.cuda.synchronize()
    if algo is not None:
        kt.EXERCISED.add(algo.name)
    ref = kiln.grouped_reference(x, w, m_indices=idx, scale_a=sa, scale_b=sb, bias=bias)
    real = (idx >= 0) & (idx < w.shape[0])
    label = f"m_indices {what} algo={algo.name if algo is not None else 'auto'}"
    assert not torch.isnan(ref[real]).any() and torch.isnan(ref[~real]).all()
    kt.check(out[real], ref[real], kt.TOL_FP8, label)
    rows = torch.arange(x.shape[0], device="cuda")
    last = int(rows[real].max()) + 1 if real.any() else 0
    assert not torch.isfinite(out[last:].float()).any(), f"{label}: rows after the last expert's run were written"
    return out


@pytest.mark.parametrize("recipe", ["tensor", "row", "block"])
def test_m_indices(recipe):
    """Runs padded to 128 with -1 rows, an expert without rows, an index >= G in a padding row; the real rows match
    the reference and, bit for bit, the offs= call of the same end rows."""
    require(KINDS[1] if recipe == "block" else KINDS[0])
    counts, n, k = [100, 0, 130, 37, 128], 256, 512
    idx_list, ends = m_layout(counts, stray=len(counts) + 2)
    g, rows = len(counts), len(idx_list)
    x, w = fp8((rows, k)), fp8((g, n, k))
    sa, sb = scales(recipe, False, g, rows, n, k)
    idx = torch.tensor(idx_list, dtype=torch.int32).cuda()
    bias = torch.randn(g, n, device="cuda")
    out = run_m_indices(x, w, idx, sa=sa, sb=sb, bias=bias, what=recipe)
    by_offs = kiln.grouped_mm(x, w, offs=torch.tensor(ends, dtype=torch.int32).cuda(), scale_a=sa, scale_b=sb,
                              bias=bias)
    torch.cuda.synchronize()
    real = (idx >= 0) & (idx < g)
    assert torch.equal(out[real], by_offs[real])


def test_m_indices_in_cuda_graph():
    """The end rows are made on the device: a captured call replays with new indices copied into the static index
    tensor (another layout of the same rows), and matches an eager call on the real rows."""
    require(KINDS[0])
    g, n, k = 4, 256, 256
    layouts = [m_layout([100, 0, 130, 37])[0], m_layout([0, 200, 20, 40])[0]]
    assert len(layouts[0]) == len(layouts[1])
    rows = len(layouts[0])
    x, w = fp8((rows, k)), fp8((g, n, k))
    sa, sb = scales("row", False, g, rows, n, k)
    idx = torch.tensor(layouts[0], dtype=torch.int32).cuda()
    out = torch.empty((rows, n), dtype=torch.bfloat16, device="cuda")

    def call():
        return kiln.grouped_mm(x, w, m_indices=idx, scale_a=sa, scale_b=sb, out=out)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    for layout in layouts[::-1] + layouts:
        idx.copy_(torch.tensor(layout, dtype=torch.int32))
        kt.poison_(out)
        graph.replay()
        torch.cuda.synchronize()
        real = (idx >= 0) & (idx < g)
        ref = kiln.grouped_reference(x, w, m_indices=idx, scale_a=sa, scale_b=sb)
        kt.check(out[real], ref[real], kt.TOL_FP8, f"graph replay, layout {layouts.index(layout)}")
        eager = kiln.grouped_mm(x, w, m_indices=idx, scale_a=sa, scale_b=sb)
        torch.cuda.synchronize()
        assert torch.equal(out[real], eager[real])


def test_bad_k_grouped_and_m_indices_calls():
    require(KINDS[0])
    one = torch.ones(1, device="cuda")
    a, b = fp8((96, 512)), fp8((200, 512))
    offs = torch.tensor([256, 512], dtype=torch.int32).cuda()
    x, w = fp8((64, 128)), fp8((2, 64, 128))
    idx = torch.zeros(64, dtype=torch.int32).cuda()
    with pytest.raises(ValueError, match="exactly one of offs"):
        kiln.grouped_mm(x, w, offs=offs, m_indices=idx, scale_a=one, scale_b=one)
    with pytest.raises(TypeError, match="m_indices must be an int32 tensor of 64 elements"):
        kiln.grouped_mm(x, w, m_indices=idx.long(), scale_a=one, scale_b=one)
    with pytest.raises(TypeError, match="m_indices must be an int32 tensor of 64 elements"):
        kiln.grouped_mm(x, w, m_indices=idx[:32], scale_a=one, scale_b=one)
    with pytest.raises(ValueError, match="m_indices is on cpu"):
        kiln.grouped_mm(x, w, m_indices=idx.cpu(), scale_a=one, scale_b=one)
    with pytest.raises(TypeError, match="offs of a k-grouped call must be a 1-D int32 tensor"):
        kiln.grouped_mm(a, b, offs=offs.long(), scale_a=one, scale_b=one)
    with pytest.raises(ValueError, match="a k-grouped A"):
        kiln.grouped_mm(fp8((2, 96, 512)), b, offs=offs, scale_a=one, scale_b=one)
    with pytest.raises(ValueError, match="a k-grouped B"):
        kiln.grouped_mm(a, fp8((200, 256)), offs=offs, scale_a=one, scale_b=one)
    with pytest.raises(ValueError, match="block scales are block on both sides"):
        kiln.grouped_mm(a, b, offs=offs, scale_a=span((4, 96)).t(), scale_b=span((2, 200)))
    with pytest.raises(ValueError, match="a k-grouped scale_b"):
        kiln.grouped_mm(a, b, offs=offs, scale_a=one, scale_b=span((2, 201)))
    with pytest.raises(ValueError, match="out must be"):
        kiln.grouped_mm(a, b, offs=offs, scale_a=one, scale_b=one, out=torch.empty((2, 200, 96), device="cuda"))
    with pytest.raises(kiln.KilnError, match="k-grouped groups of D would overlap"):
        kiln.grouped_mm(a, b, offs=offs, scale_a=one, scale_b=one,
                        out=torch.empty((2, 96, 200), device="cuda", dtype=torch.bfloat16)
                        .as_strided((2, 96, 200), (96 * 200 - 200, 200, 1)))  # the groups' rows overlap



def test_plan_cache(monkeypatch):
    """A grouped call that ran leaves a plan (kiln/_grouped.py's fast path): the same call again, on the same tensors
    or on copies (new pointers), runs it without planning and gives bitwise what the whole way gives, for offs=,
    masked_m=, m_indices= and k-grouped calls, rowwise and block scales, with a bias; new group values in the same
    tensors (the index is read on the device, m_indices' ends are made again) give the whole way's result for them.
    A change of a keyed argument plans again; a non-contiguous group index is never cached. Outputs are poisoned and
    compared bit for bit, the rows outside every group included."""
    require(KINDS[0])
    from kiln import _fastpath, _grouped
    planned = []
    real = _grouped._plan
    monkeypatch.setattr(_grouped, "_plan", lambda *a, **kw: planned.append(1) or real(*a, **kw))
    _fastpath.clear()
    torch.manual_seed(17)
    g, n, k, rows, m_max = 4, 256, 512, 512, 200
    x, w, xm, xk, wk = fp8((rows, k)), fp8((g, n, k)), fp8((g, m_max, k)), fp8((192, 640)), fp8((n, 640))
    bias = torch.randn(g, n, device="cuda")
    i32 = lambda v: torch.tensor(v, dtype=torch.int32).cuda()  # noqa: E731
    idx_a, idx_b = m_layout([100, 0, 130, 37])[0], m_layout([0, 200, 20, 40])[0]
    assert len(idx_a) == len(idx_b) == rows

    def poisoned(shape):
        return lambda: kt.poison_(torch.empty(shape, dtype=torch.bfloat16, device="cuda"))
    cases = []
    for recipe in ("row", "block") if kiln_has(KINDS[1]) else ("row",):
        sa, sb = scales(recipe, False, g, rows, n, k)
        sam, sbm = scales(recipe, True, g, m_max, n, k)
        ka, kb = k_scales(recipe, 3, 192, n, 640)
        cases += [
            (f"offs {recipe}", dict(scale_a=sa, scale_b=sb, bias=bias), "offs", (x, w), i32([100, 100, 356, 500]),
             i32([50, 50, 300, 512]), poisoned((rows, n))),
            (f"masked {recipe}", dict(scale_a=sam, scale_b=sbm), "masked_m", (xm, w), i32([0, 5, 200, 129]),
             i32([17, 0, 64, 300]), poisoned((g, m_max, n))),
            (f"m_indices {recipe}", dict(scale_a=sa, scale_b=sb, bias=bias), "m_indices", (x, w), i32(idx_a),
             i32(idx_b), poisoned((rows, n))),
            (f"k-grouped {recipe}", dict(scale_a=ka, scale_b=kb), "offs", (xk, wk), i32([128, 128, 640]),
             i32([0, 512, 640]), poisoned((3, 192, n))),
        ]
    bits = lambda y: y.view(torch.int16)  # noqa: E731  (NaN poison compares equal bit for bit)
    for name, kw, index_name, (a, b), index, other, fresh in cases:
        def call(a=a, b=b, index=index, kw=kw, index_name=index_name, fresh=fresh):
            return kiln.grouped_mm(a, b, out=fresh(), **{index_name: index}, **kw)
        n0 = len(planned)
        first, again = call(), call()
        copies = call(a.clone(), b.clone(), index.clone())
        torch.cuda.synchronize()
        assert len(planned) == n0 + 1, f"{name}: a call of a cached key planned again"
        assert torch.equal(bits(first), bits(again)) and torch.equal(bits(first), bits(copies)), \
            f"{name}: the cached run differs from the whole way"
        index.copy_(other)  # new group values in the same tensor: the same key
        cached = call()
        _fastpath.clear()
        whole = call()
        torch.cuda.synchronize()
        assert len(planned) == n0 + 2
        assert torch.equal(bits(cached), bits(whole)), f"{name}: the cached run with new group values differs"
    n0 = len(planned)
    sa, sb = scales("row", False, g, rows, n, k)
    offs = i32([100, 100, 356, 500])
    kiln.grouped_mm(x, w, offs=offs, scale_a=sa, scale_b=sb)  # no bias: a key of its own
    assert len(planned) == n0 + 1
    strided = torch.zeros(2 * g, dtype=torch.int32, device="cuda")[::2]
    strided.copy_(offs)
    for _ in range(2):
        kiln.grouped_mm(x, w, offs=strided, scale_a=sa, scale_b=sb)
    assert len(planned) == n0 + 3, "a call with a non-contiguous group index was cached"
    _fastpath.clear()
