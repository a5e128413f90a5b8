/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state.c - the one global state struct and lazy initialisation.
 */
#include "core/state.h"
#include "core/log.h"

#include <stdlib.h>

static ct_state the_state = {
    .log_rank = -1,
    .keyval = MPI_KEYVAL_INVALID,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .fortran = {.once = PTHREAD_ONCE_INIT},
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

ct_state *ct_state_get(void) { return &the_state; }

void ct_state_lock(ct_state *st) { pthread_mutex_lock(&st->lock); }
void ct_state_unlock(ct_state *st) { pthread_mutex_unlock(&st->lock); }

static void read_config(void)
{
    ct_config_read(&the_state.cfg, NULL);
    ct_stats_init(&the_state.stats);
    the_state.init_done = 1;
}

void ct_state_init(int report_rank)
{
    pthread_once(&init_once, read_config);
    ct_state_lock(&the_state);
    /* Errors in the configuration are reported once, by one rank: the first
     * caller that knows its rank decides (rank 0 prints, the others stay quiet). */
    int report = !the_state.errors_reported && report_rank == 0;
    if (report_rank >= 0)
        the_state.errors_reported = 1;
    ct_state_unlock(&the_state);
    if (report)
        ct_config_report(&the_state.cfg);
}

void ct_state_free(void)
{
    ct_config_free(&the_state.cfg);
    ct_stats_free(&the_state.stats);
    ct_device_release(&the_state.device);
    for (int i = 0; i < the_state.once.count; i++)
        free(the_state.once.msgs[i]);
    free(the_state.once.msgs);
    the_state.once.msgs = NULL;
    the_state.once.count = the_state.once.cap = 0;
}
