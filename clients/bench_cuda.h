/* kiln_bench's CUDA driver API: the few entry points it needs, declared by hand (no cuda.h, no toolkit needed to
 * build) and opened from libcuda.so.1 with dlopen at run time, as the library does. */
#ifndef KILN_BENCH_CUDA_H
#define KILN_BENCH_CUDA_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUevent;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

struct driver {
    CUresult (*init)(unsigned int);
    CUresult (*device_get_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_get_name)(char *, int, CUdevice);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*primary_ctx_release)(CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_synchronize)(void);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
    CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*memset_d32_async)(CUdeviceptr, unsigned int, size_t, CUstream); /* optional */
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_destroy)(CUevent);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_synchronize)(CUevent);
    CUresult (*event_elapsed_time)(float *, CUevent, CUevent);
    CUresult (*get_error_string)(CUresult, const char **); /* optional */
};

/* The driver's entry points, filled by load_driver. */
extern struct driver cu;

/* Opens libcuda.so.1 and fills cu. NULL on success, else what is missing. */
const char *load_driver(void);
/* The driver's text for rc ("CUDA error" without cuGetErrorString). */
const char *cu_error(CUresult rc);
/* A device buffer of `bytes` (at least 1) holding a copy of host (when not NULL); 0 with *rc set on failure. */
CUdeviceptr device_upload(const void *host, size_t bytes, CUresult *rc);

#endif /* KILN_BENCH_CUDA_H */
