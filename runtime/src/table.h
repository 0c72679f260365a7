/* The shape of the generated dispatch tables (generated/dispatch.c). Data only: the selection algorithm lives in
 * select.c, written once by hand. */
#ifndef KILN_TABLE_H
#define KILN_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

typedef enum kiln_vendor { KILN_VENDOR_NVIDIA = 0, KILN_VENDOR_AMD = 1 } kiln_vendor;

/* The archs kiln has tables for, in the generator's Arch order (generator/kilngen/vocab.py; tests/py/test_model.py
 * checks that the two agree, and the names of kiln_arch_name). An arch name kiln does not know maps to UNKNOWN. */
typedef enum kiln_arch_id {
    KILN_ARCH_UNKNOWN = 0,
    KILN_ARCH_SM90,
    KILN_ARCH_SM89,
    KILN_ARCH_SM80,
    KILN_ARCH_GFX942,
    KILN_ARCH_GFX90A,
    KILN_ARCH_GFX1151,
    KILN_ARCH_GFX1201,
    KILN_ARCH_COUNT
} kiln_arch_id;

/* Kernel families, in the generator's Family order. */
typedef enum kiln_family_id {
    KILN_FAMILY_MMA = 0, /* NVIDIA mma.sync */
    KILN_FAMILY_MFMA,    /* AMD CDNA */
    KILN_FAMILY_WMMA,    /* AMD RDNA */
    KILN_FAMILY_WGMMA,   /* NVIDIA sm_90a, TMA-fed */
    KILN_FAMILY_COUNT
} kiln_family_id;

/* How a solution is launched (the generator's LaunchKind). */
typedef enum kiln_launch_kind {
    KILN_LAUNCH_PLAIN = 0, /* argument kiln_gemm_params; grid tiles_m * tiles_n x 1 x batch * gsu */
    KILN_LAUNCH_TMA,       /* argument kiln_tma_params (tensor maps, see kiln_abi.h); every tile on grid x */
    KILN_LAUNCH_COUNT
} kiln_launch_kind;

/* What a pair of operand types computes: the problem kinds, in the generator's Kind order after NONE. */
typedef enum kiln_kind {
    KILN_KIND_NONE = 0,   /* no such kind in kiln */
    KILN_KIND_FP8_SCALED, /* fp8 x fp8 of one family (OCP or FNUZ), with scales */
    KILN_KIND_MIXED_W8,   /* f16/bf16 x prepacked fp8 */
    KILN_KIND_GEMM,       /* f16 x f16 or bf16 x bf16 with alpha/beta */
    KILN_KIND_FP8_BLOCK,  /* fp8 x fp8 with block scales (KILN_SCALE_BLOCK), promoted every 128 of K */
    KILN_KIND_FP8_GROUPED,      /* grouped (MoE) fp8 x fp8 with tensor or row/column scales (group_mode) */
    KILN_KIND_FP8_BLOCK_GROUPED /* grouped (MoE) fp8 x fp8 with block scales */
} kiln_kind;
/* Not an enumerator, so that a switch over the kinds need not list it. */
#define KILN_KIND_COUNT ((int)KILN_KIND_FP8_BLOCK_GROUPED + 1)

/* Names of the enums above ("sm90", "wgmma", "tma", "fp8_scaled"; "unknown"/"none" for 0 and "?" out of range),
 * and the arch a name denotes (KILN_ARCH_UNKNOWN for NULL or a name kiln does not know). In select.c. */
const char *kiln_arch_name(kiln_arch_id arch);
kiln_arch_id kiln_arch_from_name(const char *name);
const char *kiln_family_name(kiln_family_id family);
const char *kiln_launch_name(kiln_launch_kind launch);
const char *kiln_kind_name(kiln_kind kind);

typedef enum kiln_distance {
    KILN_DISTANCE_LOG_MNK = 0, /* Euclidean distance of (log2 m, log2 n, log2 k) */
    KILN_DISTANCE_LINEAR_MNK = 1
} kiln_distance;

/* One kernel: everything the runtime needs to validate, launch and explain it. The generated table fills it with
 * designated initializers, so the field order is free. */
typedef struct kiln_solution {
    const char *name;        /* identity: the code object's kernel symbol and the generated file name */
    uint64_t name_hash;      /* FNV-1a 64 of name */
    kiln_arch_id arch;
    kiln_family_id family;
    kiln_launch_kind launch; /* what the launch path branches on (never the family) */
    kiln_kind kind;
    kiln_dtype a_type, b_type, d_type;
    kiln_layout layout;
    int b_prepacked;
    int mt0, mt1, depth_u;
    int threads;             /* per workgroup */
    int lds_bytes;           /* dynamic shared memory per workgroup */
    int gsu;                 /* split-K factor; > 1 needs workspace and a reduce kernel */
    int wgm;                 /* workgroup-mapping group size (for explain) */
    int align_a, align_b;    /* required element alignment of A/B pointers and lda/ldb */
    int k_multiple;          /* K must be a multiple of this (1 = any) */
    const char *reduce_name; /* split-K reduction kernel symbol, NULL when gsu == 1 or multicast == 3 */
    int persistent;          /* > 0: the kernel loops over its tiles and the runtime launches min(tiles, SM count)
                              * workgroups (2: ping-pong consumers); 0: one workgroup per tile */
    int multicast;           /* wgmma: 0 none; 1 clusters of two CTAs on M-adjacent tiles that share B's K-tiles (TMA
                              * multicast), 2 on N-adjacent tiles that share A's. The kernel walks the pairs, the
                              * grid is two CTAs per pair (persistent: per cluster that fits); 3 split-K in a
                              * cluster: the gsu CTAs of a cluster take one tile's K slices and the first adds the
                              * others' sums (persistent 0; no workspace, no reduce kernel) */
    int fast_accum;          /* 1: fp8 sums kept in wgmma's reduced-precision accumulator over all of K (no FP32
                              * promotion): only for problems with fast_accum set, or K within one DepthU tile */
    int overlap;             /* wgmma: 1 when the kernel waits for the stream's previous grid (griddepcontrol.wait)
                              * before it touches global memory, so it may be launched overlapped with it
                              * (backend launch_overlapped); 0: plain launches only */
    int tma_store;           /* wgmma: 1 when the kernel can store D through a tensor map (kiln_abi.h, map d); the
                              * runtime maps D only then */
} kiln_solution;

typedef struct kiln_exact {
    int64_t m, n, k;
    int solution; /* index into kiln_solutions */
} kiln_exact;

/* Selection logic of one problem type on one arch, from one YAML file. */
typedef struct kiln_logic {
    kiln_arch_id arch;
    const char *source; /* the YAML it came from */
    kiln_dtype a_type, b_type, d_type;
    kiln_layout layout;
    int b_prepacked;
    const int *solutions; /* candidate solution indices in YAML order */
    int num_solutions;
    const kiln_exact *exact;
    int num_exact;
    kiln_distance distance;
    int fallback; /* solution index */
    /* Measured times (kiln-gen tune): timing_ms[i * num_solutions + j] is solutions[j] at size i (m, n, k =
     * timing_sizes[3i..3i+2]), -1 when not run. With neighbors > 0, a size without an exact entry ranks the
     * solutions by the time predicted from the `neighbors` nearest measured sizes (select.c). */
    const int64_t *timing_sizes;
    const float *timing_ms;
    int num_timings;
    int neighbors;
    kiln_kind kind; /* of the problem type (last: positional initializers in tests may leave it out) */
    int fast_accum; /* 1 (`accumulate: fast`): applies only to problems with fast_accum set, which then use the
                     * fast logics of their type where any exist (select.c) */
    int timed_groups; /* grouped kinds: the groups the timings were measured with (selection.groups; 0: unknown) */
    int waves_only; /* selection.share 0: the timing model's work counts the waves without the grid's unrounded share */
} kiln_logic;

extern const kiln_solution kiln_solutions[];
extern const int kiln_num_solutions;
extern const kiln_logic kiln_logics[];
extern const int kiln_num_logics;

/* One attention forward kernel (generated/attention.c, from the YAML files in solutions/<arch>/attention): launched with
 * grid (ceil(seqlen_q / bm), heads_q, batch), `threads` threads and `lds_bytes` of dynamic shared memory, argument
 * kiln_attn_params (device/abi/kiln_attn_abi.h). Candidates for a problem are the entries of its arch, types and
 * head dim, in table (YAML) order. */
typedef struct kiln_attn_solution {
    const char *name;        /* identity: kernel symbol, generated file name, code object name */
    uint64_t name_hash;      /* FNV-1a 64 of name */
    kiln_arch_id arch;
    kiln_family_id family;
    kiln_dtype qkv_type;     /* fp8 type of Q, K and V */
    kiln_dtype o_type;       /* f16 or bf16 */
    int head_dim;
    int bm, bn;              /* query rows per workgroup, keys per K/V tile */
    int threads;             /* per workgroup */
    int lds_bytes;           /* dynamic shared memory per workgroup */
    int p_bits;              /* P in the P V product: 8 (requantized to fp8, the FP8 recipe) or 16 (f16) */
    int v_packed;            /* 1: reads V^T packed by kiln_attn_pack_v (its code object holds the packer,
                              * "<name>_pack"), and takes only problems with v_packed 1 or 2; 2: the same, and its
                              * producer's idle warps can pack V^T into args->vt_work while it runs (v_packed 2;
                              * with a v_packed 1 kernel such a problem gets the pass first); 0: V as given */
    int persistent;          /* 1: launched as kiln_attn_work_grid says (kiln_attn_abi.h: a 1-D grid of at most one
                              * CTA an SM over the work order); 0: grid (ceil(seqlen_q / bm), heads_q, batch) */
} kiln_attn_solution;

extern const kiln_attn_solution kiln_attn_solutions[];
extern const int kiln_num_attn_solutions;

/* Code objects embedded at build time (one per kernel and arch that was built). */
typedef struct kiln_code_object {
    const char *name; /* kernel name */
    const unsigned char *data;
    size_t size;
} kiln_code_object;

extern const kiln_code_object kiln_code_objects[];
extern const int kiln_num_code_objects;

#endif /* KILN_TABLE_H */
