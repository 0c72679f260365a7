/* Last-error texts (error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* What the current call on this thread recorded, and the thread's handle-less text. */
static _Thread_local char detail[KILN_ERROR_LEN];
static _Thread_local char thread_text[KILN_ERROR_LEN];
/* kiln_error_read's copy of a handle's text. */
static _Thread_local char read_copy[KILN_ERROR_LEN];

int kiln_error_slot_init(kiln_error_slot *slot)
{
    slot->text[0] = '\0';
    return pthread_mutex_init(&slot->lock, NULL) == 0;
}

void kiln_error_slot_destroy(kiln_error_slot *slot) { pthread_mutex_destroy(&slot->lock); }

void kiln_call_begin(void) { detail[0] = '\0'; }

kiln_status kiln_fail(kiln_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return st;
}

const char *kiln_fail_text(void) { return detail; }

/* dst[cap] = a b c, cut to fit. */
static void join(char *dst, size_t cap, const char *a, const char *b, const char *c)
{
    size_t used = 0;
    const char *parts[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        for (const char *q = parts[i]; *q && used + 1 < cap; q++)
            dst[used++] = *q;
    dst[used] = '\0';
}

kiln_status kiln_call_end(kiln_error_slot *slot, const char *fn, kiln_status st)
{
    char text[KILN_ERROR_LEN];
    if (st == KILN_STATUS_SUCCESS)
        text[0] = '\0';
    else
        join(text, sizeof text, fn, ": ", detail[0] ? detail : kiln_status_string(st));
    if (!slot) {
        memcpy(thread_text, text, sizeof text);
        return st;
    }
    pthread_mutex_lock(&slot->lock);
    memcpy(slot->text, text, sizeof text);
    pthread_mutex_unlock(&slot->lock);
    return st;
}

const char *kiln_error_read(kiln_error_slot *slot)
{
    if (!slot)
        return thread_text;
    pthread_mutex_lock(&slot->lock);
    memcpy(read_copy, slot->text, sizeof read_copy);
    pthread_mutex_unlock(&slot->lock);
    return read_copy;
}
