/* The C tests' one assertion macro and their summary line. Each test program includes this once. */
#ifndef KILN_TEST_UTIL_H
#define KILN_TEST_UTIL_H

#include <stdio.h>

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

#endif /* KILN_TEST_UTIL_H */
