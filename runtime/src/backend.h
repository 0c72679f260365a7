/* The seam between the API and a GPU driver. kiln_create probes the backends of BACKENDS (kiln.c) in order and binds
 * a handle to the first that finds a device. A backend knows nothing of kiln's tables: it loads images, resolves
 * symbols and launches; the per-handle kernel cache and its lock live in kiln.c.
 *
 * Written: CUDA (backend_cuda.c, libcuda loaded with dlopen) and HIP (backend_hip.c, libamdhip64 loaded with dlopen:
 * hipModuleLoadData, hipModuleGetFunction, hipModuleLaunchKernel, gfx arch from gcnArchName), probed in that order. */
#ifndef KILN_BACKEND_H
#define KILN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"
#include "kiln_abi.h"

typedef struct kiln_device_limits {
    int64_t max_lds_bytes; /* dynamic shared memory a workgroup may opt in to; 0 = unknown */
    int64_t max_grid_x;    /* 0 = unknown */
    int64_t max_grid_z;    /* 0 = unknown */
    int sm_count;          /* SMs / CUs; 0 = unknown */
} kiln_device_limits;

#define KILN_ARCH_LEN 32

typedef struct kiln_backend {
    const char *name;
    /* Binds to the current device. Writes its arch ("sm90", "gfx942", ...) and limits and an opaque device state.
     * Returns KILN_STATUS_NO_DEVICE when the driver library or a device is missing, KILN_STATUS_DRIVER_ERROR when
     * the driver fails after finding a device. */
    kiln_status (*open)(void **dev, char arch[KILN_ARCH_LEN], kiln_device_limits *limits);
    void (*close)(void *dev);
    /* Load a code object image (it stays owned by the caller and outlives the module). */
    kiln_status (*load_module)(void *dev, const void *image, size_t size, void **module);
    void (*unload_module)(void *dev, void *module);
    /* Resolve a kernel and allow it lds_bytes of dynamic shared memory. */
    kiln_status (*get_kernel)(void *dev, void *module, const char *symbol, int lds_bytes, void **kernel);
    /* Launch with grid (x, y, z), a 1-D block, dynamic shared memory and the kernel's one by-value argument: arg_bytes
     * bytes at arg (a kiln_gemm_params, or a kiln_tma_params for the wgmma family; at most KILN_MAX_ARG_BYTES, else
     * KILN_STATUS_INTERNAL_ERROR). */
    kiln_status (*launch)(void *dev, void *kernel, const uint32_t grid[3], uint32_t block, uint32_t lds_bytes,
                          const void *arg, size_t arg_bytes, void *stream);
    /* Optional (NULL: launch). The same launch, allowed to begin while the stream's previous kernel still runs
     * (programmatic dependent launch, sm_90): only for kernels that execute griddepcontrol.wait before their first
     * access to global memory (wgmma GEMM kernels whose table row has overlap 1, kiln_gemm_wgmma.h). A driver
     * without the extended launch makes it a plain one. */
    kiln_status (*launch_overlapped)(void *dev, void *kernel, const uint32_t grid[3], uint32_t block,
                                     uint32_t lds_bytes, const void *arg, size_t arg_bytes, void *stream);
    /* Fills a 2-D region with zero bytes, stream-ordered like a launch: `height` rows of `width_bytes` bytes,
     * `pitch_bytes` apart, from dst (kiln.h, "Empty problems": D = 0 when k = 0 without C and bias). */
    kiln_status (*zero_2d)(void *dev, void *dst, size_t pitch_bytes, size_t width_bytes, size_t height, void *stream);
    /* The driver's text for the last failure of this device state ("" when none). */
    const char *(*last_error)(void *dev);
    /* Optional (NULL: the backend runs no TMA-fed family). Encodes a tiled tensor map of rank 3 or 4 over elements of
     * elem_bytes (1, 2 or 4) at base: dims[rank] from the contiguous extent out (GEMM: {extent, rows, batch};
     * attention: {head_dim, heads, seqlen, batch}), the byte strides of dims 1..rank-1, a box of box[0] x ... elements,
     * a swizzle of swizzle_bytes (64 or 128), 256-byte L2 promotion, zeros out of bounds. */
    kiln_status (*tma_encode)(void *dev, kiln_tma_desc *out, int rank, int elem_bytes, int swizzle_bytes,
                              const void *base, const uint64_t *dims, const uint64_t *strides_bytes,
                              const uint32_t *box);
} kiln_backend;

/* The largest kernel argument a backend passes (kiln_tma_params is the largest). */
#define KILN_MAX_ARG_BYTES 1024
_Static_assert(sizeof(kiln_gemm_params) <= KILN_MAX_ARG_BYTES && sizeof(kiln_tma_params) <= KILN_MAX_ARG_BYTES,
               "kernel arguments fit the launch buffer");

extern const kiln_backend kiln_backend_cuda;
extern const kiln_backend kiln_backend_hip;

/* Why the HIP backend's last open on this thread found no device ("" after a successful open). */
const char *kiln_hip_no_device_reason(void);

/* kiln_create over one given backend instead of probing (tests pass a fake one); NULL: a handle without a device. */
kiln_status kiln_create_with_backend(kiln_handle *out, const kiln_backend *backend);

#endif /* KILN_BACKEND_H */
