/* kiln's number formats on the host: element sizes and the conversions to and from float32 that kiln's own tests and
 * clients use to make inputs and read results. The fp8 formats are those of kiln.h's kiln_dtype (OCP e4m3fn/e5m2,
 * and the FNUZ variants of gfx942: no inf, no -0, 0x80 is NaN). This header compiles as C99 and C++.
 */
#ifndef KILN_CONVERT_H
#define KILN_CONVERT_H

#include <stddef.h>

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one element of type t (f32 4, f16/bf16 2, fp8 1); 0 when t is not a kiln_dtype. */
size_t kiln_dtype_size(kiln_dtype t);

/* The value of the element of type t stored at `element` (kiln_dtype_size(t) bytes, host byte order). Exact: every
 * value of these types is a float32. NaN when t is not a kiln_dtype or element is NULL. */
float kiln_element_to_f32(kiln_dtype t, const void *element);

/* Stores x at `element` as type t, rounded to nearest, ties to even. NaN stays NaN. A value past the largest finite
 * one: fp8 types give +-max when `saturate` is nonzero, else inf (e5m2) or NaN (the types without inf); f16 gives inf
 * (`saturate` applies to fp8 only). In the FNUZ types a zero result is 0x00 whatever its sign.
 * Returns KILN_STATUS_INVALID_VALUE for an unknown t, KILN_STATUS_NULL_POINTER for a NULL element. */
kiln_status kiln_element_from_f32(kiln_dtype t, float x, int saturate, void *element);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CONVERT_H */
