/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ag_exchange.h - what the intercommunicator Allgather(v) algorithms share:
 * the byte view, the segmented exchange (ag_exchange.c), the view of either
 * collective's arguments and the direct exchange (allgather_inter_direct.c).
 */
#ifndef CT_AG_EXCHANGE_H
#define CT_AG_EXCHANGE_H

#include "allgather_inter/segments.h"
#include "algorithms.h"
#include "core/context.h"

/*
 * The byte view (CT_A_BYTES). An algorithm that declares CT_A_BYTES sees
 * sendtype == recvtype == MPI_BYTE, counts in bytes, its own block as
 * contiguous bytes, and the remote group's blocks back to back in rank order
 * in recvbuf (for Allgatherv, displs[j] = recvcounts[0] + ... +
 * recvcounts[j-1]): the remote group's stream of [Kang2019] section 4.1.
 * The driver views the user's buffers in place when their layout already is
 * that (a contiguous type, and for Allgatherv displacements that place the
 * blocks back to back in rank order, as MPI_Allgather always does);
 * otherwise it packs the send block into a staging buffer and/or receives
 * the stream into one and unpacks (or copies) each block to displs[j] of the
 * user's buffer afterwards. Such an algorithm must declare CT_R_INT_OFFSETS.
 */

/*
 * One segmented exchange, shared by the segmented Allgather (Algorithm 1)
 * and Allgatherv (Algorithm 2): this rank sends the intersections of its
 * block with the segments of the local stream to their receivers in the
 * remote group, receives its segment of the remote stream, then one
 * intra-group allgather(v) on ctx->local_comm (in place, MPI_BYTE, counts
 * and displacements from the remote stream's partition) completes the
 * stream at every member of the local group. Sends are started first; the
 * intra-group step runs while they may still be in flight.
 */
typedef struct ct_ag_plan {
    const char *send;           /* this rank's block (bytes) */
    size_t lo, hi;              /* its place [lo, hi) in the local stream */
    ct_seg_part local;          /* the local stream among the remote group */
    char *recv;                 /* the remote stream, in rank order */
    ct_seg_part remote;         /* the remote stream among the local group */
    ct_seg_blocks remote_blocks; /* the remote group's blocks in its stream */
    int ordered; /* receive one sender at a time in section 4.1's order, else all at once */
    int linear;  /* intra-group step: 0 PMPI_Allgather(v), 1 all segments posted at once */
} ct_ag_plan;

struct ct_sched;
/* The exchange as two rounds of s (core/sched.h): this rank's pieces and
 * its segment, then the intra-group step (a blocking call's may be the MPI
 * library's allgather; a request's is point-to-point). */
int ct_ag_segmented_build(ct_ctx *ctx, const ct_ag_plan *plan, struct ct_sched *s);
/* The blocking call: the same, built and run to completion. */
int ct_ag_segmented_exchange(ct_ctx *ctx, const ct_ag_plan *plan);

/*
 * One call of either collective as the algorithms that take the user's
 * arguments as they are see it (direct, shm): an Allgather has recvcounts
 * NULL, and remote block j is then recvcount elements at element
 * j * recvcount.
 */
typedef struct ct_ag_view {
    const void *sendbuf;
    MPI_Count sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    ct_vec recvcounts, displs; /* an Allgather's: recvcount each, block j at j recvcount */
    MPI_Datatype recvtype;
} ct_ag_view;

static inline ct_ag_view ct_ag_view_allgather(const ct_allgather_args *a)
{
    return (ct_ag_view){.sendbuf = a->sendbuf, .sendcount = a->sendcount,
                        .sendtype = a->sendtype, .recvbuf = a->recvbuf,
                        .recvcounts = ct_vec_linear(a->recvcount, 0),
                        .displs = ct_vec_linear(0, a->recvcount), .recvtype = a->recvtype};
}

static inline ct_ag_view ct_ag_view_allgatherv(const ct_allgatherv_args *a)
{
    return (ct_ag_view){.sendbuf = a->sendbuf, .sendcount = a->sendcount,
                        .sendtype = a->sendtype, .recvbuf = a->recvbuf,
                        .recvcounts = a->recvcounts, .displs = a->displs,
                        .recvtype = a->recvtype};
}

/* The Allgather and Allgatherv entry points of an algorithm that runs on
 * either call's view (direct, shm): both hand exchange(ctx, &view) the call. */
#define CT_AG_VIEW_ALGORITHM(name, exchange)                                                  \
    int ct_allgather_inter_##name(const ct_allgather_args *a, ct_ctx *ctx, const long *params) \
    {                                                                                         \
        (void)params;                                                                         \
        const ct_ag_view d = ct_ag_view_allgather(a);                                         \
        return exchange(ctx, &d);                                                             \
    }                                                                                         \
    int ct_allgatherv_inter_##name(const ct_allgatherv_args *a, ct_ctx *ctx,                  \
                                   const long *params)                                        \
    {                                                                                         \
        (void)params;                                                                         \
        const ct_ag_view d = ct_ag_view_allgatherv(a);                                        \
        return exchange(ctx, &d);                                                             \
    }

/* The schedule builders of an algorithm that splits, on either call's view
 * (CT_ALLGATHER_INTER_SPLIT_ALG): build(ctx, &view, s). */
#define CT_AG_VIEW_BUILD(name, build)                                                         \
    int ct_allgather_inter_##name##_build(const ct_allgather_args *a, ct_ctx *ctx,            \
                                          const long *params, struct ct_sched *s)             \
    {                                                                                         \
        (void)params;                                                                         \
        const ct_ag_view d = ct_ag_view_allgather(a);                                         \
        return build(ctx, &d, s);                                                             \
    }                                                                                         \
    int ct_allgatherv_inter_##name##_build(const ct_allgatherv_args *a, ct_ctx *ctx,          \
                                           const long *params, struct ct_sched *s)            \
    {                                                                                         \
        (void)params;                                                                         \
        const ct_ag_view d = ct_ag_view_allgatherv(a);                                        \
        return build(ctx, &d, s);                                                             \
    }

/* Remote block j's count and displacement (in elements of recvtype). */
static inline void ct_ag_remote_block(const ct_ag_view *d, int j, MPI_Count *count,
                                      MPI_Aint *displ)
{
    *count = ct_vec_at(&d->recvcounts, j);
    *displ = (MPI_Aint)ct_vec_at(&d->displs, j); /* an Allgather's j recvcount: MPI_Count */
}

/* The direct exchange of either collective (allgather_inter_direct.c): its
 * one round, described in s, and run to completion (shm falls back to it on
 * a communicator without a usable window). */
struct ct_sched;
int ct_ag_direct_build(ct_ctx *ctx, const ct_ag_view *d, struct ct_sched *s);
int ct_ag_direct_exchange(ct_ctx *ctx, const ct_ag_view *d);

#endif
