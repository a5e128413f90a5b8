/*
 * alltoallv.h - what the MPI_Alltoallv algorithms share: per-call extents,
 * block addresses, the self-block copy, zero-size-aware point-to-point
 * helpers, and the driver that decides and runs (alltoallv.c).
 *
 * An algorithm never sees MPI_IN_PLACE: the driver serves it by copying the
 * receive blocks aside and running the algorithm out of the copy.
 * A block of zero bytes is never sent: the sender's and receiver's byte
 * counts are equal by the MPI standard, so both sides skip it alike.
 */
#ifndef CT_ALLTOALLV_H
#define CT_ALLTOALLV_H

#include "core/context.h"
#include "core/datatype.h"
#include "select/spec.h"

typedef struct ct_a2av {
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    MPI_Aint sext, rext;   /* extents of sendtype / recvtype */
    MPI_Aint ssize, rsize; /* sizes (bytes of data) of one element */
} ct_a2av;

int ct_a2av_prepare(ct_a2av *x, const ct_alltoallv_args *a, ct_ctx *ctx);

static inline const char *ct_a2av_sendblock(const ct_a2av *x, int peer)
{
    return ct_elem_ptr(x->a->sendbuf, x->a->sdispls[peer], x->sext);
}
static inline char *ct_a2av_recvblock(const ct_a2av *x, int peer)
{
    return ct_elem_ptr(x->a->recvbuf, x->a->rdispls[peer], x->rext);
}
static inline int ct_a2av_sends_to(const ct_a2av *x, int peer)
{
    return x->a->sendcounts[peer] != 0 && x->ssize != 0;
}
static inline int ct_a2av_recvs_from(const ct_a2av *x, int peer)
{
    return x->a->recvcounts[peer] != 0 && x->rsize != 0;
}

/* Copies this rank's own block from the send to the receive buffer. */
int ct_a2av_self_copy(const ct_a2av *x);

/* Non-blocking send of block peer (MPI_REQUEST_NULL when it is empty). */
int ct_a2av_isend(const ct_a2av *x, int peer, MPI_Request *req);
/* Non-blocking receive of block peer (MPI_REQUEST_NULL when it is empty). */
int ct_a2av_irecv(const ct_a2av *x, int peer, MPI_Request *req);
/* Blocking exchange: send block send_to, receive block recv_from. */
int ct_a2av_sendrecv(const ct_a2av *x, int send_to, int recv_from);

/*
 * Sliding window of the multi-pair non-blocking exchanges (paper 004,
 * Algorithms 4 and 5): stride sends and stride receives in flight in pairwise
 * order; whenever wait_any reports a completed request, the next send (or
 * receive) is started in its slot. wait_any returns an MPI code and sets *idx
 * to the completed request, or MPI_UNDEFINED once every request is null.
 */
typedef int (*ct_a2av_any_fn)(int n, MPI_Request *reqs, int *idx);
int ct_a2av_window(const ct_a2av *x, int stride, ct_a2av_any_fn wait_any);

/*
 * The driver: decides (forced spec, environment, rules) and runs the chosen
 * algorithm on comm, the user's intra-communicator. Used by the shim and by
 * the direct API.
 */
int ct_alltoallv_dispatch(const ct_alltoallv_args *a, const ct_spec *forced);

#endif
