"""Tests of the Python binding that need no GPU: the ctypes mirror against kiln.h, the spelling tables, layout
inference and the prepack index math. Those that need libkiln (host functions only) skip without it."""
from __future__ import annotations

import ctypes
import os
import random
import re
import shutil
import subprocess

import pytest

import kilntest
from kilntest import kiln

from kiln import _capi, _prepack, _types
from kiln import DType, Layout

HEADER_TEXT = _capi.HEADER.read_text()


# ---- the mirror of kiln.h ----

@pytest.mark.parametrize("enum_type", list(_capi.C_ENUMS), ids=lambda e: e.__name__)
def test_enum_matches_header(enum_type):
    prefix = _capi.C_ENUMS[enum_type]
    found = dict(re.findall(rf"\b{prefix}(\w+)\s*=\s*(\d+)", HEADER_TEXT))
    count = found.pop("COUNT", None)
    assert {k: int(v) for k, v in found.items()} == {m.name: m.value for m in enum_type}
    if count is not None:
        assert int(count) == len(enum_type)


def test_every_api_function_is_declared():
    """Every function of kiln.h is bound; the optional ones (bound when the loaded library has them) too once the
    header declares them."""
    declared = set(re.findall(r"^(?:const char \*|kiln_status )(kiln_\w+)\(", HEADER_TEXT, re.M))
    assert set(_capi.PROTOTYPES) <= declared <= set(_capi.PROTOTYPES) | set(_capi.OPTIONAL_PROTOTYPES)


def test_api_version():
    assert int(re.search(r"#define KILN_API_VERSION (\d+)", HEADER_TEXT).group(1)) == _capi.API_VERSION


def _struct_fields(struct_name):
    body = re.search(rf"typedef struct {struct_name} \{{(.*?)\}} {struct_name};", HEADER_TEXT, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        # "const void *a, *b, *c" / "int64_t m, n, k, batch" / "kiln_dtype a_type, b_type, d_type"
        first, *rest = decl.split(",")
        names.append(re.findall(r"\w+", first)[-1])
        names += [re.findall(r"\w+", r)[-1] for r in rest]
    return names


STRUCTS = [_capi.kiln_problem, _capi.kiln_args, _capi.kiln_algo, _capi.kiln_attn_problem, _capi.kiln_attn_args]


@pytest.mark.parametrize("struct", STRUCTS, ids=lambda s: s.__name__)
def test_struct_field_order(struct):
    assert [f for f, _t in struct._fields_] == _struct_fields(struct.__name__)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler to read the C layout")
def test_struct_layout_matches_c(tmp_path):
    structs = STRUCTS
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "kiln/kiln.h"', "int main(void) {"]
    for s in structs:
        lines.append(f'printf("{s.__name__} size %zu\\n", sizeof({s.__name__}));')
        for f, _t in s._fields_:
            lines.append(f'printf("{s.__name__} {f} %zu\\n", offsetof({s.__name__}, {f}));')
    lines += ["return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-std=c99", "-I", str(kilntest.REPO / "runtime" / "include"), str(src), "-o", str(exe)],
                   check=True)
    c_layout = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        struct, field, value = line.split()
        c_layout[(struct, field)] = int(value)
    for s in structs:
        assert c_layout[(s.__name__, "size")] == ctypes.sizeof(s)
        for f, _t in s._fields_:
            assert c_layout[(s.__name__, f)] == getattr(s, f).offset, f"{s.__name__}.{f}"


# ---- spelling tables ----

def test_dtype_tables_complete():
    assert set(_types.TORCH_DTYPE_NAME) == set(DType)
    assert set(_types.DTYPE_BYTES) == set(DType)
    assert set(_types.FP8_NAMES.values()) == _types.FP8_DTYPES
    for dt, name in _types.TORCH_DTYPE_NAME.items():
        assert _types.dtype_from_name(name) == dt


def test_dtype_table_matches_torch_when_present():
    torch = kilntest.torch
    if torch is None:
        pytest.skip("torch is not installed")
    for dt, name in _types.TORCH_DTYPE_NAME.items():
        tdtype = getattr(torch, name, None)
        if tdtype is None:
            continue  # an older torch without this fp8 type
        assert kiln.kiln_dtype(tdtype) == dt
        assert torch.empty((), dtype=tdtype).element_size() == _types.DTYPE_BYTES[dt]


def test_uint8_needs_fp8_override():
    with pytest.raises(TypeError, match="fp8="):
        _types.dtype_from_name("uint8")
    for name, dt in _types.FP8_NAMES.items():
        assert _types.dtype_from_name("uint8", name) == dt
        assert _types.dtype_from_name("uint8", name.upper()) == dt
    with pytest.raises(ValueError):
        _types.dtype_from_name("uint8", "e3m4")
    with pytest.raises(TypeError):
        _types.dtype_from_name("float16", "e4m3")
    assert _types.dtype_from_name("float8_e5m2", "e5m2") == DType.E5M2
    with pytest.raises(TypeError):
        _types.dtype_from_name("float8_e5m2", "e4m3")
    with pytest.raises(TypeError, match="not a kiln dtype"):
        _types.dtype_from_name("int32")


def test_activation_and_layout_names():
    assert _types.activation_from_name(None) == kiln.Activation.NONE
    for name in ("none", "relu", "gelu", "silu"):
        assert _types.activation_from_name(name).name == name.upper()
    assert _types.activation_from_name("GELU") == kiln.Activation.GELU
    with pytest.raises(ValueError):
        _types.activation_from_name("tanh")
    assert _types.layout_from_name("tn") == Layout.TN and _types.layout_from_name(None) is None
    with pytest.raises(ValueError):
        _types.layout_from_name("NT")


@pytest.mark.parametrize("k,n,sk,sn,want", [
    (64, 32, 1, 72, (Layout.TN, 72)),        # transposed view of [N, K] storage with padded rows
    (64, 32, 40, 1, (Layout.NN, 40)),        # [K, N] row-major with padded rows
    (64, 1, 1, 1, (Layout.TN, 64)),          # N = 1: a single row of [N][K], ld made 16-byte friendly
    (999, 1, 1, 1, (Layout.TN, 1008)),
    (1, 32, 32, 1, (Layout.NN, 32)),         # K = 1
    (1, 32, 32, 5, (Layout.TN, 5)),          # K = 1 with no unit stride: one row of [N][K] storage
    (64, 1, 8, 1, (Layout.NN, 8)),           # N = 1 out of padded [K][N] storage
])
def test_infer_b_layout(k, n, sk, sn, want):
    assert _types.infer_b_layout(k, n, sk, sn, DType.E4M3) == want


def test_infer_b_layout_rejects():
    with pytest.raises(ValueError, match="unit stride"):
        _types.infer_b_layout(64, 32, 2, 128, DType.F16)
    with pytest.raises(ValueError, match="layout NN"):
        _types.infer_b_layout(64, 32, 1, 64, DType.F16, "NN")
    assert _types.infer_b_layout(64, 32, 1, 64, DType.F16, "TN") == (Layout.TN, 64)


# ---- prepack index math ----

def test_prepack_perm_is_the_spec():
    # P[q] = (2q, 2q+1, 2q+8, 2q+9): the k pairs thread q of an m16n8k16 B fragment holds.
    assert _prepack.PREPACK_PERM == (0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15)
    assert [_prepack.packed_k(k) for k in (1, 15, 16, 17, 32, 1000)] == [16, 16, 16, 32, 32, 1008]


def _random_b(k, n, seed):
    rng = random.Random(seed)
    return [[rng.randrange(1, 256) for _ in range(n)] for _ in range(k)]


@pytest.mark.parametrize("k,n", [(16, 1), (17, 3), (40, 5), (64, 8), (100, 7)])
def test_prepack_reference_inverse(k, n):
    """Each source byte B(k, n) lands at exactly one place, found from the inverse of P, and the tail is zero."""
    b = _random_b(k, n, k * 131 + n)
    out = _prepack.prepack_reference(b, k, n)
    kp = _prepack.packed_k(k)
    inverse = {src: dst for dst, src in enumerate(_prepack.PREPACK_PERM)}
    for col in range(n):
        assert len(out[col]) == kp
        expect = [0] * kp
        for kk in range(k):
            g, r = divmod(kk, 16)
            expect[g * 16 + inverse[r]] = b[kk][col]
        assert out[col] == expect


@pytest.mark.parametrize("k,n", [(16, 4), (33, 9), (1000, 3)])
def test_prepack_numpy_matches_reference(k, n):
    np = pytest.importorskip("numpy")
    b = _random_b(k, n, 7 * k + n)
    arr = np.array(b, dtype=np.uint8)
    ref = np.array(_prepack.prepack_reference(b, k, n), dtype=np.uint8)
    assert (kiln.prepack_numpy(arr) == ref).all()
    assert (kiln.prepack_numpy(np.ascontiguousarray(arr.T).T) == ref).all()  # TN storage, same B(k, n)


def test_prepack_torch_cpu_matches_reference():
    torch = kilntest.torch
    if torch is None:
        pytest.skip("torch is not installed")
    k, n = 50, 6
    b = _random_b(k, n, 3)
    t = torch.tensor(b, dtype=torch.uint8)
    ref = _prepack.prepack_reference(b, k, n)
    assert _prepack.prepack_torch(t).tolist() == ref
    assert _prepack.prepack_torch(t.t().contiguous().t()).tolist() == ref


# ---- host functions of the library (no device needed) ----

def _lib():
    ok, why = kiln.library_available()
    if not ok:
        pytest.skip(why)
    return kiln.load_library()


@pytest.mark.parametrize("layout", [Layout.TN, Layout.NN])
@pytest.mark.parametrize("k,n", [(16, 1), (17, 5), (100, 9), (1000, 3)])
def test_c_prepack_matches_reference(layout, k, n):
    lib = _lib()
    b = _random_b(k, n, k + 17 * n)
    pad = 3
    if layout == Layout.TN:  # storage [n][k + pad]
        ld = k + pad
        src = bytes(b[kk][col] if kk < k else 0xEE for col in range(n) for kk in range(ld))
    else:  # storage [k][n + pad]
        ld = n + pad
        src = bytes(b[kk][col] if col < n else 0xEE for kk in range(k) for col in range(ld))
    size, kp = ctypes.c_size_t(), ctypes.c_int64()
    assert lib.kiln_prepack_b_size(n, k, ctypes.byref(size), ctypes.byref(kp)) == 0
    assert kp.value == _prepack.packed_k(k) and size.value == n * kp.value
    dst = ctypes.create_string_buffer(size.value)
    src_buf = ctypes.create_string_buffer(src, len(src))
    assert lib.kiln_prepack_b(src_buf, int(layout), n, k, ld, dst, size.value) == 0
    got = [list(dst.raw[col * kp.value:(col + 1) * kp.value]) for col in range(n)]
    assert got == _prepack.prepack_reference(b, k, n)
    small = ctypes.create_string_buffer(size.value - 1)
    assert lib.kiln_prepack_b(src_buf, int(layout), n, k, ld, small, size.value - 1) != 0


def test_status_strings_and_error():
    _lib()
    for status in kiln.Status:
        assert _capi.status_string(status)
    err = kiln.KilnError(kiln.Status.MISALIGNED, "kiln_run", "x")
    assert err.status is kiln.Status.MISALIGNED and "MISALIGNED" in str(err)


def test_query_by_arch_without_device():
    """kiln_set_arch lets a handle answer queries for an arch it is not running on (CPU machines, CI)."""
    lib = _lib()
    h = ctypes.c_void_p()
    assert lib.kiln_create(ctypes.byref(h)) == 0
    try:
        assert lib.kiln_set_arch(h, b"sm90") == 0
        p = kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 4096, 4096, 4096)
        algos = (kiln.kiln_algo * 8)()
        n = ctypes.c_int()
        assert lib.kiln_query(h, ctypes.byref(p), None, algos, 8, ctypes.byref(n)) == 0
        assert n.value >= 1
        name = ctypes.c_char_p()
        assert lib.kiln_algo_name(h, ctypes.byref(algos[0]), ctypes.byref(name)) == 0
        assert name.value.decode().endswith("_SM90")
        if kilntest.table_solutions():
            assert name.value.decode() in kilntest.table_solutions()
    finally:
        lib.kiln_destroy(h)


@pytest.fixture
def cpu_sm90():
    """torch (any version: fp8 as uint8 with a_fp8=/b_fp8=) and the device-less handle selecting for sm90."""
    torch = kilntest.torch
    if torch is None:
        pytest.skip("torch is not installed")
    _lib()
    before = kiln.device_arch(-1)
    kiln.set_arch("sm90", device_index=-1)
    yield torch
    if before != "none":
        kiln.set_arch(before, device_index=-1)


def test_query_cpu_tensors_for_an_arch(cpu_sm90):
    """query()/explain() take CPU tensors and answer for the device-less handle, whose arch set_arch picks."""
    torch = cpu_sm90
    a = torch.ones((256, 512), dtype=torch.uint8)
    w = torch.ones((128, 512), dtype=torch.uint8)
    one = torch.ones((), dtype=torch.float32)
    fp8 = dict(a_fp8="e4m3", b_fp8="e4m3")
    names = kiln.algos(kiln.scaled_mm, a, w.t(), one, one, k=4, **fp8)
    assert names and all(n.endswith("_SM90") for n in names)
    assert names[0] in kiln.explain(kiln.scaled_mm, a, w.t(), one, one, **fp8)
    with pytest.raises(ValueError, match="CUDA"):
        kiln.scaled_mm(a, w.t(), one, one, **fp8)
    with pytest.raises(TypeError, match=r"^scaled_mm: b must be a torch\.Tensor, got NoneType$"):
        kiln.scaled_mm(a, None, one, one, **fp8)


@pytest.mark.parametrize("m,n,k", [(0, 128, 512), (256, 0, 512), (256, 128, 0), (0, 0, 0)])
def test_plan_empty_problem(cpu_sm90, m, n, k):
    """Empty tensors plan into a problem with those sizes, leading dimensions every rule accepts, NULL pointers for
    the empty operands, an output of the right shape; the library offers an algo for it (kiln.h, Empty problems)."""
    torch = cpu_sm90
    if not hasattr(kiln.load_library(), "kiln_last_error"):
        pytest.skip("this libkiln predates empty problems: rebuild it")
    a, w = torch.zeros((m, k), dtype=torch.uint8), torch.zeros((n, k), dtype=torch.uint8)
    bias = torch.zeros(n, dtype=torch.bfloat16)
    call = (kiln.scaled_mm, a, w.t(), torch.ones(m, 1), torch.ones(1, n))
    kw = dict(a_fp8="e4m3", b_fp8="e4m3", bias=bias)
    pl = kiln.plan(*call, **kw)
    p = pl.problem
    assert (p.m, p.n, p.k, p.batch, p.layout) == (m, n, k, 1, Layout.TN)
    assert tuple(pl.out.shape) == (m, n) and pl.out.dtype == torch.bfloat16
    assert (pl.args.a is None) == (m * k == 0) and (pl.args.b is None) == (n * k == 0)
    assert (pl.args.d is None) == (m * n == 0)
    assert len(kiln.query(*call, k=1, **kw)) == 1


def test_plan_empty_gemm_and_mixed(cpu_sm90):
    torch = cpu_sm90
    if not hasattr(kiln.load_library(), "kiln_last_error"):
        pytest.skip("this libkiln predates empty problems: rebuild it")
    a = torch.zeros((65, 0), dtype=torch.float16)
    b = torch.zeros((0, 40), dtype=torch.float16)
    c = torch.zeros((65, 40), dtype=torch.float16)
    pl = kiln.plan(kiln.gemm, a, b, c=c, beta=0.5)
    assert (pl.problem.k, pl.problem.has_c, tuple(pl.out.shape)) == (0, 1, (65, 40))
    assert kiln.query(kiln.gemm, a, b, c=c, beta=0.5, k=1)
    packed = kiln.prepack_b(torch.zeros((32, 0), dtype=torch.uint8).t(), fp8="e4m3")
    assert tuple(packed.data.shape) == (32, 0)
    for lead in ((17,), (2, 0), (0,)):
        x = torch.zeros(lead + (0,), dtype=torch.float16)
        pl = kiln.plan(kiln.mixed_mm, x, packed, scale_b=torch.ones(32), bias=torch.zeros(32, dtype=torch.float16))
        assert tuple(pl.out.shape) == lead + (32,) and pl.problem.b_prepacked == 1
        assert kiln.query(kiln.mixed_mm, x, packed, k=1)
    batch0 = kiln.plan(kiln.gemm, torch.zeros((0, 8, 16), dtype=torch.float16),
                       torch.zeros((0, 16, 4), dtype=torch.float16))
    assert tuple(batch0.out.shape) == (0, 8, 4) and batch0.problem.batch == 0


def test_library_override_env(monkeypatch):
    monkeypatch.setenv("KILN_LIBRARY", "/nonexistent/libkiln.so")
    assert _capi.library_candidates() == ["/nonexistent/libkiln.so"]
    monkeypatch.delenv("KILN_LIBRARY")
    assert _capi.library_candidates()[0] == os.path.join(str(kilntest.REPO), "build", "libkiln.so")


def test_algo_by_name():
    _lib()
    names = sorted(kilntest.table_solutions())
    if not names:
        pytest.skip("no kernel names under generated/")
    split = [n for n in names if "_GSU1_" not in n] or names
    for name in (names[0], split[0]):
        info = kiln.algo_by_name(name)
        assert info.name == name and info.gsu == kilntest.decode(name).gsu and info.workspace_bytes == 0
    with pytest.raises(kiln.KilnError) as err:
        kiln.algo_by_name("Cijk_not_a_kernel")
    assert err.value.status == kiln.Status.INVALID_ALGO


# ---- the plan cache on the GPU (runtime/python/kiln/_fastpath.py; CPU tests: tests/py/test_binding_fast.py) ----

def _whole_way(op, *args, **kwargs):
    """op with an empty plan cache of size 0 in place of the binding's: planned and selected from scratch."""
    from kiln import _fastpath, _ops
    saved, _ops._plans = _ops._plans, _fastpath.PlanCache(size=0)
    try:
        return op(*args, **kwargs)
    finally:
        _ops._plans = saved


def _fast_path_calls():
    torch = kilntest.torch
    e4m3 = kilntest.tdt(DType.E4M3)
    m, n, k = 72, 96, 160
    a, b = kilntest.randn_fp8((m, k), e4m3), kilntest.b_operand(k, n, e4m3, Layout.TN)
    sa, sb = kilntest.positive(()), kilntest.positive((n,))
    bias = torch.randn(n, device="cuda").to(torch.bfloat16)
    x = kilntest.randn_half((m, k), torch.float16)
    w = kilntest.b_operand(k, n, torch.bfloat16, Layout.TN)
    packed = kiln.prepack_b(b)
    return [
        (kiln.scaled_mm, (a, b, sa, sb), dict(bias=bias, activation="relu")),
        (kiln.scaled_mm, (a, b, 0.75, sb), {}),
        (kiln.gemm, (x.to(torch.bfloat16), w), dict(alpha=0.5)),
        (kiln.mixed_mm, (x, packed), dict(scale_b=sb, bias=bias.to(torch.float16))),
    ]


@pytest.mark.gpu
def test_cached_runs_match_the_whole_way():
    """The second call of a key runs its cached plan; its output is bitwise the whole way's."""
    torch = kilntest.torch
    from kiln import _fastpath
    _fastpath.clear()
    for i, (op, args, kwargs) in enumerate(_fast_path_calls()):
        first = op(*args, **kwargs)
        cached = op(*args, **kwargs)
        whole = _whole_way(op, *args, **kwargs)
        assert len(_fastpath.plans) == i + 1, f"{op.__name__}: no plan cached"
        torch.cuda.synchronize()
        assert not kilntest.all_nan(first)
        assert torch.equal(first, cached) and torch.equal(first, whole), f"{op.__name__}: the cached run differs"


@pytest.mark.gpu
def test_cached_runs_follow_the_current_stream():
    """A cached run goes on torch's current stream: behind a sleep on a side stream, its output is not written yet
    when the default stream reads it, and is once the side stream is done."""
    torch = kilntest.torch
    from kiln import _fastpath
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("torch.cuda._sleep is not there")
    op, args, kwargs = _fast_path_calls()[0]
    want = op(*args, **kwargs)
    out = torch.empty_like(want)
    op(*args, out=out, **kwargs)  # the whole way for the out= key; its plan is cached
    plans = len(_fastpath.plans)
    kilntest.poison_(out)
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)  # ~50 ms
        op(*args, out=out, **kwargs)    # the cached plan
    early = out.clone()                 # on the default stream, which does not wait for `side`
    torch.cuda.synchronize()
    assert len(_fastpath.plans) == plans, "the call on the side stream did not run the cached plan"
    assert kilntest.all_nan(early), "the cached run did not wait for the side stream's sleep"
    assert torch.equal(out, want)
