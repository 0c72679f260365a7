/* kiln_bench: benchmark and check every kiln solution for a list of GEMM sizes (kiln's counterpart of Tensile's
 * client).
 *
 *   kiln_bench --a e4m3 --b e4m3 --d bf16 [--layout TN|NN] [--sizes MxNxK[xBATCH],...] [--sizes-file FILE]
 *              [--solutions all|top1|NAME,NAME...] [--warmup 5] [--iters 20] [--samples 256]
 *              [--csv FILE] [--json FILE] [--device N] [--quiet]
 *
 * For each size it asks kiln_query for every solution that accepts the problem (in kiln's ranking order: rank 0 is
 * what kiln_run picks by itself), runs each candidate once on a poisoned D, checks that D holds no NaN/inf and that
 * sampled entries match a float64 host reference, then times it with one event pair per run.
 *
 * Like kiln_example, it talks to the GPU through the CUDA driver API opened with dlopen at run time (no CUDA toolkit
 * needed to build). It makes the device's primary context current before kiln_create, so that the kiln handle binds
 * to the same context. Exit status: 0 all candidates ran and passed, 1 some candidate failed, 2 usage/setup error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln.h"

#include "dtype.h"
#include "fp8.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define PRINTF_LIKE(fmt, first)
#endif

#define MAX_CANDIDATES 4096
#define MAX_ITERS 100000

/* ---------------------------------------------------------------------------------------------------------------- */
/* CUDA driver API, declared by hand (cuda.h is not needed; the library does the same). */

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
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_destroy)(CUevent);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_synchronize)(CUevent);
    CUresult (*event_elapsed_time)(float *, CUevent, CUevent);
    CUresult (*get_error_string)(CUresult, const char **); /* optional */
};

static struct driver cu;

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

static const char *load_driver(void)
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
    return NULL;
}

static const char *cu_error(CUresult rc)
{
    const char *s = NULL;
    if (cu.get_error_string && cu.get_error_string(rc, &s) == 0 && s)
        return s;
    return "CUDA error";
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* Number formats: the runtime's own conversions (runtime/src/fp8.c, dtype.c, compiled into this client), exact on
 * decode; the encoders round to nearest even. */

static int is_fp8(kiln_dtype t) { return kiln_dtype_is_fp8(t); }
static int is_half(kiln_dtype t) { return kiln_dtype_is_half(t); }
static size_t dtype_bytes(kiln_dtype t) { return kiln_dtype_bytes(t); }

/* Value of every code of an input type: 256 entries for fp8, 65536 for f16/bf16. */
static double *make_lut(kiln_dtype t)
{
    size_t count = is_fp8(t) ? 256 : 65536;
    double *lut = malloc(count * sizeof *lut);
    if (!lut)
        return NULL;
    for (size_t i = 0; i < count; i++)
        lut[i] = is_fp8(t) ? kiln_fp8_to_f32(t, (uint8_t)i) : t == KILN_DTYPE_F16 ? kiln_f16_to_f32((uint16_t)i)
                                                                                   : kiln_bf16_to_f32((uint16_t)i);
    return lut;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* Deterministic random numbers (splitmix64). */

static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double next_unit(uint64_t *state) { return (double)(next_u64(state) >> 11) * 0x1p-53; } /* [0, 1) */

static uint64_t below(uint64_t *state, uint64_t n) { return n ? next_u64(state) % n : 0; }

/* Random finite fp8 codes of moderate magnitude: |x| in [2^-3, 2^2), uniform over those codes (both signs). */
static uint8_t random_fp8(kiln_dtype t, uint64_t *state)
{
    for (;;) {
        uint8_t code = (uint8_t)(next_u64(state) >> 56);
        float x = fabsf(kiln_fp8_to_f32(t, code));
        if (x >= 0.125f && x < 4.0f)
            return code;
    }
}

/* count elements of type t (fp8, f16 or bf16) into out. */
static void fill_random(kiln_dtype t, void *out, size_t count, uint64_t *state)
{
    if (is_fp8(t)) {
        uint8_t *p = out;
        for (size_t i = 0; i < count; i++)
            p[i] = random_fp8(t, state);
    } else {
        uint16_t *p = out;
        for (size_t i = 0; i < count; i++) {
            double x = 2.0 * next_unit(state) - 1.0;
            p[i] = t == KILN_DTYPE_F16 ? kiln_f32_to_f16((float)x) : kiln_f32_to_bf16((float)x);
        }
    }
}

static double element(const void *base, size_t index, size_t bytes, const double *lut)
{
    if (bytes == 1)
        return lut[((const uint8_t *)base)[index]];
    uint16_t v;
    memcpy(&v, (const uint8_t *)base + index * 2, 2);
    return lut[v];
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* Options, sizes, result rows. */

struct size4 {
    int64_t m, n, k, batch;
};

enum { SOL_ALL, SOL_TOP1, SOL_LIST };

struct options {
    kiln_dtype a, b, d;
    int have_a, have_b, have_d;
    kiln_layout layout;
    struct size4 *sizes;
    int nsizes, cap_sizes;
    int solutions;
    char *solutions_arg; /* the --solutions text, split in place into names */
    char **names;
    int nnames;
    int warmup, iters, samples, device, quiet;
    const char *csv_path, *json_path;
};

struct row {
    struct size4 s;
    int rank;         /* kiln's rank, -1 when no candidate ran (skipped, query failure) */
    const char *name; /* kernel name, or "-" */
    int timed, checked;
    double ms, min_ms, tflops, rel_err;
    int pass; /* 1 pass, 0 fail, -1 skipped */
    char status[256];
};

struct rows {
    struct row *v;
    int n, cap;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln_bench --a TYPE --b TYPE --d TYPE [--layout TN|NN] [--sizes MxNxK[xBATCH],...]\n"
            "                  [--sizes-file FILE] [--solutions all|top1|NAME,NAME...] [--warmup 5] [--iters 20]\n"
            "                  [--samples 256] [--csv FILE] [--json FILE] [--device N] [--quiet]\n"
            "  TYPE: f32 f16 bf16 e4m3 e5m2 e4m3fnuz e5m2fnuz (fp8 x fp8: scaled GEMM, TN; f16/bf16 x fp8: B\n"
            "        prepacked, TN; f16 x f16 / bf16 x bf16: GEMM). D: f32, f16 or bf16.\n"
            "  default sizes: 1024x1024x1024,4096x4096x4096,8192x8192x8192\n"
            "  exit status: 0 all passed, 1 a candidate failed, 2 usage or setup error\n");
}

PRINTF_LIKE(1, 2) static int die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("kiln_bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

static int parse_dtype(const char *s, kiln_dtype *out)
{
    for (int t = 0; t < KILN_DTYPE_COUNT; t++)
        if (strcmp(s, kiln_dtype_name((kiln_dtype)t)) == 0) {
            *out = (kiln_dtype)t;
            return 1;
        }
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

/* "MxNxK" or "MxNxKxBATCH", surrounding blanks allowed. */
static int parse_size(const char *s, struct size4 *out)
{
    int64_t v[4] = {0, 0, 0, 1};
    int count = 0;
    const char *p = s;
    while (*p == ' ' || *p == '\t')
        p++;
    for (;;) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || errno || x < 1 || x > INT32_MAX || count == 4)
            return 0;
        v[count++] = x;
        p = end;
        if (*p != 'x' && *p != 'X')
            break;
        p++;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (*p || count < 3)
        return 0;
    *out = (struct size4){v[0], v[1], v[2], v[3]};
    return 1;
}

static int add_size(struct options *o, const char *text)
{
    struct size4 s;
    if (!parse_size(text, &s))
        return 0;
    if (o->nsizes == o->cap_sizes) {
        int cap = o->cap_sizes ? 2 * o->cap_sizes : 16;
        struct size4 *v = realloc(o->sizes, (size_t)cap * sizeof *v);
        if (!v)
            return 0;
        o->sizes = v, o->cap_sizes = cap;
    }
    o->sizes[o->nsizes++] = s;
    return 1;
}

static int add_size_list(struct options *o, const char *list)
{
    char *copy = malloc(strlen(list) + 1);
    if (!copy)
        return die("out of memory");
    strcpy(copy, list);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
        if (!add_size(o, tok)) {
            int rc = die("bad size '%s' (want MxNxK or MxNxKxBATCH, each 1..2^31-1)", tok);
            free(copy);
            return rc;
        }
    free(copy);
    return 0;
}

static int add_size_file(struct options *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return die("cannot open --sizes-file %s: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!*p)
            continue;
        if (!add_size(o, p)) {
            fclose(f);
            return die("%s:%d: bad size '%s' (want MxNxK or MxNxKxBATCH)", path, lineno, p);
        }
    }
    fclose(f);
    return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->layout = KILN_LAYOUT_TN;
    o->solutions = SOL_ALL;
    o->warmup = 5, o->iters = 20, o->samples = 256;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(arg, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0)
            return die("unexpected argument '%s' (see --help)", arg);
        if (i + 1 >= argc)
            return die("%s needs a value", arg);
        const char *val = argv[++i];
        int rc = 0;
        if (!strcmp(arg, "--a") || !strcmp(arg, "--b") || !strcmp(arg, "--d")) {
            kiln_dtype *t = arg[2] == 'a' ? &o->a : arg[2] == 'b' ? &o->b : &o->d;
            int *have = arg[2] == 'a' ? &o->have_a : arg[2] == 'b' ? &o->have_b : &o->have_d;
            if (!parse_dtype(val, t))
                return die("%s: unknown type '%s' (f32 f16 bf16 e4m3 e5m2 e4m3fnuz e5m2fnuz)", arg, val);
            *have = 1;
        } else if (!strcmp(arg, "--layout")) {
            if (!strcmp(val, "TN") || !strcmp(val, "tn"))
                o->layout = KILN_LAYOUT_TN;
            else if (!strcmp(val, "NN") || !strcmp(val, "nn"))
                o->layout = KILN_LAYOUT_NN;
            else
                return die("--layout: want TN or NN, got '%s'", val);
        } else if (!strcmp(arg, "--sizes")) {
            rc = add_size_list(o, val);
        } else if (!strcmp(arg, "--sizes-file")) {
            rc = add_size_file(o, val);
        } else if (!strcmp(arg, "--solutions")) {
            free(o->solutions_arg);
            free(o->names);
            o->solutions_arg = NULL, o->names = NULL, o->nnames = 0;
            if (!strcmp(val, "all"))
                o->solutions = SOL_ALL;
            else if (!strcmp(val, "top1"))
                o->solutions = SOL_TOP1;
            else {
                o->solutions = SOL_LIST;
                o->solutions_arg = malloc(strlen(val) + 1);
                o->names = malloc((strlen(val) / 2 + 2) * sizeof *o->names);
                if (!o->solutions_arg || !o->names)
                    return die("out of memory");
                strcpy(o->solutions_arg, val);
                for (char *tok = strtok(o->solutions_arg, ","); tok; tok = strtok(NULL, ","))
                    o->names[o->nnames++] = tok;
                if (!o->nnames)
                    return die("--solutions: empty list");
            }
        } else if (!strcmp(arg, "--warmup")) {
            if (!parse_int(val, 0, MAX_ITERS, &o->warmup))
                return die("--warmup: want 0..%d, got '%s'", MAX_ITERS, val);
        } else if (!strcmp(arg, "--iters")) {
            if (!parse_int(val, 1, MAX_ITERS, &o->iters))
                return die("--iters: want 1..%d, got '%s'", MAX_ITERS, val);
        } else if (!strcmp(arg, "--samples")) {
            if (!parse_int(val, 1, 1 << 24, &o->samples))
                return die("--samples: want 1..%d, got '%s'", 1 << 24, val);
        } else if (!strcmp(arg, "--device")) {
            if (!parse_int(val, 0, 1 << 16, &o->device))
                return die("--device: want a device ordinal, got '%s'", val);
        } else if (!strcmp(arg, "--csv")) {
            o->csv_path = val;
        } else if (!strcmp(arg, "--json")) {
            o->json_path = val;
        } else {
            return die("unknown option '%s' (see --help)", arg);
        }
        if (rc)
            return rc;
    }
    if (!o->have_a || !o->have_b || !o->have_d) {
        usage(stderr);
        return die("--a, --b and --d are required");
    }
    if (!o->nsizes && add_size_list(o, "1024x1024x1024,4096x4096x4096,8192x8192x8192"))
        return 2;
    return 0;
}

static struct row *new_row(struct rows *rows, struct size4 s)
{
    if (rows->n == rows->cap) {
        int cap = rows->cap ? 2 * rows->cap : 64;
        struct row *v = realloc(rows->v, (size_t)cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "kiln_bench: out of memory\n");
            exit(2);
        }
        rows->v = v, rows->cap = cap;
    }
    struct row *r = &rows->v[rows->n++];
    memset(r, 0, sizeof *r);
    r->s = s;
    r->rank = -1;
    r->name = "-";
    r->pass = 0;
    snprintf(r->status, sizeof r->status, "ok");
    return r;
}

PRINTF_LIKE(2, 3) static void set_status(struct row *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->status, sizeof r->status, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* Output. */

static const char *layout_name(kiln_layout l) { return l == KILN_LAYOUT_TN ? "TN" : "NN"; }

static void size_text(struct size4 s, char *buf, size_t len)
{
    if (s.batch > 1)
        snprintf(buf, len, "%lldx%lldx%lldx%lld", (long long)s.m, (long long)s.n, (long long)s.k,
                 (long long)s.batch);
    else
        snprintf(buf, len, "%lldx%lldx%lld", (long long)s.m, (long long)s.n, (long long)s.k);
}

static void print_table_header(void)
{
    printf("%-22s %5s %10s %10s %10s %5s  %s\n", "size", "rank", "ms", "TFLOP/s", "rel_err", "pass", "name");
}

static void print_row(const struct row *r)
{
    char size[96], ms[32] = "-", tf[32] = "-", err[32] = "-";
    size_text(r->s, size, sizeof size);
    if (r->timed) {
        snprintf(ms, sizeof ms, "%.4f", r->ms);
        snprintf(tf, sizeof tf, "%.2f", r->tflops);
    }
    if (r->checked)
        snprintf(err, sizeof err, "%.2e", r->rel_err);
    printf("%-22s %5d %10s %10s %10s %5s  %s", size, r->rank, ms, tf, err,
           r->pass > 0 ? "yes" : r->pass == 0 ? "NO" : "skip", r->name);
    if (strcmp(r->status, "ok") != 0)
        printf("  [%s]", r->status);
    putchar('\n');
    fflush(stdout);
}

static void csv_header(FILE *f)
{
    fprintf(f, "m,n,k,batch,a,b,d,layout,rank,name,ms,min_ms,tflops,rel_err,pass,status\n");
}

static void csv_row(FILE *f, const struct options *o, const struct row *r)
{
    fprintf(f, "%lld,%lld,%lld,%lld,%s,%s,%s,%s,%d,%s,", (long long)r->s.m, (long long)r->s.n, (long long)r->s.k,
            (long long)r->s.batch, kiln_dtype_name(o->a), kiln_dtype_name(o->b), kiln_dtype_name(o->d),
            layout_name(o->layout), r->rank, r->name);
    if (r->timed)
        fprintf(f, "%.6f,%.6f,%.3f,", r->ms, r->min_ms, r->tflops);
    else
        fputs(",,,", f);
    if (r->checked)
        fprintf(f, "%.6e,", r->rel_err);
    else
        fputc(',', f);
    if (r->pass >= 0)
        fprintf(f, "%d,", r->pass);
    else
        fputc(',', f);
    fputc('"', f);
    for (const char *p = r->status; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputs("\"\n", f);
    fflush(f);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, int present, double v, int exponent, int digits)
{
    if (present && isfinite(v))
        fprintf(f, exponent ? "%.*e" : "%.*f", digits, v);
    else
        fputs("null", f);
}

static int write_json(FILE *f, const struct options *o, const char *device, const char *arch,
                      const struct rows *rows)
{
    fputs("{\n  \"device\": ", f);
    json_string(f, device);
    fputs(",\n  \"arch\": ", f);
    json_string(f, arch);
    fprintf(f, ",\n  \"problem\": {\"a\": \"%s\", \"b\": \"%s\", \"d\": \"%s\", \"layout\": \"%s\", ",
            kiln_dtype_name(o->a), kiln_dtype_name(o->b), kiln_dtype_name(o->d), layout_name(o->layout));
    if (is_fp8(o->a) && is_fp8(o->b))
        fputs("\"scale_a\": 0.5, \"scale_b\": 2.0, ", f);
    else if (is_fp8(o->b))
        fputs("\"scale_b\": 2.0, ", f);
    else
        fputs("\"alpha\": 1.0, \"beta\": 0.0, ", f);
    fprintf(f, "\"solutions\": \"%s\", \"warmup\": %d, \"iters\": %d, \"samples\": %d},\n  \"rows\": [",
            o->solutions == SOL_ALL ? "all" : o->solutions == SOL_TOP1 ? "top1" : "list", o->warmup, o->iters,
            o->samples);
    for (int i = 0; i < rows->n; i++) {
        const struct row *r = &rows->v[i];
        fprintf(f,
                "%s\n    {\"m\": %lld, \"n\": %lld, \"k\": %lld, \"batch\": %lld, \"a\": \"%s\", \"b\": \"%s\", "
                "\"d\": \"%s\", \"layout\": \"%s\", \"rank\": %d, \"name\": ",
                i ? "," : "", (long long)r->s.m, (long long)r->s.n, (long long)r->s.k, (long long)r->s.batch,
                kiln_dtype_name(o->a), kiln_dtype_name(o->b), kiln_dtype_name(o->d), layout_name(o->layout),
                r->rank);
        json_string(f, r->name);
        fputs(", \"ms\": ", f);
        json_number(f, r->timed, r->ms, 0, 6);
        fputs(", \"min_ms\": ", f);
        json_number(f, r->timed, r->min_ms, 0, 6);
        fputs(", \"tflops\": ", f);
        json_number(f, r->timed, r->tflops, 0, 3);
        fputs(", \"rel_err\": ", f);
        json_number(f, r->checked, r->rel_err, 1, 6);
        fprintf(f, ", \"pass\": %s, \"status\": ", r->pass > 0 ? "true" : r->pass == 0 ? "false" : "null");
        json_string(f, r->status);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* Benchmark one size. */

struct bench {
    const struct options *o;
    kiln_handle h;
    struct rows rows;
    FILE *csv;
    double *lut_a, *lut_b;
    CUevent *ev; /* 2 * iters events: start i, stop i */
    float *times;
    int fatal; /* the CUDA context is unusable (a kernel fault): stop */
    int failed;
};

static void finish_row(struct bench *bx, struct row *r)
{
    if (r->pass == 0)
        bx->failed = 1;
    if (!bx->o->quiet)
        print_row(r);
    if (bx->csv)
        csv_row(bx->csv, bx->o, r);
}

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

/* Device buffers of one size. */
struct buffers {
    CUdeviceptr a, b, d, sa, sb, ws;
};

static void free_buffers(struct buffers *buf)
{
    CUdeviceptr *all[6] = {&buf->a, &buf->b, &buf->d, &buf->sa, &buf->sb, &buf->ws};
    for (int i = 0; i < 6; i++)
        if (*all[i]) {
            cu.mem_free(*all[i]);
            *all[i] = 0;
        }
}

/* Sampled output positions and their reference values. */
struct samples {
    int64_t *index; /* element index in D: b * stride_d + i * ldd + j */
    double *ref;
    int count;
};

/* Check one candidate's D (copied to host): non-finite count and relative L2 over the samples. */
static int64_t count_nonfinite(kiln_dtype t, const void *d, size_t count)
{
    int64_t bad = 0;
    if (t == KILN_DTYPE_F32) {
        const uint32_t *p = d;
        for (size_t i = 0; i < count; i++)
            bad += (p[i] & 0x7f800000u) == 0x7f800000u;
    } else {
        const uint16_t *p = d;
        uint16_t mask = t == KILN_DTYPE_F16 ? 0x7c00 : 0x7f80;
        for (size_t i = 0; i < count; i++)
            bad += (p[i] & mask) == mask;
    }
    return bad;
}

static double output_value(kiln_dtype t, const void *d, int64_t index)
{
    if (t == KILN_DTYPE_F32) {
        float f;
        memcpy(&f, (const uint8_t *)d + index * 4, 4);
        return f;
    }
    uint16_t v;
    memcpy(&v, (const uint8_t *)d + index * 2, 2);
    return t == KILN_DTYPE_F16 ? kiln_f16_to_f32(v) : kiln_bf16_to_f32(v);
}

static void run_candidate(struct bench *bx, const kiln_problem *p, const kiln_args *args, const kiln_algo *algo,
                          struct buffers *buf, size_t ws_bytes, void *host_d, size_t d_count,
                          const struct samples *smp, double tol, struct row *r)
{
    const struct options *o = bx->o;
    size_t d_bytes = d_count * dtype_bytes(p->d_type);
    CUresult rc = cu.memset_d8(buf->d, 0xff, d_bytes); /* NaN in f32, f16 and bf16 */
    if (rc) {
        set_status(r, "cuMemsetD8: %s", cu_error(rc));
        return;
    }
    kiln_status st = kiln_run(bx->h, p, algo, args, (void *)(uintptr_t)buf->ws, ws_bytes, NULL);
    if (st != KILN_STATUS_SUCCESS) {
        set_status(r, "kiln_run: %s", kiln_status_string(st));
        return;
    }
    rc = cu.ctx_synchronize();
    if (rc) {
        set_status(r, "cuCtxSynchronize after kiln_run: %s (%d)", cu_error(rc), rc);
        bx->fatal = 1;
        return;
    }
    rc = cu.memcpy_dtoh(host_d, buf->d, d_bytes);
    if (rc) {
        set_status(r, "cuMemcpyDtoH: %s (%d)", cu_error(rc), rc);
        bx->fatal = 1;
        return;
    }

    int64_t nonfinite = count_nonfinite(p->d_type, host_d, d_count);
    double err = 0, norm = 0;
    for (int i = 0; i < smp->count; i++) {
        double got = output_value(p->d_type, host_d, smp->index[i]), diff = got - smp->ref[i];
        err += diff * diff;
        norm += smp->ref[i] * smp->ref[i];
    }
    r->checked = 1;
    r->rel_err = norm > 0 ? sqrt(err / norm) : sqrt(err);
    int ok = nonfinite == 0 && r->rel_err <= tol; /* NaN rel_err fails too */
    if (nonfinite)
        set_status(r, "check: %lld non-finite elements in D", (long long)nonfinite);
    else if (!ok)
        set_status(r, "check: rel_err above %.0e", tol);

    /* Timing: warmup, then one event pair around each run; one synchronization at the end. */
    for (int i = 0; i < o->warmup; i++) {
        st = kiln_run(bx->h, p, algo, args, (void *)(uintptr_t)buf->ws, ws_bytes, NULL);
        if (st != KILN_STATUS_SUCCESS) {
            set_status(r, "kiln_run (warmup): %s", kiln_status_string(st));
            return;
        }
    }
    int recorded = 0;
    for (; recorded < o->iters; recorded++) {
        if ((rc = cu.event_record(bx->ev[2 * recorded], NULL)) != 0) {
            set_status(r, "cuEventRecord: %s (%d)", cu_error(rc), rc);
            break;
        }
        st = kiln_run(bx->h, p, algo, args, (void *)(uintptr_t)buf->ws, ws_bytes, NULL);
        if (st != KILN_STATUS_SUCCESS) {
            set_status(r, "kiln_run (timed): %s", kiln_status_string(st));
            break;
        }
        if ((rc = cu.event_record(bx->ev[2 * recorded + 1], NULL)) != 0) {
            set_status(r, "cuEventRecord: %s (%d)", cu_error(rc), rc);
            break;
        }
    }
    rc = cu.ctx_synchronize();
    if (rc) {
        set_status(r, "cuCtxSynchronize after timing: %s (%d)", cu_error(rc), rc);
        bx->fatal = 1;
        return;
    }
    if (recorded < o->iters)
        return;
    for (int i = 0; i < o->iters; i++) {
        rc = cu.event_elapsed_time(&bx->times[i], bx->ev[2 * i], bx->ev[2 * i + 1]);
        if (rc) {
            set_status(r, "cuEventElapsedTime: %s (%d)", cu_error(rc), rc);
            return;
        }
    }
    qsort(bx->times, (size_t)o->iters, sizeof *bx->times, cmp_float);
    int n = o->iters;
    r->ms = n % 2 ? bx->times[n / 2] : 0.5 * ((double)bx->times[n / 2 - 1] + bx->times[n / 2]);
    r->min_ms = bx->times[0];
    double flop = 2.0 * (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
    r->tflops = r->ms > 0 ? flop / r->ms / 1e9 : 0;
    r->timed = 1;
    r->pass = ok;
}

/* One row for a size that produced no candidate rows (setup or query failure); always a failure. */
PRINTF_LIKE(3, 4) static void size_failure(struct bench *bx, struct size4 s, const char *fmt, ...)
{
    struct row *r = new_row(&bx->rows, s);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->status, sizeof r->status, fmt, ap);
    va_end(ap);
    finish_row(bx, r);
}

static CUdeviceptr device_upload(const void *host, size_t bytes, CUresult *rc)
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

/* What one size allocates; bench_size frees it whatever size_body returned from. */
struct size_work {
    uint8_t *host_a, *host_b, *host_packed;
    void *host_d;
    struct samples smp;
    struct buffers buf;
    kiln_algo *algos;
    int *ranks;
    const char **names;
};

static void size_body(struct bench *bx, struct size4 s, struct size_work *w)
{
    const struct options *o = bx->o;
    kiln_problem p;
    kiln_status st = kiln_problem_init(&p, o->a, o->b, o->d, o->layout, s.m, s.n, s.k);
    if (st != KILN_STATUS_SUCCESS) {
        size_failure(bx, s, "kiln_problem_init: %s", kiln_status_string(st));
        return;
    }
    p.batch = s.batch;
    int fp8_kind = is_fp8(o->a) && is_fp8(o->b), mixed = is_half(o->a) && is_fp8(o->b);
    float sa = 0.5f, sb = 2.0f;
    if (fp8_kind)
        p.scale_a = p.scale_b = KILN_SCALE_TENSOR;
    else if (mixed)
        p.scale_b = KILN_SCALE_TENSOR;
    double scale = (fp8_kind ? (double)sa * sb : mixed ? (double)sb : 1.0) * 1.0 /* alpha */;
    double tol = is_fp8(o->a) || is_fp8(o->b) ? 1e-2 : 2e-3;
    if ((st = kiln_check_problem(bx->h, &p)) != KILN_STATUS_SUCCESS) {
        size_failure(bx, s, "kiln_check_problem: %s", kiln_status_string(st));
        return;
    }

    /* Host buffers hold at most batch * max(m, n, k)^2 elements: refuse what no host could allocate. */
    int64_t longest = s.m > s.n ? s.m : s.n;
    longest = longest > s.k ? longest : s.k;
    if ((double)s.batch * (double)longest * (double)longest > (double)(SIZE_MAX / 8)) {
        size_failure(bx, s, "size too large for host buffers");
        return;
    }

    /* Host inputs. B is kept unpacked ([batch][n][k] for TN, [batch][k][n] for NN) for the reference. */
    size_t ea = dtype_bytes(o->a), eb = dtype_bytes(o->b);
    size_t a_count = (size_t)(s.batch * s.m * s.k), b_count = (size_t)(s.batch * s.n * s.k);
    size_t d_count = (size_t)(s.batch * s.m * s.n);
    size_t packed_bytes = 0; /* one batch */
    int64_t ldb_packed = 0;
    if (p.b_prepacked && (st = kiln_prepack_b_size(s.n, s.k, &packed_bytes, &ldb_packed)) != KILN_STATUS_SUCCESS) {
        size_failure(bx, s, "kiln_prepack_b_size: %s", kiln_status_string(st));
        return;
    }
    uint8_t *host_a = w->host_a = malloc(a_count * ea), *host_b = w->host_b = malloc(b_count * eb);
    uint8_t *host_packed = w->host_packed = p.b_prepacked ? malloc((size_t)s.batch * packed_bytes) : NULL;
    void *host_d = w->host_d = malloc(d_count * dtype_bytes(o->d));
    struct samples *smp = &w->smp;
    int total_ok = s.batch * s.m * s.n <= o->samples; /* fits: bounded above */
    smp->count = total_ok ? (int)(s.batch * s.m * s.n) : o->samples;
    smp->index = malloc((size_t)smp->count * sizeof *smp->index);
    smp->ref = malloc((size_t)smp->count * sizeof *smp->ref);
    struct buffers *buf = &w->buf;
    if (!host_a || !host_b || !host_d || !smp->index || !smp->ref || (p.b_prepacked && !host_packed)) {
        size_failure(bx, s, "host allocation failed");
        return;
    }
    uint64_t state = 0x6b696c6e62656e63ull ^ ((uint64_t)s.m * 0x100000001b3ull) ^ ((uint64_t)s.n << 21) ^
                     ((uint64_t)s.k << 42) ^ ((uint64_t)s.batch * 0x9e3779b97f4a7c15ull);
    fill_random(o->a, host_a, a_count, &state);
    fill_random(o->b, host_b, b_count, &state);
    if (p.b_prepacked) {
        if (p.ldb != ldb_packed) {
            size_failure(bx, s, "kiln_problem_init ldb %lld != kiln_prepack_b_size ld %lld", (long long)p.ldb,
                         (long long)ldb_packed);
            return;
        }
        for (int64_t bb = 0; bb < s.batch; bb++) {
            st = kiln_prepack_b(host_b + (size_t)(bb * s.n * s.k), KILN_LAYOUT_TN, s.n, s.k, s.k,
                                host_packed + (size_t)bb * packed_bytes, packed_bytes);
            if (st != KILN_STATUS_SUCCESS) {
                size_failure(bx, s, "kiln_prepack_b: %s", kiln_status_string(st));
                return;
            }
        }
    }

    /* Reference at the sampled positions (every position when there are few). */
    for (int i = 0; i < smp->count; i++) {
        int64_t bb, row, col;
        if (total_ok) {
            bb = i / (s.m * s.n), row = i / s.n % s.m, col = i % s.n;
        } else {
            bb = (int64_t)below(&state, (uint64_t)s.batch);
            row = (int64_t)below(&state, (uint64_t)s.m);
            col = (int64_t)below(&state, (uint64_t)s.n);
        }
        smp->index[i] = bb * p.stride_d + row * p.ldd + col;
        size_t a0 = (size_t)(bb * s.m * s.k + row * s.k), b0 = (size_t)(bb * s.n * s.k);
        double acc = 0;
        if (o->layout == KILN_LAYOUT_TN)
            for (int64_t kk = 0; kk < s.k; kk++)
                acc += element(host_a, a0 + (size_t)kk, ea, bx->lut_a) *
                       element(host_b, b0 + (size_t)(col * s.k + kk), eb, bx->lut_b);
        else
            for (int64_t kk = 0; kk < s.k; kk++)
                acc += element(host_a, a0 + (size_t)kk, ea, bx->lut_a) *
                       element(host_b, b0 + (size_t)(kk * s.n + col), eb, bx->lut_b);
        smp->ref[i] = acc * scale;
    }

    /* Device buffers. */
    CUresult rc;
    struct {
        CUdeviceptr *ptr;
        const void *host;
        size_t bytes;
        const char *what;
    } uploads[5] = {
        {&buf->a, host_a, a_count * ea, "A"},
        {&buf->b, p.b_prepacked ? (const void *)host_packed : host_b,
         p.b_prepacked ? (size_t)s.batch * packed_bytes : b_count * eb, "B"},
        {&buf->d, NULL, d_count * dtype_bytes(o->d), "D"},
        {&buf->sa, &sa, sizeof sa, "scale_a"},
        {&buf->sb, &sb, sizeof sb, "scale_b"},
    };
    for (int i = 0; i < 5; i++) {
        *uploads[i].ptr = device_upload(uploads[i].host, uploads[i].bytes, &rc);
        if (!*uploads[i].ptr) {
            size_failure(bx, s, "device buffer %s (%zu bytes): %s (%d)", uploads[i].what, uploads[i].bytes,
                         cu_error(rc), rc);
            return;
        }
    }
    kiln_args args;
    memset(&args, 0, sizeof args);
    args.a = (const void *)(uintptr_t)buf->a;
    args.b = (const void *)(uintptr_t)buf->b;
    args.d = (void *)(uintptr_t)buf->d;
    if (fp8_kind)
        args.scale_a = (const float *)(uintptr_t)buf->sa;
    if (fp8_kind || mixed)
        args.scale_b = (const float *)(uintptr_t)buf->sb;
    args.alpha = 1.0f;
    args.beta = 0.0f;

    /* Candidates, in kiln's order. */
    kiln_algo *algos = w->algos = malloc(MAX_CANDIDATES * sizeof *algos);
    int *ranks = w->ranks = malloc((size_t)(MAX_CANDIDATES > o->nnames ? MAX_CANDIDATES : o->nnames) * sizeof *ranks);
    if (!algos || !ranks) {
        size_failure(bx, s, "host allocation failed");
        return;
    }
    int got = 0;
    st = kiln_query(bx->h, &p, &args, algos, MAX_CANDIDATES, &got);
    if (st != KILN_STATUS_SUCCESS || got < 1) {
        size_failure(bx, s, "kiln_query: %s", st != KILN_STATUS_SUCCESS ? kiln_status_string(st) : "no candidate");
        return;
    }
    const char **names = w->names = malloc((size_t)got * sizeof *names);
    if (!names) {
        size_failure(bx, s, "host allocation failed");
        return;
    }
    for (int i = 0; i < got; i++) {
        names[i] = "?";
        if (kiln_algo_name(bx->h, &algos[i], &names[i]) != KILN_STATUS_SUCCESS || !names[i])
            names[i] = "?";
    }
    int nrun = 0;
    if (o->solutions == SOL_ALL)
        for (int i = 0; i < got; i++)
            ranks[nrun++] = i;
    else if (o->solutions == SOL_TOP1)
        ranks[nrun++] = 0;
    else
        for (int j = 0; j < o->nnames; j++) {
            int found = -1;
            for (int i = 0; i < got && found < 0; i++)
                if (!strcmp(names[i], o->names[j]))
                    found = i;
            ranks[nrun++] = found; /* -1: not offered for this size */
        }
    uint64_t ws_max = 0;
    for (int i = 0; i < nrun; i++)
        if (ranks[i] >= 0 && algos[ranks[i]].workspace_bytes > ws_max)
            ws_max = algos[ranks[i]].workspace_bytes;
    if (ws_max && (rc = cu.mem_alloc(&buf->ws, (size_t)ws_max)) != 0) {
        size_failure(bx, s, "workspace (%llu bytes): %s (%d)", (unsigned long long)ws_max, cu_error(rc), rc);
        return;
    }

    int best = -1; /* row index of the fastest passing candidate */
    double rank0_tflops = -1;
    for (int i = 0; i < nrun; i++) {
        struct row *r = new_row(&bx->rows, s);
        if (ranks[i] < 0) {
            r->name = o->names[i];
            r->pass = -1;
            set_status(r, "skipped: not offered for this size");
        } else if (bx->fatal) {
            r->rank = ranks[i];
            r->name = names[ranks[i]];
            set_status(r, "not run: the CUDA context failed earlier");
        } else {
            r->rank = ranks[i];
            r->name = names[ranks[i]];
            run_candidate(bx, &p, &args, &algos[ranks[i]], buf, (size_t)ws_max, host_d, d_count, smp, tol, r);
            if (r->pass > 0 && (best < 0 || r->tflops > bx->rows.v[best].tflops))
                best = bx->rows.n - 1;
            if (r->rank == 0 && r->timed)
                rank0_tflops = r->tflops;
        }
        finish_row(bx, r);
    }
    if (!o->quiet && best >= 0 && nrun > 1) {
        const struct row *b = &bx->rows.v[best];
        printf("  best: rank %d, %.2f TFLOP/s, %s", b->rank, b->tflops, b->name);
        if (rank0_tflops > 0 && b->tflops > 0)
            printf(" (kiln's pick, rank 0: %.1f%% of it)", 100.0 * rank0_tflops / b->tflops);
        putchar('\n');
    }
}

static void bench_size(struct bench *bx, struct size4 s)
{
    struct size_work w;
    memset(&w, 0, sizeof w);
    size_body(bx, s, &w);
    free_buffers(&w.buf);
    free(w.algos), free(w.ranks), free((void *)w.names);
    free(w.host_a), free(w.host_b), free(w.host_packed), free(w.host_d);
    free(w.smp.index), free(w.smp.ref);
}

/* ---------------------------------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    struct options o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    if (!(is_fp8(o.a) || is_half(o.a)) || !(is_fp8(o.b) || is_half(o.b)))
        return die("A and B must be fp8, f16 or bf16 (got %s x %s)", kiln_dtype_name(o.a), kiln_dtype_name(o.b));

    /* The device: primary context current before kiln_create, so that the handle binds to it. */
    const char *missing = load_driver();
    if (missing)
        return die("CUDA driver API not usable: %s", missing);
    CUresult cr = cu.init(0);
    if (cr)
        return die("cuInit: %s (%d): no usable NVIDIA GPU", cu_error(cr), cr);
    int count = 0;
    if ((cr = cu.device_get_count(&count)) != 0 || count < 1)
        return die("no CUDA device visible");
    if (o.device >= count)
        return die("--device %d: only %d device(s) visible", o.device, count);
    CUdevice dev;
    CUcontext ctx = NULL;
    char device_name[256] = "?";
    if ((cr = cu.device_get(&dev, o.device)) != 0)
        return die("cuDeviceGet(%d): %s (%d)", o.device, cu_error(cr), cr);
    cu.device_get_name(device_name, (int)sizeof device_name, dev);
    if ((cr = cu.primary_ctx_retain(&ctx, dev)) != 0)
        return die("cuDevicePrimaryCtxRetain: %s (%d)", cu_error(cr), cr);
    if ((cr = cu.ctx_set_current(ctx)) != 0)
        return die("cuCtxSetCurrent: %s (%d)", cu_error(cr), cr);

    struct bench bx;
    memset(&bx, 0, sizeof bx);
    bx.o = &o;
    kiln_status st = kiln_create(&bx.h);
    if (st != KILN_STATUS_SUCCESS)
        return die("kiln_create: %s", kiln_status_string(st));
    const char *arch = "none";
    if ((st = kiln_device_arch(bx.h, &arch)) != KILN_STATUS_SUCCESS || !arch || !strcmp(arch, "none"))
        return die("kiln found no device (kiln_device_arch: %s)", arch ? arch : kiln_status_string(st));

    /* The type combination, once, with a small problem: an unsupported one is a usage error. */
    kiln_problem probe;
    st = kiln_problem_init(&probe, o.a, o.b, o.d, o.layout, 64, 64, 64);
    if (st == KILN_STATUS_SUCCESS) {
        if (is_fp8(o.a) && is_fp8(o.b))
            probe.scale_a = probe.scale_b = KILN_SCALE_TENSOR;
        else if (is_fp8(o.b))
            probe.scale_b = KILN_SCALE_TENSOR;
        st = kiln_check_problem(bx.h, &probe);
    }
    if (st != KILN_STATUS_SUCCESS)
        return die("kiln does not take a=%s b=%s d=%s layout %s: %s%s", kiln_dtype_name(o.a), kiln_dtype_name(o.b),
                   kiln_dtype_name(o.d), layout_name(o.layout), kiln_status_string(st),
                   is_half(o.a) && is_fp8(o.b) ? " (f16/bf16 x fp8 takes a prepacked B: layout TN)" : "");

    bx.lut_a = make_lut(o.a);
    bx.lut_b = make_lut(o.b);
    bx.ev = calloc((size_t)2 * (size_t)o.iters, sizeof *bx.ev);
    bx.times = malloc((size_t)o.iters * sizeof *bx.times);
    if (!bx.lut_a || !bx.lut_b || !bx.ev || !bx.times)
        return die("out of memory");
    for (int i = 0; i < 2 * o.iters; i++)
        if ((cr = cu.event_create(&bx.ev[i], 0)) != 0)
            return die("cuEventCreate: %s (%d)", cu_error(cr), cr);

    FILE *json = NULL;
    if (o.csv_path && !(bx.csv = fopen(o.csv_path, "w")))
        return die("cannot write --csv %s: %s", o.csv_path, strerror(errno));
    if (o.json_path && !(json = fopen(o.json_path, "w")))
        return die("cannot write --json %s: %s", o.json_path, strerror(errno));
    if (bx.csv)
        csv_header(bx.csv);

    if (!o.quiet) {
        printf("kiln_bench: %s (%s), %s x %s -> %s, layout %s, %d size(s), warmup %d, iters %d, samples %d\n",
               device_name, arch, kiln_dtype_name(o.a), kiln_dtype_name(o.b), kiln_dtype_name(o.d),
               layout_name(o.layout), o.nsizes, o.warmup, o.iters, o.samples);
        print_table_header();
    }
    for (int i = 0; i < o.nsizes && !bx.fatal; i++)
        bench_size(&bx, o.sizes[i]);
    if (bx.fatal)
        fprintf(stderr, "kiln_bench: the CUDA context failed (see the status column); stopped\n");

    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < bx.rows.n; i++)
        bx.rows.v[i].pass > 0 ? passed++ : bx.rows.v[i].pass == 0 ? failed++ : skipped++;
    printf("kiln_bench: %d passed, %d failed, %d skipped%s\n", passed, failed, skipped,
           bx.fatal ? " (stopped early after a CUDA error)" : "");

    int exit_code = bx.failed || bx.fatal ? 1 : 0;
    if (bx.csv && fclose(bx.csv) != 0)
        exit_code = die("error writing --csv %s", o.csv_path);
    if (json) {
        int bad = write_json(json, &o, device_name, arch, &bx.rows);
        if (fclose(json) != 0 || bad)
            exit_code = die("error writing --json %s", o.json_path);
    }

    if (cu.event_destroy)
        for (int i = 0; i < 2 * o.iters; i++)
            cu.event_destroy(bx.ev[i]);
    kiln_destroy(bx.h);
    if (cu.primary_ctx_release)
        cu.primary_ctx_release(dev);
    free(bx.ev), free(bx.times), free(bx.lut_a), free(bx.lut_b), free(bx.rows.v);
    free(o.sizes), free(o.names), free(o.solutions_arg);
    return exit_code;
}
