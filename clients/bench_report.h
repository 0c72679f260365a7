/* kiln_bench's results: one row per candidate and size, printed as a table and written as CSV and JSON
 * (clients/README.md gives the columns; tuning and bench scripts parse them). */
#ifndef KILN_BENCH_REPORT_H
#define KILN_BENCH_REPORT_H

#include <stdio.h>

#include "bench_options.h"

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

/* A new row for size s: rank -1, name "-", not passed, status "ok". Exits (2) when out of memory. */
struct row *new_row(struct rows *rows, struct size4 s);
PRINTF_LIKE(2, 3) void set_status(struct row *r, const char *fmt, ...);

const char *layout_name(kiln_layout l);

void print_table_header(void);
void print_row(const struct row *r);
void csv_header(FILE *f);
void csv_row(FILE *f, const struct options *o, const struct row *r);
/* The whole report: {"device", "arch", "problem", "rows"}. -1 on a write error. */
/* l2: how the runs found L2 ("cold", "warm", or "partly warm" where the operand copies did not fit). */
int write_json(FILE *f, const struct options *o, const char *device, const char *arch, const char *l2,
               const struct rows *rows);

#endif /* KILN_BENCH_REPORT_H */
