/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_locality_dense.c - the locality-aware sparse dynamic data exchange
 * over fixed lanes ([Geyko2023] section IV-D, Algorithm 4 with
 * its reductions replaced by the topology).
 *
 * Aggregation and redistribution as in locality_personalized, but every rank
 * sends an aggregate to its partner on every other node and a buffer to
 * every other rank of its node, empty or not (each closed by an END record:
 * see sdde_locality.c). The number of messages a rank receives then follows
 * from the node sizes alone, so neither exchange needs the Reduce_scatter
 * (Alg. 4) or the Ibarrier (Alg. 5) that tells the others' intentions: the
 * only collective of the call is the driver's agreement, and not even that
 * when the decision needs no per-call facts: the END records carry it
 * (CT_A_AGREES; see sdde_locality.c). (The first call on a communicator
 * still agrees, and makes the node communicator, MPI_Comm_split.)
 *
 * Cost: N-1 inter-node and Q-1 intra-node messages per rank whatever the
 * pattern (empty ones are 8 bytes), no collective. It pays where a
 * collective over all ranks costs more than those messages: few nodes and
 * ranks per node, or a network where a reduction is slow (TCP between
 * hosts); with many nodes and few destinations per rank, locality_personalized
 * or locality_nonblocking send fewer messages.
 */
#include "sdde/sdde_exchange.h"

int ct_sdde_locality_dense(ct_sdde *x, ct_ctx *ctx, const long *params)
{
    (void)params;
    int rc;
    ct_sdde_local L = {0};
    x->any_invalid = x->invalid;
    /* for each message: copy proc, size and data into buf[region], for
     * every other region, closed by END */
    CT_CALL(ct_sdde_aggregate(x, &L, 1));
    /* send buf[region] to its partner; receive until as many aggregates as
     * the topology says have ended */
    CT_CALL(ct_sdde_exchange_lanes(ctx->comm, ct_sdde_tag(x, CT_TAG_SDDE_NODE), &L.out,
                                   ct_sdde_lane_senders(x), &L.in, &x->any_invalid));
    /* redistribute inside the node, one buffer to every other rank */
    CT_CALL(ct_sdde_redistribute(x, &L, 1));
out:
    ct_sdde_local_free(&L);
    return rc;
}
