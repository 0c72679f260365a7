/* The one argument every kiln GEMM kernel takes, by value. Plain C: included by the runtime (to fill it) and by
 * device code (to read it). Changing it changes every kernel: bump KILN_ABI_VERSION.
 * Private to both sides: device code includes it as "abi/kiln_abi.h" (device/kiln_device.h), the runtime's sources as
 * "kiln_abi.h" with device/abi on their private include path. It is not installed and no public header includes it. */
#ifndef KILN_ABI_H
#define KILN_ABI_H

#include <stdint.h>

#define KILN_ABI_VERSION 6

typedef struct kiln_gemm_params {
    const void *a;
    const void *b;
    const void *c;          /* read when has_c */
    void *d;
    const float *scale_a;   /* per scale_a_mode */
    const float *scale_b;
    const void *bias;       /* NULL = none */
    float *workspace;       /* gsu > 1: gsu * batch * m * n floats of split-K partials */
    int64_t lda, ldb, ldc, ldd;
    int64_t stride_a, stride_b, stride_c, stride_d;
    int32_t m, n, k;        /* k: real K. B rows may be longer (prepacked: padded with zeros) */
    int32_t batch;
    int32_t tiles_m, tiles_n;
    int32_t k_tiles_per_split; /* DepthU tiles each split-K slice covers */
    int32_t scale_a_mode;   /* kiln_scale_mode */
    int32_t scale_b_mode;
    int32_t bias_type;      /* kiln_dtype: f32, f16 or bf16 */
    int32_t activation;     /* kiln_activation */
    int32_t has_c;
    float alpha, beta;
    /* Block scales (both modes KILN_SCALE_BLOCK): kiln_problem's scale strides and B's block width (kiln.h) */
    int64_t sa_stride_m, sa_stride_k;
    int64_t sb_stride_n, sb_stride_k;
    int32_t sb_block_n;
    int32_t sa_vec; /* 1: scale_a is M-major with 16-byte aligned groups (copied 4 rows at a time) */
    /* Grouped GEMM (kernels built with GROUPED; kiln.h, "Grouped GEMM"). group_mode 1 (contiguous): group g is rows
     * [end(g-1), end(g)) of A and D (batch 0), end(g) = group_index[g] clamped to [end(g-1), m]; group_mode 2 (masked):
     * group g is rows [0, min(group_index[g], m)) of batch g of A and D. B, scale_b and bias of group g start
     * g * stride_b, g * g_stride_sb and g * g_stride_bias elements in; scale_a g * g_stride_sa (masked; 0 contiguous,
     * whose scale_a rows are A's); group_mode 3 (k-grouped): group g is K columns [end(g-1), end(g)) of A and B (one
     * matrix each) and all of D's batch g, end(g) = group_index[g] clamped to [end(g-1), k] and rounded down to a
     * multiple of 128 unless it is k; vector scales g * g_stride_sa / g_stride_sb in, block scales over all of K
     * (g_stride 0). Other kernels ignore these fields (group_mode 0). */
    const int32_t *group_index;
    int64_t g_stride_sa, g_stride_sb, g_stride_bias;
    int32_t group_mode; /* 0 none, 1 contiguous, 2 masked, 3 k-grouped (kiln_group_mode) */
    int32_t groups;
} kiln_gemm_params;

/* A CUDA tensor map (CUtensorMap: 128 opaque bytes, 64-byte aligned), encoded by the runtime with
 * cuTensorMapEncodeTiled and passed by value. */
typedef struct __attribute__((aligned(64))) kiln_tma_desc {
    uint64_t opaque[16];
} kiln_tma_desc;

/* The argument of the wgmma family (sm_90a). Maps are 3-D: {contiguous extent, rows, batch}.
 *   a: {K, M, batch} of A, box {128 bytes of K, MT0}, 128-byte swizzle
 *   b: {K (prepacked: ldb), N, batch} of B, box {128 bytes of K, MT1}, 128-byte swizzle
 *   d: {N, M, batch} of D, box {d_tma bytes of N, 64 rows}, d_tma-byte swizzle; encoded (d_tma = 128) only
 *      where the kernel stores through it (no split-K, no prepacked B; alpha and tensor scales only) and D allows a map (rows of whole 16-byte
 *      units, 16-byte aligned base and strides); with d_tma = 0 the kernel writes D with plain stores.
 * Tiles t = 0 .. num_tiles-1 run on CTAs t % gridDim.x (persistent when gridDim.x < num_tiles). */
/* Block-scaled kernels (scale_tma bits, else 0: warp 1 of the producer copies the scales with cp.async):
 *   KILN_SCALE_TMA_A:   sa: {M, K groups, A's batches} of scale_a (M-major), box {MT0 + 4, 1, 1}
 *   KILN_SCALE_TMA_B_K: sb: {K groups, N blocks, B's batches} of a K-major scale_b (128x128), box {4, the tile's
 *                       blocks, 1}
 *   KILN_SCALE_TMA_B_N: sb: {N blocks (1x128: N), K groups, B's batches} of an N-major scale_b, box {8 (1x128: MT1),
 *                       1, 1}
 * No swizzle; elements outside the extents read as zero. A box's first coordinate falls on 16 bytes, so the kernel
 * starts each box at the multiple of 4 at or below the row, group or block it wants (kiln_gemm_wgmma.h, load_scales).
 * A and one B bit together or none: the TMA thread then loads each stage's scales with its A and B (scale_tma_bytes
 * more on its full barrier). */
#define KILN_SCALE_TMA_A 1
#define KILN_SCALE_TMA_B_K 2
#define KILN_SCALE_TMA_B_N 4

typedef struct kiln_tma_params {
    kiln_tma_desc a, b, d;
    kiln_tma_desc sa, sb; /* encoded where scale_tma is set */
    kiln_gemm_params p;
    int32_t num_tiles; /* tiles_m * tiles_n * batch * gsu; grouped: a bound, (tiles_m + groups) * tiles_n contiguous,
                        * groups * tiles_m * tiles_n masked and k-grouped (the kernel walks the groups' tiles and
                        * stops at the last) */
    int32_t d_tma;     /* 0, or the row bytes of map d's boxes: D is written through it */
    int32_t scale_tma; /* 0 or KILN_SCALE_TMA_A | KILN_SCALE_TMA_B_K or _B_N (above) */
    int32_t scale_tma_bytes; /* the bytes of one stage's two scale boxes */
} kiln_tma_params;

/* Launch geometry (computed by the runtime):
 *   GEMM kernel:   grid = (tiles_m * tiles_n, 1, batch * gsu), block = threads, dynamic LDS = lds_bytes
 *   wgmma family:  grid = (min(num_tiles, persistent CTAs), 1, 1), argument kiln_tma_params
 *   reduce kernel: grid = (ceil(m * n / 256), 1, batch), block = 256, no LDS (only when gsu > 1)
 */
#define KILN_REDUCE_THREADS 256

#endif /* KILN_ABI_H */
