/* The handle and the helpers the API files (kiln.c, problem.c, run.c, prepack.c) share. Private to the runtime. */
#ifndef KILN_HANDLE_H
#define KILN_HANDLE_H

#include <pthread.h>
#include <stdint.h>

#include "backend.h"
#include "error.h"
#include "kiln/kiln.h"
#include "select.h"

/* The kernels of one solution, loaded on first use. */
typedef struct kiln_kernels {
    int loaded;
    void *module;
    void *gemm;
    void *reduce; /* gsu > 1 only; attention: a vpre kernel's V^T packer (kiln_attn_pack_v) */
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
    kiln_kernels *attn_kernels;       /* one per attention solution index (gemm: the kernel) */
    kiln_error_slot error;            /* kiln_last_error */
};

/* The error slot of h, NULL without a handle (the text then goes to the calling thread). */
static inline kiln_error_slot *kiln_slot(kiln_handle h) { return h ? &h->error : NULL; }

/* What a pair of operand types computes (kiln_kind: table.h). */
kiln_kind kiln_problem_kind(kiln_dtype a, kiln_dtype b);

/* kiln_check_problem without the last-error bookkeeping (for the other API calls): records why with kiln_fail. */
kiln_status kiln_problem_validate(kiln_handle h, const kiln_problem *p);

/* What a valid problem needs launched (kiln.h, "Empty problems"). */
typedef enum kiln_work {
    KILN_WORK_GEMM = 0, /* a GEMM kernel (with k = 0: D = act(beta * C + bias) by a non-TMA kernel) */
    KILN_WORK_NONE,     /* m, n or batch is 0: nothing */
    KILN_WORK_ZERO_D    /* k = 0 without C and bias: D is filled with zeros */
} kiln_work;

kiln_work kiln_problem_work(const kiln_problem *p);
/* Sizes a kernel takes as int32: each >= 0 (INVALID_VALUE) and <= 2^31 - 1 (OVERFLOW), named in the error. */
kiln_status kiln_check_sizes(const char *const names[], const int64_t sizes[], int n);
/* Attention (attn.c): kiln_attn_check's rules, and the attention solution an algo names (-1: none). */
kiln_status kiln_attn_validate(kiln_handle h, const kiln_attn_problem *p);
int kiln_handle_find_attn_algo(kiln_handle h, const kiln_algo *a);

/* Leading dimension (and K padding) of a prepacked B: k rounded up to 16. */
int64_t kiln_prepack_ld(int64_t k);

/* The algo of a problem that needs no GEMM kernel (KILN_WORK_NONE, KILN_WORK_ZERO_D): kiln.h, "Empty problems". */
#define KILN_NO_GEMM_NAME "kiln_no_gemm"
#define KILN_NO_GEMM_INDEX UINT32_MAX
kiln_algo kiln_no_gemm_algo(void);

/* The solution an algo names: its index when the hash matches there, else the first solution with that hash; -1 when
 * none; KILN_FIND_NO_GEMM for the no-GEMM algo. */
#define KILN_FIND_NO_GEMM (-2)
int kiln_handle_find_algo(kiln_handle h, const kiln_algo *a);

/* Selects on the handle (kiln_select over its tables). When nothing passes, says why: some candidate passes once the
 * launch limits are ignored -> OVERFLOW; once alignment is ignored -> MISALIGNED; once code objects are not required
 * -> NO_CODE_FOR_DEVICE; otherwise NO_SOLUTION; and records a text naming a rejected candidate and its reason. */
kiln_status kiln_handle_select(kiln_handle h, const kiln_problem *p, const kiln_args *args, int *out, int max_out,
                               int *count, char *explain, size_t len);

/* Selection input for a problem on this handle: its arch, and the device limits when that arch is the device's. */
void kiln_handle_select_input(kiln_handle h, const kiln_problem *p, const kiln_args *args, kiln_select_input *in);

/* The kernels of solution index s, loading its code object on first use (serialized by h->lock).
 * KILN_STATUS_NO_CODE_FOR_DEVICE when no code object carries the solution's name. */
kiln_status kiln_handle_kernels(kiln_handle h, int s, void **gemm, void **reduce);

#endif /* KILN_HANDLE_H */
