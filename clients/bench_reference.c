/* kiln_bench's numbers (bench_reference.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_reference.h"

double *make_lut(kiln_dtype t)
{
    size_t count = is_fp8(t) ? 256 : 65536;
    double *lut = malloc(count * sizeof *lut);
    if (!lut)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        uint8_t code8 = (uint8_t)i;
        uint16_t code16 = (uint16_t)i;
        lut[i] = kiln_element_to_f32(t, is_fp8(t) ? (const void *)&code8 : (const void *)&code16);
    }
    return lut;
}

static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double next_unit(uint64_t *state) { return (double)(next_u64(state) >> 11) * 0x1p-53; } /* [0, 1) */

uint64_t below(uint64_t *state, uint64_t n) { return n ? next_u64(state) % n : 0; }

/* Random finite fp8 codes of moderate magnitude: |x| in [2^-3, 2^2), uniform over those codes (both signs). */
static uint8_t random_fp8(const double *lut, uint64_t *state)
{
    for (;;) {
        uint8_t code = (uint8_t)(next_u64(state) >> 56);
        double x = fabs(lut[code]);
        if (x >= 0.125 && x < 4.0)
            return code;
    }
}

void fill_random(kiln_dtype t, const double *lut, void *out, size_t count, uint64_t *state)
{
    if (is_fp8(t)) {
        uint8_t *p = out;
        for (size_t i = 0; i < count; i++)
            p[i] = random_fp8(lut, state);
    } else {
        uint16_t *p = out;
        for (size_t i = 0; i < count; i++) {
            double x = 2.0 * next_unit(state) - 1.0;
            kiln_element_from_f32(t, (float)x, 0, &p[i]);
        }
    }
}

void fill_copies(kiln_dtype t, const double *lut, void *out, size_t rows, size_t len, size_t copies,
                 uint64_t *state)
{
    size_t run = len * dtype_bytes(t);
    for (size_t r = 0; r < rows; r++) {
        uint8_t *first = (uint8_t *)out + r * copies * run;
        fill_random(t, lut, first, len, state);
        for (size_t c = 1; c < copies; c++)
            memcpy(first + c * run, first, run);
    }
}

static double element(const void *base, size_t index, size_t bytes, const double *lut)
{
    if (bytes == 1)
        return lut[((const uint8_t *)base)[index]];
    uint16_t v;
    memcpy(&v, (const uint8_t *)base + index * 2, 2);
    return lut[v];
}

void reference_samples(const struct host_inputs *in, int64_t stride_d, int64_t ldd, double scale, int all,
                       uint64_t *state, struct samples *smp)
{
    const struct size4 s = in->s;
    for (int i = 0; i < smp->count; i++) {
        int64_t bb, row, col;
        if (all) {
            bb = i / (s.m * s.n), row = i / s.n % s.m, col = i % s.n;
        } else {
            bb = (int64_t)below(state, (uint64_t)s.batch);
            row = (int64_t)below(state, (uint64_t)s.m);
            col = (int64_t)below(state, (uint64_t)s.n);
        }
        smp->index[i] = bb * stride_d + row * ldd + col;
        size_t a0 = (size_t)(bb * in->stride_a + row * in->lda), b0 = (size_t)(bb * in->stride_b);
        double acc = 0;
        if (in->layout == KILN_LAYOUT_TN)
            for (int64_t kk = 0; kk < s.k; kk++)
                acc += element(in->a, a0 + (size_t)kk, in->ea, in->lut_a) *
                       element(in->b, b0 + (size_t)(col * in->ldb + kk), in->eb, in->lut_b);
        else
            for (int64_t kk = 0; kk < s.k; kk++)
                acc += element(in->a, a0 + (size_t)kk, in->ea, in->lut_a) *
                       element(in->b, b0 + (size_t)(kk * in->ldb + col), in->eb, in->lut_b);
        smp->ref[i] = acc * scale;
    }
}

static int64_t count_nonfinite(kiln_dtype t, const void *d, size_t count)
{
    int64_t bad = 0;
    if (t == KILN_DTYPE_F32) {
        const uint32_t *p = d;
        for (size_t i = 0; i < count; i++)
            bad += (p[i] & 0x7f800000u) == 0x7f800000u;
    } else {
        const uint16_t *p = d;
        uint16_t mask = t == KILN_DTYPE_F16 ? 0x7c00 : 0x7f80;
        for (size_t i = 0; i < count; i++)
            bad += (p[i] & mask) == mask;
    }
    return bad;
}

int64_t check_output(kiln_dtype t, const void *d, size_t d_count, const struct samples *smp, double *rel_err)
{
    size_t bytes = dtype_bytes(t);
    double err = 0, norm = 0;
    for (int i = 0; i < smp->count; i++) {
        double got = kiln_element_to_f32(t, (const uint8_t *)d + (size_t)smp->index[i] * bytes);
        double diff = got - smp->ref[i];
        err += diff * diff;
        norm += smp->ref[i] * smp->ref[i];
    }
    *rel_err = norm > 0 ? sqrt(err / norm) : sqrt(err);
    return count_nonfinite(t, d, d_count);
}
