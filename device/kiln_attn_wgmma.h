// The wgmma family's FP8 attention forward (sm_90a): FlashAttention-3's FP8 recipe on warpgroup MMA.
//
//   CTA: BM = 64 * CW query rows of one (sequence, query head), 1 + CW warpgroups (CW = 1, 2 or 3 consumers):
//     warpgroup 0 (producer, few registers): thread 0 issues the TMA loads (Q once; K and V tiles of BN keys), and
//       the 4 warps transpose each V tile in shared memory (V is [key][d] in memory; fp8 wgmma reads B K-major only,
//       so P V needs V^T = [d][key]; with PV 16 they only widen it) while the consumers compute.
//     warpgroups 1 .. CW (consumers): 64 query rows each, end to end:
//       S = Q K^T       wgmma m64n{BN}k32, Q and K from shared memory (128- or 64-byte swizzle, as TMA wrote them)
//       online softmax in base 2 on the accumulators (O rescaled only when a row's max moves), P = 256 * exp2(..)
//       requantized to e4m3 in registers: the S accumulators of 32 keys become the 4 A registers of one k32 step
//       P V^T           wgmma m64n{DV (+ 8)}k32, P from registers, V^T from shared memory, into fresh accumulators
//                       added to O in FP32 every PROMOTE tiles (+ 8: P's row sums from rows of ones, PSUM)
//     P V of tile j is left running while S of tile j + 1 is issued; the two consumers interleave on the tensor cores.
//     Head dim 256 makes two passes over the keys, one per 128 of O's columns (DV): S is recomputed in each.
//   PV 16 (C::PV): P V in f16 instead: the producer widens V to f16 in place (widen_v: V [BN][D] in f16, which P V's
//     wgmma reads as an MN-major B operand; no transpose), P is rounded to f16 into the 4 A registers of each k16
//     step, wgmma m64n{D}k16 sums into O directly (no promotion: f16 sums keep FP32's bits), one pass at every head
//     dim, and the row max moves only when it rises by more than 2^LAZY.
//   Rings: K and V^T (f16 V with PV 16) in STAGES stages (full: TMA bytes / the producer's warps; empty: the
//   consumers' warps), raw V in VRAW buffers (2 unless a probe asks for more); tiles in load order t = pass * n_tiles
//   + j.
//
// Fragments (PTX ISA, wgmma register fragments; per warp w of a consumer, rows 16w + g and 16w + g + 8, g = lane / 4,
// q = lane % 4): accumulator d[4j + e] is row g + 8 * (e / 2), column 8j + 2q + e % 2; A (8-bit) a0: row g, k 4q..4q+3;
// a1: row g + 8; a2: row g, k 16 + 4q..; a3: row g + 8, k 16 + 4q... As in the mma family (kiln_attn_mma.h), P's A
// registers are packed straight from S's accumulators, so k position 4q + i of each 16-key half stands for key
// (i / 2) * 8 + 2q + i % 2; the transposer writes V^T's key columns in that same order (ldmatrix.trans of 16-bit units
// + byte permutes give exactly those 4-key words), so no register shuffles are needed.
//
// Shared memory tiles are rows of RB bytes (128: 128-byte swizzle, 64: 64-byte swizzle) in panels of RB bytes of the
// row: Q and K [rows][D] in D / RB panels, a pass's raw V [BN][DV] as one panel, V^T [DV (+ 8)][BN] with RB = BN
// (each stage padded to 1 KB). A k32 step inside a panel moves the descriptor's start address by 32 bytes.
//
// Launch: grid (ceil(seqlen_q / BM), heads_q, batch), block 128 * (1 + CW), kiln::AttnWgmma<C>::SMEM_BYTES of
// dynamic shared memory; the argument kiln_attn_tma_params (kiln_attn_abi.h): 4-D {D, heads, rows, batch} tensor maps
// of Q, K, V (varlen: batch extent 1 and rows = the total), box {RB bytes of D, 1, BM or BN rows, 1}, RB-byte swizzle.
#ifndef KILN_ATTN_WGMMA_H
#define KILN_ATTN_WGMMA_H

#include "abi/kiln_attn_abi.h"  // kiln_attn_tma_params
#include "kiln_attn_mma.h" // fast_exp2, f32x4_to_e4m3x4, PackOut, ldmatrix_x4_trans
#include "kiln_sm90.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900
#error "kiln_attn_wgmma.h needs sm_90a"
#endif

#ifdef KILN_PROBE_ITEM_CLOCKS
// Timing probe only (tests/gpu/attn/attn_standalone.cu reads it): clock64 stamps of each CTA's work items, slot 8 cw +
// k for consumer cw's warp 0 (k: 0 entry, 1 Q landed, 2 S of the first tile, 3 its softmax, 4 the loop's end, 5 the
// last P V, 6 O stored, 7 the key tiles), 16 + k for the producer's thread 0 (0 item start, 1 Q issued, 2 first V
// tile ready, 3 last V tile ready), 20 for consumer 0's warp 0 as the item loop hands it the item.
#define KILN_PROBE_CTAS 160
#define KILN_PROBE_ITEMS 96
#define KILN_PROBE_SLOTS 24
__device__ long long kiln_probe_clk[KILN_PROBE_CTAS][KILN_PROBE_ITEMS][KILN_PROBE_SLOTS];
#define KILN_STAMP(it, k, v)                                                                                         \
    do {                                                                                                             \
        if ((it) < KILN_PROBE_ITEMS && blockIdx.x < KILN_PROBE_CTAS) kiln_probe_clk[blockIdx.x][it][k] = (v);        \
    } while (0)
#else
#define KILN_STAMP(it, k, v) \
    do {                     \
    } while (0)
#endif

namespace kiln {
namespace sm90 {
// Box at (c0, c1, c2, c3) of a 4-D map into shared memory; completes its bytes on bar.
KILN_DEVICE void tma_load_4d(void *dst, const kiln_tma_desc *map, uint64_t *bar, int c0, int c1, int c2, int c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
        "[%2];\n" ::"r"(smem_addr(dst)),
        "l"((uint64_t)map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}
// Descriptor of a K-major tile of rows of RB bytes (128 or 64) in the RB-byte swizzle: 8-row groups 8 * RB bytes apart.
template <int RB> KILN_DEVICE uint64_t desc_sw(uint32_t addr) {
    static_assert(RB == 128 || RB == 64, "128- or 64-byte rows");
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)((8 * RB) >> 4) << 32) |
           ((uint64_t)(RB == 128 ? 1 : 2) << 62);
}
// Descriptor of an MN-major 16-bit tile in the 128-byte swizzle (wgmma B with imm-trans-b): for each k a row of 64
// values along N (128 bytes), 8-row groups (k) 1 KB apart, and the next 64 values of N `lbo` bytes on.
KILN_DEVICE uint64_t desc_mn128(uint32_t addr, uint32_t lbo) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}
// Byte offset of (row, byte c) in a tile of RB-byte rows with the RB-byte swizzle (16-byte chunks XOR the row bits).
template <int RB> KILN_DEVICE int swz(int row, int c) {
    const int lin = row * RB + c;
    return lin ^ (((lin >> 7) & (RB / 16 - 1)) << 4);
}
}  // namespace sm90

// wgmma m64nNk32 with fp8 operands: SS (A and B descriptors) and RS (A from 4 registers), f32 accumulators.
template <int N, class TA, class TB> struct WgSS;
template <int N, class TA, class TB> struct WgRS;
template <int N, int TNSP = 0> struct WgRS16;
#include "kiln_attn_wgmma_ops.h"

// Config C: D (64, 128, 256), BN (64 or 128), STAGES (2..), T8 (kiln_e4m3 / kiln_e5m2), TO (kiln_bf16 / kiln_f16).
// An optional Config constant: TRAIT<C>::value is C::FIELD where the Config has it, else the default (which may
// read C's other options).
#define KILN_ATTN_OPTION(TRAIT, FIELD, DEFAULT)                                                               \
    template <class C, class = void> struct TRAIT {                                                          \
        static constexpr int value = DEFAULT;                                                                \
    };                                                                                                       \
    template <class C> struct TRAIT<C, decltype((void)C::FIELD)> {                                           \
        static constexpr int value = C::FIELD;                                                               \
    };

// C::SCHED (optional, default 0): 0 runs each tile's S, softmax and P V in turn; 1 overlaps the softmax of tile j
// with P V of tile j - 1 (one more set of P registers); 2 is 1 with the two consumers taking turns at the tensor cores;
// 3 is 0 with the consumers (two or three) taking turns at the softmax in a ring, so that the MUFU serves one at a
// time and each softmax runs while the others' GEMMs do.
KILN_ATTN_OPTION(AttnSched, SCHED, 0)
// 2^x on the FMA pipe, for a share of the softmax's exponentials (MUFU.EX2 runs 16 a clock per SM and the consumers
// wait on it): a degree-3 fit of 2^f on [-1/2, 1/2] (relative error 7.5e-5) times 2^round(x) through the exponent
// bits. x under -125 gives 2^-125, which e4m3 flushes to 0 as it does 2^x.
KILN_DEVICE float exp2_fma(float x) {
    x = fmaxf(x, -125.f);
    const float t = x + 12582912.f;  // 1.5 * 2^23: round(x) lands in the low mantissa bits of t
    const float f = x - (t - 12582912.f);
    const float p = fmaf(fmaf(fmaf(0.0551716685f, f, 0.2426111400f), f, 0.6932609677f), f, 0.9999280572f);
    return __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));
}

// The sum of the four e4m3 values of w (each exact in f16, their sum in f32).
KILN_DEVICE float e4m3x4_sum(uint32_t w) {
    float f0, f1, f2, f3;
    asm("{\n.reg .b16 lo, hi, a, b, c, d;\n.reg .b32 h0, h1;\n"
        "mov.b32 {lo, hi}, %4;\n"
        "cvt.rn.f16x2.e4m3x2 h0, lo;\n"
        "cvt.rn.f16x2.e4m3x2 h1, hi;\n"
        "mov.b32 {a, b}, h0;\n"
        "mov.b32 {c, d}, h1;\n"
        "cvt.f32.f16 %0, a;\ncvt.f32.f16 %1, b;\ncvt.f32.f16 %2, c;\ncvt.f32.f16 %3, d;\n}\n"
        : "=f"(f0), "=f"(f1), "=f"(f2), "=f"(f3)
        : "r"(w));
    return (f0 + f1) + (f2 + f3);
}
// Four fp8 ones in one word.
template <class T8> struct Fp8Ones {
    static constexpr uint32_t x4 = 0x38383838u;  // e4m3 1.0
};
template <> struct Fp8Ones<kiln_e5m2> {
    static constexpr uint32_t x4 = 0x3C3C3C3Cu;  // e5m2 1.0
};
// C::PSUM (optional, default 0; D 64 or 128): 1 sums P's rows on the tensor cores instead of the FP32 pipe: each V^T
// stage has 8 more rows of ones, so P V runs at N = D + 8 and its last 8 columns hold the row sums of the e4m3 P
// (already rescaled with O, the same rounded P that multiplies V: O is normalized by them). For the lse, the masked
// tiles (the only ones of a row that sees few keys, where P's rounding to e4m3 does not average out) also add
// sum(P - e4m3(P)) in FP32.
KILN_ATTN_OPTION(AttnPsum, PSUM, 0)
// C::PROMOTE (optional, default 1): n > 0 runs P V into fresh accumulators for n tiles at a time and adds them to
// O in FP32. wgmma sums fp8 products with fewer bits than FP32, and the error of a sum that keeps growing across the
// whole key range is a bias, not noise: 256 k32 steps into one accumulator lose ~15% where V's columns have a mean
// (and diffuse attention makes O that mean). Promotion bounds the steps of any one wgmma sum to n tiles' worth, at
// D / 2 more registers and D / 2 FP32 adds every n tiles.
KILN_ATTN_OPTION(AttnPromote, PROMOTE, 1)
// C::FEXP (optional, default 0; 0..4): of every 4 exponentials of an unmasked key tile, how many exp2_fma computes on
// the FMA pipe instead of MUFU.EX2. The MUFU does 16 a clock per SM, and at head dim 64 or with one consumer the
// softmax waits on it; at head dim 128 and 256 with two consumers the extra instructions cost more than they save.
KILN_ATTN_OPTION(AttnFexp, FEXP, 0)

// C::PV (optional, default 8): the type of P and V^T in P V. 8: P requantized to e4m3 and V^T fp8 (FlashAttention-3's
// recipe; wgmma's fp8 sums need the promotion above). 16: P rounded to f16 and V widened to f16 by the producer
// (wgmma m64nNk16, half the fp8 rate, sums with FP32's bits, so no promotion and no second pass: O of head dim 256 is
// 128 registers), P's rounding error ~1e-3 instead of ~2.5e-2. Needs PROMOTE 0; PSUM 1 (D 64 or 128) gives P V 8 more
// columns of ones (a panel of ones beside the f16 V, or 8 rows of ones in each packed V^T panel with VPRE), so P V
// runs at N = D + 8 and its last columns sum the rounded P.
KILN_ATTN_OPTION(AttnPv, PV, 8)
// fp8 x 4 -> two f16 pairs (bytes 0, 1 and 2, 3; the lower byte in the lower half), exact for both formats.
template <class T8> struct Widen16;
template <> struct Widen16<kiln_e4m3> {
    KILN_DEVICE static void run(uint32_t w, uint32_t &lo, uint32_t &hi) {
        asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %2;\ncvt.rn.f16x2.e4m3x2 %0, l;\ncvt.rn.f16x2.e4m3x2 %1, h;\n}\n"
            : "=r"(lo), "=r"(hi)
            : "r"(w));
    }
};
template <> struct Widen16<kiln_e5m2> {  // an e5m2 byte is the high byte of the f16 of the same value
    KILN_DEVICE static void run(uint32_t w, uint32_t &lo, uint32_t &hi) {
        lo = __byte_perm(w, 0u, 0x1404);  // {0, b0, 0, b1}
        hi = __byte_perm(w, 0u, 0x3424);  // {0, b2, 0, b3}
    }
};
// Keys r and r + 1, 4 columns each (fp8 words x0 and x1) -> V^T's f16 pairs {key r, key r + 1} of the 4 columns.
// e5m2 straight from the bytes (each f16 is the byte over a zero byte): 2 instructions a word and no widened
// temporaries. (With them, the persist 2 head dim 256 kernels' V^T packers, 24 registers a thread, spilled 4 bytes.)
template <class T8> struct PairWiden16 {
    KILN_DEVICE static void run(uint32_t x0, uint32_t x1, uint32_t (&out)[4]) {
        uint32_t a0, a1, b0, b1;
        Widen16<T8>::run(x0, a0, a1);
        Widen16<T8>::run(x1, b0, b1);
        out[0] = __byte_perm(a0, b0, 0x5410);
        out[1] = __byte_perm(a0, b0, 0x7632);
        out[2] = __byte_perm(a1, b1, 0x5410);
        out[3] = __byte_perm(a1, b1, 0x7632);
    }
};
template <> struct PairWiden16<kiln_e5m2> {
    KILN_DEVICE static void run(uint32_t x0, uint32_t x1, uint32_t (&out)[4]) {
        out[0] = __byte_perm(x0, x1, 0x4000) & 0xff00ff00u;  // {0, x0 byte 0, 0, x1 byte 0}
        out[1] = __byte_perm(x0, x1, 0x5010) & 0xff00ff00u;
        out[2] = __byte_perm(x0, x1, 0x6020) & 0xff00ff00u;
        out[3] = __byte_perm(x0, x1, 0x7030) & 0xff00ff00u;
    }
};
// max.f16x2 (NaN loses to a number, as in fmaxf)
KILN_DEVICE uint32_t hmax2(uint32_t a, uint32_t b) {
    uint32_t r;
    asm("max.f16x2 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
// Two floats -> f16x2 (lo in the lower half), round to nearest.
KILN_DEVICE uint32_t f32x2_to_f16x2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// C::LAZY (optional; default 7 with f16 P V, else 0): a row's running max moves only when a tile's max exceeds it by
// more than 2^LAZY in exp2 units, so that O is rescaled only then (most tiles of a long row, where the max has
// settled): P then reaches 2^(8 + LAZY), which f16 holds (2^15 < 65504) and e4m3 does not (448), so fp8 P V keeps 0.
KILN_ATTN_OPTION(AttnLazy, LAZY, AttnPv<C>::value == 16 ? 7 : 0)

// C::VRAW (optional, default 2; a probe): raw V tiles in flight. The producer loads raw V tile t + VRAW - 1 while it
// transposes tile t, so that more than one tile's load latency is covered (the K tile stays one ahead).
KILN_ATTN_OPTION(AttnVraw, VRAW, 2)

// C::VPRE (optional, default 0; f16 P V only): V^T prepacked by the caller in f16, [batch][kv head][D][keys] (keys
// padded to a multiple of 8, the TMA stride rule), maps.v a 4-D map {keys, D, heads, batch} of it with box {64 keys, D,
// 1, 1} and the 128-byte swizzle: TMA writes the V^T stages as the consumers read them, so the producer neither widens
// nor transposes (V^T's columns in their own order). Varlen batches too are packed per sequence, its keys from 0 (keys
// at least the longest length): keys are the map's innermost dimension, and a V^T packed at the cumulative offsets (5,
// 205: starts that are not whole 16 bytes) stopped the kernel with an illegal instruction at this load (H200, 0d7bf5f).
KILN_ATTN_OPTION(AttnVpre, VPRE, 0)

// C::SPEC (optional; default -1: on with three consumers, bm 192; needs f16 P V and LAZY): the softmax makes P with
// the row max as it stands while it computes the tile's max beside it, instead of after it: with LAZY the max moves on
// few tiles, and where it does not P is the same bits (the row sums are added in another order). A warp whose rows
// all keep their max (and have one) takes that P; the others make it again the usual way. The tile's max and its two
// shuffles leave the exponentials' critical path. H200 harness (tuning/results/probe_attn_spec_h200_times.txt): +2.5 %
// with three consumers (bm 192, head dim 64), -2 to +1 % with two (head dim 128 and 256), so 1 forces it and 0 turns
// it off, and the default takes it where it gained.
KILN_ATTN_OPTION(AttnSpec, SPEC, -1)
// C::PMAX (optional, default 0; with SPEC): whether a row's max moved is read off the f16 P itself (max.f16x2 over
// P's A registers: half the instructions of an FP32 max over S, and no shuffles). P above 2^(8 + LAZY) (or not
// finite) anywhere in a warp makes it take the FP32 tile max (P made once more beside it) and then P with the moved
// max. H200 harness (tuning/results/probe_attn_pmax_h200_times.txt): head dim 128 +11-14 % over SPEC 0, 64 (bm 192)
// +4-6 %, 256 +4-5 %.
KILN_ATTN_OPTION(AttnPmax, PMAX, 0)
// C::PERSIST (optional, default 0): the CTA takes work units from the order of kiln_attn_abi.h (kiln_attn_work_grid
// sizes the 1-D grid and sets work_pairs) instead of one query block of the 3-D grid. Between two items the producer
// loads the next item's Q (once the consumers' last S of the item has read Q) and first key tiles while the consumers
// finish P V and write O, and the CTA is not launched again; K and V^T stages and their barrier phases run on across
// items. 2 is 1 with the split tail of kiln_attn_abi.h (kiln_attn_split_piece; used where the runtime sets
// p.split_units): the last units of the order are cut along their key tiles so that every CTA ends at about the same
// time, where whole units leave the last round part empty (e.g. 1,024 units on 132 SMs: 7.76 waves in 8 rounds). A
// CTA whose range ends inside a unit runs that piece first and writes its O, row max and row sums (FP32,
// unnormalized) to p.split_work, then raises its warps' flags; the next CTA, whose range starts with the rest of that
// unit, runs that piece last, writes it likewise, and after its item loop waits for the flags and stores O from the
// two (split_finish).
KILN_ATTN_OPTION(AttnPersist, PERSIST, 0)
// C::OTMA (optional, default 0; with PERSIST; the generator sets it with persist): O leaves through per-warp staging
// rows in shared memory and TMA stores (the o map of kiln_attn_tma_params, where the caller set p.o_map) instead of
// the warps' 16-byte global stores, so that the consumers go on to the next item while the copy engine writes O.
// Varlen problems keep the register stores (a block's rows may reach into the next sequence, which the map's bounds
// do not stop). The choice is made on kernel parameters only: one derived from the warp's rows made ptxas serialize
// every wgmma (C7520). H200 harness (tuning/results/probe_attn_otma_h200_times.txt): packed V^T head dim 128 +1.5-2.7 %,
// head dim 64 bm 128 +2.3 %, bm 192 +0.3 %.
KILN_ATTN_OPTION(AttnOtma, OTMA, 0)

template <class C> struct AttnWgmma {
    static constexpr int D = C::D, BN = C::BN, ST = C::STAGES, BM = C::BM, CW = BM / 64, THREADS = 128 * (1 + CW);
    static constexpr int SCHED = AttnSched<C>::value, PSUM = AttnPsum<C>::value, PROMOTE = AttnPromote<C>::value;
    static constexpr int FEXP = AttnFexp<C>::value, PV = AttnPv<C>::value;
    static constexpr bool PV16 = PV == 16;
    static constexpr int LAZY = AttnLazy<C>::value;
    static constexpr bool SPEC = AttnSpec<C>::value > 0 || (AttnSpec<C>::value < 0 && CW == 3 && PV16 && LAZY > 0);
    static constexpr bool PMAX = AttnPmax<C>::value != 0;
    static constexpr bool PERSIST = AttnPersist<C>::value != 0;
    static constexpr bool SPLIT = AttnPersist<C>::value == 2;  // the split tail (PERSIST above)
    static constexpr int GROUP = PROMOTE ? PROMOTE : 1;  // key tiles per promotion group
    // O's columns per pass over the keys: with fp8 P V head dim 256 makes two passes of 128 (S is recomputed for
    // each: a third more tensor work, but O and its promotion sums fit the registers), the others one.
    static constexpr int DV = D > 128 && !PV16 ? 128 : D, NPASS = D / DV;
    static constexpr int NO = DV + (PSUM ? 8 : 0);  // P V's columns (O and, with PSUM, the row sums)
    static constexpr int RB = D >= 128 ? 128 : 64;  // Q, K, V row panels (a pass's V columns are one panel)
    static constexpr int PANELS = D / RB;
    static constexpr int RBV = BN;                  // V^T rows
    static constexpr int KSTEPS = D / 32, PSTEPS = BN / 32, NB = BN / 8, DB = DV / 8;
    // P V's k steps (k32 with fp8 P, k16 with f16 P), each 4 A registers of P
    static constexpr int PV_STEPS = PV16 ? BN / 16 : PSTEPS;
    using T8 = typename C::T8;
    using TO = typename C::TO;
    // Every tile starts on 1024 bytes (the 128-byte swizzle's period, which TMA and the descriptors assume): a V^T
    // stage with the 8 rows of ones (BN 64: 8.5 KB) is padded to the next 1 KB.
    static constexpr int Q_BYTES = BM * D, KV_BYTES = BN * D, VR_BYTES = BN * DV;
    // VPRE: V^T is f16 [D][BN] in panels of 64 keys (128-byte rows, VT_PANEL bytes each; with PSUM each panel has 8
    // more rows, of ones: a whole 1 KB swizzle period, so panels stay 1 KB aligned).
    static constexpr int VT_PANEL = NO * 128;
    // PV16 with V as given: the widened V is f16 [BN][D] in D / 64 panels of BN rows of 128 bytes (V16_PANEL bytes
    // each, the 128-byte swizzle), read MN-major; with PSUM one more panel, of ones, whose first 8 columns P V reads.
    static constexpr int V16_PANEL = BN * 128;
    static constexpr bool VPRE = AttnVpre<C>::value != 0;
    static constexpr int VT_BYTES = PV16 ? (VPRE ? NO * BN * 2 : (D / 64 + PSUM) * V16_PANEL)
                                         : (BN * NO + 1023) / 1024 * 1024;
    static constexpr int OFF_Q = 0, OFF_K = Q_BYTES, OFF_VT = OFF_K + ST * KV_BYTES, OFF_VR = OFF_VT + ST * VT_BYTES;
    static constexpr int VRAW = AttnVraw<C>::value;  // raw V buffers
    static constexpr int OFF_BAR = OFF_VR + (VPRE ? 0 : VRAW * VR_BYTES);
    // bars: q, kfull[ST], kempty[ST], vtfull[ST], vtempty[ST], vfull[VRAW], qempty
    static constexpr int NBARS = 1 + 4 * ST + VRAW + 1;
    static constexpr int CONSUMER_WARPS = 4 * CW;
    // OTMA: each consumer warp has 16 rows of DV 16-bit values in DV / 64 panels of 16 rows x 128 bytes (the 128-byte
    // swizzle), from the next 1 KB after the barriers, where it fits in 227 KB (else the kernel stores from registers).
    // Where the whole rows do not fit (head dim 256 beside three stages), the panels take a half (a quarter) of the
    // columns at a time: OST_ROUNDS rounds, each waiting for the round before it to have been read.
    static constexpr int OST_PANEL = 16 * 128, OST_ALL = CONSUMER_WARPS * (DV / 64) * OST_PANEL;
    // SPLIT: after the barriers (16-byte aligned: it is read as uint4), the CTA's plan of its split tail (split_plan:
    // 16 int32)
    static constexpr int OFF_PLAN = (OFF_BAR + 8 * NBARS + 15) / 16 * 16;
    static constexpr int END_BARS = SPLIT ? OFF_PLAN + 64 : OFF_BAR + 8 * NBARS;
    static constexpr int OFF_OST = (END_BARS + 1023) / 1024 * 1024;
    static constexpr int ost_rounds() {
        for (int r = 1; r <= 4; r *= 2)
            if ((DV / 64) % r == 0 && OFF_OST + OST_ALL / r + 1024 <= 227 * 1024) return r;
        return 0;
    }
    static constexpr int OST_ROUNDS = ost_rounds(), OST_PANELS = DV / 64 / (OST_ROUNDS ? OST_ROUNDS : 1);
    static constexpr int OST_WARP = OST_PANELS * OST_PANEL, OST_BYTES = CONSUMER_WARPS * OST_WARP;
    static constexpr bool OSTAGE = AttnOtma<C>::value != 0 && PERSIST && sizeof(TO) == 2 && OST_ROUNDS > 0;
    static constexpr int SMEM_BYTES = (OSTAGE ? OFF_OST + OST_BYTES : END_BARS) + 1024;  // + base alignment to 1 KB
    // Registers a thread after setmaxnreg: the producer gives up most of its share. The pool is what the CTA was
    // launched with (65536 / THREADS a thread, rounded down to 8: 168 with two consumers, 128 with three), not the
    // register file: asking for more makes setmaxnreg.inc wait forever. With two consumers the transposer (or, PV 16,
    // the widening producer) fits 40 (at 32 it spills), which leaves the consumers 232; with three, 152 (160 where V^T
    // comes prepacked and the producer is one thread issuing TMA, which fits 24).
    // PERSIST with two consumers: beside the transposer the producer keeps 56 (its item loop spilled at 40) and the
    // consumers get 224; with a prepacked V^T the producer is one TMA thread at 24 and the consumers get 240 (their
    // item loop spilled 12-48 bytes at 232, head dim 256).
    // FILL: the kernel can pack V^T itself (kiln_attn_params.vt_fill): the producer's three warps beside the TMA
    // thread's pack it within the producer's registers (24 with two consumers: no spills where the branch to them is
    // warp-uniform to ptxas; a per-thread branch there spilled 90-150 bytes). Three consumers: no such warps' worth.
    static constexpr bool FILL = VPRE && CW <= 2;
    // PACE (FILL in a persistent kernel with the split tail's plan, whose word 3 holds the limit): the packers claim a
    // chunk only while its section of the work order is at most FILL_AHEAD past the sections that the grid's next
    // items read, seen from their CTA's current item, so that V^T is written shortly before it is read (from L2)
    // instead of all of it in the first ~150 us of the kernel, where it competed with the first sections' K and V^T
    // loads for L2 and HBM.
    static constexpr bool PACE = FILL && SPLIT;
#ifdef KILN_ATTN_FILL_AHEAD
    static constexpr int FILL_AHEAD = KILN_ATTN_FILL_AHEAD;
#else
    static constexpr int FILL_AHEAD = 1;
#endif
    static constexpr bool WIDE_PRODUCER = PERSIST && !VPRE && CW == 2;
    static constexpr bool THIN_PRODUCER = PERSIST && VPRE && CW == 2;
    static constexpr int PRODUCER_REGS =
        CW == 3 ? (VPRE ? 24 : 40) : CW == 2 ? (WIDE_PRODUCER ? 56 : THIN_PRODUCER ? 24 : 40) : 56;
    static constexpr int CONSUMER_REGS =
        CW == 3 ? (VPRE ? 160 : 152) : CW == 2 ? (WIDE_PRODUCER ? 224 : THIN_PRODUCER ? 240 : 232) : 240;
    static_assert(128 * PRODUCER_REGS + 128 * CW * CONSUMER_REGS <= 128 * (1 + CW) * (65536 / (128 * (1 + CW)) / 8 * 8),
                  "setmaxnreg asks for more registers than the CTA was launched with");
    static_assert(D == 64 || D == 128 || D == 256, "head dim 64, 128 or 256");
    static_assert(BN == 64 || BN == 128, "BN 64 or 128 (V^T rows are one swizzle width)");
    static_assert(SMEM_BYTES <= 227 * 1024, "shared memory");
    static_assert(SCHED >= 0 && SCHED <= 3, "schedule 0, 1, 2 or 3");
    static_assert(BM == 64 || BM == 128 || BM == 192, "one, two or three consumer warpgroups of 64 query rows");
    static_assert(SCHED != 2 || CW == 2, "schedule 2 alternates two consumers");
    static_assert(SCHED != 3 || CW >= 2, "schedule 3 passes the softmax turn between two or three consumers");
    static_assert(PSUM == 0 || PSUM == 1, "row sums in FP32 or on the tensor cores");
    static_assert(PV16 || DV == RB, "a pass's V columns are one panel");
    static_assert(PV == 8 || PV == 16, "P V in fp8 or f16");
    static_assert(VRAW >= 2 && VRAW <= 6, "2..6 raw V buffers");
    static_assert(!VPRE || PV16, "a prepacked V^T is f16: P V in f16");
    static_assert(LAZY >= 0 && LAZY <= (PV16 ? 7 : 0), "P = 2^(8 + LAZY) at most: 2^15 in f16; e4m3 has no room");
    static_assert(!PV16 || PROMOTE == 0, "f16 P V: its sums keep FP32's bits and need no promotion");
    static_assert(!PSUM || NO <= 256, "P V with the 8 columns of row sums is one wgmma (N <= 256)");
    static_assert(!SPEC || (PV16 && LAZY > 0), "P made before the max is known: f16 P V with a lazy max");
    static_assert(!PMAX || SPEC, "the moved max read off P: the speculative P");
    static_assert(Q_BYTES % 1024 == 0 && KV_BYTES % 1024 == 0 && VR_BYTES % 1024 == 0 && OFF_VR % 1024 == 0,
                  "tiles on 1024-byte boundaries");
    static_assert(FEXP >= 0 && FEXP <= 4, "0..4 of every 4 exponentials on the FMA pipe");
    static_assert(PROMOTE >= 0 && PROMOTE <= 4, "promotion every 1..4 key tiles (0: none, biased; tests only)");
    static_assert(AttnPersist<C>::value >= 0 && AttnPersist<C>::value <= 2, "persist 0, 1 or 2 (split tail)");
    static_assert(!SPLIT || (NPASS == 1 && 4 * CW <= KILN_ATTN_SPLIT_WARPS && NO % 8 == 0 &&
                             NO / 2 + 4 <= KILN_ATTN_SPLIT_SLOT_FLOATS(BM, D) / (128 * CW)),
                  "the split tail merges one pass of O, a flag a consumer warp, in a slot of the ABI's size");

    struct Bars {
        uint64_t *base;
        KILN_DEVICE uint64_t *q() const { return base; }
        KILN_DEVICE uint64_t *kfull(int s) const { return base + 1 + s; }
        KILN_DEVICE uint64_t *kempty(int s) const { return base + 1 + ST + s; }
        KILN_DEVICE uint64_t *vtfull(int s) const { return base + 1 + 2 * ST + s; }
        KILN_DEVICE uint64_t *vtempty(int s) const { return base + 1 + 3 * ST + s; }
        KILN_DEVICE uint64_t *vfull(int s) const { return base + 1 + 4 * ST + s; }
        KILN_DEVICE uint64_t *qempty() const { return base + 1 + 4 * ST + VRAW; }
    };

    // One work item: query block m0 of head h of sequence b, the sequence's lengths and first rows (varlen; 0 else), and
    // where its tiles start in the CTA's sequence of items: the ring's tile count before it (tb) and its index (it:
    // Q's barrier phase). 32-bit throughout: the transposing producer has 40 registers a thread.
    // SPLIT: a piece of a unit of the split tail has its first key tile kt0 and its count pn (0: the whole unit) and
    // its role (kiln_attn_split_piece: 0 whole, 1 writes a partial, 2 merges the previous CTA's).
    struct Item {
        int b, h, m0, len_q, len_k, q_first, k_first, tb, it;
        int kt0, pn, role;
        KILN_DEVICE int n_tiles(const kiln_attn_params &p) const {
            if (SPLIT && pn > 0) return pn;
            const int n_end = p.causal ? min(len_k, m0 + BM + len_k - len_q) : len_k;
            return n_end > 0 ? (n_end + BN - 1) / BN : 0;
        }
    };
    // The query block of a CTA of the 3-D grid (ceil(seqlen_q / BM), heads_q, batch): causal, the last first.
    KILN_DEVICE static int grid_block(const kiln_attn_params &p) {
        return p.causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    }
    // Calls f(item) for each of the CTA's items (a query block past its sequence's rows is no item); both roles walk
    // the same order. Without PERSIST (or with work_heads 0): block x (the last first, causal) of head y of sequence z.
    // With it, the units of kiln_attn_abi.h's work order (the runtime keeps their count below 2^31).
    template <class F> KILN_DEVICE static void for_each_item(const kiln_attn_params &p, F &&f) {
        // (one call site of f: the consumers' whole loop is inlined once)
        Item w{};
        if constexpr (!PERSIST) {
            w.b = (int)blockIdx.z, w.h = (int)blockIdx.y, w.m0 = grid_block(p) * BM;
            const AttnSeq sq = attn_seq<true>(p, w.b);
            w.len_q = sq.len_q, w.len_k = sq.len_k, w.q_first = (int)sq.q_first, w.k_first = (int)sq.k_first;
            if (w.m0 < w.len_q) f(w);
            return;
        }
        // work_heads 0: the runtime launched the 3-D grid, one unit a CTA (one call site of f either way)
        const bool grid3 = p.work_heads == 0;
        const int units = grid3 ? 1 : (int)kiln_attn_work_units(&p, BM, p.work_pairs && p.causal);
        const int step = grid3 ? 1 : (int)gridDim.x;
        // SPLIT: the head of the order in whole units (c, c + grid, ...), then the CTA's pieces of the split tail from
        // split_plan (the runtime sets split_units only for non-causal fixed lengths, where a unit is one query
        // block). One loop for both, and the pieces' arithmetic done once by split_plan: with the pieces in a loop of
        // their own, the body in a function or kiln_attn_split_piece in the loop, ptxas spilled 100-230 bytes (the
        // TMA thread has 24 registers) and placed the other kernels' code differently.
        // (the tail's pieces are u = the head's end + blockIdx.x, + step, + 2 step: the loop's bound counts them)
        const int end = SPLIT ? split_end(units, step) : units;
#pragma unroll 1
        for (int u = grid3 ? 0 : (int)blockIdx.x; u < end; u += step) {
            int unit = u;
            if constexpr (SPLIT) {
                w.kt0 = 0, w.pn = 0, w.role = 0;
                const uint32_t plan = lds_base() + OFF_PLAN;
                const uint4 hd = sm90::lds_v4_u32(plan);  // the head's end, its first piece's u, the pieces
                if (u >= (int)hd.x) {
                    const int k = (u >= (int)hd.y + step) + (u >= (int)hd.y + 2 * step);
                    const uint4 pc = sm90::lds_v4_u32(plan + 16 + 16 * k);
                    unit = (int)pc.x, w.kt0 = (int)pc.y, w.pn = (int)pc.z, w.role = (int)pc.w;
                }
            }
            int blk0, blk1 = -1;  // the unit's query blocks (blk1: the mirror, or none)
            if (grid3) {
                w.b = (int)blockIdx.z, w.h = (int)blockIdx.y, blk0 = grid_block(p);
            } else {
                const int nblk = (p.seqlen_q + BM - 1) / BM, hb_all = p.batch * p.heads_q;
                const bool pairs = p.work_pairs && p.causal;
                const int per = pairs ? (nblk + 1) / 2 : nblk;  // units of a (batch, head)
                const int sec = p.work_heads;
                const int s0 = unit / (sec * per) * sec, n = min(sec, hb_all - s0), r = unit - s0 * per;
                const int x = r / n, hb = s0 + r % n;
                w.b = hb / p.heads_q, w.h = hb % p.heads_q;
                blk0 = p.causal ? nblk - 1 - x : x;
                if (pairs && x != nblk - 1 - x) blk1 = x;
            }
            const AttnSeq sq = attn_seq<true>(p, w.b);
            w.len_q = sq.len_q, w.len_k = sq.len_k, w.q_first = (int)sq.q_first, w.k_first = (int)sq.k_first;
#pragma unroll 1
            for (int k = 0; k < 2; ++k) {
                const int blk = k == 0 ? blk0 : blk1;
                if (blk < 0 || blk * BM >= w.len_q) continue;
                w.m0 = blk * BM;
                f(w);
                w.tb += NPASS * w.n_tiles(p);
                ++w.it;
            }
        }
    }

    // SPLIT: the bound of for_each_item's u: past the CTA's last piece, or `units` where it has none
    KILN_DEVICE static int split_end(int units, int step) {
        const uint4 hd = sm90::lds_v4_u32(lds_base() + OFF_PLAN);
        return hd.z > 0 ? (int)hd.y + (int)hd.z * step : units;
    }
    // SPLIT: the CTA's plan, written by thread 0 before the CTA's first barrier: {the head's end (units -
    // split_units), the u of the CTA's first piece (the head's end + blockIdx.x: the head ends on a multiple of the
    // grid), the count of pieces (0..3), 0}, then each piece {unit, kt0, pn, role} (kiln_attn_split_piece's order).
    KILN_DEVICE static void split_plan(const kiln_attn_params &p, uint8_t *smem) {
        const bool grid3 = p.work_heads == 0;
        const int units = grid3 ? 1 : (int)kiln_attn_work_units(&p, BM, p.work_pairs && p.causal);
        const int tail = grid3 ? 0 : p.split_units, grid = grid3 ? 1 : (int)gridDim.x, c = grid3 ? 0 : (int)blockIdx.x;
        int32_t *plan = reinterpret_cast<int32_t *>(smem + OFF_PLAN);
        int n = 0;
        for (int k = 0; k < 3; ++k) {
            int32_t *pc = plan + 4 + 4 * k;
            if (!kiln_attn_split_piece(units, tail, (p.seqlen_k + BN - 1) / BN, grid, c, k, &pc[0], &pc[1], &pc[2],
                                       &pc[3]))
                break;
            n = k + 1;
        }
        // (plan[3]: PACE's claim limit, none until the consumers' first item sets it)
        plan[0] = units - tail, plan[1] = units - tail + c, plan[2] = n, plan[3] = PACE ? 1 << 30 : 0;
    }

    // The shared-memory address of the kernel's 1024-byte aligned base (attn_wgmma's `base`).
    KILN_DEVICE static uint32_t lds_base() {
        extern __shared__ __align__(128) uint8_t kiln_lds[];
        const uint32_t a = smem_addr(kiln_lds);
        return a + ((1024 - (a & 1023)) & 1023);
    }

    // TMA of `rows` rows starting at sequence row r0 (coordinates: d, head, row, batch) into a [rows][D] tile.
    KILN_DEVICE static void load_rows(uint8_t *dst, const kiln_tma_desc *map, uint64_t *bar, int rows, int head,
                                      int r0, int b) {
#pragma unroll
        for (int pnl = 0; pnl < PANELS; ++pnl)
            sm90::tma_load_4d(dst + pnl * rows * RB, map, bar, pnl * RB, head, r0, b);
    }

    // One pass's V tile [BN][DV] (raw, one RB-swizzled panel) -> V^T [DV][BN] (RBV-swizzled), keys in P's order
    // (header). Each warp takes 32-key x 16-column blocks: ldmatrix.x4.trans (keys 0-7, 8-15, 16-23, 24-31 of the
    // step) + 4 byte permutes give the 4-key words of columns 16t + 2g and 16t + 2g + 1.
    KILN_DEVICE static void transpose(const uint8_t *vr, uint8_t *vt, int warp, int lane) {
        const int g = lane >> 2, q = lane & 3;
        constexpr int JOBS = PSTEPS * (DV / 16);
#pragma unroll 4
        for (int job = warp; job < JOBS; job += 4) {
            const int kk = job / (DV / 16), t = job % (DV / 16);
            const int key = 32 * kk + lane, c = 16 * t;
            uint32_t r[4];
            ldmatrix_x4_trans(r, vr + sm90::swz<RB>(key, c));
            const uint32_t be0 = __byte_perm(r[0], r[1], 0x6420), bo0 = __byte_perm(r[0], r[1], 0x7531);
            const uint32_t be1 = __byte_perm(r[2], r[3], 0x6420), bo1 = __byte_perm(r[2], r[3], 0x7531);
            const int d0 = c + 2 * g, kb = 32 * kk + 4 * q;
            const uint32_t base = smem_addr(vt);
            sm90::sts_u32(base + sm90::swz<RBV>(d0, kb), be0);
            sm90::sts_u32(base + sm90::swz<RBV>(d0, kb + 16), be1);
            sm90::sts_u32(base + sm90::swz<RBV>(d0 + 1, kb), bo0);
            sm90::sts_u32(base + sm90::swz<RBV>(d0 + 1, kb + 16), bo1);
        }
    }

    // Raw V tile t's buffer, and how many times that buffer was filled before it (its mbarrier's phase).
    KILN_DEVICE static int vr_slot(int t) { return VRAW == 2 ? (t & 1) : t % VRAW; }
    KILN_DEVICE static int vr_use(int t) { return VRAW == 2 ? t >> 1 : t / VRAW; }

    // PV16: the raw V tile [BN][D] (fp8, D / RB panels of RB-swizzled rows) -> V [BN][D] in f16, D / 64 panels of BN
    // rows of 128 bytes (the 128-byte swizzle), which P V's wgmma reads MN-major (desc_mn128), so no transpose and O's
    // columns in their own order. Thread i widens 16 columns (chunk c) of keys 8 n + i % 8: the 8 lanes of a quarter
    // warp move one chunk of 8 consecutive keys, whose swizzled 16-byte positions all differ (no bank met twice,
    // loads or stores), and c and i % 8 stay the thread's own, so each round's addresses are two bases plus
    // immediates (8-key groups are whole swizzle periods of both layouts). Per 16 values one 16-byte load, 8
    // conversions and two 16-byte stores.
    static constexpr int W16_CH = D / 16, W16_ROUNDS = BN * W16_CH / 128, W16_GSTEP = 16 / W16_CH;
    KILN_DEVICE static void widen_v(uint32_t vr, uint32_t v16, int tid) {
        static_assert(W16_CH * 8 <= 128 && W16_ROUNDS * 128 == BN * W16_CH, "whole rounds of 128 threads");
        const int c = (tid >> 3) % W16_CH, key0 = 8 * ((tid >> 3) / W16_CH) + (tid & 7);
        const uint32_t src = vr + (16 * c / RB) * BN * RB + sm90::swz<RB>(key0, (16 * c) % RB);
        const uint32_t dst = v16 + (c / 4) * V16_PANEL + sm90::swz<128>(key0, 32 * (c % 4));
        const uint32_t dst_hi = v16 + (c / 4) * V16_PANEL + sm90::swz<128>(key0, 32 * (c % 4) + 16);
#pragma unroll
        for (int n = 0; n < W16_ROUNDS; ++n) {
            const uint4 raw = sm90::lds_v4_u32(src + n * W16_GSTEP * 8 * RB);
            uint32_t h[8];
            Widen16<T8>::run(raw.x, h[0], h[1]);
            Widen16<T8>::run(raw.y, h[2], h[3]);
            Widen16<T8>::run(raw.z, h[4], h[5]);
            Widen16<T8>::run(raw.w, h[6], h[7]);
            sm90::sts_v4_u32(dst + n * W16_GSTEP * 1024, h[0], h[1], h[2], h[3]);
            sm90::sts_v4_u32(dst_hi + n * W16_GSTEP * 1024, h[4], h[5], h[6], h[7]);
        }
    }

    // VPRE's producer, one thread: Q, then per key tile its K tile and its V^T tile (BN / 64 boxes of 64 keys x D), each
    // into its ring stage once the consumers have released the stage.
    // Q waits for the consumers' release of the previous item's Q (qempty); the ring's stages and phases count on
    // from the item's first tile tb.
    // vt_fill (kiln_attn_abi.h): packer warp `lane`'s loop. Each chunk it takes is 64 keys (32 key pairs, a pair a
    // lane) x D: per 8 columns two 8-byte loads (keys r, r + 1), and eight stores of {key r, key r + 1} words,
    // each 128 contiguous bytes of a V^T row across the warp; keys past the sequence's length are written as 0 up to
    // vt_keys (as attn_pack_vt). The claim order follows the work order: a section's kv heads take key block 0, then
    // 1, ..., so that the blocks the first items read come first.
    KILN_DEVICE static void fill_vt(const kiln_attn_params &p, int lane) {
#pragma unroll 1
        for (;;) {
            int i = 0;
            if (lane == 0) {
                if constexpr (PACE)  // (plan_limit: the first claim past the sections the CTA may pack now)
                    while (*reinterpret_cast<volatile int32_t *>(p.vt_sync) >= plan_limit()) __nanosleep(256);
                i = atomicAdd(p.vt_sync, 1);
            }
            i = __shfl_sync(0xffffffffu, i, 0);
            const int hk_all = p.batch * p.heads_kv, nkb = (int)((p.vt_keys + 63) / 64);
            if (i >= hk_all * nkb) return;
            const int group = p.heads_q / p.heads_kv, sec = p.work_heads >= group ? p.work_heads / group : 1;
            const int s0 = i / (sec * nkb) * sec, n = min(sec, hk_all - s0), r = i - s0 * nkb;
            const int kb = r / n, hk = s0 + r % n;
            fill_chunk(p, hk, kb, lane);
            // every lane's V^T stores before the chunk's flag (released after the warp's barrier), for the TMA loads
            // of other CTAs (async proxy) too
            __threadfence();
            sm90::fence_proxy_async_global();
            __syncwarp();
            if (lane == 0) {
                sm90::st_release_gpu(p.vt_sync + 1 + hk_all + hk * nkb + kb, 1);
                sm90::red_release_gpu_add(p.vt_sync + 1 + hk, 1);  // the kv head's count of chunks done
            }
        }
    }
    KILN_DEVICE static void fill_chunk(const kiln_attn_params &p, int hk, int kb, int lane) {
        const int b = hk / p.heads_kv, h = hk - b * p.heads_kv;
        const AttnSeq sq = attn_seq<true>(p, b);
        const int len = min(sq.len_k, p.seqlen_k), r0 = 64 * kb + 2 * lane;
        if (r0 >= p.vt_keys) return;
        const uint8_t *src = static_cast<const uint8_t *>(p.v) +
                             (p.cu_seqlens_k ? sq.k_first * p.v_stride_s : (int64_t)b * p.v_stride_b) +
                             (int64_t)h * p.v_stride_h + (int64_t)r0 * p.v_stride_s;
        uint32_t *row = reinterpret_cast<uint32_t *>(p.vt_fill + (int64_t)hk * D * p.vt_keys + r0);
        const bool in0 = r0 < len, in1 = r0 + 1 < len;  // keys past the length read no row and write 0
        const uint8_t *end = src + D;
#pragma unroll 1
        for (; src != end; src += 8) {  // 8 columns a round, one 8-byte load a key
            const uint2 x0 = in0 ? sm90::ldg_nc_v2(src) : make_uint2(0u, 0u);
            const uint2 x1 = in1 ? sm90::ldg_nc_v2(src + p.v_stride_s) : make_uint2(0u, 0u);
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                uint32_t w[4];  // columns 4j .. 4j + 3, {key r0, key r0 + 1} each
                PairWiden16<T8>::run(j ? x0.y : x0.x, j ? x1.y : x1.x, w);
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    *row = w[c];
                    row += p.vt_keys / 2;
                }
            }
        }
    }
    // PACE: the packers' claim limit (a claim index), which the first consumer thread sets with each item (the TMA
    // thread has no registers to spare: a store of its own there spilled 4-12 bytes); 2^30 before the first item,
    // once the CTA's items are done, and without a work order. (The packers' loop spilled as well until the claim's
    // index arithmetic stayed after the claim, where it was.)
    // Shared-memory atomics, not volatile accesses: racecheck counts an unsynchronized store and load of one word
    // between two threads as a hazard, however benign.
    KILN_DEVICE static int plan_limit() {
        int v;
        asm volatile("atom.shared.or.b32 %0, [%1], 0;\n" : "=r"(v) : "r"(lds_base() + OFF_PLAN + 12) : "memory");
        return v;
    }
    KILN_DEVICE static void set_plan_limit(int limit) {
        int old;
        asm volatile("atom.shared.exch.b32 %0, [%1], %2;\n" : "=r"(old) : "r"(lds_base() + OFF_PLAN + 12), "r"(limit)
                     : "memory");
    }
    // vt_fill: whether kv head hk (b * heads_kv + kvh) has all its chunks packed (one acquire a tile until it has;
    // the packers run ahead of the items after the first ones); where not, the TMA thread waits for V^T's chunks of
    // keys k0 .. k0 + BN - 1 before the tile's load.
    KILN_DEVICE static bool vt_head_done(const kiln_attn_params &p, int hk) {
        return sm90::ld_acquire_gpu(p.vt_sync + 1 + hk) >= (int)((p.vt_keys + 63) / 64);
    }
    KILN_DEVICE static void wait_vt(const kiln_attn_params &p, int hk, int k0) {
        const int nkb = (int)((p.vt_keys + 63) / 64), kb1 = min(nkb, (k0 + BN) / 64);
        const int32_t *flags = p.vt_sync + 1 + p.batch * p.heads_kv + hk * nkb;
        for (int kb = k0 / 64; kb < kb1; ++kb)
            while (sm90::ld_acquire_gpu(flags + kb) == 0) __nanosleep(64);
    }

    KILN_DEVICE static void produce_vpre(const kiln_attn_params &p, const kiln_attn_tma_params &maps, uint8_t *smem,
                                         const Bars &bars, int h, int kvh, int qrow0, int krow0, int bc, int b,
                                         int n_tiles, int tb, int it, int kt0) {
        KILN_STAMP(it, 16, clock64());
        if (it > 0) sm90::mbar_wait(bars.qempty(), (uint32_t)(it - 1) & 1);
        KILN_STAMP(it, 17, clock64());
        sm90::mbar_arrive_expect_tx(bars.q(), Q_BYTES);
        load_rows(smem + OFF_Q, &maps.q, bars.q(), BM, h, qrow0, bc);
        // (an item that starts before its head is packed re-reads the head's count at each tile until it is done,
        // and polls the tile's chunk flags only while it is not: polling every tile of a long item cost 14-18 %)
        bool vt_wait = FILL && p.vt_fill && !vt_head_done(p, b * p.heads_kv + kvh);
        // (kt0: SPLIT's first key tile of the item, krow0 its row; V^T's coordinates count the sequence's keys)
        for (int t = 0; t < n_tiles; ++t) {  // (one pass)
            const int tg = tb + t, st = tg % ST, row = krow0 + t * BN, key = (kt0 + t) * BN;
            const uint32_t ph = (uint32_t)((tg / ST) - 1) & 1;
            if (vt_wait && t > 0) vt_wait = !vt_head_done(p, b * p.heads_kv + kvh);
            if (vt_wait) wait_vt(p, b * p.heads_kv + kvh, key);  // (while the consumers still use the stage)
            if (tg >= ST) sm90::mbar_wait(bars.kempty(st), ph);
            sm90::mbar_arrive_expect_tx(bars.kfull(st), KV_BYTES);
            load_rows(smem + OFF_K + st * KV_BYTES, &maps.k, bars.kfull(st), BN, kvh, row, bc);
            if (tg >= ST) sm90::mbar_wait(bars.vtempty(st), ph);
            sm90::mbar_arrive_expect_tx(bars.vtfull(st), D * BN * 2);  // (PSUM's ones rows are not loaded)
#pragma unroll
            for (int pnl = 0; pnl < BN / 64; ++pnl)
                sm90::tma_load_4d(smem + OFF_VT + st * VT_BYTES + pnl * VT_PANEL, &maps.v, bars.vtfull(st),
                                  key + 64 * pnl, 0, kvh, b);  // V^T per sequence, also with varlen
        }
    }

    KILN_DEVICE static void run(const kiln_attn_params &p, const kiln_attn_tma_params &maps, uint8_t *smem) {
        const int tid = thread_x(), wg = tid >> 7, lane = tid & 31, warp = (tid >> 5) & 3;
        if constexpr (!PERSIST) {  // the whole CTA, before any barrier: a query block past its sequence's rows
            if (grid_block(p) * BM >= attn_seq<true>(p, (int)blockIdx.z).len_q) return;
        }
        const bool varlen = p.cu_seqlens_q != nullptr;  // (the maps' batch coordinate: 0 with varlen, else b)
        const int group = p.heads_q / p.heads_kv;

        Bars bars{reinterpret_cast<uint64_t *>(smem + OFF_BAR)};
        if (tid == 0) {
            sm90::mbar_init(bars.q(), 1);
            for (int s = 0; s < ST; ++s) {
                sm90::mbar_init(bars.kfull(s), 1);
                sm90::mbar_init(bars.kempty(s), CONSUMER_WARPS);
                sm90::mbar_init(bars.vtfull(s), 1);
                sm90::mbar_init(bars.vtempty(s), CONSUMER_WARPS);
            }
            sm90::mbar_init(bars.vfull(0), 1);
            sm90::mbar_init(bars.vfull(1), 1);
            for (int v = 2; v < VRAW; ++v) sm90::mbar_init(bars.vfull(v), 1);
            sm90::mbar_init(bars.qempty(), CONSUMER_WARPS);
            sm90::mbar_init_fence();
            if constexpr (SPLIT) split_plan(p, smem);
        }
        if constexpr (PV16 && PSUM && !VPRE) {  // the ones panel after V's D / 64 in every stage (the widening writes
            // only V's), visible to the consumers' wgmma after the proxy fence and the barrier
            constexpr int WORDS = V16_PANEL / 4;
            for (int i = tid; i < ST * WORDS; i += THREADS)
                sm90::sts_u32(smem_addr(smem + OFF_VT + (i / WORDS) * VT_BYTES + (D / 64) * V16_PANEL) + 4 * (i % WORDS),
                              0x3C003C00u);  // f16 1.0 twice
            sm90::fence_proxy_async_smem();
        }
        if constexpr (PV16 && PSUM && VPRE) {  // rows DV .. DV + 7 of every f16 V^T panel: ones (TMA does not write
            // them), visible to the consumers' wgmma after the proxy fence and the barrier
            constexpr int WORDS = 8 * 128 / 4, PER_STAGE = (BN / 64) * WORDS;
            for (int i = tid; i < ST * PER_STAGE; i += THREADS)
                sm90::sts_u32(smem_addr(smem + OFF_VT + (i / PER_STAGE) * VT_BYTES + (i % PER_STAGE / WORDS) * VT_PANEL +
                                        DV * 128) + 4 * (i % WORDS), 0x3C003C00u);  // f16 1.0 twice
            sm90::fence_proxy_async_smem();
        }
        barrier();

        if (wg == 0) {
            sm90::regs_dealloc<PRODUCER_REGS>();
            if (tid == 0) sm90::tma_prefetch(&maps.q), sm90::tma_prefetch(&maps.k), sm90::tma_prefetch(&maps.v);
            if constexpr (VPRE) {
                // the other three warps pack V^T (vt_fill); (a warp index that ptxas sees as uniform in the warp)
                if (__shfl_sync(0xffffffffu, tid >> 5, 0) != 0) {
                    if constexpr (FILL)
                        if (p.vt_fill) fill_vt(p, lane);
                    return;
                }
                if (tid == 0)
                    for_each_item(p, [&](const Item &w) {
                        produce_vpre(p, maps, smem, bars, w.h, w.h / group, w.q_first + w.m0,
                                     w.k_first + (SPLIT ? w.kt0 * BN : 0), varlen ? 0 : w.b, w.b, w.n_tiles(p), w.tb,
                                     w.it, SPLIT ? w.kt0 : 0);
                    });
                return;
            }
            if (PSUM && !PV16) {  // rows DV .. DV + 7 of every V^T stage: ones (made visible by the first tile's fence)
                for (int i = tid; i < ST * 2 * BN; i += 128)
                    sm90::sts_u32(smem_addr(smem + OFF_VT + (i / (2 * BN)) * VT_BYTES + DV * BN) + 4 * (i % (2 * BN)),
                                  Fp8Ones<T8>::x4);
            }
            for_each_item(p, [&](const Item &w) {
                const int n_tiles = w.n_tiles(p), kvh = w.h / group, bc = varlen ? 0 : w.b, tb = w.tb;
                const int qrow0 = w.q_first + w.m0, krow0 = w.k_first + (SPLIT ? w.kt0 * BN : 0);
                // Tiles in load order t = pass * n_tiles + j: K tile j (every pass), V tile j's columns of the pass;
                // the ring's stages, raw V buffers and phases count tb + t. K tile t into its ring stage; raw V tile
                // t into buffer (tb + t) % VRAW, which the transpose of tile t - VRAW read last (the named barrier
                // below). With VRAW > 2 raw V runs VRAW - 1 tiles ahead of K's one.
                const int total = NPASS * n_tiles;
                auto issue_k = [&](int t, int row) {
                    const int st = (tb + t) % ST;
                    sm90::mbar_arrive_expect_tx(bars.kfull(st), KV_BYTES);
                    load_rows(smem + OFF_K + st * KV_BYTES, &maps.k, bars.kfull(st), BN, kvh, row, bc);
                };
                auto issue_v = [&](int t, int pass, int row) {
                    const int vb = vr_slot(tb + t);
                    sm90::mbar_arrive_expect_tx(bars.vfull(vb), VR_BYTES);
                    if constexpr (PV16)  // the whole [BN][D] tile, in D / RB panels as K
                        load_rows(smem + OFF_VR + vb * VR_BYTES, &maps.v, bars.vfull(vb), BN, kvh, row, bc);
                    else
                        sm90::tma_load_4d(smem + OFF_VR + vb * VR_BYTES, &maps.v, bars.vfull(vb), pass * DV, kvh, row,
                                          bc);
                };
                auto pass_of = [&](int t) { return NPASS == 1 ? 0 : t / n_tiles; };
                auto row_of = [&](int t, int pass) { return krow0 + (t - pass * n_tiles) * BN; };
                auto wait_k_stage = [&](int t) {  // K tile t's stage, released by the tile ST before it
                    const int tg = tb + t;
                    if (tg >= ST) sm90::mbar_wait(bars.kempty(tg % ST), ((tg / ST) - 1) & 1);
                };
                auto load_kv = [&](int t) {
                    const int pass = pass_of(t), row = row_of(t, pass);
                    issue_k(t, row);
                    issue_v(t, pass, row);
                };
                auto load_k = [&](int t) { issue_k(t, row_of(t, pass_of(t))); };
                auto load_v = [&](int t) {
                    const int pass = pass_of(t);
                    issue_v(t, pass, row_of(t, pass));
                };
                if (tid == 0) {
                    KILN_STAMP(w.it, 16, clock64());
                    if (w.it > 0) sm90::mbar_wait(bars.qempty(), (uint32_t)(w.it - 1) & 1);
                    KILN_STAMP(w.it, 17, clock64());
                    sm90::mbar_arrive_expect_tx(bars.q(), Q_BYTES);
                    load_rows(smem + OFF_Q, &maps.q, bars.q(), BM, w.h, qrow0, bc);
                    if constexpr (VRAW == 2) {
                        if (total > 0) wait_k_stage(0), load_kv(0);
                    } else {
                        if (total > 0) wait_k_stage(0), load_k(0);
                        for (int v = 0; v < VRAW - 1 && v < total; ++v) load_v(v);
                    }
                }
                for (int t = 0; t < total; ++t) {
                    if constexpr (VRAW == 2) {
                        if (tid == 0 && t + 1 < total) wait_k_stage(t + 1), load_kv(t + 1);
                    } else if (tid == 0) {
                        if (t + VRAW - 1 < total) load_v(t + VRAW - 1);
                        if (t + 1 < total) wait_k_stage(t + 1), load_k(t + 1);
                    }
                    const int tg = tb + t, st = tg % ST;
                    const int vb = vr_slot(tg);
                    sm90::mbar_wait(bars.vfull(vb), (uint32_t)(vr_use(tg) & 1));
                    if (tg >= ST) sm90::mbar_wait(bars.vtempty(st), ((tg / ST) - 1) & 1);
#ifdef KILN_PROBE_NO_TRANSPOSE  // timing probe only (the results are wrong): what a V^T loaded as it is would save
                    if (false)
#endif
                    if constexpr (PV16)
                        widen_v(smem_addr(smem + OFF_VR + vb * VR_BYTES), smem_addr(smem + OFF_VT + st * VT_BYTES),
                                tid);
                    else
                        transpose(smem + OFF_VR + vb * VR_BYTES, smem + OFF_VT + st * VT_BYTES, warp, lane);
                    sm90::fence_proxy_async_smem();  // V^T's generic writes before the consumers' wgmma reads
                    sm90::named_barrier(1, 128);
                    if (tid == 0) sm90::mbar_arrive(bars.vtfull(st));
                    if (tid == 0 && (t == 0 || t == total - 1)) KILN_STAMP(w.it, t == 0 ? 18 : 19, clock64());
                }
            });
            return;
        }

        sm90::regs_alloc<CONSUMER_REGS>();
        for_each_item(p, [&](const Item &w) {
            if (wg == 1 && warp == 0 && lane == 0) KILN_STAMP(w.it, 20, clock64());
            // PACE: the packers' claim limit from this item's section (of work_heads query heads and work_heads /
            // group kv heads of (vt_keys + 63) / 64 chunks each, `per` units a head): the sections the grid's next
            // items reach (the CTA's next item is gridDim.x units on) and FILL_AHEAD more
            if (PACE && tid == 128 && p.vt_fill && p.work_heads > 0) {
                const int nblk = (p.seqlen_q + BM - 1) / BM, per = p.work_pairs && p.causal ? (nblk + 1) / 2 : nblk;
                const int sec_units = p.work_heads * per, ahead = ((int)gridDim.x + sec_units - 1) / sec_units;
                set_plan_limit(((w.b * p.heads_q + w.h) / p.work_heads + ahead + FILL_AHEAD + 1) *
                               (p.work_heads / group) * (int)((p.vt_keys + 63) / 64));
            }
            // (SPLIT: a piece's keys counted from its first tile; only non-causal problems are split)
            consume(p, &maps.o, smem, bars, wg - 1, warp, lane, w.b, w.h, w.m0, w.n_tiles(p), w.len_k - w.len_q,
                    w.len_k - (SPLIT ? w.kt0 * BN : 0), w.tb, w.it, SPLIT ? w.role : 0);
        });
        if (PACE && tid == 128) set_plan_limit(1 << 30);  // (the CTA's packers take whatever is left)
        if constexpr (SPLIT) split_finish(p, &maps.o);
        if constexpr (OSTAGE)
            if (lane == 0) sm90::bulk_wait<0>();  // O's last stores done before the CTA's shared memory goes
    }

    // Per-thread state of a consumer: O's accumulators, and per row (g, g + 8) the running max of the raw scores
    // and this lane's share of the row sum (reduced over the quad in the epilogue).
    struct Rows {
        int lim[2];  // keys at or past lim[h] are masked for row g + 8h
        int wr0;     // the warp's first row in the sequence
        float sl2;   // softmax scale * q and k descales * log2(e)
        float vd;    // v_descale (for the epilogue: a load there stalls O's first store)
        float m[2], l[2];
    };

    // S = Q K^T of one tile (committed as one wgmma group, not waited for). dq: the descriptor of the consumer's Q
    // rows (desc_sw of their address). Each k step's descriptors are the tile's base descriptors plus a constant
    // (desc_add: one add, where rebuilding each from its address took four or five uniform instructions ahead of
    // every wgmma).
    KILN_DEVICE static void issue_s(float (&s)[BN / 2], uint64_t dq, uint32_t k_base) {
        const uint64_t dk = sm90::desc_sw<RB>(k_base);
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks) {
            const int pnl = (32 * ks) / RB, cb = (32 * ks) % RB;
            WgSS<BN, T8, T8>::run(s, sm90::desc_add(dq, pnl * BM * RB + cb), sm90::desc_add(dk, pnl * BN * RB + cb),
                                  ks > 0);
        }
        sm90::wgmma_commit();
    }

    // O += P V^T of tile j, whose V^T is at vt_base (one wgmma group, not waited for). PROMOTE: into the promotion
    // accumulators, a fresh sum on the first tile of each group of PROMOTE tiles.
    KILN_DEVICE static void issue_pv(float (&o)[NO / 2], const uint32_t (&pa)[PV_STEPS][4], uint32_t vt_base, int j) {
        const bool fresh = PROMOTE && j % GROUP == 0;
        // (the tile's base descriptor once, each k step's as a constant added to it, as in issue_s)
        const uint64_t dv = PV16 && !VPRE ? sm90::desc_mn128(vt_base, V16_PANEL)
                                          : PV16 ? sm90::desc_sw<128>(vt_base) : sm90::desc_sw<RBV>(vt_base);
#pragma unroll
        for (int kk = 0; kk < PV_STEPS; ++kk) {
            if constexpr (PV16 && !VPRE)  // k16 step kk: keys 16 kk .., two 8-key groups of 1 KB into each panel
                WgRS16<NO, 1>::run(o, pa[kk], sm90::desc_add(dv, 2048 * kk), kk > 0 || !fresh);
            else if constexpr (PV16)  // k16 step kk: keys 16 kk .., 32 bytes into the rows of V^T panel kk / 4
                WgRS16<NO>::run(o, pa[kk], sm90::desc_add(dv, (kk / 4) * VT_PANEL + 32 * (kk % 4)), kk > 0 || !fresh);
            else
                WgRS<NO, kiln_e4m3, T8>::run(o, pa[kk], sm90::desc_add(dv, 32 * kk), kk > 0 || !fresh);
        }
        sm90::wgmma_commit();
    }

    // Online softmax of one S tile (keys n0 ..): masks (MASK: the tile reaches past a row's last key), moves the
    // running max, makes P = 256 * exp2(..) packed to e4m3 in pa (A registers of each k32 step, key order in the
    // header), adds P's row sums into r.l (after scaling them by corr; with PSUM only, on masked tiles, what rounding
    // P to e4m3 took from them) and returns in corr the factor O must be multiplied by (1 where the max did not
    // move). S is only read: in schedule 1 the next S wgmma is issued while P V of this tile still runs, and ptxas
    // serializes wgmma whose registers other instructions write inside an open wgmma stage. The unmasked tiles (all
    // but the last one or two of a row block) pay for no key compares.
    template <bool MASK, bool FIRST = false>
    KILN_DEVICE static void softmax(const float (&s)[BN / 2], uint32_t (&pa)[PV_STEPS][4], Rows &r, float (&corr)[2],
                                    int n0, int q4) {
        // element i: row g + 8 * ((i >> 1) & 1), key n0 + 8 * (i >> 2) + 2 * q4 + (i & 1)
        auto score = [&](int i) {
            return MASK && n0 + 8 * (i >> 2) + 2 * q4 + (i & 1) >= r.lim[(i >> 1) & 1] ? -INFINITY : s[i];
        };
        if constexpr (SPEC && !FIRST)
            softmax_spec<MASK>(pa, r, corr, score);
        else
            softmax_after_max<MASK>(pa, r, corr, score);
    }
    // SPEC: P with the running max as it stands, the tile's max beside it (softmax above).
    template <bool MASK, class Score>
    KILN_DEVICE static void softmax_spec(uint32_t (&pa)[PV_STEPS][4], Rows &r, float (&corr)[2], const Score &score) {
        // P with the running max as it stands (the shift below when the max does not move) and the tile's max
        // beside it; made again with the moved max where a row of the warp moves it (or has none yet).
        float shift[2] = {r.m[0] * r.sl2 - 8.f, r.m[1] * r.sl2 - 8.f};
        float rs[2][2], tm[2][2], mx[2];
        uint32_t ph[2][2];
        softmax_f16_max<MASK, PMAX>(pa, rs, tm, ph, r, shift, score);
        bool keep = true;
        if constexpr (PMAX) {
            // P <= 2^(8 + LAZY) everywhere (f16 bits, P >= 0: an unsigned compare; Inf and NaN compare above)
            constexpr uint32_t LIM = (uint32_t)(8 + LAZY + 15) << 10;
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                const uint32_t h2 = hmax2(ph[hh][0], ph[hh][1]);
                keep = keep && r.m[hh] != -INFINITY && (h2 & 0xffffu) <= LIM && (h2 >> 16) <= LIM;
            }
        } else {
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                mx[hh] = quad_max(fmaxf(r.m[hh], fmaxf(tm[hh][0], tm[hh][1])));
                keep = keep && r.m[hh] != -INFINITY && !((mx[hh] - r.m[hh]) * r.sl2 > (float)LAZY);
            }
        }
        corr[0] = corr[1] = 1.f;
        if (!__all_sync(0xffffffffu, keep)) {
            // PMAX: the tile's max is not at hand; P once more with the running max gives it beside (a third pass,
            // on the tiles that move a max or see the first keys only: an FMNMX max alone over S spilled registers
            // at 240 a thread as well as at 160)
            if constexpr (PMAX) {
                softmax_f16_max<MASK, false>(pa, rs, tm, ph, r, shift, score);
#pragma unroll
                for (int hh = 0; hh < 2; ++hh) mx[hh] = quad_max(fmaxf(r.m[hh], fmaxf(tm[hh][0], tm[hh][1])));
            }
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                corr[hh] = move_max(r, hh, mx[hh]);
                shift[hh] = r.m[hh] == -INFINITY ? 0.f : r.m[hh] * r.sl2 - 8.f;
            }
            softmax_f16_max<MASK, false>(pa, rs, tm, ph, r, shift, score);
        }
        if constexpr (!PSUM)
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) r.l[hh] += rs[hh][0] + rs[hh][1];
    }
    // The tile's row max first, then P with it (the max moved where the tile passed it).
    template <bool MASK, class Score>
    KILN_DEVICE static void softmax_after_max(uint32_t (&pa)[PV_STEPS][4], Rows &r, float (&corr)[2],
                                              const Score &score) {
        float shift[2];
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            const float mx = row_max(score, r.m[hh], hh);
            corr[hh] = move_max(r, hh, mx);
            // The exponent's shift from the row max as it now stands (a row that sees no key yet: p = 2^-inf = 0).
            // Without LAZY that is mx, read before the branch: the shift stays off the branch's critical path.
            const float mref = LAZY > 0 ? r.m[hh] : mx;
            shift[hh] = mref == -INFINITY ? 0.f : mref * r.sl2 - 8.f;
        }
        if constexpr (PV16) {
            float rs[2][PV_STEPS];
            softmax_f16<MASK>(pa, rs, r, shift, score);
            if constexpr (!PSUM) add_row_sums(rs, r);  // (PSUM: P V's last 8 columns sum the rounded P)
        } else {
            float rs[2][PSTEPS];
            // A register a of k32 step kk holds elements 16 kk + {0, 1, 4, 5} (a = 0), {2, 3, 6, 7}, {8, 9, 12, 13},
            // {10, 11, 14, 15}: each is made and packed on its own, so that few P values are live at a time.
#pragma unroll
            for (int kk = 0; kk < PSTEPS; ++kk) {
                rs[0][kk] = rs[1][kk] = 0.f;
#pragma unroll
                for (int a = 0; a < 4; ++a) {
                    float c[4];
#pragma unroll
                    for (int x = 0; x < 4; ++x) {
                        const int i = 16 * kk + 8 * (a >> 1) + 2 * (a & 1) + 4 * (x >> 1) + (x & 1);
                        const float e = fmaf(score(i), r.sl2, -shift[a & 1]);
                        c[x] = !MASK && x < FEXP ? exp2_fma(e) : fast_exp2(e);
                    }
                    pa[kk][a] = f32x4_to_e4m3x4(c[0], c[1], c[2], c[3]);
                    if (!PSUM)
                        rs[a & 1][kk] += (c[0] + c[1]) + (c[2] + c[3]);
                    else if (MASK)
                        rs[a & 1][kk] += ((c[0] + c[1]) + (c[2] + c[3])) - e4m3x4_sum(pa[kk][a]);
                }
            }
            if (!PSUM || MASK) add_row_sums(rs, r);
        }
    }
    // r.l[h] += the k steps' partial row sums rs[h][..], added as a tree.
    template <int N> KILN_DEVICE static void add_row_sums(float (&rs)[2][N], Rows &r) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
#pragma unroll
            for (int w = N / 2; w > 0; w >>= 1)
#pragma unroll
                for (int i = 0; i < N / 2; ++i)
                    if (i < w) rs[hh][i] += rs[hh][i + w];
            r.l[hh] += rs[hh][0];
        }
    }
    // Row g + 8 hh's running max moves to mx where it rose (-inf -> finite included: O and l are still 0 then; LAZY:
    // only by more than 2^LAZY, and -inf - -inf is NaN: no move, so that P = 2^8 exp2(..) stays at or below
    // 2^(8 + LAZY)); the row sum is scaled with it. Returns the factor O must be multiplied by (1: no move).
    KILN_DEVICE static float move_max(Rows &r, int hh, float mx) {
        float corr = 1.f;
        if (LAZY > 0 ? (mx - r.m[hh]) * r.sl2 > (float)LAZY : mx != r.m[hh]) {
            corr = fast_exp2((r.m[hh] - mx) * r.sl2);
            r.l[hh] *= corr;
            r.m[hh] = mx;
        }
        return corr;
    }
    // The max of v over the 4 lanes of a quad (the threads that share a row).
    KILN_DEVICE static float quad_max(float v) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
        return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
    }
    // Row g + 8 hh's max over the tile and m (the running max): a tree over the thread's scores, then the quad.
    template <class Score> KILN_DEVICE static float row_max(const Score &score, float m, int hh) {
        float v[NB];  // the row max as a tree: log2(NB) dependent steps instead of NB
#pragma unroll
        for (int jb = 0; jb < NB; ++jb) v[jb] = fmaxf(score(4 * jb + 2 * hh), score(4 * jb + 2 * hh + 1));
#pragma unroll
        for (int w = NB / 2; w > 0; w >>= 1)
#pragma unroll
            for (int i = 0; i < NB / 2; ++i)
                if (i < w) v[i] = fmaxf(v[i], v[i + w]);
        return quad_max(fmaxf(m, v[0]));
    }
    // f16 P (PV16): A register a of k16 step kk holds elements 8 kk + 2 a, + 1 (row g + 8 (a & 1), keys 2q, 2q + 1
    // of 16 kk + 8 (a >> 1) ..); rs gets the k steps' row sums of the unrounded P in FP32 (for add_row_sums).
    template <bool MASK, class Score>
    KILN_DEVICE static void softmax_f16(uint32_t (&pa)[PV_STEPS][4], float (&rs)[2][PV_STEPS], const Rows &r,
                                        const float (&shift)[2], const Score &score) {
#pragma unroll
        for (int kk = 0; kk < PV_STEPS; ++kk) {
            rs[0][kk] = rs[1][kk] = 0.f;
#pragma unroll
            for (int a = 0; a < 4; ++a) {
                float c[2];
#pragma unroll
                for (int x = 0; x < 2; ++x) {
                    const float e = fmaf(score(8 * kk + 2 * a + x), r.sl2, -shift[a & 1]);
                    c[x] = !MASK && ((2 * a + x) & 3) < FEXP ? exp2_fma(e) : fast_exp2(e);
                }
                pa[kk][a] = f32x2_to_f16x2(c[0], c[1]);
                rs[a & 1][kk] += c[0] + c[1];
            }
        }
    }
    // SPEC: softmax_f16 with the shift of the running max, and with it the tile's row maxima in running FMNMX chains
    // (tm[h][two chains]; hidden under the exponentials, few registers) and the row sums in two chains a row.
    // PM: instead of tm, ph[h][two chains] gets the f16x2 max of row g + 8 h's P registers.
    template <bool MASK, bool PM, class Score>
    KILN_DEVICE static void softmax_f16_max(uint32_t (&pa)[PV_STEPS][4], float (&rs)[2][2], float (&tm)[2][2],
                                            uint32_t (&ph)[2][2], const Rows &r, const float (&shift)[2],
                                            const Score &score) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
            rs[hh][0] = rs[hh][1] = 0.f, tm[hh][0] = tm[hh][1] = -INFINITY, ph[hh][0] = ph[hh][1] = 0u;
#pragma unroll
        for (int kk = 0; kk < PV_STEPS; ++kk) {
#pragma unroll
            for (int a = 0; a < 4; ++a) {
                float c[2], sc[2];
#pragma unroll
                for (int x = 0; x < 2; ++x) {
                    sc[x] = score(8 * kk + 2 * a + x);
                    const float e = fmaf(sc[x], r.sl2, -shift[a & 1]);
                    c[x] = !MASK && ((2 * a + x) & 3) < FEXP ? exp2_fma(e) : fast_exp2(e);
                }
                pa[kk][a] = f32x2_to_f16x2(c[0], c[1]);
                if constexpr (PM)
                    ph[a & 1][kk & 1] = hmax2(ph[a & 1][kk & 1], pa[kk][a]);
                else
                    tm[a & 1][kk & 1] = fmaxf(tm[a & 1][kk & 1], fmaxf(sc[0], sc[1]));
                rs[a & 1][kk & 1] += c[0] + c[1];
            }
        }
    }
    KILN_DEVICE static void softmax(const float (&s)[BN / 2], uint32_t (&pa)[PV_STEPS][4], Rows &r, float (&corr)[2],
                                    int n0, bool mask, int q4) {
        if (mask)
            softmax<true>(s, pa, r, corr, n0, q4);
        else
            softmax<false>(s, pa, r, corr, n0, q4);
    }
    // The first tile of a row block: no row has a max yet, so SPEC's P with the running max would be made twice more
    // (PMAX: three passes of exponentials); the tile's max first, then P once.
    KILN_DEVICE static void softmax_first(const float (&s)[BN / 2], uint32_t (&pa)[PV_STEPS][4], Rows &r,
                                          float (&corr)[2], bool mask, int q4) {
        if (mask)
            softmax<true, true>(s, pa, r, corr, 0, q4);
        else
            softmax<false, true>(s, pa, r, corr, 0, q4);
    }

    // PROMOTE: O += the promotion accumulators (their tiles share O's max), in FP32.
    KILN_DEVICE static void fold(float (&o)[NO / 2], float (&ot)[NO / 2]) {
        if (!PROMOTE) return;
        sm90::fence_regs(ot);
#pragma unroll
        for (int i = 0; i < NO / 2; ++i) o[i] += ot[i];
    }

    KILN_DEVICE static void scale_rows(float (&o)[NO / 2], const float (&corr)[2]) {
#pragma unroll
        for (int t = 0; t < NO / 8; ++t) o[4 * t] *= corr[0], o[4 * t + 1] *= corr[0], o[4 * t + 2] *= corr[1],
                                         o[4 * t + 3] *= corr[1];
    }

    // P V of tile t has finished and the softmax of tile t + 1 returned corr: with PROMOTE the accumulators are added
    // to O when t ends a group; then O (and the promotion accumulators, while they hold a partial group) *= corr,
    // skipped by a warp whose rows all kept their max (most tiles once the max has settled).
    KILN_DEVICE static void settle(float (&o)[NO / 2], float (&ot)[NO / 2], const float (&corr)[2], int t) {
        const bool group_done = PROMOTE && t % GROUP == GROUP - 1;
        if (group_done) fold(o, ot);
        if (!__any_sync(0xffffffffu, corr[0] != 1.f || corr[1] != 1.f)) return;
        scale_rows(o, corr);
        if (PROMOTE > 1 && !group_done) {
            sm90::fence_regs(ot);
            scale_rows(ot, corr);
        }
    }

    template <int R> KILN_DEVICE static void fence_pa(uint32_t (&pa)[R][4]) {
#pragma unroll
        for (int i = 0; i < R; ++i)
#pragma unroll
            for (int e = 0; e < 4; ++e) sm90::fence_reg(pa[i][e]);
    }

    // One item (query block m0 of head h of sequence b, its tiles from tb in the ring's count, its index it).
    KILN_DEVICE static void consume(const kiln_attn_params &p, const kiln_tma_desc *omap, uint8_t *smem,
                                    const Bars &bars, int cw, int warp, int lane, int b, int h, int m0, int n_tiles,
                                    int off, int len_k, int tb, int it, int role) {
        const int64_t di = attn_descale_index(p, b, h);
        const int g = lane >> 2, q4 = lane & 3;
        Rows r;
        r.sl2 = attn_sl2<true>(p, di);
        r.vd = attn_descale<true>(p.v_descale, di);
        r.wr0 = m0 + 64 * cw + 16 * warp;
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) r.lim[hh] = p.causal ? min(len_k, r.wr0 + g + 8 * hh + off + 1) : len_k;
        float o[NO / 2], ot[NO / 2], s[BN / 2], corr[2];
        float(&acc)[NO / 2] = PROMOTE ? ot : o;  // P V's accumulators
        uint32_t pa[PV_STEPS][4];
        const uint64_t q_desc = sm90::desc_sw<RB>(smem_addr(smem + OFF_Q) + 64 * cw * RB);
        // Ring slots and phases follow the load order t = t0 + j (t0 = tb + pass * n_tiles); tile j's keys are j * BN...
        int t0 = tb;
        auto slot = [&](int j) { return (t0 + j) % ST; };
        auto phase = [&](int j) { return (uint32_t)((t0 + j) / ST) & 1; };
        auto k_base = [&](int j) { return smem_addr(smem + OFF_K + slot(j) * KV_BYTES); };
        auto vt_base = [&](int j) { return smem_addr(smem + OFF_VT + slot(j) * VT_BYTES); };
        // (without PERSIST and with one pass t0 is the constant 0)
        // A tile needs the key compares when it reaches past the keys or, causal, past the CTA's first row's last key:
        // the same for the whole CTA (a warp's own first row would make the softmax branch divergent for ptxas, which
        // then serializes the wgmma whose P registers it writes), at the price of masking a few tiles needlessly.
        auto masked = [&](int j) {
            const int n0 = j * BN;
            return n0 + BN > len_k || (p.causal && n0 + BN - 1 > m0 + off);
        };
        // Q is read by the S of the last pass's last tile for the last time: then each warp releases it to the
        // producer (the next item's Q), or at once where the item has no key tile.
        auto release_q = [&](int pass, int j) {
            if (pass == NPASS - 1 && j == n_tiles - 1 && lane == 0) sm90::mbar_arrive(bars.qempty());
        };
        const bool stamp = warp == 0 && lane == 0;
        if (stamp) KILN_STAMP(it, 8 * cw, clock64());
        sm90::mbar_wait(bars.q(), (uint32_t)it & 1);  // (also with no key tile: Q's load must have landed)
        if (n_tiles == 0 && lane == 0) sm90::mbar_arrive(bars.qempty());
        if (stamp) {
            KILN_STAMP(it, 8 * cw + 1, clock64());
            KILN_STAMP(it, 8 * cw + 7, n_tiles);
        }

#pragma unroll 1  // (unrolled, head dim 256's two passes hold more registers: bn 128 spilled at 224 a thread)
        for (int pass = 0; pass < NPASS; ++pass) {
            t0 = tb + pass * n_tiles;
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) r.m[hh] = -INFINITY, r.l[hh] = 0.f;
#pragma unroll
            for (int i = 0; i < NO / 2; ++i) o[i] = 0.f;
            if (SCHED == 0 || SCHED == 3) {
                // Tile by tile: S(j), wait (P V of j - 1 finishes with it), softmax, P V(j) left running. Schedule 3:
                // the consumers' softmaxes take turns in a ring (named barrier 2 + cw: its own 128 threads and the
                // previous consumer's 128 arrivals), consumer 0 first; each takes n_tiles turns and consumer 0 absorbs
                // the last consumer's last hand-over. Where they would otherwise share the MUFU, each softmax runs at
                // its full rate while the other consumers' S and P V run (head dim 256: +1-3 %; at 128 with two
                // consumers the turns cost 8 %).
                constexpr bool TURNS = SCHED == 3;
                if (TURNS && cw == CW - 1) sm90::named_arrive(2, 256);
                for (int j = 0; j < n_tiles; ++j) {
                    const uint32_t ph = phase(j);
                    sm90::mbar_wait(bars.kfull(slot(j)), ph);
                    sm90::wgmma_fence();
                    issue_s(s, q_desc, k_base(j));
                    sm90::wgmma_wait<0>();  // S of tile j, and P V of tile j - 1
                    sm90::fence_regs(s);
                    sm90::fence_regs(o);
                    fence_pa(pa);
                    if (lane == 0) {
                        sm90::mbar_arrive(bars.kempty(slot(j)));
                        if (j > 0) sm90::mbar_arrive(bars.vtempty(slot(j - 1)));
                    }
                    release_q(pass, j);
                    if (TURNS) sm90::named_barrier(2 + cw, 256);
                    softmax(s, pa, r, corr, j * BN, masked(j), q4);
                    if (TURNS) sm90::named_arrive(CW == 2 ? 3 - cw : 2 + (cw + 1) % CW, 256);  // the next in the ring
                    if (j > 0) settle(o, ot, corr, j - 1);  // (O is 0 before the first tile: nothing to scale)
                    sm90::mbar_wait(bars.vtfull(slot(j)), ph);
                    sm90::wgmma_fence();
                    issue_pv(acc, pa, vt_base(j), j);
                }
                if (TURNS && cw == 0) sm90::named_barrier(2, 256);  // the last consumer's last hand-over
            } else if (n_tiles > 0) {
                // Softmax of tile j overlaps P V of tile j - 1 (FlashAttention-3's intra-warpgroup pipelining): S(j)
                // and P V(j - 1) are issued back to back, the softmax starts when S(j) is done, and O is rescaled once
                // P V(j - 1) has finished. P of tile j goes to pn while P V(j - 1) still reads pa.
                // Schedule 2 also takes turns between the two consumers (FlashAttention-3's ping-pong): a consumer
                // issues its wgmma only in its turn (named barrier 2 + cw: its own 128 threads and the other's 128
                // arrivals) and hands the turn over right after, so that one consumer's softmax runs under the other's
                // GEMMs. Consumer 0 goes first; each takes n_tiles + 1 turns (a pass) and consumer 0 absorbs consumer
                // 1's last hand-over.
                auto turn_begin = [&] {
                    if (SCHED == 2) sm90::named_barrier(2 + cw, 256);
                };
                auto turn_end = [&] {
                    if (SCHED == 2) sm90::named_arrive(3 - cw, 256);
                };
                if (SCHED == 2 && cw == 1) sm90::named_arrive(2, 256);
                uint32_t pn[PV_STEPS][4];
                sm90::mbar_wait(bars.kfull(slot(0)), phase(0));
                turn_begin();
                sm90::wgmma_fence();
                issue_s(s, q_desc, k_base(0));
                turn_end();
                sm90::wgmma_wait<0>();
                sm90::fence_regs(s);
                if (stamp) KILN_STAMP(it, 8 * cw + 2, clock64());
                if (lane == 0) sm90::mbar_arrive(bars.kempty(slot(0)));
                release_q(pass, 0);
                softmax_first(s, pa, r, corr, masked(0), q4);  // O is 0: nothing to rescale
                if (stamp) KILN_STAMP(it, 8 * cw + 3, clock64());
                // Tile j: P(j - 1) in cur feeds P V(j - 1), P(j) goes to nxt. The two P buffers swap roles from tile
                // to tile by unrolling by two (a register copy between them would sit inside a wgmma stage for ptxas,
                // which then serializes the wgmma).
                auto step = [&](int j, uint32_t(&cur)[PV_STEPS][4], uint32_t(&nxt)[PV_STEPS][4]) {
                    sm90::mbar_wait(bars.kfull(slot(j)), phase(j));
                    sm90::mbar_wait(bars.vtfull(slot(j - 1)), phase(j - 1));
                    turn_begin();
                    sm90::wgmma_fence();
                    issue_s(s, q_desc, k_base(j));
                    issue_pv(acc, cur, vt_base(j - 1), j - 1);
                    turn_end();
                    sm90::wgmma_wait<1>();  // S(j) done; P V(j - 1) may still run
                    sm90::fence_regs(s);
                    if (lane == 0) sm90::mbar_arrive(bars.kempty(slot(j)));
                    release_q(pass, j);
                    softmax(s, nxt, r, corr, j * BN, masked(j), q4);
                    sm90::wgmma_wait<0>();  // P V(j - 1) done: O and cur are free
                    sm90::fence_regs(o);
                    fence_pa(cur);
                    if (lane == 0) sm90::mbar_arrive(bars.vtempty(slot(j - 1)));
                    settle(o, ot, corr, j - 1);
                };
                int j = 1;
                for (; j + 1 < n_tiles; j += 2) {
                    step(j, pa, pn);
                    step(j + 1, pn, pa);
                }
                const bool last_in_pn = j < n_tiles;  // an odd number of steps: P of the last tile is in pn
                if (last_in_pn) step(j, pa, pn);
                if (stamp) KILN_STAMP(it, 8 * cw + 4, clock64());
                const int jl = n_tiles - 1;
                sm90::mbar_wait(bars.vtfull(slot(jl)), phase(jl));
                turn_begin();
                sm90::wgmma_fence();
                if (last_in_pn)
                    issue_pv(acc, pn, vt_base(jl), jl);
                else
                    issue_pv(acc, pa, vt_base(jl), jl);
                turn_end();
                if (SCHED == 2 && cw == 0) sm90::named_barrier(2, 256);
            }
            sm90::wgmma_wait<0>();
            sm90::fence_regs(o);
            if (n_tiles > 0) fold(o, ot);  // the last group, whole or not
            if (n_tiles > 0 && lane == 0) sm90::mbar_arrive(bars.vtempty(slot(n_tiles - 1)));
            if (stamp) KILN_STAMP(it, 8 * cw + 5, clock64());
            if constexpr (SPLIT) {  // (one pass)
                if (role != 0) {  // a piece: its partial for the next CTA (1) or for split_finish (2)
                    split_store(p, o, r, role);
                    continue;
                }
            }
            epilogue(p, omap, o, r, pass, b, h);
            if (stamp) KILN_STAMP(it, 8 * cw + 6, clock64());
        }
    }

    // SPLIT: a piece's partial, unnormalized, as float4 groups [group][consumer thread] (a warp's 16-byte accesses
    // contiguous): O's accumulators in NO / 8 groups, then {the rows' max, this lane's row sums}. Role 1 (the unit's
    // first tiles) writes slot 2 blockIdx.x and then raises the consumer warp's flag, released once every lane's
    // stores are visible at the GPU's scope; role 2 (its last tiles, the CTA's last item) writes slot 2 blockIdx.x + 1,
    // which split_finish merges with the previous CTA's role 1 after the item loop. (Merged inside the item's code,
    // before its epilogue, the two partials made ptxas spill 84-276 bytes at head dim 256, whatever the wait and the
    // loads looked like: there O's registers are live through the key loop.) The thread's place comes from %tid.x
    // read where it is used: threadIdx.x is read once and kept live, and so would be the addresses made from it.
    KILN_DEVICE static int split_tid() {
        int t;
        asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(t));
        return t;
    }
    KILN_DEVICE static int split_warp() { return (split_tid() >> 5) - 4; }  // (4 CW + the warp in its warpgroup)
    KILN_DEVICE static float4 *split_slot(const kiln_attn_params &p, int64_t slot) {
        return reinterpret_cast<float4 *>(p.split_work + slot * KILN_ATTN_SPLIT_SLOT_FLOATS(BM, D)) +
               (split_tid() - 128);
    }
    KILN_DEVICE static void split_store(const kiln_attn_params &p, const float (&o)[NO / 2], const Rows &r, int role) {
        constexpr int NT = 128 * CW;
        float4 *slot = split_slot(p, 2 * (int64_t)blockIdx.x + (role == 2));
#pragma unroll
        for (int i = 0; i < NO / 8; ++i) __stcg(slot + i * NT, make_float4(o[4 * i], o[4 * i + 1], o[4 * i + 2], o[4 * i + 3]));
        __stcg(slot + (NO / 8) * NT, make_float4(r.m[0], r.m[1], r.l[0], r.l[1]));
        if (role != 1) return;  // (role 2: read back by the thread that wrote it)
        __threadfence();
        __syncwarp();
        if ((split_tid() & 31) == 0)
            sm90::st_release_gpu(p.split_flags + (int64_t)blockIdx.x * KILN_ATTN_SPLIT_WARPS + split_warp(), 1);
    }
    // SPLIT, after the consumers' item loop: where the CTA's last piece (split_plan) is a unit's last tiles, the unit
    // (query block m0 of head h of sequence b: non-causal, fixed lengths, one block a unit) is summed from its two
    // partials, once the previous CTA's flag for the warp is up, on the larger of the two row maxima (O's
    // accumulators, P's row sums with PSUM among them and the lanes' row sums are all linear in P, so each thread
    // merges its own values), and stored by the epilogue.
    KILN_DEVICE static void split_finish(const kiln_attn_params &p, const kiln_tma_desc *omap) {
        constexpr int NT = 128 * CW;
        const uint32_t plan = lds_base() + OFF_PLAN;
        const int n = (int)sm90::lds_v4_u32(plan).z;
        if (n == 0) return;
        const uint4 pc = sm90::lds_v4_u32(plan + 16 * n);  // the last piece: {unit, kt0, pn, role}
        if (pc.w != 2) return;
        // the unit's block (kiln_attn_abi.h's order: sections of work_heads (batch, head) pairs, block x of each)
        const int u = (int)pc.x, nblk = (p.seqlen_q + BM - 1) / BM, hb_all = p.batch * p.heads_q;
        const int sec = p.work_heads, s0 = u / (sec * nblk) * sec, nh = min(sec, hb_all - s0), rr = u - s0 * nblk;
        const int hb = s0 + rr % nh, b = hb / p.heads_q, h = hb % p.heads_q, m0 = rr / nh * BM;
        const int warp = split_warp();
        Rows r;
        const int64_t di = attn_descale_index(p, b, h);
        r.sl2 = attn_sl2<true>(p, di);
        r.vd = attn_descale<true>(p.v_descale, di);
        r.wr0 = m0 + 16 * warp;  // (64 cw + 16 w)
        const int32_t *flag = p.split_flags + ((int64_t)blockIdx.x - 1) * KILN_ATTN_SPLIT_WARPS + warp;
        while (sm90::ld_acquire_gpu(flag) == 0) __nanosleep(128);
        const float4 *mine = split_slot(p, 2 * (int64_t)blockIdx.x + 1), *prev = split_slot(p, 2 * (int64_t)blockIdx.x - 2);
        const float4 ma = __ldcg(mine + (NO / 8) * NT), mb = __ldcg(prev + (NO / 8) * NT);
        const float am[2] = {ma.x, ma.y}, al[2] = {ma.z, ma.w}, bm[2] = {mb.x, mb.y}, bl[2] = {mb.z, mb.w};
        float fa[2], fb[2];
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            const float mx = fmaxf(am[hh], bm[hh]);  // (-inf where neither piece saw a key of the row)
            fa[hh] = am[hh] == -INFINITY ? 0.f : fast_exp2((am[hh] - mx) * r.sl2);
            fb[hh] = bm[hh] == -INFINITY ? 0.f : fast_exp2((bm[hh] - mx) * r.sl2);
            r.m[hh] = mx;
            r.l[hh] = al[hh] * fa[hh] + bl[hh] * fb[hh];
        }
        float o[NO / 2];
#pragma unroll
        for (int i = 0; i < NO / 8; ++i) {  // group i: elements 4 i .. 4 i + 3, rows g, g, g + 8, g + 8
            const float4 x = __ldcg(mine + i * NT), y = __ldcg(prev + i * NT);
            o[4 * i] = fmaf(y.x, fb[0], x.x * fa[0]);
            o[4 * i + 1] = fmaf(y.y, fb[0], x.y * fa[0]);
            o[4 * i + 2] = fmaf(y.z, fb[1], x.z * fa[1]);
            o[4 * i + 3] = fmaf(y.w, fb[1], x.w * fa[1]);
        }
        epilogue(p, omap, o, r, 0, b, h);
    }

    // Lane q of a quad holds a[k] = word k of lane k's row... as a 4 x 4 matrix M[lane][k] over the quad; after the
    // transpose a[k] = M[k][q]: two rounds of exchanges with the lane 1 and then 2 apart, each swapping the two words
    // whose index differs from the lane's own in that bit.
    KILN_DEVICE static void quad_transpose(uint32_t (&a)[4], int q4) {
#pragma unroll
        for (int m = 1; m <= 2; m <<= 1)
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                if (k & m) continue;
                const bool hi = (q4 & m) != 0;
                const uint32_t got = __shfl_xor_sync(0xffffffffu, hi ? a[k] : a[k | m], m);
                if (hi)
                    a[k] = got;
                else
                    a[k | m] = got;
            }
    }

    // O's columns pass * DV .. + DV of the warp's rows (and, on the first pass, the lse). A quad holds 16 bytes of
    // each of its row's 8-column groups, 4 bytes a lane; where O's rows are 16-byte aligned (every layout
    // kiln.attention makes) a transpose over the quad gives each lane one whole group, so that a warp stores 64
    // contiguous bytes of 8 rows at a time instead of 16 (the 4-byte stores kept the consumers ~4000 clocks an item
    // at head dim 128; H200 harness, tuning/probes/attn_items_run.sh).
    // Row g + 8 hh's sum of P (O's divisor) and the sum its lse takes. PSUM: every lane's columns D + 2 q4 (+ 1) hold
    // the whole row sum of the rounded P (e4m3 or f16); with e4m3, r.l holds what the rounding took on masked tiles
    // (for the lse), with f16 nothing.
    KILN_DEVICE static void row_sums(const float (&o)[NO / 2], const Rows &r, int hh, float &l, float &l_lse) {
        l = PSUM ? o[DV / 2 + 2 * hh] : quad_sum(r.l[hh]);
        l_lse = PSUM ? l + quad_sum(r.l[hh]) : l;
    }

    KILN_DEVICE static void epilogue(const kiln_attn_params &p, const kiln_tma_desc *omap, const float (&o)[NO / 2],
                                     const Rows &r, int pass, int b, int h) {
        const int lane = thread_x() & 31, g = lane >> 2, q4 = lane & 3;
        const AttnOut<TO> out(p, b, h, r.vd, r.sl2);
        if constexpr (OSTAGE) {
            if (p.o_map && !p.cu_seqlens_q) {  // (kernel parameters only: uniform over the CTA)
                epilogue_tma(p, omap, o, r, out, pass, b, h);
                return;
            }
        }
        const bool wide = ((reinterpret_cast<uintptr_t>(out.o) | (uintptr_t)p.o_stride_s * sizeof(TO)) & 15) == 0;
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float l, l_lse;
            row_sums(o, r, hh, l, l_lse);
            const int row = r.wr0 + g + 8 * hh;
            const bool live = row < out.sq.len_q;  // (the quad's four lanes alike)
            const float inv = l > 0.f ? out.vd / l : 0.f;
            TO *orow = out.o + (int64_t)row * p.o_stride_s + pass * DV;
            if (wide) {  // (uniform: the whole warp shuffles)
#pragma unroll
                for (int blk = 0; blk < DB / 4; ++blk) {
                    uint32_t a[4];  // accumulator columns 8 t + 2 q4 (+ 1), t = 4 blk + k
#pragma unroll
                    for (int k = 0; k < 4; ++k)
                        a[k] = PackOut<TO>::pair(o[4 * (4 * blk + k) + 2 * hh] * inv,
                                                 o[4 * (4 * blk + k) + 2 * hh + 1] * inv);
                    quad_transpose(a, q4);  // a: columns 8 (4 blk + q4) .. + 7
                    if (live)
                        *reinterpret_cast<uint4 *>(orow + 8 * (4 * blk + q4)) = make_uint4(a[0], a[1], a[2], a[3]);
                }
            } else if (live) {
#pragma unroll
                for (int t = 0; t < DB; ++t)  // accumulator columns 8t + 2 q4 (+ 1)
                    *reinterpret_cast<uint32_t *>(orow + 8 * t + 2 * q4) =
                        PackOut<TO>::pair(o[4 * t + 2 * hh] * inv, o[4 * t + 2 * hh + 1] * inv);
            }
            if (live && p.lse && q4 == 0 && pass == 0) out.store_lse(p, row, r.m[hh], l_lse);
        }
    }

    // OSTAGE with the o map, fixed lengths: the warp writes its 16 rows into its staging panels with stmatrix (two
    // column blocks of rows g and g + 8 an instruction) and lane 0 stores them as DV / 64 boxes of the o map; rows past
    // the sequence fall outside the map and are not written. The warp waits for its previous stores to have read the
    // panels before it writes them again (an item lies between: they have long finished by then).
    KILN_DEVICE static void epilogue_tma(const kiln_attn_params &p, const kiln_tma_desc *omap, const float (&o)[NO / 2],
                                         const Rows &r, const AttnOut<TO> &out, int pass, int b, int h) {
        const int lane = thread_x() & 31, g = lane >> 2, q4 = lane & 3;
        float l_lse[2], inv[2];
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float l;
            row_sums(o, r, hh, l, l_lse[hh]);
            inv[hh] = l > 0.f ? out.vd / l : 0.f;
        }
        // (the panels' address from the thread's index and the base: values kept live through the key loop for it
        // made ptxas spill there)
        const uint32_t buf = lds_base() + OFF_OST + ((thread_x() >> 5) - 4) * OST_WARP;
        // matrix x of an stmatrix: rows 8 (x % 2) + lane % 8, column block t + x / 2 (swizzled in its panel)
        const int x = lane >> 3, row = (lane & 7) + 8 * (x & 1);
#pragma unroll
        for (int q = 0; q < OST_ROUNDS; ++q) {  // columns 64 OST_PANELS q .. + 64 OST_PANELS
            if (lane == 0) sm90::bulk_wait_read<0>();  // the panels' previous stores have read them
            __syncwarp();
#pragma unroll
            for (int t = 8 * OST_PANELS * q; t < 8 * OST_PANELS * (q + 1); t += 2)
                sm90::stmatrix_x4(buf + (t / 8 - OST_PANELS * q) * OST_PANEL + row * 128 +
                                      ((((t % 8) + (x >> 1)) ^ (lane & 7)) << 4),
                                  PackOut<TO>::pair(o[4 * t] * inv[0], o[4 * t + 1] * inv[0]),
                                  PackOut<TO>::pair(o[4 * t + 2] * inv[1], o[4 * t + 3] * inv[1]),
                                  PackOut<TO>::pair(o[4 * t + 4] * inv[0], o[4 * t + 5] * inv[0]),
                                  PackOut<TO>::pair(o[4 * t + 6] * inv[1], o[4 * t + 7] * inv[1]));
            sm90::fence_proxy_async_smem();  // the rows' generic writes before the TMA store reads them
            __syncwarp();
            if (lane == 0) {
#pragma unroll
                for (int pnl = 0; pnl < OST_PANELS; ++pnl)
                    sm90::tma_store_4d(omap, buf + pnl * OST_PANEL, pass * DV + 64 * (OST_PANELS * q + pnl), h, r.wr0,
                                       b);
                sm90::bulk_commit();
            }
        }
        if (p.lse && q4 == 0 && pass == 0) {
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                const int row = r.wr0 + g + 8 * hh;
                if (row < out.sq.len_q) out.store_lse(p, row, r.m[hh], l_lse[hh]);
            }
        }
    }
};

template <class C> KILN_DEVICE void attn_wgmma(const kiln_attn_params &p, const kiln_attn_tma_params &maps) {
    extern __shared__ __align__(128) uint8_t kiln_lds[];
    // The swizzled tiles need a 1024-byte aligned base.
    uint8_t *base = kiln_lds + ((1024 - (smem_addr(kiln_lds) & 1023)) & 1023);
    AttnWgmma<C>::run(p, maps, base);
}

}  // namespace kiln

namespace kiln {
// kiln_attn_pack_v's V^T packer (the second kernel of a vpre kernel's code object; kiln_attn_abi.h,
// kiln_attn_pack_params): one CTA of 256 threads a (64-key block, kv head, sequence), V^T's 64 x D block built in
// shared memory as 32-bit words of two keys, [d][key pair], a 128-byte row of 32 words per d.
// - Each task reads 16 fp8 bytes (16 d) of two adjacent keys, widens both and pairs them up by d with byte permutes:
//   16 words, each stored whole. The two lanes of a task pair read the two 16-byte halves of the same 32-byte
//   sectors, so that a warp's loads use every sector they touch; for fixed (j, t) a warp's stores then cover rows d
//   and d + 16, whose words sit in different bank halves through an XOR of 16 on the pair index (rows of odd d / 16).
// - Each task then writes 8 keys (16 bytes) of a V^T row, read as one aligned 16-byte word group: the 8 lanes of a
//   quarter warp read one whole 128-byte row (no bank met twice) and write 128 contiguous bytes.
// Against a [key][D] tile of 16-bit elements (16 two-byte stores and 8 two-byte loads per 16 bytes) this issues a
// quarter of the shared-memory instructions. Keys past a sequence's length up to vt_keys are written as 0 (the kernels
// multiply them by P = 0, and 0 * 0 stays 0 where stale bytes could hold an Inf or a NaN).
template <class T8, int D> KILN_DEVICE void attn_pack_vt(const kiln_attn_pack_params &p) {
    static_assert(D == 64 || D == 128 || D == 256, "head dim 64, 128 or 256");
    constexpr int KB = 64, KP = KB / 2, C16 = D / 16;  // keys a block, key pairs, 16-byte chunks of a V row
    __shared__ __align__(16) uint32_t tile[D * KP];
    const int kb = (int)blockIdx.x * KB, h = (int)blockIdx.y, b = (int)blockIdx.z;
    const uint8_t *v = static_cast<const uint8_t *>(p.v);
    const int64_t base = p.cu_seqlens_k ? (int64_t)p.cu_seqlens_k[b] * p.v_stride_s : (int64_t)b * p.v_stride_b;
    const int len = min(p.cu_seqlens_k ? p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b] : p.seqlen_k, p.seqlen_k);
    // task i: chunk c = 2 (i / 64) + i % 2, key pair kp = (i / 2) % 32 (keys kb + 2 kp, + 1)
    for (int i = (int)threadIdx.x; i < C16 * KP; i += (int)blockDim.x) {
        const int c = 2 * (i / (2 * KP)) + (i & 1), kp = (i >> 1) % KP, r = kb + 2 * kp;
        const uint8_t *src = v + base + (int64_t)h * p.v_stride_h + 16 * c + (int64_t)r * p.v_stride_s;
        uint4 x0 = make_uint4(0u, 0u, 0u, 0u), x1 = x0;
        if (r < len) x0 = *reinterpret_cast<const uint4 *>(src);
        if (r + 1 < len) x1 = *reinterpret_cast<const uint4 *>(src + p.v_stride_s);
        const uint32_t w0[4] = {x0.x, x0.y, x0.z, x0.w}, w1[4] = {x1.x, x1.y, x1.z, x1.w};
        uint32_t *row = tile + 16 * c * KP + (kp ^ ((c & 1) << 4));  // d = 16 c: (d / 16) % 2 = c % 2
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            uint32_t w[4];  // {key r, key r + 1} at d = 4j .. 4j + 3
            PairWiden16<T8>::run(w0[j], w1[j], w);
#pragma unroll
            for (int e = 0; e < 4; ++e) row[(4 * j + e) * KP] = w[e];
        }
    }
    __syncthreads();
    uint16_t *dst = p.vt + ((int64_t)b * p.heads_kv + h) * D * p.vt_keys;
    for (int i = (int)threadIdx.x; i < D * (KB / 8); i += (int)blockDim.x) {
        const int d = i / (KB / 8), s = i % (KB / 8);  // keys kb + 8 s .. + 7: pairs 4 s .. + 3
        if (kb + 8 * s >= p.vt_keys)
            continue;  // vt_keys is a multiple of 8: a group of 8 keys is whole or out
        const uint4 w = *reinterpret_cast<const uint4 *>(tile + d * KP + 4 * (s ^ (((d >> 4) & 1) << 2)));
        *reinterpret_cast<uint4 *>(dst + (int64_t)d * p.vt_keys + kb + 8 * s) = w;
    }
}
}  // namespace kiln

#define KILN_ATTN_PACK_VT_KERNEL(NAME, CFG)                                                                           \
    KILN_KERNEL void __launch_bounds__(256) NAME(const __grid_constant__ kiln_attn_pack_params P) {                  \
        kiln::attn_pack_vt<typename CFG::T8, CFG::D>(P);                                                              \
    }

#define KILN_ATTN_WGMMA_KERNEL(NAME, CFG)                                                                             \
    KILN_KERNEL void __launch_bounds__(kiln::AttnWgmma<CFG>::THREADS, 1)                                            \
        NAME(const __grid_constant__ kiln_attn_tma_params P) {                                                        \
        kiln::attn_wgmma<CFG>(P.p, P);                                                                                \
    }

#endif  // KILN_ATTN_WGMMA_H
