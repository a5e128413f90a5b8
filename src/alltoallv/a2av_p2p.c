/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * a2av_p2p.c - the helpers the MPI_Alltoallv algorithms share (a2av_p2p.h).
 */
#include "alltoallv/a2av_p2p.h"
#include "core/log.h"

#include <limits.h>

int ct_a2av_prepare(ct_a2av *x, const ct_alltoallv_args *a, ct_ctx *ctx)
{
    int rc;
    MPI_Aint lb;
    MPI_Count size;
    x->a = a;
    x->ctx = ctx;
    CT_CALL(PMPI_Type_get_extent(a->sendtype, &lb, &x->sext));
    CT_CALL(PMPI_Type_get_extent(a->recvtype, &lb, &x->rext));
    CT_CALL(PMPI_Type_size_x(a->sendtype, &size));
    x->ssize = (MPI_Aint)size;
    CT_CALL(PMPI_Type_size_x(a->recvtype, &size));
    x->rsize = (MPI_Aint)size;
out:
    return rc;
}

int ct_a2av_self_copy(const ct_a2av *x)
{
    int me = x->ctx->rank;
    return ct_copy_typed(ct_a2av_sendblock(x, me), ct_a2av_scount(x, me), x->a->sendtype,
                         ct_a2av_recvblock(x, me), ct_a2av_rcount(x, me), x->a->recvtype,
                         x->ctx->comm, me);
}

void ct_a2av_sched_send(const ct_a2av *x, ct_sched *s, int peer)
{
    if (ct_a2av_sends_to(x, peer))
        ct_sched_send(s, ct_a2av_sendblock(x, peer), ct_a2av_scount(x, peer), x->a->sendtype,
                      peer);
}

void ct_a2av_sched_recv(const ct_a2av *x, ct_sched *s, int peer)
{
    if (ct_a2av_recvs_from(x, peer))
        ct_sched_recv(s, ct_a2av_recvblock(x, peer), ct_a2av_rcount(x, peer), x->a->recvtype,
                      peer);
}

void ct_a2av_sched_self(const ct_a2av *x, ct_sched *s)
{
    const int me = x->ctx->rank;
    ct_sched_copy(s, ct_a2av_sendblock(x, me), ct_a2av_scount(x, me), x->a->sendtype,
                  ct_a2av_recvblock(x, me), ct_a2av_rcount(x, me), x->a->recvtype);
}

int ct_a2av_sched_window(const ct_alltoallv_args *a, ct_ctx *ctx, int stride, ct_poll poll,
                         ct_sched *s)
{
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_sched_reserve(s, 2 * P, 1));
    s->poll = poll;
    ct_sched_round(s, stride);
    for (int i = 1; i < P; i++) {
        ct_a2av_sched_send(&x, s, (p + i) % P);
        ct_a2av_sched_recv(&x, s, (p - i + P) % P);
    }
    ct_a2av_sched_self(&x, s);
out:
    return rc;
}

static int outside_int(MPI_Count x) { return x > INT_MAX || x < INT_MIN; }

/* Does any block's end offset, or the total, exceed INT_MAX bytes? */
static int offsets_overflow_int(int P, const ct_vec *counts, const ct_vec *displs, MPI_Aint ext,
                                MPI_Aint size)
{
    MPI_Count total = 0;
    if (P > 0 && counts->kind == CT_VEC_LINEAR && counts->step == 0 &&
        displs->kind == CT_VEC_LINEAR) {
        /* MPI_Alltoall: every block alike, the displacements linear in j, so
         * the ends' extremes are at j = 0 and P - 1: no loop over P. (Its
         * displacements step by the block, so the last end is P times the
         * first and cannot overflow once the first is in range.) */
        const MPI_Count block = counts->base * size;
        return block > INT_MAX || block * P > INT_MAX ||
               outside_int((displs->base + counts->base) * ext) ||
               outside_int((ct_vec_at(displs, P - 1) + counts->base) * ext);
    }
    for (int j = 0; j < P; j++) {
        const MPI_Count count = ct_vec_at(counts, j);
        const MPI_Count end = (ct_vec_at(displs, j) + count) * ext;
        total += count * size;
        if (outside_int(end) || total > INT_MAX)
            return 1;
    }
    return 0;
}

/* The largest block this rank sends, in bytes (the decision's msg_size). */
static long largest_block(int P, const ct_vec *counts, MPI_Aint size)
{
    MPI_Count max = 0;
    if (counts->kind == CT_VEC_LINEAR) /* MPI_Alltoall: every block alike */
        return P > 0 ? (long)(counts->base * size) : 0;
    for (int j = 0; j < P; j++)
        if (ct_vec_at(counts, j) > max)
            max = ct_vec_at(counts, j);
    return (long)(max * size);
}

int ct_a2av_local_facts(const ct_alltoallv_args *a, int P, long *msg_size, unsigned *violations)
{
    int rc, inplace = a->sendbuf == MPI_IN_PLACE;
    ct_typeinfo s, r;
    /* With MPI_IN_PLACE the send side is described by the receive arguments. */
    const ct_vec *scounts = inplace ? &a->recvcounts : &a->sendcounts;
    const ct_vec *sdispls = inplace ? &a->rdispls : &a->sdispls;
    CT_CALL(ct_type_info(inplace ? a->recvtype : a->sendtype, &s));
    CT_CALL(ct_type_info(a->recvtype, &r));
    *msg_size = largest_block(P, scounts, s.size);
    *violations = 0;
    if (offsets_overflow_int(P, scounts, sdispls, s.extent, s.size) ||
        offsets_overflow_int(P, &a->recvcounts, &a->rdispls, r.extent, r.size))
        *violations |= CT_R_INT_OFFSETS;
out:
    return rc;
}
