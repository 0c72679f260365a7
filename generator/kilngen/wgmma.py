"""What is particular to the wgmma family (NVIDIA sm_90a: TMA -> mbarrier ring -> wgmma, warp-specialized and
persistent): its geometry, its instruction and its rules. families.py names these in the family's record; nothing
else asks for the family by name."""
from __future__ import annotations

from typing import Optional

from .rules import _bytes_of, _fmt, _operands, grouped_depth, grouped_gsu
from .vocab import DTYPE_INFO, DType, Kind

WAVE = 128  # threads of a consumer warpgroup: the unit wg counts

# Registers a consumer thread may give to accumulators (+ widened weights). The consumers raise their budget to 232
# with setmaxnreg (kiln_gemm_wgmma.h, CONSUMER_REGS) and ptxas allocates their code within it (the 168 a thread of
# __launch_bounds__(384, 1) binds the code before it); the rest holds addresses, scales and the epilogue's. A
# block-scaled or promoted mainloop holds a K-tile's sum beside the accumulators, so at most 64 of each (pr 1 holds
# two K-tile sums, 3 x 64, which compiles without spills; 3 x 128 cannot fit).
MAX_ACC = 128
MAX_SWAP = 160  # swap: accumulators + two K-tiles of widened weights (mainloop_swap; 16x256 and 32x256 compile clean),
                # or + two 16-K groups where those do not fit (fine)
MAX_ACC_SPLIT = 128  # pr 1: acc + column-half sums: two at once up to 96 (2 x 96), one in turn above (1.5 x 128;
                     # kiln_gemm_wgmma.h, mainloop_split)


def consumers(sol) -> int:
    """Consumer warpgroups. They split a tile wg0 x wg1 ways, or with pk 2 (ping-pong) two of them take alternate
    whole tiles."""
    return 2 if sol.pk == 2 else sol.wg[0] * sol.wg[1]


def threads(sol) -> int:
    return WAVE * (consumers(sol) + (0 if direct(sol) else 1))  # + one producer warpgroup (not direct-load)


SCALE_GROUP = 128  # K per block-scale group (kiln.h KILN_SCALE_GROUP)


def block_scales(sol) -> bool:
    """Block-scaled fp8: each K-tile (one 128-K group) is summed alone, then promoted into the accumulators times
    its scales (kiln_gemm_wgmma.h, BLOCK_SCALES)."""
    return sol.problem.spec.block_scales


def promoted(sol) -> bool:
    """Tensor/row-scaled fp8 sums added to FP32 accumulators every pr K-tiles (kiln_gemm_wgmma.h, PROMOTED)."""
    return sol.pr > 0 and sol.problem.both_fp8 and not block_scales(sol) and not rs(sol)


def _acc(sol) -> int:
    """f32 accumulators a consumer thread holds: (wgmma M extent / 64) x wgmma N / 2."""
    rows, cols = sol.mt[0] // sol.wg[0], sol.mt[1] // sol.wg[1]
    wgmma_m, wgmma_n = (cols, rows) if swap(sol) else (rows, cols)
    return (wgmma_m // 64) * wgmma_n // 2


def _frags(sol, fine_: bool = False) -> int:
    """Registers of widened weights a consumer thread holds with prepacked weights: two K-tiles (REP x DU / 16
    groups x 4), or with fine two batches of one 16-K group (REP x 4)."""
    rep = (sol.mt[1] // sol.wg[1]) // 64
    return 2 * rep * (1 if fine_ else sol.mt[2] // 16) * 4


def fine(sol) -> bool:
    """Prepacked-weight tiles whose two K-tiles of widened weights would not fit beside the accumulators widen one
    16-K group ahead instead (kiln_gemm_wgmma.h, FINE; the same rule as there)."""
    return rs(sol) and not sync(sol) and _acc(sol) + _frags(sol) > MAX_SWAP


def pipelined(sol) -> bool:
    """pr 1 outside ping-pong: two sums in flight (kiln_gemm_wgmma.h, mainloop_pipelined / mainloop_split)."""
    return promoted(sol) and sol.pr == 1 and sol.pk != 2


def split(sol) -> bool:
    """pr 1 with more than 64 accumulators a thread: the sums are the two column halves of one K-tile
    (mainloop_split), both in flight up to 96 accumulators (2 x acc registers instead of 3 x acc), one after the
    other above (1.5 x acc)."""
    return pipelined(sol) and _acc(sol) > 64


def overlap(sol) -> bool:
    """The kernel waits for the stream's previous grid (griddepcontrol.wait) before it touches global memory, so the
    runtime may launch it while that grid still runs (programmatic dependent launch). Not the split-promotion
    kernels: any griddepcontrol instruction in them cost 5-18% on the H100 (bench/NOTES.md, "Programmatic dependent
    launch"), wherever it stood."""
    return not split(sol)


def half_asm(sol) -> tuple:
    """The wgmma of half a consumer's columns, for split promotion; () for other kernels."""
    return asm(sol, sol.mi[1] // 2) if split(sol) else ()


def fast_accum(sol) -> bool:
    """fp8 x fp8 summed over all of K in wgmma's reduced-precision accumulator: the runtime gives such a kernel only
    problems that allow fast accumulation (kiln_problem.fast_accum), or K within one K-tile."""
    return sol.problem.both_fp8 and not block_scales(sol) and sol.pr == 0


def swap(sol) -> bool:
    """D is computed transposed (D^T = B A^T): B's rows take wgmma's M side, A's rows its N side, and the epilogue
    writes D back (kiln_gemm_wgmma.h, SWAP). Always with prepacked weights (rs), and with sab 1 in the SS kernels."""
    return sol.problem.b_prepacked or sol.sab == 1


def rs(sol) -> bool:
    """Prepacked fp8 weights: wgmma's register operand, read from shared memory and widened by the consumers
    (kiln_gemm_wgmma.h, RS)."""
    return sol.problem.b_prepacked


SYNC_MI = (16, 8, 16)
SYNC_MAX_TOKENS = 32


def sync(sol) -> bool:
    """A prepacked-weight tile of at most SYNC_MAX_TOKENS activation rows a consumer that names mi [16, 8, 16]: its
    warps issue mma.sync m16n8k16 (weights widened in registers as A, activations by ldmatrix as B) instead of
    wgmma. At decode sizes each wgmma costs about the same whatever its N, so the bytes of weights one instruction
    takes (64 rows x 16 K) bound the rate an SM streams them at; mma.sync has no such floor (kiln_gemm_wgmma.h,
    mainloop_sync)."""
    return rs(sol) and tuple(sol.mi) == SYNC_MI


def direct(sol) -> bool:
    """wsgr 1 on a prepacked-weight mma.sync tile: a direct-load decode kernel (kiln_gemm_direct.h). Every warp of
    its wg[1] warpgroups loads its own K-tiles of the weights (16-byte loads, pgr K-tiles in flight) and activations
    straight into registers and issues mma.sync; the warps split K and add their sums in shared memory. No TMA
    ring, no producer warpgroup, no barrier in the K loop: at decode sizes the ring kernels are bound by each CTA's
    latency, not by the bytes (bench/NOTES.md)."""
    return sync(sol) and sol.wsgr == 1


DIRECT_TOKENS = (8, 16, 32)
DIRECT_ROWS = (16, 32, 64)
DIRECT_MAX_LOADS = 128  # registers a thread may hold for its in-flight loads (two batches of pgr K-tiles)
DIRECT_OTHER_REGS = 48  # addresses, flags, scales and the epilogue's beside the loads and sums (ptxas, sm_90a)


def _direct_regs(sol) -> int:
    """Registers of the loads in flight: two batches (one computed, the next loading) of pgr K-tiles, each per 64-K
    step 16 bytes of two weight rows per 16-row block and 32 bytes of activations per 8-token block."""
    return 2 * sol.pgr * (sol.mt[2] // 64) * (sol.mt[1] // 16 * 2 + sol.mt[0] // 8 * 2) * 4


def _direct_sums(sol) -> int:
    """f32 sums a thread holds: 4 per (16-row, 8-token) block, twice with per-group scales (each K-tile's own)."""
    return 2 * (sol.mt[1] // 16) * (sol.mt[0] // 8) * 4


def _direct_budget(sol) -> int:
    """Registers a thread of the CTA may have (65536 a CTA, 255 at most), less the others it needs."""
    return min(255, 65536 // threads(sol)) - DIRECT_OTHER_REGS


def _direct(sol):
    if sol.wsgr != 1:
        return None
    if not sync(sol):
        return (f"1 (direct loads) is for prepacked-weight decode tiles with mi {_fmt(SYNC_MI)} (mma.sync); this "
                f"tile is not one")
    if sol.wg[0] != 1 or sol.wg[1] not in (1, 2, 4):
        return f"1 (direct loads) takes wg [1, 1], [1, 2] or [1, 4] (warpgroups whose warps split K); got {_fmt(sol.wg)}"
    if sol.mt[0] not in DIRECT_TOKENS or sol.mt[1] not in DIRECT_ROWS or sol.mt[2] not in (128, 256):
        return (f"1 (direct loads) takes MT0 in {_fmt(DIRECT_TOKENS)} tokens, MT1 in {_fmt(DIRECT_ROWS)} weight rows "
                f"and DepthU 128 or 256; got {_fmt(sol.mt)}")
    if sol.pk or sol.mc or sol.su:
        return "1 (direct loads) launches one CTA per tile with no cluster and no stagger: pk, mc and su must be 0"
    loads, sums = _direct_regs(sol), _direct_sums(sol)
    if not 1 <= sol.pgr <= 4 or loads > DIRECT_MAX_LOADS or loads + sums > _direct_budget(sol):
        return (f"1 (direct loads) holds two batches of pgr K-tiles of loads in registers: pgr must be 1..4, the "
                f"loads at most {DIRECT_MAX_LOADS} registers, and with the sums at most {_direct_budget(sol)} for "
                f"{threads(sol)} threads (this one: pgr {sol.pgr}, {loads} + {sums})")


def shape(sol) -> tuple:
    """The wgmma instruction (64, N, K) the tile and warpgroups imply: N is a consumer's extent along wgmma's B operand
    (D's columns; with swap, D's rows), K is 32 bytes of the shared-memory operand. Needs positive mt and wg
    (rules.shape_problem)."""
    n = sol.mt[0] // sol.wg[0] if swap(sol) else sol.mt[1] // sol.wg[1]
    return (64, n, 32 if sol.problem.both_fp8 else 16)


LDS_LIMIT = 227 * 1024  # dynamic shared memory a CTA may have on sm_90a


def tma_d(sol) -> bool:
    """Whether the kernel keeps each consumer's whole sub-tile of D in shared memory for the TMA-store epilogue
    (kiln_gemm_wgmma.h, TMA_D): no split-K, no prepacked B, and it fits beside the ring."""
    # (grouped: a group's partial last tile row takes the staged path)
    if swap(sol) or reduces(sol):
        return False
    rpc, cpc = sol.mt[0] // sol.wg[0], sol.mt[1] // sol.wg[1]
    whole_boxes = cpc * DTYPE_INFO[sol.problem.d].bytes % 128 == 0  # the store's 128-byte boxes tile the columns
    return _sub_tile(sol) >= rpc * 128 and whole_boxes and _sub_tile_fits(sol)


def swap_tma(sol) -> bool:
    """Whether a swapped kernel (prepacked weights, or sab 1) stores D through the copy engine (kiln_gemm_wgmma.h,
    SWAP_TMA): no split-K, a 16-bit D, each consumer's rows and columns whole 64 x 64 boxes, its sub-tile of D beside
    the ring."""
    if not swap(sol) or reduces(sol) or DTYPE_INFO[sol.problem.d].bytes != 2:
        return False
    rpc, cpc = sol.mt[0] // sol.wg[0], sol.mt[1] // sol.wg[1]
    return rpc % 64 == 0 and cpc % 64 == 0 and _sub_tile_fits(sol)


def _sub_tile(sol) -> int:
    """Bytes of D in one consumer's sub-tile (SUBTILE_D)."""
    return (sol.mt[0] // sol.wg[0]) * (sol.mt[1] // sol.wg[1]) * DTYPE_INFO[sol.problem.d].bytes


def _sub_tile_fits(sol) -> bool:
    """Whether each consumer's whole sub-tile of D fits in shared memory beside the ring (SUBTILE_FITS)."""
    return _ring(sol) + _scales(sol) + _reduce(sol) + consumers(sol) * _sub_tile(sol) + 16 * sol.stages + 1024 \
        <= LDS_LIMIT


def tma_store(sol) -> bool:
    """Whether the kernel can store D through a tensor map (kiln_solution.tma_store): TMA_D or SWAP_TMA."""
    return tma_d(sol) or swap_tma(sol)


def cluster_split(sol) -> bool:
    """mc 3: the gsu splits of a tile are the CTAs of one cluster, reduced by its first over DSMEM (no workspace, no
    reduce kernel; kiln_gemm_wgmma.h, CLUSTER_SPLIT)."""
    return sol.mc == 3


def reduces(sol) -> bool:
    """Split-K whose partial sums a second kernel (`<name>_reduce`) adds up from a workspace: every gsu > 1 of every
    family except split-K in a cluster (the runtime's kiln_solution_reduces)."""
    return sol.gsu > 1 and not cluster_split(sol)


def cluster_size(sol) -> int:
    """CTAs per thread-block cluster: gsu with split-K in a cluster, 2 with multicast, else 1."""
    return sol.gsu if cluster_split(sol) else 2 if sol.mc else 1


def _reduce(sol) -> int:
    """mc 3: each consumer thread's f32 accumulators, where the cluster's first CTA reads them: room of their own
    beside the ring where the staged epilogue still fits with them, else none: they take the ring's (one tile a CTA;
    kiln_gemm_wgmma.h, REDUCE_IN_RING)."""
    if not cluster_split(sol):
        return 0
    need = consumers(sol) * _acc(sol) * WAVE * 4
    staged = (sol.mt[0] // sol.wg[0]) * 128
    beside = _ring(sol) + _scales(sol) + need + consumers(sol) * staged + 16 * sol.stages + 1024
    return 0 if need <= _ring(sol) and beside > LDS_LIMIT else need


def _ring(sol) -> int:
    return sol.stages * (sol.lds_tile_bytes("a") + sol.lds_tile_bytes("b"))


def _scales(sol) -> int:
    """Block scales staged per stage: one f32 per tile row (A, + 32 of room for a box started up to 3 rows early) and
    column (B)."""
    return sol.stages * (sol.mt[0] + 32 + sol.mt[1]) * 4 if block_scales(sol) else 0


def lds_bytes(sol) -> int:
    """kiln_gemm_wgmma.h: the stage ring; per consumer its whole sub-tile of D (tma_d, swap_tma) or one 32-column f32
    chunk of its rows (the staged epilogue); the block scales of each stage; the accumulators of split-K in a cluster;
    two mbarriers per stage; 1024 bytes to align the base for the 128-byte swizzle."""
    if direct(sol):  # kiln_gemm_direct.h: every warp's f32 sums of the tile, nothing else
        return consumers(sol) * 4 * sol.mt[0] * sol.mt[1] * 4
    per_consumer = _sub_tile(sol) if tma_store(sol) else (sol.mt[0] // sol.wg[0]) * 128
    return _ring(sol) + consumers(sol) * per_consumer + _scales(sol) + _reduce(sol) + 16 * sol.stages + 1024


# --- the instruction, spelled out in the kernel ----------------------------------------------------------------------

_PTX = {DType.F16: "f16", DType.BF16: "bf16", DType.E4M3: "e4m3", DType.E5M2: "e5m2"}  # wgmma operand types


def asm(sol, n: Optional[int] = None) -> tuple:
    """One wgmma.mma_async with its N/2 accumulator operands, as (N, run() parameters, asm lines, outputs, inputs):
    shared-memory A and B descriptors (sab 1: wgmma's A is the problem's B), or (prepacked weights) the widened weights
    as four A registers. scale-d = 0 starts the sum (first K step of a tile)."""
    _m, mi_n, k = shape(sol) if sync(sol) else sol.mi
    n = n or mi_n
    regs = n // 2
    acc = ", ".join(f"%{i}" for i in range(regs))
    outputs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    if rs(sol):
        t = _PTX[sol.problem.a]
        params = f"float (&d)[{regs}], const uint32_t (&a)[4], uint64_t b, int scale_d"
        a_ops = "{" + ", ".join(f"%{regs + i}" for i in range(4)) + "}"
        body = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{t}.{t} {{{acc}}}, {a_ops}, %{regs + 4}, p, 1, 1, 0;"
        scale = regs + 5
        inputs = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d)'
    else:
        pr = sol.problem
        ta, tb = (_PTX[pr.a], _PTX[pr.b]) if sol.native_fp8 else (_PTX[sol.mma_type],) * 2
        if swap(sol):  # wgmma's A operand is the problem's B
            ta, tb = tb, ta
        imm = ", 1, 1" if sol.native_fp8 else ", 1, 1, 0, 0"  # 16-bit types also take the transpose flags
        params = f"float (&d)[{regs}], uint64_t a, uint64_t b, int scale_d"
        body = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ta}.{tb} {{{acc}}}, %{regs}, %{regs + 1}, p{imm};"
        scale = regs + 2
        inputs = '"l"(a), "l"(b), "r"(scale_d)'
    lines = ("{\\n.reg .pred p;\\n", f"setp.ne.b32 p, %{scale}, 0;\\n", body + "\\n", "}\\n")
    return (n, params, lines, outputs, inputs)


# --- rules -----------------------------------------------------------------------------------------------------------

def _wg(sol):
    if direct(sol):
        return None  # (_direct)
    if sol.wg[0] * sol.wg[1] not in (1, 2):
        return f"{_fmt(sol.wg)} makes {sol.wg[0] * sol.wg[1]} consumer warpgroups; wgmma takes 1 or 2 (+1 producer)"


def _tile(sol):
    if direct(sol):
        return None  # (_direct: its warps hold whole 16-row blocks, not wgmma's 64)
    rows, cols = sol.mt[0] // sol.wg[0], sol.mt[1] // sol.wg[1]
    if sol.mt[0] % sol.wg[0] or sol.mt[1] % sol.wg[1]:
        return f"{_fmt(sol.mt)} does not split evenly over wg {_fmt(sol.wg)}"
    if max(sol.mt[0], sol.mt[1]) > 256:
        return f"MT0 and MT1 must be at most 256 (TMA box rows); got {_fmt(sol.mt)}"
    wgmma_m, wgmma_n = (cols, rows) if swap(sol) else (rows, cols)
    side = ("columns", "rows") if swap(sol) else ("rows", "columns")
    if wgmma_m % 64:
        return f"each consumer's {wgmma_m} {side[0]} must be a multiple of 64 (wgmma M)"
    if wgmma_n % 8 or wgmma_n > 256:
        return f"each consumer's {wgmma_n} {side[1]} must be a multiple of 8 up to 256 (wgmma N)"
    if cols % 32:
        return f"each consumer's {cols} columns must be a multiple of 32 (the epilogue's chunks)"
    if pipelined(sol):  # acc and two sums: 3 x acc up to 64, split above (see MAX_ACC_SPLIT)
        acc = _acc(sol)
        if acc > MAX_ACC_SPLIT:  # (columns are a multiple of 32, so a half is a whole wgmma N)
            return (f"each consumer thread would hold {acc} f32 accumulators and a K-tile's sums (pr 1); at most "
                    f"{MAX_ACC_SPLIT} fit its registers (64x256 or 128x128 per consumer)")
        return None
    if block_scales(sol):  # acc and two K-tile sums (kiln_gemm_wgmma.h, block_tiles): 3 x 64 at most
        acc = _acc(sol)
        if acc > MAX_ACC // 2:
            return (f"each consumer thread would hold {acc} f32 accumulators and two K-tile sums (block scales); "
                    f"at most {MAX_ACC // 2} each fit its registers (64x128 per consumer)")
        return None
    sums = 2 if promoted(sol) else 1  # + the K-tile's own sum
    acc = (wgmma_m // 64) * wgmma_n // 2 * sums
    # swap: two K-tiles of widened weights (the next one is widened while this one's wgmma run; mainloop_swap), or
    # where those do not fit, two batches of one 16-K group each (mainloop_swap_fine)
    frags = _frags(sol, fine(sol)) if rs(sol) else 0
    limit = MAX_SWAP if rs(sol) else MAX_ACC
    if acc + frags > limit:
        held = f"{acc} f32 accumulators" + (" (with the K-tile's sum)" if sums == 2 else "")
        held += f" + {frags} weight registers" if frags else ""
        return f"each consumer thread would hold {held}; at most {limit} fit its registers"


def _depth(sol):
    for label, dt, row in _operands(sol):
        if row % 128:
            return (f"DepthU {sol.mt[2]} x {_bytes_of(dt)} = {row} bytes per {label} row; wgmma tiles are whole "
                    f"128-byte swizzle rows")


def _mi(sol):
    want = shape(sol)
    if sync(sol):
        if want[1] > SYNC_MAX_TOKENS:
            return (f"mi {_fmt(SYNC_MI)} (mma.sync) is for prepacked-weight tiles of at most {SYNC_MAX_TOKENS} "
                    f"activation rows a consumer; this one has {want[1]}")
        return None
    if tuple(sol.mi) != want:
        return f"{_fmt(sol.mi)} is not the wgmma this tile issues; it is {_fmt(want)} (leave mi out to derive it)"


def _ping_pong(sol):
    if sol.pk == 2 and sol.wg != (1, 1):
        return f"2 (ping-pong: two consumers take alternate whole tiles) needs wg [1, 1]; got {_fmt(sol.wg)}"


def _block(sol):
    if not block_scales(sol):
        return None
    if sol.mt[2] != SCALE_GROUP:
        return f"DepthU {sol.mt[2]}: a block-scaled kernel promotes once per K-tile, so DepthU is {SCALE_GROUP}"
    cols = sol.mt[1] // sol.wg[1]
    if cols % SCALE_GROUP and SCALE_GROUP % cols:
        return (f"each consumer's {cols} columns must divide {SCALE_GROUP} or be a multiple of it (one scale of B "
                f"per {SCALE_GROUP} columns)")


def _promote(sol):
    if sol.pr == 0:
        return None
    if block_scales(sol):
        return f"{sol.pr}: block-scaled kernels promote every K-tile with their scales; pr must be 0"
    if not sol.problem.both_fp8 or rs(sol):
        return f"{sol.pr}: only fp8 x fp8 sums need promotion (16-bit wgmma accumulates in FP32); pr must be 0"


def _block_pk(sol):
    if block_scales(sol) and sol.pk == 2:
        return "2 (ping-pong) waits on every K-tile of a block-scaled mainloop, which serializes the two consumers"


def _multicast(sol):
    """Two CTAs of a cluster share one operand's K-tiles (kiln_gemm_wgmma.h, MC): they walk the tiles in pairs, so
    both tiles of a pair must have the same K loop and the shared operand's tile rows must split into two halves of
    whole 8-row swizzle groups."""
    if sol.mc == 0:
        return None
    if cluster_split(sol):
        if sol.problem.spec.grouped:
            return "3: a grouped kernel has no split-K"
        if not 2 <= sol.gsu <= 8:
            return f"3 (split-K in a cluster) needs gsu 2..8, the CTAs of one portable cluster (gsu is {sol.gsu})"
        if sol.pk != 0:
            return (f"3 (split-K in a cluster) takes one tile a cluster, pk 0 (pk is {sol.pk}): a persistent CTA "
                    f"would meet its cluster's barrier while its producer loads the next tile")
        return None
    if sol.problem.spec.grouped:
        return f"{sol.mc}: a grouped kernel's neighbouring tiles may lie in different groups; multicast is for one GEMM"
    if rs(sol):
        return f"{sol.mc}: prepacked-weight kernels read B through registers; multicast is for the SS kernels"
    if swap(sol):
        return f"{sol.mc}: multicast pairs share an operand of the tile as given; sab 1 kernels take mc 0 or 3"
    rows = sol.mt[1] if sol.mc == 1 else sol.mt[0]
    if rows % 16:
        return (f"{sol.mc}: the shared operand's {rows} tile rows do not split into two halves of whole 8-row swizzle "
                f"groups")


def _sab(sol):
    """sab 1: the SS kernels' swap-AB (kiln_gemm_wgmma.h, SWAP without B_PACKED)."""
    if sol.sab == 0:
        return None
    if sol.problem.b_prepacked:
        return "1: prepacked-weight kernels compute D transposed already; sab is for the SS kernels (0 here)"
    if block_scales(sol) or sol.problem.spec.grouped:
        return "1: swap-AB is built for the dense tensor/row-scaled and 16-bit kernels, not block-scaled or grouped ones"
    if not sol.problem.both_fp8:
        return ("1: swap-AB has run on the GPU for fp8 x fp8 only; the 16-bit GEMM takes it once its kernels have been "
                "checked there")
    rows = sol.mt[0] // sol.wg[0]
    if split(sol) and rows % 16:
        return (f"1 with split promotion (pr 1 over 64 accumulators) halves each consumer's {rows} rows into two "
                f"wgmma N: the rows must be a multiple of 16")


RULES = (("wsgr", _direct), ("sab", _sab), ("wg", _wg), ("mt", _tile), ("mt", _depth), ("mi", _mi), ("pk", _ping_pong), ("mt", _block),
         ("pk", _block_pk), ("pr", _promote), ("gsu", grouped_gsu), ("mt", grouped_depth), ("mc", _multicast))
