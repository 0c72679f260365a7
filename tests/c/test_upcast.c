/* The AMD kernels' fp8 -> f16/bf16 widening (device/kiln_amd_fp8.h), compiled here for the host: the same
 * bit tricks, checked bit-exact on all 256 codes of each format in both halves of a pair, against the runtime's
 * decoder (fp8.c, itself checked against the formats' definitions in test_fp8.c) rounded to f16 / bf16. Codes without
 * a finite value are checked against what kiln_amd_fp8.h documents for them. */
#include <math.h>
#include <stdint.h>

#include "fp8.h"
#include "kiln_amd_fp8.h"
#include "test_util.h"

typedef uint32_t (*pair_fn)(uint32_t);

typedef struct widening {
    const char *name;
    kiln_dtype type;
    int bf16; /* target: 0 f16, 1 bf16 */
    pair_fn pair;
} widening;

static const widening WIDENINGS[] = {
    {"e4m3 -> f16", KILN_DTYPE_E4M3, 0, kiln_e4m3x2_to_f16},
    {"e5m2 -> f16", KILN_DTYPE_E5M2, 0, kiln_e5m2x2_to_f16},
    {"e4m3fnuz -> f16", KILN_DTYPE_E4M3FNUZ, 0, kiln_e4m3fnuzx2_to_f16},
    {"e5m2fnuz -> f16", KILN_DTYPE_E5M2FNUZ, 0, kiln_e5m2fnuzx2_to_f16},
    {"e4m3 -> bf16", KILN_DTYPE_E4M3, 1, kiln_e4m3x2_to_bf16},
    {"e5m2 -> bf16", KILN_DTYPE_E5M2, 1, kiln_e5m2x2_to_bf16},
    {"e4m3fnuz -> bf16", KILN_DTYPE_E4M3FNUZ, 1, kiln_e4m3fnuzx2_to_bf16},
    {"e5m2fnuz -> bf16", KILN_DTYPE_E5M2FNUZ, 1, kiln_e5m2fnuzx2_to_bf16},
};

static uint16_t encode(const widening *w, float v) { return w->bf16 ? kiln_f32_to_bf16(v) : kiln_f32_to_f16(v); }

/* The documented result of a code, as 16-bit bits. */
static uint16_t expected(const widening *w, unsigned c)
{
    unsigned mag = c & 0x7F, neg = c & 0x80;
    switch (w->type) {
    case KILN_DTYPE_E4M3:
        if (mag == 0x7F) /* NaN: the arithmetic gives +-480 */
            return encode(w, neg ? -480.0f : 480.0f);
        break;
    case KILN_DTYPE_E5M2:
        if (mag >= 0x7C) { /* inf / NaN: kept in f16 (the byte is its high byte), 2^16 * (1 + m/4) in bf16 */
            if (!w->bf16)
                return (uint16_t)(c << 8);
            float v = ldexpf(1.0f + (float)(mag & 3) / 4.0f, 16);
            return encode(w, neg ? -v : v);
        }
        break;
    default: /* FNUZ: the NaN code 0x80 widens to -0 */
        if (c == 0x80)
            return 0x8000;
        break;
    }
    return encode(w, kiln_fp8_to_f32(w->type, (uint8_t)c));
}

static void test_widening(const widening *w)
{
    for (unsigned c = 0; c < 256; c++) {
        uint16_t want = expected(w, c);
        /* the code alone, and in either half of a pair next to every other code */
        uint32_t got = w->pair(c);
        CHECK((got & 0xFFFF) == want, "%s: 0x%02X -> 0x%04X, want 0x%04X", w->name, c, got & 0xFFFF, want);
        CHECK((got >> 16) == expected(w, 0), "%s: 0x%02X in the low byte changes the high half", w->name, c);
        for (unsigned o = 0; o < 256; o++) {
            uint32_t lo = w->pair(c | (o << 8)), hi = w->pair(o | (c << 8));
            if ((lo & 0xFFFF) != want || (hi >> 16) != want) {
                CHECK(0, "%s: 0x%02X paired with 0x%02X -> 0x%04X / 0x%04X, want 0x%04X", w->name, c, o, lo & 0xFFFF,
                      hi >> 16, want);
                break;
            }
        }
        if (c != 0x80 || w->type == KILN_DTYPE_E4M3 || w->type == KILN_DTYPE_E5M2) {
            /* every code with a value widens exactly: the widened value is the fp8 value */
            float v = kiln_fp8_to_f32(w->type, (uint8_t)c);
            if (isfinite(v)) {
                float back = w->bf16 ? kiln_bf16_to_f32(want) : kiln_f16_to_f32(want);
                CHECK(back == v && signbit(back) == signbit(v), "%s: 0x%02X is %g, widened %g", w->name, c, v, back);
            }
        }
    }
}

int main(void)
{
    for (size_t i = 0; i < sizeof WIDENINGS / sizeof WIDENINGS[0]; i++)
        test_widening(&WIDENINGS[i]);
    /* the scalar helpers the pairs are made of */
    CHECK(kiln_f16x2_scale(0x3C00BC00u, 3) == 0x4800C800u, "f16x2 scale: 0x%08X", kiln_f16x2_scale(0x3C00BC00u, 3));
    CHECK(kiln_spread2(0xABCDu) == 0x00AB00CDu, "spread2: 0x%08X", kiln_spread2(0xABCDu));
    return test_summary("test_upcast");
}
