"""The per-call path of kiln.scaled_mm / gemm / mixed_mm: prepared plans, cached by a key of the call, and the one
function every run goes through.

The first call of a key goes the whole way (_ops: every argument checked, the kiln_problem built and checked by the
library, kiln_query's choice for these pointers' alignment) and leaves, once its run succeeded, a Prepared plan: the
problem, the algo, the workspace size, the output's shape/dtype/device and the handle. A later call of the same key
allocates the output, writes the data pointers into a fresh kiln_args and calls kiln_run through a ctypes function
whose types were set once. The library still checks the problem, the arguments and the algo on every kiln_run.

The key (built by _ops for each op) holds everything the plan depends on except the data pointers: for each tensor
its Python type, shape, strides, dtype, device and the low bits of its data pointer (kiln_query filters candidates
by pointer alignment); for every other argument its type and value (so 1 and 1.0 and True are three keys, and a
value of a kind the slow path refuses never reaches a plan of a kind it accepts), but for a scale given as a number
only its type (the value is checked and made a tensor per call); the algo= forced, as bytes. An
argument of a kind the key cannot describe by value (out_dtype given as a tensor, a numpy float) raises Uncacheable:
that call goes the whole way and is not cached. So is every empty problem (M, N, K or batch = 0), whose operands
have NULL pointers. The handle's arch is not in the key: set_arch() and close() clear the cache instead, and a plan
prepared while they ran is dropped (the generation check of PlanCache.put).

Runs go on torch's current stream of the tensors' device, fetched as a raw pointer per call. There is no
torch.cuda.device guard: kiln_run makes its handle's context (CUDA) or device (HIP) current around every driver call
itself, and torch allocates on the device it is given.
"""
from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict

from ._capi import Activation, DType, Layout, check, kiln_args, load_library
from ._convert import as_float32

# The pointer bits a key holds. kiln_query's predicates ask A and B for align_a/align_b elements (16 at most, of 1 or
# 2 bytes: 32 bytes) and TMA for 16-byte bases; 64 bytes leaves room, and torch's allocators (512 bytes on CUDA, 64 on
# the CPU) hand out blocks that fresh outputs never differ in.
ALIGN_MASK = 63
CACHE_SIZE = 1024    # prepared plans kept, least recently used dropped first
NUMBER_TYPES = (int, float)  # scales given as Python numbers (bool is refused by the slow path, and keyed apart)


class Uncacheable(Exception):
    """An argument the key cannot describe by value; the call goes the whole way, uncached."""


# Types whose values describe an argument completely (immutable, compared by value). torch.dtype joins on the first
# prepare(), which has imported torch (a call before that one is not cached).
_VALUE_TYPES = {type(None), str, int, float, bool, DType, Layout, Activation}


def value_key(x):
    """(type, value) of a non-tensor argument. A NaN is no key (it equals nothing, so it would only fill the cache)."""
    if x is None:
        return None
    t = type(x)
    if t not in _VALUE_TYPES or x != x:
        raise Uncacheable(t.__name__)
    return (t, x)


def tensor_key(t) -> tuple:
    """What a plan knows about a tensor: all of it but the address, of which only the alignment bits. Raises
    (AttributeError and the like) for what is not a tensor: the slow path then says what is wrong."""
    return (type(t), t.shape, t.stride(), t.dtype, t.device, t.data_ptr() & ALIGN_MASK)


def scale_key(s):
    """A scale: None, a Python number (its type: every value plans the same 1-element scale, and run_cached checks
    the value as the whole way does) or a tensor."""
    if s is None:
        return None
    if type(s) in NUMBER_TYPES:
        return (type(s),)
    return tensor_key(s)


class PlanCache:
    """A bounded LRU of key -> Prepared. get() takes no lock (one dict lookup under the GIL; a key evicted between
    the lookup and the LRU move is harmless); put() and clear() take one, and put() drops a plan whose preparation
    began before the last clear()."""

    def __init__(self, size: int = CACHE_SIZE):
        self.size = size
        self.generation = 0
        self._plans = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        plans = self._plans
        pp = plans.get(key)
        if pp is not None:
            try:
                plans.move_to_end(key)
            except KeyError:
                pass
        return pp

    def put(self, key, pp, generation: int) -> bool:
        with self._lock:
            if generation != self.generation:
                return False
            self._plans[key] = pp
            self._plans.move_to_end(key)
            while len(self._plans) > self.size:
                self._plans.popitem(last=False)
            return True

    def clear(self) -> None:
        with self._lock:
            self.generation += 1
            self._plans.clear()

    def __len__(self) -> int:
        return len(self._plans)

    def keys(self) -> list:
        return list(self._plans)


plans = PlanCache()


def clear() -> None:
    """Forget every prepared plan (set_arch, close)."""
    plans.clear()


class RawArgs(ctypes.Structure):
    """kiln_args without CheckedStructure's per-field checks, made fresh for each run (so that two threads running
    one plan never share one): pointers come from tensor.data_ptr(), alpha/beta are values the first call of the key
    checked."""
    _fields_ = kiln_args._fields_


assert ctypes.sizeof(RawArgs) == ctypes.sizeof(kiln_args)


class Prepared:
    """What a run of one key needs besides the tensors. Never changed after prepare(): threads share it."""
    __slots__ = ("problem", "problem_addr", "algo", "algo_addr", "handle", "ws_bytes", "out_shape", "out_dtype",
                 "device", "device_index", "d_align", "cacheable", "where", "scale_names")

    def __repr__(self) -> str:
        return (f"Prepared({self.where}, {self.problem!r}, algo={bytes(self.algo).hex() if self.algo else None}, "
                f"ws_bytes={self.ws_bytes}, out={self.out_shape} {self.out_dtype} on {self.device})")


_torch = None
_run = None      # kiln_run with raw argument types (prebound once by _bind_run)
_stream = None   # device index -> torch's current stream of that device as an int (by _bind_stream)


def _use_torch(torch) -> None:
    global _torch
    _torch = torch
    _VALUE_TYPES.add(torch.dtype)


def _bind_run():
    global _run
    fn = load_library()["kiln_run"]  # a function object of its own: lib.kiln_run keeps its prototype
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(RawArgs), ctypes.c_void_p,
                   ctypes.c_size_t, ctypes.c_void_p]
    _run = fn
    return fn


def _bind_stream():
    """torch._C._cuda_getCurrentRawStream(index) where torch has it (the call inductor's generated code makes: no
    Stream object), else torch.cuda.current_stream(index).cuda_stream."""
    global _stream
    if _torch is None:
        import torch
        _use_torch(torch)
    raw = getattr(_torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        current = _torch.cuda.current_stream
        raw = lambda index: current(index).cuda_stream  # noqa: E731
    _stream = raw
    return raw


def prepare(p, h, device_index: int, algo, ws_bytes: int, out, d_ptr, where: str) -> Prepared:
    """A Prepared of a checked problem `p` (it takes p over: the caller must not change it), the algo resolved for
    it (or None: kiln_run picks and reports), and the output the first call made or was given."""
    import torch

    if _torch is not torch:
        _use_torch(torch)
    pp = Prepared()
    pp.problem = p
    pp.problem_addr = ctypes.addressof(p)
    pp.algo = algo.copy() if algo is not None else None
    pp.algo_addr = ctypes.addressof(pp.algo) if algo is not None else None
    pp.handle = h
    pp.ws_bytes = ws_bytes
    pp.out_shape = tuple(out.shape)
    pp.out_dtype = out.dtype
    pp.device = out.device
    pp.device_index = device_index
    pp.d_align = d_ptr & ALIGN_MASK if d_ptr is not None else None
    pp.cacheable = p.m > 0 and p.n > 0 and p.k > 0 and p.batch > 0 and algo is not None
    pp.where = where
    pp.scale_names = (f"{where}: scale_a", f"{where}: scale_b")  # what as_float32's errors name, as _tensors.scale
    return pp


def launch(pp: Prepared, args: RawArgs) -> None:
    """kiln_run of a prepared plan with these pointers, on torch's current stream of its device, with a workspace
    from torch's allocator; KilnError for any status but success."""
    run = _run or _bind_run()
    stream = (_stream or _bind_stream())(pp.device_index)
    ws_bytes = pp.ws_bytes
    if ws_bytes:
        workspace = _torch.empty(ws_bytes, dtype=_torch.uint8, device=pp.device)
        status = run(pp.handle, pp.problem_addr, pp.algo_addr, args, workspace.data_ptr(), ws_bytes, stream or None)
    else:
        status = run(pp.handle, pp.problem_addr, pp.algo_addr, args, None, 0, stream or None)
    if status:
        check(status, pp.where, repr(pp.problem), handle=pp.handle)


def launch_plan_args(pp: Prepared, args: kiln_args) -> None:
    """launch() with the checked kiln_args of a whole-way call (its pointers NULL for empty operands)."""
    launch(pp, RawArgs.from_buffer_copy(args))


def run_cached(pp: Prepared, a, b, c, scale_a, scale_b, bias, out, alpha: float, beta: float, group_index=None):
    """A cached plan's run with this call's tensors: the output made (or the caller's), the pointers set, launched.
    Returns the output, or None when the new output's alignment is not the one the plan was chosen for (then the
    caller goes the whole way; torch's allocator hands out 512-byte aligned blocks, so this does not happen).
    group_index: a grouped call's int32 index tensor (kiln_args.group_index)."""
    torch = _torch
    if out is None:
        out = torch.empty(pp.out_shape, dtype=pp.out_dtype, device=pp.device)
        pd = out.data_ptr()
        if pd & ALIGN_MASK != pp.d_align:
            return None
    else:
        pd = out.data_ptr()
    # Scales given as numbers become 1-element device tensors per call, checked and made as _tensors.scale makes
    # them; they live until kiln_run has queued its work (torch's allocator reuses their memory in stream order).
    if scale_a is not None and type(scale_a) in NUMBER_TYPES:
        scale_a = torch.full((1,), as_float32(scale_a, pp.scale_names[0]), dtype=torch.float32, device=pp.device)
    if scale_b is not None and type(scale_b) in NUMBER_TYPES:
        scale_b = torch.full((1,), as_float32(scale_b, pp.scale_names[1]), dtype=torch.float32, device=pp.device)
    launch(pp, RawArgs(a.data_ptr(), b.data_ptr(), c.data_ptr() if c is not None else None, pd,
                       scale_a.data_ptr() if scale_a is not None else None,
                       scale_b.data_ptr() if scale_b is not None else None,
                       bias.data_ptr() if bias is not None else None, alpha, beta,
                       group_index.data_ptr() if group_index is not None else None))
    return out


__all__ = ["ALIGN_MASK", "CACHE_SIZE", "PlanCache", "Prepared", "RawArgs", "Uncacheable", "clear", "launch",
           "launch_plan_args", "plans", "prepare", "run_cached", "scale_key", "tensor_key", "value_key"]
