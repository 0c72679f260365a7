/* The public conversions (kiln/kiln_convert.h) against the runtime's own (fp8.c, tested bit-exactly in test_fp8):
 * every code of every narrow type decodes to the same value, values round-trip, and bad arguments are refused. The
 * public header compiles on its own. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kiln/kiln_convert.h"

#include "fp8.h"
#include "test_util.h"

static const kiln_dtype FP8[] = {KILN_DTYPE_E4M3, KILN_DTYPE_E5M2, KILN_DTYPE_E4M3FNUZ, KILN_DTYPE_E5M2FNUZ};

static int same(float x, float y) { return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0; }

int main(void)
{
    CHECK(kiln_dtype_size(KILN_DTYPE_F32) == 4, "f32");
    CHECK(kiln_dtype_size(KILN_DTYPE_F16) == 2 && kiln_dtype_size(KILN_DTYPE_BF16) == 2, "f16/bf16");
    for (int i = 0; i < 4; i++)
        CHECK(kiln_dtype_size(FP8[i]) == 1, "%s", kiln_dtype_name(FP8[i]));
    CHECK(kiln_dtype_size(KILN_DTYPE_COUNT) == 0 && kiln_dtype_size((kiln_dtype)-1) == 0, "invalid types");

    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 256; c++) {
            uint8_t code = (uint8_t)c, back = 0;
            float x = kiln_element_to_f32(FP8[i], &code);
            CHECK(same(x, kiln_fp8_to_f32(FP8[i], code)), "%s code 0x%02x", kiln_dtype_name(FP8[i]), c);
            CHECK(kiln_element_from_f32(FP8[i], x, 0, &back) == KILN_STATUS_SUCCESS, "encode");
            if (!isnan(x))
                CHECK(same(kiln_element_to_f32(FP8[i], &back), x), "%s code 0x%02x round trip", kiln_dtype_name(FP8[i]),
                      c);
        }
    /* Saturation applies to fp8: 1e6 becomes the largest finite e4m3 (448), else NaN (e4m3 has no inf). */
    uint8_t sat = 0;
    kiln_element_from_f32(KILN_DTYPE_E4M3, 1e6f, 1, &sat);
    CHECK(kiln_element_to_f32(KILN_DTYPE_E4M3, &sat) == 448.f, "saturate");
    kiln_element_from_f32(KILN_DTYPE_E4M3, 1e6f, 0, &sat);
    CHECK(isnan(kiln_element_to_f32(KILN_DTYPE_E4M3, &sat)), "no saturation");

    int bad16 = 0;
    for (uint32_t c = 0; c < 65536; c++) {
        uint16_t code = (uint16_t)c, back = 0;
        float h = kiln_element_to_f32(KILN_DTYPE_F16, &code), b = kiln_element_to_f32(KILN_DTYPE_BF16, &code);
        bad16 += !same(h, kiln_f16_to_f32(code)) || !same(b, kiln_bf16_to_f32(code));
        if (!isnan(h)) {
            kiln_element_from_f32(KILN_DTYPE_F16, h, 0, &back);
            bad16 += back != code;
        }
        if (!isnan(b)) {
            kiln_element_from_f32(KILN_DTYPE_BF16, b, 0, &back);
            bad16 += back != code;
        }
    }
    CHECK(bad16 == 0, "%d f16/bf16 codes differ", bad16);

    float f = 0;
    CHECK(kiln_element_from_f32(KILN_DTYPE_F32, 1.5f, 0, &f) == KILN_STATUS_SUCCESS && f == 1.5f, "f32 store");
    CHECK(kiln_element_to_f32(KILN_DTYPE_F32, &f) == 1.5f, "f32 load");
    CHECK(kiln_element_from_f32(KILN_DTYPE_COUNT, 1.f, 0, &f) == KILN_STATUS_INVALID_VALUE, "unknown type");
    CHECK(kiln_element_from_f32(KILN_DTYPE_F16, 1.f, 0, NULL) == KILN_STATUS_NULL_POINTER, "NULL element");
    CHECK(isnan(kiln_element_to_f32(KILN_DTYPE_COUNT, &f)) && isnan(kiln_element_to_f32(KILN_DTYPE_F16, NULL)),
          "bad reads are NaN");
    return test_summary("test_convert");
}
