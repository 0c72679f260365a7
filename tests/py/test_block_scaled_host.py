"""Block-scaled fp8 GEMM without a GPU: how kiln.block_scaled_mm reads scale tensors (shapes and strides of kiln's,
DeepGEMM's and torch._scaled_mm's layouts, as tuples: no torch needed), the errors for what it cannot read, torch
being optional, and the C API's answers for block-scaled problems through the ctypes layer with the arch set to sm90
or gfx942 (the archs with block-scaled kernels) or to one without (skips without a built libkiln, like
test_binding.py).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "runtime" / "python"))

import kiln  # noqa: E402
from kiln import DType, Layout, ScaleMode, Status  # noqa: E402
from kiln._blockscaled import ScaleBLayout, groups_of, scale_a_strides, scale_b_layout  # noqa: E402
from binding_lib import load_or_skip  # noqa: E402

# ---- scale_a: [M, ceil(K/128)], any strides ----


@pytest.mark.parametrize("m,k,strides,want", [
    (64, 7168, (1, 64), (1, 64)),        # kiln's default = torch's 1x128 scale_a (M-major)
    (63, 7168, (1, 64), (1, 64)),        # DeepGEMM's: columns padded to align(M, 4)
    (300, 300, (3, 1), (3, 1)),          # row-major (K-major), partial last group
    (1, 256, (2, 1), (1, 1)),            # one row: its stride means nothing, kiln_problem_init's (1, m = 1)
    (5, 128, (1, 99), (1, 5)),           # one group: stride_k means nothing -> m
])
def test_scale_a_strides(m, k, strides, want):
    assert scale_a_strides((m, groups_of(k)), strides, m, k) == want


@pytest.mark.parametrize("shape", [(64, 55), (56, 64), (64,), (1, 64, 56)])
def test_scale_a_wrong_shape_names_the_argument(shape):
    with pytest.raises(ValueError, match=r"^scale_a: "):
        scale_a_strides(shape, (1,) * len(shape), 64, 7168)


def test_scale_a_negative_stride():
    with pytest.raises(ValueError, match="scale_a: strides .* must not be negative"):
        scale_a_strides((4, 2), (-1, 4), 4, 256)


def test_groups_of_partial_last_group():
    assert [groups_of(k) for k in (0, 1, 127, 128, 129, 300, 7168)] == [0, 1, 1, 1, 2, 3, 56]


# ---- scale_b: 128x128 or 1x128, kiln's orientation [N side, G] or torch's [G, N side] ----

def _lay(block, sn, sk, order):
    return ScaleBLayout(block, sn, sk, order)


@pytest.mark.parametrize("n,k,shape,strides,want", [
    # 128x128, kiln's default (and DeepGEMM's): [ceil(N/128), G] row-major
    (2112, 7168, (17, 56), (56, 1), _lay(128, 56, 1, "nk")),
    # torch._scaled_mm's 128x128 scale_b: [G, ceil(N/128)], the transpose of a row-major [ceil(N/128), G]
    (2112, 7168, (56, 17), (1, 56), _lay(128, 56, 1, "kn")),
    # ... with the row stride some torch releases pad to a multiple of 4
    (2112, 800, (7, 17), (1, 8), _lay(128, 8, 1, "kn")),
    # 1x128, kiln's quantizer (M-major) and DeepGEMM's (padded): [N, G]
    (100, 7168, (100, 56), (1, 100), _lay(1, 1, 100, "nk")),
    (129, 256, (129, 2), (1, 132), _lay(1, 1, 132, "nk")),
    # 1x128 as torch takes it: [G, N] row-major
    (129, 256, (2, 129), (129, 1), _lay(1, 1, 129, "kn")),
    # square 128x128 (N == K): the K-major memory decides the orientation
    (7168, 7168, (56, 56), (56, 1), _lay(128, 56, 1, "nk")),
    (7168, 7168, (56, 56), (1, 56), _lay(128, 56, 1, "kn")),
    # square 1x128 (N == groups): the N-major memory decides
    (8, 1024, (8, 8), (8, 1), _lay(1, 1, 8, "kn")),
    (8, 1024, (8, 8), (1, 8), _lay(1, 1, 8, "nk")),
])
def test_scale_b_layout(n, k, shape, strides, want):
    assert scale_b_layout(shape, strides, n, k) == want


def test_scale_b_n_one_reads_the_same_either_way():
    """N = 1: 128x128 and 1x128 fetch the same float, so the shape needs no b_block."""
    lay = scale_b_layout((1, 2), (2, 1), 1, 256)
    assert (lay.block_n, lay.stride_k) == (128, 1)
    assert scale_b_layout((1, 2), (2, 1), 1, 256, b_block=1).block_n == 1


def test_scale_b_small_n_shapes_differ():
    """N <= 128: 128x128 is [1, G], 1x128 is [N, G]; the shape tells them apart."""
    assert scale_b_layout((1, 3), (3, 1), 100, 300).block_n == 128
    assert scale_b_layout((100, 3), (1, 100), 100, 300).block_n == 1


def test_scale_b_explicit_keywords_override():
    lay = scale_b_layout((56, 56), (56, 1), 7168, 7168, order="kn")
    assert lay == _lay(128, 1, 56, "kn")
    with pytest.raises(ValueError, match=r"shape \[17, 56\] fits none .*\(1x128, nk\)"):
        scale_b_layout((17, 56), (56, 1), 2112, 7168, b_block=1)


def test_scale_b_ambiguous_without_usual_memory():
    """A square scale_b whose memory is neither reading's usual one: kiln asks instead of guessing."""
    big = scale_b_layout  # [56, 56] as a strided view: strides (112, 2)
    with pytest.raises(ValueError, match="can be read 2 ways .* b_block= .* scale_b_order="):
        big((56, 56), (112, 2), 7168, 7168)


@pytest.mark.parametrize("kw,match", [
    (dict(b_block=64), r"b_block=64 is not one of 128, 1"),
    (dict(b_block=True), r"b_block=True is not one of"),
    (dict(order="mn"), r"scale_b_order='mn' is not one of 'nk', 'kn'"),
])
def test_scale_b_bad_keywords(kw, match):
    with pytest.raises(ValueError, match=match):
        scale_b_layout((17, 56), (56, 1), 2112, 7168, **kw)


def test_scale_b_wrong_shape_lists_the_forms():
    with pytest.raises(ValueError) as err:
        scale_b_layout((16, 56), (56, 1), 2112, 7168)
    text = str(err.value)
    assert text.startswith("scale_b: shape [16, 56]")
    assert "[17, 56] (128x128, nk)" in text and "[56, 2112] (1x128, kn)" in text


# ---- torch is optional ----

@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)


@pytest.mark.parametrize("call", [
    lambda: kiln.block_scaled_mm(None, None, None, None),
    lambda: kiln.quantize_per_token_group(None),
    lambda: kiln.quantize_per_block(None),
    lambda: kiln.scale_layout(None, "kiln"),
    lambda: kiln.block_scaled_reference(None, None, None, None),
    lambda: kiln.query(kiln.block_scaled_mm, None, None, None, None),
], ids=["block_scaled_mm", "quantize_per_token_group", "quantize_per_block", "scale_layout", "reference", "query"])
def test_torch_required(no_torch, call):
    with pytest.raises(kiln.TorchRequiredError) as err:
        call()
    assert err.value.name == "torch"


def test_block_scaled_mm_is_an_op_of_plan_query_explain():
    from kiln import _ops
    assert _ops._OPS[kiln.block_scaled_mm] == "block_scaled_mm"
    assert _ops._PLANNERS["block_scaled_mm"].__name__ == "_plan_block_scaled_mm"


# ---- the C API through ctypes (needs libkiln; no GPU) ----

NO_DEVICE = -1


@pytest.fixture(scope="module")
def lib():
    return load_or_skip("scale_b_block_n", "block scales")


@pytest.fixture
def sm90(lib):
    kiln.close()
    kiln.set_arch("sm90", device_index=NO_DEVICE)
    yield lib
    kiln.close()


def _block_problem(m=256, n=2112, k=7168, d=DType.BF16, fp8=DType.E4M3, **fields):
    fields.setdefault("scale_a", ScaleMode.BLOCK)
    fields.setdefault("scale_b", ScaleMode.BLOCK)
    return kiln.make_problem(fp8, fp8, d, Layout.TN, m, n, k, **fields)


def _arch_fp8(arch: str):
    """The e4m3 an arch speaks: FNUZ on CDNA (gfx9), OCP elsewhere."""
    return DType.E4M3FNUZ if arch.startswith("gfx9") else DType.E4M3


def _status_of(p):
    try:
        kiln.query_problem(p, 4, device_index=NO_DEVICE)
    except kiln.KilnError as exc:
        return exc.status, exc.text
    return Status.SUCCESS, ""


def test_problem_init_block_defaults(lib):
    p = _block_problem(300, 2112, 300)
    assert (p.scale_a_stride_m, p.scale_a_stride_k) == (1, 300)
    assert (p.scale_b_stride_n, p.scale_b_stride_k, p.scale_b_block_n) == (3, 1, 128)


def _library_has_block_kernels() -> bool:
    dispatch = REPO / "generated" / "dispatch.c"
    return dispatch.is_file() and "F8F8BQ_" in dispatch.read_text(errors="replace")


def test_query_and_explain_name_a_block_kernel(sm90):
    if not _library_has_block_kernels():
        pytest.skip("generated/ lists no block-scaled (Q) kernel")
    p = _block_problem()
    infos = kiln.query_problem(p, 4, device_index=NO_DEVICE)
    assert infos, "kiln_query found no block-scaled kernel although generated/ lists some"
    assert all("Q_MT" in i.name for i in infos), [i.name for i in infos]
    text = kiln.explain_problem(p, device_index=NO_DEVICE)
    assert infos[0].name in text
    plain = kiln.query_problem(_block_problem(scale_a=ScaleMode.TENSOR, scale_b=ScaleMode.TENSOR), 4,
                               device_index=NO_DEVICE)
    assert not any("Q_MT" in i.name for i in plain), "a tensor-scaled problem got a block-scaled kernel"


@pytest.mark.parametrize("fields,status,words", [
    (dict(scale_b=ScaleMode.TENSOR), Status.NOT_SUPPORTED, "block scales go on both operands"),
    (dict(scale_a=ScaleMode.VECTOR), Status.NOT_SUPPORTED, "block scales go on both operands"),
    (dict(batch=2), Status.NOT_SUPPORTED, "one batch"),
    (dict(scale_b_block_n=64), Status.NOT_SUPPORTED, "scale_b_block_n = 64"),
    (dict(scale_a_stride_m=-1), Status.INVALID_VALUE, "scale_a_stride_m = -1"),
    (dict(scale_b_stride_k=-5), Status.INVALID_VALUE, "scale_b_stride_k = -5"),
    (dict(scale_b_stride_n=2**31), Status.INVALID_VALUE, "scale_b_stride_n"),
], ids=["a_block_b_tensor", "a_vector_b_block", "batch2", "block_n_64", "neg_stride_m", "neg_stride_k",
        "stride_n_too_big"])
def test_block_problem_errors(sm90, fields, status, words):
    got, text = _status_of(_block_problem(**fields))
    assert got == status, f"{fields}: {got!r} ({text})"
    assert words in text


def test_block_scales_are_for_fp8_only(sm90):
    p = kiln.make_problem(DType.BF16, DType.BF16, DType.BF16, Layout.TN, 64, 64, 128, scale_a=ScaleMode.BLOCK,
                          scale_b=ScaleMode.BLOCK)
    got, text = _status_of(p)
    assert got == Status.NOT_SUPPORTED, text


# ---- per-group weight scales: f16/bf16 x prepacked fp8 with scale_b alone KILN_SCALE_BLOCK ----

def _group_problem(m=16, n=4096, k=4096, a=DType.F16, b=DType.E4M3, **fields):
    groups = -(-k // 128)
    fields.setdefault("scale_b", ScaleMode.BLOCK)
    fields.setdefault("scale_b_block_n", 1)
    fields.setdefault("scale_b_stride_n", groups)
    fields.setdefault("scale_b_stride_k", 1)
    return kiln.make_problem(a, b, a, Layout.TN, m, n, k, b_prepacked=1, **fields)


@pytest.mark.parametrize("m", [1, 16, 128, 4096])
def test_group_scales_select_wgmma_kernels(sm90, m):
    """The sm90 mixed logic offers only its wgmma kernels (DepthU 128) for per-group weight scales; the same problem
    with a per-channel scale may also get the mma.sync-family ones."""
    infos = kiln.query_problem(_group_problem(m), 8, device_index=NO_DEVICE)
    assert infos, "no kernel for per-group weight scales on sm90"
    assert all(i.name.endswith("_WGMMA_SM90") and "x128_WG" in i.name for i in infos), [i.name for i in infos]
    text = kiln.explain_problem(_group_problem(m), device_index=NO_DEVICE)
    assert infos[0].name in text


@pytest.mark.parametrize("fields,status,words", [
    (dict(scale_a=ScaleMode.BLOCK), Status.NOT_SUPPORTED, "scales B only"),
    (dict(scale_a=ScaleMode.TENSOR), Status.NOT_SUPPORTED, "scales B only"),
    (dict(batch=2), Status.NOT_SUPPORTED, "one batch"),
    (dict(scale_b_block_n=64), Status.NOT_SUPPORTED, "scale_b_block_n = 64"),
    (dict(scale_b_stride_k=-1), Status.INVALID_VALUE, "scale_b_stride_k = -1"),
    (dict(scale_b_stride_n=2**31), Status.INVALID_VALUE, "scale_b_stride_n"),
], ids=["a_block", "a_tensor", "batch2", "block_n_64", "neg_stride_k", "stride_n_too_big"])
def test_group_scale_errors(sm90, fields, status, words):
    got, text = _status_of(_group_problem(**fields))
    assert got == status, f"{fields}: {got!r} ({text})"
    assert words in text


@pytest.mark.parametrize("arch", ["sm89", "sm80", "gfx942", "gfx1201", "gfx1151"])
def test_group_scales_elsewhere_not_supported(lib, arch):
    """Archs whose mixed kernels cannot apply per-group weight scales answer NOT_SUPPORTED and say why; their
    per-channel problems still select."""
    kiln.close()
    kiln.set_arch(arch, device_index=NO_DEVICE)
    b = _arch_fp8(arch)
    try:
        got, text = _status_of(_group_problem(b=b))
        assert got == Status.NOT_SUPPORTED, (arch, got, text)
        assert "per-group weight scales" in text, text
        plain = _group_problem(b=b, scale_b=ScaleMode.VECTOR)
        assert kiln.query_problem(plain, 1, device_index=NO_DEVICE), arch
    finally:
        kiln.close()


@pytest.mark.parametrize("arch", ["sm89", "sm80", "gfx1201", "gfx1151", "gfx90a"])
def test_archs_without_block_kernels_say_not_supported(lib, arch):
    """An arch whose library has no block-scaled kernel answers NOT_SUPPORTED (not NO_SOLUTION) for any size, and
    says so; its other kinds still select. gfx90a is an MFMA arch like gfx942 but has no fp8 MFMA, so no block-scaled
    kernels (the generator refuses them)."""
    kiln.close()
    kiln.set_arch(arch, device_index=NO_DEVICE)
    fp8 = _arch_fp8(arch)
    try:
        for m, n, k in ((256, 2112, 7168), (1, 1, 128)):
            got, text = _status_of(_block_problem(m, n, k, fp8=fp8))
            assert got == Status.NOT_SUPPORTED, (arch, got, text)
            assert f"{arch} has no fp8_block_scaled kernels" in text, text
        plain = kiln.make_problem(fp8, fp8, DType.BF16, Layout.TN, 256, 256, 256, scale_a=ScaleMode.TENSOR,
                                  scale_b=ScaleMode.TENSOR)
        assert kiln.query_problem(plain, 1, device_index=NO_DEVICE)
    finally:
        kiln.close()


@pytest.mark.parametrize("m,tile", [(1, "_MT16x64x128_"), (16, "_MT16x64x128_"), (4096, "_MT128x128x128_")])
def test_gfx942_selects_its_block_kernels(lib, m, tile):
    """gfx942 (MI300, fp8 MFMA) has block-scaled kernels for e4m3fnuz: kiln_query names them for decode (M = 1, 16)
    and large M, with both of B's block widths; OCP e4m3 is not its format."""
    if "F8NF8NBQ_" not in (REPO / "generated" / "dispatch.c").read_text(errors="replace"):
        pytest.skip("generated/ lists no gfx942 block-scaled kernel")
    kiln.close()
    kiln.set_arch("gfx942", device_index=NO_DEVICE)
    try:
        for block_n in (128, 1):
            p = _block_problem(m, 2112, 7168, fp8=DType.E4M3FNUZ, scale_b_block_n=block_n)
            infos = kiln.query_problem(p, 4, device_index=NO_DEVICE)
            assert infos and all("Q_MT" in i.name and i.name.endswith("_GFX942") for i in infos), infos
            assert tile in infos[0].name, [i.name for i in infos]
        got, _text = _status_of(_block_problem(m, 2112, 7168, fp8=DType.E4M3))
        assert got != Status.SUCCESS, "gfx942 took an OCP e4m3 block problem"
    finally:
        kiln.close()


def test_any_nonnegative_scale_strides_are_valid(sm90):
    """DeepGEMM's padded M-major scale_a, a K-major scale_a, torch's transposed scale_b, a 1x128 B and zero strides
    (one float for all) are all valid problems."""
    for fields in (dict(scale_a_stride_m=1, scale_a_stride_k=260),
                   dict(scale_a_stride_m=56, scale_a_stride_k=1),
                   dict(scale_b_stride_n=1, scale_b_stride_k=2112, scale_b_block_n=1),
                   dict(scale_b_stride_n=0, scale_b_stride_k=0)):
        got, text = _status_of(_block_problem(m=257, **fields))
        assert got not in (Status.INVALID_VALUE, Status.NOT_SUPPORTED), (fields, got, text)


# ---- the benchmark's pure parts ----

def test_bench_moe_dry_run_and_self_check():
    bench = REPO / "bench" / "bench_moe.py"
    if not bench.is_file():
        pytest.skip("bench/bench_moe.py is not there")
    for flag in ("--dry-run", "--self-check"):
        r = subprocess.run([sys.executable, str(bench), flag], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{flag}: {r.stdout}\n{r.stderr}"
    assert "18 shapes" in subprocess.run([sys.executable, str(bench), "--dry-run", "--parts", "block"],
                                         capture_output=True, text=True, timeout=120).stdout
    # + the grouped parts: 4 contiguous, 6 masked, 2 small-experts, 4 k-grouped workloads, with DeepGEMM's published
    # figures
    out = subprocess.run([sys.executable, str(bench), "--dry-run"], capture_output=True, text=True, timeout=120).stdout
    assert "34 shapes" in out and "grouped contiguous 4x8192x4096x7168" in out and "1297 TFLOP/s" in out
    assert "k-grouped 8x4096x7168x32768" in out
