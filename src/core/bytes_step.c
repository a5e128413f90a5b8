/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bytes_step.c - a request's byte view as a step (bytes_step.h).
 */
#include "core/bytes_step.h"

#include <stdlib.h>
#include <string.h>

static int bytes_start(void *state)
{
    ct_bytes_step *b = state;
    int rc = ct_bytes_pack(&b->v.s, b->comm);
    if (rc == MPI_SUCCESS && b->pack_recv)
        rc = ct_bytes_pack(&b->v.r, b->comm);
    return rc == MPI_SUCCESS ? ct_sched_start(&b->inner) : rc;
}

static int bytes_test(void *state, int *done)
{
    ct_bytes_step *b = state;
    const int rc = ct_sched_test(&b->inner, done);
    return *done && rc == MPI_SUCCESS ? ct_bytes_unpack(&b->v.r, b->comm) : rc;
}

static int bytes_wait(void *state)
{
    ct_bytes_step *b = state;
    const int rc = ct_sched_wait(&b->inner);
    return rc == MPI_SUCCESS ? ct_bytes_unpack(&b->v.r, b->comm) : rc;
}

/* Frees a step that was not added, or one its schedule releases. */
static void step_free(ct_bytes_step *b)
{
    if (b == NULL)
        return;
    ct_sched_free(&b->inner);
    ct_bytes_pair_free(&b->v);
    free(b);
}

static void bytes_release(void *state) { step_free(state); }

static const ct_step bytes_step = {bytes_start, bytes_test, bytes_wait, bytes_release};

/* A new step for s (its inner schedule prepared on s's tag), or NULL. */
static ct_bytes_step *step_new(ct_sched *s, ct_ctx *ctx)
{
    ct_bytes_step *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->comm = s->comm;
    ct_sched_prepare(&b->inner, ctx, s->tag, 1);
    return b;
}

/* Appends b, built, to s as its step (s owns b from here, even on failure). */
static int step_add(ct_sched *s, ct_bytes_step *b)
{
    const int rc = ct_sched_reserve(s, 1, 1);
    if (rc != MPI_SUCCESS) {
        step_free(b);
        return rc;
    }
    ct_sched_step(s, &bytes_step, b,
                  sizeof *b + ct_bytes_pair_bytes(&b->v) + ct_sched_own_bytes(&b->inner));
    return MPI_SUCCESS;
}

int ct_bytes_step_begin(ct_sched *s, ct_ctx *ctx, ct_bytes_pair *v, ct_bytes_step **step,
                        ct_sched **into)
{
    *step = NULL;
    *into = s;
    if (ct_bytes_pair_in_place(v))
        return MPI_SUCCESS;
    *step = step_new(s, ctx);
    if (*step == NULL)
        return MPI_ERR_NO_MEM;
    (*step)->v = *v;
    memset(v, 0, sizeof *v);
    *into = &(*step)->inner;
    return MPI_SUCCESS;
}

int ct_bytes_step_end(ct_sched *s, ct_bytes_step *step, int rc)
{
    if (step == NULL)
        return rc;
    if (rc != MPI_SUCCESS) {
        step_free(step);
        return rc;
    }
    return step_add(s, step);
}
