/* Small hand-made dispatch tables for the C tests (fake_tables.c): they define the symbols of runtime/src/table.h, so
 * a test links kiln_runtime_obj + fake_tables.c in place of the generated tables. Indices name the solutions. */
#ifndef KILN_FAKE_TABLES_H
#define KILN_FAKE_TABLES_H

#include "select.h"

enum {
    FAKE_FP8_MT128 = 0,    /* e4m3 x e4m3 -> bf16 TN, 128x128x64, align 16, lds 64 KiB */
    FAKE_FP8_MT64 = 1,     /* 64x64x64, align 16 */
    FAKE_FP8_BIG_LDS = 2,  /* 256x128x128, lds 300000 bytes: more than any device has */
    FAKE_FP8_SPLITK = 3,   /* 64x64x128, gsu 4 with a reduce kernel */
    FAKE_FP8_KMUL = 4,     /* 128x128x128, k_multiple 128 */
    FAKE_FP8_ANY = 5,      /* 32x32x32, align 1: the fallback */
    FAKE_MIXED = 6,        /* f16 x e4m3 -> f16 TN prepacked, align_a 8, align_b 16 */
    FAKE_GEMM = 7,         /* f16 x f16 -> f16 NN, align 8 */
    FAKE_FP8_SM89 = 8,     /* the sm89 fp8 solution (no code object) */
    FAKE_FP8_NOCODE = 9,   /* sm90 fp8, last in YAML order, no code object */
    FAKE_E5M2_NOCODE = 10, /* e5m2 x e5m2 -> bf16 TN: the only solution of its logic, no code object */
    FAKE_WG_FP8 = 11,        /* wgmma e4m3 x e4m3 -> f32 TN, 128x128x128, persistent, 384 threads, lds 192 KiB */
    FAKE_WG_FP8_SPLITK = 12, /* the same with gsu 2 and a reduce kernel, one CTA per tile (not persistent) */
    FAKE_WG_MIXED = 13,      /* wgmma f16 x e4m3 -> f32 TN prepacked, 128x128x64, persistent, align_a 8, align_b 16 */
    FAKE_WG_BLOCK = 14,      /* wgmma e4m3 x e4m3 -> bf16 TN with block scales (1x128 / 128x128), 128x128x128,
                              * persistent, D through a map: the only solution of its logic */
    FAKE_WG_GROUPED = 15,    /* the grouped (MoE) kind of the same types, tensor or row/column scales, 64x128x128 */
    FAKE_WG_BLOCK_GROUPED = 16, /* grouped with block scales, 64x128x128 */
    FAKE_NUM_SOLUTIONS = 17
};

/* Attention kernels (kiln_attn_solutions): e4m3 -> bf16 on sm90 unless said otherwise. */
enum {
    FAKE_ATTN_D128_BM128 = 0, /* head_dim 128, 128 query rows, 256 threads, 40 KiB */
    FAKE_ATTN_D128_BM64 = 1,  /* head_dim 128, 64 query rows, 128 threads */
    FAKE_ATTN_D64 = 2,        /* head_dim 64, 128 rows */
    FAKE_ATTN_D256_NOCODE = 3,/* head_dim 256, no code object */
    FAKE_ATTN_BIG_LDS = 4,    /* head_dim 256, more shared memory than the device has */
    FAKE_ATTN_GFX942 = 5,     /* gfx942 e4m3fnuz -> bf16, head_dim 128 */
    FAKE_ATTN_MMA_F16 = 6,    /* e4m3 -> f16, head_dim 128, 128 rows, the mma family */
    FAKE_ATTN_WGMMA_F16 = 7,  /* e4m3 -> f16, head_dim 128, 128 rows, BN 64, the wgmma family (after the mma one),
                               * P in f16 (p_bits 16; every other fake: 8) */
    FAKE_ATTN_VPRE_F16 = 8,   /* the same tile reading a V^T packed by kiln_attn_pack_v, one that can also pack it
                               * itself (v_packed 2; the others 0), persistent (kiln_attn_work_grid; the others launch
                               * a CTA a query block) */
    FAKE_ATTN_VPRE_D64 = 9,   /* e4m3 -> f16, head_dim 64, reading a packed V^T it cannot pack itself (v_packed 1) */
    FAKE_NUM_ATTN = 10
};

/* H100-like limits used by the tests' fake device. */
#define FAKE_MAX_LDS 232448

/* The fake tables as a kiln_tables (the same data the table.h symbols point at). */
kiln_tables fake_tables(void);

#endif /* KILN_FAKE_TABLES_H */
