"""kiln's vocabulary: one enum per axis and one table per spelling, each checked for completeness; and the problem
kinds, one record each. Kernel families are records too (families.py); parameters are a catalogue (params.py)."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable, Optional


class Vendor(enum.Enum):
    NVIDIA = "nvidia"
    AMD = "amd"


# The C enums of runtime/src/table.h follow these orders (tests/py/test_model.py parses the header to check):
# kiln_arch_id = KILN_ARCH_UNKNOWN (0) then one KILN_ARCH_<NAME> per Arch in this order; likewise kiln_family_id,
# kiln_kind (after KILN_KIND_NONE) and kiln_launch_kind (from 0).
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


class LaunchKind(enum.Enum):
    """How the runtime launches a family's kernels."""
    PLAIN = "plain"  # argument kiln_gemm_params, grid tiles_m * tiles_n x 1 x batch * gsu
    TMA = "tma"      # argument kiln_tma_params (tensor maps encoded by the runtime), every tile on grid x


def c_enum(prefix: str, member: enum.Enum) -> str:
    """The C enumerator of a member: KILN_<PREFIX>_<NAME>."""
    return f"KILN_{prefix}_{member.name}"


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


def is_fp8(dt: DType) -> bool:
    return bool(DTYPE_INFO[dt].fp8)


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


# --- problem kinds ------------------------------------------------------------------------------------------------

class Kind(enum.Enum):
    FP8_SCALED = "fp8_scaled"  # fp8 x fp8 -> f32/f16/bf16 with scales
    MIXED_W8 = "mixed_w8"      # f16/bf16 x prepacked fp8 weights
    GEMM = "gemm"              # f16 x f16 / bf16 x bf16, alpha/beta
    FP8_BLOCK = "fp8_block_scaled"  # fp8 x fp8 with block scales, promoted every 128 of K (KILN_SCALE_BLOCK)
    FP8_GROUPED = "fp8_grouped"     # grouped (MoE) fp8 x fp8 with tensor or row/column scales
    FP8_BLOCK_GROUPED = "fp8_block_grouped"  # grouped (MoE) fp8 x fp8 with block scales


_16BIT = (DType.F16, DType.BF16)


@dataclass(frozen=True)
class KindSpec:
    """Everything that differs between problem kinds: a new kind is one entry here (plus its runtime descriptor and
    verbs, its families' templates and its tests)."""
    kind: Kind
    operands: str                              # what A and B are, for messages
    accepts: Callable[[DType, DType], bool]    # whether (a, b) makes this kind
    outputs: Callable[[DType], tuple]          # D types it may write, given A's type
    layouts: tuple                             # supported layouts
    layout_reason: str                         # why the others are refused
    b_prepacked: bool                          # B is made by kiln_prepack_b (a P in the name)
    epilogue: tuple                            # epilogue features kernels of the kind implement
    runtime_args: tuple                        # kiln_args fields the runtime passes for it
    name_suffix: str = ""                      # after the type codes in a kernel name ("P": prepacked B)
    declared: bool = False                     # the types alone do not make it: the YAML names it (problem.kind)
    block_scales: bool = False                 # KILN_SCALE_BLOCK: each 128-K group promoted with its scales
    grouped: bool = False                      # m-grouped (MoE): one B per group, groups sized on the device


KIND_INFO = {
    Kind.FP8_SCALED: KindSpec(
        Kind.FP8_SCALED, "fp8 x fp8", lambda a, b: is_fp8(a) and is_fp8(b),
        lambda a: (DType.F32, DType.F16, DType.BF16), (Layout.TN,),
        "fp8 operands must both be K-major (TN), as in cuBLASLt", False,
        ("scale_a", "scale_b", "bias", "activation"), ("a", "b", "d", "scale_a", "scale_b", "bias")),
    Kind.MIXED_W8: KindSpec(
        Kind.MIXED_W8, "f16/bf16 x fp8", lambda a, b: a in _16BIT and is_fp8(b),
        lambda a: (DType.F16, DType.BF16), (Layout.TN,), "mixed_w8 takes TN only (B is prepacked K-major)", True,
        ("scale_b", "bias", "activation"), ("a", "b", "d", "scale_b", "bias"), name_suffix="P"),
    Kind.GEMM: KindSpec(
        Kind.GEMM, "f16 x f16 or bf16 x bf16", lambda a, b: a == b and a in _16BIT,
        lambda a: (a, DType.F32), (Layout.TN, Layout.NN), "", False,
        ("alpha", "beta_c", "bias", "activation"), ("a", "b", "c", "d", "bias", "alpha", "beta")),
    Kind.FP8_BLOCK: KindSpec(
        Kind.FP8_BLOCK, "fp8 x fp8 with block scales", lambda a, b: is_fp8(a) and is_fp8(b),
        lambda a: (DType.F32, DType.F16, DType.BF16), (Layout.TN,),
        "fp8 operands must both be K-major (TN)", False,
        ("block_scales", "bias", "activation"), ("a", "b", "d", "scale_a", "scale_b", "bias"), name_suffix="Q",
        declared=True, block_scales=True),
    Kind.FP8_GROUPED: KindSpec(
        Kind.FP8_GROUPED, "fp8 x fp8, grouped", lambda a, b: is_fp8(a) and is_fp8(b),
        lambda a: (DType.F32, DType.F16, DType.BF16), (Layout.TN,),
        "fp8 operands must both be K-major (TN)", False,
        ("scale_a", "scale_b", "bias", "activation", "groups"),
        ("a", "b", "d", "scale_a", "scale_b", "bias", "group_index"), name_suffix="G", declared=True, grouped=True),
    Kind.FP8_BLOCK_GROUPED: KindSpec(
        Kind.FP8_BLOCK_GROUPED, "fp8 x fp8 with block scales, grouped", lambda a, b: is_fp8(a) and is_fp8(b),
        lambda a: (DType.F32, DType.F16, DType.BF16), (Layout.TN,),
        "fp8 operands must both be K-major (TN)", False,
        ("block_scales", "bias", "activation", "groups"),
        ("a", "b", "d", "scale_a", "scale_b", "bias", "group_index"), name_suffix="QG", declared=True,
        block_scales=True, grouped=True),
}
assert KIND_INFO.keys() == set(Kind)
assert all(spec.kind is kind for kind, spec in KIND_INFO.items())


assert all(spec.b_prepacked == (spec.name_suffix == "P") for spec in KIND_INFO.values())
# Kinds that take the same operand types differ in their names' suffix (model.decode reads the kind from it).
assert all(len({KIND_INFO[k].name_suffix for k in Kind if KIND_INFO[k].accepts(a, b)})
           == sum(KIND_INFO[k].accepts(a, b) for k in Kind) for a in DType for b in DType)


def kind_of(a: DType, b: DType, declared: Optional[Kind] = None) -> Optional[Kind]:
    """The problem kind a pair of operand types makes, or None when kiln has no such kind. A kind the types alone
    do not make (KindSpec.declared) is returned only when it is the declared one and takes the types."""
    kinds = [kind for kind, spec in KIND_INFO.items() if spec.accepts(a, b)]
    if declared is not None and KIND_INFO[declared].declared:
        return declared if declared in kinds else None
    kinds = [kind for kind in kinds if not KIND_INFO[kind].declared]
    assert len(kinds) <= 1, f"{a} x {b} makes several kinds: {kinds}"
    return kinds[0] if kinds else None


def kinds_text() -> str:
    """The kinds and the operands they take, for messages."""
    return "; ".join(f"{k.value}: {spec.operands}" for k, spec in KIND_INFO.items())


@dataclass(frozen=True)
class Problem:
    """A problem type: what one kernel computes, independent of sizes."""
    kind: Kind
    a: DType
    b: DType
    d: DType
    layout: Layout

    @property
    def spec(self) -> KindSpec:
        return KIND_INFO[self.kind]

    @property
    def b_prepacked(self) -> bool:
        return KIND_INFO[self.kind].b_prepacked

    @property
    def both_fp8(self) -> bool:
        return is_fp8(self.a) and is_fp8(self.b)

    @property
    def code(self) -> str:
        return (LAYOUT_INFO[self.layout].index_code + "_" + DTYPE_INFO[self.a].code + DTYPE_INFO[self.b].code
                + DTYPE_INFO[self.d].code + KIND_INFO[self.kind].name_suffix)
