"""Attention forward kernels: the frozen AttnSolution whose name is its identity, its inverse (decode), one record per
family (header, template, threads, LDS, rules, expected instructions) and the parameter catalogue.

The kernels are the hand-written device headers device/kiln_attn_wgmma.h (sm_90a: TMA, warp-specialized, wgmma fp8),
device/kiln_attn_mma.h (NVIDIA mma.sync fp8), device/kiln_attn_mfma.h
(gfx942 fp8 MFMA) and device/kiln_attn_wmma.h (RDNA: fp8 WMMA on gfx1201, f16 WMMA on widened fp8 on gfx1151); a
generated translation unit instantiates one Config of one of them. Every rule here restates a static_assert of its
header, so a solution that passes them meets the header's; the generated unit static_asserts the shared memory and
threads computed here against the header's own constants.

This module needs no YAML reader (the build steps decode names with it); solution files are read by attention_yaml.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Callable

from .model import fnv1a64
from .vocab import AMD_INFO, ARCH_INFO, DTYPE_BY_CODE, DTYPE_INFO, Arch, DType, Family, c_enum

HEAD_DIMS = (64, 128, 256)
OUTPUTS = (DType.BF16, DType.F16)
NAME_PREFIX = "Attn"


@dataclass(frozen=True)
class AttnParam:
    """One solution parameter: its YAML key, name token, default (None: required) and what it means."""
    field: str
    token: str
    default: object
    doc: str
    least: int = -1  # the smallest value a solution may give (-1: 0 where the default is 0, else 1)

    @property
    def minimum(self) -> int:
        return self.least if self.least >= 0 else (0 if self.default == 0 else 1)


# Catalogue order is name order. head_dim, bm and bn belong to every family; the rest to the families naming them.
PARAMS = (
    AttnParam("head_dim", "D", None, "head dimension D of Q, K and V (64, 128 or 256)"),
    AttnParam("bm", "BM", None, "query rows per workgroup"),
    AttnParam("bn", "BN", None, "keys per K/V tile"),
    AttnParam("warps", "W", None, "mma: warps per CTA; each owns 16 query rows (bm = 16 * warps)"),
    AttnParam("stages", "S", 2, "mfma, wmma: LDS buffers of K/V tiles (2: double-buffered, 1: to fit LDS); wgmma: "
                                "stages of the K and V^T rings (2..4)"),
    AttnParam("sched", "SC", 0, "wgmma: 0 runs each key tile's S, softmax and P V in turn; 1 overlaps the softmax "
                                "of tile j with P V of tile j - 1 (one more set of P registers); 2 is 1 with the "
                                "two consumer warpgroups taking turns at the tensor cores; 3 is 0 with the two "
                                "consumer warpgroups taking turns at the softmax"),
    AttnParam("psum", "PS", 0, "wgmma: 1 sums P's rows on the tensor cores (8 columns of ones beside V, P V at N = "
                               "128 + 8 or 64 + 8) instead of the FP32 pipe; with pv 16 at head dim 64 or 128"),
    AttnParam("promote", "PR", 1, "wgmma: P V runs into fresh accumulators for this many key tiles, then is added "
                                  "to O in FP32 (wgmma's fp8 sums keep fewer bits than FP32: one sum over the whole "
                                  "key range is biased by ~15% at 8k keys where V's columns have a mean); 1..4 with "
                                  "pv 8, 0 with pv 16 (f16 sums keep FP32's bits)", least=0),
    AttnParam("fexp", "FE", 0, "wgmma: of every 4 exponentials of an unmasked key tile, how many run on the FMA pipe "
                               "(a degree-3 polynomial scaled by 2^round(x)) instead of MUFU.EX2, which does 16 a "
                               "clock per SM; 0..4"),
    AttnParam("speculate", "SP", 0, "wgmma: 1 makes P with the row max as it stands while it takes the tile's max "
                                    "beside it (the max moves on few tiles with pv 16's lazy max; where it moves, P "
                                    "is made again); 2 is 1 with the move read off the f16 P (max.f16x2 over P's "
                                    "registers) instead of an FP32 max over S; 0 takes the tile's max first. 1 and 2 "
                                    "need pv 16"),
    AttnParam("pv", "PV", 8, "wgmma: the type of P and V in P V: 8 (P requantized to e4m3, V^T fp8: FlashAttention-3's "
                             "recipe) or 16 (P rounded to f16, V widened to f16 by the producer and read MN-major: wgmma "
                             "m64nNk16 at half the fp8 rate, no promotion, one pass over the keys at head dim 256, "
                             "P's rounding error ~1e-3 instead of ~2.5e-2, and the row max moves only when it rises "
                             "by more than 2^7; needs promote 0)"),
    AttnParam("vpre", "VP", 0, "wgmma: 1 reads V^T that the caller packed in f16 (kiln_attn_pack_v; the problem's "
                               "v_packed = 1): TMA writes the V^T stages as the consumers read them, so the producer "
                               "neither widens nor transposes V and keeps no raw V tiles; needs pv 16. Such a kernel "
                               "takes only problems with a packed V, the others only problems without"),
    AttnParam("persist", "PE", 0, "wgmma: 1 makes the CTAs persistent: the runtime launches at most one a SM over a "
                                  "work order of query blocks (kiln_attn_abi.h: sections of heads whose K and V fit "
                                  "in L2, causal blocks paired with their mirror), and the producer loads the next "
                                  "block's Q and key tiles while the consumers finish the last one; such a kernel "
                                  "stores O through TMA from shared memory where it fits (kiln_attn_wgmma.h OTMA); "
                                  "2 is 1 with the split tail: where whole query blocks would leave the last round "
                                  "part empty, the last blocks of the order are cut along their keys into one even "
                                  "range a CTA and the two pieces of a cut block merged (non-causal fixed lengths, "
                                  "with the workspace kiln_attn_args.split_work); needs pv 16"),
    AttnParam("occ", "OCC", 2, "mfma, wmma: waves per SIMD the compiler must allow (amdgpu_waves_per_eu); the build "
                               "checks the occupancy reaches it"),
)
PARAM = {p.field: p for p in PARAMS}
COMMON = ("head_dim", "bm", "bn")


@dataclass(frozen=True)
class AttnFamily:
    """Everything that differs between attention kernel families."""
    family: Family
    header: str                          # device header holding the kernel
    template: str                        # templates/<template>: one translation unit
    params: tuple                        # parameters beyond COMMON, catalogue order
    threads: Callable[["AttnSolution"], int]
    lds_bytes: Callable[["AttnSolution"], int]   # the header's SMEM_BYTES / LDS_BYTES formula
    rules: Callable[["AttnSolution"], list]      # [(field, why)] of a solution the header would refuse
    constants: Callable[["AttnSolution"], tuple]  # (Config constant, value) in the order the header documents
    matrix_ops: Callable[["AttnSolution"], frozenset]  # AMD: matrix instructions the code object must hold
    p_bits: Callable[["AttnSolution"], int]      # P's bits in P V: 8 (requantized to fp8, the FP8 recipe) or 16

    @property
    def fields(self) -> tuple:
        return COMMON + self.params


# __launch_bounds__' second argument, fixed for every mma kernel: 1 asks ptxas for no occupancy, so it may use up to
# 255 registers a thread (the shipped configs take 121-255 and none spills); a higher value would cap the registers.
# Not a parameter, so not in the names.
MMA_MIN_BLOCKS = 1
MFMA_WAVES = 4  # kiln_attn_mfma.h: 4 waves of 64 lanes


def _mma_lds(s: "AttnSolution") -> int:
    """kiln_attn_mma.h: two stages of K and V tiles (bn x D bytes each), stage 1 overlaid by Q (bm x D bytes)."""
    stage = 2 * s.bn * s.head_dim
    return stage + max(stage, s.bm * s.head_dim)


def _mma_rules(s: "AttnSolution") -> list:
    out = []
    if not 1 <= s.warps <= 32:
        out.append(("warps", f"{s.warps} must be in 1..32 (32 * warps threads, at most 1024)"))
    elif s.bm != 16 * s.warps:
        out.append(("bm", f"{s.bm} must be 16 * warps = {16 * s.warps} (each warp owns 16 query rows)"))
    if s.bn < 32 or s.bn % 32:
        out.append(("bn", f"{s.bn} must be a positive multiple of 32 (whole k32 steps of P V)"))
    return out


def _mma_constants(s: "AttnSolution") -> tuple:
    return (("D", s.head_dim), ("BM", s.bm), ("BN", s.bn), ("WARPS", s.warps), ("MIN_BLOCKS", MMA_MIN_BLOCKS))



def _mfma_m(s: "AttnSolution") -> int:
    """Query rows per wave: the MFMA block (32: 32x32x16, 16: 16x16x32)."""
    return s.bm // MFMA_WAVES


def _mfma_lds(s: "AttnSolution") -> int:
    """kiln_attn_mfma.h: per buffer, K (bn x D bytes) and V^T (D x bn bytes)."""
    return s.stages * 2 * s.bn * s.head_dim


def _mfma_rules(s: "AttnSolution") -> list:
    out = []
    m = _mfma_m(s)
    if s.bm not in (64, 128):
        out.append(("bm", f"{s.bm} must be 128 (32x32x16 MFMA) or 64 (16x16x32 MFMA): 4 waves of 32 or 16 rows"))
    elif s.bn not in (32, 64, 128) or s.bn % m or (s.bn // (8 * (64 // m))) % 2:
        allowed = "32, 64 or 128" if m == 32 else "64 or 128"
        out.append(("bn", f"{s.bn} must be {allowed} with bm {s.bm} (whole key blocks and 16-byte V^T reads)"))
    return out + _amd_stages_occ(s)


def _amd_stages_occ(s: "AttnSolution") -> list:
    """The LDS buffers and the occupancy target, as both AMD families take them."""
    out = []
    if s.stages not in (1, 2):
        out.append(("stages", f"{s.stages} must be 1 or 2 (LDS buffers)"))
    most = AMD_INFO[s.arch].max_waves_per_simd
    if not 1 <= s.occ <= most:
        out.append(("occ", f"{s.occ} must be in 1..{most} (waves per SIMD on {s.arch.value})"))
    return out


def _mfma_constants(s: "AttnSolution") -> tuple:  # and wmma's: the same Config fields
    return (("D", s.head_dim), ("BM", s.bm), ("BN", s.bn), ("STAGES", s.stages), ("OCC", s.occ))


WGMMA_BMS = (64, 128, 192)  # kiln_attn_wgmma.h: a producer warpgroup and one to three consumer warpgroups of 64 rows
WGMMA_SCHEDS = (0, 1, 2, 3)  # kiln_attn_wgmma.h SCHED: 1 and 2 hold a second set of P, 2 and 3 alternate two consumers
# Accumulators a consumer thread may hold: O ((DV + 8 psum) / 2, twice with promotion; DV = min(D, 128): head dim
# 256 makes two passes of 128 output columns, and its pass state and 8-step S take 8 more) + S (BN / 2) + P's fp8
# registers (BN / 8, twice with sched 1 or 2). ptxas gives the consumers the registers setmaxnreg raises them to: 232
# with bm 128 (the producer keeps 40 of the CTA's 168 x 384) and 240 with bm 64 (one consumer); 224 (232) held leave
# room for the addressing and the softmax state (D 256, BN 128, psum, promote at sched 0 holds 224 and compiles without
# spills; D 128, BN 128 at sched 1 holds 232 and spills ~750 bytes). With bm 192 (512 threads, 128 registers a thread
# at launch) the consumers get 160 (152 beside the transposing producer): 128 held fit without spills (D 64, BN 128,
# sched 0; D 128, BN 64, sched 1 with vpre), 160 at sched 1 spills 448 bytes (harness, nvcc 13).
WGMMA_REGS = {128: 224, 64: 232, 192: 128}
# bm 192 with a prepacked V^T (the producer is one TMA thread at 24 registers, the consumers get 160): 132 held (D 64,
# BN 128, sched 0, psum 1; D 128, BN 64, sched 1, psum 1) compile without spills, where beside the transposer (152) the
# same spill 128-256 bytes and serialize the wgmma (nvcc 13).
WGMMA_REGS_VPRE_192 = 132


def wgmma_fills_v(s: "AttnSolution") -> bool:
    """kiln_attn_wgmma.h FILL: a packed-V^T kernel whose producer's idle warps can pack V^T themselves while it runs
    (kiln_attn_params.vt_fill; the table's v_packed 2): one or two consumer warpgroups (three leave the producer no
    warps' worth of registers)."""
    return bool(s.family is Family.WGMMA and s.vpre and s.bm in (64, 128))


def _wgmma_reg_limit(s: "AttnSolution") -> int:
    # persist at bm 128 (kiln_attn_wgmma.h WIDE_PRODUCER, THIN_PRODUCER): beside the transposer the producer keeps 56
    # (its item loop spilled at 40) and the consumers get 224; with vpre the producer keeps 24 and they get 240
    shift = (8 if s.vpre else -8) if s.persist and s.bm == 128 else 0
    return WGMMA_REGS_VPRE_192 if s.bm == 192 and s.vpre else WGMMA_REGS[s.bm] + shift


def _wgmma_dv(s: "AttnSolution") -> int:
    """O's columns per pass over the keys (kiln_attn_wgmma.h DV): one pass with f16 P V."""
    return s.head_dim if s.pv == 16 else min(s.head_dim, 128)


def _wgmma_held(s: "AttnSolution") -> int:
    o = (_wgmma_dv(s) + 8 * s.psum) // 2
    p = s.bn // (4 if s.pv == 16 else 8)  # P's A registers: BN / 16 k16 steps (f16) or BN / 32 k32 steps (fp8), 4 each
    return (o * (2 if s.promote else 1) + s.bn // 2 + (2 if s.sched in (1, 2) else 1) * p
            + (8 if s.head_dim > _wgmma_dv(s) else 0))


def _wgmma_vt(s: "AttnSolution") -> int:
    """A V^T stage: with pv 16, the widened V f16 [BN][D] (+ a panel of 64 columns of ones with psum), or with vpre
    the packed V^T f16 [D (+ 8 rows of ones with psum)][BN]; with pv 8, fp8 [DV (+ 8 rows of ones with psum)][BN]
    padded to 1 KB."""
    if s.pv == 16:
        return (s.head_dim + (8 if s.vpre else 64) * s.psum) * s.bn * 2
    return -(-s.bn * (_wgmma_dv(s) + 8 * s.psum) // 1024) * 1024


def _wgmma_lds(s: "AttnSolution") -> int:
    """kiln_attn_wgmma.h SMEM_BYTES: Q (BM x D), the K ring (stages x BN x D), the V^T ring (stages x _wgmma_vt), two
    raw V tiles of a pass (BN x DV; none with vpre), the mbarriers (1 + 4 * stages + 2 + 1), with persist 2 the split
    tail's plan (64 bytes) and 1024 bytes to align
    the base for the swizzle; persistent kernels store O with TMA (OTMA) from staging panels after the next 1 KB, 16
    rows of head_dim 16-bit values a consumer warp, where that fits in 227 KB."""
    dv = _wgmma_dv(s)
    raw = 0 if s.vpre else 2 * s.bn * dv
    end = (s.bm * s.head_dim + s.stages * (s.bn * s.head_dim + _wgmma_vt(s)) + raw
           + 8 * (1 + 4 * s.stages + 2 + 1) + (64 if s.persist == 2 else 0))  # (persist 2: the split tail's plan)
    for rounds in (1, 2, 4):  # the staging takes 1 / rounds of the columns at a time where the whole rows do not fit
        staged = -(-end // 1024) * 1024 + (s.bm // 64) * 4 * 16 * dv * 2 // rounds + 1024
        if s.persist and (dv // 64) % rounds == 0 and staged <= 227 * 1024:
            return staged
    return end + 1024


def _wgmma_pv_rules(s: "AttnSolution") -> list:
    """P V's type and what it implies for the promotion and the row sums."""
    if s.pv not in (8, 16):
        return [("pv", f"{s.pv} must be 8 (P and V^T in fp8) or 16 (in f16)")]
    if s.pv == 16 and s.promote != 0:
        return [("promote", f"{s.promote} must be 0 with pv 16 (f16 P V sums keep FP32's bits: no promotion)")]
    if s.pv == 16 and s.psum == 1 and s.head_dim + 8 > 256:
        return [("psum", f"1 with pv 16 needs head_dim 64 or 128 (P V and its 8 columns of row sums are one wgmma of "
                         f"N = head_dim + 8 <= 256; got {s.head_dim})")]
    if s.pv == 8 and not 1 <= s.promote <= 4:
        return [("promote", f"{s.promote} must be 1..4 (key tiles per wgmma sum before it is added to O in FP32)")]
    if s.vpre not in (0, 1):
        return [("vpre", f"{s.vpre} must be 0 (V as given, fp8) or 1 (V^T packed in f16 by kiln_attn_pack_v)")]
    if s.vpre and s.pv != 16:
        return [("vpre", "1 needs pv 16 (the packed V^T is f16, so P V runs in f16)")]
    if s.speculate not in (0, 1, 2):
        return [("speculate", f"{s.speculate} must be 0 (the tile's max first), 1 (P with the running max, the "
                              f"tile's max beside it) or 2 (1 with the move read off P)")]
    if s.speculate and s.pv != 16:
        return [("speculate", f"{s.speculate} needs pv 16 (P made before the max is known needs f16's room above "
                              f"the lazy max)")]
    if s.persist not in (0, 1, 2):
        return [("persist", f"{s.persist} must be 0 (a CTA a query block), 1 (persistent CTAs over the work order) or "
                            f"2 (1 with the split tail)")]
    if s.persist and s.pv != 16:
        return [("persist", f"{s.persist} needs pv 16 (with fp8 P beside the transposing producer the item loop "
                            f"spills)")]
    return []


def _wgmma_rules(s: "AttnSolution") -> list:
    out = []
    if s.bm not in WGMMA_BMS:
        out.append(("bm", f"{s.bm} must be 64, 128 or 192 (one, two or three consumer warpgroups of 64 query rows)"))
    elif s.sched in (2, 3) and s.bm != 128:
        out.append(("sched", f"{s.sched} alternates two consumer warpgroups: bm must be 128"))
    if s.bn not in (64, 128):
        out.append(("bn", f"{s.bn} must be 64 or 128 (a V^T row is one 64- or 128-byte swizzle span)"))
    elif (s.bm in WGMMA_BMS and _wgmma_held(s) > _wgmma_reg_limit(s) and s.sched in WGMMA_SCHEDS and s.psum in (0, 1)
          and not _wgmma_pv_rules(s)):  # (a bad bm, sched, psum, pv or promote is blamed instead)
        out.append(("bn", f"head_dim {s.head_dim} with bn {s.bn} (bm {s.bm}, sched {s.sched}, psum {s.psum}, promote "
                          f"{s.promote}) holds {_wgmma_held(s)} accumulator registers a thread; at most "
                          f"{_wgmma_reg_limit(s)} fit (use bn 64 or sched 0)"))
    if not 2 <= s.stages <= 4:
        out.append(("stages", f"{s.stages} must be 2..4 (K and V^T ring stages)"))
    if s.sched not in WGMMA_SCHEDS:
        out.append(("sched", f"{s.sched} must be 0 (tile by tile), 1 (softmax overlapping P V), 2 (1 with the "
                              f"consumers taking turns) or 3 (0 with the softmaxes taking turns)"))
    if s.psum not in (0, 1):
        out.append(("psum", f"{s.psum} must be 0 (row sums in FP32) or 1 (on the tensor cores)"))
    out += _wgmma_pv_rules(s)
    if not 0 <= s.fexp <= 4:
        out.append(("fexp", f"{s.fexp} must be 0..4 (of every 4 exponentials, how many run on the FMA pipe)"))
    return out


def _wgmma_constants(s: "AttnSolution") -> tuple:
    return (("D", s.head_dim), ("BM", s.bm), ("BN", s.bn), ("STAGES", s.stages), ("SCHED", s.sched), ("PSUM", s.psum),
            ("PROMOTE", s.promote), ("FEXP", s.fexp), ("SPEC", int(s.speculate > 0)), ("PMAX", int(s.speculate == 2)),
            ("PV", s.pv), ("VPRE", s.vpre), ("PERSIST", s.persist), ("OTMA", s.persist))


_MFMA_FP8 = {DType.E4M3FNUZ: "fp8", DType.E5M2FNUZ: "bf8"}  # the MFMA mnemonics' spelling of the FNUZ types
assert set(_MFMA_FP8) == {t for t in DType if DTYPE_INFO[t].fp8 == ARCH_INFO[Arch.GFX942].fp8_formats}


def _mfma_ops(s: "AttnSolution") -> frozenset:
    """S^T = K Q^T in the input type on both sides; O^T += V^T P^T with P in e4m3fnuz (fp8) as the B operand."""
    shape = "32x32x16" if _mfma_m(s) == 32 else "16x16x32"
    f = _MFMA_FP8[s.qkv]
    return frozenset({f"v_mfma_f32_{shape}_{f}_{f}", f"v_mfma_f32_{shape}_{f}_fp8"})


def _wmma_q_in_lds(s: "AttnSolution") -> bool:
    """kiln_attn_wmma.h keeps Q in LDS on gfx11 (RDNA3: no fp8 WMMA, operands widened after the local read)."""
    return AMD_INFO[s.arch].matrix_isa == "rdna3"


def _wmma_lds(s: "AttnSolution") -> int:
    """kiln_attn_wmma.h: per buffer, K (bn x D bytes) and V^T (D x bn bytes); on gfx11 the Q tile (bm x D) too."""
    return s.stages * 2 * s.bn * s.head_dim + (s.bm * s.head_dim if _wmma_q_in_lds(s) else 0)


def _wmma_rules(s: "AttnSolution") -> list:
    out = []
    if s.bm not in (64, 128):
        out.append(("bm", f"{s.bm} must be 64 or 128 (4 or 8 waves of 16 query rows)"))
    if s.bn not in (32, 64, 128):
        out.append(("bn", f"{s.bn} must be 32, 64 or 128 (whole 16-key blocks and 16-byte V^T reads)"))
    return out + _amd_stages_occ(s)


_WMMA_FP8 = {DType.E4M3: "fp8", DType.E5M2: "bf8"}  # the WMMA mnemonics' spelling of the OCP types
assert set(_WMMA_FP8) == {t for t in DType if DTYPE_INFO[t].fp8 == ARCH_INFO[Arch.GFX1201].fp8_formats}


def _wmma_ops(s: "AttnSolution") -> frozenset:
    """gfx12: S^T = K Q^T in the input type, O^T += V^T P^T with P in e4m3 (fp8); gfx11: f16 WMMA only."""
    if _wmma_q_in_lds(s):
        return frozenset({"v_wmma_f32_16x16x16_f16"})
    f = _WMMA_FP8[s.qkv]
    return frozenset({f"v_wmma_f32_16x16x16_{f}_{f}", f"v_wmma_f32_16x16x16_{f}_fp8"})


FAMILIES = {
    Family.WGMMA: AttnFamily(Family.WGMMA, "kiln_attn_wgmma.h", "attn_wgmma.hip.j2",
                             ("stages", "sched", "psum", "promote", "fexp", "speculate", "pv", "vpre", "persist"),
                             threads=lambda s: 128 + 2 * s.bm,
                             lds_bytes=_wgmma_lds, rules=_wgmma_rules, constants=_wgmma_constants,
                             matrix_ops=lambda s: frozenset(), p_bits=lambda s: s.pv),
    Family.MMA: AttnFamily(Family.MMA, "kiln_attn_mma.h", "attn_mma.hip.j2", ("warps",),
                           threads=lambda s: 32 * s.warps, lds_bytes=_mma_lds, rules=_mma_rules,
                           constants=_mma_constants, matrix_ops=lambda s: frozenset(), p_bits=lambda s: 8),
    Family.MFMA: AttnFamily(Family.MFMA, "kiln_attn_mfma.h", "attn_mfma.hip.j2", ("stages", "occ"),
                            threads=lambda s: 64 * MFMA_WAVES, lds_bytes=_mfma_lds, rules=_mfma_rules,
                            constants=_mfma_constants, matrix_ops=_mfma_ops, p_bits=lambda s: 8),
    Family.WMMA: AttnFamily(Family.WMMA, "kiln_attn_wmma.h", "attn_wmma.hip.j2", ("stages", "occ"),
                            threads=lambda s: 2 * s.bm, lds_bytes=_wmma_lds, rules=_wmma_rules,
                            constants=_mfma_constants, matrix_ops=_wmma_ops,
                            p_bits=lambda s: 16 if _wmma_q_in_lds(s) else 8),  # gfx11: f16 WMMA only
}
assert all(spec.family is family for family, spec in FAMILIES.items())
assert all(p in PARAM for spec in FAMILIES.values() for p in spec.params)

# The archs with attention kernels and their families (the ones each header compiles for).
ARCH_FAMILY = {Arch.SM90: (Family.WGMMA, Family.MMA), Arch.SM89: (Family.MMA,), Arch.GFX942: (Family.MFMA,),
               Arch.GFX1151: (Family.WMMA,), Arch.GFX1201: (Family.WMMA,)}
assert all(f in ARCH_INFO[a].families for a, fs in ARCH_FAMILY.items() for f in fs)


def qkv_types(arch: Arch) -> tuple:
    """The fp8 types an arch's attention kernels read: its fp8 encodings (OCP on NVIDIA, FNUZ on gfx942)."""
    speaks = ARCH_INFO[arch].fp8_formats
    return tuple(t for t in DType if DTYPE_INFO[t].fp8 == speaks)


@dataclass(frozen=True)
class AttnSolution:
    arch: Arch
    family: Family
    qkv: DType        # Q, K and V
    o: DType          # output
    head_dim: int
    bm: int
    bn: int
    warps: int = 0    # the parameters a family does not take stay 0 (and are not in its names)
    stages: int = 0
    sched: int = 0
    psum: int = 0
    promote: int = 0
    fexp: int = 0
    speculate: int = 0
    pv: int = 0
    vpre: int = 0
    persist: int = 0
    occ: int = 0

    @property
    def spec(self) -> AttnFamily:
        return FAMILIES[self.family]

    @property
    def name(self) -> str:
        parts = [NAME_PREFIX, DTYPE_INFO[self.qkv].code + DTYPE_INFO[self.o].code]
        parts += [PARAM[f].token + str(getattr(self, f)) for f in self.spec.fields]
        parts += [self.family.value.upper(), self.arch.value.upper()]
        return "_".join(parts)

    @property
    def threads(self) -> int:
        return self.spec.threads(self)

    @property
    def lds_bytes(self) -> int:
        return self.spec.lds_bytes(self)

    @property
    def p_bits(self) -> int:
        """P's bits in the P V product: 8 (P requantized to fp8) or 16 (f16; the runtime prefers these unless the
        problem asks for fp8 P, kiln_attn_problem.fp8_p)."""
        return self.spec.p_bits(self)

    def problems(self) -> list:
        """[(field, why)]: what the arch and the family's header refuse (empty for a buildable solution)."""
        out = []
        families = ARCH_FAMILY.get(self.arch)
        if families is None:
            out.append(("arch", f"{self.arch.value} has no attention kernels (archs: "
                                f"{', '.join(a.value for a in ARCH_FAMILY)})"))
            return out
        if self.family not in families:
            out.append(("family", f"{self.arch.value}'s attention families are {', '.join(f.value for f in families)}, "
                                  f"not {self.family.value}"))
            return out
        if self.qkv not in qkv_types(self.arch):
            out.append(("qkv", f"{self.qkv.value} is not an fp8 type {self.arch.value} reads; use "
                               f"{' or '.join(t.value for t in qkv_types(self.arch))}"))
        if self.o not in OUTPUTS:
            out.append(("o", f"{self.o.value} is not an attention output; use bf16 or f16"))
        if self.head_dim not in HEAD_DIMS:
            out.append(("head_dim", f"{self.head_dim} must be 64, 128 or 256"))
        for f in ("bm", "bn") + self.spec.params:
            if getattr(self, f) < PARAM[f].minimum:  # sched and promote may be 0, the rest are counts
                out.append((f, f"{getattr(self, f)} must be {'non-negative' if PARAM[f].minimum == 0 else 'positive'}"))
        unused = [f.name for f in fields(self) if f.name in PARAM and f.name not in self.spec.fields
                  and getattr(self, f.name)]
        out += [(f, f"the {self.family.value} family takes no {f}") for f in unused]
        if out:
            return out
        out += self.spec.rules(self)
        limit = ARCH_INFO[self.arch].lds_limit
        if not out and self.lds_bytes > limit:
            out.append(("bn", f"head_dim {self.head_dim}, bm {self.bm}, bn {self.bn} need {self.lds_bytes} bytes of "
                              f"shared memory; {self.arch.value} allows {limit}"))
        return out


class AttnNameError(ValueError):
    pass


_TYPES = re.compile(r"^(F8N|B8N|F8|B8)(B|H)$")
_TOKEN = re.compile(r"^([A-Z]+)([0-9]+)$")


def is_attention_name(name: str) -> bool:
    return name.startswith(NAME_PREFIX + "_")


def decode(name: str) -> AttnSolution:
    """Inverse of AttnSolution.name. Raises AttnNameError naming what it could not read."""
    tokens = name.split("_")
    if len(tokens) < 4 or tokens[0] != NAME_PREFIX:
        raise AttnNameError(f"{name}: not an attention kernel name ({NAME_PREFIX}_<types>_..._<FAMILY>_<ARCH>)")
    m = _TYPES.match(tokens[1])
    if not m:
        raise AttnNameError(f"{name}: unknown type token {tokens[1]}")
    qkv, o = (DTYPE_BY_CODE[c] for c in m.groups())
    try:
        family, arch = Family(tokens[-2].lower()), Arch(tokens[-1].lower())
    except ValueError as exc:
        raise AttnNameError(f"{name}: {exc}") from None
    if family not in FAMILIES:
        raise AttnNameError(f"{name}: {family.value} has no attention kernels")
    wanted = FAMILIES[family].fields
    body = tokens[2:-2]
    if len(body) != len(wanted):
        raise AttnNameError(f"{name}: expected {len(wanted)} parameters for {family.value}, got {len(body)}")
    values = {}
    for field, tok in zip(wanted, body):
        t = _TOKEN.match(tok)
        if not t or t.group(1) != PARAM[field].token:
            raise AttnNameError(f"{name}: expected {PARAM[field].token}<int>, got {tok}")
        values[field] = int(t.group(2))
    sol = AttnSolution(arch=arch, family=family, qkv=qkv, o=o, **values)
    if sol.name != name:
        raise AttnNameError(f"{name}: not in canonical form (re-encodes as {sol.name})")
    for field, why in sol.problems()[:1]:  # a name no solution file could have made
        raise AttnNameError(f"{name}: {field}: {why}")
    return sol


def as_dict(sol: AttnSolution) -> dict:
    """Parameters of a solution as plain values (kiln-gen decode / list)."""
    out = {"name": sol.name, "arch": sol.arch.value, "family": sol.family.value, "kind": "attention",
           "qkv": sol.qkv.value, "o": sol.o.value}
    out.update({f: getattr(sol, f) for f in sol.spec.fields})
    out.update(threads=sol.threads, lds_bytes=sol.lds_bytes)
    return out


# --- what the templates and the C table substitute ------------------------------------------------------------------

@dataclass(frozen=True)
class AttnView:
    name: str
    header: str
    t8: str
    to: str
    constants: tuple
    threads: int
    lds_bytes: int
    pack: str  # the V^T packer of a vpre kernel ("" without): a second kernel in its code object


def pack_kernel(sol: AttnSolution) -> str:
    """The symbol of the V^T packer that a vpre kernel's code object also holds (kiln_attn_pack_v launches it)."""
    return f"{sol.name}_pack" if sol.vpre else ""


def view(sol: AttnSolution) -> AttnView:
    return AttnView(name=sol.name, header=sol.spec.header, t8=DTYPE_INFO[sol.qkv].device_type,
                    to=DTYPE_INFO[sol.o].device_type, constants=sol.spec.constants(sol), threads=sol.threads,
                    lds_bytes=sol.lds_bytes, pack=pack_kernel(sol))


def table_row(sol: AttnSolution) -> dict:
    return {"name": sol.name, "hash": f"0x{fnv1a64(sol.name):016x}ull", "arch": c_enum("ARCH", sol.arch),
            "family": c_enum("FAMILY", sol.family), "qkv": DTYPE_INFO[sol.qkv].c_enum, "o": DTYPE_INFO[sol.o].c_enum,
            "head_dim": sol.head_dim, "bm": sol.bm, "bn": sol.bn, "threads": sol.threads, "lds": sol.lds_bytes,
            "p_bits": sol.p_bits, "v_packed": 2 if wgmma_fills_v(sol) else sol.vpre, "persistent": sol.persist}
