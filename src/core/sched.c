/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sched.c - the one engine of schedules of rounds (sched.h).
 */
#include "core/sched.h"
#include "core/context.h"
#include "core/datatype.h"
#include "core/log.h"

#include <stdlib.h>

/* The layout of a schedule's memory: ops, rounds, then the requests (at most
 * two per operation: a window holds its send slots, at most the round's
 * sends or one, and its receive slots, likewise). */
static size_t ops_bytes(int max_ops) { return CT_ALIGN_UP((size_t)max_ops * sizeof(ct_op)); }
static size_t rounds_bytes(int max_rounds)
{
    return CT_ALIGN_UP((size_t)max_rounds * sizeof(ct_round));
}

static size_t sched_bytes(int max_ops, int max_rounds)
{
    return ops_bytes(max_ops) + rounds_bytes(max_rounds) +
           CT_ALIGN_UP(2 * (size_t)max_ops * sizeof(MPI_Request));
}

static const ct_ctx_buf_key sched_buf = {"schedule"};

void ct_sched_prepare(ct_sched *s, ct_ctx *ctx, int tag, int own)
{
    /* Field by field, on the path of every blocking call. */
    s->ctx = ctx;
    s->own = own;
    s->comm = ctx->comm;
    s->local_comm = ctx->local_comm;
    s->rank = ctx->rank;
    s->tag = tag;
    s->poll = CT_POLL_WAITANY;
    s->ops = NULL;
    s->rounds = NULL;
    s->reqs = NULL;
    s->nops = s->max_ops = s->nrounds = s->max_rounds = 0;
    s->overflow = 0;
    s->round = s->nreqs = s->next_send = s->next_recv = 0;
    s->owned = NULL;
    s->owned_bytes = s->step_bytes = 0;
    s->offered = NULL;
    s->offered_bytes = 0;
}

/* Releases the states of s's steps (the schedule owns them). */
static void release_steps(ct_sched *s)
{
    for (int i = 0; i < s->nops; i++)
        if (s->ops[i].kind == CT_OP_STEP)
            s->ops[i].step->release(s->ops[i].buf);
    s->step_bytes = 0;
}

int ct_sched_reserve(ct_sched *s, int max_ops, int max_rounds)
{
    const size_t bytes = sched_bytes(max_ops, max_rounds);
    char *mem;
    if (s->ops != NULL) /* built before: its steps go */
        release_steps(s);
    if (s->own) { /* kept when large enough: a schedule built again at each start */
        if (bytes > s->owned_bytes) {
            free(s->owned);
            s->owned = malloc(bytes);
            s->owned_bytes = s->owned != NULL ? bytes : 0;
        }
        mem = s->owned;
    } else if (bytes <= s->offered_bytes) {
        mem = s->offered;
    } else {
        mem = ct_ctx_buffer(s->ctx, &sched_buf, bytes);
    }
    if (mem == NULL)
        return MPI_ERR_NO_MEM;
    s->max_ops = max_ops;
    s->max_rounds = max_rounds;
    s->nops = s->nrounds = 0;
    s->overflow = 0;
    s->ops = (ct_op *)mem;
    s->rounds = (ct_round *)(mem + ops_bytes(max_ops));
    s->reqs = (MPI_Request *)(mem + ops_bytes(max_ops) + rounds_bytes(max_rounds));
    return MPI_SUCCESS;
}

size_t ct_sched_own_bytes(const ct_sched *s) { return s->owned_bytes + s->step_bytes; }

void ct_sched_free(ct_sched *s)
{
    if (s->ops != NULL)
        release_steps(s);
    free(s->owned);
    s->owned = NULL;
    s->owned_bytes = 0;
    s->ops = NULL;
    s->rounds = NULL;
    s->reqs = NULL;
    s->nops = s->nrounds = s->max_ops = s->max_rounds = 0;
}

/* ------------------------------------------------------------------ */
/* Building                                                            */
/* ------------------------------------------------------------------ */

void ct_sched_round_windows(ct_sched *s, int wsend, int wrecv)
{
    const ct_round r = {.first = s->nops, .window = wsend, .rwindow = wrecv};
    if (s->nrounds > 0 && s->rounds[s->nrounds - 1].n == 0) {
        s->rounds[s->nrounds - 1] = r; /* the open round is still empty */
        return;
    }
    if (s->nrounds == s->max_rounds) {
        s->overflow = 1;
        return;
    }
    s->rounds[s->nrounds++] = r;
}

void ct_sched_round(ct_sched *s, int window) { ct_sched_round_windows(s, window, window); }

void ct_sched_local(ct_sched *s)
{
    if (s->nrounds > 0)
        s->rounds[s->nrounds - 1].local = 1;
}

static ct_op *append(ct_sched *s, ct_op_kind kind)
{
    if (s->nops == s->max_ops || s->nrounds == 0) {
        s->overflow = 1;
        return NULL;
    }
    ct_round *r = &s->rounds[s->nrounds - 1];
    r->n++;
    r->nsend += kind == CT_OP_SEND;
    r->nrecv += kind == CT_OP_RECV;
    ct_op *op = &s->ops[s->nops++];
    op->kind = kind;
    return op;
}

void ct_sched_send(ct_sched *s, const void *buf, MPI_Count count, MPI_Datatype type, int peer)
{
    ct_op *op = append(s, CT_OP_SEND);
    if (op != NULL)
        *op = (ct_op){.kind = CT_OP_SEND, .peer = peer, .buf = (void *)buf, .count = count,
                      .type = type};
}

void ct_sched_recv(ct_sched *s, void *buf, MPI_Count count, MPI_Datatype type, int peer)
{
    ct_op *op = append(s, CT_OP_RECV);
    if (op != NULL)
        *op = (ct_op){.kind = CT_OP_RECV, .peer = peer, .buf = buf, .count = count, .type = type};
}

void ct_sched_copy(ct_sched *s, const void *src, MPI_Count scount, MPI_Datatype stype, void *dst,
                   MPI_Count count, MPI_Datatype type)
{
    ct_op *op = append(s, CT_OP_COPY);
    if (op != NULL)
        *op = (ct_op){.kind = CT_OP_COPY, .buf = dst, .count = count, .type = type, .src = src,
                      .scount = scount, .stype = stype};
}

void ct_sched_step(ct_sched *s, const ct_step *step, void *state, size_t bytes)
{
    ct_sched_round(s, 0);
    ct_op *op = append(s, CT_OP_STEP);
    if (op == NULL) {
        step->release(state); /* the schedule owns it: the run fails (overflow) */
        return;
    }
    *op = (ct_op){.kind = CT_OP_STEP, .buf = state, .step = step};
    s->step_bytes += bytes;
    s->rounds[s->nrounds - 1].step = 1;
}

/* ------------------------------------------------------------------ */
/* Running                                                             */
/* ------------------------------------------------------------------ */

static int post(const ct_sched *s, const ct_op *op, MPI_Request *req)
{
    const MPI_Comm comm = s->rounds[s->round].local ? s->local_comm : s->comm;
    if (op->kind == CT_OP_SEND)
        return ct_isend(op->buf, op->count, op->type, op->peer, s->tag, comm, req);
    return ct_irecv(op->buf, op->count, op->type, op->peer, s->tag, comm, req);
}

static int copy(const ct_sched *s, const ct_op *op)
{
    return ct_copy_typed(op->src, op->scount, op->stype, op->buf, op->count, op->type, s->comm,
                         s->rank);
}

/* A window's send slots, at most the round's sends (at least one slot:
 * the receive slots follow them), and its receive slots. */
static int send_slots(const ct_round *r)
{
    const int W = r->window < r->nsend ? r->window : r->nsend;
    return W > 0 ? W : 1;
}

static int recv_slots(const ct_round *r)
{
    const int W = r->rwindow < r->nrecv ? r->rwindow : r->nrecv;
    return W > 0 ? W : 1;
}

/* Puts the next send (slot < send_slots) or receive (the slots after) of the
 * windowed round in slot, or MPI_REQUEST_NULL when that direction has none
 * left. */
static int window_refill(ct_sched *s, int slot)
{
    const ct_round *r = &s->rounds[s->round];
    const int W = send_slots(r), end = r->first + r->n;
    const ct_op_kind kind = slot < W ? CT_OP_SEND : CT_OP_RECV;
    int *next = slot < W ? &s->next_send : &s->next_recv;
    while (*next < end && s->ops[*next].kind != kind)
        (*next)++;
    s->reqs[slot] = MPI_REQUEST_NULL;
    return *next < end ? post(s, &s->ops[(*next)++], &s->reqs[slot]) : MPI_SUCCESS;
}

/* Starts round s->round: posts its messages (a window: the first W of each
 * direction), then does its copies, in the order the builder gave. */
static int round_begin(ct_sched *s)
{
    int rc = MPI_SUCCESS;
    const ct_round *r = &s->rounds[s->round];
    s->nreqs = 0;
    if (r->step)
        return s->ops[r->first].step->start(s->ops[r->first].buf);
    if (r->window > 0) {
        s->nreqs = send_slots(r) + recv_slots(r);
        s->next_send = s->next_recv = r->first;
        for (int slot = 0; slot < s->nreqs; slot++)
            CT_CALL(window_refill(s, slot));
    }
    for (int i = r->first; i < r->first + r->n; i++) {
        const ct_op *op = &s->ops[i];
        if (op->kind == CT_OP_COPY)
            CT_CALL(copy(s, op));
        else if (r->window == 0)
            CT_CALL(post(s, op, &s->reqs[s->nreqs++]));
    }
out:
    return rc;
}

/* Has the running round completed? A window refills each slot that did. */
static int round_test(ct_sched *s, int *flag)
{
    int rc, idx;
    const ct_round *r = &s->rounds[s->round];
    *flag = 1;
    if (r->step)
        return s->ops[r->first].step->test(s->ops[r->first].buf, flag);
    if (s->nreqs == 0) /* copies only */
        return MPI_SUCCESS;
    if (s->rounds[s->round].window == 0)
        return PMPI_Testall(s->nreqs, s->reqs, flag, MPI_STATUSES_IGNORE);
    for (;;) {
        CT_CALL(PMPI_Testany(s->nreqs, s->reqs, &idx, flag, MPI_STATUS_IGNORE));
        if (!*flag || idx == MPI_UNDEFINED)
            break; /* one still in flight, or every slot empty: done */
        CT_CALL(window_refill(s, idx));
    }
out:
    return rc;
}

/* Blocks until the running round has completed. */
static int round_wait(ct_sched *s)
{
    int rc, idx, flag;
    const ct_round *r = &s->rounds[s->round];
    if (r->step)
        return s->ops[r->first].step->wait(s->ops[r->first].buf);
    if (s->nreqs == 0) /* copies only */
        return MPI_SUCCESS;
    if (s->rounds[s->round].window == 0)
        return PMPI_Waitall(s->nreqs, s->reqs, MPI_STATUSES_IGNORE);
    for (;;) {
        if (s->poll == CT_POLL_WAITANY) {
            CT_CALL(PMPI_Waitany(s->nreqs, s->reqs, &idx, MPI_STATUS_IGNORE));
        } else {
            do
                CT_CALL(PMPI_Testany(s->nreqs, s->reqs, &idx, &flag, MPI_STATUS_IGNORE));
            while (!flag);
        }
        if (idx == MPI_UNDEFINED)
            break;
        CT_CALL(window_refill(s, idx));
    }
out:
    return rc;
}

int ct_sched_start(ct_sched *s)
{
    if (s->overflow) {
        ct_log_mpi_error(MPI_ERR_INTERN, "a schedule's builder passed its bounds", __FILE__,
                         __LINE__);
        return MPI_ERR_INTERN;
    }
    int rc;
    s->round = 0;
    if (s->nrounds == 0) /* nothing to move */
        return MPI_SUCCESS;
    rc = round_begin(s);
    /* Rounds of copies alone (the own block) need no completion: the first
     * round with messages starts now, not at the first test. */
    while (rc == MPI_SUCCESS && s->nreqs == 0 && !s->rounds[s->round].step &&
           s->round + 1 < s->nrounds) {
        s->round++;
        rc = round_begin(s);
    }
    return rc;
}

int ct_sched_test(ct_sched *s, int *done)
{
    int rc = MPI_SUCCESS, flag;
    while (s->round < s->nrounds) {
        CT_CALL(round_test(s, &flag));
        if (!flag)
            break;
        if (++s->round < s->nrounds)
            CT_CALL(round_begin(s));
    }
out:
    *done = s->round >= s->nrounds;
    return rc;
}

int ct_sched_wait(ct_sched *s)
{
    int rc = MPI_SUCCESS;
    while (s->round < s->nrounds) {
        CT_CALL(round_wait(s));
        if (++s->round < s->nrounds)
            CT_CALL(round_begin(s));
    }
out:
    return rc;
}

int ct_sched_run(ct_sched *s)
{
    int rc = ct_sched_start(s);
    return rc == MPI_SUCCESS ? ct_sched_wait(s) : rc;
}
