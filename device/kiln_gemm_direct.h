// The wgmma family's direct-load decode kernels (sm_90a; WSGR 1, generator: wgmma.direct): f16/bf16 activations x
// prepacked fp8 weights for a few tokens (MT0 <= 32), with no TMA, no shared-memory ring and no producer.
//
// At decode sizes the weights are read once and every byte counts, but a CTA that streams them through a TMA ring
// and one consumer warpgroup is bound by its own latency (ring fill, the widening and mma chain of each stage, the
// barriers), not by the bytes: at 16-24 MB of weights the ring kernels sit near 45 % of HBM bandwidth. Here every
// warp of the CTA loads its own share of the tile's K-tiles straight into registers (16-byte loads that skip L1,
// PGR K-tiles a batch, the next batch in flight while one is computed), widens them there and issues mma.sync m16n8k16: weights as A, 16 rows a block,
// activations as B, 8 tokens a block. With 4 to 16 warps a CTA and one CTA per 16-64 weight rows, the loads of the
// whole matrix are in flight at once, and nothing waits on a barrier until the sums are added up.
//
// The fragments need no shuffle. Lane (g, q) loads 16 bytes of weight row g (and g + 8) at 16-K group 4s + q of a
// 64-K step s: in the prepack order (kiln_prepack_b) its bytes 4j..4j+3 hold K offsets 2j, 2j+1, 2j+8, 2j+9 of that
// group. mma j (j = 0..3) of the step takes bytes 4j..4j+3 as the lane's A registers (row g, k 2q and 2q + 8 of a
// "virtual" 16-K group whose K slot 2q + h is group 4s + q's offset 2j + h), so its B registers must hold the
// activations at those K: lane (g, q) loads the 16 activations of token g in group 4s + q (32 bytes) and gives
// mma j the pairs j and 4 + j. Every row and token sees the same virtual K order, so the sum is the product.
//
// The warps split K: warp w takes K-tiles w, w + WARPS, ... of the CTA's K range (neighbouring warps read
// neighbouring 128-byte pieces of the same rows), and the CTA adds their sums in shared memory, in warp order
// (deterministic), before the shared epilogue (kiln_epilogue.h) or, with GSU > 1, the split-K workspace.
// Per-group weight scales (SCALE_BLOCK; DU is the group, 128): each K-tile's sum is taken alone and added times
// its rows' scales in f32.
#ifndef KILN_GEMM_DIRECT_H
#define KILN_GEMM_DIRECT_H

#include "kiln_epilogue.h"
#include "kiln_mma_ptx.h"
#include "kiln_schedule.h"
#include "kiln_sm90.h"

namespace kiln {

template <class C> struct DirectGemm {
    using TA = typename C::TA;
    using TB = typename C::TB;
    using TD = typename C::TD;
    using Sched = Schedule<C>;
    using Up = Upcast<TB, typename C::T16>;
    using Op = Mma<typename MmaTagOf<typename C::T16>::type>;
    static constexpr int WARPS = 4 * C::WG0 * C::WG1;  // wg counts warpgroups, as in the other wgmma kernels
    static constexpr int THREADS = 32 * WARPS;
    static constexpr int TG = C::MT0 / 8;     // 8-token blocks (mma N)
    static constexpr int RB = C::MT1 / 16;    // 16-row blocks of weights (mma M)
    static constexpr int STEPS = C::DU / 64;  // 64-K steps of a K-tile (lane q: 16-K group 4 * step + q)
    static constexpr int KT = C::PGR;         // K-tiles a warp loads before it computes them
    static constexpr int SUM_FLOATS = RB * TG * 4 * 32;  // one warp's sums, [rb][tg][e][lane]
    static constexpr int LDS_BYTES = WARPS * SUM_FLOATS * 4;
    static constexpr bool WS_SPLIT = C::GSU > 1;
    static_assert(C::SWAP && C::SYNC && C::B_PACKED && sizeof(TB) == 1 && sizeof(TA) == 2, "prepacked fp8 weights");
    static_assert(C::WG0 == 1 && !C::GROUPED && C::MC == 0 && C::PK == 0 && C::SU == 0 && !C::BLOCK_SCALES,
                  "one CTA per tile, no clusters, no stagger (generator: wgmma._direct)");
    static_assert(C::MT0 % 8 == 0 && C::MT0 <= 32 && C::MT1 % 16 == 0 && C::DU % 64 == 0 && KT >= 1,
                  "8..32 tokens, 16-row blocks, 64-K steps");

    KILN_DEVICE static uint4 load_weights(const uint8_t *p) {  // read once: do not keep it in L1
        uint4 v;
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
        return v;
    }
    KILN_DEVICE static uint4 load_activations(const TA *p) {  // every CTA reads them: L1 may keep them
        uint4 v;
        asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
        return v;
    }
    KILN_DEVICE static uint32_t word(const uint4 &v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

    // The 16 activations of one token at K k0 .. k0 + 15 (x[0]: 0-7, x[1]: 8-15); those at or past k read as zero
    // (the weights there are zero too, but the bytes past A's row may be anything, NaN included).
    KILN_DEVICE static void group_of(uint4 (&x)[2], const TA *src, bool ok, int k0, int k) {
        if (ok && k0 + 16 <= k) {
            x[0] = load_activations(src);
            x[1] = load_activations(src + 8);
            return;
        }
        uint16_t h[16];
        const uint16_t *s = reinterpret_cast<const uint16_t *>(src);
#pragma unroll
        for (int e = 0; e < 16; ++e) h[e] = ok && k0 + e < k ? s[e] : (uint16_t)0;
        x[0] = make_uint4(h[0] | (uint32_t)h[1] << 16, h[2] | (uint32_t)h[3] << 16, h[4] | (uint32_t)h[5] << 16,
                          h[6] | (uint32_t)h[7] << 16);
        x[1] = make_uint4(h[8] | (uint32_t)h[9] << 16, h[10] | (uint32_t)h[11] << 16, h[12] | (uint32_t)h[13] << 16,
                          h[14] | (uint32_t)h[15] << 16);
    }

    struct Operands {
        const uint8_t *w[RB][2];  // this lane's bytes of rows g and g + 8 of each 16-row block (group q)
        const TA *x[TG];          // token g of each 8-token block (group q)
        bool token[TG];
        int blk[RB][2];           // SCALE_BLOCK: each row's index along scale_b's N
    };

    KILN_DEVICE static void operands(const kiln_gemm_params &p, const WorkTile &T, int lane, Operands &o) {
        const int g = lane >> 2, q = lane & 3;
        const uint8_t *b = (const uint8_t *)p.b + (int64_t)T.group * p.stride_b;
        const TA *a = (const TA *)p.a + (int64_t)T.batch * p.stride_a;
#pragma unroll
        for (int rb = 0; rb < RB; ++rb)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = min(T.n0 + rb * 16 + g + 8 * h, p.n - 1);  // rows past N are read, never stored
                o.w[rb][h] = b + (int64_t)row * p.ldb + q * 16;
                o.blk[rb][h] = p.sb_block_n > 0 ? row / p.sb_block_n : 0;
            }
#pragma unroll
        for (int t = 0; t < TG; ++t) {
            const int m = T.m0 + t * 8 + g;
            o.token[t] = m < p.m;
            o.x[t] = a + (int64_t)min(m, p.m - 1) * p.lda + q * 16;
        }
    }

    // One batch: KT K-tiles of this warp, loaded into registers (weights, activations and, with per-group scales,
    // their rows' scales).
    struct Batch {
        uint4 w[KT][STEPS][RB][2], x[KT][STEPS][TG][2];
        float sc[KT][RB][2];
    };

    // The loads of the batch whose first K-tile is i0 (K-tiles i0, i0 + WARPS, ...; those past the tile's read
    // nothing and hold zeros).
    template <bool GS>
    KILN_DEVICE static void load_batch(const kiln_gemm_params &p, const WorkTile &T, const Operands &o, Batch &b,
                                       int i0, int q, int kp) {
#pragma unroll
        for (int j = 0; j < KT; ++j) {
            const int i = i0 + j * WARPS;
            const bool live = i < T.iters;
            const int k_base = (live ? Sched::k_tile(T, i) : 0) * C::DU;
#pragma unroll
            for (int s = 0; s < STEPS; ++s) {
                const int k0 = k_base + s * 64 + q * 16;
                const bool ok = live && k0 < kp;
#pragma unroll
                for (int rb = 0; rb < RB; ++rb)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        b.w[j][s][rb][h] = ok ? load_weights(o.w[rb][h] + k0 - q * 16) : make_uint4(0, 0, 0, 0);
#pragma unroll
                for (int t = 0; t < TG; ++t) group_of(b.x[j][s][t], o.x[t] + k0 - q * 16, ok && o.token[t], k0, p.k);
            }
            if constexpr (GS) {
                const float *col = p.scale_b + (int64_t)(k_base / C::DU) * p.sb_stride_k;
#pragma unroll
                for (int rb = 0; rb < RB; ++rb)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        b.sc[j][rb][h] = live ? __ldg(col + (int64_t)o.blk[rb][h] * p.sb_stride_n) : 0.f;
            }
        }
    }

    // The batch's mma: widen each 64-K step's weights, four m16n8k16 a step per (16-row, 8-token) block.
    template <bool GS>
    KILN_DEVICE static void compute_batch(const Batch &b, float (&acc)[RB][TG][4]) {
#pragma unroll
        for (int j = 0; j < KT; ++j) {
            float part[RB][TG][4];
            float(&dst)[RB][TG][4] = GS ? part : acc;
            if constexpr (GS) zero_fragments(part);
#pragma unroll
            for (int s = 0; s < STEPS; ++s)
#pragma unroll
                for (int mj = 0; mj < 4; ++mj)
#pragma unroll
                    for (int rb = 0; rb < RB; ++rb) {
                        const uint32_t lo = word(b.w[j][s][rb][0], mj), hi = word(b.w[j][s][rb][1], mj);
                        const uint32_t a[4] = {Up::pair_unit(lo, 0), Up::pair_unit(hi, 0), Up::pair_unit(lo, 1),
                                               Up::pair_unit(hi, 1)};
#pragma unroll
                        for (int t = 0; t < TG; ++t) {
                            const uint32_t x[2] = {word(b.x[j][s][t][0], mj), word(b.x[j][s][t][1], mj)};
                            Op::run(dst[rb][t], a, x);
                        }
                    }
            if constexpr (GS) {
#pragma unroll
                for (int rb = 0; rb < RB; ++rb)
#pragma unroll
                    for (int t = 0; t < TG; ++t)
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            acc[rb][t][e] = fmaf(part[rb][t][e], b.sc[j][rb][e >> 1], acc[rb][t][e]);
            }
        }
    }

    // This warp's K-tiles i = warp, warp + WARPS, ... of the tile, KT at a time, in two register buffers: the next
    // batch's loads are issued before this one's mma, so that each warp always has a batch in flight.
    template <bool GS>
    KILN_DEVICE static void mainloop(const kiln_gemm_params &p, const WorkTile &T, const Operands &o,
                                     float (&acc)[RB][TG][4], int warp, int lane) {
        const int q = lane & 3;
        const int kp = Sched::k_extent(p);
        constexpr int STRIDE = WARPS * KT;  // K-tiles of the CTA a batch of every warp covers
        zero_fragments(acc);
        Batch b0, b1;
        load_batch<GS>(p, T, o, b0, warp, q, kp);
        for (int i0 = warp; i0 < T.iters; i0 += 2 * STRIDE) {
            load_batch<GS>(p, T, o, b1, i0 + STRIDE, q, kp);
            compute_batch<GS>(b0, acc);
            if (i0 + STRIDE >= T.iters) break;
            load_batch<GS>(p, T, o, b0, i0 + 2 * STRIDE, q, kp);
            compute_batch<GS>(b1, acc);
        }
    }

    // The warps' sums added in warp order, then two neighbouring columns (weight rows) of one token a thread:
    // accumulator e of lane (g, q) in blocks (rb, t) is row rb * 16 + g + 8 (e >> 1), token t * 8 + 2q + (e & 1).
    KILN_DEVICE static void epilogue(const kiln_gemm_params &p, const WorkTile &T, const float (&acc)[RB][TG][4],
                                     float *sums, int warp, int lane, int tid) {
#pragma unroll
        for (int rb = 0; rb < RB; ++rb)
#pragma unroll
            for (int t = 0; t < TG; ++t)
#pragma unroll
                for (int e = 0; e < 4; ++e) sums[warp * SUM_FLOATS + ((rb * TG + t) * 4 + e) * 32 + lane] = acc[rb][t][e];
        __syncthreads();
        const EpilogueScales sc = epilogue_scales(p);
        constexpr int HALF = C::MT1 / 2;
        for (int o = tid; o < C::MT0 * HALF; o += THREADS) {
            const int tok = o / HALF, c = (o % HALF) * 2;
            const int row = T.m0 + tok, col = T.n0 + c;
            if (row >= p.m || col >= p.n) continue;
            float v[2];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = (c + h) % 16, t = tok / 8, tt = tok % 8;
                const int at = (((c + h) / 16 * TG + t) * 4 + (r / 8) * 2 + (tt & 1)) * 32 + (r % 8) * 4 + tt / 2;
                float s = 0.f;
#pragma unroll
                for (int wp = 0; wp < WARPS; ++wp) s += sums[wp * SUM_FLOATS + at];
                v[h] = s * Up::UNIT;
            }
            if constexpr (WS_SPLIT) {
                float *partial = splitk_slice(p, T.batch, T.split, C::GSU) + (int64_t)row * p.n + col;
                partial[0] = v[0];
                if (col + 1 < p.n) partial[1] = v[1];
            } else {
                epilogue_store2<TD>(p, sc, T.batch, row, col, v[0], v[1]);
            }
        }
    }

    KILN_DEVICE static void run(const kiln_tma_params &P, uint8_t *smem) {
        // OVERLAP: launched while the stream's previous kernel may still run (run.c, launch_overlapped); nothing
        // here reads global memory before it is done.
        if constexpr (C::OVERLAP) {
            sm90::grid_dependency_wait();
            sm90::launch_dependents();
        }
        if (block_x() >= P.num_tiles) return;  // (never with the runtime's grid)
        const int tid = thread_x(), warp = tid >> 5, lane = tid & 31;
        const kiln_gemm_params &p = P.p;
        const WorkTile T = Sched::of_index(p, block_x());
        Operands o;
        operands(p, T, lane, o);
        float acc[RB][TG][4];
        if (weight_group_scales<C::DU>(p))
            mainloop<true>(p, T, o, acc, warp, lane);
        else
            mainloop<false>(p, T, o, acc, warp, lane);
        epilogue(p, T, acc, reinterpret_cast<float *>(smem), warp, lane, tid);
    }
};

}  // namespace kiln

#endif  // KILN_GEMM_DIRECT_H
