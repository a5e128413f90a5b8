/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ag_exchange.c - the segmented exchange ([Kang2019] Algorithms 1 and 2)
 * that the segmented Allgather and Allgatherv share (ag_exchange.h).
 */
#include "allgather_inter/ag_exchange.h"

#include <stdlib.h>

/*
 * Lines 25-26 of Algorithm 2 (9-11 of Algorithm 1): member k of the local
 * group holds segment k of the remote stream at its place in recv; one
 * in-place allgatherv over the local group completes the stream everywhere.
 * Equal segments (p divisible by q in Algorithm 1) use the plain Allgather.
 * The paper leaves the allgather's algorithm to the library (a ring in its
 * analysis); with linear every member instead sends its segment to every
 * other member at once, which suits shared memory, where a ring's steps
 * wait on each other but the copies can all run at the same time.
 */
static int intra_allgather(ct_ctx *ctx, const ct_seg_part *pt, char *recv, int *counts,
                           int *displs, int linear, int nreq)
{
    int rc = MPI_SUCCESS, same = 1;
    const int n = ctx->size, me = ctx->rank;
    MPI_Request *reqs;
    if (pt->K == 0 || n == 1)
        return MPI_SUCCESS;
    for (int k = 0; k < n; k++) {
        size_t b = ct_seg_bound(pt, k);
        displs[k] = (int)b; /* the decision checked K <= INT_MAX (CT_R_INT_OFFSETS) */
        counts[k] = (int)(ct_seg_bound(pt, k + 1) - b);
        same &= counts[k] == counts[0];
    }
    if (!linear && same)
        return PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts[0], MPI_BYTE,
                              ctx->local_comm);
    if (!linear)
        return PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs,
                               MPI_BYTE, ctx->local_comm);
    /* After the nreq requests still pending in ctx's array (the exchange's sends). */
    reqs = ct_ctx_requests(ctx, nreq + 2 * n);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    reqs += nreq;
    int m = 0;
    for (int d = 1; d < n; d++) { /* spread out: member me + d first */
        const int k = (me + d) % n;
        if (counts[k] > 0)
            CT_CALL(PMPI_Irecv(recv + displs[k], counts[k], MPI_BYTE, k, CT_TAG_ALLGATHER,
                               ctx->local_comm, &reqs[m++]));
    }
    for (int d = 1; d < n && counts[me] > 0; d++)
        CT_CALL(PMPI_Isend(recv + displs[me], counts[me], MPI_BYTE, (me - d + n) % n,
                           CT_TAG_ALLGATHER, ctx->local_comm, &reqs[m++]));
    CT_CALL(PMPI_Waitall(m, reqs, MPI_STATUSES_IGNORE));
out:
    return rc;
}

int ct_ag_segmented_exchange(ct_ctx *ctx, const ct_ag_plan *pl)
{
    int rc = MPI_SUCCESS;
    ct_seg_xfer *xs = NULL;
    int *counts = NULL;
    const int nsend = ct_seg_sends(&pl->local, pl->lo, pl->hi, NULL);
    const int nrecv = ct_seg_recvs(&pl->remote, ctx->rank, &pl->remote_blocks, NULL);
    const size_t xs_bytes = (size_t)(nsend + nrecv) * sizeof *xs;
    const size_t counts_bytes = 2 * (size_t)ctx->size * sizeof(int);
    MPI_Request *reqs = ct_ctx_requests(ctx, nsend + nrecv + 1);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    CT_ALLOC(xs, xs_bytes);
    CT_ALLOC(counts, counts_bytes);
    ctx->call_extra += xs_bytes + counts_bytes;
    ct_seg_sends(&pl->local, pl->lo, pl->hi, xs);
    ct_seg_recvs(&pl->remote, ctx->rank, &pl->remote_blocks, xs + nsend);
    /* Lines 12-14 / 22-24: each piece of this rank's block to its receiver,
     * receivers by rank (section 4.1). */
    for (int i = 0; i < nsend; i++)
        CT_CALL(PMPI_Isend(pl->send + (xs[i].offset - pl->lo), (int)xs[i].bytes, MPI_BYTE,
                           xs[i].peer, CT_TAG_ALLGATHER, ctx->comm, &reqs[i]));
    if (pl->ordered) {
        /* Section 4.1: the receiver decides the order, one sender at a time. */
        for (int i = nsend; i < nsend + nrecv; i++)
            CT_CALL(PMPI_Recv(pl->recv + xs[i].offset, (int)xs[i].bytes, MPI_BYTE, xs[i].peer,
                              CT_TAG_ALLGATHER, ctx->comm, MPI_STATUS_IGNORE));
    } else {
        for (int i = nsend; i < nsend + nrecv; i++)
            CT_CALL(PMPI_Irecv(pl->recv + xs[i].offset, (int)xs[i].bytes, MPI_BYTE, xs[i].peer,
                               CT_TAG_ALLGATHER, ctx->comm, &reqs[i]));
        CT_CALL(PMPI_Waitall(nrecv, reqs + nsend, MPI_STATUSES_IGNORE));
    }
    /* The sends need not be complete for the intra-group step: it only reads
     * and writes recv, and it progresses them meanwhile. */
    CT_CALL(intra_allgather(ctx, &pl->remote, pl->recv, counts, counts + ctx->size,
                            pl->linear, nsend + nrecv));
    reqs = ctx->reqs; /* the linear intra-group step may have grown the array */
    CT_CALL(PMPI_Waitall(nsend, reqs, MPI_STATUSES_IGNORE));
out:
    free(xs);
    free(counts);
    return rc;
}

