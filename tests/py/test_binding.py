"""The Python binding without torch and without a GPU: values are checked before they reach ctypes, non-tensors and
a missing torch give clear errors, and the ctypes layer answers queries and explains for an arch set by name.

The tests that call into libkiln load $KILN_LIBRARY, else $KILN_BUILD_DIR/libkiln.so (test.sh), else a
build*/libkiln.so of the repository, and skip (saying why) when there is none.
"""
from __future__ import annotations

import ctypes
import subprocess
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "runtime" / "python"))

import kiln  # noqa: E402  (needs neither torch nor the library)
from kiln import DType, Layout, _capi, _handle, _tensors, _types  # noqa: E402
from binding_lib import find_library  # noqa: E402

I64_MAX = (1 << 63) - 1


# ---- values are checked before ctypes sees them (no library needed) ----

@pytest.mark.parametrize("value", [2**64 + 64, 2**63, -(2**63) - 1])
def test_int64_field_out_of_range(value):
    p = kiln.kiln_problem()
    with pytest.raises(ValueError, match=rf"kiln_problem\.m = {value}\b"):
        p.m = value
    assert p.m == 0


def test_int64_field_bounds_and_kinds():
    p = kiln.kiln_problem(m=I64_MAX, n=-(2**63))
    assert (p.m, p.n) == (I64_MAX, -(2**63))

    class Index:  # numpy integers and the like
        def __index__(self):
            return 77
    p.k = Index()
    assert p.k == 77
    for bad in (1.5, 2.0, "3", None, b"4"):
        with pytest.raises(TypeError, match="kiln_problem.lda must be an integer"):
            p.lda = bad
    with pytest.raises(ValueError, match="kiln_problem.batch"):
        kiln.kiln_problem(batch=2**64 + 1)  # constructor keywords go through the same check


def test_enum_and_flag_fields():
    p = kiln.kiln_problem()
    p.a_type = DType.E5M2
    p.activation = 3
    assert (p.a_type, p.activation) == (DType.E5M2, kiln.Activation.SILU)
    for field, bad in (("a_type", 7), ("a_type", -1), ("layout", 2), ("scale_b", 4), ("activation", 2**32)):
        with pytest.raises(ValueError, match=rf"kiln_problem\.{field} = {bad} is not a"):
            setattr(p, field, bad)
    with pytest.raises(TypeError, match="must be a DType"):
        p.b_type = Layout.NN
    p.has_bias = True
    assert p.has_bias == 1
    for bad in (2, -1, 2**64):
        with pytest.raises(ValueError, match="kiln_problem.has_c"):
            p.has_c = bad


def test_misspelt_field():
    with pytest.raises(AttributeError, match="no field 'lda_'"):
        kiln.kiln_problem().lda_ = 4
    with pytest.raises(AttributeError, match="no field"):
        kiln.make_problem(DType.F16, DType.F16, DType.F16, Layout.TN, 8, 8, 8, ldz=8)


def test_args_and_algo_fields():
    args = kiln.kiln_args(a=0x1000, d=None, alpha=2.5, beta=float("inf"))
    assert (args.a, args.d, args.alpha, args.beta) == (0x1000, None, 2.5, float("inf"))
    with pytest.raises(ValueError, match="kiln_args.alpha"):
        args.alpha = 1e300  # would be stored as inf
    with pytest.raises(TypeError, match="kiln_args.beta must be a real number"):
        args.beta = "0.5"
    for bad in (-1, 2**64):
        with pytest.raises(ValueError, match="kiln_args.b"):
            args.b = bad
    algo = kiln.kiln_algo(name_hash=2**64 - 1, gsu=2**32 - 1)
    assert algo.name_hash == 2**64 - 1
    with pytest.raises(ValueError, match="kiln_algo.gsu"):
        algo.gsu = 2**32
    with pytest.raises(ValueError, match="kiln_algo.workspace_bytes"):
        algo.workspace_bytes = -1


def test_make_problem_checks_before_the_library(monkeypatch):
    def no_library(*_a, **_k):
        raise AssertionError("the library was asked about a value the binding should have refused")
    monkeypatch.setattr(_handle, "load_library", no_library)
    with pytest.raises(ValueError, match=r"make_problem: m = 18446744073709551680 does not fit"):
        kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 2**64 + 64, 64, 64)
    with pytest.raises(ValueError, match="make_problem: k ="):
        kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 64, 64, -(2**70))
    with pytest.raises(TypeError, match="make_problem: n must be an integer"):
        kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 64, 64.0, 64)
    with pytest.raises(ValueError, match="make_problem: d = 9 is not a DType"):
        kiln.make_problem(DType.E4M3, DType.E4M3, 9, Layout.TN, 64, 64, 64)
    with pytest.raises(ValueError, match="make_problem: lda = "):
        kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 64, 64, 64, lda=2**64)
    with pytest.raises(ValueError, match="make_problem: has_bias = 5"):
        kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 64, 64, 64, has_bias=5)


def test_arch_names_and_counts_checked(monkeypatch):
    monkeypatch.setattr(_handle, "handle", lambda *_a: pytest.fail("set_arch reached the library"))
    with pytest.raises(TypeError, match="arch must be a str"):
        kiln.set_arch(90)
    for bad in ("", "sm\0"):
        with pytest.raises(ValueError, match="arch"):
            kiln.set_arch(bad)
    with pytest.raises(ValueError, match="device_index"):
        kiln.set_arch("sm90", device_index=2**40)


def test_spelling_arguments_are_type_checked():
    with pytest.raises(TypeError, match="activation="):
        _types.activation_from_name(["relu"])
    with pytest.raises(TypeError, match="layout="):
        _types.layout_from_name(1)
    with pytest.raises(TypeError, match="fp8="):
        _types.dtype_from_name("uint8", 3)


@pytest.mark.parametrize("k,n,layout,want", [
    (0, 32, None, (Layout.TN, 16)),   # no K: TN, any ld >= 0 (one that keeps 16-byte alignment)
    (64, 0, None, (Layout.TN, 64)),
    (0, 0, None, (Layout.TN, 16)),
    (0, 40, "NN", (Layout.NN, 48)),  # a forced layout is kept
])
def test_empty_b_layout(k, n, layout, want):
    assert _types.infer_b_layout(k, n, 1, 1, DType.E4M3, layout) == want


def test_kiln_error_text():
    err = kiln.KilnError(kiln.Status.INVALID_VALUE, "kiln_check_problem", "problem", "lda = 4: lda must be >= k = 8",
                         "candidates: none\nstatus: invalid\n")
    assert err.status is kiln.Status.INVALID_VALUE and err.text.startswith("lda = 4")
    text = str(err)
    assert "INVALID_VALUE" in text and "lda = 4: lda must be >= k = 8" in text and text.endswith("status: invalid")
    assert err.explanation.startswith("candidates")


def test_last_error_without_the_symbol(monkeypatch):
    """A library built before kiln_last_error: the binding works and KilnError has no text."""
    fake = types.SimpleNamespace(kiln_status_string=lambda status: b"meaning")
    monkeypatch.setattr(_capi, "_lib", fake)
    assert kiln.last_error() == ""
    with pytest.raises(kiln.KilnError) as err:
        _capi.check(kiln.Status.NO_SOLUTION, "kiln_query")
    assert err.value.text == "" and str(err.value) == "kiln_query: KILN_STATUS_NO_SOLUTION (meaning)"


# ---- torch is optional: clear errors without it, clear TypeErrors for what is not a tensor ----

@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError


@pytest.mark.parametrize("call", [
    lambda: kiln.prepack_b(None),
    lambda: kiln.scaled_mm(None, None, 1.0, 1.0),
    lambda: kiln.gemm(None, None),
    lambda: kiln.mixed_mm(None, None),
    lambda: kiln.query(kiln.gemm, None, None),
    lambda: kiln.explain("scaled_mm", None, None, 1.0, 1.0),
    lambda: kiln.torch_dtype(DType.F16),
    lambda: kiln.kiln_dtype(None),
], ids=["prepack_b", "scaled_mm", "gemm", "mixed_mm", "query", "explain", "torch_dtype", "kiln_dtype"])
def test_torch_required(no_torch, call):
    with pytest.raises(kiln.TorchRequiredError, match="needs PyTorch") as err:
        call()
    assert isinstance(err.value, ImportError) and err.value.name == "torch"
    assert "make_problem" in str(err.value)  # says what works without torch


def test_no_torch_still_has_the_ctypes_layer(no_torch):
    assert _handle._current_device() == -1
    p = kiln.kiln_problem(m=5)
    assert p.m == 5


@pytest.fixture
def fake_torch(monkeypatch):
    """The least of torch the type checks look at: Tensor and dtype classes."""
    mod = types.ModuleType("torch")
    mod.Tensor = type("Tensor", (), {})
    mod.dtype = type("dtype", (), {})
    monkeypatch.setitem(sys.modules, "torch", mod)
    return mod


def test_non_tensor_arguments(fake_torch):
    t = fake_torch.Tensor()
    with pytest.raises(TypeError, match=r"^scaled_mm: b must be a torch\.Tensor, got NoneType$"):
        kiln.scaled_mm(t, None, 1.0, 1.0)
    with pytest.raises(TypeError, match=r"^scaled_mm: a must be a torch\.Tensor, got list$"):
        kiln.scaled_mm([[1]], t, 1.0, 1.0)
    with pytest.raises(TypeError, match=r"^gemm: a must be a torch\.Tensor, got int$"):
        kiln.gemm(3, t)
    with pytest.raises(TypeError, match="gemm: alpha must be a real number"):
        kiln.gemm(t, t, alpha="2")
    with pytest.raises(TypeError, match=r"^prepack_b: b must be a torch\.Tensor, got str$"):
        kiln.prepack_b("weights")
    with pytest.raises(TypeError, match="mixed_mm: packed_b must be a kiln.PackedB"):
        kiln.mixed_mm(t, t)
    with pytest.raises(TypeError, match="out_dtype: want a torch.Tensor or torch.dtype, got str"):
        kiln.kiln_dtype("bf16", what="out_dtype")
    with pytest.raises(TypeError, match="scaled_mm: scale_a must be None, a number or a float32 torch.Tensor"):
        _tensors.scale("1.0", 4, None, "scale_a", "scaled_mm")
    with pytest.raises(TypeError, match=r"gemm: bias must be a torch\.Tensor or None, got float"):
        _tensors.bias_of(1.0, 4, None, "gemm")
    with pytest.raises(ValueError, match="op must be one of"):
        kiln.plan(["gemm"])


def test_binding_hash_matches_the_generator():
    """algo_by_name hashes kernel names as the generator names them (model.fnv1a64 stays the generator's)."""
    sys.path.insert(0, str(REPO / "generator"))
    from kilngen import model
    for name in ("", "Cijk_Alik_Bljk_F8F8B_MT128x128x128_WGMMA_SM90", "x" * 300):
        assert _handle._fnv1a64(name) == model.fnv1a64(name)


# ---- against a built libkiln (skips without one) ----

LIBRARY = find_library()


@pytest.fixture(scope="module", autouse=True)
def _load_the_library_first():
    """Load the chosen library before any test can load another one through the binding's own search."""
    if LIBRARY is not None:
        try:
            _capi.load_library(LIBRARY)
        except OSError:
            pass  # the lib fixture says why


@pytest.fixture(scope="module")
def lib():
    if LIBRARY is None:
        pytest.skip("no libkiln.so: set KILN_LIBRARY or build one (cmake --build build-ci --target kiln)")
    try:
        return _capi.load_library(LIBRARY)
    except OSError as exc:
        pytest.skip(str(exc))


@pytest.fixture
def fresh(lib):
    """Handles, set_arch choices and the algo cache of earlier tests forgotten."""
    kiln.close()
    yield lib
    kiln.close()


@pytest.fixture
def hardened(lib):
    """The runtime of issue 9's hardening (kiln_last_error, arch check, empty problems)."""
    if not hasattr(lib, "kiln_last_error"):
        pytest.skip("this libkiln predates kiln_last_error (the hardened runtime): rebuild it")
    return lib


NO_DEVICE = -1  # the device-less handle


def _fp8_problem(m=4096, n=4096, k=4096, **fields):
    return kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, m, n, k, **fields)


def test_make_problem_defaults(lib):
    p = _fp8_problem(256, 128, 64)
    assert (p.m, p.n, p.k, p.batch, p.lda, p.ldb, p.ldd) == (256, 128, 64, 1, 64, 64, 128)
    assert "a_type=E4M3" in repr(p)


def test_set_arch_answers_without_a_device(fresh):
    kiln.set_arch("sm90", device_index=NO_DEVICE)
    assert kiln.device_arch(NO_DEVICE) == "sm90"
    infos = kiln.query_problem(_fp8_problem(), k=4, device_index=NO_DEVICE)
    assert infos and all(i.name.endswith("_SM90") for i in infos)
    text = kiln.explain_problem(_fp8_problem(), device_index=NO_DEVICE)
    assert infos[0].name in text


def test_set_arch_survives_handle_creation_order(fresh):
    """set_arch before any other call creates the handle and sets it; later calls use the same handle."""
    kiln.set_arch("sm90", device_index=NO_DEVICE)
    h = kiln.handle(NO_DEVICE)
    out = ctypes.c_char_p()
    assert fresh.kiln_device_arch(h, ctypes.byref(out)) == 0 and out.value == b"sm90"


def test_explain_failure_keeps_the_text(fresh):
    if kiln.device_arch(NO_DEVICE) != "none":
        pytest.skip("this machine has a device: the device-less handle is bound to it")
    with pytest.raises(kiln.KilnError) as err:
        kiln.explain_problem(_fp8_problem(), device_index=NO_DEVICE)
    assert err.value.explanation, "the explanation text was lost"
    assert err.value.explanation.rstrip().splitlines()[-1] in str(err.value)


def test_explain_invalid_problem_keeps_the_text(fresh):
    kiln.set_arch("sm90", device_index=NO_DEVICE)
    p = kiln.make_problem(DType.F16, DType.F16, DType.F16, Layout.NN, 64, 64, 64, ldb=32)  # NN needs ldb >= n
    with pytest.raises(kiln.KilnError) as err:
        kiln.explain_problem(p, device_index=NO_DEVICE)
    assert err.value.status == kiln.Status.INVALID_VALUE
    assert "kiln_check_problem" in err.value.explanation


def test_error_text_names_the_field(fresh, hardened):
    kiln.set_arch("sm90", device_index=NO_DEVICE)
    p = kiln.make_problem(DType.F16, DType.F16, DType.F16, Layout.NN, 64, 64, 64, ldb=32)
    with pytest.raises(kiln.KilnError) as err:
        kiln.query_problem(p, device_index=NO_DEVICE)
    assert err.value.status == kiln.Status.INVALID_VALUE
    assert "ldb" in err.value.text and err.value.text in str(err.value)
    with pytest.raises(kiln.KilnError) as err:
        kiln.make_problem(DType.F16, DType.F16, DType.F16, Layout.NN, -5, 64, 64)
    assert err.value.status == kiln.Status.INVALID_VALUE and "m" in err.value.text


def test_unknown_arch(fresh, hardened):
    with pytest.raises(kiln.KilnError) as err:
        kiln.set_arch("sm91", device_index=NO_DEVICE)
    assert err.value.status == kiln.Status.INVALID_VALUE


@pytest.mark.parametrize("m,n,k", [(0, 64, 64), (64, 0, 64), (64, 64, 0), (0, 0, 0)])
def test_empty_problems_pass_down(fresh, hardened, m, n, k):
    kiln.set_arch("sm90", device_index=NO_DEVICE)
    p = kiln.make_problem(DType.F16, DType.F16, DType.F16, Layout.TN, m, n, k)
    assert (p.m, p.n, p.k) == (m, n, k)
    assert fresh.kiln_check_problem(kiln.handle(NO_DEVICE), ctypes.byref(p)) == 0


def test_query_count_checked(fresh):
    with pytest.raises(ValueError, match="k = 4294967296"):
        kiln.query_problem(_fp8_problem(), k=2**32, device_index=NO_DEVICE)
    with pytest.raises(TypeError, match="kiln_problem"):
        kiln.query_problem("p", device_index=NO_DEVICE)


# ---- kiln-gen explain goes through the binding ----

def _kiln_gen(*argv):
    return subprocess.run([sys.executable, str(REPO / "generator" / "kiln-gen"), *argv], capture_output=True,
                          text=True, timeout=120)


def test_cli_explain(lib):
    path = _capi.library_path()
    r = _kiln_gen("explain", "--lib", path, "--arch", "sm90", "--a", "e4m3", "--b", "e4m3", "--d", "bf16",
                  "4096", "4096", "4096")
    assert r.returncode == 0, r.stderr
    assert "_SM90" in r.stdout
    r = _kiln_gen("explain", "--lib", path, "--arch", "sm90", "--a", "e4m3", "--b", "e4m3", "--d", "bf16",
                  str(2**64 + 64), "4096", "4096")
    assert r.returncode == 2 and "m = 18446744073709551680" in r.stderr and "Traceback" not in r.stderr
    r = _kiln_gen("explain", "--lib", path, "--arch", "sm90", "--a", "e4m3", "--b", "e4m3", "--d", "bf16",
                  "--layout", "NN", "64", "64", "64")
    assert r.returncode == 1 and "KILN_STATUS_" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout.strip(), "the explanation of the failure was not printed"


def test_cli_explain_without_library(tmp_path):
    r = _kiln_gen("explain", "--lib", str(tmp_path / "libkiln.so"), "--arch", "sm90", "--a", "e4m3", "--b", "e4m3",
                  "--d", "bf16", "64", "64", "64")
    assert r.returncode == 2 and "not found" in r.stderr and "Traceback" not in r.stderr
