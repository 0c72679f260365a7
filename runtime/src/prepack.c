/* Prepacked B for f16/bf16 x fp8 GEMMs: fp8 bytes of B reordered once on the host into the order the kernels read.
 *
 * Output: B as [n][kp] bytes, kp = round_up(k, 16) (the ldb of the problem). Within each group of 16 k (base g*16)
 *   out[n][g*16 + 4*q + j] = B(k = g*16 + P[q][j], n),  P[q] = {2q, 2q+1, 2q+8, 2q+9},  q, j = 0..3,
 * so that the 4 bytes a thread of an m16n8k16 mma needs for its B fragment are adjacent; k >= K reads as 0.
 * A dst_bytes below the size kiln_prepack_b_size gives returns KILN_STATUS_INVALID_VALUE ("dst_bytes = X, needs Y");
 * src and dst must not overlap. n or k = 0 gives an empty output (0 bytes) and reads nothing. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "handle.h"

#define PACK_GROUP 16

/* P flattened: the source k offset of output byte 4*q + j of a group. */
static const uint8_t PERM[PACK_GROUP] = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};

int64_t kiln_prepack_ld(int64_t k) { return (k + PACK_GROUP - 1) / PACK_GROUP * PACK_GROUP; }

static kiln_status prepack_size(int64_t n, int64_t k, size_t *bytes, int64_t *ldb_packed)
{
    if (!bytes || !ldb_packed)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !bytes ? "bytes" : "ldb_packed");
    if (n < 0 || k < 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s = %" PRId64 " is negative", n < 0 ? "n" : "k", n < 0 ? n : k);
    if (n > INT32_MAX || k > INT32_MAX)
        return kiln_fail(KILN_STATUS_OVERFLOW, "%s = %" PRId64 " exceeds 2^31 - 1", n > INT32_MAX ? "n" : "k",
                         n > INT32_MAX ? n : k);
    int64_t kp = kiln_prepack_ld(k);
    /* n * kp < 2^31 * 2^31 fits int64; size_t may be narrower */
    if ((uint64_t)(n * kp) > (uint64_t)SIZE_MAX)
        return kiln_fail(KILN_STATUS_OVERFLOW, "n * ldb_packed = %" PRId64 " * %" PRId64 " bytes exceed SIZE_MAX", n,
                         kp);
    *bytes = (size_t)(n * kp);
    *ldb_packed = kp;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_prepack_b_size(int64_t n, int64_t k, size_t *bytes, int64_t *ldb_packed)
{
    kiln_call_begin();
    return kiln_call_end(NULL, "kiln_prepack_b_size", prepack_size(n, k, bytes, ldb_packed));
}

static kiln_status prepack(const uint8_t *src, kiln_layout layout, int64_t n, int64_t k, int64_t ld, uint8_t *dst,
                           size_t dst_bytes)
{
    size_t bytes = 0; /* set by prepack_size on success; initialized for the compiler, which cannot see that */
    int64_t kp = 0;
    if ((unsigned)layout >= (unsigned)KILN_LAYOUT_COUNT)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "layout = %d is not a kiln_layout", (int)layout);
    kiln_status st = prepack_size(n, k, &bytes, &kp);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    if (bytes == 0)
        return KILN_STATUS_SUCCESS; /* n or k is 0: nothing to read or write */
    if (!src || !dst)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", !src ? "src" : "dst");
    int64_t rows = layout == KILN_LAYOUT_TN ? n : k, cols = layout == KILN_LAYOUT_TN ? k : n;
    if (ld < cols)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "ld = %" PRId64 " is less than %s = %" PRId64, ld,
                         layout == KILN_LAYOUT_TN ? "k (layout TN)" : "n (layout NN)", cols);
    /* the source's last byte, (rows - 1) * ld + cols, must be addressable */
    if ((rows > 1 && ld > (INT64_MAX - cols) / (rows - 1)) || (uint64_t)((rows - 1) * ld + cols) > (uint64_t)SIZE_MAX)
        return kiln_fail(KILN_STATUS_OVERFLOW, "the source's extent (rows - 1) * ld + cols with ld = %" PRId64
                         " overflows", ld);
    if (dst_bytes < bytes)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "dst_bytes = %zu, needs %zu (kiln_prepack_b_size)", dst_bytes,
                         bytes);

    /* B(kk, nn) lives at src[nn * ld + kk] (TN) or src[kk * ld + nn] (NN). */
    size_t step_n = layout == KILN_LAYOUT_TN ? (size_t)ld : 1, step_k = layout == KILN_LAYOUT_TN ? 1 : (size_t)ld;
    for (int64_t nn = 0; nn < n; nn++) {
        uint8_t *out = dst + (size_t)nn * (size_t)kp;
        const uint8_t *col = src + (size_t)nn * step_n;
        for (int64_t g = 0; g < kp; g += PACK_GROUP)
            for (int i = 0; i < PACK_GROUP; i++) {
                int64_t kk = g + PERM[i];
                out[g + i] = kk < k ? col[(size_t)kk * step_k] : 0;
            }
    }
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_prepack_b(const uint8_t *src, kiln_layout layout, int64_t n, int64_t k, int64_t ld, uint8_t *dst,
                           size_t dst_bytes)
{
    kiln_call_begin();
    return kiln_call_end(NULL, "kiln_prepack_b", prepack(src, layout, n, k, ld, dst, dst_bytes));
}
