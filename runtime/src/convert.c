/* The public conversions of kiln/kiln_convert.h, on top of the runtime's own (fp8.c, dtype.c). */
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "fp8.h"
#include "kiln/kiln_convert.h"

size_t kiln_dtype_size(kiln_dtype t) { return kiln_dtype_bytes(t); }

float kiln_element_to_f32(kiln_dtype t, const void *element)
{
    if (!element || !kiln_dtype_valid(t))
        return NAN;
    if (kiln_dtype_is_fp8(t))
        return kiln_fp8_to_f32(t, *(const uint8_t *)element);
    if (t == KILN_DTYPE_F32) {
        float x;
        memcpy(&x, element, sizeof x);
        return x;
    }
    uint16_t h;
    memcpy(&h, element, sizeof h);
    return t == KILN_DTYPE_F16 ? kiln_f16_to_f32(h) : kiln_bf16_to_f32(h);
}

kiln_status kiln_element_from_f32(kiln_dtype t, float x, int saturate, void *element)
{
    if (!kiln_dtype_valid(t))
        return KILN_STATUS_INVALID_VALUE;
    if (!element)
        return KILN_STATUS_NULL_POINTER;
    if (kiln_dtype_is_fp8(t)) {
        *(uint8_t *)element = kiln_f32_to_fp8(t, x, saturate);
    } else if (t == KILN_DTYPE_F32) {
        memcpy(element, &x, sizeof x);
    } else {
        uint16_t h = t == KILN_DTYPE_F16 ? kiln_f32_to_f16(x) : kiln_f32_to_bf16(x);
        memcpy(element, &h, sizeof h);
    }
    return KILN_STATUS_SUCCESS;
}
