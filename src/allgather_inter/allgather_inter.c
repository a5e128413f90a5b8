/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_inter.c - drivers of the intercommunicator Allgather and
 * Allgatherv: per-call facts for the decision, the byte view (CT_A_BYTES),
 * then the chosen algorithm (the segmented exchange that the segmented
 * algorithms share is in ag_exchange.c).
 */
#include "allgather_inter/allgather_inter.h"
#include "core/datatype.h"
#include "core/device.h"
#include "core/state.h"
#include "stats.h"
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

/* This rank's block as contiguous bytes: the user's buffer for a contiguous
 * type, else packed into *stage (freed by the caller). */
static int send_view(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
                     const char **view, int *bytes, char **stage)
{
    int rc = MPI_SUCCESS, pos = 0;
    ct_typeinfo t;
    *stage = NULL;
    CT_CALL(ct_type_info(type, &t));
    *bytes = (int)(count * t.size); /* CT_R_INT_OFFSETS: it fits */
    *view = buf;
    if (*bytes == 0)
        return MPI_SUCCESS;
    if (t.contig) {
        *view = (const char *)buf + t.true_lb;
        return MPI_SUCCESS;
    }
    CT_ALLOC(*stage, (size_t)*bytes);
    CT_CALL(PMPI_Pack(buf, (int)count, type, *stage, *bytes, &pos, comm));
    *view = *stage;
out:
    return rc;
}

/* The receive side of a call: the remote stream (K bytes) is viewed at
 * view; stage is non-NULL when it is a staging buffer to unpack from. */
typedef struct recv_side {
    char *view, *stage;
    size_t K;
    int *counts, *displs; /* Allgatherv: byte counts and prefix sums, [remote_size] */
} recv_side;

static void recv_side_free(recv_side *r)
{
    free(r->stage);
    free(r->counts);
    free(r->displs);
}

static int ag_recv_init(recv_side *r, const ct_allgather_args *a, int nremote)
{
    int rc = MPI_SUCCESS;
    ct_typeinfo t;
    memset(r, 0, sizeof *r);
    CT_CALL(ct_type_info(a->recvtype, &t));
    r->K = (size_t)nremote * (size_t)a->recvcount * (size_t)t.size;
    r->view = a->recvbuf;
    if (r->K == 0)
        return MPI_SUCCESS;
    if (t.contig) {
        /* Block j at j * recvcount * extent = j * recvcount * size: the stream. */
        r->view = (char *)a->recvbuf + t.true_lb;
        return MPI_SUCCESS;
    }
    CT_ALLOC(r->stage, r->K);
    r->view = r->stage;
out:
    return rc;
}

static int ag_recv_finish(const recv_side *r, const ct_allgather_args *a, int nremote,
                          MPI_Comm comm)
{
    int pos = 0;
    if (r->stage == NULL)
        return MPI_SUCCESS;
    return PMPI_Unpack(r->stage, (int)r->K, &pos, a->recvbuf, (int)(nremote * a->recvcount),
                       a->recvtype, comm);
}

/*
 * Allgatherv: the blocks land in place when the type is contiguous and the
 * user's displacements put the non-empty blocks back to back in rank order
 * (at any base); otherwise through a staging buffer. Each rank decides for
 * itself: the algorithm's byte counts are the same either way.
 */
static int agv_recv_init(recv_side *r, const ct_allgatherv_args *a, int nremote)
{
    int rc = MPI_SUCCESS, packed = 1, first = -1;
    ct_typeinfo t;
    memset(r, 0, sizeof *r);
    CT_CALL(ct_type_info(a->recvtype, &t));
    CT_ALLOC(r->counts, (size_t)nremote * sizeof(int));
    CT_ALLOC(r->displs, (size_t)nremote * sizeof(int));
    for (int j = 0; j < nremote; j++) {
        /* CT_R_INT_OFFSETS: byte counts and their sum fit an int */
        r->counts[j] = (int)(ct_vec_at(&a->recvcounts, j) * t.size);
        r->displs[j] = (int)r->K;
        if (r->counts[j] > 0) {
            first = first < 0 ? j : first;
            packed &= (MPI_Aint)ct_vec_at(&a->displs, j) * t.extent ==
                      (MPI_Aint)ct_vec_at(&a->displs, first) * t.extent + (MPI_Aint)r->K;
        }
        r->K += (size_t)r->counts[j];
    }
    r->view = a->recvbuf;
    if (r->K == 0)
        return MPI_SUCCESS;
    if (t.contig && packed) {
        r->view = ct_elem_ptr(a->recvbuf, (MPI_Aint)ct_vec_at(&a->displs, first), t.extent) +
                  t.true_lb;
        return MPI_SUCCESS;
    }
    CT_ALLOC(r->stage, r->K);
    r->view = r->stage;
out:
    return rc;
}

static int agv_recv_finish(const recv_side *r, const ct_allgatherv_args *a, int nremote,
                           MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    ct_typeinfo t;
    if (r->stage == NULL)
        return MPI_SUCCESS;
    CT_CALL(ct_type_info(a->recvtype, &t));
    for (int j = 0; j < nremote; j++) {
        char *dst = ct_elem_ptr(a->recvbuf, (MPI_Aint)ct_vec_at(&a->displs, j), t.extent);
        int pos = r->displs[j];
        if (r->counts[j] == 0)
            continue;
        if (t.contig)
            memcpy(dst + t.true_lb, r->stage + pos, (size_t)r->counts[j]);
        else
            CT_CALL(PMPI_Unpack(r->stage, (int)r->K, &pos, dst,
                                (int)ct_vec_at(&a->recvcounts, j), a->recvtype, comm));
    }
out:
    return rc;
}

static int run_allgather(ct_ctx *ctx, const ct_choice *ch, const ct_allgather_args *a)
{
    int rc, sbytes = 0;
    const char *send;
    char *sstage = NULL;
    recv_side r = {0};
    if (!(ch->alg->restrictions & CT_A_BYTES))
        return ch->alg->run.allgather(a, ctx, ch->params);
    CT_CALL(send_view(a->sendbuf, a->sendcount, a->sendtype, ctx->comm, &send, &sbytes,
                      &sstage));
    CT_CALL(ag_recv_init(&r, a, ctx->remote_size));
    int rbytes = (int)(r.K / (size_t)ctx->remote_size); /* one remote block */
    ct_allgather_args b = {send, sbytes, MPI_BYTE, r.view, rbytes, MPI_BYTE, a->comm,
                           a->forward};
    CT_CALL(ch->alg->run.allgather(&b, ctx, ch->params));
    CT_CALL(ag_recv_finish(&r, a, ctx->remote_size, ctx->comm));
    ctx->call_extra += (sstage ? (size_t)sbytes : 0) + (r.stage ? r.K : 0);
out:
    free(sstage);
    recv_side_free(&r);
    return rc;
}

static int run_allgatherv(ct_ctx *ctx, const ct_choice *ch, const ct_allgatherv_args *a)
{
    int rc, sbytes = 0;
    const char *send;
    char *sstage = NULL;
    recv_side r = {0};
    if (!(ch->alg->restrictions & CT_A_BYTES))
        return ch->alg->run.allgatherv(a, ctx, ch->params);
    CT_CALL(send_view(a->sendbuf, a->sendcount, a->sendtype, ctx->comm, &send, &sbytes,
                      &sstage));
    CT_CALL(agv_recv_init(&r, a, ctx->remote_size));
    ct_allgatherv_args b = {send, sbytes, MPI_BYTE, r.view, ct_vec_int(r.counts),
                            ct_vec_int(r.displs), MPI_BYTE, a->comm, a->forward};
    CT_CALL(ch->alg->run.allgatherv(&b, ctx, ch->params));
    CT_CALL(agv_recv_finish(&r, a, ctx->remote_size, ctx->comm));
    ctx->call_extra += (sstage ? (size_t)sbytes : 0) + (r.stage ? r.K : 0) +
                       2 * (size_t)ctx->remote_size * sizeof(int);
out:
    free(sstage);
    recv_side_free(&r);
    return rc;
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
static int ag_args_usable(const ct_allgather_args *a)
{
    return a->sendcount >= 0 && a->recvcount >= 0 && ct_type_usable(a->sendtype) &&
           ct_type_usable(a->recvtype);
}

static int agv_args_usable(const ct_allgatherv_args *a, int nremote)
{
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

/* Runs and times one call of an algorithm; bytes is what this rank sends. */
#define RUN_TIMED(ctx, ch, run, a, bytes)                                             \
    do {                                                                              \
        int stats_ = ct_settings_get()->stats;                                                 \
        double t0_ = stats_ ? PMPI_Wtime() : 0;                                       \
        (ctx)->call_extra = 0;                                                        \
        rc = run((ctx), &(ch), (a));                                                  \
        if (rc == MPI_SUCCESS && stats_)                                              \
            ct_stats_record(ct_algorithm_index((ch).alg), (bytes), PMPI_Wtime() - t0_, \
                            (ctx)->call_extra);                                       \
    } while (0)

static double send_bytes(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = 0;
    PMPI_Type_size_x(type, &size);
    return (double)count * (double)size;
}

/* An intercommunicator MPI_Allgather that moves no byte (decide.h: nothing
 * to do): this rank sends and receives empty blocks, so every rank of its
 * group does, and the remote group's blocks are as empty. */
static int forward_empty(const ct_allgather_args *a)
{
    if (!ct_settings_get()->stats)
        return a->forward(a);
    double t0 = PMPI_Wtime();
    int rc = a->forward(a);
    ct_decide_count_empty(CT_COLL_ALLGATHER_INTER, PMPI_Wtime() - t0);
    return rc;
}

int ct_allgather_inter_dispatch(const ct_allgather_args *a, const ct_spec *forced)
{
    ct_ctx *ctx;
    ct_choice ch;
    if (a->sendcount == 0 && a->recvcount == 0)
        return forward_empty(a);
    /* max(p k_A, q k_B) follows from every rank's own arguments (all ranks of
     * a group send the same signature): msg_size rules cost no communication. */
    ct_decide_input call = {.coll = CT_COLL_ALLGATHER_INTER,
                            .args = a,
                            .local_facts = allgather_facts,
                            .msg_size_is_global = ct_coll_msg_size_known(CT_COLL_ALLGATHER_INTER),
                            .device_memory = allgather_device};
    int rc = ct_decide_call(a->comm, &call, forced, &ctx, &ch);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx == NULL || (ch.alg->run.allgather != ct_allgather_inter_pmpi && !ag_args_usable(a)))
        return a->forward(a);
    RUN_TIMED(ctx, ch, run_allgather, a, send_bytes(a->sendcount, a->sendtype));
    return rc;
}

int ct_allgatherv_inter_dispatch(const ct_allgatherv_args *a, const ct_spec *forced)
{
    ct_ctx *ctx;
    ct_choice ch;
    ct_decide_input call = {.coll = CT_COLL_ALLGATHERV_INTER,
                            .args = a,
                            .local_facts = allgatherv_facts,
                            .device_memory = allgatherv_device};
    int rc = ct_decide_call(a->comm, &call, forced, &ctx, &ch);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx == NULL || (ch.alg->run.allgatherv != ct_allgatherv_inter_pmpi &&
                        !agv_args_usable(a, ctx->remote_size)))
        return a->forward(a);
    RUN_TIMED(ctx, ch, run_allgatherv, a, send_bytes(a->sendcount, a->sendtype));
    return rc;
}
