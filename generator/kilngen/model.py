"""The frozen Solution whose name is its identity, and its inverse (decode). The vocabulary (enums, tables, problem
kinds) is in vocab.py, the parameter catalogue in params.py and the family records in families.py; all are re-exported
here."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from .families import FAMILIES, FAMILY_VENDOR, FAMILY_WAVE, FamilySpec, check, default_mi
from .params import BUILTIN_DEFAULTS, PARAM, PARAM_FIELDS, PARAMS, Param

# Re-exported: the rest of kiln imports its vocabulary from here.
__all__ = ["AMD_INFO", "ARCH_INFO", "BUILTIN_DEFAULTS", "DTYPE_BY_CODE", "DTYPE_INFO", "FAMILIES", "FAMILY_VENDOR",
           "FAMILY_WAVE", "KIND_INFO", "LAYOUT_INFO", "PARAM", "PARAM_FIELDS", "PARAMS", "AmdInfo", "Arch", "ArchInfo",
           "DType", "DTypeInfo", "Family", "FamilySpec", "Kind", "KindSpec", "LaunchKind", "Layout", "LayoutInfo",
           "NameError_", "Param", "Problem", "Solution", "Vendor", "as_dict", "c_enum", "check", "decode", "default_mi",
           "fnv1a64", "is_fp8", "kind_of", "kinds_text"]
from .vocab import (AMD_INFO, ARCH_INFO, DTYPE_BY_CODE, DTYPE_INFO, KIND_INFO, LAYOUT_INFO, AmdInfo,
                    Arch, ArchInfo, DType, DTypeInfo, Family, Kind, KindSpec, LaunchKind, Layout, LayoutInfo, Problem,
                    Vendor, c_enum, is_fp8, kind_of, kinds_text)


@dataclass(frozen=True)
class Solution:
    arch: Arch
    family: Family
    problem: Problem
    mt: tuple
    wg: tuple
    mi: tuple
    pgr: int
    plr: int
    su: int
    sus: int
    sum: int
    lpa: int
    lpb: int
    lxs: int
    gsu: int
    wgm: int
    vwa: int
    vwb: int
    ldsb: int
    tlds: int
    lbspp: int
    wsgr: int
    occ: int
    pk: int
    pr: int = 0
    mc: int = 0
    sab: int = 0

    @property
    def name(self) -> str:
        parts = [self.problem.code]
        for p in PARAMS:
            value = getattr(self, p.field)
            parts.append(p.token + ("x".join(str(v) for v in value) if isinstance(value, tuple) else str(value)))
        parts += [self.family.value.upper(), self.arch.value.upper()]
        return "_".join(parts)

    @property
    def spec(self) -> FamilySpec:
        return FAMILIES[self.family]

    # Derived quantities, computed here once (by asking the family's record) so templates only substitute. They
    # assume the shape rules passed (mt, wg, mi positive).
    @property
    def wave(self) -> int:
        return self.spec.wave

    @property
    def threads(self) -> int:
        return self.spec.threads(self)

    @property
    def consumers(self) -> int:
        return self.spec.consumers(self)

    @property
    def swap(self) -> bool:
        return self.spec.swap(self)

    @property
    def stages(self) -> int:
        return self.spec.stages(self)

    def lds_unroll_major(self, operand: str) -> bool:
        """Whether the operand's LDS rows run along K. mma/wgmma: K-major operands are; AMD: K-major operands follow
        tlds; an N-major B (layout NN) is tile-major in LDS on every family."""
        if operand == "b" and self.problem.layout is Layout.NN:
            return False
        return self.spec.kmajor_unroll_major or self.tlds == 1

    def lds_shape(self, operand: str) -> tuple:
        """(rows, data bytes per row, padding bytes) of an operand's LDS tile."""
        dt = self.problem.a if operand == "a" else self.problem.b
        tile = self.mt[0] if operand == "a" else self.mt[1]
        pad = self.lpa if operand == "a" else self.lpb
        e = DTYPE_INFO[dt].bytes
        return (tile, self.mt[2] * e, pad) if self.lds_unroll_major(operand) else (self.mt[2], tile * e, pad)

    def lds_row_bytes(self, operand: str) -> int:
        _rows, data, pad = self.lds_shape(operand)
        return data + pad

    def lds_tile_bytes(self, operand: str) -> int:
        rows, data, pad = self.lds_shape(operand)
        if self.lbspp:
            return rows * data + (rows * data // self.lbspp) * pad
        return rows * (data + pad)

    @property
    def lds_bytes(self) -> int:
        return self.spec.lds_bytes(self)

    @property
    def align_a(self) -> int:
        return max(1, self.vwa // DTYPE_INFO[self.problem.a].bytes)

    @property
    def align_b(self) -> int:
        return max(1, self.vwb // DTYPE_INFO[self.problem.b].bytes)

    @property
    def native_fp8(self) -> bool:
        """Both operands are fp8 and feed an fp8 matrix instruction (no widening)."""
        return self.problem.both_fp8 and self.spec.native_fp8(self)

    @property
    def upcast(self) -> bool:
        """fp8 operands are widened to f16/bf16 in registers before a 16-bit matrix instruction."""
        pr = self.problem
        return not self.native_fp8 and (is_fp8(pr.a) or is_fp8(pr.b))

    @property
    def mma_type(self) -> DType:
        """Operand type the matrix instruction consumes."""
        if self.native_fp8:
            return self.problem.a
        if self.problem.a == DType.BF16:
            return DType.BF16
        return DType.F16


def fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


_LAYOUT_BY_CODE = {info.index_code: lay for lay, info in LAYOUT_INFO.items()}
_KIND_BY_SUFFIX = {spec.name_suffix: kind for kind, spec in KIND_INFO.items() if spec.name_suffix}
_SUFFIXES = "|".join(sorted(_KIND_BY_SUFFIX, key=len, reverse=True))
_TYPES_RE = re.compile(r"^(F8N|B8N|F8|B8|H|B|S)(F8N|B8N|F8|B8|H|B|S)(F8N|B8N|F8|B8|H|B|S)(" + _SUFFIXES + ")?$")


class NameError_(ValueError):
    pass


def decode(name: str) -> Solution:
    """Inverse of Solution.name. Raises NameError_ naming the token it could not read."""
    tokens = name.split("_")
    if len(tokens) < 4 + len(PARAMS) + 2:
        raise NameError_(f"{name}: too few tokens for a kiln kernel name")
    layout = _LAYOUT_BY_CODE.get("_".join(tokens[:3]))
    if layout is None:
        raise NameError_(f"{name}: unknown index order {'_'.join(tokens[:3])}")
    m = _TYPES_RE.match(tokens[3])
    if not m:
        raise NameError_(f"{name}: unknown type token {tokens[3]}")
    a, b, d = (DTYPE_BY_CODE[c] for c in m.groups()[:3])
    suffix = m.group(4) or ""
    kind = kind_of(a, b, _KIND_BY_SUFFIX.get(suffix))
    if kind is None or KIND_INFO[kind].name_suffix != suffix:
        raise NameError_(f"{name}: types {tokens[3]} make no kiln problem kind")
    values = {}
    rest = tokens[4:]
    for p, tok in zip(PARAMS, rest):
        field, prefix, count = p.field, p.token, p.count
        if not tok.startswith(prefix):
            raise NameError_(f"{name}: expected {prefix}... got {tok}")
        body = tok[len(prefix):]
        nums = body.split("x")
        if len(nums) != count or not all(n.isascii() and n.isdigit() for n in nums):
            raise NameError_(f"{name}: bad value in {tok}")
        ints = tuple(int(n) for n in nums)
        values[field] = ints if count > 1 else ints[0]
        if count > 1 and min(ints) < 1:  # shapes are divided by: no kernel has a zero in one
            raise NameError_(f"{name}: {tok}: values must be positive")
    tail = rest[len(PARAMS):]
    if len(tail) != 2:
        raise NameError_(f"{name}: expected family and arch at the end")
    try:
        family = Family(tail[0].lower())
        arch = Arch(tail[1].lower())
    except ValueError as exc:
        raise NameError_(f"{name}: {exc}") from None
    sol = Solution(arch=arch, family=family, problem=Problem(kind, a, b, d, layout), **values)
    if sol.name != name:
        raise NameError_(f"{name}: not in canonical form (re-encodes as {sol.name})")
    return sol


def as_dict(sol: Solution) -> dict:
    """Parameters of a solution as plain values (for decode/list output)."""
    out = {"name": sol.name, "arch": sol.arch.value, "family": sol.family.value, "kind": sol.problem.kind.value,
           "a": sol.problem.a.value, "b": sol.problem.b.value, "d": sol.problem.d.value,
           "layout": sol.problem.layout.value}
    for f in dataclasses.fields(sol):
        if f.name in PARAM_FIELDS:
            v = getattr(sol, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
    out.update(threads=sol.threads, lds_bytes=sol.lds_bytes, align_a=sol.align_a, align_b=sol.align_b)
    return out
