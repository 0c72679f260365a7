/* Problem defaults and validation (kiln_problem_init, kiln_check_problem). Every rule of kiln.h lives here, in the
 * order: enums and flags, sizes, type combination, leading dimensions and strides, extents. Each failing rule records
 * the field and its value (kiln_last_error). All arithmetic is checked: no signed overflow for any input. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "dtype.h"
#include "handle.h"
#include "select.h"

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

kiln_kind kiln_problem_kind_of(const kiln_problem *p)
{
    kiln_kind kind = kiln_problem_kind(p->a_type, p->b_type);
    if (kind != KILN_KIND_FP8_SCALED)
        return kind;
    int block = p->scale_a == KILN_SCALE_BLOCK, grouped = p->group_mode != KILN_GROUP_NONE;
    return grouped ? (block ? KILN_KIND_FP8_BLOCK_GROUPED : KILN_KIND_FP8_GROUPED)
                   : (block ? KILN_KIND_FP8_BLOCK : KILN_KIND_FP8_SCALED);
}

kiln_status kiln_check_sizes(const char *const names[], const int64_t sizes[], int n)
{
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %" PRId64 " is negative", names[i], sizes[i]);
        if (sizes[i] > INT32_MAX)
            return kiln_fail(KILN_STATUS_OVERFLOW, "%s = %" PRId64 " exceeds 2^31 - 1 (kernels take int32 sizes)",
                             names[i], sizes[i]);
    }
    return KILN_STATUS_SUCCESS;
}

kiln_work kiln_problem_work(const kiln_problem *p)
{
    if (p->m == 0 || p->n == 0 || p->batch == 0)
        return KILN_WORK_NONE;
    if (p->k == 0 && !p->has_c && !p->has_bias)
        return KILN_WORK_ZERO_D;
    return KILN_WORK_GEMM;
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

static const char *layout_name(kiln_layout l) { return l == KILN_LAYOUT_TN ? "TN" : "NN"; }

static kiln_status init(kiln_problem *p, kiln_dtype a, kiln_dtype b, kiln_dtype d, kiln_layout layout, int64_t m,
                        int64_t n, int64_t k)
{
    if (!p)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "p is NULL");
    if (!kiln_dtype_valid(a) || !kiln_dtype_valid(b) || !kiln_dtype_valid(d))
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %d is not a kiln_dtype",
                         !kiln_dtype_valid(a) ? "a" : !kiln_dtype_valid(b) ? "b" : "d",
                         (int)(!kiln_dtype_valid(a) ? a : !kiln_dtype_valid(b) ? b : d));
    if ((unsigned)layout >= (unsigned)KILN_LAYOUT_COUNT)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "layout = %d is not a kiln_layout", (int)layout);
    const char *const names[3] = {"m", "n", "k"};
    const int64_t sizes[3] = {m, n, k};
    kiln_status st = kiln_check_sizes(names, sizes, 3);
    if (st != KILN_STATUS_SUCCESS)
        return st;
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
    /* Block-scale layouts (kiln.h, "Block scales"): scale_a M-major, scale_b K-major over 128x128 blocks. */
    p->scale_a_stride_m = 1;
    p->scale_a_stride_k = m;
    p->scale_b_stride_n = (k + KILN_SCALE_GROUP - 1) / KILN_SCALE_GROUP;
    p->scale_b_stride_k = 1;
    p->scale_b_block_n = KILN_SCALE_GROUP;
    /* Not grouped; group strides packed (kiln.h, "Grouped GEMM"). */
    p->group_mode = KILN_GROUP_NONE;
    p->groups = 0;
    p->scale_a_stride_g = p->scale_b_stride_g = p->bias_stride_g = -1;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_problem_init(kiln_problem *p, kiln_dtype a, kiln_dtype b, kiln_dtype d, kiln_layout layout,
                              int64_t m, int64_t n, int64_t k)
{
    kiln_call_begin();
    return kiln_call_end(NULL, "kiln_problem_init", init(p, a, b, d, layout, m, n, k));
}

static kiln_status bad_dtype(const char *field, kiln_dtype t)
{
    return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %d is not a kiln_dtype", field, (int)t);
}

static kiln_status bad_flag(const char *field, int v)
{
    return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %d must be 0 or 1", field, v);
}

static int is_flag(int v) { return v == 0 || v == 1; }

static kiln_status check_enums(const kiln_problem *p)
{
    if (!kiln_dtype_valid(p->a_type))
        return bad_dtype("a_type", p->a_type);
    if (!kiln_dtype_valid(p->b_type))
        return bad_dtype("b_type", p->b_type);
    if (!kiln_dtype_valid(p->d_type))
        return bad_dtype("d_type", p->d_type);
    if ((unsigned)p->layout >= (unsigned)KILN_LAYOUT_COUNT)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "layout = %d is not a kiln_layout", (int)p->layout);
    if ((unsigned)p->scale_a >= (unsigned)KILN_SCALE_COUNT)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "scale_a = %d is not a kiln_scale_mode", (int)p->scale_a);
    if ((unsigned)p->scale_b >= (unsigned)KILN_SCALE_COUNT)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "scale_b = %d is not a kiln_scale_mode", (int)p->scale_b);
    if ((unsigned)p->activation >= (unsigned)KILN_ACT_COUNT)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "activation = %d is not a kiln_activation", (int)p->activation);
    if (!is_flag(p->has_bias))
        return bad_flag("has_bias", p->has_bias);
    if (!is_flag(p->has_c))
        return bad_flag("has_c", p->has_c);
    if (!is_flag(p->b_prepacked))
        return bad_flag("b_prepacked", p->b_prepacked);
    if (!is_flag(p->fast_accum))
        return bad_flag("fast_accum", p->fast_accum);
    if (p->has_bias && !kiln_dtype_valid(p->bias_type))
        return bad_dtype("bias_type", p->bias_type);
    if ((unsigned)p->group_mode >= (unsigned)KILN_GROUP_COUNT)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "group_mode = %d is not a kiln_group_mode", (int)p->group_mode);
    return KILN_STATUS_SUCCESS;
}

static int is_f32_or_half(kiln_dtype t) { return t == KILN_DTYPE_F32 || kiln_dtype_is_half(t); }

static kiln_status unsupported(const kiln_problem *p, const char *why)
{
    return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s x %s -> %s %s: %s", kiln_dtype_name(p->a_type),
                     kiln_dtype_name(p->b_type), kiln_dtype_name(p->d_type), layout_name(p->layout), why);
}

/* Block scales (kiln.h): on both operands or neither of an fp8 x fp8 GEMM, or on B alone of f16/bf16 x prepacked
 * fp8 (per-group weight scales); one batch, a block of 128 columns or 1. */
static kiln_status check_block_scales(const kiln_problem *p)
{
    const int a = p->scale_a == KILN_SCALE_BLOCK, b = p->scale_b == KILN_SCALE_BLOCK;
    if (!a && !b)
        return KILN_STATUS_SUCCESS;
    const kiln_kind kind = kiln_problem_kind(p->a_type, p->b_type);
    if (kind == KILN_KIND_MIXED_W8) {
        if (!b) /* (check_types already refused any scale_a) */
            return unsupported(p, "scale_a is KILN_SCALE_BLOCK: per-group scales of f16/bf16 x fp8 go on B");
    } else if (kind != KILN_KIND_FP8_SCALED) {
        return unsupported(p, "block scales (KILN_SCALE_BLOCK) are for fp8 x fp8, or on B alone for f16/bf16 x "
                              "prepacked fp8");
    } else if (a != b) {
        return unsupported(p, a ? "scale_a is KILN_SCALE_BLOCK but scale_b is not: block scales go on both operands"
                                : "scale_b is KILN_SCALE_BLOCK but scale_a is not: block scales go on both operands");
    }
    if (p->batch != 1)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "batch = %" PRId64 ": block-scaled GEMMs take one batch",
                         p->batch);
    if (p->scale_b_block_n != 1 && p->scale_b_block_n != KILN_SCALE_GROUP)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                         "scale_b_block_n = %" PRId64 ": B's block scales cover 128 columns (128x128) or 1 (1x128)",
                         p->scale_b_block_n);
    const char *names[4] = {"scale_a_stride_m", "scale_a_stride_k", "scale_b_stride_n", "scale_b_stride_k"};
    const int64_t strides[4] = {p->scale_a_stride_m, p->scale_a_stride_k, p->scale_b_stride_n, p->scale_b_stride_k};
    for (int i = 0; i < 4; i++)
        if (strides[i] < 0 || strides[i] > INT32_MAX)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %" PRId64 " must be in [0, 2^31 - 1]", names[i],
                             strides[i]);
    return KILN_STATUS_SUCCESS;
}

/* Grouped GEMM (kiln.h, "Grouped GEMM"): fp8 x fp8, one batch, at least one group, k >= 1, strides that keep the
 * groups' outputs apart. */
static kiln_status check_groups(const kiln_problem *p)
{
    if (p->group_mode == KILN_GROUP_NONE) {
        if (p->groups != 0)
            return kiln_fail(KILN_STATUS_INVALID_VALUE,
                             "groups = %" PRId64 " with group_mode = KILN_GROUP_NONE (set group_mode, or groups 0)",
                             p->groups);
        return KILN_STATUS_SUCCESS;
    }
    if (p->groups < 1 || p->groups > INT32_MAX)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "groups = %" PRId64 ": a grouped problem has 1 .. 2^31 - 1 groups",
                         p->groups);
    if (kiln_problem_kind(p->a_type, p->b_type) != KILN_KIND_FP8_SCALED)
        return unsupported(p, "grouped GEMMs (group_mode) are fp8 x fp8");
    if (p->batch != 1)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                         "batch = %" PRId64 ": a grouped problem has batch 1 (its groups take the place of batches)",
                         p->batch);
    if (p->k == 0)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "k = 0: a grouped problem needs k >= 1");
    const char *names[3] = {"scale_a_stride_g", "scale_b_stride_g", "bias_stride_g"};
    const int64_t strides[3] = {p->scale_a_stride_g, p->scale_b_stride_g, p->bias_stride_g};
    for (int i = 0; i < 3; i++)
        if (strides[i] < -1 || strides[i] > INT32_MAX)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %" PRId64 " must be -1 (packed) or in [0, 2^31 - 1]",
                             names[i], strides[i]);
    if (p->stride_b < 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "stride_b = %" PRId64 " is negative (the groups' B)", p->stride_b);
    if (p->group_mode == KILN_GROUP_MASKED || p->group_mode == KILN_GROUP_K) {
        int64_t d_matrix;
        if (p->group_mode == KILN_GROUP_MASKED && p->stride_a < 0)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "stride_a = %" PRId64 " is negative (masked groups' A)",
                             p->stride_a);
        if (p->ldd < 0) /* check_leading names it */
            return KILN_STATUS_SUCCESS;
        if (!mul_i64(p->m, p->ldd, &d_matrix))
            return kiln_fail(KILN_STATUS_OVERFLOW, "m * ldd = %" PRId64 " * %" PRId64 " overflows int64", p->m,
                             p->ldd);
        if (p->groups > 1 && p->stride_d < d_matrix)
            return kiln_fail(KILN_STATUS_INVALID_VALUE,
                             "stride_d = %" PRId64 " is less than m * ldd = %" PRId64 ": %s groups of D would overlap",
                             p->stride_d, d_matrix, p->group_mode == KILN_GROUP_K ? "k-grouped" : "masked");
    }
    return KILN_STATUS_SUCCESS;
}

int64_t kiln_problem_a_batches(const kiln_problem *p)
{
    return p->group_mode == KILN_GROUP_MASKED ? p->groups : p->batch;
}

int64_t kiln_problem_b_batches(const kiln_problem *p)
{
    return p->group_mode != KILN_GROUP_NONE && p->group_mode != KILN_GROUP_K ? p->groups : p->batch;
}

int64_t kiln_problem_d_batches(const kiln_problem *p)
{
    return p->group_mode == KILN_GROUP_MASKED || p->group_mode == KILN_GROUP_K ? p->groups : p->batch;
}

int64_t kiln_problem_select_m(const kiln_problem *p)
{
    if (p->group_mode == KILN_GROUP_CONTIGUOUS && p->groups > 0)
        return (p->m + p->groups - 1) / p->groups;
    return p->m;
}

int64_t kiln_problem_select_k(const kiln_problem *p)
{
    if (p->group_mode == KILN_GROUP_K && p->groups > 0)
        return (p->k + p->groups - 1) / p->groups;
    return p->k;
}

void kiln_problem_group_strides(const kiln_problem *p, int64_t *sa, int64_t *sb, int64_t *bias)
{
    int64_t groups_k = (p->k + KILN_SCALE_GROUP - 1) / KILN_SCALE_GROUP;
    int64_t block_n = p->scale_b_block_n > 0 ? p->scale_b_block_n : 1;
    int block = p->scale_a == KILN_SCALE_BLOCK;
    /* packed sizes are products of values <= 2^31: they fit int64 */
    *sa = p->scale_a_stride_g >= 0 ? p->scale_a_stride_g : block ? p->m * groups_k : p->m;
    *sb = p->scale_b_stride_g >= 0 ? p->scale_b_stride_g : block ? (p->n + block_n - 1) / block_n * groups_k : p->n;
    *bias = p->bias_stride_g >= 0 ? p->bias_stride_g : p->n;
    if (p->group_mode == KILN_GROUP_CONTIGUOUS)
        *sa = 0; /* scale_a rows are A's rows */
    if (p->group_mode == KILN_GROUP_K && block)
        *sa = *sb = 0; /* block scales index K's groups of 128 over all of k */
}

/* Which (a, b, d), layout and epilogue combinations kiln implements (kiln.h, "What is computed"). Anything no
 * problem kind implements is NOT_SUPPORTED here, so that query never answers NO_SOLUTION for it. */
static kiln_status check_types(const kiln_problem *p)
{
    int same_or_f32 = p->d_type == p->a_type || p->d_type == KILN_DTYPE_F32;
    switch (kiln_problem_kind(p->a_type, p->b_type)) {
    case KILN_KIND_FP8_SCALED:
        if (!is_f32_or_half(p->d_type))
            return unsupported(p, "an fp8 GEMM writes f32, f16 or bf16");
        if (p->layout != KILN_LAYOUT_TN)
            return unsupported(p, "fp8 x fp8 runs in the TN layout only (both operands K-major)");
        if (p->has_c)
            return unsupported(p, "has_c = 1: an fp8 GEMM reads no C");
        if (p->b_prepacked)
            return unsupported(p, "b_prepacked = 1: only f16/bf16 x fp8 takes a prepacked B");
        break;
    case KILN_KIND_MIXED_W8:
        if (!same_or_f32)
            return unsupported(p, "f16/bf16 x fp8 writes the type of A or f32");
        if (p->layout != KILN_LAYOUT_TN)
            return unsupported(p, "f16/bf16 x fp8 runs in the TN layout only");
        if (!p->b_prepacked)
            return unsupported(p, "b_prepacked = 0: f16/bf16 x fp8 needs B from kiln_prepack_b");
        if (p->has_c)
            return unsupported(p, "has_c = 1: f16/bf16 x fp8 reads no C");
        if (p->scale_a != KILN_SCALE_NONE)
            return unsupported(p, "scale_a: f16/bf16 x fp8 scales B only");
        break;
    case KILN_KIND_GEMM:
        if (!same_or_f32)
            return unsupported(p, "a 16-bit GEMM writes the type of A or f32");
        if (p->b_prepacked)
            return unsupported(p, "b_prepacked = 1: only f16/bf16 x fp8 takes a prepacked B");
        if (p->scale_a != KILN_SCALE_NONE || p->scale_b != KILN_SCALE_NONE)
            return unsupported(p, "a 16-bit GEMM takes alpha/beta, no scale_a/scale_b");
        break;
    case KILN_KIND_NONE:
    default:
        return unsupported(p, "no problem kind takes these operand types (fp8 x fp8 of one family, f16/bf16 x fp8, "
                              "f16 x f16, bf16 x bf16)");
    }
    if (p->has_bias && !is_f32_or_half(p->bias_type))
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "bias_type = %s: a bias is f32, f16 or bf16",
                         kiln_dtype_name(p->bias_type));
    kiln_status st = check_block_scales(p);
    return st == KILN_STATUS_SUCCESS ? check_groups(p) : st;
}

/* Rows of B as stored and the row length its ld must cover. */
static void b_shape(const kiln_problem *p, int64_t *rows, int64_t *cols)
{
    *rows = p->layout == KILN_LAYOUT_TN ? p->n : p->k;
    *cols = p->b_prepacked ? kiln_prepack_ld(p->k) : p->layout == KILN_LAYOUT_TN ? p->k : p->n;
}

static kiln_status short_ld(const char *ld, int64_t v, const char *what, int64_t need)
{
    return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %" PRId64 " is less than %s = %" PRId64, ld, v, what, need);
}

static kiln_status check_leading(const kiln_problem *p)
{
    int64_t b_rows, b_cols;
    b_shape(p, &b_rows, &b_cols);
    if (p->lda < p->k)
        return short_ld("lda", p->lda, "k", p->k);
    if (p->ldd < p->n)
        return short_ld("ldd", p->ldd, "n", p->n);
    if (p->has_c && p->ldc < p->n)
        return short_ld("ldc", p->ldc, "n", p->n);
    /* A prepacked B has exactly the padded row length kiln_prepack_b_size gives. */
    if (p->b_prepacked && p->ldb != b_cols)
        return kiln_fail(KILN_STATUS_INVALID_VALUE,
                         "ldb = %" PRId64 " must be %" PRId64 " for a prepacked B (k = %" PRId64 " rounded up to 16)",
                         p->ldb, b_cols, p->k);
    if (!p->b_prepacked && p->ldb < b_cols)
        return short_ld("ldb", p->ldb, p->layout == KILN_LAYOUT_TN ? "k (layout TN)" : "n (layout NN)", b_cols);
    if (p->batch > 1) {
        const char *names[4] = {"stride_a", "stride_b", "stride_c", "stride_d"};
        const int64_t strides[4] = {p->stride_a, p->stride_b, p->stride_c, p->stride_d};
        for (int i = 0; i < 4; i++)
            if (strides[i] < 0)
                return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %" PRId64 " is negative (batch = %" PRId64 ")",
                                 names[i], strides[i], p->batch);
        /* Inputs may be shared by batches (stride 0); outputs must not overlap, or batches would race. */
        int64_t d_matrix;
        if (!mul_i64(p->m, p->ldd, &d_matrix))
            return kiln_fail(KILN_STATUS_OVERFLOW, "m * ldd = %" PRId64 " * %" PRId64 " overflows int64", p->m,
                             p->ldd);
        if (p->stride_d < d_matrix)
            return kiln_fail(KILN_STATUS_INVALID_VALUE,
                             "stride_d = %" PRId64 " is less than m * ldd = %" PRId64 ": batches of D would overlap",
                             p->stride_d, d_matrix);
    }
    return KILN_STATUS_SUCCESS;
}

/* No device addresses more than 2^57 bytes (57-bit virtual addresses are the widest in use; GPUs have 48 or 49): an
 * operand that spans more is a wrong leading dimension or stride, caught here rather than by a kernel's fault. */
#define KILN_MAX_OPERAND_BYTES (INT64_C(1) << 57)

/* The byte one past the last element of an operand, ((batch-1)*stride + (rows-1)*ld + cols) * elem, or -1 when it
 * overflows int64. An operand without elements (rows, cols or batch 0) has no extent. */
static int64_t extent_bytes(int64_t batch, int64_t stride, int64_t rows, int64_t ld, int64_t cols, size_t elem)
{
    int64_t a, b, e;
    if (batch == 0 || rows == 0 || cols == 0)
        return 0;
    if (mul_i64(batch - 1, batch > 1 ? stride : 0, &a) && mul_i64(rows - 1, ld, &b) && add_i64(a, b, &e) &&
        add_i64(e, cols, &e) && mul_i64(e, (int64_t)elem, &e))
        return e;
    return -1;
}

static kiln_status check_operand(char op, int64_t stride, int64_t rows, int64_t ld, int64_t cols, size_t elem,
                                 int64_t batch)
{
    int64_t e = extent_bytes(batch, stride, rows, ld, cols, elem);
    char low = (char)(op - 'A' + 'a');
    if (e >= 0 && e <= KILN_MAX_OPERAND_BYTES)
        return KILN_STATUS_SUCCESS;
    if (e < 0)
        return kiln_fail(KILN_STATUS_OVERFLOW,
                         "ld%c = %" PRId64 ", stride_%c = %" PRId64 ": the bytes of %c, ((batch - 1) * stride_%c + "
                         "(rows - 1) * ld%c + cols) * %zu, overflow int64",
                         low, ld, low, batch > 1 ? stride : 0, op, low, low, elem);
    return kiln_fail(KILN_STATUS_OVERFLOW,
                     "ld%c = %" PRId64 ", stride_%c = %" PRId64 ": %c spans %" PRId64 " bytes, more than the 2^57 "
                     "any device addresses",
                     low, ld, low, batch > 1 ? stride : 0, op, e);
}

static kiln_status check_extents(const kiln_problem *p)
{
    int64_t b_rows, b_cols;
    b_shape(p, &b_rows, &b_cols);
    size_t ed = kiln_dtype_bytes(p->d_type);
    int64_t ab = kiln_problem_a_batches(p), bb = kiln_problem_b_batches(p); /* grouped: per group */
    kiln_status st = check_operand('A', p->stride_a, p->m, p->lda, p->k, kiln_dtype_bytes(p->a_type), ab);
    if (st == KILN_STATUS_SUCCESS)
        st = check_operand('B', p->stride_b, b_rows, p->ldb, b_cols, kiln_dtype_bytes(p->b_type), bb);
    if (st == KILN_STATUS_SUCCESS)
        st = check_operand('D', p->stride_d, p->m, p->ldd, p->n, ed, kiln_problem_d_batches(p));
    if (st == KILN_STATUS_SUCCESS && p->has_c)
        st = check_operand('C', p->stride_c, p->m, p->ldc, p->n, ed, p->batch);
    return st;
}

static kiln_status check_sizes(kiln_handle h, const kiln_problem *p)
{
    const char *names[4] = {"m", "n", "k", "batch"};
    const int64_t sizes[4] = {p->m, p->n, p->k, p->batch};
    for (int i = 0; i < 4; i++)
        if (sizes[i] < 0)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %" PRId64 " is negative", names[i], sizes[i]);
    /* The kernels take m, n, k as int32; every batch is at least one workgroup along grid z. */
    for (int i = 0; i < 3; i++)
        if (sizes[i] > INT32_MAX)
            return kiln_fail(KILN_STATUS_OVERFLOW, "%s = %" PRId64 " exceeds 2^31 - 1 (kernels take int32 sizes)",
                             names[i], sizes[i]);
    int64_t max_z = h->limits.max_grid_z > 0 ? h->limits.max_grid_z : KILN_DEFAULT_MAX_GRID_Z;
    if (p->batch > max_z)
        return kiln_fail(KILN_STATUS_OVERFLOW, "batch = %" PRId64 " exceeds the grid z limit %" PRId64, p->batch,
                         max_z);
    return KILN_STATUS_SUCCESS;
}

/* Solution-independent checks. Launch limits that depend on the tile (grid x, tensor maps) are predicates of the
 * selection (kiln_solution_fits); query and run report OVERFLOW when they reject every candidate. */
kiln_status kiln_problem_validate(kiln_handle h, const kiln_problem *p)
{
    if (!h)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "h is NULL");
    if (!p)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "p is NULL");
    kiln_status st = check_enums(p);
    if (st == KILN_STATUS_SUCCESS)
        st = check_sizes(h, p);
    if (st == KILN_STATUS_SUCCESS)
        st = check_types(p);
    if (st == KILN_STATUS_SUCCESS)
        st = check_leading(p);
    if (st == KILN_STATUS_SUCCESS)
        st = check_extents(p);
    return st;
}

kiln_status kiln_check_problem(kiln_handle h, const kiln_problem *p)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_check_problem", kiln_problem_validate(h, p));
}
