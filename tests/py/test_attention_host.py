"""The attention API without a GPU, through the ctypes layer with the arch set by name: kiln_attn_check's statuses
for bad problems, kiln_attn_query's candidates from the generated attention table (named by kiln_algo_name) for
each arch that has them, NOT_SUPPORTED where an arch has none, and explain's account. Skips without a built libkiln
that has the attention API."""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "runtime" / "python"))

import kiln  # noqa: E402
from kiln import DType, Status, _capi  # noqa: E402
from binding_lib import load_or_skip  # noqa: E402

NO_DEVICE = -1


@pytest.fixture
def lib():
    return load_or_skip("kiln_attn_query", "the attention API")


def problem(lib, qkv=DType.E4M3, o=DType.BF16, b=2, hq=16, hk=4, sq=1024, sk=1024, d=128, **fields):
    p = _capi.kiln_attn_problem()
    _capi.check(lib.kiln_attn_problem_init(ctypes.byref(p), qkv, o, b, hq, hk, sq, sk, d), "kiln_attn_problem_init")
    for key, value in fields.items():
        setattr(p, key, value)
    return p


def on_arch(arch):
    kiln.close()
    kiln.set_arch(arch, device_index=NO_DEVICE)
    return kiln.handle(NO_DEVICE)


def query(lib, h, p, k=8):
    algos = (kiln.kiln_algo * k)()
    n = ctypes.c_int(0)
    st = lib.kiln_attn_query(h, ctypes.byref(p), algos, k, ctypes.byref(n))
    names = []
    for i in range(n.value):
        name = ctypes.c_char_p()
        assert lib.kiln_algo_name(h, ctypes.byref(algos[i]), ctypes.byref(name)) == 0
        names.append(name.value.decode())
    return Status(st), names, (lib.kiln_last_error(h) or b"").decode()


@pytest.mark.parametrize("arch,qkv,families", [("sm90", DType.E4M3, ("WGMMA", "MMA")), ("sm89", DType.E4M3, ("MMA",)),
                                               ("gfx942", DType.E4M3FNUZ, ("MFMA",)), ("gfx1201", DType.E4M3, ("WMMA",)),
                                               ("gfx1151", DType.E4M3, ("WMMA",))])
@pytest.mark.parametrize("d", [64, 128, 256])
def test_arch_selects_its_attention_kernels(lib, arch, qkv, families, d):
    """Every candidate is of one of the arch's families, the first family's kernel first (sm90: wgmma)."""
    try:
        h = on_arch(arch)
        st, names, text = query(lib, h, problem(lib, qkv=qkv, d=d))
        assert st == Status.SUCCESS, text
        assert names and all(n.startswith("Attn_") and f"_D{d}_" in n and
                             any(n.endswith(f"_{f}_{arch.upper()}") for f in families) for n in names), names
        assert names[0].endswith(f"_{families[0]}_{arch.upper()}"), names
        buf = ctypes.create_string_buffer(1 << 14)
        assert lib.kiln_attn_explain(h, ctypes.byref(problem(lib, qkv=qkv, d=d)), buf, len(buf)) == 0
        assert "winner: [" in buf.value.decode() and names[0] in buf.value.decode()
    finally:
        kiln.close()


@pytest.mark.parametrize("d", [64, 128, 256])
def test_sm90_varlen_needs_the_packed_rows_for_wgmma(lib, d):
    """The wgmma kernels map the packed varlen tensors whole: without total_q / total_k a varlen problem gets the mma
    family only (explain says why), with them the wgmma kernel comes first."""
    try:
        h = on_arch("sm90")
        p = problem(lib, d=d, varlen=1)
        st, names, text = query(lib, h, p)
        assert st == Status.SUCCESS, text
        assert names and all(n.endswith("_MMA_SM90") for n in names), names
        buf = ctypes.create_string_buffer(1 << 14)
        assert lib.kiln_attn_explain(h, ctypes.byref(p), buf, len(buf)) == 0
        assert "varlen without total_q and total_k runs on the mma family" in buf.value.decode()
        p = problem(lib, d=d, varlen=1, total_q=1500, total_k=1700)
        st, names, text = query(lib, h, p)
        assert st == Status.SUCCESS, text
        assert names and names[0].endswith("_WGMMA_SM90"), names
    finally:
        kiln.close()


@pytest.mark.parametrize("d", [64, 128, 256])
def test_sm90_p_precision(lib, d):
    """sm90 prefers the kernels that keep P in f16 (PV16: ~2e-3 against the exact result); fp8_p = 1 puts the ones
    that requantize P to e4m3 (PV8, the FP8 recipe) first, the f16 ones after them; explain says which was asked."""
    try:
        h = on_arch("sm90")
        st, names, text = query(lib, h, problem(lib, d=d), k=32)
        assert st == Status.SUCCESS, text
        assert "_PV16_VP0_PE" in names[0] and names[0].endswith("_WGMMA_SM90"), names
        st, fp8, text = query(lib, h, problem(lib, d=d, fp8_p=1), k=32)
        assert st == Status.SUCCESS, text
        assert fp8[0].endswith("_PV8_VP0_PE0_WGMMA_SM90"), fp8
        assert sorted(fp8) == sorted(names)  # a preference: the same candidates
        pv16 = [i for i, n in enumerate(fp8) if "_PV16_" in n]
        assert pv16 and min(pv16) > max(i for i, n in enumerate(fp8) if "_PV16_" not in n), fp8
        buf = ctypes.create_string_buffer(1 << 15)
        assert lib.kiln_attn_explain(h, ctypes.byref(problem(lib, d=d, fp8_p=1)), buf, len(buf)) == 0
        assert "P in fp8 (fp8_p) preferred" in buf.value.decode() and "P in 16 bits" in buf.value.decode()
    finally:
        kiln.close()


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("qkv,o", [(DType.E4M3, DType.BF16), (DType.E5M2, DType.F16)])
def test_sm90_packed_v_takes_its_own_kernels(lib, d, qkv, o):
    """v_packed = 1: the vpre kernels of the table and only them (every bm, so short problems still fill the device;
    on a long problem head dim 64 has three consumers' bm 192 first); v_packed = 0: none of them. Explain says why each
    other kernel was left out."""
    try:
        h = on_arch("sm90")
        long_ = dict(sq=8192, sk=8192)
        st, packed, text = query(lib, h, problem(lib, qkv=qkv, o=o, d=d, v_packed=1, **long_), k=32)
        assert st == Status.SUCCESS, text
        assert all("_PV16_VP1_PE" in n and n.endswith("_WGMMA_SM90") for n in packed), packed
        assert [n.split("_")[3] for n in packed] == (["BM192", "BM128", "BM64"] if d == 64 else ["BM128", "BM64"]), packed
        st, plain, text = query(lib, h, problem(lib, qkv=qkv, o=o, d=d), k=32)
        assert st == Status.SUCCESS and plain and not any("_VP1_" in n for n in plain), plain
        buf = ctypes.create_string_buffer(1 << 15)
        assert lib.kiln_attn_explain(h, ctypes.byref(problem(lib, qkv=qkv, o=o, d=d, v_packed=1)), buf, len(buf)) == 0
        text = buf.value.decode()
        assert "V packed by kiln_attn_pack_v (v_packed 1)" in text and "rejected: reads V as given" in text, text
        # v_packed = 2 (the kernel packs V, or the pass into the work buffer first): the same kernels
        st, fill, text2 = query(lib, h, problem(lib, qkv=qkv, o=o, d=d, v_packed=2, **long_), k=32)
        assert st == Status.SUCCESS and fill == packed, (fill, packed, text2)
        # short sequences: the 64-row packed kernel first (more workgroups), as for V as given
        st, short, text = query(lib, h, problem(lib, qkv=qkv, o=o, d=d, b=1, hq=2, hk=2, sq=100, sk=100, v_packed=1))
        assert st == Status.SUCCESS and "BM64" in short[0], short
    finally:
        kiln.close()


# (batch, heads, seqlen, head dim, v_packed) -> the first kernel's rows per workgroup on a 132-SM device (no device
# here: KILN_MODEL_DEFAULT_SMS). The estimate is waves x (rows + a fixed part): the 64-row kernels only where 128-row
# workgroups would fill at most half a wave, 128-row ones where a wave of them beats two of 64 rows (4 x 8 x 512: 128
# workgroups; H200, tuning/results/probe_attn_small_picks_h200.txt: 180 against 134 TFLOP/s), and at head dim 64 the
# 192-row kernel where it saves a wave or, with the split tail (persist 2), where its second wave is the shorter one:
# 2 x 16 x 1024 with V packed, 192 workgroups of 192 rows against 256 of 128, both two waves, ran even on the H100
# (tuning/results/probe_attn_small_picks_h100_2d739ff.txt: 218.8 against 220.4 TFLOP/s).
@pytest.mark.parametrize("b,hq,s,d,vp,bm", [
    (1, 8, 512, 64, 0, "BM64"), (1, 16, 512, 64, 0, "BM64"), (4, 8, 512, 64, 0, "BM128"), (8, 8, 512, 64, 0, "BM128"),
    (2, 8, 512, 128, 0, "BM64"), (4, 8, 512, 128, 0, "BM128"), (16, 16, 1024, 128, 0, "BM128"),
    (1, 4, 2176, 128, 0, "BM128"), (1, 4, 2048, 128, 0, "BM64"), (4, 32, 4096, 128, 1, "BM128"),
    (2, 16, 8192, 64, 1, "BM192"), (8, 16, 2048, 64, 1, "BM192"), (2, 16, 1024, 64, 1, "BM192"),
    (1, 8, 512, 256, 0, "BM64"), (2, 8, 8192, 256, 1, "BM128"),
])
def test_sm90_selection_counts_waves(lib, b, hq, s, d, vp, bm):
    try:
        h = on_arch("sm90")
        st, names, text = query(lib, h, problem(lib, b=b, hq=hq, hk=hq, sq=s, sk=s, d=d, v_packed=vp), k=32)
        assert st == Status.SUCCESS, text
        assert names[0].split("_")[3] == bm, names
        buf = ctypes.create_string_buffer(1 << 15)
        p = problem(lib, b=b, hq=hq, hk=hq, sq=s, sk=s, d=d, v_packed=vp)
        assert lib.kiln_attn_explain(h, ctypes.byref(p), buf, len(buf)) == 0
        assert "waves on 132 SMs), estimate" in buf.value.decode(), buf.value.decode()
    finally:
        kiln.close()


@pytest.mark.parametrize("arch,qkv", [("sm89", DType.E4M3), ("gfx942", DType.E4M3FNUZ), ("gfx1201", DType.E4M3),
                                      ("gfx1151", DType.E4M3)])
def test_packed_v_elsewhere_is_not_supported(lib, arch, qkv):
    try:
        h = on_arch(arch)
        st, names, text = query(lib, h, problem(lib, qkv=qkv, v_packed=1))
        assert st == Status.NOT_SUPPORTED and "no attention kernels that read a packed V^T" in text, (st, text)
    finally:
        kiln.close()


def test_pack_v_size_and_its_bad_calls(lib):
    size = ctypes.c_size_t(0)
    p = problem(lib, b=3, hk=2, sk=777, d=128)
    assert lib.kiln_attn_pack_v_size(ctypes.byref(p), ctypes.byref(size)) == 0
    assert size.value == 3 * 2 * 128 * 784 * 2
    assert lib.kiln_attn_pack_v_size(ctypes.byref(problem(lib, sk=0)), ctypes.byref(size)) == 0 and size.value == 0
    assert lib.kiln_attn_pack_v_size(None, ctypes.byref(size)) == Status.NULL_POINTER
    try:  # no device: a pack is refused before anything is touched
        h = on_arch("sm90")
        st = lib.kiln_attn_pack_v(h, ctypes.byref(p), 16, None, 16, 3 * 2 * 128 * 784 * 2, None)
        assert st == Status.NO_DEVICE, Status(st)
    finally:
        kiln.close()


@pytest.mark.parametrize("arch,qkv", [("gfx1151", DType.E4M3), ("gfx942", DType.E4M3FNUZ), ("sm89", DType.E4M3)])
def test_p_precision_is_a_preference(lib, arch, qkv):
    """An arch with one kind of P runs it whatever fp8_p says: gfx1151 has f16 P only, gfx942 and sm89 fp8 P only."""
    try:
        h = on_arch(arch)
        st, names, text = query(lib, h, problem(lib, qkv=qkv))
        st8, names8, text8 = query(lib, h, problem(lib, qkv=qkv, fp8_p=1))
        assert st == st8 == Status.SUCCESS, (text, text8)
        assert names == names8, (names, names8)
    finally:
        kiln.close()


@pytest.mark.parametrize("arch", ["sm80"])
def test_arch_without_attention_says_not_supported(lib, arch):
    try:
        h = on_arch(arch)
        st, names, text = query(lib, h, problem(lib))
        assert st == Status.NOT_SUPPORTED and f"{arch} has no attention kernels" in text, (st, text)
    finally:
        kiln.close()


@pytest.mark.parametrize("fields,status,text", [
    (dict(qkv=DType.BF16), Status.NOT_SUPPORTED, "attention takes fp8"),
    (dict(o=DType.F32), Status.NOT_SUPPORTED, "attention writes f16 or bf16"),
    (dict(hk=3), Status.INVALID_VALUE, "heads_kv = 3 must divide heads_q = 16"),
    (dict(d=96), Status.NOT_SUPPORTED, "head_dim = 96"),
    (dict(descale=3), Status.NOT_SUPPORTED, "descale = KILN_SCALE_BLOCK"),
    (dict(o_stride_h=64), Status.INVALID_VALUE, "o_stride_h = 64 makes elements of o overlap"),
    (dict(k_stride_s=520), Status.MISALIGNED, "k_stride_s = 520 is not a multiple of 16 elements"),
])
def test_bad_problems(lib, fields, status, text):
    try:
        h = on_arch("sm90")
        kw = {k: fields.pop(k) for k in ("qkv", "o", "hk", "d") if k in fields}
        p = problem(lib, **kw, **fields)
        st = Status(lib.kiln_attn_check(h, ctypes.byref(p)))
        msg = (lib.kiln_last_error(h) or b"").decode()
        assert st == status and text in msg, (st, msg)
    finally:
        kiln.close()


def test_bench_attn_dry_run_and_self_check():
    import subprocess
    bench = REPO / "bench" / "bench_attn.py"
    for flag in ("--dry-run", "--self-check"):
        r = subprocess.run([sys.executable, str(bench), flag], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{flag}: {r.stdout}\n{r.stderr}"
    out = subprocess.run([sys.executable, str(bench), "--dry-run"], capture_output=True, text=True, timeout=120).stdout
    assert "4x32x4096x128 causal" in out and "class small_512" in out


def test_automatic_packing_pays_where_measured():
    """kiln.attention packs V itself (pack_v=None) where the estimated saving exceeds the pass. The H200 numbers behind
    the estimate (bench/NOTES.md, 7005849, f5d9b1d and the packer of 32-bit key-pair words): packing pays at
    4x32x4096x128, 1x16x16384x128 and 2x8x8192x256 (non-causal and causal) and 2x16x8192x64; at causal 4x32x4096x128
    the packed kernel runs 853 TFLOP/s against 742 for the one that widens V in place, ~96 us saved against a ~56 us
    pass; the latency-bound 1x8x512x64, a short 2x4x2048x128 and causal 8x16x2048x128 would only pay the pass
    (kiln.attention with and without it, H200: causal 4x32x4096x128 780 against 734-750 TFLOP/s, 4x8x4096x128 736-747
    against 708-710, 8x16x2048x128 620 against 627-640; tuning/results/probe_attn_pack_pays_h200.txt)."""
    from kiln._attention import _pack_pays
    pays = [(4, 32, 32, 4096, 4096, 128, False), (1, 16, 16, 16384, 16384, 128, False),
            (1, 16, 16, 16384, 16384, 128, True), (2, 8, 8, 8192, 8192, 256, False), (2, 8, 8, 8192, 8192, 256, True),
            (2, 16, 16, 8192, 8192, 64, False), (4, 32, 32, 4096, 4096, 128, True), (4, 8, 8, 4096, 4096, 128, True)]
    not_pays = [(1, 8, 8, 512, 512, 64, False), (2, 4, 4, 2048, 2048, 128, False), (1, 2, 2, 300, 300, 128, True),
                (8, 16, 16, 2048, 2048, 128, True),
                (4, 32, 32, 4096, 4096, 96, False)]  # (no gain is known for head dim 96: never)
    assert all(_pack_pays(*c) for c in pays), [c for c in pays if not _pack_pays(*c)]
    assert not any(_pack_pays(*c) for c in not_pays), [c for c in not_pays if _pack_pays(*c)]
    # GQA: one packed V serves heads_q / heads_kv query heads, so the pass is relatively cheaper
    assert _pack_pays(1, 32, 4, 4096, 4096, 128, False) and not _pack_pays(1, 4, 4, 4096, 4096, 128, False)


def test_packed_v_describes_itself():
    pv = kiln.PackedV(data=None, dtype="float8_e4m3fn", batch=2, heads_kv=4, seqlen_k=333, head_dim=128, varlen=False)
    assert repr(pv) == "PackedV(batch=2, heads_kv=4, seqlen_k=333, head_dim=128, from float8_e4m3fn)"
    assert kiln._attention._vt_keys(333) == 336 and kiln._attention._vt_keys(0) == 8
