// The AMD GEMM both AMD families run (kiln_gemm_mfma.h, kiln_gemm_wmma.h supply the matrix instruction `Op`): a
// workgroup computes an MT0 x MT1 tile of D over K in DepthU steps, Tensile's way:
//   global --(PGR tiles ahead, in VGPRs)--> LDS (2 buffers, 1 with 1LDSBuffer) --local read--> operands --> Op --> f32
// Waves tile the macro tile WG0 x WG1; each wave owns (MT0/WG0) x (MT1/WG1) as Op::M x Op::N blocks. The structure
// follows MmaGemm (kiln_gemm_mma.h): the same scheduling (kiln_schedule.h: WorkGroupMapping, split-K, StaggerU) and
// epilogue.
//
// The op trait (see kiln_gemm_mfma.h) says which row a lane supplies (lane_row), where its K run starts (lane_k), how
// many K values it holds per instruction (KPL), which element of D each accumulator register is (acc_row, acc_col), and
// runs the instruction on 32-bit operand words. The generated kernel's Config gives types and parameters.
//
// Block-scaled fp8 (Config::BLOCK_SCALES, DepthU = 128 = the scale group): a K tile's scales travel with it (one
// float per thread read with the tile, written after it to LDS: MT0 row scales of A, MT1 column scales of B), and
// each K tile is summed alone into zeroed registers, then added to the accumulators times its row and column scales.
//
// Grouped (Config::GROUPED, MoE; kiln_schedule.h "groups"): workgroup x takes tile x of the walk over the groups' tiles
// (Schedule::of_group_index, from a fresh cursor) and exits at once when x is past the last group (the whole workgroup:
// every thread walks the same group_index). A's rows start at the group's row (batch: 0 contiguous, g masked), B is
// matrix g, and the group's scale and bias rows are taken by moving their pointers (group_params). Rows past the
// group's end are computed from what A holds there and not stored (WorkTile.m_end). k-grouped: A and B are one
// matrix each (Schedule::a_batch, b_matrix), the group's K tiles are its columns, D's batch is the group.
#ifndef KILN_AMD_GEMM_H
#define KILN_AMD_GEMM_H

#include "kiln_amd_lds.h"
#include "kiln_epilogue.h"
#include "kiln_schedule.h"

namespace kiln {

// Config::BLOCK_SCALES (block-scaled fp8, KILN_SCALE_BLOCK): absent in the other kernels' Configs, false there.
template <class C, class = void> struct BlockScaled { static constexpr bool value = false; };
template <class C> struct BlockScaled<C, decltype((void)C::BLOCK_SCALES)> {
    static constexpr bool value = C::BLOCK_SCALES;
};

// Config::GROUPED (grouped fp8, MoE): likewise.
template <class C, class = void> struct GroupedConfig { static constexpr bool value = false; };
template <class C> struct GroupedConfig<C, decltype((void)C::GROUPED)> { static constexpr bool value = C::GROUPED; };

template <class C, class Op> struct AmdGemm {
    using TA = typename C::TA;
    using TB = typename C::TB;
    using TOp = typename Op::TOp;  // what the instruction reads (fp8 operands of a 16-bit Op are widened to it)
    static constexpr int WAVE = Op::WAVE;
    static constexpr int THREADS = WAVE * C::WG0 * C::WG1;
    static constexpr int WTM = C::MT0 / C::WG0, WTN = C::MT1 / C::WG1;
    static constexpr int FM = WTM / Op::M, FN = WTN / Op::N;
    static constexpr int KSTEPS = C::DU / Op::K;
    static constexpr int EA = sizeof(TA), EB = sizeof(TB);
    static constexpr int WORDS = Op::KPL * sizeof(TOp) / 4;  // 32-bit words of one operand of one instruction
    // TransposeLDS: K-major operands stay unroll-major in LDS (1) or are stored tile-major (0). N-major B (NN) is
    // tile-major in LDS either way.
    static constexpr bool A_UM = C::TLDS != 0;
    static constexpr bool B_UM = C::TLDS != 0 && C::B_KMAJOR;
    using TileA = LdsTile<A_UM ? C::MT0 : C::DU, (A_UM ? C::DU : C::MT0) * EA, C::LPA, C::LBSPP, C::LXS != 0>;
    using TileB = LdsTile<B_UM ? C::MT1 : C::DU, (B_UM ? C::DU : C::MT1) * EB, C::LPB, C::LBSPP, C::LXS != 0>;
    // Global windows: A is [m][k]; B is [n][k] (TN, prepacked) or [k][n] (NN).
    using PlanA = ReadPlan<C::MT0, C::DU * EA, C::VWA, THREADS, WAVE, C::WSGR != 0>;
    using PlanB = ReadPlan<C::B_KMAJOR ? C::MT1 : C::DU, (C::B_KMAJOR ? C::DU : C::MT1) * EB, C::VWB, THREADS, WAVE,
                           C::WSGR != 0>;
    // PrefetchGlobalRead: tiles held in VGPRs ahead of the one computed; LDS buffers: 2, or 1 (no prefetch/1LDSBuffer).
    static constexpr int PGR = C::PGR;
    static constexpr int NBUF = (PGR == 0 || C::LDSB) ? 1 : 2;
    static constexpr int UNROLL = (PGR == 2 || NBUF == 2) ? 2 : 1;  // loop steps whose buffer indices are constants
    // Block-scaled fp8: each K tile's scales (MT0 of A's rows, then MT1 of B's columns) ride with the tile, a strip of
    // floats after B's tile in the same LDS buffer (Solution.lds_bytes counts it).
    static constexpr bool BLOCK = BlockScaled<C>::value;
    static constexpr bool GROUPED = GroupedConfig<C>::value;
    static_assert(!GROUPED || (C::GSU == 1 && !C::B_PACKED), "grouped kernels: no split-K, no prepacked B");
    static_assert(!BLOCK || C::DU == 128, "a block-scaled K-tile is one 128-K scale group");
    static constexpr int SCALES = BLOCK ? C::MT0 + C::MT1 : 0;  // floats of one K tile's strip
    static constexpr int SCALE_N = BLOCK ? ceil_div(SCALES, THREADS) : 1;  // per thread (unused without BLOCK)
    static constexpr int BUF_BYTES = TileA::BYTES + TileB::BYTES + SCALES * 4;
    static_assert(NBUF * BUF_BYTES == C::LDS_BYTES, "device LDS layout and Solution.lds_bytes agree");
    static_assert(FM * Op::M == WTM && FN * Op::N == WTN && KSTEPS * Op::K == C::DU, "the wave tile is whole blocks");
    static_assert(!C::B_PACKED || (B_UM && EB == 1 && C::VWB == 16), "prepacked B: fp8 bytes, K-major, 16-byte reads");

    using Acc = typename Op::Acc;
    struct Regs {  // one tile of global reads in flight
        typename PlanA::V a[PlanA::N];
        typename PlanB::V b[PlanB::N];
        float s[SCALE_N];  // BLOCK: its scales, entries tid, tid + THREADS, ... of the strip
    };
    struct Frags {
        uint32_t a[FM][WORDS];
        uint32_t b[FN][WORDS];
    };

    // The reads of one operand's window: window row r is matrix row grow0 + r (of `rows`), window byte c is byte
    // col0 + c of that row (of `cols`), rows ld bytes apart. Out-of-matrix rows and bytes read as zero. WHOLE: a read
    // is all in or all out (prepacked B). With Plan::ROW_STEP a thread's reads walk down one column, so each address is
    // the previous one plus ROW_STEP rows.
    template <class Plan, int VW, bool WHOLE>
    KILN_DEVICE static void window_reads(typename Plan::V (&v)[Plan::N], const uint8_t *g, int64_t ld, int64_t grow0,
                                         int64_t rows, int64_t col0, int64_t cols, int tid) {
        const int i0 = Plan::index(0, tid);
        const int row0 = i0 / Plan::PER_ROW, byte0 = (i0 % Plan::PER_ROW) * VW;
        // A chain of adds, not base + it * step: the compiler would hoist every it * step out of the K loop and keep
        // them all in SGPRs.
        const uint8_t *walk = g + (grow0 + row0) * ld + col0 + byte0;
        const int64_t step = (int64_t)Plan::ROW_STEP * ld;
#pragma unroll
        for (int it = 0; it < Plan::N; ++it, walk += step) {
            const int i = Plan::index(it, tid);
            const int row = Plan::ROW_STEP ? row0 + it * Plan::ROW_STEP : i / Plan::PER_ROW;
            const int byte = Plan::ROW_STEP ? byte0 : (i % Plan::PER_ROW) * VW;
            const int64_t col = col0 + byte;
            int valid = 0;
            if (Plan::live(it, tid) && grow0 + row < rows && col < cols)
                valid = WHOLE || cols - col >= VW ? VW : (int)(cols - col);
            const uint8_t *at = Plan::ROW_STEP ? walk : g + (grow0 + row) * ld + col;
            v[it] = global_read<VW>(valid ? at : g, valid);
        }
    }

    // Global reads of K tile `kt` (rotated by StaggerU) for both operands.
    KILN_DEVICE static void global_reads(Regs &r, const kiln_gemm_params &p, const uint8_t *ga, const uint8_t *gb,
                                         int m0, int n0, int kb, int kt, int tid) {
        const int64_t k0 = (int64_t)kt * C::DU;
        window_reads<PlanA, C::VWA, false>(r.a, ga, p.lda * EA, m0, p.m, k0 * EA, (int64_t)p.k * EA, tid);
        // K-major B: rows are N, bytes run along K (up to kb); N-major B: rows are K, bytes run along N. Prepacked rows
        // are whole 16-byte groups (kb = K rounded up to 16), so their reads are all in or all out.
        if constexpr (C::B_KMAJOR)
            window_reads<PlanB, C::VWB, C::B_PACKED>(r.b, gb, p.ldb * EB, n0, p.n, k0 * EB, (int64_t)kb * EB, tid);
        else
            window_reads<PlanB, C::VWB, false>(r.b, gb, p.ldb * EB, k0, p.k, (int64_t)n0 * EB, (int64_t)p.n * EB, tid);
        if constexpr (BLOCK) scale_reads(r.s, p, m0, n0, kt, tid);
    }

    // The scales of K tile (group) kt: strip entry j < MT0 is scale_a(m0 + j, kt), entry MT0 + j is B's scale of
    // column n0 + j (its 128-column block's, or its own with sb_block_n = 1). Rows >= M and columns >= N read none
    // (0: their D is never stored).
    KILN_DEVICE static void scale_reads(float (&v)[SCALE_N], const kiln_gemm_params &p, int m0, int n0, int kt,
                                        int tid) {
#pragma unroll
        for (int it = 0; it < SCALE_N; ++it) {
            const int j = tid + it * THREADS;
            const float *at = nullptr;
            if (j < C::MT0) {
                if (m0 + j < p.m) at = p.scale_a + (int64_t)(m0 + j) * p.sa_stride_m + (int64_t)kt * p.sa_stride_k;
            } else if (j < SCALES) {
                const int col = n0 + j - C::MT0;
                const int64_t blk = p.sb_block_n == 1 ? col : col >> 7;
                if (col < p.n) at = p.scale_b + blk * p.sb_stride_n + (int64_t)kt * p.sb_stride_k;
            }
            v[it] = at ? *at : 0.0f;
        }
    }

    // Local write of a tile of reads into LDS buffer `buf`.
    KILN_DEVICE static void local_writes(uint8_t *buf, const Regs &r, int tid) {
#pragma unroll
        for (int it = 0; it < PlanA::N; ++it) {
            if (!PlanA::live(it, tid)) continue;
            const int i = PlanA::index(it, tid);
            local_write<TileA, C::VWA, EA, A_UM>(buf, r.a[it], i / PlanA::PER_ROW, (i % PlanA::PER_ROW) * C::VWA);
        }
#pragma unroll
        for (int it = 0; it < PlanB::N; ++it) {
            if (!PlanB::live(it, tid)) continue;
            const int i = PlanB::index(it, tid);
            local_write<TileB, C::VWB, EB, B_UM == C::B_KMAJOR>(buf + TileA::BYTES, r.b[it], i / PlanB::PER_ROW,
                                                                (i % PlanB::PER_ROW) * C::VWB);
        }
        if constexpr (BLOCK) {
            float *strip = (float *)(buf + TileA::BYTES + TileB::BYTES);
#pragma unroll
            for (int it = 0; it < SCALE_N; ++it)
                if (tid + it * THREADS < SCALES) strip[tid + it * THREADS] = r.s[it];
        }
    }

    // Local reads of K step ks: the operands of every block of the wave tile.
    KILN_DEVICE static void load_frags(Frags &f, const uint8_t *buf, int ks, int wm, int wn, int lane) {
        const int k = ks * Op::K + Op::lane_k(lane);
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
            operand<TileA, A_UM, TA, TOp, Op::KPL>(f.a[fm], buf, wm * WTM + fm * Op::M + Op::lane_row(lane), k);
#pragma unroll
        for (int fn = 0; fn < FN; ++fn) {
            const int row = wn * WTN + fn * Op::N + Op::lane_row(lane);
            if constexpr (C::B_PACKED)
                operand_packed<TileB, TB, TOp, Op::KPL>(f.b[fn], buf + TileA::BYTES, row, k);
            else
                operand<TileB, B_UM, TB, TOp, Op::KPL>(f.b[fn], buf + TileA::BYTES, row, k);
        }
    }

    KILN_DEVICE static void mma(Acc (&acc)[FM][FN], const Frags &f) {
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
#pragma unroll
            for (int fn = 0; fn < FN; ++fn) Op::run(acc[fm][fn], f.a[fm], f.b[fn]);
    }

    // All K steps of one LDS buffer. PrefetchLocalRead = 1 reads step s+1's operands before step s's instructions.
    // A scheduling barrier closes every step, so the compiler keeps this order instead of hoisting the local reads
    // of all steps (which would hold every step's operands in VGPRs at once).
    KILN_DEVICE static void compute(Acc (&acc)[FM][FN], const uint8_t *buf, int wm, int wn, int lane) {
        if constexpr (C::PLR) {
            Frags f[2];
            load_frags(f[0], buf, 0, wm, wn, lane);
#pragma unroll
            for (int ks = 0; ks < KSTEPS; ++ks) {
                if (ks + 1 < KSTEPS) load_frags(f[(ks + 1) & 1], buf, ks + 1, wm, wn, lane);
                mma(acc, f[ks & 1]);
                __builtin_amdgcn_sched_barrier(0);
            }
        } else {
#pragma unroll
            for (int ks = 0; ks < KSTEPS; ++ks) {
                Frags f;
                load_frags(f, buf, ks, wm, wn, lane);
                mma(acc, f);
                __builtin_amdgcn_sched_barrier(0);
            }
        }
    }

    // Block-scaled fp8: DepthU is the 128-K scale group, so the K tile in `buf` is one group. Its sum `part` (from
    // zero) goes into acc times scale_a(row) * scale_b(col) from the tile's strip, for the rows and columns this lane's
    // registers hold. Split-K slices promote their own tiles; the reduce kernel only adds them (epilogue_scales
    // applies nothing for SCALE_BLOCK).
    KILN_DEVICE static void promote(Acc (&acc)[FM][FN], const Acc (&part)[FM][FN], const uint8_t *buf, int wm, int wn,
                                    int lane) {
        const float *strip = (const float *)(buf + TileA::BYTES + TileB::BYTES);
        const float *sa = strip + wm * WTM + Op::acc_row(lane, 0);
        const float *sb = strip + C::MT0 + wn * WTN + Op::acc_col(lane, 0);
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
#pragma unroll
            for (int e = 0; e < Op::ACC; ++e) {
                const float a = sa[fm * Op::M + Op::acc_row(0, e)];  // acc_row(l, e) = acc_row(l, 0) + acc_row(0, e)
#pragma unroll
                for (int fn = 0; fn < FN; ++fn) acc[fm][fn][e] += part[fm][fn][e] * (a * sb[fn * Op::N]);
            }
    }

    // Where a workgroup's K loop reads: its work (tile, K range, stagger: kiln_schedule.h) and operands. Step i of
    // the loop reads K tile Sched::k_tile(w, i).
    using Sched = Schedule<C>;
    struct Span {
        WorkTile w;
        const uint8_t *ga, *gb;
        int kb;
    };

    // The compute of loop step i (LDS buffer buf): straight into acc, or (block-scaled) summed alone and promoted.
    KILN_DEVICE static void tile(Acc (&acc)[FM][FN], const uint8_t *buf, int wm, int wn, int lane) {
        if constexpr (BLOCK) {
            Acc part[FM][FN];
#pragma unroll
            for (int fm = 0; fm < FM; ++fm)
#pragma unroll
                for (int fn = 0; fn < FN; ++fn) part[fm][fn] = Acc{};
            compute(part, buf, wm, wn, lane);
            promote(acc, part, buf, wm, wn, lane);
        } else {
            compute(acc, buf, wm, wn, lane);
        }
    }

    KILN_DEVICE static void read_tile(Regs &r, const kiln_gemm_params &p, const Span &s, int i, int tid) {
        global_reads(r, p, s.ga, s.gb, s.w.m0, s.w.n0, s.kb, Sched::k_tile(s.w, i), tid);
    }

    // Step i of the prefetching loop; Q = i % UNROLL, so the VGPR set and the LDS buffers are constants. Tile i is in
    // LDS buffer i % NBUF when the step starts; tiles i+1 .. i+PGR-1 are in the VGPR sets (i+1) % PGR, ...; set
    // i % PGR is free (tile i was written to LDS at the end of step i-1). A step has no branch around its reads and
    // writes (the compiler would move the compute past it): the last PGR steps re-read the last tile, and the last
    // step writes a buffer nobody reads.
    template <int Q>
    KILN_DEVICE static void step(Acc (&acc)[FM][FN], Regs (&r)[PGR], uint8_t *lds, const kiln_gemm_params &p,
                                 const Span &s, int i, int tid, int wm, int wn, int lane) {
        read_tile(r[Q % PGR], p, s, i + PGR < s.w.iters ? i + PGR : s.w.iters - 1, tid);  // in flight during compute
        tile(acc, lds + (Q % NBUF) * BUF_BYTES, wm, wn, lane);
        if constexpr (NBUF == 1) lds_barrier();  // 1LDSBuffer: the next tile overwrites this one
        local_writes(lds + ((Q + 1) % NBUF) * BUF_BYTES, r[(Q + 1) % PGR], tid);
        lds_barrier();
    }

    // Grouped: the parameters as group w.group sees them: its rows of scale_a (masked; contiguous ones are A's rows),
    // its columns of scale_b and its bias row. Tensor scales are one float for every group.
    KILN_DEVICE static kiln_gemm_params group_params(const kiln_gemm_params &p, const WorkTile &w) {
        kiln_gemm_params q = p;
        const GroupOperands o = group_operands(p, w.group);
        q.scale_a = o.scale_a, q.scale_b = o.scale_b, q.bias = o.bias;
        return q;
    }

    // The workgroup's tile (kiln_schedule.h), its K loop and epilogue. B is matrix w.group (the batch, or the group;
    // k-grouped: 0); D's rows from w.m_end on are not stored.
    KILN_DEVICE static void run(const kiln_gemm_params &params, uint8_t *lds) {
        const int tid = thread_x(), lane = tid % WAVE, wave = tid / WAVE;
        const int wm = wave % C::WG0, wn = wave / C::WG0;
        Span s;
        kiln_gemm_params grouped;  // GROUPED: the group's view of params (group_params)
        if constexpr (GROUPED) {
            // Uniform over the workgroup (same block_x, same group_index): all of it returns, before any barrier.
            GroupCursor c;
            if (!Sched::of_group_index(params, block_x(), c, s.w)) return;
            grouped = group_params(params, s.w);
        } else {
            s.w = Sched::of_block(params);  // iters = 0 when K = 0: no reads, no LDS writes, the epilogue stores zeros
        }
        const kiln_gemm_params &p = GROUPED ? grouped : params;
        const int batch = s.w.batch, split = s.w.split;
        s.kb = Sched::k_extent(p);  // K extent of B's rows (prepacked: padded to 16)
        s.ga = (const uint8_t *)p.a + (int64_t)Sched::template a_batch<GROUPED>(p, s.w) * p.stride_a * EA;
        s.gb = (const uint8_t *)p.b + (int64_t)Sched::template b_matrix<GROUPED>(p, s.w) * p.stride_b * EB;

        Acc acc[FM][FN];
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
#pragma unroll
            for (int fn = 0; fn < FN; ++fn) acc[fm][fn] = Acc{};

        if constexpr (PGR == 0) {
            // No prefetch: read, write, compute, one LDS buffer.
            Regs r;
            for (int i = 0; i < s.w.iters; ++i) {
                read_tile(r, p, s, i, tid);
                if (i > 0) lds_barrier();  // every wave has left the previous compute
                local_writes(lds, r, tid);
                lds_barrier();
                tile(acc, lds, wm, wn, lane);
            }
        } else {
            Regs r[PGR];
#pragma unroll
            for (int t = 0; t < PGR; ++t)
                if (t < s.w.iters) read_tile(r[t], p, s, t, tid);
            if (s.w.iters > 0) local_writes(lds, r[0], tid);
            lds_barrier();
            for (int i = 0; i < s.w.iters; i += UNROLL) {
                step<0>(acc, r, lds, p, s, i, tid, wm, wn, lane);
                if constexpr (UNROLL == 2)
                    if (i + 1 < s.w.iters) step<1>(acc, r, lds, p, s, i + 1, tid, wm, wn, lane);
            }
        }

        // Epilogue: accumulator register e of block (fm, fn) is D[acc_row][acc_col] of that block.
        const EpilogueScales sc = epilogue_scales(p);
        float *partial = C::GSU > 1 ? splitk_slice(p, batch, split, C::GSU) : nullptr;
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
#pragma unroll
            for (int fn = 0; fn < FN; ++fn)
#pragma unroll
                for (int e = 0; e < Op::ACC; ++e) {
                    const int row = s.w.m0 + wm * WTM + fm * Op::M + Op::acc_row(lane, e);
                    const int col = s.w.n0 + wn * WTN + fn * Op::N + Op::acc_col(lane, e);
                    if (row >= s.w.m_end || col >= p.n) continue;
                    if constexpr (C::GSU > 1)
                        partial[(int64_t)row * p.n + col] = acc[fm][fn][e];
                    else
                        epilogue_store<typename C::TD>(p, sc, batch, row, col, acc[fm][fn][e]);
                }
    }
};

// Dynamic LDS of the launch (kiln_abi.h: lds_bytes of the solution).
extern __attribute__((shared)) __attribute__((aligned(16))) uint8_t kiln_amd_lds[];

template <class C, class Op> KILN_DEVICE void gemm_amd(const kiln_gemm_params &p) {
    AmdGemm<C, Op>::run(p, kiln_amd_lds);
}

}  // namespace kiln

#endif  // KILN_AMD_GEMM_H
