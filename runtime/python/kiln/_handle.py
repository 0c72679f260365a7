"""kiln handles (one per CUDA device, living for the process), algo selection with a cache, and problem-level
query/explain. Torch is only imported by the functions that need a device."""
from __future__ import annotations

import ctypes
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ._capi import (DType, KilnError, Layout, Status, check, kiln_algo, kiln_args, kiln_handle, kiln_problem,
                    load_library)
from ._prepack import packed_k

_handles = {}
_handles_lock = threading.Lock()
_EXPLAIN_BYTES = 1 << 16


def handle(device_index: int | None = None) -> kiln_handle:
    """The kiln handle of a CUDA device (None: the current one), created on first use with that device current.

    Handles live until close(): destroying them at interpreter exit would race torch's own CUDA teardown.
    """
    lib = load_library()
    if device_index is None:
        device_index = _current_device()
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
            _handles[device_index] = h
    return h


def close() -> None:
    """Destroy every handle this module created (and forget the algo cache)."""
    lib = load_library()
    with _handles_lock:
        for dev, h in list(_handles.items()):
            check(lib.kiln_destroy(h), "kiln_destroy")
            del _handles[dev]
        _algo_cache.clear()


def _current_device() -> int:
    """Index of torch's current CUDA device, or -1 when there is no torch or no CUDA (queries still work)."""
    try:
        import torch
    except ImportError:
        return -1
    return torch.cuda.current_device() if torch.cuda.is_available() else -1


def device_arch(device_index: int | None = None) -> str:
    """kiln_device_arch of the handle for the device: "sm90", "gfx942", ... or "none"."""
    out = ctypes.c_char_p()
    check(load_library().kiln_device_arch(handle(device_index), ctypes.byref(out)), "kiln_device_arch")
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
    check(load_library().kiln_algo_name(h, ctypes.byref(algo), ctypes.byref(name)), "kiln_algo_name")
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


def make_problem(a: DType, b: DType, d: DType, layout: Layout, m: int, n: int, k: int, **fields) -> kiln_problem:
    """kiln_problem_init, then any kiln_problem field overridden by keyword. b_prepacked=1 also sets the packed ldb."""
    p = kiln_problem()
    check(load_library().kiln_problem_init(ctypes.byref(p), int(a), int(b), int(d), int(layout), m, n, k),
          "kiln_problem_init")
    if fields.get("b_prepacked"):
        p.ldb = packed_k(k)
        p.stride_b = n * p.ldb
    for key, value in fields.items():
        if not hasattr(p, key):
            raise AttributeError(f"kiln_problem has no field {key!r}")
        setattr(p, key, int(value))
    return p


def query_problem(p: kiln_problem, k: int = 8, args: kiln_args | None = None, device_index: int | None = None,
                  where: str = "kiln_query") -> list:
    """Up to k AlgoInfo, best first. Statuses other than success raise KilnError."""
    h = handle(device_index)
    algos = (kiln_algo * max(k, 1))()
    returned = ctypes.c_int(0)
    check(load_library().kiln_query(h, ctypes.byref(p), ctypes.byref(args) if args is not None else None, algos, k,
                                    ctypes.byref(returned)), where, repr(p))
    return [algo_info(h, algos[i]) for i in range(returned.value)]


def explain_problem(p: kiln_problem, args: kiln_args | None = None, device_index: int | None = None) -> str:
    buf = ctypes.create_string_buffer(_EXPLAIN_BYTES)
    check(load_library().kiln_explain(handle(device_index), ctypes.byref(p),
                                      ctypes.byref(args) if args is not None else None, buf, len(buf)),
          "kiln_explain", repr(p))
    return buf.value.decode(errors="replace")


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
        raise KilnError(status, "kiln_query", repr(p))
    return None


def run(p: kiln_problem, args: kiln_args, algo, device, where: str) -> None:
    """kiln_run on torch's current stream of `device`, with a workspace from torch's allocator."""
    import torch

    algo = as_kiln_algo(algo)
    index = device.index if device.index is not None else torch.cuda.current_device()
    if algo is None:
        algo = select(p, args, index)
    h = handle(index)
    ws_bytes = int(algo.workspace_bytes) if algo is not None else 0
    if algo is not None and ws_bytes == 0 and algo.gsu > 1:  # from algo_by_name: sized for this problem here
        ws_bytes = split_k_workspace(p, algo.gsu)
    workspace = torch.empty(ws_bytes, dtype=torch.uint8, device=device) if ws_bytes else None
    stream = torch.cuda.current_stream(device).cuda_stream
    with torch.cuda.device(index):
        status = load_library().kiln_run(h, ctypes.byref(p), ctypes.byref(algo) if algo is not None else None,
                                         ctypes.byref(args), workspace.data_ptr() if workspace is not None else None,
                                         ws_bytes, stream or None)
    check(status, where, repr(p))
