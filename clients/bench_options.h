/* kiln_bench's command line: the options, the sizes, and the usage text (clients/README.md describes them). */
#ifndef KILN_BENCH_OPTIONS_H
#define KILN_BENCH_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "kiln/kiln.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define PRINTF_LIKE(fmt, first)
#endif

/* A size as given: m, n, k of one batch, or of one group of a grouped problem (rows, n and k per group). */
struct size4 {
    int64_t m, n, k, batch;
};

enum { SOL_ALL, SOL_TOP1, SOL_LIST };

struct options {
    kiln_dtype a, b, d;
    int have_a, have_b, have_d;
    kiln_layout layout;
    struct size4 *sizes;
    int nsizes, cap_sizes;
    int solutions;
    char *solutions_arg; /* the --solutions text, split in place into names */
    char **names;
    int nnames;
    int warmup, iters, samples, device, quiet;
    int block_scales; /* fp8 x fp8 with KILN_SCALE_BLOCK scales (every scale 0.5 for A, 2 for B) */
    int row_scales;   /* fp8 x fp8 with KILN_SCALE_VECTOR scales (every scale 0.5 for A, 2 for B) */
    int groups;       /* grouped GEMM: groups of equal size (--groups); 0: not grouped */
    kiln_group_mode group_mode; /* KILN_GROUP_NONE without --groups */
    int fast_accum;   /* kiln_problem.fast_accum = 1 (fp8 sums may stay in wgmma's accumulator) */
    int warm_l2;      /* --warm-l2: time with what the previous run left in L2 (default: L2 evicted before each run) */
    const char *csv_path, *json_path;
};

/* Fills o from the command line; 0 on success, else the exit status (2) after a message on stderr. --help prints
 * the usage and exits 0. options_free releases what it allocated. */
int parse_args(int argc, char **argv, struct options *o);
void options_free(struct options *o);

/* The --group-mode name of a mode ("none" without groups). */
const char *group_mode_name(kiln_group_mode mode);

/* "kiln_bench: <message>" on stderr; returns 2 (the usage / setup error status). */
PRINTF_LIKE(1, 2) int die(const char *fmt, ...);

#endif /* KILN_BENCH_OPTIONS_H */
