/* The field-level texts behind kiln_last_error. A failing check records why with kiln_fail (on the calling thread);
 * the API entry point that called it then files the text under its handle with kiln_call_end, prefixed by its own
 * name ("kiln_check_problem: lda = 100 is less than k = 128"), or clears it when the call succeeds. Calls without a
 * handle (and calls whose handle argument is NULL) file it on the calling thread: kiln_last_error(NULL) reads it. */
#ifndef KILN_ERROR_H
#define KILN_ERROR_H

#include <pthread.h>

#include "kiln/kiln.h"
#include "select.h"

/* Room for one text, with a kernel name in it. */
#define KILN_ERROR_LEN 768

/* A handle's last text, guarded by its own lock (a handle may be used from several threads). */
typedef struct kiln_error_slot {
    pthread_mutex_t lock;
    char text[KILN_ERROR_LEN];
} kiln_error_slot;

int kiln_error_slot_init(kiln_error_slot *slot);
void kiln_error_slot_destroy(kiln_error_slot *slot);

/* The start of an API call: forgets what an earlier call on this thread recorded. */
void kiln_call_begin(void);

/* Records why the current call fails and returns st. A later kiln_fail in the same call replaces the text, so the
 * check that decides the status writes it. */
KILN_FORMAT(2, 3) kiln_status kiln_fail(kiln_status st, const char *fmt, ...);

/* The text kiln_fail recorded in the current call ("" when none). */
const char *kiln_fail_text(void);

/* The end of API call `fn`: files "fn: text" (the status' own text when no check recorded one) under slot, or under
 * the calling thread when slot is NULL; "" on success. Returns st. */
kiln_status kiln_call_end(kiln_error_slot *slot, const char *fn, kiln_status st);

/* A copy of the slot's text (the thread's own text when slot is NULL), valid until the next call on this thread. */
const char *kiln_error_read(kiln_error_slot *slot);

#endif /* KILN_ERROR_H */
