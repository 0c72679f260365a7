"""The binding's per-call fast path (runtime/python/kiln/_fastpath.py) without a GPU.

A run that succeeded leaves a prepared plan keyed by everything but the data pointers; these tests check that a call
with the same key reuses it (and plans nothing), that a change of any key component plans again, that the first
call's errors are the ones the binding always gave, and that set_arch()/close() forget the plans.

Runs need CUDA; here they take CPU tensors (torch, when it imports) with the device-less handle selecting for sm90,
the CUDA-only check lifted and the prebound kiln_run replaced by a recorder (the `runs` fixture). The cache itself
and the key's value rules are checked without torch or the library.
"""
from __future__ import annotations

import ctypes
import math
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "runtime" / "python"))

import kiln  # noqa: E402
from kiln import DType, _capi, _fastpath, _handle, _ops  # noqa: E402
from kiln._fastpath import PlanCache, Uncacheable, value_key  # noqa: E402
from binding_lib import find_library  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


# ---- the cache and the key's value rules (no torch, no library) ----

def test_plan_cache_lru_and_bound():
    cache = PlanCache(size=2)
    gen = cache.generation
    assert cache.put("a", 1, gen) and cache.put("b", 2, gen)
    assert cache.get("a") == 1          # "a" is now the most recent
    cache.put("c", 3, gen)              # evicts "b", the least recently used
    assert cache.get("b") is None and cache.keys() == ["a", "c"] and len(cache) == 2


def test_plan_cache_clear_drops_plans_prepared_before_it():
    cache = PlanCache()
    gen = cache.generation
    cache.put("a", 1, gen)
    cache.clear()
    assert cache.get("a") is None and len(cache) == 0
    assert not cache.put("b", 2, gen), "a plan prepared before clear() (set_arch, close) must not be cached"
    assert cache.put("b", 2, cache.generation)


def test_value_key_keeps_types_apart():
    """1, 1.0 and True are equal in Python and would share a dict entry; a key of the value alone would let a call
    the binding refuses (activation=1) run the plan of one it accepts (Activation.RELU)."""
    keys = {value_key(v) for v in (1, 1.0, True, kiln.Activation.RELU, DType.F16, "relu")}
    assert len(keys) == 6
    assert value_key(None) is None
    for bad in ([1], {"a": 1}, object(), b"relu", float("nan")):
        with pytest.raises(Uncacheable):
            value_key(bad)


def test_algo_and_packed_keys():
    algo = kiln.kiln_algo(name_hash=5, solution_index=1, gsu=1, workspace_bytes=0)
    assert _ops._algo_key(algo) == bytes(algo)
    info = _handle.AlgoInfo("x", 5, 1, 1, 0, algo)
    assert _ops._algo_key(info) == bytes(algo)
    assert _ops._algo_key(None) is None
    with pytest.raises(Uncacheable):
        _ops._algo_key("x")
    with pytest.raises(Uncacheable):
        _ops._packed_key(object())


def test_raw_args_match_kiln_args():
    assert _fastpath.RawArgs._fields_ == _capi.kiln_args._fields_
    assert ctypes.sizeof(_fastpath.RawArgs) == ctypes.sizeof(_capi.kiln_args)
    for name, _t in _capi.kiln_args._fields_:
        assert getattr(_fastpath.RawArgs, name).offset == getattr(_capi.kiln_args, name).offset


class FakeTensor:
    """What _fastpath.tensor_key and the attention key read of a tensor, without torch."""

    def __init__(self, shape, ptr=4096, dtype="float8_e4m3fn", device="cuda:0", contiguous=True):
        self.shape, self.dtype, self.device, self._ptr, self._contiguous = tuple(shape), dtype, device, ptr, contiguous

    def stride(self):
        out, acc = [], 1
        for n in reversed(self.shape):
            out.insert(0, acc)
            acc *= n
        return tuple(out)

    def data_ptr(self):
        return self._ptr

    def numel(self):
        return math.prod(self.shape)

    def is_contiguous(self):
        return self._contiguous


def _attn_key(q=None, k=None, v=None, **kw):
    from kiln import _attention
    t = lambda: FakeTensor((2, 300, 4, 128))  # noqa: E731
    args = dict(q_descale=None, k_descale=None, v_descale=None, causal=False, softmax_scale=None, out_dtype=None,
                cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, return_lse=False,
                out=None, algo=None, fp8_p=False, pack_v=None)
    args.update(kw)
    return _attention._plan_key(q or t(), k or t(), v or t(), **args)


def test_attention_key():
    """kiln.attention's plan key: everything but the data pointers (their alignment bits kept), every argument's type
    and value; varlen calls without their maxima and non-contiguous (batch, kv head) descales are not keyed."""
    base = _attn_key()
    assert base == _attn_key(q=FakeTensor((2, 300, 4, 128), ptr=8192)), "the key holds a data pointer"
    assert base[0] == "attention"
    one = FakeTensor((1,))
    differs = [_attn_key(q=FakeTensor((2, 301, 4, 128))), _attn_key(q=FakeTensor((2, 300, 4, 128), ptr=4104)),
               _attn_key(v=FakeTensor((2, 300, 4, 128), dtype="float8_e5m2")), _attn_key(causal=True),
               _attn_key(causal=1), _attn_key(softmax_scale=0.1), _attn_key(return_lse=True), _attn_key(fp8_p=True),
               _attn_key(pack_v=False), _attn_key(out=FakeTensor((2, 300, 4, 128), dtype="bfloat16")),
               _attn_key(q_descale=one, k_descale=one, v_descale=one),
               _attn_key(algo=kiln.kiln_algo(name_hash=5, solution_index=1, gsu=1, workspace_bytes=0))]
    assert len({base, *differs}) == len(differs) + 1
    cu = FakeTensor((4,), dtype="int32")
    assert _attn_key(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=200, max_seqlen_k=200) not in (base, *differs)
    vec = FakeTensor((2, 4), dtype="float32", contiguous=False)
    for bad in (dict(cu_seqlens_q=cu, cu_seqlens_k=cu), dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=200),
                dict(q_descale=vec, k_descale=vec, v_descale=vec), dict(causal=[True]), dict(algo="x"),
                dict(max_seqlen_q=float("nan"))):
        with pytest.raises(Uncacheable):
            _attn_key(**bad)
    with pytest.raises(AttributeError):  # not a tensor: the whole way says what is wrong
        _attn_key(q=object())


def test_grouped_key():
    """kiln.grouped_mm's plan key: every argument but the data pointers; the three group-index arguments apart; a
    non-contiguous group index (the whole way copies it) is not keyed."""
    from kiln import _grouped
    a, b, one = FakeTensor((512, 256)), FakeTensor((4, 128, 256)), FakeTensor((1,), dtype="float32")
    ends = FakeTensor((4,), dtype="int32")

    def key(**kw):
        args = dict(offs=None, masked_m=None, m_indices=None, scale_a=one, scale_b=one, bias=None, out_dtype=None,
                    out=None, algo=None)
        args.update(kw)
        return _grouped._key(a, b, **args)
    base = key(offs=ends)
    assert base == key(offs=FakeTensor((4,), dtype="int32", ptr=8192)) and base[0] == "grouped_mm"
    differs = [key(masked_m=ends), key(m_indices=FakeTensor((512,), dtype="int32")),
               key(offs=ends, bias=FakeTensor((128,), dtype="float32")), key(offs=ends, out_dtype="float16"),
               key(offs=ends, scale_a=FakeTensor((512,), dtype="float32")), key(offs=ends, out=FakeTensor((512, 128)))]
    assert len({base, *differs}) == len(differs) + 1
    with pytest.raises(Uncacheable):
        key(offs=FakeTensor((4,), dtype="int32", contiguous=False))
    with pytest.raises(AttributeError):  # scales are required: the whole way says so
        key(offs=ends, scale_a=None)


def test_attention_raw_args_match():
    from kiln import _attention
    assert _attention._RawAttnArgs._fields_ == _capi.kiln_attn_args._fields_
    for name, _t in _capi.kiln_attn_args._fields_:
        assert getattr(_attention._RawAttnArgs, name).offset == getattr(_capi.kiln_attn_args, name).offset


# ---- runs on CPU tensors with the launch recorded ----

class Recorder:
    """Stands for the prebound kiln_run: records what each launch would have passed, answers `status`."""

    def __init__(self):
        self.launches = []
        self.status = 0

    def __call__(self, h, problem_addr, algo_addr, args, workspace, ws_bytes, stream):
        p = _capi.kiln_problem.from_buffer_copy((ctypes.c_char * ctypes.sizeof(_capi.kiln_problem))
                                                .from_address(problem_addr))
        algo = (bytes((ctypes.c_char * ctypes.sizeof(_capi.kiln_algo)).from_address(algo_addr))
                if algo_addr else None)
        raw = {name: getattr(args, name) for name, _t in _capi.kiln_args._fields_}
        scale_a = ctypes.c_float.from_address(raw["scale_a"]).value if raw["scale_a"] else None
        self.launches.append(dict(problem_addr=problem_addr, problem=bytes(p), p=p, algo=algo, args=raw,
                                  scale_a=scale_a, ws_bytes=ws_bytes, stream=stream, handle=getattr(h, "value", h)))
        return self.status


@pytest.fixture
def runs(monkeypatch):
    """(torch, recorder, planner calls per op): CPU tensors run through the whole binding but the launch."""
    if torch is None:
        pytest.skip("torch is not installed")
    path = find_library()
    if path is None:
        pytest.skip("no libkiln.so: set KILN_LIBRARY or build one")
    try:
        _capi.load_library(path)
    except OSError as exc:
        pytest.skip(str(exc))
    kiln.close()
    kiln.set_arch("sm90", device_index=-1)
    rec = Recorder()
    monkeypatch.setattr(_handle, "require_runnable", lambda device, where: None)
    monkeypatch.setattr(_fastpath, "_run", rec)
    monkeypatch.setattr(_fastpath, "_stream", lambda index: 0)
    planned = {"gemm": 0, "scaled_mm": 0, "mixed_mm": 0}
    for op in planned:
        real = getattr(_ops, f"_plan_{op}")

        def counting(*args, _real=real, _op=op, **kwargs):
            planned[_op] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(_ops, f"_plan_{op}", counting)
    yield torch, rec, planned
    kiln.close()


FP8 = dict(a_fp8="e4m3", b_fp8="e4m3")
REQUIRE_RUNNABLE = _handle.require_runnable  # the real check, before any fixture lifts it


def _fp8(m=64, n=32, k=128):
    a = torch.randint(1, 120, (m, k), dtype=torch.uint8)
    w = torch.randint(1, 120, (n, k), dtype=torch.uint8)
    return a, w


def test_same_key_same_plan(runs):
    torch_, rec, planned = runs
    one = torch.ones((), dtype=torch.float32)
    outs = []
    for _ in range(3):
        a, w = _fp8()  # new tensors (new pointers), the same key
        outs.append(kiln.scaled_mm(a, w.t(), one, one, **FP8))
        launch = rec.launches[-1]
        assert launch["args"]["a"] == a.data_ptr() and launch["args"]["b"] == w.data_ptr()
        assert launch["args"]["d"] == outs[-1].data_ptr() and launch["args"]["scale_a"] == one.data_ptr()
    assert planned["scaled_mm"] == 1, "a call of a cached key planned again"
    assert len(_fastpath.plans) == 1
    first, *later = rec.launches
    for launch in later:  # the cached run passes what the whole way passed: the same problem, algo, workspace
        assert launch["problem_addr"] == first["problem_addr"]
        assert (launch["problem"], launch["algo"], launch["ws_bytes"]) == (first["problem"], first["algo"],
                                                                          first["ws_bytes"])
        assert {k: v for k, v in launch["args"].items() if k in ("alpha", "beta", "c", "bias")} == \
               {k: v for k, v in first["args"].items() if k in ("alpha", "beta", "c", "bias")}
    assert first["algo"] is not None and first["problem"] and all(o.shape == (64, 32) for o in outs)
    assert all(o.dtype == torch.bfloat16 for o in outs)


def _variants():
    """(name, call) pairs: each differs from the base call in one key component."""
    one = torch.ones((), dtype=torch.float32)
    a, w = _fp8()
    wide = torch.randint(1, 120, (64, 160), dtype=torch.uint8)[:, :128]  # lda 160
    rows = torch.ones((64, 1), dtype=torch.float32)
    cols = torch.ones((1, 32), dtype=torch.float32)
    bias16 = torch.zeros(32, dtype=torch.bfloat16)
    bias32 = torch.zeros(32, dtype=torch.float32)
    a2, w2 = _fp8(m=48)
    base = lambda **kw: kiln.scaled_mm(a, w.t(), one, one, **{**FP8, **kw})  # noqa: E731
    return [
        ("base", base),
        ("shape", lambda: kiln.scaled_mm(a2, w.t(), one, one, **FP8)),
        ("stride", lambda: kiln.scaled_mm(wide, w.t(), one, one, **FP8)),
        ("a dtype", lambda: base(a_fp8="e5m2")),
        ("b dtype", lambda: base(b_fp8="e5m2")),
        ("scale_a vector", lambda: kiln.scaled_mm(a, w.t(), rows, one, **FP8)),
        ("scale_b vector", lambda: kiln.scaled_mm(a, w.t(), one, cols, **FP8)),
        ("scale_a number", lambda: kiln.scaled_mm(a, w.t(), 1.0, one, **FP8)),
        ("scale_a none", lambda: kiln.scaled_mm(a, w.t(), None, one, **FP8)),
        ("bias bf16", lambda: base(bias=bias16)),
        ("bias f32", lambda: base(bias=bias32)),
        ("activation", lambda: base(activation="relu")),
        ("activation spelt", lambda: base(activation=kiln.Activation.RELU)),
        ("out dtype", lambda: base(out_dtype=torch.float16)),
        ("out dtype as kiln", lambda: base(out_dtype=DType.BF16)),
        ("out given", lambda: base(out=torch.empty((64, 32), dtype=torch.bfloat16))),
        ("layout forced", lambda: base(layout="TN")),
    ]


def test_every_key_component_plans_again(runs):
    torch_, rec, planned = runs
    seen = []
    for name, call in _variants():
        before = planned["scaled_mm"]
        call()
        assert planned["scaled_mm"] == before + 1, f"{name}: reused a plan of another key"
        call()
        assert planned["scaled_mm"] == before + 1, f"{name}: its own plan was not reused"
        seen.append(name)
    assert len(_fastpath.plans) == len(seen)
    problem = {name: rec.launches[2 * i]["problem"] for i, name in enumerate(seen)}
    # Spellings of one problem have plans of their own, with the same problem in them.
    same = {"activation spelt": "activation", "out dtype as kiln": "base", "out given": "base", "layout forced": "base",
            "scale_a number": "base"}  # a number is a 1-element scale tensor
    for name, twin in same.items():
        assert problem[name] == problem[twin], name
    distinct = [problem[name] for name in seen if name not in same]
    assert len(set(distinct)) == len(distinct), "a key component that changes the problem did not change it"


def test_gemm_alpha_beta_and_types_are_keyed(runs):
    torch_, rec, planned = runs
    x = torch.ones((32, 64), dtype=torch.float16)
    wt = torch.ones((16, 64), dtype=torch.float16)
    c = torch.zeros((32, 16), dtype=torch.float16)
    calls = [dict(), dict(alpha=2.0), dict(alpha=2), dict(alpha=True), dict(c=c, beta=0.5), dict(c=c, beta=-0.0),
             dict(c=c, beta=0.0)]
    for kw in calls:
        kiln.gemm(x, wt.t(), **kw)
        kiln.gemm(x, wt.t(), **kw)
    # beta = -0.0 and 0.0 are one key (they compare equal and plan the same problem); each run passes its own call's
    # alpha and beta, sign of zero included.
    assert planned["gemm"] == len(calls) - 1
    got = [(launch["args"]["alpha"], launch["args"]["beta"]) for launch in rec.launches[::2]]
    assert got == [(1.0, 0.0), (2.0, 0.0), (2.0, 0.0), (1.0, 0.0), (1.0, 0.5), (1.0, -0.0), (1.0, 0.0)]
    signs = [math.copysign(1.0, launch["args"]["beta"]) for launch in rec.launches[10:]]
    assert signs == [-1.0, -1.0, 1.0, 1.0]
    bf = x.to(torch.bfloat16)
    kiln.gemm(bf, wt.t().to(torch.bfloat16))
    assert planned["gemm"] == len(calls)


def test_number_scales_per_call(runs):
    """A scale given as a number becomes a new device tensor per call, holding that call's value."""
    torch_, rec, planned = runs
    a, w = _fp8()
    one = torch.ones((), dtype=torch.float32)
    for value in (0.5, 0.5, 2.0, 3):
        kiln.scaled_mm(a, w.t(), value, one, **FP8)
    assert [launch["scale_a"] for launch in rec.launches] == [0.5, 0.5, 2.0, 3.0]
    assert planned["scaled_mm"] == 2  # a float's value is not in the key (its type is: 3 is another key)
    for _ in range(2):  # checked per call as on the first: the same error from the cached plan
        with pytest.raises(ValueError, match=r"^scaled_mm: scale_a = 1e\+300 does not fit a float32"):
            kiln.scaled_mm(a, w.t(), 1e300, one, **FP8)
    kiln.close()
    with pytest.raises(ValueError, match=r"^scaled_mm: scale_a = 1e\+300 does not fit a float32"):
        kiln.scaled_mm(a, w.t(), 1e300, one, **FP8)  # the first call of the key (close() forgot the plans)


def test_mixed_mm_cached(runs):
    torch_, rec, planned = runs
    packed = kiln.prepack_b(torch.randint(1, 120, (32, 64), dtype=torch.uint8).t(), fp8="e4m3")
    sb = torch.ones(32, dtype=torch.float32)
    for lead in ((8,), (8,), (2, 4), (2, 4)):
        x = torch.ones(lead + (64,), dtype=torch.float16)
        out = kiln.mixed_mm(x, packed, scale_b=sb)
        assert out.shape == lead + (32,) and rec.launches[-1]["args"]["a"] == x.data_ptr()
        assert rec.launches[-1]["args"]["b"] == packed.data.data_ptr()
    assert planned["mixed_mm"] == 2
    other = kiln.prepack_b(torch.randint(1, 120, (32, 64), dtype=torch.uint8).t(), fp8="e5m2")
    kiln.mixed_mm(torch.ones((8, 64), dtype=torch.float16), other, scale_b=sb)
    assert planned["mixed_mm"] == 3


def test_first_call_errors_unchanged(runs):
    """Calls the binding refuses raise what they always raised, also after a plan of a similar call is cached."""
    torch_, rec, planned = runs
    a, w = _fp8()
    one = torch.ones((), dtype=torch.float32)
    kiln.scaled_mm(a, w.t(), one, one, activation=kiln.Activation.RELU, **FP8)
    kiln.gemm(torch.ones((8, 16), dtype=torch.float16), torch.ones((16, 8), dtype=torch.float16), alpha=1.0)
    bad = [
        (TypeError, r"activation= takes None, a name or a kiln.Activation, got int",
         lambda: kiln.scaled_mm(a, w.t(), one, one, activation=1, **FP8)),
        (ValueError, "activation='tanh' is not one of",
         lambda: kiln.scaled_mm(a, w.t(), one, one, activation="tanh", **FP8)),
        (TypeError, r"^scaled_mm: b must be a torch\.Tensor, got NoneType$",
         lambda: kiln.scaled_mm(a, None, one, one, **FP8)),
        (TypeError, "scale_a must be None, a number or a float32 torch.Tensor",
         lambda: kiln.scaled_mm(a, w.t(), True, one, **FP8)),
        (TypeError, "scales are float32", lambda: kiln.scaled_mm(a, w.t(), one.double(), one, **FP8)),
        (TypeError, "torch.uint8 holds raw bytes", lambda: kiln.scaled_mm(a, w.t(), one, one)),
        (ValueError, "want 1 element", lambda: kiln.scaled_mm(a, w.t(), torch.ones(3), one, **FP8)),
        (TypeError, "gemm: alpha must be a real number",
         lambda: kiln.gemm(torch.ones((8, 16), dtype=torch.float16), torch.ones((16, 8), dtype=torch.float16),
                           alpha="1.0")),
        (ValueError, "gemm: alpha = 1e\\+300 does not fit a float32",
         lambda: kiln.gemm(torch.ones((8, 16), dtype=torch.float16), torch.ones((16, 8), dtype=torch.float16),
                           alpha=1e300)),
        (ValueError, "beta != 0 needs c=",
         lambda: kiln.gemm(torch.ones((8, 16), dtype=torch.float16), torch.ones((16, 8), dtype=torch.float16),
                           beta=1.0)),
        (ValueError, r"out: shape \(3, 3\), expected \(64, 32\)",
         lambda: kiln.scaled_mm(a, w.t(), one, one, out=torch.empty((3, 3), dtype=torch.bfloat16), **FP8)),
        (TypeError, "algo= takes an AlgoInfo", lambda: kiln.scaled_mm(a, w.t(), one, one, algo="best", **FP8)),
    ]
    for _ in range(2):  # the same errors the second time: nothing about a failed call is cached
        for exc, match, call in bad:
            with pytest.raises(exc, match=match):
                call()
    assert len(_fastpath.plans) == 2


def test_failed_runs_are_not_cached(runs):
    torch_, rec, planned = runs
    rec.status = int(kiln.Status.DRIVER_ERROR)
    a, w = _fp8()
    one = torch.ones((), dtype=torch.float32)
    for _ in range(2):
        with pytest.raises(kiln.KilnError) as err:
            kiln.scaled_mm(a, w.t(), one, one, **FP8)
        assert err.value.status == kiln.Status.DRIVER_ERROR and err.value.where == "scaled_mm"
    assert len(_fastpath.plans) == 0 and planned["scaled_mm"] == 2
    rec.status = 0
    kiln.scaled_mm(a, w.t(), one, one, **FP8)
    rec.status = int(kiln.Status.DRIVER_ERROR)
    with pytest.raises(kiln.KilnError) as err:  # a cached plan's failed run raises as the first call's would
        kiln.scaled_mm(a, w.t(), one, one, **FP8)
    assert err.value.status == kiln.Status.DRIVER_ERROR and "kiln_problem(" in str(err.value)
    assert planned["scaled_mm"] == 3


def test_cpu_tensors_still_refused_without_the_stub(runs, monkeypatch):
    monkeypatch.setattr(_handle, "require_runnable", REQUIRE_RUNNABLE)
    a, w = _fp8()
    one = torch.ones((), dtype=torch.float32)
    for _ in range(2):
        with pytest.raises(ValueError, match="scaled_mm: kiln runs on CUDA tensors; got cpu"):
            kiln.scaled_mm(a, w.t(), one, one, **FP8)
    assert len(_fastpath.plans) == 0


def test_uncacheable_calls_run_uncached(runs):
    torch_, rec, planned = runs
    a, w = _fp8()
    one = torch.ones((), dtype=torch.float32)
    like = torch.empty(1, dtype=torch.float16)
    for _ in range(2):
        out = kiln.scaled_mm(a, w.t(), one, one, out_dtype=like, **FP8)  # out_dtype given as a tensor
        assert out.dtype == torch.float16
    assert planned["scaled_mm"] == 2 and len(_fastpath.plans) == 0


def test_empty_problems_run_uncached(runs):
    torch_, rec, planned = runs
    a, w = torch.zeros((0, 64), dtype=torch.uint8), torch.zeros((32, 64), dtype=torch.uint8)
    one = torch.ones((), dtype=torch.float32)
    for _ in range(2):
        out = kiln.scaled_mm(a, w.t(), one, one, **FP8)
        assert out.shape == (0, 32) and rec.launches[-1]["args"]["a"] is None
    assert planned["scaled_mm"] == 2 and len(_fastpath.plans) == 0


def test_set_arch_and_close_clear_the_plans(runs):
    torch_, rec, planned = runs
    a, w = _fp8()
    one = torch.ones((), dtype=torch.float32)
    kiln.scaled_mm(a, w.t(), one, one, **FP8)
    assert len(_fastpath.plans) == 1
    kiln.set_arch("sm90", device_index=-1)
    assert len(_fastpath.plans) == 0
    kiln.scaled_mm(a, w.t(), one, one, **FP8)
    kiln.scaled_mm(a, w.t(), one, one, **FP8)
    assert planned["scaled_mm"] == 2 and len(_fastpath.plans) == 1
    kiln.close()
    assert len(_fastpath.plans) == 0
    kiln.set_arch("sm90", device_index=-1)
    kiln.scaled_mm(a, w.t(), one, one, **FP8)
    assert planned["scaled_mm"] == 3
    assert rec.launches[-1]["handle"] == kiln.handle(-1).value, "the plan after close() runs on the new handle"


def test_threads_share_plans_not_arguments(runs):
    """Threads running one cached plan each pass their own pointers (every run gets its own kiln_args)."""
    torch_, rec, planned = runs
    one = torch.ones((), dtype=torch.float32)
    a0, w0 = _fp8()
    kiln.scaled_mm(a0, w0.t(), one, one, **FP8)
    errors = []

    def worker():
        try:
            for _ in range(50):
                a, w = _fp8()
                out = kiln.scaled_mm(a, w.t(), one, one, **FP8)
                mine = [x for x in rec.launches if x["args"]["d"] == out.data_ptr()]
                assert mine and mine[-1]["args"]["a"] == a.data_ptr() and mine[-1]["args"]["b"] == w.data_ptr()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert planned["scaled_mm"] == 1


def test_host_overhead_bench_self_check():
    """bench/host_overhead.py's table and summary on fake numbers (it times on a GPU; this needs neither)."""
    import subprocess
    r = subprocess.run([sys.executable, str(REPO / "bench" / "host_overhead.py"), "--self-check"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "self-check passed" in r.stdout and "host_overhead_ratio_vs_torch" in r.stdout
