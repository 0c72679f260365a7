/* The shape of the generated dispatch tables (generated/dispatch.c). Data only: the selection algorithm lives in
 * select.c, written once by hand. */
#ifndef KILN_TABLE_H
#define KILN_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

typedef enum kiln_vendor { KILN_VENDOR_NVIDIA = 0, KILN_VENDOR_AMD = 1 } kiln_vendor;

typedef enum kiln_distance {
    KILN_DISTANCE_LOG_MNK = 0, /* Euclidean distance of (log2 m, log2 n, log2 k) */
    KILN_DISTANCE_LINEAR_MNK = 1
} kiln_distance;

/* One kernel: everything the runtime needs to validate, launch and explain it. */
typedef struct kiln_solution {
    const char *name;        /* identity: the code object's kernel symbol and the generated file name */
    uint64_t name_hash;      /* FNV-1a 64 of name */
    const char *arch;        /* "sm90", "gfx942", ... */
    const char *family;      /* "mma", "wgmma" (sm_90a, TMA-fed: kiln_tma_params, see kiln_abi.h), ... */
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
    const char *reduce_name; /* split-K reduction kernel symbol, NULL when gsu == 1 */
    int persistent;          /* 1: the kernel loops over its tiles and the runtime launches min(tiles, SM count)
                              * workgroups; 0: one workgroup per tile. Last, so that positional initializers without
                              * it leave it 0. */
} kiln_solution;

typedef struct kiln_exact {
    int64_t m, n, k;
    int solution; /* index into kiln_solutions */
} kiln_exact;

/* Selection logic of one problem type on one arch, from one YAML file. */
typedef struct kiln_logic {
    const char *arch;
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
} kiln_logic;

extern const kiln_solution kiln_solutions[];
extern const int kiln_num_solutions;
extern const kiln_logic kiln_logics[];
extern const int kiln_num_logics;

/* Code objects embedded at build time (one per kernel and arch that was built). */
typedef struct kiln_code_object {
    const char *name; /* kernel name */
    const unsigned char *data;
    size_t size;
} kiln_code_object;

extern const kiln_code_object kiln_code_objects[];
extern const int kiln_num_code_objects;

#endif /* KILN_TABLE_H */
