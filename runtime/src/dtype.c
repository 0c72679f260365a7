/* The dtype table: name, size and family of each kiln_dtype. test_api checks every enum value has an entry. */
#include "dtype.h"

typedef struct dtype_info {
    const char *name; /* NULL marks a hole: an enum value added without a row here */
    size_t bytes;
    int fp8;
    int fnuz;
} dtype_info;

static const dtype_info INFO[KILN_DTYPE_COUNT] = {
    [KILN_DTYPE_F32] = {"f32", 4, 0, 0},
    [KILN_DTYPE_F16] = {"f16", 2, 0, 0},
    [KILN_DTYPE_BF16] = {"bf16", 2, 0, 0},
    [KILN_DTYPE_E4M3] = {"e4m3", 1, 1, 0},
    [KILN_DTYPE_E5M2] = {"e5m2", 1, 1, 0},
    [KILN_DTYPE_E4M3FNUZ] = {"e4m3fnuz", 1, 1, 1},
    [KILN_DTYPE_E5M2FNUZ] = {"e5m2fnuz", 1, 1, 1},
};

static const dtype_info *info(kiln_dtype t)
{
    /* Compare as unsigned so that a negative value stored in the enum is rejected too. */
    if ((unsigned)t >= (unsigned)KILN_DTYPE_COUNT || INFO[t].name == NULL)
        return NULL;
    return &INFO[t];
}

int kiln_dtype_valid(kiln_dtype t) { return info(t) != NULL; }

size_t kiln_dtype_bytes(kiln_dtype t)
{
    const dtype_info *i = info(t);
    return i ? i->bytes : 0;
}

int kiln_dtype_is_fp8(kiln_dtype t)
{
    const dtype_info *i = info(t);
    return i ? i->fp8 : 0;
}

int kiln_dtype_is_fnuz(kiln_dtype t)
{
    const dtype_info *i = info(t);
    return i ? i->fnuz : 0;
}

int kiln_dtype_is_half(kiln_dtype t) { return t == KILN_DTYPE_F16 || t == KILN_DTYPE_BF16; }

const char *kiln_dtype_name(kiln_dtype t)
{
    const dtype_info *i = info(t);
    return i ? i->name : "invalid";
}
