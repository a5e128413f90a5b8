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

void ct_state_free(void)
{
    for (int i = 0; i < the_state.once.count; i++)
        free(the_state.once.msgs[i]);
    free(the_state.once.msgs);
    the_state.once.msgs = NULL;
    the_state.once.count = the_state.once.cap = 0;
}
