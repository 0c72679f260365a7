/* libFuzzer harness over the public API (kiln_check_problem, kiln_query, kiln_explain, kiln_explain_size, kiln_run,
 * kiln_algo_name, kiln_prepack_b, then the attention calls and the V^T packer: fuzz_attention) on the fake tables and the counting fake device of tests/c. The input's bytes are
 * decoded into a problem (starting from kiln_problem_init, then field overwrites with edge values), arguments, an
 * algo and a workspace. It aborts (a crash libFuzzer reports) when:
 *   - a call that failed launched, encoded or filled anything, or left kiln_last_error empty; a success left it set;
 *   - check, query or explain launched anything; query and explain disagree, or differ from a failing check;
 *   - a launch does not fit the problem: its kernel, grid, threads and LDS against the table and kiln_abi.h, the
 *     parameters against the problem, k tiles per split in range, every split-K slice non-empty, no TMA kernel and
 *     no split-K at k = 0; tensor maps whose dims and strides are not the problem's or break the driver's rules;
 *   - a zero fill for a problem that needs a kernel, or one outside D.
 * ASan and UBSan (tests/sanitize) report memory errors and signed overflow anywhere in the runtime.
 * Runs: see tests/fuzz/README.md. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "fake_backend.h"

#define REQUIRE(cond, ...)                                                                                            \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            fprintf(stderr, "fuzz_api: %s:%d: %s: ", __FILE__, __LINE__, #cond);                                      \
            fprintf(stderr, __VA_ARGS__);                                                                             \
            fputc('\n', stderr);                                                                                      \
            abort();                                                                                                  \
        }                                                                                                             \
    } while (0)

/* ---- decoding ---- */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t u8(reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

static uint64_t u64(reader *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | u8(r);
    return v;
}

/* A size or leading dimension, biased to the values where limits sit. */
static int64_t value(reader *r)
{
    static const int64_t EDGES[16] = {INT64_MAX,
                                      INT64_MIN,
                                      INT32_MAX,
                                      (int64_t)INT32_MAX + 1,
                                      UINT32_MAX,
                                      INT64_C(1) << 32,
                                      INT64_C(1) << 40,
                                      (INT64_C(1) << 40) - 16,
                                      INT64_C(1) << 57,
                                      INT64_C(1) << 62,
                                      INT64_MAX / 2,
                                      65535,
                                      65536,
                                      -1,
                                      0,
                                      1};
    uint8_t s = u8(r);
    switch (s % 8) {
    case 0: return u8(r);
    case 1: return (int64_t)u8(r) << 8 | u8(r);
    case 2: return INT64_C(1) << (u8(r) % 63);
    case 3: return (INT64_C(1) << (u8(r) % 62)) + (int8_t)u8(r);
    case 4: return (int64_t)u64(r);
    case 5: return -(int64_t)u8(r);
    case 6: return EDGES[u8(r) % 16];
    default: return (int64_t)u8(r) * 16;
    }
}

/* A device address: aligned, odd, NULL or near the top of the address space. */
static const void *pointer(reader *r, uintptr_t base)
{
    uint8_t s = u8(r);
    if (s % 16 >= 8)
        return (const void *)base; /* mostly valid, so that runs get past the argument checks */
    switch (s % 8) {
    case 0:
    case 1: return (const void *)base;
    case 2: return (const void *)(base + 1);
    case 3: return (const void *)(base + 2);
    case 4: return (const void *)(base + 8);
    case 5: return NULL;
    case 6: return (const void *)(UINTPTR_MAX - 255);
    default: return (const void *)(base + (uintptr_t)u8(r) * 4);
    }
}

static void overwrite(kiln_problem *p, uint8_t field, int64_t v)
{
    switch (field % 28) {
    case 0: p->lda = v; break;
    case 1: p->ldb = v; break;
    case 2: p->ldc = v; break;
    case 3: p->ldd = v; break;
    case 4: p->stride_a = v; break;
    case 5: p->stride_b = v; break;
    case 6: p->stride_c = v; break;
    case 7: p->stride_d = v; break;
    case 8: p->batch = v; break;
    case 9: p->m = v; break;
    case 10: p->n = v; break;
    case 11: p->k = v; break;
    case 12: p->scale_a = (kiln_scale_mode)(int)(v % 5); break;
    case 13: p->scale_b = (kiln_scale_mode)(int)(v % 5); break;
    case 14: p->has_bias = (int)(v % 3); break;
    case 15: p->bias_type = (kiln_dtype)(int)(v % 9); break;
    case 16: p->has_c = (int)(v % 3); break;
    case 17: p->activation = (kiln_activation)(int)(v % 6); break;
    case 18: p->b_prepacked = (int)(v % 3); break;
    case 19: p->batch = v % 8; break;
    case 20: p->stride_a = p->stride_b = 0; break;
    case 21: /* grouped (MoE): a mode (or one out of range) and a group count around the valid ones */
        p->group_mode = (kiln_group_mode)(int)(v % (KILN_GROUP_COUNT + 1));
        p->groups = v % 9 - 1;
        break;
    case 22: p->scale_a = p->scale_b = KILN_SCALE_BLOCK; break; /* block scales on both: the only valid pairing */
    case 23: p->scale_a_stride_m = v; break;
    case 24: p->scale_a_stride_k = v; break;
    case 25: p->scale_b_stride_n = v; break;
    case 26: p->scale_b_stride_k = v; break;
    case 27: p->scale_b_block_n = v % 3 == 0 ? 1 : v % 3 == 1 ? 128 : v; break;
    default: p->ldd = p->n < INT64_MAX - 63 ? p->n + (v & 63) : p->n; break; /* a padded D */
    }
}

/* ---- what a launch must look like ---- */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The solution whose kernel (or reduce kernel, *reduce = 1) has this symbol. */
static const kiln_solution *by_symbol(const char *symbol, int *reduce)
{
    for (int i = 0; i < kiln_num_solutions; i++) {
        const kiln_solution *s = &kiln_solutions[i];
        if (strcmp(s->name, symbol) == 0 || (s->reduce_name && strcmp(s->reduce_name, symbol) == 0)) {
            *reduce = strcmp(s->name, symbol) != 0;
            return s;
        }
    }
    return NULL;
}

/* A rank-3 map within cuTensorMapEncodeTiled's rules (dims 1..2^32, boxes 1..256, strides multiples of 16 below
 * 2^40, a 16-byte base), over `base` with elements of `elem` bytes. */
static void check_map_limits(const fake_encode *e, const void *base, int elem, const char *what)
{
    REQUIRE(e->rank == 3 && e->base == base && e->elem_bytes == elem && (uintptr_t)base % 16 == 0, "%s base/elem",
            what);
    for (int i = 0; i < 3; i++)
        REQUIRE(e->dims[i] >= 1 && e->dims[i] <= (UINT64_C(1) << 32) && e->box[i] >= 1 && e->box[i] <= 256,
                "%s dims/box limits", what);
    for (int i = 0; i < 2; i++)
        REQUIRE(e->strides[i] % 16 == 0 && e->strides[i] < (UINT64_C(1) << 40), "%s stride limits %llu", what,
                (unsigned long long)e->strides[i]);
}

static void check_map(const fake_encode *e, const void *base, int elem, uint64_t cols, uint64_t rows,
                      int64_t batches, int64_t ld, int64_t stride, int tile, int swizzle)
{
    __int128 row = (__int128)ld * elem;
    __int128 batch = batches > 1 ? (__int128)stride * elem : row * (__int128)rows;
    check_map_limits(e, base, elem, "map");
    REQUIRE(e->dims[0] == cols && e->dims[1] == rows && e->dims[2] == (uint64_t)batches, "map dims");
    REQUIRE((__int128)e->strides[0] == row && (__int128)e->strides[1] == batch, "map strides");
    REQUIRE(e->swizzle_bytes == swizzle && e->box[0] * (uint32_t)elem == (uint32_t)swizzle &&
                e->box[1] == (uint32_t)tile && e->box[2] == 1,
            "map box");
}

/* A block scale's map: fp32, no swizzle, boxes of whole 16-byte rows. */
static void check_scale_map(const fake_encode *e, const void *base)
{
    check_map_limits(e, base, 4, "scale map");
    REQUIRE(e->swizzle_bytes == 0 && e->box[0] * 4 % 16 == 0 && e->box[2] == 1, "scale map box {%u, %u, %u}",
            e->box[0], e->box[1], e->box[2]);
}

/* A successful kiln_run of a problem that needs a GEMM kernel: the launches fit the problem. */
static void check_gemm_run(const kiln_problem *p, const kiln_args *a, const void *ws, int sms)
{
    int reduce = 0;
    REQUIRE(fake.launches >= 1 && fake.zeros == 0 && fake.bad_arg_bytes == 0, "launches %d", fake.launches);
    const fake_launch *l = &fake.last[0];
    const kiln_solution *s = by_symbol(l->symbol, &reduce);
    REQUIRE(s && !reduce, "the first launch is a GEMM kernel of the table");
    REQUIRE(fake.launches == (s->gsu > 1 ? 2 : 1), "%d launches for gsu %d", fake.launches, s->gsu);
    REQUIRE(s->a_type == p->a_type && s->b_type == p->b_type && s->d_type == p->d_type && s->layout == p->layout &&
                s->b_prepacked == p->b_prepacked,
            "a kernel of the problem type");
    REQUIRE(l->block == (uint32_t)s->threads && l->lds == (uint32_t)s->lds_bytes && l->lds <= FAKE_MAX_LDS,
            "threads and LDS from the table");
    REQUIRE(p->k % s->k_multiple == 0 && (s->align_a < 2 || p->lda % s->align_a == 0) &&
                (s->align_b < 2 || p->ldb % s->align_b == 0),
            "predicates hold");
    int wgmma = kiln_solution_wgmma(s);
    REQUIRE(!(p->k == 0 && (wgmma || s->gsu > 1)), "k = 0 runs neither a TMA kernel nor split-K");
    const kiln_gemm_params *g = &l->params;
    int64_t kb = p->b_prepacked ? p->ldb : p->k;
    int64_t tm = ceil_div(p->m, s->mt0), tn = ceil_div(p->n, s->mt1), kt = ceil_div(kb, s->depth_u);
    int64_t kps = ceil_div(kt, s->gsu);
    REQUIRE(g->m == p->m && g->n == p->n && g->k == p->k && g->batch == p->batch && g->tiles_m == tm &&
                g->tiles_n == tn && g->k_tiles_per_split == kps && kps >= 0 && kps <= INT32_MAX,
            "sizes and tiles");
    REQUIRE(s->gsu == 1 || (s->gsu - 1) * kps < kt, "every split-K slice has a K tile");
    REQUIRE(g->lda == p->lda && g->ldb == p->ldb && g->ldd == p->ldd && g->stride_a == p->stride_a &&
                g->stride_d == p->stride_d && g->a == a->a && g->b == a->b && g->d == a->d &&
                g->c == (p->has_c ? a->c : NULL) && g->bias == (p->has_bias ? a->bias : NULL) &&
                g->workspace == (s->gsu > 1 ? ws : NULL),
            "pointers and leading dimensions");
    const int block_kernel = s->kind == KILN_KIND_FP8_BLOCK || s->kind == KILN_KIND_FP8_BLOCK_GROUPED;
    if (p->scale_a == KILN_SCALE_BLOCK) /* (grouped: each group's scale_a 16-byte aligned too for the vector reads) */
        REQUIRE(block_kernel && g->sa_stride_m == p->scale_a_stride_m && g->sa_stride_k == p->scale_a_stride_k &&
                    g->sb_stride_n == p->scale_b_stride_n && g->sb_stride_k == p->scale_b_stride_k &&
                    g->sb_block_n == p->scale_b_block_n &&
                    g->sa_vec == (p->scale_a_stride_m == 1 && p->scale_a_stride_k % 4 == 0 &&
                                  (uintptr_t)a->scale_a % 16 == 0 &&
                                  (p->group_mode == KILN_GROUP_NONE || g->g_stride_sa % 4 == 0)),
                "block scales: a block-scaled kernel and the problem's scale layout");
    else
        REQUIRE(!block_kernel, "a block-scaled kernel for a problem without block scales");
    /* grouped (MoE): a grouped kernel of the scales' kind (wgmma in these tables), the groups and their index; B has a
     * matrix per group (k-grouped: one, split along K), A and D one per group where masked, D where k-grouped */
    const int grouped = p->group_mode != KILN_GROUP_NONE;
    const int64_t groups = p->groups, mode = p->group_mode;
    if (grouped)
        REQUIRE(s->kind == (p->scale_a == KILN_SCALE_BLOCK ? KILN_KIND_FP8_BLOCK_GROUPED : KILN_KIND_FP8_GROUPED) &&
                    wgmma && s->gsu == 1 && g->group_mode == (int32_t)mode && g->groups == groups &&
                    g->group_index == a->group_index && a->group_index && (uintptr_t)a->group_index % 4 == 0,
                "a grouped launch: the kernel's kind, the groups and their index");
    else
        REQUIRE(g->group_mode == 0 && g->groups == 0 && g->group_index == NULL &&
                    s->kind != KILN_KIND_FP8_GROUPED && s->kind != KILN_KIND_FP8_BLOCK_GROUPED,
                "a dense problem on a grouped kernel, or grouped fields on a dense launch");
    const int64_t a_batches = mode == KILN_GROUP_MASKED ? groups : grouped ? 1 : p->batch;
    const int64_t b_batches = grouped ? (mode == KILN_GROUP_K ? 1 : groups) : p->batch;
    const int64_t d_batches = mode == KILN_GROUP_MASKED || mode == KILN_GROUP_K ? groups : grouped ? 1 : p->batch;
    REQUIRE(l->grid[1] == 1 && l->grid[0] >= 1 && l->grid[0] <= INT32_MAX && l->grid[2] >= 1 && l->grid[2] <= 65535,
            "grid within the device limits");
    __int128 tiles = (__int128)tm * tn;
    if (wgmma) {
        /* grouped: a bound on the groups' tiles (a contiguous group adds at most one partial tile row) */
        __int128 all = !grouped ? tiles * p->batch * s->gsu
                       : mode == KILN_GROUP_CONTIGUOUS ? (__int128)(tm + groups) * tn : tiles * groups;
        REQUIRE(l->arg_bytes == sizeof(kiln_tma_params) && l->tma.num_tiles == all && l->grid[2] == 1, "TMA tiles");
        __int128 want = s->persistent && sms > 0 && sms < all ? sms : all;
        REQUIRE(l->grid[0] == want, "grid x %u, want %lld", l->grid[0], (long long)want);
        int ea = (int)kiln_dtype_bytes(p->a_type), eb = (int)kiln_dtype_bytes(p->b_type);
        int ed = (int)kiln_dtype_bytes(p->d_type);
        /* D goes through a map exactly where the kernel can store through one and D allows it */
        int block = p->scale_a == KILN_SCALE_BLOCK || p->scale_b == KILN_SCALE_BLOCK;
        int plain = !p->has_c && p->activation == KILN_ACT_NONE && !(block && p->has_bias);
        __int128 d_row = (__int128)p->ldd * ed, d_batch = d_batches > 1 ? (__int128)p->stride_d * ed : d_row * p->m;
        int d_ok = plain && s->gsu == 1 && !p->b_prepacked && (ed == 2 || ed == 4) && (uintptr_t)a->d % 16 == 0 &&
                   d_row > 0 && d_batch > 0 && d_row % 16 == 0 && d_batch % 16 == 0 && (p->n * ed) % 16 == 0 &&
                   d_row < ((__int128)1 << 40) && d_batch < ((__int128)1 << 40);
        /* block scales: two more maps (A's, then one of B's two layouts) where the layout allows them */
        const int sc = l->tma.scale_tma, sa_b = KILN_SCALE_TMA_A, sb_k = KILN_SCALE_TMA_B_K, sb_n = KILN_SCALE_TMA_B_N;
        kiln_tma_map want_maps[2];
        int want_bytes = 0, want_sc = kiln_tma_map_scales(s, p, a, want_maps, &want_bytes);
        REQUIRE(sc == 0 || (block && block_kernel && (sc == (sa_b | sb_k) || sc == (sa_b | sb_n))),
                "scale maps %d: only for block scales, A's with one of B's", sc);
        REQUIRE(sc == want_sc && l->tma.scale_tma_bytes == (sc ? want_bytes : 0) && (sc == 0 || want_bytes > 0),
                "scale maps %d (%d bytes), the layout allows %d (%d bytes)", sc, l->tma.scale_tma_bytes, want_sc,
                want_bytes);
        REQUIRE(l->tma.d_tma == (d_ok ? 128 : 0) && fake.encodes == 2 + d_ok + (sc ? 2 : 0),
                "maps: %d encodes, d_tma %d, want %d, scale maps %d", fake.encodes, l->tma.d_tma, d_ok, sc);
        check_map(&fake.encode[0], a->a, ea, (uint64_t)p->k, (uint64_t)p->m, a_batches, p->lda, p->stride_a, s->mt0,
                  128);
        check_map(&fake.encode[1], a->b, eb, (uint64_t)kb, (uint64_t)p->n, b_batches, p->ldb, p->stride_b, s->mt1,
                  128);
        if (d_ok)
            check_map(&fake.encode[2], a->d, ed, (uint64_t)p->n, (uint64_t)p->m, d_batches, p->ldd, p->stride_d, 64,
                      128);
        if (sc) {
            const uint64_t groups_k = (uint64_t)ceil_div(p->k, 128);
            const fake_encode *ma = &fake.encode[2 + d_ok], *mb = &fake.encode[3 + d_ok];
            check_scale_map(ma, a->scale_a);
            check_scale_map(mb, a->scale_b);
            REQUIRE(ma->dims[0] == (uint64_t)p->m && ma->dims[1] == groups_k && ma->box[0] == (uint32_t)s->mt0 + 4 &&
                        ma->box[1] == 1,
                    "scale_a map {%llu %llu} box %u: {M, groups of K}, box MT0 + 4", (unsigned long long)ma->dims[0],
                    (unsigned long long)ma->dims[1], ma->box[0]);
            const uint32_t tile_blocks = (uint32_t)ceil_div(s->mt1, 128);
            REQUIRE(sc & sb_k ? mb->dims[0] == groups_k && mb->box[0] == 4 && mb->box[1] == tile_blocks
                              : mb->dims[1] == groups_k && mb->box[1] == 1,
                    "scale_b map {%llu %llu} box {%u %u}", (unsigned long long)mb->dims[0],
                    (unsigned long long)mb->dims[1], mb->box[0], mb->box[1]);
        }
    } else {
        REQUIRE(l->arg_bytes == sizeof(kiln_gemm_params) && l->grid[0] == tiles &&
                    l->grid[2] == (uint32_t)(p->batch * s->gsu) && fake.encodes == 0,
                "plain grid %u x %u", l->grid[0], l->grid[2]);
    }
    if (s->gsu > 1) {
        const fake_launch *r = &fake.last[1];
        const kiln_solution *rs = by_symbol(r->symbol, &reduce);
        REQUIRE(rs == s && reduce && r->block == KILN_REDUCE_THREADS && r->lds == 0 &&
                    r->grid[0] == ceil_div(p->m * p->n, KILN_REDUCE_THREADS) && r->grid[1] == 1 &&
                    r->grid[2] == p->batch && r->arg_bytes == sizeof(kiln_gemm_params),
                "reduce launch");
        REQUIRE(ws && (uintptr_t)ws % 16 == 0, "split-K workspace");
    }
}

/* A successful zero fill stays inside D and covers m * batch rows of n elements. */
static void check_zero_run(const kiln_problem *p, const kiln_args *a)
{
    uint64_t ed = kiln_dtype_bytes(p->d_type), width = (uint64_t)p->n * ed;
    REQUIRE(fake.launches == 0 && fake.encodes == 0 && fake.zeros >= 1, "a zero fill, no kernel");
    uint64_t rows = 0;
    for (int i = 0; i < fake.zeros && i < 2; i++) {
        const fake_zero *z = &fake.zero[i];
        REQUIRE(z->width == width && z->pitch >= z->width && z->height >= 1, "fill shape");
        REQUIRE((uintptr_t)z->dst >= (uintptr_t)a->d, "fill inside D");
    }
    rows = fake.zeros == 1 ? fake.zero[0].height : (uint64_t)fake.zeros * fake.zero[0].height;
    REQUIRE(rows == (uint64_t)p->m * (uint64_t)p->batch, "rows %llu", (unsigned long long)rows);
}

/* ---- one input ---- */

/* What the inputs reached, printed at exit when KILN_FUZZ_STATS is set (tests/fuzz/README.md). */
static struct {
    long inputs, failed_runs, empty_runs, zero_fills, plain_runs, tma_runs, splitk_runs, block_runs, scale_map_runs;
    long grouped_runs;
    long attn_runs, attn_packed_runs, attn_packs, attn_split_runs;
} stats;

static void print_stats(void)
{
    fprintf(stderr,
            "fuzz_api: %ld inputs: runs refused %ld, empty %ld, zero fills %ld, plain launches %ld, TMA launches %ld "
            "(split-K %ld, block-scaled %ld, scales through maps %ld, grouped %ld); attention launches %ld "
            "(V packed %ld, split tail %ld), V^T packs %ld\n",
            stats.inputs, stats.failed_runs, stats.empty_runs, stats.zero_fills, stats.plain_runs, stats.tma_runs,
            stats.splitk_runs, stats.block_runs, stats.scale_map_runs, stats.grouped_runs, stats.attn_runs,
            stats.attn_packed_runs, stats.attn_split_runs, stats.attn_packs);
}

static void expect_error_state(kiln_handle h, kiln_status st, int launches, int zeros, int encodes, const char *call)
{
    const char *e = kiln_last_error(h);
    REQUIRE(e != NULL, "%s: never NULL", call);
    if (st == KILN_STATUS_SUCCESS) {
        REQUIRE(e[0] == '\0', "%s: success leaves no text, got '%s'", call, e);
    } else {
        REQUIRE(e[0] != '\0' && strstr(e, call) == e, "%s failed (%s) without a text: '%s'", call,
                kiln_status_string(st), e);
        REQUIRE(fake.launches == launches && fake.zeros == zeros && fake.encodes == encodes,
                "%s failed (%s: %s) and ran something", call, kiln_status_string(st), e);
    }
}

static void fuzz_prepack(reader *r)
{
    int64_t n = u8(r) % 40, k = u8(r) % 70, ld = (int64_t)(u8(r) % 80) - 4;
    kiln_layout layout = (kiln_layout)(u8(r) % 3);
    int slack = (int8_t)u8(r);
    size_t bytes = 0;
    int64_t kp = 0;
    if (kiln_prepack_b_size(n, k, &bytes, &kp) != KILN_STATUS_SUCCESS)
        return;
    int64_t rows = layout == KILN_LAYOUT_NN ? k : n;
    size_t src_bytes = rows > 0 && ld > 0 ? (size_t)((rows - 1) * ld + (layout == KILN_LAYOUT_NN ? n : k)) : 1;
    size_t dst_bytes = (int64_t)bytes + slack > 0 ? (size_t)((int64_t)bytes + slack) : 0;
    uint8_t *src = malloc(src_bytes ? src_bytes : 1), *dst = malloc(dst_bytes ? dst_bytes : 1);
    REQUIRE(src && dst, "memory");
    memset(src, 0x5A, src_bytes);
    kiln_status st = kiln_prepack_b(src, layout, n, k, ld, dst, dst_bytes);
    REQUIRE(st != KILN_STATUS_SUCCESS || dst_bytes >= bytes, "prepack succeeded into a short buffer");
    REQUIRE((st == KILN_STATUS_SUCCESS) == (kiln_last_error(NULL)[0] == '\0'), "prepack text");
    free(src);
    free(dst);
}

/* An attention size: mostly small, sometimes an edge value. */
static int64_t attn_size(reader *r)
{
    uint8_t s = u8(r);
    return s % 4 == 0 ? value(r) : s % 4 == 1 ? (int64_t)u8(r) : ((int64_t)u8(r) << 8 | u8(r)) % 20000;
}

/* The attention API (check, query, explain, run) and the V^T packer (kiln_attn_pack_v_size, kiln_attn_pack_v) on one
 * decoded problem: a failure runs nothing and names its call; check, query, explain and the size launch nothing; a
 * run launches the one kernel it selected, of the problem's types, head dim and V layout, with the grid, block and
 * shared memory of the table (and three tensor maps for the wgmma family, the V map f16 when V is packed); a pack
 * launches the packer of a packed-V kernel over the whole V^T. */
static void fuzz_attention(reader *r, const kiln_backend *backend)
{
    static const kiln_dtype QKV[8] = {KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_E5M2, KILN_DTYPE_E4M3FNUZ,
                                      KILN_DTYPE_BF16, KILN_DTYPE_F16, KILN_DTYPE_F32, (kiln_dtype)99};
    static const kiln_dtype OUT[4] = {KILN_DTYPE_BF16, KILN_DTYPE_F16, KILN_DTYPE_F32, (kiln_dtype)77};
    static const int64_t DIMS[4] = {64, 128, 256, 96};
    static const int FLAG[8] = {0, 0, 0, 1, 1, 1, 2, -1};
    static const float SCALES[5] = {0.0f, 0.125f, -1.0f, NAN, INFINITY};
    uint8_t f = u8(r);
    kiln_handle h = NULL;
    REQUIRE(kiln_create_with_backend(&h, backend) == KILN_STATUS_SUCCESS && h, "attention handle");
    if (f & 1)
        kiln_set_arch(h, (f & 2) ? "gfx942" : "sm89");
    kiln_dtype qkv = QKV[u8(r) % 8], o = OUT[u8(r) % 4];
    int64_t b = attn_size(r), hq = attn_size(r), hk = attn_size(r), sq = attn_size(r), sk = attn_size(r);
    uint8_t dp = u8(r);
    int64_t d = dp >= 252 ? value(r) : DIMS[dp % 4];
    kiln_attn_problem p;
    if (kiln_attn_problem_init(&p, qkv, o, b, hq, hk, sq, sk, d) != KILN_STATUS_SUCCESS) {
        kiln_attn_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_BF16, 1, 1, 1, 1, 1, 64);
        p.qkv_type = qkv, p.o_type = o, p.batch = b, p.heads_q = hq, p.heads_kv = hk, p.seqlen_q = sq;
        p.seqlen_k = sk, p.head_dim = d;
    }
    int *flags[5] = {&p.causal, &p.varlen, &p.has_lse, &p.fp8_p, &p.v_packed};
    for (int i = 0; i < 5; i++)
        *flags[i] = FLAG[u8(r) % 8];
    p.descale = (kiln_scale_mode)(u8(r) % 5);
    int64_t *fields[14] = {&p.q_stride_b, &p.q_stride_s, &p.q_stride_h, &p.k_stride_b, &p.k_stride_s,
                           &p.k_stride_h, &p.v_stride_b, &p.v_stride_s, &p.v_stride_h, &p.o_stride_b,
                           &p.o_stride_s, &p.o_stride_h, &p.total_q, &p.total_k};
    for (int i = 0, edits = u8(r) % 6; i < edits; i++) {
        uint8_t field = u8(r);
        *fields[field % 14] = value(r);
    }
    kiln_attn_args a;
    memset(&a, 0, sizeof a);
    a.q = pointer(r, 0x10000000), a.k = pointer(r, 0x20000000), a.v = pointer(r, 0x30000000);
    a.o = (void *)(uintptr_t)pointer(r, 0x40000000);
    a.lse = (float *)(uintptr_t)pointer(r, 0x50000000);
    a.cu_seqlens_q = pointer(r, 0x60000000), a.cu_seqlens_k = pointer(r, 0x60001000);
    a.q_descale = a.k_descale = a.v_descale = pointer(r, 0x70000000);
    a.softmax_scale = SCALES[u8(r) % 5];
    uint8_t algo_pick = u8(r);
    /* the split tail's workspace (kiln.h, API 8): none, or 16-byte aligned or not, of a fuzzed size or the size asked */
    uint8_t split_pick = u8(r);
    a.split_work = split_pick & 1 ? (void *)(uintptr_t)(0x90000000u + (split_pick & 2 ? 4u : 0u)) : NULL;
    char text[2048];

    fake_reset();
    kiln_status check = kiln_attn_check(h, &p);
    expect_error_state(h, check, 0, 0, 0, "kiln_attn_check");
    kiln_algo algos[4];
    int returned = -1;
    kiln_status query = kiln_attn_query(h, &p, algos, 4, &returned);
    expect_error_state(h, query, 0, 0, 0, "kiln_attn_query");
    if (check != KILN_STATUS_SUCCESS)
        REQUIRE(query == check, "attention query %d, check %d", query, check);
    REQUIRE(query == KILN_STATUS_SUCCESS ? returned >= 1 && returned <= 4 : returned == 0, "returned %d", returned);
    for (int i = 0; i < returned; i++) {
        REQUIRE(algos[i].solution_index < (uint32_t)kiln_num_attn_solutions, "candidate %d in the table", i);
        const kiln_attn_solution *s = &kiln_attn_solutions[algos[i].solution_index];
        REQUIRE(s->name_hash == algos[i].name_hash &&
                    (s->v_packed != 0) == (p.v_packed != 0) && s->head_dim == p.head_dim && s->qkv_type == p.qkv_type &&
                    s->o_type == p.o_type,
                "attention candidate %d (%s) takes the problem", i, s->name);
    }
    memset(text, 'x', sizeof text);
    kiln_status explain = kiln_attn_explain(h, &p, text, 1 + (size_t)(algo_pick % 8) * 256);
    expect_error_state(h, explain, 0, 0, 0, "kiln_attn_explain");
    REQUIRE(explain == query, "attention explain %d, query %d", explain, query);
    REQUIRE(memchr(text, '\0', sizeof text) != NULL, "explain text is terminated");
    REQUIRE(fake.launches == 0 && fake.encodes == 0, "attention queries ran nothing");

    kiln_algo chosen;
    const kiln_algo *algo = NULL;
    if (algo_pick % 4 == 1 && returned > 0) {
        algo = &algos[(algo_pick / 4) % returned];
    } else if (algo_pick % 4 == 2) {
        memset(&chosen, 0, sizeof chosen);
        chosen.solution_index = (uint32_t)((algo_pick / 4) % kiln_num_attn_solutions);
        chosen.name_hash = kiln_attn_solutions[chosen.solution_index].name_hash;
        algo = &chosen;
    } else if (algo_pick % 4 == 3) {
        memset(&chosen, 0, sizeof chosen);
        chosen.name_hash = algo_pick * UINT64_C(0x9E3779B97F4A7C15);
        algo = &chosen;
    }
    size_t split_need = 1;
    fake_reset();
    kiln_status split_size = kiln_attn_split_work_size(h, &p, algo, &split_need);
    expect_error_state(h, split_size, 0, 0, 0, "kiln_attn_split_work_size");
    REQUIRE(fake.launches == 0 && fake.zeros == 0 && fake.encodes == 0, "the split size runs nothing");
    REQUIRE(split_size == KILN_STATUS_SUCCESS || split_need == 0, "a failed split size is 0");
    REQUIRE(split_need == 0 || (!p.causal && !p.varlen), "no split workspace for causal (%d) or varlen (%d) problems",
            p.causal, p.varlen);
    a.split_work_bytes = split_pick & 4 ? split_need - (split_pick & 8 ? 1 : 0) : (size_t)(split_pick >> 4) << 20;
    fake_reset();
    fake.fail_encode = (f & 4) ? 1 + (f >> 6) % 3 : 0;
    kiln_status run = kiln_attn_run(h, &p, algo, &a, NULL);
    expect_error_state(h, run, 0, 0, fake.encodes, "kiln_attn_run");
    if (check != KILN_STATUS_SUCCESS)
        REQUIRE(run == check, "attention run %d, check %d", run, check);
    if (run == KILN_STATUS_SUCCESS && (p.batch == 0 || p.heads_q == 0 || p.seqlen_q == 0)) {
        REQUIRE(fake.launches == 0 && fake.encodes == 0, "an empty attention problem runs nothing");
    } else if (run == KILN_STATUS_SUCCESS) {
        /* (v_packed 2 on a kernel that cannot pack V itself, or where kiln_attn_run has it not pack (more than one
         * wave, seqlen_q > 8192): its packer first) */
        const fake_launch *l = &fake.last[fake.launches > 0 ? fake.launches - 1 : 0];
        const kiln_attn_solution *s = NULL;
        for (int i = 0; i < kiln_num_attn_solutions; i++)
            if (strcmp(kiln_attn_solutions[i].name, l->symbol) == 0)
                s = &kiln_attn_solutions[i];
        REQUIRE(s && (fake.launches == 1 || (fake.launches == 2 && p.v_packed == 2 && s->v_packed >= 1 &&
                                             strstr(fake.last[0].symbol, "_pack"))),
                "one attention kernel launched (%d)", fake.launches);
        REQUIRE((s->v_packed != 0) == (p.v_packed != 0) && s->head_dim == p.head_dim && s->qkv_type == p.qkv_type &&
                    s->o_type == p.o_type && (!algo || algo->name_hash == s->name_hash),
                "%s takes the problem", s->name);
        kiln_attn_params kp = l->attn;
        const int64_t gx = s->persistent ? kiln_attn_work_grid(&kp, s->bm, s->bn, fake_sm_count) : 0;
        if (gx > 0) { /* the work order's grid (kiln_attn_abi.h), from the params the kernel got */
            REQUIRE(l->grid[0] == (uint32_t)gx && l->grid[1] == 1 && l->grid[2] == 1 &&
                        kp.work_pairs == l->attn.work_pairs && kp.work_heads == l->attn.work_heads &&
                        l->attn.work_heads >= 1 && l->attn.work_heads <= (int64_t)p.batch * p.heads_q &&
                        gx <= kiln_attn_work_units(&kp, s->bm, l->attn.work_pairs),
                    "%s: persistent grid %u %u %u, pairs %d", s->name, l->grid[0], l->grid[1], l->grid[2],
                    l->attn.work_pairs);
        } else {
            REQUIRE(l->grid[0] == (uint32_t)((p.seqlen_q + s->bm - 1) / s->bm) && l->grid[1] == (uint32_t)p.heads_q &&
                        l->grid[2] == (uint32_t)p.batch && (!s->persistent || l->attn.work_heads == 0),
                    "%s: grid %u %u %u", s->name, l->grid[0], l->grid[1], l->grid[2]);
        }
        REQUIRE(l->block == (uint32_t)s->threads && l->lds == (uint32_t)s->lds_bytes && fake.bad_arg_bytes == 0,
                "%s: block %u lds %u", s->name, l->block, l->lds);
        /* the split tail: where the size asked for bytes and the run was given them, on a persist 2 kernel's grid
         * of non-causal fixed-length units that do not fill whole rounds; never elsewhere */
        const int split = l->attn.split_units > 0;
        REQUIRE(split == (a.split_work != NULL && split_size == KILN_STATUS_SUCCESS && split_need > 0),
                "%s: split_units %d with workspace %p, size %zu", s->name, l->attn.split_units, a.split_work, split_need);
        if (split)
            REQUIRE(s->persistent == 2 && gx > 0 && !p.causal && !p.varlen && (uintptr_t)a.split_work % 16 == 0 &&
                        a.split_work_bytes >= split_need && (void *)l->attn.split_flags == a.split_work &&
                        (char *)l->attn.split_work > (char *)a.split_work &&
                        l->attn.split_units == kiln_attn_split_units(kiln_attn_work_units(&kp, s->bm, 0), gx) &&
                        fake.zeros >= 1 && fake.zero[fake.zeros > 1 ? 1 : 0].dst == a.split_work,
                    "%s: split_units %d on grid %lld", s->name, l->attn.split_units, (long long)gx);
        stats.attn_split_runs += split;
        if (s->family == KILN_FAMILY_WGMMA)
            REQUIRE(fake.encodes == 3 + (l->attn.o_map != 0) && fake.encode[2].elem_bytes == (p.v_packed ? 2 : 1) &&
                        fake.encode[0].base == a.q && fake.encode[2].base == a.v &&
                        (!l->attn.o_map || (s->persistent && fake.encode[3].base == a.o &&
                                            fake.encode[3].elem_bytes == 2 && (uintptr_t)a.o % 16 == 0)),
                    "%s: three maps, V's f16 when packed; O's where o_map (persistent, O 16-byte aligned)", s->name);
        else
            REQUIRE(fake.encodes == 0 && !p.v_packed, "%s: no maps", s->name);
        stats.attn_runs++;
        stats.attn_packed_runs += p.v_packed;
    }
    fake_reset();

    size_t need = 1, need_p = 1;
    kiln_status size_p = kiln_attn_pack_v_size(&p, &need_p); /* (v_packed 2: the work buffer, V^T and its flags) */
    expect_error_state(NULL, size_p, 0, 0, 0, "kiln_attn_pack_v_size");
    REQUIRE(size_p == KILN_STATUS_SUCCESS || need_p == 0, "a failed size is 0");
    kiln_attn_problem pv = p; /* kiln_attn_pack_v packs V as given, whatever p's v_packed: the pass's V^T bytes */
    pv.v_packed = 0;
    kiln_status size = kiln_attn_pack_v_size(&pv, &need);
    expect_error_state(NULL, size, 0, 0, 0, "kiln_attn_pack_v_size");
    REQUIRE(size == KILN_STATUS_SUCCESS || need == 0, "a failed size is 0");
    REQUIRE(size_p != KILN_STATUS_SUCCESS || size != KILN_STATUS_SUCCESS || p.v_packed != 2 || need_p > need ||
                need == 0,
            "the work buffer of v_packed 2 (%zu) holds more than the V^T (%zu)", need_p, need);
    uint8_t vt_pick = u8(r);
    const void *vt = pointer(r, 0x80000000);
    size_t vt_bytes = vt_pick & 0x80 ? need - (vt_pick & 1) : (size_t)vt_pick << 16;
    fake_reset();
    kiln_status pack = kiln_attn_pack_v(h, &p, a.v, a.cu_seqlens_k, (void *)(uintptr_t)vt, vt_bytes, NULL);
    expect_error_state(h, pack, 0, 0, 0, "kiln_attn_pack_v");
    if (pack == KILN_STATUS_SUCCESS && need == 0) {
        REQUIRE(fake.launches == 0, "an empty V packs nothing");
    } else if (pack == KILN_STATUS_SUCCESS) {
        const fake_launch *l = &fake.last[0];
        size_t len = strlen(l->symbol);
        REQUIRE(fake.launches == 1 && fake.encodes == 0 && len > 5 && strcmp(l->symbol + len - 5, "_pack") == 0 &&
                    l->arg_bytes == sizeof(kiln_attn_pack_params) && need <= vt_bytes,
                "one packer launched: %s", l->symbol);
        REQUIRE(l->grid[0] == (uint32_t)((p.seqlen_k + 63) / 64) && l->grid[1] == (uint32_t)p.heads_kv &&
                    l->grid[2] == (uint32_t)p.batch && l->block == 256 && l->pack.vt == vt &&
                    l->pack.vt_keys == (p.seqlen_k + 7) / 8 * 8 &&
                    need == (size_t)p.batch * (size_t)p.heads_kv * (size_t)p.head_dim * (size_t)l->pack.vt_keys * 2,
                "packer grid %u %u %u", l->grid[0], l->grid[1], l->grid[2]);
        stats.attn_packs++;
    }
    kiln_destroy(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    if (stats.inputs++ == 0 && getenv("KILN_FUZZ_STATS"))
        atexit(print_stats);
    uint8_t flags = u8(&r);
    static const int SMS[4] = {132, 0, 1, 7};
    fake_sm_count = SMS[(flags >> 4) & 3];
    const kiln_backend *backend = (flags & 3) == 1 ? &fake_backend_no_tma : (flags & 3) == 2 ? NULL : &fake_backend;
    kiln_handle h = NULL;
    REQUIRE(kiln_create_with_backend(&h, backend) == KILN_STATUS_SUCCESS && h, "handle");
    if (flags & 4)
        kiln_set_arch(h, (flags & 64) ? "sm89" : "sm90");

    kiln_dtype types[3];
    for (int i = 0; i < 3; i++)
        types[i] = (kiln_dtype)(u8(&r) % 9); /* 7 and 8 are not dtypes */
    kiln_layout layout = (kiln_layout)(u8(&r) % 3);
    int64_t m = value(&r), n = value(&r), k = value(&r);
    kiln_problem p;
    if (kiln_problem_init(&p, types[0], types[1], types[2], layout, m, n, k) != KILN_STATUS_SUCCESS) {
        kiln_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_BF16, KILN_LAYOUT_TN, 1, 1, 1);
        p.a_type = types[0], p.b_type = types[1], p.d_type = types[2], p.layout = layout;
        p.m = m, p.n = n, p.k = k;
    }
    for (int i = 0, edits = u8(&r) % 8; i < edits; i++) {
        uint8_t field = u8(&r);
        overwrite(&p, field, value(&r));
    }
    kiln_args args;
    memset(&args, 0, sizeof args);
    args.a = pointer(&r, 0x10000000);
    args.b = pointer(&r, 0x20000000);
    args.c = pointer(&r, 0x30000000);
    args.d = (void *)(uintptr_t)pointer(&r, 0x40000000);
    args.scale_a = pointer(&r, 0x50000000);
    args.scale_b = pointer(&r, 0x50000100);
    args.bias = pointer(&r, 0x60000000);
    /* grouped problems' index (no byte of its own, so that the seeds keep their meaning): flag 16 makes it missing or
     * misaligned */
    args.group_index = (flags & 16) ? ((flags & 32) ? NULL : (const int32_t *)(uintptr_t)0x68000002)
                                    : (const int32_t *)(uintptr_t)0x68000000;
    args.alpha = 1.0f;
    uint8_t algo_pick = u8(&r), ws_pick = u8(&r);
    int requested = (int)(u8(&r) % 20) - 2;
    size_t explain_len = (size_t)u8(&r) * 64 + 1;

    fake_reset();
    fake.fail_encode = (flags & 8) ? 1 + (ws_pick & 1) : 0;
    kiln_status check = kiln_check_problem(h, &p);
    expect_error_state(h, check, 0, 0, 0, "kiln_check_problem");

    kiln_algo algos[20];
    int returned = -1;
    kiln_status query = kiln_query(h, &p, &args, algos, requested, &returned);
    expect_error_state(h, query, 0, 0, 0, "kiln_query");
    if (requested >= 1 && check != KILN_STATUS_SUCCESS)
        REQUIRE(query == check, "query %d, check %d", query, check);
    REQUIRE(query == KILN_STATUS_SUCCESS ? returned >= 1 && returned <= requested : returned <= 0, "returned %d",
            returned);
    for (int i = 0; i < returned; i++) {
        const char *name = NULL;
        REQUIRE(kiln_algo_name(h, &algos[i], &name) == KILN_STATUS_SUCCESS && name, "algo names");
        REQUIRE(algos[i].solution_index == UINT32_MAX ||
                    (algos[i].solution_index < (uint32_t)kiln_num_solutions &&
                     kiln_solutions[algos[i].solution_index].name_hash == algos[i].name_hash),
                "algo %d", i);
    }

    char *text = malloc(explain_len);
    REQUIRE(text, "memory");
    memset(text, 'x', explain_len);
    kiln_status explain = kiln_explain(h, &p, &args, text, explain_len);
    expect_error_state(h, explain, 0, 0, 0, "kiln_explain");
    REQUIRE(memchr(text, '\0', explain_len) != NULL, "explain text is terminated");
    if (requested >= 1)
        REQUIRE(explain == query, "explain %d, query %d", explain, query);
    size_t need = 0;
    REQUIRE(kiln_explain_size(h, &p, &args, &need) == KILN_STATUS_SUCCESS && need >= 1, "explain size");
    REQUIRE(need > explain_len || strlen(text) + 1 == need, "a text that fits is whole");
    free(text);
    REQUIRE(fake.launches == 0 && fake.zeros == 0 && fake.encodes == 0, "queries ran nothing");

    const kiln_algo *algo = NULL;
    kiln_algo chosen;
    if (algo_pick % 4 == 1 && returned > 0) {
        algo = &algos[(algo_pick / 4) % returned];
    } else if (algo_pick % 4 == 2) {
        memset(&chosen, 0, sizeof chosen);
        chosen.solution_index = (uint32_t)((algo_pick / 4) % kiln_num_solutions);
        chosen.name_hash = kiln_solutions[chosen.solution_index].name_hash;
        chosen.gsu = (uint32_t)kiln_solutions[chosen.solution_index].gsu;
        algo = &chosen;
    } else if (algo_pick % 4 == 3) {
        memset(&chosen, 0, sizeof chosen);
        chosen.name_hash = algo_pick * UINT64_C(0x9E3779B97F4A7C15);
        algo = &chosen;
    }
    uint64_t need_ws = algo && returned > 0 ? algo->workspace_bytes : 0;
    void *ws = ws_pick % 3 == 0 ? NULL : (void *)(uintptr_t)(0x70000000 + (ws_pick % 3 == 2 ? 4 : 0));
    size_t ws_bytes = ws_pick & 0x80 ? (size_t)need_ws : (size_t)ws_pick << 20;
    fake_reset();
    fake.fail_encode = (flags & 8) ? 1 + (ws_pick & 1) : 0;
    kiln_status run = kiln_run(h, &p, algo, &args, ws, ws_bytes, NULL);
    expect_error_state(h, run, 0, 0, fake.encodes, "kiln_run");
    if (check != KILN_STATUS_SUCCESS)
        REQUIRE(run == check, "run %d, check %d", run, check);
    if (run != KILN_STATUS_SUCCESS) {
        REQUIRE(fake.launches == 0 && fake.zeros == 0, "nothing launches after an error");
        stats.failed_runs++;
    } else if (p.m == 0 || p.n == 0 || p.batch == 0) {
        REQUIRE(fake.launches == 0 && fake.zeros == 0 && fake.encodes == 0, "an empty problem runs nothing");
        stats.empty_runs++;
    } else if (p.k == 0 && !p.has_c && !p.has_bias) {
        check_zero_run(&p, &args);
        stats.zero_fills++;
    } else {
        check_gemm_run(&p, &args, ws, fake_sm_count);
        *(fake.encodes ? &stats.tma_runs : &stats.plain_runs) += 1;
        stats.splitk_runs += fake.launches == 2;
        stats.block_runs += p.scale_a == KILN_SCALE_BLOCK;
        stats.grouped_runs += p.group_mode != KILN_GROUP_NONE;
        stats.scale_map_runs += fake.launches >= 1 && fake.last[0].tma.scale_tma != 0;
    }
    kiln_destroy(h);

    fuzz_prepack(&r);
    fuzz_attention(&r, backend);
    return 0;
}
