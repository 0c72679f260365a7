"""One record per kernel family: everything that differs between families, asked by the rest of the generator.

A new family is one entry in FAMILIES (plus its template, its device header and, when it has any, its own rules);
the parameters it does not implement are fixed in the catalogue (params.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import rules, wgmma
from .vocab import AMD_INFO, ARCH_INFO, DType, Family, Kind, LaunchKind, Layout, Vendor, is_fp8


def _workgroup_threads(sol) -> int:
    return sol.wave * sol.wg[0] * sol.wg[1]


def _ring_stages(sol) -> int:
    """A ring of PGR + 1 LDS stages (cp.async / TMA write the stage computed PGR steps later)."""
    return sol.pgr + 1


def _amd_stages(sol) -> int:
    """LDS double-buffered behind a global -> VGPR prefetch (one buffer with 1LDSBuffer or without prefetch)."""
    return 1 if sol.pgr == 0 or sol.ldsb else 2


def _ring_lds(sol) -> int:
    return sol.stages * (sol.lds_tile_bytes("a") + sol.lds_tile_bytes("b"))


def _amd_lds(sol) -> int:
    """Per LDS buffer: A's and B's tiles and, for block-scaled fp8, the K tile's scales (MT0 + MT1 floats: see
    kiln_amd_gemm.h)."""
    scales = 4 * (sol.mt[0] + sol.mt[1]) if sol.problem.spec.block_scales else 0
    return sol.stages * (sol.lds_tile_bytes("a") + sol.lds_tile_bytes("b") + scales)


def _native_k32(sol) -> bool:
    return sol.mi[2] == 32


def _native_mfma(sol) -> bool:
    return tuple(sol.mi) in rules.MFMA_FP8


def _native_arch(sol) -> bool:
    return ARCH_INFO[sol.arch].fp8_mma


def _mma_op(sol, ta: str, tb: str) -> str:
    bf16 = sol.mma_type is DType.BF16
    return f"kiln::MmaF8<{ta}, {tb}>" if sol.native_fp8 else "kiln::MmaBF16" if bf16 else "kiln::MmaF16"


def _mfma_op(sol, ta: str, tb: str) -> str:
    m, bf16 = sol.mi[0], sol.mma_type is DType.BF16
    return f"kiln::MfmaF8<{m}, {ta}, {tb}>" if sol.native_fp8 else f"kiln::Mfma{'BF16' if bf16 else 'F16'}<{m}>"


# WMMA op generation (kiln_gemm_wmma.h) per matrix-core ISA of the wmma archs.
WMMA_GEN = {"rdna3": 11, "rdna4": 12}


def _wmma_op(sol, ta: str, tb: str) -> str:
    gen, bf16 = WMMA_GEN[AMD_INFO[sol.arch].matrix_isa], sol.mma_type is DType.BF16
    return f"kiln::WmmaF8<{ta}, {tb}>" if sol.native_fp8 else f"kiln::Wmma{'BF16' if bf16 else 'F16'}<{gen}>"


def _no_asm(sol) -> tuple:
    return ()


def _consumers_none(sol) -> int:
    """Filters (kiln-gen tune) read `consumers`: for a plain family, every warp (wave) of the workgroup."""
    return sol.wg[0] * sol.wg[1]


def _never(sol) -> bool:
    return False


@dataclass(frozen=True)
class FamilySpec:
    family: Family
    vendor: Vendor
    wave: int                       # threads of the unit wg counts: a warp / wavefront, or a wgmma warpgroup
    launch: LaunchKind              # how the runtime launches it
    template: str                   # its kernel template (templates/)
    device_header: str              # the hand-written device code its template includes
    default_mi: tuple               # (fp8 x fp8 on an arch with an fp8 instruction, anything else)
    mi_from_tile: Optional[Callable]  # when set, a left-out mi is derived from the tile (wgmma)
    rules: tuple                    # ((field, rule), ...) of its own, after the shape rules
    threads: Callable               # sol -> threads per workgroup
    consumers: Callable             # sol -> workgroup units computing a tile (tune filters)
    stages: Callable                # sol -> LDS buffers
    lds_bytes: Callable             # sol -> dynamic shared memory per workgroup
    kmajor_unroll_major: bool       # K-major operands always unroll-major in LDS (else they follow tlds)
    native_fp8: Callable            # sol (fp8 x fp8) -> whether the fp8 instruction is used (no widening)
    mma_op: Callable                # (sol, A device type, B device type) -> the device header's instruction type
    layouts: tuple = (Layout.TN, Layout.NN)  # the layouts it reads
    layout_reason: str = ""         # why it refuses the others ("the <family> family <reason>")
    swap: Callable = _never         # sol -> D computed transposed (B's rows on the M side; prepacked or sab 1)
    fast_accum: Callable = _never   # sol -> fp8 sums kept in reduced precision over all of K (kiln_solution.fast_accum)
    asm: Callable = _no_asm         # sol -> an instruction spelled out in the kernel (render's KernelView.wgmma)
    split: Callable = _never        # sol -> pr 1 keeps its two sums as column halves (KernelView.split)
    overlap: Callable = _never      # sol -> may launch overlapped with the stream's previous grid (kiln_solution.overlap)
    tma_store: Callable = _never    # sol -> can store D through a tensor map (kiln_solution.tma_store)
    half_asm: Callable = _no_asm    # sol -> the half-width instruction of split promotion, () where none
    sync: Callable = _never         # sol -> prepacked-weight tile whose warps issue mma.sync (KernelView.sync)
    kinds: tuple = (Kind.FP8_SCALED, Kind.MIXED_W8, Kind.GEMM)  # the problem kinds its kernels implement

    def default_mi_for(self, sol) -> tuple:
        """The instruction when the file gives none; sol's mt and wg must have passed rules.shape_problem."""
        if self.mi_from_tile is not None:
            return self.mi_from_tile(sol)
        fp8_mi, other = self.default_mi
        return fp8_mi if sol.problem.both_fp8 and ARCH_INFO[sol.arch].fp8_mma else other


_NVIDIA_RING = dict(vendor=Vendor.NVIDIA, stages=_ring_stages, kmajor_unroll_major=True, native_fp8=_native_k32)
_AMD = dict(vendor=Vendor.AMD, launch=LaunchKind.PLAIN, mi_from_tile=None, threads=_workgroup_threads,
            consumers=_consumers_none, stages=_amd_stages, lds_bytes=_amd_lds, kmajor_unroll_major=False)

FAMILIES = {
    Family.MMA: FamilySpec(
        Family.MMA, wave=32, launch=LaunchKind.PLAIN, template="kernel_mma.hip.j2", device_header="kiln_gemm_mma.h",
        default_mi=((16, 8, 32), (16, 8, 16)), mi_from_tile=None, rules=rules.MMA_RULES, threads=_workgroup_threads,
        consumers=_consumers_none, lds_bytes=_ring_lds, mma_op=_mma_op, **_NVIDIA_RING),
    Family.MFMA: FamilySpec(
        Family.MFMA, wave=64, template="kernel_mfma.hip.j2", device_header="kiln_gemm_mfma.h",
        default_mi=((32, 32, 16), (32, 32, 8)), rules=rules.MFMA_RULES, native_fp8=_native_mfma, mma_op=_mfma_op,
        kinds=(Kind.FP8_SCALED, Kind.MIXED_W8, Kind.GEMM, Kind.FP8_BLOCK, Kind.FP8_GROUPED, Kind.FP8_BLOCK_GROUPED),
        **_AMD),
    Family.WMMA: FamilySpec(
        Family.WMMA, wave=32, template="kernel_wmma.hip.j2", device_header="kiln_gemm_wmma.h",
        default_mi=((16, 16, 16), (16, 16, 16)), rules=rules.WMMA_RULES, native_fp8=_native_arch,
        mma_op=_wmma_op, **_AMD),
    Family.WGMMA: FamilySpec(
        Family.WGMMA, wave=wgmma.WAVE, launch=LaunchKind.TMA, template="kernel_wgmma.hip.j2",
        device_header="kiln_gemm_wgmma.h", default_mi=((64, 128, 32), (64, 128, 16)), mi_from_tile=wgmma.shape,
        rules=wgmma.RULES, threads=wgmma.threads, consumers=wgmma.consumers, lds_bytes=wgmma.lds_bytes,
        mma_op=lambda sol, ta, tb: "", layouts=(Layout.TN,),
        layout_reason="reads K-major A and B with TMA: TN only (NN problems are the mma family's)", swap=wgmma.swap,
        fast_accum=wgmma.fast_accum, asm=wgmma.asm, split=wgmma.split, overlap=wgmma.overlap,
        tma_store=wgmma.tma_store, half_asm=wgmma.half_asm, sync=wgmma.sync, kinds=(Kind.FP8_SCALED, Kind.MIXED_W8, Kind.GEMM, Kind.FP8_BLOCK, Kind.FP8_GROUPED,
                              Kind.FP8_BLOCK_GROUPED), **_NVIDIA_RING),
}
assert FAMILIES.keys() == set(Family)
assert all(spec.family is f for f, spec in FAMILIES.items())
assert all(FAMILIES[f].vendor is info.vendor for info in ARCH_INFO.values() for f in info.families)
assert {AMD_INFO[a].matrix_isa for a, info in ARCH_INFO.items() if Family.WMMA in info.families} == WMMA_GEN.keys()

# Compatibility views (one per family, from the records).
FAMILY_VENDOR = {f: spec.vendor for f, spec in FAMILIES.items()}
FAMILY_WAVE = {f: spec.wave for f, spec in FAMILIES.items()}


def check(sol) -> Optional[tuple]:
    """The first rule a solution breaks, as (field, why), or None when it is valid. The shape rules (mt, wg, mi
    positive and bounded) run first: the others derive from those values."""
    spec = FAMILIES[sol.family]
    for field, rule in (rules.SHAPE_RULES + spec.rules + rules.FIXED_RULES + rules.PARAM_RULES + rules.LDS_RULES):
        why = rule(sol)
        if why:
            return field, why
    return None


def default_mi(arch, a, b, family=None) -> tuple:
    """The instruction a family (default: the arch's first) uses for a x b when the file gives none. wgmma derives
    it from the tile instead (FamilySpec.default_mi_for)."""
    fp8_mi, other = FAMILIES[family or ARCH_INFO[arch].family].default_mi
    return fp8_mi if is_fp8(a) and is_fp8(b) and ARCH_INFO[arch].fp8_mma else other
