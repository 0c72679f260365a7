/* Handle lifecycle, arch, status strings and the per-handle kernel cache. */
#include <stdlib.h>
#include <string.h>

#include "handle.h"

/* Backends probed by kiln_create, in order: a CUDA device first, else an AMD one. */
static const kiln_backend *const BACKENDS[] = {&kiln_backend_cuda, &kiln_backend_hip};

static const char *const STATUS_TEXT[] = {
    [KILN_STATUS_SUCCESS] = "success",
    [KILN_STATUS_NULL_POINTER] = "a required pointer argument is NULL",
    [KILN_STATUS_INVALID_VALUE] = "a size, leading dimension, enum or count is out of range",
    [KILN_STATUS_MISALIGNED] = "a pointer or leading dimension breaks the kernel's alignment",
    [KILN_STATUS_NOT_SUPPORTED] = "type, layout or epilogue combination not implemented",
    [KILN_STATUS_OVERFLOW] = "dimensions whose products or launch grid overflow",
    [KILN_STATUS_NO_DEVICE] = "no GPU driver or no device visible",
    [KILN_STATUS_NO_CODE_FOR_DEVICE] = "the library holds no code object for this device's arch",
    [KILN_STATUS_NO_SOLUTION] = "no solution in the library accepts this problem",
    [KILN_STATUS_WORKSPACE_TOO_SMALL] = "the chosen algo needs more workspace than was given",
    [KILN_STATUS_INVALID_ALGO] = "the algo is not from this library or does not fit the problem",
    [KILN_STATUS_DRIVER_ERROR] = "the driver refused a module load or launch",
    [KILN_STATUS_INTERNAL_ERROR] = "internal error",
};

const char *kiln_status_string(kiln_status status)
{
    if ((unsigned)status < sizeof STATUS_TEXT / sizeof STATUS_TEXT[0] && STATUS_TEXT[status])
        return STATUS_TEXT[status];
    return "unknown status";
}

/* The tables linked into the library (generated/dispatch.c and the embedded code objects). */
static kiln_tables linked_tables(void)
{
    kiln_tables t = {kiln_solutions,   kiln_num_solutions,    kiln_logics,
                     kiln_num_logics,  kiln_code_objects,     kiln_num_code_objects,
                     kiln_attn_solutions, kiln_num_attn_solutions, NULL, 0}; /* (the index: new_handle) */
    return t;
}

/* Takes ownership of dev (NULL backend: no device). */
static kiln_status new_handle(kiln_handle *out, const kiln_backend *backend, void *dev, const char *arch,
                              const kiln_device_limits *limits)
{
    kiln_handle h = calloc(1, sizeof *h);
    kiln_tables t = linked_tables();
    kiln_kernels *k = calloc((size_t)(t.num_solutions > 0 ? t.num_solutions : 1), sizeof *k);
    kiln_kernels *ak = calloc((size_t)(t.num_attn_solutions > 0 ? t.num_attn_solutions : 1), sizeof *ak);
    if (!h || !k || !ak || pthread_mutex_init(&h->lock, NULL) != 0) {
        free(h);
        free(k);
        free(ak);
        if (backend)
            backend->close(dev);
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "out of memory");
    }
    if (!kiln_error_slot_init(&h->error)) {
        pthread_mutex_destroy(&h->lock);
        free(h);
        free(k);
        free(ak);
        if (backend)
            backend->close(dev);
        return kiln_fail(KILN_STATUS_INTERNAL_ERROR, "cannot create a mutex");
    }
    h->tables = t;
    h->tables.code_by_name = kiln_code_index(&t, &h->tables.num_code_by_name); /* (NULL: linear searches) */
    h->backend = backend;
    h->dev = dev;
    h->kernels = k;
    h->attn_kernels = ak;
    h->limits = *limits;
    memcpy(h->device_arch, arch, strlen(arch) + 1);
    memcpy(h->arch, arch, strlen(arch) + 1);
    *out = h;
    return KILN_STATUS_SUCCESS;
}

/* Binds to the first backend of the list that finds a device; without one, a handle with arch "none". */
static kiln_status create(kiln_handle *out, const kiln_backend *const *backends, size_t n)
{
    static const kiln_device_limits none = {0, 0, 0, 0};
    if (!out)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "out is NULL");
    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        char arch[KILN_ARCH_LEN] = {0};
        kiln_device_limits limits = none;
        void *dev = NULL;
        kiln_status st = backends[i]->open(&dev, arch, &limits);
        if (st == KILN_STATUS_NO_DEVICE)
            continue;
        if (st != KILN_STATUS_SUCCESS)
            return kiln_fail(st, "the %s backend found a device but failed: %s", backends[i]->name,
                             st == KILN_STATUS_DRIVER_ERROR ? "the driver refused a call" : kiln_status_string(st));
        arch[KILN_ARCH_LEN - 1] = '\0';
        return new_handle(out, backends[i], dev, arch, &limits);
    }
    return new_handle(out, NULL, NULL, "none", &none);
}

kiln_status kiln_create(kiln_handle *out)
{
    kiln_call_begin();
    return kiln_call_end(NULL, "kiln_create", create(out, BACKENDS, sizeof BACKENDS / sizeof BACKENDS[0]));
}

kiln_status kiln_create_with_backend(kiln_handle *out, const kiln_backend *backend)
{
    kiln_call_begin();
    return kiln_call_end(NULL, "kiln_create", create(out, &backend, backend ? 1 : 0));
}

kiln_status kiln_destroy(kiln_handle h)
{
    kiln_call_begin();
    if (!h)
        return kiln_call_end(NULL, "kiln_destroy", kiln_fail(KILN_STATUS_NULL_POINTER, "h is NULL"));
    if (h->backend) {
        for (int i = 0; i < h->tables.num_solutions; i++)
            if (h->kernels[i].loaded)
                h->backend->unload_module(h->dev, h->kernels[i].module);
        for (int i = 0; i < h->tables.num_attn_solutions; i++)
            if (h->attn_kernels[i].loaded)
                h->backend->unload_module(h->dev, h->attn_kernels[i].module);
        h->backend->close(h->dev);
    }
    pthread_mutex_destroy(&h->lock);
    kiln_error_slot_destroy(&h->error);
    free(h->kernels);
    free(h->attn_kernels);
    free((void *)h->tables.code_by_name);
    free(h);
    return kiln_call_end(NULL, "kiln_destroy", KILN_STATUS_SUCCESS);
}

kiln_status kiln_device_arch(kiln_handle h, const char **arch)
{
    kiln_call_begin();
    if (!h || !arch)
        return kiln_call_end(kiln_slot(h), "kiln_device_arch",
                             kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", h ? "arch" : "h"));
    *arch = h->arch;
    return kiln_call_end(h ? &h->error : NULL, "kiln_device_arch", KILN_STATUS_SUCCESS);
}

const char *kiln_last_error(kiln_handle h) { return kiln_error_read(kiln_slot(h)); }

/* Only an arch kiln has tables for (kiln_arch_from_name: the one name table); the handle keeps its name. */
static kiln_status set_arch(kiln_handle h, const char *arch)
{
    if (!h || !arch)
        return kiln_fail(KILN_STATUS_NULL_POINTER, "%s is NULL", h ? "arch" : "h");
    kiln_arch_id id = kiln_arch_from_name(arch);
    if (id == KILN_ARCH_UNKNOWN)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "arch \"%.40s\" is not an arch kiln has tables for", arch);
    const char *name = kiln_arch_name(id); /* shorter than KILN_ARCH_LEN */
    memcpy(h->arch, name, strlen(name) + 1);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_set_arch(kiln_handle h, const char *arch)
{
    kiln_call_begin();
    return kiln_call_end(kiln_slot(h), "kiln_set_arch", set_arch(h, arch));
}

void kiln_handle_select_input(kiln_handle h, const kiln_problem *p, const kiln_args *args, kiln_select_input *in)
{
    /* The device's limits say nothing about another arch chosen with kiln_set_arch; and only candidates that can run
     * on the device (their code object is in the library) are offered for it. */
    int own = h->backend && strcmp(h->arch, h->device_arch) == 0;
    in->arch = h->arch;
    in->problem = p;
    in->args = args;
    in->skip = 0;
    in->max_lds_bytes = own ? h->limits.max_lds_bytes : 0;
    in->max_grid_x = own ? h->limits.max_grid_x : 0;
    in->max_grid_z = own ? h->limits.max_grid_z : 0;
    in->code = own ? &h->tables : NULL;
    in->sm_count = own ? h->limits.sm_count : 0;
}

static kiln_status load_kernels(kiln_handle h, const kiln_solution *s, kiln_kernels *k)
{
    const kiln_code_object *co = kiln_find_code_object(&h->tables, s->name);
    if (!co)
        return KILN_STATUS_NO_CODE_FOR_DEVICE;
    if (kiln_solution_reduces(s) && !s->reduce_name)
        return KILN_STATUS_INTERNAL_ERROR; /* a split-K solution without its reduce kernel: a table error */
    void *module = NULL, *gemm = NULL, *reduce = NULL;
    kiln_status st = h->backend->load_module(h->dev, co->data, co->size, &module);
    if (st != KILN_STATUS_SUCCESS)
        return st;
    st = h->backend->get_kernel(h->dev, module, s->name, s->lds_bytes, &gemm);
    if (st == KILN_STATUS_SUCCESS && kiln_solution_reduces(s))
        st = h->backend->get_kernel(h->dev, module, s->reduce_name, 0, &reduce);
    if (st != KILN_STATUS_SUCCESS) {
        h->backend->unload_module(h->dev, module);
        return st;
    }
    k->module = module;
    k->gemm = gemm;
    k->reduce = reduce;
    k->loaded = 1;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_handle_kernels(kiln_handle h, int s, void **gemm, void **reduce)
{
    kiln_kernels *k = &h->kernels[s];
    kiln_status st = KILN_STATUS_SUCCESS;
    pthread_mutex_lock(&h->lock);
    if (!k->loaded)
        st = load_kernels(h, &h->tables.solutions[s], k);
    if (st == KILN_STATUS_SUCCESS) {
        *gemm = k->gemm;
        *reduce = k->reduce;
    }
    pthread_mutex_unlock(&h->lock);
    return st;
}
