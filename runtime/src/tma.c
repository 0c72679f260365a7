/* The tensor maps of a wgmma launch (select.h, kiln_tma_maps): derived from the problem with checked arithmetic and
 * held to cuTensorMapEncodeTiled's limits, so that a problem whose maps the driver would refuse, or whose byte
 * strides would wrap, makes the solution not fit instead of reaching a launch. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kiln_abi.h"
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
    /* multicast: each CTA of a pair loads half of the shared operand's tile rows (into both CTAs) */
    int a_rows = s->multicast == 2 ? s->mt0 / 2 : s->mt0, b_rows = s->multicast == 1 ? s->mt1 / 2 : s->mt1;
    kiln_reject r = operand_map('A', KILN_REJECT_ALIGN_A, ea, (uint64_t)p->k, (uint64_t)p->m, ab, p->lda, p->stride_a,
                                a_rows, args ? args->a : NULL, &maps[0], why, why_len);
    if (r == KILN_FITS)
        r = operand_map('B', KILN_REJECT_ALIGN_B, eb, b_cols, (uint64_t)p->n, bb, p->ldb, p->stride_b, b_rows,
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
    /* grouped: D's batches are the groups' (masked, k-grouped); the kernel stores through the map only tiles whose
     * rows all belong to their group */
    int64_t batches = kiln_problem_d_batches(p);
    /* only a kernel with a TMA-store epilogue reads the map (kiln_solution.tma_store) */
    if (box == 0 || !s->tma_store || s->gsu != 1 || (ed != 2 && ed != 4) || !args || !args->d)
        return 0;
    /* the kernel's TMA-store epilogue applies alpha, tensor, row and column scales and the bias (block-scaled
     * kernels: alpha only; they leave the bias to the staged path) */
    int block = p->scale_a == KILN_SCALE_BLOCK || p->scale_b == KILN_SCALE_BLOCK;
    if (p->has_c || p->activation != KILN_ACT_NONE || (block && p->has_bias))
        return 0;
    /* rows of whole 16-byte units: the copy engine writes the last unit of a row whole, past N */
    if (p->m < 1 || p->n < 1 || batches < 1 || p->ldd < 1 || (batches > 1 && p->stride_d < 1) || (p->n * ed) % 16)
        return 0;
    /* the layout of A's and B's maps (128-byte boxes, 128-byte swizzle) by 64-row boxes, held to the same limits */
    kiln_reject r = operand_map('D', KILN_REJECT_PROBLEM, ed, (uint64_t)p->n, (uint64_t)p->m, (uint64_t)batches,
                                p->ldd, p->stride_d, KILN_TMA_D_BOX_ROWS, args->d, m, NULL, 0);
    return r == KILN_FITS ? box : 0;
}

/* One float32 scale map (no swizzle): {dims[0], dims[1], dims[2]} elements, rows stride1 floats apart and batches
 * stride2 floats apart (a single batch: the whole rows). False where the driver could not take it: strides that are
 * not whole 16-byte units or out of range, a base not 16-byte aligned, an extent or box outside its limits. */
static int scale_map(const float *base, uint64_t d0, uint64_t d1, uint64_t d2, int64_t stride1, int64_t stride2,
                     uint32_t b0, uint32_t b1, kiln_tma_map *m)
{
    if (stride1 < 0 || stride2 < 0)
        return 0;
    m->elem_bytes = 4;
    m->swizzle_bytes = 0;
    m->dims[0] = d0;
    m->dims[1] = d1;
    m->dims[2] = d2;
    /* a dimension of extent 1 is never stepped over: any stride works there, and the map gets a packed one in whole
     * 16-byte units */
    uint64_t s1 = d1 > 1 ? (uint64_t)stride1 : (d0 + 3) / 4 * 4, s2 = d2 > 1 ? (uint64_t)stride2 : mul_sat(s1, d1);
    m->strides[0] = mul_sat(s1, 4);
    m->strides[1] = mul_sat(s2, 4);
    m->box[0] = b0;
    m->box[1] = b1;
    m->box[2] = 1;
    for (int i = 0; i < 3; i++)
        if (m->dims[i] < 1 || m->dims[i] > KILN_TMA_MAX_DIM)
            return 0;
    for (int i = 0; i < 2; i++)
        if (m->strides[i] % KILN_TMA_STRIDE_ALIGN || m->strides[i] >= KILN_TMA_MAX_STRIDE)
            return 0;
    return base && (uintptr_t)base % KILN_TMA_STRIDE_ALIGN == 0 && b0 * 4 % 16 == 0 && b0 <= KILN_TMA_MAX_BOX &&
           b1 >= 1 && b1 <= KILN_TMA_MAX_BOX;
}

/* Whether the runtime hands a block-scaled wgmma kernel its scales through two tensor maps (kiln_abi.h, scale_tma):
 * scale_a M-major, scale_b K-major (128x128 blocks) or N-major, each with 16-byte strides and base. Returns the
 * KILN_SCALE_TMA_* bits and the bytes of a stage's two boxes, or 0 (the kernel's scale warp copies them). The
 * environment's KILN_TMA_SCALES=0 keeps the scale warp, which lets one build time both paths. */
int kiln_tma_map_scales(const kiln_solution *s, const kiln_problem *p, const kiln_args *args, kiln_tma_map m[2],
                        int *bytes)
{
    const char *e = getenv("KILN_TMA_SCALES");
    *bytes = 0;
    if ((e && strcmp(e, "0") == 0) || !args || p->scale_a != KILN_SCALE_BLOCK || p->scale_b != KILN_SCALE_BLOCK ||
        p->m < 1 || p->n < 1 || p->k < 1)
        return 0;
    uint64_t kg = (uint64_t)((p->k + KILN_SCALE_GROUP - 1) / KILN_SCALE_GROUP);
    int64_t gsa, gsb, gbias;
    kiln_problem_group_strides(p, &gsa, &gsb, &gbias);
    uint64_t ab = (uint64_t)kiln_problem_a_batches(p), bb = (uint64_t)kiln_problem_b_batches(p);
    /* A: {m, groups of K, A's batches}, M-major. Boxes start on 16 bytes (kiln_gemm_wgmma.h, load_scales): A's spans
     * MT0 + 4 rows, a block's 4 groups of K, the blocks' 8 (a tile's one or two blocks from the multiple of 4 at or
     * below its first) */
    if (p->m > 1 && p->scale_a_stride_m != 1)
        return 0;
    uint32_t a_box = (uint32_t)s->mt0 + 4;
    if (!scale_map(args->scale_a, (uint64_t)p->m, kg, ab, p->scale_a_stride_k, gsa, a_box, 1, &m[0]))
        return 0;
    int per_column = p->scale_b_block_n == 1, tile_blocks = (s->mt1 + 127) / 128;
    uint64_t nb = per_column ? (uint64_t)p->n : (uint64_t)((p->n + 127) / 128);
    int bits = KILN_SCALE_TMA_A, b_bytes;
    if (!per_column && (kg == 1 || p->scale_b_stride_k == 1) &&
        scale_map(args->scale_b, kg, nb, bb, p->scale_b_stride_n, gsb, 4, (uint32_t)tile_blocks, &m[1])) {
        bits |= KILN_SCALE_TMA_B_K; /* {groups of K, blocks, B's batches}, box {4, the tile's blocks} */
        b_bytes = 16 * tile_blocks;
    } else if ((nb == 1 || p->scale_b_stride_n == 1) &&
               scale_map(args->scale_b, nb, kg, bb, p->scale_b_stride_k, gsb, per_column ? (uint32_t)s->mt1 : 8, 1,
                         &m[1])) {
        bits |= KILN_SCALE_TMA_B_N; /* {blocks or columns, groups of K, B's batches}, box {8 or MT1, 1} */
        b_bytes = per_column ? 4 * s->mt1 : 32;
    } else {
        return 0;
    }
    *bytes = 4 * (int)a_box + b_bytes;
    return bits;
}
