/* The selection over fake tables (fake_tables.h): ranking tiers, distances, predicates, determinism, top-k. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tables.h"
#include "test_util.h"

#define MAX_OUT 16

static kiln_tables T;

static kiln_problem fp8_problem(int64_t m, int64_t n, int64_t k)
{
    kiln_problem p;
    kiln_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_BF16, KILN_LAYOUT_TN, m, n, k);
    return p;
}

/* An sm90 e4m3 x e4m3 -> bf16 TN logic over `n` solutions of the fake table (no exact entries, no timings). */
static kiln_logic fp8_logic(const char *source, const int *solutions, int n, int fallback)
{
    kiln_logic l;
    memset(&l, 0, sizeof l);
    l.arch = KILN_ARCH_SM90;
    l.kind = KILN_KIND_FP8_SCALED;
    l.source = source;
    l.a_type = l.b_type = KILN_DTYPE_E4M3;
    l.d_type = KILN_DTYPE_BF16;
    l.layout = KILN_LAYOUT_TN;
    l.solutions = solutions;
    l.num_solutions = n;
    l.distance = KILN_DISTANCE_LOG_MNK;
    l.fallback = fallback;
    return l;
}

static kiln_select_input input(const kiln_problem *p, const kiln_args *args, int64_t max_lds)
{
    kiln_select_input in;
    memset(&in, 0, sizeof in);
    in.arch = "sm90";
    in.problem = p;
    in.args = args;
    in.skip = 0;
    in.max_lds_bytes = max_lds;
    return in;
}

typedef struct result {
    kiln_status status;
    int out[MAX_OUT];
    int count;
    unsigned rejects;
    char text[4096];
} result;

static result run(const kiln_tables *t, const kiln_select_input *in)
{
    result r;
    memset(&r, 0, sizeof r);
    r.status = kiln_select(t, in, r.out, MAX_OUT, &r.count, &r.rejects, r.text, sizeof r.text);
    return r;
}

/* The result is exactly `want` (n entries). */
static void expect_order(const result *r, const int *want, int n, const char *what)
{
    int same = r->status == KILN_STATUS_SUCCESS && r->count == n;
    for (int i = 0; same && i < n; i++)
        same = r->out[i] == want[i];
    CHECK(same, "%s: status %d, got %d solutions [%d %d %d %d %d %d %d ...]", what, r->status, r->count, r->out[0],
          r->out[1], r->out[2], r->out[3], r->out[4], r->out[5], r->out[6]);
}

static int contains(const char *text, const char *part) { return strstr(text, part) != NULL; }

static void test_exact(void)
{
    kiln_problem p = fp8_problem(4096, 4096, 4096);
    kiln_select_input in = input(&p, NULL, FAKE_MAX_LDS);
    result r = run(&T, &in);
    /* tier 1 MT128 (BIG_LDS exact too, but rejected), tier 2 by distance KMUL 3.46 < SPLITK 7.35 < MT64 10.39,
     * tier 3 the fallback, tier 4 the rest in YAML order */
    int want[] = {FAKE_FP8_MT128, FAKE_FP8_KMUL, FAKE_FP8_SPLITK, FAKE_FP8_MT64, FAKE_FP8_ANY, FAKE_FP8_NOCODE};
    expect_order(&r, want, 6, "exact 4096^3 with an LDS limit");
    CHECK(r.rejects == 1u << KILN_REJECT_LDS, "rejects mask 0x%x", r.rejects);
    CHECK(contains(r.text, "rejected by lds"), "explain names the lds predicate:\n%s", r.text);
    CHECK(contains(r.text, "exact entry 4096x4096x4096"), "explain names the exact entry:\n%s", r.text);
    CHECK(contains(r.text, "winner: [0] fake_F8F8B_TN_MT128x128x64_SM90"), "explain names the winner:\n%s", r.text);
    CHECK(contains(r.text, "fallback"), "explain names the fallback");

    /* Without a known LDS limit both exact entries pass, in entry order. */
    in.max_lds_bytes = 0;
    r = run(&T, &in);
    int want2[] = {FAKE_FP8_BIG_LDS, FAKE_FP8_MT128, FAKE_FP8_KMUL, FAKE_FP8_SPLITK,
                   FAKE_FP8_MT64,    FAKE_FP8_ANY,   FAKE_FP8_NOCODE};
    expect_order(&r, want2, 7, "exact 4096^3 without an LDS limit");
}

static void test_nearest(void)
{
    /* 2048^3 is sqrt(3) from 4096^3 and from 1024^3: ties go by solution index */
    kiln_problem p = fp8_problem(2048, 2048, 2048);
    kiln_select_input in = input(&p, NULL, 0);
    result r = run(&T, &in);
    int want[] = {FAKE_FP8_MT128, FAKE_FP8_BIG_LDS, FAKE_FP8_KMUL, FAKE_FP8_SPLITK,
                  FAKE_FP8_MT64,  FAKE_FP8_ANY,     FAKE_FP8_NOCODE};
    expect_order(&r, want, 7, "nearest 2048^3 with ties");
    CHECK(contains(r.text, "distance 1.7321"), "explain shows the distance:\n%s", r.text);

    /* 112^3: nearest is 64^3; KMUL fails k_multiple, SPLITK has one DepthU tile for 4 splits */
    p = fp8_problem(112, 112, 112);
    in = input(&p, NULL, FAKE_MAX_LDS);
    r = run(&T, &in);
    int want2[] = {FAKE_FP8_MT64, FAKE_FP8_MT128, FAKE_FP8_ANY, FAKE_FP8_NOCODE};
    expect_order(&r, want2, 4, "nearest 112^3");
    CHECK(r.rejects == ((1u << KILN_REJECT_LDS) | (1u << KILN_REJECT_K_MULTIPLE) | (1u << KILN_REJECT_GSU)),
          "rejects mask 0x%x", r.rejects);
    CHECK(contains(r.text, "rejected by k_multiple (k=112 is not a multiple of 128)"), "%s", r.text);
    CHECK(contains(r.text, "rejected by gsu"), "%s", r.text);
}

static void test_alignment(void)
{
    kiln_problem p = fp8_problem(4096, 4096, 4096);
    kiln_select_input in = input(&p, NULL, FAKE_MAX_LDS);
    int only_any[] = {FAKE_FP8_ANY};

    p.lda = 4097;
    result r = run(&T, &in);
    expect_order(&r, only_any, 1, "lda not a multiple of 16");
    /* predicates run in order: align_a rejects BIG_LDS before lds would */
    CHECK(r.rejects == 1u << KILN_REJECT_ALIGN_A, "rejects 0x%x", r.rejects);
    CHECK(contains(r.text, "lda=4097 is not a multiple of align_a=16"), "%s", r.text);
    in.skip = (1u << KILN_REJECT_ALIGN_A) | (1u << KILN_REJECT_ALIGN_B);
    r = run(&T, &in);
    CHECK(r.count == 6, "alignment ignored: %d candidates", r.count);
    in.skip = 0;
    p.lda = 4096;

    kiln_args args;
    memset(&args, 0, sizeof args);
    args.a = (const void *)(uintptr_t)0x10008;
    args.b = (const void *)(uintptr_t)0x20000;
    in.args = &args;
    r = run(&T, &in);
    expect_order(&r, only_any, 1, "A pointer 8-byte aligned");
    CHECK(contains(r.text, "A pointer"), "%s", r.text);
    args.a = (const void *)(uintptr_t)0x10010;
    args.b = (const void *)(uintptr_t)0x20001;
    r = run(&T, &in);
    expect_order(&r, only_any, 1, "B pointer 1-byte aligned");
    CHECK(r.rejects & (1u << KILN_REJECT_ALIGN_B), "align_b rejects");
    args.b = (const void *)(uintptr_t)0x20010;
    r = run(&T, &in);
    CHECK(r.count == 6, "aligned pointers: %d candidates", r.count);
    in.args = NULL;

    /* a batch stride breaks alignment only for batched problems */
    p.stride_b = 4096 * 4096 + 8;
    r = run(&T, &in);
    CHECK(r.count == 6, "stride ignored at batch 1: %d", r.count);
    p.batch = 2;
    r = run(&T, &in);
    expect_order(&r, only_any, 1, "stride_b not a multiple of 16");
    CHECK(contains(r.text, "stride_b="), "%s", r.text);
}

static void test_gsu(void)
{
    /* SPLITK: depth_u 128, gsu 4. Accepted only when (gsu - 1) * ceil(tiles / gsu) < tiles. */
    static const struct {
        int64_t k;
        int accepted;
    } cases[] = {{384, 0}, {385, 1}, {512, 1}, {640, 0}, {768, 0}, {896, 1}, {1024, 1}, {1152, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_problem p = fp8_problem(256, 256, cases[i].k);
        kiln_select_input in = input(&p, NULL, FAKE_MAX_LDS);
        in.skip = 1u << KILN_REJECT_ALIGN_A; /* odd k makes lda odd */
        kiln_reject why = kiln_solution_fits(&T.solutions[FAKE_FP8_SPLITK], &in, NULL, 0);
        CHECK((why == KILN_FITS) == cases[i].accepted, "gsu 4 at k=%lld: %s", (long long)cases[i].k,
              kiln_reject_name(why));
    }
    kiln_geometry g;
    kiln_problem p = fp8_problem(100, 200, 1000);
    p.batch = 3;
    kiln_solution_geometry(&T.solutions[FAKE_FP8_SPLITK], &p, &g);
    CHECK(g.tiles_m == 2 && g.tiles_n == 4 && g.k_tiles == 8 && g.k_tiles_per_split == 2, "split-K tiles");
    CHECK(g.grid_x == 8 && g.grid_z == 12 && g.reduce_grid_x == 79, "split-K grids %lld %lld %lld",
          (long long)g.grid_x, (long long)g.grid_z, (long long)g.reduce_grid_x);
    CHECK(g.workspace_bytes == 4u * 3u * 100u * 200u * 4u, "workspace %llu", (unsigned long long)g.workspace_bytes);
    kiln_solution_geometry(&T.solutions[FAKE_FP8_MT128], &p, &g);
    CHECK(g.workspace_bytes == 0 && g.reduce_grid_x == 0 && g.grid_z == 3, "no split-K");

    /* a prepacked B counts K tiles over its padded ldb */
    kiln_problem_init(&p, KILN_DTYPE_F16, KILN_DTYPE_E4M3, KILN_DTYPE_F16, KILN_LAYOUT_TN, 64, 64, 100);
    kiln_solution_geometry(&T.solutions[FAKE_MIXED], &p, &g);
    CHECK(p.ldb == 112 && g.k_tiles == 2, "prepacked k tiles %lld", (long long)g.k_tiles);
}

static void test_size(void)
{
    kiln_problem p = fp8_problem(4096, 4096, 4096);
    kiln_select_input in = input(&p, NULL, 0);
    in.max_grid_x = 10;
    result r = run(&T, &in);
    CHECK(r.status == KILN_STATUS_NO_SOLUTION && r.count == 0, "grid x limit: status %d", r.status);
    CHECK(r.rejects == 1u << KILN_REJECT_SIZE, "only the size predicate rejects: 0x%x", r.rejects);
    in.skip = 1u << KILN_REJECT_SIZE;
    r = run(&T, &in);
    CHECK(r.count == 7, "size ignored: %d candidates", r.count);
    in.skip = 0;

    p.batch = 3;
    in.max_grid_x = 0;
    in.max_grid_z = 3;
    CHECK(kiln_solution_fits(&T.solutions[FAKE_FP8_SPLITK], &in, NULL, 0) == KILN_REJECT_SIZE, "grid z 12 > 3");
    CHECK(kiln_solution_fits(&T.solutions[FAKE_FP8_MT128], &in, NULL, 0) == KILN_FITS, "grid z 3 <= 3");
}

/* The wgmma family puts every tile of every batch and split on grid x; grid z is 1. */
static void test_wgmma_geometry(void)
{
    kiln_problem p;
    kiln_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_F32, KILN_LAYOUT_TN, 100, 200, 1024);
    p.batch = 3;
    kiln_geometry g;
    kiln_solution_geometry(&T.solutions[FAKE_WG_FP8_SPLITK], &p, &g);
    CHECK(g.tiles_m == 1 && g.tiles_n == 2 && g.k_tiles == 8 && g.k_tiles_per_split == 4, "wgmma tiles");
    CHECK(g.grid_x == 1 * 2 * 3 * 2 && g.grid_z == 1 && g.reduce_grid_x == 79, "wgmma grids %lld %lld %lld",
          (long long)g.grid_x, (long long)g.grid_z, (long long)g.reduce_grid_x);
    CHECK(g.workspace_bytes == 2u * 3u * 100u * 200u * 4u, "wgmma workspace %llu",
          (unsigned long long)g.workspace_bytes);
    CHECK(kiln_solution_wgmma(&T.solutions[FAKE_WG_FP8]) && !kiln_solution_wgmma(&T.solutions[FAKE_FP8_MT128]),
          "family");

    kiln_select_input in = input(&p, NULL, FAKE_MAX_LDS);
    in.max_grid_z = 1; /* batch 3 is on grid x: 2 x 3 tiles */
    in.max_grid_x = 6;
    CHECK(kiln_solution_fits(&T.solutions[FAKE_WG_FP8], &in, NULL, 0) == KILN_FITS, "6 CTAs fit");
    in.max_grid_x = 5;
    CHECK(kiln_solution_fits(&T.solutions[FAKE_WG_FP8], &in, NULL, 0) == KILN_REJECT_SIZE, "6 > 5");

    /* num_tiles is an int32 whatever the device's grid limit; the product saturates instead of overflowing */
    kiln_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_F32, KILN_LAYOUT_TN, INT64_C(1) << 30,
                      INT64_C(1) << 30, 128);
    in = input(&p, NULL, FAKE_MAX_LDS);
    in.max_grid_x = INT64_MAX;
    CHECK(kiln_solution_fits(&T.solutions[FAKE_WG_FP8], &in, NULL, 0) == KILN_REJECT_SIZE, "2^46 tiles");
    p.m = p.n = INT32_MAX;
    p.batch = 65535;
    kiln_solution_geometry(&T.solutions[FAKE_WG_FP8_SPLITK], &p, &g);
    CHECK(g.grid_x == INT64_MAX, "saturated: %lld", (long long)g.grid_x);
}

/* Grouped problems, plain (mfma) and wgmma launches alike: grid x is a bound on the groups' tiles ((tiles_m + groups)
 * * tiles_n contiguous, groups * tiles_m * tiles_n masked and k-grouped), grid z is 1. */
static void test_grouped_geometry(void)
{
    const int sols[] = {FAKE_FP8_MT128, FAKE_WG_FP8};
    for (int i = 0; i < 2; i++) {
        const kiln_solution *s = &T.solutions[sols[i]];
        kiln_problem p;
        kiln_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_BF16, KILN_LAYOUT_TN, 1000, 300, 512);
        p.group_mode = KILN_GROUP_CONTIGUOUS;
        p.groups = 7;
        kiln_geometry g;
        kiln_solution_geometry(s, &p, &g);
        const int64_t tm = (1000 + s->mt0 - 1) / s->mt0, tn = (300 + s->mt1 - 1) / s->mt1;
        CHECK(g.grid_x == (tm + 7) * tn && g.grid_z == 1, "%s contiguous: grid %lld x %lld", s->name,
              (long long)g.grid_x, (long long)g.grid_z);
        p.group_mode = KILN_GROUP_MASKED;
        kiln_solution_geometry(s, &p, &g);
        CHECK(g.grid_x == 7 * tm * tn && g.grid_z == 1, "%s masked: grid %lld x %lld", s->name, (long long)g.grid_x,
              (long long)g.grid_z);
        p.group_mode = KILN_GROUP_K; /* every group has all of D's tiles */
        kiln_solution_geometry(s, &p, &g);
        CHECK(g.grid_x == 7 * tm * tn && g.grid_z == 1, "%s k-grouped: grid %lld x %lld", s->name,
              (long long)g.grid_x, (long long)g.grid_z);
    }
}

static void test_top_k_and_determinism(void)
{
    kiln_problem p = fp8_problem(3000, 5000, 7040);
    kiln_select_input in = input(&p, NULL, FAKE_MAX_LDS);
    result all = run(&T, &in), again = run(&T, &in);
    CHECK(all.status == KILN_STATUS_SUCCESS && all.count > 2, "candidates: %d", all.count);
    CHECK(memcmp(all.out, again.out, sizeof all.out) == 0 && all.count == again.count, "same order twice");
    CHECK(strcmp(all.text, again.text) == 0, "same explanation twice");
    for (int i = 0; i < all.count; i++)
        for (int j = i + 1; j < all.count; j++)
            CHECK(all.out[i] != all.out[j], "solution %d listed twice", all.out[i]);

    int top[2], count;
    unsigned rejects;
    CHECK(kiln_select(&T, &in, top, 2, &count, &rejects, NULL, 0) == KILN_STATUS_SUCCESS, "top-2");
    CHECK(count == 2 && top[0] == all.out[0] && top[1] == all.out[1], "top-2 is the head of the ranking");

    /* explanation truncated to a small buffer: still NUL-terminated, same choice */
    char small[24];
    CHECK(kiln_select(&T, &in, top, 1, &count, &rejects, small, sizeof small) == KILN_STATUS_SUCCESS, "truncated");
    CHECK(strlen(small) == sizeof small - 1 && top[0] == all.out[0], "truncated text, same winner");
}

static void test_no_solution(void)
{
    kiln_problem p = fp8_problem(256, 256, 256);
    kiln_select_input in = input(&p, NULL, 0);
    in.arch = "sm80";
    result r = run(&T, &in);
    CHECK(r.status == KILN_STATUS_NO_SOLUTION && r.count == 0, "no logic for sm80");
    CHECK(contains(r.text, "no selection logic"), "%s", r.text);

    in.arch = "sm90";
    p.b_type = KILN_DTYPE_E5M2;
    r = run(&T, &in);
    CHECK(r.status == KILN_STATUS_NO_SOLUTION, "no logic for e4m3 x e5m2");

    /* the mixed logic's only solution needs lda % 8 == 0 */
    kiln_problem_init(&p, KILN_DTYPE_F16, KILN_DTYPE_E4M3, KILN_DTYPE_F16, KILN_LAYOUT_TN, 64, 64, 100);
    p.lda = 101;
    r = run(&T, &in);
    CHECK(r.status == KILN_STATUS_NO_SOLUTION && r.count == 0, "every candidate rejected");
    CHECK(contains(r.text, "no candidate passes"), "%s", r.text);
    CHECK(r.rejects == 1u << KILN_REJECT_ALIGN_A, "rejects 0x%x", r.rejects);

    /* the sm89 logic is found by arch */
    p = fp8_problem(256, 256, 256);
    in.arch = "sm89";
    r = run(&T, &in);
    CHECK(r.status == KILN_STATUS_SUCCESS && r.count == 1 && r.out[0] == FAKE_FP8_SM89, "sm89 logic");
}

/* Local tables: the metric decides, and entries may name solutions outside the candidate list (or the table). */
static void test_metrics_and_references(void)
{
    static const int list[] = {FAKE_FP8_ANY};
    static const kiln_exact exact[] = {
        {100, 100, 100, FAKE_FP8_MT64}, {1000, 1000, 1000, FAKE_FP8_MT128}, {5, 5, 5, 999}};
    kiln_logic logic = {.arch = KILN_ARCH_SM90, .kind = KILN_KIND_FP8_SCALED, .source = "local.yaml",
                        .a_type = KILN_DTYPE_E4M3, .b_type = KILN_DTYPE_E4M3, .d_type = KILN_DTYPE_BF16,
                        .layout = KILN_LAYOUT_TN,
                        .solutions = list, .num_solutions = 1, .exact = exact, .num_exact = 3,
                        .distance = KILN_DISTANCE_LOG_MNK, .fallback = FAKE_FP8_ANY};
    kiln_tables t = T;
    t.logics = &logic;
    t.num_logics = 1;
    kiln_problem p = fp8_problem(400, 400, 400);
    kiln_select_input in = input(&p, NULL, 0);
    /* log: |log2(400/100)| = 2 > |log2(1000/400)| = 1.32, so 1000^3 is nearer */
    result r = run(&t, &in);
    int want_log[] = {FAKE_FP8_MT128, FAKE_FP8_MT64, FAKE_FP8_ANY};
    expect_order(&r, want_log, 3, "log distance");
    CHECK(contains(r.text, "[999] ignored"), "an index outside the table is ignored:\n%s", r.text);
    /* linear: 300 < 600, so 100^3 is nearer */
    logic.distance = KILN_DISTANCE_LINEAR_MNK;
    r = run(&t, &in);
    int want_lin[] = {FAKE_FP8_MT64, FAKE_FP8_MT128, FAKE_FP8_ANY};
    expect_order(&r, want_lin, 3, "linear distance");

    /* a fallback that fails drops out; a solution of another problem type is rejected by "problem" */
    logic.fallback = FAKE_GEMM;
    r = run(&t, &in);
    CHECK(r.count == 3 && (r.rejects & (1u << KILN_REJECT_PROBLEM)), "foreign fallback rejected");
}

/* Two logics for one problem type pool their candidates, entries and fallbacks. */
static void test_pooled_logics(void)
{
    static const int list_a[] = {FAKE_FP8_MT128}, list_b[] = {FAKE_FP8_MT64, FAKE_FP8_ANY};
    static const kiln_exact exact_a[] = {{4096, 4096, 4096, FAKE_FP8_MT128}}, exact_b[] = {{64, 64, 64, FAKE_FP8_MT64}};
    kiln_logic logics[2] = {fp8_logic("a.yaml", list_a, 1, FAKE_FP8_MT128),
                            fp8_logic("b.yaml", list_b, 2, FAKE_FP8_ANY)};
    logics[0].exact = exact_a;
    logics[0].num_exact = 1;
    logics[1].exact = exact_b;
    logics[1].num_exact = 1;
    kiln_tables t = T;
    t.logics = logics;
    t.num_logics = 2;
    kiln_problem p = fp8_problem(64, 64, 64);
    kiln_select_input in = input(&p, NULL, 0);
    result r = run(&t, &in);
    int want_small[] = {FAKE_FP8_MT64, FAKE_FP8_MT128, FAKE_FP8_ANY};
    expect_order(&r, want_small, 3, "pooled, 64^3");
    CHECK(contains(r.text, "logic: a.yaml") && contains(r.text, "logic: b.yaml"), "both logics listed:\n%s", r.text);
    p = fp8_problem(4096, 4096, 4096);
    r = run(&t, &in);
    int want_big[] = {FAKE_FP8_MT128, FAKE_FP8_MT64, FAKE_FP8_ANY};
    expect_order(&r, want_big, 3, "pooled, 4096^3");
}

/* A logic's copy without exact entries, with these timings. */
static kiln_logic timed_only(kiln_logic l, const int64_t *sizes, const float *ms, int num_timings, int neighbors)
{
    l.num_exact = 0;
    l.timing_sizes = sizes;
    l.timing_ms = ms;
    l.num_timings = num_timings;
    l.neighbors = neighbors;
    return l;
}

/* The timing model: a size without an exact entry ranks a logic's solutions by the time predicted from the nearest
 * measured sizes, scaled by each solution's waves x K-tiles; exact entries still come first. */
static void test_timing_model(void)
{
    static const int list[] = {FAKE_FP8_MT128, FAKE_FP8_MT64};
    static const kiln_exact exact[] = {{8192, 8192, 8192, FAKE_FP8_MT64}};
    /* 128x128x64 tiles vs 64x64x64 tiles, ms at three measured sizes */
    static const int64_t sizes[] = {4096, 4096, 4096, 64, 64, 64, 256, 4096, 7168};
    static const float ms[] = {1.0f, 2.0f, 0.5f, 0.1f, 1.0f, 0.9f};
    const kiln_logic logic = {.arch = KILN_ARCH_SM90, .kind = KILN_KIND_FP8_SCALED, .source = "tuned.yaml",
                              .a_type = KILN_DTYPE_E4M3, .b_type = KILN_DTYPE_E4M3, .d_type = KILN_DTYPE_BF16,
                              .layout = KILN_LAYOUT_TN,
                              .solutions = list, .num_solutions = 2, .exact = exact, .num_exact = 1,
                              .distance = KILN_DISTANCE_LOG_MNK, .fallback = FAKE_FP8_MT128, .timing_sizes = sizes,
                              .timing_ms = ms, .num_timings = 3, .neighbors = 1};
    kiln_tables t = T;
    t.logics = &logic;
    t.num_logics = 1;
    kiln_problem p = fp8_problem(3008, 3008, 3008);
    kiln_select_input in = input(&p, NULL, 0);
    in.sm_count = 132;
    result r = run(&t, &in);
    int want_big[] = {FAKE_FP8_MT128, FAKE_FP8_MT64};
    expect_order(&r, want_big, 2, "model, 3008^3 (nearest 4096^3)");
    CHECK(contains(r.text, "predicted") && contains(r.text, "1 nearest measured sizes") &&
              contains(r.text, "4096x4096x4096"), "explain names the model and its sizes:\n%s", r.text);
    p = fp8_problem(96, 96, 96);
    r = run(&t, &in);
    int want_small[] = {FAKE_FP8_MT64, FAKE_FP8_MT128};
    expect_order(&r, want_small, 2, "model, 96^3 (nearest 64^3)");
    /* 64x64 tiles won at 256x4096x7168 (2 waves of 256 tiles), but at M = 333 they need 3 waves while 128x128 tiles
     * still fit one: 0.9 x 3/2 > 1.0 x 1/1 */
    p = fp8_problem(333, 4096, 7168);
    r = run(&t, &in);
    expect_order(&r, want_big, 2, "model scales by waves, 333x4096x7168");
    in.sm_count = 1000; /* one wave for both: the measured order holds */
    r = run(&t, &in);
    expect_order(&r, want_small, 2, "model on a wider device, 333x4096x7168");
    p = fp8_problem(8192, 8192, 8192); /* an exact entry beats the model */
    r = run(&t, &in);
    expect_order(&r, want_small, 2, "exact entry first");

    /* Within one wave the model still counts the CTAs (their operand traffic): 64x64 tiles won at 64x1024x8192 by 5%
     * with 16 CTAs against 8; at M = 128 they take 32 CTAs against 8 on 132 SMs, (1 + 32/132) / (1 + 16/132) =
     * 1.108 > 1.05, so the 128x128 tile comes first although both grids stay one wave. */
    static const int64_t one_wave_sizes[] = {64, 1024, 8192};
    static const float one_wave_ms[] = {1.05f, 1.0f};
    kiln_logic one_wave = timed_only(logic, one_wave_sizes, one_wave_ms, 1, 1);
    t.logics = &one_wave;
    in.sm_count = 132;
    p = fp8_problem(64, 1024, 8192);
    r = run(&t, &in);
    expect_order(&r, want_small, 2, "one wave, the measured size: its order");
    p = fp8_problem(128, 1024, 8192);
    r = run(&t, &in);
    expect_order(&r, want_big, 2, "one wave, twice the CTAs of the smaller tile");
    /* selection.share 0 (waves_only): one wave on both sides for both tiles, so the measured order holds */
    one_wave.waves_only = 1;
    r = run(&t, &in);
    expect_order(&r, want_small, 2, "one wave, waves only: the measured order");
    CHECK(contains(r.text, "waves only"), "explain says the model counts waves only:\n%s", r.text);
    one_wave.waves_only = 0;

    /* A solution not timed at the nearest measured size is not predicted from the farther ones alone: 64x64 tiles
     * were timed at 256x4096x7168 only (0.01 ms there would predict ~0.04 ms at 3008^3, against ~0.6 for 128x128
     * tiles from both sizes), so at 3008^3, nearest 4096^3, the 128x128 tile comes first. */
    static const float gap_ms[] = {1.0f, -1.0f, 0.5f, 0.1f, 1.0f, 0.01f};
    kiln_logic gap = timed_only(logic, sizes, gap_ms, 3, 2);
    t.logics = &gap;
    in.sm_count = 132;
    const struct {
        int64_t m, n, k;
        const int *want;
        const char *label;
    } gap_cases[] = {
        {3008, 3008, 3008, want_big, "not timed at the nearest size (4096^3): not predicted"},
        {300, 4096, 7168, want_small, "timed at the nearest size (256x4096x7168): predicted, the 0.01 ms tile first"},
    };
    for (int i = 0; i < 2; i++) {
        p = fp8_problem(gap_cases[i].m, gap_cases[i].n, gap_cases[i].k);
        r = run(&t, &in);
        expect_order(&r, gap_cases[i].want, 2, gap_cases[i].label);
        CHECK(contains(r.text, "not timed at the nearest measured size") == (i == 0), "%s:\n%s", gap_cases[i].label,
              r.text);
    }
    t.logics = &logic;
    in.sm_count = 1000;

    /* Grouped: the sizes are one group's, and the waves count every group's tiles. Timed with one group, 64x64 tiles
     * won at 256x4096x7168 on 1,000 SMs (256 tiles: one wave each). 8 masked groups of 333 rows there take 8 x 6 x 64
     * = 3,072 64x64 tiles (4 waves) against 8 x 3 x 32 = 768 128x128 tiles (1 wave): 0.9 x 4 > 1.0. Without
     * timed_groups the model counts one group on both sides, as before. */
    kiln_logic grouped = logic;
    grouped.kind = KILN_KIND_FP8_GROUPED;
    grouped.num_exact = 0;
    t.logics = &grouped;
    kiln_solution sols[FAKE_NUM_SOLUTIONS]; /* the two tiles as grouped kernels */
    memcpy(sols, T.solutions, sizeof sols);
    sols[FAKE_FP8_MT128].kind = sols[FAKE_FP8_MT64].kind = KILN_KIND_FP8_GROUPED;
    t.solutions = sols;
    p = fp8_problem(333, 4096, 7168);
    p.group_mode = KILN_GROUP_MASKED;
    p.groups = 8;
    r = run(&t, &in);
    expect_order(&r, want_small, 2, "grouped, timed_groups unknown: one group's waves");
    grouped.timed_groups = 1;
    r = run(&t, &in);
    expect_order(&r, want_big, 2, "grouped, timed with one group: every group's tiles fill the waves");
    grouped.timed_groups = 8; /* timed with 8 groups too: the measured order holds */
    p.m = 256;
    r = run(&t, &in);
    expect_order(&r, want_small, 2, "grouped, the timed size and groups");
}

/* With code required (a run on a device), solutions the build has no code object for drop out. */
static void test_code_required(void)
{
    kiln_problem p = fp8_problem(4096, 4096, 4096);
    kiln_select_input in = input(&p, NULL, FAKE_MAX_LDS);
    in.code = &T;
    result r = run(&T, &in);
    int want[] = {FAKE_FP8_MT128, FAKE_FP8_KMUL, FAKE_FP8_SPLITK, FAKE_FP8_MT64, FAKE_FP8_ANY};
    expect_order(&r, want, 5, "code required");
    CHECK(contains(r.text, "rejected by code"), "%s", r.text);
    p.a_type = p.b_type = KILN_DTYPE_E5M2;
    r = run(&T, &in);
    CHECK(r.status == KILN_STATUS_NO_SOLUTION && r.rejects == 1u << KILN_REJECT_NO_CODE, "only code rejects: 0x%x",
          r.rejects);
    in.skip = 1u << KILN_REJECT_NO_CODE;
    r = run(&T, &in);
    CHECK(r.status == KILN_STATUS_SUCCESS && r.count == 1 && r.out[0] == FAKE_E5M2_NOCODE, "code check skipped");
}

static void test_lookups(void)
{
    for (int r = 0; r < KILN_REJECT_COUNT; r++)
        CHECK(strcmp(kiln_reject_name((kiln_reject)r), "invalid") != 0, "name of reject %d", r);
    CHECK(strcmp(kiln_reject_name(KILN_REJECT_COUNT), "invalid") == 0, "out of range");
    CHECK(kiln_find_code_object(&T, T.solutions[FAKE_FP8_MT128].name) != NULL, "code object found");
    CHECK(kiln_find_code_object(&T, T.solutions[FAKE_FP8_NOCODE].name) == NULL, "no code object");
    kiln_problem p = fp8_problem(1, 1, 1);
    CHECK(kiln_logic_matches(&T.logics[0], "sm90", &p) && !kiln_logic_matches(&T.logics[0], "sm89", &p) &&
              !kiln_logic_matches(&T.logics[1], "sm90", &p),
          "logic keys");
}

/* kiln_code_index: the sorted index a handle builds finds what the linear search finds, for every name (the first of
 * equal names, in table order), and nothing for a name no code object has; unnamed entries are left out. */
static void test_code_index(void)
{
    static const unsigned char byte = 1;
    const kiln_code_object objs[] = {{"Attn_F8B_D128_b", &byte, 1}, {"Cijk_x", &byte, 1}, {NULL, &byte, 1},
                                     {"Attn_F8B_D128_a", &byte, 1}, {"Cijk_x", &byte, 1}, {"Attn_F8B_D64", &byte, 1},
                                     {"Cijk_w", &byte, 1}, {"Cijk_x", &byte, 1}};
    kiln_tables t;
    memset(&t, 0, sizeof t);
    t.code_objects = objs;
    t.num_code_objects = (int)(sizeof objs / sizeof objs[0]);
    kiln_tables linear = t;
    int n = -1;
    t.code_by_name = kiln_code_index(&t, &n);
    t.num_code_by_name = n;
    CHECK(t.code_by_name && n == t.num_code_objects - 1, "index of the %d named code objects: %d", t.num_code_objects - 1,
          n);
    for (int i = 1; i < n; i++)
        CHECK(strcmp(t.code_by_name[i - 1]->name, t.code_by_name[i]->name) <= 0, "index sorted at %d", i);
    for (int i = 0; i < t.num_code_objects; i++) {
        if (!objs[i].name)
            continue;
        const kiln_code_object *want = kiln_find_code_object(&linear, objs[i].name);
        CHECK(want && strcmp(want->name, objs[i].name) == 0 && want <= &objs[i], "linear search of %s", objs[i].name);
        CHECK(kiln_find_code_object(&t, objs[i].name) == want, "indexed search of %s: the linear search's entry",
              objs[i].name);
    }
    CHECK(kiln_find_code_object(&t, "Cijk_x") == &objs[1], "the first of equal names");
    const char *missing[] = {"", "Attn", "Attn_F8B_D128_", "Cijk_y", "Zz", "A"};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++)
        CHECK(!kiln_find_code_object(&t, missing[i]) && !kiln_find_code_object(&linear, missing[i]), "no %s",
              missing[i]);
    free((void *)t.code_by_name);
    kiln_tables none;
    memset(&none, 0, sizeof none);
    CHECK(!kiln_code_index(&none, &n) && n == 0, "no code objects: no index");
    CHECK(!kiln_find_code_object(&none, "Cijk_x"), "no code objects: nothing found");
}

/* Fast accumulation: a solution that keeps fp8 sums in wgmma's accumulator over all of K fits only problems that set
 * fast_accum (or K within one DepthU tile); such problems use the fast logics of their type where any exist. */
static void test_fast_accum(void)
{
    kiln_solution fast = T.solutions[FAKE_WG_FP8];
    fast.fast_accum = 1;
    kiln_problem p;
    kiln_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_F32, KILN_LAYOUT_TN, 256, 256, 1024);
    kiln_select_input in = input(&p, NULL, FAKE_MAX_LDS);
    char why[160] = "";
    CHECK(kiln_solution_fits(&fast, &in, why, sizeof why) == KILN_REJECT_ACCUM && contains(why, "fast_accum is 0"),
          "fast kernel, accurate problem: %s", why);
    CHECK(kiln_solution_fits(&T.solutions[FAKE_WG_FP8], &in, NULL, 0) == KILN_FITS, "promoted kernel fits");
    p.k = T.solutions[FAKE_WG_FP8].depth_u;
    CHECK(kiln_solution_fits(&fast, &in, NULL, 0) == KILN_FITS, "one K tile: nothing to promote");
    p.k = 1024;
    p.fast_accum = 1;
    CHECK(kiln_solution_fits(&fast, &in, NULL, 0) == KILN_FITS, "fast problem");
    CHECK(!strcmp(kiln_reject_name(KILN_REJECT_ACCUM), "accum"), "reject name");

    static const int list_a[] = {FAKE_FP8_MT128}, list_b[] = {FAKE_FP8_MT64};
    kiln_logic logics[2] = {fp8_logic("promoted.yaml", list_a, 1, FAKE_FP8_MT128),
                            fp8_logic("fast.yaml", list_b, 1, FAKE_FP8_MT64)};
    logics[1].fast_accum = 1;
    kiln_tables t = T;
    t.logics = logics;
    t.num_logics = 2;
    kiln_problem q = fp8_problem(256, 256, 256);
    kiln_select_input qin = input(&q, NULL, 0);
    result r = run(&t, &qin);
    int want_default[] = {FAKE_FP8_MT128};
    expect_order(&r, want_default, 1, "default: the promoted logic only");
    CHECK(!contains(r.text, "fast.yaml"), "the fast logic is not asked:\n%s", r.text);
    q.fast_accum = 1;
    r = run(&t, &qin);
    int want_fast[] = {FAKE_FP8_MT64};
    expect_order(&r, want_fast, 1, "fast_accum: the fast logic only");
    CHECK(contains(r.text, "fast_accum"), "explained:\n%s", r.text);
    logics[1].fast_accum = 0; /* no fast logic of the type: a fast problem uses the others */
    logics[0].fast_accum = 0;
    t.num_logics = 1;
    r = run(&t, &qin);
    expect_order(&r, want_default, 1, "fast_accum without a fast logic");
}

int main(void)
{
    T = fake_tables();
    test_exact();
    test_nearest();
    test_alignment();
    test_gsu();
    test_size();
    test_wgmma_geometry();
    test_grouped_geometry();
    test_top_k_and_determinism();
    test_no_solution();
    test_metrics_and_references();
    test_pooled_logics();
    test_timing_model();
    test_code_required();
    test_lookups();
    test_code_index();
    test_fast_accum();
    return test_summary("test_select");
}
