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

int ct_a2av_isend(const ct_a2av *x, int peer, MPI_Request *req)
{
    int rc = MPI_SUCCESS;
    *req = MPI_REQUEST_NULL;
    if (ct_a2av_sends_to(x, peer))
        CT_CALL(ct_isend(ct_a2av_sendblock(x, peer), ct_a2av_scount(x, peer), x->a->sendtype,
                         peer, CT_TAG_ALLTOALLV, x->ctx->comm, req));
out:
    return rc;
}

int ct_a2av_irecv(const ct_a2av *x, int peer, MPI_Request *req)
{
    int rc = MPI_SUCCESS;
    *req = MPI_REQUEST_NULL;
    if (ct_a2av_recvs_from(x, peer))
        CT_CALL(ct_irecv(ct_a2av_recvblock(x, peer), ct_a2av_rcount(x, peer), x->a->recvtype,
                         peer, CT_TAG_ALLTOALLV, x->ctx->comm, req));
out:
    return rc;
}

int ct_a2av_sendrecv(const ct_a2av *x, int send_to, int recv_from)
{
    int rc;
    int dst = ct_a2av_sends_to(x, send_to) ? send_to : MPI_PROC_NULL;
    int src = ct_a2av_recvs_from(x, recv_from) ? recv_from : MPI_PROC_NULL;
    CT_CALL(ct_sendrecv(ct_a2av_sendblock(x, send_to), ct_a2av_scount(x, send_to),
                        x->a->sendtype, dst, ct_a2av_recvblock(x, recv_from),
                        ct_a2av_rcount(x, recv_from), x->a->recvtype, src, CT_TAG_ALLTOALLV,
                        x->ctx->comm));
out:
    return rc;
}

/* Window state: slot k < W holds a send, slot W + k a receive; the next step
 * to start in each direction (steps 1..P-1, empty blocks are passed over). */
typedef struct window {
    const ct_a2av *x;
    MPI_Request *reqs;
    int W, next_send, next_recv;
} window;

static int window_refill(window *w, int slot)
{
    const int P = w->x->ctx->size, p = w->x->ctx->rank;
    w->reqs[slot] = MPI_REQUEST_NULL;
    if (slot < w->W) {
        while (w->next_send < P && w->reqs[slot] == MPI_REQUEST_NULL) {
            int rc = ct_a2av_isend(w->x, (p + w->next_send++) % P, &w->reqs[slot]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    } else {
        while (w->next_recv < P && w->reqs[slot] == MPI_REQUEST_NULL) {
            int rc = ct_a2av_irecv(w->x, (p - w->next_recv++ + P) % P, &w->reqs[slot]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

int ct_a2av_window(const ct_a2av *x, int stride, ct_a2av_any_fn wait_any)
{
    int rc = MPI_SUCCESS, idx;
    const int P = x->ctx->size;
    window w = {.x = x, .W = stride < P - 1 ? stride : P - 1, .next_send = 1, .next_recv = 1};
    w.reqs = ct_ctx_requests(x->ctx, 2 * w.W + 1);
    if (w.reqs == NULL)
        return MPI_ERR_NO_MEM;
    for (int slot = 0; slot < 2 * w.W; slot++)
        CT_CALL(window_refill(&w, slot));
    CT_CALL(ct_a2av_self_copy(x));
    for (;;) {
        CT_CALL(wait_any(2 * w.W, w.reqs, &idx));
        if (idx == MPI_UNDEFINED)
            break;
        CT_CALL(window_refill(&w, idx));
    }
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
