"""ctypes mirror of runtime/include/kiln/kiln.h: enums, structs, library loading and status checking.

Nothing here imports torch, so the mirror can be checked against the header on a machine without a GPU.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import enum
import os
import pathlib
import threading

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
HEADER = REPO_ROOT / "runtime" / "include" / "kiln" / "kiln.h"
API_VERSION = 1  # KILN_API_VERSION this binding was written against


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
}

_enum_t = ctypes.c_int  # every kiln enum is a plain C enum with small non-negative values: int-sized


class kiln_problem(ctypes.Structure):
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
    ]

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name, _t in self._fields_}

    def __repr__(self) -> str:
        d = self.as_dict()
        for field, enum_type in (("a_type", DType), ("b_type", DType), ("d_type", DType), ("layout", Layout),
                                 ("scale_a", ScaleMode), ("scale_b", ScaleMode), ("bias_type", DType),
                                 ("activation", Activation)):
            try:
                d[field] = enum_type(d[field]).name
            except ValueError:
                pass
        return "kiln_problem(" + ", ".join(f"{k}={v}" for k, v in d.items()) + ")"


class kiln_args(ctypes.Structure):
    _fields_ = [
        ("a", ctypes.c_void_p), ("b", ctypes.c_void_p), ("c", ctypes.c_void_p),
        ("d", ctypes.c_void_p),
        ("scale_a", ctypes.c_void_p), ("scale_b", ctypes.c_void_p),  # const float * on the device
        ("bias", ctypes.c_void_p),
        ("alpha", ctypes.c_float), ("beta", ctypes.c_float),
    ]


class kiln_algo(ctypes.Structure):
    _fields_ = [
        ("name_hash", ctypes.c_uint64),
        ("solution_index", ctypes.c_uint32),
        ("gsu", ctypes.c_uint32),
        ("workspace_bytes", ctypes.c_uint64),
    ]

    def copy(self) -> "kiln_algo":
        return kiln_algo.from_buffer_copy(self)


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


class KilnError(RuntimeError):
    """A kiln_* call returned a status other than KILN_STATUS_SUCCESS."""

    def __init__(self, status: int, where: str, detail: str = ""):
        self.status = Status(status) if status in Status._value2member_map_ else status
        self.where = where
        self.detail = detail
        name = self.status.name if isinstance(self.status, Status) else f"status {status}"
        text = status_string(status)
        msg = f"{where}: KILN_STATUS_{name} ({text})" if text else f"{where}: KILN_STATUS_{name}"
        if detail:
            msg += f" -- {detail}"
        super().__init__(msg)


def status_string(status: int) -> str:
    """kiln_status_string, or "" when the library cannot be loaded."""
    try:
        raw = load_library().kiln_status_string(int(status))
    except OSError:
        return ""
    return raw.decode() if raw else ""


def check(status: int, where: str, detail: str = "") -> None:
    if status != Status.SUCCESS:
        raise KilnError(status, where, detail)


_lib = None
_lib_path = None
_lib_lock = threading.Lock()


def library_candidates() -> list:
    """Where libkiln is looked for, in order: $KILN_LIBRARY alone when set, else build/libkiln.so, else the loader."""
    env = os.environ.get("KILN_LIBRARY")
    if env:
        return [env]
    cands = [str(REPO_ROOT / "build" / "libkiln.so")]
    found = ctypes.util.find_library("kiln")
    if found:
        cands.append(found)
    return cands


def load_library() -> ctypes.CDLL:
    """Load libkiln once and declare every prototype. Raises OSError naming every path tried."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        errors = []
        for cand in library_candidates():
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
            for name, (restype, argtypes) in PROTOTYPES.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
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
