/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neighbor.c - the MPI_Neighbor_alltoallv / MPI_Neighbor_alltoall driver:
 * the call's facts for the decision, the byte view for the algorithms on
 * bytes, and the skeleton of driver.h; and the driver of their nonblocking
 * and persistent forms, which start the same schedules as requests.
 */
#include "neighbor/neighbor.h"
#include "neighbor/nbr_graph.h"
#include "core/bytes_step.h"
#include "core/device.h"
#include "core/request.h"
#include "core/sched.h"
#include "driver.h"
#include "learn.h"
#include "select/decide.h"

#include <stdlib.h>
#include <string.h>

/* The call's neighbourhood, once read (nbr_graph.h), else NULL. */
static const ct_nbr_graph *known_graph(const ct_ctx *ctx)
{
    return ctx != NULL ? ct_nbr_graph_find(ctx) : NULL;
}

/* The degrees of the call's neighbourhood: from the graph once read, else
 * asked of the communicator (local). */
static int degrees(const ct_neighbor_args *a, const ct_ctx *ctx, int *in, int *out)
{
    const ct_nbr_graph *g = known_graph(ctx);
    if (g != NULL) {
        *in = g->indegree;
        *out = g->outdegree;
        return MPI_SUCCESS;
    }
    return ct_nbr_degrees(a->comm, in, out);
}

/* The largest of n blocks of counts of type to or from ranks (none to or
 * from MPI_PROC_NULL in peers, when known); 0 without any. */
static int largest_block(int n, const ct_vec *counts, MPI_Datatype type, const int *peers,
                         long *largest)
{
    int rc;
    MPI_Count size;
    *largest = 0;
    if (n == 0)
        return MPI_SUCCESS;
    CT_CALL(PMPI_Type_size_x(type, &size));
    for (int k = 0; k < n; k++) {
        const long bytes = (long)(ct_vec_at(counts, k) * size);
        if (peers == NULL || peers[k] != MPI_PROC_NULL)
            *largest = bytes > *largest ? bytes : *largest;
    }
out:
    return rc;
}

/* This rank's facts for the decision: its largest block to a rank (none to
 * MPI_PROC_NULL once the graph says which those are); no communication. A
 * call of one block size (MPI_Neighbor_alltoall) takes the larger of its
 * block to a rank and its block from one: a rank that sends to none (a
 * star's leaf) has the receive side alone, and where a program gives a
 * rank's two sides different sizes (erroneous: the standard makes every
 * rank's send signature that of every other's receive; Open MPI 4.1 fails
 * such a call) the ranks of a ring of two sizes still agree. On a connected
 * graph every rank then has the same (ct_coll_one_block_size); elsewhere it
 * is no larger than a block some rank sends. */
static int local_facts(const void *args, const ct_ctx *ctx, ct_call_facts *f)
{
    const ct_neighbor_args *a = args;
    const ct_nbr_graph *g = known_graph(ctx);
    int rc, in, out;
    long received = 0;
    f->msg_size = 0;
    f->violations = 0;
    CT_CALL(degrees(a, ctx, &in, &out));
    CT_CALL(largest_block(out, &a->sendcounts, a->sendtype, g != NULL ? g->destinations : NULL,
                          &f->msg_size));
    if (ct_coll_one_block_size(a->coll))
        CT_CALL(largest_block(in, &a->recvcounts, a->recvtype, g != NULL ? g->sources : NULL,
                              &received));
    f->msg_size = received > f->msg_size ? received : f->msg_size;
out:
    return rc;
}

static unsigned device_memory(const void *args, const ct_ctx *ctx)
{
    const ct_neighbor_args *a = args;
    int in, out;
    if (degrees(a, ctx, &in, &out) != MPI_SUCCESS)
        return 0;
    const unsigned dev =
        ct_blocks_device(a->recvbuf, in, &a->recvcounts, &a->rdispls, a->recvtype);
    return dev ? dev
               : ct_blocks_device(a->sendbuf, out, &a->sendcounts, &a->sdispls, a->sendtype);
}

/* Runs the algorithm, blocking: its own function, or its schedule run to
 * completion (core/sched.h). */
static int run_alg(const ct_choice *ch, const ct_neighbor_args *a, ct_ctx *ctx)
{
    int rc;
    ct_sched s;
    _Alignas(64) char small[2048]; /* the schedule of a small neighbourhood */
    if (ch->alg->run.neighbor != NULL)
        return ch->alg->run.neighbor(a, ctx, ch->params);
    ct_sched_prepare(&s, ctx, CT_TAG_NEIGHBOR_DIRECT, 0);
    ct_sched_offer(&s, small, sizeof small);
    CT_CALL(ch->alg->build.neighbor(a, ctx, ch->params, &s));
    CT_CALL(ct_sched_run(&s));
out:
    return rc;
}

/* The call's byte view (ct_bytes_pair) as a description on MPI_BYTE. */
static int bytes_args(ct_bytes_pair *v, const ct_neighbor_args *a, ct_neighbor_args *b)
{
    const int rc = ct_bytes_pair_init(v, a->sendbuf, a->graph->outdegree, a->sendcounts,
                                      a->sdispls, a->sendtype, a->recvbuf, a->graph->indegree,
                                      a->recvcounts, a->rdispls, a->recvtype);
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

/* Runs the algorithm on the byte view of the call (CT_A_BYTES). */
static int run_bytes(ct_ctx *ctx, const ct_choice *ch, const ct_neighbor_args *a)
{
    int rc;
    ct_bytes_pair v;
    ct_neighbor_args b;
    CT_CALL(bytes_args(&v, a, &b));
    CT_CALL(ct_bytes_pack(&v.s, ctx->comm));
    if (a->graph->null_source) /* the blocks no one sends to are unpacked unchanged */
        CT_CALL(ct_bytes_pack(&v.r, ctx->comm));
    CT_CALL(run_alg(ch, &b, ctx));
    CT_CALL(ct_bytes_unpack(&v.r, ctx->comm));
    ctx->call_extra += v.s.staged_bytes + v.r.staged_bytes;
out:
    ct_bytes_pair_free(&v);
    return rc;
}

static double bytes_sent(const void *args, const ct_ctx *ctx)
{
    const ct_neighbor_args *a = args;
    int in, out;
    MPI_Count size;
    double total = 0;
    if (degrees(a, ctx, &in, &out) != MPI_SUCCESS ||
        PMPI_Type_size_x(a->sendtype, &size) != MPI_SUCCESS)
        return 0;
    for (int k = 0; k < out; k++)
        total += (double)ct_vec_at(&a->sendcounts, k) * (double)size;
    return total;
}

/* Arguments the MPI library must reject (a negative count, a datatype that
 * is null), and communicators an algorithm does not serve: no topology, or
 * one whose matching is the library's own (nbr_graph.h). Both are the same
 * on every rank of a correct program, so all forward alike. */
static int args_usable(const void *args, ct_ctx *ctx)
{
    const ct_neighbor_args *a = args;
    const ct_nbr_graph *g;
    if (ct_nbr_graph_get(ctx, &g) != MPI_SUCCESS || g == NULL || g->library_order)
        return 0;
    /* both types, as Open MPI 4.1 checks them (a null one is an error even
     * on a rank without neighbours) */
    if (!ct_type_usable(a->recvtype) || !ct_type_usable(a->sendtype))
        return 0;
    for (int j = 0; j < g->indegree; j++)
        if (ct_vec_at(&a->recvcounts, j) < 0)
            return 0;
    for (int k = 0; k < g->outdegree; k++)
        if (ct_vec_at(&a->sendcounts, k) < 0)
            return 0;
    return 1;
}

static int run_choice(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    int rc;
    ct_neighbor_args b = *(const ct_neighbor_args *)in->args;
    b.msg_size = in->have_facts ? in->facts.msg_size : -1;
    if (ch->fallback)
        return b.forward(&b);
    CT_CALL(ct_nbr_graph_get(ctx, &b.graph));
    if (ch->alg->restrictions & CT_A_BYTES)
        CT_CALL(run_bytes(ctx, ch, &b));
    else
        CT_CALL(run_alg(ch, &b, ctx));
out:
    return rc;
}

static int forward(const void *args)
{
    const ct_neighbor_args *a = args;
    return a->forward(a);
}

/* The graph's facts for the rules (nbr_graph.h: read at the first use,
 * collectively); 0 and 0 without a topology, or where it could not be read:
 * the call goes on, and args_usable forwards it to the MPI library, as it
 * did before rules named the graph. */
static void graph_facts(ct_ctx *ctx, ct_graph_facts *out)
{
    const ct_nbr_graph *g = NULL;
    if (ct_nbr_graph_get(ctx, &g) != MPI_SUCCESS)
        g = NULL;
    *out = g != NULL ? g->facts : (ct_graph_facts){0, 0, 0};
}

static const ct_driver driver = {forward, args_usable, run_choice, bytes_sent};

int ct_neighbor_dispatch(const ct_neighbor_args *a, const ct_spec *forced)
{
    ct_decide_input call = {.coll = a->coll, .args = a, .local_facts = local_facts,
                            .msg_size_is_global = ct_coll_msg_size_known(a->coll),
                            .device_memory = device_memory, .graph_facts = graph_facts};
    return ct_drive(&driver, a->comm, &call, forced);
}

/* ------------------------------------------------------------------ */
/* The nonblocking and persistent forms                                */
/* ------------------------------------------------------------------ */

/* A candidate's schedule for a request (learn.h), on the byte view where it
 * needs it (CT_A_BYTES): then one step of s, or s itself where the view is
 * the call's memory (core/bytes_step.h). */
static int learn_build(const void *args, ct_ctx *ctx, const ct_adapt_cand *cand, ct_sched *s)
{
    int rc;
    const ct_neighbor_args *a = args;
    ct_neighbor_args b;
    ct_bytes_pair v;
    ct_bytes_step *step;
    ct_sched *into;
    if (!(cand->alg->restrictions & CT_A_BYTES))
        return cand->alg->build.neighbor(a, ctx, cand->params, s);
    CT_CALL(bytes_args(&v, a, &b));
    CT_CALL(ct_bytes_step_begin(s, ctx, &v, &step, &into));
    if (step != NULL)
        step->pack_recv = a->graph->null_source; /* blocks no one sends to, unchanged */
    return ct_bytes_step_end(s, step, cand->alg->build.neighbor(&b, ctx, cand->params, into));
out:
    ct_bytes_pair_free(&v);
    return rc;
}

/* pmpi's turns of a persistent learner: the library's own persistent call. */
static int learn_forward_init(const void *args, MPI_Request *lib)
{
    ct_neighbor_args f = *(const ct_neighbor_args *)args;
    f.request = lib;
    return f.forward(&f);
}

static const ct_learn_ops learn_ops = {learn_build, learn_forward_init};

/* Starts the chosen algorithm's schedule as a request (ct_request_open);
 * pmpi forwards the call itself. A persistent call is planned here once
 * (decision, neighbourhood, schedule) and each MPI_Start runs the schedule
 * from the top; under COLTUNE_ADAPT, every candidate's schedule (learn.h). */
static int start_choice(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    int rc;
    const ct_neighbor_args *a = in->args;
    ct_neighbor_args b = *a, fwd = *a;
    ct_request *r = NULL;
    struct ct_learner *learner = a->persistent ? ch->turn.learner : NULL; /* ours to free */
    if (learner == NULL && ch->alg->build.neighbor == NULL) /* pmpi, under the statistics */
        return ch->alg->run.neighbor(a, ctx, ch->params);
    rc = ct_request_open(ctx, a->comm, a->persistent, &b.sendtype, &b.recvtype, &r);
    if (rc == CT_NO_TAG) { /* every persistent tag held: the library's request */
        ct_adapt_release(learner);
        return a->forward(a);
    }
    CT_CALL(rc);
    CT_CALL(ct_nbr_graph_get(ctx, &b.graph));
    b.msg_size = in->have_facts ? in->facts.msg_size : -1;
    fwd.sendtype = b.sendtype; /* a learner's pmpi turns: the request's datatypes */
    fwd.recvtype = b.recvtype;
    return ct_learn_start(r, ctx, learner, ch, &b, &fwd, &learn_ops, a->request);
out:
    ct_adapt_release(learner);
    ct_request_discard(r);
    return rc;
}

static const ct_driver nb_driver = {forward, args_usable, start_choice, bytes_sent};

int ct_ineighbor_dispatch(const ct_neighbor_args *a, const ct_spec *forced)
{
    ct_decide_input call = {.coll = a->coll, .args = a, .local_facts = local_facts,
                            .msg_size_is_global = ct_coll_msg_size_known(a->coll),
                            .persistent = a->persistent, .learns = a->persistent,
                            .device_memory = device_memory, .graph_facts = graph_facts};
    return ct_drive(&nb_driver, a->comm, &call, forced);
}

int ct_neighbor_pmpi(const ct_neighbor_args *a, ct_ctx *ctx, const long *params)
{
    (void)ctx;
    (void)params;
    return a->forward(a);
}
