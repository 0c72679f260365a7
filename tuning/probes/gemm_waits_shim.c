/* LD_PRELOAD shim for KILN_PROBE_WAITS builds (tuning/probes/gemm_waits_run.sh): maps 1 MiB of host memory, registered
 * with the device, at the fixed virtual address the probe kernels write their CTA records to (16 words a CTA), and at exit prints the records
 * the process's last launch left there as "KWAIT ..." lines for gemm_waits_sum.py.
 *   gcc -shared -fPIC -O2 -o shim.so gemm_waits_shim.c -I$CUDA/include -lcuda */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PROBE_VA 0x7e0000000000ull
#define PROBE_BYTES (1ull << 20)

static CUcontext ctx;
static CUdeviceptr base;
static void *host;

static void die(const char *what, CUresult rc) {
    fprintf(stderr, "gemm_waits_shim: %s failed (%d)\n", what, (int)rc);
    exit(3);
}

__attribute__((constructor)) static void shim_init(void) {
    CUdevice dev;
    CUresult rc;
    if ((rc = cuInit(0)) != CUDA_SUCCESS) die("cuInit", rc);
    if ((rc = cuDeviceGet(&dev, 0)) != CUDA_SUCCESS) die("cuDeviceGet", rc);
    if ((rc = cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS) die("cuDevicePrimaryCtxRetain", rc);
    cuCtxSetCurrent(ctx);
    /* host memory at the fixed address, registered: with unified addressing its device address is the same */
    host = mmap((void *)PROBE_VA, PROBE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (host != (void *)PROBE_VA) {
        fprintf(stderr, "gemm_waits_shim: mmap at 0x%llx failed\n", PROBE_VA);
        exit(3);
    }
    memset(host, 0, PROBE_BYTES);
    if ((rc = cuMemHostRegister(host, PROBE_BYTES, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE)) !=
        CUDA_SUCCESS)
        die("cuMemHostRegister", rc);
    if ((rc = cuMemHostGetDevicePointer(&base, host, 0)) != CUDA_SUCCESS) die("cuMemHostGetDevicePointer", rc);
    if (base != PROBE_VA) {
        fprintf(stderr, "gemm_waits_shim: device address 0x%llx, not 0x%llx\n", (unsigned long long)base, PROBE_VA);
        exit(3);
    }
}

__attribute__((destructor)) static void shim_dump(void) {
    const volatile unsigned long long *rec = (const volatile unsigned long long *)host;
    cuCtxSetCurrent(ctx);
    cuCtxSynchronize();
    for (size_t c = 0; c < PROBE_BYTES / 128; ++c) {
        const volatile unsigned long long *r = rec + 16 * c;
        if (!r[0]) continue;
        printf("KWAIT cta %llu sm %llu g0 %llu g1 %llu cyc %llu prod %llu w1 %llu c0 %llu %llu %llu %llu c1 %llu %llu "
               "%llu %llu\n", r[0] - 1, r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
               r[13], r[14]);
    }
    fflush(stdout);
}
