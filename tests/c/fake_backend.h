/* A fake GPU backend for the API tests: an "sm90" device with H100-like limits that records what it is asked to do
 * and never runs anything. fake_backend encodes tensor maps (recording the requests); fake_backend_no_tma has no
 * tma_encode, like the HIP backend. */
#ifndef KILN_FAKE_BACKEND_H
#define KILN_FAKE_BACKEND_H

#include <string.h>

#include "backend.h"
#include "fake_tables.h"
#include "kiln_attn_abi.h"

typedef struct fake_launch {
    const char *symbol;
    uint32_t grid[3], block, lds;
    size_t arg_bytes;        /* the argument's size: sizeof(kiln_gemm_params) or sizeof(kiln_tma_params) */
    kiln_gemm_params params; /* the argument, or the GEMM params inside a kiln_tma_params */
    kiln_tma_params tma;     /* the argument when it is a kiln_tma_params */
    kiln_attn_params attn;   /* the argument when it is a kiln_attn_params, or the params of a kiln_attn_tma_params */
    kiln_attn_tma_params attn_tma; /* the argument when it is a kiln_attn_tma_params (attention, wgmma family) */
    kiln_attn_pack_params pack;    /* the argument when it is a kiln_attn_pack_params (kiln_attn_pack_v) */
    void *stream;
    int overlapped; /* launched through launch_overlapped (programmatic dependent launch) */
} fake_launch;

typedef struct fake_zero {
    void *dst;
    size_t pitch, width, height;
    void *stream;
} fake_zero;

typedef struct fake_encode {
    int rank, elem_bytes, swizzle_bytes;
    const void *base;
    uint64_t dims[4], strides[3];
    uint32_t box[4];
} fake_encode;

static struct {
    int opens, closes, loads, unloads, kernels, launches, encodes, zeros;
    int fail_launch;       /* make launches fail with DRIVER_ERROR */
    int fail_encode;       /* n > 0: the n-th tensor-map encode since fake_reset fails with DRIVER_ERROR */
    int bad_arg_bytes;     /* launches whose argument was of neither size */
    fake_launch last[2];   /* the first two launches since fake_reset */
    fake_encode encode[6]; /* the first six encodes since fake_reset (A, B, D where stored through a map, then the
                            * block scales' two where they go through maps; Q, K, V and O) */
    fake_zero zero[2];     /* the first two zero fills since fake_reset */
} fake;

/* The SM count the next fake_open reports (0: unknown). */
static int fake_sm_count = 132;

static inline void fake_reset(void)
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
    limits->sm_count = fake_sm_count;
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
    /* the kernel "is" its symbol, so launches can be checked by name: kept here, as the caller's may not live on */
    static char names[32][160];
    static int count;
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], symbol) == 0) {
            *kernel = names[i];
            return KILN_STATUS_SUCCESS;
        }
    if (count == 32 || strlen(symbol) >= sizeof names[0])
        return KILN_STATUS_INTERNAL_ERROR;
    strcpy(names[count], symbol);
    *kernel = names[count++];
    return KILN_STATUS_SUCCESS;
}

static kiln_status fake_launch_kernel(void *dev, void *kernel, const uint32_t grid[3], uint32_t block,
                                      uint32_t lds_bytes, const void *arg, size_t arg_bytes, void *stream)
{
    (void)dev;
    if (fake.fail_launch)
        return KILN_STATUS_DRIVER_ERROR;
    if (arg_bytes != sizeof(kiln_gemm_params) && arg_bytes != sizeof(kiln_tma_params) &&
        arg_bytes != sizeof(kiln_attn_params) && arg_bytes != sizeof(kiln_attn_tma_params) &&
        arg_bytes != sizeof(kiln_attn_pack_params))
        fake.bad_arg_bytes++;
    if (fake.launches < 2) {
        fake_launch *l = &fake.last[fake.launches];
        memset(l, 0, sizeof *l);
        l->symbol = (const char *)kernel;
        memcpy(l->grid, grid, sizeof l->grid);
        l->block = block;
        l->lds = lds_bytes;
        l->arg_bytes = arg_bytes;
        if (arg_bytes == sizeof(kiln_gemm_params)) {
            memcpy(&l->params, arg, sizeof l->params);
        } else if (arg_bytes == sizeof(kiln_tma_params)) {
            memcpy(&l->tma, arg, sizeof l->tma);
            l->params = l->tma.p; /* so that checks of params read the same fields for every family */
        } else if (arg_bytes == sizeof(kiln_attn_params)) {
            memcpy(&l->attn, arg, sizeof l->attn);
        } else if (arg_bytes == sizeof(kiln_attn_tma_params)) {
            memcpy(&l->attn_tma, arg, sizeof l->attn_tma);
            l->attn = l->attn_tma.p;
        } else if (arg_bytes == sizeof(kiln_attn_pack_params)) {
            memcpy(&l->pack, arg, sizeof l->pack);
        }
        l->stream = stream;
    }
    fake.launches++;
    return KILN_STATUS_SUCCESS;
}

/* The same, through launch_overlapped (fake_backend only: fake_backend_no_tma has none, like the HIP backend). */
static kiln_status fake_launch_overlapped(void *dev, void *kernel, const uint32_t grid[3], uint32_t block,
                                          uint32_t lds_bytes, const void *arg, size_t arg_bytes, void *stream)
{
    int n = fake.launches;
    kiln_status st = fake_launch_kernel(dev, kernel, grid, block, lds_bytes, arg, arg_bytes, stream);
    if (st == KILN_STATUS_SUCCESS && n < 2)
        fake.last[n].overlapped = 1;
    return st;
}

/* Records the request and writes a recognizable map: its first word is the base address, its second elem_bytes. */
static kiln_status fake_tma_encode(void *dev, kiln_tma_desc *out, int rank, int elem_bytes, int swizzle_bytes,
                                   const void *base, const uint64_t *dims, const uint64_t *strides_bytes,
                                   const uint32_t *box)
{
    (void)dev;
    if (fake.encodes < (int)(sizeof fake.encode / sizeof fake.encode[0])) {
        fake_encode *e = &fake.encode[fake.encodes];
        e->rank = rank;
        e->elem_bytes = elem_bytes;
        e->swizzle_bytes = swizzle_bytes;
        e->base = base;
        memcpy(e->dims, dims, (size_t)rank * sizeof *dims);
        memcpy(e->strides, strides_bytes, (size_t)(rank - 1) * sizeof *strides_bytes);
        memcpy(e->box, box, (size_t)rank * sizeof *box);
    }
    if (++fake.encodes == fake.fail_encode)
        return KILN_STATUS_DRIVER_ERROR;
    memset(out, 0, sizeof *out);
    out->opaque[0] = (uint64_t)(uintptr_t)base;
    out->opaque[1] = (uint64_t)elem_bytes;
    return KILN_STATUS_SUCCESS;
}

static kiln_status fake_zero_2d(void *dev, void *dst, size_t pitch_bytes, size_t width_bytes, size_t height,
                                void *stream)
{
    (void)dev;
    if (fake.zeros < 2) {
        fake_zero *z = &fake.zero[fake.zeros];
        z->dst = dst;
        z->pitch = pitch_bytes;
        z->width = width_bytes;
        z->height = height;
        z->stream = stream;
    }
    fake.zeros++;
    return KILN_STATUS_SUCCESS;
}

static const char *fake_last_error(void *dev)
{
    (void)dev;
    return "";
}

static const kiln_backend fake_backend = {
    .name = "fake",
    .open = fake_open,
    .close = fake_close,
    .load_module = fake_load_module,
    .unload_module = fake_unload_module,
    .get_kernel = fake_get_kernel,
    .launch = fake_launch_kernel,
    .launch_overlapped = fake_launch_overlapped,
    .zero_2d = fake_zero_2d,
    .last_error = fake_last_error,
    .tma_encode = fake_tma_encode,
};

static const kiln_backend fake_backend_no_tma = {
    .name = "fake",
    .open = fake_open,
    .close = fake_close,
    .load_module = fake_load_module,
    .unload_module = fake_unload_module,
    .get_kernel = fake_get_kernel,
    .launch = fake_launch_kernel,
    .zero_2d = fake_zero_2d,
    .last_error = fake_last_error,
    .tma_encode = NULL,
};

#endif /* KILN_FAKE_BACKEND_H */
