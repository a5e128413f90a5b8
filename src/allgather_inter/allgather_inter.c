/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_inter.c - drivers of the intercommunicator Allgather and
 * Allgatherv: per-call facts for the decision, the byte view (CT_A_BYTES),
 * then the chosen algorithm (the segmented exchange that the segmented
 * algorithms share is in ag_exchange.c); and the nonblocking and persistent
 * forms, whose algorithms split (CT_ALLGATHER_INTER_SPLIT_ALG): their
 * schedule started as a request.
 */
#include "allgather_inter/allgather_inter.h"
#include "core/datatype.h"
#include "core/device.h"
#include "core/request.h"
#include "core/sched.h"
#include "driver.h"
#include "learn.h"
#include "select/decide.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Flags the per-rank restrictions both collectives share. */
static void common_facts(MPI_Aint local_bytes, MPI_Aint remote_span, ct_call_facts *f)
{
    f->violations = 0;
    if (local_bytes > INT_MAX || remote_span > INT_MAX)
        f->violations |= CT_R_INT_OFFSETS;
}

static int allgather_facts(const void *args, const ct_ctx *ctx, ct_call_facts *f)
{
    const ct_allgather_args *a = args;
    int rc;
    MPI_Count ssize, rsize;
    MPI_Aint lb, rext;
    CT_CALL(PMPI_Type_size_x(a->sendtype, &ssize));
    CT_CALL(PMPI_Type_size_x(a->recvtype, &rsize));
    CT_CALL(PMPI_Type_get_extent(a->recvtype, &lb, &rext));
    MPI_Aint local_total = (MPI_Aint)(ctx->size * a->sendcount * ssize);
    MPI_Aint remote_total = (MPI_Aint)(ctx->remote_size * a->recvcount * rsize);
    f->msg_size = (long)(local_total > remote_total ? local_total : remote_total);
    common_facts(local_total, (MPI_Aint)(ctx->remote_size * a->recvcount * rext), f);
out:
    return rc;
}

static int allgatherv_facts(const void *args, const ct_ctx *ctx, ct_call_facts *f)
{
    const ct_allgatherv_args *a = args;
    int rc;
    MPI_Count ssize, rsize;
    MPI_Aint lb, rext, remote_total = 0, span = 0;
    CT_CALL(PMPI_Type_size_x(a->sendtype, &ssize));
    CT_CALL(PMPI_Type_size_x(a->recvtype, &rsize));
    CT_CALL(PMPI_Type_get_extent(a->recvtype, &lb, &rext));
    for (int j = 0; j < ctx->remote_size; j++) {
        const MPI_Count count = ct_vec_at(&a->recvcounts, j);
        MPI_Aint end = (MPI_Aint)((ct_vec_at(&a->displs, j) + count) * rext);
        remote_total += (MPI_Aint)(count * rsize);
        span = end > span ? end : span;
    }
    /* The remote group's total; the MAX over both groups is max(K_A, K_B). */
    f->msg_size = (long)remote_total;
    common_facts((MPI_Aint)(a->sendcount * ssize), span > remote_total ? span : remote_total, f);
out:
    return rc;
}

/* Device memory (ct_device_memory_fn): the address of this rank's block, and
 * of the first non-empty block it receives; buffers without data are not
 * device memory, whatever their address. */
static unsigned block_device(const void *buf, MPI_Count count, MPI_Aint displ,
                             MPI_Datatype type)
{
    ct_typeinfo t;
    if (count <= 0 || ct_type_info(type, &t) != MPI_SUCCESS)
        return 0; /* nothing there, or the MPI library will say what is wrong */
    return ct_device_memory(ct_elem_ptr(buf, displ, t.extent) + t.true_lb);
}

static unsigned allgather_device(const void *args, const ct_ctx *ctx)
{
    const ct_allgather_args *a = args;
    unsigned dev = block_device(a->sendbuf, a->sendcount, 0, a->sendtype);
    if (dev == 0 && ctx->remote_size > 0)
        dev = block_device(a->recvbuf, a->recvcount, 0, a->recvtype);
    return dev;
}

static unsigned allgatherv_device(const void *args, const ct_ctx *ctx)
{
    const ct_allgatherv_args *a = args;
    unsigned dev = block_device(a->sendbuf, a->sendcount, 0, a->sendtype);
    for (int j = 0; dev == 0 && j < ctx->remote_size; j++) {
        const MPI_Count count = ct_vec_at(&a->recvcounts, j);
        if (count > 0)
            return block_device(a->recvbuf, count, (MPI_Aint)ct_vec_at(&a->displs, j),
                                a->recvtype);
    }
    return dev;
}

/* ------------------------------------------------------------------ */
/* Packed bytes (CT_A_BYTES): see ag_exchange.h                      */
/* ------------------------------------------------------------------ */

/* The byte views of a call (ct_bytes): this rank's block, and the remote
 * group's blocks back to back (a stream: in place where a contiguous type's
 * blocks already lie so). */
static int views_init(ct_ctx *ctx, ct_bytes *s, const void *sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, ct_bytes *r, void *recvbuf, ct_vec recvcounts,
                      ct_vec displs, MPI_Datatype recvtype)
{
    int rc;
    CT_CALL(ct_bytes_init(s, sendbuf, 1, ct_vec_linear(sendcount, 0), ct_vec_linear(0, 0),
                          sendtype, 0));
    CT_CALL(ct_bytes_init(r, recvbuf, ctx->remote_size, recvcounts, displs, recvtype, 1));
    CT_CALL(ct_bytes_alloc(s));
    CT_CALL(ct_bytes_alloc(r));
out:
    return rc;
}

/* The same, the send block packed: a blocking call's. */
static int views(ct_ctx *ctx, ct_bytes *s, const void *sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, ct_bytes *r, void *recvbuf, ct_vec recvcounts,
                 ct_vec displs, MPI_Datatype recvtype)
{
    int rc = views_init(ctx, s, sendbuf, sendcount, sendtype, r, recvbuf, recvcounts, displs,
                        recvtype);
    return rc == MPI_SUCCESS ? ct_bytes_pack(s, ctx->comm) : rc;
}

/* An Allgatherv's stream: its blocks' byte counts, back to back
 * (counts[nremote + j] the displacements). */
static void stream_counts(const ct_bytes *r, int nremote, int *counts)
{
    for (int j = 0, K = 0; j < nremote; K += counts[j], j++) {
        counts[j] = (int)ct_bytes_len(r, j);
        counts[nremote + j] = K; /* the stream's blocks are back to back */
    }
}

/* The views' bytes and staging: unpacked, counted, freed. */
static int views_done(ct_ctx *ctx, ct_bytes *s, ct_bytes *r, int rc)
{
    if (rc == MPI_SUCCESS)
        rc = ct_bytes_unpack(r, ctx->comm);
    ctx->call_extra += s->staged_bytes + r->staged_bytes;
    ct_bytes_free(s);
    ct_bytes_free(r);
    return rc;
}

/* Byte counts fit an int (CT_R_INT_OFFSETS). */
static int run_allgather(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    const ct_allgather_args *a = in->args;
    ct_bytes s = {0}, r = {0};
    if (!(ch->alg->restrictions & CT_A_BYTES))
        return ch->alg->run.allgather(a, ctx, ch->params);
    int rc = views(ctx, &s, a->sendbuf, a->sendcount, a->sendtype, &r, a->recvbuf,
                   ct_vec_linear(a->recvcount, 0), ct_vec_linear(0, a->recvcount), a->recvtype);
    if (rc == MPI_SUCCESS) {
        ct_allgather_args b = *a;
        b.sendbuf = ct_bytes_block(&s, 0);
        b.sendcount = (int)ct_bytes_len(&s, 0);
        b.recvbuf = ct_bytes_stream(&r);
        b.recvcount = (int)ct_bytes_len(&r, 0);
        b.sendtype = b.recvtype = MPI_BYTE;
        rc = ch->alg->run.allgather(&b, ctx, ch->params);
    }
    return views_done(ctx, &s, &r, rc);
}

static int run_allgatherv(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    const ct_allgatherv_args *a = in->args;
    ct_bytes s = {0}, r = {0};
    const int nremote = ctx->remote_size;
    if (!(ch->alg->restrictions & CT_A_BYTES))
        return ch->alg->run.allgatherv(a, ctx, ch->params);
    int *counts = malloc((size_t)nremote * 2 * sizeof(int)), *displs = counts + nremote;
    int rc = counts == NULL ? MPI_ERR_NO_MEM
                            : views(ctx, &s, a->sendbuf, a->sendcount, a->sendtype, &r,
                                    a->recvbuf, a->recvcounts, a->displs, a->recvtype);
    if (rc == MPI_SUCCESS) {
        stream_counts(&r, nremote, counts);
        ct_allgatherv_args b = *a;
        b.sendbuf = ct_bytes_block(&s, 0);
        b.sendcount = (int)ct_bytes_len(&s, 0);
        b.recvbuf = ct_bytes_stream(&r);
        b.recvcounts = ct_vec_int(counts);
        b.displs = ct_vec_int(displs);
        b.sendtype = b.recvtype = MPI_BYTE;
        rc = ch->alg->run.allgatherv(&b, ctx, ch->params);
        ctx->call_extra += 2 * (size_t)nremote * sizeof(int);
    }
    free(counts);
    return views_done(ctx, &s, &r, rc);
}

/* ------------------------------------------------------------------ */
/* The drivers                                                         */
/* ------------------------------------------------------------------ */

/*
 * Arguments the MPI library must reject (a negative count, a datatype that
 * is null or not a datatype): a call an algorithm other than pmpi would run
 * is forwarded instead, so the user gets the library's own error class
 * through the error handler; the pass-through pays nothing for the check.
 * The same rule as the Alltoall(v) driver's.
 */
static int ag_args_usable(const void *args, ct_ctx *ctx)
{
    const ct_allgather_args *a = args;
    (void)ctx;
    return a->sendcount >= 0 && a->recvcount >= 0 && ct_type_usable(a->sendtype) &&
           ct_type_usable(a->recvtype);
}

static int agv_args_usable(const void *args, ct_ctx *ctx)
{
    const ct_allgatherv_args *a = args;
    const int nremote = ctx->remote_size;
    if (a->sendcount < 0 || !ct_type_usable(a->sendtype) || !ct_type_usable(a->recvtype))
        return 0;
    for (int j = 0; j < nremote; j++)
        if (ct_vec_at(&a->recvcounts, j) < 0)
            return 0;
    return 1;
}

/* pmpi: the entry point's own forwarder runs the user's call. */
int ct_allgather_inter_pmpi(const ct_allgather_args *a, ct_ctx *ctx, const long *params)
{
    (void)ctx;
    (void)params;
    return a->forward(a);
}

int ct_allgatherv_inter_pmpi(const ct_allgatherv_args *a, ct_ctx *ctx, const long *params)
{
    (void)ctx;
    (void)params;
    return a->forward(a);
}

/* Bytes this rank sends: its one block. */
static double block_bytes(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = 0;
    PMPI_Type_size_x(type, &size);
    return (double)count * (double)size;
}

static double ag_bytes(const void *args, const ct_ctx *ctx)
{
    const ct_allgather_args *a = args;
    (void)ctx;
    return block_bytes(a->sendcount, a->sendtype);
}

static double agv_bytes(const void *args, const ct_ctx *ctx)
{
    const ct_allgatherv_args *a = args;
    (void)ctx;
    return block_bytes(a->sendcount, a->sendtype);
}

static int ag_forward(const void *args)
{
    const ct_allgather_args *a = args;
    return a->forward(a);
}

static int agv_forward(const void *args)
{
    const ct_allgatherv_args *a = args;
    return a->forward(a);
}

static const ct_driver ag_driver = {ag_forward, ag_args_usable, run_allgather, ag_bytes};
static const ct_driver agv_driver = {agv_forward, agv_args_usable, run_allgatherv, agv_bytes};

int ct_allgather_inter_dispatch(const ct_allgather_args *a, const ct_spec *forced)
{
    /* Moves no byte (decide.h: nothing to do): this rank sends and receives
     * empty blocks, so every rank of its group does, and the remote group's
     * blocks are as empty. */
    if (a->sendcount == 0 && a->recvcount == 0)
        return ct_drive_empty(&ag_driver, CT_COLL_ALLGATHER_INTER, a);
    /* max(p k_A, q k_B) follows from every rank's own arguments (all ranks of
     * a group send the same signature): msg_size rules cost no communication. */
    ct_decide_input call = {.coll = CT_COLL_ALLGATHER_INTER,
                            .args = a,
                            .local_facts = allgather_facts,
                            .msg_size_is_global = ct_coll_msg_size_known(CT_COLL_ALLGATHER_INTER),
                            .device_memory = allgather_device};
    return ct_drive(&ag_driver, a->comm, &call, forced);
}

int ct_allgatherv_inter_dispatch(const ct_allgatherv_args *a, const ct_spec *forced)
{
    ct_decide_input call = {.coll = CT_COLL_ALLGATHERV_INTER,
                            .args = a,
                            .local_facts = allgatherv_facts,
                            .device_memory = allgatherv_device};
    return ct_drive(&agv_driver, a->comm, &call, forced);
}

/* ------------------------------------------------------------------ */
/* The nonblocking and persistent forms                                */
/* ------------------------------------------------------------------ */

/* A request's byte view (CT_A_BYTES): the algorithm's schedule on the
 * call's bytes, as one step of the request's schedule; staging of the
 * request's own, the send block packed at each start and the stream
 * unpacked at completion. */
typedef struct bytes_call {
    ct_bytes s, r;
    int *counts; /* an Allgatherv's stream: [2 nremote] counts, displacements */
    ct_sched inner;
    MPI_Comm comm;
} bytes_call;

static int bytes_start(void *state)
{
    bytes_call *c = state;
    const int rc = ct_bytes_pack(&c->s, c->comm);
    return rc == MPI_SUCCESS ? ct_sched_start(&c->inner) : rc;
}

static int bytes_test(void *state, int *done)
{
    bytes_call *c = state;
    const int rc = ct_sched_test(&c->inner, done);
    return *done && rc == MPI_SUCCESS ? ct_bytes_unpack(&c->r, c->comm) : rc;
}

static int bytes_wait(void *state)
{
    bytes_call *c = state;
    const int rc = ct_sched_wait(&c->inner);
    return rc == MPI_SUCCESS ? ct_bytes_unpack(&c->r, c->comm) : rc;
}

static void bytes_free(void *state)
{
    bytes_call *c = state;
    ct_sched_free(&c->inner);
    free(c->counts);
    ct_bytes_free(&c->s);
    ct_bytes_free(&c->r);
    free(c);
}

static const ct_step bytes_step = {bytes_start, bytes_test, bytes_wait, bytes_free};

static bytes_call *bytes_new(ct_ctx *ctx, const ct_sched *s)
{
    bytes_call *c = calloc(1, sizeof *c);
    if (c != NULL) {
        c->comm = s->comm;
        ct_sched_prepare(&c->inner, ctx, s->tag, 1);
    }
    return c;
}

/* The step into s, which owns c from here. */
static int bytes_done(bytes_call *c, ct_sched *s, int nremote)
{
    int rc = ct_sched_reserve(s, 1, 1);
    if (rc != MPI_SUCCESS) {
        bytes_free(c);
        return rc;
    }
    ct_sched_step(s, &bytes_step, c,
                  sizeof *c + c->s.staged_bytes + c->r.staged_bytes +
                      (c->counts != NULL ? 2 * (size_t)nremote * sizeof(int) : 0) +
                      ct_sched_own_bytes(&c->inner));
    return MPI_SUCCESS;
}

static int ag_build_bytes(const ct_adapt_cand *cand, const ct_allgather_args *a, ct_ctx *ctx,
                          ct_sched *s)
{
    int rc;
    bytes_call *c = bytes_new(ctx, s);
    if (c == NULL)
        return MPI_ERR_NO_MEM;
    CT_CALL(views_init(ctx, &c->s, a->sendbuf, a->sendcount, a->sendtype, &c->r, a->recvbuf,
                       ct_vec_linear(a->recvcount, 0), ct_vec_linear(0, a->recvcount),
                       a->recvtype));
    ct_allgather_args b = *a;
    b.sendbuf = ct_bytes_block(&c->s, 0);
    b.sendcount = (int)ct_bytes_len(&c->s, 0);
    b.recvbuf = ct_bytes_stream(&c->r);
    b.recvcount = (int)ct_bytes_len(&c->r, 0);
    b.sendtype = b.recvtype = MPI_BYTE;
    CT_CALL(cand->alg->build.allgather(&b, ctx, cand->params, &c->inner));
    return bytes_done(c, s, ctx->remote_size);
out:
    bytes_free(c);
    return rc;
}

static int agv_build_bytes(const ct_adapt_cand *cand, const ct_allgatherv_args *a, ct_ctx *ctx,
                           ct_sched *s)
{
    int rc;
    const int nremote = ctx->remote_size;
    bytes_call *c = bytes_new(ctx, s);
    if (c == NULL)
        return MPI_ERR_NO_MEM;
    CT_ALLOC(c->counts, 2 * (size_t)(nremote > 0 ? nremote : 1) * sizeof(int));
    CT_CALL(views_init(ctx, &c->s, a->sendbuf, a->sendcount, a->sendtype, &c->r, a->recvbuf,
                       a->recvcounts, a->displs, a->recvtype));
    stream_counts(&c->r, nremote, c->counts);
    ct_allgatherv_args b = *a;
    b.sendbuf = ct_bytes_block(&c->s, 0);
    b.sendcount = (int)ct_bytes_len(&c->s, 0);
    b.recvbuf = ct_bytes_stream(&c->r);
    b.recvcounts = ct_vec_int(c->counts);
    b.displs = ct_vec_int(c->counts + nremote);
    b.sendtype = b.recvtype = MPI_BYTE;
    CT_CALL(cand->alg->build.allgatherv(&b, ctx, cand->params, &c->inner));
    return bytes_done(c, s, nremote);
out:
    bytes_free(c);
    return rc;
}

/* A request's candidates and chosen algorithm (learn.h): their schedules
 * for the call (on the byte view where they need it), and pmpi's turns as
 * the library's own persistent call. */
static int ag_learn_build(const void *args, ct_ctx *ctx, const ct_adapt_cand *c, ct_sched *s)
{
    if (c->alg->restrictions & CT_A_BYTES)
        return ag_build_bytes(c, args, ctx, s);
    return c->alg->build.allgather(args, ctx, c->params, s);
}

static int agv_learn_build(const void *args, ct_ctx *ctx, const ct_adapt_cand *c, ct_sched *s)
{
    if (c->alg->restrictions & CT_A_BYTES)
        return agv_build_bytes(c, args, ctx, s);
    return c->alg->build.allgatherv(args, ctx, c->params, s);
}

static int ag_learn_forward_init(const void *args, MPI_Request *lib)
{
    ct_allgather_args f = *(const ct_allgather_args *)args;
    f.request = lib;
    return f.forward(&f);
}

static int agv_learn_forward_init(const void *args, MPI_Request *lib)
{
    ct_allgatherv_args f = *(const ct_allgatherv_args *)args;
    f.request = lib;
    return f.forward(&f);
}

static const ct_learn_ops ag_learn_ops = {ag_learn_build, ag_learn_forward_init};
static const ct_learn_ops agv_learn_ops = {agv_learn_build, agv_learn_forward_init};

/* The chosen algorithm's schedule as a request (pmpi forwards the call); a
 * persistent call under COLTUNE_ADAPT, its learner's (learn.h), whose pmpi
 * turns get the request's datatypes. */
static int start_allgather(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    int rc;
    const ct_allgather_args *a = in->args;
    ct_allgather_args b = *a, fwd = *a;
    ct_request *r = NULL;
    struct ct_learner *learner = a->persistent ? ch->turn.learner : NULL; /* ours to free */
    if (learner == NULL && ch->alg->build.allgather == NULL)
        return ch->alg->run.allgather(a, ctx, ch->params);
    rc = ct_request_open(ctx, a->comm, a->persistent, &b.sendtype, &b.recvtype, &r);
    if (rc == CT_NO_TAG) { /* every persistent tag held: the library's request */
        ct_adapt_release(learner);
        return a->forward(a);
    }
    CT_CALL(rc);
    fwd.sendtype = b.sendtype; /* a learner's pmpi turns: the request's datatypes */
    fwd.recvtype = b.recvtype;
    return ct_learn_start(r, ctx, learner, ch, &b, &fwd, &ag_learn_ops, a->request);
out:
    ct_adapt_release(learner);
    ct_request_discard(r);
    return rc;
}

static int start_allgatherv(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    int rc;
    const ct_allgatherv_args *a = in->args;
    ct_allgatherv_args b = *a, fwd = *a;
    ct_request *r = NULL;
    struct ct_learner *learner = a->persistent ? ch->turn.learner : NULL; /* ours to free */
    if (learner == NULL && ch->alg->build.allgatherv == NULL)
        return ch->alg->run.allgatherv(a, ctx, ch->params);
    rc = ct_request_open(ctx, a->comm, a->persistent, &b.sendtype, &b.recvtype, &r);
    if (rc == CT_NO_TAG) { /* every persistent tag held: the library's request */
        ct_adapt_release(learner);
        return a->forward(a);
    }
    CT_CALL(rc);
    fwd.sendtype = b.sendtype; /* a learner's pmpi turns: the request's datatypes */
    fwd.recvtype = b.recvtype;
    return ct_learn_start(r, ctx, learner, ch, &b, &fwd, &agv_learn_ops, a->request);
out:
    ct_adapt_release(learner);
    ct_request_discard(r);
    return rc;
}

static const ct_driver iag_driver = {ag_forward, ag_args_usable, start_allgather, ag_bytes};
static const ct_driver iagv_driver = {agv_forward, agv_args_usable, start_allgatherv, agv_bytes};

/* Empty blocks too go through the decision: the call returns a request,
 * whose schedule has nothing to do. */
int ct_iallgather_inter_dispatch(const ct_allgather_args *a, const ct_spec *forced)
{
    ct_decide_input call = {.coll = CT_COLL_IALLGATHER_INTER,
                            .args = a,
                            .local_facts = allgather_facts,
                            .msg_size_is_global = ct_coll_msg_size_known(CT_COLL_IALLGATHER_INTER),
                            .persistent = a->persistent,
                            .learns = a->persistent,
                            .device_memory = allgather_device};
    return ct_drive(&iag_driver, a->comm, &call, forced);
}

int ct_iallgatherv_inter_dispatch(const ct_allgatherv_args *a, const ct_spec *forced)
{
    ct_decide_input call = {.coll = CT_COLL_IALLGATHERV_INTER,
                            .args = a,
                            .local_facts = allgatherv_facts,
                            .persistent = a->persistent,
                            .learns = a->persistent,
                            .device_memory = allgatherv_device};
    return ct_drive(&iagv_driver, a->comm, &call, forced);
}
