"""kiln's vocabulary: one enum per axis, one table per spelling, and the frozen Solution whose name is its identity."""
from __future__ import annotations

import dataclasses
import enum
import re
from dataclasses import dataclass


class Vendor(enum.Enum):
    NVIDIA = "nvidia"
    AMD = "amd"


class Arch(enum.Enum):
    SM90 = "sm90"
    SM89 = "sm89"
    SM80 = "sm80"
    GFX942 = "gfx942"
    GFX90A = "gfx90a"
    GFX1151 = "gfx1151"
    GFX1201 = "gfx1201"


class Family(enum.Enum):
    MMA = "mma"    # NVIDIA mma.sync + ldmatrix + cp.async multistage
    MFMA = "mfma"  # AMD CDNA matrix cores, wave64: global -> VGPR -> LDS -> v_mfma
    WMMA = "wmma"  # AMD RDNA matrix cores, wave32: global -> VGPR -> LDS -> v_wmma
    WGMMA = "wgmma"  # NVIDIA sm_90a: TMA -> mbarrier ring -> wgmma, warp-specialized and persistent


FAMILY_VENDOR = {Family.MMA: Vendor.NVIDIA, Family.MFMA: Vendor.AMD, Family.WMMA: Vendor.AMD, Family.WGMMA: Vendor.NVIDIA}
assert FAMILY_VENDOR.keys() == set(Family)
# Threads of the unit wg counts: a warp / wavefront (a workgroup has wave * wg0 * wg1 threads), or for wgmma a
# consumer warpgroup (the workgroup adds one producer warpgroup).
FAMILY_WAVE = {Family.MMA: 32, Family.MFMA: 64, Family.WMMA: 32, Family.WGMMA: 128}
assert FAMILY_WAVE.keys() == set(Family)


@dataclass(frozen=True)
class ArchInfo:
    vendor: Vendor
    lds_limit: int          # bytes of shared memory a workgroup may use
    fp8_mma: bool           # has an fp8 x fp8 matrix instruction
    fp8_formats: str        # "ocp" or "fnuz": which fp8 encodings the hardware speaks
    offload: str            # compiler target spelling
    families: tuple         # the kernel families written for this arch

    @property
    def family(self) -> Family:
        """The arch's first family: the one every problem type has."""
        return self.families[0]


ARCH_INFO = {
    Arch.SM90: ArchInfo(Vendor.NVIDIA, 227 * 1024, True, "ocp", "sm_90a", (Family.MMA, Family.WGMMA)),
    Arch.SM89: ArchInfo(Vendor.NVIDIA, 99 * 1024, True, "ocp", "sm_89", (Family.MMA,)),
    Arch.SM80: ArchInfo(Vendor.NVIDIA, 163 * 1024, False, "ocp", "sm_80", (Family.MMA,)),
    Arch.GFX942: ArchInfo(Vendor.AMD, 64 * 1024, True, "fnuz", "gfx942", (Family.MFMA,)),
    Arch.GFX90A: ArchInfo(Vendor.AMD, 64 * 1024, False, "fnuz", "gfx90a", (Family.MFMA,)),
    Arch.GFX1151: ArchInfo(Vendor.AMD, 64 * 1024, False, "ocp", "gfx1151", (Family.WMMA,)),
    Arch.GFX1201: ArchInfo(Vendor.AMD, 64 * 1024, True, "ocp", "gfx1201", (Family.WMMA,)),
}
assert ARCH_INFO.keys() == set(Arch)
assert all(FAMILY_VENDOR[f] is info.vendor for info in ARCH_INFO.values() for f in info.families)


@dataclass(frozen=True)
class AmdInfo:
    """What an AMD kernel's occupancy is computed from (the build checks it against the YAML's `occ`)."""
    lds_per_cu: int          # LDS bytes the workgroups of one CU share (RDNA: of one WGP, in WGP mode)
    simds_per_cu: int        # SIMDs the waves of a CU (WGP) are spread over
    max_waves_per_simd: int
    matrix_isa: str          # matrix-core generation: cdna2, cdna3 (MFMA), rdna3, rdna4 (WMMA)


AMD_INFO = {
    Arch.GFX942: AmdInfo(64 * 1024, 4, 8, "cdna3"),
    Arch.GFX90A: AmdInfo(64 * 1024, 4, 8, "cdna2"),
    Arch.GFX1151: AmdInfo(128 * 1024, 4, 16, "rdna3"),
    Arch.GFX1201: AmdInfo(128 * 1024, 4, 16, "rdna4"),
}
assert AMD_INFO.keys() == {a for a, info in ARCH_INFO.items() if info.vendor is Vendor.AMD}


class DType(enum.Enum):
    F32 = "f32"
    F16 = "f16"
    BF16 = "bf16"
    E4M3 = "e4m3"
    E5M2 = "e5m2"
    E4M3FNUZ = "e4m3fnuz"
    E5M2FNUZ = "e5m2fnuz"


@dataclass(frozen=True)
class DTypeInfo:
    code: str        # in kernel names
    bytes: int
    c_enum: str      # kiln_dtype in kiln.h
    device_type: str  # storage type in device code (kiln_device.h)
    fp8: str         # "", "ocp" or "fnuz"


DTYPE_INFO = {
    DType.F32: DTypeInfo("S", 4, "KILN_DTYPE_F32", "float", ""),
    DType.F16: DTypeInfo("H", 2, "KILN_DTYPE_F16", "kiln_f16", ""),
    DType.BF16: DTypeInfo("B", 2, "KILN_DTYPE_BF16", "kiln_bf16", ""),
    DType.E4M3: DTypeInfo("F8", 1, "KILN_DTYPE_E4M3", "kiln_e4m3", "ocp"),
    DType.E5M2: DTypeInfo("B8", 1, "KILN_DTYPE_E5M2", "kiln_e5m2", "ocp"),
    DType.E4M3FNUZ: DTypeInfo("F8N", 1, "KILN_DTYPE_E4M3FNUZ", "kiln_e4m3fnuz", "fnuz"),
    DType.E5M2FNUZ: DTypeInfo("B8N", 1, "KILN_DTYPE_E5M2FNUZ", "kiln_e5m2fnuz", "fnuz"),
}
assert DTYPE_INFO.keys() == set(DType)
DTYPE_BY_CODE = {info.code: dt for dt, info in DTYPE_INFO.items()}
assert len(DTYPE_BY_CODE) == len(DType)


class Layout(enum.Enum):
    TN = "TN"  # A[m][k], B[n][k]
    NN = "NN"  # A[m][k], B[k][n]


@dataclass(frozen=True)
class LayoutInfo:
    index_code: str  # Tensile-style index order, fastest index first (l = summation, k = batch)
    c_enum: str


LAYOUT_INFO = {
    Layout.TN: LayoutInfo("Cijk_Alik_Bljk", "KILN_LAYOUT_TN"),
    Layout.NN: LayoutInfo("Cijk_Alik_Bjlk", "KILN_LAYOUT_NN"),
}
assert LAYOUT_INFO.keys() == set(Layout)


class Kind(enum.Enum):
    FP8_SCALED = "fp8_scaled"  # fp8 x fp8 -> f32/f16/bf16 with scales
    MIXED_W8 = "mixed_w8"      # f16/bf16 x prepacked fp8 weights
    GEMM = "gemm"              # f16 x f16 / bf16 x bf16, alpha/beta


@dataclass(frozen=True)
class Problem:
    """A problem type: what one kernel computes, independent of sizes."""
    kind: Kind
    a: DType
    b: DType
    d: DType
    layout: Layout

    @property
    def b_prepacked(self) -> bool:
        return self.kind is Kind.MIXED_W8

    @property
    def code(self) -> str:
        return (LAYOUT_INFO[self.layout].index_code + "_" + DTYPE_INFO[self.a].code + DTYPE_INFO[self.b].code
                + DTYPE_INFO[self.d].code + ("P" if self.b_prepacked else ""))


def kind_of(a: DType, b: DType) -> Kind | None:
    """The problem kind a pair of operand types makes, or None when kiln has no such kind."""
    fa, fb = DTYPE_INFO[a].fp8, DTYPE_INFO[b].fp8
    if fa and fb:
        return Kind.FP8_SCALED
    if not fa and fb and a in (DType.F16, DType.BF16):
        return Kind.MIXED_W8
    if a == b and a in (DType.F16, DType.BF16):
        return Kind.GEMM
    return None


# Solution parameters, in name order. Each: field, name prefix, how many values (1 or a tuple length), meaning.
PARAMS = (
    ("mt", "MT", 3, "macro tile MT0 x MT1 x DepthU"),
    ("wg", "WG", 2, "warps (waves) along M and N in a workgroup"),
    ("mi", "MI", 3, "matrix instruction M x N x K"),
    ("pgr", "PGR", 1, "PrefetchGlobalRead: K tiles in flight ahead of the one computed (stages = PGR + 1)"),
    ("plr", "PLR", 1, "PrefetchLocalRead: fragments of the next K step read from LDS before this one computes"),
    ("su", "SU", 1, "StaggerU: workgroups start their K loop at (id % SU) * SUS bytes (0 = off)"),
    ("sus", "SUS", 1, "StaggerUStride in bytes of K"),
    ("sum", "SUM", 1, "StaggerUMapping: which workgroup id staggers (0 tile-M, 1 tile-N, 2 batch, 3 serial)"),
    ("lpa", "LPA", 1, "LDS padding of each A row, bytes"),
    ("lpb", "LPB", 1, "LDS padding of each B row, bytes"),
    ("lxs", "LXS", 1, "LDS XOR swizzle of 16-byte chunks (0/1)"),
    ("gsu", "GSU", 1, "GlobalSplitU: split-K factor, partials reduced by a second kernel"),
    ("wgm", "WGM", 1, "WorkGroupMapping: tile-M rows per raster group (1 = plain row-major raster)"),
    ("vwa", "VWA", 1, "global read vector width of A, bytes"),
    ("vwb", "VWB", 1, "global read vector width of B, bytes"),
    # Appended for the AMD families (mfma, wmma); mma takes only their defaults.
    ("ldsb", "LDSB", 1, "1LDSBuffer: one LDS buffer instead of two (global prefetch waits for compute)"),
    ("tlds", "TLDS", 1, "TransposeLDS: 1 = K-major operands stay unroll-major in LDS, 0 = stored tile-major"),
    ("lbspp", "LBSPP", 1, "LdsBlockSizePerPad: the LDS padding goes after every LBSPP bytes (0 = every row)"),
    ("wsgr", "WSGR", 1, "WaveSeparateGlobalRead: each wave reads its own rows of the tile (0/1)"),
    ("occ", "OCC", 1, "occupancy target, waves per SIMD the kernel must reach (0 = none declared)"),
    # Appended for the wgmma family; the others take 0.
    ("pk", "PK", 1, "persistent kernel: one CTA per SM loops over the tiles (0 = one CTA per tile, 2 = ping-pong)"),
)
PARAM_FIELDS = tuple(p[0] for p in PARAMS)


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

    @property
    def name(self) -> str:
        parts = [self.problem.code]
        for field, prefix, _n, _doc in PARAMS:
            value = getattr(self, field)
            parts.append(prefix + ("x".join(str(v) for v in value) if isinstance(value, tuple) else str(value)))
        parts += [self.family.value.upper(), self.arch.value.upper()]
        return "_".join(parts)

    # Derived quantities, computed here once so templates only substitute.
    @property
    def wave(self) -> int:
        return FAMILY_WAVE[self.family]

    @property
    def threads(self) -> int:
        if self.family is Family.WGMMA:
            return self.wave * (self.consumers + 1)
        return self.wave * self.wg[0] * self.wg[1]

    @property
    def consumers(self) -> int:
        """wgmma: consumer warpgroups. They split a tile wg0 x wg1 ways, or with pk 2 (ping-pong) two of them take
        alternate whole tiles."""
        return 2 if self.pk == 2 else self.wg[0] * self.wg[1]

    @property
    def swap(self) -> bool:
        """wgmma with prepacked fp8 weights: the weights are wgmma's register operand, D is computed transposed."""
        return self.family is Family.WGMMA and self.problem.b_prepacked

    def wgmma_shape(self) -> tuple:
        """The wgmma instruction (64, N, K) the tile and warpgroups imply: N is a consumer's extent along the
        operand in shared memory (B's columns; with swap, A's rows), K is 32 bytes of the shared-memory operand."""
        n = self.mt[0] // self.wg[0] if self.swap else self.mt[1] // self.wg[1]
        both_fp8 = bool(DTYPE_INFO[self.problem.a].fp8) and bool(DTYPE_INFO[self.problem.b].fp8)
        return (64, n, 32 if both_fp8 else 16)

    @property
    def stages(self) -> int:
        """LDS buffers: mma keeps a ring of PGR + 1 stages; the AMD families double-buffer LDS behind a
        global -> VGPR prefetch (one buffer with 1LDSBuffer or without prefetch)."""
        if self.family in (Family.MMA, Family.WGMMA):
            return self.pgr + 1
        return 1 if self.pgr == 0 or self.ldsb else 2

    def lds_unroll_major(self, operand: str) -> bool:
        """Whether the operand's LDS rows run along K. mma: K-major operands are (tlds = 1); AMD: K-major operands
        follow tlds; an N-major B (layout NN) is tile-major in LDS on every family."""
        if operand == "b" and self.problem.layout is Layout.NN:
            return False
        return self.family in (Family.MMA, Family.WGMMA) or self.tlds == 1

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
        if self.family is Family.WGMMA:
            # kiln_gemm_wgmma.h: the stage ring, one 32-column f32 epilogue chunk per consumer, two mbarriers per
            # stage, and 1024 bytes to align the base for the 128-byte swizzle
            ring = self.stages * (self.lds_tile_bytes("a") + self.lds_tile_bytes("b"))
            return ring + self.consumers * (self.mt[0] // self.wg[0]) * 128 + 16 * self.stages + 1024
        return self.stages * (self.lds_tile_bytes("a") + self.lds_tile_bytes("b"))

    @property
    def align_a(self) -> int:
        return max(1, self.vwa // DTYPE_INFO[self.problem.a].bytes)

    @property
    def align_b(self) -> int:
        return max(1, self.vwb // DTYPE_INFO[self.problem.b].bytes)

    @property
    def native_fp8(self) -> bool:
        """Both operands are fp8 and feed an fp8 matrix instruction (no widening)."""
        pr = self.problem
        if not (DTYPE_INFO[pr.a].fp8 and DTYPE_INFO[pr.b].fp8):
            return False
        if self.family in (Family.MMA, Family.WGMMA):
            return self.mi[2] == 32
        if self.family is Family.MFMA:
            return tuple(self.mi) in ((32, 32, 16), (16, 16, 32))
        return ARCH_INFO[self.arch].fp8_mma

    @property
    def upcast(self) -> bool:
        """fp8 operands are widened to f16/bf16 in registers before a 16-bit matrix instruction."""
        pr = self.problem
        return not self.native_fp8 and bool(DTYPE_INFO[pr.a].fp8 or DTYPE_INFO[pr.b].fp8)

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
_TYPES_RE = re.compile(r"^(F8N|B8N|F8|B8|H|B|S)(F8N|B8N|F8|B8|H|B|S)(F8N|B8N|F8|B8|H|B|S)(P?)$")


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
    kind = kind_of(a, b)
    if kind is None or (kind is Kind.MIXED_W8) != bool(m.group(4)):
        raise NameError_(f"{name}: types {tokens[3]} make no kiln problem kind")
    values = {}
    rest = tokens[4:]
    for (field, prefix, count, _doc), tok in zip(PARAMS, rest):
        if not tok.startswith(prefix):
            raise NameError_(f"{name}: expected {prefix}... got {tok}")
        body = tok[len(prefix):]
        nums = body.split("x")
        if len(nums) != count or not all(n.isascii() and n.isdigit() for n in nums):
            raise NameError_(f"{name}: bad value in {tok}")
        ints = tuple(int(n) for n in nums)
        values[field] = ints if count > 1 else ints[0]
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
