/* HIP backend over libamdhip64's module API (hipModuleLoadData, hipModuleGetFunction, hipModuleLaunchKernel), opened
 * with dlopen at kiln_create like the CUDA backend: libkiln has no link dependency on ROCm, and without an AMD GPU (or
 * without libamdhip64) the backend reports NO_DEVICE and says why (kiln_hip_no_device_reason). The device's arch is its
 * gcnArchName up to the first ':' ("gfx942:sramecc+:xnack-" -> "gfx942"), which is the arch name of kiln's tables. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "backend_hip.h"

typedef struct hip_api {
    kiln_hip_error_t (*init)(unsigned flags);
    kiln_hip_error_t (*get_device_count)(int *count);
    kiln_hip_error_t (*get_device)(int *device);
    kiln_hip_error_t (*set_device)(int device);
    kiln_hip_error_t (*device_get_attribute)(int *value, int attribute, int device);
    kiln_hip_error_t (*get_device_properties)(void *props, int device);
    kiln_hip_error_t (*module_load_data)(kiln_hip_module_t *module, const void *image);
    kiln_hip_error_t (*module_unload)(kiln_hip_module_t module);
    kiln_hip_error_t (*module_get_function)(kiln_hip_function_t *fn, kiln_hip_module_t module, const char *name);
    kiln_hip_error_t (*module_launch_kernel)(kiln_hip_function_t fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                       unsigned by, unsigned bz, unsigned shared_bytes, kiln_hip_stream_t stream,
                                       void **params, void **extra);
    const char *(*get_error_string)(kiln_hip_error_t rc);
    kiln_hip_error_t (*memset_2d_async)(void *dst, size_t pitch, int value, size_t width, size_t height,
                                        kiln_hip_stream_t stream);
} hip_api;

static const struct {
    const char *symbol;
    size_t offset;
} SYMBOLS[] = {
    {"hipInit", offsetof(hip_api, init)},
    {"hipGetDeviceCount", offsetof(hip_api, get_device_count)},
    {"hipGetDevice", offsetof(hip_api, get_device)},
    {"hipSetDevice", offsetof(hip_api, set_device)},
    {"hipDeviceGetAttribute", offsetof(hip_api, device_get_attribute)},
    {"hipGetDeviceProperties", offsetof(hip_api, get_device_properties)},
    {"hipModuleLoadData", offsetof(hip_api, module_load_data)},
    {"hipModuleUnload", offsetof(hip_api, module_unload)},
    {"hipModuleGetFunction", offsetof(hip_api, module_get_function)},
    {"hipModuleLaunchKernel", offsetof(hip_api, module_launch_kernel)},
    {"hipGetErrorString", offsetof(hip_api, get_error_string)},
    {"hipMemset2DAsync", offsetof(hip_api, memset_2d_async)},
};

/* The unversioned name comes with the -dev package; the runtime package has the versioned one. */
static const char *const LIBRARIES[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};

typedef struct hip_device {
    void *lib;
    hip_api api;
    int device;
    pthread_mutex_t error_lock;
    char error[256];
} hip_device;

/* Why the last open on this thread found no device. */
static _Thread_local char no_device_reason[256];

const char *kiln_hip_no_device_reason(void) { return no_device_reason; }

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static kiln_status no_device(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(no_device_reason, sizeof no_device_reason, fmt, ap);
    va_end(ap);
    return KILN_STATUS_NO_DEVICE;
}

static int resolve(hip_device *d, const char **missing)
{
    for (size_t i = 0; i < sizeof SYMBOLS / sizeof SYMBOLS[0]; i++) {
        void *sym = dlsym(d->lib, SYMBOLS[i].symbol);
        if (!sym) {
            *missing = SYMBOLS[i].symbol;
            return 0;
        }
        memcpy((char *)&d->api + SYMBOLS[i].offset, &sym, sizeof sym); /* POSIX: data -> function pointer */
    }
    return 1;
}

static const char *error_text(hip_device *d, kiln_hip_error_t rc)
{
    const char *text = d->api.get_error_string ? d->api.get_error_string(rc) : NULL;
    return text ? text : "unrecognized error";
}

static kiln_status fail(hip_device *d, const char *what, kiln_hip_error_t rc)
{
    pthread_mutex_lock(&d->error_lock);
    snprintf(d->error, sizeof d->error, "%s: %s (hipError_t %d)", what, error_text(d, rc), rc);
    pthread_mutex_unlock(&d->error_lock);
    return KILN_STATUS_DRIVER_ERROR;
}

static const char *hip_last_error(void *dev)
{
    static _Thread_local char copy[256];
    hip_device *d = dev;
    pthread_mutex_lock(&d->error_lock);
    memcpy(copy, d->error, sizeof copy);
    pthread_mutex_unlock(&d->error_lock);
    return copy;
}

/* Makes the handle's device current for the calls that follow; hip_leave restores the caller's. */
static kiln_status hip_enter(hip_device *d, int *previous)
{
    kiln_hip_error_t rc = d->api.get_device(previous);
    if (rc != KILN_HIP_SUCCESS)
        return fail(d, "hipGetDevice", rc);
    if (*previous != d->device && (rc = d->api.set_device(d->device)) != KILN_HIP_SUCCESS)
        return fail(d, "hipSetDevice", rc);
    return KILN_STATUS_SUCCESS;
}

static void hip_leave(hip_device *d, int previous)
{
    if (previous != d->device)
        d->api.set_device(previous);
}

/* libamdhip64 is opened once per process and never closed: its runtime keeps state from hipInit (allocated even when
 * hipInit fails) that it frees only at process exit, so a dlclose would drop the library's only reference to that
 * memory (a leak LeakSanitizer reports) and a later dlopen would initialize it again. */
static pthread_once_t library_once = PTHREAD_ONCE_INIT;
static void *library;

static void open_library(void)
{
    for (size_t i = 0; i < sizeof LIBRARIES / sizeof LIBRARIES[0] && !library; i++)
        library = dlopen(LIBRARIES[i], RTLD_NOW | RTLD_LOCAL);
}

static void hip_close(void *dev)
{
    hip_device *d = dev;
    if (!d)
        return;
    pthread_mutex_destroy(&d->error_lock);
    free(d);
}

static kiln_status query_device(hip_device *d, char arch[KILN_ARCH_LEN], kiln_device_limits *limits)
{
    static const int attrs[4] = {KILN_HIP_ATTR_MULTIPROCESSOR_COUNT, KILN_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK,
                                 KILN_HIP_ATTR_MAX_GRID_DIM_X, KILN_HIP_ATTR_MAX_GRID_DIM_Z};
    int v[4];
    for (int i = 0; i < 4; i++) {
        kiln_hip_error_t rc = d->api.device_get_attribute(&v[i], attrs[i], d->device);
        if (rc != KILN_HIP_SUCCESS)
            return fail(d, "hipDeviceGetAttribute", rc);
    }
    limits->sm_count = v[0];
    limits->max_lds_bytes = v[1];
    limits->max_grid_x = v[2];
    limits->max_grid_z = v[3];

    unsigned char *props = calloc(1, KILN_HIP_PROPS_BUFFER);
    if (!props)
        return KILN_STATUS_INTERNAL_ERROR;
    kiln_hip_error_t rc = d->api.get_device_properties(props, d->device);
    if (rc != KILN_HIP_SUCCESS) {
        free(props);
        return fail(d, "hipGetDeviceProperties", rc);
    }
    const char *name = (const char *)props + KILN_HIP_PROPS_GCN_ARCH_NAME;
    const char *end = memchr(name, '\0', KILN_HIP_PROPS_GCN_ARCH_NAME_LEN);
    size_t len = end ? (size_t)(end - name) : KILN_HIP_PROPS_GCN_ARCH_NAME_LEN;
    size_t colon = strcspn(name, ":");
    if (colon < len)
        len = colon;
    kiln_status st = KILN_STATUS_SUCCESS;
    if (len < 4 || len >= KILN_ARCH_LEN || strncmp(name, "gfx", 3) != 0) {
        pthread_mutex_lock(&d->error_lock);
        snprintf(d->error, sizeof d->error, "hipGetDeviceProperties: gcnArchName '%.*s' is not a gfx target",
                 (int)(len < 64 ? len : 64), name);
        pthread_mutex_unlock(&d->error_lock);
        st = KILN_STATUS_DRIVER_ERROR;
    } else {
        memcpy(arch, name, len);
        arch[len] = '\0';
    }
    free(props);
    return st;
}

static kiln_status hip_open(void **out, char arch[KILN_ARCH_LEN], kiln_device_limits *limits)
{
    *out = NULL;
    no_device_reason[0] = '\0';
    hip_device *d = calloc(1, sizeof *d);
    if (!d)
        return KILN_STATUS_INTERNAL_ERROR;
    pthread_once(&library_once, open_library);
    d->lib = library;
    if (!d->lib) {
        free(d);
        return no_device("libamdhip64.so not found: no HIP runtime (ROCm, or Debian's libamdhip64)");
    }
    const char *missing = NULL;
    if (!resolve(d, &missing)) {
        free(d);
        return no_device("libamdhip64 has no %s", missing);
    }
    pthread_mutex_init(&d->error_lock, NULL);
    int count = 0;
    kiln_hip_error_t rc = d->api.init(0);
    kiln_status st = KILN_STATUS_SUCCESS;
    /* hipInit fails when no AMD GPU is visible (no /dev/kfd, no supported device): no device. */
    if (rc != KILN_HIP_SUCCESS)
        st = no_device("hipInit: %s (hipError_t %d): no AMD GPU visible", error_text(d, rc), rc);
    else if ((rc = d->api.get_device_count(&count)) != KILN_HIP_SUCCESS || count < 1)
        st = no_device("hipGetDeviceCount: %s (hipError_t %d): no AMD GPU visible", error_text(d, rc), rc);
    else if ((rc = d->api.get_device(&d->device)) != KILN_HIP_SUCCESS)
        st = fail(d, "hipGetDevice", rc);
    if (st == KILN_STATUS_SUCCESS)
        st = query_device(d, arch, limits);
    if (st != KILN_STATUS_SUCCESS) {
        if (st == KILN_STATUS_DRIVER_ERROR)
            snprintf(no_device_reason, sizeof no_device_reason, "%s", d->error);
        hip_close(d);
        return st;
    }
    *out = d;
    return KILN_STATUS_SUCCESS;
}

static kiln_status hip_load_module(void *dev, const void *image, size_t size, void **module)
{
    hip_device *d = dev;
    kiln_hip_module_t mod = NULL;
    int previous;
    (void)size; /* the code object's ELF header gives its size */
    kiln_status st = hip_enter(d, &previous);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    kiln_hip_error_t rc = d->api.module_load_data(&mod, image);
    hip_leave(d, previous);
    if (rc != KILN_HIP_SUCCESS)
        return fail(d, "hipModuleLoadData", rc);
    *module = mod;
    return KILN_STATUS_SUCCESS;
}

static void hip_unload_module(void *dev, void *module)
{
    hip_device *d = dev;
    int previous;
    if (hip_enter(d, &previous) != KILN_STATUS_SUCCESS)
        return;
    d->api.module_unload((kiln_hip_module_t)module);
    hip_leave(d, previous);
}

/* AMD kernels take up to the device's LDS per workgroup as dynamic LDS without an opt-in attribute; selection has
 * already checked lds_bytes against that limit. */
static kiln_status hip_get_kernel(void *dev, void *module, const char *symbol, int lds_bytes, void **kernel)
{
    hip_device *d = dev;
    kiln_hip_function_t fn = NULL;
    int previous;
    (void)lds_bytes;
    kiln_status st = hip_enter(d, &previous);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    kiln_hip_error_t rc = d->api.module_get_function(&fn, (kiln_hip_module_t)module, symbol);
    hip_leave(d, previous);
    if (rc != KILN_HIP_SUCCESS)
        return fail(d, "hipModuleGetFunction", rc);
    *kernel = fn;
    return KILN_STATUS_SUCCESS;
}

/* The kernel's one by-value argument goes as the kernarg buffer (HIP_LAUNCH_PARAM_BUFFER_POINTER), which every HIP
 * version takes; the code object's kernarg segment is exactly the argument's size (sizeof(kiln_gemm_params)). */
static kiln_status hip_launch(void *dev, void *kernel, const uint32_t grid[3], uint32_t block, uint32_t lds_bytes,
                              const void *arg, size_t arg_bytes, void *stream)
{
    hip_device *d = dev;
    _Alignas(64) unsigned char copy[KILN_MAX_ARG_BYTES];
    if (arg_bytes == 0 || arg_bytes > sizeof copy)
        return KILN_STATUS_INTERNAL_ERROR;
    memcpy(copy, arg, arg_bytes);
    size_t size = arg_bytes;
    void *extra[5] = {KILN_HIP_LAUNCH_PARAM_BUFFER_POINTER, copy, KILN_HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                      KILN_HIP_LAUNCH_PARAM_END};
    int previous;
    kiln_status st = hip_enter(d, &previous);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    kiln_hip_error_t rc = d->api.module_launch_kernel((kiln_hip_function_t)kernel, grid[0], grid[1], grid[2], block,
                                                      1, 1, lds_bytes, (kiln_hip_stream_t)stream, NULL, extra);
    hip_leave(d, previous);
    return rc == KILN_HIP_SUCCESS ? KILN_STATUS_SUCCESS : fail(d, "hipModuleLaunchKernel", rc);
}

static kiln_status hip_zero_2d(void *dev, void *dst, size_t pitch_bytes, size_t width_bytes, size_t height,
                               void *stream)
{
    hip_device *d = dev;
    int previous;
    kiln_status st = hip_enter(d, &previous);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    kiln_hip_error_t rc = d->api.memset_2d_async(dst, pitch_bytes, 0, width_bytes, height, (kiln_hip_stream_t)stream);
    hip_leave(d, previous);
    return rc == KILN_HIP_SUCCESS ? KILN_STATUS_SUCCESS : fail(d, "hipMemset2DAsync", rc);
}

const kiln_backend kiln_backend_hip = {
    .name = "hip",
    .open = hip_open,
    .close = hip_close,
    .load_module = hip_load_module,
    .unload_module = hip_unload_module,
    .get_kernel = hip_get_kernel,
    .launch = hip_launch,
    .zero_2d = hip_zero_2d,
    .last_error = hip_last_error,
    .tma_encode = NULL, /* no TMA-fed family on AMD */
};
