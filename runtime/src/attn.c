/* FP8 attention forward (kiln.h, "FP8 attention forward"): problem defaults and validation, the selection over the
 * generated attention table (generated/attention.c), explain, and the launch of kiln_attn_params (kiln_attn_abi.h).
 * Every rule names the field and its value; nothing launches before every check passed. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "handle.h"
#include "kiln_attn_abi.h"

#define KILN_ATTN_MAX_BYTES (INT64_C(1) << 57) /* as problem.c: no device addresses more */

static int is_flag(int v) { return v == 0 || v == 1; }

/* The row length of a packed V^T (kiln_attn_pack_v): seqlen_k rounded up to 8 keys (TMA strides are multiples of 16
 * bytes), at least 8 (an empty key range still encodes a map). */
static int64_t vt_keys(int64_t seqlen_k) { return seqlen_k > 0 ? (seqlen_k + 7) / 8 * 8 : 8; }
/* v_packed 2: args->vt_work is the V^T (its bytes rounded up to 16), then the kernel's counters and chunk flags
 * (kiln_attn_abi.h: 1 + batch * heads_kv * (1 + ceil(vt_keys / 64)) int32) */
static __int128 vt_bytes16(const kiln_attn_problem *p)
{
    return ((__int128)p->batch * p->heads_kv * p->head_dim * vt_keys(p->seqlen_k) * 2 + 15) / 16 * 16;
}
static __int128 vt_sync_bytes(const kiln_attn_problem *p)
{
    return 4 * (1 + (__int128)p->batch * p->heads_kv * (1 + (vt_keys(p->seqlen_k) + 63) / 64));
}
static kiln_status pack_size(const kiln_attn_problem *p, size_t *bytes);
static kiln_status pack_v(kiln_handle h, const kiln_attn_problem *p, const void *v, const int32_t *cu_seqlens_k,
                          void *vt, size_t vt_bytes, void *stream);

/* The split tail of a persist 2 kernel (kiln_attn_abi.h, kiln_attn_split_piece): the flags (one a consumer warp of
 * each CTA, rounded up to 256 bytes), then two slots of partials a CTA. */
static size_t split_flag_bytes(int64_t grid) { return (size_t)((grid * KILN_ATTN_SPLIT_WARPS * 4 + 255) / 256 * 256); }
static size_t split_bytes(const kiln_attn_solution *sol, int64_t grid)
{
    return split_flag_bytes(grid) + (size_t)(2 * grid * KILN_ATTN_SPLIT_SLOT_FLOATS(sol->bm, sol->head_dim) * 4);
}
/* The SMs a persistent attention grid spreads over: the device's, or fewer where the environment sets KILN_ATTN_GRID
 * (a test hook: many items a CTA and the split tail on small problems). */
static int64_t attn_sms(kiln_handle h)
{
    const char *e = getenv("KILN_ATTN_GRID");
    const long cap = e ? strtol(e, NULL, 10) : 0;
    return cap > 0 && cap < h->limits.sm_count ? (int64_t)cap : h->limits.sm_count;
}

/* split_units for the problem in k (filled, with work_pairs and work_heads set) on grid gx of kernel sol: 0 where the
 * kernel has no split tail, the grid is not persistent, the problem is causal or varlen (units of unequal cost), the
 * units fill whole rounds, or the tail's key tiles pass what the kernel counts (KILN_ATTN_SPLIT_MAX_TILES). */
static int64_t split_units_for(const kiln_attn_solution *sol, const kiln_attn_params *k, int64_t gx)
{
    if (sol->persistent != 2 || gx <= 0 || k->causal || k->cu_seqlens_q || sol->bn <= 0)
        return 0;
    const int64_t split = kiln_attn_split_units(kiln_attn_work_units(k, sol->bm, 0), gx);
    const int64_t tiles = ((int64_t)k->seqlen_k + sol->bn - 1) / sol->bn;
    return split > 0 && tiles > 0 && gx * split <= KILN_ATTN_SPLIT_MAX_TILES / tiles ? split : 0;
}

/* The longest query sequence for which a kernel packs V itself (v_packed 2; run below) */
#define KILN_ATTN_FILL_MAX_SEQLEN_Q 8192

static const char *const SIZE_NAMES[6] = {"batch", "heads_q", "heads_kv", "seqlen_q", "seqlen_k", "head_dim"};

static kiln_status init(kiln_attn_problem *p, kiln_dtype qkv, kiln_dtype o, int64_t batch, int64_t heads_q,
                        int64_t heads_kv, int64_t seqlen_q, int64_t seqlen_k, int64_t head_dim)
{
    if (!p)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "p is NULL");
    const int64_t sizes[6] = {batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim};
    kiln_status st = kiln_check_sizes(SIZE_NAMES, sizes, 6);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    /* the packed batch strides are products of three values <= 2^31 - 1: up to 2^93, checked before they are formed */
    const __int128 qb = (__int128)seqlen_q * heads_q * head_dim, kb = (__int128)seqlen_k * heads_kv * head_dim;
    if (qb > INT64_MAX || kb > INT64_MAX)
        return kiln_fail(KILN_STATUS_OVERFLOW,
                         "seqlen_%c * heads_%s * head_dim = %" PRId64 " * %" PRId64 " * %" PRId64
                         " does not fit the int64 batch stride",
                         qb > INT64_MAX ? 'q' : 'k', qb > INT64_MAX ? "q" : "kv", qb > INT64_MAX ? seqlen_q : seqlen_k,
                         qb > INT64_MAX ? heads_q : heads_kv, head_dim);
    memset(p, 0, sizeof *p);
    p->qkv_type = qkv;
    p->o_type = o;
    p->batch = batch, p->heads_q = heads_q, p->heads_kv = heads_kv;
    p->seqlen_q = seqlen_q, p->seqlen_k = seqlen_k, p->head_dim = head_dim;
    p->descale = KILN_SCALE_NONE;
    /* packed (batch, seq, head, head_dim) */
    p->q_stride_h = p->o_stride_h = head_dim, p->k_stride_h = p->v_stride_h = head_dim;
    p->q_stride_s = p->o_stride_s = heads_q * head_dim;
    p->k_stride_s = p->v_stride_s = heads_kv * head_dim;
    p->q_stride_b = p->o_stride_b = seqlen_q * heads_q * head_dim;
    p->k_stride_b = p->v_stride_b = seqlen_k * heads_kv * head_dim;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attn_problem_init(kiln_attn_problem *p, kiln_dtype qkv_type, kiln_dtype o_type, int64_t batch,
                                   int64_t heads_q, int64_t heads_kv, int64_t seqlen_q, int64_t seqlen_k,
                                   int64_t head_dim)
{
    kiln_call_begin();
    return kiln_call_end(NULL, "kiln_attn_problem_init",
                         init(p, qkv_type, o_type, batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim));
}

/* One operand (batch, seq, head, head_dim): strides >= 0; its last element within 2^57 bytes; for the output, no two
 * elements at one address (the dimensions, ordered by stride, each step over the whole of the ones inside). */
static kiln_status check_tensor(char name, const int64_t strides[3], const int64_t extents[3], int64_t head_dim,
                                size_t elem, int output)
{
    static const char *const DIMS[3] = {"b", "s", "h"};
    __int128 last = head_dim - 1;
    for (int i = 0; i < 3; i++) {
        if (strides[i] < 0)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%c_stride_%s = %" PRId64 " is negative", name, DIMS[i],
                             strides[i]);
        if (extents[i] > 0)
            last += (__int128)(extents[i] - 1) * strides[i];
    }
    if ((last + 1) * (__int128)elem > KILN_ATTN_MAX_BYTES)
        return kiln_fail(KILN_STATUS_OVERFLOW,
                         "%c's strides (%" PRId64 ", %" PRId64 ", %" PRId64 ") span more than the 2^57 bytes any "
                         "device addresses",
                         name, strides[0], strides[1], strides[2]);
    if (!output || extents[0] == 0 || extents[1] == 0 || extents[2] == 0)
        return KILN_STATUS_SUCCESS; /* (an empty tensor has no two elements) */
    int order[3] = {0, 1, 2}; /* by stride, dimensions of one index ignored */
    for (int i = 1; i < 3; i++)
        for (int j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    __int128 span = head_dim; /* elements covered by the dimensions inside */
    for (int i = 0; i < 3; i++) {
        int d = order[i];
        if (extents[d] <= 1)
            continue;
        if (strides[d] < span)
            return kiln_fail(KILN_STATUS_INVALID_VALUE,
                             "%c_stride_%s = %" PRId64 " makes elements of %c overlap (it must step over the %" PRId64
                             " elements inside it)",
                             name, DIMS[d], strides[d], name, (int64_t)span);
        span = (__int128)strides[d] * extents[d];
    }
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attn_validate(kiln_handle h, const kiln_attn_problem *p)
{
    if (!h)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "h is NULL");
    if (!p)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "p is NULL");
    if (!kiln_dtype_valid(p->qkv_type) || !kiln_dtype_valid(p->o_type))
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %d is not a kiln_dtype",
                         !kiln_dtype_valid(p->qkv_type) ? "qkv_type" : "o_type",
                         (int)(!kiln_dtype_valid(p->qkv_type) ? p->qkv_type : p->o_type));
    const char *flags[4] = {"causal", "varlen", "has_lse", "fp8_p"};
    const int fv[4] = {p->causal, p->varlen, p->has_lse, p->fp8_p};
    for (int i = 0; i < 4; i++)
        if (!is_flag(fv[i]))
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %d must be 0 or 1", flags[i], fv[i]);
    if (p->v_packed < 0 || p->v_packed > 2)
        return kiln_fail(KILN_STATUS_INVALID_VALUE,
                         "v_packed = %d must be 0 (V as given), 1 (V^T packed by kiln_attn_pack_v) or 2 (packed by "
                         "the kernel into args->vt_work)", p->v_packed);
    if ((unsigned)p->descale >= (unsigned)KILN_SCALE_COUNT)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "descale = %d is not a kiln_scale_mode", (int)p->descale);
    const int64_t sizes[6] = {p->batch, p->heads_q, p->heads_kv, p->seqlen_q, p->seqlen_k, p->head_dim};
    kiln_status sst = kiln_check_sizes(SIZE_NAMES, sizes, 6);
    if (sst != KILN_STATUS_SUCCESS)
        return sst;
    if (!kiln_dtype_is_fp8(p->qkv_type))
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "qkv_type = %s: attention takes fp8 Q, K and V",
                         kiln_dtype_name(p->qkv_type));
    if (!kiln_dtype_is_half(p->o_type))
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "o_type = %s: attention writes f16 or bf16",
                         kiln_dtype_name(p->o_type));
    if (p->descale == KILN_SCALE_BLOCK)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                         "descale = KILN_SCALE_BLOCK: descales are per tensor or per (sequence, kv head)");
    if (p->heads_q > 0 && (p->heads_kv < 1 || p->heads_q % p->heads_kv != 0))
        return kiln_fail(KILN_STATUS_INVALID_VALUE,
                         "heads_kv = %" PRId64 " must divide heads_q = %" PRId64 " (GQA / MQA)", p->heads_kv,
                         p->heads_q);
    if (p->head_dim != 64 && p->head_dim != 128 && p->head_dim != 256)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "head_dim = %" PRId64 ": attention kernels take 64, 128 or 256",
                         p->head_dim);
    if (p->heads_q > 65535 || p->batch > 65535)
        return kiln_fail(KILN_STATUS_OVERFLOW, "%s = %" PRId64 " exceeds the grid's 65535 (grid y: heads, z: batch)",
                         p->heads_q > 65535 ? "heads_q" : "batch", p->heads_q > 65535 ? p->heads_q : p->batch);
    if (!p->varlen && (p->total_q != 0 || p->total_k != 0))
        return kiln_fail(KILN_STATUS_INVALID_VALUE,
                         "total_q = %" PRId64 ", total_k = %" PRId64 ": the packed rows are for varlen problems (0 "
                         "otherwise)", p->total_q, p->total_k);
    const int64_t totals[2] = {p->total_q, p->total_k};
    for (int i = 0; i < 2; i++)
        if (totals[i] < 0 || totals[i] > INT32_MAX)
            return kiln_fail(KILN_STATUS_INVALID_VALUE,
                             "total_%c = %" PRId64 " must be in 0..2^31 - 1 (rows of the packed tensor, row offsets "
                             "are int32)", "qk"[i], totals[i]);
    size_t e8 = kiln_dtype_bytes(p->qkv_type), eo = kiln_dtype_bytes(p->o_type);
    const int64_t qe[3] = {p->batch, p->seqlen_q, p->heads_q}, ke[3] = {p->batch, p->seqlen_k, p->heads_kv};
    const int64_t qs[3] = {p->q_stride_b, p->q_stride_s, p->q_stride_h};
    const int64_t ks[3] = {p->k_stride_b, p->k_stride_s, p->k_stride_h};
    const int64_t vs[3] = {p->v_stride_b, p->v_stride_s, p->v_stride_h};
    const int64_t os[3] = {p->o_stride_b, p->o_stride_s, p->o_stride_h};
    /* varlen: the batch strides are unused and the sequences share the rows (their offsets on the device): all of
     * them where the totals are given, else at least the longest */
    const int64_t qv[3] = {1, p->total_q > 0 ? p->total_q : p->seqlen_q, p->heads_q};
    const int64_t kv[3] = {1, p->total_k > 0 ? p->total_k : p->seqlen_k, p->heads_kv};
    kiln_status st = check_tensor('q', qs, p->varlen ? qv : qe, p->head_dim, e8, 0);
    if (st == KILN_STATUS_SUCCESS)
        st = check_tensor('k', ks, p->varlen ? kv : ke, p->head_dim, e8, 0);
    if (st == KILN_STATUS_SUCCESS && p->v_packed != 1) /* a packed V^T's layout is kiln_attn_pack_v's */
        st = check_tensor('v', vs, p->varlen ? kv : ke, p->head_dim, e8, 0);
    if (st == KILN_STATUS_SUCCESS)
        st = check_tensor('o', os, p->varlen ? qv : qe, p->head_dim, eo, 1);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    /* the kernels copy Q, K, V rows in 16-byte units and store O in 8-byte units */
    const char *sn[12] = {"q_stride_b", "q_stride_s", "q_stride_h", "k_stride_b", "k_stride_s", "k_stride_h",
                          "v_stride_b", "v_stride_s", "v_stride_h", "o_stride_b", "o_stride_s", "o_stride_h"};
    const int64_t sv[12] = {qs[0], qs[1], qs[2], ks[0], ks[1], ks[2], vs[0], vs[1], vs[2], os[0], os[1], os[2]};
    for (int i = 0; i < 12; i++) {
        int64_t unit = i < 9 ? (int64_t)(16 / e8) : (int64_t)(8 / eo);
        if ((p->varlen && i % 3 == 0) || (p->v_packed == 1 && i / 3 == 2))
            continue;
        if (sv[i] % unit)
            return kiln_fail(KILN_STATUS_MISALIGNED, "%s = %" PRId64 " is not a multiple of %" PRId64
                             " elements (%s rows are moved in %d-byte units)",
                             sn[i], sv[i], unit, i < 9 ? "Q, K and V" : "O", i < 9 ? 16 : 8);
    }
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attn_check(kiln_handle h, const kiln_attn_problem *p)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_attn_check", kiln_attn_validate(h, p));
}

/* ---- selection ---- */

static int matches(const kiln_attn_solution *s, kiln_arch_id arch, const kiln_attn_problem *p)
{
    return s->arch == arch && s->qkv_type == p->qkv_type && s->o_type == p->o_type && s->head_dim == p->head_dim &&
           (s->v_packed != 0) == (p->v_packed != 0);
}

/* A workgroup's time in the selection's model: a fixed part plus a part per query row, in units of query rows. The
 * fixed part (prologue, the first K/V loads and the pipeline's fill, the epilogue; a one-consumer workgroup also hides
 * less latency) is worth ATTN_BLOCK_FIXED_ROWS rows. Fitted to the H200 (tuning/results/probe_attn_small_picks_h200.txt,
 * problems of many waves): per query row a 64-row workgroup takes 1.35-1.75x and a 192-row one 0.85x the time of a
 * 128-row one; the model gives 1.43x and 0.86x. */
#define ATTN_BLOCK_FIXED_ROWS 96.0
/* The rate of the mma family against the wgmma family's on sm_90a (about a third; docs/attention.md). */
#define ATTN_MMA_ON_SM90_SLOWDOWN 3.0

static double attn_blocks(const kiln_attn_solution *s, const kiln_attn_problem *p)
{
    return ceil((double)p->seqlen_q / s->bm) * (double)p->heads_q * (double)p->batch;
}

/* The selection's estimate of a kernel's time: the waves of its workgroups (one a SM: every attention kernel's
 * registers or shared memory allow no second; the persistent ones launch at most one a SM and take
 * ceil(blocks / SMs) items each) times a workgroup's time. Where the largest tiles fill the device this keeps them
 * (a 64-row kernel has twice the waves); a problem of at most half a wave of 128-row workgroups goes to the 64-row
 * kernels, and between those halves the 128-row kernel's one wave beats the 64-row kernel's two (4 x 8 x 512 x 64,
 * H200: 180 against 134 TFLOP/s, causal 89 against 68). */
static double attn_estimate(const kiln_attn_solution *s, const kiln_attn_problem *p, int sms)
{
    /* a kernel with the split tail (persist 2) spreads the last round of a non-causal fixed-length problem over every
     * SM (kiln_attn_split_units): its share of the SMs, not whole rounds (as kiln.attention runs it, with the
     * workspace) */
    const double blocks = attn_blocks(s, p);
    const int split = s->persistent == 2 && !p->causal && !p->varlen && blocks > sms;
    const double waves = split ? blocks / sms : ceil(blocks / sms);
    const double family = s->family == KILN_FAMILY_MMA && s->arch == KILN_ARCH_SM90 ? ATTN_MMA_ON_SM90_SLOWDOWN : 1.0;
    return waves * (s->bm + ATTN_BLOCK_FIXED_ROWS) * family;
}

/* Sort key of a candidate with estimate est, smaller first. P's precision first: the solutions whose P has the bits
 * the problem asks for (f16 unless fp8_p, see kiln.h) come before the others. Then the estimate (the mma family's
 * slower rate on sm_90a is in it); equal estimates keep the table's (YAML's) order, which puts the more efficient
 * kernels first. log2 keeps the estimates' order and stays under 64 (the grid limits bound the workgroups), so a
 * difference in precision (256) outweighs any difference in it. */
static double rank_key(const kiln_attn_solution *s, const kiln_attn_problem *p, double est)
{
    const double precision = (s->p_bits == 8) == (p->fp8_p != 0) ? 0.0 : 1.0;
    return 256.0 * precision + log2(est);
}

/* NULL when the wgmma family can take the problem, else why not: its tensor maps are 4-D {head_dim, heads, seqlen,
 * batch} (varlen: {head_dim, heads, total rows, 1}, so the totals must be given) with byte strides below 2^40 (the
 * 16-element alignment of the strides is the ABI's, checked for every family). */
static const char *wgmma_refusal(const kiln_attn_problem *p, int own, const kiln_handle h)
{
    if (p->varlen && (p->total_q == 0 || p->total_k == 0))
        return "varlen without total_q and total_k runs on the mma family (the tensor maps need the packed rows)";
    if (own && !h->backend->tma_encode)
        return "the backend encodes no tensor maps";
    const int64_t limit = INT64_C(1) << 40;
    const int64_t strides[9] = {p->q_stride_b, p->q_stride_s, p->q_stride_h, p->k_stride_b, p->k_stride_s,
                                p->k_stride_h, p->v_stride_b, p->v_stride_s, p->v_stride_h};
    for (int i = 0; i < (p->v_packed == 1 ? 6 : 9); i++)
        if (strides[i] >= limit)
            return "a q/k/v stride of 2^40 bytes or more (tensor map limit)";
    if (p->v_packed && (__int128)2 * vt_keys(p->seqlen_k) * p->head_dim * p->heads_kv >= limit)
        return "the packed V^T's batch stride is 2^40 bytes or more (tensor map limit)";
    return NULL;
}

typedef struct text_buf {
    char *buf;
    size_t len;
} text_buf;

KILN_FORMAT(2, 3) static void say(text_buf *t, const char *fmt, ...)
{
    if (!t || !t->buf || t->len == 0)
        return;
    size_t used = strlen(t->buf);
    if (used + 1 >= t->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->buf + used, t->len - used, fmt, ap);
    va_end(ap);
}

/* Candidates best first into out[max_out]; *count of them. NOT_SUPPORTED when the arch has no attention kernel
 * for these types at all, NO_SOLUTION when it has some but none for this head dim or none that fits the device. */
static kiln_status select_attn(kiln_handle h, const kiln_attn_problem *p, int *out, int max_out, int *count,
                               text_buf *tx)
{
    const kiln_tables *t = &h->tables;
    kiln_arch_id arch = kiln_arch_from_name(h->arch);
    int own = h->backend && strcmp(h->arch, h->device_arch) == 0;
    int sms = own && h->limits.sm_count > 0 ? (int)h->limits.sm_count : KILN_MODEL_DEFAULT_SMS;
    *count = 0;
    say(tx, "attention: %s %s -> %s batch=%" PRId64 " heads=%" PRId64 "/%" PRId64 " seqlen=%" PRId64 "/%" PRId64
            " head_dim=%" PRId64 " causal=%d varlen=%d; P in %s preferred; V %s\n",
        h->arch, kiln_dtype_name(p->qkv_type), kiln_dtype_name(p->o_type), p->batch, p->heads_q, p->heads_kv,
        p->seqlen_q, p->seqlen_k, p->head_dim, p->causal, p->varlen, p->fp8_p ? "fp8 (fp8_p)" : "f16",
        p->v_packed == 1 ? "packed by kiln_attn_pack_v (v_packed 1)"
        : p->v_packed == 2 ? "packed by the kernel (v_packed 2)"
                           : "as given");
    int any_types = 0, any_packed = 0, n = 0;
    int *idx = malloc(sizeof(int) * (size_t)(t->num_attn_solutions > 0 ? t->num_attn_solutions : 1));
    double *key = malloc(sizeof(double) * (size_t)(t->num_attn_solutions > 0 ? t->num_attn_solutions : 1));
    if (!idx || !key) {
        free(idx);
        free(key);
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "out of memory");
    }
    for (int i = 0; i < t->num_attn_solutions; i++) {
        const kiln_attn_solution *s = &t->attn_solutions[i];
        if (s->arch != arch || s->qkv_type != p->qkv_type || s->o_type != p->o_type)
            continue;
        any_types = 1;
        any_packed |= s->v_packed;
        if (s->head_dim != p->head_dim)
            continue;
        if ((s->v_packed != 0) != (p->v_packed != 0)) {
            say(tx, "  [%d] %s: rejected: reads %s\n", i, s->name,
                s->v_packed ? "a packed V^T (the problem's v_packed = 0)"
                            : "V as given (the problem's v_packed is 1 or 2)");
            continue;
        }
        const char *refusal = s->family == KILN_FAMILY_WGMMA ? wgmma_refusal(p, own, h) : NULL;
        if (refusal) {
            say(tx, "  [%d] %s: rejected: %s\n", i, s->name, refusal);
            continue;
        }
        if (own && h->limits.max_lds_bytes > 0 && s->lds_bytes > h->limits.max_lds_bytes) {
            say(tx, "  [%d] %s: rejected: %d bytes of shared memory, the device has %" PRId64 "\n", i, s->name,
                s->lds_bytes, h->limits.max_lds_bytes);
            continue;
        }
        if (own && !kiln_find_code_object(t, s->name)) {
            say(tx, "  [%d] %s: rejected: no code object in this library\n", i, s->name);
            continue;
        }
        const double est = attn_estimate(s, p, sms);
        double k = rank_key(s, p, est);
        int at = n++;
        while (at > 0 && key[at - 1] > k) { /* stable: table (YAML) order among equal keys */
            key[at] = key[at - 1], idx[at] = idx[at - 1];
            at--;
        }
        key[at] = k, idx[at] = i;
        const double blocks = attn_blocks(s, p);
        say(tx, "  [%d] %s: accepted, P in %d bits, %.0f workgroups (%.0f waves on %d SMs), estimate %.0f\n", i,
            s->name, s->p_bits, blocks, ceil(blocks / sms), sms, est);
    }
    for (int i = 0; i < n && i < max_out; i++)
        out[(*count)++] = idx[i];
    kiln_status st = KILN_STATUS_SUCCESS;
    if (n == 0 && any_types && p->v_packed && !any_packed) {
        say(tx, "%s has no attention kernels that read a packed V^T (v_packed = %d)\n", h->arch, p->v_packed);
        st = kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                       "v_packed = %d: %s has no attention kernels that read a packed V^T (sm90's wgmma vpre kernels "
                       "do)", p->v_packed, h->arch);
    } else if (n == 0 && !any_types) {
        say(tx, "%s has no attention kernels for %s -> %s\n", h->arch, kiln_dtype_name(p->qkv_type),
            kiln_dtype_name(p->o_type));
        st = kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s has no attention kernels for %s -> %s", h->arch,
                       kiln_dtype_name(p->qkv_type), kiln_dtype_name(p->o_type));
    } else if (n == 0) {
        say(tx, "no attention kernel of %s takes head_dim %" PRId64 " on this device\n", h->arch, p->head_dim);
        st = kiln_fail(KILN_STATUS_NO_SOLUTION, "no attention kernel of %s takes head_dim %" PRId64 "%s", h->arch,
                       p->head_dim, own ? " on this device" : "");
    } else {
        say(tx, "winner: [%d] %s\n", idx[0], t->attn_solutions[idx[0]].name);
    }
    free(idx);
    free(key);
    return st;
}

static kiln_algo algo_of(const kiln_attn_solution *s, int index)
{
    kiln_algo a;
    memset(&a, 0, sizeof a);
    a.name_hash = s->name_hash;
    a.solution_index = (uint32_t)index;
    a.gsu = 1;
    return a;
}

static kiln_status query(kiln_handle h, const kiln_attn_problem *p, kiln_algo *algos, int requested, int *returned)
{
    if (!returned)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "returned is NULL");
    *returned = 0;
    if (requested < 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "requested = %d is negative", requested);
    if (requested > 0 && !algos)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "algos is NULL (requested = %d)", requested);
    kiln_status st = kiln_attn_validate(h, p);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    int *idx = malloc(sizeof(int) * (size_t)(requested > 0 ? requested : 1));
    if (!idx)
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "out of memory");
    int count = 0;
    st = select_attn(h, p, idx, requested, &count, NULL);
    for (int i = 0; i < count; i++)
        algos[i] = algo_of(&h->tables.attn_solutions[idx[i]], idx[i]);
    *returned = count;
    free(idx);
    return st;
}

kiln_status kiln_attn_query(kiln_handle h, const kiln_attn_problem *p, kiln_algo *algos, int requested, int *returned)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_attn_query", query(h, p, algos, requested, returned));
}

static kiln_status explain(kiln_handle h, const kiln_attn_problem *p, char *buf, size_t len)
{
    if (!buf || len == 0)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "buf is NULL or len is 0");
    buf[0] = '\0';
    text_buf tx = {buf, len};
    kiln_status st = kiln_attn_validate(h, p);
    if (st != KILN_STATUS_SUCCESS) {
        say(&tx, "problem rejected by kiln_attn_check: %s: %s\n", kiln_status_string(st), kiln_fail_text());
        return st;
    }
    int one, count;
    return select_attn(h, p, &one, 1, &count, &tx);
}

kiln_status kiln_attn_explain(kiln_handle h, const kiln_attn_problem *p, char *buf, size_t len)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_attn_explain", explain(h, p, buf, len));
}

int kiln_handle_find_attn_algo(kiln_handle h, const kiln_algo *a)
{
    const kiln_tables *t = &h->tables;
    if (a->solution_index < (uint32_t)t->num_attn_solutions &&
        t->attn_solutions[a->solution_index].name_hash == a->name_hash)
        return (int)a->solution_index;
    for (int i = 0; i < t->num_attn_solutions; i++)
        if (t->attn_solutions[i].name_hash == a->name_hash)
            return i;
    return -1;
}

/* ---- run ---- */

static kiln_status misaligned(const char *field, const void *ptr, int bytes)
{
    return kiln_fail(KILN_STATUS_MISALIGNED, "%s = %p is not %d-byte aligned", field, ptr, bytes);
}

static kiln_status check_args(const kiln_attn_problem *p, const kiln_attn_args *a)
{
    const char *names[4] = {"q", "k", "v", "o"};
    const void *ptrs[4] = {a->q, a->k, a->v, a->o};
    for (int i = 0; i < 4; i++) {
        if (!ptrs[i])
            return kiln_fail(KILN_STATUS_NULL_POINTER, "args->%s is NULL", names[i]);
        int align = i < 3 ? 16 : 8;
        if ((uintptr_t)ptrs[i] % (uintptr_t)align)
            return misaligned(i == 0 ? "args->q" : i == 1 ? "args->k" : i == 2 ? "args->v" : "args->o", ptrs[i],
                              align);
    }
    if (p->has_lse && !a->lse)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->lse is NULL (has_lse = 1)");
    if (p->has_lse && (uintptr_t)a->lse % 4)
        return misaligned("args->lse", a->lse, 4);
    if (p->varlen && (!a->cu_seqlens_q || !a->cu_seqlens_k))
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->cu_seqlens_%c is NULL (varlen = 1)",
                         !a->cu_seqlens_q ? 'q' : 'k');
    if (p->descale != KILN_SCALE_NONE && (!a->q_descale || !a->k_descale || !a->v_descale))
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->%c_descale is NULL (descale = %d)",
                         !a->q_descale ? 'q' : !a->k_descale ? 'k' : 'v', (int)p->descale);
    if (!(a->softmax_scale >= 0.0f) || isinf(a->softmax_scale))
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "softmax_scale = %g must be finite and >= 0 (0: 1 / sqrt(d))",
                         (double)a->softmax_scale);
    return KILN_STATUS_SUCCESS;
}

static void fill(const kiln_attn_problem *p, const kiln_attn_args *a, kiln_attn_params *k)
{
    memset(k, 0, sizeof *k); /* padding included: the launch copies every byte */
    k->q = a->q, k->k = a->k, k->v = a->v, k->o = a->o;
    k->lse = p->has_lse ? a->lse : NULL;
    k->cu_seqlens_q = p->varlen ? a->cu_seqlens_q : NULL;
    k->cu_seqlens_k = p->varlen ? a->cu_seqlens_k : NULL;
    int ds = p->descale != KILN_SCALE_NONE;
    k->q_descale = ds ? a->q_descale : NULL;
    k->k_descale = ds ? a->k_descale : NULL;
    k->v_descale = ds ? a->v_descale : NULL;
    k->descale_stride_b = p->descale == KILN_SCALE_VECTOR ? p->heads_kv : 0;
    k->descale_stride_h = p->descale == KILN_SCALE_VECTOR ? 1 : 0;
    k->q_stride_b = p->q_stride_b, k->q_stride_s = p->q_stride_s, k->q_stride_h = p->q_stride_h;
    k->k_stride_b = p->k_stride_b, k->k_stride_s = p->k_stride_s, k->k_stride_h = p->k_stride_h;
    k->v_stride_b = p->v_stride_b, k->v_stride_s = p->v_stride_s, k->v_stride_h = p->v_stride_h;
    k->o_stride_b = p->o_stride_b, k->o_stride_s = p->o_stride_s, k->o_stride_h = p->o_stride_h;
    /* lse: [batch][heads_q][seqlen_q]; varlen: [heads_q][batch * seqlen_q] with row cu_seqlens_q[b] + i (kiln.h) */
    k->lse_stride_h = p->varlen ? p->batch * p->seqlen_q : p->seqlen_q;
    k->lse_stride_b = p->varlen ? 0 : p->heads_q * p->seqlen_q;
    k->batch = (int32_t)p->batch, k->heads_q = (int32_t)p->heads_q, k->heads_kv = (int32_t)p->heads_kv;
    k->seqlen_q = (int32_t)p->seqlen_q, k->seqlen_k = (int32_t)p->seqlen_k, k->head_dim = (int32_t)p->head_dim;
    k->softmax_scale = a->softmax_scale > 0.0f ? a->softmax_scale : 1.0f / sqrtf((float)p->head_dim);
    k->causal = p->causal;
    k->o_dtype = (int32_t)p->o_type;
}

static kiln_status load(kiln_handle h, int s, void **kernel)
{
    kiln_kernels *k = &h->attn_kernels[s];
    const kiln_attn_solution *sol = &h->tables.attn_solutions[s];
    kiln_status st = KILN_STATUS_SUCCESS;
    pthread_mutex_lock(&h->lock);
    if (!k->loaded) {
        const kiln_code_object *co = kiln_find_code_object(&h->tables, sol->name);
        void *module = NULL, *fn = NULL;
        st = co ? h->backend->load_module(h->dev, co->data, co->size, &module) : KILN_STATUS_NO_CODE_FOR_DEVICE;
        if (st == KILN_STATUS_SUCCESS) {
            st = h->backend->get_kernel(h->dev, module, sol->name, sol->lds_bytes, &fn);
            if (st != KILN_STATUS_SUCCESS)
                h->backend->unload_module(h->dev, module);
        }
        void *pack = NULL; /* a vpre kernel's V^T packer, kiln_attn_pack_v's */
        if (st == KILN_STATUS_SUCCESS && sol->v_packed) {
            char symbol[256];
            snprintf(symbol, sizeof symbol, "%s_pack", sol->name);
            st = h->backend->get_kernel(h->dev, module, symbol, 0, &pack);
            if (st != KILN_STATUS_SUCCESS)
                h->backend->unload_module(h->dev, module);
        }
        if (st == KILN_STATUS_SUCCESS)
            k->module = module, k->gemm = fn, k->reduce = pack, k->loaded = 1;
    }
    if (st == KILN_STATUS_SUCCESS)
        *kernel = k->gemm;
    pthread_mutex_unlock(&h->lock);
    return st;
}

/* load, with the failure said in kiln_fail's words (which kernel, and why) */
static kiln_status load_named(kiln_handle h, int s, void **kernel)
{
    kiln_status st = load(h, s, kernel);
    if (st != KILN_STATUS_SUCCESS)
        return kiln_fail(st, "loading %s: %s", h->tables.attn_solutions[s].name,
                         st == KILN_STATUS_NO_CODE_FOR_DEVICE ? "the library embeds no code object for it"
                                                              : h->backend->last_error(h->dev));
    return KILN_STATUS_SUCCESS;
}

/* The wgmma family's maps (kiln_attn_abi.h, kiln_attn_tma_params): {head_dim, heads, seqlen, batch} over the fp8
 * bytes (varlen: {head_dim, heads, total rows, 1}), boxes of the kernel's BM (Q) or BN (K, V) rows and
 * min(head_dim, 128) bytes. An empty key range keeps an extent of 1 (the kernel reads no key then). */
_Static_assert(sizeof(kiln_attn_tma_params) <= KILN_MAX_ARG_BYTES, "the wgmma attention argument fits the launch buffer");

static kiln_status encode_maps(kiln_handle h, const kiln_attn_problem *p, const kiln_attn_args *a,
                               const kiln_attn_solution *sol, kiln_attn_tma_params *P)
{
    const uint32_t rb = p->head_dim >= 128 ? 128u : 64u;
    const void *base[3] = {a->q, a->k, a->v};
    const int64_t heads[3] = {p->heads_q, p->heads_kv, p->heads_kv};
    const int64_t rq = p->varlen ? p->total_q : p->seqlen_q, rk = p->varlen ? p->total_k : p->seqlen_k;
    const int64_t batch = p->varlen ? 1 : p->batch;
    const int64_t rows[3] = {rq, rk > 0 ? rk : 1, rk > 0 ? rk : 1};
    const int64_t st3[3][3] = {{p->q_stride_h, p->q_stride_s, p->q_stride_b},
                               {p->k_stride_h, p->k_stride_s, p->k_stride_b},
                               {p->v_stride_h, p->v_stride_s, p->v_stride_b}};
    kiln_tma_desc *out[3] = {&P->q, &P->k, &P->v};
    for (int i = 0; i < 3; i++) {
        if (i == 2 && sol->v_packed) { /* {keys, head_dim, heads_kv, batch} of the f16 V^T, box {64, head_dim} */
            const int64_t keys = vt_keys(p->seqlen_k);
            const uint64_t dims[4] = {(uint64_t)(p->seqlen_k > 0 ? p->seqlen_k : 1), (uint64_t)p->head_dim,
                                      (uint64_t)p->heads_kv, (uint64_t)p->batch};
            const uint64_t strides[3] = {(uint64_t)(2 * keys), (uint64_t)(2 * keys * p->head_dim),
                                         (uint64_t)(2 * keys * p->head_dim * p->heads_kv)};
            const uint32_t box[4] = {64u, (uint32_t)p->head_dim, 1u, 1u};
            const void *vt = p->v_packed == 2 && a->vt_work ? a->vt_work : a->v; /* (v_packed 2: the kernel's) */
            kiln_status st = h->backend->tma_encode(h->dev, &P->v, 4, 2, 128, vt, dims, strides, box);
            if (st != KILN_STATUS_SUCCESS)
                return kiln_fail(st, "encoding the packed V^T's tensor map of %s: %s", sol->name,
                                 h->backend->last_error(h->dev));
            continue;
        }
        const uint64_t dims[4] = {(uint64_t)p->head_dim, (uint64_t)heads[i], (uint64_t)rows[i], (uint64_t)batch};
        /* at batch 1 the batch stride is never stepped over: the sequence's extent keeps it a valid multiple of 16 */
        const uint64_t strides[3] = {(uint64_t)st3[i][0], (uint64_t)st3[i][1],
                                     batch > 1 ? (uint64_t)st3[i][2] : (uint64_t)rows[i] * (uint64_t)st3[i][1]};
        const uint32_t box[4] = {rb, 1u, (uint32_t)(i == 0 ? sol->bm : sol->bn), 1u};
        kiln_status st = h->backend->tma_encode(h->dev, out[i], 4, 1, (int)rb, base[i], dims, strides, box);
        if (st != KILN_STATUS_SUCCESS)
            return kiln_fail(st, "encoding the %c tensor map of %s: %s", "qkv"[i], sol->name,
                             h->backend->last_error(h->dev));
    }
    /* O's map, which the persistent kernels store through: where O's base and byte strides are multiples of 16; else
     * (or where the encoding fails) P->p.o_map stays 0 and the kernel stores O from registers */
    const uint64_t sh = 2u * (uint64_t)P->p.o_stride_h, ss = 2u * (uint64_t)P->p.o_stride_s;
    const uint64_t sb = batch > 1 ? 2u * (uint64_t)P->p.o_stride_b : (uint64_t)rq * ss;
    if (sol->persistent && ((uintptr_t)a->o % 16 | sh % 16 | ss % 16 | sb % 16) == 0) {
        const uint64_t dims[4] = {(uint64_t)p->head_dim, (uint64_t)p->heads_q, (uint64_t)rq, (uint64_t)batch};
        const uint64_t strides[3] = {sh, ss, sb};
        const uint32_t box[4] = {64u, 1u, 16u, 1u};
        P->p.o_map = h->backend->tma_encode(h->dev, &P->o, 4, 2, 128, a->o, dims, strides, box) == KILN_STATUS_SUCCESS;
    }
    return KILN_STATUS_SUCCESS;
}

/* The table index of the attention kernel `algo` names, which must take the problem; else INVALID_ALGO. */
static kiln_status named_algo(kiln_handle h, const kiln_attn_problem *p, const kiln_algo *algo, int *s)
{
    *s = kiln_handle_find_attn_algo(h, algo);
    if (*s < 0)
        return kiln_fail(KILN_STATUS_INVALID_ALGO,
                         "algo name_hash = 0x%016" PRIx64 " names no attention kernel of this library", algo->name_hash);
    if (!matches(&h->tables.attn_solutions[*s], kiln_arch_from_name(h->arch), p))
        return kiln_fail(KILN_STATUS_INVALID_ALGO, "algo %s does not take this problem (arch, types, head_dim, v_packed)",
                         h->tables.attn_solutions[*s].name);
    return KILN_STATUS_SUCCESS;
}

static kiln_status run(kiln_handle h, const kiln_attn_problem *p, const kiln_algo *algo, const kiln_attn_args *a,
                       void *stream)
{
    if (!h || !p || !a)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !h ? "h" : !p ? "p" : "args");
    kiln_status st = kiln_attn_validate(h, p);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    int s = -1;
    if (algo && (st = named_algo(h, p, algo, &s)) != KILN_STATUS_SUCCESS)
        return st;
    if (p->batch == 0 || p->heads_q == 0 || p->seqlen_q == 0)
        return KILN_STATUS_SUCCESS; /* nothing to compute, nothing read */
    st = check_args(p, a);
    size_t work = 0; /* v_packed 2: the bytes of args->vt_work (0: no key, nothing to pack) */
    if (st == KILN_STATUS_SUCCESS && p->v_packed == 2)
        st = pack_size(p, &work);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (work > 0 && !a->vt_work)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "args->vt_work is NULL (v_packed = 2)");
    if (work > 0 && (uintptr_t)a->vt_work % 16)
        return misaligned("args->vt_work", a->vt_work, 16);
    if (work > 0 && a->vt_work_bytes < work)
        return kiln_fail(KILN_STATUS_INVALID_VALUE,
                         "args->vt_work_bytes = %zu is below the %zu of kiln_attn_pack_v_size (v_packed = 2)",
                         a->vt_work_bytes, work);
    if (!h->backend)
        return kiln_fail(KILN_STATUS_NO_DEVICE, "the handle has no device (kiln_create found none)");
    if (strcmp(h->arch, h->device_arch) != 0)
        return kiln_fail(KILN_STATUS_NO_CODE_FOR_DEVICE, "selecting for arch %s (kiln_set_arch), the device is %s",
                         h->arch, h->device_arch);
    if (s < 0) {
        int count = 0;
        st = select_attn(h, p, &s, 1, &count, NULL);
        if (st != KILN_STATUS_SUCCESS)
            return st;
    }
    const kiln_attn_solution *sol = &h->tables.attn_solutions[s];
    if (h->limits.max_lds_bytes > 0 && sol->lds_bytes > h->limits.max_lds_bytes)
        return kiln_fail(KILN_STATUS_INVALID_ALGO, "algo %s needs %d bytes of shared memory, the device has %" PRId64,
                         sol->name, sol->lds_bytes, h->limits.max_lds_bytes);
    void *kernel = NULL;
    st = load_named(h, s, &kernel);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    kiln_attn_tma_params P; /* the wgmma family's argument: maps, then the params */
    memset(&P, 0, sizeof P);
    fill(p, a, &P.p);
    if (sol->family == KILN_FAMILY_WGMMA) {
        const char *refusal = algo ? wgmma_refusal(p, 1, h) : NULL; /* select_attn refused these already */
        if (refusal)
            return kiln_fail(KILN_STATUS_INVALID_ALGO, "algo %s: %s", sol->name, refusal);
        st = encode_maps(h, p, a, sol, &P);
        if (st != KILN_STATUS_SUCCESS)
            return st;
    }
    /* validate bounded heads_q and batch by 65535 and seqlen_q by 2^31 - 1 */
    uint32_t grid[3] = {(uint32_t)((p->seqlen_q + sol->bm - 1) / sol->bm), (uint32_t)p->heads_q, (uint32_t)p->batch};
    if (sol->persistent) { /* the kernel counts its units in 32 bits */
        const int64_t units = kiln_attn_work_units(&P.p, sol->bm, 0);
        if (units > INT32_MAX - (INT64_C(1) << 20))
            return kiln_fail(KILN_STATUS_OVERFLOW,
                             "batch x heads_q x query blocks = %" PRId64 " work units exceed what %s counts (2^31 - 2^20)",
                             units, sol->name);
        const int64_t gx = kiln_attn_work_grid(&P.p, sol->bm, sol->bn, attn_sms(h));
        if (gx > 0) /* else the 3-D grid, work_heads 0 */
            grid[0] = (uint32_t)gx, grid[1] = grid[2] = 1;
        /* persist 2 with args->split_work: the last round's units cut along their keys (kiln_attn_abi.h); without
         * the workspace the kernel runs as persist 1 */
        const int64_t split = a->split_work ? split_units_for(sol, &P.p, gx) : 0;
        if (split > 0) {
            const size_t need = split_bytes(sol, gx);
            if ((uintptr_t)a->split_work % 16)
                return misaligned("args->split_work", a->split_work, 16);
            if (a->split_work_bytes < need)
                return kiln_fail(KILN_STATUS_WORKSPACE_TOO_SMALL,
                                 "args->split_work_bytes = %zu is below the %zu of kiln_attn_split_work_size (%s)",
                                 a->split_work_bytes, need, sol->name);
            P.p.split_units = (int32_t)split;
            P.p.split_flags = (int32_t *)a->split_work;
            P.p.split_work = (float *)((char *)a->split_work + split_flag_bytes(gx));
        }
    }
    /* v_packed 2: the kernel packs V itself where it can, its CTAs all run at once (one wave: the packing warps of a
     * CTA keep it until every chunk is taken, which would hold up the CTAs of a later wave) and the pass would cost
     * more than the packing beside the kernel: the pass grows with the keys, the kernel with queries x keys (H200,
     * head dim 128: 2.4 % faster than the pass at 4,096 queries, 1.6 % slower at 16,384); else the pass into vt_work
     * first */
    const int fill = work > 0 && sol->v_packed == 2 && p->seqlen_q <= KILN_ATTN_FILL_MAX_SEQLEN_Q &&
                     (int64_t)grid[0] * grid[1] * grid[2] <= h->limits.sm_count;
    if (work > 0 && !fill) {
        st = pack_v(h, p, a->v, a->cu_seqlens_k, a->vt_work, a->vt_work_bytes, stream);
        if (st != KILN_STATUS_SUCCESS)
            return st;
    } else if (fill) { /* the kernel packs V into vt_work; its flags start at 0 */
        const size_t vt_bytes = (size_t)vt_bytes16(p);
        P.p.vt_fill = (uint16_t *)a->vt_work;
        P.p.vt_sync = (int32_t *)((char *)a->vt_work + vt_bytes);
        P.p.vt_keys = vt_keys(p->seqlen_k);
        st = h->backend->zero_2d(h->dev, P.p.vt_sync, work - vt_bytes, work - vt_bytes, 1, stream);
        if (st != KILN_STATUS_SUCCESS)
            return kiln_fail(st, "clearing the V^T flags of %s: %s", sol->name, h->backend->last_error(h->dev));
    }
    if (P.p.split_units > 0) { /* the flags start at 0 */
        const size_t fb = split_flag_bytes(grid[0]);
        st = h->backend->zero_2d(h->dev, P.p.split_flags, fb, fb, 1, stream);
        if (st != KILN_STATUS_SUCCESS)
            return kiln_fail(st, "clearing the split flags of %s: %s", sol->name, h->backend->last_error(h->dev));
    }
    const void *arg = sol->family == KILN_FAMILY_WGMMA ? (const void *)&P : (const void *)&P.p;
    size_t arg_bytes = sol->family == KILN_FAMILY_WGMMA ? sizeof P : sizeof P.p;
    st = h->backend->launch(h->dev, kernel, grid, (uint32_t)sol->threads, (uint32_t)sol->lds_bytes, arg, arg_bytes,
                            stream);
    if (st != KILN_STATUS_SUCCESS)
        return kiln_fail(st, "launching %s: %s", sol->name, h->backend->last_error(h->dev));
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attn_run(kiln_handle h, const kiln_attn_problem *p, const kiln_algo *algo, const kiln_attn_args *args,
                          void *stream)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_attn_run", run(h, p, algo, args, stream));
}

static kiln_status split_size(kiln_handle h, const kiln_attn_problem *p, const kiln_algo *algo, size_t *bytes)
{
    if (!h || !p || !bytes)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !h ? "h" : !p ? "p" : "bytes");
    *bytes = 0;
    kiln_status st = kiln_attn_validate(h, p);
    if (st != KILN_STATUS_SUCCESS || p->batch == 0 || p->heads_q == 0 || p->seqlen_q == 0)
        return st;
    if (!algo) { /* kiln.attention asks before every run: no selection where no kernel could take the split */
        if (p->causal || p->varlen)
            return KILN_STATUS_SUCCESS;
        const kiln_arch_id arch = kiln_arch_from_name(h->arch);
        int any = 0;
        for (int i = 0; i < h->tables.num_attn_solutions && !any; i++)
            any = h->tables.attn_solutions[i].persistent == 2 && matches(&h->tables.attn_solutions[i], arch, p);
        if (!any)
            return KILN_STATUS_SUCCESS;
    }
    int s = -1, count = 0;
    st = algo ? named_algo(h, p, algo, &s) : select_attn(h, p, &s, 1, &count, NULL);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    const kiln_attn_solution *sol = &h->tables.attn_solutions[s];
    if (sol->persistent != 2 || p->varlen)
        return KILN_STATUS_SUCCESS; /* (varlen: kiln_attn_run never splits; fill below leaves cu_seqlens NULL) */
    kiln_attn_args a;
    memset(&a, 0, sizeof a);
    kiln_attn_params k;
    fill(p, &a, &k);
    if (kiln_attn_work_units(&k, sol->bm, 0) > INT32_MAX - (INT64_C(1) << 20))
        return KILN_STATUS_SUCCESS; /* (kiln_attn_run refuses it) */
    const int64_t gx = kiln_attn_work_grid(&k, sol->bm, sol->bn, attn_sms(h));
    if (split_units_for(sol, &k, gx) > 0)
        *bytes = split_bytes(sol, gx);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attn_split_work_size(kiln_handle h, const kiln_attn_problem *p, const kiln_algo *algo, size_t *bytes)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_attn_split_work_size", split_size(h, p, algo, bytes));
}

/* ---- V^T packed for the vpre kernels (kiln_attn_pack_v) ---- */

static kiln_status pack_size(const kiln_attn_problem *p, size_t *bytes)
{
    if (!p || !bytes)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !p ? "p" : "bytes");
    *bytes = 0;
    const int64_t sizes[6] = {p->batch, p->heads_q, p->heads_kv, p->seqlen_q, p->seqlen_k, p->head_dim};
    kiln_status st = kiln_check_sizes(SIZE_NAMES, sizes, 6);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (p->batch == 0 || p->heads_kv == 0 || p->seqlen_k == 0 || p->head_dim == 0)
        return KILN_STATUS_SUCCESS;
    const __int128 n = p->v_packed == 2 ? vt_bytes16(p) + vt_sync_bytes(p)
                                        : (__int128)p->batch * p->heads_kv * p->head_dim * vt_keys(p->seqlen_k) * 2;
    if (n > KILN_ATTN_MAX_BYTES || n > (__int128)SIZE_MAX)
        return kiln_fail(KILN_STATUS_OVERFLOW, "the packed V^T of batch %" PRId64 " x heads_kv %" PRId64
                         " x head_dim %" PRId64 " x %" PRId64 " keys spans more than the 2^57 bytes any device "
                         "addresses", p->batch, p->heads_kv, p->head_dim, vt_keys(p->seqlen_k));
    *bytes = (size_t)n;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attn_pack_v_size(const kiln_attn_problem *p, size_t *bytes)
{
    kiln_call_begin();
    return kiln_call_end(NULL, "kiln_attn_pack_v_size", pack_size(p, bytes));
}

static kiln_status pack_v(kiln_handle h, const kiln_attn_problem *p, const void *v, const int32_t *cu_seqlens_k,
                          void *vt, size_t vt_bytes, void *stream)
{
    if (!h || !p)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !h ? "h" : "p");
    kiln_attn_problem q = *p;
    q.v_packed = 0; /* p describes V as given */
    kiln_status st = kiln_attn_validate(h, &q);
    size_t need = 0;
    if (st == KILN_STATUS_SUCCESS)
        st = pack_size(&q, &need);
    if (st != KILN_STATUS_SUCCESS || need == 0)
        return st; /* an empty V: nothing read, nothing written */
    if (!v || !vt)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !v ? "v" : "vt");
    if (q.varlen && !cu_seqlens_k)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "cu_seqlens_k is NULL (varlen = 1)");
    if ((uintptr_t)v % 16)
        return misaligned("v", v, 16);
    if ((uintptr_t)vt % 16)
        return misaligned("vt", vt, 16);
    if (vt_bytes < need)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "vt_bytes = %zu is below the %zu of kiln_attn_pack_v_size",
                         vt_bytes, need);
    if (!h->backend)
        return kiln_fail(KILN_STATUS_NO_DEVICE, "the handle has no device (kiln_create found none)");
    if (strcmp(h->arch, h->device_arch) != 0)
        return kiln_fail(KILN_STATUS_NO_CODE_FOR_DEVICE, "selecting for arch %s (kiln_set_arch), the device is %s",
                         h->arch, h->device_arch);
    q.v_packed = 1; /* the kernel that would read it: its code object holds the packer */
    int s = -1, count = 0;
    st = select_attn(h, &q, &s, 1, &count, NULL);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    const kiln_attn_solution *sol = &h->tables.attn_solutions[s];
    void *kernel = NULL;
    st = load_named(h, s, &kernel);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    kiln_attn_pack_params a;
    memset(&a, 0, sizeof a);
    a.v = v, a.vt = vt, a.cu_seqlens_k = q.varlen ? cu_seqlens_k : NULL;
    a.v_stride_b = q.v_stride_b, a.v_stride_s = q.v_stride_s, a.v_stride_h = q.v_stride_h;
    a.vt_keys = vt_keys(q.seqlen_k);
    a.seqlen_k = (int32_t)q.seqlen_k, a.heads_kv = (int32_t)q.heads_kv;
    /* heads_kv <= heads_q <= 65535 and batch <= 65535 (validated) */
    const uint32_t grid[3] = {(uint32_t)((q.seqlen_k + 63) / 64), (uint32_t)q.heads_kv, (uint32_t)q.batch};
    st = h->backend->launch(h->dev, h->attn_kernels[s].reduce, grid, 256u, 0u, &a, sizeof a, stream);
    if (st != KILN_STATUS_SUCCESS)
        return kiln_fail(st, "launching %s_pack: %s", sol->name, h->backend->last_error(h->dev));
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attn_pack_v(kiln_handle h, const kiln_attn_problem *p, const void *v, const int32_t *cu_seqlens_k,
                             void *vt, size_t vt_bytes, void *stream)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_attn_pack_v", pack_v(h, p, v, cu_seqlens_k, vt, vt_bytes, stream));
}
