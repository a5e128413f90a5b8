/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver.h - the one skeleton of every collective's driver (alltoallv.c,
 * allgather_inter.c, sdde.c): decide, hand to the MPI library what coltune
 * must not serve, run the chosen algorithm through the driver's own
 * adapters (in place, bytes), timed, and count it in the statistics.
 */
#ifndef CT_DRIVER_H
#define CT_DRIVER_H

#include "select/decide.h"

/* What a collective's driver gives the skeleton; args is the call's
 * description (algorithms.h), in->args. */
typedef struct ct_driver {
    /* The MPI library's own routine for the call. */
    int (*forward)(const void *args);
    /* Whether the MPI library would accept the call's local arguments (a
     * negative count, a null datatype: no): a call it would reject is
     * forwarded, so the user gets its error class, as without coltune. Asked
     * only when an algorithm other than pmpi was chosen. A driver may also
     * refuse here what the communicator makes its algorithms unfit for, the
     * same on every rank (a neighbourhood read at the first call, kept on
     * ctx: neighbor.c). */
    int (*usable)(const void *args, ct_ctx *ctx);
    /* Adapts the call for the algorithm and runs it; adds what it allocated
     * to ctx->call_extra. */
    int (*run)(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in);
    /* Bytes this rank sends, for the statistics. */
    double (*bytes_sent)(const void *args, const ct_ctx *ctx);
} ct_driver;

/* One call of a collective whose fallback is the MPI library's routine
 * (pmpi): decides on comm with in (and forced, from the direct API), then
 * forwards or runs it (ct_drive_run). */
int ct_drive(const ct_driver *d, MPI_Comm comm, ct_decide_input *in, const ct_spec *forced);

/* A call that moves no byte (select/decide.h: nothing to do): forwarded at
 * once, and counted as a call of the collective's pmpi (COLTUNE_STATS). */
int ct_drive_empty(const ct_driver *d, ct_coll coll, const void *args);

/* Runs the chosen algorithm on ctx with d->run, timed, and counts a call
 * that succeeded in the statistics (COLTUNE_STATS). */
int ct_drive_run(const ct_driver *d, ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in);

#endif
