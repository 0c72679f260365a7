"""Grouped (MoE) fp8 GEMM without a GPU: kiln_problem's group fields through the ctypes layer, the status of every
bad grouped problem, and the selection (sm90's and gfx942's grouped kernels, sized by rows per group; NOT_SUPPORTED
naming the kind on archs without grouped kernels). Skips without a built libkiln, like test_binding.py."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "runtime" / "python"))

import kiln  # noqa: E402
from kiln import DType, GroupMode, Layout, ScaleMode, Status  # noqa: E402
from binding_lib import load_or_skip  # noqa: E402

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


@pytest.mark.parametrize("mode", [GroupMode.CONTIGUOUS, GroupMode.MASKED])
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


@pytest.mark.parametrize("mode", [GroupMode.CONTIGUOUS, GroupMode.MASKED])
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


@pytest.mark.parametrize("fields,status,text", [
    (dict(groups=0), Status.INVALID_VALUE, "groups = 0: a grouped problem has 1 .. 2^31 - 1 groups"),
    (dict(batch=2), Status.NOT_SUPPORTED, "a grouped problem has batch 1"),
    (dict(k=0), Status.NOT_SUPPORTED, "k = 0: a grouped problem needs k >= 1"),
    (dict(scale_b_stride_g=-7), Status.INVALID_VALUE, "scale_b_stride_g = -7 must be -1 (packed)"),
    (dict(stride_b=-1), Status.INVALID_VALUE, "stride_b = -1 is negative"),
    (dict(mode=GroupMode.MASKED, stride_d=5), Status.INVALID_VALUE, "masked groups of D would overlap"),
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
