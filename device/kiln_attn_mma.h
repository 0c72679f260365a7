// The mma family's FP8 attention forward (sm_89 design; runs unchanged on sm_90a): FlashAttention-2's loop with
// FlashAttention-3's FP8 recipe, on mma.sync.m16n8k32 fp8 tensor-core instructions.
//
//   CTA: BM = 16 * WARPS query rows of one (sequence, query head); each warp owns 16 rows end to end.
//   global --cp.async (16 B, zero-filled past the sequence)--> shared: Q once, K and V tiles of BN keys in 2 stages
//   S = Q K^T      m16n8k32 fp8 x fp8, Q fragments held in registers, K fragments by ldmatrix
//   online softmax in base 2 (scale * log2(e) folded, O rescaled only when a row's max moves)
//   P = 256 * exp2(...)  requantized to e4m3 in registers (the S accumulators become A fragments, no shuffles)
//   O += P V       m16n8k32 e4m3 x fp8, V fragments by ldmatrix.trans + byte permutes (see "V" below)
//   O = O / rowsum * v_descale  -> f16/bf16, 8-byte stores; lse = ln(sum exp(scaled scores)) if requested
//
// Fragments of mma.m16n8k32 (8-bit A/B), g = lane / 4, q = lane % 4 (PTX ISA, "Matrix Fragments for mma.m16n8k32"):
//   A (16 x 32, 4 regs of 4 bytes): a0 row g, k 4q..4q+3; a1 row g+8, same k; a2 row g, k 16+4q..; a3 row g+8, k 16+4q..
//   B (32 x 8, 2 regs):             b0 k 4q..4q+3 of column g; b1 k 16+4q..16+4q+3 of column g
//   C (16 x 8 f32, 4 regs):         c0, c1 row g, columns 2q, 2q+1; c2, c3 row g+8
//
// P as an A fragment. S's accumulators for keys 8j..8j+7 give lane (g, q) keys 8j+2q, 8j+2q+1 of rows g and g+8. For
// the 32 keys of one P.V step (key blocks j = 0..3) the lane packs, for row g,
//   a0 = keys {2q, 2q+1, 8+2q, 9+2q}   (block 0's c0 c1, block 1's c0 c1)      a2 = the same + 16 (blocks 2, 3)
// and a1, a3 likewise from c2 c3 (row g+8). So mma k index 4q+i of each 16-key half stands for key
// (i/2)*8 + 2q + i%2: a permutation of the 32 keys, harmless as long as V's rows are read in the same order.
//
// V as a B fragment. The B operand wants 4 consecutive k (= keys) of one column (= head-dim index) in a register, but
// V is stored [key][D]. ldmatrix.trans on 16-bit units of the V tile gives lane (g, q), from an 8-key x 16-byte
// matrix, the bytes V[2q][2g], V[2q][2g+1], V[2q+1][2g], V[2q+1][2g+1] (keys relative to the matrix, columns relative
// to the 16-byte block). One .x4 load over keys 0-7, 8-15, 16-23, 24-31 of a 32-key step gives r0..r3; then
//   prmt(r0, r1, 0x6420) = keys {2q, 2q+1, 8+2q, 9+2q} of column 2g      (b0 of the "even" mma)
//   prmt(r0, r1, 0x7531) = the same keys of column 2g+1                    (b0 of the "odd" mma)
//   prmt(r2, r3, ...)    = keys + 16                                        (b1 of both)
// exactly P's key order. The even mma's output column n is head-dim 2n of the 16-column block, the odd one's 2n+1,
// so lane (g, q) ends holding head-dim 4q..4q+3 of rows g and g+8 in (even c0, odd c0, even c1, odd c1): one 8-byte
// store per row and block. No transposed copy of V is made and shared memory is read with ldmatrix only.
//
// P's scale: P in [0, 1] is stored as 256 * P (256 = 2^8 is exact in e4m3; e4m3's normals start at 2^-6, so
// probabilities down to 2^-14 keep 3 mantissa bits instead of falling into subnormals). The 2^8 is folded into the
// exponent (exp2(x + 8)) and the row sum is accumulated from the same scaled (unrounded) values, so it cancels in
// O = acc / rowsum; v_descale is applied in that one multiply, q_descale * k_descale in the exponent's scale.
// Accuracy note: rounding P to e4m3 (3 mantissa bits) alone gives a relative L2 error of about 2.5% against an exact
// softmax when attention is diffuse and V has no mean (iid normal data); peaked attention or V with a mean fare better.
//
// Shared memory: stage s (0, 1) holds K then V, BN x D bytes each, in kiln's swizzled LdsTile layout (16-byte chunk
// c of row r at c ^ ((r / line_rows) mod period)), which makes the Q and K ldmatrix (8 rows at one chunk) and the V
// ldmatrix.trans (8 consecutive keys at one chunk) conflict-free. Q is staged over stage 1 before the loop starts.
//
// A translation unit instantiates one config (the generator will emit one per kernel):
//   struct Cfg { static constexpr int D = 128, BM = 128, BN = 64, WARPS = 8, MIN_BLOCKS = 1;
//                using T8 = kiln_e4m3; using TO = kiln_bf16; };
//   KILN_ATTN_MMA_KERNEL(kiln_attn_fwd_d128_e4m3_bf16, Cfg)
// and is launched with grid (ceil(seqlen_q / BM), heads_q, batch), block 32 * WARPS, kiln::AttnMma<Cfg>::SMEM_BYTES
// bytes of dynamic shared memory (above 48 KiB: cudaFuncAttributeMaxDynamicSharedMemorySize / the driver's attribute).
#ifndef KILN_ATTN_MMA_H
#define KILN_ATTN_MMA_H

#include "abi/kiln_attn_abi.h"
#include "kiln_attn_common.h"  // attn_seq, attn_descale, attn_sl2 (FRESH: read again by the epilogue)
#include "kiln_gemm_mma.h"  // LdsTile, load_tile (and kiln_mma_ptx.h: cp.async, ldmatrix, fp8 mma)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
#error "kiln_attn_mma.h needs sm_89 or newer (fp8 mma.sync)"
#endif

namespace kiln {

KILN_DEVICE float fast_exp2(float x) {  // 2^x, ex2.approx (2 ulp); -inf -> +0
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// Four floats -> four e4m3 bytes (round to nearest even, saturating to +-448), x0 in the lowest byte.
// cvt's second source lands in the low byte of each pair.
KILN_DEVICE uint32_t f32x4_to_e4m3x4(float x0, float x1, float x2, float x3) {
    uint32_t r;
    asm("{\n.reg .b16 lo, hi;\n"
        "cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n"
        "cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
        "mov.b32 %0, {lo, hi};\n}\n"
        : "=r"(r)
        : "f"(x0), "f"(x1), "f"(x2), "f"(x3));
    return r;
}

template <class T> struct PackOut;
template <> struct PackOut<kiln_bf16> {
    KILN_DEVICE static uint32_t pair(float lo, float hi) {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&v);
    }
};
template <> struct PackOut<kiln_f16> {
    KILN_DEVICE static uint32_t pair(float lo, float hi) {
        __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&v);
    }
};

// What the NVIDIA epilogues (mma and wgmma families) need of (sequence b, query head h), read again at the end of the
// kernel (FRESH) rather than kept live through the key loop: the sequence, O's head, v_descale and sl2; store_lse
// writes a row's lse from its raw-score max m and its row sum l (P scaled by 2^8; -inf for a row that saw no key).
template <class TO> struct AttnOut {
    AttnSeq sq;
    TO *o;  // row 0 of head h of sequence b
    float vd, sl2;
    int b, h;
    KILN_DEVICE AttnOut(const kiln_attn_params &p, int b_, int h_) : b(b_), h(h_) {
        sq = attn_seq<true>(p, b);
        const int64_t di = attn_descale_index(p, b, h);
        vd = attn_descale<true>(p.v_descale, di);
        sl2 = attn_sl2<true>(p, di);
        o = (TO *)p.o + (p.cu_seqlens_q ? sq.q_first * p.o_stride_s : b * p.o_stride_b) + h * p.o_stride_h;
    }
    // v_descale and sl2 as the caller holds them (no loads behind the O stores' first use)
    KILN_DEVICE AttnOut(const kiln_attn_params &p, int b_, int h_, float vd_, float sl2_)
        : vd(vd_), sl2(sl2_), b(b_), h(h_) {
        sq = attn_seq<true>(p, b);
        o = (TO *)p.o + (p.cu_seqlens_q ? sq.q_first * p.o_stride_s : b * p.o_stride_b) + h * p.o_stride_h;
    }
    KILN_DEVICE void store_lse(const kiln_attn_params &p, int row, float m, float l) const {
        float *lse = p.lse + (p.cu_seqlens_q ? sq.q_first : b * p.lse_stride_b) + h * p.lse_stride_h + row;
        *lse = l > 0.f ? (m * sl2 - 8.f + log2f(l)) * 0.6931471805599453f : -INFINITY;
    }
};

// The row sum of a row held by 4 lanes (a quad): each lane's share added over the quad.
KILN_DEVICE float quad_sum(float l) {
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    return l + __shfl_xor_sync(0xffffffffu, l, 2);
}

// Config C: D (64, 128, 256), BM = 16 * WARPS, BN (multiple of 32), WARPS, MIN_BLOCKS (launch bounds),
// T8 (kiln_e4m3 or kiln_e5m2: Q, K and V), TO (kiln_bf16 or kiln_f16).
template <class C> struct AttnMma {
    static constexpr int D = C::D, BM = C::BM, BN = C::BN, WARPS = C::WARPS, THREADS = 32 * WARPS;
    static constexpr int KSTEPS = D / 32;  // k32 steps of S = Q K^T
    static constexpr int NB = BN / 8;      // 8-key column blocks of S
    static constexpr int PSTEPS = BN / 32; // k32 steps of O += P V
    static constexpr int DB = D / 16;      // 16-column blocks of O (an even and an odd mma each)
    using T8 = typename C::T8;
    using TO = typename C::TO;
    using QTile = LdsTile<BM, D, D, true>;
    using KVTile = LdsTile<BN, D, D, true>;
    static constexpr int KV_BYTES = KVTile::BYTES, STAGE_BYTES = 2 * KV_BYTES;
    // Stage 0, then stage 1 overlaid by Q (read once, before the loop).
    static constexpr int SMEM_BYTES = STAGE_BYTES + (STAGE_BYTES > QTile::BYTES ? STAGE_BYTES : QTile::BYTES);
    static_assert(D == 64 || D == 128 || D == 256, "head dim 64, 128 or 256");
    static_assert(BM == 16 * WARPS, "each warp owns 16 query rows");
    static_assert(BN % 32 == 0 && BN >= 32, "key tiles are whole k32 steps of P V");

    // Per-thread state: Q fragments, O accumulators (even/odd mma of each 16-column block), and for rows g, g+8 the
    // running max of the raw scores and this lane's share of the row sum (reduced over the quad at the end).
    struct State {
        uint32_t q[KSTEPS][4];
        float o[DB][2][4];
        float m[2], l[2];
    };

    template <class Tile> KILN_DEVICE static int swz(int row) {
        return (row / Tile::LINE_ROWS) & (Tile::PERIOD - 1);
    }

    // Q's A fragment of k step ks for this warp: ldmatrix.x4 matrices rows 0-7 chunk lo, rows 8-15 lo, rows 0-7 hi,
    // rows 8-15 hi -> a0, a1, a2, a3.
    KILN_DEVICE static void load_q(uint32_t (&a)[4], const uint8_t *sq, int warp, int lane, int ks) {
        const int lq = (lane & 7) + ((lane >> 3) & 1) * 8;
        const int qx = (lane >> 4) ^ swz<QTile>(lq);
        ldmatrix_x4(a, sq + (warp * 16 + lq) * D + (((2 * ks) ^ qx) << 4));
    }

    // One key tile for one warp. With mask, keys at or past lim[h] are masked for row g + 8h. (One body with a
    // warp-uniform branch rather than two instantiations: the two copies cost registers.)
    KILN_DEVICE static void tile(State &st, const uint8_t *sk, const uint8_t *sv, int lane, int n0, bool mask,
                                 const int (&lim)[2], float sl2) {
        using MmaQK = Mma<MmaF8<T8, T8>>;
        using MmaPV = Mma<MmaF8<kiln_e4m3, T8>>;
        // S = Q K^T. ldmatrix.x4 matrices: keys 0-7 chunk lo, keys 0-7 chunk hi, keys 8-15 lo, 8-15 hi of a 16-key pair
        // -> b0, b1 of key block 2np and of 2np+1 (the 16 bytes of a chunk are k 4q..4q+3 for lane (g, q)).
        float s[NB][4];
#pragma unroll
        for (int j = 0; j < NB; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[j][e] = 0.f;
        const int lk = (lane & 7) + (lane >> 4) * 8;
        const int kx = ((lane >> 3) & 1) ^ swz<KVTile>(lk);  // chunk 2ks + hi, swizzled: (2ks) ^ kx
        const uint8_t *kp = sk + lk * D;
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks)
#pragma unroll
            for (int np = 0; np < NB / 2; ++np) {
                uint32_t r[4];
                ldmatrix_x4(r, kp + np * 16 * D + (((2 * ks) ^ kx) << 4));
                const uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
                MmaQK::run(s[2 * np], st.q[ks], b0);
                MmaQK::run(s[2 * np + 1], st.q[ks], b1);
            }

        if (mask) {
#pragma unroll
            for (int j = 0; j < NB; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (n0 + j * 8 + 2 * (lane & 3) + (e & 1) >= lim[e >> 1]) s[j][e] = -INFINITY;
        }

        // Online softmax. m: max of raw scores; p = 2^(s * sl2 - (m * sl2 - 8)) = 256 * exp(scaled s - scaled m).
        float shift[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float mx = st.m[h];
#pragma unroll
            for (int j = 0; j < NB; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * h], s[j][2 * h + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            if (mx != st.m[h]) {  // the max moved (-inf -> finite included: O and l are still 0 then)
                const float corr = fast_exp2((st.m[h] - mx) * sl2);
                st.l[h] *= corr;
#pragma unroll
                for (int t = 0; t < DB; ++t)
#pragma unroll
                    for (int eo = 0; eo < 2; ++eo) st.o[t][eo][2 * h] *= corr, st.o[t][eo][2 * h + 1] *= corr;
                st.m[h] = mx;
            }
            shift[h] = mx == -INFINITY ? 0.f : mx * sl2 - 8.f;  // a row with nothing visible yet: p = 2^-inf = 0
        }
        float rs[2] = {0.f, 0.f};
#pragma unroll
        for (int j = 0; j < NB; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                s[j][e] = fast_exp2(fmaf(s[j][e], sl2, -shift[e >> 1]));
                rs[e >> 1] += s[j][e];
            }
        st.l[0] += rs[0];
        st.l[1] += rs[1];

        // O += P V, 32 keys per step. P's A fragment straight from the S accumulators (key order in the header).
        const int vx = swz<KVTile>(lane);
        const uint8_t *vp = sv + lane * D;  // ldmatrix row address: key 8 * (lane / 8) + lane % 8 = lane of the step
#pragma unroll
        for (int kk = 0; kk < PSTEPS; ++kk) {
            const float(*c)[4] = s + 4 * kk;
            const uint32_t a[4] = {f32x4_to_e4m3x4(c[0][0], c[0][1], c[1][0], c[1][1]),
                                   f32x4_to_e4m3x4(c[0][2], c[0][3], c[1][2], c[1][3]),
                                   f32x4_to_e4m3x4(c[2][0], c[2][1], c[3][0], c[3][1]),
                                   f32x4_to_e4m3x4(c[2][2], c[2][3], c[3][2], c[3][3])};
#pragma unroll
            for (int t = 0; t < DB; ++t) {
                uint32_t r[4];
                ldmatrix_x4_trans(r, vp + kk * 32 * D + ((t ^ vx) << 4));
                const uint32_t be[2] = {__byte_perm(r[0], r[1], 0x6420), __byte_perm(r[2], r[3], 0x6420)};
                const uint32_t bo[2] = {__byte_perm(r[0], r[1], 0x7531), __byte_perm(r[2], r[3], 0x7531)};
                MmaPV::run(st.o[t][0], a, be);
                MmaPV::run(st.o[t][1], a, bo);
            }
        }
    }

    KILN_DEVICE static void run(const kiln_attn_params &p, uint8_t *smem) {
        const int tid = thread_x(), lane = tid & 31, warp = tid >> 5;
        const int b = (int)blockIdx.z, h = (int)blockIdx.y;
        // Causal blocks further down see more keys: start those first.
        const int m0 = (p.causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x) * BM;
        const bool varlen = p.cu_seqlens_q != nullptr;
        const AttnSeq sq0 = attn_seq<true>(p, b);
        const int len_q = sq0.len_q, len_k = sq0.len_k;
        if (m0 >= len_q) return;
        const int kvh = h / (p.heads_q / p.heads_kv);
        const int64_t di = attn_descale_index(p, b, h);

        const uint8_t *gq = (const uint8_t *)p.q + (varlen ? sq0.q_first * p.q_stride_s : b * p.q_stride_b) +
                            h * p.q_stride_h;
        const uint8_t *gk = (const uint8_t *)p.k + (varlen ? sq0.k_first * p.k_stride_s : b * p.k_stride_b) +
                            kvh * p.k_stride_h;
        const uint8_t *gv = (const uint8_t *)p.v + (varlen ? sq0.k_first * p.v_stride_s : b * p.v_stride_b) +
                            kvh * p.v_stride_h;
        // Softmax in base 2: exp(scale * qd * kd * s) = 2^(s * sl2).
        const float sl2 = attn_sl2<true>(p, di);

        // Keys this block sees: causal row i sees keys <= i + off.
        const int off = len_k - len_q;
        const int n_end = p.causal ? min(len_k, m0 + BM + off) : len_k;
        const int n_tiles = n_end > 0 ? (n_end + BN - 1) / BN : 0;

        auto load_kv = [&](int stage, int n0) {
            uint8_t *dst = smem + stage * STAGE_BYTES;
            load_tile<KVTile, BN, D, 16, THREADS>(dst, gk, p.k_stride_s, n0, len_k, 0, D, tid);
            load_tile<KVTile, BN, D, 16, THREADS>(dst + KV_BYTES, gv, p.v_stride_s, n0, len_k, 0, D, tid);
        };

        // Prologue: Q and tile 0; Q fragments to registers (then stage 1, which Q overlays, is free after the barrier).
        uint8_t *sq = smem + STAGE_BYTES;
        load_tile<QTile, BM, D, 16, THREADS>(sq, gq, p.q_stride_s, m0, len_q, 0, D, tid);
        if (n_tiles > 0) load_kv(0, 0);
        cp_async_commit();
        cp_async_wait<0>();
        barrier();
        State st;
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks) load_q(st.q[ks], sq, warp, lane, ks);
        barrier();
#pragma unroll
        for (int t = 0; t < DB; ++t)
#pragma unroll
            for (int eo = 0; eo < 2; ++eo)
#pragma unroll
                for (int e = 0; e < 4; ++e) st.o[t][eo][e] = 0.f;
        st.m[0] = st.m[1] = -INFINITY;
        st.l[0] = st.l[1] = 0.f;

        const int g = lane >> 2;
        const int wr0 = m0 + warp * 16;  // this warp's first row (relative to the sequence)
        int lim[2];                      // per row: keys at or past lim are masked
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) lim[hh] = p.causal ? min(len_k, wr0 + g + 8 * hh + off + 1) : len_k;

        for (int t = 0; t < n_tiles; ++t) {
            if (t + 1 < n_tiles) load_kv((t + 1) & 1, (t + 1) * BN);
            cp_async_commit();
            const uint8_t *sk = smem + (t & 1) * STAGE_BYTES;
            const int n0 = t * BN;
            // Warp-uniform: skip tiles no row of this warp sees; mask only tiles that cross the end or the diagonal.
            const bool active = wr0 < len_q && (!p.causal || n0 <= wr0 + 15 + off);
            const bool mask = n0 + BN > len_k || (p.causal && n0 + BN - 1 > wr0 + off);
            if (active) tile(st, sk, sk + KV_BYTES, lane, n0, mask, lim, sl2);
            cp_async_wait<0>();
            barrier();  // tile t+1 landed for every warp; every warp left stage t & 1 (refilled next iteration)
        }
        epilogue(p, st);
    }

    // Finish the row sums, normalise, store O (8 bytes per row and 16-column block) and the lse.
    // Everything but the State is derived again here, so that nothing else stays live through the key loop.
    KILN_DEVICE static void epilogue(const kiln_attn_params &p, const State &st) {
        const int tid = thread_x(), q4 = tid & 3, b = (int)blockIdx.z, h = (int)blockIdx.y;
        const int m0 = (p.causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x) * BM;
        const int row_g = m0 + (tid >> 5) * 16 + ((tid & 31) >> 2);
        const AttnOut<TO> out(p, b, h);
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            const float l = quad_sum(st.l[hh]);
            const int row = row_g + 8 * hh;
            if (row >= out.sq.len_q) continue;
            const float inv = l > 0.f ? out.vd / l : 0.f;
            TO *orow = out.o + row * p.o_stride_s + 4 * q4;
#pragma unroll
            for (int t = 0; t < DB; ++t) {
                uint2 v;
                v.x = PackOut<TO>::pair(st.o[t][0][2 * hh] * inv, st.o[t][1][2 * hh] * inv);
                v.y = PackOut<TO>::pair(st.o[t][0][2 * hh + 1] * inv, st.o[t][1][2 * hh + 1] * inv);
                *reinterpret_cast<uint2 *>(orow + 16 * t) = v;
            }
            if (p.lse && q4 == 0) out.store_lse(p, row, st.m[hh], l);
        }
    }
};

template <class C> KILN_DEVICE void attn_mma(const kiln_attn_params &p) {
    extern __shared__ __align__(128) uint8_t kiln_lds[];
    AttnMma<C>::run(p, kiln_lds);
}

}  // namespace kiln

// One extern "C" kernel per config (one per translation unit in generated code).
#define KILN_ATTN_MMA_KERNEL(NAME, CFG)                                                                               \
    KILN_KERNEL void __launch_bounds__(32 * CFG::WARPS, CFG::MIN_BLOCKS) NAME(const kiln_attn_params p) {            \
        kiln::attn_mma<CFG>(p);                                                                                       \
    }

#endif  // KILN_ATTN_MMA_H
