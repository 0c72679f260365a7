/* Narrow float conversions by bit manipulation over one format descriptor (see fp8.h for the rules). The tests check
 * them against an independent ldexp formula on every code. */
#include "fp8.h"

#include <string.h>

/* What the all-ones exponent field means. */
typedef enum special {
    SPECIAL_IEEE, /* mantissa 0: inf; otherwise NaN (e5m2, f16) */
    SPECIAL_FN,   /* all-ones exponent and mantissa: NaN; no inf (e4m3fn) */
    SPECIAL_FNUZ  /* a normal exponent; the negative-zero code is the NaN; no inf, no -0 */
} special;

typedef struct narrow_format {
    int ebits, mbits, bias;
    special kind;
} narrow_format;

static const narrow_format E4M3 = {4, 3, 7, SPECIAL_FN};
static const narrow_format E5M2 = {5, 2, 15, SPECIAL_IEEE};
static const narrow_format E4M3FNUZ = {4, 3, 8, SPECIAL_FNUZ};
static const narrow_format E5M2FNUZ = {5, 2, 16, SPECIAL_FNUZ};
static const narrow_format F16 = {5, 10, 15, SPECIAL_IEEE};

static const narrow_format *fp8_format(kiln_dtype t)
{
    switch (t) {
    case KILN_DTYPE_E4M3: return &E4M3;
    case KILN_DTYPE_E5M2: return &E5M2;
    case KILN_DTYPE_E4M3FNUZ: return &E4M3FNUZ;
    case KILN_DTYPE_E5M2FNUZ: return &E5M2FNUZ;
    default: return NULL;
    }
}

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static uint32_t sign_bit(const narrow_format *f) { return 1u << (f->ebits + f->mbits); }
static uint32_t exp_ones(const narrow_format *f) { return (1u << f->ebits) - 1; }
static uint32_t man_mask(const narrow_format *f) { return (1u << f->mbits) - 1; }

/* Magnitude bits of the largest finite value. */
static uint32_t max_finite(const narrow_format *f)
{
    switch (f->kind) {
    case SPECIAL_IEEE: return ((exp_ones(f) - 1) << f->mbits) | man_mask(f);
    case SPECIAL_FN: return (exp_ones(f) << f->mbits) | (man_mask(f) - 1);
    case SPECIAL_FNUZ: return (exp_ones(f) << f->mbits) | man_mask(f);
    }
    return 0;
}

static uint32_t nan_code(const narrow_format *f, uint32_t sign)
{
    switch (f->kind) {
    case SPECIAL_IEEE: return sign | (exp_ones(f) << f->mbits) | (1u << (f->mbits - 1)); /* quiet NaN */
    case SPECIAL_FN: return sign | (exp_ones(f) << f->mbits) | man_mask(f);
    case SPECIAL_FNUZ: return sign_bit(f);
    }
    return 0;
}

/* Result of a value too large for the format (sign is the format's sign bit or 0). */
static uint32_t overflow_code(const narrow_format *f, uint32_t sign, int saturate)
{
    if (saturate)
        return sign | max_finite(f);
    if (f->kind == SPECIAL_IEEE)
        return sign | (exp_ones(f) << f->mbits); /* inf */
    return nan_code(f, sign);
}

/* Every value of the formats used here (fp8, f16) is a normal float32 or zero, so decoding only re-biases. */
static float decode(const narrow_format *f, uint32_t code)
{
    uint32_t sign = (code & sign_bit(f)) ? 0x80000000u : 0u;
    uint32_t e = (code >> f->mbits) & exp_ones(f);
    uint32_t m = code & man_mask(f);
    if (f->kind == SPECIAL_FNUZ && code == sign_bit(f))
        return bits_f32(0x7FC00000u);
    if (f->kind == SPECIAL_FN && e == exp_ones(f) && m == man_mask(f))
        return bits_f32(sign | 0x7FC00000u);
    if (f->kind == SPECIAL_IEEE && e == exp_ones(f))
        return bits_f32(sign | (m ? 0x7FC00000u : 0x7F800000u));
    if (e == 0 && m == 0)
        return bits_f32(sign);
    int exp = (int)e - f->bias;
    if (e == 0) { /* subnormal 0.m * 2^(1-bias): shift the leading one up to the implicit position */
        exp = 1 - f->bias;
        while (!(m & (1u << f->mbits))) {
            m <<= 1;
            exp--;
        }
        m &= man_mask(f);
    }
    return bits_f32(sign | ((uint32_t)(exp + 127) << 23) | (m << (23 - f->mbits)));
}

static uint32_t encode(const narrow_format *f, float x, int saturate)
{
    uint32_t u = f32_bits(x);
    uint32_t sign = (u >> 31) ? sign_bit(f) : 0u;
    uint32_t fexp = (u >> 23) & 0xFFu, fman = u & 0x7FFFFFu;
    if (fexp == 0xFF)
        return fman ? nan_code(f, sign) : overflow_code(f, sign, saturate);

    /* |x| = sig * 2^(exp - 23) */
    uint64_t sig = fexp ? (fman | 0x800000u) : fman;
    int exp = fexp ? (int)fexp - 127 : -126;
    int biased = exp + f->bias; /* the target's exponent field if |x| is normal there */
    /* Keep mbits fraction bits; a subnormal target keeps fewer, one less per step below the smallest exponent. */
    int shift = 23 - f->mbits + (biased < 1 ? 1 - biased : 0);
    uint64_t r = 0;
    if (shift < 26) { /* else |x| is below half the smallest subnormal: rounds to zero */
        uint64_t rem = sig & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        r = sig >> shift;
        if (rem > half || (rem == half && (r & 1)))
            r++;
    }
    /* r carries the implicit one for a normal result, so adding it to (field - 1) lets a mantissa round-up carry
     * into the exponent; a subnormal r that rounds up to 1 << mbits becomes the smallest normal the same way. */
    uint64_t mag = biased < 1 ? r : ((uint64_t)(biased - 1) << f->mbits) + r;
    if (mag > max_finite(f))
        return overflow_code(f, sign, saturate);
    if (mag == 0 && f->kind == SPECIAL_FNUZ)
        return 0;
    return sign | (uint32_t)mag;
}

float kiln_fp8_to_f32(kiln_dtype t, uint8_t code)
{
    const narrow_format *f = fp8_format(t);
    return f ? decode(f, code) : bits_f32(0x7FC00000u);
}

uint8_t kiln_f32_to_fp8(kiln_dtype t, float x, int saturate)
{
    const narrow_format *f = fp8_format(t);
    return f ? (uint8_t)encode(f, x, saturate) : 0;
}

float kiln_fp8_max(kiln_dtype t)
{
    const narrow_format *f = fp8_format(t);
    return f ? decode(f, max_finite(f)) : bits_f32(0x7FC00000u);
}

float kiln_f16_to_f32(uint16_t h) { return decode(&F16, h); }

uint16_t kiln_f32_to_f16(float x) { return (uint16_t)encode(&F16, x, 0); }

float kiln_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t kiln_f32_to_bf16(float x)
{
    uint32_t u = f32_bits(x);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu))
        return (uint16_t)((u >> 16) | 0x40u); /* quiet the NaN, never round it into inf */
    /* Adding 0x7FFF plus the lowest kept bit rounds to nearest even; a carry moves into the exponent (up to inf). */
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
