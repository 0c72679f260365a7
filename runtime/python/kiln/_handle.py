"""kiln handles (one per CUDA device, living for the process), algo selection with a cache, and problem-level
query/explain. Torch is only imported by the functions that need a device."""
from __future__ import annotations

import ctypes
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from . import _fastpath
from ._capi import (DType, KilnError, Layout, Status, check, explain_text, kiln_algo, kiln_args, kiln_handle,
                    kiln_problem, last_error, load_library)
from ._convert import INT32, as_arch, as_enum, as_int
from ._prepack import packed_k

_handles = {}
_handles_lock = threading.Lock()


def handle(device_index: int | None = None) -> kiln_handle:
    """The kiln handle of a CUDA device (None: the current one), created on first use with that device current.
    Index -1 is the device-less handle that queries and explains use where there is no torch or no CUDA device.

    Handles live until close(): destroying them at interpreter exit would race torch's own CUDA teardown.
    """
    lib = load_library()
    device_index = _current_device() if device_index is None else as_int(device_index, "device_index", INT32)
    h = _handles.get(device_index)
    if h is not None:
        return h
    with _handles_lock:
        h = _handles.get(device_index)
        if h is None:
            h = kiln_handle()
            if device_index >= 0:
                import torch
                with torch.cuda.device(device_index):
                    torch.empty(1, device=f"cuda:{device_index}")  # makes torch's (primary) context current
                    check(lib.kiln_create(ctypes.byref(h)), "kiln_create")
            else:
                check(lib.kiln_create(ctypes.byref(h)), "kiln_create")
            if device_index in _arch_overrides:
                check(lib.kiln_set_arch(h, _arch_overrides[device_index]), "kiln_set_arch", handle=h)
            _handles[device_index] = h
    return h


def close() -> None:
    """Destroy every handle this module created (and forget the algo cache, the prepared plans of the ops and the
    set_arch choices)."""
    lib = load_library()
    with _handles_lock:
        _fastpath.clear()  # first: no cached plan may run on a handle being destroyed
        for dev, h in list(_handles.items()):
            check(lib.kiln_destroy(h), "kiln_destroy")
            del _handles[dev]
        _algo_cache.clear()
        _arch_overrides.clear()
        _fastpath.clear()  # again: a plan prepared while the handles went


# device index -> arch name given to set_arch, applied again to a handle created after close().
_arch_overrides = {}


def set_arch(arch: str, device_index: int | None = None) -> None:
    """Select kernels for `arch` ("sm90", "gfx942", ...) instead of the device's own arch, on the default handle
    (torch's current CUDA device; without torch or CUDA, the device-less handle that queries and explains use).

    This is how a machine without the GPU asks what kiln would choose there:
        kiln.set_arch("sm90"); kiln.explain_problem(kiln.make_problem(...))
    An arch the library does not know raises KilnError (KILN_STATUS_INVALID_VALUE). It is meant for queries and
    explains: a handle set to an arch other than its device's has no code to run there."""
    raw = as_arch(arch)
    device_index = _current_device() if device_index is None else as_int(device_index, "device_index", INT32)
    h = handle(device_index)
    check(load_library().kiln_set_arch(h, raw), "kiln_set_arch", f"arch={arch!r}", handle=h)
    with _handles_lock:
        _arch_overrides[device_index] = raw
        for key in [key for key in _algo_cache if key[0] == device_index]:
            del _algo_cache[key]
        _fastpath.clear()


def _current_device() -> int:
    """Index of torch's current CUDA device, or -1 when there is no torch or no CUDA (queries still work)."""
    try:
        import torch
    except ImportError:
        return -1
    return torch.cuda.current_device() if torch.cuda.is_available() else -1


def device_arch(device_index: int | None = None) -> str:
    """kiln_device_arch of the handle for the device: "sm90", "gfx942", ... or "none" (the arch set_arch chose,
    when it was called)."""
    h = handle(device_index)
    out = ctypes.c_char_p()
    check(load_library().kiln_device_arch(h, ctypes.byref(out)), "kiln_device_arch", handle=h)
    return out.value.decode()


@dataclass(frozen=True)
class AlgoInfo:
    """One candidate from kiln_query, with its kernel name. `algo` is the POD to pass back (algo=...)."""
    name: str
    name_hash: int
    solution_index: int
    gsu: int
    workspace_bytes: int
    algo: kiln_algo = field(compare=False, repr=False)


def algo_info(h: kiln_handle, algo: kiln_algo) -> AlgoInfo:
    name = ctypes.c_char_p()
    check(load_library().kiln_algo_name(h, ctypes.byref(algo), ctypes.byref(name)), "kiln_algo_name", handle=h)
    return AlgoInfo(name.value.decode(), algo.name_hash, algo.solution_index, algo.gsu, algo.workspace_bytes,
                    algo.copy())


def _fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def algo_by_name(name: str, device_index: int | None = None) -> AlgoInfo:
    """The algo of a kernel named in the library's table, for forcing it with algo= even where kiln_query would not
    offer it (another selection logic's kernel of the same problem type, a tuning variant). kiln_run still checks
    that it fits the problem. Its workspace is sized per problem at run time (kiln_abi.h: gsu * batch * m * n
    floats)."""
    if not isinstance(name, str):
        raise TypeError(f"algo_by_name: name must be a str, got {type(name).__name__}")
    match = re.search(r"_GSU(\d+)_", name)
    algo = kiln_algo(name_hash=_fnv1a64(name), solution_index=0xFFFFFFFF, gsu=int(match.group(1)) if match else 1,
                     workspace_bytes=0)
    info = algo_info(handle(device_index), algo)  # KilnError INVALID_ALGO when the library has no such kernel
    if info.name != name:
        raise KilnError(Status.INVALID_ALGO, "algo_by_name", f"{name} resolved to {info.name}")
    return info


def split_k_workspace(p: kiln_problem, gsu: int) -> int:
    """Bytes of split-K partials a gsu > 1 kernel needs (kiln_abi.h)."""
    return gsu * p.batch * p.m * p.n * 4 if gsu > 1 else 0


def as_kiln_algo(algo) -> kiln_algo | None:
    if algo is None or isinstance(algo, kiln_algo):
        return algo
    if isinstance(algo, AlgoInfo):
        return algo.algo
    raise TypeError(f"algo= takes an AlgoInfo from kiln.query() or a kiln_algo, not {type(algo).__name__}")


_MAKE_PROBLEM_CHECKS = {name: (convert, f"make_problem: {name}") for name, convert in kiln_problem._converters_.items()}


def make_problem(a: DType, b: DType, d: DType, layout: Layout, m: int, n: int, k: int, **fields) -> kiln_problem:
    """kiln_problem_init, then any kiln_problem field overridden by keyword. b_prepacked=1 also sets the packed ldb.

    Every value is checked before it reaches ctypes: a non-integer is a TypeError, and an integer its C field cannot
    hold (int64 sizes; enums outside the C enum; flags other than 0/1) a ValueError naming the field and the value.
    What the C types hold but kiln does not accept (m = -1, lda < k) is the library's to refuse: KilnError."""
    types = (as_enum(a, "make_problem: a", DType), as_enum(b, "make_problem: b", DType),
             as_enum(d, "make_problem: d", DType), as_enum(layout, "make_problem: layout", Layout))
    m, n, k = as_int(m, "make_problem: m"), as_int(n, "make_problem: n"), as_int(k, "make_problem: k")
    for key, value in fields.items():  # all checked before the library is asked anything
        check_field = _MAKE_PROBLEM_CHECKS.get(key)
        if check_field is None:
            raise AttributeError(f"kiln_problem has no field {key!r}")
        fields[key] = check_field[0](value, check_field[1])
    p = kiln_problem()
    check(load_library().kiln_problem_init(ctypes.byref(p), *types, m, n, k), "kiln_problem_init",
          f"m={m}, n={n}, k={k}")
    if fields.get("b_prepacked"):
        p.ldb = packed_k(k)
        p.stride_b = n * p.ldb
    p.set_converted(fields)
    return p


def query_problem(p: kiln_problem, k: int = 8, args: kiln_args | None = None, device_index: int | None = None,
                  where: str = "kiln_query") -> list:
    """Up to k AlgoInfo, best first. Statuses other than success raise KilnError."""
    _check_problem_arg(p, args, where)
    k = as_int(k, f"{where}: k", INT32)
    h = handle(device_index)
    algos = (kiln_algo * max(k, 1))()
    returned = ctypes.c_int(0)
    check(load_library().kiln_query(h, ctypes.byref(p), ctypes.byref(args) if args is not None else None, algos, k,
                                    ctypes.byref(returned)), where, repr(p), handle=h)
    return [algo_info(h, algos[i]) for i in range(returned.value)]


def _check_problem_arg(p, args, where: str) -> None:
    if not isinstance(p, kiln_problem):
        raise TypeError(f"{where}: the problem must be a kiln_problem (kiln.make_problem), got {type(p).__name__}")
    if args is not None and not isinstance(args, kiln_args):
        raise TypeError(f"{where}: args must be a kiln_args or None, got {type(args).__name__}")


def explain_problem(p: kiln_problem, args: kiln_args | None = None, device_index: int | None = None) -> str:
    """kiln_explain's account of how the problem's kernel is selected.

    kiln_explain writes its text whatever the status. When the selection fails (no solution, an invalid problem,
    no device and no set_arch) this raises KilnError with that text in .explanation and at the end of its message,
    so the account of why is never lost; on success it returns the text."""
    _check_problem_arg(p, args, "explain")
    h = handle(device_index)
    status, text = explain_text(h, p, args)
    if status != Status.SUCCESS:
        raise KilnError(status, "kiln_explain", "", last_error(h), text)
    return text


# Best algo per (device, problem bytes, pointer alignment): kiln_query only looks at pointers for alignment, so the
# low bits of each pointer are all of the arguments that can change its answer.
_ALGO_CACHE_SIZE = 1024
_algo_cache = OrderedDict()


def _alignment_signature(args: kiln_args) -> tuple:
    return tuple((getattr(args, f) or 0) & 255 for f in ("a", "b", "c", "d", "scale_a", "scale_b", "bias"))


def select(p: kiln_problem, args: kiln_args, device_index: int) -> kiln_algo | None:
    """The algo kiln_run should use, or None to let kiln_run (with no algo) report why nothing fits.

    When no candidate accepts these pointers but some accept the problem, the best of those is returned so that
    kiln_run, not this binding, reports the alignment error (KILN_STATUS_MISALIGNED) and launches nothing.
    """
    key = (device_index, bytes(p), _alignment_signature(args))
    hit = _algo_cache.get(key)
    if hit is not None:
        _algo_cache.move_to_end(key)
        return hit
    h = handle(device_index)
    lib = load_library()
    algo = kiln_algo()
    returned = ctypes.c_int(0)
    status = lib.kiln_query(h, ctypes.byref(p), ctypes.byref(args), ctypes.byref(algo), 1, ctypes.byref(returned))
    text = last_error(h) if status != Status.SUCCESS else ""
    if status == Status.SUCCESS and returned.value > 0:
        _algo_cache[key] = algo
        if len(_algo_cache) > _ALGO_CACHE_SIZE:
            _algo_cache.popitem(last=False)
        return algo
    unfiltered = kiln_algo()
    status2 = lib.kiln_query(h, ctypes.byref(p), None, ctypes.byref(unfiltered), 1, ctypes.byref(returned))
    if status2 == Status.SUCCESS and returned.value > 0:
        return unfiltered
    if status != Status.SUCCESS:
        raise KilnError(status, "kiln_query", repr(p), text)
    return None


def resolve(p: kiln_problem, args: kiln_args, algo, device, where: str) -> tuple:
    """(handle, device index, algo, workspace bytes) of a run of `p` with these pointers on a CUDA `device`: the algo
    given (an AlgoInfo or a kiln_algo) or select()'s, and the workspace it needs. Runs themselves go through
    _fastpath.launch, on torch's current stream of `device` with a workspace from torch's allocator.

    Empty problems go to the library like any other (kiln.h, "Empty problems"): it launches nothing for M, N or
    batch = 0 and writes act(beta*C + bias) for K = 0."""
    require_runnable(device, where)
    algo = as_kiln_algo(algo)
    index = device.index
    if device.type != "cuda":
        index = -1  # the device-less handle: reached only where a test lets CPU tensors through to a stubbed launch
    elif index is None:
        import torch
        index = torch.cuda.current_device()
    if algo is None:
        algo = select(p, args, index)
    h = handle(index)
    ws_bytes = int(algo.workspace_bytes) if algo is not None else 0
    if algo is not None and ws_bytes == 0 and algo.gsu > 1:  # from algo_by_name: sized for this problem here
        ws_bytes = split_k_workspace(p, algo.gsu)
    return h, index, algo, ws_bytes


def require_runnable(device, where: str) -> None:
    if device.type != "cuda":
        raise ValueError(f"{where}: kiln runs on CUDA tensors; got {device} (query/explain take any device)")
