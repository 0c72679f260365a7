"""ctypes mirror of runtime/include/kiln/kiln.h: enums, structs, library loading and status checking.

Nothing here imports torch, so the mirror can be checked against the header, and the host side of the API used
(kiln-gen explain does), on a machine without torch or a GPU. The structs check every value set into them
(_convert.py): nothing reaches the library truncated.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import enum
import os
import pathlib
import threading

from ._convert import CheckedStructure

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
HEADER = REPO_ROOT / "runtime" / "include" / "kiln" / "kiln.h"
API_VERSION = 8  # KILN_API_VERSION this binding was written against


class Status(enum.IntEnum):
    SUCCESS = 0
    NULL_POINTER = 1
    INVALID_VALUE = 2
    MISALIGNED = 3
    NOT_SUPPORTED = 4
    OVERFLOW = 5
    NO_DEVICE = 6
    NO_CODE_FOR_DEVICE = 7
    NO_SOLUTION = 8
    WORKSPACE_TOO_SMALL = 9
    INVALID_ALGO = 10
    DRIVER_ERROR = 11
    INTERNAL_ERROR = 12


class DType(enum.IntEnum):
    F32 = 0
    F16 = 1
    BF16 = 2
    E4M3 = 3
    E5M2 = 4
    E4M3FNUZ = 5
    E5M2FNUZ = 6


class Layout(enum.IntEnum):
    TN = 0  # A[m][k], B[n][k]
    NN = 1  # A[m][k], B[k][n]


class ScaleMode(enum.IntEnum):
    NONE = 0
    TENSOR = 1
    VECTOR = 2
    BLOCK = 3  # one float32 per group of 128 along K (kiln.h, "Block scales")


class GroupMode(enum.IntEnum):
    NONE = 0
    CONTIGUOUS = 1  # the groups' rows back to back; group_index = end rows (torch's offs)
    MASKED = 2      # one padded batch per group; group_index = valid rows (masked_m)
    K = 3           # groups along K (weight gradient); group_index = end columns; D [G, M, N]


class Activation(enum.IntEnum):
    NONE = 0
    RELU = 1
    GELU = 2
    SILU = 3


# Each Python enum and the C prefix of its constants; the header's *_COUNT constants are checked against len(enum).
C_ENUMS = {
    Status: "KILN_STATUS_",
    DType: "KILN_DTYPE_",
    Layout: "KILN_LAYOUT_",
    ScaleMode: "KILN_SCALE_",
    Activation: "KILN_ACT_",
    GroupMode: "KILN_GROUP_",
}

_enum_t = ctypes.c_int  # every kiln enum is a plain C enum with small non-negative values: int-sized


class kiln_problem(CheckedStructure):
    _fields_ = [
        ("a_type", _enum_t), ("b_type", _enum_t), ("d_type", _enum_t),
        ("layout", _enum_t),
        ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64), ("batch", ctypes.c_int64),
        ("lda", ctypes.c_int64), ("ldb", ctypes.c_int64), ("ldc", ctypes.c_int64), ("ldd", ctypes.c_int64),
        ("stride_a", ctypes.c_int64), ("stride_b", ctypes.c_int64),
        ("stride_c", ctypes.c_int64), ("stride_d", ctypes.c_int64),
        ("scale_a", _enum_t), ("scale_b", _enum_t),
        ("has_bias", ctypes.c_int),
        ("bias_type", _enum_t),
        ("has_c", ctypes.c_int),
        ("activation", _enum_t),
        ("b_prepacked", ctypes.c_int),
        ("scale_a_stride_m", ctypes.c_int64), ("scale_a_stride_k", ctypes.c_int64),
        ("scale_b_stride_n", ctypes.c_int64), ("scale_b_stride_k", ctypes.c_int64),
        ("scale_b_block_n", ctypes.c_int64),
        ("group_mode", _enum_t),
        ("groups", ctypes.c_int64),
        ("scale_a_stride_g", ctypes.c_int64), ("scale_b_stride_g", ctypes.c_int64), ("bias_stride_g", ctypes.c_int64),
        ("fast_accum", ctypes.c_int),
    ]
    _enums_ = {"a_type": DType, "b_type": DType, "d_type": DType, "layout": Layout, "scale_a": ScaleMode,
               "scale_b": ScaleMode, "bias_type": DType, "activation": Activation, "group_mode": GroupMode}
    _flags_ = frozenset({"has_bias", "has_c", "b_prepacked", "fast_accum"})

    def __repr__(self) -> str:
        d = self.as_dict()
        for field, enum_type in self._enums_.items():
            try:
                d[field] = enum_type(d[field]).name
            except ValueError:
                pass
        return "kiln_problem(" + ", ".join(f"{k}={v}" for k, v in d.items()) + ")"


class kiln_args(CheckedStructure):
    _fields_ = [
        ("a", ctypes.c_void_p), ("b", ctypes.c_void_p), ("c", ctypes.c_void_p),
        ("d", ctypes.c_void_p),
        ("scale_a", ctypes.c_void_p), ("scale_b", ctypes.c_void_p),  # const float * on the device
        ("bias", ctypes.c_void_p),
        ("alpha", ctypes.c_float), ("beta", ctypes.c_float),
        ("group_index", ctypes.c_void_p),  # const int32_t * on the device (grouped problems)
    ]


class kiln_algo(CheckedStructure):
    _fields_ = [
        ("name_hash", ctypes.c_uint64),
        ("solution_index", ctypes.c_uint32),
        ("gsu", ctypes.c_uint32),
        ("workspace_bytes", ctypes.c_uint64),
    ]

    def copy(self) -> "kiln_algo":
        return kiln_algo.from_buffer_copy(self)


class kiln_attn_problem(CheckedStructure):
    _fields_ = [
        ("qkv_type", _enum_t), ("o_type", _enum_t),
        ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64), ("heads_kv", ctypes.c_int64),
        ("seqlen_q", ctypes.c_int64), ("seqlen_k", ctypes.c_int64), ("head_dim", ctypes.c_int64),
        ("causal", ctypes.c_int), ("varlen", ctypes.c_int), ("has_lse", ctypes.c_int),
        ("descale", _enum_t),
        ("q_stride_b", ctypes.c_int64), ("q_stride_s", ctypes.c_int64), ("q_stride_h", ctypes.c_int64),
        ("k_stride_b", ctypes.c_int64), ("k_stride_s", ctypes.c_int64), ("k_stride_h", ctypes.c_int64),
        ("v_stride_b", ctypes.c_int64), ("v_stride_s", ctypes.c_int64), ("v_stride_h", ctypes.c_int64),
        ("o_stride_b", ctypes.c_int64), ("o_stride_s", ctypes.c_int64), ("o_stride_h", ctypes.c_int64),
        ("total_q", ctypes.c_int64), ("total_k", ctypes.c_int64),
        ("fp8_p", ctypes.c_int), ("v_packed", ctypes.c_int),
    ]
    _enums_ = {"qkv_type": DType, "o_type": DType, "descale": ScaleMode}
    _flags_ = frozenset({"causal", "varlen", "has_lse", "fp8_p"})  # (v_packed: 0, 1 or 2)


class kiln_attn_args(CheckedStructure):
    _fields_ = [
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
        ("cu_seqlens_q", ctypes.c_void_p), ("cu_seqlens_k", ctypes.c_void_p),
        ("q_descale", ctypes.c_void_p), ("k_descale", ctypes.c_void_p), ("v_descale", ctypes.c_void_p),
        ("softmax_scale", ctypes.c_float),
        ("vt_work", ctypes.c_void_p), ("vt_work_bytes", ctypes.c_size_t),
        ("split_work", ctypes.c_void_p), ("split_work_bytes", ctypes.c_size_t),
    ]


kiln_handle = ctypes.c_void_p

_P = ctypes.POINTER
# Every function of kiln.h: name -> (restype, argtypes). Statuses come back as int and go through check().
PROTOTYPES = {
    "kiln_status_string": (ctypes.c_char_p, [_enum_t]),
    "kiln_dtype_name": (ctypes.c_char_p, [_enum_t]),
    "kiln_create": (_enum_t, [_P(kiln_handle)]),
    "kiln_destroy": (_enum_t, [kiln_handle]),
    "kiln_device_arch": (_enum_t, [kiln_handle, _P(ctypes.c_char_p)]),
    "kiln_set_arch": (_enum_t, [kiln_handle, ctypes.c_char_p]),
    "kiln_problem_init": (_enum_t, [_P(kiln_problem), _enum_t, _enum_t, _enum_t, _enum_t,
                                    ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]),
    "kiln_check_problem": (_enum_t, [kiln_handle, _P(kiln_problem)]),
    "kiln_query": (_enum_t, [kiln_handle, _P(kiln_problem), _P(kiln_args), _P(kiln_algo), ctypes.c_int,
                             _P(ctypes.c_int)]),
    "kiln_explain": (_enum_t, [kiln_handle, _P(kiln_problem), _P(kiln_args), _P(ctypes.c_char), ctypes.c_size_t]),
    "kiln_algo_name": (_enum_t, [kiln_handle, _P(kiln_algo), _P(ctypes.c_char_p)]),
    "kiln_run": (_enum_t, [kiln_handle, _P(kiln_problem), _P(kiln_algo), _P(kiln_args), ctypes.c_void_p,
                           ctypes.c_size_t, ctypes.c_void_p]),
    "kiln_prepack_b_size": (_enum_t, [ctypes.c_int64, ctypes.c_int64, _P(ctypes.c_size_t), _P(ctypes.c_int64)]),
    "kiln_prepack_b": (_enum_t, [ctypes.c_void_p, _enum_t, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                 ctypes.c_void_p, ctypes.c_size_t]),
}


# Functions a library built before them lacks: bound when present, and the binding works without them.
OPTIONAL_PROTOTYPES = {
    "kiln_last_error": (ctypes.c_char_p, [kiln_handle]),
    "kiln_attn_problem_init": (_enum_t, [_P(kiln_attn_problem), _enum_t, _enum_t, ctypes.c_int64, ctypes.c_int64,
                                         ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]),
    "kiln_attn_check": (_enum_t, [kiln_handle, _P(kiln_attn_problem)]),
    "kiln_attn_query": (_enum_t, [kiln_handle, _P(kiln_attn_problem), _P(kiln_algo), ctypes.c_int,
                                  _P(ctypes.c_int)]),
    "kiln_attn_explain": (_enum_t, [kiln_handle, _P(kiln_attn_problem), _P(ctypes.c_char), ctypes.c_size_t]),
    "kiln_attn_run": (_enum_t, [kiln_handle, _P(kiln_attn_problem), _P(kiln_algo), _P(kiln_attn_args),
                                ctypes.c_void_p]),
    "kiln_explain_size": (_enum_t, [kiln_handle, _P(kiln_problem), _P(kiln_args), _P(ctypes.c_size_t)]),
    "kiln_attn_pack_v_size": (_enum_t, [_P(kiln_attn_problem), _P(ctypes.c_size_t)]),
    "kiln_attn_split_work_size": (_enum_t, [kiln_handle, _P(kiln_attn_problem), _P(kiln_algo),
                                            _P(ctypes.c_size_t)]),
    "kiln_attn_pack_v": (_enum_t, [kiln_handle, _P(kiln_attn_problem), ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]),
}
EXPLAIN_BYTES = 1 << 16  # kiln_explain's buffer where the library has no kiln_explain_size


class KilnError(RuntimeError):
    """A kiln_* call returned a status other than KILN_STATUS_SUCCESS.

    .status: a Status; .where: the call; .text: kiln_last_error's field-level account ("lda = ...: ..."), "" when
    the library gives none; .detail: what the binding adds (the problem); .explanation: kiln_explain's full text
    when the failing call was an explain, else "". str() holds all of them.
    """

    def __init__(self, status: int, where: str, detail: str = "", text: str = "", explanation: str = ""):
        self.status = Status(status) if status in Status._value2member_map_ else status
        self.where = where
        self.detail = detail
        self.text = text
        self.explanation = explanation
        name = self.status.name if isinstance(self.status, Status) else f"status {status}"
        meaning = status_string(status)
        msg = f"{where}: KILN_STATUS_{name} ({meaning})" if meaning else f"{where}: KILN_STATUS_{name}"
        if text:
            msg += f": {text}"
        if detail:
            msg += f" -- {detail}"
        if explanation:
            msg += "\n" + explanation.rstrip("\n")
        super().__init__(msg)


def status_string(status: int) -> str:
    """kiln_status_string, or "" when the library cannot be loaded."""
    try:
        raw = load_library().kiln_status_string(int(status))
    except OSError:
        return ""
    return raw.decode() if raw else ""


def last_error(handle=None) -> str:
    """kiln_last_error(handle): the field-level text of the last failing call on that handle (None: this thread's
    handle-less calls), "" after a success or when the library predates kiln_last_error."""
    try:
        fn = getattr(load_library(), "kiln_last_error", None)
    except OSError:
        return ""
    if fn is None:
        return ""
    raw = fn(handle)
    return raw.decode(errors="replace") if raw else ""


def explain_text(handle, p: kiln_problem, args: kiln_args | None = None) -> tuple:
    """(status, text) of kiln_explain. The text is there whatever the status: how far the selection got and why it
    stopped. The buffer is as large as kiln_explain_size says, where the library has it."""
    lib = load_library()
    pargs = ctypes.byref(args) if args is not None else None
    size = EXPLAIN_BYTES
    sizer = getattr(lib, "kiln_explain_size", None)
    if sizer is not None:
        need = ctypes.c_size_t()
        if sizer(handle, ctypes.byref(p), pargs, ctypes.byref(need)) == Status.SUCCESS and need.value > 0:
            size = need.value
    buf = ctypes.create_string_buffer(size)
    status = lib.kiln_explain(handle, ctypes.byref(p), pargs, buf, len(buf))
    return status, buf.value.decode(errors="replace")


def check(status: int, where: str, detail: str = "", handle=None) -> None:
    """Raise KilnError for a failed call, with the library's text for `handle` (call right after the call)."""
    if status != Status.SUCCESS:
        raise KilnError(status, where, detail, last_error(handle))


_lib = None
_lib_path = None
_lib_lock = threading.Lock()


PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
LIBRARY_NAME = "libkiln.so"


def recorded_library() -> str | None:
    """The library an installed package was built with: the path `pip install` recorded in kiln/_build_info.py
    (runtime/python/setup.py writes it into the wheel, never into the source tree); None in the source tree, or
    when the build found no library to record (or bundled it into the package directory instead)."""
    try:
        from . import _build_info
    except ImportError:
        return None
    return getattr(_build_info, "LIBRARY", None) or None


def in_source_tree() -> bool:
    """Whether this package is the one in the repository (runtime/python/kiln), not an installed copy."""
    return HEADER.is_file()


def tree_libraries() -> list:
    """The repository's built libraries, in the order they are tried: build/libkiln.so, then the other
    build*/libkiln.so, newest first (test.sh builds build-ci); only those that exist but build/libkiln.so."""
    main = REPO_ROOT / "build" / LIBRARY_NAME
    others = sorted((p for p in REPO_ROOT.glob(f"build*/{LIBRARY_NAME}") if p != main and p.is_file()),
                    key=lambda p: (-p.stat().st_mtime, str(p)))
    return [str(main)] + [str(p) for p in others]


def library_candidates() -> list:
    """Where libkiln is looked for, in order: $KILN_LIBRARY alone when set; else the path recorded when the package
    was installed (pip), a libkiln.so bundled in the package directory, the repository's builds (only for the
    package in the source tree: tree_libraries()), then the system loader."""
    env = os.environ.get("KILN_LIBRARY")
    if env:
        return [env]
    cands = []
    recorded = recorded_library()
    if recorded:
        cands.append(recorded)
    bundled = PACKAGE_DIR / LIBRARY_NAME
    if bundled.is_file():
        cands.append(str(bundled))
    if in_source_tree():
        cands += tree_libraries()
    found = ctypes.util.find_library("kiln")
    if found:
        cands.append(found)
    return cands


def _bind(lib: ctypes.CDLL) -> None:
    for name, (restype, argtypes) in (PROTOTYPES | OPTIONAL_PROTOTYPES).items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = restype
            fn.argtypes = argtypes


def load_library(path: str | None = None) -> ctypes.CDLL:
    """Load libkiln once and declare every prototype; `path` loads that file instead of searching
    library_candidates(). Raises OSError naming every path tried (or, with a path, when another is loaded)."""
    global _lib, _lib_path
    if _lib is not None and path is None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            if path is not None and os.path.realpath(path) != os.path.realpath(_lib_path):
                raise OSError(f"libkiln is already loaded from {_lib_path}; cannot switch to {path}")
            return _lib
        errors = []
        for cand in [path] if path is not None else library_candidates():
            if os.sep in cand and not os.path.exists(cand):
                errors.append(f"{cand}: not found")
                continue
            try:
                lib = ctypes.CDLL(cand)
            except OSError as exc:
                errors.append(f"{cand}: {exc}")
                continue
            missing = [name for name in PROTOTYPES if not hasattr(lib, name)]
            if missing:
                errors.append(f"{cand}: lacks {', '.join(missing)}")
                continue
            _bind(lib)
            _lib, _lib_path = lib, cand
            return lib
        if not errors:
            errors.append("set KILN_LIBRARY or build build/libkiln.so")
        raise OSError("libkiln not loadable: " + "; ".join(errors))


def library_path() -> str | None:
    """Path of the loaded library (None before a successful load_library())."""
    return _lib_path


def library_available() -> tuple:
    """(True, path) or (False, reason)."""
    try:
        load_library()
    except OSError as exc:
        return False, str(exc)
    return True, _lib_path
