"""The rules of a complete solution, one function per rule. A rule takes a Solution and returns None when it passes,
else why it fails (the error goes on the line of the rule's field). The rules shared by every family and the range
checks of the parameter catalogue are here, with the mma and AMD families' own; wgmma's are in wgmma.py. Each family
record (families.py) lists its rules; families.check applies them where a solution file is read."""
from __future__ import annotations

from typing import Optional

from .params import PARAM, PARAMS
from .vocab import AMD_INFO, ARCH_INFO, DTYPE_INFO, DType, Kind


def _fmt(value) -> str:
    return "[" + ", ".join(str(v) for v in value) + "]" if isinstance(value, tuple) else str(value)


def _or(values) -> str:
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


# --- ranges: every parameter, from the catalogue ---------------------------------------------------------------------

def shape_problem(field: str, value) -> Optional[str]:
    """Why a tuple parameter's value is out of its range (positive, bounded), else None. Runs before anything is
    derived from the value."""
    allowed = PARAM[field].allowed
    if min(value) < 1:
        return f"{_fmt(value)} must be positive"
    if max(value) > allowed[-1]:
        return f"{_fmt(value)} must be at most {allowed[-1]} each"
    return None


def _shape(field):
    def rule(sol):
        return shape_problem(field, getattr(sol, field))
    return rule


def _allowed(field):
    param = PARAM[field]

    def rule(sol):
        value = getattr(sol, field)
        return None if value in param.allowed else f"{value} is not {param.allowed_text}"
    return rule


def _fixed(field):
    """The family fixes the parameter (it does not implement it): the value must be that one."""
    param = PARAM[field]

    def rule(sol):
        fixed = param.fixed_for(sol.family)
        if fixed is not None and getattr(sol, field) != fixed[0]:
            return f"{sol.family.value} family {fixed[1]}; {field} must be {fixed[0]}"
    return rule


SHAPE_RULES = tuple((f, _shape(f)) for f in ("wg", "mi", "mt"))
FIXED_RULES = tuple((p.field, _fixed(p.field)) for p in PARAMS if p.fixed)
assert {f for f, _r in SHAPE_RULES} == {p.field for p in PARAMS if p.count > 1}


# --- rules every family shares -----------------------------------------------------------------------------------

def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _bytes_of(dt: DType) -> str:
    n = DTYPE_INFO[dt].bytes
    return f"{n} byte{'s' if n != 1 else ''} of {dt.value}"


def _operands(sol):
    """(label, dtype, LDS row bytes before padding) of A and B."""
    du = sol.mt[2]
    return (("A", sol.problem.a, du * DTYPE_INFO[sol.problem.a].bytes),
            ("B", sol.problem.b, du * DTYPE_INFO[sol.problem.b].bytes))


def _su(sol):
    if sol.su < 0 or (sol.su > 0 and not _pow2(sol.su)):
        return f"{sol.su} must be 0 or a power of two"
    if sol.su not in PARAM["su"].allowed:
        return f"{sol.su} is not {PARAM['su'].allowed_text}"
    if sol.su > 0 and sol.sus <= 0:
        return f"{sol.su} needs sus > 0 (the stagger stride in bytes)"


def _sus(sol):
    row = _operands(sol)[0][2]
    if sol.sus < 0:
        return f"{sol.sus} must be >= 0"
    if sol.sus not in PARAM["sus"].allowed:
        return f"{sol.sus} is not {PARAM['sus'].allowed_text}"
    if sol.sus > 0 and sol.sus % row:
        return f"{sol.sus} must be a multiple of {row} (DepthU {sol.mt[2]} x {_bytes_of(sol.problem.a)})"


def _lxs(sol):
    if sol.lxs == 1 and (sol.lpa or sol.lpb):
        return f"1 needs lpa = lpb = 0 (the swizzle replaces padding); got lpa {sol.lpa}, lpb {sol.lpb}"
    for label, dt, _k_row in _operands(sol) if sol.lxs == 1 else ():
        _rows, row, _pad = sol.lds_shape(label.lower())
        if not _pow2(row):
            along = f"DepthU {sol.mt[2]}" if sol.lds_unroll_major(label.lower()) else f"MT{'01'[label == 'B']}"
            return f"1 needs power-of-two LDS rows; {label} rows are {along} x {_bytes_of(dt)} = {row}"


def _vector(field, operand):
    def rule(sol):
        value = getattr(sol, field)
        dt = sol.problem.a if operand == "a" else sol.problem.b
        if value < DTYPE_INFO[dt].bytes:
            return f"{value} is narrower than one {dt.value} element ({DTYPE_INFO[dt].bytes} bytes)"
        if operand == "b" and sol.problem.b_prepacked and value != 16:
            return f"{value} must be 16 for mixed_w8 (prepacked B is read in 16-byte vectors)"
    return rule


def _lds_fits(sol):
    limit = ARCH_INFO[sol.arch].lds_limit
    if sol.lds_bytes > limit:
        return (f"{_fmt(sol.mt)} with {sol.stages} stages needs {sol.lds_bytes} bytes of LDS; "
                f"{sol.arch.value} allows {limit}")


# Per parameter (catalogue order): its range check, then the rules that relate it to others. su and sus check their
# own ranges (their messages say more).
_OWN_RANGE = {"su": _su, "sus": _sus}
_MORE = {"lxs": (_lxs,), "vwa": (_vector("vwa", "a"),), "vwb": (_vector("vwb", "b"),)}
PARAM_RULES = tuple((p.field, rule) for p in PARAMS if p.count == 1
                    for rule in ((_OWN_RANGE.get(p.field) or _allowed(p.field)),) + _MORE.get(p.field, ()))
LDS_RULES = (("mt", _lds_fits),)


# --- mma (NVIDIA mma.sync) ---------------------------------------------------------------------------------------

def _mma_mi(sol):
    a, b = sol.problem.a, sol.problem.b
    if sol.mi not in ((16, 8, 16), (16, 8, 32)):
        return f"{_fmt(sol.mi)} is not an mma shape; use [16, 8, 16] or [16, 8, 32]"
    if sol.mi[2] == 32 and not (DTYPE_INFO[a].fp8 and DTYPE_INFO[b].fp8):
        return f"{_fmt(sol.mi)} needs fp8 x fp8 operands; {a.value} x {b.value} takes [16, 8, 16]"
    if sol.mi[2] == 32 and not ARCH_INFO[sol.arch].fp8_mma:
        return f"{sol.arch.value} has no fp8 mma; use mi [16, 8, 16] to upcast fp8 to f16"


def _workgroup_size(unit):
    """wg0 x wg1 warps (NVIDIA) or waves (AMD) must make 1 to 16, a power of two."""
    def rule(sol):
        count = sol.wg[0] * sol.wg[1]
        if count not in (1, 2, 4, 8, 16):
            return f"{_fmt(sol.wg)} makes {count} {unit}; a workgroup takes 1, 2, 4, 8 or 16"
    return rule


def _mma_tile(dim, what):
    def rule(sol):
        tile, warps = sol.mt[dim], sol.wg[dim]
        if tile % (16 * warps):
            return f"MT{dim} {tile} must be a multiple of {16 * warps} (16 {what} per warp x wg{dim} {warps})"
    return rule


def _mma_depth(sol):
    if sol.mt[2] % sol.mi[2]:
        return f"DepthU {sol.mt[2]} must be a multiple of {sol.mi[2]} (mi k) for {sol.mma_type.value}"
    for label, dt, row in _operands(sol):
        if row % 16:
            return (f"DepthU {sol.mt[2]} x {_bytes_of(dt)} = {row} bytes per {label} row; "
                    f"rows are copied in 16-byte chunks")


MMA_RULES = (("mi", _mma_mi), ("wg", _workgroup_size("warps")), ("mt", _mma_tile(0, "rows")),
             ("mt", _mma_tile(1, "columns")), ("mt", _mma_depth))


# --- the AMD families (mfma, wmma) -----------------------------------------------------------------------------------

MFMA_16BIT = ((32, 32, 8), (16, 16, 16))  # f16 / bf16 operands, and fp8 widened to f16 / bf16
MFMA_FP8 = ((32, 32, 16), (16, 16, 32))   # fp8 x fp8 (gfx942: FNUZ)
WMMA_SHAPES = ((16, 16, 16),)


def _mfma_mi(sol):
    a, b = sol.problem.a, sol.problem.b
    if sol.mi not in MFMA_16BIT + MFMA_FP8:
        return (f"{_fmt(sol.mi)} is not an MFMA shape; use [32, 32, 8] or [16, 16, 16] (16-bit operands, fp8 "
                f"widened) or [32, 32, 16] or [16, 16, 32] (fp8 x fp8)")
    if sol.mi in MFMA_FP8 and not (DTYPE_INFO[a].fp8 and DTYPE_INFO[b].fp8):
        return f"{_fmt(sol.mi)} is an fp8 MFMA; {a.value} x {b.value} takes [32, 32, 8] or [16, 16, 16]"
    if sol.mi in MFMA_FP8 and not ARCH_INFO[sol.arch].fp8_mma:
        return f"{sol.arch.value} has no fp8 MFMA; use mi [32, 32, 8] or [16, 16, 16] to widen fp8 to f16"


def _wmma_mi(sol):
    if sol.mi not in WMMA_SHAPES:
        return f"{_fmt(sol.mi)} is not a WMMA shape; use [16, 16, 16]"


def _amd_tile(dim, what):
    def rule(sol):
        step = sol.mi[dim] * sol.wg[dim]
        if sol.mt[dim] % step:
            return (f"MT{dim} {sol.mt[dim]} must be a multiple of {step} (mi {sol.mi[dim]} {what} per wave x "
                    f"wg{dim} {sol.wg[dim]})")
    return rule


def _amd_pgr(sol):
    if sol.pgr > 2:
        return (f"{sol.pgr} is not 0, 1 or 2 for {sol.family.value}: PrefetchGlobalRead holds at most 2 tiles in "
                f"VGPRs")


def _ldsb(sol):
    if sol.ldsb and sol.pgr == 0:
        return "1 needs pgr >= 1 (without a global prefetch there is one LDS buffer already)"


def _tlds(sol):
    if sol.tlds == 0 and sol.problem.b_prepacked:
        return "0 is not for mixed_w8: prepacked B is read as 16-byte K vectors into unroll-major LDS"


def _lbspp(sol):
    if sol.lbspp and not (sol.lpa or sol.lpb):
        return f"{sol.lbspp} needs lpa or lpb > 0 (the padding it places)"


def _occ(sol):
    limit = AMD_INFO[sol.arch].max_waves_per_simd
    if sol.occ > limit:
        return f"{sol.occ} waves per SIMD is over {sol.arch.value}'s {limit}"


def _mfma_fp8_arch(sol):
    """Block-scaled fp8 (kiln_amd_gemm.h, BLOCK_SCALES) sums each 128-K group with the fp8 MFMA, and the grouped
    kernels are fp8 MFMA kernels: an arch without one (gfx90a) has neither."""
    spec = sol.problem.spec
    if (spec.block_scales or spec.grouped) and not ARCH_INFO[sol.arch].fp8_mma:
        return (f"{sol.arch.value} has no fp8 MFMA, so no {sol.problem.kind.value} kernels (block-scaled and grouped "
                f"kernels run the fp8 MFMA)")


def _mfma_block_mi(sol):
    if sol.problem.spec.block_scales and sol.mi not in MFMA_FP8:
        return (f"{_fmt(sol.mi)}: a block-scaled kernel sums each K-tile with the fp8 MFMA ([32, 32, 16] or "
                f"[16, 16, 32])")


def _mfma_block_depth(sol):
    """Each K-tile is one 128-K scale group, summed alone and promoted into the f32 accumulators times its scales."""
    if sol.problem.spec.block_scales and sol.mt[2] != 128:
        return f"DepthU {sol.mt[2]}: a block-scaled kernel promotes once per K-tile, so DepthU is 128"


def grouped_gsu(sol):
    """A grouped kernel (wgmma and mfma families) walks whole (group, tile) pairs: no split-K."""
    if sol.problem.spec.grouped and sol.gsu != 1:
        return f"{sol.gsu}: a grouped kernel walks whole (group, tile) pairs; split-K is not implemented for it (gsu 1)"


K_GROUP_ALIGN = 128  # device/kiln_schedule.h, kiln.h KILN_K_GROUP_ALIGN: k-grouped ends but the last are multiples


def grouped_depth(sol):
    """Grouped kernels also take k-grouped problems, whose groups end on multiples of 128 of K: a K-tile must not
    straddle two groups, so DepthU divides 128 (kiln_schedule.h, of_k_group)."""
    if sol.problem.spec.grouped and K_GROUP_ALIGN % sol.mt[2] != 0:
        return (f"DepthU {sol.mt[2]}: a grouped kernel also runs k-grouped problems, whose groups end on multiples of "
                f"{K_GROUP_ALIGN} of K; DepthU must divide {K_GROUP_ALIGN}")


_AMD_RULES = (("wg", _workgroup_size("waves")), ("mt", _amd_tile(0, "rows")), ("mt", _amd_tile(1, "columns")),
              ("mt", _mma_depth), ("pgr", _amd_pgr), ("ldsb", _ldsb), ("tlds", _tlds), ("lbspp", _lbspp),
              ("occ", _occ))
MFMA_RULES = ((("mi", _mfma_fp8_arch), ("mi", _mfma_mi), ("mi", _mfma_block_mi), ("mt", _mfma_block_depth),
               ("gsu", grouped_gsu), ("mt", grouped_depth)) + _AMD_RULES)
WMMA_RULES = (("mi", _wmma_mi),) + _AMD_RULES
