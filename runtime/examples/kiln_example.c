/* kiln example: pick and explain the kernel for an FP8 GEMM, and run it when a GPU is present.
 *
 *   D[m][n] = sa * sb * sum_k A[m][k] * B[n][k] + bias[n]     (e4m3 x e4m3 -> bf16, layout TN)
 *
 * Without a device it selects for sm90 (kiln_set_arch) so that the selection can be shown anywhere. With one, it
 * allocates through the CUDA driver (loaded at run time, like the library does) and checks every output element
 * against a host reference. Usage: kiln_example [M N K]
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln.h"

#define CHECK(call)                                                                                                   \
    do {                                                                                                              \
        kiln_status s_ = (call);                                                                                      \
        if (s_ != KILN_STATUS_SUCCESS) {                                                                              \
            fprintf(stderr, "%s failed: %s (%s)\n", #call, kiln_status_string(s_), kiln_last_error(h));             \
            return 1;                                                                                                 \
        }                                                                                                             \
    } while (0)

/* A few e4m3 codes and their exact values, enough for random small-integer-ish data. */
static const unsigned char E4M3_CODE[8] = {0x38, 0x40, 0x30, 0xB8, 0xC0, 0xB0, 0x44, 0x28};
static const float E4M3_VALUE[8] = {1.0f, 2.0f, 0.5f, -1.0f, -2.0f, -0.5f, 3.0f, 0.25f};

typedef int (*mem_alloc_fn)(unsigned long long *, size_t);
typedef int (*mem_free_fn)(unsigned long long);
typedef int (*htod_fn)(unsigned long long, const void *, size_t);
typedef int (*dtoh_fn)(void *, unsigned long long, size_t);
typedef int (*sync_fn)(void);

struct driver {
    mem_alloc_fn alloc;
    mem_free_fn free;
    htod_fn htod;
    dtoh_fn dtoh;
    sync_fn sync;
};

static int load_driver(struct driver *d) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
    d->alloc = (mem_alloc_fn)dlsym(lib, "cuMemAlloc_v2");
    d->free = (mem_free_fn)dlsym(lib, "cuMemFree_v2");
    d->htod = (htod_fn)dlsym(lib, "cuMemcpyHtoD_v2");
    d->dtoh = (dtoh_fn)dlsym(lib, "cuMemcpyDtoH_v2");
    d->sync = (sync_fn)dlsym(lib, "cuCtxSynchronize");
    return d->alloc && d->free && d->htod && d->dtoh && d->sync;
}

static unsigned long long upload(struct driver *drv, const void *host, size_t bytes) {
    unsigned long long ptr = 0;
    if (drv->alloc(&ptr, bytes) != 0) return 0;
    drv->htod(ptr, host, bytes);
    return ptr;
}

static float bf16_value(unsigned short bits) {
    unsigned int u = (unsigned int)bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int run_on_device(kiln_handle h, kiln_problem *p) {
    struct driver drv;
    if (!load_driver(&drv)) {
        fprintf(stderr, "CUDA driver API not usable\n");
        return 1;
    }
    const int64_t m = p->m, n = p->n, k = p->k;
    unsigned char *a = malloc((size_t)(m * k)), *b = malloc((size_t)(n * k));
    float *bias = malloc((size_t)n * sizeof(float)), *ref = calloc((size_t)(m * n), sizeof(float));
    unsigned short *d = malloc((size_t)(m * n) * 2);
    float sa = 0.5f, sb = 0.25f;
    srand(7);
    int *ia = malloc((size_t)(m * k) * sizeof(int)), *ib = malloc((size_t)(n * k) * sizeof(int));
    for (int64_t i = 0; i < m * k; ++i) ia[i] = rand() % 8, a[i] = E4M3_CODE[ia[i]];
    for (int64_t i = 0; i < n * k; ++i) ib[i] = rand() % 8, b[i] = E4M3_CODE[ib[i]];
    for (int64_t j = 0; j < n; ++j) bias[j] = (float)(rand() % 17 - 8) * 0.125f;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t kk = 0; kk < k; ++kk) acc += (double)E4M3_VALUE[ia[i * k + kk]] * E4M3_VALUE[ib[j * k + kk]];
            ref[i * n + j] = (float)(acc * sa * sb + bias[j]);
        }
    memset(d, 0xff, (size_t)(m * n) * 2); /* poison: 0xffff is a bf16 NaN */
    kiln_args args = {0};
    args.a = (const void *)(uintptr_t)upload(&drv, a, (size_t)(m * k));
    args.b = (const void *)(uintptr_t)upload(&drv, b, (size_t)(n * k));
    args.d = (void *)(uintptr_t)upload(&drv, d, (size_t)(m * n) * 2);
    args.scale_a = (const float *)(uintptr_t)upload(&drv, &sa, sizeof sa);
    args.scale_b = (const float *)(uintptr_t)upload(&drv, &sb, sizeof sb);
    args.bias = (const void *)(uintptr_t)upload(&drv, bias, (size_t)n * sizeof(float));
    args.alpha = 1.0f;
    kiln_algo algo;
    int got = 0;
    CHECK(kiln_query(h, p, &args, &algo, 1, &got));
    unsigned long long ws = 0;
    if (algo.workspace_bytes) drv.alloc(&ws, (size_t)algo.workspace_bytes);
    CHECK(kiln_run(h, p, &algo, &args, (void *)(uintptr_t)ws, (size_t)algo.workspace_bytes, NULL));
    drv.sync();
    drv.dtoh(d, (unsigned long long)(uintptr_t)args.d, (size_t)(m * n) * 2);
    double err = 0, norm = 0;
    int64_t unwritten = 0;
    for (int64_t i = 0; i < m * n; ++i) {
        float v = bf16_value(d[i]);
        if (isnan(v)) ++unwritten;
        err += (v - ref[i]) * (double)(v - ref[i]);
        norm += (double)ref[i] * ref[i];
    }
    double rel = sqrt(err / (norm > 0 ? norm : 1));
    printf("ran on the device: relative L2 error %.3e, %lld elements unwritten -> %s\n", rel, (long long)unwritten,
           rel <= 1e-2 && unwritten == 0 ? "PASS" : "FAIL");
    free(a), free(b), free(bias), free(ref), free(d), free(ia), free(ib);
    return rel <= 1e-2 && unwritten == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    int64_t m = 1000, n = 1000, k = 512;
    if (argc == 4) m = atoll(argv[1]), n = atoll(argv[2]), k = atoll(argv[3]);
    kiln_handle h = NULL;
    CHECK(kiln_create(&h));
    const char *arch = NULL;
    CHECK(kiln_device_arch(h, &arch));
    int have_device = strcmp(arch, "none") != 0;
    if (!have_device) {
        printf("no GPU found: selecting for sm90 to show the choice\n");
        CHECK(kiln_set_arch(h, "sm90"));
    }
    kiln_problem p;
    CHECK(kiln_problem_init(&p, KILN_DTYPE_E4M3, KILN_DTYPE_E4M3, KILN_DTYPE_BF16, KILN_LAYOUT_TN, m, n, k));
    p.scale_a = KILN_SCALE_TENSOR;
    p.scale_b = KILN_SCALE_TENSOR;
    p.has_bias = 1;
    p.bias_type = KILN_DTYPE_F32;
    kiln_algo algos[3];
    int got = 0;
    CHECK(kiln_query(h, &p, NULL, algos, 3, &got));
    printf("fp8 e4m3 x e4m3 -> bf16, %lld x %lld x %lld: top %d candidates\n", (long long)m, (long long)n,
           (long long)k, got);
    for (int i = 0; i < got; ++i) {
        const char *name = NULL;
        CHECK(kiln_algo_name(h, &algos[i], &name));
        printf("  %d. %s (workspace %llu bytes)\n", i + 1, name, (unsigned long long)algos[i].workspace_bytes);
    }
    /* The whole explanation: its size first (a text that does not fit would end with a "[truncated ...]" line). */
    size_t why_bytes = 0;
    CHECK(kiln_explain_size(h, &p, NULL, &why_bytes));
    char *why = malloc(why_bytes);
    if (!why) return 1;
    CHECK(kiln_explain(h, &p, NULL, why, why_bytes));
    printf("%s\n", why);
    free(why);
    int rc = have_device ? run_on_device(h, &p) : 0;
    CHECK(kiln_destroy(h));
    return rc;
}
