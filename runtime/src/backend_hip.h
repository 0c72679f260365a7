/* The libamdhip64 ABI the HIP backend uses, written out so that kiln builds without HIP headers (as backend_cuda.c
 * does for CUDA). Values are those of hip_runtime_api.h, stable across HIP 5.x and 6.x; tests/c/test_hip_abi.c checks
 * them against Debian's header and library when those are installed. */
#ifndef KILN_BACKEND_HIP_H
#define KILN_BACKEND_HIP_H

typedef int kiln_hip_error_t;
typedef struct ihipModule_t *kiln_hip_module_t;
typedef struct ihipModuleSymbol_t *kiln_hip_function_t;
typedef struct ihipStream_t *kiln_hip_stream_t;

enum { KILN_HIP_SUCCESS = 0 };

/* hipDeviceAttribute_t */
enum {
    KILN_HIP_ATTR_MAX_GRID_DIM_X = 29,
    KILN_HIP_ATTR_MAX_GRID_DIM_Z = 31,
    KILN_HIP_ATTR_MULTIPROCESSOR_COUNT = 63,
    KILN_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 74
};

/* hipModuleLaunchKernel's `extra`: the kernel arguments as one buffer. */
#define KILN_HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define KILN_HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define KILN_HIP_LAUNCH_PARAM_END ((void *)0x03)

/* hipGetDeviceProperties (the exported symbol keeps the HIP 5 layout, hipDeviceProp_tR0000, in HIP 6 too; HIP 6
 * headers map the name to hipGetDevicePropertiesR0600): where gcnArchName ("gfx942:sramecc+:xnack-") sits, and the
 * struct's size. The backend passes a larger zeroed buffer. */
#define KILN_HIP_PROPS_GCN_ARCH_NAME 396
#define KILN_HIP_PROPS_GCN_ARCH_NAME_LEN 256
#define KILN_HIP_PROPS_SIZE 792
#define KILN_HIP_PROPS_BUFFER 4096

#endif /* KILN_BACKEND_HIP_H */
