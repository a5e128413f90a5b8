/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_inter_direct.c - intercommunicator Allgather and Allgatherv by
 * direct exchange: every rank sends its block to every rank of the remote
 * group and receives every remote block from its owner, all at once.
 *
 * This is the linear schedule of an intra-communicator Allgather (Open MPI's
 * basic linear) carried over to two groups; [Kang2019] does not consider it.
 * It needs p or q message startups per rank where the segmented exchange
 * needs ceil(p/q) and a log-depth allgather, and a block crosses between the
 * groups once per remote rank: q K_A + p K_B bytes against K_A + K_B for the
 * segmented exchange (K the groups' totals), which the ranks of a node share
 * the node's links for when the groups sit on different nodes. On shared
 * memory there are no links to share, only copies, and here every byte is
 * copied once, straight into the receive buffer, with no intra-group step
 * waiting on the exchange. So it is for one node or few, where the default
 * rules use it.
 *
 * Rank i of a group starts with remote rank i mod (remote group size) and
 * goes round, so the first messages of the group's ranks go to different
 * receivers.
 *
 * It needs no byte view: the user's datatypes and displacements go to
 * PMPI_Irecv / PMPI_Isend unchanged, so any committed type and any block
 * size an int count allows is served. A rank skips the messages that carry
 * no bytes; both ends agree on which those are, because an exchange's send
 * and receive signatures match.
 */
#include "allgather_inter/ag_exchange.h"
#include "core/datatype.h"

/* Posts the receive of every remote block and the send of this rank's
 * block to every remote rank, then completes them all. */
int ct_ag_direct_exchange(ct_ctx *ctx, const ct_ag_view *d)
{
    int rc = MPI_SUCCESS, n = 0;
    const int nremote = ctx->remote_size;
    MPI_Count ssize, rsize;
    MPI_Aint lb, rext;
    MPI_Request *reqs = ct_ctx_requests(ctx, 2 * nremote);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    CT_CALL(PMPI_Type_size_x(d->sendtype, &ssize));
    CT_CALL(PMPI_Type_size_x(d->recvtype, &rsize));
    CT_CALL(PMPI_Type_get_extent(d->recvtype, &lb, &rext));
    for (int t = 0; t < nremote; t++) {
        const int j = (ctx->rank + t) % nremote;
        MPI_Count count;
        MPI_Aint displ;
        ct_ag_remote_block(d, j, &count, &displ);
        if (count * rsize > 0)
            CT_CALL(ct_irecv((char *)d->recvbuf + displ * rext, count, d->recvtype, j,
                             CT_TAG_ALLGATHER, ctx->comm, &reqs[n++]));
    }
    for (int t = 0; t < nremote && d->sendcount * ssize > 0; t++)
        CT_CALL(ct_isend(d->sendbuf, d->sendcount, d->sendtype, (ctx->rank + t) % nremote,
                         CT_TAG_ALLGATHER, ctx->comm, &reqs[n++]));
    CT_CALL(PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
out:
    return rc;
}

CT_AG_VIEW_ALGORITHM(direct, ct_ag_direct_exchange)
