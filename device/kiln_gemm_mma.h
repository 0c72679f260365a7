// The mma family's GEMM: a workgroup computes an MT0 x MT1 tile of D over K in DepthU steps.
//   global --cp.async--> LDS ring of PGR+1 stages --ldmatrix--> registers --mma.sync--> f32 accumulators
// Warps tile the macro tile WG0 x WG1; each warp owns (MT0/WG0) x (MT1/WG1) as 16 x 8 mma blocks.
// fp8 operands either feed an fp8 mma (m16n8k32) or are widened to f16/bf16 in registers (m16n8k16). The widened
// path reads 4 consecutive bytes of K per lane and feeds them to the k16 slots {2q,2q+1} and {2q+8,2q+9}; the other
// operand does the same (both upcast), or B was prepacked so that those bytes hold exactly those K indices.
// The generated kernel file defines a config struct C (see templates/kernel_mma.hip.j2) and calls gemm_mma<C>.
#ifndef KILN_GEMM_MMA_H
#define KILN_GEMM_MMA_H

#include "kiln_epilogue.h"
#include "kiln_mma_ptx.h"
#include "kiln_schedule.h"

namespace kiln {

// Largest power of two <= 8 that divides the 16-byte chunks of a row: the XOR swizzle's period.
constexpr int swizzle_period(int row_bytes) {
    return (row_bytes / 16) % 8 == 0 ? 8 : (row_bytes / 16) % 4 == 0 ? 4 : (row_bytes / 16) % 2 == 0 ? 2 : 1;
}

// A tile in LDS: ROWS rows of DATA bytes, each row padded to PITCH bytes. With SWIZZLE the 16-byte chunk c of row r
// is stored at chunk c ^ ((r / LINE_ROWS) mod PERIOD), where LINE_ROWS rows share one 128-byte bank line: the 8 rows
// one ldmatrix reads at the same logical chunk then cover 8 distinct 16-byte bank groups.
template <int ROWS, int DATA, int PITCH, bool SWIZZLE> struct LdsTile {
    static constexpr int BYTES = ROWS * PITCH;
    static constexpr int PERIOD = SWIZZLE ? swizzle_period(DATA) : 1;
    static constexpr int LINE_ROWS = DATA >= 128 ? 1 : 128 / DATA;
    KILN_DEVICE static int offset(int row, int byte) {
        return row * PITCH + ((((byte >> 4) ^ ((row / LINE_ROWS) & (PERIOD - 1)))) << 4) + (byte & 15);
    }
};

// Copy a ROWS x DATA-byte window of a row-major global matrix (ld_bytes apart) into an LdsTile. Rows at or past
// row_limit and bytes at or past col_limit read as zero. VW bytes per access: cp.async for 4/8/16, plain loads
// below (any alignment).
template <class Tile, int ROWS, int DATA, int VW, int THREADS>
KILN_DEVICE void load_tile(uint8_t *lds, const uint8_t *g, int64_t ld_bytes, int row0, int row_limit, int64_t col0,
                           int64_t col_limit, int tid) {
    constexpr int PER_ROW = DATA / VW;
    constexpr int TOTAL = ROWS * PER_ROW;
    // Asynchronous copies unroll fully; synchronous narrow loads unroll a little, or their values pile up in
    // registers next to the accumulators.
    constexpr int UNROLL = VW >= 4 ? (TOTAL + THREADS - 1) / THREADS : 2;
#pragma unroll UNROLL
    for (int it = 0; it < (TOTAL + THREADS - 1) / THREADS; ++it) {
        const int i = it * THREADS + tid;
        if (TOTAL % THREADS != 0 && i >= TOTAL) break;
        const int r = i / PER_ROW, byte = (i % PER_ROW) * VW;
        const int64_t col = col0 + byte;
        int valid = 0;
        if (row0 + r < row_limit && col < col_limit) valid = col_limit - col < VW ? (int)(col_limit - col) : VW;
        const uint8_t *src = valid ? g + (int64_t)(row0 + r) * ld_bytes + col : g;
        uint8_t *dst = lds + Tile::offset(r, byte);
        if constexpr (VW >= 4) {
            cp_async<VW>(dst, src, valid);
        } else {
#pragma unroll
            for (int j = 0; j < VW; ++j) dst[j] = j < valid ? src[j] : 0;
        }
    }
}

template <class C> struct MmaGemm {
    static constexpr int THREADS = 32 * C::WG0 * C::WG1;
    static constexpr int STAGES = C::PGR + 1;
    static constexpr int WTM = C::MT0 / C::WG0, WTN = C::MT1 / C::WG1;
    static constexpr int FM = WTM / 16, FN = WTN / 8;
    static constexpr int MIK = Mma<typename C::MmaOp>::K;
    static constexpr int KSTEPS = C::DU / MIK;
    static constexpr int EA = sizeof(typename C::TA), EB = sizeof(typename C::TB);
    using TileA = LdsTile<C::MT0, C::DU * EA, C::DU * EA + C::LPA, C::LXS != 0>;
    // B K-major: MT1 rows of K; B N-major (NN): DepthU rows of N.
    static constexpr int B_ROWS = C::B_KMAJOR ? C::MT1 : C::DU;
    static constexpr int B_DATA = C::B_KMAJOR ? C::DU * EB : C::MT1 * EB;
    using TileB = LdsTile<B_ROWS, B_DATA, B_DATA + C::LPB, C::LXS != 0>;
    static_assert(FN % 2 == 0, "B fragments load in pairs of 8-column blocks");
    static_assert(C::B_KMAJOR || (EB == 2 && !C::UPCAST_B), "N-major B needs a 16-bit B (ldmatrix.trans)");
    static_assert(C::DU % MIK == 0, "DepthU must be a multiple of the mma K");

    struct Frags {
        uint32_t a[FM][4];
        uint32_t b[FN][2];
    };

    KILN_DEVICE static void load_frags(Frags &f, const uint8_t *sa, const uint8_t *sb, int ks, int wm, int wn,
                                       int lane) {
        const int lrow = (lane & 7) + ((lane >> 3) & 1) * 8; // row of the 8x8 matrix this lane addresses
#pragma unroll
        for (int fm = 0; fm < FM; ++fm) {
            const int row = wm * WTM + fm * 16 + lrow;
            if constexpr (C::UPCAST_A) {
                uint32_t x[2];
                ldmatrix_x2(x, sa + TileA::offset(row, ks * MIK * EA));
                f.a[fm][0] = Upcast<typename C::TA, typename C::T16>::pair(x[0], 0);
                f.a[fm][1] = Upcast<typename C::TA, typename C::T16>::pair(x[1], 0);
                f.a[fm][2] = Upcast<typename C::TA, typename C::T16>::pair(x[0], 1);
                f.a[fm][3] = Upcast<typename C::TA, typename C::T16>::pair(x[1], 1);
            } else {
                ldmatrix_x4(f.a[fm], sa + TileA::offset(row, ks * MIK * EA + (lane >> 4) * 16));
            }
        }
#pragma unroll
        for (int fn = 0; fn < FN; fn += 2) {
            const int n0 = wn * WTN + fn * 8;
            if constexpr (!C::B_KMAJOR) {
                uint32_t r[4];
                ldmatrix_x4_trans(r, sb + TileB::offset(ks * 16 + lrow, (n0 + (lane >> 4) * 8) * EB));
                f.b[fn][0] = r[0], f.b[fn][1] = r[1], f.b[fn + 1][0] = r[2], f.b[fn + 1][1] = r[3];
            } else if constexpr (C::UPCAST_B) {
                uint32_t x[2];
                ldmatrix_x2(x, sb + TileB::offset(n0 + lrow, ks * MIK * EB));
                f.b[fn][0] = Upcast<typename C::TB, typename C::T16>::pair(x[0], 0);
                f.b[fn][1] = Upcast<typename C::TB, typename C::T16>::pair(x[0], 1);
                f.b[fn + 1][0] = Upcast<typename C::TB, typename C::T16>::pair(x[1], 0);
                f.b[fn + 1][1] = Upcast<typename C::TB, typename C::T16>::pair(x[1], 1);
            } else {
                uint32_t r[4];
                const int n = n0 + (lane & 7) + (lane >> 4) * 8;
                ldmatrix_x4(r, sb + TileB::offset(n, ks * MIK * EB + ((lane >> 3) & 1) * 16));
                f.b[fn][0] = r[0], f.b[fn][1] = r[1], f.b[fn + 1][0] = r[2], f.b[fn + 1][1] = r[3];
            }
        }
    }

    KILN_DEVICE static void mma(float (&acc)[FM][FN][4], const Frags &f) {
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
#pragma unroll
            for (int fn = 0; fn < FN; ++fn) Mma<typename C::MmaOp>::run(acc[fm][fn], f.a[fm], f.b[fn]);
    }

    // All K steps of one LDS stage. PLR=1 reads step s+1's fragments before step s's mma.
    KILN_DEVICE static void compute_stage(float (&acc)[FM][FN][4], const uint8_t *sa, const uint8_t *sb, int wm,
                                          int wn, int lane) {
        if constexpr (C::PLR) {
            Frags f[2];
            load_frags(f[0], sa, sb, 0, wm, wn, lane);
#pragma unroll
            for (int ks = 0; ks < KSTEPS; ++ks) {
                if (ks + 1 < KSTEPS) load_frags(f[(ks + 1) & 1], sa, sb, ks + 1, wm, wn, lane);
                mma(acc, f[ks & 1]);
            }
        } else {
#pragma unroll
            for (int ks = 0; ks < KSTEPS; ++ks) {
                Frags f;
                load_frags(f, sa, sb, ks, wm, wn, lane);
                mma(acc, f);
            }
        }
    }

    KILN_DEVICE static void run(const kiln_gemm_params &p, uint8_t *smem) {
        using Sched = Schedule<C>;
        const int tid = thread_x(), lane = tid & 31, warp = tid >> 5;
        const int wm = warp % C::WG0, wn = warp / C::WG0;
        // The tile, batch, split-K slice and K tiles of this workgroup (kiln_schedule.h); iters = 0 when K = 0.
        const WorkTile w = Sched::of_block(p);
        const int batch = w.batch, split = w.split, iters = w.iters;
        const int m0 = w.m0, n0 = w.n0;
        const int kb = Sched::k_extent(p);  // K extent of B's rows (prepacked: padded to 16)

        const uint8_t *ga = (const uint8_t *)p.a + (int64_t)batch * p.stride_a * EA;
        const uint8_t *gb = (const uint8_t *)p.b + (int64_t)batch * p.stride_b * EB;
        uint8_t *lds_a = smem;
        uint8_t *lds_b = smem + STAGES * TileA::BYTES;

        auto load_stage = [&](int stage, int i) {
            if (i < iters) {
                const int k0 = Sched::k_tile(w, i) * C::DU;
                load_tile<TileA, C::MT0, C::DU * EA, C::VWA, THREADS>(lds_a + stage * TileA::BYTES, ga, p.lda * EA, m0,
                                                                       p.m, (int64_t)k0 * EA, (int64_t)p.k * EA, tid);
                if constexpr (C::B_KMAJOR)
                    load_tile<TileB, B_ROWS, B_DATA, C::VWB, THREADS>(lds_b + stage * TileB::BYTES, gb, p.ldb * EB,
                                                                       n0, p.n, (int64_t)k0 * EB, (int64_t)kb * EB, tid);
                else
                    load_tile<TileB, B_ROWS, B_DATA, C::VWB, THREADS>(lds_b + stage * TileB::BYTES, gb, p.ldb * EB,
                                                                       k0, p.k, (int64_t)n0 * EB, (int64_t)p.n * EB, tid);
            }
            cp_async_commit();
        };

        float acc[FM][FN][4];
        zero_fragments(acc);

        if constexpr (STAGES == 1) {
            for (int i = 0; i < iters; ++i) {
                load_stage(0, i);
                cp_async_wait<0>();
                barrier();
                compute_stage(acc, lds_a, lds_b, wm, wn, lane);
                barrier();
            }
        } else {
#pragma unroll
            for (int s = 0; s < STAGES - 1; ++s) load_stage(s, s);
            for (int i = 0; i < iters; ++i) {
                cp_async_wait<STAGES - 2>();
                barrier();
                // The stage refilled here was computed in iteration i-1, which every warp has left (barrier above).
                load_stage((i + STAGES - 1) % STAGES, i + STAGES - 1);
                const int s = i % STAGES;
                compute_stage(acc, lds_a + s * TileA::BYTES, lds_b + s * TileB::BYTES, wm, wn, lane);
            }
        }
        cp_async_wait<0>();

        // Accumulator (fm, fn, e) sits at row g (+8 for e >= 2), column 2q (+1 for odd e) of its 16 x 8 block.
        const EpilogueScales sc = epilogue_scales(p);
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
#pragma unroll
            for (int fn = 0; fn < FN; ++fn)
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int row = m0 + wm * WTM + fm * 16 + (lane >> 2) + half * 8;
                    const int col = n0 + wn * WTN + fn * 8 + (lane & 3) * 2;
                    const float v0 = acc[fm][fn][2 * half], v1 = acc[fm][fn][2 * half + 1];
                    if (row >= p.m || col >= p.n) continue;
                    if constexpr (C::GSU > 1) {
                        float *partial = splitk_slice(p, batch, split, C::GSU) + (int64_t)row * p.n + col;
                        partial[0] = v0;
                        if (col + 1 < p.n) partial[1] = v1;
                    } else {
                        epilogue_store2<typename C::TD>(p, sc, batch, row, col, v0, v1);
                    }
                }
    }
};

template <class C> KILN_DEVICE void gemm_mma(const kiln_gemm_params &p) {
    extern __shared__ __align__(128) uint8_t kiln_lds[];
    MmaGemm<C>::run(p, kiln_lds);
}

}  // namespace kiln

#endif  // KILN_GEMM_MMA_H
