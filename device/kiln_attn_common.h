// What every FP8 attention family reads from kiln_attn_params the same way: where sequence b's rows are, the
// descales, and the softmax scale in base 2 (exp(scale * q_descale * k_descale * s) = 2^(s * sl2)).
// FRESH = true reads through volatile. The NVIDIA kernels read these again in their epilogue rather than keeping
// them live across the key loop (which costs registers), and the volatile read keeps the compiler from merging the
// second load with the first.
#ifndef KILN_ATTN_COMMON_H
#define KILN_ATTN_COMMON_H

#include "abi/kiln_attn_abi.h"
#include "kiln_device.h"

namespace kiln {

template <bool FRESH, class T> KILN_DEVICE T attn_read(const T *p, int64_t i) {
    if constexpr (FRESH)
        return *(const volatile T *)(p + i);
    else
        return p[i];
}

// The rows of sequence b: where its queries and keys start, how many (varlen: from cu_seqlens, else the fixed lengths).
struct AttnSeq {
    int64_t q_first, k_first;
    int len_q, len_k;
};
template <bool FRESH = false> KILN_DEVICE AttnSeq attn_seq(const kiln_attn_params &p, int b) {
    if (!p.cu_seqlens_q) return AttnSeq{0, 0, p.seqlen_q, p.seqlen_k};
    const int q0 = attn_read<FRESH>(p.cu_seqlens_q, b), k0 = attn_read<FRESH>(p.cu_seqlens_k, b);
    return AttnSeq{q0, k0, attn_read<FRESH>(p.cu_seqlens_q, b + 1) - q0, attn_read<FRESH>(p.cu_seqlens_k, b + 1) - k0};
}

// A descale factor (1 when the pointer is null), and the index of (sequence b, query head h)'s kv head.
template <bool FRESH = false> KILN_DEVICE float attn_descale(const float *d, int64_t i) {
    return d ? attn_read<FRESH>(d, i) : 1.f;
}
KILN_DEVICE int64_t attn_descale_index(const kiln_attn_params &p, int b, int h) {
    return b * p.descale_stride_b + (h / (p.heads_q / p.heads_kv)) * p.descale_stride_h;
}

// softmax scale * q_descale * k_descale * log2(e).
template <bool FRESH = false> KILN_DEVICE float attn_sl2(const kiln_attn_params &p, int64_t di) {
    return p.softmax_scale * attn_descale<FRESH>(p.q_descale, di) * attn_descale<FRESH>(p.k_descale, di) *
           1.4426950408889634f;
}

}  // namespace kiln

#endif  // KILN_ATTN_COMMON_H
