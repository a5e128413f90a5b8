/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state.c - the one global state struct.
 */
#include "core/state.h"

#include <stdlib.h>

static const ct_settings no_settings; /* before the configuration is read */

static ct_state the_state = {
    .log_rank = -1,
    .keyval = MPI_KEYVAL_INVALID,
    .node = {.leader = -1},
    .settings = &no_settings,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .requests = {.lock = PTHREAD_MUTEX_INITIALIZER},
    .made = PTHREAD_COND_INITIALIZER,
    .fortran = {.once = PTHREAD_ONCE_INIT},
};

ct_state *ct_state_get(void) { return &the_state; }

void ct_state_lock(ct_state *st) { pthread_mutex_lock(&st->lock); }
void ct_state_unlock(ct_state *st) { pthread_mutex_unlock(&st->lock); }
void ct_state_wait(ct_state *st) { pthread_cond_wait(&st->made, &st->lock); }
void ct_state_wake(ct_state *st) { pthread_cond_broadcast(&st->made); }

void ct_outstanding_add(ct_outstanding *o)
{
    pthread_mutex_lock(&the_state.lock);
    o->prev = NULL;
    o->next = the_state.outstanding;
    if (o->next != NULL)
        o->next->prev = o;
    the_state.outstanding = o;
    o->listed = 1;
    pthread_mutex_unlock(&the_state.lock);
}

static void unlink_outstanding(ct_outstanding *o)
{
    if (!o->listed)
        return;
    if (o->prev != NULL)
        o->prev->next = o->next;
    else
        the_state.outstanding = o->next;
    if (o->next != NULL)
        o->next->prev = o->prev;
    o->listed = 0;
}

void ct_outstanding_remove(ct_outstanding *o)
{
    pthread_mutex_lock(&the_state.lock);
    unlink_outstanding(o);
    pthread_mutex_unlock(&the_state.lock);
}

void ct_outstanding_complete_all(void)
{
    for (;;) {
        pthread_mutex_lock(&the_state.lock);
        ct_outstanding *o = the_state.outstanding;
        if (o != NULL)
            unlink_outstanding(o);
        pthread_mutex_unlock(&the_state.lock);
        if (o == NULL)
            return;
        o->complete(o); /* outside the lock: its wait runs the progress engine */
    }
}

void ct_state_free(void)
{
    for (int i = 0; i < the_state.once.count; i++)
        free(the_state.once.msgs[i]);
    free(the_state.once.msgs);
    the_state.once.msgs = NULL;
    the_state.once.count = the_state.once.cap = 0;
}
