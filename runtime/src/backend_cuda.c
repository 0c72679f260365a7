/* CUDA backend over the driver API. libcuda.so.1 is opened with dlopen at kiln_create, so libkiln has no link
 * dependency on the driver: it loads, validates and selects on machines without one (runs return NO_DEVICE). */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* The few driver API types and values used here, as cuda.h defines them (it is not included, so that kiln builds
 * without the toolkit). These values are part of the driver's stable ABI. */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum { CUDA_SUCCESS = 0 };
enum {
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
};
enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

/* Tensor maps (CUDA 12.0+): CUtensorMap is kiln_tma_desc; the enums are CUtensorMapDataType, CUtensorMapInterleave,
 * CUtensorMapSwizzle, CUtensorMapL2promotion and CUtensorMapFloatOOBfill. */
enum { CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0, CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1, CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2 };
enum { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum { CU_TENSOR_MAP_SWIZZLE_NONE = 0, CU_TENSOR_MAP_SWIZZLE_64B = 2, CU_TENSOR_MAP_SWIZZLE_128B = 3 };
enum { CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3 };
enum { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };
typedef CUresult (*cu_tensor_map_encode_tiled_fn)(kiln_tma_desc *map, int data_type, uint32_t rank, void *address,
                                                  const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                                                  const uint32_t *element_strides, int interleave, int swizzle,
                                                  int l2_promotion, int oob_fill);

/* Extended launches (CUDA 12.0+): CUlaunchConfig with one CUlaunchAttribute, for programmatic dependent launch. */
enum { CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
typedef struct cu_launch_attribute {
    int id;
    char pad[8 - sizeof(int)];
    union {
        char pad[64];
        int programmatic_stream_serialization_allowed;
    } value;
} cu_launch_attribute;
typedef struct cu_launch_config {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, lds_bytes;
    CUstream stream;
    cu_launch_attribute *attrs;
    unsigned num_attrs;
} cu_launch_config;
typedef CUresult (*cu_launch_kernel_ex_fn)(const cu_launch_config *config, CUfunction fn, void **params, void **extra);
_Static_assert(sizeof(cu_launch_attribute) == 72 && offsetof(cu_launch_config, stream) == 32 &&
                   offsetof(cu_launch_config, attrs) == 40 && offsetof(cu_launch_config, num_attrs) == 48,
               "the driver's CUlaunchAttribute / CUlaunchConfig layout");

/* Dynamic shared memory a kernel may use without opting in. */
#define CUDA_DEFAULT_DYNAMIC_LDS (48 * 1024)

typedef struct cuda_api {
    CUresult (*init)(unsigned flags);
    CUresult (*device_get)(CUdevice *dev, int ordinal);
    CUresult (*device_get_attribute)(int *value, int attribute, CUdevice dev);
    CUresult (*ctx_get_current)(CUcontext *ctx);
    CUresult (*ctx_set_current)(CUcontext ctx);
    CUresult (*ctx_get_device)(CUdevice *dev);
    CUresult (*ctx_push_current)(CUcontext ctx);
    CUresult (*ctx_pop_current)(CUcontext *ctx);
    CUresult (*primary_ctx_retain)(CUcontext *ctx, CUdevice dev);
    CUresult (*primary_ctx_release)(CUdevice dev);
    CUresult (*module_load_data)(CUmodule *module, const void *image);
    CUresult (*module_unload)(CUmodule module);
    CUresult (*module_get_function)(CUfunction *fn, CUmodule module, const char *name);
    CUresult (*func_set_attribute)(CUfunction fn, int attribute, int value);
    CUresult (*launch_kernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared_bytes, CUstream stream, void **params, void **extra);
    CUresult (*get_error_string)(CUresult rc, const char **text);
    CUresult (*memset_d2d8_async)(CUdeviceptr dst, size_t pitch, unsigned char value, size_t width, size_t height,
                                  CUstream stream);
    CUresult (*memset_d2d16_async)(CUdeviceptr dst, size_t pitch, unsigned short value, size_t width, size_t height,
                                   CUstream stream);
    CUresult (*memset_d2d32_async)(CUdeviceptr dst, size_t pitch, unsigned value, size_t width, size_t height,
                                   CUstream stream);
    cu_tensor_map_encode_tiled_fn tensor_map_encode_tiled; /* optional (not in SYMBOLS): NULL before CUDA 12.0 */
    cu_launch_kernel_ex_fn launch_kernel_ex;                /* optional (not in SYMBOLS): NULL before CUDA 12.0 */
} cuda_api;

/* Exported names: cuda.h maps some API names to versioned symbols (cuCtxPushCurrent -> cuCtxPushCurrent_v2). */
static const struct {
    const char *symbol;
    size_t offset;
} SYMBOLS[] = {
    {"cuInit", offsetof(cuda_api, init)},
    {"cuDeviceGet", offsetof(cuda_api, device_get)},
    {"cuDeviceGetAttribute", offsetof(cuda_api, device_get_attribute)},
    {"cuCtxGetCurrent", offsetof(cuda_api, ctx_get_current)},
    {"cuCtxSetCurrent", offsetof(cuda_api, ctx_set_current)},
    {"cuCtxGetDevice", offsetof(cuda_api, ctx_get_device)},
    {"cuCtxPushCurrent_v2", offsetof(cuda_api, ctx_push_current)},
    {"cuCtxPopCurrent_v2", offsetof(cuda_api, ctx_pop_current)},
    {"cuDevicePrimaryCtxRetain", offsetof(cuda_api, primary_ctx_retain)},
    {"cuDevicePrimaryCtxRelease_v2", offsetof(cuda_api, primary_ctx_release)},
    {"cuModuleLoadData", offsetof(cuda_api, module_load_data)},
    {"cuModuleUnload", offsetof(cuda_api, module_unload)},
    {"cuModuleGetFunction", offsetof(cuda_api, module_get_function)},
    {"cuFuncSetAttribute", offsetof(cuda_api, func_set_attribute)},
    {"cuLaunchKernel", offsetof(cuda_api, launch_kernel)},
    {"cuGetErrorString", offsetof(cuda_api, get_error_string)},
    {"cuMemsetD2D8Async", offsetof(cuda_api, memset_d2d8_async)},
    {"cuMemsetD2D16Async", offsetof(cuda_api, memset_d2d16_async)},
    {"cuMemsetD2D32Async", offsetof(cuda_api, memset_d2d32_async)},
};

/* Compute capability -> the arch whose code runs there; others are "sm<major><minor>". */
static const struct {
    int major, minor;
    const char *arch;
} ARCHS[] = {
    {9, 0, "sm90"}, {8, 9, "sm89"}, {8, 0, "sm80"}, {8, 6, "sm80"}, {8, 7, "sm80"},
};

typedef struct cuda_device {
    void *lib;
    cuda_api api;
    CUdevice device;
    CUcontext ctx;
    int retained; /* ctx is the primary context, retained by this handle */
    pthread_mutex_t error_lock;
    char error[256];
} cuda_device;

static int resolve(cuda_device *d)
{
    for (size_t i = 0; i < sizeof SYMBOLS / sizeof SYMBOLS[0]; i++) {
        void *sym = dlsym(d->lib, SYMBOLS[i].symbol);
        if (!sym)
            return 0;
        /* POSIX: a function's address from dlsym converts to its pointer type; memcpy avoids the ISO C cast. */
        memcpy((char *)&d->api + SYMBOLS[i].offset, &sym, sizeof sym);
    }
    /* Optional: a driver without it still runs every family but the TMA-fed one. */
    void *sym = dlsym(d->lib, "cuTensorMapEncodeTiled");
    if (sym)
        memcpy(&d->api.tensor_map_encode_tiled, &sym, sizeof sym);
    /* Optional: without it overlapped launches are plain ones. */
    sym = dlsym(d->lib, "cuLaunchKernelEx");
    if (sym)
        memcpy(&d->api.launch_kernel_ex, &sym, sizeof sym);
    return 1;
}

static kiln_status fail(cuda_device *d, const char *what, CUresult rc)
{
    const char *text = NULL;
    if (d->api.get_error_string(rc, &text) != CUDA_SUCCESS || !text)
        text = "unrecognized error";
    pthread_mutex_lock(&d->error_lock);
    snprintf(d->error, sizeof d->error, "%s: %s (CUresult %d)", what, text, rc);
    pthread_mutex_unlock(&d->error_lock);
    return KILN_STATUS_DRIVER_ERROR;
}

static const char *cuda_last_error(void *dev)
{
    static _Thread_local char copy[256];
    cuda_device *d = dev;
    pthread_mutex_lock(&d->error_lock);
    memcpy(copy, d->error, sizeof copy);
    pthread_mutex_unlock(&d->error_lock);
    return copy;
}

/* Makes the handle's context current for the calls that follow; cuda_leave restores the caller's. */
static kiln_status cuda_enter(cuda_device *d, int *pushed)
{
    CUcontext cur = NULL;
    *pushed = 0;
    CUresult rc = d->api.ctx_get_current(&cur);
    if (rc != CUDA_SUCCESS)
        return fail(d, "cuCtxGetCurrent", rc);
    if (cur == d->ctx)
        return KILN_STATUS_SUCCESS;
    rc = d->api.ctx_push_current(d->ctx);
    if (rc != CUDA_SUCCESS)
        return fail(d, "cuCtxPushCurrent", rc);
    *pushed = 1;
    return KILN_STATUS_SUCCESS;
}

static void cuda_leave(cuda_device *d, int pushed)
{
    CUcontext popped;
    if (pushed)
        d->api.ctx_pop_current(&popped);
}

static void cuda_close(void *dev)
{
    cuda_device *d = dev;
    if (!d)
        return;
    if (d->retained)
        d->api.primary_ctx_release(d->device);
    pthread_mutex_destroy(&d->error_lock);
    dlclose(d->lib);
    free(d);
}

/* Binds to the current context, or else to device 0's primary context (made current, as the runtime API would). */
static kiln_status bind_context(cuda_device *d)
{
    CUcontext cur = NULL;
    CUresult rc = d->api.ctx_get_current(&cur);
    if (rc != CUDA_SUCCESS)
        return fail(d, "cuCtxGetCurrent", rc);
    if (cur) {
        d->ctx = cur;
        rc = d->api.ctx_get_device(&d->device);
        return rc == CUDA_SUCCESS ? KILN_STATUS_SUCCESS : fail(d, "cuCtxGetDevice", rc);
    }
    if (d->api.device_get(&d->device, 0) != CUDA_SUCCESS)
        return KILN_STATUS_NO_DEVICE;
    rc = d->api.primary_ctx_retain(&d->ctx, d->device);
    if (rc != CUDA_SUCCESS)
        return fail(d, "cuDevicePrimaryCtxRetain", rc);
    d->retained = 1;
    rc = d->api.ctx_set_current(d->ctx);
    return rc == CUDA_SUCCESS ? KILN_STATUS_SUCCESS : fail(d, "cuCtxSetCurrent", rc);
}

static kiln_status query_device(cuda_device *d, char arch[KILN_ARCH_LEN], kiln_device_limits *limits)
{
    static const int attrs[6] = {
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,     CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,           CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
    };
    int v[6];
    for (int i = 0; i < 6; i++) {
        CUresult rc = d->api.device_get_attribute(&v[i], attrs[i], d->device);
        if (rc != CUDA_SUCCESS)
            return fail(d, "cuDeviceGetAttribute", rc);
    }
    snprintf(arch, KILN_ARCH_LEN, "sm%d%d", v[0], v[1]);
    for (size_t i = 0; i < sizeof ARCHS / sizeof ARCHS[0]; i++)
        if (ARCHS[i].major == v[0] && ARCHS[i].minor == v[1])
            snprintf(arch, KILN_ARCH_LEN, "%s", ARCHS[i].arch);
    limits->sm_count = v[2];
    limits->max_lds_bytes = v[3];
    limits->max_grid_x = v[4];
    limits->max_grid_z = v[5];
    return KILN_STATUS_SUCCESS;
}

static kiln_status cuda_open(void **out, char arch[KILN_ARCH_LEN], kiln_device_limits *limits)
{
    *out = NULL;
    cuda_device *d = calloc(1, sizeof *d);
    if (!d)
        return KILN_STATUS_INTERNAL_ERROR;
    d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d->lib || !resolve(d)) {
        if (d->lib)
            dlclose(d->lib);
        free(d);
        return KILN_STATUS_NO_DEVICE;
    }
    pthread_mutex_init(&d->error_lock, NULL);
    /* cuInit fails when no device is visible or the driver cannot run here: either way, no device. */
    kiln_status st = d->api.init(0) == CUDA_SUCCESS ? bind_context(d) : KILN_STATUS_NO_DEVICE;
    if (st == KILN_STATUS_SUCCESS)
        st = query_device(d, arch, limits);
    if (st != KILN_STATUS_SUCCESS) {
        cuda_close(d);
        return st;
    }
    *out = d;
    return KILN_STATUS_SUCCESS;
}

static kiln_status cuda_load_module(void *dev, const void *image, size_t size, void **module)
{
    cuda_device *d = dev;
    CUmodule mod = NULL;
    int pushed;
    (void)size; /* cuModuleLoadData reads the size from the cubin / fatbin header */
    kiln_status st = cuda_enter(d, &pushed);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    CUresult rc = d->api.module_load_data(&mod, image);
    cuda_leave(d, pushed);
    if (rc != CUDA_SUCCESS)
        return fail(d, "cuModuleLoadData", rc);
    *module = mod;
    return KILN_STATUS_SUCCESS;
}

static void cuda_unload_module(void *dev, void *module)
{
    cuda_device *d = dev;
    int pushed;
    if (cuda_enter(d, &pushed) != KILN_STATUS_SUCCESS)
        return;
    d->api.module_unload((CUmodule)module);
    cuda_leave(d, pushed);
}

static kiln_status cuda_get_kernel(void *dev, void *module, const char *symbol, int lds_bytes, void **kernel)
{
    cuda_device *d = dev;
    CUfunction fn = NULL;
    int pushed;
    kiln_status st = cuda_enter(d, &pushed);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    CUresult rc = d->api.module_get_function(&fn, (CUmodule)module, symbol);
    if (rc != CUDA_SUCCESS)
        st = fail(d, "cuModuleGetFunction", rc);
    else if (lds_bytes > CUDA_DEFAULT_DYNAMIC_LDS &&
             (rc = d->api.func_set_attribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, lds_bytes)) !=
                 CUDA_SUCCESS)
        st = fail(d, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", rc);
    cuda_leave(d, pushed);
    if (st == KILN_STATUS_SUCCESS)
        *kernel = fn;
    return st;
}

static kiln_status launch(void *dev, void *kernel, const uint32_t grid[3], uint32_t block, uint32_t lds_bytes,
                          const void *arg, size_t arg_bytes, void *stream, int overlapped)
{
    cuda_device *d = dev;
    /* cuLaunchKernel wants non-const argument pointers; the copy keeps the 64-byte alignment of kiln_tma_params. */
    _Alignas(64) unsigned char copy[KILN_MAX_ARG_BYTES];
    if (arg_bytes == 0 || arg_bytes > sizeof copy)
        return KILN_STATUS_INTERNAL_ERROR;
    memcpy(copy, arg, arg_bytes);
    void *args[1] = {copy}; /* the kernel's one argument; the driver copies it (its size from the kernel) at launch */
    int pushed;
    kiln_status st = cuda_enter(d, &pushed);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    CUresult rc;
    overlapped = overlapped && d->api.launch_kernel_ex;  /* without the extended launch: a plain one */
    if (overlapped) {
        cu_launch_attribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmatic_stream_serialization_allowed = 1;
        const cu_launch_config config = {grid[0], grid[1], grid[2], block, 1, 1, lds_bytes, (CUstream)stream, &attr, 1};
        rc = d->api.launch_kernel_ex(&config, (CUfunction)kernel, args, NULL);
    } else {
        rc = d->api.launch_kernel((CUfunction)kernel, grid[0], grid[1], grid[2], block, 1, 1, lds_bytes,
                                  (CUstream)stream, args, NULL);
    }
    cuda_leave(d, pushed);
    return rc == CUDA_SUCCESS ? KILN_STATUS_SUCCESS : fail(d, overlapped ? "cuLaunchKernelEx" : "cuLaunchKernel", rc);
}

static kiln_status cuda_launch(void *dev, void *kernel, const uint32_t grid[3], uint32_t block, uint32_t lds_bytes,
                               const void *arg, size_t arg_bytes, void *stream)
{
    return launch(dev, kernel, grid, block, lds_bytes, arg, arg_bytes, stream, 0);
}

static kiln_status cuda_launch_overlapped(void *dev, void *kernel, const uint32_t grid[3], uint32_t block,
                                          uint32_t lds_bytes, const void *arg, size_t arg_bytes, void *stream)
{
    return launch(dev, kernel, grid, block, lds_bytes, arg, arg_bytes, stream, 1);
}

static kiln_status cuda_tma_encode(void *dev, kiln_tma_desc *out, int rank, int elem_bytes, int swizzle_bytes,
                                   const void *base, const uint64_t *dims, const uint64_t *strides_bytes,
                                   const uint32_t *box)
{
    cuda_device *d = dev;
    static const uint32_t element_strides[4] = {1, 1, 1, 1};
    if (!d->api.tensor_map_encode_tiled) {
        pthread_mutex_lock(&d->error_lock);
        snprintf(d->error, sizeof d->error, "the driver has no cuTensorMapEncodeTiled");
        pthread_mutex_unlock(&d->error_lock);
        return KILN_STATUS_DRIVER_ERROR;
    }
    if ((elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4) ||
        (swizzle_bytes != 0 && swizzle_bytes != 64 && swizzle_bytes != 128) || (rank != 3 && rank != 4))
        return KILN_STATUS_INTERNAL_ERROR;
    int type = elem_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
               : elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                 : CU_TENSOR_MAP_DATA_TYPE_UINT32;
    int pushed;
    kiln_status st = cuda_enter(d, &pushed);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    void *address = (void *)(uintptr_t)base; /* the driver's prototype takes a non-const pointer; it only stores it */
    CUresult rc = d->api.tensor_map_encode_tiled(
        out, type, (uint32_t)rank, address, dims, strides_bytes, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        swizzle_bytes == 0    ? CU_TENSOR_MAP_SWIZZLE_NONE
        : swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                              : CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    cuda_leave(d, pushed);
    return rc == CUDA_SUCCESS ? KILN_STATUS_SUCCESS : fail(d, "cuTensorMapEncodeTiled", rc);
}

/* Zeros in the widest memset unit that divides the address, the pitch and the width (the driver counts the width
 * in units). */
static kiln_status cuda_zero_2d(void *dev, void *dst, size_t pitch_bytes, size_t width_bytes, size_t height,
                                void *stream)
{
    cuda_device *d = dev;
    CUdeviceptr ptr = (CUdeviceptr)(uintptr_t)dst;
    int pushed;
    kiln_status st = cuda_enter(d, &pushed);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    CUresult rc;
    if ((ptr | pitch_bytes | width_bytes) % 4 == 0)
        rc = d->api.memset_d2d32_async(ptr, pitch_bytes, 0u, width_bytes / 4, height, (CUstream)stream);
    else if ((ptr | pitch_bytes | width_bytes) % 2 == 0)
        rc = d->api.memset_d2d16_async(ptr, pitch_bytes, 0, width_bytes / 2, height, (CUstream)stream);
    else
        rc = d->api.memset_d2d8_async(ptr, pitch_bytes, 0, width_bytes, height, (CUstream)stream);
    cuda_leave(d, pushed);
    return rc == CUDA_SUCCESS ? KILN_STATUS_SUCCESS : fail(d, "cuMemsetD2DAsync", rc);
}

const kiln_backend kiln_backend_cuda = {
    .name = "cuda",
    .open = cuda_open,
    .close = cuda_close,
    .load_module = cuda_load_module,
    .unload_module = cuda_unload_module,
    .get_kernel = cuda_get_kernel,
    .launch = cuda_launch,
    .launch_overlapped = cuda_launch_overlapped,
    .zero_2d = cuda_zero_2d,
    .last_error = cuda_last_error,
    .tma_encode = cuda_tma_encode,
};
