// The mfma family: CDNA matrix cores (gfx90a CDNA2, gfx942 CDNA3), wave64. The GEMM is kiln_amd_gemm.h's; this file
// gives it the instruction, as an op trait:
//   M, N, K     the block one instruction computes, KPL the K values each lane supplies per operand;
//   lane_row    the row of A (column of B) lane l supplies: l % M;  lane_k  where its K run starts: (l / M) * KPL
//               (the 64 lanes form 64 / M groups, group g holding K [g*KPL, g*KPL + KPL) of every row);
//   acc_row/col where accumulator register e of lane l sits in the M x N block (CDNA3 ISA, "dependent matrix layouts"):
//               32x32: row 8*(e/4) + 4*(l/32) + e%4, column l%32;  16x16: row 4*(l/16) + e, column l%16.
// A and B use the same (lane, register) -> K map, so any consistent K order of the operands gives the same sum; the
// kernels read K in natural order (prepacked B is put back into it, see operand_packed).
#ifndef KILN_GEMM_MFMA_H
#define KILN_GEMM_MFMA_H

#include "kiln_amd_gemm.h"

namespace kiln {

typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));
typedef short i16x4 __attribute__((ext_vector_type(4)));

template <int M_, int K_, int KPL_, class TOp_> struct MfmaLayout {
    static_assert(M_ == 32 || M_ == 16, "MFMA blocks are 32x32 or 16x16");
    static constexpr int WAVE = 64, M = M_, N = M_, K = K_, KPL = KPL_;
    static constexpr int ACC = M_ * M_ / 64;
    static_assert((64 / M_) * KPL_ == K_, "the lane groups cover K");
    using TOp = TOp_;
    using Acc = typename Pick<M_ == 32, f32x16, f32x4>::type;
    KILN_DEVICE static int lane_row(int lane) { return lane % M_; }
    KILN_DEVICE static int lane_k(int lane) { return (lane / M_) * KPL_; }
    KILN_DEVICE static int acc_row(int lane, int e) {
        return M_ == 32 ? 8 * (e / 4) + 4 * (lane / 32) + e % 4 : 4 * (lane / 16) + e;
    }
    KILN_DEVICE static int acc_col(int lane, int) { return lane % M_; }
};

// v_mfma_f32_32x32x8_f16 / v_mfma_f32_16x16x16_f16 (fp8 operands widened to f16 feed these too).
template <int M> struct MfmaF16 : MfmaLayout<M, M == 32 ? 8 : 16, 4, kiln_f16> {
    using Acc = typename MfmaLayout<M, M == 32 ? 8 : 16, 4, kiln_f16>::Acc;
    KILN_DEVICE static void run(Acc &c, const uint32_t (&a)[2], const uint32_t (&b)[2]) {
        const f16x4 x = __builtin_bit_cast(f16x4, u32x2{a[0], a[1]});
        const f16x4 y = __builtin_bit_cast(f16x4, u32x2{b[0], b[1]});
        if constexpr (M == 32)
            c = __builtin_amdgcn_mfma_f32_32x32x8f16(x, y, c, 0, 0, 0);
        else
            c = __builtin_amdgcn_mfma_f32_16x16x16f16(x, y, c, 0, 0, 0);
    }
};

// v_mfma_f32_32x32x8_bf16 / 16x16x16_bf16 (the _1k forms of CDNA2, 4 bf16 per lane).
template <int M> struct MfmaBF16 : MfmaLayout<M, M == 32 ? 8 : 16, 4, kiln_bf16> {
    using Acc = typename MfmaLayout<M, M == 32 ? 8 : 16, 4, kiln_bf16>::Acc;
    KILN_DEVICE static void run(Acc &c, const uint32_t (&a)[2], const uint32_t (&b)[2]) {
        const i16x4 x = __builtin_bit_cast(i16x4, u32x2{a[0], a[1]});
        const i16x4 y = __builtin_bit_cast(i16x4, u32x2{b[0], b[1]});
        if constexpr (M == 32)
            c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(x, y, c, 0, 0, 0);
        else
            c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(x, y, c, 0, 0, 0);
    }
};

// fp8 x fp8 (gfx942, FNUZ): v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8} / 16x16x32; 8 fp8 bytes per lane (one i64).
// fp8 is e4m3fnuz, bf8 e5m2fnuz; A's format picks the first, B's the second.
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
template <class TA, class TB> struct Fp8Pair;
#define KILN_MFMA_F8(TA, TB, SUFFIX)                                                                                  \
    template <> struct Fp8Pair<TA, TB> {                                                                              \
        KILN_DEVICE static f32x16 r32(long a, long b, f32x16 c) {                                                     \
            return __builtin_amdgcn_mfma_f32_32x32x16_##SUFFIX(a, b, c, 0, 0, 0);                                     \
        }                                                                                                             \
        KILN_DEVICE static f32x4 r16(long a, long b, f32x4 c) {                                                       \
            return __builtin_amdgcn_mfma_f32_16x16x32_##SUFFIX(a, b, c, 0, 0, 0);                                     \
        }                                                                                                             \
    };
KILN_MFMA_F8(kiln_e4m3fnuz, kiln_e4m3fnuz, fp8_fp8)
KILN_MFMA_F8(kiln_e4m3fnuz, kiln_e5m2fnuz, fp8_bf8)
KILN_MFMA_F8(kiln_e5m2fnuz, kiln_e4m3fnuz, bf8_fp8)
KILN_MFMA_F8(kiln_e5m2fnuz, kiln_e5m2fnuz, bf8_bf8)
#undef KILN_MFMA_F8

template <int M, class TA, class TB> struct MfmaF8 : MfmaLayout<M, M == 32 ? 16 : 32, 8, TA> {
    using Acc = typename MfmaLayout<M, M == 32 ? 16 : 32, 8, TA>::Acc;
    KILN_DEVICE static void run(Acc &c, const uint32_t (&a)[2], const uint32_t (&b)[2]) {
        const long x = (long)(((uint64_t)a[1] << 32) | a[0]), y = (long)(((uint64_t)b[1] << 32) | b[0]);
        if constexpr (M == 32)
            c = Fp8Pair<TA, TB>::r32(x, y, c);
        else
            c = Fp8Pair<TA, TB>::r16(x, y, c);
    }
};
#endif

template <class C> KILN_DEVICE void gemm_mfma(const kiln_gemm_params &p) { gemm_amd<C, typename C::Op>(p); }

}  // namespace kiln

#endif  // KILN_GEMM_MFMA_H
