/* The tensor maps of a wgmma launch (select.h, kiln_tma_maps): derived from the problem with checked arithmetic and
 * held to cuTensorMapEncodeTiled's limits, so that a problem whose maps the driver would refuse, or whose byte
 * strides would wrap, makes the solution not fit instead of reaching a launch. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "select.h"

/* a * b for non-negative operands, saturating at UINT64_MAX (above every limit checked here). */
static uint64_t mul_sat(uint64_t a, uint64_t b) { return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b; }

/* One operand's map: rows of `cols` elements `ld` apart, batches `stride` apart (at batch 1 the batch stride is the
 * matrix, rows * ld, which the kernel never steps over). */
static kiln_reject operand_map(char op, kiln_reject align, int elem, uint64_t cols, uint64_t rows, uint64_t batch,
                               int64_t ld, int64_t stride, int tile_rows, const void *base, kiln_tma_map *m, char *why,
                               size_t len)
{
    char low = (char)(op - 'A' + 'a');
    m->elem_bytes = elem;
    m->swizzle_bytes = KILN_TMA_SWIZZLE_BYTES;
    m->dims[0] = cols;
    m->dims[1] = rows;
    m->dims[2] = batch;
    m->strides[0] = mul_sat((uint64_t)ld, (uint64_t)elem);
    m->strides[1] = batch > 1 ? mul_sat((uint64_t)stride, (uint64_t)elem) : mul_sat(m->strides[0], rows);
    m->box[0] = (uint32_t)(KILN_TMA_SWIZZLE_BYTES / elem);
    m->box[1] = (uint32_t)tile_rows;
    m->box[2] = 1;
    static const char *const DIM_NAMES[3] = {"k", "rows", "batch"};
    for (int i = 0; i < 3; i++)
        if (m->dims[i] < 1 || m->dims[i] > KILN_TMA_MAX_DIM)
            return kiln_reject_because(why, len, KILN_REJECT_SIZE,
                              "the %c tensor map's %s extent %" PRIu64 " is outside 1..2^32", op, DIM_NAMES[i],
                              m->dims[i]);
    if (m->strides[0] >= KILN_TMA_MAX_STRIDE)
        return kiln_reject_because(why, len, KILN_REJECT_SIZE,
                          "ld%c = %" PRId64 ": the %c tensor map's row stride ld%c * %d bytes must be < 2^40", low, ld,
                          op, low, elem);
    if (m->strides[1] >= KILN_TMA_MAX_STRIDE)
        return kiln_reject_because(why, len, KILN_REJECT_SIZE,
                          "the %c tensor map's batch stride %" PRIu64 " bytes must be < 2^40 (stride_%c = %" PRId64
                          ", ld%c = %" PRId64 ")",
                          op, m->strides[1], low, stride, low, ld);
    if (m->strides[0] % KILN_TMA_STRIDE_ALIGN || m->strides[1] % KILN_TMA_STRIDE_ALIGN)
        return kiln_reject_because(why, len, align, "the %c tensor map's strides %" PRIu64 " and %" PRIu64
                          " bytes must be multiples of 16", op, m->strides[0], m->strides[1]);
    if (base && (uintptr_t)base % KILN_TMA_STRIDE_ALIGN)
        return kiln_reject_because(why, len, align, "%c pointer %p is not 16-byte aligned (a tensor map's base)", op, base);
    if (tile_rows < 1 || tile_rows > KILN_TMA_MAX_BOX)
        return kiln_reject_because(why, len, KILN_REJECT_PROBLEM, "tile side %d is outside a tensor map box's 1..256",
                          tile_rows);
    return KILN_FITS;
}

kiln_reject kiln_tma_maps(const kiln_solution *s, const kiln_problem *p, const kiln_args *args, kiln_tma_map maps[2],
                          char *why, size_t why_len)
{
    int ea = (int)kiln_dtype_bytes(p->a_type), eb = (int)kiln_dtype_bytes(p->b_type);
    if ((ea != 1 && ea != 2) || (eb != 1 && eb != 2))
        return kiln_reject_because(why, why_len, KILN_REJECT_PROBLEM, "tensor maps take 1- or 2-byte elements");
    if (p->k < 1)
        return kiln_reject_because(why, why_len, KILN_REJECT_EMPTY_K, "k=0: a TMA-fed kernel needs at least one K tile");
    if (p->m < 1 || p->n < 1 || p->batch < 1 || p->lda < 0 || p->ldb < 0)
        return kiln_reject_because(why, why_len, KILN_REJECT_PROBLEM, "an empty or malformed problem has no tensor maps");
    /* A prepacked B's rows run to ldb (zero-padded K). */
    uint64_t b_cols = (uint64_t)(p->b_prepacked ? p->ldb : p->k);
    /* grouped problems: B has one matrix per group, and so do A and D when masked */
    uint64_t ab = (uint64_t)kiln_problem_a_batches(p), bb = (uint64_t)kiln_problem_b_batches(p);
    kiln_reject r = operand_map('A', KILN_REJECT_ALIGN_A, ea, (uint64_t)p->k, (uint64_t)p->m, ab, p->lda, p->stride_a,
                                s->mt0, args ? args->a : NULL, &maps[0], why, why_len);
    if (r == KILN_FITS)
        r = operand_map('B', KILN_REJECT_ALIGN_B, eb, b_cols, (uint64_t)p->n, bb, p->ldb, p->stride_b, s->mt1,
                        args ? args->b : NULL, &maps[1], why, why_len);
    return r;
}

/* The row bytes of D's boxes: 128 (128-byte swizzle), or 0 (no map: the staged epilogue) when the environment sets
 * KILN_TMA_STORE=0, which lets one build time both epilogues. */
static int d_box_bytes(void)
{
    const char *e = getenv("KILN_TMA_STORE");
    return e && strcmp(e, "0") == 0 ? 0 : 128;
}

int kiln_tma_map_d(const kiln_solution *s, const kiln_problem *p, const kiln_args *args, kiln_tma_map *m)
{
    int ed = (int)kiln_dtype_bytes(p->d_type), box = d_box_bytes();
    /* grouped: a box's rows may cross a group's end, past which D is not written */
    if (box == 0 || s->gsu != 1 || p->b_prepacked || (ed != 2 && ed != 4) || !args || !args->d ||
        p->group_mode != KILN_GROUP_NONE)
        return 0;
    /* the kernel's TMA-store epilogue applies alpha and tensor scales only */
    if (p->has_c || p->has_bias || p->activation != KILN_ACT_NONE || p->scale_a == KILN_SCALE_VECTOR ||
        p->scale_b == KILN_SCALE_VECTOR)
        return 0;
    /* rows of whole 16-byte units: the copy engine writes the last unit of a row whole, past N */
    if (p->m < 1 || p->n < 1 || p->batch < 1 || p->ldd < 1 || (p->batch > 1 && p->stride_d < 1) || (p->n * ed) % 16)
        return 0;
    /* the layout of A's and B's maps (128-byte boxes, 128-byte swizzle) by 64-row boxes, held to the same limits */
    kiln_reject r = operand_map('D', KILN_REJECT_PROBLEM, ed, (uint64_t)p->n, (uint64_t)p->m, (uint64_t)p->batch,
                                p->ldd, p->stride_d, KILN_TMA_D_BOX_ROWS, args->d, m, NULL, 0);
    return r == KILN_FITS ? box : 0;
}
