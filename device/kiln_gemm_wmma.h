// The wmma family: RDNA matrix cores, wave32, one 16x16x16 block per instruction. The GEMM is kiln_amd_gemm.h's; this
// file gives it the instruction as an op trait (see kiln_gemm_mfma.h for what the members mean). Two generations:
//   RDNA3 (gfx11, here gfx1151): v_wmma_f32_16x16x16_{f16,bf16}. Lane l supplies row (column) l % 16 with all 16 K
//     values; lanes 16-31 repeat lanes 0-15. Accumulator register e of lane l is D[2e + l/16][l % 16].
//   RDNA4 (gfx12, here gfx1201): v_wmma_f32_16x16x16_{f16,bf16,fp8_fp8,fp8_bf8,bf8_fp8,bf8_bf8}. Lane l supplies
//     row (column) l % 16 with K values 8*(l/16) .. +7. Accumulator register e of lane l is D[8*(l/16) + e][l % 16].
// fp8 on gfx12 is OCP e4m3 ("fp8") / e5m2 ("bf8"); gfx1151 has no fp8 WMMA, fp8 operands are widened to f16/bf16
// after the local read (mixed_w8 keeps B as fp8 bytes in global memory and LDS).
#ifndef KILN_GEMM_WMMA_H
#define KILN_GEMM_WMMA_H

#include "kiln_amd_gemm.h"

namespace kiln {

typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));
typedef _Float16 f16x8 __attribute__((ext_vector_type(8)));
typedef short i16x16 __attribute__((ext_vector_type(16)));
typedef short i16x8 __attribute__((ext_vector_type(8)));
typedef int i32x2 __attribute__((ext_vector_type(2)));
typedef uint32_t u32x8 __attribute__((ext_vector_type(8)));

// GEN: 11 (RDNA3) or 12 (RDNA4).
template <int GEN, class TOp_> struct WmmaLayout {
    static_assert(GEN == 11 || GEN == 12, "WMMA generations: gfx11, gfx12");
    static constexpr int WAVE = 32, M = 16, N = 16, K = 16, ACC = 8;
    static constexpr int KPL = GEN == 11 ? 16 : 8;
    using TOp = TOp_;
    using Acc = f32x8;
    KILN_DEVICE static int lane_row(int lane) { return lane % 16; }
    KILN_DEVICE static int lane_k(int lane) { return GEN == 11 ? 0 : 8 * (lane / 16); }
    KILN_DEVICE static int acc_row(int lane, int e) { return GEN == 11 ? 2 * e + lane / 16 : 8 * (lane / 16) + e; }
    KILN_DEVICE static int acc_col(int lane, int) { return lane % 16; }
};

template <int W> KILN_DEVICE u32x8 words8(const uint32_t (&w)[W], int at) {
    return u32x8{w[at], w[at + 1], w[at + 2], w[at + 3], w[at + 4], w[at + 5], w[at + 6], w[at + 7]};
}

#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) ||                    \
    defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1152__)
template <int GEN> struct WmmaF16 : WmmaLayout<11, kiln_f16> {
    static_assert(GEN == 11, "compiled for gfx11");
    KILN_DEVICE static void run(f32x8 &c, const uint32_t (&a)[8], const uint32_t (&b)[8]) {
        c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(__builtin_bit_cast(f16x16, words8(a, 0)),
                                                        __builtin_bit_cast(f16x16, words8(b, 0)), c);
    }
};
template <int GEN> struct WmmaBF16 : WmmaLayout<11, kiln_bf16> {
    static_assert(GEN == 11, "compiled for gfx11");
    KILN_DEVICE static void run(f32x8 &c, const uint32_t (&a)[8], const uint32_t (&b)[8]) {
        c = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(__builtin_bit_cast(i16x16, words8(a, 0)),
                                                         __builtin_bit_cast(i16x16, words8(b, 0)), c);
    }
};
#endif

#if defined(__gfx1200__) || defined(__gfx1201__)
template <int GEN> struct WmmaF16 : WmmaLayout<12, kiln_f16> {
    static_assert(GEN == 12, "compiled for gfx12");
    KILN_DEVICE static void run(f32x8 &c, const uint32_t (&a)[4], const uint32_t (&b)[4]) {
        c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(__builtin_bit_cast(f16x8, u32x4{a[0], a[1], a[2], a[3]}),
                                                              __builtin_bit_cast(f16x8, u32x4{b[0], b[1], b[2], b[3]}),
                                                              c);
    }
};
template <int GEN> struct WmmaBF16 : WmmaLayout<12, kiln_bf16> {
    static_assert(GEN == 12, "compiled for gfx12");
    KILN_DEVICE static void run(f32x8 &c, const uint32_t (&a)[4], const uint32_t (&b)[4]) {
        c = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(__builtin_bit_cast(i16x8, u32x4{a[0], a[1], a[2], a[3]}),
                                                               __builtin_bit_cast(i16x8, u32x4{b[0], b[1], b[2], b[3]}),
                                                               c);
    }
};

// fp8 x fp8: 8 bytes per lane (two 32-bit words); the instruction is named by A's then B's format.
template <class TA, class TB> struct WmmaFp8Pair;
#define KILN_WMMA_F8(TA, TB, BUILTIN)                                                                                 \
    template <> struct WmmaFp8Pair<TA, TB> {                                                                          \
        KILN_DEVICE static f32x8 run(i32x2 a, i32x2 b, f32x8 c) { return BUILTIN(a, b, c); }                          \
    };
KILN_WMMA_F8(kiln_e4m3, kiln_e4m3, __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12)
KILN_WMMA_F8(kiln_e4m3, kiln_e5m2, __builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8_w32_gfx12)
KILN_WMMA_F8(kiln_e5m2, kiln_e4m3, __builtin_amdgcn_wmma_f32_16x16x16_bf8_fp8_w32_gfx12)
KILN_WMMA_F8(kiln_e5m2, kiln_e5m2, __builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8_w32_gfx12)
#undef KILN_WMMA_F8

template <class TA, class TB> struct WmmaF8 : WmmaLayout<12, TA> {
    KILN_DEVICE static void run(f32x8 &c, const uint32_t (&a)[2], const uint32_t (&b)[2]) {
        c = WmmaFp8Pair<TA, TB>::run(i32x2{(int)a[0], (int)a[1]}, i32x2{(int)b[0], (int)b[1]}, c);
    }
};
#endif

template <class C> KILN_DEVICE void gemm_wmma(const kiln_gemm_params &p) { gemm_amd<C, typename C::Op>(p); }

}  // namespace kiln

#endif  // KILN_GEMM_WMMA_H
