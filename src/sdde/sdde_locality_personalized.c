/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_locality_personalized.c - the locality-aware personalized sparse
 * dynamic data exchange ([Geyko2023] section IV-D, Algorithm 4).
 *
 * All messages this rank sends to one node are concatenated into a single
 * aggregate (records: destination, size, data) and sent to the rank with this
 * rank's local index on that node (placement and uneven nodes: see
 * sdde_locality.c); a Reduce_scatter_block of per-rank message counts tells
 * each rank how many aggregates to probe for. Each rank then redistributes
 * the records it received, and its own messages to its node, with a
 * personalized exchange on the node's communicator.
 *
 * Cost: at most one inter-node message per destination node (instead of one
 * per destination rank), one Reduce_scatter_block over all P ranks and one
 * over the node's ranks, and an intra-node step of up to Q-1 messages per
 * rank. Every byte is copied twice more than in the personalized exchange.
 */
#include "sdde/sdde_exchange.h"

int ct_sdde_locality_personalized(ct_sdde *x, ct_ctx *ctx, const long *params)
{
    (void)params;
    int rc;
    ct_sdde_local L = {0};
    /* for each message: copy proc, size and data into buf[region] */
    CT_CALL(ct_sdde_aggregate(x, &L, 0));
    /* non-blocking send of buf[region] to its partner; MPI_Allreduce(sizes)
     * (a Reduce_scatter_block); probe for messages and receive dynamically */
    CT_CALL(ct_sdde_exchange_personalized(ctx->comm, ct_sdde_tag(x, CT_TAG_SDDE_NODE), &L.out,
                                          -1, &L.in));
    /* redistribute inside the node: a personalized exchange */
    CT_CALL(ct_sdde_redistribute(x, &L, 0));
out:
    ct_sdde_local_free(&L);
    return rc;
}
