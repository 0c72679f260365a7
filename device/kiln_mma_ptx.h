// NVIDIA warp-level primitives of the mma family: cp.async, ldmatrix, mma.sync, and the fp8 -> 16-bit upcasts.
// Each is one PTX instruction or a few ALU ops; the GEMM in kiln_gemm_mma.h composes them.
#ifndef KILN_MMA_PTX_H
#define KILN_MMA_PTX_H

#include "kiln_device.h"

namespace kiln {

KILN_DEVICE uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// Global -> shared copy of BYTES (4, 8, 16), of which the first `valid` are read and the rest zero-filled.
template <int BYTES>
KILN_DEVICE void cp_async(void *dst, const void *src, int valid) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    if constexpr (BYTES == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(dst)), "l"(src), "n"(BYTES),
                     "r"(valid));
    }
}
KILN_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> KILN_DEVICE void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// ldmatrix: X 8x8 matrices of 16-bit elements (or 8x16 bytes); lane l supplies the row address of matrix l / 8.
KILN_DEVICE void ldmatrix_x4(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
KILN_DEVICE void ldmatrix_x4_trans(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
KILN_DEVICE void ldmatrix_x2(uint32_t (&r)[2], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(smem_addr(p)));
}

// Zero a block of m16n8 accumulator fragments (four floats a lane each).
template <int R, int C> KILN_DEVICE void zero_fragments(float (&v)[R][C][4]) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c)
#pragma unroll
            for (int e = 0; e < 4; ++e) v[r][c][e] = 0.f;
}

// Tag types naming the mma operand types.
struct MmaF16 {};
struct MmaBF16 {};
template <class A, class B> struct MmaF8 {};

template <class Op> struct Mma;

template <> struct Mma<MmaF16> {
    static constexpr int K = 16;
    KILN_DEVICE static void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};

template <> struct Mma<MmaBF16> {
    static constexpr int K = 16;
    KILN_DEVICE static void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define KILN_MMA_F8(TA, TB, SA, SB)                                                                                   \
    template <> struct Mma<MmaF8<TA, TB>> {                                                                           \
        static constexpr int K = 32;                                                                                  \
        KILN_DEVICE static void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {                  \
            asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." SA "." SB ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "     \
                         "{%8,%9}, {%0,%1,%2,%3};\n"                                                                  \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                             \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));                         \
        }                                                                                                             \
    };
KILN_MMA_F8(kiln_e4m3, kiln_e4m3, "e4m3", "e4m3")
KILN_MMA_F8(kiln_e4m3, kiln_e5m2, "e4m3", "e5m2")
KILN_MMA_F8(kiln_e5m2, kiln_e4m3, "e5m2", "e4m3")
KILN_MMA_F8(kiln_e5m2, kiln_e5m2, "e5m2", "e5m2")
#undef KILN_MMA_F8
#endif

// fp8 -> 16-bit upcast of the two low (lo) or two high (hi) bytes of a 32-bit word into a packed pair.
// Both conversions are exact: every e4m3/e5m2 value is an f16 and a bf16 value.
//  e5m2 -> f16:  the byte is the f16's high byte.
//  e4m3 -> f16:  shift sign/exponent/mantissa into f16 position, then multiply by 2^(15-7) to re-bias (subnormals
//                land on f16 subnormals/normals exactly). The NaN code 0x7f becomes 480 (e4m3 has no inf to keep).
//  -> bf16:      the same through f32, re-biased by 2^(127-7) (e4m3) or 2^(127-15) (e5m2).
template <class F8, class T16> struct Upcast;

// The mma.sync operand tag of a 16-bit type (the kernels that widen fp8 weights for mma.sync m16n8k16).
template <class T16> struct MmaTagOf {
    using type = MmaF16;
};
template <> struct MmaTagOf<kiln_bf16> {
    using type = MmaBF16;
};

// The two bytes of pair `hi` (bits 16*hi..) each into the high byte of its own half: b0 << 8 | b1 << 24 (one prmt).
KILN_DEVICE uint32_t fp8_pair_high_bytes(uint32_t w, int hi) {
    uint32_t y;
    if (hi)
        asm("prmt.b32 %0, %1, 0, 0x3424;\n" : "=r"(y) : "r"(w));
    else
        asm("prmt.b32 %0, %1, 0, 0x1404;\n" : "=r"(y) : "r"(w));
    return y;
}

// pair(w, hi): the pair of fp8 bytes at 16*hi of w widened to two 16-bit values. pair_unit(w, hi): the same values
// times 1 / UNIT, where that saves instructions (UNIT is exact, a power of two): a caller that sums products of
// them multiplies the sums by UNIT once. VIA_F32: the widening goes through f32 (more instructions, more
// temporaries).

// e5m2 is the high byte of an f16: the pair is its bytes moved up.
template <> struct Upcast<kiln_e5m2, kiln_f16> {
    static constexpr float UNIT = 1.f;
    static constexpr bool VIA_F32 = false;
    KILN_DEVICE static uint32_t pair(uint32_t w, int hi) { return fp8_pair_high_bytes(w, hi); }
    KILN_DEVICE static uint32_t pair_unit(uint32_t w, int hi) { return pair(w, hi); }
};

// e4m3 on sm_89 and later: the hardware conversion, one cvt a pair (the pair's bytes are a 16-bit half of w, which
// the instruction reads in place). Exact; the NaN code 0x7f stays NaN.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
template <> struct Upcast<kiln_e4m3, kiln_f16> {
    static constexpr float UNIT = 1.f;
    static constexpr bool VIA_F32 = false;
    KILN_DEVICE static uint32_t pair(uint32_t w, int hi) {
        const uint16_t h = (uint16_t)(hi ? w >> 16 : w);
        uint32_t y;
        asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(y) : "h"(h));
        return y;
    }
    KILN_DEVICE static uint32_t pair_unit(uint32_t w, int hi) { return pair(w, hi); }
};
#else
// e4m3: sign kept, exponent and mantissa (7 bits) moved down one into f16's low exponent bits, then x 2^8 (the bias
// difference 15 - 7) in f16, which also makes e4m3's subnormals normal. Four instructions a pair.
// pair_unit skips the multiply: the f16 read from e4m3's bits is the value times 2^-8 exactly (subnormals too).
template <> struct Upcast<kiln_e4m3, kiln_f16> {
    static constexpr float UNIT = 256.f;
    static constexpr bool VIA_F32 = false;
    KILN_DEVICE static uint32_t pair_unit(uint32_t w, int hi) {
        const uint32_t y = fp8_pair_high_bytes(w, hi);
        return (y & 0x80008000u) | ((y >> 1) & 0x3f803f80u);
    }
    KILN_DEVICE static uint32_t pair(uint32_t w, int hi) {
        const uint32_t packed = pair_unit(w, hi);
        __half2 v = __hmul2(*reinterpret_cast<const __half2 *>(&packed), __floats2half2_rn(UNIT, UNIT));
        return *reinterpret_cast<uint32_t *>(&v);
    }
};
#endif

template <int SHIFT, int REBIAS_LOG2> KILN_DEVICE float fp8_to_f32(uint32_t b) {
    const uint32_t bits = ((b & 0x80u) << 24) | ((b & 0x7fu) << SHIFT);
    return __uint_as_float(bits) * __uint_as_float((uint32_t)(127 + REBIAS_LOG2) << 23);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
// -> bf16 on sm_89 and later: the pair as f16 (e4m3: one cvt; e5m2: its bytes are f16 high bytes, one prmt), then
// f16 -> f32 -> bf16 (three conversions). Exact: every e4m3/e5m2 value is an f16 and a bf16 value.
KILN_DEVICE uint32_t f16x2_to_bf16x2(uint32_t h) {
    const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&h));
    __nv_bfloat162 v = __floats2bfloat162_rn(f.x, f.y);
    return *reinterpret_cast<uint32_t *>(&v);
}

template <> struct Upcast<kiln_e4m3, kiln_bf16> {
    static constexpr float UNIT = 1.f;
    static constexpr bool VIA_F32 = true;  // (the same register budget as the path below)
    KILN_DEVICE static uint32_t pair(uint32_t w, int hi) {
        return f16x2_to_bf16x2(Upcast<kiln_e4m3, kiln_f16>::pair(w, hi));
    }
    KILN_DEVICE static uint32_t pair_unit(uint32_t w, int hi) { return pair(w, hi); }
};

template <> struct Upcast<kiln_e5m2, kiln_bf16> {
    static constexpr float UNIT = 1.f;
    static constexpr bool VIA_F32 = true;
    KILN_DEVICE static uint32_t pair(uint32_t w, int hi) { return f16x2_to_bf16x2(fp8_pair_high_bytes(w, hi)); }
    KILN_DEVICE static uint32_t pair_unit(uint32_t w, int hi) { return pair(w, hi); }
};
#else
template <> struct Upcast<kiln_e4m3, kiln_bf16> {
    static constexpr float UNIT = 1.f;
    static constexpr bool VIA_F32 = true;
    KILN_DEVICE static uint32_t pair(uint32_t w, int hi) {
        const uint32_t x = hi ? (w >> 16) : w;
        __nv_bfloat162 v = __floats2bfloat162_rn(fp8_to_f32<20, 120>(x & 0xffu), fp8_to_f32<20, 120>((x >> 8) & 0xffu));
        return *reinterpret_cast<uint32_t *>(&v);
    }
    KILN_DEVICE static uint32_t pair_unit(uint32_t w, int hi) { return pair(w, hi); }
};

template <> struct Upcast<kiln_e5m2, kiln_bf16> {
    static constexpr float UNIT = 1.f;
    static constexpr bool VIA_F32 = true;
    KILN_DEVICE static uint32_t pair(uint32_t w, int hi) {
        const uint32_t x = hi ? (w >> 16) : w;
        __nv_bfloat162 v = __floats2bfloat162_rn(fp8_to_f32<21, 112>(x & 0xffu), fp8_to_f32<21, 112>((x >> 8) & 0xffu));
        return *reinterpret_cast<uint32_t *>(&v);
    }
    KILN_DEVICE static uint32_t pair_unit(uint32_t w, int hi) { return pair(w, hi); }
};
#endif

// Per-group weight scales (the mixed wgmma kernels): a widened pair times its group's scale, rounded once to the
// 16-bit type. Scale: what a thread keeps per row and K-tile (prep: from the f32 scale); mul: the pair times it.
template <class T16> struct PairScale;

// f16: the scale split as s = h * 2^e, h in [0.5, 1) an f16 normal and 2^e an f16 power of two (2^-24 .. 2^15):
// w * h cannot overflow (|w| <= 57344 for e5m2), and the product times 2^e is exact unless it is an f16 subnormal,
// so the pair is w * s rounded once. (One f16 of s would lose its precision below 2^-14: e5m2 scales of LLM weights
// are ~1e-6.) Scales beyond 2^15 or below 2^-25 keep the nearest e and a larger or subnormal h.
template <> struct PairScale<kiln_f16> {
    struct Scale {
        uint32_t h, p;
    };
    KILN_DEVICE static uint32_t splat(float s) {
        uint32_t y;
        asm("cvt.rn.f16x2.f32 %0, %1, %1;\n" : "=r"(y) : "f"(s));
        return y;
    }
    KILN_DEVICE static Scale prep(float s) {
        // A normal s with its exponent in range, the usual case, from its bits: s = 1.m 2^(be - 127) = (1.m / 2) 2^e,
        // e = be - 126, so h is s's sign and mantissa under 0.5's exponent and 2^e is (e + 127) << 23. (frexpf and
        // ldexpf take ~20 instructions each.)
        const int e = exponent(s);
        if (e >= -24 && e <= 15)
            return {splat(__uint_as_float((__float_as_uint(s) & 0x807fffffu) | (126u << 23))),
                    splat(__uint_as_float((uint32_t)(e + 127) << 23))};
        return prep_slow(s);
    }
    KILN_DEVICE static Scale prep_slow(float s) {
        int e;
        float h = frexpf(s, &e);
        const int ec = min(max(e, -24), 15);
        h = ldexpf(h, e - ec);
        return {splat(h), splat(ldexpf(1.f, ec))};
    }
    KILN_DEVICE static uint32_t mul(uint32_t a, const Scale &s) {
        uint32_t y;
        asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(y) : "r"(a), "r"(s.h));
        asm("mul.rn.f16x2 %0, %0, %1;\n" : "+r"(y) : "r"(s.p));
        return y;
    }
    KILN_DEVICE static int exponent(float s) { return (int)((__float_as_uint(s) >> 23) & 0xffu) - 126; }
    // With e in [-13, 15] one f16 holds s as a normal (2^-14 <= f16(h) 2^e <= 2^15), and w times it is mul's result
    // exactly where mul rounds once (its first product and result normals: a power of two commutes with rounding to
    // a normal), and closer to w s where mul rounds a subnormal twice (tests/py/test_group_scale_math.py): single()
    // says so, make_single puts that f16 in h, and mul_one is one multiply.
    static constexpr bool ALWAYS_SINGLE = false;  // single() depends on the scale
    KILN_DEVICE static bool single(float s) {
        const int e = exponent(s);
        return e >= -13 && e <= 15;
    }
    KILN_DEVICE static void make_single(Scale &sc, float s) { sc.h = splat(s); }
    KILN_DEVICE static uint32_t mul_one(uint32_t a, const Scale &s) {
        uint32_t y;
        asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(y) : "r"(a), "r"(s.h));
        return y;
    }
};

// bf16 has f32's exponent range: one bf16 of the scale (8 significant bits), and fma with -0 (the product rounded
// once, its sign kept; sm_80's bf16x2 arithmetic is fma only).
template <> struct PairScale<kiln_bf16> {
    using Scale = uint32_t;
    KILN_DEVICE static Scale prep(float s) {
        uint32_t y;
        asm("cvt.rn.bf16x2.f32 %0, %1, %1;\n" : "=r"(y) : "f"(s));
        return y;
    }
    KILN_DEVICE static uint32_t mul(uint32_t a, Scale s) {
        uint32_t y;
        asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(y) : "r"(a), "r"(s), "r"(0x80008000u));
        return y;
    }
    static constexpr bool ALWAYS_SINGLE = true;
    KILN_DEVICE static bool single(float) { return true; }  // mul is one instruction already
    KILN_DEVICE static void make_single(Scale &sc, float s) { sc = prep(s); }  // as mul takes it
    KILN_DEVICE static uint32_t mul_one(uint32_t a, Scale s) { return mul(a, s); }
};

}  // namespace kiln

#endif  // KILN_MMA_PTX_H
