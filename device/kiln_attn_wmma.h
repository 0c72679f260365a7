// The wmma family's FP8 attention forward (RDNA, wave32): the same algorithm and ABI as kiln_attn_mma.h (NVIDIA) and
// kiln_attn_mfma.h (gfx942) -- FlashAttention-2's loop, online softmax in base 2, causal aligned bottom right, GQA,
// varlen, descales, lse -- on the 16x16x16 WMMA instructions of two generations:
//   gfx12 (gfx1201, RDNA4): fp8 WMMA on the OCP formats. S^T = K Q^T on v_wmma_f32_16x16x16_{fp8,bf8}_{fp8,bf8},
//     P = 256 * exp2(...) requantized to OCP e4m3 (v_cvt_pk_fp8_f32), O^T += V^T P^T on v_wmma_f32_16x16x16_*_fp8.
//   gfx11 (gfx1151, RDNA3.5): no fp8 WMMA. Q, K and V stay fp8 in memory and LDS; each operand is widened to f16 after
//     its local read (kiln_amd_fp8.h: exact for every finite code) and multiplied on v_wmma_f32_16x16x16_f16. P stays
//     f16 (256 * exp2(...), rounded to 11 significant bits): no fp8 requantization of P. Against a float64 reference
//     from the same fp8 inputs the error left is f16 P's and the output's rounding (tests/py/test_attn_emulation.py
//     gates it at 2.5e-3 with bf16 output, 5e-4 with f16, against gfx12's 2.5e-2).
//
//   workgroup: BM / 16 waves of 32 lanes (BM = 64: 4 waves, 128 threads; BM = 128: 8 waves), each wave owning 16 query
//   rows end to end. Q: global -> registers once (gfx12), or -> the wave's rows of a Q tile in LDS once (gfx11, see
//   below). K, V tiles of BN keys: global (16-byte loads issued before the previous tile's compute, rows past the
//   sequence zeroed) -> registers -> LDS (K as it is, V transposed; 2 buffers, or 1 with STAGES = 1).
//   O = O / rowsum * v_descale -> f16/bf16, 8-byte stores; lse if requested.
//
// Why transposed products (as on gfx942). The WMMA layouts (RDNA3/RDNA4 ISA; kiln_gemm_wmma.h, tests/emu/amd_emu.h),
// lane l = column l % 16 of half g = l / 16:
//   gfx12: A[i][k] is element k % 8 of lane i + 16 (k / 8);     D[i][j] is item i % 8 of lane j + 16 (i / 8)
//   gfx11: A[i][k] is element k of lane i and of lane i + 16;   D[i][j] is item i / 2 of lane j + 16 (i % 2)
// (B[k][j] alike with column j.) Every accumulator of a lane is in its column j. With the queries as the columns
// (S^T = K Q^T, O^T = V^T P^T) a lane holds one query row, shared with the lane of the other half: softmax statistics
// combine in one exchange (ds_bpermute, lane l ^ 16) per tile for the max and once at the end for the sum, and the O
// rescale needs none. Item e of half g is row acc_row(g, e) = 8g + e (gfx12) or 2e + g (gfx11) of its 16-row block:
// a key of S^T, a head-dim index d of O^T.
//
// S^T = K Q^T (K dimension: d). gfx12: in instruction s half g supplies d = (D/2) g + 8s + t, t = 0..7, for A (K)
// and B (Q) alike (a permutation of d shared by both gives the same sum): a lane's Q is D/2 contiguous bytes and one
// 16-byte LDS read of K row `key` holds two instructions' A. gfx11: both halves supply d = 16s + t, t = 0..15 (a
// lane's Q is the whole row; a 16-byte K read is one instruction, widened to 8 words of f16 pairs).
// gfx11 keeps Q in LDS (BM x D bytes, read and widened once per instruction and tile, as K is): a whole fp8 row per
// lane would hold D/4 registers for the kernel's life, and with D = 256 that and the 128 of O^T spill. For the same
// reason its loop over d is unrolled 4 times, not fully: fully unrolled, the scheduler hoists the tile's K and Q reads
// and their widened copies ahead of the products and spills at D = 256.
//
// P as the B operand of O^T += V^T P^T (K dimension: the tile's keys, block kb = keys 16 kb .. 16 kb + 15 per
// instruction). gfx12: items e of half g are keys 8g + e, exactly the B operand's k = 8g + e: the 8 values convert in
// place into 2 words of e4m3. gfx11: B wants all 16 keys of the block in every lane, a lane holds 8 (keys 2e + g): the
// instruction's k stands for key 2 (k % 8) + k / 8, so words 0-3 (k 0..7) are half 0's items packed in pairs and words
// 4-7 half 1's; each lane packs its own 4 words and receives the other half's 4 (ds_bpermute, lane l ^ 16).
//
// V^T in LDS. The A operand of O^T wants a run of keys of one d per lane, V is stored [key][d]: it is transposed on the
// local write (once per tile; the read is once per d block). Row d of V^T holds the tile's keys in the operand's
// order: gfx12: position (BN/2) g + 8 kb + t holds key 16 kb + 8g + t, so half g's operands for all blocks are BN/2
// contiguous bytes (16-byte reads, two blocks each); gfx11: position 16 kb + k holds key 16 kb + 2 (k % 8) + k / 8
// (a 16-byte read per block, both halves the same). Either way 4 keys k0 + VSTEP c (c = 0..3, VSTEP 1 or 2) sit in 4
// consecutive bytes: a thread loads those 4 keys x 16 bytes of d, transposes the 4 x 16 bytes into 16 words, and
// writes one 32-bit word per d. K's rows are XOR-swizzled by 16-byte chunk (LdsTile), V^T's chunks XORed with
// (d / R) mod BN/16 (R = 128 / BN rows share a 128-byte line), as on gfx942.
//
// The output (O^T, 16 d per block). gfx12: half g's items are d = 8g + e, 16 contiguous bytes of f16/bf16 (two 8-byte
// stores: o rows are only 8-byte aligned). gfx11: half g's items are d = 2e + g; half 0 sends items 4-7 and half 1
// items 0-3 to the other half (4 ds_bpermute per block, in the epilogue only), after which half g holds d = 8g .. 8g+7.
//
// P's scale, gfx12. P in [0, 1] is stored as 256 * P, as on NVIDIA: OCP e4m3 reaches 448, so 256 = 2^8 fits with
// headroom (gfx942's e4m3fnuz stops at 240 and takes 128). 2^8 is exact (it changes the exponent, not the rounding),
// e4m3's normals start at 2^-6, so probabilities down to 2^-14 keep 3 mantissa bits. It is folded into the exponent
// (exp2(x + 8)); the row sum is accumulated from the same scaled, unrounded values, so it cancels in O = acc / rowsum;
// v_descale is applied in that one multiply, q_descale * k_descale in the exponent's scale. Rounding P to 3 mantissa
// bits alone costs a relative L2 error of about 2.3% against an exact softmax on diffuse attention (kiln_attn_mma.h's
// note). gfx11 keeps the same 2^8: in f16 it moves small probabilities out of the subnormals (2^-22 keeps 11 bits).
//
// A translation unit instantiates one config (the generator will emit one per kernel), compiled for gfx11 or gfx12:
//   struct Cfg { static constexpr int D = 128, BM = 64, BN = 64, STAGES = 2, OCC = 4;
//                using T8 = kiln_e4m3; using TO = kiln_bf16; };
//   KILN_ATTN_WMMA_KERNEL(kiln_attn_fwd_d128_e4m3_bf16, Cfg)
// launched with grid (ceil(seqlen_q / BM), heads_q, batch), 2 * BM threads (kiln_attn_abi.h's 32 * waves, BM / 16
// waves) and kiln::AttnWmma<Cfg>::LDS_BYTES bytes of dynamic LDS.
#ifndef KILN_ATTN_WMMA_H
#define KILN_ATTN_WMMA_H

#include "kiln_attn_amd.h"  // the helpers both AMD attention kernels share
#include "kiln_gemm_wmma.h"  // WmmaF16 / WmmaFp8Pair (the WMMA builtins), LdsTile, u32x4, Upcast, kiln_amd_lds

#if defined(__gfx1200__) || defined(__gfx1201__)
#define KILN_ATTN_WMMA_GEN 12
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) ||                  \
    defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1152__)
#define KILN_ATTN_WMMA_GEN 11
#else
#error "kiln_attn_wmma.h needs an RDNA3 (gfx11) or RDNA4 (gfx12) target"
#endif

namespace kiln {

// Config C: D (64, 128, 256), BM (64 or 128: 4 or 8 waves of 16 query rows), BN (keys per tile: 32, 64, 128), STAGES
// (LDS buffers: 2, or 1 to fit LDS), OCC (waves per SIMD the compiler must allow: amdgpu_waves_per_eu), T8 (kiln_e4m3
// or kiln_e5m2: Q, K and V), TO (kiln_bf16 or kiln_f16).
template <class C> struct AttnWmma {
    static constexpr int GEN = KILN_ATTN_WMMA_GEN;
    static constexpr int D = C::D, BM = C::BM, BN = C::BN, NBUF = C::STAGES;
    static constexpr int WAVES = BM / 16, THREADS = 32 * WAVES;
    static constexpr int NKB = BN / 16;          // key blocks per tile: S^T blocks, instructions of O^T per d block
    static constexpr int NDB = D / 16;           // d blocks of O^T, instructions of S^T per key block
    static constexpr int QW = D / 8;             // 32-bit words of Q a lane loads (fp8: its half's D/2 bytes)
    static constexpr bool Q_LDS = GEN == 11;     // Q kept in LDS, not in registers (header comment)
    static constexpr int PLOG2 = 8;              // P is stored as 2^8 * P (header comment)
    static constexpr int VSTEP = GEN == 12 ? 1 : 2;  // key stride of the 4 keys one V^T word holds
    using T8 = typename C::T8;
    using TO = typename C::TO;
    using Kv = AttnKvTile<BN, D, THREADS>;  // the K/V tile's global reads and local writes
    using KTile = typename Kv::KTile;
    using Regs = typename Kv::Regs;
    using QTile = LdsTile<BM, D, 0, 0, true>;
    static constexpr int BUF_BYTES = Kv::BYTES;
    static constexpr int Q_OFFSET = NBUF * BUF_BYTES, LDS_BYTES = Q_OFFSET + (Q_LDS ? QTile::BYTES : 0);
    static_assert(D == 64 || D == 128 || D == 256, "head dim 64, 128 or 256");
    static_assert(BM == 64 || BM == 128, "4 or 8 waves of 16 query rows");
    static_assert(BN == 32 || BN == 64 || BN == 128, "key tiles of whole 16-key blocks, 16-byte V^T reads");
    static_assert(NBUF == 1 || NBUF == 2, "one or two LDS buffers");
    static_assert(LDS_BYTES <= 65536, "gfx11 and gfx12 give a workgroup 64 KiB of LDS");

    struct State {
        uint32_t q[Q_LDS ? 1 : QW];  // gfx12: this lane's Q bytes, d = (D/2) g .. (D/2) g + D/2 - 1
        f32x8 o[NDB];    // O^T accumulators, d block n
        float m, l;      // this lane's query: running max of the raw scores, this half's share of the row sum
    };

    // Row of item e of half g in a 16-row accumulator block.
    KILN_DEVICE static constexpr int acc_row(int g, int e) { return GEN == 12 ? 8 * g + e : 2 * e + g; }

    // V^T: where key k of a tile sits in its row, the first key of V group `grp` (4 keys, VSTEP apart, at 4
    // consecutive positions), and byte `pos` of V^T row d in LDS.
    KILN_DEVICE static constexpr int vt_pos(int k) {
        const int r = k % 16;
        return GEN == 12 ? (BN / 2) * (r / 8) + 8 * (k / 16) + r % 8 : 16 * (k / 16) + 8 * (r % 2) + r / 2;
    }
    KILN_DEVICE static constexpr int v_key0(int grp) {
        return GEN == 12 ? 4 * grp : 16 * (grp / 4) + 8 * (grp % 4 / 2) + grp % 2;
    }
    KILN_DEVICE static int vt_offset(int d, int pos) { return Kv::vt_offset(d, pos); }

#if KILN_ATTN_WMMA_GEN == 11
    // 16 fp8 values (4 words) as 8 words of f16 pairs, in order.
    KILN_DEVICE static void widen(uint32_t (&out)[8], uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
        const uint32_t w[4] = {w0, w1, w2, w3};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            out[2 * i] = Upcast<T8, kiln_f16>::pair(w[i], 0);
            out[2 * i + 1] = Upcast<T8, kiln_f16>::pair(w[i], 1);
        }
    }
#endif

    // S^T = K Q^T for the tile in `buf`: block kb is keys 16 kb .. 16 kb + 15 (rows of A), this lane's query its
    // column. The key blocks are the inner loop: consecutive instructions do not wait on each other's accumulators.
    KILN_DEVICE static void scores(f32x8 (&s)[NKB], const State &st, const uint8_t *buf, const uint8_t *qs, int qrow,
                                   int col, int g) {
#if KILN_ATTN_WMMA_GEN == 12
        (void)qs, (void)qrow;
#pragma unroll
        for (int j = 0; j < D / 32; ++j)  // one 16-byte read: instructions 2j and 2j + 1
#pragma unroll
            for (int kb = 0; kb < NKB; ++kb) {
                const u32x4 x = *(const u32x4 *)(buf + KTile::offset(16 * kb + col, (D / 2) * g + 16 * j));
                s[kb] = WmmaFp8Pair<T8, T8>::run(i32x2{(int)x.x, (int)x.y},
                                                 i32x2{(int)st.q[4 * j], (int)st.q[4 * j + 1]}, s[kb]);
                s[kb] = WmmaFp8Pair<T8, T8>::run(i32x2{(int)x.z, (int)x.w},
                                                 i32x2{(int)st.q[4 * j + 2], (int)st.q[4 * j + 3]}, s[kb]);
            }
#else
        (void)st, (void)g;
#pragma unroll 4
        for (int j = 0; j < NDB; ++j) {  // instruction j: d = 16j .. 16j + 15 (unrolled 4 times: header comment)
            const u32x4 y = *(const u32x4 *)(qs + QTile::offset(qrow, 16 * j));
            uint32_t qh[8];
            widen(qh, y.x, y.y, y.z, y.w);
#pragma unroll
            for (int kb = 0; kb < NKB; ++kb) {
                const u32x4 x = *(const u32x4 *)(buf + KTile::offset(16 * kb + col, 16 * j));
                uint32_t kh[8];
                widen(kh, x.x, x.y, x.z, x.w);
                WmmaF16<11>::run(s[kb], kh, qh);
            }
        }
#endif
    }

    // P (the exponentials in s) as B operands, then O^T += V^T P^T: d block n is rows 16 n .. 16 n + 15 of A (V^T).
    KILN_DEVICE static void accumulate(State &st, const f32x8 (&s)[NKB], const uint8_t *buf, int lane, int col, int g) {
#if KILN_ATTN_WMMA_GEN == 12
        (void)lane;
        int pk[NKB][2];  // block kb's 8 values as e4m3, 4 per word
#pragma unroll
        for (int kb = 0; kb < NKB; ++kb) {
            pk[kb][0] = __builtin_amdgcn_cvt_pk_fp8_f32(s[kb][0], s[kb][1], 0, false);
            pk[kb][0] = __builtin_amdgcn_cvt_pk_fp8_f32(s[kb][2], s[kb][3], pk[kb][0], true);
            pk[kb][1] = __builtin_amdgcn_cvt_pk_fp8_f32(s[kb][4], s[kb][5], 0, false);
            pk[kb][1] = __builtin_amdgcn_cvt_pk_fp8_f32(s[kb][6], s[kb][7], pk[kb][1], true);
        }
#pragma unroll
        for (int j = 0; j < NKB / 2; ++j)  // one 16-byte read: blocks 2j and 2j + 1
#pragma unroll
            for (int n = 0; n < NDB; ++n) {
                const u32x4 x = *(const u32x4 *)(buf + vt_offset(16 * n + col, (BN / 2) * g + 16 * j));
                st.o[n] = WmmaFp8Pair<T8, kiln_e4m3>::run(i32x2{(int)x.x, (int)x.y},
                                                          i32x2{pk[2 * j][0], pk[2 * j][1]}, st.o[n]);
                st.o[n] = WmmaFp8Pair<T8, kiln_e4m3>::run(i32x2{(int)x.z, (int)x.w},
                                                          i32x2{pk[2 * j + 1][0], pk[2 * j + 1][1]}, st.o[n]);
            }
#else
#pragma unroll
        for (int kb = 0; kb < NKB; ++kb) {
            uint32_t pb[8];  // block kb's 16 keys as f16 pairs: words 0-3 half 0's items, 4-7 half 1's
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const uint32_t mine = pack_halves<kiln_f16>(s[kb][2 * w], s[kb][2 * w + 1]);
                const uint32_t other = lane_read(mine, lane ^ 16);
                pb[w] = g ? other : mine;
                pb[w + 4] = g ? mine : other;
            }
#pragma unroll
            for (int n = 0; n < NDB; ++n) {
                const u32x4 x = *(const u32x4 *)(buf + vt_offset(16 * n + col, 16 * kb));
                uint32_t vh[8];
                widen(vh, x.x, x.y, x.z, x.w);
                WmmaF16<11>::run(st.o[n], vh, pb);
            }
        }
#endif
    }

    // One key tile for one wave. With mask, keys at or past lim (this lane's query's limit) are masked.
    KILN_DEVICE static void tile(State &st, const uint8_t *buf, const uint8_t *qs, int wave, int lane, int n0,
                                 bool mask, int lim, float sl2) {
        const int col = lane % 16, g = lane / 16;
        f32x8 s[NKB];
#pragma unroll
        for (int kb = 0; kb < NKB; ++kb) s[kb] = f32x8{};
        scores(s, st, buf, qs, 16 * wave + col, col, g);
        if (mask) {
#pragma unroll
            for (int kb = 0; kb < NKB; ++kb)
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    if (n0 + 16 * kb + acc_row(g, e) >= lim) s[kb][e] = -__builtin_inff();
        }

        // Online softmax. m: max of the raw scores; p = 2^(s * sl2 - (m * sl2 - 8)) = 256 * exp(scaled s - scaled m).
        float mx = st.m;
#pragma unroll
        for (int kb = 0; kb < NKB; ++kb)
#pragma unroll
            for (int e = 0; e < 8; ++e) mx = __builtin_fmaxf(mx, s[kb][e]);
        mx = __builtin_fmaxf(mx, lane_read(mx, lane ^ 16));
        attn_softmax<PLOG2, 8>(st, s, mx, sl2);
        accumulate(st, s, buf, lane, col, g);
    }

    // The K/V tile at key n0 (kiln_attn_amd.h's AttnKvTile): V group grp is keys v_key0(grp) + VSTEP j, at V^T
    // position vt_pos.
    KILN_DEVICE static void read_tile(Regs &r, const kiln_attn_params &p, const AttnBlock &w, int n0, int tid) {
        Kv::template read<VSTEP>(r, attn_k(p, w), attn_v(p, w), p.k_stride_s, p.v_stride_s, n0, w.sq.len_k, tid,
                                 v_key0);
    }
    KILN_DEVICE static void write_tile(uint8_t *buf, const Regs &r, const AttnBlock &w, int n0, int tid) {
        Kv::template write<VSTEP>(buf, r, n0, w.sq.len_k, tid, v_key0, vt_pos);
    }

    KILN_DEVICE static void run(const kiln_attn_params &p, uint8_t *lds) {
        const int tid = thread_x(), lane = tid % 32, wave = tid / 32;
        AttnBlock w;
        if (!attn_block<BM, BN>(p, w)) return;
        const int m0 = w.m0, len_q = w.sq.len_q;
        const float sl2 = w.sl2;

        // This lane's query row and its half's D/2 bytes of Q (zero past the sequence: finite scores, never stored),
        // kept in registers (gfx12) or written to the wave's rows of the Q tile in LDS (gfx11).
        const int wr0 = m0 + 16 * wave, row = wr0 + lane % 16, g = lane / 16;
        uint8_t *qs = lds + Q_OFFSET;
        State st;
#pragma unroll
        for (int j = 0; j < QW / 4; ++j) {
            const u32x4 x = q_chunk(attn_q(p, w), p.q_stride_s, row, len_q, (D / 2) * g + 16 * j);
            if constexpr (Q_LDS)
                *(u32x4 *)(qs + QTile::offset(16 * wave + lane % 16, (D / 2) * g + 16 * j)) = x;
            else
                st.q[4 * j] = x.x, st.q[4 * j + 1] = x.y, st.q[4 * j + 2] = x.z, st.q[4 * j + 3] = x.w;
        }
#pragma unroll
        for (int n = 0; n < NDB; ++n) st.o[n] = f32x8{};
        st.m = -__builtin_inff();
        st.l = 0.f;
        const int lim = w.keys.limit(row);  // keys at or past lim are masked

        Regs r;
        if (w.n_tiles > 0) {
            read_tile(r, p, w, 0, tid);
            write_tile(lds, r, w, 0, tid);
        }
        barrier();  // tile 0 (and gfx11's Q) in LDS
        for (int t = 0; t < w.n_tiles; ++t) {
            const bool more = t + 1 < w.n_tiles;
            if (more) read_tile(r, p, w, (t + 1) * BN, tid);  // in flight
            const int n0 = t * BN;
            // Wave-uniform: skip tiles no row of this wave sees; mask only tiles crossing the end or the diagonal.
            const bool active = wr0 < len_q && w.keys.seen(n0, wr0 + 15);
            const bool mask = w.keys.crossed(n0, BN, wr0);
            if (active) tile(st, lds + (NBUF == 2 ? t & 1 : 0) * BUF_BYTES, qs, wave, lane, n0, mask, lim, sl2);
            if (more) {
                if (NBUF == 1) barrier();  // every wave has left the only buffer
                write_tile(lds + (NBUF == 2 ? (t + 1) & 1 : 0) * BUF_BYTES, r, w, (t + 1) * BN, tid);
            }
            barrier();  // tile t+1 is in LDS for every wave; with 2 buffers, every wave has left buffer t & 1
        }
        epilogue(p, st, lane, row, w);
    }

    // The row sum over the two halves, O normalised and stored (8 d per lane and block: two 8-byte stores), the lse.
    // The lane exchanges come before any lane leaves (a wave's lanes all take part in each).
    KILN_DEVICE static void epilogue(const kiln_attn_params &p, State &st, int lane, int row,
                                     const AttnBlock &w) {
        const float l = st.l + lane_read(st.l, lane ^ 16);
        const int g = lane / 16;
#if KILN_ATTN_WMMA_GEN == 11
        // Half g holds d = 2e + g of each block; afterwards o[n][2t] and o[n][2t + 1] are d = 8g + 2t and 8g + 2t + 1.
#pragma unroll
        for (int n = 0; n < NDB; ++n) {
            float got[4];
#pragma unroll
            for (int t = 0; t < 4; ++t) got[t] = lane_read(st.o[n][t + 4 * (1 - g)], lane ^ 16);
            f32x8 x;
#pragma unroll
            for (int t = 0; t < 4; ++t) {
                const float mine = st.o[n][t + 4 * g];
                x[2 * t] = g ? got[t] : mine;
                x[2 * t + 1] = g ? mine : got[t];
            }
            st.o[n] = x;
        }
#endif
        if (row >= w.sq.len_q) return;
        const float inv = l > 0.f ? attn_descale(p.v_descale, w.di) / l : 0.f;
        uint8_t *orow = attn_out_row<TO>(p, w, row);
#pragma unroll
        for (int n = 0; n < NDB; ++n)
#pragma unroll
            for (int e = 0; e < 8; e += 4) attn_store_out4<TO>(orow, 16 * n + 8 * g + e, st.o[n], e, inv);
        if (p.lse && g == 0) attn_store_lse<PLOG2>(p, w, row, st.m, l);
    }
};

template <class C> KILN_DEVICE void attn_wmma(const kiln_attn_params &p) { AttnWmma<C>::run(p, kiln_amd_lds); }

}  // namespace kiln

// One extern "C" kernel per config (one per translation unit in generated code).
#define KILN_ATTN_WMMA_KERNEL(NAME, CFG)                                                                              \
    KILN_KERNEL __attribute__((amdgpu_flat_work_group_size(2 * CFG::BM, 2 * CFG::BM),                                \
                               amdgpu_waves_per_eu(CFG::OCC))) void NAME(const kiln_attn_params p) {                  \
        kiln::attn_wmma<CFG>(p);                                                                                      \
    }

#endif  // KILN_ATTN_WMMA_H
