/* The public API over fake tables and a fake device: every invalid call returns its status and launches nothing;
 * valid runs launch exactly what kiln_abi.h describes (the TMA-fed family: test_wgmma.c). */
#include <stdint.h>
#include <string.h>

#include "dtype.h"
#include "fake_backend.h"
#include "test_util.h"

static const void *addr(uintptr_t a) { return (const void *)a; }

static kiln_problem fp8_problem(int64_t m, int64_t n, int64_t k)
{
    kiln_problem p;
    kiln_problem_init(&p, E4M3, E4M3, BF16, TN, m, n, k);
    return p;
}

static kiln_args good_args(void)
{
    kiln_args a;
    memset(&a, 0, sizeof a);
    a.a = addr(0x100000);
    a.b = addr(0x200000);
    a.d = (void *)(uintptr_t)0x300000;
    a.c = addr(0x400000);
    a.scale_a = (const float *)addr(0x500000);
    a.scale_b = (const float *)addr(0x500010);
    a.bias = addr(0x600000);
    a.alpha = 1.5f;
    a.beta = 0.5f;
    return a;
}

static void test_strings(void)
{
    for (int s = 0; s <= KILN_STATUS_INTERNAL_ERROR; s++) {
        CHECK(strcmp(kiln_status_string((kiln_status)s), "unknown status") != 0, "status %d has a text", s);
        for (int t = 0; t < s; t++)
            CHECK(strcmp(kiln_status_string((kiln_status)s), kiln_status_string((kiln_status)t)) != 0,
                  "statuses %d and %d share a text", s, t);
    }
    CHECK(strcmp(kiln_status_string((kiln_status)13), "unknown status") == 0, "unknown status");
    /* every dtype has a row in the dtype table */
    for (int t = 0; t < KILN_DTYPE_COUNT; t++)
        CHECK(strcmp(kiln_dtype_name((kiln_dtype)t), "invalid") != 0 && kiln_dtype_bytes((kiln_dtype)t) > 0,
              "dtype %d", t);
    CHECK(strcmp(kiln_dtype_name(KILN_DTYPE_COUNT), "invalid") == 0, "dtype out of range");
    CHECK(strcmp(kiln_dtype_name(KILN_DTYPE_E4M3FNUZ), "e4m3fnuz") == 0, "dtype name");
}

static void test_problem_init(void)
{
    kiln_problem p;
    EXPECT(kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 100, 200, 300), KILN_STATUS_SUCCESS);
    CHECK(p.batch == 1 && p.lda == 300 && p.ldb == 300 && p.ldc == 200 && p.ldd == 200, "TN leading dims");
    CHECK(p.stride_a == 30000 && p.stride_b == 60000 && p.stride_c == 20000 && p.stride_d == 20000, "TN strides");
    CHECK(p.scale_a == KILN_SCALE_NONE && p.scale_b == KILN_SCALE_NONE && !p.has_bias && !p.has_c &&
              p.activation == KILN_ACT_NONE && !p.b_prepacked,
          "no epilogue by default");
    EXPECT(kiln_problem_init(&p, F16, F16, F16, NN, 100, 200, 300), KILN_STATUS_SUCCESS);
    CHECK(p.ldb == 200 && p.stride_b == 60000, "NN B is [k][n]");
    EXPECT(kiln_problem_init(&p, F16, E4M3, F16, TN, 100, 200, 300), KILN_STATUS_SUCCESS);
    CHECK(p.b_prepacked == 1 && p.ldb == 304 && p.stride_b == 200 * 304, "mixed defaults to a prepacked B");

    EXPECT(kiln_problem_init(NULL, E4M3, E4M3, BF16, TN, 1, 1, 1), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_problem_init(&p, E4M3, E4M3, BF16, TN, -1, 1, 1), KILN_STATUS_INVALID_VALUE);
    EXPECT(kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 0, 0, 0), KILN_STATUS_SUCCESS); /* empty: test_empty */
    EXPECT(kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 1, 1, -5), KILN_STATUS_INVALID_VALUE);
    EXPECT(kiln_problem_init(&p, E4M3, E4M3, BF16, (kiln_layout)2, 1, 1, 1), KILN_STATUS_INVALID_VALUE);
    EXPECT(kiln_problem_init(&p, (kiln_dtype)7, E4M3, BF16, TN, 1, 1, 1), KILN_STATUS_INVALID_VALUE);
    EXPECT(kiln_problem_init(&p, E4M3, E4M3, BF16, TN, INT64_C(1) << 31, 1, 1), KILN_STATUS_OVERFLOW);
}

/* Checks that one field change makes kiln_check_problem return `want`. */
#define EXPECT_PROBLEM(h, base, change, want)                                                                        \
    do {                                                                                                              \
        kiln_problem q_ = (base);                                                                                     \
        change;                                                                                                       \
        kiln_status got_ = kiln_check_problem((h), &q_);                                                              \
        CHECK(got_ == (want), "%s -> %s, want %s", #change, kiln_status_string(got_), kiln_status_string(want));     \
    } while (0)

static void test_check_problem(kiln_handle h)
{
    kiln_problem f8 = fp8_problem(128, 256, 512), mixed, gemm;
    kiln_problem_init(&mixed, F16, E4M3, F16, TN, 64, 64, 100);
    kiln_problem_init(&gemm, F16, F16, F16, NN, 64, 64, 64);
    EXPECT(kiln_check_problem(NULL, &f8), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_check_problem(h, NULL), KILN_STATUS_NULL_POINTER);
    EXPECT_PROBLEM(h, f8, (void)0, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, mixed, (void)0, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, gemm, (void)0, KILN_STATUS_SUCCESS);

    /* enums and flags */
    EXPECT_PROBLEM(h, f8, q_.a_type = (kiln_dtype)99, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.d_type = (kiln_dtype)-1, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.layout = (kiln_layout)5, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.scale_a = KILN_SCALE_COUNT, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.scale_b = (kiln_scale_mode)-1, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.activation = KILN_ACT_COUNT, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.has_bias = 2, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.fast_accum = 2, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.fast_accum = -1, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, gemm, q_.has_c = -1, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.b_prepacked = 3, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, (q_.has_bias = 1, q_.bias_type = (kiln_dtype)42), KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.bias_type = (kiln_dtype)42, KILN_STATUS_SUCCESS); /* ignored without a bias */

    /* sizes */
    EXPECT_PROBLEM(h, f8, q_.m = -1, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.n = -1, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.k = -3, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.batch = -1, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.m = 0, KILN_STATUS_SUCCESS); /* empty problems: test_empty.c */
    EXPECT_PROBLEM(h, f8, q_.batch = 0, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, f8, (q_.m = INT64_C(1) << 31, q_.stride_a = q_.stride_d = 0), KILN_STATUS_OVERFLOW);
    EXPECT_PROBLEM(h, f8, (q_.k = INT64_C(1) << 31, q_.lda = q_.ldb = q_.k), KILN_STATUS_OVERFLOW);
    EXPECT_PROBLEM(h, f8, q_.batch = 65536, KILN_STATUS_OVERFLOW);

    /* type combinations */
    EXPECT_PROBLEM(h, f8, q_.b_type = KILN_DTYPE_E5M2, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, f8, (q_.a_type = KILN_DTYPE_E5M2FNUZ, q_.b_type = KILN_DTYPE_E4M3FNUZ), KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, f8, q_.b_type = KILN_DTYPE_E4M3FNUZ, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, f8, q_.d_type = KILN_DTYPE_F32, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, f8, q_.d_type = E4M3, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, f8, (q_.scale_a = KILN_SCALE_VECTOR, q_.scale_b = KILN_SCALE_TENSOR), KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, f8, q_.has_c = 1, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, f8, q_.b_prepacked = 1, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, mixed, q_.b_prepacked = 0, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, mixed, q_.layout = NN, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, mixed, q_.scale_a = KILN_SCALE_TENSOR, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, mixed, q_.scale_b = KILN_SCALE_VECTOR, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, mixed, q_.ldb = 100, KILN_STATUS_INVALID_VALUE); /* must be the packed 112 */
    EXPECT_PROBLEM(h, mixed, q_.ldb = 128, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, mixed, q_.has_c = 1, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, mixed, q_.d_type = KILN_DTYPE_F32, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, mixed, q_.d_type = BF16, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, mixed, q_.b_type = KILN_DTYPE_E5M2FNUZ, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, gemm, q_.d_type = KILN_DTYPE_F32, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, gemm, q_.d_type = BF16, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, gemm, q_.scale_a = KILN_SCALE_TENSOR, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, gemm, q_.scale_b = KILN_SCALE_VECTOR, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, gemm, q_.has_c = 1, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, gemm, q_.b_type = BF16, KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, gemm, (q_.a_type = q_.b_type = q_.d_type = KILN_DTYPE_F32), KILN_STATUS_NOT_SUPPORTED);
    EXPECT_PROBLEM(h, gemm, q_.a_type = E4M3, KILN_STATUS_NOT_SUPPORTED); /* fp8 x f16 */
    EXPECT_PROBLEM(h, f8, (q_.has_bias = 1, q_.bias_type = F16), KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, f8, (q_.has_bias = 1, q_.bias_type = E4M3), KILN_STATUS_NOT_SUPPORTED);

    /* leading dimensions and strides */
    EXPECT_PROBLEM(h, f8, q_.lda = 511, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.ldb = 511, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, gemm, q_.ldb = 63, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.ldd = 255, KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, gemm, (q_.has_c = 1, q_.ldc = 63), KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, gemm, q_.ldc = 0, KILN_STATUS_SUCCESS); /* C unused */
    EXPECT_PROBLEM(h, f8, q_.lda = 4096, KILN_STATUS_SUCCESS);
    EXPECT_PROBLEM(h, f8, (q_.batch = 2, q_.stride_a = -1), KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, (q_.batch = 2, q_.stride_a = 0, q_.stride_b = 0), KILN_STATUS_SUCCESS); /* broadcast */
    EXPECT_PROBLEM(h, f8, (q_.batch = 2, q_.stride_d = 128 * 256 - 1), KILN_STATUS_INVALID_VALUE);
    EXPECT_PROBLEM(h, f8, q_.stride_d = 0, KILN_STATUS_SUCCESS); /* ignored at batch 1 */

    /* extents beyond int64 */
    EXPECT_PROBLEM(h, f8, (q_.batch = 2, q_.stride_a = INT64_MAX - 10), KILN_STATUS_OVERFLOW);
    EXPECT_PROBLEM(h, f8, q_.lda = INT64_MAX / 64, KILN_STATUS_OVERFLOW);
    EXPECT_PROBLEM(h, f8, (q_.batch = 2, q_.ldd = INT64_MAX / 64), KILN_STATUS_OVERFLOW);
    EXPECT_PROBLEM(h, f8, (q_.m = q_.n = 2000000000, q_.ldd = q_.n, q_.d_type = KILN_DTYPE_F32),
                   KILN_STATUS_OVERFLOW); /* D is 1.6e19 bytes */
}

static void test_no_device(void)
{
    kiln_handle h = NULL;
    const char *arch = NULL;
    EXPECT(kiln_create(NULL), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_destroy(NULL), KILN_STATUS_NULL_POINTER);

    /* kiln_create binds to a real GPU where there is one; only run on it when there is none */
    EXPECT(kiln_create(&h), KILN_STATUS_SUCCESS);
    EXPECT(kiln_device_arch(h, &arch), KILN_STATUS_SUCCESS);
    CHECK(arch && arch[0], "kiln_create gives an arch");
    kiln_problem p = fp8_problem(4096, 4096, 4096);
    kiln_args args = good_args();
    if (strcmp(arch, "none") == 0)
        EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_DEVICE);
    EXPECT(kiln_destroy(h), KILN_STATUS_SUCCESS);

    EXPECT(kiln_create_with_backend(&h, NULL), KILN_STATUS_SUCCESS);
    EXPECT(kiln_device_arch(h, &arch), KILN_STATUS_SUCCESS);
    CHECK(strcmp(arch, "none") == 0, "no device: arch %s", arch);
    EXPECT(kiln_device_arch(NULL, &arch), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_device_arch(h, NULL), KILN_STATUS_NULL_POINTER);
    kiln_algo algos[4];
    int n = -1;
    EXPECT(kiln_query(h, &p, NULL, algos, 4, &n), KILN_STATUS_NO_SOLUTION);
    CHECK(n == 0, "nothing returned");
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_DEVICE);
    /* validation still comes first */
    args.a = NULL;
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    args = good_args();

    EXPECT(kiln_set_arch(h, NULL), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_set_arch(NULL, "sm90"), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_set_arch(h, ""), KILN_STATUS_INVALID_VALUE);
    EXPECT(kiln_set_arch(h, "an_arch_name_much_longer_than_the_handle_keeps"), KILN_STATUS_INVALID_VALUE);
    EXPECT(kiln_set_arch(h, "sm90"), KILN_STATUS_SUCCESS);
    EXPECT(kiln_device_arch(h, &arch), KILN_STATUS_SUCCESS);
    CHECK(strcmp(arch, "sm90") == 0, "set arch");
    EXPECT(kiln_query(h, &p, NULL, algos, 4, &n), KILN_STATUS_SUCCESS);
    CHECK(n == 4 && algos[0].solution_index == FAKE_FP8_BIG_LDS, "no device limits: BIG_LDS first (%d)", n);
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_DEVICE);
    EXPECT(kiln_destroy(h), KILN_STATUS_SUCCESS);
}

static void test_query(kiln_handle h)
{
    kiln_problem p = fp8_problem(4096, 4096, 4096);
    kiln_algo algos[8];
    int n = -1;
    /* on the device, FAKE_FP8_NOCODE (no code object) is not offered */
    const int want[] = {FAKE_FP8_MT128, FAKE_FP8_KMUL, FAKE_FP8_SPLITK, FAKE_FP8_MT64, FAKE_FP8_ANY};
    EXPECT(kiln_query(h, &p, NULL, algos, 8, &n), KILN_STATUS_SUCCESS);
    CHECK(n == 5, "5 candidates, got %d", n);
    for (int i = 0; i < n && i < 5; i++) {
        const kiln_solution *s = &kiln_solutions[want[i]];
        CHECK(algos[i].solution_index == (uint32_t)want[i] && algos[i].name_hash == s->name_hash &&
                  algos[i].gsu == (uint32_t)s->gsu,
              "algo %d is solution %d", i, want[i]);
        uint64_t ws = s->gsu > 1 ? (uint64_t)s->gsu * 4096 * 4096 * 4 : 0;
        CHECK(algos[i].workspace_bytes == ws, "algo %d workspace %llu", i, (unsigned long long)algos[i].workspace_bytes);
        const char *name = NULL;
        EXPECT(kiln_algo_name(h, &algos[i], &name), KILN_STATUS_SUCCESS);
        CHECK(name && strcmp(name, s->name) == 0, "algo name round trip");
    }
    EXPECT(kiln_query(h, &p, NULL, algos, 2, &n), KILN_STATUS_SUCCESS);
    CHECK(n == 2 && algos[1].solution_index == FAKE_FP8_KMUL, "top-2");

    kiln_algo moved = algos[0];
    const char *name = NULL;
    moved.solution_index = 7; /* a stale index: found again by its hash */
    EXPECT(kiln_algo_name(h, &moved, &name), KILN_STATUS_SUCCESS);
    CHECK(name && strcmp(name, kiln_solutions[FAKE_FP8_MT128].name) == 0, "found by hash");
    moved.name_hash ^= 1;
    EXPECT(kiln_algo_name(h, &moved, &name), KILN_STATUS_INVALID_ALGO);
    EXPECT(kiln_algo_name(NULL, &moved, &name), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_algo_name(h, NULL, &name), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_algo_name(h, &moved, NULL), KILN_STATUS_NULL_POINTER);

    EXPECT(kiln_query(NULL, &p, NULL, algos, 1, &n), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_query(h, NULL, NULL, algos, 1, &n), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_query(h, &p, NULL, NULL, 1, &n), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_query(h, &p, NULL, algos, 1, NULL), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_query(h, &p, NULL, algos, 0, &n), KILN_STATUS_INVALID_VALUE);
    p.k = -1;
    n = -1;
    EXPECT(kiln_query(h, &p, NULL, algos, 1, &n), KILN_STATUS_INVALID_VALUE);
    CHECK(n == 0, "nothing returned on error");

    /* why nothing passes: alignment, launch limits, or no solution at all */
    kiln_problem_init(&p, F16, E4M3, F16, TN, 64, 64, 100);
    p.lda = 101;
    EXPECT(kiln_query(h, &p, NULL, algos, 1, &n), KILN_STATUS_MISALIGNED);
    p = fp8_problem(INT64_C(1) << 27, INT64_C(1) << 27, 4096); /* 2^44 tiles of 32x32 at best */
    EXPECT(kiln_query(h, &p, NULL, algos, 1, &n), KILN_STATUS_OVERFLOW);
    p = fp8_problem(64, 64, 64);
    p.b_type = KILN_DTYPE_E5M2;
    EXPECT(kiln_query(h, &p, NULL, algos, 1, &n), KILN_STATUS_NO_SOLUTION);
    p.a_type = KILN_DTYPE_E5M2; /* its only solution has no code object */
    EXPECT(kiln_query(h, &p, NULL, algos, 1, &n), KILN_STATUS_NO_CODE_FOR_DEVICE);
    /* pointer alignment filters when args are given */
    kiln_args args = good_args();
    p = fp8_problem(4096, 4096, 4096);
    args.a = addr(0x100008);
    EXPECT(kiln_query(h, &p, &args, algos, 8, &n), KILN_STATUS_SUCCESS);
    CHECK(n == 1 && algos[0].solution_index == FAKE_FP8_ANY, "misaligned A leaves the align-1 fallback");
}

static void test_explain(kiln_handle h)
{
    char buf[4096];
    kiln_problem p = fp8_problem(4096, 4096, 4096);
    EXPECT(kiln_explain(h, &p, NULL, buf, sizeof buf), KILN_STATUS_SUCCESS);
    CHECK(strstr(buf, "winner: [0]") && strstr(buf, "device: sm90 (fake)") && strstr(buf, "status: success"),
          "explain text:\n%s", buf);
    char small[16];
    EXPECT(kiln_explain(h, &p, NULL, small, sizeof small), KILN_STATUS_SUCCESS);
    CHECK(strlen(small) == sizeof small - 1, "truncated to the buffer");
    p.lda = 1;
    EXPECT(kiln_explain(h, &p, NULL, buf, sizeof buf), KILN_STATUS_INVALID_VALUE);
    CHECK(strstr(buf, "problem rejected") != NULL, "says why: %s", buf);
    EXPECT(kiln_explain(h, &p, NULL, NULL, 10), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_explain(h, &p, NULL, buf, 0), KILN_STATUS_INVALID_VALUE);
    EXPECT(kiln_explain(NULL, &p, NULL, buf, sizeof buf), KILN_STATUS_NULL_POINTER);
}

/* Every invalid run: its status, and not one launch or module load. */
static void test_run_errors(kiln_handle h)
{
    kiln_problem p = fp8_problem(4096, 4096, 4096), q;
    kiln_args args = good_args(), a;
    kiln_algo algos[8];
    int n;
    fake_reset();
    EXPECT(kiln_query(h, &p, NULL, algos, 8, &n), KILN_STATUS_SUCCESS);
    kiln_algo splitk = algos[2], kmul = algos[1], nocode = algos[0];
    nocode.solution_index = FAKE_FP8_NOCODE;
    nocode.name_hash = kiln_solutions[FAKE_FP8_NOCODE].name_hash;
    CHECK(splitk.solution_index == FAKE_FP8_SPLITK && kmul.solution_index == FAKE_FP8_KMUL, "algos");

    EXPECT(kiln_run(NULL, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_run(h, NULL, NULL, &args, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_run(h, &p, NULL, NULL, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    q = p, q.k = -1;
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_INVALID_VALUE);
    q = p, q.d_type = E4M3;
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_NOT_SUPPORTED);

    /* required pointers */
    a = args, a.a = NULL;
    EXPECT(kiln_run(h, &p, NULL, &a, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    a = args, a.b = NULL;
    EXPECT(kiln_run(h, &p, NULL, &a, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    a = args, a.d = NULL;
    EXPECT(kiln_run(h, &p, NULL, &a, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    a = args, a.scale_a = NULL, q = p, q.scale_a = KILN_SCALE_TENSOR;
    EXPECT(kiln_run(h, &q, NULL, &a, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    a = args, a.scale_b = NULL, q = p, q.scale_b = KILN_SCALE_VECTOR;
    EXPECT(kiln_run(h, &q, NULL, &a, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    a = args, a.bias = NULL, q = p, q.has_bias = 1;
    EXPECT(kiln_run(h, &q, NULL, &a, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);
    kiln_problem gemm;
    kiln_problem_init(&gemm, F16, F16, F16, NN, 256, 256, 256);
    gemm.has_c = 1;
    a = args, a.c = NULL;
    EXPECT(kiln_run(h, &gemm, NULL, &a, NULL, 0, NULL), KILN_STATUS_NULL_POINTER);

    /* element alignment of every pointer, then the kernel's */
    a = args, a.d = (void *)(uintptr_t)0x300001;
    EXPECT(kiln_run(h, &p, NULL, &a, NULL, 0, NULL), KILN_STATUS_MISALIGNED);
    a = args, a.scale_a = (const float *)addr(0x500002), q = p, q.scale_a = KILN_SCALE_TENSOR;
    EXPECT(kiln_run(h, &q, NULL, &a, NULL, 0, NULL), KILN_STATUS_MISALIGNED);
    a = args, a.bias = addr(0x600001), q = p, q.has_bias = 1, q.bias_type = BF16;
    EXPECT(kiln_run(h, &q, NULL, &a, NULL, 0, NULL), KILN_STATUS_MISALIGNED);
    a = args, a.a = addr(0x100008);
    EXPECT(kiln_run(h, &p, &algos[0], &a, NULL, 0, NULL), KILN_STATUS_MISALIGNED);
    kiln_problem mixed;
    kiln_problem_init(&mixed, F16, E4M3, F16, TN, 64, 64, 100);
    mixed.lda = 101;
    EXPECT(kiln_run(h, &mixed, NULL, &args, NULL, 0, NULL), KILN_STATUS_MISALIGNED);

    /* algos that do not fit */
    kiln_algo bad = algos[0];
    bad.name_hash ^= 1;
    EXPECT(kiln_run(h, &p, &bad, &args, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO);
    bad = algos[0], bad.gsu = 2;
    EXPECT(kiln_run(h, &p, &bad, &args, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO);
    q = fp8_problem(4096, 4096, 4000); /* KMUL needs k % 128 == 0 */
    EXPECT(kiln_run(h, &q, &kmul, &args, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO);
    kiln_algo big = algos[0];
    big.solution_index = FAKE_FP8_BIG_LDS;
    big.name_hash = kiln_solutions[FAKE_FP8_BIG_LDS].name_hash;
    EXPECT(kiln_run(h, &p, &big, &args, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO); /* LDS beyond the device */
    kiln_algo foreign = algos[0];
    foreign.solution_index = FAKE_GEMM;
    foreign.name_hash = kiln_solutions[FAKE_GEMM].name_hash;
    EXPECT(kiln_run(h, &p, &foreign, &args, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO); /* another problem type */

    /* workspace of the split-K algo: 4 * 4096 * 4096 * 4 bytes, 16-byte aligned */
    void *ws = (void *)(uintptr_t)0x7000000;
    size_t need = (size_t)splitk.workspace_bytes;
    EXPECT(kiln_run(h, &p, &splitk, &args, ws, need - 1, NULL), KILN_STATUS_WORKSPACE_TOO_SMALL);
    EXPECT(kiln_run(h, &p, &splitk, &args, NULL, need, NULL), KILN_STATUS_NULL_POINTER);
    EXPECT(kiln_run(h, &p, &splitk, &args, (char *)ws + 4, need, NULL), KILN_STATUS_MISALIGNED);

    /* no code */
    EXPECT(kiln_run(h, &p, &nocode, &args, NULL, 0, NULL), KILN_STATUS_NO_CODE_FOR_DEVICE);
    q = p, q.b_type = KILN_DTYPE_E5M2;
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_SOLUTION);
    q.a_type = KILN_DTYPE_E5M2;
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_CODE_FOR_DEVICE);
    q = fp8_problem(INT64_C(1) << 27, INT64_C(1) << 27, 4096);
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_OVERFLOW);
    EXPECT(kiln_set_arch(h, "sm89"), KILN_STATUS_SUCCESS);
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_CODE_FOR_DEVICE);
    EXPECT(kiln_query(h, &p, NULL, algos, 8, &n), KILN_STATUS_SUCCESS);
    CHECK(n == 1 && algos[0].solution_index == FAKE_FP8_SM89, "sm89 selection from an sm90 device");
    EXPECT(kiln_set_arch(h, "sm90"), KILN_STATUS_SUCCESS);

    CHECK(fake.launches == 0 && fake.loads == 0, "invalid runs launched %d kernels, loaded %d modules",
          fake.launches, fake.loads);
}

static void test_run_launches(kiln_handle h)
{
    kiln_problem p = fp8_problem(4096, 4096, 4096);
    kiln_args args = good_args();
    void *stream = (void *)(uintptr_t)0xABC0;
    kiln_algo algos[8];
    int n;

    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, stream), KILN_STATUS_SUCCESS);
    const fake_launch *l = &fake.last[0];
    const kiln_gemm_params *prm = &l->params;
    CHECK(fake.launches == 1 && strcmp(l->symbol, kiln_solutions[FAKE_FP8_MT128].name) == 0, "best is MT128");
    CHECK(l->grid[0] == 32 * 32 && l->grid[1] == 1 && l->grid[2] == 1 && l->block == 256 && l->lds == 65536,
          "geometry %u %u %u / %u / %u", l->grid[0], l->grid[1], l->grid[2], l->block, l->lds);
    CHECK(l->stream == stream, "stream passed through");
    CHECK(l->arg_bytes == sizeof(kiln_gemm_params), "the mma family takes kiln_gemm_params (%zu bytes)", l->arg_bytes);
    CHECK(prm->a == args.a && prm->b == args.b && prm->d == args.d && prm->c == NULL && prm->scale_a == NULL &&
              prm->scale_b == NULL && prm->bias == NULL && prm->workspace == NULL,
          "pointers: unused ones are NULL");
    CHECK(prm->m == 4096 && prm->n == 4096 && prm->k == 4096 && prm->batch == 1 && prm->tiles_m == 32 &&
              prm->tiles_n == 32 && prm->k_tiles_per_split == 64,
          "sizes and tiles");
    CHECK(prm->lda == 4096 && prm->ldb == 4096 && prm->ldd == 4096 && prm->stride_a == 4096 * 4096, "strides");
    CHECK(prm->alpha == 1.5f && prm->beta == 0.5f && prm->has_c == 0 && prm->activation == KILN_ACT_NONE, "epilogue");

    /* the module is loaded once per solution */
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, stream), KILN_STATUS_SUCCESS);
    CHECK(fake.loads == 1 && fake.kernels == 1 && fake.launches == 2, "cached: %d loads", fake.loads);

    /* split-K: the GEMM over batch * gsu, then the reduce kernel */
    fake_reset();
    EXPECT(kiln_query(h, &p, NULL, algos, 8, &n), KILN_STATUS_SUCCESS);
    kiln_algo splitk = algos[2];
    void *ws = (void *)(uintptr_t)0x7000000;
    p.scale_a = KILN_SCALE_VECTOR;
    p.scale_b = KILN_SCALE_TENSOR;
    p.has_bias = 1;
    p.bias_type = BF16;
    p.activation = KILN_ACT_GELU;
    EXPECT(kiln_run(h, &p, &splitk, &args, ws, (size_t)splitk.workspace_bytes, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 2 && fake.loads == 1 && fake.kernels == 2, "two launches, one module, two kernels");
    l = &fake.last[0];
    CHECK(strcmp(l->symbol, kiln_solutions[FAKE_FP8_SPLITK].name) == 0 && l->grid[0] == 64 * 64 &&
              l->grid[2] == 4 && l->block == 128 && l->lds == 49152,
          "split-K GEMM launch");
    CHECK(l->params.k_tiles_per_split == 8 && l->params.workspace == ws && l->params.scale_a == args.scale_a &&
              l->params.scale_b == args.scale_b && l->params.bias == args.bias && l->params.bias_type == BF16 &&
              l->params.scale_a_mode == KILN_SCALE_VECTOR && l->params.activation == KILN_ACT_GELU,
          "split-K params");
    l = &fake.last[1];
    CHECK(strcmp(l->symbol, kiln_solutions[FAKE_FP8_SPLITK].reduce_name) == 0 && l->grid[0] == 65536 &&
              l->grid[1] == 1 && l->grid[2] == 1 && l->block == KILN_REDUCE_THREADS && l->lds == 0,
          "reduce launch");
    CHECK(memcmp(&l->params, &fake.last[0].params, sizeof l->params) == 0, "both kernels get the same params");
    CHECK(l->arg_bytes == sizeof(kiln_gemm_params), "reduce argument %zu bytes", l->arg_bytes);

    /* best choice skips a split-K winner when no workspace is given, and takes it when one is */
    p = fp8_problem(128, 128, 16384);
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && strcmp(fake.last[0].symbol, kiln_solutions[FAKE_FP8_SPLITK].name) != 0,
          "no workspace: no split-K");
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, ws, 4 * 128 * 128 * 4, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 2 && strcmp(fake.last[0].symbol, kiln_solutions[FAKE_FP8_SPLITK].name) == 0,
          "workspace given: split-K");

    /* prepacked B: K tiles over the padded ldb; batched: grid z */
    kiln_problem_init(&p, F16, E4M3, F16, TN, 64, 64, 104);
    p.batch = 3;
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.last[0].params.k_tiles_per_split == 2 && fake.last[0].params.ldb == 112 &&
              fake.last[0].grid[2] == 3 && fake.last[0].params.batch == 3,
          "mixed batched launch");

    /* f16 GEMM with C */
    kiln_problem_init(&p, F16, F16, F16, NN, 256, 256, 256);
    p.has_c = 1;
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.last[0].params.c == args.c && fake.last[0].params.has_c == 1, "GEMM with C");

    /* a driver failure is reported */
    fake.fail_launch = 1;
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_DRIVER_ERROR);
    fake.fail_launch = 0;
}

int main(void)
{
    kiln_handle h = NULL;
    test_strings();
    test_problem_init();
    test_no_device();
    EXPECT(kiln_create_with_backend(&h, &fake_backend), KILN_STATUS_SUCCESS);
    CHECK(h != NULL && fake.opens == 1, "fake device opened");
    test_check_problem(h);
    test_query(h);
    test_explain(h);
    test_run_errors(h);
    test_run_launches(h);
    int loads = fake.loads;
    EXPECT(kiln_destroy(h), KILN_STATUS_SUCCESS);
    CHECK(fake.closes == 1 && fake.unloads >= loads, "destroy unloads modules and closes the device");
    return test_summary("test_api");
}
