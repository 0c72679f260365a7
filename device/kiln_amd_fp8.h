/* fp8 -> f16 / bf16 widening for the AMD kernels whose matrix instruction reads 16-bit operands (gfx90a, gfx1151,
 * and every mixed_w8 kernel): bit tricks on the bytes, two codes at a time, no lookup table and no fp8 conversion
 * instruction, so one formula serves every arch. The same functions compile for the host (C11), where
 * tests/c/test_upcast.c checks them bit-exact against the runtime's decoder (fp8.c) on all 256 codes of each format
 * in both positions of a pair.
 *
 *   fp8_to_f32:  put sign, exponent and mantissa into float32 position and multiply by 2^(127 - bias): exact for
 *                every finite code (subnormal codes enter as f32 subnormals, which the multiply keeps; the kernels
 *                are built with f32 denormals on, see buildtools_amd.py).
 *   e5m2 -> f16:      the byte is the f16's high byte (same exponent width and bias): exact, inf and NaN included.
 *   e4m3 -> f16:      sign | exponent+mantissa shifted into f16 position, times 2^(15 - 7) in f16 arithmetic
 *                     (f16 subnormals are always on); e4m3fnuz: times 2^(15 - 8).
 *   e5m2fnuz -> f16:  through fp8_to_f32 (its top exponent is finite, so the byte-is-high-byte trick would make
 *                     inf), then an f32 -> f16 conversion, exact because the value is an f16.
 *   any -> bf16:      fp8_to_f32, then the high half of the float (exact: fp8 values have at most 3 mantissa bits).
 *
 * Codes without a finite value widen to what the arithmetic gives, documented and tested: OCP e4m3 NaN (S.1111.111)
 * -> +-480 (f16 and bf16); OCP e5m2 inf/NaN stay inf/NaN in f16 and become +-65536 / +-81920 / +-98304 / +-114688
 * in bf16; the FNUZ NaN 0x80 -> -0. Weights and activations are finite; a NaN input does not survive as NaN. */
#ifndef KILN_AMD_FP8_H
#define KILN_AMD_FP8_H

#include <stdint.h>

#if defined(__HIP__)
#define KILN_FP8_FN __attribute__((device)) static inline __attribute__((always_inline))
#else
#define KILN_FP8_FN static inline
#endif

KILN_FP8_FN float kiln_bits_to_f32(uint32_t u)
{
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}

KILN_FP8_FN uint32_t kiln_f32_to_bits(float f)
{
    uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}

__extension__ typedef _Float16 kiln_half_t; /* _Float16 is an ISO C extension (TS 18661-3) on the host */

/* 2^e as a float, for -126 <= e <= 127 */
KILN_FP8_FN float kiln_pow2f(int e) { return kiln_bits_to_f32((uint32_t)(127 + e) << 23); }

/* Value of an fp8 code with MBITS mantissa bits and exponent bias BIAS (finite codes exact). */
KILN_FP8_FN float kiln_fp8_to_f32_bits(uint32_t b, int mbits, int bias)
{
    const uint32_t bits = ((b & 0x80u) << 24) | ((b & 0x7fu) << (23 - mbits));
    return kiln_bits_to_f32(bits) * kiln_pow2f(127 - bias);
}

/* f16 bits times 2^e (0 <= e <= 15), in f16 arithmetic: exact for the values these functions make. */
KILN_FP8_FN uint16_t kiln_f16_scale(uint16_t h, int e)
{
    kiln_half_t v, s;
    const uint16_t sbits = (uint16_t)((15 + e) << 10);
    __builtin_memcpy(&v, &h, sizeof v);
    __builtin_memcpy(&s, &sbits, sizeof s);
    v = (kiln_half_t)(v * s);
    uint16_t out;
    __builtin_memcpy(&out, &v, sizeof out);
    return out;
}

KILN_FP8_FN uint16_t kiln_f32_to_f16_bits(float f)
{
    const kiln_half_t h = (kiln_half_t)f;
    uint16_t out;
    __builtin_memcpy(&out, &h, sizeof out);
    return out;
}

/* --- pairs: two codes in, two 16-bit values out, the way the kernels widen (x: code 0 in bits 0-7, code 1 in bits
 * 8-15; result: value 0 in bits 0-15, value 1 in bits 16-31). The f16 forms work on both halves at once (one
 * v_pk_mul_f16 on the device). */

/* The two codes moved to bytes 0 and 2. */
KILN_FP8_FN uint32_t kiln_spread2(uint32_t x) { return (x & 0xffu) | ((x & 0xff00u) << 8); }

/* Both halves of a packed f16 pair times 2^e (0 <= e <= 15): exact for the values made here. */
KILN_FP8_FN uint32_t kiln_f16x2_scale(uint32_t packed, int e)
{
#if defined(__HIP__)
    typedef _Float16 kiln_f16x2_t __attribute__((ext_vector_type(2)));
    const kiln_half_t s = (kiln_half_t)(float)(1 << e);
    kiln_f16x2_t v;
    __builtin_memcpy(&v, &packed, sizeof v);
    v = v * (kiln_f16x2_t){s, s};
    uint32_t out;
    __builtin_memcpy(&out, &v, sizeof out);
    return out;
#else
    const uint32_t lo = kiln_f16_scale((uint16_t)packed, e), hi = kiln_f16_scale((uint16_t)(packed >> 16), e);
    return lo | (hi << 16);
#endif
}

/* e4m3 / e4m3fnuz: sign to bit 15, exponent and mantissa to bits 7-13 of each half (1.4.3 -> 1.5.10 with the exponent's
 * top bit clear), then times 2^(15 - bias). */
KILN_FP8_FN uint32_t kiln_e4m3_f16_shifted2(uint32_t x)
{
    const uint32_t y = kiln_spread2(x);
    return ((y & 0x00800080u) << 8) | ((y & 0x007f007fu) << 7);
}
KILN_FP8_FN uint32_t kiln_e4m3x2_to_f16(uint32_t x) { return kiln_f16x2_scale(kiln_e4m3_f16_shifted2(x), 8); }
KILN_FP8_FN uint32_t kiln_e4m3fnuzx2_to_f16(uint32_t x) { return kiln_f16x2_scale(kiln_e4m3_f16_shifted2(x), 7); }
/* e5m2: each code is its f16's high byte. */
KILN_FP8_FN uint32_t kiln_e5m2x2_to_f16(uint32_t x) { return (kiln_spread2(x) & 0x00ff00ffu) << 8; }
/* e5m2fnuz: through float32 (its top exponent is finite); the f32 -> f16 conversions are exact. */
KILN_FP8_FN uint32_t kiln_e5m2fnuzx2_to_f16(uint32_t x)
{
    return (uint32_t)kiln_f32_to_f16_bits(kiln_fp8_to_f32_bits(x & 0xffu, 2, 16)) |
           ((uint32_t)kiln_f32_to_f16_bits(kiln_fp8_to_f32_bits((x >> 8) & 0xffu, 2, 16)) << 16);
}
/* -> bf16: the high halves of the two float32 values. */
KILN_FP8_FN uint32_t kiln_fp8x2_to_bf16(uint32_t x, int mbits, int bias)
{
    return (kiln_f32_to_bits(kiln_fp8_to_f32_bits(x & 0xffu, mbits, bias)) >> 16) |
           (kiln_f32_to_bits(kiln_fp8_to_f32_bits((x >> 8) & 0xffu, mbits, bias)) & 0xffff0000u);
}
KILN_FP8_FN uint32_t kiln_e4m3x2_to_bf16(uint32_t x) { return kiln_fp8x2_to_bf16(x, 3, 7); }
KILN_FP8_FN uint32_t kiln_e5m2x2_to_bf16(uint32_t x) { return kiln_fp8x2_to_bf16(x, 2, 15); }
KILN_FP8_FN uint32_t kiln_e4m3fnuzx2_to_bf16(uint32_t x) { return kiln_fp8x2_to_bf16(x, 3, 8); }
KILN_FP8_FN uint32_t kiln_e5m2fnuzx2_to_bf16(uint32_t x) { return kiln_fp8x2_to_bf16(x, 2, 16); }

#if defined(__HIP__)
#include "kiln_device.h"

namespace kiln {

// Widen bytes 2*hi and 2*hi + 1 of a 32-bit word into a packed pair of 16-bit values (byte 2*hi in the low half).
template <class F8, class T16> struct Upcast;

#define KILN_AMD_UPCAST(F8, T16, FN)                                                                                 \
    template <> struct Upcast<F8, T16> {                                                                              \
        KILN_DEVICE static uint32_t pair(uint32_t w, int hi) { return FN((w >> (16 * hi)) & 0xffffu); }               \
    };
KILN_AMD_UPCAST(kiln_e4m3, kiln_f16, kiln_e4m3x2_to_f16)
KILN_AMD_UPCAST(kiln_e5m2, kiln_f16, kiln_e5m2x2_to_f16)
KILN_AMD_UPCAST(kiln_e4m3fnuz, kiln_f16, kiln_e4m3fnuzx2_to_f16)
KILN_AMD_UPCAST(kiln_e5m2fnuz, kiln_f16, kiln_e5m2fnuzx2_to_f16)
KILN_AMD_UPCAST(kiln_e4m3, kiln_bf16, kiln_e4m3x2_to_bf16)
KILN_AMD_UPCAST(kiln_e5m2, kiln_bf16, kiln_e5m2x2_to_bf16)
KILN_AMD_UPCAST(kiln_e4m3fnuz, kiln_bf16, kiln_e4m3fnuzx2_to_bf16)
KILN_AMD_UPCAST(kiln_e5m2fnuz, kiln_bf16, kiln_e5m2fnuzx2_to_bf16)
#undef KILN_AMD_UPCAST

}  // namespace kiln
#endif

#endif /* KILN_AMD_FP8_H */
