"""torch.ops.kiln.scaled_mm / mixed_mm / gemm, the torch.library operators of runtime/python/kiln/_library.py: each
gives what the kiln function it wraps gives (the same kernel, so the same bits) and passes the correctness gate,
passes torch.library.opcheck (schema, fake kernel against the real one, AOT dispatch with dynamic shapes), and a
function or module calling them compiles with torch.compile(fullgraph=True) to eager's result, for several M."""
from __future__ import annotations

import importlib

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

SCALED = (DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, False)
MIXED = (DType.F16, DType.E4M3, DType.F16, Layout.TN, True)
GEMM = (DType.BF16, DType.BF16, DType.BF16, Layout.TN, False)
COMBO = {"scaled_mm": SCALED, "mixed_mm": MIXED, "gemm": GEMM}
OPS = sorted(COMBO)


class Case:
    """One call of an op: the kiln function's arguments, the operator's, the float64 reference, and for mixed_mm the
    fp8 weights [N, K] that were packed (w)."""

    def __init__(self, name, fn_args, fn_kwargs, op_args, op_kwargs, ref, tol, w=None):
        self.name, self.ref, self.tol, self.w = name, ref, tol, w
        self.fn_args, self.fn_kwargs, self.op_args, self.op_kwargs = fn_args, fn_kwargs, op_args, op_kwargs

    def run_fn(self):
        return getattr(kiln, self.name)(*self.fn_args, **self.fn_kwargs)

    def run_op(self):
        return getattr(torch.ops.kiln, self.name)(*self.op_args, **self.op_kwargs)


def scaled_case(m=100, n=72, k=256, batch=None, raw_bytes=False):
    """fp8 A [M, K] and B(k, n) as a transposed [N, K] (contiguous storage: opcheck clones keep the strides), vector
    scales, a bf16 bias. raw_bytes: the fp8 operands as torch.uint8 with a_fp8=/b_fp8= (what opcheck's schema check
    can compare: it has no float8 comparison)."""
    a = kt.fp8_values(kt.mk(batch, m, k), torch.float8_e4m3fn)
    b = kt.fp8_values(kt.mk(batch, n, k), torch.float8_e4m3fn).transpose(-1, -2)
    sa, sb = kt.positive((m,)), kt.positive((n,))
    bias = torch.randn(n, device="cuda").to(torch.bfloat16)
    ref = kt.reference(a, b, sa=sa, sb=sb, bias=bias)
    kw = dict(bias=bias, out_dtype=torch.bfloat16)
    if raw_bytes:
        a, b = a.view(torch.uint8), b.view(torch.uint8)
        kw.update(a_fp8="e4m3", b_fp8="e4m3")
    return Case("scaled_mm", (a, b, sa, sb), kw, (a, b, sa, sb), kw, ref, kt.TOL_FP8)


def mixed_case(m=100, n=72, k=256, lead=()):
    """f16 A [..., M, K], fp8 weights [N, K] prepacked, a per-channel scale and an f16 bias."""
    a = torch.randn(lead + (m, k), device="cuda").to(torch.float16)
    w = kt.fp8_values((n, k), torch.float8_e4m3fn)
    packed = kiln.prepack_b(w.t())
    sb = kt.positive((n,))
    bias = torch.randn(n, device="cuda").to(torch.float16)
    ref = kt.reference(a, w.t(), sb=sb, bias=bias)
    kw = dict(scale_b=sb, bias=bias)
    return Case("mixed_mm", (a, packed), kw, (a, packed.data, packed.k, packed.fp8), kw, ref, kt.TOL_FP8, w)


def gemm_case(m=100, n=72, k=256, batch=None):
    """bf16 A, B(k, n) as a transposed [N, K], C with alpha/beta, a relu."""
    a = torch.randn(kt.mk(batch, m, k), device="cuda").to(torch.bfloat16)
    b = torch.randn(kt.mk(batch, n, k), device="cuda").to(torch.bfloat16).transpose(-1, -2)
    c = torch.randn(kt.mk(batch, m, n), device="cuda").to(torch.bfloat16)
    kw = dict(c=c, alpha=0.5, beta=-1.5, activation="relu")
    ref = kt.reference(a, b, alpha=0.5, beta=-1.5, c=c, act="relu")
    return Case("gemm", (a, b), kw, (a, b), kw, ref, kt.TOL_HALF)


CASES = {"scaled_mm": scaled_case, "mixed_mm": mixed_case, "gemm": gemm_case}


@pytest.fixture(scope="module", autouse=True)
def ops():
    return kiln.ops  # defines the operators (import kiln already did, with torch imported first)


def test_registration_is_idempotent():
    ns = kiln.ops
    assert ns is torch.ops.kiln and kiln.register_torch_ops() is ns
    defs = dict(kiln._library._defs)
    kiln.register_torch_ops()
    assert kiln._library._defs == defs
    importlib.reload(kiln._library)  # a second copy of the module finds the operators defined and defines nothing
    assert kiln._library.register() is ns and kiln._library.registered()
    for name in OPS:
        op = getattr(torch.ops.kiln, name).default
        if hasattr(torch.Tag, "needs_exact_strides"):
            assert torch.Tag.needs_exact_strides in op.tags, name


@pytest.mark.parametrize("name", OPS)
def test_op_equals_function(name):
    kt.require_combo(COMBO[name])
    for shape in ((100, 72, 256), (1, 136, 64), (257, 33, 1000)):
        case = CASES[name](*shape)
        got = case.run_op()
        want = case.run_fn()
        assert got.shape == want.shape and got.dtype == want.dtype and got.stride() == want.stride()
        assert torch.equal(got, want), f"{name} {shape}: the operator and kiln.{name} differ"
        kt.check(got, case.ref, case.tol, f"torch.ops.kiln.{name} {shape}")


def test_op_batched_and_leading_dims():
    kt.require_combo(SCALED)
    for case in (scaled_case(64, 48, 128, batch=3), gemm_case(64, 48, 128, batch=2), mixed_case(5, 48, 128, (2, 3))):
        kt.require_combo(COMBO[case.name])
        got = case.run_op()
        assert torch.equal(got, case.run_fn())
        kt.check(got, case.ref, case.tol, f"torch.ops.kiln.{case.name} {tuple(got.shape)}")


def _opcheck(case, **kw):
    op = getattr(torch.ops.kiln, case.name).default
    torch.library.opcheck(op, case.op_args, case.op_kwargs, **kw)


@pytest.mark.parametrize("name", OPS)
def test_opcheck(name):
    """Schema (no mutation, no aliasing), the fake kernel against the real one, and AOT dispatch with dynamic
    shapes. scaled_mm takes its fp8 operands as raw bytes here (the schema check compares inputs before and after,
    which torch cannot do for float8 tensors); the float8 dtypes get the fake-kernel check alone."""
    kt.require_combo(COMBO[name])
    if name == "scaled_mm":
        _opcheck(scaled_case(raw_bytes=True))
        _opcheck(scaled_case(), test_utils=("test_faketensor",))
        _opcheck(scaled_case(32, 24, 64, batch=2, raw_bytes=True))
    elif name == "mixed_mm":
        _opcheck(mixed_case())
        _opcheck(mixed_case(3, 40, 96, lead=(2,)))
    else:
        _opcheck(gemm_case())
        _opcheck(gemm_case(32, 24, 64, batch=2))


def test_fake_kernels_check_shapes():
    """The fake kernels refuse mismatched operands while tracing, before anything runs."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a = torch.empty(8, 64, dtype=torch.float16, device="cuda")
        packed = torch.empty(16, 64, dtype=torch.uint8, device="cuda")
        assert torch.ops.kiln.mixed_mm(a, packed, 64, "e4m3").shape == (8, 16)
        with pytest.raises(Exception, match="K"):
            torch.ops.kiln.mixed_mm(a, packed, 48, "e4m3")
        b = torch.empty(32, 24, dtype=torch.float16, device="cuda")
        with pytest.raises(Exception):
            torch.ops.kiln.gemm(a, b)
        out = torch.ops.kiln.gemm(a, torch.empty(64, 24, dtype=torch.float16, device="cuda"),
                                  out_dtype=torch.float32)
        assert out.shape == (8, 24) and out.dtype == torch.float32


def test_backward_raises():
    kt.require_combo(GEMM)
    a = torch.randn(16, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(32, 64, device="cuda", dtype=torch.bfloat16).t()
    with pytest.raises(RuntimeError):  # no autograd formula: the forward or the backward says so
        y = torch.ops.kiln.gemm(a, b)
        y.float().sum().backward()


# ---- torch.compile(fullgraph=True) ----

def _fresh_compile(fn, **kw):
    torch._dynamo.reset()
    return torch.compile(fn, fullgraph=True, **kw)


@pytest.mark.parametrize("name", OPS)
def test_compile_fullgraph_op(name):
    """A function around the operator, with torch ops before and after it for inductor to fuse, compiles in one
    graph; the operator's output is eager's to the bit, what inductor computes around it agrees to rounding."""
    kt.require_combo(COMBO[name])
    case = CASES[name]()
    op = getattr(torch.ops.kiln, name)

    def fn(*args, **kwargs):
        y = op(*args, **kwargs)
        return y, torch.nn.functional.silu(y.float() * 0.5).sum(-1)

    compiled = _fresh_compile(fn)
    got, got_red = compiled(*case.op_args, **case.op_kwargs)
    want, want_red = fn(*case.op_args, **case.op_kwargs)
    assert torch.equal(got, want)
    kt.check(got_red, want_red.double(), kt.TOL_HALF, f"compiled {name} epilogue")


def test_compile_fullgraph_model_dynamic_m():
    """A small model: mixed_mm (fp8 weights) -> silu -> gemm -> + scaled_mm of the same rows in fp8, compiled with
    dynamic shapes and called for several M: one graph, eager's result each time."""
    for combo in (SCALED, MIXED, (DType.F16, DType.F16, DType.F16, Layout.TN, False)):
        kt.require_combo(combo)
    k, h, n = 256, 192, 128

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            w1 = kt.fp8_values((h, k), torch.float8_e4m3fn)
            packed = kiln.prepack_b(w1.t())
            self.register_buffer("w1", packed.data)
            self.register_buffer("s1", kt.positive((h,)) * 0.05)
            self.register_buffer("w2", (torch.randn(n, h, device="cuda") * 0.05).to(torch.float16))
            self.register_buffer("w3", kt.fp8_values((n, k), torch.float8_e4m3fn))
            self.register_buffer("s3", kt.positive((n,)) * 0.01)

        def forward(self, x):
            hid = torch.ops.kiln.mixed_mm(x, self.w1, k, "e4m3", scale_b=self.s1)
            hid = torch.nn.functional.silu(hid)
            y = torch.ops.kiln.gemm(hid, self.w2.t())
            x8 = x.clamp(-448, 448).to(torch.float8_e4m3fn)
            one = torch.ones(1, device=x.device)
            z = torch.ops.kiln.scaled_mm(x8, self.w3.t(), one, self.s3, out_dtype=torch.float16)
            return y + z

    model = Model()
    compiled = _fresh_compile(model, dynamic=True)
    for m in (1, 7, 64, 129):
        x = torch.randn(m, k, device="cuda").to(torch.float16)
        got, want = compiled(x), model(x)
        assert got.shape == (m, n) and got.dtype == torch.float16
        kt.check(got, want.double(), kt.TOL_HALF, f"compiled model M={m}")
