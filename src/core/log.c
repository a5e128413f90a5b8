/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c - message output and the once-only filter.
 */
#include "core/log.h"
#include "core/state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *ct_malloc(size_t n) { return malloc(n); }

void ct_log_set_rank(int rank) { ct_state_get()->log_rank = rank; }

static void emit(const char *text)
{
    int rank = ct_state_get()->log_rank;
    if (rank >= 0)
        fprintf(stderr, "coltune[%d]: %s\n", rank, text);
    else
        fprintf(stderr, "coltune: %s\n", text);
    fflush(stderr);
}

void ct_log(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    emit(text);
}

/* The set of messages already printed: a small growable array, searched
 * linearly (it holds one entry per distinct warning, a handful at most). */
static int seen_before(ct_state *st, const char *text)
{
    for (int i = 0; i < st->once.count; i++)
        if (strcmp(st->once.msgs[i], text) == 0)
            return 1;
    if (st->once.count == st->once.cap) {
        int cap = st->once.cap ? 2 * st->once.cap : 16;
        char **m = realloc(st->once.msgs, (size_t)cap * sizeof *m);
        if (m == NULL)
            return 0; /* out of memory: print again rather than lose it */
        st->once.msgs = m;
        st->once.cap = cap;
    }
    char *copy = strdup(text);
    if (copy != NULL)
        st->once.msgs[st->once.count++] = copy;
    return 0;
}

void ct_log_once(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    int seen = seen_before(st, text);
    ct_state_unlock(st);
    if (!seen)
        emit(text);
}

void ct_log_mpi_error(int rc, const char *what, const char *file, int line)
{
    char estr[MPI_MAX_ERROR_STRING];
    int elen = 0;
    if (PMPI_Error_string(rc, estr, &elen) != MPI_SUCCESS)
        snprintf(estr, sizeof estr, "error code %d", rc);
    ct_log_once("%s failed at %s:%d: %s", what, file, line, estr);
}
