/* The C tests' one assertion macro and their summary line. Each test program includes this once. */
#ifndef KILN_TEST_UTIL_H
#define KILN_TEST_UTIL_H

#include <stdio.h>

#include "kiln/kiln.h"

static int test_passed, test_failed;

/* Counts a check; prints the failing expression with its location and a printf-style note. */
#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (cond) {                                                                                                   \
            test_passed++;                                                                                            \
        } else {                                                                                                      \
            test_failed++;                                                                                            \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);                                  \
            fprintf(stderr, __VA_ARGS__);                                                                             \
            fputc('\n', stderr);                                                                                      \
        }                                                                                                             \
    } while (0)

/* Prints "<name>: N passed, M failed" and gives the exit status. */
static int test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_passed, test_failed);
    return test_failed ? 1 : 0;
}

/* Shorthands for the kiln enums the API tests spell often. */
#define E4M3 KILN_DTYPE_E4M3
#define E5M2 KILN_DTYPE_E5M2
#define BF16 KILN_DTYPE_BF16
#define F16 KILN_DTYPE_F16
#define F32 KILN_DTYPE_F32
#define TN KILN_LAYOUT_TN
#define NN KILN_LAYOUT_NN

/* A call's status must be `want`; on a miss, prints both and kiln_last_error(handle) (NULL: the thread's text). */
#define EXPECT_ON(handle, call, want)                                                                                \
    do {                                                                                                              \
        kiln_status got_ = (call);                                                                                    \
        CHECK(got_ == (want), "%s -> %s, want %s (%s)", #call, kiln_status_string(got_), kiln_status_string(want),   \
              kiln_last_error(handle));                                                                               \
    } while (0)
#define EXPECT(call, want) EXPECT_ON(NULL, call, want)
/* The same, and the handle's (or thread's) error text contains `part` ("" for any). Needs <string.h>. */
#define EXPECT_HAS(h, call, want, part)                                                                              \
    do {                                                                                                              \
        kiln_status got_ = (call);                                                                                    \
        const char *e_ = kiln_last_error(h);                                                                          \
        CHECK(got_ == (want) && strstr(e_, part) != NULL, "%s -> %s, want %s\n  text: '%s'\n  want part: '%s'",      \
              #call, kiln_status_string(got_), kiln_status_string(want), e_, part);                                  \
    } while (0)

#endif /* KILN_TEST_UTIL_H */
