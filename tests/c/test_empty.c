/* Empty problems as cuBLAS does them (kiln.h, "Empty problems"): m, n or batch 0 launches nothing; k = 0 fills D with
 * zeros without C and bias, and otherwise launches a non-TMA kernel with no K tile. Fake tables and device. */
#include <stdint.h>
#include <string.h>

#include "fake_backend.h"
#include "test_util.h"

static kiln_args args_at(uintptr_t base)
{
    kiln_args a;
    memset(&a, 0, sizeof a);
    a.a = (const void *)(base + 0x100000);
    a.b = (const void *)(base + 0x200000);
    a.c = (const void *)(base + 0x300000);
    a.d = (void *)(base + 0x400000);
    a.scale_a = (const float *)(base + 0x500000);
    a.scale_b = (const float *)(base + 0x500010);
    a.bias = (const void *)(base + 0x600000);
    a.alpha = 1.0f;
    a.beta = 0.5f;
    return a;
}

static int is_no_gemm(kiln_handle h, const kiln_algo *a)
{
    const char *name = NULL;
    return a->solution_index == UINT32_MAX && a->workspace_bytes == 0 &&
           kiln_algo_name(h, a, &name) == KILN_STATUS_SUCCESS && name && strcmp(name, "kiln_no_gemm") == 0;
}

/* m, n or batch 0: every verb succeeds, query gives the no-GEMM algo, run touches nothing (NULL pointers too). */
static void test_nothing(kiln_handle h)
{
    kiln_problem cases[4];
    kiln_problem_init(&cases[0], E4M3, E4M3, BF16, TN, 0, 256, 128);
    kiln_problem_init(&cases[1], E4M3, E4M3, BF16, TN, 64, 0, 128);
    kiln_problem_init(&cases[2], F16, F16, F16, NN, 0, 0, 0);
    kiln_problem_init(&cases[3], F16, E4M3, F16, TN, 64, 64, 100);
    cases[3].batch = 0;
    kiln_args none;
    memset(&none, 0, sizeof none);
    for (int i = 0; i < 4; i++) {
        kiln_problem *p = &cases[i];
        kiln_algo algos[4];
        int n = -1;
        char text[2048];
        fake_reset();
        EXPECT_ON(h, kiln_check_problem(h, p), KILN_STATUS_SUCCESS);
        EXPECT_ON(h, kiln_query(h, p, NULL, algos, 4, &n), KILN_STATUS_SUCCESS);
        CHECK(n == 1 && is_no_gemm(h, &algos[0]), "case %d: one no-GEMM algo (%d)", i, n);
        EXPECT_ON(h, kiln_explain(h, p, NULL, text, sizeof text), KILN_STATUS_SUCCESS);
        CHECK(strstr(text, "nothing is launched") && strstr(text, "status: success"), "case %d:\n%s", i, text);
        EXPECT_ON(h, kiln_run(h, p, NULL, &none, NULL, 0, NULL), KILN_STATUS_SUCCESS);
        EXPECT_ON(h, kiln_run(h, p, &algos[0], &none, NULL, 0, NULL), KILN_STATUS_SUCCESS);
        CHECK(fake.launches == 0 && fake.zeros == 0 && fake.loads == 0 && fake.encodes == 0, "case %d: nothing ran",
              i);
        CHECK(kiln_last_error(h)[0] == '\0', "no error text after success: %s", kiln_last_error(h));
    }
    /* the rules still hold for an empty problem */
    kiln_problem p = cases[0];
    p.scale_b = (kiln_scale_mode)7;
    EXPECT_ON(h, kiln_check_problem(h, &p), KILN_STATUS_INVALID_VALUE);
    p = cases[0];
    p.layout = NN;
    EXPECT_ON(h, kiln_check_problem(h, &p), KILN_STATUS_NOT_SUPPORTED);
    p = cases[0];
    p.lda = 64; /* k = 128 */
    EXPECT_ON(h, kiln_check_problem(h, &p), KILN_STATUS_INVALID_VALUE);
    /* a run with a foreign algo is still refused */
    kiln_algo bad;
    memset(&bad, 0, sizeof bad);
    bad.name_hash = 12345;
    EXPECT_ON(h, kiln_run(h, &cases[0], &bad, &none, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO);
}

/* k = 0 without C and bias: D is zeroed by the backend's 2-D fill, one per batch unless the batches are packed. */
static void test_zero_fill(kiln_handle h)
{
    kiln_args args = args_at(0);
    void *stream = (void *)(uintptr_t)0xABC0;
    kiln_problem p;
    kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 100, 200, 0);
    p.ldd = 256;
    p.stride_d = 100 * 256;
    p.scale_a = KILN_SCALE_TENSOR; /* scales multiply a zero sum: still zero */
    kiln_algo algo;
    int n = 0;
    EXPECT_ON(h, kiln_query(h, &p, NULL, &algo, 1, &n), KILN_STATUS_SUCCESS);
    CHECK(n == 1 && is_no_gemm(h, &algo), "k = 0, no C, no bias: the no-GEMM algo");
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, stream), KILN_STATUS_SUCCESS);
    CHECK(fake.zeros == 1 && fake.launches == 0 && fake.zero[0].dst == args.d && fake.zero[0].pitch == 256 * 2 &&
              fake.zero[0].width == 200 * 2 && fake.zero[0].height == 100 && fake.zero[0].stream == stream,
          "one fill: %d fills, pitch %zu width %zu height %zu", fake.zeros, fake.zero[0].pitch, fake.zero[0].width,
          fake.zero[0].height);
    /* A and B are not read: NULL is fine */
    kiln_args no_ab = args;
    no_ab.a = no_ab.b = NULL;
    no_ab.scale_a = NULL;
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, &algo, &no_ab, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.zeros == 1, "A, B and scales may be NULL");
    /* but D may not */
    no_ab.d = NULL;
    EXPECT_ON(h, kiln_run(h, &p, NULL, &no_ab, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);

    /* packed batches: one fill over batch * m rows */
    p.batch = 3;
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.zeros == 1 && fake.zero[0].height == 300 && fake.zero[0].pitch == 512, "packed batches: %d fills",
          fake.zeros);
    /* padded batches: one fill each, stride_d apart */
    p.stride_d = 100 * 256 + 64;
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.zeros == 3 && fake.zero[0].height == 100 && fake.zero[1].height == 100 &&
              (uintptr_t)fake.zero[1].dst == (uintptr_t)args.d + (100 * 256 + 64) * 2,
          "padded batches: %d fills", fake.zeros);
    /* one row: the pitch is the row itself, whatever ldd says */
    kiln_problem_init(&p, F16, F16, F32, NN, 1, 8, 0);
    p.ldd = INT64_C(1) << 55;
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.zeros == 1 && fake.zero[0].pitch == 32 && fake.zero[0].width == 32 && fake.zero[0].height == 1,
          "one row: pitch %zu", fake.zero[0].pitch);
    CHECK(fake.launches == 0, "no kernel for a zero fill");

    /* no device: the fill cannot run */
    kiln_handle none = NULL;
    kiln_create_with_backend(&none, NULL);
    kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 100, 200, 0);
    CHECK(kiln_run(none, &p, NULL, &args, NULL, 0, NULL) == KILN_STATUS_NO_DEVICE, "k = 0 without a device");
    kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 0, 200, 16);
    CHECK(kiln_run(none, &p, NULL, &args, NULL, 0, NULL) == KILN_STATUS_SUCCESS, "nothing to do needs no device");
    kiln_destroy(none);
}

/* k = 0 with C or bias: a kernel of a non-TMA family with k = 0 and no K tile. */
static void test_k0_kernel(kiln_handle h)
{
    kiln_args args = args_at(0);
    args.a = args.b = NULL; /* not read */
    kiln_problem p;
    kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 1000, 3000, 0);
    p.has_bias = 1;
    p.bias_type = F32;
    p.activation = KILN_ACT_GELU;
    kiln_algo algos[8];
    int n = 0;
    EXPECT_ON(h, kiln_query(h, &p, NULL, algos, 8, &n), KILN_STATUS_SUCCESS);
    CHECK(n > 0, "candidates for k = 0 with a bias");
    for (int i = 0; i < n; i++) {
        const kiln_solution *s = &kiln_solutions[algos[i].solution_index];
        CHECK(!kiln_solution_wgmma(s) && s->gsu == 1, "candidate %s: no TMA, no split-K", s->name);
    }
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    const fake_launch *l = &fake.last[0];
    const kiln_solution *s = &kiln_solutions[algos[0].solution_index];
    uint32_t tiles = (uint32_t)(((1000 + s->mt0 - 1) / s->mt0) * ((3000 + s->mt1 - 1) / s->mt1));
    CHECK(fake.launches == 1 && fake.zeros == 0 && strcmp(l->symbol, s->name) == 0 && l->grid[0] == tiles &&
              l->grid[1] == 1 && l->grid[2] == 1 && l->block == (uint32_t)s->threads &&
              l->lds == (uint32_t)s->lds_bytes && l->arg_bytes == sizeof(kiln_gemm_params),
          "k = 0 launch of %s: grid %u (want %u)", s->name, l->grid[0], tiles);
    CHECK(l->params.k == 0 && l->params.k_tiles_per_split == 0 && l->params.bias == args.bias &&
              l->params.activation == KILN_ACT_GELU && l->params.m == 1000 && l->params.n == 3000,
          "k = 0 params: k %d, k tiles %d", l->params.k, l->params.k_tiles_per_split);

    /* the split-K algo does not take k = 0; the wgmma-only logic has nothing for it */
    kiln_algo splitk;
    memset(&splitk, 0, sizeof splitk);
    splitk.solution_index = FAKE_FP8_SPLITK;
    splitk.name_hash = kiln_solutions[FAKE_FP8_SPLITK].name_hash;
    splitk.gsu = 4;
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, &splitk, &args, (void *)(uintptr_t)0x7000000, (size_t)1 << 30, NULL),
           KILN_STATUS_INVALID_ALGO);
    kiln_problem_init(&p, E4M3, E4M3, F32, TN, 256, 256, 0);
    p.has_bias = 1;
    EXPECT_ON(h, kiln_query(h, &p, NULL, algos, 8, &n), KILN_STATUS_NO_SOLUTION);
    CHECK(strstr(kiln_last_error(h), "empty_k") != NULL, "says why: %s", kiln_last_error(h));
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_SOLUTION);
    CHECK(fake.launches == 0 && fake.encodes == 0, "no TMA kernel with k = 0");

    /* f16 GEMM with C: beta * C by the mma kernel */
    kiln_problem_init(&p, F16, F16, F16, NN, 256, 256, 0);
    p.has_c = 1;
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.last[0].params.k == 0 && fake.last[0].params.c == args.c &&
              fake.last[0].params.has_c == 1 && fake.last[0].grid[0] == 4,
          "GEMM k = 0 with C");
    /* f16 x prepacked e4m3 with a bias: ldb is 0 */
    kiln_problem_init(&p, F16, E4M3, F16, TN, 64, 64, 0);
    p.has_bias = 1;
    p.bias_type = F16;
    CHECK(p.ldb == 0 && p.b_prepacked, "prepacked ldb of k = 0");
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && strcmp(fake.last[0].symbol, kiln_solutions[FAKE_MIXED].name) == 0 &&
              fake.last[0].params.k_tiles_per_split == 0,
          "mixed k = 0");
}

int main(void)
{
    kiln_handle h = NULL;
    kiln_problem p;
    CHECK(kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 0, 0, 0) == KILN_STATUS_SUCCESS && p.lda == 0 && p.ldd == 0 &&
              p.stride_d == 0 && p.batch == 1,
          "kiln_problem_init takes zero sizes");
    CHECK(kiln_create_with_backend(&h, &fake_backend) == KILN_STATUS_SUCCESS, "fake device");
    test_nothing(h);
    test_zero_fill(h);
    test_k0_kernel(h);
    kiln_destroy(h);
    return test_summary("test_empty");
}
