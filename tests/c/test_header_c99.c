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
    failed += KILN_API_VERSION != 5;
    printf("test_header_c99: %d passed, %d failed\n", 6 - failed, failed);
    return failed != 0;
}
