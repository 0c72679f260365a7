// The epilogue every kiln GEMM shares, and the split-K reduction that ends in it.
//   D = act(alpha * sa * sb * acc + beta * C + bias)
#ifndef KILN_EPILOGUE_H
#define KILN_EPILOGUE_H

#include "kiln_device.h"

namespace kiln {

enum { SCALE_NONE = 0, SCALE_TENSOR = 1, SCALE_VECTOR = 2, SCALE_BLOCK = 3 };  // BLOCK: applied in the mainloop
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_GELU = 2, ACT_SILU = 3 };
// kiln_dtype values for the bias and C/D element types (kiln.h)
enum { DT_F32 = 0, DT_F16 = 1, DT_BF16 = 2 };

template <class T> KILN_DEVICE float load_f32(const T *p, int64_t i);
template <> KILN_DEVICE float load_f32<float>(const float *p, int64_t i) { return p[i]; }
template <> KILN_DEVICE float load_f32<kiln_f16>(const kiln_f16 *p, int64_t i) { return f16_to_f32(p[i]); }
template <> KILN_DEVICE float load_f32<kiln_bf16>(const kiln_bf16 *p, int64_t i) { return bf16_to_f32(p[i]); }

template <class T> KILN_DEVICE void store_f32(T *p, int64_t i, float v);
template <> KILN_DEVICE void store_f32<float>(float *p, int64_t i, float v) { p[i] = v; }
template <> KILN_DEVICE void store_f32<kiln_f16>(kiln_f16 *p, int64_t i, float v) { p[i] = f32_to_f16(v); }
template <> KILN_DEVICE void store_f32<kiln_bf16>(kiln_bf16 *p, int64_t i, float v) { p[i] = f32_to_bf16(v); }

KILN_DEVICE float load_any(const void *p, int type, int64_t i) {
    if (type == DT_F16) return load_f32((const kiln_f16 *)p, i);
    if (type == DT_BF16) return load_f32((const kiln_bf16 *)p, i);
    return load_f32((const float *)p, i);
}

KILN_DEVICE float activate(float v, int act) {
    if (act == ACT_RELU) return v > 0.f ? v : 0.f;
    if (act == ACT_GELU) return 0.5f * v * (1.f + fast_erf(v * 0.70710678118654752f));
    if (act == ACT_SILU) return fast_div(v, 1.f + fast_exp(-v));
    return v;
}

// Per-group weight scales of the f16/bf16 x prepacked-fp8 kernels (scale_b_mode SCALE_BLOCK; kiln.h, "Block
// scales"): one f32 per weight row or 128-row block and 128 of K, applied in the mainloop, so a K-tile must be one
// group (the runtime offers them only DU 128 kernels, kiln_solution_fits).
template <int DU> KILN_DEVICE bool weight_group_scales(const kiln_gemm_params &p) {
    return DU == 128 && p.scale_b_mode == SCALE_BLOCK;
}

// Per-row / per-column factors, read once per thread.
struct EpilogueScales {
    float tensor; // alpha * tensor scales
    const float *row;
    const float *col;
};

KILN_DEVICE EpilogueScales epilogue_scales(const kiln_gemm_params &p) {
    EpilogueScales s;
    s.tensor = p.alpha;
    s.row = nullptr;
    s.col = nullptr;
    if (p.scale_a_mode == SCALE_TENSOR) s.tensor *= p.scale_a[0];
    if (p.scale_a_mode == SCALE_VECTOR) s.row = p.scale_a;
    if (p.scale_b_mode == SCALE_TENSOR) s.tensor *= p.scale_b[0];
    if (p.scale_b_mode == SCALE_VECTOR) s.col = p.scale_b;
    return s;
}

// Grouped GEMMs (kiln_schedule.h, "groups"): group g's own rows of scale_a (masked groups; a contiguous group's rows
// are A's rows, g_stride_sa 0), columns of scale_b and bias row. Tensor scales are one float for every group.
struct GroupOperands {
    const float *scale_a, *scale_b;
    const void *bias;
};

KILN_DEVICE GroupOperands group_operands(const kiln_gemm_params &p, int g) {
    GroupOperands o{p.scale_a, p.scale_b, p.bias};
    if (p.scale_a_mode == SCALE_VECTOR || p.scale_a_mode == SCALE_BLOCK) o.scale_a += g * p.g_stride_sa;
    if (p.scale_b_mode == SCALE_VECTOR || p.scale_b_mode == SCALE_BLOCK) o.scale_b += g * p.g_stride_sb;
    if (p.bias) o.bias = (const uint8_t *)p.bias + g * p.g_stride_bias * (p.bias_type == DT_F32 ? 4 : 2);
    return o;
}

// The epilogue's value of one output element; row < m and col < n are the caller's promise.
template <class TD>
KILN_DEVICE float epilogue_value(const kiln_gemm_params &p, const EpilogueScales &s, int batch, int row, int col,
                                 float acc) {
    float v = acc * s.tensor;
    if (s.row) v *= s.row[row];
    if (s.col) v *= s.col[col];
    if (p.has_c) v += p.beta * load_f32((const TD *)p.c, batch * p.stride_c + row * p.ldc + col);
    if (p.bias) v += load_any(p.bias, p.bias_type, col);
    return activate(v, p.activation);
}

template <class TD>
KILN_DEVICE void epilogue_store(const kiln_gemm_params &p, const EpilogueScales &s, int batch, int row, int col,
                                float acc) {
    store_f32((TD *)p.d, batch * p.stride_d + row * p.ldd + col, epilogue_value<TD>(p, s, batch, row, col, acc));
}

template <class TD> struct alignas(2 * sizeof(TD)) Pair { TD x, y; };

// Two neighbouring elements (col, col + 1) of one row: one store when both exist and the pair is aligned.
template <class TD>
KILN_DEVICE void epilogue_store2(const kiln_gemm_params &p, const EpilogueScales &s, int batch, int row, int col,
                                 float acc0, float acc1) {
    const int64_t i = batch * p.stride_d + row * p.ldd + col;
    if (col + 1 < p.n && (i & 1) == 0) {
        Pair<TD> pair;
        store_f32(&pair.x, 0, epilogue_value<TD>(p, s, batch, row, col, acc0));
        store_f32(&pair.y, 0, epilogue_value<TD>(p, s, batch, row, col + 1, acc1));
        *reinterpret_cast<Pair<TD> *>((TD *)p.d + i) = pair;
        return;
    }
    epilogue_store<TD>(p, s, batch, row, col, acc0);
    if (col + 1 < p.n) epilogue_store<TD>(p, s, batch, row, col + 1, acc1);
}

// Split-K partials live in workspace[(batch * gsu + split) * m * n + row * n + col].
KILN_DEVICE float *splitk_slice(const kiln_gemm_params &p, int batch, int split, int gsu) {
    return p.workspace + ((int64_t)batch * gsu + split) * (int64_t)p.m * p.n;
}

// grid (ceil(m*n / KILN_REDUCE_THREADS), 1, batch): sums the gsu slices in a fixed order (deterministic) and applies
// the epilogue.
template <class TD, int GSU>
KILN_DEVICE void splitk_reduce(const kiln_gemm_params &p) {
    const int batch = block_z();
    const int64_t i = (int64_t)block_x() * KILN_REDUCE_THREADS + thread_x();
    if (i >= (int64_t)p.m * p.n) return;
    float acc = 0.f;
#pragma unroll
    for (int s = 0; s < GSU; ++s) acc += splitk_slice(p, batch, s, GSU)[i];
    const EpilogueScales sc = epilogue_scales(p);
    epilogue_store<TD>(p, sc, batch, (int)(i / p.n), (int)(i % p.n), acc);
}

}  // namespace kiln

#endif  // KILN_EPILOGUE_H
