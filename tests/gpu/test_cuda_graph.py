"""CUDA-graph capture and replay of kiln's ops: kiln.scaled_mm / mixed_mm / gemm and the torch.ops.kiln operators,
captured in a torch.cuda.CUDAGraph after a warm-up, replayed with new values copied into the static inputs (weights
included), against eager runs of the same call (the same kernel: the same bits) and the float64 reference. Also a
split-K kernel (its workspace allocated during capture), a Python-number scale (made on the device during capture),
a prepack inside a capture, an Fp8Linear MLP, and torch.compile's CUDA graphs (mode="reduce-overhead").

Why capture works (runtime/python/kiln/_fastpath.py): a run allocates its output and workspace from torch's caching
allocator (inside a capture: the graph's pool), launches on torch's current stream (the capture stream), and passes
every pointer and tensor map by value in the kernel's arguments, so the graph holds no host memory that a later
call could change; the plan cache keys on everything but the data pointers, and a replay reads the static tensors'
addresses baked in at capture. What must not happen during a capture: a code object's first load and the handle's
creation, which is why a shape is warmed up once outside it (as torch asks of every captured op).
"""
from __future__ import annotations

import pytest

import kilntest as kt
from kilntest import kiln, torch
from test_torch_ops import COMBO, GEMM, MIXED, OPS, SCALED, gemm_case, mixed_case, scaled_case

pytestmark = pytest.mark.gpu

REPLAYS = 3


def capture(fn, warmup: int = 2):
    """(graph, static output) of fn, after `warmup` eager calls on a side stream (torch's recipe)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


def refill_(t):
    """New random values into a static input, in its own format (fp8 without zero codes, as the other tests)."""
    if t.element_size() == 1 and t.dtype != torch.uint8:
        t.copy_(kt.fp8_values(t.shape, t.dtype))
    elif t.dtype == torch.float32 and t.dim() <= 1:
        t.copy_(kt.positive(t.shape))  # scales
    else:
        t.copy_(torch.randn(t.shape, device="cuda"))
    return t


def reference_now(case):
    """The float64 reference of the case's call from the values its static inputs hold now."""
    kw = case.fn_kwargs
    if case.name == "scaled_mm":
        a, b, sa, sb = case.fn_args
        return kt.reference(a, b, sa=sa, sb=sb, bias=kw.get("bias"))
    if case.name == "mixed_mm":
        return kt.reference(case.fn_args[0], case.w.t(), sb=kw["scale_b"], bias=kw["bias"])
    a, b = case.fn_args
    return kt.reference(a, b, alpha=kw["alpha"], beta=kw["beta"], c=kw["c"], act=kw["activation"])


def new_values(case):
    """Copy new values into every static input of the case, weights included (mixed_mm: new fp8 weights, prepacked
    into the static packed buffer)."""
    if case.name == "mixed_mm":
        a, packed = case.fn_args
        refill_(a)
        case.w = kt.fp8_values(case.w.shape, case.w.dtype)
        packed.data.copy_(kiln.prepack_b(case.w.t()).data)
    else:
        for t in case.fn_args:
            refill_(t)  # a transposed view too: the copy writes through it
    for t in case.fn_kwargs.values():
        if isinstance(t, torch.Tensor):
            refill_(t)


@pytest.fixture(scope="module", autouse=True)
def ops():
    return kiln.ops


@pytest.mark.parametrize("via", ["function", "operator"])
@pytest.mark.parametrize("name", OPS)
def test_capture_replay(name, via):
    kt.require_combo(COMBO[name])
    case = {"scaled_mm": scaled_case, "mixed_mm": mixed_case, "gemm": gemm_case}[name](129, 72, 256)
    fn = case.run_fn if via == "function" else case.run_op
    graph, out = capture(fn)
    for step in range(REPLAYS):
        new_values(case)
        graph.replay()
        eager = case.run_fn()
        torch.cuda.synchronize()
        what = f"{name} via {via}, replay {step}"
        assert torch.equal(out, eager), f"{what}: the replay differs from an eager run of the same call"
        kt.check(out, reference_now(case), case.tol, what)


def test_capture_split_k_workspace():
    """A split-K kernel (gsu > 1) captured: its workspace is allocated from torch inside the capture."""
    kt.require_combo(SCALED)
    m, n, k = 128, 128, 4096
    a = kt.fp8_values((m, k), torch.float8_e4m3fn)
    wt = kt.fp8_values((n, k), torch.float8_e4m3fn)
    sa, sb = kt.positive(()), kt.positive((n,))
    split = [i for i in kiln.query(kiln.scaled_mm, a, wt.t(), sa, sb, k=64) if i.gsu > 1]
    if not split:
        pytest.skip("no split-K candidate for this problem in the table")
    algo = split[0]
    kt.EXERCISED.add(algo.name)
    graph, out = capture(lambda: kiln.scaled_mm(a, wt.t(), sa, sb, algo=algo))
    for step in range(REPLAYS):
        for t in (a, wt):
            refill_(t)
        refill_(sb)
        graph.replay()
        eager = kiln.scaled_mm(a, wt.t(), sa, sb, algo=algo)
        torch.cuda.synchronize()
        assert torch.equal(out, eager), f"split-K {algo.name} replay {step}"
        kt.check(out, kt.reference(a, wt.t(), sa=sa, sb=sb), kt.TOL_FP8, f"split-K replay {step}")


def test_capture_number_scale_and_several_ops():
    """One graph with three kiln calls, one of them with a Python-number scale (a 1-element tensor made on the
    device inside the capture, filled again at every replay)."""
    for combo in (SCALED, MIXED, GEMM):
        kt.require_combo(combo)
    sc, mc, gc = scaled_case(40, 64, 128), mixed_case(40, 96, 128), gemm_case(40, 32, 96)
    a, b, _, sb = sc.fn_args

    def fn():
        return (kiln.scaled_mm(a, b, 0.5, sb, bias=sc.fn_kwargs["bias"]), mc.run_fn(), gc.run_op())

    graph, outs = capture(fn)
    for step in range(REPLAYS):
        for case in (sc, mc, gc):
            new_values(case)
        graph.replay()
        eager = fn()
        torch.cuda.synchronize()
        for got, want in zip(outs, eager):
            assert torch.equal(got, want), f"replay {step}"
        half = torch.tensor(0.5, device="cuda")
        kt.check(outs[0], kt.reference(a, b, sa=half, sb=sb, bias=sc.fn_kwargs["bias"]), kt.TOL_FP8, "number scale")


def test_prepack_inside_capture():
    """kiln.prepack_b in a capture (no host-to-device copy; its permutation made on the device, not cached)."""
    k, n = 200, 48
    w = kt.fp8_values((n, k), torch.float8_e4m3fn)
    kiln.prepack_b(w.t())  # warm-up: torch's kernels loaded outside the capture
    kiln._prepack._perm_cache.clear()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        packed = kiln.prepack_b(w.t())
    assert not kiln._prepack._perm_cache, "a permutation made during capture must not be cached"
    for _ in range(2):
        refill_(w)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(packed.data.cpu(), kiln.prepack_b_host(w.t().view(torch.uint8).cpu()))


def _mlp(k=256, h=320):
    dtype = torch.float16
    torch.manual_seed(0)
    lin = [torch.nn.Linear(k, h, bias=True), torch.nn.Linear(h, k, bias=False)]
    ref = torch.nn.Sequential(lin[0], torch.nn.SiLU(), lin[1]).to(device="cuda", dtype=dtype)
    fp8 = torch.nn.Sequential(kiln.Fp8Linear.from_linear(ref[0]), torch.nn.SiLU(), kiln.Fp8Linear.from_linear(ref[2]))
    return ref, fp8


def test_capture_fp8linear_mlp():
    kt.require_combo(MIXED)
    _, model = _mlp()
    x = torch.randn(16, 256, device="cuda").to(torch.float16)
    with torch.no_grad():
        graph, out = capture(lambda: model(x))
        for step in range(REPLAYS):
            refill_(x)
            graph.replay()
            eager = model(x)
            torch.cuda.synchronize()
            assert torch.equal(out, eager), f"Fp8Linear MLP replay {step}"


def test_compile_reduce_overhead_fp8linear_mlp():
    """torch.compile(mode="reduce-overhead"): inductor's CUDA graphs around the kiln::mixed_mm operators."""
    kt.require_combo(MIXED)
    _, model = _mlp()
    torch._dynamo.reset()
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    with torch.no_grad():
        for step in range(4):  # the first calls warm up and record; the later ones replay
            x = torch.randn(8, 256, device="cuda").to(torch.float16)
            got = compiled(x).clone()  # a replay's output is overwritten by the next replay
            want = model(x)
            kt.check(got, want.double(), kt.TOL_HALF, f"reduce-overhead call {step}")
