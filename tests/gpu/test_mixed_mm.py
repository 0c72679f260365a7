"""f16/bf16 activations x prepacked fp8 weights (kiln.prepack_b + kiln.mixed_mm) against the float64 reference,
and the torch prepack against the C kiln_prepack_b, bit for bit."""
from __future__ import annotations

import importlib.util
import itertools

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

FP8 = [DType.E4M3, DType.E5M2, DType.E4M3FNUZ, DType.E5M2FNUZ]
COMBOS = [(a, b, d, Layout.TN, True) for a in (DType.F16, DType.BF16) for b in FP8
          for d in (DType.F16, DType.BF16, DType.F32)]
BASE = (DType.F16, DType.E4M3, DType.F16, Layout.TN, True)


def run_mixed(shape, combo, scale_mode="vector", bias_type="a", act=None, algo=None, b_layout=Layout.TN):
    """shape (M, N, K), or (batch, M, N, K) run as a 3-D A whose leading dims kiln flattens."""
    batch, m, n, k = kt.split_shape(shape)
    a_t, b_t, d_t, _lay, _ = combo
    a = kt.randn_half(kt.mk(batch, m, k), kt.tdt(a_t))
    w = kt.b_operand(k, n, kt.tdt(b_t), b_layout)  # B(k, n) as [K, N]
    packed = kiln.prepack_b(w)
    sb = {"none": None, "tensor": kt.positive(()), "vector": kt.positive((n,)), "float": 0.75}[scale_mode]
    bias_dt = a_t if bias_type == "a" else bias_type
    bias = torch.randn(n, device="cuda").to(kt.tdt(bias_dt)) if bias_dt is not None else None
    what = (f"{kt.combo_id(combo)} {kt.shape_id(shape)} scale={scale_mode} bias={kt.name_of(bias_dt)} "
            f"act={act}")
    sb_ref = torch.tensor(sb, device="cuda") if isinstance(sb, float) else sb
    ref = kt.reference(a, w, sb=sb_ref, bias=bias, act=act)
    return kt.run_checked(kiln.mixed_mm, (a, packed), dict(scale_b=sb, bias=bias, activation=act),
                          lambda: _poisoned_out(batch, m, n, d_t), ref, kt.TOL_FP8, what, algo)


def _poisoned_out(batch, m, n, d_t):
    """A NaN-filled output: [batch, m, n] for a 3-D A (the op flattens A's leading dims and so needs an out whose
    leading dims flatten too), else kt.poisoned's [m, n] view of padded rows."""
    if batch:
        return torch.full((batch, m, n), float("nan"), dtype=kt.tdt(d_t), device="cuda")
    return kt.poisoned(m, n, kt.tdt(d_t))


@pytest.mark.parametrize("combo", COMBOS, ids=kt.combo_id)
def test_mixed_types(combo):
    kt.require_combo(combo)
    for shape in kt.FEW_SHAPES:
        run_mixed(shape, combo)


@pytest.mark.parametrize("shape", kt.ALL_SHAPES, ids=kt.shape_id)
def test_mixed_shapes(shape):
    kt.require_combo(BASE)
    run_mixed(shape, BASE)


EPILOGUES = list(itertools.product(["none", "tensor", "vector", "float"], [None, "a", DType.F32],
                                   [None, "relu", "gelu", "silu"]))


@pytest.mark.parametrize("scale_mode,bias_type,act", EPILOGUES, ids=kt.name_of)
def test_mixed_epilogue(scale_mode, bias_type, act):
    kt.require_combo(BASE)
    for shape in ((300, 200, 512), (1, 130, 1000)):
        run_mixed(shape, BASE, scale_mode, bias_type, act)


@pytest.mark.parametrize("a_t", [DType.F16, DType.BF16])
@pytest.mark.parametrize("b_t", [DType.E4M3, DType.E5M2])
def test_mixed_nn_weights(a_t, b_t):
    """B given as a row-major [K, N] tensor packs to the same layout and gives the same GEMM."""
    combo = (a_t, b_t, a_t, Layout.TN, True)
    kt.require_combo(combo)
    run_mixed((200, 136, 272), combo, "vector", DType.F32, "relu", b_layout=Layout.NN)


# (M, N, K), scale_b's block along N (1: per weight row, 128: 128x128 blocks), scale_b transposed in memory, the
# scales' magnitude: "unit" (0.5..1.5), "tiny" (e5m2 scales of LLM weights, ~1e-6: below f16's normal range, where
# the f16 kernels split each scale in two multiplies), "mixed" (every fifth row tiny, so most warps hold both
# kinds and take the two-multiply path for all their rows; the others take one multiply) or "warps" (rows 16-31 of
# every 64 tiny: the warp that holds them takes two multiplies and the other three of its warpgroup could take one,
# which the prefill tiles' wgmma loop must not let them do: quantized LLM weights put scales on both sides of f16's
# normal range this way, and a warp vote there once ran the warpgroup's wgmma from two copies of the loop)
GROUP_CASES = [((300, 200, 1000), 1, False, "unit"), ((1, 4096, 4096), 1, True, "unit"),
               ((77, 520, 384), 128, False, "unit"), ((16, 1000, 8200), 1, False, "tiny"),
               ((130, 4096, 2048), 128, True, "unit"), ((200, 640, 1024), 1, False, "mixed"),
               ((3, 2000, 1500), 1, True, "mixed"), ((300, 520, 2048), 1, False, "warps")]
SCALE_MAGNITUDE = {"unit": 1.0, "tiny": 1e-6}


def _group_scales(rows, groups, transposed, magnitude):
    """scale_b [rows, groups] (a transposed view where asked) of the given magnitude class (GROUP_CASES)."""
    sb = kt.positive((groups, rows)).t() if transposed else kt.positive((rows, groups))
    if magnitude in ("mixed", "warps"):
        row = torch.arange(rows, device="cuda")
        tiny = (row % 5 == 0 if magnitude == "mixed" else row % 64 // 16 == 1).float()[:, None]
        return sb * (tiny * 1e-6 + (1 - tiny))
    return sb * SCALE_MAGNITUDE[magnitude]


@pytest.mark.parametrize("a_t", [DType.F16, DType.BF16])
@pytest.mark.parametrize("b_t", [DType.E4M3, DType.E5M2])
def test_mixed_group_scales(a_t, b_t):
    """Per-group weight scales (scale_b [N, ceil(K/128)] or [ceil(N/128), ceil(K/128)], any strides) through every
    kernel kiln_query offers and every other sm90 kernel of the table that takes them, against the float64 product
    with the dequantized weights; with a bias and an activation on one case."""
    combo = (a_t, b_t, a_t, Layout.TN, True)
    kt.require_combo(combo)
    if kt.arch() != "sm90":
        pytest.skip("per-group weight scales run in the sm90 kernels")
    for i, ((m, n, k), block_n, transposed, magnitude) in enumerate(GROUP_CASES):
        a = kt.randn_half(kt.mk(None, m, k), kt.tdt(a_t))
        w = kt.b_operand(k, n, kt.tdt(b_t), Layout.TN)  # B(k, n) as [K, N]
        if magnitude != "unit":  # weights that use the format's range, as quantized ones do: w * s stays an f16 normal
            w = (w.float() * 64).clamp(-400, 400).to(kt.tdt(b_t))
        packed = kiln.prepack_b(w)
        groups, rows = -(-k // 128), (n if block_n == 1 else -(-n // 128))
        sb = _group_scales(rows, groups, transposed, magnitude)
        full = sb.double().repeat_interleave(block_n, 0)[:n].repeat_interleave(128, 1)[:, :k]  # [N, K]
        bias = torch.randn(n, device="cuda").to(kt.tdt(a_t)) if i == 0 else None
        act = "silu" if i == 0 else None
        ref = kt.reference(a, (kt.f64(w) * full.t()), bias=bias, act=act)
        what = (f"{kt.combo_id(combo)} {m}x{n}x{k} group scales block_n={block_n} transposed={transposed} "
                f"{magnitude}")
        kt.run_checked(kiln.mixed_mm, (a, packed), dict(scale_b=sb, bias=bias, activation=act),
                       lambda: kt.poisoned(m, n, kt.tdt(a_t)), ref, kt.TOL_FP8, what, "each")


def test_mixed_group_scale_shapes():
    """A 2-D scale_b with ceil(K/128) columns is per-group; its rows must be N or ceil(N/128)."""
    kt.require_combo(BASE)
    a = kt.randn_half((8, 300), torch.float16)
    packed = kiln.prepack_b(kt.b_operand(300, 260, torch.float8_e4m3fn, Layout.TN))
    with pytest.raises(ValueError, match=r"\[260, 3\] or \[ceil\(N/128\), ceil\(K/128\)\] = \[3, 3\]"):
        kiln.mixed_mm(a, packed, scale_b=kt.positive((7, 3)))
    with pytest.raises(TypeError, match="float32"):
        kiln.mixed_mm(a, packed, scale_b=kt.positive((260, 3)).double())


def _decode_operands(shape, a_t):
    """(batch, m, n, k, A, W, prepacked W, column scale, bias) of a shape (kt.split_shape) with a_t activations and
    e4m3 weights, fresh random values."""
    batch, m, n, k = kt.split_shape(shape)
    a = kt.randn_half(kt.mk(batch, m, k), kt.tdt(a_t))
    w = kt.b_operand(k, n, kt.tdt(DType.E4M3), Layout.TN)
    sb, bias = kt.positive((n,)), torch.randn(n, device="cuda").to(kt.tdt(a_t))
    return batch, m, n, k, a, w, kiln.prepack_b(w), sb, bias


# Decode shapes for split-K in a cluster: odd N (a partial weight tile), K not a multiple of 128 (a short last
# K-tile in the last split), splits of unequal length, one or two tiles, a 3-D A, a large K.
CLUSTER_SPLIT_SHAPES = [(1, 1000, 8200), (3, 4104, 4104), (17, 130, 1000), (2, 5, 520, 2000), (32, 64, 300),
                        (9, 2056, 28672)]


@pytest.mark.parametrize("a_t", [DType.F16, DType.BF16])
def test_mixed_cluster_split(a_t):
    """Every split-K-in-a-cluster kernel of the table (MC3: the gsu CTAs of a cluster take a tile's K slices and
    the first adds the others' sums from their shared memory), forced by name on odd decode shapes with a column
    scale, a bias and an activation, in a poisoned output; a shape whose K leaves a split empty is refused
    (INVALID_ALGO), never launched."""
    combo = (a_t, DType.E4M3, a_t, Layout.TN, True)
    kt.require_combo(combo)
    names = sorted(n for n in kt.claimed_names_of(kt.arch(), combo) if "_MC3_" in n)
    if not names:
        pytest.skip(f"no split-K-in-a-cluster {kt.combo_id(combo)} kernel in this table")
    ran = 0
    for shape in CLUSTER_SPLIT_SHAPES:
        batch, m, n, k, a, w, packed, sb, bias = _decode_operands(shape, a_t)
        ref = kt.reference(a, w, sb=sb, bias=bias, act="gelu")
        for name in names:
            out = _poisoned_out(batch, m, n, a_t)
            try:
                res = kt.run_and_record(kiln.mixed_mm, a, packed, scale_b=sb, bias=bias, activation="gelu", out=out,
                                        algo=kiln.algo_by_name(name))
            except kiln.KilnError as exc:
                assert exc.status == kiln.Status.INVALID_ALGO, f"{name} {shape}: {exc}"
                assert torch.isnan(out).all(), f"{name} {shape}: refused, yet the output was written"
                continue
            kt.check(res, ref, kt.TOL_FP8, f"{name} {kt.shape_id(shape)}")
            kt.untouched_outside(res, name)
            ran += 1
    assert ran >= len(names), "most split-K-in-a-cluster kernels ran on no shape"


# Decode shapes for the direct-load kernels: K not a multiple of 16 (a partial last group of activations) or of 128
# (a short last K-tile), N not a multiple of the tile's 16-64 rows, more tokens than one tile, a 3-D A, K below one
# K-tile, a large K.
DIRECT_SHAPES = [(1, 1000, 8200), (3, 4104, 4104), (17, 130, 1000), (2, 5, 520, 2000), (32, 64, 300), (1, 33, 17),
                 (9, 2056, 28672), (40, 72, 136)]


def _e5m2_twin(name: str) -> str:
    """The same kernel for e5m2 weights: the B type code F8 (e4m3) becomes B8 in the name's type segment."""
    types, rest = name.split("_MT", 1)
    return types[:-4] + types[-4:].replace("F8", "B8") + "_MT" + rest


@pytest.mark.parametrize("a_t", [DType.F16, DType.BF16])
def test_mixed_direct(a_t):
    """Every direct-load kernel of the table (WSGR1: each warp loads its own K-tiles of the prepacked weights and the
    activations into registers; kiln_gemm_direct.h), forced by name on odd decode shapes with a column scale, a bias
    and an activation, in a poisoned output, with e4m3 and (on two shapes) e5m2 weights."""
    combo = (a_t, DType.E4M3, a_t, Layout.TN, True)
    kt.require_combo(combo)
    names = sorted(n for n in kt.claimed_names_of(kt.arch(), combo) if "_WSGR1_" in n)
    if not names:
        pytest.skip(f"no direct-load {kt.combo_id(combo)} kernel in this table")
    for i, shape in enumerate(DIRECT_SHAPES):
        batch, m, n, k, a, w, packed, sb, bias = _decode_operands(shape, a_t)
        if i in (1, 4):  # e5m2 weights: the widening is a byte move, not the cvt
            w = kt.b_operand(k, n, kt.tdt(DType.E5M2), Layout.TN)
            packed = kiln.prepack_b(w)
        ref = kt.reference(a, w, sb=sb, bias=bias, act="gelu")
        for name in names:
            out = _poisoned_out(batch, m, n, a_t)
            res = kt.run_and_record(kiln.mixed_mm, a, packed, scale_b=sb, bias=bias, activation="gelu", out=out,
                                    algo=kiln.algo_by_name(_e5m2_twin(name) if i in (1, 4) else name))
            what = f"{name} {kt.shape_id(shape)}{' e5m2' if i in (1, 4) else ''}"
            kt.check(res, ref, kt.TOL_FP8, what)
            if not batch:
                kt.untouched_outside(res, what)


TMA_STORE_SHAPES = [(200, 1032, 1000), (2, 130, 520, 700), (64, 64, 128), (129, 4104, 520)]


@pytest.mark.parametrize("a_t", [DType.F16, DType.BF16])
def test_mixed_tma_store(a_t, monkeypatch):
    """Every table kernel of a x e4m3 -> a, forced by name on odd shapes and batches, with a column scale and a bias
    and without: the prefill tiles store D through the copy engine (kiln_gemm_wgmma.h, epilogue_swap_tma: stmatrix
    .trans into 64 x 64 boxes), the others through the staged epilogue; with KILN_TMA_STORE=0 every kernel takes the
    staged one. Both pass the gate in a poisoned output, nothing is written outside it, and they agree bit for bit."""
    combo = (a_t, DType.E4M3, a_t, Layout.TN, True)
    kt.require_combo(combo)
    names = sorted(kt.claimed_names_of(kt.arch(), combo))
    assert names, f"no {kt.combo_id(combo)} kernel in the table"
    for shape in TMA_STORE_SHAPES:
        batch, m, n, k, a, w, packed, sb, bias = _decode_operands(shape, a_t)
        for b in (bias, None):
            ref = kt.reference(a, w, sb=sb, bias=b)
            for name in names:
                runs = []
                for mode in ("1", "0"):
                    monkeypatch.setenv("KILN_TMA_STORE", mode)
                    out = _poisoned_out(batch, m, n, a_t)
                    what = f"{name} {kt.shape_id(shape)} bias={b is not None} KILN_TMA_STORE={mode}"
                    try:
                        res = kt.run_and_record(kiln.mixed_mm, a, packed, scale_b=sb, bias=b, out=out,
                                                algo=kiln.algo_by_name(name))
                    except kiln.KilnError as exc:  # e.g. a split-K kernel whose K leaves a split empty
                        assert exc.status == kiln.Status.INVALID_ALGO, f"{what}: {exc}"
                        assert torch.isnan(out).all(), f"{what}: refused, yet the output was written"
                        break
                    kt.check(res, ref, kt.TOL_FP8, what)
                    if not batch:
                        kt.untouched_outside(res, what)
                    runs.append(res.clone())
                if len(runs) == 2 and not torch.equal(runs[0], runs[1]):
                    pytest.fail(f"{name} {kt.shape_id(shape)}: the two epilogues differ in "
                                f"{(runs[0] != runs[1]).sum().item()} outputs")


@pytest.mark.parametrize("a_t", [DType.F16, DType.BF16])
def test_mixed_repeatable(a_t):
    """Every table kernel of a x e4m3 -> a on a problem of many tiles per CTA: the first run passes the gate and the
    next ones give the same bits (split-K partial sums add up in a fixed order). The mma.sync kernels with split-K
    once gave a stage back while their last ldmatrix of it were still in flight, so that a refill from L2 overwrote
    activations not yet read: a few hundred outputs moved from run to run, in up to 8 % of the runs of a shipped
    kernel here, within the gate (docs/gpu-runs.md, 2026-11-26)."""
    combo = (a_t, DType.E4M3, a_t, Layout.TN, True)
    kt.require_combo(combo)
    m, n, k = 512, 28672, 4096
    a = kt.randn_half(kt.mk(None, m, k), kt.tdt(a_t))
    w = kt.b_operand(k, n, kt.tdt(DType.E4M3), Layout.TN)
    packed = kiln.prepack_b(w)
    sb = kt.positive((n,))
    ref = kt.reference(a, w, sb=sb)
    names = sorted(kt.claimed_names_of(kt.arch(), combo))
    assert names, f"no {kt.combo_id(combo)} kernel in the table"
    for name in names:
        al = kiln.algo_by_name(name)
        first = kt.run_and_record(kiln.mixed_mm, a, packed, scale_b=sb, out=kt.poisoned(m, n, kt.tdt(a_t)), algo=al)
        kt.check(first, ref, kt.TOL_FP8, name)
        out = torch.empty_like(first)
        for i in range(100 if "_MI16x8x16_" in name else 10):  # the mma.sync kernels: the race hit 1-8 % of runs
            kiln.mixed_mm(a, packed, scale_b=sb, out=out, algo=al)
            if not torch.equal(out, first):
                where = (out != first).nonzero()
                pytest.fail(f"{name}: run {i + 2} differs from the first in {where.shape[0]} outputs, first at "
                            f"{where[:3].tolist()}")


# ---- prepack: torch on the GPU == kiln_prepack_b on the host ----

def _random_bytes(shape, dtype):
    return torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda").view(dtype)


@pytest.mark.parametrize("layout", [Layout.TN, Layout.NN])
@pytest.mark.parametrize("k,n", [(16, 1), (17, 8), (100, 33), (1000, 24), (4096, 64)])
def test_prepack_torch_equals_c(layout, k, n):
    dtype = torch.float8_e4m3fn
    if layout == Layout.TN:
        w = kt.storage(n, k, dtype).copy_(_random_bytes((n, k), dtype)).t()
    else:
        w = kt.storage(k, n, dtype).copy_(_random_bytes((k, n), dtype))
    packed = kiln.prepack_b(w)
    assert packed.data.shape == (n, kiln.packed_k(k)) and packed.data.dtype == torch.uint8
    assert (packed.k, packed.n, packed.kp, packed.dtype) == (k, n, kiln.packed_k(k), DType.E4M3)
    host_t = kiln.prepack_b_host(w.view(torch.uint8).cpu())
    assert torch.equal(packed.data.cpu(), host_t)
    if importlib.util.find_spec("numpy") is None:
        return
    host_np = kiln.prepack_b_host(w.view(torch.uint8).cpu().numpy())
    assert (host_np == packed.data.cpu().numpy()).all()


def test_prepack_uint8_needs_fp8():
    w = _random_bytes((64, 32), torch.uint8)
    with pytest.raises(TypeError, match="fp8="):
        kiln.prepack_b(w)
    packed = kiln.prepack_b(w, fp8="e5m2")
    assert packed.dtype == DType.E5M2
    assert torch.equal(packed.data, kiln.prepack_b(w.view(torch.float8_e5m2)).data)
    with pytest.raises(TypeError):
        kiln.prepack_b(torch.randn(64, 32, device="cuda", dtype=torch.float16))


def test_prepack_small_matches_reference():
    k, n = 40, 3
    w = _random_bytes((k, n), torch.float8_e5m2)
    rows = w.view(torch.uint8).cpu().tolist()
    assert kiln.prepack_b(w).data.cpu().tolist() == kiln.prepack_reference(rows, k, n)
