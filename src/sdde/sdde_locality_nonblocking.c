/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_locality_nonblocking.c - the locality-aware non-blocking sparse
 * dynamic data exchange ([Geyko2023] section IV-D, Algorithm 5).
 *
 * As locality_personalized, but the inter-node aggregates are exchanged with
 * NBX (synchronous sends, a probe loop, an Ibarrier once this rank's sends
 * are matched) instead of a reduction and counted probes. The redistribution
 * inside the node is personalized, as in the paper (nodes are small and
 * their ranks usually all exchange).
 *
 * Cost: at most one inter-node message per destination node, one Ibarrier
 * over all P ranks, one Reduce_scatter_block over the node's ranks, and up to
 * Q-1 intra-node messages per rank.
 */
#include "sdde/sdde_exchange.h"

int ct_sdde_locality_nonblocking(ct_sdde *x, ct_ctx *ctx, const long *params)
{
    (void)params;
    int rc;
    ct_sdde_local L = {0};
    /* for each message: copy proc, size and data into buf[region] */
    CT_CALL(ct_sdde_aggregate(x, &L, 0));
    /* synchronous send of buf[region] to its partner; probe and receive until
     * the sends complete, then an Ibarrier, probing until it completes */
    CT_CALL(ct_sdde_exchange_nbx(ctx->comm, ct_sdde_tag(x, CT_TAG_SDDE_NODE), &L.out, &L.in));
    /* redistribute inside the node: a personalized exchange */
    CT_CALL(ct_sdde_redistribute(x, &L, 0));
out:
    ct_sdde_local_free(&L);
    return rc;
}
