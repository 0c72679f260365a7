/* Selection over the dispatch tables (see select.h for the ranking rules). */
#include "select.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kiln_abi.h"

/* ---- explanation text: appends to a caller buffer, silently truncating ---- */

typedef struct text {
    char *buf;
    size_t len, pos;
} text;

static void text_init(text *t, char *buf, size_t len)
{
    t->buf = len ? buf : NULL;
    t->len = len;
    t->pos = 0;
    if (t->buf)
        t->buf[0] = '\0';
}

KILN_FORMAT(2, 3) static void textf(text *t, const char *fmt, ...)
{
    if (!t->buf || t->pos + 1 >= t->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->pos, t->len - t->pos, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    t->pos = (size_t)n >= t->len - t->pos ? t->len - 1 : t->pos + (size_t)n;
}

/* ---- predicates ---- */

static const char *const REJECT_NAMES[KILN_REJECT_COUNT] = {
    [KILN_FITS] = "fits",
    [KILN_REJECT_PROBLEM] = "problem",
    [KILN_REJECT_ALIGN_A] = "align_a",
    [KILN_REJECT_ALIGN_B] = "align_b",
    [KILN_REJECT_K_MULTIPLE] = "k_multiple",
    [KILN_REJECT_EMPTY_K] = "empty_k",
    [KILN_REJECT_LDS] = "lds",
    [KILN_REJECT_GSU] = "gsu",
    [KILN_REJECT_SIZE] = "size",
    [KILN_REJECT_NO_CODE] = "code",
    [KILN_REJECT_ACCUM] = "accum",
};

const char *kiln_reject_name(kiln_reject r)
{
    return (unsigned)r < (unsigned)KILN_REJECT_COUNT ? REJECT_NAMES[r] : "invalid";
}

kiln_reject kiln_reject_because(char *why, size_t len, kiln_reject r, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return r;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* a * b for non-negative operands; 0 on overflow of uint64. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
    if (a != 0 && b > UINT64_MAX / a)
        return 0;
    *r = a * b;
    return 1;
}

/* ---- names of the table enums ---- */

static const char *const ARCH_NAMES[KILN_ARCH_COUNT] = {
    [KILN_ARCH_UNKNOWN] = "unknown", [KILN_ARCH_SM90] = "sm90",       [KILN_ARCH_SM89] = "sm89",
    [KILN_ARCH_SM80] = "sm80",       [KILN_ARCH_GFX942] = "gfx942",   [KILN_ARCH_GFX90A] = "gfx90a",
    [KILN_ARCH_GFX1151] = "gfx1151", [KILN_ARCH_GFX1201] = "gfx1201",
};
static const char *const FAMILY_NAMES[KILN_FAMILY_COUNT] = {
    [KILN_FAMILY_MMA] = "mma", [KILN_FAMILY_MFMA] = "mfma", [KILN_FAMILY_WMMA] = "wmma", [KILN_FAMILY_WGMMA] = "wgmma",
};
static const char *const LAUNCH_NAMES[KILN_LAUNCH_COUNT] = {[KILN_LAUNCH_PLAIN] = "plain", [KILN_LAUNCH_TMA] = "tma"};
static const char *const KIND_NAMES[KILN_KIND_COUNT] = {
    [KILN_KIND_NONE] = "none", [KILN_KIND_FP8_SCALED] = "fp8_scaled", [KILN_KIND_MIXED_W8] = "mixed_w8",
    [KILN_KIND_GEMM] = "gemm", [KILN_KIND_FP8_BLOCK] = "fp8_block_scaled", [KILN_KIND_FP8_GROUPED] = "fp8_grouped",
    [KILN_KIND_FP8_BLOCK_GROUPED] = "fp8_block_grouped",
};

static const char *enum_name(const char *const *names, int count, int v)
{
    return v >= 0 && v < count && names[v] ? names[v] : "?";
}

const char *kiln_arch_name(kiln_arch_id arch) { return enum_name(ARCH_NAMES, KILN_ARCH_COUNT, (int)arch); }
const char *kiln_family_name(kiln_family_id f) { return enum_name(FAMILY_NAMES, KILN_FAMILY_COUNT, (int)f); }
const char *kiln_launch_name(kiln_launch_kind l) { return enum_name(LAUNCH_NAMES, KILN_LAUNCH_COUNT, (int)l); }
const char *kiln_kind_name(kiln_kind kind) { return enum_name(KIND_NAMES, KILN_KIND_COUNT, (int)kind); }

kiln_arch_id kiln_arch_from_name(const char *name)
{
    for (int i = KILN_ARCH_UNKNOWN + 1; name && i < KILN_ARCH_COUNT; i++)
        if (strcmp(ARCH_NAMES[i], name) == 0)
            return (kiln_arch_id)i;
    return KILN_ARCH_UNKNOWN;
}

int kiln_solution_wgmma(const kiln_solution *s) { return s->launch == KILN_LAUNCH_TMA; }

int kiln_solution_cluster_split(const kiln_solution *s) { return kiln_solution_wgmma(s) && s->multicast == 3; }

int kiln_solution_reduces(const kiln_solution *s) { return s->gsu > 1 && !kiln_solution_cluster_split(s); }

void kiln_solution_geometry(const kiln_solution *s, const kiln_problem *p, kiln_geometry *g)
{
    int64_t kb = p->b_prepacked ? p->ldb : p->k;
    g->tiles_m = ceil_div(p->m, s->mt0);
    g->tiles_n = ceil_div(p->n, s->mt1);
    g->k_tiles = ceil_div(kb, s->depth_u);
    g->k_tiles_per_split = ceil_div(g->k_tiles, s->gsu);
    g->grid_x = g->tiles_m * g->tiles_n; /* m, n <= INT32_MAX: fits */
    g->grid_z = p->batch * s->gsu;       /* batch <= KILN_DEFAULT_MAX_GRID_Z: fits */
    if (p->group_mode != KILN_GROUP_NONE) {
        /* Grouped, every launch kind (gsu 1): a bound on the groups' tiles on grid x, whose sizes only the device
         * knows (a contiguous group adds at most one partial tile row; a masked one has at most tiles_m). The
         * kernels walk the groups' tiles (persistent wgmma CTAs in turn, an mfma workgroup its own) and stop past
         * the last (saturating: the size predicate then rejects it). */
        int64_t rows = p->groups; /* masked; k-grouped: exactly tiles_m * tiles_n per group */
        if (p->group_mode == KILN_GROUP_CONTIGUOUS) {
            rows = 1;
            g->grid_x = (g->tiles_m + p->groups) * g->tiles_n; /* each factor <= 2^32: fits */
        }
        g->grid_x = rows <= INT64_MAX / g->grid_x ? g->grid_x * rows : INT64_MAX;
        g->grid_z = 1;
    } else if (kiln_solution_wgmma(s)) {
        /* Every tile of every batch and split on grid x (saturating: the size predicate then rejects it); with
         * multicast, every pair of tiles (the last tile of an odd row or column count pairs with one past the
         * edge, which stores nothing). */
        if (s->multicast == 1)
            g->grid_x = ceil_div(g->tiles_m, 2) * g->tiles_n;
        else if (s->multicast == 2)
            g->grid_x = g->tiles_m * ceil_div(g->tiles_n, 2);
        /* split-K in a cluster: grid x counts clusters, one tile each (the launch multiplies by the cluster) */
        if (kiln_solution_cluster_split(s))
            g->grid_z = p->batch;
        g->grid_x = g->grid_z <= INT64_MAX / g->grid_x ? g->grid_x * g->grid_z : INT64_MAX;
        g->grid_z = 1;
    }
    g->cluster = kiln_solution_cluster_split(s) ? s->gsu : kiln_solution_wgmma(s) && s->multicast ? 2 : 1;
    g->reduce_grid_x = 0;
    g->workspace_bytes = 0;
    if (kiln_solution_reduces(s)) {
        uint64_t w = (uint64_t)s->gsu;
        g->reduce_grid_x = ceil_div(p->m * p->n, KILN_REDUCE_THREADS);
        if (!mul_u64(w, (uint64_t)p->batch, &w) || !mul_u64(w, (uint64_t)p->m, &w) ||
            !mul_u64(w, (uint64_t)p->n, &w) || !mul_u64(w, sizeof(float), &w))
            w = UINT64_MAX;
        g->workspace_bytes = w;
    }
}

/* Whether ld, the batch stride (batched problems only) and the pointer (when known) are multiples of `align`
 * elements of `elem` bytes. */
static kiln_reject operand_fits(char op, kiln_reject r, int align, int64_t ld, int64_t stride, int batched,
                                const void *ptr, size_t elem, char *why, size_t len)
{
    if (ld % align)
        return kiln_reject_because(why, len, r, "ld%c=%" PRId64 " is not a multiple of align_%c=%d", op, ld, op, align);
    if (batched && stride % align)
        return kiln_reject_because(why, len, r, "stride_%c=%" PRId64 " is not a multiple of align_%c=%d", op, stride, op, align);
    if (ptr && (uintptr_t)ptr % ((uintptr_t)align * elem))
        return kiln_reject_because(why, len, r, "%c pointer %p is not %zu-byte aligned (align_%c=%d)", op == 'a' ? 'A' : 'B', ptr,
                      (size_t)align * elem, op, align);
    return KILN_FITS;
}

kiln_reject kiln_solution_fits(const kiln_solution *s, const kiln_select_input *in, char *why, size_t why_len)
{
    const kiln_problem *p = in->problem;
    if (s->mt0 < 1 || s->mt1 < 1 || s->depth_u < 1 || s->gsu < 1 || s->align_a < 1 || s->align_b < 1 ||
        s->k_multiple < 1 || s->threads < 1 || s->lds_bytes < 0 || s->multicast < 0 || s->multicast > 3 ||
        (s->multicast == 3 && (s->gsu < 2 || s->gsu > 8 || s->persistent)))
        return kiln_reject_because(why, why_len, KILN_REJECT_PROBLEM, "malformed table entry (a size or factor out of range)");
    kiln_arch_id arch = kiln_arch_from_name(in->arch);
    if (s->arch != arch || arch == KILN_ARCH_UNKNOWN || s->a_type != p->a_type || s->b_type != p->b_type ||
        s->d_type != p->d_type || s->layout != p->layout || s->b_prepacked != p->b_prepacked ||
        s->kind != kiln_problem_kind_of(p))
        return kiln_reject_because(why, why_len, KILN_REJECT_PROBLEM, "built for %s %s %s x %s -> %s %s b_prepacked=%d",
                      kiln_arch_name(s->arch), kiln_kind_name(s->kind),
                      kiln_dtype_name(s->a_type), kiln_dtype_name(s->b_type), kiln_dtype_name(s->d_type),
                      s->layout == KILN_LAYOUT_TN ? "TN" : "NN", s->b_prepacked);
    if (!(in->skip & ((1u << KILN_REJECT_ALIGN_A) | (1u << KILN_REJECT_ALIGN_B)))) {
        int batched = p->batch > 1;
        kiln_reject r = operand_fits('a', KILN_REJECT_ALIGN_A, s->align_a, p->lda, p->stride_a, batched,
                                     in->args ? in->args->a : NULL, kiln_dtype_bytes(p->a_type), why, why_len);
        if (r == KILN_FITS)
            r = operand_fits('b', KILN_REJECT_ALIGN_B, s->align_b, p->ldb, p->stride_b, batched,
                             in->args ? in->args->b : NULL, kiln_dtype_bytes(p->b_type), why, why_len);
        if (r != KILN_FITS)
            return r;
    }
    if (p->scale_b == KILN_SCALE_BLOCK && s->kind == KILN_KIND_MIXED_W8 &&
        (!kiln_solution_wgmma(s) || s->depth_u != KILN_SCALE_GROUP))
        return kiln_reject_because(why, why_len, KILN_REJECT_PROBLEM,
                      "per-group weight scales (scale_b KILN_SCALE_BLOCK) run in the sm90 wgmma kernels with DepthU %d "
                      "only (this is %s, DepthU %d)", KILN_SCALE_GROUP, kiln_family_name(s->family), s->depth_u);
    if (p->k % s->k_multiple)
        return kiln_reject_because(why, why_len, KILN_REJECT_K_MULTIPLE, "k=%" PRId64 " is not a multiple of %d", p->k,
                      s->k_multiple);
    if (p->k == 0 && kiln_solution_wgmma(s))
        return kiln_reject_because(why, why_len, KILN_REJECT_EMPTY_K, "k=0: a TMA-fed kernel needs at least one K tile");
    if (in->max_lds_bytes > 0 && s->lds_bytes > in->max_lds_bytes)
        return kiln_reject_because(why, why_len, KILN_REJECT_LDS, "needs %d bytes of LDS, the device has %" PRId64, s->lds_bytes,
                      in->max_lds_bytes);
    kiln_geometry g;
    kiln_solution_geometry(s, p, &g);
    if (s->fast_accum && !p->fast_accum && g.k_tiles_per_split > 1)
        return kiln_reject_because(why, why_len, KILN_REJECT_ACCUM,
                      "sums %" PRId64 " DepthU tiles of K in wgmma's fp8 accumulator (fast accumulation); fast_accum is 0",
                      g.k_tiles_per_split);
    if (s->gsu > 1 && (s->gsu - 1) * g.k_tiles_per_split >= g.k_tiles)
        return kiln_reject_because(why, why_len, KILN_REJECT_GSU, "%" PRId64 " DepthU tiles of K leave a split of gsu=%d empty",
                      g.k_tiles, s->gsu);
    int64_t max_x = in->max_grid_x > 0 ? in->max_grid_x : KILN_DEFAULT_MAX_GRID_X;
    int64_t max_z = in->max_grid_z > 0 ? in->max_grid_z : KILN_DEFAULT_MAX_GRID_Z;
    if (!(in->skip & (1u << KILN_REJECT_SIZE))) {
        /* Launch dimensions are uint32 whatever the device reports; num_tiles and k_tiles_per_split are int32. */
        if (max_x > UINT32_MAX)
            max_x = UINT32_MAX;
        if (max_z > UINT32_MAX)
            max_z = UINT32_MAX;
        if (g.grid_x > max_x / g.cluster || g.reduce_grid_x > max_x || g.grid_z > max_z ||
            (kiln_solution_reduces(s) && p->batch > max_z) ||
            g.k_tiles_per_split > INT32_MAX ||
            ((kiln_solution_wgmma(s) || p->group_mode != KILN_GROUP_NONE) &&
             g.grid_x > INT32_MAX)) /* kiln_tma_params.num_tiles; the grouped walk's tile index (int) */
            return kiln_reject_because(why, why_len, KILN_REJECT_SIZE,
                          "grid %" PRId64 " x 1 x %" PRId64 " exceeds the device limits", g.grid_x, g.grid_z);
        if (g.workspace_bytes > (uint64_t)INT64_MAX)
            return kiln_reject_because(why, why_len, KILN_REJECT_SIZE, "split-K workspace size overflows");
    }
    if (kiln_solution_wgmma(s)) {
        kiln_tma_map maps[2];
        kiln_reject r = kiln_tma_maps(s, p, in->args, maps, why, why_len);
        int skipped = r != KILN_FITS && (in->skip & (1u << r));
        if (r != KILN_FITS && !skipped)
            return r;
    }
    if (in->code && !(in->skip & (1u << KILN_REJECT_NO_CODE)) && !kiln_find_code_object(in->code, s->name))
        return kiln_reject_because(why, why_len, KILN_REJECT_NO_CODE, "this build embeds no code object for it");
    return KILN_FITS;
}

/* ---- table lookups ---- */

int kiln_logic_matches(const kiln_logic *l, const char *arch, const kiln_problem *p)
{
    kiln_arch_id id = kiln_arch_from_name(arch);
    return id != KILN_ARCH_UNKNOWN && l->arch == id && l->a_type == p->a_type && l->b_type == p->b_type &&
           l->d_type == p->d_type && l->layout == p->layout && l->b_prepacked == p->b_prepacked &&
           l->kind == kiln_problem_kind_of(p);
}

/* By name; equal names in table order (the linear search's answer is the first), since qsort is not stable */
static int code_by_name(const void *a, const void *b)
{
    const kiln_code_object *x = *(const kiln_code_object *const *)a, *y = *(const kiln_code_object *const *)b;
    const int c = strcmp(x->name, y->name);
    return c ? c : (x > y) - (x < y);
}

static int name_vs_code(const void *key, const void *elem)
{
    return strcmp((const char *)key, (*(const kiln_code_object *const *)elem)->name);
}

const kiln_code_object **kiln_code_index(const kiln_tables *t, int *count)
{
    *count = 0;
    if (t->num_code_objects <= 0)
        return NULL;
    const kiln_code_object **idx = malloc(sizeof *idx * (size_t)t->num_code_objects);
    if (!idx)
        return NULL;
    int n = 0;
    for (int i = 0; i < t->num_code_objects; i++)
        if (t->code_objects[i].name)
            idx[n++] = &t->code_objects[i];
    qsort(idx, (size_t)n, sizeof *idx, code_by_name);
    *count = n;
    return idx;
}

const kiln_code_object *kiln_find_code_object(const kiln_tables *t, const char *name)
{
    if (t->code_by_name) {
        const kiln_code_object *const *hit =
            bsearch(name, t->code_by_name, (size_t)t->num_code_by_name, sizeof *t->code_by_name, name_vs_code);
        while (hit && hit > t->code_by_name && strcmp(hit[-1]->name, name) == 0)
            hit--; /* the first of equal names */
        return hit ? *hit : NULL;
    }
    for (int i = 0; i < t->num_code_objects; i++)
        if (t->code_objects[i].name && strcmp(t->code_objects[i].name, name) == 0)
            return &t->code_objects[i];
    return NULL;
}

/* ---- ranking ---- */

enum { UNSEEN = 0, ACCEPTED = 1, REJECTED = 2 };
enum { TIER_NONE = 0, TIER_EXACT = 1, TIER_MODEL = 2, TIER_NEAREST = 3, TIER_FALLBACK = 4, TIER_OTHER = 5 };

typedef struct candidate {
    int solution;
    int state;                /* UNSEEN, ACCEPTED, REJECTED */
    int tier;                 /* TIER_* */
    double key;               /* order within the tier: entry position, distance, logic or YAML position */
    const kiln_exact *entry;  /* the exact entry behind tiers 1 and 2 */
} candidate;

/* One selection: the tables, the input and the logics that apply, in table order. */
typedef struct logic_set {
    const kiln_tables *t;
    const kiln_select_input *in;
    const kiln_logic **logics;
    int n;
    kiln_problem sized; /* the problem as the logics' sizes see it: m = rows per group (kiln_problem_select_m) */
} logic_set;

static double log2_pos(int64_t v) { return log2((double)(v > 1 ? v : 1)); }

static double distance(kiln_distance metric, const kiln_problem *p, const kiln_exact *e)
{
    double dm, dn, dk;
    if (metric == KILN_DISTANCE_LINEAR_MNK) {
        dm = (double)p->m - (double)e->m;
        dn = (double)p->n - (double)e->n;
        dk = (double)p->k - (double)e->k;
    } else {
        dm = log2_pos(p->m) - log2_pos(e->m);
        dn = log2_pos(p->n) - log2_pos(e->n);
        dk = log2_pos(p->k) - log2_pos(e->k);
    }
    return sqrt(dm * dm + dn * dn + dk * dk);
}

static int compare_ranked(const void *pa, const void *pb)
{
    const candidate *a = pa, *b = pb;
    if (a->tier != b->tier)
        return a->tier < b->tier ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->solution > b->solution) - (a->solution < b->solution);
}

/* Evaluates the predicates of solution index s once, listing it in the explanation. */
static void consider(const logic_set *ls, candidate *c, int s, unsigned *rejects, text *tx)
{
    const kiln_tables *t = ls->t;
    if (s < 0 || s >= t->num_solutions) {
        textf(tx, "  [%d] ignored: index outside the solution table\n", s);
        return;
    }
    if (c[s].state != UNSEEN)
        return;
    char why[160];
    kiln_reject r = kiln_solution_fits(&t->solutions[s], ls->in, why, sizeof why);
    c[s].state = r == KILN_FITS ? ACCEPTED : REJECTED;
    if (r == KILN_FITS) {
        textf(tx, "  [%d] %s: accepted\n", s, t->solutions[s].name);
    } else {
        *rejects |= 1u << r;
        textf(tx, "  [%d] %s: rejected by %s (%s)\n", s, t->solutions[s].name, kiln_reject_name(r), why);
    }
}

static int accepted(const kiln_tables *t, const candidate *c, int s)
{
    return s >= 0 && s < t->num_solutions && c[s].state == ACCEPTED;
}

/* Tiers 1 and 2 from one logic's exact entries; *position numbers entries across logics (the tier-1 key). */
static void rank_exact(const kiln_logic *l, const logic_set *ls, candidate *c, int *position)
{
    const kiln_problem *p = &ls->sized;
    for (int i = 0; i < l->num_exact; i++, (*position)++) {
        const kiln_exact *e = &l->exact[i];
        if (!accepted(ls->t, c, e->solution))
            continue;
        candidate *s = &c[e->solution];
        if (e->m == p->m && e->n == p->n && e->k == p->k) {
            if (s->tier != TIER_EXACT) { /* entries run in order: the first exact one is the key */
                s->tier = TIER_EXACT;
                s->key = *position;
                s->entry = e;
            }
        } else if (s->tier == TIER_NONE || s->tier == TIER_NEAREST) {
            double d = distance(l->distance, p, e);
            if (s->tier == TIER_NONE || d < s->key) {
                s->tier = TIER_NEAREST;
                s->key = d;
                s->entry = e;
            }
        }
    }
}

/* ---- the timing model (logics with measured times) ----
 * A size without an exact entry: each solution's time is predicted from the `neighbors` measured sizes nearest in
 * the logic's distance, as the weighted geometric mean over them of (measured ms) x work(size) / work(measured size),
 * weights 1 / (distance + 1/8). work = (waves + tiles x gsu / SMs) x (K-tiles per split + 1): waves =
 * ceil(tiles x gsu / SMs) (grouped: the tiles of all groups, the measured sizes' with the logic's timed_groups), the
 * +1 the per-tile prologue and epilogue. The waves carry the quantization of a compute-bound grid; the unrounded
 * share grows with the CTAs even within one wave, as the operand traffic does (two 8-token tiles of one weight
 * tile read it twice). Checked offline by bench/selection_loo.py, which mirrors this model: leaving each size out of
 * the five H100 tunes and replaying three held-out fp8 runs, the share gave picks within 10% of the best as often or
 * more often on each, and never a higher worst case (held-out at ffa4565: mean pick/best 1.010 -> 1.008, worst
 * 1.12 -> 1.08; the oldest replay's mean rose 1.016 -> 1.018, bench/NOTES.md). A solution not timed at the nearest
 * measured size is not predicted where another one was (its prediction would come from farther sizes only: the
 * swap-AB forms probed up to M = 4096 were picked at M = 9000 so); leaving sizes out of the five tunes this hits as
 * often or more often (promoted fp8 110 -> 112 of 117, mixed bf16 118 -> 119 of 128). A logic whose tune picks better
 * without the share says `selection.share: 0` (waves_only): the promoted fp8 logic since its swap-AB tiles, whose
 * 16-160-token grids the share penalized (bench/NOTES.md, "Swap-AB"). Scaling
 * by work carries what the nearest sizes measured over to the wave quantization and K of this size, which a plain
 * nearest-entry lookup cannot; the solutions then rank by predicted time (tier 2, between exact entries and nearest
 * entries). */

static double model_work(const kiln_solution *s, const kiln_problem *p, int64_t m, int64_t n, int64_t k,
                         int64_t groups, int sms, int waves_only)
{
    /* multicast kernels take tiles in pairs along M (1) or N (2) */
    int64_t tm = ceil_div(m, s->mt0), tn = ceil_div(n, s->mt1);
    tm = s->multicast == 1 ? 2 * ceil_div(tm, 2) : tm;
    tn = s->multicast == 2 ? 2 * ceil_div(tn, 2) : tn;
    double tiles = (double)tm * (double)tn * (double)p->batch * (double)groups * s->gsu;
    double kiters = ceil((double)ceil_div(k, s->depth_u) / s->gsu);
    return (ceil(tiles / sms) + (waves_only ? 0.0 : tiles / sms)) * (kiters + 1.0);
}

/* The logic's measured ms of its j-th solution at its i-th timed size (-1 or 0: not run there). */
static float timing_at(const kiln_logic *l, int i, int j)
{
    return l->timing_ms[(size_t)i * (size_t)l->num_solutions + (size_t)j];
}

static int nearest_timings(const kiln_logic *l, const kiln_problem *p, int *idx, double *dist)
{
    int want = l->neighbors < KILN_MODEL_MAX_NEIGHBORS ? l->neighbors : KILN_MODEL_MAX_NEIGHBORS, n = 0;
    for (int i = 0; i < l->num_timings; i++) {
        const int64_t *sz = &l->timing_sizes[3 * i];
        kiln_exact e = {sz[0], sz[1], sz[2], 0};
        double d = distance(l->distance, p, &e);
        int at = n < want ? n++ : want; /* insertion into the sorted short list */
        while (at > 0 && dist[at - 1] > d) {
            if (at < want) {
                dist[at] = dist[at - 1];
                idx[at] = idx[at - 1];
            }
            at--;
        }
        if (at < want) {
            dist[at] = d;
            idx[at] = i;
        }
    }
    return n;
}

static void rank_model(const kiln_logic *l, const logic_set *ls, candidate *c, text *tx)
{
    if (l->num_timings < 1 || l->neighbors < 1 || !l->timing_sizes || !l->timing_ms)
        return;
    const kiln_problem *p = &ls->sized;
    int sms = ls->in->sm_count > 0 ? ls->in->sm_count : KILN_MODEL_DEFAULT_SMS;
    int idx[KILN_MODEL_MAX_NEIGHBORS];
    double dist[KILN_MODEL_MAX_NEIGHBORS];
    int n = nearest_timings(l, p, idx, dist);
    textf(tx, "model (%s): %d nearest measured sizes, %d SMs%s:", l->source, n, sms,
          l->waves_only ? ", waves only" : "");
    for (int i = 0; i < n; i++) {
        const int64_t *sz = &l->timing_sizes[3 * idx[i]];
        textf(tx, " %" PRId64 "x%" PRId64 "x%" PRId64 " (%.2f)", sz[0], sz[1], sz[2], dist[i]);
    }
    textf(tx, "\n");
    /* Grouped problems: the sizes are one group's; the tiles of all groups fill the waves. The logic's timings were
     * measured with timed_groups groups (0: not recorded, then both sides count one group, as before). */
    int64_t groups_here = 1, groups_timed = 1;
    if (p->group_mode != KILN_GROUP_NONE && l->timed_groups > 0) {
        groups_here = p->groups > 0 ? p->groups : 1;
        groups_timed = l->timed_groups;
    }
    /* Where the nearest measured size timed some of the solutions, only those are predicted: the others would be
     * predicted from farther sizes only (a form probed at part of the grid, say), against solutions whose prediction
     * has the nearest size in it. */
    int nearest_only = 0;
    for (int j = 0; j < l->num_solutions && n > 0 && !nearest_only; j++) {
        int s = l->solutions[j];
        nearest_only = accepted(ls->t, c, s) && c[s].tier != TIER_EXACT && timing_at(l, idx[0], j) > 0.0f;
    }
    for (int j = 0; j < l->num_solutions; j++) {
        int s = l->solutions[j];
        if (!accepted(ls->t, c, s) || c[s].tier == TIER_EXACT)
            continue;
        if (nearest_only && !(timing_at(l, idx[0], j) > 0.0f)) {
            textf(tx, "  [%d] not timed at the nearest measured size: not predicted\n", s);
            continue;
        }
        const kiln_solution *sol = &ls->t->solutions[s];
        double num = 0.0, den = 0.0;
        double here = model_work(sol, p, p->m, p->n, p->k, groups_here, sms, l->waves_only);
        for (int i = 0; i < n; i++) {
            float ms = timing_at(l, idx[i], j);
            if (!(ms > 0.0f))
                continue;
            const int64_t *sz = &l->timing_sizes[3 * idx[i]];
            double w = 1.0 / (dist[i] + 0.125);
            double there = model_work(sol, p, sz[0], sz[1], sz[2], groups_timed, sms, l->waves_only);
            num += w * log((double)ms * here / there);
            den += w;
        }
        if (den > 0.0 && (c[s].tier != TIER_MODEL || exp(num / den) < c[s].key)) {
            c[s].tier = TIER_MODEL;
            c[s].key = exp(num / den);
            c[s].entry = NULL;
        }
    }
}

static void rank_all(const logic_set *ls, candidate *c, text *tx)
{
    int position = 0;
    for (int i = 0; i < ls->n; i++)
        rank_exact(ls->logics[i], ls, c, &position);
    for (int i = 0; i < ls->n; i++)
        rank_model(ls->logics[i], ls, c, tx);
    for (int i = 0; i < ls->n; i++) {
        int s = ls->logics[i]->fallback;
        if (accepted(ls->t, c, s) && c[s].tier == TIER_NONE) {
            c[s].tier = TIER_FALLBACK;
            c[s].key = i;
        }
    }
    position = 0;
    for (int i = 0; i < ls->n; i++) {
        const kiln_logic *l = ls->logics[i];
        for (int j = 0; j < l->num_solutions; j++, position++) {
            int s = l->solutions[j];
            if (accepted(ls->t, c, s) && c[s].tier == TIER_NONE) {
                c[s].tier = TIER_OTHER;
                c[s].key = position;
            }
        }
    }
}

static void explain_ranked(const kiln_tables *t, const candidate *r, int n, text *tx)
{
    textf(tx, "ranking (best first):\n");
    for (int i = 0; i < n; i++) {
        const kiln_exact *e = r[i].entry;
        textf(tx, "  %d. [%d] %s: ", i + 1, r[i].solution, t->solutions[r[i].solution].name);
        switch (r[i].tier) {
        case TIER_EXACT:
            textf(tx, "exact entry %" PRId64 "x%" PRId64 "x%" PRId64 "\n", e->m, e->n, e->k);
            break;
        case TIER_NEAREST:
            textf(tx, "nearest exact entry %" PRId64 "x%" PRId64 "x%" PRId64 ", distance %.4f\n", e->m, e->n, e->k,
                  r[i].key);
            break;
        case TIER_MODEL: textf(tx, "predicted %.4f ms by the timing model\n", r[i].key); break;
        case TIER_FALLBACK: textf(tx, "fallback\n"); break;
        default: textf(tx, "other accepted candidate, YAML position %d\n", (int)r[i].key); break;
        }
    }
    textf(tx, "winner: [%d] %s\n", r[0].solution, t->solutions[r[0].solution].name);
}

/* Predicates for every candidate of the logics, listed in the explanation in YAML order. */
static void consider_all(const logic_set *ls, candidate *c, unsigned *rejects, text *tx)
{
    textf(tx, "candidates:\n");
    for (int i = 0; i < ls->n; i++)
        for (int j = 0; j < ls->logics[i]->num_solutions; j++)
            consider(ls, c, ls->logics[i]->solutions[j], rejects, tx);
    for (int i = 0; i < ls->n; i++) {
        for (int j = 0; j < ls->logics[i]->num_exact; j++)
            consider(ls, c, ls->logics[i]->exact[j].solution, rejects, tx);
        consider(ls, c, ls->logics[i]->fallback, rejects, tx);
    }
}

/* Ranks with the logics found; n passing solutions end up in ranked[]. */
static kiln_status rank(const logic_set *ls, candidate *ranked, int *n, unsigned *rejects, text *tx)
{
    const kiln_tables *t = ls->t;
    candidate *c = calloc((size_t)(t->num_solutions > 0 ? t->num_solutions : 1), sizeof *c);
    if (!c)
        return KILN_STATUS_INTERNAL_ERROR;
    for (int i = 0; i < t->num_solutions; i++)
        c[i].solution = i;
    consider_all(ls, c, rejects, tx);
    rank_all(ls, c, tx);
    *n = 0;
    for (int i = 0; i < t->num_solutions; i++)
        if (c[i].tier != TIER_NONE)
            ranked[(*n)++] = c[i];
    free(c);
    qsort(ranked, (size_t)*n, sizeof *ranked, compare_ranked);
    if (*n == 0)
        textf(tx, "no candidate passes\n");
    else
        explain_ranked(t, ranked, *n, tx);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_select(const kiln_tables *t, const kiln_select_input *in, int *out, int max_out, int *count,
                        unsigned *rejects, char *explain, size_t explain_len)
{
    const kiln_problem *p = in->problem;
    text tx;
    text_init(&tx, explain, explain_len);
    *count = 0;
    *rejects = 0;
    textf(&tx, "problem: %s %s x %s -> %s %s b_prepacked=%d m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64
               "\n",
          in->arch, kiln_dtype_name(p->a_type), kiln_dtype_name(p->b_type), kiln_dtype_name(p->d_type),
          p->layout == KILN_LAYOUT_TN ? "TN" : "NN", p->b_prepacked, p->m, p->n, p->k, p->batch);
    if (p->fast_accum)
        textf(&tx, "fast_accum: fp8 sums may stay in wgmma's accumulator over all of K\n");

    if (p->group_mode == KILN_GROUP_K)
        textf(&tx, "grouped: k-grouped, %" PRId64 " groups; sized by %" PRId64 " of K per group\n", p->groups,
              kiln_problem_select_k(p));
    else if (p->group_mode != KILN_GROUP_NONE)
        textf(&tx, "grouped: %s, %" PRId64 " groups; sized by %" PRId64 " rows per group\n",
              p->group_mode == KILN_GROUP_CONTIGUOUS ? "contiguous" : "masked", p->groups, kiln_problem_select_m(p));

    logic_set ls = {t, in, calloc((size_t)(t->num_logics > 0 ? t->num_logics : 1), sizeof(const kiln_logic *)), 0,
                    *in->problem};
    ls.sized.m = kiln_problem_select_m(in->problem);
    ls.sized.k = kiln_problem_select_k(in->problem);
    candidate *ranked = calloc((size_t)(t->num_solutions > 0 ? t->num_solutions : 1), sizeof *ranked);
    kiln_status st = ls.logics && ranked ? KILN_STATUS_SUCCESS : KILN_STATUS_INTERNAL_ERROR;
    /* A problem that allows fast accumulation uses the fast logics of its type where there are any (their kernels
     * were tuned for it); every other problem uses the others. */
    int want_fast = 0;
    for (int i = 0; p->fast_accum && i < t->num_logics; i++)
        want_fast |= t->logics[i].fast_accum && kiln_logic_matches(&t->logics[i], in->arch, p);
    for (int i = 0; st == KILN_STATUS_SUCCESS && i < t->num_logics; i++) {
        const kiln_logic *l = &t->logics[i];
        if (!kiln_logic_matches(l, in->arch, p) || !l->fast_accum != !want_fast)
            continue;
        ls.logics[ls.n++] = l;
        textf(&tx, "logic: %s (%d solutions, %d exact entries, distance %s, fallback [%d])\n", l->source,
              l->num_solutions, l->num_exact, l->distance == KILN_DISTANCE_LINEAR_MNK ? "linear_mnk" : "log_mnk",
              l->fallback);
    }
    /* An arch with tables but no logic of the problem's kind has no kernel for it at any size: NOT_SUPPORTED. */
    int n = 0, kind_here = 0, arch_here = 0;
    kiln_kind kind = kiln_problem_kind_of(p);
    for (int i = 0; i < t->num_logics; i++) {
        int same_arch = t->logics[i].arch == kiln_arch_from_name(in->arch);
        arch_here |= same_arch;
        kind_here |= same_arch && t->logics[i].kind == kind;
    }
    kind_here |= !arch_here;
    if (st == KILN_STATUS_SUCCESS && ls.n == 0)
        textf(&tx, kind_here ? "no selection logic for this arch and problem type\n"
                             : "%s has no %s kernels\n", in->arch, kiln_kind_name(kind));
    else if (st == KILN_STATUS_SUCCESS)
        st = rank(&ls, ranked, &n, rejects, &tx);
    for (int i = 0; i < n && i < max_out; i++)
        out[(*count)++] = ranked[i].solution;
    free(ls.logics);
    free(ranked);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (ls.n == 0 && !kind_here) /* the arch has no kernel of this kind at all, whatever the sizes */
        return KILN_STATUS_NOT_SUPPORTED;
    return n ? KILN_STATUS_SUCCESS : KILN_STATUS_NO_SOLUTION;
}
