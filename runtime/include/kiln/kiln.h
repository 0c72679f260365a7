/* kiln public C API.
 *
 * Conventions (all matrices row-major, batch outermost):
 *   D[b][m][n] = act( alpha * sa * sb * sum_k A[b][m][k] * B(k,n) + beta * C[b][m][n] + bias[n] )
 *   layout TN: B is stored as B[b][n][k] (both operands K-major, the torch._scaled_mm / cuBLASLt fp8 layout)
 *   layout NN: B is stored as B[b][k][n] (torch's a @ b on row-major tensors)
 *   sa: 1, a scalar (per tensor) or scale_a[m] (per row of A); sb: 1, a scalar or scale_b[n] (per column of B).
 * Every entry point returns a kiln_status. An invalid call returns an error and never launches anything; then
 * kiln_last_error says which field broke which rule, with its value.
 * This header compiles as C99 and C++.
 *
 * Empty problems, as cuBLAS / cuBLASLt do them:
 *   m, n or batch = 0: nothing to compute. Check, query, explain and run succeed (once every field is valid); run
 *     launches nothing and reads no pointer.
 *   k = 0: D = act(beta * C + bias), which is zero without C and bias (every activation maps 0 to 0). Without C and
 *     bias the run fills D with zeros (a 2-D memset per batch, stream-ordered, no kernel); with C or bias it launches
 *     a kernel of a family that runs no K tile (never a TMA-fed one), and A and B may be NULL.
 *   A problem that needs no GEMM kernel (the two zero-fill and nothing cases) gets one algo from kiln_query: the
 *   "no GEMM" algo (solution_index UINT32_MAX, workspace 0, kiln_algo_name "kiln_no_gemm"), as a cuBLASLt heuristic
 *   returns an algo for every valid problem. kiln_run takes it, NULL, or any algo of this library for such a problem.
 */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_API_VERSION 8

typedef enum kiln_status {
    KILN_STATUS_SUCCESS = 0,
    KILN_STATUS_NULL_POINTER = 1,        /* a required pointer argument is NULL */
    KILN_STATUS_INVALID_VALUE = 2,       /* a size, leading dimension, enum or count is out of range */
    KILN_STATUS_MISALIGNED = 3,          /* a pointer or leading dimension breaks the chosen kernel's alignment */
    KILN_STATUS_NOT_SUPPORTED = 4,       /* type / layout / epilogue combination kiln does not implement */
    KILN_STATUS_OVERFLOW = 5,            /* dims whose products or launch grid overflow */
    KILN_STATUS_NO_DEVICE = 6,           /* no GPU driver or no device visible */
    KILN_STATUS_NO_CODE_FOR_DEVICE = 7,  /* the library holds no code objects for this device's arch */
    KILN_STATUS_NO_SOLUTION = 8,         /* no solution in the library accepts this problem */
    KILN_STATUS_WORKSPACE_TOO_SMALL = 9, /* the chosen algo needs more workspace than was given */
    KILN_STATUS_INVALID_ALGO = 10,       /* the algo is not from this library or does not fit the problem */
    KILN_STATUS_DRIVER_ERROR = 11,       /* the driver refused a module load or launch */
    KILN_STATUS_INTERNAL_ERROR = 12
} kiln_status;

typedef enum kiln_dtype {
    KILN_DTYPE_F32 = 0,
    KILN_DTYPE_F16 = 1,
    KILN_DTYPE_BF16 = 2,
    KILN_DTYPE_E4M3 = 3,      /* OCP e4m3fn (torch.float8_e4m3fn) */
    KILN_DTYPE_E5M2 = 4,      /* OCP e5m2 (torch.float8_e5m2) */
    KILN_DTYPE_E4M3FNUZ = 5,  /* torch.float8_e4m3fnuz (gfx942) */
    KILN_DTYPE_E5M2FNUZ = 6,  /* torch.float8_e5m2fnuz (gfx942) */
    KILN_DTYPE_COUNT = 7
} kiln_dtype;

typedef enum kiln_layout {
    KILN_LAYOUT_TN = 0, /* A[m][k], B[n][k] */
    KILN_LAYOUT_NN = 1, /* A[m][k], B[k][n] */
    KILN_LAYOUT_COUNT = 2
} kiln_layout;

/* K elements per block-scale group (KILN_SCALE_BLOCK). */
#define KILN_SCALE_GROUP 128
/* k-grouped problems (KILN_GROUP_K): every group's end but the last is a multiple of this. */
#define KILN_K_GROUP_ALIGN 128

typedef enum kiln_scale_mode {
    KILN_SCALE_NONE = 0,
    KILN_SCALE_TENSOR = 1, /* one float32 on the device */
    KILN_SCALE_VECTOR = 2, /* float32 per row of A (scale_a[m]) or per column of B (scale_b[n]) */
    KILN_SCALE_BLOCK = 3,  /* float32 per group of 128 along K: "Block scales" at kiln_problem */
    KILN_SCALE_COUNT = 4
} kiln_scale_mode;

/* Grouped GEMM (mixture-of-experts layers): "Grouped GEMM" at kiln_problem. */
typedef enum kiln_group_mode {
    KILN_GROUP_NONE = 0,
    KILN_GROUP_CONTIGUOUS = 1, /* the groups' rows of A and D back to back; group_index[g] = end row of group g */
    KILN_GROUP_MASKED = 2,     /* one m-row batch of A and D per group; group_index[g] = its valid rows */
    KILN_GROUP_K = 3,          /* groups along K (weight gradient): group_index[g] = end column of group g */
    KILN_GROUP_COUNT = 4
} kiln_group_mode;

typedef enum kiln_activation {
    KILN_ACT_NONE = 0,
    KILN_ACT_RELU = 1,
    KILN_ACT_GELU = 2, /* exact (erf) gelu, torch's default */
    KILN_ACT_SILU = 3,
    KILN_ACT_COUNT = 4
} kiln_activation;

/* What is computed. The kind follows from the types: fp8 x fp8 is a scaled GEMM; f16/bf16 x fp8 needs a B made by
 * kiln_prepack_b (b_prepacked = 1); f16 x f16 / bf16 x bf16 is a plain GEMM with alpha/beta. */
typedef struct kiln_problem {
    kiln_dtype a_type, b_type, d_type;
    kiln_layout layout;
    int64_t m, n, k, batch;
    int64_t lda, ldb, ldc, ldd;                     /* elements; C uses ldc, D uses ldd */
    int64_t stride_a, stride_b, stride_c, stride_d; /* elements between batches (ignored when batch == 1) */
    kiln_scale_mode scale_a, scale_b;
    int has_bias;            /* bias[n], type bias_type (f32, f16 or bf16), shared by all batches */
    kiln_dtype bias_type;
    int has_c;               /* beta * C is read (C has d_type); only for f16/bf16 GEMMs */
    kiln_activation activation;
    int b_prepacked;         /* B comes from kiln_prepack_b */
    /* Block scales: scale_a and scale_b both KILN_SCALE_BLOCK (fp8 x fp8, batch 1). K is cut into groups of 128 (the
     * last one may be shorter); D = sum over groups g of (A_g B_g^T) * scale_a(m, g) * scale_b(n, g), each group's
     * product summed in f32 before it is scaled.
     *   scale_a(m, g) = scale_a[m * scale_a_stride_m + g * scale_a_stride_k]: one float per row and group (1x128);
     *   scale_b(n, g) = scale_b[(n / scale_b_block_n) * scale_b_stride_n + g * scale_b_stride_k]: one float per
     *                   block of scale_b_block_n columns and group: 128 (128x128 blocks) or 1 (1x128 per column).
     * kiln_problem_init sets scale_a M-major (stride_m 1, stride_k m: torch's blockwise scale_a [m, groups] with
     * strides (1, m)), scale_b K-major (stride_n = groups, stride_k 1: [n / 128, groups] row-major) and block 128.
     * Any strides >= 0 are accepted; the M-major scale_a is the fastest (a warp's rows are adjacent floats). Other
     * scale modes ignore these fields.
     * Per-group weight scales: f16/bf16 x prepacked fp8 with scale_b alone KILN_SCALE_BLOCK (scale_a NONE, batch 1):
     * D = sum over groups g of A_g (upcast(B_g) * scale_b(n, g))^T, scale_b(n, g) as above (block 1 or 128). The
     * sm90 wgmma kernels only (elsewhere KILN_STATUS_NOT_SUPPORTED): decode tiles scale each group's f32 sum, larger
     * tiles the widened weights in A's 16-bit type (each product rounded once to it) before the product. */
    int64_t scale_a_stride_m, scale_a_stride_k;
    int64_t scale_b_stride_n, scale_b_stride_k;
    int64_t scale_b_block_n;
    /* Grouped GEMM (group_mode != KILN_GROUP_NONE; fp8 x fp8, TN, batch 1, no C): `groups` GEMMs sharing n and k,
     * group g with its own B[g] = b + g * stride_b ([groups][n][k]) and its rows of A and D, sized on the device by
     * the int32 array args.group_index[groups], so that a launch does not depend on the counts (CUDA-graph safe):
     *   KILN_GROUP_CONTIGUOUS: A [m][k] and D [m][n] hold the groups' rows back to back (m = all tokens); group g is
     *     rows [end(g - 1), end(g)) with end(-1) = 0 and end(g) = group_index[g] (torch's `offs`), clamped into
     *     [end(g - 1), m]: a decreasing offset makes an empty group, and rows past end(groups - 1) are not written.
     *   KILN_GROUP_MASKED: A [groups][m][k] and D [groups][m][n] (stride_a, stride_d between groups; m = the rows
     *     per group allocated); group g is rows [0, group_index[g]) of its batch, the count clamped into [0, m]
     *     (a count above m computes m rows). Rows past the count are not written.
     *   KILN_GROUP_K (the weight gradient of an MoE layer): A [m][k] and B [n][k] are one matrix each whose K columns
     *     are the groups' back to back (k = the groups' total), D [groups][m][n] (stride_d between groups; stride_b
     *     is not used): D[g] = A[:, cols of g] B[:, cols of g]^T. Group g is columns [end(g - 1), end(g)) with
     *     end(g) = group_index[g] clamped into [end(g - 1), k] and, unless it is k, rounded down to a multiple of
     *     KILN_K_GROUP_ALIGN (128): every end but the last must be a multiple of 128 (DeepGEMM's rule; a K tile
     *     lies in one group). An empty group's D[g] is act(bias). Vector scales are per group: scale_a[g][m],
     *     scale_b[g][n]; block scales index K's groups of 128 over all of k (scale_a(m, kg), scale_b(n, kg) as for
     *     a dense problem, the group strides not used), 1x128 (scale_b_block_n 1, the weight-gradient recipe) or
     *     128x128.
     * Scales: tensor scales are shared; KILN_SCALE_VECTOR scale_a is per row of A (masked: scale_a[g][m] with groups
     * scale_a_stride_g apart), scale_b per column of each group's B (scale_b_stride_g apart); block scales index rows
     * as above and B's blocks per group (scale_b_stride_g apart; masked scale_a scale_a_stride_g apart). bias[g][n]:
     * bias_stride_g apart (0: one bias for every group). A stride_g of -1 (kiln_problem_init's) is "packed": vector
     * scale_a m, scale_b n; block scale_a m * ceil(k / 128), scale_b ceil(n / scale_b_block_n) * ceil(k / 128); bias n.
     * Selection sizes a grouped problem by its rows per group: m / groups (contiguous) or m (masked); k-grouped
     * ones by m, n and k / groups. */
    kiln_group_mode group_mode;
    int64_t groups;
    int64_t scale_a_stride_g, scale_b_stride_g, bias_stride_g;
    /* Accumulation of fp8 x fp8 (tensor or row/column scales). 0 (kiln_problem_init's): the products are summed in
     * FP32; on sm90, whose fp8 wgmma keeps its sums in a reduced-precision accumulator, the kernels add that sum to
     * FP32 accumulators every 128 of K (the accuracy of cuBLASLt's default mode). 1: the kernel may keep a tile's sum
     * over all of K in wgmma's accumulator (cuBLASLt's CUBLASLT_MATMUL_DESC_FAST_ACCUM, torch._scaled_mm's
     * use_fast_accum=True): faster, but long K with products of one sign loses bits (rel. error ~1e-1 at K = 8192
     * against ~3e-4). Block-scaled kernels always promote; other kinds and archs accumulate in FP32 and ignore it. */
    int fast_accum;
} kiln_problem;

/* Device pointers for one run. alpha/beta are host values. */
typedef struct kiln_args {
    const void *a, *b, *c;
    void *d;
    const float *scale_a, *scale_b; /* device pointers, per scale_a/scale_b mode */
    const void *bias;               /* device pointer or NULL */
    float alpha, beta;
    const int32_t *group_index;     /* grouped problems: device int32[groups] (ends or counts, see kiln_problem) */
} kiln_args;

/* A chosen solution: a plain value that can be stored and passed back. */
typedef struct kiln_algo {
    uint64_t name_hash;      /* FNV-1a 64 of the kernel name: survives library rebuilds with other kernels */
    uint32_t solution_index; /* index in the library's table (a hint, checked against name_hash) */
    uint32_t gsu;            /* split-K factor the solution uses */
    uint64_t workspace_bytes;
} kiln_algo;

typedef struct kiln_handle_s *kiln_handle;

const char *kiln_status_string(kiln_status status);

/* Why the last failing call on h failed, naming the field and its value ("kiln_check_problem: lda = 100 is less than
 * k = 128"); "" when the last call on h succeeded. With h == NULL: the same for the calling thread's calls that take
 * no handle (kiln_problem_init, kiln_prepack_b_size, kiln_prepack_b, kiln_create) or were passed a NULL handle. Never
 * NULL; the text is a copy, valid on this thread until its next kiln_last_error call. */
const char *kiln_last_error(kiln_handle h);
const char *kiln_dtype_name(kiln_dtype t);

/* Create binds to the current device (CUDA: the current context, or the primary one). Without a device the handle is
 * still created so that queries and validation work: runs then return KILN_STATUS_NO_DEVICE. */
kiln_status kiln_create(kiln_handle *out);
kiln_status kiln_destroy(kiln_handle h);
/* The arch the handle targets ("sm90", "gfx942", ...; "none" without a device). */
kiln_status kiln_device_arch(kiln_handle h, const char **arch);
/* Select by arch name instead of the device: for queries, explain and tests on machines without the GPU. */
kiln_status kiln_set_arch(kiln_handle h, const char *arch);

/* Fill a problem with defaults: batch 1, packed leading dimensions and strides for the layout, no epilogue. m, n and
 * k may be 0 (see "Empty problems"). */
kiln_status kiln_problem_init(kiln_problem *p, kiln_dtype a, kiln_dtype b, kiln_dtype d, kiln_layout layout,
                              int64_t m, int64_t n, int64_t k);

/* Validate the problem without looking at pointers. */
kiln_status kiln_check_problem(kiln_handle h, const kiln_problem *p);

/* Up to `requested` candidate solutions, best first. `args` may be NULL; when given, pointer alignment filters too. */
kiln_status kiln_query(kiln_handle h, const kiln_problem *p, const kiln_args *args, kiln_algo *algos, int requested,
                       int *returned);

/* Human-readable account of the selection for this problem: candidates considered, predicates that removed some,
 * and why the winner won; for a problem kiln_check_problem rejects, why. Writes a NUL-terminated text into buf and
 * returns the status a query would. A text longer than len keeps its first whole lines and ends with a line
 * "[truncated: the text needs N bytes (kiln_explain_size)]". */
kiln_status kiln_explain(kiln_handle h, const kiln_problem *p, const kiln_args *args, char *buf, size_t len);

/* The bytes (NUL included) kiln_explain needs for the whole text. SUCCESS whenever *bytes was written, whatever the
 * selection's own status. */
kiln_status kiln_explain_size(kiln_handle h, const kiln_problem *p, const kiln_args *args, size_t *bytes);

/* Kernel name of an algo (static string). */
kiln_status kiln_algo_name(kiln_handle h, const kiln_algo *algo, const char **name);

/* Run. algo may be NULL (best choice). workspace: device memory of algo->workspace_bytes; stream: cudaStream_t /
 * hipStream_t or NULL. */
kiln_status kiln_run(kiln_handle h, const kiln_problem *p, const kiln_algo *algo, const kiln_args *args,
                     void *workspace, size_t workspace_bytes, void *stream);

/* ---- FP8 attention forward ----
 * O[b][i][h][:] = softmax_j(s * Q[b][i][h][:] . K[b][j][hk][:] [causal]) V[b][j][hk][:] * v_descale, per sequence b
 * and query head h, key/value head hk = h / (heads_q / heads_kv) (GQA, MQA), s = softmax_scale * q_descale *
 * k_descale. Tensors are (batch, seq, head, head_dim) with head_dim contiguous (flash_attn_func's layout); strides in
 * elements. Q, K, V fp8 of one type (OCP e4m3/e5m2 on NVIDIA, FNUZ on gfx942); O f16 or bf16. Causal masks are
 * aligned to the bottom right (query i sees keys j <= i + seqlen_k - seqlen_q); a query row that sees no key gets
 * O = 0 and lse = -inf. Descales (FlashAttention-3's): none, one float per tensor (KILN_SCALE_TENSOR), or one per
 * (sequence, kv head) (KILN_SCALE_VECTOR, [batch][heads_kv] row-major). P (the softmax's probabilities) enters P.V in
 * f16 where the arch has such kernels (sm90; gfx1151), else requantized to fp8; fp8_p = 1 prefers the kernels that
 * requantize it (the FP8 recipe: faster at head dim 64, about 2.5e-2 relative error on diffuse attention against
 * ~2e-3; docs/attention.md). Variable lengths (varlen = 1): sequence b is rows cu_seqlens_q[b]
 * .. cu_seqlens_q[b + 1] - 1 of Q and O (and likewise for K, V with cu_seqlens_k), the batch strides are unused and
 * seqlen_q / seqlen_k are the longest lengths. lse (has_lse): float32 natural-log log-sum-exp of each row's scaled
 * scores, [batch][heads_q][seqlen_q] (varlen: [heads_q][batch * seqlen_q], sequence b's rows at cu_seqlens_q[b]: the
 * rows past the total stay unwritten). */
typedef struct kiln_attn_problem {
    kiln_dtype qkv_type, o_type;
    int64_t batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim;
    int causal;               /* 0 or 1 */
    int varlen;               /* 0 or 1: cu_seqlens_q/k in the args */
    int has_lse;              /* 0 or 1 */
    kiln_scale_mode descale;  /* NONE, TENSOR or VECTOR (per sequence and kv head) */
    int64_t q_stride_b, q_stride_s, q_stride_h; /* kiln_attn_problem_init: packed (batch, seq, head, head_dim) */
    int64_t k_stride_b, k_stride_s, k_stride_h;
    int64_t v_stride_b, v_stride_s, v_stride_h;
    int64_t o_stride_b, o_stride_s, o_stride_h;
    int64_t total_q, total_k; /* varlen: rows of the packed q (and o) and k/v tensors (at least cu_seqlens_q/k[batch]);
                               * 0 = not given. sm90's wgmma kernels map the packed tensors whole: without both they
                               * leave a varlen problem to the mma kernels. 0 unless varlen. */
    int fp8_p;                /* 0 or 1 (API 5): prefer kernels that requantize P to fp8 for P.V over those that keep
                               * it in f16 (a preference: an arch with one kind runs that kind) */
    int v_packed;             /* 0, 1 or 2. 1 (API 6): args->v is V^T packed by kiln_attn_pack_v (f16; the v_stride_*
                               * fields are then unused). 2 (API 7): args->v is V as given (its strides apply) and the
                               * kernel packs it into args->vt_work while it runs: the producer warpgroup's idle warps
                               * pack key blocks in the order the work items read them and the TMA thread waits for
                               * each block, so the pass overlaps the attention instead of running before it (no
                               * second launch). Where the kernel cannot (three consumer warpgroups), its CTAs take
                               * more than one wave, or seqlen_q > 8192 (the pass costs less there), kiln_attn_run
                               * runs the pass into vt_work first. Only the kernels that read a packed V^T take 1 or 2
                               * (sm90's wgmma vpre kernels; NOT_SUPPORTED elsewhere), and only such problems take
                               * them */
} kiln_attn_problem;

typedef struct kiln_attn_args {
    const void *q, *k, *v;
    void *o;
    float *lse;                                   /* when has_lse */
    const int32_t *cu_seqlens_q, *cu_seqlens_k;   /* when varlen: batch + 1 int32 offsets each, on the device */
    const float *q_descale, *k_descale, *v_descale; /* per the descale mode, on the device */
    float softmax_scale;                          /* > 0, or 0 for 1 / sqrt(head_dim) */
    void *vt_work;          /* v_packed 2 (API 7): 16-byte aligned device memory of kiln_attn_pack_v_size's bytes for */
    size_t vt_work_bytes;   /*   that problem (V^T and the chunks' flags, which kiln_attn_run clears on the stream) */
    void *split_work;       /* API 8: NULL, or 16-byte aligned device memory of kiln_attn_split_work_size's bytes for */
    size_t split_work_bytes; /*  the problem and algo: lets a kernel with a split tail use it (kiln_attn_split_work_size) */
} kiln_attn_args;

/* Packed strides, causal 0, no varlen, no lse, no descales. Sizes may be 0 (nothing to compute). */
kiln_status kiln_attn_problem_init(kiln_attn_problem *p, kiln_dtype qkv_type, kiln_dtype o_type, int64_t batch,
                                   int64_t heads_q, int64_t heads_kv, int64_t seqlen_q, int64_t seqlen_k,
                                   int64_t head_dim);
/* Validate without looking at pointers. */
kiln_status kiln_attn_check(kiln_handle h, const kiln_attn_problem *p);
/* Up to `requested` candidate kernels for the handle's arch, best first (kiln_algo_name names them). */
kiln_status kiln_attn_query(kiln_handle h, const kiln_attn_problem *p, kiln_algo *algos, int requested, int *returned);
/* The candidates considered and why the first was chosen (as kiln_explain). */
kiln_status kiln_attn_explain(kiln_handle h, const kiln_attn_problem *p, char *buf, size_t len);
/* Run on the stream (cudaStream_t / hipStream_t or NULL); algo NULL = the best candidate. An empty problem (batch,
 * heads_q or seqlen_q 0) launches nothing. */
kiln_status kiln_attn_run(kiln_handle h, const kiln_attn_problem *p, const kiln_algo *algo, const kiln_attn_args *args,
                          void *stream);

/* The split tail (API 8; sm90 wgmma kernels built with `persist: 2`): a persistent kernel whose query blocks leave
 * the last round of its CTAs part empty (e.g. 1,024 blocks on 132 SMs: 7.76 waves in 8 rounds) cuts the last rounds'
 * blocks along their keys into one even range a CTA, and a block cut between two CTAs is summed by the second from the
 * two pieces' partials (FP32 O, row max and row sums) in args->split_work. Non-causal problems of fixed lengths only.
 * kiln_attn_split_work_size: the bytes that the kernel `algo` (NULL: the one kiln_attn_run would pick) needs for p,
 * 0 where it takes no split (no such kernel, causal or varlen, the blocks fill whole rounds, an empty problem);
 * about grid x (48 + 16 x bm x (head_dim / 2 + 8)) bytes, with grid at most the SM count (37 MB at head dim 256, bm
 * 128, 132 SMs). kiln_attn_run clears its flags on the stream. args->split_work NULL: such a kernel runs without the
 * split; a smaller split_work_bytes is KILN_STATUS_WORKSPACE_TOO_SMALL. */
kiln_status kiln_attn_split_work_size(kiln_handle h, const kiln_attn_problem *p, const kiln_algo *algo, size_t *bytes);

/* V packed for the attention kernels that read V^T in f16 (sm90 wgmma, `vpre: 1` in YAML): there the producer
 * warpgroup neither widens V nor transposes it, and the kernels run 1.06x (head dim 64) to 1.15x (256) faster
 * (docs/attention.md). Pack once per V, e.g. a KV cache written once and read by many calls, or before each call
 * where the problem is large enough (the pass reads V once and writes twice its bytes; kiln.attention in Python
 * decides so by itself).
 * kiln_attn_pack_v_size: the bytes of the packed V^T, batch * heads_kv * head_dim * round_up(seqlen_k, 8) * 2
 *   (layout [batch][heads_kv][head_dim][keys], f16; varlen: each sequence's keys from 0, seqlen_k the longest);
 *   with p->v_packed = 2, those bytes (rounded up to 16) and 4 * (1 + batch * heads_kv * ceil(round_up(seqlen_k, 8)
 *   / 64)) for the flags, the args->vt_work that kiln_attn_run needs.
 * kiln_attn_pack_v: packs V as p gives it (its V strides, varlen with cu_seqlens_k on the device, seqlen_k; the
 *   problem's v_packed is ignored) into vt (16-byte aligned device memory of at least that size) on the stream, with
 *   the packer of the kernel the problem with v_packed = 1 would select. Run then with v_packed = 1 and args->v = vt.
 *   NOT_SUPPORTED where the arch has no such kernels; an empty V (batch, heads or seqlen_k 0) writes nothing. */
kiln_status kiln_attn_pack_v_size(const kiln_attn_problem *p, size_t *bytes);
kiln_status kiln_attn_pack_v(kiln_handle h, const kiln_attn_problem *p, const void *v, const int32_t *cu_seqlens_k,
                             void *vt, size_t vt_bytes, void *stream);

/* Prepacked B for f16/bf16 x fp8: fp8 bytes reordered once into the layout the kernels read (see docs/prepack.md).
 * Host buffers. src is B as given by `layout` (TN: [n][k] with ld; NN: [k][n] with ld). n or k = 0: 0 bytes, nothing
 * read. A dst_bytes below kiln_prepack_b_size's is KILN_STATUS_INVALID_VALUE. */
kiln_status kiln_prepack_b_size(int64_t n, int64_t k, size_t *bytes, int64_t *ldb_packed);
kiln_status kiln_prepack_b(const uint8_t *src, kiln_layout layout, int64_t n, int64_t k, int64_t ld, uint8_t *dst,
                           size_t dst_bytes);

#ifdef __cplusplus
}
#endif
#endif /* KILN_KILN_H */
