/* Values a launch derives from the problem, at their limits: byte strides and extents that would overflow, tensor maps
 * the driver would refuse (cuTensorMapEncodeTiled: dims <= 2^32, strides multiples of 16 and < 2^40, boxes <= 256),
 * pointers whose operand wraps the address space. None may reach a launch; a TMA solution that cannot take the
 * problem does not fit, so selection falls to another family or reports why. */
#include <stdint.h>
#include <string.h>

#include "fake_backend.h"
#include "test_util.h"

static const int64_t BIG = INT64_C(1) << 62;

static kiln_args good_args(void)
{
    kiln_args a;
    memset(&a, 0, sizeof a);
    a.a = (const void *)(uintptr_t)0x100000;
    a.b = (const void *)(uintptr_t)0x200000;
    a.d = (void *)(uintptr_t)0x300000;
    a.bias = (const void *)(uintptr_t)0x600000;
    a.alpha = 1.0f;
    return a;
}

static kiln_problem problem(kiln_dtype d, int64_t m, int64_t n, int64_t k)
{
    kiln_problem p;
    kiln_problem_init(&p, E4M3, E4M3, d, TN, m, n, k);
    return p;
}

/* Every map the fake backend was asked for obeys the driver's rules. */
static int maps_legal(void)
{
    for (int i = 0; i < fake.encodes && i < 3; i++) {
        const fake_encode *e = &fake.encode[i];
        for (int d = 0; d < 3; d++)
            if (e->dims[d] < 1 || e->dims[d] > (UINT64_C(1) << 32) || e->box[d] < 1 || e->box[d] > 256)
                return 0;
        for (int s = 0; s < 2; s++)
            if (e->strides[s] % 16 || e->strides[s] >= (UINT64_C(1) << 40))
                return 0;
        if ((uintptr_t)e->base % 16 || (e->box[0] * (uint32_t)e->elem_bytes) % 16 ||
            e->box[0] * (uint32_t)e->elem_bytes > 128)
            return 0;
    }
    return 1;
}

/* lda = 2^62: with two rows A spans 2^62 bytes, refused at check time; with one row the stride is never stepped
 * over, so the mma family runs it and the TMA family (whose map would carry it) does not fit. */
static void test_huge_leading_dims(kiln_handle h)
{
    kiln_args args = good_args();
    kiln_algo algos[4];
    int n = 0;
    kiln_problem p = problem(BF16, 2, 256, 128);
    p.lda = BIG;
    fake_reset();
    EXPECT_ON(h, kiln_check_problem(h, &p), KILN_STATUS_OVERFLOW);
    CHECK(strstr(kiln_last_error(h), "lda = 4611686018427387904") && strstr(kiln_last_error(h), "2^57"), "%s",
          kiln_last_error(h));
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    p = problem(BF16, 4, 256, 128);
    p.lda = BIG; /* (m - 1) * lda overflows int64 */
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    CHECK(strstr(kiln_last_error(h), "overflow int64") != NULL, "%s", kiln_last_error(h));

    /* one row, the wgmma-only logic: the map's row stride lda * 1 byte would be 2^62 */
    p = problem(F32, 1, 256, 128);
    p.lda = BIG;
    EXPECT_ON(h, kiln_check_problem(h, &p), KILN_STATUS_SUCCESS);
    EXPECT_ON(h, kiln_query(h, &p, NULL, algos, 4, &n), KILN_STATUS_OVERFLOW);
    CHECK(strstr(kiln_last_error(h), "lda = 4611686018427387904: the A tensor map's row stride") &&
              strstr(kiln_last_error(h), "< 2^40"),
          "%s", kiln_last_error(h));
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    kiln_algo wg;
    memset(&wg, 0, sizeof wg);
    wg.solution_index = FAKE_WG_FP8;
    wg.name_hash = kiln_solutions[FAKE_WG_FP8].name_hash;
    wg.gsu = 1;
    EXPECT_ON(h, kiln_run(h, &p, &wg, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    /* 2^40 exactly is out; 2^40 - 16 is in */
    p.lda = INT64_C(1) << 40;
    EXPECT_ON(h, kiln_run(h, &p, &wg, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    CHECK(fake.launches == 0 && fake.encodes == 0, "no launch, no map: %d, %d", fake.launches, fake.encodes);
    p.lda = (INT64_C(1) << 40) - 16;
    EXPECT_ON(h, kiln_run(h, &p, &wg, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.encodes == 2 + (fake.last[0].tma.d_tma > 0) &&
              fake.encode[0].strides[0] == (UINT64_C(1) << 40) - 16 &&
              maps_legal(),
          "largest legal row stride");

    /* one row, a logic with mma kernels: they take it (lda is never stepped over) */
    p = problem(BF16, 1, 256, 128);
    p.lda = BIG;
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.encodes == 0 && fake.last[0].params.lda == BIG, "mma with one row");

    /* B: ldb of one column of a TN B */
    p = problem(F32, 256, 1, 128);
    p.ldb = BIG;
    fake_reset();
    EXPECT_ON(h, kiln_query(h, &p, NULL, algos, 4, &n), KILN_STATUS_OVERFLOW);
    CHECK(strstr(kiln_last_error(h), "ldb = 4611686018427387904: the B tensor map") != NULL, "%s",
          kiln_last_error(h));
    /* a batch stride of 2^41 bytes */
    p = problem(F32, 128, 128, 128);
    p.batch = 2;
    p.stride_a = INT64_C(1) << 41;
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    CHECK(strstr(kiln_last_error(h), "batch stride") != NULL, "%s", kiln_last_error(h));
    /* ldd, ldc and strides of D: extents */
    p = problem(BF16, 3, 64, 64);
    p.ldd = BIG;
    EXPECT_ON(h, kiln_check_problem(h, &p), KILN_STATUS_OVERFLOW);
    p = problem(BF16, 64, 64, 64);
    p.batch = 3;
    p.stride_d = INT64_MAX / 2;
    EXPECT_ON(h, kiln_check_problem(h, &p), KILN_STATUS_OVERFLOW);
    p.stride_d = INT64_MAX;
    EXPECT_ON(h, kiln_check_problem(h, &p), KILN_STATUS_OVERFLOW);
    CHECK(fake.launches == 0, "no launch");
}

/* An operand whose pointer plus extent wraps the address space. */
static void test_pointer_wrap(kiln_handle h)
{
    kiln_problem p = problem(BF16, 64, 64, 64);
    kiln_args args = good_args();
    args.a = (const void *)(UINTPTR_MAX - 15);
    fake_reset();
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    args = good_args();
    args.d = (void *)(UINTPTR_MAX - 1);
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    p.k = 0; /* the zero fill checks D too */
    p.lda = 0;
    EXPECT_ON(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    CHECK(fake.launches == 0 && fake.zeros == 0, "nothing ran");
}

/* kiln_tma_maps on its own: the rules a table entry or problem can break. */
static void test_tma_rules(void)
{
    kiln_solution s = kiln_solutions[FAKE_WG_FP8];
    kiln_problem p = problem(F32, 256, 256, 256);
    kiln_tma_map maps[2];
    char why[200];
    CHECK(kiln_tma_maps(&s, &p, NULL, maps, why, sizeof why) == KILN_FITS, "fits: %s", why);
    CHECK(maps[0].dims[0] == 256 && maps[0].dims[1] == 256 && maps[0].dims[2] == 1 && maps[0].strides[0] == 256 &&
              maps[0].strides[1] == 65536 && maps[0].box[0] == 128 && maps[0].box[1] == 128 && maps[0].box[2] == 1,
          "A's map");
    p.lda = 264; /* a multiple of 8, not of 16 bytes: the align predicate of a 16-aligned solution catches it first */
    CHECK(kiln_tma_maps(&s, &p, NULL, maps, why, sizeof why) == KILN_REJECT_ALIGN_A && strstr(why, "multiples of 16"),
          "row stride %% 16: %s", why);
    p.lda = 256;
    kiln_args args = good_args();
    args.b = (const void *)(uintptr_t)0x200008;
    CHECK(kiln_tma_maps(&s, &p, &args, maps, why, sizeof why) == KILN_REJECT_ALIGN_B && strstr(why, "16-byte"),
          "base %% 16: %s", why);
    p.k = 0;
    CHECK(kiln_tma_maps(&s, &p, NULL, maps, why, sizeof why) == KILN_REJECT_EMPTY_K, "k = 0: %s", why);
    p.k = 256;
    s.mt1 = 512;
    CHECK(kiln_tma_maps(&s, &p, NULL, maps, why, sizeof why) == KILN_REJECT_PROBLEM && strstr(why, "1..256"),
          "box side: %s", why);
    s.mt1 = 128;
    p.batch = 2;
    p.stride_b = -16; /* never valid (kiln_check_problem refuses it), still no wrap here */
    CHECK(kiln_tma_maps(&s, &p, NULL, maps, why, sizeof why) == KILN_REJECT_SIZE, "negative stride: %s", why);
    /* prepacked B: its rows run to ldb */
    kiln_problem mixed;
    kiln_problem_init(&mixed, F16, E4M3, F32, TN, 256, 512, 104);
    s = kiln_solutions[FAKE_WG_MIXED];
    CHECK(kiln_tma_maps(&s, &mixed, NULL, maps, why, sizeof why) == KILN_FITS && maps[1].dims[0] == 112 &&
              maps[0].box[0] == 64 && maps[0].strides[0] == 208,
          "mixed maps");
}

int main(void)
{
    kiln_handle h = NULL;
    CHECK(kiln_create_with_backend(&h, &fake_backend) == KILN_STATUS_SUCCESS, "fake device");
    test_huge_leading_dims(h);
    test_pointer_wrap(h);
    test_tma_rules();
    kiln_destroy(h);
    return test_summary("test_overflow");
}
