/* kiln_prepack_b against a naive loop that states the layout directly, and its argument checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln.h"
#include "test_util.h"

/* Expected output byte: out[n][g*16 + 4q + j] = B(g*16 + 2q + (j & 1) + 8 * (j >> 1), n), zero past K. */
static uint8_t expected(const uint8_t *src, kiln_layout layout, int64_t k, int64_t ld, int64_t n, int64_t kk)
{
    int64_t g = kk / 16, q = (kk % 16) / 4, j = kk % 4;
    int64_t src_k = g * 16 + 2 * q + (j & 1) + 8 * (j >> 1);
    if (src_k >= k)
        return 0;
    return layout == KILN_LAYOUT_TN ? src[n * ld + src_k] : src[src_k * ld + n];
}

static void test_layout(kiln_layout layout, int64_t n, int64_t k, int64_t ld)
{
    size_t bytes = 0;
    int64_t kp = 0;
    CHECK(kiln_prepack_b_size(n, k, &bytes, &kp) == KILN_STATUS_SUCCESS, "size");
    CHECK(kp == (k + 15) / 16 * 16 && bytes == (size_t)(n * kp), "kp %lld bytes %zu", (long long)kp, bytes);
    size_t src_bytes = (size_t)((layout == KILN_LAYOUT_TN ? n : k) * ld);
    uint8_t *src = malloc(src_bytes), *dst = malloc(bytes + 1);
    for (size_t i = 0; i < src_bytes; i++)
        src[i] = (uint8_t)(i * 131u + 7u) | 1u; /* never zero, so padding is visible */
    dst[bytes] = 0xEE;
    CHECK(kiln_prepack_b(src, layout, n, k, ld, dst, bytes) == KILN_STATUS_SUCCESS, "prepack");
    int bad = 0;
    for (int64_t nn = 0; nn < n; nn++)
        for (int64_t kk = 0; kk < kp; kk++)
            bad += dst[nn * kp + kk] != expected(src, layout, k, ld, nn, kk);
    CHECK(bad == 0 && dst[bytes] == 0xEE, "%s n=%lld k=%lld ld=%lld: %d bytes differ",
          layout == KILN_LAYOUT_TN ? "TN" : "NN", (long long)n, (long long)k, (long long)ld, bad);
    free(src);
    free(dst);
}

static void test_errors(void)
{
    uint8_t src[64] = {0}, dst[64];
    size_t bytes;
    int64_t kp;
    CHECK(kiln_prepack_b_size(2, 20, NULL, &kp) == KILN_STATUS_NULL_POINTER, "size NULL");
    CHECK(kiln_prepack_b_size(2, 20, &bytes, NULL) == KILN_STATUS_NULL_POINTER, "ld NULL");
    CHECK(kiln_prepack_b_size(-1, 20, &bytes, &kp) == KILN_STATUS_INVALID_VALUE, "n < 0");
    CHECK(kiln_prepack_b_size(0, 20, &bytes, &kp) == KILN_STATUS_SUCCESS && bytes == 0 && kp == 32, "n = 0: empty");
    CHECK(kiln_prepack_b_size(5, 0, &bytes, &kp) == KILN_STATUS_SUCCESS && bytes == 0 && kp == 0, "k = 0: empty");
    CHECK(kiln_prepack_b(NULL, KILN_LAYOUT_TN, 0, 20, 20, NULL, 0) == KILN_STATUS_SUCCESS, "empty: nothing read");
    CHECK(kiln_prepack_b_size(2, -1, &bytes, &kp) == KILN_STATUS_INVALID_VALUE, "k < 0");
    CHECK(kiln_prepack_b_size(2, INT64_C(1) << 31, &bytes, &kp) == KILN_STATUS_OVERFLOW, "k > INT32_MAX");
    CHECK(kiln_prepack_b(NULL, KILN_LAYOUT_TN, 2, 20, 20, dst, sizeof dst) == KILN_STATUS_NULL_POINTER, "src");
    CHECK(kiln_prepack_b(src, KILN_LAYOUT_TN, 2, 20, 20, NULL, sizeof dst) == KILN_STATUS_NULL_POINTER, "dst");
    CHECK(kiln_prepack_b(src, (kiln_layout)2, 2, 20, 20, dst, sizeof dst) == KILN_STATUS_INVALID_VALUE, "layout");
    CHECK(kiln_prepack_b(src, KILN_LAYOUT_TN, 2, 20, 19, dst, sizeof dst) == KILN_STATUS_INVALID_VALUE, "TN ld < k");
    CHECK(kiln_prepack_b(src, KILN_LAYOUT_NN, 3, 20, 2, dst, sizeof dst) == KILN_STATUS_INVALID_VALUE, "NN ld < n");
    CHECK(kiln_prepack_b(src, KILN_LAYOUT_TN, 2, 20, INT64_MAX - 5, dst, sizeof dst) == KILN_STATUS_OVERFLOW,
          "source extent overflows");
    memset(dst, 0xAB, sizeof dst);
    CHECK(kiln_prepack_b(src, KILN_LAYOUT_TN, 2, 20, 20, dst, 63) == KILN_STATUS_INVALID_VALUE,
          "dst holds 63 of 64 bytes");
    CHECK(strcmp(kiln_last_error(NULL), "kiln_prepack_b: dst_bytes = 63, needs 64 (kiln_prepack_b_size)") == 0,
          "the short buffer's text: %s", kiln_last_error(NULL));
    CHECK(dst[0] == 0xAB && dst[62] == 0xAB, "nothing written on error");
}

int main(void)
{
    test_layout(KILN_LAYOUT_TN, 5, 37, 41);
    test_layout(KILN_LAYOUT_TN, 3, 16, 16);
    test_layout(KILN_LAYOUT_TN, 1, 1, 1);
    test_layout(KILN_LAYOUT_NN, 5, 37, 7);
    test_layout(KILN_LAYOUT_NN, 17, 48, 17);
    test_layout(KILN_LAYOUT_NN, 2, 100, 3);
    test_errors();
    return test_summary("test_prepack");
}
