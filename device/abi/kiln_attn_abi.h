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
 * bytes (device/kiln_attn_mma.h); a persistent wgmma kernel (C::PERSIST): grid (kiln_attn_work_grid, 1, 1) over the
 * work order below, or the grid above where that returns 0 (work_heads 0). */
#ifndef KILN_ATTN_ABI_H
#define KILN_ATTN_ABI_H

#include <stdint.h>

#include "kiln_abi.h" /* kiln_tma_desc */

#define KILN_ATTN_ABI_VERSION 6

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
    int32_t work_pairs;           /* persistent wgmma kernels only (kiln_attn_work_grid sets both; the other kernels */
    int32_t work_heads;           /*   ignore them): 1 = a causal unit is a query block and its mirror; (batch, head) */
                                  /*   pairs a section of the work order */
    int32_t o_map;                /* wgmma family: 1 = kiln_attn_tma_params.o is a valid map of o (else 0) */
    /* The V^T that a vpre kernel packs while it runs (kiln.h, v_packed 2): NULL = V^T comes packed (the v map's) or
     * the kernel reads V as given. Else the producer warps other than the TMA thread's pack v (with the v strides and,
     * varlen, cu_seqlens_k) into vt_fill as kiln_attn_pack_params describes, 64 keys x head_dim a chunk, chunks taken
     * from vt_sync[0] in the work order's (kv head section, key block, kv head) order. vt_sync, int32, zero at launch
     * (the runtime clears it): [0] the claim counter; [1 + hk] (hk = b * heads_kv + kv head) kv head hk's chunks done;
     * then one flag a chunk ([1 + batch * heads_kv + hk * ceil(vt_keys / 64) + key block]), set to 1 with release
     * semantics once written. The TMA thread waits for the flags of a V^T tile (acquire) before it loads the tile,
     * until its kv head's count is complete. */
    uint16_t *vt_fill;
    int32_t *vt_sync;
    int64_t vt_keys;              /* with vt_fill: V^T's row length (seqlen_k rounded up to 8) */
    /* The split tail of a persistent kernel built with persist 2 (C::PERSIST 2; kiln_attn_split_piece below): 0 = no
     * split (such a kernel then runs as persist 1). Else the last split_units units of the work order are cut along
     * their key tiles into one range a CTA, and a unit cut between CTAs c - 1 and c is merged by c: c - 1 writes its
     * partial O (unnormalized FP32), row max and row sums to slot 2 (c - 1) of split_work and sets its warps' flags;
     * CTA c writes its own piece's to slot 2 c + 1, waits for the flags after its last item, and stores O from the
     * two. Non-causal fixed-length problems only. */
    float *split_work;            /* 2 x grid x KILN_ATTN_SPLIT_SLOT_FLOATS(bm, head_dim) floats */
    int32_t *split_flags;         /* grid x 12 int32, zero at launch (the runtime clears them) */
    int32_t split_units;
    int32_t split_pad_;           /* (0) */
} kiln_attn_params;

#if defined(__CUDACC__) /* (the AMD kernels take no persistent order: host only there) */
#define KILN_ATTN_HD __host__ __device__
#else
#define KILN_ATTN_HD
#endif

/* The work order of the persistent wgmma kernels. A work item is one query block (BM rows) of one (batch, query
 * head); a unit is one item or, with work_pairs (causal only), the blocks x and nblk - 1 - x of one (batch, head),
 * whose key tiles add up to about the same count for every x. Units go in sections of work_heads (batch, head) pairs
 * (query heads of one key/value head are neighbours): in a section, unit x of every pair, then x + 1; the longest
 * blocks (causal) first. CTA c takes units c, c + grid, c + 2 grid, ...
 * A section's K and V bytes: about what one wave of CTAs reads in the head-by-head order (4 heads of 4096 keys at
 * head dim 128, 1.5 MB each). Sections of 24 MB (16 such heads) lost 6 % against that order at 4x32x4096x128
 * non-causal, and 3-6 % at 1x16x16384x128 (H200 harness). */
#define KILN_ATTN_WORK_L2_BYTES (6ll << 20)
/* The launch cost of a CTA (start, Q and first K loads, pipeline fill, O's stores) and the cost between two items of a
 * persistent CTA, in key tiles of 128 x 128 at head dim 128 (H200 harness: fitted to causal 4x32x4096x128, where pairs
 * on 132 CTAs won 4.7 %, and 1x16x16384x128, where one CTA a block won 1.7 %). */
#define KILN_ATTN_WORK_CTA_TILES 2.5
#define KILN_ATTN_WORK_ITEM_TILES 0.8

/* Units of a problem, for a kernel of bm query rows. */
static inline KILN_ATTN_HD int64_t kiln_attn_work_units(const kiln_attn_params *p, int bm, int pairs)
{
    const int64_t nblk = ((int64_t)p->seqlen_q + bm - 1) / bm;
    return (int64_t)p->batch * p->heads_q * (pairs ? (nblk + 1) / 2 : nblk);
}

/* Key tiles of causal query block x (fixed lengths, the mask aligned to the bottom right). */
static inline int64_t kiln_attn_causal_tiles(const kiln_attn_params *p, int bm, int bn, int64_t x)
{
    int64_t end = (x + 1) * bm + (int64_t)p->seqlen_k - p->seqlen_q;
    end = end < p->seqlen_k ? end : p->seqlen_k;
    return end > 0 ? (end + bn - 1) / bn : 0;
}

/* Grid x of a persistent wgmma kernel (bm x bn tiles) on `sms` SMs (one CTA an SM); sets p->work_pairs and
 * p->work_heads. 0: launch the 3-D grid (ceil(seqlen_q / bm), heads_q, batch) with work_heads 0, as a kernel without
 * PERSIST takes it: a problem of one wave or less gains nothing from an order, and the unit arithmetic before the
 * first load cost 4 % at 1x8x1024x128 (H200 harness). Non-causal items are all alike: at most `sms` CTAs, each taking
 * its share. Causal fixed-length problems take the mirrored pairs where the estimate (every CTA ceil(pairs / sms)
 * pairs of the longest sum) beats one CTA an item (the items' tiles and launches spread evenly: the hardware hands out
 * CTAs as SMs free up, the longest causal blocks first); otherwise, and with varlen (whose sequences differ), one CTA
 * an item in the work order. */
static inline int64_t kiln_attn_work_grid(kiln_attn_params *p, int bm, int bn, int sms)
{
    const int64_t group = p->heads_kv > 0 && p->heads_q / p->heads_kv > 1 ? p->heads_q / p->heads_kv : 1;
    const int64_t per_kv = (int64_t)(p->seqlen_k > 0 ? p->seqlen_k : 1) * p->head_dim * 3; /* fp8 K, f16 V^T */
    const int64_t kv = KILN_ATTN_WORK_L2_BYTES / per_kv, hb = (int64_t)p->batch * p->heads_q;
    const int64_t heads = (kv > 1 ? kv : 1) * group;
    p->work_heads = (int32_t)(heads < hb ? heads : hb > 0 ? hb : 1);
    p->work_pairs = 0;
    const int64_t single = kiln_attn_work_units(p, bm, 0);
    if (single <= sms) {
        p->work_heads = 0;
        return 0;
    }
    if (sms <= 0 || p->cu_seqlens_q)
        return single;
    if (!p->causal)
        return single < sms ? single : sms;
    const int64_t nblk = ((int64_t)p->seqlen_q + bm - 1) / bm, paired = kiln_attn_work_units(p, bm, 1);
    if (paired < sms || nblk > (1 << 16)) /* (a model of 2^16 blocks is not worth its loop: one CTA an item) */
        return single;
    const double scale = (128.0 * 128 * 128) / ((double)bm * bn * p->head_dim); /* a standard tile in the kernel's */
    const double cta = KILN_ATTN_WORK_CTA_TILES * scale, item = KILN_ATTN_WORK_ITEM_TILES * scale;
    double tiles = 0, longest = 0;
    for (int64_t x = 0; x < (nblk + 1) / 2; x++) {
        const int64_t a = kiln_attn_causal_tiles(p, bm, bn, nblk - 1 - x);
        const int64_t b = x != nblk - 1 - x ? kiln_attn_causal_tiles(p, bm, bn, x) : 0;
        const double pair = (double)(a + b) + (x != nblk - 1 - x ? 2 : 1) * item;
        longest = pair > longest ? pair : longest;
        tiles += (double)(a + b);
    }
    const double t_pairs = (double)((paired + sms - 1) / sms) * longest;
    const double t_single = ((double)hb * tiles + (double)single * cta) / sms;
    if (t_pairs >= t_single)
        return single;
    p->work_pairs = 1;
    return sms;
}

/* The split tail (persist 2). Units [units - split_units, units) of the work order have `tiles` key tiles each, and
 * their split_units x tiles tiles are cut into `grid` ranges, CTA c taking tiles [c I / grid, (c + 1) I / grid) of
 * them (I = split_units x tiles) after its whole units c, c + grid, ... of the order's head. The runtime sets
 * split_units to grid + (units mod grid) (0 where units is a multiple of grid), so that every range holds at least
 * `tiles` tiles: a unit is then cut at most once, between two neighbouring CTAs, and each CTA writes at most one
 * partial (the unit its range ends in) and merges at most one (the unit its range starts in).
 * Piece k of CTA c, in the order the CTA runs them: its range's units from the last to the first, so that the piece
 * a neighbour waits for is its writer's first and the piece that waits is its owner's last (no CTA waits for one of a
 * higher index: with CTAs started in index order, every CTA it waits for has started). Returns 0 past the last piece;
 * else sets *unit (index in the work order), *kt0 and *nt (its first key tile and count) and *role: 0 the whole unit,
 * 1 the unit's first tiles (a partial for CTA c + 1), 2 its last tiles (merges CTA c - 1's partial before O). */
#define KILN_ATTN_SPLIT_WARPS 12 /* flags a CTA: one per consumer warp, up to three consumer warpgroups */
/* Floats of one CTA's partial: per consumer thread (2 x bm of them) its accumulators (head_dim / 2, and 4 row-sum
 * columns with psum) and its rows' max and sums (4), laid out [value][thread] so that a warp's accesses coalesce. */
#define KILN_ATTN_SPLIT_SLOT_FLOATS(bm, head_dim) ((int64_t)2 * (bm) * ((head_dim) / 2 + 8))
static inline KILN_ATTN_HD int kiln_attn_split_piece(int32_t units, int32_t split_units, int32_t tiles, int32_t grid,
                                                     int32_t c, int32_t k, int32_t *unit, int32_t *kt0, int32_t *nt,
                                                     int32_t *role)
{
    /* 32-bit (the kernel's producer thread has 24 registers): the runtime splits only where grid x split_units x
     * tiles <= INT32_MAX (KILN_ATTN_SPLIT_MAX_TILES) */
    if (split_units <= 0 || tiles <= 0 || grid <= 0 || c < 0 || c >= grid || k < 0 || split_units > units ||
        (int64_t)grid * split_units * tiles > INT32_MAX)
        return 0;
    const uint32_t all = (uint32_t)split_units * (uint32_t)tiles, t = (uint32_t)tiles;
    const uint32_t b = (uint32_t)c * all / (uint32_t)grid, e = ((uint32_t)c + 1) * all / (uint32_t)grid;
    if (b >= e || (e - 1) / t < (uint32_t)k + b / t)
        return 0;
    const uint32_t u = (e - 1) / t - (uint32_t)k; /* index in the tail */
    const uint32_t lo = (b > u * t ? b : u * t) - u * t, hi = (e < (u + 1) * t ? e : (u + 1) * t) - u * t;
    *unit = units - split_units + (int32_t)u;
    *kt0 = (int32_t)lo;
    *nt = (int32_t)(hi - lo);
    *role = lo > 0 ? 2 : hi < t ? 1 : 0;
    return 1;
}
/* The most grid x split_units x tiles the kernels count (in 32 bits) */
#define KILN_ATTN_SPLIT_MAX_TILES INT32_MAX

/* split_units for a persistent grid of `grid` CTAs over `units` equal units (kiln_attn_split_piece). */
static inline KILN_ATTN_HD int64_t kiln_attn_split_units(int64_t units, int64_t grid)
{
    if (grid <= 0 || units <= grid || units % grid == 0)
        return 0;
    return grid + units % grid;
}

/* The argument of the wgmma family (sm_90a, device/kiln_attn_wgmma.h): tensor maps of Q, K and V, encoded by the
 * runtime, before the params. Each map is 4-D {head_dim, heads, seqlen, batch} over the fp8 bytes (strides: head,
 * sequence, batch), box {min(head_dim, 128) bytes, 1, rows, 1} with the swizzle of the box's row bytes (128 or 64);
 * rows = the kernel's BM for Q, BN for K and V; varlen: {head_dim, heads, total rows, 1}. A vpre kernel's v map is
 * {seqlen_k keys, head_dim, heads_kv, batch} over the f16 V^T of kiln_attn_pack_params (strides 2 *
 * vt_keys, 2 * vt_keys * head_dim, 2 * vt_keys * head_dim * heads_kv bytes), box {64 keys, head_dim, 1, 1}, 128-byte
 * swizzle. The o map (persistent kernels store O through it) is {head_dim, heads_q, seqlen_q (varlen: total rows),
 * batch (varlen: 1)} over O's 16-bit elements, box {64, 1, 16, 1}, 128-byte swizzle; the runtime encodes it, and sets
 * p.o_map, where O's base and byte strides are multiples of 16 (else the kernels store O from registers). */
typedef struct kiln_attn_tma_params {
    kiln_tma_desc q, k, v, o;
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
