/* kiln_bench: benchmark and check every kiln solution for a list of GEMM sizes (kiln's counterpart of Tensile's
 * client).
 *
 *   kiln_bench --a e4m3 --b e4m3 --d bf16 [--layout TN|NN] [--sizes MxNxK[xBATCH],...] [--sizes-file FILE]
 *              [--solutions all|top1|NAME,NAME...] [--warmup 5] [--iters 20] [--samples 256]
 *              [--csv FILE] [--json FILE] [--device N] [--quiet] [--block-scales | --row-scales] [--fast-accum]
 *              [--groups G [--group-mode contiguous|masked|k]]
 *
 * For each size it asks kiln_query for every solution that accepts the problem (in kiln's ranking order: rank 0 is
 * what kiln_run picks by itself), runs each candidate once on a poisoned D, checks that D holds no NaN/inf and that
 * sampled entries match a float64 host reference, then times it with one event pair per run.
 *
 * Like kiln_example, it talks to the GPU through the CUDA driver API opened with dlopen at run time (no CUDA toolkit
 * needed to build). It makes the device's primary context current before kiln_create, so that the kiln handle binds
 * to the same context. Exit status: 0 all candidates ran and passed, 1 some candidate failed, 2 usage/setup error.
 *
 * It uses only kiln's public API (kiln/kiln.h, kiln/kiln_convert.h). Files: this one runs the sizes and candidates;
 * bench_cuda.c opens the driver, bench_options.c reads the command line, bench_reference.c makes inputs and the host
 * reference and checks D, bench_report.c prints and writes the rows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_cuda.h"
#include "bench_options.h"
#include "bench_reference.h"
#include "bench_report.h"
#include "kiln/kiln.h"

#define MAX_CANDIDATES 4096

struct bench {
    const struct options *o;
    kiln_handle h;
    struct rows rows;
    FILE *csv;
    double *lut_a, *lut_b;
    CUevent *ev; /* 2 * iters events: start i, stop i */
    float *times;
    CUdeviceptr queue_buf; /* scratch the timed loop's queue-ahead memsets write (QUEUE_BYTES; 0: none) */
    int rotate_failed;     /* no device memory for the operand copies at some size: timed warm there (said once) */
    int fatal; /* the CUDA context is unusable (a kernel fault): stop */
    int failed;
};

static void finish_row(struct bench *bx, struct row *r)
{
    if (r->pass == 0)
        bx->failed = 1;
    if (!bx->o->quiet)
        print_row(r);
    if (bx->csv)
        csv_row(bx->csv, bx->o, r);
}

/* Queue-ahead: the timed runs are enqueued behind GPU work that outlasts their enqueueing, so that each event pair
 * times the GPU's run and not the host's kiln_run (at decode sizes a run takes less GPU time than host time). The
 * work is memsets of QUEUE_BYTES, counted as if each took no longer than QUEUE_BYTES at QUEUE_MAX_BYTES_PER_US. */
#define QUEUE_BYTES ((size_t)64 << 20)
#define QUEUE_MAX_BYTES_PER_US 5.0e6 /* 5 TB/s: faster than any memset of the GPUs kiln targets */
#define QUEUE_MAX_MEMSETS 4000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Enqueues at least `us` microseconds of GPU work ahead of what follows (nothing when memsets are unavailable). */
static void queue_ahead(struct bench *bx, double us)
{
    if (!cu.memset_d32_async)
        return;
    if (!bx->queue_buf && cu.mem_alloc(&bx->queue_buf, QUEUE_BYTES) != 0) {
        bx->queue_buf = 0;
        return;
    }
    double per = (double)QUEUE_BYTES / QUEUE_MAX_BYTES_PER_US;
    int n = (int)(us / per) + 1;
    if (n > QUEUE_MAX_MEMSETS)
        n = QUEUE_MAX_MEMSETS;
    for (int i = 0; i < n; i++)
        if (cu.memset_d32_async(bx->queue_buf, 0u, QUEUE_BYTES / 4, NULL) != 0)
            return;
}

/* Cold L2: the timed runs cycle through copies of A and B (operand sets) that together hold at least ROTATE_BYTES,
 * three times the L2 of the GPUs kiln targets (50 MB on the H100 and H200), so that each run finds its operands in
 * HBM, not where the previous run left them in L2: a model's next call of a layer does not find its weights in L2
 * either. Without it a problem whose operands fit in L2 (an M = 64 GEMM's 30 MB of fp8 weights) is timed from L2 at
 * every run but the first, and the tuner prefers the kernels that read L2 fastest, not HBM. (Evicting L2 with a
 * memset instead leaves it full of dirty lines, whose write-back the next run then pays for: 5 us of 37 at
 * 1 x 8192 x 8192.) D and the scales are shared. */
#define ROTATE_BYTES ((size_t)150 << 20)
#define MAX_SETS 256

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

/* Device buffers of one size. */
struct buffers {
    CUdeviceptr a, b, d, sa, sb, gi, ws; /* gi: group_index of a grouped problem */
    CUdeviceptr rot;                      /* the other operand sets' copies of A and B (ROTATE_BYTES) */
};

static void free_buffers(struct buffers *buf)
{
    CUdeviceptr *all[8] = {&buf->a, &buf->b, &buf->d, &buf->sa, &buf->sb, &buf->gi, &buf->ws, &buf->rot};
    for (int i = 0; i < 8; i++)
        if (*all[i]) {
            cu.mem_free(*all[i]);
            *all[i] = 0;
        }
}

static void run_candidate(struct bench *bx, const kiln_problem *p, const kiln_args *sets, int nsets, const kiln_algo *algo,
                          struct buffers *buf, size_t ws_bytes, void *host_d, size_t d_count,
                          const struct samples *smp, double tol, struct row *r)
{
    const struct options *o = bx->o;
    size_t d_bytes = d_count * dtype_bytes(p->d_type);
    CUresult rc = cu.memset_d8(buf->d, 0xff, d_bytes); /* NaN in f32, f16 and bf16 */
    if (rc) {
        set_status(r, "cuMemsetD8: %s", cu_error(rc));
        return;
    }
    kiln_status st = kiln_run(bx->h, p, algo, &sets[0], (void *)(uintptr_t)buf->ws, ws_bytes, NULL);
    if (st != KILN_STATUS_SUCCESS) {
        set_status(r, "kiln_run: %s", kiln_status_string(st));
        return;
    }
    rc = cu.ctx_synchronize();
    if (rc) {
        set_status(r, "cuCtxSynchronize after kiln_run: %s (%d)", cu_error(rc), rc);
        bx->fatal = 1;
        return;
    }
    rc = cu.memcpy_dtoh(host_d, buf->d, d_bytes);
    if (rc) {
        set_status(r, "cuMemcpyDtoH: %s (%d)", cu_error(rc), rc);
        bx->fatal = 1;
        return;
    }

    int64_t nonfinite = check_output(p->d_type, host_d, d_count, smp, &r->rel_err);
    r->checked = 1;
    int ok = nonfinite == 0 && r->rel_err <= tol; /* NaN rel_err fails too */
    if (nonfinite)
        set_status(r, "check: %lld non-finite elements in D", (long long)nonfinite);
    else if (!ok)
        set_status(r, "check: rel_err above %.0e", tol);

    /* Timing: warmup (its host time per run measured), GPU work queued ahead (queue_ahead), then one event pair
     * around each run, each run on the next operand set (cold L2, ROTATE_BYTES); one synchronization at the end. */
    double t_host = now_us();
    for (int i = 0; i < o->warmup; i++) {
        st = kiln_run(bx->h, p, algo, &sets[i % nsets], (void *)(uintptr_t)buf->ws, ws_bytes, NULL);
        if (st != KILN_STATUS_SUCCESS) {
            set_status(r, "kiln_run (warmup): %s", kiln_status_string(st));
            return;
        }
    }
    double host_per_run = o->warmup > 0 ? (now_us() - t_host) / o->warmup : 50.0;
    queue_ahead(bx, 100.0 + 1.5 * (host_per_run + 5.0) * o->iters);
    int recorded = 0;
    for (; recorded < o->iters; recorded++) {
        if ((rc = cu.event_record(bx->ev[2 * recorded], NULL)) != 0) {
            set_status(r, "cuEventRecord: %s (%d)", cu_error(rc), rc);
            break;
        }
        st = kiln_run(bx->h, p, algo, &sets[(o->warmup + recorded) % nsets], (void *)(uintptr_t)buf->ws, ws_bytes,
                      NULL);
        if (st != KILN_STATUS_SUCCESS) {
            set_status(r, "kiln_run (timed): %s", kiln_status_string(st));
            break;
        }
        if ((rc = cu.event_record(bx->ev[2 * recorded + 1], NULL)) != 0) {
            set_status(r, "cuEventRecord: %s (%d)", cu_error(rc), rc);
            break;
        }
    }
    rc = cu.ctx_synchronize();
    if (rc) {
        set_status(r, "cuCtxSynchronize after timing: %s (%d)", cu_error(rc), rc);
        bx->fatal = 1;
        return;
    }
    if (recorded < o->iters)
        return;
    for (int i = 0; i < o->iters; i++) {
        rc = cu.event_elapsed_time(&bx->times[i], bx->ev[2 * i], bx->ev[2 * i + 1]);
        if (rc) {
            set_status(r, "cuEventElapsedTime: %s (%d)", cu_error(rc), rc);
            return;
        }
    }
    qsort(bx->times, (size_t)o->iters, sizeof *bx->times, cmp_float);
    int n = o->iters;
    r->ms = n % 2 ? bx->times[n / 2] : 0.5 * ((double)bx->times[n / 2 - 1] + bx->times[n / 2]);
    r->min_ms = bx->times[0];
    /* r->s is one group's size for a grouped problem: 2 * G * M * N * K */
    double flop = 2.0 * (double)r->s.m * (double)r->s.n * (double)r->s.k * (double)r->s.batch *
                  (double)(p->groups > 0 ? p->groups : 1);
    r->tflops = r->ms > 0 ? flop / r->ms / 1e9 : 0;
    r->timed = 1;
    r->pass = ok;
}

/* One row for a size that produced no candidate rows (setup or query failure); always a failure. */
PRINTF_LIKE(3, 4) static void size_failure(struct bench *bx, struct size4 s, const char *fmt, ...)
{
    struct row *r = new_row(&bx->rows, s);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->status, sizeof r->status, fmt, ap);
    va_end(ap);
    finish_row(bx, r);
}

/* What one size allocates; bench_size frees it whatever size_body returned from. */
struct size_work {
    uint8_t *host_a, *host_b, *host_packed;
    void *host_d;
    float *host_sa, *host_sb; /* the scales as uploaded */
    int32_t *host_gi;         /* group_index of a grouped problem */
    struct samples smp;
    struct buffers buf;
    kiln_algo *algos;
    int *ranks;
    const char **names;
    kiln_args *sets; /* the operand sets the timed runs cycle through (cold L2); sets[0] is args */
};

/* The operand sets of a size (ROTATE_BYTES): *sets[0] = *args, then copies of A and B uploaded into buf->rot, as many
 * as bring the sets' operands to ROTATE_BYTES (1 with --warm-l2 or operands of ROTATE_BYTES already; fewer, down to
 * 1, where the device has no room: said once). The count; 0 when the host allocation fails. */
static int operand_sets(struct bench *bx, const kiln_args *args, const void *host_a, size_t a_bytes,
                        const void *host_b, size_t b_bytes, struct buffers *buf, kiln_args **sets)
{
    size_t a_room = (a_bytes + 255) & ~(size_t)255, b_room = (b_bytes + 255) & ~(size_t)255, one = a_room + b_room;
    int want = 1;
    if (!bx->o->warm_l2 && a_bytes + b_bytes < ROTATE_BYTES)
        want = (int)(ROTATE_BYTES / one) + 1 > MAX_SETS ? MAX_SETS : (int)(ROTATE_BYTES / one) + 1;
    *sets = malloc((size_t)want * sizeof **sets);
    if (!*sets)
        return 0;
    (*sets)[0] = *args;
    int n = 1;
    if (want > 1 && cu.mem_alloc(&buf->rot, (size_t)(want - 1) * one) != 0)
        buf->rot = 0;
    for (; buf->rot && n < want; n++) {
        CUdeviceptr pa = buf->rot + (size_t)(n - 1) * one, pb = pa + a_room;
        if (cu.memcpy_htod(pa, host_a, a_bytes) != 0 || cu.memcpy_htod(pb, host_b, b_bytes) != 0)
            break;
        (*sets)[n] = *args;
        (*sets)[n].a = (const void *)(uintptr_t)pa;
        (*sets)[n].b = (const void *)(uintptr_t)pb;
    }
    if (n < want && !bx->rotate_failed) {
        bx->rotate_failed = 1;
        fprintf(stderr, "kiln_bench: no device memory for %d copies of A and B: L2 stays warm where they are missing\n",
                want - 1);
    }
    return n;
}

/* A size is one batch's m, n, k, or for a grouped problem (--groups G) one group's: M rows per group, N and K, with
 * G equal groups (contiguous: m = G*M, group_index the ends M, 2M, ...; masked: G batches of M rows, every count
 * M; k-grouped: k = G*K, group_index the ends K, 2K, ...). Every group's B, and every group's rows of A (masked:
 * every batch; k-grouped: every group's K columns), hold the same values, so that the dense reference of one group
 * holds for each group's output, and samples are drawn from all of them. */
static void size_body(struct bench *bx, struct size4 s, struct size_work *w)
{
    const struct options *o = bx->o;
    int grouped = o->groups > 0, k_grouped = o->group_mode == KILN_GROUP_K;
    int64_t groups = grouped ? o->groups : 1;
    kiln_problem p;
    kiln_status st = kiln_problem_init(&p, o->a, o->b, o->d, o->layout,
                                       o->group_mode == KILN_GROUP_CONTIGUOUS ? groups * s.m : s.m, s.n,
                                       k_grouped ? groups * s.k : s.k);
    if (st != KILN_STATUS_SUCCESS) {
        size_failure(bx, s, "kiln_problem_init: %s", kiln_status_string(st));
        return;
    }
    p.batch = s.batch;
    p.fast_accum = o->fast_accum;
    if (grouped) {
        p.group_mode = o->group_mode;
        p.groups = groups;
    }
    /* scale sets: masked A has one matrix per group, contiguous and masked B one per group */
    int64_t a_sets = o->group_mode == KILN_GROUP_MASKED ? groups : 1;
    int64_t b_sets = grouped && !k_grouped ? groups : 1;
    int fp8_kind = is_fp8(o->a) && is_fp8(o->b), mixed = is_half(o->a) && is_fp8(o->b);
    float sa = 0.5f, sb = 2.0f;
    /* Block and row scales hold one value each, so the reference is the tensor-scaled one. */
    size_t sa_count = 1, sb_count = 1;
    if (fp8_kind && o->block_scales) {
        p.scale_a = p.scale_b = KILN_SCALE_BLOCK;
        /* kiln's quantizers' layouts (kiln.quantize_per_token_group / quantize_per_block) of each matrix: scale_a
         * [kgroups][m4], scale_b [n / 128][kgroups4], m4 and kgroups4 rounded up to 4 floats (16-byte strides: the
         * copy engine's); grouped: one scale_b per group's B and (masked) one scale_a per group's A, back to back */
        int64_t kgroups = (p.k + KILN_SCALE_GROUP - 1) / KILN_SCALE_GROUP;
        int64_t blocks_n = (p.n + KILN_SCALE_GROUP - 1) / KILN_SCALE_GROUP;
        p.scale_a_stride_k = (p.m + 3) / 4 * 4;
        p.scale_b_stride_n = (kgroups + 3) / 4 * 4;
        if (grouped) {
            p.scale_a_stride_g = a_sets > 1 ? p.scale_a_stride_k * kgroups : 0;
            p.scale_b_stride_g = b_sets > 1 ? blocks_n * p.scale_b_stride_n : 0;
        }
        sa_count = (size_t)(p.scale_a_stride_k * kgroups * a_sets);
        sb_count = (size_t)((blocks_n * b_sets + 1) * p.scale_b_stride_n);
    } else if (fp8_kind && o->row_scales) {
        /* scale_a per row of A (masked and k-grouped: [groups][m]), scale_b per column of B (grouped: [groups][n]);
         * packed group strides */
        p.scale_a = p.scale_b = KILN_SCALE_VECTOR;
        sa_count = (size_t)(p.m * (grouped ? (o->group_mode == KILN_GROUP_CONTIGUOUS ? 1 : groups) : s.batch));
        sb_count = (size_t)(p.n * (grouped ? groups : s.batch));
    } else if (fp8_kind)
        p.scale_a = p.scale_b = KILN_SCALE_TENSOR;
    else if (mixed)
        p.scale_b = KILN_SCALE_TENSOR;
    double scale = (fp8_kind ? (double)sa * sb : mixed ? (double)sb : 1.0) * 1.0 /* alpha */;
    double tol = is_fp8(o->a) || is_fp8(o->b) ? 1e-2 : 2e-3;
    if ((st = kiln_check_problem(bx->h, &p)) != KILN_STATUS_SUCCESS) {
        size_failure(bx, s, "kiln_check_problem: %s", kiln_status_string(st));
        return;
    }

    /* Host buffers hold at most batch * groups * max(m, n, k)^2 elements: refuse what no host could allocate. */
    int64_t longest = s.m > s.n ? s.m : s.n;
    longest = longest > s.k ? longest : s.k;
    if ((double)s.batch * (double)groups * (double)longest * (double)longest > (double)(SIZE_MAX / 8)) {
        size_failure(bx, s, "size too large for host buffers");
        return;
    }

    /* Host inputs, as the device holds them. B is kept unpacked ([batch][n][k] for TN, [batch][k][n] for NN) for the
     * reference. Grouped: A [groups * m][k] (masked: [groups][m][k]) or [m][groups * k] (k-grouped), B [groups][n][k]
     * or [n][groups * k] (k-grouped), each group's part a copy of the first (fill_copies). */
    size_t ea = dtype_bytes(o->a), eb = dtype_bytes(o->b);
    size_t a_count = (size_t)(s.batch * groups * s.m * s.k), b_count = (size_t)(s.batch * groups * s.n * s.k);
    size_t d_count = (size_t)(s.batch * groups * s.m * s.n);
    size_t packed_bytes = 0; /* one batch */
    int64_t ldb_packed = 0;
    if (p.b_prepacked && (st = kiln_prepack_b_size(s.n, s.k, &packed_bytes, &ldb_packed)) != KILN_STATUS_SUCCESS) {
        size_failure(bx, s, "kiln_prepack_b_size: %s", kiln_status_string(st));
        return;
    }
    uint8_t *host_a = w->host_a = malloc(a_count * ea), *host_b = w->host_b = malloc(b_count * eb);
    uint8_t *host_packed = w->host_packed = p.b_prepacked ? malloc((size_t)s.batch * packed_bytes) : NULL;
    void *host_d = w->host_d = malloc(d_count * dtype_bytes(o->d));
    float *host_sa = w->host_sa = malloc(sa_count * sizeof *host_sa), *host_sb = w->host_sb = malloc(sb_count * sizeof *host_sb);
    int32_t *host_gi = w->host_gi = grouped ? malloc((size_t)groups * sizeof *host_gi) : NULL;
    for (size_t i = 0; host_sa && i < sa_count; i++)
        host_sa[i] = sa;
    for (size_t i = 0; host_sb && i < sb_count; i++)
        host_sb[i] = sb;
    for (int64_t g = 0; host_gi && g < groups; g++)
        host_gi[g] = (int32_t)(o->group_mode == KILN_GROUP_MASKED ? s.m : (g + 1) * (k_grouped ? s.k : s.m));
    struct samples *smp = &w->smp;
    int total_ok = s.batch * groups * s.m * s.n <= o->samples; /* fits: bounded above */
    smp->count = total_ok ? (int)(s.batch * groups * s.m * s.n) : o->samples;
    smp->index = malloc((size_t)smp->count * sizeof *smp->index);
    smp->ref = malloc((size_t)smp->count * sizeof *smp->ref);
    struct buffers *buf = &w->buf;
    if (!host_a || !host_b || !host_d || !host_sa || !host_sb || !smp->index || !smp->ref ||
        (p.b_prepacked && !host_packed) || (grouped && !host_gi)) {
        size_failure(bx, s, "host allocation failed");
        return;
    }
    uint64_t state = 0x6b696c6e62656e63ull ^ ((uint64_t)s.m * 0x100000001b3ull) ^ ((uint64_t)s.n << 21) ^
                     ((uint64_t)s.k << 42) ^ ((uint64_t)s.batch * 0x9e3779b97f4a7c15ull);
    /* runs of one group's values, each repeated per group: k-grouped rows of K, else whole matrices */
    size_t a_runs = k_grouped ? (size_t)s.m : 1, b_runs = k_grouped ? (size_t)s.n : 1;
    fill_copies(o->a, bx->lut_a, host_a, a_runs, a_count / a_runs / (size_t)groups, (size_t)groups, &state);
    fill_copies(o->b, bx->lut_b, host_b, b_runs, b_count / b_runs / (size_t)groups, (size_t)groups, &state);
    if (p.b_prepacked) {
        if (p.ldb != ldb_packed) {
            size_failure(bx, s, "kiln_problem_init ldb %lld != kiln_prepack_b_size ld %lld", (long long)p.ldb,
                         (long long)ldb_packed);
            return;
        }
        for (int64_t bb = 0; bb < s.batch; bb++) {
            st = kiln_prepack_b(host_b + (size_t)(bb * s.n * s.k), KILN_LAYOUT_TN, s.n, s.k, s.k,
                                host_packed + (size_t)bb * packed_bytes, packed_bytes);
            if (st != KILN_STATUS_SUCCESS) {
                size_failure(bx, s, "kiln_prepack_b: %s", kiln_status_string(st));
                return;
            }
        }
    }

    /* Reference at the sampled positions (every position when there are few); grouped: the groups as batches, each
     * reading the first group's inputs, D's groups m * n apart (contiguous: the next group's rows). */
    int64_t ld_in = k_grouped ? groups * s.k : s.k;
    struct host_inputs in = {s, o->layout, host_a, host_b, ea, eb, bx->lut_a, bx->lut_b, ld_in,
                             o->layout == KILN_LAYOUT_TN ? ld_in : s.n, grouped ? 0 : s.m * s.k,
                             grouped ? 0 : s.n * s.k};
    in.s.batch = s.batch * groups;
    reference_samples(&in, grouped ? s.m * p.ldd : p.stride_d, p.ldd, scale, total_ok, &state, smp);

    /* Device buffers. */
    CUresult rc;
    struct {
        CUdeviceptr *ptr;
        const void *host;
        size_t bytes;
        const char *what;
    } uploads[6] = {
        {&buf->a, host_a, a_count * ea, "A"},
        {&buf->b, p.b_prepacked ? (const void *)host_packed : host_b,
         p.b_prepacked ? (size_t)s.batch * packed_bytes : b_count * eb, "B"},
        {&buf->d, NULL, d_count * dtype_bytes(o->d), "D"},
        {&buf->sa, host_sa, sa_count * sizeof sa, "scale_a"},
        {&buf->sb, host_sb, sb_count * sizeof sb, "scale_b"},
        {&buf->gi, host_gi, (size_t)groups * sizeof *host_gi, "group_index"},
    };
    for (int i = 0; i < (grouped ? 6 : 5); i++) {
        *uploads[i].ptr = device_upload(uploads[i].host, uploads[i].bytes, &rc);
        if (!*uploads[i].ptr) {
            size_failure(bx, s, "device buffer %s (%zu bytes): %s (%d)", uploads[i].what, uploads[i].bytes,
                         cu_error(rc), rc);
            return;
        }
    }
    kiln_args args;
    memset(&args, 0, sizeof args);
    args.a = (const void *)(uintptr_t)buf->a;
    args.b = (const void *)(uintptr_t)buf->b;
    args.d = (void *)(uintptr_t)buf->d;
    if (fp8_kind)
        args.scale_a = (const float *)(uintptr_t)buf->sa;
    if (fp8_kind || mixed)
        args.scale_b = (const float *)(uintptr_t)buf->sb;
    args.alpha = 1.0f;
    args.beta = 0.0f;
    if (grouped)
        args.group_index = (const int32_t *)(uintptr_t)buf->gi;
    int nsets = operand_sets(bx, &args, uploads[0].host, uploads[0].bytes, uploads[1].host, uploads[1].bytes, buf,
                             &w->sets);
    if (nsets < 1) {
        size_failure(bx, s, "host allocation failed");
        return;
    }

    /* Candidates, in kiln's order. */
    kiln_algo *algos = w->algos = malloc(MAX_CANDIDATES * sizeof *algos);
    int *ranks = w->ranks = malloc((size_t)(MAX_CANDIDATES > o->nnames ? MAX_CANDIDATES : o->nnames) * sizeof *ranks);
    if (!algos || !ranks) {
        size_failure(bx, s, "host allocation failed");
        return;
    }
    int got = 0;
    st = kiln_query(bx->h, &p, &args, algos, MAX_CANDIDATES, &got);
    if (st != KILN_STATUS_SUCCESS || got < 1) {
        size_failure(bx, s, "kiln_query: %s", st != KILN_STATUS_SUCCESS ? kiln_status_string(st) : "no candidate");
        return;
    }
    const char **names = w->names = malloc((size_t)got * sizeof *names);
    if (!names) {
        size_failure(bx, s, "host allocation failed");
        return;
    }
    for (int i = 0; i < got; i++) {
        names[i] = "?";
        if (kiln_algo_name(bx->h, &algos[i], &names[i]) != KILN_STATUS_SUCCESS || !names[i])
            names[i] = "?";
    }
    int nrun = 0;
    if (o->solutions == SOL_ALL)
        for (int i = 0; i < got; i++)
            ranks[nrun++] = i;
    else if (o->solutions == SOL_TOP1)
        ranks[nrun++] = 0;
    else
        for (int j = 0; j < o->nnames; j++) {
            int found = -1;
            for (int i = 0; i < got && found < 0; i++)
                if (!strcmp(names[i], o->names[j]))
                    found = i;
            ranks[nrun++] = found; /* -1: not offered for this size */
        }
    uint64_t ws_max = 0;
    for (int i = 0; i < nrun; i++)
        if (ranks[i] >= 0 && algos[ranks[i]].workspace_bytes > ws_max)
            ws_max = algos[ranks[i]].workspace_bytes;
    if (ws_max && (rc = cu.mem_alloc(&buf->ws, (size_t)ws_max)) != 0) {
        size_failure(bx, s, "workspace (%llu bytes): %s (%d)", (unsigned long long)ws_max, cu_error(rc), rc);
        return;
    }

    int best = -1; /* row index of the fastest passing candidate */
    double rank0_tflops = -1;
    for (int i = 0; i < nrun; i++) {
        struct row *r = new_row(&bx->rows, s);
        if (ranks[i] < 0) {
            r->name = o->names[i];
            r->pass = -1;
            set_status(r, "skipped: not offered for this size");
        } else if (bx->fatal) {
            r->rank = ranks[i];
            r->name = names[ranks[i]];
            set_status(r, "not run: the CUDA context failed earlier");
        } else {
            r->rank = ranks[i];
            r->name = names[ranks[i]];
            run_candidate(bx, &p, w->sets, nsets, &algos[ranks[i]], buf, (size_t)ws_max, host_d, d_count, smp, tol,
                          r);
            if (r->pass > 0 && (best < 0 || r->tflops > bx->rows.v[best].tflops))
                best = bx->rows.n - 1;
            if (r->rank == 0 && r->timed)
                rank0_tflops = r->tflops;
        }
        finish_row(bx, r);
    }
    if (!o->quiet && best >= 0 && nrun > 1) {
        const struct row *b = &bx->rows.v[best];
        printf("  best: rank %d, %.2f TFLOP/s, %s", b->rank, b->tflops, b->name);
        if (rank0_tflops > 0 && b->tflops > 0)
            printf(" (kiln's pick, rank 0: %.1f%% of it)", 100.0 * rank0_tflops / b->tflops);
        putchar('\n');
    }
}

static void bench_size(struct bench *bx, struct size4 s)
{
    struct size_work w;
    memset(&w, 0, sizeof w);
    size_body(bx, s, &w);
    free_buffers(&w.buf);
    free(w.algos), free(w.ranks), free((void *)w.names), free(w.sets);
    free(w.host_a), free(w.host_b), free(w.host_packed), free(w.host_d), free(w.host_sa), free(w.host_sb);
    free(w.host_gi);
    free(w.smp.index), free(w.smp.ref);
}

int main(int argc, char **argv)
{
    struct options o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    if (!(is_fp8(o.a) || is_half(o.a)) || !(is_fp8(o.b) || is_half(o.b)))
        return die("A and B must be fp8, f16 or bf16 (got %s x %s)", kiln_dtype_name(o.a), kiln_dtype_name(o.b));

    /* The device: primary context current before kiln_create, so that the handle binds to it. */
    const char *missing = load_driver();
    if (missing)
        return die("CUDA driver API not usable: %s", missing);
    CUresult cr = cu.init(0);
    if (cr)
        return die("cuInit: %s (%d): no usable NVIDIA GPU", cu_error(cr), cr);
    int count = 0;
    if ((cr = cu.device_get_count(&count)) != 0 || count < 1)
        return die("no CUDA device visible");
    if (o.device >= count)
        return die("--device %d: only %d device(s) visible", o.device, count);
    CUdevice dev;
    CUcontext ctx = NULL;
    char device_name[256] = "?";
    if ((cr = cu.device_get(&dev, o.device)) != 0)
        return die("cuDeviceGet(%d): %s (%d)", o.device, cu_error(cr), cr);
    cu.device_get_name(device_name, (int)sizeof device_name, dev);
    if ((cr = cu.primary_ctx_retain(&ctx, dev)) != 0)
        return die("cuDevicePrimaryCtxRetain: %s (%d)", cu_error(cr), cr);
    if ((cr = cu.ctx_set_current(ctx)) != 0)
        return die("cuCtxSetCurrent: %s (%d)", cu_error(cr), cr);

    struct bench bx;
    memset(&bx, 0, sizeof bx);
    bx.o = &o;
    kiln_status st = kiln_create(&bx.h);
    if (st != KILN_STATUS_SUCCESS)
        return die("kiln_create: %s", kiln_status_string(st));
    const char *arch = "none";
    if ((st = kiln_device_arch(bx.h, &arch)) != KILN_STATUS_SUCCESS || !arch || !strcmp(arch, "none"))
        return die("kiln found no device (kiln_device_arch: %s)", arch ? arch : kiln_status_string(st));

    /* The type combination, once, with a small problem: an unsupported one is a usage error. */
    kiln_problem probe;
    st = kiln_problem_init(&probe, o.a, o.b, o.d, o.layout, 64, 64, 64);
    if (st == KILN_STATUS_SUCCESS) {
        if (is_fp8(o.a) && is_fp8(o.b))
            probe.scale_a = probe.scale_b =
                o.block_scales ? KILN_SCALE_BLOCK : o.row_scales ? KILN_SCALE_VECTOR : KILN_SCALE_TENSOR;
        else if (is_fp8(o.b))
            probe.scale_b = KILN_SCALE_TENSOR;
        if (o.groups) {
            probe.group_mode = o.group_mode;
            probe.groups = o.groups;
        }
        st = kiln_check_problem(bx.h, &probe);
    }
    if (st != KILN_STATUS_SUCCESS)
        return die("kiln does not take a=%s b=%s d=%s layout %s%s%s: %s%s", kiln_dtype_name(o.a),
                   kiln_dtype_name(o.b), kiln_dtype_name(o.d), layout_name(o.layout),
                   o.groups ? ", grouped " : "", o.groups ? group_mode_name(o.group_mode) : "",
                   kiln_status_string(st),
                   is_half(o.a) && is_fp8(o.b) ? " (f16/bf16 x fp8 takes a prepacked B: layout TN)" : "");

    bx.lut_a = make_lut(o.a);
    bx.lut_b = make_lut(o.b);
    bx.ev = calloc((size_t)2 * (size_t)o.iters, sizeof *bx.ev);
    bx.times = malloc((size_t)o.iters * sizeof *bx.times);
    if (!bx.lut_a || !bx.lut_b || !bx.ev || !bx.times)
        return die("out of memory");
    for (int i = 0; i < 2 * o.iters; i++)
        if ((cr = cu.event_create(&bx.ev[i], 0)) != 0)
            return die("cuEventCreate: %s (%d)", cu_error(cr), cr);

    FILE *json = NULL;
    if (o.csv_path && !(bx.csv = fopen(o.csv_path, "w")))
        return die("cannot write --csv %s: %s", o.csv_path, strerror(errno));
    if (o.json_path && !(json = fopen(o.json_path, "w")))
        return die("cannot write --json %s: %s", o.json_path, strerror(errno));
    if (bx.csv)
        csv_header(bx.csv);

    if (!o.quiet) {
        printf("kiln_bench: %s (%s), %s x %s -> %s, layout %s, %d size(s), warmup %d, iters %d, samples %d, "
               "L2 %s\n", device_name, arch, kiln_dtype_name(o.a), kiln_dtype_name(o.b), kiln_dtype_name(o.d),
               layout_name(o.layout), o.nsizes, o.warmup, o.iters, o.samples, o.warm_l2 ? "warm" : "cold");
        if (o.groups)
            printf("kiln_bench: %d groups, %s; sizes are one group's (M rows per group, N, K)\n", o.groups,
                   group_mode_name(o.group_mode));
        print_table_header();
    }
    for (int i = 0; i < o.nsizes && !bx.fatal; i++)
        bench_size(&bx, o.sizes[i]);
    if (bx.fatal)
        fprintf(stderr, "kiln_bench: the CUDA context failed (see the status column); stopped\n");

    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < bx.rows.n; i++)
        bx.rows.v[i].pass > 0 ? passed++ : bx.rows.v[i].pass == 0 ? failed++ : skipped++;
    printf("kiln_bench: %d passed, %d failed, %d skipped%s\n", passed, failed, skipped,
           bx.fatal ? " (stopped early after a CUDA error)" : "");

    int exit_code = bx.failed || bx.fatal ? 1 : 0;
    if (bx.csv && fclose(bx.csv) != 0)
        exit_code = die("error writing --csv %s", o.csv_path);
    if (json) {
        int bad = write_json(json, &o, device_name, arch, o.warm_l2 ? "warm" : bx.rotate_failed ? "partly warm" : "cold",
                             &bx.rows);
        if (fclose(json) != 0 || bad)
            exit_code = die("error writing --json %s", o.json_path);
    }

    if (cu.event_destroy)
        for (int i = 0; i < 2 * o.iters; i++)
            cu.event_destroy(bx.ev[i]);
    if (bx.queue_buf)
        cu.mem_free(bx.queue_buf);
    kiln_destroy(bx.h);
    if (cu.primary_ctx_release)
        cu.primary_ctx_release(dev);
    free(bx.ev), free(bx.times), free(bx.lut_a), free(bx.lut_b), free(bx.rows.v);
    options_free(&o);
    return exit_code;
}
