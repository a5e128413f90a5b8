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
 *
 * One round (core/sched.h), which serves every form: the blocking calls run
 * it to completion, the nonblocking and persistent ones (MPI_Iallgather(v),
 * MPI_Allgather(v)_init) post every message at start and only wait at
 * completion; nothing needs progress in between.
 */
#include "allgather_inter/ag_exchange.h"
#include "core/sched.h"

int ct_ag_direct_build(ct_ctx *ctx, const ct_ag_view *d, ct_sched *s)
{
    int rc;
    const int nremote = ctx->remote_size;
    MPI_Count ssize, rsize;
    MPI_Aint lb, rext;
    CT_CALL(PMPI_Type_size_x(d->sendtype, &ssize));
    CT_CALL(PMPI_Type_size_x(d->recvtype, &rsize));
    CT_CALL(PMPI_Type_get_extent(d->recvtype, &lb, &rext));
    CT_CALL(ct_sched_reserve(s, 2 * nremote, 1));
    ct_sched_round(s, 0);
    for (int t = 0; t < nremote; t++) {
        const int j = (ctx->rank + t) % nremote;
        MPI_Count count;
        MPI_Aint displ;
        ct_ag_remote_block(d, j, &count, &displ);
        if (count * rsize > 0)
            ct_sched_recv(s, (char *)d->recvbuf + displ * rext, count, d->recvtype, j);
    }
    for (int t = 0; t < nremote && d->sendcount * ssize > 0; t++)
        ct_sched_send(s, d->sendbuf, d->sendcount, d->sendtype, (ctx->rank + t) % nremote);
out:
    return rc;
}

int ct_ag_direct_exchange(ct_ctx *ctx, const ct_ag_view *d)
{
    int rc;
    ct_sched s;
    _Alignas(64) char small[2048]; /* the schedule of a small remote group */
    ct_sched_prepare(&s, ctx, CT_TAG_ALLGATHER, 0);
    ct_sched_offer(&s, small, sizeof small);
    CT_CALL(ct_ag_direct_build(ctx, d, &s));
    CT_CALL(ct_sched_run(&s));
out:
    return rc;
}

CT_AG_VIEW_ALGORITHM(direct, ct_ag_direct_exchange)
CT_AG_VIEW_BUILD(direct, ct_ag_direct_build)
