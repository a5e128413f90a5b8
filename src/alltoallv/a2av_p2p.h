/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * a2av_p2p.h - what the MPI_Alltoallv algorithms share (a2av_p2p.c): per-call
 * extents, block addresses, the self-block copy, zero-size-aware
 * operations of schedules, the multi-pair window, and carving one scratch
 * allocation into arrays.
 *
 * A block of zero bytes is never sent: the sender's and receiver's byte
 * counts are equal by the MPI standard, so both sides skip it alike.
 */
#ifndef CT_A2AV_P2P_H
#define CT_A2AV_P2P_H

#include "algorithms.h"
#include "core/context.h"
#include "core/datatype.h"
#include "core/sched.h"

typedef struct ct_a2av {
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    MPI_Aint sext, rext;   /* extents of sendtype / recvtype */
    MPI_Aint ssize, rsize; /* sizes (bytes of data) of one element */
} ct_a2av;

int ct_a2av_prepare(ct_a2av *x, const ct_alltoallv_args *a, ct_ctx *ctx);

/* Counts and displacements of peer's blocks, read through the description. */
static inline MPI_Count ct_a2av_scount(const ct_a2av *x, int peer)
{
    return ct_vec_at(&x->a->sendcounts, peer);
}
static inline MPI_Count ct_a2av_rcount(const ct_a2av *x, int peer)
{
    return ct_vec_at(&x->a->recvcounts, peer);
}
static inline const char *ct_a2av_sendblock(const ct_a2av *x, int peer)
{
    return ct_elem_ptr(x->a->sendbuf, (MPI_Aint)ct_vec_at(&x->a->sdispls, peer), x->sext);
}
static inline char *ct_a2av_recvblock(const ct_a2av *x, int peer)
{
    return ct_elem_ptr(x->a->recvbuf, (MPI_Aint)ct_vec_at(&x->a->rdispls, peer), x->rext);
}
static inline int ct_a2av_sends_to(const ct_a2av *x, int peer)
{
    return x->ssize != 0 && ct_a2av_scount(x, peer) != 0;
}
static inline int ct_a2av_recvs_from(const ct_a2av *x, int peer)
{
    return x->rsize != 0 && ct_a2av_rcount(x, peer) != 0;
}

/* This rank's facts of a call for the decision (no communication): its
 * largest block in bytes and the local restrictions it violates (CT_R_*:
 * byte offsets beyond an int), on P ranks. */
int ct_a2av_local_facts(const ct_alltoallv_args *a, int P, long *msg_size, unsigned *violations);

/* Copies this rank's own block from the send to the receive buffer. */
int ct_a2av_self_copy(const ct_a2av *x);

/* The same as operations of a schedule's open round (core/sched.h), each
 * left out when its block is empty. */
void ct_a2av_sched_send(const ct_a2av *x, ct_sched *s, int peer);
void ct_a2av_sched_recv(const ct_a2av *x, ct_sched *s, int peer);
void ct_a2av_sched_self(const ct_a2av *x, ct_sched *s);

/*
 * The multi-pair exchanges' one round ([Namugwanya2023] Algorithms 4 and 5):
 * pairwise order, stride sends and stride receives in flight, the next of a
 * direction started as one completes (a window, core/sched.h); poll says how
 * a blocking run waits for it.
 */
int ct_a2av_sched_window(const ct_alltoallv_args *a, ct_ctx *ctx, int stride, ct_poll poll,
                         ct_sched *s);

/*
 * Carving one scratch allocation into typed arrays, each 64-byte aligned:
 * CT_CARVE(base, off, ptr, type, count) points ptr at base + off (unless base
 * is NULL: a first pass only measures) and advances off past count elements.
 */
#define CT_CARVE(base, off, ptr, type, count)                                      \
    do {                                                                           \
        if ((base) != NULL)                                                        \
            (ptr) = (type *)((base) + (off));                                      \
        (off) = CT_ALIGN_UP((off) + (size_t)(count) * sizeof(type));               \
    } while (0)

#endif
