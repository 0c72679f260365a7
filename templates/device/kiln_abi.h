/* The one argument every kiln GEMM kernel takes, by value. Plain C: included by the runtime (to fill it) and by
 * device code (to read it). Changing it changes every kernel: bump KILN_ABI_VERSION. */
#ifndef KILN_ABI_H
#define KILN_ABI_H

#include <stdint.h>

#define KILN_ABI_VERSION 1

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
} kiln_gemm_params;

/* Launch geometry (computed by the runtime):
 *   GEMM kernel:   grid = (tiles_m * tiles_n, 1, batch * gsu), block = threads, dynamic LDS = lds_bytes
 *   reduce kernel: grid = (ceil(m * n / 256), 1, batch), block = 256, no LDS (only when gsu > 1)
 */
#define KILN_REDUCE_THREADS 256

#endif /* KILN_ABI_H */
