/* A fake GPU backend for the API tests: an "sm90" device with H100-like limits that records what it is asked to do
 * and never runs anything. */
#ifndef KILN_FAKE_BACKEND_H
#define KILN_FAKE_BACKEND_H

#include <string.h>

#include "backend.h"
#include "fake_tables.h"

typedef struct fake_launch {
    const char *symbol;
    uint32_t grid[3], block, lds;
    kiln_gemm_params params;
    void *stream;
} fake_launch;

static struct {
    int opens, closes, loads, unloads, kernels, launches;
    int fail_launch; /* make launches fail with DRIVER_ERROR */
    fake_launch last[2]; /* the first two launches since fake_reset */
} fake;

static void fake_reset(void)
{
    int opens = fake.opens, closes = fake.closes;
    memset(&fake, 0, sizeof fake);
    fake.opens = opens;
    fake.closes = closes;
}

static kiln_status fake_open(void **dev, char arch[KILN_ARCH_LEN], kiln_device_limits *limits)
{
    fake.opens++;
    strcpy(arch, "sm90");
    limits->max_lds_bytes = FAKE_MAX_LDS;
    limits->max_grid_x = 2147483647;
    limits->max_grid_z = 65535;
    limits->sm_count = 132;
    *dev = &fake;
    return KILN_STATUS_SUCCESS;
}

static void fake_close(void *dev)
{
    (void)dev;
    fake.closes++;
}

static kiln_status fake_load_module(void *dev, const void *image, size_t size, void **module)
{
    (void)dev;
    (void)size;
    fake.loads++;
    *module = (void *)(uintptr_t)image;
    return KILN_STATUS_SUCCESS;
}

static void fake_unload_module(void *dev, void *module)
{
    (void)dev;
    (void)module;
    fake.unloads++;
}

static kiln_status fake_get_kernel(void *dev, void *module, const char *symbol, int lds_bytes, void **kernel)
{
    (void)dev;
    (void)module;
    (void)lds_bytes;
    fake.kernels++;
    *kernel = (void *)(uintptr_t)symbol; /* the kernel "is" its symbol, so launches can be checked by name */
    return KILN_STATUS_SUCCESS;
}

static kiln_status fake_launch_kernel(void *dev, void *kernel, const uint32_t grid[3], uint32_t block,
                                      uint32_t lds_bytes, const kiln_gemm_params *params, void *stream)
{
    (void)dev;
    if (fake.fail_launch)
        return KILN_STATUS_DRIVER_ERROR;
    if (fake.launches < 2) {
        fake_launch *l = &fake.last[fake.launches];
        l->symbol = (const char *)kernel;
        memcpy(l->grid, grid, sizeof l->grid);
        l->block = block;
        l->lds = lds_bytes;
        l->params = *params;
        l->stream = stream;
    }
    fake.launches++;
    return KILN_STATUS_SUCCESS;
}

static const char *fake_last_error(void *dev)
{
    (void)dev;
    return "";
}

static const kiln_backend fake_backend = {
    "fake", fake_open, fake_close, fake_load_module, fake_unload_module, fake_get_kernel, fake_launch_kernel,
    fake_last_error,
};

#endif /* KILN_FAKE_BACKEND_H */
