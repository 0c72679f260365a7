// The mfma family's FP8 attention forward (gfx942, CDNA3, fp8 FNUZ): FlashAttention-2's loop with FlashAttention-3's
// FP8 recipe on wave64 MFMA, the same algorithm as kiln_attn_mma.h (the NVIDIA kernel), laid out for AMD's lanes.
//
//   workgroup: 4 waves (256 threads), BM = 4 * M query rows of one (sequence, query head); each wave owns M rows
//   (M = 32: v_mfma_f32_32x32x16, BM = 128; M = 16: v_mfma_f32_16x16x32, BM = 64), end to end.
//   Q: global -> registers once (each lane its query's bytes), no LDS.
//   K, V tiles of BN keys: global --16-byte loads, issued before the previous tile's compute, zero past the
//   sequence--> registers --> LDS (K as it is, V transposed; 2 buffers, or 1 with STAGES = 1).
//   S^T = K Q^T    fp8 MFMA (A = K from LDS, B = Q from registers)
//   online softmax in base 2 (scale * log2(e) folded, O rescaled only when a row's max moves)
//   P = 128 * exp2(...) requantized to e4m3fnuz (v_cvt_pk_fp8_f32) straight from the S^T accumulators
//   O^T += V^T P^T fp8 MFMA (A = V^T from LDS, B = P from registers)
//   O = O / rowsum * v_descale -> f16/bf16, 8-byte stores; lse = ln(sum exp(scaled scores)) if requested
//
// Why transposed products. The MFMA layouts (CDNA3 ISA; kiln_gemm_mfma.h, tests/emu/amd_emu.h), with G = 64 / M lane
// groups, lane l = column l % M of group g = l / M:
//   A (M x 8G, fp8):  A[i][k] is byte k % 8 of lane i + M * (k / 8)        (B[k][j] alike, lane j + M * (k / 8))
//   D (M x M, f32):   D[i][j] is item e of lane j + M * g where i = 4G * (e / 4) + 4g + e % 4   (IPB = M*M/64 items)
// A lane's accumulators all sit in one column j. With the queries as the columns (S^T = K Q^T, O^T = V^T P^T), every
// lane holds one query row, shared with the lanes of the same column in the other groups: its softmax statistics
// (max, sum) combine in log2(G) butterfly steps (ds_bpermute with lane l ^ 32, and first l ^ 16 when G = 4), per tile
// for the max and once at the end for the sum; the O rescale needs no exchange.
//
// Q and K (S^T's K dimension is the head dim d): in instruction step s lane group g supplies d = (D/G) g + 8s + t,
// t = 0..7, for B (Q) and A (K) alike (any permutation of d shared by both gives the same sum). So a lane's Q is D/G
// contiguous bytes (16-byte global loads), and a 16-byte LDS read of K row `key` holds two steps' A operands.
//
// P as the B operand of O^T += V^T P^T. The lane's S^T items, flattened f = IPB * kb + e over the tile's key blocks
// kb (M keys each), are key(f, g) = M kb + 4G (e / 4) + 4g + e % 4. Step s of P V^T takes items f = 8s .. 8s+7 as its
// 8 bytes t: no shuffles (the fp8 conversion packs them in place). The k index of the instruction then stands for a
// permutation of the keys, and V^T's A operand must follow it: lane group g of step s reads keys key(8s + t, g).
//
// V^T in LDS. The A operand wants 8 keys of one column d per lane, but V is stored [key][d]: V is transposed while it
// is written to LDS (a choice against gathering bytes on every read: the write happens once per tile, the read once per
// d block, and a gather would be 8 single-byte LDS reads per operand). Row d of the V^T tile holds the tile's keys in
// the order the operand reads them: position (BN/G) g + 8s + t holds key(8s + t, g), so one lane group's operands for
// all steps are BN/G contiguous bytes (16-byte reads, two steps each). Key k of the tile lands at
//   vt_pos(k) = (BN/G) ((k % M) / 4 % G) + IPB (k / M) + 4 ((k % M) / 4G) + k % 4,
// which keeps runs of 4 consecutive keys together: a thread loads 4 consecutive keys x 16 bytes of d (four 16-byte
// loads), transposes the 4 x 16 bytes into 16 words (byte permutes), and writes one 32-bit word per d.
// Bank conflicts: K's rows are XOR-swizzled by 16-byte chunk (LdsTile), V^T's chunks are XORed with (d / R) mod
// BN/16 where R = 128 / BN rows share a 128-byte bank line, so the 8 rows of one read phase cover all 32 banks.
//
// P's scale: P in [0, 1] is stored as 128 * P. The NVIDIA kernel's 256 is e4m3's 2^8, but e4m3fnuz's largest finite
// value is 240, so 256 would overflow; 128 = 2^7 is exact (a power of two changes no rounding, only the exponent) and
// leaves 240 headroom. e4m3fnuz's normals start at 2^-7 (bias 8), so probabilities down to 2^-14 keep 3 mantissa
// bits: the same range e4m3 with 256 keeps. The 2^7 is folded into the exponent (exp2(x + 7)), the row sum is
// accumulated from the same scaled (unrounded) values, so it cancels in O = acc / rowsum; v_descale is applied in that
// one multiply, q_descale * k_descale in the exponent's scale. Rounding P to 3 mantissa bits alone gives a relative
// L2 error of about 2.3% (256 keys) to 2.5% (1000 keys) against an exact softmax when attention is diffuse and V is
// iid normal (kiln_attn_mma.h's note; tests/py/test_attn_emulation.py reports it per case).
//
// A translation unit instantiates one config (the generator will emit one per kernel):
//   struct Cfg { static constexpr int D = 128, BM = 128, BN = 64, STAGES = 2, OCC = 2;
//                using T8 = kiln_e4m3fnuz; using TO = kiln_bf16; };
//   KILN_ATTN_MFMA_KERNEL(kiln_attn_fwd_d128_e4m3fnuz_bf16, Cfg)
// launched with grid (ceil(seqlen_q / BM), heads_q, batch), 256 threads (not kiln_attn_abi.h's 32 * warps, which is
// the NVIDIA kernel's) and kiln::AttnMfma<Cfg>::LDS_BYTES bytes of dynamic LDS.
#ifndef KILN_ATTN_MFMA_H
#define KILN_ATTN_MFMA_H

#include "kiln_attn_amd.h"  // the helpers both AMD attention kernels share
#include "kiln_gemm_mfma.h"  // Fp8Pair (the fp8 MFMA builtins), LdsTile, u32x4, kiln_amd_lds (the dynamic LDS)

#if !defined(__gfx940__) && !defined(__gfx941__) && !defined(__gfx942__)
#error "kiln_attn_mfma.h needs gfx940-gfx942 (fp8 MFMA on the FNUZ formats)"
#endif

namespace kiln {

// Config C: D (64, 128, 256), BM (128: 32x32 MFMA, 64: 16x16 MFMA), BN (keys per tile), STAGES (LDS buffers: 2, or 1
// to fit LDS), OCC (waves per SIMD the compiler must allow: amdgpu_waves_per_eu), T8 (kiln_e4m3fnuz or kiln_e5m2fnuz:
// Q, K and V), TO (kiln_bf16 or kiln_f16).
template <class C> struct AttnMfma {
    static constexpr int D = C::D, BM = C::BM, BN = C::BN, NBUF = C::STAGES;
    static constexpr int WAVES = 4, THREADS = 64 * WAVES;
    static constexpr int M = BM / WAVES, G = 64 / M, IPB = M * M / 64;  // see the header comment
    static constexpr int NKB = BN / M;            // key blocks of S^T per tile
    static constexpr int QW = D / (4 * G);        // 32-bit words of Q per lane (D / G bytes)
    static constexpr int KREADS = D / (16 * G);   // 16-byte K reads per key block (two instruction steps each)
    static constexpr int PSTEPS = BN / (8 * G);   // instruction steps of O^T += V^T P^T per tile
    static constexpr int VREADS = PSTEPS / 2;     // 16-byte V^T reads per d block
    static constexpr int NDB = D / M;             // d blocks of O^T
    static constexpr int PLOG2 = 7;               // P is stored as 2^7 * P (header comment)
    using T8 = typename C::T8;
    using TO = typename C::TO;
    using Acc = typename Pick<M == 32, f32x16, f32x4>::type;
    using Kv = AttnKvTile<BN, D, THREADS>;  // the K/V tile's global reads and local writes
    using KTile = typename Kv::KTile;
    using Regs = typename Kv::Regs;
    static constexpr int BUF_BYTES = Kv::BYTES, LDS_BYTES = NBUF * BUF_BYTES;
    static_assert(D == 64 || D == 128 || D == 256, "head dim 64, 128 or 256");
    static_assert(M == 32 || M == 16, "BM = 128 (32x32x16 MFMA) or 64 (16x16x32 MFMA)");
    static_assert(BN % M == 0 && PSTEPS % 2 == 0 && (BN == 32 || BN == 64 || BN == 128),
                  "key tiles of whole blocks and 16-byte V^T reads (BN 32/64/128; 64/128 with BM = 64)");
    static_assert(NBUF == 1 || NBUF == 2, "one or two LDS buffers");
    static_assert(LDS_BYTES <= 65536, "gfx942 has 64 KiB of LDS per workgroup");

    // Per-lane state: Q (8 bytes per instruction step), O^T accumulators, and for this lane's query the running max of
    // the raw scores and this lane's share of the row sum (the lane groups' shares are added at the end).
    struct State {
        long q[QW / 2];
        Acc o[NDB];
        float m, l;
    };

    // Where key k of a tile sits in its V^T row (header comment), and byte `pos` of V^T row d in LDS.
    KILN_DEVICE static constexpr int vt_pos(int k) {
        const int r = k % M;
        return (BN / G) * (r / 4 % G) + IPB * (k / M) + 4 * (r / (4 * G)) + k % 4;
    }
    KILN_DEVICE static int vt_offset(int d, int pos) { return Kv::vt_offset(d, pos); }

    template <class TA, class TB> KILN_DEVICE static void mfma(Acc &c, long a, long b) {
        if constexpr (M == 32)
            c = Fp8Pair<TA, TB>::r32(a, b, c);
        else
            c = Fp8Pair<TA, TB>::r16(a, b, c);
    }
    KILN_DEVICE static long lo64(const u32x4 &x) { return (long)((uint64_t)x.y << 32 | x.x); }
    KILN_DEVICE static long hi64(const u32x4 &x) { return (long)((uint64_t)x.w << 32 | x.z); }

    // One key tile for one wave. With mask, keys at or past lim (this lane's query's limit) are masked.
    KILN_DEVICE static void tile(State &st, const uint8_t *buf, int lane, int n0, bool mask, int lim, float sl2) {
        const int col = lane % M, g = lane / M;
        // S^T = K Q^T: block kb is keys M kb .. M kb + M - 1 of the tile (rows of A), this lane's query its column.
        // The blocks are the inner loop, so that consecutive instructions do not wait on each other's accumulators.
        Acc s[NKB];
#pragma unroll
        for (int kb = 0; kb < NKB; ++kb) s[kb] = Acc{};
#pragma unroll
        for (int j = 0; j < KREADS; ++j)
#pragma unroll
            for (int kb = 0; kb < NKB; ++kb) {
                const u32x4 x = *(const u32x4 *)(buf + KTile::offset(M * kb + col, (D / G) * g + 16 * j));
                mfma<T8, T8>(s[kb], lo64(x), st.q[2 * j]);
                mfma<T8, T8>(s[kb], hi64(x), st.q[2 * j + 1]);
            }
        if (mask) {
#pragma unroll
            for (int kb = 0; kb < NKB; ++kb)
#pragma unroll
                for (int e = 0; e < IPB; ++e)
                    if (n0 + M * kb + 4 * G * (e / 4) + 4 * g + e % 4 >= lim) s[kb][e] = -__builtin_inff();
        }

        // Online softmax. m: max of the raw scores; p = 2^(s * sl2 - (m * sl2 - 7)) = 128 * exp(scaled s - scaled m).
        float mx = st.m;
#pragma unroll
        for (int kb = 0; kb < NKB; ++kb)
#pragma unroll
            for (int e = 0; e < IPB; ++e) mx = __builtin_fmaxf(mx, s[kb][e]);
#pragma unroll
        for (int x = M; x < 64; x *= 2) mx = __builtin_fmaxf(mx, lane_read(mx, lane ^ x));
        attn_softmax<PLOG2, IPB>(st, s, mx, sl2);

        // P as e4m3fnuz, 8 bytes per step: items f = 8 ps .. 8 ps + 7 of the flattened S^T.
        long pk[PSTEPS];
#pragma unroll
        for (int ps = 0; ps < PSTEPS; ++ps) {
            float v[8];
#pragma unroll
            for (int t = 0; t < 8; ++t) v[t] = s[(8 * ps + t) / IPB][(8 * ps + t) % IPB];
            int lo = __builtin_amdgcn_cvt_pk_fp8_f32(v[0], v[1], 0, false);
            lo = __builtin_amdgcn_cvt_pk_fp8_f32(v[2], v[3], lo, true);
            int hi = __builtin_amdgcn_cvt_pk_fp8_f32(v[4], v[5], 0, false);
            hi = __builtin_amdgcn_cvt_pk_fp8_f32(v[6], v[7], hi, true);
            pk[ps] = (long)((uint64_t)(uint32_t)hi << 32 | (uint32_t)lo);
        }

        // O^T += V^T P^T: block n is d = M n .. M n + M - 1 (rows of A, from V^T row M n + col).
#pragma unroll
        for (int n = 0; n < NDB; ++n)
#pragma unroll
            for (int j = 0; j < VREADS; ++j) {
                const u32x4 x = *(const u32x4 *)(buf + vt_offset(M * n + col, (BN / G) * g + 16 * j));
                mfma<T8, kiln_e4m3fnuz>(st.o[n], lo64(x), pk[2 * j]);
                mfma<T8, kiln_e4m3fnuz>(st.o[n], hi64(x), pk[2 * j + 1]);
            }
    }

    // The K/V tile at key n0 (kiln_attn_amd.h's AttnKvTile): V group grp is keys 4 grp .. 4 grp + 3, at V^T position
    // vt_pos.
    KILN_DEVICE static void read_tile(Regs &r, const kiln_attn_params &p, const AttnBlock &w, int n0, int tid) {
        Kv::template read<1>(r, attn_k(p, w), attn_v(p, w), p.k_stride_s, p.v_stride_s, n0, w.sq.len_k, tid,
                             [](int grp) { return 4 * grp; });
    }
    KILN_DEVICE static void write_tile(uint8_t *buf, const Regs &r, const AttnBlock &w, int n0, int tid) {
        Kv::template write<1>(buf, r, n0, w.sq.len_k, tid, [](int grp) { return 4 * grp; }, vt_pos);
    }

    KILN_DEVICE static void run(const kiln_attn_params &p, uint8_t *lds) {
        const int tid = thread_x(), lane = tid % 64, wave = tid / 64;
        AttnBlock w;
        if (!attn_block<BM, BN>(p, w)) return;
        const int m0 = w.m0, len_q = w.sq.len_q;
        const float sl2 = w.sl2;

        // This lane's query row and its D/G bytes of Q (zero past the sequence: finite scores, never stored).
        const int wr0 = m0 + M * wave, row = wr0 + lane % M, g = lane / M;
        State st;
#pragma unroll
        for (int j = 0; j < QW / 4; ++j) {
            const u32x4 x = q_chunk(attn_q(p, w), p.q_stride_s, row, len_q, (D / G) * g + 16 * j);
            st.q[2 * j] = lo64(x), st.q[2 * j + 1] = hi64(x);
        }
#pragma unroll
        for (int n = 0; n < NDB; ++n) st.o[n] = Acc{};
        st.m = -__builtin_inff();
        st.l = 0.f;
        const int lim = w.keys.limit(row);  // keys at or past lim are masked

        Regs r;
        if (w.n_tiles > 0) {
            read_tile(r, p, w, 0, tid);
            write_tile(lds, r, w, 0, tid);
        }
        barrier();
        for (int t = 0; t < w.n_tiles; ++t) {
            const bool more = t + 1 < w.n_tiles;
            if (more) read_tile(r, p, w, (t + 1) * BN, tid);  // in flight
            const int n0 = t * BN;
            // Wave-uniform: skip tiles no row of this wave sees; mask only tiles crossing the end or the diagonal.
            const bool active = wr0 < len_q && w.keys.seen(n0, wr0 + M - 1);
            const bool mask = w.keys.crossed(n0, BN, wr0);
            if (active) tile(st, lds + (NBUF == 2 ? t & 1 : 0) * BUF_BYTES, lane, n0, mask, lim, sl2);
            if (more) {
                if (NBUF == 1) barrier();  // every wave has left the only buffer
                write_tile(lds + (NBUF == 2 ? (t + 1) & 1 : 0) * BUF_BYTES, r, w, (t + 1) * BN, tid);
            }
            barrier();  // tile t+1 is in LDS for every wave; with 2 buffers, every wave has left buffer t & 1
        }
        epilogue(p, st, lane, row, w);
    }

    // The row sum over the lane groups, O normalised and stored (8 bytes per lane and 4 d), the lse.
    KILN_DEVICE static void epilogue(const kiln_attn_params &p, const State &st, int lane, int row,
                                     const AttnBlock &w) {
        float l = st.l;
#pragma unroll
        for (int x = M; x < 64; x *= 2) l += lane_read(l, lane ^ x);
        if (row >= w.sq.len_q) return;
        const int g = lane / M;
        const float inv = l > 0.f ? attn_descale(p.v_descale, w.di) / l : 0.f;
        uint8_t *orow = attn_out_row<TO>(p, w, row);
#pragma unroll
        for (int n = 0; n < NDB; ++n)
#pragma unroll
            for (int e = 0; e < IPB; e += 4)  // items e .. e+3: d = M n + 4G (e / 4) + 4g + 0..3
                attn_store_out4<TO>(orow, M * n + 4 * G * (e / 4) + 4 * g, st.o[n], e, inv);
        if (p.lse && g == 0) attn_store_lse<PLOG2>(p, w, row, st.m, l);
    }
};

template <class C> KILN_DEVICE void attn_mfma(const kiln_attn_params &p) { AttnMfma<C>::run(p, kiln_amd_lds); }

}  // namespace kiln

// One extern "C" kernel per config (one per translation unit in generated code).
#define KILN_ATTN_MFMA_KERNEL(NAME, CFG)                                                                              \
    KILN_KERNEL __attribute__((amdgpu_flat_work_group_size(256, 256), amdgpu_waves_per_eu(CFG::OCC))) void NAME(     \
        const kiln_attn_params p) {                                                                                   \
        kiln::attn_mfma<CFG>(p);                                                                                      \
    }

#endif  // KILN_ATTN_MFMA_H
