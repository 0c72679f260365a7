/* kiln_bench's numbers: random inputs, the float64 host reference at sampled positions of D, and the check of a
 * candidate's D against it. Values are read and written with kiln's public conversions (kiln/kiln_convert.h), exact
 * on decode; the encoders round to nearest even. */
#ifndef KILN_BENCH_REFERENCE_H
#define KILN_BENCH_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "bench_options.h"
#include "kiln/kiln.h"
#include "kiln/kiln_convert.h"

/* The input types kiln_bench takes: fp8 (1 byte) and f16/bf16 (2 bytes); f32 is 4. */
static inline size_t dtype_bytes(kiln_dtype t) { return kiln_dtype_size(t); }
static inline int is_fp8(kiln_dtype t) { return kiln_dtype_size(t) == 1; }
static inline int is_half(kiln_dtype t) { return kiln_dtype_size(t) == 2; }

/* Value of every code of an input type: 256 entries for fp8, 65536 for f16/bf16 (NULL: out of memory). */
double *make_lut(kiln_dtype t);

/* Deterministic random numbers (splitmix64): a value below n (0 when n is 0). */
uint64_t below(uint64_t *state, uint64_t n);

/* count random elements of input type t into out; lut is make_lut(t). fp8: finite codes with |x| in [2^-3, 2^2),
 * uniform over those codes; f16/bf16: uniform in [-1, 1), rounded. */
void fill_random(kiln_dtype t, const double *lut, void *out, size_t count, uint64_t *state);

/* fill_random into `copies` equal copies: each of `rows` runs of `len` elements is drawn once and repeated
 * `copies` times back to back (rows * copies * len elements in all). Grouped problems make every group's operands
 * the same this way, so that one group's reference holds for all; rows 1, copies 1 is fill_random. */
void fill_copies(kiln_dtype t, const double *lut, void *out, size_t rows, size_t len, size_t copies,
                 uint64_t *state);

/* One size's inputs on the host: A [batch][m][k]; B unpacked, [batch][n][k] (TN) or [batch][k][n] (NN), with the
 * strides in elements: lda between A's rows, ldb between B's (TN: its columns), stride_a and stride_b between
 * batches (0: every batch, e.g. every group of a grouped problem, reads the same matrix). */
struct host_inputs {
    struct size4 s;
    kiln_layout layout;
    const uint8_t *a, *b;
    size_t ea, eb;               /* element bytes */
    const double *lut_a, *lut_b; /* make_lut of their types */
    int64_t lda, ldb, stride_a, stride_b;
};

/* Sampled output positions and their reference values. */
struct samples {
    int64_t *index; /* element index in D: b * stride_d + i * ldd + j */
    double *ref;
    int count;
};

/* The reference scale * sum_k A[b][i][k] B(k, j) at smp->count positions of D (strides of D in elements; for a
 * grouped problem b is the group): every position in order when `all`, else drawn from state. */
void reference_samples(const struct host_inputs *in, int64_t stride_d, int64_t ldd, double scale, int all,
                       uint64_t *state, struct samples *smp);

/* A candidate's D (d_count elements of type t, on the host) against the samples: returns the number of non-finite
 * elements in all of D and writes the relative L2 error over the samples. */
int64_t check_output(kiln_dtype t, const void *d, size_t d_count, const struct samples *smp, double *rel_err);

#endif /* KILN_BENCH_REFERENCE_H */
