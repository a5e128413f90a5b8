/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv.c - the MPI_Alltoallv driver (the helpers its algorithms share
 * are in a2av_p2p.c).
 */
#include "alltoallv/alltoallv.h"
#include "alltoallv/a2av_p2p.h"
#include "core/bytes_step.h"
#include "core/device.h"
#include "core/log.h"
#include "core/request.h"
#include "core/sched.h"
#include "core/state.h"
#include "driver.h"
#include "learn.h"
#include "select/decide.h"
#include "core/copy.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Per-call facts for the decision                                     */
/* ------------------------------------------------------------------ */

/* This rank's facts of a call for the decision (ct_local_facts_fn, no
 * communication): its largest block and the local restrictions it violates
 * (non-contiguous types, byte offsets beyond an int). */
static int local_facts(const void *args, const ct_ctx *ctx, ct_call_facts *f)
{
    return ct_a2av_local_facts(args, ctx->size, &f->msg_size, &f->violations);
}

/* ct_device_memory_fn: the receive side, then the send side (not MPI_IN_PLACE). */
static unsigned device_memory(const void *args, const ct_ctx *ctx)
{
    const ct_alltoallv_args *a = args;
    const int P = ctx->size;
    unsigned dev = ct_blocks_device(a->recvbuf, P, &a->recvcounts, &a->rdispls, a->recvtype);
    if (dev == 0 && a->sendbuf != MPI_IN_PLACE)
        dev = ct_blocks_device(a->sendbuf, P, &a->sendcounts, &a->sdispls, a->sendtype);
    return dev;
}

/* ------------------------------------------------------------------ */
/* MPI_IN_PLACE                                                        */
/* ------------------------------------------------------------------ */

/*
 * With MPI_IN_PLACE the block for peer j is receive block j, and the block
 * received from j replaces it. The bytes spanned by all receive blocks are
 * copied aside once and the algorithm runs with the copy as its send buffer
 * (same counts, displacements and type), which is exactly the standard's
 * semantics. *tmp receives the allocation (NULL when nothing is sent).
 */
static int inplace_args(const ct_alltoallv_args *a, int P, ct_alltoallv_args *out, void **tmp,
                        size_t *tmp_bytes)
{
    int rc;
    ct_typeinfo r;
    MPI_Aint lo = 0, hi = 0;
    int any = 0;
    *tmp = NULL;
    *tmp_bytes = 0;
    CT_CALL(ct_type_info(a->recvtype, &r));
    for (int j = 0; j < P; j++) {
        const MPI_Count count = ct_vec_at(&a->recvcounts, j);
        if (count == 0)
            continue;
        MPI_Aint start = (MPI_Aint)ct_vec_at(&a->rdispls, j) * r.extent + r.true_lb;
        MPI_Aint end = start + (MPI_Aint)(count - 1) * r.extent + r.true_extent;
        lo = (!any || start < lo) ? start : lo;
        hi = (!any || end > hi) ? end : hi;
        any = 1;
    }
    *out = *a;
    out->sendcounts = a->recvcounts;
    out->sdispls = a->rdispls;
    out->sendtype = a->recvtype;
    out->sendbuf = a->recvbuf;
    if (any && hi > lo) {
        CT_ALLOC(*tmp, (size_t)(hi - lo));
        ct_memcpy(*tmp, (char *)a->recvbuf + lo, (size_t)(hi - lo));
        *tmp_bytes = (size_t)(hi - lo);
        /* The usual MPI idiom: a base address such that base + lo is the copy. */
        out->sendbuf = (char *)*tmp - lo;
    }
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Packed bytes (CT_A_BYTES)                                           */
/* ------------------------------------------------------------------ */

/* Runs the algorithm on a, blocking: its own function, or its schedule built
 * in a buffer of the context and run to completion (core/sched.h). */
static int run_alg(const ct_choice *ch, const ct_alltoallv_args *a, ct_ctx *ctx)
{
    int rc;
    ct_sched s;
    _Alignas(64) char small[2048]; /* the schedule of a small communicator */
    if (ch->alg->run.alltoallv != NULL)
        return ch->alg->run.alltoallv(a, ctx, ch->params);
    ct_sched_prepare(&s, ctx, CT_TAG_ALLTOALLV, 0);
    ct_sched_offer(&s, small, sizeof small);
    CT_CALL(ch->alg->build.alltoallv(a, ctx, ch->params, &s));
    CT_CALL(ct_sched_run(&s));
out:
    return rc;
}

/* The call's byte view (ct_bytes_pair) as a description on MPI_BYTE. */
static int bytes_args(ct_bytes_pair *v, const ct_alltoallv_args *a, int P, ct_alltoallv_args *b)
{
    const int rc = ct_bytes_pair_init(v, a->sendbuf, P, a->sendcounts, a->sdispls, a->sendtype,
                                      a->recvbuf, P, a->recvcounts, a->rdispls, a->recvtype);
    *b = *a;
    b->sendbuf = v->sbase;
    b->sendcounts = v->scounts;
    b->sdispls = v->sdispls;
    b->sendtype = MPI_BYTE;
    b->recvbuf = v->rbase;
    b->recvcounts = v->rcounts;
    b->rdispls = v->rdispls;
    b->recvtype = MPI_BYTE;
    return rc;
}

/* Runs alg on the byte view of a. */
static int run_bytes(ct_ctx *ctx, const ct_choice *ch, const ct_alltoallv_args *a)
{
    int rc;
    ct_bytes_pair v;
    ct_alltoallv_args b;
    CT_CALL(bytes_args(&v, a, ctx->size, &b));
    CT_CALL(ct_bytes_pack(&v.s, ctx->comm));
    CT_CALL(run_alg(ch, &b, ctx));
    CT_CALL(ct_bytes_unpack(&v.r, ctx->comm));
    ctx->call_extra += v.s.staged_bytes + v.r.staged_bytes;
out:
    ct_bytes_pair_free(&v);
    return rc;
}

/* A request's byte view (CT_A_BYTES): the algorithm's schedule on the
 * call's bytes, as one step of the request's schedule, or on the request's
 * own schedule where the view is the call's memory (core/bytes_step.h). */
static int build_bytes(const ct_algorithm *alg, const long *params, const ct_alltoallv_args *a,
                       ct_ctx *ctx, ct_sched *s)
{
    int rc;
    ct_alltoallv_args b;
    ct_bytes_pair v;
    ct_bytes_step *step;
    ct_sched *into;
    CT_CALL(bytes_args(&v, a, ctx->size, &b));
    CT_CALL(ct_bytes_step_begin(s, ctx, &v, &step, &into));
    return ct_bytes_step_end(s, step, alg->build.alltoallv(&b, ctx, params, into));
out:
    ct_bytes_pair_free(&v);
    return rc;
}

/* An algorithm's schedule for a request: on the byte view where it needs it. */
static int build_alg(const ct_algorithm *alg, const long *params, const ct_alltoallv_args *a,
                     ct_ctx *ctx, ct_sched *s)
{
    if (alg->restrictions & CT_A_BYTES)
        return build_bytes(alg, params, a, ctx, s);
    return alg->build.alltoallv(a, ctx, params, s);
}

/* ------------------------------------------------------------------ */
/* The driver                                                          */
/* ------------------------------------------------------------------ */

/* Bytes this rank sends (with MPI_IN_PLACE, which pmpi sees, the send side
 * is the receive arguments: the send type may be MPI_DATATYPE_NULL). */
static double bytes_sent(const void *args, const ct_ctx *ctx)
{
    const ct_alltoallv_args *a = args;
    const int P = ctx->size;
    const int inplace = a->sendbuf == MPI_IN_PLACE;
    const ct_vec *counts = inplace ? &a->recvcounts : &a->sendcounts;
    MPI_Count size;
    double total = 0;
    if (PMPI_Type_size_x(inplace ? a->recvtype : a->sendtype, &size) != MPI_SUCCESS)
        return 0;
    for (int j = 0; j < P; j++)
        total += (double)ct_vec_at(counts, j) * (double)size;
    return total;
}

/*
 * Arguments the MPI library must reject (a negative count, a datatype that
 * is null or not a datatype, on a side that is used). Such a call is not run
 * by an algorithm but forwarded, so the user gets the library's own error
 * class through the communicator's error handler, as without coltune. It is
 * checked on local arguments only, like the library's own checks (an
 * erroneous program fails as it would natively), and only when an algorithm
 * other than pmpi was chosen: the pass-through pays nothing for it.
 */
static int args_usable(const void *args, ct_ctx *ctx)
{
    const ct_alltoallv_args *a = args;
    const int P = ctx->size;
    const int inplace = a->sendbuf == MPI_IN_PLACE;
    if (!ct_type_usable(a->recvtype) || (!inplace && !ct_type_usable(a->sendtype)))
        return 0;
    for (int j = 0; j < P; j++)
        if (ct_vec_at(&a->recvcounts, j) < 0 || (!inplace && ct_vec_at(&a->sendcounts, j) < 0))
            return 0;
    return 1;
}

/* Runs the chosen algorithm on the call: the in-place copy and the byte
 * view where it needs them (the skeleton of driver.h times and counts it). */
static int run_choice(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    int rc;
    const ct_alltoallv_args *a = in->args;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    ct_alltoallv_args copy = *a;
    if (a->sendbuf == MPI_IN_PLACE && !ch->fallback)
        CT_CALL(inplace_args(a, ctx->size, &copy, &tmp, &tmp_bytes));
    copy.msg_size = in->have_facts ? in->facts.msg_size : -1;
    if (ch->alg->restrictions & CT_A_BYTES)
        CT_CALL(run_bytes(ctx, ch, &copy));
    else
        CT_CALL(run_alg(ch, &copy, ctx));
    ctx->call_extra += tmp_bytes;
out:
    free(tmp);
    return rc;
}

static int forward(const void *args)
{
    const ct_alltoallv_args *a = args;
    return a->forward(a);
}

static const ct_driver driver = {forward, args_usable, run_choice, bytes_sent};

int ct_alltoall_is_empty(const ct_alltoallv_args *a)
{
    return a->coll == CT_COLL_ALLTOALL && a->recvcounts.base == 0 &&
           (a->sendbuf == MPI_IN_PLACE || a->sendcounts.base == 0);
}

int ct_alltoall_empty_at_once(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const ct_state *st = ct_state_get();
    return recvcount == 0 && (sendbuf == MPI_IN_PLACE || sendcount == 0) &&
           !st->settings->stats && !st->settings->disabled && !st->finalizing &&
           comm != MPI_COMM_NULL && recvtype != MPI_DATATYPE_NULL &&
           (sendbuf == MPI_IN_PLACE || sendtype != MPI_DATATYPE_NULL);
}

int ct_alltoall_forward_empty(const ct_alltoallv_args *a)
{
    if (ct_alltoall_empty_at_once(a->sendbuf, a->sendcounts.base, a->sendtype,
                                  a->recvcounts.base, a->recvtype, a->comm))
        return MPI_SUCCESS;
    return ct_drive_empty(&driver, a->coll, a);
}

int ct_alltoallv_dispatch(const ct_alltoallv_args *a, const ct_spec *forced)
{
    if (ct_alltoall_is_empty(a))
        return ct_alltoall_forward_empty(a);
    /* MPI_Alltoall: the block size is the same on every rank by the standard
     * (matching type signatures), so msg_size costs no communication. */
    ct_decide_input call = {.coll = a->coll, .args = a, .local_facts = local_facts,
                            .msg_size_is_global = ct_coll_msg_size_known(a->coll),
                            .device_memory = device_memory};
    return ct_drive(&driver, a->comm, &call, forced);
}

/* ------------------------------------------------------------------ */
/* The nonblocking forms                                               */
/* ------------------------------------------------------------------ */

/* The request's description of the call: its own duplicates of derived
 * datatypes, and with MPI_IN_PLACE its own copy of the receive blocks
 * (inplace_args), both kept until the request is freed. */
static int request_args(ct_request *r, const ct_alltoallv_args *a, int P, ct_alltoallv_args *b)
{
    int rc;
    ct_alltoallv_args typed = *a;
    CT_CALL(ct_request_type(r, a->recvtype, &typed.recvtype));
    if (a->sendbuf != MPI_IN_PLACE) {
        CT_CALL(ct_request_type(r, a->sendtype, &typed.sendtype));
        *b = typed;
    } else {
        CT_CALL(inplace_args(&typed, P, b, &r->keep, &r->keep_bytes));
        /* A persistent call copies its receive blocks aside at every start:
         * from the same span (the copy's base is sendbuf + lo). */
        if (a->persistent && r->keep != NULL) {
            const MPI_Aint lo = (char *)r->keep - (const char *)b->sendbuf;
            r->start_copy_from = (const char *)a->recvbuf + lo;
            r->start_copy_bytes = r->keep_bytes;
        }
    }
out:
    return rc;
}

/* A persistent learner's candidate (learn.h): its schedule for the call. */
static int learn_build(const void *args, ct_ctx *ctx, const ct_adapt_cand *cand, ct_sched *s)
{
    return build_alg(cand->alg, cand->params, args, ctx, s);
}

/* pmpi's turns of a persistent learner: the library's own persistent call. */
static int learn_forward_init(const void *args, MPI_Request *lib)
{
    ct_alltoallv_args f = *(const ct_alltoallv_args *)args;
    f.request = lib;
    return f.forward(&f);
}

static const ct_learn_ops learn_ops = {learn_build, learn_forward_init};

/* Starts the chosen algorithm's schedule as a request, on a tag of its own:
 * the nonblocking collectives of a communicator start in the same order on
 * every rank, and several may be in flight (ct_ctx.nbc_calls). A persistent
 * call (a->persistent) is planned here once, decision, schedule, datatypes
 * and buffers, and each MPI_Start runs the schedule from the top; under
 * COLTUNE_ADAPT, every candidate's schedule, which its learner's starts
 * choose among (learn.h). */
static int start_choice(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    int rc;
    const ct_alltoallv_args *a = in->args;
    ct_alltoallv_args b;
    ct_request *r = NULL;
    struct ct_learner *learner = a->persistent ? ch->turn.learner : NULL; /* ours to free */
    if (learner == NULL && ch->alg->build.alltoallv == NULL) /* pmpi, under the statistics */
        return ch->alg->run.alltoallv(a, ctx, ch->params);
    int tag;
    rc = ct_ctx_request_tag(ctx, a->persistent, &tag); /* first: every rank counts it */
    if (rc == CT_NO_TAG) { /* every persistent tag held: the library's request */
        ct_adapt_release(learner);
        return ct_alltoallv_pmpi(a, ctx, NULL);
    }
    CT_CALL(rc);
    rc = ct_request_new(ctx, a->comm, a->persistent, &r);
    if (rc != MPI_SUCCESS) {
        ct_ctx_tag_release(ctx, tag);
        goto out;
    }
    ct_sched_prepare(&r->sched, ctx, tag, 1); /* the request holds the tag now */
    CT_CALL(request_args(r, a, ctx->size, &b));
    b.msg_size = in->have_facts ? in->facts.msg_size : -1;
    /* a learner's pmpi turns: the call as made, with the request's own
     * datatypes (the application may free its own after the init) */
    ct_alltoallv_args fwd = *a;
    fwd.recvtype = b.recvtype;
    if (a->sendbuf != MPI_IN_PLACE)
        fwd.sendtype = b.sendtype;
    return ct_learn_start(r, ctx, learner, ch, &b, &fwd, &learn_ops, a->request);
out:
    ct_adapt_release(learner);
    ct_request_discard(r);
    return rc;
}

static const ct_driver nb_driver = {forward, args_usable, start_choice, bytes_sent};

int ct_ialltoallv_dispatch(const ct_alltoallv_args *a, const ct_spec *forced)
{
    ct_decide_input call = {.coll = a->coll, .args = a, .local_facts = local_facts,
                            .msg_size_is_global = ct_coll_msg_size_known(a->coll),
                            .persistent = a->persistent, .learns = a->persistent,
                            .device_memory = device_memory};
    return ct_drive(&nb_driver, a->comm, &call, forced);
}

int ct_alltoallv_pmpi(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    (void)ctx;
    (void)params;
    return a->forward(a);
}
