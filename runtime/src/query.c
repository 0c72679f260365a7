/* Query, explain and algo names: selection on the handle, and the no-GEMM algo of empty problems. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "handle.h"

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

kiln_algo kiln_no_gemm_algo(void)
{
    kiln_algo a;
    memset(&a, 0, sizeof a);
    a.name_hash = fnv1a64(KILN_NO_GEMM_NAME);
    a.solution_index = KILN_NO_GEMM_INDEX;
    a.gsu = 1;
    return a;
}

int kiln_handle_find_algo(kiln_handle h, const kiln_algo *a)
{
    const kiln_tables *t = &h->tables;
    if (a->solution_index < (uint32_t)t->num_solutions && t->solutions[a->solution_index].name_hash == a->name_hash)
        return (int)a->solution_index;
    for (int i = 0; i < t->num_solutions; i++)
        if (t->solutions[i].name_hash == a->name_hash)
            return i;
    kiln_algo none = kiln_no_gemm_algo();
    if (a->name_hash == none.name_hash && a->solution_index == none.solution_index)
        return KILN_FIND_NO_GEMM;
    return -1;
}

static const char *layout_name(kiln_layout l) { return l == KILN_LAYOUT_TN ? "TN" : "NN"; }

/* Records why nothing passed: the first solution of the table for this problem type rejected by a predicate of
 * `bits` (every predicate but the problem type when bits is 0), with its reason. */
static void describe_failure(kiln_handle h, const kiln_select_input *in, kiln_status st, unsigned rejects)
{
    const kiln_problem *p = in->problem;
    char types[96];
    snprintf(types, sizeof types, "%s %s x %s -> %s %s b_prepacked=%d", in->arch, kiln_dtype_name(p->a_type),
             kiln_dtype_name(p->b_type), kiln_dtype_name(p->d_type), layout_name(p->layout), p->b_prepacked);
    if (rejects == 0) {
        kiln_fail(st, "this library has no selection logic (or no candidate) for %s", types);
        return;
    }
    unsigned bits = st == KILN_STATUS_OVERFLOW     ? 1u << KILN_REJECT_SIZE
                    : st == KILN_STATUS_MISALIGNED ? (1u << KILN_REJECT_ALIGN_A) | (1u << KILN_REJECT_ALIGN_B)
                    : st == KILN_STATUS_NO_CODE_FOR_DEVICE ? 1u << KILN_REJECT_NO_CODE
                                                           : rejects & ~(1u << KILN_REJECT_PROBLEM);
    kiln_select_input all = *in;
    all.skip = 0;
    for (int i = 0; i < h->tables.num_solutions; i++) {
        char why[200];
        kiln_reject r = kiln_solution_fits(&h->tables.solutions[i], &all, why, sizeof why);
        if (r != KILN_FITS && (bits & (1u << r))) {
            kiln_fail(st, "no candidate for %s passes; [%d] %s is rejected by %s: %s", types, i,
                      h->tables.solutions[i].name, kiln_reject_name(r), why);
            return;
        }
    }
    kiln_fail(st, "no candidate for %s passes", types);
}

kiln_status kiln_handle_select(kiln_handle h, const kiln_problem *p, const kiln_args *args, int *out, int max_out,
                               int *count, char *explain, size_t len)
{
    kiln_select_input in;
    unsigned rejects, first_rejects;
    int any, found;
    kiln_handle_select_input(h, p, args, &in);
    kiln_status st = kiln_select(&h->tables, &in, out, max_out, count, &rejects, explain, len);
    if (st == KILN_STATUS_NOT_SUPPORTED)
        return kiln_fail(st, "%s has no %s kernels in this library", in.arch, kiln_kind_name(kiln_problem_kind_of(p)));
    if (st != KILN_STATUS_NO_SOLUTION)
        return st == KILN_STATUS_SUCCESS ? st : kiln_fail(st, "selection ran out of memory");
    if (p->scale_b == KILN_SCALE_BLOCK && kiln_problem_kind_of(p) == KILN_KIND_MIXED_W8 &&
        rejects == (1u << KILN_REJECT_PROBLEM)) /* every kernel of the kind refused the scales (kiln_solution_fits) */
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                         "%s has no kernel for per-group weight scales (scale_b KILN_SCALE_BLOCK on f16/bf16 x fp8: "
                         "the sm90 wgmma kernels apply them)", in.arch);
    static const struct {
        unsigned skip;
        kiln_status status;
    } reasons[] = {
        {1u << KILN_REJECT_SIZE, KILN_STATUS_OVERFLOW},
        {(1u << KILN_REJECT_ALIGN_A) | (1u << KILN_REJECT_ALIGN_B), KILN_STATUS_MISALIGNED},
        {1u << KILN_REJECT_NO_CODE, KILN_STATUS_NO_CODE_FOR_DEVICE},
    };
    first_rejects = rejects;
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0] && st == KILN_STATUS_NO_SOLUTION; i++) {
        if (!(rejects & reasons[i].skip))
            continue;
        in.skip = reasons[i].skip;
        st = kiln_select(&h->tables, &in, &any, 1, &found, &rejects, NULL, 0);
        if (st == KILN_STATUS_SUCCESS)
            st = reasons[i].status;
    }
    in.skip = 0;
    describe_failure(h, &in, st, first_rejects);
    return st;
}

static kiln_status query(kiln_handle h, const kiln_problem *p, const kiln_args *args, kiln_algo *algos, int requested,
                         int *returned)
{
    if (!h || !p || !algos || !returned)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !h ? "h" : !p ? "p" : !algos ? "algos" : "returned");
    *returned = 0;
    if (requested < 1)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "requested = %d must be at least 1", requested);
    kiln_status st = kiln_problem_validate(h, p);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (kiln_problem_work(p) != KILN_WORK_GEMM) {
        algos[0] = kiln_no_gemm_algo();
        *returned = 1;
        return KILN_STATUS_SUCCESS;
    }
    int *idx = malloc(sizeof(int) * (size_t)(h->tables.num_solutions > 0 ? h->tables.num_solutions : 1)), count = 0;
    if (!idx)
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "out of memory");
    int max_out = requested < h->tables.num_solutions ? requested : h->tables.num_solutions;
    st = kiln_handle_select(h, p, args, idx, max_out, &count, NULL, 0);
    for (int i = 0; i < count; i++) {
        const kiln_solution *sol = &h->tables.solutions[idx[i]];
        kiln_geometry g;
        kiln_solution_geometry(sol, p, &g);
        memset(&algos[i], 0, sizeof algos[i]);
        algos[i].name_hash = sol->name_hash;
        algos[i].solution_index = (uint32_t)idx[i];
        algos[i].gsu = (uint32_t)sol->gsu;
        algos[i].workspace_bytes = g.workspace_bytes;
    }
    *returned = count;
    free(idx);
    return st;
}

kiln_status kiln_query(kiln_handle h, const kiln_problem *p, const kiln_args *args, kiln_algo *algos, int requested,
                       int *returned)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_query", query(h, p, args, algos, requested, returned));
}

static kiln_status algo_name(kiln_handle h, const kiln_algo *algo, const char **name)
{
    if (!h || !algo || !name)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !h ? "h" : !algo ? "algo" : "name");
    int s = kiln_handle_find_algo(h, algo);
    if (s == KILN_FIND_NO_GEMM) {
        *name = KILN_NO_GEMM_NAME;
        return KILN_STATUS_SUCCESS;
    }
    if (s < 0) {
        int a = kiln_handle_find_attn_algo(h, algo); /* an attention kernel's (kiln_attn_query) */
        if (a >= 0) {
            *name = h->tables.attn_solutions[a].name;
            return KILN_STATUS_SUCCESS;
        }
        return kiln_fail(KILN_STATUS_INVALID_ALGO,
                         "algo name_hash = 0x%016" PRIx64 " names no solution of this library", algo->name_hash);
    }
    *name = h->tables.solutions[s].name;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_algo_name(kiln_handle h, const kiln_algo *algo, const char **name)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_algo_name", algo_name(h, algo, name));
}

/* ---- explain ---- */

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

/* The explanation, silently truncated to buf[len]; returns the selection's status. */
static kiln_status explain_into(kiln_handle h, const kiln_problem *p, const kiln_args *args, char *buf, size_t len)
{
    buf[0] = '\0';
    kiln_status st = kiln_problem_validate(h, p);
    if (st != KILN_STATUS_SUCCESS) {
        append(buf, len, "problem rejected by kiln_check_problem: %s: %s\n", kiln_status_string(st),
               kiln_fail_text());
        return st;
    }
    kiln_work work = kiln_problem_work(p);
    if (work == KILN_WORK_GEMM) {
        int best, count;
        st = kiln_handle_select(h, p, args, &best, 1, &count, buf, len);
        if (p->k == 0)
            append(buf, len, "k = 0: D = act(beta * C + bias), by a kernel of a family that runs no K tile\n");
        if (st != KILN_STATUS_SUCCESS)
            append(buf, len, "why: %s\n", kiln_fail_text());
    } else {
        append(buf, len,
               "problem: %s %s x %s -> %s %s b_prepacked=%d m=%" PRId64 " n=%" PRId64 " k=%" PRId64
               " batch=%" PRId64 "\n",
               h->arch, kiln_dtype_name(p->a_type), kiln_dtype_name(p->b_type), kiln_dtype_name(p->d_type),
               layout_name(p->layout), p->b_prepacked, p->m, p->n, p->k, p->batch);
        if (work == KILN_WORK_NONE)
            append(buf, len, "empty problem (m, n or batch is 0): nothing to compute, nothing is launched\n");
        else
            append(buf, len, "k = 0 without C or bias: D is zero, written by a 2-D memset per batch, no kernel\n");
        append(buf, len, "algo: %s\n", KILN_NO_GEMM_NAME);
    }
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

/* The whole explanation in a buffer of its own (free it), grown until the text fits; NULL when memory runs out. */
#define EXPLAIN_FIRST_BYTES ((size_t)16 << 10)
#define EXPLAIN_MAX_BYTES ((size_t)64 << 20)
static char *explain_all(kiln_handle h, const kiln_problem *p, const kiln_args *args, kiln_status *st)
{
    for (size_t cap = EXPLAIN_FIRST_BYTES;; cap *= 4) {
        char *buf = malloc(cap);
        if (!buf)
            return NULL;
        kiln_call_begin();
        *st = explain_into(h, p, args, buf, cap);
        if (strlen(buf) + 1 < cap || cap >= EXPLAIN_MAX_BYTES)
            return buf;
        free(buf);
    }
}

static kiln_status explain(kiln_handle h, const kiln_problem *p, const kiln_args *args, char *buf, size_t len)
{
    if (!h || !p || !buf)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !h ? "h" : !p ? "p" : "buf");
    if (len == 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "len = 0: no room for the text");
    kiln_status st;
    char *text = explain_all(h, p, args, &st);
    if (!text) {
        buf[0] = '\0';
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "out of memory");
    }
    size_t need = strlen(text) + 1;
    if (need <= len) {
        memcpy(buf, text, need);
    } else {
        /* Whole lines while they fit, then a line that says how much was left out. */
        char mark[128];
        int mark_len = snprintf(mark, sizeof mark, "[truncated: the text needs %zu bytes (kiln_explain_size)]\n",
                                need);
        size_t keep = len > (size_t)mark_len + 1 ? len - (size_t)mark_len - 1 : 0;
        while (keep > 0 && text[keep - 1] != '\n')
            keep--;
        memcpy(buf, text, keep);
        buf[keep] = '\0';
        append(buf, len, "%s", mark);
    }
    free(text);
    return st;
}

kiln_status kiln_explain(kiln_handle h, const kiln_problem *p, const kiln_args *args, char *buf, size_t len)
{
    kiln_call_begin();
    kiln_status st = explain(h, p, args, buf, len);
    return kiln_call_end(kiln_slot(h), "kiln_explain", st);
}

static kiln_status explain_size(kiln_handle h, const kiln_problem *p, const kiln_args *args, size_t *bytes)
{
    if (!h || !p || !bytes)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !h ? "h" : !p ? "p" : "bytes");
    kiln_status st;
    char *text = explain_all(h, p, args, &st);
    if (!text)
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "out of memory");
    *bytes = strlen(text) + 1;
    free(text);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_explain_size(kiln_handle h, const kiln_problem *p, const kiln_args *args, size_t *bytes)
{
    kiln_call_begin();
    kiln_status st = explain_size(h, p, args, bytes);
    return kiln_call_end(kiln_slot(h), "kiln_explain_size", st);
}
