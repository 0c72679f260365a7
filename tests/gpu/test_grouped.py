"""Grouped (MoE) fp8 GEMM (kiln.grouped_mm, kiln.h "Grouped GEMM") against the float64 reference from the same fp8
tensors and scales (kiln.grouped_reference): contiguous groups (torch's offs) and masked groups (masked_m, read on
the device) with empty groups, one-row groups, groups that are not a multiple of the tile, decreasing offsets and
counts above the allocation (clamped); tensor, rowwise and block scales (128x128 and 1x128 B blocks); shared and
per-group bias; every output type; every grouped kernel the table lists, forced by name. Outputs are poisoned: the
rows of every group must be written and pass the gate (relative L2), and the rows outside every group must still
hold the poison (nothing written there). Clear errors for bad calls.

Skips when the library has no grouped kernel for the device unless generated/ lists one for this arch."""
from __future__ import annotations

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


def scales(recipe: str, masked: bool, groups: int, m: int, n: int, k: int, b_block: int = GROUP):
    """(scale_a, scale_b) float32 for a recipe: tensor, row, block (2^-6 .. 2^6 across groups and blocks)."""
    gk = -(-k // GROUP)

    def span(shape):
        return torch.exp2(torch.empty(shape, device="cuda").uniform_(-6, 6))

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
