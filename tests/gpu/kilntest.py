"""Shared helpers of the GPU suite: inputs, poisoned outputs, the float64 reference, the correctness gate, and what
the library's own solution table claims (read from generated/ with the generator's name decoder).

Correctness gate (DESIGN.md): relative L2 ||out - ref|| / ||ref|| against a float64 reference computed from the
same quantized inputs, <= 1e-2 with fp8 inputs and <= 2e-3 with f16/bf16 inputs, no NaN/Inf, every element
written. The one addition: a result correctly rounded to the output type differs from the exact reference by that
rounding alone, about 1.5e-3 for bf16 outputs (2^-8 per element at worst, so a 1-element bf16 output can need
3.9e-3), which would make the f16/bf16 gate a coin toss for bf16 outputs. The tolerance is therefore
gate + ||round_to_d(ref) - ref|| / ||ref||: the rounding the output type forces, measured, plus the gate.
"""
from __future__ import annotations

import functools
import os
import pathlib
import re
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
for _p in (REPO / "runtime" / "python", REPO / "generator"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import kiln  # noqa: E402  (needs neither torch nor the library to import)
from kiln import DType, Layout  # noqa: E402

try:
    import torch
except ImportError:  # the suite then skips; the pure tests still run
    torch = None

TOL_FP8 = 1e-2
TOL_HALF = 2e-3
TOPK = int(os.environ.get("KILN_TEST_TOPK", "8"))
SWEEP_K = max(TOPK, 256)  # the kernel sweep asks for every candidate, so that every table kernel runs
GENERATED = pathlib.Path(os.environ.get("KILN_GENERATED_DIR", REPO / "generated"))

# Kernel names the tests ran, for the coverage check and the run record (conftest).
EXERCISED = set()


@functools.lru_cache(maxsize=None)
def gpu_unavailable_reason():
    """None when torch, a CUDA device and libkiln (bound to that device) are all there; else why not."""
    if torch is None:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    ok, why = kiln.library_available()
    if not ok:
        return why
    try:
        arch = kiln.device_arch()
    except kiln.KilnError as exc:
        return f"kiln cannot bind the device: {exc}"
    if arch == "none":
        return "kiln found no device"
    return None


@functools.lru_cache(maxsize=None)
def arch():
    return kiln.device_arch()


def tdt(dt: DType):
    return kiln.torch_dtype(dt)


def dt(name: str) -> DType:
    return DType[name.upper()]


# ---- what the library's solution table claims ----

@functools.lru_cache(maxsize=None)
def table_solutions():
    """{kernel name: model.Solution} of every kernel named under generated/ (file names and table strings)."""
    try:
        from kilngen import model
    except ImportError:
        return {}
    names = set()
    if GENERATED.is_dir():
        for path in sorted(GENERATED.rglob("*")):
            if not path.is_file():
                continue
            names.add(path.name.split(".")[0])
            if path.suffix in (".c", ".h", ".cmake"):
                names.update(re.findall(r"Cijk_\w+", path.read_text(errors="replace")))
    out = {}
    for name in sorted(names):
        try:
            out[name] = model.decode(name)
        except ValueError:  # split-K reduce kernels and anything else that is not a GEMM kernel name
            continue
    return out


def combo_of(sol) -> tuple:
    p = sol.problem
    return (DType[p.a.name], DType[p.b.name], DType[p.d.name], Layout[p.layout.name], bool(p.b_prepacked))


def claimed_combos(arch_name: str) -> set:
    return {combo_of(s) for s in table_solutions().values() if s.arch.value == arch_name}


def claimed_names(arch_name: str) -> set:
    return {n for n, s in table_solutions().items() if s.arch.value == arch_name}


def claimed_names_of(arch_name: str, combo) -> set:
    return {n for n, s in table_solutions().items() if s.arch.value == arch_name and combo_of(s) == combo}


def all_claimed_combos() -> list:
    """Every (a, b, d, layout, prepacked) any arch's table claims, sorted: parametrization for the kernel sweep."""
    return sorted({combo_of(s) for s in table_solutions().values()}, key=lambda c: tuple(map(int, c)))


def name_of(v) -> str:
    """Enum members by name in test labels (an IntEnum formats as its number)."""
    return getattr(v, "name", str(v))


def combo_id(combo) -> str:
    a, b, d, lay, packed = combo
    return f"{a.name}x{b.name}-{d.name}-{lay.name}" + ("-packed" if packed else "")


def decode(name: str):
    """model.Solution of a kernel name (the generator's decoder)."""
    from kilngen import model
    return table_solutions().get(name) or model.decode(name)


def require_combo(combo, m=256, n=256, k=256):
    """Skip when the library does not do this type combination; fail when its own table claims it but the query
    finds nothing."""
    a, b, d, lay, packed = combo
    p = kiln.make_problem(a, b, d, lay, m, n, k, b_prepacked=int(packed))
    try:
        found = kiln.query_problem(p, 1)
    except kiln.KilnError as exc:
        found, err = [], exc
    else:
        err = None
    if found:
        return
    if combo in claimed_combos(arch()):
        pytest.fail(f"{combo_id(combo)}: the solution table lists kernels for {arch()} but kiln_query finds none "
                    f"({err})")
    pytest.skip(f"{combo_id(combo)}: not in kiln's solution table for {arch()} ({err})")


# ---- inputs and outputs ----

def _ld(cols: int, dtype) -> int:
    elem = torch.empty((), dtype=dtype).element_size()
    step = max(1, 16 // elem)
    return (cols + step - 1) // step * step


# Byte that is NaN in each 1-byte format: 0x7F in OCP e4m3fn/e5m2, 0x80 (the only NaN) in the FNUZ formats.
POISON_BYTE = {"float8_e4m3fn": 0x7F, "float8_e5m2": 0x7F, "float8_e4m3fnuz": 0x80, "float8_e5m2fnuz": 0x80}


def poison_(t):
    """Fill with NaN (in the tensor's own format); returns t."""
    if t.element_size() == 1:
        t.view(torch.uint8).fill_(POISON_BYTE[str(t.dtype).replace("torch.", "")])
    else:
        t.fill_(float("nan"))
    return t


def storage(rows, cols, dtype, batch=None, extra_rows=0):
    """A [batch?, rows, cols] view into NaN-poisoned storage whose rows are padded to 16 bytes (and batches by
    extra_rows rows), so leading dimensions and batch strides are 16-byte aligned while M, N, K stay odd. The
    padding stays NaN: a kernel that uses an element past K (or writes past N) shows up as NaN."""
    ld = _ld(cols, dtype)
    shape = ((batch,) if batch else ()) + (rows + extra_rows, ld)
    base = poison_(torch.empty(shape, dtype=dtype, device="cuda"))
    return base[..., :rows, :cols]


def randn_half(shape, dtype, scale=1.0, **kw):
    """f16/bf16 (or f32) values from randn, in a padded-storage view."""
    batch = shape[0] if len(shape) == 3 else None
    view = storage(shape[-2], shape[-1], dtype, batch=batch, **kw)
    view.copy_(torch.randn(view.shape, device="cuda") * scale)
    return view


def fp8_values(shape, dtype, scale=1.0):
    """Contiguous fp8 tensor from randn * scale with no zero codes (a zero would hide an unread element)."""
    q = (torch.randn(shape, device="cuda") * scale).to(dtype)
    u8 = q.view(torch.uint8)
    zero = (u8 & 0x7F) == 0
    one = torch.ones(1, device="cuda").to(dtype).view(torch.uint8)
    return torch.where(zero, one, u8).view(dtype)


def randn_fp8(shape, dtype, scale=1.0, **kw):
    batch = shape[0] if len(shape) == 3 else None
    view = storage(shape[-2], shape[-1], dtype, batch=batch, **kw)
    view.copy_(fp8_values(view.shape, dtype, scale))
    return view


def b_operand(k, n, dtype, layout: Layout, batch=None, extra_rows=0):
    """B(k, n) as a [batch?, K, N] view: TN from padded [N, K] storage (transposed view), NN from padded [K, N]."""
    make = randn_fp8 if torch.empty((), dtype=dtype).element_size() == 1 else randn_half
    if layout == Layout.TN:
        shape = ((batch,) if batch else ()) + (n, k)
        return make(shape, dtype, extra_rows=extra_rows).transpose(-1, -2)
    shape = ((batch,) if batch else ()) + (k, n)
    return make(shape, dtype, extra_rows=extra_rows)


def poisoned(m, n, dtype, batch=None):
    """Output view (padded rows) filled with NaN: an element the kernel does not write stays NaN."""
    return storage(m, n, dtype, batch=batch, extra_rows=1 if batch else 0)


def untouched_outside(view, what=""):
    """The storage around an output view (row padding, extra rows) is still all NaN: nothing wrote out of bounds."""
    base = view._base
    if base is None:
        return
    outside = torch.ones(base.shape, dtype=torch.bool, device=base.device)
    outside.as_strided(view.shape, view.stride(), view.storage_offset() - base.storage_offset()).fill_(False)
    written = ~torch.isnan(base.float()[outside])
    assert not written.any(), f"{what}: {int(written.sum())} elements written outside the output matrix"


def all_nan(t) -> bool:
    return bool(torch.isnan(t.float()).all())


def positive(shape, lo=0.5, hi=1.5):
    return torch.rand(shape, device="cuda") * (hi - lo) + lo


# ---- reference and gate ----

def act_ref(x, name):
    if name in (None, "none"):
        return x
    if name == "relu":
        return torch.relu(x)
    if name == "gelu":
        return torch.nn.functional.gelu(x)  # exact erf gelu, as kiln.h specifies
    if name == "silu":
        return torch.nn.functional.silu(x)
    raise ValueError(name)


def f64(t):
    return t.float().double() if t.element_size() == 1 else t.double()


def reference(a, b, *, sa=None, sb=None, alpha=1.0, beta=0.0, c=None, bias=None, act=None):
    """act(alpha * sa * sb * (A @ B) + beta * C + bias) in float64 from the very tensors kiln read."""
    acc = torch.matmul(f64(a), f64(b))
    if sa is not None:
        acc = acc * (f64(sa).reshape(-1, 1) if sa.numel() > 1 else f64(sa).reshape(()))
    if sb is not None:
        acc = acc * (f64(sb).reshape(1, -1) if sb.numel() > 1 else f64(sb).reshape(()))
    acc = acc * alpha
    if c is not None and beta != 0.0:
        acc = acc + beta * f64(c)
    if bias is not None:
        acc = acc + f64(bias).reshape(-1)
    return act_ref(acc, act)


def rel_l2(out, ref) -> float:
    den = torch.linalg.vector_norm(ref).item()
    num = torch.linalg.vector_norm(f64(out) - ref).item()
    return num / den if den > 0 else num


def check(out, ref, tol, what=""):
    """The correctness gate: every element finite (poison gone), relative L2 within tol + output rounding."""
    bad = ~torch.isfinite(out.float())
    if bad.any():
        idx = bad.nonzero()[:5].tolist()
        pytest.fail(f"{what}: {int(bad.sum())} of {out.numel()} outputs are NaN/Inf (unwritten or overflowed), "
                    f"first at {idx}")
    rounding = rel_l2(ref.to(out.dtype), ref) if out.dtype != torch.float64 else 0.0
    err = rel_l2(out, ref)
    assert err <= tol + rounding, (f"{what}: relative L2 {err:.3e} > gate {tol:.0e} + output rounding "
                                   f"{rounding:.2e}")
    return err


def run_and_record(fn, *args, **kwargs):
    """Call a kiln op, recording the kernel it ran (the algo= if given, else the top query result)."""
    algo = kwargs.get("algo")
    name = algo.name if algo is not None else None
    if name is None:
        infos = kiln.query(fn, *args, k=1, **{k: v for k, v in kwargs.items() if k != "algo"})
        name = infos[0].name if infos else None
    out = fn(*args, **kwargs)
    if name:
        EXERCISED.add(name)
    return out


def run_checked(op, args, kwargs, make_out, ref, tol, what, algo=None):
    """Run op(*args, **kwargs, out=poisoned) and apply the gate. algo: None (kiln's choice), an AlgoInfo, or "each":
    every candidate kiln.query returns for these very tensors (up to SWEEP_K), then every other kernel the table
    lists for this problem type, forced by name (tuning variants no selection logic offers), each into a fresh
    poisoned output."""
    forced = []
    if algo == "each":
        algos = kiln.query(op, *args, out=make_out(), k=SWEEP_K, **kwargs)
        assert algos, f"{what}: kiln_query returned no candidate"
        p = kiln.plan(op, *args, out=make_out(), **kwargs).problem
        combo = (DType(p.a_type), DType(p.b_type), DType(p.d_type), Layout(p.layout), bool(p.b_prepacked))
        offered = {a.name for a in algos}
        forced = [kiln.algo_by_name(n) for n in sorted(claimed_names_of(arch(), combo) - offered)]
    else:
        algos = [algo]
    for al in algos + forced:
        out = make_out()
        label = f"{what} algo={al.name if al is not None else 'auto'}"
        try:
            res = run_and_record(op, *args, out=out, algo=al, **kwargs)
        except kiln.KilnError as exc:
            # a kernel kiln_query did not offer may simply not fit this shape (split-K depth, K multiple)
            if al in forced and exc.status == kiln.Status.INVALID_ALGO:
                continue
            raise
        assert res is out
        check(out, ref, tol, label)
        untouched_outside(out, label)
    return algos


# ---- shapes shared by the families: (M, N, K) and (batch, M, N, K) ----

SHAPES = [
    (128, 128, 128), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
    (4096, 4096, 4096),                                      # the large one
    (1, 256, 256), (1, 1, 64), (1, 4096, 1024), (4096, 1, 512),
    (7, 13, 64), (33, 65, 32), (100, 200, 16), (64, 64, 16), (96, 160, 32),   # K = 16, 32, 64: one DepthU or less
    (129, 257, 128), (255, 511, 1000), (1000, 1000, 1000), (129, 129, 129), (513, 1025, 999),
    (300, 700, 4096), (17, 2048, 2048), (2048, 17, 2048), (1536, 640, 1024),
]
BATCHED = [(3, 128, 256, 128), (4, 77, 99, 160), (2, 1, 512, 256), (5, 300, 200, 1000), (2, 1024, 1024, 512)]
ALL_SHAPES = SHAPES + BATCHED
# A few odd shapes for the type/epilogue products, where running every shape would only cost time.
FEW_SHAPES = [(129, 257, 128), (1, 96, 64), (3, 77, 99, 1000)]


def shape_id(shape) -> str:
    return "x".join(map(str, shape)) if len(shape) == 3 else "b{}_{}".format(shape[0], "x".join(map(str, shape[1:])))


def split_shape(shape):
    """(batch or None, m, n, k)."""
    return (None,) + tuple(shape) if len(shape) == 3 else tuple(shape)


def mk(batch, *dims):
    return ((batch,) if batch else ()) + dims
