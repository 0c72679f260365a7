/* The hand-written selection: a pure function of the dispatch tables (passed in, so tests can use fake ones), the
 * problem and what is known about the device.
 *
 * The logics that apply are every kiln_logic whose (arch, a/b/d types, layout, b_prepacked) match, in table order:
 * usually one, but several YAML files may describe one problem type (a tuned logic and a parameter-coverage set, say)
 * and then they pool. Candidates are their solutions, plus any solution their exact entries or fallbacks name. Each
 * must pass every predicate (kiln_solution_fits). Passing ones are ranked:
 *   1. solutions of exact entries equal to (m, n, k), in entry order (logics in table order);
 *   2. solutions of the other exact entries, each by the distance of its nearest entry (in the metric of that entry's
 *      logic), ties broken by solution index;
 *   3. the fallbacks, in logic order;
 *   4. every other passing candidate, in YAML order (logics in table order).
 * A solution appears once, at its best rank. The result depends on nothing but the inputs.
 */
#ifndef KILN_SELECT_H
#define KILN_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"
#include "table.h"

/* The kind of a whole problem (in problem.c): its operand types' kind, FP8_BLOCK for fp8 x fp8 with block scales,
 * FP8_GROUPED / FP8_BLOCK_GROUPED for grouped fp8 problems. */
kiln_kind kiln_problem_kind_of(const kiln_problem *p);
/* Grouped problems (kiln.h, "Grouped GEMM"), in problem.c: the matrices of A (masked: groups, else batch), of B
 * (grouped but k-grouped: groups) and of D (masked and k-grouped: groups); the rows per group (and k-grouped, the K
 * per group) selection sizes by; the group strides of scale_a, scale_b and bias with the packed defaults resolved
 * (contiguous: scale_a's 0, its rows are A's; k-grouped block scales: 0, they index all of K). */
int64_t kiln_problem_a_batches(const kiln_problem *p);
int64_t kiln_problem_b_batches(const kiln_problem *p);
int64_t kiln_problem_select_m(const kiln_problem *p);
int64_t kiln_problem_select_k(const kiln_problem *p);
int64_t kiln_problem_d_batches(const kiln_problem *p);
void kiln_problem_group_strides(const kiln_problem *p, int64_t *sa, int64_t *sb, int64_t *bias);

/* printf-style format checking where the compiler offers it. */
#if defined(__GNUC__) || defined(__clang__)
#define KILN_FORMAT(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define KILN_FORMAT(fmt_index, first_arg)
#endif

/* One set of dispatch tables. */
typedef struct kiln_tables {
    const kiln_solution *solutions;
    int num_solutions;
    const kiln_logic *logics;
    int num_logics;
    const kiln_code_object *code_objects;
    int num_code_objects;
    const kiln_attn_solution *attn_solutions; /* generated/attention.c */
    int num_attn_solutions;
    /* The named code objects sorted by name (kiln_code_index), for kiln_find_code_object's binary search; NULL: it
     * searches code_objects in order. A handle builds it once: selection asks for every candidate's code object. */
    const kiln_code_object **code_by_name;
    int num_code_by_name;
} kiln_tables;

/* Portable launch limits used when the device does not say: grid x up to 2^31 - 1 and grid z up to 65535 (CUDA's
 * limits; HIP's are not smaller). */
#define KILN_DEFAULT_MAX_GRID_X INT64_C(2147483647)
#define KILN_DEFAULT_MAX_GRID_Z INT64_C(65535)

typedef struct kiln_select_input {
    const char *arch;
    const kiln_problem *problem; /* must have passed kiln_check_problem */
    const kiln_args *args;       /* NULL: pointer addresses are not checked */
    unsigned skip;               /* predicates not checked, bits 1u << kiln_reject (tells why nothing passes) */
    int64_t max_lds_bytes;       /* the device's dynamic shared memory limit; 0 = unknown, not checked */
    int64_t max_grid_x;          /* 0 = KILN_DEFAULT_MAX_GRID_X */
    int64_t max_grid_z;          /* 0 = KILN_DEFAULT_MAX_GRID_Z */
    const kiln_tables *code;     /* non-NULL: a solution needs a code object in these tables (to run on a device) */
    int sm_count;                /* the device's SMs / CUs for the timing model; 0 = KILN_MODEL_DEFAULT_SMS */
} kiln_select_input;

/* SMs the timing model assumes when the device is unknown (kiln_set_arch, no device): an H100 SXM's. */
#define KILN_MODEL_DEFAULT_SMS 132
/* At most this many nearest measured sizes predict a time. */
#define KILN_MODEL_MAX_NEIGHBORS 16

/* Why a solution cannot run a problem. */
typedef enum kiln_reject {
    KILN_FITS = 0,
    KILN_REJECT_PROBLEM,    /* built for another arch or problem type, or a malformed table entry */
    KILN_REJECT_ALIGN_A,    /* lda, stride_a (batch > 1) or the A pointer is not a multiple of align_a elements */
    KILN_REJECT_ALIGN_B,    /* same for B */
    KILN_REJECT_K_MULTIPLE, /* k is not a multiple of k_multiple */
    KILN_REJECT_EMPTY_K,    /* k = 0 on a TMA-fed solution (it needs a K tile; the other families run k = 0) */
    KILN_REJECT_LDS,        /* lds_bytes exceeds the device limit */
    KILN_REJECT_GSU,        /* split-K with some split left without a DepthU tile (see kiln_solution_fits) */
    KILN_REJECT_SIZE,       /* launch grid, split-K workspace or tensor-map extents beyond the limits */
    KILN_REJECT_NO_CODE,    /* no code object embedded for it (checked only when kiln_select_input.code is set) */
    KILN_REJECT_ACCUM,      /* fast accumulation (no FP32 promotion) over more than one K tile; fast_accum is 0 */
    KILN_REJECT_COUNT
} kiln_reject;

/* Short predicate name: "align_a", "k_multiple", ... ("fits" for KILN_FITS). */
const char *kiln_reject_name(kiln_reject r);
/* Returns r, writing the printf-style reason into why[len] when why is given: how every predicate says no. */
KILN_FORMAT(4, 5) kiln_reject kiln_reject_because(char *why, size_t len, kiln_reject r, const char *fmt, ...);

/* Launch geometry of a solution on a problem (kiln_abi.h). */
typedef struct kiln_geometry {
    int64_t tiles_m, tiles_n;   /* ceil(m / mt0), ceil(n / mt1) */
    int64_t k_tiles;            /* ceil(kb / depth_u); kb = k, or ldb for a prepacked B (padded with zeros) */
    int64_t k_tiles_per_split;  /* ceil(k_tiles / gsu) */
    int64_t grid_x, grid_z;     /* GEMM kernel: tiles_m * tiles_n, batch * gsu; wgmma family: every tile on x,
                                 * tiles_m * tiles_n * batch * gsu (= kiln_tma_params.num_tiles; INT64_MAX if that
                                 * overflows), and 1 (the launch grid x is then min(tiles, SMs) when persistent) */
    int64_t cluster;            /* CTAs per cluster: 2 for multicast wgmma kernels (grid_x then counts pairs of
                                 * tiles, and the launch has two CTAs per pair or per persistent cluster), else 1 */
    int64_t reduce_grid_x;      /* reduce kernel: ceil(m * n / KILN_REDUCE_THREADS); 0 when gsu == 1 */
    uint64_t workspace_bytes;   /* gsu > 1: gsu * batch * m * n * 4, UINT64_MAX if that overflows; else 0 */
} kiln_geometry;

/* Whether s is of the TMA-fed wgmma family (family "wgmma": argument kiln_tma_params, all tiles on grid x). */
int kiln_solution_wgmma(const kiln_solution *s);
/* Split-K in a thread-block cluster (wgmma, multicast 3): the gsu CTAs of a cluster reduce one tile in the kernel. */
int kiln_solution_cluster_split(const kiln_solution *s);
/* Split-K reduced by a second kernel (reduce_name) from a workspace: gsu > 1, except split-K in a cluster. */
int kiln_solution_reduces(const kiln_solution *s);

/* One tensor map of a wgmma launch, as kiln_backend.tma_encode takes it. */
typedef struct kiln_tma_map {
    int elem_bytes;
    int swizzle_bytes;   /* 128 (A, B, D) or 0 (block scales) */
    uint64_t dims[3];    /* {contiguous extent, rows, batch} */
    uint64_t strides[2]; /* bytes between rows and between batches */
    uint32_t box[3];
} kiln_tma_map;

/* The limits cuTensorMapEncodeTiled puts on a map (CUDA driver API): dims in 1..2^32, byte strides multiples of 16
 * and below 2^40, box sides in 1..256 with the inner side a multiple of 16 bytes and at most the 128-byte swizzle
 * span, a base address 16-byte aligned. */
#define KILN_TMA_MAX_DIM (UINT64_C(1) << 32)
#define KILN_TMA_MAX_STRIDE (UINT64_C(1) << 40)
#define KILN_TMA_STRIDE_ALIGN 16
#define KILN_TMA_MAX_BOX 256
#define KILN_TMA_SWIZZLE_BYTES 128
#define KILN_TMA_D_BOX_ROWS 64 /* D's staging boxes (kiln_gemm_wgmma.h, epilogue_tma): one wgmma block */

/* The two maps of a wgmma launch of s on p (kiln_abi.h): A as {k, m, batch}, B ([n][k]) as {k or the prepacked ldb,
 * n, batch}, boxes of 128 bytes of K by the tile's rows. Computed with checked arithmetic and held to the limits
 * above (args, when not NULL, for the base addresses): KILN_FITS, or KILN_REJECT_EMPTY_K (k = 0), ALIGN_A / ALIGN_B
 * (a stride or base breaks the 16-byte rule), SIZE (a dim or stride beyond the limits) or PROBLEM (the tile breaks
 * the box rules: a table error), with a reason in why. */
kiln_reject kiln_tma_maps(const kiln_solution *s, const kiln_problem *p, const kiln_args *args, kiln_tma_map maps[2],
                          char *why, size_t why_len);

/* The map a wgmma kernel of s stores D through (kiln_abi.h, kiln_tma_params.d): {n, m, batch} with boxes of 64 rows
 * by 128 bytes of N (128-byte swizzle). Returns the box's row bytes (the kernel's d_tma) when s stores through one
 * (no split-K, no prepacked B), the epilogue is alpha and tensor scales only (no vector scale, bias, activation or
 * C) and D allows it (element of 2 or 4 bytes, rows of whole 16-byte units, 16-byte aligned base and byte strides,
 * extents and strides within the driver's limits); 0 when the kernel writes D with plain stores instead. Never a
 * reason to reject s. */
int kiln_tma_map_d(const kiln_solution *s, const kiln_problem *p, const kiln_args *args, kiln_tma_map *m);

/* The scale maps of a block-scaled wgmma kernel of s (kiln_abi.h, kiln_tma_params.sa / sb and scale_tma): scale_a
 * M-major as {m, ceil(k/128), A's batches} with boxes of MT0 + 4 rows; scale_b K-major (128x128 blocks) as
 * {ceil(k/128), blocks, B's batches} with boxes of 4 groups by the tile's blocks, or N-major as {blocks or columns,
 * ceil(k/128), B's batches} with boxes of 8 blocks or MT1 columns; strides and base in whole 16-byte units. Returns the
 * KILN_SCALE_TMA_* bits and sets *bytes to a stage's two boxes, or returns 0 when the kernel's scale warp copies the
 * scales (other layouts, or KILN_TMA_SCALES=0 in the environment). Never a reason to reject s. */
int kiln_tma_map_scales(const kiln_solution *s, const kiln_problem *p, const kiln_args *args, kiln_tma_map m[2],
                        int *bytes);

/* p must have passed kiln_check_problem and s must have positive tile sizes and gsu (kiln_solution_fits checks). */
void kiln_solution_geometry(const kiln_solution *s, const kiln_problem *p, kiln_geometry *g);

/* Checks every predicate in the order of kiln_reject (for the wgmma family, kiln_tma_maps too). Split-K rule: with
 * gsu > 1 each split covers k_tiles_per_split DepthU tiles, and the solution is accepted only when the last split still gets at least one,
 * (gsu - 1) * k_tiles_per_split < k_tiles, so that no workgroup runs an empty K loop. When rejected and why != NULL,
 * writes a one-line reason. */
kiln_reject kiln_solution_fits(const kiln_solution *s, const kiln_select_input *in, char *why, size_t why_len);

/* Whether logic l applies to the problem type on arch. */
int kiln_logic_matches(const kiln_logic *l, const char *arch, const kiln_problem *p);

/* The embedded code object holding the kernel `name`, or NULL. */
const kiln_code_object *kiln_find_code_object(const kiln_tables *t, const char *name);
/* A malloc'ed array of t's named code objects sorted by name (*count of them) for t->code_by_name; NULL when t has
 * none or memory runs out (the search then stays linear). */
const kiln_code_object **kiln_code_index(const kiln_tables *t, int *count);

/* Ranks the candidates. Writes up to max_out solution indices, best first, to out and their number to *count, and
 * to *rejects one bit (1u << kiln_reject) per predicate that rejected some candidate. explain (may be NULL) receives
 * a NUL-terminated account, truncated to explain_len. Returns KILN_STATUS_SUCCESS when at least one candidate passes,
 * KILN_STATUS_NO_SOLUTION when there is no logic or none passes, KILN_STATUS_INTERNAL_ERROR when memory runs out. */
kiln_status kiln_select(const kiln_tables *t, const kiln_select_input *in, int *out, int max_out, int *count,
                        unsigned *rejects, char *explain, size_t explain_len);

#endif /* KILN_SELECT_H */
