"""The parameter catalogue: every solution parameter once, with its name token, value count, the C type it lands in,
its default, the values it may take, its meaning, and the value it is fixed to in the families that do not use it.

schema.py takes defaults from here, rules.py its range checks and fixed-value rules, and docs/naming.md its parameter
table (`kiln-gen docs` writes it; a test checks the committed copy)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from .vocab import Family

# The C types parameters land in: kernels get `static constexpr int`, the dispatch table `int` fields.
C_TYPE_RANGE = {"int": (-(2 ** 31), 2 ** 31 - 1)}


@dataclass(frozen=True)
class Param:
    field: str                 # YAML key and Solution field
    token: str                 # name prefix
    count: int                 # 1, or the length of the tuple the value is
    allowed: Union[range, tuple]  # values each element may take
    default: Optional[object]  # built-in default; None: required (mt, wg) or derived (mi)
    doc: str                   # one line: what it means
    fixed: tuple = ()          # ((Family, value, why), ...): the one value a family that does not use it takes
    say: str = ""              # how messages name `allowed` (derived when empty)
    c_type: str = "int"

    @property
    def uses(self) -> tuple:
        """The families that choose this parameter (the others take their fixed value)."""
        held = {f for f, _v, _w in self.fixed}
        return tuple(f for f in Family if f not in held)

    def fixed_for(self, family: Family):
        """(value, why) when family fixes this parameter, else None."""
        return next(((v, w) for f, v, w in self.fixed if f is family), None)

    @property
    def allowed_text(self) -> str:
        if self.say:
            return self.say
        a = self.allowed
        if isinstance(a, range) and a.step > 1:
            return f"a multiple of {a.step} in {a.start}..{a[-1]}"
        if isinstance(a, range) and len(a) > 2:
            return f"in {a.start}..{a[-1]}"
        words = [str(v) for v in a]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


_POW2_1024 = (0,) + tuple(1 << i for i in range(11))
_PAD = range(0, 129, 16)
_VW = (1, 2, 4, 8, 16)
_FLAG = range(0, 2)
_MMA, _MFMA, _WMMA, _WGMMA = Family.MMA, Family.MFMA, Family.WMMA, Family.WGMMA
_AMD_ONLY_MMA = "has no 1LDSBuffer (its LDS ring has pgr + 1 stages; use pgr)"
_TMA_ROWS = "loads with TMA, which needs 16-byte aligned rows"
_TMA_PAD = "uses the 128-byte TMA swizzle, not padding"
_FP32_ACC = "adds every matrix instruction's products into FP32 accumulators (nothing to promote)"
_NO_CLUSTER = "launches workgroups alone (thread-block clusters are the wgmma family's)"
_ONE_PER_TILE = "launches one workgroup per tile (persistent kernels are the wgmma family's)"
_AS_GIVEN = "computes D as given (swap-AB is the wgmma family's)"

# In name order: kernel names list every parameter, in this order, between the types and the family.
PARAMS = (
    Param("mt", "MT", 3, range(1, 4097), None, "macro tile MT0 x MT1 x DepthU"),
    Param("wg", "WG", 2, range(1, 17), None,
          "warps (waves) along M and N in a workgroup; wgmma: consumer warpgroups (a producer warpgroup is added)"),
    Param("mi", "MI", 3, range(1, 257), None,
          "matrix instruction M x N x K. mma: 16x8x32 fp8, 16x8x16 f16/bf16 (fp8 widened in registers); mfma: "
          "32x32x16 / 16x16x32 fp8, 32x32x8 / 16x16x16 f16/bf16 (fp8 widened after the LDS read); wmma: 16x16x16 "
          "(fp8 on gfx1201, f16/bf16 everywhere); wgmma: m64nNkK, derived from the tile when left out"),
    Param("pgr", "PGR", 1, range(0, 16), 2,
          "PrefetchGlobalRead: K tiles loading ahead of the one computed. mma/wgmma: a ring of PGR + 1 LDS stages; "
          "mfma/wmma: 0-2 tiles held in VGPRs (global -> VGPR -> LDS), LDS double-buffered"),
    Param("plr", "PLR", 1, _FLAG, 0, "PrefetchLocalRead: read the next K step's fragments before this step's mma",
          fixed=((_WGMMA, 0, "reads operands straight from shared memory (wgmma descriptors): no local prefetch"),)),
    Param("su", "SU", 1, _POW2_1024, 0, "StaggerU: workgroups start their K loop at (id % SU) * SUS bytes (0 = off)",
          say="0 or a power of two up to 1024"),
    Param("sus", "SUS", 1, range(0, (1 << 20) + 1), 0, "StaggerUStride: bytes of K between stagger starts"),
    Param("sum", "SUM", 1, range(0, 4), 0,
          "StaggerUMapping: which workgroup id staggers (0 tile-M, 1 tile-N, 2 batch, 3 serial)"),
    Param("lpa", "LPA", 1, _PAD, 0, "LDS padding of each A row, bytes", fixed=((_WGMMA, 0, _TMA_PAD),)),
    Param("lpb", "LPB", 1, _PAD, 0, "LDS padding of each B row, bytes", fixed=((_WGMMA, 0, _TMA_PAD),)),
    Param("lxs", "LXS", 1, _FLAG, 1, "LDS XOR swizzle of 16-byte chunks (0/1)",
          fixed=((_WGMMA, 1, "always swizzles (TMA 128-byte swizzle)"),)),
    Param("gsu", "GSU", 1, range(1, 65), 1,
          "GlobalSplitU: split-K factor, partials reduced in a fixed order by a second kernel `<name>_reduce` "
          "(wgmma mc 3: by the first CTA of each cluster)"),
    Param("wgm", "WGM", 1, range(1, 65), 8,
          "WorkGroupMapping: tile-M rows walked together by consecutive workgroups (1 = plain row-major raster)"),
    Param("vwa", "VWA", 1, _VW, 16, "global read vector width of A, bytes (>= 4: cp.async; below: plain loads)",
          fixed=((_WGMMA, 16, _TMA_ROWS),)),
    Param("vwb", "VWB", 1, _VW, 16, "global read vector width of B, bytes (>= 4: cp.async; below: plain loads)",
          fixed=((_WGMMA, 16, _TMA_ROWS),)),
    # For the AMD families (mfma, wmma); the NVIDIA families take the fixed values.
    Param("ldsb", "LDSB", 1, _FLAG, 0,
          "1LDSBuffer: one LDS buffer; the prefetched tile is written after a barrier instead of into the other one",
          fixed=((_MMA, 0, _AMD_ONLY_MMA), (_WGMMA, 0, "has no 1LDSBuffer (its ring has pgr + 1 stages)"))),
    Param("tlds", "TLDS", 1, _FLAG, 1,
          "TransposeLDS: 1 = K-major operands stay unroll-major in LDS (wide local reads along K), 0 = stored "
          "tile-major (the local write transposes)",
          fixed=((_MMA, 1, "keeps K-major operands unroll-major in LDS (ldmatrix reads K rows)"),
                 (_WGMMA, 1, "keeps K-major operands K-major in shared memory"))),
    Param("lbspp", "LBSPP", 1, (0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), 0,
          "LdsBlockSizePerPad: LPA/LPB bytes of padding after every LBSPP bytes of a tile instead of every row (0)",
          fixed=((_MMA, 0, "pads every LDS row (lpa, lpb)"), (_WGMMA, 0, "uses no padding"))),
    Param("wsgr", "WSGR", 1, _FLAG, 0,
          "WaveSeparateGlobalRead: each wave reads its own contiguous rows of a tile (1) instead of the workgroup "
          "sweeping it (0). wgmma: 1 makes a prepacked-weight decode tile (mi 16x8x16) a direct-load kernel, whose "
          "warps each load their own K-tiles of the weights and activations from global memory into registers "
          "(no TMA ring, no producer warpgroup); 0 loads each tile with one producer thread (TMA)",
          fixed=((_MMA, 0, "reads each tile with the whole workgroup"),)),
    Param("occ", "OCC", 1, range(0, 17), 0,
          "occupancy target, waves per SIMD: amdgpu_waves_per_eu, and the build fails if the code object reaches "
          "less (0 = none)",
          fixed=((_MMA, 0, "takes no occupancy target (ptxas -v reports its registers)"),
                 (_WGMMA, 0, "runs one workgroup per SM"))),
    # For the wgmma family.
    Param("pk", "PK", 1, range(0, 3), 0,
          "persistent kernel: 0 one CTA per tile, 1 persistent (min(tiles, SMs) CTAs loop over the tiles), 2 "
          "persistent ping-pong (two consumers take alternate whole tiles)",
          fixed=((_MMA, 0, _ONE_PER_TILE), (_MFMA, 0, _ONE_PER_TILE), (_WMMA, 0, _ONE_PER_TILE)),
          say="0 (a CTA per tile), 1 (persistent) or 2 (persistent ping-pong)"),
    Param("pr", "PR", 1, range(0, 5), 0,
          "promotion of tensor/row-scaled fp8 x fp8 sums: every PR K-tiles wgmma's reduced-precision fp8 sum is "
          "added to FP32 accumulators (1-4); 0 sums all of K in wgmma's accumulator (fast accumulation, only in a "
          "file with `accumulate: fast`). Block-scaled kernels promote every K-tile with their scales and take 0",
          fixed=((_MMA, 0, _FP32_ACC), (_MFMA, 0, _FP32_ACC), (_WMMA, 0, _FP32_ACC))),
    Param("mc", "MC", 1, range(0, 4), 0,
          "thread-block clusters: 0 none; TMA multicast in clusters of two CTAs: 1 the two CTAs take M-adjacent "
          "tiles of one column and share B's K-tiles (each loads half of them into both), 2 they take N-adjacent "
          "tiles of one row and share A's; 3 split-K in a cluster: the gsu CTAs of a cluster take the K slices of "
          "one tile and the first adds the others' sums from their shared memory (no workspace, no reduce kernel)",
          fixed=((_MMA, 0, _NO_CLUSTER), (_MFMA, 0, _NO_CLUSTER), (_WMMA, 0, _NO_CLUSTER)),
          say="0 (none), 1 (pairs along M share B), 2 (pairs along N share A) or 3 (split-K in a cluster)"),
    Param("sab", "SAB", 1, _FLAG, 0,
          "swap-AB: 1 computes D^T = B A^T, B's rows (N) on wgmma's 64-row M side and A's rows (M) on its N side, "
          "which takes any multiple of 8, and the epilogue writes D back transposed (wgmma fp8 x fp8 SS kernels; "
          "small and mid M). Prepacked-weight kernels always compute D^T and take 0",
          fixed=((_MMA, 0, _AS_GIVEN), (_MFMA, 0, _AS_GIVEN), (_WMMA, 0, _AS_GIVEN)),
          say="0 (D as given) or 1 (D^T: B's rows on wgmma's M side)"),
)
PARAM = {p.field: p for p in PARAMS}
PARAM_FIELDS = tuple(p.field for p in PARAMS)
assert len(PARAM) == len(PARAMS) and len({p.token for p in PARAMS}) == len(PARAMS)

# Every value a parameter may take fits the C type it lands in, and every fixed value is an allowed one.
for _p in PARAMS:
    _lo, _hi = C_TYPE_RANGE[_p.c_type]
    assert _lo <= min(_p.allowed) and max(_p.allowed) <= _hi, _p.field
    assert _p.default is None or _p.default in _p.allowed, _p.field
    assert all(v in _p.allowed for _f, v, _w in _p.fixed), _p.field

BUILTIN_DEFAULTS = {p.field: p.default for p in PARAMS if p.default is not None}
REQUIRED_PARAMS = ("mt", "wg")
DERIVED_PARAMS = ("mi",)  # default from the family (families.py: default_mi)
assert BUILTIN_DEFAULTS.keys() | set(REQUIRED_PARAMS) | set(DERIVED_PARAMS) == set(PARAM_FIELDS)
