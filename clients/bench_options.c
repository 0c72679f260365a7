/* kiln_bench's command line (bench_options.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench_options.h"
#include "bench_reference.h"

#define MAX_ITERS 100000
#define MAX_GROUPS 65536 /* every group's inputs are copies of one: more only multiplies host and device memory */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln_bench --a TYPE --b TYPE --d TYPE [--layout TN|NN] [--sizes MxNxK[xBATCH],...]\n"
            "                  [--sizes-file FILE] [--solutions all|top1|NAME,NAME...] [--warmup 5] [--iters 20]\n"
            "                  [--samples 256] [--csv FILE] [--json FILE] [--device N] [--quiet]\n"
            "                  [--block-scales | --row-scales] [--fast-accum] [--groups G [--group-mode MODE]]\n"
            "                  [--warm-l2]\n"
            "  TYPE: f32 f16 bf16 e4m3 e5m2 e4m3fnuz e5m2fnuz (fp8 x fp8: scaled GEMM, TN; f16/bf16 x fp8: B\n"
            "        prepacked, TN; f16 x f16 / bf16 x bf16: GEMM). D: f32, f16 or bf16.\n"
            "  --block-scales: fp8 x fp8 with block scales (1x128 for A, 128x128 for B), all of one value each, in the\n"
            "        quantizers' layouts (16-byte strides)\n"
            "  --row-scales: fp8 x fp8 with a scale per row of A and per column of B, all of one value each\n"
            "  --fast-accum: fp8 x fp8 that allows fast accumulation (kiln_problem.fast_accum = 1)\n"
            "  --groups G: grouped fp8 x fp8 GEMM (TN) of G equal groups; MxNxK is one group's: M rows per group\n"
            "        (contiguous: m = G*M; masked: M rows in each of G batches), N, and K (k-grouped: k = G*K)\n"
            "  --group-mode contiguous|masked|k: how the groups are laid out (default contiguous)\n"
            "  --warm-l2: time every run on one copy of the operands, in L2 where they fit (default: the runs cycle\n"
            "        through copies of A and B holding 150 MB, so that each reads them from HBM, as a model's next\n"
            "        call of a layer does)\n"
            "  default sizes: 1024x1024x1024,4096x4096x4096,8192x8192x8192\n"
            "  exit status: 0 all passed, 1 a candidate failed, 2 usage or setup error\n");
}

int die(const char *fmt, ...)
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

const char *group_mode_name(kiln_group_mode mode)
{
    switch (mode) {
    case KILN_GROUP_CONTIGUOUS:
        return "contiguous";
    case KILN_GROUP_MASKED:
        return "masked";
    case KILN_GROUP_K:
        return "k";
    default:
        return "none";
    }
}

/* The options that do not go together, and sizes a grouped problem cannot have. */
static int check_combination(struct options *o)
{
    int fp8 = is_fp8(o->a) && is_fp8(o->b);
    if (o->block_scales && o->row_scales)
        return die("--block-scales and --row-scales exclude each other");
    if ((o->block_scales || o->row_scales) && !fp8)
        return die("%s: fp8 x fp8 only (got %s x %s)", o->block_scales ? "--block-scales" : "--row-scales",
                   kiln_dtype_name(o->a), kiln_dtype_name(o->b));
    if (!o->groups) {
        if (o->group_mode != KILN_GROUP_NONE)
            return die("--group-mode needs --groups");
        return 0;
    }
    if (o->group_mode == KILN_GROUP_NONE)
        o->group_mode = KILN_GROUP_CONTIGUOUS;
    if (!fp8)
        return die("--groups: grouped GEMMs are fp8 x fp8 (got %s x %s)", kiln_dtype_name(o->a),
                   kiln_dtype_name(o->b));
    if (o->layout != KILN_LAYOUT_TN)
        return die("--groups: grouped GEMMs run in the TN layout only");
    for (int i = 0; i < o->nsizes; i++) {
        const struct size4 *s = &o->sizes[i];
        if (s->batch != 1)
            return die("--groups: size %lldx%lldx%lldx%lld has a BATCH; the groups take its place (give MxNxK)",
                       (long long)s->m, (long long)s->n, (long long)s->k, (long long)s->batch);
        if (o->group_mode == KILN_GROUP_CONTIGUOUS && s->m * o->groups > INT32_MAX)
            return die("--groups %d: size %lldx%lldx%lld makes %lld rows (G*M), more than 2^31 - 1", o->groups,
                       (long long)s->m, (long long)s->n, (long long)s->k, (long long)(s->m * o->groups));
        if (o->group_mode == KILN_GROUP_K && s->k * o->groups > INT32_MAX)
            return die("--groups %d --group-mode k: size %lldx%lldx%lld makes k = G*K = %lld, more than 2^31 - 1",
                       o->groups, (long long)s->m, (long long)s->n, (long long)s->k, (long long)(s->k * o->groups));
        /* k-grouped ends but the last are multiples of 128 (KILN_K_GROUP_ALIGN): equal groups need K one */
        if (o->group_mode == KILN_GROUP_K && o->groups > 1 && s->k % KILN_K_GROUP_ALIGN)
            return die("--group-mode k: K per group must be a multiple of %d with more than one group (every group's "
                       "end but the last is), got %lldx%lldx%lld",
                       KILN_K_GROUP_ALIGN, (long long)s->m, (long long)s->n, (long long)s->k);
    }
    return 0;
}

int parse_args(int argc, char **argv, struct options *o)
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
        if (!strcmp(arg, "--block-scales")) {
            o->block_scales = 1;
            continue;
        }
        if (!strcmp(arg, "--warm-l2")) {
            o->warm_l2 = 1;
            continue;
        }
        if (!strcmp(arg, "--row-scales")) {
            o->row_scales = 1;
            continue;
        }
        if (!strcmp(arg, "--fast-accum")) {
            o->fast_accum = 1;
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
        } else if (!strcmp(arg, "--groups")) {
            if (!parse_int(val, 1, MAX_GROUPS, &o->groups))
                return die("--groups: want 1..%d, got '%s'", MAX_GROUPS, val);
        } else if (!strcmp(arg, "--group-mode")) {
            if (!strcmp(val, "contiguous"))
                o->group_mode = KILN_GROUP_CONTIGUOUS;
            else if (!strcmp(val, "masked"))
                o->group_mode = KILN_GROUP_MASKED;
            else if (!strcmp(val, "k"))
                o->group_mode = KILN_GROUP_K;
            else
                return die("--group-mode: want contiguous, masked or k, got '%s'", val);
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
    return check_combination(o);
}

void options_free(struct options *o)
{
    free(o->sizes), free(o->names), free(o->solutions_arg);
    o->sizes = NULL, o->names = NULL, o->solutions_arg = NULL;
}
