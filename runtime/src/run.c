/* Query, explain, algo names and runs: selection on the handle, validation of the arguments and the algo, and the
 * launches of kiln_abi.h. Every check happens before the first launch. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "handle.h"
#include "kiln_abi.h"

/* Alignment asked of a split-K workspace: partials are float tiles, which kernels may move in 16-byte vectors. */
#define KILN_WORKSPACE_ALIGN 16

static int *alloc_indices(kiln_handle h)
{
    return malloc(sizeof(int) * (size_t)(h->tables.num_solutions > 0 ? h->tables.num_solutions : 1));
}

/* Selects on the handle. When nothing passes, says why: some candidate passes once the launch limits are ignored
 * -> OVERFLOW; once alignment is ignored -> MISALIGNED; once code objects are not required -> NO_CODE_FOR_DEVICE;
 * otherwise NO_SOLUTION. */
static kiln_status select_for(kiln_handle h, const kiln_problem *p, const kiln_args *args, int *out, int max_out,
                              int *count, char *explain, size_t len)
{
    kiln_select_input in;
    unsigned rejects;
    int any, found;
    kiln_handle_select_input(h, p, args, &in);
    kiln_status st = kiln_select(&h->tables, &in, out, max_out, count, &rejects, explain, len);
    static const struct {
        unsigned skip;
        kiln_status status;
    } reasons[] = {
        {1u << KILN_REJECT_SIZE, KILN_STATUS_OVERFLOW},
        {(1u << KILN_REJECT_ALIGN_A) | (1u << KILN_REJECT_ALIGN_B), KILN_STATUS_MISALIGNED},
        {1u << KILN_REJECT_NO_CODE, KILN_STATUS_NO_CODE_FOR_DEVICE},
    };
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0] && st == KILN_STATUS_NO_SOLUTION; i++) {
        if (!(rejects & reasons[i].skip))
            continue;
        in.skip = reasons[i].skip;
        st = kiln_select(&h->tables, &in, &any, 1, &found, &rejects, NULL, 0);
        if (st == KILN_STATUS_SUCCESS)
            return reasons[i].status;
    }
    return st;
}

static kiln_algo make_algo(kiln_handle h, int s, const kiln_problem *p)
{
    const kiln_solution *sol = &h->tables.solutions[s];
    kiln_geometry g;
    kiln_algo a;
    kiln_solution_geometry(sol, p, &g);
    memset(&a, 0, sizeof a);
    a.name_hash = sol->name_hash;
    a.solution_index = (uint32_t)s;
    a.gsu = (uint32_t)sol->gsu;
    a.workspace_bytes = g.workspace_bytes;
    return a;
}

/* The solution an algo names: its index when the hash matches there, else the first solution with that hash. */
static int find_algo(kiln_handle h, const kiln_algo *a)
{
    const kiln_tables *t = &h->tables;
    if (a->solution_index < (uint32_t)t->num_solutions && t->solutions[a->solution_index].name_hash == a->name_hash)
        return (int)a->solution_index;
    for (int i = 0; i < t->num_solutions; i++)
        if (t->solutions[i].name_hash == a->name_hash)
            return i;
    return -1;
}

kiln_status kiln_query(kiln_handle h, const kiln_problem *p, const kiln_args *args, kiln_algo *algos, int requested,
                       int *returned)
{
    if (!h || !p || !algos || !returned)
        return KILN_STATUS_NULL_POINTER;
    *returned = 0;
    if (requested < 1)
        return KILN_STATUS_INVALID_VALUE;
    kiln_status st = kiln_check_problem(h, p);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    int *idx = alloc_indices(h), count = 0;
    if (!idx)
        return KILN_STATUS_INTERNAL_ERROR;
    st = select_for(h, p, args, idx, requested, &count, NULL, 0);
    for (int i = 0; i < count; i++)
        algos[i] = make_algo(h, idx[i], p);
    *returned = count;
    free(idx);
    return st;
}

kiln_status kiln_algo_name(kiln_handle h, const kiln_algo *algo, const char **name)
{
    if (!h || !algo || !name)
        return KILN_STATUS_NULL_POINTER;
    int s = find_algo(h, algo);
    if (s < 0)
        return KILN_STATUS_INVALID_ALGO;
    *name = h->tables.solutions[s].name;
    return KILN_STATUS_SUCCESS;
}

/* Appends to a NUL-terminated text in buf[len]. */
KILN_FORMAT(3, 4) static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

kiln_status kiln_explain(kiln_handle h, const kiln_problem *p, const kiln_args *args, char *buf, size_t len)
{
    if (!h || !p || !buf)
        return KILN_STATUS_NULL_POINTER;
    if (len == 0)
        return KILN_STATUS_INVALID_VALUE;
    buf[0] = '\0';
    kiln_status st = kiln_check_problem(h, p);
    if (st != KILN_STATUS_SUCCESS) {
        append(buf, len, "problem rejected by kiln_check_problem: %s\n", kiln_status_string(st));
        return st;
    }
    int best, count;
    st = select_for(h, p, args, &best, 1, &count, buf, len);
    if (h->backend)
        append(buf, len, "device: %s (%s), max LDS %" PRId64 " bytes, %d SMs\n", h->device_arch, h->backend->name,
               h->limits.max_lds_bytes, h->limits.sm_count);
    else
        append(buf, len, "device: none\n");
    if (strcmp(h->arch, h->device_arch) != 0)
        append(buf, len, "selecting for arch %s (kiln_set_arch)\n", h->arch);
    if (h->backend && h->backend->last_error(h->dev)[0])
        append(buf, len, "last driver error: %s\n", h->backend->last_error(h->dev));
    append(buf, len, "status: %s\n", kiln_status_string(st));
    return st;
}

/* Pointers a run needs are present and aligned to their element type. */
static kiln_status check_args(const kiln_problem *p, const kiln_args *a)
{
    if (!a->a || !a->b || !a->d || (p->has_c && !a->c) || (p->scale_a != KILN_SCALE_NONE && !a->scale_a) ||
        (p->scale_b != KILN_SCALE_NONE && !a->scale_b) || (p->has_bias && !a->bias))
        return KILN_STATUS_NULL_POINTER;
    uintptr_t d_bytes = kiln_dtype_bytes(p->d_type), f32_bytes = sizeof(float);
    if ((uintptr_t)a->a % kiln_dtype_bytes(p->a_type) || (uintptr_t)a->b % kiln_dtype_bytes(p->b_type) ||
        (uintptr_t)a->d % d_bytes || (p->has_c && (uintptr_t)a->c % d_bytes) ||
        (p->scale_a != KILN_SCALE_NONE && (uintptr_t)a->scale_a % f32_bytes) ||
        (p->scale_b != KILN_SCALE_NONE && (uintptr_t)a->scale_b % f32_bytes) ||
        (p->has_bias && (uintptr_t)a->bias % kiln_dtype_bytes(p->bias_type)))
        return KILN_STATUS_MISALIGNED;
    return KILN_STATUS_SUCCESS;
}

/* Whether the caller's workspace serves a solution that needs `need` bytes. */
static kiln_status check_workspace(uint64_t need, const void *ws, size_t ws_bytes)
{
    if (need == 0)
        return KILN_STATUS_SUCCESS;
    if (ws_bytes < need)
        return KILN_STATUS_WORKSPACE_TOO_SMALL;
    if (!ws)
        return KILN_STATUS_NULL_POINTER;
    if ((uintptr_t)ws % KILN_WORKSPACE_ALIGN)
        return KILN_STATUS_MISALIGNED;
    return KILN_STATUS_SUCCESS;
}

/* The best-ranked candidate whose workspace the caller gave (so a split-K winner yields to the next one when no
 * workspace is passed); when none has, the reason the best-ranked one could not run. */
static kiln_status choose_best(kiln_handle h, const kiln_problem *p, const kiln_args *args, const void *ws,
                               size_t ws_bytes, int *chosen)
{
    int *idx = alloc_indices(h), count = 0;
    if (!idx)
        return KILN_STATUS_INTERNAL_ERROR;
    kiln_status st = select_for(h, p, args, idx, h->tables.num_solutions, &count, NULL, 0);
    kiln_status first = KILN_STATUS_SUCCESS;
    for (int i = 0; i < count; i++) {
        const kiln_solution *sol = &h->tables.solutions[idx[i]];
        kiln_geometry g;
        kiln_solution_geometry(sol, p, &g);
        kiln_status why = check_workspace(g.workspace_bytes, ws, ws_bytes);
        if (why == KILN_STATUS_SUCCESS) {
            *chosen = idx[i];
            free(idx);
            return KILN_STATUS_SUCCESS;
        }
        if (first == KILN_STATUS_SUCCESS)
            first = why;
    }
    free(idx);
    return st != KILN_STATUS_SUCCESS ? st : first;
}

/* An algo passed in: it must name a solution of this library, for this arch and problem type, that passes every
 * predicate (alignment -> MISALIGNED, launch limits -> OVERFLOW, no code object -> NO_CODE_FOR_DEVICE, anything
 * else -> INVALID_ALGO). */
static kiln_status check_algo(kiln_handle h, const kiln_problem *p, const kiln_args *args, const kiln_algo *algo,
                              int *chosen)
{
    int s = find_algo(h, algo);
    if (s < 0 || algo->gsu != (uint32_t)h->tables.solutions[s].gsu)
        return KILN_STATUS_INVALID_ALGO;
    kiln_select_input in;
    kiln_handle_select_input(h, p, args, &in);
    switch (kiln_solution_fits(&h->tables.solutions[s], &in, NULL, 0)) {
    case KILN_FITS: break;
    case KILN_REJECT_ALIGN_A:
    case KILN_REJECT_ALIGN_B: return KILN_STATUS_MISALIGNED;
    case KILN_REJECT_SIZE: return KILN_STATUS_OVERFLOW;
    case KILN_REJECT_NO_CODE: return KILN_STATUS_NO_CODE_FOR_DEVICE;
    default: return KILN_STATUS_INVALID_ALGO;
    }
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
}

/* The two tensor maps of a wgmma launch (kiln_abi.h): A as {k, m, batch}, B ([n][k], TN) as {k, n, batch}, where a
 * prepacked B's rows run to ldb (zero-padded); boxes of 128 bytes of K by a tile's rows. */
static kiln_status encode_maps(kiln_handle h, const kiln_solution *sol, const kiln_problem *p, const kiln_args *a,
                               kiln_tma_params *P)
{
    int64_t ea = (int64_t)kiln_dtype_bytes(p->a_type), eb = (int64_t)kiln_dtype_bytes(p->b_type);
    int batched = p->batch > 1;
    const uint64_t a_dims[3] = {(uint64_t)p->k, (uint64_t)p->m, (uint64_t)p->batch};
    const uint64_t a_strides[2] = {(uint64_t)(p->lda * ea), (uint64_t)((batched ? p->stride_a : p->lda * p->m) * ea)};
    const uint32_t a_box[3] = {(uint32_t)(128 / ea), (uint32_t)sol->mt0, 1};
    const uint64_t b_dims[3] = {(uint64_t)(p->b_prepacked ? p->ldb : p->k), (uint64_t)p->n, (uint64_t)p->batch};
    const uint64_t b_strides[2] = {(uint64_t)(p->ldb * eb), (uint64_t)((batched ? p->stride_b : p->ldb * p->n) * eb)};
    const uint32_t b_box[3] = {(uint32_t)(128 / eb), (uint32_t)sol->mt1, 1};
    kiln_status st = h->backend->tma_encode(h->dev, &P->a, (int)ea, a->a, a_dims, a_strides, a_box);
    if (st == KILN_STATUS_SUCCESS)
        st = h->backend->tma_encode(h->dev, &P->b, (int)eb, a->b, b_dims, b_strides, b_box);
    return st;
}

kiln_status kiln_run(kiln_handle h, const kiln_problem *p, const kiln_algo *algo, const kiln_args *args,
                     void *workspace, size_t workspace_bytes, void *stream)
{
    if (!h || !p || !args)
        return KILN_STATUS_NULL_POINTER;
    kiln_status st = kiln_check_problem(h, p);
    if (st == KILN_STATUS_SUCCESS)
        st = check_args(p, args);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (!h->backend)
        return KILN_STATUS_NO_DEVICE;
    if (strcmp(h->arch, h->device_arch) != 0)
        return KILN_STATUS_NO_CODE_FOR_DEVICE; /* kiln_set_arch points selection at another arch's kernels */

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
        return KILN_STATUS_NO_CODE_FOR_DEVICE; /* a TMA-fed kernel on a backend that cannot encode tensor maps */
    void *gemm = NULL, *reduce = NULL;
    st = kiln_handle_kernels(h, s, &gemm, &reduce);
    if (st != KILN_STATUS_SUCCESS)
        return st;

    kiln_tma_params P; /* the wgmma family's argument (its GEMM params are P.p) */
    kiln_gemm_params plain, *prm = &plain;
    if (wgmma) {
        memset(&P, 0, sizeof P); /* padding included: the launch copies every byte */
        prm = &P.p;
    }
    fill_params(p, args, &g, sol->gsu, workspace, prm);
    uint32_t grid[3] = {(uint32_t)g.grid_x, 1, (uint32_t)g.grid_z};
    const void *arg = prm;
    size_t arg_bytes = sizeof *prm;
    if (wgmma) {
        P.num_tiles = (int32_t)g.grid_x; /* the size predicate bounds it by INT32_MAX */
        st = encode_maps(h, sol, p, args, &P);
        if (st != KILN_STATUS_SUCCESS)
            return st;
        int64_t sms = h->limits.sm_count;
        grid[0] = (uint32_t)(sol->persistent && sms > 0 && sms < g.grid_x ? sms : g.grid_x);
        arg = &P;
        arg_bytes = sizeof P;
    }
    st = h->backend->launch(h->dev, gemm, grid, (uint32_t)sol->threads, (uint32_t)sol->lds_bytes, arg, arg_bytes,
                            stream);
    if (st == KILN_STATUS_SUCCESS && sol->gsu > 1) {
        const uint32_t reduce_grid[3] = {(uint32_t)g.reduce_grid_x, 1, (uint32_t)p->batch};
        st = h->backend->launch(h->dev, reduce, reduce_grid, KILN_REDUCE_THREADS, 0, prm, sizeof *prm, stream);
    }
    return st;
}
