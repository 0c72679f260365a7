/* The handle and the helpers the API files (kiln.c, problem.c, run.c, prepack.c) share. Private to the runtime. */
#ifndef KILN_HANDLE_H
#define KILN_HANDLE_H

#include <pthread.h>
#include <stdint.h>

#include "backend.h"
#include "kiln/kiln.h"
#include "select.h"

/* The kernels of one solution, loaded on first use. */
typedef struct kiln_kernels {
    int loaded;
    void *module;
    void *gemm;
    void *reduce; /* gsu > 1 only */
} kiln_kernels;

struct kiln_handle_s {
    kiln_tables tables;
    const kiln_backend *backend;      /* NULL: no device */
    void *dev;                        /* backend state */
    char device_arch[KILN_ARCH_LEN];  /* "none" without a device */
    char arch[KILN_ARCH_LEN];         /* what selection targets: device_arch unless kiln_set_arch changed it */
    kiln_device_limits limits;        /* all 0 without a device */
    pthread_mutex_t lock;             /* guards kernels[] */
    kiln_kernels *kernels;            /* one per solution index */
};

/* What a pair of operand types computes (kiln_kind: table.h). */
kiln_kind kiln_problem_kind(kiln_dtype a, kiln_dtype b);

/* Leading dimension (and K padding) of a prepacked B: k rounded up to 16. */
int64_t kiln_prepack_ld(int64_t k);

/* Selection input for a problem on this handle: its arch, and the device limits when that arch is the device's. */
void kiln_handle_select_input(kiln_handle h, const kiln_problem *p, const kiln_args *args, kiln_select_input *in);

/* The kernels of solution index s, loading its code object on first use (serialized by h->lock).
 * KILN_STATUS_NO_CODE_FOR_DEVICE when no code object carries the solution's name. */
kiln_status kiln_handle_kernels(kiln_handle h, int s, void **gemm, void **reduce);

#endif /* KILN_HANDLE_H */
