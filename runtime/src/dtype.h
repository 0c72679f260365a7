/* Facts about kiln_dtype used across the runtime: element size and family. One table in dtype.c. */
#ifndef KILN_DTYPE_H
#define KILN_DTYPE_H

#include <stddef.h>

#include "kiln/kiln.h"

/* 1 when t is a valid kiln_dtype value. */
int kiln_dtype_valid(kiln_dtype t);
/* Bytes per element; 0 for an invalid value. */
size_t kiln_dtype_bytes(kiln_dtype t);
/* One of the four 8-bit float formats. */
int kiln_dtype_is_fp8(kiln_dtype t);
/* e4m3fnuz or e5m2fnuz. */
int kiln_dtype_is_fnuz(kiln_dtype t);
/* f16 or bf16. */
int kiln_dtype_is_half(kiln_dtype t);

#endif /* KILN_DTYPE_H */
