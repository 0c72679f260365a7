/* kiln/kiln.h is C99: this file is built with -std=c99 -pedantic -Werror and uses every type of the header. */
#include "kiln/kiln.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    kiln_problem p;
    kiln_args args;
    kiln_algo algo;
    kiln_handle h = NULL;
    size_t bytes = 0;
    int64_t ldb = 0;
    int failed = 0;
    memset(&args, 0, sizeof args);
    memset(&algo, 0, sizeof algo);
    failed += kiln_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_BF16, KILN_LAYOUT_TN, 16, 16, 16) !=
              KILN_STATUS_SUCCESS;
    failed += p.scale_a != KILN_SCALE_NONE || p.activation != KILN_ACT_NONE;
    failed += kiln_prepack_b_size(16, 20, &bytes, &ldb) != KILN_STATUS_SUCCESS || bytes != 16 * 32 || ldb != 32;
    failed += kiln_destroy(h) != KILN_STATUS_NULL_POINTER;
    failed += strcmp(kiln_status_string(KILN_STATUS_SUCCESS), "success") != 0;
    failed += KILN_API_VERSION != 8;
    {
        kiln_attn_problem ap;
        size_t vt = 0;
        failed += kiln_attn_problem_init(&ap, KILN_DTYPE_E4M3, KILN_DTYPE_BF16, 2, 8, 2, 100, 100, 128) !=
                      KILN_STATUS_SUCCESS ||
                  ap.v_packed != 0;
        failed += kiln_attn_pack_v_size(&ap, &vt) != KILN_STATUS_SUCCESS || vt != (size_t)2 * 2 * 128 * 104 * 2;
    }
    printf("test_header_c99: %d passed, %d failed\n", 8 - failed, failed);
    return failed != 0;
}
