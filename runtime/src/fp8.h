/* Host conversions between float32 and kiln's narrow float types.
 *
 * fp8 formats (sign, exponent bits, mantissa bits, bias; what the all-ones exponent means):
 *   KILN_DTYPE_E4M3      OCP e4m3fn  1.4.3 bias 7:  no inf; S.1111.111 is NaN; max 448
 *   KILN_DTYPE_E5M2      OCP e5m2    1.5.2 bias 15: IEEE-like inf (S.11111.00) and NaN; max 57344
 *   KILN_DTYPE_E4M3FNUZ  e4m3fnuz    1.4.3 bias 8:  no inf, no -0; 0x80 is the only NaN; max 240
 *   KILN_DTYPE_E5M2FNUZ  e5m2fnuz    1.5.2 bias 16: no inf, no -0; 0x80 is the only NaN; max 57344
 * Decoding is exact. Encoding rounds to nearest, ties to even, then:
 *   NaN -> NaN (OCP formats keep the sign: e4m3 S.1111.111, e5m2 S.11111.10; FNUZ: 0x80);
 *   a finite value that rounds past the largest finite -> +-max when `saturate`, else +-inf for e5m2 and NaN for
 *   the formats without inf; +-inf -> +-max when `saturate`, else as overflow;
 *   a result of zero in a FNUZ format is 0x00 whatever the sign (0x80 would be NaN).
 */
#ifndef KILN_FP8_H
#define KILN_FP8_H

#include <stdint.h>

#include "kiln/kiln.h"

/* t must be one of the four fp8 types; other values decode to NaN and encode to 0. */
float kiln_fp8_to_f32(kiln_dtype t, uint8_t code);
uint8_t kiln_f32_to_fp8(kiln_dtype t, float x, int saturate);
/* The largest finite value of an fp8 type (NaN for other types). */
float kiln_fp8_max(kiln_dtype t);

/* IEEE binary16: exact decode; encode rounds to nearest even, overflow -> inf, NaN stays NaN. */
float kiln_f16_to_f32(uint16_t h);
uint16_t kiln_f32_to_f16(float x);
/* bfloat16 (the top half of a float32): exact decode; encode rounds to nearest even, NaN stays a quiet NaN. */
float kiln_bf16_to_f32(uint16_t h);
uint16_t kiln_f32_to_bf16(float x);

#endif /* KILN_FP8_H */
