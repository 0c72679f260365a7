// The AMD GEMMs' data movement: global memory -> VGPRs -> LDS (the local write) and LDS -> matrix operands (the local
// read). Tensile's parameters are decided here:
//   VWA/VWB  bytes per global read;  WaveSeparateGlobalRead  which thread reads which vector;
//   TransposeLDS  whether a K-major operand stays unroll-major in LDS or is transposed on the local write;
//   LDS padding (LPA/LPB), LdsBlockSizePerPad, XOR swizzle (LXS)  where a (row, byte) of a tile lives in LDS.
#ifndef KILN_AMD_LDS_H
#define KILN_AMD_LDS_H

#include "kiln_amd_fp8.h"
#include "kiln_device.h"

namespace kiln {

typedef uint32_t u32x2 __attribute__((ext_vector_type(2)));
typedef uint32_t u32x4 __attribute__((ext_vector_type(4)));

// The register type of one global read of N bytes.
template <int N> struct VecOf;
template <> struct VecOf<1> { using T = uint8_t; };
template <> struct VecOf<2> { using T = uint16_t; };
template <> struct VecOf<4> { using T = uint32_t; };
template <> struct VecOf<8> { using T = u32x2; };
template <> struct VecOf<16> { using T = u32x4; };

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// std::conditional without the standard library (device code here includes no system C++ headers).
template <bool COND, class T, class F> struct Pick { using type = T; };
template <class T, class F> struct Pick<false, T, F> { using type = F; };

// Largest power of two <= 8 that divides the 16-byte chunks of a row: the XOR swizzle's period.
constexpr int amd_swizzle_period(int row_bytes) {
    return (row_bytes / 16) % 8 == 0 ? 8 : (row_bytes / 16) % 4 == 0 ? 4 : (row_bytes / 16) % 2 == 0 ? 2 : 1;
}

// An operand tile in LDS: ROWS rows of DATA bytes. PAD bytes of padding follow every row (LBSPP = 0) or every LBSPP
// bytes of the row-major tile (LdsBlockSizePerPad); with SWIZZLE the 16-byte chunks of row r are permuted by XOR
// with r mod the period. BYTES is what Solution.lds_tile_bytes computes (the kernel static_asserts the sum).
template <int ROWS, int DATA, int PAD, int LBSPP, bool SWIZZLE> struct LdsTile {
    static constexpr int PITCH = LBSPP ? DATA : DATA + PAD;
    static constexpr int BYTES = LBSPP ? ROWS * DATA + (ROWS * DATA / LBSPP) * PAD : ROWS * (DATA + PAD);
    static constexpr int PERIOD = SWIZZLE ? amd_swizzle_period(DATA) : 1;
    static_assert(DATA % 16 == 0 && PAD % 16 == 0 && LBSPP % 16 == 0, "LDS rows, pads and blocks are 16-byte units");
    KILN_DEVICE static int offset(int row, int byte) {
        const int lin = row * PITCH + (((byte >> 4) ^ (row & (PERIOD - 1))) << 4) + (byte & 15);
        return LBSPP ? lin + (lin / LBSPP) * PAD : lin;
    }
};

// Who reads what of a G_ROWS x G_DATA-byte window of a row-major global matrix, VW bytes per read. WSGR = 0: the
// workgroup sweeps the window, thread t taking reads t, t + THREADS, ...; WSGR = 1: wave w takes the w-th contiguous
// 1/WAVES of the reads (whole rows of its own), lane l taking l, l + WAVE, ... of them.
template <int G_ROWS, int G_DATA, int VW, int THREADS, int WAVE, bool WSGR> struct ReadPlan {
    static constexpr int PER_ROW = G_DATA / VW;
    static constexpr int TOTAL = G_ROWS * PER_ROW;
    static constexpr int WAVES = THREADS / WAVE;
    static constexpr int SHARE = WSGR ? TOTAL / WAVES : TOTAL;   // reads of one wave (WSGR) or of everyone
    static constexpr int STEP = WSGR ? WAVE : THREADS;
    static constexpr int N = ceil_div(SHARE, STEP);              // reads per thread
    static_assert(G_DATA % VW == 0 && (!WSGR || TOTAL % WAVES == 0), "reads tile the window");
    // When a step is whole rows, a thread's reads go down its column ROW_STEP rows at a time (one address add each).
    static constexpr int ROW_STEP = STEP % PER_ROW == 0 ? STEP / PER_ROW : 0;
    using V = typename VecOf<VW>::T;
    // Whether thread tid has a read `it` (the last step may be partial).
    KILN_DEVICE static bool live(int it, int tid) {
        return SHARE % STEP == 0 || it * STEP + (WSGR ? tid % WAVE : tid) < SHARE;
    }
    // Index in the window of read `it` of thread tid (meaningful when live).
    KILN_DEVICE static int index(int it, int tid) {
        return (WSGR ? (tid / WAVE) * SHARE : 0) + it * STEP + (WSGR ? tid % WAVE : tid);
    }
};

// A read's bytes as 32-bit words (byte j in bits 8*(j%4) of word j/4) and back. The kernels keep reads in 32-bit
// registers: a byte array would become an i8 vector, one VGPR per byte.
template <int VW> KILN_DEVICE void to_words(uint32_t (&w)[(VW + 3) / 4], const typename VecOf<VW>::T &v) {
    if constexpr (VW >= 4)
        __builtin_memcpy(w, &v, VW);
    else
        w[0] = (uint32_t)v;
}
template <int VW> KILN_DEVICE typename VecOf<VW>::T from_words(const uint32_t (&w)[(VW + 3) / 4]) {
    typename VecOf<VW>::T v;
    if constexpr (VW >= 4)
        __builtin_memcpy(&v, w, VW);
    else
        v = (typename VecOf<VW>::T)w[0];
    return v;
}

// One global read: VW bytes, of which the first `valid` are in the matrix (the rest read as zero). A whole read is one
// global_load of VW bytes; a partial one (the K or N edge) reads byte by byte.
template <int VW> KILN_DEVICE typename VecOf<VW>::T global_read(const uint8_t *p, int valid) {
    using V = typename VecOf<VW>::T;
    if (valid == VW) return *(const V *)p;
    uint32_t w[(VW + 3) / 4] = {};
#pragma unroll
    for (int j = 0; j < VW; ++j)
        if (j < valid) w[j / 4] |= (uint32_t)p[j] << (8 * (j % 4));
    return from_words<VW>(w);
}

// Local write of one global read at (grow, gbyte) of the global window. STRAIGHT: the LDS tile has the window's
// orientation, one ds_write of VW bytes. Otherwise (TransposeLDS = 0 on a K-major operand) the window's row grow is an
// M/N index and its elements are K values: each E-byte element goes to LDS row (K) gbyte / E + j, column grow.
template <class Tile, int VW, int E, bool STRAIGHT>
KILN_DEVICE void local_write(uint8_t *lds, const typename VecOf<VW>::T &v, int grow, int gbyte) {
    if constexpr (STRAIGHT) {
        *(typename VecOf<VW>::T *)(lds + Tile::offset(grow, gbyte)) = v;
    } else {
        uint32_t w[(VW + 3) / 4];
        to_words<VW>(w, v);
#pragma unroll
        for (int j = 0; j < VW / E; ++j) {
            const uint32_t x = w[j * E / 4] >> (8 * ((j * E) % 4));
            *(typename VecOf<E>::T *)(lds + Tile::offset(gbyte / E + j, grow * E)) = (typename VecOf<E>::T)x;
        }
    }
}

// Local read of the K values [k, k + KPL) of tile row `row` (an M index of A, an N index of B), E bytes each, packed
// into 32-bit words in K order. Unroll-major tiles: one ds_read of up to 16 bytes per 16. Tile-major tiles: one
// E-byte ds_read per value (the transposed layout Tensile reads with ds_read_u16 / u8).
template <class Tile, bool UNROLL_MAJOR, int E, int KPL>
KILN_DEVICE void local_read(uint32_t (&w)[KPL * E / 4], const uint8_t *lds, int row, int k) {
    constexpr int RB = KPL * E;
    static_assert(RB % 4 == 0 && (RB <= 16 || RB % 16 == 0), "whole words, 16-byte pieces");
    if constexpr (UNROLL_MAJOR) {
        if constexpr (RB >= 16) {
#pragma unroll
            for (int p = 0; p < RB / 16; ++p) {
                const u32x4 x = *(const u32x4 *)(lds + Tile::offset(row, k * E + 16 * p));
                w[4 * p] = x.x, w[4 * p + 1] = x.y, w[4 * p + 2] = x.z, w[4 * p + 3] = x.w;
            }
        } else if constexpr (RB == 8) {
            const u32x2 x = *(const u32x2 *)(lds + Tile::offset(row, k * E));
            w[0] = x.x, w[1] = x.y;
        } else {
            w[0] = *(const uint32_t *)(lds + Tile::offset(row, k * E));
        }
    } else {
#pragma unroll
        for (int i = 0; i < RB / 4; ++i) w[i] = 0;
#pragma unroll
        for (int j = 0; j < KPL; ++j) {
            const uint32_t x = *(const typename VecOf<E>::T *)(lds + Tile::offset(k + j, row * E));
            w[j * E / 4] |= x << (8 * ((j * E) % 4));
        }
    }
}

// A matrix operand of KPL values in K order, as the instruction's 32-bit words: TOp is the type it reads, TS the type
// stored in LDS (an fp8 type when the operand is widened after the local read).
template <class Tile, bool UNROLL_MAJOR, class TS, class TOp, int KPL>
KILN_DEVICE void operand(uint32_t (&out)[KPL * sizeof(TOp) / 4], const uint8_t *lds, int row, int k) {
    if constexpr (sizeof(TS) == sizeof(TOp)) {
        local_read<Tile, UNROLL_MAJOR, sizeof(TS), KPL>(out, lds, row, k);
    } else {
        uint32_t w[KPL / 4];
        local_read<Tile, UNROLL_MAJOR, 1, KPL>(w, lds, row, k);
#pragma unroll
        for (int i = 0; i < KPL / 4; ++i) {
            out[2 * i] = Upcast<TS, TOp>::pair(w[i], 0);
            out[2 * i + 1] = Upcast<TS, TOp>::pair(w[i], 1);
        }
    }
}

// The same from a prepacked B (docs/prepack.md): inside each 16-K group, 32-bit word q holds K (2q, 2q+1) in its low
// half and (2q+8, 2q+9) in its high half, so the natural K pair p (K 2p, 2p+1) is half p / 4 of word p % 4. A lane
// whose KPL values start at k reads the words holding its pairs (8 bytes for KPL 4, the whole 16-byte group
// otherwise) and widens each pair from its half: the operand comes out in natural K order, like A's.
template <class Tile, class TS, class TOp, int KPL>
KILN_DEVICE void operand_packed(uint32_t (&out)[KPL / 2], const uint8_t *lds, int row, int k) {
    static_assert(KPL == 4 || KPL == 8 || KPL == 16, "a lane's K run lies inside one 16-K group");
    constexpr int RB = KPL >= 8 ? 16 : 8;
    const int p0 = (k & 15) >> 1;
    uint32_t w[RB / 4];
    local_read<Tile, true, 1, RB>(w, lds, row, (k & ~15) + 4 * (p0 & 3));
    const int half = p0 >> 2;
#pragma unroll
    for (int i = 0; i < KPL / 2; ++i)
        out[i] = Upcast<TS, TOp>::pair(w[KPL == 16 ? (i & 3) : i], KPL == 16 ? (i >> 2) : half);
}

}  // namespace kiln

#endif  // KILN_AMD_LDS_H
