/* The attention API (kiln.h, "FP8 attention forward") on the fake device and the fake attention table: defaults,
 * every bad field named with its value, selection (types, head dim, arch, shared memory, code objects; waves of
 * workgroups), explain, algo names, and the launch: grid, block, shared memory and every field of kiln_attn_params;
 * nothing launches for an invalid call or an empty problem. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "fake_backend.h"
#include "test_util.h"

static kiln_attn_problem attn(int64_t b, int64_t hq, int64_t hk, int64_t sq, int64_t sk, int64_t d)
{
    kiln_attn_problem p;
    kiln_attn_problem_init(&p, E4M3, BF16, b, hq, hk, sq, sk, d);
    return p;
}

static void test_defaults(void)
{
    kiln_attn_problem p = attn(2, 16, 4, 300, 500, 128);
    CHECK(p.q_stride_h == 128 && p.q_stride_s == 16 * 128 && p.q_stride_b == 300 * 16 * 128, "q packed");
    CHECK(p.k_stride_h == 128 && p.k_stride_s == 4 * 128 && p.k_stride_b == 500 * 4 * 128, "k packed");
    CHECK(p.o_stride_s == p.q_stride_s && p.o_stride_b == p.q_stride_b, "o packed like q");
    CHECK(p.causal == 0 && p.varlen == 0 && p.has_lse == 0 && p.descale == KILN_SCALE_NONE, "no options");
    kiln_attn_problem q;
    EXPECT_HAS(NULL, kiln_attn_problem_init(&q, E4M3, BF16, -1, 1, 1, 1, 1, 64), KILN_STATUS_INVALID_VALUE,
           "batch = -1 is negative");
    EXPECT_HAS(NULL, kiln_attn_problem_init(NULL, E4M3, BF16, 1, 1, 1, 1, 1, 64), KILN_STATUS_NULL_POINTER,
               "p is NULL");
    /* sizes that each fit int32 but whose packed strides do not fit int64 (found by fuzz_api) */
    EXPECT_HAS(NULL, kiln_attn_problem_init(&q, E4M3, BF16, 1, 1, INT32_MAX, 1, INT32_MAX, INT32_MAX),
               KILN_STATUS_OVERFLOW, "seqlen_k * heads_kv * head_dim = 2147483647 * 2147483647 * 2147483647");
}

static void test_bad_problems(kiln_handle h)
{
    kiln_attn_problem p = attn(2, 16, 4, 300, 500, 128), q;
    EXPECT_HAS(h, kiln_attn_check(h, &p), KILN_STATUS_SUCCESS, "");
    q = p, q.qkv_type = BF16;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_NOT_SUPPORTED, "qkv_type = bf16: attention takes fp8");
    q = p, q.o_type = F32;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_NOT_SUPPORTED, "o_type = f32: attention writes f16 or bf16");
    q = p, q.o_type = (kiln_dtype)99;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "o_type = 99 is not a kiln_dtype");
    q = p, q.heads_kv = 3;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "heads_kv = 3 must divide heads_q = 16");
    q = p, q.heads_kv = 0;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "heads_kv = 0 must divide");
    q = p, q.head_dim = 96;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_NOT_SUPPORTED,
               "head_dim = 96: attention kernels take 64, 128 or 256");
    q = p, q.causal = 2;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "causal = 2 must be 0 or 1");
    q = p, q.fp8_p = -1;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "fp8_p = -1 must be 0 or 1");
    q = p, q.descale = KILN_SCALE_BLOCK;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_NOT_SUPPORTED, "descale = KILN_SCALE_BLOCK");
    q = p, q.descale = (kiln_scale_mode)9;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "descale = 9 is not a kiln_scale_mode");
    q = p, q.seqlen_q = -4;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "seqlen_q = -4 is negative");
    q = p, q.seqlen_k = INT64_C(1) << 31;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_OVERFLOW, "seqlen_k = 2147483648 exceeds 2^31 - 1");
    q = p, q.heads_q = 70000, q.heads_kv = 70000;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_OVERFLOW, "heads_q = 70000 exceeds the grid's 65535");
    q = p, q.k_stride_s = -128;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "k_stride_s = -128 is negative");
    q = p, q.o_stride_h = 64;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_INVALID_VALUE, "o_stride_h = 64 makes elements of o overlap");
    q = p, q.q_stride_s = 2056;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_MISALIGNED, "q_stride_s = 2056 is not a multiple of 16 elements");
    q = p, q.v_stride_b = INT64_MAX / 4;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_OVERFLOW, "v's strides");
    /* (batch, head, seq, dim) storage is fine: strides in any order */
    q = p, q.o_stride_h = 300 * 128, q.o_stride_s = 128, q.o_stride_b = 16 * 300 * 128;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_SUCCESS, "");
    /* inputs may overlap (one K for every batch) */
    q = p, q.k_stride_b = 0;
    EXPECT_HAS(h, kiln_attn_check(h, &q), KILN_STATUS_SUCCESS, "");
    EXPECT_HAS(NULL, kiln_attn_check(NULL, &p), KILN_STATUS_NULL_POINTER, "h is NULL");
}

static void test_selection(kiln_handle h)
{
    kiln_algo algos[8];
    int n = -1;
    const char *name = NULL;
    /* a big problem: the 128-row kernel (fewer waves of larger tiles or equal), ahead of the 64-row one */
    kiln_attn_problem p = attn(4, 32, 32, 4096, 4096, 128);
    EXPECT_HAS(h, kiln_attn_query(h, &p, algos, 8, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 2 && algos[0].solution_index == FAKE_ATTN_D128_BM128 && algos[1].solution_index == FAKE_ATTN_D128_BM64,
          "n = %d, first %u", n, n > 0 ? algos[0].solution_index : 99u);
    EXPECT_HAS(h, kiln_algo_name(h, &algos[0], &name), KILN_STATUS_SUCCESS, "");
    CHECK(name && strcmp(name, "fake_attn_d128_bm128_SM90") == 0, "algo name %s", name ? name : "(null)");
    /* a small one (one sequence, 2 heads, 100 rows): 64-row tiles give more workgroups in the one wave */
    p = attn(1, 2, 2, 100, 100, 128);
    EXPECT_HAS(h, kiln_attn_query(h, &p, algos, 8, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 2 && algos[0].solution_index == FAKE_ATTN_D128_BM64, "small: first %u",
          n > 0 ? algos[0].solution_index : 99u);
    /* head_dim 256: one has no code object, the other too much shared memory for the device */
    p = attn(1, 2, 2, 100, 100, 256);
    EXPECT_HAS(h, kiln_attn_query(h, &p, algos, 8, &n), KILN_STATUS_NO_SOLUTION,
               "no attention kernel of sm90 takes head_dim 256");
    CHECK(n == 0, "n = %d", n);
    char text[2048];
    EXPECT_HAS(h, kiln_attn_explain(h, &p, text, sizeof text), KILN_STATUS_NO_SOLUTION, "");
    CHECK(strstr(text, "fake_attn_d256_nocode_SM90: rejected: no code object") &&
              strstr(text, "fake_attn_d256_big_SM90: rejected: 300000 bytes of shared memory"),
          "explain:\n%s", text);
    p = attn(1, 2, 2, 100, 100, 64);
    EXPECT_HAS(h, kiln_attn_explain(h, &p, text, sizeof text), KILN_STATUS_SUCCESS, "");
    CHECK(strstr(text, "winner: [2] fake_attn_d64_SM90") != NULL, "explain:\n%s", text);
    /* types without kernels on this arch: NOT_SUPPORTED */
    p = attn(1, 2, 2, 100, 100, 128);
    p.qkv_type = E5M2;
    EXPECT_HAS(h, kiln_attn_query(h, &p, algos, 8, &n), KILN_STATUS_NOT_SUPPORTED,
               "sm90 has no attention kernels for e5m2");
    /* another arch by name: its own kernels, without the device's code-object and memory checks */
    CHECK(kiln_set_arch(h, "gfx942") == KILN_STATUS_SUCCESS, "set_arch");
    p.qkv_type = KILN_DTYPE_E4M3FNUZ;
    EXPECT_HAS(h, kiln_attn_query(h, &p, algos, 8, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 1 && algos[0].solution_index == FAKE_ATTN_GFX942, "gfx942");
    kiln_attn_args a = {0};
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, NULL), KILN_STATUS_NULL_POINTER, "args->q is NULL");
    CHECK(kiln_set_arch(h, "sm90") == KILN_STATUS_SUCCESS, "set_arch back");
    EXPECT_HAS(h, kiln_attn_query(h, &p, NULL, 4, &n), KILN_STATUS_NULL_POINTER, "algos is NULL");
}

static void test_run(kiln_handle h)
{
    static uint8_t q[64], k[64], v[64];
    static uint16_t o[64];
    static float lse[16], ds[3];
    static int32_t cu[4];
    kiln_attn_args a = {.q = q, .k = k, .v = v, .o = o, .softmax_scale = 0.0f};
    kiln_attn_problem p = attn(3, 8, 2, 1000, 777, 128);
    p.causal = 1;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, (void *)0x5), KILN_STATUS_SUCCESS, "");
    const fake_launch *l = &fake.last[0];
    CHECK(fake.launches == 1 && fake.bad_arg_bytes == 0 && l->arg_bytes == sizeof(kiln_attn_params), "one launch");
    CHECK(strcmp(l->symbol, "fake_attn_d128_bm128_SM90") == 0 && l->grid[0] == 8 && l->grid[1] == 8 &&
              l->grid[2] == 3 && l->block == 256 && l->lds == 40960 && l->stream == (void *)0x5,
          "%s grid %u %u %u block %u lds %u", l->symbol, l->grid[0], l->grid[1], l->grid[2], l->block, l->lds);
    const kiln_attn_params *k8 = &l->attn;
    CHECK(k8->q == q && k8->k == k && k8->v == v && k8->o == o && k8->lse == NULL && k8->cu_seqlens_q == NULL &&
              k8->q_descale == NULL && k8->batch == 3 && k8->heads_q == 8 && k8->heads_kv == 2 &&
              k8->seqlen_q == 1000 && k8->seqlen_k == 777 && k8->head_dim == 128 && k8->causal == 1 &&
              k8->o_dtype == KILN_DTYPE_BF16 && fabsf(k8->softmax_scale - 1.0f / sqrtf(128.0f)) < 1e-7f &&
              k8->q_stride_s == 8 * 128 && k8->k_stride_s == 2 * 128 && k8->o_stride_b == 1000 * 8 * 128 &&
              k8->lse_stride_h == 1000 && k8->lse_stride_b == 8 * 1000,
          "params");
    /* descales per (sequence, kv head), lse, varlen */
    p.descale = KILN_SCALE_VECTOR, p.has_lse = 1, p.varlen = 1;
    a.lse = lse, a.q_descale = a.k_descale = a.v_descale = ds, a.cu_seqlens_q = a.cu_seqlens_k = cu;
    a.softmax_scale = 0.5f;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    k8 = &fake.last[0].attn;
    CHECK(k8->descale_stride_b == 2 && k8->descale_stride_h == 1 && k8->q_descale == ds && k8->lse == lse &&
              k8->cu_seqlens_q == cu && k8->lse_stride_h == 3 * 1000 && k8->softmax_scale == 0.5f,
          "options");
    /* every missing or bad argument: refused, nothing launched */
    fake_reset();
    kiln_attn_args b = a;
    b.cu_seqlens_k = NULL;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_NULL_POINTER, "args->cu_seqlens_k is NULL");
    b = a, b.v_descale = NULL;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_NULL_POINTER, "args->v_descale is NULL");
    b = a, b.lse = NULL;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_NULL_POINTER, "args->lse is NULL");
    b = a, b.k = k + 1;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_MISALIGNED, "args->k");
    b = a, b.softmax_scale = -1.0f;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_INVALID_VALUE, "softmax_scale = -1");
    b = a, b.softmax_scale = NAN;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_INVALID_VALUE, "softmax_scale = nan");
    kiln_algo wrong = {.name_hash = 42, .solution_index = 0, .gsu = 1, .workspace_bytes = 0};
    EXPECT_HAS(h, kiln_attn_run(h, &p, &wrong, &a, NULL), KILN_STATUS_INVALID_ALGO, "names no attention kernel");
    kiln_algo other[2];
    int n;
    kiln_attn_problem d64 = attn(1, 1, 1, 10, 10, 64);
    CHECK(kiln_attn_query(h, &d64, other, 2, &n) == KILN_STATUS_SUCCESS && n == 1, "d64 query");
    EXPECT_HAS(h, kiln_attn_run(h, &p, &other[0], &a, NULL), KILN_STATUS_INVALID_ALGO, "does not take this problem");
    kiln_attn_problem bad = p;
    bad.head_dim = 32;
    EXPECT_HAS(h, kiln_attn_run(h, &bad, NULL, &a, NULL), KILN_STATUS_NOT_SUPPORTED, "head_dim = 32");
    CHECK(fake.launches == 0, "nothing launched for bad calls (%d)", fake.launches);
    /* a chosen algo runs as given */
    kiln_algo list[2];
    CHECK(kiln_attn_query(h, &p, list, 2, &n) == KILN_STATUS_SUCCESS && n == 2, "query");
    EXPECT_HAS(h, kiln_attn_run(h, &p, &list[1], &a, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 1 && strcmp(fake.last[0].symbol, "fake_attn_d128_bm64_SM90") == 0 &&
              fake.last[0].grid[0] == 16,
          "forced algo");
    /* empty problems: nothing read, nothing launched */
    fake_reset();
    kiln_attn_problem e = attn(0, 8, 2, 10, 10, 128);
    kiln_attn_args none = {0};
    EXPECT_HAS(h, kiln_attn_run(h, &e, NULL, &none, NULL), KILN_STATUS_SUCCESS, "");
    e = attn(2, 8, 2, 0, 10, 128);
    EXPECT_HAS(h, kiln_attn_run(h, &e, NULL, &none, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 0, "empty: no launch");
    /* a launch the driver refuses: its status and text */
    fake_reset();
    fake.fail_launch = 1;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, NULL), KILN_STATUS_DRIVER_ERROR,
               "launching fake_attn_d128_bm128_SM90");
    fake.fail_launch = 0;
}

/* The wgmma family (e4m3 -> f16 entries): chosen over the mma kernel of the same tile, launched with
 * kiln_attn_tma_params whose three 4-D maps are encoded from the problem; varlen, a backend without tensor maps and a
 * failed encode each keep it from launching. */
static void test_wgmma(kiln_handle h)
{
    static uint8_t q[64], k[64], v[64];
    static uint16_t o[64];
    static int32_t cu[4];
    kiln_attn_args a = {.q = q, .k = k, .v = v, .o = o};
    kiln_attn_problem p = attn(3, 8, 2, 1000, 777, 128);
    p.o_type = F16;
    kiln_algo algos[4];
    int n = -1;
    EXPECT_HAS(h, kiln_attn_query(h, &p, algos, 4, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 2 && algos[0].solution_index == FAKE_ATTN_WGMMA_F16 && algos[1].solution_index == FAKE_ATTN_MMA_F16,
          "wgmma first: n = %d, first %u", n, n > 0 ? algos[0].solution_index : 99u);
    /* fp8_p: the kernels that requantize P to fp8 first (here the mma one), the f16-P one still a candidate */
    kiln_attn_problem p8 = p;
    p8.fp8_p = 1;
    EXPECT_HAS(h, kiln_attn_query(h, &p8, algos, 4, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 2 && algos[0].solution_index == FAKE_ATTN_MMA_F16 && algos[1].solution_index == FAKE_ATTN_WGMMA_F16,
          "fp8_p: fp8-P kernel first: n = %d, first %u", n, n > 0 ? algos[0].solution_index : 99u);
    char why[2048];
    EXPECT_HAS(h, kiln_attn_explain(h, &p8, why, sizeof why), KILN_STATUS_SUCCESS, "");
    CHECK(strstr(why, "P in fp8 (fp8_p) preferred") && strstr(why, "fake_attn_f16_wgmma_SM90: accepted, P in 16 bits") &&
              strstr(why, "winner: [6] fake_attn_f16_mma_SM90"),
          "explain:\n%s", why);
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    const fake_launch *l = &fake.last[0];
    CHECK(fake.launches == 1 && fake.bad_arg_bytes == 0 && l->arg_bytes == sizeof(kiln_attn_tma_params) &&
              strcmp(l->symbol, "fake_attn_f16_wgmma_SM90") == 0 && l->block == 384 && l->grid[0] == 8 &&
              l->grid[1] == 8 && l->grid[2] == 3,
          "launch %s (%zu bytes)", l->symbol, l->arg_bytes);
    CHECK(l->attn.q == q && l->attn.o_dtype == KILN_DTYPE_F16 && l->attn.seqlen_k == 777, "params after the maps");
    CHECK(fake.encodes == 3, "three maps (%d)", fake.encodes);
    const uint64_t heads[3] = {8, 2, 2}, rows[3] = {1000, 777, 777};
    const int64_t *st[3] = {&p.q_stride_b, &p.k_stride_b, &p.v_stride_b}; /* b, s, h in that order */
    const void *base[3] = {q, k, v};
    for (int i = 0; i < 3; i++) {
        const fake_encode *e = &fake.encode[i];
        CHECK(e->rank == 4 && e->elem_bytes == 1 && e->swizzle_bytes == 128 && e->base == base[i], "map %d kind", i);
        CHECK(e->dims[0] == 128 && e->dims[1] == heads[i] && e->dims[2] == rows[i] && e->dims[3] == 3, "map %d dims",
              i);
        CHECK(e->strides[0] == (uint64_t)st[i][2] && e->strides[1] == (uint64_t)st[i][1] &&
                  e->strides[2] == (uint64_t)st[i][0],
              "map %d strides %llu %llu %llu", i, (unsigned long long)e->strides[0],
              (unsigned long long)e->strides[1], (unsigned long long)e->strides[2]);
        CHECK(e->box[0] == 128 && e->box[1] == 1 && e->box[2] == (i == 0 ? 128u : 64u) && e->box[3] == 1, /* BM, BN */
              "map %d box", i);
    }
    /* one sequence: the batch stride the map gets is the sequence's extent (never stepped over) */
    kiln_attn_problem one = attn(1, 8, 2, 100, 0, 128);
    one.o_type = F16;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &one, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.encodes == 3 && fake.encode[0].strides[2] == 100u * (uint64_t)one.q_stride_s &&
              fake.encode[1].dims[2] == 1 && fake.encode[1].strides[2] == (uint64_t)one.k_stride_s,
          "batch 1 / no keys: q batch stride %llu, k rows %llu", (unsigned long long)fake.encode[0].strides[2],
          (unsigned long long)fake.encode[1].dims[2]);
    /* varlen without the packed rows: the mma kernel only, and explain says why */
    kiln_attn_problem vl = p;
    vl.varlen = 1;
    a.cu_seqlens_q = a.cu_seqlens_k = cu;
    EXPECT_HAS(h, kiln_attn_query(h, &vl, algos, 4, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 1 && algos[0].solution_index == FAKE_ATTN_MMA_F16, "varlen: n = %d", n);
    char text[2048];
    EXPECT_HAS(h, kiln_attn_explain(h, &vl, text, sizeof text), KILN_STATUS_SUCCESS, "");
    CHECK(strstr(text, "fake_attn_f16_wgmma_SM90: rejected: varlen without total_q and total_k runs on the mma "
                       "family") != NULL,
          "explain:\n%s", text);
    /* the wgmma algo forced on it: refused before any encode or launch */
    fake_reset();
    kiln_algo wg = algos[0];
    EXPECT_HAS(h, kiln_attn_query(h, &p, &wg, 1, &n), KILN_STATUS_SUCCESS, "");
    EXPECT_HAS(h, kiln_attn_run(h, &vl, &wg, &a, NULL), KILN_STATUS_INVALID_ALGO,
               "algo fake_attn_f16_wgmma_SM90: varlen without total_q and total_k");
    CHECK(fake.launches == 0 && fake.encodes == 0, "nothing encoded or launched");
    /* with the packed rows: the wgmma kernel, maps over all rows of each tensor with a batch extent of 1 */
    vl.total_q = 2500, vl.total_k = 1900;
    EXPECT_HAS(h, kiln_attn_query(h, &vl, algos, 4, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 2 && algos[0].solution_index == FAKE_ATTN_WGMMA_F16, "varlen with totals: n = %d", n);
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &vl, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 1 && fake.encodes == 3 && fake.encode[0].dims[2] == 2500 && fake.encode[0].dims[3] == 1 &&
              fake.encode[1].dims[2] == 1900 && fake.encode[2].dims[2] == 1900 && fake.encode[2].dims[3] == 1 &&
              fake.encode[0].strides[2] == 2500u * (uint64_t)vl.q_stride_s && fake.last[0].attn.cu_seqlens_q == cu,
          "varlen maps: q rows %llu, k rows %llu", (unsigned long long)fake.encode[0].dims[2],
          (unsigned long long)fake.encode[1].dims[2]);
    /* the packed rows: varlen only, within int32 */
    kiln_attn_problem bad = p;
    bad.total_q = 10;
    EXPECT_HAS(h, kiln_attn_check(h, &bad), KILN_STATUS_INVALID_VALUE,
               "total_q = 10, total_k = 0: the packed rows are for varlen problems");
    bad = vl, bad.total_k = -1;
    EXPECT_HAS(h, kiln_attn_check(h, &bad), KILN_STATUS_INVALID_VALUE, "total_k = -1 must be in 0..2^31 - 1");
    bad = vl, bad.total_q = INT64_C(1) << 31;
    EXPECT_HAS(h, kiln_attn_check(h, &bad), KILN_STATUS_INVALID_VALUE, "total_q = 2147483648 must be in 0..2^31 - 1");
    a.cu_seqlens_q = a.cu_seqlens_k = NULL;
    /* a failed encode: its status, nothing launched */
    fake_reset();
    fake.fail_encode = 2;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, NULL), KILN_STATUS_DRIVER_ERROR,
               "encoding the k tensor map of fake_attn_f16_wgmma_SM90");
    CHECK(fake.launches == 0, "no launch after a failed encode");
    fake.fail_encode = 0;
    /* a backend without tensor maps: the mma kernel */
    kiln_handle nt = NULL;
    CHECK(kiln_create_with_backend(&nt, &fake_backend_no_tma) == KILN_STATUS_SUCCESS, "no-tma device");
    fake_reset();
    EXPECT_HAS(nt, kiln_attn_run(nt, &p, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 1 && strcmp(fake.last[0].symbol, "fake_attn_f16_mma_SM90") == 0 &&
              fake.last[0].arg_bytes == sizeof(kiln_attn_params),
          "no tma: %s", fake.launches ? fake.last[0].symbol : "(none)");
    kiln_destroy(nt);
}

/* v_packed = 2: the packed-V kernel packs V itself into args->vt_work (V^T, then its chunk flags): the work size, the
 * flags cleared on the stream before the launch, the kernel's fields, the V^T map over the work buffer, and the bad
 * calls (no work buffer, a short or misaligned one, V's own strides now checked) refused before anything runs. p: the
 * 3 x 8 (2 kv heads) x 1000 / 777 keys x 128 f16 problem of test_packed_v. */
static void test_packed_in_kernel(kiln_handle h, const kiln_attn_problem *p0)
{
    static _Alignas(16) uint8_t q[64], k[64], v[64];
    static _Alignas(16) uint16_t o[64];
    static _Alignas(16) uint8_t work[16];
    kiln_attn_problem p = *p0;
    p.v_packed = 2;
    size_t bytes = 0;
    /* V^T 3 x 2 x 128 x 784 f16 (a multiple of 16), then 1 + 3 x 2 x (1 + 13) counters and flags (784 keys: 13
     * chunks of 64) */
    const size_t vt = (size_t)3 * 2 * 128 * 784 * 2, need = vt + 4 * (1 + 3 * 2 * 14);
    EXPECT_HAS(NULL, kiln_attn_pack_v_size(&p, &bytes), KILN_STATUS_SUCCESS, "");
    CHECK(bytes == need, "work size %zu, want %zu", bytes, need);
    kiln_attn_args a = {.q = q, .k = k, .v = v, .o = o, .vt_work = work, .vt_work_bytes = need};
    kiln_algo algos[4];
    int n = -1;
    EXPECT_HAS(h, kiln_attn_query(h, &p, algos, 4, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 1 && algos[0].solution_index == FAKE_ATTN_VPRE_F16, "in-kernel packing: n = %d", n);
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, (void *)0x9), KILN_STATUS_SUCCESS, "");
    const fake_launch *l = &fake.last[0];
    CHECK(fake.launches == 1 && strcmp(l->symbol, "fake_attn_f16_vpre_SM90") == 0, "launch %s",
          fake.launches ? l->symbol : "(none)");
    CHECK(fake.zeros == 1 && (uintptr_t)fake.zero[0].dst == (uintptr_t)work + vt && fake.zero[0].width == need - vt &&
              fake.zero[0].height == 1 && fake.zero[0].stream == (void *)0x9,
          "flags cleared: %d fills, %zu bytes", fake.zeros, fake.zeros ? fake.zero[0].width : (size_t)0);
    CHECK(l->attn.v == v && l->attn.vt_fill == (uint16_t *)(void *)work &&
              (uintptr_t)l->attn.vt_sync == (uintptr_t)work + vt && l->attn.vt_keys == 784 &&
              l->attn.v_stride_s == p.v_stride_s && l->attn.v_stride_h == p.v_stride_h &&
              l->attn.v_stride_b == p.v_stride_b,
          "kernel fields: vt_keys %lld", (long long)l->attn.vt_keys);
    const fake_encode *ev = &fake.encode[2];
    CHECK(ev->base == work && ev->elem_bytes == 2 && ev->dims[0] == 777 && ev->dims[1] == 128 &&
              ev->strides[0] == 2 * 784,
          "V^T map over the work buffer");
    /* a packed-V kernel that cannot pack V itself (table v_packed 1; head dim 64 here): the pass into vt_work first,
     * then the kernel reading it, no flags, no fill fields */
    kiln_attn_problem p64 = p;
    p64.head_dim = 64;
    p64.q_stride_h = p64.k_stride_h = p64.v_stride_h = p64.o_stride_h = 64;
    p64.q_stride_s = p64.o_stride_s = 8 * 64, p64.k_stride_s = p64.v_stride_s = 2 * 64;
    p64.q_stride_b = p64.o_stride_b = 1000 * 8 * 64, p64.k_stride_b = p64.v_stride_b = 777 * 2 * 64;
    size_t need64 = 0;
    EXPECT_HAS(NULL, kiln_attn_pack_v_size(&p64, &need64), KILN_STATUS_SUCCESS, "");
    EXPECT_HAS(h, kiln_attn_query(h, &p64, algos, 4, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 1 && algos[0].solution_index == FAKE_ATTN_VPRE_D64, "pass first: n = %d", n);
    kiln_attn_args a64 = a;
    a64.vt_work_bytes = need64;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p64, NULL, &a64, (void *)0x9), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 2 && strcmp(fake.last[0].symbol, "fake_attn_f16_vpre_d64_SM90_pack") == 0 &&
              strcmp(fake.last[1].symbol, "fake_attn_f16_vpre_d64_SM90") == 0 && fake.zeros == 0 &&
              fake.last[1].attn.vt_fill == NULL && fake.last[1].attn.vt_sync == NULL && fake.encode[2].base == work,
          "pass first: %d launches (%s), %d fills", fake.launches, fake.launches ? fake.last[0].symbol : "", fake.zeros);
    /* a device whose SM count is unknown: the kernel's CTAs are not known to run in one wave, so the pass first (the
     * packing warps of a CTA hold it until every chunk is taken) */
    kiln_handle u = NULL;
    fake_sm_count = 0;
    CHECK(kiln_create_with_backend(&u, &fake_backend) == KILN_STATUS_SUCCESS, "fake device without an SM count");
    fake_sm_count = 132;
    fake_reset();
    EXPECT_HAS(u, kiln_attn_run(u, &p, NULL, &a, (void *)0x9), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 2 && strcmp(fake.last[0].symbol, "fake_attn_f16_vpre_SM90_pack") == 0 &&
              strcmp(fake.last[1].symbol, "fake_attn_f16_vpre_SM90") == 0 && fake.zeros == 0 &&
              fake.last[1].attn.vt_fill == NULL && fake.encode[2].base == work,
          "more CTAs than one wave: %d launches, %d fills", fake.launches, fake.zeros);
    kiln_destroy(u);
    /* v_packed 1 and 0 leave the fields empty */
    kiln_attn_problem p1 = p;
    p1.v_packed = 1;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p1, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 1 && fake.zeros == 0 && fake.last[0].attn.vt_fill == NULL &&
              fake.last[0].attn.vt_sync == NULL && fake.encode[2].base == v,
          "v_packed 1: no work");
    /* bad calls: nothing cleared, nothing launched */
    fake_reset();
    kiln_attn_args b = a;
    b.vt_work = NULL;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_NULL_POINTER,
               "args->vt_work is NULL (v_packed = 2)");
    b = a, b.vt_work_bytes = need - 1;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_INVALID_VALUE,
               "args->vt_work_bytes = ");
    b = a, b.vt_work = work + 4;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &b, NULL), KILN_STATUS_MISALIGNED, "args->vt_work");
    kiln_attn_problem bad = p;
    bad.v_stride_s = 8; /* V as given: its strides are checked (16-byte rows) */
    EXPECT_HAS(h, kiln_attn_check(h, &bad), KILN_STATUS_MISALIGNED, "v_stride_s = 8");
    bad = p, bad.o_type = BF16;
    EXPECT_HAS(h, kiln_attn_run(h, &bad, NULL, &a, NULL), KILN_STATUS_NOT_SUPPORTED,
               "v_packed = 2: sm90 has no attention kernels that read a packed V^T");
    CHECK(fake.launches == 0 && fake.zeros == 0, "bad calls: %d launches, %d fills", fake.launches, fake.zeros);
    /* no keys: no work needed, none read */
    kiln_attn_problem e = p;
    e.seqlen_k = 0;
    EXPECT_HAS(NULL, kiln_attn_pack_v_size(&e, &bytes), KILN_STATUS_SUCCESS, "");
    CHECK(bytes == 0, "no keys: %zu work bytes", bytes);
    b = a, b.vt_work = NULL, b.vt_work_bytes = 0;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &e, NULL, &b, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 1 && fake.zeros == 0 && fake.last[0].attn.vt_fill == NULL, "no keys: plain launch");
}

/* A V^T packed by kiln_attn_pack_v (v_packed = 1): its size, the kernels that read it (and only them), its tensor map,
 * the packer's launch, and every bad call refused before anything launches. */
static void test_packed_v(kiln_handle h)
{
    static _Alignas(16) uint8_t q[64], k[64], v[64];
    static _Alignas(16) uint16_t o[64], vt[64];
    static int32_t cu[4];
    kiln_attn_args a = {.q = q, .k = k, .v = vt, .o = o};
    kiln_attn_problem p = attn(3, 8, 2, 1000, 777, 128);
    p.o_type = F16;
    size_t bytes = 1;
    EXPECT_HAS(NULL, kiln_attn_pack_v_size(&p, &bytes), KILN_STATUS_SUCCESS, "");
    CHECK(bytes == (size_t)3 * 2 * 128 * 784 * 2, "pack size %zu", bytes);
    kiln_attn_problem e = attn(3, 8, 2, 1000, 0, 128);
    EXPECT_HAS(NULL, kiln_attn_pack_v_size(&e, &bytes), KILN_STATUS_SUCCESS, "");
    CHECK(bytes == 0, "no keys: %zu bytes", bytes);
    EXPECT_HAS(NULL, kiln_attn_pack_v_size(&p, NULL), KILN_STATUS_NULL_POINTER, "bytes is NULL");
    kiln_attn_problem huge = attn(65535, 65535, 65535, 1, INT32_MAX, 256);
    EXPECT_HAS(NULL, kiln_attn_pack_v_size(&huge, &bytes), KILN_STATUS_OVERFLOW, "packed V^T of batch 65535");
    CHECK(bytes == 0, "overflow: 0 bytes");
    /* selection: the packed-V kernel alone takes the packed problem, and no other one */
    kiln_attn_problem pp = p;
    pp.v_packed = 1;
    kiln_algo algos[4];
    int n = -1;
    EXPECT_HAS(h, kiln_attn_query(h, &pp, algos, 4, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 1 && algos[0].solution_index == FAKE_ATTN_VPRE_F16, "packed: n = %d, first %u", n,
          n > 0 ? algos[0].solution_index : 99u);
    EXPECT_HAS(h, kiln_attn_query(h, &p, algos, 4, &n), KILN_STATUS_SUCCESS, "");
    CHECK(n == 2 && algos[0].solution_index != FAKE_ATTN_VPRE_F16 && algos[1].solution_index != FAKE_ATTN_VPRE_F16,
          "not packed: n = %d", n);
    char text[4096];
    EXPECT_HAS(h, kiln_attn_explain(h, &p, text, sizeof text), KILN_STATUS_SUCCESS, "");
    CHECK(strstr(text, "fake_attn_f16_vpre_SM90: rejected: reads a packed V^T (the problem's v_packed = 0)") &&
              strstr(text, "V as given"),
          "explain:\n%s", text);
    EXPECT_HAS(h, kiln_attn_explain(h, &pp, text, sizeof text), KILN_STATUS_SUCCESS, "");
    CHECK(strstr(text, "fake_attn_f16_wgmma_SM90: rejected: reads V as given") &&
              strstr(text, "winner: [8] fake_attn_f16_vpre_SM90"),
          "explain:\n%s", text);
    kiln_attn_problem bf = pp;
    bf.o_type = BF16; /* e4m3 -> bf16 has kernels on sm90, none reading a packed V^T */
    EXPECT_HAS(h, kiln_attn_query(h, &bf, algos, 4, &n), KILN_STATUS_NOT_SUPPORTED,
               "v_packed = 1: sm90 has no attention kernels that read a packed V^T");
    kiln_attn_problem bad = p;
    bad.v_packed = 3;
    EXPECT_HAS(h, kiln_attn_check(h, &bad), KILN_STATUS_INVALID_VALUE, "v_packed = 3 must be 0 (V as given), 1");
    bad.v_packed = -1;
    EXPECT_HAS(h, kiln_attn_check(h, &bad), KILN_STATUS_INVALID_VALUE, "v_packed = -1 must be 0");
    /* V's strides describe V as given: unused (and unchecked) once it is packed */
    bad = pp, bad.v_stride_s = -5;
    EXPECT_HAS(h, kiln_attn_check(h, &bad), KILN_STATUS_SUCCESS, "");
    bad.v_packed = 0;
    EXPECT_HAS(h, kiln_attn_check(h, &bad), KILN_STATUS_INVALID_VALUE, "v_stride_s = -5 is negative");
    /* the run: the V map is the f16 V^T's {keys, head_dim, heads_kv, batch}, box {64 keys, head_dim} */
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &pp, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 1 && strcmp(fake.last[0].symbol, "fake_attn_f16_vpre_SM90") == 0 && fake.encodes == 4,
          "packed run: %s, %d encodes", fake.launches ? fake.last[0].symbol : "(none)", fake.encodes);
    /* persistent: O's map too ({head_dim, heads_q, seqlen_q, batch} of 16-bit O, box {64, 1, 16, 1}), o_map set */
    const fake_encode *eo = &fake.encode[3];
    CHECK(eo->rank == 4 && eo->elem_bytes == 2 && eo->swizzle_bytes == 128 && eo->base == o && eo->dims[0] == 128 &&
              eo->dims[1] == 8 && eo->dims[2] == 1000 && eo->dims[3] == 3 &&
              eo->strides[0] == 2 * (uint64_t)pp.o_stride_h && eo->strides[1] == 2 * (uint64_t)pp.o_stride_s &&
              eo->strides[2] == 2 * (uint64_t)pp.o_stride_b && eo->box[0] == 64 && eo->box[1] == 1 &&
              eo->box[2] == 16 && eo->box[3] == 1 && fake.last[0].attn.o_map == 1 &&
              fake.last[0].attn_tma.o.opaque[0] == (uint64_t)(uintptr_t)o,
          "O map dims %llu %llu %llu %llu, o_map %d", (unsigned long long)eo->dims[0], (unsigned long long)eo->dims[1],
          (unsigned long long)eo->dims[2], (unsigned long long)eo->dims[3], fake.last[0].attn.o_map);
    {
        /* O 8- but not 16-byte aligned, or its encode failing: no O map, the kernel stores from registers; the run
         * goes on */
        kiln_attn_args a2 = a;
        a2.o = o + 4;
        fake_reset();
        EXPECT_HAS(h, kiln_attn_run(h, &pp, NULL, &a2, NULL), KILN_STATUS_SUCCESS, "");
        CHECK(fake.launches == 1 && fake.encodes == 3 && fake.last[0].attn.o_map == 0, "unaligned O: %d encodes",
              fake.encodes);
        fake_reset();
        fake.fail_encode = 4;
        EXPECT_HAS(h, kiln_attn_run(h, &pp, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
        CHECK(fake.launches == 1 && fake.encodes == 4 && fake.last[0].attn.o_map == 0, "failed O encode");
        fake.fail_encode = 0;
    }
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &pp, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    const fake_encode *ev = &fake.encode[2];
    CHECK(ev->rank == 4 && ev->elem_bytes == 2 && ev->swizzle_bytes == 128 && ev->base == vt && ev->dims[0] == 777 &&
              ev->dims[1] == 128 && ev->dims[2] == 2 && ev->dims[3] == 3,
          "V^T map dims %llu %llu %llu %llu", (unsigned long long)ev->dims[0], (unsigned long long)ev->dims[1],
          (unsigned long long)ev->dims[2], (unsigned long long)ev->dims[3]);
    CHECK(ev->strides[0] == 2 * 784 && ev->strides[1] == 2 * 784 * 128 && ev->strides[2] == 2 * 784 * 128 * 2 &&
              ev->box[0] == 64 && ev->box[1] == 128 && ev->box[2] == 1 && ev->box[3] == 1,
          "V^T map strides %llu %llu %llu", (unsigned long long)ev->strides[0], (unsigned long long)ev->strides[1],
          (unsigned long long)ev->strides[2]);
    CHECK(fake.encode[0].elem_bytes == 1 && fake.encode[1].elem_bytes == 1, "Q and K maps stay fp8");
    /* persistent: 3 x 8 heads x 8 query blocks = 192 units, non-causal: one CTA an SM (132) */
    CHECK(fake.last[0].grid[0] == 132 && fake.last[0].grid[1] == 1 && fake.last[0].grid[2] == 1 &&
              fake.last[0].attn.work_pairs == 0,
          "persistent grid %u %u %u pairs %d", fake.last[0].grid[0], fake.last[0].grid[1], fake.last[0].grid[2],
          fake.last[0].attn.work_pairs);
    {
        /* causal: 96 mirrored pairs would not fill the SMs: every query block its own CTA, longest first */
        kiln_attn_problem pc = pp;
        pc.causal = 1;
        fake_reset();
        EXPECT_HAS(h, kiln_attn_run(h, &pc, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
        CHECK(fake.launches == 1 && fake.last[0].grid[0] == 192 && fake.last[0].grid[1] == 1 &&
                  fake.last[0].attn.work_pairs == 0,
              "causal grid %u pairs %d", fake.last[0].grid[0], fake.last[0].attn.work_pairs);
        /* 3 x 44 heads x 4 pairs = 528 units, 4 whole rounds of 132: pairs on 132 CTAs */
        pc = attn(3, 44, 2, 1000, 777, 128);
        pc.o_type = F16, pc.v_packed = 1, pc.causal = 1;
        fake_reset();
        EXPECT_HAS(h, kiln_attn_run(h, &pc, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
        CHECK(fake.launches == 1 && fake.last[0].grid[0] == 132 && fake.last[0].attn.work_pairs == 1,
              "causal 4096 grid %u pairs %d", fake.last[0].grid[0], fake.last[0].attn.work_pairs);
        /* 1 x 1 x 1 query block: one CTA */
        kiln_attn_problem one = pp;
        one.batch = 1, one.heads_q = 1, one.heads_kv = 1, one.seqlen_q = 100;
        fake_reset();
        EXPECT_HAS(h, kiln_attn_run(h, &one, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
        CHECK(fake.launches == 1 && fake.last[0].grid[0] == 1, "one block: grid %u", fake.last[0].grid[0]);
    }
    /* a packed-V algo forced on a problem whose V is not packed (and the other way round): refused */
    kiln_algo vp = algos[0];
    EXPECT_HAS(h, kiln_attn_query(h, &pp, &vp, 1, &n), KILN_STATUS_SUCCESS, "");
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, &vp, &a, NULL), KILN_STATUS_INVALID_ALGO,
               "algo fake_attn_f16_vpre_SM90 does not take this problem (arch, types, head_dim, v_packed)");
    CHECK(fake.launches == 0 && fake.encodes == 0, "nothing encoded or launched");
    test_packed_in_kernel(h, &p);
    /* the packer: the packed-V kernel's "<name>_pack", grid (ceil(seqlen_k / 64), heads_kv, batch), 256 threads */
    const size_t need = (size_t)3 * 2 * 128 * 784 * 2;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_pack_v(h, &p, v, NULL, vt, need, (void *)0x7), KILN_STATUS_SUCCESS, "");
    const fake_launch *l = &fake.last[0];
    CHECK(fake.launches == 1 && fake.bad_arg_bytes == 0 && l->arg_bytes == sizeof(kiln_attn_pack_params) &&
              strcmp(l->symbol, "fake_attn_f16_vpre_SM90_pack") == 0 && l->grid[0] == 13 && l->grid[1] == 2 &&
              l->grid[2] == 3 && l->block == 256 && l->lds == 0 && l->stream == (void *)0x7,
          "pack launch %s grid %u %u %u", fake.launches ? l->symbol : "(none)", l->grid[0], l->grid[1], l->grid[2]);
    CHECK(l->pack.v == v && l->pack.vt == vt && l->pack.cu_seqlens_k == NULL && l->pack.vt_keys == 784 &&
              l->pack.seqlen_k == 777 && l->pack.heads_kv == 2 && l->pack.v_stride_s == p.v_stride_s &&
              l->pack.v_stride_h == p.v_stride_h && l->pack.v_stride_b == p.v_stride_b,
          "pack params");
    EXPECT_HAS(h, kiln_attn_pack_v(h, &pp, v, NULL, vt, need, NULL), KILN_STATUS_SUCCESS, ""); /* v_packed ignored */
    /* bad calls: each refused with its name, nothing launched */
    fake_reset();
    EXPECT_HAS(h, kiln_attn_pack_v(h, &p, v, NULL, vt, need - 1, NULL), KILN_STATUS_INVALID_VALUE,
               "is below the");
    EXPECT_HAS(h, kiln_attn_pack_v(h, &p, v, NULL, NULL, need, NULL), KILN_STATUS_NULL_POINTER, "vt is NULL");
    EXPECT_HAS(h, kiln_attn_pack_v(h, &p, NULL, NULL, vt, need, NULL), KILN_STATUS_NULL_POINTER, "v is NULL");
    EXPECT_HAS(h, kiln_attn_pack_v(h, &p, v, NULL, (uint8_t *)vt + 2, need, NULL), KILN_STATUS_MISALIGNED,
               "is not 16-byte aligned");
    EXPECT_HAS(NULL, kiln_attn_pack_v(NULL, &p, v, NULL, vt, need, NULL), KILN_STATUS_NULL_POINTER, "h is NULL");
    EXPECT_HAS(h, kiln_attn_pack_v(h, NULL, v, NULL, vt, need, NULL), KILN_STATUS_NULL_POINTER, "p is NULL");
    bf = p, bf.o_type = BF16;
    EXPECT_HAS(h, kiln_attn_pack_v(h, &bf, v, NULL, vt, need, NULL), KILN_STATUS_NOT_SUPPORTED,
               "no attention kernels that read a packed V^T");
    bad = p, bad.v_stride_h = 7;
    EXPECT_HAS(h, kiln_attn_pack_v(h, &bad, v, NULL, vt, need, NULL), KILN_STATUS_MISALIGNED, "v_stride_h = 7");
    kiln_attn_problem vl = p;
    vl.varlen = 1, vl.total_q = 2500, vl.total_k = 1900;
    EXPECT_HAS(h, kiln_attn_pack_v(h, &vl, v, NULL, vt, need, NULL), KILN_STATUS_NULL_POINTER,
               "cu_seqlens_k is NULL (varlen = 1)");
    CHECK(fake.launches == 0, "no launch for a bad call (%d)", fake.launches);
    EXPECT_HAS(h, kiln_attn_pack_v(h, &e, v, NULL, NULL, 0, NULL), KILN_STATUS_SUCCESS, ""); /* no keys: nothing */
    CHECK(fake.launches == 0, "no launch for an empty V");
    /* varlen: the offsets reach the packer */
    EXPECT_HAS(h, kiln_attn_pack_v(h, &vl, v, cu, vt, need, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 1 && fake.last[0].pack.cu_seqlens_k == cu, "varlen pack");
    /* selecting for another arch: no code for the device */
    CHECK(kiln_set_arch(h, "gfx942") == KILN_STATUS_SUCCESS, "set_arch");
    EXPECT_HAS(h, kiln_attn_pack_v(h, &p, v, NULL, vt, need, NULL), KILN_STATUS_NO_CODE_FOR_DEVICE,
               "selecting for arch gfx942");
    CHECK(kiln_set_arch(h, "sm90") == KILN_STATUS_SUCCESS, "set_arch back");
}

/* The split tail's walk (kiln_attn_abi.h, kiln_attn_split_piece) as every CTA of a persistent grid runs it: over
 * random unit counts, grids and key tiles, every key tile of every unit exactly once (the head's whole units
 * c, c + grid, ... too), each CTA's tiles within one of every other's, a cut unit in exactly two pieces of neighbouring
 * CTAs (the first tiles role 1 and that CTA's first piece, the rest role 2 and the next CTA's last piece), at most one
 * piece of each role a CTA, and nothing returned past the last piece or for bad arguments. */
static void test_split_walk(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int failures = 0;
    static int32_t seen[4096 * 64];
    static int cut_by[4096];
    for (int trial = 0; trial < 3000 && failures < 5; trial++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const int64_t grid = 1 + (int64_t)(seed >> 33) % 200;
        const int64_t units = grid + 1 + (int64_t)(seed >> 13) % (trial % 3 == 0 ? 7 : 4 * grid);
        const int64_t tiles = 1 + (int64_t)(seed >> 45) % 64;
        if (units > 4096)
            continue;
        const int64_t split = kiln_attn_split_units(units, grid);
        if (units % grid == 0) {
            failures += split != 0;
            continue;
        }
        if (split != grid + units % grid || split > units) {
            failures++;
            continue;
        }
        memset(seen, 0, sizeof(int32_t) * (size_t)(units * tiles));
        for (int64_t u = 0; u < units; u++)
            cut_by[u] = -1;
        int64_t lo_tiles = INT64_MAX, hi_tiles = 0;
        for (int64_t c = 0; c < grid; c++) {
            int64_t mine = 0;
            for (int64_t u = c; u < units - split; u += grid) {
                for (int64_t t = 0; t < tiles; t++)
                    seen[u * tiles + t]++;
                mine += tiles;
            }
            int ones = 0, twos = 0, k = 0, last_role = -1;
            int32_t unit = -1, kt0 = -1, nt = -1, role = -1;
            int64_t prev_unit = INT64_MAX;
            for (; kiln_attn_split_piece((int32_t)units, (int32_t)split, (int32_t)tiles, (int32_t)grid, (int32_t)c, k,
                                         &unit, &kt0, &nt, &role);
                 k++) {
                if (unit < units - split || unit >= units || unit >= prev_unit || nt < 1 || kt0 < 0 ||
                    kt0 + nt > tiles || role != (kt0 > 0 ? 2 : kt0 + nt < tiles ? 1 : 0) ||
                    (role == 1 && k != 0) || (role == 2 && c == 0)) {
                    failures++;
                    break;
                }
                prev_unit = unit;
                for (int64_t t = kt0; t < kt0 + nt; t++)
                    seen[unit * tiles + t]++;
                mine += nt;
                ones += role == 1, twos += role == 2, last_role = role;
                if (role == 1)
                    cut_by[unit] = (int)c;
                if (role == 2 && cut_by[unit] != (int)c - 1)
                    failures++; /* merged from the CTA before it, which ran the unit's first tiles */
            }
            if (ones > 1 || twos > 1 || (twos == 1 && last_role != 2) || k > 3)
                failures++;
            lo_tiles = mine < lo_tiles ? mine : lo_tiles;
            hi_tiles = mine > hi_tiles ? mine : hi_tiles;
            int32_t x = 0;
            failures += kiln_attn_split_piece((int32_t)units, (int32_t)split, (int32_t)tiles, (int32_t)grid, (int32_t)c,
                                              k + 1, &x, &x, &x, &x) != 0;
        }
        for (int64_t i = 0; i < units * tiles; i++)
            failures += seen[i] != 1;
        failures += hi_tiles - lo_tiles > 1;
        if (failures)
            fprintf(stderr, "split walk: units %lld grid %lld tiles %lld: %d failures\n", (long long)units,
                    (long long)grid, (long long)tiles, failures);
    }
    CHECK(failures == 0, "split walk: %d failures", failures);
    int32_t x = 0;
    CHECK(!kiln_attn_split_piece(100, 0, 8, 10, 0, 0, &x, &x, &x, &x) &&
              !kiln_attn_split_piece(100, 19, 8, 10, 10, 0, &x, &x, &x, &x) &&
              !kiln_attn_split_piece(100, 19, 0, 10, 0, 0, &x, &x, &x, &x) &&
              !kiln_attn_split_piece(100, 19, 8, 10, -1, 0, &x, &x, &x, &x) &&
              !kiln_attn_split_piece(100, 101, 8, 10, 0, 0, &x, &x, &x, &x) &&
              !kiln_attn_split_piece(1 << 30, 300, 1 << 20, 132, 0, 0, &x, &x, &x, &x) &&
              kiln_attn_split_units(132, 132) == 0 && kiln_attn_split_units(100, 132) == 0 &&
              kiln_attn_split_units(1024, 132) == 232,
          "split walk: bad arguments and whole rounds");
}

/* kiln_attn_run with a split-tail kernel (the fake table's persist 2 entry): the workspace's size, the flags cleared
 * on the stream, the params' split fields, and the calls that take no split or are refused. */
static void test_split_run(kiln_handle h)
{
    static _Alignas(16) uint8_t q[64], k[64];
    static _Alignas(16) uint16_t o[64], vt[64];
    static _Alignas(16) uint8_t work[16];
    kiln_attn_args a = {.q = q, .k = k, .v = vt, .o = o};
    /* 3 x 8 heads x 8 query blocks of 128 = 192 units on 132 CTAs: the last 132 + 60 are split */
    kiln_attn_problem p = attn(3, 8, 2, 1000, 777, 128);
    p.o_type = F16, p.v_packed = 1;
    const size_t flags = (132 * 12 * 4 + 255) / 256 * 256, need = flags + (size_t)2 * 132 * 2 * 128 * (64 + 8) * 4;
    size_t bytes = 0;
    EXPECT_HAS(h, kiln_attn_split_work_size(h, &p, NULL, &bytes), KILN_STATUS_SUCCESS, "");
    CHECK(bytes == need, "split work %zu, expected %zu", bytes, need);
    a.split_work = work, a.split_work_bytes = need; /* (the fake device never touches it) */
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, (void *)0x7), KILN_STATUS_SUCCESS, "");
    const kiln_attn_params *k0 = &fake.last[0].attn;
    CHECK(fake.launches == 1 && fake.last[0].grid[0] == 132 && k0->split_units == 192 &&
              (void *)k0->split_flags == (void *)work && (char *)k0->split_work == (char *)work + flags,
          "split launch: grid %u, split_units %d", fake.last[0].grid[0], k0->split_units);
    CHECK(fake.zeros == 1 && fake.zero[0].dst == (void *)work && fake.zero[0].width == flags &&
              fake.zero[0].height == 1 && fake.zero[0].stream == (void *)0x7,
          "flags cleared: %d fills", fake.zeros);
    /* the selection's estimate counts the SMs' share (192 / 132 x (128 + 96) rows), not two whole rounds (448) */
    char text[4096];
    EXPECT_HAS(h, kiln_attn_explain(h, &p, text, sizeof text), KILN_STATUS_SUCCESS, "");
    CHECK(strstr(text, "fake_attn_f16_vpre_SM90: accepted, P in 16 bits, 192 workgroups (2 waves on 132 SMs), "
                       "estimate 326"),
          "explain:\n%s", text);
    kiln_attn_problem pc = p;
    pc.causal = 1;
    EXPECT_HAS(h, kiln_attn_explain(h, &pc, text, sizeof text), KILN_STATUS_SUCCESS, "");
    CHECK(strstr(text, "estimate 448"), "causal explain:\n%s", text);
    /* KILN_ATTN_GRID (a test hook) caps the grid: 7 CTAs, 7 + 192 mod 7 = 10 units split, the workspace for 7 */
    setenv("KILN_ATTN_GRID", "7", 1);
    EXPECT_HAS(h, kiln_attn_split_work_size(h, &p, NULL, &bytes), KILN_STATUS_SUCCESS, "");
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
    unsetenv("KILN_ATTN_GRID");
    CHECK(bytes == 512 + (size_t)2 * 7 * 2 * 128 * (64 + 8) * 4 && fake.launches == 1 && fake.last[0].grid[0] == 7 &&
              fake.last[0].attn.split_units == 10,
          "grid 7: %zu bytes, grid %u, split_units %d", bytes, fake.last[0].grid[0], fake.last[0].attn.split_units);
    /* no workspace: the same kernel, unsplit */
    kiln_attn_args none = a;
    none.split_work = NULL, none.split_work_bytes = 0;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &none, NULL), KILN_STATUS_SUCCESS, "");
    CHECK(fake.launches == 1 && fake.last[0].attn.split_units == 0 && fake.zeros == 0, "no workspace: no split");
    /* too small, misaligned: refused, nothing launched */
    kiln_attn_args small = a;
    small.split_work_bytes = need - 1;
    fake_reset();
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &small, NULL), KILN_STATUS_WORKSPACE_TOO_SMALL,
               "args->split_work_bytes = ");
    kiln_attn_args odd = a;
    odd.split_work = work + 4;
    EXPECT_HAS(h, kiln_attn_run(h, &p, NULL, &odd, NULL), KILN_STATUS_MISALIGNED, "args->split_work");
    CHECK(fake.launches == 0 && fake.zeros == 0, "bad workspaces: nothing launched (%d)", fake.launches);
    /* causal, whole rounds (4 x 33 heads x 8 blocks = 1056 = 8 x 132), one wave: no split, no bytes */
    kiln_attn_problem c = p;
    c.causal = 1;
    kiln_attn_problem whole = attn(4, 33, 3, 1000, 777, 128);
    whole.o_type = F16, whole.v_packed = 1;
    kiln_attn_problem wave = attn(1, 8, 2, 1000, 777, 128);
    wave.o_type = F16, wave.v_packed = 1;
    /* 132 x 192 x 84,734 key tiles of 128 pass the kernel's 32-bit count */
    kiln_attn_problem longk = attn(3, 8, 2, 1000, (int64_t)84734 * 128, 128);
    longk.o_type = F16, longk.v_packed = 1;
    const kiln_attn_problem *nos[4] = {&c, &whole, &wave, &longk};
    for (int i = 0; i < 4; i++) {
        bytes = 1;
        EXPECT_HAS(h, kiln_attn_split_work_size(h, nos[i], NULL, &bytes), KILN_STATUS_SUCCESS, "");
        fake_reset();
        EXPECT_HAS(h, kiln_attn_run(h, nos[i], NULL, &a, NULL), KILN_STATUS_SUCCESS, "");
        CHECK(bytes == 0 && fake.launches == 1 && fake.last[0].attn.split_units == 0 && fake.zeros == 0,
              "no split %d: %zu bytes, split_units %d", i, bytes, fake.last[0].attn.split_units);
    }
    /* varlen: never split */
    kiln_attn_problem vl = p;
    vl.varlen = 1, vl.total_q = 3000, vl.total_k = 2331;
    bytes = 1;
    EXPECT_HAS(h, kiln_attn_split_work_size(h, &vl, NULL, &bytes), KILN_STATUS_SUCCESS, "");
    CHECK(bytes == 0, "varlen: %zu bytes", bytes);
    /* a kernel without the split tail needs no bytes; bad calls */
    kiln_attn_problem plain = attn(3, 8, 2, 1000, 777, 128);
    plain.o_type = F16;
    EXPECT_HAS(h, kiln_attn_split_work_size(h, &plain, NULL, &bytes), KILN_STATUS_SUCCESS, "");
    CHECK(bytes == 0, "no split kernel: %zu bytes", bytes);
    EXPECT_HAS(h, kiln_attn_split_work_size(h, &p, NULL, NULL), KILN_STATUS_NULL_POINTER, "bytes is NULL");
    kiln_algo bogus = {0};
    bogus.name_hash = 0x1234;
    EXPECT_HAS(h, kiln_attn_split_work_size(h, &p, &bogus, &bytes), KILN_STATUS_INVALID_ALGO, "names no attention");
    kiln_attn_problem bad = p;
    bad.head_dim = 100;
    EXPECT_HAS(h, kiln_attn_split_work_size(h, &bad, NULL, &bytes), KILN_STATUS_NOT_SUPPORTED, "");
}

int main(void)
{
    kiln_handle h = NULL;
    CHECK(kiln_create_with_backend(&h, &fake_backend) == KILN_STATUS_SUCCESS, "fake device");
    test_defaults();
    test_bad_problems(h);
    test_selection(h);
    test_run(h);
    test_wgmma(h);
    test_packed_v(h);
    test_split_walk();
    test_split_run(h);
    kiln_destroy(h);
    return test_summary("test_attn");
}
