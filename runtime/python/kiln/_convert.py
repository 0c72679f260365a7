"""Python values -> C values, checked before they reach ctypes.

ctypes stores an integer into a field or an argument modulo the C type's width without a word (2**64 + 64 lands as
64 in an int64_t), and turns a float too large for a float32 into inf. Every value the binding hands to libkiln goes
through one of these converters first, which raise a TypeError for a value of the wrong kind and a ValueError, naming
the field and the value, for one the C type or the C enum cannot hold.
"""
from __future__ import annotations

import ctypes
import enum
import math
import operator

INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)
UINT32 = (0, (1 << 32) - 1)
UINT64 = (0, (1 << 64) - 1)
SIZE_T = (0, (1 << (8 * ctypes.sizeof(ctypes.c_size_t))) - 1)
POINTER = (0, (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1)
FLT_MAX = 3.4028234663852886e38

# The bounds of each integer ctypes type kiln's structs and prototypes use.
CTYPE_BOUNDS = {
    ctypes.c_int: INT32,
    ctypes.c_int64: INT64,
    ctypes.c_uint32: UINT32,
    ctypes.c_uint64: UINT64,
    ctypes.c_size_t: SIZE_T,
}


def as_int(value, what: str, bounds: tuple = INT64) -> int:
    """value as a Python int within bounds (inclusive). Takes ints, bools and anything with __index__ (numpy
    integers, IntEnum members); a float, even a whole one, is a TypeError rather than a silent truncation."""
    if type(value) is int:  # the common case, without the call
        v = value
    else:
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}") from None
    lo, hi = bounds
    if not lo <= v <= hi:
        raise ValueError(f"{what} = {v} does not fit its C type ({lo}..{hi})")
    return v


def as_flag(value, what: str) -> int:
    """A C int flag: 0 or 1 (True/False)."""
    v = as_int(value, what, INT64)
    if v not in (0, 1):
        raise ValueError(f"{what} = {v}: a flag is 0 or 1")
    return v


def as_enum(value, what: str, enum_type: type) -> int:
    """A member of a kiln enum (or its number): the values the C enum defines, and nothing else."""
    if isinstance(value, enum.Enum) and not isinstance(value, enum_type):
        raise TypeError(f"{what} must be a {enum_type.__name__}, got {type(value).__name__}.{value.name}")
    v = as_int(value, what, INT64)
    if v not in enum_type._value2member_map_:
        names = ", ".join(f"{m.value} {m.name}" for m in enum_type)
        raise ValueError(f"{what} = {v} is not a {enum_type.__name__} ({names})")
    return v


def as_float32(value, what: str) -> float:
    """A host float32 (alpha, beta): any real number a float32 holds; inf and nan pass as they are."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__float__"):
        raise TypeError(f"{what} must be a real number, got {type(value).__name__} {value!r}")
    v = float(value)
    if math.isfinite(v) and abs(v) > FLT_MAX:
        raise ValueError(f"{what} = {v!r} does not fit a float32 (|x| <= {FLT_MAX:.7g})")
    return v


def as_pointer(value, what: str):
    """A C pointer: None (NULL) or an address."""
    if value is None:
        return None
    return as_int(value, what, POINTER)


def as_arch(value, what: str = "arch") -> bytes:
    """An arch name for kiln_set_arch: a non-empty str (or bytes) without NUL."""
    if isinstance(value, str):
        raw = value.encode("utf-8")
    elif isinstance(value, bytes):
        raw = value
    else:
        raise TypeError(f"{what} must be a str such as 'sm90' or 'gfx942', got {type(value).__name__}")
    if not raw or b"\0" in raw:
        raise ValueError(f"{what} = {value!r}: want a non-empty name without NUL")
    return raw


def field_converters(fields: list, enums: dict, flags: frozenset) -> dict:
    """{field: convert(value, what)} for a ctypes _fields_ list: enum fields, flags, then by C type."""
    out = {}
    for name, ctype in fields:
        if name in enums:
            enum_type = enums[name]
            out[name] = lambda v, what, _e=enum_type: as_enum(v, what, _e)
        elif name in flags:
            out[name] = as_flag
        elif ctype is ctypes.c_float:
            out[name] = as_float32
        elif ctype is ctypes.c_void_p:
            out[name] = as_pointer
        elif ctype in CTYPE_BOUNDS:
            bounds = CTYPE_BOUNDS[ctype]
            out[name] = lambda v, what, _b=bounds: as_int(v, what, _b)
        else:
            raise TypeError(f"no converter for field {name} of C type {ctype.__name__}")
    return out


_set_field = ctypes.Structure.__setattr__


class CheckedStructure(ctypes.Structure):
    """A ctypes Structure whose fields are set only through their converters (constructor keywords too): a value
    that the field cannot hold raises instead of being truncated, and a misspelt field name is an AttributeError
    rather than a new Python attribute. Subclasses define _fields_, _enums_ {field: enum} and _flags_."""

    _enums_: dict = {}
    _flags_: frozenset = frozenset()
    _converters_: dict = {}
    _checks_: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._converters_ = field_converters(cls.__dict__.get("_fields_", []), cls._enums_, cls._flags_)
        # What an error names, made once: __setattr__ is on the path of every run.
        cls._checks_ = {name: (convert, f"{cls.__name__}.{name}") for name, convert in cls._converters_.items()}

    def __setattr__(self, name, value):
        check = self._checks_.get(name)
        if check is None:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        _set_field(self, name, check[0](value, check[1]))

    def set_converted(self, values: dict) -> None:
        """Set values already passed through their fields' converters (the caller checked them earlier)."""
        for name, value in values.items():
            if name not in self._checks_:
                raise AttributeError(f"{type(self).__name__} has no field {name!r}")
            _set_field(self, name, value)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name, _t in self._fields_}
