/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * learn.c - a persistent request that learns (learn.h).
 */
#include "learn.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* pmpi's turns: the MPI library's persistent request, as a step        */
/* ------------------------------------------------------------------ */

static int lib_start(void *state) { return PMPI_Start((MPI_Request *)state); }

static int lib_test(void *state, int *done)
{
    return PMPI_Test((MPI_Request *)state, done, MPI_STATUS_IGNORE);
}

static int lib_wait(void *state) { return PMPI_Wait((MPI_Request *)state, MPI_STATUS_IGNORE); }

static void lib_free(void *state)
{
    MPI_Request *lib = state;
    if (*lib != MPI_REQUEST_NULL)
        PMPI_Request_free(lib);
    free(lib);
}

static const ct_step lib_step = {lib_start, lib_test, lib_wait, lib_free};

/* s: one step that starts and completes the library's request for the call. */
static int pmpi_plan(ct_sched *s, const void *fwd_args, const ct_learn_ops *ops)
{
    int rc;
    MPI_Request *lib = malloc(sizeof *lib);
    if (lib == NULL)
        return MPI_ERR_NO_MEM;
    *lib = MPI_REQUEST_NULL;
    rc = ops->forward_init(fwd_args, lib);
    if (rc == MPI_SUCCESS)
        rc = ct_sched_reserve(s, 1, 1);
    if (rc != MPI_SUCCESS) {
        lib_free(lib);
        return rc;
    }
    ct_sched_step(s, &lib_step, lib, sizeof *lib);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The learning step                                                   */
/* ------------------------------------------------------------------ */

typedef struct learn_state {
    ct_ctx *ctx;
    ct_request *r; /* the request: under COLTUNE_STATS a start counts for its candidate */
    struct ct_learner *l;
    int nslots;
    ct_sched *subs;     /* [nslots]: each slot's schedule; pmpi's two share CT_ADAPT_BASE's */
    ct_adapt_turn turn; /* the running start's */
    int running;        /* its schedule */
    int agreeing;       /* the running start posted the learner's agreement */
    MPI_Request agree;
} learn_state;

/* The learner's agreement in flight, completed: a start whose schedule
 * failed may leave it so (the request completed with the error). */
static void agree_finish(learn_state *ls)
{
    if (ls->agree != MPI_REQUEST_NULL)
        (void)PMPI_Wait(&ls->agree, MPI_STATUS_IGNORE);
}

static void learn_free(void *state)
{
    learn_state *ls = state;
    agree_finish(ls);
    if (ls->subs != NULL)
        for (int s = 0; s < ls->nslots; s++)
            ct_sched_free(&ls->subs[s]);
    free(ls->subs);
    ct_adapt_release(ls->l);
    free(ls);
}

/* A start: the last iteration timed and, where it posted an agreement,
 * judged (its completion waited for it); what the learner runs now. */
static int learn_start(void *state)
{
    learn_state *ls = state;
    ct_adapt_cand c;
    if (ls->agreeing) {
        agree_finish(ls);
        ls->agreeing = 0;
        (void)ct_adapt_agreed(ls->ctx, ls->l);
    }
    if (ls->turn.timed) /* the last start's iteration ends here */
        (void)ct_adapt_record(ls->ctx, &ls->turn);
    /* A failure leaves this rank's learner decided on pmpi (adapt.c) and
     * is the start's error: the other ranks' requests cannot complete. */
    const int rc = ct_adapt_agree_post(ls->ctx, ls->l, &ls->agree);
    if (rc != MPI_SUCCESS)
        return rc;
    ls->agreeing = ls->agree != MPI_REQUEST_NULL;
    ct_adapt_next(ls->l, 1, &ls->turn, &c);
    if (ls->r->stat_index >= 0)
        ls->r->stat_index = ct_algorithm_index(c.alg);
    ls->running = ls->turn.slot == CT_ADAPT_AA ? CT_ADAPT_BASE : ls->turn.slot;
    return ct_sched_start(&ls->subs[ls->running]);
}

static int learn_test(void *state, int *done)
{
    learn_state *ls = state;
    int rc, ran = 0, agreed = 1;
    CT_CALL(ct_sched_test(&ls->subs[ls->running], &ran));
    if (ls->agree != MPI_REQUEST_NULL)
        CT_CALL(PMPI_Test(&ls->agree, &agreed, MPI_STATUS_IGNORE));
out:
    *done = ran && agreed;
    return rc;
}

static int learn_wait(void *state)
{
    learn_state *ls = state;
    int rc;
    CT_CALL(ct_sched_wait(&ls->subs[ls->running]));
    if (ls->agree != MPI_REQUEST_NULL)
        CT_CALL(PMPI_Wait(&ls->agree, MPI_STATUS_IGNORE));
out:
    return rc;
}

static const ct_step learn_step = {learn_start, learn_test, learn_wait, learn_free};

int ct_learn_plan(ct_request *r, ct_ctx *ctx, struct ct_learner *l, const void *args,
                  const void *fwd_args, const ct_learn_ops *ops)
{
    int rc;
    learn_state *ls = calloc(1, sizeof *ls);
    if (ls == NULL) {
        ct_adapt_release(l);
        return MPI_ERR_NO_MEM;
    }
    ls->ctx = ctx;
    ls->r = r;
    ls->l = l;
    ls->agree = MPI_REQUEST_NULL;
    ls->nslots = ct_adapt_slots(l);
    ls->subs = calloc((size_t)ls->nslots, sizeof *ls->subs);
    if (ls->subs == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    for (int s = 0; s < ls->nslots; s++)
        ct_sched_prepare(&ls->subs[s], ctx, r->sched.tag, 1);
    size_t bytes = sizeof *ls + (size_t)ls->nslots * sizeof *ls->subs;
    CT_CALL(pmpi_plan(&ls->subs[CT_ADAPT_BASE], fwd_args, ops));
    for (int s = CT_ADAPT_AA + 1; s < ls->nslots; s++) {
        CT_CALL(ops->build(args, ctx, ct_adapt_slot(l, s), &ls->subs[s]));
        bytes += ct_sched_own_bytes(&ls->subs[s]);
    }
    CT_CALL(ct_sched_reserve(&r->sched, 1, 1));
    ct_sched_step(&r->sched, &learn_step, ls, bytes); /* r's schedule owns ls from here */
    return MPI_SUCCESS;
out:
    learn_free(ls);
    return rc;
}

int ct_learn_schedule(ct_request *r, ct_ctx *ctx, struct ct_learner *learner,
                      const ct_choice *ch, const void *args, const void *fwd_args,
                      const ct_learn_ops *ops)
{
    if (learner != NULL)
        return ct_learn_plan(r, ctx, learner, args, fwd_args, ops);
    ct_adapt_cand chosen = {.alg = ch->alg};
    memcpy(chosen.params, ch->params, sizeof chosen.params);
    return ops->build(args, ctx, &chosen, &r->sched);
}

int ct_learn_start(ct_request *r, ct_ctx *ctx, struct ct_learner *learner,
                   const ct_choice *ch, const void *args, const void *fwd_args,
                   const ct_learn_ops *ops, MPI_Request *user)
{
    int rc = ct_learn_schedule(r, ctx, learner, ch, args, fwd_args, ops);
    if (rc == MPI_SUCCESS)
        rc = ct_request_launch(ctx, &r, user);
    ct_request_discard(r); /* NULL once the application's */
    return rc;
}
