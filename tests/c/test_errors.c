/* kiln_last_error: every failing call names the field and its value; a successful call clears the text; handle-less
 * calls keep theirs per thread. The status fixes (fp8 NN is NOT_SUPPORTED at check time, a short prepack buffer is
 * INVALID_VALUE) and explain's truncation mark. */
#include <stdint.h>
#include <string.h>

#include "fake_backend.h"
#include "test_util.h"

/* The call returns `want` and the handle's (or thread's) text is exactly `text`, or contains it with `contains`. */
#define EXPECT_TEXT(h, call, want, text)                                                                             \
    do {                                                                                                              \
        kiln_status got_ = (call);                                                                                    \
        const char *e_ = kiln_last_error(h);                                                                          \
        CHECK(got_ == (want) && strcmp(e_, text) == 0, "%s -> %s, want %s\n  text: '%s'\n  want: '%s'", #call,       \
              kiln_status_string(got_), kiln_status_string(want), e_, text);                                         \
    } while (0)

static kiln_problem fp8(int64_t m, int64_t n, int64_t k)
{
    kiln_problem p;
    kiln_problem_init(&p, E4M3, E4M3, BF16, TN, m, n, k);
    return p;
}

static void test_problem_texts(kiln_handle h)
{
    kiln_problem p = fp8(64, 64, 128), q;
    q = p, q.lda = 100;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE,
                "kiln_check_problem: lda = 100 is less than k = 128");
    EXPECT_TEXT(h, kiln_check_problem(h, &p), KILN_STATUS_SUCCESS, "");
    q = p, q.scale_b = (kiln_scale_mode)7;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE,
                "kiln_check_problem: scale_b = 7 is not a kiln_scale_mode");
    q = p, q.a_type = (kiln_dtype)42;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE,
                "kiln_check_problem: a_type = 42 is not a kiln_dtype");
    q = p, q.has_c = 2;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE,
                "kiln_check_problem: has_c = 2 must be 0 or 1");
    q = p, q.activation = (kiln_activation)-1;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE,
                "kiln_check_problem: activation = -1 is not a kiln_activation");
    q = p, q.n = -5;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "kiln_check_problem: n = -5 is negative");
    q = p, q.k = INT64_C(1) << 31, q.lda = q.ldb = q.k;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_OVERFLOW,
                "kiln_check_problem: k = 2147483648 exceeds 2^31 - 1 (kernels take int32 sizes)");
    q = p, q.batch = 70000;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_OVERFLOW,
                "kiln_check_problem: batch = 70000 exceeds the grid z limit 65535");
    q = p, q.ldd = 63;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE,
                "kiln_check_problem: ldd = 63 is less than n = 64");
    q = p, q.batch = 2, q.stride_b = -1;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "stride_b = -1 is negative");
    q = p, q.batch = 2, q.stride_d = 100;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "stride_d = 100 is less than m * ldd = 4096");
    q = p, q.lda = INT64_MAX / 2;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_OVERFLOW, "lda = 4611686018427387903");

    /* the status fixes: no kind runs fp8 x fp8 NN, so check says so (not query's NO_SOLUTION) */
    q = p, q.layout = NN, q.ldb = 64;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_NOT_SUPPORTED, "TN layout only");
    kiln_algo algos[4];
    int n = -1;
    EXPECT_HAS(h, kiln_query(h, &q, NULL, algos, 4, &n), KILN_STATUS_NOT_SUPPORTED,
               "kiln_query: e4m3 x e4m3 -> bf16 NN");
    q = p, q.has_c = 1;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_NOT_SUPPORTED, "has_c = 1");
    q = p, q.a_type = KILN_DTYPE_E4M3FNUZ;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_NOT_SUPPORTED, "no problem kind takes these operand types");
    q = p, q.has_bias = 1, q.bias_type = E4M3;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_NOT_SUPPORTED,
                "kiln_check_problem: bias_type = e4m3: a bias is f32, f16 or bf16");
    q = p, q.b_type = KILN_DTYPE_E5M2, q.a_type = E5M2; /* a kind kiln has, with no kernel in these tables */
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_SUCCESS, "");
}

/* Grouped problems (kiln.h, "Grouped GEMM"): every bad field is named with its value, at check time. */
static void test_grouped_texts(kiln_handle h)
{
    kiln_problem p = fp8(1024, 256, 512), q;
    p.group_mode = KILN_GROUP_CONTIGUOUS, p.groups = 8, p.stride_b = 256 * 512;
    EXPECT_TEXT(h, kiln_check_problem(h, &p), KILN_STATUS_SUCCESS, "");
    q = p, q.groups = 0;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE,
                "kiln_check_problem: groups = 0: a grouped problem has 1 .. 2^31 - 1 groups");
    q = p, q.group_mode = KILN_GROUP_NONE;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "groups = 8 with group_mode");
    q = p, q.group_mode = (kiln_group_mode)4;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE,
                "kiln_check_problem: group_mode = 4 is not a kiln_group_mode");
    /* k-grouped: D [groups][m][n] must not overlap; A and B are one matrix each (stride_b not used) */
    q = p, q.group_mode = KILN_GROUP_K, q.stride_b = -5, q.stride_d = 1024 * 256 - 1;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "stride_b = -5 is negative");
    q = p, q.group_mode = KILN_GROUP_K, q.stride_d = 1024 * 256 - 1;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "k-grouped groups of D would overlap");
    q = p, q.group_mode = KILN_GROUP_K, q.stride_d = 1024 * 256;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_SUCCESS, "");
    q = p, q.group_mode = KILN_GROUP_K, q.groups = 1, q.stride_d = 0; /* one group: one D */
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_SUCCESS, "");
    q = p, q.batch = 2;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_NOT_SUPPORTED, "batch = 2: a grouped problem has batch 1");
    q = p, q.k = 0;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_NOT_SUPPORTED, "k = 0: a grouped problem needs k >= 1");
    q = p, q.scale_b_stride_g = -2;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "scale_b_stride_g = -2 must be -1");
    q = p, q.stride_b = -1;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "stride_b = -1 is negative");
    q = p, q.group_mode = KILN_GROUP_MASKED, q.stride_a = 1024 * 512, q.stride_d = 1000;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_INVALID_VALUE, "masked groups of D would overlap");
    q = p, q.group_mode = KILN_GROUP_MASKED, q.stride_a = 1024 * 512, q.stride_d = 1024 * 256;
    EXPECT_TEXT(h, kiln_check_problem(h, &q), KILN_STATUS_SUCCESS, "");
    kiln_problem_init(&q, BF16, BF16, BF16, TN, 64, 64, 64);
    q.group_mode = KILN_GROUP_CONTIGUOUS, q.groups = 2;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_NOT_SUPPORTED, "grouped GEMMs (group_mode) are fp8 x fp8");
    /* the B of every group must lie in the address space: a huge stride_b overflows */
    q = p, q.stride_b = INT64_MAX / 4;
    EXPECT_HAS(h, kiln_check_problem(h, &q), KILN_STATUS_OVERFLOW, "B");
}

static void test_call_texts(kiln_handle h)
{
    kiln_problem p = fp8(4096, 4096, 4096), q;
    kiln_algo algos[8];
    int n = 0;
    EXPECT_TEXT(h, kiln_query(h, &p, NULL, algos, 0, &n), KILN_STATUS_INVALID_VALUE,
                "kiln_query: requested = 0 must be at least 1");
    EXPECT_TEXT(h, kiln_query(h, &p, NULL, NULL, 1, &n), KILN_STATUS_NULL_POINTER, "kiln_query: algos is NULL");
    EXPECT_TEXT(h, kiln_query(h, &p, NULL, algos, 8, &n), KILN_STATUS_SUCCESS, "");
    /* why nothing passes names a candidate and its predicate */
    q = p, q.a_type = E5M2;
    EXPECT_HAS(h, kiln_query(h, &q, NULL, algos, 8, &n), KILN_STATUS_NO_SOLUTION,
               "no selection logic (or no candidate) for sm90 e5m2 x e4m3 -> bf16 TN");
    q = fp8(INT64_C(1) << 27, INT64_C(1) << 27, 4096);
    EXPECT_HAS(h, kiln_query(h, &q, NULL, algos, 8, &n), KILN_STATUS_OVERFLOW, "is rejected by size: grid");
    q = p, q.a_type = q.b_type = E5M2;
    EXPECT_HAS(h, kiln_query(h, &q, NULL, algos, 8, &n), KILN_STATUS_NO_CODE_FOR_DEVICE, "rejected by code");
    kiln_problem mixed;
    kiln_problem_init(&mixed, F16, E4M3, F16, TN, 64, 64, 100);
    mixed.lda = 101;
    EXPECT_HAS(h, kiln_query(h, &mixed, NULL, algos, 8, &n), KILN_STATUS_MISALIGNED,
               "rejected by align_a: lda=101 is not a multiple of align_a=8");

    /* run: arguments, algo, workspace */
    kiln_args args;
    memset(&args, 0, sizeof args);
    args.a = (const void *)(uintptr_t)0x100000;
    args.b = (const void *)(uintptr_t)0x200000;
    args.d = (void *)(uintptr_t)0x300000;
    EXPECT_TEXT(h, kiln_run(h, &p, NULL, NULL, NULL, 0, NULL), KILN_STATUS_NULL_POINTER, "kiln_run: args is NULL");
    kiln_args a = args;
    a.b = NULL;
    EXPECT_TEXT(h, kiln_run(h, &p, NULL, &a, NULL, 0, NULL), KILN_STATUS_NULL_POINTER, "kiln_run: args->b is NULL");
    q = p, q.has_bias = 1;
    EXPECT_TEXT(h, kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_NULL_POINTER,
                "kiln_run: args->bias is NULL (has_bias = 1)");
    a = args, a.d = (void *)(uintptr_t)0x300001;
    EXPECT_HAS(h, kiln_run(h, &p, NULL, &a, NULL, 0, NULL), KILN_STATUS_MISALIGNED,
               "args->d = 0x300001 is not aligned");
    EXPECT_TEXT(h, kiln_query(h, &p, NULL, algos, 8, &n), KILN_STATUS_SUCCESS, "");
    kiln_algo splitk = algos[2];
    CHECK(splitk.solution_index == FAKE_FP8_SPLITK, "split-K algo");
    char want[160];
    snprintf(want, sizeof want, "kiln_run: workspace_bytes = 100, the algo needs %llu",
             (unsigned long long)splitk.workspace_bytes);
    EXPECT_TEXT(h, kiln_run(h, &p, &splitk, &args, (void *)(uintptr_t)0x7000000, 100, NULL),
                KILN_STATUS_WORKSPACE_TOO_SMALL, want);
    kiln_algo bad = algos[0];
    bad.name_hash ^= 1;
    EXPECT_HAS(h, kiln_run(h, &p, &bad, &args, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO, "names no solution");
    q = fp8(4096, 4096, 4000);
    EXPECT_HAS(h, kiln_run(h, &q, &algos[1], &args, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO,
               "k_multiple: k=4000 is not a multiple of 128");
    kiln_algo no_gemm;
    kiln_problem empty = fp8(0, 64, 64);
    EXPECT_TEXT(h, kiln_query(h, &empty, NULL, &no_gemm, 1, &n), KILN_STATUS_SUCCESS, "");
    EXPECT_HAS(h, kiln_run(h, &p, &no_gemm, &args, NULL, 0, NULL), KILN_STATUS_INVALID_ALGO, "kiln_no_gemm");
    EXPECT_TEXT(h, kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS, "");

    const char *name = NULL, *arch = NULL;
    EXPECT_TEXT(h, kiln_algo_name(h, &bad, &name), KILN_STATUS_INVALID_ALGO,
                strstr(kiln_last_error(h), "kiln_algo_name: algo name_hash = 0x") ? kiln_last_error(h) : "?");
    EXPECT_TEXT(h, kiln_device_arch(h, NULL), KILN_STATUS_NULL_POINTER, "kiln_device_arch: arch is NULL");
    EXPECT_TEXT(h, kiln_device_arch(h, &arch), KILN_STATUS_SUCCESS, "");
    char buf[64];
    EXPECT_TEXT(h, kiln_explain(h, &p, NULL, buf, 0), KILN_STATUS_INVALID_VALUE,
                "kiln_explain: len = 0: no room for the text");
}

/* Texts without a handle stay on the calling thread; handles keep their own. */
static void test_thread_and_handles(kiln_handle h)
{
    kiln_problem p;
    EXPECT_TEXT(NULL, kiln_problem_init(&p, E4M3, E4M3, BF16, TN, -1, 4, 4), KILN_STATUS_INVALID_VALUE,
                "kiln_problem_init: m = -1 is negative");
    EXPECT_TEXT(NULL, kiln_problem_init(&p, E4M3, E4M3, BF16, (kiln_layout)9, 1, 4, 4), KILN_STATUS_INVALID_VALUE,
                "kiln_problem_init: layout = 9 is not a kiln_layout");
    EXPECT_TEXT(NULL, kiln_problem_init(NULL, E4M3, E4M3, BF16, TN, 1, 4, 4), KILN_STATUS_NULL_POINTER,
                "kiln_problem_init: p is NULL");
    EXPECT_TEXT(NULL, kiln_query(NULL, &p, NULL, NULL, 1, NULL), KILN_STATUS_NULL_POINTER, "kiln_query: h is NULL");
    EXPECT_TEXT(NULL, kiln_problem_init(&p, E4M3, E4M3, BF16, TN, 64, 64, 64), KILN_STATUS_SUCCESS, "");
    size_t bytes;
    int64_t ld;
    EXPECT_TEXT(NULL, kiln_prepack_b_size(4, INT64_C(1) << 40, &bytes, &ld), KILN_STATUS_OVERFLOW,
                "kiln_prepack_b_size: k = 1099511627776 exceeds 2^31 - 1");
    uint8_t src[64] = {0}, dst[64];
    EXPECT_TEXT(NULL, kiln_prepack_b(src, TN, 2, 20, 20, dst, 10), KILN_STATUS_INVALID_VALUE,
                "kiln_prepack_b: dst_bytes = 10, needs 64 (kiln_prepack_b_size)");
    EXPECT_TEXT(NULL, kiln_prepack_b(src, TN, 2, 20, 19, dst, 64), KILN_STATUS_INVALID_VALUE,
                "kiln_prepack_b: ld = 19 is less than k (layout TN) = 20");

    /* a second handle's failure leaves the first one's text alone */
    kiln_handle other = NULL;
    kiln_create_with_backend(&other, NULL);
    p.lda = 1;
    EXPECT_HAS(h, kiln_check_problem(h, &p), KILN_STATUS_INVALID_VALUE, "lda = 1");
    p.lda = 64;
    p.ldb = 2;
    EXPECT_HAS(other, kiln_check_problem(other, &p), KILN_STATUS_INVALID_VALUE, "ldb = 2");
    CHECK(strstr(kiln_last_error(h), "lda = 1") != NULL, "h keeps its text: %s", kiln_last_error(h));
    p.ldb = 64;
    EXPECT_HAS(other, kiln_run(other, &p, NULL, &(kiln_args){.a = src, .b = src, .d = dst}, NULL, 0, NULL),
               KILN_STATUS_NO_DEVICE, "kiln_run: the handle has no device");
    kiln_destroy(other);
    CHECK(kiln_last_error(NULL) != NULL, "never NULL");
}

/* explain: the whole text when it fits; otherwise whole lines and a mark that says how much is needed. */
static void test_explain_truncation(kiln_handle h)
{
    kiln_problem p = fp8(4096, 4096, 4096);
    size_t need = 0;
    CHECK(kiln_explain_size(h, &p, NULL, &need) == KILN_STATUS_SUCCESS && need > 300, "size %zu", need);
    static char full[1 << 16], cut[300];
    CHECK(need <= sizeof full, "fits the test buffer");
    CHECK(kiln_explain(h, &p, NULL, full, need) == KILN_STATUS_SUCCESS && strlen(full) + 1 == need &&
              strstr(full, "status: success\n") && !strstr(full, "[truncated"),
          "the whole text in exactly its size:\n%s", full);
    CHECK(kiln_explain(h, &p, NULL, cut, sizeof cut) == KILN_STATUS_SUCCESS, "truncated explain succeeds");
    char mark[96];
    snprintf(mark, sizeof mark, "\n[truncated: the text needs %zu bytes (kiln_explain_size)]\n", need);
    size_t len = strlen(cut), mlen = strlen(mark);
    CHECK(len < sizeof cut && len > mlen && strcmp(cut + len - mlen, mark) == 0, "ends with the mark:\n%s", cut);
    CHECK(strncmp(full, cut, len - mlen + 1) == 0, "the kept part is the text's first whole lines");
    char tiny[8];
    CHECK(kiln_explain(h, &p, NULL, tiny, sizeof tiny) == KILN_STATUS_SUCCESS && strlen(tiny) == 7, "tiny buffer");
    /* a rejected problem: the explanation says why, with the field */
    p.lda = 5;
    CHECK(kiln_explain(h, &p, NULL, full, sizeof full) == KILN_STATUS_INVALID_VALUE &&
              strstr(full, "lda = 5 is less than k = 4096"),
          "rejected:\n%s", full);
    CHECK(kiln_explain_size(h, &p, NULL, &need) == KILN_STATUS_SUCCESS && need == strlen(full) + 1,
          "size of a rejection's text");
}

int main(void)
{
    kiln_handle h = NULL;
    CHECK(kiln_create_with_backend(&h, &fake_backend) == KILN_STATUS_SUCCESS, "fake device");
    test_problem_texts(h);
    test_grouped_texts(h);
    test_call_texts(h);
    test_thread_and_handles(h);
    test_explain_truncation(h);
    kiln_destroy(h);
    return test_summary("test_errors");
}
