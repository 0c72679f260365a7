/* kiln_bench's CUDA driver API, opened with dlopen (bench_cuda.h). */
#include <dlfcn.h>
#include <string.h>

#include "bench_cuda.h"

struct driver cu;

/* dlsym into a function pointer without the object-to-function pointer cast ISO C does not define. */
static int load_symbol(void *lib, const char *name, void *fn_ptr, size_t size)
{
    void *sym = dlsym(lib, name);
    if (!sym)
        return 0;
    memcpy(fn_ptr, &sym, size);
    return 1;
}

#define LOAD(field, name) (load_symbol(lib, name, &cu.field, sizeof cu.field) || (missing = name, 0))

const char *load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return "libcuda.so.1 (dlopen failed: no NVIDIA driver?)";
    const char *missing = NULL;
    int ok = LOAD(init, "cuInit") && LOAD(device_get_count, "cuDeviceGetCount") &&
             LOAD(device_get, "cuDeviceGet") && LOAD(device_get_name, "cuDeviceGetName") &&
             LOAD(primary_ctx_retain, "cuDevicePrimaryCtxRetain") && LOAD(ctx_set_current, "cuCtxSetCurrent") &&
             LOAD(ctx_synchronize, "cuCtxSynchronize") && LOAD(mem_alloc, "cuMemAlloc_v2") &&
             LOAD(mem_free, "cuMemFree_v2") && LOAD(memcpy_htod, "cuMemcpyHtoD_v2") &&
             LOAD(memcpy_dtoh, "cuMemcpyDtoH_v2") && LOAD(memset_d8, "cuMemsetD8_v2") &&
             LOAD(event_create, "cuEventCreate") && LOAD(event_record, "cuEventRecord") &&
             LOAD(event_synchronize, "cuEventSynchronize") && LOAD(event_elapsed_time, "cuEventElapsedTime");
    if (!ok)
        return missing;
    if (!load_symbol(lib, "cuDevicePrimaryCtxRelease_v2", &cu.primary_ctx_release, sizeof cu.primary_ctx_release))
        load_symbol(lib, "cuDevicePrimaryCtxRelease", &cu.primary_ctx_release, sizeof cu.primary_ctx_release);
    if (!load_symbol(lib, "cuEventDestroy_v2", &cu.event_destroy, sizeof cu.event_destroy))
        load_symbol(lib, "cuEventDestroy", &cu.event_destroy, sizeof cu.event_destroy);
    load_symbol(lib, "cuGetErrorString", &cu.get_error_string, sizeof cu.get_error_string);
    load_symbol(lib, "cuMemsetD32Async", &cu.memset_d32_async, sizeof cu.memset_d32_async);
    return NULL;
}

const char *cu_error(CUresult rc)
{
    const char *s = NULL;
    if (cu.get_error_string && cu.get_error_string(rc, &s) == 0 && s)
        return s;
    return "CUDA error";
}

CUdeviceptr device_upload(const void *host, size_t bytes, CUresult *rc)
{
    CUdeviceptr ptr = 0;
    *rc = cu.mem_alloc(&ptr, bytes ? bytes : 1);
    if (*rc)
        return 0;
    if (host && (*rc = cu.memcpy_htod(ptr, host, bytes)) != 0) {
        cu.mem_free(ptr);
        return 0;
    }
    return ptr;
}
