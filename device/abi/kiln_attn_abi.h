/* The one argument of kiln's attention forward kernels, by value. Plain C (C99 and CUDA): the runtime fills it, device
 * code reads it. Changing it changes every attention kernel: bump KILN_ATTN_ABI_VERSION.
 *
 * Problem: O = softmax(scale * Q K^T [+ causal mask]) V per (batch, query head), like flash_attn_func.
 *   Tensors are (batch, seq, head, head_dim) with head_dim contiguous; strides are in elements.
 *   q, k, v: fp8 (the kernel's element type: e4m3 or e5m2, the same for all three). o: f16 or bf16.
 *   GQA/MQA: query head h reads key/value head h / (heads_q / heads_kv).
 *   Varlen (cu_seqlens_q != NULL): sequence b has rows cu_seqlens[b] .. cu_seqlens[b+1]-1 of a (total, head, dim)
 *   tensor; batch strides are ignored and seqlen_q / seqlen_k are the longest lengths (they size the grid).
 *   Causal: aligned to the bottom right as FlashAttention does: query i of a sequence sees keys j <= i + Lk - Lq
 *   (Lq, Lk: that sequence's lengths). A query row that sees no key gets O = 0 and lse = -inf.
 * Requirements checked by the runtime, not by the kernel: q, k, v 16-byte aligned with strides multiples of 16
 * elements (16-byte copies); o 8-byte aligned with strides multiples of 4 elements; head_dim equal to the kernel's D;
 * o_dtype equal to the kernel's output type; heads_q % heads_kv == 0; softmax_scale and descales positive.
 * Launch: grid = (ceil(seqlen_q / BM), heads_q, batch), block = 32 * warps, dynamic shared memory = the config's
 * bytes (device/kiln_attn_mma.h). */
#ifndef KILN_ATTN_ABI_H
#define KILN_ATTN_ABI_H

#include <stdint.h>

#include "kiln_abi.h" /* kiln_tma_desc */

#define KILN_ATTN_ABI_VERSION 2

typedef struct kiln_attn_params {
    const void *q;                /* fp8 queries */
    const void *k;                /* fp8 keys */
    const void *v;                /* fp8 values */
    void *o;                      /* output, f16 or bf16 (o_dtype) */
    float *lse;                   /* NULL, or log-sum-exp (natural log) of each query row's scaled scores */
    const int32_t *cu_seqlens_q;  /* NULL = fixed lengths; else batch + 1 prefix offsets of the query rows */
    const int32_t *cu_seqlens_k;  /* NULL exactly when cu_seqlens_q is NULL; offsets of the key/value rows */
    const float *q_descale;       /* NULL = 1; else q_descale[b * descale_stride_b + kv_head * descale_stride_h] */
    const float *k_descale;       /* as q_descale (FlashAttention-3 passes (batch, heads_kv) tensors) */
    const float *v_descale;       /* as q_descale */
    int64_t q_stride_b, q_stride_s, q_stride_h;  /* element strides of batch, sequence, head (batch unused: varlen) */
    int64_t k_stride_b, k_stride_s, k_stride_h;
    int64_t v_stride_b, v_stride_s, v_stride_h;
    int64_t o_stride_b, o_stride_s, o_stride_h;
    int64_t lse_stride_b;         /* lse[b * lse_stride_b + h * lse_stride_h + row]; varlen: b * stride unused and */
    int64_t lse_stride_h;         /*   row = cu_seqlens_q[b] + i (FlashAttention's (heads, total_q) layout) */
    int64_t descale_stride_b;     /* 0 and 0 = one scale per tensor */
    int64_t descale_stride_h;
    int32_t batch;                /* sequences */
    int32_t heads_q;              /* query (and output) heads */
    int32_t heads_kv;             /* key/value heads; divides heads_q */
    int32_t seqlen_q;             /* query rows per sequence (varlen: the longest) */
    int32_t seqlen_k;             /* key rows per sequence (varlen: the longest) */
    int32_t head_dim;             /* D, equal to the kernel's */
    float softmax_scale;          /* multiplies Q K^T (typically 1/sqrt(D)); q and k descales are applied on top */
    int32_t causal;               /* 0 or 1 */
    int32_t o_dtype;              /* kiln_dtype of o: KILN_DTYPE_F16 (1) or KILN_DTYPE_BF16 (2) */
} kiln_attn_params;

/* The argument of the wgmma family (sm_90a, device/kiln_attn_wgmma.h): tensor maps of Q, K and V, encoded by the
 * runtime, before the params. Each map is 4-D {head_dim, heads, seqlen, batch} over the fp8 bytes (strides: head,
 * sequence, batch), box {min(head_dim, 128) bytes, 1, rows, 1} with the swizzle of the box's row bytes (128 or 64);
 * rows = the kernel's BM for Q, BN for K and V; varlen: {head_dim, heads, total rows, 1}. A vpre kernel's v map is
 * {seqlen_k keys, head_dim, heads_kv, batch} over the f16 V^T of kiln_attn_pack_params (strides 2 *
 * vt_keys, 2 * vt_keys * head_dim, 2 * vt_keys * head_dim * heads_kv bytes), box {64 keys, head_dim, 1, 1}, 128-byte
 * swizzle. */
typedef struct kiln_attn_tma_params {
    kiln_tma_desc q, k, v;
    kiln_attn_params p;
} kiln_attn_tma_params;

/* The argument of the V^T packer that each vpre kernel's code object holds beside it (<kernel>_pack; kiln.h,
 * kiln_attn_pack_v): fp8 V (batch, seq, head, head_dim) as the problem gives it -> f16 V^T
 * [batch][heads_kv][head_dim][vt_keys], each sequence's keys from 0 (varlen too), the keys past its length 0. Launch:
 * grid (ceil(seqlen_k / 64), heads_kv, batch), 256 threads, no dynamic shared memory. v and vt 16-byte aligned, V's
 * strides multiples of 16 elements (as kiln_attn_params'). */
typedef struct kiln_attn_pack_params {
    const void *v;                /* fp8 values */
    uint16_t *vt;                 /* f16 V^T */
    const int32_t *cu_seqlens_k;  /* NULL = fixed lengths; else batch + 1 offsets of the rows */
    int64_t v_stride_b, v_stride_s, v_stride_h; /* element strides (batch unused: varlen) */
    int64_t vt_keys;              /* V^T's row length: seqlen_k rounded up to a multiple of 8 */
    int32_t seqlen_k;             /* rows per sequence (varlen: the longest; longer sequences are cut there) */
    int32_t heads_kv;
} kiln_attn_pack_params;
#endif /* KILN_ATTN_ABI_H */
