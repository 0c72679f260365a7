/* fp8 / f16 / bf16 host conversions against references written here independently: the value of each code from the
 * formats' definitions with ldexp, and rounding by brute force over every code. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fp8.h"
#include "test_util.h"

typedef struct format {
    kiln_dtype type;
    const char *name;
    int mbits, bias;
    uint8_t max_code; /* largest finite positive code */
    double max;
} format;

static const format FORMATS[] = {
    {KILN_DTYPE_E4M3, "e4m3", 3, 7, 0x7E, 448.0},
    {KILN_DTYPE_E5M2, "e5m2", 2, 15, 0x7B, 57344.0},
    {KILN_DTYPE_E4M3FNUZ, "e4m3fnuz", 3, 8, 0x7F, 240.0},
    {KILN_DTYPE_E5M2FNUZ, "e5m2fnuz", 2, 16, 0x7F, 57344.0},
};

static int is_fnuz(const format *f) { return f->type == KILN_DTYPE_E4M3FNUZ || f->type == KILN_DTYPE_E5M2FNUZ; }

enum { FINITE, NAN_CODE, INF_CODE };

/* Class of a code by each format's rule, stated directly. */
static int code_class(const format *f, unsigned c)
{
    unsigned mag = c & 0x7F;
    switch (f->type) {
    case KILN_DTYPE_E4M3: return mag == 0x7F ? NAN_CODE : FINITE;
    case KILN_DTYPE_E5M2: return mag == 0x7C ? INF_CODE : mag > 0x7C ? NAN_CODE : FINITE;
    default: return c == 0x80 ? NAN_CODE : FINITE; /* FNUZ */
    }
}

/* (-1)^s * 2^(e - bias) * (1 + m / 2^M), or 2^(1 - bias) * (m / 2^M) when e == 0. */
static double ref_value(const format *f, unsigned c)
{
    int ebits = 7 - f->mbits;
    int e = (int)(c >> f->mbits) & ((1 << ebits) - 1);
    int m = (int)c & ((1 << f->mbits) - 1);
    double v = e == 0 ? ldexp((double)m, 1 - f->bias - f->mbits) : ldexp(1.0 + ldexp((double)m, -f->mbits), e - f->bias);
    return (c & 0x80) ? -v : v;
}

static void test_decode(const format *f)
{
    for (unsigned c = 0; c < 256; c++) {
        float got = kiln_fp8_to_f32(f->type, (uint8_t)c);
        switch (code_class(f, c)) {
        case NAN_CODE: CHECK(isnan(got), "%s 0x%02X decodes to %g, want NaN", f->name, c, got); break;
        case INF_CODE:
            CHECK(isinf(got) && (signbit(got) != 0) == ((c & 0x80) != 0), "%s 0x%02X decodes to %g, want inf",
                  f->name, c, got);
            break;
        default: {
            double want = ref_value(f, c);
            CHECK((double)got == want && (signbit(got) != 0) == (signbit(want) != 0),
                  "%s 0x%02X decodes to %a, want %a", f->name, c, got, want);
        }
        }
    }
    CHECK((double)kiln_fp8_max(f->type) == f->max, "%s max %g, want %g", f->name, kiln_fp8_max(f->type), f->max);
    CHECK((double)kiln_fp8_to_f32(f->type, f->max_code) == f->max, "%s max code", f->name);
}

static void test_round_trip(const format *f)
{
    for (unsigned c = 0; c < 256; c++) {
        int cls = code_class(f, c);
        if (cls == NAN_CODE)
            continue;
        float v = kiln_fp8_to_f32(f->type, (uint8_t)c);
        uint8_t plain = kiln_f32_to_fp8(f->type, v, 0), sat = kiln_f32_to_fp8(f->type, v, 1);
        CHECK(plain == c, "%s: encode(decode(0x%02X)) = 0x%02X", f->name, c, plain);
        unsigned want_sat = cls == INF_CODE ? (c & 0x80) | f->max_code : c;
        CHECK(sat == want_sat, "%s: saturating encode(decode(0x%02X)) = 0x%02X", f->name, c, sat);
    }
    /* -0: kept by the OCP formats, folded to +0 by FNUZ (0x80 is NaN there). */
    uint8_t neg0 = kiln_f32_to_fp8(f->type, -0.0f, 0);
    CHECK(neg0 == (is_fnuz(f) ? 0x00 : 0x80), "%s: -0 encodes to 0x%02X", f->name, neg0);
}

static void test_nan(const format *f)
{
    float nans[2] = {NAN, -NAN};
    for (int i = 0; i < 2; i++)
        for (int sat = 0; sat < 2; sat++) {
            uint8_t c = kiln_f32_to_fp8(f->type, nans[i], sat);
            CHECK(code_class(f, c) == NAN_CODE, "%s: NaN encodes to 0x%02X (saturate %d)", f->name, c, sat);
        }
}

/* Nearest finite code by brute force, ties to the even code; the overflow verdict when |x| rounds past max. */
static unsigned ref_encode(const format *f, float x, int saturate)
{
    unsigned sign = signbit(x) ? 0x80 : 0, best = 0;
    double ax = fabs((double)x), best_err = INFINITY;
    double ulp_top = f->max - ref_value(f, f->max_code - 1u);
    double limit = f->max + ulp_top / 2; /* the midpoint to the next, unrepresentable, value */
    int overflow = ax > limit || (ax == limit && (f->max_code & 1));
    if (overflow) {
        if (saturate)
            return sign | f->max_code;
        if (f->type == KILN_DTYPE_E5M2)
            return sign | 0x7C;
        return is_fnuz(f) ? 0x80 : sign | 0x7F;
    }
    for (unsigned c = 0; c <= f->max_code; c++) {
        double err = fabs(ref_value(f, c) - ax);
        if (err < best_err || (err == best_err && !(c & 1))) {
            best_err = err;
            best = c;
        }
    }
    if (best == 0 && is_fnuz(f))
        return 0;
    return sign | best;
}

static void test_ties(const format *f)
{
    for (unsigned c = 0; c < f->max_code; c++) {
        float lo = (float)ref_value(f, c), hi = (float)ref_value(f, c + 1);
        float mid = (float)(((double)lo + (double)hi) / 2); /* exact: one bit more than the format holds */
        unsigned even = (c & 1) ? c + 1 : c;
        for (int neg = 0; neg < 2; neg++) {
            float s = neg ? -1.0f : 1.0f;
            unsigned sign = neg ? 0x80 : 0;
            unsigned want_mid = (even == 0 && is_fnuz(f)) ? 0 : sign | even;
            unsigned want_lo = (c == 0 && is_fnuz(f)) ? 0 : sign | c;
            uint8_t got = kiln_f32_to_fp8(f->type, s * mid, 0);
            CHECK(got == want_mid, "%s: tie %g -> 0x%02X, want 0x%02X", f->name, s * mid, got, want_mid);
            got = kiln_f32_to_fp8(f->type, s * nextafterf(mid, 0.0f), 0);
            CHECK(got == want_lo, "%s: below tie %g -> 0x%02X", f->name, s * mid, got);
            got = kiln_f32_to_fp8(f->type, s * nextafterf(mid, INFINITY), 0);
            CHECK(got == (sign | (c + 1)), "%s: above tie %g -> 0x%02X", f->name, s * mid, got);
        }
    }
}

static void test_overflow(const format *f)
{
    double ulp_top = f->max - ref_value(f, f->max_code - 1u);
    float tie = (float)(f->max + ulp_top / 2);
    float probes[] = {tie, nextafterf(tie, 0.0f), nextafterf(tie, INFINITY), (float)(2 * f->max), 1e30f, INFINITY};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        for (int neg = 0; neg < 2; neg++)
            for (int sat = 0; sat < 2; sat++) {
                float x = neg ? -probes[i] : probes[i];
                uint8_t got = kiln_f32_to_fp8(f->type, x, sat);
                unsigned want = ref_encode(f, x, sat);
                CHECK(got == want, "%s: %g (saturate %d) -> 0x%02X, want 0x%02X", f->name, x, sat, got, want);
            }
    /* The two behaviours spelled out once per format. */
    uint8_t big = kiln_f32_to_fp8(f->type, 1e30f, 0), big_sat = kiln_f32_to_fp8(f->type, -1e30f, 1);
    if (f->type == KILN_DTYPE_E5M2)
        CHECK(isinf(kiln_fp8_to_f32(f->type, big)), "e5m2 overflow gives inf");
    else
        CHECK(isnan(kiln_fp8_to_f32(f->type, big)), "%s overflow gives NaN", f->name);
    CHECK((double)kiln_fp8_to_f32(f->type, big_sat) == -f->max, "%s saturates to -max", f->name);
}

/* xorshift64: the same pseudo-random values on every run */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_random(const format *f)
{
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t r = next_random();
        /* a random sign and significand with exponents spanning far below the subnormals to past max */
        float x = ldexpf((float)(r & 0xFFFFFF) / 16777216.0f + 1.0f, (int)((r >> 24) % 64) - 40);
        if (r >> 63)
            x = -x;
        int sat = (int)((r >> 32) & 1);
        unsigned want = ref_encode(f, x, sat);
        uint8_t got = kiln_f32_to_fp8(f->type, x, sat);
        if (got != want && bad++ < 5)
            CHECK(got == want, "%s: %a (saturate %d) -> 0x%02X, want 0x%02X", f->name, x, sat, got, want);
    }
    CHECK(bad == 0, "%s: %d random values mis-rounded", f->name, bad);
    /* float32 subnormals round to zero */
    CHECK(kiln_f32_to_fp8(f->type, 1e-40f, 0) == 0, "%s: f32 subnormal", f->name);
}

static void test_f16(void)
{
    int bad = 0;
    for (unsigned h = 0; h < 65536; h++) {
        int e = (int)(h >> 10) & 31, m = (int)h & 1023;
        float got = kiln_f16_to_f32((uint16_t)h);
        if (e == 31) {
            if (m ? !isnan(got) : !isinf(got))
                bad++;
            continue;
        }
        double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
        if (h & 0x8000)
            v = -v;
        if ((double)got != v || (signbit(got) != 0) != ((h & 0x8000) != 0) || kiln_f32_to_f16(got) != h)
            bad++;
    }
    CHECK(bad == 0, "f16: %d codes decode or round-trip wrongly", bad);
    CHECK(kiln_f32_to_f16(2049.0f) == kiln_f32_to_f16(2048.0f), "f16 tie to even down");
    CHECK(kiln_f32_to_f16(2051.0f) == kiln_f32_to_f16(2052.0f), "f16 tie to even up");
    CHECK(kiln_f32_to_f16(65519.0f) == 0x7BFF, "f16 below the overflow tie");
    CHECK(kiln_f32_to_f16(65520.0f) == 0x7C00, "f16 overflow tie goes to inf");
    CHECK(kiln_f32_to_f16(-1e10f) == 0xFC00, "f16 -overflow");
    CHECK(isnan(kiln_f16_to_f32(kiln_f32_to_f16(NAN))), "f16 NaN");
    CHECK(kiln_f32_to_f16(ldexpf(1.0f, -25)) == 0, "f16 half the smallest subnormal ties to 0");
    CHECK(kiln_f32_to_f16(ldexpf(1.5f, -25)) == 1, "f16 above half the smallest subnormal");
}

static void test_bf16(void)
{
    CHECK(kiln_f32_to_bf16(1.0f + ldexpf(1.0f, -8)) == 0x3F80, "bf16 tie to even down");
    CHECK(kiln_f32_to_bf16(1.0f + 3 * ldexpf(1.0f, -8)) == 0x3F82, "bf16 tie to even up");
    CHECK(kiln_f32_to_bf16(1.0f + 3 * ldexpf(1.0f, -9)) == 0x3F81, "bf16 nearest");
    CHECK(kiln_f32_to_bf16(-2.0f) == 0xC000, "bf16 -2");
    CHECK(kiln_f32_to_bf16(3.4e38f) == 0x7F80, "bf16 overflow to inf");
    CHECK(kiln_f32_to_bf16(INFINITY) == 0x7F80, "bf16 inf");
    uint16_t n = kiln_f32_to_bf16(NAN);
    CHECK(isnan(kiln_bf16_to_f32(n)), "bf16 NaN stays NaN (0x%04X)", n);
    /* a NaN whose payload sits only in the low half must not round into inf */
    uint32_t low_nan = 0x7F800001u;
    float x;
    memcpy(&x, &low_nan, sizeof x);
    CHECK(isnan(kiln_bf16_to_f32(kiln_f32_to_bf16(x))), "bf16 low-payload NaN");
    int bad = 0;
    for (unsigned h = 0; h < 65536; h++) {
        float v = kiln_bf16_to_f32((uint16_t)h);
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        if (u != (uint32_t)h << 16 || (!isnan(v) && kiln_f32_to_bf16(v) != h))
            bad++;
    }
    CHECK(bad == 0, "bf16: %d codes decode or round-trip wrongly", bad);
}

int main(void)
{
    for (size_t i = 0; i < sizeof FORMATS / sizeof FORMATS[0]; i++) {
        const format *f = &FORMATS[i];
        test_decode(f);
        test_round_trip(f);
        test_nan(f);
        test_ties(f);
        test_overflow(f);
        test_random(f);
    }
    CHECK(isnan(kiln_fp8_to_f32(KILN_DTYPE_F16, 0)), "non-fp8 type decodes to NaN");
    test_f16();
    test_bf16();
    return test_summary("test_fp8");
}
