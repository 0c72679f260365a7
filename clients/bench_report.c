/* kiln_bench's results (bench_report.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench_reference.h"
#include "bench_report.h"

struct row *new_row(struct rows *rows, struct size4 s)
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

void set_status(struct row *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->status, sizeof r->status, fmt, ap);
    va_end(ap);
}

const char *layout_name(kiln_layout l) { return l == KILN_LAYOUT_TN ? "TN" : "NN"; }

static void size_text(struct size4 s, char *buf, size_t len)
{
    if (s.batch > 1)
        snprintf(buf, len, "%lldx%lldx%lldx%lld", (long long)s.m, (long long)s.n, (long long)s.k,
                 (long long)s.batch);
    else
        snprintf(buf, len, "%lldx%lldx%lld", (long long)s.m, (long long)s.n, (long long)s.k);
}

void print_table_header(void)
{
    printf("%-22s %5s %10s %10s %10s %5s  %s\n", "size", "rank", "ms", "TFLOP/s", "rel_err", "pass", "name");
}

void print_row(const struct row *r)
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

void csv_header(FILE *f)
{
    fprintf(f, "m,n,k,batch,groups,group_mode,a,b,d,layout,rank,name,ms,min_ms,tflops,rel_err,pass,status\n");
}

void csv_row(FILE *f, const struct options *o, const struct row *r)
{
    fprintf(f, "%lld,%lld,%lld,%lld,%d,%s,%s,%s,%s,%s,%d,%s,", (long long)r->s.m, (long long)r->s.n,
            (long long)r->s.k, (long long)r->s.batch, o->groups, group_mode_name(o->group_mode), kiln_dtype_name(o->a),
            kiln_dtype_name(o->b), kiln_dtype_name(o->d), layout_name(o->layout), r->rank, r->name);
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

int write_json(FILE *f, const struct options *o, const char *device, const char *arch, const char *l2,
               const struct rows *rows)
{
    fputs("{\n  \"device\": ", f);
    json_string(f, device);
    fputs(",\n  \"arch\": ", f);
    json_string(f, arch);
    fprintf(f, ",\n  \"problem\": {\"a\": \"%s\", \"b\": \"%s\", \"d\": \"%s\", \"layout\": \"%s\", ",
            kiln_dtype_name(o->a), kiln_dtype_name(o->b), kiln_dtype_name(o->d), layout_name(o->layout));
    if (is_fp8(o->a) && is_fp8(o->b))
        fprintf(f, "\"scales\": \"%s\", \"scale_a\": 0.5, \"scale_b\": 2.0, ",
                o->block_scales ? "block" : o->row_scales ? "row" : "tensor");
    else if (is_fp8(o->b))
        fputs("\"scale_b\": 2.0, ", f);
    else
        fputs("\"alpha\": 1.0, \"beta\": 0.0, ", f);
    fprintf(f, "\"groups\": %d, \"group_mode\": \"%s\", ", o->groups, group_mode_name(o->group_mode));
    fprintf(f, "\"solutions\": \"%s\", \"warmup\": %d, \"iters\": %d, \"samples\": %d, \"l2\": \"%s\"},\n  \"rows\": [",
            o->solutions == SOL_ALL ? "all" : o->solutions == SOL_TOP1 ? "top1" : "list", o->warmup, o->iters,
            o->samples, l2);
    for (int i = 0; i < rows->n; i++) {
        const struct row *r = &rows->v[i];
        fprintf(f,
                "%s\n    {\"m\": %lld, \"n\": %lld, \"k\": %lld, \"batch\": %lld, \"groups\": %d, "
                "\"group_mode\": \"%s\", \"a\": \"%s\", \"b\": \"%s\", \"d\": \"%s\", \"layout\": \"%s\", "
                "\"rank\": %d, \"name\": ",
                i ? "," : "", (long long)r->s.m, (long long)r->s.n, (long long)r->s.k, (long long)r->s.batch,
                o->groups, group_mode_name(o->group_mode), kiln_dtype_name(o->a), kiln_dtype_name(o->b),
                kiln_dtype_name(o->d), layout_name(o->layout), r->rank);
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
