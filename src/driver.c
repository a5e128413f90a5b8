/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver.c - the one skeleton of every collective's driver (driver.h).
 */
#include "driver.h"
#include "core/cache.h"
#include "core/state.h"
#include "stats.h"

int ct_drive_run(const ct_driver *d, ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    const int stats = ct_settings_get()->stats;
    const double t0 = stats ? PMPI_Wtime() : 0;
    const int index = stats ? ct_algorithm_index(ch->alg) : -1;
    const double bytes = stats ? d->bytes_sent(in->args, ctx) : 0;
    ctx->call_extra = 0;
    ctx->stat_index = index; /* a persistent request made here counts its starts */
    ctx->stat_bytes = bytes;
    ct_cache_enter(ctx);
    const int rc = d->run(ctx, ch, in);
    ct_cache_leave(ctx);
    /* -2: coltune's persistent request took the entry; its init is no call */
    const int init_only = ctx->stat_index == -2;
    ctx->stat_index = -1;
    if (rc == MPI_SUCCESS && stats)
        ct_stats_record(index, init_only ? 0 : 1, init_only ? 0 : bytes, PMPI_Wtime() - t0,
                        ctx->call_extra);
    return rc;
}

/* A call the chosen algorithm cannot serve, forwarded: under the statistics,
 * a call of the fallback (pmpi), as where the rules chose it. */
static int forward_counted(const ct_driver *d, ct_ctx *ctx, const ct_decide_input *in)
{
    const double t0 = PMPI_Wtime();
    const int rc = d->forward(in->args);
    if (rc == MPI_SUCCESS)
        ct_stats_record(ct_algorithm_index(ct_algorithm_fallback(in->coll)), 1,
                        d->bytes_sent(in->args, ctx), PMPI_Wtime() - t0, 0);
    return rc;
}

/* A learner's timed call (select/adapt.h): run whatever the turn chose, even where
 * it forwards (counted as the fallback's, as ct_drive counts it), and report it;
 * every rank reports every timed call, whatever it returned, so the round ends at
 * the same call on all. */
static int drive_turn(const ct_driver *d, ct_ctx *ctx, const ct_choice *ch,
                      const ct_decide_input *in)
{
    int rc;
    if (!ch->fallback && !d->usable(in->args, ctx))
        rc = ct_settings_get()->stats ? forward_counted(d, ctx, in) : d->forward(in->args);
    else
        rc = ct_drive_run(d, ctx, ch, in);
    const int rc_record = ct_adapt_record(ctx, &ch->turn);
    return rc != MPI_SUCCESS ? rc : rc_record;
}

int ct_drive_empty(const ct_driver *d, ct_coll coll, const void *args)
{
    if (!ct_settings_get()->stats)
        return d->forward(args);
    const double t0 = PMPI_Wtime();
    const int rc = d->forward(args);
    ct_stats_record(ct_algorithm_index(ct_algorithm_fallback(coll)), 1, 0, PMPI_Wtime() - t0, 0);
    return rc;
}

int ct_drive(const ct_driver *d, MPI_Comm comm, ct_decide_input *in, const ct_spec *forced)
{
    ct_ctx *ctx;
    ct_choice ch;
    const int rc = ct_decide_call(comm, in, forced, &ctx, &ch);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx != NULL && ch.turn.timed)
        return drive_turn(d, ctx, &ch, in);
    /* The fallback (pmpi) is the MPI library's routine: nothing to adapt, and
     * nothing to time unless the statistics count it. */
    if (ctx == NULL || (ch.fallback && !ct_settings_get()->stats) ||
        (!ch.fallback && !d->usable(in->args, ctx))) {
        if (in->persistent && in->learns) /* a learner of its own (learn.h), unused */
            ct_adapt_release(ch.turn.learner);
        if (ctx != NULL && !ch.fallback && ct_settings_get()->stats)
            return forward_counted(d, ctx, in);
        return d->forward(in->args);
    }
    return ct_drive_run(d, ctx, &ch, in);
}
