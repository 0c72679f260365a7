/* The TMA-fed wgmma family through the public API on the fake device: kiln_tma_params with the maps of A and B (and
 * of D where the kernel stores through one), every tile on grid x, min(tiles, SMs) CTAs when persistent, and a backend without tma_encode. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_backend.h"
#include "test_util.h"

static kiln_problem fp8_problem(int64_t m, int64_t n, int64_t k)
{
    kiln_problem p;
    kiln_problem_init(&p, E4M3, E4M3, KILN_DTYPE_BF16, TN, m, n, k);
    return p;
}

static kiln_args good_args(void)
{
    kiln_args a;
    memset(&a, 0, sizeof a);
    a.a = (const void *)(uintptr_t)0x100000;
    a.b = (const void *)(uintptr_t)0x200000;
    a.d = (void *)(uintptr_t)0x300000;
    a.c = (const void *)(uintptr_t)0x400000;
    a.scale_a = (const float *)(uintptr_t)0x500000;
    a.scale_b = (const float *)(uintptr_t)0x500010;
    a.bias = (const void *)(uintptr_t)0x600000;
    a.alpha = 1.5f;
    a.beta = 0.5f;
    return a;
}

/* One tensor-map request of the fake backend: elem_bytes, base, dims, strides, box. */
static int encoded(const fake_encode *e, int elem, const void *base, uint64_t d0, uint64_t d1, uint64_t d2, uint64_t s0,
                   uint64_t s1, uint32_t b0, uint32_t b1)
{
    int same = e->elem_bytes == elem && e->base == base && e->dims[0] == d0 && e->dims[1] == d1 && e->dims[2] == d2 &&
               e->strides[0] == s0 && e->strides[1] == s1 && e->box[0] == b0 && e->box[1] == b1 && e->box[2] == 1;
    if (!same)
        fprintf(stderr, "  encode: elem %d base %p dims {%llu %llu %llu} strides {%llu %llu} box {%u %u %u}\n",
                e->elem_bytes, e->base, (unsigned long long)e->dims[0], (unsigned long long)e->dims[1],
                (unsigned long long)e->dims[2], (unsigned long long)e->strides[0], (unsigned long long)e->strides[1],
                e->box[0], e->box[1], e->box[2]);
    return same;
}

/* e4m3 x e4m3 -> f32 TN: the fake tables' wgmma logic. */
static kiln_problem wgmma_problem(int64_t m, int64_t n, int64_t k)
{
    kiln_problem p;
    kiln_problem_init(&p, E4M3, E4M3, F32, TN, m, n, k);
    return p;
}

/* The wgmma family: kiln_tma_params with the tensor maps, all tiles on grid x, min(tiles, SMs) CTAs when
 * persistent. The fake device has 132 SMs. */
static void test_run_wgmma(kiln_handle h)
{
    kiln_args args = good_args();
    void *stream = (void *)(uintptr_t)0xABC0;
    CHECK(sizeof(kiln_tma_params) % 64 == 0 && _Alignof(kiln_tma_params) == 64 && sizeof(kiln_tma_desc) == 128,
          "kiln_tma_params: %zu bytes", sizeof(kiln_tma_params));

    /* batched, A with a padded batch stride: 16 x 8 x 3 = 384 tiles on 132 persistent CTAs */
    kiln_problem p = wgmma_problem(2048, 1024, 4096);
    p.batch = 3;
    p.stride_a = 2048 * 4096 + 64;
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, stream), KILN_STATUS_SUCCESS);
    const fake_launch *l = &fake.last[0];
    CHECK(fake.launches == 1 && strcmp(l->symbol, kiln_solutions[FAKE_WG_FP8].name) == 0, "wgmma launched");
    CHECK(l->overlapped, "a wgmma kernel launches overlapped with the stream's previous kernel");
    setenv("KILN_PDL", "0", 1);
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, stream), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && !fake.last[0].overlapped, "KILN_PDL=0: a plain launch");
    unsetenv("KILN_PDL");
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, stream), KILN_STATUS_SUCCESS);
    CHECK(l->grid[0] == 132 && l->grid[1] == 1 && l->grid[2] == 1 && l->block == 384 && l->lds == 196608,
          "persistent geometry %u %u %u / %u / %u", l->grid[0], l->grid[1], l->grid[2], l->block, l->lds);
    CHECK(l->arg_bytes == sizeof(kiln_tma_params) && l->stream == stream, "argument kiln_tma_params (%zu bytes)",
          l->arg_bytes);
    CHECK(l->tma.num_tiles == 384, "num_tiles %d", l->tma.num_tiles);
    CHECK(l->params.m == 2048 && l->params.n == 1024 && l->params.k == 4096 && l->params.batch == 3 &&
              l->params.tiles_m == 16 && l->params.tiles_n == 8 && l->params.k_tiles_per_split == 32 &&
              l->params.stride_a == 2048 * 4096 + 64 && l->params.a == args.a && l->params.d == args.d &&
              l->params.workspace == NULL && l->params.alpha == 1.5f,
          "GEMM params inside kiln_tma_params");
    CHECK(fake.encodes == 3 && l->tma.d_tma == 128, "three maps encoded (%d), D stored through its map (%d)",
          fake.encodes, l->tma.d_tma);
    CHECK(encoded(&fake.encode[0], 1, args.a, 4096, 2048, 3, 4096, 2048 * 4096 + 64, 128, 128), "map of A");
    CHECK(encoded(&fake.encode[1], 1, args.b, 4096, 1024, 3, 4096, 1024 * 4096, 128, 128), "map of B");
    /* D (f32): {n, m, batch}, boxes of 128 bytes (32 columns) by 64 rows, 128-byte swizzle */
    CHECK(encoded(&fake.encode[2], 4, args.d, 1024, 2048, 3, 4096, 2048 * 1024 * 4, 32, 64) &&
              fake.encode[0].swizzle_bytes == 128 && fake.encode[2].swizzle_bytes == 128,
          "map of D");
    CHECK(l->tma.a.opaque[0] == (uint64_t)(uintptr_t)args.a && l->tma.b.opaque[0] == (uint64_t)(uintptr_t)args.b &&
              l->tma.b.opaque[1] == 1 && l->tma.d.opaque[0] == (uint64_t)(uintptr_t)args.d,
          "the encoded maps are the ones passed");

    /* D that no map can take (rows of 1022 * 4 bytes: not whole 16-byte units, which the copy engine would write
     * past N; a base off 16 bytes): plain stores, two maps */
    kiln_problem q = wgmma_problem(2048, 1022, 4096);
    q.ldd = 1024;
    kiln_args odd = args;
    fake_reset();
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.encodes == 2 && fake.last[0].tma.d_tma == 0, "n * 4 %% 16 != 0: no D map");
    odd.d = (void *)(uintptr_t)0x300008;
    q = wgmma_problem(2048, 1024, 4096);
    fake_reset();
    EXPECT(kiln_run(h, &q, NULL, &odd, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.encodes == 2 && fake.last[0].tma.d_tma == 0, "D off 16 bytes: no D map");
    /* a bias and per-column scales go through the TMA-store epilogue too; an activation takes the staged path */
    q.has_bias = 1;
    fake_reset();
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.encodes == 3 && fake.last[0].tma.d_tma == 128, "bias: D map");
    q.has_bias = 0;
    q.scale_b = KILN_SCALE_VECTOR;
    fake_reset();
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.encodes == 3 && fake.last[0].tma.d_tma == 128, "scale_b[n]: D map");
    q.activation = KILN_ACT_GELU;
    fake_reset();
    EXPECT(kiln_run(h, &q, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.encodes == 2 && fake.last[0].tma.d_tma == 0, "activation: no D map");
    q.activation = KILN_ACT_NONE;

    /* fewer tiles than SMs: one CTA per tile; at batch 1 the batch stride is the matrix (stride_a is ignored) */
    p = wgmma_problem(256, 256, 256);
    p.stride_a = 0;
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    l = &fake.last[0];
    CHECK(fake.launches == 1 && l->grid[0] == 4 && l->tma.num_tiles == 4 && l->grid[2] == 1, "4 tiles, grid %u",
          l->grid[0]);
    CHECK(encoded(&fake.encode[0], 1, args.a, 256, 256, 1, 256, 256 * 256, 128, 128), "map of A at batch 1");
    CHECK(encoded(&fake.encode[1], 1, args.b, 256, 256, 1, 256, 256 * 256, 128, 128), "map of B at batch 1");

    /* split-K, not persistent: every (tile, batch, split) gets a CTA, then the reduce kernel on kiln_gemm_params */
    p = wgmma_problem(1024, 1024, 4096);
    p.batch = 2;
    kiln_algo algos[4];
    int n = 0;
    EXPECT(kiln_query(h, &p, NULL, algos, 4, &n), KILN_STATUS_SUCCESS);
    CHECK(n == 2 && algos[0].solution_index == FAKE_WG_FP8 && algos[1].solution_index == FAKE_WG_FP8_SPLITK &&
              algos[1].workspace_bytes == 2u * 2u * 1024u * 1024u * 4u,
          "wgmma candidates (%d)", n);
    void *ws = (void *)(uintptr_t)0x7000000;
    fake_reset();
    EXPECT(kiln_run(h, &p, &algos[1], &args, ws, (size_t)algos[1].workspace_bytes, NULL), KILN_STATUS_SUCCESS);
    l = &fake.last[0];
    CHECK(fake.launches == 2 && strcmp(l->symbol, kiln_solutions[FAKE_WG_FP8_SPLITK].name) == 0 &&
              l->grid[0] == 256 && l->grid[1] == 1 && l->grid[2] == 1 && l->tma.num_tiles == 256 &&
              l->arg_bytes == sizeof(kiln_tma_params),
          "split-K wgmma: grid %u, %d tiles", l->grid[0], l->tma.num_tiles);
    CHECK(l->params.k_tiles_per_split == 16 && l->params.workspace == ws && l->tma.d_tma == 0 && fake.encodes == 2,
          "split-K wgmma params (partial sums go to the workspace, no D map)");
    l = &fake.last[1];
    CHECK(strcmp(l->symbol, kiln_solutions[FAKE_WG_FP8_SPLITK].reduce_name) == 0 && l->grid[0] == 4096 &&
              l->grid[1] == 1 && l->grid[2] == 2 && l->block == KILN_REDUCE_THREADS && l->lds == 0 &&
              l->arg_bytes == sizeof(kiln_gemm_params),
          "wgmma reduce launch");
    CHECK(fake.last[0].overlapped && !l->overlapped, "the split GEMM overlapped, its reduce (which reads it) plain");
    CHECK(memcmp(&l->params, &fake.last[0].tma.p, sizeof l->params) == 0, "the reduce gets the GEMM's params");

    /* f16 x prepacked e4m3: A of 2-byte elements (box 64 wide), B's rows run to the padded ldb */
    kiln_problem_init(&p, F16, E4M3, F32, TN, 256, 512, 104);
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    l = &fake.last[0];
    CHECK(fake.launches == 1 && strcmp(l->symbol, kiln_solutions[FAKE_WG_MIXED].name) == 0 && l->grid[0] == 8 &&
              l->tma.num_tiles == 8 && l->block == 384 && l->lds == 131072,
          "mixed wgmma launch");
    CHECK(!l->overlapped, "a kernel without griddepcontrol (the fake mixed solution's overlap 0) launches plainly");
    CHECK(l->params.k == 104 && l->params.ldb == 112 && l->params.k_tiles_per_split == 2 && l->tma.d_tma == 0,
          "mixed params (f32 D, a solution without the TMA-store epilogue: no D map)");
    CHECK(encoded(&fake.encode[0], 2, args.a, 104, 256, 1, 208, 104 * 256 * 2, 64, 128), "map of f16 A");
    CHECK(encoded(&fake.encode[1], 1, args.b, 112, 512, 1, 112, 112 * 512, 128, 128), "map of prepacked B");

    /* a failing encode (of A, of B, then of D) launches nothing */
    p = wgmma_problem(2048, 1024, 4096);
    for (int which = 1; which <= 3; which++) {
        fake_reset();
        fake.fail_encode = which;
        EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_DRIVER_ERROR);
        CHECK(fake.launches == 0 && fake.encodes == which, "encode %d fails: %d launches", which, fake.launches);
    }
    fake.fail_encode = 0;
}

/* The grid against the SM count, and a backend without tma_encode. Own handles on the fake device. */
static void test_wgmma_backends(void)
{
    kiln_handle h = NULL;
    kiln_args args = good_args();
    kiln_problem p = wgmma_problem(2048, 1024, 4096);
    p.batch = 3; /* 384 tiles */
    static const struct {
        int sms;
        uint32_t grid;
    } cases[] = {{0, 384}, {1000, 384}, {384, 384}, {383, 383}, {1, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_sm_count = cases[i].sms;
        EXPECT(kiln_create_with_backend(&h, &fake_backend), KILN_STATUS_SUCCESS);
        fake_reset();
        EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
        CHECK(fake.launches == 1 && fake.last[0].grid[0] == cases[i].grid && fake.last[0].tma.num_tiles == 384,
              "%d SMs: grid %u, want %u", cases[i].sms, fake.last[0].grid[0], cases[i].grid);
        EXPECT(kiln_destroy(h), KILN_STATUS_SUCCESS);
    }
    fake_sm_count = 132;

    EXPECT(kiln_create_with_backend(&h, &fake_backend_no_tma), KILN_STATUS_SUCCESS);
    fake_reset();
    EXPECT(kiln_run(h, &p, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_CODE_FOR_DEVICE);
    kiln_problem mixed;
    kiln_problem_init(&mixed, F16, E4M3, F32, TN, 256, 512, 104);
    EXPECT(kiln_run(h, &mixed, NULL, &args, NULL, 0, NULL), KILN_STATUS_NO_CODE_FOR_DEVICE);
    CHECK(fake.launches == 0 && fake.loads == 0 && fake.encodes == 0, "no tma_encode: %d launches, %d loads",
          fake.launches, fake.loads);
    /* the other families still run there */
    kiln_problem mma = fp8_problem(4096, 4096, 4096);
    EXPECT(kiln_run(h, &mma, NULL, &args, NULL, 0, NULL), KILN_STATUS_SUCCESS);
    CHECK(fake.launches == 1 && fake.last[0].arg_bytes == sizeof(kiln_gemm_params), "mma without tma_encode");
    EXPECT(kiln_destroy(h), KILN_STATUS_SUCCESS);
    CHECK(fake.bad_arg_bytes == 0, "every argument had a known size");
}

/* Block scales through tensor maps (kiln_tma_map_scales): which layouts get maps, their extents, strides and boxes,
 * and the bytes a stage's two boxes carry; the others (and KILN_TMA_SCALES=0) keep the kernel's scale warp. */
static void test_scale_maps(void)
{
    kiln_solution s;
    memset(&s, 0, sizeof s);
    s.mt0 = 128;
    s.mt1 = 256;
    kiln_args args = good_args();
    kiln_tma_map m[2];
    int bytes = -1;
    kiln_problem p;
    kiln_problem_init(&p, E4M3, E4M3, KILN_DTYPE_BF16, TN, 4096, 7168, 1000); /* 8 groups of K, 56 blocks of N */
    p.scale_a = p.scale_b = KILN_SCALE_BLOCK;
    p.scale_b_stride_n = 8; /* kiln's default is 8 here: the groups of K */

    /* kiln's defaults: scale_a M-major [8][4096], scale_b K-major [56][8] */
    int bits = kiln_tma_map_scales(&s, &p, &args, m, &bytes);
    CHECK(bits == (KILN_SCALE_TMA_A | KILN_SCALE_TMA_B_K) && bytes == 4 * 132 + 16 * 2, "defaults: bits %d, %d bytes",
          bits, bytes);
    CHECK(m[0].elem_bytes == 4 && m[0].swizzle_bytes == 0 && m[0].dims[0] == 4096 && m[0].dims[1] == 8 &&
              m[0].dims[2] == 1 && m[0].strides[0] == 4096 * 4 && m[0].box[0] == 132 && m[0].box[1] == 1,
          "scale_a map {%llu %llu %llu} box %u", (unsigned long long)m[0].dims[0], (unsigned long long)m[0].dims[1],
          (unsigned long long)m[0].dims[2], m[0].box[0]);
    CHECK(m[1].dims[0] == 8 && m[1].dims[1] == 56 && m[1].strides[0] == 32 && m[1].box[0] == 4 && m[1].box[1] == 2,
          "scale_b K-major map {%llu %llu} box {%u %u}", (unsigned long long)m[1].dims[0],
          (unsigned long long)m[1].dims[1], m[1].box[0], m[1].box[1]);

    /* scale_b N-major (torch's transposed layout, blocks padded to 60 floats a group) */
    kiln_problem q = p;
    q.scale_b_stride_n = 1;
    q.scale_b_stride_k = 60;
    bits = kiln_tma_map_scales(&s, &q, &args, m, &bytes);
    CHECK(bits == (KILN_SCALE_TMA_A | KILN_SCALE_TMA_B_N) && bytes == 4 * 132 + 32 && m[1].dims[0] == 56 &&
              m[1].dims[1] == 8 && m[1].strides[0] == 240 && m[1].box[0] == 8 && m[1].box[1] == 1,
          "N-major scale_b: bits %d, %d bytes", bits, bytes);
    /* 1x128 B scales N-major: boxes of MT1 columns */
    q.scale_b_block_n = 1;
    q.scale_b_stride_k = 7168;
    bits = kiln_tma_map_scales(&s, &q, &args, m, &bytes);
    CHECK(bits == (KILN_SCALE_TMA_A | KILN_SCALE_TMA_B_N) && bytes == 4 * 132 + 4 * 256 && m[1].dims[0] == 7168 &&
              m[1].box[0] == 256,
          "1x128 N-major: bits %d, %d bytes", bits, bytes);

    /* the scale warp's: 1x128 K-major B, N-major B with a group stride of 57 floats, K-major with 57, scale_a K-major
     * or with a stride of 4095 floats, a scale_a not 16-byte aligned, tensor scales, the environment's switch */
    q = p;
    q.scale_b_block_n = 1;
    q.scale_b_stride_n = 8;
    CHECK(kiln_tma_map_scales(&s, &q, &args, m, &bytes) == 0 && bytes == 0, "1x128 K-major B: the scale warp");
    q = p;
    q.scale_b_stride_n = 1;
    q.scale_b_stride_k = 57;
    CHECK(kiln_tma_map_scales(&s, &q, &args, m, &bytes) == 0, "N-major B, 57-float stride: the scale warp");
    q = p;
    q.scale_b_stride_n = 57;
    CHECK(kiln_tma_map_scales(&s, &q, &args, m, &bytes) == 0, "K-major B, 57-float stride: the scale warp");
    q = p;
    q.scale_a_stride_m = 8;
    q.scale_a_stride_k = 1;
    CHECK(kiln_tma_map_scales(&s, &q, &args, m, &bytes) == 0, "K-major scale_a: the scale warp");
    q = p;
    q.scale_a_stride_k = 4095;
    CHECK(kiln_tma_map_scales(&s, &q, &args, m, &bytes) == 0, "scale_a stride 4095: the scale warp");
    kiln_args odd = args;
    odd.scale_a = (const float *)(uintptr_t)0x500004;
    CHECK(kiln_tma_map_scales(&s, &p, &odd, m, &bytes) == 0, "scale_a 4-byte aligned: the scale warp");
    q = p;
    q.scale_a = q.scale_b = KILN_SCALE_TENSOR;
    CHECK(kiln_tma_map_scales(&s, &q, &args, m, &bytes) == 0, "tensor scales: no scale maps");
    q = p;
    q.scale_b_stride_n = -8;
    CHECK(kiln_tma_map_scales(&s, &q, &args, m, &bytes) == 0, "a negative stride: the scale warp");
    kiln_solution tall = s;
    tall.mt0 = 256; /* A's box would be 260 rows: over the 256 a box may have */
    CHECK(kiln_tma_map_scales(&tall, &p, &args, m, &bytes) == 0, "a 256-row tile: the scale warp");
    setenv("KILN_TMA_SCALES", "0", 1);
    CHECK(kiln_tma_map_scales(&s, &p, &args, m, &bytes) == 0, "KILN_TMA_SCALES=0: the scale warp");
    unsetenv("KILN_TMA_SCALES");

    /* one row and one group: their strides are never stepped over (B's blocks are adjacent: N-major) */
    q = p;
    q.m = 1;
    q.k = 128;
    q.scale_a_stride_m = 3;
    q.scale_a_stride_k = 1;
    q.scale_b_stride_n = 1;
    q.scale_b_stride_k = 3;
    bits = kiln_tma_map_scales(&s, &q, &args, m, &bytes);
    CHECK(bits == (KILN_SCALE_TMA_A | KILN_SCALE_TMA_B_N) && m[0].dims[0] == 1 && m[0].dims[1] == 1 &&
              m[0].strides[0] == 16 && m[1].dims[0] == 56 && m[1].dims[1] == 1 && m[1].strides[0] == 224,
          "one row, one group: bits %d, B stride %llu", bits, (unsigned long long)m[1].strides[0]);

    /* masked groups: a third extent of 4 groups, scale_a and scale_b group strides */
    q = p;
    q.group_mode = KILN_GROUP_MASKED;
    q.groups = 4;
    q.m = 256;
    q.scale_a_stride_k = 256;
    bits = kiln_tma_map_scales(&s, &q, &args, m, &bytes);
    CHECK(bits == (KILN_SCALE_TMA_A | KILN_SCALE_TMA_B_K) && m[0].dims[2] == 4 && m[0].strides[1] == 256 * 8 * 4 &&
              m[1].dims[2] == 4 && m[1].strides[1] == 56 * 8 * 4,
          "masked: bits %d, strides %llu %llu", bits, (unsigned long long)m[0].strides[1],
          (unsigned long long)m[1].strides[1]);

    /* k-grouped: one A and one B whose groups of 128 run over all of K (no third extent), 1x128 B per column */
    q = p;
    q.group_mode = KILN_GROUP_K;
    q.groups = 4;
    q.scale_b_block_n = 1;
    q.scale_b_stride_n = 1;
    q.scale_b_stride_k = q.n;
    bits = kiln_tma_map_scales(&s, &q, &args, m, &bytes);
    CHECK(bits == (KILN_SCALE_TMA_A | KILN_SCALE_TMA_B_N) && m[0].dims[2] == 1 && m[1].dims[2] == 1 &&
              m[1].dims[0] == (uint64_t)q.n && m[1].dims[1] == 8,
          "k-grouped: bits %d, dims %llu %llu %llu", bits, (unsigned long long)m[1].dims[0],
          (unsigned long long)m[1].dims[1], (unsigned long long)m[1].dims[2]);
    int64_t gsa, gsb, gbias;
    kiln_problem_group_strides(&q, &gsa, &gsb, &gbias);
    CHECK(gsa == 0 && gsb == 0 && gbias == q.n, "k-grouped block: group strides %lld %lld %lld", (long long)gsa,
          (long long)gsb, (long long)gbias);
    q.scale_a = q.scale_b = KILN_SCALE_VECTOR;
    kiln_problem_group_strides(&q, &gsa, &gsb, &gbias);
    CHECK(gsa == q.m && gsb == q.n, "k-grouped vector: group strides %lld %lld", (long long)gsa, (long long)gsb);
    CHECK(kiln_problem_a_batches(&q) == 1 && kiln_problem_b_batches(&q) == 1 && kiln_problem_d_batches(&q) == 4 &&
              kiln_problem_select_k(&q) == (q.k + 3) / 4,
          "k-grouped batches");
}

/* Multicast solutions (clusters of two CTAs): grid x counts pairs of tiles along M (1) or N (2), an odd count's
 * last tile pairing with one past D's edge; the shared operand's map has half the tile's rows per box; the size
 * predicate counts two CTAs per pair. Then split-K in a cluster (multicast 3). */
static void test_multicast_geometry(void)
{
    kiln_solution s = kiln_solutions[FAKE_WG_FP8]; /* 128x128x128 */
    kiln_problem p = wgmma_problem(2112, 1024, 4096); /* 17 x 8 tiles */
    p.batch = 3;
    kiln_geometry g;
    kiln_tma_map maps[2];
    char why[200];
    kiln_solution_geometry(&s, &p, &g);
    CHECK(g.grid_x == 17 * 8 * 3 && g.cluster == 1, "no multicast: %lld tiles, cluster %lld", (long long)g.grid_x,
          (long long)g.cluster);
    s.multicast = 1;
    kiln_solution_geometry(&s, &p, &g);
    CHECK(g.tiles_m == 17 && g.grid_x == 9 * 8 * 3 && g.cluster == 2, "pairs along M: %lld", (long long)g.grid_x);
    CHECK(kiln_tma_maps(&s, &p, NULL, maps, why, sizeof why) == KILN_FITS && maps[0].box[1] == 128 &&
              maps[1].box[1] == 64,
          "B's boxes are half a tile: %u %u (%s)", maps[0].box[1], maps[1].box[1], why);
    s.multicast = 2;
    p.n = 1152; /* 9 tiles along N */
    kiln_solution_geometry(&s, &p, &g);
    CHECK(g.grid_x == 17 * 5 * 3 && g.cluster == 2, "pairs along N: %lld", (long long)g.grid_x);
    CHECK(kiln_tma_maps(&s, &p, NULL, maps, why, sizeof why) == KILN_FITS && maps[0].box[1] == 64 &&
              maps[1].box[1] == 128,
          "A's boxes are half a tile: %u %u (%s)", maps[0].box[1], maps[1].box[1], why);
    /* the grid bound: two CTAs a pair */
    kiln_select_input in;
    memset(&in, 0, sizeof in);
    in.problem = &p;
    in.arch = "sm90";
    in.max_grid_x = 2 * g.grid_x - 1;
    CHECK(kiln_solution_fits(&s, &in, why, sizeof why) == KILN_REJECT_SIZE, "2 x pairs past max_grid_x: %s", why);
    in.max_grid_x = 2 * g.grid_x;
    CHECK(kiln_solution_fits(&s, &in, why, sizeof why) == KILN_FITS, "2 x pairs within max_grid_x: %s", why);
    s.multicast = 4;
    CHECK(kiln_solution_fits(&s, &in, why, sizeof why) == KILN_REJECT_PROBLEM, "multicast 4: %s", why);

    /* split-K in a cluster (3): grid x counts tiles, a cluster of gsu CTAs each; no workspace, no reduce kernel;
     * the size predicate counts gsu CTAs a tile; gsu 2..8 and one tile a cluster (not persistent) only */
    s.multicast = 3;
    s.gsu = 4;
    s.persistent = 0;
    kiln_solution_geometry(&s, &p, &g);
    CHECK(g.grid_x == 17 * 9 * 3 && g.grid_z == 1 && g.cluster == 4 && g.k_tiles_per_split == 8 &&
              g.workspace_bytes == 0 && g.reduce_grid_x == 0 && !kiln_solution_reduces(&s),
          "cluster split-K: %lld tiles, cluster %lld, workspace %llu", (long long)g.grid_x, (long long)g.cluster,
          (unsigned long long)g.workspace_bytes);
    in.max_grid_x = 4 * g.grid_x - 1;
    CHECK(kiln_solution_fits(&s, &in, why, sizeof why) == KILN_REJECT_SIZE, "4 x tiles past max_grid_x: %s", why);
    in.max_grid_x = 4 * g.grid_x;
    CHECK(kiln_solution_fits(&s, &in, why, sizeof why) == KILN_FITS, "4 x tiles within max_grid_x: %s", why);
    s.persistent = 1;
    CHECK(kiln_solution_fits(&s, &in, why, sizeof why) == KILN_REJECT_PROBLEM, "persistent cluster split-K: %s", why);
    s.persistent = 0;
    s.gsu = 16;
    CHECK(kiln_solution_fits(&s, &in, why, sizeof why) == KILN_REJECT_PROBLEM, "cluster split-K gsu 16: %s", why);
    s.gsu = 4;
    s.multicast = 0;
    CHECK(kiln_solution_reduces(&s), "gsu 4 without a cluster reduces in a second kernel");
}

/* D's map for grouped problems: the kernels store whole tiles of a group through it (contiguous: D is one matrix
 * of all groups' rows; masked and k-grouped: a batch per group). */
static void test_grouped_d_map(void)
{
    kiln_solution s = kiln_solutions[FAKE_WG_FP8];
    kiln_args args = good_args();
    kiln_tma_map m;
    kiln_problem p = wgmma_problem(1000, 512, 256);
    p.group_mode = KILN_GROUP_CONTIGUOUS;
    p.groups = 5;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 128 && m.dims[0] == 512 && m.dims[1] == 1000 && m.dims[2] == 1 &&
              m.box[1] == 64,
          "contiguous: one matrix of all rows (%llu x %llu x %llu)", (unsigned long long)m.dims[0],
          (unsigned long long)m.dims[1], (unsigned long long)m.dims[2]);
    p.group_mode = KILN_GROUP_MASKED;
    p.stride_d = 1000 * 512;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 128 && m.dims[2] == 5 && m.strides[1] == 1000 * 512 * 4,
          "masked: a batch per group (%llu)", (unsigned long long)m.dims[2]);
    p.group_mode = KILN_GROUP_K;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 128 && m.dims[2] == 5, "k-grouped: a batch per group");
    p.has_bias = 1; /* row/column scales and a bias go through the TMA-store epilogue */
    p.scale_a = p.scale_b = KILN_SCALE_VECTOR;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 128, "row/column scales and bias: D map");
    p.scale_a = p.scale_b = KILN_SCALE_BLOCK; /* block-scaled kernels leave a bias to the staged path */
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 0, "block scales with a bias: no D map");
    p.has_bias = 0;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 128, "block scales: D map");
    p.activation = KILN_ACT_RELU; /* activations stay staged */
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 0, "activation: no D map");
}

/* Prepacked weights: D is mapped only for a kernel with the swapped TMA-store epilogue (kiln_solution.tma_store), and
 * then under the same rules as the other kernels (no C, no activation). */
static void test_prepacked_d_map(void)
{
    kiln_solution s = kiln_solutions[FAKE_WG_MIXED];
    kiln_args args = good_args();
    kiln_tma_map m;
    kiln_problem p;
    kiln_problem_init(&p, F16, E4M3, F16, TN, 300, 520, 1000);
    p.b_prepacked = 1;
    p.scale_b = KILN_SCALE_VECTOR;
    p.has_bias = 1;
    s.tma_store = 0;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 0, "no TMA-store epilogue: no D map");
    s.tma_store = 1;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 128 && m.dims[0] == 520 && m.dims[1] == 300 && m.box[1] == 64,
          "the swapped TMA-store epilogue: D map (%llu x %llu)", (unsigned long long)m.dims[0],
          (unsigned long long)m.dims[1]);
    p.activation = KILN_ACT_GELU;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 0, "activation: no D map");
    p.activation = KILN_ACT_NONE;
    p.n = 515; /* rows of D not whole 16-byte units */
    p.ldd = 515;
    CHECK(kiln_tma_map_d(&s, &p, &args, &m) == 0, "n * 2 %% 16 != 0: no D map");
}

int main(void)
{
    kiln_handle h = NULL;
    EXPECT(kiln_create_with_backend(&h, &fake_backend), KILN_STATUS_SUCCESS);
    test_run_wgmma(h);
    EXPECT(kiln_destroy(h), KILN_STATUS_SUCCESS);
    test_wgmma_backends();
    test_scale_maps();
    test_multicast_geometry();
    test_grouped_d_map();
    test_prepacked_d_map();
    return test_summary("test_wgmma");
}
