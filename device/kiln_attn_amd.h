// What the two AMD FP8 attention forwards (kiln_attn_mfma.h: gfx942 wave64 MFMA; kiln_attn_wmma.h: RDNA wave32 WMMA)
// share: where a workgroup's rows are (batch or varlen), the descales, the causal key range, the global K/V tile reads
// from rows clamped into the sequence and their local writes (K as it is, V transposed into a swizzled V^T), lane
// exchanges, the online softmax step, and the epilogue's stores and lse. The products, the operand layouts and the
// tile loop stay in the family headers: the first two are what differs, and the loop is written out in each kernel
// because passing the per-tile compute into a shared loop changed the compiler's register allocation.
#ifndef KILN_ATTN_AMD_H
#define KILN_ATTN_AMD_H

#include "abi/kiln_attn_abi.h"
#include "kiln_amd_lds.h"  // u32x4, LdsTile, ceil_div
#include "kiln_attn_common.h"  // AttnSeq, attn_seq, attn_descale, attn_sl2
#include "kiln_device.h"

namespace kiln {

// x of lane `from` (a ds_bpermute: no LDS is allocated or touched).
KILN_DEVICE float lane_read(float x, int from) {
    return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(from << 2, __builtin_bit_cast(int, x)));
}
KILN_DEVICE uint32_t lane_read(uint32_t x, int from) {
    return (uint32_t)__builtin_amdgcn_ds_bpermute(from << 2, (int)x);
}

// Two floats as one 32-bit word of 16-bit T (kiln_f16 or kiln_bf16), lo in the low half.
template <class T> KILN_DEVICE uint32_t pack_halves(float lo, float hi) {
    return (uint32_t)__builtin_bit_cast(uint16_t, (T)lo) | (uint32_t)__builtin_bit_cast(uint16_t, (T)hi) << 16;
}

// The first query row of this workgroup (BM rows): causal blocks further down see more keys, so they start first.
template <int BM> KILN_DEVICE int attn_first_row(const kiln_attn_params &p) {
    const int bx = block_x(), blocks = (p.seqlen_q + BM - 1) / BM;
    return (p.causal ? blocks - 1 - bx : bx) * BM;
}

// One tile's online softmax for a lane's query row, in base 2: the row max of the raw scores moved to mx (over the
// lanes sharing the row) rescales O and the row sum; the ITEMS scores of each of the NKB accumulators in s become
// p = 2^(s * sl2 - (mx * sl2 - PLOG2)) = 2^PLOG2 * exp(scaled s - scaled max), added to this lane's share of the sum.
template <int PLOG2, int ITEMS, class State, class Acc, int NKB>
KILN_DEVICE void attn_softmax(State &st, Acc (&s)[NKB], float mx, float sl2) {
    if (mx != st.m) {  // the max moved (-inf -> finite included: O and l are still 0 then)
        const float corr = __builtin_amdgcn_exp2f((st.m - mx) * sl2);
        st.l *= corr;
#pragma unroll
        for (auto &o : st.o) o *= corr;
        st.m = mx;
    }
    const float shift = mx == -__builtin_inff() ? 0.f : mx * sl2 - PLOG2;  // nothing visible yet: p = 2^-inf = 0
    float rs = 0.f;
#pragma unroll
    for (int kb = 0; kb < NKB; ++kb)
#pragma unroll
        for (int e = 0; e < ITEMS; ++e) {
            s[kb][e] = __builtin_amdgcn_exp2f(__builtin_fmaf(s[kb][e], sl2, -shift));
            rs += s[kb][e];
        }
    st.l += rs;
}

// The keys query rows see: causal row i sees keys <= i + off (aligned bottom right), others all len_k.
struct AttnKeys {
    int off, len_k;
    int causal;  // kiln_attn_params::causal
    // Keys at or past limit(row) are hidden from `row`.
    KILN_DEVICE int limit(int row) const { return causal && row + off + 1 < len_k ? row + off + 1 : len_k; }
    // Whether the tile at key n0 has a key that row `last` sees (rows before `last` see no more).
    KILN_DEVICE bool seen(int n0, int last) const { return !causal || n0 <= last + off; }
    // Whether the tile of bn keys at n0 crosses the sequence's end or the diagonal of row `first`: it must be masked.
    KILN_DEVICE bool crossed(int n0, int bn, int first) const {
        return n0 + bn > len_k || (causal && n0 + bn - 1 > first + off);
    }
};

// What one workgroup works on: BM query rows from m0 of sequence b and query head h (key/value head kvh), the n_tiles
// key tiles of BN keys those rows see, the descale index di and the softmax scale in base 2, sl2:
// exp(scale * qd * kd * s) = 2^(s * sl2).
struct AttnBlock {
    int b, h, kvh, m0, n_tiles;
    bool varlen;
    AttnSeq sq;
    AttnKeys keys;
    int64_t di;
    float sl2;
};
// False when the workgroup has no query rows (its block starts past the end of its sequence).
template <int BM, int BN> KILN_DEVICE bool attn_block(const kiln_attn_params &p, AttnBlock &w) {
    w.b = block_z(), w.h = (int)__builtin_amdgcn_workgroup_id_y();
    w.m0 = attn_first_row<BM>(p);
    w.varlen = p.cu_seqlens_q != nullptr;
    w.sq = attn_seq(p, w.b);
    if (w.m0 >= w.sq.len_q) return false;
    w.kvh = w.h / (p.heads_q / p.heads_kv);
    w.di = w.b * p.descale_stride_b + w.kvh * p.descale_stride_h;
    w.sl2 = attn_sl2(p, w.di);
    w.keys = AttnKeys{w.sq.len_k - w.sq.len_q, w.sq.len_k, p.causal};
    const int n_end = w.keys.limit(w.m0 + BM - 1);
    w.n_tiles = n_end > 0 ? (n_end + BN - 1) / BN : 0;
    return true;
}
// Workgroup w's Q, K and V (computed from the kernel arguments where they are used, so that the loads stay global).
KILN_DEVICE const uint8_t *attn_q(const kiln_attn_params &p, const AttnBlock &w) {
    return (const uint8_t *)p.q + (w.varlen ? w.sq.q_first * p.q_stride_s : w.b * p.q_stride_b) + w.h * p.q_stride_h;
}
KILN_DEVICE const uint8_t *attn_k(const kiln_attn_params &p, const AttnBlock &w) {
    return (const uint8_t *)p.k + (w.varlen ? w.sq.k_first * p.k_stride_s : w.b * p.k_stride_b) + w.kvh * p.k_stride_h;
}
KILN_DEVICE const uint8_t *attn_v(const kiln_attn_params &p, const AttnBlock &w) {
    return (const uint8_t *)p.v + (w.varlen ? w.sq.k_first * p.v_stride_s : w.b * p.v_stride_b) + w.kvh * p.v_stride_h;
}

// The address of byte `byte` of row `row` of a global array, the row clamped into 0 .. rows - 1: every global read is
// issued (no branch around a load, so the compiler's wait counts stay exact). K and V rows at or past len_k are zeroed
// when the tile is written to LDS, so nothing outside the sequence reaches the products (those keys are masked and
// their P is 0, but 0 times a NaN code is NaN); a select right after the load would make it wait before the compute.
KILN_DEVICE const uint8_t *clamped_row(const uint8_t *g, int64_t stride, int row, int rows, int byte) {
    return g + (row < rows ? row : rows - 1) * stride + byte;
}
// 16 bytes of Q row `row`, zero past the sequence (finite scores, never stored).
KILN_DEVICE u32x4 q_chunk(const uint8_t *g, int64_t stride, int row, int rows, int byte) {
    u32x4 x = *(const u32x4 *)clamped_row(g, stride, row, rows, byte);
    if (row >= rows) x = u32x4{0, 0, 0, 0};
    return x;
}

// The global reads and local writes of one K/V tile of BN keys x D bytes by THREADS threads. K travels as 16-byte
// chunks, V as groups of 4 keys x 16 bytes; the family says which 4 keys a group holds (its V^T operand order). In
// LDS, K is an XOR-swizzled LdsTile and V^T follows it: row d holds the tile's keys in the family's order, its 16-byte
// chunks XORed with (d / R) mod BN/16, R = 128 / BN rows sharing a 128-byte bank line, so the 8 rows of one read phase
// cover all 32 banks.
template <int BN, int D, int THREADS> struct AttnKvTile {
    using KTile = LdsTile<BN, D, 0, 0, true>;
    static constexpr int K_BYTES = KTile::BYTES, BYTES = K_BYTES + D * BN;
    static constexpr int CPR = D / 16;  // 16-byte chunks per row
    static constexpr int K_CHUNKS = BN * CPR, V_GROUPS = BN / 4 * CPR;
    static constexpr int KN = ceil_div(K_CHUNKS, THREADS), VN = ceil_div(V_GROUPS, THREADS);
    struct Regs {  // one tile's global reads in flight
        u32x4 k[KN];
        u32x4 v[VN][4];
    };

    // Byte `pos` of V^T row d in the tile's LDS buffer.
    KILN_DEVICE static int vt_offset(int d, int pos) {
        constexpr int CH = BN / 16, R = BN >= 128 ? 1 : 128 / BN;
        return K_BYTES + d * BN + ((((pos >> 4) ^ ((d / R) & (CH - 1))) << 4) | (pos & 15));
    }
    KILN_DEVICE static int k_chunk(int it, int tid) {  // index of K read `it` (a duplicate of read 0 past the tile)
        return K_CHUNKS % THREADS == 0 || tid + it * THREADS < K_CHUNKS ? tid + it * THREADS : 0;
    }
    KILN_DEVICE static int v_group(int it, int tid) {
        return V_GROUPS % THREADS == 0 || tid + it * THREADS < V_GROUPS ? tid + it * THREADS : 0;
    }

    // The global reads of the tile at key n0. KeyOf(group) is the group's first key in the tile, STEP the key stride of
    // its 4 keys.
    template <int STEP, class KeyOf>
    KILN_DEVICE static void read(Regs &r, const uint8_t *gk, const uint8_t *gv, int64_t ks, int64_t vs, int n0,
                                 int len_k, int tid, KeyOf key_of) {
#pragma unroll
        for (int it = 0; it < KN; ++it) {
            const int i = k_chunk(it, tid);
            r.k[it] = *(const u32x4 *)clamped_row(gk, ks, n0 + i / CPR, len_k, 16 * (i % CPR));
        }
#pragma unroll
        for (int it = 0; it < VN; ++it) {
            const int i = v_group(it, tid), key0 = n0 + key_of(i / CPR);
#pragma unroll
            for (int j = 0; j < 4; ++j)
                r.v[it][j] = *(const u32x4 *)clamped_row(gv, vs, key0 + STEP * j, len_k, 16 * (i % CPR));
        }
    }

    // The local writes of the tile at key n0: K chunks as they are; each V group (4 keys, d 16c .. 16c + 15) as 16
    // words, word d holding the 4 keys' bytes of column d (a 4 x 4 byte transpose per 32-bit column of the loads), at
    // V^T position pos_of(first key). Rows at or past len_k are written as zeros.
    template <int STEP, class KeyOf, class PosOf>
    KILN_DEVICE static void write(uint8_t *buf, const Regs &r, int n0, int len_k, int tid, KeyOf key_of, PosOf pos_of) {
        const u32x4 zero = {0, 0, 0, 0};
#pragma unroll
        for (int it = 0; it < KN; ++it) {
            const int i = tid + it * THREADS;
            if (K_CHUNKS % THREADS == 0 || i < K_CHUNKS)
                *(u32x4 *)(buf + KTile::offset(i / CPR, 16 * (i % CPR))) = n0 + i / CPR < len_k ? r.k[it] : zero;
        }
#pragma unroll
        for (int it = 0; it < VN; ++it) {
            const int i = tid + it * THREADS;
            if (V_GROUPS % THREADS != 0 && i >= V_GROUPS) continue;
            const int k0 = key_of(i / CPR), pos = pos_of(k0), d0 = 16 * (i % CPR);
            u32x4 v[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) v[j] = n0 + k0 + STEP * j < len_k ? r.v[it][j] : zero;
#pragma unroll
            for (int w = 0; w < 4; ++w)
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int sh = 8 * b;
                    const uint32_t x = (v[0][w] >> sh & 0xffu) | (v[1][w] >> sh & 0xffu) << 8 |
                                       (v[2][w] >> sh & 0xffu) << 16 | (v[3][w] >> sh & 0xffu) << 24;
                    *(uint32_t *)(buf + vt_offset(d0 + 4 * w + b, pos)) = x;
                }
        }
    }

};

// The epilogue's output row (query `row` of workgroup w's sequence and head) and its lse: ln(sum exp(scaled scores))
// from the running max m of the raw scores and the row sum l of 2^PLOG2-scaled exponentials.
template <class TO> KILN_DEVICE uint8_t *attn_out_row(const kiln_attn_params &p, const AttnBlock &w, int row) {
    return (uint8_t *)p.o + ((w.varlen ? w.sq.q_first * p.o_stride_s : w.b * p.o_stride_b) + w.h * p.o_stride_h +
                             row * p.o_stride_s) * (int64_t)sizeof(TO);
}
// Items e .. e + 3 of an accumulator vector times inv, as TO at output d .. d + 3 of orow (one 8-byte store).
template <class TO, class Acc> KILN_DEVICE void attn_store_out4(uint8_t *orow, int d, const Acc &o, int e, float inv) {
    const u32x2 v = {pack_halves<TO>(o[e] * inv, o[e + 1] * inv), pack_halves<TO>(o[e + 2] * inv, o[e + 3] * inv)};
    *(u32x2 *)(orow + d * (int64_t)sizeof(TO)) = v;
}
template <int PLOG2>
KILN_DEVICE void attn_store_lse(const kiln_attn_params &p, const AttnBlock &w, int row, float m, float l) {
    float *lse = p.lse + (w.varlen ? w.sq.q_first : w.b * p.lse_stride_b) + w.h * p.lse_stride_h + row;
    *lse = l > 0.f ? (m * w.sl2 - PLOG2 + __builtin_log2f(l)) * 0.6931471805599453f : -__builtin_inff();
}

}  // namespace kiln

#endif  // KILN_ATTN_AMD_H
