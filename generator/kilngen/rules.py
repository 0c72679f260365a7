"""The rules of a complete solution, one function per rule, grouped per family; schema.py applies them where a
solution file is read. A rule returns None when the solution passes, else why it fails (the error goes on the line of
the rule's field)."""
from __future__ import annotations

from typing import Optional

from .model import AMD_INFO, ARCH_INFO, DTYPE_INFO, Arch, DType, Family, Solution


def _fmt(value) -> str:
    return "[" + ", ".join(str(v) for v in value) + "]" if isinstance(value, tuple) else str(value)


def _or(values) -> str:
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


# Per family: the default matrix instruction for (fp8 x fp8 on an arch with an fp8 instruction, anything else).
# wgmma's instruction follows from the tile (Solution.wgmma_shape), so schema.py derives it there instead.
DEFAULT_MI = {Family.MMA: ((16, 8, 32), (16, 8, 16)), Family.MFMA: ((32, 32, 16), (32, 32, 8)),
              Family.WMMA: ((16, 16, 16), (16, 16, 16)), Family.WGMMA: ((64, 128, 32), (64, 128, 16))}
assert DEFAULT_MI.keys() == set(Family)


def default_mi(arch: Arch, a: DType, b: DType, family: Optional[Family] = None) -> tuple:
    both_fp8 = bool(DTYPE_INFO[a].fp8) and bool(DTYPE_INFO[b].fp8)
    fp8_mi, other = DEFAULT_MI[family or ARCH_INFO[arch].family]
    return fp8_mi if both_fp8 and ARCH_INFO[arch].fp8_mma else other




# --- rules every family shares -----------------------------------------------------------------------------------

def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _bytes_of(dt: DType) -> str:
    n = DTYPE_INFO[dt].bytes
    return f"{n} byte{'s' if n != 1 else ''} of {dt.value}"


def _operands(sol: Solution):
    """(label, dtype, LDS row bytes before padding) of A and B."""
    du = sol.mt[2]
    return (("A", sol.problem.a, du * DTYPE_INFO[sol.problem.a].bytes),
            ("B", sol.problem.b, du * DTYPE_INFO[sol.problem.b].bytes))


def _positive(field):
    def rule(sol):
        value = getattr(sol, field)
        return None if min(value) > 0 else f"{_fmt(value)} must be positive"
    return rule


# The values a scalar parameter may take; su and sus have rules of their own.
ALLOWED = {"pgr": range(0, 7), "plr": range(0, 2), "sum": range(0, 4), "lpa": range(0, 129, 16),
           "lpb": range(0, 129, 16), "lxs": range(0, 2), "gsu": range(1, 65), "wgm": range(1, 65),
           "vwa": (1, 2, 4, 8, 16), "vwb": (1, 2, 4, 8, 16), "ldsb": range(0, 2), "tlds": range(0, 2),
           "lbspp": (0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), "wsgr": range(0, 2), "occ": range(0, 17)}


def _allowed(field):
    allowed = ALLOWED[field]
    if isinstance(allowed, range) and allowed.step > 1:
        say = f"a multiple of {allowed.step} in {allowed.start}..{allowed[-1]}"
    elif isinstance(allowed, range) and len(allowed) > 2:
        say = f"in {allowed.start}..{allowed[-1]}"
    else:
        say = _or(allowed)

    def rule(sol):
        value = getattr(sol, field)
        return None if value in allowed else f"{value} is not {say}"
    return rule


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


def _su(sol):
    if sol.su < 0 or (sol.su > 0 and not _pow2(sol.su)):
        return f"{sol.su} must be 0 or a power of two"
    if sol.su > 0 and sol.sus <= 0:
        return f"{sol.su} needs sus > 0 (the stagger stride in bytes)"


def _sus(sol):
    row = _operands(sol)[0][2]
    if sol.sus < 0:
        return f"{sol.sus} must be >= 0"
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


# --- mma: what it does not implement -----------------------------------------------------------------------------

# AMD-only parameters and the one value mma takes (what it does instead).
_MMA_FIXED = (
    ("ldsb", 0, "has no 1LDSBuffer (its LDS ring has pgr + 1 stages; use pgr)"),
    ("tlds", 1, "keeps K-major operands unroll-major in LDS (ldmatrix reads K rows)"),
    ("lbspp", 0, "pads every LDS row (lpa, lpb)"),
    ("wsgr", 0, "reads each tile with the whole workgroup"),
    ("occ", 0, "takes no occupancy target (ptxas -v reports its registers)"),
    ("pk", 0, "launches one workgroup per tile (persistent kernels are the wgmma family's)"),
)


def _fixed(field, value, why):
    def rule(sol):
        if getattr(sol, field) != value:
            return f"{sol.family.value} family {why}; {field} must be {value}"
    return rule


# --- wgmma (sm_90a) ----------------------------------------------------------------------------------------------

# What wgmma's TMA + 128-byte-swizzle path fixes, and why.
_WGMMA_FIXED = (
    ("plr", 0, "reads operands straight from shared memory (wgmma descriptors): no local prefetch"),
    ("lpa", 0, "uses the 128-byte TMA swizzle, not padding"),
    ("lpb", 0, "uses the 128-byte TMA swizzle, not padding"),
    ("lxs", 1, "always swizzles (TMA 128-byte swizzle)"),
    ("vwa", 16, "loads with TMA, which needs 16-byte aligned rows"),
    ("vwb", 16, "loads with TMA, which needs 16-byte aligned rows"),
    ("ldsb", 0, "has no 1LDSBuffer (its ring has pgr + 1 stages)"),
    ("tlds", 1, "keeps K-major operands K-major in shared memory"),
    ("lbspp", 0, "uses no padding"),
    ("wsgr", 0, "loads each tile with one producer thread (TMA)"),
    ("occ", 0, "runs one workgroup per SM"),
)
# Registers a consumer thread may give to accumulators (+ widened weights): ptxas allocates the whole kernel under
# __launch_bounds__(384, 1), i.e. 168 per thread, whatever setmaxnreg raises the consumers to at run time.
WGMMA_MAX_ACC = 128


def _wgmma_wg(sol):
    if sol.wg[0] * sol.wg[1] not in (1, 2):
        return f"{_fmt(sol.wg)} makes {sol.wg[0] * sol.wg[1]} consumer warpgroups; wgmma takes 1 or 2 (+1 producer)"


def _wgmma_tile(sol):
    rows, cols = sol.mt[0] // sol.wg[0], sol.mt[1] // sol.wg[1]
    if sol.mt[0] % sol.wg[0] or sol.mt[1] % sol.wg[1]:
        return f"{_fmt(sol.mt)} does not split evenly over wg {_fmt(sol.wg)}"
    if max(sol.mt[0], sol.mt[1]) > 256:
        return f"MT0 and MT1 must be at most 256 (TMA box rows); got {_fmt(sol.mt)}"
    wgmma_m, wgmma_n = (cols, rows) if sol.swap else (rows, cols)
    side = ("columns", "rows") if sol.swap else ("rows", "columns")
    if wgmma_m % 64:
        return f"each consumer's {wgmma_m} {side[0]} must be a multiple of 64 (wgmma M)"
    if wgmma_n % 8 or wgmma_n > 256:
        return f"each consumer's {wgmma_n} {side[1]} must be a multiple of 8 up to 256 (wgmma N)"
    if cols % 32:
        return f"each consumer's {cols} columns must be a multiple of 32 (the epilogue's chunks)"
    acc = (wgmma_m // 64) * wgmma_n // 2
    frags = (wgmma_m // 64) * (sol.mt[2] // 16) * 4 if sol.swap else 0  # widened weights of a K-tile
    if acc + frags > WGMMA_MAX_ACC:
        held = f"{acc} f32 accumulators" + (f" + {frags} weight registers" if frags else "")
        return f"each consumer thread would hold {held}; at most {WGMMA_MAX_ACC} fit its registers"


def _wgmma_depth(sol):
    for label, dt, row in _operands(sol):
        if row % 128:
            return (f"DepthU {sol.mt[2]} x {_bytes_of(dt)} = {row} bytes per {label} row; wgmma tiles are whole "
                    f"128-byte swizzle rows")


def _wgmma_mi(sol):
    want = sol.wgmma_shape()
    if tuple(sol.mi) != want:
        return f"{_fmt(sol.mi)} is not the wgmma this tile issues; it is {_fmt(want)} (leave mi out to derive it)"


def _pk(sol):
    if sol.pk not in (0, 1, 2):
        return f"{sol.pk} is not 0 (a CTA per tile), 1 (persistent) or 2 (persistent ping-pong)"
    if sol.pk == 2 and sol.wg != (1, 1):
        return f"2 (ping-pong: two consumers take alternate whole tiles) needs wg [1, 1]; got {_fmt(sol.wg)}"


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


_SHAPE_RULES = (("wg", _positive("wg")), ("mi", _positive("mi")), ("mt", _positive("mt")))

_AMD_RULES = (("wg", _workgroup_size("waves")), ("mt", _amd_tile(0, "rows")), ("mt", _amd_tile(1, "columns")), ("mt", _mma_depth),
              ("pgr", _amd_pgr), ("ldsb", _ldsb), ("tlds", _tlds), ("lbspp", _lbspp), ("occ", _occ),
              ("pk", _fixed("pk", 0, "launches one workgroup per tile (persistent kernels are the wgmma family's)")))

FAMILY_RULES = {
    Family.MMA: (("mi", _mma_mi), ("wg", _workgroup_size("warps")), ("mt", _mma_tile(0, "rows")), ("mt", _mma_tile(1, "columns")),
                 ("mt", _mma_depth)) + tuple((f, _fixed(f, v, why)) for f, v, why in _MMA_FIXED),
    Family.WGMMA: (("wg", _wgmma_wg), ("mt", _wgmma_tile), ("mt", _wgmma_depth),
                   ("mi", _wgmma_mi)) + tuple((f, _fixed(f, v, why)) for f, v, why in _WGMMA_FIXED),
    Family.MFMA: (("mi", _mfma_mi),) + _AMD_RULES,
    Family.WMMA: (("mi", _wmma_mi),) + _AMD_RULES,
}
assert FAMILY_RULES.keys() == set(Family)

_PARAM_RULES = (
    ("pgr", _allowed("pgr")), ("plr", _allowed("plr")), ("su", _su), ("sus", _sus), ("sum", _allowed("sum")),
    ("lpa", _allowed("lpa")), ("lpb", _allowed("lpb")), ("lxs", _allowed("lxs")), ("lxs", _lxs),
    ("gsu", _allowed("gsu")), ("wgm", _allowed("wgm")), ("vwa", _allowed("vwa")), ("vwa", _vector("vwa", "a")),
    ("vwb", _allowed("vwb")), ("vwb", _vector("vwb", "b")), ("ldsb", _allowed("ldsb")), ("tlds", _allowed("tlds")),
    ("lbspp", _allowed("lbspp")), ("wsgr", _allowed("wsgr")), ("occ", _allowed("occ")), ("pk", _pk),
    ("mt", _lds_fits),
)
assert {field for field, _rule in _PARAM_RULES} >= ALLOWED.keys()


def check(sol: Solution) -> Optional[tuple]:
    """The first rule a solution breaks, as (field, why), or None when it is valid."""
    for field, rule in _SHAPE_RULES + FAMILY_RULES[sol.family] + _PARAM_RULES:
        why = rule(sol)
        if why:
            return field, why
    return None


