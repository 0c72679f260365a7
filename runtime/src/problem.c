/* Problem defaults and validation (kiln_problem_init, kiln_check_problem). Every rule of kiln.h lives here, in the
 * order: enums and flags, sizes, type combination, leading dimensions and strides, extents. */
#include <stdint.h>
#include <string.h>

#include "dtype.h"
#include "handle.h"

kiln_kind kiln_problem_kind(kiln_dtype a, kiln_dtype b)
{
    if (kiln_dtype_is_fp8(a) && kiln_dtype_is_fp8(b))
        return kiln_dtype_is_fnuz(a) == kiln_dtype_is_fnuz(b) ? KILN_KIND_FP8_SCALED : KILN_KIND_NONE;
    if (kiln_dtype_is_half(a) && kiln_dtype_is_fp8(b))
        return KILN_KIND_MIXED_W8;
    if (kiln_dtype_is_half(a) && a == b)
        return KILN_KIND_GEMM;
    return KILN_KIND_NONE;
}

/* a * b for non-negative operands; 0 on int64 overflow. */
static int mul_i64(int64_t a, int64_t b, int64_t *r)
{
    if (a != 0 && b > INT64_MAX / a)
        return 0;
    *r = a * b;
    return 1;
}

static int add_i64(int64_t a, int64_t b, int64_t *r)
{
    if (b > INT64_MAX - a)
        return 0;
    *r = a + b;
    return 1;
}

kiln_status kiln_problem_init(kiln_problem *p, kiln_dtype a, kiln_dtype b, kiln_dtype d, kiln_layout layout,
                              int64_t m, int64_t n, int64_t k)
{
    if (!p)
        return KILN_STATUS_NULL_POINTER;
    if (!kiln_dtype_valid(a) || !kiln_dtype_valid(b) || !kiln_dtype_valid(d) ||
        (unsigned)layout >= (unsigned)KILN_LAYOUT_COUNT || m < 1 || n < 1 || k < 1)
        return KILN_STATUS_INVALID_VALUE;
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
        return KILN_STATUS_OVERFLOW;
    memset(p, 0, sizeof *p);
    p->a_type = a;
    p->b_type = b;
    p->d_type = d;
    p->layout = layout;
    p->m = m;
    p->n = n;
    p->k = k;
    p->batch = 1;
    /* f16/bf16 x fp8 only runs on a prepacked B, so that is the default there (for the TN layout it needs). */
    p->b_prepacked = kiln_problem_kind(a, b) == KILN_KIND_MIXED_W8 && layout == KILN_LAYOUT_TN;
    p->lda = k;
    p->ldb = p->b_prepacked ? kiln_prepack_ld(k) : layout == KILN_LAYOUT_TN ? k : n;
    p->ldc = n;
    p->ldd = n;
    /* Every product below is of two values <= INT32_MAX + 15, so it fits int64. */
    p->stride_a = m * p->lda;
    p->stride_b = (layout == KILN_LAYOUT_TN ? n : k) * p->ldb;
    p->stride_c = m * p->ldc;
    p->stride_d = m * p->ldd;
    p->scale_a = KILN_SCALE_NONE;
    p->scale_b = KILN_SCALE_NONE;
    p->bias_type = KILN_DTYPE_F32;
    p->activation = KILN_ACT_NONE;
    return KILN_STATUS_SUCCESS;
}

static int is_flag(int v) { return v == 0 || v == 1; }

static kiln_status check_enums(const kiln_problem *p)
{
    if (!kiln_dtype_valid(p->a_type) || !kiln_dtype_valid(p->b_type) || !kiln_dtype_valid(p->d_type) ||
        (unsigned)p->layout >= (unsigned)KILN_LAYOUT_COUNT || (unsigned)p->scale_a >= (unsigned)KILN_SCALE_COUNT ||
        (unsigned)p->scale_b >= (unsigned)KILN_SCALE_COUNT ||
        (unsigned)p->activation >= (unsigned)KILN_ACT_COUNT || !is_flag(p->has_bias) || !is_flag(p->has_c) ||
        !is_flag(p->b_prepacked) || (p->has_bias && !kiln_dtype_valid(p->bias_type)))
        return KILN_STATUS_INVALID_VALUE;
    return KILN_STATUS_SUCCESS;
}

static int is_f32_or_half(kiln_dtype t) { return t == KILN_DTYPE_F32 || kiln_dtype_is_half(t); }

/* Which (a, b, d) and epilogue combinations kiln implements (kiln.h, "What is computed"). */
static kiln_status check_types(const kiln_problem *p)
{
    switch (kiln_problem_kind(p->a_type, p->b_type)) {
    case KILN_KIND_FP8_SCALED:
        if (!is_f32_or_half(p->d_type) || p->has_c || p->b_prepacked)
            return KILN_STATUS_NOT_SUPPORTED;
        break;
    case KILN_KIND_MIXED_W8:
        if ((p->d_type != p->a_type && p->d_type != KILN_DTYPE_F32) || p->has_c || !p->b_prepacked ||
            p->layout != KILN_LAYOUT_TN || p->scale_a != KILN_SCALE_NONE)
            return KILN_STATUS_NOT_SUPPORTED;
        break;
    case KILN_KIND_GEMM:
        if ((p->d_type != p->a_type && p->d_type != KILN_DTYPE_F32) || p->b_prepacked ||
            p->scale_a != KILN_SCALE_NONE || p->scale_b != KILN_SCALE_NONE)
            return KILN_STATUS_NOT_SUPPORTED;
        break;
    case KILN_KIND_NONE:
        return KILN_STATUS_NOT_SUPPORTED;
    }
    if (p->has_bias && !is_f32_or_half(p->bias_type))
        return KILN_STATUS_NOT_SUPPORTED;
    return KILN_STATUS_SUCCESS;
}

/* Rows of B as stored and the row length its ld must cover. */
static void b_shape(const kiln_problem *p, int64_t *rows, int64_t *cols)
{
    *rows = p->layout == KILN_LAYOUT_TN ? p->n : p->k;
    *cols = p->b_prepacked ? kiln_prepack_ld(p->k) : p->layout == KILN_LAYOUT_TN ? p->k : p->n;
}

static kiln_status check_leading(const kiln_problem *p)
{
    int64_t b_rows, b_cols;
    b_shape(p, &b_rows, &b_cols);
    if (p->lda < p->k || p->ldd < p->n || (p->has_c && p->ldc < p->n))
        return KILN_STATUS_INVALID_VALUE;
    /* A prepacked B has exactly the padded row length kiln_prepack_b_size gives. */
    if (p->b_prepacked ? p->ldb != b_cols : p->ldb < b_cols)
        return KILN_STATUS_INVALID_VALUE;
    if (p->batch > 1) {
        int64_t d_matrix;
        if (p->stride_a < 0 || p->stride_b < 0 || p->stride_c < 0 || p->stride_d < 0)
            return KILN_STATUS_INVALID_VALUE;
        /* Inputs may be shared by batches (stride 0); outputs must not overlap, or batches would race. */
        if (!mul_i64(p->m, p->ldd, &d_matrix))
            return KILN_STATUS_OVERFLOW;
        if (p->stride_d < d_matrix)
            return KILN_STATUS_INVALID_VALUE;
    }
    return KILN_STATUS_SUCCESS;
}

/* The byte one past the last element of an operand, (batch-1)*stride + (rows-1)*ld + cols elements, fits int64. */
static int extent_fits(int64_t batch, int64_t stride, int64_t rows, int64_t ld, int64_t cols, size_t elem)
{
    int64_t a, b, e;
    return mul_i64(batch - 1, batch > 1 ? stride : 0, &a) && mul_i64(rows - 1, ld, &b) && add_i64(a, b, &e) &&
           add_i64(e, cols, &e) && mul_i64(e, (int64_t)elem, &e);
}

static kiln_status check_extents(const kiln_problem *p)
{
    int64_t b_rows, b_cols;
    b_shape(p, &b_rows, &b_cols);
    if (!extent_fits(p->batch, p->stride_a, p->m, p->lda, p->k, kiln_dtype_bytes(p->a_type)) ||
        !extent_fits(p->batch, p->stride_b, b_rows, p->ldb, b_cols, kiln_dtype_bytes(p->b_type)) ||
        !extent_fits(p->batch, p->stride_d, p->m, p->ldd, p->n, kiln_dtype_bytes(p->d_type)) ||
        (p->has_c && !extent_fits(p->batch, p->stride_c, p->m, p->ldc, p->n, kiln_dtype_bytes(p->d_type))))
        return KILN_STATUS_OVERFLOW;
    return KILN_STATUS_SUCCESS;
}

/* Solution-independent checks. The launch grid x depends on the tile, so the selection checks it per solution
 * (predicate "size"); query and run report OVERFLOW when that rejects every candidate. */
kiln_status kiln_check_problem(kiln_handle h, const kiln_problem *p)
{
    if (!h || !p)
        return KILN_STATUS_NULL_POINTER;
    kiln_status st = check_enums(p);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1)
        return KILN_STATUS_INVALID_VALUE;
    /* The kernels take m, n, k as int32; every batch is at least one workgroup along grid z. */
    int64_t max_z = h->limits.max_grid_z > 0 ? h->limits.max_grid_z : KILN_DEFAULT_MAX_GRID_Z;
    if (p->m > INT32_MAX || p->n > INT32_MAX || p->k > INT32_MAX || p->batch > max_z)
        return KILN_STATUS_OVERFLOW;
    st = check_types(p);
    if (st == KILN_STATUS_SUCCESS)
        st = check_leading(p);
    if (st == KILN_STATUS_SUCCESS)
        st = check_extents(p);
    return st;
}
