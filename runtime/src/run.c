/* Runs: validation of the arguments and the algo, and the launches of kiln_abi.h (or, for a problem that needs no
 * GEMM kernel, nothing or a zero fill of D). Every check happens before the first launch, on checked arithmetic. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "handle.h"
#include "kiln_abi.h"

/* Alignment asked of a split-K workspace: partials are float tiles, which kernels may move in 16-byte vectors. */
#define KILN_WORKSPACE_ALIGN 16

/* The byte extent of an operand, ((batch - 1) * stride + (rows - 1) * ld + cols) * elem; kiln_problem_validate has
 * checked that it fits int64. 0 for an operand without elements. */
static uint64_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld, int64_t cols, size_t elem)
{
    if (batch == 0 || rows == 0 || cols == 0)
        return 0;
    return ((uint64_t)(batch - 1) * (uint64_t)(batch > 1 ? stride : 0) + (uint64_t)(rows - 1) * (uint64_t)ld +
            (uint64_t)cols) * (uint64_t)elem;
}

/* A device pointer and its operand's extent stay inside the address space. */
static int spans(const void *ptr, uint64_t bytes) { return bytes <= (uint64_t)(UINTPTR_MAX - (uintptr_t)ptr); }

static kiln_status misaligned(const char *field, const void *ptr, size_t elem)
{
    return kiln_fail(KILN_STATUS_MISALIGNED, "%s = %p is not aligned to its %zu-byte elements", field, ptr, elem);
}

/* Pointers a run needs are present, aligned to their element type, and their extents fit the address space. */
static kiln_status check_args(const kiln_problem *p, const kiln_args *a, kiln_work work)
{
    size_t ea = kiln_dtype_bytes(p->a_type), eb = kiln_dtype_bytes(p->b_type), ed = kiln_dtype_bytes(p->d_type);
    if (work == KILN_WORK_NONE)
        return KILN_STATUS_SUCCESS; /* nothing is read or written */
    if (!a->d)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->d is NULL");
    if ((uintptr_t)a->d % ed)
        return misaligned("args->d", a->d, ed);
    int64_t b_rows = p->layout == KILN_LAYOUT_TN ? p->n : p->k;
    int64_t b_cols = p->b_prepacked ? p->ldb : p->layout == KILN_LAYOUT_TN ? p->k : p->n;
    int64_t ab = kiln_problem_a_batches(p), bb = kiln_problem_b_batches(p); /* grouped: per group */
    if (!spans(a->d, extent(kiln_problem_d_batches(p), p->stride_d, p->m, p->ldd, p->n, ed)))
        return kiln_fail(KILN_STATUS_OVERFLOW, "args->d = %p plus the extent of D wraps the address space", a->d);
    if (work == KILN_WORK_ZERO_D)
        return KILN_STATUS_SUCCESS; /* only D is written */
    if (p->k > 0 && (!a->a || !a->b))
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->%s is NULL", !a->a ? "a" : "b");
    if (p->has_c && !a->c)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->c is NULL (has_c = 1)");
    if (p->scale_a != KILN_SCALE_NONE && !a->scale_a)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->scale_a is NULL (scale_a = %d)", (int)p->scale_a);
    if (p->scale_b != KILN_SCALE_NONE && !a->scale_b)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->scale_b is NULL (scale_b = %d)", (int)p->scale_b);
    if (p->has_bias && !a->bias)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->bias is NULL (has_bias = 1)");
    if (p->group_mode != KILN_GROUP_NONE && !a->group_index)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->group_index is NULL (group_mode = %d)", (int)p->group_mode);
    if (p->group_mode != KILN_GROUP_NONE && (uintptr_t)a->group_index % sizeof(int32_t))
        return misaligned("args->group_index", a->group_index, sizeof(int32_t));
    if ((uintptr_t)a->a % ea)
        return misaligned("args->a", a->a, ea);
    if ((uintptr_t)a->b % eb)
        return misaligned("args->b", a->b, eb);
    if (p->has_c && (uintptr_t)a->c % ed)
        return misaligned("args->c", a->c, ed);
    if (p->scale_a != KILN_SCALE_NONE && (uintptr_t)a->scale_a % sizeof(float))
        return misaligned("args->scale_a", a->scale_a, sizeof(float));
    if (p->scale_b != KILN_SCALE_NONE && (uintptr_t)a->scale_b % sizeof(float))
        return misaligned("args->scale_b", a->scale_b, sizeof(float));
    if (p->has_bias && (uintptr_t)a->bias % kiln_dtype_bytes(p->bias_type))
        return misaligned("args->bias", a->bias, kiln_dtype_bytes(p->bias_type));
    if (!spans(a->a, extent(ab, p->stride_a, p->m, p->lda, p->k, ea)) ||
        !spans(a->b, extent(bb, p->stride_b, b_rows, p->ldb, b_cols, eb)) ||
        (p->has_c && !spans(a->c, extent(p->batch, p->stride_c, p->m, p->ldc, p->n, ed))))
        return kiln_fail(KILN_STATUS_OVERFLOW, "an operand's pointer plus its extent wraps the address space");
    return KILN_STATUS_SUCCESS;
}

/* Whether TMA-fed kernels may launch overlapped with the stream's previous kernel (backend launch_overlapped):
 * yes unless the environment sets KILN_PDL=0. */
static int overlap_launches(void)
{
    const char *e = getenv("KILN_PDL");
    return !(e && strcmp(e, "0") == 0);
}

/* Whether the caller's workspace serves a solution that needs `need` bytes. */
static kiln_status check_workspace(uint64_t need, const void *ws, size_t ws_bytes)
{
    if (need == 0)
        return KILN_STATUS_SUCCESS;
    if (ws_bytes < need)
        return kiln_fail(KILN_STATUS_WORKSPACE_TOO_SMALL, "workspace_bytes = %zu, the algo needs %" PRIu64, ws_bytes,
                         need);
    if (!ws)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "workspace is NULL (workspace_bytes = %zu)", ws_bytes);
    if ((uintptr_t)ws % KILN_WORKSPACE_ALIGN)
        return kiln_fail(KILN_STATUS_MISALIGNED, "workspace = %p is not %d-byte aligned", ws, KILN_WORKSPACE_ALIGN);
    return KILN_STATUS_SUCCESS;
}

/* The best-ranked candidate whose workspace the caller gave (so a split-K winner yields to the next one when no
 * workspace is passed); when none has, the reason the best-ranked one could not run. */
static kiln_status choose_best(kiln_handle h, const kiln_problem *p, const kiln_args *args, const void *ws,
                               size_t ws_bytes, int *chosen)
{
    int *idx = malloc(sizeof(int) * (size_t)(h->tables.num_solutions > 0 ? h->tables.num_solutions : 1)), count = 0;
    if (!idx)
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "out of memory");
    kiln_status st = kiln_handle_select(h, p, args, idx, h->tables.num_solutions, &count, NULL, 0);
    kiln_status first = KILN_STATUS_SUCCESS;
    char first_text[KILN_ERROR_LEN] = "";
    for (int i = 0; i < count; i++) {
        kiln_geometry g;
        kiln_solution_geometry(&h->tables.solutions[idx[i]], p, &g);
        kiln_status why = check_workspace(g.workspace_bytes, ws, ws_bytes);
        if (why == KILN_STATUS_SUCCESS) {
            *chosen = idx[i];
            free(idx);
            return KILN_STATUS_SUCCESS;
        }
        if (first == KILN_STATUS_SUCCESS) {
            first = why;
            snprintf(first_text, sizeof first_text, "%s", kiln_fail_text());
        }
    }
    free(idx);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    return first != KILN_STATUS_SUCCESS ? kiln_fail(first, "%s", first_text) : KILN_STATUS_SUCCESS;
}

/* An algo passed in: it must name a solution of this library, for this arch and problem type, that passes every
 * predicate (alignment -> MISALIGNED, launch or tensor-map limits -> OVERFLOW, no code object -> NO_CODE_FOR_DEVICE,
 * anything else -> INVALID_ALGO). */
static kiln_status check_algo(kiln_handle h, const kiln_problem *p, const kiln_args *args, const kiln_algo *algo,
                              int *chosen)
{
    int s = kiln_handle_find_algo(h, algo);
    if (s == KILN_FIND_NO_GEMM)
        return kiln_fail(KILN_STATUS_INVALID_ALGO, "algo %s serves problems that need no GEMM kernel (m, n or batch 0, "
                         "or k = 0 without C and bias); query again for this one", KILN_NO_GEMM_NAME);
    if (s < 0)
        return kiln_fail(KILN_STATUS_INVALID_ALGO,
                         "algo name_hash = 0x%016" PRIx64 " names no solution of this library", algo->name_hash);
    const kiln_solution *sol = &h->tables.solutions[s];
    if (algo->gsu != (uint32_t)sol->gsu)
        return kiln_fail(KILN_STATUS_INVALID_ALGO, "algo gsu = %u, its solution %s has gsu = %d", algo->gsu, sol->name,
                         sol->gsu);
    kiln_select_input in;
    char why[200];
    kiln_handle_select_input(h, p, args, &in);
    kiln_reject r = kiln_solution_fits(sol, &in, why, sizeof why);
    kiln_status st = r == KILN_FITS                                           ? KILN_STATUS_SUCCESS
                     : r == KILN_REJECT_ALIGN_A || r == KILN_REJECT_ALIGN_B ? KILN_STATUS_MISALIGNED
                     : r == KILN_REJECT_SIZE                                ? KILN_STATUS_OVERFLOW
                     : r == KILN_REJECT_NO_CODE                             ? KILN_STATUS_NO_CODE_FOR_DEVICE
                                                                            : KILN_STATUS_INVALID_ALGO;
    if (st != KILN_STATUS_SUCCESS)
        return kiln_fail(st, "algo %s does not fit the problem: %s: %s", sol->name, kiln_reject_name(r), why);
    *chosen = s;
    return KILN_STATUS_SUCCESS;
}

static void fill_params(const kiln_problem *p, const kiln_args *a, const kiln_geometry *g, int gsu, void *workspace,
                        kiln_gemm_params *prm)
{
    memset(prm, 0, sizeof *prm);
    prm->a = a->a;
    prm->b = a->b;
    prm->c = p->has_c ? a->c : NULL;
    prm->d = a->d;
    prm->scale_a = p->scale_a != KILN_SCALE_NONE ? a->scale_a : NULL;
    prm->scale_b = p->scale_b != KILN_SCALE_NONE ? a->scale_b : NULL;
    prm->bias = p->has_bias ? a->bias : NULL;
    prm->workspace = gsu > 1 ? (float *)workspace : NULL;
    prm->lda = p->lda;
    prm->ldb = p->ldb;
    prm->ldc = p->ldc;
    prm->ldd = p->ldd;
    prm->stride_a = p->stride_a;
    prm->stride_b = p->stride_b;
    prm->stride_c = p->stride_c;
    prm->stride_d = p->stride_d;
    /* kiln_check_problem and the "size" predicate bound all of these by INT32_MAX */
    prm->m = (int32_t)p->m;
    prm->n = (int32_t)p->n;
    prm->k = (int32_t)p->k;
    prm->batch = (int32_t)p->batch;
    prm->tiles_m = (int32_t)g->tiles_m;
    prm->tiles_n = (int32_t)g->tiles_n;
    prm->k_tiles_per_split = (int32_t)g->k_tiles_per_split;
    prm->scale_a_mode = (int32_t)p->scale_a;
    prm->scale_b_mode = (int32_t)p->scale_b;
    prm->bias_type = (int32_t)p->bias_type;
    prm->activation = (int32_t)p->activation;
    prm->has_c = p->has_c;
    prm->alpha = a->alpha;
    prm->beta = a->beta;
    if (p->scale_a == KILN_SCALE_BLOCK) { /* kiln_check_problem bounds these by INT32_MAX */
        prm->sa_stride_m = p->scale_a_stride_m;
        prm->sa_stride_k = p->scale_a_stride_k;
        prm->sa_vec = p->scale_a_stride_m == 1 && p->scale_a_stride_k % 4 == 0 && (uintptr_t)a->scale_a % 16 == 0;
    }
    if (p->scale_b == KILN_SCALE_BLOCK) { /* (f16/bf16 x fp8: per-group weight scales, scale_b alone) */
        prm->sb_stride_n = p->scale_b_stride_n;
        prm->sb_stride_k = p->scale_b_stride_k;
        prm->sb_block_n = (int32_t)p->scale_b_block_n;
    }
    if (p->group_mode != KILN_GROUP_NONE) { /* kiln_check_problem bounds groups and the strides by INT32_MAX */
        prm->group_mode = (int32_t)p->group_mode;
        prm->groups = (int32_t)p->groups;
        prm->group_index = a->group_index;
        kiln_problem_group_strides(p, &prm->g_stride_sa, &prm->g_stride_sb, &prm->g_stride_bias);
        prm->sa_vec = prm->sa_vec && prm->g_stride_sa % 4 == 0; /* each group's scale_a 16-byte aligned too */
    }
}

/* The tensor maps of a wgmma launch: A and B from kiln_tma_maps (the values the selection checked), and D's where the
 * kernel can store through one (kiln_tma_map_d: d_tma is its boxes' row bytes; otherwise 0 and the kernel writes D
 * with plain stores). */
static kiln_status encode_maps(kiln_handle h, const kiln_solution *sol, const kiln_problem *p, const kiln_args *a,
                               kiln_tma_params *P)
{
    kiln_tma_map maps[5];
    char why[200];
    kiln_reject r = kiln_tma_maps(sol, p, a, maps, why, sizeof why);
    if (r != KILN_FITS) /* kiln_solution_fits ran the same checks: only a changed table gets here */
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "tensor maps of %s: %s", sol->name, why);
    P->d_tma = kiln_tma_map_d(sol, p, a, &maps[2]);
    kiln_tma_desc *out[5] = {&P->a, &P->b, &P->d, &P->sa, &P->sb};
    const void *base[5] = {a->a, a->b, a->d, a->scale_a, a->scale_b};
    kiln_status st = KILN_STATUS_SUCCESS;
    for (int i = 0; i < 2 + (P->d_tma > 0) && st == KILN_STATUS_SUCCESS; i++)
        st = h->backend->tma_encode(h->dev, out[i], 3, maps[i].elem_bytes, maps[i].swizzle_bytes, base[i],
                                    maps[i].dims, maps[i].strides, maps[i].box);
    /* block scales: through two more maps where they allow them; a map the driver refuses leaves the scale warp */
    int bits = st == KILN_STATUS_SUCCESS ? kiln_tma_map_scales(sol, p, a, &maps[3], &P->scale_tma_bytes) : 0;
    for (int i = 3; i < 5 && bits; i++)
        if (h->backend->tma_encode(h->dev, out[i], 3, 4, 0, base[i], maps[i].dims, maps[i].strides, maps[i].box) !=
            KILN_STATUS_SUCCESS)
            bits = 0;
    P->scale_tma = bits;
    if (!bits)
        P->scale_tma_bytes = 0;
    if (st != KILN_STATUS_SUCCESS)
        kiln_fail(st, "encoding a tensor map: %s", h->backend->last_error(h->dev));
    return st;
}

/* D = 0 for k = 0 without C and bias: one 2-D fill when the batches of D are back to back, else one per batch. The
 * byte offsets and pitches are within D's extent, which kiln_problem_validate bounded by INT64_MAX. */
static kiln_status zero_d(kiln_handle h, const kiln_problem *p, const kiln_args *a, void *stream)
{
    uint64_t ed = kiln_dtype_bytes(p->d_type), width = (uint64_t)p->n * ed;
    int packed = p->batch == 1 || p->stride_d == p->m * p->ldd; /* m * ldd <= stride_d: checked */
    uint64_t rows = packed ? (uint64_t)p->m * (uint64_t)p->batch : (uint64_t)p->m;
    uint64_t pitch = rows > 1 ? (uint64_t)p->ldd * ed : width; /* ldd spans a row of D only when there are two */
    int64_t calls = packed ? 1 : p->batch;
    for (int64_t b = 0; b < calls; b++) {
        uintptr_t base = (uintptr_t)a->d + (uintptr_t)((uint64_t)b * (uint64_t)p->stride_d * ed);
        kiln_status st = h->backend->zero_2d(h->dev, (void *)base, (size_t)pitch, (size_t)width, (size_t)rows, stream);
        if (st != KILN_STATUS_SUCCESS)
            return kiln_fail(st, "filling D with zeros: %s", h->backend->last_error(h->dev));
    }
    return KILN_STATUS_SUCCESS;
}

static kiln_status run(kiln_handle h, const kiln_problem *p, const kiln_algo *algo, const kiln_args *args,
                       void *workspace, size_t workspace_bytes, void *stream)
{
    if (!h || !p || !args)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !h ? "h" : !p ? "p" : "args");
    kiln_status st = kiln_problem_validate(h, p);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    kiln_work work = kiln_problem_work(p);
    st = check_args(p, args, work);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (work != KILN_WORK_GEMM && algo && kiln_handle_find_algo(h, algo) == -1)
        return kiln_fail(KILN_STATUS_INVALID_ALGO,
                         "algo name_hash = 0x%016" PRIx64 " names no solution of this library", algo->name_hash);
    if (work == KILN_WORK_NONE)
        return KILN_STATUS_SUCCESS;
    if (!h->backend)
        return kiln_fail(KILN_STATUS_NO_DEVICE, "the handle has no device (kiln_create found none)");
    if (strcmp(h->arch, h->device_arch) != 0)
        return kiln_fail(KILN_STATUS_NO_CODE_FOR_DEVICE, "selecting for arch %s (kiln_set_arch), the device is %s",
                         h->arch, h->device_arch);
    if (work == KILN_WORK_ZERO_D)
        return zero_d(h, p, args, stream);

    int s = -1;
    st = algo ? check_algo(h, p, args, algo, &s) : choose_best(h, p, args, workspace, workspace_bytes, &s);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    const kiln_solution *sol = &h->tables.solutions[s];
    int wgmma = kiln_solution_wgmma(sol);
    kiln_geometry g;
    kiln_solution_geometry(sol, p, &g);
    st = check_workspace(g.workspace_bytes, workspace, workspace_bytes);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (wgmma && !h->backend->tma_encode)
        return kiln_fail(KILN_STATUS_NO_CODE_FOR_DEVICE, "%s is TMA-fed and the %s backend encodes no tensor maps",
                         sol->name, h->backend->name);
    void *gemm = NULL, *reduce = NULL;
    st = kiln_handle_kernels(h, s, &gemm, &reduce);
    if (st != KILN_STATUS_SUCCESS)
        return kiln_fail(st, "loading %s: %s", sol->name,
                         st == KILN_STATUS_NO_CODE_FOR_DEVICE ? "the library embeds no code object for it"
                                                              : h->backend->last_error(h->dev));

    kiln_tma_params P; /* the wgmma family's argument (its GEMM params are P.p) */
    kiln_gemm_params plain, *prm = &plain;
    if (wgmma) {
        memset(&P, 0, sizeof P); /* padding included: the launch copies every byte */
        prm = &P.p;
    }
    fill_params(p, args, &g, sol->gsu, workspace, prm);
    /* the size predicate bounds the grid by the device's limits and UINT32_MAX */
    uint32_t grid[3] = {(uint32_t)g.grid_x, 1, (uint32_t)g.grid_z};
    const void *arg = prm;
    size_t arg_bytes = sizeof *prm;
    if (wgmma) {
        P.num_tiles = (int32_t)g.grid_x; /* the size predicate bounds it by INT32_MAX */
        st = encode_maps(h, sol, p, args, &P);
        if (st != KILN_STATUS_SUCCESS)
            return st;
        /* persistent: a cluster per pair of SMs (Hopper's SMs come in pairs, each pair in one GPC, so that all of
         * them hold a two-CTA cluster at once) */
        int64_t slots = h->limits.sm_count / g.cluster;
        grid[0] = (uint32_t)(g.cluster * (sol->persistent && slots > 0 && slots < g.grid_x ? slots : g.grid_x));
        arg = &P;
        arg_bytes = sizeof P;
    }
    /* Most wgmma kernels (sol->overlap) wait for the stream's previous kernel (griddepcontrol.wait) before they touch
     * memory, so they may launch while it still runs and do their set-up meanwhile (kiln_gemm_wgmma.h, run);
     * KILN_PDL=0 in the environment launches them plainly. A kernel without the wait is never launched overlapped.
     * The reduce kernel is launched plainly: it reads what this one wrote. */
    const int overlapped = sol->overlap && h->backend->launch_overlapped && overlap_launches();
    st = (overlapped ? h->backend->launch_overlapped : h->backend->launch)(
        h->dev, gemm, grid, (uint32_t)sol->threads, (uint32_t)sol->lds_bytes, arg, arg_bytes, stream);
    if (st == KILN_STATUS_SUCCESS && kiln_solution_reduces(sol)) {
        const uint32_t reduce_grid[3] = {(uint32_t)g.reduce_grid_x, 1, (uint32_t)p->batch};
        st = h->backend->launch(h->dev, reduce, reduce_grid, KILN_REDUCE_THREADS, 0, prm, sizeof *prm, stream);
    }
    if (st != KILN_STATUS_SUCCESS)
        return kiln_fail(st, "launching %s: %s", sol->name, h->backend->last_error(h->dev));
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_run(kiln_handle h, const kiln_problem *p, const kiln_algo *algo, const kiln_args *args,
                     void *workspace, size_t workspace_bytes, void *stream)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_run", run(h, p, algo, args, workspace, workspace_bytes, stream));
}
